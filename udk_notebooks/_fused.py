"""One generated right-hand side ``(t, y) -> (q', q'')``: a model's compiled entries and its solver fused.

An integrator's right-hand side on the plain route (no friction modes) calls
two generated functions per evaluation: the lambdified entries of ``M, Q, A,
b, C`` (:attr:`~udk_notebooks.compiled.CompiledModel.matrices`) and a solver
written out in Python floats (the float Cholesky of an unconstrained model, or
the scalar kernel of :mod:`udk_notebooks.kernels` for a constant diagonal
``M``). For the double pendulum most of an evaluation is this glue: the list of
entries built and unpacked again, the calls, the state split into lists. This
module joins the two sources into one function and moves every statement that
depends on the parameters alone (and the mass factors of the kernel) out of
it, into a set-up run once per parameter vector: a Cartesian model's
coordinate coefficients of ``A``, ``D^{-1} Q`` of gravity, the parts of ``M``
without angles.

The joined code is the two sources statement by statement, with their
variables renamed apart: every entry and every solver quantity is computed by
the same operations in the same order as on the unfused route, so both give
bitwise the same ``q''`` (``tests/test_fused_rate.py``). Where the solver
declines (a pivot or conditioning test, a result that is not finite) or the
entries cannot be evaluated, the function hands the state to ``fallback``, the
general route, which decides and explains.
"""

from __future__ import annotations

import ast
import inspect
import math
import textwrap
from typing import Callable

import numpy as np

__all__ = ["fuse"]

_RENAME = "v_"
"""Prefix of the lambdified code's own names (its state, parameters and subexpressions) in the joined code."""


class _Decline(Exception):
    """The generated solver cannot vouch for this state: the fallback decides."""


def _lambdified_parts(func: Callable, n: int):
    """The statements of a lambdified ``(t, q, qd, p) -> [entries]`` function, its names prefixed.

    Returns ``(state, params, body, entries)``: the names of ``q`` and ``qd``
    (2n), of the parameters, the subexpression statements, and the entry
    expressions (ast nodes); or None when the source is not of that shape.
    """
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
    except (OSError, TypeError, SyntaxError):
        return None
    function = tree.body[0] if tree.body else None
    if not isinstance(function, ast.FunctionDef) or len(function.args.args) != 4:
        return None
    t_name, q_arg, qd_arg, p_arg = (a.arg for a in function.args.args)
    assigned = {target.id for stmt in function.body if isinstance(stmt, ast.Assign)
                for node in stmt.targets for target in ast.walk(node) if isinstance(target, ast.Name)}

    class Rename(ast.NodeTransformer):
        def visit_Name(self, node):
            if node.id in assigned:
                return ast.copy_location(ast.Name(_RENAME + node.id, node.ctx), node)
            return node

    unpacked = {q_arg: None, qd_arg: None, p_arg: []}
    body = []
    for stmt in function.body[:-1]:
        stmt = Rename().visit(stmt)
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Name) and stmt.value.id in unpacked:
            target = stmt.targets[0]
            if len(stmt.targets) != 1 or not isinstance(target, (ast.List, ast.Tuple)):
                return None
            unpacked[stmt.value.id] = [element.id for element in target.elts]
        elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            body.append(stmt)
        else:
            return None
    last = function.body[-1] if function.body else None
    if not (isinstance(last, ast.Return) and isinstance(last.value, ast.List)):
        return None
    entries = Rename().visit(last).value.elts
    state = (unpacked[q_arg] or []) + (unpacked[qd_arg] or [])
    if len(state) != 2 * n:
        return None
    # The time is an argument of the joined function too; a name `t` assigned in the body would shadow it.
    if t_name != "t" or "t" in assigned:
        return None
    return state, unpacked[p_arg], body, entries


def _loads(node) -> set[str]:
    return {sub.id for sub in ast.walk(node) if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load)}


def _stores(node) -> set[str]:
    return {sub.id for sub in ast.walk(node) if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store)}


