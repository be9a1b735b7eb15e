"""Physical contacts (udk_notebooks.contacts): normal force and friction solved together, lift-off, Painleve.

Every number is checked against an exact equation or an independent route:

* the Painleve rod against a numpy 4 x 4 joint solve of ``M q'' = Q + A^T lambda - mu lambda sgn(s) ds/dq'``,
  ``A q'' = b`` (issue 18), and its paradox region ``mu > (1 + 3 cos^2 theta) / (3 sin theta cos theta)``
  for an end sliding left refused;
* the ladder on a frictionless floor and wall leaves the wall at ``sin theta = (2/3) sin theta0``;
* a particle on top of a smooth circle leaves it at ``cos theta = (2 + v0^2 / (g R)) / 3`` and lands (impact);
* a uniform disc on a rough incline rolls iff ``mu_s >= tan(alpha) / 3``, else slips with
  ``a = g (sin alpha - mu cos alpha)``, ``R omega' = 2 mu g cos alpha``;
* a disc launched at ``v0`` without spin slips until ``t = v0 / (3 mu g)``, then rolls at ``2 v0 / 3``;
* the power theorem along every run, friction power ``-mu N |s|`` with ``N`` in newtons.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sm
from sympy.physics.mechanics import dynamicsymbols

import udk_notebooks as udk
from udk_notebooks.compiled import OPEN
from udk_notebooks.contacts import Contact, Curve, Plane, Surface

G = 9.81
x, y, th = dynamicsymbols("x y theta")
m, L, g, mu, mu_s, R, alpha = sm.symbols("m L g mu mu_s R alpha", positive=True)


# -- the Painleve rod ---------------------------------------------------------------------------------------
def painleve_rod(coefficient: float = 0.5) -> udk.Model:
    """A uniform rod (centre x, y; angle theta above the floor), its lower end on the rough floor y = 0."""
    end = (x - L / 2 * sm.cos(th), y - L / 2 * sm.sin(th))
    return udk.Model([x, y, th], mass_matrix=sm.diag(m, m, m * L**2 / 12), potential_energy=m * g * y,
                     contacts=[Contact(end, Plane((0, 1)), mu=mu, name="floor")],
                     parameters={m: 1.0, L: 1.0, g: G, mu: coefficient})


def rod_state(angle: float, end_speed: float, rate: float = 0.0, length: float = 1.0):
    """Centre on the floor constraint, with the end moving at ``end_speed`` along x."""
    q = np.array([length / 2 * math.cos(angle), length / 2 * math.sin(angle), angle])
    # end velocity: (x' + L/2 sin th th', y' - L/2 cos th th') = (end_speed, 0)
    qd = np.array([end_speed - length / 2 * math.sin(angle) * rate, length / 2 * math.cos(angle) * rate, rate])
    return q, qd


def joint_solve(angle, rate, sign, coefficient, mass=1.0, length=1.0):
    """numpy's 4 x 4 solve of M q'' = Q + A^T lambda - mu lambda sgn(s) ds/dq', A q'' = b (issue 18)."""
    M = np.diag([mass, mass, mass * length**2 / 12])
    Q = np.array([0.0, -mass * G, 0.0])
    A = np.array([0.0, 1.0, -length / 2 * math.cos(angle)])
    b = -length / 2 * math.sin(angle) * rate**2
    slope = np.array([1.0, 0.0, length / 2 * math.sin(angle)])
    K = np.zeros((4, 4))
    K[:3, :3] = M
    K[:3, 3] = -(A - coefficient * sign * slope)
    K[3, :3] = A
    sol = np.linalg.solve(K, np.r_[Q, b])
    return sol[:3], sol[3]


def critical_mu(angle: float) -> float:
    """Above it an end sliding left (s < 0) is in Painleve's paradox: 1 - mu (3 s c) / (1 + 3 c^2) <= 0."""
    return (1 + 3 * math.cos(angle) ** 2) / (3 * math.sin(angle) * math.cos(angle))


def test_painleve_rod_at_the_issue_state():
    """Issue 18: 40 degrees, end sliding right at 1 m/s, mu = 0.5: x'' = -1.402 m/s^2, N = 2.804 N."""
    cm = painleve_rod().compile()
    q, qd = rod_state(math.radians(40), 1.0)
    p = cm.defaults
    modes = cm.friction_modes(0.0, q, qd, p)
    assert modes == (1,)
    motion, _, normals = cm.solve_contacts(0.0, q, qd, p, modes)
    qdd, N = joint_solve(math.radians(40), 0.0, 1, 0.5)
    np.testing.assert_allclose(motion.qdd, qdd, rtol=1e-12, atol=1e-12)
    assert normals[0] == pytest.approx(N, rel=1e-12)
    assert motion.qdd[0] == pytest.approx(-1.402, abs=5e-4) and normals[0] == pytest.approx(2.804, abs=5e-4)
    # the friction force is -mu N sgn(s) ds/dq' with N in newtons, so its power is -mu N |s|
    assert motion.nonideal @ qd == pytest.approx(-0.5 * N * 1.0, rel=1e-12)


