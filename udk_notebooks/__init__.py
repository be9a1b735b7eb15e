"""udk-notebooks: constrained mechanics through the Udwadia-Kalaba equation.

The explicit equation of motion ``M q'' = Q + F^L + F^C`` (Udwadia, Kalaba &
Fan 2005, Eq. 8) with its three force terms kept apart, a symbolic layer that
derives ``M, Q, A, b, C`` from energies and constraints, constraint
stabilization, simulation, and a catalogue of worked examples.
"""

from .compiled import CompiledModel
from .core import (
    CONSISTENCY_RTOL,
    RANK_RTOL,
    Motion,
    lagrange_multipliers,
    udwadia_kalaba,
    virtual_displacements,
)
from .drawing import Mechanism, MechanismAnimation, animate, draw_mechanism
from .widgets.explore import explore
from .errors import (
    ConstraintViolationError,
    InconsistentConstraintsError,
    NonUniqueAccelerationError,
    PainleveParadoxError,
    SimulationError,
    SingularConfigurationError,
    UnstableGainError,
)
from .contacts import Contact, Curve, Plane, Surface
from .model import CoulombFriction, Model
from .simulation import ContactEvent, Trajectory, project_initial_state, simulate
from .singular import SINGULAR_RTOL, SingularConfiguration, SingularConfigurationWarning
from .stabilization import (
    Baumgarte,
    GainMatrix,
    StabilityReport,
    amplification_matrix,
    check_gain,
    stability,
    stable_gain_interval,
)

__version__ = "0.1.0"

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
