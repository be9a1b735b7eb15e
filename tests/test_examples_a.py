"""Examples against closed forms and independent routes.

One section per system of ``udk_notebooks.examples``: the particle on an
inclined line (2005 paper, Eq. 32), the block on a rough incline and the
inverse Kepler problem (encyclopedia article), the point on a growing circle
(textbook chapter) and the trammel with massless sliders (singular mass
matrix).

How the power theorem is checked. ``Trajectory.energy_balance()`` integrates
the recorded powers with the trapezoidal rule, whose error on a smooth power
``P`` is ``(t_end - t0) dt^2 / 12 * P''`` at some point: it is exact for
piecewise-linear powers whose kinks lie on the grid (the incline, with the
stop time put into ``t_eval``), and for smooth powers the test bounds it by
that formula with ``P''`` from second differences. The physics itself (the
energy change equals the work) is checked with Simpson's rule, whose
``dt^4`` error leaves only the integration error of the simulation.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from udk_notebooks import (
    NonUniqueAccelerationError,
    lagrange_multipliers,
    simulate,
    udwadia_kalaba,
    virtual_displacements,
)
from udk_notebooks.core import cholesky_or_none
from udk_notebooks.examples import growing_circle, incline_friction, inclined_line, kepler, singular_mass

TIGHT = dict(method="DOP853", rtol=1e-11, atol=1e-12)
SPAN = 10.0


# -- helpers -----------------------------------------------------------------
def _simpson_balance(traj) -> np.ndarray:
    """``h(t) - h(t0) - work`` at every other sample, the work by composite Simpson's rule.

    Needs an odd number of equally spaced samples; the error is
    ``O(dt^4)`` (each pair of intervals integrates cubics exactly).
    """
    power = sum(traj.power.values())
    dt = np.diff(traj.t)
    assert len(traj.t) % 2 == 1 and np.ptp(dt) <= 1e-9 * dt.max(), "Simpson's rule needs an odd, uniform grid"
    pairs = dt[0] / 3 * (power[:-2:2] + 4 * power[1:-1:2] + power[2::2])
    work = np.concatenate([[0.0], np.cumsum(pairs)])
    return traj.energy[::2] - traj.energy[0] - work


def _simpson_bound(traj) -> float:
    """Composite Simpson's error bound ``(t_end - t0) dt^4 / 180 max|P|``, ``P`` from fourth differences."""
    power = sum(traj.power.values())
    return (traj.t[-1] - traj.t[0]) / 180 * np.abs(np.diff(power, 4)).max()


def _trapezoid_bound(traj) -> float:
    """The trapezoidal rule's error bound ``(t_end - t0) dt^2 / 12 max|P''|`` for the recorded powers."""
    power = sum(traj.power.values())
    dt = np.diff(traj.t).max()
    curvature = np.abs(np.diff(power, 2)).max() / dt**2
    return (traj.t[-1] - traj.t[0]) * dt**2 / 12 * curvature


def _assert_consistent(cm, q0, qd0, params, t0=0.0, tol=1e-12):
    phi, vel = cm.residuals(t0, q0, qd0, cm.parameters(params))
    assert np.abs(phi).max(initial=0.0) <= tol
    assert np.abs(vel).max(initial=0.0) <= tol


# -- inclined line, 2005 paper Sec. 4 -------------------------------------------
@pytest.mark.parametrize("slope", [1.0, 0.0, -0.5, 2.5])
def test_inclined_line_eq32_force_terms(slope):
    params = dict(k=slope)
    cm = inclined_line.model().compile()
    q0, qd0 = inclined_line.initial_state(1.5, **params)
    _assert_consistent(cm, q0, qd0, params)
    motion = cm.motion(0.0, q0, qd0, **params)
    exact = inclined_line.exact_motion(**params)
    for name in ("qdd", "impressed", "ideal", "nonideal"):
        np.testing.assert_allclose(getattr(motion, name), getattr(exact, name), atol=1e-12, err_msg=name)
    # The paper's numbers for k = 1, c = (1, 2): x'' = (-g + 3) / 2 along (1, 1).
    if slope == 1.0:
        np.testing.assert_allclose(motion.qdd, [(3 - 9.81) / 2] * 2, atol=1e-12)
    # Virtual work (Eqs. 16, 18): none for F^L, that of c for F^C.
    along = np.array([1.0, slope]) / math.hypot(1.0, slope)
    assert abs(along @ motion.ideal) <= 1e-12
    assert along @ motion.nonideal == pytest.approx(along @ np.array([1.0, 2.0]), abs=1e-12)


