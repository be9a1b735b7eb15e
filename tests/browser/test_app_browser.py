"""The explorers as Voila apps (``make app``), in headless Chromium.

Voila serves the pages that :mod:`udk_notebooks.app` writes from the explorer
registry (one server for the session: ``conftest.voila``). Each explorer page is
loaded once and checked for everything a page must do: no code is shown, the page
renders its sliders and figure, both are in a 1366x768 window at once with slider
tracks a student can aim at, and every kind of control on it moves with the
keyboard and changes the figure (a FloatSlider by ArrowRight, a ToggleButtons
button reached by Tab and pressed with Space, the ``frame`` IntSlider reached by
Tab). Three pages are also loaded in an 800 px window: nothing past its edge, the
figure unscaled (its text readable), tracks of a usable width. The gallery links every explorer; the gallery and an explorer page pass
axe-core with no serious or critical violation. Voila runs with the settings of
``make app`` (:func:`udk_notebooks.app.voila_arguments`) but short culling times,
so a closed page's kernel is seen to go away.
"""

from __future__ import annotations

import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

import psutil
from a11y import axe_source, describe, serious_violations
from browser_kit import (
    FIGURE_SCALE_JS, LAPTOP, MIN_TRACK, PARTS_JS, PAST_EDGE_JS, check_frame_key, check_slider_key, check_toggle_key,
    figure_report, voila_server, wait_figure_ready, wait_figure_shown,
)

from udk_notebooks.app import GALLERY
from udk_notebooks.widgets import EXPLORERS

PAGE_TIMEOUT_MS = 120_000  # page load until the first slider and figure show
CHANGE_TIMEOUT_MS = 60_000  # a key press until the figure changes (some explorers run several simulations)
# Kernels nobody connects to: culled after a few idle seconds, so the test sees the culler work.
CULL_IDLE_TIMEOUT = 5
CULL_INTERVAL = 1
CULL_WAIT = 60  # seconds allowed for a kernel to go away (well under the session server's 120 s)
A11Y_PAGE = sorted(EXPLORERS)[0]  # the explorer page axe-core checks besides the gallery
NARROW = {"width": 800, "height": 768}
# Pages also checked in an 800 px window: the explorers with the most controls and the widest headings (the
# lab's layout test checks every explorer at that width).
NARROW_PAGES = ("double_pendulum", "friction_cart_pendulum", "stabilization")
# The smallest text of any explorer figure is 7 pt, 9.7 px at the figure's own size
# (tests/test_explorer_labels.py::test_text_is_readable_in_an_800px_window): shown at less than this
# share of its size it falls under 9 px.
MIN_FIGURE_SCALE = 9.0 / (7.0 * 100.0 / 72.0)



@pytest.fixture(scope="module")
def culling_voila(tmp_path_factory):
    """Culling after a few idle seconds, for kernels that no page ever connects to."""
    with voila_server(tmp_path_factory.mktemp("voila-culling"), cull_idle_timeout=CULL_IDLE_TIMEOUT,
                      cull_interval=CULL_INTERVAL) as server:
        yield server


@pytest.fixture(scope="module")
def capped_voila(tmp_path_factory):
    """Two kernels at most and no culling within a test's time: the cap alone is seen."""
    with voila_server(tmp_path_factory.mktemp("voila-capped"), max_kernels=2, cull_idle_timeout=3600) as server:
        yield server


@pytest.fixture
def page(page_at):
    return page_at(LAPTOP, timeout_ms=PAGE_TIMEOUT_MS)


def _no_code(page) -> None:
    editors = page.locator(".jp-CodeCell .jp-InputArea:visible, .jp-CodeMirrorEditor:visible, .cm-editor:visible")
    assert editors.count() == 0, "the app page shows code cells"
    assert page.get_by_text("from udk_notebooks").count() == 0, "the app page shows source code"


def test_gallery_links_every_explorer(voila, page):
    url, _, _ = voila
    page.goto(f"{url}/voila/render/{GALLERY}")
    page.wait_for_selector("table a")
    links = page.eval_on_selector_all("table a", "els => els.map(e => e.getAttribute('href'))")
    assert sorted(links) == sorted(f"{name}.ipynb" for name in EXPLORERS)
    _no_code(page)
    violations = serious_violations(page, axe_source())
    assert violations == [], f"{GALLERY}: axe-core found serious or critical violations:\n{describe(violations)}"


