"""Tests for udk_notebooks.stabilization (Baumgarte and Beshaw's psi' = K psi).

Each scheme is checked against an independent route: closed-form stability
bounds from polynomial roots, the eigendecomposition and the matrix
exponential for the amplification matrix, hand-written Euler / RK4 steps for
the error dynamics, and a Cartesian pendulum integrated with the
Udwadia-Kalaba equation.
"""

import math
import re

import numpy as np
import pytest
import scipy.linalg
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.optimize import linear_sum_assignment

from udk_notebooks.core import udwadia_kalaba
from udk_notebooks.errors import UnstableGainError
from udk_notebooks.stabilization import (
    Baumgarte,
    GainMatrix,
    StabilityReport,
    amplification_matrix,
    check_gain,
    spectral_radii,
    stability,
    stable_gain_interval,
)

TAYLOR = {"euler": [1.0, 1.0], "rk4": [1.0, 1.0, 1 / 2, 1 / 6, 1 / 24]}  # R(z) = sum c_j z^j


def growth_factor(method, z):
    """Stability function R(z) written out term by term."""
    return sum(c * z**j for j, c in enumerate(TAYLOR[method]))


def hand_step(method, K, e, tau):
    """One explicit Euler or classic RK4 step of e' = K e."""
    if method == "euler":
        return e + tau * (K @ e)
    k1 = K @ e
    k2 = K @ (e + tau / 2 * k1)
    k3 = K @ (e + tau / 2 * k2)
    k4 = K @ (e + tau * k3)
    return e + tau / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def log_growth(method, K, tau, steps, seed=0):
    """log(||e_N|| / ||e_0||) for hand-stepped e' = K e, renormalizing to avoid overflow."""
    e = np.random.default_rng(seed).standard_normal(K.shape[0])
    e /= np.linalg.norm(e)
    total = 0.0
    for _ in range(steps):
        e = hand_step(method, K, e, tau)
        size = np.linalg.norm(e)
        if size == 0.0:
            return -math.inf
        total += math.log(size)
        e /= size
    return total


def smallest_positive_real_root(method):
    """Smallest x > 0 with R(-x) = +1 or R(-x) = -1, from numpy.roots."""
    coef = [c * (-1) ** j for j, c in enumerate(TAYLOR[method])]  # R(-x), lowest degree first
    candidates = []
    for target in (1.0, -1.0):
        poly = list(coef)
        poly[0] -= target
        for root in np.roots(poly[::-1]):
            if abs(root.imag) < 1e-9 and root.real > 1e-9:
                candidates.append(root.real)
    return min(candidates)


square_matrices = st.integers(1, 4).flatmap(
    lambda m: arrays(float, (m, m), elements=st.integers(-500, 500).map(lambda i: i / 100))
)
methods = st.sampled_from(["euler", "rk4"])
steps = st.floats(1e-3, 1.0)


# --- scalar stability interval -------------------------------------------------------------


@pytest.mark.parametrize("tau", [1.0, 0.1, 0.01, 1e-3, 0.37])
def test_euler_interval_is_zero_to_two_over_tau(tau):
    low, high = stable_gain_interval("euler", tau)
    assert low == 0.0
    assert high == pytest.approx(2.0 / tau, rel=1e-12)


@pytest.mark.parametrize("tau", [1.0, 0.1, 0.01, 0.37])
def test_rk4_interval_matches_polynomial_root(tau):
    root = smallest_positive_real_root("rk4")
    assert root == pytest.approx(2.785293563405282, rel=1e-12)
    low, high = stable_gain_interval("rk4", tau)
    assert low == 0.0
    assert high == pytest.approx(root / tau, rel=1e-12)


def test_rk4_bound_is_where_growth_factor_returns_to_plus_one():
    # The degree-4 Taylor polynomial of exp(-x) is positive for all real x, so R(-x) = -1 has
    # no real root: the RK4 bound is the nonzero root of R(-x) = +1 (Euler's is R(-x) = -1).
    minus_one = np.roots([1 / 24, -1 / 6, 1 / 2, -1.0, 2.0])
    assert np.all(np.abs(minus_one.imag) > 0.1)
    assert growth_factor("rk4", -2.785293563405282) == pytest.approx(1.0, abs=1e-12)
    assert smallest_positive_real_root("euler") == pytest.approx(2.0, rel=1e-14)


