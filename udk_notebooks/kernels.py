"""Fast routes of the Udwadia-Kalaba equation for a constant diagonal mass matrix.

A compiled model whose mass matrix ``M = diag(d)`` depends on parameters only
(point masses and principal inertias in Cartesian coordinates: the pendulum
chains, the rolling disk) knows at compile time which entries of ``Q``, ``A``,
``b`` and ``C`` can be nonzero. This module turns that pattern into a solver
that does only the arithmetic the pattern needs. With ``M = diag(d)`` the
matrix ``B = A M^{-1/2}`` of Eq. (7) (Udwadia, Kalaba & Fan 2005) has the Gram
matrix ``G = B B^T = A D^{-1} A^T``, and for independent rows Eqs. (7)-(11)
become::

    a = D^{-1} Q,   lam = G^{-1} (b - A a),   F^L = A^T lam          (Eq. 10)
    F^C = C - A^T G^{-1} A D^{-1} C                                   (Eq. 11)
    q'' = a + D^{-1} (F^L + F^C)                                      (Eqs. 7, 8)

which are the vectors :func:`udk_notebooks.core.solve` returns through the
same Gram matrix (there ``B^+ = B^T G^{-1}``). Two kernels evaluate them:

* :class:`ScalarKernel`, for small systems: straight-line Python source
  generated from the pattern (Python floats, no numpy call until the four
  output vectors), with an ``L D L^T`` factorization of ``G`` unrolled over its
  nonzero pattern and fill-in;
* :class:`BandKernel`, for larger systems whose ``G`` is banded (the
  Cartesian chain: ``G`` is tridiagonal): the products ``A D^{-1} A^T`` over
  the nonzeros only, and LAPACK's banded Cholesky (``dpbtrf``/``dpbtrs``), so
  the cost grows like ``n`` and not ``n^3``.

A third, :class:`ContactKernel`, is the same idea for friction contacts in
given stick/slip modes (the moded route of
:meth:`~udk_notebooks.compiled.CompiledModel.solve_contacts`): stick rows
joined to ``A``, the normal forces of sliding contacts solved with the same
factor of ``G`` (or ``|F^L|`` for ``CoulombFriction(normal=None)``), the
holding forces moved to the nonideal term.

None decides ranks. Each returns None, and the caller takes the general
route with its rank decisions and error messages, unless it can vouch for
its answer: all pivots of ``G`` positive, and the reciprocal condition
number of ``G`` above :data:`udk_notebooks.core.GRAM_RCOND`, which is the
general route's own test for using the Gram matrix. The condition number is
bounded from the factor ``G = U^T U`` through its comparison matrix
``<U>`` (absolute diagonal, minus the absolute off-diagonal entries):
``|G^{-1}| <= <U>^{-1} <U>^{-T}`` entrywise, so
``||G^{-1}||_1 <= max(<U>^{-1} <U>^{-T} e)`` (as LAPACK's ``dptcon`` does
for tridiagonal matrices). Where every row of ``A`` has a column of its
own (nonzero in no other row: the coordinates of a body that one pin fixes),
``G`` is at least the diagonal matrix of those columns' ``w_j A_kj^2``, so
``||G^{-1}||_1 <= sqrt(m) / lambda_min(G) <= sqrt(m) / min_k w_j A_kj^2``; this
bound, a constant of the parameters when those entries are, is tried first
and the comparison matrix only where it does not decide (for the Cartesian
double pendulum it always decides: a quarter of its kernel's arithmetic saved).
Neither bound understates the condition
number, so a Gram matrix the kernel accepts is one the general route accepts
as well (where it prefers ``dgglse``, the two agree to rounding); a
pessimistic bound only sends a system back to it. The tests compare both
kernels with :func:`udk_notebooks.core.solve` to 1e-12 (``tests/test_kernels.py``).
"""

from __future__ import annotations

import math
import re
from typing import Callable

import numpy as np

from ._lapack import lapack  # not scipy.linalg: its import costs a cold start 0.15 s
from .core import GRAM_RCOND, Motion

__all__ = ["BandKernel", "ScalarKernel", "SingularKernel", "diagonal_kernel", "singular_kernel"]

SCALAR_MAX_TERMS = 450
"""Largest generated kernel (counted in products) run as Python float arithmetic; larger systems
use :class:`BandKernel` when their Gram matrix is banded. Near this size both cost about the same
(``benchmarks/per_call.py --kernels``)."""

SCALAR_MAX_ROWS = 64
"""Most constraint rows for which a scalar kernel is generated at all."""

_BOUND = 1.0 / GRAM_RCOND
"""Largest accepted ``||G||_1 ||G^{-1}||_1`` (its bound, module docstring)."""

BAND_MAX_WIDTH = 8
"""Widest half-bandwidth of ``G`` (in the constraint order of the model) that :class:`BandKernel` takes."""


class _Pattern:
    """Positions of the nonzero entries of ``Q, A, b, C`` in the compiled value list.

    ``nonzero`` indexes the concatenation ``Q (n), A (m x n, row by row), b (m), C (n)``
    as :class:`~udk_notebooks.compiled.CompiledModel` lays it out for a constant mass matrix.
    """

    def __init__(self, n: int, m: int, nonzero):
        self.n, self.m = n, m
        where = {int(i): k for k, i in enumerate(nonzero)}
        self.Q = [where.get(j) for j in range(n)]
        self.A = [[where.get(n + k * n + j) for j in range(n)] for k in range(m)]
        self.b = [where.get(n + m * n + k) for k in range(m)]
        self.C = [where.get(n + m * n + m + j) for j in range(n)]
        self.size = len(where)
        self.cols = [[j for j in range(n) if self.A[k][j] is not None] for k in range(m)]
        self.rows = [[k for k in range(m) if self.A[k][j] is not None] for j in range(n)]
        # G[k][l] can be nonzero when rows k and l share a column.
        self.gram = {(k, l) for j in range(n) for k in self.rows[j] for l in self.rows[j] if k >= l}

    def bandwidth(self) -> int:
        return max((k - l for k, l in self.gram), default=0)


class _Factors:
    """What a kernel needs of ``M = diag(d)`` for one parameter vector, kept for the last one.

    ``derive(1/d)`` gives it; None means that the general route must decide (a
    singular or non-finite ``M``). The key and the value are replaced together
    (one tuple), so a caller never pairs one parameter vector with another's data.
    """

    def __init__(self, mass: Callable, derive: Callable):
        self.mass, self.derive = mass, derive
        self.entry = (None, None)

    def __call__(self, p: np.ndarray):
        key = p.tobytes()
        entry = self.entry
        if key != entry[0]:
            d = np.diagonal(np.asarray(self.mass(p), dtype=float)).copy()
            # The test of core.cholesky_or_none: for a diagonal M the equilibrated pivots are all one, so M is
            # singular only with an entry that is not positive; that case (and any non-finite entry) is the
            # general route's.
            ok = bool(np.all(np.isfinite(d))) and d.min() > 0
            entry = self.entry = (key, self.derive(1.0 / d) if ok else None)
        return entry[1]


def _sum(terms) -> str:
    return " + ".join(terms) if terms else "0.0"


def _generate(pattern: _Pattern, has_nonideal: bool, qdd_only: bool = False) -> tuple[str, int]:
    """Python source of the scalar kernel and its number of products.

    ``kernel(e, w, corr, bound)`` returns ``q''`` and the three force terms
    (4n values), or with ``qdd_only`` just ``q''`` (n values) after testing
    that they are finite; None where the general route must decide.
    """
    body, products, qdd = _kernel_body(pattern, has_nonideal, qdd_only=qdd_only)
    head = [
        "def kernel(e, w, corr, bound):",
        # Unpacking a list into names is one step; indexing it entry by entry costs one step each.
        f"    {', '.join(f'e{k}' for k in range(pattern.size))}, = e",
        f"    {', '.join(f'w{j}' for j in range(pattern.n))}, = w",
    ]
    tail = []
    if qdd_only:
        tail = [f"    if not isfinite({' + '.join(qdd)}):", "        return None", f"    return [{', '.join(qdd)}]"]
    return "\n".join(head + body + tail) + "\n", products


