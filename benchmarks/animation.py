"""Seconds to write an animation's frames (``MechanismAnimation.to_jshtml``), three routes, interleaved.

    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/animation.py [--system growing_circle] [--frames 80] [--repeat 3]

Every lesson cell that calls ``udk.animate``, and every explorer of the static site, writes
its frames this way; the lessons' static execution (the site, the suite) writes some twenty.
The routes, timed alternately in one process (median of ``--repeat``):

* **matplotlib**: ``FuncAnimation.to_jshtml`` as matplotlib does it (each frame drawn twice,
  laid out anew each time);
* **full draws**: ``to_jshtml`` with one layout (settled on the first frame) and one full draw
  per frame (the blitting switched off);
* **blitted**: ``to_jshtml`` as shipped: the still part drawn once, the moving artists over it.

``tests/test_drawing.py`` checks that the three give the same frames (within the layout's
convergence for matplotlib's route). Reported, not asserted.
"""

from __future__ import annotations

import argparse
import importlib
import os
import statistics
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import matplotlib  # noqa: E402

matplotlib.use("Agg")

import numpy as np  # noqa: E402

import udk_notebooks as udk  # noqa: E402


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--system", default="growing_circle", help="a module of udk_notebooks.examples")
    parser.add_argument("--frames", type=int, default=80)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    system = importlib.import_module(f"udk_notebooks.examples.{args.system}")
    horizon = 3.0
    run = udk.simulate(system.model(), (0.0, horizon), *system.initial_state(),
                       t_eval=np.linspace(0.0, horizon, 301))
    mechanism = system.mechanism()

    def matplotlibs(a):
        return a.animation.to_jshtml(fps=a.fps, default_mode="loop")

    def full_draws(a):
        a._moving = None
        return a.to_jshtml()

    def blitted(a):
        return a.to_jshtml()

    routes = {"matplotlib": matplotlibs, "full draws": full_draws, "blitted": blitted}
    seconds: dict[str, list[float]] = {name: [] for name in routes}
    for _ in range(args.repeat):
        for name, write in routes.items():
            animation = udk.animate(run, mechanism, frames=args.frames)
            started = time.perf_counter()
            write(animation)
            seconds[name].append(time.perf_counter() - started)
    print(f"{args.system}, {args.frames} frames, load average {os.getloadavg()[0]:.2f} at the end, "
          f"median of {args.repeat}:")
    for name, values in seconds.items():
        print(f"  {name:>11}: {statistics.median(values):6.2f} s ({1e3 * statistics.median(values) / args.frames:5.1f} ms a frame)")


if __name__ == "__main__":
    main()
