r"""Mechanism drawings: each example declares its parts as data, one module draws them.

This module owns how a mechanism looks on screen. An example module describes
its system once, as a :class:`Mechanism`: named points whose positions are
functions of the coordinates ``q`` and the time ``t``, and the parts between
them (rods, springs, blocks, disks), the guides it moves on (a line, the
ground, a circle that grows, an orbit), and the points where the generalized
forces act. From that description

* :class:`MechanismView` creates the artists of one instant once and moves
  them in place (what an explorer needs: no artist is ever re-created);
* :func:`draw_mechanism` draws one sample of a :class:`~udk_notebooks.simulation.Trajectory`;
* :func:`animate` turns a whole trajectory into a :class:`MechanismAnimation`
  that plays without a kernel (``to_jshtml``) and saves as GIF or MP4.

The three force terms of the Udwadia-Kalaba equation (Udwadia, Kalaba & Fan
2005, Eqs. 9-11), impressed ``F^N``, ideal ``F^L`` and nonideal ``F^C``, are
drawn as arrows at their points of application. A :class:`ForceSite` says which
two entries of a generalized force vector are the ``(x, y)`` components of the
force on a point; that is exact for Cartesian coordinates, the only ones whose
force entries are forces on points. Forces differ by colour (Okabe-Ito) and by
line style, and carry a label, so colour is never the only cue.
"""

from __future__ import annotations

import contextlib
import math
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Circle, FancyArrowPatch, Polygon
from matplotlib.text import Annotation
from matplotlib.transforms import Bbox, offset_copy

from .plotting import FORCE_STYLES, OKABE_ITO
from .simulation import Trajectory

if TYPE_CHECKING:  # matplotlib.animation is imported when an animation is made, not with the explorers
    from matplotlib.animation import FuncAnimation

__all__ = [
    "Block",
    "Disk",
    "ForceSite",
    "Guide",
    "Joint",
    "Mechanism",
    "MechanismAnimation",
    "MechanismView",
    "Rod",
    "Spring",
    "animate",
    "draw_mechanism",
    "force_legend",
]

Position = Callable[[np.ndarray, float], Sequence[float]]
"""``position(q, t) -> (x, y)`` in metres."""

FORCE_KINDS = ("impressed", "ideal", "nonideal")

SANE_REACH = 1e9
"""Metres: force arrows and labels farther out than this (a diverged run) are hidden, not drawn."""


@dataclass(frozen=True)
class Joint:
    """A named point of the mechanism.

    Parameters
    ----------
    name : str
        Referred to by the parts.
    at : callable
        ``at(q, t) -> (x, y)`` in metres.
    style : {"body", "pin", "fixed", "hidden"}
        A filled dot (a mass), an open circle (a pin joint), a triangle on
        hatching (a fixed support), or nothing (a point only used by parts).
    size : float
        Marker size in points.
    """

    name: str
    at: Position
    style: str = "body"
    size: float = 8.0

    def __post_init__(self):
        if self.style not in {"body", "pin", "fixed", "hidden"}:
            raise ValueError(f"`style` of joint {self.name!r} must be body, pin, fixed or hidden; got {self.style!r}")


@dataclass(frozen=True)
class Rod:
    """A rigid link drawn between two joints (``width`` in points)."""

    a: str
    b: str
    width: float = 3.0


@dataclass(frozen=True)
class Spring:
    """A coil spring between two joints, ``coils`` zigzags ``width`` metres wide."""

    a: str
    b: str
    coils: int = 8
    width: float = 0.15


@dataclass(frozen=True)
class Block:
    """A rectangular body (slider, carriage, block) centred on a joint, tilted by ``angle`` rad."""

    at: str
    width: float
    height: float
    angle: float = 0.0


@dataclass(frozen=True)
class Disk:
    """A disk of ``radius`` metres centred on a joint; a spoke at ``spin(q, t)`` shows its rotation."""

    at: str
    radius: float
    spin: Callable[[np.ndarray, float], float] | None = None


@dataclass(frozen=True)
class Guide:
    """What the mechanism moves on: ``path(t) -> array (k, 2)`` of points in metres.

    ``moving`` marks a guide that changes with time (a rheonomic constraint,
    such as a growing circle); a fixed one is drawn once. ``style`` is
    ``"line"`` (a thin grey curve) or ``"ground"`` (a thicker line with hatching).
    """

    path: Callable[[float], np.ndarray]
    moving: bool = False
    style: str = "line"
    label: str = ""


@dataclass(frozen=True)
class ForceSite:
    """Where generalized forces act: entries ``components = (i, j)`` of a force vector are the
    ``(x, y)`` components of the force on joint ``at``.

    ``None`` for a component means the point has no coordinate along that axis (a slider on a
    rail): that component is drawn as zero.
    """

    at: str
    components: tuple[int | None, int | None]

    def pick(self, force: np.ndarray) -> np.ndarray:
        """The ``(x, y)`` force on the point from generalized forces of shape (..., n): shape (..., 2)."""
        force = np.asarray(force, dtype=float)
        zero = np.zeros(force.shape[:-1])
        return np.stack([zero if i is None else force[..., i] for i in self.components], axis=-1)


