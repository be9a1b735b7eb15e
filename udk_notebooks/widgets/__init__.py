"""Interactive explorers for Jupyter: sliders wired to figures updated in place.

Each explorer turns one catalogue example (:mod:`udk_notebooks.examples`) into
a model function, a row of controls and a figure whose artists are created
once (see :mod:`udk_notebooks.widgets.base`). Display one in a notebook cell::

    %matplotlib widget          # ipympl, when installed; inline works too
    from udk_notebooks.widgets import InclinedLineExplorer
    InclinedLineExplorer()

One explorer per catalogue system, all listed in :data:`EXPLORERS`:

==========================  ========================================  ==========================================
name                        class                                     what it shows
==========================  ========================================  ==========================================
``inclined_line``           :class:`InclinedLineExplorer`             the 2005 paper's example: three force terms
``incline_friction``        :class:`InclineFrictionExplorer`          Coulomb friction, stick and slip, power
``stabilization``           :class:`StabilizationExplorer`            drift, Baumgarte gains, Euler and RK4
``rolling_disk``            :class:`RollingDiskExplorer`              Beshaw's disk: gain K against drift
``double_pendulum``         :class:`DoublePendulumExplorer`           joint angles vs Cartesian, pin reactions
``carriage_pendulum``       :class:`CarriagePendulumExplorer`         driven sprung carriage: phase, power
``friction_cart_pendulum``  :class:`FrictionCartPendulumExplorer`     stick and slip under a swinging load N
``kepler``                  :class:`KeplerExplorer`                   orbit in, inverse-square force out
``growing_circle``          :class:`GrowingCircleExplorer`            a moving constraint does work
``singular_mass``           :class:`SingularMassExplorer`             massless sliders, rank of M, M + A^+ A
``chain``                   :class:`ChainExplorer`                    N links: energy, drift, cost per step
``ladder``                  :class:`LadderExplorer`                   N_wall falls to zero, the top leaves the wall
==========================  ========================================  ==========================================

The newer ones share :class:`~udk_notebooks.widgets.system.SystemExplorer`: the
example's own mechanism drawing (:mod:`udk_notebooks.drawing`) and panels of curves.

Any other model, a student's own included, gets the same explorer without a class:
:func:`explore` (``udk.explore(model, q0, qd0)``, :mod:`udk_notebooks.widgets.model_explorer`).
"""

import importlib
from collections.abc import Iterator, Mapping
from typing import Any

# Each public name and the module that defines it, imported on first use (PEP 562 module
# ``__getattr__``): ``import udk_notebooks.widgets`` costs next to nothing, and the first explorer
# pays only for what it needs.
_EXPORTS: dict[str, str] = {
    **dict.fromkeys(("Explorer", "ParameterSpec", "has_widget_canvas", "parameter_table"), "base"),
    **dict.fromkeys(("fit_view", "nice_step", "slider_step"), "views"),
    **dict.fromkeys(("InclinedLineExplorer", "InclinedLineResult"), "inclined_line"),
    **dict.fromkeys(("InclineFrictionExplorer", "InclineFrictionResult"), "incline_friction"),
    **dict.fromkeys(("StabilizationExplorer", "StabilizationResult"), "stabilization"),
    **dict.fromkeys(("Curve", "Panel", "Shade", "SystemExplorer", "SystemRun"), "system"),
    "RollingDiskExplorer": "rolling_disk",
    "DoublePendulumExplorer": "double_pendulum",
    "CarriagePendulumExplorer": "carriage_pendulum",
    "FrictionCartPendulumExplorer": "friction_cart_pendulum",
    "KeplerExplorer": "kepler",
    "GrowingCircleExplorer": "growing_circle",
    "SingularMassExplorer": "singular_mass",
    "ChainExplorer": "chain",
    "LadderExplorer": "ladder",
    **dict.fromkeys(("ModelExplorer", "explore"), "model_explorer"),
}

_CLASS_NAMES: dict[str, str] = {
    "inclined_line": "InclinedLineExplorer",
    "incline_friction": "InclineFrictionExplorer",
    "stabilization": "StabilizationExplorer",
    "rolling_disk": "RollingDiskExplorer",
    "double_pendulum": "DoublePendulumExplorer",
    "carriage_pendulum": "CarriagePendulumExplorer",
    "friction_cart_pendulum": "FrictionCartPendulumExplorer",
    "kepler": "KeplerExplorer",
    "growing_circle": "GrowingCircleExplorer",
    "singular_mass": "SingularMassExplorer",
    "chain": "ChainExplorer",
    "ladder": "LadderExplorer",
}


class _Registry(Mapping):
    """A read-only mapping of explorer classes by short name that imports each class when it is first read.

    Keys, ``len`` and ``in`` need no import; reading a value (``EXPLORERS[name]``,
    ``.values()``, ``.items()``, ``dict(EXPLORERS)``) imports that explorer's module.
    """

    def __init__(self, names: dict[str, str]):
        self._names = dict(names)

    def __getitem__(self, name: str) -> type:
        return __getattr__(self._names[name])

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def __repr__(self) -> str:
        return f"<explorers {', '.join(self._names)}>"


EXPLORERS: Mapping[str, type] = _Registry(_CLASS_NAMES)
"""Every explorer by short name (the Voila app pages of :mod:`udk_notebooks.app` and the tests use it)."""


def __getattr__(name: str) -> Any:
    """Import a public name's module on first use (PEP 562)."""
    if name in _EXPORTS:
        value = getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
        globals()[name] = value  # later look-ups skip this function
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    """The public names with the module's own attributes, for ``dir()`` and tab completion."""
    return sorted({*globals(), *__all__})


__all__ = [
    "EXPLORERS",
    # base
    "Explorer",
    "ParameterSpec",
    "has_widget_canvas",
    "parameter_table",
    # views
    "fit_view",
    "nice_step",
    "slider_step",
    # explorers
    "InclinedLineExplorer",
    "InclinedLineResult",
    "InclineFrictionExplorer",
    "InclineFrictionResult",
    "StabilizationExplorer",
    "StabilizationResult",
    "SystemExplorer",
    "SystemRun",
    "Panel",
    "Curve",
    "Shade",
    "RollingDiskExplorer",
    "DoublePendulumExplorer",
    "CarriagePendulumExplorer",
    "FrictionCartPendulumExplorer",
    "KeplerExplorer",
    "GrowingCircleExplorer",
    "SingularMassExplorer",
    "ChainExplorer",
    "LadderExplorer",
    # any model
    "ModelExplorer",
    "explore",
]
