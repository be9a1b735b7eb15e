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

__all__ = ["BodySketch", "mechanism_from_bodies", "mechanism_from_system", "model_from_bodies", "model_from_system"]

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


# -- drawings from the bodies ------------------------------------------------------------------------------
def _find_origin(points: Sequence[Point], frame: ReferenceFrame) -> Point:
    """The point fixed in ``frame`` from which the first of ``points`` is located (sympy's position tree)."""
    seen, todo = set(), [points[0]]
    while todo:
        point = todo.pop(0)
        if id(point) in seen:
            continue
        seen.add(id(point))
        if point._vel_dict.get(frame) == 0 or point._vel_dict.get(frame) == Vector(0):
            return point
        todo += list(point._pos_dict)  # sympy keeps the points each point was located from here
    raise ValueError(f"no point fixed in {frame.name} is found from {points[0].name}; pass `origin`, a Point "
                     "with set_vel(frame, 0) from which every body is located (Point.locatenew or set_pos)")


def _plane_vectors(frame: ReferenceFrame, plane: str):
    if not (isinstance(plane, str) and len(plane) == 2 and set(plane) <= set("xyz") and plane[0] != plane[1]):
        raise ValueError(f"`plane` must name two axes of the frame, e.g. 'xy' or 'xz'; got {plane!r}")
    return tuple(getattr(frame, axis) for axis in plane)


class BodySketch:
    """A drawing of a sympy mechanics system, made once from its points and bodies.

    Calling it with parameter values by name gives the
    :class:`~udk_notebooks.drawing.Mechanism` of those values (lengths that
    are parameters follow the sliders of :func:`udk_notebooks.explore`). Made by
    :func:`mechanism_from_bodies` and :func:`mechanism_from_system`.

    Attributes
    ----------
    coordinate_names, parameter_names : tuple of str
        The order of ``q`` and the parameters the positions are functions of.
    defaults : dict of str to float
    forced : tuple of str
        Points drawn with force arrows: those whose in-plane position is two
        of the coordinates (or one coordinate and a constant), where the
        entries of a generalized force are the force on the point.
    unforced : tuple of str
        Loaded points or mass centres drawn without arrows: their position is
        not such a coordinate pair, and no arrow at a point can show a
        generalized force in angles.
    """

    def __init__(self, joints, parts, sites, *, coordinate_names, parameter_names, defaults, forced, unforced,
                 name, xlabel, ylabel, trace):
        self._joints, self._parts, self._sites = joints, parts, sites
        self.coordinate_names = tuple(coordinate_names)
        self.parameter_names = tuple(parameter_names)
        self.defaults = dict(defaults)
        self.forced, self.unforced = tuple(forced), tuple(unforced)
        self._name, self._labels, self._trace = name, (xlabel, ylabel), trace

    def __call__(self, **params: float):
        """The :class:`~udk_notebooks.drawing.Mechanism` at these parameter values (the rest at their defaults)."""
        from .drawing import Joint, Mechanism

        unknown = set(params) - set(self.parameter_names)
        if unknown:
            raise ValueError(f"unknown parameter(s) {', '.join(sorted(unknown))}; the drawing has "
                             f"{', '.join(self.parameter_names) or 'no parameters'}")
        p = [float(params.get(name, self.defaults[name])) for name in self.parameter_names]
        joints = [Joint(name, _bound(place, p), style=style) for name, place, style in self._joints]
        return Mechanism(joints, self._parts, forces=self._sites, trace=self._trace, name=self._name,
                         xlabel=self._labels[0], ylabel=self._labels[1])

    def __repr__(self) -> str:
        return (f"BodySketch({len(self._joints)} points, {len(self._parts)} parts, arrows at "
                f"{', '.join(self.forced) or 'no point'})")


def _bound(place, p):
    def at(q, t):
        return place(t, q, p)
    return at


def _coordinate_pair(exprs, q_syms) -> tuple | None:
    """``(i, j)`` when the in-plane position is ``(q_i + c, q_j + c')`` (None for a constant component), else None."""
    pair = []
    for expr in exprs:
        gradient = [sm.simplify(expr.diff(s)) for s in q_syms]
        if all(g == 0 for g in gradient):
            pair.append(None)
            continue
        ones = [i for i, g in enumerate(gradient) if g == 1]
        if len(ones) != 1 or any(g != 0 for i, g in enumerate(gradient) if i != ones[0]):
            return None
        pair.append(ones[0])
    if pair == [None, None] or (pair[0] is not None and pair[0] == pair[1]):
        return None
    return tuple(pair)


