"""Explorers that fit: JupyterLab at 1366x768 with the file browser open, and 800 px wide.

A scratch notebook in the server's temporary root holds a long display equation and
every registered explorer (ipympl canvas): one-row figures with their sliders below,
2x2 figures with their sliders beside them. After Run All:

- at 1366x768: each explorer, scrolled to its top, has its figure and every slider
  inside the visible notebook area at once;
- at both widths: no element of an explorer ends past the notebook's right edge,
  each slider track is at least ``MIN_TRACK`` px wide, dragging a slider's handle
  moves its value and selects no text, and the display equation ends inside the
  notebook (it scrolls sideways when it is wider);
- at both widths: the smallest text of each figure, at the size the page shows the
  figure (the canvas may be scaled down to the column), is at least ``MIN_TEXT_PX``.
  The kernel writes each figure's smallest font size (points) and dpi to a JSON file.

The same fit at 1366x768 in the Voila app (``make app``) is checked on each explorer's
page by test_app_browser.py (one page load per explorer for all of a page's checks).

Screenshots of each explorer at each width go to ``test-artifacts/layout/``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import nbformat.v4 as v4
import pytest
from playwright.sync_api import expect

from udk_notebooks.widgets import EXPLORERS as REGISTRY

from browser_kit import (
    FIGURE_SCALE_JS, MIN_TRACK, NOTEBOOK_BOX_JS, PARTS_JS, PAST_EDGE_JS, run_all, show_file_browser, slider_state,
    wait_figure_ready, write_notebook,
)

NOTEBOOK = "udk_layout_check.ipynb"
FONTS = "udk_layout_fonts.json"
MIN_TEXT_PX = 9.0  # the smallest text a student can read on a laptop screen at 1x
EXPLORERS = tuple(cls.__name__ for _, cls in sorted(REGISTRY.items()))
WIDTHS = {"laptop": {"width": 1366, "height": 768}, "narrow": {"width": 800, "height": 768}}
FIGURE_TIMEOUT_MS = 90_000
LONG_EQUATION = ("$$M\\ddot q = Q + M^{1/2}\\left(A M^{-1/2}\\right)^{+}\\left(b - A M^{-1} Q\\right)"
                 + "".join(f" + \\alpha_{{{k}}}\\beta_{{{k}}}\\gamma_{{{k}}}" for k in range(24)) + "$$")



# The last cell: each figure's smallest visible text (points) and its dpi in CSS pixels (ipympl multiplies
# the figure's dpi by the screen's device pixel ratio).
FONTS_CELL = f"""
import json
from matplotlib.text import Text

def _smallest_text_pt(figure):
    return min(t.get_fontsize() for t in figure.findobj(Text) if t.get_visible() and t.get_text().strip())

json.dump({{type(e).__name__: [_smallest_text_pt(e.figure),
                              e.figure.dpi / getattr(e.figure.canvas, "device_pixel_ratio", 1)]
           for e in explorers}}, open({FONTS!r}, "w"))
"""



def _write_notebook(root: Path) -> None:
    cells = [v4.new_markdown_cell("# Layout check\n\nA long display equation:\n\n" + LONG_EQUATION),
             "%matplotlib widget\nimport udk_notebooks.widgets as w\nexplorers = []"]
    built = [f"explorers.append(w.{name}())\nexplorers[-1]" for name in EXPLORERS]
    write_notebook(root / NOTEBOOK, cells + built + [FONTS_CELL])


def _drag_moves_value(page, slider) -> tuple[float, float, str]:
    """Drag the slider's handle 60 px to the right (or left at its end); value before, after, selected text."""
    handle = slider.locator(".noUi-handle")
    handle.scroll_into_view_if_needed()
    before, _, high = slider_state(handle)
    box = handle.bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.evaluate("() => window.getSelection().removeAllRanges()")
    page.mouse.move(x, y)
    page.mouse.down()
    step = -12 if before >= high else 12
    for k in range(1, 6):
        page.mouse.move(x + k * step, y + (3 if k % 2 else -3))  # a hand that wobbles over the labels
    # ... and wanders off the track, over the readout and the labels below, before letting go
    page.mouse.move(x + 5 * step, y + 40)
    page.mouse.up()
    time.sleep(0.3)
    after = slider_state(handle)[0]
    selected = page.evaluate("() => window.getSelection().toString()")
    return before, after, selected


