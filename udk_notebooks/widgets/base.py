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
"""

from __future__ import annotations

import base64
import html
import io
import math
from typing import Any, Callable, Mapping

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from PIL import Image

__all__ = ["Explorer", "ParameterSpec", "has_widget_canvas", "parameter_table", "slider_step"]

ParameterSpec = tuple[float, tuple[float, float], str]
"""``(default, (lo, hi), description)``: one row of an explorer's parameter table."""


def parameter_table(
    parameters: Mapping[str, Any],
    rename: Mapping[str, str] | None = None,
    order: tuple[str, ...] | None = None,
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

    Returns
    -------
    dict of str to (float, (float, float), str)
    """
    rename = dict(rename or {})
    unknown = set(rename) - set(parameters)
    if unknown:
        raise ValueError(f"`rename` names unknown parameter(s) {', '.join(sorted(unknown))}")
    table = {}
    for name, row in parameters.items():
        if hasattr(row, "default"):
            row = (row.default, row.bounds, row.description)
        table[rename.get(name, name)] = _check_row(rename.get(name, name), row)
    if order is not None:
        if sorted(order) != sorted(table):
            raise ValueError(f"`order` must list each of {', '.join(table)} once; got {', '.join(order)}")
        table = {name: table[name] for name in order}
    return table


def _check_row(name: str, row) -> ParameterSpec:
    try:
        default, (lo, hi), description = row
        default, lo, hi = float(default), float(lo), float(hi)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"parameter `{name}` must be (default, (lo, hi), description); got {row!r}") from exc
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi and lo <= default <= hi):
        raise ValueError(f"parameter `{name}` needs finite bounds lo < hi around its default; got {row!r}")
    return default, (lo, hi), str(description)


def slider_step(lo: float, hi: float) -> float:
    """A round slider step giving at least 100 positions between ``lo`` and ``hi``."""
    return 10.0 ** math.floor(math.log10((hi - lo) / 100.0))


def has_widget_canvas(figure: Figure) -> bool:
    """True when the figure's canvas is itself a widget (the ipympl backend)."""
    return isinstance(figure.canvas, widgets.DOMWidget)


class Explorer:
    """Sliders for a model's parameters, wired to a figure updated in place.

    Subclasses implement :meth:`make_figure` and :meth:`draw` (and, to animate
    cheaply, :meth:`draw_frame`).

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
    widget : ipywidgets.VBox
        The whole explorer; displaying the explorer displays this.
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
        self.compute = compute
        self.parameters = {name: _check_row(name, row) for name, row in parameters.items()}
        self.extra = {name: _check_row(name, row) for name, row in (extra or {}).items()}
        clash = set(self.parameters) & set(self.extra) | ({"frame"} & (set(self.parameters) | set(self.extra)))
        if clash:
            raise ValueError(f"control names must be unique and not 'frame'; repeated: {', '.join(sorted(clash))}")
        self.frames = int(frames if frames is not None else type(self).frames)
        if self.frames < 1:
            raise ValueError(f"`frames` must be at least 1; got {frames}")
        self._result = None
        self._error = ""
        self._hold = False

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
            continuous_update = self._live_canvas

        self.controls = {}
        for name, (default, (lo, hi), description) in {**self.parameters, **self.extra}.items():
            self.controls[name] = self._make_slider(name, default, lo, hi, description, continuous_update)
        frame = widgets.IntSlider(
            value=0, min=0, max=self.frames - 1, step=1, description="frame",
            tooltip="animated instant (0 = start, last = end of the horizon)",
            continuous_update=True, readout=True, layout=widgets.Layout(width="320px"),
        )
        self.controls["frame"] = frame
        # A PNG frame costs a full render in the kernel, so that route animates at half the rate.
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
        self._update()

    # -- subclass hooks ------------------------------------------------------
    def make_figure(self) -> Figure:
        """Create the figure and every artist it will ever hold; return the figure.

        Called once, under ``plt.ioff()``. Use ``matplotlib.pyplot`` (so that
        ipympl gives the figure a widget canvas) and keep references to the
        artists for :meth:`draw`.
        """
        raise NotImplementedError

    def draw(self, result) -> None:
        """Move the artists to show ``result`` at frame :attr:`frame`, then ``canvas.draw_idle()``."""
        raise NotImplementedError

    def draw_frame(self, result, frame: int) -> None:
        """Show another instant of the same result (default: :meth:`draw` again)."""
        self.draw(result)

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
        return {name: float(self.controls[name].value) for name in (*self.parameters, *self.extra)}

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

    def _repr_mimebundle_(self, **kwargs):
        return self.widget._repr_mimebundle_(**kwargs)

    def _ipython_display_(self):
        from IPython.display import display

        display(self.widget)

    # -- internals -------------------------------------------------------------
    @staticmethod
    def _make_slider(name, default, lo, hi, description, continuous_update):
        step = slider_step(lo, hi)
        decimals = max(0, -int(math.floor(math.log10(step))))
        return widgets.FloatSlider(
            value=default, min=lo, max=hi, step=step, description=name, tooltip=description,
            continuous_update=continuous_update, readout=True, readout_format=f".{decimals}f",
            layout=widgets.Layout(width="320px"),
        )

    def _layout(self, title: str) -> widgets.VBox:
        names = [*self.parameters, *self.extra]
        half = (len(names) + 1) // 2
        columns = widgets.HBox([
            widgets.VBox([self.controls[n] for n in names[:half]]),
            widgets.VBox([self.controls[n] for n in names[half:]] + [widgets.HBox([self.play, self.controls["frame"]])]),
        ])
        parts = [widgets.HTML(f"<b>{title}</b>")] if title else []
        box = widgets.VBox(parts + [self.view, columns, self.error_area])
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
        values = self.values
        try:
            result = self.compute(**values)
        except Exception as exc:  # a callback must never raise: report in place
            self._fail(exc, values)
            return False
        try:
            self.draw(result)
        except Exception as exc:
            self._fail(exc, values)
            self._redraw_last_good()
            return False
        self._result = result
        self._error = ""
        self.error_area.value = ""
        self._show()
        return True

    def _update_frame(self) -> None:
        if self._result is None:
            return
        try:
            self.draw_frame(self._result, self.frame)
        except Exception as exc:
            self._fail(exc, self.values)
            return
        self._show()

    def _redraw_last_good(self) -> None:
        if self._result is None:
            return
        try:
            self.draw(self._result)
            self._show()
        except Exception:  # the message of the first failure is already shown
            pass

    def _fail(self, exc: BaseException, values: Mapping[str, float]) -> None:
        self._error = f"{type(exc).__name__}: {exc}"
        shown = ", ".join(f"{k} = {v:g}" for k, v in values.items())
        keep = "The figure still shows the last good result." if self._result is not None else "Nothing to show yet."
        self.error_area.value = (
            '<div style="color:#b00020; white-space:pre-wrap">'
            f"<b>Cannot compute with {html.escape(shown)}</b><br>{html.escape(self._error, quote=False)}<br>{keep}</div>"
        )

    def _show(self) -> None:
        """Put the current figure on screen: ipympl redraws by itself; otherwise send a new PNG."""
        if self._live_canvas:
            return
        figure = self._figure
        if figure.stale:
            figure.canvas.draw()
        width, height = figure.canvas.get_width_height(physical=True)
        image = Image.frombuffer("RGBA", (width, height), figure.canvas.buffer_rgba(), "raw", "RGBA", 0, 1)
        buffer = io.BytesIO()
        image.save(buffer, format="png", compress_level=1)
        self.view.outputs = ({
            "output_type": "display_data",
            "data": {
                "image/png": base64.b64encode(buffer.getvalue()).decode("ascii"),
                "text/plain": f"<explorer figure {width}x{height}>",
            },
            "metadata": {},
        },)

    @property
    def png(self) -> bytes:
        """The PNG currently shown (PNG route only; empty bytes with the ipympl canvas)."""
        if self._live_canvas or not self.view.outputs:
            return b""
        return base64.b64decode(self.view.outputs[0]["data"]["image/png"])
