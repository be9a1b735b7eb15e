"""Checks for the exercises of lesson 05, multibody systems.

Expected answers come from the Cartesian double pendulum's ideal force
``F^L`` (joint reactions), the closed-form normal modes of the sprung
carriage pendulum, simulations of the driven carriage, for the student's
own model, the angle equation of a pendulum with a torsion spring, and the
floor's reaction in the block carrying a pendulum on a rough floor. Source:
lecture slides "Multibody systems", Chapter 9 (Examples 9.5-9.9, Exercise 4:14,
Coulomb dry friction, the power theorem).
"""

from __future__ import annotations

import functools

import numpy as np

from ..examples import carriage_pendulum, double_pendulum, friction_cart_pendulum
from ..model import Model
from ..simulation import simulate
from ._feedback import AnswerFormError, Feedback, checker, justification, number, predicted, yes_no

__all__ = ["check_1", "check_2", "check_3", "check_4", "check_5", "check_6"]

GRAVITY = 9.81
_PENDULUM = {"m1": 1.5, "m2": 0.5, "l1": 1.0, "l2": 1.0, "g": GRAVITY}
_SPRING_PENDULUM = {"m": 0.4, "l": 0.8, "k": 3.0, "g": GRAVITY}
_RELEASE_ANGLE = 0.6


@checker("a number: the size of the pin force at O in N")
def check_1(pin_force) -> Feedback:
    """Exercise 1: the force of the pin ``O`` on the double pendulum of rods hanging at rest.

    Parameters
    ----------
    pin_force : float
        Its size in N for ``m1 = 1.5 kg``, ``m2 = 0.5 kg``.

    Returns
    -------
    Feedback
        Compared with the translational rows of ``F^L`` of the Cartesian model at rest.
    """
    value = number(pin_force, name="pin_force", unit="N")
    compiled = double_pendulum.cartesian_model().compile()
    q0, qd0 = double_pendulum.to_cartesian([0.0, 0.0], [0.0, 0.0], **_PENDULUM)
    ideal = compiled.motion(0.0, q0, qd0, **_PENDULUM).ideal
    # body 1 feels R_O - R_A, body 2 feels R_A: their sum is the pin force at O
    expected = float(np.linalg.norm(ideal[[0, 1]] + ideal[[3, 4]]))
    if np.isclose(value, expected, rtol=1e-6):
        return Feedback(True, f"The pin at O carries the weight of both rods, {expected:.6g} N.")
    if np.isclose(value, _PENDULUM["m1"] * GRAVITY, rtol=1e-6):
        return Feedback(False, "that is the weight of rod 1 only; the pin at A passes the weight of rod 2 on to rod 1.")
    if np.isclose(value, _PENDULUM["m2"] * GRAVITY, rtol=1e-6):
        return Feedback(False, "that is the force at pin A; O holds more.")
    return Feedback(False, "at rest the accelerations vanish: balance the weights of the bodies below the pin.")


@checker("a number: the lower normal-mode angular frequency in rad/s")
def check_2(low_frequency) -> Feedback:
    """Exercise 2: the lower small-swing angular frequency of the carriage pendulum (``k = 20``).

    Parameters
    ----------
    low_frequency : float
        In rad/s, with the other parameters at their defaults.

    Returns
    -------
    Feedback
        Compared with the roots of ``m_c l w^4 - ((m + m_c) g + k l) w^2 + k g = 0``.
    """
    value = number(low_frequency, name="low_frequency", unit="rad/s")
    low, high = carriage_pendulum.normal_mode_frequencies(k=20.0)
    if np.isclose(value, low, rtol=1e-6):
        return Feedback(True, f"w = {low:.6g} rad/s (the other mode is {high:.6g} rad/s).")
    if np.isclose(value, high, rtol=1e-6):
        return Feedback(False, "that is the higher of the two frequencies.")
    if np.isclose(value, low / (2 * np.pi), rtol=1e-6) or np.isclose(value, high / (2 * np.pi), rtol=1e-6):
        return Feedback(False, "that is a frequency in Hz; the question asks for the angular frequency in rad/s.")
    if np.isclose(value, np.sqrt(GRAVITY), rtol=1e-6):
        return Feedback(False, "sqrt(g / l) is the pendulum on a fixed support; the carriage moves too.")
    return Feedback(False, "linearize M q'' + K q = 0 about rest and solve det(K - w^2 M) = 0.")


@functools.cache
def _driven_energy_change() -> float:
    params = {"F0": 5.0, "omega": 2.0}
    q0, qd0 = carriage_pendulum.initial_state(**params)
    run = simulate(carriage_pendulum.model(**params).compile(), (0.0, 5.0), q0, qd0, method="DOP853",
                   rtol=1e-10, atol=1e-12, params=params)
    return float(np.ptp(run.energy))


