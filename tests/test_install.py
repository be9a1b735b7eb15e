"""The light install: `pip install udk-notebooks` brings no Jupyter server.

A course JupyterHub image, VS Code or an existing Jupyter brings its own server;
the package must not pull a second one (jupyterlab, tornado, pyzmq). The front
ends are extras: ``[lab]`` (JupyterLab), ``[app]`` (Voila), ``[site]``
(nbconvert).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from importlib.metadata import requires
from pathlib import Path

import pytest

PIP_TIMEOUT = 1200  # seconds

# Runs in the plain venv: the README's first example and an explorer driven from Python.
PROBE = textwrap.dedent(
    """
    import importlib.util, re, sys
    server = [m for m in ("jupyterlab", "jupyter_server", "tornado", "zmq", "notebook", "voila")
              if importlib.util.find_spec(m) is not None]
    assert not server, f"the plain install pulled a server: {server}"
    readme = open(sys.argv[1]).read()
    block = re.findall(r"```python\\n(.*?)```", readme, flags=re.S)[0]
    exec(compile(block, "README.md", "exec"), {})
    import matplotlib
    matplotlib.use("Agg")
    from udk_notebooks.widgets import InclinedLineExplorer
    explorer = InclinedLineExplorer()
    before = explorer.result
    explorer.set(slope=explorer.controls["slope"].max)
    assert explorer.error == "" and explorer.result is not before, explorer.error
    print("LIGHT INSTALL OK")
    """
)


def _extra_requirements(extra: str) -> set[str]:
    names = set()
    for line in requires("udk-notebooks") or []:
        if re.search(rf"""extra\s*==\s*["']{extra}["']""", line):
            names.add(re.split(r"[\s<>=!~;\[]", line, 1)[0].lower())
    return names


def test_runtime_requirements_hold_no_server():
    runtime = {re.split(r"[\s<>=!~;\[]", line, 1)[0].lower()
               for line in requires("udk-notebooks") or [] if "extra ==" not in line}
    assert {"numpy", "scipy", "sympy", "matplotlib", "ipywidgets", "ipympl"} <= runtime
    assert not runtime & {"jupyterlab", "notebook", "voila", "jupyter-server", "tornado", "nbconvert"}, runtime


def test_front_ends_are_extras():
    assert "jupyterlab" in _extra_requirements("lab")
    assert "voila" in _extra_requirements("app")
    assert "nbconvert" in _extra_requirements("site")


@pytest.mark.slow
def test_plain_install_runs_readme_example_and_an_explorer(repo_root: Path, tmp_path: Path):
    venv = tmp_path / "light"
    env = {k: v for k, v in os.environ.items() if k not in {"VIRTUAL_ENV", "PYTHONPATH", "MPLBACKEND"}}
    env.update(PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1", OPENBLAS_NUM_THREADS="1")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, env=env, timeout=300)
    vpy = venv / "bin" / "python"
    # --no-compile: byte-compiling every installed module (sympy's thousands) is much of the install's CPU
    # time; the probe's imports compile the modules it loads (tests/test_binder.py measures the difference).
    install = subprocess.run([str(vpy), "-m", "pip", "install", "-q", "--no-compile", str(repo_root)], env=env,
                             capture_output=True, text=True, timeout=PIP_TIMEOUT)
    assert install.returncode == 0, install.stdout[-4000:] + install.stderr[-4000:]
    probe = tmp_path / "probe.py"
    probe.write_text(PROBE)
    # Run outside the repository so that the installed copy, not the source tree, is imported.
    run = subprocess.run([str(vpy), str(probe), str(repo_root / "README.md")], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0 and "LIGHT INSTALL OK" in run.stdout, run.stdout[-4000:] + run.stderr[-4000:]
