"""Examples against closed forms and independent routes, part B.

One section per system: the vertical rolling disk (Beshaw 2014, Sec. 4 and
Fig. 3), the planar double pendulum and the pendulum on a carriage (lecture
slides, Ch. 9), and the Cartesian pendulum chains of the scaling benchmark.

Every system is checked three ways: its default initial state satisfies the
constraints to 1e-12; its motion over 10 s matches a closed form or a second,
independent formulation (minimal coordinates, the angle equation, or the
Lagrange-multiplier saddle point) to 1e-6 or better; and the power theorem
holds along the trajectory. For the power theorem the work is integrated with
composite Simpson's rule (error ``O(dt^4)``), so what remains is the
integration error of the simulation; ``Trajectory.energy_balance()`` (the
trapezoidal rule) is held to its own error bound ``(t_end - t0) dt^2 / 12 max|P''|``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sm

from udk_notebooks import lagrange_multipliers, simulate, stability
import udk_notebooks.examples as catalogue
from udk_notebooks.examples import carriage_pendulum, chain, double_pendulum, rolling_disk

TIGHT = dict(method="DOP853", rtol=1e-11, atol=1e-12)
SPAN = 10.0
GRID = np.linspace(0.0, SPAN, 1001)  # odd and uniform, for Simpson's rule


# -- helpers -----------------------------------------------------------------
def _residuals(system, q, qd, **params):
    """Largest position and velocity constraint residuals of one state."""
    compiled = system.compile()
    phi, velocity = compiled.residuals(0.0, np.asarray(q, float), np.asarray(qd, float), compiled.parameters(params))
    return np.abs(phi).max(initial=0.0), np.abs(velocity).max(initial=0.0)


def _simpson_balance(traj) -> np.ndarray:
    """``h - h0 - work`` at every other sample, the work by composite Simpson's rule (odd uniform grid)."""
    power = sum(traj.power.values())
    dt = np.diff(traj.t)
    assert len(traj.t) % 2 == 1 and np.ptp(dt) <= 1e-9 * dt.max()
    pairs = dt[0] / 3 * (power[:-2:2] + 4 * power[1:-1:2] + power[2::2])
    return traj.energy[::2] - traj.energy[0] - np.concatenate([[0.0], np.cumsum(pairs)])


def _assert_power_theorem(traj, tol: float) -> None:
    """Energy change equals the work of the powers (Simpson), and energy_balance() obeys its trapezoid bound."""
    scale = max(1.0, np.abs(traj.energy).max())
    assert np.abs(_simpson_balance(traj)).max() <= tol * scale
    power = sum(traj.power.values())
    dt = traj.t[1] - traj.t[0]
    trapezoid_bound = (traj.t[-1] - traj.t[0]) * dt**2 / 12 * np.abs(np.diff(power, 2)).max() / dt**2
    assert np.abs(traj.energy_balance()).max() <= 2 * trapezoid_bound + tol * scale


def _assert_uk_matches_multipliers(system, q, qd) -> None:
    """The Udwadia-Kalaba accelerations and ideal force equal the saddle-point ones at one state."""
    compiled = system.compile()
    p = compiled.parameters()
    M, Q, A, b, _ = compiled.evaluate(0.0, q, qd, p)
    motion = compiled.motion(0.0, q, qd)
    qdd, lam = lagrange_multipliers(M, Q, A, b)
    scale = 1.0 + np.abs(qdd).max()
    assert np.abs(motion.qdd - qdd).max() <= 1e-10 * scale
    assert np.abs(motion.ideal - A.T @ lam).max() <= 1e-10 * (1.0 + np.abs(motion.ideal).max())


# -- rolling disk (Beshaw 2014, Sec. 4) ----------------------------------------
@pytest.fixture(scope="module")
def disk():
    return rolling_disk.model()


def test_rolling_disk_paper_state_is_consistent(disk):
    q0, qd0 = rolling_disk.initial_state()
    np.testing.assert_allclose(q0, [0.0, 0.0, 0.0, math.pi / 6], atol=1e-15)
    np.testing.assert_allclose(qd0, [1.0, -math.sqrt(3.0), 2.0, 1.0], atol=1e-15)
    assert max(_residuals(disk, q0, qd0)) <= 1e-12


