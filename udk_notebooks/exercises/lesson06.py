"""Checks for the exercises of lesson 06, the inverse Kepler problem.

Expected answers come from the Udwadia-Kalaba solver applied to the orbit and
angular-momentum constraints (``examples.kepler``), from the conic's exact
time law (:func:`examples.kepler.exact_state`), from simulations, and, for
the student's own model, from the centripetal force ``m v^2 / R`` of uniform
circular motion. Source: encyclopedia article "Udwadia-Kalaba equation",
section "Inverse Kepler problem".
"""

from __future__ import annotations

import functools

import numpy as np
import sympy as sm
from sympy.physics.mechanics import dynamicsymbols

from ..examples import kepler
from ..model import Model
from ..simulation import simulate
from ._models import model_disagreement
from ._feedback import AnswerFormError, Feedback, checker, justification, number, predicted, yes_no

__all__ = ["check_1", "check_2", "check_3", "check_4", "check_5"]

# Exercise 1: the orbit whose force constant the student computes.
_EX1 = {"m": 2.0, "L": 3.0, "epsilon": 0.4, "ell": 1.5}
# Exercise 2: the ellipse whose period the student computes.
_EX2 = {"m": 1.0, "L": 1.0, "epsilon": 0.6, "ell": 1.2}
# Exercise 4: the circular orbit the student imposes.
_EX4_MASS, _EX4_RADIUS, _EX4_L = 0.5, 2.0, 1.5


@functools.cache
def _compiled():
    return kepler.model().compile()


def _solver_force_constant(params: dict) -> float:
    """``|F| r^2`` of the constraint force the solver computes at the perihelion."""
    q0, qd0 = kepler.initial_state(**params)
    motion = _compiled().motion(0.0, q0, qd0, **params)
    return float(np.linalg.norm(motion.ideal + motion.nonideal) * np.dot(q0, q0))


@checker("a number: the force constant k in N m^2")
def check_1(force_constant) -> Feedback:
    """Exercise 1: the constant ``k`` of the force ``-k / r^2`` for ``m = 2, L = 3, epsilon = 0.4, ell = 1.5``.

    Parameters
    ----------
    force_constant : float
        ``k`` in N m^2.

    Returns
    -------
    Feedback
        Compared with ``|F| r^2`` of the constraint force the solver computes at the perihelion.
    """
    value = number(force_constant, name="force_constant", unit="N m^2")
    expected = _solver_force_constant(_EX1)
    if np.isclose(value, expected, rtol=1e-6):
        return Feedback(True, f"k = L^2 / (m ell) = {expected:.6g} N m^2, the same as |F| r^2 from the solver.")
    m, big_l, ell = _EX1["m"], _EX1["L"], _EX1["ell"]
    if np.isclose(value, big_l**2 / (m**2 * ell), rtol=1e-6):
        return Feedback(False, "that is k / m, the acceleration constant h^2 / ell; the force carries one more m.")
    if np.isclose(value, big_l**2 / (m * ell * (1 + _EX1["epsilon"])), rtol=1e-6):
        return Feedback(False, "the eccentricity does not enter k: read it off F = -(L^2 / (m ell r^2)) e_r.")
    return Feedback(False, "write h = L / m and read the strength of F = m q'' off the solved 2x2 system.")


@checker("a number: the period in s")
def check_2(period) -> Feedback:
    """Exercise 2: the period of the ellipse ``m = 1, L = 1, epsilon = 0.6, ell = 1.2``.

    Parameters
    ----------
    period : float
        Time from one perihelion passage to the next, in s.

    Returns
    -------
    Feedback
        The exact time law must bring the particle back to the perihelion at
        ``period`` and, half a period later, put it at the aphelion.
    """
    value = number(period, name="period", unit="s")
    if value <= 0:
        return Feedback(False, "a period is a positive time.")
    q_back, _ = kepler.exact_state(np.array([value]), **_EX2)
    q_half, _ = kepler.exact_state(np.array([value / 2]), **_EX2)
    q_start, _ = kepler.initial_state(**_EX2)
    radius_aphelion = _EX2["ell"] / (1 - _EX2["epsilon"])
    back = np.allclose(q_back[0], q_start, atol=1e-6 * _EX2["ell"])
    at_aphelion = np.isclose(np.linalg.norm(q_half[0]), radius_aphelion, rtol=1e-6)
    if back and at_aphelion:
        return Feedback(True, f"After {value:.6g} s the particle is back at its perihelion.")
    semi_major = _EX2["ell"] / (1 - _EX2["epsilon"] ** 2)
    if np.isclose(value, 2 * np.pi * semi_major**1.5, rtol=1e-6):
        return Feedback(False, "Kepler's third law is T = 2 pi sqrt(a^3 / mu) with mu = k / m, not mu = 1.")
    return Feedback(False, "use a = ell / (1 - epsilon^2), mu = k / m = L^2 / (m^2 ell) and T = 2 pi sqrt(a^3 / mu).")


