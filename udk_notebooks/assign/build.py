"""Building an assignment: student, solutions and autograder versions of a master notebook.

``build_assignment(master, out)`` writes

* ``out/student/<name>.ipynb``: solutions replaced by ``...``, solution prose
  and every test cell removed, no outputs, a ``grader = Checker(...)`` cell at
  the top and a ``grader.check("q1")`` cell after each question with public
  tests; beside it ``<name>_checks.json`` with the public tests only;
* ``out/solutions/<name>.ipynb``: the complete notebook, executed, with its
  outputs (its check cells run every test, hidden ones too), and
  ``<name>_checks.json`` with every test;
* ``out/autograder/assignment.json``: the questions, points, tests (hidden
  ones too), the given code and the answer names: all that
  :func:`udk_notebooks.assign.grade.grade_notebook` needs;
* with ``otter=True``, ``out/otter/``: ``otter assign``'s Gradescope autograder
  zip for the same master, with a wheel of this package that its environment
  installs, and the student version to hand out (:func:`export_otter`).

Before writing anything final the solutions are graded with the new
autograder, and the build fails unless they get full marks: for every sampled
student id of a master with per-student variants too (:mod:`.variants`).
It also fails when a generated wrong submission (untouched stubs, zeros, an
answer perturbed by 10 %, a wrong shape, the master's typical wrong answers)
scores more than its honest share (:mod:`.discriminate`).
"""

from __future__ import annotations

import copy
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat

from .answers import decode
from .discriminate import check_discrimination, wrong_submissions
from .format import Assignment, read_master, strip_solution
from .grade import checks_of, execute_submission, grade_answers, spec_of
from .variants import with_student_id

__all__ = ["BuildError", "build_all", "build_assignment", "export_otter", "new_master", "publish_student_versions",
           "solution_notebook", "student_notebook"]

ANSWER_CELL_TAG = "otter_answer_cell"  # otter-grader's tag for the cells students fill in
MANUAL_PROMPT = "_Type your answer here, replacing this text._"  # otter-grader's prompt for written answers


class BuildError(RuntimeError):
    """The solutions do not get full marks, or otter-grader failed; the message says which tests."""


def _init_cell(name: str):
    cell = nbformat.v4.new_code_cell(
        f"# Checks for this assignment: run grader.check(\"q1\") after answering q1.\n"
        f"from udk_notebooks.assign import Checker\n\ngrader = Checker(\"{name}_checks.json\")",
        metadata={"tags": ["udk_assign_init"]},
    )
    cell.id = "udk-assign-init"  # fixed ids: a published student version changes only when its master does
    return cell


def _check_cell(question: str):
    cell = nbformat.v4.new_code_cell(f'grader.check("{question}")', metadata={"tags": ["udk_assign_check"]})
    cell.id = f"udk-check-{question}"
    return cell


def _manual_answer_cell(question: str, number: int):
    cell = nbformat.v4.new_markdown_cell(MANUAL_PROMPT, metadata={"tags": [ANSWER_CELL_TAG]})
    cell.id = f"udk-answer-{question}-{number}"
    return cell


def _clean(cell):
    cell = copy.deepcopy(cell)
    if cell.cell_type == "code":
        cell.outputs, cell.execution_count = [], None
    return cell


