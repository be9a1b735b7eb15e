"""Every explorer's figure read back as a student reads it: units on the axes, no text over text.

Each registered explorer (:data:`udk_notebooks.widgets.EXPLORERS`) is built on the
Agg backend, drawn, and its text read from the artists:

- every non-empty x or y axis label ends with a unit in parentheses or brackets,
  ``"distance r from the focus (m)"``, ``"deviation (1)"`` (``(1)`` or ``[-]``
  marks a dimensionless quantity);
- no two text boxes overlap: titles, axis labels, tick labels, offset texts,
  legends and the texts and annotations of the axes and the figure, at the
  first, a middle and the last animated instant (arrow labels move);
- every such box lies inside the figure (nothing is cut at its edge).
"""

from __future__ import annotations

import itertools
import math
import re

import matplotlib
import numpy as np
import pytest
from matplotlib.text import Text
from matplotlib.transforms import Bbox

from udk_notebooks.widgets import EXPLORERS
from udk_notebooks.widgets.views import fit_view

# A unit at the end of a label: a short group of unit symbols in () or [], e.g. (m/s$^2$), (N m), [-], (1).
UNIT = re.compile(r"[\(\[]\s*([A-Za-z0-9$^{}\\/·. \-]{1,14})\s*[\)\]]\s*$")
TOLERANCE = 1.0  # pixels two boxes may share (anti-aliased edges of neighbours that touch)


def _has_unit(label: str) -> bool:
    match = UNIT.search(label)
    return match is not None and match.group(1).strip() != ""


def _shown(artist) -> bool:
    return artist.get_visible() and (not isinstance(artist, Text) or artist.get_text().strip() != "")


def _tick_labels(axis) -> list[Text]:
    """The tick labels the axis draws: visible, non-empty, at a tick inside the view."""
    scale = axis.get_transform()  # compare in the axis's own scale (log10 on a log axis)
    lo, hi = sorted(float(v) for v in scale.transform(np.asarray(axis.get_view_interval(), dtype=float)))
    span = hi - lo
    found = []
    for tick, loc in zip(axis.get_major_ticks(), axis.get_majorticklocs()):
        where = float(scale.transform(np.array([loc]))[0])
        if not lo - 1e-9 * span <= where <= hi + 1e-9 * span:
            continue
        found += [label for label in (tick.label1, tick.label2) if _shown(label)]
    return found


def text_boxes(figure) -> list[tuple[str, Bbox]]:
    """Every text box drawn on ``figure``, with a name saying where it is, in display pixels."""
    renderer = figure.canvas.get_renderer()
    named = []
    for n, ax in enumerate(a for a in figure.axes if a.get_visible()):
        where = f"axes {n} ({ax.get_title(loc='left') or ax.get_title()!r})"
        parts = [("title", t) for t in (ax.title, ax._left_title, ax._right_title)]
        parts += [("x label", ax.xaxis.label), ("y label", ax.yaxis.label),
                  ("x offset", ax.xaxis.offsetText), ("y offset", ax.yaxis.offsetText)]
        parts += [(f"x tick {t.get_text()!r}", t) for t in _tick_labels(ax.xaxis)]
        parts += [(f"y tick {t.get_text()!r}", t) for t in _tick_labels(ax.yaxis)]
        parts += [(f"text {t.get_text()!r}", t) for t in ax.texts]
        legend = ax.get_legend()
        if legend is not None:
            parts.append(("legend", legend))
        named += [(f"{where} {what}", artist) for what, artist in parts if _shown(artist)]
    named += [(f"figure text {t.get_text()!r}", t) for t in figure.texts if _shown(t)]
    named += [("figure legend", legend) for legend in figure.legends if legend.get_visible()]
    return [(name, artist.get_window_extent(renderer)) for name, artist in named]


def overlaps(boxes: list[tuple[str, Bbox]]) -> list[str]:
    """Pairs of boxes that share more than :data:`TOLERANCE` pixels in both directions."""
    found = []
    for (name_a, a), (name_b, b) in itertools.combinations(boxes, 2):
        width = min(a.x1, b.x1) - max(a.x0, b.x0)
        height = min(a.y1, b.y1) - max(a.y0, b.y0)
        if width > TOLERANCE and height > TOLERANCE:
            found.append(f"{name_a} overlaps {name_b} ({width:.0f} x {height:.0f} px)")
    return found


