r"""Explorer for the elliptic trammel with sliders of vanishing mass: a singular mass matrix (encyclopedia article).

Sliders: the bob's mass ``m`` and place ``c`` on the bar, the bar's length
``l``, gravity ``g``, the slider masses ``mA`` and ``mB`` (down to zero), the
release angle ``theta0`` and the ``horizon``. With massless sliders the mass
matrix ``M = diag(mA, mB, m, m)`` of ``q = (u, w, x, y)`` is singular, yet the
accelerations are unique because ``[M; A]`` has full column rank, i.e.
``M + A^+ A`` is positive definite (encyclopedia article, "Equation of
motion"; :func:`~udk_notebooks.examples.singular_mass.model`). Panels:

(a) rails, sliders, bar and bob at the animated instant, with the forces on
    each: weight ``F^N`` and constraint force ``F^L`` (zero on a massless
    slider: it only passes forces on); the corner says the rank of ``M``;
(b) the smallest eigenvalue of ``M`` and of ``M + s A^+ A`` with
    ``s = 1 kg`` (:data:`AUGMENT_SCALE`) along the run: the first is zero for a
    massless slider, the second never is. The article prints ``M + A^+ A``,
    a dimensionless projector added to masses: read with units, a mass ``s``
    multiplies it (and ``A^+ b`` in ``Q + s A^+ b``), and any ``s > 0`` gives the
    same motion and constraint force (the auxiliary system of Udwadia &
    Schutte, "Equations of motion for general constrained systems in
    Lagrangian mechanics", Acta Mech. 213, 2010, 111-129);
(c) the bar angle from the four-coordinate Udwadia-Kalaba run against the
    one-coordinate Lagrange route
    (:func:`~udk_notebooks.examples.singular_mass.minimal_acceleration`),
    integrated independently: their difference is a consistency check between
    two numerical routes, not an error against the exact motion. The
    Udwadia-Kalaba run uses Hairer's DOP853 (``simulate(..., method="dop853")``)
    at ``rtol = 1e-7`` (:data:`UK_TOLERANCES`), the Lagrange run at
    ``rtol = 1e-10`` (:data:`LAGRANGE_TOLERANCES`). Both runs stop at every
    sample, so at the defaults their steps are far shorter than their
    tolerances would allow: there the Lagrange run is within about 1e-14 rad
    of a tight reference at either tolerance, and the difference shown, at
    most about 5e-13 rad over the run, is the Udwadia-Kalaba run's (1.3e-13 rad
    at ``rtol = 1e-10``). The panel's title states the relative tolerances of
    the two runs it draws ("tol", Udwadia-Kalaba first). Each
    step of the first solves the Udwadia-Kalaba equation of a singular ``M``
    (:class:`~udk_notebooks.kernels.SingularKernel`, a few microseconds), so
    its tolerance sets the cost of an update. It is chosen by what the panels
    show: panel (a) cannot show an angle error below a thousandth of a radian,
    and panel (c) shows whatever error is left, on a log scale. The route
    steps to each sample, so at the defaults its steps are short and the
    tolerance seldom binds: ``1e-7`` leaves at most about 5e-13 rad over the
    horizon (measured against a ``1e-14`` Lagrange run), far below :data:`AGREEMENT`;
    at the sliders' ends it can leave much more (1.1 rad, and 0.09 rad at
    ``1e-8``, with ``l = 0.2``, ``c = 0.95``, massless sliders, ``g = 20``,
    ``theta0 = 1.55``, 15 s). So a run whose angle differs from the Lagrange
    route by more than :data:`AGREEMENT` is integrated again at
    :data:`UK_TIGHT_TOLERANCES` (0.005 rad left in that case), panel (c)'s title
    then names the tolerances of that run, and a difference still past
    :data:`AGREEMENT` is named in panel (a)'s corner: panel (c) then shows
    disagreement, not consistency.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from matplotlib.text import Text

from .._kept_code import compile_kept
from ..examples import singular_mass
from ..plotting import OKABE_ITO
from ..simulation import simulate
from .base import parameter_table
from .system import Panel, SystemExplorer, SystemRun, time_curve

__all__ = ["SingularMassExplorer"]

UNITS = {"m": "kg", "g": "m/s^2", "l": "m", "c": "1 (fraction of the bar)", "mA": "kg", "mB": "kg"}
UK_TOLERANCES = dict(rtol=1e-7, atol=1e-9)
"""DOP853 tolerances of the four-coordinate Udwadia-Kalaba run (panel (c) shows the error they leave)."""
LAGRANGE_TOLERANCES = dict(rtol=1e-10, atol=1e-12)
"""DOP853 tolerances of the one-coordinate Lagrange run: a thousand times tighter, the reference of panel (c)."""
UK_TIGHT_TOLERANCES = dict(rtol=1e-10, atol=1e-12)
"""DOP853 tolerances of the Udwadia-Kalaba run drawn when the first one misses :data:`AGREEMENT`."""
AGREEMENT = 1e-4
"""Largest angle difference (rad) from the Lagrange route for which the first, quicker run is drawn."""
AUGMENT_SCALE = 1.0
"""The mass ``s`` (kg) of panel (b)'s ``M + s A^+ A``: the article's ``M + A^+ A`` in the explorer's units."""