def mechanism_from_bodies(
    coordinates: Sequence[sm.Function],
    frame: ReferenceFrame,
    bodies: Iterable,
    loads: Iterable = (),
    *,
    origin: Point | None = None,
    parameters: Mapping[sm.Symbol, float] | None = None,
    links: Sequence[tuple[Point, Point]] | str = "auto",
    springs: Sequence[tuple[Point, Point]] = (),
    plane: str = "xy",
    trace: Point | None = None,
    name: str = "",
) -> BodySketch:
    """A mechanism drawing from sympy mechanics bodies, with no hand work.

    What is drawn, in the plane of two axes of ``frame`` (positions are taken
    from ``origin`` along those axes):

    * ``origin`` as a fixed support;
    * each ``Particle`` as a dot at its point;
    * each ``RigidBody`` as a dot at its mass centre and a segment along its
      frame's first in-plane axis, as long as the uniform rod of the same
      mass and moment of inertia about the out-of-plane axis
      (``sqrt(12 I / m)``: a rod's own length, 2.45 radii for a disc), unless
      a ``links`` entry joins two of its points;
    * a rod for each ``links`` pair (by default, ``"auto"``: between every two
      of the origin and the mass centres where one was located from the other,
      ``locatenew`` or ``set_pos``, at a distance that no coordinate changes)
      and a coil for each ``springs`` pair;
    * the three force terms ``F^N, F^L, F^C`` of the Udwadia-Kalaba equation
      (Udwadia, Kalaba & Fan 2005, Eqs. 9-11) as arrows at each mass centre
      or loaded point whose in-plane position is a pair of the coordinates
      (Cartesian coordinates: then the entries of a generalized force are the
      force on that point). A point located by angles gets no arrows: a
      generalized force in an angle is a torque, not a force at a point, and
      drawing one there would be wrong (:attr:`BodySketch.unforced` lists them). A
      coordinate's entry is the force on every point that coordinate moves, so
      it is drawn once, at the first such point (a mass centre before a loaded
      point: the resultant on its body).

    Parameters
    ----------
    coordinates : sequence of dynamicsymbols, length n
        The model's coordinates, in its order (``model_from_bodies``' first argument).
    frame : ReferenceFrame
        The inertial frame.
    bodies : iterable of Particle or RigidBody
    loads : iterable of (Point or ReferenceFrame, Vector), optional
        Loaded points get force arrows like the mass centres (torques are skipped).
    origin : Point, optional
        A point fixed in ``frame`` (default: found from the first body's position tree).
    parameters : mapping of Symbol (or name) to float
        Defaults of every other symbol in the positions and inertias.
    links : sequence of (Point, Point), or "auto", optional
        Rods between points (see above).
    springs : sequence of (Point, Point), optional
        Coil springs between points.
    plane : str, optional
        The two axes of ``frame`` drawn as x and y, e.g. ``"xy"`` or ``"xz"``.
    trace : Point, optional
        A point whose path is drawn over the run.
    name : str, optional
        The title of animations.

    Returns
    -------
    BodySketch
        Call it with parameter values to get a :class:`~udk_notebooks.drawing.Mechanism`.
    """
    from .drawing import ForceSite, Rod, Spring  # drawing imports simulation: loaded on first use

    q = list(coordinates)
    if not q:
        raise ValueError("`coordinates` must list at least one generalized coordinate")
    if not isinstance(frame, ReferenceFrame):
        raise ValueError(f"`frame` must be a sympy ReferenceFrame (the inertial frame); got {frame!r}")
    bodies = list(bodies)
    if not bodies or not all(isinstance(b, (Particle, RigidBody)) for b in bodies):
        raise ValueError("`bodies` must hold at least one Particle or RigidBody (and nothing else)")
    axes = _plane_vectors(frame, plane)
    # The ground of System.from_newtonian is a body whose frame is the inertial one: it is not drawn.
    drawn = [b for b in bodies if not (isinstance(b, RigidBody) and (b.frame == frame or b.mass == 0))]
    if not drawn:
        raise ValueError("`bodies` has no body with mass to draw")
    if origin is None:
        origin = _find_origin([b.masscenter for b in drawn], frame)
    if not isinstance(origin, Point):
        raise ValueError(f"`origin` must be a sympy Point fixed in `frame`; got {origin!r}")
    values = {str(k): float(v) for k, v in (parameters or {}).items()}
    t_sym = sm.Symbol("t")
    q_syms = [sm.Symbol(f"_q{i}") for i in range(len(q))]
    to_plain = {TIME: t_sym, **dict(zip(q, q_syms))}
    p_syms = [sm.Symbol(name) for name in values]
    by_name = {name: s for name, s in zip(values, p_syms)}

    def plain(expr):
        expr = sm.sympify(expr).xreplace(to_plain)
        expr = expr.xreplace({s: by_name[str(s)] for s in expr.free_symbols if str(s) in by_name})
        extra = expr.free_symbols - set(q_syms) - set(p_syms) - {t_sym}
        functions = expr.atoms(AppliedUndef)
        if extra or functions:
            names = ", ".join(sorted(map(str, extra | functions)))
            raise ValueError(f"the drawing uses {names}, which is neither a coordinate nor in `parameters`; "
                             "give every symbol a default value in `parameters`")
        return expr

    points: dict[str, tuple] = {}  # joint name -> (point, in-plane exprs, style)

    def add(point: Point, style: str) -> str:
        for key, (other, _, _) in points.items():
            if other is point:
                return key
        try:
            position = point.pos_from(origin)
        except ValueError as exc:
            raise ValueError(f"point {point.name} is not located from the origin {origin.name}; set its position "
                             "(Point.locatenew or set_pos) so that it can be drawn") from exc
        key = point.name if point.name not in points else f"{point.name}_{len(points)}"
        points[key] = (point, [plain(position.dot(axis)) for axis in axes], style)
        return key

    add(origin, "fixed")
    parts = []
    site_points = []
    for body in drawn:
        center = add(body.masscenter, "body")
        site_points.append(center)
        if isinstance(body, RigidBody) and (links == "auto" or not any(body.masscenter in pair for pair in links)):
            normal = _out_of_plane(frame, plane)
            moment = plain(body.central_inertia.dot(normal).dot(normal)) if body.central_inertia != 0 else 0
            length = sm.sqrt(12 * sm.Abs(moment) / plain(body.mass)) if moment != 0 else sm.S.Zero
            along = _in_plane_axis(body.frame, axes)
            ends = []
            for sign, suffix in ((-1, "-"), (1, "+")):
                end = body.masscenter.locatenew(f"{body.name}{suffix}", sign * length / 2 * along)
                ends.append(add(end, "hidden"))
            parts.append(Rod(*ends, width=4.0))
    if links == "auto":
        links = _rigid_links([origin] + [b.masscenter for b in drawn], plain, q_syms + [t_sym])
    for a, b in links:
        parts.append(Rod(add(a, "pin"), add(b, "pin")))
    for a, b in springs:
        parts.append(Spring(add(a, "hidden"), add(b, "hidden")))
    for where, _vector in (tuple(load) for load in loads):
        if isinstance(where, Point):
            site_points.append(add(where, "hidden"))
    trace_name = add(trace, "hidden") if trace is not None else None

    sites, forced, unforced = [], [], []
    taken: set = set()
    for key in dict.fromkeys(site_points):
        pair = _coordinate_pair(points[key][1], q_syms)
        # A coordinate's force entry is the force on every point it moves; drawn once, at the first of them
        # (a mass centre comes first: the resultant on its body).
        if pair is None or taken & {i for i in pair if i is not None}:
            unforced.append(key)
        else:
            sites.append(ForceSite(key, pair))
            forced.append(key)
            taken |= {i for i in pair if i is not None}
    joints = []
    for key, (_, exprs, style) in points.items():
        place = sm.lambdify([t_sym, q_syms, p_syms], exprs, modules="math")
        joints.append((key, place, style))
    label = [f"{frame.name}.{axis} (m)" for axis in plane]
    return BodySketch(joints, tuple(parts), tuple(sites), coordinate_names=[str(c.func) for c in q],
                      parameter_names=list(values), defaults=values, forced=forced, unforced=unforced, name=name,
                      xlabel=label[0], ylabel=label[1], trace=trace_name)


