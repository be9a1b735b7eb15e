"""The saddle-point fast path of the singular-``M`` route against the augmented form it stands in for.

``core._solve_bordered`` answers for a positive semi-definite ``M`` by one LU
factorization of ``[[M / s, A^T], [A, 0]]`` when the condition number of that
matrix vouches that the augmented form ``M + s A^+ A`` (Udwadia & Phohomsiri
2006; the encyclopedia article's ``M_A``) would find the same unique motion.
These tests compare the two on random systems, with ideal, constant nonideal
and callable nonideal ``C``, and check that every case the general route must
decide (``[M; A]`` without full column rank, dependent or inconsistent rows,
non-finite entries) is handed back to it.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from udk_notebooks import core
from udk_notebooks.core import _bordered_rcond, udwadia_kalaba
from udk_notebooks.errors import InconsistentConstraintsError, NonUniqueAccelerationError

SETTINGS = settings(max_examples=60, deadline=None)
FIELDS = ("qdd", "impressed", "ideal", "nonideal")


def singular_system(seed: int, n: int, zeros: int, m: int):
    """A random ``M`` of rank ``n - zeros`` (rotated, so not diagonal) and ``A`` with ``[M; A]`` of full rank.

    The null space of ``M`` is ``span(V0)``; ``A`` gets a random part plus
    ``V0^T``-shaped rows (orthogonalized, then scaled) so that ``A V0`` is
    well conditioned, which makes ``[M; A]`` of full column rank (needs
    ``m >= zeros``).
    """
    rng = np.random.default_rng(seed)
    V, _ = np.linalg.qr(rng.normal(size=(n, n)))
    eig = np.concatenate([np.zeros(zeros), rng.uniform(0.3, 3.0, n - zeros)])
    M = (V * eig) @ V.T
    M = (M + M.T) / 2
    rows = rng.normal(size=(m, n))
    rows[:zeros] = V[:, :zeros].T + 0.3 * rows[:zeros]  # the massless directions are constrained
    A = np.linalg.qr(rows.T)[0].T * rng.uniform(0.5, 2.0, (m, 1))  # independent rows of mixed sizes
    Q = rng.normal(size=n) * 5
    b = rng.normal(size=m)
    return M, Q, A, b, rng


def general(M, Q, A, b, C=None):
    """The augmented form alone: ``udwadia_kalaba`` with the fast path switched off."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(core, "_solve_bordered", lambda *args: None)
        return udwadia_kalaba(M, Q, A, b, C)


def fast_is_taken(M, Q, A, b):
    """Whether udwadia_kalaba answers through the saddle-point system for this input."""
    taken = []
    original = core._solve_bordered

    def spy(*args):
        motion = original(*args)
        taken.append(motion is not None)
        return motion

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(core, "_solve_bordered", spy)
        udwadia_kalaba(M, Q, A, b)
    return taken == [True]


def assert_same(fast, slow):
    for name in FIELDS:
        a, b = getattr(fast, name), getattr(slow, name)
        scale = max(1.0, float(np.abs(b).max()))
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12 * scale, err_msg=name)


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 7), data=st.data())
def test_bordered_route_equals_the_augmented_form(seed, n, data):
    zeros = data.draw(st.integers(1, n - 1))
    m = data.draw(st.integers(zeros, n - 1))
    M, Q, A, b, rng = singular_system(seed, n, zeros, m)
    slow = general(M, Q, A, b)
    fast = udwadia_kalaba(M, Q, A, b)  # by the fast path nearly always (see the next test)
    assert_same(fast, slow)
    np.testing.assert_allclose(A @ fast.qdd, b, atol=1e-10 * (1 + np.abs(b).max()))
    # a constant nonideal C, and a callable one that uses F^L as Coulomb friction does
    C = rng.normal(size=n)
    assert_same(udwadia_kalaba(M, Q, A, b, C), general(M, Q, A, b, C))
    direction = rng.normal(size=n)

    def friction(ideal):
        return -0.3 * np.linalg.norm(ideal) * direction

    assert_same(udwadia_kalaba(M, Q, A, b, friction), general(M, Q, A, b, friction))


