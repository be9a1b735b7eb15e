"""The explorers as Voila apps (``make app``), in headless Chromium.

Voila serves the pages that :mod:`udk_notebooks.app` writes from the explorer
registry. For the gallery and every explorer page: no code is shown, the page
renders its sliders and figure, and moving a slider changes the figure. Voila
runs with the settings of ``make app`` (:func:`udk_notebooks.app.voila_arguments`)
but short culling times, so a closed page's kernel is seen to go away; the
gallery and an explorer page pass axe-core with no serious or critical violation.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

import psutil
from a11y import axe_source, describe, serious_violations

from udk_notebooks.app import GALLERY, voila_arguments, write_apps
from udk_notebooks.widgets import EXPLORERS

START_TIMEOUT = 180  # seconds until Voila answers (a loaded machine is slow)
PAGE_TIMEOUT_MS = 120_000  # page load until the first slider and figure show
CHANGE_TIMEOUT_MS = 30_000
# Pages in the browser: culling only after 2 minutes, since a kernel sits idle between Voila's
# server-side run and the page's websocket (long on a loaded machine); closed tabs end theirs at once.
PAGE_CULL_IDLE_TIMEOUT = 120
MAX_KERNELS = 32  # the cap itself is tested on a server of its own (capped_voila, two kernels)
# Kernels nobody connects to: culled after a few idle seconds, so the test sees the culler work.
CULL_IDLE_TIMEOUT = 5
CULL_INTERVAL = 1
CULL_WAIT = 60  # seconds allowed for a kernel to go away (well under PAGE_CULL_IDLE_TIMEOUT)

FIGURE_JS = """
() => {
  const canvas = document.querySelector('.jupyter-matplotlib-canvas-div canvas');
  if (canvas) {
    const url = canvas.toDataURL();
    const empty = document.createElement('canvas');
    empty.width = canvas.width; empty.height = canvas.height;
    return (canvas.width === 0 || url === empty.toDataURL()) ? null : url;
  }
  const img = document.querySelector('.widget-output img');
  return img && img.src ? img.src : null;
}
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def _voila(base: Path, **settings):
    """Voila on the app pages in ``base``, with ``make app``'s settings (``settings`` override them)."""
    apps = base / "apps"
    write_apps(apps)
    env = {**os.environ}
    for name in ("JUPYTER_CONFIG_DIR", "JUPYTER_RUNTIME_DIR"):
        (base / name.lower()).mkdir()
        env[name] = str(base / name.lower())
    port = _free_port()
    log_path = base / "voila.log"
    cmd = [sys.executable, "-m", "voila", str(apps), "--no-browser", f"--port={port}",
           "--Voila.ip=127.0.0.1", "--Voila.port_retries=0", *voila_arguments(**settings)]
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(cmd, cwd=apps, env=env, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if proc.poll() is not None:
                pytest.fail(f"voila exited with {proc.returncode}:\n{log_path.read_text()[-4000:]}")
            try:
                urllib.request.urlopen(url, timeout=2).read()
                break
            except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
                if time.monotonic() > deadline:
                    pytest.fail(f"voila did not answer within {START_TIMEOUT} s:\n{log_path.read_text()[-4000:]}")
                time.sleep(0.25)
        yield url, log_path, proc.pid
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture(scope="module")
def voila(tmp_path_factory):
    with _voila(tmp_path_factory.mktemp("voila"), max_kernels=MAX_KERNELS,
                cull_idle_timeout=PAGE_CULL_IDLE_TIMEOUT) as server:
        yield server


@pytest.fixture(scope="module")
def culling_voila(tmp_path_factory):
    """Culling after a few idle seconds, for kernels that no page ever connects to."""
    with _voila(tmp_path_factory.mktemp("voila-culling"), cull_idle_timeout=CULL_IDLE_TIMEOUT,
                cull_interval=CULL_INTERVAL) as server:
        yield server


@pytest.fixture(scope="module")
def capped_voila(tmp_path_factory):
    """Two kernels at most and no culling within a test's time: the cap alone is seen."""
    with _voila(tmp_path_factory.mktemp("voila-capped"), max_kernels=2, cull_idle_timeout=3600) as server:
        yield server


@pytest.fixture
def page(chromium):
    context = chromium.new_context(viewport={"width": 1366, "height": 768})
    page = context.new_page()
    page.set_default_timeout(PAGE_TIMEOUT_MS)
    try:
        yield page
    finally:
        page.close(run_before_unload=True)  # as a tab closes: Voila's page asks to end its kernel
        context.close()


def _no_code(page) -> None:
    editors = page.locator(".jp-CodeCell .jp-InputArea:visible, .jp-CodeMirrorEditor:visible, .cm-editor:visible")
    assert editors.count() == 0, "the app page shows code cells"
    assert page.get_by_text("from udk_notebooks").count() == 0, "the app page shows source code"


def test_gallery_links_every_explorer(voila, page):
    url, _, _ = voila
    page.goto(f"{url}/voila/render/{GALLERY}")
    page.wait_for_selector("table a")
    links = page.eval_on_selector_all("table a", "els => els.map(e => e.getAttribute('href'))")
    assert sorted(links) == sorted(f"{name}.ipynb" for name in EXPLORERS)
    _no_code(page)


@pytest.mark.parametrize("name", sorted(EXPLORERS))
def test_app_slider_changes_figure(voila, page, name, artifacts_dir: Path):
    url, log_path, _ = voila
    page.goto(f"{url}/voila/render/{name}.ipynb")
    slider = page.locator(".widget-slider").first
    slider.wait_for()
    page.wait_for_function(FIGURE_JS, timeout=PAGE_TIMEOUT_MS)
    _no_code(page)
    before = page.evaluate(FIGURE_JS)
    handle = slider.locator(".noUi-handle")
    handle.focus()
    for _ in range(3):
        handle.press("ArrowRight")
    page.wait_for_function(f"(before) => {{ const f = ({FIGURE_JS})(); return f && f !== before; }}",
                           arg=before, timeout=CHANGE_TIMEOUT_MS)
    artifacts_dir.mkdir(exist_ok=True)
    page.screenshot(path=str(artifacts_dir / f"app-{name}.png"))


def _kernels(voila_pid: int) -> list[int]:
    """Process ids of the kernels Voila runs (its ipykernel children)."""
    pids = []
    for child in psutil.Process(voila_pid).children(recursive=True):
        try:
            if child.status() != psutil.STATUS_ZOMBIE and "ipykernel" in " ".join(child.cmdline()):
                pids.append(child.pid)
        except psutil.Error:  # ended while we looked: not running
            pass
    return pids


def _wait_for_kernels(voila_pid: int, count: int, timeout: float) -> list[int]:
    deadline = time.monotonic() + timeout
    while (kernels := _kernels(voila_pid)) and len(kernels) > count and time.monotonic() < deadline:
        time.sleep(0.5)
    return kernels


def test_a_closed_page_kernel_goes_away(voila, chromium):
    """Closing the tab ends the page's kernel (Voila's beforeunload request), long before the culler would."""
    url, _, pid = voila
    baseline = len(_wait_for_kernels(pid, 0, CULL_WAIT))  # earlier tests' pages, ended by now
    context = chromium.new_context(viewport={"width": 1366, "height": 768})
    page = context.new_page()
    page.set_default_timeout(PAGE_TIMEOUT_MS)
    page.goto(f"{url}/voila/render/{sorted(EXPLORERS)[0]}.ipynb")
    page.locator(".widget-slider").first.wait_for()
    assert len(_kernels(pid)) == baseline + 1, "the page did not start one kernel"
    page.close(run_before_unload=True)  # the tab goes, as when a student closes it
    context.close()
    left = _wait_for_kernels(pid, baseline, CULL_WAIT)
    assert len(left) == baseline, f"{len(left) - baseline} kernel(s) of the closed page still run after {CULL_WAIT} s"


def test_a_kernel_without_its_page_is_culled(culling_voila):
    """A tab that never says goodbye (crash, sleep): no beforeunload, so only the culler can end its kernel."""
    url, log_path, pid = culling_voila
    baseline = len(_wait_for_kernels(pid, 0, CULL_WAIT))
    started = log_path.read_text(errors="replace").count("Kernel started:")
    # a bare GET renders the page and starts its kernel; no browser ever connects to it
    urllib.request.urlopen(f"{url}/voila/render/{GALLERY}", timeout=PAGE_TIMEOUT_MS / 1000).read()
    assert log_path.read_text(errors="replace").count("Kernel started:") == started + 1
    left = _wait_for_kernels(pid, baseline, CULL_WAIT)
    assert len(left) == baseline, f"the culler left {len(left) - baseline} idle kernel(s) after {CULL_WAIT} s"
    assert "Culling 'idle' kernel" in log_path.read_text(errors="replace"), "the kernel ended, but not by the culler"


def test_kernels_beyond_the_cap_are_refused_with_a_clear_page(capped_voila):
    url, _, pid = capped_voila
    for _ in range(2):
        urllib.request.urlopen(f"{url}/voila/render/{GALLERY}", timeout=PAGE_TIMEOUT_MS / 1000).read()
    assert len(_kernels(pid)) == 2
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(f"{url}/voila/render/{GALLERY}", timeout=PAGE_TIMEOUT_MS / 1000).read()
    assert refused.value.code == 503
    body = refused.value.read().decode(errors="replace")
    assert "All 2 explorer sessions are in use: close an explorer tab" in body, body[-1000:]
    assert len(_kernels(pid)) == 2


@pytest.mark.xfail(strict=True, reason="finding of 2026-11-26: in Voila the focused noUi handle of the first "
                   "explorer's first slider ignores ArrowRight (aria-valuenow and readout stay 2.00 after 20 presses); "
                   "not yet diagnosed: strict, so a fix shows up as XPASS")
def test_slider_moves_with_the_keyboard(voila, page):
    url, _, _ = voila
    page.goto(f"{url}/voila/render/{sorted(EXPLORERS)[0]}.ipynb")
    handle = page.locator(".widget-slider .noUi-handle").first
    handle.wait_for()
    page.wait_for_function(FIGURE_JS, timeout=PAGE_TIMEOUT_MS)  # the kernel is connected: the slider is live
    before = handle.get_attribute("aria-valuenow")
    handle.focus()
    assert page.evaluate("() => document.activeElement.classList.contains('noUi-handle')"), \
        "the slider handle cannot take the keyboard focus"
    readout = page.locator(".widget-slider").first.locator(".widget-readout")
    shown = readout.inner_text()
    # one step may be finer than the readout's digits (aria-valuenow is formatted like the readout):
    # press until the shown value moves, as a keyboard user would
    for _ in range(20):
        page.keyboard.press("ArrowRight")  # to the focused element, as a keyboard user's key goes
        time.sleep(0.2)
        if handle.get_attribute("aria-valuenow") != before or readout.inner_text() != shown:
            break
    deadline = time.monotonic() + CHANGE_TIMEOUT_MS / 1000
    while handle.get_attribute("aria-valuenow") == before and time.monotonic() < deadline:
        time.sleep(0.1)
    after = handle.get_attribute("aria-valuenow")
    assert float(after) > float(before), f"ArrowRight left the slider at {after} (was {before}; readout {shown!r})"


@pytest.mark.parametrize("name", [GALLERY, f"{sorted(EXPLORERS)[0]}.ipynb"])
def test_app_pages_have_no_serious_accessibility_violation(voila, page, name):
    url, _, _ = voila
    page.goto(f"{url}/voila/render/{name}")
    if name == GALLERY:
        page.wait_for_selector("table a")
    else:
        page.locator(".widget-slider").first.wait_for()
        page.wait_for_function(FIGURE_JS, timeout=PAGE_TIMEOUT_MS)
    violations = serious_violations(page, axe_source())
    assert violations == [], f"{name}: axe-core found serious or critical violations:\n{describe(violations)}"
