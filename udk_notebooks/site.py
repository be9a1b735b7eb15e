"""A static course site: every lesson executed and rendered to HTML, with a contents page.

For course web pages without a kernel. Each lesson is executed in a fresh kernel
(nbclient), rendered with nbconvert's HTML exporter, and given a navigation bar
(contents, previous, next) and a link that opens the same lesson live on Binder::

    python -m udk_notebooks.site build/site          # or: make site
    python -m http.server -d build/site              # then open http://127.0.0.1:8000

While the site is built the kernels run with ``UDK_STATIC_EXPORT=1`` and
``%matplotlib widget`` is read as ``%matplotlib inline``: a page has no kernel to
drive sliders, so explorers show their figure and an animation of their motion
that plays in the page (:func:`udk_notebooks.animate`, JavaScript frames), and
every other figure is an embedded PNG.
"""

from __future__ import annotations

import argparse
import html
import os
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

__all__ = ["BINDER_REPO", "STATIC_EXPORT_ENV", "Lesson", "build_site", "execute_lesson", "execute_lessons",
           "lesson_info"]

BINDER_REPO = "udk-notebooks/udk-notebooks"
"""GitHub ``owner/name`` whose Binder launches the live lessons."""

STATIC_EXPORT_ENV = "UDK_STATIC_EXPORT"
"""Environment variable set to ``"1"`` in the kernels of a static export."""

CELL_TIMEOUT = 600  # seconds per cell

_STYLE = """
<style>
.udk-nav { position: sticky; top: 0; z-index: 10; display: flex; flex-wrap: wrap; gap: 1.2em;
  align-items: center; padding: 0.5em 1em; background: #f4f4f4; border-bottom: 1px solid #ccc;
  font: 15px/1.4 system-ui, sans-serif; }
.udk-nav a { color: #0060a8; text-decoration: none; }
.udk-nav a:hover { text-decoration: underline; }
.udk-nav .udk-live { margin-left: auto; font-weight: 600; }
</style>
"""


@dataclass(frozen=True)
class Lesson:
    """One lesson of the site: its notebook, page name, title and one-line summary."""

    notebook: Path
    page: str
    title: str
    summary: str


def lesson_info(notebook: str | Path) -> Lesson:
    """Title (first level-1 heading) and summary (first paragraph after it) of a lesson.

    Parameters
    ----------
    notebook : str or Path
        A lesson notebook (``.ipynb``).
    """
    import nbformat

    notebook = Path(notebook)
    if notebook.suffix != ".ipynb" or not notebook.is_file():
        raise FileNotFoundError(f"`notebook` must be an existing .ipynb file; got {notebook}")
    nb = nbformat.read(notebook, as_version=4)
    title, summary = notebook.stem, ""
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        lines = cell.source.strip().splitlines()
        if lines and lines[0].startswith("# "):
            title = lines[0][2:].strip()
            paragraph = "\n".join(lines[1:]).strip().split("\n\n")[0]
            summary = " ".join(paragraph.split())
            break
    return Lesson(notebook, notebook.stem + ".html", title, summary)


def _markdown_inline(text: str) -> str:
    """Escape text for HTML, keeping `code` and **bold** of a one-line markdown summary."""
    text = html.escape(text)
    text = re.sub(r"`([^`]+)`", r"<code>\1</code>", text)
    return re.sub(r"\*\*([^*]+)\*\*", r"<b>\1</b>", text)


def _binder_url(repo: str, notebook: Path) -> str:
    path = quote(f"lessons/{notebook.name}", safe="")
    return f"https://mybinder.org/v2/gh/{repo}/HEAD?labpath={path}"


def _nav(lessons: list[Lesson], index: int | None, repo: str) -> str:
    links = ['<a href="index.html">Contents</a>']
    if index is not None:
        if index > 0:
            links.append(f'<a href="{lessons[index - 1].page}">&larr; {html.escape(lessons[index - 1].title)}</a>')
        if index + 1 < len(lessons):
            links.append(f'<a href="{lessons[index + 1].page}">{html.escape(lessons[index + 1].title)} &rarr;</a>')
        links.append(f'<a class="udk-live" href="{_binder_url(repo, lessons[index].notebook)}">'
                     "Open live on Binder</a>")
    return f'<nav class="udk-nav">{" ".join(links)}</nav>'