def _exclusive_columns(P: _Pattern) -> list[tuple[int, int]] | None:
    """Per row ``k`` of ``A`` a column ``j`` nonzero in that row alone, as ``(k, j)`` pairs; None if a row has none.

    Then ``G = sum_j w_j a_j a_j^T`` (``a_j`` the columns of ``A``, each term
    positive semi-definite) is at least ``diag(w_j A_kj^2)`` of those columns,
    so ``lambda_min(G) >= min_k w_j A_kj^2`` (module docstring).
    """
    pairs = []
    for k in range(P.m):
        column = next((j for j in P.cols[k] if P.rows[j] == [k]), None)
        if column is None:
            return None
        pairs.append((k, column))
    return pairs


def _kernel_body(pattern: _Pattern, has_nonideal: bool, qdd_only: bool = False,
                 correction: bool = True) -> tuple[list[str], int, list[str]]:
    """The statements of the scalar kernel (four-space indented), its products, and the names of ``q''``.

    The statements read the entries ``e0, e1, ...``, the mass factors ``w0,
    w1, ...``, ``bound`` and (with ``correction``) ``corr``; ``return None``
    declines. With ``qdd_only`` they end by assigning ``q''`` to ``qdd0, ...``
    (the names returned); else with the return of the 4n outputs.
    """
    n, m, P = pattern.n, pattern.m, pattern
    out, products = [], 0

    def e(k):
        return f"e{k}" if k is not None else None

    emit = out.append
    for j in range(n):
        if P.Q[j] is not None:
            emit(f"    a{j} = {e(P.Q[j])} * w{j}")
            products += 1
    for k in range(m):
        for j in P.cols[k]:
            emit(f"    W{k}_{j} = A{k}_{j} * w{j}")
            products += 1
    gram = {}
    for k in range(m):
        for l in range(k + 1):
            shared = [j for j in P.cols[k] if P.A[l][j] is not None]
            if shared:
                gram[k, l] = f"G{k}_{l}"
                emit(f"    G{k}_{l} = {_sum([f'A{k}_{j} * W{l}_{j}' for j in shared])}")
                products += len(shared)
    for k in range(m):
        terms = [f"A{k}_{j} * a{j}" for j in P.cols[k] if P.Q[j] is not None]
        products += len(terms)
        right = e(P.b[k]) or "0.0"
        emit(f"    r{k} = {right}" + (f" - ({_sum(terms)})" if terms else ""))
    if correction:
        emit("    if corr is not None:")
        for k in range(m):
            emit(f"        r{k} += corr[{k}]")
    # L D L^T of G over its pattern with fill-in; LD[i, j] = L[i, j] * D[j].
    lower = set()
    norm_rows = []  # row sums of |G| (its diagonal is positive where the pivots are)
    for k in range(m):
        norm_rows.append(_sum([f"{'' if k == l else 'a'}{gram[max(k, l), min(k, l)]}"
                               for l in range(m) if (max(k, l), min(k, l)) in gram]))
    for j in range(m):
        if (j, j) not in gram:
            raise ValueError(f"row {j} of `A` is identically zero: no kernel (the general route decides)")
        terms = [f"L{j}_{k} * LD{j}_{k}" for k in range(j) if (j, k) in lower]
        products += len(terms)
        emit(f"    D{j} = G{j}_{j}" + (f" - ({_sum(terms)})" if terms else ""))
        emit(f"    if not D{j} > 0.0:")
        emit("        return None")
        for i in range(j + 1, m):
            shared = [k for k in range(j) if (i, k) in lower and (j, k) in lower]
            if (i, j) in gram or shared:
                base = gram.get((i, j), "0.0")
                terms = [f"L{i}_{k} * LD{j}_{k}" for k in shared]
                products += len(terms) + 2
                emit(f"    LD{i}_{j} = {base}" + (f" - ({_sum(terms)})" if terms else ""))
                emit(f"    L{i}_{j} = LD{i}_{j} / D{j}")
                lower.add((i, j))

    def solve(prefix, right):
        nonlocal products
        for i in range(m):
            terms = [f"L{i}_{k} * {prefix}y{k}" for k in range(i) if (i, k) in lower]
            products += len(terms)
            emit(f"    {prefix}y{i} = {right(i)}" + (f" - ({_sum(terms)})" if terms else ""))
        for i in reversed(range(m)):
            terms = [f"L{k}_{i} * {prefix}{k}" for k in range(i + 1, m) if (k, i) in lower]
            products += len(terms) + 1
            emit(f"    {prefix}{i} = {prefix}y{i} / D{i}" + (f" - ({_sum(terms)})" if terms else ""))

    # ||G||_1 (the largest row sum of |G|) times a bound on ||G^{-1}||_1 (module docstring): first the
    # one from exclusive columns where every row has one (a constant of the parameters, when the
    # entries are), then, where that one does not decide, the one through the comparison matrix.
    for (k, l), name in gram.items():
        if k != l:
            emit(f"    a{name} = abs({name})")
    emit(f"    normG = max({', '.join(norm_rows)}, 0.0)")
    exclusive = _exclusive_columns(P)
    indent = "    "
    if exclusive is not None:
        lows = [f"A{k}_{j} * A{k}_{j} * w{j}" for k, j in exclusive]
        emit("    lamlow = " + (f"min({', '.join(lows)})" if len(lows) > 1 else lows[0]))
        emit(f"    if not normG * {math.nextafter(math.sqrt(m), math.inf)!r} < bound * lamlow:")
        indent = "        "
    for i, k in sorted(lower):
        emit(f"{indent}aL{i}_{k} = abs(L{i}_{k})")
    for i in range(m):
        terms = [f"aL{i}_{k} * fy{k}" for k in range(i) if (i, k) in lower]
        emit(f"{indent}fy{i} = 1.0" + (f" + {_sum(terms)}" if terms else ""))
    for i in reversed(range(m)):
        terms = [f"aL{k}_{i} * f{k}" for k in range(i + 1, m) if (k, i) in lower]
        emit(f"{indent}f{i} = fy{i} / D{i}" + (f" + {_sum(terms)}" if terms else ""))
    products += 2 * len(lower) + m
    emit(f"{indent}if not max({', '.join(f'f{i}' for i in range(m))}, 0.0) * normG < bound:")
    emit(f"{indent}    return None")
    solve("lam", lambda i: f"r{i}")
    ideal = []
    for j in range(n):
        terms = [f"A{k}_{j} * lam{k}" for k in P.rows[j]]
        products += len(terms)
        ideal.append(_sum(terms))
        if terms:
            emit(f"    F{j} = {ideal[-1]}")
    qdd = []
    for j in range(n):
        parts = ([f"a{j}"] if P.Q[j] is not None else []) + ([f"F{j} * w{j}"] if P.rows[j] else [])
        qdd.append(_sum(parts))
    impressed = [e(P.Q[j]) or "0.0" for j in range(n)]
    ideal = [f"F{j}" if P.rows[j] else "0.0" for j in range(n)]
    nonideal = ["0.0"] * n
    if has_nonideal and any(c is not None for c in P.C):
        for j in range(n):
            if P.C[j] is not None:
                emit(f"    c{j} = {e(P.C[j])}")
        solve("mu", lambda i: _sum([f"W{i}_{j} * c{j}" for j in P.cols[i] if P.C[j] is not None]))
        for j in range(n):
            terms = [f"A{k}_{j} * mu{k}" for k in P.rows[j]]
            products += len(terms) + 1
            if P.C[j] is None and not terms:
                continue
            emit(f"    N{j} = {e(P.C[j]) or '0.0'}" + (f" - ({_sum(terms)})" if terms else ""))
            nonideal[j] = f"N{j}"
            qdd[j] = f"{qdd[j]} + N{j} * w{j}"
    names = [f"qdd{j}" for j in range(n)]
    if qdd_only:
        for name, value in zip(names, qdd):
            emit(f"    {name} = {value}")
    else:
        emit(f"    return [{', '.join(qdd + impressed + ideal + nonideal)}]")
    # The entries of A by their place in the value list (named A{k}_{j} above for legibility).
    body = [re.sub(r"\bA(\d+)_(\d+)\b", lambda match: e(P.A[int(match[1])][int(match[2])]), line) for line in out]
    return body, products, names


