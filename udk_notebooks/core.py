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
evaluates Eqs. (7)-(11) term by term: through the Gram matrix ``B B^T`` when it
is well conditioned, otherwise in a basis of the virtual displacements (the
null space of ``A``), where the rank of ``A`` itself decides which rows are
redundant, so a badly scaled mass matrix cannot make independent rows look
dependent.

:class:`StackedGram` solves Eq. (7) through the Gram matrix for a stack of
systems at once (a run's samples, the members of a sweep; :func:`solve_batch`
is its members-first face); it flags the members it cannot vouch for (an
ill-conditioned Gram matrix), which the caller then solves with :func:`solve`.

The public functions scale their input by powers of two before solving (``M``
to unit size, each row of ``A`` to unit size, the forces to the size of the
accelerations), which changes no digit of the answer but keeps intermediate
products inside the floating-point range, and they refuse an answer that
would not fit in it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
from numpy.typing import ArrayLike

from ._checks import as_finite_array, check_constraint_matrix, check_mass_matrix, check_tolerance, check_vector
from ._lapack import lapack, null_space  # not scipy.linalg: its import costs a cold start 0.15 s
from .errors import InconsistentConstraintsError, NonUniqueAccelerationError

__all__ = [
    "CONSISTENCY_RTOL",
    "RANK_RTOL",
    "Motion",
    "lagrange_multipliers",
    "StackedGram",
    "solve_batch",
    "udwadia_kalaba",
    "virtual_displacements",
]

