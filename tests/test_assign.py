"""Course assignments: the master format, the built versions, grading and its isolation.

Grading mechanics (wrong answers, raising, endless and kernel-killing cells,
redefined checks) are tested on a small master notebook written here; the
three problem sets in ``assignments/`` are built, their student versions run
and are graded, and one physics answer is broken on purpose.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_raw_cell

from udk_notebooks.assign import (
    AssignmentFormatError,
    Checker,
    build_all,
    build_assignment,
    grade_folder,
    grade_notebook,
    read_master,
    strip_solution,
)
from udk_notebooks.assign.answers import Missing, Unsupported, decode, encode
from udk_notebooks.assign.format import free_names
from udk_notebooks.assign.build import (MANUAL_PROMPT, export_otter, new_master, publish_student_versions,
                                        solution_notebook)
from udk_notebooks.assign.discriminate import (
    WrongSubmission,
    check_discrimination,
    honest_share,
    wrong_submissions,
)
from udk_notebooks.assign.grade import spec_of
from udk_notebooks.assign.trusted import run_job
from udk_notebooks.assign.variants import Variant, uses_variants, with_student_id

REPO = Path(__file__).resolve().parents[1]
MASTERS = REPO / "instructor" / "assignments"
PROBLEM_SETS = sorted(MASTERS.glob("*.ipynb"))


# --------------------------------------------------------------------------- a small master


def _master_cells():
    raw, code, md = new_raw_cell, new_code_cell, new_markdown_cell
    return [
        raw("# ASSIGNMENT CONFIG\nname: mini"),
        md("# A small assignment"),
        code("import numpy as np\nscale = 3.0"),
        raw("# BEGIN QUESTION\nname: q1\npoints: 2"),
        md("Define `double`, twice the given `scale`."),
        raw("# BEGIN SOLUTION"),
        code("double = 2 * scale  # SOLUTION"),
        md("Doubling the given scale gives six."),
        raw("# END SOLUTION"),
        raw("# BEGIN TESTS"),
        code('""" # BEGIN TEST CONFIG\npoints: 0\n""" # END TEST CONFIG\nassert np.ndim(double) == 0, "a number"'),
        code("# HIDDEN\nassert np.ndim(double) == 0 and np.isclose(double, 6.0), 'double is wrong'"),
        raw("# END TESTS"),
        raw("# END QUESTION"),
        raw("# BEGIN QUESTION\nname: q2\npoints: 3"),
        raw("# BEGIN SOLUTION"),
        code("# BEGIN SOLUTION\nvec = np.arange(3.0) * scale\n# END SOLUTION"),
        raw("# END SOLUTION"),
        raw("# BEGIN TESTS"),
        code('""" # BEGIN TEST CONFIG\nhidden: true\n""" # END TEST CONFIG\n'
             'assert np.shape(vec) == (3,) and np.allclose(vec, [0.0, 3.0, 6.0])'),
        raw("# END TESTS"),
        raw("# END QUESTION"),
        raw("# BEGIN QUESTION\nname: q3\npoints: 1"),
        raw("# BEGIN SOLUTION"),
        code("word = 'udk'  # SOLUTION"),
        raw("# END SOLUTION"),
        raw("# BEGIN TESTS"),
        code("assert isinstance(word, str) and word.upper() == 'UDK'"),
        raw("# END TESTS"),
        raw("# END QUESTION"),
    ]


def _write(cells, path: Path) -> Path:
    nb = new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                            "language": "python"}})
    nbformat.write(nb, path)
    return path


@pytest.fixture(scope="module")
def mini(tmp_path_factory):
    """The small master built (without running the solutions) into a folder."""
    folder = tmp_path_factory.mktemp("mini")
    master = _write(_master_cells(), folder / "mini.ipynb")
    result = build_assignment(master, folder / "out", verify=False)
    return master, folder / "out", result


def _submission(student: Path, answers: dict[int, str], path: Path) -> Path:
    """The student notebook with its answer cells (in order) replaced by ``answers``."""
    nb = nbformat.read(student, as_version=4)
    cells = [c for c in nb.cells if "otter_answer_cell" in c.metadata.get("tags", [])]
    for index, source in answers.items():
        cells[index].source = source
    nbformat.write(nb, path)
    return path


RIGHT = {0: "double = 2 * scale", 1: "vec = np.arange(3.0) * scale", 2: "word = 'udk'"}


# --------------------------------------------------------------------------- format


def test_strip_solution_follows_otter_markers():
    source = "\n".join([
        "a = 1",
        "b = a + 1  # SOLUTION",
        "if a:",
        "    c = [1, 2]  # SOLUTION",
        "    print(c)  # SOLUTION",
        "secret = 4  # SOLUTION NO PROMPT",
        "# BEGIN SOLUTION",
        "d = b * 2",
        "# END SOLUTION",
        "    # BEGIN SOLUTION NO PROMPT",
        "    e = 5",
        "    # END SOLUTION",
    ])
    student, solution = strip_solution(source)
    assert student.splitlines() == ["a = 1", "b = ...", "if a:", "    c = ...", "    ...", "..."]
    assert solution.splitlines() == ["a = 1", "b = a + 1", "if a:", "    c = [1, 2]", "    print(c)",
                                     "secret = 4", "d = b * 2", "    e = 5"]


@pytest.mark.parametrize("source", ["# BEGIN SOLUTION\nx = 1", "x = 1\n# END SOLUTION",
                                    "# BEGIN SOLUTION\n# BEGIN SOLUTION\n# END SOLUTION"])
def test_strip_solution_refuses_unbalanced_markers(source):
    with pytest.raises(AssignmentFormatError, match="SOLUTION"):
        strip_solution(source)


def test_read_master_questions_points_and_answers(mini):
    assignment = read_master(mini[0])
    assert assignment.name == "mini"
    assert [q.name for q in assignment.questions] == ["q1", "q2", "q3"]
    assert [q.points for q in assignment.questions] == [2.0, 3.0, 1.0]
    q1, q2, q3 = assignment.questions
    assert [(t.hidden, t.points) for t in q1.tests] == [(False, 0.0), (True, 2.0)]
    assert [(t.hidden, t.points) for t in q2.tests] == [(True, 3.0)]
    assert [(t.hidden, t.points) for t in q3.tests] == [(False, 1.0)]
    # answers: names a test reads that a solution defines (not the given `scale`, not `np`)
    assert (q1.answers, q2.answers, q3.answers) == (("double",), ("vec",), ("word",))
    assert assignment.given_code() == ["import numpy as np\nscale = 3.0"]