@pytest.mark.parametrize("degrees", [15.0, 40.0, 65.0])
@pytest.mark.parametrize("coefficient", [0.1, 0.4, 0.9])
@pytest.mark.parametrize("sign", [1, -1])
@pytest.mark.parametrize("rate", [0.0, -1.5])
def test_painleve_rod_matches_the_joint_solve(degrees, coefficient, sign, rate):
    angle = math.radians(degrees)
    if sign < 0 and coefficient >= critical_mu(angle):
        pytest.skip("paradox region, tested below")
    cm = painleve_rod(coefficient).compile()
    q, qd = rod_state(angle, 0.7 * sign, rate)
    motion, _, normals = cm.solve_contacts(0.0, q, qd, cm.defaults, (sign,))
    qdd, N = joint_solve(angle, rate, sign, coefficient)
    np.testing.assert_allclose(motion.qdd, qdd, rtol=1e-10, atol=1e-10)
    assert normals[0] == pytest.approx(N, rel=1e-10, abs=1e-10)
    # the total constraint force is A^T N - mu N sgn(s) ds/dq'
    A = np.array([0.0, 1.0, -0.5 * math.cos(angle)])
    slope = np.array([1.0, 0.0, 0.5 * math.sin(angle)])
    np.testing.assert_allclose(motion.ideal + motion.nonideal, N * (A - coefficient * sign * slope), atol=1e-10)


@pytest.mark.parametrize("degrees", [45.0, 60.0, 70.0])
def test_painleve_paradox_region_is_refused(degrees):
    angle = math.radians(degrees)
    limit = critical_mu(angle)
    q, qd = rod_state(angle, -0.5)
    below = painleve_rod(0.98 * limit).compile()
    motion, _, normals = below.solve_contacts(0.0, q, qd, below.defaults, (-1,))
    qdd, N = joint_solve(angle, 0.0, -1, 0.98 * limit)
    np.testing.assert_allclose(motion.qdd, qdd, rtol=1e-9)
    above = painleve_rod(1.02 * limit).compile()
    with pytest.raises(udk.PainleveParadoxError, match=r"Painleve's paradox.*'floor'.*t = 0") as info:
        above.solve_contacts(0.0, q, qd, above.defaults, (-1,))
    assert info.value.contacts == ("floor",) and info.value.determinant < 0
    assert f"{1 / 1.02:.3f}" in str(info.value)  # the critical mu as a fraction of the present one
    with pytest.raises(udk.PainleveParadoxError, match="Painleve"):  # at the start: before any sample
        udk.simulate(above.model, (0.0, 0.1), q, qd)


def test_painleve_paradox_reached_during_a_run_stops_it():
    """Sliding left while the rod rises from 40 degrees: mu = 1.5 exceeds the critical value once the angle
    passes about 50.7 degrees, and the run stops there with the paradox, its samples kept."""
    q, qd = rod_state(math.radians(40), -3.0, 3.0)
    assert 1.5 < critical_mu(math.radians(40))
    with pytest.raises(udk.SimulationError, match="Painleve's paradox at contact.*'floor'") as info:
        udk.simulate(painleve_rod(1.5), (0.0, 1.0), q, qd, method="rk4", step=1e-3)
    assert isinstance(info.value.__cause__, udk.PainleveParadoxError)
    angle = info.value.state[2]
    assert critical_mu(angle) == pytest.approx(1.5, abs=2e-3)  # refused where the determinant changes sign
    partial = info.value.trajectory
    assert partial.status == "failed" and partial.t[-1] < info.value.time
    assert np.all(partial.modes[:, 0] == -1) and np.all(partial.normal_force[:, 0] > 0)


def test_sweep_runs_contact_models_one_by_one():
    """One place computes contact forces: the batch leaves contact models to simulate, member by member."""
    from udk_notebooks.sweep import parameter_grid, sweep

    theta0 = math.radians(50)
    q0 = [0.5 * math.cos(theta0), 0.5 * math.sin(theta0), theta0]
    result = sweep(ladder(), (0.0, 0.6), q0, [0.0, 0.0, 0.0], params=parameter_grid(g=[9.81, 3.0]), step=1e-3)
    assert result.runs is not None and list(result.status) == ["ok", "ok"]
    for run, gravity in zip(result.runs, (9.81, 3.0)):
        single = udk.simulate(ladder(), (0.0, 0.6), q0, [0.0, 0.0, 0.0], step=1e-3, params={"g": gravity})
        np.testing.assert_array_equal(run.normal_force, single.normal_force)
    # N_wall scales with g, and the wall is left later under weaker gravity (time ~ 1 / sqrt(g))
    lifts = [next(e.time for e in run.events if e.kind == "lift-off") for run in result.runs]
    assert lifts[1] == pytest.approx(lifts[0] * math.sqrt(9.81 / 3.0), abs=2e-3)


