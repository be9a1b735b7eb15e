"""A catalogue of mechanical systems from the source papers, one module per system.

Each module exposes ``PARAMETERS`` (named, documented, with slider ranges),
``model(**overrides) -> Model``, ``initial_state(...)`` consistent with the
constraints and, where one exists, the exact solution. Tests, lessons and
explorers all import from here.
"""

from . import inclined_line
from ._parameters import Parameter

__all__ = ["Parameter", "inclined_line"]