@pytest.mark.parametrize("change, message", [
    (lambda cells: cells[:-1], "ends inside question"),
    (lambda cells: cells + [new_raw_cell("# BEGIN TESTS")], "outside a question"),
    (lambda cells: [new_raw_cell("# BEGIN QUESTION\npoints: 1")] + cells, "needs `name"),
    (lambda cells: cells[:11] + [new_code_cell("assert undefined_thing == 1")] + cells[11:], "which no cell defines"),
    (lambda cells: [c if "name: q2" not in c.source else new_raw_cell("# BEGIN QUESTION\nname: q1")
                    for c in cells], "two questions are named"),
    (lambda cells: cells[:3] + [new_code_cell("hint = 2  # SOLUTION")] + cells[3:], "would reach students"),
    (lambda cells: [c if "hidden: true" not in c.source else new_code_cell(c.source.replace("hidden: true", "hidden: true\npoints: 2"))
                    for c in cells], "carry 2 points but the question has `points: 3`"),
])
def test_read_master_refuses_malformed(tmp_path, change, message):
    path = _write(change(_master_cells()), tmp_path / "bad.ipynb")
    with pytest.raises(AssignmentFormatError, match=message):
        read_master(path)


def test_read_master_checks_its_argument(tmp_path):
    with pytest.raises(ValueError, match="`path` must be an existing .ipynb"):
        read_master(tmp_path / "missing.ipynb")


def test_free_names_ignores_bound_names_and_builtins():
    code = "import math\nx = [v for v in answer]\ndef f(a):\n    return a + given\nassert len(x) == f(1)"
    assert free_names(code) == {"answer", "given"}


# --------------------------------------------------------------------------- answers as data


class _Liar:
    def __eq__(self, other):
        return True

    def __bool__(self):
        return True


@pytest.mark.parametrize("value", [
    None, True, 3, -2.5, float("inf"), 1 + 2j, "rk4", Ellipsis, [1, (2.0, "x")], {"alpha": 2.0},
    np.float64(0.1), np.int32(7), np.array([[1.0, 2.0], [3.0, 4.5]]), np.array([1 + 1j, 2]),
    np.array([True, False]), np.arange(4),
])
def test_answers_round_trip(value):
    back = decode(json.loads(json.dumps(encode(value))))
    if isinstance(value, np.ndarray):
        np.testing.assert_array_equal(back, value)
        assert back.dtype.kind == value.dtype.kind
    elif value is Ellipsis:
        assert back is Ellipsis
    else:
        assert back == value and type(back) in (type(value), float, int, bool, complex)


def test_answers_take_only_plain_data():
    import sympy as sm

    assert np.array_equal(decode(encode(sm.Matrix([[1, 2]]))), [[1.0, 2.0]])
    shared = list(range(1000))
    for value in (_Liar(), lambda x: x, np.zeros(200_001), {1: 2}, np.array(["a", "b"]), [shared] * 1000):
        assert isinstance(decode(encode(value)), Unsupported)
    assert isinstance(decode({"t": "missing", "v": None}), Missing)
    # the payload is parsed, never evaluated
    with pytest.raises(ValueError):
        decode({"t": "float", "v": "__import__('os').getcwd()"})
    with pytest.raises(ValueError, match="tagged value"):
        decode({"t": "float", "v": "1.0", "code": "x"})


# --------------------------------------------------------------------------- built versions of the small master


def test_student_version_of_the_small_master(mini):
    _, out, _ = mini
    nb = nbformat.read(out / "student" / "mini.ipynb", as_version=4)
    sources = [c.source for c in nb.cells]
    text = "\n".join(sources)
    for secret in ("2 * scale", "np.arange(3.0) * scale", "'udk'", "Doubling", "isclose", "allclose", "HIDDEN"):
        assert secret not in text
    assert 'Checker("mini_checks.json")' in sources[1]
    assert 'grader.check("q1")' in sources and 'grader.check("q3")' in sources
    assert 'grader.check("q2")' not in sources  # q2 has no public test
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")
    checks = json.loads((out / "student" / "mini_checks.json").read_text())
    assert checks["tests"] == {"q1": [{"code": 'assert np.ndim(double) == 0, "a number"'}], "q2": [],
                               "q3": [{"code": "assert isinstance(word, str) and word.upper() == 'UDK'"}]}
    spec = json.loads((out / "autograder" / "assignment.json").read_text())
    assert [len(q["tests"]) for q in spec["questions"]] == [2, 1, 1]


def test_checker_reports_and_never_raises(mini, tmp_path):
    _, out, _ = mini
    grader = Checker(out / "student" / "mini_checks.json")
    result = grader.check("q1", {"np": np, "double": ...})
    assert not result.ok and "not answered yet" in repr(result)
    assert grader.check("q1", {"np": np, "double": 6.0}).ok
    failed = grader.check("q3", {"word": 5})
    assert not failed.ok and "AttributeError" not in repr(failed) and "in: assert" in repr(failed)
    assert "1 of 1 public check(s) failed" in repr(failed)
    with pytest.raises(ValueError, match="`question` must be one of q1, q2, q3"):
        grader.check("q9", {})
    with pytest.raises(FileNotFoundError, match="`path`"):
        Checker(tmp_path / "nowhere.json")


def test_checker_needs_only_the_plain_install(mini):
    """A student's kernel may lack nbformat, nbclient and PyYAML (VS Code, a hub image)."""
    _, out, _ = mini
    probe = ("import sys\n"
             "for name in ('nbformat', 'nbclient', 'yaml'):\n"
             "    sys.modules[name] = None  # importing them now fails\n"
             "from udk_notebooks.assign import Checker\n"
             f"print(Checker({str(out / 'student' / 'mini_checks.json')!r}).check('q3', {{'word': 'udk'}}))")
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "q3: all 1 public check(s) passed (hidden tests run when grading)"


