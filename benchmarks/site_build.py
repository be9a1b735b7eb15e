"""Where the static site's build goes (issue 23): each lesson's execution, its slowest cells, the rendering.

    .venv/bin/python benchmarks/site_build.py                  # every lesson, one at a time
    .venv/bin/python benchmarks/site_build.py lessons/05_*.ipynb --top 6
    .venv/bin/python benchmarks/site_build.py --animation KeplerExplorer --clock cpu

Lessons run as ``make site`` runs them (static-export kernels, :func:`udk_notebooks.site.execute_lesson`),
one at a time so that the per-lesson numbers do not share cores. A cell's time is the kernel's (nbclient's
``execute_input`` to ``execute_reply``); ``--clock cpu`` reports the CPU seconds of this process and the
kernels it waited for (``os.times``), which a loaded machine inflates less than wall time.

``--animation NAME`` times one explorer's kernel-free animation (what a static page embeds) both ways:
:meth:`udk_notebooks.drawing.MechanismAnimation.to_jshtml` and matplotlib's own ``FuncAnimation.to_jshtml``,
and says how many frames are byte-identical.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from datetime import datetime
from pathlib import Path

import _timing  # noqa: F401  (BLAS pinned to one thread, as the suite runs)

REPO = Path(__file__).resolve().parent.parent


def _clock(kind: str) -> float:
    if kind == "wall":
        return time.monotonic()
    times = os.times()  # children: the kernels, once they have exited and been waited for
    return times.user + times.system + times.children_user + times.children_system


def _seconds(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def _cell_times(nb) -> list[tuple[float, int, str]]:
    cells = []
    for index, cell in enumerate(nb.cells):
        execution = cell.metadata.get("execution", {})
        start, end = execution.get("iopub.execute_input"), execution.get("shell.execute_reply")
        if start and end:
            first_line = cell.source.strip().splitlines()[0][:70] if cell.source.strip() else ""
            cells.append(((_seconds(end) - _seconds(start)).total_seconds(), index, first_line))
    return sorted(cells, reverse=True)


def lessons(paths: list[Path], *, clock: str, top: int) -> None:
    from udk_notebooks.site import _exercises_as_questions, _render, execute_lesson

    total_run = total_render = 0.0
    for path in paths:
        started = _clock(clock)
        nb = execute_lesson(path, static=True)
        ran = _clock(clock) - started
        started = _clock(clock)
        _render(_exercises_as_questions(nb, "https://mybinder.org/x"), "<nav></nav>", path.stem)
        rendered = _clock(clock) - started
        total_run, total_render = total_run + ran, total_render + rendered
        print(f"{path.name:48s} executed {ran:6.1f} s, rendered {rendered:5.1f} s ({clock})", flush=True)
        for seconds, index, line in _cell_times(nb)[:top]:
            print(f"    {seconds:6.1f} s  cell {index:3d}: {line}", flush=True)
    print(f"{'all lessons':48s} executed {total_run:6.1f} s, rendered {total_render:5.1f} s ({clock})")


def animation(name: str, *, clock: str) -> None:
    os.environ["UDK_STATIC_EXPORT"] = "1"
    import matplotlib

    matplotlib.use("Agg")
    from udk_notebooks import widgets

    explorer = getattr(widgets, name)()
    ours, theirs = explorer.animation(), explorer.animation()
    if ours is None:
        sys.exit(f"{name} has no animation")
    started = _clock(clock)
    fast = ours.to_jshtml()
    middle = _clock(clock)
    reference = theirs.animation.to_jshtml(fps=theirs.fps, default_mode="loop")
    ended = _clock(clock)
    frame = re.compile(r'frames\[\d+\] = "data:image/png;base64,([^"]*)"')
    a, b = frame.findall(fast), frame.findall(reference)
    same = sum(x == y for x, y in zip(a, b))
    print(f"{name}: MechanismAnimation.to_jshtml {middle - started:.1f} s, matplotlib's {ended - middle:.1f} s "
          f"({clock}); {same} of {len(b)} frames byte-identical")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="lessons (default: every lessons/*.ipynb)")
    parser.add_argument("--top", type=int, default=3, help="slowest cells listed per lesson (default 3)")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    parser.add_argument("--animation", metavar="EXPLORER", help="time one explorer's animation instead")
    args = parser.parse_args(argv)
    if args.top < 0:
        parser.error("--top must be 0 or more")
    if args.animation:
        animation(args.animation, clock=args.clock)
        return 0
    paths = args.notebooks or sorted((REPO / "lessons").glob("*.ipynb"))
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        parser.error(f"no such notebook: {', '.join(missing)}")
    lessons(paths, clock=args.clock, top=args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
