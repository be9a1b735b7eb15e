"""Running test cases: the student's ``grader.check("q1")`` and the grader's trusted runs.

A test case passes when its code runs without an exception. Both the
student-side :class:`Checker` and the grader's trusted process
(:mod:`udk_notebooks.assign.trusted`) call :func:`run_case`; only the grader's
result counts.
"""

from __future__ import annotations

import builtins
import json
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path

from .answers import Unsupported
from .format import free_names

__all__ = ["CheckResult", "Checker", "run_case"]


def run_case(code: str, namespace: dict, label: str, *, reads=(), show_line: bool = True) -> tuple[bool, str]:
    """Run one test case in ``namespace``.

    Parameters
    ----------
    code : str
        The test's source.
    namespace : dict
        Globals the test runs in (changed by it: pass a copy).
    label : str
        Name shown in tracebacks, e.g. ``"q1, test 2"``.
    reads : sequence of str, optional
        Answer names the test reads: one that is :class:`~.answers.Unsupported`
        (missing or not plain data) or still ``...`` fails the test without
        running it.
    show_line : bool, optional
        Say which line of the test failed (public tests); hidden tests only
        give the exception's message.

    Returns
    -------
    passed : bool
    message : str
        Empty when passed; otherwise the failure, e.g. ``"AssertionError: A must
        have 2 independent rows"``.
    """
    bad = [name for name in reads if isinstance(namespace.get(name), Unsupported)]
    if bad:
        return False, "; ".join(f"`{name}` {namespace[name].reason}" for name in bad)
    undefined = [name for name in reads if name not in namespace and name not in vars(builtins)]
    if undefined:
        names = ", ".join(f"`{name}`" for name in undefined)
        return False, f"not answered yet: {names} not defined (run the cells above first)"
    stubs = [name for name in reads if namespace.get(name, None) is Ellipsis]
    if stubs:
        verb = "is" if len(stubs) == 1 else "are"
        return False, "not answered yet: " + ", ".join(f"`{name}`" for name in stubs) + f" {verb} still `...`"
    try:
        exec(compile(code, f"<{label}>", "exec"), namespace)
    except Exception as exc:  # a failing test, whatever it raised
        message = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        if show_line:
            frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == f"<{label}>"]
            if frames and frames[-1].lineno:
                line = code.splitlines()[frames[-1].lineno - 1].strip()
                message += f"\n    in: {line}"
        return False, message
    return True, ""


@dataclass(frozen=True)
class CheckResult:
    """The outcome of the public checks of one question, as shown in the notebook."""

    question: str
    passed: int
    failures: tuple[str, ...]
    hidden_included: bool = False

    @property
    def ok(self) -> bool:
        return not self.failures

    def __repr__(self) -> str:
        total = self.passed + len(self.failures)
        kind = "" if self.hidden_included else " public"
        if self.ok:
            later = "" if self.hidden_included else " (hidden tests run when grading)"
            return f"{self.question}: all {total}{kind} check(s) passed{later}"
        lines = [f"{self.question}: {len(self.failures)} of {total}{kind} check(s) failed"]
        lines += [f"  - {failure}" for failure in self.failures]
        return "\n".join(lines)


class Checker:
    """The public checks of an assignment, for ``grader.check("q1")`` cells.

    Parameters
    ----------
    path : str or Path
        The ``<name>_checks.json`` file written next to the student notebook
        by ``python -m udk_notebooks.assign build``.

    Examples
    --------
    >>> grader = Checker("ps1_checks.json")      # doctest: +SKIP
    >>> grader.check("q1")                       # doctest: +SKIP
    q1: all 2 public check(s) passed (hidden tests run when grading)
    """

    def __init__(self, path: str | Path):
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(
                f"`path` {str(path)!r} does not exist: keep the checks file next to the notebook "
                "(it comes with the assignment)"
            )
        data = json.loads(path.read_text())
        self.assignment = data["assignment"]
        self._tests = {q: [(t["code"], tuple(free_names(t["code"]))) for t in tests]
                       for q, tests in data["tests"].items()}
        self._hidden_included = bool(data.get("hidden_included", False))

    @property
    def questions(self) -> tuple[str, ...]:
        return tuple(self._tests)

    def check(self, question: str, env: dict | None = None) -> CheckResult:
        """Run the public checks of ``question`` on a copy of the notebook's variables.

        Never raises for a wrong or missing answer: failures are reported.

        Parameters
        ----------
        question : str
            The question's name, e.g. ``"q1"``.
        env : dict, optional
            The variables to check; default: the calling notebook's globals.
        """
        if question not in self._tests:
            raise ValueError(f"`question` must be one of {', '.join(self._tests)}; got {question!r}")
        if env is None:
            env = sys._getframe(1).f_globals
        passed, failures = 0, []
        for number, (code, reads) in enumerate(self._tests[question], start=1):
            ok, message = run_case(code, dict(env), f"{question}, check {number}", reads=reads)
            if ok:
                passed += 1
            else:
                failures.append(message)
        return CheckResult(question, passed, tuple(failures), self._hidden_included)

    def check_all(self, env: dict | None = None) -> list[CheckResult]:
        """:meth:`check` for every question in order."""
        if env is None:
            env = sys._getframe(1).f_globals
        return [self.check(question, env) for question in self._tests]
