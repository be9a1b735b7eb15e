"""Explorers paint their animated texts from stamps (widgets/text_stamps.py): the pixels of a direct draw, never stale.

A stamp is one line of text rendered once on a small canvas of its own, at the sub-pixel offset of the
line it stands for, and composited while the line reads the same. Each check compares the canvas with
a direct draw by Agg (the route without stamps), so a stamp that kept an old line, another colour, or
landed a pixel off would fail it.
"""

from __future__ import annotations

import math
import textwrap

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest
import sympy as sm
from sympy.physics.mechanics import dynamicsymbols

import udk_notebooks as udk
from udk_notebooks.widgets.text_stamps import TextStamps

WARNING = ("Not to be trusted: position residual 0.00923 (t = 5 s), velocity residual 0.00575 (t = 4.98 s); "
           "limit 0.001. Take a smaller step, RK4, or stabilization")


@pytest.fixture
def scene():
    """A figure with the kinds of animated text an explorer has: a boxed warning, a clock with mathtext,
    a text clipped by its axes, and one in data coordinates at a fractional position."""
    figure, ax = plt.subplots(figsize=(4.0, 3.0), dpi=100)
    ax.plot([0, 1], [0, 1], lw=8)
    texts = [
        ax.text(0.5, 0.5, textwrap.fill(WARNING, 36), transform=ax.transAxes, ha="center", va="center",
                fontsize=8.5, color="#D55E00", bbox=dict(facecolor="white", edgecolor="#D55E00", alpha=0.9)),
        ax.text(0.02, 0.97, "t = 0.00 s, $F^N$", transform=ax.transAxes, va="top", fontsize=8),
        ax.text(0.93, 0.1, "runs past the axes' edge", transform=ax.transAxes, fontsize=8, clip_on=True),
        ax.text(0.3137, 0.2718, "N", color="#0072B2", fontsize=8),
    ]
    for text in texts:
        text.set_animated(True)
        text.set_clip_path(ax.patch)
    canvas = figure.canvas
    canvas.draw()
    background = canvas.copy_from_bbox(figure.bbox)
    yield figure, ax, texts, background
    plt.close(figure)


def _paint(figure, ax, texts, background, stamps: TextStamps | None) -> np.ndarray:
    canvas = figure.canvas
    canvas.restore_region(background)
    if stamps is None:
        for text in texts:
            ax.draw_artist(text)
    else:
        with stamps.installed():
            for text in texts:
                ax.draw_artist(text)
    return np.asarray(canvas.buffer_rgba()).copy()


def test_a_stamped_line_has_the_pixels_of_a_direct_draw(scene):
    figure, ax, texts, background = scene
    direct = _paint(figure, ax, texts, background, None)
    stamps = TextStamps(figure.canvas.get_renderer())
    first = _paint(figure, ax, texts, background, stamps)  # every line rendered on its own canvas
    again = _paint(figure, ax, texts, background, stamps)  # every line from its stamp
    lines = len(textwrap.fill(WARNING, 36).splitlines()) + 3
    assert (stamps.misses, stamps.hits) == (lines, lines)
    assert not np.array_equal(direct, np.asarray(background)), "the texts painted nothing: the test checks nothing"
    np.testing.assert_array_equal(first, direct)
    np.testing.assert_array_equal(again, direct)


def test_a_changed_line_is_rendered_again_never_taken_from_the_old_stamp(scene):
    figure, ax, texts, background = scene
    stamps = TextStamps(figure.canvas.get_renderer())
    old = _paint(figure, ax, texts, background, stamps)
    texts[0].set_text(textwrap.fill(WARNING.replace("0.00923", "0.00824"), 36))  # one digit of one line
    texts[1].set_color("#009E73")  # the same string in another colour
    misses = stamps.misses
    new = _paint(figure, ax, texts, background, stamps)
    assert stamps.misses == misses + 2  # the changed line and the recoloured clock; the other lines are kept
    np.testing.assert_array_equal(new, _paint(figure, ax, texts, background, None))
    assert not np.array_equal(new, old)


def test_the_stamps_follow_the_renderer_and_give_its_draw_text_back(scene):
    figure, ax, texts, background = scene
    renderer = figure.canvas.get_renderer()
    stamps = TextStamps(renderer, capacity=2)
    with stamps.installed():
        assert renderer.draw_text == stamps.draw_text
        with stamps.installed():  # nested: the outer block keeps it
            pass
        assert renderer.draw_text == stamps.draw_text
    assert "draw_text" not in vars(renderer)
    _paint(figure, ax, texts, background, stamps)
    assert len(stamps) == 2, "the least recently used stamps beyond `capacity` are dropped"
    with pytest.raises(TypeError, match="`renderer`"):
        TextStamps(object())
    with pytest.raises(ValueError, match="`capacity`"):
        TextStamps(renderer, capacity=0)