def outside(figure, boxes: list[tuple[str, Bbox]]) -> list[str]:
    frame = figure.bbox
    return [f"{name} leaves the figure ({box.x0:.0f}..{box.x1:.0f}, {box.y0:.0f}..{box.y1:.0f} px "
            f"in {frame.width:.0f} x {frame.height:.0f})"
            for name, box in boxes
            if box.x0 < frame.x0 - TOLERANCE or box.x1 > frame.x1 + TOLERANCE
            or box.y0 < frame.y0 - TOLERANCE or box.y1 > frame.y1 + TOLERANCE]


@pytest.fixture(scope="module", params=sorted(EXPLORERS))
def explorer(request):
    assert matplotlib.get_backend().lower() == "agg"
    built = EXPLORERS[request.param]()
    assert built.error == "", built.error
    yield built
    built.close()


def test_unit_pattern_tells_units_from_prose():
    assert _has_unit("distance r from the focus (m)") and _has_unit("acceleration (m/s$^2$)")
    assert _has_unit("deviation (1)") and _has_unit("ratio [-]") and _has_unit("$t$ (s)")
    assert not _has_unit("$t$") and not _has_unit("velocity along the slope")
    assert not _has_unit(r"$z = \tau\lambda$ (markers: Re $\tau\lambda$, eigenvalues of $E$)")


def test_overlap_check_sees_a_clash():
    import matplotlib.pyplot as plt

    figure = plt.figure(figsize=(3, 2))
    ax = figure.add_subplot()
    ax.set_title("a title", loc="left")
    ax.text(0.0, 1.02, "over the title", transform=ax.transAxes)
    figure.canvas.draw()
    try:
        assert any("over the title" in line and "title" in line for line in overlaps(text_boxes(figure)))
    finally:
        plt.close(figure)


def test_every_axis_label_has_a_unit(explorer):
    missing = []
    for n, ax in enumerate(explorer.figure.axes):
        for which, label in (("x", ax.get_xlabel()), ("y", ax.get_ylabel())):
            if label.strip() and not _has_unit(label):
                missing.append(f"axes {n} ({ax.get_title(loc='left')!r}) {which} label {label!r}")
    assert not missing, "labels without a unit in () or []:\n" + "\n".join(missing)


def test_every_data_panel_is_labelled(explorer):
    """Each axes with ticks on both sides names both of its axes (a bar chart's x axis names its bars)."""
    unnamed = []
    for n, ax in enumerate(explorer.figure.axes):
        for which, axis, label in (("x", ax.xaxis, ax.get_xlabel()), ("y", ax.yaxis, ax.get_ylabel())):
            numeric = [t for t in _tick_labels(axis) if re.fullmatch(r"[\s\u2212\-+0-9.e$^{}\\times]+", t.get_text())]
            if numeric and not label.strip():
                unnamed.append(f"axes {n} ({ax.get_title(loc='left')!r}) has numbers on its {which} axis and no label")
    assert not unnamed, "\n".join(unnamed)


@pytest.mark.parametrize("share", [0.0, 0.5, 1.0])
def test_no_text_overlaps_or_leaves_the_figure(explorer, share):
    explorer.set(frame=round(share * (explorer.frames - 1)))
    figure = explorer.figure
    figure.canvas.draw()
    boxes = text_boxes(figure)
    problems = overlaps(boxes) + outside(figure, boxes)
    assert not problems, f"{type(explorer).__name__} at frame {explorer.frame}:\n" + "\n".join(problems)