def test_rolling_disk_mass_matrix_and_constraints_are_the_papers(disk):
    x, y, phi, theta = disk.q
    np.testing.assert_array_equal(np.array(disk.M.subs(disk.parameters), dtype=float), np.diag([1.0, 1.0, 0.5, 0.25]))
    r = rolling_disk.PARAMETERS["r"].symbol
    assert disk.A == sm.Matrix([[1, 0, -r * sm.sin(theta), 0], [0, 1, r * sm.cos(theta), 0]])


def test_rolling_disk_runs_on_a_circle_of_radius_two(disk):
    traj = simulate(disk, (0.0, SPAN), *rolling_disk.initial_state(), t_eval=GRID, **TIGHT)
    q_exact, qd_exact = rolling_disk.exact_state(traj.t)
    assert np.abs(traj.q - q_exact).max() <= 1e-8
    assert np.abs(traj.qd - qd_exact).max() <= 1e-8
    radius = np.hypot(q_exact[:, 0] - math.sqrt(3.0), q_exact[:, 1] - 1.0)
    np.testing.assert_allclose(radius, 2.0, rtol=1e-13)
    assert np.abs(traj.velocity_residual).max() <= 1e-9
    # the rolling constraints are ideal and scleronomic: their force does no work
    assert np.abs(traj.power["ideal"]).max() <= 1e-9
    _assert_power_theorem(traj, 1e-9)


def test_rolling_disk_straight_line_and_other_inertias():
    system = rolling_disk.model(m=2.0, r=0.5, I1=0.3, I2=0.7)
    q0, qd0 = rolling_disk.initial_state(x=1.0, y=-1.0, theta=0.3, phi_rate=1.5, theta_rate=0.0, r=0.5)
    traj = simulate(system, (0.0, SPAN), q0, qd0, t_eval=GRID, **TIGHT)
    q_exact, _ = rolling_disk.exact_state(traj.t, q0, qd0, r=0.5)
    assert np.abs(traj.q - q_exact).max() <= 1e-8
    np.testing.assert_allclose(q_exact[-1, :2], [1.0 + 0.75 * SPAN * math.sin(0.3), -1.0 - 0.75 * SPAN * math.cos(0.3)])


def test_rolling_disk_uk_matches_multipliers_at_sampled_states(disk):
    rng = np.random.default_rng(1)
    for _ in range(5):
        x0, y0, phi0, theta0, phi_rate, theta_rate = rng.uniform(-3, 3, 6)
        q, qd = rolling_disk.initial_state(x0, y0, phi0, theta0, phi_rate, theta_rate)
        _assert_uk_matches_multipliers(disk, q, qd)
        motion = disk.compile().motion(0.0, q, qd)
        assert abs(motion.qdd[2]) <= 1e-12 and abs(motion.qdd[3]) <= 1e-12  # (I1 + m r^2) phi'' = 0, I2 theta'' = 0


@pytest.fixture(scope="module")
def figure3_data():
    return rolling_disk.figure3()


def test_figure3_euler_drifts_far_more_than_rk4(figure3_data):
    data = figure3_data
    euler = np.abs(data["residual_euler"]).max()
    rk4 = np.abs(data["residual_rk4"]).max()
    assert 1e-3 < euler < 1e-1
    assert rk4 < 1e-9
    assert euler > 1e6 * rk4
    assert np.abs(data["x_error_euler"]).max() > 1e6 * np.abs(data["x_error_rk4"]).max()