class ScalarKernel:
    """Eqs. (7)-(11) for a constant diagonal ``M`` as generated straight-line Python float arithmetic.

    Parameters
    ----------
    pattern : _Pattern
        Nonzero positions of ``Q, A, b, C`` in the compiled value list.
    mass : callable
        ``p -> M`` (shape (n, n), diagonal).
    has_nonideal : bool
        Whether the model has a nonideal vector ``C``.
    """

    def __init__(self, pattern: _Pattern, mass, has_nonideal: bool):
        self.n = pattern.n
        self.pattern, self.has_nonideal = pattern, has_nonideal
        self.source, self.products = _generate(pattern, has_nonideal)
        self._kernel = _compile_kernel(self.source)
        self._qdd_kernel = None  # q'' alone (qdd_solver), generated on first use
        self._factors = _Factors(mass, lambda w: w.tolist())

    def __call__(self, values, p: np.ndarray, correction=None) -> Motion | None:
        """The motion from the compiled value list, or None when the general route must decide."""
        w = self._factors(p)
        if w is None:
            return None
        corr = None if correction is None else np.asarray(correction, dtype=float).tolist()
        out = self._kernel(values, w, corr, _BOUND)
        # A sum of the outputs is finite only when each is (an overflow of the sum merely sends a
        # finite answer to the general route).
        if out is None or not math.isfinite(sum(out)):
            return None
        rows = np.fromiter(out, float, 4 * self.n).reshape(4, self.n)  # fromiter: a third cheaper than array
        return Motion(rows[0], rows[1], rows[2], rows[3])

    def qdd_solver(self, p: np.ndarray, correction=None) -> Callable | None:
        """``values -> q''`` of :meth:`__call__` alone (a list, or None where the general route must decide).

        For an integrator's right-hand side: the kernel's statements up to
        ``q''`` (the force terms are computed on the way, a few products each,
        but neither collected nor wrapped into a Motion) and the same tests.
        The finiteness test looks at ``q''`` only, which decides the same
        states as the test of all 4n outputs: with the mass factors ``w = 1/d``
        finite and positive, ``q''_j = (Q_j + F_j) w_j`` is finite exactly when
        the impressed and constraint forces are (an overflow of a product only
        sends a finite answer to the general route). None when ``M`` itself
        goes the general route. The mass factors of ``p`` and the correction are
        bound once, for a rate called thousands of times with the same parameters.
        """
        bound = self._qdd_kernel_and_factors(p)
        if bound is None:
            return None
        kernel, w = bound
        corr = None if correction is None else np.asarray(correction, dtype=float).tolist()

        def solve(values):
            return kernel(values, w, corr, _BOUND)

        return solve

    def corrected_qdd_solver(self, p: np.ndarray) -> Callable | None:
        """``(values, correction) -> q''`` of :meth:`qdd_solver`, the correction passed at each call.

        For a stabilized run's right-hand side, whose correction of ``b``
        changes with the state while ``p`` does not: the mass factors and the
        generated statements are bound once instead of at every evaluation.
        ``correction`` is a list of floats (or None); the statements and the
        tests are those of :meth:`qdd_solver`, so are the numbers.
        None when ``M`` itself goes the general route.
        """
        bound = self._qdd_kernel_and_factors(p)
        if bound is None:
            return None
        kernel, w = bound

        def solve(values, correction):
            return kernel(values, w, correction, _BOUND)

        return solve

    def _qdd_kernel_and_factors(self, p: np.ndarray):
        """The generated ``q''``-only statements (compiled on first use) and the mass factors of ``p``, or None."""
        w = self._factors(p)
        if w is None:
            return None
        if self._qdd_kernel is None:
            self._qdd_kernel = _compile_kernel(_generate(self.pattern, self.has_nonideal, qdd_only=True)[0])
        return self._qdd_kernel, w

    bound = _BOUND
    """The largest ``||G||_1 ||G^{-1}||_1`` the kernel accepts (its argument ``bound``)."""

    def mass_factors(self, p: np.ndarray) -> list[float] | None:
        """``w = 1/d`` of ``M = diag(d)`` for ``p`` as a list; None when ``M`` goes the general route."""
        return self._factors(p)

    def fused_parts(self) -> tuple[list[str], list[str]]:
        """What :func:`udk_notebooks._fused.fuse` joins to the entries: statements and the names of ``q''``.

        The statements of :meth:`qdd_solver` without a correction (the plain
        route of an unstabilized run), reading ``e0, ...``, ``w0, ...`` and
        ``bound``; ``return None`` declines.
        """
        body, _, names = _kernel_body(self.pattern, self.has_nonideal, qdd_only=True, correction=False)
        return body, names


def _compile_kernel(source: str) -> Callable:
    """The function ``kernel`` that the generated ``source`` defines."""
    namespace: dict = {"isfinite": math.isfinite}
    exec(compile(source, "<udk_notebooks.kernels.ScalarKernel>", "exec"), namespace)  # noqa: S102
    return namespace["kernel"]


class BandKernel:
    """Eqs. (7)-(11) for a constant diagonal ``M`` and a banded Gram matrix, with LAPACK's banded Cholesky.

    The products ``A D^{-1} A^T``, ``A a`` and ``A^T lam`` run over the nonzero
    entries of ``A`` only (index arrays fixed at compile time), so a chain of
    ``N`` links costs ``O(N)``.
    """

    def __init__(self, pattern: _Pattern, mass, has_nonideal: bool):
        n, m, P = pattern.n, pattern.m, pattern
        self.n, self.m, self.size = n, m, pattern.size
        self.width = u = pattern.bandwidth()
        entries = [(k, j, P.A[k][j]) for k in range(m) for j in P.cols[k]]
        self.a_rows = np.array([k for k, _, _ in entries], dtype=np.intp)
        self.a_cols = np.array([j for _, j, _ in entries], dtype=np.intp)
        # The value list holds the nonzeros of Q, A, b, C in this order, so each is one slice of it.
        self.a_slice = _slice([pos for _, _, pos in entries])
        self.q_cols = np.array([j for j in range(n) if P.Q[j] is not None], dtype=np.intp)
        self.q_slice = _slice([P.Q[j] for j in self.q_cols])
        self.b_rows = np.array([k for k in range(m) if P.b[k] is not None], dtype=np.intp)
        self.b_slice = _slice([P.b[k] for k in self.b_rows])
        self.c_cols = np.array([j for j in range(n) if has_nonideal and P.C[j] is not None], dtype=np.intp)
        self.c_slice = _slice([P.C[j] for j in self.c_cols])
        # Pairs of nonzeros of A in one column, with their place in the upper band storage of dpbtrf:
        # G[l, k] (l <= k) sits at ab[u + l - k, k], flattened as (u + l - k) * m + k.
        by_column: dict = {}
        for index, (k, j, _) in enumerate(entries):
            by_column.setdefault(j, []).append((k, index))
        first, second, slots = [], [], []
        for column in by_column.values():
            for k, index_k in column:
                for l, index_l in column:
                    if l <= k:
                        first.append(index_k)
                        second.append(index_l)
                        slots.append((u + l - k) * m + k)
        self.first, self.second = np.array(first, dtype=np.intp), np.array(second, dtype=np.intp)
        self.slots = np.array(slots, dtype=np.intp)
        self.band_size = (u + 1) * m
        self._ones = np.ones(m)
        self._factors = _Factors(mass, lambda w: (w, w[self.a_cols]))

    def __call__(self, values, p: np.ndarray, correction=None) -> Motion | None:
        """The motion from the compiled value list, or None when the general route must decide."""
        factors = self._factors(p)
        if factors is None:
            return None
        w, w_at_entries = factors
        n, m, u = self.n, self.m, self.width
        v = np.fromiter(values, float, self.size)
        Q = np.zeros(n)
        Q[self.q_cols] = v[self.q_slice]
        a = Q * w
        av = v[self.a_slice]
        W = av * w_at_entries  # the nonzeros of A D^{-1}
        band = np.bincount(self.slots, av[self.first] * W[self.second], self.band_size).reshape(u + 1, m)
        r = np.bincount(self.a_rows, W * Q[self.a_cols], m)
        if self.b_rows.size == m:
            r = v[self.b_slice] - r
        else:
            r = -r
            r[self.b_rows] += v[self.b_slice]
        if correction is not None:
            r += correction
        factor, info = lapack.dpbtrf(band, lower=0)
        if info != 0:
            return None
        # Bound on ||G^{-1}||_1 through the comparison matrix of the factor (module docstring), and
        # on ||G||_1 by (2u + 1) times the largest diagonal entry (|G_kl| <= sqrt(G_kk G_ll) for an SPD G):
        # a looser bound only sends more systems to the general route.
        comparison = -np.abs(factor)
        comparison[u] = factor[u]
        bound, _ = lapack.dpbtrs(comparison, self._ones, lower=0)
        if not bound.max() * ((2 * u + 1) * band[u].max()) < _BOUND:
            return None
        if self.c_cols.size:
            c = np.zeros(n)
            c[self.c_cols] = v[self.c_slice]
            rhs = np.empty((m, 2))
            rhs[:, 0] = r
            rhs[:, 1] = np.bincount(self.a_rows, W * c[self.a_cols], m)
            sol, info = lapack.dpbtrs(factor, rhs, lower=0)
            lam, mu = sol[:, 0], sol[:, 1]
            nonideal = c - np.bincount(self.a_cols, av * mu[self.a_rows], n)
        else:
            lam, info = lapack.dpbtrs(factor, r, lower=0)
            nonideal = None
        ideal = np.bincount(self.a_cols, av * lam[self.a_rows], n)
        if nonideal is None:
            qdd = a + ideal * w
            nonideal = np.zeros(n)
        else:
            qdd = a + (ideal + nonideal) * w
        if not math.isfinite(qdd.sum()):
            return None
        return Motion(qdd, Q, ideal, nonideal)


