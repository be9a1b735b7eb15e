"""Runs through singular configurations stop there and say where (issue 14, udk_notebooks.singular).

Three systems pass a singular configuration, each built here from its energies:

* a bead on the nodal cubic ``y^2 = x^2 (x + 1)``, released at ``(-1, 0)`` with unit speed around the
  loop, reaches the node (the one row of ``A`` vanishes) after the arc length of half the loop;
* the parallelogram four-bar (crank and rocker 1, coupler and ground 2, uniform rods under gravity)
  reaches its change point, all links on the line of centres, at ``theta1 = pi`` (the gradient of
  the horizontal closure, row 0, vanishes; past it the mechanism may fold into the crossed branch);
* a free particle in polar coordinates passes within ``1e-5`` of the origin, where ``M = diag(1, r^2)``
  loses rank.

The exact times come from the parametrisation of the cubic and from energy conservation on the
parallelogram branch, not from the code under test. Before the fix these runs ended on different
branches per method, lost energy or aborted without a time.
"""

import math
import warnings

import numpy as np
import pytest
import sympy as sm
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.integrate import quad
from sympy.physics.mechanics import dynamicsymbols

from udk_notebooks import Model, simulate
from udk_notebooks.errors import SimulationError, SingularConfigurationError
from udk_notebooks.examples import chain, incline_friction, rolling_disk
from udk_notebooks.singular import SINGULAR_RTOL, SingularConfigurationWarning
from udk_notebooks.stabilization import Baumgarte

SCIPY_METHODS = ["RK45", "RK23", "DOP853", "Radau", "BDF", "LSODA"]
GRAVITY = 9.81


# -- the three systems ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def bead():
    """Unit mass on y^2 = x^2 (x + 1), no force: unit speed from (-1, 0) upwards, round the loop."""
    x, y = dynamicsymbols("x y")
    model = Model([x, y], kinetic_energy=(x.diff() ** 2 + y.diff() ** 2) / 2, holonomic=[y**2 - x**2 * (x + 1)])
    # x = s^2 - 1, y = s (s^2 - 1) runs from (-1, 0) (s = 0) to the node (s = -1): |dq/ds| = sqrt(4 s^2 + (3 s^2 - 1)^2)
    arc, _ = quad(lambda s: math.hypot(2 * s, 3 * s**2 - 1), 0.0, 1.0, epsabs=1e-13, epsrel=1e-13)
    return model.compile(), np.array([-1.0, 0.0]), np.array([0.0, 1.0]), arc


@pytest.fixture(scope="module")
def four_bar():
    """Parallelogram four-bar: crank and rocker of length 1 on pivots 2 apart, coupler of length 2.

    Coordinates are the absolute angles of crank, coupler and rocker. On the parallelogram branch
    (coupler level, ``theta3 = theta1 = theta``) the kinetic energy is ``(5/6) theta'^2`` (each rod
    ``theta'^2 / 6`` about its pivot, the translating coupler ``theta'^2 / 2``) and the potential
    energy ``2 g sin(theta)``: the time to ``theta = pi`` follows from energy conservation.
    """
    t1, t2, t3 = dynamicsymbols("theta1 theta2 theta3")
    d1, d2, d3 = (s.diff() for s in (t1, t2, t3))
    crank, coupler = 1, 2
    vx = -crank * sm.sin(t1) * d1 - coupler / 2 * sm.sin(t2) * d2
    vy = crank * sm.cos(t1) * d1 + coupler / 2 * sm.cos(t2) * d2
    kinetic = crank**2 * (d1**2 + d3**2) / 6 + (vx**2 + vy**2) / 2 + sm.Rational(coupler**2, 24) * d2**2
    heights = crank / 2 * sm.sin(t1) + crank * sm.sin(t1) + coupler / 2 * sm.sin(t2) + crank / 2 * sm.sin(t3)
    potential = GRAVITY * heights
    closure = [crank * sm.cos(t1) + coupler * sm.cos(t2) - crank * sm.cos(t3) - coupler,
               crank * sm.sin(t1) + coupler * sm.sin(t2) - crank * sm.sin(t3)]
    model = Model([t1, t2, t3], kinetic_energy=kinetic, potential_energy=potential, holonomic=closure)
    angle, rate = 2.0, 3.0
    energy = 5 / 6 * rate**2 + 2 * GRAVITY * math.sin(angle)
    change, _ = quad(lambda th: 1.0 / math.sqrt(6 / 5 * (energy - 2 * GRAVITY * math.sin(th))), angle, math.pi,
                     epsabs=1e-13, epsrel=1e-13)
    return model.compile(), np.array([angle, 0.0, angle]), np.array([rate, 0.0, rate]), change


