"""Cold start: ``import udk_notebooks.widgets``, and the first explorer on screen, each in a fresh interpreter.

Run from the repository root::

    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/cold_start.py [--repeats 5] [--explorer inclined_line]
        [--clock cpu]          # judge the target on CPU seconds (steadier on a loaded machine) instead of wall
        [--in-kernel]          # run each measurement in a new IPython kernel instead of a bare interpreter
        [--no-precompile]      # leave udk_notebooks' bytecode cache as it is (see below)
        [--importtime 15]      # also list the 15 modules whose import costs most (python -X importtime)
        [--profile 25]         # also list the 25 functions of the first explorer costliest under cProfile
        [--kept warm]          # only with the explorer's code kept on disk (warm) or with nothing kept (none)

Targets (issue 23): each <= 1 s, kernel side. Reported, not asserted.

Each repeat starts a new Python process (nothing of the package imported, no
compiled model cached) and times inside it, from just before the first import to
just after. By default that process is a bare interpreter, which also pays for
what every Jupyter kernel has loaded before its first cell (IPython, traitlets,
comm: about 0.05 s); with ``--in-kernel`` it is a new IPython kernel (ipykernel,
started through jupyter_client), the code run as its first cell: the kernel side
exactly, start-up of the kernel itself not counted. The two times are:

* **import**: ``import udk_notebooks.widgets``;
* **first explorer**: that import, then constructing the explorer, which
  computes its first result and renders its first frame (the PNG route on the
  Agg backend: the PNG is encoded when the constructor returns). Only the
  kernel's side: the browser's own drawing is not counted.

Each first explorer is measured twice (``--kept both``, the default). **warm**: its
compiled models' code is kept on disk (:func:`udk_notebooks._kept_code.compile_kept`), as
in every kernel after ``make lab`` or ``binder/postBuild`` ran ``python -m
udk_notebooks.widgets.warm``, or after any earlier session on the machine: the
measured processes share a cache folder that one unmeasured run of the explorer
filled. **none**: nothing kept, as on a machine where nothing ran before: each
measured process gets an empty cache folder of its own, so it imports sympy, derives
and generates code. The issue's target is read on the warm line (the state a student's
kernel starts in); the none line says what warming saves.

Wall and CPU seconds are both printed: on a loaded machine the CPU time of the
process is the steadier of the two. The median over the repeats is reported.
Each first-explorer line also names the costly libraries of :data:`OPTIONAL` that
its first frame loaded: ``scipy.integrate`` alone (with ``scipy.optimize``,
``scipy.special`` and scipy's array-API layer, which it imports) costs a new
kernel about 0.3 s, the difference between an explorer whose first run goes
through ``solve_ivp`` and one whose first run does not.

Before measuring, the package's modules are compiled to bytecode (``compileall``,
into ``udk_notebooks/**/__pycache__``), as ``pip install`` does and as the first
import of an editable install does: a kernel reads the cached bytecode and never
compiles the package's source. Where ``PYTHONDONTWRITEBYTECODE`` is set and no
cache exists, every measured process would compile the source it imports first
(some 9 500 lines for the first explorer, about 0.1 s), a cost no installed
package pays; ``--no-precompile`` keeps that behaviour, for comparison with
measurements taken so.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import platform
import subprocess
import sys
import tempfile

os.environ["OPENBLAS_NUM_THREADS"] = "1"

TARGET = 1.0  # seconds, each measurement

IMPORT = """
import json, time
w0, c0 = time.perf_counter(), time.process_time()
import udk_notebooks.widgets
print(json.dumps({"wall": time.perf_counter() - w0, "cpu": time.process_time() - c0}))
"""

FIRST = """
import json, time
import matplotlib
matplotlib.use("Agg")  # the PNG route, as in a test or an inline notebook; not counted: a kernel has its backend
w0, c0 = time.perf_counter(), time.process_time()
import udk_notebooks.widgets as widgets
explorer = widgets.EXPLORERS[{name!r}]()
assert explorer.png and not explorer.error, explorer.error  # the first frame is on screen
seconds = {{"wall": time.perf_counter() - w0, "cpu": time.process_time() - c0}}
import sys
print(json.dumps({{**seconds, "loaded": [name for name in {optional!r} if name in sys.modules]}}))
"""

OPTIONAL = ("sympy", "scipy.integrate", "scipy.optimize", "scipy.linalg", "scipy.special", "numpy.f2py")
"""Costly libraries a first frame may do without (issue 23); each measurement names those it loaded."""


PROFILE = """
import cProfile, pstats
import matplotlib
matplotlib.use("Agg")
profile = cProfile.Profile()
profile.enable()
import udk_notebooks.widgets as widgets
explorer = widgets.EXPLORERS[{name!r}]()
profile.disable()
assert explorer.png and not explorer.error, explorer.error
pstats.Stats(profile).sort_stats("cumulative").print_stats({top})
"""


def first(name: str) -> str:
    """The code that times the first frame of explorer ``name`` and names the optional libraries it loaded."""
    return FIRST.format(name=name, optional=OPTIONAL)


def run(code: str) -> dict[str, float]:
    """Seconds (wall and CPU) printed by ``code`` in a fresh interpreter."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=os.environ)
    if out.returncode:
        raise SystemExit(f"the measured process failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_in_kernel(code: str) -> dict[str, float]:
    """Seconds (wall and CPU) printed by ``code`` run as the first cell of a new IPython kernel."""
    from jupyter_client.manager import start_new_kernel  # comes with ipykernel (the lab and test extras)

    # this interpreter's ipykernel and environment; its log (a warning on plain TCP) is not the measurement's
    manager, client = start_new_kernel(kernel_name="python3", stderr=subprocess.DEVNULL)
    printed, errors = [], []

    def collect(message):
        content = message["content"]
        if message["msg_type"] == "stream" and content["name"] == "stdout":
            printed.append(content["text"])
        elif message["msg_type"] == "error":
            errors.append("\n".join(content["traceback"]))

    try:
        client.execute_interactive(code, output_hook=collect, timeout=600)
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    if errors:
        raise SystemExit("the measured cell failed:\n" + "\n".join(errors))
    return json.loads("".join(printed).strip().splitlines()[-1])


def median(values: list[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else 0.5 * (ordered[middle - 1] + ordered[middle])


CACHE_ENV = "UDK_NOTEBOOKS_CACHE"  # udk_notebooks._kept_code.CACHE_ENV, not imported: this process stays light


def measure(label: str, code: str, repeats: int, clock: str = "wall", runner=run, kept: str | None = None) -> None:
    """Median seconds of ``repeats`` runs of ``code``; ``kept`` "warm" or "none" chooses the cache folder (above)."""
    before = os.environ.get(CACHE_ENV)
    with tempfile.TemporaryDirectory(prefix="udk-cold-") as scratch:
        samples = []
        if kept == "warm":
            os.environ[CACHE_ENV] = os.path.join(scratch, "warm")
            runner(code)  # fills the folder; not measured
        for i in range(repeats):
            if kept == "none":
                os.environ[CACHE_ENV] = os.path.join(scratch, f"empty-{i}")
            samples.append(runner(code))
        if before is None:
            os.environ.pop(CACHE_ENV, None)
        else:
            os.environ[CACHE_ENV] = before
        if kept is not None:
            label = f"{label} ({kept})"
    seconds = {name: median([s[name] for s in samples]) for name in ("wall", "cpu")}
    word = "meets" if seconds[clock] <= TARGET else "misses"
    loaded = sorted({name for s in samples for name in s.get("loaded", ())})
    print(f"{label:>34}: median {seconds['wall']:6.2f} s wall, {seconds['cpu']:6.2f} s cpu over {repeats} runs "
          f"({word} the target <= {TARGET:.0f} s {clock})" + (f"; loads {', '.join(loaded)}" if loaded else ""))


def import_costs(code: str, top: int) -> None:
    """The ``top`` modules with the largest cumulative import time (``python -X importtime``)."""
    out = subprocess.run([sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True,
                         env=os.environ)
    rows = []
    for line in out.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _, cumulative, name = line[len("import time:"):].split("|")
        rows.append((int(cumulative), name.rstrip()))
    depth = lambda name: len(name) - len(name.lstrip())  # noqa: E731  (indentation: nesting of the import)
    print(f"\n  largest cumulative import times (microseconds), python -X importtime:")
    for cumulative, name in sorted(rows, reverse=True)[:top]:
        print(f"  {cumulative:>10}  {'  ' * (depth(name) // 2)}{name.strip()}")


def profile_costs(name: str, top: int) -> None:
    """The ``top`` functions with the largest cumulative time of explorer ``name``'s first frame (cProfile).

    Where the time goes: imports, the first computation (deriving, compiling, simulating) and the
    figure (make_figure, the first full draw, mathtext, the PNG). cProfile slows pure-Python code
    several times more than compiled code: read the shares, not the seconds.
    """
    out = subprocess.run([sys.executable, "-c", PROFILE.format(name=name, top=top)], capture_output=True, text=True,
                         env=os.environ)
    if out.returncode:
        raise SystemExit(f"the profiled process failed:\n{out.stderr}")
    print(f"\n  cProfile of the first explorer on screen ({name}), by cumulative time:")
    print(out.stdout.rstrip())


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="fresh processes per measurement (default 5)")
    parser.add_argument("--explorer", default="inclined_line",
                        help="the explorer to construct, a key of udk_notebooks.widgets.EXPLORERS, or 'all'")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="the seconds judged against the target (default wall; cpu is steadier under load)")
    parser.add_argument("--in-kernel", action="store_true",
                        help="measure in a new IPython kernel per run (as a notebook's first cell), not a bare interpreter")
    parser.add_argument("--no-precompile", action="store_true",
                        help="do not write udk_notebooks' bytecode cache first (see the module docstring)")
    parser.add_argument("--importtime", type=int, default=0, metavar="N",
                        help="also list the N costliest imports of the first explorer")
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="also list the N functions of the first explorer costliest under cProfile")
    parser.add_argument("--kept", choices=("both", "warm", "none"), default="both",
                        help="the first explorer with its code kept on disk, with nothing kept, or both (default)")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    if args.importtime < 0 or args.profile < 0:
        parser.error("--importtime and --profile must be at least 0")
    from udk_notebooks.widgets import EXPLORERS  # the names only: no explorer module is imported

    names = sorted(EXPLORERS) if args.explorer == "all" else [args.explorer]
    unknown = set(names) - set(EXPLORERS)
    if unknown:
        parser.error(f"--explorer must be 'all' or one of {', '.join(sorted(EXPLORERS))}")

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    if not args.no_precompile:
        import udk_notebooks

        if not compileall.compile_dir(os.path.dirname(udk_notebooks.__file__), quiet=1):
            raise SystemExit("udk_notebooks does not compile to bytecode")
    where = "new IPython kernel" if args.in_kernel else "fresh interpreter"
    cache = "as found" if args.no_precompile else "written first"
    print(f"python {platform.python_version()}, {os.cpu_count()} cpu(s), load average {load:.2f} at start, "
          f"OPENBLAS_NUM_THREADS=1, {where} per run, package bytecode cache {cache}")
    runner = run_in_kernel if args.in_kernel else run
    measure("import udk_notebooks.widgets", IMPORT, args.repeats, args.clock, runner)
    states = ("warm", "none") if args.kept == "both" else (args.kept,)
    for name in names:
        for kept in states:
            measure(f"first explorer on screen: {name}", first(name), args.repeats, args.clock, runner, kept)
    if args.importtime:
        import_costs(first(names[0]), args.importtime)
    if args.profile:
        profile_costs(names[0], args.profile)


if __name__ == "__main__":
    main()
