"""Tests for udk_notebooks.simulation: simulate, Trajectory, project_initial_state.

Each trajectory is checked against a route that does not go through the
Udwadia-Kalaba solver: the pendulum's angle equation integrated separately
with scipy, closed-form power of the dissipative forces, the closed-form
stick-slip motion of a block on a rough incline, and the textbook orders of
convergence of Euler and RK4.
"""

import math

import numpy as np
import pytest
import sympy as sm
from scipy.integrate import solve_ivp
from sympy.physics.mechanics import dynamicsymbols

from udk_notebooks.errors import ConstraintViolationError, SimulationError, UnstableGainError
from udk_notebooks.model import CoulombFriction, Model
from udk_notebooks.simulation import Trajectory, project_initial_state, simulate

t = dynamicsymbols._t
x, y = dynamicsymbols("x y")
xd, yd = x.diff(t), y.diff(t)
m, g, l, c, mu, alpha = sm.symbols("m g l c mu alpha", positive=True)

MASS, GRAVITY, LENGTH = 1.3, 9.81, 1.2
THETA0, RATE0 = 1.0, 0.3  # initial angle from the downward vertical, and its rate


# -- the Cartesian pendulum and its angle equation ---------------------------------
def pendulum(**kwargs) -> Model:
    """Bob of mass m on a rod of length l: x^2 + y^2 - l^2 = 0, gravity along -y."""
    options = dict(
        kinetic_energy=m * (xd**2 + yd**2) / 2,
        potential_energy=m * g * y,
        holonomic=[x**2 + y**2 - l**2],
        parameters={m: MASS, g: GRAVITY, l: LENGTH},
    )
    options.update(kwargs)
    return Model([x, y], **options)


def cartesian_state(theta, rate, length=LENGTH):
    q = length * np.array([math.sin(theta), -math.cos(theta)])
    qd = length * rate * np.array([math.cos(theta), math.sin(theta)])
    return q, qd


def angle_solution(times, theta0=THETA0, rate0=RATE0, gravity=GRAVITY, length=LENGTH):
    """theta'' = -(g/l) sin(theta) with DOP853 at rtol 1e-12; returns Cartesian positions, shape (N, 2)."""
    sol = solve_ivp(
        lambda _, s: [s[1], -gravity / length * math.sin(s[0])],
        (0.0, float(times[-1])), [theta0, rate0], method="DOP853", t_eval=times, rtol=1e-12, atol=1e-12,
    )
    assert sol.success
    theta = sol.y[0]
    return length * np.column_stack([np.sin(theta), -np.cos(theta)])


@pytest.fixture(scope="module")
def pendulum_model():
    return pendulum()


def test_pendulum_against_angle_equation(pendulum_model):
    times = np.linspace(0.0, 10.0, 401)
    q0, qd0 = cartesian_state(THETA0, RATE0)
    traj = simulate(pendulum_model, (0.0, 10.0), q0, qd0, method="DOP853", rtol=1e-11, atol=1e-12, t_eval=times)
    assert isinstance(traj, Trajectory)
    np.testing.assert_array_equal(traj.t, times)
    reference = angle_solution(times)
    error = np.abs(traj.q - reference).max()
    assert error < 1e-7, f"max position error {error:.3e}"
    np.testing.assert_allclose(traj.coordinate("x"), traj.q[:, 0])
    # Drift stays tiny at this tolerance, and the sampled qdd satisfies A q'' = b.
    assert np.abs(traj.position_residual).max() < 1e-8
    lhs = 2 * np.einsum("ij,ij->i", traj.q, traj.qdd)
    rhs = -2 * np.einsum("ij,ij->i", traj.qd, traj.qd)
    np.testing.assert_allclose(lhs, rhs, rtol=0, atol=1e-9)


def test_energy_is_conserved_with_ideal_scleronomic_constraints(pendulum_model):
    times = np.linspace(0.0, 10.0, 201)
    q0, qd0 = cartesian_state(THETA0, RATE0)
    traj = simulate(pendulum_model, (0.0, 10.0), q0, qd0, method="DOP853", rtol=1e-11, atol=1e-12, t_eval=times)
    h0 = MASS * (qd0 @ qd0) / 2 + MASS * GRAVITY * q0[1]  # computed here, not by the package
    assert traj.energy[0] == pytest.approx(h0, rel=1e-14)
    assert np.abs(traj.energy - h0).max() < 1e-8 * MASS * GRAVITY * LENGTH
    # The ideal force does no work along the motion (scleronomic), and nothing else acts.
    assert np.abs(traj.power["ideal"]).max() < 1e-8
    for name in ("nonideal", "nonconservative", "explicit_time"):
        np.testing.assert_allclose(traj.power[name], 0.0, atol=1e-12)
    assert np.abs(traj.energy_balance()).max() < 1e-7