def _slice(positions):
    """Consecutive positions as a slice (a view, no copy), others as an index array."""
    positions = [int(i) for i in positions]
    start = positions[0] if positions else 0
    if positions == list(range(start, start + len(positions))):
        return slice(start, start + len(positions))
    return np.array(positions, dtype=np.intp)


def diagonal_kernel(n: int, m: int, nonzero, mass, has_nonideal: bool):
    """The fast kernel for a constant diagonal ``M`` with this pattern, or None when none fits.

    Parameters
    ----------
    n, m : int
        Numbers of coordinates and constraint rows.
    nonzero : sequence of int
        Positions of the nonzero entries in ``Q (n), A (m x n), b (m), C (n)``.
    mass : callable
        ``p -> M``, the constant mass matrix (diagonal).
    has_nonideal : bool
        Whether ``C`` is part of the model.

    Returns
    -------
    ScalarKernel, BandKernel or None
        The scalar kernel when its generated code is small; otherwise the
        band kernel when ``G`` has a half-bandwidth of at most
        :data:`BAND_MAX_WIDTH`; otherwise None (the general route).
    """
    if m == 0:
        return None
    pattern = _Pattern(n, m, nonzero)
    if not all(pattern.cols):  # a row of A that is identically zero: redundant, the general route decides
        return None
    # Generating the scalar kernel walks the fill-in of G (up to m^3 steps): only for small m.
    if m <= SCALAR_MAX_ROWS and sum(map(len, pattern.cols)) <= SCALAR_MAX_TERMS:
        kernel = ScalarKernel(pattern, mass, has_nonideal)
        if kernel.products <= SCALAR_MAX_TERMS:
            return kernel
    if pattern.bandwidth() <= BAND_MAX_WIDTH:
        return BandKernel(pattern, mass, has_nonideal)
    return None


class _Lines:
    """Straight-line source over named floats, where None stands for a structural zero (no code emitted)."""

    def __init__(self):
        self.lines: list[str] = []

    def let(self, name: str, terms, base: str | None = None, sign: str = "-") -> str | None:
        """``name = base sign (sum of terms)``; None, and no line, when both are structurally zero."""
        terms = [term for term in terms if term is not None]
        if not terms and base is None:
            return None
        if not terms:
            self.lines.append(f"    {name} = {base}")
        elif base is None:
            self.lines.append(f"    {name} = {'-' if sign == '-' else ''}({_sum(terms)})")
        else:
            self.lines.append(f"    {name} = {base} {sign} ({_sum(terms)})")
        return name

    def emit(self, line: str) -> None:
        self.lines.append("    " + line)


def _product(x: str | None, y: str | None) -> str | None:
    return None if x is None or y is None else f"{x} * {y}"


class _ContactCode(_Lines):
    """The generated code of :class:`ContactKernel`: rows, the factor of ``G``, and the products it reuses."""

    def __init__(self, pattern: _Pattern, slopes: list, modes: tuple, gone: set):
        super().__init__()
        self.n, self.P, self.modes, self.slopes = pattern.n, pattern, modes, slopes
        self.width = 4 + pattern.n  # the columns of friction_data per entry: s, drift, mu, mu_s, ds/dq'
        self.stuck = [i for i, mode in enumerate(modes) if mode == 0]
        self.sliding = [i for i, mode in enumerate(modes) if mode in (1, -1)]
        self.kept = [k for k in range(pattern.m) if k not in gone]  # an open contact's gap row leaves A
        self.m = len(self.kept)
        self.rows = [list(pattern.cols[k]) for k in self.kept] + [list(slopes[i]) for i in self.stuck]
        self.r = len(self.rows)
        self.lines.append("def kernel(v, d, w, corr, bound):")
        self.emit(f"{', '.join(f'w{j}' for j in range(self.n))}, = w")
        self.right = self._rows()
        self.W = [[self.let(f"W{k}_{j}", [], f"{a} * w{j}") if a else None for j, a in enumerate(row)] for k, row in
                  enumerate(self.A)]
        self._factor()
        self._bound()

    def _rows(self) -> list:
        """``A`` (names) and ``b``: the model's rows scaled as core.scale_rows scales them, then the stick rows."""
        n, P, width = self.n, self.P, self.width
        self.A = [[None] * n for _ in range(self.r)]
        right = []
        for k, row in enumerate(self.kept):  # a power of two per row; an extreme row declines
            cells = [f"v[{P.A[row][j]}]" for j in self.rows[k]]
            _scale_row(self.emit, k, cells)
            for j, cell in zip(self.rows[k], cells):
                self.A[k][j] = self.let(f"a{k}_{j}", [], f"{cell} * f{k}")
            b = f"v[{P.b[row]}]" if P.b[row] is not None else "0.0"
            right.append(self.let(f"rb{k}", [], f"({b} if corr is None else {b} + corr[{row}]) * f{k}"))
        for j, i in enumerate(self.stuck):  # s' = 0: the row ds/dq' q'' = -drift, in its own units
            for col in self.rows[self.m + j]:
                self.A[self.m + j][col] = self.let(f"a{self.m + j}_{col}", [], f"d[{i * width + 4 + col}]")
            right.append(self.let(f"rb{self.m + j}", [f"d[{i * width + 1}]"]))
        return right

    def _factor(self) -> None:
        """``G = A W A^T = U^T U`` over the pattern; a pivot that is not positive declines."""
        r, A, W = self.r, self.A, self.W
        self.G, self.U = {}, {}
        for k in range(r):
            for l in range(k + 1):
                self.G[k, l] = self.G[l, k] = self.let(f"G{k}_{l}", [_product(W[k][j], A[l][j]) for j in range(self.n)],
                                                       sign="+")
        U = self.U
        for i in range(r):
            pivot = self.let(f"P{i}", [_product(U.get((k, i)), U.get((k, i))) for k in range(i)], self.G[i, i] or "0.0")
            self.emit(f"if not {pivot} > 0.0:")
            self.emit("    return None")
            self.emit(f"U{i}_{i} = sqrt({pivot})")
            U[i, i] = f"U{i}_{i}"
            for j in range(i + 1, r):
                if self.let(f"V{i}_{j}", [_product(U.get((k, i)), U.get((k, j))) for k in range(i)], self.G[i, j]):
                    self.emit(f"U{i}_{j} = V{i}_{j} / U{i}_{i}")
                    U[i, j] = f"U{i}_{j}"

    def _bound(self) -> None:
        """Decline unless ``||G||_1 max(<U>^-1 <U>^-T e)`` (module docstring) is below ``bound``."""
        r, U = self.r, self.U
        comparison = {key: (value if key[0] == key[1] else f"abs({value})") for key, value in U.items()}
        f = []
        for i in range(r):
            f.append(self.let(f"fy{i}", [_product(comparison.get((k, i)), f[k]) for k in range(i)], "1.0", sign="+"))
            self.emit(f"fy{i} = fy{i} / U{i}_{i}")
        g = [None] * r
        for i in reversed(range(r)):
            g[i] = self.let(f"fz{i}", [_product(comparison.get((i, k)), g[k]) for k in range(i + 1, r)], f[i], sign="+")
            self.emit(f"fz{i} = fz{i} / U{i}_{i}")
        norms = [_sum([f"abs({self.G[k, l]})" for l in range(r) if self.G[k, l] is not None]) for k in range(r)]
        self.emit(f"if not max({', '.join(g)}, 0.0) * max({', '.join(norms)}, 0.0) < bound:")
        self.emit("    return None")

    def solve(self, prefix: str, x: list) -> list:
        """``G^-1 x``: ``U^T y = x``, then ``U z = y``."""
        U, r = self.U, self.r
        y = []
        for i in range(r):
            y.append(self.let(f"{prefix}y{i}", [_product(U.get((k, i)), y[k]) for k in range(i)], x[i]))
            if y[i] is not None:
                self.emit(f"{prefix}y{i} = {prefix}y{i} / U{i}_{i}")
        z = [None] * r
        for i in reversed(range(r)):
            z[i] = self.let(f"{prefix}{i}", [_product(U.get((i, k)), z[k]) for k in range(i + 1, r)], y[i])
            if z[i] is not None:
                self.emit(f"{prefix}{i} = {prefix}{i} / U{i}_{i}")
        return z

    def apply(self, prefix: str, x: list) -> list:
        """``A W x``."""
        return [self.let(f"{prefix}{k}", [_product(Wk[j], x[j]) for j in range(self.n)], sign="+")
                for k, Wk in enumerate(self.W)]

    def transpose(self, prefix: str, lam: list, chosen=None) -> list:
        """``A^T lam`` over the chosen rows (all by default)."""
        chosen = range(self.r) if chosen is None else chosen
        return [self.let(f"{prefix}{j}", [_product(self.A[k][j], lam[k]) for k in chosen], sign="+")
                for j in range(self.n)]

    def dot(self, name: str, x: list, y: list) -> str:
        return self.let(name, [_product(a, b) for a, b in zip(x, y)], sign="+") or "0.0"

    def unit(self, prefix: str, i: int) -> list:
        """The unit friction force ``e = -mu sgn(s) ds/dq'`` of sliding entry ``i``."""
        width = self.width
        return [self.let(f"{prefix}{j}", [], f"{-self.modes[i]:.1f} * d[{i * width + 2}] * d[{i * width + 4 + j}]")
                if j in self.slopes[i] else None for j in range(self.n)]


