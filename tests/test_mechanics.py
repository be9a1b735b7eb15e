"""Models from sympy.physics.mechanics against sympy's own equations of motion.

Each system is one that sympy's own test suite uses. The reference is
``KanesMethod`` or ``LagrangesMethod`` (through ``System`` where it fits),
its full mass matrix and forcing evaluated at a random state and solved for
``q''`` with numpy; the model's Udwadia-Kalaba accelerations must agree to
1e-10 relative.
"""

import math
import numpy as np
import pytest
import sympy as sm
from sympy.physics.mechanics import (
    Force,
    LagrangesMethod,
    Lagrangian,
    Particle,
    Point,
    ReferenceFrame,
    RigidBody,
    System,
    dynamicsymbols,
    inertia,
    models,
)

from udk_notebooks.mechanics import model_from_bodies, model_from_system

RTOL = 1e-10


def numeric(expr, values):
    """Evaluate a sympy matrix at ``values`` (derivatives are replaced before functions)."""
    return np.array(sm.Matrix(expr).xreplace(values).evalf(30), dtype=float)


def assert_close(actual, expected):
    scale = max(np.abs(expected).max(), 1.0)
    assert np.abs(actual - expected).max() <= RTOL * scale, (actual, expected)


def kane_accelerations(kane, values):
    """``u'`` from a KanesMethod's full mass matrix and forcing (``q' = u`` in these systems)."""
    n = len(kane.q)
    state = np.linalg.solve(numeric(kane.mass_matrix_full, values), numeric(kane.forcing_full, values).ravel())
    return state[n:]


def kane_symbols(kane):
    found = set().union(*(e.free_symbols for e in list(kane.forcing_full) + list(kane.mass_matrix_full)))
    return sorted(found - {dynamicsymbols._t}, key=str)


def defaults(symbols, rng):
    return {s: float(rng.uniform(0.5, 2.0)) for s in symbols}


@pytest.mark.parametrize("n", [1, 3])
def test_n_link_pendulum_on_cart_matches_kane(n):
    kane = models.n_link_pendulum_on_cart(n, cart_force=False, joint_torques=False)
    frame = kane._inertial  # sympy keeps the inertial frame only here
    kane.kanes_equations(kane.bodies, kane.loads)
    rng = np.random.default_rng(n)
    params = defaults(kane_symbols(kane), rng)
    model = model_from_bodies(kane.q, frame, kane.bodies, kane.loads, speeds=kane.u,
                              kinematic_equations=kane.kindiffdict(), parameters=params)
    motion = model.compile()
    for _ in range(5):
        q = rng.uniform(-1.5, 1.5, n + 1)
        qd = rng.uniform(-2, 2, n + 1)
        values = {**{c.diff(): v for c, v in zip(kane.q, qd)}, **dict(zip(kane.q, q)), **dict(zip(kane.u, qd)), **params}
        expected = kane_accelerations(kane, values)
        actual = motion.motion(0.0, q, qd, **{str(k): v for k, v in params.items()}).qdd
        assert_close(actual, expected)


def test_multi_mass_spring_damper_matches_kane():
    kane = models.multi_mass_spring_damper(3, apply_gravity=True)
    kane.kanes_equations(kane.bodies, kane.loads)
    frame = kane._inertial
    rng = np.random.default_rng(7)
    params = defaults(kane_symbols(kane), rng)
    model = model_from_bodies(kane.q, frame, kane.bodies, kane.loads, speeds=kane.u,
                              kinematic_equations=kane.kindiffdict(), parameters=params)
    assert model.A.shape == (0, 3)
    compiled = model.compile()
    for _ in range(5):
        q, qd = rng.uniform(-1, 1, 3), rng.uniform(-1, 1, 3)
        values = {**dict(zip(kane.q, q)), **dict(zip(kane.u, qd)), **params}
        expected = kane_accelerations(kane, values)
        assert_close(compiled.motion(0.0, q, qd, **{str(k): v for k, v in params.items()}).qdd, expected)


