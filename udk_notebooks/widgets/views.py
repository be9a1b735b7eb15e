"""Axes views that follow the data without jumping: the explorers' limits and slider steps.

An explorer redraws only its moving artists on a cached background (blitting)
as long as the axes limits stay put, so limits change only when they must:
a view grows when the data leave it, shrinks when the data fill less than a
quarter of it, and lands on round numbers when it changes.
"""

from __future__ import annotations

import math

__all__ = ["fit_aspect_views", "fit_log_view", "fit_view", "nice_step", "slider_step"]


def slider_step(lo: float, hi: float) -> float:
    """A round slider step giving at least 100 positions between ``lo`` and ``hi``."""
    return 10.0 ** math.floor(math.log10((hi - lo) / 100.0))


def nice_step(span: float) -> float:
    """The smallest of 1, 2, 2.5 and 5 times a power of ten that is at least ``span > 0``."""
    power = 10.0 ** math.floor(math.log10(span))
    return next(factor * power for factor in (1.0, 2.0, 2.5, 5.0, 10.0) if factor * power >= span * (1 - 1e-12))


def _needed(interval) -> tuple[float, float, float]:
    """``(lo, hi, width)`` of an interval that must stay visible; a point gets a width of its own size."""
    lo, hi = sorted(float(v) for v in interval)
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ValueError(f"data limits must be finite; got {interval!r}")
    width = hi - lo
    scale = max(abs(lo), abs(hi))
    if width < 1e-9 * max(1.0, scale):  # constant data: a range of its own size
        width = max(1.0, 0.5 * scale)
    return lo, hi, width


def _view_change(view, need, width: float, inset: float, shrink: float, floor: float | None = None) -> str:
    """``"keep"`` the view, ``"grow"`` it (the data left it), ``"shrink"`` it (the data fill too little)
    or make a ``"new"`` one (the view is empty). A view that starts at ``floor`` needs no inset there."""
    lo, hi, own = _needed(need)
    v_lo, v_hi = view
    span = v_hi - v_lo
    if not span > 0:
        return "new"
    if floor is not None and v_lo < floor:
        return "new"  # a view running below the floor (set before it was known) shows impossible values
    at_floor = floor is not None and v_lo == floor and lo >= floor
    if not ((at_floor or lo >= v_lo + inset * span) and hi <= v_hi - inset * span):
        return "grow"
    return "keep" if max(width, own) >= shrink * span else "shrink"


def _new_view(need, width: float, margin: float) -> tuple[float, float]:
    """``need`` centred in ``(1 + 2 margin) width``, rounded outward to a nice tenth of ``width``."""
    lo, hi, own = _needed(need)
    width = max(width, own)
    center = 0.5 * (lo + hi)
    step = nice_step(width / 10.0)
    return (math.floor((center - (0.5 + margin) * width) / step) * step,
            math.ceil((center + (0.5 + margin) * width) / step) * step)


def fit_view(
    view: tuple[float, float],
    need: tuple[float, float],
    *,
    margin: float = 0.25,
    inset: float = 0.05,
    shrink: float = 0.25,
    width: float | None = None,
    floor: float | None = None,
) -> tuple[float, float] | None:
    """New view limits for data that must stay visible, or None when the current view still serves.

    The view is kept while ``need`` lies inside it at least ``inset`` (a fraction of
    the view's span) away from both ends, and the data fill at least ``shrink`` of the
    view. Otherwise the new view has ``margin`` times the data's width added on each
    side (twice that when the data left the view: room to keep growing), rounded
    outward to a :func:`nice_step` of a tenth of the data's width, so the limits are
    round numbers and small changes of the data do not move them. A view that grows
    covers the old view too whenever the data still fill enough of the result, so that
    data swinging from one side to the other do not move the view back and forth.

    Parameters
    ----------
    view : (float, float)
        The current limits ``(lo, hi)``, ``lo < hi``.
    need : (float, float)
        The interval of data that must be visible.
    margin, inset, shrink : float, optional
        See above. With the defaults the data fill 40 % to 67 % of a new view.
    width : float, optional
        The data's width to use instead of ``need``'s own when larger (axes with a
        fixed aspect ratio size both views from the larger width).
    floor : float, optional
        A value the data never go below (zero for a distance or a force's size): the
        view stops there instead of running past it, and data close to it need no
        ``inset`` from a view that starts at it, and a view that runs below it is
        replaced. Without this, a view stopped at zero by hand would count as "left
        by the data" on every change.

    Returns
    -------
    (float, float) or None
    """
    if floor is not None:
        floor = float(floor)
        if not math.isfinite(floor):
            raise ValueError(f"`floor` must be finite or None; got {floor!r}")
        need = tuple(max(float(v), floor) for v in need)
    width = _needed(need)[2] if width is None else float(width)
    change = _view_change(view, need, width, inset, shrink, floor)
    if change == "keep":
        return None
    new = _changed_view(view, need, width, margin, inset, shrink, floor, change)
    return new if floor is None else (max(new[0], floor), max(new[1], floor + 1e-12))