def test_trusted_runner_keeps_questions_apart():
    job = {"given": ["import numpy as np\nscale = 3.0"], "case_time_limit": 2, "answers": {
        "double": encode(6.0), "vec": encode(_Liar())},
        "questions": [
            {"name": "q1", "answers": ["double"], "tests": [
                {"code": "scale = 100.0\nassert double == 6.0", "hidden": True, "reads": ["double"]},
                {"code": "while True:\n    pass", "hidden": True, "reads": []}]},
            {"name": "q2", "answers": ["vec", "other"], "tests": [
                {"code": "assert scale == 3.0", "hidden": False, "reads": []},
                {"code": "assert vec == 1", "hidden": True, "reads": ["vec"]},
                {"code": "assert other", "hidden": True, "reads": ["other"]}]}]}
    results = run_job(job)["results"]
    assert [r["passed"] for r in results["q1"]] == [True, False]
    assert "time limit" in results["q1"][1]["message"]
    assert [r["passed"] for r in results["q2"]] == [True, False, False]  # q1's test did not change `scale`
    assert "not a number" in results["q2"][1]["message"]
    assert "not defined in the submission" in results["q2"][2]["message"]


# --------------------------------------------------------------------------- grading the small master


@pytest.fixture(scope="module")
def graded(mini, tmp_path_factory):
    """A folder of submissions of the small master, graded once; scores by student."""
    _, out, _ = mini
    student = out / "student" / "mini.ipynb"
    folder = tmp_path_factory.mktemp("submissions")
    attack = "\n".join([
        "import builtins, numpy, udk_notebooks.assign.checks as checks, udk_notebooks.assign.trusted as trusted",
        "numpy.allclose = numpy.isclose = lambda *args, **kwargs: True",
        "checks.run_case = lambda *args, **kwargs: (True, '')",
        "trusted.run_job = lambda job: {'setup_error': None, 'results': {}}",
        "grader.check = lambda *args, **kwargs: 'all passed'",
        "builtins.AssertionError = type('AssertionError', (Exception,), {})",
        "vec = [1.0, 2.0, 4.0]",
    ])
    submissions = {
        "right": RIGHT,
        "untouched": {},
        "wrong_q2": {**RIGHT, 1: "vec = np.arange(3.0)"},
        "raises_q1": {**RIGHT, 0: "double = 1 / 0"},
        "loops_q2": {**RIGHT, 1: "vec = np.arange(3.0) * scale\nwhile True:\n    pass"},
        "deaf_loop_q1": {**RIGHT, 0: "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
                                     "double = 6.0\nwhile True:\n    pass"},
        "kills_kernel_q3": {**RIGHT, 2: "import os\nos._exit(1)"},
        "redefines_checks": {**RIGHT, 1: attack},
        "plain_wrong_q2": {**RIGHT, 1: "vec = [1.0, 2.0, 4.0]"},
        "liar_q2": {**RIGHT, 1: "class Liar:\n    def __eq__(self, other):\n        return True\n\nvec = Liar()"},
    }
    for name, answers in submissions.items():
        _submission(student, answers, folder / f"{name}.ipynb")
    (folder / "not_a_notebook.ipynb").write_text("{ this is not json")
    table = grade_folder(out / "autograder", folder, tmp_path_factory.mktemp("scores"),
                         time_limit=120, cell_time_limit=15, case_time_limit=10)
    with table.open() as handle:
        rows = {row["student"]: row for row in csv.DictReader(handle)}
    feedback = {name: json.loads((table.parent / f"{name}.json").read_text()) for name in rows}
    return rows, feedback


def _scores(row):
    return [float(row["q1"]), float(row["q2"]), float(row["q3"]), float(row["total"])]


@pytest.mark.slow
def test_right_answers_get_full_marks(graded):
    rows, _ = graded
    assert _scores(rows["right"]) == [2, 3, 1, 6] and rows["right"]["status"] == "ok"
    assert rows["right"]["max_score"] == "6"


@pytest.mark.slow
def test_untouched_student_version_scores_zero_without_crashing(graded):
    rows, feedback = graded
    assert _scores(rows["untouched"]) == [0, 0, 0, 0] and rows["untouched"]["status"] == "ok"
    messages = [t["message"] for q in feedback["untouched"]["questions"] for t in q["tests"]]
    # `double = ...` is a stub; the block stub of q2 leaves `vec` undefined
    assert all("not answered yet" in m or "`vec` is not defined in the submission" in m for m in messages)
    assert feedback["untouched"]["questions"][0]["tests"][1]["message"] == "not answered yet: `double` is still `...`"


@pytest.mark.slow
def test_one_wrong_answer_loses_exactly_its_points(graded):
    rows, feedback = graded
    assert _scores(rows["wrong_q2"]) == [2, 0, 1, 3]
    assert [t["passed"] for t in feedback["wrong_q2"]["questions"][1]["tests"]] == [False]


@pytest.mark.slow
def test_a_raising_cell_costs_only_its_question(graded):
    rows, feedback = graded
    assert _scores(rows["raises_q1"]) == [0, 3, 1, 4]
    errors = feedback["raises_q1"]["execution"]["cell_errors"]
    assert len(errors) == 1 and errors[0]["error"].startswith("ZeroDivisionError")
    assert "raised" in rows["raises_q1"]["status"]


@pytest.mark.slow
def test_an_endless_cell_is_stopped_and_costs_only_its_question(graded):
    rows, feedback = graded
    # a new kernel runs the notebook without the endless cell: its question loses its points
    # (even though `vec` was set before the loop), the others keep theirs
    assert _scores(rows["loops_q2"]) == [2, 0, 1, 3]
    # the same for a loop that ignores interrupts
    assert _scores(rows["deaf_loop_q1"]) == [0, 3, 1, 4]
    for name in ("loops_q2", "deaf_loop_q1"):
        execution = feedback[name]["execution"]
        assert len(execution["timed_out_cells"]) == 1 and execution["kernel_restarts"] == 1
        assert execution["seconds"] < 120 and not execution["out_of_time"]
        assert "timed out" in rows[name]["status"]


@pytest.mark.slow
def test_a_cell_that_kills_the_kernel_costs_only_its_question(graded):
    rows, feedback = graded
    assert _scores(rows["kills_kernel_q3"]) == [2, 3, 0, 5]
    assert feedback["kills_kernel_q3"]["execution"]["kernel_restarts"] == 1
    assert "kernel died" in rows["kills_kernel_q3"]["status"]


