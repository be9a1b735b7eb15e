"""Does a problem set discriminate? Wrong submissions generated from the solutions, graded, bounded.

"The solutions score full marks" says a problem set accepts right answers;
it says nothing about wrong ones. The build therefore also grades
submissions that are wrong on purpose, made from the solutions' own answers
(:func:`wrong_submissions`):

* the untouched student version (every answer still ``...``);
* zeros of the right shape for every numeric answer (``False`` for booleans);
* the solutions with one answer perturbed by 10 % (a number times 1.1; the
  entries of an array times 1.1 and 0.9 in a checkerboard, so that no answer
  survives as a mere rescaling of its rows or columns; a boolean flipped);
* the solutions with one answer in a wrong shape (a leading axis of length one,
  the shape that passes a careless test by broadcasting);
* the master's own typical wrong answers, listed in its ``ASSIGNMENT CONFIG``
  (otter-grader >= 7 rejects the key; the otter export leaves it out)::

      udk:
        wrong_answers:
          - label: a diverged RK4 run
            code: |
              rk4_alpha, rk4_beta, rk4_step = 0.0, 0.0, 5.0

  ``code`` runs after the given code with the solutions' answers defined and
  may change any of them; an optional ``points`` states the score the
  submission may reach (default: its honest share, below).

  ``open_answers: [name, ...]`` lists answers that a whole range of values
  answers rightly (a gain "that keeps the drift below a bound"): they are not
  perturbed; their typical wrong values belong in ``wrong_answers``.

Each one may score at most its **honest share**: the points of the tests that
read none of the answers it got wrong, counting only the tests of the question
that asks for each answer (a later question that reads an earlier answer may
lose points as well: that is never held against the problem set). A value that
a change leaves equal (an answer that is zero, a zero answer among the
zeros) is not counted as wrong. :func:`check_discrimination` grades them all in
one trusted process and returns the rows that scored more than their share.
"""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .answers import Unsupported, decode, encode

__all__ = ["PERTURBATION", "WrongSubmission", "check_discrimination", "honest_share", "wrong_submissions"]

PERTURBATION = 0.1
"""Relative size of the perturbation of each answer."""

_SAME_ATOL = 1e-12
"""Changes of an answer no larger than this (absolute, in its own units) leave it equal: not a wrong answer."""


@dataclass(frozen=True)
class WrongSubmission:
    """A generated wrong submission.

    Attributes
    ----------
    label : str
        What is wrong, e.g. ``"V perturbed by 10 %"``.
    answers : dict
        Answer name to value (plain data), every answer of the assignment.
    wrong : tuple of str
        The answers that differ from the solutions'.
    points : float or None
        The score it may reach, when the master states it; otherwise the honest share.
    """

    label: str
    answers: dict
    wrong: tuple[str, ...]
    points: float | None = None
    notes: tuple[str, ...] = field(default=())


def _numeric(value) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return True
    if isinstance(value, (int, float, np.integer, np.floating)):
        return True
    return isinstance(value, np.ndarray) and value.dtype.kind in "biuf"


def _same(a, b) -> bool:
    """Equal as answers: same type family, same shape, values within :data:`_SAME_ATOL`."""
    if isinstance(a, Unsupported) or isinstance(b, Unsupported) or a is Ellipsis or b is Ellipsis:
        return a is b
    if not (_numeric(a) and _numeric(b)):
        return a == b
    if np.shape(a) != np.shape(b):
        return False
    a_, b_ = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return bool(np.all((a_ == b_) | (np.abs(a_ - b_) <= _SAME_ATOL)))


def _perturbed(value):
    """``value`` perturbed by :data:`PERTURBATION` (module docstring); booleans flipped; None for other kinds."""
    if isinstance(value, (bool, np.bool_)):
        return not bool(value)
    if isinstance(value, np.ndarray) and value.dtype.kind == "b":
        return ~value
    if not _numeric(value):
        return None
    array = np.asarray(value, dtype=float)
    if array.ndim == 0:
        return float(array) * (1.0 + PERTURBATION)
    # A checkerboard of 1.1 and 0.9: not a scaling of rows or of columns alone, which a test may rightly accept.
    signs = 1.0 - 2.0 * (np.indices(array.shape).sum(axis=0) % 2)
    return array * (1.0 + PERTURBATION * signs)


