"""Explorers that fit: JupyterLab at 1366x768 with the file browser open, and 800 px wide.

A scratch notebook in the server's temporary root holds a long display equation and
every registered explorer (ipympl canvas): one-row figures with their sliders below,
2x2 figures with their sliders beside them. After Run All:

- at 1366x768: each explorer, scrolled to its top, has its figure and every slider
  inside the visible notebook area at once;
- at both widths: no element of an explorer ends past the notebook's right edge,
  each slider track is at least ``MIN_TRACK`` px wide, dragging a slider's handle
  moves its value and selects no text, and the display equation ends inside the
  notebook (it scrolls sideways when it is wider).

The same fit at 1366x768 in the Voila app (``make app``): on each explorer's page the
figure and every slider are in the window at once.

Screenshots of each explorer at each width go to ``test-artifacts/layout/``.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import nbformat
import nbformat.v4 as v4
import pytest
from playwright.sync_api import expect

from udk_notebooks.widgets import EXPLORERS as REGISTRY

from test_app_browser import voila  # noqa: F401  (the Voila app fixture)
from test_lesson_browser import ALL_PROMPTS_RUN_JS, FIGURE_READY_JS, KERNEL_IDLE, KERNEL_TIMEOUT_MS, _assert_no_errors

NOTEBOOK = "udk_layout_check.ipynb"
EXPLORERS = tuple(cls.__name__ for _, cls in sorted(REGISTRY.items()))
WIDTHS = {"laptop": {"width": 1366, "height": 768}, "narrow": {"width": 800, "height": 768}}
MIN_TRACK = 190  # px: a slider track a student can aim at
RUN_ALL_TIMEOUT_MS = 600_000
FIGURE_TIMEOUT_MS = 90_000
LONG_EQUATION = ("$$M\\ddot q = Q + M^{1/2}\\left(A M^{-1/2}\\right)^{+}\\left(b - A M^{-1} Q\\right)"
                 + "".join(f" + \\alpha_{{{k}}}\\beta_{{{k}}}\\gamma_{{{k}}}" for k in range(24)) + "$$")

# The visible notebook area (viewport of the scrolled panel) in CSS pixels.
NOTEBOOK_BOX_JS = """
() => {
  const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-WindowedPanel-outer')
             || document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook');
  const r = panel.getBoundingClientRect();
  return {left: r.left, right: r.left + panel.clientWidth, top: r.top, bottom: r.top + panel.clientHeight};
}
"""
# Visible elements of an explorer whose right edge is past `limit` (the notebook's edge).
PAST_EDGE_JS = """
([explorer, limit]) => [...explorer.querySelectorAll('*')].filter(e => {
  const r = e.getBoundingClientRect();
  return r.width > 0 && r.height > 0 && getComputedStyle(e).visibility !== 'hidden' && r.right > limit + 1;
}).map(e => `${e.tagName.toLowerCase()}.${[...e.classList].join('.')} ends at ${Math.round(e.getBoundingClientRect().right)}`)
"""
# Boxes of the explorer's figure and controls (bottom of the lowest control).
PARTS_JS = """
(explorer) => {
  const box = e => e.getBoundingClientRect();
  const figure = explorer.querySelector('.udk-explorer-figure');
  const controls = [...explorer.querySelectorAll('.udk-explorer-controls .widget-slider, .udk-explorer-controls .widget-toggle-buttons, .udk-explorer-animate')];
  return {top: box(explorer).top, figure_bottom: box(figure).bottom,
          controls_bottom: Math.max(...controls.map(c => box(c).bottom)),
          tracks: [...explorer.querySelectorAll('.widget-slider .noUi-target')].map(t => box(t).width)};
}
"""


def _write_notebook(root: Path) -> int:
    cells = [v4.new_markdown_cell("# Layout check\n\nA long display equation:\n\n" + LONG_EQUATION),
             v4.new_code_cell("%matplotlib widget\nimport udk_notebooks.widgets as w")]
    cells += [v4.new_code_cell(f"w.{name}()") for name in EXPLORERS]
    notebook = v4.new_notebook(cells=cells, metadata={"kernelspec": {
        "name": "python3", "display_name": "Python 3", "language": "python"}})
    nbformat.write(notebook, root / NOTEBOOK)
    return sum(c.cell_type == "code" for c in cells)


def _run_all(page, lab, code_cells: int, shot: Path) -> None:
    page.goto(lab.page_url(f"lab/tree/{NOTEBOOK}?reset"))
    statusbar = page.locator("#jp-main-statusbar")
    expect(statusbar).to_contain_text(KERNEL_IDLE, timeout=KERNEL_TIMEOUT_MS)
    page.locator(".lm-MenuBar-item").filter(has_text=re.compile(r"^\s*Run\s*$")).click()
    page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
    try:
        outcome = page.wait_for_function(ALL_PROMPTS_RUN_JS, arg=code_cells, timeout=RUN_ALL_TIMEOUT_MS,
                                         polling=500).json_value()
    except Exception:
        outcome = "timeout"
    if outcome != "done":
        page.screenshot(path=str(shot))
        _assert_no_errors(page, "while running the layout notebook")
        pytest.fail(f"Run All Cells did not finish ({outcome})")
    _assert_no_errors(page, "after running the layout notebook")


def _show_file_browser(page, wanted: bool) -> None:
    browser = page.locator("#filebrowser")
    if browser.is_visible() != wanted:
        page.locator('.lm-TabBar-tab[data-id="filebrowser"]').first.click()
    if wanted:
        expect(browser).to_be_visible(timeout=10_000)
    else:
        expect(browser).to_be_hidden(timeout=10_000)


def _drag_moves_value(page, slider) -> tuple[float, float, str]:
    """Drag the slider's handle 60 px to the right (or left at its end); value before, after, selected text."""
    handle = slider.locator(".noUi-handle")
    handle.scroll_into_view_if_needed()
    before = float(handle.get_attribute("aria-valuenow"))
    high = float(handle.get_attribute("aria-valuemax"))
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
    after = float(handle.get_attribute("aria-valuenow"))
    selected = page.evaluate("() => window.getSelection().toString()")
    return before, after, selected


