"""The plain route of :meth:`CompiledModel.solve_modes` (no friction modes) against the general solver.

The integrator calls ``solve_modes(t, q, qd, p, ())`` at every right-hand
side; that route skips the work only contacts need and lets the pattern
kernel answer where it vouches. These tests check it against
:func:`udk_notebooks.core.udwadia_kalaba` (Udwadia & Kalaba, "A new
perspective on constrained motion", 1992, Eq. 7) on random states of every
catalogue model, and that singular, redundant and inconsistent systems are
still decided by the general route.
"""

import math
from functools import lru_cache

import numpy as np
import pytest
import sympy as sm
from hypothesis import given, settings
from hypothesis import strategies as st
from sympy.physics.mechanics import dynamicsymbols

from udk_notebooks import examples
from udk_notebooks.core import udwadia_kalaba
from udk_notebooks.errors import InconsistentConstraintsError
from udk_notebooks.model import Model

t = dynamicsymbols._t
x, y = dynamicsymbols("x y")
xd, yd = x.diff(t), y.diff(t)
m, g, l = sm.symbols("m g l", positive=True)

CATALOGUE = {
    "carriage_pendulum": lambda: examples.carriage_pendulum.model(),
    "carriage_pendulum_minimal": lambda: examples.carriage_pendulum.minimal_model(),
    "chain_3": lambda: examples.chain.n_link_chain(3),
    "double_pendulum_minimal": lambda: examples.double_pendulum.minimal_model(),
    "double_pendulum_cartesian": lambda: examples.double_pendulum.cartesian_model(),
    "double_pendulum_points": lambda: examples.double_pendulum.cartesian_model("points"),
    "friction_cart_pendulum": lambda: examples.friction_cart_pendulum.model(),
    "growing_circle": lambda: examples.growing_circle.model(),
    "incline_friction": lambda: examples.incline_friction.model(),
    "inclined_line": lambda: examples.inclined_line.model(),
    "kepler": lambda: examples.kepler.model(),
    "ladder": lambda: examples.ladder.model(),
    "painleve_rod": lambda: examples.painleve_rod.model(),
    "rolling_disk": lambda: examples.rolling_disk.model(),
    "singular_mass": lambda: examples.singular_mass.model(),
}


@lru_cache(maxsize=None)
def compiled(name):
    return CATALOGUE[name]().compile()


def general(cm, t, q, qd, p, correction=None):
    """The general solver on the compiled matrices: an independent route to the same motion."""
    M, Q, A, b, C = cm.evaluate(t, q, qd, p)
    if correction is not None:
        b = b + correction
    return udwadia_kalaba(M, Q, A, b, C if cm.has_nonideal else None)


def assert_same_motion(fast, slow):
    for name in ("qdd", "impressed", "ideal", "nonideal"):
        a, b = getattr(fast, name), getattr(slow, name)
        scale = max(1.0, float(np.max(np.abs(b), initial=0.0)))
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12 * scale, err_msg=name)


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_plain_route_agrees_with_the_general_solver(name):
    cm = compiled(name)
    rng = np.random.default_rng(sum(map(ord, name)))
    checked = 0
    for _ in range(25):
        q = rng.uniform(-1.5, 1.5, cm.n) + 0.1
        qd = rng.uniform(-2.0, 2.0, cm.n)
        p = cm.defaults * rng.uniform(0.5, 2.0, cm.defaults.shape)
        time = float(rng.uniform(0.0, 3.0))
        try:
            slow = general(cm, time, q, qd, p)
        except (ValueError, ArithmeticError):  # undefined there (the general route refuses): so must the fast one
            with pytest.raises((ValueError, ArithmeticError)):
                cm.solve_modes(time, q, qd, p, ())
            continue
        fast, ratios = cm.solve_modes(time, q, qd, p, ())
        assert ratios.shape == (0,)
        assert_same_motion(fast, slow)
        checked += 1
    assert checked >= 10, f"only {checked} of 25 random states of {name} could be evaluated"


def test_plain_route_adds_the_stabilization_correction():
    cm = compiled("double_pendulum_cartesian")
    q, qd = examples.double_pendulum.to_cartesian(*examples.double_pendulum.initial_state(2.0, 1.0))
    correction = np.linspace(-0.5, 0.7, cm.m)
    fast, _ = cm.solve_modes(0.0, q, qd, cm.defaults, (), correction)
    assert_same_motion(fast, general(cm, 0.0, q, qd, cm.defaults, correction))
    plain, _ = cm.solve_modes(0.0, q, qd, cm.defaults, ())
    assert np.max(np.abs(fast.qdd - plain.qdd)) > 1e-3  # the correction changed the answer


def pendulum(holonomic, kinetic=None):
    return Model([x, y], kinetic_energy=kinetic if kinetic is not None else m * (xd**2 + yd**2) / 2,
                 potential_energy=m * g * y, holonomic=holonomic, parameters={m: 1.3, g: 9.81, l: 1.2})


@settings(max_examples=30, deadline=None)
@given(theta=st.floats(-3.0, 3.0), rate=st.floats(-3.0, 3.0))
def test_redundant_rows_take_the_general_route(theta, rate):
    """A constraint written twice: the Gram matrix is singular, and the motion is the pendulum's (closed form)."""
    cm = redundant_pendulum()
    q = 1.2 * np.array([math.sin(theta), -math.cos(theta)])
    qd = 1.2 * rate * np.array([math.cos(theta), math.sin(theta)])
    motion, _ = cm.solve_modes(0.0, q, qd, cm.defaults, ())
    # theta'' = -(g / l) sin(theta), and x'' = l (theta'' cos - theta'^2 sin), y'' = l (theta'' sin + theta'^2 cos)
    acc = -9.81 / 1.2 * math.sin(theta)
    expected = 1.2 * np.array([acc * math.cos(theta) - rate**2 * math.sin(theta),
                               acc * math.sin(theta) + rate**2 * math.cos(theta)])
    np.testing.assert_allclose(motion.qdd, expected, rtol=0, atol=1e-10 * (1 + rate**2))


@lru_cache(maxsize=None)
def redundant_pendulum():
    return pendulum([x**2 + y**2 - l**2, 2 * (x**2 + y**2 - l**2)]).compile()


def test_inconsistent_rows_are_refused():
    """x = t^2 and x = 2 t^2 ask for x'' = 2 and x'' = 4 at once: no motion, and the plain route says so."""
    cm = pendulum([x - t**2, x - 2 * t**2]).compile()
    with pytest.raises(InconsistentConstraintsError):
        cm.solve_modes(0.5, np.array([0.25, 0.0]), np.array([1.0, 0.0]), cm.defaults, ())


def test_singular_mass_takes_the_general_route():
    """M = diag(m, 0) with y = x: [M; A] has full rank, and x'' = y'' = 0 with F^L balancing gravity on y."""
    cm = pendulum([y - x], kinetic=m * xd**2 / 2).compile()
    motion, _ = cm.solve_modes(0.0, np.array([0.3, 0.3]), np.array([0.1, 0.1]), cm.defaults, ())
    slow = general(cm, 0.0, np.array([0.3, 0.3]), np.array([0.1, 0.1]), cm.defaults)
    assert_same_motion(motion, slow)
    # Gravity m g acts on y; y = x moves the mass m of x: (m) x'' = -m g, so x'' = y'' = -g.
    np.testing.assert_allclose(motion.qdd, [-9.81, -9.81], rtol=1e-12)
