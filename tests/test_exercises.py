"""Exercise checks: the answer forms, the verdict, every published solution, a battery of wrong answers.

The published solutions are read from the notebooks themselves (the ```python block in the
``<details>`` cell after each answer cell), so a solution that drifts from its check fails here.
"""

from __future__ import annotations

import inspect
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
import sympy as sm
from hypothesis import given
from hypothesis import strategies as st
from sympy.physics.mechanics import dynamicsymbols

import udk_notebooks as udk
from udk_notebooks.exercises import AnswerFormError, Feedback, checker, number, vector, yes_no
from udk_notebooks.exercises import lesson00, lesson01, lesson02, lesson03, lesson04

from lesson_paths import find_lesson_notebooks

CHECK_MODULES = {"00": lesson00, "01": lesson01, "02": lesson02, "03": lesson03, "04": lesson04}
CHECK_CALL = re.compile(r"\bex\.(check_\d+)\(")
ANSWER_CALL = re.compile(r"ex\.check_\d+\(")


# -- the building blocks -----------------------------------------------------------------------


def test_feedback_is_truthy_only_when_correct_and_says_so_in_words():
    right, wrong = Feedback(True, "well done."), Feedback(False, "look at the sign.")
    assert bool(right) and not bool(wrong)
    assert repr(right) == "Correct. well done." and str(wrong) == "Not yet: look at the sign."
    assert "Correct." in right._repr_html_() and "#009E73" in right._repr_html_()
    assert "Not yet:" in wrong._repr_html_() and "#E69F00" in wrong._repr_html_()


def test_feedback_escapes_html_and_checks_its_fields():
    shown = Feedback(False, "<script>alert(1)</script> & more")._repr_html_()
    assert "<script>" not in shown and "&lt;script&gt;" in shown and "&amp; more" in shown
    with pytest.raises(TypeError, match="`correct`"):
        Feedback("yes", "text")
    with pytest.raises(TypeError, match="`message`"):
        Feedback(True, 3)


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_number_returns_any_finite_float_unchanged(value):
    assert number(value, name="x") == value


@pytest.mark.parametrize("answer", [1, 2.5, np.float32(0.5), np.int64(7), np.array(3.0), sm.Rational(1, 3), sm.sqrt(2)])
def test_number_accepts_real_numbers_of_every_kind(answer):
    assert math.isclose(number(answer, name="x"), float(answer))


@pytest.mark.parametrize("answer", [True, "9.81", None, 1j, math.nan, math.inf, Exception, [1.0], sm.Symbol("x"), {}])
def test_number_refuses_what_is_not_one_real_number_and_names_the_form(answer):
    with pytest.raises(AnswerFormError, match=r"`speed` should be one finite real number \(in m/s\)"):
        number(answer, name="speed", unit="m/s")


def test_number_says_how_to_unwrap_a_one_entry_array():
    with pytest.raises(AnswerFormError, match=r"float\(\.\.\.\)"):
        number(np.array([0.005]), name="phi")


def test_vector_accepts_lists_arrays_and_sympy_columns():
    for answer in ([1, 2], (1.0, 2.0), np.array([1.0, 2.0]), sm.Matrix([1, 2]), np.array([[1.0], [2.0]])):
        assert np.array_equal(vector(answer, name="v", shape=(2,)), [1.0, 2.0])
    assert vector([[1, 2]], name="v", shape=(1, 2)).shape == (1, 2)


@pytest.mark.parametrize("answer", [[1, "2"], [1, 2, 3], "12", 3.0, [True, False], [[1], [2, 3]], [1, np.nan], Exception, None, [1, 1j]])
def test_vector_refuses_wrong_entries_and_shapes(answer):
    with pytest.raises(AnswerFormError, match=r"`v` should be an array of shape \(2,\)"):
        vector(answer, name="v", shape=(2,))


def test_yes_no_reads_booleans_and_the_two_words_only():
    assert yes_no(True, name="y") is True and yes_no(np.False_, name="y") is False
    assert yes_no(" Yes ", name="y") is True and yes_no("NO", name="y") is False
    for answer in (1, 0, "maybe", "true", None, Exception):
        with pytest.raises(AnswerFormError, match="`y` should be True or False"):
            yes_no(answer, name="y")


