"""Numeric functions of a :class:`~udk_notebooks.model.Model`.

Every function takes its arguments in one documented order::

    t : float                    time
    q : ndarray, shape (n,)      coordinates, in ``model.coordinates`` order
    qd : ndarray, shape (n,)     velocities, same order
    p : ndarray, shape (k,)      parameters, in ``model.parameter_symbols`` order

The entries of ``M, Q, A, b, C`` come from one lambdified function with common
subexpressions eliminated (``sympy.lambdify(..., cse=True)``), so each
evaluation walks the expression graph once. It works on Python floats with
the ``math`` module (falling back to numpy and scipy for functions that
``math`` lacks) and returns a flat list of the entries that are not
identically zero, scattered into one array of zeros: for a few coordinates,
numpy's per-call overhead on scalars would cost more than the arithmetic, and
for many the structural zeros of ``A`` would. When ``M`` depends on
parameters only (Cartesian coordinates), it is evaluated and its Cholesky
factor computed once per parameter vector, then reused. When it is also
diagonal (point masses, principal inertias), a solver generated from the
sparsity pattern of ``Q, A, b, C`` (:mod:`udk_notebooks.kernels`) takes the
place of :func:`~udk_notebooks.core.solve` for motions without friction
contacts, and hands back to it whatever it cannot vouch for; for friction
contacts in given modes, :meth:`CompiledModel.solve_contacts` does the same
with a kernel generated per set of modes (``kernels.ContactKernel``).
"""

from __future__ import annotations

import builtins
import functools
import itertools
import math
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Callable

import numpy as np

from ._checks import check_vector, finite_float, real_number
from ._kept_code import CodeStore, global_names as _global_names, kept
from ._lazy import LazyModule
from .core import RANK_RTOL, Motion, cholesky_or_none, scale_rows, solve
from .contact_forces import OPEN, ContactForces
from .kernels import ScalarKernel, diagonal_kernel, singular_kernel

if TYPE_CHECKING:
    from .model import Model

# sympy is needed to compile a model, not to run one read back from kept code (CompiledModel.from_store):
# imported on first use, it stays out of an explorer's first frame in a new kernel (issue 23)
sm = LazyModule("sympy")

__all__ = ["OPEN", "CompiledModel"]

STICK_SPEED = 1e-10
"""A contact with ``|s|`` below this (times the speed scale) counts as at rest in :meth:`CompiledModel.motion`."""

HOLD_RTOL = 1e-9
"""Static friction holds a contact at rest while the holding force it needs is at most ``1 + HOLD_RTOL``
times its limit ``mu_s |N|``. At the angle of repose the two agree to rounding; this margin decides such a
contact as stuck for every integrator, instead of sliding it with an acceleration of rounding size and
switching back and forth (issue 14)."""


_NO_RATIOS = np.zeros(0)
_NO_NORMALS = np.full(0, np.nan)  # the normal forces of a model without contacts (nothing to fill in)

FREE_MAX_N = 4
"""Most coordinates of an unconstrained model whose accelerations :meth:`CompiledModel.accelerations`
solves in Python floats (a Cholesky factorization unrolled over the entries); larger ones go to LAPACK."""

ARRAY_MODULES = ["numpy", "scipy"]
"""Modules of an array-capable lambdified function whose expressions need a function numpy lacks (Bessel
functions, erf, gamma): numpy, with scipy.special. Every other one is lambdified with numpy alone
(:func:`_array_function`): lambdify's scipy namespace imports all of scipy.special, a cold start's 0.04 s
(issue 23). Every array function of a model falls back alike, so that a model whose accelerations can be
evaluated can also be sampled (energy, powers, residuals; issue 22)."""


def _resolves(func: Callable) -> bool:
    """True when every global name of a lambdified function is defined (in its namespace or as a builtin)."""
    return all(name in func.__globals__ or hasattr(builtins, name) for name in _global_names(func.__code__))


def _works_on_arrays(func: Callable) -> bool:
    """True when every global name of a numpy-lambdified function is numpy's (or a number, or a builtin).

    numpy's printer writes the functions numpy lacks either as the ``math``
    module's (``erf``, ``gamma``: right on one float, a TypeError on an array)
    or as a bare name that is not defined (``besselj``); both rule numpy out.
    """
    namespace = func.__globals__
    for name in _global_names(func.__code__):
        if name not in namespace:
            if not hasattr(builtins, name):
                return False
            continue
        value = namespace[name]
        origin = value.__name__ if isinstance(value, ModuleType) else getattr(value, "__module__", None) or ""
        builtin = value is builtins or value is getattr(builtins, name, None)
        if not (builtin or isinstance(value, (int, float, complex)) or value is functools.reduce
                or origin == "numpy" or origin.startswith("numpy.")):
            return False
    return True


def _array_function(args, exprs, **options) -> Callable:
    """``sympy.lambdify`` on numpy arrays: numpy alone where it evaluates every function, else with scipy.

    ``options`` go to lambdify (``cse``). Both routes print an elementary
    function the same way; only what numpy lacks (see :data:`ARRAY_MODULES`)
    needs scipy.special.
    """
    try:
        # numpy's module object, not its name: for "numpy" lambdify runs ``from numpy import *``, which
        # loads every lazily loaded numpy submodule (numpy.f2py, numpy.testing, ...: 0.05 s of a cold start)
        func = sm.lambdify(args, exprs, modules=[np], **options)
    except NotImplementedError:  # an expression numpy's printer refuses: scipy's may print it
        func = None
    if func is not None and _works_on_arrays(func):
        return func
    return sm.lambdify(args, exprs, modules=ARRAY_MODULES, **options)


def _scalar_function(args, entries) -> Callable:
    """``lambdify`` of a flat list of scalar expressions, on Python floats where possible.

    The ``math`` module prints every elementary function; an expression with
    another one (a Bessel function, say) would fail only when called, so the
    generated code's global names are checked and numpy/scipy used instead.
    """
    func = sm.lambdify(args, entries, modules="math", cse=True)
    if not _resolves(func):
        return _array_function(args, entries, cse=True)
    func.on_floats = True  # its source may be joined to a generated solver (udk_notebooks._fused)
    return func


def _identically_zero(expr, compiled) -> bool:
    """True when sympy proves ``expr`` (of ``q, q', t`` and parameters) zero; False when it cannot.

    A few random points rule out most nonzero expressions at once (a
    simplification of them would be slow and is not needed); the proof tries
    the cheap trigonometric route before ``sympy.simplify``.
    """
    expr = sm.sympify(expr)
    if expr == 0:
        return True
    *_, replace = _numeric_symbols(compiled.model)
    plain = expr.xreplace(replace)
    symbols = sorted(plain.free_symbols, key=str)
    rng = np.random.default_rng(18)
    function = sm.lambdify(symbols, plain, modules=[np])  # the module, not "numpy": see _array_function
    for _ in range(3):
        try:
            value = complex(function(*rng.uniform(0.2, 1.3, len(symbols))))
        except (ZeroDivisionError, ValueError, TypeError, OverflowError):
            continue
        if abs(value) > 1e-9:
            return False
    return sm.trigsimp(sm.expand_trig(expr)) == 0 or sm.simplify(expr) == 0


class _ParameterParts:
    """Replaces the parameter-only part of every sum and product inside an expression by a new symbol.

    ``constant`` holds the parameters and the symbols already hoisted;
    ``hoisted`` is the list of ``(symbol, expression)`` pairs that the
    parameter-only function of :meth:`CompiledModel.terms_batch` evaluates
    once per parameter set. A part that is a bare symbol or a number is left
    in place (hoisting it saves no operation); equal parts share one symbol.
    """

    def __init__(self, constant: set, hoisted: list):
        self.constant, self.hoisted = set(constant), hoisted
        self.known = {expr: symbol for symbol, expr in hoisted}

    def __call__(self, expr):
        expr = sm.sympify(expr)
        if expr.is_Atom or expr.free_symbols <= self.constant:
            return expr
        args = [self(arg) for arg in expr.args]
        if expr.is_Add or expr.is_Mul:
            fixed = [arg for arg in args if arg.free_symbols <= self.constant]
            if fixed and len(fixed) < len(args):
                part = expr.func(*fixed)
                if not (part.is_Symbol or part.is_Number):
                    rest = [arg for arg in args if not arg.free_symbols <= self.constant]
                    return expr.func(self._symbol(part), *rest)
        return expr.func(*args) if args != list(expr.args) else expr

    def _symbol(self, part):
        """The hoisted symbol of ``part`` (a new one the first time)."""
        if part not in self.known:
            symbol = sm.Dummy(f"part{len(self.hoisted)}")
            self.hoisted.append((symbol, part))
            self.known[part] = symbol
            self.constant.add(symbol)
        return self.known[part]


