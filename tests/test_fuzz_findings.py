"""The fuzz findings of issue 22 on the sweep, batch and compiled paths: one test per reproducer, and properties.

Each test names its reproducer (``../shared/repro/rNN_...py``) and checks a number against a closed form
or an independent route: ``udwadia_kalaba`` (rows scaled), a single ``simulate`` run, or an exact motion.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sm
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sympy.physics.mechanics import dynamicsymbols

import udk_notebooks as udk
from udk_notebooks import Model, simulate, udwadia_kalaba
from udk_notebooks.errors import SimulationError, UnstableGainError
from udk_notebooks.examples import chain, incline_friction
from udk_notebooks.stabilization import DRIFT_BOUND, Baumgarte, system_stability
from udk_notebooks.sweep import sweep

x, y, z = dynamicsymbols("x y z")
AU = 1.496e11  # m


def single(model, span, q0, qd0, **options):
    """``(status, message, stop time, trajectory or None)`` of one simulate run, as a sweep member reports it."""
    try:
        run = simulate(model, span, q0, qd0, **options)
    except SimulationError as exc:
        return "failed", str(exc), exc.time, exc.trajectory
    except (ValueError, RuntimeError) as exc:
        return "refused", str(exc), math.nan, None
    return run.status, run.stop_reason, math.nan if run.stop_time is None else run.stop_time, run


def assert_member_is_single_run(result, i, outcome, atol=1e-12):
    """Member ``i`` of a sweep has the single run's status, message, stop time and samples."""
    status, message, stop, run = outcome
    assert result.status[i] == status, (result.status[i], result.message[i], message)
    assert result.message[i] == message
    np.testing.assert_equal(result.stopped_at[i], stop)
    if run is None:
        assert np.isnan(result.q[i]).all()
        return
    reached = np.isin(result.t, run.t)
    assert np.isnan(result.q[i, ~reached]).all()
    on_grid = np.isin(run.t, result.t)
    for name in ("q", "qd", "position_residual", "velocity_residual"):
        np.testing.assert_allclose(getattr(result, name)[i, reached], getattr(run, name)[on_grid], rtol=0, atol=atol,
                                   err_msg=name)


# -- r06: a large constraint row must not hide a small one ------------------------------------------------------
def orbit_model() -> Model:
    """A unit mass on a circle of radius 1 AU (metres) in the plane z = 0, pushed out of the plane by 1 N."""
    R, Fz = sm.symbols("R F_z")
    return Model([x, y, z], kinetic_energy=(x.diff() ** 2 + y.diff() ** 2 + z.diff() ** 2) / 2, forces=[0, 0, Fz],
                 holonomic=[x**2 + y**2 - R**2, z], parameters={R: AU, Fz: 1.0})


def test_r06_orbit_in_si_units_stays_in_its_plane():
    """r06: the plane row (size 1) beside the orbit row (size 3e11): z'' = 0, and the centripetal v^2 / R."""
    cm = orbit_model().compile()
    speed = 2.978e4
    q0, qd0 = np.array([AU, 0.0, 0.0]), np.array([0.0, speed, 0.0])
    motion = cm.motion(0.0, q0, qd0)
    assert motion.qdd[2] == 0.0 and motion.ideal[2] == pytest.approx(-1.0, rel=1e-12)  # the plane holds the push
    assert motion.qdd[0] == pytest.approx(-speed**2 / AU, rel=1e-12)
    reference = udwadia_kalaba(*cm.evaluate(0.0, q0, qd0, cm.defaults)[:4])
    np.testing.assert_allclose(motion.qdd, reference.qdd, rtol=1e-12, atol=1e-18)
    run = simulate(cm, (0.0, 1000.0), q0, qd0, method="rk4", step=10.0)
    assert run.status == "ok" and np.abs(run.q[:, 2]).max() == 0.0