def _pendulum() -> udk.Model:
    x, y = dynamicsymbols("x y")
    m, g, l = sm.symbols("m g l", positive=True)
    return udk.Model([x, y], kinetic_energy=m * (x.diff() ** 2 + y.diff() ** 2) / 2, potential_energy=m * g * y,
                     holonomic=[x**2 + y**2 - l**2], parameters={m: 1.0, g: 9.81, l: 1.0})


def test_the_explorers_drift_warning_shows_the_run_on_screen_not_a_kept_one():
    """Each slider change gives the warning new numbers; the figure must show them, as a fresh draw does."""
    explorer = udk.explore(_pendulum(), lambda l: ([l * math.sin(1.0), -l * math.cos(1.0)], [0.0, 0.0]),
                           t_end=2.0, method="euler", step=0.02, panels=("coordinates",))
    canvas = explorer.figure.canvas
    shown = []
    for length in (1.0, 0.8):
        explorer.set(l=length)
        assert explorer.error == "" and explorer.warning.startswith("Not to be trusted"), explorer.warning
        shown.append((explorer._warning.get_text(), np.asarray(canvas.buffer_rgba()).copy()))
    (old_text, old_pixels), (new_text, new_pixels) = shown
    assert old_text != new_text, "the two runs must differ in their warning: the test would check nothing"
    assert explorer._stamps.hits > 0, "no line of the warning came from a stamp: nothing cached to go stale"
    explorer._stamps = None  # a fresh set of stamps: every line rendered anew
    canvas.draw()
    np.testing.assert_array_equal(new_pixels, np.asarray(canvas.buffer_rgba()))
    assert not np.array_equal(new_pixels, old_pixels)


def _direct_and_stamped(figure, ax, texts, background, stamps):
    """The canvas painted directly, then from the stamps (which the call may fill)."""
    return _paint(figure, ax, texts, background, None), _paint(figure, ax, texts, background, stamps)


@pytest.mark.parametrize("change", ["alpha", "size", "subpixel", "whole pixel"])
def test_a_line_drawn_otherwise_is_never_painted_from_the_old_stamp(change):
    """The same string again after one property changed: the pixels are those of a direct draw.

    Every property the glyphs' pixels depend on is in a stamp's key (translucency, size, the
    sub-pixel offset); a shift by whole pixels only moves the stamp (it is a hit, not a miss).
    """
    from matplotlib.transforms import IdentityTransform

    figure, ax = plt.subplots(figsize=(4.0, 3.0), dpi=100)
    ax.plot([0, 1], [0, 1], lw=30)  # text over a line: a stamp's alpha is seen against it
    text = ax.text(100.25, 140.4, "t = 1.25 s, $F^N$", transform=IdentityTransform(), fontsize=9, alpha=0.6,
                   color="#0072B2", animated=True)
    canvas = figure.canvas
    canvas.draw()
    background = canvas.copy_from_bbox(figure.bbox)
    stamps = TextStamps(canvas.get_renderer())
    try:
        direct, stamped = _direct_and_stamped(figure, ax, [text], background, stamps)
        np.testing.assert_array_equal(stamped, direct)  # a translucent line: its alpha applied once
        np.testing.assert_array_equal(_paint(figure, ax, [text], background, stamps), direct)
        assert stamps.hits >= 1
        {"alpha": lambda: text.set_alpha(0.3), "size": lambda: text.set_fontsize(10),
         "subpixel": lambda: text.set_position((100.6, 140.9)),
         "whole pixel": lambda: text.set_position((103.25, 137.4))}[change]()
        misses = stamps.misses
        direct, stamped = _direct_and_stamped(figure, ax, [text], background, stamps)
        assert not np.array_equal(direct, np.asarray(background)), "the text painted nothing"
        np.testing.assert_array_equal(stamped, direct)
        assert stamps.misses == misses + (change != "whole pixel")
    finally:
        plt.close(figure)


def test_a_line_too_tall_for_its_own_canvas_is_drawn_directly():
    """Nested fractions reach past the three ems a stamp's canvas gives a line: no stamp, the direct pixels."""
    figure, ax = plt.subplots(figsize=(4.0, 3.0), dpi=100)
    tower = r"$\frac{1}{\frac{2}{\frac{3}{\frac{4}{\frac{5}{6}}}}}$"
    text = ax.text(0.3, 0.5, tower, transform=ax.transAxes, fontsize=12, animated=True)
    canvas = figure.canvas
    canvas.draw()
    background = canvas.copy_from_bbox(figure.bbox)
    stamps = TextStamps(canvas.get_renderer())
    try:
        for _ in range(2):
            direct, stamped = _direct_and_stamped(figure, ax, [text], background, stamps)
            np.testing.assert_array_equal(stamped, direct)
        assert list(stamps._stamps.values()) == [None]  # refused as a stamp, drawn directly each time
    finally:
        plt.close(figure)
