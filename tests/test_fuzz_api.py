"""Findings of the public-API fuzz (issue 22): crashes, hangs, unclear errors and false refusals.

Each test turns one reproducer of ``../shared/repro`` (named in its docstring)
into a check of the right answer (a closed form or an independent route) or
of a refusal that names the argument.
"""

from __future__ import annotations

import keyword
import math

import numpy as np
import pytest
import sympy as sm
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sympy.physics.mechanics import dynamicsymbols

import udk_notebooks as udk
from udk_notebooks.model import TIME

x, y = dynamicsymbols("x y")
Q_STATE, QD_STATE = np.array([0.3]), np.array([0.1])


# -- r14: parameter names that shadow constants, functions or time -----------------------------------------
def _line_model(name: str, value: float = 2.0) -> udk.Model:
    """``T = x'^2 / 2``, ``V = k x + pi x^2 + E x^3 / 10 + sqrt(1 + x^2) + gamma(x + 3) / 10``, force ``cos(t)``.

    The parameter ``k`` is called ``name``; every sympy constant and function
    that a parameter could shadow appears beside it.
    """
    k = sm.Symbol(name)
    potential = k * x + sm.pi * x**2 + sm.E * x**3 / 10 + sm.sqrt(1 + x**2) + sm.gamma(x + 3) / 10
    return udk.Model([x], kinetic_energy=x.diff() ** 2 / 2, potential_energy=potential,
                     forces=[sm.cos(TIME)], parameters={k: value})


def _line_acceleration(k: float, q: float, t: float) -> float:
    """``x'' = -dV/dx + cos t`` of :func:`_line_model`, written out by hand."""
    dpot = (k + 2 * math.pi * q + 3 * math.e * q**2 / 10 + q / math.sqrt(1 + q**2)
            + math.gamma(q + 3) * float(sm.digamma(q + 3)) / 10)
    return -dpot + math.cos(t)


@pytest.mark.parametrize("name", ["pi", "e", "E", "gamma", "sqrt", "exp", "cos", "x0", "lambda", "math", "I"])
def test_r14_parameter_named_like_a_constant_or_function(name):
    """r14: a parameter called ``pi``, ``e``, ``gamma``... is a parameter, and sympy's ``pi`` stays pi."""
    cm = _line_model(name).compile()
    qdd = cm.motion(0.7, Q_STATE, QD_STATE).qdd[0]
    assert qdd == pytest.approx(_line_acceleration(2.0, 0.3, 0.7), rel=1e-12)
    qdd = cm.motion(0.7, Q_STATE, QD_STATE, **{name: 5.0}).qdd[0]
    assert qdd == pytest.approx(_line_acceleration(5.0, 0.3, 0.7), rel=1e-12)


def test_r14_simulate_output_with_shadowing_parameter_names():
    """r14: the output step (energy, powers) sees the same parameter as the integrator."""
    run = udk.simulate(_line_model("pi"), (0, 0.2), [0.3], [0.1], method="rk4", step=1e-3)
    reference = udk.simulate(_line_model("k"), (0, 0.2), [0.3], [0.1], method="rk4", step=1e-3)
    np.testing.assert_allclose(run.q, reference.q, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(run.energy, reference.energy, rtol=1e-13)


def test_r14_parameter_named_t_is_refused():
    """r14: ``Symbol("t")`` is the time of every model; as a parameter it froze time. It is refused by name."""
    F0, t = sm.symbols("F0 t")
    with pytest.raises(ValueError, match=r"`parameters`: .*`t` is the time"):
        udk.Model([x], kinetic_energy=x.diff() ** 2 / 2, forces=[F0 * sm.cos(t)], parameters={F0: 1.0, t: 0.0})
    with pytest.raises(ValueError, match=r"`parameters`: .*`t` is the time"):
        udk.Model([x], kinetic_energy=x.diff() ** 2 / 2, forces=[F0 * sm.cos(t)], parameters={"F0": 1.0, "t": 0.0})


def test_r14_time_dependent_force_is_not_frozen():
    """r14: ``F0 cos t`` on a unit mass from rest gives ``x = F0 (1 - cos t)``."""
    F0 = sm.Symbol("F0")
    model = udk.Model([x], kinetic_energy=x.diff() ** 2 / 2, forces=[F0 * sm.cos(TIME)], parameters={F0: 1.0})
    run = udk.simulate(model, (0, 3), [0.0], [0.0], method="rk4", step=0.01)
    assert run.q[-1, 0] == pytest.approx(1 - math.cos(3.0), rel=1e-8)


RISKY_NAMES = ["pi", "e", "E", "I", "t", "gamma", "sqrt", "exp", "cos", "sin", "log", "x0", "x1", "q", "p",
               "math", "numpy", "np", "scipy", "builtins", "abs", "range", "float", "_p0", "_t", "Dummy",
               "a b", "1x", "m'", "k.1", "oo", "nan", "zoo", "S", "N", "Q", "O", *keyword.kwlist[:12]]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.one_of(st.sampled_from(RISKY_NAMES), st.text(min_size=1, max_size=6)))