@checker("True or False")
def check_3(energy_constant) -> Feedback:
    """Exercise 3: is ``T + V`` constant for the carriage driven by ``F(t) = 5 sin(2 t)`` N?

    Parameters
    ----------
    energy_constant : bool

    Returns
    -------
    Feedback
        Compared with the spread of ``T + V`` over a 5 s simulation.
    """
    answer = yes_no(energy_constant, name="energy_constant")
    constant = _driven_energy_change() < 1e-6
    if answer == constant:
        return Feedback(True, f"T + V changes by {_driven_energy_change():.4g} J: the power theorem gives "
                              "d(T + V)/dt = F(t) x_c', the power of the drive.")
    return Feedback(False, "F(t) is not derived from a potential: by the power theorem it feeds F(t) x_c' into T + V.")


@checker("a udk_notebooks.Model with the one coordinate theta")
def check_4(spring_pendulum) -> Feedback:
    """Exercise 4 (code): a point pendulum with a torsion spring at its pin, in its angle.

    Parameters
    ----------
    spring_pendulum : Model
        One coordinate ``theta`` (from the downward vertical), mass 0.4 kg,
        length 0.8 m, torsion stiffness 3 N m/rad, ``g = 9.81``.

    Returns
    -------
    Feedback
        Its inertia must be ``m l^2`` and its acceleration at five states
        ``theta'' = -(g / l) sin(theta) - k theta / (m l^2)``.
    """
    if not isinstance(spring_pendulum, Model):
        raise AnswerFormError(f"`spring_pendulum` should be a udk.Model; got {type(spring_pendulum).__name__}")
    if len(spring_pendulum.coordinates) != 1:
        return Feedback(False, "the model should have exactly one coordinate, theta.")
    if spring_pendulum.n_holonomic + spring_pendulum.n_nonholonomic:
        return Feedback(False, "in its angle the pendulum needs no constraint rows: the rod is built into theta.")
    compiled = spring_pendulum.compile()
    m, length, stiffness = _SPRING_PENDULUM["m"], _SPRING_PENDULUM["l"], _SPRING_PENDULUM["k"]
    # the accelerations fix only k / m: a model with m and k both doubled moves alike, so the inertia is checked too
    inertia = float(np.asarray(compiled.evaluate(0.0, [0.3], [0.0], compiled.parameters())[0]).reshape(-1)[0])
    if not np.isclose(inertia, m * length**2, rtol=1e-9):
        return Feedback(False, f"your model's inertia (its 1 x 1 mass matrix) is {inertia:.6g} kg m^2; a point mass "
                               f"m on a rod of length l has m l^2 = {m * length**2:.6g} kg m^2.")
    for angle, rate in [(0.0, 0.0), (0.3, 0.0), (-1.1, 2.0), (2.5, -1.0), (0.7, 4.0)]:
        got = float(compiled.motion(0.0, [angle], [rate]).qdd[0])
        want = -GRAVITY / length * np.sin(angle) - stiffness * angle / (m * length**2)
        if not np.isclose(got, want, rtol=1e-9, atol=1e-12):
            gravity_only = -GRAVITY / length * np.sin(angle)
            hint = ("the spring is missing: add k theta^2 / 2 to the potential."
                    if np.isclose(got, gravity_only, rtol=1e-9, atol=1e-12) else
                    f"at theta = {angle} rad your model gives theta'' = {got:.6g} rad/s^2, expected {want:.6g}.")
            return Feedback(False, hint)
    return Feedback(True, "Your model matches theta'' = -(g / l) sin(theta) - k theta / (m l^2) at every state tried.")


def _floor_reaction(angle: float) -> tuple[float, float]:
    """Normal force of the floor and ``|F^L|`` when the bob is let go from rest at ``angle``, the block held.

    The constraint force ``F^L + F^C`` of the Cartesian model is split into the reactions of the floor, the
    rod and the holding (stick) row by least squares: ``F^L + F^C = A^T lambda + F e_x1``.
    """
    compiled = friction_cart_pendulum.model().compile()
    q, qd = friction_cart_pendulum.initial_state(0.0, angle)
    p = compiled.parameters()
    motion, _ = compiled.solve_modes(0.0, q, qd, p, (0,))
    _, _, A, _, _ = compiled.evaluate(0.0, q, qd, p)
    rows = np.vstack([A, [1.0, 0.0, 0.0, 0.0]])
    lam = np.linalg.lstsq(rows.T, motion.ideal + motion.nonideal, rcond=None)[0]
    return float(lam[0]), float(np.linalg.norm(motion.ideal))


