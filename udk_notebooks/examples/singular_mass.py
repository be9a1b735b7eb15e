r"""A bob on the bar of an elliptic trammel with massless sliders: a singular mass matrix (encyclopedia article).

::

                         y
                         |
      -------------------+----------o------------------ x    horizontal rail
                         |        / A = (u, 0), massless slider
                         |      /
                         |    m      P = ((1 - c) u, c w), the bob,
                         |  /        a fraction c of the way from A to B
                         |/
                         o B = (0, w), massless slider
                         |           on the vertical rail
                         |
                         | g
                         v

The trammel of Archimedes: a rigid bar of length ``l`` has its ends A and B
in two sliders, one running on the horizontal rail (the ``x`` axis), the
other on the vertical rail (the ``y`` axis). The bar and the sliders are
massless; a bob of mass ``m`` is fixed on the bar at the point P a fraction
``c`` of the way from A to B, and gravity ``-m g`` acts along ``y``. The bob
runs on the ellipse ``x^2 / (1 - c)^2 + y^2 / c^2 = l^2``.

Coordinates and constraints
---------------------------
The generalized coordinates are the two slider positions and the bob,
``q = (u, w, x, y)``. The kinetic energy is the bob's alone,
``T = m (x'^2 + y'^2) / 2``, so

    M = diag(0, 0, m, m)

is singular: the sliders carry no inertia and, on their own, no force
determines their accelerations. Three holonomic constraints tie them to the
bob:

    u^2 + w^2 - l^2 = 0       (the bar is rigid),
    x - (1 - c) u = 0,
    y - c w = 0               (the bob sits at P on the bar).

Why the accelerations are still unique
--------------------------------------
The encyclopedia article (section "Equation of motion") states that ``q''``
is unique exactly when the stacked matrix ``[M; A]`` has full column rank
``n``. Here ``n = 4`` and the acceleration rows are

    A = [ 2u        2w    0  0 ]
        [ -(1 - c)   0    1  0 ]
        [ 0         -c    0  1 ].

If ``[M; A] v = 0`` then ``m v_x = m v_y = 0``, and the last two rows of
``A`` give ``(1 - c) v_u = 0`` and ``c v_w = 0``: for ``0 < c < 1``, ``v = 0``
in every configuration. So ``M + A^+ A`` is positive definite and the
augmented form ``(M + A^+ A) q'' = Q + A^+ b`` (with the Udwadia-Kalaba
equation applied to it) gives the motion, while the plain form, which needs
``M^{-1/2}``, cannot even start. (As printed, the form adds a dimensionless
projector to masses; with units it reads ``M + s A^+ A``, ``Q + s A^+ b`` for
a mass ``s > 0``, and every such ``s`` gives the same motion.) The same accelerations solve the
saddle-point system ``M q'' = Q + A^T lambda``, ``A q'' = b``
(:func:`udk_notebooks.lagrange_multipliers`). Its matrix
``[[M, A^T], [A, 0]]`` is invertible when, besides the rank condition, ``A``
has full row rank: a redundant row (one constraint written twice) makes it
singular although ``q''`` stays unique. The three rows above are independent
in every configuration: only the last two have entries in the ``x`` and ``y``
columns, one each, and the first is not zero since ``u^2 + w^2 = l^2``.

Because the sliders are massless and no applied force acts on them, the
constraint force on them must vanish, ``F^L_u = F^L_w = 0``: a massless body
only passes forces on. The rails' reactions and the bar's tension are
internal to the constraint force and add up to the force on the bob.

Minimal coordinate
------------------
With the trammel angle ``theta`` (the bar, from B to A, points along
``(cos theta, -sin theta)``), ``u = l cos(theta)``, ``w = l sin(theta)`` and
``P = l ((1 - c) cos(theta), c sin(theta))``. Lagrange's equation for
``theta`` is

    J(theta) theta'' + J'(theta) theta'^2 / 2 + m g c l cos(theta) = 0,
    J(theta) = m l^2 ((1 - c)^2 sin^2(theta) + c^2 cos^2(theta)),

with ``J' = m l^2 ((1 - c)^2 - c^2) sin(2 theta)``
(:func:`minimal_acceleration`). ``J >= m l^2 min(c, 1 - c)^2 > 0``, so this
one-degree-of-freedom route is regular too, and it is the independent check
for the four-coordinate Udwadia-Kalaba motion. The bob hangs at rest at
``theta = -pi/2`` (``u = 0``, ``w = -l``); ``c = 1/2`` makes the ellipse a
circle of radius ``l / 2`` and the bob a simple pendulum of that length.

References
----------
Encyclopedia article "Udwadia-Kalaba equation", section "Equation of motion"
(singular mass matrices, ``M_A = M + A^+ A``). F. E. Udwadia,
P. Phohomsiri, "Explicit equations of motion for constrained mechanical
systems with singular mass matrices and applications to multi-body
dynamics", Proc. R. Soc. A 462 (2006) 2097-2117. F. E. Udwadia,
A. D. Schutte, "Equations of motion for general constrained systems in
Lagrangian mechanics", Acta Mechanica 213 (2010) 111-129 (the auxiliary
system with a positive definite mass matrix).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from ._parameters import Parameter, defaults, symbols, values

if TYPE_CHECKING:
    from ..model import Model

__all__ = [
    "PARAMETERS",
    "angle",
    "initial_state",
    "minimal_acceleration",
    "minimal_energy",
    "minimal_rate",
    "model",
    "state_from_angle",
    "mechanism",
]

PARAMETERS = {
    "m": Parameter("m", 1.0, "mass of the bob", (0.1, 5.0)),
    "g": Parameter("g", 9.81, "gravitational acceleration, along -y", (0.0, 20.0)),
    "l": Parameter("l", 1.0, "length of the massless bar between the sliders", (0.2, 3.0)),
    "c": Parameter("c", 0.25, "position of the bob on the bar, as a fraction of the way from A to B", (0.05, 0.95)),
    "mA": Parameter("mA", 0.0, "mass of slider A (0: massless, the example's singular case)", (0.0, 5.0)),
    "mB": Parameter("mB", 0.0, "mass of slider B (0: massless, the example's singular case)", (0.0, 5.0)),
}


def _values(params: dict) -> dict[str, float]:
    v = values(PARAMETERS, params)
    if not 0 < v["c"] < 1:
        raise ValueError(
            f"`c` must lie strictly between 0 and 1; got {v['c']!r}. At c = 0 or 1 the bob sits on "
            "a slider and [M; A] loses rank where the bar lies along a rail"
        )
    if v["mA"] < 0 or v["mB"] < 0:
        raise ValueError(f"slider masses `mA` and `mB` must be >= 0; got {v['mA']!r} and {v['mB']!r}")
    return v


def _symbols():
    """The coordinates ``(u, w, x, y)`` and the parameter symbols ``(m, g, l, c, mA, mB)``; imports sympy."""
    from .._symbols import time_functions

    return time_functions("u w x y"), symbols(PARAMETERS)


def model(**overrides: float) -> Model:
    """The trammel with massless sliders and a bob on the bar, as a :class:`Model`.

    Parameters
    ----------
    **overrides : float
        New defaults for ``m``, ``g``, ``l``, ``c``, ``mA``, ``mB`` (see ``PARAMETERS``).

    Returns
    -------
    Model
        Coordinates ``(u, w, x, y)``, mass matrix ``diag(mA, mB, m, m)`` (singular
        for the default massless sliders) and three holonomic constraints.
    """
    from ..model import Model

    _values(overrides)
    (u, w, x, y), (m, g, l, c, mA, mB) = _symbols()
    return Model(
        [u, w, x, y],
        kinetic_energy=(mA * u.diff() ** 2 + mB * w.diff() ** 2 + m * (x.diff() ** 2 + y.diff() ** 2)) / 2,
        potential_energy=m * g * y + mB * g * w,  # slider B rides the vertical rail
        holonomic=[u**2 + w**2 - l**2, x - (1 - c) * u, y - c * w],
        parameters=defaults(PARAMETERS, overrides),
        name="elliptic trammel with massless sliders",
    )


def state_from_angle(theta, theta_dot, **params: float) -> tuple[np.ndarray, np.ndarray]:
    """Coordinates ``(u, w, x, y)`` and their rates from the bar's angle and angular velocity.

    Parameters
    ----------
    theta, theta_dot : float or array_like, shape (N,)
        The trammel angle, defined by ``u = l cos(theta)``, ``w = l sin(theta)``
        (the bar, from B to A, makes the angle ``-theta`` with the ``x`` axis),
        and its rate.
    **params : float
        Parameter values by name.

    Returns
    -------
    q, qd : ndarray, shape (4,) or (N, 4)
    """
    v = _values(params)
    theta = np.asarray(theta, dtype=float)
    theta_dot = np.asarray(theta_dot, dtype=float)
    length, frac = v["l"], v["c"]
    cos, sin = np.cos(theta), np.sin(theta)
    q = np.stack([length * cos, length * sin, (1 - frac) * length * cos, frac * length * sin], axis=-1)
    qd = np.stack(
        [-length * sin, length * cos, -(1 - frac) * length * sin, frac * length * cos], axis=-1
    ) * theta_dot[..., None]
    return q, qd


def initial_state(
    theta0: float = -np.pi / 2 + 1.0, theta_dot0: float = 0.0, **params: float
) -> tuple[np.ndarray, np.ndarray]:
    """A consistent state from the bar's angle (default: released from one radian off the bottom).

    Returns
    -------
    q0, qd0 : ndarray, shape (4,)
    """
    return state_from_angle(theta0, theta_dot0, **params)


def angle(q) -> np.ndarray:
    """The bar's angle ``theta = atan2(w, u)`` from coordinates of shape (..., 4)."""
    q = np.asarray(q, dtype=float)
    return np.arctan2(q[..., 1], q[..., 0])


