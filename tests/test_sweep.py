"""Tests for udk_notebooks.sweep: every member equals a single `simulate` run (q, qd, residuals, status, stop time)."""

import re

import numpy as np
import pytest
import sympy as sm
from hypothesis import given, settings
from hypothesis import strategies as st

from udk_notebooks import CoulombFriction, Model, simulate
from udk_notebooks.errors import SimulationError
from udk_notebooks.examples import carriage_pendulum, chain, double_pendulum, incline_friction, rolling_disk, singular_mass
from udk_notebooks.stabilization import Baumgarte
from udk_notebooks.sweep import parameter_grid, sweep

PENDULUM = chain.cartesian_pendulum().compile()
INCLINE = incline_friction.model().compile()
Q0, QD0 = np.array([1.0, 0.0]), np.array([0.0, 0.5])


def single_run(model, span, q0, qd0, method, step, stab, params):
    """The single run, or the exception it raises."""
    try:
        return simulate(model, span, q0, qd0, method=method, step=step, stabilization=stab, params=params)
    except (ValueError, RuntimeError) as exc:
        return exc


def assert_member_equals(result, i, single, atol=1e-12):
    """Member i of the sweep against its single run: samples, residuals, status, stop time, friction modes."""
    if isinstance(single, SimulationError):
        assert result.status[i] == "failed" and result.stopped_at[i] == pytest.approx(single.time, abs=1e-12)
        return
    if isinstance(single, Exception):  # refused before it started (or a friction law without solution)
        assert result.status[i] in ("refused", "failed"), result.status[i]
        assert str(single) in result.message[i]
        return
    assert result.status[i] == single.status, (result.status[i], result.message[i], single.stop_reason)
    # the same reason; the size quoted for a state that runs away within one step is rounding itself
    assert re.sub(r"grew to \S+,", "", result.message[i]) == re.sub(r"grew to \S+,", "", single.stop_reason)
    if single.status == "ok":
        assert np.isnan(result.stopped_at[i])
    else:
        assert result.stopped_at[i] == pytest.approx(single.stop_time, abs=1e-12)
    on_grid = np.isin(single.t, result.t)  # friction runs add their switching instants
    reached = np.isin(result.t, single.t)
    assert np.isnan(result.q[i, ~reached]).all() and np.isfinite(result.q[i, reached]).all()
    # A diverging run amplifies rounding with everything else: there the bound is relative to its size.
    rtol = 0.0 if single.status == "ok" else 1e-9
    for field in ("q", "qd", "position_residual", "velocity_residual"):
        np.testing.assert_allclose(getattr(result, field)[i, reached], getattr(single, field)[on_grid], rtol=rtol,
                                   atol=atol, err_msg=field)
    if result.modes is not None:
        np.testing.assert_array_equal(result.modes[i], single.modes)
        np.testing.assert_allclose(result.mode_times[i], single.t, rtol=0, atol=1e-12)


def assert_sweep_equals_single_runs(model, result, q0, qd0, span, step, method, stabs, params, atol=1e-12):
    for i, (stab, p) in enumerate(zip(stabs, params)):
        assert_member_equals(result, i, single_run(model, span, q0[i], qd0[i], method, step, stab, p), atol)


@settings(max_examples=8, deadline=None)
@given(
    st.lists(st.tuples(st.floats(0, 20), st.floats(0, 20), st.floats(0.5, 2.0)), min_size=1, max_size=6),
    st.sampled_from(["rk4", "euler"]),
)
def test_pendulum_gain_and_parameter_grid_equals_single_runs(members, method):
    stabs = [Baumgarte(a, b) for a, b, _ in members]
    params = [{"m": m} for *_, m in members]
    span, step = (0.0, 1.0), 0.01
    result = sweep(PENDULUM, span, Q0, QD0, params=params, stabilization=stabs, method=method, step=step)
    q0, qd0 = np.tile(Q0, (len(stabs), 1)), np.tile(QD0, (len(stabs), 1))
    assert_sweep_equals_single_runs(PENDULUM, result, q0, qd0, span, step, method, stabs, params)


