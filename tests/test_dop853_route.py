"""The fast route of the double pendulum explorer: ``simulate(method="dop853")`` and ``CompiledModel.accelerations``.

Each faster route is checked against the general one: the generated float
Cholesky against ``core.solve`` (to 1e-12), Hairer's Fortran DOP853 against a
tight solve_ivp run (to its tolerance), and the refusals and failures of the
general route are kept (a missing ``t_eval``, friction contacts, a run that
diverges or cannot be evaluated).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sm
from sympy.physics.mechanics import dynamicsymbols

from udk_notebooks.compiled import _free_solver
from udk_notebooks.errors import SimulationError
from udk_notebooks.examples import double_pendulum, incline_friction
from udk_notebooks.model import Model
from udk_notebooks.simulation import simulate

TIMES = np.linspace(0.0, 3.0, 121)


@pytest.fixture(scope="module")
def models():
    return double_pendulum.minimal_model("rods").compile(), double_pendulum.cartesian_model("rods").compile()


def test_float_cholesky_equals_the_general_route(models):
    minimal = models[0]
    rng = np.random.default_rng(3)
    for _ in range(50):
        q, qd = rng.uniform(-3, 3, 2), rng.uniform(-4, 4, 2)
        p = minimal.parameters(m1=rng.uniform(0.1, 5), m2=rng.uniform(0.1, 5), l1=rng.uniform(0.1, 3),
                               l2=rng.uniform(0.1, 3), k1=rng.uniform(0, 50), k2=rng.uniform(0, 50))
        fast = minimal.accelerations(0.0, q, qd, p)
        general = minimal._solve_plain(0.0, q, qd, p).qdd
        assert np.allclose(fast, general, rtol=1e-12, atol=1e-12 * np.abs(general).max())


def test_kernel_accelerations_equal_the_general_route(models):
    """The constrained plain route (Cartesian pins): q'' from the scalar kernel against ``core.solve``."""
    from udk_notebooks.core import scale_rows, solve

    cartesian = models[1]
    rng = np.random.default_rng(5)
    for _ in range(50):
        q, qd = double_pendulum.to_cartesian(rng.uniform(-3, 3, 2), rng.uniform(-4, 4, 2))
        q = q + rng.normal(0, 1e-3, 6)  # off the constraints too: the route must not rely on them
        p = cartesian.parameters(m1=rng.uniform(0.1, 5), m2=rng.uniform(0.1, 5), l1=rng.uniform(0.1, 3),
                                 l2=rng.uniform(0.1, 3), k1=rng.uniform(0, 50), k2=rng.uniform(0, 50))
        fast = cartesian.accelerations(0.0, q, qd, p)
        M, Q, A, b, _, _ = cartesian._evaluate(0.0, q, qd, p)
        general = solve(M, Q, *scale_rows(A, b)).qdd
        assert np.allclose(fast, general, rtol=1e-12, atol=1e-12 * np.abs(general).max())
        assert np.array_equal(fast, cartesian._solve_plain(0.0, q, qd, p).qdd)  # the very kernel of the samples


def test_kernel_accelerations_leave_a_singular_mass_matrix_to_the_general_route():
    points = double_pendulum.cartesian_model("points").compile()  # M = diag(m1, m1, 0, m2, m2, 0)
    q, qd = double_pendulum.to_cartesian([1.2, 0.4], [0.3, -0.5], "points")
    p = points.parameters()
    assert points.kernel.qdd_solver(p) is None  # the mass factors refuse M
    minimal = double_pendulum.minimal_model("points").compile()
    expected = minimal.accelerations(0.0, np.array([1.2, 0.4]), np.array([0.3, -0.5]), minimal.parameters())
    assert np.allclose(points.accelerations(0.0, q, qd, p)[[2, 5]], expected, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize(("formulation", "bodies"), [
    ("minimal", "rods"),  # generated float Cholesky
    ("cartesian", "rods"),  # scalar kernel
    ("cartesian", "points"),  # singular M: the general route
], ids=["free solver", "scalar kernel", "general route"])
def test_plain_rate_is_the_plain_route_with_its_parameters_bound(formulation, bodies):
    build = double_pendulum.minimal_model if formulation == "minimal" else double_pendulum.cartesian_model
    cm = build(bodies).compile()
    rng = np.random.default_rng(11)
    for _ in range(20):
        q, qd = rng.uniform(-3, 3, 2), rng.uniform(-4, 4, 2)
        if formulation == "cartesian":
            q, qd = double_pendulum.to_cartesian(q, qd, bodies)
        p = cm.parameters(m1=rng.uniform(0.1, 5), m2=rng.uniform(0.1, 5), l1=rng.uniform(0.1, 3), k1=rng.uniform(0, 50))
        t = float(rng.uniform(0, 5))
        rate = cm.plain_rate(p)(t, np.concatenate([q, qd]))
        assert np.array_equal(rate, np.concatenate([qd, cm.accelerations(t, q, qd, p)]))
    with pytest.raises(ValueError, match="`p` must hold"):
        cm.plain_rate(p[:-1])


def test_float_cholesky_declines_what_the_general_route_must_decide():
    solve = _free_solver(2, [0, 1, 2, 3, 4, 5])  # M row by row, then Q
    assert np.allclose(solve([2.0, 0.0, 0.0, 4.0, 2.0, 4.0]), [1.0, 1.0], rtol=1e-15)
    assert solve([1.0, 1.0, 1.0, 1.0, 1.0, 1.0]) is None  # singular M
    assert solve([1.0, 0.0, 0.0, -1.0, 1.0, 1.0]) is None  # indefinite M
    assert solve([1.0, 0.0, 0.0, 1.0, math.nan, 1.0]) is None  # not finite: the general route names it
    assert solve([1.0, 0.0, 0.0, 1.0, math.inf, 1.0]) is None
    # a pivot just above RANK_RTOL (1e-10) relative to its diagonal is kept, one below is not
    assert solve([1.0, 1.0, 1.0, 1.0 + 1e-8, 0.0, 1.0]) is not None
    assert solve([1.0, 1.0, 1.0, 1.0 + 1e-11, 0.0, 1.0]) is None


@pytest.mark.parametrize("formulation", [0, 1], ids=["joint angles", "Cartesian"])
@pytest.mark.parametrize("angles", [(1.2, 0.4), (2.0, 1.0)])
def test_dop853_agrees_with_a_tight_reference_run(models, formulation, angles):
    cm = models[formulation]
    q0, qd0 = double_pendulum.initial_state(*angles)
    if formulation:
        q0, qd0 = double_pendulum.to_cartesian(q0, qd0, "rods")
    reference = simulate(cm, (0.0, 3.0), q0, qd0, method="DOP853", rtol=1e-13, atol=1e-13, t_eval=TIMES)
    fast = simulate(cm, (0.0, 3.0), q0, qd0, method="dop853", rtol=1e-9, atol=1e-11, t_eval=TIMES)
    general = simulate(cm, (0.0, 3.0), q0, qd0, method="DOP853", rtol=1e-9, atol=1e-11, t_eval=TIMES)
    assert fast.status == "ok" and np.array_equal(fast.t, TIMES)
    fast_error = np.abs(fast.q - reference.q).max()
    assert fast_error < 1e-7  # the tolerance (rtol 1e-9) grown over the chaotic swing
    assert fast_error < 10 * np.abs(general.q - reference.q).max() + 1e-9  # as good as solve_ivp's DOP853
    assert np.abs(fast.energy - fast.energy[0]).max() < 1e-6
    # the output at the samples comes from the same sampling code: forces of the same states agree
    assert np.allclose(fast.ideal, reference.ideal, atol=1e-5)


def test_dop853_refuses_what_it_cannot_do(models):
    q0, qd0 = double_pendulum.initial_state(1.0, 0.5)
    with pytest.raises(ValueError, match="t_eval"):
        simulate(models[0], (0.0, 1.0), q0, qd0, method="dop853")
    friction = incline_friction.model()
    q, qd = incline_friction.initial_state()
    with pytest.raises(ValueError, match="friction"):
        simulate(friction, (0.0, 1.0), q, qd, method="dop853", t_eval=[0.0, 1.0])


t = dynamicsymbols._t
x = dynamicsymbols("x")


def test_dop853_stops_a_diverging_run():
    blowup = Model([x], kinetic_energy=x.diff(t) ** 2 / 2, potential_energy=-x**4 / 4)  # x'' = x^3: finite-time blow-up
    traj = simulate(blowup, (0.0, 3.0), [1.0], [0.0], method="dop853", t_eval=np.linspace(0, 3, 31))
    general = simulate(blowup, (0.0, 3.0), [1.0], [0.0], method="DOP853", t_eval=np.linspace(0, 3, 31))
    assert traj.status == general.status == "diverged"
    assert traj.t.size == general.t.size
    assert abs(traj.stop_time - general.stop_time) < 0.05


def test_dop853_failure_names_time_and_keeps_the_samples_before():
    c = sm.symbols("c", positive=True)
    # x'' = -1 / sqrt(x): x falls from 1 and reaches 0 (sqrt of a negative number after) within a second
    falling = Model([x], kinetic_energy=x.diff(t) ** 2 / 2, potential_energy=2 * c * sm.sqrt(x), parameters={c: 1.0})
    with pytest.raises(SimulationError, match="the run failed at t") as info:
        simulate(falling, (0.0, 2.0), [1.0], [0.0], method="dop853", t_eval=np.linspace(0, 2, 41))
    partial = info.value.trajectory
    assert partial is not None and partial.t.size > 5 and partial.t[-1] < info.value.time
    assert np.all(partial.q[:, 0] > 0)


def test_double_pendulum_explorer_runs_match_a_tight_reference():
    from udk_notebooks.widgets.double_pendulum import DoublePendulumExplorer, compiled_models

    explorer = DoublePendulumExplorer(samples=81)
    values = dict(m1=1.3, m2=0.7, l1=1.1, l2=0.8, g=9.81, k1=3.0, k2=1.0, theta=1.5, phi=0.5, horizon=2.0)
    run = explorer.run(**values)
    params = {k: values[k] for k in ("m1", "m2", "l1", "l2", "g", "k1", "k2")}
    minimal, cartesian = compiled_models("rods")
    times = np.linspace(0.0, 2.0, 81)
    q0, qd0 = double_pendulum.initial_state(1.5, 0.5)
    tight = dict(method="DOP853", rtol=1e-13, atol=1e-13, t_eval=times, params=params)
    reference = simulate(minimal, (0.0, 2.0), q0, qd0, **tight)
    assert np.abs(run.data["minimal"].q - reference.q).max() < 1e-8
    q0c, qd0c = double_pendulum.to_cartesian(q0, qd0, "rods", **params)
    reference_c = simulate(cartesian, (0.0, 2.0), q0c, qd0c, **tight)
    assert np.abs(run.trajectory.q - reference_c.q).max() < 1e-8
    assert np.abs(run.trajectory.ideal - reference_c.ideal).max() < 1e-6
