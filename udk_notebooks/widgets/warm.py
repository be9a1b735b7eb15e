"""Open every explorer once, so that the code its first frame needs is kept on disk for every later kernel.

An explorer's compiled models are read from kept code (:func:`udk_notebooks._kept_code.compile_kept`):
in a kernel that finds them on disk, the first frame needs neither sympy's import nor a derivation nor
code generation (issue 23's cold start). The first session on a new machine would pay for all three;
``make lab`` and ``binder/postBuild`` run this module first, so that even it finds them::

    python -m udk_notebooks.widgets.warm          # each explorer at its defaults; skipped when done already
    python -m udk_notebooks.widgets.warm --force  # again, even if done for this code

Done once per :func:`~udk_notebooks._kept_code.code_key` (the package's sources, sympy, numpy, Python):
a file ``warmed-KEY`` in the cache folder records it, and an edit of the package warms again.
"""

from __future__ import annotations

import argparse
import re
import time
from pathlib import Path

from .._kept_code import cache_directory, code_key, write_changed

__all__ = ["warm_cache"]


def _stamp(folder: Path) -> Path:
    return folder / f"warmed-{code_key()}"


def warm_cache(names=None, force: bool = False) -> list[str]:
    """Construct each explorer (its first frame) and close it, keeping the code it generated; return their names.

    Parameters
    ----------
    names : iterable of str, optional
        Keys of :data:`udk_notebooks.widgets.EXPLORERS` (default: all of them).
    force : bool
        Warm even when this code was warmed already.

    Returns
    -------
    list of str
        The explorers opened; empty when the disk cache is off (``UDK_NOTEBOOKS_CACHE=``) or this code was
        warmed already (and ``force`` is false).
    """
    from . import EXPLORERS

    folder = cache_directory()
    if folder is None:
        return []
    chosen = list(EXPLORERS) if names is None else list(names)
    unknown = [name for name in chosen if name not in EXPLORERS]
    if unknown:
        raise ValueError(f"unknown explorer(s) {', '.join(map(repr, unknown))}; choose from {', '.join(EXPLORERS)}")
    everything = names is None
    if everything and not force and _stamp(folder).exists():
        return []
    import matplotlib

    matplotlib.use("Agg")  # no display needed: the first frame is drawn to a PNG, as in a test
    opened = []
    for name in chosen:
        explorer = EXPLORERS[name]()
        explorer.close()
        write_changed()
        opened.append(name)
    if everything and cache_directory() is not None:  # None now: the sources changed meanwhile, nothing kept
        try:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            _stamp(folder).touch()
            for old in folder.glob("warmed-*"):  # stamps of other keys; never a file we did not name
                if re.fullmatch(r"warmed-[0-9a-f]{20}", old.name) and old.name != _stamp(folder).name:
                    old.unlink(missing_ok=True)
        except OSError:  # a folder that cannot be written: nothing was kept either
            return opened
    return opened


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m udk_notebooks.widgets.warm", description=__doc__.split("\n")[0])
    parser.add_argument("--force", action="store_true", help="warm again even if this code was warmed already")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    opened = warm_cache(force=args.force)
    if opened:
        print(f"udk-notebooks: opened {len(opened)} explorers once, so that each kernel starts them without sympy "
              f"({time.perf_counter() - start:.0f} s; kept in {cache_directory()})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
