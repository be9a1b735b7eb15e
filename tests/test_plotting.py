"""The plotting helpers draw what they claim, from a real trajectory."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from udk_notebooks import simulate  # noqa: E402
from udk_notebooks.examples import inclined_line  # noqa: E402
from udk_notebooks.plotting import FORCE_STYLES, plot_coordinates, plot_drift, plot_energy_balance, plot_forces  # noqa: E402


@pytest.fixture(scope="module")
def trajectory():
    return simulate(inclined_line.model(k=2.0), (0.0, 1.0), *inclined_line.initial_state(k=2.0), method="rk4", step=0.01)


def test_plot_forces_draws_the_three_terms(trajectory):
    ax = plot_forces(trajectory, "x1")
    lines = {line.get_label(): line for line in ax.get_lines()}
    for kind in ("impressed", "ideal", "nonideal"):  # each term in its own style: colour, dashes and label
        line = lines[FORCE_STYLES[kind]["label"]]
        np.testing.assert_allclose(line.get_ydata(), getattr(trajectory, kind)[:, 0])
        assert line.get_linestyle() == FORCE_STYLES[kind]["ls"]
    plt.close(ax.figure)


def test_plot_drift_shows_the_largest_residual(trajectory):
    ax = plot_drift(trajectory, label="rk4")
    drawn = ax.get_lines()[0].get_ydata()
    np.testing.assert_allclose(drawn, np.maximum(np.abs(trajectory.position_residual).max(axis=1), 1e-18))
    with pytest.raises(ValueError, match="`level`"):
        plot_drift(trajectory, level="acceleration")
    plt.close(ax.figure)


def test_plot_energy_balance_and_coordinates(trajectory):
    ax = plot_energy_balance(trajectory)
    balance = [line for line in ax.get_lines() if line.get_label().startswith("balance")][0]
    assert np.abs(balance.get_ydata()).max() < 1e-6
    ax2 = plot_coordinates(trajectory)
    assert [line.get_label() for line in ax2.get_lines()] == ["x1", "x2"]
    plt.close("all")
