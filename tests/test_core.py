"""Tests for udk_notebooks.core: the Udwadia-Kalaba equation and its checks.

Every numeric check compares with a route that does not use the
Udwadia-Kalaba formula:

* Eq. (32) of Udwadia, Kalaba & Fan (2005), written out in closed form;
* Gauss's principle as a constrained minimization, solved in a null-space
  basis of ``A`` (particular solution by least squares, reduced SPD system);
* the bordered (saddle-point) system ``[[M, A^T], [A, 0]]`` for singular ``M``;
* the virtual-work characterization of the forces (Eqs. 16, 18).
"""

import math

import numpy as np
import pytest
import scipy.linalg
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from udk_notebooks.core import (
    CONSISTENCY_RTOL,
    LSE_RCOND,
    RANK_RTOL,
    Motion,
    _gauss_minimum,
    cholesky_or_none,
    lagrange_multipliers,
    udwadia_kalaba,
    virtual_displacements,
)
from udk_notebooks.errors import InconsistentConstraintsError, NonUniqueAccelerationError

SETTINGS = settings(max_examples=120, deadline=None)
AGREE_RTOL = 1e-9


# -- random problems ----------------------------------------------------------
def random_orthogonal(rng, n):
    """Haar-distributed orthogonal matrix (QR of a Gaussian matrix, signs fixed)."""
    U, R = np.linalg.qr(rng.standard_normal((n, n)))
    return U * np.sign(np.diag(R))


def random_spd(rng, n, log10_cond):
    """``U diag(logspace(0, log10_cond)) U^T`` times a random overall scale."""
    scale = 10.0 ** rng.uniform(-2, 2)
    eigenvalues = scale * np.logspace(0.0, log10_cond, n)
    U = random_orthogonal(rng, n)
    M = (U * eigenvalues) @ U.T
    return (M + M.T) / 2


def random_full_row_rank(rng, m, n):
    """Gaussian rows with sizes spread over two decades (generically full row rank)."""
    return rng.standard_normal((m, n)) * 10.0 ** rng.uniform(-1, 1, size=(m, 1))


def redundant_constraints(rng, A, b, extra):
    """Append ``extra`` rows that combine the rows of ``A`` (and ``b`` the same way), then shuffle."""
    W = rng.standard_normal((extra, A.shape[0]))
    A_all = np.vstack([A, W @ A])
    b_all = np.concatenate([b, W @ b])
    order = rng.permutation(A_all.shape[0])
    return A_all[order], b_all[order]


def gauss_null_space(M, Q, A, b, C=None):
    """Minimize ``(x - a)^T M (x - a)`` s.t. ``A x = b``, ``a = M^{-1} (Q + C)``, in a null-space basis.

    ``x = x_p + N z`` with ``x_p`` the least-squares particular solution and ``N``
    an orthonormal basis of ``null(A)``; then ``N^T M N z = N^T M (a - x_p)``, and
    ``M a = Q + C``, so ``M^{-1}`` is never needed. Returns ``x`` and ``N``.
    """
    n = M.shape[0]
    force = Q if C is None else Q + C
    if A.shape[0]:
        x_p = np.linalg.lstsq(A, b, rcond=None)[0]
        N = scipy.linalg.null_space(A)
    else:
        x_p, N = np.zeros(n), np.eye(n)
    if N.shape[1] == 0:
        return x_p, N
    z = scipy.linalg.solve(N.T @ M @ N, N.T @ (force - M @ x_p), assume_a="pos")
    return x_p + N @ z, N


def nonideal_by_projection(M, N, C):
    """``M P (M^{-1} C)`` with ``P`` the M-orthogonal projector onto ``range(N) = null(A)``.

    ``P y = N (N^T M N)^{-1} N^T M y``, so ``M P M^{-1} C = M N (N^T M N)^{-1} N^T C``.
    """
    if N.shape[1] == 0:
        return np.zeros(M.shape[0])
    return M @ N @ scipy.linalg.solve(N.T @ M @ N, N.T @ C, assume_a="pos")


def assert_close(actual, expected, scale, rtol=AGREE_RTOL):
    err = np.linalg.norm(np.asarray(actual) - np.asarray(expected))
    assert err <= rtol * max(scale, np.finfo(float).tiny), f"error {err:.3e} > {rtol:g} * {scale:.3e}"


problem = st.fixed_dictionaries({
    "seed": st.integers(0, 2**32 - 1),
    "n": st.integers(1, 12),
    "log10_cond": st.floats(0.0, 6.0),
})


# -- Eq. (32): the particle on the line k x1 - x2 = 0 -------------------------
def eq32(k, g, c1, c2, mass=1.0):
    """The three terms of the 2005 paper's Eq. (32), per unit mass (for ``mass = 1`` exactly as printed)."""
    gravity = np.array([0.0, -g])
    ideal = -g / (k**2 + 1) * np.array([k, -1.0])
    nonideal = (c1 + k * c2) / (mass * (k**2 + 1)) * np.array([1.0, k])
    return gravity, ideal, nonideal