def _notebook(assignment: Assignment, student: bool) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook(metadata=copy.deepcopy(assignment.metadata))
    # otter-grader's Gradescope autograder refuses a notebook without its assignment's name
    # ("Received submission for assignment 'None'"): the name lets the export grade this version too.
    nb.metadata.setdefault("otter", {})["assignment_name"] = assignment.name
    public = {q.name for q in assignment.questions if q.public_tests}
    checked = {q.name for q in assignment.questions if not q.manual}
    manual = {q.name: 0 for q in assignment.questions if q.manual}
    check_names = public if student else checked
    placed_init = False
    for part in assignment.cells:
        cell = None
        if part.role == "given" and (part.cell.source.strip() or part.cell.cell_type == "code"):
            cell = _clean(part.cell)
        elif part.role == "solution":
            if part.cell.cell_type == "code":
                cell = _clean(part.cell)
                cell.source = strip_solution(part.cell.source)[0 if student else 1]
                if student:
                    cell.metadata.setdefault("tags", []).append(ANSWER_CELL_TAG)
            elif not student:
                cell = _clean(part.cell)
            elif part.question in manual:
                # A free-text question keeps a place for the student's answer; the model answer stays out.
                manual[part.question] += 1
                cell = _manual_answer_cell(part.question, manual[part.question])
            if cell is not None and part.question:
                cell.metadata["udk_question"] = part.question  # the grader collects hand-graded answers by it
        if cell is not None:
            if not placed_init and cell.cell_type == "code":
                nb.cells.append(_init_cell(assignment.name))
                placed_init = True
            nb.cells.append(cell)
        if part.check_after and part.check_after in check_names:
            nb.cells.append(_check_cell(part.check_after))
    if not placed_init:
        nb.cells.insert(0, _init_cell(assignment.name))
    nbformat.validate(nb)
    return nb


def student_notebook(assignment: Assignment) -> nbformat.NotebookNode:
    """The student version (no outputs, solutions stubbed, tests removed)."""
    return _notebook(assignment, student=True)


def solution_notebook(assignment: Assignment) -> nbformat.NotebookNode:
    """The solutions version before execution (solution code and prose, check cells for every question)."""
    return _notebook(assignment, student=False)


def _write_json(path: Path, data) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1) + "\n")


def _failures(feedback: dict) -> str:
    lines = []
    for q in feedback["questions"]:
        for number, t in enumerate(q["tests"], start=1):
            if not t["passed"]:
                kind = "hidden" if t["hidden"] else "public"
                lines.append(f"  {q['name']} {kind} test {number}: {t['message']}")
    execution = feedback.get("execution") or {}
    lines += [f"  cell {e['cell']}: {e['error']}" for e in execution.get("cell_errors", [])]
    return "\n".join(lines)


def build_assignment(master: str | Path, out: str | Path, *, verify: bool = True, otter: bool = False,
                     time_limit: float = 600.0, kernel_name: str = "python3", discriminate: bool = True,
                     variant_sample: int = 3) -> dict:
    """Build the student, solutions and autograder versions of one master notebook.

    Parameters
    ----------
    master : str or Path
        The master notebook (format: :mod:`udk_notebooks.assign.format`).
    out : str or Path
        Output folder; ``student/``, ``solutions/``, ``autograder/`` (and
        ``otter/``) are replaced.
    verify : bool, optional
        Execute and grade the solutions; fail unless they get full marks. With
        ``False`` the solutions notebook is written unexecuted (and nothing below runs).
    otter : bool, optional
        Also run ``otter assign`` (needs the ``otter`` extra) into ``out/otter``.
    time_limit : float, optional
        Seconds for executing the solutions.
    kernel_name : str, optional
    discriminate : bool, optional
        Also grade generated wrong submissions (:mod:`.discriminate`) and fail
        if any scores more than its honest share.
    variant_sample : int, optional
        For a master with per-student variants (:mod:`.variants`): how many
        student ids (``udk: variant_ids`` of the config, else ``sample-1``,
        ``sample-2``, ...) whose solutions must also score full marks.

    Returns
    -------
    dict
        The paths written (``student``, ``checks``, ``solutions``, ``autograder``,
        ``otter``), the solutions' ``score``, ``auto_max_score`` (the tests' points)
        and ``max_score`` (manual questions included), the ``discrimination`` rows
        and the ``variant_ids`` checked.

    Raises
    ------
    AssignmentFormatError
        For a master that does not follow the format.
    BuildError
        When the solutions (of any sampled variant) lose points, a wrong
        submission scores more than its share, or ``otter assign`` fails.
    """
    assignment = read_master(master)
    out = Path(out)
    spec = spec_of(assignment)
    name = assignment.name
    paths = {"student": out / "student" / f"{name}.ipynb", "checks": out / "student" / f"{name}_checks.json",
             "solutions": out / "solutions" / f"{name}.ipynb", "autograder": out / "autograder" / "assignment.json"}
    for folder in ("student", "solutions", "autograder", "otter"):
        shutil.rmtree(out / folder, ignore_errors=True)
    paths["student"].parent.mkdir(parents=True)
    nbformat.write(student_notebook(assignment), paths["student"])
    _write_json(paths["checks"], checks_of(spec, hidden=False))
    _write_json(paths["autograder"], spec)
    _write_json(out / "solutions" / f"{name}_checks.json", checks_of(spec, hidden=True))
    solutions = solution_notebook(assignment)
    result = {**{k: str(v) for k, v in paths.items()}, "score": None, "auto_max_score": assignment.auto_max_score,
              "max_score": assignment.max_score, "discrimination": None, "variant_ids": []}
    if verify:
        run = _run_solutions(spec, solutions, None, time_limit, kernel_name, master)
        nbformat.write(run["notebook"], paths["solutions"])
        result["score"] = run["score"]
        if discriminate:
            result["discrimination"] = _discriminate(assignment, spec, run["answers"], master)
        if spec["variants"]:
            result["variant_ids"] = _check_variants(assignment, spec, solutions, variant_sample, time_limit,
                                                    kernel_name, master)
    else:
        nbformat.write(solutions, paths["solutions"])
    if otter:
        result["otter"] = str(export_otter(master, out / "otter"))
    return result


