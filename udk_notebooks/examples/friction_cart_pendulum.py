r"""A block on a rough floor carrying a pendulum: Coulomb stick and slip in a multibody system.

::

        y
        |        x_1
        |<------------->|
        |          +---------+
        |          |  m_1    |----> s = x_1' (sliding velocity)
      ==+==========+====o====+================== rough floor y_1 = 0 (mu, mu_s)
        |                \
        |                 \ l (massless rod)
        |                  \
        |            theta  \
        |                    o  bob m_2 (x_2, y_2)       g
        |                                                |
                                                         v

A block of mass ``m_1`` slides on a rough horizontal floor (kinetic
coefficient ``mu``, static ``mu_s``) and carries, on a frictionless pin, a
pendulum: a point mass ``m_2`` on a massless rod of length ``l``. This is the
lecture slides' Coulomb dry friction ("Multibody systems", Chapter 9: the
tangential traction is at most ``mu_s N`` at stick and ``mu N`` against the
motion at slip, with power ``-mu N |s|``) in a system where the normal force
``N`` is not the weight: the swinging bob pulls the block up and down through
the rod, so ``N`` changes with the swing, and so does the friction limit.

Cartesian model (:func:`model`)
-------------------------------
Coordinates ``(x_1, y_1, x_2, y_2)``, the block and the bob, ``y`` up. The
mass matrix is ``diag(m_1, m_1, m_2, m_2)``, ``V = g (m_1 y_1 + m_2 y_2)``, and
two holonomic constraints: the floor ``y_1 = 0`` and the rod
``(x_2 - x_1)^2 + (y_2 - y_1)^2 - l^2 = 0``. The contact is
``CoulombFriction(x_1', mu, mu_s, normal=y_1)``: its normal force is the
reaction of the floor row alone. (``|F^L|`` of the whole system would add the
rod force, which is no normal force, see :class:`~udk_notebooks.model.CoulombFriction`.)
The floor is bilateral: the model keeps the block down even if the bob would
lift it; with the defaults ``N`` stays well above zero.

Minimal coordinates (:func:`minimal_motion`), the independent route
--------------------------------------------------------------------
With the block position ``X`` and the rod angle ``theta`` from the downward
vertical, the bob is at ``(X + l sin(theta), -l cos(theta))``. Lagrange's
equations, with the friction force ``F`` on the block as the generalized
force of ``X``, and Newton's law for the vertical momentum of the whole
system give three equations, linear in ``X'', theta'', N``::

    (m_1 + m_2) X'' + m_2 l cos(theta) theta'' - m_2 l sin(theta) theta'^2 = F
    cos(theta) X'' + l theta'' + g sin(theta) = 0
    N - (m_1 + m_2) g = m_2 y_2'' = m_2 l (sin(theta) theta'' + cos(theta) theta'^2)

Sliding (``X' != 0``): ``F = -mu N sgn(X')``, three equations for three
unknowns. Sticking: ``X'' = 0``, so ``theta'' = -(g / l) sin(theta)``, and the
first and third equations give the holding force ``F`` and ``N``; static
friction holds while ``|F| <= mu_s N``. Because ``F`` moves ``theta''``, which
moves ``N``, the sliding system has a unique solution only while its
determinant ``l (m_1 + m_2 sin^2 theta - mu sgn(X') m_2 sin(theta) cos(theta))``
stays positive: for ``mu < 2 sqrt(m_1 (m_1 + m_2)) / m_2`` it never vanishes
(a Painleve-type limit, far above the floor's ``mu`` here). The same bound
keeps the package's gain ``mu m_2 |sin(theta) cos(theta)| / (m_1 + m_2 sin^2 theta)``
below one, which :class:`~udk_notebooks.model.CoulombFriction` needs for
exactly one (bilateral) normal force; above it a simulation stops with a
ValueError that names the inconsistency.

:func:`event_driven` integrates these equations with ``solve_ivp`` and
events (``X' = 0`` while sliding, ``|F| = mu_s N`` while sticking), a second
code for the stick/slip times.

Power theorem
-------------
The floor and the rod are scleronomic and ideal, so ``dE/dt`` is the friction
power ``-mu N |x_1'|`` while sliding and zero while sticking, with
``E = T + V``.

References
----------
Lecture slides "Multibody systems", Chapter 9: Coulomb dry
friction, stick and slip; the power theorem (Proposition 9.32). F. E. Udwadia,
R. E. Kalaba, Y. Fan, "Is analytical dynamics a theoretical or an experimental
science?", Nonlinear Analysis 63 (2005) 692-698, Eqs. (8)-(11).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

import numpy as np

from ._parameters import Parameter, defaults, values

if TYPE_CHECKING:
    from ..model import Model

__all__ = [
    "contact_model",
    "PARAMETERS",
    "ReferenceRun",
    "event_driven",
    "floor_forces",
    "initial_state",
    "mechanism",
    "minimal_motion",
    "model",
    "to_cartesian",
    "to_minimal",
]

PARAMETERS = {
    "m1": Parameter("m1", 1.0, "mass of the block (kg)", (0.1, 5.0)),
    "m2": Parameter("m2", 0.8, "mass of the bob (kg)", (0.1, 5.0)),
    "l": Parameter("l", 0.8, "length of the rod (m)", (0.2, 2.0)),
    "g": Parameter("g", 9.81, "gravitational acceleration, along -y (m/s^2)", (0.0, 20.0)),
    "mu": Parameter("mu", 0.15, "kinetic friction coefficient of the floor", (0.0, 1.0)),
    "mu_s": Parameter("mu_s", 0.25, "static friction coefficient of the floor (at least mu)", (0.0, 1.0)),
}

_COORDINATES = ("x1", "y1", "x2", "y2")


@cache
def _symbols() -> dict[str, Any]:
    """The coordinates, the parameter symbols and ``FLOOR``, by name; imports sympy.

    ``FLOOR`` is the floor constraint ``y_1 = 0`` (the function ``y1`` itself): the row whose reaction
    is the contact's normal force.
    """
    from .._symbols import time_functions

    symbols = dict(zip(_COORDINATES, time_functions(" ".join(_COORDINATES))))
    symbols.update((name, row.symbol) for name, row in PARAMETERS.items())
    symbols["FLOOR"] = symbols["y1"]
    return symbols


def __getattr__(name: str) -> Any:
    """Serve the module's sympy objects (``FLOOR``, ``x1`` ... ``y2``, ``m1`` ... ``mu_s``) on first use (PEP 562).

    They were module constants; building them imports sympy, which the numeric helpers do not need.
    """
    if name == "FLOOR" or name in _COORDINATES or name in PARAMETERS:
        return _symbols()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    """The module's attributes with the sympy objects :func:`__getattr__` serves, for ``dir()`` and completion."""
    return sorted({*globals(), "FLOOR", *_COORDINATES, *PARAMETERS})