@pytest.mark.parametrize("k", [-2.0, -0.5, 0.0, 1.0, 3.0])
@pytest.mark.parametrize("g", [9.81, 1.62])
@pytest.mark.parametrize("c", [(1.0, 2.0), (0.0, 0.0), (-3.0, 0.5)])
def test_eq32_closed_form(k, g, c):
    motion = udwadia_kalaba(np.eye(2), [0.0, -g], [[k, -1.0]], [0.0], C=list(c))
    gravity, ideal, nonideal = eq32(k, g, *c)
    np.testing.assert_allclose(motion.impressed, gravity, rtol=0, atol=1e-14)
    np.testing.assert_allclose(motion.ideal, ideal, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(motion.nonideal, nonideal, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(motion.qdd, gravity + ideal + nonideal, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(motion.constraint, ideal + nonideal, rtol=1e-13, atol=1e-13)


def test_eq32_paper_numbers():
    """k = 1, g = 9.81, c = (1, 2): x'' = (0, -g) - g/2 (1, -1) + 3/2 (1, 1) = (-3.405, -3.405)."""
    motion = udwadia_kalaba(np.eye(2), [0.0, -9.81], [[1.0, -1.0]], [0.0], C=[1.0, 2.0])
    np.testing.assert_allclose(motion.qdd, [-3.405, -3.405], rtol=1e-14)
    np.testing.assert_allclose(motion.ideal, [-4.905, 4.905], rtol=1e-14)
    np.testing.assert_allclose(motion.nonideal, [1.5, 1.5], rtol=1e-14)


@SETTINGS
@given(
    k=st.floats(-10, 10, allow_subnormal=False),
    g=st.floats(0, 30, allow_subnormal=False),
    c1=st.floats(-10, 10, allow_subnormal=False),
    c2=st.floats(-10, 10, allow_subnormal=False),
    mass=st.floats(0.01, 100),
)
def test_eq32_any_mass(k, g, c1, c2, mass):
    """Eq. (32) with ``M = m I`` (force terms scale with ``m``, ``F^C`` does not)."""
    motion = udwadia_kalaba(mass * np.eye(2), [0.0, -mass * g], [[k, -1.0]], [0.0], C=[c1, c2])
    gravity, ideal, nonideal = eq32(k, g, c1, c2, mass)
    scale = g + abs(c1) + abs(c2)
    np.testing.assert_allclose(motion.qdd, gravity + ideal + nonideal, rtol=0, atol=1e-12 * (scale / mass + g) + 1e-300)
    np.testing.assert_allclose(motion.ideal, mass * ideal, rtol=0, atol=1e-12 * mass * g + 1e-300)
    np.testing.assert_allclose(motion.nonideal, mass * nonideal, rtol=0, atol=1e-12 * (abs(c1) + abs(c2)) + 1e-300)
    # The constraint holds: k x1'' - x2'' = 0.
    assert abs(k * motion.qdd[0] - motion.qdd[1]) <= 1e-12 * (1 + abs(k)) * (scale / mass + g) + 1e-300


@pytest.mark.parametrize("alpha", [0.1, 0.5, 1.2])
@pytest.mark.parametrize("mu", [0.0, 0.3, 1.5])
@pytest.mark.parametrize("direction", [1.0, -1.0])
def test_coulomb_friction_through_callable_c(alpha, mu, direction):
    """Block on ``y = x tan(alpha)``: ``q'' = -g (sin a + mu cos a sgn(v)) (cos a, sin a)`` (design notes).

    ``C`` is built from the ideal force it receives, ``c = -mu |F^L| v/|v|``.
    """
    g, mass = 9.81, 2.0
    tangent = np.array([math.cos(alpha), math.sin(alpha)])
    velocity = direction * tangent
    received = []

    def friction(ideal):
        received.append(ideal.copy())
        return -mu * np.linalg.norm(ideal) * velocity / np.linalg.norm(velocity)

    A = [[math.tan(alpha), -1.0]]
    motion = udwadia_kalaba(mass * np.eye(2), [0.0, -mass * g], A, [0.0], C=friction)
    expected = -g * (math.sin(alpha) + mu * math.cos(alpha) * direction) * tangent
    np.testing.assert_allclose(motion.qdd, expected, rtol=1e-12, atol=1e-12)
    # The normal force is m g cos(alpha), along the outward normal (-sin a, cos a).
    normal = mass * g * math.cos(alpha) * np.array([-math.sin(alpha), math.cos(alpha)])
    np.testing.assert_allclose(motion.ideal, normal, rtol=1e-12, atol=1e-12)
    assert len(received) == 1
    np.testing.assert_array_equal(received[0], motion.ideal)


# -- Gauss's principle in a null-space basis ------------------------------------
constrained_problem = st.integers(1, 12).flatmap(
    lambda n: st.fixed_dictionaries({
        "seed": st.integers(0, 2**32 - 1),
        "n": st.just(n),
        "m": st.integers(0, n),
        "extra": st.integers(0, 2),
        "log10_cond": st.floats(0.0, 6.0),
    })
)


def make_problem(prob):
    """``M, Q, A, b, C`` from a drawn seed and sizes: ``m`` independent rows, then ``extra`` redundant ones."""
    rng = np.random.default_rng(prob["seed"])
    n, m = prob["n"], prob["m"]
    M = random_spd(rng, n, prob["log10_cond"])
    Q = rng.standard_normal(n) * 10.0 ** rng.uniform(-1, 2)
    A = random_full_row_rank(rng, m, n)
    b = rng.standard_normal(m) * 10.0 ** rng.uniform(-1, 2)
    C = rng.standard_normal(n) * 10.0 ** rng.uniform(-1, 2)
    if prob.get("extra") and m:
        A, b = redundant_constraints(rng, A, b, prob["extra"])
    return M, Q, A, b, C


@SETTINGS
@given(constrained_problem)
def test_full_row_rank_against_null_space_route(prob):
    M, Q, A, b, C = make_problem(prob)
    n = M.shape[0]
    ideal_ref, _ = gauss_null_space(M, Q, A, b)
    full_ref, _ = gauss_null_space(M, Q, A, b, C)

    ideal_motion = udwadia_kalaba(M, Q, A, b)
    assert_close(ideal_motion.qdd, ideal_ref, np.linalg.norm(ideal_ref))
    np.testing.assert_array_equal(ideal_motion.nonideal, np.zeros(n))
    assert_close(ideal_motion.ideal, M @ ideal_ref - Q, np.linalg.norm(M) * np.linalg.norm(ideal_ref) + np.linalg.norm(Q))

    motion = udwadia_kalaba(M, Q, A, b, C)
    assert_close(motion.qdd, full_ref, np.linalg.norm(full_ref))
    # F^L does not depend on C (Eq. 10).
    assert_close(motion.ideal, ideal_motion.ideal, np.linalg.norm(ideal_motion.ideal) + np.linalg.norm(Q))
    # F^C itself: test_nonideal_force_is_m_orthogonal_projection.


@SETTINGS
@given(constrained_problem)
def test_gauss_minimum_route_equals_eq7_term_by_term(prob):
    """Ideal constraints take LAPACK's dgglse (Gauss's minimum); a zero ``C`` takes Eqs. (7)-(11): same motion."""
    M, Q, A, b, _ = make_problem(prob)
    n, m = A.shape[1], A.shape[0]
    L = cholesky_or_none(M)
    direct = _gauss_minimum(M, L, Q, A, b)
    if m and not prob["extra"] and np.linalg.cond(A) < 1e3:
        assert direct is not None  # independent rows, well inside LSE_RCOND: the direct route is taken
    if direct is not None:
        assert np.linalg.cond(A) < 1e2 / LSE_RCOND  # the condition estimate is within a factor m of the truth
    term_by_term = udwadia_kalaba(M, Q, A, b, C=np.zeros(n))
    default = udwadia_kalaba(M, Q, A, b)
    scale_q = np.linalg.norm(term_by_term.qdd) + np.linalg.norm(scipy.linalg.solve(M, Q, assume_a="pos"))
    assert_close(default.qdd, term_by_term.qdd, scale_q)
    assert_close(default.ideal, term_by_term.ideal, np.linalg.norm(M) * scale_q + np.linalg.norm(Q))
    np.testing.assert_array_equal(term_by_term.nonideal, np.zeros(n))


@SETTINGS
@example(prob={"seed": 181, "n": 6, "m": 6, "extra": 0, "log10_cond": 6.0})
@example(prob={"seed": 139, "n": 2, "m": 2, "extra": 0, "log10_cond": 6.0})
@example(prob={"seed": 266, "n": 6, "m": 6, "extra": 0, "log10_cond": 6.0})
@example(prob={"seed": 0, "n": 4, "m": 4, "extra": 1, "log10_cond": 6.0})
@given(constrained_problem)
def test_nonideal_force_is_m_orthogonal_projection(prob):
    """``F^C = M P M^{-1} C`` with ``P`` the M-orthogonal projector onto ``null(A)`` (Eq. 11), to 1e-9."""
    M, Q, A, b, C = make_problem(prob)
    _, N = gauss_null_space(M, Q, A, b)
    motion = udwadia_kalaba(M, Q, A, b, C)
    assert_close(motion.nonideal, nonideal_by_projection(M, N, C), np.linalg.norm(C))


@pytest.mark.parametrize("gap", [1e-7, 1e-9])
def test_nonideal_force_vanishes_for_invertible_a(gap):
    """With ``A`` invertible there is no virtual displacement, so ``F^C = 0`` whatever ``C`` (Sec. 5)."""
    A = np.array([[1.0, 1.0], [1.0, 1.0 + gap]])  # cond(A) = 4e7 and 4e9, below 1 / RANK_RTOL
    motion = udwadia_kalaba(np.eye(2), [0.0, -9.81], A, [0.0, 0.0], C=[1.0, 0.0])
    np.testing.assert_allclose(motion.nonideal, [0.0, 0.0], rtol=0, atol=1e-13)
    # q'' = A^{-1} b = 0 only up to eps cond(A) |a|: a - A^{-1} A a is inherent to Eq. (7).
    np.testing.assert_allclose(motion.qdd, [0.0, 0.0], rtol=0, atol=1e-15 * np.linalg.cond(A) * 9.81)


@SETTINGS
@given(problem, st.data())
def test_redundant_consistent_rows_against_null_space_route(prob, data):
    rng = np.random.default_rng(prob["seed"])
    n = prob["n"]
    rank = data.draw(st.integers(1, n), label="rank")
    extra = data.draw(st.integers(1, 4), label="extra")
    M = random_spd(rng, n, prob["log10_cond"])
    Q = rng.standard_normal(n) * 10.0 ** rng.uniform(-1, 2)
    A_ind = random_full_row_rank(rng, rank, n)
    b_ind = rng.standard_normal(rank)
    A, b = redundant_constraints(rng, A_ind, b_ind, extra)
    C = rng.standard_normal(n)

    reference, _ = gauss_null_space(M, Q, A_ind, b_ind, C)
    motion = udwadia_kalaba(M, Q, A, b, C)
    assert_close(motion.qdd, reference, np.linalg.norm(reference))
    # F^C: redundant rows always take the SVD path, see test_nonideal_force_is_m_orthogonal_projection.
    assert_close(A @ motion.qdd, b, np.linalg.norm(A) * np.linalg.norm(motion.qdd) + np.linalg.norm(b))
    # Same motion as with the independent rows alone.
    alone = udwadia_kalaba(M, Q, A_ind, b_ind, C)
    assert_close(motion.ideal, alone.ideal, np.linalg.norm(alone.ideal) + np.linalg.norm(Q))


underdetermined_problem = st.integers(2, 12).flatmap(
    lambda n: st.fixed_dictionaries({
        "seed": st.integers(0, 2**32 - 1),
        "n": st.just(n),
        "m": st.integers(1, n - 1),
        "log10_cond": st.floats(0.0, 6.0),
    })
)


@SETTINGS
@example(prob={"seed": 251, "n": 11, "m": 10, "log10_cond": 6.0})
@example(prob={"seed": 30, "n": 11, "m": 10, "log10_cond": 6.0})
@given(underdetermined_problem)
def test_nonideal_special_cases_of_section5(prob):
    """Sec. 5: ``F^C = c`` when ``M^{-1} c`` is a virtual displacement; ``F^C = 0`` when ``c = A^T w``.

    ``m < n`` here; ``m = n`` is test_nonideal_force_vanishes_for_invertible_a.
    """
    rng = np.random.default_rng(prob["seed"])
    n, m = prob["n"], prob["m"]
    M = random_spd(rng, n, prob["log10_cond"])
    A = random_full_row_rank(rng, m, n)
    b = rng.standard_normal(m)
    Q = rng.standard_normal(n)
    N = scipy.linalg.null_space(A)
    c_free = M @ N @ rng.standard_normal(N.shape[1])
    c_normal = A.T @ rng.standard_normal(m)
    free = udwadia_kalaba(M, Q, A, b, c_free)
    normal = udwadia_kalaba(M, Q, A, b, c_normal)
    assert_close(free.nonideal, c_free, np.linalg.norm(c_free) + 1e-300)
    assert_close(normal.nonideal, np.zeros(n), np.linalg.norm(c_normal))


# -- singular mass matrices ----------------------------------------------------
def well_posed(M, A, rcond=1e-4):
    """``[M; A]`` is far from losing column rank (else q'' is huge and every route loses digits)."""
    sv = np.linalg.svd(np.vstack([M, A]), compute_uv=False)
    return sv[-1] > rcond * sv[0]


def bordered_solve(M, Q, A, b):
    """``[[M, A^T], [A, 0]] [x; mu] = [Q; b]``; the constraint force is ``-A^T mu``."""
    n, m = M.shape[0], A.shape[0]
    K = np.block([[M, A.T], [A, np.zeros((m, m))]])
    sol = np.linalg.solve(K, np.concatenate([Q, b]))
    return sol[:n], -A.T @ sol[n:]


@SETTINGS
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(2, 10),
    data=st.data(),
)
def test_singular_mass_against_bordered_system(seed, n, data):
    rng = np.random.default_rng(seed)
    rank_M = data.draw(st.integers(0, n - 1), label="rank_M")
    m = data.draw(st.integers(n - rank_M, n), label="m")
    diagonal = data.draw(st.booleans(), label="zero masses on the diagonal")
    if diagonal:  # point masses, some of them zero
        masses = np.zeros(n)
        masses[rng.permutation(n)[:rank_M]] = 10.0 ** rng.uniform(-1, 1, rank_M)
        M = np.diag(masses)
    else:
        R = rng.standard_normal((rank_M, n))
        M = R.T @ R
    A = random_full_row_rank(rng, m, n)
    assume(well_posed(M, A))
    Q = rng.standard_normal(n)
    b = rng.standard_normal(m)
    C = rng.standard_normal(n)

    qdd_ref, ideal_ref = bordered_solve(M, Q, A, b)
    motion = udwadia_kalaba(M, Q, A, b)
    assert_close(motion.qdd, qdd_ref, np.linalg.norm(qdd_ref), rtol=1e-8)
    assert_close(motion.ideal, ideal_ref, np.linalg.norm(ideal_ref) + np.linalg.norm(Q), rtol=1e-8)

    # With C: v^T (M q'' - Q - C) = 0 for every virtual displacement, so q'' is the
    # bordered solution with the force Q + C, and the forces keep Eqs. (8), (16), (18).
    qdd_c, _ = bordered_solve(M, Q + C, A, b)
    with_c = udwadia_kalaba(M, Q, A, b, C)
    assert_close(with_c.qdd, qdd_c, np.linalg.norm(qdd_c), rtol=1e-8)
    scale = np.linalg.norm(M) * np.linalg.norm(with_c.qdd) + np.linalg.norm(Q) + np.linalg.norm(C)
    assert_close(M @ with_c.qdd, with_c.impressed + with_c.ideal + with_c.nonideal, scale, rtol=1e-8)
    N = scipy.linalg.null_space(A)
    assert_close(N.T @ with_c.ideal, np.zeros(N.shape[1]), scale, rtol=1e-8)
    assert_close(N.T @ with_c.nonideal, N.T @ C, scale, rtol=1e-8)


def test_singular_mass_textbook_case():
    """A massless coordinate fixed by a constraint: M = diag(1, 0), x2 - x1 = 0, Q = (0, f).

    The massless coordinate carries its force to the massive one: x1'' = x2'' = f.
    """
    motion = udwadia_kalaba(np.diag([1.0, 0.0]), [0.0, 3.0], [[-1.0, 1.0]], [0.0])
    np.testing.assert_allclose(motion.qdd, [3.0, 3.0], rtol=1e-12)
    np.testing.assert_allclose(motion.ideal, [3.0, -3.0], rtol=1e-12)


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 8), data=st.data())
def test_singular_mass_matches_lagrange_multipliers(seed, n, data):
    rng = np.random.default_rng(seed)
    rank_M = data.draw(st.integers(1, n - 1), label="rank_M")
    R = rng.standard_normal((rank_M, n))
    M = R.T @ R
    A = rng.standard_normal((n - rank_M, n))
    assume(well_posed(M, A))
    Q, b = rng.standard_normal(n), rng.standard_normal(n - rank_M)
    motion = udwadia_kalaba(M, Q, A, b)
    qdd, lam = lagrange_multipliers(M, Q, A, b)
    assert_close(motion.qdd, qdd, np.linalg.norm(qdd), rtol=1e-8)
    assert_close(motion.ideal, A.T @ lam, np.linalg.norm(A.T @ lam) + np.linalg.norm(Q), rtol=1e-8)


