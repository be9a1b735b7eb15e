"""scipy's LAPACK wrappers loaded without ``scipy.linalg`` (udk_notebooks._lapack, cold start of issue 23).

The routes must run the very same routines as ``scipy.linalg.lapack``; ``null_space``
must span what ``scipy.linalg.null_space`` spans (checked against closed forms).
"""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

import udk_notebooks
from udk_notebooks import _lapack

PACKAGE = pathlib.Path(udk_notebooks.__file__).parent


def _routines_used() -> set[str]:
    """Every ``lapack.<name>`` the package's source calls."""
    names = set()
    for path in PACKAGE.rglob("*.py"):
        names |= set(re.findall(r"\blapack\.([a-z_0-9]+)\b", path.read_text()))
    return names


def _run(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()


def test_the_package_calls_lapack_routines():
    assert {"dpotrf", "dgglse", "dgesdd"} <= _routines_used()  # the scan below is not vacuous


def test_alone_the_routines_are_scipys_own_objects():
    # In a fresh interpreter: the extension module loads first, without scipy.linalg; a later
    # ``import scipy.linalg`` (an ordinary import: its package attribute is set) holds the same routine objects.
    code = (
        "import sys\n"
        "from udk_notebooks._lapack import lapack\n"
        "alone = 'scipy.linalg' not in sys.modules\n"
        "import scipy.linalg\n"
        "import scipy.linalg.lapack as full\n"
        f"names = {sorted(_routines_used())!r}\n"
        "print(alone, hasattr(scipy.linalg, '_flapack'), [n for n in names if getattr(lapack, n) is not getattr(full, n)])"
    )
    assert _run(code) == "True True []"


def test_with_scipy_linalg_imported_first_it_is_scipys_module():
    import scipy.linalg.lapack

    assert _lapack._load_lapack() is scipy.linalg.lapack


def test_where_the_extension_cannot_be_found_scipy_linalg_is_imported():
    code = (
        "import importlib.machinery, sys\n"
        "real = importlib.machinery.PathFinder.find_spec\n"
        "def find_spec(cls, name, path=None, target=None):  # no extension module, until scipy.linalg asks\n"
        "    alone = name == 'scipy.linalg._flapack' and 'scipy.linalg' not in sys.modules\n"
        "    return None if alone else real(name, path, target)\n"
        "importlib.machinery.PathFinder.find_spec = classmethod(find_spec)\n"
        "from udk_notebooks._lapack import lapack\n"
        "import scipy.linalg.lapack\n"
        "print(lapack is scipy.linalg.lapack, lapack.dpotrf([[4.0]], lower=1)[0].item())"
    )
    assert _run(code) == "True 2.0"


@pytest.mark.parametrize("slope", [0.0, 2.0, -1e-3, 1e8])
def test_null_space_of_a_line(slope):
    """``k x1 - x2 = 0``: the virtual displacements are spanned by ``(1, k) / sqrt(1 + k^2)``."""
    basis = _lapack.null_space(np.array([[slope, -1.0]]), rcond=1e-10)
    assert basis.shape == (2, 1)
    expected = np.array([1.0, slope]) / np.hypot(1.0, slope)
    np.testing.assert_allclose(abs(basis[:, 0] @ expected), 1.0, rtol=1e-15)


def test_null_space_of_dependent_rows_matches_scipy():
    """Rank 2 of 3 rows in R^5: a 3-dimensional space, orthonormal, the same projector as scipy's."""
    from scipy.linalg import null_space

    rng = np.random.default_rng(23)
    rows = rng.standard_normal((2, 5))
    A = np.vstack([rows, rows[0] - 3 * rows[1]])
    basis = _lapack.null_space(A, rcond=1e-10)
    assert basis.shape == (5, 3)
    np.testing.assert_allclose(basis.T @ basis, np.eye(3), atol=1e-14)
    np.testing.assert_allclose(A @ basis, 0.0, atol=1e-13)
    reference = null_space(A, rcond=1e-10)
    np.testing.assert_allclose(basis @ basis.T, reference @ reference.T, atol=1e-14)


def test_null_space_of_a_full_rank_square_matrix_is_empty():
    assert _lapack.null_space(np.array([[2.0, 1.0], [0.0, 3.0]]), rcond=1e-10).shape == (2, 0)
