"""N-link chain per call: the Gram route's exact 1-norm against the former sqrt(m) trace(G) bound (issue 12).

    .venv/bin/python benchmarks/gram_condition.py 64

The reciprocal condition estimate of ``G = B B^T`` needs ``||G||_1``. The
former bound ``sqrt(m) trace(G)`` is about 250x too large at N = 64, so every
call fell through to the slower SVD/null-space route; the exact norm
(``dlange``) keeps the Gram route. The second timing reinstates the bound by
replacing ``dlange`` inside ``udk_notebooks.core`` for this process only.
"""

import sys
from types import SimpleNamespace

import _timing  # pins BLAS to one thread before numpy loads
import numpy as np

from udk_notebooks import core
from udk_notebooks.examples import chain


def main():
    N = int(sys.argv[1]) if len(sys.argv) > 1 else 64
    cm = chain.n_link_chain(N).compile()
    q, qd = chain.chain_initial_state(N)
    exact = _timing.per_call(lambda: cm.motion(0.0, q, qd), repeat=3)
    lapack = core.lapack
    bound = SimpleNamespace(**{k: getattr(lapack, k) for k in dir(lapack) if not k.startswith("_")})
    bound.dlange = lambda kind, G: np.sqrt(G.shape[0]) * np.trace(G)
    core.lapack = bound
    try:
        former = _timing.per_call(lambda: cm.motion(0.0, q, qd), repeat=3)
    finally:
        core.lapack = lapack
    print(f"N = {N}: motion {exact:.0f} us with the exact 1-norm, {former:.0f} us with the former "
          f"sqrt(m) trace(G) bound (ratio {former / exact:.1f}x)")


if __name__ == "__main__":
    main()
