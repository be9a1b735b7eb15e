"""``udk.explore`` in a real JupyterLab at 1366x768: a notebook builds a new model and explores it.

The notebook is written by the test into the server's temporary root (never into the
repository): a Cartesian pendulum written as a ``udk.Model`` in the cell, explored with
``udk.explore``. After Run All Cells there must be no error output, and pressing
ArrowRight on the ``l`` slider (the rod length, a model parameter the explorer made a
slider for; or typing into its readout, when the key press does not reach the handle) must
change the figure next to it: the ipympl canvas, or the inline image
of the PNG route.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from playwright.sync_api import expect

from test_lesson_browser import FIGURE_JS  # the figure in a cell (ipympl canvas or PNG), as a comparable signature

NOTEBOOK = "explore_a_new_model.ipynb"
VIEWPORT = {"width": 1366, "height": 768}
SLIDER = '.widget-slider:has(.widget-label:text-matches("^l( [(]|$)"))'  # the name, then its unit if any
KERNEL_IDLE = re.compile(r"Python 3.*\|\s*Idle")
KERNEL_TIMEOUT_MS = 90_000
RUN_ALL_TIMEOUT_MS = 300_000
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

READY_JS = "(cell) => { const f = (" + FIGURE_JS + ")(cell); return !!(f && !f.blank); }"
CHANGED_JS = "([cell, before]) => { const f = (" + FIGURE_JS + ")(cell); return !!(f && !f.blank && f.sig !== before); }"
ALL_RUN_JS = """
(n) => {
  const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
  if (!panel) return false;
  const prompts = [...panel.querySelectorAll('.jp-CodeCell .jp-InputPrompt')];
  if (prompts.length >= n && prompts.every(p => /\\[\\d+\\]/.test(p.textContent))) return 'done';
  const errors = [...panel.querySelectorAll('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')];
  return errors.some(e => e.textContent.includes('Traceback')) ? 'error' : false;
}
"""


def _write_notebook(root: Path) -> Path:
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in CELLS]
    path = root / NOTEBOOK
    nbformat.write(notebook, path)
    return path


def _errors(page) -> list[str]:
    found = [t for t in page.locator('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')
             .all_inner_texts() if "Traceback" in t]
    found += [t for t in page.locator(".jp-RenderedText").all_inner_texts() if re.search(r"\b[A-Z]\w*Error\b", t)]
    found += [t for t in page.locator(".udk-explorer-error").all_inner_texts() if t.strip()]
    return found


def _settled(page, cell, quiet_ms: int = 1500, cap_ms: int = 20_000) -> str:
    """The figure's signature once it has not changed for ``quiet_ms`` (late frames of a draw)."""
    last = page.evaluate(FIGURE_JS, cell)["sig"]
    quiet = waited = 0
    while quiet < quiet_ms and waited < cap_ms:
        page.wait_for_timeout(100)
        waited += 100
        now = page.evaluate(FIGURE_JS, cell)["sig"]
        quiet = quiet + 100 if now == last else 0
        last = now
    return last


@pytest.fixture
def small_page(chromium, lab):
    """A browser page at a laptop's 1366x768."""
    context = chromium.new_context(viewport=VIEWPORT)
    page = context.new_page()
    page.set_default_timeout(30_000)
    try:
        yield page
    finally:
        context.close()


def test_a_new_model_is_explored_and_a_slider_moves_the_figure(lab, small_page, artifacts_dir: Path):
    page = small_page
    _write_notebook(lab.root_dir)
    page.goto(lab.page_url(f"lab/tree/{NOTEBOOK}?reset"))
    statusbar = page.locator("#jp-main-statusbar")
    expect(statusbar).to_contain_text(KERNEL_IDLE, timeout=KERNEL_TIMEOUT_MS)

    page.locator(".lm-MenuBar-item").filter(has_text=re.compile(r"^\s*Run\s*$")).click()
    page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
    try:
        outcome = page.wait_for_function(ALL_RUN_JS, arg=len(CELLS), timeout=RUN_ALL_TIMEOUT_MS,
                                         polling=250).json_value()
    except Exception:
        outcome = "timeout"
    if outcome != "done":
        page.screenshot(path=str(artifacts_dir / "explore-run-all-failed.png"))
        pytest.fail(f"Run All Cells did not finish ({outcome}); errors: {_errors(page)}")
    expect(statusbar).to_contain_text(KERNEL_IDLE, timeout=KERNEL_TIMEOUT_MS)
    assert not _errors(page), _errors(page)

    slider = page.locator(SLIDER).first
    expect(slider, "the explorer made no slider for the model parameter l").to_be_visible(timeout=FIGURE_TIMEOUT_MS)
    slider.scroll_into_view_if_needed()
    cell = slider.element_handle().evaluate_handle("(s) => s.closest('.jp-Cell')")
    try:
        page.wait_for_function(READY_JS, arg=cell, timeout=FIGURE_TIMEOUT_MS)
    except Exception:
        page.screenshot(path=str(artifacts_dir / "explore-no-figure.png"))
        pytest.fail("no figure shows in the explorer's cell (ipympl canvas or Output image)")
    before = _settled(page, cell)
    handle = slider.locator(".noUi-handle")
    value = float(handle.get_attribute("aria-valuenow"))
    handle.press("ArrowRight")
    page.wait_for_timeout(500)
    if float(handle.get_attribute("aria-valuenow")) <= value:
        # The key press did not reach the handle (focus stays with the notebook at this size): type the
        # new value into the slider's readout instead, as a user may.
        readout = slider.locator(".widget-readout")
        readout.click()
        readout.fill(f"{value + 0.25:.2f}")
        readout.press("Enter")
        page.wait_for_timeout(500)
    assert float(handle.get_attribute("aria-valuenow")) > value, "neither ArrowRight nor the readout moved the l slider"
    try:
        page.wait_for_function(CHANGED_JS, arg=[cell, before], timeout=CHANGE_TIMEOUT_MS, polling=100)
    except Exception:
        page.screenshot(path=str(artifacts_dir / "explore-slider-no-change.png"))
        pytest.fail("moving the l slider did not change the figure")
    # The explorer's figure fits the notebook column of a 1366-pixel screen.
    width = cell.evaluate("(c) => { const f = c.querySelector('.udk-explorer-figure'); "
                          "return f ? f.getBoundingClientRect().width : 0; }")
    assert 0 < width <= VIEWPORT["width"]
    assert not _errors(page), _errors(page)
    page.screenshot(path=str(artifacts_dir / "explore-browser.png"))
