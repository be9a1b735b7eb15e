"""The gradebook (merging, rosters, LMS exports, hand-graded questions) and the students' feedback.

The first tests work on gradebooks written here; the last ones grade a small
class (section folders, a duplicate name, a late LMS download, a file that
is not a notebook) in sandboxes and read what came out.
"""

from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_raw_cell

from udk_notebooks.assign import build_assignment, grade_folder, sandbox_problem
from udk_notebooks.assign.answers import encode
from udk_notebooks.assign.feedback import feedback_html, feedback_markdown, show_answer
from udk_notebooks.assign.gradebook import Gradebook, drop_row, export, match_student, merge_manual, read_roster

HIDDEN_CODE = "assert abs(double - 6.0) < 1e-9, 'double is off'"

SPEC = {"format": "udk-assign/1", "name": "tiny", "given": [],
        "questions": [{"name": "q1", "points": 2.0, "all_or_nothing": False, "manual": False, "answers": ["double"],
                       "tests": [{"code": HIDDEN_CODE, "hidden": True, "points": 2.0, "reads": ["double"]}]},
                      {"name": "q2", "points": 3.0, "all_or_nothing": False, "manual": True, "answers": [],
                       "tests": []}]}


def _roster(path: Path) -> Path:
    path.write_text("id,name,login,email,lms_id,section,files\n"
                    "S1,Alice Doe,adoe,alice@uni.example,1001,A,\n"
                    "S2,Bob Roe,broe,bob@uni.example,1002,B,bob_final;bob\n"
                    "S3,Cy Poe,cpoe,cy@uni.example,1003,B,\n")
    return path


def _row(score, sha="0" * 64, student=""):
    return {"file": "x.ipynb", "sha256": sha, "graded_at": "2026-01-01T00:00:00+00:00", "questions":
            {"q1": score, "q2": None}, "status": "ok", "student_id": student, "name": "", "login": "", "email": "",
            "lms_id": "", "section": ""}


def test_roster_matches_names_logins_files_and_lms_downloads(tmp_path):
    roster = read_roster(_roster(tmp_path / "roster.csv"))
    assert match_student("adoe", roster).id == "S1"           # login
    assert match_student("alice", roster).id == "S1"          # e-mail's user part
    assert match_student("bob_final", roster).id == "S2"      # a listed file name
    assert match_student("poecy_1003_555123_ps1_slider_pendulum", roster).id == "S3"   # Canvas bulk download
    assert match_student("poecy_LATE_1003_555124_ps1", roster).id == "S3"
    assert match_student("someone_9999_1_ps1", roster) is None
    assert match_student("mallory", roster) is None


def test_roster_refuses_what_would_mix_students_up(tmp_path):
    (tmp_path / "a.csv").write_text("name,login\nAlice,adoe\n")
    with pytest.raises(ValueError, match="needs an `id` column"):
        read_roster(tmp_path / "a.csv")
    (tmp_path / "b.csv").write_text("id,files\nS1,x\nS1,y\n")
    with pytest.raises(ValueError, match="appears twice"):
        read_roster(tmp_path / "b.csv")
    (tmp_path / "c.csv").write_text("id,files\nS1,x\nS2,x\n")
    with pytest.raises(ValueError, match="belongs to"):
        read_roster(tmp_path / "c.csv")


def test_gradebook_merges_and_logs_a_regrade(tmp_path):
    book = Gradebook(tmp_path, SPEC)
    book.record("alice", _row(2.0, sha="a" * 64))
    book.record("bob", _row(0.0))
    book.save()
    book = Gradebook(tmp_path, SPEC)  # a later run, one file graded again
    book.record("bob", _row(2.0, sha="b" * 64))
    book.save()
    rows = {r["student"]: r for r in csv.DictReader((tmp_path / "scores.csv").open())}
    assert rows["alice"]["total"] == "2" and rows["bob"]["total"] == "2"
    assert rows["bob"]["max_score"] == "5"  # the hand-graded question counts in the maximum
    log = (tmp_path / "grading.log").read_text()
    assert "regraded bob: total 0 -> 2 (changed file" in log and "alice" not in log
    with pytest.raises(ValueError, match="gradebook of 'tiny'"):
        Gradebook(tmp_path, {**SPEC, "name": "other"})


