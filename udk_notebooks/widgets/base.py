"""A small base class for interactive explorers: model function, controls, figure.

An explorer has three layers, in the spirit of mpl-interactions and ipympl:

1. **model** -- a plain function of named parameters, ``compute(**values) -> result``
   (for example a simulated :class:`~udk_notebooks.simulation.Trajectory`);
2. **controls** -- one :class:`ipywidgets.FloatSlider` per parameter, whose
   ``description`` is the parameter's name, any extra sliders (a time horizon),
   and a ``Play`` button linked in the browser (``jslink``) to the ``frame``
   slider that picks the animated instant;
3. **figure** -- created once by the subclass hook :meth:`Explorer.make_figure`
   (under ``plt.ioff()``); the hook :meth:`Explorer.draw` moves the existing
   artists (``set_data``, ``set_offsets``, ``set_UVC``, ...) and never creates new ones.

A failed computation never escapes a callback: its message appears in the
error area, and the figure and :attr:`Explorer.result` keep the last good result.

With the ipympl backend (``%matplotlib widget``) the figure canvas, itself a
widget, is embedded in the layout. With any other backend (inline, Agg, a
test without a front end) the explorer shows a PNG of the figure in an
:class:`ipywidgets.Output` and renders it again after every update.

Getting the figure to the browser does not rely on a request that can be lost:
the ipympl canvas receives its first frame as soon as its front end says it is
there ("initialized") and, until then, on a timer (:data:`FIRST_FRAME_RETRIES_S`);
the PNG states its size, so the page keeps its place while the image decodes,
and it takes no pointer events, so a press that lands on it cannot start a
native image drag that cancels a slider drag. Each display also shows
:data:`OFFLINE_NOTE`, hidden by the live explorer's style, which tells the
student to run the cell when the notebook is reopened without its kernel.

Updates are drawn by **blitting**, as in Matplotlib's "Faster rendering by
using blitting" tutorial. The artists a subclass lists in
:meth:`Explorer.animated_artists` are marked animated: a full draw leaves them
out, the explorer copies each of their axes' pixels (frame, ticks, labels,
titles: everything static) and then paints them on top. An update restores
those copies and paints only the animated artists, then blits (ipympl) or
re-encodes the Agg buffer (PNG route). The lines of animated texts are painted from images kept
while they read the same (:mod:`~udk_notebooks.widgets.text_stamps`): Agg renders glyph by glyph, and a
warning box cost more than every curve together. When some axes changed (new view limits),
only those axes are drawn again, each within its fixed cell: the pixels its frame,
ticks, labels and titles took at the last full draw, with a little room; its key
(legend), which never changes, is put back from cached pixels. A full draw
happens on the first draw, after a resize, when a figure-level artist changed, or
when new tick labels outgrow their cell (the next layout). The views follow the
data with hysteresis (:func:`fit_view`, :func:`~udk_notebooks.widgets.views.fit_log_view`, fed by
:meth:`Explorer.data_limits`), so small slider moves keep the limits, and the
cached pixels stay valid.
"""

from __future__ import annotations

import base64
import html
import io
import math
import os
import re
import struct
import weakref
import zlib
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping, Sequence

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from matplotlib.spines import Spine
from matplotlib.transforms import Bbox, IdentityTransform

from .._kept_code import write_changed
from .._comm_thread import serve_comms_on_main_thread
from .text_stamps import TextStamps
from .views import fit_aspect_views, fit_view, slider_step

__all__ = ["Explorer", "ParameterSpec", "has_widget_canvas", "parameter_table"]

ParameterSpec = tuple[Any, tuple, str]
"""One row of an explorer's parameter table: ``(default, (lo, hi), description)`` for a
slider, or ``(default, ("choice", ...), description)`` for a row of buttons (the
options are strings and ``default`` is one of them)."""


def parameter_table(
    parameters: Mapping[str, Any],
    rename: Mapping[str, str] | None = None,
    order: tuple[str, ...] | None = None,
    units: Mapping[str, str] | None = None,
) -> dict[str, ParameterSpec]:
    """An explorer's parameter table from an example's ``PARAMETERS``.

    Parameters
    ----------
    parameters : mapping of str to Parameter
        An example module's table (:class:`udk_notebooks.examples.Parameter`
        rows with ``default``, ``bounds`` and ``description``), or rows that
        already have the form ``(default, (lo, hi), description)``.
    rename : mapping of str to str, optional
        Control names for model parameter names, e.g. ``{"k": "slope"}``.
    order : tuple of str, optional
        Control names in the order the sliders should appear (default: the
        table's order).
    units : mapping of str to str, optional
        SI unit per model parameter name, appended to its description (the
        slider's tooltip), e.g. ``{"m": "kg"}``.

    Returns
    -------
    dict of str to (float, (float, float), str)
    """
    rename, units = dict(rename or {}), dict(units or {})
    for argument, names in (("rename", rename), ("units", units)):
        unknown = set(names) - set(parameters)
        if unknown:
            raise ValueError(f"`{argument}` names unknown parameter(s) {', '.join(sorted(unknown))}")
    table = {}
    for name, row in parameters.items():
        if hasattr(row, "default"):
            row = (row.default, row.bounds, row.description)
        if name in units:
            row = (row[0], row[1], f"{row[2]}, in {units[name]}")
        table[rename.get(name, name)] = _check_row(rename.get(name, name), row)
    if order is not None:
        if sorted(order) != sorted(table):
            raise ValueError(f"`order` must list each of {', '.join(table)} once; got {', '.join(order)}")
        table = {name: table[name] for name in order}
    return table


def _check_row(name: str, row) -> ParameterSpec:
    try:
        default, options, description = row
    except (TypeError, ValueError) as exc:
        raise ValueError(f"parameter `{name}` must be (default, (lo, hi), description); got {row!r}") from exc
    if isinstance(options, (tuple, list)) and options and all(isinstance(o, str) for o in options):
        if default not in options:
            raise ValueError(f"parameter `{name}`: the default {default!r} must be one of {', '.join(map(repr, options))}")
        return default, tuple(options), str(description)
    try:
        default, (lo, hi), description = row
        default, lo, hi = float(default), float(lo), float(hi)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"parameter `{name}` must be (default, (lo, hi), description); got {row!r}") from exc
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi and lo <= default <= hi):
        raise ValueError(f"parameter `{name}` needs finite bounds lo < hi around its default; got {row!r}")
    return default, (lo, hi), str(description)


_UNIT_WORDS = {"seconds": "s", "second": "s", "radians": "rad", "metres": "m", "meters": "m"}
_UNIT_AT_END = re.compile(r"(?:^|,)\s*in\s+([A-Za-z0-9/^ .]{1,14}?)\s*(?:\(.*\))?\s*$")


def unit_of(description: str) -> str | None:
    """The SI unit a control's description ends with (``"mass of the ball, in kg"`` -> ``"kg"``), or None.

    The unit is the last ", in ..." of the description, a remark in parentheses after it left
    out (``"in 1 (dimensionless)"`` -> ``"1"``); a unit spelled out (``"in seconds"``) is
    written as its symbol. Shown after the control's name on its slider, ``m (kg)``.
    """
    if not isinstance(description, str):
        raise TypeError(f"`description` must be a string; got {type(description).__name__}")
    match = _UNIT_AT_END.search(description)
    if match is None:
        return None
    unit = match.group(1).strip()
    return _UNIT_WORDS.get(unit, unit) or None


