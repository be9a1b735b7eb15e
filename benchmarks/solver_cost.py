"""Per-call cost of ``udwadia_kalaba`` for n = 2..64 coordinates.

Run: ``.venv/bin/python benchmarks/solver_cost.py``

For each n: a random SPD mass matrix (condition number 1e3), n/2 independent
constraint rows, and a nonideal vector C. Reports the public function (with
input checks), the unchecked kernel ``core.solve``, and the same kernel with
a cached Cholesky factor (what a compiled model with constant M does). The
last two columns time ideal constraints (no C) with the cached factor both
ways, whatever ``core.LSE_MAX_N`` says: Gauss's minimum by LAPACK's dgglse,
and Eqs. (7)-(10) term by term. Where they cross sets ``core.LSE_MAX_N``.
"""

from _timing import per_call  # noqa: I001  (sets the BLAS thread count first)

from contextlib import contextmanager

import numpy as np

from udk_notebooks import core, udwadia_kalaba
from udk_notebooks.core import cholesky_or_none, solve


def problem(n: int, rng: np.random.Generator):
    U, _ = np.linalg.qr(rng.standard_normal((n, n)))
    M = U @ np.diag(np.logspace(0, 3, n)) @ U.T
    M = (M + M.T) / 2
    m = max(1, n // 2)
    return M, rng.standard_normal(n), rng.standard_normal((m, n)), rng.standard_normal(m), rng.standard_normal(n)


@contextmanager
def route(name: str):
    """Force the ideal-constraint route: ``"dgglse"`` for any n, or ``"eq7"`` always."""
    saved = core.LSE_MAX_N, core.LSE_RCOND
    core.LSE_MAX_N, core.LSE_RCOND = (10**9, saved[1]) if name == "dgglse" else (saved[0], np.inf)
    try:
        yield
    finally:
        core.LSE_MAX_N, core.LSE_RCOND = saved


def main() -> None:
    rng = np.random.default_rng(0)
    print(f"{'':>9} {'with a nonideal C':^44} {'ideal, cached factor':^26}")
    print(f"{'n':>4} {'m':>4} {'udwadia_kalaba':>16} {'core.solve':>12} {'cached factor':>14} "
          f"{'dgglse':>12} {'Eq. (7)':>12}  (microseconds per call)")
    for n in (2, 4, 8, 16, 32, 64):
        M, Q, A, b, C = problem(n, rng)
        L = cholesky_or_none(M)
        public = per_call(lambda: udwadia_kalaba(M, Q, A, b, C))
        kernel = per_call(lambda: solve(M, Q, A, b, C))
        cached = per_call(lambda: solve(M, Q, A, b, C, factor=L))
        ideal = {}
        for name in ("dgglse", "eq7"):
            with route(name):
                ideal[name] = per_call(lambda: solve(M, Q, A, b, factor=L))
        print(f"{n:>4} {A.shape[0]:>4} {public:>16.1f} {kernel:>12.1f} {cached:>14.1f} "
              f"{ideal['dgglse']:>12.1f} {ideal['eq7']:>12.1f}")


if __name__ == "__main__":
    main()