def rolling_disc_system():
    """A disc rolling without slipping on a plane: contact point (x, y), yaw, lean, spin; 2 nonholonomic rows."""
    x, y, q1, q2, q3 = q = dynamicsymbols("x y q1 q2 q3")
    ux, uy, u1, u2, u3 = u = dynamicsymbols("ux uy u1 u2 u3")
    m, g, r = sm.symbols("m g r", positive=True)
    N = ReferenceFrame("N")
    O = Point("O")
    O.set_vel(N, 0)
    Y = N.orientnew("Y", "Axis", [q1, N.z])
    L = Y.orientnew("L", "Axis", [q2, Y.x])
    R = L.orientnew("R", "Axis", [q3, L.y])
    C = O.locatenew("C", x * N.x + y * N.y)
    D = C.locatenew("D", r * L.z)
    disc = RigidBody("disc", D, R, m, (inertia(L, m * r**2 / 4, m * r**2 / 2, m * r**2 / 4), D))
    # The disc's material point at the contact has no velocity.
    slip = D.vel(N) + R.ang_vel_in(N).cross(-r * L.z)
    to_u = {c.diff(): s for c, s in zip(q, u)}
    system = System(N, O)
    system.add_coordinates(q1, q2, q3, x, y)
    system.add_speeds(u1, u2, u3)
    system.add_speeds(ux, uy, independent=False)
    system.add_kdes(*[c.diff() - s for c, s in zip([q1, q2, q3, x, y], [u1, u2, u3, ux, uy])])
    system.add_bodies(disc)
    system.add_loads(Force(D, -m * g * N.z))
    system.add_nonholonomic_constraints(*[slip.dot(e).xreplace(to_u) for e in (N.x, N.y)])
    return system, {m: 1.3, g: 9.81, r: 0.4}


def test_rolling_disc_system_matches_kane():
    system, params = rolling_disc_system()
    model = model_from_system(system, params)
    assert model.A.shape == (2, 5)
    system.form_eoms()
    compiled = model.compile()
    rng = np.random.default_rng(3)
    q_syms, u_syms = list(system.q), list(system.u)
    for _ in range(5):
        q = rng.uniform(-1, 1, 5)
        u_ind = rng.uniform(-2, 2, 3)
        values = {**dict(zip(q_syms, q)), **dict(zip(u_syms[:3], u_ind)), **params}
        # Dependent speeds from the nonholonomic constraints (linear in them).
        rows = numeric(sm.Matrix(system.nonholonomic_constraints).jacobian(u_syms[3:]), values)
        rest = numeric(sm.Matrix(system.nonholonomic_constraints).xreplace(dict.fromkeys(u_syms[3:], 0)), values)
        u_dep = np.linalg.solve(rows, -rest.ravel())
        qd = np.concatenate([u_ind, u_dep])
        values.update(dict(zip(u_syms[3:], u_dep)))
        n = 5
        state = np.linalg.solve(numeric(system.mass_matrix_full, values), numeric(system.forcing_full, values).ravel())
        expected = state[n:]
        assert_close(compiled.motion(0.0, q, qd).qdd, expected)


def disc_on_incline():
    s, theta = dynamicsymbols("s theta")
    m, g, R, alpha = sm.symbols("m g R alpha", positive=True)
    N = ReferenceFrame("N")
    O = Point("O")
    O.set_vel(N, 0)
    A = N.orientnew("A", "Axis", [-alpha, N.z])
    B = A.orientnew("B", "Axis", [theta, A.z])
    D = O.locatenew("D", s * A.x)
    disc = RigidBody("disc", D, B, m, (inertia(A, m * R**2 / 4, m * R**2 / 4, m * R**2 / 2), D))
    gravity = (D, -m * g * N.y)
    rolling = s + R * theta  # rolling without slipping, theta counterclockwise about A.z
    return [s, theta], N, O, disc, gravity, rolling, {m: 2.0, g: 9.81, R: 0.3, alpha: 0.4}


