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
def site(tmp_path_factory, lessons_dir: Path) -> Path:
    out = tmp_path_factory.mktemp("site")
    build_site(out, lessons_dir, workers=2, log=lambda line: None)
    return out


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
