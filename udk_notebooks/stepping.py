"""Integrator pieces shared by a single run (:mod:`udk_notebooks.simulation`) and a batch (:mod:`udk_notebooks.batch`).

The fixed steps (explicit Euler and the classical RK4, for one state or a
stack of states), the start check of the constraints, the divergence rule,
the putting at rest of sticking friction contacts, and the method names and
limits both accept. Both modules import these by their public names, so a run
and a sweep member follow the same rules.
"""

from __future__ import annotations

import sys
from typing import Callable

import numpy as np

from ._checks import finite_float
from .compiled import CompiledModel
from .errors import ConstraintViolationError

__all__ = ["ADAPTIVE_METHODS", "DIVERGENCE_FACTOR", "FIXED_STEP_METHODS", "MEMORY_LIMIT", "check_constraint_tol",
           "check_initial", "compiled_model", "euler_step", "rk4_step", "runaway", "stick_velocity"]

FIXED_STEP_METHODS = ("euler", "rk4")
ADAPTIVE_METHODS = ("RK45", "RK23", "DOP853", "Radau", "BDF", "LSODA")

DIVERGENCE_FACTOR = 1e6
"""A run stops as diverged when it grows this many times past its start (every method).

With ``s = 1 + max|y0|`` the scale of the initial state ``y0 = (q0, q0')``, the
run stops at the first sample where ``max|y| > DIVERGENCE_FACTOR s`` or where
a constraint residual (``phi``, ``phi'``, ``psi``) exceeds
``DIVERGENCE_FACTOR s^2`` (residuals are typically quadratic in the state), or
where a number stops being finite. The samples up to there are returned, and
the :class:`~udk_notebooks.simulation.Trajectory` says that the run diverged,
when and why (``status``, ``stop_time``, ``stop_reason``).
"""

MEMORY_LIMIT = 2**30
"""Bytes a fixed-step run may use for its output; beyond it ``simulate`` asks for ``t_eval`` or a larger step."""


def compiled_model(model) -> CompiledModel:
    """The compiled model of a Model (compiled once, cached) or a CompiledModel; a TypeError names anything else."""
    if isinstance(model, CompiledModel):
        return model
    symbolic = sys.modules.get("udk_notebooks.model")  # not imported: then no Model exists (and sympy stays out)
    if symbolic is not None and isinstance(model, symbolic.Model):
        return model.compile()
    raise TypeError(f"`model` must be a Model or a CompiledModel; got {type(model).__name__}")


def check_constraint_tol(value) -> float:
    """``constraint_tol`` as a float, or a ValueError naming it (not a finite number, or negative)."""
    value = finite_float(value, "`constraint_tol`")
    if value < 0:
        raise ValueError(f"`constraint_tol` must be >= 0; got {value!r}")
    return value


def check_initial(cm: CompiledModel, t0: float, q: np.ndarray, qd: np.ndarray, p: np.ndarray, tol: float) -> None:
    """Refuse an initial state whose constraint residuals exceed ``tol`` times its scale.

    Raises
    ------
    ConstraintViolationError
        Saying by how much at position level (``max |phi|``) and at velocity
        level (``max |phi'|, |psi|``), and how to fix it.
    """
    phi, vel = cm.residuals(t0, q, qd, p)
    pos_err = float(np.abs(phi).max(initial=0.0))
    vel_err = float(np.abs(vel).max(initial=0.0))
    if pos_err > tol * max(1.0, np.abs(q).max()) or vel_err > tol * max(1.0, np.abs(qd).max()):
        raise ConstraintViolationError(
            f"the initial state violates the constraints by {pos_err:.3e} at position level (max |phi|) "
            f"and {vel_err:.3e} at velocity level (max |phi'|, |psi|), above `constraint_tol` = {tol:g}. "
            "Pass project=True, or call udk_notebooks.project_initial_state(model, q0, qd0) first",
            position=pos_err,
            velocity=vel_err,
        )


