"""Plots of a :class:`~udk_notebooks.simulation.Trajectory` for lessons and reports.

Each function draws on a given :class:`matplotlib.axes.Axes` (or a new one),
returns the axes, and labels what it shows, so that lessons stay short.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from .simulation import Trajectory

__all__ = ["plot_coordinates", "plot_drift", "plot_energy_balance", "plot_forces"]


def _axes(ax):
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3.5), layout="constrained")
    return ax


def plot_coordinates(trajectory: Trajectory, names=None, ax=None):
    """Coordinates over time (all, or those named)."""
    ax = _axes(ax)
    names = names or trajectory.coordinate_names
    for name in names:
        ax.plot(trajectory.t, trajectory.coordinate(name), label=name)
    ax.set(xlabel="t", ylabel="q", title="coordinates")
    ax.legend(loc="best")
    return ax


def plot_drift(trajectory: Trajectory, ax=None, *, label: str | None = None, level: str = "auto"):
    """Largest constraint residual over time on a log scale: the drift off the constraints.

    ``level`` is ``"position"`` (``|phi|``), ``"velocity"`` (``|phi'|, |psi|``) or
    ``"auto"`` (position when the model has holonomic rows, else velocity).
    """
    ax = _axes(ax)
    if level not in {"auto", "position", "velocity"}:
        raise ValueError(f"`level` must be 'auto', 'position' or 'velocity'; got {level!r}")
    residual = trajectory.position_residual
    if level == "velocity" or (level == "auto" and residual.shape[1] == 0):
        residual, level = trajectory.velocity_residual, "velocity"
    else:
        level = "position"
    worst = np.abs(residual).max(axis=1) if residual.shape[1] else np.zeros(len(trajectory.t))
    ax.semilogy(trajectory.t, np.maximum(worst, 1e-18), label=label or trajectory.method)
    ax.set(xlabel="t", ylabel=f"max |{level} residual|", title="constraint drift")
    if label is not None:
        ax.legend(loc="best")
    return ax


def plot_forces(trajectory: Trajectory, coordinate: str | int = 0, ax=None):
    """The Newton, Lagrange and Coulomb terms (Eqs. 9-11 of the 2005 paper) along one coordinate."""
    ax = _axes(ax)
    j = trajectory.coordinate_names.index(coordinate) if isinstance(coordinate, str) else int(coordinate)
    name = trajectory.coordinate_names[j]
    for field, style in (("impressed", "-"), ("ideal", "--"), ("nonideal", ":")):
        ax.plot(trajectory.t, getattr(trajectory, field)[:, j], style, label=field)
    ax.set(xlabel="t", ylabel=f"force along {name}", title="force terms")
    ax.legend(loc="best")
    return ax


def plot_energy_balance(trajectory: Trajectory, ax=None):
    """Energy change beside the work of each power term (power theorem), and what is left over."""
    ax = _axes(ax)
    ax.plot(trajectory.t, trajectory.energy - trajectory.energy[0], lw=2, label="h - h0")
    for name, work in trajectory.work().items():
        if np.any(work):
            ax.plot(trajectory.t, work, "--", label=f"work: {name}")
    ax.plot(trajectory.t, trajectory.energy_balance(), "k:", label="balance (should be 0)")
    ax.set(xlabel="t", ylabel="energy", title="power theorem")
    ax.legend(loc="best")
    return ax
