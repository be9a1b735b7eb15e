"""Tests for udk_notebooks.sweep: every member equals a single `simulate` run."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from udk_notebooks import simulate
from udk_notebooks.errors import UnstableGainError
from udk_notebooks.examples import carriage_pendulum, chain, double_pendulum, incline_friction, rolling_disk
from udk_notebooks.stabilization import Baumgarte
from udk_notebooks.sweep import parameter_grid, sweep

PENDULUM = chain.cartesian_pendulum().compile()
Q0, QD0 = np.array([1.0, 0.0]), np.array([0.0, 0.5])


def assert_members_equal_single_runs(model, result, q0, qd0, span, step, method, stabs, params, atol=1e-12):
    for i, (stab, p) in enumerate(zip(stabs, params)):
        try:
            single = simulate(model, span, q0[i], qd0[i], method=method, step=step, stabilization=stab, params=p)
        except UnstableGainError as exc:  # refused by a single run: refused by the sweep, same message
            assert (result.status[i], result.message[i]) == ("refused", str(exc))
            assert np.isnan(result.q[i]).all()
            continue
        assert result.status[i] == "ok", result.message[i]
        np.testing.assert_allclose(result.t, single.t, rtol=0, atol=1e-15)
        np.testing.assert_allclose(result.q[i], single.q, rtol=0, atol=atol)
        np.testing.assert_allclose(result.qd[i], single.qd, rtol=0, atol=atol)
        np.testing.assert_allclose(result.position_residual[i], single.position_residual, rtol=0, atol=atol)


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
    assert_members_equal_single_runs(PENDULUM, result, q0, qd0, span, step, method, stabs, params)


@pytest.mark.parametrize(
    "model, grid, state",
    [
        (double_pendulum.minimal_model(), parameter_grid(m2=[0.5, 2.0], k1=[0.0, 3.0]), lambda p: double_pendulum.initial_state()),
        (carriage_pendulum.model(), parameter_grid(F0=[0.0, 5.0], k=[1.0, 20.0]), lambda p: carriage_pendulum.initial_state()),
        (rolling_disk.model(), parameter_grid(r=[0.5, 1.5], I2=[0.1, 0.4]), lambda p: rolling_disk.initial_state(**p)),
    ],
    ids=["double_pendulum", "carriage_pendulum", "rolling_disk"],
)
def test_examples_batch_equals_single_runs(model, grid, state):
    states = [state(p) for p in grid]
    q0, qd0 = np.array([s[0] for s in states]), np.array([s[1] for s in states])
    span, step = (0.0, 1.0), 0.01
    result = sweep(model, span, q0, qd0, params=grid, step=step)
    assert_members_equal_single_runs(model, result, q0, qd0, span, step, "rk4", [None] * len(grid), grid, atol=1e-11)


def test_refused_and_diverged_members_are_reported():
    # Euler at step 0.02 with alpha = beta = 5 passes the gain check but overflows within 20 s
    # (issue 11); alpha = beta = 500 is refused by the gain check; alpha = beta = 1 runs normally.
    stabs = [Baumgarte(5, 5), Baumgarte(500, 500), Baumgarte(1, 1)]
    result = sweep(PENDULUM, (0.0, 20.0), Q0, QD0, stabilization=stabs, method="euler", step=0.02)
    assert list(result.status) == ["diverged", "refused", "ok"]
    assert 0 < result.stopped_at[0] < 20 and np.isnan(result.stopped_at[1:]).all()
    assert "non-finite" in result.message[0]
    with pytest.raises(UnstableGainError) as refused:
        simulate(PENDULUM, (0.0, 20.0), Q0, QD0, stabilization=stabs[1], method="euler", step=0.02)
    assert result.message[1] == str(refused.value)
    assert np.isnan(result.max_drift[:2]).all() and np.isfinite(result.max_drift[2])
    assert np.isnan(result.q[1]).all()  # refused: nothing integrated
    k = int(np.argmax(result.t >= result.stopped_at[0]))
    assert np.isfinite(result.q[0, :k]).all() and np.isnan(result.q[0, k:]).all()


def test_friction_members_switch_independently():
    # mu below and above tan(30 deg) = 0.577: the first keeps sliding down after it stops, the second sticks.
    grid = [{"mu": mu, "mu_s": mu} for mu in (0.2, 0.7, 0.9)]
    q0, qd0 = incline_friction.initial_state(3.0)
    result = sweep(incline_friction.model(), (0.0, 2.0), q0, qd0, params=grid, step=0.005)
    final = [modes[-1, 0] for modes in result.modes]
    assert final == [-1, 0, 0]
    for i, p in enumerate(grid):
        single = simulate(incline_friction.model(), (0.0, 2.0), q0, qd0, params=p, step=0.005)
        np.testing.assert_array_equal(result.modes[i], single.modes)
        on_grid = np.isin(single.t, result.t)
        np.testing.assert_allclose(result.q[i], single.q[on_grid], rtol=0, atol=1e-12)


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
