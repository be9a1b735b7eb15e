"""simulate and motion refuse bad arguments by name, honour t_eval with fixed steps, and bound memory (issue 14)."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from udk_notebooks import simulate
from udk_notebooks.examples import chain


@pytest.fixture(scope="module")
def pendulum():
    cm = chain.cartesian_pendulum().compile()
    return cm, *chain.pendulum_initial_state(0.5)


@pytest.mark.parametrize("arguments, message", [
    ({"t_span": (0.0, "a")}, r"`t_span` must be a real 1-D array"),
    ({"t_span": 5.0}, r"`t_span` must be 1-D"),
    ({"t_span": (1.0, 0.0)}, r"`t_span` must be \(t0, tf\) with tf > t0"),
    ({"step": "a"}, r"`step` must be a finite number"),
    ({"step": -0.1}, r"`step` must be a positive number"),
    ({"step": float("nan")}, r"`step` must be a finite number"),
    ({"method": "RK45", "rtol": float("nan")}, r"`rtol` must be a finite number"),
    ({"method": "RK45", "atol": -1.0}, r"`atol` must be a positive number"),
    ({"constraint_tol": float("nan")}, r"`constraint_tol` must be a finite number"),
    ({"constraint_tol": -1.0}, r"`constraint_tol` must be >= 0"),
    ({"t_eval": [2.0]}, r"`t_eval` must be increasing times inside `t_span`"),
    ({"t_eval": [0.5, 0.2]}, r"`t_eval` must be increasing"),
    ({"project": "yes"}, r"`project` must be True or False"),
    ({"step": 1e-9}, r"`step` gives 1e\+09 steps, whose output needs about .* GiB .* pass `t_eval`"),
])
def test_bad_arguments_are_refused_by_name(pendulum, arguments, message):
    cm, q0, qd0 = pendulum
    options = {"t_span": (0.0, 1.0), "method": "rk4", **arguments}
    with pytest.raises(ValueError, match=message):
        simulate(cm, options.pop("t_span"), q0, qd0, **options)


def test_motion_refuses_a_time_that_is_not_a_number(pendulum):
    cm, q0, qd0 = pendulum
    with pytest.raises(ValueError, match=r"`t` must be a finite number"):
        cm.motion(float("nan"), q0, qd0)


@pytest.mark.parametrize("method", ["euler", "rk4"])
def test_fixed_steps_honour_t_eval(pendulum, method):
    cm, q0, qd0 = pendulum
    full = simulate(cm, (0.0, 1.0), q0, qd0, method=method, step=0.01)
    kept = simulate(cm, (0.0, 1.0), q0, qd0, method=method, step=0.01, t_eval=[0.0, 0.25, 1.0])
    np.testing.assert_array_equal(kept.t, [0.0, 0.25, 1.0])
    np.testing.assert_array_equal(kept.q, full.q[[0, 25, 100]])  # the same steps, only fewer kept
    off_grid = simulate(cm, (0.0, 1.0), q0, qd0, method=method, step=0.01, t_eval=[0.123, 0.5])
    np.testing.assert_allclose(off_grid.t, [0.123, 0.5], rtol=0, atol=1e-15)  # the steps land on them
    np.testing.assert_allclose(off_grid.q[1], full.q[50], atol=1e-3 if method == "euler" else 1e-7)


def test_many_steps_keep_memory_bounded_with_t_eval(pendulum):
    cm, q0, qd0 = pendulum
    tracemalloc.start()
    try:
        run = simulate(cm, (0.0, 200.0), q0, qd0, method="euler", step=1e-3, t_eval=np.linspace(0, 200, 11))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert run.t.size <= 11
    assert peak < 20e6, f"peak {peak / 1e6:.0f} MB"  # every one of the 2e5 samples would take about 100 MB


@pytest.mark.parametrize("method", ["DOP853", "RK45", "LSODA", "rk4"])
@pytest.mark.parametrize("ulps", [-1, 0, 1])
def test_friction_at_the_angle_of_repose_sticks_for_every_method(method, ulps):
    """mu = mu_s within a rounding step of tan(alpha): the block stops and stays (HOLD_RTOL), never chatters."""
    from udk_notebooks.examples import incline_friction

    alpha = np.pi / 6
    mu = float(np.tan(alpha))
    for _ in range(abs(ulps)):
        mu = float(np.nextafter(mu, 0.0 if ulps < 0 else 1.0))
    params = dict(alpha=alpha, mu=mu, mu_s=mu)
    q0, qd0 = incline_friction.initial_state(2.0, **params)
    run = simulate(incline_friction.model().compile(), (0.0, 2.0), q0, qd0, method=method, params=params)
    assert run.modes[-1, 0] == 0 and np.abs(run.qd[-1]).max() < 1e-12
    stop = 2.0**2 / (2 * 9.81 * (np.sin(alpha) + mu * np.cos(alpha)))  # distance up the slope
    np.testing.assert_allclose(run.q[-1], stop * np.array([np.cos(alpha), np.sin(alpha)]), rtol=1e-8)


@pytest.mark.parametrize("method", ["rk4", "euler"])
def test_a_run_that_fails_part_way_says_when_and_keeps_what_it_had(method):
    """Polar coordinates through r = 0: M = diag(1, r^2) is singular there (issue 14).

    With the rank check off, the failure itself is reported (tests/test_singular.py has the check on).
    """
    from sympy.physics.mechanics import dynamicsymbols

    from udk_notebooks import Model
    from udk_notebooks.errors import SimulationError

    r, theta = dynamicsymbols("r theta")
    model = Model([r, theta], kinetic_energy=(r.diff() ** 2 + r**2 * theta.diff() ** 2) / 2)
    with pytest.raises(SimulationError, match=r"the run failed at t = 1 .*NonUniqueAccelerationError") as info:
        simulate(model, (0.0, 2.0), [1.0, 0.0], [-1.0, 0.0], method=method, step=0.25, on_singular="ignore")
    error = info.value
    assert error.time == pytest.approx(1.0)
    np.testing.assert_allclose(error.state[:2], [0.0, 0.0], atol=1e-15)
    assert error.trajectory.status == "failed" and error.trajectory.t[-1] == pytest.approx(0.75)
    np.testing.assert_allclose(error.trajectory.q[:, 0], 1.0 - error.trajectory.t, atol=1e-12)


def test_stiff_gains_with_an_explicit_adaptive_method_warn_at_once(pendulum):
    from udk_notebooks.errors import StiffnessWarning
    from udk_notebooks.stabilization import Baumgarte

    cm, q0, qd0 = pendulum
    stiff = Baumgarte(1e6, 1e6)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", StiffnessWarning)  # raised before the first step, not after minutes
        with pytest.raises(StiffnessWarning, match=r"needs about 3\.3e\+05 steps .*method='Radau'"):
            simulate(cm, (0.0, 1.0), q0, qd0, method="DOP853", stabilization=stiff)
        simulate(cm, (0.0, 1.0), q0, qd0, method="rk4", step=0.01, stabilization=Baumgarte(5.0, 5.0))
