"""Exercise cells after *Kernel > Restart*: they work once Setup has run, and say so when it has not.

For every lesson, in a real kernel (jupyter_client, as nbclient drives one):

- Setup (the first code cell), then each exercise cell on its own: no error at all. Between
  two exercise cells every name an earlier one made is deleted, so each sees what a
  freshly restarted kernel would after Setup alone.
- No Setup, each exercise cell on its own: it runs, or it fails with the plain message of
  :mod:`udk_notebooks.exercises._restart` that says to run Setup, never with a traceback.

An exercise cell is a code cell whose last line calls ``ex.check_N(...)`` (as in
tests/test_exercises.py).
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from udk_notebooks.exercises._restart import SETUP_MARKERS, name_error_hint

ANSWER_CALL = re.compile(r"ex\.check_\d+\(")
CELL_TIMEOUT = 300  # seconds; the machine is shared
TRACEBACK_SIGNS = ("Traceback (most recent call last)", "-----------", "File ")
ANSI = re.compile(r"\x1b\[[0-9;]*m")
# Forget what earlier cells made (the names present after Setup, or at start, are kept).
KEEP_NAMES = "_udk_keep = set(globals()) | {'_udk_keep'}"
FORGET_NAMES = "for _udk_name in [n for n in list(globals()) if n not in _udk_keep]: del globals()[_udk_name]"


def _setup_and_exercises(path: Path) -> tuple[str, list[tuple[int, str]]]:
    cells = nbformat.read(path, as_version=4).cells
    code = [(i, cell.source) for i, cell in enumerate(cells) if cell.cell_type == "code" and cell.source.strip()]
    exercises = [(i, source) for i, source in code if ANSWER_CALL.match(source.rstrip().splitlines()[-1])]
    return code[0][1], exercises


class _Kernel:
    """A fresh python3 kernel; ``run(code)`` returns the reply status and the error outputs' text."""

    def __init__(self, cwd: Path):
        from jupyter_client.manager import start_new_kernel

        self.manager, self.client = start_new_kernel(kernel_name="python3", cwd=str(cwd),
                                                     startup_timeout=CELL_TIMEOUT)

    def run(self, code: str) -> tuple[str, list[str]]:
        errors: list[str] = []

        def hook(message):
            kind, content = message["header"]["msg_type"], message["content"]
            if kind == "error":
                errors.append(ANSI.sub("", "\n".join(content["traceback"])) or f"{content['ename']}: {content['evalue']}")
            elif kind == "stream" and content.get("name") == "stderr" and "Traceback" in content["text"]:
                errors.append(content["text"])

        reply = self.client.execute_interactive(code, timeout=CELL_TIMEOUT, output_hook=hook, allow_stdin=False)
        return reply["content"]["status"], errors

    def close(self) -> None:
        self.client.stop_channels()
        self.manager.shutdown_kernel(now=True)


@pytest.fixture
def kernel(lesson_notebook: Path):
    started = _Kernel(lesson_notebook.parent)
    try:
        yield started
    finally:
        started.close()


def test_name_error_hint_says_which_cell_to_run():
    before = name_error_hint("np", setup_ran=False, line=2, text="np.zeros(2)")
    assert before.splitlines()[0] == "NameError: `np` is not defined (line 2: np.zeros(2))."
    assert "Run the first code cell of the lesson (Setup" in before
    after = name_error_hint("explorer", setup_ran=True)
    assert "Setup has run" in after and "Run the cell that defines it" in after and "first code cell" not in after
    with pytest.raises(TypeError, match="`name`"):
        name_error_hint(3, setup_ran=True)


@pytest.mark.slow
def test_every_exercise_cell_runs_alone_after_setup(lesson_notebook: Path, kernel: _Kernel):
    setup, exercises = _setup_and_exercises(lesson_notebook)
    assert exercises, f"{lesson_notebook.name} has no exercise cell (a last line calling ex.check_N)"
    status, errors = kernel.run(setup)
    assert status == "ok" and not errors, f"{lesson_notebook.name}: Setup failed:\n" + "\n".join(errors)
    kernel.run(KEEP_NAMES)
    failures = []
    for index, source in exercises:
        kernel.run(FORGET_NAMES)
        status, errors = kernel.run(source)
        if status != "ok" or errors:
            failures.append(f"cell {index}: {status}\n" + "\n".join(errors)[-1500:])
    assert not failures, f"{lesson_notebook.name}, after Setup alone:\n" + "\n----\n".join(failures)


@pytest.mark.slow
def test_every_exercise_cell_without_setup_runs_or_says_to_run_setup(lesson_notebook: Path, kernel: _Kernel):
    _, exercises = _setup_and_exercises(lesson_notebook)
    kernel.run(KEEP_NAMES)
    failures = []
    for index, source in exercises:
        kernel.run(FORGET_NAMES)
        status, errors = kernel.run(source)
        text = "\n".join(errors)
        if status == "ok" and not errors:
            continue
        plain = "Run the first code cell of the lesson (Setup" in text
        raw = any(sign in text for sign in TRACEBACK_SIGNS)
        if not plain or raw:
            failures.append(f"cell {index}:\n{text[-1500:]}")
    assert not failures, f"{lesson_notebook.name} without Setup:\n" + "\n----\n".join(failures)

    # The message itself, for a name every Setup defines: the import line of an exercise cell installs it.
    module = re.search(r"lesson\d\d[a-z]?", exercises[0][1]).group(0)
    kernel.run(FORGET_NAMES)
    status, errors = kernel.run(f"from udk_notebooks.exercises import {module} as ex\n{SETUP_MARKERS[0]}.zeros(2)")
    assert status == "error" and len(errors) == 1, (status, errors)
    assert errors[0].startswith(f"NameError: `{SETUP_MARKERS[0]}` is not defined (line 2")
    assert "Run the first code cell of the lesson (Setup" in errors[0]
    assert not any(sign in errors[0] for sign in TRACEBACK_SIGNS), errors[0]


@pytest.mark.slow
def test_a_name_error_inside_a_module_keeps_its_traceback(tmp_path: Path):
    (tmp_path / "broken_helper.py").write_text("def f():\n    return undefined_inside_module\n")
    kernel = _Kernel(tmp_path)
    try:
        status, errors = kernel.run("from udk_notebooks.exercises import lesson01 as ex\nimport broken_helper\nbroken_helper.f()")
    finally:
        kernel.close()
    assert status == "error" and len(errors) == 1, (status, errors)
    assert "undefined_inside_module" in errors[0] and "broken_helper.py" in errors[0]
    assert "Setup" not in errors[0]  # a bug in a module is not a forgotten Setup cell
