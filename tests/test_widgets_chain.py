"""The chain explorer's output: the fixed-step run sampled at most ``frames`` times, equal to the every-step run.

The generic checks (forces on screen, a drifting run marked, N changed in place) are in ``test_explorers.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

from udk_notebooks.examples import chain
from udk_notebooks.simulation import simulate
from udk_notebooks.widgets import EXPLORERS
from udk_notebooks.widgets import chain as widget


@pytest.mark.parametrize("horizon, step, samples", [(3.0, 0.01, 151), (1.0, 0.007, 151), (2.0, 0.05, 151),
                                                     (10.0, 0.001, 151), (0.5, 0.3, 20)])
def test_output_times_are_at_most_samples_times_of_the_step_grid(horizon, step, samples):
    times = widget.output_times(horizon, step, samples)
    count = max(1, round(horizon / step))
    grid = horizon * np.arange(count + 1) / count  # simulate's fixed-step grid
    assert times[0] == 0.0 and times[-1] == horizon
    assert 2 <= times.size <= samples and np.all(np.diff(times) > 0)
    assert np.all(np.isin(times, grid))  # exactly on the grid: no step of their own
    assert times.size == min(samples, count + 1)  # as many as asked, or every step when there are fewer


@pytest.mark.parametrize("horizon, step, samples", [(0.0, 0.01, 151), (1.0, -0.01, 151), (1.0, 0.01, 1)])
def test_output_times_refuse_bad_input(horizon, step, samples):
    with pytest.raises(ValueError, match="must be"):
        widget.output_times(horizon, step, samples)


@pytest.mark.parametrize("method", ["rk4", "euler"])
def test_the_sampled_run_is_the_every_step_run(method):
    explorer = EXPLORERS["chain"](frames=41)
    values = dict(N=3, m=1.3, l=0.8, g=9.81, spread=0.6, method=method, step=0.007, horizon=1.0)
    explorer.set(**values)
    assert explorer.error == ""
    drawn = explorer.result.trajectory
    params = dict(m=1.3, l=0.8, g=9.81)
    q0, qd0 = chain.chain_initial_state(3, 0.3 + 0.6 * np.arange(3) / 3, **params)
    every = simulate(widget.compiled_model(3), (0.0, 1.0), q0, qd0, method=method, step=0.007, params=params)
    assert every.t.size == 144 and drawn.t.size == 41  # round(1 / 0.007) = 143 steps, 41 frames
    at = np.searchsorted(every.t, drawn.t)
    np.testing.assert_array_equal(every.t[at], drawn.t)
    for name in ("q", "qd", "qdd", "energy", "position_residual"):
        np.testing.assert_array_equal(getattr(every, name)[at], getattr(drawn, name))
    energy_line = explorer.figure.axes[1].get_lines()[0]
    assert energy_line.get_xdata().size == 41
    explorer.close()