@pytest.mark.slow
def test_redefining_checks_cannot_change_the_hidden_score(graded):
    rows, feedback = graded
    attacked, plain = feedback["redefines_checks"], feedback["plain_wrong_q2"]
    assert _scores(rows["redefines_checks"]) == _scores(rows["plain_wrong_q2"]) == [2, 0, 1, 3]
    assert attacked["questions"] == plain["questions"]
    # an object that claims equality with everything is not plain data
    assert _scores(rows["liar_q2"]) == [2, 0, 1, 3]
    assert "`vec` is a Liar, not a number" in feedback["liar_q2"]["questions"][1]["tests"][0]["message"]


@pytest.mark.slow
def test_an_unreadable_submission_scores_zero(graded):
    rows, feedback = graded
    assert _scores(rows["not_a_notebook"]) == [0, 0, 0, 0]
    assert "not a readable notebook" in rows["not_a_notebook"]["status"]


def test_grading_checks_its_arguments(mini, tmp_path):
    _, out, _ = mini
    with pytest.raises(ValueError, match="`submission` must be an existing .ipynb"):
        grade_notebook(out / "autograder", tmp_path / "nothing.ipynb")
    with pytest.raises(FileNotFoundError, match="`autograder`"):
        grade_notebook(tmp_path, out / "student" / "mini.ipynb")
    with pytest.raises(ValueError, match="`submissions` folder"):
        grade_folder(out / "autograder", tmp_path, tmp_path / "scores")
    with pytest.raises(ValueError, match="`time_limit` must be a positive number"):
        grade_notebook(out / "autograder", out / "student" / "mini.ipynb", time_limit=0)


@pytest.mark.slow
def test_build_refuses_a_master_whose_solution_fails(tmp_path):
    cells = _master_cells()
    broken = [c if c.source != "double = 2 * scale  # SOLUTION" else new_code_cell("double = 5.0  # SOLUTION")
              for c in cells]
    master = _write(broken, tmp_path / "mini.ipynb")
    from udk_notebooks.assign import BuildError

    with pytest.raises(BuildError, match="solutions score 4 of 6(.|\n)*q1 hidden test 2: AssertionError: double is wrong"):
        build_assignment(master, tmp_path / "out")


# --------------------------------------------------------------------------- the problem sets


def test_there_are_three_problem_sets():
    assert len(PROBLEM_SETS) >= 3, "instructor/assignments/ must hold at least three master notebooks"


@pytest.mark.parametrize("master", PROBLEM_SETS, ids=[p.stem for p in PROBLEM_SETS])
def test_problem_set_is_stored_clean_and_parses(master):
    nb = nbformat.read(master, as_version=4)
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in nb.cells if c.cell_type == "code")
    assignment = read_master(master)
    assert assignment.name == master.stem
    assert all(any(t.hidden for t in q.tests) for q in assignment.questions if not q.manual), \
        "every question scored by tests has hidden tests"


@pytest.fixture(scope="module")
def built_sets(tmp_path_factory):
    """Every problem set built (the build grades the solutions and fails unless they get full marks)."""
    out = tmp_path_factory.mktemp("assignments")
    results = build_all(MASTERS, out, workers=1)
    return out, {Path(r["student"]).stem: r for r in results}


def _hidden_and_solution_lines(master: Path) -> tuple[set[str], set[str]]:
    """Distinctive solution lines and hidden-test lines of a master (not also in its public parts)."""
    assignment = read_master(master)
    public = set()
    solution, hidden = set(), set()
    for part in assignment.cells:
        if part.role == "given":
            public.update(line.strip() for line in part.cell.source.splitlines())
        elif part.role == "solution" and part.cell.cell_type == "code":
            student, full = strip_solution(part.cell.source)
            public.update(line.strip() for line in student.splitlines())
            solution.update(line.strip() for line in full.splitlines())
        elif part.role == "solution":
            solution.update(line.strip() for line in part.cell.source.splitlines())
    for question in assignment.questions:
        for test in question.tests:
            lines = {line.strip() for line in test.code.splitlines()}
            (hidden if test.hidden else public).update(lines)
    drop = public | {"", "..."}
    return {s for s in solution if s not in drop and len(s) > 3}, {h for h in hidden if h not in drop and len(h) > 3}


@pytest.mark.slow
@pytest.mark.parametrize("master", PROBLEM_SETS, ids=[p.stem for p in PROBLEM_SETS])
def test_built_student_version_has_no_solution_or_hidden_test(built_sets, master):
    out, results = built_sets
    assert results[master.stem]["score"] == results[master.stem]["auto_max_score"] > 0
    solution_lines, hidden_lines = _hidden_and_solution_lines(master)
    assert solution_lines and hidden_lines
    student = out / master.stem / "student"
    notebook_text = "\n".join(c.source for c in nbformat.read(student / f"{master.stem}.ipynb", as_version=4).cells)
    folder_text = "\n".join(p.read_text() for p in student.glob("*.json"))
    leaked = sorted(line for line in solution_lines | hidden_lines if line in notebook_text)
    assert not leaked, f"solution or hidden-test lines in the student notebook: {leaked}"
    leaked = sorted(line for line in hidden_lines if json.dumps(line)[1:-1] in folder_text)
    assert not leaked, f"hidden-test lines in the student checks: {leaked}"
    solutions = nbformat.read(out / master.stem / "solutions" / f"{master.stem}.ipynb", as_version=4)
    assert any(c.get("outputs") for c in solutions.cells if c.cell_type == "code"), "solutions carry outputs"


@pytest.mark.slow
@pytest.mark.parametrize("master", PROBLEM_SETS, ids=[p.stem for p in PROBLEM_SETS])
def test_built_student_version_runs_with_stubs(built_sets, master):
    out, _ = built_sets
    student = out / master.stem / "student"
    nb = nbformat.read(student / f"{master.stem}.ipynb", as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(student)}}).execute()  # raises on any error
    checks = [c for c in nb.cells if c.source.startswith("grader.check(")]
    assert checks and all("not answered yet" in c.outputs[0]["data"]["text/plain"] for c in checks)


