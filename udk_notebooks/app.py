"""Explorers as web apps for lectures: one Voila page per explorer and a gallery page.

A lecture screen wants the sliders and the figure, not the code. This module writes
one small notebook per registered explorer (:data:`udk_notebooks.widgets.EXPLORERS`)
and a gallery notebook that links them; Voila (the Jupyter ecosystem's standard for
this) renders each as a page with the code cells hidden and the widgets live::

    python -m udk_notebooks.app build/app      # write the notebooks
    voila build/app --no-browser               # serve them (or: make app)

The pages are generated from the registry, so an explorer added to
:mod:`udk_notebooks.widgets` appears in the gallery without further work.

Served with ``--serve`` (what ``make app`` runs), Voila gets the settings of
:func:`voila_arguments`: a page's kernel that lost its tab is culled after
``cull_idle_timeout`` seconds, and at most ``max_kernels`` kernels run at once
(:class:`udk_notebooks.app_kernels.CappedKernelManager`).
"""

from __future__ import annotations

import argparse
import inspect
import os
import sys
from pathlib import Path

__all__ = ["GALLERY", "MAX_KERNELS", "CULL_IDLE_TIMEOUT", "app_notebooks", "voila_arguments", "write_apps"]

GALLERY = "00_gallery.ipynb"
"""File name of the gallery page (sorted first in Voila's file listing)."""


MAX_KERNELS = 8
"""Most Voila kernels at once by default (16 explorer kernels took 2.9 GB)."""

CULL_IDLE_TIMEOUT = 600
"""Seconds a kernel without an open page may sit idle before it is shut down."""


# ipywidgets draws a slider's handle (role="slider") without a name and the Play widget's buttons as
# icons only: screen readers announce "slider" and "button". This script, run in each app page, names
# them after the slider's label and the button's icon, also for widgets drawn later; and it makes sure
# the page holds Voila's _xsrf cookie, without which closing the tab cannot end its kernel.
_ARIA_NAMES_JS = """
<script>
(function () {
  const icons = {'fa-play': 'Play', 'fa-pause': 'Pause', 'fa-stop': 'Stop', 'fa-retweet': 'Repeat', 'fa-repeat': 'Repeat'};
  function name(root) {
    root.querySelectorAll('.widget-slider .noUi-handle:not([aria-label])').forEach(handle => {
      const box = handle.closest('.widget-slider');
      const label = box && box.querySelector('.widget-label');
      handle.setAttribute('aria-label', (label && label.textContent.trim()) || 'value');
    });
    root.querySelectorAll('.widget-play button:not([aria-label])').forEach(button => {
      const icon = button.querySelector('i');
      const word = icon && Object.keys(icons).find(c => icon.classList.contains(c));
      button.setAttribute('aria-label', word ? icons[word] : 'Animation control');
    });
  }
  new MutationObserver(() => name(document)).observe(document.documentElement, {childList: true, subtree: true});
  name(document);
  // Closing the tab ends the page's kernel: Voila posts the _xsrf cookie's value to its shutdown URL.
  // The render page sets no such cookie (only the tree page does), so the post was refused (403) and
  // the kernel lived on until the culler. Ask the tree page for the cookie once.
  if (!/\b_xsrf=/.test(document.cookie)) {
    const config = document.getElementById('jupyter-config-data');
    const base = (config && JSON.parse(config.textContent).baseUrl) || '/';
    fetch(base + 'voila/tree', {credentials: 'same-origin'}).catch(() => {});
  }
})();
</script>
"""