def test_inclined_line_motion_and_power():
    params = dict(k=0.7, m=2.0)
    q0, qd0 = inclined_line.initial_state(3.0, **params)
    t = np.linspace(0.0, SPAN, 501)
    traj = simulate(inclined_line.model(**params), (0.0, SPAN), q0, qd0, t_eval=t, **TIGHT)
    q_exact, qd_exact = inclined_line.exact_state(t, q0, qd0, **params)
    np.testing.assert_allclose(traj.q, q_exact, atol=1e-8)
    np.testing.assert_allclose(traj.qd, qd_exact, atol=1e-9)
    # Every power is linear in t here, so the trapezoidal rule is exact.
    assert np.abs(traj.energy_balance()).max() <= 1e-8 * np.abs(traj.energy).max()
    assert np.abs(traj.power["ideal"]).max() <= 1e-10


# -- block on a rough incline, encyclopedia article ------------------------------
def _encyclopedia_forces(mass, grav, angle, friction, sign):
    """The article's F_ci = m g (-sin a cos a, cos^2 a) and F_cni = (I - A^+ A) C.

    The article prints F_cni as ``-mu m g cos a sgn(y') (cos^2 a, sin a cos a)``,
    one factor ``cos a`` too many: ``C`` already lies along the line, so the
    projector leaves it unchanged, and only ``F_cni = C`` agrees with the
    article's own acceleration ``-g (sin a + mu cos a sgn(y')) (cos a, sin a)``.
    """
    ideal = mass * grav * np.array([-np.sin(angle) * np.cos(angle), np.cos(angle) ** 2])
    row = np.array([[-np.tan(angle), 1.0]])
    projector = np.eye(2) - np.linalg.pinv(row) @ row
    coulomb = -friction * mass * grav * np.cos(angle) * sign * np.array([np.cos(angle), np.sin(angle)])
    return ideal, projector @ coulomb


@pytest.mark.parametrize("angle, friction", [(np.pi / 6, 0.3), (0.3, 0.1), (1.0, 0.8)])
@pytest.mark.parametrize("speed", [4.0, -2.0])
def test_incline_force_terms_match_encyclopedia(angle, friction, speed):
    params = dict(alpha=angle, mu=friction, m=1.7)
    cm = incline_friction.model(**params).compile()
    q0, qd0 = incline_friction.initial_state(speed, **params)
    _assert_consistent(cm, q0, qd0, {})
    motion = cm.motion(0.0, q0, qd0)
    sign = int(np.sign(speed))
    ideal, nonideal = _encyclopedia_forces(1.7, 9.81, angle, friction, sign)
    np.testing.assert_allclose(motion.ideal, ideal, atol=1e-12)
    np.testing.assert_allclose(motion.nonideal, nonideal, atol=1e-12)
    np.testing.assert_allclose(motion.impressed, [0.0, -1.7 * 9.81], atol=1e-12)
    acceleration = -9.81 * (np.sin(angle) + friction * np.cos(angle) * sign) * np.array([np.cos(angle), np.sin(angle)])
    np.testing.assert_allclose(motion.qdd, acceleration, atol=1e-12)
    exact = incline_friction.exact_motion(sign, **params)
    np.testing.assert_allclose(motion.qdd, exact.qdd, atol=1e-12)
    np.testing.assert_allclose(motion.nonideal, exact.nonideal, atol=1e-12)


@pytest.mark.parametrize("static, expected", [(0.7, 0), (0.5, -1)])
def test_incline_at_rest_sticks_or_slides(static, expected):
    params = dict(alpha=np.pi / 6, mu=0.3, mu_s=static)  # tan(pi/6) = 0.577
    cm = incline_friction.model(**params).compile()
    motion = cm.motion(0.0, np.zeros(2), np.zeros(2))
    exact = incline_friction.exact_motion(expected, **params)
    for name in ("qdd", "ideal", "nonideal"):
        np.testing.assert_allclose(getattr(motion, name), getattr(exact, name), atol=1e-12, err_msg=name)