def test_figure3_gain_reduces_the_euler_drift(figure3_data):
    data = figure3_data
    for method in ("euler", "rk4"):
        assert stability(method, 0.01, data["gain_matrix"]).contractive
    plain, gained = np.abs(data["residual_euler"]), np.abs(data["residual_euler_gain"])
    assert gained.max() < plain.max() / 10
    assert gained[len(gained) // 2 :].mean() < plain[len(plain) // 2 :].mean() / 10
    # RK4 is accurate enough that the gain's own truncation error dominates, but stays tiny
    assert np.abs(data["residual_rk4_gain"]).max() < 1e-6


def test_figure3_gain_removes_an_initial_error_for_rk4():
    offset = 1e-3
    data = rolling_disk.figure3(offset=offset)
    assert data["residual_rk4"][0] == pytest.approx(offset)
    # without a gain the exact flow keeps psi' = 0, so the initial error stays
    np.testing.assert_allclose(data["residual_rk4"], offset, rtol=1e-5)
    # with K = -10 I it decays like exp(-10 t) down to the truncation floor
    assert np.abs(data["residual_rk4_gain"][-100:]).max() < 1e-4 * offset
    half = np.searchsorted(data["t"], 0.5)
    assert data["residual_rk4_gain"][half] == pytest.approx(offset * math.exp(-5.0), rel=1e-2)


def test_figure3_draws_four_curves_and_checks_its_gain():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    try:
        data = rolling_disk.figure3(step=0.05, t_final=2.0, ax=ax)
        assert len(ax.get_lines()) == 4
        np.testing.assert_allclose(ax.get_lines()[0].get_ydata()[1:], np.abs(data["residual_euler"][1:]))
    finally:
        plt.close(fig)
    with pytest.raises(ValueError, match="gain"):
        rolling_disk.figure3(step=0.1, gain=30.0)
    with pytest.raises(ValueError, match="quantity"):
        rolling_disk.figure3(quantity="speed")


# -- double pendulum (slides, Examples 9.5-9.9) ---------------------------------
def test_double_pendulum_minimal_mass_matrix_is_the_slides():
    system = double_pendulum.minimal_model("rods")
    theta, phi = system.q
    P = double_pendulum.PARAMETERS
    m1, m2, l1, l2 = (P[name].symbol for name in ("m1", "m2", "l1", "l2"))
    expected = sm.Matrix([
        [m1 * l1**2 / 3 + m2 * l1**2, m2 * l1 * l2 * sm.cos(phi - theta) / 2],
        [m2 * l1 * l2 * sm.cos(phi - theta) / 2, m2 * l2**2 / 3],
    ])
    assert (system.M - expected).applyfunc(sm.simplify) == sm.zeros(2, 2)


@pytest.mark.parametrize("bodies", double_pendulum.BODIES)
def test_double_pendulum_states_are_consistent(bodies):
    q0, qd0 = double_pendulum.initial_state(theta_rate=0.7, phi_rate=-1.1)
    Q0, QD0 = double_pendulum.to_cartesian(q0, qd0, bodies, l1=0.8, l2=1.3)
    assert max(_residuals(double_pendulum.cartesian_model(bodies, l1=0.8, l2=1.3), Q0, QD0)) <= 1e-12
    back = double_pendulum.to_minimal(Q0, QD0)
    np.testing.assert_array_equal(back[0], q0)
    np.testing.assert_array_equal(back[1], qd0)
    _assert_uk_matches_multipliers(double_pendulum.cartesian_model(bodies, l1=0.8, l2=1.3), Q0, QD0)


@pytest.mark.parametrize(
    "bodies, springs",
    [("rods", {}), ("rods", {"k1": 5.0, "k2": 3.0}), ("points", {"k1": 5.0, "k2": 3.0, "m2": 0.5})],
)
def test_double_pendulum_cartesian_matches_minimal(bodies, springs):
    # No stabilization: with DOP853 at rtol 1e-11 the pins drift by ~1e-10 only.
    q0, qd0 = double_pendulum.initial_state(theta=1.2, phi=0.4, theta_rate=0.5)
    minimal = simulate(double_pendulum.minimal_model(bodies, **springs), (0.0, SPAN), q0, qd0, t_eval=GRID, **TIGHT)
    Q0, QD0 = double_pendulum.to_cartesian(q0, qd0, bodies, **springs)
    cartesian = simulate(double_pendulum.cartesian_model(bodies, **springs), (0.0, SPAN), Q0, QD0, t_eval=GRID, **TIGHT)
    angles, rates = double_pendulum.to_minimal(cartesian.q, cartesian.qd)
    assert np.abs(angles - minimal.q).max() <= 1e-6
    assert np.abs(rates - minimal.qd).max() <= 1e-6
    assert np.abs(cartesian.position_residual).max() <= 1e-8
    np.testing.assert_allclose(cartesian.energy, minimal.energy, atol=1e-7)
    _assert_power_theorem(minimal, 1e-8)
    _assert_power_theorem(cartesian, 1e-8)


# -- pendulum on a carriage (slides, Exercise 4:14) ----------------------------
def test_carriage_pendulum_state_is_consistent():
    Q0, QD0 = carriage_pendulum.initial_state(carriage_rate=0.3, angle_rate=0.7, l=1.4)
    assert max(_residuals(carriage_pendulum.model(l=1.4), Q0, QD0)) <= 1e-12
    q0, qd0 = carriage_pendulum.to_minimal(Q0, QD0)
    np.testing.assert_allclose(q0, [0.2, 0.5], atol=1e-15)
    np.testing.assert_allclose(qd0, [0.3, 0.7], atol=1e-15)


@pytest.mark.parametrize("force", [0.0, 3.0])
def test_carriage_pendulum_cartesian_matches_minimal_and_power_theorem(force):
    params = dict(F0=force, omega=2.5)
    Q0, QD0 = carriage_pendulum.initial_state(carriage_rate=0.3, angle_rate=0.7)
    q0, qd0 = carriage_pendulum.to_minimal(Q0, QD0)
    minimal = simulate(carriage_pendulum.minimal_model(**params), (0.0, SPAN), q0, qd0, t_eval=GRID, **TIGHT)
    cartesian = simulate(carriage_pendulum.model(**params), (0.0, SPAN), Q0, QD0, t_eval=GRID, **TIGHT)
    angles, rates = carriage_pendulum.to_minimal(cartesian.q, cartesian.qd)
    assert np.abs(angles - minimal.q).max() <= 1e-6
    assert np.abs(rates - minimal.qd).max() <= 1e-6
    # the force's power F(t) x_c' is the whole nonconservative power; the string does no work
    force_power = force * np.sin(2.5 * cartesian.t) * cartesian.qd[:, 0]
    np.testing.assert_allclose(cartesian.power["nonconservative"], force_power, atol=1e-12)
    assert np.abs(cartesian.power["ideal"]).max() <= 1e-8
    _assert_power_theorem(cartesian, 1e-8)
    _assert_power_theorem(minimal, 1e-8)
    if force:
        assert np.ptp(cartesian.energy) > 1.0  # the force does pump energy in and out
    else:
        assert np.ptp(cartesian.energy) <= 1e-8


@pytest.mark.parametrize("mode", [0, 1])
def test_carriage_pendulum_small_normal_modes(mode):
    w = carriage_pendulum.normal_mode_frequencies()[mode]
    P = {name: p.default for name, p in carriage_pendulum.PARAMETERS.items()}
    angle = 1e-5
    carriage = (P["g"] - P["l"] * w**2) / w**2 * angle  # from the linearized string equation
    Q0, QD0 = carriage_pendulum.initial_state(carriage=carriage, angle=angle)
    traj = simulate(carriage_pendulum.model(), (0.0, SPAN), Q0, QD0, t_eval=GRID, **TIGHT)
    angles, _ = carriage_pendulum.to_minimal(traj.q, traj.qd)
    expected = np.column_stack([carriage * np.cos(w * traj.t), angle * np.cos(w * traj.t)])
    scale = max(abs(carriage), angle)
    assert np.abs(angles - expected).max() <= 1e-6 * scale


# -- Cartesian pendulum and N-link chains ---------------------------------------
@pytest.fixture(scope="module")
def pendulum():
    return chain.cartesian_pendulum()


def test_pendulum_state_is_consistent(pendulum):
    assert max(_residuals(pendulum, *chain.pendulum_initial_state(1.0, 0.3))) <= 1e-12
    assert max(_residuals(pendulum, *chain.initial_state())) <= 1e-12


def test_pendulum_small_angle_closed_form(pendulum):
    angle, rate = 1e-3, 2e-4
    traj = simulate(pendulum, (0.0, SPAN), *chain.pendulum_initial_state(angle, rate), t_eval=GRID, **TIGHT)
    q_small, qd_small = chain.small_angle_state(traj.t, angle, rate)
    # the linearization is off by O(theta0^3) in position: 1e-9 here
    assert np.abs(traj.q - q_small).max() <= 1e-3 * angle
    assert np.abs(traj.qd - qd_small).max() <= 1e-3 * angle


@pytest.mark.parametrize("angle, rate", [(1.0, 0.2), (2.5, 0.0), (0.1, 7.0)])
def test_pendulum_matches_angle_equation(pendulum, angle, rate):
    traj = simulate(pendulum, (0.0, SPAN), *chain.pendulum_initial_state(angle, rate), t_eval=GRID, **TIGHT)
    q_angle, qd_angle = chain.angle_route_state(traj.t, angle, rate)
    assert np.abs(traj.q - q_angle).max() <= 1e-6
    assert np.abs(traj.qd - qd_angle).max() <= 1e-6
    _assert_power_theorem(traj, 1e-8)


def test_one_link_chain_is_the_cartesian_pendulum(pendulum):
    one = chain.n_link_chain(1)
    rename = dict(zip(list(one.q) + list(one.qd), list(pendulum.q) + list(pendulum.qd)))
    for name in ("M", "Q", "A", "b"):
        assert getattr(one, name).xreplace(rename) == getattr(pendulum, name)


@pytest.mark.parametrize("links", [1, 3, 8])
def test_chain_state_is_consistent(links):
    angles = np.linspace(-2.0, 2.5, links)
    rates = np.linspace(1.0, -3.0, links)
    q0, qd0 = chain.chain_initial_state(links, angles, rates, l=0.7)
    assert max(_residuals(chain.n_link_chain(links, l=0.7), q0, qd0)) <= 1e-12
    back_angles, back_rates = chain.chain_to_angles(q0, qd0)
    np.testing.assert_allclose(back_angles, angles, atol=1e-14)
    np.testing.assert_allclose(back_rates, rates, atol=1e-13)
    assert max(_residuals(chain.n_link_chain(links), *chain.chain_initial_state(links))) <= 1e-12


def test_two_link_chain_matches_point_double_pendulum():
    angles, rates = np.array([1.0, 0.4]), np.array([0.0, 0.5])
    start = chain.chain_initial_state(2, angles, rates)
    traj = simulate(chain.n_link_chain(2), (0.0, SPAN), *start, t_eval=GRID, **TIGHT)
    minimal = simulate(double_pendulum.minimal_model("points"), (0.0, SPAN), angles, rates, t_eval=GRID, **TIGHT)
    chain_angles, chain_rates = chain.chain_to_angles(traj.q, traj.qd)
    assert np.abs(chain_angles - minimal.q).max() <= 1e-6
    assert np.abs(chain_rates - minimal.qd).max() <= 1e-6
    _assert_power_theorem(traj, 1e-8)


def test_five_link_chain_multipliers_and_power_theorem():
    system = chain.n_link_chain(5, m=0.5, l=0.6)
    rng = np.random.default_rng(5)
    for _ in range(4):
        q, qd = chain.chain_initial_state(5, rng.uniform(-3, 3, 5), rng.uniform(-2, 2, 5), l=0.6)
        _assert_uk_matches_multipliers(system, q, qd)
    grid = np.linspace(0.0, 4.0, 801)
    traj = simulate(system, (0.0, 4.0), *chain.chain_initial_state(5, l=0.6), t_eval=grid, **TIGHT)
    assert np.abs(traj.position_residual).max() <= 1e-8
    _assert_power_theorem(traj, 1e-8)
    # samples along the motion: UK against the saddle point again
    for j in (200, 500, 800):
        _assert_uk_matches_multipliers(system, traj.q[j], traj.qd[j])


def test_chain_refuses_bad_sizes():
    for bad in (0, -2, 2.0, True):
        with pytest.raises(ValueError, match="`N`"):
            chain.n_link_chain(bad)
    with pytest.raises(ValueError, match="shape"):
        chain.chain_initial_state(3, angles=[0.1, 0.2])


# -- the catalogue as a whole ------------------------------------------------------------
@pytest.mark.parametrize("name", [name for name in catalogue.__all__ if name != "Parameter"])
def test_every_example_names_a_bad_parameter(name):
    """Unknown names and non-finite values are refused with the parameter's name, by every example."""
    module = getattr(catalogue, name)
    first = next(iter(module.PARAMETERS))
    with pytest.raises(ValueError, match=r"unknown parameter\(s\) bogus; this example has"):
        module.model(bogus=1.0)
    for bad in (float("nan"), float("inf"), "heavy"):
        with pytest.raises(ValueError, match=rf"parameter `{first}` \(.*\) must be a finite number"):
            module.model(**{first: bad})