READOUT_DECIMALS = 2
"""Decimals every slider's readout shows at least, so that the readouts of one explorer read alike
("0.00" beside "1.00", not "0.0"); a finer step shows more, one digit per decimal of the step."""


def readout_decimals(step: float) -> int:
    """Decimals of a slider's readout: those of its ``step`` (each position reads differently), at least
    :data:`READOUT_DECIMALS` (readouts of neighbouring sliders line up).

    >>> readout_decimals(0.1), readout_decimals(0.01), readout_decimals(0.0001)
    (2, 2, 4)
    """
    if not (isinstance(step, (int, float, np.floating)) and math.isfinite(step) and step > 0):
        raise ValueError(f"`step` must be a positive finite number; got {step!r}")
    return max(READOUT_DECIMALS, -int(math.floor(math.log10(step) + 1e-9)))


def _count(value, name: str, least: int = 1) -> int:
    """A whole number of at least ``least``, or a ValueError naming the argument."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer, float, np.floating)) \
            or not float(value).is_integer() or value < least:
        raise ValueError(f"`{name}` must be a whole number of at least {least}; got {value!r}")
    return int(value)


_BY_CELL: "weakref.WeakValueDictionary[str, Explorer]" = weakref.WeakValueDictionary()
"""The explorer each notebook cell built last, by the cell id of the execute request."""


def _current_cell_id() -> str | None:
    try:
        from IPython import get_ipython

        kernel = getattr(get_ipython(), "kernel", None)
        parent = kernel.get_parent() if kernel is not None else None
        return (parent or {}).get("metadata", {}).get("cellId")
    except Exception:  # no kernel, or one that does not say: nothing to replace
        return None


def _descendants(widget) -> list:
    """``widget`` and every widget inside it (children of boxes), innermost first."""
    found = []
    for child in getattr(widget, "children", ()):
        found += _descendants(child)
    return found + [widget]


PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
PNG_ZLIB_LEVEL = 1
"""zlib's fastest level: the PNG is encoded on every update of the PNG route, and a figure of flat colour
compresses well at any level (the double pendulum's explorer: level 6 took twice as long for 14 % fewer bytes)."""


def _encode_png(rgba: np.ndarray) -> bytes:
    """A PNG of an RGBA image, shape (height, width, 4), 8 bits per channel.

    Written here rather than by Pillow, which spent most of its time choosing a filter for each row
    (adaptive filtering): rows go unfiltered (filter type 0; PNG specification, ISO/IEC 15948, sections
    9 and 11.2.2), which for a figure of flat colour makes a smaller file in half the time (the double
    pendulum's explorer: 77 kB in 3.5 to 4 ms against Pillow's 90 kB in 8.6 ms).
    """
    rgba = np.asarray(rgba)
    if rgba.dtype != np.uint8 or rgba.ndim != 3 or rgba.shape[2] != 4 or not (rgba.shape[0] and rgba.shape[1]):
        raise ValueError(f"`rgba` must be a non-empty uint8 array of shape (height, width, 4); got "
                         f"{rgba.dtype} {rgba.shape}")
    height, width = rgba.shape[:2]
    rows = np.empty((height, 1 + 4 * width), dtype=np.uint8)
    rows[:, 0] = 0  # each row starts with its filter type: none
    rows[:, 1:] = rgba.reshape(height, 4 * width)
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)  # 8 bits, colour type 6 (RGBA), no interlace
    return b"".join([PNG_SIGNATURE, _png_chunk(b"IHDR", header),
                     _png_chunk(b"IDAT", zlib.compress(rows.data, PNG_ZLIB_LEVEL)), _png_chunk(b"IEND", b"")])


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    """One PNG chunk: length, type, data and the CRC-32 of type and data."""
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


OFFLINE_NOTE = (
    '<div class="udk-explorer-offline" style="padding:0.4em 0.6em; border-left:3px solid #0072B2; '
    'background:#f3f7fb">This explorer needs a running kernel: run this cell (Shift+Enter) to bring it back.</div>'
)
"""Shown beside every explorer; the live explorer's style hides it, so it shows only where the
explorer cannot come back by itself (a reopened notebook: "Error displaying widget: model not found")."""


# Front-end handshake of the ipympl canvas: the kernel sends the first frame unasked right after the
# explorer is shown (0 s: once the cell has run), then after each of these waits in turn until the front
# end has said "initialized" and a frame went out after it. The waits double, so a page that takes a
# minute to build its widgets (a loaded server) still gets frames, and a kernel that no page ever
# connects to (a notebook run headless, a Voila page closed early) stops after about two minutes.
FIRST_FRAME_RETRIES_S = (0.0, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0)
DELIVERY_FAILED = "Cannot send the figure to the browser"  # headline in the error area


CONTROL_WIDTH = "344px"
"""Width of one control: the name (56 px), a slider track of about 200 px and the readout (48 px)."""

LABEL_CHAR_PX = 7.5  # width of a character of a slider's name, in pixels (JupyterLab's 13 px sans-serif)


def _control_width(label: str) -> str:
    """:data:`CONTROL_WIDTH`, wider by what a long name (with its unit, ``k1 (N m/rad)``) takes past 56 px,
    so that the track keeps its width."""
    extra = max(0, math.ceil(LABEL_CHAR_PX * len(label)) - 56)
    return f"{int(CONTROL_WIDTH[:-2]) + extra}px"

EXPLORER_CSS = """
.jp-OutputArea:has(.udk-explorer) .udk-explorer-offline { display: none; }
/* The PNG of the figure takes no pointer: a press that lands on it (the layout moved, a touch
   that began on it) can then never start a native image drag, which cancels the pointer
   (pointercancel) and with it the slider drag in progress. */
.udk-explorer .udk-explorer-figure img { pointer-events: none; -webkit-user-drag: none; user-select: none; }
.udk-explorer { gap: 2px 12px; }
/* Drags must move values, not select the labels and readouts they pass over. */
.udk-explorer .udk-explorer-controls, .udk-explorer .udk-explorer-title { user-select: none; -webkit-user-select: none; }
.udk-explorer .udk-explorer-controls { gap: 0 8px; }
/* The figure takes its own width, never the whole row (the controls go beside it where they fit); in a
   narrow column it shrinks to the column (its aspect kept) instead of running past its edge. */
.udk-explorer .udk-explorer-figure { flex: 0 1 auto; max-width: 100%; min-width: 0; overflow-x: auto; }
.udk-explorer .udk-explorer-figure img { max-width: 100%; height: auto; }
.udk-explorer .udk-explorer-figure .jupyter-matplotlib-figure,
.udk-explorer .udk-explorer-figure .jupyter-matplotlib-canvas-container { max-width: 100%; min-width: 0; }
/* ipympl sizes its canvases in pixels (inline styles): let them scale down with the column. The lower
   canvas is laid out in the flow (so the box takes its scaled height), the upper one stays on top of it. */
.udk-explorer .udk-explorer-figure .jupyter-matplotlib-canvas-div {
  width: auto !important; height: auto !important; max-width: 100%; }
.udk-explorer .udk-explorer-figure .jupyter-matplotlib-canvas-div canvas {
  max-width: 100%; height: auto !important; }
.udk-explorer .udk-explorer-figure .jupyter-matplotlib-canvas-div canvas:first-child { position: relative !important; }
/* A slider keeps a usable track (190 px): its name (cut with an ellipsis, in full in its tooltip) and readout give way first. */
.udk-explorer .widget-slider .widget-label { width: 56px; flex-shrink: 1; min-width: 3em; }
.udk-explorer .widget-slider .slider-container { min-width: 190px; }
.udk-explorer .widget-slider .widget-readout { width: 48px; min-width: 48px; }
/* Display equations of the page scroll sideways in a narrow column instead of being cut. */
.jp-RenderedMarkdown mjx-container[display="true"], .jp-RenderedHTMLCommon mjx-container[display="true"] {
  display: block; max-width: 100%; overflow-x: auto; overflow-y: hidden; }
"""
"""The explorers' style sheet, shipped inside each explorer (an HTML widget with a ``<style>``), so it
works alike in JupyterLab, Voila and a notebook viewer without any set-up."""


