"""udk-notebooks: constrained mechanics through the Udwadia-Kalaba equation.

The explicit equation of motion ``M q'' = Q + F^L + F^C`` (Udwadia, Kalaba &
Fan 2005, Eq. 8) with its three force terms kept apart, a symbolic layer that
derives ``M, Q, A, b, C`` from energies and constraints, constraint
stabilization, simulation, and a catalogue of worked examples.
"""

import importlib
import importlib.util
from typing import Any

# First of the package's modules: the digest of its sources as this process loads them, the key of the
# code kept on disk (an edit after this point turns the disk cache off for this process, never stale code on).
from . import _sources  # noqa: F401

# Each public name and the submodule that defines it. The submodules are imported on first use
# (PEP 562 module ``__getattr__``), so ``import udk_notebooks`` and ``import udk_notebooks.widgets``
# do not pay for sympy, scipy and matplotlib until a name that needs them is used.
_EXPORTS: dict[str, str] = {
    **dict.fromkeys(("CONSISTENCY_RTOL", "RANK_RTOL", "Motion", "lagrange_multipliers", "udwadia_kalaba",
                     "virtual_displacements"), "core"),
    "CompiledModel": "compiled",
    **dict.fromkeys(("Mechanism", "MechanismAnimation", "animate", "draw_mechanism"), "drawing"),
    **dict.fromkeys(("ConstraintViolationError", "InconsistentConstraintsError", "NonUniqueAccelerationError",
                     "PainleveParadoxError", "SimulationError", "SingularConfigurationError",
                     "UnstableGainError"), "errors"),
    **dict.fromkeys(("Contact", "Curve", "Plane", "Surface"), "contacts"),
    **dict.fromkeys(("CoulombFriction", "Model"), "model"),
    **dict.fromkeys(("ContactEvent", "Trajectory", "project_initial_state", "simulate"), "simulation"),
    **dict.fromkeys(("SINGULAR_RTOL", "SingularConfiguration", "SingularConfigurationWarning"), "singular"),
    **dict.fromkeys(("Baumgarte", "GainMatrix", "StabilityReport", "amplification_matrix", "check_gain", "stability",
                     "stable_gain_interval"), "stabilization"),
    "explore": "widgets.model_explorer",
}


def __getattr__(name: str) -> Any:
    """Import a public name's submodule on first use (PEP 562); submodules by name too (``udk.simulation``)."""
    if name in _EXPORTS:
        value = getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
        globals()[name] = value  # later look-ups skip this function
        return value
    if not name.startswith("__") and importlib.util.find_spec(f"{__name__}.{name}") is not None:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    """The public names with the module's own attributes, for ``dir()`` and tab completion."""
    return sorted({*globals(), *__all__})


__version__ = "0.1.0"

# In a Jupyter kernel, widget messages are handled on the main thread, never beside a running cell
# (kernel subshells ran them on threads of their own: Matplotlib races, see _comm_thread). Cheap: no
# import beyond asyncio and threading, nothing done outside a kernel.
from ._comm_thread import serve_comms_on_main_thread as _serve_comms_on_main_thread  # noqa: E402

_serve_comms_on_main_thread()

__all__ = [
    # solver core
    "Motion",
    "udwadia_kalaba",
    "lagrange_multipliers",
    "virtual_displacements",
    "RANK_RTOL",
    "CONSISTENCY_RTOL",
    # symbolic models
    "Model",
    "CoulombFriction",
    "Contact",
    "Plane",
    "Curve",
    "Surface",
    "CompiledModel",
    # stabilization
    "Baumgarte",
    "GainMatrix",
    "StabilityReport",
    "amplification_matrix",
    "stability",
    "stable_gain_interval",
    "check_gain",
    # simulation
    "Trajectory",
    "ContactEvent",
    "simulate",
    "project_initial_state",
    "SINGULAR_RTOL",
    "SingularConfiguration",
    "SingularConfigurationWarning",
    # drawing
    "Mechanism",
    "MechanismAnimation",
    "animate",
    "draw_mechanism",
    "explore",
    # errors
    "ConstraintViolationError",
    "InconsistentConstraintsError",
    "NonUniqueAccelerationError",
    "PainleveParadoxError",
    "SimulationError",
    "SingularConfigurationError",
    "UnstableGainError",
]