def _incline_run(params, speed=5.0, samples=1001):
    t_stop = incline_friction.stop_time(speed, **params)
    t = np.union1d(np.linspace(0.0, SPAN, samples), [t_stop])  # the kink of the power on the grid
    q0, qd0 = incline_friction.initial_state(speed, **params)
    traj = simulate(incline_friction.model(**params), (0.0, SPAN), q0, qd0, t_eval=t, **TIGHT)
    return traj, t_stop


@pytest.mark.parametrize(
    "params, after",
    [
        (dict(mu=0.3), -1),  # mu_s = mu = 0.3 < tan(30 deg): slides back
        (dict(mu=0.3, mu_s=0.7), 0),  # static friction holds
        (dict(mu=0.7), 0),
        (dict(alpha=1.0, mu=0.2, mu_s=0.9), -1),
    ],
)
def test_incline_stop_then_stick_or_slide_back(params, after):
    traj, t_stop = _incline_run(params)
    q_exact, qd_exact = incline_friction.exact_state(traj.t, 5.0, **params)
    np.testing.assert_allclose(traj.q, q_exact, atol=1e-9)
    np.testing.assert_allclose(traj.qd, qd_exact, atol=1e-9)
    modes = traj.modes[:, 0]
    assert np.count_nonzero(np.diff(modes)) == 1, "exactly one switch, no chattering"
    assert set(modes[traj.t < t_stop - 1e-9]) == {1}
    assert set(modes[traj.t > t_stop + 1e-9]) == {after}
    if after == 0:
        resting = traj.t > t_stop + 1e-9
        assert np.abs(traj.qd[resting]).max() <= 1e-12
        assert np.ptp(traj.q[resting], axis=0).max() <= 1e-12
        holding = incline_friction.exact_motion(0, **params).nonideal
        np.testing.assert_allclose(traj.nonideal[resting], np.broadcast_to(holding, (resting.sum(), 2)), atol=1e-12)
    # Powers are piecewise linear with the kink on the grid: the trapezoidal rule is exact.
    scale = np.abs(traj.energy).max()
    assert np.abs(traj.energy_balance()).max() <= 1e-9 * scale
    assert traj.power["nonideal"].min() < -1.0  # friction takes energy out
    assert np.abs(traj.power["ideal"]).max() <= 1e-10


def test_incline_solver_steps_record_one_switch():
    traj = simulate(incline_friction.model(mu=0.3), (0.0, SPAN), *incline_friction.initial_state(5.0), **TIGHT)
    assert np.count_nonzero(np.diff(traj.modes[:, 0])) == 1
    assert len(traj.t) < 200


def test_incline_exact_state_refuses_inconsistent_friction():
    with pytest.raises(ValueError, match="mu_s"):
        incline_friction.exact_state([0.0, 1.0], 5.0, mu=0.9, mu_s=0.2)


@pytest.mark.parametrize("speed", [0.0, 2.0])
def test_incline_without_gravity_never_stops(speed):
    """g = 0: no normal force, no friction, nothing along the slope; the block keeps its speed."""
    t = np.linspace(0.0, 3.0, 7)
    q, qd = incline_friction.exact_state(t, speed, g=0.0)
    tangent = np.array([math.cos(math.pi / 6), math.sin(math.pi / 6)])
    np.testing.assert_allclose(q, speed * t[:, None] * tangent, atol=1e-15)
    np.testing.assert_allclose(qd, speed * np.ones_like(t)[:, None] * tangent, atol=1e-15)
    assert incline_friction.stop_time(speed, g=0.0) == (math.inf if speed else 0.0)
    traj = simulate(incline_friction.model(g=0.0), (0.0, 3.0), *incline_friction.initial_state(speed), t_eval=t, **TIGHT)
    np.testing.assert_allclose(traj.q, q, atol=1e-12)


# -- inverse Kepler problem, encyclopedia article --------------------------------
ORBITS = kepler.ECCENTRICITIES