def _split(statements: list, constant: set) -> tuple[list, list]:
    """Statements that read constants only (moved to the set-up), and the others, each in their order.

    A name is constant when it is in ``constant`` or assigned once, by a
    moved statement; any name assigned by a statement that stays (or assigned
    twice) is a variable, and so is everything computed from it.
    """
    counts: dict = {}
    for stmt in statements:
        for name in _stores(stmt):
            counts[name] = counts.get(name, 0) + 1
    known = set(constant)
    setup, per_call = [], []
    for stmt in statements:
        stores = _stores(stmt)
        movable = (isinstance(stmt, ast.Assign) and all(counts[name] == 1 for name in stores)
                   and _loads(stmt.value) <= known)
        if movable:
            setup.append(stmt)
            known |= stores
        else:
            per_call.append(stmt)
    return setup, per_call


def fuse(entries_function: Callable, n: int, solver_lines: list[str], solver_inputs: str,
         qdd_names: list[str], extra: dict) -> Callable | None:
    """``make(p, w, fallback) -> rate``: the joined right-hand side, set up for one parameter vector.

    Parameters
    ----------
    entries_function : callable
        The lambdified ``(t, q, qd, p) -> [entries]`` on Python floats (its source is read).
    n : int
        Number of coordinates.
    solver_lines : list of str
        Straight-line Python statements (four-space indented) reading the entries as ``e0, e1, ...``,
        the mass factors ``w0, w1, ...`` (if any), and the names in ``extra``; ``return None`` declines.
    solver_inputs : str
        Comma-separated names the set-up unpacks from ``w`` (empty without mass factors).
    qdd_names : list of str
        Expressions of the ``n`` accelerations at the end of ``solver_lines``.
    extra : dict
        Further global names of the solver lines (``sqrt``, ``bound``, ...).

    Returns
    -------
    callable or None
        ``make(p_list, w_list, fallback)`` returning ``rate(t, y)``: an ndarray of shape (2n,),
        or ``fallback(t, y)`` where the solver declines or the entries raise. None when the
        lambdified source is not of the expected shape (the caller keeps the unfused route).
    """
    parts = _lambdified_parts(entries_function, n)
    if parts is None:
        return None
    state, params, body, entries = parts
    solver = ast.parse("def _solver():\n" + "\n".join(solver_lines)).body[0].body
    entry_statements = [ast.Assign([ast.Name(f"e{k}", ast.Store())], value) for k, value in enumerate(entries)]
    # The solver's declines and its final finiteness test raise _Decline, caught with the entries' errors.
    for node in ast.walk(ast.Module(solver, [])):
        for field in ("body", "orelse"):
            block = getattr(node, field, None)
            if isinstance(block, list):
                for i, stmt in enumerate(block):
                    if isinstance(stmt, ast.Return) and (stmt.value is None or (
                            isinstance(stmt.value, ast.Constant) and stmt.value.value is None)):
                        block[i] = ast.Raise(ast.Name("_Decline", ast.Load()), None)
    # The accelerations are read by name at the end: a q'' that is a bare copy (a coordinate no row of A
    # touches: q''_j = a_j) keeps its statement.
    statements = _propagate_copies(body + entry_statements + solver, keep=set(qdd_names))
    inputs = [name.strip() for name in solver_inputs.split(",") if name.strip()]
    constant = set(params) | set(inputs) | _globals(statements, state, params, inputs)
    setup, per_call = _split(statements, constant)
    constant |= {name for stmt in setup for name in _stores(stmt)}
    ones = {stmt.targets[0].id for stmt in setup if isinstance(stmt.value, ast.Constant)
            and type(stmt.value.value) is int and stmt.value.value == 1}
    hoist = _HoistConstantParts(constant, ones)
    per_call = [hoist.visit(stmt) for stmt in per_call]
    setup += hoist.hoisted
    ast.fix_missing_locations(ast.Module(setup + per_call, []))
    result = ", ".join(state[n:] + qdd_names)
    lines = ["def make(_params, _factors, fallback):"]
    if params:
        lines.append(f"    {', '.join(params)}, = _params")
    if inputs:
        lines.append(f"    {', '.join(inputs)}, = _factors")
    lines += ["    " + line for stmt in setup for line in ast.unparse(stmt).splitlines()]
    lines += [
        "    def rate(t, y):",
        "        try:",
        f"            {', '.join(state)}, = y.tolist()",
    ]
    lines += ["            " + line for stmt in per_call for line in ast.unparse(stmt).splitlines()]
    lines += [
        f"            if not isfinite({' + '.join(qdd_names)}):",
        "                raise _Decline",
        f"            return array([{result}])",
        "        except (_Decline, ValueError, ArithmeticError):",
        "            return fallback(t, y)",
        "    return rate",
    ]
    source = "\n".join(lines) + "\n"
    namespace = dict(entries_function.__globals__)
    namespace.update(extra)
    namespace.update(_Decline=_Decline, isfinite=math.isfinite, array=np.array)
    exec(compile(source, "<udk_notebooks fused rate>", "exec"), namespace)  # noqa: S102
    make = namespace["make"]
    make.source = source
    return make


