"""The first drag of an explorer's slider reaches the kernel and redraws the figure.

Lessons 04, 05 (double pendulum) and 07 lost the first drag: the readout showed the new
value, the kernel kept the old one, and the figure did not change, after a
``pointercancel`` on the explorer's image. Here the first slider of each of those
explorers is dragged once with the mouse (press, move, release), right after Run All,
and the test reads the value back from the kernel itself (a second client on the
lesson's kernel) and compares the figure before and after.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest
from playwright.sync_api import expect

from test_every_lesson_browser import LAPTOP, _open_file_browser
from test_lesson_browser import (
    ALL_PROMPTS_RUN_JS, FIGURE_CHANGED_JS, FIGURE_JS, FIGURE_READY_JS, KERNEL_IDLE, KERNEL_TIMEOUT_MS,
    RUN_ALL_TIMEOUT_MS, _assert_no_errors,
)

CHANGE_TIMEOUT_MS = 60_000  # these explorers run several simulations per update
DRAG_PX = 60  # how far the handle is dragged to the right, in CSS pixels
CASES = {  # lesson: the explorer class whose first slider is dragged
    "04_lagrange_and_constraints.ipynb": "GrowingCircleExplorer",
    "05_multibody_systems.ipynb": "DoublePendulumExplorer",
    "07_analytical_dynamics_experimental.ipynb": "InclinedLineExplorer",
}
# Pointer events the browser ends a drag with when it takes the pointer for itself.
WATCH_JS = """
() => {
  window.__udkEvents = [];
  for (const kind of ['pointercancel', 'dragstart', 'lostpointercapture']) {
    document.addEventListener(kind, e => window.__udkEvents.push(
      kind + ' on ' + (e.target.tagName || '?') + '.' + (e.target.className || '')), true);
  }
}
"""
VALUES_CODE = """
import gc as _gc, json as _json
from udk_notebooks.widgets.base import Explorer as _Explorer
print(_json.dumps([[type(_e).__name__, _e.values] for _e in _gc.get_objects()
                   if isinstance(_e, _Explorer) and not _e.closed]))
"""


def _kernel_values(lab, class_name: str) -> dict:
    """``explorer.values`` of the lesson's one live explorer of ``class_name``, read in its kernel."""
    from jupyter_client import BlockingKernelClient

    sessions = lab.api("GET", "sessions")
    assert len(sessions) == 1, f"expected one kernel session, found {len(sessions)}"
    connection = lab.root_dir.parent / "jupyter_runtime_dir" / f"kernel-{sessions[0]['kernel']['id']}.json"
    client = BlockingKernelClient(connection_file=str(connection))
    client.load_connection_file()
    client.start_channels()
    printed: list[str] = []
    try:
        client.wait_for_ready(timeout=60)
        client.execute_interactive(VALUES_CODE, timeout=60, store_history=False, output_hook=lambda m: printed.append(
            m["content"].get("text", "")) if m["header"]["msg_type"] == "stream" else None)
    finally:
        client.stop_channels()
    found = [values for name, values in json.loads("".join(printed)) if name == class_name]
    assert len(found) == 1, f"expected one live {class_name} in the kernel, found {len(found)}"
    return found[0]


@pytest.mark.parametrize("lesson", sorted(CASES))
def test_first_drag_reaches_the_kernel_and_redraws(lesson, lab, chromium, artifacts_dir: Path):
    context = chromium.new_context(viewport=LAPTOP)  # a laptop, as the students' (1366x768)
    try:
        _first_drag(lesson, lab, context.new_page(), artifacts_dir)
    finally:
        context.close()


def _first_drag(lesson, lab, page, artifacts_dir: Path) -> None:
    class_name = CASES[lesson]
    page.set_default_timeout(30_000)
    code_cells = sum(c.cell_type == "code" for c in nbformat.read(lab.root_dir / lesson, as_version=4).cells)
    shot = artifacts_dir / f"first-drag-{Path(lesson).stem}.png"
    page.goto(lab.page_url(f"lab/tree/{lesson}?reset"))
    statusbar = page.locator("#jp-main-statusbar")
    expect(statusbar).to_contain_text(KERNEL_IDLE, timeout=KERNEL_TIMEOUT_MS)
    _open_file_browser(page)
    page.locator(".lm-MenuBar-item").filter(has_text=re.compile(r"^\s*Run\s*$")).click()
    page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
    outcome = page.wait_for_function(ALL_PROMPTS_RUN_JS, arg=code_cells, timeout=RUN_ALL_TIMEOUT_MS,
                                     polling=500).json_value()
    assert outcome == "done", f"{lesson}: Run All Cells ended with {outcome}"
    expect(statusbar).to_contain_text(KERNEL_IDLE, timeout=KERNEL_TIMEOUT_MS)
    _assert_no_errors(page, f"after running {lesson}")

    # The explorer of that class: the first one in the page whose cell built it (lesson 05 has four).
    explorers = page.locator(".udk-explorer")
    index = 0 if class_name != "DoublePendulumExplorer" else _index_of_double_pendulum(page)
    explorer = explorers.nth(index)
    slider = explorer.locator(".widget-slider").first
    slider.scroll_into_view_if_needed()
    scope = explorer.element_handle()
    page.wait_for_function(FIGURE_READY_JS, arg=scope, timeout=CHANGE_TIMEOUT_MS)
    before_values = _kernel_values(lab, class_name)
    before_figure = page.evaluate(FIGURE_JS, scope)["sig"]

    name = slider.locator(".widget-label").first.inner_text().strip().split(" (")[0]  # "m1 (kg)": name, unit
    handle = slider.locator(".noUi-handle")
    page.evaluate(WATCH_JS)
    box = handle.bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x + DRAG_PX, y, steps=12)
    page.mouse.up()
    shown = float(slider.locator(".widget-readout").inner_text())
    events = page.evaluate("window.__udkEvents")

    try:
        page.wait_for_function(FIGURE_CHANGED_JS, arg=[scope, before_figure], timeout=CHANGE_TIMEOUT_MS, polling=100)
    except Exception:
        page.screenshot(path=str(shot))
        pytest.fail(f"{lesson}: the figure did not change after dragging {name!r} to {shown} "
                    f"(browser events during the drag: {events})")
    expect(statusbar).to_contain_text(KERNEL_IDLE, timeout=KERNEL_TIMEOUT_MS)
    after_values = _kernel_values(lab, class_name)
    assert shown != before_values[name], f"{lesson}: the drag did not move {name!r} (still {shown})"
    assert after_values[name] == pytest.approx(shown, abs=1e-9 + 1e-6 * abs(shown)), (
        f"{lesson}: the readout of {name!r} shows {shown} but the kernel has {after_values[name]} "
        f"(browser events during the drag: {events})")
    assert not [e for e in events if e.startswith(("pointercancel", "dragstart"))], events
    _assert_no_errors(page, f"after dragging {name!r} in {lesson}")


def _index_of_double_pendulum(page) -> int:
    """Position among the page's explorers of the one with the double pendulum's slider names."""
    labels = page.evaluate("""() => [...document.querySelectorAll('.udk-explorer')].map(
        e => [...e.querySelectorAll('.widget-slider .widget-label')].map(l => l.textContent.trim().split(' (')[0]))""")
    for index, names in enumerate(labels):
        if "theta1_0" in " ".join(names) or ("m1" in names and "m2" in names and "l2" in names):
            return index
    pytest.fail(f"no double pendulum explorer among {labels}")