def test_power_theorem_with_rayleigh_damping():
    damping = 0.4
    model = pendulum(dissipation=c * (xd**2 + yd**2) / 2, parameters={m: MASS, g: GRAVITY, l: LENGTH, c: damping})
    times = np.linspace(0.0, 5.0, 4001)
    q0, qd0 = cartesian_state(THETA0, RATE0)
    traj = simulate(model, (0.0, 5.0), q0, qd0, method="DOP853", rtol=1e-11, atol=1e-12, t_eval=times)
    speed2 = np.einsum("ij,ij->i", traj.qd, traj.qd)
    # Power of -c q' is -c |q'|^2: never positive, negative while moving.
    np.testing.assert_allclose(traj.power["nonconservative"], -damping * speed2, rtol=1e-12, atol=1e-14)
    moving = speed2 > 1e-6
    assert moving.mean() > 0.9
    assert np.all(traj.power["nonconservative"][moving] < 0)
    # h decreases, and h(t) - h(0) equals the (trapezoidal) dissipated work.
    h = MASS * speed2 / 2 + MASS * GRAVITY * traj.q[:, 1]
    np.testing.assert_allclose(traj.energy, h, rtol=1e-12, atol=1e-12)
    assert np.all(np.diff(traj.energy) < 1e-12)
    assert traj.energy[-1] < traj.energy[0] - 1.0
    balance = traj.energy_balance()
    assert np.abs(balance).max() < 1e-5 * (traj.energy[0] - traj.energy[-1])
    work = traj.work()["nonconservative"]
    assert work[-1] == pytest.approx(traj.energy[-1] - traj.energy[0], rel=1e-5)


def test_power_theorem_with_coulomb_friction_on_a_circle():
    """Bead on a vertical circle with friction: P = -mu N |s|, N = |m |v|^2 / l - m g y / l| (radial balance)."""
    friction = 0.15
    model = pendulum(
        friction=[CoulombFriction((x * yd - y * xd) / l, mu)],
        parameters={m: MASS, g: GRAVITY, l: LENGTH, mu: friction},
    )
    q0, qd0 = cartesian_state(0.0, 4.0)  # from the bottom, fast
    times = np.linspace(0.0, 1.0, 4001)
    traj = simulate(model, (0.0, 1.0), q0, qd0, method="DOP853", rtol=1e-11, atol=1e-12, t_eval=times)
    # It swings up, stops once (below the horizontal, where friction cannot hold it) and slides back.
    modes = traj.modes[:, 0]
    assert modes[0] == 1 and modes[-1] == -1 and np.count_nonzero(np.diff(modes)) == 1
    speed = np.sqrt(np.einsum("ij,ij->i", traj.qd, traj.qd))
    normal = np.abs(MASS * speed**2 / LENGTH - MASS * GRAVITY * traj.q[:, 1] / LENGTH)
    np.testing.assert_allclose(traj.power["nonideal"], -friction * normal * speed, rtol=1e-8, atol=1e-10)
    assert np.all(traj.power["nonideal"][speed > 1e-6] < 0)
    np.testing.assert_allclose(np.linalg.norm(traj.ideal, axis=1), normal, rtol=1e-8)
    balance = traj.energy_balance()
    dissipated = traj.energy[0] - traj.energy[-1]
    assert dissipated > 1.0
    assert np.abs(balance).max() < 1e-5 * dissipated


# -- fixed-step convergence ----------------------------------------------------------------
def fixed_step_error(model, method, step, t_end):
    q0, qd0 = cartesian_state(THETA0, RATE0)
    traj = simulate(model, (0.0, t_end), q0, qd0, method=method, step=step)
    assert traj.t[-1] == pytest.approx(t_end, abs=1e-12)
    assert len(traj.t) == round(t_end / step) + 1
    reference = angle_solution(np.array([0.0, t_end]))[-1]
    return np.linalg.norm(traj.q[-1] - reference)


