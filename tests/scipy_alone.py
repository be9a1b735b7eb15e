"""Helpers of the tests of scipy modules loaded without their package (udk_notebooks._lapack, udk_notebooks._ode)."""

from __future__ import annotations

import subprocess
import sys


def run_fresh(code: str) -> str:
    """What ``code`` prints in a fresh interpreter (nothing of scipy or of the package imported before it)."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()


def hidden_until_its_package(module: str) -> str:
    """Code that makes ``module`` impossible to find until its package is being imported the ordinary way.

    Run first in a fresh interpreter, it stands for another scipy layout, where
    the module cannot be loaded alone: the loader must then import the package.
    """
    package = module.rpartition(".")[0]
    return (
        "import importlib.machinery, sys\n"
        "real = importlib.machinery.PathFinder.find_spec\n"
        "def find_spec(cls, name, path=None, target=None):\n"
        f"    alone = name == {module!r} and {package!r} not in sys.modules\n"
        "    return None if alone else real(name, path, target)\n"
        "importlib.machinery.PathFinder.find_spec = classmethod(find_spec)\n"
    )
