"""Sum pytest's ``--durations=0`` lines per test file, and list the slowest tests.

    .venv/bin/python benchmarks/durations_by_file.py LOG [--top 15] [--files 25]

``LOG`` holds the output of a pytest run with ``--durations=0`` (``-vv`` too, or
pytest hides the lines under 5 ms). A fixture's set-up is counted in the ``setup``
line of the first test that asks for it, so a file's sum holds the fixtures it
builds. With pytest-xdist the node ids end in ``@group``, which is dropped here.
The sums are CPU-seconds of the tests, comparable between a serial and a parallel
run; wall time is what ``benchmarks/suite_time.sh`` reports.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import defaultdict
from pathlib import Path

# "12.34s call     tests/test_site.py::test_links[x]@tests/test_site.py::site"
DURATION = re.compile(r"^\s*(?P<seconds>\d+(?:\.\d+)?)s\s+(?P<phase>setup|call|teardown)\s+(?P<nodeid>\S.*?)\s*$")


def read_durations(text: str) -> list[tuple[float, str, str]]:
    """``(seconds, phase, node id)`` for every duration line (group suffix removed)."""
    rows = []
    for line in text.splitlines():
        match = DURATION.match(line)
        if match:
            nodeid = match["nodeid"]
            if nodeid.rfind("@") > nodeid.rfind("]"):  # xdist's "@group" suffix
                nodeid = nodeid[: nodeid.rfind("@")]
            rows.append((float(match["seconds"]), match["phase"], nodeid))
    return rows


def per_file(rows: list[tuple[float, str, str]]) -> dict[str, float]:
    """Seconds per test file (set-up, call and teardown together)."""
    sums: dict[str, float] = defaultdict(float)
    for seconds, _, nodeid in rows:
        sums[nodeid.split("::", 1)[0]] += seconds
    return dict(sums)


def per_test(rows: list[tuple[float, str, str]]) -> dict[str, float]:
    """Seconds per test (set-up, call and teardown together)."""
    sums: dict[str, float] = defaultdict(float)
    for seconds, _, nodeid in rows:
        sums[nodeid] += seconds
    return dict(sums)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("log", type=Path, help="output of pytest --durations=0")
    parser.add_argument("--top", type=int, default=15, help="slowest tests to list (default 15)")
    parser.add_argument("--files", type=int, default=25, help="slowest files to list (default 25)")
    args = parser.parse_args(argv)
    if not args.log.is_file():
        parser.error(f"`log` must be a file; {args.log} is missing")
    rows = read_durations(args.log.read_text(errors="replace"))
    if not rows:
        print(f"no duration lines in {args.log}: run pytest with --durations=0", file=sys.stderr)
        return 1
    tests, files = per_test(rows), per_file(rows)
    print(f"{len(tests)} tests, {sum(files.values()):.0f} s of test time in {len(files)} files")
    print(f"\nslowest {args.top} tests (setup + call + teardown):")
    for nodeid, seconds in sorted(tests.items(), key=lambda kv: -kv[1])[: args.top]:
        print(f"{seconds:8.1f} s  {nodeid}")
    print(f"\nslowest {args.files} files (sum over their tests):")
    for name, seconds in sorted(files.items(), key=lambda kv: -kv[1])[: args.files]:
        print(f"{seconds:8.1f} s  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
