"""Command line: ``python -m udk_notebooks.assign build|grade ...`` (see ``--help``)."""

from __future__ import annotations

import argparse
import sys

from .build import BuildError, build_all
from .format import AssignmentFormatError
from .grade import grade_folder
from .sandbox import Limits, SandboxUnavailable


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m udk_notebooks.assign",
                                     description="Build and grade course assignments (otter-grader master format).")
    commands = parser.add_subparsers(dest="command", required=True)
    build = commands.add_parser("build", help="master notebook(s) -> OUT/student, OUT/solutions, OUT/autograder")
    build.add_argument("source", help="a master notebook, or a folder of them (each built into OUT/<stem>)")
    build.add_argument("out", help="output folder")
    build.add_argument("--no-verify", action="store_true",
                       help="do not execute and grade the solutions (faster; solutions written without outputs)")
    build.add_argument("--otter", action="store_true", help="also run `otter assign` into OUT/otter (otter extra)")
    grade = commands.add_parser("grade", help="grade one submitted notebook or a folder of them")
    grade.add_argument("autograder", help="the build's autograder folder (holds assignment.json)")
    grade.add_argument("submissions", help="a .ipynb file or a folder of them, one per student")
    grade.add_argument("--out", default="scores", help="folder for <student>.json feedback and scores.csv")
    grade.add_argument("--time-limit", type=float, default=600.0, help="seconds per notebook (default 600)")
    grade.add_argument("--cell-time-limit", type=float, default=120.0, help="seconds per cell (default 120)")
    grade.add_argument("--test-time-limit", type=float, default=60.0, help="seconds per test case (default 60)")
    grade.add_argument("--memory-limit", type=float, default=4.0,
                       help="GiB of memory for each submission's sandbox (default 4)")
    grade.add_argument("--process-limit", type=int, default=128,
                       help="processes and threads at once in each sandbox (default 128)")
    grade.add_argument("--unsafe", action="store_true",
                       help="run submissions WITHOUT a sandbox, as your own user with your files and environment "
                            "(only for notebooks you trust); by default grading refuses to run without bubblewrap")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "build":
            for result in build_all(args.source, args.out, verify=not args.no_verify, otter=args.otter):
                marks = "" if result["score"] is None else f" (solutions: {result['score']:g}/{result['max_score']:g})"
                print(f"built {result['student']}{marks}")
        else:
            limits = Limits(memory_bytes=int(args.memory_limit * 2**30), processes=args.process_limit)
            table = grade_folder(args.autograder, args.submissions, args.out, time_limit=args.time_limit,
                                 cell_time_limit=args.cell_time_limit, case_time_limit=args.test_time_limit,
                                 unsafe=args.unsafe, limits=limits)
            print(table.read_text(), end="")
            print(f"wrote {table} and per-student JSON feedback beside it")
    except SandboxUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 3
    except (AssignmentFormatError, BuildError, ValueError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