@pytest.mark.slow
def test_problem_sets_graded_from_the_command_line(built_sets, tmp_path):
    """Untouched student versions score zero; one wrong physics answer loses exactly its question."""
    out, _ = built_sets
    name = "ps3_incline_friction"
    solutions = nbformat.read(out / name / "solutions" / f"{name}.ipynb", as_version=4)
    for cell in solutions.cells:
        cell.source = cell.source.replace("friction_work_up = -mu", "friction_work_up = mu")  # wrong sign
        cell.source = with_student_id(cell.source, "wrong_sign") if cell.cell_type == "code" else cell.source
    submissions = tmp_path / "submissions"
    submissions.mkdir()
    nbformat.write(solutions, submissions / "wrong_sign.ipynb")
    (submissions / "untouched.ipynb").write_bytes((out / name / "student" / f"{name}.ipynb").read_bytes())
    run = subprocess.run([sys.executable, "-m", "udk_notebooks.assign", "grade", str(out / name / "autograder"),
                          str(submissions), "--out", str(tmp_path / "scores")], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[:3] == [
        "student,q1,q2,q3,q4,q5,total,max_score,status",
        "untouched,0,0,0,0,,0,13,ok",
        "wrong_sign,2,0,3,4,,9,13,ok",
    ]
    feedback = json.loads((tmp_path / "scores" / "wrong_sign.json").read_text())
    assert feedback["questions"][1]["tests"][1]["message"].startswith("AssertionError: the work of friction is off")


@pytest.mark.slow
def test_problem_set_tests_accept_other_correct_forms(built_sets):
    """Recombined constraint rows, another virtual-displacement basis, other valid gains, other c."""
    out, _ = built_sets
    spec = json.loads((out / "ps1_slider_pendulum" / "autograder" / "assignment.json").read_text())
    given: dict = {}
    exec("\n".join(spec["given"]), given)
    q, qd = given["q"], given["qd"]
    rel, rel_rate = q[2:] - q[:2], qd[2:] - qd[:2]
    A = np.array([[0.0, 1.0, 0.0, 0.0], [-rel[0], -rel[1], rel[0], rel[1]]])
    b = np.array([0.0, -rel_rate @ rel_rate])
    mix = np.array([[2.0, -3.0], [0.5, 4.0]])  # any invertible recombination of the rows
    V = np.linalg.svd(A)[2][2:].T @ np.array([[1.0, 2.0], [-1.0, 0.5]])
    answers = {"A": encode(mix @ A), "b": encode(mix @ b)}
    questions = [{"name": q_["name"], "answers": q_["answers"],
                  "tests": [{"code": t["code"], "hidden": t["hidden"], "reads": t["reads"]} for t in q_["tests"]]}
                 for q_ in spec["questions"] if q_["name"] == "q2"]
    results = run_job({"given": spec["given"], "answers": answers, "questions": questions})["results"]
    assert all(r["passed"] for r in results["q2"])
    wrong = {"A": encode(A), "b": encode(2 * b)}  # rows right, b inconsistent
    results = run_job({"given": spec["given"], "answers": wrong, "questions": questions})["results"]
    assert not results["q2"][1]["passed"]
    # question 4 with another basis: the works follow from the student's own V
    import udk_notebooks as udk

    motion = udk.udwadia_kalaba(np.diag([2.0, 2.0, 0.5, 0.5]), [0, -2 * 9.81, 0, -0.5 * 9.81], A, b,
                                C=[-0.8 * qd[0], 0, 0, 0])
    q4 = [{"name": "q4", "answers": ["F_C", "F_L", "V", "ideal_work", "nonideal_work"],
           "tests": [{"code": t["code"], "hidden": t["hidden"], "reads": t["reads"]}
                     for t in spec["questions"][3]["tests"]]}]
    answers = {"V": encode(V), "F_L": encode(motion.ideal), "F_C": encode(motion.nonideal),
               "ideal_work": encode(V.T @ motion.ideal), "nonideal_work": encode(V.T @ motion.nonideal)}
    results = run_job({"given": spec["given"], "answers": answers, "questions": q4})["results"]
    assert all(r["passed"] for r in results["q4"])
    # problem set 2: a different valid choice passes, a gain that is too stiff for RK4 at 0.01 s fails
    spec2 = json.loads((out / "ps2_stabilization" / "autograder" / "assignment.json").read_text())
    q3 = [{"name": "q3", "answers": ["rk4_alpha", "rk4_beta", "rk4_step"],
           "tests": [{"code": t["code"], "hidden": t["hidden"], "reads": t["reads"]}
                     for t in spec2["questions"][2]["tests"]]}]
    for (alpha, beta, step), ok in [((1.0, 1.0, 0.01), True), ((20.0, 20.0, 0.01), False), ((5.0, 5.0, 0.001), False)]:
        answers = {"rk4_alpha": encode(alpha), "rk4_beta": encode(beta), "rk4_step": encode(step)}
        results = run_job({"given": spec2["given"], "answers": answers, "questions": q3})["results"]
        assert results["q3"][1]["passed"] is ok, (alpha, beta, step, results)
    # problem set 4: any c with the right component along the line explains the experiment
    spec4 = json.loads((out / "ps4_identify_nonideal" / "autograder" / "assignment.json").read_text())
    q4 = [{"name": "q4", "answers": ["c_vector"],
           "tests": [{"code": t["code"], "hidden": t["hidden"], "reads": t["reads"]}
                     for t in spec4["questions"][3]["tests"]]}]
    given4: dict = {}
    exec("\n".join(spec4["given"]), given4)
    t, data = given4["t_measured"], given4["q_measured"]
    fit = np.polyfit(t, data, 2)[0] * 2  # another route to the least-squares acceleration
    along = np.array([1.0, 1.5]) / np.hypot(1.0, 1.5)
    nonideal = along * (along @ (2.0 * fit - np.array([0.0, -2.0 * 9.81])))
    # the exact c of the noise-free example no longer explains the noisy data to 1e-6
    for c, ok in [(nonideal, True), (nonideal + 3.0 * np.array([1.5, -1.0]), True), ([0.7, -1.2], False),
                  (2 * nonideal, False), ([1.0, 2.0], False)]:
        results = run_job({"given": spec4["given"], "answers": {"c_vector": encode(np.asarray(c))},
                           "questions": q4})["results"]
        assert results["q4"][1]["passed"] is ok, (c, results)


# --------------------------------------------------------------------------- otter-grader export


@pytest.mark.slow
def test_otter_grader_accepts_the_master_and_grades_it_alike(tmp_path):
    pytest.importorskip("otter")
    master = _write(_master_cells(), tmp_path / "mini.ipynb")
    result = build_assignment(master, tmp_path / "out", otter=True)
    assert result["score"] == 6
    otter_out = Path(result["otter"])
    zips = list((otter_out / "autograder").glob("*.zip"))
    assert len(zips) == 1, "otter assign writes a Gradescope autograder zip"
    student = nbformat.read(otter_out / "student" / "mini.ipynb", as_version=4)
    assert "2 * scale" not in "\n".join(c.source for c in student.cells)
    runs = tmp_path / "otter-run"
    runs.mkdir()
    (runs / "mini.ipynb").write_bytes((otter_out / "autograder" / "mini.ipynb").read_bytes())
    run = subprocess.run([sys.executable, "-m", "otter", "run", "-a", str(zips[0]), "-o", str(runs),
                          str(runs / "mini.ipynb")], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    results = json.loads((runs / "results.json").read_text())
    scores = {t["name"]: t["score"] for t in results["tests"] if "score" in t}
    assert scores == {"q1": 2, "q2": 3, "q3": 1}


def _otter_run(zip_path: Path, notebook: Path, out: Path) -> dict:
    """Grade one notebook with ``otter run`` (locally, no Docker); its per-question scores."""
    out.mkdir()
    run = subprocess.run([sys.executable, "-m", "otter", "run", "-a", str(zip_path), "-o", str(out), str(notebook)],
                         capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    results = json.loads((out / "results.json").read_text())
    return {t["name"]: t["score"] for t in results["tests"] if t["name"] != "Public Tests"}


@pytest.mark.slow
def test_otter_zip_installs_the_package_and_grades_readme_example_alike(tmp_path):
    """The Gradescope zip ships a wheel that its environment installs, and grades emmy as our grader does.

    emmy is the README's sample for ps3_incline_friction: her own ``STUDENT_ID``, every answer
    right but the sign of the work of friction on the way up (9 of 11 automatic points).
    """
    pytest.importorskip("otter")
    import zipfile

    import yaml

    master = MASTERS / "ps3_incline_friction.ipynb"
    out = export_otter(master, tmp_path / "otter")
    (zip_path,) = (out / "autograder").glob("*.zip")
    with zipfile.ZipFile(zip_path) as zf:
        names = set(zf.namelist())
        environment = yaml.safe_load(zf.read("environment.yml"))
        (wheel_name,) = [n for n in names if n.startswith("files/udk_notebooks-") and n.endswith(".whl")]
        zf.extract(wheel_name, tmp_path / "zip")
    # Gradescope unpacks the zip into /autograder/source; setup.sh builds the environment from environment.yml
    pip_lines = next(d["pip"] for d in environment["dependencies"] if isinstance(d, dict))
    assert f"/autograder/source/{wheel_name}" in pip_lines
    assert (out / "autograder" / "requirements.txt").read_text().split() == [f"/autograder/source/{wheel_name}"]
    assert "files/ps3_incline_friction_checks.json" in names
    # the wheel installs with no index and holds the package only (no master, no lesson)
    wheel = tmp_path / "zip" / wheel_name
    with zipfile.ZipFile(wheel) as zf:
        tops = {n.split("/")[0] for n in zf.namelist()}
    assert tops == {"udk_notebooks", wheel.name.split("-py3")[0] + ".dist-info"}, tops
    site = tmp_path / "site"
    install = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "--quiet",
                              "--target", str(site), str(wheel)], capture_output=True, text=True, timeout=300)
    assert install.returncode == 0, install.stderr
    probe = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); "
                            "import udk_notebooks.assign as a; print(a.__file__)", str(site)],
                           capture_output=True, text=True, timeout=300)
    assert probe.returncode == 0 and probe.stdout.startswith(str(site)), probe.stdout + probe.stderr
    # the student version: runs where the lab runs (no otter import) and carries otter's assignment name
    student = nbformat.read(out / "student" / "ps3_incline_friction.ipynb", as_version=4)
    assert student.metadata["otter"]["assignment_name"] == "ps3_incline_friction"
    assert not any("import otter" in c.source for c in student.cells)
    assert (out / "student" / "ps3_incline_friction_checks.json").is_file()
    # emmy's notebook: the solutions for her id, the work on the way up with the wrong sign
    solutions = {c.id: c.source for c in solution_notebook(read_master(master)).cells}
    for cell in student.cells:
        if cell.cell_type == "code" and "otter_answer_cell" in cell.metadata.get("tags", []):
            cell.source = solutions[cell.id]
        cell.source = cell.source.replace('STUDENT_ID = "your id"', 'STUDENT_ID = "emmy"')
        if cell.source.startswith("friction_work_up = -"):
            cell.source = cell.source.replace("friction_work_up = -", "friction_work_up = ", 1)
    emmy = tmp_path / "emmy.ipynb"
    nbformat.write(student, emmy)
    ours = grade_notebook(spec_of(read_master(master)), emmy)
    ours_scores = {q["name"]: q["score"] for q in ours["questions"] if q["score"] is not None}
    assert ours_scores == {"q1": 2, "q2": 0, "q3": 3, "q4": 4}, ours_scores  # the README's row for emmy
    assert _otter_run(zip_path, emmy, tmp_path / "otter-run") == ours_scores


