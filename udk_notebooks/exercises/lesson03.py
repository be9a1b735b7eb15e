"""Checks for the exercises of lesson 03, friction and singular mass matrices.

Expected answers come from simulations with located stick/slip events
(``incline_friction``), the piecewise exact motion, the power theorem's work
bookkeeping, the rank of ``[M; A]`` together with the solver's own verdict,
and Newton's law along a floor for the student's own model. Sources:
encyclopedia article "Udwadia-Kalaba equation" (inclined plane with
friction; singular mass matrices); Udwadia, Kalaba & Fan (2005), Eqs. (10)-(11).
"""

from __future__ import annotations

import functools

import numpy as np

from .. import core
from ..errors import NonUniqueAccelerationError
from ..examples import incline_friction
from ..model import Model
from ..simulation import simulate
from ._feedback import AnswerFormError, Feedback, checker, justification, number, predicted, yes_no

__all__ = ["check_1", "check_2", "check_3", "check_4", "check_5", "check_6"]

GRAVITY = 9.81


@functools.cache
def _incline():
    return incline_friction.model().compile()


def _final_mode(angle_deg: float, mu: float, mu_s: float) -> int:
    """The contact's mode at t = 3 s for a block sent up at 5 m/s: 0 stuck, -1 sliding down."""
    angle = np.radians(angle_deg)
    q0, qd0 = incline_friction.initial_state(speed=5.0, alpha=angle)
    run = simulate(_incline(), (0.0, 3.0), q0, qd0, method="DOP853", rtol=1e-10, atol=1e-12,
                   params={"alpha": angle, "mu": mu, "mu_s": mu_s})
    return int(run.modes[-1, 0])


@checker("a number: the static coefficient mu_s (dimensionless)")
def check_1(mu_s_min) -> Feedback:
    """Exercise 1: the smallest static coefficient that holds the block on a 40 degree incline.

    Parameters
    ----------
    mu_s_min : float
        The threshold ``mu_s`` (kinetic ``mu = 0.3``).

    Returns
    -------
    Feedback
        Two simulations with located stick/slip events, with ``mu_s`` 0.1 %
        above and below the answer, must stick and slide back respectively.
    """
    value = number(mu_s_min, name="mu_s_min")
    if not 0 < value < 10:
        return Feedback(False, "a friction coefficient here is a positive number of order one.")
    holds_above = _final_mode(40.0, 0.3, 1.001 * value) == 0
    slides_below = _final_mode(40.0, 0.3, 0.999 * value) == -1
    if holds_above and slides_below:
        return Feedback(True, f"The block stays put for mu_s >= {value:.6f}; just below, it slides back.")
    if abs(value - 0.3) < 1e-12:
        return Feedback(False, "0.3 is the kinetic coefficient; holding is decided by the static one against the slope.")
    if not holds_above:
        return Feedback(False, f"with mu_s just above {value:g} the block still slides back: compare m g sin(alpha) "
                               "with the most static friction can give, mu_s m g cos(alpha).")
    return Feedback(False, f"with mu_s just below {value:g} the block still sticks: a smaller mu_s would do.")


@checker("a number: the distance in m")
def check_2(stop_distance) -> Feedback:
    """Exercise 2: how far a block sent up a 20 degree incline at 4 m/s travels (``mu = mu_s = 0.25``).

    Parameters
    ----------
    stop_distance : float
        Distance along the slope in metres.

    Returns
    -------
    Feedback
        Compared with the exact piecewise motion at the stopping time
        (``incline_friction.exact_state``).
    """
    value = number(stop_distance, name="stop_distance", unit="m")
    params = {"alpha": np.radians(20.0), "mu": 0.25, "mu_s": 0.25}
    t_stop = incline_friction.stop_time(4.0, **params)
    q_stop, _ = incline_friction.exact_state([t_stop], speed=4.0, **params)
    reference = float(np.hypot(*q_stop[0]))
    if abs(value - reference) <= 1e-6 * reference:
        return Feedback(True, f"The block stops after {reference:.6f} m, at t = {t_stop:.4f} s.")
    frictionless = 4.0**2 / (2 * GRAVITY * np.sin(params["alpha"]))
    if abs(value - frictionless) <= 1e-3 * frictionless:
        return Feedback(False, "that is how far it would go without friction; friction adds mu g cos(alpha) to the deceleration.")
    if abs(value - reference) < 1e-2 * reference:
        return Feedback(False, "close; give more digits (compute it rather than rounding).")
    return Feedback(False, "with the constant deceleration a = g (sin alpha + mu cos alpha), the block covers v0^2 / (2 a).")