def rk4_step(rate: Callable, t, y: np.ndarray, h, k1: np.ndarray | None = None) -> np.ndarray:
    """One step of the classical fourth-order Runge-Kutta method from ``(t, y)``.

    ``rate(t, y)`` is the right-hand side. For one state ``y`` has shape (d,)
    and ``h`` is a float; for a stack of states ``y`` has shape (d, L), one
    row per state entry and the members along the last axis, and ``h`` is a
    float or an array of shape (L,) (each member its own step, and then ``t``
    too), which broadcasts against the rows as it is. ``k1``, the first stage,
    is passed when it is known (a batch evaluates it at the end of the previous step).
    """
    _check_member_steps(y, h)
    if k1 is None:
        k1 = rate(t, y)
    k2 = rate(t + h / 2, _along(y, h / 2, k1))
    k3 = rate(t + h / 2, _along(y, h / 2, k2))
    k4 = rate(t + h, _along(y, h, k3))
    # y + h / 6 (k1 + 2 k2 + 2 k3 + k4), summed in that order in one work array (a stack's stages are large)
    total = np.multiply(k2, 2.0)
    np.add(k1, total, out=total)
    total += np.multiply(k3, 2.0)
    total += k4
    total *= h / 6
    total += y
    return total


def _along(y: np.ndarray, step, rate: np.ndarray) -> np.ndarray:
    """``y + step * rate`` in one new array (rounded as written)."""
    out = np.multiply(rate, step)
    out += y
    return out


def _check_member_steps(y: np.ndarray, h) -> None:
    """A step per member must come with a stack whose last axis holds the members (shape (d, L))."""
    if not isinstance(h, float) and np.ndim(h) and (np.ndim(y) != 2 or np.shape(h) != (np.shape(y)[1],)):
        raise ValueError(f"one step per member needs `y` of shape (d, L) and `h` of shape (L,) (the members along the "
                         f"last axis); got y {np.shape(y)} and h {np.shape(h)}")


def euler_step(rate: Callable, t, y: np.ndarray, h, k1: np.ndarray | None = None) -> np.ndarray:
    """One step of explicit Euler, ``y + h rate(t, y)`` (shapes as for :func:`rk4_step`)."""
    _check_member_steps(y, h)
    if k1 is None:
        k1 = rate(t, y)
    return y + h * k1


def runaway(y: np.ndarray, limit: float) -> str:
    """Why the state ``y`` counts as diverged (past ``limit``, or not finite), or ``""``."""
    if y.ndim == 1 and sum(map(abs, y.tolist())) <= limit:
        # One state (every fixed step): the sum of |y| is NaN or inf where an entry is, and at least the largest
        # entry, so at or below the limit nothing ran away; Python floats cost a third of the reduction below.
        return ""
    largest = float(np.abs(y).max(initial=0.0))  # NaN if any entry is NaN, inf if any is infinite
    if largest <= limit:  # one reduction decides the common case (called at every fixed step)
        return ""
    if not np.all(np.isfinite(y)):
        return "the state stopped being finite"
    if largest > limit:
        return f"the state grew to {largest:.3g}, past {DIVERGENCE_FACTOR:g} times its start (DIVERGENCE_FACTOR)"
    return ""


def stick_velocity(cm: CompiledModel, t: float, y: np.ndarray, p: np.ndarray, modes) -> np.ndarray:
    """The state with every sticking friction contact (mode 0) put exactly at rest.

    The velocity change is the minimum-norm one that makes each sticking
    contact's sliding velocity ``s`` zero (least squares on the rows ``ds/dq'``).
    """
    stuck = [i for i, mode in enumerate(modes) if mode == 0]
    if not stuck:
        return y
    n = cm.n
    data = np.asarray(cm.friction_data(t, y[:n], y[n:], p), dtype=float).reshape(len(modes), -1)
    rows = data[stuck, 4:]
    y = y.copy()
    y[n:] -= np.linalg.lstsq(rows, data[stuck, 0], rcond=None)[0]
    return y
