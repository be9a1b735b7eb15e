"""Command line: ``python -m udk_notebooks.assign build|new|publish|grade|export|merge-manual|drop ...`` (see ``--help``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .build import BuildError, build_all, new_master, publish_student_versions
from .format import AssignmentFormatError
from .grade import grade_folder, load_autograder
from .gradebook import drop_row, export, merge_manual
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
    grade.add_argument("--out", default="scores",
                       help="folder for the gradebook (merged with earlier runs), scores.csv and per-student "
                            "feedback (.json, .md, .html, .executed.ipynb)")
    grade.add_argument("--workers", type=int, default=None,
                       help="submissions graded at once, each in its own sandbox (default: the number of CPUs)")
    grade.add_argument("--roster", default=None,
                       help="CSV naming each file's student: id[,name,login,email,lms_id,section,files]")
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
    export = commands.add_parser("export", help="the gradebook of a grading folder as a CSV for an LMS")
    export.add_argument("autograder", help="the build's autograder folder (holds assignment.json)")
    export.add_argument("out", help="the grading folder (holds gradebook.json)")
    export.add_argument("--format", choices=["canvas", "gradescope", "moodle", "csv"], default="csv")
    export.add_argument("--roster", default=None, help="roster CSV (needed by canvas, gradescope, moodle)")
    export.add_argument("--to", default=None, help="file written (default OUT/export-<format>.csv)")
    manual = commands.add_parser("merge-manual", help="merge the points of a question graded by hand")
    manual.add_argument("autograder", help="the build's autograder folder (holds assignment.json)")
    manual.add_argument("out", help="the grading folder (holds gradebook.json)")
    manual.add_argument("question", help="the question's name, e.g. q4")
    manual.add_argument("scores", help="CSV with columns student,score (OUT/manual/<question>.csv filled in)")
    drop = commands.add_parser("drop", help="remove one submission's row from the gradebook (logged)")
    drop.add_argument("autograder", help="the build's autograder folder (holds assignment.json)")
    drop.add_argument("out", help="the grading folder (holds gradebook.json)")
    drop.add_argument("key", help="the row's key (the file's path below the submissions folder, no suffix)")
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
        elif args.command == "grade":
            limits = Limits(memory_bytes=int(args.memory_limit * 2**30), processes=args.process_limit)
            table = grade_folder(args.autograder, args.submissions, args.out, time_limit=args.time_limit,
                                 cell_time_limit=args.cell_time_limit, case_time_limit=args.test_time_limit,
                                 unsafe=args.unsafe, limits=limits, workers=args.workers, roster=args.roster)
            print(table.read_text(), end="")
            print(f"wrote {table}, gradebook.json and per-student feedback (.md, .html, .json, .executed.ipynb) "
                  f"beside it; see {table.parent / 'grading.log'}")
        elif args.command == "export":
            spec = load_autograder(args.autograder)
            dest = args.to or str(Path(args.out) / f"export-{args.format}.csv")
            print(f"wrote {export(args.out, spec, args.format, dest, roster=args.roster)}")
        elif args.command == "merge-manual":
            count = merge_manual(args.out, load_autograder(args.autograder), args.question, args.scores)
            print(f"merged {count} hand-graded score(s) of {args.question} into {Path(args.out) / 'gradebook.json'}")
        else:
            drop_row(args.out, load_autograder(args.autograder), args.key)
            print(f"dropped {args.key} from {Path(args.out) / 'gradebook.json'}")
    except SandboxUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 3
    except (AssignmentFormatError, BuildError, ValueError, FileNotFoundError, FileExistsError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
