"""The master-notebook format: otter-grader's conventions, parsed into an :class:`Assignment`.

A master notebook is an ordinary notebook with a few raw cells that mark its
structure, exactly as ``otter assign`` (otter-grader >= 4, "v1 format") reads
them, so an instructor who knows otter can write one, and ``otter assign``
accepts the same file:

* a raw cell ``# ASSIGNMENT CONFIG`` followed by YAML (``name: ...``; any key
  otter-grader knows, the rest of its keys are ignored here; the ``udk`` key,
  which otter-grader rejects (the otter export removes it), holds the build's ``wrong_answers``,
  ``open_answers`` (:mod:`.discriminate`) and ``variant_ids`` (:mod:`.variants`));
* per question a raw cell ``# BEGIN QUESTION`` with YAML ``name: q1``,
  ``points: 2`` (optional ``all_or_nothing: true``, ``manual: true``), closed by
  ``# END QUESTION``;
* inside a question, ``# BEGIN SOLUTION`` / ``# END SOLUTION`` raw cells around
  the solution cells and ``# BEGIN TESTS`` / ``# END TESTS`` around test cells.

In solution code cells, lines between ``# BEGIN SOLUTION`` and ``# END
SOLUTION`` comments become ``...`` in the student version (nothing with
``# BEGIN SOLUTION NO PROMPT``), ``x = 2  # SOLUTION`` becomes ``x = ...``, and a
line ending in ``# SOLUTION NO PROMPT`` disappears. Markdown cells of a
solution block are left out of the student version, except in a ``manual``
(written) question, where each becomes an empty answer cell for the student.

Each test cell is one test case: plain Python that passes when it runs without
an exception (``assert`` statements). A first line comment containing
``HIDDEN`` (``# HIDDEN``) hides it from students, or an otter test-config
header sets ``hidden`` and ``points``::

    \"\"\" # BEGIN TEST CONFIG
    points: 2
    hidden: true
    \"\"\" # END TEST CONFIG

Test cells must not print: otter-grader compares their output with the
master's (none). Names a test reads that a solution cell defines are the
question's *answers*: the grader takes them out of the student's kernel as
plain data (:mod:`udk_notebooks.assign.answers`) and runs the tests elsewhere.
"""

from __future__ import annotations

import ast
import builtins
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nbformat import NotebookNode

__all__ = [
    "Assignment",
    "AssignmentFormatError",
    "MasterCell",
    "Question",
    "TestCase",
    "read_master",
    "strip_solution",
]


class AssignmentFormatError(ValueError):
    """A master notebook that does not follow the format; the message names the cell."""


@dataclass(frozen=True)
class TestCase:
    """One test cell of a question.

    Attributes
    ----------
    code : str
        The test's source, without its config header.
    hidden : bool
        Hidden tests run only when grading.
    points : float
        Points this case is worth (resolved, see :class:`Question`).
    reads : tuple of str
        Free names the code reads (not builtins, not bound in the test).
    """

    code: str
    hidden: bool
    points: float
    reads: tuple[str, ...] = ()


@dataclass(frozen=True)
class Question:
    """A question: its name, points, tests and the answer names the tests read.

    ``points`` is the question's total (default 1, or the sum of its tests'
    points). Test cases without their own points share what the explicit ones
    leave over, evenly (otter-grader's rule).
    """

    name: str
    points: float
    tests: tuple[TestCase, ...]
    answers: tuple[str, ...]
    all_or_nothing: bool = False
    manual: bool = False

    @property
    def public_tests(self) -> tuple[TestCase, ...]:
        return tuple(t for t in self.tests if not t.hidden)


@dataclass(frozen=True)
class MasterCell:
    """A cell of the master with its role.

    ``role`` is ``"given"`` (kept in every version), ``"solution"`` or ``"test"``;
    ``question`` is the enclosing question's name or None; ``check_after`` is set
    on the last cell of a question (the place of its ``grader.check`` cell).
    """

    cell: NotebookNode
    role: str
    question: str | None
    check_after: str | None = None