def _style_widget() -> widgets.HTML:
    """An invisible HTML widget holding :data:`EXPLORER_CSS` (it styles every explorer on the page)."""
    style = widgets.HTML(f"<style>{EXPLORER_CSS}</style>", layout=widgets.Layout(display="none"))
    style.add_class("udk-explorer-style")
    return style


def has_widget_canvas(figure: Figure) -> bool:
    """True when the figure's canvas is itself a widget (the ipympl backend)."""
    return isinstance(figure.canvas, widgets.DOMWidget)


class Explorer:
    """Sliders for a model's parameters, wired to a figure updated in place.

    Subclasses implement :meth:`make_figure` and :meth:`draw` (and, to animate
    cheaply, :meth:`draw_frame`). To be redrawn by blitting they also list their
    moving artists in :meth:`animated_artists` and the data each view must show in
    :meth:`data_limits`; without these every update is a full draw.

    Parameters
    ----------
    compute : callable
        ``compute(**values) -> result``, called with every parameter and extra
        control by name. Any exception it raises is shown in the error area.
    parameters : mapping of str to (default, (lo, hi), description)
        One slider per entry, labelled with the name (see :func:`parameter_table`).
    extra : mapping of str to (default, (lo, hi), description), optional
        Further sliders passed to ``compute`` the same way (e.g. a time horizon).
    frames : int, optional
        Positions of the ``frame`` slider that picks the animated instant.
    continuous_update : bool, optional
        Recompute while a slider is dragged. Default: on with the ipympl
        canvas, off when the figure travels as a PNG.
    title : str, optional
        A heading shown above the figure (HTML allowed).

    Attributes
    ----------
    widget : ipywidgets.Box
        The whole explorer, a wrapping row (:meth:`_layout`); displaying the explorer displays this.
    controls : dict of str to ipywidgets widget
        The sliders by name: parameters, extras and ``"frame"``.
    play : ipywidgets.Play
        Animates ``controls["frame"]`` in the browser.
    view : ipywidgets widget
        The figure on screen: the ipympl canvas, or an Output holding a PNG.
    error_area : ipywidgets.HTML
        The message of the last failed update (empty while all is well).
    """

    frames: int = 101
    play_interval: int = 50  # milliseconds between animation frames
    # Explorers that integrate several runs per update recompute when a slider is released, not while
    # it is dragged (their target is 250 ms per update instead of 50 ms; benchmarks/explorer_update.py).
    updates_on_release: bool = False
    # How views follow the data (see fit_view): room added around the data when a view changes,
    # the least distance of the data from the view's ends, the least share of the view it fills.
    view_margin: float = 0.25
    view_inset: float = 0.05
    view_shrink: float = 0.25
    # A unit written after a control's name on its slider, e.g. {"theta0": "rad", "mu_floor": "1"} shows
    # "theta0 (rad)"; the control keeps its name in `controls` and `values`. A slider left out here shows
    # the unit its description ends with ("..., in kg": see unit_of), if any.
    control_units: Mapping[str, str] = {}

    def __init__(
        self,
        compute: Callable[..., Any],
        parameters: Mapping[str, ParameterSpec],
        *,
        extra: Mapping[str, ParameterSpec] | None = None,
        frames: int | None = None,
        continuous_update: bool | None = None,
        title: str = "",
    ):
        if not callable(compute):
            raise TypeError(f"`compute` must be callable; got {type(compute).__name__}")
        # Widget messages (slider moves, ipympl's requests) on the kernel's main thread: with kernel
        # subshells they came on another thread and drew with Matplotlib while a cell did (_comm_thread).
        serve_comms_on_main_thread()
        self.compute = compute
        self.parameters = {name: _check_row(name, row) for name, row in parameters.items()}
        self.extra = {name: _check_row(name, row) for name, row in (extra or {}).items()}
        clash = set(self.parameters) & set(self.extra) | ({"frame"} & (set(self.parameters) | set(self.extra)))
        if clash:
            raise ValueError(f"control names must be unique and not 'frame'; repeated: {', '.join(sorted(clash))}")
        self.frames = _count(frames if frames is not None else type(self).frames, "frames")
        self._result = None
        self._error = ""
        self._hold = False
        self._closed = False
        self._renderer = None  # the renderer of the last full draw: its pixels are the cached ones
        self._backgrounds = ({}, {})  # per axes: pixels without animated artists, and with the result ones
        self._cells: dict[Axes, _Cell] = {}  # per axes: the pixels it paints, fixed at the last full draw
        self._stamps: TextStamps | None = None  # the animated texts' lines, kept as images (text_stamps)

        with plt.ioff():
            figure = self.make_figure()
        if not isinstance(figure, Figure):
            raise TypeError(f"make_figure() must return a matplotlib Figure; got {type(figure).__name__}")
        self._figure = figure
        self._live_canvas = has_widget_canvas(figure)
        if not self._live_canvas:
            # The PNG route owns the figure: pyplot must neither show it again nor count it as
            # open, and closing it detaches its canvas, so give it a fresh Agg canvas to draw on.
            plt.close(figure)
            FigureCanvasAgg(figure)
        if continuous_update is None:
            continuous_update = self._live_canvas and not self.updates_on_release
        self._moving = self._collect_animated()
        figure.canvas.mpl_connect("draw_event", self._on_full_draw)

        self.controls = {}
        unknown = set(self.control_units) - set(self.parameters) - set(self.extra)
        if unknown:
            raise ValueError(f"`control_units` names unknown control(s) {', '.join(sorted(unknown))}")
        for name, (default, options, description) in {**self.parameters, **self.extra}.items():
            unit = self.control_units.get(name) or (None if isinstance(options[0], str) else unit_of(description))
            label = f"{name} ({unit})" if unit else name
            self.controls[name] = self._make_control(label, default, options, description, continuous_update)
        frame = widgets.IntSlider(
            value=0, min=0, max=self.frames - 1, step=1, description="frame",
            tooltip="animated instant (0 = start, last = end of the horizon)",
            continuous_update=True, readout=True, layout=widgets.Layout(flex="1 1 300px", width="auto", min_width="0"),
        )
        self.controls["frame"] = frame
        # A PNG frame is encoded and sent whole (not as a diff), so that route animates at half the rate.
        interval = self.play_interval if self._live_canvas else 2 * self.play_interval
        self.play = widgets.Play(value=0, min=0, max=self.frames - 1, step=1, interval=interval,
                                 description="play", tooltip="animate the instant")
        self._link = widgets.jslink((self.play, "value"), (frame, "value"))
        for name, control in self.controls.items():
            control.observe(self._on_frame if name == "frame" else self._on_value, names="value")

        self.error_area = widgets.HTML(value="", layout=widgets.Layout(min_height="1.5em"))
        self.error_area.add_class("udk-explorer-error")
        if self._live_canvas:
            figure.canvas.header_visible = False
            self.view = figure.canvas
        else:
            self.view = widgets.Output()
        self.view.add_class("udk-explorer-figure")
        self.widget = self._layout(title)
        self._front_end_ready = False
        self._retries = list(FIRST_FRAME_RETRIES_S)
        self._retry_timer = None
        self._frames_pushed = 0  # full frames sent unasked (delivery_state)
        self._delivered = False  # a full frame went out after the front end said "initialized"
        self._delivery_error = ""  # why the last frame sent unasked could not be drawn
        self._area_before_delivery_error = ""
        if self._live_canvas:
            figure.canvas.on_msg(self._on_canvas_message)
            _ignore_degenerate_resizes(figure.canvas)
        self._update()
        self._replace_same_cell()

    # -- subclass hooks ------------------------------------------------------
    def make_figure(self) -> Figure:
        """Create the figure and every artist it will ever hold; return the figure.

        Called once, under ``plt.ioff()``. Use ``matplotlib.pyplot`` (so that
        ipympl gives the figure a widget canvas) and keep references to the
        artists for :meth:`draw`.
        """
        raise NotImplementedError

    def draw(self, result) -> None:
        """Move the artists to show ``result`` at frame :attr:`frame`.

        The explorer renders the figure afterwards (by blitting when only animated
        artists moved), so there is no need to call ``canvas.draw_idle()``.
        """
        raise NotImplementedError

    def draw_frame(self, result, frame: int) -> None:
        """Show another instant of the same result (default: :meth:`draw` again).

        Should move only the second group of :meth:`animated_artists`.
        """
        self.draw(result)

    def animated_artists(self) -> tuple[Sequence[Artist], Sequence[Artist]]:
        """The artists that move: ``(moved by draw, moved by draw_frame)`` (default: none).

        Called once, after :meth:`make_figure`. Each must belong to an axes; the explorer
        marks it animated and clips it to its axes. On an update it restores the static
        pixels of those axes, paints the first group, then the second (each in z-order),
        and on a frame change only the second, over the pixels of the first. Everything
        else must stay as it is between updates, or be changed in a way that makes the
        figure stale (``set_xlim``, ``set_text`` of a static text, ...), which costs a full draw.
        """
        return (), ()

    def data_limits(self, result) -> Mapping[Axes, tuple[tuple[float, float] | None, tuple[float, float] | None]]:
        """Per axes, the x and y intervals of ``result`` that must be visible (None: leave that axis alone).

        Called after :meth:`draw` with the same result. Cover every frame of it, so that
        animating never needs new limits. The explorer changes a view only when the data
        leave it or fill less than :attr:`view_shrink` of it (:func:`fit_view`); an axes
        with a fixed aspect ratio keeps the ratio of its two spans. Default: no axes
        follows the data.
        """
        return {}

    def view_options(self, ax: Axes) -> dict[str, float]:
        """How the views of ``ax`` follow the data: :func:`fit_view`'s ``margin``, ``inset`` and ``shrink``.

        Default: :attr:`view_margin`, :attr:`view_inset` and :attr:`view_shrink` for every axes.
        """
        return {"margin": self.view_margin, "inset": self.view_inset, "shrink": self.view_shrink}

    # -- public API ----------------------------------------------------------
    @property
    def figure(self) -> Figure:
        """The explorer's figure (the same object for the explorer's whole life)."""
        return self._figure

    @property
    def result(self):
        """The last result that was computed and drawn without error (None before the first)."""
        return self._result

    @property
    def error(self) -> str:
        """Message of the last failed update, or ``''`` when the figure is current."""
        return self._error

    @property
    def values(self) -> dict[str, float]:
        """Current parameter and extra values by name, as passed to ``compute``."""
        return {name: self._value(name) for name in (*self.parameters, *self.extra)}

    def _value(self, name: str):
        value = self.controls[name].value
        return value if isinstance(value, str) else float(value)

    @property
    def frame(self) -> int:
        """The animated instant, ``0 <= frame < frames``."""
        return int(self.controls["frame"].value)

    @property
    def live_canvas(self) -> bool:
        """True when the figure canvas is an ipympl widget embedded in the layout."""
        return self._live_canvas

    def frame_index(self, times) -> int:
        """Index of the sample in ``times`` nearest to the current frame's share of the time span."""
        times = np.asarray(times, dtype=float)
        if times.size < 2 or self.frames < 2:
            return 0
        target = times[0] + (times[-1] - times[0]) * self.frame / (self.frames - 1)
        index = int(np.searchsorted(times, target))
        if index >= times.size:
            return times.size - 1
        if index > 0 and target - times[index - 1] < times[index] - target:
            index -= 1
        return index

    def set(self, **values) -> "Explorer":
        """Set controls by name and update once (for tests and lessons).

        Values outside a slider's range are clipped to it, as a slider does.
        Unknown names raise a ValueError; computation errors do not raise,
        they appear in :attr:`error`.
        """
        unknown = set(values) - set(self.controls)
        if unknown:
            raise ValueError(f"unknown control(s) {', '.join(sorted(unknown))}; this explorer has {', '.join(self.controls)}")
        before = self.values
        frame_before = self.frame
        self._hold = True
        try:
            for name, value in values.items():
                self.controls[name].value = value
        finally:
            self._hold = False
        if self.values != before:
            self._update()
        elif self.frame != frame_before:
            self._update_frame()
        return self

    def refresh(self) -> "Explorer":
        """Compute and draw again with the current values."""
        self._update()
        return self

    def animation(self, **options):
        """A kernel-free animation of the current result (a :class:`~udk_notebooks.drawing.MechanismAnimation`).

        Shown instead of the sliders in a static export (``UDK_STATIC_EXPORT=1``,
        see :mod:`udk_notebooks.site`). Default: None (no mechanism to animate).
        """
        return None

    def close(self) -> None:
        """Release the explorer: its callbacks, widgets and figure (the object itself stays usable as data).

        Called for the explorer a re-run notebook cell replaces, so that re-running
        a cell does not pile up live explorers and open figures.
        """
        if self._closed:
            return
        self._closed = True
        self._stop_first_frame_retries()
        for name, control in self.controls.items():
            control.unobserve_all()
        self._link.unlink()
        for child in _descendants(self.widget):
            child.close()
        plt.close(self._figure)
        self._backgrounds = ({}, {})
        self._cells = {}
        self._renderer = None
        self._stamps = None

    @property
    def closed(self) -> bool:
        """True after :meth:`close`."""
        return self._closed

    def _repr_mimebundle_(self, **kwargs):
        return self.widget._repr_mimebundle_(**kwargs)

    def _ipython_display_(self):
        from IPython.display import HTML, Image, display

        if os.environ.get("UDK_STATIC_EXPORT") == "1":
            # A static page has no kernel to drive the sliders: show the figure and, where the
            # explorer has one, an animation that plays in the page.
            from .._alt_text import figure_alt_text

            # the alt text is the page's description of the figure for a screen reader
            display(Image(self._static_png(), metadata={"alt": figure_alt_text(self._figure)}))
            animation = self.animation() if self._result is not None else None
            if animation is not None:
                display(HTML(animation.to_jshtml()))
            return
        display(HTML(OFFLINE_NOTE))
        display(self.widget)
        self._start_first_frame_retries()

    def _static_png(self) -> bytes:
        buffer = io.BytesIO()
        self._figure.savefig(buffer, format="png")
        return buffer.getvalue()

    # -- first frame of the ipympl canvas --------------------------------------
    # ipympl draws only when the browser asks: the front end sends "refresh" and "initialized"
    # when its model is created, the kernel answers "draw", the browser asks for that draw, and
    # only then are pixels sent. A message lost on that chain (a loaded machine) left the canvas
    # blank for good. The explorer therefore sends the first frame itself, asked or not: just
    # after it is displayed (JupyterLab hands the frame to the canvas model once it exists), at
    # once when the front end says "initialized" (Voila's page connects long after the kernel ran
    # the notebook), and, until a frame has gone out after "initialized", again on a timer. A frame
    # that cannot be drawn says why in the error area and is tried again on the timer.
    def _on_canvas_message(self, canvas, content, buffers) -> None:
        """Runs after ipympl's own handler (which stops the data-URL sync and sends the size)."""
        if isinstance(content, dict) and content.get("type") == "initialized" and not self._closed:
            self._front_end_ready = True
            self._stop_first_frame_retries()
            self._delivered = self._push_frame()
            if not self._delivered:
                self._retries = self._retries or [FIRST_FRAME_RETRIES_S[-1]]
                self._start_first_frame_retries()

    def _push_frame(self) -> bool:
        """Send a full frame of the figure to the browser now, whether or not it asked for one.

        Returns False, with the reason in the error area, when the figure cannot be drawn.
        """
        canvas = self._figure.canvas
        syncing = getattr(canvas, "syncing_data_url", False)
        try:
            if syncing:
                # No "initialized" yet: give the browser the size it needs to show pixels, and keep
                # ipympl from storing this frame as its (prefix-less, so invalid) data URL.
                width, height = canvas.get_width_height(physical=True)
                canvas.manager.resize(width, height)
                canvas.syncing_data_url = False
            canvas._force_full = True  # the browser may hold no earlier frame to apply a diff to
            self._renderer = None
            with self._quiet():
                self._show()
        except Exception as exc:  # a timer or comm callback must not raise: say it where the figure is
            if not self._delivery_error:  # what the area said before (a compute error), to show again later
                self._area_before_delivery_error = self.error_area.value
            self._delivery_error = f"{type(exc).__name__}: {exc}"
            self.error_area.value = (
                f'<div style="color:#b00020; white-space:pre-wrap"><b>{DELIVERY_FAILED}</b>'
                f"<br>{html.escape(self._delivery_error, quote=False)}<br>Trying again; moving a slider also "
                "redraws it.</div>"
            )
            return False
        finally:
            if syncing:
                canvas.syncing_data_url = True
        self._frames_pushed += 1
        if self._delivery_error:  # the earlier failure is over: show again what the area said before it
            self._delivery_error = ""
            if DELIVERY_FAILED in self.error_area.value:  # not since replaced by an update's message
                self.error_area.value = self._area_before_delivery_error
        return True

    def delivery_state(self) -> dict[str, Any]:
        """How the figure reaches the browser, for a report on a figure that does not show.

        Returns
        -------
        dict
            ``canvas`` ("ipympl" or "png"); for the ipympl canvas also ``front_end_ready`` (its
            front end said "initialized"), ``delivered`` (a full frame went out after that),
            ``frames_pushed`` (full frames the kernel sent unasked), ``retries_left`` (timer sends
            still to come), ``delivery_error`` (why the last frame could not be drawn, or ""),
            ``syncing_data_url`` (ipympl still waits for a front end), ``browser_size`` (the
            canvas size the front end was last told, CSS pixels) and ``figure_px`` (the figure's
            size in physical pixels).
        """
        if not self._live_canvas:
            return {"canvas": "png", "shown": bool(self.view.outputs)}
        canvas = self._figure.canvas
        return {
            "canvas": "ipympl",
            "front_end_ready": self._front_end_ready,
            "delivered": self._delivered,
            "frames_pushed": self._frames_pushed,
            "retries_left": len(self._retries) if self._retry_timer is not None else 0,
            "delivery_error": self._delivery_error,
            "syncing_data_url": bool(getattr(canvas, "syncing_data_url", False)),
            "browser_size": tuple(getattr(canvas, "_size", ())),
            "figure_px": tuple(canvas.get_width_height(physical=True)),
        }

    def _start_first_frame_retries(self) -> None:
        if not self._live_canvas or self._delivered or self._retry_timer is not None or not self._retries:
            return
        try:
            timer = self._figure.canvas.new_timer(interval=int(1000 * self._retries[0]))
        except Exception:  # no event loop to run a timer on (a script): nothing shows the canvas anyway
            return
        timer.single_shot = True
        timer.add_callback(self._retry_first_frame)
        self._retry_timer = timer
        timer.start()

    def _stop_first_frame_retries(self) -> None:
        timer, self._retry_timer = self._retry_timer, None
        if timer is not None:
            timer.stop()

    def _retry_first_frame(self) -> None:
        self._retry_timer = None
        if self._closed or self._delivered or not self._retries:
            return
        self._retries.pop(0)
        self._delivered = self._push_frame() and self._front_end_ready
        self._start_first_frame_retries()

    def _replace_same_cell(self) -> None:
        """Close the explorer this notebook cell built on its previous run (JupyterLab sends a cell id)."""
        cell = _current_cell_id()
        if cell is None:
            return
        old = _BY_CELL.get(cell)
        if old is not None and old is not self:
            old.close()
        _BY_CELL[cell] = self

    # -- internals -------------------------------------------------------------
    @staticmethod
    def _make_control(name, default, options, description, continuous_update):
        if isinstance(options[0], str):
            return widgets.ToggleButtons(
                options=list(options), value=default, description=name, tooltips=[description] * len(options),
                style={"button_width": "auto"}, layout=widgets.Layout(width=CONTROL_WIDTH, max_width="100%"),
            )
        lo, hi = options
        step = slider_step(lo, hi)
        # A slider holds only lo + k step: refine the step until a decimal default (9.81, a paper's value)
        # is one of them; a default such as pi/6 keeps the coarse step (its value stays exact until moved).
        for finer in (step, step / 10, step / 100, step / 1000):
            if abs(lo + round((default - lo) / finer) * finer - default) <= 1e-9 * max(1.0, abs(default)):
                step = finer
                break
        decimals = readout_decimals(step)
        return widgets.FloatSlider(
            value=default, min=lo, max=hi, step=step, description=name, tooltip=description,
            style={"description_width": "initial"} if len(name) > 7 else {},  # a long name (with unit) in full
            continuous_update=continuous_update, readout=True, readout_format=f".{decimals}f",
            layout=widgets.Layout(width=_control_width(name), max_width="100%"),
        )

    def _layout(self, title: str) -> widgets.Box:
        """Title, figure and controls in one wrapping row (see :data:`EXPLORER_CSS`).

        The figure and the box of controls sit side by side where the column is wide
        enough for both, and the controls wrap below the figure where it is not; the
        controls themselves wrap into as many columns of sliders as fit. Title and
        error area take whole lines.
        """
        names = [*self.parameters, *self.extra]
        # play and frame share a line where the row has room for both, else the frame slider wraps below
        animate = widgets.HBox([self.play, self.controls["frame"]], layout=widgets.Layout(
            flex_flow="row wrap", flex="1 1 " + CONTROL_WIDTH, max_width="100%"))
        animate.add_class("udk-explorer-animate")
        controls = widgets.Box([self.controls[n] for n in names] + [animate], layout=widgets.Layout(
            display="flex", flex_flow="row wrap", align_content="flex-start", flex="1 1 " + CONTROL_WIDTH,
            min_width=f"min({CONTROL_WIDTH}, 100%)", max_width="100%"))
        controls.add_class("udk-explorer-controls")
        heading = widgets.HTML(f"<b>{title}</b>" if title else "", layout=widgets.Layout(width="100%"))
        heading.add_class("udk-explorer-title")
        self.error_area.layout.width = "100%"
        box = widgets.Box([_style_widget(), heading, self.view, controls, self.error_area], layout=widgets.Layout(
            display="flex", flex_flow="row wrap", align_items="flex-start", width="100%", max_width="100%"))
        box.add_class("udk-explorer")
        return box

    def _on_value(self, change) -> None:
        if not self._hold:
            self._update()

    def _on_frame(self, change) -> None:
        if not self._hold:
            self._update_frame()

    def _update(self) -> bool:
        """Compute with the current values and redraw; on failure show why and keep the last plot."""
        with self._quiet():
            return self._update_quietly()

    def _update_quietly(self) -> bool:
        values = self.values
        try:
            result = self.compute(**values)
        except Exception as exc:  # a callback must never raise: report in place
            self._fail(exc, values)
            return False
        try:
            self.draw(result)
            self._fit_views(result)
            self._show()
        except Exception as exc:
            self._fail(exc, values)
            self._redraw_last_good()
            return False
        self._result = result
        self._error = ""
        self.error_area.value = ""
        # code the compiled models generated on demand for this update (the sampled forces, a proof), kept
        # on disk: the next kernel reads it instead of importing sympy to generate it again (issue 23)
        write_changed()
        return True

    def _update_frame(self) -> None:
        if self._result is None:
            return
        with self._quiet():
            try:
                self.draw_frame(self._result, self.frame)
                self._show(frame_only=True)
            except Exception as exc:
                self._fail(exc, self.values)

    def _redraw_last_good(self) -> None:
        if self._result is None:
            return
        try:
            self.draw(self._result)
            self._fit_views(self._result)
            self._show()
        except Exception:  # the message of the first failure is already shown
            pass

    def _fail(self, exc: BaseException, values: Mapping[str, float]) -> None:
        self._error = f"{type(exc).__name__}: {exc}"
        shown = ", ".join(f"{k} = {v}" if isinstance(v, str) else f"{k} = {v:g}" for k, v in values.items())
        keep = "The figure still shows the last good result." if self._result is not None else "Nothing to show yet."
        self.error_area.value = (
            '<div style="color:#b00020; white-space:pre-wrap">'
            f"<b>Cannot compute with {html.escape(shown)}</b><br>{html.escape(self._error, quote=False)}<br>{keep}</div>"
        )

    @contextmanager
    def _quiet(self) -> Iterator[None]:
        """Mute the figure's stale callback while updating: the explorer renders the figure itself.

        (pyplot's callback would ask for a full draw whenever a limit changes: at once on an
        Agg canvas, through a round trip to the browser with ipympl.)
        """
        figure = self._figure
        callback, figure.stale_callback = figure.stale_callback, None
        try:
            yield
        finally:
            figure.stale_callback = callback

    def _collect_animated(self) -> tuple[dict[Axes, list[Artist]], dict[Axes, list[Artist]]]:
        """The two groups of :meth:`animated_artists` by axes, in z-order; mark them animated and clipped."""
        groups = ({}, {})
        for group, artists in zip(groups, self.animated_artists()):
            for artist in artists:
                ax = artist.axes
                if ax is None or ax.get_figure(root=True) is not self._figure:
                    raise ValueError(f"animated artist {artist!r} must belong to an axes of the explorer's figure")
                artist.set_animated(True)
                if artist.get_clip_path() is None and artist.get_clip_box() is None:
                    artist.set_clip_path(ax.patch)
                artist.set_clip_on(True)  # so that it never paints outside the pixels that are restored
                group.setdefault(ax, []).append(artist)
        for group in groups:
            for artists in group.values():
                artists.sort(key=lambda artist: artist.get_zorder())
        return groups

    def _fit_views(self, result) -> None:
        """Move the views that no longer suit the data (see :func:`fit_view`); most updates move none."""
        for ax, (x_need, y_need) in self.data_limits(result).items():
            options = self.view_options(ax)
            needs = {axis: need for axis, need in (("x", x_need), ("y", y_need)) if need is not None}
            views = {axis: ax.get_xlim() if axis == "x" else ax.get_ylim() for axis in needs}
            inverted = {axis: view[0] > view[1] for axis, view in views.items()}
            views = {axis: tuple(sorted(view)) for axis, view in views.items()}
            if len(needs) == 2 and ax.get_aspect() != "auto":
                options.pop("floor", None)  # both views keep the ratio of their spans: no floor of one's own
                new = fit_aspect_views(views, needs, first=self._result is None, **options)
            else:
                if self._result is None:  # the first result: new views, whatever the figure started with
                    views = {axis: (0.0, 0.0) for axis in needs}
                new = {axis: fit_view(views[axis], needs[axis], **options) for axis in needs}
            for axis, limits in new.items():
                if limits is None:
                    continue
                limits = limits[::-1] if inverted[axis] else limits
                (ax.set_xlim if axis == "x" else ax.set_ylim)(*limits)

    def _on_full_draw(self, event) -> None:
        """After a full draw: fix each axes' cell, cache the static pixels of the axes with animated artists,
        then paint them."""
        canvas = self._figure.canvas
        if canvas.is_saving():  # savefig draws animated artists itself, on a renderer of its own
            return
        self._renderer = canvas.get_renderer()
        self._cells = self._layout_cells()
        self._paint(restore=False)

    @contextmanager
    def _fresh_kept(self, axes) -> Iterator[None]:
        """Measure without side effects: extents apply the aspect, which marks an axes stale although
        nothing moved (a full draw on every update)."""
        was = [(artist, artist.stale) for artist in (self._figure, *axes)]
        try:
            yield
        finally:
            for artist, stale in was:
                if not stale:
                    artist.stale = False

    def _layout_cells(self) -> dict[Axes, _Cell]:
        """Each axes' fixed cell for this layout (figure size, tick label sizes), from its parts' extents.

        Called after a full draw; a partial redraw uses the cells as they are, and a
        full draw (new size, tick labels that outgrow their cell) makes new ones.
        """
        figure = self._figure
        renderer = self._renderer
        width, height = figure.canvas.get_width_height(physical=True)
        with self._fresh_kept(figure.axes):
            parts = {ax: _axes_parts(ax, renderer) for ax in figure.axes}
        cells = {}
        for ax, (frame, titles, key) in parts.items():
            others = [box for other, boxes in parts.items() if other is not ax for box in boxes if box is not None]
            # Nor may the frame and titles grow into the axes' own key: a key's handles paint a pixel or so
            # past its box, pixels its cached copy would not put back.
            own = [_padded_box(box, others + ([key] if key is not None and not _meet(key, box) else []), width, height)
                   for box in (frame, titles) if box is not None]
            key_pixels = None
            if key is not None:
                key = _padded_box(key, [], width, height, pad=0)
                if not any(_meet(key, _padded_box(box, [], width, height, pad=0))
                           for box in [frame, titles, *others] if box is not None):
                    key_pixels = figure.canvas.copy_from_bbox(key)  # the key's own pixels only, on the figure's colour
                else:
                    own.append(key)  # drawn with its axes on each redraw
                    key = None
            cells[ax] = _Cell(tuple(own), key, key_pixels)
        return cells

    def _partial_redraw(self) -> Bbox | None:
        """Redraw only the stale axes (new limits, say), each within its fixed cell.

        Each stale axes' cell (its frame with ticks, labels and offset texts, and its
        titles, as laid out by the last full draw) is filled with the figure's colour
        and the axes drawn again without its animated artists, exactly as a full draw
        would draw it; a key (legend), which never changes, is put back from its cached
        pixels instead of being drawn. Its static pixels are cached again. Returns the
        repainted region, or None when a full draw is needed: every axes is stale,
        something other than an axes changed, the figure's colour is not opaque, a cell
        meets another axes' cell, or the new tick labels, offset texts or titles do
        not fit the cell (a new layout).
        """
        figure = self._figure
        stale = [ax for ax in figure.axes if ax.stale]
        if not stale or len(stale) == len(figure.axes) or any(ax not in self._cells for ax in stale):
            return None
        if figure.get_facecolor()[3] < 1.0 or any(
                child.stale or child is not figure.patch
                for child in figure.get_children() if not isinstance(child, Axes)):
            return None  # a figure-level text or legend could sit under a cell
        others = [box for ax, cell in self._cells.items() if ax not in stale for box in cell.all_boxes]
        if any(_meet(box, other) for ax in stale for box in self._cells[ax].boxes for other in others):
            return None
        renderer, canvas = self._renderer, figure.canvas
        for ax in stale:
            cell = self._cells[ax]
            for box in cell.boxes:
                blank = Rectangle((box.x0, box.y0), box.width, box.height, transform=IdentityTransform(),
                                  facecolor=figure.get_facecolor(), edgecolor="none", antialiased=False)
                blank.set_figure(figure)
                blank.draw(renderer)
            key = ax.get_legend() if cell.key_pixels is not None else None
            if key is not None:
                key.set_animated(True)  # left out of this draw: its pixels are put back as they were
            try:
                ax.draw(renderer)  # leaves the animated artists out, as the full draw does
            finally:
                if key is not None:
                    key.set_animated(False)
            if key is not None:
                canvas.restore_region(cell.key_pixels)
        with self._fresh_kept(stale):
            if not all(self._cells[ax].holds(_axes_parts(ax, renderer, key=False)) for ax in stale):
                return None  # the layout changed: the caller draws the whole figure, which lays out again
        static = self._backgrounds[0]
        for ax in stale:
            if ax in static:
                static[ax] = canvas.copy_from_bbox(self._region(ax))
        figure.stale = False
        return Bbox.union([box for ax in stale for box in self._cells[ax].all_boxes])

    def _paint(self, restore: bool, frame_only: bool = False) -> None:
        """Paint the animated artists, over the cached pixels (``restore``) or over a fresh full draw."""
        figure = self._figure
        by_result, by_frame = self._moving
        # Painting changes nothing, but an artist may touch its parts while drawing (a legend places its
        # box), which would mark its axes, and so the figure, stale: every update would become a full draw.
        was = [(artist, artist.stale) for artist in (figure, *{**by_result, **by_frame})]
        try:
            self._paint_artists(restore, frame_only)
        finally:
            for artist, stale in was:
                if not stale:
                    artist.stale = False

    def _paint_artists(self, restore: bool, frame_only: bool) -> None:
        canvas = self._figure.canvas
        by_result, by_frame = self._moving
        static, with_result = self._backgrounds
        renderer = canvas.get_renderer()
        if isinstance(renderer, RendererAgg) and (self._stamps is None or self._stamps.renderer is not renderer):
            self._stamps = TextStamps(renderer)  # a new renderer (size, dpi): stamps start afresh
        # Glyphs are the dearest thing an update paints (a warning box of five lines cost more than every
        # curve together), and most lines of the animated texts read the same from one update to the next.
        stamped = self._stamps.installed() if isinstance(renderer, RendererAgg) else nullcontext()
        with stamped:
            if frame_only:
                for ax, background in with_result.items():
                    canvas.restore_region(background)
            else:
                if restore:
                    for background in static.values():
                        canvas.restore_region(background)
                else:
                    static.clear()
                    static.update((ax, canvas.copy_from_bbox(self._region(ax))) for ax in {**by_result, **by_frame})
                for ax, artists in by_result.items():
                    for artist in artists:
                        ax.draw_artist(artist)
                with_result.clear()
                with_result.update((ax, canvas.copy_from_bbox(self._region(ax))) for ax in by_frame)
            for ax, artists in by_frame.items():
                for artist in artists:
                    ax.draw_artist(artist)

    def _region(self, ax: Axes) -> Bbox:
        """The pixels cached for an axes: its box and a pixel or two around (anti-aliased edges)."""
        x0, y0, x1, y1 = ax.bbox.extents
        width, height = self._figure.canvas.get_width_height(physical=True)
        return Bbox.from_extents(max(x0 - 2, 0), max(y0 - 2, 0), min(x1 + 2, width), min(y1 + 2, height))

    def _show(self, frame_only: bool = False) -> None:
        """Render what changed and put it on screen: the ipympl canvas, or a new PNG.

        A full draw when the figure is stale or the canvas has a new renderer (resized,
        new dpi); otherwise the animated artists are painted over the cached pixels.
        """
        figure = self._figure
        canvas = figure.canvas
        if self._live_canvas and getattr(canvas, "syncing_data_url", False):
            # No browser shows the ipympl canvas yet (or ever, under nbconvert): nobody to send pixels to,
            # and ipympl 0.10 would keep an invalid data URL that breaks the canvas once displayed. The
            # first frame goes out when the browser says it is there (_on_canvas_message) or on a timer.
            self._renderer = None
            return
        moved = self._moving[1] if frame_only else {**self._moving[0], **self._moving[1]}
        fresh = self._renderer is not None and canvas.get_renderer() is self._renderer
        redrawn = self._partial_redraw() if fresh and figure.stale and not frame_only else None
        if not fresh or (figure.stale and redrawn is None):
            canvas.draw()  # _on_full_draw caches the backgrounds and paints the animated artists
        elif moved or redrawn is not None:
            self._paint(restore=True, frame_only=frame_only)
            regions = [self._region(ax) for ax in moved] + ([redrawn] if redrawn is not None else [])
            canvas.blit(Bbox.union(regions))  # ipympl sends the changed pixels
        if self._live_canvas:
            return  # ipympl sent the image after its draw or blit
        width, height = canvas.get_width_height(physical=True)
        self.view.outputs = ({
            "output_type": "display_data",
            "data": {
                "image/png": base64.b64encode(_encode_png(np.asarray(canvas.buffer_rgba()))).decode("ascii"),
                "text/plain": f"<explorer figure {width}x{height}>",
            },
            # The size lets the browser keep the image's place while it decodes the new PNG, so the
            # sliders below do not jump (and slip from under a pointer) on every update.
            "metadata": {"image/png": {"width": width, "height": height}},
        },)

    @property
    def png(self) -> bytes:
        """The PNG currently shown (PNG route only; empty bytes with the ipympl canvas)."""
        if self._live_canvas or not self.view.outputs:
            return b""
        return base64.b64decode(self.view.outputs[0]["data"]["image/png"])


