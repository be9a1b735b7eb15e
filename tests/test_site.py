"""The static course site (``make site``): every lesson executed and rendered, linked, animated."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlparse

import pytest

from udk_notebooks.site import build_site, lesson_info

ANIMATION_FRAME = re.compile(r'frames\[\d+\] = "data:image/(png|jpeg);base64,')


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            self.hrefs.extend(value for name, value in attrs if name == "href" and value)


def _local_links(page: Path) -> list[str]:
    parser = _Links()
    parser.feed(page.read_text(encoding="utf-8"))
    return [h for h in parser.hrefs if not urlparse(h).scheme and not h.startswith("#")]


@pytest.fixture(scope="module")
def site(built_site: Path) -> Path:
    return built_site


def test_lesson_info_reads_title_and_summary(lessons_dir: Path):
    lesson = lesson_info(sorted(lessons_dir.glob("*.ipynb"))[0])
    assert lesson.title and not lesson.title.startswith("#")
    assert lesson.page.endswith(".html")


def test_bad_input_is_refused(tmp_path: Path, lessons_dir: Path):
    with pytest.raises(FileNotFoundError, match="lessons_dir"):
        build_site(tmp_path / "out", tmp_path / "nowhere")
    with pytest.raises(ValueError, match="binder_repo"):
        build_site(tmp_path / "out", lessons_dir, binder_repo="not a repo")


@pytest.mark.slow
def test_every_lesson_has_a_page_with_figures(site: Path, lessons_dir: Path):
    for notebook in sorted(lessons_dir.glob("*.ipynb")):
        page = site / f"{notebook.stem}.html"
        assert page.is_file(), f"no page for {notebook.name}"
        text = page.read_text(encoding="utf-8")
        assert "Open live on Binder" in text and f"lessons%2F{notebook.name}" in text
        assert "Traceback (most recent call last)" not in text, f"{page.name} shows a traceback"
    index = (site / "index.html").read_text(encoding="utf-8")
    for notebook in sorted(lessons_dir.glob("*.ipynb")):
        assert f'href="{notebook.stem}.html"' in index


@pytest.mark.slow
def test_pages_with_figures_and_an_animation_that_plays_without_kernel(site: Path):
    pages = sorted(site.glob("*.html"))
    figures = {p.name: p.read_text(encoding="utf-8").count("data:image/png;base64,") for p in pages}
    lessons_with_figures = [name for name, count in figures.items() if count and name != "index.html"]
    assert len(lessons_with_figures) >= len(pages) - 2, figures  # every lesson but a text-only start page
    animated = {p.name: len(ANIMATION_FRAME.findall(p.read_text(encoding="utf-8"))) for p in pages}
    assert max(animated.values()) >= 10, f"no page holds a JavaScript animation with its frames: {animated}"


@pytest.mark.slow
def test_links_between_pages_resolve(site: Path):
    for page in site.glob("*.html"):
        for href in _local_links(page):
            target = (page.parent / urlparse(href).path).resolve()
            assert target.is_file(), f"{page.name} links to missing {href}"


def test_links_to_other_lessons_point_at_their_pages():
    from udk_notebooks.site import _link_pages

    page = '<a href="01_a.ipynb">a</a> <a href="./01_a.ipynb#eq-7">b</a> <a href="x.ipynb">c</a>'
    assert _link_pages(page, {"01_a.ipynb"}) == '<a href="01_a.html">a</a> <a href="01_a.html#eq-7">b</a> <a href="x.ipynb">c</a>'


# -- offline pages, exercises as questions, alt text (no lesson executed) ---------------------------------

def test_animation_buttons_need_no_icon_font():
    from udk_notebooks.site import _offline_animations

    page = ('<link href="https://maxcdn.bootstrapcdn.com/font-awesome/4.4.0/css/font-awesome.min.css" rel="stylesheet"/>'
            '<img alt="No description has been provided for this image" id="_anim_img1a"/>'
            '<input class="anim-slider" id="_anim_slider1a" type="range"/>'
            '<button title="Play"><i class="fa fa-play"></i></button>'
            '<button title="Play backwards"><i class="fa fa-play fa-flip-horizontal"></i></button>')
    out = _offline_animations(page)
    assert "font-awesome" not in out and 'class="fa' not in out
    assert '<span aria-hidden="true">\u25b6</span>' in out and '<span aria-hidden="true">\u25c0</span>' in out
    assert 'alt="Animation of the motion' in out and "No description" not in out
    assert 'id="_anim_slider1a" aria-label="Animation frame"' in out


def test_unanswered_exercise_shows_as_a_question():
    import nbformat.v4 as v4

    from udk_notebooks.exercises._feedback import Feedback
    from udk_notebooks.site import _exercises_as_questions

    verdict = Feedback(False, "replace the None placeholder(s) with your answer and run the cell again.")
    correct = Feedback(True, "the acceleration is -g sin(alpha).")
    cell = v4.new_code_cell("check_1(None)", outputs=[
        v4.new_output("execute_result", data={"text/plain": verdict.text, "text/html": verdict._repr_html_()},
                      execution_count=1),
        v4.new_output("execute_result", data={"text/plain": correct.text}, execution_count=1),
    ])
    nb = v4.new_notebook(cells=[cell], metadata={"widgets": {"state": {}}})
    shown = _exercises_as_questions(nb, "https://mybinder.org/x")
    texts = [output["data"].get("text/html", output["data"]["text/plain"]) for output in shown.cells[0].outputs]
    assert "Not yet" not in texts[0] and "Exercise." in texts[0] and 'href="https://mybinder.org/x"' in texts[0]
    assert texts[1].startswith("Correct."), "a worked answer keeps its verdict"
    assert "widgets" not in shown.metadata


def test_figure_alt_text_names_titles_axes_and_curves():
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    from udk_notebooks._alt_text import figure_alt_text

    fig = Figure()
    fig.suptitle("Pendulum")
    left, right = fig.subplots(1, 2)
    left.plot([0, 1], [0, 1], label=r"$\theta$ (rad)")
    left.set(title="angle", xlabel="t (s)", ylabel=r"$\theta$")
    left.legend()
    right.plot([0, 1], [1, 0])
    right.set(title="energy", xlabel="t (s)", ylabel="E (J)")
    assert figure_alt_text(fig) == ("Figure: Pendulum. 2 panels: angle, theta against t (s) (curves: theta (rad)); "
                                    "energy, E (J) against t (s).")
    with pytest.raises(TypeError, match="figure"):
        figure_alt_text("not a figure")


def test_mathjax_is_copied_and_the_index_renders_markdown_and_math(tmp_path: Path, lessons_dir: Path):
    from udk_notebooks.site import MATHJAX_URL, Lesson, _index_page, copy_mathjax

    target = copy_mathjax(tmp_path)
    assert (target / "MathJax.js").is_file()
    config = MATHJAX_URL.split("config=")[1].split(",")[0]
    assert (target / "config" / f"{config}.js").is_file(), "the configuration the pages ask for is not shipped"
    lesson = Lesson(lessons_dir / "x.ipynb", "x.html", "X", r"The **explicit** equation $A\ddot q = b$, `code`.")
    page = _index_page([lesson], "o/n")
    assert f'<script src="{MATHJAX_URL}">' in page
    assert "<strong>explicit</strong>" in page and "<code>code</code>" in page and "**" not in page
    assert r"$A\ddot q = b$" in page, "the formula is left for MathJax, unescaped"


# -- the animations a page embeds: one draw per frame, the pixels matplotlib makes ---------------------------

def _frame_pixels(page: str) -> list:
    import base64
    import io

    import numpy as np
    from PIL import Image

    frames = re.findall(r'frames\[\d+\] = "data:image/png;base64,([^"]*)"', page)
    return [np.asarray(Image.open(io.BytesIO(base64.b64decode(data)))) for data in frames]


@pytest.mark.parametrize("system", ["inclined_line", "double_pendulum"])
def test_animation_frames_are_the_pixels_matplotlib_draws(system):
    """MechanismAnimation.to_jshtml skips the draw matplotlib throws away; the frames do not change.

    The independent route is matplotlib's own ``FuncAnimation.to_jshtml`` on a second, identical
    animation (two full draws and two layout passes per frame). The figure keeps its layout engine after.
    """
    import importlib

    import matplotlib
    import numpy as np

    import udk_notebooks as udk

    matplotlib.use("Agg")
    example = importlib.import_module(f"udk_notebooks.examples.{system}")
    q0, qd0 = example.initial_state()
    run = udk.simulate(example.model(), (0.0, 1.5), q0, qd0, method="rk4", step=0.05)
    mechanism = example.mechanism()
    ours = udk.animate(run, mechanism, frames=6)
    theirs = udk.animate(run, mechanism, frames=6)
    fast = _frame_pixels(ours.to_jshtml())
    reference = _frame_pixels(theirs.animation.to_jshtml(fps=theirs.fps, default_mode="loop"))
    assert len(fast) == len(reference) == 6
    for k, (a, b) in enumerate(zip(fast, reference)):
        assert a.shape == b.shape and np.array_equal(a, b), f"frame {k} differs from matplotlib's"
    assert len({frame.tobytes() for frame in fast}) > 1, "the frames must show the motion"
    engine = ours.figure.get_layout_engine()
    assert "execute" not in vars(engine), "the figure's layout engine is restored"
    assert not getattr(ours.figure.canvas, "_is_idle_drawing", False), "draw_idle draws again"


# -- a site built from executions already made (the suite executes each lesson once) -------------------------

def _tiny_lesson(folder: Path) -> Path:
    import nbformat
    import nbformat.v4 as v4

    folder.mkdir()
    path = folder / "01_tiny.ipynb"
    nbformat.write(v4.new_notebook(cells=[v4.new_markdown_cell("# Tiny\n\nOne cell."),
                                          v4.new_code_cell("print('never run here')")]), path)
    return path


def _executed(path: Path, *, static: bool, shown: str):
    import nbformat
    import nbformat.v4 as v4

    nb = nbformat.read(path, as_version=4)
    nb.cells[1].outputs = [v4.new_output("stream", name="stdout", text=shown)]
    nb.cells[1].execution_count = 1
    nb.metadata["udk_static_export"] = static
    return nb


def test_site_renders_the_executions_it_is_given_without_running_them(tmp_path: Path):
    lesson = _tiny_lesson(tmp_path / "lessons")
    given = _executed(lesson, static=True, shown="made by the caller")
    build_site(tmp_path / "site", lesson.parent, executed={lesson: given}, log=lambda line: None)
    page = (tmp_path / "site" / "01_tiny.html").read_text(encoding="utf-8")
    assert "made by the caller" in page, "the given execution is rendered (no kernel ran the lesson)"
    assert given.cells[1].outputs[0]["text"] == "made by the caller", "the caller's notebook is not changed"


def test_site_refuses_a_student_mode_execution(tmp_path: Path):
    lesson = _tiny_lesson(tmp_path / "lessons")
    with pytest.raises(ValueError, match="`executed` holds 01_tiny.ipynb not executed for a static export"):
        build_site(tmp_path / "site", lesson.parent, log=lambda line: None,
                   executed={lesson: _executed(lesson, static=False, shown="widgets")})
    with pytest.raises(TypeError, match="`executed` must map"):
        build_site(tmp_path / "site", lesson.parent, log=lambda line: None, executed=[lesson])