def test_checker_turns_every_failure_into_feedback():
    @checker("a number in m")
    def check(answer, other=None):
        if answer == "boom":
            raise ZeroDivisionError("inside the check")
        if answer == "wrong type":
            return 42
        return Feedback(number(answer, name="answer") == 1.0, "hint")

    assert check(1.0).correct
    assert check(2.0) == Feedback(False, "hint")
    assert not check("1.0") and "should be one finite real number" in check("1.0").message
    crashed = check("boom")
    assert not crashed and "could not check" in crashed.message and "expected form: a number in m" in crashed.message
    assert not check("wrong type") and "expected form" in check("wrong type").message
    assert "replace the None" in check(None).message and "replace the None" in check(None, other=object()).message
    assert check.__name__ == "check" and check.expected_form == "a number in m"
    with pytest.raises(TypeError, match="`expected_form`"):
        checker("")


# -- every lesson notebook: structure, and its published solutions ----------------------------


def _cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def _source(cell: dict) -> str:
    return "".join(cell["source"])


def test_every_lesson_has_objectives_exercises_with_checks_and_references(lesson_notebook: Path):
    cells = _cells(lesson_notebook)
    markdown = "\n".join(_source(c) for c in cells if c["cell_type"] == "markdown")
    code = [_source(c) for c in cells if c["cell_type"] == "code"]
    headings = set(re.findall(r"^## (.+)$", markdown, flags=re.M))
    for needed in ("Learning objectives", "Exercises", "References"):
        assert needed in headings, f"{lesson_notebook.name} has no '## {needed}' section"
    checks = {name for source in code for name in CHECK_CALL.findall(source)}
    assert len(checks) >= 4, f"{lesson_notebook.name} calls only {sorted(checks)}; a lesson needs at least four checked exercises"
    assert any(re.search(r"from udk_notebooks\.exercises import lesson\d\d[a-z]? as ex", s) for s in code), (
        f"{lesson_notebook.name}: the imports cell must import its checks from udk_notebooks.exercises")
    assert not any(re.search(r"^def check", s, flags=re.M) for s in code), (
        f"{lesson_notebook.name} defines checks in a cell; they belong in udk_notebooks.exercises")


def _solutions():
    """(lesson, check name, context code, solution code, call) for every answer cell of every lesson."""
    found = []
    for path in find_lesson_notebooks():
        cells = _cells(path)
        imports = next((_source(c) for c in cells if c["cell_type"] == "code" and " as ex" in _source(c)), None)
        if imports is None:
            continue
        for i, cell in enumerate(cells):
            source = _source(cell)
            # an answer cell ends with the bare call ex.check_N(...), whose verdict the cell displays
            if cell["cell_type"] != "code" or not source or not ANSWER_CALL.match(source.splitlines()[-1]):
                continue
            lines = source.splitlines()
            following = next((_source(c) for c in cells[i + 1:] if c["cell_type"] == "markdown"), "")
            fence = re.search(r"<details>.*?```python\n(.*?)```", following, flags=re.S)
            found.append(pytest.param(imports, "\n".join(lines[:-1]), fence.group(1) if fence else None, lines[-1],
                                      id=f"{path.stem.split('_')[0]}-{CHECK_CALL.search(lines[-1]).group(1)}"))
    return found


@pytest.mark.parametrize("imports, context, solution, call", _solutions())
def test_published_solution_passes_its_check_and_the_placeholder_does_not(imports, context, solution, call, monkeypatch):
    monkeypatch.setenv("MPLBACKEND", "Agg")
    namespace: dict = {}
    imports = "\n".join(line for line in imports.splitlines() if not line.startswith("%"))  # IPython magics
    exec(compile(imports, "<imports cell>", "exec"), namespace)
    namespace["explorer"] = None  # lesson 1 passes its explorer; the check works without one
    exec(compile(context, "<answer cell>", "exec"), namespace)
    placeholder = eval(call, namespace)
    assert isinstance(placeholder, Feedback) and not placeholder and "replace the None" in placeholder.message
    assert solution is not None, f"no ```python solution block after the answer cell of {call}"
    exec(compile(solution, "<solution>", "exec"), namespace)
    verdict = eval(call, namespace)
    assert isinstance(verdict, Feedback) and verdict.correct, verdict.message


def test_check_functions_are_all_published_in_notebooks():
    called = {}
    for path in find_lesson_notebooks():
        for cell in _cells(path):
            if cell["cell_type"] == "code":
                called.setdefault(path.stem.split("_")[0], set()).update(CHECK_CALL.findall(_source(cell)))
    for lesson, module in CHECK_MODULES.items():
        defined = {name for name, _ in inspect.getmembers(module, inspect.isfunction) if name.startswith("check_")}
        assert defined == called.get(lesson, set()), f"lesson {lesson}: defined {sorted(defined)}, used {sorted(called.get(lesson, set()))}"
        for name in defined:
            doc = getattr(module, name).__doc__ or ""
            assert "Parameters" in doc and "Returns" in doc, f"{module.__name__}.{name} needs a numpydoc docstring"