@pytest.fixture(scope="module")
def polar():
    """Free unit mass in polar coordinates, straight towards the origin, passing it at 1e-5."""
    r, theta = dynamicsymbols("r theta")
    model = Model([r, theta], kinetic_energy=(r.diff() ** 2 + r**2 * theta.diff() ** 2) / 2)
    return model.compile(), np.array([1.0, 0.0]), np.array([-1.0, 1e-5])


def _fixed(method, step, **extra):
    return dict(method=method, step=step, **extra)


def assert_stopped_before(run, t_singular, step=0.0):
    """A singular stop: reported once, at about ``t_singular``, with every sample before it.

    A fixed step locates the point by bisection on the step length; each length is its own
    approximation of the path, so the point found can lie up to a step past the exact one.
    """
    found = run.singularity
    assert run.status == "singular" and found is not None and not run.diverged
    assert run.stop_time == found.time and f"t = {found.time:.6g}" in run.stop_reason
    assert run.t[-1] < min(found.time, t_singular) and found.time <= t_singular + step + 1e-6
    assert found.state.shape == (2 * run.q.shape[1],) and np.all(np.isfinite(found.state))
    return found


# -- the bead at the node ---------------------------------------------------------------------------
@pytest.mark.parametrize("options", [_fixed("rk4", 1e-3), _fixed("rk4", 0.05), *(dict(method=m) for m in SCIPY_METHODS),
                                     _fixed("rk4", 1e-3, stabilization=Baumgarte(5.0, 5.0))],
                         ids=lambda o: "-".join(str(v) for v in o.values()))
def test_bead_stops_at_the_node_of_the_cubic(bead, options):
    compiled, q0, qd0, arc = bead
    run = simulate(compiled, (0.0, 4.0), q0, qd0, **options)
    step = options.get("step", 0.0)
    found = assert_stopped_before(run, arc, step)
    assert found.kind == "constraints" and found.rows == (0,) and "row 0 (holonomic" in run.stop_reason
    # within about SINGULAR_RTOL of the node (|grad phi| = 2 |q| there, 1 at the start), or a step
    assert np.hypot(*found.state[:2]) < SINGULAR_RTOL + step
    assert abs(arc - found.time) < SINGULAR_RTOL + step
    assert np.all(run.q[:, 0] < 0)  # still on the loop: no branch taken


@settings(max_examples=8, deadline=None)
@given(speed=st.floats(0.3, 3.0), method=st.sampled_from(["rk4", "RK45", "DOP853", "Radau"]))
def test_bead_reaches_the_node_at_any_speed(bead, speed, method):
    """With no force the speed is constant: the node comes after ``arc / speed``, whatever the method."""
    compiled, q0, qd0, arc = bead
    run = simulate(compiled, (0.0, 2 * arc / speed), q0, speed * qd0, method=method, step=2e-3 / speed)
    found = assert_stopped_before(run, arc / speed, 2e-3 / speed)
    assert found.rows == (0,) and abs(found.time - arc / speed) < 2 * SINGULAR_RTOL / speed


# -- the four-bar at its change point ---------------------------------------------------------------
FOUR_BAR_OPTIONS = [
    _fixed("euler", 1e-3), _fixed("rk4", 1e-2), _fixed("rk4", 0.05),
    _fixed("rk4", 1e-2, stabilization=Baumgarte(5.0, 5.0)), _fixed("euler", 1e-3, stabilization=Baumgarte(5.0, 5.0)),
    dict(method="Radau"), dict(method="BDF"), dict(method="DOP853"), dict(method="RK45"), dict(method="LSODA"),
    dict(method="DOP853", t_eval=np.linspace(0.0, 2.0, 2001)),
]


@pytest.mark.parametrize("options", FOUR_BAR_OPTIONS, ids=lambda o: "-".join(str(v)[:12] for v in o.values()))
def test_four_bar_stops_at_its_change_point(four_bar, options):
    compiled, q0, qd0, change = four_bar
    run = simulate(compiled, (0.0, 2.0), q0, qd0, **options)
    found = assert_stopped_before(run, change, options.get("step", 0.0))
    assert found.kind == "constraints" and found.rows == (0,)  # the gradient of the horizontal closure vanishes
    assert "theta1" in run.stop_reason and "holonomic" in run.stop_reason
    np.testing.assert_allclose(found.state[:3], [math.pi, 0.0, math.pi], atol=0.02)
    assert abs(change - found.time) < 0.01
    # up to there the run stays on the parallelogram branch and keeps its energy (a conservative system)
    np.testing.assert_allclose(run.q[:, 1], 0.0, atol=1e-6)
    drift = np.abs(run.energy - run.energy[0]).max()
    assert drift < (0.1 if options["method"] == "euler" else 1e-3)