@pytest.mark.parametrize(
    "method, steps, order",
    [("rk4", (0.04, 0.02, 0.01), 4), ("euler", (2e-3, 1e-3, 5e-4), 1)],
)
def test_fixed_step_order_of_convergence(pendulum_model, method, steps, order):
    errors = [fixed_step_error(pendulum_model, method, h, 2.0) for h in steps]
    ratios = [errors[i] / errors[i + 1] for i in range(len(errors) - 1)]
    observed = [math.log2(r) for r in ratios]
    assert all(abs(p - order) < 0.15 * order for p in observed), (errors, observed)
    if method == "rk4":
        assert errors[-1] < 1e-6


def test_default_step_is_a_thousandth_of_the_span(pendulum_model):
    q0, qd0 = cartesian_state(THETA0, RATE0)
    traj = simulate(pendulum_model, (0.0, 0.5), q0, qd0)
    assert traj.method == "rk4"
    np.testing.assert_allclose(np.diff(traj.t), 0.5 / 1000, rtol=1e-9)


# -- initial states off the constraints ---------------------------------------------------
def test_violating_initial_state_is_refused_with_its_residual(pendulum_model):
    q0, qd0 = cartesian_state(THETA0, RATE0)
    q_bad = 1.01 * q0
    qd_bad = qd0 + 0.05 * q0 / LENGTH  # a radial component
    position = abs(q_bad @ q_bad - LENGTH**2)
    velocity = abs(2 * q_bad @ qd_bad)
    with pytest.raises(ConstraintViolationError) as info:
        simulate(pendulum_model, (0.0, 1.0), q_bad, qd_bad)
    message = str(info.value)
    assert f"{position:.3e}" in message and f"{velocity:.3e}" in message
    assert info.value.position == pytest.approx(position, rel=1e-12)
    assert info.value.velocity == pytest.approx(velocity, rel=1e-12)
    assert "project=True" in message
    assert isinstance(info.value, ValueError)


def test_velocity_violation_alone_is_refused(pendulum_model):
    q0, qd0 = cartesian_state(THETA0, RATE0)
    qd_bad = qd0 + 1e-3 * q0
    with pytest.raises(ConstraintViolationError) as info:
        simulate(pendulum_model, (0.0, 1.0), q0, qd_bad)
    assert info.value.position < 1e-14
    assert info.value.velocity == pytest.approx(abs(2 * q0 @ qd_bad), rel=1e-12)


def test_position_violation_alone_is_refused(pendulum_model):
    q0, qd0 = cartesian_state(THETA0, RATE0)
    q_bad = 1.001 * q0  # qd0 stays tangent: q . qd = 0
    with pytest.raises(ConstraintViolationError) as info:
        simulate(pendulum_model, (0.0, 1.0), q_bad, qd0)
    assert info.value.position == pytest.approx(abs(q_bad @ q_bad - LENGTH**2), rel=1e-12)
    assert info.value.velocity < 1e-14
    # Below `constraint_tol` it is accepted.
    simulate(pendulum_model, (0.0, 0.1), (1 + 1e-12) * q0, qd0, step=0.01)


def test_project_initial_state_fixes_it(pendulum_model):
    q0, qd0 = cartesian_state(THETA0, RATE0)
    q_bad = 1.01 * q0 + np.array([0.003, -0.002])
    qd_bad = qd0 + 0.05 * q0
    q, qd = project_initial_state(pendulum_model, q_bad, qd_bad)
    assert abs(q @ q - LENGTH**2) < 1e-12
    assert abs(q @ qd) < 1e-12
    # Minimum-norm Gauss-Newton steps on a circle move radially, then remove the radial velocity.
    np.testing.assert_allclose(q, LENGTH * q_bad / np.linalg.norm(q_bad), rtol=0, atol=1e-10)
    radial = q / LENGTH
    np.testing.assert_allclose(qd, qd_bad - (qd_bad @ radial) * radial, rtol=0, atol=1e-10)
    traj = simulate(pendulum_model, (0.0, 1.0), q_bad, qd_bad, project=True, step=0.01)
    np.testing.assert_allclose(traj.q[0], q, atol=1e-15)
    np.testing.assert_allclose(traj.qd[0], qd, atol=1e-15)
    assert abs(traj.position_residual[0, 0]) < 1e-12
    assert np.abs(traj.position_residual).max() < 1e-6  # RK4 drift over 100 steps, no stabilization


