"""The rolling-disk explorer keeps its run without K while only the gains move, and only then."""

from __future__ import annotations

import numpy as np
import pytest

from udk_notebooks.examples import rolling_disk
from udk_notebooks.simulation import simulate
from udk_notebooks.widgets import RollingDiskExplorer


@pytest.fixture(scope="module")
def explorer():
    explorer = RollingDiskExplorer()
    yield explorer
    explorer.close()


def _fresh_plain(values):
    q0, qd0 = rolling_disk.initial_state(phi_rate=values["phi_rate"], theta_rate=values["theta_rate"])
    return simulate(rolling_disk.model().compile(), (0.0, values["horizon"]), q0, qd0, method=values["method"],
                    step=values["step"])


def test_gain_drag_reuses_the_plain_run_and_it_is_the_fresh_one(explorer):
    explorer.set(k1=10.0, k2=10.0, step=0.01, method="euler", horizon=5.0)
    before = explorer.result.data["plain"]
    explorer.set(k1=20.0)
    assert explorer.error == ""
    assert explorer.result.data["plain"] is before  # not integrated again
    fresh = _fresh_plain(explorer.values)
    np.testing.assert_array_equal(explorer.result.data["plain"].q, fresh.q)
    # the stabilized run did follow the new gain
    assert not np.array_equal(explorer.result.trajectory.q, before.q)


@pytest.mark.parametrize("change", [dict(step=0.02), dict(method="rk4"), dict(phi_rate=1.5), dict(horizon=6.0)])
def test_other_controls_integrate_the_plain_run_again(explorer, change):
    explorer.set(k1=10.0, k2=10.0, step=0.01, method="euler", phi_rate=2.0, theta_rate=1.0, horizon=5.0)
    before = explorer.result.data["plain"]
    explorer.set(**change)
    assert explorer.error == ""
    after = explorer.result.data["plain"]
    assert after is not before
    fresh = _fresh_plain(explorer.values)
    np.testing.assert_array_equal(after.t, fresh.t)
    np.testing.assert_array_equal(after.q, fresh.q)
