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


def _keep_the_kernel_out() -> None:
    """Make this process non-dumpable (``prctl(PR_SET_DUMPABLE, 0)``).

    The kernel this process starts runs as the same user in the same sandbox:
    otherwise it could open ``/proc/<runner>/fd/<result>``, write a result
    document of its own (a forged executed notebook for the instructor, forged
    cell errors) and kill the runner, or ptrace it. A process that is not
    dumpable has its ``/proc`` entries owned by root and cannot be traced by a
    process without ``CAP_SYS_PTRACE``, which nothing in the sandbox has.

    Raises
    ------
    OSError
        When the flag cannot be set (the grader then gets no result: never a forgeable one).
    """
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(4, 0, 0, 0, 0) != 0:  # 4 = PR_SET_DUMPABLE (linux/prctl.h)
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE, 0) failed")


def main(argv: list[str] | None = None) -> int:
    import nbformat

    from .answers import checked
    from .grade import execute_submission

    _keep_the_kernel_out()
    args = _parser().parse_args(argv)
    result = os.fdopen(args.result_fd, "w")
    os.set_inheritable(args.result_fd, False)  # the kernel and its children never hold the result pipe
    nb = nbformat.read(args.notebook, as_version=4)
    report = execute_submission(nb, os.getcwd(), json.loads(args.names), time_limit=args.time_limit,
                                cell_time_limit=args.cell_time_limit, kernel_name=args.kernel,
                                output_limit=args.output_limit)
    with result:
        # The answers file was written in the kernel, which can bypass dump_answers: checked here, in the sandbox.
        answers = {name: checked(value) for name, value in report.answers.items()}
        json.dump({"answers": answers, "report": asdict(report), "notebook": nbformat.writes(nb)}, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