# -- wrong answers: a hint, never a traceback -----------------------------------------------------

_t = dynamicsymbols._t
x_, y_, varphi_, theta_ = dynamicsymbols("x y varphi theta")
r_ = sm.symbols("r", positive=True)
_rows = sm.Matrix([x_.diff(_t) - r_ * varphi_.diff(_t) * sm.sin(theta_),
                   y_.diff(_t) + r_ * varphi_.diff(_t) * sm.cos(theta_)]).diff(_t)
_acc = [c.diff(_t, 2) for c in (x_, y_, varphi_, theta_)]
DISK_A = _rows.jacobian(_acc)
DISK_B = -_rows.xreplace(dict.fromkeys(_acc, 0))


def _uk_parts(M, A):
    values, vectors = np.linalg.eigh(M)
    half_inverse = vectors @ np.diag(values**-0.5) @ vectors.T
    B = A @ half_inverse
    return half_inverse, B, np.linalg.pinv(B)


def _uk_without_c(M, Q, A, b, c):
    # the classic slip: the ideal part of Eq. (8) only
    half_inverse, B, B_pinv = _uk_parts(M, A)
    a = np.linalg.solve(M, Q)
    return a + half_inverse @ B_pinv @ (b - A @ a)


def _uk_euclidean(M, Q, A, b, c):
    # right only for M proportional to I: A^+ in place of M^-1/2 B^+, c unweighted
    a = np.linalg.solve(M, Q)
    A_pinv = np.linalg.pinv(A)
    return a + A_pinv @ (b - A @ a) + (np.eye(len(Q)) - A_pinv @ A) @ c


def _uk_normal_equations(M, Q, A, b, c):
    # the multiplier formula with an inverse, which a redundant row makes singular
    a = np.linalg.solve(M, Q)
    gram = A @ np.linalg.solve(M, A.T)
    return a + np.linalg.solve(M, A.T) @ np.linalg.inv(gram + 0 * np.eye(len(gram))) @ (b - A @ a) + np.linalg.solve(M, c)


def _proof_c():
    return lesson01.PROOF_SYSTEM["A"].T @ lesson01.PROOF_SYSTEM["mu"]


def _proof_w():
    values, vectors = np.linalg.eigh(lesson01.PROOF_SYSTEM["M"])
    return vectors @ np.diag(values**-0.5) @ vectors.T @ _proof_c()


def _sphere_rows(sign=1):
    # sign=-1 is the usual slip: v_O = omega x (O - C) with the wrong sign of the contact vector
    X, Y, phi, theta, psi = dynamicsymbols("X Y phi theta psi")
    R = sm.Symbol("R", positive=True)
    t = dynamicsymbols._t
    omega_x = theta.diff(t) * sm.cos(phi) + psi.diff(t) * sm.sin(theta) * sm.sin(phi)
    omega_y = theta.diff(t) * sm.sin(phi) - psi.diff(t) * sm.sin(theta) * sm.cos(phi)
    return [X.diff(t) - sign * R * omega_y, Y.diff(t) + sign * R * omega_x]


def _proof_pinv():
    values, vectors = np.linalg.eigh(lesson01.PROOF_SYSTEM["M"])
    return np.linalg.pinv(lesson01.PROOF_SYSTEM["A"] @ vectors @ np.diag(values**-0.5) @ vectors.T)


_PD = lesson01.PROOF_SINGULAR_SYSTEM


def _pd_projector():
    return np.linalg.pinv(_PD["A"]) @ _PD["A"]


def _pd_smallest():
    return float(np.linalg.eigvalsh(_PD["M"] + _pd_projector())[0])


def _proof_projector():
    values, vectors = np.linalg.eigh(lesson01.PROOF_SYSTEM["M"])
    B = lesson01.PROOF_SYSTEM["A"] @ vectors @ np.diag(values**-0.5) @ vectors.T
    return np.eye(3) - np.linalg.pinv(B) @ B


def _floor_model(mu=0.3, push=10.0):
    x, y = dynamicsymbols("x y")
    m, g, F, mu_s = sm.symbols("m g F mu", positive=True)
    return udk.Model([x, y], kinetic_energy=m * (x.diff() ** 2 + y.diff() ** 2) / 2, potential_energy=m * g * y,
                     forces=[F, 0], holonomic=[y],
                     friction=[udk.CoulombFriction(sliding_velocity=x.diff(), coefficient=mu_s)],
                     parameters={m: 2.0, g: 9.81, F: push, mu_s: mu})


