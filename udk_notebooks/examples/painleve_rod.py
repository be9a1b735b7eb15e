r"""Painlevé's rod: a uniform rod sliding with one end on a rough floor.

::

      y
      |                 /
      |               /    centre (x, y), angle theta above the floor
      |             /
      |           /  L/2
      |         * (x, y)
      |       /
      |     /  theta
      |___o_________________ x      floor y = 0, Coulomb friction mu
          contact end r_c = (x - (L/2) cos theta, y - (L/2) sin theta)

The rod (mass ``m``, length ``L``, moment of inertia ``I = m L^2 / 12`` about
its centre) is described by the coordinates ``q = (x, y, theta)`` of its centre
and its angle above the floor. Its lower end stays on the floor:

    phi = y - (L/2) sin(theta) = 0,   A = (0, 1, -(L/2) cos theta),   b = -(L/2) sin(theta) theta'^2.

The floor row ``A`` is the unit normal ``n = (0, 1)`` of the floor times the
Jacobian of the contact point, so its multiplier ``lambda`` *is* the normal
force ``N`` on the contact end, in newtons. The end slides with velocity

    s = x' + (L/2) sin(theta) theta',   ds/dq' = D = (1, 0, (L/2) sin theta),

and Coulomb friction ``-mu N sgn(s)`` acts along the floor at that end; its
generalized force is ``-mu N sgn(s) D^T``.

Normal force and friction together
-----------------------------------
Friction depends on ``N``, and because friction at the end makes a torque
about the centre, ``N`` depends on friction: the total constraint force is
``A^T lambda + C`` with ``C = -mu N sgn(s) D^T`` and (eliminating ``q''``)

    lambda = lambda_L - (A M^-1 A^T)^-1 A M^-1 C,

``lambda_L`` being the multiplier without friction (Udwadia, Kalaba & Fan 2005,
Eqs. 8-10 give the ideal part; the coupling is the ``A M^-1 C`` term). Here
``A M^-1 C != 0``: the shortcut ``N = |F^L|``, exact for a particle pressed on
a surface (``M = m I`` and ``C`` tangential), is wrong for the rod. The right
answer is the joint solution of the 4 x 4 linear system

    M q'' - (A^T - mu sgn(s) D^T) N = Q,    A q'' = b,

with ``Q = (0, -m g, 0)``. Eliminating ``q''`` leaves one equation for ``N``
whose coefficient is

    A M^-1 (A^T - mu sgn(s) D^T) = (1/m) (1 + 3 cos^2 theta + 3 mu sgn(s) sin theta cos theta).

Painlevé's paradox
------------------
The rod leans towards ``+x`` (its centre lies to the right of the contact
end). When the end slides away from that side (towards ``-x``, ``sgn(s) = -1``),
the coefficient vanishes at

    mu_c(theta) = (1 + 3 cos^2 theta) / (3 sin theta cos theta),

whose smallest value is ``4/3`` (at ``tan theta = 2``). For ``mu > mu_c`` the
coefficient is negative. Where the right-hand side ``b - A M^-1 Q`` is positive
(gravity pressing the end down, as at ``theta' = 0``) the only ``N`` is negative
and lifting off would drive the end into the floor: no motion is consistent
(physically the end stops with an impulsive "tangential impact", which rigid
bodies with Coulomb friction do not model). Where it is negative (a fast spin)
both a positive ``N`` and lift-off are consistent: two motions. Either way
rigid-body Coulomb friction does not decide the motion, and :func:`joint_solve`
refuses such states instead of returning a number. For ``sgn(s) = +1`` the
coefficient is always positive and no paradox arises.

The state of the issue's check
------------------------------
At ``theta = 40`` degrees, ``x' = 1`` m/s, ``theta' = 0`` (so ``s = 1`` m/s),
``mu = 0.5``, ``m = 1`` kg, ``L = 1`` m, ``g = 9.81``: ``x'' = -1.402 m/s^2`` and
``N = 2.804 N`` (``m x'' = -mu N``). The shortcuts of :func:`shortcut_motion`
give other numbers: ``N = |F^L|`` (the norm of a generalized force, which mixes
newtons and newton-metres) gives ``x'' = -1.903``; ``N = lambda_L`` (the floor's
multiplier without friction, 3.554 N) gives ``x'' = -1.777``; and the
multiplier solved with friction but measured as the norm ``||A^T lambda||``
(what ``CoulombFriction(normal=floor row)`` computes) gives ``x'' = -1.479``.

References
----------
P. Painlevé, "Sur les lois du frottement de glissement", Comptes Rendus 121
(1895) 112-115. F. E. Udwadia, R. E. Kalaba, Y. Fan, "Is analytical dynamics a
theoretical or an experimental science?", Nonlinear Analysis 63 (2005)
692-698, Eqs. (8)-(11).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._checks import finite_float
from .._lazy import LazyModule
from ..errors import PainleveParadoxError
from ._parameters import Parameter, symbols, values

__all__ = [
    "PARAMETERS",
    "ParadoxError",
    "RodMotion",
    "critical_mu",
    "determinant",
    "initial_state",
    "joint_solve",
    "model",
    "parameter_values",
    "shortcut_motion",
]

sm = LazyModule("sympy")  # imported by the model builder only: the numeric helpers run without it

PARAMETERS = {
    "m": Parameter("m", 1.0, "mass of the rod (kg)", (0.1, 5.0), {"positive": True}),
    "L": Parameter("L", 1.0, "length of the rod (m)", (0.2, 3.0), {"positive": True}),
    "g": Parameter("g", 9.81, "gravitational acceleration, along -y (m/s^2)", (0.0, 20.0), {"positive": True}),
    "mu": Parameter("mu", 0.5, "kinetic friction coefficient at the floor", (0.0, 3.0), {"positive": True}),
}

PARADOX_MU_MIN = 4.0 / 3.0
"""Smallest friction coefficient for which a uniform rod can meet the paradox (at ``tan theta = 2``)."""


ParadoxError = PainleveParadoxError
"""Painlevé's paradox: Coulomb friction and rigid contact decide no unique motion (the package's own error)."""


@dataclass(frozen=True)
class RodMotion:
    """The joint solution for the sliding rod at one state.

    Attributes
    ----------
    qdd : ndarray, shape (3,)
        ``(x'', y'', theta'')`` in m/s^2, m/s^2, rad/s^2.
    normal : float
        Normal force ``N`` of the floor on the contact end, in newtons.
    friction : float
        Friction force on the contact end along ``+x``, ``-mu N sgn(s)``, in newtons.
    coefficient : float
        ``A M^-1 (A^T - mu sgn(s) D^T)`` in 1/kg: the paradox where it is not positive.
    """

    qdd: np.ndarray
    normal: float
    friction: float
    coefficient: float


def _symbols():
    """The coordinates ``(x, y, theta)`` and the parameter symbols ``(m, L, g, mu)``; imports sympy."""
    from .._symbols import time_functions

    return time_functions("x y theta"), symbols(PARAMETERS)


def model(**overrides: float):
    """The rod as a :class:`~udk_notebooks.Model` with its lower end a physical :class:`~udk_notebooks.Contact`.

    The end ``(x - (L/2) cos theta, y - (L/2) sin theta)`` against the floor
    ``Plane((0, 1))`` with friction ``mu``: the package forms the floor row, the
    slip velocity and the joint solve of ``N`` and friction itself, so its
    normal force (``Trajectory.normal_force``, newtons) can be set beside
    :func:`joint_solve`.

    Parameters
    ----------
    **overrides : float
        New defaults for ``m``, ``L``, ``g``, ``mu``.

    Returns
    -------
    Model
        Coordinates ``(x, y, theta)``.
    """
    from ..contacts import Contact, Plane
    from ..model import Model

    (x, y, theta), (m, L, g, mu) = _symbols()
    given = parameter_values(**overrides)
    end = (x - L / 2 * sm.cos(theta), y - L / 2 * sm.sin(theta))
    return Model(
        [x, y, theta],
        mass_matrix=sm.diag(m, m, m * L**2 / 12),
        potential_energy=m * g * y,
        contacts=[Contact(end, Plane((0, 1)), mu=mu, name="floor")],
        parameters={PARAMETERS[name].symbol: value for name, value in given.items()},
        name="Painlevé's rod on a rough floor",
    )


def initial_state(theta: float, x_rate: float, theta_rate: float = 0.0,
                  **params: float) -> tuple[np.ndarray, np.ndarray]:
    """A state with the end on the floor: ``q = (0, (L/2) sin theta, theta)``, ``q' = (x', (L/2) cos(theta) theta', theta')``.

    Returns
    -------
    q0, qd0 : ndarray, shape (3,)
    """
    angle = _angle(theta)
    x_rate = finite_float(x_rate, "`x_rate` (x' of the centre, m/s)")
    theta_rate = finite_float(theta_rate, "`theta_rate` (theta', rad/s)")
    half = parameter_values(**params)["L"] / 2
    return (np.array([0.0, half * math.sin(angle), angle]),
            np.array([x_rate, half * math.cos(angle) * theta_rate, theta_rate]))


def parameter_values(**overrides: float) -> dict[str, float]:
    """All parameter values by name (``m``, ``L``, ``g``, ``mu``), defaults overridden.

    Raises
    ------
    ValueError
        For an unknown name, a non-finite value, or a mass or length that is not positive.
    """
    given = values(PARAMETERS, overrides)
    for name in ("m", "L"):
        if given[name] <= 0:
            raise ValueError(f"parameter `{name}` ({PARAMETERS[name].description}) must be positive; "
                             f"got {given[name]!r}")
    if given["mu"] < 0:
        raise ValueError(f"parameter `mu` must be >= 0 (a friction coefficient); got {given['mu']!r}")
    return given


def _sliding_state(theta, x_rate, theta_rate, params):
    """Checked arguments, the parameter values, ``(M, Q, A, b, D)`` and ``sgn(s)`` of a rod whose end slides."""
    angle = _angle(theta)
    x_rate = finite_float(x_rate, "`x_rate` (x' of the centre, m/s)")
    theta_rate = finite_float(theta_rate, "`theta_rate` (theta', rad/s)")
    v = parameter_values(**params)
    direction = _direction(x_rate + v["L"] / 2 * math.sin(angle) * theta_rate)
    return angle, theta_rate, v, _system(angle, theta_rate, v), direction


def _angle(theta) -> float:
    angle = finite_float(theta, "`theta` (the rod's angle above the floor, in rad)")
    if not 0 < angle < math.pi / 2:
        raise ValueError(f"`theta` must lie in (0, pi/2) rad, the rod leaning on its lower end; got {angle!r}")
    return angle


def _direction(s: float) -> int:
    if s == 0:
        raise ValueError("the contact end is not sliding (s = x' + (L/2) sin(theta) theta' = 0): friction is static "
                         "there and its direction is not sgn(s); give a nonzero sliding velocity")
    return 1 if s > 0 else -1


def _system(theta: float, theta_rate: float, v: dict):
    """``M``, ``Q``, floor row ``A``, ``b`` and slip row ``D`` at the angle ``theta``."""
    mass, half = v["m"], v["L"] / 2
    inertia = mass * v["L"] ** 2 / 12
    M = np.diag([mass, mass, inertia])
    Q = np.array([0.0, -mass * v["g"], 0.0])
    A = np.array([0.0, 1.0, -half * math.cos(theta)])
    b = -half * math.sin(theta) * theta_rate**2
    D = np.array([1.0, 0.0, half * math.sin(theta)])
    return M, Q, A, b, D


def determinant(theta: float, direction: int, **params: float) -> float:
    """``A M^-1 (A^T - mu sgn(s) D^T)``, the coefficient of ``N`` once ``q''`` is eliminated (1/kg).

    Parameters
    ----------
    theta : float
        Angle of the rod above the floor, in (0, pi/2) rad.
    direction : {1, -1}
        ``sgn(s)``, the direction the contact end slides along ``x``.
    **params : float
        ``m``, ``L``, ``mu`` (``g`` does not enter).

    Returns
    -------
    float
        ``(1/m) (1 + 3 cos^2 theta + 3 mu sgn(s) sin theta cos theta)``; zero or
        negative in Painlevé's paradox region.
    """
    if direction not in (1, -1):
        raise ValueError(f"`direction` must be +1 or -1 (sgn of the sliding velocity); got {direction!r}")
    angle, v = _angle(theta), parameter_values(**params)
    M, _, A, _, D = _system(angle, 0.0, v)
    return float(A @ np.linalg.solve(M, A - v["mu"] * direction * D))


def critical_mu(theta: float, direction: int = -1) -> float:
    """The friction coefficient above which the rod at ``theta`` is in Painlevé's paradox region.

    Parameters
    ----------
    theta : float
        Angle of the rod above the floor, in (0, pi/2) rad.
    direction : {1, -1}, optional
        ``sgn(s)``. Only ``-1`` (the end sliding towards ``-x``, away from the
        side the rod leans to) has a paradox.

    Returns
    -------
    float
        ``(1 + 3 cos^2 theta) / (3 sin theta cos theta)`` for ``direction = -1``
        (independent of ``m`` and ``L`` for a uniform rod; at least 4/3);
        ``inf`` for ``direction = +1``.
    """
    if direction not in (1, -1):
        raise ValueError(f"`direction` must be +1 or -1 (sgn of the sliding velocity); got {direction!r}")
    angle = _angle(theta)
    if direction == 1:
        return math.inf
    c, s = math.cos(angle), math.sin(angle)
    return (1 + 3 * c * c) / (3 * s * c)


def joint_solve(theta: float, x_rate: float, theta_rate: float = 0.0, **params: float) -> RodMotion:
    """Accelerations and normal force of the sliding rod, friction and reaction solved together.

    Solves the 4 x 4 system ``M q'' - (A^T - mu sgn(s) D^T) N = Q``, ``A q'' = b``
    with :func:`numpy.linalg.solve` (see the module docstring).

    Parameters
    ----------
    theta : float
        Angle above the floor, in (0, pi/2) rad; ``y = (L/2) sin theta`` on the floor.
    x_rate : float
        ``x'`` of the centre, in m/s.
    theta_rate : float, optional
        ``theta'`` in rad/s (``y'`` follows from the floor constraint).
    **params : float
        ``m``, ``L``, ``g``, ``mu`` (see ``PARAMETERS``).

    Returns
    -------
    RodMotion

    Raises
    ------
    ParadoxError
        When the coefficient of ``N`` is not positive (``mu >= critical_mu(theta)``
        while sliding with ``sgn(s) = -1``): no unique Coulomb motion exists.
    ValueError
        When the end does not slide (``s = 0``), or when the solution has
        ``N < 0``: the floor would have to pull, so the end lifts off (a
        unilateral contact opens) and this bilateral solve does not apply.
    """
    angle, theta_rate, v, (M, Q, A, b, D), direction = _sliding_state(theta, x_rate, theta_rate, params)
    force_row = A - v["mu"] * direction * D  # N times this is the generalized contact force
    coefficient = float(A @ np.linalg.solve(M, force_row))
    if not coefficient > 1e-12 / v["m"]:
        raise PainleveParadoxError(
            f"Painlevé's paradox at theta = {angle:.6g} rad, theta' = {theta_rate:.6g} rad/s, sgn(s) = {direction}: "
            f"mu = {v['mu']:g} >= mu_c = {critical_mu(angle, direction):.6g}, so the rigid rod with Coulomb friction "
            "has no unique motion (no solution with N >= 0, or two). Lower `mu` below mu_c, or model the contact's "
            "compliance", contacts=("floor",), state=np.array([0.0, v["L"] / 2 * math.sin(angle), angle, x_rate,
                                                               v["L"] / 2 * math.cos(angle) * theta_rate, theta_rate]),
            determinant=coefficient * v["m"])
    K = np.zeros((4, 4))
    K[:3, :3], K[:3, 3], K[3, :3] = M, -force_row, A
    solution = np.linalg.solve(K, np.append(Q, b))
    normal = float(solution[3])
    if normal < 0:
        raise ValueError(
            f"the floor would have to pull the end down (N = {normal:.6g} N < 0) at theta = {angle:.6g} rad, "
            f"theta' = {theta_rate:.6g} rad/s: the end lifts off, and the rod flies free of the floor")
    return RodMotion(qdd=solution[:3], normal=normal, friction=-v["mu"] * normal * direction, coefficient=coefficient)


def shortcut_motion(theta: float, x_rate: float, theta_rate: float = 0.0, *, normal: str = "norm",
                    **params: float) -> RodMotion:
    """The rod's motion with a normal force taken from the ideal force alone (wrong for the rod, for teaching).

    ``N`` is computed from the frictionless multiplier ``lambda_L``, friction
    ``C = -mu N sgn(s) D^T`` is built from it, and ``q''`` follows from the
    Udwadia-Kalaba equation with that fixed ``C`` (the floor multiplier then
    changes to ``lambda_L - (A M^-1 A^T)^-1 A M^-1 C``, but friction is not
    recomputed). This is exact only when ``A M^-1 C = 0``.

    Parameters
    ----------
    theta, x_rate, theta_rate : float
        As in :func:`joint_solve`.
    normal : {"norm", "multiplier", "coupled_norm"}, optional
        ``"norm"``: ``N = ||F^L|| = |lambda_L| ||A||``, the norm of the ideal
        generalized force (it adds newtons to newton-metres; what
        ``CoulombFriction(normal=None)`` took before it learnt to refuse a
        rotating body); ``"multiplier"``: ``N = |lambda_L|``, the floor's
        reaction without friction; ``"coupled_norm"``: the floor's multiplier
        solved together with friction but ``N = ||A^T lambda||``, a norm of a
        generalized force again (what ``CoulombFriction(normal=floor row)``
        computes, in newtons only for rows on translational coordinates).
    **params : float
        ``m``, ``L``, ``g``, ``mu``.

    Returns
    -------
    RodMotion
        ``normal`` is the shortcut's ``N``; ``coefficient`` is ``A M^-1 A^T``.
    """
    if normal not in ("norm", "multiplier", "coupled_norm"):
        raise ValueError(f"`normal` must be 'norm', 'multiplier' or 'coupled_norm'; got {normal!r}")
    angle, theta_rate, v, (M, Q, A, b, D), direction = _sliding_state(theta, x_rate, theta_rate, params)
    Minv_A, Minv_Q = np.linalg.solve(M, A), np.linalg.solve(M, Q)
    gram = float(A @ Minv_A)
    ideal_multiplier = (b - A @ Minv_Q) / gram
    row_size = float(np.linalg.norm(A))
    if normal == "coupled_norm":
        # N = ||A|| lambda(N) with lambda(N) = lambda_L + (mu sgn(s) N / gram) A M^-1 D: linear in N
        gain = row_size * v["mu"] * direction * float(A @ np.linalg.solve(M, D)) / gram
        size = row_size * ideal_multiplier / (1 - gain)
    else:
        size = abs(ideal_multiplier) * (row_size if normal == "norm" else 1.0)
    C = -v["mu"] * size * direction * D
    multiplier = ideal_multiplier - float(A @ np.linalg.solve(M, C)) / gram
    qdd = np.linalg.solve(M, Q + A * multiplier + C)
    return RodMotion(qdd=qdd, normal=float(size), friction=-v["mu"] * float(size) * direction, coefficient=gram)
