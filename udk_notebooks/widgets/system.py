"""One explorer shape for every catalogue system: the mechanism, and panels of curves.

A :class:`SystemExplorer` shows a simulated run of one example: on the left the
mechanism at the animated instant with its three force arrows (drawn by
:class:`udk_notebooks.drawing.MechanismView` from the example's own
``mechanism()`` description), on the right one or more :class:`Panel` s of
curves over time or in a phase plane, each with a marker at the same instant;
a time panel can shade stretches of the run (a :class:`Shade`: where a friction
contact sticks, say), with colour and hatching.
A subclass says only what to simulate (:meth:`SystemExplorer.run`) and which
panels to show (:attr:`SystemExplorer.panels`); figure, blitting, view limits,
error handling and the kernel-free animation are shared.

A run that should not be trusted (a diverged integration, a drift far past
its bound) carries a ``warning``: the explorer prints it in red over the
mechanism, so such a run is never shown as if it were fine.
"""

from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.collections import PolyCollection
from matplotlib.ticker import MaxNLocator
from matplotlib.transforms import offset_copy

from ..compiled import CompiledModel
from ..drawing import FORCE_KINDS, Mechanism, MechanismView, animate, force_legend
from ..plotting import OKABE_ITO
from ..simulation import Trajectory
from .base import Explorer, ParameterSpec
from .views import fit_log_view

__all__ = ["Curve", "MechanismPanel", "Panel", "Shade", "SystemExplorer", "SystemRun", "shaded_spans", "time_curve",
           "trust_warning"]

LINE_STYLES = ("-", "--", ":", "-.")
CURVE_COLORS = (OKABE_ITO["blue"], OKABE_ITO["orange"], OKABE_ITO["bluish_green"], OKABE_ITO["reddish_purple"],
                OKABE_ITO["vermillion"], OKABE_ITO["sky_blue"])


@dataclass(frozen=True, eq=False)
class SystemRun:
    """What a :class:`SystemExplorer` draws: one run and what its panels need.

    Attributes
    ----------
    trajectory : Trajectory
        The simulated motion (its forces are drawn on the mechanism).
    mechanism : Mechanism
        The example's drawing for these parameter values.
    data : dict
        Further arrays the panels read (an exact solution, a second run, ...).
    warning : str
        Why this run should not be trusted ("" when it can be).
    info : str
        A short note printed in a corner of the mechanism view (a rank, a cost).
    model : CompiledModel, optional
        The model that produced ``trajectory`` (to evaluate it again at any sample).
    """

    trajectory: Trajectory
    mechanism: Mechanism
    data: dict = field(default_factory=dict)
    warning: str = ""
    info: str = ""
    model: CompiledModel | None = None


@dataclass(frozen=True)
class Curve:
    """One line of a panel.

    Parameters
    ----------
    label : str
        Legend text (matplotlib mathtext allowed).
    xy : callable
        ``xy(run) -> (x, y)``, two arrays of equal length (for a time panel ``x``
        is the time of each sample).
    color : str or callable, optional
        Colour (default: the panel's next Okabe-Ito colour), or ``color(run) -> str``
        for a colour that follows the run (the integrator chosen, say).
    ls : str, optional
        Line style (default: the panel's next one, so curves differ by colour *and*
        dash pattern).
    instant : bool, optional
        Mark the animated instant on this curve (it needs one point per sample of
        the trajectory).
    """

    label: str
    xy: Callable[[SystemRun], tuple[np.ndarray, np.ndarray]]
    color: str | Callable[[SystemRun], str] | None = None
    ls: str | None = None
    lw: float = 1.6
    instant: bool = True


@dataclass(frozen=True)
class Shade:
    """Stretches of a time panel's run shaded over the panel's whole height.

    Parameters
    ----------
    label : str
        Legend text of the shading, e.g. ``"block sticks"``.
    mask : callable
        ``mask(run) -> ndarray of bool, shape (N,)``, one value per sample of
        the trajectory. Each sample's value holds until the next sample (a
        step function, like the friction ``modes``): exact where the
        switching instants are samples, as :func:`udk_notebooks.simulate`
        makes them.
    color : str, optional
        Fill colour (a light grey by default, so that curves of any colour show on it).
    hatch : str, optional
        Hatching of the fill (matplotlib's patterns): a second cue beside the colour.
    """

    label: str
    mask: Callable[[SystemRun], np.ndarray]
    color: str = "0.86"
    hatch: str = "//"