def _stack(values, size: int) -> np.ndarray:
    """Entries from a numpy-lambdified function (arrays of shape (B,) or constants) as shape (B, len)."""
    out = np.empty((size, len(values)))
    for j, value in enumerate(values):
        out[:, j] = value
    return out


def _numeric_symbols(model: Model):
    """The symbols of the generated code: ``t``, ``q0..``, ``qd0..`` and ``_p0..`` for the parameters.

    Parameters are renamed, keeping their assumptions: the generated code names
    its arguments after its symbols, and a parameter called ``pi``, ``e`` or
    ``gamma`` would otherwise shadow the constant or function of that name in
    every expression (issue 22). No user name appears in the generated code.
    """
    from .model import TIME

    n = model.n
    q_syms = sm.symbols(f"q0:{n}", real=True)
    qd_syms = sm.symbols(f"qd0:{n}", real=True)
    t_sym = sm.Symbol("t", real=True)
    p_syms = tuple(sm.Symbol(f"_p{i}", **s.assumptions0) for i, s in enumerate(model.parameter_symbols))
    replace = {v: s for v, s in zip(model.qd, qd_syms)}
    replace.update({c: s for c, s in zip(model.q, q_syms)})
    replace.update(zip(model.parameter_symbols, p_syms))
    replace[TIME] = t_sym
    return t_sym, q_syms, qd_syms, p_syms, replace


def _symbolic_parts(model: Model) -> dict:
    """The expressions a model compiles from, in the generated code's symbols (:func:`_numeric_symbols`).

    Also what the functions built later on demand (Jacobians, batch twins,
    :meth:`CompiledModel.terms_batch`) are generated from: ``args``,
    ``pos_args``, the nonzero ``entries`` of ``M`` (unless constant), ``Q, A, b,
    C`` in :attr:`CompiledModel.matrices` order, ``phi``, ``velocity``, ``A`` and
    the ``friction`` rows flattened (per contact ``[s, drift, mu, mu_s, ds/dq'...]``).
    """
    t_sym, q_syms, qd_syms, p_syms, replace = _numeric_symbols(model)

    def num(expr):
        return sm.sympify(expr).xreplace(replace)

    M, Q, A, b, C = (num(model.M), num(model.Q), num(model.A), num(model.b), num(model.C))
    phi = num(model.phi)
    rows = []  # per contact: [s, drift, mu, mu_s, ds/dq'...] (the columns of friction_data)
    for contact in model.all_friction:
        s = num(contact.sliding_velocity)
        slope = [s.diff(v) for v in qd_syms]
        # d/dt of s along the motion, without the q'' part: -(this) is the stick row's b.
        drift = sum(s.diff(c) * v for c, v in zip(q_syms, qd_syms)) + s.diff(t_sym)
        mu = num(contact.coefficient)
        mu_s = num(contact.static_coefficient if contact.static_coefficient is not None else contact.coefficient)
        rows.append([s, drift, mu, mu_s] + slope)
    # A mass matrix of parameters only (Cartesian coordinates) is evaluated and factorized once
    # per parameter vector, not at every call: for the 64-link chain that is a 128 x 128 array.
    constant_mass = not (M.free_symbols - set(p_syms))
    entries = ([] if constant_mass else list(M)) + list(Q) + list(A) + list(b) + list(C)
    nonzero = [i for i, entry in enumerate(entries) if entry != 0]
    return {"args": [t_sym, list(q_syms), list(qd_syms), list(p_syms)], "pos_args": [t_sym, list(q_syms), list(p_syms)],
            "M": M, "C": C, "A": A, "constant_mass": constant_mass, "nonzero": nonzero,
            "entries": [entries[i] for i in nonzero], "phi": list(phi), "velocity": list(num(model.velocity_constraints)),
            "n_holonomic": phi.shape[0], "friction_rows": rows, "friction": [entry for row in rows for entry in row],
            "energy": num(model.energy),
            "powers": [list(num(model.nonconservative_force)), num(model.explicit_time_power)]}


def _model_facts(model: Model, parts: dict) -> dict:
    """What a compiled model reads from its :class:`~udk_notebooks.model.Model` besides the generated code.

    Plain data (numbers, strings, lists, booleans), kept on disk with the code
    (:mod:`udk_notebooks._kept_code`): a model read back from kept code is built
    from these alone, without sympy. The two facts that need a proof
    (:attr:`CompiledModel.reaction_free`) are added when first needed.
    """
    n, M, A = model.n, parts["M"], parts["A"]
    q = set(model.q)
    normals = [None if rows is None else [int(r) for r in rows] for rows in model.friction_normals]
    n_plain = len(model.friction)
    friction, width = parts["friction"], 4 + n
    return {
        "n": n, "m": int(A.shape[0]),
        "coordinate_names": [str(c.func) for c in model.q],
        "parameter_names": [str(s) for s in model.parameter_symbols],
        "defaults": [float(model.parameters[s]) for s in model.parameter_symbols],
        "nonzero": [int(i) for i in parts["nonzero"]],
        "constant_mass": bool(parts["constant_mass"]),
        "diagonal": bool(parts["constant_mass"] and all(M[i, j] == 0 for i in range(n) for j in range(n) if i != j)),
        "has_nonideal": any(e != 0 for e in parts["C"]),
        "n_holonomic": int(model.n_holonomic), "n_nonholonomic": int(model.n_nonholonomic),
        "n_friction": len(model.all_friction), "n_plain_friction": n_plain, "n_contacts": int(model.n_contacts),
        "unilateral": [bool(c.unilateral) for c in model.contacts],
        "contact_names": [str(name) for name in model.contact_names],
        "contact_rows": [int(r) for r in model.contact_rows],
        "friction_normals": normals,
        # per friction entry: the structurally nonzero entries of ds/dq', and whether its mu is
        "friction_slopes": [[j for j in range(n) if friction[i * width + 4 + j] != 0] for i in range(len(normals))],
        "friction_rough": [bool(friction[i * width + 2] != 0) for i in range(len(normals))],
        # CoulombFriction(normal=rows) entries whose rows change with the configuration (see
        # ContactForces._check_translational_normals)
        "translational_normals": [[i, rows] for i, rows in enumerate(normals[:n_plain])
                                  if rows is not None and any(model.A[r, j].has(*q) for r in rows for j in range(n))],
    }


FACTS = ("n", "m", "coordinate_names", "parameter_names", "defaults", "nonzero", "constant_mass", "diagonal",
         "has_nonideal", "n_holonomic", "n_nonholonomic", "n_friction", "n_plain_friction", "n_contacts",
         "unilateral", "contact_names", "contact_rows", "friction_normals", "friction_slopes", "friction_rough",
         "translational_normals")
"""The facts of :func:`_model_facts`: a kept model lacking one of them is compiled afresh."""

KEPT_AT_COMPILE = ("matrices", "phi", "velocity", "energy", "powers")
"""Functions every compiled model has (``friction`` and ``mass`` too where the facts say so)."""