CELL_PAD = 12
"""Pixels added on each side of each part of an axes' cell (less where another axes is nearer): room for
tick labels a digit or a minus sign wider than at the last full draw (about 5 px at 8 pt each) before the
cell must be laid out again, which costs a full draw instead of redrawing the one axes."""


@dataclass(frozen=True, eq=False)
class _Cell:
    """The pixels one axes paints, fixed for a layout (see :meth:`Explorer._layout_cells`).

    ``boxes``: its frame (axes box, ticks, tick labels, axis labels, offset texts, static texts) and its
    titles, each padded; ``key``: its legend's box when the legend's pixels are cached (``key_pixels``),
    which a redraw puts back instead of drawing the legend again.
    """

    boxes: tuple[Bbox, ...]
    key: Bbox | None = None
    key_pixels: Any = None

    @property
    def all_boxes(self) -> list[Bbox]:
        return list(self.boxes) + ([self.key] if self.key is not None else [])

    def holds(self, parts) -> bool:
        """True when every part (frame, titles) lies inside one of the cell's boxes and off its key."""
        parts = [part for part in parts if part is not None]
        return all(any(_inside(part, box) for box in self.boxes) for part in parts) and (
            self.key is None or not any(_meet(part, self.key) for part in parts))


def _meet(a: Bbox, b: Bbox) -> bool:
    """True when two boxes share pixels (edges that only touch share none, unlike ``Bbox.overlaps``)."""
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def _inside(inner: Bbox, outer: Bbox) -> bool:
    return outer.x0 <= inner.x0 and inner.x1 <= outer.x1 and outer.y0 <= inner.y0 and inner.y1 <= outer.y1


