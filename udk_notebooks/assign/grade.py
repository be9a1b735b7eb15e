"""Grading: run a submission in a fresh kernel, take its answers out, test them elsewhere.

For each submitted notebook :func:`grade_notebook`

1. executes its code cells one by one in a fresh kernel (nbclient) whose
   working folder is an empty temporary one holding only the public checks
   file (so its ``grader.check`` cells run). A cell that raises is recorded and execution goes
   on. When a cell runs past ``cell_time_limit`` or kills its kernel, the
   kernel is shut down and a new one runs the notebook again without the
   offending cells (a kernel that ignored or survived an interrupt could not
   be trusted to report the later cells). All of it fits in ``time_limit``
   per notebook;
2. asks that kernel for the values of every answer name, as plain data
   (:mod:`udk_notebooks.assign.answers`), then shuts it down;
3. runs the public and hidden tests in a new, isolated Python process
   (:mod:`udk_notebooks.assign.trusted`) that imports the package afresh.

So a cell that crashes or never ends costs exactly the questions whose
answers it was to define, and nothing the submission redefines in its own
kernel reaches the tests.

Limits: the protection is against what a notebook does in its own namespace.
The submission runs as your user and could change files on disk (even the
installed package); grade untrusted work in a container or a throw-away
account, as otter-grader does with Docker.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import nbformat

from .format import Assignment, Question
from .variants import uses_variants

__all__ = ["ExecutionReport", "execute_submission", "grade_answers", "grade_folder", "grade_notebook",
           "load_autograder", "score"]

ANSWER_TIMEOUT = 60.0
"""Seconds the kernel has to hand over the answers after the last cell."""

MAX_RESTARTS = 5
"""New kernels started for one submission after a cell timed out or killed its kernel."""


@dataclass
class ExecutionReport:
    """What happened when a submission ran.

    Attributes
    ----------
    answers : dict
        Answer name to tagged value (:func:`~udk_notebooks.assign.answers.encode`).
    errors : list of dict
        ``{"cell": index, "error": "ZeroDivisionError: ..."}`` for each cell that raised.
    timed_out : list of int
        Cells stopped at the cell time limit.
    died : list of int
        Cells during which the kernel died.
    restarts : int
        Kernels started again.
    out_of_time : bool
        The notebook's time limit ended execution early; later cells never ran.
    seconds : float
    """

    answers: dict
    errors: list
    timed_out: list
    died: list
    restarts: int
    out_of_time: bool
    seconds: float

    def summary(self) -> dict:
        return {"seconds": round(self.seconds, 2), "cell_errors": self.errors, "timed_out_cells": self.timed_out,
                "kernel_died_in_cells": self.died, "kernel_restarts": self.restarts, "out_of_time": self.out_of_time}


def _positive(value, name: str) -> float:
    try:
        value = float(value)
    except (TypeError, ValueError):
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise ValueError(f"`{name}` must be a positive number of seconds; got {value!r}")
    return value


def _error_of(cell) -> str | None:
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            return f"{output.get('ename', 'Error')}: {output.get('evalue', '')}".rstrip(": ")
    return None


def execute_submission(nb, workdir: str | Path, answer_names, *, time_limit: float = 600.0,
                       cell_time_limit: float = 120.0, kernel_name: str = "python3") -> ExecutionReport:
    """Execute a notebook cell by cell in a fresh kernel and read its answers.

    Parameters
    ----------
    nb : nbformat.NotebookNode
        The notebook; its cells receive the outputs of the last run.
    workdir : str or Path
        The kernel's working directory.
    answer_names : sequence of str
        Names whose values are read after the run.
    time_limit : float, optional
        Seconds for the whole notebook (every kernel started for it).
    cell_time_limit : float, optional
        Seconds for one cell, within what is left of ``time_limit``.
    kernel_name : str, optional
        Jupyter kernel to use.

    Returns
    -------
    ExecutionReport
    """
    from nbclient import NotebookClient
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    time_limit = _positive(time_limit, "time_limit")
    cell_time_limit = _positive(cell_time_limit, "cell_time_limit")
    workdir = Path(workdir)
    start = time.monotonic()
    deadline = start + time_limit
    code = [i for i, cell in enumerate(nb.cells) if cell.cell_type == "code" and cell.source.strip()]
    skip: set[int] = set()
    timed_out, died = [], []
    restarts = 0
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", MPLBACKEND="Agg")
    answers_file = Path(tempfile.mkdtemp(prefix="answers-")) / "answers.json"
    while True:
        client = NotebookClient(nb, kernel_name=kernel_name, allow_errors=True, shutdown_kernel="immediate",
                                resources={"metadata": {"path": str(workdir)}})
        errors, broken, out_of_time, answers = [], False, False, {}
        with client.setup_kernel(env=env):
            for index in code:
                if index in skip:
                    continue
                left = deadline - time.monotonic()
                if left < 1:
                    out_of_time = True
                    break
                client.timeout = max(1, int(min(cell_time_limit, left)))
                try:
                    client.execute_cell(nb.cells[index], index)
                except CellTimeoutError:
                    timed_out.append(index)
                    skip.add(index)
                    broken = True  # nbclient cannot be trusted with a kernel that outran it: start anew
                    break
                except DeadKernelError:
                    died.append(index)
                    skip.add(index)
                    broken = True
                    break
                error = _error_of(nb.cells[index])
                if error:
                    errors.append({"cell": index, "error": error})
            if not broken:
                answers = _read_answers(client, answer_names, answers_file)
        if not broken or restarts >= MAX_RESTARTS or time.monotonic() >= deadline:
            break
        restarts += 1
    shutil.rmtree(answers_file.parent, ignore_errors=True)
    return ExecutionReport(answers, errors, timed_out, died, restarts, out_of_time, time.monotonic() - start)


def _run_extra(client, source: str, timeout: float):
    """Run code that is not part of the notebook in its kernel (appended for the call, then removed)."""
    cell = nbformat.v4.new_code_cell(source)
    client.nb.cells.append(cell)
    client.timeout = timeout
    try:
        client.execute_cell(cell, len(client.nb.cells) - 1)
    finally:
        client.nb.cells.pop()
    return cell


def _read_answers(client, names, path: Path) -> dict:
    """The answers, as tagged data, from the kernel (empty when the kernel cannot give them)."""
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    source = ("from udk_notebooks.assign.answers import dump_answers as _udk_dump_answers\n"
              f"_udk_dump_answers({sorted(names)!r}, {str(path)!r}, globals())")
    try:
        _run_extra(client, source, ANSWER_TIMEOUT)
        return json.loads(path.read_text()) if path.is_file() else {}
    except (CellTimeoutError, DeadKernelError, ValueError):
        return {}


def load_autograder(path: str | Path) -> dict:
    """Read ``autograder/assignment.json`` (or the folder holding it) written by the build."""
    path = Path(path)
    if path.is_dir():
        path = path / "assignment.json"
    if not path.is_file():
        raise FileNotFoundError(
            f"`autograder` must be an autograder folder from `python -m udk_notebooks.assign build` "
            f"(with assignment.json); {str(path)!r} does not exist"
        )
    spec = json.loads(path.read_text())
    if spec.get("format") != "udk-assign/1":
        raise ValueError(f"`autograder` {str(path)!r} is not an assignment spec (format udk-assign/1)")
    return spec


def spec_of(assignment: Assignment) -> dict:
    """The autograder's JSON spec of a parsed master: everything grading needs."""

    def question(q: Question) -> dict:
        return {"name": q.name, "points": q.points, "all_or_nothing": q.all_or_nothing, "manual": q.manual,
                "answers": list(q.answers),
                "tests": [{"code": t.code, "hidden": t.hidden, "points": t.points, "reads": list(t.reads)}
                          for t in q.tests]}

    given = assignment.given_code()
    return {"format": "udk-assign/1", "name": assignment.name, "given": given, "variants": uses_variants(given),
            "questions": [question(q) for q in assignment.questions]}


