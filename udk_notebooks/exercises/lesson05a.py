"""Checks for the exercises of lesson 05a, joints, pin friction and one-sided constraints.

Expected answers come from routes other than the lesson's formulas: the
ideal screw's moment from the direction of its constraint row (the reaction
lies in the range of ``A^T``), the pin force of the rod pendulum from the
multipliers of a Cartesian model, the carriage's frequency from the spring's
kinetic energy by quadrature, the student's rod-on-carriage model against a
Cartesian model of the rod solved by the Udwadia-Kalaba equation, and the pin's
friction moment from the implicit law solved with the Udwadia-Kalaba equation
and a root finder. Source: lecture slides "Multibody systems", chapter 9
(simple joints, the ideal screw joint, the revolute joint with friction, the
rod pendulum, Exercise 4:14 and the kinetic energies of its spring and rod).
"""

from __future__ import annotations

import functools

import numpy as np
import sympy as sm
from scipy.integrate import quad
from scipy.optimize import brentq
from sympy.physics.mechanics import dynamicsymbols

from ..core import udwadia_kalaba
from ..model import TIME, Model
from ._feedback import AnswerFormError, Feedback, checker, justification, number, yes_no

__all__ = ["MODEL_JUSTIFICATION", "check_1", "check_2", "check_3", "check_4", "check_5"]

GRAVITY = 9.81
_LEAD, _AXIAL_FORCE = 0.01, 100.0  # Exercise 1: m per turn, N
_ROD = {"m": 1.0, "L": 1.0, "r_p": 0.02, "mu": 0.3}  # Exercises 2 and 5: the rod pendulum of Sec. 2
_BOTTOM_RATE = 3.0  # rad/s, Exercise 5
_CARRIAGE, _SPRING_MASS, _STIFFNESS = 2.0, 0.6, 10.0  # Exercise 3: kg, kg, N/m
_ROD_CARRIAGE = {"m_c": 2.0, "m_r": 1.0, "l": 1.0, "k": 10.0, "g": GRAVITY}  # Exercise 4

MODEL_JUSTIFICATION = (
    "At the bottom the rod's centre moves on a circle of radius L/2 with speed (L/2) theta': the pin must "
    "supply the centripetal force m (L/2) theta'^2 upwards on top of the weight, so |f| = m g + m (L/2) "
    "theta'^2 > m g and the friction moment mu r_p |f| is larger than at rest. The friction moment is "
    "largest where the rod is fastest."
)


@checker("a number: the axial moment M3 in N m")
def check_1(screw_moment) -> Feedback:
    """Exercise 1: the axial moment of an ideal screw (lead 10 mm) that carries an axial force of 100 N.

    Parameters
    ----------
    screw_moment : float
        ``M3`` in N m.

    Returns
    -------
    Feedback
        Compared with the reaction ``A^T lambda`` of the screw's row
        ``z' - (L / 2 pi) psi' = 0`` whose force component is ``f3``.
    """
    value = number(screw_moment, name="screw_moment", unit="N m")
    row = np.array([1.0, -_LEAD / (2 * np.pi)])  # the screw's constraint row in (z, psi)
    multiplier = _AXIAL_FORCE / row[0]  # an ideal reaction is row * multiplier
    expected = float(row[1] * multiplier)
    if np.isclose(value, expected, rtol=1e-6):
        return Feedback(True, f"M3 = -(L / 2 pi) f3 = {expected:.6g} N m: the two powers f3 z' and M3 psi' cancel.")
    if np.isclose(value, -expected, rtol=1e-6):
        return Feedback(False, "check the sign: zero power needs (L / 2 pi) f3 + M3 = 0.")
    if np.isclose(abs(value), _LEAD * _AXIAL_FORCE, rtol=1e-6):
        return Feedback(False, "the lead L is the advance per turn, 2 pi radians: the advance per radian is "
                               "L / (2 pi).")
    if np.isclose(abs(value), _AXIAL_FORCE * 2 * np.pi / _LEAD, rtol=1e-6):
        return Feedback(False, "the ratio is upside down: M3 = -(L / 2 pi) f3, a small moment for a fine thread.")
    if np.isclose(abs(value), abs(expected) * 1e3, rtol=1e-6):
        return Feedback(False, "check the units: the lead is 10 mm = 0.01 m.")
    return Feedback(False, "an ideal screw takes no power: (L / 2 pi) f3 + M3 = 0 (lesson Sec. 1).")