def test_r14_any_parameter_name_works_or_is_refused(name):
    """r14 (property): any name a user may choose gives the motion of a neutral name, or a ValueError naming it."""
    try:
        model = _line_model(name)
    except ValueError as exc:
        assert "`parameters`" in str(exc) and repr(name) in str(exc) or f"`{name}`" in str(exc), str(exc)
        return
    cm = model.compile()
    assert cm.motion(0.7, Q_STATE, QD_STATE).qdd[0] == pytest.approx(_line_acceleration(2.0, 0.3, 0.7), rel=1e-12)


# -- r13: special functions in every generated function -------------------------------------------------
@pytest.mark.parametrize("potential, force", [
    (sm.besselj(0, x), lambda q: float(sm.besselj(1, q))),  # -d/dx J0 = J1
    (sm.erf(x), lambda q: -2 / math.sqrt(math.pi) * math.exp(-q * q)),
    (sm.gamma(x + 2), lambda q: -math.gamma(q + 2) * float(sm.digamma(q + 2))),
], ids=["besselj", "erf", "gamma"])
def test_r13_special_functions_in_simulate_output(potential, force):
    """r13: a potential with a Bessel function, erf or gamma runs through simulate, output step included."""
    model = udk.Model([x], kinetic_energy=x.diff() ** 2 / 2, potential_energy=potential)
    assert model.compile().motion(0.0, Q_STATE, QD_STATE).qdd[0] == pytest.approx(force(0.3), rel=1e-12)
    run = udk.simulate(model, (0, 0.5), [0.3], [0.1], method="rk4", step=1e-3)
    assert run.qdd[0, 0] == pytest.approx(force(0.3), rel=1e-12)
    exact_energy = 0.1**2 / 2 + float(potential.subs(x, 0.3))
    np.testing.assert_allclose(run.energy, exact_energy, rtol=1e-9)  # a conservative run keeps its energy


# -- r12: Abs in a Model ----------------------------------------------------------------------------------
def test_r12_abs_in_the_potential_differentiates_to_sign():
    """r12: ``V = k |x|`` gives the force ``-k sign(x)`` (the coordinates are real)."""
    k = sm.Symbol("k")
    model = udk.Model([x, y], kinetic_energy=(x.diff() ** 2 + y.diff() ** 2) / 2, potential_energy=k * sm.Abs(x),
                      parameters={k: 1.5})
    assert sm.simplify(model.Q[0] + k * sm.sign(x)) == 0
    cm = model.compile()
    assert cm.motion(0.0, [0.4, 0.0], [0.0, 0.0]).qdd.tolist() == pytest.approx([-1.5, 0.0], rel=1e-15)
    assert cm.motion(0.0, [-0.4, 0.0], [0.0, 0.0]).qdd.tolist() == pytest.approx([1.5, 0.0], rel=1e-15)
    run = udk.simulate(model, (0, 0.5), [0.5, 0.0], [0.0, 0.0], method="rk4", step=1e-3)
    assert run.q[-1, 0] == pytest.approx(0.5 - 1.5 * 0.5**2 / 2, rel=1e-10)  # constant force until x = 0