# -- virtual work and the equation itself --------------------------------------
@SETTINGS
@given(problem, st.data())
def test_virtual_work_and_equation_of_motion(prob, data):
    rng = np.random.default_rng(prob["seed"])
    n = prob["n"]
    m = data.draw(st.integers(1, n), label="m")
    extra = data.draw(st.integers(0, 2), label="redundant rows")
    M = random_spd(rng, n, prob["log10_cond"])
    A, b = random_full_row_rank(rng, m, n), rng.standard_normal(m)
    if extra:
        A, b = redundant_constraints(rng, A, b, extra)
    Q, C = rng.standard_normal(n), rng.standard_normal(n)
    motion = udwadia_kalaba(M, Q, A, b, C)

    basis = virtual_displacements(A)
    independent = scipy.linalg.null_space(A)
    assert basis.shape == independent.shape == (n, n - m)
    # Same subspace, orthonormal basis.
    np.testing.assert_allclose(basis @ basis.T, independent @ independent.T, atol=1e-10)
    np.testing.assert_allclose(basis.T @ basis, np.eye(n - m), atol=1e-12)

    force_scale = np.linalg.norm(Q) + np.linalg.norm(C) + np.linalg.norm(motion.ideal)
    for V in (basis, independent):
        v = V @ rng.standard_normal(V.shape[1])
        assert np.linalg.norm(A @ v) <= 1e-10 * np.linalg.norm(A) * (np.linalg.norm(v) + 1e-300)
        assert abs(v @ motion.ideal) <= 1e-9 * force_scale * np.linalg.norm(v)  # Eq. (16)
        assert abs(v @ motion.nonideal - v @ C) <= 1e-9 * force_scale * np.linalg.norm(v)  # Eq. (18)
        assert abs(v @ motion.constraint - v @ C) <= 1e-9 * force_scale * np.linalg.norm(v)  # Eq. (19)

    lhs = M @ motion.qdd
    assert_close(lhs, motion.impressed + motion.ideal + motion.nonideal, np.linalg.norm(M) * np.linalg.norm(motion.qdd) + force_scale)
    np.testing.assert_array_equal(motion.impressed, Q)
    assert_close(A @ motion.qdd, b, np.linalg.norm(A) * np.linalg.norm(motion.qdd) + np.linalg.norm(b))


