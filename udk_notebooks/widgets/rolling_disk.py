r"""Explorer for the vertical disk rolling without slipping (Beshaw 2014, Sec. 4 and Fig. 3).

Sliders: the diagonal gains ``k1, k2`` of ``K = -diag(k1, k2)`` (Beshaw's
``b + K psi``, Eqs. 18-19), the fixed ``step``, the ``method`` (Euler or RK4),
the initial rates ``phi_rate`` and ``theta_rate`` (the paper's 2 and 1 rad/s)
and the ``horizon``. Each update integrates the disk twice with the chosen
method, once as it is and once with ``K``. Panels:

(a) the disk from above at the animated instant, its contact path and the
    constraint force on the contact point (ideal: the rolling constraint);
(b) the contact path of both runs against the exact circle of radius
    ``r |phi' / theta'|`` (:func:`~udk_notebooks.examples.rolling_disk.exact_state`);
(c) the drift ``|psi_1| = |x' - r phi' sin(theta)|`` of both runs on a log
    scale: the paper's Fig. 3, live;
(d) the position error ``|x - x_exact|`` of both runs.

A gain that is not stable for the step and method is refused by
:func:`udk_notebooks.simulate` (its message says which gains and steps are);
the figure keeps the last good run.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .._kept_code import compile_kept
from ..compiled import CompiledModel
from ..examples import rolling_disk
from ..plotting import METHOD_COLORS
from ..simulation import simulate
from ..stabilization import GainMatrix
from .base import parameter_table
from .system import Curve, Panel, SystemExplorer, SystemRun, time_curve

__all__ = ["RollingDiskExplorer"]


@lru_cache(maxsize=1)
def compiled_model() -> CompiledModel:
    """The rolling-disk model, compiled once per session."""
    return compile_kept("rolling_disk.model", rolling_disk.model)


def _method_color(run: SystemRun) -> str:
    return METHOD_COLORS[run.trajectory.method]


# Colour is the integrator (as everywhere in lesson 2), the line style says with or without K.
NO_K = dict(color=_method_color, ls="--")
WITH_K = dict(color=_method_color, ls="-")


def _exact_xy(run: SystemRun):
    return run.data["exact_q"][:, 0], run.data["exact_q"][:, 1]


class RollingDiskExplorer(SystemExplorer):
    """Gains, step, method and initial rates of Beshaw's rolling disk; drift with and without ``K``.

    Examples
    --------
    >>> explorer = RollingDiskExplorer().set(method="euler", k1=10.0, k2=10.0)
    >>> drift = explorer.result.data
    >>> bool(abs(drift["plain"].velocity_residual[-1, 0]) > abs(drift["stabilized"].velocity_residual[-1, 0]))
    True
    """

    updates_on_release = True  # several runs (or a model to compile) per update
    drift_limit = 0.1  # m/s: drift is this explorer's subject; beyond 5 % of the paper's rim speed the run is wrong
    control_units = {"k1": "1/s", "k2": "1/s", "step": "s", "phi_rate": "rad/s", "theta_rate": "rad/s", "horizon": "s"}
    heading = ("Vertical disk rolling without slipping: constraint drift and the gain K "
               "(Beshaw 2014, Sec. 4, Fig. 3)")
    panels = (
        Panel("contact path, top view", "x (m)", "y (m)", time=False, equal=True, curves=(
            Curve("exact circle", _exact_xy, color="0.6", ls="-", lw=3.0, instant=False),
            Curve("no K", lambda run: (run.data["plain"].q[:, 0], run.data["plain"].q[:, 1]), **NO_K),
            Curve("with K", lambda run: (run.trajectory.q[:, 0], run.trajectory.q[:, 1]), **WITH_K),
        )),
        Panel("drift of the x constraint", "time t (s)", r"$|\psi_1|$ (m/s)", yscale="log", curves=(
            time_curve("no K", lambda run: run.data["plain"].velocity_residual[:, 0], **NO_K),
            time_curve("with K", lambda run: run.trajectory.velocity_residual[:, 0], **WITH_K),
        )),
        Panel("position error", "time t (s)", r"$|x - x_{exact}|$ (m)", yscale="log", curves=(
            time_curve("no K", lambda run: run.data["plain"].q[:, 0] - run.data["exact_q"][:, 0], **NO_K),
            time_curve("with K", lambda run: run.trajectory.q[:, 0] - run.data["exact_q"][:, 0], **WITH_K),
        )),
    )

    def __init__(self, **kwargs):
        table = {
            "k1": (10.0, (0.0, 100.0), "gain on the x rolling constraint, 1/s: K = -diag(k1, k2)"),
            "k2": (10.0, (0.0, 100.0), "gain on the y rolling constraint, 1/s"),
            "step": (0.01, (0.002, 0.1), "fixed integration step tau, s"),
            "method": ("euler", ("euler", "rk4"), "explicit Euler or classic Runge-Kutta 4"),
            **parameter_table({"phi_rate": (2.0, (-5.0, 5.0), "initial rolling rate phi', rad/s (paper: 2)"),
                               "theta_rate": (1.0, (-3.0, 3.0), "initial turning rate theta', rad/s (paper: 1)")}),
        }
        extra = {"horizon": (10.0, (1.0, 20.0), "simulated time span, s (paper: 10)")}
        super().__init__(table, extra=extra, **kwargs)

    def default_mechanism(self):
        return rolling_disk.mechanism()

    def run(self, k1, k2, step, method, phi_rate, theta_rate, horizon) -> SystemRun:
        cm = compiled_model()
        q0, qd0 = rolling_disk.initial_state(phi_rate=phi_rate, theta_rate=theta_rate)
        common = dict(method=method, step=step)
        stabilized = simulate(cm, (0.0, horizon), q0, qd0, stabilization=GainMatrix(-np.diag([k1, k2])), **common)
        plain = self._plain_run(cm, q0, qd0, horizon, method, step)
        exact_q, _ = rolling_disk.exact_state(stabilized.t, q0, qd0)
        return SystemRun(stabilized, rolling_disk.mechanism(), data={"plain": plain, "exact_q": exact_q},
                         model=cm)

    def _plain_run(self, cm, q0, qd0, horizon, method, step):
        """The run without ``K``, kept for the last start, method, step and horizon.

        It does not depend on the gains: dragging ``k1`` or ``k2`` integrates
        the stabilized run alone (half the work of an update).
        """
        key = (q0.tobytes(), qd0.tobytes(), float(horizon), method, float(step))
        kept = getattr(self, "_plain", None)
        if kept is None or kept[0] != key:
            kept = self._plain = (key, simulate(cm, (0.0, horizon), q0, qd0, method=method, step=step))
        return kept[1]