def _difference_title(uk_rtol: float) -> str:
    """Panel (c)'s title, naming the relative tolerances of the Udwadia-Kalaba run drawn and of the Lagrange run."""
    def power(rtol: float) -> str:
        return f"{rtol:.0e}".replace("e-0", "e-")  # 1e-07 -> 1e-7

    return f"bar angle, two routes (tol {power(uk_rtol)}, {power(LAGRANGE_TOLERANCES['rtol'])})"


@lru_cache(maxsize=1)
def compiled_model():
    """The trammel model, compiled once per session (slider masses are parameters)."""
    return compile_kept("singular_mass.model", singular_mass.model)


def lagrange_angles(rate, theta0: float, times: np.ndarray) -> np.ndarray:
    """The bar angle of the one-coordinate Lagrange route at ``times``, released at rest from ``theta0``.

    Hairer's DOP853 (Fortran, through scipy's ``ode``) at :data:`LAGRANGE_TOLERANCES`, stopped at
    each sample: for this cheap right-hand side (a microsecond) a third of the cost of scipy's
    Python DOP853 at the same tolerances, which spends its time stepping, not evaluating.

    Parameters
    ----------
    rate : callable
        ``(t, (theta, theta')) -> (theta', theta'')``
        (:func:`~udk_notebooks.examples.singular_mass.minimal_rate`).
    theta0 : float
        Release angle, in rad.
    times : ndarray, shape (N,)
        Increasing sample times from 0.

    Returns
    -------
    ndarray, shape (N,)
        The angle at each sample.

    Raises
    ------
    RuntimeError
        Where the solver gives up (its return code is named).
    """
    from .._ode import ode  # not scipy.integrate: its import costs a cold start 0.3 s

    solver = ode(rate).set_integrator("dop853", **LAGRANGE_TOLERANCES)
    solver.set_initial_value([theta0, 0.0], float(times[0]))
    angles = np.empty(len(times))
    angles[0] = theta0
    for k, t in enumerate(times[1:].tolist(), start=1):
        angles[k] = solver.integrate(t)[0]
        if not solver.successful():
            raise RuntimeError(f"the Lagrange route's DOP853 gave up at t = {solver.t:.6g} "
                               f"(return code {solver.get_return_code()})")
    return angles


def _eigenvalues(cm, traj, p) -> tuple[np.ndarray, np.ndarray]:
    """Smallest eigenvalue of ``M`` and of ``M + s A^+ A`` (``s`` = :data:`AUGMENT_SCALE`) at each sample, never below zero.

    ``M = diag(mA, mB, m, m)`` is constant, so its smallest eigenvalue is one
    number (the smallest mass, exactly: ``eigvalsh`` of a diagonal matrix); the
    matrices ``M + A^+ A`` of every sample are stacked and decomposed in one call
    each. Both are positive semi-definite, so a rounding below zero (a few ulps)
    is shown as zero: panel (b) starts at zero, and no value may run below it.
    """
    terms = [cm.evaluate(t, q, qd, p) for t, q, qd in zip(traj.t, traj.q, traj.qd)]
    M = terms[0][0]
    A = np.stack([term[2] for term in terms])
    smallest = np.full(len(terms), max(float(np.linalg.eigvalsh(M)[0]), 0.0))
    augmented = M + AUGMENT_SCALE * (np.linalg.pinv(A) @ A)
    return smallest, np.maximum(np.linalg.eigvalsh(augmented)[:, 0], 0.0)


