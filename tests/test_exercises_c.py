"""Exercise checks of the added lessons 00a and 05a: closed forms accepted, typical wrong answers get a hint.

The published solutions of both lessons are run by ``test_exercises.py`` (it reads every notebook);
here each check meets the closed form of its exercise, the wrong answers students typically give,
and malformed answers, which must get a message and never a traceback.
"""

from __future__ import annotations

import inspect
import json
import math
import re

import numpy as np
import pytest
import sympy as sm
from sympy.physics.mechanics import dynamicsymbols

import udk_notebooks as udk
from udk_notebooks.exercises import Feedback, lesson00a, lesson05a

from lesson_paths import find_lessons_dir

t = dynamicsymbols._t
r, phi = dynamicsymbols("r phi")
MASS, STIFFNESS = 0.5, 8.0


def _polar_lagrangian(sign: float = -1.0, centrifugal: bool = True, scale: float = 1.0):
    speed2 = r.diff(t) ** 2 + (r**2 if centrifugal else 1) * phi.diff(t) ** 2
    return scale * (MASS * speed2 / 2 + sign * STIFFNESS * r**2 / 2)


x_, varphi_ = dynamicsymbols("x varphi")


def _rod_carriage(centre: float = 0.5, own_rotation: bool = True, spring: float = 10.0, scale: float = 1.0):
    """Exercise 4 of lesson 05a: carriage with a homogeneous rod, in (x, varphi); variants are typical mistakes.

    ``scale`` multiplies both energies (the 1/2 left out of T and V): same accelerations, wrong energies.
    """
    m_c, m_r, l, k, g = sm.symbols("m_c m_r l k g", positive=True)
    point = sm.Matrix([x_ + centre * l * sm.sin(varphi_), -centre * l * sm.cos(varphi_)])
    kinetic = m_c * x_.diff(t) ** 2 / 2 + m_r * point.diff(t).dot(point.diff(t)) / 2
    if own_rotation:
        kinetic += m_r * l**2 / 12 * varphi_.diff(t) ** 2 / 2
    return udk.Model([x_, varphi_], kinetic_energy=scale * kinetic,
                     potential_energy=scale * (k * x_**2 / 2 + m_r * g * point[1]),
                     parameters={m_c: 2.0, m_r: 1.0, l: 1.0, k: spring, g: 9.81})


def _rod_with_pin_rows():
    """The same system with a redundant rod coordinate and its joint as constraints: refused with a hint."""
    x, y, th = dynamicsymbols("x y theta")
    return udk.Model([x, y, th], kinetic_energy=(x.diff(t) ** 2 + y.diff(t) ** 2 + th.diff(t) ** 2) / 2,
                     holonomic=[x - sm.sin(th)], parameters={})


MODULES = {"00a": lesson00a, "05a": lesson05a}

RIGHT = [
    (lesson00a.check_1, (2.0 * 0.5 * math.cos(math.radians(30.0)),)),
    (lesson00a.check_2, (True, "One coordinate, so V = -P l theta is a potential.")),
    (lesson00a.check_2, ("yes", "a function of one variable always has an antiderivative")),
    (lesson00a.check_3, (7 / 15,)),
    (lesson00a.check_3, (sm.Rational(7, 15),)),
    (lesson00a.check_4, (_polar_lagrangian(),)),
    (lesson00a.check_4, (_polar_lagrangian() + 2 * r * r.diff(t),)),  # + d/dt(r^2): a gauge term, same L
    (lesson00a.check_5, (210e9 * 1e-4 * 1e-3**2 / (2 * 2.0),)),
    (lesson05a.check_1, (-0.01 / (2 * math.pi) * 100.0,)),
    (lesson05a.check_2, (True, "The pin also gives the centripetal force, so the load exceeds m g.")),
    (lesson05a.check_3, (math.sqrt(10.0 / (2.0 + 0.6 / 3)),)),
    (lesson05a.check_4, (_rod_carriage(),)),
    (lesson05a.check_5, (0.3 * 0.02 * (9.81 + 0.5 * 9.0),)),
    (lesson05a.check_5, (-0.3 * 0.02 * (9.81 + 0.5 * 9.0),)),  # the size, whatever its sign
]