class _SymbolicParts(dict):
    """The ``_symbolic`` cache of a compiled model: its expressions, and the functions built from them on demand.

    For a model read back from kept code, the expressions are derived (the
    model, then :func:`_symbolic_parts`) only when a key is read that is not
    there: a function that was not kept, or a proof. Membership tests and
    ``get`` derive nothing.
    """

    def __init__(self, *args, derive: Callable[[], dict] | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.derive = derive
        self._deriving = threading.Lock()  # an explorer's worker thread and the kernel may ask at once

    def __missing__(self, key):
        with self._deriving:
            if key not in self and self.derive is not None:
                for name, value in self.derive().items():
                    self.setdefault(name, value)
                self.derive = None
        return dict.__getitem__(self, key)  # a KeyError when the model has no such part either


@dataclass(frozen=True, eq=False)
class CompiledModel(ContactForces):
    """Plain numeric functions of a model (see the module docstring for argument order).

    Build with :meth:`Model.compile`, or :meth:`from_store` from kept code.
    ``matrices`` returns the entries of ``M`` (unless constant), ``Q``, ``A``,
    ``b``, ``C`` (row by row) whose positions in that order are ``nonzero``;
    attributes ``phi``, ``velocity_constraints``, ``energy``, ``powers_data``
    and ``friction_data`` are the raw lambdified functions; :meth:`motion`
    evaluates the Udwadia-Kalaba equation. ``facts`` holds what the model says
    besides its code (sizes, names, the contacts), as plain data.
    """

    n: int
    m: int
    coordinate_names: tuple[str, ...]
    parameter_names: tuple[str, ...]
    defaults: np.ndarray
    matrices: Callable
    nonzero: np.ndarray
    phi: Callable
    velocity_constraints: Callable
    energy: Callable
    powers_data: Callable
    friction_data: Callable | None
    mass: Callable | None
    has_nonideal: bool
    facts: dict = field(repr=False)
    kernel: Callable | None = None
    singular_kernel: Callable | None = None
    _model: Model | None = field(default=None, repr=False)
    _derive: Callable[[], Model] | None = field(default=None, repr=False)
    _mass_cache: dict = field(default_factory=dict, repr=False)
    _symbolic: dict = field(default_factory=dict, repr=False)

    @property
    def model(self) -> Model:
        """The :class:`~udk_notebooks.model.Model` compiled; derived on first use for a model read from kept code."""
        if self._model is None:
            object.__setattr__(self, "_model", self._derive())
        return self._model

    @classmethod
    def from_model(cls, model: Model, sources: CodeStore | None = None) -> "CompiledModel":
        """Compile ``model``; with ``sources``, each lambdified function is rebuilt from its record there
        when it has a sound one, and recorded there when it is generated (:mod:`udk_notebooks._kept_code`),
        with the model's :func:`facts <_model_facts>`.

        The caller vouches that ``sources`` was recorded for this very model by this code (a disk cache
        keys it by the package's sources and the versions of sympy, numpy and Python). The functions
        built later on demand (Jacobians, batch twins) use the same store.
        """
        if sources is not None and not isinstance(sources, CodeStore):
            raise TypeError(f"`sources` must be a CodeStore or None; got {type(sources).__name__}")
        parts = _symbolic_parts(model)
        facts = _model_facts(model, parts)
        if sources is not None:
            for name, value in facts.items():
                sources.keep_fact(name, value)
            if "reaction_free" in sources.facts:  # proven before for this very model (the caller vouches)
                facts["reaction_free"] = sources.facts["reaction_free"]
        args, pos_args = parts["args"], parts["pos_args"]

        def lam(exprs, state=args):
            return _array_function(state, exprs, cse=True)

        functions = {
            "matrices": lambda: _scalar_function(args, parts["entries"]),
            "phi": lambda: _array_function(pos_args, parts["phi"], cse=True),
            "velocity": lambda: lam(parts["velocity"]),
            "energy": lambda: lam(parts["energy"]),
            "powers": lambda: lam(parts["powers"]),
        }
        if parts["friction_rows"]:
            functions["friction"] = lambda: lam(parts["friction_rows"])
        if facts["constant_mass"]:
            functions["mass"] = lambda: _array_function([args[3]], sm.Matrix(parts["M"]), cse=True)
        built = {name: kept(sources, name, build) for name, build in functions.items()}
        return cls._assemble(facts, built, _SymbolicParts(parts, sources=sources), model=model)

    @classmethod
    def from_store(cls, store: CodeStore, derive: Callable[[], Model]) -> "CompiledModel | None":
        """The compiled model that ``store`` keeps, built from its facts and code alone: no sympy, no derivation.

        ``derive`` makes the :class:`~udk_notebooks.model.Model` the store was
        recorded from; it is called only when something that was not kept is
        needed (a Jacobian not built before, a proof, a message naming a
        constraint). The caller vouches that the store was recorded from that
        model by this code (see :func:`udk_notebooks._kept_code.compile_kept`).
        Returns None when the store lacks a fact or a function, or one does not
        rebuild: the caller compiles afresh.

        Parameters
        ----------
        store : CodeStore
        derive : callable
            ``derive() -> Model``.

        Returns
        -------
        CompiledModel or None
        """
        if not isinstance(store, CodeStore):
            raise TypeError(f"`store` must be a CodeStore; got {type(store).__name__}")
        if not callable(derive):
            raise TypeError(f"`derive` must be a function returning the Model; got {type(derive).__name__}")
        facts = dict(store.facts)
        if any(name not in facts for name in FACTS):
            return None
        names = list(KEPT_AT_COMPILE) + (["friction"] if facts["n_friction"] else []) + \
            (["mass"] if facts["constant_mass"] else [])
        built = {name: store.load(name) for name in names}
        if any(func is None for func in built.values()):
            return None
        symbolic = _SymbolicParts(sources=store)
        compiled = cls._assemble(facts, built, symbolic, derive=derive)
        symbolic.derive = lambda: _symbolic_parts(compiled.model)
        return compiled

    @classmethod
    def _assemble(cls, facts: dict, built: dict, symbolic: dict, model=None, derive=None) -> "CompiledModel":
        """The compiled model of these facts and functions (from :meth:`from_model` or :meth:`from_store`)."""
        n, m, nonzero, has_nonideal = facts["n"], facts["m"], facts["nonzero"], facts["has_nonideal"]
        mass = built.get("mass")
        # A constant diagonal M (point masses, principal inertias) gets a solver shaped by the sparsity
        # pattern of Q, A, b, C (udk_notebooks.kernels); it falls back to core.solve when it cannot vouch.
        # The same for a diagonal M with zero masses (massless sliders): kernels.SingularKernel.
        diagonal = facts["diagonal"]
        return cls(
            n=n,
            m=m,
            coordinate_names=tuple(facts["coordinate_names"]),
            parameter_names=tuple(facts["parameter_names"]),
            defaults=np.array(facts["defaults"], dtype=float),
            matrices=built["matrices"],
            nonzero=np.array(nonzero, dtype=np.intp),
            phi=built["phi"],
            velocity_constraints=built["velocity"],
            energy=built["energy"],
            powers_data=built["powers"],
            friction_data=built.get("friction"),
            mass=mass,
            has_nonideal=has_nonideal,
            facts=facts,
            kernel=diagonal_kernel(n, m, nonzero, mass, has_nonideal) if diagonal else None,
            singular_kernel=singular_kernel(n, m, nonzero, mass, has_nonideal) if diagonal else None,
            _model=model,
            _derive=derive,
            _symbolic=symbolic,
        )

    @property
    def store(self) -> CodeStore | None:
        """The :class:`~udk_notebooks._kept_code.CodeStore` this model keeps its generated code in (None: none).

        Functions built on demand (Jacobians, batch twins) and facts proven
        later are recorded there; ``store.changed`` tells whether it should be
        written again (:func:`udk_notebooks._kept_code.write_store`).
        """
        return self._symbolic.get("sources")

    # -- Jacobians of the constraints, built on first use -------------------------
    # Both are rows of A: the coefficients of q'' in the differentiated velocity-level rows (phi', psi)
    # are their derivatives by qd, and those of phi' are d(phi)/dq. Reading them off A costs nothing at
    # compile time; differentiating took half the compile time of the 64-link chain.
    @property
    def velocity_jacobian(self) -> Callable:
        """``(t, q, qd, p) -> d(phi', psi)/d(qd)``, shape (m, n) (one zero row when m = 0)."""
        cache = self._symbolic
        if "velocity_jacobian" not in cache:
            def build():
                A = cache["A"] if self.m else sm.zeros(1, self.n)
                return _array_function(cache["args"], A, cse=True)

            cache["velocity_jacobian"] = kept(cache.get("sources"), "velocity_jacobian", build)
        return cache["velocity_jacobian"]

    @property
    def phi_jacobian(self) -> Callable:
        """``(t, q, p) -> d(phi)/dq``, shape (m_h, n) (one zero row when there is no holonomic row)."""
        cache = self._symbolic
        if "phi_jacobian" not in cache:
            def build():
                rows = cache["n_holonomic"]
                J = cache["A"][:rows, :] if rows else sm.zeros(1, self.n)
                if J.free_symbols & set(cache["args"][2]):  # a simplified A that is not visibly free of qd
                    J = sm.Matrix(cache["phi"]).jacobian(cache["args"][1])
                return _array_function(cache["pos_args"], J, cse=True)

            cache["phi_jacobian"] = kept(cache.get("sources"), "phi_jacobian", build)
        return cache["phi_jacobian"]

    # -- array-capable twins (parameter sweeps) ----------------------------------
    def _batch_function(self, key: str) -> Callable:
        """numpy-lambdified twin of a scalar function, built on first use and kept."""
        cache = self._symbolic
        if "batch_" + key not in cache:
            cache["batch_" + key] = kept(cache.get("sources"), "batch_" + key, lambda: _array_function(
                cache["pos_args"] if key == "phi" else cache["args"], cache[key], cse=True))
        return cache["batch_" + key]

    def matrices_batch(self, t, q, qd, p) -> np.ndarray:
        """The nonzero entries of :attr:`matrices` for a batch: shape (B, len(nonzero)).

        ``t`` is a float or shape (B,); ``q, qd`` have shape (B, n) and ``p`` shape (B, k), or
        shape (k,) for one parameter vector shared by the batch (as in the other ``*_batch`` functions).
        """
        return _stack(self._batch_function("entries")(t, list(q.T), list(qd.T), list(p.T)), q.shape[0])

    def terms_batch(self, t, q_rows, qd_rows, p_rows, prepared=None) -> list:
        """The nonzero entries of :attr:`matrices`, ``phi``, ``(phi', psi)`` and the friction data, at once.

        One lambdified function with common subexpressions eliminated across
        all of them (a batched integrator needs the residuals of a stabilized
        ``b`` and the friction contacts at every stage). Subexpressions of the
        parameters alone (``cos(alpha)`` of an incline, ``-m g``) are computed
        once per parameter set by :meth:`prepare_terms` and passed back as
        ``prepared``; without it they are computed here.

        Arguments are rows, not stacked arrays: ``t`` is a float or an array,
        ``q_rows, qd_rows`` are sequences of n arrays and ``p_rows`` of k
        arrays, all of one shape (B,) (or broadcasting to one shape).

        Returns a list of ``len(nonzero) + n_holonomic + m + n_friction (4 + n)``
        items, each an array or a float (an entry that does not depend on the
        batch): the entries, ``phi``, ``(phi', psi)``, then per contact the
        columns of :attr:`friction_data` (``s``, its drift, ``mu``, ``mu_s``, ``ds/dq'``).
        """
        pre, main = self._terms_functions()
        if prepared is None:
            prepared = pre(p_rows)
        return main(t, q_rows, qd_rows, p_rows, prepared)

    def prepare_terms(self, p_rows) -> list:
        """The parameter-only subexpressions of :meth:`terms_batch` for these parameter rows."""
        return self._terms_functions()[0](p_rows)

    def _terms_functions(self):
        """``(pre, main)`` of :meth:`terms_batch`, built on first use and kept (in the store too)."""
        cache = self._symbolic
        if "terms" not in cache:
            store = cache.get("sources")
            pair = None if store is None else (store.load("terms_pre"), store.load("terms_main"))
            if pair is None or None in pair:
                pair = self._build_terms()
                if store is not None:
                    store.record("terms_pre", pair[0])
                    store.record("terms_main", pair[1])
            cache["terms"] = pair
        return cache["terms"]

    def _build_terms(self):
        """Generate ``(pre, main)`` of :meth:`terms_batch` from the model's expressions."""
        cache = self._symbolic
        t_sym, q_syms, qd_syms, p_syms = cache["args"]
        parts = cache["entries"] + cache["phi"] + cache["velocity"] + cache["friction"]
        exprs = [sm.sympify(e) for e in parts]
        replacements, reduced = sm.cse(exprs)
        params = set(p_syms)
        hoisted, kept = [], []
        for symbol, expr in replacements:  # in order: a replacement may use earlier ones
            (hoisted if expr.free_symbols <= params | {h for h, _ in hoisted} else kept).append((symbol, expr))
        reduced = list(reduced)
        for j, expr in enumerate(reduced):  # whole outputs of the parameters alone (-m g) are hoisted too
            if not expr.is_Number and expr.free_symbols <= params | {h for h, _ in hoisted}:
                symbol = sm.Dummy(f"hoisted{j}")
                hoisted.append((symbol, expr))
                reduced[j] = symbol
        # and the parameter-only terms of a sum or factors of a product that also depends on the state
        # (-l^2 in x^2 + y^2 - l^2): one array per run, not one numpy call per stage
        hoist = _ParameterParts(params | {h for h, _ in hoisted}, hoisted)
        kept = [(symbol, hoist(expr)) for symbol, expr in kept]
        reduced = [hoist(expr) for expr in reduced]
        names = [h for h, _ in hoisted]
        pre = _array_function([list(p_syms)], names, cse=lambda _: (hoisted, names))
        main = _array_function([t_sym, list(q_syms), list(qd_syms), list(p_syms), names], reduced,
                               cse=lambda _: (kept, reduced))
        return pre, main

    def residuals_batch(self, t, q, qd, p) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`residuals` for a batch (``t`` a float or shape (B,)): shapes (B, m_h) and (B, m)."""
        B = q.shape[0]
        phi = _stack(self.phi(t, list(q.T), list(p.T)), B)
        return phi, _stack(self.velocity_constraints(t, list(q.T), list(qd.T), list(p.T)), B)

    # ``phi``, ``velocity_constraints``, ``energy``, ``powers_data`` and ``friction_data`` are
    # numpy-lambdified already: they take the columns of a batch as they are, with no twin to build.
    def energy_batch(self, t, q, qd, p) -> np.ndarray:
        """:attr:`energy` for a batch (``t`` a float or shape (B,)): shape (B,)."""
        return _stack([self.energy(t, list(q.T), list(qd.T), list(p.T))], q.shape[0])[:, 0]

    def powers_batch(self, t, q, qd, p) -> tuple[np.ndarray, np.ndarray]:
        """:attr:`powers_data` for a batch: the nonconservative force, shape (B, n), and ``-dL/dt``, shape (B,)."""
        force, explicit = self.powers_data(t, list(q.T), list(qd.T), list(p.T))
        return _stack(force, q.shape[0]), _stack([explicit], q.shape[0])[:, 0]

    def friction_batch(self, t, q, qd, p) -> np.ndarray:
        """:attr:`friction_data` for a batch: shape (B, k, 4 + n), per contact ``[s, drift, mu, mu_s, slope...]``."""
        B = q.shape[0]
        rows = self.friction_data(t, list(q.T), list(qd.T), list(p.T))
        return _stack([entry for row in rows for entry in row], B).reshape(B, self.n_friction, 4 + self.n)

    # -- sizes and parameters ------------------------------------------------
    @property
    def n_holonomic(self) -> int:
        """Number of holonomic constraint rows (the first rows of ``A``)."""
        return self.facts["n_holonomic"]

    @property
    def n_nonholonomic(self) -> int:
        """Number of nonholonomic constraint rows (the last rows of ``A``)."""
        return self.facts["n_nonholonomic"]

    @property
    def n_friction(self) -> int:
        """Number of friction entries (``CoulombFriction`` entries, then one per :class:`~udk_notebooks.contacts.Contact`)."""
        return self.facts["n_friction"]

    @property
    def n_contacts(self) -> int:
        """Number of physical contacts (:class:`~udk_notebooks.contacts.Contact`); their entries are the last modes."""
        return self.facts["n_contacts"]

    @property
    def unilateral(self) -> tuple[bool, ...]:
        """Per contact: True when it may open (a gap that can grow), False for a bilateral one."""
        return tuple(self.facts["unilateral"])

    @property
    def contact_names(self) -> tuple[str, ...]:
        """Per contact, its name (as in messages)."""
        return tuple(self.facts["contact_names"])

    @property
    def contact_rows(self) -> tuple[int, ...]:
        """Per contact, its gap row in ``phi`` and ``A``."""
        return tuple(self.facts["contact_rows"])

    @property
    def friction_normals(self) -> tuple[tuple[int, ...] | None, ...]:
        """Per friction entry, the constraint rows whose force is its normal force; None for ``N = |F^L|``."""
        return tuple(None if rows is None else tuple(rows) for rows in self.facts["friction_normals"])

    def parameters(self, params: dict | None = None, **overrides) -> np.ndarray:
        """The parameter vector ``p``: defaults, overridden by name.

        Raises a ValueError naming the unknown parameter and listing the valid names.
        """
        if params is not None and not isinstance(params, Mapping):
            raise ValueError(f"`params` must be a dict of parameter values by name, e.g. {{'m': 2.0}}; got {params!r}")
        values = dict(params or {}, **overrides)
        p = self.defaults.copy()
        for key, value in values.items():
            key = str(key)
            if key not in self.parameter_names:
                raise ValueError(
                    f"unknown parameter `{key}`; this model has {', '.join(self.parameter_names) or 'no parameters'}"
                )
            p[self.parameter_names.index(key)] = real_number(value, f"parameter `{key}`")
        return p

    def check_state(self, q, qd=None, names=("q", "qd")) -> tuple[np.ndarray, np.ndarray | None]:
        """Return ``q`` (and ``qd``) as finite float vectors of length n, or raise naming them (as ``names``)."""
        try:  # fast path: one finiteness test on the sum of squares (NaN and inf both propagate)
            q_arr = np.asarray(q, dtype=float)
            qd_arr = q_arr if qd is None else np.asarray(qd, dtype=float)
            if q_arr.shape == qd_arr.shape == (self.n,):
                # hypot of a few list entries is cheaper than two numpy products; its square is q.q + qd.qd
                if self.n <= 16:
                    size = math.hypot(*q_arr.tolist(), *qd_arr.tolist())
                    finite = math.isfinite(size * size)
                else:
                    finite = math.isfinite(q_arr @ q_arr + qd_arr @ qd_arr)
                if finite:
                    return q_arr, (None if qd is None else qd_arr)
        except (TypeError, ValueError):
            pass
        q = check_vector(q, names[0], self.n)  # slow path: a message that names the culprit
        qd = None if qd is None else check_vector(qd, names[1], self.n)
        if not math.isfinite(q @ q + (0.0 if qd is None else qd @ qd)):
            raise ValueError(f"`{names[0]}` and `{names[1]}` are too large: their squares overflow; rescale the units")
        return q, qd

    # -- evaluations -------------------------------------------------------
    @property
    def constant_mass(self) -> bool:
        """True when ``M`` depends on parameters only (then it is evaluated once per parameter vector)."""
        return self.mass is not None

    def evaluate(self, t, q, qd, p):
        """``M, Q, A, b, C`` as arrays of shapes (n, n), (n,), (m, n), (m,), (n,)."""
        q, qd, p = (np.asarray(v, dtype=float) for v in (q, qd, p))
        return self._evaluate(t, q, qd, p)[:5]

    def _evaluate(self, t, q, qd, p, entries=None):
        """:meth:`evaluate` for float arrays, plus the Cholesky factor of a constant ``M`` (else None).

        ``entries`` may hold :meth:`_entries` at this state, already computed (for the pattern kernel).
        """
        n, m = self.n, self.m
        values = np.zeros((0 if self.mass is not None else n * n) + n + m * n + m + n)
        values[self.nonzero] = self._entries(t, q.tolist(), qd.tolist(), p.tolist()) if entries is None else entries
        if self.mass is not None:
            M, factor = self._constant_mass(p)
            k = 0
        else:
            k = n * n
            M, factor = values[:k].reshape(n, n), None
        Q = values[k : k + n]
        k += n
        A = values[k : k + m * n].reshape(m, n)
        k += m * n
        return M, Q, A, values[k : k + m], values[k + m :], factor

    def _entries(self, t, q: list, qd: list, p: list) -> list:
        """:attr:`matrices` at one state, or a ValueError that names the state and parameters where it fails."""
        try:
            return self.matrices(t, q, qd, p)
        except (ValueError, ArithmeticError) as exc:  # math domain error, overflow, division by zero
            values = ", ".join(f"{name} = {value:g}" for name, value in zip(self.parameter_names, p))
            raise ValueError(
                f"the model cannot be evaluated at t = {t:g}, q = {np.array2string(np.array(q), precision=4)}, "
                f"q' = {np.array2string(np.array(qd), precision=4)}{f' with parameters {values}' if values else ''}: "
                f"{type(exc).__name__}: {exc}. Some entry of M, Q, A, b or C is undefined there (a square root "
                "or logarithm of a negative number, a division by zero): check the parameters and the state"
            ) from exc

    def residuals(self, t, q, qd, p) -> tuple[np.ndarray, np.ndarray]:
        """Constraint residuals ``phi(q, t)`` (shape (m_h,)) and ``(phi', psi)`` (shape (m,))."""
        return np.asarray(self.phi(t, q, p), dtype=float), np.asarray(self.velocity_constraints(t, q, qd, p), dtype=float)

    def _constant_mass(self, p) -> tuple[np.ndarray, np.ndarray | None]:
        """``M`` and its Cholesky factor (None when singular) for the parameter vector ``p``, cached."""
        key = p.tobytes()
        entry = self._mass_cache.get(key)
        if entry is None:
            if len(self._mass_cache) > 64:
                self._mass_cache.clear()
            M = np.asarray(self.mass(p), dtype=float)
            entry = self._mass_cache[key] = (M, cholesky_or_none(M))
        return entry

    def _mass_eigenvalues(self, p) -> np.ndarray:
        """``eigvalsh(M)`` of a constant singular ``M`` for the parameter vector ``p``, cached like its factor.

        The singular-``M`` route checks semi-definiteness on them at every call;
        for a constant ``M`` the eigenvalues are those of one matrix per slider value.
        """
        key = (p.tobytes(), "eig")
        eig = self._mass_cache.get(key)
        if eig is None:
            eig = self._mass_cache[key] = np.linalg.eigvalsh(self._constant_mass(p)[0])
        return eig

    def solve_modes(self, t, q, qd, p, modes=(), correction=None) -> tuple[Motion, np.ndarray]:
        """The motion with friction contacts in the given modes (+1/-1 sliding, 0 sticking, 2 open).

        Returns the motion and, per contact, the signed holding-force ratio
        ``lambda_s / (mu_s N)`` for sticking contacts (``nan`` for sliding ones):
        static friction holds while its size is at most one, and a released
        contact slides in the direction ``-sign(ratio)``. See
        :meth:`solve_contacts`, which also returns the normal forces.
        """
        motion, ratios, _ = self.solve_contacts(t, q, qd, p, modes, correction)
        return motion, ratios

    def solve_contacts(self, t, q, qd, p, modes=(), correction=None) -> tuple[Motion, np.ndarray, np.ndarray]:
        """The motion, the stick ratios and the normal forces of the contacts in the given modes.

        Parameters
        ----------
        t : float
        q, qd : ndarray, shape (n,)
        p : ndarray, shape (k,)
            Parameter vector (:meth:`parameters`).
        modes : tuple of int, one per entry of ``model.all_friction``
            +1/-1 sliding (the sign of the slip), 0 sticking, :data:`OPEN` (a
            :class:`~udk_notebooks.contacts.Contact` whose point has left its surface).
        correction : ndarray, shape (m,), optional
            Added to ``b`` (stabilization).

        Returns
        -------
        motion : Motion
        ratios : ndarray, shape (len(modes),)
            Holding force over its static limit for sticking entries, NaN otherwise.
        normals : ndarray, shape (n_contacts,)
            The normal force of each :class:`~udk_notebooks.contacts.Contact` in
            newtons (the multiplier of its gap row, found together with the
            friction forces), NaN where the contact is open.

        Raises
        ------
        PainleveParadoxError
            When the normal forces of sliding contacts have no consistent value or several.
        ValueError
            ``CoulombFriction(normal=None)`` where friction changes the constraint
            reaction (``A M^-1 C != 0``), so that ``|F^L|`` is not the normal force.
        """
        if not modes:  # the integrator's common case: no friction entry, no contact
            normals = np.full(self.n_contacts, np.nan) if self.n_contacts else _NO_NORMALS
            return self._solve_plain(t, q, qd, p, correction), _NO_RATIOS, normals
        small = self._fast_contacts(t, q, qd, p, modes, correction)  # Python floats, where they can vouch
        if small is not None:
            return small
        return self._general_contacts(t, q, qd, p, modes, correction)

    def _general_contacts(self, t, q, qd, p, modes, correction) -> tuple[Motion, np.ndarray, np.ndarray]:
        """:meth:`solve_contacts` with friction modes by the general route: every rank decision and message."""
        normals = np.full(self.n_contacts, np.nan)
        M, Q, A, b, C, factor = self._evaluate(t, q, qd, p)
        if correction is not None:
            b = b + correction
        # Rows of one size, as udwadia_kalaba gives them to the solver: its rank decisions are relative to
        # the largest row, so a constraint written in other units (or times 1e10) must not hide the rest.
        size = np.abs(A).max(axis=1, initial=0.0)
        A, b = scale_rows(A, b)
        # Each row's multiplier grows by the factor its row shrank; a contact's gap-row multiplier is its
        # normal force only in the row's own units, so the contact solver multiplies the multipliers back.
        unit = np.where(size > 0, np.abs(A).max(axis=1, initial=0.0) / np.where(size > 0, size, 1.0), 1.0)
        symbolic_C = C if self.has_nonideal else None
        ratios = np.full(len(modes), np.nan)
        data = np.asarray(self.friction_data(t, q, qd, p), dtype=float).reshape(len(modes), -1)
        normal_rows = list(self.friction_normals)
        if self.n_contacts:  # open contacts leave A; the rows of the others move up
            first = len(modes) - self.n_contacts
            gone = sorted(self.contact_rows[i - first] for i in range(first, len(modes)) if modes[i] == OPEN)
            if gone:
                A, b, unit = np.delete(A, gone, axis=0), np.delete(b, gone), np.delete(unit, gone)
                normal_rows = [None if rows is None or rows[0] in gone else
                               tuple(r - sum(g < r for g in gone) for r in rows) for rows in normal_rows]
        m_now = A.shape[0]
        stuck = [i for i, mode in enumerate(modes) if mode == 0]
        sliding = [i for i, mode in enumerate(modes) if mode in (1, -1)]
        if stuck:
            A = np.vstack([A, data[stuck, 4:]])
            b = np.concatenate([b, -data[stuck, 1]])
            unit = np.concatenate([unit, np.ones(len(stuck))])

        if self.n_contacts:
            holding = []

            def nonideal(ideal):
                return self._contact_friction(M, Q, A, b, factor, ideal, symbolic_C, data, modes, normal_rows,
                                              m_now, ratios, normals, (t, q, qd), holding, unit)

            motion = solve(M, Q, A, b, nonideal, factor=factor)
            if holding:  # static friction is a constraint force that friction, not geometry, supplies
                motion = Motion(motion.qdd, motion.impressed, motion.ideal - holding[0], motion.nonideal + holding[0])
            return motion, ratios, normals

        holding = []
        pressed = any(rows is not None for rows in normal_rows)  # some contact names its normal rows

        def reaction(force):  # r(e) = F^C(e) - e for the constraints in force now (stick rows included)
            return solve(M, Q, A, b, force, factor=factor).nonideal - force

        def nonideal(ideal):
            if stuck:  # the ideal force splits into the geometric part and the holding forces
                rows = A[m_now:]
                lam, _, rank, _ = np.linalg.lstsq(A.T, ideal, rcond=None)
                holding.append(rows.T @ lam[m_now:])
                normal = ideal - holding[0]
            else:
                normal = ideal
            size = math.sqrt(normal @ normal)
            total = np.zeros(self.n) if symbolic_C is None else symbolic_C.copy()
            for i in sliding:
                if normal_rows[i] is None:
                    unit = -data[i, 2] * modes[i] * data[i, 4:]
                    self._check_reaction_free(i, unit, reaction, t)
                    total += size * unit
            if pressed:
                self._check_translational_normals()
                known = (lam, rank) if stuck else None
                return self._pressed_friction(M, Q, A, b, factor, ideal, total, data, modes, normal_rows, size,
                                              ratios, known)
            if stuck:
                for j, i in enumerate(stuck):
                    slope = data[i, 4:]
                    hold = lam[m_now + j] * math.sqrt(slope @ slope)
                    ratios[i] = hold / max(data[i, 3] * size, 1e-300)
            return total

        motion = solve(M, Q, A, b, nonideal, factor=factor)
        if holding:  # static friction is a constraint force that friction, not geometry, supplies
            motion = Motion(motion.qdd, motion.impressed, motion.ideal - holding[0], motion.nonideal + holding[0])
        return motion, ratios, normals

    def _solve_plain(self, t, q, qd, p, correction=None) -> Motion:
        """The motion without friction modes: the pattern kernel if it vouches, else :func:`core.solve`.

        The same answer as the moded route of :meth:`solve_contacts` with
        ``modes=()`` (Udwadia & Kalaba, "A new perspective on constrained
        motion", 1992, Eq. 7), without the work only contacts need: the row
        sizes that turn gap-row multipliers into normal forces are not
        computed, and ``A`` is scaled only when it has rows (scaling no rows
        changes nothing). ``core.solve`` keeps every check of the general
        route: definiteness of ``M`` (Cholesky with the equilibrated pivot
        test), rank and conditioning of the Gram matrix, consistency of
        ``A q'' = b``, and the null-space or singular-``M`` fallbacks.
        """
        entries = None
        if self.kernel is not None:
            entries = self._entries(t, q.tolist(), qd.tolist(), p.tolist())
            motion = self.kernel(entries, p, correction)
            if motion is not None:
                return motion
        if self.singular_kernel is not None:
            entries = entries or self._entries(t, q.tolist(), qd.tolist(), p.tolist())
            motion = self.singular_kernel(entries, p, correction)
            if motion is not None:
                return motion
        # The kernel declined (singular M, dependent rows, ...): the general route, on the same entries.
        M, Q, A, b, C, factor = self._evaluate(t, q, qd, p, entries)
        if self.m:
            if correction is not None:
                b = b + correction
            # Rows of one size, as udwadia_kalaba gives them to the solver (see solve_contacts).
            A, b = scale_rows(A, b)
        eig = self._mass_eigenvalues(p) if factor is None and self.mass is not None else None
        return solve(M, Q, A, b, C if self.has_nonideal else None, factor=factor, eigenvalues=eig)

    def accelerations(self, t, q, qd, p, correction=None) -> np.ndarray:
        """``q''`` of the plain route (no friction modes): :meth:`_solve_plain` without the force terms.

        For the right-hand side of an integrator, which needs the accelerations
        only. An unconstrained model with at most :data:`FREE_MAX_N`
        coordinates, a state-dependent ``M`` and no nonideal force (the double
        pendulum in its joint angles) solves ``M q'' = Q`` by a Cholesky
        factorization written out in Python floats (:func:`_free_solver`), with the test of
        :func:`~udk_notebooks.core.cholesky_or_none` (every pivot of ``M``
        equilibrated to a unit diagonal above ``RANK_RTOL``): for two
        coordinates that is a tenth of the cost of the LAPACK calls. Whatever
        that test refuses (a singular or non-finite ``M``) goes the general
        route, which decides and explains it. A constrained model with a
        constant diagonal ``M`` and a generated scalar kernel (the Cartesian
        double pendulum) takes ``q''`` from that kernel directly
        (:meth:`~udk_notebooks.kernels.ScalarKernel.qdd_solver`): the same
        numbers and tests as :meth:`_solve_plain`, without building a Motion.

        The arguments are those of :meth:`solve_contacts` without ``modes``;
        the result is ``q''``, an ndarray of shape (n,).
        """
        fast = self._fast_solver(p, correction)
        if fast is not None:
            qdd = fast(self._entries(t, q.tolist(), qd.tolist(), p.tolist()))
            if qdd is not None:
                return np.array(qdd)
        return self._solve_plain(t, q, qd, p, correction).qdd

    def _fast_solver(self, p, correction=None) -> Callable | None:
        """``entries -> q''`` (a list, or None to send that state the general route) of :meth:`accelerations`.

        The generated float Cholesky of an unconstrained model (:meth:`_free_solver`), the
        scalar kernel of a constrained one with a constant diagonal ``M``
        (:meth:`~udk_notebooks.kernels.ScalarKernel.qdd_solver`), or None: the general route.
        """
        kind = self._fast_kind()
        if kind == "free":
            return self._free_solver()
        fast = self.kernel.qdd_solver(p, correction) if kind == "kernel" else None
        if fast is None and self.singular_kernel is not None:  # a zero mass: ScalarKernel's factors decline it
            fast = self.singular_kernel.qdd_solver(p, correction)
        return fast

    def _fast_kind(self) -> str | None:
        """Which fast solver :meth:`accelerations` has: ``"free"`` (float Cholesky), ``"kernel"``, or None."""
        if self.m == 0 and self.mass is None and not self.has_nonideal and self.n <= FREE_MAX_N:
            return "free"
        if isinstance(self.kernel, ScalarKernel):
            return "kernel"
        return None

    def plain_rate(self, p) -> Callable:
        """``(t, y) -> (q', q'')`` of :meth:`accelerations` for one parameter vector, as one ndarray.

        The right-hand side of an integrator that calls it thousands of times
        with the same parameters (Hairer's DOP853 in :func:`~udk_notebooks.simulate`).
        Where :meth:`accelerations` has a fast solver (:meth:`_fast_solver`),
        its generated statements and the lambdified entries are joined into one
        function (:func:`udk_notebooks._fused.fuse`), and whatever depends on
        the parameters alone is computed here, once: the same operations in
        the same order, so the same numbers to the last bit, at about half the
        cost per call. Where the fast solver declines or the entries cannot be
        evaluated, the general route decides as it does there (and names the
        state where the model fails).

        Parameters
        ----------
        p : ndarray, shape (len(parameter_names),)
            Parameter values, as :meth:`parameters` returns them.

        Returns
        -------
        callable
            ``rate(t, y)`` with ``y = (q, q')`` of shape (2n,); returns shape (2n,).
        """
        p = np.asarray(p, dtype=float)
        if p.shape != (len(self.parameter_names),):
            raise ValueError(f"`p` must hold the {len(self.parameter_names)} parameter values of "
                             f"{self.parameter_names}; got shape {p.shape}. Use CompiledModel.parameters")
        n = self.n

        def general(t, y):
            return np.concatenate([y[n:], self._solve_plain(t, y[:n], y[n:], p).qdd])

        fused = self._fused_rate(p, general)
        if fused is not None:
            return fused
        p_list, entries = p.tolist(), self._entries
        fast = self._fast_solver(p)

        def rate(t, y):
            state = y.tolist()
            if fast is not None:
                qdd = fast(entries(t, state[:n], state[n:], p_list))
                if qdd is not None:
                    return np.array(state[n:] + qdd)
            return general(t, y)

        return rate

    def stabilized_rate(self, p, stabilization) -> Callable:
        """``(t, y) -> (q', q'')`` of :meth:`accelerations` with ``stabilization``'s correction of ``b``.

        :meth:`plain_rate` for a stabilized run: at each call the residuals
        give the correction (``stabilization.correction(*residuals(...))``)
        and :meth:`accelerations` solves with it. Where the model has a
        scalar kernel that takes this ``M``, the kernel and its mass factors
        are bound here, once, instead of at every call (a stabilized run calls
        this thousands of times with the same ``p``); the statements, the
        tests and so the numbers are those of :meth:`accelerations`, and a
        state the kernel declines goes the general route there.

        Parameters
        ----------
        p : ndarray, shape (len(parameter_names),)
            Parameter values, as :meth:`parameters` returns them.
        stabilization : Baumgarte or GainMatrix
            Its ``correction(phi, velocity)`` is added to ``b``.

        Returns
        -------
        callable
            ``rate(t, y)`` with ``y = (q, q')`` of shape (2n,); returns shape (2n,).
        """
        p = np.asarray(p, dtype=float)
        n, p_list, entries, residuals = self.n, p.tolist(), self._entries, self.residuals
        correct = stabilization.correction
        fast = self.kernel.corrected_qdd_solver(p) if self._fast_kind() == "kernel" else None

        def rate(t, y):
            q, qd = y[:n], y[n:]
            q_list, qd_list = q.tolist(), qd.tolist()
            correction = correct(*residuals(t, q_list, qd_list, p_list))
            if fast is not None:
                # as accelerations: the kernel's q'' where it vouches for it, else the general route below
                qdd = fast(entries(t, q_list, qd_list, p_list), np.asarray(correction, dtype=float).tolist())
                if qdd is not None:
                    return np.concatenate([qd, np.array(qdd)])
            return np.concatenate([qd, self.accelerations(t, q, qd, p, correction)])

        return rate

    def _fused_rate(self, p: np.ndarray, general: Callable) -> Callable | None:
        """:meth:`plain_rate` as one generated function for ``p``, or None where no fast solver applies.

        The joined source is generated once per model (and kept); each call
        runs its set-up for ``p``. None also where the entries need numpy
        (a function ``math`` lacks), or where the set-up itself fails for these
        parameters (a division by zero among the parameters alone): the caller
        then takes the unjoined route, which reports such a failure where it occurs.
        """
        kind = self._fast_kind()
        if kind is None or not getattr(self.matrices, "on_floats", False):
            return None
        key, factors = "fused_rate", [] if kind == "free" else self.kernel.mass_factors(p)
        if factors is None and self.singular_kernel is not None:  # a zero mass: the singular kernel's, as in _fast_solver
            key, factors = "fused_singular", self.singular_kernel.mass_factors(p)
        if factors is None:  # M goes the general route
            return None
        cache = self._symbolic
        if key not in cache:
            cache[key] = self._fuse(singular=key == "fused_singular")
        make = cache[key]
        if make is None:
            return None
        try:
            return make(p.tolist(), factors, general)
        except (ValueError, ArithmeticError):
            return None

    def _fuse(self, singular: bool = False) -> Callable | None:
        """The ``make(p, w, fallback)`` of :func:`udk_notebooks._fused.fuse` for this model's fast solver.

        With ``singular``, for :class:`~udk_notebooks.kernels.SingularKernel` (a zero mass), whose
        factors are those of its :meth:`~udk_notebooks.kernels.SingularKernel.mass_factors`.
        """
        from ._fused import fuse

        if singular:
            lines, names, inputs, extra = self.singular_kernel.fused_parts()
            return fuse(self.matrices, self.n, lines, inputs, names, extra)
        if self._fast_kind() == "free":
            lines, names = _free_solver_lines(self.n, self.nonzero.tolist(), lambda k: f"e{k}")
            return fuse(self.matrices, self.n, lines, "", names, {"sqrt": math.sqrt})
        lines, names = self.kernel.fused_parts()
        return fuse(self.matrices, self.n, lines, ", ".join(f"w{j}" for j in range(self.n)), names,
                    {"bound": self.kernel.bound})

    def _free_solver(self) -> Callable:
        """The generated solver of :meth:`accelerations` for an unconstrained model, built on first use and kept."""
        cache = self._symbolic
        if "free_solver" not in cache:
            cache["free_solver"] = _free_solver(self.n, self.nonzero.tolist())
        return cache["free_solver"]

    @property
    def reaction_free(self) -> tuple[bool, ...]:
        """Per friction entry: True where ``A M^-1 ds/dq' = 0`` holds identically (sympy proves it).

        There ``CoulombFriction(normal=None)``'s ``N = |F^L|`` is the normal
        force at every state; elsewhere it is checked state by state.
        """
        facts = self.facts
        if facts.get("reaction_free") is None:
            model = self.model
            found = []
            for contact, rows in zip(model.all_friction, model.friction_normals):
                if rows is not None:
                    found.append(False)
                    continue
                slope = sm.Matrix([sm.sympify(contact.sliding_velocity)]).jacobian(model.qd).T
                try:
                    gain = model.A * model.M.LUsolve(slope)
                    found.append(all(_identically_zero(e, self) for e in gain))
                except (ValueError, ZeroDivisionError, NotImplementedError, TypeError):
                    found.append(False)
            facts["reaction_free"] = found
            if self.store is not None:  # kept on disk with the code (a proof costs a sympy simplification)
                self.store.keep_fact("reaction_free", found)
        return tuple(facts["reaction_free"])

    def friction_modes(self, t, q, qd, p) -> tuple[int, ...]:
        """Modes from the state: sliding where ``|s|`` is not zero, else stick if static friction can hold."""
        if not self.n_friction:
            return ()
        data = np.asarray(self.friction_data(t, q, qd, p), dtype=float).reshape(self.n_friction, -1)
        speed_scale = max(1.0, float(np.abs(qd).max()))
        modes = tuple(int(np.sign(s)) if abs(s) > STICK_SPEED * speed_scale else 0 for s in data[:, 0])
        modes = tuple(1 if self.frictionless(i, data) else mode for i, mode in enumerate(modes))
        modes = self.release(t, q, qd, p, modes, [i for i, mode in enumerate(modes) if mode == 0])
        return self.open_pulling(t, q, qd, p, modes)

    def frictionless(self, i: int, data) -> bool:
        """True for a Contact entry with ``mu = mu_s = 0`` (in ``data``, rows of :attr:`friction_data`): it never sticks."""
        return i >= self.n_friction - self.n_contacts and data[i, 2] == 0.0 and data[i, 3] == 0.0

    def open_pulling(self, t, q, qd, p, modes) -> tuple[int, ...]:
        """Modes with every closed unilateral contact whose normal force would pull (``N < 0``) opened.

        Used at the start of a run: a contact at rest on its surface with a
        negative normal force leaves it at once (the states it may then take
        are re-tested, one contact at a time, the most negative first).
        """
        first = self.n_friction - self.n_contacts
        for _ in range(self.n_contacts):
            _, _, normals = self.solve_contacts(t, q, qd, p, modes)
            pulling = [(N, j) for j, N in enumerate(normals)
                       if self.unilateral[j] and modes[first + j] != OPEN and N < 0]
            if not pulling:
                break
            new = list(modes)
            new[first + min(pulling)[1]] = OPEN
            stuck = [i for i, mode in enumerate(new) if mode == 0]
            modes = self.release(t, q, qd, p, tuple(new), stuck)
        return tuple(modes)

    def release(self, t, q, qd, p, modes, contacts, crossed=()) -> tuple[int, ...]:
        """Modes once the given contacts are at rest: each sticks if static friction can hold it, else slides.

        A released contact slides against the holding force it would need,
        which kinetic friction then opposes.

        ``crossed`` lists sticking contacts whose holding force has just
        reached the static limit ``(1 + HOLD_RTOL) mu_s N`` (an event located
        by an integrator). An event time is located only to rounding, often on
        the near side of the limit, where a contact would be held again and
        the event would fire again at once, without end. So these contacts are
        released when ``|ratio| > 1 - HOLD_RTOL``: past the limit by more than
        rounding, or at it while the holding force still grows.

        Raises
        ------
        ValueError
            When kinetic friction would stop a released contact at once: then
            Coulomb's law admits no motion at all (static friction cannot hold,
            and kinetic friction, with a larger coefficient, allows no slip).
        """
        new = list(modes)
        contacts = [int(i) for i in contacts]
        if self.n_contacts and contacts:
            return self._release_contacts(t, q, qd, p, modes, contacts, crossed)
        for i in contacts:
            new[i] = 0
        if not contacts:
            return tuple(new)
        _, ratios = self.solve_modes(t, q, qd, p, tuple(new))
        crossed = {int(i) for i in crossed}
        released = [i for i in contacts if abs(ratios[i]) > 1 + (-HOLD_RTOL if i in crossed else HOLD_RTOL)]
        for i in released:
            new[i] = -int(np.sign(ratios[i]))
        if released:
            motion, _ = self.solve_modes(t, q, qd, p, tuple(new))
            data = np.asarray(self.friction_data(t, q, qd, p), dtype=float).reshape(self.n_friction, -1)
            for i in released:
                rate = data[i, 4:] @ motion.qdd + data[i, 1]  # s' in the sliding mode
                if new[i] * rate < -1e-9 * max(1.0, float(np.abs(motion.qdd).max())):
                    raise ValueError(
                        f"friction contact {i} at t = {t:g}: static friction (mu_s = {data[i, 3]:g}) cannot hold "
                        f"it at rest, and kinetic friction (mu = {data[i, 2]:g}) would stop it at once, so "
                        "Coulomb's law admits no motion here. Choose the static coefficient `mu_s` at least "
                        "as large as the kinetic one `mu`"
                    )
        return tuple(new)

    def _release_contacts(self, t, q, qd, p, modes, contacts, crossed) -> tuple[int, ...]:
        """:meth:`release` for :class:`~udk_notebooks.contacts.Contact` entries: the first consistent modes.

        Contacts at rest may hold each other (a ladder with friction at both
        ends: one end at rest holds the other, and the forces of both are
        statically indeterminate), so they are not released one by one. The
        modes in ``{0, +1, -1}`` of the given contacts, and of rough contacts
        sliding at zero speed, are tried, most sticking first: sticking ones
        must be held (``|ratio| <= 1``), sliding ones must keep sliding their
        way (``sgn(s) s' >= 0``), closed unilateral ones must press
        (``N >= 0``). The first such set is taken; none is an error.
        """
        data = np.asarray(self.friction_data(t, q, qd, p), dtype=float).reshape(self.n_friction, -1)
        speed_scale = max(1.0, float(np.abs(qd).max(initial=0.0)))
        resting = sorted(set(contacts) | {i for i, mode in enumerate(modes) if mode in (1, -1)
                                          and abs(data[i, 0]) <= STICK_SPEED * speed_scale})
        resting = [i for i in resting if not self.frictionless(i, data) and modes[i] != OPEN]
        crossed = {int(i) for i in crossed}
        first = self.n_friction - self.n_contacts
        candidates = sorted(itertools.product((0, 1, -1), repeat=len(resting)), key=lambda c: -c.count(0))
        failures = []
        for candidate in candidates:
            new = list(modes)
            for i, mode in zip(resting, candidate):
                new[i] = mode
            try:
                motion, ratios, normals = self.solve_contacts(t, q, qd, p, tuple(new))
            except ValueError as exc:  # a paradox or an undetermined split: not this one
                failures.append(str(exc).split(".")[0])
                continue
            tol = 1e-9 * max(1.0, float(np.abs(motion.qdd).max()))
            ok = True
            for i, mode in zip(resting, candidate):
                if mode == 0:
                    ok &= bool(abs(ratios[i]) <= 1 + (-HOLD_RTOL if i in crossed else HOLD_RTOL))
                else:
                    ok &= bool(mode * (data[i, 4:] @ motion.qdd + data[i, 1]) >= -tol)
            pressing = [normals[j] for j in range(self.n_contacts)
                        if new[first + j] != OPEN and self.unilateral[j] and np.isfinite(normals[j])]
            ok &= all(N >= -tol for N in pressing)
            if ok:
                return tuple(new)
        names = ", ".join(repr(self.contact_names[i - first]) for i in resting)
        raise ValueError(
            f"contacts {names} at t = {t:g}: no stick/slip modes are consistent with Coulomb's law here (each "
            "was tried: sticking ones held within mu_s N, sliding ones sliding their way, N >= 0). "
            "Choose mu_s at least as large as mu" + (f"; the last refusal: {failures[-1]}" if failures else ""))

    def _kernel_motion(self, t, q, qd) -> Motion | None:
        """:meth:`motion` of float arrays with default parameters by the pattern kernel, else None.

        The checks of :meth:`check_state` and ``t``, fused with the lists the
        compiled function takes; anything they would refuse or convert goes the
        general way, which names the culprit.
        """
        n = self.n
        if not (type(q) is type(qd) is np.ndarray and q.shape == qd.shape == (n,) and q.dtype == qd.dtype == np.float64
                and isinstance(t, float) and math.isfinite(t)):
            return None
        q_list, qd_list = q.tolist(), qd.tolist()
        if n <= 16:
            size = math.hypot(*q_list, *qd_list)
            if not math.isfinite(size * size):
                return None
        elif not math.isfinite(q @ q + qd @ qd):
            return None
        p = self.defaults
        return self.kernel(self._entries(t, q_list, qd_list, p.tolist()), p)

    def motion(self, t: float, q, qd, *, stabilization=None, **params) -> Motion:
        """Evaluate the Udwadia-Kalaba equation at one state.

        Parameters
        ----------
        t : float
            Time.
        q, qd : array_like, shape (n,)
            Coordinates and velocities in ``coordinate_names`` order.
        stabilization : Baumgarte or GainMatrix, optional
            Adds its correction to ``b`` (see :mod:`udk_notebooks.stabilization`).
        **params
            Parameter values by name; the rest keep their defaults.

        Returns
        -------
        Motion
            Accelerations and the impressed, ideal and nonideal forces. Friction
            contacts at rest are held when static friction can hold them.
        """
        if self.kernel is not None and stabilization is None and not params and not self.n_friction:
            motion = self._kernel_motion(t, q, qd)
            if motion is not None:
                return motion
        t = finite_float(t, "`t`")
        if qd is None:  # check_state takes qd=None to mean "q alone"; a motion needs both
            raise ValueError(f"`qd` must be an array of {self.n} velocities, one per coordinate; got None")
        q, qd = self.check_state(q, qd)
        p = self.parameters(params) if params else self.defaults
        correction = None
        if stabilization is not None:
            from .stabilization import _check_stabilization

            _check_stabilization(stabilization)
            correction = stabilization.correction(*self.residuals(t, q, qd, p))
        modes = self.friction_modes(t, q, qd, p)
        return self.solve_modes(t, q, qd, p, modes, correction)[0]



def _free_solver(n: int, slots: list) -> Callable:
    """Straight-line Python source solving ``M q'' = Q`` from the compiled entries of an unconstrained model.

    The entries arrive as the list of nonzero values of ``M (n x n, row by
    row), Q``, at ``slots``; structural zeros are constants. ``L L^T = M``
    column by column, each pivot ``L_jj^2`` tested against ``RANK_RTOL M_jj``
    (the equilibrated test of :func:`~udk_notebooks.core.cholesky_or_none`),
    then two triangular solves. The function returns None where a test fails
    or the result is not finite: the general route decides there.
    """
    lines, names = _free_solver_lines(n, slots, lambda k: f"e[{k}]")
    lines = ["def solve(e):"] + lines + [
        f"    if not isfinite({' + '.join(names)}):",
        "        return None",
        f"    return [{', '.join(names)}]",
    ]
    namespace = {"sqrt": math.sqrt, "isfinite": math.isfinite}
    exec(compile("\n".join(lines), "<udk_notebooks.compiled free solver>", "exec"), namespace)
    return namespace["solve"]


def _free_solver_lines(n: int, slots: list, entry: Callable) -> tuple[list[str], list[str]]:
    """The statements of :func:`_free_solver` (four-space indented) up to ``q''``, and the names of ``q''``.

    ``entry(k)`` is the source of the k-th compiled entry; ``return None`` declines.
    """
    where = {slot: k for k, slot in enumerate(slots)}

    def value(slot: int) -> str:
        return entry(where[slot]) if slot in where else "0.0"

    lines = []
    for j in range(n):
        lines.append(f"    d{j} = {value(j * n + j)}")
        pivot = " - ".join([f"d{j}"] + [f"L{j}_{k} * L{j}_{k}" for k in range(j)])
        lines.append(f"    s{j} = {pivot}")
        lines.append(f"    if not (d{j} > 0.0 and s{j} > {RANK_RTOL!r} * d{j}):")
        lines.append("        return None")
        lines.append(f"    L{j}_{j} = sqrt(s{j})")
        for i in range(j + 1, n):
            terms = " - ".join([value(i * n + j)] + [f"L{i}_{k} * L{j}_{k}" for k in range(j)])
            lines.append(f"    L{i}_{j} = ({terms}) / L{j}_{j}")
    for i in range(n):  # L z = Q
        terms = " - ".join([value(n * n + i)] + [f"L{i}_{k} * z{k}" for k in range(i)])
        lines.append(f"    z{i} = ({terms}) / L{i}_{i}")
    for i in reversed(range(n)):  # L^T x = z
        terms = " - ".join([f"z{i}"] + [f"L{k}_{i} * x{k}" for k in range(i + 1, n)])
        lines.append(f"    x{i} = ({terms}) / L{i}_{i}")
    return lines, [f"x{i}" for i in range(n)]
