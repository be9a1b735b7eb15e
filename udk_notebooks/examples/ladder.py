r"""A ladder sliding down a wall: a uniform rod with one end on the floor and the other on the wall.

::

      y
      |
      o  top  r_T = (x - (L/2) cos theta, y + (L/2) sin theta), on the wall x = 0
      |\
      | \        wall: normal force N_wall along +x, friction mu_wall along the wall
      |  \
      |   * centre (x, y)
      |    \
      |     \  theta
      |______o_____________ x     floor y = 0: normal force N_floor along +y, friction mu_floor
            bottom r_B = (x + (L/2) cos theta, y - (L/2) sin theta)

The rod (mass ``m``, length ``L``, ``I = m L^2 / 12`` about its centre) has the
coordinates ``q = (x, y, theta)``. Both contacts are unilateral: the floor and
the wall can push, never pull. Their gaps and slip velocities are

    floor:  phi_f = y - (L/2) sin theta >= 0,   s_f = x' - (L/2) sin(theta) theta'   (bottom along +x)
    wall:   phi_w = x - (L/2) cos theta >= 0,   s_w = y' + (L/2) cos(theta) theta'   (top along +y)

and each gap row ``A_k`` is the surface's unit normal times the Jacobian of its
contact point, so the multipliers are the normal forces in newtons.

The frictionless ladder leaves the wall
---------------------------------------
Released from rest at ``theta0`` with both contacts closed, the centre moves on
the circle of radius ``L/2`` about the corner and energy gives
``theta'^2 = 3 g (sin theta0 - sin theta) / L``. The wall's push is
``N_wall = m x''`` with ``x = (L/2) cos theta``, which vanishes when

    sin(theta) = (2/3) sin(theta0),

i.e. when the top has fallen to two thirds of its starting height. After that
the wall would have to pull: the top leaves the wall, and the rod slides on the
floor alone with a constant horizontal velocity of its centre (no horizontal
force acts on it).

With friction
-------------
While both ends slide (the bottom away from the wall, ``s_f > 0``; the top
down, ``s_w < 0``), friction ``-mu_floor N_floor`` acts along ``x`` at the bottom
and ``+mu_wall N_wall`` along ``y`` at the top. The accelerations and both
normal forces then solve one linear system (:func:`contact_forces`); released
from rest the ladder stays put when ``2 mu_floor tan(theta0) >= 1 - mu_floor
mu_wall`` (theta0 measured from the floor), the classical condition
(:func:`holds_at_rest`). A held ladder with both ends rough has statically
indeterminate normal forces (four contact forces, three equations of statics).

:func:`reference` integrates these phases with :func:`scipy.integrate.solve_ivp`
and locates the wall's release as an event: an independent route, not the
package's solver, for tests and the explorer's checks.

References
----------
The classical problem of the sliding ladder; energy and Newton-Euler
equations as in any text on rigid-body dynamics. F. E. Udwadia, R. E. Kalaba,
Y. Fan, "Is analytical dynamics a theoretical or an experimental science?",
Nonlinear Analysis 63 (2005) 692-698, Eqs. (8)-(11), for the constraint forces.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._checks import finite_float
from .._lazy import LazyModule
from ._parameters import Parameter, symbols, values
from ..errors import PainleveParadoxError as ParadoxError

__all__ = [
    "PARAMETERS",
    "LadderReference",
    "contact_forces",
    "holds_at_rest",
    "initial_state",
    "leave_angle",
    "mechanism",
    "model",
    "parameter_values",
    "reference",
    "release_state",
    "top_height",
    "wall_distance",
]

sm = LazyModule("sympy")  # imported by the model builder only: the numeric helpers run without it

PARAMETERS = {
    "m": Parameter("m", 1.0, "mass of the ladder (kg)", (0.1, 5.0), {"nonnegative": True}),
    "L": Parameter("L", 1.0, "length of the ladder (m)", (0.2, 3.0), {"nonnegative": True}),
    "g": Parameter("g", 9.81, "gravitational acceleration, along -y (m/s^2)", (0.1, 20.0), {"nonnegative": True}),
    "mu_floor": Parameter("mu_floor", 0.0, "friction coefficient at the floor", (0.0, 1.0), {"nonnegative": True}),
    "mu_wall": Parameter("mu_wall", 0.0, "friction coefficient at the wall", (0.0, 1.0), {"nonnegative": True}),
}

FLOOR, WALL = 0, 1


def parameter_values(**overrides: float) -> dict[str, float]:
    """All parameter values by name (``m``, ``L``, ``g``, ``mu_floor``, ``mu_wall``), defaults overridden.

    Raises
    ------
    ValueError
        For an unknown name, a non-finite value, a mass, length or gravity
        that is not positive, or a negative friction coefficient.
    """
    given = values(PARAMETERS, overrides)
    for name in ("m", "L", "g"):
        if given[name] <= 0:
            raise ValueError(f"parameter `{name}` ({PARAMETERS[name].description}) must be positive; "
                             f"got {given[name]!r}")
    for name in ("mu_floor", "mu_wall"):
        if given[name] < 0:
            raise ValueError(f"parameter `{name}` must be >= 0 (a friction coefficient); got {given[name]!r}")
    return given


def _start_angle(theta0) -> float:
    angle = finite_float(theta0, "`theta0` (the ladder's start angle above the floor, in rad)")
    if not 0 < angle < math.pi / 2:
        raise ValueError(f"`theta0` must lie in (0, pi/2) rad, the ladder leaning on the wall; got {angle!r}")
    return angle


def leave_angle(theta0: float) -> float:
    """Angle at which a frictionless ladder released from rest at ``theta0`` leaves the wall.

    Parameters
    ----------
    theta0 : float
        Start angle above the floor, in (0, pi/2) rad.

    Returns
    -------
    float
        ``asin((2/3) sin theta0)`` in rad (independent of ``m``, ``L`` and ``g``).
    """
    return math.asin(2.0 / 3.0 * math.sin(_start_angle(theta0)))


def holds_at_rest(theta0: float, **params: float) -> bool:
    """Whether friction holds the ladder at rest at ``theta0``: ``2 mu_floor tan(theta0) >= 1 - mu_floor mu_wall``.

    The limiting equilibrium with both frictions at their limits, from the
    balance of forces and of moments about the centre.
    """
    angle, v = _start_angle(theta0), parameter_values(**params)
    return 2 * v["mu_floor"] * math.tan(angle) >= 1 - v["mu_floor"] * v["mu_wall"]


def initial_state(theta0: float = 1.2, **params: float) -> tuple[np.ndarray, np.ndarray]:
    """At rest against the wall and on the floor at ``theta0``: ``q = ((L/2) cos theta0, (L/2) sin theta0, theta0)``.

    Returns
    -------
    q0, qd0 : ndarray, shape (3,)
    """
    angle, half = _start_angle(theta0), parameter_values(**params)["L"] / 2
    return np.array([half * math.cos(angle), half * math.sin(angle), angle]), np.zeros(3)


def _symbols():
    """The coordinates ``(x, y, theta)`` and the parameter symbols ``(m, L, g, mu_floor, mu_wall)``; imports sympy."""
    from .._symbols import time_functions

    return time_functions("x y theta"), symbols(PARAMETERS)


def _ends(half):
    """Top and bottom of the ladder as sympy columns (top on the wall side)."""
    (x, y, theta), _ = _symbols()
    top = (x - half * sm.cos(theta), y + half * sm.sin(theta))
    bottom = (x + half * sm.cos(theta), y - half * sm.sin(theta))
    return top, bottom


def model(**overrides: float):
    """The ladder as a :class:`~udk_notebooks.Model` with two physical contacts (floor and wall).

    Both are unilateral :class:`~udk_notebooks.Contact` s: the bottom against the
    floor ``Plane((0, 1))`` with ``mu_floor``, the top against the wall
    ``Plane((1, 0))`` (allowed side ``x > 0``) with ``mu_wall``. Their normal
    forces come out in newtons (``Trajectory.normal_force``, columns floor,
    wall), and the wall's contact opens where ``N_wall`` reaches zero.

    Parameters
    ----------
    **overrides : float
        New defaults for ``m``, ``L``, ``g``, ``mu_floor``, ``mu_wall``.

    Returns
    -------
    Model
        Coordinates ``(x, y, theta)``: the centre and the angle above the floor.
    """
    from ..contacts import Contact, Plane
    from ..model import Model

    (x, y, theta), (m, L, g, mu_floor, mu_wall) = _symbols()
    given = parameter_values(**overrides)
    top, bottom = _ends(L / 2)
    return Model(
        [x, y, theta],
        mass_matrix=sm.diag(m, m, m * L**2 / 12),
        potential_energy=m * g * y,
        contacts=[Contact(bottom, Plane((0, 1)), mu=mu_floor, name="floor"),
                  Contact(top, Plane((1, 0)), mu=mu_wall, name="wall")],
        parameters={PARAMETERS[name].symbol: value for name, value in given.items()},
        name="ladder sliding on a floor and a wall",
    )


RELEASE_RATE = -1e-9
"""rad/s: the fall rate a rough ladder is released with (see :func:`release_state`)."""


def release_state(theta0: float = 1.2, **params: float) -> tuple[np.ndarray, np.ndarray]:
    """The ladder let go at ``theta0``: at rest when frictionless, else falling at ``RELEASE_RATE``.

    At exact rest both rough ends would stick at once, and a rigid ladder
    held at both ends has statically indeterminate normal forces (four rows
    on three coordinates), which the solver rightly refuses. A start rate of
    ``-1e-9`` rad/s fixes the slip directions of the impending fall (bottom
    out, top down) and changes the motion by about ``1e-9``.

    Returns
    -------
    q0, qd0 : ndarray, shape (3,)
        Consistent with both contacts.
    """
    q0, _ = initial_state(theta0, **params)
    v = parameter_values(**params)
    rate = 0.0 if v["mu_floor"] == 0 and v["mu_wall"] == 0 else RELEASE_RATE
    half, angle = v["L"] / 2, q0[2]
    return q0, np.array([half * math.sin(angle) * -rate, half * math.cos(angle) * rate, rate])


def _coordinates(q) -> np.ndarray:
    q = np.asarray(q, dtype=float)
    if q.ndim == 0 or q.shape[-1] != 3:
        raise ValueError(f"`q` must hold (x, y, theta) along its last axis, shape (..., 3); got shape {q.shape}")
    return q


def top_height(q, **params: float) -> np.ndarray:
    """Height ``y + (L/2) sin theta`` of the top above the floor, for ``q`` of shape (..., 3), in m."""
    q = _coordinates(q)
    return q[..., 1] + parameter_values(**params)["L"] / 2 * np.sin(q[..., 2])


def wall_distance(q, **params: float) -> np.ndarray:
    """Distance ``x - (L/2) cos theta`` of the top from the wall, for ``q`` of shape (..., 3), in m."""
    q = _coordinates(q)
    return q[..., 0] - parameter_values(**params)["L"] / 2 * np.cos(q[..., 2])


def mechanism(**params: float):
    """How the ladder looks: the rod between its ends, the floor and the wall, the forces at its centre.

    Returns
    -------
    udk_notebooks.drawing.Mechanism
        Force site: the centre ``(x, y)``, where the generalized forces' ``x``
        and ``y`` entries are the resultant forces on the rod.
    """
    from ..drawing import ForceSite, Guide, Joint, Mechanism, Rod

    half = parameter_values(**params)["L"] / 2

    def top(q, t):
        return np.array([q[0] - half * np.cos(q[2]), q[1] + half * np.sin(q[2])])

    def bottom(q, t):
        return np.array([q[0] + half * np.cos(q[2]), q[1] - half * np.sin(q[2])])

    reach = 4 * half
    return Mechanism(
        joints=[Joint("top", top, style="hidden"), Joint("bottom", bottom, style="hidden"),
                Joint("centre", lambda q, t: q[:2], size=6)],
        parts=[Rod("top", "bottom", width=4.0)],
        guides=[Guide(lambda t: np.array([[0.0, 0.0], [reach, 0.0]]), style="ground", label="floor"),
                Guide(lambda t: np.array([[0.0, 0.0], [0.0, reach]]), style="ground", label="wall")],
        forces=[ForceSite("centre", (0, 1))],
        trace="top",
        name="ladder on a floor and a wall",
    )


@dataclass(frozen=True)
class _Rows:
    """Gap rows, their right-hand sides and slip rows of both contacts at one state."""

    A: np.ndarray  # (2, 3): floor, wall
    b: np.ndarray  # (2,)
    D: np.ndarray  # (2, 3): d(slip)/dq'


def _rows(q: np.ndarray, qd: np.ndarray, half: float) -> _Rows:
    theta, rate = q[2], qd[2]
    s, c = math.sin(theta), math.cos(theta)
    A = np.array([[0.0, 1.0, -half * c], [1.0, 0.0, half * s]])
    b = np.array([-half * s * rate**2, -half * c * rate**2])
    D = np.array([[1.0, 0.0, -half * s], [0.0, 1.0, half * c]])
    return _Rows(A, b, D)


def _solve(v: dict, q, qd, active: tuple[int, ...], signs: dict[int, int]):
    """``q''`` and the normal forces of the ``active`` contacts (each sliding with ``signs[k]``).

    ``M q'' - sum_k (A_k - mu_k sgn(s_k) D_k)^T N_k = Q``, ``A_k q'' = b_k``:
    the contact forces and the accelerations solved together.
    """
    half, mass = v["L"] / 2, v["m"]
    M = np.diag([mass, mass, mass * v["L"] ** 2 / 12])
    Q = np.array([0.0, -mass * v["g"], 0.0])
    rows = _rows(np.asarray(q, float), np.asarray(qd, float), half)
    mus = (v["mu_floor"], v["mu_wall"])
    A = rows.A[list(active)]
    W = np.array([rows.A[k] - mus[k] * signs[k] * rows.D[k] for k in active]).reshape(len(active), 3)
    coupling = A @ np.linalg.solve(M, W.T)  # normal forces to gap accelerations
    if active and not (np.linalg.det(coupling) > 0 and np.all(np.diag(coupling) > 0)):
        raise ParadoxError(
            f"Painlevé's paradox at theta = {q[2]:.6g} rad: with mu_floor = {mus[0]:g}, mu_wall = {mus[1]:g} the "
            "contact forces of the rigid ladder are not determined. Lower the friction coefficients")
    k = len(active)
    K = np.zeros((3 + k, 3 + k))
    K[:3, :3], K[:3, 3:], K[3:, :3] = M, -W.T, A
    solution = np.linalg.solve(K, np.concatenate([Q, rows.b[list(active)]]))
    return solution[:3], dict(zip(active, solution[3:]))


def contact_forces(theta: float, theta_rate: float, **params: float) -> tuple[float, float, float]:
    """``theta''`` and both normal forces while the ladder slides down with both ends in contact.

    Parameters
    ----------
    theta : float
        Angle above the floor, in (0, pi/2) rad.
    theta_rate : float
        ``theta'`` in rad/s, not positive (falling). At ``theta' = 0`` the
        slip directions are those of the impending fall (bottom out, top down).
    **params : float
        ``m``, ``L``, ``g``, ``mu_floor``, ``mu_wall``.

    Returns
    -------
    theta_dd, normal_floor, normal_wall : float
        rad/s^2, N, N. A negative ``normal_wall`` means the wall would have to
        pull: the top leaves it.
    """
    angle = _start_angle(theta)
    rate = finite_float(theta_rate, "`theta_rate` (theta', rad/s)")
    if rate > 0:
        raise ValueError(f"`theta_rate` must be <= 0 (the ladder sliding down); got {rate!r}")
    v = parameter_values(**params)
    half = v["L"] / 2
    q = np.array([half * math.cos(angle), half * math.sin(angle), angle])
    qd = np.array([-half * math.sin(angle) * rate, half * math.cos(angle) * rate, rate])
    qdd, normal = _solve(v, q, qd, (FLOOR, WALL), {FLOOR: 1, WALL: -1})
    return float(qdd[2]), float(normal[FLOOR]), float(normal[WALL])


@dataclass(frozen=True)
class LadderReference:
    """The ladder's motion from :func:`reference` (an independent event-driven integration).

    Attributes
    ----------
    t : ndarray, shape (N,)
    q, qd : ndarray, shape (N, 3)
        ``(x, y, theta)`` and their rates.
    normal_floor, normal_wall : ndarray, shape (N,)
        Normal forces in newtons (zero where the contact is open). For a ladder
        that friction holds at rest with a rough wall they are NaN: statically
        indeterminate.
    leave_time : float or None
        When the top left the wall (None if it did not within the run).
    leave_angle : float or None
        ``theta`` at that instant, in rad.
    status : str
        ``"finished"``, ``"holds"`` (friction keeps it at rest), or why the
        reference stopped early (``"top reaches the floor"``, ``"bottom stops
        sliding"``, ``"top returns to the wall"``, ``"bottom leaves the floor"``).
    """

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    normal_floor: np.ndarray
    normal_wall: np.ndarray
    leave_time: float | None
    leave_angle: float | None
    status: str


def _phase(v, t_span, q0, qd0, active, signs, events, t_eval):
    """One phase of constant contact set: integrate ``q, q'`` and stop at the first event."""
    from scipy.integrate import solve_ivp  # here, not at the top: scipy.integrate costs a cold start 0.15 s

    def rhs(t, state):
        qdd, _ = _solve(v, state[:3], state[3:], active, signs)
        return np.concatenate([state[3:], qdd])

    inside = t_eval[(t_eval >= t_span[0]) & (t_eval <= t_span[1])]
    return solve_ivp(rhs, t_span, np.concatenate([q0, qd0]), method="DOP853", rtol=1e-11, atol=1e-12,
                     t_eval=inside, events=events)


def _terminal(fn, direction=0.0):
    fn.terminal, fn.direction = True, direction
    return fn


def _normal_forces_at_rest(angle: float, v: dict) -> tuple[float, float]:
    """``N_floor``, ``N_wall`` (N) of a ladder held at rest, or NaN where statics does not decide them.

    With a smooth wall the floor carries the weight, ``N_floor = m g``, and the
    moments about the bottom give ``N_wall = m g / (2 tan theta)``. With both
    ends rough the four contact forces meet three equations of statics: the
    split between floor and wall is statically indeterminate, and no number is
    returned (``m g`` would even break the friction limit at the floor for some
    held ladders, ``1 - mu_floor mu_wall <= 2 mu_floor tan(theta) < 1``).
    """
    if v["mu_wall"] > 0:
        return math.nan, math.nan
    weight = v["m"] * v["g"]
    return weight, weight / (2 * math.tan(angle))


def reference(theta0: float, t_end: float, t_eval=None, **params: float) -> LadderReference:
    """The ladder released from rest at ``theta0``: both contacts, then (after the wall's release) the floor alone.

    Parameters
    ----------
    theta0 : float
        Start angle above the floor, in (0, pi/2) rad.
    t_end : float
        End of the run, in s (> 0).
    t_eval : array_like, optional
        Output times in ``[0, t_end]`` (default 201 uniform samples).
    **params : float
        ``m``, ``L``, ``g``, ``mu_floor``, ``mu_wall``.

    Returns
    -------
    LadderReference
        The run stops early, with its ``status``, at what this reference does
        not model: the top reaching the floor or coming back to the wall
        (impacts), the bottom coming to rest (sticking) or leaving the floor.

    Raises
    ------
    ParadoxError
        When the friction coefficients leave the contact forces undetermined.
    """
    angle, v = _start_angle(theta0), parameter_values(**params)
    t_end = finite_float(t_end, "`t_end` (end of the run, s)")
    if t_end <= 0:
        raise ValueError(f"`t_end` must be positive; got {t_end!r}")
    t_eval = np.linspace(0.0, t_end, 201) if t_eval is None else np.asarray(t_eval, dtype=float)
    q0, qd0 = initial_state(angle, **params)
    half = v["L"] / 2
    signs = {FLOOR: 1, WALL: -1}
    if holds_at_rest(angle, **params):
        normal_floor, normal_wall = _normal_forces_at_rest(angle, v)
        return LadderReference(t_eval, np.tile(q0, (t_eval.size, 1)), np.zeros((t_eval.size, 3)),
                               np.full(t_eval.size, normal_floor), np.full(t_eval.size, normal_wall), None, None,
                               "holds")

    def wall_force(t, state):
        return _solve(v, state[:3], state[3:], (FLOOR, WALL), signs)[1][WALL]

    def floor_force(t, state):
        return _solve(v, state[:3], state[3:], (FLOOR,), signs)[1][FLOOR]

    def top_on_floor(t, state):
        return state[1] + half * math.sin(state[2])  # height of the top

    def bottom_slip(t, state):
        return state[3] - half * math.sin(state[2]) * state[5]

    def top_gap(t, state):
        return state[0] - half * math.cos(state[2])

    first = _phase(v, (0.0, t_end), q0, qd0, (FLOOR, WALL), signs, [_terminal(wall_force, -1.0)], t_eval)
    pieces, leave_time, leave, status = [first], None, None, "finished"
    if first.status == 1:
        leave_time = float(first.t_events[0][0])
        state = first.y_events[0][0]
        leave = float(state[2])
        events = [_terminal(top_on_floor, -1.0), _terminal(bottom_slip, -1.0), _terminal(top_gap, -1.0),
                  _terminal(floor_force, -1.0)]
        second = _phase(v, (leave_time, t_end), state[:3], state[3:], (FLOOR,), signs, events, t_eval)
        pieces.append(second)
        if second.status == 1:
            hit = next(i for i, times in enumerate(second.t_events) if times.size)
            status = ("top reaches the floor", "bottom stops sliding", "top returns to the wall",
                      "bottom leaves the floor")[hit]
    t = np.concatenate([p.t for p in pieces])
    states = np.concatenate([p.y.T for p in pieces]) if t.size else np.zeros((0, 6))
    both = np.array([leave_time is None or ti < leave_time for ti in t], dtype=bool)
    normal_floor = np.array([_solve(v, s[:3], s[3:], (FLOOR, WALL) if b else (FLOOR,), signs)[1][FLOOR]
                             for s, b in zip(states, both)])
    normal_wall = np.array([_solve(v, s[:3], s[3:], (FLOOR, WALL), signs)[1][WALL] if b else 0.0
                            for s, b in zip(states, both)])
    return LadderReference(t, states[:, :3], states[:, 3:], normal_floor, normal_wall, leave_time, leave, status)