def _run_solutions(spec: dict, solutions, student_id: str | None, time_limit: float, kernel_name: str,
                   master) -> dict:
    """Execute the solutions (for one student's variant), grade them, fail unless they get full marks."""
    nb = copy.deepcopy(solutions)
    if student_id is not None:
        for cell in nb.cells:
            if cell.cell_type == "code":
                cell.source = with_student_id(cell.source, student_id)
    names = sorted({answer for q in spec["questions"] for answer in q["answers"]})
    with tempfile.TemporaryDirectory(prefix="udk-build-") as folder:
        _write_json(Path(folder) / f"{spec['name']}_checks.json", checks_of(spec, hidden=True))
        report = execute_submission(nb, folder, names, time_limit=time_limit, cell_time_limit=time_limit,
                                    kernel_name=kernel_name)
    # The master's own solutions are the instructor's code: tested without a sandbox, so that a build
    # works where bubblewrap does not (a laptop); students' submissions are always sandboxed.
    questions, setup_error = grade_answers(spec, report.answers, unsafe=True,
                                           student_id=student_id if spec["variants"] else None)
    got = round(sum(q["score"] or 0.0 for q in questions), 10)
    full = sum(q["points"] for q in spec["questions"] if not q["manual"])
    if got != full or setup_error:
        feedback = {"questions": questions, "execution": report.summary()}
        who = "" if student_id is None else f" (variant of student id {student_id!r})"
        raise BuildError(f"{Path(master).name}: the solutions{who} score {got:g} of {full:g}; fix the master:\n"
                         f"{_failures(feedback)}{setup_error or ''}")
    return {"notebook": nb, "score": got, "answers": report.answers}


def _discriminate(assignment: Assignment, spec: dict, answers: dict, master) -> list[dict]:
    """Grade the generated wrong submissions; fail if any scores more than its honest share."""
    solution = {name: decode(value) for name, value in answers.items()}
    config = assignment.config.get("udk") or {}
    subs = wrong_submissions(solution, spec["given"], config)
    rows = check_discrimination(spec, assignment.answer_owners(), subs)
    bad = [row for row in rows if not row["ok"]]
    if bad:
        lines = "\n".join(f"  {row['label']}: scores {row['score']:g}, at most {row['allowed']:g} allowed"
                          for row in bad)
        raise BuildError(f"{Path(master).name}: wrong answers score more than they deserve; make the hidden tests "
                         f"check what they miss:\n{lines}")
    return rows