# -- stabilization gains ---------------------------------------------------------------------
def _stabilization():
    return pytest.importorskip(
        "udk_notebooks.stabilization", reason="udk_notebooks.stabilization is not importable yet"
    )


@pytest.mark.parametrize("method", ["rk4", "euler"])
def test_unstable_gain_is_refused(pendulum_model, method):
    stab = _stabilization()
    q0, qd0 = cartesian_state(THETA0, RATE0)
    gain = stab.Baumgarte(alpha=100.0, beta=100.0)  # error eigenvalue -100 (double): tau * 100 = 10 > 2.79
    with pytest.raises(UnstableGainError):
        simulate(pendulum_model, (0.0, 1.0), q0, qd0, method=method, step=0.1, stabilization=gain)


def test_stable_gain_runs_and_reduces_drift(pendulum_model):
    stab = _stabilization()
    q0, qd0 = cartesian_state(THETA0, RATE0)
    kwargs = dict(method="euler", step=1e-3)
    plain = simulate(pendulum_model, (0.0, 3.0), q0, qd0, **kwargs)
    # tau * 20 = 0.02, well inside Euler's interval (0, 2).
    held = simulate(pendulum_model, (0.0, 3.0), q0, qd0, stabilization=stab.Baumgarte(alpha=20.0, beta=20.0), **kwargs)
    drift_plain = np.abs(plain.position_residual).max()
    drift_held = np.abs(held.position_residual).max()
    assert drift_held < drift_plain / 10, (drift_plain, drift_held)


# -- a block on a rough incline ------------------------------------------------------------------
SLOPE = 0.5  # rad; tan = 0.5463
BLOCK_MASS = 2.0


def incline(friction_coefficient: float) -> Model:
    """Block on y = x tan(alpha), kinetic = static friction mu, s the velocity along the slope."""
    return Model(
        [x, y],
        kinetic_energy=m * (xd**2 + yd**2) / 2,
        potential_energy=m * g * y,
        holonomic=[y - x * sm.tan(alpha)],
        friction=[CoulombFriction(sm.cos(alpha) * xd + sm.sin(alpha) * yd, mu)],
        parameters={m: BLOCK_MASS, g: GRAVITY, alpha: SLOPE, mu: friction_coefficient},
    )


def incline_exact(times, speed, friction_coefficient):
    """Distance u up the slope: decelerate at g (sin a + mu cos a), stop, then stick or slide back."""
    sin, cos = math.sin(SLOPE), math.cos(SLOPE)
    up = GRAVITY * (sin + friction_coefficient * cos)
    down = GRAVITY * (sin - friction_coefficient * cos)
    t_stop = speed / up if speed > 0 else 0.0
    u_stop = speed * t_stop - up * t_stop**2 / 2
    later = np.clip(times - t_stop, 0.0, None)
    back = np.where(friction_coefficient >= math.tan(SLOPE), 0.0, down * later**2 / 2)
    u = np.where(times <= t_stop, speed * times - up * times**2 / 2, u_stop - back)
    return u, t_stop


def assert_on_slope(traj, u, tol):
    direction = np.array([math.cos(SLOPE), math.sin(SLOPE)])
    np.testing.assert_allclose(traj.q, u[:, None] * direction, rtol=0, atol=tol)


INCLINE_METHODS = [("DOP853", {"rtol": 1e-11, "atol": 1e-12}), ("rk4", {"step": 0.01})]