def test_bordered_route_answers_well_conditioned_systems():
    """The threshold is conservative, yet random systems of up to 7 coordinates nearly all pass it."""
    taken = []
    for seed in range(200):
        rng = np.random.default_rng(seed)
        n = int(rng.integers(2, 8))
        zeros = int(rng.integers(1, n))
        M, Q, A, b, _ = singular_system(seed, n, zeros, int(rng.integers(zeros, n)))
        taken.append(fast_is_taken(M, Q, A, b))
    assert sum(taken) >= 190


def test_bordered_route_calls_a_callable_c_once():
    M, Q, A, b, _ = singular_system(3, 4, 2, 3)
    calls = []

    def C(ideal):
        calls.append(ideal)
        return 0.1 * ideal

    motion = udwadia_kalaba(M, Q, A, b, C)
    assert len(calls) == 1
    np.testing.assert_allclose(calls[0], motion.ideal, rtol=1e-12, atol=1e-12)


def test_massless_slider_closed_form():
    """M = diag(m, 0), y = x: the fast route gives x'' = y'' = -g with F^L balancing gravity on y (closed form)."""
    M = np.diag([2.0, 0.0])
    Q = np.array([0.0, -2.0 * 9.81])
    A, b = np.array([[1.0, -1.0]]), np.array([0.0])
    assert fast_is_taken(M, Q, A, b)
    motion = udwadia_kalaba(M, Q, A, b)
    np.testing.assert_allclose(motion.qdd, [-9.81, -9.81], rtol=1e-14)
    np.testing.assert_allclose(motion.ideal, [-2.0 * 9.81, 2.0 * 9.81], rtol=1e-14)


def test_rank_deficient_stack_falls_back_and_is_refused():
    """A massless coordinate that no constraint touches: [M; A] lacks full column rank."""
    M = np.diag([1.0, 1.0, 0.0])
    A, b = np.array([[1.0, -1.0, 0.0]]), np.array([0.0])
    assert core._solve_bordered(M, np.ones(3), A, b, None, 1.0, core.RANK_RTOL) is None
    with pytest.raises(NonUniqueAccelerationError):
        udwadia_kalaba(M, np.ones(3), A, b)


@pytest.mark.parametrize("shortfall", [1.0, 1e-3, 1e-6, 1e-12])
def test_nearly_rank_deficient_stack_goes_to_the_general_route(shortfall):
    """[M; A] near a loss of rank: below the threshold the augmented form decides (and may refuse)."""
    M = np.diag([1.0, 0.0, 0.0])
    A = np.array([[0.0, 1.0, 1.0], [0.0, 1.0, 1.0 + shortfall]])
    K = np.zeros((5, 5))
    K[:3, :3], K[:3, 3:], K[3:, :3] = M, A.T, A
    rcond = 1.0 / (np.linalg.norm(K, 1) * np.linalg.norm(np.linalg.inv(K), 1))
    fast = core._solve_bordered(M, np.ones(3), A, np.ones(2), None, 1.0, core.RANK_RTOL)
    assert (fast is None) == (rcond <= _bordered_rcond(5))
    assert (fast is None) == (shortfall < 0.1)  # rcond 0.11 at 1.0; 2.5e-4 and less below
    if fast is not None:
        assert_same(fast, general(M, np.ones(3), A, np.ones(2)))
    if fast is None and shortfall < 1e-10:
        with pytest.raises((NonUniqueAccelerationError, InconsistentConstraintsError)):
            udwadia_kalaba(M, np.ones(3), A, np.ones(2))


def test_dependent_rows_fall_back_and_consistent_ones_are_solved():
    """A row written twice: K is singular, the augmented form drops the copy (pendulum on y = x, massless y)."""
    M = np.diag([1.0, 0.0])
    Q = np.array([0.0, -9.81])
    A = np.array([[1.0, -1.0], [2.0, -2.0]])
    assert core._solve_bordered(M, Q, A, np.zeros(2), None, 1.0, core.RANK_RTOL) is None
    np.testing.assert_allclose(udwadia_kalaba(M, Q, A, np.zeros(2)).qdd, [-9.81, -9.81], rtol=1e-12)