def test_rk4_that_gains_energy_through_the_change_point_now_stops_before_it(four_bar):
    """Released at 2.5 rad at 1 rad/s, RK4 at step 0.02 crosses the change point onto another branch.

    Without the check the conservative system gains tens of joules; with it the run stops at the
    change point with its energy kept.
    """
    compiled, *_ = four_bar
    q0, qd0 = np.array([2.5, 0.0, 2.5]), np.array([1.0, 0.0, 1.0])
    through = simulate(compiled, (0.0, 3.0), q0, qd0, method="rk4", step=0.02, on_singular="ignore")
    assert through.status == "ok" and abs(through.energy[-1] - through.energy[0]) > 1.0
    run = simulate(compiled, (0.0, 3.0), q0, qd0, method="rk4", step=0.02)
    assert run.status == "singular" and run.singularity.rows == (0,)
    np.testing.assert_allclose(run.singularity.state[:3], [math.pi, 0.0, math.pi], atol=2e-3)
    assert np.abs(run.energy - run.energy[0]).max() < 1e-4


def test_four_bar_with_t_eval_keeps_the_requested_samples_before_the_change_point(four_bar):
    compiled, q0, qd0, change = four_bar
    t_eval = np.linspace(0.0, 2.0, 2001)
    run = simulate(compiled, (0.0, 2.0), q0, qd0, method="DOP853", t_eval=t_eval)
    np.testing.assert_array_equal(run.t, t_eval[t_eval < run.stop_time])
    assert run.t[-1] > change - 2e-3


# -- polar coordinates near r = 0 -------------------------------------------------------------------
@pytest.mark.parametrize("options", [_fixed("euler", 1e-3), _fixed("rk4", 1e-3), _fixed("rk4", 0.25),
                                     *(dict(method=m) for m in SCIPY_METHODS)],
                         ids=lambda o: "-".join(str(v) for v in o.values()))
def test_polar_coordinates_stop_near_the_origin(polar, options):
    compiled, q0, qd0 = polar
    run = simulate(compiled, (0.0, 2.0), q0, qd0, **options)
    found = assert_stopped_before(run, 1.0, options.get("step", 0.0))
    assert found.kind == "mass" and found.rows == () and "theta" in run.stop_reason
    assert abs(found.combination[1]) > 0.99  # the direction without inertia is theta''
    assert found.time > 0.99 - options.get("step", 0.0) and 0 <= found.state[0] <= 2e-3
    assert np.all(run.q[:, 0] > 0)


# -- what the caller can choose ---------------------------------------------------------------------
def test_on_singular_raise_carries_time_state_rows_and_the_trajectory(four_bar):
    compiled, q0, qd0, change = four_bar
    with pytest.raises(SingularConfigurationError, match=r"singular configuration at t = 0\.279") as info:
        simulate(compiled, (0.0, 2.0), q0, qd0, method="RK45", on_singular="raise")
    error = info.value
    assert isinstance(error, SimulationError) and error.singularity.rows == (0,)
    # RK45's own path reaches the change point within its tolerance of the exact time, not before it
    assert error.time == error.singularity.time == pytest.approx(change, abs=1e-6)
    assert error.trajectory.status == "singular" and error.trajectory.t[-1] < error.time
    np.testing.assert_array_equal(error.state, error.singularity.state)


def test_on_singular_warn_warns_once_and_runs_on(bead):
    compiled, q0, qd0, arc = bead
    with pytest.warns(SingularConfigurationWarning, match=r"t = 1\.357") as record:
        run = simulate(compiled, (0.0, 2.0), q0, qd0, method="RK45", on_singular="warn")
    assert len([w for w in record if w.category is SingularConfigurationWarning]) == 1
    assert run.status == "ok" and run.t[-1] == 2.0 and run.singularity is None


def test_warned_radau_goes_on_through_the_change_point(four_bar):
    """Radau restarted at the change point, after the warning: it goes on along the parallelogram branch.

    Issue 14 had it abort there ('check the constraint equations'): the rank of the unscaled rows was
    decided with the vanishing row beside a unit one. With the rows scaled to one size as in
    udwadia_kalaba (issue 22) the vanishing row keeps its direction, and the run goes on as "warn"
    promises (as RK45 does on the bead): on its constraints, with its energy (which branch it takes at
    a change point is not unique, and not checked).
    """
    compiled, q0, qd0, change = four_bar
    with pytest.warns(SingularConfigurationWarning):
        run = simulate(compiled, (0.0, 2.0), q0, qd0, method="Radau", on_singular="warn")
    assert run.status == "ok" and run.t[-1] == 2.0 and run.t[0] < change < run.t[-1]
    assert np.abs(run.position_residual).max() < 1e-8
    assert np.ptp(run.energy) < 1e-3 * abs(run.energy[0])