def test_r06_a_constraint_times_1e10_keeps_the_others():
    """r06: a pendulum row times 1e10 beside z = 0: z stays 0 under gravity (it fell 4.9 m before the fix)."""
    model = Model([x, y, z], kinetic_energy=(x.diff() ** 2 + y.diff() ** 2 + z.diff() ** 2) / 2,
                  potential_energy=9.81 * z, holonomic=[1e10 * (x**2 + y**2 - 1), z])
    run = simulate(model, (0.0, 1.0), [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], method="rk4", step=1e-3)
    assert run.status == "ok" and np.abs(run.q[:, 2]).max() == 0.0
    # The swing of the unscaled model, to rounding: x^2 + y^2 = 1 at unit speed, q = (cos t, sin t).
    np.testing.assert_allclose(run.q[-1, :2], [math.cos(1.0), math.sin(1.0)], atol=1e-9)


def scaled_sphere_model() -> Model:
    """A particle on the unit sphere, held in the tilted plane z = x / 2, rows multiplied by s1 and s2.

    Two rows with a constant diagonal mass matrix: the pattern kernel, the general route and the batch
    all see it. Gravity and a spring along x drive it.
    """
    s1, s2 = sm.symbols("s1 s2")
    return Model([x, y, z], kinetic_energy=(x.diff() ** 2 + y.diff() ** 2 + z.diff() ** 2) / 2,
                 potential_energy=9.81 * z + 2.0 * x**2,
                 holonomic=[s1 * (x**2 + y**2 + z**2 - 1), s2 * (z - x / 2)], parameters={s1: 1.0, s2: 1.0})


SPHERE = scaled_sphere_model().compile()
SPHERE_Q0 = np.array([2 / math.sqrt(5), 0.0, 1 / math.sqrt(5)])
SPHERE_QD0 = np.array([0.0, 0.7, 0.0])
FACTORS = st.floats(1e-8, 1e10).map(lambda f: float(f))


@settings(max_examples=40, deadline=None)
@given(s1=FACTORS, s2=FACTORS, angle=st.floats(-1.0, 1.0))
def test_scaling_a_constraint_row_leaves_the_accelerations_unchanged(s1, s2, angle):
    """Property: q'' of every route equals the unscaled udwadia_kalaba's, for row factors from 1e-8 to 1e10."""
    c, s = math.cos(angle), math.sin(angle)
    q = np.array([2 / math.sqrt(5) * c, s, 1 / math.sqrt(5) * c])
    qd = np.array([-2 / math.sqrt(5) * s, c, -1 / math.sqrt(5) * s]) * 0.7  # tangent to the circle of both rows
    reference = udwadia_kalaba(*SPHERE.evaluate(0.0, q, qd, SPHERE.defaults)[:4]).qdd
    scale = np.abs(reference).max()
    compiled = SPHERE.motion(0.0, q, qd, s1=s1, s2=s2).qdd
    solved = SPHERE.solve_modes(0.0, q, qd, SPHERE.parameters({"s1": s1, "s2": s2}))[0].qdd
    for qdd in (compiled, solved):
        np.testing.assert_allclose(qdd, reference, rtol=0, atol=1e-9 * scale)


@settings(max_examples=6, deadline=None)
@given(factors=st.lists(st.tuples(FACTORS, FACTORS), min_size=1, max_size=4))
def test_scaling_constraint_rows_leaves_runs_and_sweeps_unchanged(factors):
    """Property: simulate and every batch member with scaled rows follow the unscaled run.

    The start check and the divergence rule compare residuals in the constraint's own units (a row times
    1e10 has a residual 1e10 times larger), so the start's rounding is allowed with `constraint_tol` and
    the run is short and accurate (RK4), where the drift times 1e10 stays far below the divergence bound.
    """
    span, step, method, tol = (0.0, 0.5), 0.01, "rk4", 1e-3
    reference = simulate(SPHERE, span, SPHERE_Q0, SPHERE_QD0, method=method, step=step)
    params = [{"s1": a, "s2": b} for a, b in factors]
    result = sweep(SPHERE, span, SPHERE_Q0, SPHERE_QD0, params=params, method=method, step=step, progress=False,
                   constraint_tol=tol)
    assert list(result.status) == ["ok"] * len(params), list(result.message)
    for i, p in enumerate(params):
        run = simulate(SPHERE, span, SPHERE_Q0, SPHERE_QD0, method=method, step=step, params=p, constraint_tol=tol)
        np.testing.assert_allclose(run.q, reference.q, rtol=0, atol=1e-9)
        np.testing.assert_allclose(result.q[i], reference.q, rtol=0, atol=1e-9)