def _values(params) -> dict[str, float]:
    return values(PARAMETERS, params)


def model(**overrides: float) -> Model:
    """The block with the pendulum in Cartesian coordinates ``(x1, y1, x2, y2)``.

    Parameters
    ----------
    **overrides : float
        New defaults for ``m1, m2, l, g, mu, mu_s`` (see ``PARAMETERS``).

    Returns
    -------
    Model
        Constant mass matrix; holonomic rows floor then rod; one Coulomb
        contact whose normal force is the floor's reaction (``normal=y1``).
    """
    from ..model import CoulombFriction, Model

    s = _symbols()
    x1, y1, x2, y2, m1, m2, l, g, mu, mu_s = (s[name] for name in (*_COORDINATES, *PARAMETERS))
    floor = s["FLOOR"]
    return Model(
        [x1, y1, x2, y2],
        kinetic_energy=(m1 * (x1.diff() ** 2 + y1.diff() ** 2) + m2 * (x2.diff() ** 2 + y2.diff() ** 2)) / 2,
        potential_energy=g * (m1 * y1 + m2 * y2),
        holonomic=[floor, (x2 - x1) ** 2 + (y2 - y1) ** 2 - l**2],
        friction=[CoulombFriction(x1.diff(), mu, mu_s, normal=floor)],
        parameters=defaults(PARAMETERS, overrides),
        name="block on a rough floor carrying a pendulum",
    )


