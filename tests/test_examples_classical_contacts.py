"""Painlevé's rod and the sliding ladder: the catalogue's closed forms against independent routes.

* the rod's joint solve (a 4 x 4 numpy system) against Newton-Euler equations of the rod derived again with
  sympy, at several angles, rates and coefficients; the issue's numbers at 40 degrees; the paradox boundary;
* the ladder's event-driven reference against energy, the closed-form leave angle asin(2/3 sin theta0),
  the classical holding condition, and a constant horizontal velocity once the top is free.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sm

import udk_notebooks as udk
from udk_notebooks.errors import PainleveParadoxError
from udk_notebooks.examples import ladder, painleve_rod as rod

FORTY = math.radians(40.0)


@pytest.fixture(scope="module")
def newton_euler():
    """``(x'', theta'', N)`` of the rod from the forces on it, solved by sympy (a second derivation)."""
    m, L, g, mu, sigma, th, w = sm.symbols("m L g mu sigma theta omega", real=True)
    xdd, ydd, thdd, N = sm.symbols("xdd ydd thdd N", real=True)
    inertia = m * L**2 / 12
    end = sm.Matrix([-L / 2 * sm.cos(th), -L / 2 * sm.sin(th)])  # contact end from the centre
    force = sm.Matrix([-mu * sigma * N, N])
    torque = end[0] * force[1] - end[1] * force[0]
    # the end stays on the floor: d^2/dt^2 (y - (L/2) sin theta) = 0
    equations = [m * xdd - force[0], m * ydd - force[1] + m * g, inertia * thdd - torque,
                 ydd - L / 2 * (sm.cos(th) * thdd - sm.sin(th) * w**2)]
    solution = sm.solve(equations, [xdd, ydd, thdd, N], dict=True)[0]
    return sm.lambdify((m, L, g, mu, sigma, th, w), [solution[xdd], solution[thdd], solution[N]])


def test_the_issue_state_gives_the_joint_solve_numbers():
    motion = rod.joint_solve(FORTY, 1.0, 0.0, mu=0.5)
    assert round(motion.qdd[0], 3) == -1.402
    assert round(motion.normal, 3) == 2.804
    assert motion.qdd[0] == pytest.approx(-0.5 * motion.normal, rel=1e-12)  # m x'' = -mu N
    # the two shortcuts the issue reports, and the frictionless-multiplier one
    assert round(rod.shortcut_motion(FORTY, 1.0, normal="norm", mu=0.5).qdd[0], 3) == -1.903
    assert round(rod.shortcut_motion(FORTY, 1.0, normal="coupled_norm", mu=0.5).qdd[0], 3) == -1.479
    assert rod.shortcut_motion(FORTY, 1.0, normal="multiplier", mu=0.5).qdd[0] != pytest.approx(motion.qdd[0],
                                                                                                 rel=1e-3)


def test_frictionless_multiplier_shortcut_gives_the_docstring_numbers():
    # lambda_L = m g / (1 + 3 cos^2 theta) at theta' = 0 (the rod's floor row without friction), and the
    # shortcut slides with friction mu lambda_L: x'' = -mu lambda_L / m = -1.777, not the -1.479 of the coupled norm
    shortcut = rod.shortcut_motion(FORTY, 1.0, normal="multiplier", mu=0.5)
    frictionless = 9.81 / (1 + 3 * math.cos(FORTY) ** 2)
    assert shortcut.normal == pytest.approx(frictionless, rel=1e-12)
    assert shortcut.qdd[0] == pytest.approx(-0.5 * frictionless, rel=1e-12)
    assert (round(shortcut.normal, 3), round(shortcut.qdd[0], 3)) == (3.554, -1.777)


@pytest.mark.parametrize("angle, x_rate, rate, mu, m, length", [
    (FORTY, 1.0, 0.0, 0.5, 1.0, 1.0),
    (0.3, -1.0, 0.5, 0.8, 2.0, 1.5),      # sliding left, below the critical mu at 0.3 rad
    (1.2, 0.2, -1.5, 1.0, 0.5, 0.7),
    (0.9, -0.5, 0.0, 1.2, 1.0, 1.0),      # mu_c(0.9) = 1.36 > 1.2
])
def test_joint_solve_agrees_with_newton_euler(newton_euler, angle, x_rate, rate, mu, m, length):
    motion = rod.joint_solve(angle, x_rate, rate, mu=mu, m=m, L=length)
    sigma = math.copysign(1.0, x_rate + length / 2 * math.sin(angle) * rate)
    xdd, thdd, normal = newton_euler(m, length, 9.81, mu, sigma, angle, rate)
    np.testing.assert_allclose([motion.qdd[0], motion.qdd[2], motion.normal], [xdd, thdd, normal], rtol=1e-12)
    assert motion.friction == pytest.approx(-mu * sigma * normal, rel=1e-12)


def test_normal_force_obeys_the_general_relation():
    """lambda = lambda_L - (A M^-1 A^T)^-1 A M^-1 C with C the friction the joint solve finds."""
    v = rod.parameter_values(mu=0.5)
    M, Q, A, b, D = rod._system(FORTY, 0.7, v)
    motion = rod.joint_solve(FORTY, 1.0, 0.7, mu=0.5)
    C = motion.friction * D
    gram = A @ np.linalg.solve(M, A)
    ideal = (b - A @ np.linalg.solve(M, Q)) / gram
    coupling = A @ np.linalg.solve(M, C)
    assert abs(coupling) > 0.1  # the rod: friction at the end changes the normal force
    assert motion.normal == pytest.approx(ideal - coupling / gram, rel=1e-12)
    np.testing.assert_allclose(M @ motion.qdd, Q + A * motion.normal + C, atol=1e-12)


@pytest.mark.parametrize("angle", [0.3, math.atan(2.0), 0.9, 1.3])
def test_paradox_region_starts_at_the_critical_mu(angle):
    critical = rod.critical_mu(angle)
    c, s = math.cos(angle), math.sin(angle)
    assert critical == pytest.approx((1 + 3 * c * c) / (3 * s * c), rel=1e-14)
    assert rod.determinant(angle, -1, mu=critical * (1 - 1e-6)) > 0
    assert rod.determinant(angle, -1, mu=critical * (1 + 1e-6)) < 0
    assert rod.determinant(angle, 1, mu=10 * critical) > 0  # sliding the other way: never
    assert rod.critical_mu(angle, 1) == math.inf
    rod.joint_solve(angle, -1.0, 0.0, mu=0.99 * critical)
    with pytest.raises(PainleveParadoxError, match="Painlevé.s paradox.*mu_c"):
        rod.joint_solve(angle, -1.0, 0.0, mu=1.01 * critical)


def test_smallest_critical_mu_is_four_thirds_at_tan_two():
    angles = np.linspace(0.05, 1.5, 2001)
    values = [rod.critical_mu(a) for a in angles]
    assert min(values) >= rod.PARADOX_MU_MIN - 1e-12
    assert angles[int(np.argmin(values))] == pytest.approx(math.atan(2.0), abs=1e-3)
    assert rod.critical_mu(math.atan(2.0)) == pytest.approx(4 / 3, rel=1e-14)


@pytest.mark.parametrize("call, message", [
    (lambda: rod.joint_solve(0.0, 1.0), "`theta` must lie in"),
    (lambda: rod.joint_solve(FORTY, 0.0, 0.0), "not sliding"),
    (lambda: rod.joint_solve(FORTY, float("nan")), "`x_rate`"),
    (lambda: rod.joint_solve(FORTY, 1.0, mu=-0.1), "`mu` must be >= 0"),
    (lambda: rod.joint_solve(FORTY, 1.0, L=0.0), "`L`"),
    (lambda: rod.joint_solve(FORTY, 1.0, 30.0), "N = .* < 0"),  # spun fast, the end lifts off
    (lambda: rod.shortcut_motion(FORTY, 1.0, normal="gap"), "`normal` must be"),
    (lambda: rod.determinant(FORTY, 0), "`direction`"),
])
def test_rod_refuses_bad_input_with_a_message(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# -- the package's contacts against the joint solve ------------------------------------------------------
@pytest.fixture(scope="module")
def rod_model():
    return rod.model().compile()


@pytest.mark.parametrize("angle, x_rate, rate, mu", [
    (FORTY, 1.0, 0.0, 0.5), (0.3, -1.0, 0.5, 0.8), (1.2, 0.2, -1.5, 1.0), (0.9, -0.5, 0.0, 1.2)])
def test_contact_model_gives_the_joint_solve(rod_model, angle, x_rate, rate, mu):
    """udk.Contact on the rod's end: accelerations and N in newtons as the independent 4 x 4 solve."""
    q, qd = rod.initial_state(angle, x_rate, rate)
    p = rod_model.parameters(mu=mu)
    motion, _, normal = rod_model.solve_contacts(0.0, q, qd, p, rod_model.friction_modes(0.0, q, qd, p))
    expected = rod.joint_solve(angle, x_rate, rate, mu=mu)
    np.testing.assert_allclose(motion.qdd, expected.qdd, rtol=1e-10, atol=1e-12)
    assert normal[0] == pytest.approx(expected.normal, rel=1e-10)