@pytest.mark.parametrize("method, options", INCLINE_METHODS, ids=[mth for mth, _ in INCLINE_METHODS])
@pytest.mark.parametrize(
    "friction_coefficient, regime",
    [(0.2, "slides back"), (0.8, "sticks"), (math.tan(SLOPE) + 1e-9, "sticks")],
    ids=["mu<tan", "mu>tan", "mu=tan+"],
)
def test_block_sent_up_the_incline(method, options, friction_coefficient, regime):
    speed = 3.0
    direction = np.array([math.cos(SLOPE), math.sin(SLOPE)])
    t_eval = np.linspace(0.0, 2.0, 401)
    if method == "DOP853":
        options = dict(options, t_eval=t_eval)
    traj = simulate(incline(friction_coefficient), (0.0, 2.0), np.zeros(2), speed * direction, method=method, **options)
    u, t_stop = incline_exact(traj.t, speed, friction_coefficient)
    assert_on_slope(traj, u, 1e-8)

    modes = traj.modes[:, 0]
    switches = np.count_nonzero(np.diff(modes))
    assert switches == 1, f"{switches} mode switches (chattering?)"
    assert np.all(modes[traj.t < t_stop - 1e-9] == 1)
    after = traj.t > t_stop + 1e-9
    sin, cos = math.sin(SLOPE), math.cos(SLOPE)
    normal = BLOCK_MASS * GRAVITY * cos * np.array([-sin, cos])
    np.testing.assert_allclose(traj.ideal, np.broadcast_to(normal, traj.ideal.shape), rtol=1e-9, atol=1e-9)
    if regime == "sticks":
        assert np.all(modes[after] == 0)
        assert np.abs(traj.qd[after]).max() < 1e-12
        # Static friction holds the block: F^C = m g sin(a) up the slope.
        holding = BLOCK_MASS * GRAVITY * sin * direction
        np.testing.assert_allclose(traj.nonideal[after], np.broadcast_to(holding, (after.sum(), 2)), rtol=1e-9, atol=1e-9)
    else:
        assert np.all(modes[after] == -1)
        kinetic = friction_coefficient * BLOCK_MASS * GRAVITY * cos * direction  # friction opposes the descent
        np.testing.assert_allclose(traj.nonideal[after], np.broadcast_to(kinetic, (after.sum(), 2)), rtol=1e-9, atol=1e-9)
    # While sliding, friction dissipates: P = -mu N |s| < 0.
    sliding = modes != 0
    s = traj.qd @ direction
    np.testing.assert_allclose(
        traj.power["nonideal"][sliding], -friction_coefficient * BLOCK_MASS * GRAVITY * cos * np.abs(s[sliding]), rtol=1e-9, atol=1e-9
    )
    assert np.all(traj.power["nonideal"][sliding & (np.abs(s) > 1e-6)] < 0)


@pytest.mark.parametrize("method, options", INCLINE_METHODS, ids=[mth for mth, _ in INCLINE_METHODS])
def test_block_at_the_friction_limit_does_not_chatter(method, options):
    """mu = tan(alpha) exactly: both regimes give u'' = 0, so the block stays put, with no switching."""
    traj = simulate(incline(math.tan(SLOPE)), (0.0, 1.0), np.zeros(2), np.zeros(2), method=method, **options)
    np.testing.assert_allclose(traj.q, 0.0, atol=1e-12)
    assert np.count_nonzero(np.diff(traj.modes[:, 0])) <= 1


@pytest.mark.parametrize("method, options", INCLINE_METHODS, ids=[mth for mth, _ in INCLINE_METHODS])
@pytest.mark.parametrize("friction_coefficient", [0.2, math.tan(SLOPE) - 1e-3, math.tan(SLOPE) + 1e-9, 0.8])
def test_block_released_at_rest(method, options, friction_coefficient):
    """From rest: slides down at g (sin a - mu cos a) when mu < tan(a), otherwise never moves."""
    traj = simulate(incline(friction_coefficient), (0.0, 1.0), np.zeros(2), np.zeros(2), method=method, **options)
    u, _ = incline_exact(traj.t, 0.0, friction_coefficient)
    assert_on_slope(traj, u, 1e-8)
    expected_mode = -1 if friction_coefficient < math.tan(SLOPE) else 0
    assert np.all(traj.modes[:, 0] == expected_mode)


@pytest.mark.parametrize("method, options", INCLINE_METHODS, ids=[mth for mth, _ in INCLINE_METHODS])
@pytest.mark.parametrize("speed", [3.0, 0.0], ids=["sent-up", "at-rest"])
def test_no_coulomb_motion_is_refused_by_name(method, options, speed):
    """mu_s < tan(a) < mu: static friction cannot hold, kinetic friction allows no slip (no solution)."""
    rough = incline(0.8)
    kinetic, static = rough.parameter_symbols[-1], sm.Symbol("mu_s")
    model = Model(rough.coordinates, kinetic_energy=rough.T, potential_energy=rough.V, holonomic=list(rough.phi),
                  friction=[CoulombFriction(rough.friction[0].sliding_velocity, kinetic, static)],
                  parameters={**rough.parameters, static: 0.3})
    direction = np.array([math.cos(SLOPE), math.sin(SLOPE)])
    # At rest it cannot start (a ValueError); sent up, it fails where it stops, with the samples before kept.
    expected = ValueError if speed == 0.0 else SimulationError
    with pytest.raises(expected, match=r"static friction \(mu_s = 0.3\) cannot hold it at rest, and kinetic "
                                       r"friction \(mu = 0.8\) would stop it at once.*`mu_s`") as caught:
        simulate(model, (0.0, 2.0), np.zeros(2), speed * direction, method=method, **options)
    if speed:
        stop = speed / (GRAVITY * (math.sin(SLOPE) + 0.8 * math.cos(SLOPE)))  # u' = -g (sin a + mu cos a)
        assert caught.value.time == pytest.approx(stop, rel=1e-6)
        kept = caught.value.trajectory
        assert kept is not None and kept.status == "failed" and kept.t[-1] < caught.value.time