def test_r12_kink_in_a_constraint_is_refused_by_name():
    """r12: the guide ``y = |x|`` differentiated twice has a Dirac delta at the kink: refused, naming the row."""
    with pytest.raises(ValueError, match=r"`holonomic\[0\]`.*kink"):
        udk.Model([x, y], kinetic_energy=(x.diff() ** 2 + y.diff() ** 2) / 2, potential_energy=9.81 * y,
                  holonomic=[y - sm.Abs(x)])
    with pytest.raises(ValueError, match=r"`potential_energy`.*kink"):
        udk.Model([x], kinetic_energy=x.diff() ** 2 / 2, potential_energy=sm.Heaviside(x))


# -- r08, r10: a pendulum written as y = -sqrt(1 - x^2), sent over the horizontal ----------------------------
def _half_circle_pendulum():
    """The lower half circle ``y = -sqrt(1 - x^2)``: the model cannot be evaluated past ``x = 1``."""
    model = udk.Model([x, y], kinetic_energy=(x.diff() ** 2 + y.diff() ** 2) / 2, potential_energy=9.81 * y,
                      holonomic=[y + sm.sqrt(1 - x**2)])
    a0, w0 = 1.4, 4.0
    return model, [math.sin(a0), -math.cos(a0)], [math.cos(a0) * w0, math.sin(a0) * w0]


def _assert_failed_with_time_and_state(error: udk.SimulationError, t_low: float, t_high: float,
                                       samples: bool = True) -> None:
    assert t_low < error.time < t_high
    assert error.state.shape == (4,) and error.state[0] == pytest.approx(1.0, abs=0.05)
    assert f"t = {error.time:.6g}" in str(error) and "q = [" in str(error)
    if samples:  # (adaptive runs that fail keep their samples once issue 22's r09 is done)
        assert error.trajectory is not None and error.trajectory.t[-1] < error.time


@pytest.mark.parametrize("on_singular", ["stop", "raise", "warn", "ignore"])
def test_r08_fixed_step_failure_inside_the_singular_monitor(on_singular):
    """r08: with the monitor on, Euler's step to where sqrt(1 - x^2) is undefined gives the SimulationError."""
    model, q0, qd0 = _half_circle_pendulum()
    with pytest.raises(udk.SimulationError, match="math domain error") as info:
        udk.simulate(model, (0, 1.0), q0, qd0, method="euler", step=1e-3, on_singular=on_singular)
    _assert_failed_with_time_and_state(info.value, 0.03, 0.05)


@pytest.fixture
def hang_guard():
    """Turns a hang into a test failure after 300 s (a guard, not a timing assertion)."""
    import signal

    def alarm(*_):
        raise TimeoutError("simulate did not return within 300 s")

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(300)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize("method", ["Radau", "BDF", "RK45"])
def test_r10_adaptive_run_that_stalls_stops_with_simulation_error(hang_guard, method):
    """r10: Radau crept at 1e-13 s per step near x = 1 (millions of solves); every method now stops."""
    model, q0, qd0 = _half_circle_pendulum()
    with pytest.raises(udk.SimulationError) as info:
        udk.simulate(model, (0, 1.0), q0, qd0, method=method)
    _assert_failed_with_time_and_state(info.value, 0.04, 0.05, samples=False)


# -- r18: a mass ratio above 1e10 is not a singular mass matrix ---------------------------------------------
EARTH, SATELLITE = 6e24, 1e3