@pytest.mark.parametrize("angle", [0.5, math.atan(2.0), 1.2])
def test_contact_model_refuses_exactly_the_paradox_region(rod_model, angle):
    q, qd = rod.initial_state(angle, -1.0)
    critical = rod.critical_mu(angle)
    udk.simulate(rod_model, (0.0, 1e-3), q, qd, params={"mu": 0.999 * critical})
    with pytest.raises(PainleveParadoxError, match="paradox"):
        udk.simulate(rod_model, (0.0, 1e-3), q, qd, params={"mu": 1.001 * critical})


@pytest.mark.parametrize("theta0, mu_floor, mu_wall", [(1.2, 0.0, 0.0), (0.6, 0.0, 0.0), (0.9, 0.2, 0.1)])
def test_contact_ladder_leaves_the_wall_where_the_reference_does(theta0, mu_floor, mu_wall):
    compiled = ladder.model().compile()
    params = {"mu_floor": mu_floor, "mu_wall": mu_wall}
    q0, qd0 = ladder.release_state(theta0, **params)
    run = udk.simulate(compiled, (0.0, 0.45), q0, qd0, method="DOP853", rtol=1e-10, atol=1e-12, params=params)
    event = next(e for e in run.events if e.kind == "lift-off")
    assert event.contact == "wall"
    reference = ladder.reference(theta0, 0.45, **params)
    assert event.time == pytest.approx(reference.leave_time, abs=1e-8)
    j = int(np.searchsorted(run.t, event.time))
    assert run.q[j, 2] == pytest.approx(reference.leave_angle, abs=1e-8)
    if mu_floor == mu_wall == 0:
        assert run.q[j, 2] == pytest.approx(ladder.leave_angle(theta0), abs=1e-8)
    assert np.all(np.isnan(run.normal_force[run.t > event.time, 1]))  # open: no wall force


