"""Runs that diverge are stopped and flagged; the whole-system check catches what the error check cannot (issue 11)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sympy.physics.mechanics import dynamicsymbols

from udk_notebooks import Model, simulate
from udk_notebooks.errors import UnstableGainError
from udk_notebooks.examples import chain
from udk_notebooks.simulation import DIVERGENCE_FACTOR
from udk_notebooks.stabilization import DRIFT_BOUND, Baumgarte, check_gain, system_stability


@pytest.fixture(scope="module")
def pendulum():
    return chain.cartesian_pendulum().compile()


def test_the_error_check_passes_a_run_that_diverges(pendulum):
    """Lesson 2's case: Euler, step 0.01, alpha = beta = 5, 20 s, released at 1 rad."""
    q0, qd0 = chain.pendulum_initial_state(1.0)
    gain = Baumgarte(5.0, 5.0)
    report = check_gain(gain, "euler", 0.01, 1, 0)
    assert report.bounded and report.spectral_radius < 1  # Beshaw's condition holds ...
    whole = system_stability(pendulum, gain, "euler", 0.01, (0.0, 20.0), q0, qd0)
    assert whole.failed == ("whole system",) and whole.state_growth > whole.growth_tol  # ... the system does not
    assert whole.suggested_step is not None and whole.suggested_step < 0.01
    with pytest.raises(UnstableGainError, match="whole system failed"):
        simulate(pendulum, (0.0, 20.0), q0, qd0, method="euler", step=0.01, stabilization=gain, check_system=True)
    run = simulate(pendulum, (0.0, 20.0), q0, qd0, method="euler", step=0.01, stabilization=gain)
    assert run.diverged and run.status == "diverged"
    assert 0.0 < run.stop_time < 20.0 and run.t[-1] < run.stop_time
    assert "DIVERGENCE_FACTOR" in run.stop_reason
    assert np.all(np.isfinite(run.q)) and np.all(np.isfinite(run.position_residual))
    # At the suggested step the same gain passes both checks and the run stays on the circle.
    small = whole.suggested_step
    run = simulate(pendulum, (0.0, 20.0), q0, qd0, method="euler", step=small, stabilization=gain, check_system=True)
    assert not run.diverged and np.abs(run.position_residual).max() <= DRIFT_BOUND


def test_a_gain_that_does_not_pull_back_is_refused_unless_asked(pendulum):
    q0, qd0 = chain.pendulum_initial_state(0.5)
    gain = Baumgarte(50.0, 50.0)  # Euler, step 0.04: tau alpha = 2, a double eigenvalue of R on the unit circle
    with pytest.raises(UnstableGainError, match="allow_unstable=True"):
        simulate(pendulum, (0.0, 5.0), q0, qd0, method="euler", step=0.04, stabilization=gain)
    run = simulate(pendulum, (0.0, 5.0), q0, qd0, method="euler", step=0.04, stabilization=gain, allow_unstable=True)
    assert run.diverged and run.stop_time < 5.0  # flagged, never returned as a normal trajectory
    with pytest.raises(ValueError, match="allow_unstable"):
        simulate(pendulum, (0.0, 1.0), q0, qd0, method="euler", step=0.04, stabilization=gain, allow_unstable="yes")


def test_adaptive_runs_stop_at_a_finite_time_blow_up():
    """x'' = 2 x^3 from x = 1, x' = 1 gives x = 1 / (1 - t): it blows up at t = 1."""
    x = dynamicsymbols("x")
    model = Model([x], kinetic_energy=x.diff() ** 2 / 2, forces=[2 * x**3])
    for method in ("RK45", "DOP853", "LSODA"):
        run = simulate(model, (0.0, 2.0), [1.0], [1.0], method=method, rtol=1e-10, atol=1e-12)
        assert run.diverged, method
        # The speed 1 / (1 - t)^2 is the first to pass 2e6 = DIVERGENCE_FACTOR (1 + max|y0|).
        assert run.stop_time == pytest.approx(1.0 - (2 * DIVERGENCE_FACTOR) ** -0.5, rel=1e-6)
        np.testing.assert_allclose(run.q[:, 0], 1.0 / (1.0 - run.t), rtol=1e-5)


def test_ordinary_runs_are_not_flagged(pendulum):
    q0, qd0 = chain.pendulum_initial_state(1.0)
    for method, options in (("rk4", {"step": 0.01}), ("DOP853", {})):
        run = simulate(pendulum, (0.0, 10.0), q0, qd0, method=method, **options)
        assert run.status == "ok" and run.stop_time is None and run.stop_reason == "" and not run.diverged


STEPS = (0.005, 0.01, 0.02, 0.03, 0.04)
GAINS = (1.0, 5.0, 10.0, 25.0, 49.0, 50.0)


@pytest.mark.slow
@pytest.mark.parametrize("method", ["euler", "rk4"])
def test_the_stabilization_explorers_grid(pendulum, method):
    """Every accepted (step, gain) stays on the circle; every other run is refused or flagged."""
    q0, qd0 = chain.pendulum_initial_state(1.0)
    for step in STEPS:
        for k in GAINS:
            gain = Baumgarte(k, k)
            try:
                run = simulate(pendulum, (0.0, 20.0), q0, qd0, method=method, step=step, stabilization=gain,
                               check_system=True)
            except UnstableGainError:
                run = simulate(pendulum, (0.0, 20.0), q0, qd0, method=method, step=step, stabilization=gain,
                               allow_unstable=True)
                assert np.all(np.isfinite(run.q))
                drift = np.abs(run.position_residual).max()
                assert run.diverged or drift < 1e6, (step, k, drift)  # refused runs: flagged if they blow up
                continue
            assert not run.diverged, (step, k)
            assert np.abs(run.position_residual).max() <= DRIFT_BOUND, (step, k)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(method=st.sampled_from(["euler", "rk4"]), step=st.floats(0.002, 0.05), alpha=st.floats(0.5, 60.0),
       beta=st.floats(0.5, 60.0), angle=st.floats(0.1, 2.5))
def test_accepted_runs_stay_bounded_and_the_rest_is_flagged(pendulum, method, step, alpha, beta, angle):
    q0, qd0 = chain.pendulum_initial_state(angle)
    gain = Baumgarte(alpha, beta)
    try:
        run = simulate(pendulum, (0.0, 8.0), q0, qd0, method=method, step=step, stabilization=gain, check_system=True)
    except UnstableGainError:
        run = simulate(pendulum, (0.0, 8.0), q0, qd0, method=method, step=step, stabilization=gain,
                       allow_unstable=True)
        assert np.all(np.isfinite(run.q)) and (run.diverged or run.status == "ok")
        return
    assert not run.diverged
    assert np.abs(run.position_residual).max() <= DRIFT_BOUND