def test_painleve_rod_run_keeps_the_power_theorem():
    """A rod sliding right until its end stops; friction power -mu N |s| with the recorded N (newtons)."""
    cm = painleve_rod(0.3).compile()
    q, qd = rod_state(math.radians(50), 1.5)
    run = udk.simulate(cm, (0.0, 0.25), q, qd, method="DOP853", rtol=1e-10, atol=1e-12,
                       t_eval=np.linspace(0.0, 0.25, 2001))  # a fine grid for the trapezoidal work
    assert run.status == "ok" and run.modes[0, 0] == 1
    sliding = run.modes[:, 0] == 1
    s = run.qd[:, 0] + 0.5 * np.sin(run.q[:, 2]) * run.qd[:, 2]
    N = run.normal_force[:, 0]
    assert np.all(N[sliding] > 0)
    np.testing.assert_allclose(run.power["nonideal"][sliding], -0.3 * N[sliding] * np.abs(s[sliding]),
                               rtol=1e-9, atol=1e-9)
    lost = run.energy[0] - run.energy[-1]
    assert lost > 0.1 and np.abs(run.energy_balance()).max() < 1e-6 * lost


# -- the ladder -------------------------------------------------------------------------------------------
def ladder() -> udk.Model:
    """A uniform rod against a frictionless wall x = 0 (top) and floor y = 0 (bottom)."""
    bottom = (x + L / 2 * sm.cos(th), y - L / 2 * sm.sin(th))
    top = (x - L / 2 * sm.cos(th), y + L / 2 * sm.sin(th))
    return udk.Model([x, y, th], mass_matrix=sm.diag(m, m, m * L**2 / 12), potential_energy=m * g * y,
                     contacts=[Contact(bottom, Plane((0, 1)), name="floor"), Contact(top, Plane((1, 0)), name="wall")],
                     parameters={m: 1.0, L: 1.0, g: G})


@pytest.mark.parametrize("degrees, span", [(50.0, 0.4), (70.0, 0.6), (85.0, 0.95)])  # until it lies nearly flat
@pytest.mark.parametrize("method, options", [("rk4", dict(step=1e-3)), ("DOP853", dict(rtol=1e-10, atol=1e-12))])
def test_ladder_leaves_the_wall_at_two_thirds_of_its_height(degrees, span, method, options):
    theta0 = math.radians(degrees)
    q0 = [0.5 * math.cos(theta0), 0.5 * math.sin(theta0), theta0]
    run = udk.simulate(ladder(), (0.0, span), q0, [0.0, 0.0, 0.0], method=method, **options)
    lifts = [e for e in run.events if e.kind == "lift-off"]
    assert [e.contact for e in lifts] == ["wall"]
    k = int(np.searchsorted(run.t, lifts[0].time))
    assert math.sin(run.q[k, 2]) == pytest.approx(2 / 3 * math.sin(theta0), abs=1e-9)
    # before: both contacts press; after: the wall is open (NaN), the floor still presses, the top moves off
    assert np.all(run.normal_force[:k, 1] > 0) and np.all(np.isnan(run.normal_force[k:, 1]))
    assert np.all(run.normal_force[:, 0] > 0)
    assert np.all(run.modes[k:, 1] == OPEN) and np.all(run.modes[:k, 1] == 1)
    assert run.status == "ok" and run.t[-1] == pytest.approx(span)
    top_x = run.q[:, 0] - 0.5 * np.cos(run.q[:, 2])
    assert np.all(top_x[k:] > -1e-9) and top_x[-1] > 0.01 and np.abs(run.position_residual[:, 0]).max() < 1e-8
    # the open wall's gap is a distance, not a drift: its residual columns are 0 once it is open, small before
    wall = ladder().contact_rows[1]
    assert np.all(run.position_residual[k:, wall] == 0.0) and np.all(run.velocity_residual[k:, wall] == 0.0)
    assert np.abs(run.position_residual[:k, wall]).max() < 1e-8
    assert np.abs(run.energy_balance()).max() < 1e-7  # frictionless: energy kept, through the event
    # energy and N_wall = 0 give the centre's speed there: x' = (L/2) omega sin(theta) with omega^2 = 3 g (s0 - s) / L
    omega = math.sqrt(3 * G * (math.sin(theta0) - 2 / 3 * math.sin(theta0)))
    assert abs(run.qd[k, 2]) == pytest.approx(omega, rel=1e-6)


