r"""Explorer for the inverse Kepler problem: the force that holds a free mass on a conic (encyclopedia article).

Sliders: the mass ``m``, the angular momentum ``L``, the eccentricity
``epsilon`` (below 1 an ellipse, 1 a parabola, above 1 a hyperbola), the
semi-latus rectum ``ell`` and the ``horizon``. No force is applied; the orbit
``sqrt(x^2 + y^2) - epsilon x - ell = 0`` and the law of areas
``m (x y' - y x') = L`` are imposed as constraints
(:func:`~udk_notebooks.examples.kepler.model`), and the Udwadia-Kalaba equation
returns the force they need. Panels:

(a) the orbit, the focus and the particle at the animated instant with that
    constraint force (``F^L``);
(b) the force's magnitude against the distance ``r`` from the focus, over
    the inverse-square law ``k / r^2`` with ``k = L^2 / (m ell)``
    (:func:`~udk_notebooks.examples.kepler.force_constant`);
(c) how far the computed force is from central and from inverse-square: the
    sine of its angle to the radial direction and its relative difference
    from ``k / r^2`` (both at rounding level: the constraints alone imply
    Newton's law of gravitation).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .._kept_code import compile_kept
from ..examples import kepler
from ..plotting import OKABE_ITO
from ..simulation import simulate
from .base import parameter_table
from .system import Curve, Panel, SystemExplorer, SystemRun, time_curve

__all__ = ["KeplerExplorer"]

UNITS = {"m": "kg", "L": "kg m^2/s", "epsilon": "1 (dimensionless)", "ell": "m"}


@lru_cache(maxsize=1)
def compiled_model():
    """The inverse-Kepler model, compiled once per session."""
    return compile_kept("kepler.model", kepler.model)


def _radius(run: SystemRun) -> np.ndarray:
    return np.linalg.norm(run.trajectory.q, axis=1)


def _magnitude(run: SystemRun) -> np.ndarray:
    return np.linalg.norm(run.trajectory.constraint, axis=1)


def _law(run: SystemRun):
    r = _radius(run)
    grid = np.linspace(r.min(), r.max(), 200)
    return grid, run.data["k"] / grid**2


def _off_centre(run: SystemRun) -> np.ndarray:
    q, force = run.trajectory.q, run.trajectory.constraint
    return (q[:, 0] * force[:, 1] - q[:, 1] * force[:, 0]) / (_radius(run) * _magnitude(run))


def _off_law(run: SystemRun) -> np.ndarray:
    r = _radius(run)
    return _magnitude(run) * r**2 / run.data["k"] - 1.0


class KeplerExplorer(SystemExplorer):
    """Orbit shape and angular momentum of the inverse Kepler problem; the force comes out inverse-square.

    Parameters
    ----------
    samples : int, optional
        Output samples of the run (the animation's frames).
    **kwargs
        Passed to :class:`~udk_notebooks.widgets.system.SystemExplorer`.
    """

    heading = "Inverse Kepler problem: impose the orbit and the law of areas, get the force (encyclopedia article)"
    panels = (
        Panel("force against distance", "distance r from the focus (m)", "force |F| (N)", time=False,
              nonnegative=True, curves=(
            Curve("law $k/r^2$", _law, color="0.6", ls="-", lw=3.0, instant=False),
            Curve("from the constraints", lambda run: (_radius(run), _magnitude(run)),
                  color=OKABE_ITO["orange"], ls="--"),
        )),
        Panel("central and inverse-square?", "time t (s)", "deviation (1)", yscale="log", curves=(
            time_curve("sine of angle to radial", _off_centre, color=OKABE_ITO["blue"], ls="-"),
            time_curve(r"$|F| r^2/k - 1$", _off_law, color=OKABE_ITO["vermillion"], ls="--"),
        )),
    )

    def __init__(self, *, samples: int = 241, **kwargs):
        self.samples = int(samples)
        if self.samples < 2:
            raise ValueError(f"`samples` must be at least 2; got {samples!r}")
        table = parameter_table(kepler.PARAMETERS, units=UNITS)
        extra = {"horizon": (6.0, (1.0, 20.0), "simulated time span, in s (an ellipse's period is "
                                                "2 pi sqrt(m a^3 / k))")}
        kwargs.setdefault("frames", self.samples)
        super().__init__(table, extra=extra, **kwargs)

    def default_mechanism(self):
        return kepler.mechanism()

    def run(self, m, L, epsilon, ell, horizon) -> SystemRun:
        params = dict(m=m, L=L, epsilon=epsilon, ell=ell)
        q0, qd0 = kepler.initial_state(**params)
        times = np.linspace(0.0, horizon, self.samples)
        traj = simulate(compiled_model(), (0.0, horizon), q0, qd0, method="dop853", rtol=1e-11, atol=1e-12,
                        t_eval=times, params=params)
        return SystemRun(traj, kepler.mechanism(**params), data={"k": kepler.force_constant(**params)},
                         model=compiled_model())
