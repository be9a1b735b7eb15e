"""Checks for the exercises of lesson 07, analytical dynamics as an experimental science.

A bead of mass ``m`` on the wire ``k x1 - x2 = 0`` under gravity, with a
nonideal constraint force fixed by the vector ``c`` (Udwadia, Kalaba & Fan
2005, Sec. 4, Eqs. 22-32). Expected answers come from simulations of
``examples.inclined_line`` with the Udwadia-Kalaba solver, never from the
closed form the lesson derives; the student's identification code is run on
fresh synthetic data drawn here with a known ``c``.
"""

from __future__ import annotations

import functools

import numpy as np

from ..core import udwadia_kalaba
from ..examples import inclined_line
from ..simulation import simulate
from ._feedback import AnswerFormError, Feedback, checker, justification, number, predicted, vector, yes_no

__all__ = ["check_1", "check_2", "check_3", "check_4", "check_5"]

GRAVITY = 9.81
_PAPER = {"m": 1.0, "g": GRAVITY, "k": 2.0, "c1": 1.0, "c2": 2.0}


@functools.cache
def _compiled():
    return inclined_line.model().compile()


def _run(params: dict, horizon: float = 1.0, samples: int = 41):
    q0, qd0 = inclined_line.initial_state(speed=1.0, k=params["k"])
    return simulate(_compiled(), (0.0, horizon), q0, qd0, method="DOP853", rtol=1e-11, atol=1e-12,
                    t_eval=np.linspace(0.0, horizon, samples), params=params)


def _tangent(slope: float) -> np.ndarray:
    return np.array([1.0, slope]) / np.hypot(1.0, slope)


@checker("a number: the acceleration along the wire in m/s^2")
def check_1(acceleration_along_wire) -> Feedback:
    """Exercise 1: the bead's acceleration along ``(1, k) / sqrt(1 + k^2)`` in the paper's example.

    Parameters
    ----------
    acceleration_along_wire : float
        Signed acceleration in m/s^2 (``k = 2``, ``c = (1, 2)``, ``m = 1``, ``g = 9.81``).

    Returns
    -------
    Feedback
        Compared with the simulated acceleration projected on the wire.
    """
    value = number(acceleration_along_wire, name="acceleration_along_wire", unit="m/s^2")
    expected = float(_run(_PAPER).qdd[0] @ _tangent(_PAPER["k"]))
    if np.isclose(value, expected, rtol=1e-6, atol=1e-9):
        return Feedback(True, f"The bead accelerates at {expected:.6g} m/s^2 along the wire (downhill).")
    ideal = -GRAVITY * _PAPER["k"] / np.hypot(1.0, _PAPER["k"])
    if np.isclose(value, ideal, rtol=1e-6):
        return Feedback(False, "that is the ideal wire (c = 0): add the tangential part of c, divided by m.")
    if np.isclose(value, -expected, rtol=1e-6):
        return Feedback(False, "the sign: the direction (1, k) points uphill, and the bead goes down.")
    return Feedback(False, "project m x'' = Q + F^L + F^C on the wire's direction: F^L drops out, F^C gives e . c.")


@checker("a 2-vector: (c1, c2) in N")
def check_2(other_c) -> Feedback:
    """Exercise 2: a nonideal force ``c`` other than ``(1, 2)`` with exactly the paper's motion.

    Parameters
    ----------
    other_c : array_like, shape (2,)

    Returns
    -------
    Feedback
        Two simulations (with ``(1, 2)`` and with ``other_c``) must agree.
    """
    c = vector(other_c, name="other_c", shape=(2,))
    if np.allclose(c, [_PAPER["c1"], _PAPER["c2"]], atol=1e-9):
        return Feedback(False, "that is the paper's own c; find a different vector with the same motion.")
    theirs = _run(dict(_PAPER, c1=float(c[0]), c2=float(c[1])))
    paper = _run(_PAPER)
    if np.allclose(theirs.q, paper.q, rtol=1e-9, atol=1e-9):
        return Feedback(True, f"c = {np.round(c, 6)} moves the bead exactly like (1, 2): they differ by "
                              f"{np.round(c - [1.0, 2.0], 6)}, a vector normal to the wire.")
    return Feedback(False, "the motions differ: only the component of c along the wire, (c1 + k c2) / sqrt(1 + k^2), "
                           "shows in the motion, so add a vector normal to the wire, proportional to (k, -1).")


