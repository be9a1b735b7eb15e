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
every other figure is an embedded PNG with alternative text read from its titles and
axis labels (:mod:`udk_notebooks._alt_text`).

The site works offline: MathJax 2.7 is copied in from the ``jupyter-server-mathjax``
package (a PyPI package, so ``pip install 'udk-notebooks[site]'`` brings it; no npm
needed), require.js and mermaid are left out (nothing on the pages uses them), and the
animations' Font Awesome icons become text symbols. An exercise shows as its question:
the checker's "Not yet" verdict for the unanswered placeholder is replaced by a note
that points to the live lesson.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import html
import importlib.util
import json
import os
import re
import shutil
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

__all__ = ["BINDER_REPO", "MATHJAX_URL", "SITE_STAMP", "STATIC_EXPORT_ENV", "STATIC_EXPORT_METADATA", "Lesson",
           "build_site", "copy_mathjax", "execute_lesson", "execute_lessons", "lesson_info", "stale_site"]

BINDER_REPO = "udk-notebooks/udk-notebooks"
"""GitHub ``owner/name`` whose Binder launches the live lessons."""

SITE_STAMP = "build-stamp.json"
"""File of a built site that names every lesson it was built from with a hash of the notebook (:func:`stale_site`)."""

STATIC_EXPORT_ENV = "UDK_STATIC_EXPORT"
"""Environment variable set to ``"1"`` in the kernels of a static export."""

CELL_TIMEOUT = 600  # seconds per cell

MATHJAX_DIR = "mathjax"
"""Folder of the site that holds MathJax (copied from the ``jupyter-server-mathjax`` package)."""

MATHJAX_URL = f"{MATHJAX_DIR}/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full,Safe"
"""MathJax as the pages load it: relative to the page, the configuration the package ships."""

# jupyter-server-mathjax ships the STIX-Web fonts only (not MathJax's default TeX web fonts): without
# this, primes and braces end in "[Math Processing Error]". Read by MathJax.js when it loads.
# The fast preview (a rough rendering shown before the final one) is off: every formula is then
# typeset once, not twice, and a page's formulas are all final 30-50 % sooner in headless Chromium
# (lessons 01 and 04: 6.6 -> 4.8 s and 13.1 -> 6.5 s).
_MATHJAX_FONTS = ('<script>window.MathJax = {"fast-preview": {disabled: true}, '
                  '"HTML-CSS": {availableFonts: [], preferredFont: null, '
                  'webFont: "STIX-Web", imageFont: null}};</script>')

STATIC_EXPORT_METADATA = "udk_static_export"
"""Notebook metadata key :func:`execute_lesson` sets: True for a static-export execution, False otherwise."""

_NOT_YET = "Not yet:"  # how udk_notebooks.exercises' Feedback starts a verdict that is not "Correct."

# The kernels of a static export run this first (see _static_kernel).
_KERNEL_START = "from udk_notebooks.site import _static_kernel; _static_kernel()"

# nbconvert's "lab" page, with the figures' alt text and without the scripts that come from CDNs
# and that nothing on these pages uses (require.js, mermaid).
_TEMPLATE = r"""
{%- extends 'index.html.j2' -%}
{%- block html_head_js_requirejs -%}{%- endblock html_head_js_requirejs -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
{% block data_png scoped %}
<div class="jp-RenderedImage jp-OutputArea-output {{ extra_class }}">
<img src="data:image/png;base64,{{ output.data['image/png'] | escape_html }}"
 alt="{{ ((output | get_metadata('alt', 'image/png')) or 'Figure (no description was recorded)') | escape_html }}">
</div>
{% endblock data_png %}
"""

# matplotlib's to_jshtml buttons draw Font Awesome 4 icons from a CDN; offline they are blank.
# Text symbols need no font download (each button keeps its aria-label and title).
_ICONS = {
    "fa-minus": "\u2212",
    "fa-fast-backward": "|\u25c0\u25c0",
    "fa-step-backward": "|\u25c0",
    "fa-play fa-flip-horizontal": "\u25c0",
    "fa-pause": "\u2016",
    "fa-play": "\u25b6",
    "fa-step-forward": "\u25b6|",
    "fa-fast-forward": "\u25b6\u25b6|",
    "fa-plus": "+",
}

