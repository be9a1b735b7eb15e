r"""A pendulum hanging from a carriage that a spring ties to a wall (lecture slides, Exercise 4:14).

::

    |            x_c
    |<---------------------->|
    |/\/\/\/\/\/\/\/\/\/\/\/\[ carriage m_c ]---> F(t)
    |   spring k             ======o=============== frictionless line
    |                               \
    |                                \ l (string)
    |                                 \
    |                              phi \
    |                                   o  ball m (x, y)     g
    |                                                        |
                                                             v

A carriage of mass ``m_c`` slides without friction along a horizontal line. A
linear spring of stiffness ``k`` ties it to the wall (``x_c = 0`` is the
unstretched spring) and a given force ``F(t)`` pushes it along the line. A
small ball of mass ``m`` hangs from the carriage on an inextensible massless
string of length ``l``. Here ``F(t) = F0 sin(omega t)``, with ``F0 = 0`` by
default. The exercise gives no numbers; the defaults in ``PARAMETERS`` are
chosen so that both the carriage and the ball visibly take part.

Cartesian model (:func:`model`)
-------------------------------
Coordinates ``(x_c, x, y)``: the carriage position and the ball position,
with ``y`` up and the line at ``y = 0``. The mass matrix is the constant
``diag(m_c, m, m)``, the potential ``V = k x_c^2 / 2 + m g y``, the force
``F(t)`` acts on ``x_c`` only, and the string is the holonomic constraint::

    (x - x_c)^2 + y^2 - l^2 = 0.

(The string is treated as a rigid massless rod: the constraint is an
equality, so the model also holds a ball that would go slack.)

Minimal model (:func:`minimal_model`)
-------------------------------------
Coordinates ``(x_c, phi)`` of the slides' solution, ``phi`` the angle of the
string from the downward vertical, so the ball is at
``(x_c + l sin(phi), -l cos(phi))``. The slides derive::

    M = [[m + m_c,          m l cos(phi)],
         [m l cos(phi),     m l^2       ]],
    V = k x_c^2 / 2 - m g l cos(phi),    generalized force (F(t), 0),

and the equations of motion
``(m + m_c) x_c'' + m l cos(phi) phi'' - m l phi'^2 sin(phi) + k x_c = F``,
``m l cos(phi) x_c'' + m l^2 phi'' + m g l sin(phi) = 0``.

Power theorem
-------------
The mechanical energy ``E = T + V`` changes only by the power of the given
force, ``dE/dt = F(t) x_c'``: the string force does no work (the constraint is
ideal and scleronomic) and ``L`` does not depend on time explicitly. In a
:class:`~udk_notebooks.simulation.Trajectory` this power is
``power["nonconservative"]``; ``energy_balance()`` subtracts its work.

With ``F0 = 0`` and small swings the linearized system has two normal modes,
the roots ``w^2`` of
``m_c l w^4 - ((m + m_c) g + k l) w^2 + k g = 0``, a check the tests use.

References
----------
Lecture slides "Multibody systems", Chapter 9, Exercise 4:14 and its
solution (kinetic energy, mass matrix, equations of motion).
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
    "initial_state",
    "minimal_model",
    "model",
    "normal_mode_frequencies",
    "to_cartesian",
    "to_minimal",
    "mechanism",
]

PARAMETERS = {
    "m_c": Parameter("m_c", 2.0, "mass of the carriage", (0.1, 10.0)),
    "m": Parameter("m", 1.0, "mass of the ball", (0.1, 10.0)),
    "l": Parameter("l", 1.0, "length of the string", (0.1, 3.0)),
    "k": Parameter("k", 10.0, "stiffness of the spring between wall and carriage", (0.0, 100.0)),
    "g": Parameter("g", 9.81, "gravitational acceleration, along -y", (0.0, 20.0)),
    "F0": Parameter("F0", 0.0, "amplitude of the force F(t) = F0 sin(omega t) on the carriage", (-20.0, 20.0)),
    "omega": Parameter("omega", 2.0, "angular frequency of the force", (0.0, 10.0)),
}


def _symbols():
    """The coordinates ``(x_c, x, y, phi)`` and the parameter symbols (in ``PARAMETERS`` order); imports sympy."""
    from .._symbols import time_functions

    return time_functions("x_c x y phi"), symbols(PARAMETERS)


def _force():
    """``F(t) = F0 sin(omega t)``, the slides' ``F = F(t)`` made concrete."""
    from ..model import TIME

    *_, F0, omega = _symbols()[1]
    return F0 * sm.sin(omega * TIME)


