"""Start JupyterLab on a folder of lessons, or point at the one already serving it (``make lab``).

``jupyter lab`` alone prints some forty lines of log, starts a second server on
the next free port when the first is still running, and (as ``make lab`` used to
call it) never opens a browser. This launcher::

    python -m udk_notebooks.lab --root my-lessons --start 00_start_here.ipynb

1. looks for a server already serving ``--root`` (the list that
   ``jupyter server list --json`` prints); if there is one it prints that
   server's URL and exits, leaving it running;
2. otherwise starts JupyterLab on ``--ip``/``--port`` with a token of its own,
   its log in a file, waits until the server answers, opens the browser where
   there is one, and ends its output with one line holding the URL to click;
3. stays in the foreground until Ctrl-C, then stops the server (and its kernels).
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import webbrowser
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

__all__ = ["RunningServer", "browser_available", "find_server", "lab_url", "main"]

START_TIMEOUT = 120.0
"""Seconds allowed until a new server answers ``/api/status`` (a first start on a loaded machine is slow)."""

URL_PREFIX = "JupyterLab: "
"""The last line printed starts with this, then the URL (tests and scripts read it)."""


@dataclass(frozen=True)
class RunningServer:
    """A Jupyter server found in the runtime folder: its base URL, token, root folder and process id."""

    url: str  # ends with "/"
    token: str
    root_dir: Path
    port: int
    pid: int


def lab_url(server_url: str, token: str, start: str = "") -> str:
    """The address to click: JupyterLab with the notebook ``start`` open, token included.

    Parameters
    ----------
    server_url : str
        Base URL of the server, e.g. ``"http://127.0.0.1:8888/"``.
    token : str
        The server's token (``""`` when it has none).
    start : str, optional
        A path below the server's root to open, e.g. ``"00_start_here.ipynb"``.
    """
    if not server_url.startswith(("http://", "https://")):
        raise ValueError(f"`server_url` must start with http:// or https://; got {server_url!r}")
    url = server_url.rstrip("/") + "/lab" + (f"/tree/{quote(start)}" if start else "")
    return url + (f"?token={token}" if token else "")


def find_server(root: str | Path, port: int | None = None) -> RunningServer | None:
    """The running Jupyter server whose root folder is ``root``, or None.

    Reads the same server files as ``jupyter server list --json`` (in
    ``JUPYTER_RUNTIME_DIR``); servers whose process is gone are skipped.
    When several serve ``root``, the one on ``port`` is preferred.

    Parameters
    ----------
    root : str or Path
        The folder the server must serve.
    port : int, optional
        The port asked for.
    """
    from jupyter_server.serverapp import list_running_servers

    root = Path(root).resolve()
    found = []
    for info in list_running_servers():
        try:
            served = Path(info.get("root_dir") or info.get("notebook_dir") or "").resolve()
        except OSError:
            continue
        if served == root:
            found.append(RunningServer(url=info["url"], token=info.get("token", ""), root_dir=served,
                                       port=int(info["port"]), pid=int(info["pid"])))
    found.sort(key=lambda server: server.port != port)
    return found[0] if found else None


def browser_available() -> bool:
    """Whether a web browser can be opened from here.

    macOS and Windows always have one; elsewhere (Linux, BSD) only a desktop
    session does, i.e. ``DISPLAY`` or ``WAYLAND_DISPLAY`` is set. A server
    reached over ssh, a container or CI has neither.
    """
    if sys.platform in ("darwin", "win32"):
        return True
    if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        return False
    try:
        webbrowser.get()
    except webbrowser.Error:
        return False
    return True


def _port_is_free(ip: str, port: int) -> bool:
    with socket.socket(socket.AF_INET6 if ":" in ip else socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((ip, port))
        except OSError:
            return False
    return True


def _answers(status_url: str) -> bool:
    try:
        with urllib.request.urlopen(status_url, timeout=2) as response:
            json.loads(response.read() or b"{}")
        return True
    except (urllib.error.URLError, ConnectionError, TimeoutError, OSError, ValueError):
        return False


def _tail(path: Path, chars: int = 3000) -> str:
    try:
        return path.read_text(errors="replace")[-chars:]
    except OSError:
        return "(no log)"


def _announce(url: str, *, opened: bool, reused: bool) -> None:
    if reused:
        print("A JupyterLab server already serves this folder; it keeps running (stop it in its own terminal "
              "with Ctrl-C).")
    else:
        print("Press Ctrl-C in this terminal to stop JupyterLab (your notebooks are saved as you work).")
    if not opened:
        print("Open the address below in your browser (Ctrl-click or copy it):")
    print(URL_PREFIX + url, flush=True)


def _open(url: str, browser: str) -> bool:
    if browser == "no" or (browser == "auto" and not browser_available()):
        return False
    try:
        return bool(webbrowser.open(url))
    except webbrowser.Error:
        return False


def _stop(proc: subprocess.Popen) -> None:
    """SIGTERM, as jupyter's own clean shutdown (kernels included), then SIGKILL if it hangs."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m udk_notebooks.lab", description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default="my-lessons", help="folder to serve (default: my-lessons)")
    parser.add_argument("--start", default="", help="notebook below --root to open, e.g. 00_start_here.ipynb")
    parser.add_argument("--ip", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8888, help="port (default: 8888)")
    parser.add_argument("--browser", choices=("auto", "yes", "no"), default="auto",
                        help="open a browser: auto (where there is a desktop), yes or no")
    parser.add_argument("--log", default=None, help="file for JupyterLab's log (default: <root>/../.jupyterlab.log)")
    args = parser.parse_args(argv)
    if not 0 < args.port < 65536:
        parser.error(f"--port must be between 1 and 65535; got {args.port}")
    if not Path(args.root).is_dir():
        parser.error(f"--root must be an existing folder; {args.root} is not (make lab creates my-lessons/)")
    return args


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    root = Path(args.root).resolve()

    running = find_server(root, args.port)
    if running is not None:
        url = lab_url(running.url, running.token, args.start)
        _announce(url, opened=_open(url, args.browser), reused=True)
        return 0
    if not _port_is_free(args.ip, args.port):
        print(f"Port {args.port} on {args.ip} is taken by another program (or a Jupyter server of another "
              f"folder). Stop it, or choose another port: make lab LAB_PORT={args.port + 1}", file=sys.stderr)
        return 1

    # Ctrl-C must stop the launcher however it was started. A program started in the background
    # of a non-interactive shell (a script's `make lab &`, a CI runner) inherits SIGINT ignored
    # (POSIX, "Asynchronous Lists"), and Python then leaves it ignored: Ctrl-C would do nothing.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    token = secrets.token_hex(24)
    log_path = Path(args.log) if args.log else root.parent / ".jupyterlab.log"
    cmd = [
        sys.executable, "-m", "jupyterlab",
        "--no-browser",  # this launcher opens it, once the server answers
        f"--ServerApp.ip={args.ip}",
        f"--ServerApp.port={args.port}",
        "--ServerApp.port_retries=0",  # never a second server on the next port
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
    ]
    if args.start:
        cmd.append(f"--LabApp.default_url=/lab/tree/{quote(args.start)}")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")  # jupyter refuses to start as root without it (containers, CI)

    host = "127.0.0.1" if args.ip in ("0.0.0.0", "") else ("[::1]" if args.ip == "::" else args.ip)
    server_url = f"http://{host}:{args.port}/"
    with open(log_path, "ab") as log:
        # A session of its own: the terminal's Ctrl-C reaches this launcher only, which then
        # stops the server with SIGTERM (no "Shutdown this Jupyter server (y/[n])?" question).
        proc = subprocess.Popen(cmd, cwd=root, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
    try:
        print(f"Starting JupyterLab on {args.ip}:{args.port} for {root} (log: {log_path}) ...", flush=True)
        deadline = time.monotonic() + START_TIMEOUT
        while not _answers(f"{server_url}api/status?token={token}"):
            if proc.poll() is not None:
                print(f"JupyterLab exited with code {proc.returncode}; the end of its log:\n{_tail(log_path)}",
                      file=sys.stderr)
                return proc.returncode or 1
            if time.monotonic() > deadline:
                print(f"JupyterLab did not answer within {START_TIMEOUT:.0f} s; the end of its log:\n"
                      f"{_tail(log_path)}", file=sys.stderr)
                _stop(proc)
                return 1
            time.sleep(0.25)
        url = lab_url(server_url, token, args.start)
        _announce(url, opened=_open(url, args.browser), reused=False)
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # `kill` of the launcher also stops the server
        proc.wait()
        print(f"JupyterLab stopped (code {proc.returncode}).")
        return proc.returncode or 0
    except KeyboardInterrupt:
        print("\nStopping JupyterLab ...", flush=True)
        return 0
    finally:
        _stop(proc)


if __name__ == "__main__":
    sys.exit(main())