def _inertia(theta, v: dict):
    """``J(theta)`` and ``J'(theta)``; slider A moves with ``-l sin(theta) theta'``, B with ``l cos(theta) theta'``."""
    mass, length, frac, mass_a, mass_b = v["m"], v["l"], v["c"], v["mA"], v["mB"]
    sin2, cos2 = np.sin(theta) ** 2, np.cos(theta) ** 2
    inertia = length**2 * (mass * ((1 - frac) ** 2 * sin2 + frac**2 * cos2) + mass_a * sin2 + mass_b * cos2)
    slope = length**2 * (mass * ((1 - frac) ** 2 - frac**2) + mass_a - mass_b) * np.sin(2 * theta)
    return inertia, slope


def minimal_acceleration(theta, theta_dot, **params: float) -> np.ndarray:
    """``theta''`` from Lagrange's equation in the single coordinate ``theta`` (see the module docstring).

    With slider masses, ``J`` gains ``l^2 (mA sin^2 + mB cos^2)`` and the weight of
    slider B adds ``mB g l cos(theta)`` to the gravity term.
    """
    v = _values(params)
    theta = np.asarray(theta, dtype=float)
    inertia, slope = _inertia(theta, v)
    weight = (v["m"] * v["c"] + v["mB"]) * v["g"] * v["l"]
    return -(slope * np.asarray(theta_dot) ** 2 / 2 + weight * np.cos(theta)) / inertia