def model(**overrides: float) -> Model:
    """The carriage pendulum in Cartesian coordinates ``(x_c, x, y)`` with the string as a constraint.

    Parameters
    ----------
    **overrides : float
        New defaults for ``m_c, m, l, k, g, F0, omega`` (see ``PARAMETERS``).

    Returns
    -------
    Model
        Constant mass matrix ``diag(m_c, m, m)``; one holonomic constraint.
    """
    from ..model import Model

    (xc, x, y, _), (m_c, m, l, k, g, _, _) = _symbols()
    return Model(
        [xc, x, y],
        kinetic_energy=(m_c * xc.diff() ** 2 + m * (x.diff() ** 2 + y.diff() ** 2)) / 2,
        potential_energy=k * xc**2 / 2 + m * g * y,
        forces=[_force(), 0, 0],
        holonomic=[(x - xc) ** 2 + y**2 - l**2],
        parameters=defaults(PARAMETERS, overrides),
        name="pendulum on a carriage with a spring, Cartesian coordinates",
    )


def minimal_model(**overrides: float) -> Model:
    """The carriage pendulum in the slides' coordinates ``(x_c, phi)``, unconstrained.

    Parameters
    ----------
    **overrides : float
        New defaults for ``m_c, m, l, k, g, F0, omega`` (see ``PARAMETERS``).

    Returns
    -------
    Model
        The mass matrix of the slides' solution (module docstring).
    """
    from ..model import Model

    (xc, _, _, phi), (m_c, m, l, k, g, _, _) = _symbols()
    coupling = m * l * sm.cos(phi)
    return Model(
        [xc, phi],
        mass_matrix=sm.Matrix([[m + m_c, coupling], [coupling, m * l**2]]),
        potential_energy=k * xc**2 / 2 - m * g * l * sm.cos(phi),
        forces=[_force(), 0],
        parameters=defaults(PARAMETERS, overrides),
        name="pendulum on a carriage with a spring, coordinates of the slides",
    )


def to_cartesian(q, qd, **params: float) -> tuple[np.ndarray, np.ndarray]:
    """Map minimal states ``(x_c, phi)`` to Cartesian states ``(x_c, x, y)``.

    Parameters
    ----------
    q, qd : array_like, shape (2,) or (N, 2)
        ``(x_c, phi)`` and ``(x_c', phi')``.
    **params : float
        Parameter values by name (the length ``l`` matters).

    Returns
    -------
    q, qd : ndarray, shape (3,) or (N, 3)
        Consistent with the string constraint and its derivative to rounding.
    """
    length = values(PARAMETERS, params)["l"]
    q, qd = np.asarray(q, dtype=float), np.asarray(qd, dtype=float)
    carriage, angle, carriage_rate, angle_rate = q[..., 0], q[..., 1], qd[..., 0], qd[..., 1]
    s, c = np.sin(angle), np.cos(angle)
    positions = np.stack([carriage, carriage + length * s, -length * c], axis=-1)
    rates = np.stack([carriage_rate, carriage_rate + length * c * angle_rate, length * s * angle_rate], axis=-1)
    return positions, rates


def to_minimal(q, qd) -> tuple[np.ndarray, np.ndarray]:
    """Map Cartesian states ``(x_c, x, y)`` to minimal states ``(x_c, phi)``.

    ``phi = atan2(x - x_c, -y)``, in ``(-pi, pi]``; a ball that swings over
    the top wraps around, so compare angles modulo ``2 pi`` there.

    Parameters
    ----------
    q, qd : array_like, shape (3,) or (N, 3)

    Returns
    -------
    q, qd : ndarray, shape (2,) or (N, 2)
        ``phi'`` is the angular velocity of the string,
        ``((x - x_c) y' - y (x' - x_c')) / ((x - x_c)^2 + y^2)``.
    """
    q, qd = np.asarray(q, dtype=float), np.asarray(qd, dtype=float)
    dx, dy = q[..., 1] - q[..., 0], q[..., 2]
    dvx, dvy = qd[..., 1] - qd[..., 0], qd[..., 2]
    angle = np.arctan2(dx, -dy)
    angle_rate = (dx * dvy - dy * dvx) / (dx**2 + dy**2)
    return np.stack([q[..., 0], angle], axis=-1), np.stack([qd[..., 0], angle_rate], axis=-1)


