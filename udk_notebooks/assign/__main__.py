"""Command line: ``python -m udk_notebooks.assign build|grade ...`` (see ``--help``)."""

from __future__ import annotations

import argparse
import sys

from pathlib import Path

from .build import BuildError, build_all, new_master, publish_student_versions
from .format import AssignmentFormatError
from .grade import grade_folder


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m udk_notebooks.assign",
                                     description="Build and grade course assignments (otter-grader master format).")
    commands = parser.add_subparsers(dest="command", required=True)
    build = commands.add_parser("build", help="master notebook(s) -> OUT/student, OUT/solutions, OUT/autograder")
    build.add_argument("source", help="a master notebook, or a folder of them (each built into OUT/<stem>)")
    build.add_argument("out", help="output folder")
    build.add_argument("--no-verify", action="store_true",
                       help="do not execute and grade the solutions (faster; solutions written without outputs)")
    build.add_argument("--otter", action="store_true",
                       help="also write OUT/otter: a Gradescope zip (otter assign) that installs a wheel of this "
                            "package, and the student version to hand out (otter extra)")
    new = commands.add_parser("new", help="write a template master notebook to start a problem set")
    new.add_argument("path", help="the new master, e.g. instructor/assignments/ps5_my_topic.ipynb")
    publish = commands.add_parser("publish", help="master(s) -> OUT/<name>/: the student versions only "
                                  "(what a course hands out; nothing is executed)")
    publish.add_argument("source", help="a master notebook, or a folder of them")
    publish.add_argument("out", help="output folder, e.g. assignments")
    grade = commands.add_parser("grade", help="grade one submitted notebook or a folder of them")
    grade.add_argument("autograder", help="the build's autograder folder (holds assignment.json)")
    grade.add_argument("submissions", help="a .ipynb file or a folder of them, one per student")
    grade.add_argument("--out", default="scores", help="folder for <student>.json feedback and scores.csv")
    grade.add_argument("--time-limit", type=float, default=600.0, help="seconds per notebook (default 600)")
    grade.add_argument("--cell-time-limit", type=float, default=120.0, help="seconds per cell (default 120)")
    grade.add_argument("--test-time-limit", type=float, default=60.0, help="seconds per test case (default 60)")
    return parser


def _summary(result: dict) -> str:
    if result["score"] is None:
        return ""
    parts = [f"solutions: {result['score']:g}/{result['auto_max_score']:g}"]
    if result["max_score"] != result["auto_max_score"]:
        parts[0] += f" + {result['max_score'] - result['auto_max_score']:g} manual"
    if result.get("discrimination"):
        parts.append(f"{len(result['discrimination'])} wrong submissions held to their share")
    if result.get("variant_ids"):
        parts.append(f"variants of {len(result['variant_ids'])} sample ids at full marks")
    return " (" + "; ".join(parts) + ")"


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "build":
            for result in build_all(args.source, args.out, verify=not args.no_verify, otter=args.otter):
                print(f"built {result['student']}{_summary(result)}")
        elif args.command == "new":
            print(f"wrote {new_master(args.path)}: edit it, then build it with "
                  f"python -m udk_notebooks.assign build {args.path} build/assignments/{Path(args.path).stem}")
        elif args.command == "publish":
            for path in publish_student_versions(args.source, args.out):
                print(f"published {path}")
        else:
            table = grade_folder(args.autograder, args.submissions, args.out, time_limit=args.time_limit,
                                 cell_time_limit=args.cell_time_limit, case_time_limit=args.test_time_limit)
            print(table.read_text(), end="")
            print(f"wrote {table} and per-student JSON feedback beside it")
    except (AssignmentFormatError, BuildError, ValueError, FileNotFoundError, FileExistsError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