def _axes_parts(ax: Axes, renderer, key: bool = True) -> tuple[Bbox, Bbox | None, Bbox | None]:
    """``(frame, titles, key)`` of an axes in pixels, from its artists' extents (None for a missing part).

    frame: the axes box, both axes' ticks, tick labels, labels and offset texts, and every static
    artist that is not clipped (it may paint anywhere); titles: the visible titles; key: the legend.
    """
    spine = max((renderer.points_to_pixels(sp.get_linewidth()) for sp in ax.spines.values() if sp.get_visible()),
                default=0.0)
    frame = [ax.bbox.padded(spine / 2 + 1.0)]  # the frame's line reaches half its width past the box
    frame += [axis.get_tightbbox(renderer) for axis in (ax.xaxis, ax.yaxis) if axis.get_visible()]
    legend = ax.get_legend()
    for artist in ax.get_children():
        if artist in (ax.xaxis, ax.yaxis, ax.patch, legend, ax.title, ax._left_title, ax._right_title) \
                or isinstance(artist, Spine) or artist.get_animated() or not artist.get_visible():
            continue
        if not artist.get_clip_on() or (artist.get_clip_box() is None and artist.get_clip_path() is None):
            frame.append(artist.get_window_extent(renderer))
    titles = [t.get_window_extent(renderer) for t in (ax.title, ax._left_title, ax._right_title)
              if t.get_visible() and t.get_text()]
    shown_key = key and legend is not None and legend.get_visible() and not legend.get_animated()
    frame = [b for b in frame if b is not None and np.isfinite(b.extents).all() and (b.width or b.height)]
    return (Bbox.union(frame),
            Bbox.union(titles) if titles else None,
            _key_extent(legend, renderer) if shown_key else None)


