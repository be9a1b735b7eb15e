"""The Udwadia-Kalaba explicit equation of motion.

For a system with mass matrix ``M``, impressed (given) forces ``Q`` and
constraints written at acceleration level as ``A q'' = b``, the constrained
accelerations are (Udwadia, Kalaba & Fan 2005, Eq. 7)::

    q'' = a + M^{-1/2} B^+ (b - A a) + M^{-1/2} (I - B^+ B) M^{-1/2} C,
    a = M^{-1} Q,   B = A M^{-1/2},

and multiplying by ``M`` splits the force into the three terms of Eq. (8):
``M q'' = F^N + F^L + F^C`` with ``F^N = Q`` (Newton, Eq. 9), the ideal
constraint force ``F^L`` (Lagrange, Eq. 10) and the nonideal constraint force
``F^C`` (Coulomb, Eq. 11).

Numerically ``M^{1/2}`` is never formed: any factor ``M = L L^T`` gives the
same accelerations and forces (they are the unique minimizer of Gauss's
function ``(q'' - a)^T M (q'' - a)`` subject to ``A q'' = b``, and the
``M``-orthogonal projection of ``M^{-1} C`` onto the virtual displacements), so
the code uses a Cholesky factor, triangular solves and a factorization of ``B``.

For ideal constraints (``C`` absent) with independent, well-conditioned
rows, the minimum of Gauss's function is computed directly: with
``M = L L^T`` it is the equality-constrained least-squares problem
``min ||L^T q'' - L^{-1} Q||`` subject to ``A q'' = b``, which LAPACK's
``dgglse`` solves with one generalized RQ factorization; Eq. (8) then gives
``F^L = M q'' - Q``. This is the same vector as Eq. (7) (whose closed form is
that minimum) at half the cost or less for up to 16 coordinates, where the
cost is the number of calls and not the arithmetic. Every other case (a
nonideal ``C``, dependent or nearly dependent rows, more coordinates)
evaluates Eqs. (7)-(11) term by term.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
from numpy.typing import ArrayLike
from scipy.linalg import lapack, null_space

from ._checks import as_finite_array, check_constraint_matrix, check_mass_matrix, check_vector
from .errors import InconsistentConstraintsError, NonUniqueAccelerationError

__all__ = [
    "CONSISTENCY_RTOL",
    "RANK_RTOL",
    "Motion",
    "lagrange_multipliers",
    "udwadia_kalaba",
    "virtual_displacements",
]

RANK_RTOL = 1e-10
"""Singular values below ``RANK_RTOL`` times the largest count as zero.