def _rod_pendulum_matrices(angle: float, rate: float):
    """M, Q, A, b of the rod pendulum in (x, y, theta) of its centre: the two rows of its pin at the origin."""
    mass, length = _ROD["m"], _ROD["L"]
    half = length / 2
    M = np.diag([mass, mass, mass * length**2 / 12])
    Q = np.array([0.0, -mass * GRAVITY, 0.0])
    A = np.array([[1.0, 0.0, -half * np.cos(angle)], [0.0, 1.0, -half * np.sin(angle)]])
    b = np.array([-half * np.sin(angle) * rate**2, half * np.cos(angle) * rate**2])
    return M, Q, A, b


def _pin_force(angle: float, rate: float, moment: float = 0.0) -> np.ndarray:
    """The pin force on the rod (the multipliers) with the moment ``moment`` acting in the pin."""
    M, Q, A, b = _rod_pendulum_matrices(angle, rate)
    c = np.array([0.0, 0.0, moment])
    motion = udwadia_kalaba(M, Q, A, b, C=c)
    return np.linalg.lstsq(A.T, motion.ideal + motion.nonideal - c, rcond=None)[0]


def _pin_friction_moment(angle: float, rate: float) -> float:
    """Size of ``M3 = -sgn(rate) mu r_p |f(M3)|``, the implicit pin-friction law, by a root finder."""
    arm = _ROD["mu"] * _ROD["r_p"]
    direction = np.sign(rate)

    def residual(moment: float) -> float:
        return moment + direction * arm * np.linalg.norm(_pin_force(angle, rate, moment))

    return abs(brentq(residual, *sorted([0.0, -direction * 10.0]), xtol=1e-14))


@checker("True or False, and a reason as a string")
def check_2(larger_at_bottom, why) -> Feedback:
    """Exercise 2 (predict and justify): is the pin's friction moment larger at the bottom of a fast swing?

    Parameters
    ----------
    larger_at_bottom : bool
        The prediction.
    why : str
        The student's justification, shown back beside ``MODEL_JUSTIFICATION``.

    Returns
    -------
    Feedback
        The prediction is graded against the pin force of the Cartesian rod
        model at the bottom (3 rad/s) and at rest; the justification is shown
        next to the model one, not graded by machine.
    """
    prediction = yes_no(larger_at_bottom, name="larger_at_bottom")
    reason = justification(why, name="why")
    moving = np.linalg.norm(_pin_force(0.0, _BOTTOM_RATE))
    at_rest = np.linalg.norm(_pin_force(0.0, 0.0))
    if prediction == bool(moving > at_rest):
        return Feedback(True, f"The pin force is {moving:.4g} N moving, {at_rest:.4g} N at rest. Compare your reason "
                              f"(\"{reason}\") with this one: {MODEL_JUSTIFICATION}")
    return Feedback(False, "the rod's centre moves on a circle: what force keeps it on that circle, and who "
                           "supplies it?")


def _continuous_spring_frequency() -> float:
    """Lowest angular frequency of a mass on a spring with distributed mass (wave equation, fixed end at O).

    With ``beta = w sqrt(m_s / k)`` the frequency equation is ``beta tan(beta) = m_s / m_c``; the
    uniform-stretch model (``m_c + m_s / 3``) is its Rayleigh estimate, slightly above it.
    """
    ratio = _SPRING_MASS / _CARRIAGE
    beta = brentq(lambda b: b * np.tan(b) - ratio, 1e-9, np.pi / 2 - 1e-9)
    return float(beta * np.sqrt(_STIFFNESS / _SPRING_MASS))


@checker("a number: the angular frequency in rad/s")
def check_3(carriage_frequency) -> Feedback:
    """Exercise 3: the carriage on a spring of mass 0.6 kg (``m_c = 2 kg``, ``k = 10 N/m``).

    Parameters
    ----------
    carriage_frequency : float
        In rad/s.

    Returns
    -------
    Feedback
        Compared with ``sqrt(k / m_eff)``, ``m_eff`` from the spring's kinetic energy
        ``int_0^1 m_s s^2 ds`` (linear velocity profile) by quadrature.
    """
    value = number(carriage_frequency, name="carriage_frequency", unit="rad/s")
    spring_share = quad(lambda s: _SPRING_MASS * s**2, 0.0, 1.0)[0]  # point at s = X / l moves at s x'
    expected = float(np.sqrt(_STIFFNESS / (_CARRIAGE + spring_share)))
    if np.isclose(value, expected, rtol=1e-6):
        return Feedback(True, f"w = sqrt(k / (m_c + m_s/3)) = {expected:.6g} rad/s.")
    if np.isclose(value, np.sqrt(_STIFFNESS / _CARRIAGE), rtol=1e-6):
        return Feedback(False, "that leaves out the spring's mass; part of the spring moves with the carriage.")
    if np.isclose(value, np.sqrt(_STIFFNESS / (_CARRIAGE + _SPRING_MASS)), rtol=1e-6):
        return Feedback(False, "the whole spring does not move with the carriage: its end at O stands still.")
    if np.isclose(value, np.sqrt(_STIFFNESS / (_CARRIAGE + _SPRING_MASS / 2)), rtol=1e-6):
        return Feedback(False, "the speed along the spring is linear, but the kinetic energy goes with its square: "
                               "the share is 1/3, not 1/2.")
    if np.isclose(value, _continuous_spring_frequency(), rtol=1e-4):
        return Feedback(False, "that is the exact lowest frequency of a continuous spring (its wave equation), a "
                               "little below the model's; the exercise asks for the uniform-stretch model of "
                               "Sec. 3, m_s/3 moving with the carriage.")
    if np.isclose(value * 2 * np.pi, expected, rtol=1e-6):
        return Feedback(False, "that is a frequency in Hz; the question asks for the angular frequency in rad/s.")
    return Feedback(False, "the spring adds m_s/3 to the carriage's mass (lesson Sec. 3); then w = sqrt(k / m).")


