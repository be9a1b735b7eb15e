"""Time grading a class: N generated submissions of one problem set, graded in sandboxes, W at a time.

    python benchmarks/grade_many.py                      # 200 submissions of ps1, workers = CPUs
    python benchmarks/grade_many.py -n 20 --workers 2    # a smaller class

Half the submissions are the complete solutions, half the untouched student
version (alternating), so both the full and the empty paths are timed. Prints
the wall time, the time per submission and the extrapolation to 200
submissions (labelled as such when N is not 200), and checks the scores
(solutions full marks, untouched zero).
"""

from __future__ import annotations

import argparse
import csv
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

from udk_notebooks.assign import build_assignment, grade_folder  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=200, help="submissions (default 200)")
    parser.add_argument("--workers", type=int, default=None, help="sandboxes at once (default: the CPUs)")
    parser.add_argument("--master", default=str(REPO / "instructor" / "assignments" / "ps1_slider_pendulum.ipynb"))
    parser.add_argument("--keep", default=None, help="keep the generated folders here")
    args = parser.parse_args(argv)
    if args.n < 1:
        parser.error("-n must be at least 1")
    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="grade-many-"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        built = build_assignment(args.master, folder / "build", verify=False)
        solutions, student = Path(built["solutions"]).read_bytes(), Path(built["student"]).read_bytes()
        submissions = folder / "submissions"
        shutil.rmtree(submissions, ignore_errors=True)
        submissions.mkdir()
        for number in range(args.n):
            kind = "right" if number % 2 == 0 else "untouched"
            (submissions / f"student{number:03d}_{kind}.ipynb").write_bytes(solutions if kind == "right" else student)
        workers = args.workers or os.cpu_count() or 1
        start = time.perf_counter()
        table = grade_folder(folder / "build" / "autograder", submissions, folder / "graded", workers=workers)
        seconds = time.perf_counter() - start
        with table.open() as handle:
            rows = list(csv.DictReader(handle))
        wrong = [r["student"] for r in rows if (float(r["total"]) == float(r["max_score"])) != r["student"].endswith("right")
                 or (r["student"].endswith("untouched") and float(r["total"]) != 0)]
        per = seconds / args.n
        print(f"{Path(args.master).stem}: {args.n} submissions, --workers {workers}, {os.cpu_count()} CPUs: "
              f"{seconds:.1f} s ({per:.2f} s per submission)")
        if args.n != 200:
            print(f"extrapolated (not measured) to 200 submissions: {per * 200 / 60:.1f} min")
        if wrong:
            print(f"unexpected scores: {', '.join(wrong[:10])}")
            return 1
        return 0
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
