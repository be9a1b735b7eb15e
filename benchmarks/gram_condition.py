"""N-link chain per call: the Gram route's exact 1-norm against the former sqrt(m) trace(G) bound (issue 12).

    .venv/bin/python benchmarks/gram_condition.py 64

The reciprocal condition estimate of ``G = B B^T`` needs ``||G||_1``. The
former bound ``sqrt(m) trace(G)`` is about 250x too large at N = 64, so every
call fell through to the slower SVD/null-space route; the exact norm
(``dlange``) keeps the Gram route. The second timing reinstates the bound by
replacing ``dlange`` inside ``udk_notebooks.core`` for this process only.
"""

import sys
import _timing  # noqa: E402  (pins BLAS to one thread)
import numpy as np
from udk_notebooks.examples import chain
from udk_notebooks import core
N = int(sys.argv[1]) if len(sys.argv) > 1 else 64; cm = chain.n_link_chain(N).compile(); q, qd = chain.chain_initial_state(N)
new = _timing.per_call(lambda: cm.motion(0.0, q, qd), repeat=3)
# the previous Gram condition estimate (sqrt(m) trace(G) as the 1-norm bound), for the ratio
orig = core.lapack.dlange
core.lapack = type("L", (), {k: getattr(core.lapack, k) for k in dir(core.lapack) if not k.startswith("__")})()
core.lapack.dlange = lambda kind, G: np.sqrt(G.shape[0]) * np.trace(G)
old = _timing.per_call(lambda: cm.motion(0.0, q, qd), repeat=3)
print(f"N = {N}: motion {new:.0f} us with the exact 1-norm, {old:.0f} us with the sqrt(m) trace bound (ratio {old / new:.1f}x)")