def _changed_view(view, need, width, margin, inset, shrink, floor, change) -> tuple[float, float]:
    """The new limits of :func:`fit_view` once the view must change."""
    if change == "grow":
        # Grow over the old view as well when the data would still fill enough of the result: data
        # that swing from side to side (a winding angle, a noisy error) then settle in one view
        # instead of moving it on every change.
        both = (min(view[0], need[0], need[1]), max(view[1], need[0], need[1]))
        wide = _new_view(both, max(width, both[1] - both[0]), margin)  # the old view already had room
        if floor is not None:
            wide = (max(wide[0], floor), wide[1])
        if _view_change(wide, need, width, inset, shrink, floor) == "keep":
            return wide
        return _new_view(need, width, 2 * margin)
    return _new_view(need, width, margin)


def fit_aspect_views(views, needs, *, first: bool, margin: float, inset: float, shrink: float) -> dict:
    """:func:`fit_view` for both views of an axes with a fixed aspect ratio.

    Both views are sized from the larger data width and keep the ratio of
    their spans (and so the axes box); they change together or not at all.

    Parameters
    ----------
    views : dict of {"x", "y"} to (float, float)
        Current limits, ascending.
    needs : dict of {"x", "y"} to (float, float)
        Intervals of data that must stay visible.
    first : bool
        True for the first result: new views whatever the figure started with.
    margin, inset, shrink : float
        As in :func:`fit_view`.

    Returns
    -------
    dict of {"x", "y"} to (float, float)
        The new limits, or an empty dict when both views can stay.
    """
    x_span, y_span = (views[axis][1] - views[axis][0] for axis in "xy")
    units = {"x": 1.0, "y": y_span / x_span if x_span > 0 and y_span > 0 else 1.0}
    width = max(_needed(needs[axis])[2] / units[axis] for axis in needs)  # in x units
    changes = {"new"} if first else {
        _view_change(views[axis], needs[axis], width * units[axis], inset, shrink) for axis in needs
    }
    if changes == {"keep"}:
        return {}
    margin = 2 * margin if "grow" in changes else margin
    new = {axis: _new_view(needs[axis], width * units[axis], margin) for axis in needs}
    span = max((hi - lo) / units[axis] for axis, (lo, hi) in new.items())
    for axis, (lo, hi) in new.items():  # widen the narrower view evenly, in whole steps
        step = nice_step(width * units[axis] / 10.0)
        lo -= math.floor((span * units[axis] - (hi - lo)) / (2 * step) + 1e-9) * step
        new[axis] = (lo, lo + span * units[axis])
    return new


def fit_log_view(
    view: tuple[float, float] | None,
    need: tuple[float, float],
    *,
    room: float = 1.0,
    slack: float = 4.0,
) -> tuple[float, float] | None:
    """New limits of a logarithmic view, whole decades, or None when the current view still serves.

    The view is kept while ``need`` lies inside it and the view has at most ``slack``
    decades more than the data span: quantities at rounding level (an integration
    error, a constraint drift) move by a decade or two from one run to the next, and a
    view set to their exact decades would move on almost every change. A new view has
    ``room`` decades below the data (rounded down to a decade) and a third of that above
    (rounded up); a view that must grow covers the old one as well while that stays
    within ``slack``, so data that wander up and down settle in one view.

    Parameters
    ----------
    view : (float, float) or None
        The current limits, ``0 < lo < hi`` (None, or limits that are not, for a first view).
    need : (float, float)
        The smallest and largest positive value that must be visible.
    room, slack : float, optional
        In decades, see above; ``slack`` must exceed ``4/3 room + 2`` so that a new view is kept.

    Returns
    -------
    (float, float) or None
    """
    lo, hi = sorted(float(v) for v in need)
    if not (math.isfinite(lo) and math.isfinite(hi) and 0.0 < lo):
        raise ValueError(f"`need` must be two finite positive values; got {need!r}")
    if not (room >= 0.0 and slack >= 4.0 * room / 3.0 + 2.0):
        raise ValueError(f"`slack` ({slack!r}) must be at least 4/3 `room` + 2 ({room!r}): a new view would not be kept")
    lo_d, hi_d = math.log10(lo), math.log10(hi)
    valid = view is not None and all(math.isfinite(v) and v > 0.0 for v in view) and view[0] < view[1]
    if valid:
        v_lo, v_hi = (math.log10(float(v)) for v in sorted(view))
        if v_lo <= lo_d and hi_d <= v_hi and (v_hi - v_lo) - (hi_d - lo_d) <= slack:
            return None
    new_lo, new_hi = math.floor(lo_d - room), math.ceil(hi_d + room / 3.0)
    if new_hi <= new_lo:
        new_hi = new_lo + 1
    if valid:  # grow over the old view where the data still fill enough of the result
        both = (min(new_lo, math.floor(v_lo)), max(new_hi, math.ceil(v_hi)))
        if (both[1] - both[0]) - (hi_d - lo_d) <= slack:
            new_lo, new_hi = both
    return 10.0 ** new_lo, 10.0 ** new_hi
