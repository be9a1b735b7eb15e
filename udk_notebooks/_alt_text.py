"""Alternative text for figures: what a figure shows, read from its titles, axis labels and legends.

A PNG on a web page is blank to a screen reader unless its ``<img>`` has an
``alt`` attribute. The static site (:mod:`udk_notebooks.site`) gives every
figure one: in its kernels :func:`install_figure_alt_text` makes the inline
backend attach :func:`figure_alt_text` to each PNG it displays (as the output's
``image/png`` metadata ``alt``), and the site's template writes it into the page.
"""

from __future__ import annotations

import re

__all__ = ["figure_alt_text", "install_figure_alt_text"]

_MAX_CHARS = 400


def _plain(text: str) -> str:
    """A matplotlib label as plain words: mathtext ``$\\dot\\theta$`` -> ``dot theta``."""
    text = re.sub(r"\\(mathrm|mathbf|mathit|text|operatorname)\{([^}]*)\}", r"\2", text)
    text = text.replace("$", "").replace("\\", "").replace("{", "").replace("}", "").replace("_", " ")
    return " ".join(text.split())


def _panel(ax) -> str:
    title = " ".join(_plain(ax.get_title(loc)) for loc in ("left", "center", "right") if ax.get_title(loc))
    xlabel, ylabel = _plain(ax.get_xlabel()), _plain(ax.get_ylabel())
    words = title or "a plot"
    if xlabel and ylabel:
        words += f", {ylabel} against {xlabel}"
    elif xlabel or ylabel:
        words += f", axis {xlabel or ylabel}"
    legend = ax.get_legend()
    if legend is not None:
        labels = [_plain(t.get_text()) for t in legend.get_texts() if t.get_text()]
        if labels:
            words += " (curves: " + ", ".join(labels) + ")"
    return words


def figure_alt_text(figure) -> str:
    """One or two sentences saying what a matplotlib figure shows.

    Parameters
    ----------
    figure : matplotlib.figure.Figure

    Returns
    -------
    str
        ``"Figure: <suptitle>. <n> panels: <title>, <y> against <x> (curves: ...); ..."``,
        at most 400 characters, mathtext reduced to plain words.
    """
    from matplotlib.figure import Figure

    if not isinstance(figure, Figure):
        raise TypeError(f"`figure` must be a matplotlib Figure; got {type(figure).__name__}")
    suptitle = getattr(figure, "_suptitle", None)
    head = "Figure" + (f": {_plain(suptitle.get_text())}" if suptitle is not None and suptitle.get_text() else "")
    # colorbars and empty helper axes say nothing of their own
    panels = [_panel(ax) for ax in figure.axes if ax.get_visible() and (ax.has_data() or ax.get_title())]
    if not panels:
        text = head + "."
    elif len(panels) == 1:
        text = f"{head}. {panels[0][0].upper()}{panels[0][1:]}."
    else:
        text = f"{head}. {len(panels)} panels: " + "; ".join(panels) + "."
    return text if len(text) <= _MAX_CHARS else text[: _MAX_CHARS - 3].rstrip() + "..."


def install_figure_alt_text() -> None:
    """Make this IPython kernel attach :func:`figure_alt_text` to every inline PNG figure.

    Run at kernel start, before matplotlib's inline backend registers its
    formatter (which binds IPython's ``print_figure`` when it registers). The
    PNG formatter then returns ``(png, {"alt": ...})``: IPython stores the
    second item as the output's ``image/png`` metadata.
    """
    from IPython.core import pylabtools

    original = pylabtools.print_figure
    if getattr(original, "_udk_alt_text", False):
        return

    def print_figure(fig, fmt="png", bbox_inches="tight", base64=False, **kwargs):
        data = original(fig, fmt, bbox_inches, base64, **kwargs)
        if fmt != "png" or not base64 or data is None:  # only the inline formatter asks for base64 PNG
            return data
        try:
            return data, {"alt": figure_alt_text(fig)}
        except Exception:  # noqa: BLE001 - a description must never cost a figure
            return data

    print_figure._udk_alt_text = True
    pylabtools.print_figure = print_figure
