"""Named, documented parameters shared by the example modules.

A :class:`Parameter` holds its symbol's *name* and assumptions, not the sympy
symbol itself: importing an example (and so an explorer) then costs no sympy
import (0.15 to 0.3 s of a new kernel, issue 23). The symbol is built when a
model asks for it (:attr:`Parameter.symbol`); sympy symbols compare by name
and assumptions, so it equals the one a module used to create at import.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Mapping

from .._checks import finite_float

if TYPE_CHECKING:
    import sympy

__all__ = ["Parameter", "defaults", "symbols", "values"]

@dataclass(frozen=True)
class Parameter:
    """A physical parameter of an example: its symbol's name, default, meaning, slider range and assumptions.

    Parameters
    ----------
    name : str
        The sympy symbol's name; a module's ``PARAMETERS`` table uses it as the key.
    default : float
    description : str
    bounds : tuple of float
        The slider range ``(low, high)``.
    assumptions : mapping of str to bool, optional
        Keyword assumptions of the symbol (``sympy.Symbol(name, **assumptions)``);
        ``{"real": True}`` unless a model needs others (``positive``, ``nonnegative``).
    """

    name: str
    default: float
    description: str
    bounds: tuple[float, float]
    # not hashed: a mapping has no hash, and the name already tells two parameters of one table apart
    assumptions: Mapping[str, bool] = field(default_factory=lambda: {"real": True}, hash=False)

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name.isidentifier():
            raise ValueError(f"`name` must be a symbol name such as 'm1'; got {self.name!r}")
        if not isinstance(self.assumptions, Mapping):
            raise TypeError(f"`assumptions` must be a mapping such as {{'positive': True}}; got {self.assumptions!r}")
        object.__setattr__(self, "assumptions", MappingProxyType(dict(self.assumptions)))  # frozen like the rest

    @property
    def symbol(self) -> sympy.Symbol:
        """``sympy.Symbol(name, **assumptions)``; imports sympy on first use."""
        import sympy

        return sympy.Symbol(self.name, **self.assumptions)


def _checked(table: Mapping[str, Parameter], overrides: Mapping[str, float]) -> dict[str, float]:
    """``{name: value}`` with defaults overridden by name, each a finite float; unknown names refused."""
    unknown = set(overrides) - set(table)
    if unknown:
        raise ValueError(
            f"unknown parameter(s) {', '.join(sorted(unknown))}; this example has {', '.join(table)}"
        )
    for key, row in table.items():
        if key != row.name:  # a model's parameters are looked up by the symbol's name: they must agree
            raise ValueError(f"parameter table key {key!r} names the symbol {row.name!r}; make them equal")
    return {
        name: finite_float(overrides.get(name, row.default), f"parameter `{name}` ({row.description})")
        for name, row in table.items()
    }


def values(table: Mapping[str, Parameter], overrides: Mapping[str, float]) -> dict[str, float]:
    """``{name: value}`` from a parameter table, with defaults overridden by name; never imports sympy.

    Parameters
    ----------
    table : mapping of str to Parameter
        A module's ``PARAMETERS``.
    overrides : mapping of str to float
        New values by name; every name must be in ``table``.

    Returns
    -------
    dict of str to float
        In the table's order.
    """
    return _checked(table, overrides)


def symbols(table: Mapping[str, Parameter]) -> tuple[sympy.Symbol, ...]:
    """The table's symbols in its order (for a model builder to unpack); imports sympy."""
    return tuple(row.symbol for row in table.values())


def defaults(table: Mapping[str, Parameter], overrides: Mapping[str, float]) -> dict:
    """``{symbol: value}`` from a parameter table, with defaults overridden by name (for building a model).

    The same checks and order as :func:`values`; the keys are :attr:`Parameter.symbol`.
    """
    checked = _checked(table, overrides)
    return {table[name].symbol: value for name, value in checked.items()}
