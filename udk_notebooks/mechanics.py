"""Models from :mod:`sympy.physics.mechanics`: bodies, loads and ``System``.

Courses that teach with sympy's mechanics package (Learn Multibody Dynamics,
PyDy) describe a system with reference frames, points, ``Particle`` and
``RigidBody`` objects and loads (forces on points, torques on frames). This
module turns such a description into a :class:`~udk_notebooks.model.Model`:

* the kinetic energy ``T(q, q', t)`` is sympy's
  :func:`~sympy.physics.mechanics.kinetic_energy` of the bodies;
* the potential energy is the sum of the bodies' ``potential_energy``
  attributes plus any expression given;
* each load becomes a generalized force by its partial velocities
  (:func:`~sympy.physics.mechanics.partial_velocity` with respect to ``q'``):
  ``F_i = sum_P F_P . dv_P/dq'_i + sum_B T_B . dw_B/dq'_i``;
* constraints are kept as constraints, so the Udwadia-Kalaba equation supplies
  their forces (1992 paper, Eq. 9; 2005 paper, Eqs. 0-1).

Speeds ``u`` are welcome: velocities, loads and nonholonomic constraints
written in ``u`` are rewritten in ``q'`` through the kinematic differential
equations (sympy's ``kdes``), which must be solvable for ``u``.

Lagrange's equations in ``q`` are right only when every velocity is the time
derivative of a position. A velocity found by a rolling condition (for
example ``v2pt_theory`` from a contact point at rest) is not; such a condition
must be stated as a nonholonomic constraint instead. When ``origin`` is known
(always for a ``System``), each mass centre and loaded point is located from
it and its velocity compared with the derivative of that position, at a random
numeric state, and a mismatch is refused.
"""

from __future__ import annotations

import random
from typing import Iterable, Mapping, Sequence

import sympy as sm
from sympy.core.function import AppliedUndef
from sympy.physics.mechanics import (
    Particle,
    Point,
    ReferenceFrame,
    RigidBody,
    System,
    kinetic_energy,
    partial_velocity,
)
from sympy.physics.vector import Vector

from .model import TIME, Model

__all__ = ["model_from_bodies", "model_from_system"]

VELOCITY_CHECK_RTOL = 1e-9
"""Relative size of ``v_P - d/dt(r_P)`` at a random state above which a velocity is refused."""


def _speed_map(speeds, kinematic_equations) -> dict:
    """``{u_j: u_j(q, q', t)}`` from the kinematic differential equations (linear in ``u``)."""
    speeds = list(speeds)
    if isinstance(kinematic_equations, Mapping):
        kinematic_equations = [k - v for k, v in kinematic_equations.items()]
    equations = list(kinematic_equations)
    if not speeds:
        if equations:
            raise ValueError("`kinematic_equations` were given without `speeds`; list the speeds u they define")
        return {}
    if len(equations) != len(speeds):
        raise ValueError(
            f"`kinematic_equations` must give one equation per speed: {len(speeds)} speeds, "
            f"{len(equations)} equations"
        )
    kdes = sm.Matrix(equations)
    slope = kdes.jacobian(speeds)
    if any(e.has(*speeds) for e in slope):
        raise ValueError("`kinematic_equations` must be linear in the `speeds`")
    rest = kdes.xreplace(dict.fromkeys(speeds, 0))
    if slope.det() == 0:
        raise ValueError("`kinematic_equations` cannot be solved for the `speeds`: their Jacobian is singular")
    solution = -slope.LUsolve(rest)
    return {u: sm.simplify(e) for u, e in zip(speeds, solution)}


def _in_velocities(vector: Vector, to_qd: dict) -> Vector:
    return vector.xreplace(to_qd) if to_qd else vector


