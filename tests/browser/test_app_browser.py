"""The explorers as Voila apps (``make app``), in headless Chromium.

Voila serves the pages that :mod:`udk_notebooks.app` writes from the explorer
registry. For the gallery and every explorer page: no code is shown, the page
renders its sliders and figure, and moving a slider changes the figure.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from udk_notebooks.app import GALLERY, write_apps
from udk_notebooks.widgets import EXPLORERS

START_TIMEOUT = 60  # seconds until Voila answers
PAGE_TIMEOUT_MS = 120_000  # page load until the first slider and figure show
CHANGE_TIMEOUT_MS = 30_000

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


@pytest.fixture(scope="module")
def voila(tmp_path_factory):
    base = tmp_path_factory.mktemp("voila")
    apps = base / "apps"
    write_apps(apps)
    env = {**os.environ}
    for name in ("JUPYTER_CONFIG_DIR", "JUPYTER_RUNTIME_DIR"):
        (base / name.lower()).mkdir()
        env[name] = str(base / name.lower())
    port = _free_port()
    log_path = base / "voila.log"
    cmd = [sys.executable, "-m", "voila", str(apps), "--no-browser", f"--port={port}",
           "--Voila.ip=127.0.0.1", "--Voila.port_retries=0"]
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
        yield url, log_path
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture
def page(chromium):
    context = chromium.new_context(viewport={"width": 1366, "height": 768})
    page = context.new_page()
    page.set_default_timeout(PAGE_TIMEOUT_MS)
    try:
        yield page
    finally:
        context.close()


def _no_code(page) -> None:
    editors = page.locator(".jp-CodeCell .jp-InputArea:visible, .jp-CodeMirrorEditor:visible, .cm-editor:visible")
    assert editors.count() == 0, "the app page shows code cells"
    assert page.get_by_text("from udk_notebooks").count() == 0, "the app page shows source code"


def test_gallery_links_every_explorer(voila, page):
    url, _ = voila
    page.goto(f"{url}/voila/render/{GALLERY}")
    page.wait_for_selector("table a")
    links = page.eval_on_selector_all("table a", "els => els.map(e => e.getAttribute('href'))")
    assert sorted(links) == sorted(f"{name}.ipynb" for name in EXPLORERS)
    _no_code(page)


@pytest.mark.parametrize("name", sorted(EXPLORERS))
def test_app_slider_changes_figure(voila, page, name, artifacts_dir: Path):
    url, log_path = voila
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
