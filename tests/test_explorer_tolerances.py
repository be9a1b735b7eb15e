"""The tolerances the double pendulum and singular mass explorers integrate with, and the errors they leave.

Both explorers integrate adaptively at tolerances chosen for what their
panels show, and each panel's title states them; these tests hold the runs
to those tolerances against tight independent references.
"""

from __future__ import annotations

import numpy as np
from scipy.integrate import solve_ivp

from udk_notebooks.examples import singular_mass
from udk_notebooks.widgets.double_pendulum import ATOL, RTOL, DoublePendulumExplorer
from udk_notebooks.widgets.singular_mass import LAGRANGE_TOLERANCES, UK_TOLERANCES, SingularMassExplorer


def test_double_pendulum_energy_panel_states_its_tolerance_and_its_view_only_grows():
    explorer = DoublePendulumExplorer(samples=41)
    ax = explorer.figure.axes[2]
    assert RTOL == ATOL == 1e-9 and "tol 1e-9" in ax.get_title("left")
    assert explorer.view_options(ax)["shrink"] == 0.0
    assert explorer.view_options(explorer.figure.axes[3])["shrink"] == explorer.view_shrink  # others as before


def test_singular_mass_uk_run_meets_its_stated_tolerance_against_a_tight_lagrange_run():
    explorer = SingularMassExplorer(samples=61)
    title = explorer.figure.axes[2].get_title("left")
    assert UK_TOLERANCES["rtol"] == 1e-7 and LAGRANGE_TOLERANCES["rtol"] == 1e-10 and "(tol 1e-7, 1e-10)" in title
    values = dict(m=1.3, g=9.81, l=1.2, c=0.3, mA=0.0, mB=0.4, theta0=-0.3, horizon=4.0)
    run = explorer.run(**values)
    params = {k: values[k] for k in ("m", "g", "l", "c", "mA", "mB")}
    tight = solve_ivp(singular_mass.minimal_rate(**params), (0.0, 4.0), [-0.3, 0.0], method="DOP853",
                      rtol=1e-13, atol=1e-13, t_eval=run.trajectory.t)
    error = np.abs(np.angle(np.exp(1j * (singular_mass.angle(run.trajectory.q) - tight.y[0])))).max()
    assert 0.0 < error < 1e-5  # rtol 1e-7 grown over four seconds of swing, far below a pixel
    assert np.abs(run.data["angle_difference"]).max() < 2 * error + 1e-9  # panel (c) shows this error


def test_lagrange_angles_meet_their_tolerance_against_a_tight_solve_ivp_run():
    from udk_notebooks.widgets.singular_mass import lagrange_angles

    rate = singular_mass.minimal_rate(m=0.8, g=9.81, l=1.5, c=0.7, mA=0.2, mB=0.0)
    times = np.linspace(0.0, 6.0, 121)
    angles = lagrange_angles(rate, 0.4, times)
    tight = solve_ivp(rate, (0.0, 6.0), [0.4, 0.0], method="DOP853", rtol=1e-13, atol=1e-13, t_eval=times)
    assert angles[0] == 0.4 and np.ptp(angles) > 1.0  # a real swing, not a resting bar
    assert np.abs(angles - tight.y[0]).max() < 2e-9  # rtol 1e-10 grown over six seconds (1.5e-10 here)


def test_singular_mass_run_is_integrated_again_or_names_the_difference_at_slider_ends():
    """At the sliders' ends the quick run is far off the Lagrange route (found by a hostile review; 1.1 rad at
    rtol 1e-7 on the explorer's route, Hairer's DOP853 stepping to the samples): the explorer integrates again at UK_TIGHT_TOLERANCES and names the difference still left, while
    at the defaults the quick run agrees and no note is shown."""
    from udk_notebooks.widgets.singular_mass import AGREEMENT, SingularMassExplorer

    explorer = SingularMassExplorer()
    defaults = dict(explorer.values)
    run = explorer.run(**defaults)
    assert np.abs(run.data["angle_difference"]).max() <= AGREEMENT and "Lagrange" not in run.info
    run = explorer.run(m=0.1, g=20.0, l=0.2, c=0.95, mA=0.0, mB=0.0, theta0=1.55, horizon=15.0)
    apart = float(np.abs(run.data["angle_difference"]).max())
    assert AGREEMENT < apart < 0.05  # the tight run's 0.005 rad, not the quick run's 1.1 rad
    assert f"off Lagrange by {apart:.2g} rad" in run.info
