"""More of a hostile student against the grader: data forged where the submission runs.

The submission's kernel shares its sandbox with the runner
(:mod:`udk_notebooks.assign.run_submission`), so it can write whatever it likes
where the grader reads from: it can replace ``dump_answers`` in its own kernel
(the answers file), or open the runner's result pipe through
``/proc/<runner>/fd/<n>``, write a document of its own and kill the runner. The
grader must read all of it as hostile data: a malformed answer, report or
executed notebook costs that submission only. Before the fix, each of these
stopped the whole ``grade_folder`` run (OverflowError, IndexError, jsonschema's
ValidationError escaped), so nobody after it got a grade.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell

from udk_notebooks.assign import build_assignment, grade_folder, sandbox_problem
from udk_notebooks.assign.answers import decode
from udk_notebooks.assign.feedback import show_answer
from udk_notebooks.assign.sandbox import Limits

from test_grading_attacks import HONEST, _master

FORGED_ANSWERS = '''
import json
from pathlib import Path
import udk_notebooks.assign.answers as _answers
def _forged(names, path, namespace):
    Path(path).write_text(json.dumps({{"double": {double}, "vec": _answers.encode(vec),
                                       "word": _answers.encode(word)}}))
_answers.dump_answers = _forged
'''
"""Replaces the answer dump in the student's own kernel: ``double`` becomes the tagged data given."""

FORGED_PIPE = '''
import json, os
from udk_notebooks.assign.answers import encode
runner = os.getppid()
arguments = open(f"/proc/{{runner}}/cmdline").read().split("\\0")
fd = arguments[arguments.index("--result-fd") + 1]
report = {{"errors": [], "timed_out": [], "died": [], "restarts": 0, "out_of_time": False, "seconds": 1.0}}
report.update({report})
document = {{"answers": {{"vec": encode(vec), "word": encode(word)}}, "report": report, "notebook": {notebook}}}
with open(f"/proc/{{runner}}/fd/{{fd}}", "w") as handle:
    handle.write(json.dumps(document))
os.kill(runner, 9)
'''
"""Writes a document of its own to the runner's result pipe, then kills the runner so only it is read."""

EMPTY_NOTEBOOK = '\'{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}\''

ATTACKS = {
    "shape_infinite": FORGED_ANSWERS.format(double='{"t": "array", "v": {"dtype": "f", "shape": [float("inf")], '
                                                   '"real": []}}'),
    "complex_short": FORGED_ANSWERS.format(double='{"t": "complex", "v": []}'),
    "report_infinite_cell": FORGED_PIPE.format(report='{"timed_out": [float("inf")]}', notebook=EMPTY_NOTEBOOK),
    "notebook_invalid": FORGED_PIPE.format(
        report="{}", notebook='\'{"cells": [{"cell_type": "code"}], "nbformat": 4, "nbformat_minor": 5}\''),
    "hides_its_cells": "# hides its cells\n" + FORGED_PIPE.format(report="{}", notebook=EMPTY_NOTEBOOK),
    "answer_too_large": FORGED_ANSWERS.format(double='{"t": "list", "v": [{"t": "int", "v": "1"}] * 10**6}'),
}
"""Submission name to the cell it adds after its honest answers (q2, q3: 4 points; q1 unanswered)."""


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    if sandbox_problem() is not None:
        pytest.skip(f"no sandbox here: {sandbox_problem()}")
    course = tmp_path_factory.mktemp("course")
    nbformat.write(_master(), course / "tiny.ipynb")
    build_assignment(course / "tiny.ipynb", course / "build", verify=False)
    student = nbformat.read(course / "build" / "student" / "tiny.ipynb", as_version=4)
    answers = [cell for cell in student.cells if "otter_answer_cell" in cell.metadata.get("tags", [])]
    answers[1].source, answers[2].source = HONEST[1], HONEST[2]
    submissions = course / "submissions"
    submissions.mkdir()
    for name, attack in ATTACKS.items():
        nb = nbformat.from_dict(json.loads(json.dumps(student)))
        nb.cells.append(new_code_cell(attack.strip()))
        nbformat.write(nb, submissions / f"{name}.ipynb")
    answers[0].source = "double = 2 * scale"
    nbformat.write(student, submissions / "honest.ipynb")
    out = tmp_path_factory.mktemp("graded")
    table = grade_folder(course / "build" / "autograder", submissions, out, time_limit=60, cell_time_limit=10,
                         case_time_limit=10, workers=2,
                         limits=Limits(memory_bytes=3 * 2**30, processes=64, file_bytes=32 * 2**20,
                                       folder_bytes=64 * 2**20))
    with table.open() as handle:
        return {"rows": {row["student"]: row for row in csv.DictReader(handle)}, "out": out}


@pytest.mark.slow
def test_forged_data_costs_only_its_submission(graded):
    rows = graded["rows"]
    assert set(rows) == {"honest", *ATTACKS}
    assert float(rows["honest"]["total"]) == 6.0
    for name in ATTACKS:
        assert float(rows[name]["total"]) <= 4.0, name
        assert (graded["out"] / f"{name}.md").is_file(), name


@pytest.mark.slow
def test_the_executed_notebook_kept_for_the_instructor_is_not_forged(graded):
    """The kernel cannot write the runner's result: the copy kept shows the cells that really ran."""
    executed = nbformat.read(graded["out"] / "hides_its_cells.executed.ipynb", as_version=4)
    assert any(cell.source.startswith("# hides its cells") for cell in executed.cells)
    assert float(graded["rows"]["hides_its_cells"]["total"]) == 4.0


