"""Lesson 1 in a real JupyterLab: runs clean, and the `slope` slider redraws the figure.

Relies on (keep these stable in the lesson and widget):
- a notebook ``01_explicit_equation_of_motion.ipynb`` whose kernelspec is ``python3``;
- an ipywidgets ``FloatSlider(description="slope")``;
- its figure, in the same cell's output as the slider (else the first one in the page):
  an ipympl canvas (``.jupyter-matplotlib-canvas-div canvas``) or an inline image inside
  an Output widget (``.widget-output img``), which changes on every slider step.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import nbformat
import pytest
from playwright.sync_api import expect

LESSON = "01_explicit_equation_of_motion.ipynb"
SLIDER_LABEL = "slope"
# the label is the name, then its unit where it has one: "slope (1)"
SLIDER = f'.widget-slider:has(.widget-label:text-matches("^{SLIDER_LABEL}( [(]|$)"))'
KERNEL_IDLE = re.compile(r"Python 3.*\|\s*Idle")

KERNEL_TIMEOUT_MS = 90_000  # page load until the kernel is idle
RUN_ALL_TIMEOUT_MS = 600_000  # Run All Cells until every code cell shows [n]
FIGURE_TIMEOUT_MS = 60_000  # until the first (non-blank) frame of the figure shows
CHANGE_TIMEOUT_MS = 30_000  # one slider step until the figure changes
WARMUP_PRESSES = 3
SAMPLES = 10

# The figure next to the slider: the first ipympl canvas or inline Output image inside
# `scope`, as a comparable signature ({kind, sig, blank}) or null.
FIGURE_JS = """
(scope) => {
  const root = scope || document;
  const canvas = root.querySelector('.jupyter-matplotlib-canvas-div canvas');
  if (canvas) {
    const url = canvas.toDataURL();
    const empty = document.createElement('canvas');
    empty.width = canvas.width;
    empty.height = canvas.height;
    return {kind: 'ipympl', sig: url, blank: canvas.width === 0 || url === empty.toDataURL()};
  }
  const img = root.querySelector('.widget-output img');
  if (img) return {kind: 'inline', sig: img.src, blank: !img.src};
  return null;
}
"""
FIGURE_CHANGED_JS = (
    "([scope, before]) => { const f = (" + FIGURE_JS + ")(scope);"
    " return (f && !f.blank && f.sig !== before) ? performance.now() : false; }"
)
FIGURE_READY_JS = "(scope) => { const f = (" + FIGURE_JS + ")(scope); return !!(f && !f.blank); }"
# The scope: the cell holding the slider if it also holds a figure, else the whole page.
SCOPE_JS = """
(slider) => {
  const cell = slider.closest('.jp-Cell');
  const has = cell && cell.querySelector('.jupyter-matplotlib-canvas-div canvas, .widget-output img');
  return has ? cell : document.body;
}
"""
ARM_KEY_TIMER_JS = """
(handle) => {
  window.__udkKeyAt = null;
  handle.addEventListener('keydown', () => { window.__udkKeyAt = performance.now(); },
                          {once: true, capture: true});
}
"""
# Every code cell of the notebook on show has run ([n]); Run All stops at a failing cell, so an
# error output ends the wait too. Scoped to the visible notebook: other tabs may be open.
ALL_PROMPTS_RUN_JS = """
(n) => {
  const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
  if (!panel) return false;
  const prompts = [...panel.querySelectorAll('.jp-CodeCell .jp-InputPrompt')];
  if (prompts.length >= n && prompts.every(p => /\\[\\d+\\]/.test(p.textContent))) return 'done';
  const errors = [...panel.querySelectorAll('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')];
  return errors.some(e => e.textContent.includes('Traceback')) ? 'error' : false;
}
"""


def _percentile(values: list[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def _assert_no_errors(page, when: str) -> None:
    problems = []
    for text in page.locator(
        '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'
    ).all_inner_texts():
        if "Traceback" in text:
            problems.append(text)
    for text in page.locator(".jp-RenderedText").all_inner_texts():
        # An exception's name (NameError, ValueError, ConstraintError, ...) in any output.
        if re.search(r"\b[A-Z]\w*Error\b", text) and text not in problems:
            problems.append(text)
    assert not problems, f"error output {when}:\n" + "\n-----\n".join(t[-3000:] for t in problems)


def _slider_state(handle) -> tuple[float, float, float]:
    values = handle.evaluate(
        "h => ['aria-valuenow', 'aria-valuemin', 'aria-valuemax'].map(a => parseFloat(h.getAttribute(a)))"
    )
    return tuple(values)


class _Stepper:
    """Presses ArrowRight, turning to ArrowLeft at the slider's end (and back)."""

    def __init__(self, handle):
        self.handle = handle
        self.key = "ArrowRight"

    def press(self) -> str:
        now, low, high = _slider_state(self.handle)
        if self.key == "ArrowRight" and now >= high:
            self.key = "ArrowLeft"
        elif self.key == "ArrowLeft" and now <= low:
            self.key = "ArrowRight"
        self.handle.press(self.key)
        return self.key


def _figure(page, scope):
    return page.evaluate(FIGURE_JS, scope)


