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
loaded alone (another scipy layout: moved, renamed, not loadable by itself),
``scipy.linalg`` is imported as usual; a routine the module loaded alone lacks
is taken from ``scipy.linalg.lapack`` when first used.

:func:`null_space` computes what :func:`scipy.linalg.null_space` computes, on
``numpy.linalg.svd`` (the same LAPACK routine, ``dgesdd``): it needs no scipy at all.
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
        module = _extension_alone()
    except Exception:  # noqa: BLE001 (any failure of a private layout: moved, renamed, not loadable alone)
        from scipy.linalg import lapack as full  # the public route: slower to import, the same routines

        return full
    # A routine the extension module lacks (renamed or moved in another scipy) is looked up in the public
    # module on first use (a module-level __getattr__, PEP 562): found names cost nothing extra.
    module.__getattr__ = _public_routine
    return module


def _extension_alone() -> ModuleType:
    """``scipy.linalg._flapack`` loaded without ``scipy.linalg``; raises ImportError where scipy lays it out otherwise."""
    import scipy  # the package's own start-up (its BLAS/LAPACK library): about 10 ms

    folder = os.path.join(os.path.dirname(scipy.__file__), "linalg")
    spec = importlib.machinery.PathFinder.find_spec(_EXTENSION, [folder])
    if spec is None or not isinstance(spec.loader, importlib.machinery.ExtensionFileLoader):
        raise ImportError(f"no compiled {_EXTENSION} in {folder}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    # Loading registers the module under its name, but without its package. Unregistered, a later
    # ``import scipy.linalg`` imports it the ordinary way: the interpreter keeps the routines of an
    # extension module loaded once and hands the same objects to the new module.
    if sys.modules.get(_EXTENSION) is module:
        del sys.modules[_EXTENSION]
    return module


def _public_routine(name: str):
    """``scipy.linalg.lapack.<name>``, for a routine the extension module loaded alone does not hold."""
    if name.startswith("__"):  # the import machinery's probes (``__path__``, ...): not routines
        raise AttributeError(name)
    from scipy.linalg import lapack as full

    return getattr(full, name)


lapack = _load_lapack()
"""The LAPACK wrappers (``lapack.dpotrf`` is ``scipy.linalg.lapack.dpotrf``)."""


def null_space(A: np.ndarray, rcond: float) -> np.ndarray:
    """Orthonormal basis of ``{v : A v = 0}``, as :func:`scipy.linalg.null_space` computes it.

    The right singular vectors of the full SVD (``numpy.linalg.svd``, LAPACK
    ``dgesdd``, as scipy's default driver) whose singular values are at most
    ``rcond`` times the largest. ``A`` is a finite float array of shape (m, n);
    returns shape (n, n - rank). Empty inputs are answered as scipy answers
    them: no rows leave the whole space (the identity), no columns an empty
    basis. numpy's SVD costs no import (``numpy.linalg`` comes with numpy) and
    handles the empty shapes that the bare LAPACK wrapper rejects. If
    ``dgesdd`` does not converge, ``dgesvd`` (slower, more robust) is tried,
    and a ValueError is raised when that fails too.
    """
    try:
        _, s, Vt = np.linalg.svd(A, full_matrices=True)
    except np.linalg.LinAlgError:
        _, s, Vt, info = lapack.dgesvd(A, compute_uv=1, full_matrices=1)
        if info != 0:
            raise ValueError(
                "the singular value decomposition of `A` did not converge; rescale its rows or columns") from None
    rank = int(np.sum(s > s.max(initial=0.0) * rcond))
    return Vt[rank:, :].T.copy()