@dataclass(frozen=True)
class Assignment:
    """A parsed master notebook.

    Attributes
    ----------
    name : str
        The assignment's name (config ``name``, default: the file's stem).
    config : dict
        The ``# ASSIGNMENT CONFIG`` YAML as written.
    cells : tuple of MasterCell
        Every content cell in order (boundary and config cells removed).
    questions : tuple of Question
    metadata : dict
        The master notebook's metadata (kernel spec, language info).
    """

    name: str
    config: dict
    cells: tuple[MasterCell, ...]
    questions: tuple[Question, ...]
    metadata: dict = field(default_factory=dict)

    @property
    def max_score(self) -> float:
        """Every question's points, manual (free-text) ones included: what a student can earn."""
        return float(sum(q.points for q in self.questions))

    @property
    def auto_max_score(self) -> float:
        """The points the tests award (manual questions left out): what the solutions must score."""
        return float(sum(q.points for q in self.questions if not q.manual))

    def answer_owners(self) -> dict[str, str]:
        """Answer name to the question whose solution cells define it (the question that asks for it).

        A name defined in the solutions of several questions belongs to the first.
        """
        owners: dict[str, str] = {}
        answers = {name for q in self.questions for name in q.answers}
        for part in self.cells:
            if part.role != "solution" or part.cell.cell_type != "code" or part.question is None:
                continue
            for name in sorted(defined_names(strip_solution(part.cell.source)[1]) & answers):
                owners.setdefault(name, part.question)
        return owners

    def question(self, name: str) -> Question:
        for q in self.questions:
            if q.name == name:
                return q
        names = ", ".join(q.name for q in self.questions)
        raise ValueError(f"`question` must be one of {names}; got {name!r}")

    def given_code(self) -> list[str]:
        """Source of every given code cell, in order: what the trusted test process runs first."""
        return [c.cell.source for c in self.cells if c.role == "given" and c.cell.cell_type == "code"]


_BOUNDARY = re.compile(r"#\s+(begin|end)\s+(question|solution|tests|prompt)\b", re.IGNORECASE)
_CONFIG = re.compile(r"#\s+assignment\s+config\b", re.IGNORECASE)
_TEST_CONFIG_BEGIN = re.compile(r'(?:.\s*=\s*)?"""?\s*#\s*BEGIN\s*TEST\s*CONFIG', re.IGNORECASE)
_TEST_CONFIG_END = re.compile(r'"""?\s*#\s*END\s*TEST\s*CONFIG', re.IGNORECASE)
_BEGIN_SOLUTION = re.compile(r"^(\s*)# BEGIN SOLUTION( NO PROMPT)?\s*$")
_END_SOLUTION = re.compile(r"^\s*# END SOLUTION\s*$")
_SUFFIX = re.compile(r"\s*# SOLUTION( NO PROMPT)?\s*$")


def _first_line(cell) -> str:
    lines = cell.source.lstrip().splitlines()
    return lines[0] if lines else ""


def _yaml(text: str, where: str) -> dict:
    import yaml

    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        raise AssignmentFormatError(f"{where}: the YAML does not parse ({exc})") from None
    if not isinstance(data, dict):
        raise AssignmentFormatError(f"{where}: the YAML must be a mapping (key: value lines); got {data!r}")
    return data


def strip_solution(source: str) -> tuple[str, str]:
    """Split a solution code cell into its student and solution versions.

    Parameters
    ----------
    source : str
        The master cell's source with otter-grader's solution markers.

    Returns
    -------
    student, solution : str
        ``student`` has every solution line replaced by ``...`` (or dropped, for
        the ``NO PROMPT`` forms); ``solution`` has the markers removed.
    """
    student, solution = [], []
    inside = False
    for number, line in enumerate(source.splitlines(), start=1):
        begin = _BEGIN_SOLUTION.match(line)
        if begin:
            if inside:
                raise AssignmentFormatError(f"line {number}: nested `# BEGIN SOLUTION` in:\n{source}")
            inside = True
            if not begin.group(2):
                student.append(begin.group(1) + "...")
            continue
        if _END_SOLUTION.match(line):
            if not inside:
                raise AssignmentFormatError(f"line {number}: `# END SOLUTION` without a BEGIN in:\n{source}")
            inside = False
            continue
        if inside:
            solution.append(line)
            continue
        suffix = _SUFFIX.search(line)
        if suffix:
            code = line[: suffix.start()]
            solution.append(code)
            if not suffix.group(1):
                student.append(_stub_line(code))
            continue
        student.append(line)
        solution.append(line)
    if inside:
        raise AssignmentFormatError(f"`# BEGIN SOLUTION` is never closed by `# END SOLUTION` in:\n{source}")
    return "\n".join(student), "\n".join(solution)


def _stub_line(code: str) -> str:
    """``lhs = rhs`` becomes ``lhs = ...``; any other line becomes ``...`` at its indentation."""
    body = code.lstrip()
    indent = code[: len(code) - len(body)]
    try:
        tree = ast.parse(body)
    except SyntaxError:
        return indent + "..."
    node = tree.body[0] if len(tree.body) == 1 else None
    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and node.value is not None:
        return indent + body[: node.value.col_offset].rstrip() + " ..."
    return indent + "..."


def python_source(source: str) -> str:
    """``source`` without IPython magics and shell escapes (they do not run outside a kernel)."""
    if source.lstrip().startswith("%%"):
        return ""
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())