def _propagate_copies(statements: list, keep: set = frozenset()) -> list:
    """The statements without copies ``a = b`` (of a name assigned once): later reads of ``a`` read ``b``.

    The generated sources name many values twice (an entry that is a common
    subexpression, a pivot that is a diagonal entry); a copy costs a statement
    per call and computes nothing. Names in ``keep`` (read by name afterwards) keep their statements.
    """
    counts: dict = {}
    for stmt in statements:
        for name in _stores(stmt):
            counts[name] = counts.get(name, 0) + 1
    alias: dict = {}

    class Rename(ast.NodeTransformer):
        def visit_Name(self, node):
            if isinstance(node.ctx, ast.Load) and node.id in alias:
                return ast.copy_location(ast.Name(alias[node.id], ast.Load()), node)
            return node

    kept = []
    for stmt in statements:
        stmt = Rename().visit(stmt)
        if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
                and isinstance(stmt.value, ast.Name) and counts[stmt.targets[0].id] == 1
                and stmt.targets[0].id not in keep
                and counts.get(stmt.value.id, 0) <= 1):
            alias[stmt.targets[0].id] = stmt.value.id
            continue
        kept.append(stmt)
    return kept


class _HoistConstantParts(ast.NodeTransformer):
    """Moves every part of an expression that reads constants only into the set-up (``hoisted``).

    Python evaluates ``a * b * x`` as ``(a * b) * x``: the part ``a * b`` of
    two parameters is the same number whether computed per call or once, so
    the result does not change by a bit. A product with the integer constant
    1 (a Cartesian coordinate's coefficient in ``A``) is its other factor,
    exactly, and is replaced by it. Short-circuit operands (``and``, ``or``)
    are left in place.
    """

    def __init__(self, constant: set, ones: set):
        self.constant, self.ones = constant, ones
        self.hoisted: list = []

    def _hoist(self, node):
        if isinstance(node, (ast.BinOp, ast.UnaryOp, ast.Call)) and _loads(node) <= self.constant:
            name = f"k{len(self.hoisted)}"
            self.hoisted.append(ast.Assign([ast.Name(name, ast.Store())], node))
            self.constant.add(name)
            return ast.copy_location(ast.Name(name, ast.Load()), node)
        return None

    def visit_BinOp(self, node):
        hoisted = self._hoist(node)
        if hoisted is not None:
            return hoisted
        node = self.generic_visit(node)
        if isinstance(node.op, ast.Mult):
            for one, other in ((node.left, node.right), (node.right, node.left)):
                if isinstance(one, ast.Name) and one.id in self.ones:
                    return other
        return node

    def visit_UnaryOp(self, node):
        return self._hoist(node) or self.generic_visit(node)

    def visit_Call(self, node):
        return self._hoist(node) or self.generic_visit(node)

    def visit_BoolOp(self, node):
        return node


def _globals(statements: list, state: list, params: list, inputs: list) -> set[str]:
    """Names the statements read but never assign (functions, constants of the namespace): constant."""
    assigned = set(state) | set(params) | set(inputs)
    read = set()
    for stmt in statements:
        assigned |= _stores(stmt)
        read |= _loads(stmt)
    return read - assigned - {"t"}