@dataclass(frozen=True)
class Mechanism:
    """How a system looks: joints, parts, guides and force sites (all in metres).

    Parameters
    ----------
    joints : sequence of Joint
    parts : sequence of Rod, Spring, Block or Disk
    guides : sequence of Guide, optional
    forces : sequence of ForceSite, optional
    trace : str, optional
        A joint whose path is drawn behind the mechanism.
    name : str, optional
        Shown as the title of an animation.
    xlabel, ylabel : str, optional
        Axis labels, with units.
    """

    joints: Sequence[Joint]
    parts: Sequence[Rod | Spring | Block | Disk] = ()
    guides: Sequence[Guide] = ()
    forces: Sequence[ForceSite] = ()
    trace: str | None = None
    name: str = ""
    xlabel: str = "x (m)"
    ylabel: str = "y (m)"
    _index: dict = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        index = {}
        for joint in self.joints:
            if not isinstance(joint, Joint):
                raise TypeError(f"`joints` must hold Joint objects; got {type(joint).__name__}")
            if joint.name in index:
                raise ValueError(f"joint name {joint.name!r} is used twice")
            index[joint.name] = joint
        names = [self.trace] if self.trace else []
        for part in self.parts:
            names += [part.a, part.b] if isinstance(part, (Rod, Spring)) else [part.at]
        names += [site.at for site in self.forces]
        missing = sorted({n for n in names if n not in index})
        if missing:
            raise ValueError(f"parts or force sites name unknown joint(s) {', '.join(missing)}; "
                             f"the joints are {', '.join(index)}")
        object.__setattr__(self, "joints", tuple(self.joints))
        object.__setattr__(self, "parts", tuple(self.parts))
        object.__setattr__(self, "guides", tuple(self.guides))
        object.__setattr__(self, "forces", tuple(self.forces))
        object.__setattr__(self, "_index", index)

    def positions(self, q, t: float = 0.0) -> dict[str, np.ndarray]:
        """Every joint's position at coordinates ``q`` and time ``t``, shape (2,) each."""
        q = np.asarray(q, dtype=float)
        return {j.name: np.asarray(j.at(q, t), dtype=float).reshape(2) for j in self.joints}

    def site_forces(self, force) -> np.ndarray:
        """The ``(x, y)`` force on each force site from a generalized force vector, shape (sites, 2)."""
        return np.array([site.pick(force) for site in self.forces]).reshape(-1, 2)


def _spring_line(a: np.ndarray, b: np.ndarray, coils: int, width: float) -> np.ndarray:
    """A zigzag from a to b: straight ends of 15 % each, ``coils`` teeth between."""
    d = b - a
    length = float(np.hypot(*d))
    if length < 1e-12:
        return np.array([a, b])
    along, normal = d / length, np.array([-d[1], d[0]]) / length
    s = np.concatenate([[0.0, 0.15], 0.15 + 0.7 * (np.arange(2 * coils) + 0.5) / (2 * coils), [0.85, 1.0]])
    offset = np.zeros_like(s)
    offset[2:-2] = width / 2 * np.where(np.arange(2 * coils) % 2 == 0, 1.0, -1.0)
    return a + np.outer(s * length, along) + np.outer(offset, normal)


def _block_corners(center: np.ndarray, width: float, height: float, angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    local = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]]) * [width / 2, height / 2]
    return center + local @ np.array([[c, s], [-s, c]])