@given(method=methods, tau=steps, fraction=st.floats(0.01, 0.99))
def test_scalar_gain_inside_interval_is_bounded(method, tau, fraction):
    low, high = stable_gain_interval(method, tau)
    inside = stability(method, tau, [[-(low + fraction * (high - low))]])
    outside = stability(method, tau, [[-high * (1 + fraction)]])
    assert inside.bounded and inside.contractive
    assert not outside.bounded


# --- amplification matrix ------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(K=square_matrices, tau=steps, method=methods)
def test_amplification_equals_eigendecomposition(K, tau, method):
    lam, V = np.linalg.eig(K)
    cond = np.linalg.cond(V)
    assume(cond < 1e4)
    expected = (V * growth_factor(method, tau * lam)) @ np.linalg.inv(V)
    scale = max(1.0, float(np.max(np.abs(growth_factor(method, tau * lam)))))
    actual = amplification_matrix(method, tau, K)
    np.testing.assert_allclose(actual, expected.real, atol=1e-10 * cond**2 * scale)
    np.testing.assert_allclose(expected.imag, 0.0, atol=1e-10 * cond**2 * scale)


def test_rk4_amplification_agrees_with_expm_to_fifth_order():
    rng = np.random.default_rng(7)
    K = rng.standard_normal((4, 4)) - 2 * np.eye(4)
    taus = 0.1 / 2.0 ** np.arange(5)
    errors = {
        method: [np.linalg.norm(scipy.linalg.expm(tau * K) - amplification_matrix(method, tau, K), 2) for tau in taus]
        for method in ("euler", "rk4")
    }
    rk4_ratios = np.array(errors["rk4"][:-1]) / np.array(errors["rk4"][1:])
    euler_ratios = np.array(errors["euler"][:-1]) / np.array(errors["euler"][1:])
    np.testing.assert_allclose(rk4_ratios, 32.0, rtol=0.1)  # local error O(tau^5)
    np.testing.assert_allclose(euler_ratios, 4.0, rtol=0.1)  # local error O(tau^2)


def test_amplification_of_identity_and_scalar():
    np.testing.assert_allclose(amplification_matrix("euler", 0.5, -np.eye(3)), 0.5 * np.eye(3))
    np.testing.assert_allclose(amplification_matrix("rk4", 1.0, -1.0), [[0.375]])
    assert amplification_matrix("rk4", 0.1, np.zeros((0, 0))).shape == (0, 0)


# --- stability report ----------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(K=square_matrices, tau=steps, method=methods)
def test_hand_stepped_error_decays_exactly_when_bounded(K, tau, method):
    report = stability(method, tau, K)
    assume(abs(math.log(max(report.spectral_radius, 1e-300))) > 0.02)
    growth = log_growth(method, K, tau, steps=3000)
    if report.bounded:
        assert growth < -5.0
    else:
        assert growth > 5.0


@settings(max_examples=100, deadline=None)
@given(A=square_matrices, shift=st.floats(0.1, 5.0), tau=st.floats(1e-3, 0.04), method=methods)
def test_contractive_error_never_grows_in_one_step(A, shift, tau, method):
    # Beshaw's Theorems 1-2: ||R|| <= delta < 1 keeps ||e_k|| decreasing at every step.
    # K = A - (||A|| + shift) I has a negative definite symmetric part, so small steps contract.
    K = A - (np.linalg.norm(A, 2) + shift) * np.eye(A.shape[0])
    report = stability(method, tau, K)
    assume(report.contractive)
    assert report.bounded  # spectral radius <= any induced norm
    e = np.random.default_rng(1).standard_normal(K.shape[0])
    for _ in range(50):
        new = hand_step(method, K, e, tau)
        assert np.linalg.norm(new) <= report.norm * np.linalg.norm(e) * (1 + 1e-12) + 1e-300
        e = new


def test_non_normal_gain_is_bounded_but_not_contractive():
    report = stability("euler", 0.1, [[-1.0, 100.0], [0.0, -1.0]])
    assert isinstance(report, StabilityReport)
    assert report.method == "euler" and report.step == 0.1
    assert report.spectral_radius == pytest.approx(0.9)
    assert report.norm > 9.0
    assert report.bounded and not report.contractive


