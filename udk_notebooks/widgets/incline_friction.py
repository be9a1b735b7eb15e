r"""Explorer for the block on a rough incline: Coulomb friction as a nonideal force.

The block of :mod:`udk_notebooks.examples.incline_friction` moves on the line
``y = x tan(alpha)`` (encyclopedia article "Udwadia-Kalaba equation", inclined
plane with friction). It is sent up the slope with ``speed``, slides up, stops,
and then either sticks (``mu_s >= tan(alpha)``) or slides back down.

Sliders: the slope angle ``alpha`` (radians), the kinetic and static friction
coefficients ``mu`` and ``mu_s``, the mass ``m``, gravity ``g``, the initial
``speed`` and the simulated ``horizon``. Panels:

(a) the incline and the block at the animated instant with the three forces of
    Udwadia, Kalaba & Fan 2005, Eqs. 9-11: impressed ``F^N`` (gravity), ideal
    ``F^L`` (the normal force) and nonideal ``F^C`` (kinetic friction while
    sliding, the static holding force while stuck);
(b) the distance ``d`` along the slope over time: the simulation, the exact
    piecewise solution (dots), the instant the block stops, and the regime
    ("sliding up", "stuck", "sliding down") at the animated instant;
(c) the energy books: the change of ``T + V`` and the work done by friction,
    which coincide by the power theorem (the ideal force does no work).

Every number comes from :func:`udk_notebooks.simulate` (DOP853), which locates
the stick/slip switch as an event on the sliding velocity.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import MaxNLocator

from .._kept_code import compile_kept
from ..compiled import CompiledModel
from ..examples import incline_friction
from ..simulation import Trajectory, simulate
from .base import Explorer, parameter_table
from ..plotting import FORCE_STYLES, OKABE_ITO
from .inclined_line import FORCE_COLORS, FORCE_NAMES, _extent, _padded, _title_keys
from .system import MechanismPanel

UNITS = {"m": "kg", "g": "m/s^2", "alpha": "rad", "mu": "1", "mu_s": "1"}

__all__ = ["InclineFrictionExplorer", "InclineFrictionResult", "REGIMES"]

REGIMES = {1: "sliding up", 0: "stuck", -1: "sliding down"}
"""Friction contact mode (``Trajectory.modes``) to the regime's name."""


@lru_cache(maxsize=1)
def compiled_model() -> CompiledModel:
    """The rough-incline model, lambdified once per session (parameters are passed per call)."""
    return compile_kept("incline_friction.model", incline_friction.model)


@dataclass(frozen=True, eq=False)
class InclineFrictionResult:
    """One simulated run of the block on the rough incline.

    Attributes
    ----------
    trajectory : Trajectory
        Samples of ``q = (x, y)``, the three forces, the energy and the friction mode.
    distance : ndarray, shape (N,)
        Simulated distance ``d = q . (cos alpha, sin alpha)`` along the slope.
    exact_distance : ndarray, shape (N,)
        The same from the exact piecewise motion (``incline_friction.exact_state``).
    stop : float or None
        Time of the first switch out of "sliding up" located by the solver
        (``0`` when the block starts at rest); None when it slides up all along.
    energy_change : ndarray, shape (N,)
        ``h(t) - h(0)``, with ``h = T + V`` (the block's kinetic plus potential energy).
    friction_work : ndarray, shape (N,)
        Work done by the nonideal force since ``t = 0``, ``trajectory.work()["nonideal"]``.
    parameters : dict of str to float
        The model parameters used (``m``, ``g``, ``alpha``, ``mu``, ``mu_s``).
    speed : float
        Initial speed up the slope.
    """

    trajectory: Trajectory
    distance: np.ndarray
    exact_distance: np.ndarray
    stop: float | None
    energy_change: np.ndarray
    friction_work: np.ndarray
    parameters: dict
    speed: float

    def forces(self, index: int) -> dict[str, np.ndarray]:
        """The three force vectors at sample ``index``, shape (2,) each."""
        return {name: getattr(self.trajectory, name)[index].copy() for name in FORCE_NAMES}

    def regime(self, index: int) -> str:
        """The regime at sample ``index``: "sliding up", "stuck" or "sliding down"."""
        return REGIMES[int(self.trajectory.modes[index, 0])]


def _exact_distance(t: np.ndarray, speed: float, params: dict) -> np.ndarray:
    """Exact distance along the slope; refuses the parameters for which no Coulomb motion exists."""
    angle = params["alpha"]
    q, _ = incline_friction.exact_state(t, speed, **params)  # raises for mu_s < tan(alpha) <= mu
    return q @ np.array([np.cos(angle), np.sin(angle)])