@checker("a number: the floor's normal force N in N")
def check_5(normal_force) -> Feedback:
    """Exercise 5: the floor's normal force on the block the moment the bob is let go at 0.6 rad.

    Parameters
    ----------
    normal_force : float
        In N, for ``examples.friction_cart_pendulum`` with its defaults
        (``m1 = 1 kg``, ``m2 = 0.8 kg``, ``l = 0.8 m``), block and bob at rest,
        static friction holding the block.

    Returns
    -------
    Feedback
        Compared with the floor's reaction split off the constraint force of
        the Cartesian model.
    """
    value = number(normal_force, name="normal_force", unit="N")
    values = {name: row.default for name, row in friction_cart_pendulum.PARAMETERS.items()}
    block, bob, grav = values["m1"], values["m2"], values["g"]
    expected, whole = _floor_reaction(_RELEASE_ANGLE)
    if np.isclose(value, expected, rtol=1e-6):
        return Feedback(True, f"N = {expected:.6g} N = g (m1 + m2 cos^2 theta): the rod's tension m2 g cos(theta) "
                              "presses down only with its vertical part, so the floor carries less than the weight.")
    if np.isclose(value, (block + bob) * grav, rtol=1e-6):
        return Feedback(False, "that is the weight of block and bob; the bob starts to fall as it swings, so the "
                               "floor carries less than the weight at that instant.")
    if np.isclose(value, block * grav, rtol=1e-6):
        return Feedback(False, "the rod passes part of the bob's weight on to the block: add the vertical part of "
                               "its tension.")
    if np.isclose(value, (block + bob * np.cos(_RELEASE_ANGLE)) * grav, rtol=1e-6):
        return Feedback(False, "the rod's tension m2 g cos(theta) acts along the rod: only its vertical part, "
                               "T cos(theta), presses on the block.")
    if np.isclose(value, whole, rtol=1e-6):
        return Feedback(False, "that is |F^L| of the whole system, which holds the rod's pull on the bob as well; "
                               "the normal force is the floor's reaction alone.")
    return Feedback(False, "with the bob at rest the rod's tension is m2 g cos(theta) (no centripetal part yet); "
                           "add its vertical component to the block's weight.")


@checker("prediction: True or False; reasoning: a sentence")
def check_6(prediction, reasoning) -> Feedback:
    """Exercise 6 (predict and justify): does the ideal string force do work on the bob alone?

    The driven carriage pendulum of Sec. 3 (``F0 = 5`` N, ``omega = 2`` rad/s)
    over 8 s, Cartesian coordinates ``(x_c, x, y)``.

    Parameters
    ----------
    prediction : bool or {"yes", "no"}
        Whether the work of ``F^L`` on the bob's coordinates ``(x, y)`` over the run differs from zero.
    reasoning : str
        Why, in a sentence or two.

    Returns
    -------
    Feedback
        Compared with the work computed from a DOP853 run.
    """
    answer = yes_no(prediction, name="prediction")
    text = justification(reasoning, name="reasoning")
    on_bob, total = _string_work()
    does_work = bool(np.abs(on_bob).max() > 1e-3)
    model_answer = (f"the string force is normal to the bob's velocity relative to the carriage, not to its absolute "
                    f"velocity. With the carriage moving, it does work on the bob (up to {np.abs(on_bob).max():.2f} J "
                    f"in this run) and the opposite work on the carriage; the total stays at {np.abs(total).max():.0e} J, "
                    "as an ideal, time-independent constraint requires.")
    return predicted(answer == does_work, text, model_answer,
                     "an ideal force does no work in total; that says nothing about its work on one body.")


@functools.cache
def _string_work() -> tuple[np.ndarray, np.ndarray]:
    """The work of F^L on the bob's coordinates and on all coordinates, along the driven run."""
    drive = {"F0": 5.0, "omega": 2.0}
    q0, qd0 = carriage_pendulum.initial_state(**drive)
    times = np.linspace(0.0, 8.0, 1601)
    run = simulate(carriage_pendulum.model(**drive), (0.0, 8.0), q0, qd0, method="DOP853", rtol=1e-11, atol=1e-12,
                   t_eval=times)
    bob_power = np.sum(run.qd[:, 1:] * run.ideal[:, 1:], axis=1)
    all_power = np.sum(run.qd * run.ideal, axis=1)
    cumulative = lambda power: np.concatenate([[0.0], np.cumsum((power[1:] + power[:-1]) / 2 * np.diff(times))])
    return cumulative(bob_power), cumulative(all_power)
