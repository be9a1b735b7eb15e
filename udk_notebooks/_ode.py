"""scipy's ``ode`` (Hairer's Fortran DOP853) without the cost of importing ``scipy.integrate`` (cold start, issue 23).

The ``"dop853"`` route of :func:`~udk_notebooks.simulation.simulate` and the
singular mass explorer's Lagrange reference drive Hairer's Fortran DOP853
through :class:`scipy.integrate.ode`. That class lives in the module
``scipy.integrate._ode``, which needs nothing but numpy and three compiled
extension modules of its own folder (``_vode``, ``_dop``, ``_odepack``). Importing
``scipy.integrate`` itself costs a new kernel about 0.3 s, nearly all of it in
``scipy.optimize``, ``scipy.special``, ``scipy.sparse`` and scipy's array-API
layer, none of which ``ode`` touches. So this module runs ``scipy.integrate._ode``
on its own: for the few milliseconds of that import a bare stand-in for the
``scipy.integrate`` package (no ``__init__`` run, its folder as the search path)
is registered under the package's import lock (a thread importing
``scipy.integrate`` meanwhile waits, then imports the real package), then taken
away with the modules loaded under it, so that a later ``import scipy.integrate``
imports everything the ordinary way (it runs ``_ode.py`` again, and the
interpreter hands it the extension modules it loaded once). The class loaded alone is scipy's own code, unchanged;
``tests/test_ode_alone.py`` checks that both routes give the same numbers, bit
for bit. Where the module cannot be loaded alone (another scipy layout), or
``scipy.integrate`` is imported already, :class:`ode` is ``scipy.integrate.ode``.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.machinery
import os
import sys
import types

__all__ = ["ode"]

_PACKAGE = "scipy.integrate"
_MODULE = f"{_PACKAGE}._ode"


def _load_ode() -> type:
    """scipy's ``ode`` class: from its module loaded alone, or from ``scipy.integrate`` when that fails."""
    if _PACKAGE in sys.modules:
        from scipy.integrate import ode as public  # loaded already: nothing to save

        return public
    try:
        return _ode_alone()
    except Exception:  # noqa: BLE001 (any failure of a private layout: moved, renamed, other imports)
        from scipy.integrate import ode as public  # the public route: slower to import, the same class

        return public


def _ode_alone() -> type:
    """``scipy.integrate._ode.ode`` imported under a stand-in package; raises where scipy lays it out otherwise."""
    import scipy  # the package's own start-up (its BLAS/LAPACK library): about 10 ms

    folder = os.path.join(os.path.dirname(scipy.__file__), "integrate")
    if importlib.machinery.PathFinder.find_spec(_MODULE, [folder]) is None:
        raise ImportError(f"no {_MODULE} in {folder}")
    stand_in = types.ModuleType(_PACKAGE, "stand-in while udk_notebooks._ode imports scipy.integrate._ode alone")
    stand_in.__path__ = [folder]
    stand_in.__package__ = _PACKAGE
    # Marked as being initialized, under the package's import lock: another thread importing scipy.integrate
    # meanwhile waits for the lock, then finds no module and imports the real package (never the stand-in).
    stand_in.__spec__ = importlib.machinery.ModuleSpec(_PACKAGE, None, is_package=True)
    stand_in.__spec__._initializing = True
    before = set(sys.modules)
    with _import_lock(_PACKAGE):
        sys.modules[_PACKAGE] = stand_in
        try:
            module = importlib.import_module(_MODULE)
        finally:
            # Everything registered under the stand-in goes with it: a later ``import scipy.integrate``
            # must find neither, and imports the package (and these modules) the ordinary way.
            for name in set(sys.modules) - before:
                if name == _PACKAGE or name.startswith(f"{_PACKAGE}."):
                    del sys.modules[name]
    return module.ode


def _import_lock(name: str):
    """The import system's own lock of module ``name`` (re-entrant); no lock where the interpreter has none."""
    from importlib import _bootstrap  # the lock every ``import`` of that name takes (CPython's import system)

    manager = getattr(_bootstrap, "_ModuleLockManager", None)
    return manager(name) if manager is not None else contextlib.nullcontext()


ode = _load_ode()
"""scipy's :class:`scipy.integrate.ode` (the class itself, or the same code loaded alone)."""
