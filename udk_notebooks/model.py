"""Symbolic models: from coordinates, energies and constraints to ``M, Q, A, b, C``.

A :class:`Model` is derived once, at construction, and never changes. Its
fields are sympy matrices in the generalized coordinates ``q(t)``:

* ``M`` and ``Q`` from Lagrange's equations with Rayleigh dissipation and extra
  forces (textbook chapter, Eqs. 3.43-3.44),
  ``d/dt(dL/dq') - dL/dq + dD/dq' = F``, rearranged as ``M q'' = Q``;
* ``A`` and ``b`` from the constraints: each holonomic ``phi(q, t) = 0``
  differentiated twice, each nonholonomic ``psi(q, q', t) = 0`` once, then
  split into the part multiplying ``q''`` and the rest (2005 paper, Eqs. 0-1);
* ``C``, the vector that prescribes the virtual work of a nonideal constraint
  (2005 paper, Eq. 19), plus Coulomb friction whose magnitude depends on the
  normal force: physical contacts (:class:`~udk_notebooks.contacts.Contact`,
  a point of a body against a surface, whose gap row's multiplier is the
  normal force in newtons) or the lower-level :class:`CoulombFriction`.

:meth:`Model.compile` turns all of it into numeric functions, see
:mod:`udk_notebooks.compiled`.
"""

from __future__ import annotations

import numbers
import re
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Mapping, Sequence

import sympy as sm
from sympy.core.function import AppliedUndef

from ._checks import finite_float
from ._symbols import TIME
from .contacts import Contact, contact_terms

__all__ = ["CoulombFriction", "Model"]

# TIME (from ._symbols) is sympy.physics' dynamicsymbols._t, made without importing sympy.physics (cold start).


@dataclass(frozen=True)
class CoulombFriction:
    """A sliding contact with Coulomb friction, treated as a nonideal constraint (the lower-level form).

    Prefer :class:`~udk_notebooks.contacts.Contact`, which is declared by the
    contact point and its surface and gives the normal force in newtons for
    any body. This form takes a sliding velocity and a rule for ``N``.

    While sliding, the contact adds ``C = -mu N sgn(s) ds/dq'`` to the
    nonideal vector, where ``s`` is the sliding velocity and ``N`` is the size
    of the normal force. Its power is ``-mu N |s|``. While sticking, ``s' = 0``
    is added as an ideal constraint for as long as ``|holding force| <= mu_s N``.

    Which force is the normal force:

    * ``normal=None`` (default): ``N`` is the Euclidean norm of the whole ideal
      constraint force ``F^L`` (which does not depend on ``C``, 2005 paper
      Eq. 10). That is the normal force only when friction leaves the
      constraint reaction alone, ``A M^-1 C = 0``: a particle pressed on one
      surface, in Cartesian coordinates. For a body that rotates (friction at
      the contact point makes a torque) or one held by joints it is not, and
      the compiled model refuses with a ValueError that points to
      :class:`~udk_notebooks.contacts.Contact` (checked symbolically once,
      :attr:`udk_notebooks.compiled.CompiledModel.reaction_free`, else at
      each state).
    * ``normal`` names the constraint rows whose reaction presses the contact
      together (the floor under a block), when the system has other
      constraints too (joints, whose forces are no normal force). With the
      reaction multipliers ``lambda`` of ``M q'' = Q + C + A^T lambda`` the
      normal force is ``N = || sum_k A_k^T lambda_k ||`` over the named rows
      ``k``. That is a force in newtons when the named rows act on
      translational coordinates of the contact point only (``y1 = 0`` for a
      block); a row that involves an angle (a rod's end, ``y - (L/2) sin
      theta``) would make it a mix of newtons and newton-metres, and the
      compiled model refuses such rows (their coefficients change with the
      configuration), pointing to :class:`~udk_notebooks.contacts.Contact`. In a multibody system the reaction also answers the friction
      force itself (sliding friction on a cart changes the swing of a pendulum
      it carries, and so the load on the floor), so ``lambda`` belongs to the
      total constraint force ``F^L + F^C`` minus ``C``, not to ``F^L`` alone:
      ``N`` is then found together with ``C`` (see
      :meth:`udk_notebooks.compiled.CompiledModel.solve_modes`). Dependent
      (redundant) rows leave ``lambda`` undetermined: the minimum-norm
      multipliers are used, which give the one normal force there is when the
      dependence lies within the named rows or within the others; when named
      rows depend on other rows the split is arbitrary, and the solver
      refuses with a ValueError.

    For the block on the incline ``y = x tan(alpha)`` of the encyclopedia
    article, ``s = cos(alpha) x' + sin(alpha) y'`` reproduces its
    ``C = -mu m g cos(alpha) sgn(y') (cos alpha, sin alpha)``.

    Parameters
    ----------
    sliding_velocity : sympy expression
        ``s(q, q', t)``, linear and homogeneous in ``q'``, in physical units
        of velocity (so that ``-mu N |s|`` is the friction power).
    coefficient : sympy expression or float
        Kinetic friction coefficient ``mu``.
    static_coefficient : sympy expression or float, optional
        Static coefficient ``mu_s`` (defaults to ``mu``).
    normal : sympy expression, int, or sequence of them, optional
        The constraint(s) that carry this contact's normal force: each one a
        holonomic or nonholonomic constraint expression exactly as given to
        :class:`Model`, or an index into the rows of ``A`` (holonomic rows
        first). ``None`` (default) takes ``N = |F^L|``.

    Examples
    --------
    A cart on a rough floor ``y1 = 0`` that carries a pendulum on a rod::

        floor = y1
        rod = (x2 - x1)**2 + (y2 - y1)**2 - l**2
        Model(..., holonomic=[floor, rod],
              friction=[CoulombFriction(x1.diff(), mu, mu_s, normal=floor)])
    """

    sliding_velocity: sm.Expr
    coefficient: sm.Expr
    static_coefficient: sm.Expr | None = None
    normal: sm.Expr | int | Sequence[sm.Expr | int] | None = None

    def __post_init__(self):
        if isinstance(self.normal, list):  # a frozen contact keeps a tuple, which hashes
            object.__setattr__(self, "normal", tuple(self.normal))