def _central_force_route(t, params):
    """The free inverse-square problem, integrated with no constraints at all."""
    strength = kepler.force_constant(**params) / params.get("m", 1.0)
    q0, qd0 = kepler.initial_state(**params)

    def rhs(_, state):
        r = math.hypot(state[0], state[1])
        return np.concatenate([state[2:], -strength * state[:2] / r**3])

    sol = solve_ivp(rhs, (t[0], t[-1]), np.concatenate([q0, qd0]), method="DOP853", rtol=1e-12, atol=1e-12, t_eval=t)
    return sol.y[:2].T, sol.y[2:].T


@pytest.mark.parametrize("orbit", ORBITS)
@pytest.mark.parametrize("momentum", [1.0, -1.3])
def test_kepler_time_law_matches_central_force(orbit, momentum):
    params = dict(epsilon=ORBITS[orbit], L=momentum, m=0.8)
    t = np.linspace(0.0, SPAN, 201)
    q_exact, qd_exact = kepler.exact_state(t, **params)
    q_ivp, qd_ivp = _central_force_route(t, params)
    np.testing.assert_allclose(q_exact, q_ivp, atol=1e-9)
    np.testing.assert_allclose(qd_exact, qd_ivp, atol=1e-9)
    theta = np.arctan2(q_exact[:, 1], q_exact[:, 0])
    np.testing.assert_allclose(np.hypot(*q_exact.T), kepler.orbit_radius(theta, **params), rtol=1e-12)