def _rigid_links(points, plain, moving) -> list:
    """Pairs of ``points`` where one was located from the other at a distance no coordinate or time changes."""
    pairs = []
    for a in points:
        for b in points:
            if a is b or b not in a._pos_dict:  # sympy keeps the points each point was located from here
                continue
            offset = a._pos_dict[b]
            squared = plain(offset.dot(offset)) if offset != Vector(0) else sm.S.Zero
            if squared != 0 and not (squared.free_symbols & set(moving)) and (b, a) not in pairs:
                pairs.append((a, b))
    return pairs


def _out_of_plane(frame: ReferenceFrame, plane: str):
    return getattr(frame, next(axis for axis in "xyz" if axis not in plane))


def _in_plane_axis(body_frame: ReferenceFrame, axes) -> Vector:
    """The first of the body frame's axes that is not normal to the drawing plane."""
    for axis in (body_frame.x, body_frame.y, body_frame.z):
        if any(sm.simplify(axis.dot(a)) != 0 for a in axes):
            return axis
    return body_frame.x


def mechanism_from_system(
    system: System,
    parameters: Mapping[sm.Symbol, float] | None = None,
    *,
    links: Sequence[tuple[Point, Point]] | str = "auto",
    springs: Sequence[tuple[Point, Point]] = (),
    plane: str = "xy",
    trace: Point | None = None,
    name: str = "",
) -> BodySketch:
    """:func:`mechanism_from_bodies` for a :class:`sympy.physics.mechanics.System`.

    Takes the system's coordinates (in ``model_from_system``'s order), frame,
    fixed point, bodies with mass and loads; each linear spring among the
    actuators (a pathway between two points) is drawn as a coil, besides
    ``springs``. Parameters as for :func:`mechanism_from_bodies`.
    """
    if not isinstance(system, System):
        raise ValueError(f"`system` must be a sympy.physics.mechanics.System; got {system!r}")
    coils = list(springs)
    for actuator in system.actuators:
        ends = getattr(getattr(actuator, "pathway", None), "attachments", ())
        if len(ends) == 2:
            coils.append(tuple(ends))
    return mechanism_from_bodies(list(system.q), system.frame, system.bodies, system.loads,
                                 origin=system.fixed_point, parameters=parameters, links=links, springs=coils,
                                 plane=plane, trace=trace, name=name)