def contact_model(**overrides: float) -> Model:
    """The same system with the floor declared as a physical contact of the block's point ``(x1, y1)``.

    :class:`~udk_notebooks.contacts.Contact` with the floor ``Plane((0, 1))``: its gap row ``y1`` has unit
    normal, so its multiplier is the floor's normal force in newtons, found together with the friction
    force (which loads the rod, so ``A M^-1 C != 0`` here and ``|F^L|`` would not do). Unilateral: the
    block would leave the floor where ``N`` reached zero.

    Parameters
    ----------
    **overrides : float
        New defaults for ``m1, m2, l, g, mu, mu_s``.

    Returns
    -------
    Model
        Holonomic rows rod then floor gap; one rough contact named ``"floor"``.
    """
    from ..contacts import Contact, Plane
    from ..model import Model

    s = _symbols()
    x1, y1, x2, y2, m1, m2, l, g, mu, mu_s = (s[name] for name in (*_COORDINATES, *PARAMETERS))
    return Model(
        [x1, y1, x2, y2],
        kinetic_energy=(m1 * (x1.diff() ** 2 + y1.diff() ** 2) + m2 * (x2.diff() ** 2 + y2.diff() ** 2)) / 2,
        potential_energy=g * (m1 * y1 + m2 * y2),
        holonomic=[(x2 - x1) ** 2 + (y2 - y1) ** 2 - l**2],
        contacts=[Contact((x1, y1), Plane((0, 1)), mu=mu, mu_s=mu_s, name="floor")],
        parameters=defaults(PARAMETERS, overrides),
        name="block on a rough floor carrying a pendulum, a physical contact",
    )


def to_cartesian(q, qd, **params: float) -> tuple[np.ndarray, np.ndarray]:
    """Map minimal states ``(X, theta)`` to Cartesian states ``(x1, y1, x2, y2)``.

    Parameters
    ----------
    q, qd : array_like, shape (2,) or (N, 2)
    **params : float
        Parameter values by name (``l`` matters).

    Returns
    -------
    q, qd : ndarray, shape (4,) or (N, 4)
    """
    length = _values(params)["l"]
    q, qd = np.asarray(q, dtype=float), np.asarray(qd, dtype=float)
    X, th, Xd, thd = q[..., 0], q[..., 1], qd[..., 0], qd[..., 1]
    s, c = np.sin(th), np.cos(th)
    zero = np.zeros_like(X)
    positions = np.stack([X, zero, X + length * s, -length * c], axis=-1)
    rates = np.stack([Xd, zero, Xd + length * c * thd, length * s * thd], axis=-1)
    return positions, rates


def to_minimal(q, qd) -> tuple[np.ndarray, np.ndarray]:
    """Map Cartesian states ``(x1, y1, x2, y2)`` to ``(X, theta)``, ``theta = atan2(x2 - x1, y1 - y2)``.

    Parameters
    ----------
    q, qd : array_like, shape (4,) or (N, 4)

    Returns
    -------
    q, qd : ndarray, shape (2,) or (N, 2)
    """
    q, qd = np.asarray(q, dtype=float), np.asarray(qd, dtype=float)
    dx, dy = q[..., 2] - q[..., 0], q[..., 3] - q[..., 1]
    dvx, dvy = qd[..., 2] - qd[..., 0], qd[..., 3] - qd[..., 1]
    angle = np.arctan2(dx, -dy)
    rate = (dx * dvy - dy * dvx) / (dx**2 + dy**2)
    return np.stack([q[..., 0], angle], axis=-1), np.stack([qd[..., 0], rate], axis=-1)


def initial_state(position: float = 0.0, angle: float = 1.2, rate: float = 0.0, angle_rate: float = 0.0,
                  **params: float) -> tuple[np.ndarray, np.ndarray]:
    """A Cartesian state from the block position ``X`` and the rod angle ``theta`` (rad, from straight down).

    Parameters
    ----------
    position, angle, rate, angle_rate : float, optional
        ``X, theta, X', theta'``.
    **params : float
        Parameter values by name (``l`` matters).

    Returns
    -------
    q0, qd0 : ndarray, shape (4,)
        On both constraints to rounding.
    """
    return to_cartesian([position, angle], [rate, angle_rate], **params)


