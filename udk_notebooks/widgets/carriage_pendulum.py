r"""Explorer for the pendulum on a sprung, driven carriage (lecture slides, Example 4:14).

Sliders: the carriage mass ``m_c`` and ball mass ``m``, the string length
``l``, the spring stiffness ``k``, gravity ``g``, the drive ``F(t) = F0
sin(omega t)`` on the carriage (amplitude ``F0``, angular frequency ``omega``),
the release angle and the ``horizon``. The model is the Cartesian one,
``q = (x_c, x, y)`` with the string ``(x - x_c)^2 + y^2 = l^2`` as a holonomic
constraint (:func:`~udk_notebooks.examples.carriage_pendulum.model`). Panels:

(a) wall, spring, carriage and ball at the animated instant, with the drive
    and spring force on the carriage and gravity (``F^N``) and the string's
    pull (``F^L``, 2005 paper Eq. 10) on the ball;
(b) the phase portrait of the string angle, ``phi'`` against ``phi``;
(c) the carriage position ``x_c`` and the ball's horizontal offset ``x - x_c``;
(d) the power balance integrated over time: the energy change ``h(t) - h(0)``,
    the work of the drive, and their difference (the power theorem says it
    is zero; what remains is integration and quadrature error).

The two normal-mode frequencies of small swings
(:func:`~udk_notebooks.examples.carriage_pendulum.normal_mode_frequencies`)
are in the heading of panel (b): drive near one of them to see resonance.

Each update integrates with Hairer's Fortran DOP853 (the ``"dop853"`` route of
:func:`~udk_notebooks.simulation.simulate`, which steps to every sample) at
``rtol = 1e-7`` first (positions within about 1e-10 m of a 1e-12 reference at
the defaults: the stops at the samples keep its steps short), and again at the
tighter :data:`TIGHT` tolerances when that run
cannot vouch for itself: a constraint residual past a hundredth of
``drift_limit`` (long, fast, chaotic runs), or a run that did not end well.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .._kept_code import compile_kept
from ..examples import carriage_pendulum
from ..plotting import OKABE_ITO
from ..simulation import simulate
from .base import parameter_table
from .system import Curve, Panel, SystemExplorer, SystemRun, time_curve

__all__ = ["CarriagePendulumExplorer"]

UNITS = {"m_c": "kg", "m": "kg", "l": "m", "k": "N/m", "g": "m/s^2", "F0": "N", "omega": "rad/s"}
QUICK = {"rtol": 1e-7, "atol": 1e-9}
"""Tolerances of an update's first run (Hairer's DOP853, ``method="dop853"``)."""
TIGHT = {"rtol": 1e-8, "atol": 1e-10}
"""Tolerances of the run drawn when the quick one cannot vouch for itself (:func:`vouches`)."""
VOUCH_SHARE = 1e-2
"""A quick run is kept when its largest constraint residual is below this share of ``drift_limit``."""


@lru_cache(maxsize=1)
def compiled_model():
    """The Cartesian carriage-pendulum model, compiled once per session."""
    return compile_kept("carriage_pendulum.model", carriage_pendulum.model)


def _angle(run: SystemRun):
    q, qd = run.trajectory.q, run.trajectory.qd
    dx, y = q[:, 1] - q[:, 0], q[:, 2]
    angle = np.arctan2(dx, -y)
    rate = ((qd[:, 1] - qd[:, 0]) * -y + dx * qd[:, 2]) / (dx**2 + y**2)
    return np.unwrap(angle), rate


def vouches(trajectory, drift_limit: float) -> bool:
    """Whether a quick run may be drawn: it ended well and drifted less than ``VOUCH_SHARE * drift_limit``.

    The drift of the constraint ``(x - x_c)^2 + y^2 = l^2`` is what the
    integration error shows without a reference; a run near the trust limit
    is integrated again at :data:`TIGHT`, so no warning is due to the quick
    tolerance alone.
    """
    if trajectory.status != "ok":
        return False
    residuals = np.concatenate([np.abs(trajectory.position_residual).ravel(),
                                np.abs(trajectory.velocity_residual).ravel()])
    return bool(np.all(residuals <= VOUCH_SHARE * drift_limit))  # NaN never vouches


class CarriagePendulumExplorer(SystemExplorer):
    """Masses, spring, string and drive of the carriage pendulum; phase portrait and power balance.

    Parameters
    ----------
    samples : int, optional
        Output samples of the run (the animation's frames).
    **kwargs
        Passed to :class:`~udk_notebooks.widgets.system.SystemExplorer`.
    """

    heading = ("Pendulum on a sprung carriage driven by <i>F</i>(<i>t</i>) = <i>F</i><sub>0</sub> sin(&omega; <i>t</i>) "
               "(lecture slides, Ex. 4:14)")
    panels = (
        Panel(r"phase portrait of $\varphi$", r"$\varphi$ (rad)", r"$\dot\varphi$ (rad/s)", time=False,
              curves=(Curve("", _angle, color=OKABE_ITO["blue"], ls="-"),)),
        Panel("carriage and ball", "time t (s)", "position (m)", zero=True, curves=(
            time_curve("carriage $x_c$", lambda run: run.trajectory.q[:, 0], color=OKABE_ITO["orange"], ls="-"),
            time_curve("ball $x - x_c$", lambda run: run.trajectory.q[:, 1] - run.trajectory.q[:, 0],
                       color=OKABE_ITO["blue"], ls="--"),
        )),
        Panel("integrated power balance", "time t (s)", "energy (J)", zero=True, curves=(
            time_curve("h(t) - h(0)", lambda run: run.trajectory.energy - run.trajectory.energy[0],
                       color=OKABE_ITO["blue"], ls="-"),
            time_curve("work of F(t)", lambda run: run.data["work"]["nonconservative"],
                       color=OKABE_ITO["orange"], ls="--"),
            time_curve("difference", lambda run: run.trajectory.energy_balance(),
                       color=OKABE_ITO["vermillion"], ls=":", lw=2.0),
        )),
    )

    def __init__(self, *, samples: int = 201, **kwargs):
        self.samples = int(samples)
        if self.samples < 2:
            raise ValueError(f"`samples` must be at least 2; got {samples!r}")
        table = parameter_table(carriage_pendulum.PARAMETERS, units=UNITS)
        table["F0"] = (5.0, table["F0"][1], table["F0"][2])  # driven by default: the example's point
        table["angle"] = (0.5, (-3.0, 3.0), "release angle of the string from the downward vertical, in rad")
        extra = {"horizon": (10.0, (2.0, 30.0), "simulated time span, in s")}
        kwargs.setdefault("frames", self.samples)
        super().__init__(table, extra=extra, **kwargs)

    def default_mechanism(self):
        return carriage_pendulum.mechanism()

    def run(self, m_c, m, l, k, g, F0, omega, angle, horizon) -> SystemRun:
        params = dict(m_c=m_c, m=m, l=l, k=k, g=g, F0=F0, omega=omega)
        q0, qd0 = carriage_pendulum.initial_state(angle=angle, **params)
        times = np.linspace(0.0, horizon, self.samples)
        traj = simulate(compiled_model(), (0.0, horizon), q0, qd0, method="dop853", t_eval=times, params=params,
                        **QUICK)
        if not vouches(traj, self.drift_limit):
            traj = simulate(compiled_model(), (0.0, horizon), q0, qd0, method="dop853", t_eval=times, params=params,
                            **TIGHT)
        return SystemRun(traj, carriage_pendulum.mechanism(**params), data={"work": traj.work()},
                         model=compiled_model())
