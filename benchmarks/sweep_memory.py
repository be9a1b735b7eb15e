"""Peak memory of a batched sweep against the size of its output (issue 22, r03: the peak within 2x the output).

    PYTHONPATH=$PWD .venv/bin/python benchmarks/sweep_memory.py [--members 50] [--steps 20000]

Runs ``--members`` Baumgarte-stabilized Cartesian pendulums for ``--steps`` RK4
steps in one sweep and measures with :mod:`tracemalloc` (numpy reports its
arrays to it) the peak of the memory allocated during the sweep, against the
bytes of the result's arrays (``q``, ``qd``, both residuals). A second run
without residual blocks is not needed: the ratio is printed, the target is
at most 2. The compiled functions are built by a warm-up sweep first, so the
peak is the integration's own. The memory check that refuses a sweep whose
output would pass ``simulate``'s ``MEMORY_LIMIT`` is shown last.
"""

import argparse
import tracemalloc

import _timing  # noqa: F401  (pins BLAS to one thread before numpy loads)
import numpy as np

from udk_notebooks.examples import chain
from udk_notebooks.stabilization import Baumgarte
from udk_notebooks.sweep import sweep


def output_bytes(result) -> int:
    return sum(getattr(result, name).nbytes for name in ("q", "qd", "position_residual", "velocity_residual"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--members", type=int, default=50)
    parser.add_argument("--steps", type=int, default=20000)
    args = parser.parse_args()
    model = chain.cartesian_pendulum().compile()
    q0, qd0 = chain.pendulum_initial_state(1.0)
    step = 0.001
    span = (0.0, step * args.steps)
    gains = [Baumgarte(1.0 + 0.1 * i, 1.0 + 0.1 * i) for i in range(args.members)]
    sweep(model, (0.0, 0.01), q0, qd0, stabilization=gains[:2], step=step, progress=False)  # builds the functions
    tracemalloc.start()
    result = sweep(model, span, q0, qd0, stabilization=gains, step=step, progress=False)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    size = output_bytes(result)
    print(f"{args.members} members x {result.t.size} samples: output {size / 2**20:.1f} MiB, "
          f"peak {peak / 2**20:.1f} MiB, peak / output {peak / size:.2f} (target <= 2); "
          f"statuses {dict(zip(*np.unique(result.status, return_counts=True)))}")
    try:
        sweep(model, (0.0, 100.0), q0, qd0, params=[{"m": 1.0 + 0.01 * i} for i in range(100)], method="euler",
              step=1e-4, progress=False)
    except ValueError as exc:
        print(f"100 members x 1e6 steps: refused before allocating: {exc}")


if __name__ == "__main__":
    main()