def _joint_track(joint: Joint, q, t) -> np.ndarray:
    """A joint's positions at a stack of samples, shape (K, 2), for coordinates ``q`` (K, n) at times ``t`` (K,).

    A joint's function is written for one sample, ``at(q, t) -> (x, y)``; most are plain numpy
    (``l * sin(q[0])``) and give every sample at once when called with the coordinates as rows
    (``q.T``, so that ``q[i]`` is coordinate i over the run) and the times as an array. That one
    call is tried first and its answer checked against the sample-by-sample calls at the first,
    middle and last sample; a function that cannot take stacks (an ``if`` on a coordinate, ``math.sin``)
    or that answers differently (a matrix product meant for one sample) is called sample by sample.
    An explorer asks for the bodies' path over the run on every update (its trace, its views), and one
    call per sample cost more than all its curves.
    """
    q = np.asarray(q, dtype=float)
    t = np.asarray(t, dtype=float)
    if q.ndim != 2 or t.shape != (q.shape[0],):
        raise ValueError(f"`q` must have shape (K, n) and `t` shape (K,); got {q.shape} and {t.shape}")
    count = t.size

    def one(k: int) -> np.ndarray:
        return np.asarray(joint.at(q[k], float(t[k])), dtype=float).reshape(2)

    track = _stacked_track(joint, q, t)
    if track is not None and count:
        checked = sorted({0, count // 2, count - 1})
        exact = np.array([one(k) for k in checked])
        scale = max(1.0, float(np.nanmax(np.abs(exact), initial=0.0)))
        if not np.allclose(track[checked], exact, rtol=1e-12, atol=1e-12 * scale, equal_nan=True):
            track = None
    if track is None:
        track = np.array([one(k) for k in range(count)], dtype=float).reshape(count, 2)
    return track


def _stacked_track(joint: Joint, q: np.ndarray, t: np.ndarray) -> np.ndarray | None:
    """``joint.at`` called once on every sample (see :func:`_joint_track`), or None where that fails."""
    try:
        with np.errstate(all="ignore"):  # a diverged run's samples: the loop would warn no more than this
            x, y = joint.at(q.T, t)
            x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
            if x.shape not in ((), t.shape) or y.shape not in ((), t.shape):
                return None
            return np.column_stack([np.broadcast_to(x, t.shape), np.broadcast_to(y, t.shape)])  # a fixed point too
    except Exception:  # not written for stacks: the caller goes sample by sample
        return None


_JOINT_MARKERS = {
    "body": dict(marker="o", color=OKABE_ITO["black"], markerfacecolor=OKABE_ITO["black"]),
    "pin": dict(marker="o", color=OKABE_ITO["black"], markerfacecolor="white"),
    "fixed": dict(marker="^", color=OKABE_ITO["black"], markerfacecolor="0.85"),
}


class MechanismView:
    """The artists of one instant of a mechanism on an Axes, created once and moved in place.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    mechanism : Mechanism
    forces : bool, optional
        Draw the force arrows at the force sites (three per site).
    labels : bool, optional
        Write ``N``, ``L``, ``C`` beside the arrow heads (line styles and colours
        distinguish them too).

    Attributes
    ----------
    force_scale : float
        Metres of arrow per newton of force (set by :meth:`fit_forces`).
    """

    def __init__(self, ax: Axes, mechanism: Mechanism, *, forces: bool = True, labels: bool = True):
        if not isinstance(mechanism, Mechanism):
            raise TypeError(f"`mechanism` must be a Mechanism; got {type(mechanism).__name__}")
        self.ax = ax
        self.mechanism = mechanism
        self.force_scale = 0.0
        self._scene_size = 0.0
        self.show_forces = bool(forces) and bool(mechanism.forces)
        self._artists = []
        grey = "0.55"
        self._guides = []
        for guide in mechanism.guides:
            style = dict(color="0.35", lw=2.5) if guide.style == "ground" else dict(color=grey, lw=1.0, ls="-")
            (line,) = ax.plot([], [], zorder=1, **style)
            self._guides.append((guide, line))
            if guide.moving:
                self._artists.append(line)
            else:
                path = np.asarray(guide.path(0.0), dtype=float)
                line.set_data(path[:, 0], path[:, 1])
        self._trace = ax.plot([], [], color=OKABE_ITO["sky_blue"], lw=1.2, zorder=2)[0] if mechanism.trace else None
        self._parts = []
        for part in mechanism.parts:
            if isinstance(part, Rod):
                artist = ax.plot([], [], color="0.25", lw=part.width, solid_capstyle="round", zorder=3)[0]
            elif isinstance(part, Spring):
                artist = ax.plot([], [], color="0.3", lw=1.2, zorder=3)[0]
            elif isinstance(part, Block):
                artist = ax.add_patch(Polygon(np.zeros((4, 2)), closed=True, facecolor="0.88",
                                              edgecolor="0.2", lw=1.2, zorder=3))
            else:  # Disk
                circle = ax.add_patch(Circle((0, 0), part.radius, facecolor="0.92", edgecolor="0.2", lw=1.2, zorder=3))
                spoke = ax.plot([], [], color="0.2", lw=1.2, zorder=3)[0] if part.spin else None
                artist = (circle, spoke)
            self._parts.append((part, artist))
            self._artists += [a for a in (artist if isinstance(artist, tuple) else (artist,)) if a is not None]
        self._joints = []
        for joint in mechanism.joints:
            if joint.style == "hidden":
                continue
            marker = ax.plot([], [], ls="none", ms=joint.size, zorder=6, **_JOINT_MARKERS[joint.style])[0]
            self._joints.append((joint, marker))
            self._artists.append(marker)
        self._arrows = []
        self._label_heads = {}  # per label (by id): the arrow head in metres and the arrow's unit direction
        if self.show_forces:
            for _site in mechanism.forces:
                row = []
                for kind in FORCE_KINDS:
                    style = FORCE_STYLES[kind]
                    arrow = ax.add_patch(FancyArrowPatch(
                        (0, 0), (0, 0), arrowstyle="-|>", mutation_scale=ARROW_HEAD_PX, color=style["color"],
                        lw=style["lw"], linestyle=style["ls"], shrinkA=0, shrinkB=0, zorder=6.5 + style["z"]))  # over the bodies: never hidden
                    text = ax.text(0, 0, style["short"] if labels else "", color=style["color"], fontsize=8,
                                   fontweight="bold", ha="center", va="center", zorder=7.5)
                    row.append((arrow, text))
                    self._artists += [arrow, text]
                self._arrows.append(row)
        self._clock = ax.text(0.02, 0.97, "", transform=ax.transAxes, va="top", fontsize=8, zorder=8,
                              bbox=dict(facecolor="white", edgecolor="none", alpha=0.7, pad=1))
        self._artists.append(self._clock)
        if self._trace is not None:
            self._artists.insert(0, self._trace)

    @property
    def artists(self) -> list:
        """Every artist that moves from one instant to the next (for blitting)."""
        return list(self._artists)

    @property
    def run_artists(self) -> list:
        """The artists that change only with the run: the fixed guides' lines and the trace."""
        fixed = [line for guide, line in self._guides if not guide.moving]
        return fixed + ([self._trace] if self._trace is not None else [])

    def set_mechanism(self, mechanism: Mechanism) -> None:
        """Show ``mechanism``, of the same structure, instead (new parameter values: lengths, slopes).

        Raises
        ------
        ValueError
            When ``mechanism`` has other joints, parts, guides or force sites.
        """
        if not isinstance(mechanism, Mechanism):
            raise TypeError(f"`mechanism` must be a Mechanism; got {type(mechanism).__name__}")
        old = self.mechanism
        same = ([j.name for j in old.joints] == [j.name for j in mechanism.joints]
                and [type(p) for p in old.parts] == [type(p) for p in mechanism.parts]
                and len(old.guides) == len(mechanism.guides) and len(old.forces) == len(mechanism.forces))
        if not same:
            raise ValueError("`mechanism` must have the same joints, parts, guides and force sites as the one shown")
        self.mechanism = mechanism
        self._parts = [(part, artist) for part, (_, artist) in zip(mechanism.parts, self._parts)]
        self._guides = [(guide, line) for guide, (_, line) in zip(mechanism.guides, self._guides)]
        for guide, line in self._guides:
            if not guide.moving:
                path = np.asarray(guide.path(0.0), dtype=float)
                line.set_data(path[:, 0], path[:, 1])

    def fit_forces(self, trajectory: Trajectory, share: float = 0.3) -> float:
        """Choose :attr:`force_scale` so the largest force of the run is ``share`` of the scene's size.

        Returns the scale (metres of arrow per newton); 0 when every force vanishes.
        """
        if not self.show_forces:
            return 0.0
        span = self.scene_size(trajectory)
        self._scene_size = span
        largest = max((float(np.abs(self._site_forces(trajectory, kind)).max(initial=0.0)) for kind in FORCE_KINDS),
                      default=0.0)
        self.force_scale = share * span / largest if largest > 1e-12 else 0.0
        return self.force_scale

    def _site_forces(self, trajectory: Trajectory, kind: str) -> np.ndarray:
        force = getattr(trajectory, kind)
        return np.stack([site.pick(force) for site in self.mechanism.forces], axis=1)  # shape (N, sites, 2)

    def scene_size(self, trajectory: Trajectory) -> float:
        """The larger side of the box around every joint over the run (at least 1e-3 m)."""
        points = self._all_points(trajectory, forces=False)
        return max(float(np.ptp(points[:, 0])), float(np.ptp(points[:, 1])), 1e-3)

    def _all_points(self, trajectory: Trajectory, forces: bool = True) -> np.ndarray:
        """Every point the run puts on the axes (joints, moving guides, bodies' corners, arrow tips), shape (k, 2).

        The bodies' points and the force sites of a run are found once and kept for that
        trajectory and mechanism (an explorer asks for them several times per update: the
        scene's size, then the views); the arrow tips are the sites plus :attr:`force_scale`
        times the forces, so they follow the scale without a second pass over the run.
        """
        bodies, sites, vectors = self._run_points(trajectory)
        if not (forces and self.force_scale) or sites.size == 0:
            return bodies
        return np.concatenate([bodies, (sites[None] + self.force_scale * vectors).reshape(-1, 2)])

    def _run_points(self, trajectory: Trajectory) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(body points (k, 2), force sites (K, s, 2), site forces by kind (3, K, s, 2)), every stride-th sample."""
        key = (trajectory, self.mechanism)
        cached = getattr(self, "_points_cache", None)
        if cached is not None and cached[0][0] is trajectory and cached[0][1] is self.mechanism:
            return cached[1]
        stride = max(1, len(trajectory.t) // 200)
        q, t = trajectory.q[::stride], trajectory.t[::stride]
        tracks = {joint.name: _joint_track(joint, q, t) for joint in self.mechanism.joints}  # each (K, 2)
        chunks = list(tracks.values())
        for guide in self.mechanism.guides:
            if guide.moving:
                chunks += [np.asarray(guide.path(when), dtype=float).reshape(-1, 2) for when in t]
        for part in self.mechanism.parts:
            if isinstance(part, Disk):
                chunks += [tracks[part.at] + part.radius * corner for corner in ([1.0, 1.0], [-1.0, -1.0])]
            elif isinstance(part, Block):
                corners = _block_corners(np.zeros(2), part.width, part.height, part.angle)  # about the centre
                chunks += [tracks[part.at] + corner for corner in corners]
        sites = np.stack([tracks[site.at] for site in self.mechanism.forces], axis=1) if self.mechanism.forces \
            else np.zeros((t.size, 0, 2))
        vectors = np.stack([self._site_forces(trajectory, kind)[::stride] for kind in FORCE_KINDS]) \
            if self.mechanism.forces else np.zeros((len(FORCE_KINDS), *sites.shape))
        found = (np.concatenate(chunks), sites, vectors)
        self._points_cache = (key, found)
        return found

    def limits(self, trajectory: Trajectory, margin: float = 0.08) -> tuple[tuple[float, float], tuple[float, float]]:
        """x and y intervals that hold every joint, moving guide and arrow tip of the run."""
        points = self._all_points(trajectory)
        lo, hi = points.min(axis=0), points.max(axis=0)
        pad = margin * max(float(np.max(hi - lo)), 1e-3)
        return (float(lo[0] - pad), float(hi[0] + pad)), (float(lo[1] - pad), float(hi[1] + pad))

    def show_trace(self, trajectory: Trajectory) -> None:
        """Draw the path of the mechanism's ``trace`` joint over the whole run."""
        if self._trace is None:
            return
        path = _joint_track(self.mechanism._index[self.mechanism.trace], trajectory.q, trajectory.t)
        self._trace.set_data(path[:, 0], path[:, 1])

    def update(self, q, t: float, forces: dict | None = None) -> None:
        """Move every artist to coordinates ``q`` at time ``t``.

        Parameters
        ----------
        q : array_like, shape (n,)
        t : float
            Time in seconds (moving guides and the clock).
        forces : dict of str to array_like, shape (n,), optional
            Generalized force vectors by kind (``"impressed"``, ``"ideal"``,
            ``"nonideal"``); arrows of a missing kind are hidden.
        """
        where = self.mechanism.positions(q, t)
        for guide, line in self._guides:
            if guide.moving:
                path = np.asarray(guide.path(t), dtype=float)
                line.set_data(path[:, 0], path[:, 1])
        for part, artist in self._parts:
            if isinstance(part, (Rod, Spring)):
                a, b = where[part.a], where[part.b]
                xy = _spring_line(a, b, part.coils, part.width) if isinstance(part, Spring) else np.array([a, b])
                artist.set_data(xy[:, 0], xy[:, 1])
            elif isinstance(part, Block):
                artist.set_xy(_block_corners(where[part.at], part.width, part.height, part.angle))
            else:
                circle, spoke = artist
                center = where[part.at]
                circle.center = tuple(center)
                circle.set_radius(part.radius)
                if spoke is not None:
                    angle = float(part.spin(np.asarray(q, dtype=float), t))
                    tip = center + part.radius * np.array([math.cos(angle), math.sin(angle)])
                    spoke.set_data([center[0], tip[0]], [center[1], tip[1]])
        for joint, marker in self._joints:
            marker.set_data([where[joint.name][0]], [where[joint.name][1]])
        for site, row in zip(self.mechanism.forces, self._arrows):
            base = where[site.at]
            for kind, (arrow, text) in zip(FORCE_KINDS, row):
                vec = None if forces is None or kind not in forces else np.asarray(forces[kind], dtype=float)
                tip_vec = np.zeros(2) if vec is None else self.force_scale * site.pick(vec)
                # A diverged run can put points at 1e100 m, where text cannot even be laid out: not drawn.
                sane = bool(np.all(np.abs(np.concatenate([base, base + tip_vec])) < SANE_REACH))
                visible = vec is not None and sane and float(np.hypot(*tip_vec)) > 1e-9
                if sane:
                    arrow.set_positions(tuple(base), tuple(base + tip_vec))
                arrow.set_visible(visible)
                text.set_visible(visible)
                if visible:
                    # The label sits just past the arrow head, so that it never hides under the body.
                    beyond = tip_vec / max(float(np.hypot(*tip_vec)), 1e-12)
                    label = base + tip_vec + 0.04 * self._label_offset() * beyond
                    text.set_visible(bool(np.all(np.abs(label) < SANE_REACH)))
                    text.set_position(tuple(label))
                    self._label_heads[id(text)] = (base + tip_vec, beyond, base)
        self._clock.set_text(f"t = {t:.2f} s")
        self.place_labels()

    def place_labels(self) -> None:
        """Keep the arrow labels apart, and off the axes' other texts (clock, notes), at the current view.

        An arrow shorter than :data:`MIN_NAMED_ARROW_PX` on screen gets no label (its letter would
        sit on the body, among the letters of the other short arrows); the force key names it.
        Each other label goes to the first free spot near its arrow head: straight past the head,
        then turned about the head (45, 90, 135, 180 degrees), then further out. Where
        every spot is taken (a crowded instant), it stays straight past the head. Called
        after each instant is drawn, and again by an explorer once its views are chosen,
        since a spot is free or not in pixels.
        """
        renderer = _renderer_of(self.ax)
        to_pixels = self.ax.transData
        labels = []
        for row in self._arrows:
            for arrow, text in row:
                if not (arrow.get_visible() and id(text) in self._label_heads):
                    continue
                head, beyond, tail = self._label_heads[id(text)]
                length = float(np.hypot(*(to_pixels.transform(head) - to_pixels.transform(tail))))
                # A head larger than its arrow is a blob: several such on one body made a knot of heads.
                arrow.set_mutation_scale(min(ARROW_HEAD_PX, max(MIN_ARROW_HEAD_PX, 0.6 * length)))
                if not text.get_text():
                    continue
                # A label beside an arrow shorter than itself names a dot: with the arrows of the other
                # sites and kinds it makes a knot of letters. Such arrows go unnamed (the key names them).
                named = length >= MIN_NAMED_ARROW_PX and bool(np.all(np.abs(head) < SANE_REACH))
                text.set_visible(named)
                if named:
                    labels.append((text, head, beyond))
        if renderer is None or not labels:
            return
        ours = {id(text) for text, _, _ in labels}
        frame = self.ax.bbox
        # Measuring a static annotation re-sets its transform, which would mark the figure stale (a full
        # draw on every update): only plain texts and moving (animated) annotations are measured.
        taken = [t.get_window_extent(renderer) for t in self.ax.texts
                 if id(t) not in ours and t.get_visible() and t.get_text().strip()
                 and (not isinstance(t, Annotation) or t.get_animated())]
        for text, head, beyond in labels:
            half = _half_size(text, renderer)
            head_px = to_pixels.transform(head)
            direction = to_pixels.transform(head + beyond * 1e-3 * max(self._label_offset(), 1e-9)) - head_px
            norm = float(np.hypot(*direction))
            direction = direction / norm if norm > 0 else np.array([0.0, 1.0])
            spot = _free_spot(head_px, direction, half, taken, frame)
            taken.append(Bbox.from_extents(*(spot - half), *(spot + half)))
            text.set_position(tuple(to_pixels.inverted().transform(spot)))

    def joint_positions(self) -> dict[str, np.ndarray]:
        """Where each drawn joint marker is now, by joint name, shape (2,) each."""
        return {joint.name: np.asarray(marker.get_xydata(), dtype=float).reshape(-1, 2)[0]
                for joint, marker in self._joints}

    def drawn_arrows(self) -> list[tuple[str, str, np.ndarray, np.ndarray]]:
        """The force arrows on screen: ``(joint, kind, tail, tip)`` for each visible arrow, in metres."""
        shown = []
        for site, row in zip(self.mechanism.forces, self._arrows):
            for kind, (arrow, _) in zip(FORCE_KINDS, row):
                if arrow.get_visible():
                    tail, tip = (np.asarray(p, dtype=float) for p in arrow._posA_posB)
                    shown.append((site.at, kind, tail, tip))
        return shown

    def _label_offset(self) -> float:
        """The scene's size (set by :meth:`fit_forces`), else the view's: labels sit a few % of it past a tip."""
        if self._scene_size:
            return self._scene_size
        (x0, x1), (y0, y1) = self.ax.get_xlim(), self.ax.get_ylim()
        return max(abs(x1 - x0), abs(y1 - y0))

    def show(self, trajectory: Trajectory, index: int) -> None:
        """Move to sample ``index`` of ``trajectory``, with its three force terms."""
        forces = {kind: getattr(trajectory, kind)[index] for kind in FORCE_KINDS}
        self.update(trajectory.q[index], float(trajectory.t[index]), forces)


ARROW_HEAD_PX = 11.0
"""Size of a force arrow's head (its ``mutation_scale``), in pixels, on an arrow long enough to carry it."""
MIN_ARROW_HEAD_PX = 3.0
"""The smallest head: a shorter arrow's head is 0.6 of its length, down to this."""
MIN_NAMED_ARROW_PX = 14.0
"""Shortest arrow, in pixels, that gets its letter (N, L, C) beside it: about a label's height and a half."""
LABEL_TURNS = (0.0, 45.0, -45.0, 90.0, -90.0, 135.0, -135.0, 180.0)  # degrees from the arrow's direction
LABEL_GAPS = (1.0, 2.2, 3.4)  # distances of a label's centre from the head, in label half-heights past it


def _renderer_of(ax: Axes):
    """The renderer of the axes' canvas (text sizes need one), or None when the canvas has none."""
    canvas = ax.get_figure(root=True).canvas
    get = getattr(canvas, "get_renderer", None)
    return get() if get is not None else None


def _half_size(text, renderer) -> np.ndarray:
    """Half the width and height of a text's box in pixels, plus a pixel of air."""
    box = text.get_window_extent(renderer)
    return np.array([box.width / 2 + 1.0, box.height / 2 + 1.0])


def _free_spot(head, direction, half, taken, frame) -> np.ndarray:
    """The centre, in pixels, of the first label box near ``head`` that meets no box in ``taken``.

    Candidates: at each gap of :data:`LABEL_GAPS`, the turns of :data:`LABEL_TURNS`
    from ``direction``; a box must also lie inside ``frame`` (the axes). None free: the first.
    """
    first = None
    for gap in LABEL_GAPS:
        reach = gap * float(np.hypot(*half))
        for turn in np.radians(LABEL_TURNS):
            c, s = math.cos(turn), math.sin(turn)
            spot = head + reach * np.array([c * direction[0] - s * direction[1], s * direction[0] + c * direction[1]])
            if first is None:
                first = spot
            box = Bbox.from_extents(*(spot - half), *(spot + half))
            inside = frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1
            if inside and not any(box.overlaps(other) for other in taken):
                return spot
    return first


def _new_figure(figsize) -> Figure:
    """A figure outside pyplot (nothing shown, nothing left open), with an Agg canvas."""
    fig = Figure(figsize=figsize, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def force_legend(ax: Axes) -> None:
    """A key of the three force styles below ``ax`` (it never covers the mechanism)."""
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], color=s["color"], ls=s["ls"], lw=s["lw"], label=f"$F^{s['short']}$")
               for s in (FORCE_STYLES[k] for k in FORCE_KINDS)]
    # Below the axes and their x label, so that it never covers the mechanism. The offset is in points
    # (tick labels and label are a fixed size), not a fraction of the axes, whose height varies.
    below_label = offset_copy(ax.transAxes, fig=ax.figure, y=-34, units="points")
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.0), bbox_transform=below_label, ncol=3,
              fontsize=8, frameon=False, handlelength=1.8, columnspacing=0.8, handletextpad=0.4)


