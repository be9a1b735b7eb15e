r"""Explorer for a point on a circle of growing radius: a moving constraint does work (textbook chapter, Eq. 3.10).

Sliders: the mass ``m``, gravity ``g``, the growth rate ``a`` and initial
radius ``R0`` of ``R(t) = a t + R0``, the initial tangential ``speed`` and the
``horizon``. The constraint ``x^2 + y^2 - R(t)^2 = 0`` depends on time
(rheonomic, :func:`~udk_notebooks.examples.growing_circle.model`). Panels:

(a) the circle at the animated instant, the point, its path and the ideal
    constraint force ``F^L`` (2005 paper, Eq. 10) with its weight ``F^N``;
(b) the energy balance: the energy change ``h(t) - h(0)`` equals the work of
    the ideal constraint force, which is *not* zero because the constraint
    moves (the virtual displacements are tangent to the circle at a frozen
    instant, the actual ones are not); their difference is integration error;
(c) the magnitude of ``F^L`` from the Udwadia-Kalaba equation against the
    closed form ``m hbar^2 / R^3`` (shown for ``g = 0`` only, where angular
    momentum is conserved:
    :func:`~udk_notebooks.examples.growing_circle.exact_ideal_force`).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .._kept_code import compile_kept
from ..examples import growing_circle
from ..plotting import OKABE_ITO
from ..simulation import simulate
from .base import parameter_table
from .system import Panel, SystemExplorer, SystemRun, time_curve

__all__ = ["GrowingCircleExplorer"]

UNITS = {"m": "kg", "g": "m/s^2", "a": "m/s", "R0": "m"}

R0_MIN = 0.1
"""Smallest initial radius the explorer offers, in m (R0 = 0 is a circle of zero radius at the start)."""


@lru_cache(maxsize=1)
def compiled_model():
    """The growing-circle model, compiled once per session."""
    return compile_kept("growing_circle.model", growing_circle.model)


class GrowingCircleExplorer(SystemExplorer):
    """Growth rate, gravity and speed of the point on the growing circle; the work of the moving constraint.

    Parameters
    ----------
    samples : int, optional
        Output samples of the run (the animation's frames).
    **kwargs
        Passed to :class:`~udk_notebooks.widgets.system.SystemExplorer`.
    """

    heading = ("Point on a circle of growing radius <i>R</i>(<i>t</i>) = <i>a t</i> + <i>R</i><sub>0</sub>: "
               "a rheonomic constraint (textbook, Eq. 3.10)")
    panels = (
        Panel("energy and the work of $F^L$", "time t (s)", "energy (J)", zero=True, curves=(
            time_curve("h(t) - h(0)", lambda run: run.trajectory.energy - run.trajectory.energy[0],
                       color=OKABE_ITO["blue"], ls="-"),
            time_curve("work of $F^L$", lambda run: run.data["work"]["ideal"], color=OKABE_ITO["orange"], ls="--"),
            time_curve("difference", lambda run: run.trajectory.energy_balance(),
                       color=OKABE_ITO["vermillion"], ls=":", lw=2.0),
        )),
        Panel("ideal force", "time t (s)", r"$|F^L|$ (N)", zero=True, nonnegative=True, curves=(
            time_curve("exact, g = 0", lambda run: run.data["exact"], color="0.6", ls="-", lw=3.0),
            time_curve("Udwadia-Kalaba", lambda run: np.linalg.norm(run.trajectory.ideal, axis=1),
                       color=OKABE_ITO["orange"], ls="--"),
        )),
    )

    def __init__(self, *, samples: int = 241, **kwargs):
        self.samples = int(samples)
        if self.samples < 2:
            raise ValueError(f"`samples` must be at least 2; got {samples!r}")
        table = parameter_table(growing_circle.PARAMETERS, units=UNITS)
        # The run starts at t = 0, where R0 = 0 (the textbook's R = a t) is a circle of zero radius: a singular
        # configuration that no run can start from, so the slider stops short of it (issue 22).
        default, (_, high), description = table["R0"]
        table["R0"] = (default, (R0_MIN, high), description.replace("0 gives the textbook's R = a t",
                                                                     f"at least {R0_MIN:g}: R0 = 0 starts singular"))
        table["speed"] = (2.0, (-5.0, 5.0), "initial speed along the circle (counterclockwise > 0), in m/s")
        extra = {"horizon": (6.0, (1.0, 20.0), "simulated time span, in s")}
        kwargs.setdefault("frames", self.samples)
        super().__init__(table, extra=extra, **kwargs)

    def default_mechanism(self):
        return growing_circle.mechanism()

    def run(self, m, g, a, R0, speed, horizon) -> SystemRun:
        params = dict(m=m, g=g, a=a, R0=R0)
        q0, qd0 = growing_circle.initial_state(speed=speed, **params)
        times = np.linspace(0.0, horizon, self.samples)
        traj = simulate(compiled_model(), (0.0, horizon), q0, qd0, method="dop853", rtol=1e-10, atol=1e-12,
                        t_eval=times, params=params)
        if g == 0:
            exact = np.linalg.norm(growing_circle.exact_ideal_force(traj.t, speed=speed, **params), axis=1)
        else:  # no closed form: gravity has a torque about the centre
            exact = np.full(traj.t.shape, np.nan)
        return SystemRun(traj, growing_circle.mechanism(**params), data={"work": traj.work(), "exact": exact},
                         model=compiled_model())