def test_exports_for_each_lms(tmp_path):
    book = Gradebook(tmp_path, SPEC)
    book.record("adoe", _row(2.0))
    book.record("sectionB/broe", _row(1.0))
    book.save()
    roster = _roster(tmp_path / "roster.csv")
    canvas = list(csv.reader(export(tmp_path, SPEC, "canvas", tmp_path / "c.csv", roster=roster).open()))
    assert canvas[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "tiny"]
    assert canvas[1][0] == "Points Possible" and canvas[1][-1] == "5"
    assert canvas[2:] == [["Alice Doe", "1001", "S1", "adoe", "A", "2"], ["Bob Roe", "1002", "S2", "broe", "B", "1"]]
    gradescope = list(csv.reader(export(tmp_path, SPEC, "gradescope", tmp_path / "g.csv", roster=roster).open()))
    assert gradescope == [["Name", "SID", "Email", "tiny"], ["Alice Doe", "S1", "alice@uni.example", "2"],
                          ["Bob Roe", "S2", "bob@uni.example", "1"]]
    moodle = list(csv.reader(export(tmp_path, SPEC, "moodle", tmp_path / "m.csv", roster=roster).open()))
    assert moodle[0] == ["Username", "Email address", "ID number", "tiny"] and moodle[1] == ["adoe", "alice@uni.example",
                                                                                            "S1", "2"]
    plain = list(csv.DictReader(export(tmp_path, SPEC, "csv", tmp_path / "p.csv").open()))
    assert [r["key"] for r in plain] == ["adoe", "sectionB/broe"] and plain[0]["sha256"] == "0" * 64
    with pytest.raises(ValueError, match="no roster student for"):
        export(tmp_path, SPEC, "canvas", tmp_path / "c.csv")  # nobody matched without a roster
    with pytest.raises(ValueError, match="`fmt` must be one of"):
        export(tmp_path, SPEC, "blackboard", tmp_path / "x.csv")


def test_an_lms_export_refuses_two_submissions_of_one_student(tmp_path):
    book = Gradebook(tmp_path, SPEC)
    book.record("adoe", _row(2.0))
    book.record("late/adoe", _row(0.0))
    book.save()
    roster = _roster(tmp_path / "roster.csv")
    with pytest.raises(ValueError, match="S1: adoe, late/adoe"):
        export(tmp_path, SPEC, "canvas", tmp_path / "c.csv", roster=roster)
    drop_row(tmp_path, SPEC, "late/adoe")
    assert len(list(csv.reader(export(tmp_path, SPEC, "canvas", tmp_path / "c.csv", roster=roster).open()))) == 3
    assert "dropped late/adoe" in (tmp_path / "grading.log").read_text()


def test_manual_scores_merge_and_are_checked(tmp_path):
    book = Gradebook(tmp_path, SPEC)
    book.record("alice", _row(2.0))
    book.save()
    scores = tmp_path / "q2.csv"
    scores.write_text("student,score,comment\nalice,2.5,clear\n")
    assert merge_manual(tmp_path, SPEC, "q2", scores) == 1
    row = next(csv.DictReader((tmp_path / "scores.csv").open()))
    assert (row["q2"], row["total"], row["max_score"]) == ("2.5", "4.5", "5")
    for text, message in [("alice,4\n", "outside 0..3"), ("mallory,1\n", "not in the gradebook"),
                          ("alice,lots\n", "not a number")]:
        scores.write_text("student,score\n" + text)
        with pytest.raises(ValueError, match=message):
            merge_manual(tmp_path, SPEC, "q2", scores)
    with pytest.raises(ValueError, match="graded by hand"):
        merge_manual(tmp_path, SPEC, "q1", scores)


