r"""Physical contacts: a point of a body against a plane, a curve or a surface.

A :class:`Contact` is declared by what a lecturer draws: the position
``r_c(q, t)`` of the contact point (a sympy column of 2 or 3 entries, in
metres) and the surface it touches, given by a signed distance ``d(r, t)``
(positive on the allowed side). :class:`~udk_notebooks.model.Model` forms
from it, in :func:`contact_terms`:

* the gap constraint ``g(q, t) = d(r_c(q, t), t) / |grad d|``, a holonomic row
  whose Jacobian on the surface is ``n^T J_c`` with the unit normal
  ``n = grad d / |grad d|`` and ``J_c = dr_c/dq``. The force of the row,
  ``J_c^T n lambda``, is the force ``lambda n`` on the contact point, so its
  multiplier ``lambda`` IS the normal force ``N`` in newtons;
* the slip velocity ``s = t^T J_c q'`` (2D: along the unit tangent
  ``t = (n_y, -n_x)``), linear and homogeneous in ``q'`` (``J_c q'`` is the
  velocity of the body's material point at the contact: the rate of ``r_c``
  for a fixed point of the body, or ``Contact.velocity`` for a rolling one); kinetic friction is
  the generalized force ``J_c^T f`` of the contact force
  ``f = -mu N sgn(s) t``, that is ``C = -mu N sgn(s) ds/dq'`` (the nonideal
  vector of Udwadia, Kalaba & Fan 2005, Eq. 19, whose power is
  ``-mu N |s|``).

With the slip directions given, the multipliers of the constraint rows satisfy
``lambda = lambda_L - (A M^-1 A^T)^-1 A M^-1 C`` (from
``M q'' = Q + A^T lambda + C`` and ``A q'' = b``; Udwadia, Kalaba & Fan 2005,
Eqs. 7-11), and ``C`` is linear in the normal forces: so the normal forces of
sliding contacts solve a small linear system ``(I - B) N = a``
(:meth:`udk_notebooks.compiled.CompiledModel.solve_contacts`). When it has no
solution with ``N >= 0``, or more than one (Painleve's paradox, ``1 - B <= 0``
for one contact), the package refuses with a :class:`PainleveParadoxError`
instead of returning a number.

A unilateral contact (the default) only pushes: when its ``N`` falls to zero
the run opens it at that instant (an event) and continues without it; when an
open point comes back to its surface the run stops with status ``"impact"``
(impacts are not modelled). ``unilateral=False`` keeps the point on its
surface for good (a bead on a wire, a cart on rails), with ``N`` of either
sign and friction ``mu |N|``.

Three-dimensional contacts are frictionless in this version (``mu = 0``):
isotropic friction along a 2-vector slip is refused rather than approximated.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from typing import Callable, Sequence

import sympy as sm

from .errors import PainleveParadoxError

__all__ = ["Contact", "Curve", "PainleveParadoxError", "Plane", "Surface", "contact_terms"]


def _column(values, argument: str) -> sm.Matrix:
    """A sympy column of 2 or 3 entries, or a ValueError naming ``argument``."""
    try:
        col = sm.Matrix(list(values) if not isinstance(values, sm.MatrixBase) else values)
    except (TypeError, ValueError, sm.SympifyError) as exc:
        raise ValueError(f"`{argument}` must be a column of 2 or 3 sympy expressions; got {values!r}") from exc
    if col.shape[0] == 1 and col.shape[1] in (2, 3):
        col = col.T
    if col.shape not in ((2, 1), (3, 1)):
        raise ValueError(f"`{argument}` must hold 2 (planar) or 3 (spatial) entries; got shape {col.shape}")
    return col


@dataclass(frozen=True)
class Plane:
    """The plane (a line in 2D) ``n . r = offset``, allowed side ``n . r > offset``.

    Parameters
    ----------
    normal : sequence of 2 or 3 sympy expressions
        The unit normal ``n``, pointing to the allowed side (up, for a floor).
        It may depend on time ``t`` (``udk_notebooks.model.TIME``) for a
        rotating plane; it must be a unit vector (checked symbolically).
    offset : sympy expression or float, optional
        Distance of the plane from the origin along ``n`` (may depend on ``t``).

    Examples
    --------
    The floor ``y = 0`` and the wall ``x = 0`` (allowed side ``x > 0``)::

        floor, wall = Plane((0, 1)), Plane((1, 0))
    """

    normal: Sequence
    offset: sm.Expr = 0

    def __post_init__(self):
        n = _column(self.normal, "Plane.normal")
        if sm.simplify((n.T * n)[0] - 1) != 0:
            raise ValueError(f"`Plane.normal` must be a unit vector; |n|^2 = {sm.simplify((n.T * n)[0])}. "
                             "Divide it by its length")
        object.__setattr__(self, "normal", tuple(n))
        object.__setattr__(self, "offset", sm.sympify(self.offset))

    @property
    def dimension(self) -> int:
        return len(self.normal)

    def distance(self, r: sm.Matrix) -> sm.Expr:
        """Signed distance of the point ``r`` from the plane (positive on the allowed side)."""
        return sum((ni * ri for ni, ri in zip(self.normal, r)), sm.S.Zero) - self.offset


@dataclass(frozen=True)
class Surface:
    """A curve (2D) or a surface (3D) given by a signed distance ``d(r, t)``.

    Parameters
    ----------
    distance : callable
        ``distance(r) -> sympy expression``, with ``r`` a sympy column of the
        point's coordinates; positive on the allowed side, zero on the
        surface. It need not be a true distance: the gap constraint divides it
        by ``|grad d|``, so the normal is ``grad d / |grad d|`` and the gap is
        in metres to first order (exactly on the surface, where it matters).
        Time enters as ``udk_notebooks.model.TIME``.
    dimension : int
        2 for a curve in the plane, 3 for a surface in space.

    Examples
    --------
    The inside of a circular bowl of radius ``R`` centred at the origin::

        bowl = Curve(lambda r: R**2 - r[0]**2 - r[1]**2)
    """

    distance: Callable[[sm.Matrix], sm.Expr]
    dimension: int = 3

    def __post_init__(self):
        if not callable(self.distance):
            raise ValueError("`distance` must be a function of the point r (a sympy column) returning an "
                             f"expression, e.g. lambda r: r[1] - r[0]**2; got {self.distance!r}")
        if self.dimension not in (2, 3):
            raise ValueError(f"`dimension` must be 2 or 3; got {self.dimension!r}")


def Curve(distance: Callable[[sm.Matrix], sm.Expr]) -> Surface:  # noqa: N802 (reads as a class)
    """A curve in the plane given by a signed distance ``d(r, t)`` (a :class:`Surface` of dimension 2)."""
    return Surface(distance, 2)


@dataclass(frozen=True)
class Contact:
    """A point of a body touching a surface, with Coulomb friction.

    Parameters
    ----------
    point : sequence of 2 or 3 sympy expressions
        The contact point's position ``r_c(q, t)`` in metres (for a rod's end:
        its centre plus the half-length along the rod).
    surface : Plane or Surface
        What the point touches.
    mu : sympy expression or float, optional
        Kinetic friction coefficient (0: frictionless).
    mu_s : sympy expression or float, optional
        Static coefficient (defaults to ``mu``).
    name : str, optional
        A name for messages and events (default ``"contact i"``).
    unilateral : bool, optional
        True (default): the surface only pushes, ``N >= 0``; the contact opens
        where ``N`` would become negative. False: the point stays on the
        surface (a bead on a wire), ``N`` of either sign.
    velocity : sequence of sympy expressions, optional
        The velocity of the body's material point that is at the contact,
        linear and homogeneous in ``q'``. Default: the rate of ``point``, which
        is right when ``point`` is a fixed point of the body (a rod's end). For
        a rolling body the contact point moves over the body, and its material
        velocity differs: a disc of radius ``R`` with centre ``(x, y)`` and
        angle ``phi`` (counterclockwise) on the floor touches at ``(x, y - R)``
        with material velocity ``(x' + R phi', y')``.

    Examples
    --------
    The Painleve rod: a uniform rod of length ``L`` with centre ``(x, y)`` at
    angle ``theta`` above the floor, its lower end on the rough floor::

        end = (x - L/2*cos(theta), y - L/2*sin(theta))
        Model([x, y, theta], mass_matrix=diag(m, m, m*L**2/12), potential_energy=m*g*y,
              contacts=[Contact(end, Plane((0, 1)), mu=mu, name="floor")], parameters=...)
    """

    point: Sequence
    surface: Plane | Surface
    mu: sm.Expr = 0
    mu_s: sm.Expr | None = None
    name: str | None = None
    unilateral: bool = True
    velocity: Sequence | None = None

    def __post_init__(self):
        object.__setattr__(self, "point", tuple(_column(self.point, "Contact.point")))
        if self.velocity is not None:
            velocity = tuple(_column(self.velocity, "Contact.velocity"))
            if len(velocity) != len(self.point):
                raise ValueError(f"`Contact.velocity` has {len(velocity)} entries and `Contact.point` "
                                 f"{len(self.point)}; give both in the same space")
            object.__setattr__(self, "velocity", velocity)
        if not isinstance(self.surface, (Plane, Surface)):
            raise ValueError(f"`Contact.surface` must be a Plane, a Curve or a Surface; got {type(self.surface).__name__}")
        if self.surface.dimension != len(self.point):
            raise ValueError(f"`Contact.point` has {len(self.point)} entries but its surface is "
                             f"{self.surface.dimension}-dimensional; give both in the same space")
        for argument in ("mu", "mu_s"):
            value = getattr(self, argument)
            if value is None:
                continue
            if isinstance(value, numbers.Real) and not isinstance(value, bool) and value < 0:
                raise ValueError(f"`Contact.{argument}` must be >= 0; got {value!r}")
            try:
                object.__setattr__(self, argument, sm.sympify(value))
            except (sm.SympifyError, TypeError) as exc:
                raise ValueError(f"`Contact.{argument}` must be a number or sympy expression; got {value!r}") from exc
        if not isinstance(self.unilateral, bool):
            raise ValueError(f"`Contact.unilateral` must be True or False; got {self.unilateral!r}")
        if self.name is not None and not isinstance(self.name, str):
            raise ValueError(f"`Contact.name` must be a string; got {self.name!r}")
        if len(self.point) == 3 and (self.mu != 0 or (self.mu_s is not None and self.mu_s != 0)):
            raise ValueError("`Contact.mu`: friction on a 3D contact (a 2-vector slip) is not implemented; give "
                             "mu=0 (frictionless), or model the motion in a plane")

    @property
    def static(self) -> sm.Expr:
        """The static coefficient ``mu_s`` (``mu`` when not given)."""
        return self.mu if self.mu_s is None else self.mu_s


@dataclass(frozen=True)
class ContactTerms:
    """What a :class:`Contact` contributes to a model (built by :func:`contact_terms`).

    Attributes
    ----------
    gap : sympy expression
        ``g(q, t)``: the holonomic gap row, in metres, zero on the surface.
    slip : sympy expression
        ``s(q, q', t)``: the slip velocity along the unit tangent (zero for a 3D contact).
    normal : sympy Matrix
        The unit normal at the contact point (shape (2, 1) or (3, 1)).
    name : str
    """

    gap: sm.Expr
    slip: sm.Expr
    normal: sm.Matrix
    name: str
    frictionless: bool = field(default=False)


def contact_terms(contact: Contact, index: int, coordinates: Sequence, time: sm.Symbol) -> ContactTerms:
    """The gap row, slip velocity and unit normal of one contact (see the module docstring).

    ``coordinates`` are the model's ``q(t)``; the slip is the tangential
    velocity of the contact point relative to a surface whose material does
    not move along itself (a fixed plane, or one that moves along its normal).
    """
    if not isinstance(contact, Contact):
        raise ValueError(f"`contacts[{index}]` must be a Contact; got {type(contact).__name__}")
    name = contact.name or f"contact {index}"
    r = sm.Matrix(contact.point)
    q = sm.Matrix(list(coordinates))
    qd = q.diff(time)
    surface = contact.surface
    if isinstance(surface, Plane):
        n = sm.Matrix(surface.normal)
        gap = surface.distance(r)
    else:
        # d(r) at placeholder symbols, then the gradient there: grad d / |grad d| is the unit normal
        spot = sm.Matrix(sm.symbols(f"_r0:{len(r)}", real=True))
        try:
            d = sm.sympify(surface.distance(spot))
        except Exception as exc:
            raise ValueError(f"`contacts[{index}]` ({name}): the surface's `distance` failed on a point: {exc}") from exc
        grad = sm.Matrix([d.diff(x) for x in spot])
        size = sm.sqrt(sum((gi**2 for gi in grad), sm.S.Zero))
        at_point = dict(zip(spot, r))
        n = (grad / size).xreplace(at_point)
        gap = (d / size).xreplace(at_point)
    if contact.velocity is not None:
        material = sm.Matrix(contact.velocity)
    else:
        material = r.jacobian(q) * qd
    if len(r) == 2:
        tangent = sm.Matrix([n[1], -n[0]])
        slip = sm.expand((tangent.T * material)[0])
    else:
        slip = sm.S.Zero
    if contact.mu != 0 and contact.velocity is None:  # the point's own explicit motion would add a term not homogeneous in q'
        plain = {qi: sm.Dummy() for qi in q}
        if any(sm.simplify(sm.sympify(e).xreplace(plain).diff(time)) != 0 for e in r):
            raise ValueError(f"`contacts[{index}]` ({name}): the contact point depends on time explicitly; a rough "
                             "contact needs r_c(q) (a point of a body), or mu=0")
    frictionless = contact.mu == 0 and contact.static == 0
    return ContactTerms(gap=gap, slip=slip, normal=n, name=name, frictionless=frictionless)
