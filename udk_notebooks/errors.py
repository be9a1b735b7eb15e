"""Exceptions raised by udk-notebooks.

Each one subclasses :class:`ValueError`, so code that already catches bad
input keeps working, and each message names the offending argument and what
to do about it.
"""

__all__ = [
    "ConstraintViolationError",
    "InconsistentConstraintsError",
    "NonUniqueAccelerationError",
    "PainleveParadoxError",
    "SimulationError",
    "SingularConfigurationError",
    "StiffnessWarning",
    "UnstableGainError",
]


class InconsistentConstraintsError(ValueError):
    """``A q'' = b`` has no solution; ``residual`` holds ``||A q'' - b||``."""

    def __init__(self, message: str, residual: float):
        super().__init__(message)
        self.residual = residual


class NonUniqueAccelerationError(ValueError):
    """``[M; A]`` lacks full column rank, so ``q''`` is not determined."""


class PainleveParadoxError(ValueError):
    """Sliding contacts whose normal forces and friction admit no consistent motion, or several.

    With the slip directions given, the normal forces ``N`` of sliding
    contacts solve ``(I - B) N = a`` (:mod:`udk_notebooks.contacts`); for one
    unilateral contact it has exactly one solution with ``N >= 0`` only when
    ``1 - B > 0``. Otherwise (Painleve's paradox) Coulomb's law with rigid
    bodies gives no motion or several, and the package refuses.

    Attributes
    ----------
    contacts : tuple of str
        The names of the contacts involved.
    time : float
    state : ndarray, shape (2 n,)
        ``(q, q')`` where it happened.
    determinant : float
        ``det(I - B)`` of the sliding contacts (``1 - B`` for one).
    """

    def __init__(self, message: str, contacts=(), time: float = float("nan"), state=None,
                 determinant: float = float("nan")):
        super().__init__(message)
        self.contacts = tuple(contacts)
        self.time = time
        self.state = state
        self.determinant = determinant


class ConstraintViolationError(ValueError):
    """An initial state does not satisfy the constraints.

    ``position`` and ``velocity`` hold the largest residual at each level.
    """

    def __init__(self, message: str, position: float, velocity: float):
        super().__init__(message)
        self.position = position
        self.velocity = velocity


class UnstableGainError(ValueError):
    """A stabilization gain makes the chosen fixed-step integrator unstable."""


class SimulationError(RuntimeError):
    """A run failed part-way (the equation of motion could not be solved at some state).

    Attributes
    ----------
    time : float
        Where the failing evaluation was.
    state : ndarray, shape (2 n,)
        ``(q, q')`` there.
    trajectory : Trajectory or None
        The samples computed before the failure (None when there were none).
    """

    def __init__(self, message: str, time: float, state, trajectory=None):
        super().__init__(message)
        self.time = time
        self.state = state
        self.trajectory = trajectory


class SingularConfigurationError(SimulationError):
    """A run reached a singular configuration (``simulate(..., on_singular="raise")``).

    Besides ``time``, ``state`` and ``trajectory`` (the run up to just before
    it, ``status == "singular"``), ``singularity`` holds the
    :class:`~udk_notebooks.singular.SingularConfiguration`: which constraint
    rows became dependent, or along which coordinates the mass lost rank.
    """

    def __init__(self, message: str, time: float, state, trajectory=None, singularity=None):
        super().__init__(message, time, state, trajectory)
        self.singularity = singularity


class StiffnessWarning(UserWarning):
    """An explicit adaptive method is asked to integrate stabilization gains that make the run stiff."""
