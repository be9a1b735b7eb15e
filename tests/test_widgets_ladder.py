"""The ladder explorer driven from Python: lift-off against closed forms and an independent event-driven code.

The generic checks (forces on screen, random controls) are in ``test_explorers.py``. Here: the leave angle
shown against ``asin(2/3 sin theta0)``, the drawn normal forces against the joint solve of
``examples.ladder.contact_forces`` and the lift-off instant against ``examples.ladder.reference`` (solve_ivp
with its own event), and the refusals: a ladder held by friction, Painlevé's paradox, an impact.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from udk_notebooks.errors import PainleveParadoxError, SimulationError
from udk_notebooks.examples import ladder
from udk_notebooks.widgets import EXPLORERS, LadderExplorer
from udk_notebooks.widgets import ladder as ladder_widget

NORMALS, DISTANCE = 0, 1  # panels (b), (c)


@pytest.fixture(scope="module")
def explorer():
    explorer = LadderExplorer(samples=101)
    yield explorer
    explorer.close()


def _line(explorer, panel: int, curve: int):
    ax = explorer.figure.axes[1 + panel]
    label = explorer.panels[panel].curves[curve].label
    return next(line for line in ax.get_lines() if line.get_label() == label)


def test_registered_and_default_run_is_trusted(explorer):
    assert EXPLORERS["ladder"] is LadderExplorer
    explorer.set(theta0=1.2, mu_floor=0.0, mu_wall=0.0, L=1.0, horizon=0.5)
    assert explorer.error == "" and explorer.warning == ""
    assert explorer.result.trajectory.contact_names == ("floor", "wall")


@pytest.mark.parametrize("theta0", [0.7, 1.2, 1.45])
def test_frictionless_leave_angle_shown_is_the_closed_form(explorer, theta0):
    explorer.set(theta0=theta0, mu_floor=0.0, mu_wall=0.0, L=1.0, horizon=1.2)
    assert explorer.error == ""
    closed = math.asin(2 / 3 * math.sin(theta0))
    assert explorer.result.data["leave_angle"] == pytest.approx(closed, abs=1e-8)
    assert explorer.leave_angle_shown() == pytest.approx(closed, abs=6e-6)  # printed with 5 decimals
    assert f"{closed:.5f}" in explorer._info.get_text()


def test_lift_off_instant_and_shading_match_the_event_driven_reference(explorer):
    explorer.set(theta0=0.9, mu_floor=0.2, mu_wall=0.1, L=1.3, horizon=0.5)
    assert explorer.error == "" and explorer.warning == ""
    reference = ladder.reference(0.9, 0.5, mu_floor=0.2, mu_wall=0.1, L=1.3)
    leave = explorer.result.data["leave_time"]
    assert leave == pytest.approx(reference.leave_time, abs=1e-7)
    spans = explorer.drawn_spans(NORMALS)
    assert spans.shape == (1, 2) and spans[0, 0] == pytest.approx(leave, abs=1e-12)
    np.testing.assert_array_equal(explorer.drawn_spans(DISTANCE), spans)
    wall = _line(explorer, NORMALS, 1).get_ydata()
    t = explorer.result.trajectory.t
    assert np.all(wall[t > leave] == 0.0) and np.all(wall[t < leave] > 0.0)


@pytest.mark.parametrize("mu_floor, mu_wall", [(0.0, 0.0), (0.2, 0.15)])
def test_drawn_normal_forces_are_the_joint_solve(explorer, mu_floor, mu_wall):
    """Before lift-off, N_floor and N_wall equal the contact forces of the (theta, theta') joint solve."""
    explorer.set(theta0=0.9, mu_floor=mu_floor, mu_wall=mu_wall, L=1.0, horizon=0.5)
    traj = explorer.result.trajectory
    before = np.flatnonzero(traj.t < explorer.result.data["leave_time"])[1::7]
    floor, wall = _line(explorer, NORMALS, 0).get_ydata(), _line(explorer, NORMALS, 1).get_ydata()
    for j in before:
        _, n_floor, n_wall = ladder.contact_forces(traj.q[j, 2], min(traj.qd[j, 2], 0.0), mu_floor=mu_floor,
                                                   mu_wall=mu_wall)
        assert floor[j] == pytest.approx(n_floor, rel=1e-6)
        assert wall[j] == pytest.approx(n_wall, rel=1e-6, abs=1e-6)


def test_sliders_change_the_figure(explorer):
    explorer.set(theta0=1.2, mu_floor=0.0, mu_wall=0.0, L=1.0, horizon=0.5)
    before = _line(explorer, NORMALS, 1).get_ydata().copy()
    explorer.set(theta0=1.0)
    after = _line(explorer, NORMALS, 1).get_ydata()
    assert after.shape != before.shape or not np.allclose(after, before)
    assert after[0] == pytest.approx(ladder.contact_forces(1.0, 0.0)[2], rel=1e-9)


def test_a_ladder_held_by_friction_is_refused_in_place(explorer):
    explorer.set(theta0=1.2, mu_floor=0.0, mu_wall=0.0, L=1.0, horizon=0.5)
    good = explorer.result
    explorer.set(mu_floor=0.5, mu_wall=0.3)
    assert explorer.error.startswith("ValueError: friction holds the ladder at rest")
    assert "statically indeterminate" in explorer.error
    assert explorer.result is good  # the last good run stays on screen
    explorer.set(mu_floor=0.5, mu_wall=0.0)  # smooth wall: held, but statics decides N_floor = m g, N_wall = friction
    assert explorer.error.startswith("ValueError: friction holds the ladder at rest")
    assert "indeterminate" not in explorer.error
    explorer.set(mu_floor=0.0, mu_wall=0.0)
    assert explorer.error == "" and explorer.result is not good


def test_an_impact_is_drawn_up_to_its_instant_with_a_warning(explorer):
    explorer.set(theta0=1.2, mu_floor=0.0, mu_wall=0.0, L=1.0, horizon=1.5)
    assert explorer.error == ""
    assert explorer.warning.startswith("Impact at t = ") and "not modelled" in explorer.warning
    traj = explorer.result.trajectory
    assert traj.status == "impact"
    reference = ladder.reference(1.2, 1.5, t_eval=np.linspace(0.0, 1.5, 3001))
    assert reference.status == "top reaches the floor"
    when = float(explorer.warning.split("t = ")[1].split(" s")[0])
    assert when == pytest.approx(reference.t[-1], abs=1e-3)
    assert np.all(ladder.top_height(traj.q) > 0)  # nothing drawn below the floor


def test_painleve_paradox_is_refused_with_its_own_message(explorer, monkeypatch):
    explorer.set(theta0=1.2, mu_floor=0.0, mu_wall=0.0, L=1.0, horizon=0.5)
    good = explorer.result

    def paradox(*args, **kwargs):
        try:
            raise PainleveParadoxError("Painleve's paradox at contact 'floor'", contacts=("floor",))
        except PainleveParadoxError as cause:
            raise SimulationError("the run failed", 0.1, np.zeros(6)) from cause

    monkeypatch.setattr(ladder_widget, "simulate", paradox)
    explorer.set(theta0=1.0)
    assert explorer.error.startswith("PainleveParadoxError: Painleve's paradox")
    assert explorer.result is good