def checks_of(spec: dict, hidden: bool) -> dict:
    """The checks file for ``Checker``: public tests only, or every test with ``hidden``."""
    return {"assignment": spec["name"], "hidden_included": hidden,
            "tests": {q["name"]: [{"code": t["code"]} for t in q["tests"] if hidden or not t["hidden"]]
                      for q in spec["questions"] if not q["manual"]}}


def _run_trusted(spec: dict, answers: dict, case_time_limit: float, student_id: str | None = None) -> dict:
    graded = [q for q in spec["questions"] if not q["manual"]]
    job = {"given": spec["given"], "answers": answers, "case_time_limit": case_time_limit, "student_id": student_id,
           "questions": [{"name": q["name"], "answers": q["answers"],
                          "tests": [{"code": t["code"], "hidden": t["hidden"], "reads": t["reads"]}
                                    for t in q["tests"]]} for q in graded]}
    n_cases = sum(len(q["tests"]) for q in graded)
    with tempfile.TemporaryDirectory(prefix="udk-trusted-") as folder:
        job_file, result_file = Path(folder) / "job.json", Path(folder) / "result.json"
        job_file.write_text(json.dumps(job))
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1", MPLBACKEND="Agg")
        try:
            run = subprocess.run([sys.executable, "-I", "-m", "udk_notebooks.assign.trusted", str(job_file),
                                  str(result_file)], cwd=folder, env=env, capture_output=True, text=True,
                                 timeout=120 + case_time_limit * max(n_cases, 1))
        except subprocess.TimeoutExpired:
            return {"setup_error": "the test process ran out of time", "results": {}}
        if run.returncode != 0 or not result_file.is_file():
            tail = (run.stderr or "").strip().splitlines()[-3:]
            return {"setup_error": "the test process failed: " + " | ".join(tail), "results": {}}
        return json.loads(result_file.read_text())