@pytest.mark.parametrize(
    "model, grid, state",
    [
        (double_pendulum.minimal_model(), parameter_grid(m2=[0.5, 2.0], k1=[0.0, 3.0]), lambda p: double_pendulum.initial_state()),
        (carriage_pendulum.model(), parameter_grid(F0=[0.0, 5.0], k=[1.0, 20.0]), lambda p: carriage_pendulum.initial_state()),
        (rolling_disk.model(), parameter_grid(r=[0.5, 1.5], I2=[0.1, 0.4]), lambda p: rolling_disk.initial_state(**p)),
        (chain.n_link_chain(3), parameter_grid(m=[0.5, 2.0], l=[1.0]), lambda p: chain.chain_initial_state(3, **p)),
        (singular_mass.model(), parameter_grid(g=[9.81, 3.0]), lambda p: singular_mass.initial_state(**p)),
    ],
    ids=["double_pendulum", "carriage_pendulum", "rolling_disk", "chain3", "singular_mass_one_by_one"],
)
def test_examples_batch_equals_single_runs(model, grid, state):
    states = [state(p) for p in grid]
    q0, qd0 = np.array([s[0] for s in states]), np.array([s[1] for s in states])
    span, step = (0.0, 1.0), 0.01
    stabs = [None, Baumgarte(5.0, 5.0, 2.0)] * (len(grid) // 2)
    result = sweep(model, span, q0, qd0, params=grid, stabilization=stabs, step=step)
    assert_sweep_equals_single_runs(model, result, q0, qd0, span, step, "rk4", stabs, grid, atol=1e-11)


def test_refused_and_diverged_members_are_reported():
    # Euler at step 0.02 with alpha = beta = 5 passes the gain check, but its residual passes
    # DIVERGENCE_FACTOR at 5.74 s (issue 11); alpha = beta = 500 is refused by the gain check;
    # RK4's alpha = beta = 1 runs normally; alpha = beta = 0.5 is on the edge of Euler's stability
    # for this step and grows to its residual stop later (14.6 s for alpha = beta = 1).
    stabs = [Baumgarte(5, 5), Baumgarte(500, 500), Baumgarte(1, 1), Baumgarte(0.0, 0.0)]
    span = (0.0, 20.0)
    result = sweep(PENDULUM, span, Q0, QD0, stabilization=stabs, method="euler", step=0.02)
    assert list(result.status) == ["diverged", "refused", "diverged", "refused"]
    assert 0 < result.stopped_at[0] < result.stopped_at[2] < 20 and np.isnan(result.stopped_at[[1, 3]]).all()
    assert "DIVERGENCE_FACTOR" in result.message[0] and "unstable" in result.message[1]
    assert np.isnan(result.max_drift[[0, 1]]).all()
    assert np.isnan(result.q[1]).all()  # refused: nothing integrated
    k = int(np.argmax(result.t >= result.stopped_at[0]))
    assert np.isfinite(result.q[0, :k]).all() and np.isnan(result.q[0, k:]).all()
    q0, qd0 = np.tile(Q0, (4, 1)), np.tile(QD0, (4, 1))
    assert_sweep_equals_single_runs(PENDULUM, result, q0, qd0, span, 0.02, "euler", stabs, [{}] * 4)


def test_state_runaway_stops_a_member_where_simulate_does():
    # Minimal coordinates (no constraint, no residual) and a torsion spring of negative stiffness:
    # the angles grow exponentially until the state passes DIVERGENCE_FACTOR times its start.
    model = double_pendulum.minimal_model().compile()
    q0, qd0 = double_pendulum.initial_state()
    grid = parameter_grid(k1=[2.0, -100.0])
    span, step = (0.0, 3.0), 0.01
    result = sweep(model, span, q0, qd0, params=grid, step=step)
    assert list(result.status) == ["ok", "diverged"] and "grew to" in result.message[1]
    states = np.tile(q0, (2, 1)), np.tile(qd0, (2, 1))
    assert_sweep_equals_single_runs(model, result, *states, span, step, "rk4", [None, None], grid, atol=1e-11)


def test_inconsistent_start_is_refused_per_member():
    q0 = np.array([[1.0, 0.0], [1.1, 0.0]])  # the second is off the circle
    result = sweep(PENDULUM, (0.0, 0.5), q0, QD0, step=0.01)
    assert list(result.status) == ["ok", "refused"]
    assert "violates the constraints" in result.message[1]


def incline_members(draw_alpha, draw_mu, speed=3.0):
    grid = [{"alpha": a, "mu": mu, "mu_s": mu} for a, mu in zip(draw_alpha, draw_mu)]
    states = [incline_friction.initial_state(speed, alpha=p["alpha"]) for p in grid]
    return grid, np.array([s[0] for s in states]), np.array([s[1] for s in states])


def test_friction_members_switch_independently():
    # mu below and above tan(30 deg) = 0.577: the first keeps sliding down after it stops, the others stick,
    # each at its own time (a larger mu stops the block sooner).
    grid, q0, qd0 = incline_members([np.pi / 6] * 3, [0.2, 0.7, 0.9])
    span, step = (0.0, 2.0), 0.005
    result = sweep(INCLINE, span, q0, qd0, params=grid, step=step)
    assert [modes[-1, 0] for modes in result.modes] == [-1, 0, 0]
    stops = [times[np.flatnonzero(modes[:, 0] != 1)[0]] for times, modes in zip(result.mode_times, result.modes)]
    assert stops[2] < stops[1] < stops[0]
    np.testing.assert_allclose(stops, [incline_friction.stop_time(3.0, **p) for p in grid], rtol=1e-9)
    assert_sweep_equals_single_runs(INCLINE, result, q0, qd0, span, step, "rk4", [None] * 3, grid)


@pytest.mark.parametrize("after", [0.0, 0.002, 0.03])
def test_switch_near_the_end_of_the_run(after):
    # The stop falls in the last step (or on its end, or a few steps before): the parked switch is
    # settled after the other members have finished, and the run ends where the single one does.
    grid, q0, qd0 = incline_members([0.5, 0.5], [0.7, 0.3])
    step = 0.005
    end = incline_friction.stop_time(3.0, **grid[0]) + after
    span = (0.0, round(end / step) * step if after == 0.0 else end)
    result = sweep(INCLINE, span, q0, qd0, params=grid, step=step)
    assert_sweep_equals_single_runs(INCLINE, result, q0, qd0, span, step, "rk4", [None] * 2, grid)


@settings(max_examples=5, deadline=None)
@given(
    st.lists(st.tuples(st.floats(0.1, 1.3), st.floats(0.0, 1.4)), min_size=1, max_size=8),
    st.sampled_from(["rk4", "euler"]),
)
def test_friction_grid_equals_single_runs(members, method):
    grid, q0, qd0 = incline_members(*zip(*members))
    span, step = (0.0, 1.5), 0.01
    result = sweep(INCLINE, span, q0, qd0, params=grid, method=method, step=step)
    assert_sweep_equals_single_runs(INCLINE, result, q0, qd0, span, step, method, [None] * len(grid), grid)


def test_friction_without_coulomb_solution_fails_that_member_only():
    # mu_s < tan(30 deg) <= mu: when the block stops, static friction cannot hold it and kinetic friction
    # allows no slip; simulate raises there, the sweep reports that member as failed and runs the others.
    grid = [{"mu": 0.2, "mu_s": 0.2}, {"mu": 0.7, "mu_s": 0.3}]
    q0, qd0 = incline_friction.initial_state(3.0)
    span, step = (0.0, 1.5), 0.01
    result = sweep(INCLINE, span, q0, qd0, params=grid, step=step)
    assert list(result.status) == ["ok", "failed"]
    assert "Coulomb's law admits no motion" in result.message[1]
    stop = incline_friction.stop_time(3.0, **grid[1])
    assert result.stopped_at[1] == pytest.approx(stop, abs=1e-9)
    assert_member_equals(result, 0, single_run(INCLINE, span, q0, qd0, "rk4", step, None, grid[0]))


def two_blocks_on_inclines() -> Model:
    """Two blocks, each on its own rough line ``y_i = x_i tan(a_i)`` (two contacts, ``N = |F^L|``).

    Each block is a particle pressed on one line, so friction leaves the constraint reaction alone
    (``A M^-1 C = 0``, proven symbolically) and ``N = |F^L|`` is the normal force: the batch may run it.
    (Joint friction on a chain with ``|F^L|`` as its normal force, used here before, is refused since
    issue 18: friction changes the chain's reaction, so ``|F^L|`` is not a normal force.)
    """
    from sympy.physics.mechanics import dynamicsymbols

    x1, y1, x2, y2 = dynamicsymbols("x1 y1 x2 y2")
    mu1, mu2, a1, a2 = sm.symbols("mu1 mu2 a1 a2", real=True)
    return Model(
        [x1, y1, x2, y2], mass_matrix=sm.eye(4), potential_energy=9.81 * (y1 + y2),
        holonomic=[y1 - x1 * sm.tan(a1), y2 - x2 * sm.tan(a2)],
        friction=[CoulombFriction(sm.cos(a1) * x1.diff() + sm.sin(a1) * y1.diff(), mu1),
                  CoulombFriction(sm.cos(a2) * x2.diff() + sm.sin(a2) * y2.diff(), mu2)],
        parameters={mu1: 0.1, mu2: 0.1, a1: 0.5, a2: 0.7},
    )


def test_two_contacts_switch_on_their_own():
    # Two rows plus up to two sticking rows: the general stacked solver, with members in every mode set.
    model = two_blocks_on_inclines().compile()
    assert model.reaction_free == (True, True)
    grid = parameter_grid(mu1=[0.05, 0.6], mu2=[0.05, 0.8])  # tan(0.5) = 0.55, tan(0.7) = 0.84: stick or slide back
    q0 = np.zeros(4)
    qd0 = np.array([1.0 * np.cos(0.5), 1.0 * np.sin(0.5), 1.5 * np.cos(0.7), 1.5 * np.sin(0.7)])  # both up the slope
    span, step = (0.0, 1.0), 0.005
    result = sweep(model, span, q0, qd0, params=grid, step=step)
    assert result.runs is None  # the batch ran, not a loop of simulate
    switched = [np.count_nonzero(np.diff(m, axis=0).any(axis=1)) for m in result.modes]
    assert max(switched) >= 1 and {-1, 0} <= set(np.concatenate([m[-1] for m in result.modes]).tolist())
    states = np.tile(q0, (len(grid), 1)), np.tile(qd0, (len(grid), 1))
    assert_sweep_equals_single_runs(model, result, *states, span, step, "rk4", [None] * len(grid), grid, atol=1e-10)


def test_adaptive_methods_run_member_by_member():
    stabs = [Baumgarte(2.0, 2.0), None]
    result = sweep(PENDULUM, (0.0, 0.5), Q0, QD0, stabilization=stabs, method="RK45", rtol=1e-8, atol=1e-10,
                   t_eval=np.linspace(0.0, 0.5, 11))
    assert result.runs is not None and list(result.status) == ["ok", "ok"]
    for i, stab in enumerate(stabs):
        single = simulate(PENDULUM, (0.0, 0.5), Q0, QD0, method="RK45", rtol=1e-8, atol=1e-10, stabilization=stab,
                          t_eval=np.linspace(0.0, 0.5, 11))
        np.testing.assert_array_equal(result.q[i], single.q)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"stabilization": [Baumgarte(1, 1)] * 2, "params": [{}] * 3}, "`stabilization`"),
        ({"params": []}, "`params`"),
        ({"step": -1.0}, "`step`"),
    ],
)
def test_bad_input_named(kwargs, match):
    with pytest.raises(ValueError, match=match):
        sweep(PENDULUM, (0.0, 1.0), Q0, QD0, **kwargs)