def _check_fit(page, name: str, scope, artifacts_dir: Path) -> None:
    """Figure and every control inside the window at once; slider tracks of a usable width; a screenshot."""
    scope.evaluate("e => e.scrollIntoView({block: 'start'})")
    time.sleep(0.3)
    parts = page.evaluate(PARTS_JS, scope)
    height = page.evaluate("() => window.innerHeight")
    shots = artifacts_dir / "layout"
    shots.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(shots / f"app-{name}.png"))
    for what in ("figure_bottom", "controls_bottom"):
        assert parts[what] <= height + 1, (
            f"{name}: the {what.split('_')[0]} ends {parts[what] - parts['top']:.0f} px below the explorer's "
            f"top, the window is {height} px high")
    narrow = [round(w) for w in parts["tracks"] if w < MIN_TRACK]
    assert not narrow, f"{name}: slider tracks of {narrow} px (at least {MIN_TRACK})"


@pytest.mark.parametrize("name", sorted(EXPLORERS))
def test_app_page_fits_and_every_control_moves_the_figure_by_keyboard(voila, page, name, artifacts_dir: Path):
    url, log_path, _ = voila
    page.goto(f"{url}/voila/render/{name}.ipynb")
    explorer = page.locator(".udk-explorer").first
    explorer.wait_for()
    scope = explorer.element_handle()
    wait_figure_shown(page, scope, PAGE_TIMEOUT_MS, what=f"app page {name}", shot=artifacts_dir / f"app-{name}.png",
                      log_tail=lambda: log_path.read_text(errors="replace")[-3000:])
    _no_code(page)
    _check_fit(page, name, scope, artifacts_dir)

    # keyboard: the first parameter slider, then by Tab a toggle button (where the explorer has one) and
    # the frame slider; each must move and redraw (the figure is drawn in the kernel: the value got there)
    slider = explorer.locator(".udk-explorer-controls > .widget-slider").first
    try:
        check_slider_key(page, slider, scope, CHANGE_TIMEOUT_MS)
        if explorer.locator(".widget-toggle-buttons").count():
            check_toggle_key(page, scope, CHANGE_TIMEOUT_MS)
        check_frame_key(page, scope, CHANGE_TIMEOUT_MS)
    except Exception as exc:  # a Playwright timeout or a wrong value: with what the page and Voila said
        page.screenshot(path=str(artifacts_dir / f"app-{name}.png"))
        pytest.fail(f"app page {name}: {type(exc).__name__}: {exc}\n"
                    + figure_report(page, log_tail=log_path.read_text(errors="replace")[-3000:]))
    page.screenshot(path=str(artifacts_dir / f"app-{name}.png"))

    if name == A11Y_PAGE:
        violations = serious_violations(page, axe_source())
        assert violations == [], f"{name}: axe-core found serious or critical violations:\n{describe(violations)}"


def _kernels(voila_pid: int) -> list[int]:
    """Process ids of the kernels Voila runs (its ipykernel children)."""
    pids = []
    for child in psutil.Process(voila_pid).children(recursive=True):
        try:
            if child.status() != psutil.STATUS_ZOMBIE and "ipykernel" in " ".join(child.cmdline()):
                pids.append(child.pid)
        except psutil.Error:  # ended while we looked: not running
            pass
    return pids


def _wait_gone(voila_pid: int, pids: set[int], timeout: float) -> set[int]:
    """Those of ``pids`` still running after they ended or ``timeout`` seconds passed.

    The kernels of earlier tests' pages are left out: they end on their own schedule (a page
    closed without its goodbye waits for the culler), and waiting for them cost a minute.
    """
    deadline = time.monotonic() + timeout
    while (left := pids & set(_kernels(voila_pid))) and time.monotonic() < deadline:
        time.sleep(0.5)
    return left


def _new_kernels(voila_pid: int, before: set[int], timeout: float = 10.0) -> set[int]:
    """Kernels started since ``before`` was taken (waiting up to ``timeout`` s for the first)."""
    deadline = time.monotonic() + timeout
    while not (new := set(_kernels(voila_pid)) - before) and time.monotonic() < deadline:
        time.sleep(0.2)
    return new


