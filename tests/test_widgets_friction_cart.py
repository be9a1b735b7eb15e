"""The friction cart pendulum explorer: shaded stick phases and the drawn floor forces, against independent routes.

The generic checks (forces on screen, random controls, slider grid) are in
``test_explorers.py``; here the panels are read back from the figure and
compared with the minimal-coordinate equations of
:mod:`udk_notebooks.examples.friction_cart_pendulum` and its event-driven run.
"""

from __future__ import annotations

import numpy as np
import pytest
from explorer_checks import assert_same_pixels, full_redraw, pixels

from udk_notebooks.examples import friction_cart_pendulum as fcp
from udk_notebooks.widgets import FrictionCartPendulumExplorer, Panel, Shade
from udk_notebooks.widgets.system import shaded_spans, time_curve

VELOCITY, NORMAL, FRICTION = range(3)  # panels (b), (c), (d)


@pytest.fixture(scope="module")
def explorer():
    explorer = FrictionCartPendulumExplorer(samples=101)
    yield explorer
    explorer.close()


def _drawn(explorer, panel: int, curve: int):
    """The line and the instant's marker of one curve, read back from the figure."""
    ax = explorer.figure.axes[1 + panel]
    line = next(line for line in ax.get_lines() if line.get_label() == explorer.panels[panel].curves[curve].label)
    marker = ax.get_lines()[ax.get_lines().index(line) + 1]
    return line, marker


def test_a_run_into_stick_shades_the_phases_of_its_modes(explorer):
    """Released from rest at 1.2 rad with mu_s = 0.3, the block slides, stops and sticks: shading = modes."""
    explorer.set(mu=0.15, mu_s=0.3, angle=1.2, speed=0.0, horizon=4.0)
    assert explorer.error == "" and explorer.warning == ""
    traj = explorer.result.trajectory
    stuck = traj.modes[:, 0] == 0
    assert stuck.any() and not stuck.all()
    for panel in (VELOCITY, NORMAL, FRICTION):
        spans = explorer.drawn_spans(panel)
        np.testing.assert_array_equal(spans, shaded_spans(traj.t, stuck))
    spans = explorer.drawn_spans(VELOCITY)
    for j, t in enumerate(traj.t):  # every sample's mode agrees with the shading from it to the next sample
        inside = any(a <= t < b for a, b in spans) or (t == traj.t[-1] and stuck[-1])
        assert inside == stuck[j], (t, traj.modes[j, 0])
    # and the phases are the event-driven run's (a second code, minimal coordinates)
    params = {k: v for k, v in explorer.values.items() if k in fcp.PARAMETERS}
    reference = fcp.event_driven((0.0, 4.0), [0.0, 1.2], [0.0, 0.0], **params)
    starts = reference.switch_times[reference.modes[np.searchsorted(reference.t, reference.switch_times,
                                                                    side="right") - 1] == 0]
    np.testing.assert_allclose(spans[spans[:, 0] > 0, 0], starts[starts > 0], atol=1e-6)
    assert np.all(np.abs(traj.qd[stuck, 0]) < 1e-9)  # a shaded block stands still


@pytest.mark.parametrize("frame, mode", [(10, "slides"), (75, "sticks")])
def test_drawn_normal_force_is_the_minimal_coordinate_one(explorer, frame, mode):
    """The drawn N and |F| at the instant equal Newton's N and the friction of the (X, theta) equations."""
    explorer.set(mu=0.15, mu_s=0.3, angle=1.2, speed=0.0, horizon=4.0, frame=frame)
    traj = explorer.result.trajectory
    j = explorer.frame_index(traj.t)
    assert (traj.modes[j, 0] == 0) == (mode == "sticks")
    q, qd = fcp.to_minimal(traj.q[j], traj.qd[j])
    params = {k: v for k, v in explorer.values.items() if k in fcp.PARAMETERS}
    _, normal, friction = fcp.minimal_motion(q, qd, int(traj.modes[j, 0]), **params)
    line, marker = _drawn(explorer, NORMAL, 0)
    assert marker.get_xdata()[0] == traj.t[j]
    assert marker.get_ydata()[0] == pytest.approx(normal, rel=1e-6)
    assert line.get_ydata()[j] == marker.get_ydata()[0]
    _, marker = _drawn(explorer, FRICTION, 0)
    assert marker.get_ydata()[0] == pytest.approx(abs(friction), rel=1e-6, abs=1e-9 * normal)
    if mode == "slides":
        assert abs(friction) == pytest.approx(params["mu"] * normal, rel=1e-12)
    else:
        assert abs(friction) <= params["mu_s"] * normal
    weight, _ = _drawn(explorer, NORMAL, 1)
    assert np.all(weight.get_ydata() == (params["m1"] + params["m2"]) * params["g"])


def test_static_below_kinetic_is_refused_in_place(explorer):
    explorer.set(mu=0.15, mu_s=0.3)
    good = explorer.result
    explorer.set(mu=0.4, mu_s=0.2)
    assert explorer.error.startswith("ValueError: `mu_s` = 0.2 < `mu` = 0.4")
    assert "`mu_s` at least as large as the kinetic one `mu`" in explorer.error
    assert explorer.result is good  # the last good run stays on screen
    explorer.set(mu_s=0.5)
    assert explorer.error == "" and explorer.result is not good


def test_small_moves_blit_bands_and_legends_as_a_full_redraw_would(explorer):
    """Shading and legends are painted with the run: small moves blit, and the pixels equal a full draw."""
    explorer.set(mu=0.15, mu_s=0.3, angle=1.2, speed=0.0, horizon=4.0, frame=40)
    draws = []
    explorer.figure.canvas.mpl_connect("draw_event", lambda event: draws.append(event))
    for name, step in (("mu_s", 0.01), ("m2", 0.02), ("frame", 30), ("angle", -0.01)):
        explorer.set(**{name: explorer.controls[name].value + step})
        assert explorer.error == ""
        assert draws == [], f"{name}: a small move drew the whole figure"
        assert_same_pixels(pixels(explorer), full_redraw(explorer))
        draws.clear()


def test_shaded_spans_hold_each_sample_until_the_next():
    t = np.array([0.0, 1.0, 2.0, 2.0, 3.0, 4.0])
    np.testing.assert_array_equal(shaded_spans(t, [1, 0, 0, 1, 1, 0]), [[0.0, 1.0], [2.0, 4.0]])
    np.testing.assert_array_equal(shaded_spans(t, [0, 0, 0, 0, 0, 1]), [[4.0, 4.0]])
    assert shaded_spans(t, np.zeros(6, bool)).shape == (0, 2)
    with pytest.raises(ValueError, match="`mask` must have one value per sample time"):
        shaded_spans(t, [True])
    with pytest.raises(ValueError, match="`shade` needs a time panel"):
        Panel("p", "x", "y", curves=(time_curve("a", lambda run: run.trajectory.t),), time=False,
              shade=Shade("s", lambda run: run.trajectory.t > 0))


def test_floor_forces_refuse_other_shapes():
    normal, friction = fcp.floor_forces(np.zeros((3, 4)), np.ones((3, 4)))
    np.testing.assert_array_equal(normal, 2.0)
    np.testing.assert_array_equal(friction, 2.0)
    with pytest.raises(ValueError, match="`ideal` and `nonideal` must have 4 columns"):
        fcp.floor_forces(np.zeros(3), np.zeros(3))
