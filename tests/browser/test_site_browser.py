"""The static site (``make site``) offline, in headless Chromium: formulas, animations, exercises, accessibility.

The site is built once per session (about two minutes per lesson on a loaded
machine; ``UDK_SITE_DIR=build/site`` reuses a site already built there) and served
from 127.0.0.1. Every request to another host is blocked and recorded, as a
reader without a network (or behind a firewall that blocks CDNs) would see it.
"""

from __future__ import annotations

import functools
import http.server
import re
import threading
from pathlib import Path
from urllib.parse import urlparse

import pytest
from a11y import axe_source, describe, serious_violations
from lesson_paths import find_lessons_dir


LOCAL_HOSTS = {"127.0.0.1", "localhost"}
MATHJAX_TIMEOUT_MS = 120_000

# What MathJax 2 leaves behind: typeset formulas in spans/divs of these classes, errors in merror.
TYPESET_JS = """
() => new Promise(resolve => MathJax.Hub.Queue(() => resolve({
  typeset: document.querySelectorAll('.MathJax, .MathJax_Display, .MathJax_CHTML, .MathJax_SVG').length,
  errors: Array.from(document.querySelectorAll('.MathJax_Error, merror, .mjx-merror')).map(e => e.textContent).slice(0, 5),
})))
"""

# Text of the prose (markdown) that still holds $...$ after typesetting: raw LaTeX a reader would see.
RAW_MATH_JS = r"""
() => Array.from(document.querySelectorAll('.jp-RenderedMarkdown, main.udk-index'))
  .map(e => e.innerText).join('\n').split('\n').filter(line => /\$[^$\s][^$]*\$/.test(line)).slice(0, 5)
"""


def _site_pages(lessons_dir: Path) -> list[str]:
    return ["index.html"] + [f"{nb.stem}.html" for nb in sorted(lessons_dir.glob("*.ipynb"))]


@pytest.fixture(scope="session")
def site_url(built_site: Path):
    root = built_site  # the site the site tests build (tests/conftest.py), not a second build
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep pytest's output for failures
        pass


@pytest.fixture
def offline_page(chromium):
    """A 1366x768 page whose requests to any host but this machine are blocked (and listed)."""
    context = chromium.new_context(viewport={"width": 1366, "height": 768})
    blocked: list[str] = []

    def route(route):
        host = urlparse(route.request.url).hostname
        if host in LOCAL_HOSTS:
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    context.route("**/*", route)
    page = context.new_page()
    page.set_default_timeout(60_000)
    page.blocked = blocked
    try:
        yield page
    finally:
        context.close()


def _load(page, url: str) -> dict:
    page.goto(url, wait_until="load")
    page.wait_for_function("() => window.MathJax && MathJax.isReady", timeout=MATHJAX_TIMEOUT_MS)
    return page.evaluate(TYPESET_JS)


@pytest.mark.parametrize("name", _site_pages(find_lessons_dir()))
def test_site_page_works_offline_and_is_accessible(site_url, offline_page, name, artifacts_dir: Path):
    page = offline_page
    math = _load(page, f"{site_url}/{name}")
    assert page.blocked == [], f"{name} asks other hosts for: {page.blocked[:5]}"

    # formulas typeset from the site's own MathJax; no raw LaTeX left in the prose
    has_math = page.evaluate("() => /\\$|\\\\\\(|\\\\\\[/.test(document.body.innerHTML)")
    if has_math:
        assert math["typeset"] > 0, f"{name}: no formula was typeset"
    assert math["errors"] == [], f"{name}: MathJax could not typeset {math['errors']}"
    raw = page.evaluate(RAW_MATH_JS)
    assert raw == [], f"{name} shows raw LaTeX: {raw}"

    # animation buttons show a symbol (not a blank icon-font glyph)
    for button in page.locator(".anim-buttons button").all():
        text = button.inner_text().strip()
        box = button.bounding_box()
        assert text and box and box["width"] >= 20, f"{name}: blank animation button {button.get_attribute('title')}"

    # exercises show as questions: no checker verdict on a page without a kernel
    assert page.locator('[role="status"]:has-text("Not yet")').count() == 0, f"{name} shows a 'Not yet' box"
    assert "replace the None placeholder" not in page.inner_text("body")

    # every figure says what it shows
    alts = page.eval_on_selector_all("img", "els => els.map(e => e.getAttribute('alt'))")
    vague = [alt for alt in alts if not alt or "No description" in alt or "no description" in alt]
    assert vague == [], f"{name}: {len(vague)} of {len(alts)} images without a description"

    violations = serious_violations(page, axe_source())
    assert violations == [], f"{name}: axe-core found serious or critical violations:\n{describe(violations)}"
    if name == "index.html" or page.locator(".anim-buttons").count():
        page.screenshot(path=str(artifacts_dir / f"site-{Path(name).stem}.png"))


def test_site_animation_plays_offline(site_url, offline_page, lessons_dir: Path):
    page = offline_page
    for name in _site_pages(lessons_dir)[1:]:
        page.goto(f"{site_url}/{name}", wait_until="load")
        if page.locator(".anim-buttons").count():
            break
    else:
        pytest.fail("no page of the site holds an animation")
    frame = page.locator("img[id^='_anim_img']").first
    first = frame.get_attribute("src")
    page.locator(".anim-buttons button[title='Next frame']").first.click()
    page.wait_for_function("(before) => document.querySelector(\"img[id^='_anim_img']\").src !== before", arg=first)
    slider = page.locator("input.anim-slider").first
    assert re.fullmatch(r"\d+", slider.input_value()) and int(slider.input_value()) == 1