@checker("True or False")
def check_3(one_wire_fixes_c) -> Feedback:
    """Exercise 3: do measurements on one wire alone determine both components of ``c``?

    Parameters
    ----------
    one_wire_fixes_c : bool

    Returns
    -------
    Feedback
        Compared with two simulations whose ``c`` differ along the wire's normal.
    """
    answer = yes_no(one_wire_fixes_c, name="one_wire_fixes_c")
    normal = np.array([_PAPER["k"], -1.0])
    shifted = _run(dict(_PAPER, c1=_PAPER["c1"] + 3 * normal[0], c2=_PAPER["c2"] + 3 * normal[1]))
    indistinguishable = bool(np.allclose(shifted.q, _run(_PAPER).q, rtol=1e-9, atol=1e-9))
    if answer == (not indistinguishable):
        return Feedback(True, "One wire shows only e . c; the normal part of c changes F^L + F^C but not the "
                              "motion. Wires of two different slopes fix both components.")
    return Feedback(False, "try c = (1, 2) and c = (1, 2) + 3 (k, -1) in a simulation: the bead cannot tell them apart.")


def _synthetic(slope: float, c: np.ndarray, noise: float, rng: np.random.Generator, mass: float = 1.0):
    run = _run({"m": mass, "g": GRAVITY, "k": slope, "c1": float(c[0]), "c2": float(c[1])}, horizon=1.5, samples=61)
    return run.t, run.q + noise * rng.standard_normal(run.q.shape)


@checker("a function identify(t, q, k, m, g) returning a float")
def check_4(identify) -> Feedback:
    """Exercise 4 (code): identify the tangential part of ``c`` from a measured run.

    Parameters
    ----------
    identify : callable
        ``identify(t, q, k, m, g) -> float``: ``t`` shape (N,) in s, ``q``
        shape (N, 2) in m (noisy positions of the bead on the wire
        ``k x1 - x2 = 0``), mass ``m`` in kg and ``g`` in m/s^2; returns
        ``e . c`` in N, ``e = (1, k) / sqrt(1 + k^2)``.

    Returns
    -------
    Feedback
        The function is run on noise-free and noisy synthetic data from
        simulations with known ``c`` on three wires, with masses 1, 2.5 and 0.4 kg.
    """
    if not callable(identify):
        raise AnswerFormError(f"`identify` should be a function; got {type(identify).__name__}")
    rng = np.random.default_rng(20050101)
    # masses other than 1 kg, so that an answer that leaves out m (an acceleration, not a force) fails
    cases = [(2.0, np.array([1.0, 2.0]), 0.0, 1e-6, 1.0), (0.5, np.array([-0.7, 1.3]), 0.0, 1e-6, 2.5),
             (-1.0, np.array([2.0, 0.5]), 1e-3, 0.05, 0.4)]
    for slope, c, noise, tolerance, mass in cases:
        t, q = _synthetic(slope, c, noise, rng, mass)
        result = identify(t.copy(), q.copy(), slope, mass, GRAVITY)
        if result is None:  # the notebook's stub still returns its None placeholder
            return Feedback(False, "replace the None placeholder(s) with your answer and run the cell again: "
                                   "`identify` still returns None.")
        estimate = number(result, name="identify(t, q, k, m, g)", unit="N")
        truth = float(_tangent(slope) @ c)
        if abs(estimate - truth) > tolerance:
            what = "noise-free" if noise == 0 else f"noisy (sigma = {noise:g} m)"
            return Feedback(False, f"on {what} data on the wire k = {slope:g} with m = {mass:g} kg your estimate is {estimate:.6g} N, "
                                   f"the truth {truth:.6g} N. Fit s(t) = s0 + v0 t + a t^2 / 2 to s = e . q "
                                   "and use e . c = m a + m g k / sqrt(1 + k^2).")
    return Feedback(True, "Your identification recovers e . c on all three wires, noise-free and noisy.")


@checker("prediction: True or False; reasoning: a sentence")
def check_5(prediction, reasoning) -> Feedback:
    """Exercise 5 (predict and justify): on the horizontal wire, does ``c2`` matter?

    The bead of Sec. 1 on the wire ``k = 0`` (``x2 = 0``), unit mass, gravity
    9.81: compare ``c = (1, 2)`` with ``c = (1, 5)``.

    Parameters
    ----------
    prediction : bool or {"yes", "no"}
        Whether the motion changes.
    reasoning : str
        Why, in a sentence or two.

    Returns
    -------
    Feedback
        Compared with the solver's accelerations for both vectors.
    """
    answer = yes_no(prediction, name="prediction")
    text = justification(reasoning, name="reasoning")
    first = udwadia_kalaba(np.eye(2), [0.0, -9.81], [[0.0, -1.0]], [0.0], C=[1.0, 2.0]).qdd
    second = udwadia_kalaba(np.eye(2), [0.0, -9.81], [[0.0, -1.0]], [0.0], C=[1.0, 5.0]).qdd
    changes = not np.allclose(first, second, rtol=1e-12, atol=1e-12)
    model_answer = ("on the wire x2 = 0 the only virtual displacement is along x1, and c enters the motion only "
                    "through v^T c = c1. The component c2 is normal to the wire, in the range of A^T: F^L absorbs "
                    "it and the motion is the same. An experiment on this wire can never measure c2.")
    return predicted(answer == changes, text, model_answer,
                     "ask which part of c does virtual work on this wire.")
