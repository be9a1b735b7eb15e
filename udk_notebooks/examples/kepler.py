r"""The inverse Kepler problem: which force keeps a free mass on a conic? (encyclopedia article).

::

                  y
                  |
           . - -  |  - - - - .
        .         |              .
      .           |                .       orbit: r = epsilon x + ell,
   m o------------O-----------------.--- x        r = sqrt(x^2 + y^2)
     | perihelion  focus            .
     v (-r_p, 0)  |                .       angular momentum:
        .         |              .         m (x y' - y x') = L
           . - -  |  - - - - .
                  |

A particle of mass ``m`` moves in the plane with **no applied force at all**
(``Q = 0``, not even gravity). Two constraints are imposed instead, in the
Cartesian coordinates ``q = (x, y)``:

1. the orbit, a conic with a focus at the origin, eccentricity ``epsilon``
   and semi-latus rectum ``ell``. The article writes it ``r = epsilon x + ell``
   with ``r = sqrt(x^2 + y^2)``; here it is the holonomic constraint
   ``sqrt(x^2 + y^2) - epsilon x - ell = 0``, smooth away from the origin
   (which the orbit never reaches, since ``r >= ell / (1 + epsilon) > 0``);
2. a conserved angular momentum, the nonholonomic (velocity-level)
   constraint ``m (x y' - y x') - L = 0``.

With ``x = r cos(theta)`` the orbit is ``r (1 - epsilon cos theta) = ell``, i.e.

    r(theta) = ell / (1 - epsilon cos theta),

so the closest approach (perihelion) ``r_p = ell / (1 + epsilon)`` lies at
``theta = pi``, on the negative ``x`` axis. ``0 <= epsilon < 1`` gives an
ellipse, ``epsilon = 1`` a parabola and ``epsilon > 1`` one branch of a
hyperbola.

The force that the constraints need
-----------------------------------
Differentiating the orbit twice (with ``r' = epsilon x'`` and the speed
``v^2 = r'^2 + h^2 / r^2``, ``h = x y' - y x'``), multiplying by ``r``, and
differentiating the angular momentum once gives the article's pair of rows

    [ x - r epsilon   y ] [x'']   [ -h^2 / r^2 ]
    [       y        -x ] [y''] = [      0     ],    h = L / m.

The determinant is ``-r (r - epsilon x) = -r ell``, never zero on the orbit,
so the two rows fix ``q''`` without any help from the (vanishing) impressed
force, and the whole constraint force is ``F = m q''``. Inverting,

    q'' = (1 / (r ell)) [ x   y ; y   -(x - r epsilon) ] (-h^2 / r^2, 0)
        = -(h^2 / (ell r^2)) (cos theta, sin theta),

    F   = -(L^2 / (m ell r^2)) (cos theta, sin theta),

an attractive inverse-square central force of strength ``k = L^2 / (m ell)``
(:func:`exact_force`): Newton's law of gravitation follows from the shape of
the orbit and Kepler's second law. (The model's own row for the orbit is the
first row divided by ``r``; the solution is the same.)

Because the angular momentum constraint has the inhomogeneous term ``L``,
the actual velocity is not a virtual displacement, so the ideal constraint
force does work: the kinetic energy ``T`` changes, and the power theorem
reads ``dT/dt = q' . F^L``. Along the orbit ``T - k / r`` stays equal to the
conic's energy ``k (epsilon^2 - 1) / (2 ell)``.

Exact time law
--------------
Let ``phi = theta - pi`` be the angle from perihelion, so
``r = ell / (1 + epsilon cos phi)``, and let ``mu_g = k / m = h^2 / ell``. With
``t = 0`` at perihelion (:func:`exact_state`):

* ellipse: ``a = ell / (1 - epsilon^2)``, ``n = sqrt(mu_g / a^3)``, Kepler's
  equation ``E - epsilon sin E = n t``, position from perihelion
  ``(a (cos E - epsilon), a sqrt(1 - epsilon^2) sin E)``;
* parabola: Barker's equation ``D + D^3 / 3 = 2 h t / ell^2`` with
  ``D = tan(phi / 2)``, solved in closed form (Cardano), position
  ``(ell (1 - D^2) / 2, ell D)``;
* hyperbola: ``a = ell / (epsilon^2 - 1)``, ``n = sqrt(mu_g / a^3)``,
  ``epsilon sinh H - H = n t``, position
  ``(a (epsilon - cosh H), a sqrt(epsilon^2 - 1) sinh H)``.

The position from perihelion is then turned by ``pi`` (perihelion at
``theta = pi``) and mirrored when ``L < 0`` (clockwise motion).

References
----------
Encyclopedia article "Udwadia-Kalaba equation", section "Inverse Kepler
problem". B. Zhang et al., "A new study of Kepler's law and the
inverse square law of gravitation", Eur. J. Phys. 36 (2015) 035018.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .._lazy import LazyModule
from ._parameters import Parameter, defaults, symbols, values

if TYPE_CHECKING:
    from ..model import Model

sm = LazyModule("sympy")  # imported by the model builder only: the numeric helpers run without it

__all__ = [
    "ECCENTRICITIES",
    "NEWTON_TOL",
    "PARAMETERS",
    "exact_force",
    "exact_state",
    "force_constant",
    "initial_state",
    "model",
    "orbit_radius",
    "orbital_energy",
    "perihelion",
    "mechanism",
]

PARAMETERS = {
    "m": Parameter("m", 1.0, "mass of the particle", (0.1, 5.0)),
    "L": Parameter("L", 1.0, "angular momentum about the focus, m (x y' - y x') (the article's L)", (0.2, 3.0)),
    "epsilon": Parameter(
        "epsilon", 0.5, "eccentricity: < 1 ellipse, 1 parabola, > 1 hyperbola (the article's epsilon)", (0.0, 3.0)
    ),
    "ell": Parameter(
        "ell", 1.0, "semi-latus rectum, the orbit's radius at theta = pi/2 (the article's ell)", (0.2, 3.0)
    ),
}

ECCENTRICITIES = {"circle": 0.0, "ellipse": 0.5, "parabola": 1.0, "hyperbola": 2.0}
"""One eccentricity per kind of orbit, e.g. ``initial_state(epsilon=ECCENTRICITIES["parabola"])``."""

NEWTON_TOL = 4e-16
"""Kepler's equation is iterated until the correction is below this (radians)."""


