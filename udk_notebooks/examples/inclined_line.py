r"""A particle on a straight line with a nonideal constraint force (Udwadia, Kalaba & Fan 2005, Sec. 4).

::

      x2
       |        /  k x1 - x2 = 0
       |      o     (mass m, gravity -g e2,
       |    /        nonideal force c = (c1, c2))
       |  /
       |/__________ x1

A particle of mass ``m`` (the paper takes ``m = 1``) moves in the vertical
plane on the line ``k x1 - x2 = 0`` (Eq. 24) under gravity; the constraint is
nonideal, with the vector ``c = (c1, c2)`` (the paper's ``(1, 2)``, an
"electromagnetic" force) fixing the virtual work of the constraint force.

Eq. (32) of the paper splits the acceleration into three terms::

    x'' = (0, -g) - g/(k^2 + 1) (k, -1) + (c1 + k c2)/(m (k^2 + 1)) (1, k)
          gravity   F^L / m (no virtual work)  F^C / m (virtual work c . v)

so every acceleration is constant and the motion is a uniform acceleration
along the line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..core import Motion
from ._parameters import Parameter, defaults, symbols, values

if TYPE_CHECKING:
    from ..model import Model

__all__ = ["PARAMETERS", "exact_motion", "exact_state", "initial_state", "model", "mechanism"]

PARAMETERS = {
    "m": Parameter("m", 1.0, "mass of the particle (the paper's unit mass)", (0.1, 5.0)),
    "g": Parameter("g", 9.81, "gravitational acceleration, along -x2", (0.0, 20.0)),
    "k": Parameter("k", 1.0, "slope of the line x2 = k x1", (-3.0, 3.0)),
    "c1": Parameter("c1", 1.0, "first component of the nonideal force c (paper: 1)", (-5.0, 5.0)),
    "c2": Parameter("c2", 2.0, "second component of the nonideal force c (paper: 2)", (-5.0, 5.0)),
}


def _symbols():
    """The coordinates ``(x1, x2)`` and the parameter symbols ``(m, g, k, c1, c2)``; imports sympy."""
    from .._symbols import time_functions

    return time_functions("x1 x2"), symbols(PARAMETERS)


def model(**overrides: float) -> Model:
    """The particle on the line ``k x1 - x2 = 0`` as a :class:`Model` (2005 paper, Eqs. 22-27).

    Parameters
    ----------
    **overrides : float
        New defaults for ``m``, ``g``, ``k``, ``c1``, ``c2`` (see ``PARAMETERS``).
    """
    from ..model import Model

    (x1, x2), (m, g, k, c1, c2) = _symbols()
    return Model(
        [x1, x2],
        kinetic_energy=m * (x1.diff() ** 2 + x2.diff() ** 2) / 2,
        potential_energy=m * g * x2,
        holonomic=[k * x1 - x2],
        nonideal=[c1, c2],
        parameters=defaults(PARAMETERS, overrides),
        name="particle on an inclined line with a nonideal force",
    )


def initial_state(speed: float = 1.0, **params: float) -> tuple[np.ndarray, np.ndarray]:
    """Start at the origin moving along the line with the given speed (consistent with the constraint)."""
    slope = values(PARAMETERS, params)["k"]
    direction = np.array([1.0, slope]) / np.hypot(1.0, slope)
    return np.zeros(2), speed * direction


def exact_motion(**params: float) -> Motion:
    """The three terms of Eq. (32), generalized to mass ``m``: ``m x'' = F^N + F^L + F^C``."""
    v = values(PARAMETERS, params)
    mass, grav, slope = v["m"], v["g"], v["k"]
    norm2 = slope**2 + 1
    impressed = np.array([0.0, -mass * grav])
    ideal = -mass * grav / norm2 * np.array([slope, -1.0])
    nonideal = (v["c1"] + slope * v["c2"]) / norm2 * np.array([1.0, slope])
    return Motion(qdd=(impressed + ideal + nonideal) / mass, impressed=impressed, ideal=ideal, nonideal=nonideal)


def exact_state(t, q0, qd0, **params: float) -> tuple[np.ndarray, np.ndarray]:
    """Positions and velocities at times ``t`` (shape (N,)) under the constant acceleration of Eq. (32)."""
    t = np.asarray(t, dtype=float)[:, None]
    acc = exact_motion(**params).qdd
    return np.asarray(q0) + np.asarray(qd0) * t + acc * t**2 / 2, np.asarray(qd0) + acc * t


def mechanism(**params: float):
    """How the particle on the line looks: the line, the particle, the forces on it.

    Parameters
    ----------
    **params : float
        Parameter values by name (only ``k``, the slope, matters).

    Returns
    -------
    udk_notebooks.drawing.Mechanism
        Force site: the particle, forces ``(x1, x2)``.
    """
    from ..drawing import ForceSite, Guide, Joint, Mechanism

    slope = values(PARAMETERS, params)["k"]
    reach = 1e3  # a long segment stands for the whole line; the view clips it
    return Mechanism(
        joints=[Joint("particle", lambda q, t: q[:2])],
        guides=[Guide(lambda t: np.array([[-reach, -slope * reach], [reach, slope * reach]]), label="line")],
        forces=[ForceSite("particle", (0, 1))],
        trace="particle",
        name="particle on the line k x1 - x2 = 0",
        xlabel="$x_1$ (m)",
        ylabel="$x_2$ (m)",
    )