def _bead_model(sign=1.0):
    x, y = dynamicsymbols("x y")
    m, k, g = sm.symbols("m kappa g", positive=True)
    return udk.Model([x, y], kinetic_energy=m * (x.diff() ** 2 + y.diff() ** 2) / 2, potential_energy=sign * m * g * y,
                     holonomic=[y - k * x**2], parameters={m: 0.2, k: 0.5, g: 9.81})


WRONG = {
    # (module, check): list of (answers, words the hint must contain)
    (lesson00, "check_1"): [(([2, 3, 2, 3],), "order"), (([2.0, 3.0],), "shape (4,)"), (("2233",), "should be")],
    (lesson00, "check_2"): [(([1 / 3, 1 / 4],), "reciprocal"), ((np.eye(2),), "shape (2,)"), ((5,), "should be")],
    (lesson00, "check_3"): [(([0.0, -19.62],), "the force"), (([0.0, 9.81],), "divide"), (("0, -9.81",), "should be")],
    (lesson00, "check_4"): [((udk.udwadia_kalaba(np.eye(2), [0.0, -9.81], [[1.0, 0.0]], [0.0]),), "accelerates"),
                            (([0.0, 9.81],), "should be"), ((udk.Motion,), "should be")],
    (lesson01, "check_1"): [((DISK_A, -DISK_B), "b_disk differs"), ((DISK_A.T, DISK_B), "2 x 4"), (("A", "b"), "should be")],
    (lesson01, "check_2"): [(([1.0, 2.0], [2.0, -1.0]), "not zero"), (([0.0, 0.0], [1.0, 2.0]), "nonzero"),
                            (([2.0, -1.0], [1.0, 0.0]), "differs from c"), (("2, -1", [1.0, 2.0]), "should be"),
                            (([2.0, -1.0], [1.0, 2.0]), "multiple of I"),  # the M = I answer: issue 19
                            (([2.0, -1.0], [-2.0, -4.0]), "multiple of I"), (([1.0, 8.0], [2.0, -1.0]), "not zero")],
    (lesson01, "check_3"): [((2.0,), "not zero"), ((0.128,), "close"), (("0.128",), "should be"), ((Exception,), "should be")],
    (lesson01, "check_4"): [((False, udk.InconsistentConstraintsError), "compare"), (("no", udk.InconsistentConstraintsError), "compare"),
                            ((True, Exception), "base class"), ((True, ValueError), "base class"),
                            ((True, ZeroDivisionError), "does not raise"), ((True, "InconsistentConstraintsError"), "exception class"),
                            ((True, udk.InconsistentConstraintsError("x", 1.0)), "exception class"), ((1, udk.InconsistentConstraintsError), "True or False")],
    (lesson01, "check_6"): [((lambda M, Q, A, b, c: np.linalg.solve(M, Q),), "A q'' = b"),
                            ((_uk_without_c,), "c = 0"), ((_uk_euclidean,), "multiple of I"),
                            ((lambda M, Q, A, b, c: np.zeros(2),), "shape"), ((_uk_normal_equations,), "redundant row"),
                            ((3.0,), "should be a function")],
    (lesson01, "check_7"): [((_proof_c(), _proof_c(), _proof_c()), "that is c itself"),
                            ((_proof_w(), np.zeros(3), np.zeros(3)), "step 2"), ((_proof_w(), _proof_w(), _proof_w()), "step 3"),
                            (("w", 1, 2), "should be an array")],
    (lesson01, "check_8"): [((np.eye(3) - _proof_projector(), _proof_projector() @ _proof_pinv(), 0.0), "that is B^+ B"),
                            ((_proof_projector(), _proof_pinv(), 0.0), "step 2"),
                            ((_proof_projector(), _proof_projector() @ _proof_pinv(), 1.0), "step 3"),
                            (("P", 1, 2), "should be an array")],
    (lesson01, "check_9"): [((_PD["A"] @ np.linalg.pinv(_PD["A"]), 0.5, [1.0, 1.0, 1.0]), "shape (3, 3)"),  # A A^+ is 1 x 1
                            ((np.eye(3), 0.5, [1.0, 1.0, 1.0]), "full column rank"),
                            ((np.eye(3) - _pd_projector(), 0.5, [1.0, 1.0, 1.0]), "I - A^+ A"),
                            ((_PD["A"].T @ _PD["A"], 0.5, [1.0, 1.0, 1.0]), "A^T A"),
                            ((np.outer([1.0, 2.0, 0.0], [1.0, 0.0, 0.0]), 0.5, [1.0, 1.0, 1.0]), "Penrose condition 4"),
                            ((2 * _pd_projector(), 0.5, [1.0, 1.0, 1.0]), "A^+ on the left"),
                            ((_pd_projector(), 0.0, [1.0, 1.0, 1.0]), "M alone"),
                            ((_pd_projector(), float(np.linalg.eigvalsh(_PD["M"] + _PD["A"].T @ _PD["A"])[0]), [1.0, 1.0, 1.0]), "A^T A"),
                            ((_pd_projector(), 3.0, [1.0, 1.0, 1.0]), "ascending"),
                            ((_pd_projector(), -0.5, [1.0, 1.0, 1.0]), "step 2"),
                            ((_pd_projector(), _pd_smallest(), [0.0, 0.0, 0.0]), "nonzero"),
                            ((_pd_projector(), _pd_smallest(), [1.0, 2.0, 0.0]), "null space of M"),
                            ((_pd_projector(), _pd_smallest(), [2.0, -1.0, 0.0]), "null space of M"),
                            ((_pd_projector(), "0.517", [1.0, 1.0, 1.0]), "should be one"),
                            ((_pd_projector(), _pd_smallest(), [1.0, 1.0]), "shape (3,)")],
    (lesson02, "check_1"): [((100.0,), "edge"), ((40.0,), "not zero"), (("50",), "should be")],
    (lesson02, "check_2"): [((0.02,), "Euler"), ((0.0278,), "close"), ((0.03,), "too large"), ((-0.01,), "positive"), ((True,), "should be")],
    (lesson02, "check_3"): [((0.0025,), "half"), ((0.0,), "phi'(0)"), ((0.01,), "phi(t) = phi(0)"), (("no",), "should be")],
    (lesson02, "check_4"): [((8.0, 16.0), "2 alpha"), ((1.0, 1.0), "eigenvalues"), ((-4.0, 4.0), "not negative"), (("4", 4.0), "should be")],
    (lesson02, "check_5"): [((lambda k, tau: 1 - k * tau,), "Euler"), ((lambda k, tau: math.exp(-k * tau),), "exact flow"),
                            ((lambda k: 1.0,), "expected form"), ((lambda k, tau: "0.9",), "should be"), ((0.9,), "function"),
                            ((Exception,), "function")],
    (lesson03, "check_1"): [((0.3,), "kinetic"), ((0.5,), "slides back"), ((1.5,), "still sticks"), (("0.84",), "should be"), ((-1.0,), "positive")],
    (lesson03, "check_2"): [((4.0**2 / (2 * 9.81 * np.sin(np.radians(20.0))),), "without friction"), ((1.41,), "close"),
                            ((3.0,), "deceleration"), (("1.4",), "should be")],
    (lesson03, "check_3"): [((14.0,), "negative"), ((-8.0,), "path"), (("-14",), "should be")],
    (lesson03, "check_4"): [((True, True, True), "unique_b"), (("yes", "yes", "no"), "unique_b, unique_c"),
                            ((True, "maybe", True), "True or False"), ((1, 0, 1), "True or False")],
    (lesson03, "check_5"): [((_floor_model(mu=0.5),), "sliding forwards"), ((_floor_model(push=0.0),), "sliding forwards"),
                            (("model",), "udk.Model"), ((udk.Model,), "udk.Model")],
    # Painlevé's rod: the other sliding direction, N from the ideal force alone, N = m g, the global 4/3
    (lesson03, "check_6"): [((-1.647005, 3.294009, 1.516051), "sliding to the right"),
                            ((2.300532, 4.601063, 1.516051), "N = |F^L|"), ((2.190194, 4.380388, 1.516051), "lambda_L"),
                            ((3.519888, 7.039777, 1.516051), "||A^T lambda||"), ((0.0, 9.81, 1.5), "N = m g"),
                            ((1.0, 6.535983, 1.5), "N is right"), ((3.26799, 6.53598, 4 / 3), "smallest critical mu"),
                            ((3.267991, 6.535983, 1.2), "set it to zero"), ((3.267991, 6.535983, -1.2), "does exist"),
                            ((3.267991, -6.535983, 1.5), "only pushes"), (("3.27", 6.5, 1.5), "should be"),
                            ((3.267991, 6.535983, float("inf")), "does reach zero"),
                            ((3.267991, 6.535983, 1 / 1.516051), "set it to zero"),
                            ((-3.267991, 6.535983, 1.516051), "N is right"),
                            ((6.535983, 3.267991, 1.516051), "4 x 4 system")],
    (lesson04, "check_1"): [(("scleronomic", "rheonomic", "nonholonomic", "nonholonomic"), "(d)"),
                            (("rheonomic", "rheonomic", "nonholonomic", "scleronomic"), "(a)"),
                            (("holonomic", "rheonomic", "nonholonomic", "scleronomic"), "which kind"),
                            ((1, 2, 3, 4), "should be one of")],
    (lesson04, "check_2"): [((-0.384,), "-D"), ((0.768,), "negative"), ((-1.0,), "Eq. (3.63)"), (("x",), "should be")],
    (lesson04, "check_3"): [((9.81 * np.cos(0.5),), "m l theta'^2"), ((-10.769,), "positive"), ((5.0,), "circular"), ((None, ), "replace")],
    (lesson04, "check_4"): [((_bead_model(sign=-1.0),), "Lagrange's equation"), ((3,), "udk.Model"), ((udk.Model,), "udk.Model")],
    (lesson04, "check_5"): [((0.0,), "virtual"), ((0.25,), "negative"), ((-1.0,), "-m j^2 / R^3"), (("-0.25",), "should be")],
    (lesson00, "check_5"): [((20.0, "because of the reason I give here"), "real floor would allow"), ((-9.81, "because of the reason I give here"), "model answer"),
                            ((0.0, "floor"), "at least 5 words"), ((0.0, 3), "should be a sentence")],
    (lesson01, "check_5"): [((True, "because of the reason I give here"), "direction of c"), (("yes", "because of the reason I give here"), "model answer"),
                            ((False, ""), "at least 5 words"), (("maybe", "because of the reason I give here"), "True or False")],
    (lesson02, "check_6"): [((True, "because of the reason I give here"), "inside the method's region"), ((False, None), "should be a sentence")],
    (lesson03, "check_7"): [((False, "because of the reason I give here"), "massless direction"), ((True, "rank"), "at least 5 words")],
    (lesson04, "check_7"): [((_sphere_rows(sign=-1), "nonholonomic"), "allow other velocities"),
                            ((_sphere_rows(), "scleronomic"), "as a pair they are nonholonomic"),
                            ((_sphere_rows(), "holonomic"), "which kind"), (("rows", "nonholonomic"), "list of two")],
    (lesson04, "check_6"): [(("nonholonomic", "because of the reason I give here"), "integrating factor"), (("scleronomic", "because of the reason I give here"), "model answer"),
                            (("holonomic", "because of the reason I give here"), "which kind")],
}


