"""A catalogue of mechanical systems from the source papers, one module per system.

Each module exposes ``PARAMETERS`` (named, documented, with slider ranges),
``model(**overrides) -> Model``, ``initial_state(...)`` consistent with the
constraints and, where one exists, the exact solution. Tests, lessons and
explorers all import from here.

Importing an example, and calling its numeric helpers (``initial_state``,
``mechanism``, exact solutions...), costs no sympy import (issue 23, cold
start): the symbols are built, and sympy imported, by the model builders.
"""

import importlib
from typing import Any

from ._parameters import Parameter

__all__ = [
    "Parameter",
    "carriage_pendulum",
    "chain",
    "double_pendulum",
    "friction_cart_pendulum",
    "growing_circle",
    "incline_friction",
    "inclined_line",
    "kepler",
    "ladder",
    "painleve_rod",
    "rolling_disk",
    "singular_mass",
]


def __getattr__(name: str) -> Any:
    """Import an example module on first use (PEP 562): an explorer pays only for its own system."""
    if name in __all__ and name != "Parameter":
        return importlib.import_module(f".{name}", __name__)  # binds the module on this package, too
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    """The example modules with the package's own attributes, for ``dir()`` and tab completion."""
    return sorted({*globals(), *__all__})