def test_empty_error_matrix_is_trivially_stable():
    report = stability("rk4", 0.1, np.zeros((0, 0)))
    assert report.bounded and report.contractive and report.spectral_radius == 0.0


# --- Baumgarte and GainMatrix --------------------------------------------------------------


def test_baumgarte_correction_by_hand():
    stab = Baumgarte(alpha=2.0, beta=3.0, gamma=5.0)
    phi = np.array([0.1, -0.2])
    velocity = np.array([1.0, 2.0, 3.0])  # phi'_1, phi'_2, psi_1
    expected = [-2 * 2 * 1 - 9 * 0.1, -2 * 2 * 2 - 9 * (-0.2), -5 * 3]
    np.testing.assert_allclose(stab.correction(phi, velocity), expected, rtol=1e-15)
    np.testing.assert_allclose(stab.correction([], [4.0]), [-20.0])
    np.testing.assert_allclose(stab.correction([0.5], [1.0]), [-4.0 - 4.5])
    assert stab.correction([], []).shape == (0,)


def test_gain_matrix_correction_is_K_times_velocity():
    K = np.array([[-2.0, 1.0], [0.5, -3.0]])
    stab = GainMatrix(K)
    np.testing.assert_allclose(stab.correction([0.3], [1.0, -1.0]), [-3.0, 3.5])
    np.testing.assert_array_equal(stab.error_matrix(1, 1), K)
    K[0, 0] = 99.0  # the dataclass keeps its own read-only copy
    assert stab.K[0, 0] == -2.0
    with pytest.raises(ValueError):
        stab.K[0, 0] = 1.0
    assert stab == GainMatrix([[-2.0, 1.0], [0.5, -3.0]]) and stab != GainMatrix(-1.0)
    assert hash(stab) == hash(GainMatrix(stab.K.copy()))
    assert GainMatrix(-4.0).K.shape == (1, 1)


@given(
    alpha=st.floats(0, 50),
    beta=st.floats(0, 50),
    gamma=st.floats(0, 50),
    n_h=st.integers(0, 3),
    n_n=st.integers(0, 3),
)
def test_error_matrix_eigenvalues_are_characteristic_roots(alpha, beta, gamma, n_h, n_n):
    E = Baumgarte(alpha, beta, gamma).error_matrix(n_h, n_n)
    assert E.shape == (2 * n_h + n_n, 2 * n_h + n_n)
    expected = np.concatenate([np.tile(np.roots([1.0, 2 * alpha, beta**2]), n_h), np.full(n_n, -gamma)])
    actual = np.linalg.eigvals(E)
    if expected.size == 0:
        assert actual.size == 0
        return
    distance = np.abs(expected[:, None] - actual[None, :])
    rows, cols = linear_sum_assignment(distance)
    # a double root (alpha = beta) is defective, so its eigenvalues are only sqrt(eps)-accurate
    assert distance[rows, cols].max() <= 1e-6 * (1 + alpha + beta)


def test_error_matrix_block_layout():
    E = Baumgarte(alpha=1.5, beta=2.0, gamma=0.7).error_matrix(2, 1)
    expected = np.zeros((5, 5))
    expected[0, 2] = expected[1, 3] = 1.0
    expected[2, 0] = expected[3, 1] = -4.0
    expected[2, 2] = expected[3, 3] = -3.0
    expected[4, 4] = -0.7
    np.testing.assert_array_equal(E, expected)


# --- check_gain ----------------------------------------------------------------------------


def test_check_gain_rejects_stiff_baumgarte():
    # alpha = beta = 300 puts a double eigenvalue at -300; tau k = 3 > 2.785 for RK4.
    with pytest.raises(UnstableGainError) as info:
        check_gain(Baumgarte(alpha=300.0, beta=300.0), "rk4", 0.01, 1, 0)
    message = str(info.value)
    assert "alpha" in message and "beta" in message
    assert "0.01" in message and "'rk4'" in message
    assert "278.529" in message  # stable range of a scalar gain for this step
    # The step it proposes is stable and is the one it names (issue 11: no "halve" to a 64th).
    below = float(re.search(r"take a step below ([0-9.e-]+)", message).group(1))
    example = float(re.search(r"for example ([0-9.e-]+)", message).group(1))
    E = Baumgarte(300.0, 300.0).error_matrix(1, 0)
    assert example < below < 0.01 and stability("rk4", example, E).bounded
    assert below == pytest.approx(2.785293563405282 / 300.0, rel=1e-5)  # tau k = 2.7853 for RK4
    assert not stability("rk4", below * 1.001, E).bounded