WRONG = {
    lesson00a.check_1: [((2.0 * 0.5 * math.cos(30.0),), "radians"), ((1.0,), "F l"), ((0.5,), "l cos theta"), ((2.0,), "moment"), ((-0.8660254,), "sign"),
                        ((0.8660254 * 1.001,), "Eq. (3.19)"), (("0.87",), "should be")],
    lesson00a.check_2: [((False, "It is a follower force, so it is not conservative."), "V(theta)"),
                        ((True, ""), "`why`"), ((True, None), "`why`"), ((True, 3), "`why`"),
                        (("maybe", "some reason here"), "True or False")],
    lesson00a.check_3: [((1.0,), "straight line"), ((2 / 3,), "parabola"), ((-7 / 15,), "sign"),
                        ((7 / 15 * 1.001,), "parametrize"), (([7 / 15],), "should be")],
    lesson00a.check_4: [((_polar_lagrangian(sign=+1.0),), "T - V"),
                        ((_polar_lagrangian(centrifugal=False),), "r phi'^2"),
                        ((_polar_lagrangian() + r.diff(t, 2),), "accelerations"),
                        ((MASS * r.diff(t) ** 2 / 2 - STIFFNESS * r**2 / 2,), "fix both"),
                        ((_polar_lagrangian() * sm.Symbol("m"),), "only r, phi"),
                        ((_polar_lagrangian() + STIFFNESS * r**4 / 4,), "your L gives"),
                        (("L",), "sympy expression"), ((sm.Matrix([1]),), "sympy expression"),
                        ((sm.Symbol("r") ** 2 / 4 - 4 * sm.Symbol("r") ** 2,), "dynamicsymbols"),
                        # same equations of motion, but not T - V: V - T, and the halves left out of both
                        ((-_polar_lagrangian(),), "V - T"), ((_polar_lagrangian(scale=2.0),), "2 times T - V"),
                        ((_polar_lagrangian(scale=3.0),), "3 times T - V")],
    lesson00a.check_5: [((10.5,), "1/2"), ((10500.0,), "force"), ((5.25e6,), "units"), ((5.25e-6,), "units"),
                        ((6.0,), "Eq. (3.39)"), (("5.25",), "should be")],
    lesson05a.check_1: [((0.01 / (2 * math.pi) * 100.0,), "sign"), ((-1.0,), "per radian"),
                        ((-100.0 * 2 * math.pi / 0.01,), "upside down"), ((-10 / (2 * math.pi) * 100.0,), "units"),
                        ((-0.2,), "no power"), (([-0.16],), "should be")],
    lesson05a.check_2: [((False, "Friction depends only on the weight of the rod."), "circle"),
                        ((True, "yes"), "`why`"), ((True, 1.0), "`why`"),
                        ((None, "some reason here"), "True or False")],
    lesson05a.check_3: [((math.sqrt(5.0),), "leaves out"), ((math.sqrt(10.0 / 2.6),), "whole spring"),
                        ((math.sqrt(10.0 / 2.3),), "1/3, not 1/2"), ((math.sqrt(10.0 / 2.2) / (2 * math.pi),), "Hz"),
                        ((2.0,), "m_s/3"), (("2.13",), "should be"), ((2.1302,), "continuous spring")],
    lesson05a.check_4: [((_rod_carriage(centre=1.0, own_rotation=False),), "ball on a string"),
                        ((_rod_carriage(own_rotation=False),), "expected"), ((_rod_carriage(spring=0.0),), "spring"),
                        ((_rod_carriage(scale=2.0),), "common factor"),
                        ((_rod_with_pin_rows(),), "two coordinates"), ((udk.Model,), "udk.Model"), ((3,), "udk.Model")],
    lesson05a.check_5: [((0.3 * 0.02 * 9.81,), "at rest"), ((0.3 * 0.02 * 4.5,), "weight"), ((0.3 * 14.31,), "arm r_p"),
                        ((0.3 * 0.02 * (9.81 + 9.0),), "L/2"), ((0.0859 * 1.01,), "multiply"),
                        (("0.0859",), "should be")],
}

