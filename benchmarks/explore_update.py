"""How long one slider change of a generic explorer (``udk.explore``) takes, from the new value to new pixels.

Run from the repository root::

    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/explore_update.py [--changes 100] [--model cartesian|minimal]
        [--step 0.02] [--t-end 5]

The explorer is ``udk.explore`` of the double pendulum (issue 21): the catalogue's
Cartesian model (six body coordinates, four pin constraints; ``--model minimal``
for the two joint angles), its catalogue drawing, the default panels
(coordinates, forces, drift), RK4 with the given step. On the Agg route each
change sets one slider the way its callback does and times until the new PNG
is in the Output widget (compute, move the artists, blit or draw, encode).

Workload **drag** (as ``explorer_update.py``): runs of 5 to 20 changes of one
parameter slider in one direction, each 0.5 % to 2 % of its range, turning
back at the ends. Target (issue 21): p50 <= 50 ms. Reported, not asserted; the
split into the run (``simulate``) and the drawing is printed beside it.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy: one BLAS thread (design notes)

import argparse
import time

import matplotlib

matplotlib.use("Agg")

import numpy as np
from _timing import timing_into

import udk_notebooks as udk
from udk_notebooks.examples import double_pendulum as dp

TARGET = 0.050  # seconds, p50 of a drag


def build(kind: str, step: float, t_end: float):
    """The generic explorer of the double pendulum in ``kind`` coordinates."""
    if kind == "cartesian":
        model = dp.cartesian_model().compile()

        def start(l1, l2, **_):
            return dp.to_cartesian(*dp.initial_state(2.0, 1.0), l1=l1, l2=l2)
    else:
        model = dp.minimal_model().compile()

        def start(**_):
            return dp.initial_state(2.0, 1.0)
    return udk.explore(model, start, mechanism=lambda **p: dp.mechanism(kind, "rods", **p), t_end=t_end, step=step)


def plan_drag(explorer, count: int, rng: np.random.Generator) -> list[tuple[str, float]]:
    """Runs of small moves of one model-parameter slider at a time."""
    names = list(explorer.compiled.parameter_names)
    plan = []
    while len(plan) < count:
        name = names[rng.integers(len(names))]
        control = explorer.controls[name]
        value, span = control.value, control.max - control.min
        direction = 1.0 if rng.random() < 0.5 else -1.0
        for _ in range(int(rng.integers(5, 21))):
            value += direction * rng.uniform(0.005, 0.02) * span
            if not control.min <= value <= control.max:
                direction = -direction
                value = min(max(value, control.min), control.max)
            plan.append((name, float(value)))
    return plan[:count]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changes", type=int, default=100)
    parser.add_argument("--model", choices=("cartesian", "minimal"), default="cartesian")
    parser.add_argument("--step", type=float, default=0.02)
    parser.add_argument("--t-end", type=float, default=5.0)
    parser.add_argument("--seed", type=int, default=21)
    parser.add_argument("--clock", choices=["wall", "cpu"], default="wall",
                        help="wall clock (default) or the process's CPU time (steadier under load)")
    args = parser.parse_args(argv)
    clock = time.process_time if args.clock == "cpu" else time.perf_counter

    started = time.perf_counter()
    explorer = build(args.model, args.step, args.t_end)
    print(f"built in {time.perf_counter() - started:.2f} s (compile, first run, first full draw)")
    plan = plan_drag(explorer, args.changes, np.random.default_rng(args.seed))

    spent_running = []
    explorer.compute = timing_into(explorer.run, clock, spent_running)
    figure = explorer.figure
    full_draws = []
    figure.canvas.mpl_connect("draw_event", lambda event: full_draws.append(1))
    totals, redrawn, full = [], 0, 0
    for name, value in plan:
        limits = [(ax.get_xlim(), ax.get_ylim()) for ax in figure.axes]
        drawn = len(full_draws)
        t0 = clock()
        explorer.controls[name].value = value  # the slider's callback
        totals.append(clock() - t0)
        full += len(full_draws) > drawn
        redrawn += len(full_draws) > drawn or limits != [(ax.get_xlim(), ax.get_ylim()) for ax in figure.axes]
    totals, running = np.array(totals), np.array(spent_running)
    drawing = totals - running[-totals.size:]
    p50 = float(np.percentile(totals, 50))
    print(f"{args.model} double pendulum, rk4 step {args.step} s, horizon {args.t_end} s, {args.changes} drag changes")
    print(f"  update    p50 {1e3 * p50:7.1f} ms   p90 {1e3 * np.percentile(totals, 90):7.1f} ms")
    print(f"  simulate  p50 {1e3 * np.percentile(running, 50):7.1f} ms")
    print(f"  drawing   p50 {1e3 * np.percentile(drawing, 50):7.1f} ms (artists, blit or full draw, PNG)")
    print(f"  redraws   {redrawn}/{totals.size} changes drew some axes again ({full} the whole figure), "
          f"{args.clock} clock")
    print(f"  errors shown: {int(bool(explorer.error))}, last warning: {explorer.warning or 'none'}")
    print(f"target p50 <= {1e3 * TARGET:.0f} ms: {'met' if p50 <= TARGET else 'NOT met'} (machine load matters)")


if __name__ == "__main__":
    main()