def shaded_spans(t, mask) -> np.ndarray:
    """The time intervals where a per-sample mask holds, each sample's value holding until the next sample.

    Parameters
    ----------
    t : array_like, shape (N,)
        Sample times, non-decreasing.
    mask : array_like of bool, shape (N,)

    Returns
    -------
    ndarray, shape (k, 2)
        ``(start, end)`` of each maximal run of true values: from its first
        sample to the sample after its last one (the run's end if none).
    """
    t = np.asarray(t, dtype=float)
    mask = np.asarray(mask, dtype=bool)
    if t.shape != mask.shape or t.ndim != 1:
        raise ValueError(f"`mask` must have one value per sample time, shape {t.shape}; got shape {mask.shape}")
    edges = np.diff(np.concatenate([[0], mask.astype(np.int8), [0]]))
    starts, stops = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)  # stop: first sample after the run
    ends = t[np.minimum(stops, t.size - 1)] if t.size else t
    return np.column_stack([t[starts], ends]) if starts.size else np.zeros((0, 2))


@dataclass(frozen=True)
class Panel:
    """An axes of curves.

    Parameters
    ----------
    title : str
    xlabel, ylabel : str
        Axis labels with their SI unit, e.g. ``"time t (s)"``.
    curves : sequence of Curve
    time : bool, optional
        The x axis is time: it spans the run exactly and a vertical line marks the instant.
    yscale : {"linear", "log"}, optional
        ``"log"`` draws ``|y|`` (zeros left out): the scale of constraint drift.
    zero : bool, optional
        Keep ``y = 0`` in view (signs matter).
    equal : bool, optional
        Equal scales on both axes (paths in a plane).
    shade : Shade, optional
        Stretches of the run to shade (time panels only).
    nonnegative : bool, optional
        The plotted values are never negative (a distance, a force's size): the y view (and,
        for a panel that is not over time, the x view) starts at zero instead of running
        below it, so no tick promises a negative force.
    power_limits : (int, int), optional
        Orders of magnitude outside which the y tick labels of a linear panel
        take a common factor (``1e-5`` above the axis), as matplotlib's
        ``ScalarFormatter.set_powerlimits``; None keeps its default ``(-5, 6)``.
        For values that span many decades from run to run: short labels keep
        to the panel's laid-out cell, so a new run redraws the panel, not the
        whole figure.
    """

    title: str
    xlabel: str
    ylabel: str
    curves: Sequence[Curve]
    time: bool = True
    yscale: str = "linear"
    zero: bool = False
    equal: bool = False
    shade: Shade | None = None
    nonnegative: bool = False
    power_limits: tuple[int, int] | None = None

    def __post_init__(self):
        if self.yscale not in ("linear", "log"):
            raise ValueError(f"`yscale` must be 'linear' or 'log'; got {self.yscale!r}")
        if not self.curves:
            raise ValueError(f"panel {self.title!r} needs at least one curve")
        if self.shade is not None and not self.time:
            raise ValueError(f"panel {self.title!r}: `shade` needs a time panel (time=True)")
        if self.nonnegative and (self.yscale == "log" or self.equal):
            raise ValueError(f"panel {self.title!r}: `nonnegative` is for a linear panel of free aspect "
                             "(yscale='linear', equal=False)")
        if self.power_limits is not None:
            limits = tuple(self.power_limits)
            if (len(limits) != 2 or not all(isinstance(k, int) and not isinstance(k, bool) for k in limits)
                    or limits[0] > limits[1]):
                raise ValueError(f"panel {self.title!r}: `power_limits` must be two whole numbers (low, high) with "
                                 f"low <= high, e.g. (-2, 3); got {self.power_limits!r}")
            if self.yscale == "log":
                raise ValueError(f"panel {self.title!r}: `power_limits` is for a linear y axis; a log axis "
                                 "labels its decades itself")


