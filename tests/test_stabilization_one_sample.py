"""Baumgarte's correction of one sample in Python floats (the route of every stabilized right-hand side).

It must give the numpy route's numbers to the last bit (a stack of one sample
takes the numpy route), the closed form ``-2 alpha phi' - beta^2 phi`` then
``-gamma psi`` (Baumgarte 1972), and leave non-finite or malformed residuals to
the general route's checks and messages.
"""

from __future__ import annotations

import numpy as np
import pytest

from udk_notebooks.stabilization import Baumgarte


@pytest.mark.parametrize("rows", [(0, 0), (0, 2), (1, 1), (1, 3), (2, 2), (3, 5)])
def test_one_sample_equals_the_numpy_route_bit_for_bit(rows):
    rng = np.random.default_rng(1972 + 10 * rows[0] + rows[1])
    n_h, m = rows
    for _ in range(50):
        gain = Baumgarte(*rng.uniform(0.0, 60.0, 3))
        phi = rng.normal(scale=10.0 ** rng.integers(-12, 3), size=n_h)
        velocity = rng.normal(scale=10.0 ** rng.integers(-12, 3), size=m)
        fast = gain.correction(phi, velocity)
        assert gain._one_sample(phi, velocity) is not None  # the one-sample route was taken
        stacked = gain.correction(phi[None], velocity[None])[0]  # two dimensions: the numpy route
        assert fast.dtype == np.float64 and fast.shape == (m,)
        np.testing.assert_array_equal(fast, stacked)
        expected = np.concatenate([-2.0 * gain.alpha * velocity[:n_h] - gain.beta**2 * phi,
                                   -gain.gamma * velocity[n_h:]])
        np.testing.assert_allclose(fast, expected, rtol=1e-13, atol=0.0)


def test_signed_zeros_follow_the_numpy_route():
    for gain, phi, velocity in [(Baumgarte(0.0, 0.0, 0.0), [0.0], [-0.0, 2.0]),
                                (Baumgarte(3.0, 0.0, 0.0), [-0.0], [0.0, -0.0]),
                                (Baumgarte(0.0, 2.0, 1.0), [0.0], [-0.0, 0.0])]:
        phi, velocity = np.array(phi), np.array(velocity)
        assert gain._one_sample(phi, velocity) is not None
        fast = gain.correction(phi, velocity)
        stacked = gain.correction(phi[None], velocity[None])[0]
        np.testing.assert_array_equal(fast, stacked)
        assert list(np.signbit(fast)) == list(np.signbit(stacked))


@pytest.mark.parametrize("gain, phi, velocity", [
    (Baumgarte(1.0, 2e154, 1.0), [0.0], [1.0]),  # beta^2 = inf, and inf * 0 is a nan
    (Baumgarte(1e154, 1e154), [1e200], [1e200]),  # finite gains, an overflowing product
])
def test_infinite_gains_and_overflows_warn_as_the_numpy_route_does(gain, phi, velocity):
    phi, velocity = np.array(phi), np.array(velocity)
    assert gain._one_sample(phi, velocity) is None
    with pytest.warns(RuntimeWarning):
        gain.correction(phi, velocity)


def test_an_infinite_stiffness_gives_the_numpy_route_s_infinity():
    gain, phi, velocity = Baumgarte(1.0, 2e154), np.array([1e-3]), np.array([1.0])
    assert gain._one_sample(phi, velocity) is None
    np.testing.assert_array_equal(gain.correction(phi, velocity), [-np.inf])


@pytest.mark.parametrize("phi, velocity", [([np.nan], [1.0]), ([0.1], [np.inf]), ([np.inf], [0.0])])
def test_non_finite_samples_go_the_general_route(phi, velocity):
    gain = Baumgarte(0.0, 0.0)  # zero gains: inf * 0 is a nan, which the fast route must not hand back
    phi, velocity = np.array(phi), np.array(velocity)
    assert gain._one_sample(phi, velocity) is None
    with pytest.raises(ValueError, match="finite"):
        gain.correction(phi, velocity)


def test_finite_entries_whose_sum_overflows_go_the_numpy_route_and_keep_its_numbers():
    gain, phi, velocity = Baumgarte(0.75, 0.0), np.zeros(2), np.array([1e308, 1e308])
    assert gain._one_sample(phi, velocity) is None
    np.testing.assert_array_equal(gain.correction(phi, velocity), [-1.5e308, -1.5e308])


def test_malformed_samples_keep_the_general_route_s_message():
    with pytest.raises(ValueError, match="`velocity`"):
        Baumgarte(1.0, 1.0).correction(np.array([0.1, 0.2]), np.array([0.3]))
    assert Baumgarte(1.0, 1.0)._one_sample(np.array([0.1], dtype=np.float32), np.array([0.3])) is None