def three_row_model() -> Model:
    """The sphere and plane of :func:`scaled_sphere_model` and a fourth coordinate tied to y: three rows.

    More than two rows take the batch's general stacked solver (two or fewer have a closed form).
    """
    w = dynamicsymbols("w")
    s1, s2, s3 = sm.symbols("s1 s2 s3")
    return Model([x, y, z, w], kinetic_energy=(x.diff() ** 2 + y.diff() ** 2 + z.diff() ** 2 + w.diff() ** 2) / 2,
                 potential_energy=9.81 * z + 2.0 * x**2 + w**2,
                 holonomic=[s1 * (x**2 + y**2 + z**2 - 1), s2 * (z - x / 2), s3 * (w - y)],
                 parameters={s1: 1.0, s2: 1.0, s3: 1.0})


THREE_ROWS = three_row_model().compile()


@settings(max_examples=5, deadline=None)
@given(factors=st.lists(st.tuples(FACTORS, FACTORS, FACTORS), min_size=1, max_size=4))
def test_scaling_rows_leaves_the_general_batch_solver_unchanged(factors):
    """Property: with three rows (the stacked Gram solve of the batch), scaled members follow the unscaled run."""
    span, step, tol = (0.0, 0.3), 0.01, 1e-3
    q0 = np.append(SPHERE_Q0, 0.0)
    qd0 = np.array([0.0, 0.7, 0.0, 0.7])
    reference = simulate(THREE_ROWS, span, q0, qd0, step=step)
    params = [{"s1": a, "s2": b, "s3": c} for a, b, c in factors]
    result = sweep(THREE_ROWS, span, q0, qd0, params=params, step=step, progress=False, constraint_tol=tol)
    assert list(result.status) == ["ok"] * len(params), list(result.message)
    for i in range(len(params)):
        np.testing.assert_allclose(result.q[i], reference.q, rtol=0, atol=1e-9)


# -- r01, r04, r05: what simulate refuses, the sweep refuses; one outcome on both paths ---------------------------
m1, m2, k = sm.symbols("m1 m2 k")
ONE_MASS = Model([x], kinetic_energy=m1 * (1 + x**2) * x.diff() ** 2 / 2, potential_energy=k * x**2 / 2,
                 parameters={m1: 1.0, k: 1.0}).compile()
TWO_MASSES = Model([x, y], kinetic_energy=(m1 * (1 + x**2) * x.diff() ** 2 + m2 * y.diff() ** 2) / 2,
                   potential_energy=k * x**2 / 2, holonomic=[x - y], parameters={m1: 1.0, m2: 1.0, k: 1.0}).compile()
r, th = dynamicsymbols("r theta")
POLAR = Model([r, th], kinetic_energy=(r.diff() ** 2 + r**2 * th.diff() ** 2) / 2).compile()


@pytest.mark.parametrize(
    "model, q0, qd0, params, span",
    [
        (ONE_MASS, [0.5], [0.0], [{"m1": -1.0}, {"m1": 1.0}], (0.0, 1.0)),  # M = m1 (1 + x^2) < 0
        (TWO_MASSES, [0.5, 0.5], [0.0, 0.0], [{"m1": 1.0}, {"m1": -1.0}], (0.0, 1.0)),  # indefinite, Gram positive
        (POLAR, [1.0, 0.0], [-1.0, 0.0], [{}], (0.0, 3.0)),  # M = diag(1, r^2) singular at r = 0 (t = 1)
    ],
    ids=["negative_mass", "indefinite_mass", "singular_at_origin"],
)
def test_r01_sweep_member_with_a_bad_mass_matrix_is_what_simulate_says(model, q0, qd0, params, span):
    """r01: these members were "ok" in the batch; now each has its single run's status, message and samples."""
    result = sweep(model, span, q0, qd0, params=params, method="rk4", step=0.01, progress=False)
    for i, p in enumerate(params):
        outcome = single(model, span, q0, qd0, params=p, method="rk4", step=0.01)
        assert_member_is_single_run(result, i, outcome)
    assert "ok" not in [result.status[i] for i, p in enumerate(params) if p.get("m1", 1.0) < 0]
    if model is POLAR:  # simulate stops before the origin, where M loses rank: at t = 1 (r = 1 - t)
        assert result.status[0] == "singular" and result.stopped_at[0] == pytest.approx(1.0, abs=0.02)