@pytest.mark.parametrize("size", sorted(WIDTHS))
def test_explorers_fit_and_drag(size, lab, chromium, artifacts_dir: Path):
    code_cells = _write_notebook(lab.root_dir)
    shots = artifacts_dir / "layout"
    shots.mkdir(parents=True, exist_ok=True)
    context = chromium.new_context(viewport=WIDTHS[size])
    page = context.new_page()
    page.set_default_timeout(30_000)
    try:
        _run_all(page, lab, code_cells, shots / f"{size}-run-all.png")
        _show_file_browser(page, wanted=(size == "laptop"))
        time.sleep(0.5)  # the notebook takes its new width
        explorers = page.locator(".udk-explorer")
        expect(explorers).to_have_count(len(EXPLORERS), timeout=FIGURE_TIMEOUT_MS)
        problems = []
        for k, name in enumerate(EXPLORERS):
            explorer = explorers.nth(k)
            scope = explorer.element_handle()
            explorer.scroll_into_view_if_needed()
            page.wait_for_function(FIGURE_READY_JS, arg=scope, timeout=FIGURE_TIMEOUT_MS)
            scope.evaluate("e => e.scrollIntoView({block: 'start'})")
            time.sleep(0.3)
            notebook = page.evaluate(NOTEBOOK_BOX_JS)
            parts = page.evaluate(PARTS_JS, scope)
            page.screenshot(path=str(shots / f"{size}-{name}.png"))
            past = page.evaluate(PAST_EDGE_JS, [scope, notebook["right"]])
            if past:
                problems.append(f"{name}: past the notebook's edge at {notebook['right']:.0f}: " + "; ".join(past[:5]))
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
    finally:
        context.close()


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_app_page_shows_figure_and_sliders_at_once(name, voila, chromium, artifacts_dir: Path):
    url, *_ = voila
    context = chromium.new_context(viewport=WIDTHS["laptop"])
    page = context.new_page()
    try:
        page.goto(f"{url}/voila/render/{name}.ipynb")
        explorer = page.locator(".udk-explorer").first
        explorer.wait_for(timeout=FIGURE_TIMEOUT_MS)
        scope = explorer.element_handle()
        page.wait_for_function(FIGURE_READY_JS, arg=scope, timeout=FIGURE_TIMEOUT_MS)
        scope.evaluate("e => e.scrollIntoView({block: 'start'})")
        time.sleep(0.3)
        parts = page.evaluate(PARTS_JS, scope)
        height = page.evaluate("() => window.innerHeight")
        shots = artifacts_dir / "layout"
        shots.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(shots / f"app-{name}.png"))
        for what in ("figure_bottom", "controls_bottom"):
            assert parts[what] <= height + 1, (
                f"{name}: the {what.split('_')[0]} ends {parts[what] - parts['top']:.0f} px below the explorer's "
                f"top, the window is {height} px high")
        narrow = [round(w) for w in parts["tracks"] if w < MIN_TRACK]
        assert not narrow, f"{name}: slider tracks of {narrow} px (at least {MIN_TRACK})"
    finally:
        # as a tab closes: Voila's page ends its kernel, so twelve pages stay within the app's kernel cap
        page.close(run_before_unload=True)
        context.close()