# --------------------------------------------------------------------------- discrimination


def test_wrong_submissions_are_generated_from_the_solution():
    solution = {"x": 2.0, "V": np.arange(1.0, 9.0).reshape(4, 2), "flag": True, "zero": np.zeros(2), "word": "udk"}
    subs = {sub.label: sub for sub in wrong_submissions(solution, given=[])}
    assert subs["untouched student version"].answers["x"] is Ellipsis
    zeros = subs["zeros of the right shape"]
    assert zeros.answers["flag"] is False and np.shape(zeros.answers["V"]) == (4, 2)
    assert set(zeros.wrong) == {"x", "V", "flag"}  # `zero` is already zero: not a wrong answer
    assert subs["`x` perturbed by 10%"].answers["x"] == pytest.approx(2.2)
    assert subs["`flag` flipped"].answers["flag"] is False
    # the checkerboard is no scaling of columns (which a basis test rightly accepts) nor of rows
    V = solution["V"]
    ratio = subs["`V` perturbed by 10%"].answers["V"] / V
    assert not np.allclose(ratio, ratio[0]) and not np.allclose(ratio, ratio[:, :1])
    assert np.shape(subs["`x` with a leading axis of length 1"].answers["x"]) == (1,)
    assert np.shape(subs["`V` with a leading axis of length 1"].answers["V"]) == (1, 4, 2)
    assert not any("`zero` perturbed" in label or "`word`" in label for label in subs)


