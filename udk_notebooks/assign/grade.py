"""Grading: run a submission in a fresh kernel, take its answers out, test them elsewhere.

For each submitted notebook :func:`grade_notebook`

1. executes its code cells one by one in a fresh kernel (nbclient) inside a
   bubblewrap sandbox of its own (:mod:`udk_notebooks.assign.sandbox`): no
   network, nothing of the grader's files but the read-only system and
   Python environment, a cleared environment, limits on memory, processes,
   file sizes and wall time, every process killed when it ends. Its working
   folder holds only the notebook and the public checks file (so its
   ``grader.check`` cells run). A cell that raises is recorded and execution
   goes on. When a cell runs past ``cell_time_limit`` or kills its kernel, the
   kernel is shut down and a new one runs the notebook again without the
   offending cells (a kernel that ignored or survived an interrupt could not
   be trusted to report the later cells). All of it fits in ``time_limit``
   per notebook; the cells' outputs are capped;
2. asks that kernel for the values of every answer name, as plain data
   (:mod:`udk_notebooks.assign.answers`), then shuts it down;
3. runs the public and hidden tests in a new Python process
   (:mod:`udk_notebooks.assign.trusted`) in another sandbox, which sees the
   tests and that student's answers (data in, results out) and nothing else.

So a cell that crashes or never ends costs exactly the questions whose
answers it was to define, nothing the submission redefines in its own
kernel reaches the tests, and nothing it does on disk or with processes
outlives its sandbox or reaches the spec, the package or other students.

Without bubblewrap grading refuses to run (:class:`~.sandbox.SandboxUnavailable`,
saying why) unless told ``unsafe=True`` (``--unsafe``): then the kernel and
the tests run as the grader's own processes, which is safe only for
notebooks you trust (your own solutions).
"""

from __future__ import annotations

import csv
import datetime
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

import nbformat

from .format import Assignment, Question
from .sandbox import Limits, SandboxUnavailable, run_sandboxed, sandbox_problem
from .variants import uses_variants

__all__ = ["ExecutionReport", "execute_submission", "find_submissions", "grade_answers", "grade_folder",
           "grade_notebook", "load_autograder", "score"]

OUTPUT_LIMIT = 2_000_000
"""Characters of cell output kept from one run of a notebook (the rest is dropped as it arrives)."""

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


def _capped_client_class():
    """nbclient's client, keeping at most ``output_limit`` characters of outputs of a run.

    Outputs beyond the limit are dropped as they arrive (a cell printing
    gigabytes would otherwise fill the memory of the process collecting them);
    one note says so.
    """
    from nbclient import NotebookClient
    from nbformat.v4 import new_output

    class CappedClient(NotebookClient):
        output_limit = OUTPUT_LIMIT
        _used = 0
        _noted = False

        def output(self, outs, msg, display_id, cell_index):
            content = msg.get("content", {})
            size = len(str(content.get("text", ""))) + sum(len(str(v)) for v in content.get("data", {}).values())
            self._used += size
            if self._used > self.output_limit and msg.get("msg_type") in ("stream", "display_data",
                                                                            "execute_result", "update_display_data"):
                if not self._noted:
                    self._noted = True
                    outs.append(new_output("stream", name="stderr",
                                           text=f"[grader: outputs beyond {self.output_limit} characters dropped]\n"))
                return None
            return super().output(outs, msg, display_id, cell_index)

    return CappedClient