def test_r18_large_mass_ratio_bare_solvers():
    """r18: Earth and a satellite as free bodies: ``q'' = Q / m`` per coordinate, by both routes."""
    M = np.diag([EARTH, EARTH, SATELLITE, SATELLITE])
    Q = np.array([0.0, 0.0, -8.2e3, 0.0])
    expected = [0.0, 0.0, -8.2, 0.0]
    np.testing.assert_allclose(udk.udwadia_kalaba(M, Q).qdd, expected, rtol=1e-15)
    np.testing.assert_allclose(udk.lagrange_multipliers(M, Q, np.zeros((0, 4)), np.zeros(0))[0], expected,
                               rtol=1e-15)
    # a constraint (the satellite on the line y = 0) beside the mass ratio, and a massless third coordinate fixed
    # by a constraint (a semi-definite M whose other entries span 21 orders of magnitude)
    A, b = np.array([[0.0, 0.0, 0.0, 1.0]]), np.array([0.0])
    np.testing.assert_allclose(udk.udwadia_kalaba(M, Q, A, b).qdd, expected, rtol=1e-15)
    M3 = np.diag([EARTH, SATELLITE, 0.0])
    A3, b3 = np.array([[0.0, 0.0, 1.0]]), np.array([2.0])
    np.testing.assert_allclose(udk.udwadia_kalaba(M3, [EARTH, -8.2e3, 0.0], A3, b3).qdd, [1.0, -8.2, 2.0],
                               rtol=1e-14)


def test_r18_singular_mass_matrix_still_refused():
    """r18: equilibrating M must not hide a mass matrix that is singular (two coordinates with one mass)."""
    M = np.array([[1.0, 1.0], [1.0, 1.0]]) * EARTH
    with pytest.raises(udk.NonUniqueAccelerationError):
        udk.udwadia_kalaba(M, [0.0, 1.0])
    with pytest.raises(udk.NonUniqueAccelerationError):
        udk.lagrange_multipliers(M, [0.0, 1.0], np.zeros((0, 2)), np.zeros(0))


def test_r18_satellite_orbit_in_si_units():
    """r18: a circular orbit of 7000 km about the Earth (SI units) follows Kepler: angle ``omega t``."""
    x1, y1, x2, y2 = dynamicsymbols("x1 y1 x2 y2")
    M1, M2, G = sm.symbols("M1 M2 G")
    distance = sm.sqrt((x2 - x1) ** 2 + (y2 - y1) ** 2)
    model = udk.Model([x1, y1, x2, y2],
                      kinetic_energy=(M1 * (x1.diff() ** 2 + y1.diff() ** 2) + M2 * (x2.diff() ** 2 + y2.diff() ** 2)) / 2,
                      potential_energy=-G * M1 * M2 / distance, parameters={M1: EARTH, M2: SATELLITE, G: 6.674e-11})
    radius = 7e6
    mu = 6.674e-11 * (EARTH + SATELLITE)  # the relative orbit of two bodies
    speed = math.sqrt(mu / radius)
    run = udk.simulate(model, (0, 60), [0, 0, radius, 0], [0, 0, 0, speed], method="DOP853", rtol=1e-11, atol=1e-6)
    assert run.status == "ok"
    angle = speed / radius * 60.0
    relative = run.q[-1, 2:] - run.q[-1, :2]
    np.testing.assert_allclose(relative, [radius * math.cos(angle), radius * math.sin(angle)], rtol=1e-8, atol=1e-2)


# -- lagrange_multipliers refuses what udwadia_kalaba refuses ----------------------------------------------------
def test_lagrange_multipliers_massless_contradictory_rows_refused():
    """Issue 22: with M = 0 the consistency test divided by max|M| = 0 and accepted contradictory rows."""
    for A, b in ((np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]), np.array([1.0, 0.0, 2.0])),
                 (np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]]), np.array([1.0, 2.0, 0.0]))):  # was [1.5, 0]
        with pytest.raises(udk.InconsistentConstraintsError):
            udk.udwadia_kalaba(np.zeros((2, 2)), [0.0, 0.0], A, b)
        with pytest.raises(udk.InconsistentConstraintsError):
            udk.lagrange_multipliers(np.zeros((2, 2)), [0.0, 0.0], A, b)
    A = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    # consistent rows with M = 0 determine q'' by the constraints alone: both routes agree
    b = np.array([1.0, 0.5, 1.5])
    np.testing.assert_allclose(udk.lagrange_multipliers(np.zeros((2, 2)), [0.0, 0.0], A, b)[0], [1.0, 0.5])
    np.testing.assert_allclose(udk.udwadia_kalaba(np.zeros((2, 2)), [0.0, 0.0], A, b).qdd, [1.0, 0.5])