@functools.cache
def _rod_carriage_reference():
    """A Cartesian model of the carriage and the rod: the joint as two rows, solved by Udwadia-Kalaba."""
    xc, xr, yr, th = dynamicsymbols("x_c x_r y_r theta_r")
    m_c, m_r, length, k, g = sm.symbols("m_c m_r l k g", positive=True)
    model = Model(
        [xc, xr, yr, th],
        kinetic_energy=(m_c * xc.diff(TIME) ** 2 + m_r * (xr.diff(TIME) ** 2 + yr.diff(TIME) ** 2)
                        + m_r * length**2 / 12 * th.diff(TIME) ** 2) / 2,
        potential_energy=k * xc**2 / 2 + m_r * g * yr,
        holonomic=[xr - xc - length / 2 * sm.sin(th), yr + length / 2 * sm.cos(th)],
        parameters={m_c: _ROD_CARRIAGE["m_c"], m_r: _ROD_CARRIAGE["m_r"], length: _ROD_CARRIAGE["l"],
                    k: _ROD_CARRIAGE["k"], g: _ROD_CARRIAGE["g"]},
    )
    return model.compile()


def _reference_accelerations(carriage: float, angle: float, carriage_rate: float, angle_rate: float) -> np.ndarray:
    half = _ROD_CARRIAGE["l"] / 2
    q = [carriage, carriage + half * np.sin(angle), -half * np.cos(angle), angle]
    qd = [carriage_rate, carriage_rate + half * np.cos(angle) * angle_rate, half * np.sin(angle) * angle_rate,
          angle_rate]
    qdd = _rod_carriage_reference().motion(0.0, np.array(q), np.array(qd)).qdd
    return qdd[[0, 3]]


def _ball_at_end_accelerations(carriage: float, angle: float, carriage_rate: float, angle_rate: float) -> np.ndarray:
    """What a point mass m_r at the rod's end (the string-and-ball model) would give, for the hint."""
    p = _ROD_CARRIAGE
    mass = np.array([[p["m_c"] + p["m_r"], p["m_r"] * p["l"] * np.cos(angle)],
                     [p["m_r"] * p["l"] * np.cos(angle), p["m_r"] * p["l"] ** 2]])
    rest = np.array([-p["m_r"] * p["l"] * angle_rate**2 * np.sin(angle) + p["k"] * carriage,
                     p["m_r"] * p["g"] * p["l"] * np.sin(angle)])
    return np.linalg.solve(mass, -rest)