def execute_submission(nb, workdir: str | Path, answer_names, *, time_limit: float = 600.0,
                       cell_time_limit: float = 120.0, kernel_name: str = "python3",
                       output_limit: int = OUTPUT_LIMIT) -> ExecutionReport:
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
    output_limit : int, optional
        Characters of outputs kept (per kernel run); later outputs are dropped.

    Returns
    -------
    ExecutionReport

    Notes
    -----
    This runs the notebook as the calling process's user, in its environment:
    :func:`grade_notebook` calls it inside a sandbox.
    """
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    time_limit = _positive(time_limit, "time_limit")
    cell_time_limit = _positive(cell_time_limit, "cell_time_limit")
    if not (isinstance(output_limit, int) and output_limit > 0):
        raise ValueError(f"`output_limit` must be a positive whole number of characters; got {output_limit!r}")
    client_class = _capped_client_class()
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
        client = client_class(nb, kernel_name=kernel_name, allow_errors=True, shutdown_kernel="immediate",
                              resources={"metadata": {"path": str(workdir)}})
        client.output_limit = output_limit
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


def _job_of(spec: dict, answers: dict, case_time_limit: float, student_id: str | None = None) -> tuple[dict, int]:
    graded = [q for q in spec["questions"] if not q["manual"]]
    job = {"given": spec["given"], "answers": answers, "case_time_limit": case_time_limit, "student_id": student_id,
           "questions": [{"name": q["name"], "answers": q["answers"],
                          "tests": [{"code": t["code"], "hidden": t["hidden"], "reads": t["reads"]}
                                    for t in q["tests"]]} for q in graded]}
    return job, sum(len(q["tests"]) for q in graded)


def _outcome_of(data) -> dict:
    """The trusted process's result, checked to have the form :func:`score` reads."""
    if not (isinstance(data, dict) and isinstance(data.get("results"), dict)):
        raise ValueError("not a result")
    for outcomes in data["results"].values():
        if not (isinstance(outcomes, list) and all(isinstance(o, dict) and isinstance(o.get("passed"), bool)
                                                   and isinstance(o.get("message"), str) for o in outcomes)):
            raise ValueError("not a result")
    return data


def _run_trusted(spec: dict, answers: dict, case_time_limit: float, student_id: str | None = None, *,
                 unsafe: bool = False, limits: Limits | None = None) -> dict:
    """Run the tests on the answers in a fresh process: in a sandbox of its own, or (``unsafe``) as we are."""
    job, n_cases = _job_of(spec, answers, case_time_limit, student_id)
    wall = 120 + case_time_limit * max(n_cases, 1)
    with tempfile.TemporaryDirectory(prefix="udk-trusted-") as folder:
        job_file, result_file = Path(folder) / "job.json", Path(folder) / "result.json"
        job_file.write_text(json.dumps(job))
        if unsafe:
            env = dict(os.environ, OPENBLAS_NUM_THREADS="1", MPLBACKEND="Agg")
            try:
                run = subprocess.run([sys.executable, "-I", "-m", "udk_notebooks.assign.trusted", str(job_file),
                                      str(result_file)], cwd=folder, env=env, capture_output=True, text=True,
                                     timeout=wall)
            except subprocess.TimeoutExpired:
                return {"setup_error": "the test process ran out of time", "results": {}}
            returncode, stderr = run.returncode, run.stderr or ""
            data = result_file.read_text() if result_file.is_file() else ""
        else:
            limits = Limits() if limits is None else limits
            run = run_sandboxed([sys.executable, "-I", "-m", "udk_notebooks.assign.trusted", "job.json",
                                 "--result-fd", "{result_fd}"], {"job.json": job_file},
                                limits=replace(limits, wall_seconds=wall))
            if run.timed_out:
                return {"setup_error": "the test process ran out of time", "results": {}}
            returncode, stderr, data = run.returncode, run.stderr_tail, run.data.decode("utf-8", "replace")
    try:
        return _outcome_of(json.loads(data))
    except ValueError:
        tail = stderr.strip().splitlines()[-3:]
        return {"setup_error": f"the test process failed (exit {returncode}): " + " | ".join(tail), "results": {}}


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


def _report_of(data: dict) -> ExecutionReport:
    """An :class:`ExecutionReport` from the sandbox's JSON (written where the submission ran: checked)."""
    report = data["report"]
    errors = [{"cell": int(e["cell"]), "error": str(e["error"])[:2000]} for e in report["errors"]][:1000]
    return ExecutionReport(answers=dict(data["answers"]), errors=errors,
                           timed_out=[int(c) for c in report["timed_out"]][:1000],
                           died=[int(c) for c in report["died"]][:1000], restarts=int(report["restarts"]),
                           out_of_time=bool(report["out_of_time"]), seconds=float(report["seconds"]))