@pytest.mark.parametrize("module, name, answers, hint",
                         [pytest.param(m, n, a, h, id=f"{m.__name__[-8:]}.{n}-{i}") for (m, n), cases in WRONG.items()
                          for i, (a, h) in enumerate(cases)])
def test_wrong_answer_gets_a_hint_and_no_exception(module, name, answers, hint):
    verdict = getattr(module, name)(*answers)
    assert isinstance(verdict, Feedback) and not verdict.correct
    assert hint in verdict.message, verdict.message
    assert "Traceback" not in verdict.message


def test_the_battery_covers_every_check():
    covered = {(m, n) for m, n in WRONG}
    for module in CHECK_MODULES.values():
        for name, _ in inspect.getmembers(module, inspect.isfunction):
            if name.startswith("check_"):
                assert (module, name) in covered, f"{module.__name__}.{name} has no wrong answers in the battery"


JUNK = ["abc", Exception, ValueError("x"), object(), math.nan, {"a": 1}, [], 1j, b"1"]


@pytest.mark.parametrize("module, name", [(m, n) for m in CHECK_MODULES.values()
                                          for n, _ in inspect.getmembers(m, inspect.isfunction) if n.startswith("check_")])
@pytest.mark.parametrize("junk", JUNK, ids=[type(j).__name__ if not isinstance(j, type) else j.__name__ for j in JUNK])
def test_junk_of_any_kind_is_refused_with_a_message(module, name, junk):
    check = getattr(module, name)
    arity = sum(p.default is inspect.Parameter.empty for p in inspect.signature(check).parameters.values())
    verdict = check(*([junk] * arity))
    assert isinstance(verdict, Feedback) and not verdict.correct and verdict.message