def _as_column(values, name: str, n: int | None = None) -> sm.Matrix:
    if values is None:
        return sm.zeros(n or 0, 1)
    values = list(values) if not isinstance(values, sm.MatrixBase) else values
    if len(values) == 0:
        col = sm.zeros(0, 1)
    else:
        col = sm.Matrix(values)
    if col.shape[1] != 1 and col.shape[0] == 1:
        col = col.T
    if n is not None and col.shape != (n, 1):
        raise ValueError(f"`{name}` must hold {n} expressions, one per coordinate; got shape {col.shape}")
    return col


def _gradient(expr: sm.Expr, symbols) -> list:
    """Partial derivatives of ``expr`` by each symbol, term by term for a sum.

    An energy of N bodies is a sum of many short terms, each holding a few
    symbols; differentiating only the terms that contain a symbol keeps the
    derivation linear in N instead of quadratic.
    """
    wanted = {s: i for i, s in enumerate(symbols)}
    parts = [[] for _ in symbols]
    for term in sm.Add.make_args(expr):
        for sym in term.free_symbols:
            if sym in wanted:
                parts[wanted[sym]].append(term.diff(sym))
    return [sm.Add(*p) for p in parts]


def _check_parameter_names(params: Mapping) -> None:
    """Refuse parameter names that the numeric functions could not tell apart.

    Parameters are passed to the numeric functions by name, so two symbols with
    one name would be one argument, and ``Symbol("t")`` is the model's time.
    The state names ``q0, qd0, ...`` stay reserved for the same reason. Any
    other name works, including those of sympy's constants and functions
    (``pi``, ``e``, ``gamma``): the compiled code renames every parameter.
    """
    seen = set()
    for symbol in params:
        if not isinstance(symbol, sm.Symbol):
            raise ValueError(f"`parameters`: each key must be a sympy Symbol or its name; got {symbol!r}")
        name = symbol.name
        if symbol == TIME:  # Symbol("t") is the time of every expression: as a parameter it would stop the clock
            raise ValueError(
                "`parameters`: `t` is the time of the model (udk_notebooks.model.TIME), not a parameter; "
                "give the parameter another name (t0, tau, ...)")
        if re.fullmatch(r"qd?[0-9]+", name):
            raise ValueError(f"`parameters`: the name {name!r} is reserved for the state; rename the symbol")
        if name in seen:
            raise ValueError(
                f"`parameters` holds two symbols named {name!r} (with different assumptions); use one symbol"
            )
        seen.add(name)