def time_curve(label: str, values: Callable[[SystemRun], np.ndarray], **style) -> Curve:
    """A curve of ``values(run)`` against the run's sample times."""
    return Curve(label, lambda run: (run.trajectory.t, values(run)), **style)


class SystemExplorer(Explorer):
    """An explorer of one catalogue system: mechanism view and panels (subclass hooks below).

    Subclasses set :attr:`panels` (a sequence of :class:`Panel`), :attr:`heading`
    and implement :meth:`run`; the parameter table and extra controls are passed
    to this constructor.

    Parameters
    ----------
    parameters, extra : mapping of str to ParameterSpec
        The controls (see :class:`~udk_notebooks.widgets.base.Explorer`).
    forces : bool, optional
        Draw the three force arrows on the mechanism.
    **kwargs
        ``frames``, ``continuous_update``, ``title`` (see the base class).
    """

    panels: Sequence[Panel] = ()
    heading: str = ""
    drift_limit: float = 1e-3  # largest constraint residual of a run drawn without a warning
    # Inches at 100 dpi. Up to four cells (the mechanism and up to three panels) go in two columns,
    # 5.6 in wide: at 1366x768 with the file browser open (a notebook column of about 930 px) the
    # sliders fit beside the figure, so that both are on screen at once, and in an 800 px window the
    # figure fits the column (about 610 px) unscaled, its 7 pt text at 9.7 px
    # (tests/browser/test_layout_browser.py measures both). Five cells or more take rows of three.
    figure_width: float = 8.8
    row_height: float = 3.3
    grid_width: float = 5.6
    grid_row_height: float = 2.4

    def __init__(self, parameters: Mapping[str, ParameterSpec], *, extra: Mapping[str, ParameterSpec] | None = None,
                 forces: bool = True, **kwargs: Any):
        if "compute" in kwargs:
            raise TypeError("a SystemExplorer computes with its own run(); do not pass `compute`")
        self._forces = bool(forces)
        self._view = None
        kwargs.setdefault("title", self.heading)
        super().__init__(self.run, parameters, extra=extra, **kwargs)

    # -- subclass hook -----------------------------------------------------------
    def run(self, **values: Any) -> SystemRun:
        """Simulate with the control values by name; return what to draw."""
        raise NotImplementedError

    def default_mechanism(self) -> Mechanism:
        """The mechanism drawn before the first run (its structure fixes the artists)."""
        raise NotImplementedError

    # -- public ------------------------------------------------------------------
    @property
    def warning(self) -> str:
        """Why the run on screen should not be trusted (shown over the mechanism), or ``""``."""
        return getattr(self, "_trust", "")

    @property
    def trajectory(self) -> Trajectory | None:
        """The trajectory of the last good run (None before the first)."""
        return None if self.result is None else self.result.trajectory

    @property
    def view_of_mechanism(self) -> MechanismView:
        """The mechanism view (for tests and lessons: its arrows are the drawn forces)."""
        return self._view

    def drawn_forces(self) -> dict[str, np.ndarray]:
        """The generalized force vectors drawn at the current instant, by kind."""
        traj = self.result.trajectory
        j = self.frame_index(traj.t)
        return {kind: getattr(traj, kind)[j].copy() for kind in FORCE_KINDS}

    def drawn_spans(self, panel: int) -> np.ndarray:
        """The time intervals shaded in ``panels[panel]``, read back from its band, shape (k, 2)."""
        band = self._bands[panel]
        if band is None:
            raise ValueError(f"panel {panel} ({self.panels[panel].title!r}) has no `shade`")
        return np.array([[path.vertices[:, 0].min(), path.vertices[:, 0].max()] for path in band.get_paths()]
                        ).reshape(-1, 2)

    def animation(self, frames: int = 60, **options):
        """The current run as a kernel-free animation (:func:`udk_notebooks.animate`)."""
        if self.result is None:
            return None
        return animate(self.result.trajectory, self.result.mechanism, frames=frames, forces=self._forces, **options)

    # -- figure ------------------------------------------------------------------
    def _legend_rows(self, panel: Panel, columns: int) -> int:
        """Lines of the key under a panel: its entries, two (grid) or three (one row) to a line."""
        entries = sum(1 for curve in panel.curves if curve.label) + (panel.shade is not None)
        return math.ceil(entries / self._legend_columns(columns))

    @staticmethod
    def _legend_columns(columns: int) -> int:
        return 2 if columns == 2 else 3

    def _grid(self, cells: int):
        """The figure and its grid: cells of the former size, with room under each row for the panels' keys.

        A panel's key sits under its x label (:meth:`_panel_legend`), never over its curves, and is
        painted once with the axes (it does not change from run to run); each line of key adds
        :data:`LEGEND_LINE` inches under its row (the gap between rows, or the bottom margin).
        """
        columns = 2 if cells <= 4 else 3
        rows = math.ceil(cells / columns)
        # lines of key under each row: the panels' keys (the mechanism's force key has a place of its own)
        lines = [0] * rows
        for i, panel in enumerate(self.panels, start=1):
            lines[i // columns] = max(lines[i // columns], self._legend_rows(panel, columns))
        # the former layout, in inches: (width, height, left, right, bottom, top, wspace, hspace) as fractions
        if columns == 2:
            width, height = self.grid_width, self.grid_row_height * rows + 0.3
            left, right, bottom, top, wspace, hspace = 0.11, 0.97, 0.1 / rows + 0.04, 1 - 0.15 / rows, 0.42, 0.72
        else:
            width, height = self.figure_width, self.row_height * rows + 0.3
            left, right, bottom, top, wspace, hspace = 0.07, 0.985, 0.13 / rows + 0.02, 1 - 0.1 / rows, 0.38, 0.5
        bottom_in, top_in = bottom * height, (1 - top) * height
        cell = (height - bottom_in - top_in) / (rows + (rows - 1) * hspace)
        gap = hspace * cell
        # under each row: tick labels and x label (LEGEND_DROP points), the key's lines, air for the next title
        needed = [LEGEND_DROP / 72 + LEGEND_LINE * n + 0.05 if n else 0.0 for n in lines]
        bottom_in = max(bottom_in, needed[-1])
        gap = max([gap] + [n + 0.36 for n in needed[:-1]])
        height = top_in + rows * cell + (rows - 1) * gap + bottom_in
        fig = plt.figure(figsize=(width, height))
        grid = fig.add_gridspec(rows, columns, left=left, right=right, bottom=bottom_in / height,
                                top=1 - top_in / height, wspace=wspace, hspace=gap / cell)
        return fig, grid, columns

    def make_figure(self):
        cells = 1 + len(self.panels)
        fig, grid, columns = self._grid(cells)
        slots = [grid[i // columns, i % columns] for i in range(cells)]
        if cells % columns:  # the last panel of an uneven count takes the rest of its row (a wide time panel)
            slots[-1] = grid[(cells - 1) // columns, (cells - 1) % columns:]
        ax_mech = fig.add_subplot(slots[0])
        _fill_cell(ax_mech)
        ax_mech.set_aspect("equal", adjustable="box")
        ax_mech.tick_params(labelsize=8)
        ax_mech.set_title("(a) mechanism", fontsize=9, loc="left")
        mechanism = self.default_mechanism()
        ax_mech.set_xlabel(mechanism.xlabel, fontsize=8)
        ax_mech.set_ylabel(mechanism.ylabel, fontsize=8)
        self._view = MechanismView(ax_mech, mechanism, forces=self._forces)
        if self._forces and mechanism.forces:
            force_legend(ax_mech)
        self._warning = ax_mech.text(0.5, 0.5, "", transform=ax_mech.transAxes, ha="center", va="center",
                                     fontsize=8.5, color=OKABE_ITO["vermillion"], zorder=20,
                                     bbox=dict(facecolor="white", edgecolor=OKABE_ITO["vermillion"], alpha=0.9))
        self._info = ax_mech.text(0.98, 0.03, "", transform=ax_mech.transAxes, ha="right", va="bottom", fontsize=8,
                                  zorder=20, bbox=dict(facecolor="white", edgecolor="none", alpha=0.8, pad=1))
        self._axes = [ax_mech]
        self._lines = []  # per panel: (line, marker) per curve, and the instant line
        self._bands = []  # per panel: the shading (a PolyCollection of rectangles) or None
        self._legends = []
        for i, panel in enumerate(self.panels):
            ax = fig.add_subplot(slots[1 + i])
            ax.set_title(f"({chr(ord('b') + i)}) {panel.title}", fontsize=9, loc="left", pad=14)  # room for an offset text
            ax.set_xlabel(panel.xlabel, fontsize=8)
            ax.set_ylabel(panel.ylabel, fontsize=8)
            ax.tick_params(labelsize=8)
            for axis in (ax.xaxis, ax.yaxis):  # the size of a tick label, so that "1e-7" stays clear of the title
                axis.get_offset_text().set_fontsize(7)
            ax.xaxis.set_major_locator(MaxNLocator(4))
            if panel.yscale == "log":
                ax.set_yscale("log")
            else:
                ax.yaxis.set_major_locator(MaxNLocator(5))
                if panel.power_limits is not None:
                    ax.yaxis.get_major_formatter().set_powerlimits(panel.power_limits)
            if panel.equal:
                ax.set_aspect("equal", adjustable="box")
            curves = []
            for k, curve in enumerate(panel.curves):
                color = curve.color or CURVE_COLORS[k % len(CURVE_COLORS)]
                color = "0.5" if callable(color) else color  # set from the run in draw()
                ls = curve.ls or LINE_STYLES[k % len(LINE_STYLES)]
                (line,) = ax.plot([], [], color=color, ls=ls, lw=curve.lw, label=curve.label)
                marker = ax.plot([], [], "o", color=color, ms=4.5, zorder=5)[0] if curve.instant else None
                curves.append((line, marker))
            band = None
            if panel.shade is not None:
                # x in data, y in axes units: the band spans the panel's height whatever the y limits
                band = PolyCollection([], facecolors=panel.shade.color, edgecolors="0.62", linewidths=0.0,
                                      hatch=panel.shade.hatch, transform=ax.get_xaxis_transform(), zorder=0.5,
                                      label=panel.shade.label)
                ax.add_collection(band, autolim=False)
            now = ax.axvline(0.0, color="0.55", lw=0.9, ls=":") if panel.time else None
            if self._legend_rows(panel, columns):
                self._legends.append(_panel_legend(ax, self._legend_columns(columns)))
            self._axes.append(ax)
            self._lines.append((curves, now))
            self._bands.append(band)
        return fig

    def animated_artists(self):
        view_run = self._view.run_artists
        run = [*view_run] + [line for curves, _ in self._lines for line, _ in curves]
        run += [band for band in self._bands if band is not None]
        instant = [a for a in self._view.artists if a not in view_run] + [self._warning, self._info]
        instant += [m for curves, _ in self._lines for _, m in curves if m is not None]
        instant += [now for _, now in self._lines if now is not None]
        return run, instant

    def _panel_data(self, result: SystemRun):
        data = []
        for panel in self.panels:
            rows = []
            for curve in panel.curves:
                x, y = (np.asarray(v, dtype=float) for v in curve.xy(result))
                if x.shape != y.shape or x.ndim != 1:
                    raise ValueError(f"curve {curve.label!r} of panel {panel.title!r} must give x and y of one shape")
                if panel.yscale == "log":
                    y = np.abs(y)
                    y = np.where(y > 0, y, np.nan)  # a log axis cannot show zero: leave a gap
                rows.append((x, y))
            data.append(rows)
        return data

    def draw(self, result: SystemRun) -> None:
        if result.mechanism is not self._view.mechanism:
            try:
                self._view.set_mechanism(result.mechanism)
            except ValueError:  # another structure (more links): new artists, collected again for blitting
                self._rebuild_view(result.mechanism)
        traj = result.trajectory
        self._view.fit_forces(traj)
        self._view.show_trace(traj)
        self._data = self._panel_data(result)
        for panel, ax, (curves, _), band, rows in zip(self.panels, self._axes[1:], self._lines, self._bands,
                                                      self._data):
            for (line, marker), curve, (x, y) in zip(curves, panel.curves, rows):
                line.set_data(x, y)
                if callable(curve.color):
                    color = curve.color(result)
                    line.set_color(color)
                    if marker is not None:
                        marker.set_color(color)
            if band is not None:
                spans = shaded_spans(traj.t, panel.shade.mask(result))
                band.set_verts([[(a, 0.0), (b, 0.0), (b, 1.0), (a, 1.0)] for a, b in spans])
            if panel.time and traj.t.size > 1 and ax.get_xlim() != (traj.t[0], traj.t[-1]):
                ax.set_xlim(traj.t[0], traj.t[-1])
        self._info.set_text(result.info)
        warning = result.warning or trust_warning(traj, self.drift_limit)
        self._warning.set_text(textwrap.fill(warning, 36))
        self._warning.set_visible(bool(warning))
        self._trust = warning
        self._draw_instant(result)

    def _rebuild_view(self, mechanism: Mechanism) -> None:
        for artist in {*self._view.artists, *self._view.run_artists, *(line for _, line in self._view._guides)}:
            artist.remove()
        self._view = MechanismView(self._axes[0], mechanism, forces=self._forces)
        self._moving = self._collect_animated()
        self._figure.stale = True  # the static pixels held the old artists' places: draw in full

    def draw_frame(self, result: SystemRun, frame: int) -> None:
        self._draw_instant(result)

    def _draw_instant(self, result: SystemRun) -> None:
        traj = result.trajectory
        j = self.frame_index(traj.t)
        self._view.show(traj, j)
        for panel, (curves, now), rows in zip(self.panels, self._lines, self._data):
            for (line, marker), curve, (x, y) in zip(curves, panel.curves, rows):
                if marker is not None:
                    k = min(j, x.size - 1)
                    marker.set_data(x[k:k + 1], y[k:k + 1])
            if now is not None:
                now.set_xdata([traj.t[j], traj.t[j]])

    # The mechanism fills more of its panel than a curve does (it is the figure's main subject): a
    # tenth of its size around it, and a new view once it fills less than half (it is drawn at one scale).
    mechanism_view = {"margin": 0.1, "inset": 0.02, "shrink": 0.5}

    def view_options(self, ax) -> dict[str, float]:
        if ax is self._axes[0]:
            return dict(self.mechanism_view)
        options = super().view_options(ax)
        if self.panels[self._axes.index(ax) - 1].nonnegative:
            options["floor"] = 0.0  # the views stop at zero, and data near it do not move them
        return options

    def _fit_views(self, result: SystemRun) -> None:
        ax = self._axes[0]
        shown = (ax.get_xlim(), ax.get_ylim())
        super()._fit_views(result)
        # The arrow labels kept apart at the views just chosen. draw() placed them at the mechanism's
        # view as it was; where that view stays, placing them again gives the same spots (they depend
        # on the texts and that view's pixels only) and cost half the drawing of a 30-link chain's jump.
        if self._result is None or (ax.get_xlim(), ax.get_ylim()) != shown:
            self._view.place_labels()

    def data_limits(self, result: SystemRun):
        limits = {self._axes[0]: self._view.limits(result.trajectory)}
        for panel, ax, rows in zip(self.panels, self._axes[1:], self._data):
            xs = np.concatenate([x for x, _ in rows])
            ys = np.concatenate([y for _, y in rows])
            ys = np.clip(ys[np.isfinite(ys)], -1e250, 1e250)  # a diverged run still gets finite limits
            xs = np.clip(xs[np.isfinite(xs)], -1e250, 1e250)
            if ys.size == 0:
                continue
            if panel.yscale == "log":
                self._fit_log_view(ax, float(ys.min()), float(ys.max()))
                y_need = None
            else:
                lo, hi = float(ys.min()), float(ys.max())
                if panel.zero:
                    lo, hi = min(lo, 0.0), max(hi, 0.0)
                y_need = _padded(lo, hi)
            x_need = None if panel.time else _padded(float(xs.min()), float(xs.max()))
            if panel.nonnegative:  # padding must not ask for room below zero (see view_options)
                x_need, y_need = (None if need is None else (max(need[0], 0.0), max(need[1], 0.0))
                                  for need in (x_need, y_need))
            limits[ax] = (x_need, y_need)
        return limits

    def _fit_log_view(self, ax, lo: float, hi: float) -> None:
        """Whole decades around the data, kept while they serve (:func:`~udk_notebooks.widgets.views.fit_log_view`).

        Log views are fitted here, not by :func:`fit_view` (linear): values at rounding level wander
        by a decade from run to run, and a view that followed each decade would redraw its panel on
        almost every change. The first result gets a view of its own.
        """
        view = None if self.result is None else tuple(ax.get_ylim())
        new = fit_log_view(view, _log_need(lo, hi))
        if new is not None:
            ax.set_ylim(*new)


class MechanismPanel:
    """Panel (a) of a hand-made explorer figure drawn by a MechanismView: the run's update and accessors.

    For explorers whose other panels do not fit :class:`Panel` (bars, markers). A subclass of
    :class:`~udk_notebooks.widgets.base.Explorer` mixes it in, implements :meth:`mechanism_of`,
    calls :meth:`_add_mechanism` in ``make_figure`` and :meth:`_show_run` in ``draw``.
    """

    drift_limit: float = 1e-6
    force_share: float = 0.35  # the largest arrow of a run, as a share of the scene's size

    def mechanism_of(self, result) -> Mechanism:
        """The example's mechanism for the parameters of ``result``."""
        raise NotImplementedError

    @property
    def arrow_scale(self) -> float:
        """Metres of arrow per newton in the mechanism panel, fixed for a run."""
        return self._view.force_scale

    @property
    def view_of_mechanism(self) -> MechanismView:
        """The mechanism view (its arrows are the drawn forces)."""
        return self._view

    @property
    def warning(self) -> str:
        """Why the run on screen should not be trusted, or ``""``."""
        return self._warning.get_text() if self._warning.get_visible() else ""

    def animation(self, frames: int = 60, **options):
        """The current run as a kernel-free animation (:func:`udk_notebooks.animate`)."""
        if self.result is None:
            return None
        return animate(self.result.trajectory, self.mechanism_of(self.result), frames=frames, **options)

    def _fit_views(self, result) -> None:
        super()._fit_views(result)
        self._view.place_labels()  # the arrow labels kept apart at the views just chosen

    def _add_mechanism(self, ax, mechanism: Mechanism) -> None:
        """Create the view and the (hidden) warning text on ``ax``."""
        self._view = MechanismView(ax, mechanism)
        self._shown_parameters = None
        self._warning = ax.text(0.5, 0.5, "", transform=ax.transAxes, ha="center", va="center", fontsize=8,
                                color=OKABE_ITO["vermillion"], zorder=20, visible=False,
                                bbox=dict(facecolor="white", edgecolor=OKABE_ITO["vermillion"], alpha=0.9))

    def _show_run(self, result, trajectory: Trajectory) -> None:
        """Follow the run's parameters (a new slope), scale its forces, draw its trace and any warning."""
        if result.parameters != self._shown_parameters:
            self._view.set_mechanism(self.mechanism_of(result))
            self._shown_parameters = dict(result.parameters)
        self._view.fit_forces(trajectory, share=self.force_share)  # newtons to metres, fixed for the run
        self._view.show_trace(trajectory)
        warning = trust_warning(trajectory, self.drift_limit)
        self._warning.set_text(warning)
        self._warning.set_visible(bool(warning))


LEGEND_DROP = 30.0
"""Points from a panel's lower edge to the top of its key: tick labels and x label (8 pt) fit above."""
LEGEND_LINE = 0.15
"""Inches of figure height per line of a panel's key (7 pt text and its spacing)."""


def _panel_legend(ax, ncol: int):
    """A panel's key under its x label, ``ncol`` entries to a line: it never covers the curves.

    The offset is in points (tick labels and label have a fixed size), not a share of the axes.
    The key is static: drawn with the axes' frame and labels into the cached pixels, not on every update.
    """
    below_label = offset_copy(ax.transAxes, fig=ax.figure, y=-LEGEND_DROP, units="points")
    return ax.legend(loc="upper center", bbox_to_anchor=(0.5, 0.0), bbox_transform=below_label, ncol=ncol,
                     fontsize=7, frameon=False, handlelength=2.0, columnspacing=0.9, handletextpad=0.4,
                     borderaxespad=0.0, borderpad=0.0)


def _fill_cell(ax) -> None:
    """Start an equal-aspect axes with limits of its cell's own proportions, so that its box fills the cell.

    The views of such an axes keep the ratio of their spans (``fit_aspect_views``): starting from
    a square (0..1 by 0..1), a mechanism in a wide cell would stay in a square box, a third of
    the cell left empty and the mechanism drawn smaller than it could be.
    """
    box = ax.get_position(original=True)
    width, height = ax.figure.get_size_inches()
    ax.set_xlim(0.0, box.width * width)
    ax.set_ylim(0.0, box.height * height)


def _padded(lo: float, hi: float, share: float = 0.06) -> tuple[float, float]:
    span = hi - lo
    if span <= 1e-12 * max(1.0, abs(lo), abs(hi)):
        span = max(abs(lo), abs(hi), 1e-9)
    return lo - share * span, hi + share * span


def _log_need(lo: float, hi: float) -> tuple[float, float]:
    """Positive values a log view can show: ``(lo, hi)`` kept within 1e-300 to 1e300."""
    return min(max(lo, 1e-300), 1e300), min(max(hi, 1e-300), 1e300)


def trust_warning(trajectory: Trajectory, drift_limit: float) -> str:
    """Why a run should not be trusted, or ``""``: it diverged, or drifted past ``drift_limit``.

    A drift warning names the residual that passed the limit (position, ``phi``;
    velocity, ``(phi', psi)``), its largest value and when it was reached, and
    the limit: with Baumgarte stabilization the position residual may be within
    the limit while the velocity residual is not, and the fix differs.

    Parameters
    ----------
    trajectory : Trajectory
    drift_limit : float
        Largest accepted constraint residual (position and velocity level), in
        the residuals' own units.
    """
    if getattr(trajectory, "diverged", False):
        return f"Diverged at t = {trajectory.stop_time:.3g} s: {trajectory.stop_reason}"
    arrays = (trajectory.q, trajectory.qd, trajectory.qdd)
    if not all(np.isfinite(a).all() for a in arrays):
        bad = next(j for j in range(trajectory.t.size) if not all(np.isfinite(a[j]).all() for a in arrays))
        return f"Diverged: non-finite values from t = {trajectory.t[bad]:.3g} s"
    over = [_residual_peak(trajectory, name, residual) for name, residual in
            (("position", trajectory.position_residual), ("velocity", trajectory.velocity_residual))]
    over = [found for found in over if found is not None and not found[1] <= drift_limit]
    if not over:
        return ""
    which = ", ".join(f"{name} residual {value:.3g} (t = {when:.3g} s)" for name, value, when in over)
    advice = "a smaller step, RK4, or stabilization"
    if getattr(trajectory, "stabilization", None) is not None:
        advice = "a smaller step, RK4, or stronger gains"
    return f"Not to be trusted: {which}; limit {drift_limit:g}. Take {advice}"


def _residual_peak(trajectory: Trajectory, name: str, residual: np.ndarray) -> tuple[str, float, float] | None:
    """``(name, largest |residual|, its time)``, or None for a model without such rows."""
    if not residual.size:
        return None
    size = np.abs(residual).reshape(trajectory.t.size, -1).max(axis=1)
    if np.isnan(size).all():  # nothing to compare: reported, as NaN is never within a limit
        return name, math.nan, float(trajectory.t[0])
    j = int(np.nanargmax(size))
    return name, float(size[j]), float(trajectory.t[j])