@pytest.mark.parametrize("orbit", ORBITS)
def test_kepler_constraint_force_is_inverse_square(orbit):
    params = dict(epsilon=ORBITS[orbit], L=1.4, m=2.0, ell=0.7)
    cm = kepler.model().compile()
    q0, qd0 = kepler.initial_state(**params)
    _assert_consistent(cm, q0, qd0, params)
    rng = np.random.default_rng(3)
    for t in np.concatenate([[0.0], rng.uniform(-3.0, 3.0, 5)]):
        (q,), (qd,) = kepler.exact_state([t], **params)
        motion = cm.motion(0.0, q, qd, **params)
        np.testing.assert_allclose(motion.ideal, kepler.exact_force(q, **params), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(motion.impressed, 0.0, atol=0)
        np.testing.assert_allclose(motion.nonideal, 0.0, atol=0)
        # Inverse square, strength L^2 / (m ell), pointing at the focus.
        r = np.hypot(*q)
        assert np.linalg.norm(motion.ideal) == pytest.approx(1.4**2 / (2.0 * 0.7 * r**2), rel=1e-10)
        assert motion.ideal @ q == pytest.approx(-np.linalg.norm(motion.ideal) * r, rel=1e-10)


@pytest.mark.parametrize("orbit", ["ellipse", "parabola", "hyperbola"])
def test_kepler_motion_energy_and_orbit(orbit):
    params = dict(epsilon=ORBITS[orbit])
    q0, qd0 = kepler.initial_state(**params)
    t = np.linspace(0.0, SPAN, 4001)
    traj = simulate(kepler.model(**params), (0.0, SPAN), q0, qd0, t_eval=t, **TIGHT)
    q_exact, qd_exact = kepler.exact_state(t, **params)
    np.testing.assert_allclose(traj.q, q_exact, atol=1e-8)
    np.testing.assert_allclose(traj.qd, qd_exact, atol=1e-8)
    np.testing.assert_allclose(traj.ideal, kepler.exact_force(traj.q, **params), atol=1e-8)
    # The ideal force of the affine constraint m (x y' - y x') = L does work ...
    assert np.abs(traj.power["ideal"]).max() > 0.1
    # ... and the power theorem accounts for it.
    scale = np.abs(traj.energy).max()
    assert np.abs(_simpson_balance(traj)).max() <= 2 * _simpson_bound(traj) + 1e-9 * scale
    assert np.abs(traj.energy_balance()).max() <= 2 * _trapezoid_bound(traj) + 1e-8 * scale
    # T - k / r is the conic's energy.
    potential = -kepler.force_constant(**params) / np.hypot(*traj.q.T)
    np.testing.assert_allclose(traj.energy + potential, kepler.orbital_energy(**params), atol=1e-8)


# -- point on a growing circle, textbook chapter --------------------------------
CIRCLES = {
    "default": (dict(), 0.0),
    "fixed circle": (dict(a=0.0), 0.0),
    "textbook R = a t": (dict(R0=0.0, a=1.0), 0.5),
}


@pytest.mark.parametrize("case", CIRCLES)
def test_growing_circle_exact_motion(case):
    params, t0 = CIRCLES[case]
    q0, qd0 = growing_circle.initial_state(0.3, 2.0, t0, **params)
    cm = growing_circle.model(**params).compile()
    _assert_consistent(cm, q0, qd0, {}, t0=t0)
    t = np.linspace(t0, t0 + SPAN, 4001)
    traj = simulate(cm, (t0, t0 + SPAN), q0, qd0, t_eval=t, **TIGHT)
    q_exact, qd_exact = growing_circle.exact_state(t, 0.3, 2.0, t0, **params)
    np.testing.assert_allclose(traj.q, q_exact, atol=1e-8)
    np.testing.assert_allclose(traj.qd, qd_exact, atol=1e-8)
    force = growing_circle.exact_ideal_force(t, 0.3, 2.0, t0, **params)
    np.testing.assert_allclose(traj.ideal, force, atol=1e-8)
    rate = cm.parameters({})[cm.parameter_names.index("a")]
    np.testing.assert_allclose(traj.power["ideal"], rate * np.einsum("ij,ij->i", force, q_exact) / np.hypot(*q_exact.T), atol=1e-8)
    if rate:
        assert traj.power["ideal"].max() < 0.0  # the growing circle slows the particle down
    scale = np.abs(traj.energy).max()
    assert np.abs(_simpson_balance(traj)).max() <= 2 * _simpson_bound(traj) + 1e-9 * scale
    assert np.abs(traj.energy_balance()).max() <= 2 * _trapezoid_bound(traj) + 1e-8 * scale


def test_growing_circle_ideal_force_does_no_virtual_work_but_does_work():
    cm = growing_circle.model(g=9.81).compile()
    q0, qd0 = growing_circle.initial_state(1.0, 1.5)
    motion = cm.motion(0.0, q0, qd0)
    _, _, A, _, _ = cm.evaluate(0.0, q0, qd0, cm.parameters({}))
    virtual = virtual_displacements(A)
    assert np.abs(virtual.T @ motion.ideal).max() <= 1e-12
    assert abs(qd0 @ motion.ideal) > 1.0


def test_growing_circle_with_gravity_power_theorem():
    t = np.linspace(0.0, SPAN, 4001)
    q0, qd0 = growing_circle.initial_state(-1.0, 2.0, g=9.81)
    traj = simulate(growing_circle.model(g=9.81), (0.0, SPAN), q0, qd0, t_eval=t, **TIGHT)
    assert np.abs(traj.position_residual).max() <= 1e-8
    scale = np.abs(traj.energy).max()
    assert np.abs(_simpson_balance(traj)).max() <= 2 * _simpson_bound(traj) + 1e-9 * scale
    assert np.abs(traj.energy_balance()).max() <= 2 * _trapezoid_bound(traj) + 1e-8 * scale
    assert np.abs(traj.work()["ideal"]).max() > 1.0
    with pytest.raises(ValueError, match="g"):
        growing_circle.exact_state(t, g=9.81)


# -- trammel with massless sliders: singular mass matrix --------------------------
def _minimal_second_derivatives(theta, theta_dot, theta_ddot, params):
    """``q''`` of the four coordinates from the minimal coordinate's motion.

    Every coordinate is a multiple of ``cos(theta)`` or ``sin(theta)``, so
    ``d2q/dtheta2 = -q`` and ``q'' = (dq/dtheta) theta'' - q theta'^2``.
    """
    q, tangent = singular_mass.state_from_angle(theta, 1.0, **params)
    return tangent * theta_ddot - q * theta_dot**2


@pytest.mark.parametrize("fraction", [0.25, 0.5, 0.8])
def test_singular_mass_augmented_form_matches_saddle_point_and_minimal(fraction):
    params = dict(c=fraction, l=1.3, m=0.6)
    cm = singular_mass.model(**params).compile()
    p = cm.parameters({})
    rng = np.random.default_rng(7)
    for theta, theta_dot in zip(rng.uniform(-np.pi, np.pi, 6), rng.uniform(-3.0, 3.0, 6)):
        q, qd = singular_mass.state_from_angle(theta, theta_dot, **params)
        _assert_consistent(cm, q, qd, {})
        M, Q, A, b, _ = cm.evaluate(0.0, q, qd, p)
        assert np.linalg.matrix_rank(M) == 2 and cholesky_or_none(M) is None
        assert np.linalg.matrix_rank(np.vstack([M, A])) == 4
        motion = cm.motion(0.0, q, qd)
        qdd, lam = lagrange_multipliers(M, Q, A, b)
        np.testing.assert_allclose(motion.qdd, qdd, atol=1e-10)
        np.testing.assert_allclose(motion.ideal, A.T @ lam, atol=1e-10)
        np.testing.assert_allclose(A @ motion.qdd, b, atol=1e-10)
        theta_ddot = singular_mass.minimal_acceleration(theta, theta_dot, **params)
        np.testing.assert_allclose(motion.qdd, _minimal_second_derivatives(theta, theta_dot, theta_ddot, params), atol=1e-10)
        # Without the rows that tie the sliders to the bob, [M; A] loses rank.
        with pytest.raises(NonUniqueAccelerationError):
            udwadia_kalaba(M, Q, A[:1], b[:1])
        # Massless sliders pass forces on: no net constraint force on them.
        np.testing.assert_allclose(motion.ideal[:2], 0.0, atol=1e-10)


def test_singular_mass_simulation_matches_minimal_coordinate():
    params = dict(c=0.3)
    theta0, rate0 = -np.pi / 2 + 1.2, 0.4
    q0, qd0 = singular_mass.initial_state(theta0, rate0, **params)
    t = np.linspace(0.0, SPAN, 2001)
    traj = simulate(singular_mass.model(**params), (0.0, SPAN), q0, qd0, t_eval=t, **TIGHT)

    def rhs(_, state):
        return [state[1], singular_mass.minimal_acceleration(state[0], state[1], **params)]

    sol = solve_ivp(rhs, (0.0, SPAN), [theta0, rate0], method="DOP853", rtol=1e-12, atol=1e-12, t_eval=t)
    q_min, qd_min = singular_mass.state_from_angle(sol.y[0], sol.y[1], **params)
    np.testing.assert_allclose(traj.q, q_min, atol=1e-7)
    np.testing.assert_allclose(traj.qd, qd_min, atol=1e-7)
    np.testing.assert_allclose(singular_mass.angle(traj.q), sol.y[0], atol=1e-7)
    energy = singular_mass.minimal_energy(sol.y[0], sol.y[1], **params)
    np.testing.assert_allclose(traj.energy, energy, atol=1e-8)
    # Scleronomic, ideal, no other forces: energy conserved, no power anywhere.
    assert np.ptp(traj.energy) <= 1e-8
    assert np.abs(traj.energy_balance()).max() <= 1e-8
    assert np.abs(traj.power["ideal"]).max() <= 1e-8


@pytest.mark.parametrize("masses", [(0.0, 0.0), (0.7, 0.0), (0.0, 1.3), (2.0, 0.4)])
def test_trammel_with_slider_masses_matches_minimal_coordinate(masses):
    """Slider masses from zero (singular M) to positive (regular M): the same Lagrange route agrees."""
    params = dict(c=0.3, l=1.1, m=0.8, mA=masses[0], mB=masses[1])
    cm = singular_mass.model(**params).compile()
    rng = np.random.default_rng(11)
    for theta, theta_dot in zip(rng.uniform(-np.pi, np.pi, 5), rng.uniform(-3.0, 3.0, 5)):
        q, qd = singular_mass.state_from_angle(theta, theta_dot, **params)
        motion = cm.motion(0.0, q, qd)
        theta_ddot = singular_mass.minimal_acceleration(theta, theta_dot, **params)
        np.testing.assert_allclose(motion.qdd, _minimal_second_derivatives(theta, theta_dot, theta_ddot, params),
                                   atol=1e-10)
        M = cm.evaluate(0.0, q, qd, cm.parameters({}))[0]
        assert np.linalg.matrix_rank(M) == 2 + (masses[0] > 0) + (masses[1] > 0)