_STYLE = """
<style>
.udk-nav { position: sticky; top: 0; z-index: 10; display: flex; flex-wrap: wrap; gap: 1.2em;
  align-items: center; padding: 0.5em 1em; background: #f4f4f4; border-bottom: 1px solid #ccc;
  font: 15px/1.4 system-ui, sans-serif; }
.udk-nav a { color: #0060a8; text-decoration: none; }
.udk-nav a:hover { text-decoration: underline; }
.udk-nav .udk-live { margin-left: auto; font-weight: 600; }
.anim-buttons button { min-width: 2.6em; font: 15px/1.2 system-ui, sans-serif; }
.udk-exercise { border-left: 6px solid #0060a8; padding: 0.4em 0.8em; margin: 0.3em 0; background: #eef4fa; }
/* WCAG AA contrast (4.5:1) for what JupyterLab's light theme draws paler: prompts and some code colours;
   links inside prose are underlined, not told apart by colour alone */
.jp-InputPrompt, .jp-OutputPrompt { color: #595959 !important; opacity: 1 !important; }
:root { --jp-mirror-editor-number-color: #006400; --jp-mirror-editor-keyword-color: #006b00;
  --jp-mirror-editor-builtin-color: #006b00; --jp-mirror-editor-comment-color: #35605f;
  --jp-mirror-editor-operator-color: #7a1fbf; --jp-mirror-editor-meta-color: #7a1fbf;
  --jp-mirror-editor-attribute-color: #6a5f00; --jp-mirror-editor-string-2-color: #8a4400;
  --jp-mirror-editor-qualifier-color: #3d6e00; --jp-mirror-editor-bracket-color: #606050;
  --jp-mirror-editor-error-color: #c00000; --jp-mirror-editor-tag-color: #006b00; }
.jp-RenderedHTMLCommon a, .udk-exercise a { text-decoration: underline !important; }
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


def _static_kernel() -> None:
    """Set up a static export's kernel: inline figures with alt text, ``%matplotlib widget`` read as inline.

    Runs in the kernel at start (``IPKernelApp.exec_lines``). The magic is wrapped
    in the kernel as well as rewritten in the cells' source, so a lesson that
    switches backends from code (``run_line_magic("matplotlib", "widget")``) gets
    inline PNG figures too, not widget canvases a page without a kernel cannot draw.
    """
    from IPython import get_ipython

    from ._alt_text import install_figure_alt_text

    install_figure_alt_text()
    shell = get_ipython()
    if shell is None:
        return
    original = shell.run_line_magic

    def run_line_magic(magic_name, line, _stack_depth=1):
        if magic_name == "matplotlib":
            line = re.sub(r"^\s*(widget|ipympl)\b", "inline", line)
        return original(magic_name, line, _stack_depth + 1)  # one frame more: this wrapper's

    shell.run_line_magic = run_line_magic


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
        The notebook with its outputs, its metadata ``udk_static_export`` set to ``static``.
        A failing cell raises nbclient's ``CellExecutionError`` (with the traceback).
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
        extra = [f"--IPKernelApp.exec_lines={_KERNEL_START}"]
    else:
        env.pop(STATIC_EXPORT_ENV, None)
        extra = []
    # The environment goes to this kernel alone, so lessons can run side by side in threads.
    NotebookClient(nb, timeout=timeout, kernel_name="python3", extra_arguments=extra,
                   resources={"metadata": {"path": str(notebook.parent)}}).execute(env=env)
    # says how the outputs were made, so that build_site can refuse a student-mode execution
    nb.metadata[STATIC_EXPORT_METADATA] = static
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
    import jinja2
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(template_name="lab", mathjax_url=MATHJAX_URL,
                            extra_loaders=[jinja2.DictLoader({"udk-site.html.j2": _TEMPLATE})],
                            template_file="udk-site.html.j2")
    body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": title}})
    body = re.sub(r"<head[^>]*>", lambda head: head.group(0) + _MATHJAX_FONTS, body, count=1)
    return _offline_animations(_insert_after_body(body.replace("</head>", _STYLE + "</head>", 1), nav))


def _offline_animations(page: str) -> str:
    """matplotlib animations without the Font Awesome CDN: text symbols, a frame alt text, a labelled slider."""
    # nbconvert has re-serialized the page (BeautifulSoup): attributes may come in any order
    page = re.sub(r'<link[^>]*font-awesome[^>]*>', "", page)

    def icon(match):
        return f'<span aria-hidden="true">{_ICONS.get(match.group(1).strip(), "?")}</span>'

    page = re.sub(r'<i class="fa ((?:fa-[\w-]+ ?)+)"></i>', icon, page)
    page = re.sub(r'<img[^>]*id="(_anim_img\w+)"[^>]*>',
                  r'<img id="\1" alt="Animation of the motion in the figure above; the buttons below play it"/>', page)
    return re.sub(r'(<input[^>]*id="_anim_slider\w+")', r'\1 aria-label="Animation frame"', page)


def _exercises_as_questions(nb, live_url: str):
    """The site's copy of an executed lesson with each unanswered exercise shown as its question.

    A check run on the ``None`` placeholder answers "Not yet: replace the None
    placeholder(s) ...": on a page without a kernel that verdict can never change,
    so it gives way to a note that sends the reader to the live lesson. Widget
    state is dropped too (the page has no kernel to drive widgets).
    """
    note = ('<div class="udk-exercise" role="note"><strong>Exercise.</strong> Write your answer in the cell above '
            f'in the <a href="{html.escape(live_url)}">live lesson on Binder</a> and run it to have it checked.</div>')
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        outputs = []
        for output in cell.get("outputs", []):
            text = output.get("data", {}).get("text/plain", "") if "data" in output else ""
            text = "".join(text) if isinstance(text, list) else text
            if text.startswith(_NOT_YET):
                import nbformat.v4 as v4

                output = v4.new_output("display_data", data={
                    "text/html": note, "text/plain": "Exercise: answer it in the live lesson."})
            outputs.append(output)
        if "outputs" in cell:
            cell.outputs = outputs
    return nb


def copy_mathjax(out: str | Path) -> Path:
    """Copy MathJax 2.7 (from the ``jupyter-server-mathjax`` package) into ``out/mathjax``.

    Parameters
    ----------
    out : str or Path
        The site folder.

    Returns
    -------
    Path
        The folder written.
    """
    spec = importlib.util.find_spec("jupyter_server_mathjax")  # found, not imported: only its files are needed
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("the site ships MathJax from the package jupyter-server-mathjax: "
                                  "pip install 'udk-notebooks[site]' (or make site)")
    static = Path(next(iter(spec.submodule_search_locations))) / "static"
    if not (static / "MathJax.js").is_file():
        raise FileNotFoundError(f"jupyter-server-mathjax has no MathJax.js in {static}; reinstall it")
    target = Path(out) / MATHJAX_DIR
    shutil.copytree(static, target, dirs_exist_ok=True)
    return target


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


def _markdown(text: str) -> str:
    """Markdown to HTML as nbconvert renders a markdown cell: ``$...$`` is left for MathJax."""
    from nbconvert.filters.markdown_mistune import markdown2html_mistune

    return markdown2html_mistune(text)


_INDEX_MATHJAX = _MATHJAX_FONTS + f"""<script type="text/x-mathjax-config">
MathJax.Hub.Config({{tex2jax: {{inlineMath: [['$', '$'], ['\\\\(', '\\\\)']], processEscapes: true}},
                    messageStyle: 'none'}});