_RUNNER_BOOT = (
    "import sys, types\n"
    "package = types.ModuleType('udk_notebooks')\n"
    f"package.__path__ = [{str(Path(__file__).resolve().parents[1])!r}]\n"
    "sys.modules['udk_notebooks'] = package\n"
    "sys.modules['rfc3987_syntax'] = None\n"
    "from udk_notebooks.assign.run_submission import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)
"""Starts :mod:`.run_submission` without running ``udk_notebooks/__init__.py``: the runner needs only
``udk_notebooks.assign``, and importing the whole package (sympy, scipy, matplotlib) cost seconds per
submission. The kernel it starts is a process of its own, where the student's imports are the usual ones.
It also keeps ``rfc3987_syntax`` out: jsonschema (under nbformat) imports it, when installed, only to check
IRIs, and it builds a grammar at import that took 4 of the runner's 5 seconds."""


def _checked_answer(tagged):
    """A tagged answer that can be written and read back as JSON, or an "unsupported" stand-in.

    The answers come from where the submission ran: one nested thousands deep,
    malformed or beyond the size limit must cost that answer, not stop the
    grader (:func:`~.answers.checked`).
    """
    from .answers import checked

    try:
        json.loads(json.dumps(tagged))
        return checked(tagged)
    except (ValueError, TypeError, RecursionError):
        return {"t": "unsupported", "v": "data the grader cannot read back"}


def _execute_sandboxed(nb, checks_name: str, checks: dict, names, *, time_limit: float, cell_time_limit: float,
                       kernel_name: str, limits: Limits) -> tuple[ExecutionReport, object, str | None]:
    """Run :mod:`.run_submission` in a sandbox; the report, the executed notebook (or None) and an error."""
    with tempfile.TemporaryDirectory(prefix="udk-grade-") as folder:
        notebook, checks_file = Path(folder) / "submission.ipynb", Path(folder) / checks_name
        nbformat.write(nb, notebook)
        checks_file.write_text(json.dumps(checks))
        run = run_sandboxed(
            [sys.executable, "-I", "-c", _RUNNER_BOOT, "submission.ipynb",
             "--result-fd", "{result_fd}", "--names", json.dumps(list(names)), "--time-limit", repr(time_limit),
             "--cell-time-limit", repr(cell_time_limit), "--kernel", kernel_name],
            {"submission.ipynb": notebook, checks_name: checks_file},
            limits=replace(limits, wall_seconds=time_limit + ANSWER_TIMEOUT + 60))
    empty = ExecutionReport({}, [], [], [], 0, run.timed_out, run.seconds)
    if run.timed_out:
        return empty, None, "the notebook's sandbox ran out of time"
    try:
        data = json.loads(run.data.decode("utf-8", "replace"))
        report = _report_of(data)
        executed = nbformat.reads(data["notebook"], as_version=4)
        nbformat.validate(executed)  # so that writing it for the instructor cannot fail later
    except Exception:  # written where the student ran: any malformed part (inf, a wrong notebook) is theirs
        why = "its result was too large" if run.truncated else f"it ended with status {run.returncode}"
        return empty, None, f"the notebook's sandbox returned no readable result ({why})"
    return report, executed, None


def grade_answers(spec: dict, answers: dict, *, case_time_limit: float = 60.0, student_id: str | None = None,
                  unsafe: bool = False, limits: Limits | None = None) -> tuple[list[dict], str | None]:
    """Test answers given as tagged data (:func:`~.answers.encode`) in the trusted process.

    Returns the per-question results of :func:`score` and the setup error (None when the
    given code ran). ``student_id`` selects the student's variant of a master that has them
    (:mod:`udk_notebooks.assign.variants`). The tests run in a sandbox of their own
    unless ``unsafe`` (see :func:`grade_notebook`).
    """
    outcome = _run_trusted(spec, answers, _positive(case_time_limit, "case_time_limit"), student_id,
                           unsafe=unsafe, limits=limits)
    return score(spec, outcome), outcome.get("setup_error")


def grade_notebook(autograder, submission: str | Path, *, time_limit: float = 600.0,
                   cell_time_limit: float = 120.0, case_time_limit: float = 60.0, kernel_name: str = "python3",
                   checks_hidden: bool = False, keep_outputs: str | Path | None = None, unsafe: bool = False,
                   limits: Limits | None = None, student_id: str | None = None) -> dict:
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
    unsafe : bool, optional
        Run without a sandbox, as the grader's own user and environment: only
        for notebooks you trust. Without it, grading refuses to run when
        bubblewrap is not available.
    limits : Limits, optional
        Memory, processes, file and folder sizes of each sandbox (the wall
        time follows the time limits).
    student_id : str, optional
        The student whose variant the hidden tests use, for a master with
        per-student variants (default: the submission's file name without
        ``.ipynb``). Ignored by masters without variants.

    Returns
    -------
    dict
        ``{"submission", "assignment", "score", "max_score", "questions": [{"name",
        "score", "max_score", "tests": [{"hidden", "points", "passed",
        "message"}]}], "answers": {name: tagged value}, "execution": {...},
        "sandboxed": bool, "manual_points": float}``: ``score`` and
        ``max_score`` count the automatically graded questions, ``manual_points``
        the questions graded by hand (their ``score`` is None). A notebook that
        cannot be read scores zero with the reason in ``"error"``.

    Raises
    ------
    SandboxUnavailable
        Without ``unsafe``, when no sandbox can be made here (the message says why).
    """
    spec = autograder if isinstance(autograder, dict) else load_autograder(autograder)
    submission = Path(submission)
    if submission.suffix.lower() != ".ipynb" or not submission.is_file():
        raise ValueError(f"`submission` must be an existing .ipynb file; got {str(submission)!r}")
    if limits is not None and not isinstance(limits, Limits):
        raise ValueError(f"`limits` must be a udk_notebooks.assign.sandbox.Limits; got {type(limits).__name__}")
    if not unsafe:
        problem = sandbox_problem()
        if problem:
            raise SandboxUnavailable(f"grading refuses to run student code without a sandbox: {problem}. "
                                     "Pass unsafe=True (--unsafe) only for notebooks you trust.")
    time_limit = _positive(time_limit, "time_limit")
    cell_time_limit = _positive(cell_time_limit, "cell_time_limit")
    case_time_limit = _positive(case_time_limit, "case_time_limit")
    names = sorted({name for q in spec["questions"] for name in q["answers"]})
    max_score = float(sum(q["points"] for q in spec["questions"]))  # manual questions count too
    auto_max_score = float(sum(q["points"] for q in spec["questions"] if not q["manual"]))
    if student_id is None:
        student_id = submission.stem
    feedback = {"submission": submission.name, "assignment": spec["name"], "max_score": max_score,
                "auto_max_score": auto_max_score, "manual_points": max_score - auto_max_score, "sandboxed": not unsafe}
    try:
        nb = nbformat.read(submission, as_version=4)
    except Exception as exc:  # not JSON, not a notebook: the student scores zero, the reason is kept
        outcome = {"setup_error": f"the submission is not a readable notebook ({type(exc).__name__})", "results": {}}
        questions = score(spec, outcome)
        return {**feedback, "score": 0.0, "questions": questions, "answers": {}, "error": outcome["setup_error"],
                "execution": None}
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    checks_name = f"{spec['name']}_checks.json"
    error = None
    if unsafe:
        with tempfile.TemporaryDirectory(prefix="udk-grade-") as workdir:
            (Path(workdir) / checks_name).write_text(json.dumps(checks_of(spec, checks_hidden)))
            report = execute_submission(nb, workdir, names, time_limit=time_limit, cell_time_limit=cell_time_limit,
                                        kernel_name=kernel_name)
        executed = nb
    else:
        limits = Limits() if limits is None else limits
        report, executed, error = _execute_sandboxed(nb, checks_name, checks_of(spec, checks_hidden), names,
                                                     time_limit=time_limit, cell_time_limit=cell_time_limit,
                                                     kernel_name=kernel_name, limits=limits)
    answers = {name: _checked_answer(report.answers[name]) for name in names if name in report.answers}
    questions, setup_error = grade_answers(spec, answers, case_time_limit=case_time_limit,
                                           student_id=student_id if spec.get("variants") else None,
                                           unsafe=unsafe, limits=limits)
    if keep_outputs is not None and executed is not None:
        nbformat.write(executed, keep_outputs)
    total = sum(q["score"] or 0.0 for q in questions)
    result = {**feedback, "score": round(total, 10), "questions": questions, "answers": answers,
              "execution": report.summary()}
    if error or setup_error:
        result["error"] = error or setup_error
    return result


def find_submissions(submissions: str | Path, out: str | Path | None = None) -> tuple[dict[str, Path], list[str]]:
    """The notebooks of a submissions folder, walked with its subfolders, and what was skipped.

    Returns
    -------
    found : dict
        Key (the path below the folder without its suffix, ``/``-separated:
        ``alice`` or ``section_a/alice``) to file. ``.ipynb`` is matched in any
        letter case.
    skipped : list of str
        Every other file, hidden file or folder (``.ipynb_checkpoints``), each
        with the reason.
    """
    submissions = Path(submissions)
    if submissions.is_file():
        if submissions.suffix.lower() != ".ipynb":
            raise ValueError(f"`submissions` must be a .ipynb file or a folder of them; got {str(submissions)!r}")
        return {submissions.stem: submissions}, []
    if not submissions.is_dir():
        raise ValueError(f"`submissions` must be a .ipynb file or a folder of them; got {str(submissions)!r}")
    out = Path(out).resolve() if out is not None else None
    found, skipped = {}, []
    for path in sorted(submissions.rglob("*")):
        relative = path.relative_to(submissions)
        if out is not None and (path.resolve() == out or out in path.resolve().parents):
            continue
        if any(part.startswith(".") for part in relative.parts):
            if path.is_file():
                skipped.append(f"{relative.as_posix()}: hidden file or folder")
            continue
        if not path.is_file():
            continue
        if path.suffix.lower() != ".ipynb":
            skipped.append(f"{relative.as_posix()}: not a notebook (.ipynb)")
            continue
        found[relative.with_suffix("").as_posix()] = path
    return found, skipped


def _status(feedback: dict) -> str:
    execution = feedback.get("execution") or {}
    return feedback.get("error") or ("; ".join(
        [f"cell {e['cell']} raised" for e in execution.get("cell_errors", [])]
        + [f"cell {c} timed out" for c in execution.get("timed_out_cells", [])]
        + [f"kernel died in cell {c}" for c in execution.get("kernel_died_in_cells", [])]
        + (["out of time"] if execution.get("out_of_time") else [])) or "ok")


def _manual_answers(path: Path, spec: dict) -> dict[str, list[str]]:
    """The answer cells of the questions graded by hand, as the student left them."""
    manual = {q["name"] for q in spec["questions"] if q["manual"]}
    if not manual:
        return {}
    try:
        nb = nbformat.read(path, as_version=4)
    except Exception:  # an unreadable notebook has no answers to collect; its feedback says why
        return {}
    answers: dict[str, list[str]] = {}
    for cell in nb.cells:
        question = cell.get("metadata", {}).get("udk_question")
        if question in manual:
            answers.setdefault(question, []).append(str(cell.source))
    return answers


def _collect_manual(out: Path, spec: dict, collected: dict[str, dict[str, list[str]]]) -> None:
    """``OUT/manual/<question>.md`` (every student's answer) and a ``<question>.csv`` to fill in with points.

    The answers are kept in ``<question>.json`` (merged across runs like the
    gradebook) and the Markdown file is written again from it; the CSV only
    gains rows for new files, so points already typed in are never lost.
    """
    for q in (q for q in spec["questions"] if q["manual"]):
        folder = out / "manual"
        folder.mkdir(parents=True, exist_ok=True)
        store = folder / f"{q['name']}.json"
        answers = json.loads(store.read_text()) if store.is_file() else {}
        for key, cells in collected.items():
            answers[key] = cells.get(q["name"], [])
        store.write_text(json.dumps(answers, indent=1, sort_keys=True))
        lines = [f"# {spec['name']}, {q['name']} ({q['points']:g} points): the answers to grade by hand", ""]
        for key, cells in sorted(answers.items()):
            lines += [f"## {key}", ""] + (["\n\n".join(cells)] if cells else ["(no answer cell found)"]) + [""]
        (folder / f"{q['name']}.md").write_text("\n".join(lines))
        table = folder / f"{q['name']}.csv"
        known = set()
        if table.is_file():
            with table.open(newline="") as handle:
                known = {row["student"] for row in csv.DictReader(handle)}
        else:
            table.write_text("student,score,comment\n")
        with table.open("a", newline="") as handle:
            csv.writer(handle).writerows([key, "", ""] for key in sorted(collected) if key not in known)


def grade_folder(autograder, submissions: str | Path, out: str | Path, *, workers: int | None = None,
                 roster: str | Path | None = None, **options) -> Path:
    """Grade one notebook or a folder of them (subfolders too), merged into the gradebook of ``out``.

    Parameters
    ----------
    autograder : str, Path or dict
        As for :func:`grade_notebook`.
    submissions : str or Path
        A notebook, or a folder of them (one per student, section subfolders walked).
    out : str or Path
        The output folder. Per submission (key ``name`` or ``section/name``):
        ``<key>.json`` (feedback data), ``<key>.md`` and ``<key>.html``
        (feedback for the student), ``<key>.executed.ipynb`` (the notebook as
        it ran, for the instructor). For all: ``gradebook.json`` (merged with
        earlier runs, see :mod:`.gradebook`), ``scores.csv``, ``grading.log``
        (regrades, duplicate names, skipped files, students not in the roster)
        and for questions graded by hand ``manual/<question>.md`` and ``.csv``.
    workers : int, optional
        Submissions graded at once, each in its own sandboxes (default: the
        number of CPUs).
    roster : str or Path, optional
        A roster CSV (:func:`~.gradebook.read_roster`) naming the student of each file.
    **options
        Passed to :func:`grade_notebook` (time limits, kernel, ``unsafe``, ``limits``).

    Returns
    -------
    Path
        ``scores.csv``.
    """
    from concurrent.futures import ThreadPoolExecutor, as_completed

    from .feedback import write_feedback
    from .gradebook import Gradebook, match_student, read_roster

    spec = autograder if isinstance(autograder, dict) else load_autograder(autograder)
    if workers is None:
        workers = os.cpu_count() or 1
    if not (isinstance(workers, int) and not isinstance(workers, bool) and workers >= 1):
        raise ValueError(f"`workers` must be a whole number of at least 1; got {workers!r}")
    entries = read_roster(roster) if roster is not None else None
    found, skipped = find_submissions(submissions, out)
    if not found:
        raise ValueError(f"`submissions` folder {str(submissions)!r} holds no .ipynb file"
                         + (f" (skipped: {'; '.join(skipped[:5])})" if skipped else ""))
    if not options.get("unsafe"):
        problem = sandbox_problem()
        if problem:  # refuse before grading anything, not once per file
            raise SandboxUnavailable(f"grading refuses to run student code without a sandbox: {problem}. "
                                     "Pass unsafe=True (--unsafe) only for notebooks you trust.")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    book = Gradebook(out, spec)
    for line in skipped:
        book.log(f"skipped {line}")
    stems: dict[str, list[str]] = {}
    for key in found:
        stems.setdefault(key.rsplit("/", 1)[-1], []).append(key)
    for stem, keys in sorted(stems.items()):
        if len(keys) > 1:
            book.log(f"duplicate name {stem!r} in {len(keys)} folders, kept apart as {', '.join(keys)}")

    def one(key: str, path: Path) -> tuple[str, dict, str]:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        executed = out / f"{key}.executed.ipynb"
        executed.parent.mkdir(parents=True, exist_ok=True)
        entry = match_student(path.stem, entries) if entries is not None else None
        student = entry.id if entry is not None and entry.id else None  # the variant of the roster's student
        return key, grade_notebook(spec, path, keep_outputs=executed, student_id=student, **options), digest

    manual_answers = {}
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(one, key, path) for key, path in found.items()]
        for future in as_completed(futures):
            key, feedback, digest = future.result()
            path = found[key]
            entry = match_student(path.stem, entries) if entries is not None else None
            if entries is not None and entry is None:
                book.log(f"no roster student for {key}")
            row = {"file": str(path), "sha256": digest, "graded_at": datetime.datetime.now(
                       datetime.timezone.utc).isoformat(timespec="seconds"),
                   "submitted_at": datetime.datetime.fromtimestamp(path.stat().st_mtime, datetime.timezone.utc)
                   .isoformat(timespec="seconds"),
                   "questions": {q["name"]: q["score"] for q in feedback["questions"]}, "status": _status(feedback),
                   "student_id": entry.id if entry else "", "name": entry.name if entry else "",
                   "login": entry.login if entry else "", "email": entry.email if entry else "",
                   "lms_id": entry.lms_id if entry else "", "section": entry.section if entry else ""}
            book.record(key, row)
            for q in feedback["questions"]:  # points graded by hand before a regrade stay in the feedback
                if q["name"] in book.rows[key].get("manual", {}):
                    q["score"] = book.rows[key]["manual"][q["name"]]
            feedback["score"] = round(sum(q["score"] or 0.0 for q in feedback["questions"]), 10)
            (out / f"{key}.json").write_text(json.dumps(feedback, indent=1))
            write_feedback(feedback, out / key, spec, entry.name if entry and entry.name else None)
            manual_answers[key] = _manual_answers(path, spec)
            book.save()  # after every submission: an interrupted run keeps what it graded
    _collect_manual(out, spec, manual_answers)
    ids = {}
    for key, row in book.rows.items():
        if row.get("student_id"):
            ids.setdefault(row["student_id"], []).append(key)
    for sid, keys in sorted(ids.items()):
        if len(keys) > 1:
            book.log(f"student {sid} has {len(keys)} graded submissions: {', '.join(sorted(keys))}")
    book.save()
    return out / "scores.csv"