def test_a_closed_page_kernel_goes_away(voila, page_at):
    """Closing the tab ends the page's kernel (Voila's beforeunload request), long before the culler would."""
    url, _, pid = voila
    before = set(_kernels(pid))
    page = page_at(LAPTOP, timeout_ms=PAGE_TIMEOUT_MS)
    page.goto(f"{url}/voila/render/{sorted(EXPLORERS)[0]}.ipynb")
    page.locator(".widget-slider").first.wait_for()
    mine = _new_kernels(pid, before)
    assert len(mine) == 1, f"the page started {len(mine)} kernels, not one"
    page.close(run_before_unload=True)  # the tab goes, as when a student closes it
    left = _wait_gone(pid, mine, CULL_WAIT)
    assert not left, f"the closed page's kernel still runs after {CULL_WAIT} s"


def test_a_kernel_without_its_page_is_culled(culling_voila):
    """A tab that never says goodbye (crash, sleep): no beforeunload, so only the culler can end its kernel."""
    url, log_path, pid = culling_voila
    before = set(_kernels(pid))
    started = log_path.read_text(errors="replace").count("Kernel started:")
    # a bare GET renders the page and starts its kernel; no browser ever connects to it
    urllib.request.urlopen(f"{url}/voila/render/{GALLERY}", timeout=PAGE_TIMEOUT_MS / 1000).read()
    assert log_path.read_text(errors="replace").count("Kernel started:") == started + 1
    mine = _new_kernels(pid, before)
    assert len(mine) == 1, f"the page started {len(mine)} kernels, not one"
    left = _wait_gone(pid, mine, CULL_WAIT)
    assert not left, f"the culler left the idle kernel running after {CULL_WAIT} s"
    assert "Culling 'idle' kernel" in log_path.read_text(errors="replace"), "the kernel ended, but not by the culler"


def test_kernels_beyond_the_cap_are_refused_with_a_clear_page(capped_voila):
    url, _, pid = capped_voila
    for _ in range(2):
        urllib.request.urlopen(f"{url}/voila/render/{GALLERY}", timeout=PAGE_TIMEOUT_MS / 1000).read()
    assert len(_kernels(pid)) == 2
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(f"{url}/voila/render/{GALLERY}", timeout=PAGE_TIMEOUT_MS / 1000).read()
    assert refused.value.code == 503
    body = refused.value.read().decode(errors="replace")
    assert "All 2 explorer sessions are in use: close an explorer tab" in body, body[-1000:]
    assert len(_kernels(pid)) == 2


@pytest.mark.parametrize("name", NARROW_PAGES)
def test_app_page_fits_a_narrow_window(voila, page_at, name, artifacts_dir: Path):
    """In an 800 px window nothing of the explorer runs past the page's edge, the figure keeps its text
    readable (it is not scaled down), the slider tracks keep their width, and a slider still moves by keyboard."""
    url, _, _ = voila
    page = page_at(NARROW, timeout_ms=PAGE_TIMEOUT_MS)
    page.goto(f"{url}/voila/render/{name}.ipynb")
    explorer = page.locator(".udk-explorer").first
    explorer.wait_for()
    scope = explorer.element_handle()
    wait_figure_ready(page, scope, PAGE_TIMEOUT_MS)
    scope.evaluate("e => e.scrollIntoView({block: 'start'})")
    time.sleep(0.3)
    shots = artifacts_dir / "layout"
    shots.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(shots / f"app-narrow-{name}.png"))
    edge = page.evaluate("() => document.documentElement.clientWidth")
    past = page.evaluate(PAST_EDGE_JS, [scope, edge])
    assert not past, f"{name}: past the window's edge at {edge} px: " + "; ".join(past[:5])
    scale = scope.evaluate(FIGURE_SCALE_JS)
    assert scale is not None and scale >= MIN_FIGURE_SCALE, (
        f"{name}: the figure is shown at {scale} of its size (at least {MIN_FIGURE_SCALE:.2f}, or 7 pt text "
        "falls under 9 px)")
    narrow = [round(w) for w in page.evaluate(PARTS_JS, scope)["tracks"] if w < MIN_TRACK]
    assert not narrow, f"{name}: slider tracks of {narrow} px (at least {MIN_TRACK})"
    check_slider_key(page, explorer.locator(".udk-explorer-controls > .widget-slider").first, scope,
                     CHANGE_TIMEOUT_MS)
