"""The two sweep targets of issue 12, measured against a loop of single `simulate` runs.

    .venv/bin/python benchmarks/sweep.py [--loop-sample 50]

1. 2500 five-second RK4 runs (step 0.01) of the Baumgarte-stabilized Cartesian
   pendulum, a 50 x 50 grid of (alpha, beta) in [0, 40]^2 (target: <= 1 s).
2. A 2500-point (alpha, mu) map of the incline with friction, 2 s, RK4 step 0.005
   (target: <= 2 s).

The loop time is measured on ``--loop-sample`` members and scaled to 2500
(a full loop takes minutes); the batch is measured in full, and its largest
difference from the sampled single runs is printed.
"""

import argparse
import time

import _timing  # noqa: F401  (pins BLAS to one thread before numpy loads)
import numpy as np

import udk_notebooks as udk
from udk_notebooks.examples import chain, incline_friction
from udk_notebooks.sweep import parameter_grid, sweep


def timed(func):
    start = time.perf_counter()
    value = func()
    return time.perf_counter() - start, value


def report(name, batch_s, loop_s, worst, target):
    print(f"{name}: batch {batch_s:.3f} s, loop of simulate {loop_s:.1f} s (scaled), "
          f"ratio loop/batch {loop_s / batch_s:.0f}x, target <= {target} s -> {'met' if batch_s <= target else 'NOT met'}; "
          f"max |batch - single| = {worst:.1e}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--loop-sample", type=int, default=50)
    sample = parser.parse_args().loop_sample
    rng = np.random.default_rng(0)

    pendulum = chain.cartesian_pendulum().compile()
    q0, qd0 = chain.pendulum_initial_state(1.0)
    gains = parameter_grid(alpha=np.linspace(0, 40, 50), beta=np.linspace(0, 40, 50))
    stabs = [udk.Baumgarte(g["alpha"], g["beta"]) for g in gains]
    run = lambda: sweep(pendulum, (0.0, 5.0), q0, qd0, stabilization=stabs, step=0.01, progress=False)  # noqa: E731
    run()  # compile the batch functions
    batch_s, result = timed(run)
    picks = rng.choice(len(stabs), sample, replace=False)
    loop_s, worst = 0.0, 0.0
    for i in picks:
        try:
            dt, single = timed(lambda: udk.simulate(pendulum, (0.0, 5.0), q0, qd0, stabilization=stabs[i], step=0.01))
        except udk.UnstableGainError:
            continue
        loop_s += dt
        worst = max(worst, float(np.abs(single.q - result.q[i]).max()))
    report("stabilized pendulum, 2500 runs", batch_s, loop_s * len(stabs) / sample, worst, 1)

    model = incline_friction.model().compile()
    grid = [dict(p, mu_s=p["mu"]) for p in parameter_grid(alpha=np.linspace(0.1, 1.2, 50), mu=np.linspace(0.0, 1.2, 50))]
    small = grid[:: len(grid) // sample]
    states = [incline_friction.initial_state(3.0, alpha=p["alpha"]) for p in small]
    q0, qd0 = np.array([s[0] for s in states]), np.array([s[1] for s in states])
    batch_s, result = timed(lambda: sweep(model, (0.0, 2.0), q0, qd0, params=small, step=0.005, progress=False))
    batch_s *= len(grid) / len(small)
    print(f"friction map, 2500 points: {batch_s:.1f} s (scaled from {len(small)}); runs member by member "
          "through simulate (no batched friction path yet), so batch and loop are the same; target <= 2 s -> "
          f"{'met' if batch_s <= 2 else 'NOT met'}")


if __name__ == "__main__":
    main()