@pytest.mark.parametrize("tol, pattern", [(-1.0, "`constraint_tol` must be >= 0"),
                                          (math.nan, "`constraint_tol` must be a finite number")])
@pytest.mark.parametrize("options", [{}, {"on_singular": "ignore"}], ids=["batched", "one_by_one"])
def test_r04_sweep_refuses_a_bad_constraint_tol_as_simulate_does(tol, pattern, options):
    """r04: a member 1 m off its circle ran as "ok" with constraint_tol NaN or negative."""
    pendulum = chain.cartesian_pendulum()
    with pytest.raises(ValueError, match=pattern):
        simulate(pendulum, (0.0, 1.0), [0.0, -2.0], [0.0, 0.0], step=0.01, constraint_tol=tol)
    with pytest.raises(ValueError, match=pattern):
        sweep(pendulum, (0.0, 1.0), [0.0, -2.0], [0.0, 0.0], params=[{"m": 1.0}], step=0.01, constraint_tol=tol,
              progress=False, **options)
    result = sweep(pendulum, (0.0, 1.0), [0.0, -2.0], [0.0, 0.0], params=[{"m": 1.0}], step=0.01, progress=False,
                   **options)
    assert list(result.status) == ["refused"] and "violates the constraints by 3.000e+00" in result.message[0]


def test_r05_one_outcome_on_both_paths():
    """r05: a block at rest that static friction cannot hold was "failed" batched and "refused" one by one."""
    model = incline_friction.model().compile()
    q0, qd0 = incline_friction.initial_state(0.0, alpha=0.3)
    members = [{"alpha": 0.3, "mu": 0.6, "mu_s": 0.1}, {"alpha": 0.3, "mu": 0.2, "mu_s": 0.6}]
    batched = sweep(model, (0.0, 1.0), q0, qd0, params=members, step=0.01, progress=False)
    alone = sweep(model, (0.0, 1.0), q0, qd0, params=members, step=0.01, progress=False, on_singular="ignore")
    assert list(batched.status) == list(alone.status) == ["refused", "ok"]
    assert batched.message[0] == alone.message[0] and "cannot hold it at rest" in batched.message[0]
    np.testing.assert_equal(batched.stopped_at, alone.stopped_at)
    np.testing.assert_allclose(batched.q, alone.q, rtol=0, atol=1e-12)
    assert_member_is_single_run(batched, 0, single(model, (0.0, 1.0), q0, qd0, params=members[0], step=0.01))


def test_r05_an_all_refused_sweep_returns_its_statuses_on_both_paths():
    """r05: every member refused: the batch returned a result, one by one raised; both return one now."""
    pendulum = chain.cartesian_pendulum().compile()
    q0, qd0 = chain.pendulum_initial_state(1.0)
    for options in ({}, {"on_singular": "ignore"}):
        result = sweep(pendulum, (0.0, 1.0), q0, qd0, params=[{"l": 2.0}, {"l": 3.0}], step=0.01, progress=False,
                       **options)
        assert list(result.status) == ["refused", "refused"] and np.isnan(result.q).all()
    result = sweep(pendulum, (0.0, 1.0), q0, qd0, params=[{"m": 0.0}], step=0.01, progress=False)
    outcome = single(pendulum, (0.0, 1.0), q0, qd0, params={"m": 0.0}, step=0.01)
    assert outcome[0] in ("refused", "failed")
    assert_member_is_single_run(result, 0, outcome)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mass=st.floats(-2.0, 2.0), stiffness=st.floats(-3.0, 3.0), start=st.floats(-1.5, 1.5),
       method=st.sampled_from(["rk4", "euler"]), alone=st.booleans())
