"""Run browser tests again and again beside a CPU burner, and count the passes.

The browser suite passed on a quiet machine and failed at load 3 to 5 (a class of 30 on
one JupyterHub node is such a machine). This script loads the machine with busy Python
processes (``--burners``), runs the chosen tests ``--runs`` times, each run in a fresh pytest
process (so a fresh JupyterLab, Voila and browser), and prints one line per run (with the
failed test and its message) and the longest streak of passes. The burners are stopped by
their PIDs at the end. Issue 24 asks for 20 passes in a row.

The soak set (used when no test ids are given) is one test per failure mode issue 24 names,
each the cheapest test that shows it, so that 20 runs fit in about an hour on a loaded
2-core machine:

  figure never appears, keyboard
      test_lesson_browser.py::test_lesson_01_runs_and_slider_redraws: lesson 01's explorer
      (ipympl) must show its first frame, then redraw after arrow-key presses on its slider.
  first drag lost
      test_every_lesson_browser.py::...[07_...]: a mouse drag of lesson 07's first slider right
      after Run All must reach the kernel (read back from it) and redraw, then every explorer of
      the lesson must redraw after a keyboard step. Lesson 07's explorer (inclined line) is the
      cheapest of the three lessons that lost it; the loss came from the page (a pointercancel
      on the figure image), not from the explorer's cost.
  reopened lesson
      test_reopen_browser.py: lesson 07 saved, its kernel shut down, the page loaded again
      must show the "run this cell" note instead of "model not found".
  app page, keyboard
      test_app_browser.py::...[inclined_line]: an explorer as a Voila app must show its figure
      (its first frame goes out when the page connects, long after the kernel ran), fit
      1366x768, and move its slider and its frame slider by keyboard.

Left out, with the reason: test_explore_browser.py (keyboard on every control kind of
``udk.explore``: no failure mode of its own beyond "keyboard", and it costs about 40 s a run);
the other lessons and app pages (the same code paths, many times the cost); the layout and
site tests (they measure boxes and static pages, nothing that a loaded machine changes).
Measured under load (2 cores shared with other work, one burner): with the explore test too, a
run took 386 s at load 8 (explore 39 s); the set above took 378 to 396 s a run at load 14 to 18
(JupyterLab start 32 s, lesson 01 54 s, first drag 59 s, reopened lesson 98 s, Voila start 46 s,
app page 22 s, teardown 14 s), 483 s at load 16 to 19, and 183 to 209 s at load 11 to 15. So 20
runs take about an hour at load 11 (the burner beside other work) and two hours or more at load 16
and above. Every test in the set is there for a failure mode of its own, so none was dropped to
make the hour.

Each run is kept light: one latency sample instead of ten (``UDK_LATENCY_SAMPLES=1``), no
xdist workers, Chromium and JupyterLab started once per run. Run from the repository root::

    CI=true OPENBLAS_NUM_THREADS=1 nice -n 5 .venv/bin/python benchmarks/browser_soak.py --runs 20 \\
        --burners 1 --log test-artifacts/soak.log

    # other tests, e.g. lesson 01 alone with its ten latency samples
    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/browser_soak.py --runs 20 --samples 10 \\
        tests/browser/test_lesson_browser.py::test_lesson_01_runs_and_slider_redraws

Options: ``--burners N`` (default: one per core; the burners run at the soak's own nice level),
``--samples K`` (latency samples of the lesson 01 test, default 1), ``--stop-after S`` (seconds;
no new run starts after that), ``--log FILE`` (each run's pytest output, appended: a failed
test's report holds the page's figures, the browser console, the explorers' delivery state in
the kernel and the server log). Exit status 0 only when every run passed. Timings are not
asserted (see benchmarks/).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# One test per failure mode of issue 24 (the module docstring says why each, and what is left out).
SOAK_SET = {
    "figure never appears, keyboard":
        "tests/browser/test_lesson_browser.py::test_lesson_01_runs_and_slider_redraws",
    "first drag lost":
        "tests/browser/test_every_lesson_browser.py::test_lesson_runs_and_every_explorer_responds"
        "[07_analytical_dynamics_experimental.ipynb]",
    "reopened lesson":
        "tests/browser/test_reopen_browser.py::test_reopened_lesson_says_to_run_the_explorer_cell",
    "app page, keyboard":
        "tests/browser/test_app_browser.py::test_app_page_fits_and_every_control_moves_the_figure_by_keyboard"
        "[inclined_line]",
}


def _burn() -> None:  # pragma: no cover - runs in a child process until terminated
    x = 0
    while True:
        x = (x * 1103515245 + 12345) % 2147483648


def start_burners(count: int) -> list[multiprocessing.Process]:
    """``count`` processes that keep one core busy each."""
    if count < 0:
        raise ValueError(f"`count` must be zero or more; got {count}")
    burners = [multiprocessing.Process(target=_burn, daemon=True) for _ in range(count)]
    for burner in burners:
        burner.start()
    return burners


def stop_burners(burners: list[multiprocessing.Process]) -> None:
    for burner in burners:  # by PID, one by one
        burner.terminate()
    for burner in burners:
        burner.join(timeout=10)


def run_once(tests: list[str], log: Path | None, samples: int = 1, workers: int = 0) -> tuple[bool, float, str]:
    """One pytest process over ``tests`` with ``workers`` xdist workers: (passed, seconds, last line of its summary)."""
    command = [sys.executable, "-m", "pytest", "-q", "-x", "-n", str(workers), "-p", "no:cacheprovider", *tests]
    # JupyterLab itself takes minutes to start at load 15: give the fixture room (tests/browser/conftest.py).
    env = {"UDK_SERVER_START_TIMEOUT": "300", **os.environ, "OPENBLAS_NUM_THREADS": "1",
           "UDK_LATENCY_SAMPLES": str(samples)}
    started = time.monotonic()
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    seconds = time.monotonic() - started
    output = done.stdout + done.stderr
    if log is not None:
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(f"\n===== {' '.join(command)} -> {done.returncode}\n{output}")
    lines = done.stdout.splitlines()
    summary = next((line for line in reversed(lines) if line.strip()), "(no output)").strip("= ")
    passed = done.returncode == 0 and " passed" in summary and "skipped" not in summary
    # pytest's short summary names the failed test and its message's first line: the run's cause
    failed = [line for line in lines if line.startswith(("FAILED ", "ERROR "))]
    return passed, seconds, "; ".join([summary, *failed])


def _revision() -> str:
    """The commit under test, and whether the working tree differs from it (a soak is a claim about one commit)."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "a tree outside git"
    return f"commit {head}" + (" with uncommitted changes" if dirty else "")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tests", nargs="*", help="pytest node ids or files (default: the soak set above)")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--samples", type=int, default=1, help="latency samples of the lesson 01 test")
    parser.add_argument("--burners", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--workers", type=int, default=0,
                        help="pytest-xdist workers per run (default 0: one process; make test runs the browser "
                             "tests on every core)")
    parser.add_argument("--stop-after", type=float, default=None, help="seconds; no run starts after that")
    parser.add_argument("--log", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    if args.samples < 1:
        parser.error("--samples must be at least 1")
    if args.burners < 0:
        parser.error("--burners must be zero or more")
    if args.workers < 0:
        parser.error("--workers must be zero or more")
    tests = args.tests or list(SOAK_SET.values())

    print(f"soaking {_revision()}, {args.workers or 'no'} xdist worker(s) per run", flush=True)
    burners = start_burners(args.burners)
    began = time.monotonic()
    results: list[bool] = []
    try:
        for run in range(1, args.runs + 1):
            if args.stop_after is not None and time.monotonic() - began > args.stop_after:
                print(f"stopped before run {run}: --stop-after {args.stop_after:g} s reached", flush=True)
                break
            load = os.getloadavg()[0]
            passed, seconds, summary = run_once(tests, args.log, args.samples, args.workers)
            results.append(passed)
            print(f"run {run:2d}: {'PASS' if passed else 'FAIL'} in {seconds:5.0f} s (load {load:.1f}): {summary}",
                  flush=True)
    finally:
        stop_burners(burners)

    streak = best = 0
    for passed in results:
        streak = streak + 1 if passed else 0
        best = max(best, streak)
    print(f"{sum(results)} of {len(results)} runs passed beside {args.burners} CPU burner(s); "
          f"longest streak {best}; tests: {' '.join(tests)}")
    return 0 if results and all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