@checker("a number: the work in J")
def check_3(friction_work) -> Feedback:
    """Exercise 3: the work of friction in the first 2.5 s on a 35 degree incline (``mu = mu_s = 0.2``, 4 m/s up).

    Parameters
    ----------
    friction_work : float
        Work of the friction force in joules (negative).

    Returns
    -------
    Feedback
        Compared with the work of ``F^C`` that a simulation integrates from
        its power (``Trajectory.work``).
    """
    value = number(friction_work, name="friction_work", unit="J")
    params = {"alpha": np.radians(35.0), "mu": 0.2, "mu_s": 0.2}
    q0, qd0 = incline_friction.initial_state(speed=4.0, alpha=params["alpha"])
    t = np.linspace(0.0, 2.5, 2001)
    run = simulate(_incline(), (0.0, 2.5), q0, qd0, method="DOP853", rtol=1e-11, atol=1e-12, t_eval=t, params=params)
    simulated = float(run.work()["nonideal"][-1])
    if abs(value - simulated) <= 1e-5 * abs(simulated):
        return Feedback(True, f"Friction does {simulated:.6f} J of work in 2.5 s: mu m g cos(alpha) times the whole path, up and back down.")
    if value > 0:
        return Feedback(False, "friction always opposes the sliding, so its work is negative.")
    t_stop = incline_friction.stop_time(4.0, **params)
    up_only = -params["mu"] * GRAVITY * np.cos(params["alpha"]) * float(np.hypot(*incline_friction.exact_state([t_stop], speed=4.0, **params)[0][0]))
    if abs(value - up_only) <= 1e-3 * abs(up_only):
        return Feedback(False, "that is the work on the way up only; after the stop the block slides back and friction keeps working.")
    return Feedback(False, "the work is -mu m g cos(alpha) times the total path length: up to the stop, then back down until 2.5 s.")


_UNIQUENESS = {
    "unique_a": (np.diag([1.0, 0.0]), np.array([[1.0, -1.0]])),
    "unique_b": (np.diag([1.0, 0.0, 0.0]), np.array([[0.0, 1.0, 1.0]])),
    "unique_c": (np.zeros((2, 2)), np.eye(2)),
}


@checker("three answers, each True or False")
def check_4(unique_a, unique_b, unique_c) -> Feedback:
    """Exercise 4: are the accelerations unique for three systems with a singular mass matrix?

    Parameters
    ----------
    unique_a, unique_b, unique_c : bool or {"yes", "no"}

    Returns
    -------
    Feedback
        Decided by the rank of ``[M; A]`` and confirmed by whether
        :func:`udk_notebooks.udwadia_kalaba` solves the system.
    """
    answers = {"unique_a": unique_a, "unique_b": unique_b, "unique_c": unique_c}
    wrong = []
    for name, (mass, rows) in _UNIQUENESS.items():
        answer = yes_no(answers[name], name=name)
        by_rank = bool(np.linalg.matrix_rank(np.vstack([mass, rows])) == mass.shape[1])
        try:
            core.udwadia_kalaba(mass, np.ones(mass.shape[0]), rows, np.zeros(rows.shape[0]))
            solved = True
        except NonUniqueAccelerationError:
            solved = False
        if by_rank != solved:  # pragma: no cover - the two routes agree
            raise RuntimeError(f"rank test and solver disagree for {name}")
        if answer != by_rank:
            wrong.append(name)
    if wrong:
        return Feedback(False, f"look again at {', '.join(wrong)}: the accelerations are unique exactly when [M; A] "
                               "has full column rank, i.e. no v != 0 has both M v = 0 and A v = 0.")
    return Feedback(True, "(a) and (c) are determined, (b) is not: v = (0, 1, -1) has M v = 0 and A v = 0.")


FLOOR = {"m": 2.0, "g": GRAVITY, "F": 10.0, "mu": 0.3}