# -- lift-off from a curve, and the impact that ends the run ------------------------------------------------
def particle_on_circle(radius: float = 1.0, unilateral: bool = True) -> udk.Model:
    """A particle outside the circle |r| = R (a signed distance, not a plane)."""
    circle = Curve(lambda r: sm.sqrt(r[0] ** 2 + r[1] ** 2) - R)
    return udk.Model([x, y], mass_matrix=sm.eye(2) * m, potential_energy=m * g * y,
                     contacts=[Contact((x, y), circle, name="dome", unilateral=unilateral)],
                     parameters={m: 1.0, g: G, R: radius})


@pytest.mark.parametrize("speed", [0.05, 1.0, 2.0])
def test_particle_leaves_the_dome_where_gravity_no_longer_holds_it(speed):
    """From the top at speed v0 it leaves at cos theta = (2 + v0^2 / (g R)) / 3 and lands: status "impact"."""
    run = udk.simulate(particle_on_circle(), (0.0, 3.0), [0.0, 1.0], [speed, 0.0], method="DOP853",
                       rtol=1e-10, atol=1e-12)
    lifts = [e for e in run.events if e.kind == "lift-off"]
    assert len(lifts) == 1
    k = int(np.searchsorted(run.t, lifts[0].time))
    cos_leave = run.q[k, 1] / np.hypot(*run.q[k])
    assert cos_leave == pytest.approx((2 + speed**2 / G) / 3, abs=1e-8)
    assert run.status == "ok" and len(run.events) == 1  # it flies clear of the circle: no impact
    assert np.all(np.hypot(run.q[k:, 0], run.q[k:, 1]) > 1.0 - 1e-9) and np.hypot(*run.q[-1]) > 1.5
    assert np.all(run.normal_force[:k, 0] > 0) and np.all(np.isnan(run.normal_force[k:, 0]))
    assert np.abs(run.energy_balance()).max() < 1e-7


def test_particle_thrown_off_a_bump_lands_as_an_impact():
    """Over the crest of y = a exp(-x^2 / w^2) (radius of curvature w^2 / (2 a)) faster than sqrt(g rho):
    the contact opens at the start, the particle flies a parabola and lands: status "impact"."""
    a, w = sm.Rational(1, 5), sm.Rational(1, 2)
    bump = Curve(lambda r: r[1] - a * sm.exp(-r[0] ** 2 / w**2))
    model = udk.Model([x, y], mass_matrix=sm.eye(2) * m, potential_energy=m * g * y,
                      contacts=[Contact((x, y), bump, name="bump")], parameters={m: 1.0, g: G})
    speed = 3.0
    assert speed > math.sqrt(G * 0.25 / (2 * 0.2))
    run = udk.simulate(model, (0.0, 2.0), [0.0, 0.2], [speed, 0.0], method="rk4", step=1e-3)
    assert run.status == "impact" and "impacts are not modelled" in run.stop_reason
    assert run.events[-1].kind == "impact" and run.events[-1].contact == "bump"
    assert run.stop_time == pytest.approx(run.t[-1]) and run.stop_time < 2.0
    # free flight until the landing, which lies on the surface (not through it)
    t = run.t
    np.testing.assert_allclose(run.q[:, 0], speed * t, atol=1e-9)
    np.testing.assert_allclose(run.q[:, 1], 0.2 - G * t**2 / 2, atol=1e-9)
    landing = run.q[-1]
    assert landing[1] == pytest.approx(0.2 * math.exp(-landing[0] ** 2 / 0.25), abs=1e-8)


def test_fast_particle_opens_at_the_start():
    """Above sqrt(g R) at the top the dome would have to pull: the contact opens at t0."""
    run = udk.simulate(particle_on_circle(), (0.0, 0.2), [0.0, 1.0], [4.0, 0.0], method="rk4", step=1e-3)
    assert run.events == (udk.simulation.ContactEvent(0.0, "dome", "lift-off"),)
    assert np.all(run.modes[:, 0] == OPEN) and np.all(np.isnan(run.normal_force[:, 0]))
    np.testing.assert_allclose(run.q[-1], [4.0 * 0.2, 1.0 - G * 0.2**2 / 2], atol=1e-10)  # free flight


