"""The carriage-pendulum explorer's two tolerances: the quick run it draws, and the tight run it falls back to.

The generic checks (forces on screen, random controls) are in ``test_explorers.py``. Here: the quick
DOP853 run (``QUICK``, Hairer's Fortran through ``method="dop853"``) is drawn only where it vouches for itself, it agrees with a 1e-12 reference to far
below a pixel, and a run that drifts past a hundredth of the trust limit is integrated again at ``TIGHT``.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from udk_notebooks.examples import carriage_pendulum
from udk_notebooks.simulation import simulate
from udk_notebooks.widgets import CarriagePendulumExplorer
from udk_notebooks.widgets import carriage_pendulum as widget

MODEL = ("m_c", "m", "l", "k", "g", "F0", "omega")
# A light carriage under a heavy ball released nearly upside down: the quick run drifts by ~5e-5 in 12 s,
# past a hundredth of the 1e-3 trust limit, and the tight run by ~5e-6 (measured with the explorer's route,
# Hairer's DOP853 stepping to the 201 samples; in 5 s that route stays below the hundredth).
WILD = dict(m_c=0.1, m=10.0, l=3.0, k=0.0, g=20.0, F0=-20.0, omega=0.3, angle=3.0, horizon=12.0)


@pytest.fixture(scope="module")
def explorer():
    explorer = CarriagePendulumExplorer()
    yield explorer
    explorer.close()


def _run(values: dict, tolerances: dict, samples: int = 201):
    params = {k: values[k] for k in MODEL}
    q0, qd0 = carriage_pendulum.initial_state(angle=values["angle"], **params)
    horizon = values["horizon"]
    return simulate(widget.compiled_model(), (0.0, horizon), q0, qd0, method="dop853", params=params,
                    t_eval=np.linspace(0.0, horizon, samples), **tolerances)


def test_defaults_draw_the_quick_run_within_a_micrometre_of_a_tight_reference(explorer):
    values = dict(explorer.values)
    drawn = explorer.result.trajectory
    quick = _run(values, widget.QUICK)
    assert widget.vouches(quick, explorer.drift_limit)
    np.testing.assert_array_equal(drawn.q, quick.q)  # the quick route is the one drawn
    reference = _run(values, {"rtol": 1e-12, "atol": 1e-14})
    assert np.abs(drawn.q - reference.q).max() < 1e-5  # metres: a pixel of the panels is about a millimetre
    assert np.abs(drawn.qd - reference.qd).max() < 1e-4


def test_a_quick_run_that_drifts_is_integrated_again_at_the_tight_tolerances(explorer):
    quick = _run(WILD, widget.QUICK)
    assert not widget.vouches(quick, explorer.drift_limit)
    explorer.set(**WILD)
    assert explorer.error == ""
    drawn = explorer.result.trajectory
    tight = _run(WILD, widget.TIGHT)
    np.testing.assert_array_equal(drawn.q, tight.q)
    assert np.abs(drawn.position_residual).max() < np.abs(quick.position_residual).max() / 5


def test_vouches_refuses_a_bad_status_and_non_finite_residuals(explorer):
    calm = dict(m_c=2.0, m=1.0, l=1.0, k=10.0, g=9.81, F0=5.0, omega=2.0, angle=0.5, horizon=2.0)
    good = _run(calm, widget.QUICK, samples=21)
    assert widget.vouches(good, 1e-3)
    drift = np.abs(good.position_residual).max()
    assert drift > 0 and not widget.vouches(good, 0.5 * drift / widget.VOUCH_SHARE)  # past the share: refused
    assert not widget.vouches(dataclasses.replace(good, status="diverged"), 1e-3)
    bad = good.position_residual.copy()
    bad[3] = np.nan
    assert not widget.vouches(dataclasses.replace(good, position_residual=bad), 1e-3)
