"""A catalogue of mechanical systems from the source papers, one module per system.

Each module exposes ``PARAMETERS`` (named, documented, with slider ranges),
``model(**overrides) -> Model``, ``initial_state(...)`` consistent with the
constraints and, where one exists, the exact solution. Tests, lessons and
explorers all import from here.
"""

from . import carriage_pendulum
from . import chain
from . import double_pendulum
from . import friction_cart_pendulum
from . import growing_circle
from . import incline_friction
from . import inclined_line
from . import kepler
from . import ladder
from . import painleve_rod
from . import rolling_disk
from . import singular_mass
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
