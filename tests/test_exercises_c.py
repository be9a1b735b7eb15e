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

from udk_notebooks.exercises import Feedback, lesson00a

from lesson_paths import find_lessons_dir

t = dynamicsymbols._t
r, phi = dynamicsymbols("r phi")
MASS, STIFFNESS = 0.5, 8.0


def _polar_lagrangian(sign: float = -1.0, centrifugal: bool = True, scale: float = 1.0):
    speed2 = r.diff(t) ** 2 + (r**2 if centrifugal else 1) * phi.diff(t) ** 2
    return scale * (MASS * speed2 / 2 + sign * STIFFNESS * r**2 / 2)


MODULES = {"00a": lesson00a}

RIGHT = [
    (lesson00a.check_1, (2.0 * 0.5 * math.cos(math.radians(30.0)),)),
    (lesson00a.check_2, (True, "One coordinate, so V = -P l theta is a potential.")),
    (lesson00a.check_2, ("yes", "a function of one variable always has an antiderivative")),
    (lesson00a.check_3, (7 / 15,)),
    (lesson00a.check_3, (sm.Rational(7, 15),)),
    (lesson00a.check_4, (_polar_lagrangian(),)),
    (lesson00a.check_4, (_polar_lagrangian(scale=3.0),)),  # a multiple of L has the same equations
    (lesson00a.check_5, (210e9 * 1e-4 * 1e-3**2 / (2 * 2.0),)),
]

WRONG = {
    lesson00a.check_1: [((1.0,), "F l"), ((0.5,), "l cos theta"), ((2.0,), "moment"), ((-0.8660254,), "sign"),
                        ((0.8660254 * 1.001,), "Eq. (3.19)"), (("0.87",), "should be")],
    lesson00a.check_2: [((False, "It is a follower force, so it is not conservative."), "V(theta)"),
                        ((True, ""), "`why`"), ((True, None), "`why`"), ((True, 3), "`why`"),
                        (("maybe", "some reason here"), "True or False")],
    lesson00a.check_3: [((1.0,), "straight line"), ((2 / 3,), "parabola"), ((-7 / 15,), "sign"),
                        ((7 / 15 * 1.001,), "parametrize"), (([7 / 15],), "should be")],
    lesson00a.check_4: [((_polar_lagrangian(sign=+1.0),), "T - V"), ((_polar_lagrangian(centrifugal=False),), "r phi'^2"),
                        ((_polar_lagrangian() + r.diff(t, 2),), "accelerations"),
                        ((MASS * r.diff(t) ** 2 / 2 - STIFFNESS * r**2 / 2,), "fix both"),
                        ((_polar_lagrangian() * sm.Symbol("m"),), "only r, phi"),
                        ((_polar_lagrangian() + STIFFNESS * r**4 / 4,), "your L gives"),
                        (("L",), "sympy expression"), ((sm.Matrix([1]),), "sympy expression")],
    lesson00a.check_5: [((10.5,), "1/2"), ((10500.0,), "force"), ((5.25e6,), "units"), ((5.25e-6,), "units"),
                        ((6.0,), "Eq. (3.39)"), (("5.25",), "should be")],
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