# -- r19: a huge Baumgarte gain --------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["euler", "rk4"])
@pytest.mark.parametrize("beta", [1e80, 1e150, 1e155, 1e300])
def test_r19_huge_gain_is_an_unstable_gain_not_an_overflow(method, beta):
    """r19: beta above ~1.3e154 raised a bare OverflowError; beta = 1e80 with RK4 a LinAlgError."""
    from udk_notebooks.examples import chain

    gain = udk.Baumgarte(1.0, beta)
    with pytest.raises(udk.UnstableGainError, match=r"Baumgarte\(alpha=1, beta=1e\+\d+"):
        udk.check_gain(gain, method, 0.01, 1, 0)
    q0, qd0 = chain.pendulum_initial_state(1.0)
    model = chain.cartesian_pendulum()
    with pytest.raises(udk.UnstableGainError):
        udk.simulate(model, (0, 1), q0, qd0, method=method, step=0.01, stabilization=gain)
    try:  # run anyway: it diverges or fails, by the documented routes
        run = udk.simulate(model, (0, 1), q0, qd0, method=method, step=0.01, stabilization=gain, allow_unstable=True)
        assert run.status == "diverged"
    except udk.SimulationError as exc:
        assert "t = " in str(exc)


# -- r16 and the pattern-kernel path of motion(): every route names the bad argument ------------------------
@pytest.fixture(scope="module")
def pendulum():
    from udk_notebooks.examples import chain

    model = chain.cartesian_pendulum()
    return model, *chain.pendulum_initial_state(1.0)


@pytest.mark.parametrize("value", ["abc", None, 1j, np.array([1.0, 2.0]), [9.81], True, math.nan, math.inf])
def test_motion_parameter_values_are_checked_by_name(pendulum, value):
    """Issue 22: ``motion(g='abc')``, ``g=None``, ``g=1j``, ``g=`` an array gave raw conversion errors."""
    model, q0, qd0 = pendulum
    with pytest.raises(ValueError, match=r"parameter `g` must be a finite real number"):
        model.compile().motion(0.0, q0, qd0, g=value)
    with pytest.raises(ValueError, match=r"parameter `g` must be a finite real number"):
        udk.simulate(model, (0, 1), q0, qd0, params={"g": value})


def test_motion_zero_dimensional_parameter_is_a_number(pendulum):
    """A 0-d array is a number: ``g = np.array(9.81)`` is the default's motion."""
    model, q0, qd0 = pendulum
    cm = model.compile()
    np.testing.assert_array_equal(cm.motion(0.0, q0, qd0, g=np.array(9.81)).qdd, cm.motion(0.0, q0, qd0).qdd)


@pytest.mark.parametrize("call, message", [
    (lambda cm, q0, qd0: cm.motion(0.0, q0, None), r"`qd` must be"),
    (lambda cm, q0, qd0: cm.motion(0.0, None, qd0), r"`q` must be"),
    (lambda cm, q0, qd0: cm.motion(0.0, q0, qd0, stabilization="baumgarte"), r"`stabilization` must be a Baumgarte"),
    (lambda cm, q0, qd0: udk.simulate(cm, (0, 1), q0, qd0, method="DOP853", stabilization="baumgarte"),
     r"`stabilization` must be a Baumgarte"),
    (lambda cm, q0, qd0: udk.simulate(cm, (0, 1), q0, qd0, params=[1.0]), r"`params` must be a dict"),
    (lambda cm, q0, qd0: udk.simulate(cm, (0, 1), q0, qd0, max_switches="a"), r"`max_switches` must be"),
    (lambda cm, q0, qd0: udk.simulate(cm, (0, 1), q0, qd0, max_switches=-1), r"`max_switches` must be"),
])
def test_every_route_names_the_bad_argument(pendulum, call, message):
    """Issue 22: qd=None gave an AttributeError, a string stabilization one with adaptive methods."""
    model, q0, qd0 = pendulum
    with pytest.raises(ValueError, match=message):
        call(model.compile(), q0, qd0)


