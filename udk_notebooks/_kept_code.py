"""Generated numeric code kept as text, so that a later session loads it instead of generating it again.

``sympy.lambdify`` with common subexpressions eliminated is most of the cost
of compiling a model (0.2 s for a 12-link chain, 0.5 s for 28 links, more
than reading its derivation from disk). What it produces is plain Python
source executed in a namespace of numpy or ``math`` functions. A
:class:`CodeStore` keeps, per function, that source and where each global
name it reads comes from (``("numpy", "sqrt")``); :func:`kept` hands back the
function rebuilt from the store, or builds it and records it there.

A record is made only when every global name of the function resolves, by
module and attribute, to the very object the fresh function reads: the
rebuilt function is then the same code bound to the same objects, and gives
the same numbers to the last bit. Rebuilding refuses (and the function is
generated afresh) when the record is malformed, names a module outside
numpy, scipy, ``math`` and the builtins, or a name no longer resolves.
Whoever keeps a store on disk keys it by everything that shapes the code
(the package's sources, sympy, numpy, Python) and checks it whole
(see :mod:`udk_notebooks.widgets.chain`).
"""

from __future__ import annotations

import builtins
import importlib
import inspect
import itertools
import linecache
import sys
from types import ModuleType
from typing import Callable

__all__ = ["CodeStore", "global_names", "kept"]

ALLOWED_MODULES = ("builtins", "math", "cmath", "numpy", "scipy")
"""Modules (and their submodules) whose objects a kept function may read: those lambdify prints for."""

_numbers = itertools.count()


class CodeStore:
    """Records of generated functions by name (plain data: strings, lists, booleans), and whether it changed.

    Parameters
    ----------
    entries : dict, optional
        Records as :meth:`record` makes them, e.g. read back from a file.
    """

    def __init__(self, entries: dict | None = None):
        if entries is not None and not isinstance(entries, dict):
            raise TypeError(f"`entries` must be a dict of records by function name; got {type(entries).__name__}")
        self.entries = dict(entries or {})
        self.changed = False

    def load(self, name: str) -> Callable | None:
        """The function recorded under ``name``, rebuilt; None when there is none or it cannot be rebuilt."""
        entry = self.entries.get(name)
        return None if entry is None else _rebuild(entry, name)

    def record(self, name: str, func: Callable) -> None:
        """Keep ``func``'s source and the origin of its global names under ``name`` (nothing if they do not resolve)."""
        entry = _record(func)
        if entry is None:
            if self.entries.pop(name, None) is not None:
                self.changed = True
            return
        if self.entries.get(name) != entry:
            self.entries[name] = entry
            self.changed = True


def kept(store: CodeStore | None, name: str, build: Callable[[], Callable]) -> Callable:
    """``build()``'s function, rebuilt from ``store`` when it holds a sound record of it, else built and recorded.

    Parameters
    ----------
    store : CodeStore or None
        None: just ``build()``.
    name : str
        The function's name in the store (one per role, e.g. ``"matrices"``).
    build : callable
        Makes the function (a ``sympy.lambdify``).

    Returns
    -------
    callable
    """
    if store is None:
        return build()
    func = store.load(name)
    if func is None:
        func = build()
        store.record(name, func)
    return func


def global_names(code) -> set[str]:
    """The global names that compiled code (and any function nested in it) reads."""
    names = set(code.co_names)
    for const in code.co_consts:
        if hasattr(const, "co_names"):
            names |= global_names(const)
    return names


def _allowed(module: str) -> bool:
    return any(module == root or module.startswith(root + ".") for root in ALLOWED_MODULES)


def _origin(name: str, value) -> list | None:
    """``[module, attribute]`` that gives back ``value`` itself (``attribute`` None for a module), or None."""
    if isinstance(value, ModuleType):
        return [value.__name__, None] if _allowed(value.__name__) else None
    candidates = [getattr(value, "__module__", None), "numpy", "math", "builtins"]
    for module in candidates:
        if isinstance(module, str) and _allowed(module) and module in sys.modules:
            for attribute in (name, getattr(value, "__name__", None)):
                if isinstance(attribute, str) and getattr(sys.modules[module], attribute, None) is value:
                    return [module, attribute]
    return None


def _record(func: Callable) -> dict | None:
    """The record of a generated function: its source, its global names' origins and its flags."""
    try:
        source = inspect.getsource(func)
    except (OSError, TypeError):
        return None
    origins = {}
    for name in sorted(global_names(func.__code__)):
        if name in func.__globals__:
            origin = _origin(name, func.__globals__[name])
            if origin is None:
                return None  # an object we could not find again: not kept, generated every session
            origins[name] = origin
        elif not hasattr(builtins, name):
            return None
    return {"source": source, "function": func.__name__, "globals": origins,
            "on_floats": bool(getattr(func, "on_floats", False))}


def _resolve(origin) -> object:
    """The object an origin names; raises when the record is malformed or names a foreign module."""
    module, attribute = origin
    if not (isinstance(module, str) and _allowed(module) and (attribute is None or isinstance(attribute, str))):
        raise ValueError(f"not a kept origin: {origin!r}")
    found = importlib.import_module(module)
    return found if attribute is None else getattr(found, attribute)


def _rebuild(entry, name: str) -> Callable | None:
    """The function of a record, executed afresh; None when the record is not sound."""
    try:
        source, function, origins = entry["source"], entry["function"], entry["globals"]
        if not (isinstance(source, str) and isinstance(function, str) and isinstance(origins, dict)):
            return None
        namespace = {name_: _resolve(origin) for name_, origin in origins.items()}
        namespace["__builtins__"] = builtins
        # A file name of its own in linecache: inspect.getsource finds the text again (udk_notebooks._fused
        # joins a kept function's source into a generated solver, as it does a fresh one's).
        filename = f"<kept-{name}-{next(_numbers)}>"
        exec(compile(source, filename, "exec"), namespace)  # noqa: S102 -- the record's own code, see the module docstring
        func = namespace[function]
        if not callable(func) or not global_names(func.__code__) <= set(namespace) | set(dir(builtins)):
            return None
    except Exception:  # malformed, no longer valid Python, a name gone from numpy: generate afresh
        return None
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    if entry.get("on_floats") is True:
        func.on_floats = True
    return func