def score(spec: dict, outcome: dict) -> list[dict]:
    """Per-question scores and feedback from the trusted process's results."""
    questions = []
    for q in spec["questions"]:
        if q["manual"]:
            questions.append({"name": q["name"], "score": None, "max_score": q["points"], "manual": True,
                              "tests": []})
            continue
        results = outcome["results"].get(q["name"])
        if results is None:
            reason = outcome.get("setup_error") or "not run"
            results = [{"passed": False, "message": reason} for _ in q["tests"]]
        tests, total = [], 0.0
        for case, result in zip(q["tests"], results):
            total += case["points"] if result["passed"] else 0.0
            tests.append({"hidden": case["hidden"], "points": case["points"], "passed": result["passed"],
                          "message": result["message"]})
        if q["all_or_nothing"] and not all(t["passed"] for t in tests):
            total = 0.0
        questions.append({"name": q["name"], "score": round(total, 10), "max_score": q["points"],
                          "manual": False, "tests": tests})
    return questions


def grade_answers(spec: dict, answers: dict, *, case_time_limit: float = 60.0,
                  student_id: str | None = None) -> tuple[list[dict], str | None]:
    """Test answers given as tagged data (:func:`~.answers.encode`) in the trusted process.

    Returns the per-question results of :func:`score` and the setup error (None when the
    given code ran). ``student_id`` selects the student's variant of a master that has them
    (:mod:`udk_notebooks.assign.variants`).
    """
    outcome = _run_trusted(spec, answers, _positive(case_time_limit, "case_time_limit"), student_id)
    return score(spec, outcome), outcome.get("setup_error")


