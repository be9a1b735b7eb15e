r"""Explorer for constraint drift and Baumgarte stabilization on the Cartesian pendulum.

The pendulum of :func:`udk_notebooks.examples.chain.cartesian_pendulum` (a point
mass on a rod of length ``l``, constraint ``phi = x^2 + y^2 - l^2 = 0``) is
released from rest at ``angle`` and integrated with the fixed step ``step``
(``tau``) by explicit Euler and by classic RK4, each once as it is
(``A q'' = b``) and once with Baumgarte's correction
``b - 2 alpha phi' - beta^2 phi`` (Baumgarte 1972). Sliders: ``alpha``,
``beta``, ``step``, ``angle`` and the simulated ``horizon``. Panels:

(a) the drift ``|phi|`` over time on a log scale: colour is the method, solid
    the Baumgarte run, dashed the plain one, and the animated instant;
(b) the pendulum at the animated instant: the circle of radius ``l`` the bob
    should stay on, the bob of each method's Baumgarte run (its plain run when
    the gain is refused) and the reference position from the angle equation
    (:func:`~udk_notebooks.examples.chain.angle_route_state`), which never
    meets a constraint;
(c) the amplification factors ``|R(z)|`` of Euler (``1 + z``, Beshaw 2014,
    Eq. 22) and RK4 (the Taylor polynomial of degree four, Eq. 27) along the
    negative real axis, the line ``|R| = 1``, and per method a marker for each
    eigenvalue ``lambda`` of Baumgarte's error matrix ``E`` (the roots of
    ``s^2 + 2 alpha s + beta^2``). A marker sits at ``x = Re(tau lambda)``,
    height ``|R(tau lambda)|``: for real eigenvalues (``alpha >= beta``) it lies
    on its method's curve; a complex pair (``alpha < beta``) shares one marker,
    off the curve, since ``|R|`` is taken at the complex point itself. The
    highest marker of a method is the spectral radius of ``R(tau E)``: the
    drift decays when it is below one (Theorems 1-2 ask for the norm), and
    :func:`udk_notebooks.simulate` refuses the gain (``UnstableGainError``)
    when it is above one. A refused gain is noted in panel (a) and its method
    is drawn without stabilization: a refusal is a lesson, not a failure.

Every number comes from the package: :func:`udk_notebooks.simulate`,
:func:`udk_notebooks.stability` and :func:`udk_notebooks.amplification_matrix`.

References
----------
J. Baumgarte, "Stabilization of constraints and integrals of motion in
dynamical systems", Comput. Methods Appl. Mech. Eng. 1 (1972) 1-16.
A. W. Beshaw, "Dynamic equation of constrained mechanical system" (2014),
Eqs. (18)-(27), Theorems 1-2.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache, partial

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import MaxNLocator

from .._kept_code import compile_kept
from ..compiled import CompiledModel
from ..drawing import animate
from ..errors import UnstableGainError
from ..examples import chain
from ..plotting import METHOD_COLORS  # one colour per integrator, as in every figure of lesson 2
from ..simulation import Trajectory, simulate
from ..stabilization import METHODS, Baumgarte, amplification_matrix, stability
from .base import Explorer
from .inclined_line import _extent, _title_keys

__all__ = ["StabilizationExplorer", "StabilizationResult"]

METHOD_NAMES = {"euler": "Euler", "rk4": "RK4"}
LENGTH = chain.PARAMETERS["l"].default  # the rod of the default pendulum
DECADES = 12  # the drift panel shows at most this many decades below its top
BOB_VIEW = 2.0  # the bob panel shows at most this many rod lengths from the pin


@lru_cache(maxsize=1)
def compiled_model() -> CompiledModel:
    """The Cartesian pendulum, lambdified once per session."""
    return compile_kept("chain.cartesian_pendulum", chain.cartesian_pendulum)


@dataclass(frozen=True, eq=False)
class StabilizationResult:
    """The four runs of one slider setting, and the gain's stability per method.

    Attributes
    ----------
    runs : dict of (str, bool) to Trajectory
        Keyed by ``(method, stabilized)``; a run that did not complete is absent.
    refusals : dict of str to str
        Per method whose Baumgarte gain was refused, the ``UnstableGainError`` message.
    failures : dict of (str, bool) to str
        Any other run that failed, as ``"ErrorType: message"``.
    reports : dict of str to StabilityReport
        :func:`udk_notebooks.stability` of ``R(tau E)`` per method.
    eigenvalues : ndarray, shape (2,)
        Eigenvalues of Baumgarte's error matrix ``E`` (complex).
    t : ndarray, shape (N,)
        The common time grid.
    route : callable
        ``times -> (x, y)`` of the angle equation at those times, shape (K, 2),
        for times ``t[:K]`` (the explorer keeps what it solved).
    values : dict of str to float
        The slider values used.
    """

    runs: dict
    refusals: dict
    failures: dict
    reports: dict
    eigenvalues: np.ndarray
    t: np.ndarray
    route: Callable[[np.ndarray], np.ndarray] = field(repr=False)
    values: dict

    @property
    def reference(self) -> np.ndarray:
        """``(x, y)`` from the angle equation at ``t``, shape (N, 2), solved when first read.

        Panel (b) shows one instant: a slider change solves the angle equation
        up to that instant only (:meth:`reference_at`).
        """
        return self.route(self.t)

    def reference_at(self, index: int) -> np.ndarray:
        """``(x, y)`` from the angle equation at ``t[index]``, shape (2,): from :attr:`reference` when it was
        solved already, else from the angle equation solved up to that time only."""
        return self.route(self.t[: index + 1], part=True)[index]

    def shown(self, method: str) -> Trajectory | None:
        """The run whose bob is drawn: the Baumgarte run, else the plain one, else None."""
        return self.runs.get((method, True), self.runs.get((method, False)))

    def drift(self, method: str, stabilized: bool) -> np.ndarray | None:
        """``max |phi|`` over the constraint rows at each sample, or None without that run."""
        run = self.runs.get((method, stabilized))
        return None if run is None else np.abs(run.position_residual).max(axis=1)


def _run(gain: Baumgarte | None, method: str, step: float, angle: float, horizon: float) -> Trajectory:
    """One run of the explorer: the pendulum released from rest at ``angle``, by ``simulate`` itself."""
    q0, qd0 = chain.pendulum_initial_state(angle)
    return simulate(compiled_model(), (0.0, horizon), q0, qd0, method=method, step=step, stabilization=gain)


def _outcome(function, *args):
    """``function(*args)``, or the exception it raised (kept to be raised again where the run is read)."""
    try:
        return function(*args)
    except Exception as exc:
        return exc


class StabilizationExplorer(Explorer):
    """Sliders for ``alpha``, ``beta``, ``step``, ``angle`` and ``horizon`` over three panels.

    Parameters
    ----------
    **kwargs
        Passed to :class:`~udk_notebooks.widgets.base.Explorer`
        (``frames``, ``continuous_update``, ``title``). Sliders update on
        release unless ``continuous_update=True``.

    Examples
    --------
    >>> explorer = StabilizationExplorer().set(alpha=60.0, beta=60.0, step=0.05)
    >>> sorted(explorer.gain_status()["euler"])
    ['message', 'spectral_radius']
    """

    table: dict = {
        "alpha": (10.0, (0.0, 60.0), "Baumgarte damping: phi'' + 2 alpha phi' + beta^2 phi = 0"),
        "beta": (10.0, (0.0, 60.0), "Baumgarte stiffness (alpha = beta: critical damping)"),
        "step": (0.01, (0.005, 0.05), "fixed time step tau of Euler and RK4, in seconds"),
        "angle": (1.0, (0.1, 2.5), "release angle from the downward vertical, in radians"),
    }
    horizon: tuple = (5.0, (1.0, 20.0), "simulated time span, in seconds")

    # Four integrations per change (two for a gain: the plain runs are kept), of up to 4000 steps at the
    # smallest step and the longest horizon: too much to redo at every pixel of a drag (the cost of a change:
    # benchmarks/explorer_update.py --explorer stabilization): recompute when a slider is released.
    updates_on_release = True
    control_units = {"alpha": "1/s", "beta": "1/s"}  # the gains of phi'' + 2 alpha phi' + beta^2 phi = 0

    def __init__(self, **kwargs):
        kwargs.setdefault("title", "Drift of the Cartesian pendulum, with and without Baumgarte stabilization "
                                   "(Baumgarte 1972; Beshaw 2014, Theorems 1-2)")
        self._last_reference = []  # ((angle, times), reference positions) of the last two solved
        self._last_markers = None  # (result, markers of panel (c)) of the last result drawn
        self._last_plain = None  # ((step, angle, horizon, simulate), plain run or error per method) of the last change
        super().__init__(self.simulate, self.table, extra={"horizon": self.horizon}, **kwargs)

    # -- model -----------------------------------------------------------------
    def simulate(self, alpha: float, beta: float, step: float, angle: float, horizon: float) -> StabilizationResult:
        """Run Euler and RK4, plain and with ``Baumgarte(alpha, beta)`` (the explorer's ``compute``).

        Raises the first error only when no run completes; a refused gain is recorded instead.
        """
        gain = Baumgarte(alpha, beta)
        E = gain.error_matrix(1, 0)
        plain = self._plain_runs(step, angle, horizon)
        runs, refusals, failures, errors = {}, {}, {}, []
        for method in METHODS:
            for stabilized in (False, True):
                try:
                    outcome = _run(gain, method, step, angle, horizon) if stabilized else plain[method]
                    if isinstance(outcome, Exception):  # a plain run that failed, kept with the plain runs
                        raise outcome
                    runs[method, stabilized] = outcome
                except UnstableGainError as exc:
                    refusals[method] = str(exc)
                    errors.append(exc)
                except Exception as exc:  # e.g. a non-finite state; the other runs may still be drawn
                    failures[method, stabilized] = f"{type(exc).__name__}: {exc}"
                    errors.append(exc)
        if not runs:
            raise errors[0]
        t = max((run.t for run in runs.values()), key=len)  # a diverged run stops early; the clock runs on
        reports = {method: stability(method, step, E) for method in METHODS}
        values = {"alpha": alpha, "beta": beta, "step": step, "angle": angle, "horizon": horizon}
        return StabilizationResult(runs, refusals, failures, reports, np.linalg.eigvals(E), t,
                                   route=partial(self._reference_positions, angle=angle, grid=t), values=values)

    def _plain_runs(self, step: float, angle: float, horizon: float) -> dict:
        """Per method, the run without stabilization (or the error it raised), kept for the last step, angle and horizon.

        A gain moves none of them: a drag of ``alpha`` or ``beta`` integrates
        the two Baumgarte runs only. The key holds :func:`simulate` itself, so
        that a run by another ``simulate`` (a test's stand-in) is never reused.
        """
        key = (float(step), float(angle), float(horizon), simulate)
        if self._last_plain is None or self._last_plain[0] != key:
            self._last_plain = (key, {method: _outcome(_run, None, method, step, angle, horizon)
                                      for method in METHODS})
        return self._last_plain[1]

    def _reference_positions(self, t: np.ndarray, angle: float, grid: np.ndarray, part: bool = False) -> np.ndarray:
        """The bob from the angle equation at the times ``t``, the first times of ``grid``.

        The DOP853 run at ``rtol = 1e-12`` costs as much as two of the four
        integrations, and a slider change shows one instant of it: with
        ``part``, the positions at the whole ``grid`` are returned when they are kept,
        else those at ``t`` alone (the instant's prefix of the grid). What was
        solved is kept for the last two (angle, times): a change of a gain
        moves neither, nor does a frame change once the whole grid is solved.
        """
        if part:
            kept = self._kept_reference(grid, angle)
            if kept is not None:
                return kept
        positions = self._kept_reference(t, angle)
        if positions is None:
            if t.size == 1:  # the release point itself: the route's first row, nothing to integrate
                positions = chain.pendulum_initial_state(angle)[0][None]
            else:
                positions = chain.angle_route_state(t, angle)[0]
            self._last_reference = [((float(angle), t.tobytes()), positions), *self._last_reference[:1]]
        return positions

    def _kept_reference(self, t: np.ndarray, angle: float) -> np.ndarray | None:
        key = (float(angle), t.tobytes())
        return next((positions for kept, positions in self._last_reference if kept == key), None)

    def animation(self, frames: int = 60, **options):
        """The bob of the shown RK4 run (Euler's when RK4 has none) as a kernel-free animation."""
        if self.result is None:
            return None
        run = self.result.shown("rk4") or self.result.shown("euler")
        return None if run is None else animate(run, chain.mechanism(1), frames=frames, **options)

    def gain_status(self) -> dict[str, dict]:
        """Per method of the shown result: ``spectral_radius`` of ``R(tau E)`` and the refusal ``message`` ('' if accepted)."""
        result = self.result
        return {method: {"spectral_radius": result.reports[method].spectral_radius,
                         "message": result.refusals.get(method, "")} for method in METHODS}

    # -- figure ----------------------------------------------------------------
    def make_figure(self):
        # 5.6 in wide, like the catalogue explorers: beside the sliders at 1366x768 with the file browser
        # open, and unscaled in an 800 px window. The drift, the subject, takes the whole top row.
        fig = plt.figure(figsize=(5.6, 5.2))
        grid = fig.add_gridspec(2, 2, left=0.12, right=0.98, bottom=0.085, top=0.95, wspace=0.42, hspace=0.42,
                                width_ratios=[0.85, 1.0])
        ax_drift, ax_bob, ax_stab = fig.add_subplot(grid[0, :]), fig.add_subplot(grid[1, 0]), fig.add_subplot(grid[1, 1])
        for ax, title in zip((ax_drift, ax_bob, ax_stab), (r"(a) drift $|\varphi|$", "(b) bob",
                                                          r"(c) $|R(z)|$, $z < 0$")):
            ax.set_title(title, fontsize=9, y=1.0, pad=4, loc="left")
            ax.tick_params(labelsize=8)
        keys = [(METHOD_NAMES[m], METHOD_COLORS[m]) for m in METHODS]

        ax_drift.set_yscale("log", nonpositive="mask")  # phi(0) = 0 is left out, not clipped
        ax_drift.xaxis.set_major_locator(MaxNLocator(5))
        ax_drift.set_xlabel("time $t$ (s)", fontsize=8)
        ax_drift.set_ylabel(r"$|\varphi| = |x^2 + y^2 - l^2|$ (m$^2$)", fontsize=8)
        self._drift = {(m, s): ax_drift.plot([], [], color=METHOD_COLORS[m], lw=1.4 if s else 1.1,
                                             ls="-" if s else "--")[0]
                       for m in METHODS for s in (False, True)}
        _title_keys(ax_drift, [*keys, ("dashed: plain", "0.35")])
        self._now = ax_drift.axvline(0.0, color="0.5", lw=1, ls=":")
        self._note = ax_drift.text(0.03, 0.96, "", transform=ax_drift.transAxes, va="top", fontsize=7,
                                   color="#b00020", bbox={"fc": "white", "ec": "none", "alpha": 0.8, "pad": 1})

        ax_bob.set_aspect("equal", adjustable="box")
        ax_bob.xaxis.set_major_locator(MaxNLocator(4))
        ax_bob.yaxis.set_major_locator(MaxNLocator(4))
        ax_bob.set_xlabel("$x$ (m)", fontsize=8)
        ax_bob.set_ylabel("$y$ (m)", fontsize=8, labelpad=1)
        circle = np.linspace(0.0, 2 * np.pi, 181)
        ax_bob.plot(LENGTH * np.cos(circle), LENGTH * np.sin(circle), color="0.75", lw=1.0)
        ax_bob.plot([0.0], [0.0], "k+", ms=6)
        self._rod, = ax_bob.plot([], [], color="0.4", lw=1.0)
        self._reference, = ax_bob.plot([], [], "o", mfc="none", mec="k", ms=10, mew=1.2)
        self._bobs = {m: ax_bob.plot([], [], "o", color=METHOD_COLORS[m], ms=6)[0] for m in METHODS}
        _title_keys(ax_bob, [("\u25cb reference", "k")])
        self._clock = ax_bob.text(0.04, 0.95, "", transform=ax_bob.transAxes, va="top", fontsize=8)

        z = np.linspace(-10.0, 1.0, 551)
        for m in METHODS:
            factor = [abs(amplification_matrix(m, 1.0, [[x]])[0, 0]) for x in z]
            ax_stab.plot(z, factor, color=METHOD_COLORS[m], lw=1.2)
        ax_stab.axhline(1.0, color="0.5", lw=0.9, ls="--")
        ax_stab.axvline(0.0, color="0.85", lw=0.8)
        # The markers are Re(tau lambda) for the eigenvalues lambda of the error dynamics E (the
        # lessons say so); the label keeps to the axis and its unit.
        ax_stab.set_xlabel(r"$z = \tau\lambda$ (1)", fontsize=8)
        ax_stab.set_ylabel(r"amplification $|R(z)|$ (1)", fontsize=8, labelpad=1)
        self._markers = {m: ax_stab.plot([], [], "o", color=METHOD_COLORS[m], mec="k", mew=0.6, ms=6)[0]
                         for m in METHODS}
        _title_keys(ax_stab, keys)
        self._tau = ax_stab.text(0.97, 0.05, "", transform=ax_stab.transAxes, ha="right", fontsize=8)

        self._axes = (ax_drift, ax_bob, ax_stab)
        return fig

    def animated_artists(self):
        run = [*self._drift.values(), self._note, *self._markers.values(), self._tau]
        instant = [self._now, self._rod, self._reference, *self._bobs.values(), self._clock]
        return run, instant

    def data_limits(self, result: StabilizationResult):
        ax_drift, ax_bob, ax_stab = self._axes
        shown = [run.q for run in map(result.shown, METHODS) if run is not None]
        # The reference runs on the circle, inside the square [-l, l]^2 that is in the view anyway.
        points = np.concatenate([*shown, [[-LENGTH, -LENGTH], [LENGTH, LENGTH]]])
        points = np.clip(points, -BOB_VIEW * LENGTH, BOB_VIEW * LENGTH)  # a bob far off the circle leaves the view
        return {
            ax_bob: (_extent(points[:, 0]), _extent(points[:, 1])),
            ax_stab: ((min(-2.9, *self._marker_data(result)[0]), 0.1), None),  # |R| is set in draw (from 0)
        }

    def _marker_data(self, result: StabilizationResult) -> tuple[list, list]:
        """Markers of panel (c): ``Re(tau lambda)`` and ``|R(tau lambda)|`` for each method in turn.

        Kept for the last result: the drawing and the view's limits both ask.
        """
        if self._last_markers is not None and self._last_markers[0] is result:
            return self._last_markers[1]
        step = result.values["step"]
        x, heights = [], []
        for m in METHODS:
            for lam in result.eigenvalues:
                a, b = float(lam.real), abs(float(lam.imag))
                block = [[a]] if b == 0.0 else [[a, b], [-b, a]]  # a real matrix with eigenvalues a +- ib
                x.append(step * a)
                heights.append(stability(m, step, block).spectral_radius)
        self._last_markers = (result, (x, heights))
        return x, heights

    def draw(self, result: StabilizationResult) -> None:
        ax_drift = self._axes[0]
        positive = []
        for (m, s), line in self._drift.items():
            drift = result.drift(m, s)
            run = result.runs.get((m, s))
            line.set_data(([], []) if run is None else (run.t, drift))
            if drift is not None:
                positive.append(drift[drift > 0])
        t = result.t
        if ax_drift.get_xlim() != (t[0], t[-1]):
            ax_drift.set_xlim(t[0], t[-1])
        values = np.concatenate(positive) if positive else np.zeros(0)
        if values.size:  # whole decades, so that most slider moves keep the limits
            hi = np.ceil(np.log10(values.max()))
            lo = max(np.floor(np.log10(values.min())), hi - DECADES)
            limits = (10.0**lo, 10.0 ** max(hi, lo + 1))
            if ax_drift.get_ylim() != limits:
                ax_drift.set_ylim(*limits)

        notes = []
        for m in METHODS:
            if m in result.refusals:
                radius = result.reports[m].spectral_radius
                notes.append(f"{METHOD_NAMES[m]}: gain refused (spectral radius {radius:.4g} > 1)")
            notes += [f"{METHOD_NAMES[m]}{', Baumgarte' if s else ''}: run failed" for (mm, s) in result.failures
                      if mm == m]
            notes += [f"{METHOD_NAMES[m]}{', Baumgarte' if s else ''}: DIVERGED at t = {run.stop_time:.3g} s"
                      for (mm, s), run in result.runs.items() if mm == m and run.diverged]
        self._note.set_text("\n".join(notes))
        x, heights = self._marker_data(result)
        half = len(result.eigenvalues)
        for i, m in enumerate(METHODS):
            self._markers[m].set_data(x[i * half:(i + 1) * half], heights[i * half:(i + 1) * half])
        top = max(2.0, np.ceil(2.3 * max(heights)) / 2)  # |R| from zero, in half units; 2 while the markers are low
        if self._axes[2].get_ylim() != (0.0, top):
            self._axes[2].set_ylim(0.0, top)
        # Plain text with the Greek letter: as mathtext every new step would be parsed anew (two parses, a
        # third of the drawing of a step drag); plain lines are stamped from cached glyphs.
        self._tau.set_text(f"\u03c4 = {result.values['step']:.4g}")
        self._draw_instant(result)

    def draw_frame(self, result: StabilizationResult, frame: int) -> None:
        self._draw_instant(result, whole=True)

    def _draw_instant(self, result: StabilizationResult, whole: bool = False) -> None:
        """The instant's artists; ``whole`` solves the reference on the whole grid (the next frames need it)."""
        j = self.frame_index(result.t)
        reference = result.reference[j] if whole else result.reference_at(j)
        self._now.set_xdata([result.t[j], result.t[j]])
        self._reference.set_data([reference[0]], [reference[1]])
        self._rod.set_data([0.0, reference[0]], [0.0, reference[1]])
        for m, bob in self._bobs.items():
            run = result.shown(m)
            shown = run is not None and j < run.t.size  # a diverged run has no bob after it stopped
            bob.set_data(([run.q[j, 0]], [run.q[j, 1]]) if shown else ([], []))
        self._clock.set_text(f"t = {result.t[j]:.2f} s")