def draw_mechanism(trajectory: Trajectory, mechanism: Mechanism, index: int = -1, ax: Axes | None = None,
                   *, forces: bool = True) -> MechanismView:
    """Draw sample ``index`` of ``trajectory`` with its force arrows; returns the view.

    Parameters
    ----------
    trajectory : Trajectory
    mechanism : Mechanism
        How the system looks (each example module has ``mechanism(**params)``).
    index : int, optional
        Sample to draw (default: the last).
    ax : matplotlib.axes.Axes, optional
        Where to draw (default: a new figure outside pyplot).
    forces : bool, optional
        Draw the impressed, ideal and nonideal forces (2005 paper, Eqs. 9-11).
    """
    _check_trajectory(trajectory, mechanism)
    n = len(trajectory.t)
    if not -n <= int(index) < n:
        raise IndexError(f"`index` {index} is outside the trajectory's {n} samples")
    if ax is None:
        ax = _new_figure((5.0, 4.0)).add_subplot()
    view = MechanismView(ax, mechanism, forces=forces)
    view.show_trace(trajectory)
    view.fit_forces(trajectory)
    (x0, x1), (y0, y1) = view.limits(trajectory)
    ax.set(xlim=(x0, x1), ylim=(y0, y1), xlabel=mechanism.xlabel, ylabel=mechanism.ylabel)
    ax.set_aspect("equal", adjustable="box")
    view.show(trajectory, int(index) % n)
    if view.show_forces:
        force_legend(ax)
    return view