def test_check_gain_rejects_unstable_gain_matrix():
    stab = GainMatrix(np.diag([-300.0, -2.0]))
    with pytest.raises(UnstableGainError, match=r"K.*step=0\.01.*200") as info:
        check_gain(stab, "euler", 0.01, 0, 2)
    assert "take a step below 0.00666667, for example 0.005 (the step divided by 2)" in str(info.value)
    with pytest.raises(UnstableGainError, match="no smaller step helps"):
        check_gain(GainMatrix([[1.0]]), "rk4", 0.01, 1, 0)
    with pytest.raises(UnstableGainError, match="gamma"):
        check_gain(Baumgarte(alpha=1.0, beta=1.0, gamma=300.0), "euler", 0.01, 1, 1)


def test_check_gain_refuses_a_zero_gain_as_not_pulling_back():
    # gamma = 0 leaves the nonholonomic drift as it is: spectral radius one, so it is not pulled back.
    with pytest.raises(UnstableGainError, match="= 1, so the drift is not pulled back"):
        check_gain(Baumgarte(alpha=1.0, beta=1.0, gamma=0.0), "euler", 0.01, 1, 1)


def test_check_gain_returns_report_when_stable():
    report = check_gain(Baumgarte(alpha=10.0, beta=10.0, gamma=10.0), "rk4", 0.01, 2, 1)
    assert isinstance(report, StabilityReport) and report.bounded
    assert report.method == "rk4" and report.step == 0.01
    report = check_gain(GainMatrix(-5.0 * np.eye(3)), "euler", 0.1, 2, 1)
    assert report.spectral_radius == pytest.approx(0.5) and report.contractive


def test_check_gain_skips_adaptive_methods_and_no_stabilization():
    assert check_gain(Baumgarte(1e6, 1e6), "RK45", None, 1, 0) is None
    assert check_gain(Baumgarte(1e6, 1e6), "DOP853", 0.1, 1, 0) is None
    assert check_gain(None, "rk4", 0.1, 1, 0) is None


# --- end to end: a Cartesian pendulum integrated with the Udwadia-Kalaba equation ---------


def pendulum_drift(stab, tau=0.01, duration=3.0, length=1.0, g=9.81):
    """|phi| over time for a unit mass on x^2 + y^2 = L^2 started off the circle.

    phi = (x^2 + y^2 - L^2) / 2, so A = [x, y], b = -(x'^2 + y'^2), and the
    stabilization adds its correction to b. Integrated with classic RK4.
    """

    def rhs(state):
        q, v = state[:2], state[2:]
        phi = np.array([(q @ q - length**2) / 2])
        b = np.array([-(v @ v)]) + stab.correction(phi, np.array([q @ v]))
        return np.concatenate([v, udwadia_kalaba(np.eye(2), [0.0, -g], [q], b).qdd])

    state = np.array([1.05 * length, 0.0, 0.0, 0.3])  # 5% off the circle, velocity tangent
    drift = []
    for _ in range(round(duration / tau)):
        k1 = rhs(state)
        k2 = rhs(state + tau / 2 * k1)
        k3 = rhs(state + tau / 2 * k2)
        k4 = rhs(state + tau * k3)
        state = state + tau / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        q = state[:2]
        drift.append(abs(q @ q - length**2) / 2)
        if drift[-1] > 1.0:
            break
    return np.array(drift)


def test_pendulum_drift_decays_with_stable_baumgarte_and_grows_with_unstable():
    initial = (1.05**2 - 1) / 2
    assert check_gain(Baumgarte(5.0, 5.0), "rk4", 0.01, 1, 0).bounded
    stable = pendulum_drift(Baumgarte(alpha=5.0, beta=5.0))
    assert stable[-1] < 1e-4 * initial
    free = pendulum_drift(Baumgarte())
    assert free[-1] > 0.5 * initial  # without stabilization the offset stays
    with pytest.raises(UnstableGainError):
        check_gain(Baumgarte(alpha=300.0, beta=300.0), "rk4", 0.01, 1, 0)
    unstable = pendulum_drift(Baumgarte(alpha=300.0, beta=300.0), duration=1.0)
    assert unstable.max() > 10 * initial


