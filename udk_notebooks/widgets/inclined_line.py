r"""Explorer for the particle on an inclined line with a nonideal force (2005 paper, Sec. 4).

Sliders: the mass ``m``, the ``slope`` of the line ``slope * x1 - x2 = 0`` (the
paper's ``k``, Eq. 24), gravity ``g``, the nonideal vector ``c = (c1, c2)`` and
the simulated ``horizon``. Panels:

(a) the path in the ``(x1, x2)`` plane, the line, the particle at the animated
    instant and the three forces of Eq. (8) acting on it: impressed ``F^N``
    (Eq. 9), ideal ``F^L`` (Eq. 10) and nonideal ``F^C`` (Eq. 11), drawn by
    :class:`~udk_notebooks.drawing.MechanismView` from the example's own
    description (:func:`~udk_notebooks.examples.inclined_line.mechanism`);
(b) the accelerations ``x1''`` and ``x2''`` over time;
(c) the virtual work of each force on the unit virtual displacement ``v``
    (``A v = 0``): the ideal force does none (Eq. 16), the nonideal force does
    ``v . c`` (Eq. 18), drawn as a dashed mark over its bar.

Every number comes from the package's solver: the model is compiled once and
each slider move runs :func:`udk_notebooks.simulate` (fixed-step RK4), which
evaluates the Udwadia-Kalaba equation (Eq. 7) at every step.

The explorer opens at ``slope = 2``: there ``c = (1, 2)`` points along the line,
so the whole of ``c`` acts, ``F^C = c`` (Eq. 11 with ``M = I``). The paper keeps
``k`` symbolic; the slider spans ``-3 <= k <= 3``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import MaxNLocator

from .._kept_code import compile_kept
from .._checks import finite_float
from ..compiled import CompiledModel
from ..core import virtual_displacements
from ..examples import inclined_line
from ..plotting import FORCE_STYLES, OKABE_ITO
from ..simulation import Trajectory, simulate
from .base import Explorer, _count, parameter_table
from .system import MechanismPanel

__all__ = ["InclinedLineExplorer", "InclinedLineResult"]

FORCE_NAMES = ("impressed", "ideal", "nonideal")
FORCE_COLORS = {name: FORCE_STYLES[name]["color"] for name in FORCE_NAMES}
UNITS = {"m": "kg", "g": "m/s^2", "k": "1 (rise per run)", "c1": "N", "c2": "N"}
DEFAULT_SLOPE = 2.0  # c = (1, 2) lies along the line x2 = 2 x1: the whole of c acts (F^C = c)


@lru_cache(maxsize=1)
def compiled_model() -> CompiledModel:
    """The inclined-line model, lambdified once per session (parameters are passed per call)."""
    return compile_kept("inclined_line.model", inclined_line.model)


@dataclass(frozen=True, eq=False)
class InclinedLineResult:
    """One simulated run of the inclined-line example.

    Attributes
    ----------
    trajectory : Trajectory
        Samples of ``q = (x1, x2)``, accelerations and the three forces.
    virtual_displacement : ndarray, shape (N, 2)
        At each sample, the unit vector ``v`` with ``A v = 0`` (from
        :func:`udk_notebooks.virtual_displacements`), oriented with its first
        nonzero component positive.
    virtual_work : dict of str to ndarray, shape (N,)
        ``v . F`` for ``"impressed"``, ``"ideal"`` and ``"nonideal"``, and
        ``"c"``: ``v . c``, which the nonideal force must match (Eq. 18).
    parameters : dict of str to float
        The model parameters used (``k`` is the slider ``slope``).
    """

    trajectory: Trajectory
    virtual_displacement: np.ndarray
    virtual_work: dict
    parameters: dict

    def forces(self, index: int) -> dict[str, np.ndarray]:
        """The three force vectors at sample ``index``, shape (2,) each."""
        traj = self.trajectory
        return {name: getattr(traj, name)[index].copy() for name in FORCE_NAMES}


def _unit_virtual_displacement(A: np.ndarray) -> np.ndarray:
    basis = virtual_displacements(A)
    v = basis[:, 0]
    lead = v[np.flatnonzero(np.abs(v) > 1e-12)[0]]
    return v / np.linalg.norm(v) * np.sign(lead)


class InclinedLineExplorer(MechanismPanel, Explorer):
    """Sliders for ``m``, ``slope``, ``g``, ``c1``, ``c2`` and ``horizon`` over three panels.

    Parameters
    ----------
    steps : int, optional
        RK4 steps over the horizon (and animation frames minus one).
    speed : float, optional
        Initial speed along the line, from the origin (``initial_state``).
    **kwargs
        Passed to :class:`~udk_notebooks.widgets.base.Explorer`
        (``continuous_update``, ``title``).

    Examples
    --------
    >>> explorer = InclinedLineExplorer().set(slope=2.0, c1=1.0, c2=2.0)
    >>> explorer.forces()["nonideal"].round(12)  # (c1 + k c2)/(k^2 + 1) (1, k), Eq. (32)
    array([1., 2.])
    """

    steps: int = 50
    drift_limit: float = 1e-6  # the line is linear: RK4 keeps it to rounding, so any visible drift is a fault
    horizon: tuple = (2.0, (0.5, 5.0), "simulated time span, in seconds")

    def __init__(self, *, steps: int | None = None, speed: float = 1.0, **kwargs):
        if "frames" in kwargs:
            raise TypeError("InclinedLineExplorer animates every RK4 step: set `steps` (frames = steps + 1), "
                            "not `frames`")
        self.steps = _count(steps if steps is not None else type(self).steps, "steps")
        self.speed = finite_float(speed, "`speed`")
        self._drawn = {}
        table = parameter_table(inclined_line.PARAMETERS, rename={"k": "slope"}, order=("m", "slope", "g", "c1", "c2"),
                                units=UNITS)
        table["slope"] = (DEFAULT_SLOPE, *table["slope"][1:])
        kwargs.setdefault("title", "Particle on the line <i>k x</i><sub>1</sub> &minus; <i>x</i><sub>2</sub> = 0 (<i>k</i>: the slope) with a nonideal force "
                                   "(Udwadia, Kalaba &amp; Fan 2005, Sec. 4)")
        super().__init__(self.simulate, table, extra={"horizon": self.horizon}, frames=self.steps + 1, **kwargs)

    # -- model -----------------------------------------------------------------
    def simulate(self, m: float, slope: float, g: float, c1: float, c2: float, horizon: float) -> InclinedLineResult:
        """Simulate the example with these values (the explorer's ``compute``)."""
        params = {"m": m, "k": slope, "g": g, "c1": c1, "c2": c2}
        cm = compiled_model()
        q0, qd0 = inclined_line.initial_state(self.speed, k=slope)
        traj = simulate(cm, (0.0, horizon), q0, qd0, method="rk4", step=horizon / self.steps, params=params)
        p = cm.parameters(params)
        count = traj.t.size
        v = np.empty((count, cm.n))
        c = np.empty((count, cm.n))
        null_spaces = {}  # A is often the same at every sample (here always): one SVD per distinct A
        for j in range(count):
            _, _, A, _, c[j] = cm.evaluate(traj.t[j], traj.q[j], traj.qd[j], p)
            key = A.tobytes()
            if key not in null_spaces:
                null_spaces[key] = _unit_virtual_displacement(A)
            v[j] = null_spaces[key]
        work = {name: np.einsum("ij,ij->i", v, getattr(traj, name)) for name in FORCE_NAMES}
        work["c"] = np.einsum("ij,ij->i", v, c)
        return InclinedLineResult(traj, v, work, params)

    def forces(self) -> dict[str, np.ndarray]:
        """The force vectors drawn at the current instant (unscaled; arrows are ``arrow_scale`` times these)."""
        return {name: vec.copy() for name, vec in self._drawn.items()}

    def mechanism_of(self, result: InclinedLineResult):
        """The line of this run's slope (:func:`udk_notebooks.examples.inclined_line.mechanism`)."""
        return inclined_line.mechanism(k=result.parameters["k"])

    # -- figure ----------------------------------------------------------------
    def make_figure(self):
        # Text is most of a full draw's cost, and updates are blitted (see animated_artists): the
        # titles, ticks and keys are drawn once, the moving artists over them. The keys sit on the
        # title row, outside the data, so that the moving lines never cover them.
        # 5.6 in wide, like the catalogue explorers: beside the sliders at 1366x768 with the file browser
        # open, and unscaled in an 800 px window; the bars of virtual work take the whole bottom row.
        fig = plt.figure(figsize=(5.6, 5.2))
        grid = fig.add_gridspec(2, 2, left=0.11, right=0.98, bottom=0.09, top=0.95, wspace=0.45, hspace=0.45)
        ax_path, ax_acc, ax_work = fig.add_subplot(grid[0, 0]), fig.add_subplot(grid[0, 1]), fig.add_subplot(grid[1, :])
        for ax, title in zip((ax_path, ax_acc, ax_work), ("(a) path, forces", "(b)",  # the y label says what: the keys name the lines
                                                          "(c) virtual work $v\\cdot F$")):
            ax.set_title(title, fontsize=9, y=1.0, pad=4, loc="left")
            ax.yaxis.set_major_locator(MaxNLocator(4))
            ax.tick_params(labelsize=8)

        ax_path.xaxis.set_major_locator(MaxNLocator(4))
        ax_path.set_xlabel("$x_1$ (m)", fontsize=8)
        ax_path.set_ylabel("$x_2$ (m)", fontsize=8)
        ax_path.set_aspect("equal", adjustable="box")
        self._add_mechanism(ax_path, inclined_line.mechanism(k=DEFAULT_SLOPE))
        _title_keys(ax_path, [(FORCE_STYLES[n]["label"].split()[-2], FORCE_COLORS[n]) for n in FORCE_NAMES])

        ax_acc.xaxis.set_major_locator(MaxNLocator(4))
        ax_acc.set_xlabel("time $t$ (s)", fontsize=8)
        ax_acc.set_ylabel("acceleration (m/s$^2$)", fontsize=8)
        self._acc = [  # dashed on top, so equal accelerations (slope 1) still show both lines
            ax_acc.plot([], [], lw=2.2, color=OKABE_ITO["blue"])[0],
            ax_acc.plot([], [], lw=1.8, color=OKABE_ITO["vermillion"], ls="--")[0],
        ]
        _title_keys(ax_acc, [(r"$\ddot x_1$", OKABE_ITO["blue"]), (r"$\ddot x_2$ (dashed)", OKABE_ITO["vermillion"])])
        self._now = ax_acc.axvline(0.0, color="0.5", lw=1, ls=":")
        ax_acc.axhline(0.0, color="0.8", lw=0.8)

        colors = [FORCE_COLORS[name] for name in FORCE_NAMES]
        self._bars = list(ax_work.bar(range(3), np.zeros(3), color=colors, width=0.6, edgecolor="0.2"))
        ax_work.set_xticks(range(3), ["$F^N$", "$F^L$", "$F^C$"], fontsize=9)
        # v is a unit vector (no unit), so v.F is a force: newtons, the work per metre moved along v.
        ax_work.set_ylabel(r"$v\cdot F$, $|v| = 1$ (N)", fontsize=8, labelpad=1)
        for bar, name in zip(self._bars, FORCE_NAMES):
            bar.set_hatch({"impressed": "", "ideal": "//", "nonideal": ".."}[name])  # not colour alone
        ax_work.axhline(0.0, color="0.3", lw=0.8)
        ax_work.set_xlim(-0.55, 2.95)
        self._c_mark, = ax_work.plot([1.6, 2.4], [0.0, 0.0], "k--", lw=1.2)
        self._c_text = ax_work.text(2.42, 0.0, r"$v\cdot c$", va="center", fontsize=8)
        self._bar_text = [
            ax_work.annotate("", (i, 0.0), xytext=(0, 4), textcoords="offset points", ha="center", fontsize=8)
            for i in range(3)
        ]

        self._axes = (ax_path, ax_acc, ax_work)
        return fig

    def animated_artists(self):
        # The run's artists move with the sliders; the instant's ones also with the frame.
        view_run = self._view.run_artists
        run = [*view_run, *self._acc]
        instant = [a for a in self._view.artists if a not in view_run]
        instant += [self._warning, self._now, *self._bars, *self._bar_text, self._c_mark, self._c_text]
        return run, instant

    def data_limits(self, result: InclinedLineResult):
        ax_path, ax_acc, ax_work = self._axes
        traj = result.trajectory
        work = np.stack([result.virtual_work[n] for n in (*FORCE_NAMES, "c")])
        return {
            ax_path: self._view.limits(traj),  # the path and every arrow tip of the run
            ax_acc: (None, _extent([*traj.qdd.ravel(), 0.0])),  # zero in view: the accelerations' signs
            ax_work: (None, _padded(work, include_zero=True, top=0.15)),  # room for each bar's value
        }

    def draw(self, result: InclinedLineResult) -> None:
        ax_acc = self._axes[1]
        traj = result.trajectory
        self._show_run(result, traj)

        t = traj.t
        for line, column in zip(self._acc, traj.qdd.T):
            line.set_data(t, column)
        if ax_acc.get_xlim() != (t[0], t[-1]):  # the time axis spans the run exactly (a new horizon)
            ax_acc.set_xlim(t[0], t[-1])
        self._draw_instant(result)

    def draw_frame(self, result: InclinedLineResult, frame: int) -> None:
        self._draw_instant(result)

    def _draw_instant(self, result: InclinedLineResult) -> None:
        traj = result.trajectory
        j = self.frame_index(traj.t)
        self._drawn = result.forces(j)
        self._view.show(traj, j)
        self._now.set_xdata([traj.t[j], traj.t[j]])
        for i, name in enumerate(FORCE_NAMES):
            value = float(result.virtual_work[name][j])
            self._bars[i].set_height(value)
            self._bar_text[i].xy = (i, value)
            self._bar_text[i].set_position((0, 4 if value >= 0 else -4))  # offset in points
            self._bar_text[i].set_verticalalignment("bottom" if value >= 0 else "top")
            self._bar_text[i].set_text(f"{round(value, 3) + 0.0:.3f}")
        c_work = float(result.virtual_work["c"][j])
        self._c_mark.set_ydata([c_work, c_work])
        self._c_text.set_y(c_work)


def _title_keys(ax, keys) -> None:
    """Coloured labels right-aligned on the axes' title row: a legend that never covers the data."""
    xy, xycoords, gap = (1.0, 1.0), "axes fraction", 0
    for label, color in reversed(keys):
        text = ax.annotate(label, xy, xycoords=xycoords, xytext=(-gap, 4), textcoords="offset points",
                           ha="right", va="baseline", color=color, fontsize=9)
        xy, xycoords, gap = (0.0, 1.0), (text, "axes fraction"), 6  # the next one ends just left of this one


def _extent(values) -> tuple[float, float]:
    return float(np.min(values)), float(np.max(values))


def _padded(values, include_zero: bool = False, top: float = 0.15) -> tuple[float, float]:
    """An interval around ``values``: 15 % of their span below, ``top`` above (room for labels)."""
    lo, hi = float(np.min(values)), float(np.max(values))
    if include_zero:
        lo, hi = min(lo, 0.0), max(hi, 0.0)
    span = hi - lo
    if span < 1e-9 * max(1.0, abs(lo), abs(hi)):  # constant data: a range of its own size
        span = max(1.0, 0.5 * max(abs(lo), abs(hi)))
        lo, hi = lo - span / 2, hi + span / 2
    return lo - 0.15 * span, hi + top * span