def _bound_names(tree: ast.AST, top_level_only: bool) -> set[str]:
    """Names a piece of code binds (assignments, imports, defs, loop and ``with`` targets)."""
    names: set[str] = set()

    def visit(node):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Name) and isinstance(child.ctx, (ast.Store, ast.Del)):
                names.add(child.id)
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(child.name)
                if top_level_only:
                    continue
            elif isinstance(child, (ast.Import, ast.ImportFrom)):
                names.update((a.asname or a.name).split(".")[0] for a in child.names)
            elif isinstance(child, ast.arg):
                names.add(child.arg)
            elif isinstance(child, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
                if top_level_only:
                    continue
            visit(child)

    visit(tree)
    return names


def free_names(code: str) -> set[str]:
    """Names ``code`` reads that it does not bind itself and that are not builtins."""
    tree = ast.parse(python_source(code))
    loads = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return loads - _bound_names(tree, top_level_only=False) - set(dir(builtins))


def defined_names(code: str) -> set[str]:
    """Names ``code`` binds at module level (what a cell leaves in the kernel's namespace)."""
    return _bound_names(ast.parse(python_source(code)), top_level_only=True)


def _parse_test(cell, where: str) -> tuple[str, bool, float | None]:
    lines = cell.source.strip("\n").splitlines()
    if not lines:
        raise AssignmentFormatError(f"{where}: empty test cell")
    hidden, points, start = False, None, 0
    if _TEST_CONFIG_BEGIN.match(lines[0]):
        end = next((i for i, line in enumerate(lines) if i and _TEST_CONFIG_END.match(line)), None)
        if end is None:
            raise AssignmentFormatError(f"{where}: `# BEGIN TEST CONFIG` without `# END TEST CONFIG`")
        config = _yaml("\n".join(lines[1:end]), where)
        hidden, points, start = bool(config.get("hidden", False)), config.get("points"), end + 1
    elif lines[0].lstrip().startswith("#") and re.search(r"\bhidden\b", lines[0], re.IGNORECASE):
        hidden, start = True, 1
    code = "\n".join(lines[start:]).strip("\n")
    try:
        ast.parse(code)
    except SyntaxError as exc:
        raise AssignmentFormatError(f"{where}: the test does not parse: {exc}") from None
    if points is not None and not (isinstance(points, (int, float)) and points >= 0):
        raise AssignmentFormatError(f"{where}: test `points` must be a number >= 0; got {points!r}")
    return code, hidden, None if points is None else float(points)


def _resolve_points(name: str, total, cases: list[tuple[str, bool, float | None]]) -> tuple[float, list[float]]:
    explicit = sum(p for _, _, p in cases if p is not None)
    open_cases = sum(1 for _, _, p in cases if p is None)
    if total is None:
        if open_cases and explicit:
            raise AssignmentFormatError(
                f"question {name}: some tests have `points` and some not; give the question `points: N`"
            )
        total = explicit if cases and not open_cases else 1.0  # otter-grader's default: one point
    if not isinstance(total, (int, float)) or total < 0:
        raise AssignmentFormatError(f"question {name}: `points` must be a number >= 0; got {total!r}")
    total = float(total)
    if explicit > total + 1e-12 or (open_cases == 0 and abs(explicit - total) > 1e-12 and cases):
        raise AssignmentFormatError(
            f"question {name}: its tests carry {explicit:g} points but the question has `points: {total:g}`; "
            "make them agree or leave some tests without `points`"
        )
    share = (total - explicit) / open_cases if open_cases else 0.0
    return total, [share if p is None else p for _, _, p in cases]


def read_master(path: str | Path) -> Assignment:
    """Parse a master notebook.

    Parameters
    ----------
    path : str or Path
        A ``.ipynb`` file in otter-grader's master format (module docstring).

    Returns
    -------
    Assignment

    Raises
    ------
    AssignmentFormatError
        For unbalanced or misplaced boundary cells, a question without a name
        or without tests, duplicate question names, tests outside a question, or
        a test that reads a name nothing defines.
    """
    import nbformat  # here, not at the top: students' kernels import this module for `Checker`

    path = Path(path)
    if path.suffix != ".ipynb" or not path.is_file():
        raise ValueError(f"`path` must be an existing .ipynb master notebook; got {str(path)!r}")
    nb = nbformat.read(path, as_version=4)
    config: dict = {}
    cells: list[MasterCell] = []
    raw_questions: list[tuple[dict, list]] = []
    question = None
    block = None  # "solution" / "tests" / "prompt" / None
    for index, cell in enumerate(nb.cells):
        where = f"{path.name}, cell {index}"
        first = _first_line(cell)
        if cell.cell_type == "raw" and _CONFIG.match(first):
            config = _yaml(cell.source.split("\n", 1)[1] if "\n" in cell.source else "", where)
            continue
        boundary = _BOUNDARY.match(first) if cell.cell_type == "raw" else None
        if boundary:
            kind, what = boundary.group(1).lower(), boundary.group(2).lower()
            if what == "question":
                if kind == "begin":
                    if question is not None:
                        raise AssignmentFormatError(f"{where}: `# BEGIN QUESTION` inside question {question[0]['name']}")
                    qconf = _yaml(cell.source.split("\n", 1)[1] if "\n" in cell.source else "", where)
                    if not isinstance(qconf.get("name"), str) or not qconf["name"].strip():
                        raise AssignmentFormatError(f"{where}: the question config needs `name: ...`")
                    question = (qconf, [])
                else:
                    if question is None or block is not None:
                        raise AssignmentFormatError(f"{where}: `# END QUESTION` without an open question (or inside a block)")
                    raw_questions.append(question)
                    if cells and cells[-1].question == question[0]["name"]:
                        last = cells[-1]
                        cells[-1] = MasterCell(last.cell, last.role, last.question, check_after=question[0]["name"])
                    else:
                        cells.append(MasterCell(nbformat.v4.new_markdown_cell(""), "given", question[0]["name"],
                                                check_after=question[0]["name"]))
                    question = None
                continue
            if question is None:
                raise AssignmentFormatError(f"{where}: `# {kind.upper()} {what.upper()}` outside a question")
            if kind == "begin":
                if block is not None:
                    raise AssignmentFormatError(f"{where}: `# BEGIN {what.upper()}` inside a {block} block")
                block = what
            else:
                if block != what:
                    raise AssignmentFormatError(f"{where}: `# END {what.upper()}` does not close a {what} block")
                block = None
            continue
        qname = question[0]["name"] if question else None
        if block == "tests":
            if cell.cell_type != "code":
                raise AssignmentFormatError(f"{where}: only code cells go between `# BEGIN TESTS` and `# END TESTS`")
            question[1].append(_parse_test(cell, where))
            cells.append(MasterCell(cell, "test", qname))
        elif block == "solution":
            cells.append(MasterCell(cell, "solution", qname))
        else:
            if cell.cell_type == "code" and any(_BEGIN_SOLUTION.match(line) or _SUFFIX.search(line)
                                                for line in cell.source.splitlines()):
                raise AssignmentFormatError(
                    f"{where}: a solution marker outside `# BEGIN SOLUTION` / `# END SOLUTION` raw cells "
                    "would reach students; put the cell inside a solution block"
                )
            cells.append(MasterCell(cell, "given", qname))
    if question is not None or block is not None:
        raise AssignmentFormatError(f"{path.name}: the notebook ends inside question {question[0]['name'] if question else ''} "
                                    "(missing `# END ...` cell)")

    solution_names: set[str] = set()
    given_names: set[str] = set()
    for c in cells:
        if c.cell.cell_type != "code" or c.role == "test":
            continue
        source = strip_solution(c.cell.source)[1] if c.role == "solution" else c.cell.source
        try:
            names = defined_names(source)
        except SyntaxError as exc:
            raise AssignmentFormatError(f"{path.name}: a code cell does not parse ({exc}):\n{source}") from None
        (solution_names if c.role == "solution" else given_names).update(names)

    questions, seen = [], set()
    for qconf, raw_cases in raw_questions:
        name = qconf["name"]
        if name in seen:
            raise AssignmentFormatError(f"{path.name}: two questions are named {name!r}")
        seen.add(name)
        manual = bool(qconf.get("manual", False))
        if not raw_cases and not manual:
            raise AssignmentFormatError(f"{path.name}: question {name} has no tests (add some, or `manual: true`)")
        total, case_points = _resolve_points(name, qconf.get("points"), raw_cases)
        tests, answers = [], set()
        for (code, hidden, _), points in zip(raw_cases, case_points):
            reads = free_names(code)
            unknown = reads - solution_names - given_names
            if unknown:
                raise AssignmentFormatError(
                    f"{path.name}: a test of {name} reads {', '.join(sorted(unknown))}, which no cell defines"
                )
            answers |= reads & solution_names
            tests.append(TestCase(code, hidden, points, tuple(sorted(reads))))
        questions.append(Question(name, total, tuple(tests), tuple(sorted(answers)),
                                  bool(qconf.get("all_or_nothing", False)), manual))
    if not questions:
        raise AssignmentFormatError(f"{path.name}: no `# BEGIN QUESTION` cell; this is not a master notebook")
    name = str(config.get("name") or path.stem)
    return Assignment(name, config, tuple(cells), tuple(questions), dict(nb.metadata))
