"""Explorers as web apps for lectures: one Voila page per explorer and a gallery page.

A lecture screen wants the sliders and the figure, not the code. This module writes
one small notebook per registered explorer (:data:`udk_notebooks.widgets.EXPLORERS`)
and a gallery notebook that links them; Voila (the Jupyter ecosystem's standard for
this) renders each as a page with the code cells hidden and the widgets live::

    python -m udk_notebooks.app build/app      # write the notebooks
    voila build/app --no-browser               # serve them (or: make app)

The pages are generated from the registry, so an explorer added to
:mod:`udk_notebooks.widgets` appears in the gallery without further work.
"""

from __future__ import annotations

import argparse
import inspect
import sys
from pathlib import Path

__all__ = ["GALLERY", "app_notebooks", "write_apps"]

GALLERY = "00_gallery.ipynb"
"""File name of the gallery page (sorted first in Voila's file listing)."""


def _summary(cls: type) -> str:
    """The first paragraph of a class docstring, on one line."""
    doc = inspect.getdoc(cls) or ""
    return " ".join(doc.split("\n\n", 1)[0].split())


def _title(name: str) -> str:
    return name.replace("_", " ").capitalize()


def app_notebooks(backend: str = "widget") -> dict[str, "object"]:
    """One notebook per registered explorer, and the gallery, as nbformat objects.

    Parameters
    ----------
    backend : {"widget", "inline"}, optional
        Matplotlib backend of the pages: ``"widget"`` (ipympl, a live canvas) or
        ``"inline"`` (the explorer sends PNG images).

    Returns
    -------
    dict of str to nbformat.NotebookNode
        File name to notebook; the gallery is :data:`GALLERY`.
    """
    import nbformat.v4 as v4

    from .widgets import EXPLORERS

    if backend not in ("widget", "inline"):
        raise ValueError(f"`backend` must be 'widget' or 'inline'; got {backend!r}")
    pages = {}
    rows = []
    for name, cls in sorted(EXPLORERS.items()):
        file = f"{name}.ipynb"
        summary = _summary(cls)
        pages[file] = v4.new_notebook(
            cells=[
                v4.new_markdown_cell(f"## {_title(name)}\n\n{summary}"),
                v4.new_code_cell(
                    f"%matplotlib {backend}\n"
                    f"from udk_notebooks.widgets import {cls.__name__}\n"
                    f"{cls.__name__}()"
                ),
            ],
            metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        )
        rows.append(f"| [{_title(name)}]({file}) | {summary} |")
    gallery = (
        "# udk-notebooks explorers\n\n"
        "Constrained mechanics through the Udwadia-Kalaba equation: pick an explorer, move the "
        "sliders, press play.\n\n| explorer | what it shows |\n| --- | --- |\n" + "\n".join(rows)
    )
    pages[GALLERY] = v4.new_notebook(cells=[v4.new_markdown_cell(gallery)])
    return pages


def write_apps(out: str | Path, backend: str = "widget") -> list[Path]:
    """Write the explorer pages and the gallery into the folder ``out``.

    Returns
    -------
    list of Path
        The files written, the gallery first.
    """
    import nbformat

    out = Path(out)
    if out.exists() and not out.is_dir():
        raise NotADirectoryError(f"`out` must be a folder; {out} is a file")
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for file, notebook in sorted(app_notebooks(backend).items(), key=lambda item: item[0] != GALLERY):
        path = out / file
        nbformat.write(notebook, path)
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m udk_notebooks.app", description=__doc__.split("\n\n")[0])
    parser.add_argument("out", help="folder to write the notebooks into (served with `voila OUT`)")
    parser.add_argument("--backend", choices=("widget", "inline"), default="widget",
                        help="ipympl canvas (widget, default) or PNG images (inline)")
    args = parser.parse_args(argv)
    for path in write_apps(args.out, args.backend):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