def _check_variants(assignment: Assignment, spec: dict, solutions, sample: int, time_limit: float,
                    kernel_name: str, master) -> list[str]:
    """Run and grade the solutions of each sampled student id's variant."""
    if not (isinstance(sample, int) and sample >= 1):
        raise ValueError(f"`variant_sample` must be a whole number of at least 1; got {sample!r}")
    ids = [str(i) for i in (assignment.config.get("udk") or {}).get("variant_ids", [])][:sample]
    ids += [f"sample-{n}" for n in range(1, sample - len(ids) + 1)]
    for student_id in ids:
        _run_solutions(spec, solutions, student_id, time_limit, kernel_name, master)
    return ids


_WHEEL_LOCK = threading.Lock()  # pip wheel writes build/ in the checkout: one build at a time (build_all's threads)
GRADESCOPE_SOURCE = "/autograder/source"  # where Gradescope unpacks an autograder zip (its setup.sh assumes it)
OTTER_CONFIG_FILES = ("files", "autograder_files")  # master config keys naming files beside the master


def export_otter(master: str | Path, out: str | Path, *, wheel: str | Path | None = None) -> Path:
    """Run ``otter assign`` on the master into ``out``: a Gradescope zip that installs this package.

    The master is otter's format except for the ``udk`` config key, which otter-grader
    (>= 7) rejects; ``otter assign`` reads a copy without it. The zip carries a wheel of
    this package and the public checks of the student version (otter's ``autograder_files``,
    unpacked under ``/autograder/source/files/``) and a ``requirements.txt`` naming the
    wheel, which otter folds into the zip's ``environment.yml``; so Gradescope's
    ``setup.sh`` installs the package with no index. ``out/student/`` holds this
    project's student version (it needs only the package, as in ``make lab``, and
    carries otter's assignment name), not otter's, whose first cell imports otter.

    Parameters
    ----------
    master : str or Path
        The master notebook.
    out : str or Path
        Output folder (replaced): ``autograder/`` (otter's zip, and beside it its
        notebook, ``requirements.txt`` and the wheel) and ``student/`` (notebook and
        public checks).
    wheel : str or Path, optional
        A built wheel of udk-notebooks to ship. By default one is built from the
        source checkout the package is imported from (``pip wheel --no-deps``).

    Returns
    -------
    Path
        ``out``.

    Raises
    ------
    BuildError
        Without otter-grader, when the wheel cannot be built or found, or when
        ``otter assign`` fails.
    """
    if importlib.util.find_spec("otter") is None:
        raise BuildError("`otter=True` needs otter-grader: pip install 'udk-notebooks[otter]'")
    master, out = Path(master).resolve(), Path(out).resolve()
    assignment = read_master(master)
    shutil.rmtree(out, ignore_errors=True)
    with tempfile.TemporaryDirectory(prefix="udk-otter-") as staging:
        staging = Path(staging)
        wheel = _package_wheel(staging) if wheel is None else _copied_wheel(Path(wheel), staging)
        checks = f"{assignment.name}_checks.json"
        _write_json(staging / checks, checks_of(spec_of(assignment), hidden=False))
        (staging / "requirements.txt").write_text(f"{GRADESCOPE_SOURCE}/files/{wheel.name}\n")
        _write_otter_master(master, staging, extra_files=[wheel.name, checks])
        run = subprocess.run([sys.executable, "-m", "otter", "assign", "--no-pdfs", master.name, str(out)],
                             capture_output=True, text=True, cwd=staging)
    if run.returncode != 0:
        raise BuildError(f"otter assign failed on {master.name}:\n{run.stdout[-2000:]}{run.stderr[-2000:]}")
    # The student version students can run where the lab runs (no otter import), with its public checks.
    shutil.rmtree(out / "student", ignore_errors=True)
    (out / "student").mkdir()
    nbformat.write(student_notebook(assignment), out / "student" / f"{assignment.name}.ipynb")
    _write_json(out / "student" / checks, checks_of(spec_of(assignment), hidden=False))
    return out