def _values(params: dict) -> dict[str, float]:
    v = values(PARAMETERS, params)
    if v["epsilon"] < 0:
        raise ValueError(f"`epsilon` must be >= 0 (the perihelion is on the negative x axis); got {v['epsilon']!r}")
    if v["ell"] <= 0 or v["m"] <= 0:
        raise ValueError("`ell` and `m` must be positive")
    if v["L"] == 0:
        raise ValueError("`L` must not be zero: with no angular momentum the particle cannot go around the focus")
    return v


def _symbols():
    """The coordinates ``(x, y)`` and the parameter symbols ``(m, L, epsilon, ell)``; imports sympy."""
    from .._symbols import time_functions

    return time_functions("x y"), symbols(PARAMETERS)


def model(**overrides: float) -> Model:
    """The free particle held on a conic with constant angular momentum, as a :class:`Model`.

    Parameters
    ----------
    **overrides : float
        New defaults for ``m``, ``L``, ``epsilon``, ``ell`` (see ``PARAMETERS``).

    Returns
    -------
    Model
        Coordinates ``(x, y)``, no impressed force, the holonomic orbit
        ``sqrt(x^2 + y^2) - epsilon x - ell = 0`` and the nonholonomic
        ``m (x y' - y x') - L = 0``.
    """
    from ..model import Model

    (x, y), (m, L, epsilon, ell) = _symbols()
    return Model(
        [x, y],
        kinetic_energy=m * (x.diff() ** 2 + y.diff() ** 2) / 2,
        holonomic=[sm.sqrt(x**2 + y**2) - epsilon * x - ell],
        nonholonomic=[m * (x * y.diff() - y * x.diff()) - L],
        parameters=defaults(PARAMETERS, overrides),
        name="inverse Kepler problem",
    )