class SingularMassExplorer(SystemExplorer):
    """Slider masses down to zero on the elliptic trammel; the rank of ``M`` and the unique motion.

    Parameters
    ----------
    samples : int, optional
        Output samples of the run (the animation's frames).
    **kwargs
        Passed to :class:`~udk_notebooks.widgets.system.SystemExplorer`.
    """

    updates_on_release = True  # several runs (or a model to compile) per update
    heading = "Elliptic trammel with massless sliders: a singular mass matrix (encyclopedia article)"
    panels = (
        # nonnegative: both matrices are positive semi-definite, so the view starts at zero, never below it
        Panel("smallest eigenvalue", "time t (s)", "eigenvalue (kg)", zero=True, nonnegative=True, curves=(
            time_curve("of M", lambda run: run.data["eig_M"], color=OKABE_ITO["vermillion"], ls="--"),
            time_curve(f"of $M + sA^+A$, $s$ = {AUGMENT_SCALE:g} kg", lambda run: run.data["eig_augmented"],
                       color=OKABE_ITO["blue"], ls="-"),
        )),
        # The title names the tolerances of the run drawn: draw() changes it when the tight rerun is shown.
        Panel(_difference_title(UK_TOLERANCES["rtol"]), "time t (s)", "difference (rad)", yscale="log", curves=(
            time_curve(r"$|\theta_{UK} - \theta_{Lagrange}|$",
                       lambda run: run.data["angle_difference"],
                       color=OKABE_ITO["blue"], ls="-"),
        )),
    )

    def __init__(self, *, samples: int = 241, **kwargs):
        self.samples = int(samples)
        if self.samples < 2:
            raise ValueError(f"`samples` must be at least 2; got {samples!r}")
        table = parameter_table(singular_mass.PARAMETERS, units=UNITS)
        table["theta0"] = (-0.57, (-3.1, 3.1), "release angle of the bar (u = l cos, w = l sin), in rad")
        extra = {"horizon": (5.0, (1.0, 15.0), "simulated time span, in s")}
        kwargs.setdefault("frames", self.samples)
        super().__init__(table, extra=extra, **kwargs)

    def default_mechanism(self):
        return singular_mass.mechanism()

    def make_figure(self):
        fig = super().make_figure()
        ax = self._axes[2]
        # panel (c)'s title artist, found by its text: draw() changes that text and keeps the base's style
        self._difference_title = next(t for t in ax.get_children()
                                      if isinstance(t, Text) and t.get_text() == ax.get_title(loc="left"))
        return fig

    def draw(self, result: SystemRun) -> None:
        super().draw(result)
        # a changed text marks panel (c) stale (redrawn in full); the same text costs nothing
        self._difference_title.set_text(f"(c) {_difference_title(result.data['uk_rtol'])}")

    def run(self, m, g, l, c, mA, mB, theta0, horizon) -> SystemRun:
        params = dict(m=m, g=g, l=l, c=c, mA=mA, mB=mB)
        cm = compiled_model()
        q0, qd0 = singular_mass.initial_state(theta0, 0.0, **params)
        times = np.linspace(0.0, horizon, self.samples)
        # No singular configuration to watch for: initial_state has refused c outside (0, 1), and for
        # 0 < c < 1 [M; A] has full column rank and A full row rank in every configuration (module
        # docstring of examples.singular_mass), so the rank monitor is off. A state where that failed
        # would still be refused: the saddle-point solve tests its condition number at every evaluation.
        minimal = lagrange_angles(singular_mass.minimal_rate(**params), theta0, times)
        for tolerances in (UK_TOLERANCES, UK_TIGHT_TOLERANCES):
            traj = simulate(cm, (0.0, horizon), q0, qd0, method="dop853", t_eval=times, params=params,
                            on_singular="ignore", **tolerances)
            difference = np.angle(np.exp(1j * (singular_mass.angle(traj.q) - minimal)))  # wrapped to (-pi, pi]
            apart = float(np.abs(difference).max(initial=0.0))
            if apart <= AGREEMENT:  # NaN never agrees
                break
        eig_m, eig_augmented = _eigenvalues(cm, traj, cm.parameters(params))
        rank = int(np.linalg.matrix_rank(np.diag([mA, mB, m, m])))
        info = f"rank M = {rank} of 4" + (" (singular)" if rank < 4 else "")
        if not apart <= AGREEMENT:
            info += f"\noff Lagrange by {apart:.2g} rad"  # the integration error panel (c) shows
        return SystemRun(
            traj, singular_mass.mechanism(**params),
            data={"eig_M": eig_m, "eig_augmented": eig_augmented,
                  "angle_difference": difference, "uk_rtol": tolerances["rtol"]},
            info=info,
            model=cm,
        )