def _check_velocity(point: Point, velocity: Vector, origin: Point, frame: ReferenceFrame, label: str,
                    to_qd: dict) -> None:
    """Refuse a velocity that is not the time derivative of the point's position from ``origin``.

    ``velocity`` is already written in ``q'``; the derivative of the position is
    rewritten the same way (``to_qd``), because ``Vector.dt`` takes it through
    the frames' angular velocities, which may be set in speeds ``u``.
    """
    try:
        position = point.pos_from(origin)
    except ValueError as exc:
        raise ValueError(
            f"{label} {point.name} is not located from `origin` {origin.name}; set its position "
            "(Point.set_pos or locatenew) so that its velocity can be checked"
        ) from exc
    gap = (_in_velocities(position.dt(frame), to_qd) - velocity).to_matrix(frame)
    scale = velocity.to_matrix(frame)
    functions = sorted(set().union(*(e.atoms(AppliedUndef) for e in list(gap) + list(scale))), key=str)
    rng = random.Random(12345)
    derivatives = sorted(set().union(*(e.atoms(sm.Derivative) for e in list(gap) + list(scale))), key=str)
    values = {d: rng.uniform(-1, 1) for d in derivatives}
    values.update({f: rng.uniform(-1, 1) for f in functions})
    symbols = set().union(*(e.free_symbols for e in list(gap) + list(scale)))
    values.update({s: rng.uniform(0.5, 1.5) for s in symbols})
    size = float(sm.sqrt(sum(e.xreplace(values) ** 2 for e in gap)).evalf())
    norm = float(sm.sqrt(sum(e.xreplace(values) ** 2 for e in scale)).evalf())
    if size > VELOCITY_CHECK_RTOL * max(norm, 1.0):
        raise ValueError(
            f"the velocity of {label} {point.name} is not the time derivative of its position from "
            f"{origin.name} (they differ by {size:.3g} at a random state): Lagrange's equations in the "
            "coordinates would be wrong. A rolling or other velocity condition must be passed as a "
            "`nonholonomic` constraint, with a coordinate for every position it involves"
        )


def model_from_bodies(
    coordinates: Sequence[sm.Function],
    frame: ReferenceFrame,
    bodies: Iterable,
    loads: Iterable = (),
    *,
    origin: Point | None = None,
    speeds: Sequence[sm.Function] = (),
    kinematic_equations: Sequence[sm.Expr] | Mapping = (),
    potential_energy: sm.Expr = 0,
    holonomic: Sequence[sm.Expr] = (),
    nonholonomic: Sequence[sm.Expr] = (),
    parameters: Mapping[sm.Symbol, float] | None = None,
    inputs: Mapping[sm.Function, sm.Expr] | None = None,
    name: str = "",
    simplify: bool = False,
) -> Model:
    """A :class:`Model` from sympy mechanics bodies and loads.

    Parameters
    ----------
    coordinates : sequence of dynamicsymbols, length n
        Generalized coordinates ``q(t)``; every position must be a function of them (and time).
    frame : ReferenceFrame
        The inertial frame.
    bodies : iterable of Particle or RigidBody
        Their kinetic energies in ``frame`` are summed, and so are their
        ``potential_energy`` attributes.
    loads : iterable of Force, Torque or (Point | ReferenceFrame, Vector) pairs
        Forces on points and torques on frames, e.g. gravity ``(P, -m*g*N.y)``
        or a damper ``(P, -c*P.vel(N))``.
    origin : Point, optional
        A point fixed in ``frame``. When given, the velocity of each mass
        centre and loaded point is checked against the time derivative of its
        position from ``origin`` (see the module docstring).
    speeds : sequence of dynamicsymbols, optional
        Generalized speeds ``u`` used in velocities, loads or constraints.
    kinematic_equations : sequence of expressions, or mapping ``{q': f(u)}``
        Equations ``k(q, q', u, t) = 0``, one per speed and linear in ``u``
        (``System.kdes`` or ``KanesMethod.kindiffdict()``).
    potential_energy : sympy expression, optional
        Further ``V(q, t)`` (springs, say), added to the bodies' own.
    holonomic, nonholonomic : sequence of sympy expressions, optional
        Constraints ``phi(q, t) = 0`` and ``psi(q, q' or u, t) = 0``.
    parameters : mapping of Symbol (or name) to float
        Every other symbol with its default value.
    inputs : mapping of function of time to expression, optional
        Prescribed inputs such as a drive force ``F(t)`` (see :class:`Model`).
    name : str, optional
        A title for displays.
    simplify : bool, optional
        Passed to :class:`Model`.

    Returns
    -------
    Model
        With ``T`` from the bodies, ``V``, the generalized forces of the loads
        as ``forces`` (shape (n,)), and the constraints.
    """
    q = list(coordinates)
    if not q:
        raise ValueError("`coordinates` must list at least one generalized coordinate")
    if not isinstance(frame, ReferenceFrame):
        raise ValueError(f"`frame` must be a sympy ReferenceFrame (the inertial frame); got {frame!r}")
    if origin is not None and not isinstance(origin, Point):
        raise ValueError(f"`origin` must be a sympy Point fixed in `frame`; got {origin!r}")
    bodies = list(bodies)
    if not bodies:
        raise ValueError("`bodies` must hold at least one Particle or RigidBody")
    for body in bodies:
        if not isinstance(body, (Particle, RigidBody)):
            raise ValueError(f"`bodies` must hold Particle or RigidBody objects; got {body!r}")
    qd = [c.diff(TIME) for c in q]
    to_qd = _speed_map(speeds, kinematic_equations)

    kinetic = sm.expand(kinetic_energy(frame, *bodies).xreplace(to_qd))
    potential = sm.sympify(potential_energy) + sum((sm.sympify(b.potential_energy) for b in bodies), sm.S.Zero)

    forces = [sm.S.Zero] * len(q)
    for load in loads:
        try:
            where, vector = load
        except (TypeError, ValueError) as exc:
            raise ValueError(f"`loads` must hold (Point or ReferenceFrame, Vector) pairs; got {load!r}") from exc
        if not isinstance(vector, Vector):
            raise ValueError(f"`loads`: the load on {where} must be a sympy Vector; got {vector!r}")
        if isinstance(where, Point):
            velocity = _in_velocities(where.vel(frame), to_qd)
            if origin is not None:
                _check_velocity(where, velocity, origin, frame, "the loaded point", to_qd)
        elif isinstance(where, ReferenceFrame):
            velocity = _in_velocities(where.ang_vel_in(frame), to_qd)
        else:
            raise ValueError(f"`loads` must apply to a Point (force) or a ReferenceFrame (torque); got {where!r}")
        partials = partial_velocity([velocity], qd, frame)[0]
        vector = _in_velocities(vector, to_qd)
        for i, partial in enumerate(partials):
            forces[i] += vector.dot(partial)
    if origin is not None:
        for body in bodies:
            point = body.masscenter
            _check_velocity(point, _in_velocities(point.vel(frame), to_qd), origin, frame, "the mass centre",
                            to_qd)

    return Model(
        q,
        kinetic_energy=kinetic,
        potential_energy=potential,
        forces=forces,
        holonomic=[sm.sympify(e).xreplace(to_qd) for e in holonomic],
        nonholonomic=[sm.sympify(e).xreplace(to_qd) for e in nonholonomic],
        parameters=dict(parameters or {}),
        inputs=dict(inputs or {}),
        name=name,
        simplify=simplify,
    )