# -- the ladder ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("theta0", [0.6, 1.0, 1.2, 1.45])
def test_frictionless_ladder_leaves_the_wall_at_the_closed_form_angle(theta0):
    run = ladder.reference(theta0, 3.0, m=1.3, L=1.7)
    assert run.leave_time is not None
    assert run.leave_angle == pytest.approx(ladder.leave_angle(theta0), abs=1e-8)
    assert math.sin(run.leave_angle) == pytest.approx(2 / 3 * math.sin(theta0), abs=1e-8)
    before, after = run.t < run.leave_time, run.t > run.leave_time
    assert np.all(run.normal_wall[before] >= -1e-9) and np.all(run.normal_wall[after] == 0)
    assert np.all(run.normal_floor > 0)
    # energy: T + V conserved through both phases
    m, length, g = 1.3, 1.7, 9.81
    kinetic = m / 2 * (run.qd[:, 0] ** 2 + run.qd[:, 1] ** 2) + m * length**2 / 24 * run.qd[:, 2] ** 2
    energy = kinetic + m * g * run.q[:, 1]
    np.testing.assert_allclose(energy, energy[0], atol=1e-8)
    # free of the wall, nothing pushes the centre sideways: its x' stays at the value it left with
    np.testing.assert_allclose(run.qd[after, 0], run.qd[after, 0][0], atol=1e-8)
    assert run.status == "top reaches the floor"


