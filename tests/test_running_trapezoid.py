"""The work integral of a trajectory by numpy alone (cold start, issue 23): scipy's numbers, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from udk_notebooks.simulation import _running_trapezoid


def test_exact_for_a_linear_integrand():
    # the trapezoidal rule is exact for a straight line: the integral of 3 + 2 t from 0 is 3 t + t^2
    t = np.array([0.0, 0.5, 1.25, 2.0, 4.0])
    assert np.allclose(_running_trapezoid(3.0 + 2.0 * t, t), 3.0 * t + t**2, rtol=0, atol=1e-14)


def test_bitwise_scipy_cumulative_trapezoid_on_uneven_samples():
    from scipy.integrate import cumulative_trapezoid  # the route it replaces

    rng = np.random.default_rng(23)
    t = np.cumsum(rng.uniform(1e-3, 0.2, 400))
    values = np.sin(7.0 * t) * np.exp(t / 10.0) + rng.normal(0.0, 1e-3, t.size)
    assert_array_equal(_running_trapezoid(values, t), cumulative_trapezoid(values, t, initial=0.0))


def test_one_sample_is_zero_work():
    assert_array_equal(_running_trapezoid(np.array([5.0]), np.array([1.0])), [0.0])


@pytest.mark.parametrize("values, t", [(np.zeros(3), np.zeros(4)), (np.zeros((2, 2)), np.zeros((2, 2))),
                                       (np.zeros(0), np.zeros(0))])
def test_refuses_mismatched_or_empty_samples(values, t):
    with pytest.raises(ValueError, match="`values` and `t`"):
        _running_trapezoid(values, t)


def test_trajectory_work_matches_the_scipy_route():
    from scipy.integrate import cumulative_trapezoid

    from udk_notebooks.examples import carriage_pendulum as ex
    from udk_notebooks.simulation import simulate

    q0, qd0 = ex.initial_state()
    run = simulate(ex.model().compile(), (0.0, 1.0), q0, qd0, method="rk4", step=0.01)
    work = run.work()
    assert work and set(work) == set(run.power)
    for name, power in run.power.items():
        assert_array_equal(work[name], cumulative_trapezoid(power, run.t, initial=0.0))