def _settle(page, scope, quiet_s: float = 0.2, cap_s: float = 5.0) -> None:
    """Wait until the figure has not changed for `quiet_s` (late frames of a redraw)."""
    deadline = time.monotonic() + cap_s
    last = _figure(page, scope)["sig"]
    quiet_since = time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.05)
        now = _figure(page, scope)["sig"]
        if now != last:
            last, quiet_since = now, time.monotonic()
        elif time.monotonic() - quiet_since >= quiet_s:
            return


def test_lesson_01_runs_and_slider_redraws(lab, lab_page, artifacts_dir: Path):
    page = lab_page
    notebook = lab.root_dir / LESSON
    assert notebook.is_file(), f"no lessons found: {LESSON} is missing (lessons are mandatory)"
    code_cells = sum(c.cell_type == "code" for c in nbformat.read(notebook, as_version=4).cells)

    # Open the lesson and wait for its kernel.
    t0 = time.monotonic()
    page.goto(lab.page_url(f"lab/tree/{LESSON}?reset"))  # a fresh workspace: no tab of an earlier test
    statusbar = page.locator("#jp-main-statusbar")
    expect(statusbar).to_contain_text(KERNEL_IDLE, timeout=KERNEL_TIMEOUT_MS)
    t_idle = time.monotonic()

    # Run > Run All Cells; done when every code cell shows [n].
    page.locator(".lm-MenuBar-item").filter(has_text=re.compile(r"^\s*Run\s*$")).click()
    page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
    try:
        outcome = page.wait_for_function(
            ALL_PROMPTS_RUN_JS, arg=code_cells, timeout=RUN_ALL_TIMEOUT_MS, polling=250
        ).json_value()
    except Exception:
        outcome = "timeout"
    if outcome != "done":
        page.screenshot(path=str(artifacts_dir / "lesson01-run-all-failed.png"))
        _assert_no_errors(page, "while running all cells")
        pytest.fail(f"Run All Cells did not finish: not every one of the {code_cells} code cells "
                    f"shows [n] after {RUN_ALL_TIMEOUT_MS / 1000:.0f} s")
    expect(statusbar).to_contain_text(KERNEL_IDLE, timeout=KERNEL_TIMEOUT_MS)
    t_ran = time.monotonic()
    _assert_no_errors(page, "after Run All Cells")

    # The slider and its figure.
    slider = page.locator(SLIDER).first
    expect(slider, f"no ipywidgets slider labelled {SLIDER_LABEL!r}").to_be_visible(timeout=FIGURE_TIMEOUT_MS)
    slider.scroll_into_view_if_needed()
    handle = slider.locator(".noUi-handle")
    scope = slider.element_handle().evaluate_handle(SCOPE_JS)
    try:
        page.wait_for_function(FIGURE_READY_JS, arg=scope, timeout=FIGURE_TIMEOUT_MS)
    except Exception:
        page.screenshot(path=str(artifacts_dir / "lesson01-no-figure.png"))
        pytest.fail("no figure shows next to the slider: expected an ipympl canvas "
                    "(.jupyter-matplotlib-canvas-div canvas) or an inline Output image (.widget-output img)")
    _settle(page, scope)
    kind = _figure(page, scope)["kind"]

    # Warm up: a few steps, and the figure must change.
    stepper = _Stepper(handle)
    before = _figure(page, scope)["sig"]
    for _ in range(WARMUP_PRESSES):
        stepper.press()
    page.wait_for_function(FIGURE_CHANGED_JS, arg=[scope, before], timeout=CHANGE_TIMEOUT_MS, polling="raf")
    _settle(page, scope)

    # Latency: keydown on the handle until the figure's pixels differ (both in-page clocks).
    samples = []
    for i in range(SAMPLES):
        before = _figure(page, scope)["sig"]
        handle.evaluate(ARM_KEY_TIMER_JS)
        key = stepper.press()
        try:
            done = page.wait_for_function(
                FIGURE_CHANGED_JS, arg=[scope, before], timeout=CHANGE_TIMEOUT_MS, polling="raf"
            ).json_value()
        except Exception:
            page.screenshot(path=str(artifacts_dir / "lesson01-no-change.png"))
            pytest.fail(f"sample {i}: the figure did not change within {CHANGE_TIMEOUT_MS / 1000:.0f} s "
                        f"after {key} on the {SLIDER_LABEL!r} slider")
        key_at = page.evaluate("window.__udkKeyAt")
        assert key_at is not None, "the slider handle never saw the keydown"
        samples.append((done - key_at) / 1000)
        _settle(page, scope)

    _assert_no_errors(page, "after moving the slider")
    slider.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts_dir / "lesson01.png"))

    p50, p95 = _percentile(samples, 50), _percentile(samples, 95)
    report = {
        "notebook": LESSON,
        "figure": kind,
        "n": len(samples),
        "p50_s": round(p50, 4),
        "p95_s": round(p95, 4),
        "samples_s": [round(s, 4) for s in samples],
        "page_load_to_idle_s": round(t_idle - t0, 2),
        "run_all_s": round(t_ran - t_idle, 2),
    }
    (artifacts_dir / "browser-latency.json").write_text(json.dumps(report, indent=2) + "\n")
    print(f"\nbrowser slider-to-pixels latency: p50={p50 * 1000:.0f} ms p95={p95 * 1000:.0f} ms "
          f"(n={len(samples)}, {kind} figure; page load to idle {t_idle - t0:.1f} s, run all {t_ran - t_idle:.1f} s)")