def minimal_motion(q, qd, mode: int, **params: float) -> tuple[np.ndarray, float, float]:
    """Accelerations, normal force and friction force from the minimal-coordinate equations.

    Parameters
    ----------
    q, qd : array_like, shape (2,)
        ``(X, theta)`` and ``(X', theta')``.
    mode : {1, -1, 0}
        ``sgn(X')`` while sliding, 0 while sticking (then ``X'' = 0``).
    **params : float
        Parameter values by name.

    Returns
    -------
    qdd : ndarray, shape (2,)
        ``(X'', theta'')``.
    normal : float
        The floor's normal force ``N`` (N), positive when it pushes up.
    friction : float
        The floor's tangential force ``F`` on the block (N): ``-mu N mode``
        while sliding, the holding force while sticking.
    """
    if mode not in (1, -1, 0):
        raise ValueError(f"`mode` must be +1, -1 (sliding) or 0 (sticking); got {mode!r}")
    v = _values(params)
    bob, block, length, grav = v["m2"], v["m1"], v["l"], v["g"]
    th, thd = float(q[1]), float(qd[1])
    s, c = math.sin(th), math.cos(th)
    if mode == 0:
        angle_acc = -grav / length * s
        normal = (block + bob) * grav + bob * length * (s * angle_acc + c * thd**2)
        friction = bob * length * (c * angle_acc - s * thd**2)
        return np.array([0.0, angle_acc]), normal, friction
    # unknowns (X'', theta'', N); rows: horizontal momentum with F = -mu N mode, the bob's angle equation,
    # vertical momentum of both bodies
    system = np.array([[block + bob, bob * length * c, v["mu"] * mode],
                       [c, length, 0.0],
                       [0.0, -bob * length * s, 1.0]])
    rhs = np.array([bob * length * s * thd**2, -grav * s, (block + bob) * grav + bob * length * c * thd**2])
    Xdd, angle_acc, normal = np.linalg.solve(system, rhs)
    return np.array([Xdd, angle_acc]), float(normal), float(-v["mu"] * normal * mode)


def floor_forces(ideal, nonideal) -> tuple[np.ndarray, np.ndarray]:
    """The floor's normal force ``N`` and friction force ``F`` from the Cartesian model's constraint forces.

    The rod's pulls on block and bob are equal and opposite, so the whole
    constraint force ``F^L + F^C`` of the two bodies adds up to what the floor
    exerts on the block: ``F`` along ``x`` and ``N`` along ``y`` (momentum of
    the whole system, ``N - (m_1 + m_2) g = m_1 y_1'' + m_2 y_2''``).

    Parameters
    ----------
    ideal, nonideal : array_like, shape (4,) or (N, 4)
        ``F^L`` and ``F^C`` in the order ``(x1, y1, x2, y2)`` (``Motion`` or ``Trajectory`` fields).

    Returns
    -------
    normal : ndarray, shape () or (N,)
        ``N`` (N), positive when the floor pushes up.
    friction : ndarray, shape () or (N,)
        ``F`` (N), the floor's tangential force on the block: ``-mu N sgn(x_1')``
        while sliding, the holding force while sticking.
    """
    total = np.asarray(ideal, dtype=float) + np.asarray(nonideal, dtype=float)
    if total.shape[-1] != 4:
        raise ValueError(f"`ideal` and `nonideal` must have 4 columns (x1, y1, x2, y2); got shape {total.shape}")
    return total[..., 1] + total[..., 3], total[..., 0] + total[..., 2]


@dataclass(frozen=True)
class ReferenceRun:
    """An event-driven run in minimal coordinates (:func:`event_driven`).

    Attributes
    ----------
    t : ndarray, shape (N,)
    q, qd : ndarray, shape (N, 2)
        ``(X, theta)`` and their rates.
    modes : ndarray of int, shape (N,)
        +1/-1 sliding, 0 sticking.
    switch_times : ndarray, shape (k,)
        Times at which the mode changed.
    """

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    modes: np.ndarray
    switch_times: np.ndarray