def _zero(value):
    if isinstance(value, (bool, np.bool_)):
        return False
    if isinstance(value, np.ndarray) and value.dtype.kind == "b":
        return np.zeros_like(value)
    if not _numeric(value):
        return None
    return 0.0 if np.ndim(value) == 0 else np.zeros(np.shape(value))


def _wrong_shape(value):
    if not _numeric(value):
        return None
    return np.asarray(value)[np.newaxis, ...]


def _variant(label: str, solution: dict, changes: dict, points=None) -> WrongSubmission:
    answers = {**solution, **changes}
    wrong = tuple(sorted(name for name in changes if not _same(changes[name], solution.get(name))))
    return WrongSubmission(label, answers, wrong, points)


def wrong_submissions(solution: dict, given: list[str], config: dict | None = None) -> list[WrongSubmission]:
    """The generated wrong submissions (module docstring) for the solutions' answers.

    Parameters
    ----------
    solution : dict
        Answer name to the solutions' value (plain data, decoded).
    given : list of str
        The master's given code, run before a typical wrong answer's ``code``.
    config : dict, optional
        The master's ``udk`` config (``wrong_answers``).

    Returns
    -------
    list of WrongSubmission
    """
    subs = [_variant("untouched student version", solution, dict.fromkeys(solution, Ellipsis))]
    zeros = {name: _zero(value) for name, value in solution.items()}
    subs.append(_variant("zeros of the right shape", solution,
                         {name: value for name, value in zeros.items() if value is not None}))
    open_answers = set((config or {}).get("open_answers", []) or [])
    for name, value in sorted(solution.items()):
        if name in open_answers:  # any value of a range earns the points: 10 % off is still right
            shape = _wrong_shape(value)
            if shape is not None:
                subs.append(_variant(f"`{name}` with a leading axis of length 1", solution, {name: shape}))
            continue
        flip = isinstance(value, (bool, np.bool_)) or (isinstance(value, np.ndarray) and value.dtype.kind == "b")
        perturbed = f"`{name}` flipped" if flip else f"`{name}` perturbed by {PERTURBATION:.0%}"
        for label, change in ((perturbed, _perturbed(value)),
                              (f"`{name}` with a leading axis of length 1", _wrong_shape(value))):
            if change is not None and not _same(change, value):
                subs.append(_variant(label, solution, {name: change}))
    for number, entry in enumerate((config or {}).get("wrong_answers", []) or []):
        subs.append(_typical(number, entry, solution, given))
    return subs


def _typical(number: int, entry, solution: dict, given: list[str]) -> WrongSubmission:
    from .format import AssignmentFormatError, python_source

    where = f"udk.wrong_answers[{number}]"
    if not isinstance(entry, dict) or not isinstance(entry.get("code"), str):
        raise AssignmentFormatError(f"{where} must be a mapping with `code: ...` (and optional `label`, `points`)")
    namespace: dict = {"__name__": "__main__"}
    with contextlib.redirect_stdout(io.StringIO()):  # the given code may print; the build's output stays short
        for source in given:
            exec(compile(python_source(source), "<given>", "exec"), namespace)
        namespace.update({name: _copy(value) for name, value in solution.items()})
        try:
            exec(compile(entry["code"], f"<{where}>", "exec"), namespace)
        except Exception as exc:  # the master's own code: say which entry, and what it can use
            raise AssignmentFormatError(
                f"{where}: its code raised {type(exc).__name__}: {exc} (it sees the given code's names and the "
                "answers, not the solutions' other variables)"
            ) from None
    changes = {name: decode(encode(namespace[name])) for name in solution if name in namespace}
    changes = {name: value for name, value in changes.items() if not _same(value, solution[name])}
    if not changes:
        raise AssignmentFormatError(f"{where}: its code changes no answer")
    points = entry.get("points")
    if points is not None and not (isinstance(points, (int, float)) and points >= 0):
        raise AssignmentFormatError(f"{where}: `points` must be a number >= 0; got {points!r}")
    return _variant(str(entry.get("label", f"typical wrong answer {number + 1}")), solution, changes, points)


