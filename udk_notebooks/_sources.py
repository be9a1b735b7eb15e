"""The package's own sources as this process imported them: their digest, and whether they are still those.

Kept code (:mod:`udk_notebooks._kept_code`) is filed under a key derived from
the sources. That key must describe the code this process runs, not the files
on disk later: an example edited (an editor's save, a ``git pull``) while a
kernel is open would otherwise have the old model's code filed under the new
sources' key, or, edited and put back, the edited model's code under the
original key, and every later kernel would read it back. So the digest and
each file's status (size, modification time, inode) are taken here, before
any other module of the package runs (``udk_notebooks`` imports this module
first), and :func:`unchanged` is false for good once any file was touched
since: the kept code on disk is then neither read nor written by this process.

The files: ``udk_notebooks/*.py``, ``examples/*.py`` (every model) and
``widgets/*.py`` (which model each explorer keeps under which name).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

__all__ = ["AT_IMPORT", "sources_digest", "unchanged"]

_PACKAGE = Path(__file__).resolve().parent
_PARTS = ("*.py", "examples/*.py", "widgets/*.py")


def _files() -> list[Path]:
    return sorted(path for part in _PARTS for path in _PACKAGE.glob(part))


def _status() -> dict[str, tuple[int, int, int]]:
    """Each source file's size, modification time (ns) and inode: an edit, even one undone, changes one of them."""
    status = {}
    for path in _files():
        info = os.stat(path)
        status[str(path)] = (info.st_size, info.st_mtime_ns, info.st_ino)
    return status


def sources_digest() -> str:
    """SHA-256 of the source files' names and bytes, as they are now."""
    digest = hashlib.sha256()
    for path in _files():
        digest.update(str(path.relative_to(_PACKAGE)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


# A reload of this module keeps what the first import saw (the key of kept code may have been taken from it).
_AT_IMPORT_STATUS = globals().get("_AT_IMPORT_STATUS") or _status()
AT_IMPORT = globals().get("AT_IMPORT") or sources_digest()
"""The digest when the package was imported: the sources of every module this process loads from it."""
_changed = globals().get("_changed", False)


def unchanged() -> bool:
    """True while no source file was touched since the package was imported (once false, false for good)."""
    global _changed
    if not _changed:
        try:
            _changed = _status() != _AT_IMPORT_STATUS
        except OSError:  # a file gone or unreadable: the sources cannot be vouched for
            _changed = True
    return not _changed