def _feedback():
    return {"submission": "alice.ipynb", "assignment": "tiny", "max_score": 2.0, "manual_points": 3.0, "score": 0.0,
            "answers": {"double": encode([1.0, 2.0, "<script>"])},
            "questions": [{"name": "q1", "score": 0.0, "max_score": 2.0, "manual": False,
                           "tests": [{"hidden": True, "points": 2.0, "passed": False,
                                      "message": "AssertionError: double is off"}]},
                          {"name": "q2", "score": None, "max_score": 3.0, "manual": True, "tests": []}],
            "execution": {"cell_errors": [{"cell": 3, "error": "NameError: name 'x' is not defined"}]}}


def test_feedback_shows_points_messages_and_answers_not_test_code():
    markdown, page = feedback_markdown(_feedback(), SPEC), feedback_html(_feedback(), SPEC)
    for text in (markdown, page):
        assert "double is off" in text and "q1: 0 of 2" in text
        assert "0 of 5 points" in text and "3 points of questions graded by hand still to come" in text
        assert "abs(double - 6.0)" not in text  # the hidden test's code
        assert "NameError" in text
    assert "&lt;script&gt;" in page and "<script>" not in page
    assert "[1.0, 2.0, '<script>']" in markdown
    assert show_answer(encode(...)) == "... (not answered)"
    assert "shape (200, 3)" in show_answer(encode(__import__("numpy").zeros((200, 3))))


# --------------------------------------------------------------------------- a small class, graded


def _master(path: Path) -> Path:
    raw, code, md = new_raw_cell, new_code_cell, new_markdown_cell
    cells = [raw("# ASSIGNMENT CONFIG\nname: tiny"), code("scale = 3.0"),
             raw("# BEGIN QUESTION\nname: q1\npoints: 2"), raw("# BEGIN SOLUTION"),
             code("double = 2 * scale  # SOLUTION"), raw("# END SOLUTION"), raw("# BEGIN TESTS"),
             code(f"# HIDDEN\n{HIDDEN_CODE}"), raw("# END TESTS"), raw("# END QUESTION"),
             raw("# BEGIN QUESTION\nname: q2\npoints: 3\nmanual: true"), md("Why is `double` six?"),
             raw("# BEGIN SOLUTION"), md("Because the scale is three."), raw("# END SOLUTION"),
             raw("# END QUESTION")]
    nbformat.write(new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "language": "python",
                                                                      "display_name": "Python 3"}}), path)
    return path


def _answered(student: Path, code: str, words: str, path: Path) -> Path:
    nb = nbformat.read(student, as_version=4)
    cells = [c for c in nb.cells if "otter_answer_cell" in c.metadata.get("tags", [])]
    cells[0].source, cells[1].source = code, words
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


needs_sandbox = pytest.mark.skipif(sandbox_problem() is not None, reason=f"no sandbox here: {sandbox_problem()}")


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    folder = tmp_path_factory.mktemp("class")
    build_assignment(_master(folder / "tiny.ipynb"), folder / "build", verify=False)
    student = folder / "build" / "student" / "tiny.ipynb"
    subs = folder / "submissions"
    _answered(student, "double = 2 * scale\nprint('my double is', double)", "The scale is 3.", subs / "A" / "adoe.ipynb")
    _answered(student, "double = 5.0", "No idea.", subs / "B" / "adoe.ipynb")  # same name, another section
    _answered(student, "double = 6.0", "Twice three.", subs / "B" / "poecy_LATE_1003_555_tiny.IPYNB")
    (subs / "B" / "notes.txt").write_text("not a notebook")
    _answered(student, "double = 0.0", "", subs / ".ipynb_checkpoints" / "adoe-checkpoint.ipynb")
    out = folder / "graded"
    roster = _roster(folder / "roster.csv")
    grade_folder(folder / "build" / "autograder", subs, out, workers=2, roster=roster, time_limit=60,
                 cell_time_limit=20)
    return {"folder": folder, "subs": subs, "out": out, "roster": roster, "student": student}


