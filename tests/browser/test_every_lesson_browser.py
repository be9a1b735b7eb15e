"""Every lesson in a real JupyterLab at 1366x768 with the file browser open.

For each lesson: Run All Cells finishes without an error output; every explorer
on the page (``.udk-explorer``) redraws its figure when one of its sliders is
moved with the keyboard; no explorer figure is cut off at the right edge of the
notebook. A screenshot of each lesson goes to ``test-artifacts/``.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import nbformat
import pytest
from playwright.sync_api import expect

from test_lesson_browser import (
    ALL_PROMPTS_RUN_JS, FIGURE_CHANGED_JS, FIGURE_JS, FIGURE_READY_JS, KERNEL_IDLE, KERNEL_TIMEOUT_MS,
    RUN_ALL_TIMEOUT_MS, _assert_no_errors, _Stepper,
)

LAPTOP = {"width": 1366, "height": 768}
CHANGE_TIMEOUT_MS = 60_000  # explorers that update on release run several simulations
LESSONS = sorted(p.name for p in (Path(__file__).resolve().parents[2] / "lessons").glob("*.ipynb"))

# Right edges of each explorer's figure and of the notebook's visible area, in CSS pixels.
CLIPPING_JS = """
() => {
  const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-WindowedPanel-outer')
             || document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook');
  const limit = panel.getBoundingClientRect().right;
  return [...document.querySelectorAll('.udk-explorer .udk-explorer-figure')].map(f => {
    const shown = f.querySelector('canvas, img') || f;
    return {right: shown.getBoundingClientRect().right, limit: limit,
            width: shown.getBoundingClientRect().width};
  });
}
"""


def _open_file_browser(page) -> None:
    browser = page.locator("#filebrowser")
    if not browser.is_visible():
        page.locator('.lm-TabBar-tab[data-id="filebrowser"]').first.click()
    expect(browser).to_be_visible(timeout=10_000)


@pytest.mark.parametrize("lesson", LESSONS)
def test_lesson_runs_and_every_explorer_responds(lesson, lab, chromium, artifacts_dir: Path):
    notebook = lab.root_dir / lesson
    code_cells = sum(c.cell_type == "code" for c in nbformat.read(notebook, as_version=4).cells)
    context = chromium.new_context(viewport=LAPTOP)
    page = context.new_page()
    page.set_default_timeout(30_000)
    shot = artifacts_dir / f"every-lesson-{Path(lesson).stem}.png"
    try:
        page.goto(lab.page_url(f"lab/tree/{lesson}?reset"))  # a fresh workspace: no tab of an earlier lesson
        statusbar = page.locator("#jp-main-statusbar")
        expect(statusbar).to_contain_text(KERNEL_IDLE, timeout=KERNEL_TIMEOUT_MS)
        _open_file_browser(page)

        page.locator(".lm-MenuBar-item").filter(has_text=re.compile(r"^\s*Run\s*$")).click()
        page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
        try:
            outcome = page.wait_for_function(ALL_PROMPTS_RUN_JS, arg=code_cells, timeout=RUN_ALL_TIMEOUT_MS,
                                             polling=500).json_value()
        except Exception:
            outcome = "timeout"
        if outcome != "done":
            page.screenshot(path=str(shot))
            _assert_no_errors(page, f"while running {lesson}")
            pytest.fail(f"{lesson}: Run All Cells did not finish ({outcome})")
        expect(statusbar).to_contain_text(KERNEL_IDLE, timeout=KERNEL_TIMEOUT_MS)
        _assert_no_errors(page, f"after running {lesson}")

        explorers = page.locator(".udk-explorer")
        for k in range(explorers.count()):
            explorer = explorers.nth(k)
            explorer.scroll_into_view_if_needed()
            scope = explorer.element_handle()
            page.wait_for_function(FIGURE_READY_JS, arg=scope, timeout=CHANGE_TIMEOUT_MS)
            time.sleep(0.3)  # late frames of the first draw
            before = page.evaluate(FIGURE_JS, scope)["sig"]
            handle = explorer.locator(".widget-slider .noUi-handle").first
            handle.scroll_into_view_if_needed()
            _Stepper(handle).press()
            try:
                page.wait_for_function(FIGURE_CHANGED_JS, arg=[scope, before], timeout=CHANGE_TIMEOUT_MS,
                                       polling=100)
            except Exception:
                page.screenshot(path=str(shot))
                pytest.fail(f"{lesson}: explorer {k + 1}'s figure did not change after a slider step")
        _assert_no_errors(page, f"after moving the sliders of {lesson}")

        page.screenshot(path=str(shot))
        for k, box in enumerate(page.evaluate(CLIPPING_JS)):
            assert box["right"] <= box["limit"] + 1, (
                f"{lesson}: explorer {k + 1}'s figure ends at x = {box['right']:.0f} px, past the notebook's "
                f"edge at {box['limit']:.0f} px (1366x768, file browser open)")
    finally:
        context.close()
