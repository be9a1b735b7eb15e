"""``udk.explore`` in a real JupyterLab at 1366x768: a notebook builds a new model and explores it by keyboard.

The notebook is written by the test into the server's temporary root (never into the
repository): a Cartesian pendulum written as a ``udk.Model`` in the cell, explored with
``udk.explore``. After Run All Cells there must be no error output. Then every kind of
control the explorer has moves with the keyboard, and the kernel gets the new value:

- the ``l`` slider (the rod length, a model parameter the explorer made a FloatSlider
  for): ArrowRight moves it one step and the figure changes;
- a ``method`` toggle button reached by Tab and pressed with Space;
- the ``frame`` IntSlider reached by Tab: ArrowRight shows the next instant;
- the sweep's ``x`` Dropdown reached by Tab: End picks the last name (JupyterLab takes
  ArrowUp/ArrowDown in command mode: they move between cells and take the focus away).

The values are read back from the notebook's kernel itself (a second client).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import expect

from browser_kit import (
    FOCUS_JS, LAPTOP, check_frame_key, check_slider_key, check_toggle_key, error_texts, kernel_print, press_until,
    run_all, settled_figure, tab_to, wait_figure_shown, write_notebook,
)

NOTEBOOK = "explore_a_new_model.ipynb"
SLIDER = '.widget-slider:has(.widget-label:text-matches("^l( [(]|$)"))'  # the name, then its unit if any
FIGURE_TIMEOUT_MS = 60_000
CHANGE_TIMEOUT_MS = 60_000

CELLS = [
    'import importlib.util\n\nimport IPython\n\n'
    'IPython.get_ipython().run_line_magic("matplotlib", "widget" if importlib.util.find_spec("ipympl") else "inline")',
    "import sympy as sm\nfrom sympy.physics.mechanics import dynamicsymbols\n\nimport udk_notebooks as udk\n\n"
    'x, y = dynamicsymbols("x y")\nm, g, l = sm.symbols("m g l", positive=True)\n'
    "pendulum = udk.Model([x, y], kinetic_energy=m * (x.diff() ** 2 + y.diff() ** 2) / 2, potential_energy=m * g * y,\n"
    "                     holonomic=[x**2 + y**2 - l**2], parameters={m: 1.0, g: 9.81, l: 1.0})",
    "explorer = udk.explore(pendulum, lambda l: ([0.6 * l, -0.8 * l], [0.0, 0.0]), t_end=2.0,\n"
    '                       units={"m": "kg", "g": "m/s^2", "l": "m"})\nexplorer',
]
STATE_CODE = ("import json as _json\n"
              "print(_json.dumps({**explorer.values, 'frame': explorer.frame, 'sweep_x': explorer._sweep_x.value}))")


def _kernel_state(lab) -> dict:
    return json.loads(kernel_print(lab, STATE_CODE))


def test_a_new_model_is_explored_and_every_control_moves_by_keyboard(lab, page_at, artifacts_dir: Path):
    page = page_at(LAPTOP)
    write_notebook(lab.root_dir / NOTEBOOK, CELLS)
    run_all(page, lab, NOTEBOOK, shot=artifacts_dir / "explore-run-all-failed.png", timeout_ms=300_000)
    assert not error_texts(page), error_texts(page)

    slider = page.locator(SLIDER).first
    expect(slider, "the explorer made no slider for the model parameter l").to_be_visible(timeout=FIGURE_TIMEOUT_MS)
    slider.scroll_into_view_if_needed()
    cell = slider.element_handle().evaluate_handle("(s) => s.closest('.jp-Cell')")
    wait_figure_shown(page, cell, FIGURE_TIMEOUT_MS, lab=lab, shot=artifacts_dir / "explore-no-figure.png",
                      what="no figure shows in the explorer's cell (ipympl canvas or Output image)")
    before = _kernel_state(lab)

    # the FloatSlider: one ArrowRight, the figure changes, and the kernel has the slider's value
    length = check_slider_key(page, slider, cell, CHANGE_TIMEOUT_MS)
    state = _kernel_state(lab)
    assert state["l"] == pytest.approx(length, abs=1e-9) and state["l"] > before["l"], (before, state)

    # a toggle button by Tab and Space; the frame IntSlider by Tab and ArrowRight
    method = check_toggle_key(page, cell, CHANGE_TIMEOUT_MS)
    frame = check_frame_key(page, cell, CHANGE_TIMEOUT_MS)
    state = _kernel_state(lab)
    assert state["method"] == method != before["method"], (before, state)
    assert state["frame"] == frame, (before, state)

    # the sweep's x Dropdown by Tab and End
    # JupyterLab keeps ArrowUp/ArrowDown for itself in command mode (they move to the next cell and take
    # the focus from the select), so the select's own End key is the keyboard route checked here.
    shown = tab_to(page, "select")["value"]
    press_until(page, "End", lambda: page.evaluate(FOCUS_JS).get("value") not in (None, shown))
    picked = page.evaluate(FOCUS_JS)["value"]
    for _ in range(20):  # the change travels to the kernel after the key press
        state = _kernel_state(lab)
        if state["sweep_x"] == picked:
            break
        page.wait_for_timeout(250)
    assert state["sweep_x"] == picked != before["sweep_x"], (picked, before, state)

    # The explorer's figure fits the notebook column of a 1366-pixel screen.
    width = cell.evaluate("(c) => { const f = c.querySelector('.udk-explorer-figure'); "
                          "return f ? f.getBoundingClientRect().width : 0; }")
    assert 0 < width <= LAPTOP["width"]
    settled_figure(page, cell)
    assert not error_texts(page), error_texts(page)
    page.screenshot(path=str(artifacts_dir / "explore-browser.png"))
