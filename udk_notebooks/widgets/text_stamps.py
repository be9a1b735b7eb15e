"""Text lines painted from images kept by content: the explorers' animated texts at blitting speed.

Agg renders text glyph by glyph through FreeType, and on this project's explorers that is the
dearest part of an update: the red warning box over a drifting run (five lines, about 150 glyphs)
took some 14 ms of every slider change, more than all the curves together. Most of those lines do
not change from one change to the next ("Not to be trusted:", the advice), and a clock that reads
``t = 0.00 s`` does not change at all while a parameter slider is dragged.

:class:`TextStamps` takes over the canvas renderer's ``draw_text`` while the explorer paints its
animated artists (:meth:`TextStamps.installed`): a line of text is rendered once on a small
transparent canvas of its own, kept as an RGBA image (a *stamp*), and from then on composited onto
the canvas (``draw_image``, a fraction of a millisecond) whenever the same line is drawn again in
the same font, colour and sub-pixel position. Everything else a text draws (its box, its layout, its
clipping) is matplotlib's own, and so is every other drawing call.

A stamp is exact: it is rendered at the same sub-pixel offset as the line it stands for (FreeType
places each glyph at 1/64 pixel), then put down at a whole-pixel shift, so its pixels are
those a direct draw makes (tests/test_text_stamps.py compares them exactly). The key holds
everything the glyphs' pixels depend on (the string, font properties, angle, colour and alpha,
anti-aliasing, hinting settings, dpi and sub-pixel offset), so a stamp can never show a stale line:
a changed string is another key.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from contextlib import contextmanager
from typing import Iterator

import matplotlib as mpl
import numpy as np
from matplotlib.backends.backend_agg import RendererAgg

__all__ = ["TextStamps"]

PAD_PX = 4
"""Pixels of transparent margin around the room a line's own canvas gives it (glyph overhang, hinting)."""