# -- what the checks compute ----------------------------------------------------------------------


def test_lesson01_check_9_system_meets_and_breaks_the_rank_condition_and_accepts_any_scaling():
    # the exercise only proves something if [M; A] has full column rank and [M; A2] does not
    M, A, A2 = _PD["M"], _PD["A"], _PD["A2"]
    assert np.linalg.matrix_rank(M) == 2 and np.all(np.linalg.eigvalsh(M) > -1e-12)
    assert np.linalg.matrix_rank(np.vstack([M, A])) == 3 and np.linalg.matrix_rank(np.vstack([M, A2])) == 2
    # independent route to the smallest eigenvalue: the roots of the characteristic polynomial of M + P,
    # with P = a a^T / |a|^2 written in closed form for one row a (no pinv, no eigvalsh)
    roots = np.sort(np.roots(np.poly(M + np.outer(A[0], A[0]) / (A[0] @ A[0]))).real)
    assert abs(roots[0] - _pd_smallest()) < 1e-9 and roots[0] > 0.5
    for v in ([1.0, 1.0, 1.0], [-3.0, -3.0, -3.0], np.full(3, 1e-3)):
        assert lesson01.check_9(_pd_projector(), roots[0], v), v


def test_lesson01_check_3_moves_the_explorer_to_a_particle_without_acceleration(monkeypatch):
    monkeypatch.setenv("MPLBACKEND", "Agg")
    from udk_notebooks.widgets import InclinedLineExplorer

    explorer = InclinedLineExplorer().set(slope=2.0)
    slope = 1 / (9.81 - 2)
    assert lesson01.check_3(slope, explorer=explorer)
    assert explorer.values["slope"] == slope and not explorer.error
    assert np.abs(explorer.result.trajectory.qdd).max() < 1e-9
    speed = np.linalg.norm(explorer.result.trajectory.qd, axis=1)
    assert np.ptp(speed) < 1e-9 and speed[0] > 0  # glides at its launch speed
    assert not lesson01.check_3(2.0, explorer=explorer) and explorer.values["slope"] == slope  # a wrong answer leaves it


