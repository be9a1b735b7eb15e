"""A lesson saved with its outputs and reopened without its kernel tells the student to run the cell.

JupyterLab does not save widget state by default, so a reopened lesson shows "Error
displaying widget: model not found" where each explorer was. Every explorer display
also carries a note (``udk_notebooks.widgets.base.OFFLINE_NOTE``) that the live
explorer's style hides: here the note is hidden while the explorer runs, and shows
once the notebook is saved, its kernel shut down and the page loaded again.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import nbformat
from playwright.sync_api import expect

from browser_kit import open_notebook, run_all

LESSON = "07_analytical_dynamics_experimental.ipynb"
NOTE = ".udk-explorer-offline"
SAVE_TIMEOUT_S = 60


def _saved_note_count(path: Path) -> int:
    """Explorer outputs with the offline note in the notebook on disk; 0 while the server is writing it.

    jupyter_server's "atomic" save keeps a backup copy but writes the notebook in place: between the
    truncation and the last byte the file is empty or cut short (a soak run beside a CPU burner read
    it empty), and that is "not saved yet", not a failure.
    """
    try:
        nb = nbformat.read(path, as_version=4)
    except nbformat.reader.NotJSONError:  # mid-write: empty or cut short
        return 0
    return sum("udk-explorer-offline" in str(output.get("data", {}).get("text/html", ""))
               for cell in nb.cells if cell.cell_type == "code" for output in cell.get("outputs", []))


def test_reopened_lesson_says_to_run_the_explorer_cell(lab, lab_page, artifacts_dir: Path):
    page, path = lab_page, lab.root_dir / LESSON
    original = path.read_text(encoding="utf-8")
    try:
        run_all(page, lab, LESSON, shot=artifacts_dir / "reopened-lesson07-run-all-failed.png")
        explorer = page.locator(".udk-explorer").first
        expect(explorer).to_be_visible(timeout=60_000)
        notes = page.locator(NOTE)
        assert notes.count() >= 1, "the explorer's cell has no offline note"
        expect(notes.first).to_be_hidden()  # the live explorer hides it

        # File > Save Notebook, then wait for the file on disk to hold the note.
        page.locator(".lm-MenuBar-item").filter(has_text=re.compile(r"^\s*File\s*$")).click()
        page.get_by_role("menuitem", name=re.compile(r"^Save Notebook\b")).first.click()
        deadline = time.monotonic() + SAVE_TIMEOUT_S
        while _saved_note_count(path) == 0:
            assert time.monotonic() < deadline, f"{LESSON} was not saved with its outputs"
            time.sleep(0.5)

        # Close the kernel, as a new day's session would, and load the page again.
        for session in lab.api("GET", "sessions") or []:
            lab.api("DELETE", f"sessions/{session['id']}")
        open_notebook(page, lab, LESSON, reset=False)
        note = page.locator(NOTE).first
        note.scroll_into_view_if_needed()
        expect(note).to_be_visible(timeout=30_000)
        expect(note).to_contain_text("run this cell")
        assert page.locator(".udk-explorer").count() == 0, "an explorer came back without running its cell"
        page.screenshot(path=str(artifacts_dir / "reopened-lesson07.png"))
    finally:
        path.write_text(original, encoding="utf-8")