class TextStamps:
    """The text lines an Agg renderer draws, kept as images and painted from them (see the module's docstring).

    Parameters
    ----------
    renderer : matplotlib.backends.backend_agg.RendererAgg
        The canvas's renderer (the one the explorer's cached pixels come from).
    capacity : int, optional
        Stamps kept; the least recently used goes first (a slider that runs through many values
        would otherwise keep every line it ever showed).

    Attributes
    ----------
    hits, misses : int
        Lines painted from a stamp, and lines rendered (for tests and benchmarks).
    """

    def __init__(self, renderer: RendererAgg, capacity: int = 256):
        if not isinstance(renderer, RendererAgg):
            raise TypeError(f"`renderer` must be an Agg renderer; got {type(renderer).__name__}")
        if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 1:
            raise ValueError(f"`capacity` must be a whole number of at least 1; got {capacity!r}")
        self.renderer = renderer
        self.capacity = capacity
        self._stamps: OrderedDict[tuple, tuple[int, int, np.ndarray] | None] = OrderedDict()
        self.hits = 0
        self.misses = 0

    @contextmanager
    def installed(self) -> Iterator["TextStamps"]:
        """Within the block, the renderer's ``draw_text`` paints from stamps (the renderer's own method again after)."""
        renderer = self.renderer
        if "draw_text" in vars(renderer):  # already installed (a nested block): leave it to the outer one
            yield self
            return
        renderer.draw_text = self.draw_text
        try:
            yield self
        finally:
            del renderer.draw_text

    def _direct(self, gc, x, y, s, prop, angle, ismath=False, mtext=None) -> None:
        """The renderer's own draw_text (its class's: the instance's may be this object's)."""
        type(self.renderer).draw_text(self.renderer, gc, x, y, s, prop, angle, ismath=ismath, mtext=mtext)

    def draw_text(self, gc, x, y, s, prop, angle, ismath=False, mtext=None) -> None:
        """Paint one line of text: from its stamp when there is one, else render it and keep the stamp."""
        renderer = self.renderer
        if angle or not (math.isfinite(x) and math.isfinite(y)):
            self._direct(gc, x, y, s, prop, angle, ismath=ismath, mtext=mtext)  # rotated: rare, drawn as is
            return
        # Agg's draw_text takes y downwards from the top (Text.draw flips it): (col, row) is the whole pixel
        # at the line's position, and the stamp goes down at the same place relative to it.
        col, row = math.floor(x), math.floor(y)
        key = _key(gc, s, prop, ismath, mtext, renderer.dpi, x - col, y - row)
        if key in self._stamps:
            self._stamps.move_to_end(key)
            stamp = self._stamps[key]
            self.hits += 1
        else:
            stamp = self._render(gc, x - col, y - row, s, prop, ismath, mtext)
            self._stamps[key] = stamp
            if len(self._stamps) > self.capacity:
                self._stamps.popitem(last=False)
            self.misses += 1
        if stamp is None:  # the line did not fit its own canvas (see _render): drawn directly every time
            self._direct(gc, x, y, s, prop, angle, ismath=ismath, mtext=mtext)
            return
        left, below, image = stamp
        if image.size == 0:
            return
        paste = renderer.new_gc()
        try:
            paste.copy_properties(gc)  # the text's clipping
            paste.set_alpha(1.0)  # the stamp holds the text's alpha already: draw_image must not apply it twice
            # draw_image places the image's lower left corner, y upwards from the canvas's bottom
            renderer.draw_image(paste, col + left, renderer.height - row - below, image)
        finally:
            paste.restore()

    def _render(self, gc, fx: float, fy: float, s, prop, ismath, mtext) -> tuple[int, int, np.ndarray] | None:
        """``(left, below, image)`` of a line drawn at sub-pixel offset ``(fx, fy)`` on a transparent canvas.

        The image's rows run bottom up (as ``draw_image`` takes them); its left column is ``left``
        pixels right of the line's whole-pixel position and its bottom edge ``below`` pixels under it
        (rows counted downwards). None when some glyph reached the edge of the line's canvas (a glyph
        wider than the room given, a tall formula): such a line is not stamped.
        """
        # A canvas sized from the font, not measured (measuring a line costs as much as drawing it): a
        # glyph is at most about one em wide, and three ems of height hold a line with superscripts. A line
        # that still reaches an edge (see below) is not stamped.
        em = prop.get_size_in_points() * self.renderer.dpi / 72.0
        canvas_w = int(math.ceil(em * (len(s) + 2))) + 2 * PAD_PX
        canvas_h = int(math.ceil(3 * em)) + 2 * PAD_PX
        # The line's position (its baseline's left end, y downwards) is a whole pixel on this canvas, so that
        # the sub-pixel offset here is exactly the one on the figure.
        origin_col, origin_row = PAD_PX + int(math.ceil(em)), PAD_PX + int(math.ceil(2 * em))
        own = RendererAgg(canvas_w, canvas_h, self.renderer.dpi)
        pen = own.new_gc()
        try:
            pen.copy_properties(gc)
            pen.set_clip_rectangle(None)  # the figure's clipping applies when the stamp is put down
            pen.set_clip_path(None)
            own.draw_text(pen, origin_col + fx, origin_row + fy, s, prop, 0.0, ismath=ismath, mtext=mtext)
        finally:
            pen.restore()
        pixels = np.asarray(own.buffer_rgba())
        alpha = pixels[..., 3]
        rows, cols = np.flatnonzero(alpha.any(axis=1)), np.flatnonzero(alpha.any(axis=0))
        if rows.size == 0:  # nothing painted (spaces only): an empty stamp
            return 0, 0, np.zeros((0, 0, 4), np.uint8)
        top, bottom, left, right = rows[0], rows[-1], cols[0], cols[-1]
        if top == 0 or left == 0 or bottom == canvas_h - 1 or right == canvas_w - 1:
            return None
        image = np.ascontiguousarray(pixels[top:bottom + 1, left:right + 1][::-1])
        return left - origin_col, bottom + 1 - origin_row, image

    def __len__(self) -> int:
        return len(self._stamps)


def _key(gc, s, prop, ismath, mtext, dpi, fx: float, fy: float) -> tuple:
    """Everything the pixels of one line depend on (see the module's docstring)."""
    features = language = None
    if mtext is not None:
        features = tuple(mtext.get_fontfeatures() or ()) if hasattr(mtext, "get_fontfeatures") else None
        language = mtext.get_language() if hasattr(mtext, "get_language") else None
    font = (tuple(prop.get_family()), prop.get_style(), prop.get_variant(), prop.get_weight(), prop.get_stretch(),
            prop.get_size_in_points(), prop.get_file(), prop.get_math_fontfamily())
    # The sub-pixel offsets exactly, not rounded: FreeType rounds each glyph's own position, so two offsets
    # within one 1/64 pixel can still place a glyph differently.
    return (s, font, ismath, tuple(gc.get_rgb()), gc.get_alpha(), bool(gc.get_antialiased()), dpi, fx, fy,
            mpl.rcParams["text.hinting"], mpl.rcParams["text.hinting_factor"], features, language)
