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
A store also keeps *facts*: what a compiled model knows of its model
besides the code (sizes, names, which contacts are unilateral), as plain data.

On disk (:func:`read_store`, :func:`write_store`, :func:`compile_kept`), a
store is one JSON file per model in ``$UDK_NOTEBOOKS_CACHE`` or the user's
cache folder, named by the model and by :func:`code_key`: a digest of
everything that shapes the code (the package's sources, sympy, numpy,
Python). A file of another key is never read; one whose content does not
match its digest, its key or its name is ignored and written again. A model
read back from its file is built without sympy
(:meth:`~udk_notebooks.compiled.CompiledModel.from_store`): an explorer's
first frame in a new kernel skips sympy's import, the derivation and the
code generation (issue 23).
"""

from __future__ import annotations

import builtins
import hashlib
import importlib
import inspect
import itertools
import json
import linecache
import os
import platform
import re
import sys
import tempfile
import threading
import weakref
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Callable

from . import _sources

if TYPE_CHECKING:
    from .compiled import CompiledModel
    from .model import Model

__all__ = ["CACHE_ENV", "CodeStore", "cache_directory", "code_key", "compile_kept", "global_names", "kept",
           "read_store", "source_key", "trusted_file", "write_changed", "write_store"]

CACHE_ENV = "UDK_NOTEBOOKS_CACHE"
"""Environment variable naming the cache directory; set to an empty string to keep nothing on disk."""

STORE_FORMAT = 3
"""Version of the layout of a kept store file; a file of another layout is generated again (3: the digest
covers the format, key and name too)."""

ALLOWED_MODULES = ("builtins", "math", "cmath", "numpy", "scipy")
"""Modules (and their submodules) whose objects a kept function may read: those lambdify prints for."""

_numbers = itertools.count()
_ABSENT = object()
_READ = weakref.WeakSet()  # the stores read_store handed out in this process (write_changed writes them)
_READ_LOCK = threading.Lock()  # a worker thread may read a store while the kernel writes the others


class CodeStore:
    """Records of generated functions by name, facts by name (plain data both), and whether it changed.

    Parameters
    ----------
    entries : dict, optional
        Records as :meth:`record` makes them, e.g. read back from a file.
    facts : dict, optional
        Plain values as :meth:`keep_fact` keeps them (what a compiled model
        knows of its model besides the code: sizes, names, contacts).
    name : str, optional
        The name it is kept under on disk (:func:`read_store` sets it).
    """

    def __init__(self, entries: dict | None = None, facts: dict | None = None, name: str | None = None):
        if entries is not None and not isinstance(entries, dict):
            raise TypeError(f"`entries` must be a dict of records by function name; got {type(entries).__name__}")
        if facts is not None and not isinstance(facts, dict):
            raise TypeError(f"`facts` must be a dict of plain values by name; got {type(facts).__name__}")
        self.entries = dict(entries or {})
        self.facts = dict(facts or {})
        self.name = name  # the file it is kept in on disk (read_store), None for one in memory only
        self.changed = False

    def keep_fact(self, name: str, value) -> None:
        """Keep ``value`` (plain data: numbers, strings, booleans, None, lists of them) under ``name``."""
        if self.facts.get(name, _ABSENT) != value:
            self.facts[name] = value
            self.changed = True

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


# -- kept on disk ---------------------------------------------------------------------------------

def cache_directory() -> Path | None:
    """Where kept code is stored: ``$UDK_NOTEBOOKS_CACHE``, else the user's cache folder; None when off.

    Off (None) when the variable is set empty; when the package's sources
    changed since this process imported them (:func:`udk_notebooks._sources.unchanged`:
    its modules may be older than the files, and code filed now under the
    files' key would be stale); and when the folder could be written by
    someone else (:func:`_trusted`), since a kept file is code the kernel runs.
    """
    chosen = os.environ.get(CACHE_ENV)
    if chosen is not None:
        if not chosen.strip():
            return None
        folder = Path(chosen)
    else:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        folder = Path(base) / "udk-notebooks"
    if not _sources.unchanged() or not _trusted(folder):
        return None
    return folder


_WARNED: set[str] = set()


def _trusted(folder: Path) -> bool:
    """True unless ``folder`` exists and is owned by another user (root aside) or writable by group or others.

    Kept files are Python source that a kernel executes: only their owner (or
    root, for a cache an administrator warmed for a course) may be able to
    change them. A folder that is refused is said once per process, with the fix.
    """
    try:
        status = folder.stat()
    except FileNotFoundError:
        return True  # created by write_store, for this user only
    except OSError:
        return False
    if _safe(status):
        return True
    if str(folder) not in _WARNED:
        _WARNED.add(str(folder))
        import warnings

        reason = "belongs to another user" if _foreign(status) else "can be written by group or others"
        warnings.warn(f"udk-notebooks does not use the kept code in {folder}: the folder {reason}, and kept code is "
                      f"run by the kernel. Use a folder of your own (`chmod go-w {folder}`), or choose another with "
                      f"${CACHE_ENV}; explorers start without it, compiling their models afresh.", stacklevel=3)
    return False


def _foreign(status: os.stat_result) -> bool:
    """True when the file or folder belongs to neither this user nor root (POSIX; never on other systems)."""
    return hasattr(os, "getuid") and status.st_uid not in (0, os.getuid())


def _safe(status: os.stat_result) -> bool:
    """The one rule for folders and files: this user's (or root's), and writable by no one else."""
    return not _foreign(status) and not status.st_mode & 0o022


def trusted_file(handle) -> bool:
    """True when the open file ``handle`` belongs to this user (or root) and no one else can write it.

    Checked on the open file itself (``fstat``), after :func:`cache_directory`
    checked its folder: what is read is what was checked.
    """
    return _safe(os.fstat(handle.fileno()))


def _version(distribution: str) -> str:
    """The installed version of ``distribution``, read without importing it (sympy's import is what is saved)."""
    module = sys.modules.get(distribution)
    if module is not None and isinstance(getattr(module, "__version__", None), str):
        return module.__version__
    from importlib import metadata

    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "absent"


@lru_cache(maxsize=1)
def source_key() -> str:
    """A digest of everything a derived model depends on: the package's engine and example sources, sympy, Python.

    Any edit to ``udk_notebooks/*.py`` or ``udk_notebooks/examples/*.py`` (the
    symbolic layer and the examples), or another sympy or Python, gives
    another key, so kept work is never read by code that would do it differently.
    The sources are those this process imported (:data:`udk_notebooks._sources.AT_IMPORT`),
    not the files as they are now: after an edit the disk cache is off (:func:`cache_directory`).
    """
    text = f"{_version('sympy')} {platform.python_version()} {_sources.AT_IMPORT}"
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def code_key() -> str:
    """The key of kept code: :func:`source_key` (package, sympy, Python) and numpy's version."""
    import numpy as np

    return hashlib.sha256(f"{source_key()} numpy {np.__version__}".encode()).hexdigest()[:20]


def _check_name(name) -> str:
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}", name):
        raise ValueError(f"`name` must be a file-name-safe model name (letters, digits, '_', '.', '-'); got {name!r}")
    return name


