"""Findings of the public-API fuzz (issue 22): crashes, hangs, unclear errors and false refusals.

Each test turns one reproducer of ``../shared/repro`` (named in its docstring)
into a check of the right answer (a closed form or an independent route) or
of a refusal that names the argument.
"""

from __future__ import annotations

import keyword
import math

import numpy as np
import pytest
import sympy as sm
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sympy.physics.mechanics import dynamicsymbols

import udk_notebooks as udk
from udk_notebooks.model import TIME

x, y = dynamicsymbols("x y")
Q_STATE, QD_STATE = np.array([0.3]), np.array([0.1])


# -- r14: parameter names that shadow constants, functions or time -----------------------------------------
def _line_model(name: str, value: float = 2.0) -> udk.Model:
    """``T = x'^2 / 2``, ``V = k x + pi x^2 + E x^3 / 10 + sqrt(1 + x^2) + gamma(x + 3) / 10``, force ``cos(t)``.

    The parameter ``k`` is called ``name``; every sympy constant and function
    that a parameter could shadow appears beside it.
    """
    k = sm.Symbol(name)
    potential = k * x + sm.pi * x**2 + sm.E * x**3 / 10 + sm.sqrt(1 + x**2) + sm.gamma(x + 3) / 10
    return udk.Model([x], kinetic_energy=x.diff() ** 2 / 2, potential_energy=potential,
                     forces=[sm.cos(TIME)], parameters={k: value})


def _line_acceleration(k: float, q: float, t: float) -> float:
    """``x'' = -dV/dx + cos t`` of :func:`_line_model`, written out by hand."""
    dpot = (k + 2 * math.pi * q + 3 * math.e * q**2 / 10 + q / math.sqrt(1 + q**2)
            + math.gamma(q + 3) * float(sm.digamma(q + 3)) / 10)
    return -dpot + math.cos(t)


@pytest.mark.parametrize("name", ["pi", "e", "E", "gamma", "sqrt", "exp", "cos", "x0", "lambda", "math", "I"])
def test_r14_parameter_named_like_a_constant_or_function(name):
    """r14: a parameter called ``pi``, ``e``, ``gamma``... is a parameter, and sympy's ``pi`` stays pi."""
    cm = _line_model(name).compile()
    qdd = cm.motion(0.7, Q_STATE, QD_STATE).qdd[0]
    assert qdd == pytest.approx(_line_acceleration(2.0, 0.3, 0.7), rel=1e-12)
    qdd = cm.motion(0.7, Q_STATE, QD_STATE, **{name: 5.0}).qdd[0]
    assert qdd == pytest.approx(_line_acceleration(5.0, 0.3, 0.7), rel=1e-12)


def test_r14_simulate_output_with_shadowing_parameter_names():
    """r14: the output step (energy, powers) sees the same parameter as the integrator."""
    run = udk.simulate(_line_model("pi"), (0, 0.2), [0.3], [0.1], method="rk4", step=1e-3)
    reference = udk.simulate(_line_model("k"), (0, 0.2), [0.3], [0.1], method="rk4", step=1e-3)
    np.testing.assert_allclose(run.q, reference.q, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(run.energy, reference.energy, rtol=1e-13)


def test_r14_parameter_named_t_is_refused():
    """r14: ``Symbol("t")`` is the time of every model; as a parameter it froze time. It is refused by name."""
    F0, t = sm.symbols("F0 t")
    with pytest.raises(ValueError, match=r"`parameters`: .*`t` is the time"):
        udk.Model([x], kinetic_energy=x.diff() ** 2 / 2, forces=[F0 * sm.cos(t)], parameters={F0: 1.0, t: 0.0})
    with pytest.raises(ValueError, match=r"`parameters`: .*`t` is the time"):
        udk.Model([x], kinetic_energy=x.diff() ** 2 / 2, forces=[F0 * sm.cos(t)], parameters={"F0": 1.0, "t": 0.0})


def test_r14_time_dependent_force_is_not_frozen():
    """r14: ``F0 cos t`` on a unit mass from rest gives ``x = F0 (1 - cos t)``."""
    F0 = sm.Symbol("F0")
    model = udk.Model([x], kinetic_energy=x.diff() ** 2 / 2, forces=[F0 * sm.cos(TIME)], parameters={F0: 1.0})
    run = udk.simulate(model, (0, 3), [0.0], [0.0], method="rk4", step=0.01)
    assert run.q[-1, 0] == pytest.approx(1 - math.cos(3.0), rel=1e-8)


RISKY_NAMES = ["pi", "e", "E", "I", "t", "gamma", "sqrt", "exp", "cos", "sin", "log", "x0", "x1", "q", "p",
               "math", "numpy", "np", "scipy", "builtins", "abs", "range", "float", "_p0", "_t", "Dummy",
               "a b", "1x", "m'", "k.1", "oo", "nan", "zoo", "S", "N", "Q", "O", *keyword.kwlist[:12]]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.one_of(st.sampled_from(RISKY_NAMES), st.text(min_size=1, max_size=6)))