class InclineFrictionExplorer(MechanismPanel, Explorer):
    """Sliders for ``alpha``, ``mu``, ``mu_s``, ``m``, ``g``, ``speed`` and ``horizon`` over three panels.

    Parameters
    ----------
    frames : int, optional
        Uniform output samples over the horizon (and positions of the ``frame`` slider).
    **kwargs
        Passed to :class:`~udk_notebooks.widgets.base.Explorer` (``continuous_update``, ``title``).

    Examples
    --------
    >>> explorer = InclineFrictionExplorer().set(mu_s=1.0)  # tan(pi/6) = 0.577 < 1: it sticks
    >>> explorer.result.regime(-1)
    'stuck'
    """

    speed: tuple = (5.0, (0.0, 10.0), "initial speed up the slope, in m/s")
    horizon: tuple = (2.0, (0.2, 5.0), "simulated time span, in s")
    drift_limit: float = 1e-6  # a straight incline: the adaptive run keeps it to its tolerance
    force_share: float = 0.4

    def __init__(self, *, frames: int | None = None, **kwargs):
        self._drawn = {}
        table = parameter_table(incline_friction.PARAMETERS, order=("alpha", "mu", "mu_s", "m", "g"), units=UNITS)
        kwargs.setdefault("title", "Block on a rough incline: Coulomb friction as the nonideal force "
                                   "(encyclopedia article 'Udwadia-Kalaba equation'; Udwadia, Kalaba &amp; Fan 2005)")
        extra = {"speed": self.speed, "horizon": self.horizon}
        super().__init__(self.simulate, table, extra=extra, frames=frames, **kwargs)

    # -- model -----------------------------------------------------------------
    def simulate(self, alpha: float, mu: float, mu_s: float, m: float, g: float, speed: float,
                 horizon: float) -> InclineFrictionResult:
        """Simulate the example with these values (the explorer's ``compute``).

        Raises
        ------
        ValueError
            When ``mu_s < tan(alpha) <= mu`` (and ``g > 0``): static friction cannot hold the
            block once it stops and kinetic friction cannot let it slide, so Coulomb's law
            has no solution.
        """
        params = {"m": m, "g": g, "alpha": alpha, "mu": mu, "mu_s": mu_s}
        t_eval = np.linspace(0.0, horizon, self.frames)
        _exact_distance(t_eval[:1], speed, params)  # refuse an ill-posed combination before integrating
        q0, qd0 = incline_friction.initial_state(speed, **params)
        traj = simulate(compiled_model(), (0.0, horizon), q0, qd0, method="DOP853", rtol=1e-10, atol=1e-12,
                        t_eval=t_eval, params=params)
        rising = traj.modes[:, 0] == 1
        stop = None if rising.all() else float(traj.t[np.argmin(rising)])
        return InclineFrictionResult(
            trajectory=traj,
            distance=traj.q @ np.array([np.cos(alpha), np.sin(alpha)]),
            exact_distance=_exact_distance(traj.t, speed, params),
            stop=stop,
            energy_change=traj.energy - traj.energy[0],
            friction_work=traj.work()["nonideal"],
            parameters=params,
            speed=float(speed),
        )

    def forces(self) -> dict[str, np.ndarray]:
        """The force vectors drawn at the current instant (unscaled; arrows are ``arrow_scale`` times these)."""
        return {name: vec.copy() for name, vec in self._drawn.items()}

    def mechanism_of(self, result: InclineFrictionResult):
        """The incline of this run's angle (:func:`udk_notebooks.examples.incline_friction.mechanism`)."""
        return incline_friction.mechanism(**result.parameters)

    # -- figure ----------------------------------------------------------------
    def make_figure(self):
        # 5.6 in wide, like the catalogue explorers: beside the sliders at 1366x768 with the file browser
        # open, and unscaled in an 800 px window; the energy panel takes the whole bottom row.
        fig = plt.figure(figsize=(5.6, 5.2))
        grid = fig.add_gridspec(2, 2, left=0.11, right=0.98, bottom=0.09, top=0.95, wspace=0.42, hspace=0.45)
        ax_block, ax_dist, ax_energy = fig.add_subplot(grid[0, 0]), fig.add_subplot(grid[0, 1]), fig.add_subplot(grid[1, :])
        titles = ("(a) block, forces", "(b) $d(t)$", "(c) energy")  # short: the keys share the row
        for ax, title in zip((ax_block, ax_dist, ax_energy), titles):
            ax.set_title(title, fontsize=9, y=1.0, pad=4, loc="left")
            ax.xaxis.set_major_locator(MaxNLocator(4))
            ax.yaxis.set_major_locator(MaxNLocator(4))
            ax.tick_params(labelsize=8)
        for ax in (ax_dist, ax_energy):
            ax.set_xlabel("time $t$ (s)", fontsize=8)
        ax_dist.set_ylabel("distance $d$ up the slope (m)", fontsize=8)
        ax_energy.set_ylabel("energy (J)", fontsize=8)

        ax_block.set_xlabel("$x$ (m)", fontsize=8)
        ax_block.set_ylabel("$y$ (m)", fontsize=8)
        ax_block.set_aspect("equal", adjustable="box")
        ax_block.axhline(0.0, color="0.85", lw=0.8, zorder=0)
        self._add_mechanism(ax_block, incline_friction.mechanism())
        _title_keys(ax_block, [(FORCE_STYLES[n]["label"].split()[-2], FORCE_COLORS[n]) for n in FORCE_NAMES])

        self._dist, = ax_dist.plot([], [], color=OKABE_ITO["blue"], lw=2.0)
        self._exact, = ax_dist.plot([], [], "o", color="k", ms=2.5, zorder=3)
        self._stop, = ax_dist.plot([], [], "D", color=FORCE_COLORS["nonideal"], ms=5, zorder=4)
        self._stop_label = ax_dist.annotate("stop", (0.0, 0.0), xytext=(0, 5), textcoords="offset points",
                                            ha="center", va="bottom", fontsize=8, color=FORCE_COLORS["nonideal"])
        _title_keys(ax_dist, [("simulated", OKABE_ITO["blue"]), ("exact (dots)", "k")])
        self._dist_now = ax_dist.axvline(0.0, color="0.5", lw=1, ls=":")
        # low in the panel: the top is where the block stops, and the "stop" mark is written there
        self._regime = ax_dist.text(0.04, 0.04, "", transform=ax_dist.transAxes, va="bottom", fontsize=8,
                                    bbox={"boxstyle": "round,pad=0.2", "facecolor": "white", "edgecolor": "0.8",
                                          "alpha": 0.85})

        self._energy, = ax_energy.plot([], [], color="0.2", lw=2.4)
        self._work, = ax_energy.plot([], [], color=FORCE_COLORS["nonideal"], lw=1.6, ls="--")
        _title_keys(ax_energy, [("$\\Delta(T+V)$", "0.2"), ("$W^C$ (dashed)", FORCE_COLORS["nonideal"])])
        ax_energy.axhline(0.0, color="0.8", lw=0.8)
        self._energy_now = ax_energy.axvline(0.0, color="0.5", lw=1, ls=":")
        self._books = ax_energy.text(0.04, 0.05, "", transform=ax_energy.transAxes, va="bottom", fontsize=8)

        self._axes = (ax_block, ax_dist, ax_energy)
        return fig

    def animated_artists(self):
        # The run's artists move with the sliders; the instant's ones also with the frame.
        view_run = self._view.run_artists
        run = [*view_run, self._dist, self._exact, self._stop, self._stop_label, self._energy, self._work]
        instant = [a for a in self._view.artists if a not in view_run]
        instant += [self._warning, self._dist_now, self._regime, self._energy_now, self._books]
        return run, instant

    def data_limits(self, result: InclineFrictionResult):
        ax_block, ax_dist, ax_energy = self._axes
        traj = result.trajectory
        (x0, x1), (y0, y1) = self._view.limits(traj)  # the block and every arrow tip of the run
        angle = result.parameters["alpha"]
        # and a stretch of the incline below the start, so that the slope shows even for a short run
        foot = -0.5 * max(float(np.ptp(result.distance)), 1.0) * np.array([np.cos(angle), np.sin(angle)])
        return {
            ax_block: ((min(x0, foot[0]), x1), (min(y0, foot[1]), y1)),
            ax_dist: (None, _extent([*result.distance, *result.exact_distance])),
            ax_energy: (None, _padded([result.energy_change, result.friction_work], include_zero=True, top=0.1)),
        }

    def draw(self, result: InclineFrictionResult) -> None:
        traj = result.trajectory
        t = traj.t
        self._show_run(result, traj)  # no arrows when every force vanishes (g = 0)

        self._dist.set_data(t, result.distance)
        every = max(1, t.size // 30)  # sparse dots, so that the simulated line shows between them
        self._exact.set_data(t[::every], result.exact_distance[::every])
        self._stop_label.set_visible(result.stop is not None)
        if result.stop is None:
            self._stop.set_data([], [])
        else:
            j = int(np.searchsorted(t, result.stop))
            self._stop.set_data([t[j]], [result.distance[j]])
            self._stop_label.xy = (t[j], result.distance[j])
            share = (t[j] - t[0]) / (t[-1] - t[0])  # keep the label inside the axes near either end
            self._stop_label.set_horizontalalignment("left" if share < 0.1 else "right" if share > 0.9 else "center")
        self._energy.set_data(t, result.energy_change)
        self._work.set_data(t, result.friction_work)
        for ax in self._axes[1:]:
            if ax.get_xlim() != (t[0], t[-1]):  # the time axes span the run exactly (a new horizon)
                ax.set_xlim(t[0], t[-1])
        self._draw_instant(result)

    def draw_frame(self, result: InclineFrictionResult, frame: int) -> None:
        self._draw_instant(result)

    def _draw_instant(self, result: InclineFrictionResult) -> None:
        traj = result.trajectory
        j = self.frame_index(traj.t)
        self._drawn = result.forces(j)
        self._view.show(traj, j)
        now = float(traj.t[j])
        self._dist_now.set_xdata([now, now])
        self._energy_now.set_xdata([now, now])
        self._regime.set_text(f"t = {now:.2f}: {result.regime(j)}")
        self._books.set_text(f"$\\Delta(T+V)$ = {result.energy_change[j] + 0.0:.3f}\n"
                             f"$W^C$ = {result.friction_work[j] + 0.0:.3f}")
