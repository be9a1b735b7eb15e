"""What the browser tests share, written once: page scripts, Run All, figure signatures, key routes, servers.

The fixtures built on these (``page_at``, ``lab``, ``voila``) live in ``conftest.py``. The plain
helpers live here because a test module cannot import ``conftest`` by name: ``tests/conftest.py``
has the same module name, and pytest swaps the two in ``sys.modules`` while it collects.

See /work/shared/notes/browser-testing.md for the selectors used here.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import nbformat
import pytest
from playwright.sync_api import expect

LAPTOP = {"width": 1366, "height": 768}  # the students' laptops
KERNEL_IDLE = re.compile(r"Python 3.*\|\s*Idle")
KERNEL_TIMEOUT_MS = 90_000  # page load until the kernel is idle
RUN_ALL_TIMEOUT_MS = 600_000  # Run All Cells until every code cell shows [n]
VOILA_START_TIMEOUT = 180  # seconds until Voila answers (a loaded machine is slow)

# The figure of an explorer or a cell: the first ipympl canvas or inline Output image inside `scope`
# (the whole page when null), as a comparable signature {kind, sig, blank}, or null when there is none.
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
# The in-page time at which the figure differs from `before` (false until then).
FIGURE_CHANGED_JS = (
    "([scope, before]) => { const f = (" + FIGURE_JS + ")(scope);"
    " return (f && !f.blank && f.sig !== before) ? performance.now() : false; }"
)
FIGURE_READY_JS = "(scope) => { const f = (" + FIGURE_JS + ")(scope); return !!(f && !f.blank); }"

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
# The visible notebook area (the viewport of the scrolled panel), in CSS pixels.
NOTEBOOK_BOX_JS = """
() => {
  const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-WindowedPanel-outer')
             || document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook');
  const r = panel.getBoundingClientRect();
  return {left: r.left, right: r.left + panel.clientWidth, top: r.top, bottom: r.top + panel.clientHeight};
}
"""

MIN_TRACK = 190  # px: a slider track a student can aim at
# Boxes of an explorer's figure and controls (bottom of the lowest control), and its slider tracks' widths.
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

# Visible elements of an explorer whose right edge is past `limit` (the notebook's edge).
PAST_EDGE_JS = """
([explorer, limit]) => [...explorer.querySelectorAll('*')].filter(e => {
  const r = e.getBoundingClientRect();
  return r.width > 0 && r.height > 0 && getComputedStyle(e).visibility !== 'hidden' && r.right > limit + 1;
}).map(e => `${e.tagName.toLowerCase()}.${[...e.classList].join('.')} ends at ${Math.round(e.getBoundingClientRect().right)}`)
"""

# The figure's scale on the page: its canvas's width on screen over its width in CSS pixels.
FIGURE_SCALE_JS = """
(explorer) => {
  const canvas = explorer.querySelector('.udk-explorer-figure .jupyter-matplotlib-canvas-div canvas');
  if (!canvas || !canvas.width) return null;
  return canvas.getBoundingClientRect().width / (canvas.width / window.devicePixelRatio);
}
"""


# -- JupyterLab: open, run all, errors --------------------------------------------------------------------
def open_notebook(page, lab, notebook: str, *, reset: bool = True):
    """Load ``notebook`` in JupyterLab (a fresh workspace with ``reset``) and wait for its idle kernel.

    Returns the status bar's locator (wait on it for the kernel to be idle again).
    """
    page.goto(lab.page_url(f"lab/tree/{notebook}" + ("?reset" if reset else "")))
    statusbar = page.locator("#jp-main-statusbar")
    expect(statusbar).to_contain_text(KERNEL_IDLE, timeout=KERNEL_TIMEOUT_MS)
    return statusbar


def run_all(page, lab, notebook: str, *, shot: Path | None = None, file_browser: bool | None = None,
            timeout_ms: int = RUN_ALL_TIMEOUT_MS) -> dict[str, float]:
    """Open ``notebook`` (a file in the server's root), Run All Cells, and check that no cell failed.

    Parameters
    ----------
    shot : Path, optional
        Where to save a screenshot when Run All does not finish.
    file_browser : bool, optional
        Show (True) or hide (False) the file browser before running; None leaves it as it is.

    Returns
    -------
    dict
        ``load_s`` (page load until the kernel is idle) and ``run_s`` (Run All until idle again).
    """
    code_cells = sum(c.cell_type == "code" for c in nbformat.read(lab.root_dir / notebook, as_version=4).cells)
    started = time.monotonic()
    statusbar = open_notebook(page, lab, notebook)
    idle = time.monotonic()
    if file_browser is not None:
        show_file_browser(page, file_browser)
    page.locator(".lm-MenuBar-item").filter(has_text=re.compile(r"^\s*Run\s*$")).click()
    page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
    try:
        outcome = page.wait_for_function(ALL_PROMPTS_RUN_JS, arg=code_cells, timeout=timeout_ms,
                                         polling=250).json_value()
    except Exception:  # Playwright's timeout: reported below with the page's own errors
        outcome = "timeout"
    if outcome != "done":
        if shot is not None:
            page.screenshot(path=str(shot))
        assert_no_errors(page, f"while running {notebook}")
        pytest.fail(f"{notebook}: Run All Cells did not finish ({outcome}): not every one of the {code_cells} "
                    f"code cells shows [n] after {timeout_ms / 1000:.0f} s")
    expect(statusbar).to_contain_text(KERNEL_IDLE, timeout=KERNEL_TIMEOUT_MS)
    assert_no_errors(page, f"after running {notebook}")
    return {"load_s": idle - started, "run_s": time.monotonic() - idle}


def error_texts(page) -> list[str]:
    """Tracebacks, outputs naming an exception (NameError, ConstraintError, ...) and explorers' error areas."""
    problems = [t for t in page.locator('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')
                .all_inner_texts() if "Traceback" in t]
    for text in page.locator(".jp-RenderedText").all_inner_texts():
        if re.search(r"\b[A-Z]\w*Error\b", text) and text not in problems:
            problems.append(text)
    problems += [t for t in page.locator(".udk-explorer-error").all_inner_texts() if t.strip()]
    return problems


def assert_no_errors(page, when: str) -> None:
    problems = error_texts(page)
    assert not problems, f"error output {when}:\n" + "\n-----\n".join(t[-3000:] for t in problems)


def show_file_browser(page, wanted: bool = True) -> None:
    """Open (or close) JupyterLab's file browser in the left side bar."""
    browser = page.locator("#filebrowser")
    if browser.is_visible() != wanted:
        page.locator('.lm-TabBar-tab[data-id="filebrowser"]').first.click()
    if wanted:
        expect(browser).to_be_visible(timeout=10_000)
    else:
        expect(browser).to_be_hidden(timeout=10_000)


def write_notebook(path: Path, cells: list) -> int:
    """A python3 notebook of ``cells`` (sources of code cells, or nbformat cells) at ``path``; its code cell count."""
    cells = [nbformat.v4.new_code_cell(c) if isinstance(c, str) else c for c in cells]
    notebook = nbformat.v4.new_notebook(cells=cells, metadata={"kernelspec": {
        "name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}})
    nbformat.write(notebook, path)
    return sum(c.cell_type == "code" for c in cells)


def kernel_print(lab, code: str) -> str:
    """What ``code`` prints when run in the kernel of the server's one notebook session (a second client)."""
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
        client.execute_interactive(code, timeout=60, store_history=False, output_hook=lambda m: printed.append(
            m["content"].get("text", "")) if m["header"]["msg_type"] == "stream" else None)
    finally:
        client.stop_channels()
    return "".join(printed)


# -- figures ---------------------------------------------------------------------------------------------
def figure(page, scope=None) -> dict | None:
    """The figure's signature inside ``scope`` (an element handle; the page when None)."""
    return page.evaluate(FIGURE_JS, scope)


def wait_figure_ready(page, scope, timeout_ms: float) -> None:
    page.wait_for_function(FIGURE_READY_JS, arg=scope, timeout=timeout_ms)


def wait_figure_changed(page, scope, before: str, timeout_ms: float, polling="raf") -> float:
    """Wait until the figure in ``scope`` differs from the signature ``before``; the in-page time it did."""
    return page.wait_for_function(FIGURE_CHANGED_JS, arg=[scope, before], timeout=timeout_ms,
                                  polling=polling).json_value()


# Every ipympl canvas and Output image on the page: its size, whether it shows pixels, and the
# error box of the explorer around it (what a failure report needs when a figure never shows).
FIGURES_ON_PAGE_JS = """
() => [...document.querySelectorAll('.jupyter-matplotlib-canvas-div canvas:first-child, .widget-output img')].map(e => {
  const explorer = e.closest('.udk-explorer');
  const error = explorer && explorer.querySelector('.udk-explorer-error');
  const shown = (() => {
    if (e.tagName !== 'CANVAS') return !!e.src;
    if (!e.width || !e.height) return false;
    const empty = document.createElement('canvas');
    empty.width = e.width; empty.height = e.height;
    return e.toDataURL() !== empty.toDataURL();
  })();
  return {kind: e.tagName.toLowerCase(), width: e.width, height: e.height, shown: shown,
          explorer: !!explorer, error: error ? error.textContent.trim() : ''};
})
"""
# Kernel code: how each live explorer's figure is delivered (read by a second client on the kernel).
DELIVERY_CODE = """
import gc as _gc
from udk_notebooks.widgets.base import Explorer as _Explorer
for _e in _gc.get_objects():
    if isinstance(_e, _Explorer) and not _e.closed:
        print(type(_e).__name__, _e.delivery_state())
"""


def figure_report(page, *, lab=None, log_tail: str | None = None) -> str:
    """Why a figure may not show: the page's figures, the browser console, the kernel's explorers, its log.

    ``lab`` (a JupyterLab server with one notebook session) adds what the kernel says of each live
    explorer's delivery (:meth:`udk_notebooks.widgets.base.Explorer.delivery_state`) and the server log,
    which holds the kernel's own error output; ``log_tail`` is a log to quote instead (Voila's).
    """
    parts = []
    try:
        parts.append("figures on the page: " + json.dumps(page.evaluate(FIGURES_ON_PAGE_JS)))
    except Exception as exc:  # the page itself is gone: say so and go on
        parts.append(f"figures on the page: not readable ({exc})")
    console = getattr(page, "udk_console", None)
    if console is not None:
        parts.append("browser console (last 30):\n  " + "\n  ".join(console[-30:] or ["(empty)"]))
    if lab is not None:
        try:
            parts.append("explorers in the kernel:\n" + kernel_print(lab, DELIVERY_CODE))
        except Exception as exc:
            parts.append(f"explorers in the kernel: not readable ({type(exc).__name__}: {exc})")
        log_tail = lab.log_tail(3000)
    if log_tail is not None:
        parts.append("server log (tail):\n" + log_tail)
    return "\n".join(parts)


def wait_figure_shown(page, scope, timeout_ms: float, *, what: str, lab=None, log_tail=None,
                      shot: Path | None = None) -> float:
    """Wait until the figure in ``scope`` shows pixels; fail with :func:`figure_report` if it does not.

    Returns the seconds it took (a slow first frame under load is worth seeing in the log).
    """
    started = time.monotonic()
    try:
        wait_figure_ready(page, scope, timeout_ms)
    except Exception:
        if shot is not None:
            page.screenshot(path=str(shot))
        pytest.fail(f"{what}: no figure showed within {timeout_ms / 1000:.0f} s\n"
                    + figure_report(page, lab=lab, log_tail=log_tail() if callable(log_tail) else log_tail))
    return time.monotonic() - started


def settled_figure(page, scope, quiet_s: float = 0.2, cap_s: float = 5.0) -> str:
    """The figure's signature once it has not changed for ``quiet_s`` (late frames of a redraw)."""
    deadline = time.monotonic() + cap_s
    last = figure(page, scope)["sig"]
    quiet_since = time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.05)
        now = figure(page, scope)["sig"]
        if now != last:
            last, quiet_since = now, time.monotonic()
        elif time.monotonic() - quiet_since >= quiet_s:
            break
    return last


# -- controls by keyboard --------------------------------------------------------------------------------
# noUiSlider (ipywidgets 8's slider) writes aria-valuenow, -min and -max with one decimal (toFixed(1)): a
# 0.01 step never shows there, and a range end of 0.25 reads 0.3. The slider's own API has the numbers.
SLIDER_STATE_JS = """
(h) => { const s = h.closest('.noUi-target').noUiSlider;
         return [Number(s.get()), s.options.range.min, s.options.range.max]; }
"""
# What has the keyboard focus: the kind of control and, for a slider handle, its value.
FOCUS_JS = """
() => {
  const e = document.activeElement;
  if (!e) return {kind: 'none'};
  if (e.classList.contains('noUi-handle')) {
    const frame = !!e.closest('.udk-explorer-animate');
    return {kind: frame ? 'frame' : 'slider', value: Number(e.closest('.noUi-target').noUiSlider.get())};
  }
  if (e.tagName === 'SELECT') return {kind: 'select', value: e.value};
  if (e.tagName === 'BUTTON' && e.closest('.widget-toggle-buttons'))
    return {kind: 'toggle', active: e.classList.contains('mod-active'), text: e.textContent.trim()};
  return {kind: e.tagName.toLowerCase() + '.' + [...e.classList].join('.')};
}
"""


def slider_state(handle) -> tuple[float, float, float]:
    """``(value, min, max)`` of a noUi slider handle."""
    return tuple(handle.evaluate(SLIDER_STATE_JS))


def readout_value(slider) -> float:
    return float(slider.locator(".widget-readout").inner_text())


class Stepper:
    """Presses ArrowRight on a slider handle, turning to ArrowLeft at the slider's end (and back)."""

    def __init__(self, handle):
        self.handle = handle
        self.key = "ArrowRight"

    def press(self) -> str:
        now, low, high = slider_state(self.handle)
        if self.key == "ArrowRight" and now >= high:
            self.key = "ArrowLeft"
        elif self.key == "ArrowLeft" and now <= low:
            self.key = "ArrowRight"
        self.handle.press(self.key)
        return self.key


def tab_to(page, kind: str, presses: int = 60, **wanted) -> dict:
    """Press Tab until a control of ``kind`` ('slider', 'frame', 'toggle', 'select') has the focus.

    ``wanted`` narrows it (``active=False``: a toggle button that is not the chosen one). Returns what
    :data:`FOCUS_JS` says of it; fails naming what the Tab key visited instead.
    """
    seen = []
    for _ in range(presses):
        page.keyboard.press("Tab")  # to the focused element, as a keyboard user's key goes
        focus = page.evaluate(FOCUS_JS)
        if focus["kind"] == kind and all(focus.get(k) == v for k, v in wanted.items()):
            return focus
        seen.append(focus["kind"])
    pytest.fail(f"{presses} Tab presses never reached a {kind} control {wanted or ''}; focus went to {seen[-12:]}")


def press_until(page, key: str, moved, tries: int = 3, wait_s: float = 2.0) -> None:
    """Press ``key`` on the focused element and wait up to ``wait_s`` for ``moved()``; retry a few times."""
    for _ in range(tries):
        page.keyboard.press(key)
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            if moved():
                return
            time.sleep(0.05)
    pytest.fail(f"{tries} presses of {key} did not move the focused control")


def check_slider_key(page, slider, scope, change_timeout_ms: float) -> float:
    """One ArrowRight (ArrowLeft at the end) on ``slider``'s handle moves it one step and redraws the figure.

    Returns the new value. The figure is drawn in the kernel, so its change shows that the new value
    reached the kernel, not only the slider.
    """
    handle = slider.locator(".noUi-handle")
    handle.focus()
    assert page.evaluate("() => document.activeElement.classList.contains('noUi-handle')"), \
        "the slider handle cannot take the keyboard focus"
    before, low, high = slider_state(handle)
    key = "ArrowLeft" if before >= high else "ArrowRight"
    sig = settled_figure(page, scope)
    press_until(page, key, lambda: not math.isclose(slider_state(handle)[0], before, abs_tol=1e-12))
    after = slider_state(handle)[0]
    assert (after > before) == (key == "ArrowRight"), f"{key} moved the slider the wrong way ({before} -> {after})"
    assert readout_value(slider) == pytest.approx(after, abs=1e-9 + 0.51 * abs(after - before)), \
        f"the readout shows {readout_value(slider)}, the slider {after}"
    wait_figure_changed(page, scope, sig, change_timeout_ms, polling=100)
    return after


def check_toggle_key(page, scope, change_timeout_ms: float) -> str:
    """Tab to a toggle button that is not chosen, press Space: it is chosen and the figure redraws."""
    sig = settled_figure(page, scope)
    focus = tab_to(page, "toggle", active=False)
    press_until(page, "Space", lambda: page.evaluate(FOCUS_JS).get("active") is True, tries=1, wait_s=10)
    wait_figure_changed(page, scope, sig, change_timeout_ms, polling=100)
    return focus["text"]


def check_frame_key(page, scope, change_timeout_ms: float) -> float:
    """Tab to the ``frame`` slider (an IntSlider), press ArrowRight: one frame on, and the figure redraws."""
    sig = settled_figure(page, scope)
    focus = tab_to(page, "frame")
    press_until(page, "ArrowRight", lambda: page.evaluate(FOCUS_JS).get("value") != focus["value"])
    after = page.evaluate(FOCUS_JS)["value"]
    assert after == focus["value"] + 1, f"ArrowRight moved the frame from {focus['value']} to {after}"
    wait_figure_changed(page, scope, sig, change_timeout_ms, polling=100)
    return after


# -- servers ---------------------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def stop(proc: subprocess.Popen, timeout: float = 10) -> None:
    """End a server we started: SIGTERM, then SIGKILL after ``timeout`` s."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=timeout)


def start_server(name: str, cmd: list[str], *, cwd: Path, env: dict, log_path: Path, timeout: float,
                 ready) -> subprocess.Popen:
    """Start ``cmd`` (output to ``log_path``) and wait until ``ready()`` stops raising a connection error.

    Fails the test, with the log's tail, when the server exits or is not ready within ``timeout`` s
    (and stops it then).
    """
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            pytest.fail(f"{name} exited with {proc.returncode}:\n{log_path.read_text(errors='replace')[-4000:]}")
        try:
            ready()
            return proc
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
            if time.monotonic() > deadline:
                stop(proc)
                pytest.fail(f"{name} did not answer within {timeout} s:\n{log_path.read_text(errors='replace')[-4000:]}")
            time.sleep(0.25)


@contextlib.contextmanager
def voila_server(base: Path, **settings):
    """Voila on the app pages written into ``base``, with ``make app``'s settings (``settings`` override).

    Yields ``(url, log_path, pid)``; the server is stopped by its PID at the end.
    """
    from udk_notebooks.app import voila_arguments, write_apps

    apps = base / "apps"
    write_apps(apps)
    env = {**os.environ}
    for name in ("JUPYTER_CONFIG_DIR", "JUPYTER_RUNTIME_DIR"):
        (base / name.lower()).mkdir()
        env[name] = str(base / name.lower())
    port = free_port()
    log_path = base / "voila.log"
    cmd = [sys.executable, "-m", "voila", str(apps), "--no-browser", f"--port={port}",
           "--Voila.ip=127.0.0.1", "--Voila.port_retries=0", *voila_arguments(**settings)]
    url = f"http://127.0.0.1:{port}"
    proc = start_server("voila", cmd, cwd=apps, env=env, log_path=log_path, timeout=VOILA_START_TIMEOUT,
                        ready=lambda: urllib.request.urlopen(url, timeout=2).read())
    try:
        yield url, log_path, proc.pid
    finally:
        stop(proc, timeout=20)


def explorer_values_code(class_name: str) -> str:
    """Kernel code printing ``explorer.values`` of every live explorer of ``class_name`` as JSON."""
    return (
        "import gc as _gc, json as _json\n"
        "from udk_notebooks.widgets.base import Explorer as _Explorer\n"
        "print(_json.dumps([_e.values for _e in _gc.get_objects()\n"
        f"                  if isinstance(_e, _Explorer) and not _e.closed and type(_e).__name__ == {class_name!r}]))\n"
    )


def explorer_values(lab, class_name: str) -> dict:
    """``explorer.values`` of the one live explorer of ``class_name`` in the lesson's kernel."""
    found = json.loads(kernel_print(lab, explorer_values_code(class_name)))
    assert len(found) == 1, f"expected one live {class_name} in the kernel, found {len(found)}"
    return found[0]
