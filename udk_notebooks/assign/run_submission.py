"""Inside the sandbox: ``python -I -m udk_notebooks.assign.run_submission NOTEBOOK --result-fd N ...``.

The grader (:func:`udk_notebooks.assign.grade.grade_notebook`) starts this
module in a bubblewrap sandbox (:mod:`udk_notebooks.assign.sandbox`) whose
working folder holds the submitted notebook and its public checks. It executes
the notebook with :func:`~udk_notebooks.assign.grade.execute_submission` (a
kernel of its own, cell and notebook time limits, output capped) and writes
one JSON document to the result descriptor: ``{"answers": {name: tagged
value}, "report": ExecutionReport fields, "notebook": the executed notebook}``.

The submission's code runs in the same sandbox and could forge this
document; it can only forge its own answers and report, which is what it
could choose anyway. The grader reads the document as data, with a size
limit, and tests the answers in another sandbox.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import asdict

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -I -m udk_notebooks.assign.run_submission")
    parser.add_argument("notebook")
    parser.add_argument("--result-fd", type=int, required=True)
    parser.add_argument("--names", required=True, help="JSON list of the answer names")
    parser.add_argument("--time-limit", type=float, required=True)
    parser.add_argument("--cell-time-limit", type=float, required=True)
    parser.add_argument("--kernel", default="python3")
    parser.add_argument("--output-limit", type=int, default=2_000_000)
    return parser


def main(argv: list[str] | None = None) -> int:
    import nbformat

    from .grade import execute_submission

    args = _parser().parse_args(argv)
    result = os.fdopen(args.result_fd, "w")
    os.set_inheritable(args.result_fd, False)  # the kernel and its children never hold the result pipe
    nb = nbformat.read(args.notebook, as_version=4)
    report = execute_submission(nb, os.getcwd(), json.loads(args.names), time_limit=args.time_limit,
                                cell_time_limit=args.cell_time_limit, kernel_name=args.kernel,
                                output_limit=args.output_limit)
    with result:
        json.dump({"answers": report.answers, "report": asdict(report), "notebook": nbformat.writes(nb)}, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
