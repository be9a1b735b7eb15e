"""A member-by-member sweep with a fixed-step method and ``t_eval`` samples at ``t_eval``, as ``simulate`` does.

``simulate`` with Euler or RK4 adds each ``t_eval`` time to its step grid as a step and keeps only those
samples (no interpolation). A sweep that cannot batch (times between steps, friction contacts, an option
such as ``project``) runs each member through ``simulate``: its ``t`` must be the times asked for and each
member's samples those of its single run at those times.
"""

import numpy as np
import pytest

from udk_notebooks import simulate
from udk_notebooks.examples import chain, incline_friction
from udk_notebooks.stabilization import Baumgarte
from udk_notebooks.sweep import sweep

PENDULUM = chain.cartesian_pendulum().compile()
Q0, QD0 = np.array([1.0, 0.0]), np.array([0.0, 0.5])
FIELDS = ("q", "qd", "position_residual", "velocity_residual")


def assert_members_are_single_runs(result, single_runs, t_eval):
    np.testing.assert_array_equal(result.t, t_eval)
    for i, single in enumerate(single_runs):
        at = np.searchsorted(single.t, t_eval)  # a friction run also holds its switching instants
        np.testing.assert_array_equal(single.t[at], t_eval)
        for field in FIELDS:
            np.testing.assert_array_equal(getattr(result, field)[i], getattr(single, field)[at], err_msg=field)


@pytest.mark.parametrize("method", ["euler", "rk4"])
def test_times_between_steps_are_the_sweeps_times(method):
    # 0.005 and 0.333 lie between steps of 0.01: simulate steps to them, so the members run one by one
    t_eval = [0.005, 0.333, 1.0]
    stabs = [Baumgarte(1.0, 1.0), Baumgarte(2.0, 3.0)]
    result = sweep(PENDULUM, (0.0, 1.0), Q0, QD0, stabilization=stabs, method=method, step=0.01, progress=False,
                   t_eval=t_eval)
    assert result.runs is not None and list(result.status) == ["ok", "ok"]
    assert result.q.shape == (2, 3, 2) and result.position_residual.shape == (2, 3, 1)
    singles = [simulate(PENDULUM, (0.0, 1.0), Q0, QD0, method=method, step=0.01, stabilization=s, t_eval=t_eval)
               for s in stabs]
    assert_members_are_single_runs(result, singles, t_eval)
    assert np.isfinite(result.final_drift).all()


def test_an_option_the_batch_cannot_take_keeps_the_times_asked_for():
    # `project` runs the members one by one even with times on the step grid
    t_eval = np.array([0.0, 0.25, 0.5])
    q0 = np.array([1.01, 0.0])  # off the circle: projected
    result = sweep(PENDULUM, (0.0, 0.5), q0, QD0, params=[{}, {}], method="rk4", step=0.05, progress=False,
                   t_eval=t_eval, project=True)
    assert result.runs is not None
    single = simulate(PENDULUM, (0.0, 0.5), q0, QD0, method="rk4", step=0.05, t_eval=t_eval, project=True)
    assert_members_are_single_runs(result, [single, single], t_eval)


def test_friction_members_sample_the_times_asked_for_besides_their_switches():
    model = incline_friction.model().compile()
    params = [{"mu": 0.2, "mu_s": 0.2}, {"mu": 0.9, "mu_s": 0.9}]  # slides back down; sticks
    q0, qd0 = incline_friction.initial_state(2.0)
    t_eval = np.array([0.1, 0.55, 1.5])
    result = sweep(model, (0.0, 1.5), q0, qd0, params=params, method="rk4", step=0.02, progress=False,
                   t_eval=t_eval)
    singles = [simulate(model, (0.0, 1.5), q0, qd0, params=p, method="rk4", step=0.02, t_eval=t_eval) for p in params]
    assert all(single.t.size > t_eval.size for single in singles), "each run must switch (stick) in the span"
    assert_members_are_single_runs(result, singles, t_eval)
    np.testing.assert_array_equal(result.mode_times[1], singles[1].t)