def _check_trajectory(trajectory, mechanism) -> None:
    if not isinstance(trajectory, Trajectory):
        raise TypeError(f"`trajectory` must be a Trajectory (from udk_notebooks.simulate); got {type(trajectory).__name__}")
    if not isinstance(mechanism, Mechanism):
        raise TypeError(f"`mechanism` must be a Mechanism (e.g. examples.<system>.mechanism()); "
                        f"got {type(mechanism).__name__}")
    n = trajectory.q.shape[1]
    bad = [site for site in mechanism.forces if max((i for i in site.components if i is not None), default=-1) >= n]
    if bad:
        raise ValueError(f"`mechanism` expects force entries {bad[0].components} but the trajectory has only {n} "
                         "coordinates: is it the mechanism of this system?")


LAYOUT_PASSES = 12
"""Most layout passes for an animation's one layout (:meth:`MechanismAnimation._one_draw_per_frame`)."""
LAYOUT_SETTLED_PX = 0.02
"""A layout is settled when a pass moves no axes edge by this many pixels (a fiftieth of a pixel)."""


class MechanismAnimation:
    """An animation of a trajectory that plays in a page without a kernel, or saves to a file.

    Made by :func:`animate`. In a notebook it displays itself as JavaScript
    frames (:meth:`to_jshtml`), which also survive an export to HTML.

    Attributes
    ----------
    figure : matplotlib.figure.Figure
    animation : matplotlib.animation.FuncAnimation
    frames : int
    fps : float
    """

    def __init__(self, figure: Figure, animation: FuncAnimation, frames: int, fps: float,
                 moving: Sequence | None = None):
        self.figure = figure
        self.animation = animation
        self.frames = frames
        self.fps = fps
        self._moving = list(moving) if moving is not None else None  # the artists a frame changes

    def to_jshtml(self) -> str:
        """HTML and JavaScript with every frame embedded as a PNG (plays without a kernel)."""
        with self._one_draw_per_frame():
            return self.animation.to_jshtml(fps=self.fps, default_mode="loop")

    @contextlib.contextmanager
    def _one_draw_per_frame(self):
        """While the frames are written: lay the figure out once, and draw each frame once.

        matplotlib's ``Animation.save`` draws every frame in full twice: ``draw_idle`` once
        the frame is updated (on an Agg canvas a full draw, then thrown away) and ``savefig``
        the draw it keeps, after a layout pass of its own. The thrown-away draw is skipped.
        The first frame is laid out until the layout settles (it starts from nothing:
        :data:`LAYOUT_SETTLED_PX`); every later frame keeps that layout. A layout reads the
        axes' decorations (ticks, labels, title) and the texts outside the axes; in a frame of
        :func:`animate` the limits are those of the whole run and the force labels are placed
        inside the axes where there is room, so every frame has the same layout. matplotlib's
        own route lays out each frame from the last, and its frames drift by a pixel or so
        while its passes converge to that same layout (``tests/test_drawing.py`` checks where
        they end). A label pushed out of the axes in a later frame (no room inside) would move
        matplotlib's layout for that frame; here the frames stay where they are. The frames
        themselves are blitted where the writer allows (:meth:`_blitted_savefig`).
        """
        figure, canvas = self.figure, self.figure.canvas
        engine = figure.get_layout_engine()
        if engine is not None:
            lay_out = engine.execute
            settled: list[bool] = []

            def lay_out_once(fig):
                if settled:
                    return
                settled.append(True)
                # A pass moves the axes, which moves what hangs below them: the passes converge (by
                # about a quarter each), and a layout kept for every frame must be the settled one.
                size = np.tile(fig.bbox.size, 2)
                for _ in range(LAYOUT_PASSES):
                    before = np.array([ax.get_position().bounds for ax in fig.axes]) * size
                    lay_out(fig)
                    after = np.array([ax.get_position().bounds for ax in fig.axes]) * size
                    if np.abs(after - before).max(initial=0.0) < LAYOUT_SETTLED_PX:
                        break

            engine.execute = lay_out_once  # on this engine alone, while the frames are written
        idle = getattr(canvas, "_is_idle_drawing", False)
        canvas._is_idle_drawing = True  # FigureCanvasBase.draw_idle draws only when this is False
        if self._moving is not None and isinstance(canvas, FigureCanvasAgg):
            figure.savefig = self._blitted_savefig(figure.savefig)  # on this figure alone, while the frames are written
        try:
            yield
        finally:
            canvas._is_idle_drawing = idle
            if engine is not None:
                del engine.execute
            if "savefig" in vars(figure):
                del figure.savefig

    def _blitted_savefig(self, savefig):
        """``figure.savefig`` for the writers' frames: the still part drawn once, the moving artists per frame.

        The writers save each frame with ``figure.savefig(buffer, format=..., dpi=...)``, a
        full draw: axes, ticks, labels, key and trace again for every frame, though only the
        mechanism moves. Here the first frame draws the figure without the moving artists
        (:attr:`MechanismView.artists`) and keeps those pixels; a frame puts them back and
        draws the moving artists over them, as the explorers do. That is the full draw only
        where no still artist is drawn above a moving one: a frame in which a moving artist's
        box meets the box of a still artist of the same or a higher z-order (a spine, a grid
        line, a tick, a key, a guide drawn later, any figure-level artist) is drawn in full
        instead. ``tests/test_drawing.py`` compares the frames with full draws, frame by
        frame, for every example system, with a grid, and with a guide over a moving one.
        Only PNG and raw RGBA frames at the figure's own dpi, on the figure's own opaque
        background (as the writer's arguments or, where it passes none, the ``savefig.*``
        settings say), take this route; any other call is a true ``savefig``. Measured by
        ``benchmarks/animation.py`` (80 frames of the growing circle, idle machine):
        matplotlib's own route 22.7 s, one layout and a full draw per frame 9.3 s, blitted 1.5 s.
        """
        import matplotlib
        from matplotlib.axis import Axis
        from matplotlib.colors import to_rgba
        from matplotlib.image import imsave

        figure, canvas = self.figure, self.figure.canvas
        moving = self._moving
        chosen = set(map(id, moving))
        still: list = []  # the pixels without the moving artists, once drawn
        above: list = []  # boxes (pixels) of the still artists drawn at or above the lowest moving artist
        background = to_rgba(figure.get_facecolor())

        def own_background(facecolor=None, transparent=None) -> bool:
            if transparent is None:
                transparent = matplotlib.rcParams["savefig.transparent"]
            if facecolor is None:
                facecolor = matplotlib.rcParams["savefig.facecolor"]
            if transparent or background[3] != 1.0:
                return False
            return (isinstance(facecolor, str) and facecolor == "auto") or np.allclose(
                to_rgba(facecolor), background, rtol=0, atol=1e-12)

        def boxes_above(renderer) -> list:
            low = min((artist.get_zorder() for artist in moving), default=np.inf)
            found = [child.get_window_extent(renderer) for child in figure.get_children()
                     if child is not figure.patch and child not in figure.axes and child.get_visible()]
            for ax in figure.axes:
                for child in ax.get_children():
                    if (id(child) in chosen or child is ax.patch or not child.get_visible()
                            or child.get_zorder() < low):
                        continue
                    if isinstance(child, Axis):  # its ticks and grid lines, which may reach into the axes
                        ticks = child.get_major_ticks() + child.get_minor_ticks()
                        parts = [line for tick in ticks for line in (tick.tick1line, tick.tick2line, tick.gridline)
                                 if tick.get_visible() and line.get_visible()]
                        found += [line.get_window_extent(renderer) for line in parts]
                        found.append(child.get_tightbbox(renderer))
                    else:
                        found.append(child.get_window_extent(renderer))
            return [box.padded(2) for box in found if box is not None and np.all(np.isfinite(box.bounds))]

        def covered(renderer) -> bool:
            """Whether a still artist drawn above may cross a moving artist in this frame."""
            for artist in moving:
                if not artist.get_visible():
                    continue
                box = artist.get_window_extent(renderer)
                clip = artist.get_clip_box() if artist.get_clip_on() else None
                if clip is not None:
                    box = Bbox.intersection(box, clip)
                if box is None or not np.all(np.isfinite(box.bounds)) or box.width < 0 or box.height < 0:
                    continue
                if any(box.overlaps(other) for other in above):
                    return True
            return False

        def save(fname, *args, format=None, dpi=None, **options):
            if (args or set(options) - {"facecolor", "transparent"} or not own_background(**options)
                    or format not in ("png", "rgba") or dpi not in (None, "figure", figure.dpi)):
                return savefig(fname, *args, format=format, dpi=dpi, **options)
            if not still:
                engine = figure.get_layout_engine()
                if engine is not None:
                    engine.execute(figure)  # the one layout, with the moving artists in it
                # hidden for the one full draw (an animation being saved draws "animated" artists too)
                shown = [artist.get_visible() for artist in moving]
                for artist in moving:
                    artist.set_visible(False)
                canvas.draw()
                still.append(canvas.copy_from_bbox(figure.bbox))
                for artist, visible in zip(moving, shown):
                    artist.set_visible(visible)
                above.extend(boxes_above(canvas.get_renderer()))
            renderer = canvas.get_renderer()
            if covered(renderer):
                canvas.draw()  # a still artist over a moving one here: this frame in full
            else:
                canvas.restore_region(still[0])
                for artist in sorted(moving, key=lambda a: a.get_zorder()):
                    if artist.get_visible():
                        figure.draw_artist(artist)
            rgba = np.asarray(canvas.buffer_rgba())
            if format == "rgba":
                fname.write(rgba.tobytes())
            else:
                imsave(fname, rgba, format="png", origin="upper", dpi=figure.dpi)

        return save

    def _repr_html_(self) -> str:
        return self.to_jshtml()

    def save_gif(self, path: str | os.PathLike) -> str:
        """Save as an animated GIF (Pillow); returns the path."""
        from matplotlib.animation import PillowWriter

        path = os.fspath(path)
        with self._one_draw_per_frame():
            self.animation.save(path, writer=PillowWriter(fps=self.fps))
        return path

    def save_mp4(self, path: str | os.PathLike) -> str:
        """Save as MP4 with ffmpeg; raises RuntimeError naming ffmpeg when no writer is available."""
        from matplotlib.animation import writers

        if not writers.is_available("ffmpeg"):
            raise RuntimeError("saving MP4 needs the ffmpeg program, which matplotlib cannot find; "
                               "install it (e.g. `apt-get install ffmpeg` or `conda install ffmpeg`) "
                               "or use save_gif() / to_jshtml() instead")
        path = os.fspath(path)
        with self._one_draw_per_frame():
            self.animation.save(path, writer=writers["ffmpeg"](fps=self.fps))
        return path