def _scale_row(emit: Callable, k: int, cells: list) -> None:
    """Code for ``f{k}``: the power of two that brings row ``k`` (its nonzero ``cells``) into [1, 2), as
    :func:`~udk_notebooks.core.scale_rows`; a row that is zero, non-finite or extreme declines (None)."""
    emit(f"s{k} = max({', '.join(f'abs({cell})' for cell in cells)}, 0.0)")
    emit(f"if not 1e-290 < s{k} < 1e290:")
    emit("    return None")
    emit(f"f{k} = ldexp(1.0, 1 - frexp(s{k})[1])")


def _named_rows(code: _ContactCode, C: list, base: list, normal_rows: tuple) -> tuple:
    """``CoulombFriction(normal=rows)``: the total nonideal vector, the holding ratios and no normal forces
    (:class:`ContactKernel`)."""
    n, m, width = code.n, code.m, code.width
    total, gains, slide_rows = list(C), [None] * code.r, None
    if code.sliding:  # N = |a + B N| over the sliding entry's rows: the nonnegative root
        i = code.sliding[0]
        slide_rows, unit = normal_rows[i], code.unit("e", i)
        gains = [code.let(f"gn{k}", [x]) for k, x in enumerate(code.solve("ge", code.apply("ae", unit)))]
        a, B = code.transpose("pa", base, slide_rows), code.transpose("pb", gains, slide_rows)
        ab, aa, bb = code.dot("ab", a, B), code.dot("aa", a, a), code.dot("bb", B, B)
        code.emit(f"if not {bb} < 1.0:")  # friction feeds its own normal force: the general route refuses it
        code.emit("    return None")
        code.emit(f"N = ({ab} + sqrt({ab} * {ab} + (1.0 - {bb}) * {aa})) / (1.0 - {bb})")
        total = [code.let(f"T{j}", [_product("N", unit[j])], C[j], sign="+") for j in range(n)]
    ratios = {}
    for j, i in enumerate(code.stuck):  # lam_s |ds/dq'| / (mu_s N_own), N_own = |force of its own rows|
        row = m + j
        multiplier = code.let(f"hold{j}", [_product(gains[row], "N")], base[row] or "0.0", sign="+")
        force = code.transpose(f"o{j}_", base, normal_rows[i])
        if slide_rows is not None:
            extra = code.transpose(f"ob{j}_", gains, normal_rows[i])
            force = [code.let(f"on{j}_{c}", [_product("N", x)], y or "0.0", sign="+") if x else y
                     for c, (x, y) in enumerate(zip(extra, force))]
        size, slope = code.dot(f"lim{j}", force, force), code.dot(f"sl{j}", code.A[row], code.A[row])
        code.emit(f"R{j} = {multiplier} * sqrt({slope}) / max(d[{i * width + 3}] * sqrt({size}), 1e-300)")
        ratios[i] = f"R{j}"
    return total, ratios, []


def _contact_rows(code: _ContactCode, C: list, base: list, contacts: tuple) -> tuple:
    """:class:`~udk_notebooks.contacts.Contact` entries: total nonideal vector, ratios, holding force, normals."""
    n, m, width = code.n, code.m, code.width
    gap = [code.kept.index(row) if row in code.kept else None for row in contacts[0]]
    rough = [i for i in code.sliding if code.slopes[i] and contacts[1][i]]  # structurally rough, sliding
    gains = []
    for c, i in enumerate(rough):
        unit = code.unit(f"e{c}_", i)
        gains.append(([code.let(f"gn{c}_{k}", [x]) for k, x in enumerate(code.solve(f"ge{c}_", code.apply(f"ae{c}_", unit)))],
                      unit))
    # a gap row's multiplier times its row's factor is the normal force in newtons: N = a + B N
    a = [code.let(f"na{c}", [], f"{base[gap[i]] or '0.0'} * f{gap[i]}") for c, i in enumerate(rough)]
    B = [[code.let(f"nb{c}_{l}", [], f"{gains[l][0][gap[i]] or '0.0'} * f{gap[i]}") for l in range(len(rough))]
         for c, i in enumerate(rough)]
    if len(rough) == 1:  # 1 - B must be positive (unilateral), else Painleve: declined
        code.emit(f"D0 = 1.0 - {B[0][0]}")
        code.emit("if not D0 > 1e-12:")
        code.emit("    return None")
        code.emit(f"N0 = {a[0]} / D0")
    elif len(rough) == 2:  # every principal minor of I - B positive (a P-matrix), then Cramer's rule
        code.emit(f"D0 = 1.0 - {B[0][0]}")
        code.emit(f"D1 = 1.0 - {B[1][1]}")
        code.emit(f"det = D0 * D1 - {B[0][1]} * {B[1][0]}")
        code.emit("if not min(D0, D1, det) > 1e-12:")
        code.emit("    return None")
        code.emit(f"N0 = ({a[0]} * D1 + {B[0][1]} * {a[1]}) / det")
        code.emit(f"N1 = (D0 * {a[1]} + {B[1][0]} * {a[0]}) / det")
    total = list(C)
    for c, (_, unit) in enumerate(gains):
        total = [code.let(f"T{c}_{j}", [_product(f"N{c}", unit[j])], total[j], sign="+") for j in range(n)]
    multipliers = [code.let(f"M{k}", [_product(g[k], f"N{c}") for c, (g, _) in enumerate(gains)], base[k], sign="+")
                   for k in range(code.r)]
    for c, g in enumerate(gap):
        code.emit(f"NN{c} = {multipliers[g] or '0.0'} * f{g}" if g is not None else f"NN{c} = nan")
    ratios = {}
    for j, i in enumerate(code.stuck):  # the stick row has a unit tangent: its multiplier is the holding force
        code.emit(f"R{j} = {multipliers[m + j] or '0.0'} / max(d[{i * width + 3}] * abs(NN{i}), 1e-300)")
        ratios[i] = f"R{j}"
    holding = code.transpose("h", multipliers, range(m, code.r)) if code.stuck else [None] * n
    return total, ratios, holding, [f"NN{c}" for c in range(len(gap))]