def orbit_radius(theta, **params: float) -> np.ndarray:
    """``r(theta) = ell / (1 - epsilon cos theta)``, the orbit in polar form (``inf`` off the branch)."""
    v = _values(params)
    denominator = 1.0 - v["epsilon"] * np.cos(np.asarray(theta, dtype=float))
    with np.errstate(divide="ignore"):
        return np.where(denominator > 0, v["ell"] / np.where(denominator > 0, denominator, 1.0), np.inf)


def force_constant(**params: float) -> float:
    """Strength ``k = L^2 / (m ell)`` of the inverse-square force ``-k / r^2`` (radial)."""
    v = _values(params)
    return v["L"] ** 2 / (v["m"] * v["ell"])


def orbital_energy(**params: float) -> float:
    """``T - k / r`` along the orbit: ``k (epsilon^2 - 1) / (2 ell)``."""
    v = _values(params)
    return force_constant(**params) * (v["epsilon"] ** 2 - 1.0) / (2.0 * v["ell"])


def exact_force(q, **params: float) -> np.ndarray:
    """The constraint force the article derives: ``-(L^2 / (m ell r^2)) (cos theta, sin theta)``.

    Parameters
    ----------
    q : array_like, shape (..., 2)
        Positions ``(x, y)`` on the orbit.
    **params : float
        Parameter values by name.

    Returns
    -------
    ndarray, shape (..., 2)
    """
    q = np.asarray(q, dtype=float)
    r = np.linalg.norm(q, axis=-1, keepdims=True)
    return -force_constant(**params) * q / r**3


def perihelion(**params: float) -> tuple[float, float]:
    """Radius ``r_p = ell / (1 + epsilon)`` and speed ``|h| / r_p`` at the closest approach."""
    v = _values(params)
    radius = v["ell"] / (1.0 + v["epsilon"])
    return radius, abs(v["L"] / v["m"]) / radius


def initial_state(**params: float) -> tuple[np.ndarray, np.ndarray]:
    """The perihelion state: ``q0 = (-r_p, 0)``, ``q0' = (0, -h / r_p)`` with ``h = L / m``.

    Counterclockwise for ``L > 0``. Ellipse, parabola or hyperbola follow from
    ``epsilon`` (e.g. ``initial_state(epsilon=1.0)``).

    Returns
    -------
    q0, qd0 : ndarray, shape (2,)
    """
    v = _values(params)
    radius, _ = perihelion(**params)
    return np.array([-radius, 0.0]), np.array([0.0, -(v["L"] / v["m"]) / radius])


def _solve_kepler(mean, ecc):
    """``E`` with ``E - ecc sin E = mean`` (ellipse), by Newton's method."""
    wrapped = np.remainder(mean + np.pi, 2 * np.pi) - np.pi  # in [-pi, pi)
    E = np.where(ecc > 0.8, np.pi * np.sign(wrapped), wrapped)
    for _ in range(100):
        step = (E - ecc * np.sin(E) - wrapped) / (1.0 - ecc * np.cos(E))
        E = E - step
        if np.all(np.abs(step) <= NEWTON_TOL * np.maximum(1.0, np.abs(E))):
            break
    return E + (mean - wrapped)


def _solve_hyperbolic(mean, ecc):
    """``H`` with ``ecc sinh H - H = mean`` (hyperbola), by Newton's method."""
    H = np.arcsinh(mean / ecc)
    for _ in range(200):
        step = (ecc * np.sinh(H) - H - mean) / (ecc * np.cosh(H) - 1.0)
        H = H - step
        if np.all(np.abs(step) <= NEWTON_TOL * np.maximum(1.0, np.abs(H))):
            break
    return H


