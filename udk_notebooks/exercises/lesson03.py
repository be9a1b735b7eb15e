"""Checks for the exercises of lesson 03, friction and singular mass matrices.

Expected answers come from simulations with located stick/slip events
(``incline_friction``), the piecewise exact motion, the power theorem's work
bookkeeping, the rank of ``[M; A]`` together with the solver's own verdict,
Newton's law along a floor for the student's own model, and the joint solve of
normal force and friction for Painlevé's rod (``examples.painleve_rod``).
Sources: encyclopedia article "Udwadia-Kalaba equation" (inclined plane with
friction; singular mass matrices); Udwadia, Kalaba & Fan (2005), Eqs. (10)-(11);
P. Painlevé, "Sur les lois du frottement de glissement" (1895).
"""

from __future__ import annotations

import functools

import numpy as np

from .. import core
from ..errors import NonUniqueAccelerationError
from ..examples import incline_friction, painleve_rod
from ..model import Model
from ..simulation import simulate
from ._feedback import AnswerFormError, Feedback, checker, justification, number, predicted, yes_no

__all__ = ["check_1", "check_2", "check_3", "check_4", "check_5", "check_6", "check_7"]

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


ROD = {"theta_deg": 50.0, "x_rate": -1.0, "mu": 0.5}
"""Exercise 6: the rod of ``examples.painleve_rod`` (m = 1 kg, L = 1 m) at 50 degrees, its end sliding left at 1 m/s."""


def _close(value: float, reference: float, rtol: float) -> bool:
    return abs(value - reference) <= rtol * max(abs(reference), 1e-12)


def _rod_hint(x_accel: float, normal: float) -> str | None:
    """A hint for a wrong ``(x'', N)`` pair that matches a typical mistake, or None."""
    angle, mu = np.radians(ROD["theta_deg"]), ROD["mu"]
    other_way = painleve_rod.joint_solve(angle, -ROD["x_rate"], 0.0, mu=mu)
    if _close(x_accel, other_way.qdd[0], 1e-3) or _close(normal, other_way.normal, 1e-3):
        return ("that is the rod sliding to the right. Here the end slides left (s = x' < 0), so friction on it "
                "points along +x: C = -mu N sgn(s) D^T with sgn(s) = -1.")
    for kind, mistake in (("norm", "N = |F^L| (the size of the frictionless ideal force, a norm that adds newtons "
                                   "to newton-metres)"),
                          ("multiplier", "N = lambda_L, the floor's reaction without friction"),
                          ("coupled_norm", "N = ||A^T lambda||, the norm of a generalized force")):
        shortcut = painleve_rod.shortcut_motion(angle, ROD["x_rate"], 0.0, normal=kind, mu=mu)
        if _close(x_accel, shortcut.qdd[0], 1e-3) or _close(normal, shortcut.normal, 1e-3):
            return (f"that comes from {mistake}. Friction at the end makes a torque, so A M^-1 C != 0 and the "
                    "normal force changes with friction: solve M q'' - (A^T - mu sgn(s) D^T) N = Q, A q'' = b "
                    "for (q'', N) together.")
    if _close(normal, GRAVITY, 1e-3):
        frictionless = painleve_rod.shortcut_motion(angle, ROD["x_rate"], 0.0, normal="multiplier", mu=mu).normal
        return ("N = m g would hold for a rod at rest; here the rod's centre accelerates downwards as it tips, so "
                f"without friction the floor would carry only {frictionless:.4f} N, and friction's torque at the "
                "end changes that again: solve for N together with friction.")
    return None


