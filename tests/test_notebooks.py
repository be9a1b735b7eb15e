"""Every lesson notebook is stored clean and runs top to bottom in a fresh kernel."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

CELL_TIMEOUT = 600  # seconds, per cell
KERNEL_NAME = "python3"


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


@pytest.mark.slow
def test_lesson_executes(lesson_notebook: Path):
    nb = nbformat.read(lesson_notebook, as_version=4)
    client = NotebookClient(
        nb,
        timeout=CELL_TIMEOUT,
        kernel_name=KERNEL_NAME,
        resources={"metadata": {"path": str(lesson_notebook.parent)}},  # cwd = lessons/
    )
    client.execute()  # raises CellExecutionError with the traceback on failure