def store_path(folder: Path, name: str) -> Path:
    """The file of the store ``name`` under the current :func:`code_key`."""
    return folder / f"{_check_name(name)}-{code_key()}.code.json"


def _digest(payload: dict) -> str:
    """SHA-256 of the whole record but its digest: format, key, name, functions and facts."""
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


_KEPT_FILE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}-[0-9a-f]{20}\.code\.json")
"""The names :func:`store_path` gives: only such files are ever removed from the cache folder."""


def read_store(name: str) -> CodeStore | None:
    """The store kept under ``name`` (an empty one when there is none or it is not sound); None: no disk cache.

    A file is read only when it is this user's own and no one else can write
    it (:func:`trusted_file`), and its name, its recorded key and name, its
    layout and the digest of its content all agree; otherwise the returned
    store is empty and marked changed, so that :func:`write_store` replaces it.
    """
    folder = cache_directory()
    if folder is None:
        _check_name(name)
        return None
    path = store_path(folder, name)
    try:
        with open(path, encoding="utf-8") as handle:
            if not trusted_file(handle):
                raise PermissionError(f"{path} can be written by someone else")  # kept code is code: not read
            kept_file = json.load(handle)
        payload = {part: kept_file[part] for part in ("format", "key", "name", "functions", "facts")}
        sound = (kept_file["format"] == STORE_FORMAT and kept_file["key"] == code_key() and kept_file["name"] == name
                 and isinstance(payload["functions"], dict) and isinstance(payload["facts"], dict)
                 and kept_file["digest"] == _digest(payload))
    except FileNotFoundError:
        store = CodeStore(name=name)
        with _READ_LOCK:
            _READ.add(store)
        return store
    except Exception:  # truncated, not JSON, not our layout: generate afresh, and write it again
        sound = False
    if not sound:
        store = CodeStore(name=name)
        store.changed = True
    else:
        store = CodeStore(payload["functions"], payload["facts"], name=name)
    with _READ_LOCK:
        _READ.add(store)
    return store