def execute_lesson(notebook: str | Path, *, static: bool = True, timeout: int = CELL_TIMEOUT):
    """One lesson executed top to bottom in a fresh kernel whose working folder is the lesson's.

    Parameters
    ----------
    notebook : str or Path
    static : bool, optional
        Static-export mode (the site's): the kernel runs with ``UDK_STATIC_EXPORT=1`` and
        ``%matplotlib widget`` is read as ``%matplotlib inline``. False runs the lesson as a
        student's kernel would.
    timeout : int, optional
        Seconds allowed per cell.

    Returns
    -------
    nbformat.NotebookNode
        The notebook with its outputs. A failing cell raises nbclient's ``CellExecutionError``
        (with the traceback).
    """
    import nbformat
    from nbclient import NotebookClient

    notebook = Path(notebook)
    nb = nbformat.read(notebook, as_version=4)
    env = dict(os.environ)
    if static:
        for cell in nb.cells:
            if cell.cell_type == "code":
                cell.source = re.sub(r"^%matplotlib\s+(widget|ipympl)\b", "%matplotlib inline", cell.source, flags=re.M)
        env[STATIC_EXPORT_ENV] = "1"
    else:
        env.pop(STATIC_EXPORT_ENV, None)
    # The environment goes to this kernel alone, so lessons can run side by side in threads.
    NotebookClient(nb, timeout=timeout, kernel_name="python3",
                   resources={"metadata": {"path": str(notebook.parent)}}).execute(env=env)
    return nb


def execute_lessons(notebooks, *, static: bool = True, timeout: int = CELL_TIMEOUT, workers: int | None = None,
                    log=None) -> dict:
    """Several lessons executed side by side, each in its own kernel (see :func:`execute_lesson`).

    Each kernel is a process of its own, so ``workers`` lessons run at once
    (default: the number of CPUs, at most 4). Returns a dict from each notebook
    path to its executed notebook, or to the exception its execution raised.
    """
    from concurrent.futures import ThreadPoolExecutor

    notebooks = [Path(nb) for nb in notebooks]
    if workers is None:
        workers = min(4, os.cpu_count() or 1)
    if not (isinstance(workers, int) and workers >= 1):
        raise ValueError(f"`workers` must be a whole number of at least 1; got {workers!r}")

    def run(notebook):
        started = time.monotonic()
        try:
            result = execute_lesson(notebook, static=static, timeout=timeout)
        except Exception as exc:  # reported per lesson; the others still run
            result = exc
        if log is not None:
            log(f"{notebook.name} executed in {time.monotonic() - started:.1f} s"
                + ("" if not isinstance(result, Exception) else f": {type(result).__name__}"))
        return result

    with ThreadPoolExecutor(max_workers=workers) as pool:
        return dict(zip(notebooks, pool.map(run, notebooks)))


def _render(nb, nav: str, title: str) -> str:
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(template_name="lab")
    body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": title}})
    return _insert_after_body(body.replace("</head>", _STYLE + "</head>", 1), nav)


def _link_pages(page: str, names: set[str]) -> str:
    """Point links to other lesson notebooks (``href="02_x.ipynb#part"``) at their pages on the site."""
    def swap(match):
        name, anchor = match.group(2), match.group(3) or ""
        return f'{match.group(1)}{name[:-len(".ipynb")]}.html{anchor}"' if name in names else match.group(0)

    return re.sub(r'(href=")(?:\./)?([^"/#?]+\.ipynb)(#[^"]*)?"', swap, page)


def _insert_after_body(page: str, fragment: str) -> str:
    match = re.search(r"<body[^>]*>", page)
    if match is None:
        raise ValueError("nbconvert produced a page without <body>")
    return page[: match.end()] + fragment + page[match.end():]