def test_bilateral_contact_holds_with_either_sign():
    """A bead on a hoop (unilateral=False) stays on it: N = m (g cos theta - v^2 / R) changes sign."""
    run = udk.simulate(particle_on_circle(unilateral=False), (0.0, 1.0), [0.0, 1.0], [1.0, 0.0], method="DOP853",
                       rtol=1e-10, atol=1e-12)
    assert run.status == "ok" and not run.events
    N = run.normal_force[:, 0]
    r = np.hypot(run.q[:, 0], run.q[:, 1])
    expected = G * run.q[:, 1] / r - (run.qd**2).sum(axis=1) / r
    np.testing.assert_allclose(N, expected, atol=1e-7)
    assert N.min() < 0 < N.max()


# -- the disc ---------------------------------------------------------------------------------------------
phi = dynamicsymbols("phi")


def disc_on_incline(kinetic: float, static: float) -> udk.Model:
    """A uniform disc (centre x, y; angle phi counterclockwise) on the line through O at angle alpha."""
    normal = (-sm.sin(alpha), sm.cos(alpha))
    point = (x - R * normal[0], y - R * normal[1])
    tangent = (sm.cos(alpha), sm.sin(alpha))
    # the material point at the contact: centre velocity + omega x (-R n) = v + R phi' t
    velocity = (x.diff() + R * phi.diff() * tangent[0], y.diff() + R * phi.diff() * tangent[1])
    return udk.Model([x, y, phi], mass_matrix=sm.diag(m, m, m * R**2 / 2), potential_energy=m * g * y,
                     contacts=[Contact(point, Plane(normal), mu=mu, mu_s=mu_s, name="incline", velocity=velocity)],
                     parameters={m: 1.0, R: 0.3, g: G, alpha: math.radians(30), mu: kinetic, mu_s: static})


@pytest.mark.parametrize("static, rolls", [(0.2, True), (0.19, False), (0.5, True), (0.05, False)])
def test_disc_on_incline_rolls_iff_static_friction_suffices(static, rolls):
    """tan(30 deg) / 3 = 0.19245: rolling needs mu_s at least that."""
    a = math.radians(30)
    kinetic = min(static, 0.15)
    system = disc_on_incline(kinetic, static)
    q0 = [-0.3 * math.sin(a), 0.3 * math.cos(a), 0.0]  # centre at R n: the disc touches the line at O
    T = 0.8
    run = udk.simulate(system, (0.0, T), q0, [0.0, 0.0, 0.0], method="DOP853", rtol=1e-11, atol=1e-12)
    tangent = np.array([math.cos(a), math.sin(a)])
    along = (run.q[:, :2] - np.array(q0[:2])) @ tangent
    if rolls:
        assert np.all(run.modes[:, 0] == 0)
        accel = -2 / 3 * G * math.sin(a)
        np.testing.assert_allclose(along, accel * run.t**2 / 2, atol=1e-9)
        np.testing.assert_allclose(0.3 * run.qd[:, 2], -(run.qd[:, :2] @ tangent), atol=1e-9)  # no slip
        # holding force m g sin(alpha) / 3 against mu_s N, N = m g cos(alpha)
        np.testing.assert_allclose(run.normal_force[:, 0], G * math.cos(a), rtol=1e-9)
    else:
        assert np.all(run.modes[1:, 0] == -1)
        accel = -G * (math.sin(a) - kinetic * math.cos(a))
        np.testing.assert_allclose(along, accel * run.t**2 / 2, atol=1e-9)
        np.testing.assert_allclose(0.3 * run.qd[:, 2], 2 * kinetic * G * math.cos(a) * run.t, atol=1e-9)
        s = run.qd[:, :2] @ tangent + 0.3 * run.qd[:, 2]
        N = run.normal_force[:, 0]
        np.testing.assert_allclose(N, G * math.cos(a), rtol=1e-9)
        np.testing.assert_allclose(run.power["nonideal"], -kinetic * N * np.abs(s), atol=1e-9)
    assert np.abs(run.energy_balance()).max() < 1e-8


def disc_on_floor(coefficient: float) -> udk.Model:
    point = (x, y - R)
    velocity = (x.diff() + R * phi.diff(), y.diff())
    return udk.Model([x, y, phi], mass_matrix=sm.diag(m, m, m * R**2 / 2), potential_energy=m * g * y,
                     contacts=[Contact(point, Plane((0, 1)), mu=mu, name="floor", velocity=velocity)],
                     parameters={m: 2.0, R: 0.25, g: G, mu: coefficient})


