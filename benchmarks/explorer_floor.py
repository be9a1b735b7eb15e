"""Where a slider update's time goes: drawing, the equation of motion, and the integrator around it.

Run from the repository root::

    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/explorer_floor.py [--explorer NAME|all] [--changes 20]

The drag workload of ``benchmarks/explorer_update.py`` (the same plan, seed and Agg route),
instrumented: every right-hand side an integrator calls goes through
``simulation._counted_rate``, which this script wraps to count the evaluations and to time
each one. Per update (p50 over the changes, wall clock: run it on an idle machine):

* **update**: the whole callback, new value to new PNG;
* **model**: the explorer's ``compute`` (every simulation of the update);
* **drawing**: update minus model;
* **evals** and **in rate**: how many times the integrators evaluated the equation of motion,
  and the time spent inside those evaluations (the fused or bound rate, its checks included);
* **rest of model**: model minus in-rate time: the integrator's own work, sampling, the
  divergence and singularity checks, building the result.

**floor** = drawing + in-rate time: what an update would still cost with an integrator and
bookkeeping that took no time at all, at the same number of evaluations of the same rate. Where
the floor is above the 50 ms drag target (issue 23), the target needs fewer evaluations (looser
tolerances, fewer or shorter runs, fewer output samples) or a cheaper evaluation (compiled code),
not a leaner integrator or drawing path. Reported, not asserted; the instrumentation adds a timer
pair per evaluation, so "update" here reads a little above ``explorer_update.py``'s.
"""

from __future__ import annotations

import argparse
import time

import explorer_update as eu  # also pins BLAS to one thread and selects Agg before numpy and pyplot load
import numpy as np
from _timing import timing_into

clock = time.perf_counter  # wall clock: two calls per evaluation must cost little; run it on an idle machine


def instrument():
    """Wrap ``simulation._counted_rate`` so that each evaluation is counted and timed; returns the tallies."""
    from udk_notebooks import simulation

    tally = {"evals": 0, "in_rate": 0.0}
    original = simulation._counted_rate

    def counted_rate(rate, budget):
        def timed(t, y):
            started = clock()
            try:
                return rate(t, y)
            finally:
                tally["in_rate"] += clock() - started
                tally["evals"] += 1

        return original(timed, budget)

    simulation._counted_rate = counted_rate
    return tally


def measure(name: str, changes: int, seed: int, tally: dict) -> dict[str, np.ndarray]:
    explorer = eu.new_explorer(name)
    model_times: list[float] = []
    explorer.compute = timing_into(explorer.compute, clock, model_times)  # as explorer_update.py times it
    plan = eu.plan_drag(explorer, changes + eu.WARMUP, np.random.default_rng(seed))
    rows = []
    for i, (slider, value) in enumerate(plan):
        model_times.clear()
        tally.update(evals=0, in_rate=0.0)
        started = clock()
        explorer.controls[slider].value = value  # as the slider's callback does
        update = clock() - started
        if i >= eu.WARMUP and not explorer.error:  # a refused value draws nothing: not an update to time
            model = sum(model_times)
            rows.append((update, model, update - model, tally["evals"], tally["in_rate"], model - tally["in_rate"]))
    explorer.close()
    columns = np.array(rows).T if rows else np.zeros((6, 0))
    return dict(zip(("update", "model", "drawing", "evals", "in_rate", "rest"), columns))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--explorer", default="all", help="a name of udk_notebooks.widgets.EXPLORERS, or all")
    parser.add_argument("--changes", type=int, default=20, help="timed drag changes per explorer")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    names = sorted(eu.registry()) if args.explorer == "all" else [args.explorer]
    tally = instrument()
    print(f"drag workload of explorer_update.py, {args.changes} changes, wall clock, p50 per update; "
          f"target {eu.TARGET_DRAG * 1e3:.0f} ms")
    print(f"{'explorer':>22} {'update':>8} {'drawing':>8} {'model':>8} {'evals':>6} {'in rate':>8} "
          f"{'us/eval':>8} {'rest':>8} {'floor':>8}  floor vs target")
    for name in names:
        m = measure(name, args.changes, args.seed, tally)
        if not m["update"].size:
            print(f"{name:>22}  every change refused")
            continue
        p50 = {key: float(np.median(values)) for key, values in m.items()}
        floor = float(np.median(m["drawing"] + m["in_rate"]))
        per_eval = p50["in_rate"] / p50["evals"] * 1e6 if p50["evals"] else float("nan")
        verdict = "above: needs fewer or cheaper evaluations" if floor > eu.TARGET_DRAG else "below"
        print(f"{name:>22} {p50['update'] * 1e3:7.1f}ms {p50['drawing'] * 1e3:7.1f}ms {p50['model'] * 1e3:7.1f}ms "
              f"{p50['evals']:6.0f} {p50['in_rate'] * 1e3:7.1f}ms {per_eval:8.2f} {p50['rest'] * 1e3:7.1f}ms "
              f"{floor * 1e3:7.1f}ms  {verdict}")


if __name__ == "__main__":
    main()
