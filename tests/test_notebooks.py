"""Every lesson notebook is stored clean and runs top to bottom in a fresh kernel.

The lessons run once per session, in static-export mode (``executed_lessons`` in conftest.py: the
same execution the static site renders); each runs in a student's kernel, in JupyterLab, in
tests/browser/test_every_lesson_browser.py.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest


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
def test_lesson_executes(lesson_notebook: Path, executed_lessons: dict):
    result = executed_lessons[lesson_notebook]
    if isinstance(result, Exception):  # CellExecutionError carries the failing cell's traceback
        raise result
    assert result.metadata["udk_static_export"] is True  # the execution the site renders
    code = [cell for cell in result.cells if cell.cell_type == "code" and cell.source.strip()]
    assert all(cell.execution_count for cell in code), f"{lesson_notebook.name}: a code cell did not run"


# What a cell shows when its last line returns a matplotlib object: `<matplotlib.legend.Legend at 0x7f...>`,
# `<Axes: title={'center': 'x'}>`, `Text(0.5, 1.0, 'title')`, `[<matplotlib.lines.Line2D at 0x...>]`.
BARE_REPR = re.compile(r"^\[?<(matplotlib\.[\w.]+ (object )?at 0x[0-9a-f]+|Axes: [^>]*)>|^(Text|Annotation)\(")


def test_bare_repr_pattern():
    for shown in ("<matplotlib.legend.Legend at 0x7f3a2c1d0>", "<Axes: xlabel='t (s)'>", "Text(0.5, 1.0, 'orbit')",
                  "[<matplotlib.lines.Line2D at 0x7f0000>]"):
        assert BARE_REPR.search(shown), shown
    for shown in ("<Figure size 640x480 with 1 Axes>", "array([1., 2.])", "0.25"):
        assert not BARE_REPR.search(shown), shown


@pytest.mark.slow
def test_lesson_shows_no_bare_object_repr(lesson_notebook: Path, executed_lessons: dict):
    """No cell's result is a bare matplotlib object (end the line with `;` or assign it)."""
    result = executed_lessons[lesson_notebook]
    if isinstance(result, Exception):
        raise result
    found = [f"cell {k}: {output['data']['text/plain'][:80]!r}"
             for k, cell in enumerate(result.cells) if cell.cell_type == "code"
             for output in cell.get("outputs", ())
             if output.get("output_type") == "execute_result"
             and BARE_REPR.search(output.get("data", {}).get("text/plain", ""))]
    assert not found, f"{lesson_notebook.name} shows object reprs:\n" + "\n".join(found)