Used for the rank of ``B = A M^{-1/2}`` (redundant constraints), for deciding
that ``M`` is singular (a Cholesky pivot squared below ``RANK_RTOL`` times the
largest diagonal entry) and for the rank of ``[M; A]``.
"""

CONSISTENCY_RTOL = 1e-8
"""``A q'' = b`` counts as solved when ``||A q'' - b|| <= CONSISTENCY_RTOL * (||b|| + ||A a||)``."""

LSE_RCOND = 1e-6
"""Solve Gauss's minimum directly (``dgglse``) only when the estimated reciprocal
condition number of ``A`` exceeds this; otherwise rows that are dependent or
nearly so go through the pseudoinverse of Eq. (7), with its rank decision."""

LSE_MAX_N = 16
"""Largest number of coordinates solved by ``dgglse``: its factorization costs
``O(n^3)`` against ``O(n^2 m)`` for Eq. (7) with a given Cholesky factor, and
the two break even near n = 20 (``benchmarks/solver_cost.py``)."""


@dataclass(frozen=True)
class Motion:
    """Accelerations and the three force terms of the Udwadia-Kalaba equation.

    The fields satisfy ``M @ qdd == impressed + ideal + nonideal``
    (Udwadia, Kalaba & Fan 2005, Eq. 8).

    Attributes
    ----------
    qdd : ndarray, shape (n,)
        Generalized accelerations ``q''``.
    impressed : ndarray, shape (n,)
        The given force ``Q``, the paper's ``F^N = M a`` (Eq. 9).
    ideal : ndarray, shape (n,)
        The ideal constraint force ``F^L`` (Eq. 10); it does no work in any
        virtual displacement ``v`` (``A v = 0``), Eq. (16).
    nonideal : ndarray, shape (n,)
        The nonideal constraint force ``F^C`` (Eq. 11); its virtual work equals
        that of ``C``: ``v @ nonideal == v @ C`` (Eq. 18).
    """

    qdd: np.ndarray
    impressed: np.ndarray
    ideal: np.ndarray
    nonideal: np.ndarray

    @property
    def constraint(self) -> np.ndarray:
        """Total constraint force ``F^L + F^C`` (Eq. 19)."""
        return self.ideal + self.nonideal


def udwadia_kalaba(
    M,
    Q,
    A=None,
    b=None,
    C: ArrayLike | Callable[[np.ndarray], ArrayLike] | None = None,
    *,
    rank_rtol: float = RANK_RTOL,
    consistency_rtol: float = CONSISTENCY_RTOL,
) -> Motion:
    """Constrained accelerations and force terms from the Udwadia-Kalaba equation.

    Parameters
    ----------
    M : array_like, shape (n, n)
        Symmetric mass matrix. Positive definite, or positive semi-definite
        with ``[M; A]`` of full column rank.
    Q : array_like, shape (n,)
        Impressed generalized force (``F^N`` in the 2005 paper).
    A : array_like, shape (m, n), optional
        Constraint matrix of ``A q'' = b``. Rows may be redundant
        (linearly dependent) as long as they are consistent. ``None`` means no
        constraints.
    b : array_like, shape (m,), optional
        Right-hand side of ``A q'' = b``.
    C : array_like, shape (n,), or callable, optional
        The vector ``c`` of Eqs. (4)-(8) that prescribes the virtual work of
        the constraint force, ``v^T (F^L + F^C) = v^T C`` (Eq. 19). A callable
        receives the ideal force ``F^L`` (which does not depend on ``C``) and
        returns ``C``; this is how Coulomb friction uses the normal force.
        ``None`` means ideal constraints (Eq. 21).
    rank_rtol : float, optional
        Relative tolerance for rank decisions, see :data:`RANK_RTOL`.
    consistency_rtol : float, optional
        Relative tolerance for ``A q'' = b``, see :data:`CONSISTENCY_RTOL`.

    Returns
    -------
    Motion
        ``qdd`` and the three forces, with ``M qdd = Q + F^L + F^C``.

    Raises
    ------
    ValueError
        For wrong shapes, non-finite entries, an asymmetric ``M`` or an ``M``
        that is not positive semi-definite.
    NonUniqueAccelerationError
        When ``M`` is singular and ``[M; A]`` lacks full column rank.
    InconsistentConstraintsError
        When ``A q'' = b`` has no solution; the error carries the residual.

    Notes
    -----
    For singular ``M`` the function uses the augmented system
    ``M_A = M + s A^+ A``, ``Q_b = Q + s A^+ b`` (Udwadia & Phohomsiri 2006;
    the encyclopedia article takes ``s = 1``; here ``s`` is the largest
    eigenvalue of ``M`` so that both terms have the same scale). Because
    ``A q'' = b``, ``M_A q'' - Q_b = M q'' - Q``, so the forces returned
    still satisfy ``M q'' = Q + F^L + F^C`` and the virtual-work properties.

    References
    ----------
    F. E. Udwadia, R. E. Kalaba, Y. Fan, "Is analytical dynamics a theoretical
    or an experimental science?", Nonlinear Analysis 63 (2005) 692-698.

    Examples
    --------
    A unit mass on the line ``k x1 - x2 = 0`` under gravity with the
    nonideal force ``c = (1, 2)`` (2005 paper, Eq. 32, with k = 1, g = 9.81):

    >>> import numpy as np
    >>> motion = udwadia_kalaba(np.eye(2), [0.0, -9.81], [[1.0, -1.0]], [0.0], C=[1.0, 2.0])
    >>> np.round(motion.qdd, 6)
    array([-3.405, -3.405])
    """
    M = check_mass_matrix(M)
    n = M.shape[0]
    Q = check_vector(Q, "Q", n)
    A, b = check_constraint_matrix(A, b, n)
    if C is not None and not callable(C):
        C = check_vector(C, "C", n)
    return solve(M, Q, A, b, C, rank_rtol=rank_rtol, consistency_rtol=consistency_rtol)


def solve(M, Q, A, b, C=None, *, rank_rtol=RANK_RTOL, consistency_rtol=CONSISTENCY_RTOL, factor=None):
    """:func:`udwadia_kalaba` without input checks, for trusted callers.

    ``factor`` may hold a precomputed lower Cholesky factor of ``M`` (compiled
    models with a constant mass matrix pass it to skip the factorization).
    """
    if factor is None:
        factor = cholesky_or_none(M, rank_rtol)
    if factor is not None:
        return _solve_factored(M, factor, Q, A, b, C, rank_rtol, consistency_rtol)
    return _solve_singular(M, Q, A, b, C, rank_rtol, consistency_rtol)


def cholesky_or_none(M: np.ndarray, rank_rtol: float = RANK_RTOL) -> np.ndarray | None:
    """Lower Cholesky factor of ``M``, or None when ``M`` is numerically singular."""
    L, info = lapack.dpotrf(M, lower=1, clean=1)
    if info != 0:
        return None
    n = M.shape[0]
    if min(L.flat[:: n + 1]) ** 2 <= rank_rtol * max(M.flat[:: n + 1]):
        return None
    return L


def _gauss_minimum(M, L, Q, A, b) -> Motion | None:
    """Ideal constraints: the minimum of Gauss's function by LAPACK's ``dgglse``.

    Minimizes ``(q'' - a)^T M (q'' - a) = ||L^T q'' - L^{-1} Q||^2`` subject to
    ``A q'' = b`` (see the module docstring), then ``F^L = M q'' - Q``
    (Eq. 8 with ``F^C = 0``). Returns None when ``A`` has more rows than
    columns (or none), when there are more than :data:`LSE_MAX_N`
    coordinates, or when the estimated reciprocal condition number of ``A``
    is at most :data:`LSE_RCOND`.
    """
    m, n = A.shape
    if not 0 < m <= n <= LSE_MAX_N:
        return None
    y, _ = lapack.dtrtrs(L, Q, lower=1)
    _, T, _, qdd, info = lapack.dgglse(L.T, A, y, b)
    if info != 0:
        return None
    rcond, info = lapack.dtrcon(T[:, n - m :])  # A = (0 T12) Z: cond(T12) = cond(A)
    if info != 0 or not rcond > LSE_RCOND:
        return None
    return Motion(qdd=qdd, impressed=Q, ideal=M @ qdd - Q, nonideal=np.zeros(n))


def _solve_factored(M, L, Q, A, b, C, rank_rtol, consistency_rtol) -> Motion:
    """Eqs. (7)-(11) with ``M = L L^T`` and ``B = A L^{-T}``.

    One triangular solve gives both ``y = L^{-1} Q`` (so that ``a = L^{-T} y``)
    and ``B^T = L^{-1} A^T``, and one product gives both ``A a = B y`` and the
    Gram matrix ``B B^T``. Then ``F^L = L B^+ (b - B y)`` (Eq. 10),
    ``F^C = L (I - B^+ B) L^{-1} C`` (Eq. 11) and
    ``q'' = L^{-T} (y + B^+ (b - B y) + (I - B^+ B) L^{-1} C)`` (Eq. 7).
    For small systems the cost is the number of calls, not the arithmetic.
    """
    n, m = L.shape[0], A.shape[0]
    if C is None:
        motion = _gauss_minimum(M, L, Q, A, b)
        if motion is not None:
            return motion
    if m:
        Y, _ = lapack.dtrtrs(L, np.column_stack((Q, A.T)), lower=1)  # [L^{-1} Q, B^T]
        y, Bt = Y[:, 0], Y[:, 1:]
        P = Bt.T @ Y  # [B y, B B^T]
        Aa = P[:, 0]
        r = b - Aa
        pseudo = _GramPseudoinverse.of(Bt, P[:, 1:]) or _SvdPseudoinverse(Bt, r, b, Aa, rank_rtol, consistency_rtol)
        w = pseudo.solve(r)  # B^+ (b - A a)
        ideal = L @ w
        z = y + w
    else:
        pseudo = None
        y, _ = lapack.dtrtrs(L, Q, lower=1)
        ideal = np.zeros(n)
        z = y
    if C is None:
        nonideal = np.zeros(n)
    else:
        c = np.asarray(C(ideal) if callable(C) else C, dtype=float)
        yc, _ = lapack.dtrtrs(L, c, lower=1)  # L^{-1} C
        if pseudo is not None:
            yc = pseudo.null_part(yc)  # (I - B^+ B) L^{-1} C
        nonideal = L @ yc
        z = z + yc
    qdd, _ = lapack.dtrtrs(L, z, lower=1, trans=1)
    return Motion(qdd=qdd, impressed=Q, ideal=ideal, nonideal=nonideal)


GRAM_RCOND = 1e-6
"""Use the Gram matrix ``B B^T`` only when its reciprocal condition number exceeds this.