def test_virtual_displacements_without_constraints_and_full_rank():
    np.testing.assert_array_equal(virtual_displacements(np.zeros((0, 3))), np.eye(3))
    assert virtual_displacements(np.eye(3)).shape == (3, 0)
    v = virtual_displacements([1.0, -1.0])  # a 1-D row is one constraint
    np.testing.assert_allclose(np.abs(v.ravel()), [1 / math.sqrt(2)] * 2, rtol=1e-14)


@pytest.mark.parametrize(
    "A, pattern",
    [("abc", r"`A` must be a real 2-D array"), ([[1.0, np.nan]], r"`A` contains a non-finite entry"),
     (np.ones((1, 1, 2)), r"`A` must be 2-D"), ([[1.0], [1.0, 2.0]], r"`A` must be a real 2-D array")],
    ids=["strings", "nan", "3d", "ragged"],
)
def test_virtual_displacements_checks_input(A, pattern):
    with pytest.raises(ValueError, match=pattern):
        virtual_displacements(A)


def test_no_constraints_is_newton():
    M = np.array([[2.0, 0.5], [0.5, 1.0]])
    Q = np.array([1.0, -2.0])
    motion = udwadia_kalaba(M, Q)
    np.testing.assert_allclose(motion.qdd, np.linalg.solve(M, Q), rtol=1e-14)
    np.testing.assert_array_equal(motion.ideal, np.zeros(2))
    # With no constraint every displacement is virtual, so F^C = C.
    np.testing.assert_allclose(udwadia_kalaba(M, Q, C=[0.3, 0.4]).nonideal, [0.3, 0.4], rtol=1e-14)


