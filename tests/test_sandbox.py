"""The grading sandbox itself: what a process inside can see, reach and keep."""

from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path

import pytest

import udk_notebooks
from udk_notebooks.assign.sandbox import WORKDIR, Limits, run_sandboxed, sandbox_problem

pytestmark = pytest.mark.skipif(sandbox_problem() is not None, reason=f"no sandbox here: {sandbox_problem()}")

PROBE = r'''
import json, os, socket, sys
info = {"cwd": os.getcwd(), "files": sorted(os.listdir(".")), "env": dict(os.environ),
        "pids": sorted(p for p in os.listdir("/proc") if p.isdigit()), "uid": os.getuid()}
info["other"] = os.path.exists(sys.argv[2])
info["home"] = sorted(os.listdir(sys.argv[4])) if os.path.isdir(sys.argv[4]) else []
try:
    open(sys.argv[3] + "/planted.py", "w")
    info["package"] = "writable"
except OSError as exc:
    info["package"] = type(exc).__name__
try:
    socket.create_connection(("1.1.1.1", 53), timeout=2)
    info["network"] = "reached"
except OSError as exc:
    info["network"] = type(exc).__name__
with os.fdopen(int(sys.argv[1]), "w") as out:
    json.dump(info, out)
'''


def _python(code: str, *args: str, files=None, limits=None):
    return run_sandboxed([sys.executable, "-I", "-c", code, "{result_fd}", *args], files or {}, limits=limits)


def test_a_sandbox_sees_its_files_and_nothing_of_the_grader(tmp_path, monkeypatch):
    monkeypatch.setenv("UDK_SANDBOX_SECRET", "do-not-show")
    given = tmp_path / "given.txt"
    given.write_text("hello")
    (tmp_path / "other.txt").write_text("not given")
    package = Path(udk_notebooks.__file__).parent
    run = _python(PROBE, str(tmp_path / "other.txt"), str(package), str(Path.home()), files={"notebook.txt": given})
    info = json.loads(run.data)
    assert info["cwd"] == WORKDIR and info["files"] == ["notebook.txt"]
    assert "UDK_SANDBOX_SECRET" not in info["env"] and info["env"]["HOME"] == WORKDIR
    assert info["pids"] == ["1", "2"]  # bwrap's init and this process: nothing of the host
    assert info["package"] == "OSError" and not (package / "planted.py").exists()  # read-only file system
    assert info["network"] != "reached"
    assert not info["other"]  # the grader's temporary folder
    # of the grader's home, at most the first folder on the way to the Python environment
    on_the_way = {Path(f).relative_to(Path.home()).parts[0] for f in (sys.prefix, sys.base_prefix, package)
                  if Path(f).is_relative_to(Path.home())}
    assert set(info["home"]) <= on_the_way


def test_the_wall_time_limit_kills_every_process_of_the_sandbox():
    marker = f"udk-sandbox-test-{uuid.uuid4().hex}"
    code = ("import os, subprocess, sys, time\n"
            f"subprocess.Popen([sys.executable, '-c', 'import time  # {marker}\\ntime.sleep(600)'], "
            "start_new_session=True)\n"
            "time.sleep(600)\n")
    run = _python(code, limits=Limits(wall_seconds=3))
    assert run.timed_out and run.data == b""
    alive = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker.encode() in (entry / "cmdline").read_bytes():
                alive.append(entry.name)
        except OSError:
            pass
    assert alive == []


def test_results_are_read_up_to_their_limit():
    run = _python("import os, sys\nos.write(int(sys.argv[1]), b'x' * 300000)",
                  limits=Limits(result_bytes=100000))
    assert run.truncated and len(run.data) == 100000


def test_memory_and_processes_are_limited():
    code = ("import os, sys\nout = []\n"
            "try:\n    bytearray(3 * 2**30)\n    out.append('allocated')\nexcept MemoryError:\n    out.append('memory')\n"
            "children = 0\n"
            "try:\n    for _ in range(200):\n        if os.fork() == 0:\n            import time; time.sleep(5); os._exit(0)\n"
            "        children += 1\nexcept OSError:\n    out.append('processes')\n"
            "os.write(int(sys.argv[1]), (' '.join(out) + f' {children}').encode())\n"
            "os._exit(0)\n")
    run = _python(code, limits=Limits(memory_bytes=2 * 2**30, processes=32, wall_seconds=60))
    words = run.data.decode().split()
    assert words[:2] == ["memory", "processes"] and int(words[2]) < 32


@pytest.mark.parametrize("change, message", [({"wall_seconds": 0}, "wall_seconds"), ({"processes": 2}, "processes"),
                                             ({"memory_bytes": 1.5}, "memory_bytes")])
def test_limits_check_their_values(change, message):
    with pytest.raises(ValueError, match=message):
        Limits(**change)


def test_run_sandboxed_checks_its_files(tmp_path):
    with pytest.raises(ValueError, match="`files`"):
        run_sandboxed([sys.executable, "-c", "pass"], {"../escape": tmp_path / "missing"})


def test_a_sandbox_that_cannot_be_set_up_is_the_graders_error_not_the_students(monkeypatch):
    import udk_notebooks.assign.sandbox as sandbox

    real = sandbox._mount_arguments
    monkeypatch.setattr(sandbox, "_mount_arguments",
                        lambda files, size: real(files, size) + ["--ro-bind", "/nonexistent-udk-folder", "/x"])
    with pytest.raises(sandbox.SandboxUnavailable, match="could not be set up"):
        _python("pass")


def test_grading_refuses_to_run_without_a_sandbox_and_says_why(tmp_path, monkeypatch, capsys):
    import udk_notebooks.assign.grade as grade
    from udk_notebooks.assign.__main__ import main
    from udk_notebooks.assign.sandbox import SandboxUnavailable

    spec = {"format": "udk-assign/1", "name": "none", "given": [], "questions": []}
    (tmp_path / "autograder").mkdir()
    (tmp_path / "autograder" / "assignment.json").write_text(json.dumps(spec))
    notebook = tmp_path / "ada.ipynb"
    notebook.write_text('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')
    monkeypatch.setattr(grade, "sandbox_problem", lambda: "bubblewrap (`bwrap`) is not installed")
    for call in (lambda: grade.grade_notebook(spec, notebook), lambda: grade.grade_folder(spec, tmp_path, tmp_path / "o")):
        with pytest.raises(SandboxUnavailable, match=r"without a sandbox: bubblewrap .* is not installed.*--unsafe"):
            call()
    assert main(["grade", str(tmp_path / "autograder"), str(notebook), "--out", str(tmp_path / "out")]) == 3
    assert "--unsafe" in capsys.readouterr().err and not (tmp_path / "out").exists()