def test_kepler_force_panel_never_runs_below_zero():
    """Panel (b) plots a distance and a force's size: its views stop at zero whatever the sliders."""
    explorer = EXPLORERS["kepler"]()
    ax = explorer.figure.axes[1]
    try:
        for values in ({}, {"epsilon": explorer.controls["epsilon"].max}, {"ell": explorer.controls["ell"].min},
                       {"epsilon": explorer.controls["epsilon"].min, "L": explorer.controls["L"].max}):
            explorer.set(**values)
            assert explorer.error == "", explorer.error
            (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
            assert x0 >= 0.0 and y0 >= 0.0, (values, ax.get_xlim(), ax.get_ylim())
            for line in ax.get_lines():  # and the data still in view
                x, y = line.get_data()
                if len(x):
                    assert x0 <= min(x) and max(x) <= x1 and y0 <= min(y) and max(y) <= y1
    finally:
        explorer.close()


def test_nonnegative_panel_needs_a_linear_free_aspect():
    """A time panel may be nonnegative too (a force's size over time); a log or equal-aspect one may not."""
    from udk_notebooks.widgets import Curve, Panel

    curve = Curve("r", lambda run: (run.trajectory.t, run.trajectory.t))
    assert Panel("size", "time t (s)", "r (m)", curves=(curve,), nonnegative=True).nonnegative
    with pytest.raises(ValueError, match="nonnegative"):
        Panel("size", "r (m)", "F (N)", curves=(curve,), time=False, yscale="log", nonnegative=True)
    with pytest.raises(ValueError, match="nonnegative"):
        Panel("path", "x (m)", "y (m)", curves=(curve,), time=False, equal=True, nonnegative=True)


def test_power_limits_are_a_panel_option_of_its_y_labels_alone():
    """A panel's ``power_limits`` give its y tick labels a common factor sooner; other panels keep the default."""
    from udk_notebooks.widgets import Curve, Panel

    curve = Curve("r", lambda run: (run.trajectory.t, run.trajectory.t))
    for limits in ((3, -2), (-2.0, 3), (-2,), (True, 3)):
        with pytest.raises(ValueError, match="power_limits"):
            Panel("energy", "time t (s)", "h (J)", curves=(curve,), power_limits=limits)
    with pytest.raises(ValueError, match="power_limits.*linear"):
        Panel("drift", "time t (s)", "phi (m)", curves=(curve,), yscale="log", power_limits=(-2, 3))
    ticks = [-1e-3, -5e-4, 0.0, 5e-4, 1e-3]  # ten-thousandths: "-0.0005" by default, "-0.5" times 1e-3 here
    explorer = EXPLORERS["chain"]()
    plain = matplotlib.figure.Figure().add_subplot()  # an axes of matplotlib's own, labelled by default
    try:
        assert explorer.panels[0].power_limits == (-2, 3) and explorer.panels[1].power_limits is None
        labels = []
        for ax in (explorer.figure.axes[1], plain):
            ax.set_ylim(-1.2e-3, 1.2e-3)
            formatter = ax.yaxis.get_major_formatter()
            formatter.set_locs(ticks)
            labels.append((formatter.get_offset().replace("\N{MINUS SIGN}", "-"), formatter(5e-4)))
        assert labels == [("1e-3", "0.5"), ("", "0.0005")]
    finally:
        explorer.close()


def test_ladder_sliders_name_their_units():
    explorer = EXPLORERS["ladder"]()
    try:
        labels = {name: explorer.controls[name].description for name in ("theta0", "mu_floor", "mu_wall", "L")}
        assert labels == {"theta0": "theta0 (rad)", "mu_floor": "mu_floor (1)", "mu_wall": "mu_wall (1)",
                          "L": "L (m)"}
        assert set(explorer.values) == {"theta0", "mu_floor", "mu_wall", "L", "horizon"}  # names unchanged
    finally:
        explorer.close()


def test_control_units_must_name_controls():
    from udk_notebooks.widgets import InclinedLineExplorer

    class Misnamed(InclinedLineExplorer):
        control_units = {"slop": "1"}

    with pytest.raises(ValueError, match="control_units.*slop"):
        Misnamed()


GAP = 3.0  # pixels of air a reader needs to tell an offset text from the title above it


def test_offset_texts_stand_clear_of_titles(explorer):
    """An axis' offset text (``1e-7`` over the y axis) never touches its panel's title."""
    figure = explorer.figure
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    close = []
    for n, ax in enumerate(figure.axes):
        titles = [t for t in (ax.title, ax._left_title, ax._right_title) if _shown(t)]
        for offset in (ax.xaxis.offsetText, ax.yaxis.offsetText):
            if not _shown(offset):
                continue
            box = offset.get_window_extent(renderer)
            for title in titles:
                other = title.get_window_extent(renderer)
                across = min(box.x1, other.x1) - max(box.x0, other.x0) > 0
                gap = max(other.y0 - box.y1, box.y0 - other.y1)
                if across and gap < GAP:
                    close.append(f"axes {n} ({ax.get_title(loc='left')!r}): offset {offset.get_text()!r} "
                                 f"is {gap:.1f} px from the title")
    assert not close, "\n".join(close)


def _drawn_points(ax) -> np.ndarray:
    """The display coordinates of every visible line's points inside the axes box."""
    points = [ax.transData.transform(np.column_stack(line.get_data()).astype(float))
              for line in ax.get_lines() if line.get_visible() and len(line.get_xdata())]
    if not points:
        return np.zeros((0, 2))
    points = np.concatenate(points)
    points = points[np.isfinite(points).all(axis=1)]
    box = ax.bbox
    inside = (points[:, 0] >= box.x0) & (points[:, 0] <= box.x1) & (points[:, 1] >= box.y0) & (points[:, 1] <= box.y1)
    return points[inside]


def _drawn_at(explorer, share: float):
    """The explorer's figure drawn at ``share`` of its animation (0: first instant, 1: last), and its renderer."""
    explorer.set(frame=round(share * (explorer.frames - 1)))
    figure = explorer.figure
    figure.canvas.draw()
    return figure, figure.canvas.get_renderer()


@pytest.mark.parametrize("share", [0.0, 1.0])
def test_legends_leave_the_curves_clear(explorer, share):
    """No point of a drawn curve lies under a legend (a key sits beside or under its panel)."""
    figure, renderer = _drawn_at(explorer, share)
    covered = []
    for n, ax in enumerate(figure.axes):
        legend = ax.get_legend()
        if legend is None or not legend.get_visible():
            continue
        box = legend.get_window_extent(renderer)
        points = _drawn_points(ax)
        under = (points[:, 0] > box.x0) & (points[:, 0] < box.x1) & (points[:, 1] > box.y0) & (points[:, 1] < box.y1)
        if under.any():
            covered.append(f"axes {n} ({ax.get_title(loc='left')!r}): the legend covers {int(under.sum())} points")
    assert not covered, f"{type(explorer).__name__}:\n" + "\n".join(covered)


def test_every_slider_names_its_unit(explorer):
    """Each parameter slider says its unit, ``m1 (kg)``, ``theta (rad)``, ``mu (1)``."""
    import ipywidgets as widgets

    missing = [f"{name}: {control.description!r}" for name, control in explorer.controls.items()
               if name != "frame" and isinstance(control, widgets.FloatSlider) and not _has_unit(control.description)]
    assert not missing, f"{type(explorer).__name__} sliders without a unit:\n" + "\n".join(missing)


def test_unit_of_reads_the_unit_a_description_ends_with():
    from udk_notebooks.widgets.base import unit_of

    assert unit_of("mass of the ball, in kg") == "kg"
    assert unit_of("stiffness of the torsion spring at O (kappa_1 of the slides), in N m/rad") == "N m/rad"
    assert unit_of("eccentricity (the article's epsilon), in 1 (dimensionless)") == "1"
    assert unit_of("simulated time span, in s (an ellipse's period is 2 pi sqrt(m a^3 / k))") == "s"
    assert unit_of("simulated time span, in seconds") == "s" and unit_of("release angle, in radians") == "rad"
    assert unit_of("number of links (and point masses)") is None and unit_of("model parameter l") is None
    with pytest.raises(TypeError, match="description"):
        unit_of(None)


def test_double_pendulum_sliders_read_name_and_unit():
    explorer = EXPLORERS["double_pendulum"](samples=41)
    try:
        shown = {name: control.description for name, control in explorer.controls.items()}
        assert shown["m1"] == "m1 (kg)" and shown["l2"] == "l2 (m)" and shown["k1"] == "k1 (N m/rad)"
        assert shown["theta"] == "theta (rad)" and shown["horizon"] == "horizon (s)" and shown["frame"] == "frame"
        assert set(explorer.values) == {"m1", "m2", "l1", "l2", "g", "k1", "k2", "theta", "phi", "horizon"}
    finally:
        explorer.close()


# -- what a student reads in a narrow window, in titles and readouts ------------------------------------------
NARROW_COLUMN_PX = 600.0
"""Width of an explorer in JupyterLab in an 800 px wide window (about 610 px, the file browser closed):
a wider figure is scaled down to it (tests/browser/test_layout_browser.py measures the scale)."""
MIN_TEXT_PX = 9.0  # the smallest text a student can read on a laptop screen at 1x


def smallest_text_px(figure) -> tuple[float, str]:
    """The smallest visible text of ``figure`` in pixels at its own size (font size at its dpi), and that text."""
    texts = [t for t in figure.findobj(Text) if _shown(t) and t.get_figure(root=True) is figure]
    smallest = min(texts, key=lambda t: t.get_fontsize())
    return smallest.get_fontsize() * figure.dpi / 72.0, smallest.get_text()


def test_text_is_readable_in_an_800px_window(explorer):
    """Scaled to the notebook column of an 800 px window, the smallest text is still at least 9 px."""
    figure = explorer.figure
    figure.canvas.draw()
    size, text = smallest_text_px(figure)
    width = figure.get_size_inches()[0] * figure.dpi
    shown = size * min(1.0, NARROW_COLUMN_PX / width)
    assert shown >= MIN_TEXT_PX, (f"{type(explorer).__name__}: a {width:.0f} px wide figure in a {NARROW_COLUMN_PX:.0f} px "
                                  f"column shows {text!r} at {shown:.1f} px (at least {MIN_TEXT_PX})")


@pytest.mark.parametrize("share", [0.0, 1.0])
def test_notes_stay_inside_their_panel(explorer, share):
    """A moving note in a panel (the clock, a regime, a result line) is not cut at the panel's edge.

    Moving (animated) artists are clipped to their axes, so that a blitted update never paints
    outside the pixels it restores: such a text must fit inside its panel. (Static texts, the
    keys on a title's row, may stand outside; the test above keeps them inside the figure.)
    """
    figure, renderer = _drawn_at(explorer, share)
    cut = []
    for n, ax in enumerate(figure.axes):
        frame = ax.bbox
        for text in ax.texts:
            if not _shown(text) or not text.get_animated():
                continue
            box = text.get_window_extent(renderer)
            if (box.x0 < frame.x0 - TOLERANCE or box.x1 > frame.x1 + TOLERANCE
                    or box.y0 < frame.y0 - TOLERANCE or box.y1 > frame.y1 + TOLERANCE):
                cut.append(f"axes {n} ({ax.get_title(loc='left')!r}): {text.get_text()!r} runs past the panel's edge")
    assert not cut, f"{type(explorer).__name__} at frame {explorer.frame}:\n" + "\n".join(cut)


# Code where a student expects words: a call with a keyword (CoulombFriction(normal=y1)), a dotted name
# (udk.Contact), a name with an underscore outside math (N_wall), an object's repr.
CODE = re.compile(r"\w\(\w+=|\b[a-z_]\w*\.[A-Za-z_]\w*\b|\b[A-Za-z]+_\w+\b")
REPR = re.compile(r"<[\w.]+[ :][^>]*at 0x[0-9a-f]+>|<[\w.]+ object>")


def _words(text: str) -> str:
    """A title as read: HTML tags and entities and matplotlib's $...$ math left out."""
    text = re.sub(r"<[^>]+>|&\w+;", " ", text)
    return re.sub(r"\$[^$]*\$", " ", text)


def shows_code(text: str) -> bool:
    """True when a title or key (HTML or mathtext) holds code or an object's repr."""
    return bool(REPR.search(text) or CODE.search(_words(text)))


def test_code_pattern_tells_code_from_prose():
    for code in ("CoulombFriction(normal=y1)", "udk.Contact on floor", "N_wall falls", "<Axes at 0x7f3a>",
                 "<matplotlib.legend.Legend at 0x7f00>"):
        assert shows_code(code), code
    for prose in ("Block on a rough incline (Udwadia, Kalaba &amp; Fan 2005, Sec. 4)", "textbook, Eq. 3.10",
                  "<i>N</i><sub>wall</sub> falls", r"(b) $d(t)$", r"static limit $\mu_s N$", "lecture slides, Ex. 4:14"):
        assert not shows_code(prose), prose


def test_titles_are_words_not_code(explorer):
    """The heading and every panel title and key say what a student reads, not a call or a repr."""
    heading = explorer.widget.children[1].value
    found = [f"heading: {heading!r}"] if shows_code(heading) else []
    for n, ax in enumerate(explorer.figure.axes):
        for title in (ax.get_title(loc="left"), ax.get_title(), ax.get_title(loc="right")):
            if shows_code(title):
                found.append(f"axes {n} title {title!r}")
        legend = ax.get_legend()
        for text in legend.get_texts() if legend is not None else ():
            if shows_code(text.get_text()):
                found.append(f"axes {n} key {text.get_text()!r}")
    assert not found, f"{type(explorer).__name__} shows code:\n" + "\n".join(found)


def _decimals(number_format: str) -> int:
    match = re.fullmatch(r"\.(\d+)f", number_format)
    assert match, f"readout format {number_format!r} is not a fixed-point format"
    return int(match.group(1))


def test_readouts_show_each_step_and_read_alike(explorer):
    """Each readout has a digit for its step's last decimal (one step changes it), and the sliders of
    one explorer whose steps need at most two decimals all show two ("0.00" beside "1.00")."""
    import ipywidgets as widgets

    from udk_notebooks.widgets.base import READOUT_DECIMALS

    problems, formats = [], set()
    for name, control in explorer.controls.items():
        if not isinstance(control, widgets.FloatSlider):
            continue
        needed = max(0, -math.floor(math.log10(control.step) + 1e-9))
        shown = _decimals(control.readout_format)
        if shown < needed:
            problems.append(f"{name}: step {control.step:g} but readout {control.readout_format!r}")
        counts = shown == 0 and float(control.step).is_integer()  # a number of links: "4", not "4.00"
        if needed <= READOUT_DECIMALS and not counts:
            formats.add(control.readout_format)
    if len(formats) > 1:
        problems.append(f"readouts of coarse steps differ: {sorted(formats)}")
    assert not problems, f"{type(explorer).__name__}:\n" + "\n".join(problems)


FORCE_UNIT = re.compile(r"\(N\)\s*$")
PAD_BELOW_ZERO = 0.08  # share of its span a view of values that are never negative may show below zero


@pytest.mark.parametrize("name", ["double_pendulum", "friction_cart_pendulum", "ladder", "growing_circle"])
def test_force_panels_of_sizes_do_not_run_below_zero(name):
    """A force panel whose curves are never negative shows no room for negative forces (at most a pad).

    Checked at the defaults and with a slider at each end (the views follow the data).
    """
    explorer = EXPLORERS[name]()
    try:
        slider = next(n for n, c in explorer.controls.items() if n != "frame" and hasattr(c, "min"))
        control = explorer.controls[slider]
        for values in ({}, {slider: control.max}, {slider: control.min}, {slider: control.value}):
            explorer.set(**values)
            assert explorer.error == "", explorer.error
            checked = 0
            for n, ax in enumerate(explorer.figure.axes):
                if not FORCE_UNIT.search(ax.get_ylabel()) or ax.get_yscale() != "linear":
                    continue
                ys = [np.asarray(line.get_ydata(), dtype=float) for line in ax.get_lines()
                      if line.get_transform() is ax.transData]  # not the instant's line (axes units)
                ys = np.concatenate([y[np.isfinite(y)] for y in ys if len(y)] or [np.zeros(0)])
                if ys.size == 0 or ys.min() < 0.0:
                    continue
                lo, hi = ax.get_ylim()
                checked += 1
                assert lo >= -PAD_BELOW_ZERO * (hi - lo), (name, values, ax.get_title(loc="left"), (lo, hi))
                assert ys.max() <= hi, (name, values, "data above the view", ys.max(), hi)
            assert checked, f"{name}: no force panel of sizes found"
    finally:
        explorer.close()


def test_views_of_sizes_start_at_zero_and_keep_still():
    """A view of values that are never negative (``fit_view(floor=0)``, what a ``nonnegative`` panel uses)
    starts at zero; data that touch zero do not move it (each move costs a redraw of the panel), data past
    its top grow it, a view below zero is lifted."""
    options = {"margin": 0.25, "inset": 0.05, "shrink": 0.25, "floor": 0.0}
    first = fit_view((0.0, 0.0), (0.0, 101.0), **options)
    assert first[0] == 0.0 and first[1] >= 101.0 / 0.95, first
    assert fit_view(first, (0.0, 101.0), **options) is None  # the same data: kept
    assert fit_view(first, (0.0, 0.9 * first[1]), **options) is None  # touching zero, under the top: kept
    grown = fit_view(first, (0.0, first[1] + 10.0), **options)
    assert grown[0] == 0.0 and grown[1] >= (first[1] + 10.0) / 0.95, grown
    lifted = fit_view((-40.0, 140.0), (0.0, 101.0), **options)
    assert lifted is not None and lifted[0] == 0.0 and lifted[1] >= 101.0, lifted  # lifted to zero