def test_disc_rolling_down_an_incline_matches_lagrange_and_closed_form():
    q, N, O, disc, gravity, rolling, params = disc_on_incline()
    model = model_from_bodies(q, N, [disc], [gravity], origin=O, holonomic=[rolling], parameters=params)
    lagrange = LagrangesMethod(Lagrangian(N, disc), q, forcelist=[gravity], frame=N, hol_coneqs=[rolling])
    lagrange.form_lagranges_equations()
    compiled = model.compile()
    R, alpha, g = (next(v for k, v in params.items() if str(k) == name) for name in ("R", "alpha", "g"))
    rng = np.random.default_rng(11)
    for _ in range(5):
        s, sd = rng.uniform(-1, 1, 2)
        qv, qdv = np.array([s, -s / R]), np.array([sd, -sd / R])
        values = {**{c.diff(): v for c, v in zip(q, qdv)}, **dict(zip(q, qv)), **params}
        state = np.linalg.solve(numeric(lagrange.mass_matrix_full, values), numeric(lagrange.forcing_full, values).ravel())
        expected = state[2:4]
        actual = compiled.motion(0.0, qv, qdv).qdd
        assert_close(actual, expected)
        # A uniform disc rolls down with two thirds of g sin(alpha).
        assert actual[0] == pytest.approx(2 / 3 * g * np.sin(alpha), rel=RTOL)


def test_a_velocity_from_a_rolling_condition_is_refused():
    """sympy's three-coordinate rolling disc finds the centre's velocity from the contact point at rest."""
    q1, q2, q3 = dynamicsymbols("q1 q2 q3")
    m, g, r = sm.symbols("m g r")
    N = ReferenceFrame("N")
    L = N.orientnew("Y", "Axis", [q1, N.z]).orientnew("L", "Axis", [q2, N.orientnew("Y2", "Axis", [q1, N.z]).x])
    R = L.orientnew("R", "Axis", [q3, L.y])
    C = Point("C")
    C.set_vel(N, 0)
    D = C.locatenew("D", r * L.z)
    D.v2pt_theory(C, N, R)
    disc = RigidBody("disc", D, R, m, (inertia(L, m * r**2 / 4, m * r**2 / 2, m * r**2 / 4), D))
    with pytest.raises(ValueError, match=r"velocity of the loaded point D is not the time derivative.*`nonholonomic`"):
        model_from_bodies([q1, q2, q3], N, [disc], [(D, -m * g * N.z)], origin=C, parameters={m: 1, g: 9.81, r: 1})


def test_particle_potential_energy_and_torque_load():
    """A bar turning about a fixed axis under a torque, with a particle's potential energy set by sympy."""
    th = dynamicsymbols("theta")
    m, l, tau, k = sm.symbols("m l tau k")
    N = ReferenceFrame("N")
    B = N.orientnew("B", "Axis", [th, N.z])
    O = Point("O")
    O.set_vel(N, 0)
    P = O.locatenew("P", l * B.x)
    P.v2pt_theory(O, N, B)
    bob = Particle("bob", P, m)
    bob.potential_energy = k * th**2 / 2
    model = model_from_bodies([th], N, [bob], [(B, tau * N.z)], origin=O, parameters={m: 2.0, l: 0.5, tau: 0.3, k: 1.5})
    # m l^2 th'' = tau - k th
    assert sm.simplify(model.M[0, 0] - m * l**2) == 0
    assert sm.simplify(model.Q[0] - (tau - k * th)) == 0


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda q, N, b: model_from_bodies([], N, [b]), r"`coordinates` must list"),
        (lambda q, N, b: model_from_bodies(q, "N", [b]), r"`frame` must be a sympy ReferenceFrame"),
        (lambda q, N, b: model_from_bodies(q, N, ["bob"]), r"`bodies` must hold Particle or RigidBody"),
        (lambda q, N, b: model_from_bodies(q, N, [b], [(1, N.x)]), r"`loads` must apply to a Point"),
        (lambda q, N, b: model_from_bodies(q, N, [b], [(b.masscenter, 3)]), r"`loads`: the load on .* must be a sympy Vector"),
        (lambda q, N, b: model_from_bodies(q, N, [b], speeds=dynamicsymbols("u0:2")), r"`kinematic_equations` must give one"),
        (lambda q, N, b: model_from_system("system"), r"`system` must be a sympy.physics.mechanics.System"),
    ],
)
def test_bad_arguments_are_named(call, message):
    q = dynamicsymbols("x0:1")
    N = ReferenceFrame("N")
    P = Point("P")
    P.set_vel(N, q[0].diff() * N.x)
    with pytest.raises(ValueError, match=message):
        call(q, N, Particle("b", P, 1))