def _sweep(model, q0, qd0, **options):
    from udk_notebooks.sweep import sweep

    return sweep(model, (0, 1), q0, qd0, step=0.01, progress=False, **options)


@pytest.mark.parametrize("options, message", [
    (dict(params={"m": [1.0, 2.0]}), r"`params`.*`m`.*parameter_grid"),
    (dict(params=[1.0, 2.0]), r"`params\[0\]` must be a dict"),
    (dict(params={"m": None}), r"parameter `m` must be a finite real number"),
    (dict(params=[{"m": 1.0}, {"m": 2.0}], method="rk5"), r"`method` must be one of"),
])
def test_r16_sweep_arguments_named(pendulum, options, message):
    """r16: a grid given as a dict, params that are not dicts, a bad method: refused up front, by name."""
    model, q0, qd0 = pendulum
    with pytest.raises(ValueError, match=message):
        _sweep(model, q0, qd0, **options)


def test_r16_sweep_state_shapes_named(pendulum):
    """r16: q0 of the wrong length or member count gave numpy's broadcast error."""
    model, q0, qd0 = pendulum
    two = [{"m": 1.0}, {"m": 2.0}]
    with pytest.raises(ValueError, match=r"`q0` must have shape \(2,\) or \(2, 2\).*got shape \(3, 2\)"):
        _sweep(model, np.array([q0, q0, q0]), qd0, params=two)
    with pytest.raises(ValueError, match=r"`q0` must have shape \(2,\) or \(B, 2\).*got shape \(3,\)"):
        _sweep(model, [0.0, 0.0, 1.0], [0.0, 0.0, 0.0])


def test_r16_simulate_parameter_none(pendulum):
    model, q0, qd0 = pendulum
    with pytest.raises(ValueError, match=r"parameter `m` must be a finite real number; got None"):
        udk.simulate(model, (0, 1), q0, qd0, params={"m": None})


def test_r16_friction_entry_that_is_not_a_contact():
    """r16: ``friction=["x'"]`` gave an AttributeError from inside Model."""
    with pytest.raises(ValueError, match=r"`friction\[0\]` must be a CoulombFriction"):
        udk.Model([x, y], kinetic_energy=(x.diff() ** 2 + y.diff() ** 2) / 2, holonomic=[y], friction=["x'"])


def test_r16_model_that_cannot_be_evaluated_names_state_and_parameters():
    """r16: ``sqrt(-k)`` with k = 1 gave a bare "math domain error" from generated code."""
    k = sm.Symbol("k")
    model = udk.Model([x], kinetic_energy=x.diff() ** 2 / 2, potential_energy=sm.sqrt(-k) * x, parameters={k: 1.0})
    with pytest.raises(ValueError, match=r"cannot be evaluated at t = 0, q = \[0\.5\].*k = 1.*math domain error"):
        model.compile().motion(0.0, [0.5], [0.0])
    with pytest.raises(ValueError, match=r"cannot be evaluated .*k = 1"):
        model.compile().motion(0.0, [0.5], [0.0], k=1.0)
    assert model.compile().motion(0.0, [0.5], [0.0], k=-4.0).qdd[0] == pytest.approx(-2.0)


# -- r15: the growing-circle explorer does not offer R0 = 0 ------------------------------------------------
def test_r15_growing_circle_explorer_offers_only_positive_radii():
    """r15: R0 = 0 (a circle of zero radius at t = 0, where every run starts) was offered and always errored."""
    import matplotlib

    matplotlib.use("Agg")
    from udk_notebooks.widgets import GrowingCircleExplorer

    explorer = GrowingCircleExplorer(samples=21)
    try:
        low = explorer.controls["R0"].min
        assert low > 0
        explorer.set(R0=low, horizon=1.0)
        assert explorer.error == ""
        trajectory = explorer.result.trajectory
        radius = np.hypot(trajectory.q[:, 0], trajectory.q[:, 1])
        a = explorer.controls["a"].value
        np.testing.assert_allclose(radius, a * trajectory.t + low, rtol=1e-7)  # R(t) = a t + R0
        explorer.set(R0=0.0)  # the slider keeps to its range
        assert explorer.controls["R0"].value == low and explorer.error == ""
    finally:
        explorer.close()