def test_inconsistent_rows_fall_back_and_are_refused():
    M = np.diag([1.0, 0.0])
    A, b = np.array([[1.0, -1.0], [1.0, -1.0]]), np.array([0.0, 1.0])
    assert core._solve_bordered(M, np.zeros(2), A, b, None, 1.0, core.RANK_RTOL) is None
    with pytest.raises(InconsistentConstraintsError):
        udwadia_kalaba(M, np.zeros(2), A, b)


@pytest.mark.parametrize("where", ["M", "A", "Q", "b"])
@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_non_finite_input_is_not_answered_by_the_fast_path(where, value):
    """Trusted callers pass unchecked arrays: a NaN or inf anywhere sends them to the general route."""
    M, Q, A, b, _ = singular_system(7, 4, 1, 2)
    arrays = {"M": M.copy(), "Q": Q.copy(), "A": A.copy(), "b": b.copy()}
    arrays[where].flat[1] = value
    assert core._solve_bordered(arrays["M"], arrays["Q"], arrays["A"], arrays["b"], None, 1.0,
                                core.RANK_RTOL) is None


def test_compiled_trammel_takes_the_fast_path_and_matches_the_general_route():
    """The elliptic trammel with massless sliders (encyclopedia article): the explorer's model, state by state."""
    from udk_notebooks.examples import singular_mass

    cm = singular_mass.model().compile()
    rng = np.random.default_rng(5)
    for _ in range(20):
        theta, rate = rng.uniform(-3.0, 3.0), rng.uniform(-3.0, 3.0)
        q, qd = singular_mass.initial_state(theta, rate)
        motion, _ = cm.solve_modes(0.0, q, qd, cm.defaults, ())
        M, Q, A, b, _ = cm.evaluate(0.0, q, qd, cm.defaults)
        assert fast_is_taken(M, Q, A, b)
        assert_same(motion, general(M, Q, A, b))
        # the sliders are massless and unloaded: no constraint force on them (a massless body passes forces on)
        np.testing.assert_allclose(motion.ideal[:2], 0.0, atol=1e-12 * np.abs(motion.ideal).max())


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), m=st.integers(0, 20), n=st.integers(1, 6))
def test_scale_rows_small_route_gives_the_same_numbers(seed, m, n):
    """The per-row factors on Python floats (up to 16 rows) against ldexp by the frexp exponents, bit for bit."""
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(m, n)) * 10.0 ** rng.integers(-320, 308, size=(m, 1))
    b = rng.normal(size=m) * 10.0 ** rng.integers(-320, 308, size=m)
    if m:
        A[rng.integers(m)] = 0.0
    size = np.abs(A).max(axis=-1, initial=0.0)
    _, exponent = np.frexp(size)
    shift = np.where(size > 0, exponent - 1, 0)
    with np.errstate(over="ignore"):
        expected = np.ldexp(A, -shift[:, None]), np.ldexp(b, -shift)
        got = core.scale_rows(A, b)
    assert np.array_equal(got[0], expected[0]) and np.array_equal(got[1], expected[1])


@settings(max_examples=100, deadline=None)
@given(theta=st.floats(-4.0, 4.0), rate=st.floats(-5.0, 5.0), c=st.floats(0.05, 0.95), mA=st.floats(0.0, 5.0),
       mB=st.floats(0.0, 5.0), m=st.floats(0.1, 5.0), g=st.floats(0.0, 20.0), l=st.floats(0.2, 3.0))
def test_trammel_minimal_rate_equals_minimal_acceleration(theta, rate, c, mA, mB, m, g, l):
    """The explorer's float right-hand side of the one-coordinate route is Lagrange's equation as written out."""
    from udk_notebooks.examples import singular_mass

    params = dict(m=m, g=g, l=l, c=c, mA=mA, mB=mB)
    got = singular_mass.minimal_rate(**params)(0.0, np.array([theta, rate]))
    expected = float(singular_mass.minimal_acceleration(theta, rate, **params))
    assert got[0] == rate
    assert abs(got[1] - expected) <= 1e-12 * max(1.0, abs(expected))
