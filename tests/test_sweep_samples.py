"""A batched sweep that keeps only the samples asked for (`t_eval` on the step grid) equals simulate with that `t_eval`."""

import re

import numpy as np
import pytest

from udk_notebooks import simulate
from udk_notebooks.examples import chain
from udk_notebooks.stabilization import Baumgarte
from udk_notebooks.sweep import sweep

PENDULUM = chain.cartesian_pendulum().compile()
Q0, QD0 = np.array([1.0, 0.0]), np.array([0.0, 0.5])
FIELDS = ("q", "qd", "position_residual", "velocity_residual")


def test_samples_on_the_grid_equal_single_runs_with_t_eval():
    # Euler at step 0.02: alpha = beta = 5 ends at its residual stop (issue 11; here found on a kept sample),
    # 500 is refused by the gain check, 1 runs to the end. Only the four times asked for are kept.
    stabs = [Baumgarte(5, 5), Baumgarte(500, 500), Baumgarte(1, 1)]
    span, step, t_eval = (0.0, 8.0), 0.02, [0.0, 1.0, 6.0, 8.0]
    result = sweep(PENDULUM, span, Q0, QD0, stabilization=stabs, method="euler", step=step, t_eval=t_eval)
    assert result.runs is None  # the batch, not a loop of single runs
    np.testing.assert_array_equal(result.t, t_eval)
    assert result.q.shape == (3, 4, 2) and result.position_residual.shape == (3, 4, 1)
    assert list(result.status) == ["diverged", "refused", "ok"]
    assert "unstable" in result.message[1] and np.isnan(result.q[1]).all()
    for i in (0, 2):
        single = simulate(PENDULUM, span, Q0, QD0, method="euler", step=step, stabilization=stabs[i], t_eval=t_eval)
        assert single.status == result.status[i]
        assert re.sub(r"reached \S+,", "", single.stop_reason) == re.sub(r"reached \S+,", "", result.message[i])
        reached = np.isin(result.t, single.t)
        assert np.isnan(result.q[i, ~reached]).all()
        for field in FIELDS:
            np.testing.assert_allclose(getattr(result, field)[i, reached], getattr(single, field), rtol=1e-9,
                                       atol=1e-12, err_msg=field)
    assert result.stopped_at[0] == pytest.approx(6.0)  # the residual stop is decided on the samples kept
    assert np.isnan(result.stopped_at[2])


def test_kept_samples_are_those_of_the_full_sweep():
    stabs = [Baumgarte(a, b) for a in (0.0, 2.0, 9.0) for b in (1.0, 7.0)]
    full = sweep(PENDULUM, (0.0, 2.0), Q0, QD0, stabilization=stabs, step=0.01, progress=False)
    t_eval = full.t[[0, 37, 150, 200]]
    part = sweep(PENDULUM, (0.0, 2.0), Q0, QD0, stabilization=stabs, step=0.01, progress=False, t_eval=t_eval)
    np.testing.assert_array_equal(part.status, full.status)
    for field in FIELDS:
        np.testing.assert_array_equal(getattr(part, field), getattr(full, field)[:, [0, 37, 150, 200]], err_msg=field)


def test_times_between_steps_run_member_by_member():
    # simulate adds 0.005 to its grid as a step: the members cannot share the batch's grid, so they run alone
    stabs = [Baumgarte(1.0, 1.0), Baumgarte(2.0, 2.0)]
    result = sweep(PENDULUM, (0.0, 1.0), Q0, QD0, stabilization=stabs, step=0.01, progress=False, t_eval=[0.005, 1.0])
    assert result.runs is not None
    for run, stab in zip(result.runs, stabs):
        single = simulate(PENDULUM, (0.0, 1.0), Q0, QD0, step=0.01, stabilization=stab, t_eval=[0.005, 1.0])
        np.testing.assert_array_equal(run.q, single.q)
