"""scipy's LAPACK wrappers loaded without ``scipy.linalg`` (udk_notebooks._lapack, cold start of issue 23).

The routes must run the very same routines as ``scipy.linalg.lapack``; ``null_space``
must span what ``scipy.linalg.null_space`` spans (checked against closed forms).
"""

from __future__ import annotations

import pathlib
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import udk_notebooks
from udk_notebooks import _lapack
from scipy_alone import hidden_until_its_package, run_fresh

PACKAGE = pathlib.Path(udk_notebooks.__file__).parent


def _routines_used() -> set[str]:
    """Every ``lapack.<name>`` the package's source calls."""
    names = set()
    for path in PACKAGE.rglob("*.py"):
        names |= set(re.findall(r"\blapack\.([a-z_0-9]+)\b", path.read_text()))
    return names


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
    assert run_fresh(code) == "True True []"


def test_with_scipy_linalg_imported_first_it_is_scipys_module():
    import scipy.linalg.lapack

    assert _lapack._load_lapack() is scipy.linalg.lapack


def test_where_the_extension_cannot_be_found_scipy_linalg_is_imported():
    code = (
        hidden_until_its_package("scipy.linalg._flapack")  # no extension module, until scipy.linalg asks
        + "from udk_notebooks._lapack import lapack\n"
        "import scipy.linalg.lapack\n"
        "print(lapack is scipy.linalg.lapack, lapack.dpotrf([[4.0]], lower=1)[0].item())"
    )
    assert run_fresh(code) == "True 2.0"


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


# -- the fallback, where scipy lays its extension module out otherwise ---------------------------------------
# Each case patches the import machinery in a fresh interpreter, only while the module is loaded alone
# ('scipy.linalg' not yet imported), then checks that the package's routines still work and are scipy's own.
_CHECK_ROUTINES = (
    "import scipy.linalg.lapack as full\n"
    f"names = {sorted(_routines_used())!r}\n"
    "print(loaded_alone, [n for n in names if getattr(lapack, n) is not getattr(full, n)], "
    "lapack.dpotrf([[4.0]], lower=1)[0].item())\n"
)


def _fallback(patch: str) -> str:
    return run_fresh(
        "import importlib.machinery, sys\n"
        "def alone(name):\n"
        "    return name == 'scipy.linalg._flapack' and 'scipy.linalg' not in sys.modules\n"
        f"{patch}\n"
        "from udk_notebooks._lapack import lapack\n"
        "loaded_alone = 'scipy.linalg' not in sys.modules\n" + _CHECK_ROUTINES
    )


def test_an_extension_that_fails_to_load_alone_falls_back_to_scipy_linalg():
    # e.g. a build whose extension module needs its package initialised first
    patch = (
        "real = importlib.machinery.ExtensionFileLoader.exec_module\n"
        "def exec_module(self, module):\n"
        "    if alone(module.__name__):\n"
        "        raise ImportError('undefined symbol: needs scipy.linalg first')\n"
        "    return real(self, module)\n"
        "importlib.machinery.ExtensionFileLoader.exec_module = exec_module\n"
    )
    assert _fallback(patch) == "False [] 2.0"


def test_a_module_of_that_name_that_is_not_compiled_falls_back_to_scipy_linalg():
    # e.g. a later scipy that keeps a pure-Python shim under the old name
    patch = (
        "import importlib.util\n"
        "real = importlib.machinery.PathFinder.find_spec\n"
        "def find_spec(cls, name, path=None, target=None):\n"
        "    if alone(name):\n"
        "        return importlib.util.spec_from_loader(name, importlib.machinery.SourceFileLoader(name, 'shim.py'))\n"
        "    return real(name, path, target)\n"
        "importlib.machinery.PathFinder.find_spec = classmethod(find_spec)\n"
    )
    assert _fallback(patch) == "False [] 2.0"


def test_a_routine_missing_from_the_module_alone_is_scipy_linalgs():
    # e.g. a routine moved to another extension module: the others stay on the fast route
    patch = (
        "real = importlib.machinery.ExtensionFileLoader.exec_module\n"
        "def exec_module(self, module):\n"
        "    real(self, module)\n"
        "    if alone(module.__name__):\n"
        "        del module.dgglse, module.dgesdd\n"
        "importlib.machinery.ExtensionFileLoader.exec_module = exec_module\n"
    )
    assert _fallback(patch) == "True [] 2.0"
    # and a name scipy does not have either is an AttributeError that names it
    code = ("from udk_notebooks._lapack import lapack\n"
            "try:\n    lapack.no_such_routine\nexcept AttributeError as exc:\n    print('no_such_routine' in str(exc))")
    assert run_fresh(code) == "True"


# -- null_space against scipy's, on the shapes the checks above do not reach --------------------------------
@st.composite
def rank_deficient(draw):
    """A matrix of a drawn rank r <= min(m, n) (possibly 0 or an empty shape), at a drawn scale."""
    m, n = draw(st.integers(0, 6)), draw(st.integers(0, 6))
    rank = draw(st.integers(0, min(m, n)))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    scale = 10.0 ** draw(st.integers(-6, 6))
    return scale * rng.standard_normal((m, rank)) @ rng.standard_normal((rank, n)), rank


@settings(max_examples=150, deadline=None)
@given(case=rank_deficient())
def test_null_space_spans_what_scipys_spans(case):
    from scipy.linalg import null_space

    A, rank = case
    n = A.shape[1]
    basis, reference = _lapack.null_space(A, rcond=1e-10), null_space(A, rcond=1e-10)
    assert basis.shape == reference.shape == (n, n - rank)
    np.testing.assert_allclose(basis.T @ basis, np.eye(n - rank), atol=1e-13)
    np.testing.assert_allclose(A @ basis, 0.0, atol=1e-9 * max(1.0, np.abs(A).max(initial=0.0)))
    np.testing.assert_allclose(basis @ basis.T, reference @ reference.T, atol=1e-12)  # the same space


@pytest.mark.parametrize("shape", [(0, 3), (2, 3), (2, 0), (0, 0)])
def test_null_space_of_empty_and_zero_matrices(shape):
    """No rows, or a zero matrix (rank 0), leave the whole space; no columns leave nothing to span."""
    n = shape[1]
    basis = _lapack.null_space(np.zeros(shape), rcond=1e-10)
    assert basis.shape == (n, n)
    np.testing.assert_allclose(basis @ basis.T, np.eye(n), atol=1e-15)
