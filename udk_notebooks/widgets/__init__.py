"""Interactive explorers for Jupyter: sliders wired to figures updated in place.

Each explorer turns one catalogue example (:mod:`udk_notebooks.examples`) into
a model function, a row of controls and a figure whose artists are created
once (see :mod:`udk_notebooks.widgets.base`). Display one in a notebook cell::

    %matplotlib widget          # ipympl, when installed; inline works too
    from udk_notebooks.widgets import InclinedLineExplorer
    InclinedLineExplorer()

The explorers: :class:`InclinedLineExplorer` (the 2005 paper's example, the
three force terms and their virtual work), :class:`InclineFrictionExplorer`
(Coulomb friction, stick and slip, the power theorem) and
:class:`StabilizationExplorer` (constraint drift, Baumgarte gains and the
stability of Euler and RK4).
"""

from .base import Explorer, ParameterSpec, has_widget_canvas, parameter_table
from .views import fit_view, nice_step, slider_step
from .inclined_line import InclinedLineExplorer, InclinedLineResult
from .incline_friction import InclineFrictionExplorer, InclineFrictionResult
from .stabilization import StabilizationExplorer, StabilizationResult

__all__ = [
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
]
