r"""A block on a rough incline: Coulomb friction as a nonideal constraint (encyclopedia article).

::

      y
      |                    / y = x tan(alpha)
      |             N \   /
      |                [m]      s > 0: sliding up the slope;
      |                /|       friction -mu N sgn(s) acts along it
      |               / | m g
      |              /  v
      |            /
      |          /
      |        /
      |      /
      |    /  alpha
      |  /
      |/_____________________ x
      O

A block of mass ``m`` moves in the vertical plane on the line
``y = x tan(alpha)`` (so the holonomic constraint is ``y - x tan(alpha) = 0``
and its constraint row is the encyclopedia's ``A = (-tan alpha, 1)``). Gravity
``-m g`` acts along ``y``. The contact is rough: while the block slides with
velocity ``s = cos(alpha) x' + sin(alpha) y'`` along the slope, the nonideal
vector is

    C = -mu N sgn(s) (cos alpha, sin alpha),   N = |F^L|,

with ``N`` the size of the ideal (normal) force, which does not depend on
``C`` (Udwadia, Kalaba & Fan 2005, Eq. 10). This is the encyclopedia's
``C = -mu m g cos(alpha) sgn(y') (cos alpha, sin alpha)``: for
``0 < alpha < pi/2`` the signs of ``y'`` and ``s`` agree.

The three force terms
---------------------
With ``Q = (0, -m g)`` and the unit normal ``n = (-sin alpha, cos alpha)`` of the
line, the ideal force is the part of ``-Q`` along ``n``, and the nonideal force
is the part of ``C`` along the line (``C`` already lies along it)::

    F^L = m g cos(alpha) (-sin alpha, cos alpha)            (normal force, N = m g cos alpha)
    F^C = -mu m g cos(alpha) sgn(s) (cos alpha, sin alpha)    (kinetic friction)

and their sum with gravity gives the encyclopedia's acceleration while sliding::

    q'' = -g (sin alpha + mu cos alpha sgn(s)) (cos alpha, sin alpha).

(The article prints ``F^C`` as ``-mu m g cos(alpha) sgn(y') (cos^2 alpha,
sin alpha cos alpha)``, with one factor ``cos alpha`` too many: ``C`` already
lies along the line, so the projector ``I - A^+ A`` leaves it unchanged. Only
``F^C = C`` adds up to the article's own acceleration above. It also writes
the gravity vector as ``-m g (0, y)`` where ``-m g (0, 1)`` is meant.)

While the block sticks (``s = 0`` held by static friction) the package
reports the holding force as nonideal, ``F^C = m g sin(alpha) (cos alpha,
sin alpha)``, which cancels the pull of gravity along the slope; it can do
so while ``m g sin(alpha) <= mu_s m g cos(alpha)``, i.e. ``tan(alpha) <= mu_s``.

Exact motion of a block sent up the slope
-----------------------------------------
Start at the origin with speed ``v0 > 0`` up the slope. Along the unit
tangent ``e = (cos alpha, sin alpha)`` the distance ``d`` obeys:

1. going up (``s > 0``): ``d'' = -g (sin alpha + mu cos alpha)``, so the block
   stops at ``t_stop = v0 / (g (sin alpha + mu cos alpha))`` after
   ``d_stop = v0 t_stop / 2``;
2. then it stays at ``d_stop`` if ``mu_s >= tan(alpha)``;
3. otherwise it slides back (``s < 0``) with
   ``d'' = -g (sin alpha - mu cos alpha)``, which needs ``mu < tan(alpha)``
   (for ``mu_s < tan(alpha) <= mu`` static friction cannot hold the block but
   kinetic friction stops any motion at once: Coulomb's law has no solution,
   and :func:`exact_state` refuses such parameters).

``q = d e`` and ``q' = d' e``. The switches happen at the event ``s = 0`` in
:func:`udk_notebooks.simulate`, so a simulation records exactly one mode change
(+1 to 0, or +1 to -1) and no chattering.

References
----------
Encyclopedia article "Udwadia-Kalaba equation", section "Inclined plane with
friction". F. E. Udwadia, R. E. Kalaba, Y. Fan, "Is analytical
dynamics a theoretical or an experimental science?", Nonlinear Analysis 63
(2005) 692-698, Eqs. (8)-(11).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from .._lazy import LazyModule
from ..core import Motion
from ._parameters import Parameter, symbols, values

if TYPE_CHECKING:
    from ..model import Model

sm = LazyModule("sympy")  # imported by the model builders only: the numeric helpers run without it

__all__ = [
    "PARAMETERS",
    "contact_model",
    "exact_motion",
    "exact_state",
    "initial_state",
    "model",
    "parameter_values",
    "stop_time",
    "mechanism",
]

PARAMETERS = {
    "m": Parameter("m", 1.0, "mass of the block", (0.1, 5.0)),
    "g": Parameter("g", 9.81, "gravitational acceleration, along -y", (0.0, 20.0)),
    "alpha": Parameter("alpha", float(np.pi / 6), "angle of the incline above the horizontal (rad)", (0.05, 1.4)),
    "mu": Parameter("mu", 0.3, "kinetic (sliding) friction coefficient", (0.0, 1.5)),
    "mu_s": Parameter(
        "mu_s", 0.3, "static friction coefficient; follows mu unless given", (0.0, 1.5)
    ),
}


def parameter_values(**overrides: float) -> dict[str, float]:
    """All parameter values by name, with ``mu_s`` following ``mu`` unless it is given.

    Parameters
    ----------
    **overrides : float
        New values for ``m``, ``g``, ``alpha``, ``mu``, ``mu_s``.

    Returns
    -------
    dict of str to float
    """
    given = values(PARAMETERS, overrides)
    if "mu_s" not in overrides:
        given["mu_s"] = given["mu"]
    return given


def _symbols():
    """The coordinates ``(x, y)`` and the parameter symbols ``(m, g, alpha, mu, mu_s)``; imports sympy."""
    from .._symbols import time_functions

    return time_functions("x y"), symbols(PARAMETERS)


def model(**overrides: float) -> Model:
    """The block on the rough incline ``y = x tan(alpha)`` as a :class:`Model`.

    Parameters
    ----------
    **overrides : float
        New defaults for ``m``, ``g``, ``alpha``, ``mu``, ``mu_s`` (see
        ``PARAMETERS``). ``mu_s`` takes the value of ``mu`` unless given. When
        simulating with ``params={"mu": ...}`` give ``mu_s`` as well: the
        compiled model treats them as two independent numbers.

    Returns
    -------
    Model
        Coordinates ``(x, y)``, one holonomic constraint and one Coulomb contact.
    """
    from ..model import CoulombFriction, Model

    (x, y), (m, g, alpha, mu, mu_s) = _symbols()
    given = parameter_values(**overrides)
    return Model(
        [x, y],
        kinetic_energy=m * (x.diff() ** 2 + y.diff() ** 2) / 2,
        potential_energy=m * g * y,
        holonomic=[y - x * sm.tan(alpha)],
        friction=[
            CoulombFriction(
                sliding_velocity=sm.cos(alpha) * x.diff() + sm.sin(alpha) * y.diff(),
                coefficient=mu,
                static_coefficient=mu_s,
            )
        ],
        parameters={PARAMETERS[name].symbol: value for name, value in given.items()},
        name="block on an incline with Coulomb friction",
    )


def contact_model(**overrides: float) -> Model:
    """The same block declared as a physical contact: the point ``(x, y)`` on the plane with unit normal
    ``n = (-sin alpha, cos alpha)`` (:class:`~udk_notebooks.contacts.Contact`).

    Its gap row ``-x sin(alpha) + y cos(alpha)`` is the encyclopedia's ``y - x tan(alpha)`` times
    ``cos(alpha)``, so its multiplier is the normal force in newtons; the slip velocity along the
    tangent ``(cos alpha, sin alpha)`` is the ``s`` of :func:`model`. Here ``A M^-1 C = 0`` (a particle
    pressed on one line), so both give the same motion; :func:`model` keeps the batched sweep (the
    stick/slip map of lesson 3), which runs contact models one by one.

    Parameters
    ----------
    **overrides : float
        As for :func:`model`.

    Returns
    -------
    Model
        Coordinates ``(x, y)`` and one unilateral rough contact named ``"incline"``.
    """
    from ..contacts import Contact, Plane
    from ..model import Model

    (x, y), (m, g, alpha, mu, mu_s) = _symbols()
    given = parameter_values(**overrides)
    surface = Plane((-sm.sin(alpha), sm.cos(alpha)))
    return Model(
        [x, y],
        kinetic_energy=m * (x.diff() ** 2 + y.diff() ** 2) / 2,
        potential_energy=m * g * y,
        contacts=[Contact((x, y), surface, mu=mu, mu_s=mu_s, name="incline")],
        parameters={PARAMETERS[name].symbol: value for name, value in given.items()},
        name="block on an incline, a physical contact",
    )


def _tangent(slope_angle: float) -> np.ndarray:
    return np.array([np.cos(slope_angle), np.sin(slope_angle)])


def initial_state(speed: float = 5.0, **params: float) -> tuple[np.ndarray, np.ndarray]:
    """Start at the origin, moving along the slope (up for ``speed > 0``).

    Parameters
    ----------
    speed : float, optional
        Initial sliding velocity ``s`` (m/s); the velocity is ``speed`` times
        the unit tangent ``(cos alpha, sin alpha)``.
    **params : float
        Parameter values by name (only ``alpha`` matters).

    Returns
    -------
    q0, qd0 : ndarray, shape (2,)
    """
    given = parameter_values(**params)
    return np.zeros(2), float(speed) * _tangent(given["alpha"])


def stop_time(speed: float = 5.0, **params: float) -> float:
    """Time at which a block sent up the slope with ``speed`` comes to rest.

    ``t_stop = v0 / (g (sin alpha + mu cos alpha))``, or ``inf`` when
    ``g = 0`` and the block never slows down.
    """
    return _stop_time(float(speed), _deceleration(parameter_values(**params)))


def _deceleration(v: dict) -> float:
    """``g (sin alpha + mu cos alpha)``: the deceleration while sliding up the slope."""
    return v["g"] * (np.sin(v["alpha"]) + v["mu"] * np.cos(v["alpha"]))


def _stop_time(speed: float, rising: float) -> float:
    """``speed / rising``; infinite when nothing slows the block (``g = 0``)."""
    if rising > 0:
        return speed / rising
    return 0.0 if speed == 0 else math.inf


def exact_motion(direction: int, **params: float) -> Motion:
    """The three force terms and the acceleration in closed form.

    Parameters
    ----------
    direction : {1, -1, 0}
        ``sgn(s)``: +1 sliding up the slope, -1 sliding down, 0 held at rest by
        static friction.
    **params : float
        Parameter values by name.

    Returns
    -------
    Motion
        ``impressed = (0, -m g)``; ``ideal = m g cos(alpha) (-sin alpha, cos alpha)``;
        ``nonideal = -mu m g cos(alpha) sgn(s) (cos alpha, sin alpha)`` while
        sliding, ``m g sin(alpha) (cos alpha, sin alpha)`` while sticking;
        ``qdd = (impressed + ideal + nonideal) / m``.
    """
    if direction not in (1, -1, 0):
        raise ValueError(f"`direction` must be +1, -1 or 0 (sticking); got {direction!r}")
    v = parameter_values(**params)
    mass, grav, angle = v["m"], v["g"], v["alpha"]
    tangent = _tangent(angle)
    impressed = np.array([0.0, -mass * grav])
    ideal = mass * grav * np.cos(angle) * np.array([-np.sin(angle), np.cos(angle)])
    if direction == 0:
        nonideal = mass * grav * np.sin(angle) * tangent
    else:
        nonideal = -v["mu"] * mass * grav * np.cos(angle) * direction * tangent
    return Motion(qdd=(impressed + ideal + nonideal) / mass, impressed=impressed, ideal=ideal, nonideal=nonideal)


def exact_state(t, speed: float = 5.0, **params: float) -> tuple[np.ndarray, np.ndarray]:
    """Positions and velocities of a block sent up the slope from the origin.

    Piecewise: uniform deceleration ``g (sin alpha + mu cos alpha)`` until
    :func:`stop_time`, then rest if ``mu_s >= tan(alpha)``, else a slide back
    with acceleration ``g (sin alpha - mu cos alpha)`` down the slope.

    Parameters
    ----------
    t : array_like, shape (N,)
        Times, measured from the start (``t >= 0``).
    speed : float, optional
        Initial speed ``v0 >= 0`` up the slope.
    **params : float
        Parameter values by name.

    Returns
    -------
    q, qd : ndarray, shape (N, 2)

    Raises
    ------
    ValueError
        For ``speed < 0``, or when ``mu_s < tan(alpha) <= mu`` with ``g > 0``
        (no Coulomb motion exists after the stop, see the module docstring).
    """
    if speed < 0:
        raise ValueError(f"`speed` must be >= 0 (sent up the slope); got {speed!r}")
    v = parameter_values(**params)
    grav, angle, kinetic, static = v["g"], v["alpha"], v["mu"], v["mu_s"]
    holds = static >= np.tan(angle)
    if grav > 0 and not holds and kinetic >= np.tan(angle):
        raise ValueError(
            f"with `mu_s` = {static:g} < tan(alpha) = {np.tan(angle):g} <= `mu` = {kinetic:g} static "
            "friction cannot hold the block and kinetic friction cannot let it slide; choose mu_s >= mu"
        )
    t = np.asarray(t, dtype=float)
    rising = _deceleration(v)
    t_stop = _stop_time(float(speed), rising)
    d_stop = speed * t_stop / 2 if math.isfinite(t_stop) else math.inf  # only used after a stop
    tau = np.clip(t, 0.0, t_stop)
    distance = speed * tau - rising * tau**2 / 2
    rate = speed - rising * tau
    after = np.clip(t - t_stop, 0.0, None)
    if not holds:
        falling = grav * (np.sin(angle) - kinetic * np.cos(angle))
        distance = np.where(t > t_stop, d_stop - falling * after**2 / 2, distance)
        rate = np.where(t > t_stop, -falling * after, rate)
    tangent = _tangent(angle)
    return distance[..., None] * tangent, rate[..., None] * tangent


def mechanism(**params: float):
    """How the block on the rough incline looks: the slope, the block, the forces at its contact.

    Parameters
    ----------
    **params : float
        Parameter values by name (only ``alpha`` matters).

    Returns
    -------
    udk_notebooks.drawing.Mechanism
        Force site: the contact point ``(x, y)``; the block is drawn above it.
    """
    from ..drawing import Block, ForceSite, Guide, Joint, Mechanism

    angle = parameter_values(**params)["alpha"]
    tangent, normal = _tangent(angle), np.array([-np.sin(angle), np.cos(angle)])
    size = 0.3  # metres: the block's length along the slope
    reach = 1e3
    return Mechanism(
        joints=[Joint("contact", lambda q, t: q[:2], style="hidden"),
                Joint("block", lambda q, t: q[:2] + 0.3 * size * normal, style="hidden")],
        parts=[Block("block", size, 0.6 * size, angle)],
        guides=[Guide(lambda t: np.array([-reach * tangent, reach * tangent]), style="ground", label="incline")],
        forces=[ForceSite("contact", (0, 1))],
        trace="contact",
        name="block on a rough incline",
    )