def _key_extent(legend, renderer) -> Bbox:
    """A legend's box, wider by half its thickest handle line (a line's end reaches past the box)."""
    widths = [handle.get_linewidth() for handle in legend.legend_handles if hasattr(handle, "get_linewidth")]
    reach = renderer.points_to_pixels(max([float(np.max(w)) for w in widths if np.size(w)], default=0.0)) / 2
    box = legend.get_window_extent(renderer)  # its rows' text heights hold the handles' thickness
    return Bbox.from_extents(box.x0 - reach - 1.0, box.y0, box.x1 + reach + 1.0, box.y1)


def _padded_box(box: Bbox, others, width: int, height: int, pad: int = CELL_PAD) -> Bbox:
    """``box`` rounded out to whole pixels, each side moved out by up to ``pad``, less where the strip it adds
    would come within as many pixels of one of ``others``.

    Each side grows on its own (a panel with room to its left but its key just below keeps the room
    to its left), and by at most half its distance to another part: two neighbouring cells, each grown
    so, still share no pixel, and a redraw of one leaves the other as it was.
    """
    extents = [max(math.floor(box.x0), 0), max(math.floor(box.y0), 0),
               min(math.ceil(box.x1), width), min(math.ceil(box.y1), height)]
    for side in range(4):  # x0, y0, x1, y1
        for grow in range(pad, 0, -1):
            trial = list(extents)
            trial[side] = max(trial[side] - grow, 0) if side < 2 else min(trial[side] + grow, (width, height)[side - 2])
            strip = list(trial)  # the pixels this side adds: between its old and its new edge
            strip[side + 2 if side < 2 else side - 2] = extents[side]
            added = Bbox.from_extents(*strip)
            if not any(_meet(added, other.padded(grow)) for other in others):
                extents = trial
                break
    return Bbox.from_extents(*extents)


MIN_CANVAS_PX = 32  # a browser size below this (a hidden or not yet laid out output) is not a figure size


def _ignore_degenerate_resizes(canvas) -> None:
    """Keep the figure's size when the browser reports a canvas of (almost) no pixels.

    ipympl sets the figure to the size the front end reports. An output that is hidden or
    not laid out yet (a loaded page, a notebook that detaches cells scrolled away) can
    report 0 x 0: the figure then became 0 x 0 inches, its transforms singular, and the next
    update failed ("cannot write empty image", singular label placement, FreeType raster
    overflows) although nothing was wrong with the model. Such a size is not applied; any
    other resize goes to ipympl as before.
    """
    original = canvas.handle_resize

    def handle_resize(event):
        try:
            width, height = float(event.get("width", 800)), float(event.get("height", 800))
        except (TypeError, ValueError):
            return
        if not (width >= MIN_CANVAS_PX and height >= MIN_CANVAS_PX):  # also refuses NaN
            return
        original(event)

    canvas.handle_resize = handle_resize