def exact_state(t, **params: float) -> tuple[np.ndarray, np.ndarray]:
    """Positions and velocities at times ``t`` after perihelion (the time law of the conic).

    Parameters
    ----------
    t : array_like, shape (N,)
        Times since the perihelion passage (negative times give the approach).
    **params : float
        Parameter values by name.

    Returns
    -------
    q, qd : ndarray, shape (N, 2)
        Matching :func:`initial_state` at ``t = 0``.
    """
    v = _values(params)
    t = np.asarray(t, dtype=float)
    ecc, semi_latus = v["epsilon"], v["ell"]
    h = v["L"] / v["m"]
    turn = np.sign(h)
    h = abs(h)
    mu_g = h**2 / semi_latus
    if ecc < 1.0:
        a = semi_latus / (1.0 - ecc**2)
        n = np.sqrt(mu_g / a**3)
        E = _solve_kepler(n * t, ecc)
        rate = n / (1.0 - ecc * np.cos(E))
        root = np.sqrt(1.0 - ecc**2)
        px, py = a * (np.cos(E) - ecc), a * root * np.sin(E)
        vx, vy = -a * np.sin(E) * rate, a * root * np.cos(E) * rate
    elif ecc == 1.0:
        c = 6.0 * h * t / semi_latus**2  # D^3 + 3 D = c
        u = np.cbrt(c / 2 + np.sqrt(c**2 / 4 + 1.0))
        D = u - 1.0 / u
        rate = 2.0 * h / (semi_latus**2 * (1.0 + D**2))
        px, py = semi_latus * (1.0 - D**2) / 2, semi_latus * D
        vx, vy = -semi_latus * D * rate, semi_latus * rate
    else:
        a = semi_latus / (ecc**2 - 1.0)
        n = np.sqrt(mu_g / a**3)
        H = _solve_hyperbolic(n * t, ecc)
        rate = n / (ecc * np.cosh(H) - 1.0)
        root = np.sqrt(ecc**2 - 1.0)
        px, py = a * (ecc - np.cosh(H)), a * root * np.sinh(H)
        vx, vy = -a * np.sinh(H) * rate, a * root * np.cosh(H) * rate
    # Perihelion at theta = pi: turn by pi; mirror for clockwise motion (L < 0).
    q = np.stack([-px, -turn * py], axis=-1)
    qd = np.stack([-vx, -turn * vy], axis=-1)
    return q, qd


def mechanism(**params: float):
    """How the inverse Kepler problem looks: the focus, the orbit, the particle and its forces.

    Parameters
    ----------
    **params : float
        Parameter values by name (``epsilon`` and ``ell`` shape the orbit).

    Returns
    -------
    udk_notebooks.drawing.Mechanism
        Force site: the particle, forces ``(x, y)``.
    """
    from ..drawing import ForceSite, Guide, Joint, Mechanism

    v = _values(params)
    # The orbit r = ell / (1 - epsilon cos theta); an open branch is drawn out to 6 ell.
    # Angles from 0 to 2 pi, so that the part kept (around the perihelion at pi) is one piece.
    theta = np.linspace(0.0, 2.0 * np.pi, 721)
    radius = orbit_radius(theta, **params)
    keep = np.isfinite(radius) & (radius <= 6.0 * v["ell"])
    orbit = np.column_stack([radius[keep] * np.cos(theta[keep]), radius[keep] * np.sin(theta[keep])])
    return Mechanism(
        joints=[Joint("focus", lambda q, t: (0.0, 0.0), style="pin"), Joint("particle", lambda q, t: q[:2])],
        guides=[Guide(lambda t: orbit, label="orbit")],
        forces=[ForceSite("particle", (0, 1))],
        trace="particle",
        name="inverse Kepler problem",
    )