Solving through ``B B^T`` squares the condition number of ``B``; below this
threshold (``cond(B)`` above about 1e3) the SVD route is used instead, so
the relative error stays near ``1e-16 / GRAM_RCOND = 1e-10``.
"""


class _GramPseudoinverse:
    """``B^+`` and ``I - B^+ B`` through a Cholesky factor of ``B B^T`` (independent rows).

    The common case, and about half the cost of an SVD for small systems.
    """

    __slots__ = ("Bt", "R")

    @classmethod
    def of(cls, Bt: np.ndarray, G: np.ndarray):
        """The pseudoinverse of ``B = Bt^T`` given ``G = B B^T``, or None when ``G`` is singular or ill-conditioned."""
        R, info = lapack.dpotrf(G, lower=0, clean=1)
        if info != 0:
            return None
        # For a positive semi-definite G, ||G||_1 <= sqrt(m) ||G||_2 <= sqrt(m) trace(G): an upper
        # bound of the norm keeps the estimated rcond conservative.
        m = G.shape[0]
        rcond, info = lapack.dpocon(R, math.sqrt(m) * G.trace())
        if info != 0 or not rcond > GRAM_RCOND:
            return None
        self = cls()
        self.Bt, self.R = Bt, R
        return self

    def solve(self, x: np.ndarray) -> np.ndarray:
        """``B^+ x = B^T (B B^T)^{-1} x``."""
        lam, _ = lapack.dpotrs(self.R, x, lower=0)
        return self.Bt @ lam

    def null_part(self, y: np.ndarray) -> np.ndarray:
        """``(I - B^+ B) y``."""
        return y - self.solve(self.Bt.T @ y)


class _SvdPseudoinverse:
    """``B^+`` and ``I - B^+ B`` through a thin SVD, with the rank decision and the consistency check."""

    __slots__ = ("U", "s", "Vt")

    def __init__(self, Bt, r, b, Aa, rank_rtol, consistency_rtol):
        m = Bt.shape[1]
        U, s, Vt = _svd(Bt.T)
        rank = int(np.count_nonzero(s > rank_rtol * s[0])) if s[0] > 0 else 0
        self.U, self.s, self.Vt = U[:, :rank], s[:rank], Vt[:rank]
        miss = _norm(r - self.U @ (self.U.T @ r))  # = ||A q'' - b|| for the best q''
        scale = _norm(b) + _norm(Aa)
        if miss > consistency_rtol * scale:
            raise InconsistentConstraintsError(
                f"the constraints `A q'' = b` have no solution: ||A q'' - b|| = {miss:.3e} "
                f"(relative {miss / scale:.3e}) for the best least-squares q''; rows of `A` "
                f"are dependent (rank {rank} of {m}) but `b` does not follow the same dependence. "
                "Check the constraint equations, or remove the contradicting rows",
                residual=float(miss),
            )

    def solve(self, x: np.ndarray) -> np.ndarray:
        """``B^+ x = V S^{-1} U^T x`` over the nonzero singular values."""
        return self.Vt.T @ ((self.U.T @ x) / self.s)

    def null_part(self, y: np.ndarray) -> np.ndarray:
        """``(I - V V^T) y``: never divides by a small singular value."""
        return y - self.Vt.T @ (self.Vt @ y)


def _solve_singular(M, Q, A, b, C, rank_rtol, consistency_rtol) -> Motion:
    """Augmented form ``M + s A^+ A`` for a positive semi-definite ``M``."""
    eig = np.linalg.eigvalsh(M)
    top = max(eig[-1], 0.0)
    if eig[0] < -rank_rtol * max(top, 1.0):
        raise ValueError(
            f"`M` must be positive semi-definite; its smallest eigenvalue is {eig[0]:.3e} "
            f"(largest {eig[-1]:.3e}). A mass matrix comes from a kinetic energy, which is "
            "never negative: check the signs of masses and inertias"
        )
    n = M.shape[0]
    scale = top if top > 0 else 1.0
    if A.shape[0]:
        U, s, Vt = _svd(A)
        rank = int(np.count_nonzero(s > rank_rtol * s[0])) if s[0] > 0 else 0
        U, s, Vt = U[:, :rank], s[:rank], Vt[:rank]
        M_A = M + scale * (Vt.T @ Vt)
        Q_b = Q + scale * (Vt.T @ ((U.T @ b) / s))
    else:
        M_A, Q_b = M, Q
    L = cholesky_or_none(M_A, rank_rtol)
    if L is None:
        stacked_rank = np.linalg.matrix_rank(np.vstack([M, A]), tol=rank_rtol * np.abs(M_A).max())
        raise NonUniqueAccelerationError(
            f"the accelerations are not unique: `M` is singular (smallest eigenvalue {eig[0]:.3e}) "
            f"and `[M; A]` has rank {stacked_rank} < {n} columns, so some motion has neither "
            "inertia nor a constraint. Give every coordinate mass, or add a constraint that fixes it"
        )
    motion = _solve_factored(M_A, L, Q_b, A, b, C, rank_rtol, consistency_rtol)
    return Motion(qdd=motion.qdd, impressed=Q, ideal=motion.ideal, nonideal=motion.nonideal)


def _svd(X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Thin SVD through LAPACK's gesdd, without numpy's per-call overhead."""
    U, s, Vt, info = lapack.dgesdd(X, full_matrices=0)
    if info != 0:  # gesdd did not converge; the slower gesvd is more robust
        U, s, Vt = np.linalg.svd(X, full_matrices=False)
    return U, s, Vt


