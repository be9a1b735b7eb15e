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
:func:`explore` (``udk.explore(model, q0, qd0)``, :mod:`udk_notebooks.widgets.explore`).
"""

from .base import Explorer, ParameterSpec, has_widget_canvas, parameter_table
from .views import fit_view, nice_step, slider_step
from .inclined_line import InclinedLineExplorer, InclinedLineResult
from .incline_friction import InclineFrictionExplorer, InclineFrictionResult
from .stabilization import StabilizationExplorer, StabilizationResult
from .system import Curve, Panel, Shade, SystemExplorer, SystemRun
from .rolling_disk import RollingDiskExplorer
from .double_pendulum import DoublePendulumExplorer
from .carriage_pendulum import CarriagePendulumExplorer
from .friction_cart_pendulum import FrictionCartPendulumExplorer
from .kepler import KeplerExplorer
from .growing_circle import GrowingCircleExplorer
from .singular_mass import SingularMassExplorer
from .chain import ChainExplorer
from .ladder import LadderExplorer
from .explore import ModelExplorer, explore

EXPLORERS: dict[str, type[Explorer]] = {
    "inclined_line": InclinedLineExplorer,
    "incline_friction": InclineFrictionExplorer,
    "stabilization": StabilizationExplorer,
    "rolling_disk": RollingDiskExplorer,
    "double_pendulum": DoublePendulumExplorer,
    "carriage_pendulum": CarriagePendulumExplorer,
    "friction_cart_pendulum": FrictionCartPendulumExplorer,
    "kepler": KeplerExplorer,
    "growing_circle": GrowingCircleExplorer,
    "singular_mass": SingularMassExplorer,
    "chain": ChainExplorer,
    "ladder": LadderExplorer,
}
"""Every explorer by short name (the Voila app pages of :mod:`udk_notebooks.app` and the tests use it)."""

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