@checker("a udk.Model with coordinates (x, y)")
def check_5(floor_model) -> Feedback:
    """Exercise 5 (code): a block pushed along a rough floor, as a :class:`udk_notebooks.Model`.

    The block (mass 2 kg, gravity 9.81 along ``-y``) must stay on ``y = 0``, a
    horizontal force of 10 N pushes it along ``+x``, and the floor has
    Coulomb friction ``mu = 0.3`` on the sliding velocity ``x'``.

    Parameters
    ----------
    floor_model : Model
        Coordinates ``(x, y)`` in that order.

    Returns
    -------
    Feedback
        The model's accelerations and normal force while sliding forwards
        and backwards are compared with Newton's law along the floor,
        ``m x'' = F - mu m g sgn(x')``, and ``F^L = (0, m g)``.
    """
    if not isinstance(floor_model, Model):
        raise AnswerFormError(f"`floor_model` should be a udk.Model (udk.Model([x, y], ...)); got {floor_model!r}")
    if floor_model.n != 2:
        return Feedback(False, f"the model has {floor_model.n} coordinates; use the two coordinates x and y.")
    if floor_model.A.shape[0] != 1:
        return Feedback(False, f"the model has {floor_model.A.shape[0]} constraint rows; the floor y = 0 is one holonomic constraint.")
    if len(floor_model.friction) != 1:
        return Feedback(False, "add the rough contact: friction=[udk.CoulombFriction(sliding_velocity=x.diff(t), coefficient=mu)].")
    compiled = floor_model.compile()
    m, g, force, mu = FLOOR["m"], FLOOR["g"], FLOOR["F"], FLOOR["mu"]
    for speed in (1.5, -1.5):
        motion = compiled.motion(0.0, [0.0, 0.0], [speed, 0.0])
        expected = np.array([(force - mu * m * g * np.sign(speed)) / m, 0.0])
        if not np.allclose(motion.ideal, [0.0, m * g], rtol=1e-9, atol=1e-9):
            return Feedback(False, f"the normal force F^L is {np.round(motion.ideal, 4)}; it should hold the block's "
                                   "weight: check the mass, gravity and the constraint y = 0.")
        if not np.allclose(motion.qdd, expected, rtol=1e-9, atol=1e-9):
            direction = "forwards" if speed > 0 else "backwards"
            return Feedback(False, f"sliding {direction}, your model gives q'' = {np.round(motion.qdd, 4)}. "
                                   "Check the pushing force (forces=[F, 0]) and the friction coefficient.")
    return Feedback(True, "Your model slides forwards and backwards exactly as m x'' = F - mu m g sgn(x') says, "
                          "and its normal force carries the weight m g.")


@checker("prediction: True or False; reasoning: a sentence")
def check_6(prediction, reasoning) -> Feedback:
    """Exercise 6 (predict and justify): unique accelerations with a massless coordinate?

    ``M = diag(2, 0)`` kg, one constraint row ``q1'' + q2'' = 0``, ``Q = (1, 0)`` N.

    Parameters
    ----------
    prediction : bool or {"yes", "no"}
        Whether the accelerations are unique.
    reasoning : str
        Why, in a sentence or two.

    Returns
    -------
    Feedback
        Compared with the rank of ``[M; A]`` and with the solver, which
        refuses non-unique accelerations.
    """
    answer = yes_no(prediction, name="prediction")
    text = justification(reasoning, name="reasoning")
    M, A = np.diag([2.0, 0.0]), np.array([[1.0, 1.0]])
    unique = bool(np.linalg.matrix_rank(np.vstack([M, A])) == 2)
    try:
        core.udwadia_kalaba(M, [1.0, 0.0], A, [0.0])
    except NonUniqueAccelerationError:
        solver_unique = False
    else:
        solver_unique = True
    if solver_unique != unique:  # pragma: no cover - two routes to the same fact must agree
        raise RuntimeError("the rank test and the solver disagree")
    model_answer = ("the second coordinate has no mass, but the row ties it to the first: [M; A] = [[2, 0], [0, 0], "
                    "[1, 1]] has full column rank 2, so M + A^+ A is positive definite and q'' = (0.5, -0.5) m/s^2 "
                    "is unique. A massless part is harmless when a constraint carries it.")
    return predicted(answer == unique, text, model_answer,
                     "a singular M alone does not decide; the constraints may fix the massless direction.")