@pytest.mark.slow
def test_an_answer_beyond_the_element_limit_is_refused(graded):
    """Written past ``dump_answers`` (which stops at MAX_ELEMENTS), it still reaches nobody as data."""
    feedback = json.loads((graded["out"] / "answer_too_large.json").read_text())
    assert feedback["answers"]["double"]["t"] == "unsupported"
    assert float(graded["rows"]["answer_too_large"]["total"]) == 4.0


@pytest.mark.parametrize("tagged", [
    {"t": "complex", "v": []},
    {"t": "complex", "v": ["1.0"]},
    {"t": "array", "v": {"dtype": "f", "shape": [float("inf")], "real": []}},
    {"t": "array", "v": {"dtype": "f", "shape": [2], "real": ["1.0"]}},
    {"t": "array", "v": {"dtype": "f", "shape": "2", "real": ["1.0", "2.0"]}},
    {"t": "array", "v": []},
    {"t": "list", "v": 5},
    {"t": "dict", "v": [1, 2]},
    {"t": "int", "v": "1" * 6000},
    {"t": "float", "v": None},
])
def test_malformed_tagged_data_is_a_value_error(tagged):
    with pytest.raises(ValueError):
        decode(tagged)
    assert show_answer(tagged) == "(could not be read)"


FILL = '''
import os
written = {}
for folder in ("/dev/shm", "/dev", "/tmp"):
    total = 0
    try:
        for number in range(4):
            with open(f"{folder}/fill{number}", "wb") as handle:
                for _ in range(24):
                    handle.write(b"z" * 2**20)
                    total += 2**20
    except OSError:
        pass
    written[folder] = total // 2**20
os.write(int(os.environ["RESULT_FD"]), repr(written).encode())
'''
"""Writes up to 96 MiB (four files, each under the file-size limit) into each in-memory folder it finds."""


def test_every_writable_folder_in_memory_is_size_limited(tmp_path):
    """/dev and /dev/shm are in memory too: unbounded, a submission could hold half the grader's RAM."""
    import ast
    import sys

    from udk_notebooks.assign.sandbox import run_sandboxed

    if sandbox_problem() is not None:
        pytest.skip(f"no sandbox here: {sandbox_problem()}")
    script = tmp_path / "fill.py"
    script.write_text(FILL)
    run = run_sandboxed(["/bin/sh", "-c", f'RESULT_FD={{result_fd}} exec {sys.executable} -I fill.py'],
                        {"fill.py": script}, limits=Limits(wall_seconds=60, folder_bytes=32 * 2**20,
                                                           file_bytes=30 * 2**20, memory_bytes=2**30))
    written = ast.literal_eval(run.data.decode())
    assert written["/tmp"] <= 32
    assert written["/dev/shm"] <= 32
    assert written["/dev"] <= 32


def test_a_cell_error_cannot_write_markdown_into_the_feedback():
    """A student's exception text (cell errors, test messages) stays inside a code block of the Markdown report:
    it cannot add a heading, a second score line or raw HTML, whatever backticks it holds."""
    MarkdownIt = pytest.importorskip("markdown_it").MarkdownIt

    from udk_notebooks.assign.feedback import feedback_markdown

    forged = "all fine\n\n# tiny: feedback\n\n**Score: 6 of 6 points**\n\n<img src=x onerror=alert(1)>"
    feedback = {"submission": "s.ipynb", "assignment": "tiny", "score": 0.0, "max_score": 2.0, "manual_points": 0.0,
                "answers": {"double": {"t": "str", "v": "```\n# q1: 2 of 2"}},
                "execution": {"cell_errors": [{"cell": 3, "error": f"ValueError: {forged}"}]},
                "questions": [{"name": "q1", "score": 0.0, "max_score": 2.0, "manual": False,
                               "tests": [{"hidden": True, "points": 2.0, "passed": False,
                                          "message": f"KeyError: '```\n{forged}'"}]}]}
    spec = {"questions": [{"name": "q1", "answers": ["double"]}]}
    tokens = MarkdownIt("commonmark").parse(feedback_markdown(feedback, spec))
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
    assert headings == ["tiny: feedback for s.ipynb", "q1: 0 of 2"]
    assert not any(t.type in ("html_block", "html_inline") for t in tokens)
    strong = [tokens[i].children for i, t in enumerate(tokens) if t.type == "inline" and "Score" in t.content]
    assert len(strong) == 1


@pytest.mark.parametrize("document", [
    {"report": {"timed_out": [float("inf")]}},
    {"report": {"restarts": float("nan")}},
    {"notebook": '{"cells": [{"cell_type": "code"}], "nbformat": 4, "nbformat_minor": 5}'},
    {"notebook": '{"nbformat": "x"}'},
])
def test_a_forged_runner_document_is_no_result(monkeypatch, document):
    """Should the kernel ever write the runner's pipe again, the grader still reads the document as hostile."""
    from udk_notebooks.assign import grade
    from udk_notebooks.assign.sandbox import SandboxResult

    report = {"errors": [], "timed_out": [], "died": [], "restarts": 0, "out_of_time": False, "seconds": 1.0}
    data = {"answers": {}, "report": {**report, **document.get("report", {})},
            "notebook": document.get("notebook", json.dumps(nbformat.v4.new_notebook()))}
    forged = SandboxResult(0, json.dumps(data).encode(), False, False, "", 1.0)
    monkeypatch.setattr(grade, "run_sandboxed", lambda *args, **kwargs: forged)
    report, executed, error = grade._execute_sandboxed(nbformat.v4.new_notebook(), "tiny_checks.json", {}, [],
                                                       time_limit=10, cell_time_limit=5, kernel_name="python3",
                                                       limits=Limits())
    assert executed is None and report.answers == {}
    assert "no readable result" in error