def test_typical_wrong_answers_and_open_answers_come_from_the_config():
    config = {"open_answers": ["gain"],
              "wrong_answers": [{"label": "gain too stiff", "code": "gain = 10 * scale"},
                                {"code": "x = 3.0", "points": 1}]}
    subs = wrong_submissions({"gain": 1.0, "x": 2.0}, ["scale = 4.0"], config)
    labels = [sub.label for sub in subs]
    assert "`gain` perturbed by 10%" not in labels and "`gain` with a leading axis of length 1" in labels
    stiff = subs[labels.index("gain too stiff")]
    assert stiff.answers == {"gain": 40.0, "x": 2.0} and stiff.wrong == ("gain",)
    assert subs[-1].points == 1 and subs[-1].label == "typical wrong answer 2"
    with pytest.raises(AssignmentFormatError, match="changes no answer"):
        wrong_submissions({"x": 2.0}, [], {"wrong_answers": [{"code": "x = 2.0"}]})
    with pytest.raises(AssignmentFormatError, match=r"wrong_answers\[0\]: its code raised NameError"):
        wrong_submissions({"x": 2.0}, [], {"wrong_answers": [{"code": "x = not_defined"}]})


def _spec(tests_q1, tests_q2=(), all_or_nothing=False):
    def question(name, tests, answers):
        return {"name": name, "points": float(sum(p for _, p, _ in tests)), "all_or_nothing": all_or_nothing,
                "manual": False, "answers": answers,
                "tests": [{"code": code, "hidden": True, "points": p, "reads": reads} for code, p, reads in tests]}

    return {"format": "udk-assign/1", "name": "tiny", "given": ["import numpy as np"], "variants": False,
            "questions": [question("q1", tests_q1, ["x", "y"]), question("q2", tests_q2, ["x", "z"])]}


def test_honest_share_counts_only_the_owner_questions_tests():
    spec = _spec([("assert x == 2", 1.0, ["x"]), ("assert y == 3", 2.0, ["y"])],
                 [("assert z == x + 1", 4.0, ["x", "z"])])
    owners = {"x": "q1", "y": "q1", "z": "q2"}
    assert honest_share(spec, owners, []) == 7.0
    assert honest_share(spec, owners, ["x"]) == 6.0  # q2 reads x too, but x is q1's answer
    assert honest_share(spec, owners, ["x", "z"]) == 2.0
    spec_aon = _spec([("assert x == 2", 1.0, ["x"]), ("assert y == 3", 2.0, ["y"])], all_or_nothing=True)
    assert honest_share(spec_aon, owners, ["y"]) == 0.0


def test_discrimination_flags_a_test_that_broadcasts():
    weak = _spec([("assert np.isclose(x, 2.0)", 1.0, ["x"]), ("assert y == 3", 1.0, ["y"])])
    strong = _spec([("assert np.ndim(x) == 0 and np.isclose(x, 2.0)", 1.0, ["x"]),
                    ("assert np.ndim(y) == 0 and y == 3", 1.0, ["y"])])
    owners = {"x": "q1", "y": "q1"}
    subs = wrong_submissions({"x": 2.0, "y": 3}, given=[])
    rows = {r["label"]: r for r in check_discrimination(weak, owners, subs)}
    assert not rows["`x` with a leading axis of length 1"]["ok"]
    assert rows["`x` with a leading axis of length 1"]["score"] == 2.0
    assert rows["`x` perturbed by 10%"]["ok"] and rows["zeros of the right shape"]["score"] == 0.0
    assert all(r["ok"] for r in check_discrimination(strong, owners, subs))
    lenient = [WrongSubmission("stated share", {"x": 5.0, "y": 3}, ("x",), points=2.0)]
    assert check_discrimination(weak, owners, lenient)[0]["allowed"] == 2.0


@pytest.mark.slow
def test_build_refuses_a_master_that_does_not_discriminate(tmp_path):
    cells = _master_cells()
    weak = [c if "double is wrong" not in c.source else new_code_cell("# HIDDEN\nassert np.isclose(double, 6.0)")
            for c in cells]
    master = _write(weak, tmp_path / "mini.ipynb")
    from udk_notebooks.assign import BuildError

    with pytest.raises(BuildError, match=r"more than they deserve(.|\n)*`double` with a leading axis of length 1: "
                                         r"scores 6, at most 4 allowed"):
        build_assignment(master, tmp_path / "out")


# --------------------------------------------------------------------------- variants


def test_variant_numbers_depend_on_the_student_and_the_assignment():
    draw = lambda assignment, student: Variant(assignment, student).uniform(0.0, 1.0)  # noqa: E731
    assert draw("ps3", "ada") == draw("ps3", " ada ")  # the same student, the same numbers
    assert len({draw("ps3", "ada"), draw("ps3", "alan"), draw("ps4", "ada")}) == 3
    assert Variant("ps3", "ada").uniform(25.0, 40.0, decimals=1) == round(Variant("ps3", "ada").uniform(25.0, 40.0), 1)
    assert Variant("ps3", "ada").choice(["a", "b", "c"]) in "abc"
    for bad in ("", "   ", None, 7):
        with pytest.raises(ValueError, match="student_id"):
            Variant("ps3", bad)
    with pytest.raises(ValueError, match="low < high"):
        Variant("ps3", "ada").uniform(1.0, 1.0)


def test_with_student_id_rewrites_only_the_id_line():
    source = ('import numpy as np\nSTUDENT_ID = "your id"   # write yours\n'
              'v = Variant("ps", STUDENT_ID)\nMY_STUDENT_ID = 3')
    expected = 'import numpy as np\nSTUDENT_ID = \'ada\'\nv = Variant("ps", STUDENT_ID)\nMY_STUDENT_ID = 3'
    assert with_student_id(source, "ada") == expected
    assert uses_variants([source]) and not uses_variants(["MY_STUDENT_ID = 3"])
    with pytest.raises(ValueError, match="one-line"):
        with_student_id(source, "ada\nimport os")


