"""The Binder set-up alone is enough to run lesson 1.

repo2docker reads only ``binder/`` when it exists (the root pyproject extras are
ignored): it runs ``pip install -r binder/requirements.txt`` from the repository
root. This test rebuilds that in a fresh virtual environment and executes
``01_explicit_equation_of_motion.ipynb`` with that environment's Python, in a
kernel that must come from that environment too.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

LESSON = "01_explicit_equation_of_motion.ipynb"
PIP_TIMEOUT = 1200  # seconds: the whole requirements install (numpy, scipy, jupyterlab, ...)
RUN_TIMEOUT = 1200  # seconds: the whole notebook
CELL_TIMEOUT = 600  # seconds, per cell
PROBE = "UDK_BINDER_PROBE "

# Runs inside the Binder venv: execute the lesson with nbclient (a dependency of
# jupyterlab via nbconvert), then one extra cell that reports where the kernel
# and the package come from.
DRIVER = textwrap.dedent(
    f"""
    import sys
    import nbformat
    from nbclient import NotebookClient

    src, out, cwd = sys.argv[1:4]
    nb = nbformat.read(src, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(
        "import json, sys, udk_notebooks\\n"
        "print({PROBE!r} + json.dumps({{'prefix': sys.prefix, 'package': udk_notebooks.__file__}}))"
    ))
    client = NotebookClient(nb, timeout={CELL_TIMEOUT}, kernel_name="python3",
                            resources={{"metadata": {{"path": cwd}}}})
    try:
        client.execute()
    finally:
        nbformat.write(nb, out)
    for output in nb.cells[-1].outputs:
        if output.get("name") == "stdout":
            print(output["text"].strip())
    """
)


def _run(cmd, *, cwd, env, timeout, what):
    started = time.monotonic()
    proc = subprocess.run(
        [str(c) for c in cmd], cwd=cwd, env=env, timeout=timeout,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    print(f"binder: {what} took {time.monotonic() - started:.1f} s")
    assert proc.returncode == 0, f"{what} failed (exit {proc.returncode}):\n{proc.stdout[-8000:]}"
    return proc.stdout


@pytest.mark.slow
def test_binder_environment_runs_lesson_01(repo_root: Path, lessons_dir: Path, tmp_path: Path):
    requirements = repo_root / "binder" / "requirements.txt"
    assert requirements.is_file(), f"{requirements} is missing"
    lesson = lessons_dir / LESSON
    assert lesson.is_file(), f"no lessons found: {lesson} is missing (lessons are mandatory)"

    venv = tmp_path / "binder-venv"
    vpy = venv / "bin" / "python"
    env = {k: v for k, v in os.environ.items()
           if k not in {"VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "JUPYTER_PATH", "MPLBACKEND"}}
    env.update(
        PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}",
        VIRTUAL_ENV=str(venv),
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        PIP_NO_INPUT="1",
        # Keep kernelspecs, config and runtime files of the user out of it.
        JUPYTER_PREFER_ENV_PATH="1",
        JUPYTER_CONFIG_DIR=str(tmp_path / "jupyter-config"),
        JUPYTER_DATA_DIR=str(tmp_path / "jupyter-data"),
        JUPYTER_RUNTIME_DIR=str(tmp_path / "jupyter-runtime"),
    )

    _run([sys.executable, "-m", "venv", venv], cwd=repo_root, env=env, timeout=300, what="python -m venv")
    # --no-compile: pip would byte-compile every installed module (sympy's thousands among them), half of the
    # install's CPU time (78 -> 42 s here); the lesson's imports compile the few modules they load.
    _run([vpy, "-m", "pip", "install", "-q", "--no-compile", "-r", "binder/requirements.txt"],
         cwd=repo_root, env=env, timeout=PIP_TIMEOUT, what="pip install -r binder/requirements.txt")

    has_kernel = subprocess.run([vpy, "-c", "import ipykernel"], env=env, capture_output=True).returncode == 0
    if not has_kernel:
        _run([vpy, "-m", "pip", "install", "-q", "ipykernel"],
             cwd=repo_root, env=env, timeout=PIP_TIMEOUT, what="pip install ipykernel")

    driver = tmp_path / "run_lesson.py"
    driver.write_text(DRIVER)
    executed = tmp_path / f"executed-{LESSON}"
    out = _run([vpy, driver, lesson, executed, lesson.parent],
               cwd=lesson.parent, env=env, timeout=RUN_TIMEOUT, what=f"executing {LESSON}")

    probes = [line[len(PROBE):] for line in out.splitlines() if line.startswith(PROBE)]
    assert probes, f"the probe cell printed nothing:\n{out[-4000:]}"
    probe = json.loads(probes[-1])
    assert Path(probe["prefix"]).resolve() == venv.resolve(), (
        f"the kernel ran in {probe['prefix']}, not in the Binder venv {venv}")
    assert Path(probe["package"]).resolve().is_relative_to(repo_root.resolve()), (
        f"udk_notebooks was imported from {probe['package']}, not from the repository (-e .)")