JUNK = ["abc", Exception, ValueError("x"), object(), math.nan, {"a": 1}, [], 1j, b"1"]


def _checks(module) -> dict:
    return {name: f for name, f in inspect.getmembers(module, inspect.isfunction) if name.startswith("check_")}


@pytest.mark.parametrize("check, answers", RIGHT, ids=[f"{c.__name__}-{i}" for i, (c, _) in enumerate(RIGHT)])
def test_closed_form_answer_is_accepted(check, answers):
    verdict = check(*answers)
    assert isinstance(verdict, Feedback) and verdict.correct, verdict.message


@pytest.mark.parametrize("check, answers, hint", [pytest.param(c, a, h, id=f"{c.__module__[-9:]}.{c.__name__}-{i}")
                                                  for c, cases in WRONG.items() for i, (a, h) in enumerate(cases)])
def test_wrong_answer_gets_its_hint_and_no_traceback(check, answers, hint):
    verdict = check(*answers)
    assert isinstance(verdict, Feedback) and not verdict.correct
    assert hint in verdict.message, verdict.message
    assert "Traceback" not in verdict.message and "could not check" not in verdict.message


def test_every_check_has_right_and_wrong_answers():
    for module in MODULES.values():
        for check in _checks(module).values():
            assert check in WRONG, f"{module.__name__}.{check.__name__} has no wrong answers here"
            assert any(c is check for c, _ in RIGHT), f"{module.__name__}.{check.__name__} has no right answer here"


@pytest.mark.parametrize("check", [f for m in MODULES.values() for f in _checks(m).values()], ids=lambda f: f.__name__)
@pytest.mark.parametrize("junk", JUNK, ids=[type(j).__name__ if not isinstance(j, type) else j.__name__ for j in JUNK])
def test_junk_of_any_kind_is_refused_with_a_message(check, junk):
    arity = sum(p.default is inspect.Parameter.empty for p in inspect.signature(check).parameters.values())
    verdict = check(*([junk] * arity))
    assert isinstance(verdict, Feedback) and not verdict.correct and verdict.message


def test_placeholders_say_not_attempted():
    for module in MODULES.values():
        for check in _checks(module).values():
            arity = sum(p.default is inspect.Parameter.empty for p in inspect.signature(check).parameters.values())
            assert "replace the None" in check(*([None] * arity)).message


@pytest.mark.parametrize("lesson", sorted(MODULES))
def test_every_check_is_called_in_its_lesson_and_documented(lesson):
    notebook = next(find_lessons_dir().glob(f"{lesson}_*.ipynb"))
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    called = {name for cell in cells if cell["cell_type"] == "code"
              for name in re.findall(r"\bex\.(check_\d+)\(", "".join(cell["source"]))}
    module = MODULES[lesson]
    assert called == set(_checks(module)), (sorted(called), sorted(_checks(module)))
    for check in _checks(module).values():
        assert "Parameters" in (check.__doc__ or "") and "Returns" in (check.__doc__ or "")


def test_predict_and_justify_shows_the_model_answer_with_the_students_reason():
    reason = "Only one coordinate, so a potential exists."
    verdict = lesson00a.check_2(True, reason)
    assert verdict.correct and reason in verdict.message and lesson00a.MODEL_JUSTIFICATION in verdict.message
    wrong = lesson00a.check_2(False, reason)
    assert not wrong.correct and lesson00a.MODEL_JUSTIFICATION not in wrong.message  # no answer given away