def minimal_rate(**params: float):
    """The right-hand side ``(t, (theta, theta')) -> [theta', theta'']`` of :func:`minimal_acceleration`, for an integrator.

    The same equation with the parameters read once: ``J = a sin^2 + d cos^2``
    and ``J' = (a - d) sin(2 theta)`` with ``a = l^2 (m (1 - c)^2 + mA)`` and
    ``d = l^2 (m c^2 + mB)``, on Python floats (an integrator calls it
    thousands of times per run, where numpy's per-call cost on scalars would
    be most of the work).

    Parameters
    ----------
    **params : float
        Parameter values by name (checked as for :func:`minimal_acceleration`).

    Returns
    -------
    callable
        ``rate(t, y)`` with ``y = (theta, theta')``, returning a list of two floats.
    """
    v = _values(params)
    mass, length, frac = v["m"], v["l"], v["c"]
    sin_coefficient = length**2 * (mass * (1 - frac) ** 2 + v["mA"])
    cos_coefficient = length**2 * (mass * frac**2 + v["mB"])
    swing = sin_coefficient - cos_coefficient
    weight = (mass * frac + v["mB"]) * v["g"] * length
    sin, cos = math.sin, math.cos

    def rate(t, y):
        theta, theta_dot = y
        s, c = sin(theta), cos(theta)
        inertia = sin_coefficient * s * s + cos_coefficient * c * c
        return [theta_dot, -(swing * s * c * theta_dot * theta_dot + weight * c) / inertia]

    return rate


def minimal_energy(theta, theta_dot, **params: float) -> np.ndarray:
    """``J(theta) theta'^2 / 2 + (m c + mB) g l sin(theta)``: the conserved energy in the minimal coordinate."""
    v = _values(params)
    theta = np.asarray(theta, dtype=float)
    inertia, _ = _inertia(theta, v)
    return inertia * np.asarray(theta_dot) ** 2 / 2 + (v["m"] * v["c"] + v["mB"]) * v["g"] * v["l"] * np.sin(theta)


def mechanism(**params: float):
    """How the trammel looks: two sliders on their rails, the bar between them, the bob on the bar.

    Parameters
    ----------
    **params : float
        Parameter values by name (``l`` sets the rails' and sliders' size).

    Returns
    -------
    udk_notebooks.drawing.Mechanism
        Force sites: slider A (``u``, along x), slider B (``w``, along y) and the bob ``(x, y)``.
    """
    from ..drawing import Block, ForceSite, Guide, Joint, Mechanism, Rod

    length = _values(params)["l"]
    size = 0.12 * length
    reach = 1.3 * length
    return Mechanism(
        joints=[Joint("A", lambda q, t: (q[0], 0.0), style="pin", size=5),
                Joint("B", lambda q, t: (0.0, q[1]), style="pin", size=5),
                Joint("bob", lambda q, t: q[2:4], size=10)],
        parts=[Block("A", 1.6 * size, size), Block("B", size, 1.6 * size), Rod("A", "B", width=2.5)],
        guides=[Guide(lambda t: np.array([[-reach, 0.0], [reach, 0.0]]), label="rail of A"),
                Guide(lambda t: np.array([[0.0, -reach], [0.0, reach]]), label="rail of B")],
        forces=[ForceSite("A", (0, None)), ForceSite("B", (None, 1)), ForceSite("bob", (2, 3))],
        trace="bob",
        name="elliptic trammel",
    )