def test_parameter_grid_order():
    assert parameter_grid(a=[1, 2], b=[3]) == [{"a": 1.0, "b": 3.0}, {"a": 2.0, "b": 3.0}]
    with pytest.raises(ValueError, match="at least one axis"):
        parameter_grid()


def test_stick_slip_map_regimes_follow_tan_alpha():
    import matplotlib

    matplotlib.use("Agg")
    from udk_notebooks.sweep import stick_slip_map

    angles = np.radians([10.0, 40.0])
    regime, result = stick_slip_map(angles, [0.1, 1.0], t_end=1.5)
    # mu = 0.1 < tan(alpha) for both angles: back down; mu = 1.0 > tan(40 deg) = 0.84: stuck.
    np.testing.assert_array_equal(regime, [[-1, 0], [-1, 0]])
    assert (result.status == "ok").all()


def test_stability_map_marks_refused_gains():
    import matplotlib

    matplotlib.use("Agg")
    from udk_notebooks.sweep import stability_map

    drift, result = stability_map([5.0, 500.0], [5.0], method="euler", step=0.01, t_span=(0.0, 1.0))
    assert list(result.status) == ["ok", "refused"]
    assert np.isfinite(drift[0, 0]) and np.isnan(drift[1, 0])
    single = simulate(PENDULUM, (0.0, 1.0), *chain.pendulum_initial_state(1.0),
                      method="euler", step=0.01, stabilization=Baumgarte(5.0, 5.0))
    assert drift[0, 0] == pytest.approx(np.abs(single.position_residual).max(), rel=1e-10)