RANK_RTOL = 1e-10
"""Singular values below ``RANK_RTOL`` times the largest count as zero.

Used for the rank of ``A`` (redundant constraints; the public functions first
scale each row of ``A`` to unit size), for deciding that ``M`` is singular (a
Cholesky pivot squared below ``RANK_RTOL`` times its own diagonal entry: the
test of ``M`` equilibrated to a unit diagonal, see ``cholesky_or_none``),
for the rank of ``[M; A]``, and for telling a semi-definite ``M`` from an
indefinite one: an eigenvalue below ``-RANK_RTOL`` times the largest
eigenvalue in magnitude makes ``M`` indefinite, one above is rounding.
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
    ``M_A = M + s A^+ A``, ``Q_b = Q + s A^+ b`` (the auxiliary system of
    Udwadia & Schutte 2010, which the encyclopedia article prints with
    ``s = 1``; the rank condition: Udwadia & Phohomsiri 2006; here ``s`` is
    the largest eigenvalue of ``M`` so that both terms have the same scale). Because
    ``A q'' = b``, ``M_A q'' - Q_b = M q'' - Q``, so the forces returned
    still satisfy ``M q'' = Q + F^L + F^C`` and the virtual-work properties.
    Where the saddle-point matrix ``[[M / s, A^T], [A, 0]]`` is well enough
    conditioned to vouch that this route finds a unique motion (the
    threshold is derived in ``_bordered_rcond``), one LU factorization of it
    gives the same motion at a fraction of the cost; nearly dependent rows
    and ``[M; A]`` near a loss of rank are left to the augmented form.

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
    rank_rtol = check_tolerance(rank_rtol, "rank_rtol")
    consistency_rtol = check_tolerance(consistency_rtol, "consistency_rtol")
    if C is not None:
        C = _checked_callable(C, n) if callable(C) else check_vector(C, "C", n)
    units = _Units(M, Q, A, b, None if C is None or callable(C) else C)
    try:
        motion = solve(
            units.mass(M), units.force(Q), *units.constraints(A, b), units.nonideal(C),
            rank_rtol=rank_rtol, consistency_rtol=consistency_rtol, mass_unit=units.mass_unit,
        )
    except InconsistentConstraintsError:
        raise _inconsistent(A, b, rank_rtol) from None
    return Motion(
        qdd=units.acceleration_back(motion.qdd, "qdd"),
        impressed=Q.copy(),
        ideal=units.force_back(motion.ideal, "the ideal force F^L"),
        nonideal=units.force_back(motion.nonideal, "the nonideal force F^C"),
    )


def _checked_callable(C, n: int):
    """Wrap a callable ``C`` so that what it returns is checked like an array ``C``."""

    def checked(ideal):
        try:
            value = C(ideal.copy())
            return check_vector(value, "C", n)
        except ValueError as exc:
            raise ValueError(f"the callable `C` returned a bad vector for F^L = {ideal!r}: {exc}") from None

    return checked


class _Units:
    """Exact power-of-two scales that bring ``M``, the rows of ``A`` and the forces to unit size.

    The accelerations solve ``M q'' = Q + F``, ``A q'' = b``; dividing ``M``,
    ``Q``, ``C`` by ``2^e_M``, row ``i`` of ``A`` and ``b_i`` by ``2^e_i``,
    and all forces and ``b`` further by ``2^e_F`` (the size of the
    accelerations) leaves ``q'' / 2^e_F`` as the solution. Powers of two
    change no digit, so no scale is lost, yet products such as ``A M^{-1} A^T``
    stay inside the floating-point range for any input that is itself finite.
    """

    def __init__(self, M, Q, A, b, C):
        self.e_mass = _exponent(np.abs(M).max())
        self.e_rows = np.array([_exponent(v) for v in np.abs(A).max(axis=1, initial=0.0)], dtype=int)
        # Only nonzero terms set the size of the accelerations: a zero Q counted as size one, which
        # with M = 1e-300 I made the unit of acceleration 2^997 and flushed b / A = 1e-301 to zero.
        sizes = [_exponent(np.abs(F).max()) - self.e_mass for F in (Q, C) if F is not None and np.any(F)]
        sizes += [_exponent(abs(v)) - int(e) for v, e in zip(b, self.e_rows) if v != 0]
        self.e_accel = max(sizes, default=0)
        self.e_force = self.e_mass + self.e_accel
        self.mass_unit = math.ldexp(1.0, self.e_mass)
        self._check_resolution(Q, b, C, np.abs(np.diagonal(M)))

    def _check_resolution(self, Q, b, C, inertia) -> None:
        """Refuse a nonzero ``Q``, ``C`` or ``b`` entry that the scaled solve would flush to zero (or to a
        subnormal number, with fewer digits).

        In the scaled units the largest acceleration is about one; an entry more
        than about 1e308 times smaller than it is below the normal
        floating-point range there. A fully constrained coordinate takes its
        acceleration from ``b`` alone, so losing ``b`` is a wrong answer, not a
        rounding error (issue 22: M = 1e-17, Q = 1e10, A = 1e300, b = 1 gave
        q'' = 0 instead of 1e-300). A force entry whose own acceleration
        (over its coordinate's mass) is below rounding beside the largest
        acceleration is let through: flushing it is a rounding error.
        """
        lowest = np.finfo(float).minexp  # -1021: 2^(lowest - 1) is the smallest normal number
        negligible = self.e_accel - np.finfo(float).nmant  # log2 of rounding beside the largest acceleration
        entries = [(f"Q[{j}]", v, self.e_force, j) for j, v in enumerate(Q)]
        entries += [] if C is None else [(f"C[{j}]", v, self.e_force, j) for j, v in enumerate(C)]
        entries += [(f"b[{i}]", v, int(e) + self.e_accel, None) for i, (v, e) in enumerate(zip(b, self.e_rows))]
        for name, value, unit, j in entries:
            if j is not None and value != 0 and inertia[j] > 0 and (
                    math.log2(abs(value)) - math.log2(inertia[j]) < negligible):
                continue
            if value != 0 and _exponent(abs(value)) - unit < lowest:
                raise ValueError(
                    f"`{name}` = {value:.3g} is too small to resolve beside the rest of the system: in units where "
                    "the largest acceleration (from `Q`, `C` and `b` over `M` and the rows of `A`) is about one, it "
                    "falls below the floating-point range (about 1e-308), and the solve would take it as zero. The "
                    "inputs span more orders of magnitude than one double-precision solve can hold: rescale the "
                    "units (masses, lengths, times) so that the forces and accelerations are closer in size"
                )

    def mass(self, M):
        return np.ldexp(M, -self.e_mass)

    def force(self, F):
        return np.ldexp(F, -self.e_force)

    def constraints(self, A, b):
        return np.ldexp(A, -self.e_rows[:, None]), np.ldexp(b, -(self.e_rows + self.e_accel))

    def nonideal(self, C):
        if C is None or not callable(C):
            return None if C is None else self.force(C)
        return lambda ideal: self.force(C(np.ldexp(ideal, self.e_force)))

    def acceleration_back(self, x, what):
        with np.errstate(over="ignore"):  # an overflow is refused by name just below
            return _finite_or_raise(np.ldexp(x, self.e_accel), what)

    def force_back(self, x, what):
        with np.errstate(over="ignore"):
            return _finite_or_raise(np.ldexp(x, self.e_force), what)


def scale_rows(A: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``A q'' = b`` with each row divided by the power of two that brings its largest entry into [1, 2).

    The rows of ``A`` and ``b`` may be stacked: ``A`` of shape (..., m, n) and
    ``b`` of shape (..., m). Dividing a row and its right-hand side by the same
    number changes neither the solution set nor ``A^T lam`` (only the
    multipliers, inversely), and a power of two changes no digit; but every
    rank and conditioning decision of :func:`solve` is relative to the largest
    row, so it must see rows of one size, as :func:`udwadia_kalaba` gives it
    (a constraint in metres beside one in astronomical units, or one row
    multiplied by 1e10, would otherwise hide the others). A zero row is kept.
    """
    size = np.abs(A).max(axis=-1, initial=0.0)
    if A.ndim == 2 and A.shape[0] <= _SMALL_ROWS:
        factors = _row_factors(size.tolist())
        if factors is not None:
            return A * factors[:, None], b * factors
    _, exponent = np.frexp(size)  # size = f 2^e with f in [0.5, 1)
    shift = np.where(size > 0, exponent - 1, 0)  # a zero (or non-finite) row stays as it is
    return np.ldexp(A, -shift[..., None]), np.ldexp(b, -shift)


_SMALL_ROWS = 16
"""Up to this many rows (one system), :func:`scale_rows` computes its factors on Python floats."""


def _row_factors(sizes: list) -> np.ndarray | None:
    """The powers of two ``2^-(e - 1)`` that :func:`scale_rows` divides by, as factors; None outside ``2^+-1000``.

    Multiplying by an exact power of two rounds exactly as ``ldexp`` does (once,
    to nearest), so the scaled rows are the same numbers; for a few rows this
    costs a third of the array route. A zero row keeps the factor one, as
    there; a non-finite or extreme size (the factor itself would overflow)
    is left to the array route.
    """
    factors = []
    for size in sizes:
        if size == 0.0:
            factors.append(1.0)
            continue
        if not math.isfinite(size):
            return None
        exponent = math.frexp(size)[1]
        if not -1000 < exponent < 1000:
            return None
        factors.append(math.ldexp(1.0, 1 - exponent))
    return np.array(factors)


def _exponent(x: float) -> int:
    """``e`` with ``2^(e-1) <= x < 2^e`` (0 for ``x = 0``)."""
    return math.frexp(float(x))[1] - 1 if x > 0 else 0


def _finite_or_raise(x: np.ndarray, what: str) -> np.ndarray:
    if not np.all(np.isfinite(x)):
        raise ValueError(
            f"{what} does not fit in the floating-point range (about 1.8e308): the inputs `M`, `Q`, "
            "`A`, `b` are finite, but the motion they describe is not. Rescale the units (for "
            "example kilograms to tonnes, or metres to kilometres) so that masses, forces and "
            "accelerations are closer in size"
        )
    return x


def _inconsistent(A, b, rank_rtol) -> InconsistentConstraintsError:
    """The inconsistency error in the caller's units: distance from ``b`` to the range of ``A``."""
    scales = np.abs(A).max(axis=1, initial=0.0)
    scales[scales == 0] = 1.0
    U, s, _ = _svd(A / scales[:, None])
    rank = int(np.count_nonzero(s > rank_rtol * s[0])) if s.size and s[0] > 0 else 0
    with np.errstate(over="ignore", invalid="ignore"):
        x = np.linalg.lstsq(A, b, rcond=None)[0]
        miss = _norm(A @ x - b)
    return InconsistentConstraintsError(
        f"the constraints `A q'' = b` have no solution: ||A q'' - b|| = {miss:.3e} "
        f"(relative {miss / max(_norm(b), np.finfo(float).tiny):.3e} to ||b||) for the best least-squares q''; "
        f"rows of `A` are dependent (rank {rank} of {A.shape[0]}) but `b` does not follow the same "
        "dependence. Check the constraint equations, or remove the contradicting rows",
        residual=float(miss),
    )


def solve(M, Q, A, b, C=None, *, rank_rtol=RANK_RTOL, consistency_rtol=CONSISTENCY_RTOL, factor=None, mass_unit=1.0,
          eigenvalues=None):
    """:func:`udwadia_kalaba` without input checks, for trusted callers.

    ``factor`` may hold a precomputed lower Cholesky factor of ``M`` (compiled
    models with a constant mass matrix pass it to skip the factorization).
    ``mass_unit`` is the scale ``M`` was divided by, used only to quote its
    eigenvalues in the caller's units in error messages. ``eigenvalues`` may
    hold ``eigvalsh(M)``, precomputed for a constant ``M`` whose Cholesky
    factorization failed (so it is not tried again): the semi-definiteness
    check is still made, on them.
    """
    if factor is None and eigenvalues is None:  # eigenvalues are passed for an M already found singular
        factor = cholesky_or_none(M, rank_rtol)
    if factor is not None:
        return _solve_factored(M, factor, Q, A, b, C, rank_rtol, consistency_rtol)
    return _solve_singular(M, Q, A, b, C, rank_rtol, consistency_rtol, mass_unit, eigenvalues)


def cholesky_or_none(M: np.ndarray, rank_rtol: float = RANK_RTOL) -> np.ndarray | None:
    """Lower Cholesky factor of ``M``, or None when ``M`` is numerically singular.

    The decision is made on ``M`` equilibrated to a unit diagonal,
    ``D M D`` with ``D = diag(M)^(-1/2)``, whose Cholesky factor is ``D L``:
    ``M`` counts as singular when a pivot ``L_ii^2 / M_ii`` is at most
    ``rank_rtol``. So the units of each coordinate do not matter: the Earth
    (6e24 kg) and a satellite (1e3 kg) in one model is a mass ratio, not a
    singular mass matrix (issue 22), while two coordinates that share one
    mass are singular at any scale.
    """
    L, info = lapack.dpotrf(M, lower=1, clean=1)
    if info != 0:
        return None
    n = M.shape[0]
    pivots = L.flat[:: n + 1] ** 2 / M.flat[:: n + 1]  # positive diagonal: dpotrf succeeded
    if not pivots.min() > rank_rtol:
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
        pseudo = _GramPseudoinverse.of(Bt, P[:, 1:])
        if pseudo is None:  # dependent or nearly dependent rows
            return _solve_null_space(M, Q, A, b, C, Aa, rank_rtol, consistency_rtol)
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
threshold (``cond(B)`` above about 1e3) the null-space route is used instead,
so the relative error stays near ``1e-16 / GRAM_RCOND = 1e-10``.
"""


class _GramPseudoinverse:
    """``B^+`` and ``I - B^+ B`` through a Cholesky factor of ``B B^T`` (independent rows).

    The common case, and about half the cost of an SVD for small systems.
    """

    __slots__ = ("Bt", "R")

    @classmethod
    def of(cls, Bt: np.ndarray, G: np.ndarray):
        """The pseudoinverse of ``B = Bt^T`` given ``G = B B^T``, or None when ``G`` is singular or ill-conditioned."""
        anorm = lapack.dlange("1", G)  # the exact 1-norm that dpocon's estimate is relative to
        R, info = lapack.dpotrf(G, lower=0, clean=1)
        if info != 0:
            return None
        rcond, info = lapack.dpocon(R, anorm)
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


def _solve_null_space(M, Q, A, b, C, Aa, rank_rtol, consistency_rtol) -> Motion:
    """Gauss's minimum in a basis of the virtual displacements, with the rank decided on ``A``.

    With the SVD ``A = U S V^T`` of rank ``r``, ``q'' = x_p + N z`` where
    ``x_p = V_r S_r^{-1} U_r^T b`` solves the independent rows and the columns of
    ``N = V_{r+1..n}`` span the virtual displacements (2005 paper, Eqs. 12-14).
    Minimizing Gauss's function ``(q'' - a)^T M (q'' - a)`` over ``z`` gives
    ``(N^T M N) z = N^T (Q - M x_p)`` and ``F^L = M q'' - Q`` (Eq. 8). The
    nonideal force is the ``M``-orthogonal projection of ``C`` onto the
    virtual displacements, ``F^C = M N (N^T M N)^{-1} N^T C`` (Eq. 11). Only
    ``M`` (positive definite here) is factorized, never ``A M^{-1} A^T``.
    """
    m, n = A.shape
    U, s, Vt = _svd(A, full=True)
    rank = int(np.count_nonzero(s > rank_rtol * s[0])) if s[0] > 0 else 0
    coef = U[:, :rank].T @ b
    miss = _norm(b - U[:, :rank] @ coef)  # = ||A q'' - b|| for the best q''
    scale = _norm(b) + _norm(Aa)
    if miss > consistency_rtol * scale:
        raise InconsistentConstraintsError(
            f"the constraints `A q'' = b` have no solution: ||A q'' - b|| = {miss:.3e} "
            f"(relative {miss / scale:.3e}) for the best least-squares q''; rows of `A` "
            f"are dependent (rank {rank} of {m}) but `b` does not follow the same dependence. "
            "Check the constraint equations, or remove the contradicting rows",
            residual=float(miss),
        )
    qdd = Vt[:rank].T @ (coef / s[:rank])
    N = Vt[rank:].T
    reduced = None
    if N.shape[1]:
        MN = M @ N
        reduced, _ = lapack.dpotrf(N.T @ MN, lower=1, clean=1)  # positive definite, as M is
        z, _ = lapack.dpotrs(reduced, N.T @ (Q - M @ qdd), lower=1)
        qdd = qdd + N @ z
    ideal = M @ qdd - Q
    if C is None:
        return Motion(qdd=qdd, impressed=Q, ideal=ideal, nonideal=np.zeros(n))
    c = np.asarray(C(ideal) if callable(C) else C, dtype=float)
    if reduced is None:  # no virtual displacement: C does no virtual work and F^C = 0
        return Motion(qdd=qdd, impressed=Q, ideal=ideal, nonideal=np.zeros(n))
    zc, _ = lapack.dpotrs(reduced, N.T @ c, lower=1)
    return Motion(qdd=qdd + N @ zc, impressed=Q, ideal=ideal, nonideal=MN @ zc)


def _check_semidefinite(M, rank_rtol, mass_unit=1.0, eig=None) -> np.ndarray:
    """Eigenvalues of ``M`` (``eig`` if given), or a ValueError when one is below ``-rank_rtol`` times the largest."""
    if eig is None:
        eig = np.linalg.eigvalsh(M)
    if eig[0] < -rank_rtol * max(-eig[0], eig[-1]):  # ascending: the largest magnitude is at an end
        raise ValueError(
            f"`M` must be positive semi-definite; its smallest eigenvalue is {eig[0] * mass_unit:.3e} "
            f"(largest {eig[-1] * mass_unit:.3e}; a negative eigenvalue counts as rounding only above "
            f"-{rank_rtol:g} times the largest in magnitude). A mass matrix comes from a kinetic energy, "
            "which is never negative: check the signs of masses and inertias"
        )
    return eig


def _solve_singular(M, Q, A, b, C, rank_rtol, consistency_rtol, mass_unit=1.0, eigenvalues=None) -> Motion:
    """Augmented form ``M + s A^+ A`` for a positive semi-definite ``M`` (``eigenvalues``: its, if known).

    The saddle-point system (:func:`_solve_bordered`) answers first where its
    condition number vouches that this route would find the same unique
    motion; everything else (nearly dependent rows, ``[M; A]`` near a loss of
    rank, non-finite values) is decided here.
    """
    eig = _check_semidefinite(M, rank_rtol, mass_unit, eigenvalues)
    top = max(eig[-1], 0.0)
    n = M.shape[0]
    scale = top if top > 0 else 1.0
    if A.shape[0]:
        motion = _solve_bordered(M, Q, A, b, C, scale, rank_rtol)
        if motion is not None:
            return motion
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
            f"the accelerations are not unique: `M` is singular (smallest eigenvalue {eig[0] * mass_unit:.3e}) "
            f"and `[M; A]` has rank {stacked_rank} < {n} columns, so some motion has neither "
            "inertia nor a constraint. Give every coordinate mass, or add a constraint that fixes it"
        )
    motion = _solve_factored(M_A, L, Q_b, A, b, C, rank_rtol, consistency_rtol)
    return Motion(qdd=motion.qdd, impressed=Q, ideal=motion.ideal, nonideal=motion.nonideal)


def _bordered_rcond(size: int, rank_rtol: float = RANK_RTOL) -> float:
    """Smallest reciprocal condition number (1-norm) of the saddle-point matrix that :func:`_solve_bordered` accepts.

    With ``K = [[M / s, A^T], [A, 0]]`` of order ``N = size`` (``s`` the
    largest eigenvalue of ``M``, rows of ``A`` scaled to unit size):

    * ``sigma_min(A) >= sigma_min(K)`` and ``sigma_max(A) <= ||K||`` (apply
      ``K`` to ``(0, u)``), so ``cond(A) <= cond(K)``: far below
      ``1 / rank_rtol``, the rows count as independent for the general route
      too, and ``A q'' = b`` is consistent;
    * for a unit ``v``, ``||K (v, 0)||^2 = ||M v / s||^2 + ||A v||^2`` is at
      most ``max(1, ||A||^2)`` times ``v^T (M + s A^+ A) v / s``, so the
      smallest eigenvalue of the general route's ``M_A = M + s A^+ A`` is at
      least ``s / cond_2(K)^2``, and each of its equilibrated Cholesky pivots
      (``cholesky_or_none``; its diagonal is at most ``2 s``) at least half of
      ``1 / cond_2(K)^2``.

    ``cond_2 <= N cond_1``, and LAPACK's estimate of ``cond_1`` can fall short
    of it (a factor of ten is allowed for that), so requiring
    ``rcond_1 > 10 N sqrt(2 rank_rtol)`` keeps every pivot above
    ``rank_rtol``: a matrix accepted here is one the general route accepts.
    """
    return 10.0 * size * math.sqrt(2.0 * rank_rtol)


def _solve_bordered(M, Q, A, b, C, scale, rank_rtol) -> Motion | None:
    """Singular ``M``: the saddle-point system ``M q'' = Q + F``, ``A q'' = b`` by one LU factorization.

    ``K = [[M / s, A^T], [A, 0]]`` is nonsingular exactly when ``A`` has full
    row rank and ``[M; A]`` full column rank (the encyclopedia article's
    condition for unique accelerations with a singular ``M``). Then its
    solution is the motion of the augmented form ``M + s A^+ A`` (Udwadia &
    Schutte 2010): both are the unique ``q''`` with ``A q'' = b`` whose
    constraint force ``M q'' - Q`` lies in the range of ``A^T``. The ideal
    force is ``F^L = M q'' - Q`` (the 2005 paper's Eq. 8 with ``C = 0``); a
    nonideal ``C`` (a callable one receives ``F^L``) adds the ``x_c`` of
    ``K (x_c, mu) = (C / s, 0)``, and ``F^C = M x_c`` (``C`` minus a force in
    the range of ``A^T``, whose virtual work is that of ``C``: Eq. 11).

    Returns None (the caller decides) unless the estimated reciprocal
    condition number of ``K`` exceeds :func:`_bordered_rcond` and ``q''`` and
    ``F^L`` are finite; both are known before ``C`` is called. For a handful of coordinates this is four LAPACK calls where
    the augmented form needs an SVD, a Cholesky factorization and ``dgglse``.
    """
    n, m = M.shape[0], A.shape[0]
    size = n + m
    K = np.zeros((size, size))
    K[:n, :n] = M / scale
    K[:n, n:] = A.T
    K[n:, :n] = A
    lu, piv, info = lapack.dgetrf(K)
    if info != 0:
        return None
    rcond, info = lapack.dgecon(lu, lapack.dlange("1", K))
    if info != 0 or not rcond > _bordered_rcond(size, rank_rtol):  # NaN in K fails here
        return None
    x, info = lapack.dgetrs(lu, piv, np.concatenate((Q / scale, b)))
    qdd = x[:n]
    ideal = M @ qdd - Q
    if info != 0 or not math.isfinite(qdd.sum() + ideal.sum()):
        return None
    if C is None:
        return Motion(qdd=qdd, impressed=Q, ideal=ideal, nonideal=np.zeros(n))
    # A callable C is called once, as on the general route (the contact solver's C records the holding
    # forces it computes), so from here on its answer is final, as it would be there.
    c = np.asarray(C(ideal) if callable(C) else C, dtype=float)
    xc, _ = lapack.dgetrs(lu, piv, np.concatenate((c / scale, np.zeros(m))))
    return Motion(qdd=qdd + xc[:n], impressed=Q, ideal=ideal, nonideal=M @ xc[:n])


def _svd(X: np.ndarray, full: bool = False, uv: bool = True):
    """SVD (thin unless ``full``) through LAPACK's gesdd, without numpy's per-call overhead.

    Returns ``(U, s, Vt)``, or the singular values ``s`` alone when ``uv`` is false.
    """
    U, s, Vt, info = lapack.dgesdd(X, compute_uv=int(uv), full_matrices=int(full))
    if info != 0:  # gesdd did not converge; gesvd is slower and more robust
        U, s, Vt, info = lapack.dgesvd(X, compute_uv=int(uv), full_matrices=int(full))
    if info != 0:
        raise ValueError(
            "the singular value decomposition of the constraint matrix did not converge; its entries "
            "span too many orders of magnitude: rescale the units of the coordinates"
        )
    return (U, s, Vt) if uv else s


def _norm(x: np.ndarray) -> float:
    """Euclidean norm that neither overflows nor underflows for finite entries."""
    top = float(np.abs(x).max(initial=0.0))
    if 1e-140 < top < 1e140:
        return math.sqrt(x @ x)
    if top == 0.0 or not math.isfinite(top):
        return top
    y = x / top
    return top * math.sqrt(y @ y)


def lagrange_multipliers(
    M, Q, A, b, *, rank_rtol: float = RANK_RTOL, consistency_rtol: float = CONSISTENCY_RTOL
) -> tuple[np.ndarray, np.ndarray]:
    """Accelerations and multipliers from the classic saddle-point system.

    Solves ``M q'' = Q + A^T lam``, ``A q'' = b`` (Beshaw 2014, Eqs. 9-17; the
    textbook chapter's Lagrange multipliers) as one linear system. This is the
    independent route that lessons and tests compare with
    :func:`udwadia_kalaba`; with ideal constraints ``A^T lam`` equals ``F^L``.
    It checks its input as :func:`udwadia_kalaba` does and refuses the same
    systems: an ``M`` that is not positive semi-definite, accelerations that
    are not unique, constraints that contradict each other.

    Parameters
    ----------
    M : array_like, shape (n, n)
        Symmetric positive semi-definite mass matrix with ``[M; A]`` of full
        column rank.
    Q : array_like, shape (n,)
        Impressed generalized force.
    A : array_like, shape (m, n)
        Constraint matrix (``m`` may be zero: then ``M q'' = Q``).
    b : array_like, shape (m,)
        Right-hand side of ``A q'' = b``.
    rank_rtol, consistency_rtol : float, optional
        As for :func:`udwadia_kalaba`.

    Returns
    -------
    qdd : ndarray, shape (n,)
        Generalized accelerations.
    lam : ndarray, shape (m,)
        Multipliers; the minimum-norm choice when rows of ``A`` are redundant
        (then the multipliers themselves are not unique, ``A^T lam`` is).

    Raises
    ------
    ValueError
        For bad input, or an ``M`` that is not positive semi-definite.
    NonUniqueAccelerationError
        When ``[M; A]`` lacks full column rank.
    InconsistentConstraintsError
        When ``A q'' = b`` has no solution.
    """
    M = check_mass_matrix(M)
    n = M.shape[0]
    Q = check_vector(Q, "Q", n)
    A, b = check_constraint_matrix(A, b, n)
    rank_rtol = check_tolerance(rank_rtol, "rank_rtol")
    consistency_rtol = check_tolerance(consistency_rtol, "consistency_rtol")
    units = _Units(M, Q, A, b, None)
    M_s, Q_s = units.mass(M), units.force(Q)
    A_s, b_s = units.constraints(A, b)
    eig = _check_semidefinite(M_s, rank_rtol, units.mass_unit)
    # Redundant rows make the bordered matrix singular: keep the independent combinations
    # A_r = S_r V_r^T of the rows (an SVD of A), solve the nonsingular system, map back.
    m = A.shape[0]
    if m:
        U, s, Vt = _svd(A_s, full=True)
        rank = int(np.count_nonzero(s > rank_rtol * s[0])) if s[0] > 0 else 0
    else:
        U, s, Vt, rank = np.zeros((0, 0)), np.zeros(0), np.eye(n), 0
    coef = U[:, :rank].T @ b_s
    miss = _norm(b_s - U[:, :rank] @ coef)
    mass_size = np.abs(M_s).max()  # zero for a massless system: then b alone sets the scale
    scale = _norm(b_s) + (s[0] * _norm(Q_s) / mass_size if rank and mass_size > 0 else 0.0)
    if miss > consistency_rtol * max(scale, np.finfo(float).tiny):
        raise _inconsistent(A, b, rank_rtol)
    # Unique accelerations: M is positive definite on the virtual displacements null(A).
    N = Vt[rank:].T
    if N.shape[1]:
        # equilibrated, as the Cholesky test of udwadia_kalaba: a mass ratio is not a missing mass
        reduced = N.T @ M_s @ N
        if cholesky_or_none((reduced + reduced.T) / 2, rank_rtol) is None:
            raise NonUniqueAccelerationError(
                f"the accelerations are not unique: `M` is singular (smallest eigenvalue "
                f"{eig[0] * units.mass_unit:.3e}) and `[M; A]` lacks full column rank, so some motion "
                "has neither inertia nor a constraint. Give every coordinate mass, or add a constraint "
                "that fixes it"
            )
    A_r = s[:rank, None] * Vt[:rank]
    K = np.block([[M_s, -A_r.T], [A_r, np.zeros((rank, rank))]])
    sol = np.linalg.solve(K, np.concatenate([Q_s, coef]))
    lam_s = U[:, :rank] @ sol[n:]
    qdd = units.acceleration_back(sol[:n], "qdd")
    with np.errstate(over="ignore"):
        lam = _finite_or_raise(np.ldexp(lam_s, units.e_force - units.e_rows), "a multiplier")
    return qdd, lam


def virtual_displacements(A, *, rank_rtol: float = RANK_RTOL) -> np.ndarray:
    """Orthonormal basis of the virtual displacements ``{v : A v = 0}``.

    Parameters
    ----------
    A : array_like, shape (m, n)
        Constraint matrix.
    rank_rtol : float, optional
        Relative tolerance on the singular values of ``A`` (each row first
        scaled to unit size by a power of two), in (0, 1).

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
    rank_rtol = check_tolerance(rank_rtol, "rank_rtol")
    if A.shape[0] == 0:
        return np.eye(A.shape[1])
    rows = np.array([_exponent(v) for v in np.abs(A).max(axis=1, initial=0.0)], dtype=int)
    return null_space(np.ldexp(A, -rows[:, None]), rcond=rank_rtol)


# -- kernels for compiled models ------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class BatchSolution:
    """What :func:`solve_batch` returns for a stack of ``B`` systems.

    Attributes
    ----------
    qdd : ndarray, shape (B, n)
        Accelerations with ideal constraints (Eq. 7 with ``C = 0``).
    ideal : ndarray, shape (B, n)
        ``F^L = A^T lam`` (Eq. 10).
    multipliers : ndarray, shape (B, m)
        ``lam = (A M^{-1} A^T)^{-1} (b - A a)``.
    acceleration, force : ndarray, shape (B, n, k)
        For each extra column ``c``: the acceleration ``M^{-1} F^C`` it adds and
        its nonideal force ``F^C = c - A^T (A M^{-1} A^T)^{-1} A M^{-1} c`` (Eq. 11).
    ok : ndarray of bool, shape (B,)
        False where the Gram matrix is singular or ill conditioned (reciprocal
        condition number at most :data:`GRAM_RCOND`): those members must be
        solved one by one with :func:`solve`; their entries here are meaningless.
    """

    qdd: np.ndarray
    ideal: np.ndarray
    multipliers: np.ndarray
    acceleration: np.ndarray
    force: np.ndarray
    ok: np.ndarray


def solve_batch(inverse: Callable[[np.ndarray], np.ndarray], Q, A, b, extra=None) -> BatchSolution:
    """Eq. (7) for a stack of systems at once, through the Gram matrix ``A M^{-1} A^T``.

    Every member is the system of :func:`udwadia_kalaba` with a positive
    definite ``M`` and independent rows: ``a = M^{-1} Q``,
    ``lam = (A M^{-1} A^T)^{-1} (b - A a)``, ``q'' = a + M^{-1} A^T lam`` and
    ``F^L = A^T lam``, the same vectors as Eqs. (7) and (10) (there
    ``M^{1/2} B^+ = A^T (B B^T)^{-1}`` for independent rows). This is the
    members-first face of :class:`StackedGram`, which does the work.

    Parameters
    ----------
    inverse : callable
        Maps an array of shape (B, n, k) to ``M^{-1}`` times it, member by
        member (a division for a diagonal ``M``, products with a stored factor
        for a constant one).
    Q : ndarray, shape (B, n)
    A : ndarray, shape (B, m, n)
    b : ndarray, shape (B, m)
    extra : ndarray, shape (B, n, k), optional
        Nonideal force directions whose constrained responses are wanted.

    Returns
    -------
    BatchSolution
    """
    B, n = Q.shape
    k = 0 if extra is None else extra.shape[2]

    def mass_solve(X):  # (n, c, B) -> (n, c, B) through the members-first `inverse`
        return np.ascontiguousarray(inverse(X.transpose(2, 0, 1)).transpose(1, 2, 0))

    gram = StackedGram(mass_solve, np.asarray(Q, dtype=float).T, np.asarray(A, dtype=float).transpose(1, 2, 0),
                       np.asarray(b, dtype=float).T)
    ideal = gram.ideal()
    acceleration, force = np.zeros((B, n, k)), np.zeros((B, n, k))
    for j in range(k):
        response, constrained = gram.respond(np.ascontiguousarray(extra[:, :, j].T))
        acceleration[:, :, j], force[:, :, j] = response.T, constrained.T
    return BatchSolution(gram.qdd.T, ideal.T, gram.multipliers.T, acceleration, force, gram.ok)


def _copy_into(out: np.ndarray, value: np.ndarray) -> np.ndarray:
    """``value`` copied into ``out``, which is returned."""
    out[...] = value
    return out


TINY_GRAM = 1e-290
"""A one-row Gram matrix ``a M^{-1} a^T`` below this is not trusted by :class:`StackedGram` (its products may
have lost digits to underflow); such members go to :func:`solve`, which scales the row first."""


def _dot_pair(u: np.ndarray, v: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(sum_j u[j] v[j], sum_j u[j] w[j])`` over the first axis, the same sums as :func:`_dot` gives each.

    One work array serves both (a one-row Gram matrix and ``A a`` at every integrator stage: each
    temporary of a stack's length costs as much as an operation). ``w`` may be (n, 1) (it broadcasts).
    """
    if u.shape[0] > 8:
        return _dot(u, v), _dot(u, w)
    first, second = u[0] * v[0], u[0] * w[0]
    if u.shape[0] > 1:
        term = np.empty_like(first)
        for j in range(1, u.shape[0]):  # accumulated in place, in the order _dot adds
            first += np.multiply(u[j], v[j], out=term)
            second += np.multiply(u[j], w[j], out=term)
    return first, second


def _dot(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``sum_j u[j] v[j]`` over the first axis as row operations (a reduction over a short axis costs more)."""
    if u.shape[0] > 8:
        return np.einsum("j...,j...->...", u, v)
    out = u[0] * v[0]
    if u.shape[0] == 2:
        out += u[1] * v[1]
    elif u.shape[0] > 2:
        term = np.empty_like(out)
        for j in range(1, u.shape[0]):  # accumulated in place: the same sums, fewer temporaries
            out += np.multiply(u[j], v[j], out=term)
    return out


class StackedGram:
    """Eq. (7) of Udwadia & Kalaba (1992) for a stack of ``G`` systems, members along the last axis.

    ``a = M^{-1} Q``, ``lam = (A M^{-1} A^T)^{-1} (b - A a)``,
    ``q'' = a + M^{-1} A^T lam`` and ``F^L = A^T lam`` (Eq. 10), valid for a
    positive definite ``M`` and independent rows. With the members along the
    last axis every operation is one numpy call on rows of length ``G``; a
    Gram matrix of one or two rows is solved in closed form, larger ones by
    stacked LAPACK calls. :meth:`respond` gives the constrained response to a
    nonideal force (Udwadia, Kalaba & Fan 2005, Eq. 11) with the same Gram
    matrix, so a force that depends on ``F^L`` (kinetic friction) is applied
    after it.

    Parameters
    ----------
    mass_solve : callable
        ``X -> M^{-1} X`` for ``X`` of shape (n, c, G), member by member.
    Q : ndarray, shape (n, G)
    A : ndarray, shape (r, n, G)
    b : ndarray, shape (r, G)
    usable : ndarray of bool, shape (G,), optional
        Where ``mass_solve`` holds (it returns NaN for the other members);
        by default read off the finiteness of its result.
    out : ndarray, shape (n, G), optional
        Where to write ``q''`` (a stepping integrator's derivative rows); a new array by default.
    free : ndarray, shape (n, G) or (n, 1), optional
        ``a = M^{-1} Q`` when the caller has it already (a stepping integrator
        whose ``M`` and ``Q`` depend on the parameters alone computes it once
        per run, not once per stage); computed here by default.

    Attributes
    ----------
    qdd : ndarray, shape (n, G)
    multipliers : ndarray, shape (r, G)
    ok : ndarray of bool, shape (G,)
        False where ``M^{-1}`` gave a non-finite number or the Gram matrix is
        singular, ill conditioned (reciprocal condition number at most
        :data:`GRAM_RCOND`) or below :data:`TINY_GRAM` (one row): those members
        must be solved one by one with :func:`solve`; their entries are meaningless.
    """

    def __init__(self, mass_solve: Callable[[np.ndarray], np.ndarray], Q: np.ndarray, A: np.ndarray, b: np.ndarray,
                 usable: np.ndarray | None = None, out: np.ndarray | None = None, free: np.ndarray | None = None):
        self.mass_solve, self.A = mass_solve, A
        r, _, G = A.shape
        a, self.XA = self._mass_columns(Q, A, usable, free)
        self.free = a
        solved = self._solved
        if r == 0:
            self.ok, self.multipliers = solved & np.isfinite(a).all(axis=0), np.zeros((0, G))
            self.qdd = a if out is None and free is None else _copy_into(np.empty_like(a) if out is None else out, a)
            self._gram_solve = lambda rhs: rhs  # noqa: E731
            return
        if r == 1:  # one row (a pendulum): a handful of row operations, no LAPACK and no temporaries to stack
            row, x = A[0], self.XA[:, 0]
            g, lam = _dot_pair(row, x, a)
            # The check on the whole stack at once (a NaN fails the first test, an inf the second); member by
            # member only when some member fails it
            # (array methods: a reduction's keywords cost more than a short stack's reduction itself)
            if G == 0 or (g.min() > TINY_GRAM and g.max() < np.inf):
                ok = solved
            else:
                ok = np.isfinite(g) & (g > TINY_GRAM)
                g = np.where(ok, g, 1.0)
                ok = ok & solved
            np.divide(np.subtract(b[0], lam, out=lam), g, out=lam)  # (b - A a) / g, in place
            qdd = np.multiply(x, lam, out=out) if a.shape == x.shape else x * lam  # (a (n, 1) broadcasts)
            qdd += a  # q'' = a + M^{-1} A^T lam, in the rows given
            self.ok, self.multipliers, self.qdd = ok, lam[None, :], qdd
            self._gram_solve = lambda rhs: rhs / g  # noqa: E731
            return
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            if r == 2:  # closed forms, cheaper than a LAPACK call per member
                g00, g11 = _dot(A[0], self.XA[:, 0]), _dot(A[1], self.XA[:, 1])
                g10 = _dot(A[1], self.XA[:, 0])
                top = (g00 + g11) / 2 + np.hypot((g00 - g11) / 2, g10)  # largest eigenvalue (as eigvalsh)
                low = (g00 * g11 - g10 * g10) / top  # smallest = determinant / largest, without cancellation
                ok = np.isfinite(top) & np.isfinite(low) & (low > GRAM_RCOND * top)
                det = np.where(ok, g00 * g11 - g10 * g10, 1.0)

                def two(rhs):
                    out = np.empty_like(rhs)
                    out[0] = (g11 * rhs[0] - g10 * rhs[1]) / det
                    out[1] = (g00 * rhs[1] - g10 * rhs[0]) / det
                    return out

                self._gram_solve = two
            else:
                gram = A.transpose(2, 0, 1) @ self.XA.transpose(2, 0, 1)  # (G, r, r)
                finite = np.isfinite(gram).all(axis=(1, 2))  # an overflowing member must not stop the others
                eig = np.linalg.eigvalsh(np.where(finite[:, None, None], gram, np.eye(r)))
                ok = finite & (eig[:, 0] > GRAM_RCOND * eig[:, -1])
                gram = np.where(ok[:, None, None], gram, np.eye(r))
                self._gram_solve = lambda rhs: np.linalg.solve(gram, rhs.T[:, :, None])[:, :, 0].T  # noqa: E731
            self.ok = ok & solved
            self.multipliers = self._gram_solve(b - self._rows_dot(a))
            self.qdd = np.add(a, self._combine(self.XA, self.multipliers), out=out)

    def _mass_columns(self, Q: np.ndarray, A: np.ndarray, usable, free=None) -> tuple[np.ndarray, np.ndarray]:
        """``a = M^{-1} Q`` (n, G) and ``M^{-1} A^T`` (n, r, G); sets ``_solved``, where ``M^{-1}`` holds.

        An elementwise solver (a diagonal ``M``: ``mass_solve.elementwise``
        true) takes the two apart, which spares stacking ``[Q, A^T]``, and
        ``a`` is taken from ``free`` when given; any other takes them in one
        call (one factorization per member).
        """
        r = A.shape[0]
        if getattr(self.mass_solve, "elementwise", False):
            column = self.mass_solve.column  # (n, G) -> (n, G): no third axis to broadcast over
            a = column(Q) if free is None else free
            XA = column(A[0])[:, None, :] if r == 1 else self.mass_solve(A.transpose(1, 0, 2))
        elif r and free is not None:
            a, XA = free, self.mass_solve(A.transpose(1, 0, 2))
        elif r:
            X = self.mass_solve(np.concatenate([Q[:, None, :], A.transpose(1, 0, 2)], axis=1))  # M^{-1} [Q, A^T]
            a, XA = X[:, 0], X[:, 1:]
        else:
            a = self.mass_solve(Q[:, None, :])[:, 0] if free is None else free
            XA = np.zeros((Q.shape[0], 0, Q.shape[1]))
        # `usable`: where the caller's M^{-1} holds (the others come back as NaN); else read off the columns
        if usable is None:
            usable = np.isfinite(a).all(axis=0) & np.isfinite(XA).all(axis=(0, 1))
        self._solved = usable
        if not usable.all():  # those members go to the one-by-one route (ok False)
            a, XA = np.where(usable, a, 0.0), np.where(usable, XA, 0.0)
        return a, XA

    def _rows_dot(self, v: np.ndarray) -> np.ndarray:
        """``A v`` for ``v`` of shape (n, G): shape (r, G)."""
        if self.A.shape[0] > 8:
            return np.einsum("rng,ng->rg", self.A, v)
        out = np.empty((self.A.shape[0], v.shape[1]))
        for i, row in enumerate(self.A):
            out[i] = _dot(row, v)
        return out

    @staticmethod
    def _combine(columns: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """``sum_j columns[:, j] weights[j]`` for columns (n, r, G) and weights (r, G): shape (n, G)."""
        if columns.shape[1] > 8 or not columns.shape[1]:
            return np.einsum("nrg,rg->ng", columns, weights)
        out = columns[:, 0] * weights[0]
        for j in range(1, columns.shape[1]):
            out = out + columns[:, j] * weights[j]
        return out

    def ideal(self, rows: slice = slice(None)) -> np.ndarray:
        """``A_K^T lam_K`` over the rows ``K`` (all by default): ``F^L`` (Eq. 10), shape (n, G)."""
        A, lam = self.A[rows], self.multipliers[rows]
        return self._combine(A.transpose(1, 0, 2), lam)

    def respond(self, force: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The acceleration ``M^{-1} F^C`` a nonideal force adds, and ``F^C`` itself (Eq. 11), shapes (n, G).

        ``F^C = c - A^T (A M^{-1} A^T)^{-1} A M^{-1} c`` for the force ``c`` of shape (n, G).
        """
        response = self.mass_solve(force[:, None, :])[:, 0]
        if not self.A.shape[0]:
            return response, force
        mu = self._gram_solve(self._rows_dot(response))
        return response - self._combine(self.XA, mu), force - self._combine(self.A.transpose(1, 0, 2), mu)