def _has_kink(exprs) -> bool:
    """True when a derived expression holds a Dirac delta or a derivative sympy could not evaluate."""
    return any(sm.sympify(e).has(sm.DiracDelta, sm.Derivative) for e in exprs)


def _refuse_kinks(pieces) -> None:
    """Raise a ValueError naming the first input whose derivatives :func:`_has_kink` finds (the rare path)."""
    for argument, derived in pieces:
        if _has_kink(derived):
            raise ValueError(
                f"`{argument}` has a kink (Abs, sign, Heaviside, Max/Min, ...) where the equations of motion "
                "differentiate it once more: the derivative there is a Dirac delta (an impulse) or has no closed "
                "form, so the motion through the kink is not defined by M, Q, A, b. Use a smooth expression "
                "(sqrt(x**2 + eps**2) for |x|, say), or keep the motion on one side of the kink (one branch "
                "per model)")
    raise ValueError("the derived equations of motion hold a Dirac delta or an unevaluated derivative: some "
                     "input has a kink that is differentiated; use smooth expressions")


@dataclass(frozen=True, eq=False)
class Model:
    """A constrained mechanical system, derived symbolically in one call.

    Parameters
    ----------
    coordinates : sequence of sympy dynamicsymbols
        Generalized coordinates ``q_i(t)`` (``sympy.physics.mechanics.dynamicsymbols``).
    kinetic_energy : sympy expression, optional
        ``T(q, q', t)``. Give this or ``mass_matrix``.
    mass_matrix : sympy Matrix, shape (n, n), optional
        ``M(q, t)``; then ``T = q'^T M q' / 2``.
    potential_energy : sympy expression, optional
        ``V(q, t)``.
    dissipation : sympy expression, optional
        Rayleigh's function ``D(q, q', t)``; its force is ``-dD/dq'``.
    forces : sequence of sympy expressions, length n, optional
        Further generalized (non-potential) impressed forces.
    holonomic : sequence of sympy expressions, optional
        Constraints ``phi(q, t) = 0``, scleronomic or rheonomic.
    nonholonomic : sequence of sympy expressions, optional
        Constraints ``psi(q, q', t) = 0``, linear in ``q'`` or not.
    nonideal : sequence of sympy expressions, length n, optional
        The vector ``C(q, q', t)`` of the 2005 paper (Eqs. 4-8, 19).
    friction : sequence of CoulombFriction, optional
        Sliding contacts whose friction depends on the normal force (the
        lower-level form; prefer ``contacts``).
    parameters : mapping of sympy Symbol to float
        Every symbol other than the coordinates and time, with its default.
    inputs : mapping of function of time to sympy expression, optional
        Prescribed inputs, e.g. a drive force ``F(t)``: ``inputs={F: F0*sin(w*t)}``
        with ``F = dynamicsymbols("F")`` and ``F0, w`` in ``parameters``. Each
        ``F(t)`` and its derivatives are replaced by the expression before the
        derivation (the stored fields hold the replaced expressions). A function
        of time that is neither a coordinate nor an input is refused.
    name : str, optional
        A title for displays.
    simplify : bool, optional
        Run ``sympy.simplify`` on each derived entry (nicer LaTeX, slower).
    contacts : sequence of Contact, optional
        Physical contacts (:mod:`udk_notebooks.contacts`): each adds its gap
        row after the ``holonomic`` rows (so its multiplier is its normal
        force in newtons) and a friction entry after the ``friction`` ones.
        Not combined with ``friction``: declare every rough contact as a Contact.

    Attributes
    ----------
    q, qd, qdd : sympy Matrix, shape (n, 1)
        Coordinates, velocities and accelerations.
    M, Q, A, b, C : sympy Matrix
        The Udwadia-Kalaba data, ``M q'' = Q + F^L + F^C`` with
        ``A q'' = b``; rows of ``A`` are the holonomic constraints first.
    phi, psi : sympy Matrix
        The holonomic and nonholonomic constraint functions.
    velocity_constraints : sympy Matrix, shape (m, 1)
        ``(phi', psi)``: the constraints at velocity level.
    energy : sympy expression
        Jacobi's energy ``h = q'^T dT/dq' - T + V`` (``T + V`` when ``T`` is
        quadratic in ``q'``).
    nonconservative_force : sympy Matrix, shape (n, 1)
        ``F - dD/dq'``, whose power with the constraint powers and
        ``-dL/dt`` make up ``dh/dt`` (power theorem).
    explicit_time_power : sympy expression
        ``-dL/dt`` at fixed ``q, q'``.
    friction_normals : tuple, one entry per friction entry (``all_friction``)
        The rows of ``A`` named by each contact's ``normal`` (a tuple of
        ints), or None where the contact takes ``N = |F^L|``.
    all_friction : tuple of CoulombFriction
        ``friction`` followed by one entry per ``contacts`` item (its slip
        velocity, ``mu``, ``mu_s`` and its gap row as ``normal``): the entries
        the compiled model and the simulation's ``modes`` columns follow.
    contact_rows : tuple of int
        The row of ``A`` of each contact's gap constraint.
    contact_names : tuple of str
    contact_normals : tuple of sympy Matrix
        The unit normal at each contact point.
    """

    coordinates: Sequence[sm.Function]
    kinetic_energy: sm.Expr | None = None
    mass_matrix: sm.Matrix | None = None
    potential_energy: sm.Expr = 0
    dissipation: sm.Expr = 0
    forces: Sequence[sm.Expr] | None = None
    holonomic: Sequence[sm.Expr] = ()
    nonholonomic: Sequence[sm.Expr] = ()
    nonideal: Sequence[sm.Expr] | None = None
    friction: Sequence[CoulombFriction] = ()
    parameters: Mapping[sm.Symbol, float] = field(default_factory=dict)
    inputs: Mapping[sm.Function, sm.Expr] = field(default_factory=dict)
    name: str = ""
    simplify: bool = False
    contacts: Sequence[Contact] = ()

    def __post_init__(self):
        if self.inputs:
            self._substitute_inputs()
        if isinstance(self.contacts, Contact) or not isinstance(self.contacts, (list, tuple)):
            raise ValueError(f"`contacts` must be a list of Contact; got {self.contacts!r}")
        object.__setattr__(self, "contacts", tuple(self.contacts))
        if self.contacts and self.friction:
            raise ValueError("`friction` and `contacts` together: declare every rough contact as a Contact "
                             "(udk_notebooks.Contact), whose normal force is its gap row's multiplier in newtons")
        q = sm.Matrix(list(self.coordinates))
        if q.shape[0] == 0:
            raise ValueError("`coordinates` must list at least one generalized coordinate")
        for qi in q:
            if not (isinstance(qi, sm.Function) and qi.args == (TIME,)):
                raise ValueError(
                    f"`coordinates` must be functions of time made with dynamicsymbols; got {qi!r}. "
                    "Use sympy.physics.mechanics.dynamicsymbols('x y')"
                )
        n = q.shape[0]
        repeated = sorted({str(qi) for qi in q if list(q).count(qi) > 1})
        if repeated:
            raise ValueError(f"`coordinates` lists {', '.join(repeated)} more than once; give each coordinate once")
        qd = q.diff(TIME)
        qdd = qd.diff(TIME)
        self._check_inputs(q, qd, qdd)
        terms = [contact_terms(c, i, q, TIME) for i, c in enumerate(self.contacts)]
        if (self.kinetic_energy is None) == (self.mass_matrix is None):
            raise ValueError("give exactly one of `kinetic_energy` and `mass_matrix`")
        if self.kinetic_energy is None:
            mass = sm.Matrix(self.mass_matrix)
            if mass.shape != (n, n):
                raise ValueError(f"`mass_matrix` must have shape ({n}, {n}); got {mass.shape}")
            if (mass - mass.T).applyfunc(sm.simplify) != sm.zeros(n, n):
                raise ValueError("`mass_matrix` must be symmetric")
            kinetic = (qd.T * mass * qd)[0] / 2
        else:
            kinetic = sm.sympify(self.kinetic_energy)
        potential = sm.sympify(self.potential_energy)
        dissipation = sm.sympify(self.dissipation)
        forces = _as_column(self.forces, "forces", n) if self.forces is not None else sm.zeros(n, 1)
        nonideal = _as_column(self.nonideal, "nonideal", n) if self.nonideal is not None else sm.zeros(n, 1)
        # A parameter named by a string means the symbol of that name in the inputs, whatever
        # its assumptions (Symbol("m", positive=True) is not Symbol("m")).
        inputs = [kinetic, potential, dissipation, forces, nonideal, *self.holonomic, *self.nonholonomic]
        inputs += [e for c in self.contacts for e in (*c.point, c.mu, c.static)] + [t.gap for t in terms]
        by_name = {s.name: s for e in inputs for s in sm.sympify(e).free_symbols}
        params = {
            (by_name.get(key, sm.Symbol(key)) if isinstance(key, str) else key):
                finite_float(value, f"`parameters`: the default of `{key}`")
            for key, value in dict(self.parameters).items()
        }
        object.__setattr__(self, "parameters", params)
        _check_parameter_names(params)

        # Differentiate in plain placeholder symbols: sympy differentiates with respect to
        # Derivative objects far more slowly, and a row only needs the symbols it contains.
        # They are real, as coordinates are: d|x|/dx is then sign(x), not an expression in re(x) and im(x).
        q_s, v_s, a_s = (tuple(sm.Dummy(f"{kind}{i}", real=True) for i in range(n)) for kind in "qva")
        plain = {**dict(zip(qdd, a_s)), **dict(zip(qd, v_s)), **dict(zip(q, q_s))}
        timed = {**dict(zip(q_s, q)), **dict(zip(v_s, qd)), **dict(zip(a_s, qdd))}

        def to_plain(expr):
            return sm.sympify(expr).xreplace(plain)  # top-down: q'' and q' are replaced before q

        def rate(expr):
            """Total time derivative of a plain expression along the motion."""
            found = expr.free_symbols
            terms = [expr.diff(x) * dx for xs, dxs in ((q_s, v_s), (v_s, a_s)) for x, dx in zip(xs, dxs) if x in found]
            return sm.Add(expr.diff(TIME), *terms) if TIME in found else sm.Add(*terms)

        def linear_part(rows):
            """Split rows that are linear in q'' into (coefficients, -rest)."""
            coeffs = sm.zeros(len(rows), n)
            rest = []
            for i, row in enumerate(rows):
                found = row.free_symbols
                for j, acc in enumerate(a_s):
                    if acc in found:
                        coeffs[i, j] = row.diff(acc)
                rest.append(-row.xreplace(dict.fromkeys(a_s, 0)))
            return coeffs, sm.Matrix(rest) if rest else sm.zeros(0, 1)

        lagrangian = sm.expand_mul(to_plain(kinetic - potential))  # a sum of short terms for _gradient
        dissipation_p = to_plain(dissipation)
        dL_dv, dL_dq, dD_dv = (_gradient(e, xs) for e, xs in ((lagrangian, v_s), (lagrangian, q_s), (dissipation_p, v_s)))
        residual = [rate(dL_dv[i]) - dL_dq[i] + dD_dv[i] - to_plain(forces[i]) for i in range(n)]
        mass, impressed = linear_part(residual)

        phi = _as_column(list(self.holonomic) + [t.gap for t in terms], "holonomic")
        psi = _as_column(list(self.nonholonomic), "nonholonomic")
        velocity_p = [rate(to_plain(e)) for e in phi] + [to_plain(e) for e in psi]
        A, b = linear_part([rate(e) for e in velocity_p])

        energy = sum((v * d for v, d in zip(v_s, dL_dv)), sm.S.Zero) - lagrangian
        nonconservative = sm.Matrix([to_plain(forces[i]) - dD_dv[i] for i in range(n)])
        explicit_time = -lagrangian.diff(TIME)

        if _has_kink(list(mass) + list(impressed) + list(A) + list(b)):
            _refuse_kinks([("kinetic_energy", [rate(d) for d in _gradient(to_plain(kinetic), v_s)]
                                                  + _gradient(to_plain(kinetic), q_s)),
                              ("potential_energy", _gradient(to_plain(potential), q_s)),
                              ("dissipation", dD_dv)]
                          + [(f"forces[{i}]", [to_plain(f)]) for i, f in enumerate(forces)]
                          + [(f"holonomic[{i}]", [rate(rate(to_plain(e)))]) for i, e in enumerate(phi)]
                          + [(f"nonholonomic[{i}]", [rate(to_plain(e))]) for i, e in enumerate(psi)])

        def back(value):
            return value.xreplace(timed)

        mass, impressed, A, b = back(mass), back(impressed), back(A), back(b)
        velocity = back(sm.Matrix(velocity_p)) if velocity_p else sm.zeros(0, 1)
        energy, nonconservative, explicit_time = back(energy), back(nonconservative), back(explicit_time)

        tidy = (lambda e: sm.simplify(e)) if self.simplify else (lambda e: e)
        derived = {
            "q": q, "qd": qd, "qdd": qdd,
            "T": tidy(kinetic), "V": potential, "D": dissipation,
            "M": mass.applyfunc(tidy), "Q": impressed.applyfunc(tidy),
            "A": A.applyfunc(tidy), "b": b.applyfunc(tidy), "C": nonideal,
            "phi": phi, "psi": psi, "velocity_constraints": velocity,
            "energy": tidy(energy), "nonconservative_force": nonconservative,
            "explicit_time_power": tidy(sm.expand(explicit_time)),
        }
        for key, value in derived.items():
            object.__setattr__(self, key, sm.ImmutableMatrix(value) if isinstance(value, sm.MatrixBase) else value)
        first = len(list(self.holonomic))
        derived = tuple(CoulombFriction(t.slip, c.mu, c.static, normal=(first + i,))
                        for i, (c, t) in enumerate(zip(self.contacts, terms)))
        object.__setattr__(self, "all_friction", tuple(self.friction) + derived)
        object.__setattr__(self, "contact_rows", tuple(first + i for i in range(len(terms))))
        object.__setattr__(self, "contact_names", tuple(t.name for t in terms))
        object.__setattr__(self, "contact_normals", tuple(sm.ImmutableMatrix(t.normal) for t in terms))
        object.__setattr__(self, "friction_normals", tuple(
            self._normal_rows(i, c) for i, c in enumerate(self.friction)) + tuple((r,) for r in self.contact_rows))
        self._check_symbols()

    def _normal_rows(self, index: int, contact) -> tuple[int, ...] | None:
        """Rows of ``A`` named by ``contact.normal``: each a constraint as given, or a row index."""
        if not isinstance(contact, CoulombFriction):
            raise ValueError(f"`friction[{index}]` must be a CoulombFriction; got {type(contact).__name__}")
        if contact.normal is None:
            return None
        argument = f"friction[{index}].normal"
        named = contact.normal
        if isinstance(named, (str, bytes)) or not isinstance(named, (list, tuple, sm.MatrixBase)):
            named = [named]
        named = list(named)
        if not named:
            raise ValueError(f"`{argument}` is empty: name at least one constraint, or pass None for N = |F^L|")
        given = [sm.sympify(e) for e in (*self.holonomic, *self.nonholonomic)]
        rows = []
        for entry in named:
            if isinstance(entry, numbers.Integral) and not isinstance(entry, bool):
                row = int(entry)
                if not 0 <= row < len(given):
                    raise ValueError(
                        f"`{argument}`: row index {row} is out of range; the model has {len(given)} constraint "
                        "row(s), holonomic first")
            else:
                try:
                    expr = sm.sympify(entry)
                except (sm.SympifyError, TypeError) as exc:
                    raise ValueError(f"`{argument}` must name constraints (expressions or row indices); "
                                     f"got {entry!r}") from exc
                matches = [k for k, e in enumerate(given) if e == expr]
                if not matches:
                    matches = [k for k, e in enumerate(given) if sm.simplify(e - expr) == 0]
                if not matches:
                    listed = ", ".join(map(str, given)) or "none"
                    raise ValueError(
                        f"`{argument}`: {expr} is not one of the model's constraints ({listed}); pass the "
                        "constraint expression exactly as given in `holonomic` or `nonholonomic`, or its row index")
                row = matches[0]
            if row in rows:
                raise ValueError(f"`{argument}` names constraint row {row} twice; name each row once")
            rows.append(row)
        return tuple(rows)

    def _substitute_inputs(self) -> None:
        """Replace each declared input ``F(t)`` (and its derivatives) by its expression in every field."""
        if not isinstance(self.inputs, Mapping):
            raise ValueError(f"`inputs` must map functions of time to expressions, e.g. {{F: F0*sin(w*t)}}; got {self.inputs!r}")
        values = {}
        for key, value in self.inputs.items():
            if not (isinstance(key, AppliedUndef) and key.args == (TIME,)):
                raise ValueError(f"`inputs`: each key must be a function of time made with dynamicsymbols; got {key!r}")
            if key in set(self.coordinates):
                raise ValueError(f"`inputs`: {key} is a coordinate; a coordinate cannot be prescribed as an input")
            try:
                values[key] = sm.sympify(value)
            except (sm.SympifyError, TypeError) as exc:
                raise ValueError(f"`inputs`: the value of {key} must be a sympy expression in t; got {value!r}") from exc

        def put(expr):
            if expr is None:
                return None
            expr = sm.sympify(expr)
            rates = {d: values[d.expr].diff(*d.variables) for d in expr.atoms(sm.Derivative) if d.expr in values}
            return expr.xreplace(rates).xreplace(values)

        for key in ("kinetic_energy", "potential_energy", "dissipation"):
            object.__setattr__(self, key, put(getattr(self, key)))
        if self.mass_matrix is not None:
            object.__setattr__(self, "mass_matrix", sm.Matrix(self.mass_matrix).applyfunc(put))
        for key in ("forces", "nonideal", "holonomic", "nonholonomic"):
            if getattr(self, key) is not None:
                object.__setattr__(self, key, [put(e) for e in getattr(self, key)])
        def put_normal(named):  # the named constraints are matched against the substituted ones
            if named is None or isinstance(named, int):
                return named
            if isinstance(named, (list, tuple)):
                return type(named)(e if isinstance(e, int) else put(e) for e in named)
            return put(named)

        object.__setattr__(self, "friction", tuple(
            replace(c, sliding_velocity=put(c.sliding_velocity), coefficient=put(c.coefficient),
                    static_coefficient=put(c.static_coefficient), normal=put_normal(c.normal))
            if isinstance(c, CoulombFriction) else c
            for c in self.friction
        ))

    def _check_inputs(self, q, qd, qdd) -> None:
        """Refuse, by argument, what would fail later or silently: NaN, foreign functions, misplaced rates."""
        named = [("kinetic_energy", self.kinetic_energy), ("potential_energy", self.potential_energy),
                 ("dissipation", self.dissipation)]
        if self.mass_matrix is not None:
            named.append(("mass_matrix", sm.Matrix(self.mass_matrix)))
        for argument in ("forces", "nonideal", "holonomic", "nonholonomic"):
            values = getattr(self, argument)
            named += [(f"{argument}[{i}]", e) for i, e in enumerate(values if values is not None else ())]
        for i, contact in enumerate(self.friction):
            if not isinstance(contact, CoulombFriction):  # named here, before its attributes are read
                raise ValueError(f"`friction[{i}]` must be a CoulombFriction; got {contact!r}")
            named += [(f"friction[{i}].{attr}", getattr(contact, attr))
                      for attr in ("sliding_velocity", "coefficient", "static_coefficient")
                      if getattr(contact, attr) is not None]
        coordinates = set(q)
        for argument, value in named:
            if value is None:
                continue
            expr = sm.sympify(value)
            if expr.has(sm.nan, sm.zoo, sm.oo, -sm.oo):
                raise ValueError(f"`{argument}` contains NaN or an infinity ({expr}); every expression must be finite")
            foreign = sorted({str(f) for f in expr.atoms(AppliedUndef) if f not in coordinates})
            if foreign:
                raise ValueError(
                    f"`{argument}` uses {', '.join(foreign)}, a function of time that is not one of the `coordinates` "
                    f"({', '.join(map(str, q))}). Add it to `coordinates`, or declare a prescribed input in `inputs`, "
                    "e.g. inputs={F: F0*sympy.sin(omega*t)} with t = udk_notebooks.model.TIME and "
                    "parameters={F0: 1.0, omega: 2.0}"
                )
            kind = argument.split("[")[0]
            rates = {"holonomic": list(qd) + list(qdd), "nonholonomic": list(qdd), "kinetic_energy": list(qdd),
                     "potential_energy": list(qd) + list(qdd), "mass_matrix": list(qd) + list(qdd),
                     "dissipation": list(qdd), "forces": list(qdd), "nonideal": list(qdd)}.get(kind, [])
            found = [str(r) for r in rates if expr.has(r)]
            if found:
                fix = {"holonomic": "a constraint on velocities is nonholonomic: pass it in `nonholonomic`",
                       "nonholonomic": "a nonholonomic constraint is psi(q, q', t) = 0, without accelerations",
                       "kinetic_energy": "T depends on coordinates and velocities only",
                       "potential_energy": "V depends on coordinates and time only (velocity-dependent forces "
                                           "go in `forces`)",
                       "mass_matrix": "M depends on coordinates and time only",
                       "dissipation": "D depends on coordinates and velocities only",
                       "forces": "a force depends on coordinates, velocities and time only",
                       "nonideal": "C depends on coordinates, velocities and time only"}[kind]
                raise ValueError(f"`{argument}` contains {', '.join(found)}: {fix}")

    # -- sizes -------------------------------------------------------------
    @property
    def n(self) -> int:
        """Number of generalized coordinates."""
        return self.q.shape[0]

    @property
    def n_holonomic(self) -> int:
        """Number of holonomic constraint rows (the first rows of ``A``)."""
        return self.phi.shape[0]

    @property
    def n_contacts(self) -> int:
        """Number of physical contacts (their gap rows are the last holonomic rows)."""
        return len(self.contacts)

    @property
    def n_nonholonomic(self) -> int:
        """Number of nonholonomic constraint rows (the last rows of ``A``)."""
        return self.psi.shape[0]

    @property
    def parameter_symbols(self) -> tuple[sm.Symbol, ...]:
        """Parameter symbols in the order of the compiled functions' ``p`` vector."""
        return tuple(self.parameters)

    def _check_symbols(self) -> None:
        known = set(self.parameters) | {TIME}
        pieces = [self.M, self.Q, self.A, self.b, self.C, self.energy, self.phi, self.psi]
        pieces += [sm.sympify(f.sliding_velocity) for f in self.all_friction]
        pieces += [sm.sympify(f.coefficient) for f in self.all_friction]
        pieces += [sm.sympify(f.static_coefficient) for f in self.all_friction if f.static_coefficient is not None]
        stray = set()
        for piece in pieces:
            stray |= {s for s in sm.sympify(piece).free_symbols if s not in known}
        if stray:
            names = ", ".join(sorted(map(str, stray)))
            raise ValueError(
                f"symbols {names} are neither coordinates nor parameters: give each a default value in "
                "`parameters`, e.g. parameters={g: 9.81}"
            )
        for f in self.all_friction:
            s = sm.sympify(f.sliding_velocity)
            slope = sm.Matrix([s]).jacobian(self.qd)
            if sm.simplify(s - (slope * self.qd)[0]) != 0 or any(e.has(*self.qd) for e in slope):
                raise ValueError(
                    f"`friction` sliding velocity {s} must be linear and homogeneous in the velocities"
                )

    # -- display -----------------------------------------------------------
    def latex(self, what: str = "all") -> str:
        """LaTeX of ``"M"``, ``"Q"``, ``"A"``, ``"b"``, ``"C"`` or ``"all"`` (dots for time derivatives)."""
        names = ["M", "Q", "A", "b", "C"] if what == "all" else [what]
        for name in names:
            if name not in {"M", "Q", "A", "b", "C", "phi", "psi", "energy", "T", "V"}:
                raise ValueError(f"`what` must be one of M, Q, A, b, C, phi, psi, energy, T, V or 'all'; got {what!r}")
        from sympy.physics.vector import vlatex  # here, not at the top: sympy.physics loads its units (cold start)

        labels = {"phi": r"\phi", "psi": r"\psi", "energy": "h"}
        rows = [labels.get(n, rf"\mathbf{{{n}}}") + " &= " + vlatex(getattr(self, n)) for n in names]
        return r"\begin{aligned}" + r" \\ ".join(rows) + r"\end{aligned}"

    def _repr_latex_(self) -> str:
        return "$$" + self.latex() + "$$"

    def show(self, *what: str) -> None:
        """Display the chosen matrices (all by default) as typeset equations in a notebook."""
        from IPython.display import Math, display

        for name in what or ("M", "Q", "A", "b", "C"):
            display(Math(self.latex(name)))

    # -- numbers -------------------------------------------------------------
    @cached_property
    def _compiled(self):
        from .compiled import CompiledModel

        return CompiledModel.from_model(self)

    def compile(self):
        """Numeric functions of this model (lambdified once, cached); see :class:`CompiledModel`."""
        return self._compiled
