"""Every lesson notebook is stored clean and runs top to bottom in a fresh kernel."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from udk_notebooks.site import execute_lessons

CELL_TIMEOUT = 600  # seconds, per cell


def test_lessons_exist(lessons_dir: Path):
    notebooks = sorted(lessons_dir.glob("*.ipynb")) if lessons_dir.is_dir() else []
    assert notebooks, f"no lessons found: no *.ipynb in {lessons_dir} (lessons are mandatory)"


def test_lesson_stored_without_outputs(lesson_notebook: Path):
    nb = nbformat.read(lesson_notebook, as_version=4)
    problems = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        if cell.get("outputs"):
            problems.append(f"cell {index}: {len(cell.outputs)} stored output(s)")
        if cell.get("execution_count") is not None:
            problems.append(f"cell {index}: execution_count={cell.execution_count}")
    if "widgets" in nb.metadata:
        problems.append("notebook metadata holds saved widget state ('widgets')")
    assert not problems, (
        f"{lesson_notebook.name} must be stored without outputs and execution counts "
        "(Edit > Clear Outputs of All Cells, then save):\n  " + "\n  ".join(problems)
    )


@pytest.fixture(scope="session")
def executed_lessons(request) -> dict:
    """The selected lessons executed once each, as a student's kernel runs them, two at a time."""
    chosen = {item.callspec.params["lesson_notebook"] for item in request.session.items
              if item.originalname == "test_lesson_executes"}
    return execute_lessons(sorted(chosen), static=False, timeout=CELL_TIMEOUT, workers=2)


@pytest.mark.slow
def test_lesson_executes(lesson_notebook: Path, executed_lessons: dict):
    result = executed_lessons[lesson_notebook]
    if isinstance(result, Exception):  # CellExecutionError carries the failing cell's traceback
        raise result
    code = [cell for cell in result.cells if cell.cell_type == "code" and cell.source.strip()]
    assert all(cell.execution_count for cell in code), f"{lesson_notebook.name}: a code cell did not run"