</script>
<script src="{MATHJAX_URL}"></script>"""


def _index_page(lessons: list[Lesson], repo: str) -> str:
    rows = "\n".join(
        f'<li><a href="{lesson.page}">{html.escape(lesson.title)}</a>'
        f'<div class="udk-summary">{_markdown(lesson.summary)}</div></li>'
        for lesson in lessons
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>udk-notebooks: lessons</title>
<meta name="viewport" content="width=device-width, initial-scale=1">{_STYLE}{_INDEX_MATHJAX}
<style>body {{ margin: 0; font: 16px/1.5 system-ui, sans-serif; }} main {{ max-width: 52em; margin: 1em auto;
padding: 0 1em; }} li {{ margin-bottom: 0.8em; }} .udk-summary p {{ margin: 0.2em 0; color: #333; }}</style></head>
<body>{_nav(lessons, None, repo)}<main class="udk-index">
<h1>Constrained mechanics through the Udwadia-Kalaba equation</h1>
<p>The lessons of udk-notebooks, executed, with their figures and animations. Each page links to the
same lesson live on Binder, where the explorers' sliders and the exercises work.</p>
<ol>
{rows}
</ol></main></body></html>
"""


def _reuse_executions(executed: Mapping | None, notebooks: list[Path]) -> dict:
    """The static executions of ``executed`` that belong to ``notebooks``, keyed like ``notebooks``."""
    if executed is None:
        return {}
    if not isinstance(executed, Mapping):
        raise TypeError(f"`executed` must map notebook paths to executed notebooks; got {type(executed).__name__}")
    by_file = {Path(path).resolve(): result for path, result in executed.items()}
    reused = {}
    for notebook in notebooks:
        result = by_file.get(notebook.resolve())
        if result is None:
            continue
        if isinstance(result, Exception):
            reused[notebook] = result
        elif getattr(result, "metadata", {}).get(STATIC_EXPORT_METADATA) is not True:
            raise ValueError(f"`executed` holds {notebook.name} not executed for a static export: "
                             "pass what execute_lessons(..., static=True) returns, or leave the lesson out")
        else:
            reused[notebook] = result
    return reused


