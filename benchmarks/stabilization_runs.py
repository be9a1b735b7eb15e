"""The four simulations of one StabilizationExplorer update, for instruction counts.

Wall time on a shared 2-core machine varies by about 30 %, more than many
changes worth measuring; ``valgrind --tool=callgrind`` counts instructions,
which repeat exactly. Count the script with and without the runs and subtract::

    valgrind --tool=callgrind --callgrind-out-file=/dev/null .venv/bin/python benchmarks/stabilization_runs.py
    valgrind --tool=callgrind --callgrind-out-file=/dev/null .venv/bin/python benchmarks/stabilization_runs.py --setup-only

(the ``I refs`` lines). The runs: the Cartesian pendulum released at 1 rad, 5 s
with step 0.01, Euler and RK4, each plain and with ``Baumgarte(10, 10)``: the
explorer's defaults.
"""

import os
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import udk_notebooks as udk  # noqa: E402
from udk_notebooks.examples import chain  # noqa: E402

compiled = chain.cartesian_pendulum().compile()
q0, qd0 = chain.pendulum_initial_state(1.0)
if "--setup-only" not in sys.argv[1:]:
    for method in ("euler", "rk4"):
        for stabilization in (None, udk.Baumgarte(10.0, 10.0)):
            udk.simulate(compiled, (0.0, 5.0), q0, qd0, method=method, step=0.01, stabilization=stabilization)