def model_from_system(
    system: System,
    parameters: Mapping[sm.Symbol, float] | None = None,
    *,
    potential_energy: sm.Expr = 0,
    inputs: Mapping[sm.Function, sm.Expr] | None = None,
    name: str = "",
    simplify: bool = False,
) -> Model:
    """A :class:`Model` from a :class:`sympy.physics.mechanics.System`.

    Takes the system's coordinates (independent then dependent), speeds,
    kinematic differential equations, bodies, loads (with those of its
    actuators), holonomic and nonholonomic constraints; velocities are checked
    against positions from ``system.fixed_point`` (see the module docstring).
    Joints are honoured through the bodies and kinematics they set up.

    Parameters
    ----------
    system : System
        The sympy system; ``form_eoms`` need not have been called.
    parameters : mapping of Symbol (or name) to float
        Every symbol other than coordinates, speeds and time, with its default.
    potential_energy : sympy expression, optional
        Further ``V(q, t)``, added to the bodies' own.
    inputs : mapping of function of time to expression, optional
        Prescribed inputs (see :class:`Model`).
    name, simplify
        Passed to :class:`Model`.

    Returns
    -------
    Model
    """
    if not isinstance(system, System):
        raise ValueError(f"`system` must be a sympy.physics.mechanics.System; got {system!r}")
    loads = list(system.loads)
    for actuator in system.actuators:
        loads += list(actuator.to_loads())
    return model_from_bodies(
        list(system.q),
        system.frame,
        system.bodies,
        loads,
        origin=system.fixed_point,
        speeds=list(system.u),
        kinematic_equations=list(system.kdes),
        potential_energy=potential_energy,
        holonomic=list(system.holonomic_constraints),
        nonholonomic=list(system.nonholonomic_constraints),
        parameters=parameters,
        inputs=inputs,
        name=name,
        simplify=simplify,
    )
