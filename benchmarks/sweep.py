"""The two sweep targets of issue 12, measured against a loop of single `simulate` runs.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/sweep.py [--loop-sample 50] [--repeat 3]

1. 2500 five-second RK4 runs (step 0.01) of the Baumgarte-stabilized Cartesian
   pendulum, a 50 x 50 grid of (alpha, beta) in [0, 40]^2 (target: <= 1 s).
2. A 2500-point (alpha, mu) map of the incline with friction (mu_s = mu), 2 s,
   RK4 step 0.005, each member sliding up, stopping, then sticking or sliding
   back on its own (target: <= 2 s).

The loop time is measured on ``--loop-sample`` members and scaled to 2500
(a full loop takes minutes); the batch is measured in full (after one warm-up
run that builds the lambdified batch functions), ``--repeat`` times interleaved
with shares of the single runs (the median is reported), and its largest difference
in ``q`` and ``q'`` from the sampled single runs is printed (friction runs:
at the grid times; their modes, switching instants included, must be equal).
The machine's load average is printed with the numbers.
"""

import argparse
import os
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


def interleaved(batch, single, picks, repeat):
    """Median batch time over ``repeat`` runs, each followed by a share of the sampled single runs.

    Returns the median batch time, the last batch result and the single runs (by member).
    """
    times, singles, result = [], {}, None
    chunks = np.array_split(picks, repeat)
    for chunk in chunks:
        dt, result = timed(batch)
        times.append(dt)
        for i in chunk:
            singles[int(i)] = timed(lambda: single(i))
    return float(np.median(times)), result, singles


def main():
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    parser = argparse.ArgumentParser()
    parser.add_argument("--loop-sample", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3, help="batch runs (the median is reported)")
    args = parser.parse_args()
    sample, repeat = args.loop_sample, args.repeat
    rng = np.random.default_rng(0)

    pendulum = chain.cartesian_pendulum().compile()
    q0, qd0 = chain.pendulum_initial_state(1.0)
    gains = parameter_grid(alpha=np.linspace(0, 40, 50), beta=np.linspace(0, 40, 50))
    stabs = [udk.Baumgarte(g["alpha"], g["beta"]) for g in gains]
    run = lambda: sweep(pendulum, (0.0, 5.0), q0, qd0, stabilization=stabs, step=0.01, progress=False)  # noqa: E731

    def single(i):
        try:
            return udk.simulate(pendulum, (0.0, 5.0), q0, qd0, stabilization=stabs[i], step=0.01)
        except udk.UnstableGainError as exc:
            return exc

    run()  # build the lambdified batch functions
    picks = rng.choice(len(stabs), sample, replace=False)
    batch_s, result, singles = interleaved(run, single, picks, repeat)
    loop_s, worst = 0.0, 0.0
    for i, (dt, one) in singles.items():
        loop_s += dt
        if isinstance(one, Exception):
            assert result.status[i] == "refused" and result.message[i] == str(one)
            continue
        worst = max(worst, float(np.abs(one.q - result.q[i]).max()), float(np.abs(one.qd - result.qd[i]).max()))
    report("stabilized pendulum, 2500 runs", batch_s, loop_s * len(stabs) / sample, worst, 1)

    model = incline_friction.model().compile()
    grid = [dict(p, mu_s=p["mu"]) for p in parameter_grid(alpha=np.linspace(0.1, 1.2, 50), mu=np.linspace(0.0, 1.2, 50))]
    states = [incline_friction.initial_state(3.0, alpha=p["alpha"]) for p in grid]
    q0, qd0 = np.array([s[0] for s in states]), np.array([s[1] for s in states])
    run = lambda: sweep(model, (0.0, 2.0), q0, qd0, params=grid, step=0.005, progress=False)  # noqa: E731
    run()
    picks = rng.choice(len(grid), sample, replace=False)
    batch_s, result, singles = interleaved(
        run, lambda i: udk.simulate(model, (0.0, 2.0), q0[i], qd0[i], params=grid[i], step=0.005), picks, repeat)
    loop_s, worst = 0.0, 0.0
    for i, (dt, one) in singles.items():
        loop_s += dt
        on_grid = np.isin(one.t, result.t)  # the single run also samples its switching instants
        worst = max(worst, float(np.abs(one.q[on_grid] - result.q[i]).max()),
                    float(np.abs(one.qd[on_grid] - result.qd[i]).max()))
        assert np.array_equal(one.modes, result.modes[i]), f"modes differ for member {i}"
    report("friction map, 2500 points", batch_s, loop_s * len(grid) / sample, worst, 2)


if __name__ == "__main__":
    main()
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