def test_motion_is_frozen():
    motion = udwadia_kalaba(np.eye(2), [0.0, -1.0], [[1.0, -1.0]], [0.0])
    assert isinstance(motion, Motion)
    with pytest.raises(AttributeError):
        motion.qdd = np.zeros(2)


# -- Lagrange multipliers -------------------------------------------------------
@SETTINGS
@given(problem, st.data())
def test_lagrange_multipliers_agree_with_udwadia_kalaba(prob, data):
    """Well-scaled problems (``||M|| = 1``); badly scaled ones are the tests below."""
    rng = np.random.default_rng(prob["seed"])
    n = prob["n"]
    m = data.draw(st.integers(1, n), label="m")
    extra = data.draw(st.integers(0, 2), label="redundant rows")
    M = random_spd(rng, n, min(prob["log10_cond"], 4.0))
    M = M / np.linalg.norm(M, 2)
    A, b = random_full_row_rank(rng, m, n), rng.standard_normal(m)
    if extra:
        A, b = redundant_constraints(rng, A, b, extra)
    Q = rng.standard_normal(n)
    motion = udwadia_kalaba(M, Q, A, b)
    qdd, lam = lagrange_multipliers(M, Q, A, b)
    assert lam.shape == (A.shape[0],)
    assert_close(qdd, motion.qdd, np.linalg.norm(motion.qdd), rtol=1e-8)
    assert_close(A.T @ lam, motion.ideal, np.linalg.norm(motion.ideal) + np.linalg.norm(Q), rtol=1e-8)
    assert_close(M @ qdd, Q + A.T @ lam, np.linalg.norm(M) * np.linalg.norm(qdd) + np.linalg.norm(Q), rtol=1e-8)