def test_any_sweep_member_equals_simulate(mass, stiffness, start, method, alone):
    """Property: a member's status, message, stop time and samples are those of simulate with its inputs."""
    params = [{"m1": mass, "k": stiffness}, {"m1": 1.0, "k": 1.0}]
    options = {"on_singular": "ignore"} if alone else {}
    span, step = (0.0, 1.0), 0.02
    result = sweep(TWO_MASSES, span, [start, start], [0.0, 0.0], params=params, method=method, step=step,
                   progress=False, **options)
    for i, p in enumerate(params):
        outcome = single(TWO_MASSES, span, [start, start], [0.0, 0.0], params=p, method=method, step=step, **options)
        assert_member_is_single_run(result, i, outcome, atol=1e-11)


# -- r02: one overflowing member does not sink the batch -------------------------------------------------------
def test_r02_an_overflowing_member_fails_alone():
    model = chain.n_link_chain(3).compile()
    q0, qd0 = chain.chain_initial_state(3)
    params = [{"g": 9.81}, {"g": 1e100}]
    result = sweep(model, (0.0, 1.0), q0, qd0, params=params, method="rk4", step=0.01, progress=False)
    assert list(result.status) == ["ok", "failed"]
    for i, p in enumerate(params):
        assert_member_is_single_run(result, i, single(model, (0.0, 1.0), q0, qd0, params=p, method="rk4", step=0.01))


# -- r03: the sweep estimates its memory first -----------------------------------------------------------------
@pytest.mark.parametrize("options", [{}, {"on_singular": "ignore"}], ids=["batched", "one_by_one"])
def test_r03_a_sweep_too_large_for_memory_is_refused_before_it_starts(options):
    """100 members x 1e6 steps x 6 numbers = 4.5 GiB: refused at once, naming the way out."""
    pendulum = chain.cartesian_pendulum()
    q0, qd0 = chain.pendulum_initial_state(1.0)
    params = [{"m": 1.0 + 0.01 * i} for i in range(100)]
    with pytest.raises(ValueError, match=r"needs about 4\.5 GiB .*larger `step`, fewer members"):
        sweep(pendulum, (0.0, 100.0), q0, qd0, params=params, method="euler", step=1e-4, progress=False, **options)


# -- r07: fixed-step t_eval keeps every requested time --------------------------------------------------------
@pytest.mark.parametrize("method", ["rk4", "euler"])
def test_r07_fixed_step_t_eval_keeps_close_times(method):
    pendulum = chain.cartesian_pendulum()
    q0, qd0 = chain.pendulum_initial_state(1.0)
    t_eval = np.array([0.0, 0.5, 0.5 + 1e-13, 0.5 + 2e-13, 0.7, 1.0 - 1e-13])
    run = simulate(pendulum, (0.0, 1.0), q0, qd0, method=method, step=0.01, t_eval=t_eval)
    np.testing.assert_array_equal(run.t, t_eval)
    # 1e-13 s apart, the states differ by the speed (about 2.5 m/s) times 1e-13
    assert np.abs(run.q[2] - run.q[1]).max() < 1e-12 and np.abs(run.q[3] - run.q[1]).max() < 1e-12
    # the grid itself is unchanged: the sample at 0.7 is the plain run's
    plain = simulate(pendulum, (0.0, 1.0), q0, qd0, method=method, step=0.01)
    np.testing.assert_allclose(run.q[4], plain.q[70], rtol=0, atol=1e-12)