def test_r14_any_parameter_name_works_or_is_refused(name):
    """r14 (property): any name a user may choose gives the motion of a neutral name, or a ValueError naming it."""
    try:
        model = _line_model(name)
    except ValueError as exc:
        assert "`parameters`" in str(exc) and repr(name) in str(exc) or f"`{name}`" in str(exc), str(exc)
        return
    cm = model.compile()
    assert cm.motion(0.7, Q_STATE, QD_STATE).qdd[0] == pytest.approx(_line_acceleration(2.0, 0.3, 0.7), rel=1e-12)


# -- r13: special functions in every generated function -------------------------------------------------
@pytest.mark.parametrize("potential, force", [
    (sm.besselj(0, x), lambda q: float(sm.besselj(1, q))),  # -d/dx J0 = J1
    (sm.erf(x), lambda q: -2 / math.sqrt(math.pi) * math.exp(-q * q)),
    (sm.gamma(x + 2), lambda q: -math.gamma(q + 2) * float(sm.digamma(q + 2))),
], ids=["besselj", "erf", "gamma"])
def test_r13_special_functions_in_simulate_output(potential, force):
    """r13: a potential with a Bessel function, erf or gamma runs through simulate, output step included."""
    model = udk.Model([x], kinetic_energy=x.diff() ** 2 / 2, potential_energy=potential)
    assert model.compile().motion(0.0, Q_STATE, QD_STATE).qdd[0] == pytest.approx(force(0.3), rel=1e-12)
    run = udk.simulate(model, (0, 0.5), [0.3], [0.1], method="rk4", step=1e-3)
    assert run.qdd[0, 0] == pytest.approx(force(0.3), rel=1e-12)
    exact_energy = 0.1**2 / 2 + float(potential.subs(x, 0.3))
    np.testing.assert_allclose(run.energy, exact_energy, rtol=1e-9)  # a conservative run keeps its energy


# -- r12: Abs in a Model ----------------------------------------------------------------------------------
def test_r12_abs_in_the_potential_differentiates_to_sign():
    """r12: ``V = k |x|`` gives the force ``-k sign(x)`` (the coordinates are real)."""
    k = sm.Symbol("k")
    model = udk.Model([x, y], kinetic_energy=(x.diff() ** 2 + y.diff() ** 2) / 2, potential_energy=k * sm.Abs(x),
                      parameters={k: 1.5})
    assert sm.simplify(model.Q[0] + k * sm.sign(x)) == 0
    cm = model.compile()
    assert cm.motion(0.0, [0.4, 0.0], [0.0, 0.0]).qdd.tolist() == pytest.approx([-1.5, 0.0], rel=1e-15)
    assert cm.motion(0.0, [-0.4, 0.0], [0.0, 0.0]).qdd.tolist() == pytest.approx([1.5, 0.0], rel=1e-15)
    run = udk.simulate(model, (0, 0.5), [0.5, 0.0], [0.0, 0.0], method="rk4", step=1e-3)
    assert run.q[-1, 0] == pytest.approx(0.5 - 1.5 * 0.5**2 / 2, rel=1e-10)  # constant force until x = 0


def test_r12_kink_in_a_constraint_is_refused_by_name():
    """r12: the guide ``y = |x|`` differentiated twice has a Dirac delta at the kink: refused, naming the row."""
    with pytest.raises(ValueError, match=r"`holonomic\[0\]`.*kink"):
        udk.Model([x, y], kinetic_energy=(x.diff() ** 2 + y.diff() ** 2) / 2, potential_energy=9.81 * y,
                  holonomic=[y - sm.Abs(x)])
    with pytest.raises(ValueError, match=r"`potential_energy`.*kink"):
        udk.Model([x], kinetic_energy=x.diff() ** 2 / 2, potential_energy=sm.Heaviside(x))