@pytest.mark.parametrize("mass", [1e6, 1e8])
def test_lagrange_multipliers_heavy_particle_eq32(mass):
    """Eq. (32) with ``M = m I``: the accelerations do not depend on ``m`` (here: grams for a tonne)."""
    qdd, lam = lagrange_multipliers(mass * np.eye(2), [0.0, -9.81 * mass], [[1.0, -1.0]], [0.0])
    np.testing.assert_allclose(qdd, [-4.905, -4.905], rtol=1e-9)
    np.testing.assert_allclose(lam, [-4.905 * mass], rtol=1e-9)


def test_lagrange_multipliers_refuses_contradiction_at_any_mass_scale():
    """``x1'' = 0`` and ``x1'' = 1`` contradict each other whatever the mass."""
    A, b = np.array([[1.0, 0.0], [1.0, 0.0]]), np.array([0.0, 1.0])
    with pytest.raises(InconsistentConstraintsError):
        lagrange_multipliers(1e6 * np.eye(2), [0.0, -9.81e6], A, b)


def test_lagrange_multipliers_pendulum_tension():
    """Unit mass at (0, -l) at rest: lambda A^T = tension m g, pointing up."""
    length = 2.0
    qdd, lam = lagrange_multipliers(np.eye(2), [0.0, -9.81], [[0.0, -2 * length]], [0.0])
    np.testing.assert_allclose(qdd, [0.0, 0.0], atol=1e-14)
    np.testing.assert_allclose(np.array([[0.0, -2 * length]]).T @ lam, [0.0, 9.81], rtol=1e-14)


# -- bad input: one error per mistake, naming the argument ---------------------
GOOD = dict(M=np.eye(2), Q=np.array([0.0, -9.81]), A=np.array([[1.0, -1.0]]), b=np.array([0.0]), C=np.array([1.0, 2.0]))


def call(**changes):
    args = dict(GOOD, **changes)
    return udwadia_kalaba(args["M"], args["Q"], args["A"], args["b"], args["C"])


def test_good_input_runs():
    call()


@pytest.mark.parametrize(
    "changes, pattern",
    [
        ({"M": np.ones((2, 3))}, r"`M` must be a non-empty square matrix; got shape \(2, 3\)"),
        ({"M": np.zeros((0, 0))}, r"`M` must be a non-empty square"),
        ({"M": np.ones(2)}, r"`M` must be 2-D"),
        ({"M": np.array([[1.0, 0.5], [0.0, 1.0]])}, r"`M` must be symmetric"),
        ({"M": np.diag([1.0, -1.0])}, r"`M` must be positive semi-definite; its smallest eigenvalue is -1"),
        ({"M": np.array([[1.0, 2.0], [2.0, 1.0]])}, r"`M` must be positive semi-definite"),
        ({"Q": np.zeros(3)}, r"`Q` must have shape \(2,\)"),
        ({"Q": np.zeros((2, 1))}, r"`Q` must be 1-D"),
        ({"A": np.ones((1, 3))}, r"`A` must have shape \(m, 2\)"),
        ({"A": np.ones((1, 1, 2))}, r"`A` must be 2-D"),
        ({"b": np.zeros(2)}, r"`b` must have shape \(1,\)"),
        ({"C": np.zeros(3)}, r"`C` must have shape \(2,\)"),
        ({"Q": ["a", "b"]}, r"`Q` must be a real 1-D array"),
    ],
    ids=[
        "M-not-square", "M-empty", "M-1d", "M-asymmetric", "M-negative-eigenvalue", "M-indefinite",
        "Q-length", "Q-2d", "A-columns", "A-3d", "b-length", "C-length", "Q-strings",
    ],
)
def test_bad_input_named(changes, pattern):
    with pytest.raises(ValueError, match=pattern):
        call(**changes)


@pytest.mark.parametrize("name", ["M", "Q", "A", "b", "C"])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_entries_named(name, bad):
    value = np.array(GOOD[name], dtype=float)
    value.flat[-1] = bad
    if name == "M":  # keep it symmetric so only the non-finite entry is wrong
        value = np.eye(2)
        value[1, 1] = bad
    with pytest.raises(ValueError, match=rf"`{name}` contains a non-finite entry \(NaN or inf\)"):
        call(**{name: value})


