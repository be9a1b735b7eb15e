"""The trusted test process: ``python -I -m udk_notebooks.assign.trusted JOB RESULT``.

The grader starts this module in a new interpreter (isolated mode: no
``PYTHON*`` variables, no current directory on ``sys.path``) for every
submission, after the submission's kernel has finished. It imports
numpy, udk_notebooks and whatever the master's given cells import afresh, runs
those given cells, then runs each question's public and hidden tests in its
own copy of that namespace with the student's answers filled in as plain data
(:func:`udk_notebooks.assign.answers.decode`). Nothing the submission did to
its own kernel (redefining ``grader.check``, ``np.allclose``, the solver,
``AssertionError``) exists here.

The grader runs it in a sandbox of its own (:mod:`udk_notebooks.assign.sandbox`)
that sees the job file and nothing of the grader's files; the result leaves
through a pipe (``--result-fd``).

JOB is a JSON file: ``{"given": [source, ...], "questions": [{"name", "tests":
[{"code", "hidden", "reads"}]}], "answers": {name: tagged value},
"case_time_limit": seconds, "student_id": str or null}``; with a
``student_id`` the given code's ``STUDENT_ID = ...`` line is replaced by it
(:mod:`udk_notebooks.assign.variants`). RESULT receives ``{"setup_error": str or null,
"results": {question: [{"passed", "message"}]}}``.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

__all__ = ["run_job"]


class _CaseTimeout(Exception):
    pass


def _alarm(signum, frame):
    raise _CaseTimeout("the test took longer than its time limit")


def run_job(job: dict) -> dict:
    """Run a grading job in this process (see the module docstring for its fields)."""
    from .answers import Missing, decode
    from .checks import run_case
    from .format import python_source
    from .variants import with_student_id

    os.environ.setdefault("MPLBACKEND", "Agg")
    limit = float(job.get("case_time_limit", 60))
    given: dict = {"__name__": "__main__"}
    setup_error = None
    student_id = job.get("student_id")
    for number, source in enumerate(job["given"]):
        if student_id is not None:  # a master with per-student variants: this student's numbers
            source = with_student_id(source, student_id)
        try:
            exec(compile(python_source(source), f"<given cell {number}>", "exec"), given)
        except Exception as exc:  # the master's own code failed: every test fails, the reason is kept
            setup_error = f"given cell {number} raised {type(exc).__name__}: {exc}"
            break
    answers = {}
    for name, data in job["answers"].items():
        try:
            answers[name] = decode(data)
        except (ValueError, TypeError, KeyError, AttributeError, RecursionError):
            answers[name] = Missing("could not be read back from the submission")
    results = {}
    use_alarm = hasattr(signal, "setitimer")
    if use_alarm:
        signal.signal(signal.SIGALRM, _alarm)
    for question in job["questions"]:
        outcomes = []
        for number, case in enumerate(question["tests"], start=1):
            if setup_error:
                outcomes.append({"passed": False, "message": f"not run: {setup_error}"})
                continue
            namespace = dict(given)
            for name in question["answers"]:
                namespace[name] = answers.get(name, Missing("is not defined in the submission"))
            label = f"{question['name']}, {'hidden' if case['hidden'] else 'public'} test {number}"
            if use_alarm:
                signal.setitimer(signal.ITIMER_REAL, limit)
            try:
                passed, message = run_case(case["code"], namespace, label, reads=case["reads"],
                                           show_line=not case["hidden"])
            except _CaseTimeout as exc:  # raised between bytecodes outside run_case's own handler
                passed, message = False, str(exc)
            finally:
                if use_alarm:
                    signal.setitimer(signal.ITIMER_REAL, 0)
            outcomes.append({"passed": passed, "message": message})
        results[question["name"]] = outcomes
    return {"setup_error": setup_error, "results": results}


def main(argv: list[str] | None = None) -> int:
    """``JOB.json RESULT.json``, or ``JOB.json --result-fd N`` (the result written to that descriptor: the
    grader's sandbox hands results out through a pipe, see :mod:`udk_notebooks.assign.sandbox`)."""
    argv = sys.argv[1:] if argv is None else argv
    to_fd = len(argv) == 3 and argv[1] == "--result-fd" and argv[2].isdigit()
    if len(argv) != 2 and not to_fd:
        print("usage: python -I -m udk_notebooks.assign.trusted JOB.json (RESULT.json | --result-fd N)",
              file=sys.stderr)
        return 2
    job = json.loads(Path(argv[0]).read_text())
    result = json.dumps(run_job(job))
    if to_fd:
        with os.fdopen(int(argv[2]), "w") as handle:
            handle.write(result)
    else:
        Path(argv[1]).write_text(result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