def _norm(x: np.ndarray) -> float:
    return math.sqrt(x @ x)


def lagrange_multipliers(M, Q, A, b) -> tuple[np.ndarray, np.ndarray]:
    """Accelerations and multipliers from the classic saddle-point system.

    Solves ``M q'' = Q + A^T lam``, ``A q'' = b`` (Beshaw 2014, Eqs. 9-17; the
    textbook chapter's Lagrange multipliers) as one linear system. This is the
    independent route that lessons and tests compare with
    :func:`udwadia_kalaba`; with ideal constraints ``A^T lam`` equals ``F^L``.

    Parameters
    ----------
    M : array_like, shape (n, n)
        Symmetric positive semi-definite mass matrix with ``[M; A]`` of full
        column rank.
    Q : array_like, shape (n,)
        Impressed generalized force.
    A : array_like, shape (m, n)
        Constraint matrix.
    b : array_like, shape (m,)
        Right-hand side of ``A q'' = b``.

    Returns
    -------
    qdd : ndarray, shape (n,)
        Generalized accelerations.
    lam : ndarray, shape (m,)
        Multipliers; the minimum-norm choice when rows of ``A`` are redundant
        (then the multipliers themselves are not unique, ``A^T lam`` is).
    """
    M = check_mass_matrix(M)
    n = M.shape[0]
    Q = check_vector(Q, "Q", n)
    A, b = check_constraint_matrix(A, b, n)
    if A.shape[0] == 0:
        return np.linalg.solve(M, Q), np.zeros(0)
    # Redundant rows make the bordered matrix singular: keep the independent combinations
    # A_r = S_r V_r^T of the rows (an SVD of A), solve the nonsingular system, map back.
    U, s, Vt = _svd(A)
    rank = int(np.count_nonzero(s > RANK_RTOL * s[0])) if s[0] > 0 else 0
    U, s, Vt = U[:, :rank], s[:rank], Vt[:rank]
    miss = _norm(b - U @ (U.T @ b))
    scale = _norm(b) + s[0] * _norm(Q) / np.abs(M).max() if rank else _norm(b)
    if miss > CONSISTENCY_RTOL * max(scale, np.finfo(float).tiny):
        raise InconsistentConstraintsError(
            f"the constraints `A q'' = b` have no solution: ||A q'' - b|| >= {miss:.3e}; rows of `A` "
            f"are dependent (rank {rank} of {A.shape[0]}) but `b` does not follow the same dependence",
            residual=float(miss),
        )
    A_r = s[:, None] * Vt
    K = np.block([[M, -A_r.T], [A_r, np.zeros((rank, rank))]])
    try:
        sol = np.linalg.solve(K, np.concatenate([Q, U.T @ b]))
    except np.linalg.LinAlgError:
        raise NonUniqueAccelerationError(
            "the saddle-point matrix is singular: `[M; A]` lacks full column rank, so the "
            "accelerations are not unique"
        ) from None
    return sol[:n], U @ sol[n:]


def virtual_displacements(A, *, rank_rtol: float = RANK_RTOL) -> np.ndarray:
    """Orthonormal basis of the virtual displacements ``{v : A v = 0}``.

    Parameters
    ----------
    A : array_like, shape (m, n)
        Constraint matrix.
    rank_rtol : float, optional
        Relative tolerance on the singular values of ``A``.

    Returns
    -------
    ndarray, shape (n, n - rank(A))
        Columns span the null space of ``A`` (2005 paper, Eqs. 12-14).
    """
    try:
        one_row = np.ndim(A) == 1
    except ValueError:  # a ragged nesting: as_finite_array names it
        one_row = False
    A = as_finite_array(np.atleast_2d(A) if one_row else A, "A", 2)
    if A.shape[0] == 0:
        return np.eye(A.shape[1])
    return null_space(A, rcond=rank_rtol)
