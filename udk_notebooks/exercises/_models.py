"""Comparing a student's :class:`udk_notebooks.Model` with a reference model of the same system.

A model is judged by what it does, not by how it is written: the number of
constraint rows of each kind, the constraints' residuals at states the true
motion passes through, the accelerations there, and the accelerations under
random *test forces*. The last probe is what tells two constraint sets apart
that agree on the free motion: a particle on a circle with and without the
law of areas moves alike when no force acts along the circle, but not when
one does (issue 19: a check must never accept a model that leaves a
constraint out).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..core import udwadia_kalaba
from ..model import Model

__all__ = ["model_disagreement"]


def _rows(model: Model) -> str:
    return f"{model.n_holonomic} holonomic and {model.n_nonholonomic} nonholonomic"


def model_disagreement(student: Model, reference: Model, states: Sequence[tuple[np.ndarray, np.ndarray]], *,
                       probes: int = 3, seed: int = 0, rtol: float = 1e-8) -> str | None:
    """The first way in which ``student`` moves differently from ``reference``, or None.

    Parameters
    ----------
    student, reference : Model
        With the same coordinates in the same order and every parameter given a value.
    states : sequence of (q, qd), each of shape (n,)
        States that satisfy the reference's constraints (the true motion passes through them).
    probes : int
        Random test forces applied at each state, on top of each model's own ``Q``.
    seed : int
        Seed of the test forces, so that a verdict does not change between runs.
    rtol : float
        Relative tolerance of the comparisons, against the size of the reference's accelerations.

    Returns
    -------
    str or None
        A sentence for the student (what differs, and where), or None when the
        two models agree on every probe, in their accelerations and in their
        constraint forces ``M q'' - Q``.
    """
    if student.n != reference.n:
        return f"the model has {student.n} coordinates; the system needs {reference.n}."
    if (student.n_holonomic, student.n_nonholonomic) != (reference.n_holonomic, reference.n_nonholonomic):
        return (f"the model has {_rows(student)} constraint rows; the system has {_rows(reference)} "
                "(a constraint left out or written at the wrong level).")
    mine, theirs = student.compile(), reference.compile()
    p_mine, p_theirs = mine.parameters(), theirs.parameters()
    rng = np.random.default_rng(seed)
    for q, qd in states:
        q, qd = np.asarray(q, dtype=float), np.asarray(qd, dtype=float)
        phi, velocity = mine.residuals(0.0, q, qd, p_mine)
        scale = 1.0 + np.abs(q).max() + np.abs(qd).max()
        if np.abs(phi).max(initial=0.0) > 1e-8 * scale**2 or np.abs(velocity).max(initial=0.0) > 1e-8 * scale**3:
            return (f"at q = {np.round(q, 4)}, q' = {np.round(qd, 4)} the true motion passes, but your constraints "
                    "do not hold there: check their form and the parameter values.")
        M1, Q1, A1, b1, C1 = mine.evaluate(0.0, q, qd, p_mine)
        M2, Q2, A2, b2, C2 = theirs.evaluate(0.0, q, qd, p_theirs)
        size = 1.0 + np.abs(np.linalg.solve(M2, Q2)).max()
        for k in range(probes + 1):
            force = np.zeros(reference.n) if k == 0 else rng.standard_normal(reference.n) * size * np.abs(np.diag(M2)).max()
            motion_mine = udwadia_kalaba(M1, Q1 + force, A1, b1, C=C1)
            motion_theirs = udwadia_kalaba(M2, Q2 + force, A2, b2, C=C2)
            got, want = motion_mine.qdd, motion_theirs.qdd
            pushed = "" if k == 0 else " when a test force pushes the system"
            if not np.allclose(got, want, rtol=rtol, atol=rtol * size):
                return (f"at q = {np.round(q, 4)}, q' = {np.round(qd, 4)}{pushed}, your model accelerates with "
                        f"{np.round(got, 4)}, the system with {np.round(want, 4)}.")
            # as many constraints as coordinates fix q'' whatever M and Q are: then only the constraint
            # force M q'' - Q tells a wrong mass or a stray impressed force (gravity on a 'free' particle)
            reaction_mine = motion_mine.ideal + motion_mine.nonideal
            reaction_theirs = motion_theirs.ideal + motion_theirs.nonideal
            force_scale = size * np.abs(np.diag(M2)).max()
            if not np.allclose(reaction_mine, reaction_theirs, rtol=rtol, atol=rtol * force_scale):
                return (f"at q = {np.round(q, 4)}, q' = {np.round(qd, 4)}{pushed} your model moves as the system "
                        f"does, but its constraint force is {np.round(reaction_mine, 4)} N instead of "
                        f"{np.round(reaction_theirs, 4)} N: check the masses and the impressed forces.")
    return None