def event_driven(t_span, q0, qd0, *, t_eval=None, rtol: float = 1e-11, atol: float = 1e-12,
                 max_switches: int = 100, **params: float) -> ReferenceRun:
    """Integrate the minimal-coordinate equations with ``solve_ivp``, switching stick/slip at events.

    A second code for the stick/slip times of the Cartesian model: sliding
    ends where ``X' = 0``; then the block sticks if ``|F| <= mu_s N``, else
    slides against the holding force ``F``; sticking ends where
    ``|F| = mu_s N``.

    Parameters
    ----------
    t_span : (float, float)
    q0, qd0 : array_like, shape (2,)
        ``(X, theta)`` and their rates.
    t_eval : array_like, optional
        Output times (switch times are added).
    rtol, atol : float
        Tolerances of ``solve_ivp`` (DOP853).
    max_switches : int
        Bound on the number of switches.
    **params : float
        Parameter values by name.

    Returns
    -------
    ReferenceRun
    """
    from scipy.integrate import solve_ivp  # here, not at the top: scipy.integrate costs a cold start 0.15 s

    v = _values(params)
    t0, t1 = map(float, t_span)
    y = np.concatenate([np.asarray(q0, float), np.asarray(qd0, float)])

    def holding(yy):
        _, normal, friction = minimal_motion(yy[:2], yy[2:], 0, **params)
        return normal, friction

    def start_mode(yy):  # at rest: stick if static friction holds, else slide against the holding force
        normal, friction = holding(yy)
        return 0 if abs(friction) <= v["mu_s"] * abs(normal) else -int(np.sign(friction))

    mode = int(np.sign(y[2])) if y[2] != 0 else start_mode(y)
    times, qs, qds, modes, switches = [], [], [], [], []
    t = t0
    while True:
        def rhs(tt, yy, mode=mode):
            yy = yy.copy()
            if mode == 0:
                yy[2] = 0.0
            qdd, _, _ = minimal_motion(yy[:2], yy[2:], mode, **params)
            return np.concatenate([yy[2:], qdd])

        def event(tt, yy, mode=mode):
            if mode:
                return mode * yy[2]
            normal, friction = holding(yy)
            return v["mu_s"] * abs(normal) - abs(friction)

        event.terminal, event.direction = True, -1
        sub = None if t_eval is None else np.asarray(t_eval)[(np.asarray(t_eval) >= t) & (np.asarray(t_eval) <= t1)]
        sol = solve_ivp(rhs, (t, t1), y, method="DOP853", rtol=rtol, atol=atol, t_eval=sub, events=event)
        times.extend(sol.t), qs.extend(sol.y[:2].T), qds.extend(sol.y[2:].T)
        modes += [mode] * sol.t.size
        if sol.status != 1:
            break
        t, y = float(sol.t_events[0][0]), sol.y_events[0][0].copy()
        if mode:  # stopped: stick or turn round
            y[2] = 0.0
            new = start_mode(y)
        else:  # static friction gave way: slide against the holding force
            new = -int(np.sign(holding(y)[1]))
        switches.append(t)
        if len(switches) > max_switches:
            raise RuntimeError(f"more than `max_switches` = {max_switches} switches")
        mode = new
        times.append(t), qs.append(y[:2]), qds.append(y[2:]), modes.append(mode)
    order = np.argsort(times, kind="stable")
    return ReferenceRun(np.asarray(times)[order], np.asarray(qs)[order], np.asarray(qds)[order],
                        np.asarray(modes)[order], np.asarray(switches))


def mechanism(**params: float):
    """How it looks: the floor, the block, the rod and the bob; forces on the block and on the bob.

    Parameters
    ----------
    **params : float
        Parameter values by name (``l``).

    Returns
    -------
    udk_notebooks.drawing.Mechanism
    """
    from ..drawing import Block, ForceSite, Guide, Joint, Mechanism, Rod

    length = _values(params)["l"]
    height = 0.25 * max(length, 0.4)
    return Mechanism(
        joints=[Joint("block", lambda q, t: q[:2], style="pin", size=6),
                Joint("bob", lambda q, t: q[2:4], size=10)],
        parts=[Block("block", 2.0 * height, height), Rod("block", "bob", width=1.5)],
        guides=[Guide(lambda t: np.array([[-1e3, -0.5 * height], [1e3, -0.5 * height]]), style="ground",
                      label="rough floor")],
        forces=[ForceSite("block", (0, 1)), ForceSite("bob", (2, 3))],
        trace="bob",
        name="block on a rough floor carrying a pendulum",
    )