# --- bad input -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: amplification_matrix("rk45", 0.1, [[-1.0]]), "`method`.*'euler', 'rk4'"),
        (lambda: stability("Euler", 0.1, [[-1.0]]), "`method`"),
        (lambda: stable_gain_interval("midpoint", 0.1), "`method`"),
        (lambda: stable_gain_interval("euler", 0.0), "`step`"),
        (lambda: stable_gain_interval("rk4", -0.1), "`step`"),
        (lambda: stability("rk4", math.inf, [[-1.0]]), "`step`"),
        (lambda: stability("rk4", math.nan, [[-1.0]]), "`step`"),
        (lambda: amplification_matrix("euler", "fast", [[-1.0]]), "`step`"),
        (lambda: amplification_matrix("euler", 0.1, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), "`K`.*square"),
        (lambda: amplification_matrix("euler", 0.1, [1.0, 2.0]), "`K`"),
        (lambda: stability("euler", 0.1, [[np.nan]]), "`K`.*non-finite"),
        (lambda: stability("euler", 0.1, np.zeros((2, 2, 2))), "`K`"),
        (lambda: stability("euler", 0.1, [[1.0, 2.0], [3.0]]), "`K`"),
        (lambda: GainMatrix([[np.inf]]), "`K`"),
        (lambda: GainMatrix(np.eye(2)).error_matrix(1, 2), r"`K`.*\(3, 3\)"),
        (lambda: GainMatrix(np.eye(2)).correction([0.0], [1.0, 2.0, 3.0]), "`velocity`"),
        (lambda: Baumgarte(alpha=-1.0), "`alpha`"),
        (lambda: Baumgarte(beta=math.nan), "`beta`"),
        (lambda: Baumgarte(gamma=math.inf), "`gamma`"),
        (lambda: Baumgarte(alpha="stiff"), "`alpha`"),
        (lambda: Baumgarte(1.0, 1.0).correction([0.1, 0.2], [0.3]), "`velocity`"),
        (lambda: Baumgarte(1.0, 1.0).correction([[0.1]], [0.3]), "`phi`"),
        (lambda: Baumgarte(1.0, 1.0).correction([0.1], [np.nan]), "`velocity`"),
        # float64 arrays take the simulations' fast path (_all_finite); it must refuse the same values
        (lambda: Baumgarte(1.0, 1.0).correction(np.array([0.1]), np.array([np.nan])), "`velocity`"),
        (lambda: Baumgarte(1.0, 1.0).correction(np.array([np.inf]), np.array([0.3])), "`phi`"),
        (lambda: GainMatrix([[-1.0]]).correction(np.array([0.0]), np.array([-np.inf])), "`velocity`"),
        (lambda: Baumgarte.error_matrices([[1.0, -2.0, 0.0]], 1, 0), "`gains`.*>= 0"),
        (lambda: Baumgarte.error_matrices([[1.0, 2.0]], 1, 0), "`gains`.*shape"),
        (lambda: Baumgarte.error_matrices([[1.0, np.nan, 0.0]], 1, 0), "`gains`"),
        (lambda: spectral_radii("rk4", 0.1, np.eye(2)), "`E`.*stack"),
        (lambda: spectral_radii("rk5", 0.1, np.eye(2)[None]), "`method`"),
        (lambda: Baumgarte().error_matrix(-1, 0), "`n_holonomic`"),
        (lambda: Baumgarte().error_matrix(1.5, 0), "`n_holonomic`"),
        (lambda: Baumgarte().error_matrix(1, True), "`n_nonholonomic`"),
        (lambda: check_gain("baumgarte", "rk4", 0.1, 1, 0), "`stabilization`"),
        (lambda: check_gain(Baumgarte(1.0, 1.0), "RK4", 0.1, 1, 0), "`method`.*'rk4'"),
        (lambda: check_gain(Baumgarte(1.0, 1.0), "euler", 0.0, 1, 0), "`step`"),
        (lambda: check_gain(Baumgarte(1.0, 1.0), "euler", 0.1, -2, 0), "`n_holonomic`"),
    ],
)
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()
