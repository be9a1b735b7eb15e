"""What the generic explorer tells a student about a run it does not vouch for.

- The red drift warning names the residual that passed ``drift_limit`` (position ``phi`` or velocity
  ``(phi', psi)``), its largest value, when, and the limit: with Euler and Baumgarte stabilization the
  two residuals can tell different stories.
- A sweep map's cell without a value has a status and a reason; a gain sweep's row ``gain_beta = 0``
  is refused because Baumgarte's error equation ``phi'' + 2 alpha phi' + beta^2 phi = 0`` then has the
  root 0 (the position drift is not pulled back), and the map says so.
- ``units`` naming a parameter the model lacks fails with the unknown names and the model's names.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
import sympy as sm
from sympy.physics.mechanics import dynamicsymbols

import udk_notebooks as udk
from udk_notebooks.stabilization import Baumgarte
from udk_notebooks.widgets.model_explorer import parameter_rows
from udk_notebooks.widgets.system import trust_warning


def _pendulum(**parameters: float) -> udk.Model:
    """The Cartesian pendulum with its numbers as parameters (or written in, when none are given)."""
    x, y = dynamicsymbols("x y")
    m, g, l = sm.symbols("m g l", positive=True)
    values = {m: 1.0, g: 9.81, l: 1.0}
    if not parameters:
        return udk.Model([x, y], kinetic_energy=(x.diff() ** 2 + y.diff() ** 2) / 2, potential_energy=9.81 * y,
                         holonomic=[x**2 + y**2 - 1])
    return udk.Model([x, y], kinetic_energy=m * (x.diff() ** 2 + y.diff() ** 2) / 2, potential_energy=m * g * y,
                     holonomic=[x**2 + y**2 - l**2], parameters=values)


def _start(l=1.0, angle=1.0):
    return [l * math.sin(angle), -l * math.cos(angle)], [0.0, 0.0]


# -- the drift warning ------------------------------------------------------------------------------------
def _run(position, velocity, stabilization=None):
    """A trajectory-like record with the given residual histories, shape (N, rows)."""
    t = np.linspace(0.0, 1.0, len(position))
    finite = np.zeros((t.size, 2))
    return SimpleNamespace(t=t, q=finite, qd=finite, qdd=finite, diverged=False, stabilization=stabilization,
                           position_residual=np.asarray(position, float).reshape(t.size, -1),
                           velocity_residual=np.asarray(velocity, float).reshape(t.size, -1))


def test_drift_warning_names_the_residual_that_passed_the_limit():
    only_velocity = trust_warning(_run([0.0, 1e-4, 2e-4], [0.0, 0.05, -0.08], Baumgarte(10.0, 10.0)), 1e-3)
    assert only_velocity.startswith("Not to be trusted: velocity residual 0.08 (t = 1 s); limit 0.001")
    assert "position" not in only_velocity and "stronger gains" in only_velocity
    only_position = trust_warning(_run([0.0, -0.3, 0.1], [0.0, 1e-4, 0.0]), 1e-3)
    assert only_position.startswith("Not to be trusted: position residual 0.3 (t = 0.5 s); limit 0.001")
    assert "velocity" not in only_position and only_position.endswith("or stabilization")
    both = trust_warning(_run([0.0, 0.02, 0.0], [0.0, 0.0, 0.5]), 1e-2)
    assert "position residual 0.02 (t = 0.5 s), velocity residual 0.5 (t = 1 s); limit 0.01" in both
    assert trust_warning(_run([0.0, 1e-3, 0.0], [1e-3, 0.0, 0.0]), 1e-3) == ""  # at the limit is within it


def test_euler_with_baumgarte_warning_quotes_the_run_it_marks():
    explorer = udk.explore(_pendulum(m=1.0), _start, t_end=2.0, method="euler", step=0.01,
                           stabilization=Baumgarte(5.0, 5.0))
    assert explorer.error == ""
    traj = explorer.trajectory
    position, velocity = np.abs(traj.position_residual).max(), np.abs(traj.velocity_residual).max()
    assert max(position, velocity) > 1e-3, "the case must trip the warning"
    for name, value in (("position", position), ("velocity", velocity)):
        assert (f"{name} residual {value:.3g}" in explorer.warning) == (value > 1e-3), explorer.warning


# -- the sweep map ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["euler", "rk4"])
def test_gain_sweep_row_beta_zero_is_refused_and_says_why(method):
    explorer = udk.explore(_pendulum(m=1.0), _start, t_end=0.5, method=method, step=0.01,
                           stabilization=Baumgarte(2.0, 2.0))
    found = explorer.sweep("gain_alpha", "gain_beta", "final drift", n=3)
    assert found.ys[0] == 0.0
    assert list(found.status[0]) == ["refused"] * 3 and np.isnan(found.values[0]).all()
    assert (found.status[1:, 1:] == "ok").all() and np.isfinite(found.values[1:, 1:]).all()  # alpha, beta > 0
    assert np.array_equal(np.isnan(found.values), found.status != "ok"), "a NaN cell without a status"
    refused = [note for note in found.notes if " refused, the first at gain_alpha = 0, gain_beta = 0:" in note]
    assert refused and "beta = 0 leaves the position drift phi where it is" in refused[0]
    markers = [line for line in found.figure.axes[0].lines if line.get_label() == "refused (x)"]
    assert markers and len(markers[0].get_xdata()) == int((found.status == "refused").sum())


def test_sweep_button_prints_the_notes_under_the_map():
    explorer = udk.explore(_pendulum(m=1.0), _start, t_end=0.3, step=0.03, stabilization=Baumgarte(2.0, 2.0))
    explorer._sweep_x.value, explorer._sweep_y.value = "l", "gain_beta"
    explorer._on_sweep()
    kinds = [output["output_type"] for output in explorer._sweep_output.outputs]
    assert kinds == ["display_data", "stream"]
    assert "runs refused" in explorer._sweep_output.outputs[1]["text"]


def _unmarked_grey_cells(found) -> int:
    """Cells the map leaves uncoloured (grey) minus the markers drawn on them: 0 when each grey cell says why."""
    ax = found.figure.axes[0]
    grey = int(np.ma.getmaskarray(ax.collections[0].get_array()).sum())
    marked = sum(len(line.get_xdata()) for line in ax.lines if line.get_marker() != "*")
    return grey - marked


def test_a_run_without_position_drift_is_marked_zero_not_left_grey():
    """A particle kept on ``x' = y'`` by a nonholonomic row has no ``phi``: its final drift is 0, which a log scale
    cannot colour; before, those cells were grey with no marker and no note."""
    x, y = dynamicsymbols("x y")
    m, g = sm.symbols("m g", positive=True)
    model = udk.Model([x, y], kinetic_energy=m * (x.diff() ** 2 + y.diff() ** 2) / 2, potential_energy=m * g * y,
                      nonholonomic=[x.diff() - y.diff()], parameters={m: 1.0, g: 9.81})
    explorer = udk.explore(model, lambda **p: ([0.0, 0.0], [1.0, 1.0]), t_end=0.2, step=0.02)
    found = explorer.sweep("m", "g", "final drift", n=2)
    assert (found.values == 0.0).all() and (found.status == "zero").all()
    assert found.notes == [f"4 of 4 runs zero, the first at m = {found.xs[0]:.4g}, g = {found.ys[0]:.4g}: "
                           "the final drift is 0, which the log10 colour scale cannot show"]
    assert [line.get_label() for line in found.figure.axes[0].lines][1:] == ["zero (o)"]
    assert _unmarked_grey_cells(found) == 0


def test_an_ok_run_whose_outcome_is_not_a_number_gets_a_status_and_a_marker():
    from udk_notebooks.widgets.model_explorer import SweepMap

    axis = np.array([0.0, 1.0])
    logged = SweepMap("a", "b", axis, axis, np.array([[1e-3, 0.0], [np.nan, np.inf]]), "max drift", (0.5, 0.5))
    assert logged.status.tolist() == [["ok", "zero"], ["no outcome", "no outcome"]]
    assert logged.notes[1] == ("2 of 4 runs no outcome, the first at a = 0, b = 1: the run finished but its max drift "
                               "is nan; the map shows only finite, positive numbers (log10 scale)")
    assert _unmarked_grey_cells(logged) == 0
    # a linear scale colours 0; the statuses given (a refused run) are kept
    linear = SweepMap("a", "b", axis, axis, np.array([[0.0, 1.0], [np.nan, np.nan]]), "divergence", (0.5, 0.5),
                      status=np.array([["ok", "ok"], ["ok", "refused"]]))
    assert linear.status.tolist() == [["ok", "ok"], ["no outcome", "refused"]]
    assert _unmarked_grey_cells(linear) == 0
    negative = SweepMap("a", "b", axis, axis, np.array([[-1.0, 1.0], [2.0, 3.0]]), "final drift", (0.5, 0.5))
    assert negative.status.tolist() == [["no outcome", "ok"], ["ok", "ok"]] and _unmarked_grey_cells(negative) == 0


def test_check_gain_says_which_zero_gain_leaves_the_drift():
    with pytest.raises(udk.UnstableGainError, match=r"beta = 0 leaves the position drift phi where it is"):
        udk.check_gain(Baumgarte(alpha=3.0, beta=0.0, gamma=1.0), "rk4", 0.01, 1, 1)
    with pytest.raises(udk.UnstableGainError, match=r"gamma = 0 leaves the velocity drift psi where it is") as caught:
        udk.check_gain(Baumgarte(alpha=3.0, beta=3.0, gamma=0.0), "rk4", 0.01, 1, 1)
    assert "beta = 0" not in str(caught.value)


# -- units ------------------------------------------------------------------------------------------------
def test_units_for_a_parameter_the_model_lacks_fail_with_both_lists():
    with pytest.raises(ValueError, match=r"`units` names unknown parameter\(s\) kappa; the model has m, g, l: "
                                         r"leave kappa out of `units`"):
        udk.explore(_pendulum(m=1.0), _start, units={"m": "kg", "kappa": "1/m"})
    with pytest.raises(ValueError, match=r"unknown parameter\(s\) g, m; the model has no parameters"):
        udk.explore(_pendulum(), _start, units={"m": "kg", "g": "m/s^2"})
    rows = parameter_rows(_pendulum(m=1.0).compile(), None, {"l": "m"})
    assert rows["l"][2] == "model parameter l, in m" and rows["m"][2] == "model parameter m"