@checker("three numbers: x'' in m/s^2, N in N, and the critical mu (dimensionless)")
def check_6(x_accel, normal_force, mu_critical) -> Feedback:
    """Exercise 6: Painlevé's rod at 50 degrees with its end sliding left; and where its paradox starts.

    A uniform rod (m = 1 kg, L = 1 m, g = 9.81) has its lower end on the floor
    at ``theta = 50`` degrees; its centre moves with ``x' = -1`` m/s and
    ``theta' = 0`` (so the end slides left, ``s = -1`` m/s); ``mu = 0.5``.

    Parameters
    ----------
    x_accel : float
        ``x''`` of the centre, in m/s^2.
    normal_force : float
        The floor's normal force on the end, in N.
    mu_critical : float
        The friction coefficient above which this sliding rod at 50 degrees has
        no unique motion (Painlevé's paradox).

    Returns
    -------
    Feedback
        Compared with :func:`udk_notebooks.examples.painleve_rod.joint_solve`
        and :func:`~udk_notebooks.examples.painleve_rod.critical_mu` (relative
        tolerance 1e-4); typical mistakes (the wrong sliding direction, ``N``
        from the ideal force alone, ``N = m g``, the global minimum 4/3) get
        their own hint.
    """
    if isinstance(mu_critical, (float, np.floating)) and mu_critical == np.inf:
        # what critical_mu returns for the other sliding direction: a reasoned answer, not a malformed one
        return Feedback(False, "mu_critical = inf says no paradox, which holds for the end sliding right. Here it "
                               "slides left (sgn(s) = -1): the coefficient of N, 1 + 3 cos^2 theta + 3 mu sgn(s) "
                               "sin theta cos theta, does reach zero.")
    values = [number(x_accel, name="x_accel", unit="m/s^2"), number(normal_force, name="normal_force", unit="N"),
              number(mu_critical, name="mu_critical")]
    accel, normal, critical = values
    angle, mu = np.radians(ROD["theta_deg"]), ROD["mu"]
    motion = painleve_rod.joint_solve(angle, ROD["x_rate"], 0.0, mu=mu)
    expected_critical = painleve_rod.critical_mu(angle, -1)
    if normal < 0:
        return Feedback(False, "a floor only pushes: the normal force is positive.")
    pair_right = _close(accel, motion.qdd[0], 1e-4) and _close(normal, motion.normal, 1e-4)
    if not pair_right:
        hint = _rod_hint(accel, normal)
        if hint is not None:
            return Feedback(False, hint)
        if _close(normal, motion.normal, 1e-4):
            return Feedback(False, "N is right; the centre's x'' then follows from m x'' = friction = -mu N sgn(s).")
        if _close(accel, motion.qdd[0], 1e-2) and _close(normal, motion.normal, 1e-2):
            return Feedback(False, "close; give more digits (compute them rather than rounding).")
        return Feedback(False, "write the rod's 4 x 4 system M q'' - (A^T - mu sgn(s) D^T) N = Q, A q'' = b with "
                               "A = (0, 1, -(L/2) cos theta), D = (1, 0, (L/2) sin theta), sgn(s) = -1, and solve it "
                               "with np.linalg.solve.")
    if critical <= 0 or not np.isfinite(critical):
        return Feedback(False, "the paradox does exist for this sliding direction: find the mu at which the "
                               "coefficient of N, 1 + 3 cos^2 theta + 3 mu sgn(s) sin theta cos theta, vanishes.")
    if _close(critical, painleve_rod.PARADOX_MU_MIN, 1e-3):
        return Feedback(False, "4/3 is the smallest critical mu over all angles (at tan theta = 2); at 50 degrees "
                               "the boundary lies higher.")
    if not _close(critical, expected_critical, 1e-4):
        if _close(critical, expected_critical, 1e-2):
            return Feedback(False, "(x'', N) are right; the critical mu is close: give more digits.")
        return Feedback(False, "(x'', N) are right. For the critical mu, eliminate q'': N multiplies "
                               "(1/m)(1 + 3 cos^2 theta + 3 mu sgn(s) sin theta cos theta); set it to zero with "
                               "sgn(s) = -1.")
    return Feedback(True, f"x'' = {motion.qdd[0]:.4f} m/s^2 and N = {motion.normal:.4f} N: friction pushes the end "
                          f"towards +x and its torque presses the rod onto the floor, far beyond the frictionless "
                          f"{painleve_rod.shortcut_motion(angle, ROD['x_rate'], 0.0, normal='multiplier', mu=mu).normal:.4f} N. "
                          f"Above mu = {expected_critical:.4f} no unique motion exists.")


@checker("prediction: True or False; reasoning: a sentence")
def check_7(prediction, reasoning) -> Feedback:
    """Exercise 7 (predict and justify): unique accelerations with a massless coordinate?

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
