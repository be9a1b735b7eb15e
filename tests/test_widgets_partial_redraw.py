"""An update that moves one panel's limits redraws that panel alone, to the same pixels as a full draw."""

from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
from PIL import Image

from udk_notebooks.widgets import EXPLORERS


def _pixels(explorer) -> np.ndarray:
    return np.asarray(explorer.figure.canvas.buffer_rgba()).copy()


@pytest.mark.parametrize("name, kwargs", [("kepler", {"samples": 41}), ("double_pendulum", {"samples": 41})])
def test_partial_redraw_matches_a_full_draw(name, kwargs):
    explorer = EXPLORERS[name](**kwargs)
    figure = explorer.figure
    full_draws = []
    figure.canvas.mpl_connect("draw_event", lambda event: full_draws.append(1))
    names = [n for n in explorer.parameters if not isinstance(explorer.controls[n].value, str)]
    rng = np.random.default_rng(3)
    partial = 0
    for step in range(12):
        slider = explorer.controls[names[step % len(names)]]
        limits = [(ax.get_xlim(), ax.get_ylim()) for ax in figure.axes]
        before = len(full_draws)
        slider.value = float(np.clip(slider.value + (slider.max - slider.min) * rng.uniform(-0.2, 0.2),
                                     slider.min, slider.max))
        assert not explorer.error
        moved = sum(old != (ax.get_xlim(), ax.get_ylim()) for old, ax in zip(limits, figure.axes))
        if len(full_draws) > before or not moved:
            continue
        partial += 1  # some limits moved and the figure was not drawn in full: only those axes were
        shown = _pixels(explorer)
        assert np.array_equal(np.asarray(Image.open(io.BytesIO(explorer.png))), shown)  # the PNG on screen
        figure.canvas.draw()
        assert np.array_equal(shown, _pixels(explorer)), f"step {step}: the partial redraw differs from a full draw"
    assert partial >= 2, "no update redrew some axes alone: the test checked nothing"


def test_a_new_horizon_redraws_every_time_panel():
    explorer = EXPLORERS["kepler"](samples=41)
    explorer.set(horizon=12.0)
    time_axes = explorer.figure.axes[2]
    assert time_axes.get_xlim() == (0.0, 12.0)
    shown = _pixels(explorer)
    explorer.figure.canvas.draw()
    assert np.array_equal(shown, _pixels(explorer))


def test_keys_are_painted_once_yet_the_pixels_equal_a_full_draw():
    """A panel's key does not change from run to run: a blit leaves it in the cached pixels, not redrawn."""
    explorer = EXPLORERS["double_pendulum"](samples=41)
    figure = explorer.figure
    legends = [ax.get_legend() for ax in figure.axes if ax.get_legend() is not None]
    assert len(legends) == 4  # the force key under the mechanism and one key per panel
    drawn = []
    for legend in legends:
        legend.draw = (lambda draw: lambda renderer: (drawn.append(1), draw(renderer)))(legend.draw)
    full_draws = []
    figure.canvas.mpl_connect("draw_event", lambda event: full_draws.append(1))
    blits = 0
    for name, value in [("frame", 10), ("frame", 30), ("m2", explorer.values["m2"] * 1.01), ("frame", 5),
                        ("g", explorer.values["g"] - 0.01)]:
        limits = [(ax.get_xlim(), ax.get_ylim()) for ax in figure.axes]
        before_draws, before_legends = len(full_draws), len(drawn)
        explorer.set(**{name: value})
        assert not explorer.error
        if len(full_draws) > before_draws or limits != [(ax.get_xlim(), ax.get_ylim()) for ax in figure.axes]:
            continue  # a full or partial draw paints the keys with their axes
        blits += 1
        assert len(drawn) == before_legends, f"{name}: a blit drew a key again"
        shown = _pixels(explorer)
        figure.canvas.draw()
        assert np.array_equal(shown, _pixels(explorer)), f"{name}: the blit differs from a full draw"
    assert blits >= 3, "no update was a blit: the test checked nothing"
    assert legends[0].get_window_extent().y1 < figure.axes[0].bbox.y0  # the keys sit under their axes
    assert all(legend.get_window_extent().y1 < legend.axes.bbox.y0 for legend in legends)


def _redraw_with_limits(explorer, ax, ylim) -> bool:
    """Move one panel's y view by hand and render as an update does; True when that drew the whole figure."""
    figure = explorer.figure
    full_draws = []
    cid = figure.canvas.mpl_connect("draw_event", lambda event: full_draws.append(1))
    try:
        with explorer._quiet():
            ax.set_ylim(*ylim)
            explorer._show()
    finally:
        figure.canvas.mpl_disconnect(cid)
    return bool(full_draws)


def _matches_a_full_draw(explorer) -> None:
    shown = _pixels(explorer)
    assert np.array_equal(np.asarray(Image.open(io.BytesIO(explorer.png))), shown)  # the PNG on screen
    explorer.figure.canvas.draw()
    assert np.array_equal(shown, _pixels(explorer)), "the redraw differs from a full draw"


def test_tick_labels_that_fit_their_cell_redraw_one_panel_and_wider_ones_lay_out_again():
    """A panel's cell is fixed at the full draw: narrower tick labels are redrawn in it, much wider ones are not."""
    explorer = EXPLORERS["kepler"](samples=41)
    ax = explorer.figure.axes[1]  # force against distance: y tick labels on the left, next to the mechanism
    assert not _redraw_with_limits(explorer, ax, (0.0, 1.0))
    _matches_a_full_draw(explorer)  # a full draw fixes the cells for labels "0.0" ... "1.0"
    cells = explorer._cells
    assert not _redraw_with_limits(explorer, ax, (0.0, 10.0))  # "0" ... "10": narrower, redrawn in the cell
    assert explorer._cells is cells
    _matches_a_full_draw(explorer)
    cells = explorer._cells
    assert _redraw_with_limits(explorer, ax, (-123456.0, 123456.0))  # "-100000": wider than the cell
    assert explorer._cells is not cells  # laid out again
    _matches_a_full_draw(explorer)


def test_an_offset_text_appearing_and_going_matches_a_full_draw():
    explorer = EXPLORERS["double_pendulum"](samples=41)
    ax = explorer.figure.axes[2]  # energy change
    for ylim in [(-3e-7, 4e-7), (-2.0, 2.0), (1.0e6 + 1.0, 1.0e6 + 3.0), (-1.0, 1.0)]:
        _redraw_with_limits(explorer, ax, ylim)
        offset = ax.yaxis.get_offset_text().get_text()
        assert bool(offset) == (abs(ylim[0]) < 1e-3 or ylim[0] > 1e5), (ylim, offset)
        _matches_a_full_draw(explorer)


def test_a_panel_redrawn_alone_puts_its_unchanged_key_back_without_drawing_it():
    explorer = EXPLORERS["double_pendulum"](samples=41)
    figure = explorer.figure
    ax = figure.axes[3]  # pin reactions, with a key of two entries under it
    legend = ax.get_legend()
    assert explorer._cells[ax].key_pixels is not None  # its pixels are cached at the full draw
    drawn = []
    legend.draw = (lambda draw: lambda renderer: (drawn.append(1), draw(renderer)))(legend.draw)
    low, high = ax.get_ylim()
    for ylim in [(low, 2 * high), (low, 4 * high), (low, high)]:
        assert not _redraw_with_limits(explorer, ax, ylim)  # this panel alone
        assert drawn == [], "the key was drawn again"
        _matches_a_full_draw(explorer)  # which draws the key: the cached pixels are the same
        drawn.clear()