def animate(
    trajectory: Trajectory,
    mechanism: Mechanism,
    *,
    frames: int = 60,
    duration: float | None = None,
    forces: bool = True,
    figsize: tuple[float, float] = (4.8, 3.8),
    dpi: float = 72.0,
) -> MechanismAnimation:
    """Animate a trajectory: the mechanism, its three force arrows and a clock.

    Parameters
    ----------
    trajectory : Trajectory
        A simulated run (:func:`udk_notebooks.simulate`).
    mechanism : Mechanism
        How the system looks (``examples.<system>.mechanism(**params)`` with the run's parameters).
    frames : int, optional
        Number of frames, taken at evenly spaced times (2 to 400). The default
        keeps an exported page near 1 MB (about 15 kB a frame at the default size).
    duration : float, optional
        Seconds the animation lasts when played (default: ``frames / 20``, i.e. 20 frames per second).
    forces : bool, optional
        Draw the impressed (``F^N``), ideal (``F^L``) and nonideal (``F^C``) forces.
    figsize : (float, float), optional
        Figure size in inches.
    dpi : float, optional
        Pixels per inch of the frames.

    Returns
    -------
    MechanismAnimation
        ``to_jshtml()``, ``save_gif(path)``, ``save_mp4(path)``; displays itself in a notebook.
    """
    _check_trajectory(trajectory, mechanism)
    if isinstance(frames, bool) or not isinstance(frames, (int, np.integer)) or not 2 <= frames <= 400:
        raise ValueError(f"`frames` must be an integer from 2 to 400; got {frames!r}")
    if duration is None:
        duration = frames / 20.0
    if not (isinstance(duration, (int, float)) and math.isfinite(duration) and duration > 0):
        raise ValueError(f"`duration` must be a positive number of seconds; got {duration!r}")
    if not (math.isfinite(dpi) and 20 <= dpi <= 300):
        raise ValueError(f"`dpi` must be between 20 and 300; got {dpi!r}")
    t = trajectory.t
    targets = np.linspace(t[0], t[-1], int(frames))
    samples = np.clip(np.searchsorted(t, targets), 0, len(t) - 1)
    fig = _new_figure(figsize)
    fig.set_dpi(dpi)
    ax = fig.add_subplot()
    view = draw_mechanism(trajectory, mechanism, index=int(samples[0]), ax=ax, forces=forces)
    if mechanism.name:
        ax.set_title(mechanism.name, fontsize=9)

    def frame(k):
        view.show(trajectory, int(samples[k]))
        return view.artists

    from matplotlib.animation import FuncAnimation

    animation = FuncAnimation(fig, frame, frames=len(samples), interval=1000.0 * duration / len(samples), blit=False)
    return MechanismAnimation(fig, animation, len(samples), len(samples) / duration, moving=view.artists)