def _index_page(lessons: list[Lesson], repo: str) -> str:
    rows = "\n".join(
        f'<li><a href="{lesson.page}">{html.escape(lesson.title)}</a>'
        f'<p>{_markdown_inline(lesson.summary)}</p></li>'
        for lesson in lessons
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>udk-notebooks: lessons</title>
<meta name="viewport" content="width=device-width, initial-scale=1">{_STYLE}
<style>body {{ margin: 0; font: 16px/1.5 system-ui, sans-serif; }} main {{ max-width: 52em; margin: 1em auto;
padding: 0 1em; }} li {{ margin-bottom: 0.8em; }} li p {{ margin: 0.2em 0; color: #333; }}</style></head>
<body>{_nav(lessons, None, repo)}<main>
<h1>Constrained mechanics through the Udwadia-Kalaba equation</h1>
<p>The lessons of udk-notebooks, executed, with their figures and animations. Each page links to the
same lesson live on Binder, where the explorers' sliders and the exercises work.</p>
<ol>
{rows}
</ol></main></body></html>
"""


def build_site(
    out: str | Path,
    lessons_dir: str | Path = "lessons",
    *,
    binder_repo: str = BINDER_REPO,
    timeout: int = CELL_TIMEOUT,
    workers: int | None = None,
    log=print,
) -> list[Path]:
    """Execute every lesson and write the static course site into ``out``.

    Parameters
    ----------
    out : str or Path
        Output folder (created; existing pages are replaced).
    lessons_dir : str or Path, optional
        Folder of the lesson notebooks (every ``*.ipynb`` in it, sorted by name).
    binder_repo : str, optional
        GitHub ``owner/name`` for the "Open live on Binder" links.
    timeout : int, optional
        Seconds allowed per cell.
    workers : int, optional
        Lessons executed at once, each in its own kernel (default: the number of CPUs, at most 4).
    log : callable, optional
        Receives one progress line per lesson (``print`` by default).

    Returns
    -------
    list of Path
        ``index.html`` first, then one page per lesson.
    """
    out, lessons_dir = Path(out), Path(lessons_dir)
    notebooks = sorted(lessons_dir.glob("*.ipynb")) if lessons_dir.is_dir() else []
    if not notebooks:
        raise FileNotFoundError(f"`lessons_dir` holds no lesson notebooks: {lessons_dir.resolve()}")
    if not re.fullmatch(r"[\w.-]+/[\w.-]+", binder_repo):
        raise ValueError(f"`binder_repo` must be 'owner/name'; got {binder_repo!r}")
    if out.exists() and not out.is_dir():
        raise NotADirectoryError(f"`out` must be a folder; {out} is a file")
    out.mkdir(parents=True, exist_ok=True)
    lessons = [lesson_info(path) for path in notebooks]
    written = [out / "index.html"]
    written[0].write_text(_index_page(lessons, binder_repo), encoding="utf-8")
    executed = execute_lessons([lesson.notebook for lesson in lessons], timeout=timeout, workers=workers, log=log)
    failed = {path.name: result for path, result in executed.items() if isinstance(result, Exception)}
    if failed:
        name, error = next(iter(failed.items()))
        raise RuntimeError(f"{len(failed)} lesson(s) failed to execute ({', '.join(failed)}); {name}: {error}") from error
    for index, lesson in enumerate(lessons):
        page = out / lesson.page
        html_page = _render(executed[lesson.notebook], _nav(lessons, index, binder_repo), lesson.title)
        page.write_text(_link_pages(html_page, {path.name for path in notebooks}), encoding="utf-8")
        written.append(page)
        log(f"wrote {page}")
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m udk_notebooks.site", description=__doc__.split("\n\n")[0])
    parser.add_argument("out", help="output folder, e.g. build/site")
    parser.add_argument("--lessons", default="lessons", help="folder of the lesson notebooks (default: lessons)")
    parser.add_argument("--binder-repo", default=BINDER_REPO, help=f"GitHub owner/name (default: {BINDER_REPO})")
    parser.add_argument("--workers", type=int, default=None,
                        help="lessons executed at once, each in its own kernel (default: CPUs, at most 4)")
    args = parser.parse_args(argv)
    build_site(args.out, args.lessons, binder_repo=args.binder_repo, workers=args.workers)
    return 0


if __name__ == "__main__":
    sys.exit(main())