@pytest.mark.parametrize("theta", [0.5, 0.9, 1.3])
def test_frictionless_contact_forces_match_energy(theta):
    """theta'' = -(3 g / 2 L) cos theta and N_wall = m x'' with theta'^2 = 3 g (sin theta0 - sin theta) / L."""
    theta0, m, length, g = 1.4, 2.0, 1.5, 9.81
    rate = -math.sqrt(3 * g * (math.sin(theta0) - math.sin(theta)) / length)
    thdd, floor, wall = ladder.contact_forces(theta, rate, m=m, L=length)
    assert thdd == pytest.approx(-1.5 * g / length * math.cos(theta), rel=1e-12)
    half = length / 2
    xdd = -half * (math.sin(theta) * thdd + math.cos(theta) * rate**2)
    ydd = half * (math.cos(theta) * thdd - math.sin(theta) * rate**2)
    assert wall == pytest.approx(m * xdd, rel=1e-10, abs=1e-12)
    assert floor == pytest.approx(m * (g + ydd), rel=1e-12)
    assert (wall > 0) == (math.sin(theta) > 2 / 3 * math.sin(theta0))


@pytest.mark.parametrize("mu_floor, mu_wall", [(0.3, 0.2), (0.5, 0.0), (0.2, 0.6)])
def test_friction_holds_the_ladder_exactly_where_the_classical_condition_says(mu_floor, mu_wall):
    limit = math.atan((1 - mu_floor * mu_wall) / (2 * mu_floor))
    for theta0, holds in ((limit * 1.001, True), (limit * 0.999, False)):
        assert ladder.holds_at_rest(theta0, mu_floor=mu_floor, mu_wall=mu_wall) is holds
        # the same from the joint solve at rest: with the friction of an impending fall it would rise
        thdd, _, _ = ladder.contact_forces(theta0, 0.0, mu_floor=mu_floor, mu_wall=mu_wall)
        assert (thdd >= 0) is holds
        run = ladder.reference(theta0, 0.5, mu_floor=mu_floor, mu_wall=mu_wall)
        assert (run.status == "holds") is holds


def test_held_ladder_reports_normal_forces_only_where_statics_decides_them():
    # smooth wall: N_floor = m g and N_wall = floor friction; moments about the centre must balance
    theta0, m, g, half = 1.2, 2.0, 9.81, 0.5
    held = ladder.reference(theta0, 0.5, mu_floor=0.3, mu_wall=0.0, m=m)
    assert held.status == "holds"
    floor, wall = held.normal_floor[0], held.normal_wall[0]
    friction = wall                                           # horizontal balance: the floor's friction holds the wall's push
    assert floor == pytest.approx(m * g, rel=1e-14)
    moment = floor * half * math.cos(theta0) - friction * half * math.sin(theta0) - wall * half * math.sin(theta0)
    assert moment == pytest.approx(0.0, abs=1e-12)
    assert friction <= 0.3 * floor                           # within the friction cone
    # both ends rough: four contact forces, three equations of statics, no number; here N_floor = m g would even
    # need floor friction beyond mu_floor N_floor (1 - mu_f mu_w <= 2 mu_f tan(theta0) < 1)
    theta_rough = math.atan(1.4)
    assert 1 - 0.3 * 0.9 <= 2 * 0.3 * math.tan(theta_rough) < 1
    rough = ladder.reference(theta_rough, 0.5, mu_floor=0.3, mu_wall=0.9)
    assert rough.status == "holds"
    assert np.all(np.isnan(rough.normal_floor)) and np.all(np.isnan(rough.normal_wall))


def test_ladder_with_friction_leaves_the_wall_later_than_without():
    free = ladder.reference(0.9, 2.0)
    rough = ladder.reference(0.9, 2.0, mu_floor=0.2, mu_wall=0.1)
    assert rough.leave_time > free.leave_time
    assert np.all(rough.normal_wall[rough.t < rough.leave_time] >= -1e-9)


@pytest.mark.parametrize("call, message", [
    (lambda: ladder.leave_angle(1.6), "`theta0` must lie in"),
    (lambda: ladder.reference(1.0, -1.0), "`t_end` must be positive"),
    (lambda: ladder.reference(1.0, 1.0, mu_wall=-0.2), "`mu_wall` must be >= 0"),
    (lambda: ladder.contact_forces(1.0, 0.5), "`theta_rate` must be <= 0"),
    (lambda: ladder.initial_state(1.0, rope=2.0), "unknown parameter"),
    (lambda: ladder.top_height([1.0, 2.0]), "shape"),
    (lambda: ladder.wall_distance(np.zeros((4, 2))), "shape"),
])
def test_ladder_refuses_bad_input_with_a_message(call, message):
    with pytest.raises(ValueError, match=message):
        call()
