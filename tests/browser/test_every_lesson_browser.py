"""Every lesson in a real JupyterLab at 1366x768 with the file browser open.

For each lesson: Run All Cells finishes without an error output; every explorer
on the page (``.udk-explorer``) redraws its figure when one of its sliders is
moved with the keyboard; no explorer figure is cut off at the right edge of the
notebook. A screenshot of each lesson goes to ``test-artifacts/``.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from browser_kit import (
    LAPTOP, Stepper, assert_no_errors, figure, run_all, wait_figure_changed, wait_figure_ready,
)

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


@pytest.mark.parametrize("lesson", LESSONS)
def test_lesson_runs_and_every_explorer_responds(lesson, lab, page_at, artifacts_dir: Path):
    page = page_at(LAPTOP)
    shot = artifacts_dir / f"every-lesson-{Path(lesson).stem}.png"
    run_all(page, lab, lesson, shot=shot, file_browser=True)

    explorers = page.locator(".udk-explorer")
    for k in range(explorers.count()):
        explorer = explorers.nth(k)
        explorer.scroll_into_view_if_needed()
        scope = explorer.element_handle()
        wait_figure_ready(page, scope, CHANGE_TIMEOUT_MS)
        time.sleep(0.3)  # late frames of the first draw
        before = figure(page, scope)["sig"]
        handle = explorer.locator(".widget-slider .noUi-handle").first
        handle.scroll_into_view_if_needed()
        Stepper(handle).press()
        try:
            wait_figure_changed(page, scope, before, CHANGE_TIMEOUT_MS, polling=100)
        except Exception:
            page.screenshot(path=str(shot))
            pytest.fail(f"{lesson}: explorer {k + 1}'s figure did not change after a slider step")
    assert_no_errors(page, f"after moving the sliders of {lesson}")

    page.screenshot(path=str(shot))
    for k, box in enumerate(page.evaluate(CLIPPING_JS)):
        assert box["right"] <= box["limit"] + 1, (
            f"{lesson}: explorer {k + 1}'s figure ends at x = {box['right']:.0f} px, past the notebook's "
            f"edge at {box['limit']:.0f} px (1366x768, file browser open)")