def test_non_unique_accelerations():
    """M = diag(1, 0) with no constraint on x2: [M; A] has rank 1 < 2."""
    with pytest.raises(NonUniqueAccelerationError, match=r"`\[M; A\]` has rank 1 < 2"):
        udwadia_kalaba(np.diag([1.0, 0.0]), [0.0, 1.0], [[1.0, 0.0]], [0.0])
    with pytest.raises(NonUniqueAccelerationError, match=r"`M` is singular"):
        udwadia_kalaba(np.zeros((2, 2)), [0.0, 1.0])


def test_non_unique_is_a_value_error():
    assert issubclass(NonUniqueAccelerationError, ValueError)
    assert issubclass(InconsistentConstraintsError, ValueError)


@pytest.mark.parametrize("mass", [np.eye(2), np.diag([2.0, 5.0]), np.diag([1.0, 0.0])])
def test_inconsistent_constraints_residual(mass):
    """x1'' = 0 and x1'' = 1 together: the least-squares residual is |0 - 1| / sqrt(2)."""
    A = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    b = np.array([0.0, 1.0, 0.0])
    with pytest.raises(InconsistentConstraintsError, match=r"the constraints `A q'' = b` have no solution") as info:
        udwadia_kalaba(mass, [0.0, -9.81], A, b)
    expected = np.linalg.norm(A @ np.linalg.lstsq(A, b, rcond=None)[0] - b)
    assert info.value.residual > 0
    assert info.value.residual == pytest.approx(expected, rel=1e-10)
    assert f"{expected:.3e}" in str(info.value)


@SETTINGS
@given(problem, st.data())
def test_inconsistent_redundant_rows_are_refused(prob, data):
    rng = np.random.default_rng(prob["seed"])
    n = prob["n"]
    rank = data.draw(st.integers(1, n), label="rank")
    M = random_spd(rng, n, prob["log10_cond"])
    A_ind = random_full_row_rank(rng, rank, n)
    b_ind = rng.standard_normal(rank)
    A, b = redundant_constraints(rng, A_ind, b_ind, 1)
    # Break the dependence by a step out of range(A): the least-squares residual is that step.
    left_null = scipy.linalg.null_space(A.T)
    assert left_null.shape[1] == 1
    free = rng.standard_normal(n)  # the unconstrained acceleration a, so Q = M a
    Q = M @ free
    expected = 1e-3 * (np.linalg.norm(b) + np.linalg.norm(A @ free))
    b = b + expected * left_null[:, 0]
    with pytest.raises(InconsistentConstraintsError) as info:
        udwadia_kalaba(M, Q, A, b)
    assert info.value.residual == pytest.approx(expected, rel=1e-6)
    with pytest.raises(InconsistentConstraintsError):  # and at unit mass scale
        lagrange_multipliers(M / np.linalg.norm(M, 2), Q / np.linalg.norm(M, 2), A, b)


def test_lagrange_multipliers_checks_input():
    with pytest.raises(ValueError, match=r"`M` must be symmetric"):
        lagrange_multipliers([[1.0, 1.0], [0.0, 1.0]], [0.0, 0.0], [[1.0, 0.0]], [0.0])
    with pytest.raises(ValueError, match=r"`b` contains a non-finite entry"):
        lagrange_multipliers(np.eye(2), [0.0, 0.0], [[1.0, 0.0]], [np.nan])


def test_tolerance_constants():
    assert 0 < RANK_RTOL < 1e-6
    assert 0 < CONSISTENCY_RTOL < 1e-4
    # A row below RANK_RTOL of the largest counts as redundant: tiny inconsistency is accepted...
    A = np.array([[1.0, 0.0], [1.0, 0.0]])
    udwadia_kalaba(np.eye(2), [0.0, 0.0], A, [1.0, 1.0 + 1e-12])
    # ...but not when asked to be stricter.
    with pytest.raises(InconsistentConstraintsError):
        udwadia_kalaba(np.eye(2), [0.0, 0.0], A, [1.0, 1.0 + 1e-12], consistency_rtol=1e-15)


# -- issue 11, section 3: input that used to slip through -----------------------
NO_ROWS = np.zeros((0, 2))


@pytest.mark.parametrize("M", [np.diag([1.0, -1.0]), np.diag([1e-12, -1e-13]), np.diag([1e-3, -1e-12])])
def test_indefinite_mass_refused_by_both_routes(M):
    # The PSD tolerance is relative to the largest eigenvalue (RANK_RTOL times it).
    for route in (udwadia_kalaba, lagrange_multipliers):
        with pytest.raises(ValueError, match="positive semi-definite"):
            route(M, [1.0, 1.0], [[1.0, 0.0]], [0.0])


def test_semidefinite_rounding_is_accepted():
    # An eigenvalue of -1e-14 next to 1 is rounding, not indefiniteness.
    motion = udwadia_kalaba(np.diag([1.0, -1e-14 * RANK_RTOL]), [1.0, 1.0], [[0.0, 1.0]], [0.0])
    np.testing.assert_allclose(motion.qdd, [1.0, 0.0], atol=1e-12)


@pytest.mark.parametrize("M", [np.diag([1.0, 0.0]), np.zeros((2, 2))])
def test_lagrange_multipliers_non_unique_refused(M):
    with pytest.raises(NonUniqueAccelerationError, match="not unique"):
        lagrange_multipliers(M, [1.0, 1.0], NO_ROWS, [])