@checker("True or False")
def check_3(ideal_force_does_work) -> Feedback:
    """Exercise 3: does the ideal constraint force do work along the orbit?

    Parameters
    ----------
    ideal_force_does_work : bool

    Returns
    -------
    Feedback
        Compared with the change of kinetic energy over half an orbit of the default ellipse.
    """
    answer = yes_no(ideal_force_does_work, name="ideal_force_does_work")
    q0, qd0 = kepler.initial_state()
    run = simulate(_compiled(), (0.0, 2.0), q0, qd0, method="DOP853", rtol=1e-10, atol=1e-12)
    speed_squared = np.sum(run.qd**2, axis=1)
    does_work = bool(np.ptp(speed_squared) > 1e-3 * speed_squared[0])
    if answer == does_work:
        return Feedback(True, "The speed changes along the orbit, so F^L does work: the constraint "
                              "m (x y' - y x') = L is inhomogeneous and the actual velocity is not a virtual one.")
    return Feedback(False, "F^L does no *virtual* work; compare the particle's speed at perihelion and aphelion.")


@functools.cache
def _circle_reference() -> Model:
    """The orbit of Exercise 4 built here: the circle (holonomic) and the law of areas (nonholonomic)."""
    x, y = dynamicsymbols("x y")
    m, radius, momentum = sm.symbols("m R L", positive=True)
    return Model([x, y], kinetic_energy=m * (x.diff() ** 2 + y.diff() ** 2) / 2,
                 holonomic=[x**2 + y**2 - radius**2],
                 nonholonomic=[m * (x * y.diff() - y * x.diff()) - momentum],
                 parameters={m: _EX4_MASS, radius: _EX4_RADIUS, momentum: _EX4_L})


def _circle_states(count: int = 4) -> list[tuple[np.ndarray, np.ndarray]]:
    """States of the uniform circular motion at random points of the circle (fixed seed)."""
    speed = _EX4_L / (_EX4_MASS * _EX4_RADIUS)
    angles = np.random.default_rng(4).uniform(0.0, 2 * np.pi, count)
    return [(_EX4_RADIUS * np.array([np.cos(a), np.sin(a)]), speed * np.array([-np.sin(a), np.cos(a)])) for a in angles]


@checker("a udk_notebooks.Model with the coordinates (x, y)")
def check_4(circle_model) -> Feedback:
    """Exercise 4 (code): a free particle held on a circle with constant angular momentum.

    Parameters
    ----------
    circle_model : Model
        Coordinates ``(x, y)``, mass 0.5 kg, the circle of radius 2 m about the
        origin and the angular momentum 1.5 kg m^2/s, every parameter given a value.

    Returns
    -------
    Feedback
        The model must have one holonomic and one nonholonomic row, its
        constraints must hold at four random states of the uniform motion, and
        its accelerations there must match the reference model's, without and
        with random test forces (which is what exposes a model without the law
        of areas: a free particle on the circle moves alike with or without it).
    """
    if not isinstance(circle_model, Model):
        raise AnswerFormError(f"`circle_model` should be a udk.Model; got {type(circle_model).__name__}")
    if len(circle_model.coordinates) != 2:
        return Feedback(False, "the model should have exactly two coordinates, (x, y).")
    if circle_model.n_nonholonomic == 0 and circle_model.n_holonomic == 1:
        return Feedback(False, "the circle alone lets the particle move at any speed and be pushed along it; "
                               "the angular momentum m (x y' - y x') = L is a second, nonholonomic constraint.")
    problem = model_disagreement(circle_model, _circle_reference(), _circle_states())
    if problem is not None:
        return Feedback(False, problem)
    speed = _EX4_L / (_EX4_MASS * _EX4_RADIUS)
    force = _EX4_MASS * speed**2 / _EX4_RADIUS
    return Feedback(True, f"Your model moves as the circle with the law of areas does, at four states and under test "
                          f"forces; its constraint force is the centripetal force m v^2 / R = {force:.6g} N: "
                          "k / R^2 with k = L^2 / (m R).")


@checker("prediction: a number (the factor); reasoning: a sentence")
def check_5(prediction, reasoning) -> Feedback:
    """Exercise 5 (predict and justify): the force constant when ``L`` doubles on the same orbit.

    Parameters
    ----------
    prediction : float
        ``k(2 L) / k(L)`` for ``m = 1``, ``epsilon = 0.5``, ``ell = 1``.
    reasoning : str
        Why, in a sentence or two.

    Returns
    -------
    Feedback
        Compared with the ratio of ``|F| r^2`` from the solver at ``L = 2`` and ``L = 1``.
    """
    value = number(prediction, name="prediction")
    text = justification(reasoning, name="reasoning")
    base = {"m": 1.0, "L": 1.0, "epsilon": 0.5, "ell": 1.0}
    ratio = _solver_force_constant(dict(base, L=2.0)) / _solver_force_constant(base)
    model_answer = ("the orbit is the same, so the particle must cover it twice as fast: every velocity doubles, "
                    "every acceleration along the fixed path scales with the square of the speed, and "
                    "k = L^2 / (m ell) grows by 4.")
    hint = "the factor 2 is the speed's; the force scales with the speed squared." if abs(value - 2.0) < 1e-6 else ""
    return predicted(abs(value - ratio) <= 1e-6 * ratio, text, model_answer, hint)
