"""Named, documented parameters shared by the example modules."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import sympy as sm

from .._checks import finite_float

__all__ = ["Parameter", "defaults"]


@dataclass(frozen=True)
class Parameter:
    """A physical parameter of an example: its symbol, default, meaning and slider range."""

    symbol: sm.Symbol
    default: float
    description: str
    bounds: tuple[float, float]


def defaults(table: Mapping[str, Parameter], overrides: Mapping[str, float]) -> dict:
    """``{symbol: value}`` from a parameter table, with defaults overridden by name."""
    unknown = set(overrides) - set(table)
    if unknown:
        raise ValueError(
            f"unknown parameter(s) {', '.join(sorted(unknown))}; this example has {', '.join(table)}"
        )
    return {
        row.symbol: finite_float(overrides.get(name, row.default), f"parameter `{name}` ({row.description})")
        for name, row in table.items()
    }
