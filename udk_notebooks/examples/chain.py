r"""Pendulum chains in Cartesian coordinates: one link, and N links (the scaling benchmark's systems).

::

        O  pin at the origin            O
        |\                              |\   link 1
        | \ l                           | o  mass 1
        |  \                            |  \  link 2
        |th \                           |   o  mass 2
        |    o  mass m at (x, y)        |   |  ...
                                        |   o  mass N
             g |                              (x_N, y_N)
               v

Cartesian pendulum (:func:`cartesian_pendulum`)
-----------------------------------------------
A point mass ``m`` at ``(x, y)`` (``y`` up) on a rigid massless rod of
length ``l`` pinned at the origin, under gravity. Coordinates ``(x, y)``, mass
matrix ``diag(m, m)``, potential ``m g y``, one holonomic constraint::

    x^2 + y^2 - l^2 = 0.

Twice differentiated it gives the row ``(2x, 2y) q'' = -2 (x'^2 + y'^2)`` of
``A q'' = b``. With ``theta`` the angle from the downward vertical,
``(x, y) = l (sin(theta), -cos(theta))`` and the motion obeys
``theta'' = -(g / l) sin(theta)``. Two checks follow:

* small swings: linearizing, ``theta(t) = theta0 cos(w t) + (theta0' / w) sin(w t)``
  with ``w = sqrt(g / l)``; the relative error of this formula grows like
  ``theta0^2`` (the true period is longer by the factor ``1 + theta0^2 / 16 + ...``),
  so it is a sharp test only for small ``theta0`` (:func:`small_angle_state`);
* any swing: the angle equation integrated on its own with DOP853
  (:func:`angle_route_state`), a route that never meets a constraint.

N-link chain (:func:`n_link_chain`)
-----------------------------------
``N`` equal point masses ``m`` joined in a row by rigid massless links of
length ``l``, the first link pinned at the origin. Coordinates
``(x1, y1, x2, y2, ..., xN, yN)``, mass matrix ``m I`` (size ``2N``),
potential ``m g sum(y_i)``, and ``N`` holonomic constraints::

    x1^2 + y1^2 - l^2 = 0,
    (x_i - x_{i-1})^2 + (y_i - y_{i-1})^2 - l^2 = 0,    i = 2..N.

The mass matrix is constant, so a compiled model factorizes it once; every
constraint row touches at most four coordinates. These are the reference
systems of the scaling benchmark (``N`` up to 64); nothing in their
derivation calls ``sympy.simplify``. For ``N = 2`` the chain is the double
pendulum of point masses (:mod:`udk_notebooks.examples.double_pendulum` with
``bodies="points"``), a second route the tests compare with.

:func:`chain_initial_state` places the chain from the angles of its links, so
every constraint holds to rounding.

As in every example module, ``model`` and ``initial_state`` name the
catalogue's default pair, here :func:`cartesian_pendulum` and
:func:`pendulum_initial_state`.

References
----------
Textbook chapter "Analytical dynamics - an overview" (2003): holonomic
constraints, the rigid pair and the point on a circle.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from .._lazy import LazyModule
from ._parameters import Parameter, defaults, symbols, values

if TYPE_CHECKING:
    from ..model import Model

sm = LazyModule("sympy")  # imported by the model builders only: the numeric helpers run without it

__all__ = [
    "PARAMETERS",
    "angle_route_state",
    "cartesian_pendulum",
    "chain_initial_state",
    "chain_to_angles",
    "initial_state",
    "model",
    "n_link_chain",
    "pendulum_initial_state",
    "small_angle_state",
    "mechanism",
]

PARAMETERS = {
    "m": Parameter("m", 1.0, "mass of each point mass", (0.1, 5.0)),
    "l": Parameter("l", 1.0, "length of each rigid massless link", (0.1, 3.0)),
    "g": Parameter("g", 9.81, "gravitational acceleration, along -y", (0.0, 20.0)),
}


def _values(params) -> tuple[float, float, float]:
    v = values(PARAMETERS, params)
    return v["m"], v["l"], v["g"]


def _symbols():
    """The parameter symbols ``(m, l, g)``; imports sympy."""
    return symbols(PARAMETERS)


# -- one link ------------------------------------------------------------------


def cartesian_pendulum(**overrides: float) -> Model:
    """A point mass on a rigid massless rod, in Cartesian coordinates ``(x, y)``.

    Parameters
    ----------
    **overrides : float
        New defaults for ``m``, ``l``, ``g`` (see ``PARAMETERS``).

    Returns
    -------
    Model
        Mass matrix ``diag(m, m)``, potential ``m g y``, constraint
        ``x^2 + y^2 - l^2 = 0``.
    """
    from .._symbols import time_functions
    from ..model import Model

    m, l, g = _symbols()
    x, y = time_functions("x y")
    return Model(
        [x, y],
        mass_matrix=m * sm.eye(2),
        potential_energy=m * g * y,
        holonomic=[x**2 + y**2 - l**2],
        parameters=defaults(PARAMETERS, overrides),
        name="pendulum in Cartesian coordinates",
    )


def _angle_to_cartesian(angle, rate, length):
    angle, rate = np.asarray(angle, dtype=float), np.asarray(rate, dtype=float)
    s, c = np.sin(angle), np.cos(angle)
    return (np.stack([length * s, -length * c], axis=-1), np.stack([length * c * rate, length * s * rate], axis=-1))


def pendulum_initial_state(angle: float = 0.5, rate: float = 0.0, **params: float) -> tuple[np.ndarray, np.ndarray]:
    """The state ``(x, y)``, ``(x', y')`` of the pendulum at ``angle`` from the downward vertical.

    Parameters
    ----------
    angle : float, optional
        ``theta`` in radians.
    rate : float, optional
        ``theta'``.
    **params : float
        Parameter values by name (the length ``l`` matters).

    Returns
    -------
    q0, qd0 : ndarray, shape (2,)
        On the circle and tangent to it, to rounding.
    """
    return _angle_to_cartesian(angle, rate, _values(params)[1])


def small_angle_state(t, angle: float, rate: float = 0.0, **params: float) -> tuple[np.ndarray, np.ndarray]:
    """The linearized (small-swing) motion mapped to Cartesian coordinates.

    Parameters
    ----------
    t : array_like, shape (N,)
        Times.
    angle, rate : float
        ``theta0`` and ``theta0'``; the formula's error grows like ``theta0^2``.
    **params : float
        Parameter values by name.

    Returns
    -------
    q, qd : ndarray, shape (N, 2)
        ``(x, y)`` and ``(x', y')`` of ``theta(t) = theta0 cos(w t) + (theta0'/w) sin(w t)``.
    """
    _, length, grav = _values(params)
    w = math.sqrt(grav / length)
    t = np.atleast_1d(np.asarray(t, dtype=float))
    theta = angle * np.cos(w * t) + rate / w * np.sin(w * t)
    theta_rate = -angle * w * np.sin(w * t) + rate * np.cos(w * t)
    return _angle_to_cartesian(theta, theta_rate, length)


def angle_route_state(t, angle: float, rate: float = 0.0, *, rtol: float = 1e-12, atol: float = 1e-14, **params: float):
    """The pendulum from its angle equation ``theta'' = -(g/l) sin(theta)``, integrated with DOP853.

    An independent route: no constraint, no Udwadia-Kalaba equation.

    Parameters
    ----------
    t : array_like, shape (N,)
        Increasing output times, starting at the initial time.
    angle, rate : float
        ``theta`` and ``theta'`` at ``t[0]``.
    rtol, atol : float, optional
        Tolerances of :func:`scipy.integrate.solve_ivp`.
    **params : float
        Parameter values by name.

    Returns
    -------
    q, qd : ndarray, shape (N, 2)
        ``(x, y)`` and ``(x', y')``.
    """
    _, length, grav = _values(params)
    t = np.atleast_1d(np.asarray(t, dtype=float))
    ratio = grav / length

    def rhs(_, state):
        return [state[1], -ratio * math.sin(state[0])]

    from scipy.integrate import solve_ivp  # here, not at the top: scipy.integrate costs a cold start 0.15 s

    sol = solve_ivp(rhs, (t[0], t[-1]), [angle, rate], method="DOP853", t_eval=t, rtol=rtol, atol=atol)
    if not sol.success:
        raise RuntimeError(f"the angle equation could not be integrated: {sol.message}")
    return _angle_to_cartesian(sol.y[0], sol.y[1], length)


model = cartesian_pendulum
initial_state = pendulum_initial_state


# -- N links -------------------------------------------------------------------


def _check_links(N) -> int:
    if isinstance(N, bool) or not isinstance(N, (int, np.integer)) or N < 1:
        raise ValueError(f"`N` must be a positive integer (the number of links); got {N!r}")
    return int(N)


def n_link_chain(N: int, **overrides: float) -> Model:
    """``N`` point masses on rigid massless links, pinned at the origin, in Cartesian coordinates.

    Parameters
    ----------
    N : int
        Number of links (and masses), at least 1.
    **overrides : float
        New defaults for ``m``, ``l``, ``g`` (see ``PARAMETERS``).

    Returns
    -------
    Model
        ``2N`` coordinates ``(x1, y1, ..., xN, yN)``, mass matrix ``m I``,
        ``N`` holonomic constraints (module docstring).
    """
    from .._symbols import time_functions
    from ..model import Model

    N = _check_links(N)
    m, l, g = _symbols()
    xs = time_functions(f"x1:{N + 1}")
    ys = time_functions(f"y1:{N + 1}")
    coordinates = [c for pair in zip(xs, ys) for c in pair]
    links = []
    previous_x, previous_y = sm.Integer(0), sm.Integer(0)
    for xi, yi in zip(xs, ys):
        links.append((xi - previous_x) ** 2 + (yi - previous_y) ** 2 - l**2)
        previous_x, previous_y = xi, yi
    return Model(
        coordinates,
        mass_matrix=m * sm.eye(2 * N),
        potential_energy=m * g * sum(ys, sm.Integer(0)),
        holonomic=links,
        parameters=defaults(PARAMETERS, overrides),
        name=f"chain of {N} links in Cartesian coordinates",
    )


def chain_initial_state(N: int, angles=None, rates=None, **params: float) -> tuple[np.ndarray, np.ndarray]:
    """Place the chain from the angles of its links (from the downward vertical).

    Parameters
    ----------
    N : int
        Number of links.
    angles : array_like, shape (N,), optional
        Absolute link angles; default ``0.3 + 0.4 k / N`` for link ``k = 0..N-1``
        (a chain held out to the side and slightly bent).
    rates : array_like, shape (N,), optional
        Their rates; default zero (released from rest).
    **params : float
        Parameter values by name (the length ``l`` matters).

    Returns
    -------
    q0, qd0 : ndarray, shape (2N,)
        ``(x1, y1, ..., xN, yN)`` and rates; each link has length ``l`` to
        rounding and each link's relative velocity is normal to it.
    """
    N = _check_links(N)
    length = _values(params)[1]
    angles = 0.3 + 0.4 * np.arange(N) / N if angles is None else np.asarray(angles, dtype=float)
    rates = np.zeros(N) if rates is None else np.asarray(rates, dtype=float)
    if angles.shape != (N,) or rates.shape != (N,):
        raise ValueError(f"`angles` and `rates` must have shape ({N},); got {angles.shape} and {rates.shape}")
    steps, step_rates = _angle_to_cartesian(angles, rates, length)
    return np.cumsum(steps, axis=0).ravel(), np.cumsum(step_rates, axis=0).ravel()


def chain_to_angles(q, qd) -> tuple[np.ndarray, np.ndarray]:
    """Link angles and rates of chain states (the inverse of :func:`chain_initial_state`).

    Parameters
    ----------
    q, qd : array_like, shape (2N,) or (K, 2N)

    Returns
    -------
    angles, rates : ndarray, shape (N,) or (K, N)
        ``atan2(dx, -dy)`` of each link, in ``(-pi, pi]``, and its rate
        ``(dx dvy - dy dvx) / (dx^2 + dy^2)``.
    """
    q, qd = np.asarray(q, dtype=float), np.asarray(qd, dtype=float)
    points = q.reshape(q.shape[:-1] + (-1, 2))
    velocities = qd.reshape(qd.shape[:-1] + (-1, 2))
    zero = np.zeros_like(points[..., :1, :])
    d = np.diff(np.concatenate([zero, points], axis=-2), axis=-2)
    dv = np.diff(np.concatenate([zero, velocities], axis=-2), axis=-2)
    dx, dy, dvx, dvy = d[..., 0], d[..., 1], dv[..., 0], dv[..., 1]
    return np.arctan2(dx, -dy), (dx * dvy - dy * dvx) / (dx**2 + dy**2)


def mechanism(N: int = 1, **params: float):
    """How the chain looks: the fixed pin, ``N`` links and ``N`` point masses with their forces.

    Parameters
    ----------
    N : int, optional
        Number of links (1: :func:`cartesian_pendulum`; otherwise :func:`n_link_chain`).
    **params : float
        Parameter values by name (unused: the links' lengths are in the coordinates).

    Returns
    -------
    udk_notebooks.drawing.Mechanism
        Force sites: every mass, forces ``(x_i, y_i)``.
    """
    from ..drawing import ForceSite, Joint, Mechanism, Rod

    N = _check_links(N)
    _values(params)
    joints = [Joint("O", lambda q, t: (0.0, 0.0), style="fixed", size=10)]
    for i in range(N):
        joints.append(Joint(f"P{i + 1}", lambda q, t, i=i: q[2 * i:2 * i + 2], size=7 if N > 8 else 9))
    names = [j.name for j in joints]
    return Mechanism(
        joints=joints,
        parts=[Rod(a, b, width=2.5) for a, b in zip(names, names[1:])],
        forces=[ForceSite(f"P{i + 1}", (2 * i, 2 * i + 1)) for i in range(N)],
        trace=names[-1],
        name=f"chain of {N} link{'s' if N > 1 else ''}",
    )