def _copy(value):
    return value.copy() if isinstance(value, np.ndarray) else value


def honest_share(spec: dict, owners: dict, wrong) -> float:
    """Points of the tests that read none of the ``wrong`` answers, within each answer's owner question.

    Parameters
    ----------
    spec : dict
        The autograder spec (:func:`~.grade.spec_of`).
    owners : dict
        Answer name to the name of the question that asks for it.
    wrong : iterable of str
        The answers that are wrong.
    """
    wrong = set(wrong)
    total = 0.0
    for q in spec["questions"]:
        if q["manual"]:
            continue
        hit = [set(t["reads"]) & {name for name in wrong if owners.get(name) == q["name"]} for t in q["tests"]]
        if q["all_or_nothing"] and any(hit):
            continue
        total += sum(t["points"] for t, h in zip(q["tests"], hit) if not h)
    return total


def check_discrimination(spec: dict, owners: dict, subs: list[WrongSubmission], *,
                         case_time_limit: float = 60.0, student_id: str | None = None) -> list[dict]:
    """Grade every wrong submission and compare its score with what it may reach.

    All submissions are graded in one trusted process (the answers are the
    instructor's own, generated here; nothing of a student's runs).

    Returns
    -------
    list of dict
        One row per submission: ``label``, ``wrong`` (answer names), ``score``,
        ``allowed`` and ``ok`` (``score <= allowed``).
    """
    graded = [q for q in spec["questions"] if not q["manual"]]
    questions = [{"name": q["name"], "answers": q["answers"],
                  "tests": [{"code": t["code"], "hidden": t["hidden"], "reads": t["reads"]} for t in q["tests"]]}
                 for q in graded]
    jobs = [{"given": spec["given"], "questions": questions, "case_time_limit": case_time_limit,
             "student_id": student_id if spec.get("variants") else None,
             "answers": {name: encode(value) for name, value in sub.answers.items()}} for sub in subs]
    outcomes = _run_batch(jobs, timeout=120 + case_time_limit * len(jobs) * sum(len(q["tests"]) for q in graded))
    from .grade import score

    rows = []
    for sub, outcome in zip(subs, outcomes):
        got = sum(q["score"] or 0.0 for q in score(spec, outcome))
        allowed = honest_share(spec, owners, sub.wrong) if sub.points is None else float(sub.points)
        rows.append({"label": sub.label, "wrong": list(sub.wrong), "score": round(got, 10), "allowed": allowed,
                     "ok": got <= allowed + 1e-9})
    return rows


def _run_batch(jobs: list[dict], timeout: float) -> list[dict]:
    with tempfile.TemporaryDirectory(prefix="udk-discriminate-") as folder:
        job_file, result_file = Path(folder) / "jobs.json", Path(folder) / "results.json"
        job_file.write_text(json.dumps(jobs))
        run = subprocess.run([sys.executable, "-I", "-m", "udk_notebooks.assign.discriminate", str(job_file),
                              str(result_file)], cwd=folder, capture_output=True, text=True, timeout=timeout,
                             env={"OPENBLAS_NUM_THREADS": "1", "MPLBACKEND": "Agg",
                                  "PATH": "/usr/bin:/bin", "HOME": folder})
        if run.returncode != 0 or not result_file.is_file():
            tail = " | ".join((run.stderr or "").strip().splitlines()[-3:])
            raise RuntimeError(f"the discrimination check's test process failed: {tail}")
        return json.loads(result_file.read_text())


def main(argv: list[str] | None = None) -> int:
    """``python -I -m udk_notebooks.assign.discriminate JOBS.json RESULTS.json``: run_job on each job."""
    from .trusted import run_job

    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        print("usage: python -I -m udk_notebooks.assign.discriminate JOBS.json RESULTS.json", file=sys.stderr)
        return 2
    jobs = json.loads(Path(argv[0]).read_text())
    Path(argv[1]).write_text(json.dumps([run_job(job) for job in jobs]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