@pytest.mark.parametrize("size", sorted(WIDTHS))
def test_explorers_fit_and_drag(size, lab, page_at, artifacts_dir: Path):
    _write_notebook(lab.root_dir)
    shots = artifacts_dir / "layout"
    shots.mkdir(parents=True, exist_ok=True)
    page = page_at(WIDTHS[size])
    run_all(page, lab, NOTEBOOK, shot=shots / f"{size}-run-all.png")
    show_file_browser(page, wanted=(size == "laptop"))
    time.sleep(0.5)  # the notebook takes its new width
    explorers = page.locator(".udk-explorer")
    expect(explorers).to_have_count(len(EXPLORERS), timeout=FIGURE_TIMEOUT_MS)
    fonts = json.loads((lab.root_dir / FONTS).read_text())
    problems = []
    for k, name in enumerate(EXPLORERS):
        explorer = explorers.nth(k)
        scope = explorer.element_handle()
        explorer.scroll_into_view_if_needed()
        wait_figure_ready(page, scope, FIGURE_TIMEOUT_MS)
        scope.evaluate("e => e.scrollIntoView({block: 'start'})")
        time.sleep(0.3)
        notebook = page.evaluate(NOTEBOOK_BOX_JS)
        parts = page.evaluate(PARTS_JS, scope)
        page.screenshot(path=str(shots / f"{size}-{name}.png"))
        past = page.evaluate(PAST_EDGE_JS, [scope, notebook["right"]])
        if past:
            problems.append(f"{name}: past the notebook's edge at {notebook['right']:.0f}: " + "; ".join(past[:5]))
        scale = scope.evaluate(FIGURE_SCALE_JS)
        smallest_pt, dpi = fonts[name]
        if scale is None:
            problems.append(f"{name}: no figure canvas to measure")
        elif smallest_pt * dpi / 72.0 * scale < MIN_TEXT_PX:
            problems.append(f"{name}: the figure is shown at {scale:.2f} of its size, its smallest text "
                            f"({smallest_pt:g} pt) at {smallest_pt * dpi / 72.0 * scale:.1f} px (at least {MIN_TEXT_PX})")
        narrow = [round(w) for w in parts["tracks"] if w < MIN_TRACK]
        if narrow:
            problems.append(f"{name}: slider tracks of {narrow} px (at least {MIN_TRACK})")
        if size == "laptop":
            seen = notebook["bottom"] - parts["top"]
            for what in ("figure_bottom", "controls_bottom"):
                if parts[what] > notebook["bottom"] + 1:
                    problems.append(f"{name}: {what.split('_')[0]} ends {parts[what] - parts['top']:.0f} px below "
                                    f"the explorer's top; the notebook shows {seen:.0f} px")
        before, after, selected = _drag_moves_value(page, explorer.locator(".widget-slider").first)
        if after == before:
            problems.append(f"{name}: dragging the first slider left its value at {before}")
        if selected.strip():
            problems.append(f"{name}: the drag selected text {selected[:60]!r}")
    equation = page.locator('.jp-RenderedMarkdown mjx-container[display="true"]').first
    equation.scroll_into_view_if_needed()
    notebook = page.evaluate(NOTEBOOK_BOX_JS)
    box = equation.bounding_box()
    if box["x"] + box["width"] > notebook["right"] + 1:
        problems.append(f"the display equation ends at {box['x'] + box['width']:.0f}, past {notebook['right']:.0f}")
    scrolls = equation.evaluate("e => e.scrollWidth <= e.clientWidth + 1 || getComputedStyle(e).overflowX === 'auto'")
    if not scrolls:
        problems.append("the display equation is wider than the notebook and does not scroll")
    page.screenshot(path=str(shots / f"{size}-equation.png"))
    assert not problems, f"at {WIDTHS[size]['width']}x{WIDTHS[size]['height']}:\n" + "\n".join(problems)
