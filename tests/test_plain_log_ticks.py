"""Log-axis tick labels without mathtext (cold start, issue 23): matplotlib's ticks and numbers, plain text."""

from __future__ import annotations

import re
import warnings

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from udk_notebooks.widgets.base import PlainLogFormatter, plain_log_ticks  # noqa: E402

_BACK = str.maketrans("\u207b\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079\u2212", "-0123456789-")


def _plain_value(label: str) -> float | None:
    """The number a plain label writes (``"2×10⁻³"`` is 0.002), None for an empty label."""
    if not label:
        return None
    sign = -1.0 if label.startswith("\u2212") else 1.0
    coefficient, _, power = label.lstrip("\u2212").rpartition("\u00d7")
    assert power.startswith("10"), label
    return sign * float(coefficient or 1.0) * 10.0 ** int(power[2:].translate(_BACK))


def _mathtext_value(label: str) -> float | None:
    """The number matplotlib's own log label writes (``$\\mathdefault{2\\times10^{-3}}$``), None for empty."""
    if not label:
        return None
    found = re.fullmatch(r"\$\\mathdefault\{(-?)(?:([0-9.]+)\\times)?10\^\{(-?[0-9]+)\}\}\$", label)
    assert found, label
    sign, coefficient, exponent = found.groups()
    return (-1.0 if sign else 1.0) * float(coefficient or 1.0) * 10.0 ** int(exponent)


def _labels(limits, plain: bool) -> tuple[list[str], list[str]]:
    figure = Figure()
    ax = figure.add_subplot()
    ax.set_yscale("log")
    ax.set_ylim(*limits)
    if plain:
        plain_log_ticks(ax)
    FigureCanvasAgg(figure).draw()
    return ([t.get_text() for t in ax.get_yticklabels()], [t.get_text() for t in ax.get_yticklabels(minor=True)])


@pytest.mark.parametrize("limits", [(1e-20, 1e-14), (2e-3, 9e-3), (0.5, 40.0), (1e-120, 1e90), (3e-8, 5e-7)])
def test_the_same_ticks_are_labelled_with_the_same_numbers(limits):
    ours, theirs = _labels(limits, plain=True), _labels(limits, plain=False)
    assert any(ours[0])  # major ticks are labelled; minor ones only over a decade or two
    for plain, mathtext in zip(ours, theirs):  # major, then minor ticks
        assert len(plain) == len(mathtext)
        assert not any("$" in label for label in plain)
        assert [bool(p) for p in plain] == [bool(m) for m in mathtext]  # the same ticks labelled
        shown = [(_plain_value(p), _mathtext_value(m)) for p, m in zip(plain, mathtext) if p]
        assert [ours for ours, _ in shown] == pytest.approx([theirs for _, theirs in shown], rel=1e-12)


def test_negative_and_other_labels():
    figure = Figure()
    ax = figure.add_subplot()
    ax.set_yscale("log")
    ax.set_ylim(1e-3, 1e-1)
    plain_log_ticks(ax)
    formatter = ax.yaxis.get_major_formatter()
    formatter.set_locs([1e-3, 1e-2, 1e-1])
    assert formatter(1e-2) == "10\u207b\u00b2"
    assert formatter(-1e-2) == "\u221210\u207b\u00b2"
    assert formatter(1e12) == "10\u00b9\u00b2"
    assert formatter(0.0) == "$\\mathdefault{0}$"  # not a power of the base: left as matplotlib writes it


def test_every_glyph_is_in_the_default_font():
    figure = Figure()
    ax = figure.add_subplot()
    ax.set_yscale("log")
    ax.set_ylim(2e-19, 9e-17)  # minor labels too: every digit, the times sign and the superscript minus
    plain_log_ticks(ax)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # matplotlib warns "Glyph ... missing from font(s)"
        FigureCanvasAgg(figure).draw()


def test_refuses_what_it_cannot_label():
    figure = Figure()
    ax = figure.add_subplot()
    with pytest.raises(ValueError, match="log-scaled y axis"):
        plain_log_ticks(ax)
    with pytest.raises(TypeError, match="`ax` must be a matplotlib Axes"):
        plain_log_ticks(figure)


def test_log_panels_of_an_explorer_use_it():
    import udk_notebooks.widgets as widgets

    explorer = widgets.EXPLORERS["kepler"]()
    logs = [ax for ax in explorer.figure.axes if ax.get_yscale() == "log"]
    assert logs
    for ax in logs:
        assert isinstance(ax.yaxis.get_major_formatter(), PlainLogFormatter)
        labels = [t.get_text() for t in ax.get_yticklabels()]
        assert labels and not any("$" in label for label in labels) and any("10\u207b" in label for label in labels)
    explorer.close()