def _write_otter_master(master: Path, staging: Path, extra_files: list[str]) -> None:
    """Copy the master for ``otter assign``: no ``udk`` key, the package's wheel and requirements added."""
    import yaml

    nb = nbformat.read(master, as_version=4)
    config_cell = next(c for c in nb.cells if c.cell_type == "raw" and c.source.startswith("# ASSIGNMENT CONFIG"))
    config = yaml.safe_load(config_cell.source.split("\n", 1)[1] if "\n" in config_cell.source else "") or {}
    config.pop("udk", None)
    for key in OTTER_CONFIG_FILES:  # files the master names travel with its copy
        for name in config.get(key) or []:
            source, target = master.parent / name, staging / name
            target.parent.mkdir(parents=True, exist_ok=True)
            (shutil.copytree if source.is_dir() else shutil.copy2)(source, target)
    config["autograder_files"] = [*(config.get("autograder_files") or []), *extra_files]
    requirements = config.get("requirements")
    if isinstance(requirements, str):  # a file beside the master: keep its lines and add the wheel
        lines = (master.parent / requirements).read_text().splitlines()
        (staging / "requirements.txt").write_text("\n".join([*lines, *(staging / "requirements.txt").read_text()
                                                              .splitlines()]) + "\n")
    elif isinstance(requirements, list):
        (staging / "requirements.txt").write_text("\n".join([*requirements, *(staging / "requirements.txt")
                                                              .read_text().splitlines()]) + "\n")
    config["requirements"] = "requirements.txt"
    config_cell.source = "# ASSIGNMENT CONFIG\n" + yaml.safe_dump(config, sort_keys=False)
    nbformat.write(nb, staging / master.name)


def _package_wheel(out: Path) -> Path:
    """Build a wheel of udk-notebooks from the source checkout it is imported from, into ``out``.

    The checkout, not the installed files: an editable install has no wheel of its own.
    """
    root = Path(__file__).resolve().parents[2]
    if not (root / "pyproject.toml").is_file():
        raise BuildError(f"no source checkout of udk-notebooks at {root} to build a wheel from; "
                         "pass `wheel=` (a built udk_notebooks-*.whl)")
    with _WHEEL_LOCK:
        run = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", str(root), "-w", str(out)],
                             capture_output=True, text=True)
    wheels = sorted(out.glob("udk_notebooks-*.whl"))
    if run.returncode != 0 or len(wheels) != 1:
        raise BuildError(f"building the udk-notebooks wheel failed:\n{run.stdout[-2000:]}{run.stderr[-2000:]}")
    return wheels[0]


def _copied_wheel(wheel: Path, out: Path) -> Path:
    if not (wheel.is_file() and wheel.name.startswith("udk_notebooks-") and wheel.suffix == ".whl"):
        raise BuildError(f"`wheel` must be a built udk_notebooks-*.whl file; got {str(wheel)!r}")
    return Path(shutil.copy2(wheel, out / wheel.name))


def publish_student_versions(source: str | Path, out: str | Path) -> list[Path]:
    """Write the student version of each master in ``source`` to ``out/<name>/`` (notebook and public checks).

    This is what a course publishes (and what this repository's ``assignments/`` holds): no
    solution, no hidden test, no output. Nothing is executed. Returns the notebooks written.
    """
    source = Path(source)
    masters = [source] if source.is_file() else sorted(p for p in source.glob("*.ipynb") if not p.name.startswith("."))
    if not masters:
        raise ValueError(f"`source` {str(source)!r} is neither a master notebook nor a folder holding one")
    written = []
    for master in masters:
        assignment = read_master(master)
        folder = Path(out) / assignment.name
        folder.mkdir(parents=True, exist_ok=True)
        nbformat.write(student_notebook(assignment), folder / f"{assignment.name}.ipynb")
        _write_json(folder / f"{assignment.name}_checks.json", checks_of(spec_of(assignment), hidden=False))
        written.append(folder / f"{assignment.name}.ipynb")
    return written