def grade_notebook(autograder, submission: str | Path, *, time_limit: float = 600.0,
                   cell_time_limit: float = 120.0, case_time_limit: float = 60.0, kernel_name: str = "python3",
                   checks_hidden: bool = False, keep_outputs: str | Path | None = None,
                   student_id: str | None = None) -> dict:
    """Grade one submitted notebook.

    Parameters
    ----------
    autograder : str, Path or dict
        The build's ``autograder`` folder, its ``assignment.json``, or the loaded spec.
    submission : str or Path
        The student's ``.ipynb``.
    time_limit, cell_time_limit : float, optional
        Seconds for the whole notebook and for one cell (:func:`execute_submission`).
    case_time_limit : float, optional
        Seconds for one test case in the trusted process.
    kernel_name : str, optional
    checks_hidden : bool, optional
        Let the notebook's ``grader.check`` cells run every test (used to run
        the solutions at build time); the score does not depend on it.
    keep_outputs : str or Path, optional
        Write the executed notebook (with outputs) there.
    student_id : str, optional
        The student whose variant the hidden tests use, for a master with
        per-student variants (default: the submission's file name without
        ``.ipynb``). Ignored by masters without variants.

    Returns
    -------
    dict
        ``{"submission", "assignment", "score", "max_score", "questions": [{"name",
        "score", "max_score", "tests": [{"hidden", "points", "passed",
        "message"}]}], "execution": {...}}``; a notebook that cannot be read
        scores zero with the reason in ``"error"``.
    """
    spec = autograder if isinstance(autograder, dict) else load_autograder(autograder)
    submission = Path(submission)
    if submission.suffix != ".ipynb" or not submission.is_file():
        raise ValueError(f"`submission` must be an existing .ipynb file; got {str(submission)!r}")
    names = sorted({name for q in spec["questions"] for name in q["answers"]})
    max_score = float(sum(q["points"] for q in spec["questions"]))  # manual questions count too
    auto_max_score = float(sum(q["points"] for q in spec["questions"] if not q["manual"]))
    if student_id is None:
        student_id = submission.stem
    feedback = {"submission": submission.name, "assignment": spec["name"], "max_score": max_score,
                "auto_max_score": auto_max_score}
    try:
        nb = nbformat.read(submission, as_version=4)
    except Exception as exc:  # not JSON, not a notebook: the student scores zero, the reason is kept
        outcome = {"setup_error": f"the submission is not a readable notebook ({type(exc).__name__})", "results": {}}
        questions = score(spec, outcome)
        return {**feedback, "score": 0.0, "questions": questions, "error": outcome["setup_error"], "execution": None}
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    with tempfile.TemporaryDirectory(prefix="udk-grade-") as workdir:
        checks_name = f"{spec['name']}_checks.json"
        (Path(workdir) / checks_name).write_text(json.dumps(checks_of(spec, checks_hidden)))
        report = execute_submission(nb, workdir, names, time_limit=time_limit, cell_time_limit=cell_time_limit,
                                    kernel_name=kernel_name)
    questions, setup_error = grade_answers(spec, report.answers, case_time_limit=case_time_limit,
                                           student_id=student_id if spec.get("variants") else None)
    if keep_outputs is not None:
        nbformat.write(nb, keep_outputs)
    total = sum(q["score"] or 0.0 for q in questions)
    result = {**feedback, "score": round(total, 10), "questions": questions, "execution": report.summary()}
    if setup_error:
        result["error"] = setup_error
    return result


def grade_folder(autograder, submissions: str | Path, out: str | Path, **options) -> Path:
    """Grade one notebook or every ``*.ipynb`` in a folder; write JSON feedback and a CSV.

    Parameters
    ----------
    autograder : str, Path or dict
        As for :func:`grade_notebook`.
    submissions : str or Path
        A notebook, or a folder of them (one per student, named after the student).
    out : str or Path
        Folder for ``<submission>.json`` (per-question feedback) and ``scores.csv``
        (one row per submission: ``student``, one column per question, ``total``,
        ``max_score``, ``status``).
    **options
        Passed to :func:`grade_notebook` (time limits, kernel).

    Returns
    -------
    Path
        The CSV file.
    """
    spec = autograder if isinstance(autograder, dict) else load_autograder(autograder)
    submissions = Path(submissions)
    if submissions.is_dir():
        files = sorted(p for p in submissions.glob("*.ipynb") if not p.name.startswith("."))
    elif submissions.suffix == ".ipynb" and submissions.is_file():
        files = [submissions]
    else:
        raise ValueError(f"`submissions` must be a .ipynb file or a folder of them; got {str(submissions)!r}")
    if not files:
        raise ValueError(f"`submissions` folder {str(submissions)!r} holds no .ipynb file")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    names = [q["name"] for q in spec["questions"]]
    rows = []
    for path in files:
        feedback = grade_notebook(spec, path, **options)
        (out / f"{path.stem}.json").write_text(json.dumps(feedback, indent=1))
        execution = feedback.get("execution") or {}
        status = feedback.get("error") or ("; ".join(
            [f"cell {e['cell']} raised" for e in execution.get("cell_errors", [])]
            + [f"cell {c} timed out" for c in execution.get("timed_out_cells", [])]
            + [f"kernel died in cell {c}" for c in execution.get("kernel_died_in_cells", [])]
            + (["out of time"] if execution.get("out_of_time") else [])) or "ok")
        by_name = {q["name"]: q["score"] for q in feedback["questions"]}
        rows.append([path.stem] + ["" if by_name[n] is None else f"{by_name[n]:g}" for n in names]
                    + [f"{feedback['score']:g}", f"{feedback['max_score']:g}", status])
    table = out / "scores.csv"
    with table.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["student", *names, "total", "max_score", "status"])
        writer.writerows(rows)
    return table
