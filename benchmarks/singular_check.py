"""Cost of the singular-configuration check (issue 14) on whole runs.

Run: ``.venv/bin/python benchmarks/singular_check.py [--repeat 7]``

For each system, 10 s runs with ``on_singular="stop"`` (the default: the rank
check at every accepted step) and ``on_singular="ignore"`` (no check)
alternate in one process; the table gives the median CPU time of each
(``time.process_time``, less disturbed than wall time when other processes
share the cores), their ratio, and the number of samples of the run. Systems: the
rolling disk and the double pendulum in Cartesian coordinates (the two-link
chain) as in ``models.py``, DOP853 at rtol 1e-9, atol 1e-12, and the double
pendulum in angles (a mass matrix that varies, so the mass measure is
watched too) with DOP853 and with RK4 at step 1e-3.

BLAS is pinned to one thread (see ``_timing.py``).
"""

import _timing  # noqa: F401, I001  (sets the BLAS thread count first)

import argparse
import os
import statistics
import time

from udk_notebooks import simulate
from udk_notebooks.examples import chain, double_pendulum, rolling_disk

DOP853 = dict(method="DOP853", rtol=1e-9, atol=1e-12)


def cases():
    disk = rolling_disk.model().compile()
    pend = chain.n_link_chain(2).compile()
    angles = double_pendulum.model().compile()
    yield "rolling disk, DOP853", disk, rolling_disk.initial_state(), DOP853
    yield "double pendulum (Cartesian), DOP853", pend, chain.chain_initial_state(2), DOP853
    yield "double pendulum (angles), DOP853", angles, double_pendulum.initial_state(), DOP853
    yield "double pendulum (angles), rk4 1e-3", angles, double_pendulum.initial_state(), dict(method="rk4", step=1e-3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--span", type=float, default=10.0)
    args = parser.parse_args()
    print(f"load average: {os.getloadavg()[0]:.2f}; {args.span:g} s runs, median of {args.repeat} interleaved pairs")
    print(f"{'system':<38} {'samples':>7} {'checked s':>10} {'unchecked s':>12} {'ratio':>6}")
    for label, compiled, (q0, qd0), options in cases():
        timings = {"stop": [], "ignore": []}
        for _ in range(args.repeat):
            for action in ("stop", "ignore"):
                start = time.process_time()
                run = simulate(compiled, (0.0, args.span), q0, qd0, on_singular=action, **options)
                timings[action].append(time.process_time() - start)
                assert run.status == "ok", run.stop_reason
        checked, unchecked = (statistics.median(timings[k]) for k in ("stop", "ignore"))
        print(f"{label:<38} {run.t.size:>7} {checked:>10.3f} {unchecked:>12.3f} {checked / unchecked:>6.3f}")


if __name__ == "__main__":
    main()