def voila_arguments(*, max_kernels: int = MAX_KERNELS, cull_idle_timeout: int = CULL_IDLE_TIMEOUT,
                    cull_interval: int | None = None) -> list[str]:
    """Voila's command-line settings that keep the kernels of closed pages from piling up.

    Parameters
    ----------
    max_kernels : int, optional
        Most kernels alive at once; a page asked for beyond them gets an HTTP 503 page.
    cull_idle_timeout : int, optional
        Seconds of idleness after which a kernel with no page connected is shut down
        (jupyter-server's culler; ``cull_connected`` stays False, so an idle page left
        open on a lecture screen keeps its kernel).
    cull_interval : int, optional
        Seconds between the culler's checks (default: a tenth of the timeout, 1 to 60).

    Returns
    -------
    list of str
        Arguments for ``voila``.
    """
    for name, value in (("max_kernels", max_kernels), ("cull_idle_timeout", cull_idle_timeout)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"`{name}` must be a whole number of at least 1; got {value!r}")
    if cull_interval is None:
        cull_interval = min(60, max(1, cull_idle_timeout // 10))
    if isinstance(cull_interval, bool) or not isinstance(cull_interval, int) or cull_interval < 1:
        raise ValueError(f"`cull_interval` must be a whole number of at least 1; got {cull_interval!r}")
    return [
        "--VoilaConfiguration.multi_kernel_manager_class=udk_notebooks.app_kernels.CappedKernelManager",
        f"--CappedKernelManager.max_kernels={max_kernels}",
        f"--MappingKernelManager.cull_idle_timeout={cull_idle_timeout}",
        f"--MappingKernelManager.cull_interval={cull_interval}",
        "--MappingKernelManager.cull_connected=False",
        "--MappingKernelManager.cull_busy=False",
    ]


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
                # accessible names for the widgets (see _ARIA_NAMES_JS)
                v4.new_code_cell(f"from IPython.display import HTML\nHTML({_ARIA_NAMES_JS!r})"),
            ],
            metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        )
        rows.append(f"| [{_title(name)}]({file}) | {summary} |")
    gallery = (
        "# udk-notebooks explorers\n\n"
        "Constrained mechanics through the Udwadia-Kalaba equation: pick an explorer, move the "
        "sliders, press play.\n\n| explorer | what it shows |\n| --- | --- |\n" + "\n".join(rows)
    )
    # the gallery runs a kernel too: the script gives it the cookie that lets its tab's close end it
    pages[GALLERY] = v4.new_notebook(
        cells=[v4.new_markdown_cell(gallery),
               v4.new_code_cell(f"from IPython.display import HTML\nHTML({_ARIA_NAMES_JS!r})")],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    )
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
    parser.add_argument("--serve", action="store_true", help="then serve them with Voila (what make app does)")
    parser.add_argument("--ip", default="127.0.0.1", help="address Voila listens on (default: 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8866, help="Voila's port (default: 8866)")
    parser.add_argument("--max-kernels", type=int, default=MAX_KERNELS,
                        help=f"most explorer kernels at once (default: {MAX_KERNELS})")
    parser.add_argument("--cull-idle-timeout", type=int, default=CULL_IDLE_TIMEOUT,
                        help=f"seconds before a kernel whose page was closed is shut down (default: {CULL_IDLE_TIMEOUT})")
    args = parser.parse_args(argv)
    written = write_apps(args.out, args.backend)
    if not args.serve:
        for path in written:
            print(path)
        return 0
    try:
        settings = voila_arguments(max_kernels=args.max_kernels, cull_idle_timeout=args.cull_idle_timeout)
    except ValueError as error:
        parser.error(str(error).replace("`max_kernels`", "--max-kernels").replace("`cull_idle_timeout`",
                                                                                  "--cull-idle-timeout"))
    print(f"== the gallery: http://{args.ip}:{args.port}/voila/render/{GALLERY}   (Ctrl-C stops Voila)", flush=True)
    cmd = [sys.executable, "-m", "voila", str(args.out), "--no-browser", f"--Voila.ip={args.ip}",
           f"--port={args.port}", "--Voila.port_retries=0", *settings]
    os.execv(sys.executable, cmd)  # Voila takes this process over: Ctrl-C reaches it directly
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
