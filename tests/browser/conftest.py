"""JupyterLab + headless Chromium fixtures for the browser tests.

- ``lab_server`` (session): JupyterLab from the running interpreter's environment on
  127.0.0.1 and a free port, with its own token, config/runtime/settings/workspace
  folders, and a temporary COPY of the lessons as its root (the test never writes
  into the repository). Stopped by PID at the end of the session.
- ``lab`` (function): the same server with every kernel session deleted first, so
  each test starts with fresh kernels.
- ``chromium`` (session): Debian's /usr/bin/chromium driven by Playwright (browser
  downloads do not work on these machines). Missing browser: skipped, or failed when
  ``CI=true``.
- ``page_at`` (function): a factory, ``page_at(viewport)`` -> a page in a fresh browser
  context of that size; every page it made is closed at teardown (as a tab closes, so a
  Voila page ends its kernel). ``lab_page`` is ``page_at`` at 1400x1000.
- ``voila`` (session): the explorers as Voila apps (``make app``'s settings, short
  culling), ``(url, log_path, pid)``; shared by every test that opens an app page.

The page scripts and plain helpers (Run All, figure signatures, keyboard routes) are in
``browser_kit.py``.

See /work/shared/notes/browser-testing.md for the selectors and flags used here.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import sys
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest
from browser_kit import free_port, start_server, stop, voila_server

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# seconds until GET /api/status must answer; benchmarks/browser_soak.py raises it beside its CPU burners
SERVER_START_TIMEOUT = float(os.environ.get("UDK_SERVER_START_TIMEOUT", "60"))
VIEWPORT = {"width": 1400, "height": 1000}
HERE = Path(__file__).resolve().parent


def _is_browser_test(item) -> bool:
    return HERE in Path(str(item.fspath)).resolve().parents


def _require_chromium() -> None:
    if not CHROMIUM.exists():
        reason = f"{CHROMIUM} is missing (apt-get install -y chromium)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(reason)
        pytest.skip(reason)


def pytest_collection_modifyitems(config, items):
    for item in items:
        if _is_browser_test(item):
            item.add_marker(pytest.mark.browser)
            item.add_marker(pytest.mark.slow)


def pytest_runtest_setup(item):
    # Before any fixture: no JupyterLab is started for a test that cannot run.
    if _is_browser_test(item):
        _require_chromium()


@dataclass
class LabServer:
    url: str  # http://127.0.0.1:PORT (no trailing slash)
    token: str
    root_dir: Path  # the temporary copy of the lessons served by JupyterLab
    log_path: Path
    pid: int

    def page_url(self, path: str) -> str:
        sep = "&" if "?" in path else "?"
        return f"{self.url}/{path.lstrip('/')}{sep}token={self.token}"

    def api(self, method: str, path: str, timeout: float = 10):
        request = urllib.request.Request(
            f"{self.url}/api/{path.lstrip('/')}",
            method=method,
            headers={"Authorization": f"token {self.token}"},
        )
        with urllib.request.urlopen(request, timeout=timeout) as response:
            body = response.read()
        return json.loads(body) if body else None

    def log_tail(self, chars: int = 4000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return "(no log)"


@pytest.fixture(scope="session")
def lab_server(tmp_path_factory, lessons_dir: Path):
    base = tmp_path_factory.mktemp("jupyterlab")
    root = base / "lessons"
    if lessons_dir.is_dir():
        shutil.copytree(lessons_dir, root, ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    else:
        root.mkdir()
    dirs = {name: base / name.lower() for name in (
        "JUPYTER_CONFIG_DIR", "JUPYTER_RUNTIME_DIR", "JUPYTERLAB_SETTINGS_DIR", "JUPYTERLAB_WORKSPACES_DIR")}
    for path in dirs.values():
        path.mkdir()
    env = {**os.environ, **{k: str(v) for k, v in dirs.items()}}

    # No "get notified about Jupyter news?" pop-up: what `jupyter labextension disable
    # --level=user @jupyterlab/apputils-extension:announcements` writes, in our config dir.
    page_config = dirs["JUPYTER_CONFIG_DIR"] / "labconfig" / "page_config.json"
    page_config.parent.mkdir(parents=True)
    page_config.write_text(json.dumps(
        {"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}}))
    # Keep every cell in the DOM, so the test sees all prompts and outputs.
    tracker = dirs["JUPYTERLAB_SETTINGS_DIR"] / "@jupyterlab" / "notebook-extension" / "tracker.jupyterlab-settings"
    tracker.parent.mkdir(parents=True)
    tracker.write_text(json.dumps({"windowingMode": "none"}))

    token = secrets.token_hex(16)
    port = free_port()
    cmd = [
        sys.executable, "-m", "jupyterlab",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    if os.geteuid() == 0:
        cmd.append("--allow-root")
    log_path = base / "jupyterlab.log"
    url = f"http://127.0.0.1:{port}"
    server = LabServer(url=url, token=token, root_dir=root, log_path=log_path, pid=0)
    proc = start_server("JupyterLab", cmd, cwd=root, env=env, log_path=log_path, timeout=SERVER_START_TIMEOUT,
                        ready=lambda: server.api("GET", "status", timeout=2))
    server.pid = proc.pid
    try:
        yield server
    finally:
        stop(proc)


@pytest.fixture
def lab(lab_server: LabServer) -> LabServer:
    """The session's JupyterLab with no kernel session left over from an earlier test."""
    for session in lab_server.api("GET", "sessions") or []:
        lab_server.api("DELETE", f"sessions/{session['id']}")
    return lab_server


@pytest.fixture(scope="session")
def chromium():
    _require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def page_at(chromium):
    """A factory: ``page_at(viewport, timeout_ms=30_000)`` -> a page in a fresh context of that size.

    The pages are closed at teardown as a tab closes (``run_before_unload``: a Voila page then asks
    its server to end its kernel), then their contexts.
    """
    made = []

    def make(viewport: dict, timeout_ms: float = 30_000):
        context = chromium.new_context(viewport=viewport)
        page = context.new_page()
        page.set_default_timeout(timeout_ms)
        # The browser console, for failure reports (browser_kit.figure_report): errors of the widget
        # front ends (a model that failed to render, a lost comm) show only there.
        page.udk_console = []
        page.on("console", lambda message: page.udk_console.append(f"{message.type}: {message.text[:500]}"))
        page.on("pageerror", lambda error: page.udk_console.append(f"pageerror: {str(error)[:500]}"))
        made.append((context, page))
        return page

    yield make
    from playwright.sync_api import Error as PlaywrightError

    for context, page in made:
        try:
            page.close(run_before_unload=True)
        except PlaywrightError:  # the test closed it already (a tab it closed on purpose)
            pass
        context.close()


@pytest.fixture
def lab_page(page_at, lab: LabServer):
    """A fresh browser page (1400x1000) for the session's JupyterLab, closed after the test."""
    return page_at(VIEWPORT)


# Voila pages in the browser: culling only after 2 minutes, since a kernel sits idle between Voila's
# server-side run and the page's websocket (long on a loaded machine); closed tabs end theirs at once.
PAGE_CULL_IDLE_TIMEOUT = 120
MAX_KERNELS = 32  # the cap itself is tested on a server of its own (test_app_browser's capped_voila)


@pytest.fixture(scope="session")
def voila(tmp_path_factory):
    """The explorers as Voila apps for the whole session: ``(url, log_path, pid)``."""
    with voila_server(tmp_path_factory.mktemp("voila"), max_kernels=MAX_KERNELS,
                      cull_idle_timeout=PAGE_CULL_IDLE_TIMEOUT) as server:
        yield server