def test_trusted_runner_grades_with_the_students_variant():
    given = ['from udk_notebooks.assign import Variant\nSTUDENT_ID = "your id"\n'
             'mass = Variant("ps", STUDENT_ID).uniform(1, 2)']
    question = {"name": "q1", "answers": ["weight"],
                "tests": [{"code": "assert abs(weight - 9.81 * mass) < 1e-9", "hidden": True, "reads": ["weight"]}]}
    ada_weight = 9.81 * Variant("ps", "ada").uniform(1, 2)
    job = {"given": given, "questions": [question], "answers": {"weight": encode(ada_weight)}}
    assert run_job({**job, "student_id": "ada"})["results"]["q1"][0]["passed"]
    assert not run_job({**job, "student_id": "alan"})["results"]["q1"][0]["passed"]  # someone else's numbers


# --------------------------------------------------------------------------- masters stay with the instructor


def _master_markers(path: Path) -> list[str]:
    nb = nbformat.read(path, as_version=4)
    found = []
    for cell in nb.cells:
        first = cell.source.lstrip().splitlines()[0] if cell.source.strip() else ""
        if cell.cell_type == "raw" and first.upper().startswith(("# ASSIGNMENT CONFIG", "# BEGIN QUESTION")):
            found.append(first)
        found += [line for line in cell.source.splitlines() if "# SOLUTION" in line or "# BEGIN SOLUTION" in line
                  or "BEGIN TEST CONFIG" in line or line.lstrip().startswith("# HIDDEN")]
    return found


def test_students_get_no_master():
    """Lessons and published problem sets hold no master; Binder drops instructor/, pip never ships it."""
    student_notebooks = sorted((REPO / "lessons").glob("*.ipynb")) + sorted((REPO / "assignments").rglob("*.ipynb"))
    assert len(list((REPO / "assignments").rglob("*.ipynb"))) == len(PROBLEM_SETS)
    for path in student_notebooks:
        assert not _master_markers(path), f"{path.relative_to(REPO)} holds master cells: {_master_markers(path)[:3]}"
    assert all(_master_markers(master) for master in PROBLEM_SETS)  # the check can fail
    post_build = (REPO / "binder" / "postBuild").read_text()
    assert "rm -rf instructor" in post_build
    assert 'include = ["udk_notebooks*"]' in (REPO / "pyproject.toml").read_text()


def test_published_student_versions_are_up_to_date(tmp_path):
    """`assignments/` is what `publish` writes from the masters today (run `make publish-assignments`)."""
    written = publish_student_versions(MASTERS, tmp_path)
    assert len(written) == len(PROBLEM_SETS)
    for path in sorted(tmp_path.rglob("*")):
        if path.is_file():
            published = REPO / "assignments" / path.relative_to(tmp_path)
            assert published.is_file() and published.read_text() == path.read_text(), (
                f"{published.relative_to(REPO)} is stale: run make publish-assignments")


def test_manual_questions_keep_an_answer_cell_and_count_in_the_maximum():
    master = MASTERS / "ps1_slider_pendulum.ipynb"
    assignment = read_master(master)
    manual = [q for q in assignment.questions if q.manual]
    assert [q.name for q in manual] == ["q6"]
    assert assignment.max_score == assignment.auto_max_score + 2 == 16
    student = nbformat.read(REPO / "assignments" / "ps1_slider_pendulum" / "ps1_slider_pendulum.ipynb", as_version=4)
    answers = [c for c in student.cells if c.source == MANUAL_PROMPT]
    assert len(answers) == 1 and "otter_answer_cell" in answers[0].metadata["tags"]
    assert "range of $A^\\mathsf{T}$" not in "\n".join(c.source for c in student.cells)  # the model answer stays out
    spec = spec_of(assignment)
    assert [q["manual"] for q in spec["questions"]].count(True) == 1


def test_new_master_template(tmp_path):
    path = new_master(tmp_path / "ps9_topic.ipynb")
    assignment = read_master(path)
    assert assignment.name == "ps9_topic" and assignment.auto_max_score == 2 and assignment.max_score == 3
    with pytest.raises(FileExistsError, match="exists already"):
        new_master(path)
    with pytest.raises(ValueError, match=r"\.ipynb"):
        new_master(tmp_path / "ps9.txt")
    run = subprocess.run([sys.executable, "-m", "udk_notebooks.assign", "new", str(tmp_path / "ps8.ipynb")],
                         capture_output=True, text=True)
    assert run.returncode == 0 and "python -m udk_notebooks.assign build" in run.stdout


@pytest.mark.slow
def test_new_master_template_builds_and_discriminates(tmp_path):
    result = build_assignment(new_master(tmp_path / "ps9_topic.ipynb"), tmp_path / "out")
    assert result["score"] == result["auto_max_score"] == 2
    labels = {row["label"] for row in result["discrimination"]}
    assert {"untouched student version", "zeros of the right shape", "`weight` perturbed by 10%",
            "`weight` with a leading axis of length 1"} <= labels
    assert all(row["ok"] for row in result["discrimination"])


# --------------------------------------------------------------------------- the problem sets discriminate


@pytest.mark.slow
@pytest.mark.parametrize("master", PROBLEM_SETS, ids=[p.stem for p in PROBLEM_SETS])
def test_problem_set_discriminates(built_sets, master):
    _, results = built_sets
    rows = results[master.stem]["discrimination"]
    labels = [row["label"] for row in rows]
    assert "untouched student version" in labels and "zeros of the right shape" in labels
    assert sum("perturbed" in label or "flipped" in label for label in labels) >= 4
    assert all(row["ok"] for row in rows), [row for row in rows if not row["ok"]]
    assert all(row["score"] < results[master.stem]["auto_max_score"] for row in rows)


@pytest.mark.slow
def test_ps2_rejects_diverged_and_short_runs(built_sets):
    _, results = built_sets
    rows = {row["label"]: row for row in results["ps2_stabilization"]["discrimination"]}
    for label in ("a diverged RK4 run (one sample: its residual is still zero)", "one Euler step of 10 s from rest",
                  "a run that stops short of the horizon (it diverged at the first step)"):
        assert rows[label]["score"] <= rows[label]["allowed"] == 9  # the run's question (3 points) is lost


@pytest.mark.slow
def test_ps3_variants_all_score_full_marks(built_sets):
    _, results = built_sets
    assert results["ps3_incline_friction"]["variant_ids"] == ["ada", "alan", "grace"]
    assert results["ps1_slider_pendulum"]["variant_ids"] == []