# -- udwadia_kalaba at extreme but finite scales ------------------------------------------------------------
def test_extreme_scale_zero_force_does_not_set_the_unit():
    """Issue 22: with Q = 0 and M = 1e-300 I the unit of acceleration came from a "size one" Q and b flushed to 0."""
    M, Q, A, b = 1e-300 * np.eye(2), [0.0, 0.0], [[1e191, 0.0]], [1e191 * 1e-300]
    assert udk.udwadia_kalaba(M, Q, A, b).qdd[0] == pytest.approx(1e-300, rel=1e-14)
    assert udk.lagrange_multipliers(M, Q, A, b)[0][0] == pytest.approx(1e-300, rel=1e-14)


@pytest.mark.parametrize("M, Q, A, b", [
    ([[1e-17]], [1e10], [[1e300]], [1.0]),  # true q'' = 1e-300 beside Q / M = 1e27
    ([[1e-17]], [1.0], [[1e300]], [1.0]),  # gave 1.00000017e-300 (b became subnormal)
    (1e-300 * np.eye(2), [1.0, 1.0], [[1e191, 0.0]], [1e-109]),  # gave x'' = -2.6e284 instead of 1e-300
])
def test_extreme_scale_unresolvable_inputs_refused(M, Q, A, b):
    """Issue 22: inputs spanning more than the floating-point range are refused, naming the entry."""
    for route in (udk.udwadia_kalaba, udk.lagrange_multipliers):
        with pytest.raises(ValueError, match=r"`b\[0\]` = .* too small to resolve"):
            route(M, Q, A, b)


@settings(max_examples=200, deadline=None)
@given(mass=st.integers(-300, 300), force=st.integers(-300, 300), row=st.integers(-300, 300),
       rhs=st.integers(-300, 300))
def test_fully_constrained_coordinate_at_any_scale(mass, force, row, rhs):
    """Property: one coordinate, one row ``A q'' = b``: the answer is ``b / A`` whatever ``M`` and ``Q``, or a refusal."""
    M, Q, A, b = [[10.0**mass]], [10.0**force], [[10.0**row]], [10.0**rhs]
    power = rhs - row
    try:
        qdd = udk.udwadia_kalaba(M, Q, A, b).qdd[0]
    except ValueError as exc:
        assert "`" in str(exc)  # names the argument
        return
    assert power <= 308  # an answer past the floating-point range is refused
    if power >= -307:
        assert qdd == pytest.approx(10.0**power, rel=1e-12)
    else:  # the answer itself is subnormal or underflows: the nearest double, to the subnormal spacing
        assert qdd == pytest.approx(10.0**power, abs=1e-322)


def test_r14_sweep_with_shadowing_parameter_names():
    """r14: the batched sweep (its own generated functions) sees the renamed parameter too."""
    from udk_notebooks.sweep import sweep

    result = sweep(_line_model("pi"), (0, 0.2), [0.3], [0.1], params=[{"pi": 2.0}, {"pi": 5.0}], step=1e-3,
                   progress=False)
    for i, k in enumerate((2.0, 5.0)):
        single = udk.simulate(_line_model("k", k), (0, 0.2), [0.3], [0.1], method="rk4", step=1e-3)
        np.testing.assert_allclose(result.q[i], single.q, rtol=1e-12, atol=1e-14)


def test_a_negligible_force_entry_is_not_refused():
    """A force entry whose acceleration is below rounding beside the rest is flushed, not refused (hypothesis found
    ``C = (2.23e-308, ...)`` refused in Eq. (32)): the answer is the one without it, to rounding."""
    M, Q, A, b = np.eye(2), [0.0, -9.81], [[0.5, -1.0]], [0.0]
    tiny = udk.udwadia_kalaba(M, Q, A, b, C=[2.23e-308, 1.0]).qdd
    plain = udk.udwadia_kalaba(M, Q, A, b, C=[0.0, 1.0]).qdd
    np.testing.assert_allclose(tiny, plain, rtol=1e-15, atol=0)