def test_lesson04_classify_sorts_the_chapter_examples():
    x, y, z = dynamicsymbols("x y z")
    t = dynamicsymbols._t
    a = sm.Symbol("a", positive=True)
    assert lesson04.classify(x**2 + y**2 - 1, [x, y]) == "scleronomic"
    assert lesson04.classify(x**2 + y**2 - (a * t) ** 2, [x, y]) == "rheonomic"
    assert lesson04.classify(z.diff(t) - y * x.diff(t), [x, y, z]) == "nonholonomic"
    assert lesson04.classify(y * x.diff(t) + x * y.diff(t), [x, y, z]) == "scleronomic"  # d(xy)/dt = 0
    assert lesson04.classify(z * x.diff(t) + z.diff(t), [x, y, z]) == "scleronomic"  # integrating factor 1/z


@pytest.mark.parametrize("row, integral", [
    ("x' - 1", "x - t"), ("x' - 2 t", "x - t**2"), ("x x' + y y' - t", "(x**2 + y**2 - t**2) / 2"),
])
def test_lesson04_classify_finds_time_dependent_velocity_rows_holonomic(row, integral):
    # issue 19: affine and time-dependent velocity rows are integrable when their Pfaffian form
    # w . dq + w_t dt is; each of these is d f = 0 for the f given, a rheonomic holonomic constraint
    x, y = dynamicsymbols("x y")
    t = dynamicsymbols._t
    rows = {"x' - 1": x.diff(t) - 1, "x' - 2 t": x.diff(t) - 2 * t, "x x' + y y' - t": x * x.diff(t) + y * y.diff(t) - t}
    assert lesson04.classify(rows[row], [x, y]) == "rheonomic"
    found = lesson04.integral(rows[row], [x, y])
    expected = sm.sympify(integral, locals={"x": x, "y": y, "t": t})
    # an integral is determined up to a function of itself; these are found exactly
    assert sm.simplify(found - expected) == 0, found
    assert sm.simplify(found.diff(t) - rows[row]) == 0  # the row is df/dt = 0


def test_lesson04_classify_keeps_the_rolling_disk_nonholonomic_and_tests_rows_together():
    x, y, z, varphi, theta = dynamicsymbols("x y z varphi theta")
    t = dynamicsymbols._t
    r = sm.Symbol("r", positive=True)
    rows = [x.diff(t) - r * varphi.diff(t) * sm.sin(theta), y.diff(t) + r * varphi.diff(t) * sm.cos(theta)]
    coordinates = [x, y, varphi, theta]
    assert lesson04.classify(rows, coordinates) == "nonholonomic"
    assert all(lesson04.classify(row, coordinates) == "nonholonomic" for row in rows)
    assert lesson04.integral(rows[0], coordinates) is None
    # z' - y x' alone is not integrable, but with y' = 0 beside it the pair says z - y x = const
    pair = [z.diff(t) - y * x.diff(t), y.diff(t)]
    assert lesson04.classify(pair[0], [x, y, z]) == "nonholonomic"
    assert lesson04.classify(pair, [x, y, z]) == "scleronomic"
    # a time-dependent factor does not make a row rheonomic: e^t (x x' + y y') = 0 keeps x^2 + y^2
    assert lesson04.classify(sm.exp(t) * (x * x.diff(t) + y * y.diff(t)), [x, y]) == "scleronomic"
    assert lesson04.classify(x.diff(t) - x, [x]) == "rheonomic"  # x e^(-t) = const