@pytest.mark.parametrize("method, options", [("rk4", dict(step=1e-3)), ("RK45", dict(rtol=1e-10, atol=1e-12))])
@pytest.mark.parametrize("coefficient, v0", [(0.2, 3.0), (0.5, 1.0)])
def test_launched_disc_slips_then_rolls_at_two_thirds(method, options, coefficient, v0):
    t_roll = v0 / (3 * coefficient * G)
    run = udk.simulate(disc_on_floor(coefficient), (0.0, 2 * t_roll), [0.0, 0.25, 0.0], [v0, 0.0, 0.0],
                       method=method, **options)
    sticks = [e for e in run.events if e.kind == "stick"]
    assert len(sticks) == 1 and run.events == tuple(sticks)
    assert sticks[0].time == pytest.approx(t_roll, abs=1e-9)
    after = run.t > t_roll + 1e-9
    np.testing.assert_allclose(run.qd[after, 0], 2 * v0 / 3, atol=1e-9)
    np.testing.assert_allclose(run.qd[after, 0] + 0.25 * run.qd[after, 2], 0.0, atol=1e-9)  # rolling
    np.testing.assert_allclose(run.normal_force[:, 0], 2.0 * G, rtol=1e-9)
    # kinetic energy lost to friction: m v0^2 / 2 - (3/4) m (2 v0 / 3)^2 = m v0^2 / 6
    assert run.energy[0] - run.energy[-1] == pytest.approx(2.0 * v0**2 / 6, rel=1e-8)
    assert np.abs(run.energy_balance()).max() < 1e-6 * v0**2


# -- refusals ---------------------------------------------------------------------------------------------
def test_contacts_refuse_what_they_cannot_vouch_for():
    z = dynamicsymbols("z")
    with pytest.raises(ValueError, match="unit vector"):
        Plane((0, 2))
    with pytest.raises(ValueError, match="3D contact.*not implemented"):
        Contact((x, y, z), Plane((0, 0, 1)), mu=0.3)
    with pytest.raises(ValueError, match="same space"):
        Contact((x, y), Plane((0, 0, 1)))
    with pytest.raises(ValueError, match="`Contact.mu` must be >= 0"):
        Contact((x, y), Plane((0, 1)), mu=-0.1)
    with pytest.raises(ValueError, match="`friction` and `contacts`"):
        udk.Model([x, y], mass_matrix=sm.eye(2), contacts=[Contact((x, y), Plane((0, 1)))],
                  friction=[udk.CoulombFriction(x.diff(), 0.1)])
    with pytest.raises(ValueError, match="depends on time explicitly"):
        udk.Model([x, y], mass_matrix=sm.eye(2), contacts=[Contact((x + dynamicsymbols._t, y), Plane((0, 1)), mu=0.1)])
    # a frictionless 3D contact is fine: a ball dropped on a tilted plane stays on it
    ball = udk.Model([x, y, z], mass_matrix=sm.eye(3), potential_energy=G * z,
                     contacts=[Contact((x, y, z), Surface(lambda r: r[2] - r[0] / 2, 3), name="ramp")])
    run = udk.simulate(ball, (0.0, 0.5), [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], method="rk4", step=1e-3)
    assert run.status == "ok" and np.all(run.normal_force[:, 0] > 0)
    np.testing.assert_allclose(run.normal_force[:, 0], G / math.sqrt(1.25), rtol=1e-9)  # m g cos(slope)


# -- the particle-on-curve examples declared as contacts ------------------------------------------------------
def test_incline_block_as_a_contact_follows_the_closed_form():
    """The block sent up the slope: stops at v0 / (g (sin a + mu cos a)), then slides back (mu_s < tan a)."""
    from udk_notebooks.examples import incline_friction as inc

    setting = dict(alpha=0.6, mu=0.3, mu_s=0.4)  # tan(0.6) = 0.684 > mu_s: it slides back
    q0, qd0 = inc.initial_state(4.0, **setting)
    t_eval = np.linspace(0.0, 1.5, 301)
    run = udk.simulate(inc.contact_model(**setting), (0.0, 1.5), q0, qd0, method="DOP853", rtol=1e-11, atol=1e-12,
                       t_eval=t_eval)
    q, qd = inc.exact_state(run.t, 4.0, **setting)
    np.testing.assert_allclose(run.q, q, atol=1e-8)
    np.testing.assert_allclose(run.qd, qd, atol=1e-8)
    assert [e.kind for e in run.events] == ["reversal"]
    assert run.events[0].time == pytest.approx(inc.stop_time(4.0, **setting), abs=1e-9)
    np.testing.assert_allclose(run.normal_force[:, 0], G * math.cos(0.6), rtol=1e-10)  # m g cos(alpha), m = 1
    # the same run as the CoulombFriction form (N = |F^L|, exact for a particle on one line)
    other = udk.simulate(inc.model(**setting), (0.0, 1.5), q0, qd0, method="DOP853", rtol=1e-11, atol=1e-12,
                         t_eval=t_eval)
    np.testing.assert_allclose(run.q, other.q, atol=1e-9)
    np.testing.assert_allclose(run.power["nonideal"], other.power["nonideal"], atol=1e-8)