def _moved(code: _ContactCode, lam: list, C: list) -> list:
    """The multipliers of ``F^L`` moved by the reaction to the model's own nonideal force ``C`` (``lam`` if none)."""
    if not any(C):
        return lam
    reaction = code.solve("lc", code.apply("ac", C))
    return [code.let(f"base{k}", [reaction[k]], lam[k]) for k in range(code.r)]


STICK_DENOMINATOR_FLOOR = 1e-6
"""A sticking ``normal=None`` entry's ``mu_s N`` must exceed this share of ``|F^L|`` for the fast route to answer.

Both routes find the holding force to about ``1e-16 |F^L|``; below this floor its ratio to ``mu_s N`` is
rounding over rounding (``mu_s = 0``, ``F^L = 0``, a holding force that takes nearly all of ``F^L``), the two
routes disagree in size and sign, and the general route decides (:func:`_ideal_size`)."""


def _ideal_size(code: _ContactCode, C: list, lam: list, normal: list, ideal: list) -> tuple:
    """``CoulombFriction(normal=None)``: the total nonideal vector and the holding ratios (:class:`ContactKernel`).

    As the general route takes it (Udwadia, Kalaba & Fan 2005): ``N = |F^L|``
    less the holding force (``normal``), a sliding entry adds ``N e``, and a
    sticking entry's ratio is ``lam_s |ds/dq'| / (mu_s N)`` with ``lam_s``
    its stick row's multiplier of ``F^L`` (the model's own ``C`` plays no
    part in either). The builder lets only entries whose friction provably
    leaves the reaction alone (``A M^-1 ds/dq' = 0``) slide here: where
    sympy could not prove it, the general route checks it state by state.
    A sticking entry declines where ``mu_s N`` is at most
    :data:`STICK_DENOMINATOR_FLOOR` of ``|F^L|``: there its ratio is rounding.
    """
    n, m, width = code.n, code.m, code.width
    code.emit(f"N = sqrt({code.dot('nn', normal, normal)})")
    total = list(C)
    for c, i in enumerate(code.sliding):
        unit = code.unit(f"e{c}_", i)
        total = [code.let(f"T{c}_{j}", [_product("N", unit[j])], total[j], sign="+") for j in range(n)]
    ratios = {}
    if code.stuck:  # a ratio of rounding to rounding: the general route decides (STICK_DENOMINATOR_FLOOR)
        code.emit(f"FLN = sqrt({code.dot('fl', ideal, ideal)})")
    for j, i in enumerate(code.stuck):
        row = m + j
        slope = code.dot(f"sl{j}", code.A[row], code.A[row])
        code.emit(f"if not d[{i * width + 3}] * N > {STICK_DENOMINATOR_FLOOR!r} * FLN:")
        code.emit("    return None")
        code.emit(f"R{j} = {lam[row] or '0.0'} * sqrt({slope}) / max(d[{i * width + 3}] * N, 1e-300)")
        ratios[i] = f"R{j}"
    return total, ratios


def _contact_source(pattern: _Pattern, slopes: list, modes: tuple, normal_rows: tuple, contacts=None) -> str:
    """Python source of :class:`ContactKernel` for one pattern and one set of modes (see there)."""
    n, P = pattern.n, pattern
    gone = set() if contacts is None else {contacts[0][i] for i, mode in enumerate(modes) if mode not in (0, 1, -1)}
    code = _ContactCode(pattern, slopes, modes, gone)
    Q = [f"v[{P.Q[j]}]" if P.Q[j] is not None else None for j in range(n)]
    rhs = [code.let(f"rq{k}", [x], code.right[k]) for k, x in enumerate(code.apply("aq", Q))]
    lam = code.solve("lam", rhs)  # multipliers of F^L
    ideal = code.transpose("F", lam)
    C = [f"v[{P.C[j]}]" if P.C[j] is not None else None for j in range(n)]
    if contacts is not None:
        total, ratios, holding, tail = _contact_rows(code, C, _moved(code, lam, C), contacts)
    else:  # CoulombFriction entries: the holding force is the stick rows' share of F^L
        holding = code.transpose("h", lam, range(code.m, code.r)) if code.stuck else [None] * n
    # F^L less the holding force, which moves to the nonideal term
    geometric = [code.let(f"FL{j}", [holding[j]], ideal[j]) if holding[j] else ideal[j] for j in range(n)]
    if contacts is None and all(rows is None for rows in normal_rows):
        (total, ratios), tail = _ideal_size(code, C, lam, geometric, ideal), []
    elif contacts is None:
        total, ratios, tail = _named_rows(code, C, _moved(code, lam, C), normal_rows)
    respond = code.transpose("rs", code.solve("mt", code.apply("at", total)))
    nonideal = [code.let(f"NI{j}", [respond[j]], total[j]) for j in range(n)]
    qdd = [code.let(f"X{j}", [], f"w{j} * ({_sum([x for x in (Q[j], ideal[j], nonideal[j]) if x])})")
           if any((Q[j], ideal[j], nonideal[j])) else None for j in range(n)]
    nonideal = [code.let(f"FC{j}", [holding[j]], nonideal[j] or "0.0", sign="+") if holding[j] else nonideal[j]
                for j in range(n)]
    values = [x or "0.0" for x in qdd + Q + geometric + nonideal] + [ratios.get(i, "nan") for i in range(len(modes))]
    values += tail
    code.emit(f"return [{', '.join(values)}]")
    return "\n".join(code.lines) + "\n"


class ContactKernel:
    """Friction contacts in Python floats, for a constant diagonal ``M`` and one set of modes.

    The cases of :meth:`~udk_notebooks.contact_forces.ContactForces._fast_contacts`:
    ``CoulombFriction(normal=rows)`` entries, at most one sliding, the others
    sticking; one ``CoulombFriction(normal=None)`` entry, sliding where its
    friction provably leaves the reaction alone, or sticking; or unilateral
    :class:`~udk_notebooks.contacts.Contact` entries, at most two sliding
    with friction, open ones without their gap rows. Generated, like
    :class:`ScalarKernel`, over the nonzero pattern
    of ``Q``, ``A``, ``b``, ``C`` and of each entry's ``ds/dq'`` (the stick
    rows), for one set of modes. The model's rows are scaled by powers of two
    as :func:`~udk_notebooks.core.scale_rows` scales them. With ``W = M^{-1}``
    and one factor ``G = A W A^T = U^T U`` (Udwadia, Kalaba & Fan 2005, Eqs. 7-11):

    * ``lam = G^-1 (b - A W Q)``, the multipliers of ``F^L = A^T lam`` (Eq. 10);
    * the reaction to a nonideal force ``c`` has multipliers ``-G^-1 A W c``
      (``F^C(c) - c``, Eq. 11): for the model's ``C`` and the sliding entry's
      unit friction ``e = -mu sgn(s) ds/dq'``;
    * named rows: the sliding entry's normal force ``N = |a + B N|`` over its
      rows, the nonnegative root of that quadratic (gain ``|B|`` below one,
      else None); each sticking entry's ratio ``lam_s |ds/dq'| / (mu_s N_own)``;
    * ``normal=None``: ``N = |F^L|`` less the holding force (:func:`_ideal_size`),
      the ratio ``lam_s |ds/dq'| / (mu_s N)`` with ``lam_s`` of ``F^L``;
    * contacts: the gap rows' multipliers (in newtons, times their rows'
      scale) are affine in the sliding normal forces, ``N = a + B N``, solved
      where every principal minor of ``I - B`` is positive (else None); each
      sticking contact's ratio is its stick row's multiplier over ``mu_s |N|``,
      and the normal forces of the closed contacts follow the ratios in the output;
    * ``F^C = c - A^T G^-1 A W c`` for ``c = C + N e``, and
      ``q'' = W (Q + F^L + F^C)``; the stick rows' share of ``F^L`` (the
      holding force) moves to the nonideal term.

    Calling it with the compiled entries, the flat friction data, ``1 / diag(M)``
    and the stabilization's correction of ``b`` (or None) returns
    ``[q'', Q, F^L, F^C]`` (``n`` each), one ratio per entry (NaN where it
    does not stick) and, for contacts, one normal force per contact (NaN where
    open) as one list; or None where a row is extreme, a pivot is not
    positive, the condition number bound of ``G`` is not below
    ``1 / GRAM_RCOND``, or the friction gain test fails.
    """

    def __init__(self, pattern: _Pattern, slopes: list, modes: tuple, normal_rows: tuple, contacts=None):
        self.source = _contact_source(pattern, slopes, modes, normal_rows, contacts)
        namespace: dict = {"sqrt": math.sqrt, "ldexp": math.ldexp, "frexp": math.frexp, "nan": math.nan}
        exec(compile(self.source, "<udk_notebooks.kernels.ContactKernel>", "exec"), namespace)  # noqa: S102
        self._kernel = namespace["kernel"]

    def __call__(self, entries: list, data: list, w: list, correction: list | None) -> list | None:
        return self._kernel(entries, data, w, correction, _BOUND)