def test_badly_scaled_mass_matches_multiplier_route():
    args = (np.diag([1.0, 1e-8]), [0.0, -9.81], [[1e-6, 1.0], [-1e-6, 1.0]], [1e-6, -1e-6])
    qdd_lm, _ = lagrange_multipliers(*args)
    # The rows give 2 qdd_2 = 0 and 2e-6 qdd_1 = 2e-6: qdd = [1, 0] exactly.
    np.testing.assert_allclose(qdd_lm, [1.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(udwadia_kalaba(*args).qdd, qdd_lm, atol=1e-12)


@pytest.mark.parametrize("name", ["M", "Q", "A", "b", "C"])
def test_complex_input_refused(name):
    args = {"M": np.eye(2), "Q": np.ones(2), "A": [[1.0, 0.0]], "b": [0.0], "C": np.zeros(2)}
    args[name] = np.asarray(args[name], dtype=complex) * (1 + 1j)
    with pytest.raises(ValueError, match=f"`{name}` must be real"):
        udwadia_kalaba(**args)


def test_callable_nonideal_returning_nan_refused():
    with pytest.raises(ValueError, match="callable `C`"):
        udwadia_kalaba(np.eye(2), [1.0, 1.0], [[1.0, 0.0]], [0.0], C=lambda F: np.array([np.nan, 0.0]))


@pytest.mark.parametrize("value", [-1.0, 0.0, 1.0, math.nan, math.inf, "x"])
@pytest.mark.parametrize("name", ["rank_rtol", "consistency_rtol"])
def test_tolerances_validated(name, value):
    for route in (udwadia_kalaba, lagrange_multipliers):
        with pytest.raises(ValueError, match=f"`{name}`"):
            route(np.eye(2), [1.0, 1.0], [[1.0, 0.0]], [0.0], **{name: value})
    if name == "rank_rtol":
        with pytest.raises(ValueError, match="`rank_rtol`"):
            virtual_displacements([[1.0, 0.0]], rank_rtol=value)


def test_extreme_scales_give_answers_or_clear_errors():
    # A tiny mass and a huge row: Gauss's minimum keeps qdd_1 ~ 0, qdd_2 = Q_2 / m.
    motion = udwadia_kalaba(1e-17 * np.eye(2), [1.0, 1.0], [[1e300, 1.0]], [0.0])
    np.testing.assert_allclose(motion.qdd, [-1e-283, 1e17], rtol=1e-12, atol=1e-12 * 1e17)  # normwise
    assert np.all(np.isfinite(udwadia_kalaba(np.eye(2), [1e308, 1e308], NO_ROWS, []).qdd))
    with pytest.raises(ValueError, match="floating-point range"):
        udwadia_kalaba(1e-300 * np.eye(2), [1e308, 1e308], NO_ROWS, [])
    with pytest.raises(InconsistentConstraintsError):
        udwadia_kalaba(np.eye(2), [1.0, 1.0], [[1.0, 0.0], [1.0, 0.0]], [1e200, 0.0])


def test_motion_holds_copies():
    Q = np.array([1.0, 2.0])
    motion = udwadia_kalaba(np.eye(2), Q, [[1.0, 0.0]], [0.0])
    assert motion.impressed is not Q
    Q[:] = 7.0
    np.testing.assert_array_equal(motion.impressed, [1.0, 2.0])


# -- the batched kernel against the general route ----------------------------------
@settings(max_examples=60, deadline=None)
@given(st.integers(1, 6), st.integers(0, 5), st.integers(1, 5), st.integers(0, 2**32 - 1))
def test_solve_batch_matches_udwadia_kalaba(n, m, B, seed):
    from udk_notebooks.core import solve_batch

    rng = np.random.default_rng(seed)
    m = min(m, n)
    R = rng.normal(size=(B, n, n))
    M = R @ np.swapaxes(R, 1, 2) + n * np.eye(n)
    Q, A, b, C = rng.normal(size=(B, n)), rng.normal(size=(B, m, n)), rng.normal(size=(B, m)), rng.normal(size=(B, n))
    sol = solve_batch(lambda X: np.linalg.solve(M, X), Q, A, b, C[:, :, None])
    for i in range(B):
        if m and np.linalg.cond(A[i]) > 30:
            continue  # the Gram route squares cond(A): 1e-12 holds for well-posed rows only
        assert sol.ok[i]
        ref = udwadia_kalaba(M[i], Q[i], A[i], b[i], C[i])
        scale = 1.0 + np.abs(ref.qdd).max()
        np.testing.assert_allclose(sol.qdd[i] + sol.acceleration[i, :, 0], ref.qdd, rtol=0, atol=1e-12 * scale)
        np.testing.assert_allclose(sol.ideal[i], ref.ideal, rtol=0, atol=1e-12 * (1 + np.abs(ref.ideal).max()))
        np.testing.assert_allclose(sol.force[i, :, 0], ref.nonideal, rtol=0, atol=1e-12 * (1 + np.abs(ref.nonideal).max()))


def test_solve_batch_flags_dependent_rows():
    from udk_notebooks.core import solve_batch

    A = np.array([[[1.0, 0.0], [2.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]]])
    sol = solve_batch(lambda X: X, np.ones((2, 2)), A, np.zeros((2, 2)))
    assert list(sol.ok) == [False, True]
