"""How long one slider change of the inclined-line explorer takes, from the new value to a redrawn figure.

Run from the repository root::

    .venv/bin/python benchmarks/explorer_update.py [--changes 200] [--no-ipympl]

Each change sets one slider from Python, as the slider's callback would
(cycling through m, slope, g, c1, c2, horizon with values drawn inside each
slider's range), then forces a synchronous ``fig.canvas.draw()`` so that the
time includes real rasterization. Two routes are timed:

* **Agg** (the headline number): the explorer built on the Agg backend takes
  its PNG route, in which the update itself already rasterizes once and
  encodes a PNG; the forced draw then rasterizes a second time, so this
  total is an upper bound of what a user waits for.
* **ipympl** (when installed, run headless): the canvas route of
  ``%matplotlib widget``. ``draw_idle`` only asks the browser to request a
  frame, so the forced draw is the one rasterization the kernel does.

Target: p50 <= 50 ms. Reported, not asserted.
"""

from __future__ import annotations

import os

os.environ["OPENBLAS_NUM_THREADS"] = "1"  # before numpy: numpy's and scipy's OpenBLAS must not fight over cores

import argparse
import importlib.util
import platform
import time

import matplotlib

matplotlib.use("Agg")

import numpy as np

TARGET_P50 = 0.050  # seconds
SLIDERS = ("m", "slope", "g", "c1", "c2", "horizon")
WARMUP = 10


def measure(changes: int = 200, seed: int = 0) -> dict[str, np.ndarray]:
    """Seconds per change: ``total`` (set + forced draw) and its parts, plus the model alone."""
    from udk_notebooks.widgets import InclinedLineExplorer

    explorer = InclinedLineExplorer()
    figure = explorer.figure
    rng = np.random.default_rng(seed)
    plan = []
    for i in range(changes + WARMUP):
        name = SLIDERS[i % len(SLIDERS)]
        slider = explorer.controls[name]
        plan.append((name, float(rng.uniform(slider.min, slider.max))))

    times = {key: [] for key in ("total", "set", "draw", "compute", "cpu")}
    for i, (name, value) in enumerate(plan):
        cpu0 = time.process_time()
        t0 = time.perf_counter()
        explorer.controls[name].value = value  # compute, then move the artists
        t1 = time.perf_counter()
        figure.canvas.draw()  # synchronous rasterization
        t2 = time.perf_counter()
        cpu = time.process_time() - cpu0
        if explorer.error:
            raise RuntimeError(f"the explorer reported an error for {name} = {value}: {explorer.error}")
        t3 = time.perf_counter()
        explorer.compute(**explorer.values)  # the model alone, for the breakdown
        t4 = time.perf_counter()
        if i >= WARMUP:
            for key, seconds in (("total", t2 - t0), ("set", t1 - t0), ("draw", t2 - t1),
                                 ("compute", t4 - t3), ("cpu", cpu)):
                times[key].append(seconds)
    return {key: np.array(value) for key, value in times.items()}


def report(route: str, times: dict[str, np.ndarray]) -> float:
    ms = {key: 1e3 * value for key, value in times.items()}
    print(f"\n{route}")
    print(f"{'':>32} {'p50':>9} {'p95':>9}")
    rows = [
        ("total: set value + forced draw", "total"),
        ("  set value (callback)", "set"),
        ("  forced fig.canvas.draw()", "draw"),
        ("total, CPU time only", "cpu"),
        ("model compute alone", "compute"),
    ]
    for label, key in rows:
        p50, p95 = np.percentile(ms[key], [50, 95])
        print(f"{label:>32} {p50:7.1f}ms {p95:7.1f}ms")
    return float(np.percentile(times["total"], 50))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changes", type=int, default=200, help="slider changes to time (default 200)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-ipympl", action="store_true", help="time the Agg route only")
    args = parser.parse_args(argv)

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"InclinedLineExplorer: one slider change -> redrawn figure, {args.changes} changes per route")
    print(f"python {platform.python_version()}, matplotlib {matplotlib.__version__}, {os.cpu_count()} cpu(s), "
          f"load average {load:.2f} at start, OPENBLAS_NUM_THREADS=1")

    p50 = report("Agg backend (PNG route; the update draws once, the forced draw again)",
                 measure(args.changes, args.seed))
    verdict = "meets" if p50 <= TARGET_P50 else "misses"
    print(f"Agg: p50 = {1e3 * p50:.1f} ms {verdict} the target p50 <= {1e3 * TARGET_P50:.0f} ms")

    if not args.no_ipympl and importlib.util.find_spec("ipympl"):
        matplotlib.use("module://ipympl.backend_nbagg")
        p50 = report("ipympl canvas, headless (%matplotlib widget route; one rasterization)",
                     measure(args.changes, args.seed))
        verdict = "meets" if p50 <= TARGET_P50 else "misses"
        print(f"ipympl: p50 = {1e3 * p50:.1f} ms {verdict} the target p50 <= {1e3 * TARGET_P50:.0f} ms")


if __name__ == "__main__":
    main()