@needs_sandbox
@pytest.mark.slow
def test_a_class_in_sections_is_graded_apart_and_reported(course):
    out, subs = course["out"], course["subs"]
    book = json.loads((out / "gradebook.json").read_text())
    rows = book["rows"]
    assert sorted(rows) == ["A/adoe", "B/adoe", "B/poecy_LATE_1003_555_tiny"]
    assert {k: r["questions"]["q1"] for k, r in rows.items()} == {"A/adoe": 2.0, "B/adoe": 0.0,
                                                                  "B/poecy_LATE_1003_555_tiny": 2.0}
    assert rows["B/poecy_LATE_1003_555_tiny"]["student_id"] == "S3"
    assert rows["A/adoe"]["sha256"] == hashlib.sha256((subs / "A" / "adoe.ipynb").read_bytes()).hexdigest()
    log = (out / "grading.log").read_text()
    assert "duplicate name 'adoe' in 2 folders, kept apart as A/adoe, B/adoe" in log
    assert "skipped B/notes.txt: not a notebook" in log and "skipped .ipynb_checkpoints/adoe-checkpoint.ipynb" in log
    assert "student S1 has 2 graded submissions: A/adoe, B/adoe" in log


@needs_sandbox
@pytest.mark.slow
def test_feedback_and_the_executed_notebook_are_written(course):
    out = course["out"]
    page, markdown = (out / "A" / "adoe.html").read_text(), (out / "B" / "adoe.md").read_text()
    assert "q1: 2 of 2" in page and " of 5 points" in page and "Alice Doe" in page
    assert "double is off" in markdown and "5.0" in markdown and HIDDEN_CODE not in markdown
    executed = nbformat.read(out / "A" / "adoe.executed.ipynb", as_version=4)
    assert any("my double is 6.0" in o.get("text", "") for c in executed.cells if c.cell_type == "code"
               for o in c.outputs)


@needs_sandbox
@pytest.mark.slow
def test_written_answers_are_collected_and_their_scores_merged(course):
    out = course["out"]
    collected = (out / "manual" / "q2.md").read_text()
    assert "## A/adoe\n\nThe scale is 3." in collected and "## B/adoe\n\nNo idea." in collected
    student = nbformat.read(course["student"], as_version=4)
    assert any(c.cell_type == "markdown" and "otter_answer_cell" in c.metadata.get("tags", []) for c in student.cells)
    table = out / "manual" / "q2.csv"
    assert [r["student"] for r in csv.DictReader(table.open())] == ["A/adoe", "B/adoe", "B/poecy_LATE_1003_555_tiny"]
    table.write_text("student,score,comment\nA/adoe,3,\nB/adoe,1,\nB/poecy_LATE_1003_555_tiny,,\n")
    assert merge_manual(out, json.loads((course["folder"] / "build" / "autograder" / "assignment.json").read_text()),
                        "q2", table) == 2
    rows = {r["student"]: r for r in csv.DictReader((out / "scores.csv").open())}
    assert (rows["A/adoe"]["total"], rows["B/adoe"]["total"], rows["A/adoe"]["max_score"]) == ("5", "1", "5")
    assert "Score: 5 of 5 points" in (out / "A" / "adoe.md").read_text()


@needs_sandbox
@pytest.mark.slow
def test_grading_one_file_again_replaces_only_its_row(course, tmp_path):
    out, subs = course["out"], course["subs"]
    before = json.loads((out / "gradebook.json").read_text())["rows"]
    _answered(course["student"], "double = 6.0", "Fixed.", tmp_path / "B" / "adoe.ipynb")
    grade_folder(course["folder"] / "build" / "autograder", tmp_path, out, workers=1, time_limit=60,
                 cell_time_limit=20)
    after = json.loads((out / "gradebook.json").read_text())["rows"]
    assert after["A/adoe"] == before["A/adoe"] and after.keys() == before.keys()
    old = before["B/adoe"]
    assert after["B/adoe"]["questions"]["q1"] == 2.0 and after["B/adoe"].get("manual") == old.get("manual")
    new_total = 2.0 + sum(old.get("manual", {}).values())  # hand-graded points are kept
    assert f"regraded B/adoe: total {old['total']:g} -> {new_total:g} (changed file" in (out / "grading.log").read_text()
    for question, points in old.get("manual", {}).items():  # and they stay in the student's feedback
        assert f"{question}: {points:g} of 3" in (out / "B" / "adoe.md").read_text()