def test_incline_block_held_by_static_friction_reports_the_holding_force_as_nonideal():
    """mu_s >= tan(alpha): after the stop the block stays, held by F^C = m g sin(alpha) (cos a, sin a)."""
    from udk_notebooks.examples import incline_friction as inc

    setting = dict(alpha=0.4, mu=0.3, mu_s=0.5)
    q0, qd0 = inc.initial_state(2.0, **setting)
    run = udk.simulate(inc.contact_model(**setting), (0.0, 1.0), q0, qd0, method="rk4", step=1e-3)
    assert [e.kind for e in run.events] == ["stick"]
    held = run.modes[:, 0] == 0
    holding = G * math.sin(0.4) * np.array([math.cos(0.4), math.sin(0.4)])
    normal = G * math.cos(0.4) * np.array([-math.sin(0.4), math.cos(0.4)])
    np.testing.assert_allclose(run.nonideal[held], np.tile(holding, (held.sum(), 1)), atol=1e-9)
    np.testing.assert_allclose(run.ideal[held], np.tile(normal, (held.sum(), 1)), atol=1e-9)
    other = udk.simulate(inc.model(**setting), (0.0, 1.0), q0, qd0, method="rk4", step=1e-3)
    np.testing.assert_allclose(run.nonideal, other.nonideal, atol=1e-9)
    np.testing.assert_allclose(run.ideal, other.ideal, atol=1e-9)


def test_friction_cart_as_a_contact_matches_the_event_driven_reference():
    from udk_notebooks.examples import friction_cart_pendulum as fcp

    span, grid = 4.0, np.linspace(0.0, 4.0, 801)
    q0, qd0 = fcp.initial_state(angle=1.2)
    run = udk.simulate(fcp.contact_model(), (0.0, span), q0, qd0, method="DOP853", rtol=1e-11, atol=1e-12,
                       t_eval=grid)
    reference = fcp.event_driven((0.0, span), [0.0, 1.2], [0.0, 0.0], t_eval=grid)
    switches = np.array([e.time for e in run.events])
    assert len(switches) >= 4
    np.testing.assert_allclose(switches, reference.switch_times, atol=1e-7)
    q, qd = fcp.to_minimal(run.q, run.qd)
    mine, theirs = np.isin(run.t, grid), np.isin(reference.t, grid)
    np.testing.assert_allclose(q[mine], reference.q[theirs], atol=1e-7)
    # N in newtons is Newton's floor force of the minimal equations; friction power -mu N |x1'|
    modes = run.modes[:, 0]
    newton = np.array([fcp.minimal_motion(a, b, int(k))[1] for a, b, k in zip(q, qd, modes)])
    np.testing.assert_allclose(run.normal_force[:, 0], newton, rtol=1e-8)
    sliding = modes != 0
    np.testing.assert_allclose(run.power["nonideal"][sliding],
                               -fcp.PARAMETERS["mu"].default * newton[sliding] * np.abs(run.qd[sliding, 0]),
                               rtol=1e-6, atol=1e-8)
    assert np.abs(run.energy_balance()).max() < 1e-4 * (run.energy[0] - run.energy[-1])


# -- the ladder with friction at both ends ------------------------------------------------------------------
def rough_ladder(floor_mu: float, wall_mu: float) -> udk.Model:
    mf, mw = sm.symbols("mu_f mu_w", nonnegative=True)
    bottom = (x + L / 2 * sm.cos(th), y - L / 2 * sm.sin(th))
    top = (x - L / 2 * sm.cos(th), y + L / 2 * sm.sin(th))
    return udk.Model([x, y, th], mass_matrix=sm.diag(m, m, m * L**2 / 12), potential_energy=m * g * y,
                     contacts=[Contact(bottom, Plane((0, 1)), mu=mf, name="floor"),
                               Contact(top, Plane((1, 0)), mu=mw, name="wall")],
                     parameters={m: 1.0, L: 1.0, g: G, mf: floor_mu, mw: wall_mu})


