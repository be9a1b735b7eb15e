"""Course assignments: master notebooks in otter-grader's format, built and graded.

An instructor writes one master notebook per assignment (questions, solutions,
public and hidden tests marked as otter-grader marks them, see
:mod:`.format`), builds it into student, solutions and autograder versions
(:mod:`.build`) and grades a folder of submissions into per-question JSON
feedback and a CSV (:mod:`.grade`). Submissions run in a fresh kernel each,
with time limits; their answers leave the kernel as plain data
(:mod:`.answers`) and the tests run in a separate, isolated process
(:mod:`.trusted`), so nothing a submission redefines changes its score. Both
run in bubblewrap sandboxes of their own (:mod:`.sandbox`), so nothing a
submission does reaches the grader's files, processes or other students.
Students check their work with :class:`Checker` (``grader.check("q1")``).
The build also grades generated wrong submissions and fails when one scores
more than it deserves (:mod:`.discriminate`); a master may give each student
their own numbers (:class:`Variant`, :mod:`.variants`).

Command line (``python -m udk_notebooks.assign --help``)::

    python -m udk_notebooks.assign new instructor/assignments/ps5_topic.ipynb
    python -m udk_notebooks.assign build SOURCE OUT
    python -m udk_notebooks.assign publish SOURCE assignments
    python -m udk_notebooks.assign grade AUTOGRADER SUBMISSIONS --out scores

This subpackage depends on the solver, nbformat and nbclient, never on the widgets.
Building and grading (nbformat, nbclient, PyYAML: the ``assign`` extra) load on
first use, so that a student's kernel with the plain install can import
:class:`Checker`.
"""

from importlib import import_module

from .checks import CheckResult, Checker, run_case
from .format import Assignment, AssignmentFormatError, Question, TestCase, read_master, strip_solution
from .variants import Variant

_LAZY = {
    **dict.fromkeys(["BuildError", "build_all", "build_assignment", "export_otter", "new_master",
                     "publish_student_versions", "solution_notebook", "student_notebook"], "build"),
    **dict.fromkeys(["ExecutionReport", "execute_submission", "grade_answers", "grade_folder", "grade_notebook",
                     "load_autograder"], "grade"),
    **dict.fromkeys(["Limits", "SandboxUnavailable", "run_sandboxed", "sandbox_problem"], "sandbox"),
    **dict.fromkeys(["WrongSubmission", "check_discrimination", "wrong_submissions"], "discriminate"),
}


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    # the format
    "Assignment",
    "AssignmentFormatError",
    "Question",
    "TestCase",
    "read_master",
    "strip_solution",
    # building
    "BuildError",
    "build_all",
    "build_assignment",
    "export_otter",
    "new_master",
    "publish_student_versions",
    "solution_notebook",
    "student_notebook",
    "WrongSubmission",
    "check_discrimination",
    "wrong_submissions",
    "Variant",
    # checking and grading
    "CheckResult",
    "Checker",
    "run_case",
    "ExecutionReport",
    "execute_submission",
    "grade_answers",
    "grade_folder",
    "grade_notebook",
    "load_autograder",
    # the sandbox
    "Limits",
    "SandboxUnavailable",
    "run_sandboxed",
    "sandbox_problem",
]