@pytest.mark.parametrize("method, options", INCLINE_METHODS, ids=[mth for mth, _ in INCLINE_METHODS])
def test_creeping_block_is_held_at_rest(method, options):
    """A start speed far below any physical scale on a sticky slope counts as rest: no creep over 10 s."""
    direction = np.array([math.cos(SLOPE), math.sin(SLOPE)])
    traj = simulate(incline(0.8), (0.0, 10.0), np.zeros(2), 1e-12 * direction, method=method, **options)
    assert np.all(traj.modes[:, 0] == 0)
    assert np.abs(traj.q).max() < 1e-13


def test_energy_balance_of_the_sliding_block():
    friction_coefficient, speed = 0.2, 3.0
    direction = np.array([math.cos(SLOPE), math.sin(SLOPE)])
    times = np.linspace(0.0, 2.0, 4001)
    traj = simulate(
        incline(friction_coefficient), (0.0, 2.0), np.zeros(2), speed * direction,
        method="DOP853", rtol=1e-11, atol=1e-12, t_eval=times,
    )
    h = BLOCK_MASS * np.einsum("ij,ij->i", traj.qd, traj.qd) / 2 + BLOCK_MASS * GRAVITY * traj.q[:, 1]
    np.testing.assert_allclose(traj.energy, h, rtol=1e-12, atol=1e-12)
    dissipated = traj.energy[0] - traj.energy[-1]
    # The work of friction over the path length: mu m g cos(a) * (up + down distance).
    u, _ = incline_exact(times, speed, friction_coefficient)
    path = (u.max() - u[0]) + (u.max() - u[-1])
    assert dissipated == pytest.approx(friction_coefficient * BLOCK_MASS * GRAVITY * math.cos(SLOPE) * path, rel=1e-8)
    assert np.abs(traj.energy_balance()).max() < 1e-4 * dissipated


# -- argument checks ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs, pattern",
    [
        (dict(t_span=(1.0, 0.0)), r"`t_span` must be \(t0, tf\) with tf > t0"),
        (dict(method="leapfrog"), r"`method` must be one of"),
        (dict(step=-0.1), r"`step` must be a positive number"),
        (dict(q0=np.zeros(3)), r"`q0` must have shape \(2,\)"),
        (dict(params={"gravity": 1.0}), r"unknown parameter `gravity`"),
    ],
)
def test_bad_arguments_are_named(pendulum_model, kwargs, pattern):
    q0, qd0 = cartesian_state(THETA0, RATE0)
    args = dict(t_span=(0.0, 1.0), q0=q0, qd0=qd0)
    args.update(kwargs)
    with pytest.raises(ValueError, match=pattern):
        simulate(pendulum_model, args.pop("t_span"), args.pop("q0"), args.pop("qd0"), **args)


def test_simulate_accepts_compiled_model_and_params(pendulum_model):
    q0, qd0 = cartesian_state(THETA0, RATE0)
    moon = 1.62
    traj = simulate(pendulum_model.compile(), (0.0, 2.0), q0, qd0, method="DOP853", rtol=1e-11, atol=1e-12,
                    t_eval=np.linspace(0.0, 2.0, 21), params={"g": moon})
    assert traj.parameters["g"] == moon
    np.testing.assert_allclose(traj.q, angle_solution(traj.t, gravity=moon), atol=1e-8)
    with pytest.raises(TypeError, match=r"`model` must be a Model or a CompiledModel"):
        simulate("pendulum", (0.0, 1.0), q0, qd0)