def test_on_singular_ignore_does_not_check(bead):
    compiled, q0, qd0, arc = bead
    with warnings.catch_warnings():
        warnings.simplefilter("error", SingularConfigurationWarning)
        run = simulate(compiled, (0.0, 2.0), q0, qd0, method="rk4", step=1e-3, on_singular="ignore")
    assert run.status == "ok" and run.t[-1] == 2.0


def test_on_singular_is_checked():
    compiled = chain.cartesian_pendulum().compile()
    q0, qd0 = chain.pendulum_initial_state(0.5)
    with pytest.raises(ValueError, match=r"`on_singular` must be one of 'stop', 'raise', 'warn', 'ignore'; got 'halt'"):
        simulate(compiled, (0.0, 1.0), q0, qd0, on_singular="halt")


# -- errors raised mid-run say when, and keep the samples -------------------------------------------
def test_a_solver_that_gives_up_says_when_and_keeps_the_samples(four_bar):
    """Without the check, BDF gives up past the change point; its error carries the time and the run."""
    compiled, q0, qd0, change = four_bar
    with pytest.raises(SimulationError, match=r"the run failed at t = .*BDF.*gave up") as info:
        simulate(compiled, (0.0, 2.0), q0, qd0, method="BDF", on_singular="ignore")
    error = info.value
    # where past the change point BDF gives up depends on the machine's rounding (1.6 on one, 0.75 on another)
    assert change < error.time < 2.0 and error.state.shape == (6,)
    assert f"the run failed at t = {error.time:.6g} " in str(error)
    assert error.trajectory.status == "failed" and error.trajectory.t[-1] < error.time
    assert error.trajectory.t.size > 10


@pytest.mark.parametrize("method", ["rk4", "RK45"])
def test_too_many_friction_switches_say_when_and_keep_the_samples(method):
    compiled = incline_friction.model().compile()
    q0, qd0 = incline_friction.initial_state(2.0)
    with pytest.raises(SimulationError, match=r"failed at t = .*more than `max_switches` = 0") as info:
        simulate(compiled, (0.0, 2.0), q0, qd0, method=method, max_switches=0)
    error = info.value
    assert error.time == pytest.approx(incline_friction.stop_time(2.0), rel=1e-6)
    assert error.trajectory.status == "failed" and error.trajectory.t[-1] < error.time
    assert "singular configuration" not in str(error)  # not the hint for a failing equation of motion


# -- regular runs are never flagged -----------------------------------------------------------------
@pytest.fixture(scope="module")
def regular():
    return chain.cartesian_pendulum().compile(), rolling_disk.model().compile(), chain.n_link_chain(2).compile()


@settings(max_examples=12, deadline=None)
@given(angle=st.floats(-3.0, 3.0), rate=st.floats(-8.0, 8.0), method=st.sampled_from(["rk4", "DOP853"]))
def test_a_regular_pendulum_is_never_flagged(regular, angle, rate, method):
    pendulum, _, double = regular
    q0, qd0 = chain.pendulum_initial_state(angle, rate)
    run = simulate(pendulum, (0.0, 1.0), q0, qd0, method=method, step=0.01)
    assert run.status == "ok", run.stop_reason
    q0, qd0 = chain.chain_initial_state(2, angles=[angle, -angle / 2], rates=[rate, 0.0])
    run = simulate(double, (0.0, 1.0), q0, qd0, method=method, step=0.01)
    assert run.status == "ok", run.stop_reason


@settings(max_examples=12, deadline=None)
@given(theta=st.floats(-3.0, 3.0), phi_rate=st.floats(-5.0, 5.0), theta_rate=st.floats(-5.0, 5.0),
       method=st.sampled_from(["rk4", "DOP853"]))
def test_a_rolling_disk_is_never_flagged(regular, theta, phi_rate, theta_rate, method):
    _, disk, _ = regular
    q0, qd0 = rolling_disk.initial_state(theta=theta, phi_rate=phi_rate, theta_rate=theta_rate)
    run = simulate(disk, (0.0, 2.0), q0, qd0, method=method, step=0.01)
    assert run.status == "ok", run.stop_reason


def test_rows_that_are_redundant_from_the_start_are_not_a_loss_of_rank():
    """The pendulum's constraint written twice: rank 1 of 2 rows throughout, which the solver accepts."""
    x, y = dynamicsymbols("x y")
    circle = x**2 + y**2 - 1
    model = Model([x, y], kinetic_energy=(x.diff() ** 2 + y.diff() ** 2) / 2, potential_energy=GRAVITY * y,
                  holonomic=[circle, 2 * circle])
    run = simulate(model, (0.0, 2.0), [math.sin(1.0), -math.cos(1.0)], [0.0, 0.0], method="DOP853")
    assert run.status == "ok", run.stop_reason
