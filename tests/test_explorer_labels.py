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
import re

import matplotlib
import numpy as np
import pytest
from matplotlib.text import Text
from matplotlib.transforms import Bbox

from udk_notebooks.widgets import EXPLORERS

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


def test_nonnegative_panel_needs_two_linear_quantities():
    from udk_notebooks.widgets import Curve, Panel

    curve = Curve("r", lambda run: (run.trajectory.t, run.trajectory.t))
    with pytest.raises(ValueError, match="nonnegative"):
        Panel("size", "time t (s)", "r (m)", curves=(curve,), nonnegative=True)
    with pytest.raises(ValueError, match="nonnegative"):
        Panel("size", "r (m)", "F (N)", curves=(curve,), time=False, yscale="log", nonnegative=True)


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


@pytest.mark.parametrize("share", [0.0, 1.0])
def test_legends_leave_the_curves_clear(explorer, share):
    """No point of a drawn curve lies under a legend (a key sits beside or under its panel)."""
    explorer.set(frame=round(share * (explorer.frames - 1)))
    figure = explorer.figure
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
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