def test_rough_ladder_sliding_matches_a_joint_solve():
    """Both ends sliding: numpy's 5 x 5 solve of M q'' = Q + sum_i N_i (A_i - mu_i ds_i/dq'), A q'' = b."""
    angle, rate, mf, mw = math.radians(50), -1.2, 0.3, 0.2
    s, c = math.sin(angle), math.cos(angle)
    q = np.array([0.5 * c, 0.5 * s, angle])
    qd = np.array([-0.5 * s * rate, 0.5 * c * rate, rate])  # bottom stays on the floor, top on the wall
    cm = rough_ladder(mf, mw).compile()
    modes = cm.friction_modes(0.0, q, qd, cm.defaults)
    assert modes == (1, 1)  # bottom moving away from the wall, top moving down
    motion, _, normals = cm.solve_contacts(0.0, q, qd, cm.defaults, modes)
    A = np.array([[0.0, 1.0, -0.5 * c], [1.0, 0.0, 0.5 * s]])
    slopes = np.array([[1.0, 0.0, -0.5 * s], [0.0, -1.0, -0.5 * c]])
    b = np.array([-0.5 * s * rate**2, -0.5 * c * rate**2])
    K = np.zeros((5, 5))
    K[:3, :3] = np.diag([1.0, 1.0, 1.0 / 12])
    K[:3, 3:] = -(A - np.array([[mf], [mw]]) * slopes).T
    K[3:, :3] = A
    sol = np.linalg.solve(K, np.r_[0.0, -G, 0.0, b])
    np.testing.assert_allclose(motion.qdd, sol[:3], rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(normals, sol[3:], rtol=1e-10)


@pytest.mark.parametrize("degrees, floor_mu, wall_mu", [(70, 0.3, 0.2), (56, 0.3, 0.2), (59, 0.3, 0.2),
                                                          (80, 0.1, 0.0), (77, 0.1, 0.0), (60, 0.5, 0.5)])
def test_rough_ladder_at_rest_holds_iff_friction_can_hold_it(degrees, floor_mu, wall_mu):
    """A ladder at rest stays iff tan(theta0) >= (1 - mu_f mu_w) / (2 mu_f); its end forces are then
    statically indeterminate (NaN, not a guess); otherwise both ends slide."""
    theta0 = math.radians(degrees)
    holds = math.tan(theta0) >= (1 - floor_mu * wall_mu) / (2 * floor_mu)
    q0 = [0.5 * math.cos(theta0), 0.5 * math.sin(theta0), theta0]
    system = rough_ladder(floor_mu, wall_mu)
    run = udk.simulate(system, (0.0, 0.1), q0, [0.0, 0.0, 0.0], method="rk4", step=2e-3)
    if holds:
        assert run.modes[0].tolist() == [0, 0 if wall_mu else 1] and not run.events  # a smooth wall never sticks
        np.testing.assert_allclose(run.q, np.tile(q0, (run.t.size, 1)), atol=1e-12)
        if wall_mu > 0:
            assert np.all(np.isnan(run.normal_force))
    else:
        assert run.modes[0, 0] == 1 and run.q[-1, 2] < theta0 - 1e-3
        assert np.all(run.normal_force[:, 0] > 0)


def test_coulomb_friction_forms_refuse_the_rod():
    """Issue 18: CoulombFriction gave x'' = -1.903 (N = |F^L|) or -1.479 (N = |A^T lambda|) for the rod; both
    routes now refuse, pointing to Contact, whose answer (-1.402) is checked above."""
    end_y = y - L / 2 * sm.sin(th)
    slip = x.diff() + L / 2 * sm.sin(th) * th.diff()
    q, qd = rod_state(math.radians(40), 1.0)
    for normal in (None, end_y):
        rod = udk.Model([x, y, th], mass_matrix=sm.diag(m, m, m * L**2 / 12), potential_energy=m * g * y,
                        holonomic=[end_y], friction=[udk.CoulombFriction(slip, mu, normal=normal)],
                        parameters={m: 1.0, L: 1.0, g: G, mu: 0.5})
        with pytest.raises(ValueError, match="udk_notebooks.Contact"):
            rod.compile().motion(0.0, q, qd)


def test_moving_floor_presses_harder():
    """A floor rising as a t^2 / 2 (Plane with a moving offset): N = m (g + a) on a particle resting on it."""
    t = udk.model.TIME
    a = 2.0
    lift = udk.Model([x, y], mass_matrix=sm.eye(2) * m, potential_energy=m * g * y,
                     contacts=[Contact((x, y), Plane((0, 1), offset=a * t**2 / 2), mu=0.3, name="lift")],
                     parameters={m: 1.5, g: G})
    run = udk.simulate(lift, (0.0, 1.0), [0.0, 0.0], [0.5, 0.0], method="rk4", step=1e-3)
    np.testing.assert_allclose(run.normal_force[:, 0], 1.5 * (G + a), rtol=1e-9)
    # it slides with deceleration mu (g + a) until it stops, then sticks
    stop = 0.5 / (0.3 * (G + a))
    assert [e.kind for e in run.events] == ["stick"] and run.events[0].time == pytest.approx(stop, abs=1e-9)
    np.testing.assert_allclose(run.q[:, 1], a * run.t**2 / 2, atol=1e-9)