def initial_state(
    carriage: float = 0.2,
    angle: float = 0.5,
    carriage_rate: float = 0.0,
    angle_rate: float = 0.0,
    **params: float,
) -> tuple[np.ndarray, np.ndarray]:
    """A Cartesian state ``(x_c, x, y)`` built from the carriage position and the string angle.

    Parameters
    ----------
    carriage, angle : float, optional
        ``x_c`` (spring stretch) and ``phi`` (radians from the downward vertical).
    carriage_rate, angle_rate : float, optional
        ``x_c'`` and ``phi'``.
    **params : float
        Parameter values by name (the length ``l`` matters).

    Returns
    -------
    q0, qd0 : ndarray, shape (3,)
        For :func:`model`, on the constraint to rounding; the same state for
        :func:`minimal_model` is ``(carriage, angle)``, ``(carriage_rate, angle_rate)``.
    """
    return to_cartesian([carriage, angle], [carriage_rate, angle_rate], **params)


def normal_mode_frequencies(**params: float) -> tuple[float, float]:
    """Angular frequencies of the two small-swing normal modes (``F0`` ignored).

    Linearizing the equations of the module docstring about ``x_c = phi = 0``
    and looking for motions ``e^{i w t}`` gives
    ``m_c l w^4 - ((m + m_c) g + k l) w^2 + k g = 0``.

    Parameters
    ----------
    **params : float
        Parameter values by name.

    Returns
    -------
    tuple of float
        The two frequencies, lower first.
    """
    v = values(PARAMETERS, params)
    a = v["m_c"] * v["l"]
    b = (v["m"] + v["m_c"]) * v["g"] + v["k"] * v["l"]
    c = v["k"] * v["g"]
    root = math.sqrt(b * b - 4 * a * c)
    low, high = 2 * c / (b + root), (b + root) / (2 * a)  # the smaller root in the cancellation-free form
    return math.sqrt(low), math.sqrt(high)


def mechanism(coordinates: str = "cartesian", **params: float):
    """How the carriage pendulum looks: wall, spring, carriage on its rail, string and ball.

    Parameters
    ----------
    coordinates : {"cartesian", "minimal"}
        The model drawn: :func:`model` ``(x_c, x, y)``, whose force entries are forces on the
        carriage (along x) and on the ball (the string's pull is the ideal force there), or
        :func:`minimal_model` ``(x_c, phi)``, drawn without force arrows.
    **params : float
        Parameter values by name (``l``).

    Returns
    -------
    udk_notebooks.drawing.Mechanism
    """
    from ..drawing import Block, ForceSite, Guide, Joint, Mechanism, Rod, Spring

    if coordinates not in ("cartesian", "minimal"):
        raise ValueError(f"`coordinates` must be 'cartesian' or 'minimal'; got {coordinates!r}")
    length = values(PARAMETERS, params)["l"]
    wall = -1.2  # metres: where the spring is fixed (unstretched at x_c = 0)
    height = 0.2 * max(length, 0.5)

    def ball(q, t):
        if coordinates == "cartesian":
            return q[1:3]
        return np.array([q[0] + length * np.sin(q[1]), -length * np.cos(q[1])])

    return Mechanism(
        joints=[Joint("wall", lambda q, t: (wall, 0.0), style="hidden"),
                Joint("carriage", lambda q, t: (q[0], 0.0), style="pin", size=6),
                Joint("ball", ball, size=10)],
        parts=[Spring("wall", "carriage", coils=8, width=0.5 * height),
               Block("carriage", 2.0 * height, height), Rod("carriage", "ball", width=1.5)],
        guides=[Guide(lambda t: np.array([[wall, -0.5 * height], [1e3, -0.5 * height]]), style="ground", label="rail"),
                Guide(lambda t: np.array([[wall, -0.5 * height], [wall, 1.5 * height]]), style="ground", label="wall")],
        forces=[ForceSite("carriage", (0, None)), ForceSite("ball", (1, 2))] if coordinates == "cartesian" else [],
        trace="ball",
        name="pendulum on a sprung carriage",
    )
