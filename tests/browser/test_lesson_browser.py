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
import os
from pathlib import Path

import pytest
from playwright.sync_api import expect

from browser_kit import (
    Stepper, error_texts, figure, figure_report, kernel_print, run_all, settled_figure, wait_figure_changed,
    wait_figure_shown,
)

LESSON = "01_explicit_equation_of_motion.ipynb"
SLIDER_LABEL = "slope"
# the label is the name, then its unit where it has one: "slope (1)"
SLIDER = f'.widget-slider:has(.widget-label:text-matches("^{SLIDER_LABEL}( [(]|$)"))'

FIGURE_TIMEOUT_MS = 60_000  # until the first (non-blank) frame of the figure shows
CHANGE_TIMEOUT_MS = 30_000  # one slider step until the figure changes
WARMUP_PRESSES = 3
# Latency samples (each a key press and a redraw). benchmarks/browser_soak.py sets UDK_LATENCY_SAMPLES=1:
# a soak run checks the first draw and a redraw, not the latency figures.
SAMPLES = max(1, int(os.environ.get("UDK_LATENCY_SAMPLES", "10")))

# The scope: the cell holding the slider if it also holds a figure, else the whole page.
SCOPE_JS = """
(slider) => {
  const cell = slider.closest('.jp-Cell');
  const has = cell && cell.querySelector('.jupyter-matplotlib-canvas-div canvas, .widget-output img');
  return has ? cell : document.body;
}
"""
# Size, dpi and device pixel ratio of every live explorer's figure, and its last error.
FIGURES_CODE = """
import gc as _gc
from udk_notebooks.widgets.base import Explorer as _Explorer
for _e in _gc.get_objects():
    if isinstance(_e, _Explorer) and not _e.closed:
        _f = _e.figure
        print(type(_e).__name__, 'inches', tuple(_f.get_size_inches()), 'dpi', _f.dpi,
              'ratio', getattr(_f.canvas, 'device_pixel_ratio', None), 'error', _e.error)
"""
ARM_KEY_TIMER_JS = """
(handle) => {
  window.__udkKeyAt = null;
  handle.addEventListener('keydown', () => { window.__udkKeyAt = performance.now(); },
                          {once: true, capture: true});
}
"""


def _percentile(values: list[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def test_lesson_01_runs_and_slider_redraws(lab, lab_page, artifacts_dir: Path):
    page = lab_page
    notebook = lab.root_dir / LESSON
    assert notebook.is_file(), f"no lessons found: {LESSON} is missing (lessons are mandatory)"
    timings = run_all(page, lab, LESSON, shot=artifacts_dir / "lesson01-run-all-failed.png")

    # The slider and its figure.
    slider = page.locator(SLIDER).first
    expect(slider, f"no ipywidgets slider labelled {SLIDER_LABEL!r}").to_be_visible(timeout=FIGURE_TIMEOUT_MS)
    slider.scroll_into_view_if_needed()
    handle = slider.locator(".noUi-handle")
    scope = slider.element_handle().evaluate_handle(SCOPE_JS)
    first_frame_s = wait_figure_shown(
        page, scope, FIGURE_TIMEOUT_MS, lab=lab, shot=artifacts_dir / "lesson01-no-figure.png",
        what="no figure shows next to the slider (an ipympl canvas or an inline Output image)")
    settled_figure(page, scope)
    kind = figure(page, scope)["kind"]

    # Warm up: a few steps, and the figure must change.
    stepper = Stepper(handle)
    before = figure(page, scope)["sig"]
    for _ in range(WARMUP_PRESSES):
        stepper.press()
    try:
        wait_figure_changed(page, scope, before, CHANGE_TIMEOUT_MS)
    except Exception:
        page.screenshot(path=str(artifacts_dir / "lesson01-no-change.png"))
        pytest.fail(f"the figure did not change within {CHANGE_TIMEOUT_MS / 1000:.0f} s after {WARMUP_PRESSES} "
                    f"key presses on the {SLIDER_LABEL!r} slider\n" + figure_report(page, lab=lab))
    settled_figure(page, scope)

    # Latency: keydown on the handle until the figure's pixels differ (both in-page clocks).
    samples = []
    for i in range(SAMPLES):
        before = figure(page, scope)["sig"]
        handle.evaluate(ARM_KEY_TIMER_JS)
        key = stepper.press()
        try:
            done = wait_figure_changed(page, scope, before, CHANGE_TIMEOUT_MS)
        except Exception:
            page.screenshot(path=str(artifacts_dir / "lesson01-no-change.png"))
            pytest.fail(f"sample {i}: the figure did not change within {CHANGE_TIMEOUT_MS / 1000:.0f} s "
                        f"after {key} on the {SLIDER_LABEL!r} slider\n" + figure_report(page, lab=lab))
        key_at = page.evaluate("window.__udkKeyAt")
        assert key_at is not None, "the slider handle never saw the keydown"
        samples.append((done - key_at) / 1000)
        settled_figure(page, scope)

    problems = error_texts(page)
    if problems:  # with what the kernel's figures looked like then: a draw that fails may depend on their size
        pytest.fail("error output after moving the slider:\n" + "\n-----\n".join(t[-3000:] for t in problems)
                    + "\nthe explorers' figures in the kernel: " + kernel_print(lab, FIGURES_CODE)
                    + "\n" + figure_report(page, lab=lab))
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
        "first_frame_s": round(first_frame_s, 2),
        "page_load_to_idle_s": round(timings["load_s"], 2),
        "run_all_s": round(timings["run_s"], 2),
    }
    (artifacts_dir / "browser-latency.json").write_text(json.dumps(report, indent=2) + "\n")
    print(f"\nbrowser slider-to-pixels latency: p50={p50 * 1000:.0f} ms p95={p95 * 1000:.0f} ms "
          f"(n={len(samples)}, {kind} figure, first frame {first_frame_s:.1f} s after the slider showed; "
          f"page load to idle {timings['load_s']:.1f} s, "
          f"run all {timings['run_s']:.1f} s)")