SINGULAR_MAX_N = 8
"""Most coordinates for which :class:`SingularKernel` is generated (its factor of ``M + A^T A`` is dense)."""

SINGULAR_PIVOT_RTOL = 1e-6
"""Smallest equilibrated pivot of ``M / s + A^T A`` that :class:`SingularKernel` accepts.

The general route (:func:`udk_notebooks.core.cholesky_or_none`) counts a matrix as singular at pivots of
``RANK_RTOL = 1e-10``; the kernel answers only far from that, and sends everything nearer to it."""


class _SingularCode(_Lines):
    """The singular kernel's code: a bare name is passed on without a copy, and a sum divided in one statement."""

    @staticmethod
    def _expression(terms, base: str | None, sign: str) -> str | None:
        """``base (sign) sum(terms)`` over the terms that are not None; None where nothing is left."""
        terms = [t for t in terms if t is not None]
        if not terms:
            return base
        if base is None:
            return f"{'-' if sign == '-' else ''}({_sum(terms)})"
        return f"{base} {sign} ({_sum(terms)})"

    def let(self, name: str, terms, base: str | None = None, sign: str = "-") -> str | None:
        """``name = base (sign) sum(terms)``; a bare name is passed on without a copy; None where all are zero."""
        value = self._expression(terms, base, sign)
        if value is None or re.fullmatch(r"[A-Za-z_]\w*", value):
            return value
        self.emit(f"{name} = {value}")
        return name

    def quotient(self, name: str, terms, base: str | None, divisor: str, sign: str = "-") -> str | None:
        """``name = (base (sign) sum(terms)) / divisor`` in one statement; None where the numerator is zero."""
        value = self._expression(terms, base, sign)
        if value is None:
            return None
        self.emit(f"{name} = ({value}) / {divisor}")
        return name


def _cholesky(code: _SingularCode, matrix: dict, size: int, prefix: str, floor: Callable) -> dict:
    """The lower factor ``F`` of ``matrix = F F^T`` (entries ``(i, j)``, ``i >= j``; None for structural zeros).

    The generated code declines (returns None) unless each pivot exceeds ``floor(diagonal entry)``.
    """
    F = {}
    for j in range(size):
        diagonal = matrix[j, j] or "0.0"
        pivot = code.let(f"{prefix}P{j}", [_product(F.get((j, k)), F.get((j, k))) for k in range(j)], diagonal)
        code.emit(f"if not {pivot} > {floor(diagonal)}:")
        code.emit("    return None")
        code.emit(f"{prefix}{j}_{j} = sqrt({pivot})")
        F[j, j] = f"{prefix}{j}_{j}"
        for i in range(j + 1, size):
            entry = code.quotient(f"{prefix}{i}_{j}", [_product(F.get((i, k)), F.get((j, k))) for k in range(j)],
                                  matrix[i, j], F[j, j])
            if entry:
                F[i, j] = entry
    return F


def _singular_source(pattern: _Pattern) -> str:
    """Python source of :class:`SingularKernel` (see there for the equations)."""
    code = _SingularCode()
    code.lines.append("def kernel(e, d, w, inverse_scale, corr, bound, pivot_rtol):")
    qdd, Q = _singular_body(code, pattern, lambda k: f"e[{k}]", lambda j: f"w[{j}]", correction=True)
    # F^L = M q'' - Q (the bordered route's ideal force; M q'' - Q lies in the range of A^T).
    ideal = [f"d[{j}] * {qdd[j]}" + (f" - {Q[j]}" if Q[j] else "") for j in range(pattern.n)]
    code.emit(f"return [{', '.join(qdd + [q or '0.0' for q in Q] + ideal + ['0.0'] * pattern.n)}]")
    return "\n".join(code.lines) + "\n"


def _singular_body(code: _SingularCode, pattern: _Pattern, entry: Callable, weight: Callable,
                   correction: bool) -> tuple[list[str], list]:
    """The statements of :class:`SingularKernel` up to ``q''`` into ``code``: the names of ``q''`` and of ``Q``.

    ``entry(k)`` and ``weight(j)`` spell the compiled value ``k`` and the scaled mass ``d_j / s``
    (``e[k]``, ``w[j]`` in the kernel, ``e{k}``, ``w{j}`` in the fused rate); ``correction`` adds
    ``corr`` to ``b`` (the fused rate has none: the same product, ``b * f``, either way).
    """
    n, m, P = pattern.n, pattern.m, pattern
    # Rows of A scaled by the power of two that brings their largest entry into [1, 2) (core.scale_rows).
    A = [[None] * n for _ in range(m)]
    rb = []
    for k in range(m):
        cells = [entry(P.A[k][j]) for j in P.cols[k]]
        _scale_row(code.emit, k, cells)
        for j, cell in zip(P.cols[k], cells):
            A[k][j] = code.let(f"a{k}_{j}", [], f"{cell} * f{k}")
        b = entry(P.b[k]) if P.b[k] is not None else "0.0"
        rb.append(code.let(f"rb{k}", [], f"({b} if corr is None else {b} + corr[{k}]) * f{k}" if correction
                           else f"{b} * f{k}"))
    # H = M / s + A^T A and Q_b = Q / s + A^T b (the augmented form, Udwadia & Phohomsiri 2006).
    H = {}
    for i in range(n):
        for j in range(i + 1):
            H[i, j] = code.let(f"H{i}_{j}", [_product(A[k][i], A[k][j]) for k in range(m)],
                               weight(i) if i == j else None, sign="+")
    Q = [entry(P.Q[j]) if P.Q[j] is not None else None for j in range(n)]
    Qb = [code.let(f"Qb{j}", [_product(A[k][j], rb[k]) for k in range(m)],
                   f"{Q[j]} * inverse_scale" if Q[j] else None, sign="+") for j in range(n)]
    # H = L L^T; a pivot at most pivot_rtol times its diagonal entry declines (cholesky_or_none's test, stricter).
    L = _cholesky(code, H, n, "L", lambda diagonal: f"pivot_rtol * {diagonal}")

    def forward(prefix, x):  # L^-1 x
        y = []
        for i in range(n):
            y.append(code.quotient(f"{prefix}{i}", [_product(L.get((i, k)), y[k]) for k in range(i)], x[i], L[i, i]))
        return y

    y = forward("y", Qb)
    B = [forward(f"B{k}_", [A[k][j] for j in range(n)]) for k in range(m)]  # columns of L^-1 A^T
    # G = A H^-1 A^T = B^T B = U^T U, and the bound of its condition number (module docstring).
    G = {}
    for k in range(m):
        for l in range(k + 1):
            G[k, l] = G[l, k] = code.let(f"G{k}_{l}", [_product(B[k][i], B[l][i]) for i in range(n)], sign="+")
    U = {(j, i): entry for (i, j), entry in _cholesky(code, G, m, "U", lambda diagonal: "0.0").items()}
    comparison = {key: (value if key[0] == key[1] else f"abs({value})") for key, value in U.items()}
    fy = []
    for i in range(m):
        fy.append(code.quotient(f"fy{i}", [_product(comparison.get((k, i)), fy[k]) for k in range(i)], "1.0", U[i, i],
                                sign="+"))
    fz = [None] * m
    for i in reversed(range(m)):
        fz[i] = code.quotient(f"fz{i}", [_product(comparison.get((i, k)), fz[k]) for k in range(i + 1, m)], fy[i],
                              U[i, i], sign="+")
    norms = [_sum([f"abs({G[k, l]})" for l in range(m) if G[k, l] is not None]) for k in range(m)]
    code.emit(f"if not max({', '.join(fz)}, 0.0) * max({', '.join(norms)}, 0.0) < bound:")
    code.emit("    return None")
    # lam = G^-1 (b - A H^-1 Q_b), then q'' = H^-1 (Q_b + A^T lam) = L^-T (y + B lam).
    r = [code.let(f"r{k}", [_product(B[k][i], y[i]) for i in range(n)], rb[k] or "0.0") for k in range(m)]
    ly = []
    for i in range(m):
        ly.append(code.quotient(f"ly{i}", [_product(U.get((k, i)), ly[k]) for k in range(i)], r[i], U[i, i]))
    lam = [None] * m
    for i in reversed(range(m)):
        lam[i] = code.quotient(f"lam{i}", [_product(U.get((i, k)), lam[k]) for k in range(i + 1, m)], ly[i], U[i, i])
    z = [code.let(f"z{i}", [_product(B[k][i], lam[k]) for k in range(m)], y[i], sign="+") for i in range(n)]
    qdd = [None] * n
    for i in reversed(range(n)):
        qdd[i] = code.quotient(f"x{i}", [_product(L.get((k, i)), qdd[k]) for k in range(i + 1, n)], z[i], L[i, i])
    return [x or "0.0" for x in qdd], Q