def write_store(store: CodeStore) -> None:
    """Write ``store`` to its file when it changed since it was read or last written.

    Written whole to a temporary file, then renamed into place (a reader sees
    the old file or the new one, never a part); stores of other keys are
    dropped. A folder that cannot be written is skipped: the session's
    compiled models still serve.
    """
    if not isinstance(store, CodeStore):
        raise TypeError(f"`store` must be a CodeStore; got {type(store).__name__}")
    folder = cache_directory()
    if store.name is None or not store.changed or folder is None:
        return
    key = code_key()
    # Marked written before the copies: a function another thread records meanwhile marks it changed again
    # (and is written next time) instead of being lost; the copy of a dict is atomic in CPython.
    store.changed = False
    payload = {"format": STORE_FORMAT, "key": key, "name": store.name, "functions": dict(store.entries),
               "facts": dict(store.facts)}
    partial = None
    try:
        kept_file = {**payload, "digest": _digest(payload)}
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=folder, prefix=".store-", suffix=".json", delete=False,
                                         encoding="utf-8") as handle:
            partial = handle.name
            json.dump(kept_file, handle)
        os.replace(partial, store_path(folder, store.name))
        partial = None
        for old in folder.glob("*.code.json"):  # kept code of other keys; never a file we did not name
            if _KEPT_FILE.fullmatch(old.name) and not old.name.endswith(f"-{key}.code.json"):
                old.unlink(missing_ok=True)
    except (OSError, TypeError, ValueError):  # read-only or full disk, or a value JSON cannot hold: not tried
        pass  # again for this store until it changes again (an update must not retry on every slider move)
    finally:
        if partial is not None:
            Path(partial).unlink(missing_ok=True)


def write_changed() -> None:
    """:func:`write_store` for every store read in this process that changed (new code built on demand)."""
    with _READ_LOCK:
        stores = list(_READ)
    for store in stores:
        if store.changed:
            write_store(store)


def compile_kept(name: str, derive: Callable[[], Model]) -> CompiledModel:
    """The compiled model of ``derive()``, read from the store ``name`` when it is kept, else compiled and kept.

    Read back, the model is built from its kept code and facts without
    sympy (:meth:`~udk_notebooks.compiled.CompiledModel.from_store`), and
    ``derive`` is called only if something not kept is needed later. The
    caller vouches that ``name`` always stands for the same ``derive()``
    (the store's key covers the package's sources, so an edited example is
    compiled afresh). Functions built on demand later are written by
    :func:`write_store` (``compiled.store``).

    Parameters
    ----------
    name : str
        The model's store name, e.g. ``"incline_friction.model"``.
    derive : callable
        ``derive() -> Model``.

    Returns
    -------
    CompiledModel
    """
    from .compiled import CompiledModel

    if not callable(derive):
        raise TypeError(f"`derive` must be a function returning the Model; got {type(derive).__name__}")
    store = read_store(name)
    if store is None:  # no disk cache
        return CompiledModel.from_model(derive())
    compiled = CompiledModel.from_store(store, derive) if store.facts else None
    if compiled is None:
        compiled = CompiledModel.from_model(derive(), sources=store)
    write_store(store)
    return compiled