def build_site(
    out: str | Path,
    lessons_dir: str | Path = "lessons",
    *,
    binder_repo: str = BINDER_REPO,
    timeout: int = CELL_TIMEOUT,
    workers: int | None = None,
    log=print,
    executed: Mapping | None = None,
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
    executed : mapping, optional
        Lessons already executed in static-export mode: notebook path to what
        :func:`execute_lessons` (``static=True``) returned for it. These are rendered
        as they are (the test suite executes each lesson once for its lesson checks
        and for the site); the lessons missing from it are executed here. A
        student-mode execution is refused (its widgets cannot show on a page).

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
    (out / SITE_STAMP).unlink(missing_ok=True)  # a build that stops part-way leaves a site without a stamp: stale
    lessons = [lesson_info(path) for path in notebooks]
    copy_mathjax(out)
    written = [out / "index.html"]
    written[0].write_text(_index_page(lessons, binder_repo), encoding="utf-8")
    executed = _reuse_executions(executed, notebooks)
    missing = [lesson.notebook for lesson in lessons if lesson.notebook not in executed]
    if missing:
        executed.update(execute_lessons(missing, timeout=timeout, workers=workers, log=log))
    failed = {path.name: result for path, result in executed.items() if isinstance(result, Exception)}
    if failed:
        name, error = next(iter(failed.items()))
        raise RuntimeError(f"{len(failed)} lesson(s) failed to execute ({', '.join(failed)}); {name}: {error}") from error
    for index, lesson in enumerate(lessons):
        page = out / lesson.page
        # a copy: the executed notebook may be shared with other readers (the test suite's lesson checks)
        shown = _exercises_as_questions(copy.deepcopy(executed[lesson.notebook]),
                                        _binder_url(binder_repo, lesson.notebook))
        html_page = _render(shown, _nav(lessons, index, binder_repo), lesson.title)
        page.write_text(_link_pages(html_page, {path.name for path in notebooks}), encoding="utf-8")
        written.append(page)
        log(f"wrote {page}")
    _write_stamp(out, notebooks)
    return written


def _lesson_hashes(notebooks) -> dict[str, str]:
    """sha256 of each notebook file's bytes, by file name."""
    return {Path(path).name: hashlib.sha256(Path(path).read_bytes()).hexdigest() for path in notebooks}


def _write_stamp(out: Path, notebooks: list[Path]) -> None:
    """The build stamp, written last: a site has one only once every page is written."""
    stamp = {"lessons": _lesson_hashes(notebooks)}
    (out / SITE_STAMP).write_text(json.dumps(stamp, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def stale_site(site: str | Path, lessons_dir: str | Path = "lessons") -> str:
    """Why a site built earlier no longer shows the lessons of ``lessons_dir``; ``""`` when it still does.

    A site built by :func:`build_site` holds :data:`SITE_STAMP`, the hash of
    every lesson notebook it rendered. The site is stale when a lesson was
    added, removed or changed since (compared byte for byte through the
    hashes), when it has no stamp (built by an older version, or a build that
    stopped part-way) or no ``index.html``. Only the lessons are compared: a
    change of the package itself is not seen.

    Parameters
    ----------
    site : str or Path
        Folder of the built site (e.g. ``build/site``).
    lessons_dir : str or Path, optional
        Folder of the lesson notebooks the site should show.

    Returns
    -------
    str
        The first reason found, naming the lesson; empty when the site is current.

    Raises
    ------
    FileNotFoundError
        ``lessons_dir`` is not a folder.
    """
    site, lessons_dir = Path(site), Path(lessons_dir)
    if not lessons_dir.is_dir():
        raise FileNotFoundError(f"`lessons_dir` must be the folder of the lesson notebooks: {lessons_dir.resolve()} "
                                "is no folder (a wrong path would call every page of the site stale)")
    if not (site / "index.html").is_file():
        return f"{site} holds no built site (no index.html)"
    try:
        built = json.loads((site / SITE_STAMP).read_text(encoding="utf-8"))["lessons"]
    except FileNotFoundError:
        return f"{site} has no {SITE_STAMP}: built by an older build_site, or its build stopped part-way"
    except (ValueError, KeyError, TypeError) as exc:
        return f"{site}/{SITE_STAMP} cannot be read ({type(exc).__name__}: {exc})"
    if not (isinstance(built, dict) and all(isinstance(value, str) for value in built.values())):
        return f"{site}/{SITE_STAMP} cannot be read (its 'lessons' is not a hash per notebook name)"
    now = _lesson_hashes(sorted(lessons_dir.glob("*.ipynb")))
    for name in sorted(set(built) | set(now)):
        if name not in built:
            return f"{name} was added to {lessons_dir} after the site was built"
        if name not in now:
            return f"{name} is no longer in {lessons_dir}, but the site still has its page"
        if built[name] != now[name]:
            return f"{name} changed after the site was built"
    return ""


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
