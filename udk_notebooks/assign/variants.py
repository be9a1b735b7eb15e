"""Per-student variants: a problem set's numbers drawn from a seed derived from the student's id.

A master's given code names the student and draws its parameters::

    STUDENT_ID = "your id"   # your login, as your submission is filed: your numbers depend on it
    from udk_notebooks.assign import Variant
    variant = Variant("ps3_incline_friction", STUDENT_ID)
    mu = variant.uniform(0.15, 0.3, decimals=2)

Every student answers the same questions about their own masses, slopes or
gains. The grader knows whose submission it grades, so it runs the given code
with that student's id written in (:func:`with_student_id`) before the hidden
tests: answers computed for someone else's numbers lose their points. The
build runs the solutions for a sample of ids and fails unless each variant
scores full marks.
"""

from __future__ import annotations

import hashlib
import re

import numpy as np

__all__ = ["PLACEHOLDER_ID", "STUDENT_ID_NAME", "Variant", "uses_variants", "with_student_id"]

STUDENT_ID_NAME = "STUDENT_ID"
"""The variable of the given code that holds the student's id."""

PLACEHOLDER_ID = "your id"
"""The id of the published student version: its numbers are an example until the student writes theirs."""

_ASSIGNMENT_LINE = re.compile(rf"^{STUDENT_ID_NAME}\s*=.*$", re.MULTILINE)


class Variant:
    """Random numbers of one student's variant of one assignment.

    The seed is the SHA-256 of ``"<assignment>:<student id>"``, so the same
    student gets the same numbers on every machine, and two assignments give a
    student unrelated numbers. Draws come in the order the given code makes
    them: add new draws after the old ones to keep earlier numbers.

    Parameters
    ----------
    assignment : str
        The assignment's name (its ``ASSIGNMENT CONFIG`` name).
    student_id : str
        The student's id, as the grader files the submission (surrounding
        spaces are ignored).
    """

    def __init__(self, assignment: str, student_id: str):
        if not isinstance(assignment, str) or not assignment.strip():
            raise ValueError(f"`assignment` must be the assignment's name; got {assignment!r}")
        if not isinstance(student_id, str) or not student_id.strip():
            raise ValueError(
                f"`student_id` must be your id as a string, e.g. {STUDENT_ID_NAME} = \"ada\"; got {student_id!r}"
            )
        self.assignment = assignment.strip()
        self.student_id = student_id.strip()
        digest = hashlib.sha256(f"{self.assignment}:{self.student_id}".encode()).digest()
        self._rng = np.random.default_rng(int.from_bytes(digest[:16], "big"))
        if self.student_id == PLACEHOLDER_ID:
            print(f"Note: {STUDENT_ID_NAME} is still {PLACEHOLDER_ID!r}: these are example numbers. "
                  "Write your id there; grading uses the numbers of your id.")

    def uniform(self, low: float, high: float, *, decimals: int | None = None) -> float:
        """A number drawn uniformly from ``[low, high]``, rounded to ``decimals`` places if given."""
        low, high = float(low), float(high)
        if not (np.isfinite(low) and np.isfinite(high) and low < high):
            raise ValueError(f"`low` and `high` must be finite with low < high; got {low!r}, {high!r}")
        value = float(self._rng.uniform(low, high))
        return value if decimals is None else round(value, int(decimals))

    def choice(self, options):
        """One of ``options`` (a non-empty sequence), drawn uniformly."""
        options = list(options)
        if not options:
            raise ValueError("`options` must hold at least one choice")
        return options[int(self._rng.integers(len(options)))]


def uses_variants(given_code: list[str]) -> bool:
    """Whether a master's given code assigns :data:`STUDENT_ID_NAME` (at the start of a line)."""
    return any(_ASSIGNMENT_LINE.search(source) for source in given_code)


def with_student_id(source: str, student_id: str) -> str:
    """``source`` with its ``STUDENT_ID = ...`` line(s) replaced by the given id.

    Used by the grader (on the master's given code, before the hidden tests)
    and by the build (on the solutions, for each sampled id).
    """
    if not isinstance(student_id, str) or not student_id.strip() or "\n" in student_id:
        raise ValueError(f"`student_id` must be a one-line, non-empty string; got {student_id!r}")
    return _ASSIGNMENT_LINE.sub(lambda _: f"{STUDENT_ID_NAME} = {student_id.strip()!r}", source)
