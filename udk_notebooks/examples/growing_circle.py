r"""A point on a circle whose radius grows with time: a rheonomic constraint (textbook chapter).

::

                     y
                     |
               . - ~ | ~ - .
            .        |       .  o m      the particle, carried outwards
          .          |        /  .       with the circle
         .           |      /     .
        .            |    / R(t)   .
       -.------------O-------------.------ x
        .            |             .
         .           |            .      R(t) = a t + R0
          .          |           .       x^2 + y^2 - R(t)^2 = 0
            .        |        .
               ` - ~ | ~ - `
                     |

A particle of mass ``m`` must stay on a circle centred at the origin whose
radius grows at the constant rate ``a``,

    x^2 + y^2 - R(t)^2 = 0,    R(t) = a t + R0.

The textbook chapter ("Analytical dynamics - an overview", Eq. 3.10) uses a
point on a *sphere* of radius ``R = a t`` as its example of a rheonomic
(time-dependent) holonomic constraint; this module is the same constraint in
the plane. ``R0 = 0`` gives the textbook's ``R = a t``; it is singular at
``t = 0`` (a circle of zero radius), so the default ``R0 = 1`` starts on a
regular circle, and ``initial_state(t0=...)`` can start later on the
textbook's circle instead. Gravity ``-m g`` along ``y`` is optional (``g = 0``
by default).

Work done by an ideal constraint force
--------------------------------------
The constraint force is normal to the circle, so it does no *virtual* work:
virtual displacements are taken at frozen time and are tangent to the
circle. But the circle itself moves outwards at speed ``a``, so the actual
velocity has the radial part ``R' = a`` and the power of the ideal force,
``q' . F^L``, is not zero. The power theorem keeps the books: Jacobi's
energy ``h = T + V`` changes at the rate ``q' . F^L`` (plus the powers of any
other nonconservative forces, none here), which
:meth:`udk_notebooks.simulation.Trajectory.energy_balance` checks.

Exact solution without gravity
------------------------------
With ``g = 0`` the only force is radial, so the angular momentum
``m R^2 theta'`` is conserved: ``theta' = hbar / R(t)^2`` with
``hbar = R(t0) v0`` for an initial tangential speed ``v0``. Integrating,

    theta(t) = theta0 + (hbar / a) (1 / R(t0) - 1 / R(t))
             = theta0 + hbar (t - t0) / (R(t0) R(t)),

the second form being regular at ``a = 0`` (a fixed circle). The radial
acceleration is ``R'' - R theta'^2 = -hbar^2 / R^3``, so

    F^L = -m hbar^2 / R^3 r_hat,    q' . F^L = -m a hbar^2 / R^3,
    T = m (a^2 + hbar^2 / R^2) / 2,

and ``dT/dt = -m a hbar^2 / R^3`` is exactly the power of the constraint
force: a growing circle slows the particle down.

References
----------
Textbook chapter "Analytical dynamics - an overview" (Taylor & Francis, 2003),
Eqs. (3.10a)-(3.10b): a point on a sphere of radius ``R = a t``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ._parameters import Parameter, defaults, symbols, values

if TYPE_CHECKING:
    from ..model import Model

__all__ = ["PARAMETERS", "exact_ideal_force", "exact_state", "initial_state", "model", "radius", "mechanism"]

PARAMETERS = {
    "m": Parameter("m", 1.0, "mass of the particle", (0.1, 5.0)),
    "g": Parameter("g", 0.0, "gravitational acceleration, along -y (0: no gravity)", (0.0, 20.0)),
    "a": Parameter("a", 0.5, "rate at which the radius grows, R' (the textbook's a)", (0.0, 2.0)),
    "R0": Parameter("R0", 1.0, "radius at t = 0 (0 gives the textbook's R = a t)", (0.0, 3.0)),
}


def _values(params: dict) -> dict[str, float]:
    return values(PARAMETERS, params)


def _symbols():
    """The coordinates ``(x, y)`` and the parameter symbols ``(m, g, a, R0)``; imports sympy."""
    from .._symbols import time_functions

    return time_functions("x y"), symbols(PARAMETERS)


def model(**overrides: float) -> Model:
    """The particle on the circle of radius ``R(t) = a t + R0`` as a :class:`Model`.

    Parameters
    ----------
    **overrides : float
        New defaults for ``m``, ``g``, ``a``, ``R0`` (see ``PARAMETERS``).

    Returns
    -------
    Model
        Coordinates ``(x, y)`` and the rheonomic constraint
        ``x^2 + y^2 - (a t + R0)^2 = 0``.
    """
    from ..model import TIME, Model

    (x, y), (m, g, a, R0) = _symbols()
    return Model(
        [x, y],
        kinetic_energy=m * (x.diff() ** 2 + y.diff() ** 2) / 2,
        potential_energy=m * g * y,
        holonomic=[x**2 + y**2 - (a * TIME + R0) ** 2],
        parameters=defaults(PARAMETERS, overrides),
        name="point on a growing circle",
    )


def radius(t, **params: float) -> np.ndarray:
    """``R(t) = a t + R0``."""
    v = _values(params)
    return v["a"] * np.asarray(t, dtype=float) + v["R0"]


def _start(speed: float, t0: float, params: dict) -> tuple[float, float]:
    """``R(t0)`` (checked positive) and the conserved ``hbar = R(t0) speed``."""
    start = float(radius(t0, **params))
    if not start > 0:
        raise ValueError(
            f"the circle has radius R(t0) = {start:g} at `t0` = {t0:g}; start where it is positive "
            "(with R0 = 0, pass t0 > 0)"
        )
    return start, start * float(speed)


def initial_state(
    theta0: float = 0.0, speed: float = 2.0, t0: float = 0.0, **params: float
) -> tuple[np.ndarray, np.ndarray]:
    """A state on the circle at time ``t0``, moving with it outwards and along it with ``speed``.

    The radial velocity must equal ``R' = a`` (the velocity-level constraint
    ``x x' + y y' = R R'``); the tangential speed is free.

    Parameters
    ----------
    theta0 : float, optional
        Polar angle of the starting point (rad).
    speed : float, optional
        Tangential speed ``R theta'`` (counterclockwise for ``speed > 0``).
    t0 : float, optional
        Start time; ``R(t0)`` must be positive.
    **params : float
        Parameter values by name.

    Returns
    -------
    q0, qd0 : ndarray, shape (2,)
    """
    start, _ = _start(speed, t0, params)
    radial = np.array([np.cos(theta0), np.sin(theta0)])
    tangential = np.array([-np.sin(theta0), np.cos(theta0)])
    return start * radial, _values(params)["a"] * radial + float(speed) * tangential


def _angles(t, theta0, speed, t0, params):
    v = _values(params)
    if v["g"] != 0:
        raise ValueError(f"the exact solution needs `g` = 0 (no torque about the centre); got g = {v['g']:g}")
    start, hbar = _start(speed, t0, params)
    t = np.asarray(t, dtype=float)
    now = radius(t, **params)
    theta = theta0 + hbar * (t - t0) / (start * now)
    return v, hbar, now, theta


def exact_state(
    t, theta0: float = 0.0, speed: float = 2.0, t0: float = 0.0, **params: float
) -> tuple[np.ndarray, np.ndarray]:
    """Positions and velocities at times ``t`` for ``g = 0`` (angular momentum conserved).

    ``theta(t) = theta0 + hbar (t - t0) / (R(t0) R(t))`` with ``hbar = R(t0) speed``;
    arguments as in :func:`initial_state`.

    Returns
    -------
    q, qd : ndarray, shape (N, 2)

    Raises
    ------
    ValueError
        When ``g != 0``: gravity has a torque about the centre and there is no
        closed form.
    """
    v, hbar, now, theta = _angles(t, theta0, speed, t0, params)
    radial = np.stack([np.cos(theta), np.sin(theta)], axis=-1)
    tangential = np.stack([-np.sin(theta), np.cos(theta)], axis=-1)
    q = now[..., None] * radial
    qd = v["a"] * radial + (hbar / now)[..., None] * tangential
    return q, qd


def exact_ideal_force(
    t, theta0: float = 0.0, speed: float = 2.0, t0: float = 0.0, **params: float
) -> np.ndarray:
    """The ideal constraint force ``-m hbar^2 / R^3 r_hat`` at times ``t`` for ``g = 0``, shape (N, 2)."""
    v, hbar, now, theta = _angles(t, theta0, speed, t0, params)
    radial = np.stack([np.cos(theta), np.sin(theta)], axis=-1)
    return (-v["m"] * hbar**2 / now**3)[..., None] * radial


def mechanism(**params: float):
    """How the point on the growing circle looks: the circle at each instant, the point and its forces.

    Parameters
    ----------
    **params : float
        Parameter values by name (``a`` and ``R0`` set the radius ``R(t)``).

    Returns
    -------
    udk_notebooks.drawing.Mechanism
        Force site: the particle, forces ``(x, y)``; the circle is a moving guide.
    """
    from ..drawing import ForceSite, Guide, Joint, Mechanism

    circle = np.linspace(0.0, 2.0 * np.pi, 181)
    unit = np.column_stack([np.cos(circle), np.sin(circle)])
    return Mechanism(
        joints=[Joint("centre", lambda q, t: (0.0, 0.0), style="pin", size=5), Joint("particle", lambda q, t: q[:2])],
        guides=[Guide(lambda t: float(radius(t, **params)) * unit, moving=True, label="circle R(t)")],
        forces=[ForceSite("particle", (0, 1))],
        trace="particle",
        name="point on a circle of growing radius",
    )