def new_master(path: str | Path) -> Path:
    """Write a template master notebook to start a new problem set (refuses to overwrite a file).

    The template holds the config cell, given code, one question with a solution, a
    public and a hidden test, and one written (manual) question: it builds as it is.
    """
    path = Path(path)
    if path.suffix != ".ipynb":
        raise ValueError(f"`path` must end in .ipynb; got {str(path)!r}")
    if path.exists():
        raise FileExistsError(f"`path` {str(path)!r} exists already; choose a new name")
    raw, md, code = nbformat.v4.new_raw_cell, nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    name = path.stem
    cells = [
        raw(f"# ASSIGNMENT CONFIG\nname: {name}\nudk:\n  wrong_answers: []   # typical wrong answers: "
            "- {label: ..., code: 'x = ...'}"),
        md(f"# {name}\n\nWhat the problem set is about, its prerequisites and the time it takes."),
        code("import numpy as np\n\nimport udk_notebooks as udk\n\nmass = 2.0  # kg: given data every version keeps"),
        raw("# BEGIN QUESTION\nname: q1\npoints: 2"),
        md("## Question 1\n\nDefine `weight`, the weight of the mass in N (g = 9.81 m/s^2)."),
        raw("# BEGIN SOLUTION"),
        code("weight = mass * 9.81  # SOLUTION"),
        md("The explanation students see in the solutions only."),
        raw("# END SOLUTION"),
        raw("# BEGIN TESTS"),
        code('""" # BEGIN TEST CONFIG\npoints: 0\n""" # END TEST CONFIG\n'
             'assert np.ndim(weight) == 0, "weight must be one number"'),
        code('""" # BEGIN TEST CONFIG\nhidden: true\npoints: 2\n""" # END TEST CONFIG\n'
             'assert np.ndim(weight) == 0, "weight must be one number"\n'
             'assert np.isclose(weight, mass * 9.81, rtol=1e-9, atol=0), "weight is off"'),
        raw("# END TESTS"),
        raw("# END QUESTION"),
        raw("# BEGIN QUESTION\nname: q2\npoints: 1\nmanual: true"),
        md("## Question 2 (written)\n\nWhy ...? This answer is read and scored by the instructor."),
        raw("# BEGIN SOLUTION"),
        md("The model answer."),
        raw("# END SOLUTION"),
        raw("# END QUESTION"),
    ]
    nb = nbformat.v4.new_notebook(cells=cells, metadata={
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


def build_all(source: str | Path, out: str | Path, *, workers: int | None = None, **options) -> list[dict]:
    """Build one master notebook into ``out``, or every ``*.ipynb`` of a folder into ``out/<stem>``.

    The masters of a folder are built side by side, ``workers`` at a time (default: the number
    of CPUs, at most 4): each build runs its solutions in kernels of its own.
    """
    source = Path(source)
    if not source.is_dir():
        return [build_assignment(source, out, **options)]
    masters = sorted(p for p in source.glob("*.ipynb") if not p.name.startswith("."))
    if not masters:
        raise ValueError(f"`source` folder {str(source)!r} holds no .ipynb master notebook")
    if workers is None:
        workers = min(4, os.cpu_count() or 1)
    if not (isinstance(workers, int) and workers >= 1):
        raise ValueError(f"`workers` must be a whole number of at least 1; got {workers!r}")
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(lambda master: build_assignment(master, Path(out) / master.stem, **options), masters))
