"""``python -m udk_notebooks.widgets.warm``: after it, every explorer's first frame in a new kernel needs no sympy.

Issue 23's cold start: the first frame reads its compiled models from kept code. The test warms a cache
folder of its own (in a subprocess, as ``make lab`` does), then opens each explorer in a fresh interpreter:
it must draw its first frame without importing sympy (no derivation, no code generation), with the numbers
of a fresh compile (the stored state of the first frame equals the one computed in this process).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from udk_notebooks import _kept_code as kept_code
from udk_notebooks.widgets import EXPLORERS
from udk_notebooks.widgets import warm

ROOT = Path(__file__).resolve().parent.parent


def _python(script: str, cache: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT), MPLBACKEND="Agg", OPENBLAS_NUM_THREADS="1",
               **{kept_code.CACHE_ENV: str(cache)})
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=900)


@pytest.fixture(scope="module")
def warmed(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("warm") / "cache"
    out = _python("from udk_notebooks.widgets.warm import main; main()", folder)
    assert out.returncode == 0, out.stderr
    assert f"opened {len(EXPLORERS)} explorers" in out.stdout
    return folder


FIRST_FRAME = """
    import json, sys
    import udk_notebooks.widgets as widgets
    explorer = widgets.EXPLORERS[{name!r}]()
    result = explorer.result
    trajectory = getattr(result, "trajectory", None)
    final = None if trajectory is None else trajectory.q[-1].tolist()
    print(json.dumps({{"error": explorer.error, "png": bool(explorer.png), "sympy": "sympy" in sys.modules,
                      "final": final}}))
"""


@pytest.mark.parametrize("name", sorted(EXPLORERS))
def test_after_warming_each_explorer_starts_without_sympy(warmed, name):
    out = _python(FIRST_FRAME.format(name=name), warmed)
    assert out.returncode == 0, out.stderr
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["error"] == "" and seen["png"]
    assert not seen["sympy"], f"{name}: sympy was imported for the first frame"
    here = EXPLORERS[name]()  # this process: compiled afresh or read from the test session's own cache
    try:
        trajectory = getattr(here.result, "trajectory", None)
        if trajectory is not None:
            np.testing.assert_array_equal(seen["final"], trajectory.q[-1])
    finally:
        here.close()


def test_warming_is_done_once_per_version_of_the_code(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv(kept_code.CACHE_ENV, str(folder))
    folder.mkdir()
    (folder / f"warmed-{kept_code.code_key()}").touch()
    assert warm.warm_cache() == []  # done for this code: nothing opened
    (folder / "warmed-0123456789abcdef0123").touch()  # an older version's stamp
    from udk_notebooks.widgets import kepler as kepler_explorer

    kepler_explorer.compiled_model.cache_clear()  # as in a new process: this one may have compiled it already
    assert warm.warm_cache(["kepler"]) == ["kepler"]  # named explorers are always opened...
    assert list(folder.glob("kepler.model-*.code.json"))  # ...and their code kept
    assert (folder / "warmed-0123456789abcdef0123").exists()  # a partial warming does not stamp
    with pytest.raises(ValueError, match="unknown explorer"):
        warm.warm_cache(["no such explorer"])
    monkeypatch.setenv(kept_code.CACHE_ENV, "")
    assert warm.warm_cache(force=True) == []  # the disk cache is off: nothing to keep