def test_lesson04_classify_ignores_factors_of_time_alone_and_integrates_them_away():
    # e^t (x^2 + y^2 - 1) = 0 is the fixed unit circle: a factor free of the coordinates does not move
    # the zero set, so the row is scleronomic although t appears in it; a factor holding x does move it
    x, y = dynamicsymbols("x y")
    t = dynamicsymbols._t
    assert lesson04.classify(sm.exp(t) * (x**2 + y**2 - 1), [x, y]) == "scleronomic"
    assert lesson04.classify((1 + t**2) * (x - t), [x, y]) == "rheonomic"
    assert lesson04.classify([sm.exp(t) * (x - 1), y.diff(t) - x.diff(t)], [x, y]) == "scleronomic"
    # the common factor e^t is divided out before the potential is sought
    found = lesson04.integral(sm.exp(t) * (x * x.diff(t) + y * y.diff(t)), [x, y])
    assert found is not None and sm.simplify(found.diff(t) - (x * x.diff(t) + y * y.diff(t))) == 0
    # y x' - x y' = 0 is a ray through the origin (y / x fixed); its integral is real, not a complex log
    ray = y * x.diff(t) - x * y.diff(t)
    assert lesson04.classify(ray, [x, y]) == "scleronomic"
    found = lesson04.integral(ray, [x, y])
    assert found is not None and not found.has(sm.I)
    assert sm.simplify(found.diff(t) * (x**2 + y**2) - ray) == 0  # integrating factor 1 / (x^2 + y^2)


def test_lesson04_check_7_reads_the_rows_at_a_time_other_than_zero():
    # a row with a coefficient that carries t agrees with rolling at t = 0 only; it must be refused
    rows = _sphere_rows()
    t = dynamicsymbols._t
    theta = dynamicsymbols("theta")
    wrong = [rows[0] + t * theta.diff(t), rows[1]]
    feedback = lesson04.check_7(wrong, "nonholonomic")
    assert not feedback and "allow other velocities" in str(feedback)
    assert lesson04.check_7(rows, "nonholonomic")


def test_lesson04_classify_refuses_what_it_cannot_test():
    x, y = dynamicsymbols("x y")
    t = dynamicsymbols._t
    with pytest.raises(ValueError, match="not affine in the velocities"):
        lesson04.classify(x.diff(t) ** 2 + y.diff(t) ** 2 - 1, [x, y])
    with pytest.raises(ValueError, match="list every coordinate"):
        lesson04.classify(x.diff(t) - y, [x])
    with pytest.raises(ValueError, match="`coordinates`"):
        lesson04.classify(x.diff(t), [])
    for row in (sm.Integer(1), sm.exp(t), t):  # no coordinate: not a constraint (1 = 0 used to divide by zero)
        with pytest.raises(ValueError, match="none of the coordinates"):
            lesson04.classify(row, [x])
        with pytest.raises(ValueError, match="none of the coordinates"):
            lesson04.integral(row, [x])


def test_lesson02_rk4_boundary_matches_the_package_interval():
    assert math.isclose(lesson02._rk4_boundary(), udk.stable_gain_interval("rk4", 1.0)[1], rel_tol=1e-9)


def test_checks_do_not_depend_on_the_widgets():
    # imports point down: the exercise checks use the solver and the models, never the explorers
    for module in CHECK_MODULES.values():
        imports = re.findall(r"^(?:from|import) (\S+)", inspect.getsource(module), flags=re.M)
        assert not any("widgets" in name for name in imports), module.__name__


def test_readme_lists_every_lesson_with_its_time(repo_root: Path):
    readme = (repo_root / "README.md").read_text(encoding="utf-8")
    listed = dict(re.findall(r"^- `(\d\d[a-z]?_\w+\.ipynb)` \((\d+) min\)", readme, flags=re.M))
    for path in find_lesson_notebooks():
        assert path.name in listed, f"README.md has no line for {path.name} in its lesson list"
        text = "\n".join(_source(c) for c in _cells(path) if c["cell_type"] == "markdown")
        time = re.search(r"\*\*Time to learn\*\*: about (\d+) minutes", text)
        assert time and time.group(1) == listed[path.name], (
            f"{path.name}: README says {listed[path.name]} min, the lesson says {time.group(1) if time else 'nothing'}")