class SingularKernel:
    """Ideal constraints with a constant diagonal, positive semi-definite ``M``, as generated Python floats.

    For ``M = diag(d)`` with some masses zero (massless sliders), the
    accelerations are unique exactly when ``[M; A]`` has full column rank
    (encyclopedia article "Udwadia-Kalaba equation", section "Equation of
    motion"). Then, with ``s`` the largest mass and the rows of ``A`` scaled by
    powers of two as :func:`~udk_notebooks.core.scale_rows` scales them, the
    augmented matrix ``H = M / s + A^T A`` is positive definite, and since
    ``A q'' = b``, ``M q'' = Q + F^L`` reads ``H q'' = Q / s + A^T b + F^L / s``
    (Udwadia & Phohomsiri, "Explicit equations of motion for constrained
    mechanical systems with singular mass matrices", Proc. R. Soc. A 462,
    2006, Eqs. 3.1-3.4, with ``A^T A`` in place of ``A^+ A``: both add a
    force in the range of ``A^T``). The Udwadia-Kalaba equation with ``H`` in
    place of ``M`` (Udwadia, Kalaba & Fan 2005, Eqs. 7-10) gives::

        H = L L^T,  B = L^-1 A^T,  y = L^-1 (Q / s + A^T b),
        G = B^T B,  lam = G^-1 (b - B^T y),  q'' = L^-T (y + B lam),
        F^L = M q'' - Q.

    This ``q''`` is the one of :func:`udk_notebooks.core.solve`'s singular
    route: it satisfies ``A q'' = b`` and ``M q'' - Q = s A^T lam`` lies in the
    range of ``A^T``, which fixes ``q''`` uniquely. The kernel answers only
    where it can vouch for that: every equilibrated pivot of ``H`` above
    :data:`SINGULAR_PIVOT_RTOL` times its diagonal entry (so ``[M; A]`` has
    full column rank with a wide margin over the general route's
    ``RANK_RTOL``), every pivot of ``G`` positive and its condition number
    bound below ``1 / GRAM_RCOND`` (the rows of ``A`` independent, so
    ``A q'' = b`` is consistent), and every output finite. Otherwise it
    returns None and the general route decides, with its messages. Models
    with a nonideal ``C`` are left to the general route (no kernel).

    Parameters
    ----------
    pattern : _Pattern
        Nonzero positions of ``Q, A, b`` in the compiled value list.
    mass : callable
        ``p -> M`` (shape (n, n), diagonal).
    """

    def __init__(self, pattern: _Pattern, mass):
        self.n, self._pattern = pattern.n, pattern
        self.source = _singular_source(pattern)
        namespace: dict = {"sqrt": math.sqrt, "ldexp": math.ldexp, "frexp": math.frexp}
        exec(compile(self.source, "<udk_notebooks.kernels.SingularKernel>", "exec"), namespace)  # noqa: S102
        self._kernel = namespace["kernel"]
        self._mass = mass  # not _Factors: this kernel takes the zero masses that _Factors declines
        self._entry = (None, None)

    def _masses(self, p: np.ndarray):
        """``(d, d / s, 1 / s)`` as lists for the parameter vector ``p``, or None.

        None unless ``M`` is singular with every mass finite and not negative, and one positive:
        a regular ``M`` is :class:`ScalarKernel`'s (whose decisions stay as they are), a negative
        mass the general route's to refuse.
        """
        key = p.tobytes()
        entry = self._entry
        if key != entry[0]:
            d = np.diagonal(np.asarray(self._mass(p), dtype=float)).copy()
            ok = bool(np.all(np.isfinite(d))) and d.min() == 0.0 and d.max() > 0.0
            entry = self._entry = (key, (d.tolist(), (d / d.max()).tolist(), 1.0 / d.max()) if ok else None)
        return entry[1]

    def __call__(self, values, p: np.ndarray, correction=None) -> Motion | None:
        """The motion from the compiled value list, or None when the general route must decide."""
        solve = self._bind(p, correction)
        out = None if solve is None else solve(values)
        if out is None:
            return None
        rows = np.fromiter(out, float, 4 * self.n).reshape(4, self.n)
        return Motion(rows[0], rows[1], rows[2], rows[3])

    def _bind(self, p: np.ndarray, correction) -> Callable | None:
        """``values -> [q'', Q, F^L, F^C]`` (one list, or None) for the masses of ``p``; None where ``M`` is not for it."""
        masses = self._masses(p)
        if masses is None:
            return None
        corr = None if correction is None else np.asarray(correction, dtype=float).tolist()
        kernel = self._kernel

        def solve(values):
            out = kernel(values, *masses, corr, _BOUND, SINGULAR_PIVOT_RTOL)
            # every output finite (a sum is finite only when each term is), else the general route
            return out if out is not None and math.isfinite(sum(out)) else None

        return solve

    def qdd_solver(self, p: np.ndarray, correction=None) -> Callable | None:
        """``values -> q''`` (a list, or None where the general route must decide), as :meth:`ScalarKernel.qdd_solver`."""
        solve, n = self._bind(p, correction), self.n
        if solve is None:
            return None

        def accelerations(values):
            out = solve(values)
            return None if out is None else out[:n]

        return accelerations

    def mass_factors(self, p: np.ndarray) -> list[float] | None:
        """``d / s`` of ``M = diag(d)`` and then ``1 / s`` for ``p``, one list; None where ``M`` is not this kernel's.

        The inputs ``w0, ..., inverse_scale`` of :meth:`fused_parts`.
        """
        masses = self._masses(np.asarray(p, dtype=float))
        return None if masses is None else masses[1] + [masses[2]]

    def fused_parts(self) -> tuple[list[str], list[str], str, dict]:
        """What :func:`udk_notebooks._fused.fuse` joins to the entries, as :meth:`ScalarKernel.fused_parts`.

        The statements of :meth:`qdd_solver` without a correction (the plain
        route of an unstabilized run) up to ``q''``, reading ``e0, ...`` for
        the compiled values; ``return None`` declines. Returns the statements,
        the names of ``q''``, the inputs the set-up unpacks from
        :meth:`mass_factors`, and the global names the statements read.
        """
        code = _SingularCode()
        qdd, _ = _singular_body(code, self._pattern, lambda k: f"e{k}",
                                lambda j: f"w{j}", correction=False)
        inputs = ", ".join([f"w{j}" for j in range(self.n)] + ["inverse_scale"])
        names = {"sqrt": math.sqrt, "ldexp": math.ldexp, "frexp": math.frexp, "bound": _BOUND,
                 "pivot_rtol": SINGULAR_PIVOT_RTOL}
        return code.lines, qdd, inputs, names


def singular_kernel(n: int, m: int, nonzero, mass, has_nonideal: bool) -> SingularKernel | None:
    """:class:`SingularKernel` for a constant diagonal ``M`` with this pattern, or None when it does not fit.

    Parameters are those of :func:`diagonal_kernel`. None without rows, with a
    row of ``A`` identically zero, a nonideal ``C``, or more than
    :data:`SINGULAR_MAX_N` coordinates: the general route then decides.
    """
    if m == 0 or has_nonideal or n > SINGULAR_MAX_N or m > n:
        return None
    pattern = _Pattern(n, m, nonzero)
    if not all(pattern.cols):
        return None
    return SingularKernel(pattern, mass)