# -- r09: an adaptive run that fails keeps its samples -------------------------------------------------------
@pytest.mark.parametrize("method", ["RK45", "DOP853", "LSODA", "BDF"])
def test_r09_adaptive_failure_keeps_the_samples_before(method):
    """A pendulum written as y = -sqrt(1 - x^2) fails where x reaches 1 (y' becomes infinite), near t = 0.045."""
    pend = Model([x, y], kinetic_energy=(x.diff() ** 2 + y.diff() ** 2) / 2, potential_energy=9.81 * y,
                 holonomic=[y + sm.sqrt(1 - x**2)])
    a0, w0 = 1.4, 4.0
    q0 = np.array([math.sin(a0), -math.cos(a0)])
    qd0 = np.array([math.cos(a0) * w0, math.sin(a0) * w0])
    with pytest.raises(SimulationError) as caught:
        simulate(pend, (0.0, 1.0), q0, qd0, method=method)
    kept = caught.value.trajectory
    assert kept is not None and kept.status == "failed" and "(none)" not in str(caught.value)
    assert kept.t[0] == 0.0 and np.all(np.diff(kept.t) > 0) and kept.t[-1] < caught.value.time
    assert kept.t[-1] > 0.04  # the angle reaches pi/2 at about 0.045 s (a0 = 1.4 rad at 4 rad/s)
    # the samples are the motion: on the circle, at the angle of the swing (within the run's tolerance)
    np.testing.assert_allclose(kept.q[:, 0] ** 2 + kept.q[:, 1] ** 2, 1.0, atol=1e-5)
    angle = np.arctan2(kept.q[:, 0], -kept.q[:, 1])
    assert np.all(np.diff(angle) > 0) and angle[-1] < math.pi / 2 + 1e-5  # to the failure, where x = 1


# -- r17: check_system refuses the runs that diverge -----------------------------------------------------------
DIVERGING = [  # method, step, alpha, beta, span, angle, rate, l, g (the cases and the reproducer's)
    ("rk4", 0.05, 50.0, 50.0, (0.0, 20.0), 1.0, 0.0, 1.0, 9.81),
    ("rk4", 0.04, 60.0, 60.0, (0.0, 20.0), 1.0, 0.0, 1.0, 9.81),
    ("rk4", 0.08, 30.0, 30.0, (0.0, 20.0), 1.0, 0.0, 1.0, 9.81),
    ("rk4", 0.1014, 0.4673, 0.1929, (0.0, 5.0), 1.100, 2.871, 0.3, 20.0),
    ("euler", 0.006144, 0.5336, 5.1, (0.0, 20.0), 2.344, -4.226, 1.0, 9.81),
]


@pytest.mark.parametrize("case", DIVERGING, ids=[f"{c[0]}-{c[1]}-{c[2]}" for c in DIVERGING])
def test_r17_check_system_refuses_runs_that_diverge(case):
    method, step, alpha, beta, span, angle, rate, l, g = case
    pendulum = chain.cartesian_pendulum().compile()
    q0, qd0 = chain.pendulum_initial_state(angle, rate, l=l)
    gain, params = Baumgarte(alpha, beta), {"l": l, "g": g}
    run = simulate(pendulum, span, q0, qd0, method=method, step=step, stabilization=gain, params=params,
                   allow_unstable=True)
    assert run.status == "diverged"  # the run these checks must keep from being accepted
    report = system_stability(pendulum, gain, method, step, span, q0, qd0, params=params)
    assert not report.accepted and "whole system" in report.failed
    with pytest.raises(UnstableGainError, match="whole system failed"):
        simulate(pendulum, span, q0, qd0, method=method, step=step, stabilization=gain, params=params,
                 check_system=True)


@pytest.mark.slow
@settings(max_examples=30, deadline=None)
@given(method=st.sampled_from(["euler", "rk4"]), step=st.floats(0.002, 0.12), alpha=st.floats(0.2, 80.0),
       beta=st.floats(0.2, 80.0), angle=st.floats(0.1, 2.5), rate=st.floats(-5.0, 5.0),
       length=st.sampled_from([0.3, 1.0, 2.0]), gravity=st.sampled_from([9.81, 20.0]))
def test_accepted_runs_of_the_pendulum_stay_on_its_circle(method, step, alpha, beta, angle, rate, length, gravity):
    """Property: whatever check_system accepts stays below DRIFT_BOUND (l^2) and never diverges (5 s)."""
    pendulum = chain.cartesian_pendulum().compile()
    q0, qd0 = chain.pendulum_initial_state(angle, rate, l=length)
    params = {"l": length, "g": gravity}
    try:
        run = simulate(pendulum, (0.0, 5.0), q0, qd0, method=method, step=step, stabilization=Baumgarte(alpha, beta),
                       params=params, check_system=True)
    except UnstableGainError:
        return
    assert run.status == "ok" and np.abs(run.position_residual).max() <= DRIFT_BOUND * length**2
