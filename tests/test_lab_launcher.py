"""``make lab``'s launcher (:mod:`udk_notebooks.lab`): one URL line, a reused server, Ctrl-C stops it."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from udk_notebooks.lab import URL_PREFIX, browser_available, lab_url

READY_TIMEOUT = 180  # seconds: a first JupyterLab start on a loaded machine


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _launcher(root: Path, port: int, env: dict) -> list[str]:
    return [sys.executable, "-m", "udk_notebooks.lab", "--root", str(root), "--start", "lesson.ipynb",
            "--ip", "127.0.0.1", "--port", str(port), "--browser", "no", "--log", str(root.parent / "lab.log")]


@pytest.fixture
def lab_env(tmp_path: Path):
    root = tmp_path / "my-lessons"
    root.mkdir()
    import nbformat.v4 as v4
    import nbformat

    nbformat.write(v4.new_notebook(cells=[v4.new_markdown_cell("# A lesson")]), root / "lesson.ipynb")
    env = {**os.environ}
    for name in ("JUPYTER_CONFIG_DIR", "JUPYTER_RUNTIME_DIR", "JUPYTERLAB_SETTINGS_DIR", "JUPYTERLAB_WORKSPACES_DIR"):
        (tmp_path / name.lower()).mkdir()
        env[name] = str(tmp_path / name.lower())
    return root, env


def _read_url(proc: subprocess.Popen, log: Path) -> tuple[str, list[str]]:
    lines: list[str] = []
    deadline = time.monotonic() + READY_TIMEOUT
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            pytest.fail(f"the launcher ended without a URL (code {proc.wait()}):\n{''.join(lines)}\n"
                        f"{log.read_text(errors='replace')[-3000:] if log.exists() else ''}")
        lines.append(line)
        if line.startswith(URL_PREFIX):
            return line[len(URL_PREFIX):].strip(), lines
    pytest.fail(f"no URL line within {READY_TIMEOUT} s:\n{''.join(lines)}")


@pytest.mark.slow
def test_lab_prints_one_url_that_opens_and_a_second_start_reuses_the_server(lab_env):
    root, env = lab_env
    port = _free_port()
    # Started with SIGINT ignored, as a background job of a non-interactive shell starts it (a
    # script's `make lab &`, this suite run in the background): Ctrl-C must stop it all the same.
    proc = subprocess.Popen(_launcher(root, port, env), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    try:
        url, lines = _read_url(proc, root.parent / "lab.log")
        assert re.fullmatch(rf"http://127\.0\.0\.1:{port}/lab/tree/lesson\.ipynb\?token=[0-9a-f]{{48}}", url), url
        assert sum("http" in line for line in lines) == 1, f"more than one line holds a URL: {lines}"
        assert not any("[I " in line or "[W " in line for line in lines), f"jupyter's log reached the terminal: {lines}"
        with urllib.request.urlopen(url, timeout=30) as response:
            assert response.status == 200 and b"<html" in response.read().lower()
        token = url.rsplit("=", 1)[1]
        with pytest.raises(urllib.error.HTTPError):  # the token is what opens it
            urllib.request.urlopen(url.replace(token, "0" * len(token)).replace("/lab/tree", "/api/contents"),
                                   timeout=30)

        # make lab again, same folder and port: no second server, the same URL
        again = subprocess.run(_launcher(root, port, env), env=env, capture_output=True, text=True, timeout=120)
        assert again.returncode == 0, again.stderr
        reused = [line for line in again.stdout.splitlines() if line.startswith(URL_PREFIX)]
        assert reused == [URL_PREFIX + url], again.stdout
        assert "already serves this folder" in again.stdout
        assert proc.poll() is None, "the first server stopped"

        # Ctrl-C stops the launcher and its server
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=180) == 0
        with pytest.raises((urllib.error.URLError, ConnectionError, OSError)):
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status", timeout=5)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)


def test_a_taken_port_is_refused_with_the_fix(lab_env):
    root, env = lab_env
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = subprocess.run(_launcher(root, port, env), env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 1
    assert f"LAB_PORT={port + 1}" in result.stderr and "taken" in result.stderr


def test_lab_url_and_bad_input():
    assert lab_url("http://127.0.0.1:8888/", "abc", "00 start.ipynb") == \
        "http://127.0.0.1:8888/lab/tree/00%20start.ipynb?token=abc"
    assert lab_url("http://h:1", "") == "http://h:1/lab"
    with pytest.raises(ValueError, match="server_url"):
        lab_url("127.0.0.1:8888", "abc")


def test_no_browser_without_a_desktop(monkeypatch):
    if sys.platform in ("darwin", "win32"):
        pytest.skip("macOS and Windows always have a browser")
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    assert browser_available() is False