def test_lagrangian_check_compares_with_newton_not_with_itself():
    # Newton's law in polar form, written independently: r'' = r phi'^2 - (k/m) r, phi'' = -2 r' phi' / r
    state = (0.7, 1.2, -0.4, 2.0)
    radius, _, radius_rate, angle_rate = state
    expected = np.array([radius * angle_rate**2 - STIFFNESS / MASS * radius, -2 * radius_rate * angle_rate / radius])
    assert np.allclose(lesson00a._newton_polar(state), expected)


def test_pin_friction_law_of_the_check_is_the_implicit_one():
    # at the bottom the pin force is vertical up to the friction's own tangential part: |f| > m g + m (L/2) w^2
    explicit = 0.3 * 0.02 * (9.81 + 0.5 * 9.0)
    implicit = lesson05a._pin_friction_moment(0.0, 3.0)
    assert implicit > explicit and math.isclose(implicit, explicit, rel_tol=1e-4)
    # away from the bottom the friction moment changes the pin force it is made from (A M^-1 c != 0)
    assert not np.allclose(lesson05a._pin_force(0.8, 1.0, 0.0), lesson05a._pin_force(0.8, 1.0, 0.05))


def test_rod_carriage_reference_is_the_lagrange_equation_at_rest_positions():
    # released from rest at varphi with the carriage at x: x'' and varphi'' from the 2 x 2 Lagrange system, by hand
    mc, mr, l, k, g, angle, carriage = 2.0, 1.0, 1.0, 10.0, 9.81, 0.5, 0.2
    mass = np.array([[mc + mr, mr * l / 2 * np.cos(angle)], [mr * l / 2 * np.cos(angle), mr * l**2 / 3]])
    rest = np.array([k * carriage, mr * g * l / 2 * np.sin(angle)])
    assert np.allclose(lesson05a._reference_accelerations(carriage, angle, 0.0, 0.0), np.linalg.solve(mass, -rest))


def test_lagrangian_check_reads_the_scale_of_the_kinetic_energy():
    # -L and 2 L give the same Lagrange equations as L; the check reads their velocity Hessians as -1 and 2
    states = [(0.7, 1.2, -0.4, 2.0), (2.0, -0.5, 1.5, -0.3)]
    q, qd = [r, phi], [r.diff(t), phi.diff(t)]
    assert math.isclose(lesson00a._kinetic_scale(_polar_lagrangian(), q, qd, states), 1.0)
    assert math.isclose(lesson00a._kinetic_scale(-_polar_lagrangian(), q, qd, states), -1.0)
    assert math.isclose(lesson00a._kinetic_scale(_polar_lagrangian(scale=2.0), q, qd, states), 2.0)
    assert lesson00a._kinetic_scale(_polar_lagrangian(centrifugal=False), q, qd, states) is None


def test_rod_carriage_mass_matrix_is_the_one_of_the_rod_kinetic_energy():
    # independent of the check's formula: M = d^2 T / d qdot^2 of the solution's T, by sympy
    compiled = _rod_carriage().compile()
    for angle in (0.0, 0.9, -2.3):
        mass = compiled.evaluate(0.0, np.array([0.1, angle]), np.zeros(2), compiled.parameters())[0]
        assert np.allclose(lesson05a._rod_carriage_mass(angle), mass, rtol=1e-12)


def test_continuous_spring_frequency_is_the_wave_equation_root_below_the_rayleigh_estimate():
    # beta tan(beta) = m_s / m_c = 0.3 for m_s = 0.6 kg, m_c = 2 kg, k = 10 N/m: the root beta = 0.5218...
    frequency = lesson05a._continuous_spring_frequency()
    beta = frequency * math.sqrt(0.6 / 10.0)
    assert math.isclose(beta * math.tan(beta), 0.3, rel_tol=1e-10)
    rayleigh = math.sqrt(10.0 / (2.0 + 0.6 / 3))
    assert frequency < rayleigh and math.isclose(frequency, rayleigh, rel_tol=2e-3)
