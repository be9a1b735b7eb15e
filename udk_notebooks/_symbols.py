"""Functions of time for the catalogue's models, without importing :mod:`sympy.physics`.

``sympy.physics.mechanics.dynamicsymbols("x y")`` returns ``x(t), y(t)``: undefined
functions applied to the symbol ``t``. Importing any part of :mod:`sympy.physics`
runs its package ``__init__``, which loads :mod:`sympy.physics.units` (about a
tenth of a second, a twelfth of an explorer's cold start, issue 23), although a
model never needs units. :func:`time_functions` builds the very same objects
from core sympy, so a model made with either is the same model (equal
coordinates, equal hash): users keep writing ``dynamicsymbols``, and the package
builds its own models without the detour.
"""

from __future__ import annotations

import sympy as sm

__all__ = ["TIME", "time_functions"]

#: The time symbol of every model: equal to ``sympy.physics.vector.dynamicsymbols._t`` (a plain ``Symbol("t")``).
TIME = sm.Symbol("t")


def time_functions(names: str) -> sm.Expr | list[sm.Expr]:
    """Undefined functions of :data:`TIME`, as ``dynamicsymbols(names)`` makes them (level 0, no assumptions).

    Parameters
    ----------
    names : str
        Names in :func:`sympy.symbols` syntax: ``"x y"``, ``"x1:4"``, ``"x_c"``.

    Returns
    -------
    sympy.Expr or list of sympy.Expr
        ``x(t)`` for one name, a list for several (a range such as ``"x1:2"`` gives a list of one).

    Raises
    ------
    ValueError
        If ``names`` is not a non-empty string.
    """
    if not isinstance(names, str) or not names.strip():
        raise ValueError(f"`names` must be a non-empty string of names such as 'x y'; got {names!r}")
    functions = sm.symbols(names, cls=sm.Function)
    if isinstance(functions, sm.FunctionClass):
        return functions(TIME)
    return [f(TIME) for f in functions]