@checker("a udk.Model with the coordinates x, varphi")
def check_4(rod_carriage) -> Feedback:
    """Exercise 4 (code): the carriage of Exercise 4:14 with a homogeneous rod instead of string and ball.

    Parameters
    ----------
    rod_carriage : Model
        Coordinates ``x`` (carriage) and ``varphi`` (rod from the downward vertical);
        ``m_c = 2``, ``m_r = 1``, ``l = 1``, ``k = 10``, ``g = 9.81``.

    Returns
    -------
    Feedback
        Its accelerations at five states must match a Cartesian model of the
        rod (centre and angle, joint as two constraint rows, Udwadia-Kalaba),
        and its mass matrix the one of ``T`` (energies scaled by a common
        factor give the same accelerations and are refused).
    """
    if not isinstance(rod_carriage, Model):
        raise AnswerFormError(f"`rod_carriage` should be a udk.Model; got {type(rod_carriage).__name__}")
    if len(rod_carriage.coordinates) != 2:
        return Feedback(False, "the model should have exactly two coordinates, x and varphi.")
    if rod_carriage.A.shape[0] != 0:
        return Feedback(False, "in the coordinates x, varphi the joint needs no constraint: leave `holonomic` out.")
    compiled = rod_carriage.compile()
    states = [(0.0, 0.0, 0.0, 0.0), (0.2, 0.5, 0.0, 0.0), (-0.3, 1.2, 0.8, -1.5), (0.5, -2.0, -0.4, 2.5),
              (0.1, 2.9, 1.0, 0.7)]
    for state in states:
        got = compiled.motion(0.0, np.array(state[:2]), np.array(state[2:])).qdd
        want = _reference_accelerations(*state)
        if not np.allclose(got, want, rtol=1e-8, atol=1e-9):
            if np.allclose(got, _ball_at_end_accelerations(*state), rtol=1e-8, atol=1e-9):
                return Feedback(False, "that is the ball on a string of length l: a homogeneous rod has its centre at "
                                       "l/2 and also turns, with m_r l^2 / 12 about its centre.")
            return Feedback(False, f"at x = {state[0]}, varphi = {state[1]}, x' = {state[2]}, varphi' = {state[3]} "
                                   f"your model gives (x'', varphi'') = {np.round(got, 4)}, "
                                   f"expected {np.round(want, 4)}. "
                                   "Check the centre (l/2), the rod's own rotation (m_r l^2/12) and the spring.")
    for state in states:
        # the accelerations fix T and V only up to a common factor: compare the mass matrix itself
        q, qd = np.array(state[:2]), np.array(state[2:])
        got_mass = np.asarray(compiled.evaluate(0.0, q, qd, compiled.parameters())[0], dtype=float)
        if not np.allclose(got_mass, _rod_carriage_mass(state[1]), rtol=1e-9, atol=1e-12):
            return Feedback(False, f"your accelerations are right, but at varphi = {state[1]} your mass matrix is "
                                   f"{np.round(got_mass, 4).tolist()}, expected "
                                   f"{np.round(_rod_carriage_mass(state[1]), 4).tolist()}: T and V are off by a "
                                   "common factor (check the 1/2 in T = m v^2 / 2 and V = k x^2 / 2).")
    return Feedback(True, "Your model matches the Cartesian rod at every state tried.")


def _rod_carriage_mass(angle: float) -> np.ndarray:
    """The mass matrix of the carriage and the rod in (x, varphi), from T of the slides' solution by hand."""
    p = _ROD_CARRIAGE
    coupling = p["m_r"] * p["l"] / 2 * np.cos(angle)
    return np.array([[p["m_c"] + p["m_r"], coupling], [coupling, p["m_r"] * p["l"] ** 2 / 3]])


@checker("a number: the friction moment in N m")
def check_5(pin_moment) -> Feedback:
    """Exercise 5: the pin's friction moment as the rod passes the bottom at 3 rad/s.

    Parameters
    ----------
    pin_moment : float
        Its size in N m (``m = 1 kg``, ``L = 1 m``, ``r_p = 0.02 m``, ``mu = 0.3``).

    Returns
    -------
    Feedback
        Compared (to 1e-4) with the implicit law ``M3 = -sgn(theta') mu r_p |f(M3)|``
        solved through the Udwadia-Kalaba equation of the Cartesian rod.
    """
    value = number(pin_moment, name="pin_moment", unit="N m")
    expected = _pin_friction_moment(0.0, _BOTTOM_RATE)
    arm = _ROD["mu"] * _ROD["r_p"]
    weight = _ROD["m"] * GRAVITY
    centripetal = _ROD["m"] * _ROD["L"] / 2 * _BOTTOM_RATE**2
    if np.isclose(abs(value), expected, rtol=1e-4):
        return Feedback(True, f"M3 = mu r_p (m g + m (L/2) theta'^2) = {expected:.6g} N m (the implicit law changes "
                              "only the fifth digit here).")
    if np.isclose(abs(value), arm * weight, rtol=1e-4):
        return Feedback(False, "that is the moment at rest; at the bottom the pin also supplies the centripetal force.")
    if np.isclose(abs(value), arm * centripetal, rtol=1e-4):
        return Feedback(False, "the weight is missing: the pin carries m g as well as the centripetal force.")
    if np.isclose(abs(value), _ROD["mu"] * (weight + centripetal), rtol=1e-4):
        return Feedback(False, "that is the friction force mu |f| in N; the moment needs the arm r_p.")
    if np.isclose(abs(value), arm * (weight + _ROD["m"] * _ROD["L"] * _BOTTOM_RATE**2), rtol=1e-4):
        return Feedback(False, "the centre of the rod is at L/2 from the pin, not L.")
    return Feedback(False, "find the pin force at the bottom (weight plus centripetal force of the centre), then "
                           "multiply its size by mu r_p.")
