"""scipy's LAPACK wrappers without the cost of importing ``scipy.linalg`` (cold start, issue 23).

The package calls LAPACK routines directly (``dpotrf``, ``dgglse``, ``dgesdd``,
...): the wrappers that ``scipy.linalg.lapack`` re-exports, unchanged, from its
compiled extension module ``scipy.linalg._flapack``. Importing ``scipy.linalg``
itself costs about 0.15 s of a new kernel, nearly all of it in ``scipy._lib``'s
array-API layer, which loads every lazily loaded numpy submodule (``numpy.f2py``,
``numpy.testing``, ``numpy.ma``, ...); calling a wrapper needs none of it. So this
module loads the extension module by itself (a few milliseconds). When
``scipy.linalg`` is imported later, its ``lapack`` module holds the very same
routine objects, so both routes run identical code (``tests/test_lapack.py``
checks every routine the package uses). Where the extension module cannot be
loaded alone (another scipy layout), ``scipy.linalg`` is imported as usual.

:func:`null_space` is :func:`scipy.linalg.null_space` on the same LAPACK routine
(``dgesdd``), for the same reason.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
from types import ModuleType

import numpy as np

__all__ = ["lapack", "null_space"]

_EXTENSION = "scipy.linalg._flapack"


def _load_lapack() -> ModuleType:
    """scipy's LAPACK wrappers: the extension module alone, or ``scipy.linalg.lapack`` when that fails."""
    if "scipy.linalg" in sys.modules or _EXTENSION in sys.modules:
        from scipy.linalg import lapack as full  # loaded already: nothing to save

        return full
    try:
        import scipy  # the package's own start-up (its BLAS/LAPACK library): about 10 ms

        folder = os.path.join(os.path.dirname(scipy.__file__), "linalg")
        spec = importlib.machinery.PathFinder.find_spec(_EXTENSION, [folder])
        if spec is None or not isinstance(spec.loader, importlib.machinery.ExtensionFileLoader):
            raise ImportError(f"no compiled {_EXTENSION} in {folder}")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except (ImportError, OSError):
        from scipy.linalg import lapack as full  # the public route: slower to import, the same routines

        return full
    # Loading registers the module under its name, but without its package. Unregistered, a later
    # ``import scipy.linalg`` imports it the ordinary way: the interpreter keeps the routines of an
    # extension module loaded once and hands the same objects to the new module.
    if sys.modules.get(_EXTENSION) is module:
        del sys.modules[_EXTENSION]
    return module


lapack = _load_lapack()
"""The LAPACK wrappers (``lapack.dpotrf`` is ``scipy.linalg.lapack.dpotrf``)."""


def null_space(A: np.ndarray, rcond: float) -> np.ndarray:
    """Orthonormal basis of ``{v : A v = 0}``, as :func:`scipy.linalg.null_space` computes it.

    The right singular vectors of the full SVD (LAPACK ``dgesdd``) whose singular
    values are at most ``rcond`` times the largest. ``A`` is a finite float array
    of shape (m, n) with m >= 1 (the caller checks); returns shape (n, n - rank).
    If ``dgesdd`` does not converge, ``dgesvd`` (slower, more robust) is tried,
    and a ValueError is raised when that fails too.
    """
    _, s, Vt, info = lapack.dgesdd(A, compute_uv=1, full_matrices=1)
    if info != 0:
        _, s, Vt, info = lapack.dgesvd(A, compute_uv=1, full_matrices=1)
    if info != 0:
        raise ValueError("the singular value decomposition of `A` did not converge; rescale its rows or columns")
    rank = int(np.sum(s > s.max(initial=0.0) * rcond))
    return Vt[rank:, :].T.copy()
