"""Exercise checks of lessons 05-07: published solutions pass, wrong answers get a hint and no traceback."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sm
from sympy.physics.mechanics import dynamicsymbols

import udk_notebooks as udk
from udk_notebooks.exercises import Feedback, lesson05, lesson06, lesson07

GRAVITY = 9.81


# --- published solutions, written as in the notebooks' Solution boxes -------------------------------------

def _spring_pendulum(with_spring: bool = True, scale: float = 1.0) -> udk.Model:
    # scale multiplies the mass and the stiffness together: the same accelerations, a wrong model
    theta = dynamicsymbols("theta")
    m, length, k, g = sm.symbols("m l k g", positive=True)
    potential = -m * g * length * sm.cos(theta) + (k * theta**2 / 2 if with_spring else 0)
    return udk.Model([theta], kinetic_energy=m * length**2 * theta.diff() ** 2 / 2, potential_energy=potential,
                     parameters={m: 0.4 * scale, length: 0.8, k: 3.0 * scale, g: GRAVITY})


def _spring_pendulum_with_a_row() -> udk.Model:
    # a stray constraint (the angle held at zero) that the free motion at theta = 0 would not reveal
    theta = dynamicsymbols("theta")
    m, length, k, g = sm.symbols("m l k g", positive=True)
    return udk.Model([theta], kinetic_energy=m * length**2 * theta.diff() ** 2 / 2,
                     potential_energy=-m * g * length * sm.cos(theta) + k * theta**2 / 2, holonomic=[theta],
                     parameters={m: 0.4, length: 0.8, k: 3.0, g: GRAVITY})


def _circle_model(mass: float = 0.5, momentum_value: float = 1.5, gravity: float = 0.0) -> udk.Model:
    x, y = dynamicsymbols("x y")
    m, radius, momentum = sm.symbols("m R L", positive=True)
    return udk.Model([x, y], kinetic_energy=m * (x.diff() ** 2 + y.diff() ** 2) / 2,
                     potential_energy=m * gravity * y, holonomic=[x**2 + y**2 - radius**2],
                     nonholonomic=[m * (x * y.diff() - y * x.diff()) - momentum],
                     parameters={m: mass, radius: 2.0, momentum: momentum_value})


def _identify_without_mass(t, q, k, m, g):
    # the typical slip: e . c / m (what the fit gives) without multiplying by m
    e = np.array([1.0, k]) / np.hypot(1.0, k)
    a = 2 * np.polyfit(t, q @ e, 2)[0]
    return a + g * k / np.hypot(1.0, k)


def _circle_without_momentum() -> udk.Model:
    # issue 19: the orbit without the law of areas, which the old check called correct
    x_c, y_c = dynamicsymbols("x y")
    m_c, R_c = sm.symbols("m R", positive=True)
    return udk.Model([x_c, y_c], kinetic_energy=m_c * (x_c.diff() ** 2 + y_c.diff() ** 2) / 2,
                     holonomic=[x_c**2 + y_c**2 - R_c**2], parameters={m_c: 0.5, R_c: 2.0})


def _circle_at_velocity_level() -> udk.Model:
    # the circle written as x x' + y y' = 0: the right motion from a consistent start, the wrong constraint kind
    x, y = dynamicsymbols("x y")
    m, momentum = sm.symbols("m L", positive=True)
    return udk.Model([x, y], kinetic_energy=m * (x.diff() ** 2 + y.diff() ** 2) / 2,
                     nonholonomic=[x * x.diff() + y * y.diff(), m * (x * y.diff() - y * x.diff()) - momentum],
                     parameters={m: 0.5, momentum: 1.5})


def _circle_with_momentum_of_wrong_sign() -> udk.Model:
    x, y = dynamicsymbols("x y")
    m, radius, momentum = sm.symbols("m R L", positive=True)
    return udk.Model([x, y], kinetic_energy=m * (x.diff() ** 2 + y.diff() ** 2) / 2,
                     holonomic=[x**2 + y**2 - radius**2],
                     nonholonomic=[m * (y * x.diff() - x * y.diff()) - momentum],
                     parameters={m: 0.5, radius: 2.0, momentum: 1.5})


def _identify(t, q, k, m, g):
    direction = np.array([1.0, k]) / np.hypot(1.0, k)
    design = np.column_stack([np.ones_like(t), t, t**2 / 2])
    acceleration = np.linalg.lstsq(design, q @ direction, rcond=None)[0][2]
    return m * acceleration + m * g * k / np.hypot(1.0, k)


def _lesson05_low_frequency():
    # independent of the package: det(K - w^2 M) = 0 of the linearized carriage pendulum, k = 20
    m_c, m, length, k = 2.0, 1.0, 1.0, 20.0
    mass = np.array([[m + m_c, m * length], [m * length, m * length**2]])
    stiffness = np.diag([k, m * GRAVITY * length])
    return float(np.sqrt(np.min(np.linalg.eigvals(np.linalg.solve(mass, stiffness)).real)))


def _lesson06_period():
    semi_major = 1.2 / (1 - 0.6**2)
    return 2 * np.pi * np.sqrt(semi_major**3 / (1.0**2 / (1.0**2 * 1.2)))


SOLUTIONS = [
    (lesson05.check_1, ((1.5 + 0.5) * GRAVITY,)),
    (lesson05.check_2, (_lesson05_low_frequency(),)),
    (lesson05.check_3, (False,)),
    (lesson05.check_4, (_spring_pendulum(),)),
    (lesson05.check_5, (GRAVITY * (1.0 + 0.8 * np.cos(0.6) ** 2),)),
    (lesson06.check_1, (3.0**2 / (2.0 * 1.5),)),
    (lesson06.check_2, (_lesson06_period(),)),
    (lesson06.check_3, (True,)),
    (lesson06.check_4, (_circle_model(),)),
    (lesson07.check_1, ((-GRAVITY * 2 + 1 + 2 * 2) / np.sqrt(5),)),
    (lesson07.check_2, (np.array([1.0, 2.0]) + 0.5 * np.array([2.0, -1.0]),)),
    (lesson07.check_3, (False,)),
    (lesson07.check_4, (_identify,)),
    (lesson05.check_6, (True, "the string moves energy between carriage and bob")),
    (lesson06.check_5, (4.0, "same path at twice the speed needs four times the force")),
    (lesson07.check_5, (False, "only c1 does virtual work on this wire")),
]


@pytest.mark.parametrize("check, answer", SOLUTIONS, ids=lambda v: getattr(v, "__qualname__", None) and
                         f"{v.__module__.rsplit('.', 1)[-1]}.{v.__name__}")
def test_published_solution_passes(check, answer):
    feedback = check(*answer)
    assert isinstance(feedback, Feedback)
    assert feedback.correct, feedback.message


# --- wrong answers: a wrong number, a wrong type, a string, the classic misconception ----------------------

WRONG = [
    (lesson05.check_1, 1.5 * GRAVITY, "rod 1 only"),
    (lesson05.check_1, 0.5 * GRAVITY, "pin A"),
    (lesson05.check_1, 25.0, "balance"),
    (lesson05.check_1, "19.62", "one finite real number"),
    (lesson05.check_1, [19.62, 0.0], "one finite real number"),
    (lesson05.check_2, _lesson05_low_frequency() * 2, "linearize"),
    (lesson05.check_2, _lesson05_low_frequency() / (2 * np.pi), "Hz"),
    (lesson05.check_2, np.sqrt(GRAVITY), "fixed support"),
    (lesson05.check_2, None, "None placeholder"),
    (lesson05.check_3, True, "power theorem"),
    (lesson05.check_3, "maybe", "True or False"),
    (lesson05.check_4, _spring_pendulum(with_spring=False), "spring is missing"),
    (lesson05.check_4, _spring_pendulum(scale=2.0), "inertia"),
    (lesson05.check_4, "theta", "udk.Model"),
    (lesson05.check_4, _spring_pendulum_with_a_row(), "no constraint rows"),
    (lesson05.check_4, _circle_model(), "one coordinate"),
    (lesson05.check_5, GRAVITY * 1.8, "weight of block and bob"),
    (lesson05.check_5, GRAVITY * 1.0, "vertical part"),
    (lesson05.check_5, GRAVITY * (1.0 + 0.8 * np.cos(0.6)), "only its vertical part"),
    (lesson05.check_5, lesson05._floor_reaction(0.6)[1], "|F^L| of the whole system"),
    (lesson05.check_5, 3.0, "add its vertical component"),
    (lesson05.check_5, "15.2", "one finite real number"),
    (lesson05.check_5, None, "None placeholder"),
    (lesson06.check_1, 3.0**2 / (2.0**2 * 1.5), "k / m"),
    (lesson06.check_1, 3.0**2 / (2.0 * 1.5 * 1.4), "eccentricity"),
    (lesson06.check_1, "3", "one finite real number"),
    (lesson06.check_1, float("nan"), "one finite real number"),
    (lesson06.check_2, 2 * np.pi * (1.2 / (1 - 0.36)) ** 1.5, "mu = k / m"),
    (lesson06.check_2, -1.0, "positive"),
    (lesson06.check_2, 10.0, "T = 2 pi"),
    (lesson06.check_3, False, "virtual"),
    (lesson06.check_3, "no", "virtual"),
    (lesson06.check_3, 3.0, "True or False"),
    (lesson06.check_4, _circle_model(mass=1.0), "do not hold there"),
    (lesson06.check_4, _circle_without_momentum(), "second, nonholonomic constraint"),
    (lesson06.check_4, _circle_at_velocity_level(), "0 holonomic and 2 nonholonomic"),
    (lesson06.check_4, _circle_with_momentum_of_wrong_sign(), "do not hold there"),
    # two rows on two coordinates fix q'' whatever M and Q are: only the constraint force shows these
    (lesson06.check_4, _circle_model(gravity=9.81), "constraint force"),  # not a free particle
    (lesson06.check_4, _circle_model(mass=1.0, momentum_value=3.0), "constraint force"),  # same j, mass doubled
    (lesson06.check_4, 42, "udk.Model"),
    (lesson06.check_4, _spring_pendulum(), "two coordinates"),
    (lesson07.check_1, -GRAVITY * 2 / np.sqrt(5), "ideal wire"),
    (lesson07.check_1, (GRAVITY * 2 - 5) / np.sqrt(5), "sign"),
    (lesson07.check_1, "fast", "one finite real number"),
    (lesson07.check_2, [1.0, 2.0], "paper's own"),
    (lesson07.check_2, [2.0, 2.0], "normal to the wire"),
    (lesson07.check_2, 3.0, "shape (2,)"),
    (lesson07.check_2, "1, 2", "shape (2,)"),
    (lesson07.check_3, True, "cannot tell them apart"),
    (lesson07.check_3, "yes", "cannot tell them apart"),
    (lesson07.check_3, 1.5, "True or False"),
    (lesson07.check_4, lambda t, q, k, m, g: 1.0, "Fit s(t)"),
    (lesson07.check_4, lambda t, q, k, m, g: m * 2 * np.polyfit(t, q[:, 0], 2)[0], "Fit s(t)"),
    (lesson07.check_4, lambda t, q, k, m, g: 1 / 0, "ZeroDivisionError"),
    (lesson07.check_4, _identify_without_mass, "m = 2.5 kg"),  # an acceleration, not a force
    (lesson07.check_4, lambda t, q, k, m, g: "c", "one finite real number"),
    (lesson07.check_4, 5, "a function"),
    (lesson05.check_6, False, "work on one body"),
    (lesson06.check_5, 2.0, "speed squared"),
    (lesson06.check_5, 1.0, "model answer"),
    (lesson07.check_5, True, "virtual work on this wire"),
]


WHY = "because of the reason I give here"
PREDICTIONS = {lesson05.check_6, lesson06.check_5, lesson07.check_5}


@pytest.mark.parametrize("check, answer, hint", WRONG)
def test_wrong_answer_gets_hint(check, answer, hint):
    feedback = check(answer, WHY) if check in PREDICTIONS else check(answer)
    assert isinstance(feedback, Feedback)
    assert not feedback.correct
    assert hint in feedback.message, feedback.message


def test_model_comparison_finds_a_missing_constraint_that_the_free_motion_hides():
    # circle plus a redundant velocity row (the circle again): the same row counts as the orbit, its
    # constraints hold on the uniform motion and the free accelerations agree; only a test force along
    # the circle tells it from the law of areas
    from udk_notebooks.exercises._models import model_disagreement

    x, y = dynamicsymbols("x y")
    m, radius = sm.symbols("m R", positive=True)
    redundant = udk.Model([x, y], kinetic_energy=m * (x.diff() ** 2 + y.diff() ** 2) / 2,
                          holonomic=[x**2 + y**2 - radius**2], nonholonomic=[x * x.diff() + y * y.diff()],
                          parameters={m: 0.5, radius: 2.0})
    states = lesson06._circle_states()
    assert model_disagreement(redundant, lesson06._circle_reference(), states, probes=0) is None
    problem = model_disagreement(redundant, lesson06._circle_reference(), states)
    assert problem is not None and "test force" in problem
    assert model_disagreement(_circle_model(), lesson06._circle_reference(), states) is None
    assert not lesson06.check_4(redundant).correct


@pytest.mark.parametrize("check", sorted(PREDICTIONS, key=lambda c: c.__module__))
def test_prediction_checks_want_a_reason_and_show_the_model_answer(check):
    right = {lesson05.check_6: True, lesson06.check_5: 4.0, lesson07.check_5: False}[check]
    assert not check(right, "yes").correct and "at least 5 words" in check(right, "yes").message
    assert not check(right, 42).correct
    verdict = check(right, WHY)
    assert verdict.correct and WHY in verdict.message and "model answer" in verdict.message