def test_pendulum_on_cart_with_a_declared_drive_force_matches_kane():
    """sympy's model with its cart force F(t), declared as an input F = F0 cos(w t)."""
    kane = models.n_link_pendulum_on_cart(2, cart_force=True, joint_torques=False)
    kane.kanes_equations(kane.bodies, kane.loads)
    F = dynamicsymbols("F")
    t = dynamicsymbols._t
    F0, w = sm.symbols("F0 w")
    rng = np.random.default_rng(5)
    params = defaults(kane_symbols(kane), rng) | {F0: 0.7, w: 2.0}
    with pytest.raises(ValueError, match=r"`forces\[0\]` uses F\(t\), a function of time .* declare .* in `inputs`"):
        model_from_bodies(kane.q, kane._inertial, kane.bodies, kane.loads, speeds=kane.u,
                          kinematic_equations=kane.kindiffdict(), parameters=params)
    model = model_from_bodies(kane.q, kane._inertial, kane.bodies, kane.loads, speeds=kane.u,
                              kinematic_equations=kane.kindiffdict(), parameters=params,
                              inputs={F: F0 * sm.cos(w * t)})
    q, qd, time = rng.uniform(-1, 1, 3), rng.uniform(-1, 1, 3), 0.8
    values = {**dict(zip(kane.q, q)), **dict(zip(kane.u, qd)), **params, F: 0.7 * np.cos(1.6)}
    expected = kane_accelerations(kane, values)
    assert_close(model.compile().motion(time, q, qd, **{str(k): v for k, v in params.items()}).qdd, expected)


# -- issue 22, r11: a speed u in an angular velocity with `origin`, and a System with a PinJoint ------------
def _rod_acceleration(theta: float, g: float = 9.81, l: float = 1.0) -> float:
    """Uniform rod pinned at one end, angle from the horizontal: ``(m l^2 / 3) theta'' = -m g (l / 2) cos theta``."""
    return -3 * g * math.cos(theta) / (2 * l)


def test_speed_in_an_angular_velocity_is_accepted_with_origin():
    """r11: ``B.set_ang_vel(N, u N.z)`` with ``origin`` given: the position's derivative is also taken in q'."""
    from sympy.physics.mechanics import Point, ReferenceFrame, RigidBody, inertia

    theta, u = dynamicsymbols("theta u")
    m, g, l = sm.symbols("m g l")
    N = ReferenceFrame("N")
    O = Point("O")
    O.set_vel(N, 0)
    B = N.orientnew("B", "Axis", [theta, N.z])
    B.set_ang_vel(N, u * N.z)
    G = O.locatenew("G", l / 2 * B.x)
    G.v2pt_theory(O, N, B)
    rod = RigidBody("rod", G, B, m, (inertia(B, 0, m * l**2 / 12, m * l**2 / 12), G))
    model = model_from_bodies([theta], N, [rod], [(G, -m * g * N.y)], origin=O, speeds=[u],
                              kinematic_equations=[theta.diff(dynamicsymbols._t) - u], parameters={m: 1.0, g: 9.81, l: 1.0})
    assert model.compile().motion(0.0, [0.3], [0.7]).qdd[0] == pytest.approx(_rod_acceleration(0.3), rel=1e-12)


def test_system_with_a_pin_joint_is_accepted():
    """r11: every System with a PinJoint was refused (its joint sets the angular velocity in the speed)."""
    from sympy.physics.mechanics import PinJoint, RigidBody, System, inertia

    q, u = dynamicsymbols("q u")
    m, g, l = sm.symbols("m g l")
    ground = RigidBody("ground")
    bar = RigidBody("bar", mass=m)
    bar.inertia = (inertia(bar.frame, 0, 0, m * l**2 / 12), bar.masscenter)
    system = System.from_newtonian(ground)
    system.add_joints(PinJoint("pin", ground, bar, coordinates=q, speeds=u, child_point=-l / 2 * bar.frame.x,
                               joint_axis=ground.frame.z))
    system.apply_uniform_gravity(-g * ground.frame.y)
    model = model_from_system(system, {m: 1.0, g: 9.81, l: 2.0})
    assert model.compile().motion(0.0, [0.3], [0.7]).qdd[0] == pytest.approx(_rod_acceleration(0.3, l=2.0),
                                                                             rel=1e-12)
