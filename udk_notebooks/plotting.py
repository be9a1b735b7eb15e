"""Plots of a :class:`~udk_notebooks.simulation.Trajectory` for lessons and reports.

Each function draws on a given :class:`matplotlib.axes.Axes` (or a new one),
returns the axes, and labels what it shows, so that lessons stay short.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from .simulation import Trajectory

__all__ = [
    "FORCE_STYLES",
    "METHOD_COLORS",
    "OKABE_ITO",
    "plot_coordinates",
    "plot_drift",
    "plot_energy_balance",
    "plot_forces",
    "plot_phase",
]

OKABE_ITO = {
    "orange": "#E69F00",
    "sky_blue": "#56B4E9",
    "bluish_green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "reddish_purple": "#CC79A7",
    "black": "#000000",
}
"""The Okabe-Ito palette: eight colours that stay distinct under the common colour-vision deficiencies."""

FORCE_STYLES = {
    "impressed": dict(color=OKABE_ITO["blue"], ls="-", lw=2.0, z=0.3, short="N", label="impressed $F^N$ (solid)"),
    "ideal": dict(color=OKABE_ITO["orange"], ls="--", lw=2.0, z=0.2, short="L", label="ideal $F^L$ (dashed)"),
    "nonideal": dict(color=OKABE_ITO["reddish_purple"], ls=":", lw=2.4, z=0.1, short="C",
                     label="nonideal $F^C$ (dotted)"),
}
"""How the three force terms (2005 paper, Eqs. 9-11) are drawn everywhere: colour, line style and label."""

METHOD_COLORS = {
    "euler": OKABE_ITO["vermillion"],
    "rk4": OKABE_ITO["blue"],
    "DOP853": OKABE_ITO["bluish_green"],
    "RK45": OKABE_ITO["reddish_purple"],
    "RK23": OKABE_ITO["sky_blue"],
    "Radau": OKABE_ITO["orange"],
    "BDF": OKABE_ITO["yellow"],
    "LSODA": OKABE_ITO["black"],
}
"""One colour per integrator, the same in every figure and explorer (stabilized or not is the line style)."""


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
    ax.set(xlabel="t (s)", ylabel="q (m or rad)", title="coordinates")
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
    ax.semilogy(trajectory.t, np.maximum(worst, 1e-18), label=label or trajectory.method,
                color=METHOD_COLORS.get(trajectory.method))
    ax.set(xlabel="t (s)", ylabel=f"max |{level} residual|", title="constraint drift")
    if label is not None:
        ax.legend(loc="best")
    return ax


def plot_forces(trajectory: Trajectory, coordinate: str | int = 0, ax=None):
    """The Newton, Lagrange and Coulomb terms (Eqs. 9-11 of the 2005 paper) along one coordinate."""
    ax = _axes(ax)
    j = trajectory.coordinate_names.index(coordinate) if isinstance(coordinate, str) else int(coordinate)
    name = trajectory.coordinate_names[j]
    for field, style in FORCE_STYLES.items():
        ax.plot(trajectory.t, getattr(trajectory, field)[:, j], color=style["color"], ls=style["ls"],
                lw=style["lw"], label=style["label"])
    ax.set(xlabel="t (s)", ylabel=f"force along {name} (N or N m)", title="force terms")
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
    ax.set(xlabel="t (s)", ylabel="energy (J)", title="power theorem")
    ax.legend(loc="best")
    return ax


def plot_phase(trajectory: Trajectory, coordinate: str | int = 0, ax=None, *, label: str | None = None):
    """The phase portrait of one coordinate: ``q'`` against ``q``, with the start marked.

    Parameters
    ----------
    trajectory : Trajectory
    coordinate : str or int, optional
        The coordinate by name or index.
    ax : matplotlib.axes.Axes, optional
    label : str, optional
        Legend entry of the curve.
    """
    ax = _axes(ax)
    names = trajectory.coordinate_names
    if isinstance(coordinate, str):
        if coordinate not in names:
            raise ValueError(f"unknown `coordinate` {coordinate!r}; choose from {', '.join(names)}")
        j = names.index(coordinate)
    else:
        j = int(coordinate)
        if not -len(names) <= j < len(names):
            raise ValueError(f"`coordinate` index {coordinate} is out of range for {len(names)} coordinates")
    name = names[j]
    (line,) = ax.plot(trajectory.q[:, j], trajectory.qd[:, j], lw=1.4, label=label)
    ax.plot(trajectory.q[0, j], trajectory.qd[0, j], "o", color=line.get_color(), ms=5)
    ax.set(xlabel=f"{name} (m or rad)", ylabel=f"{name}' (m/s or rad/s)", title=f"phase portrait of {name}")
    if label is not None:
        ax.legend(loc="best")
    return ax
