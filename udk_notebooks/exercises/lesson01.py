"""Checks for the exercises of lesson 01, the explicit equation of motion.

Each expected answer is computed here by a route other than the one the
lesson teaches (``udk.Model`` for a hand derivation, a root finder on the
solver for a closed form, the solver itself for a question about it).
Source: Udwadia, Kalaba & Fan (2005), Eqs. (7)-(11) and (32).
"""

from __future__ import annotations

import numpy as np
import sympy as sm
from scipy.optimize import brentq
from sympy.physics.mechanics import dynamicsymbols

from .. import core
from ..model import Model
from ._feedback import AnswerFormError, Feedback, checker, justification, number, predicted, vector, yes_no

__all__ = ["check_1", "check_2", "check_3", "check_4", "check_5"]

GRAVITY = 9.81
SLOPE = 2.0
NONIDEAL = (1.0, 2.0)


def _by_name(expr):
    """``expr`` with every symbol replaced by a plain symbol of the same name (assumptions dropped)."""
    expr = sm.sympify(expr)
    return expr.xreplace({s: sm.Symbol(s.name) for s in expr.free_symbols if isinstance(s, sm.Symbol)})


def _matrix(answer, name: str, shape: tuple[int, int]) -> sm.Matrix:
    form = f"`{name}` should be a {shape[0]} x {shape[1]} sympy Matrix"
    if answer is None or isinstance(answer, (str, bytes, type, bool, int, float, complex)):
        raise AnswerFormError(f"{form}; got {answer!r}")
    try:
        matrix = sm.Matrix(answer)
    except Exception:  # noqa: BLE001 - anything sympy cannot read is the wrong form
        raise AnswerFormError(f"{form}; got a {type(answer).__name__} that sympy cannot read as a matrix") from None
    if matrix.shape != shape:
        raise AnswerFormError(f"{form}; yours has shape {matrix.shape}")
    return matrix


def _disk_reference() -> tuple[sm.Matrix, sm.Matrix]:
    """A and b of the rolling disk's no-slip rows, derived by ``udk.Model``."""
    x, y, varphi, theta = dynamicsymbols("x y varphi theta")
    r, m, inertia_1, inertia_2 = sm.symbols("r m I1 I2", positive=True)
    speeds = [c.diff() for c in (x, y, varphi, theta)]
    disk = Model(
        [x, y, varphi, theta],
        kinetic_energy=m * (speeds[0] ** 2 + speeds[1] ** 2) / 2 + inertia_1 * speeds[2] ** 2 / 2 + inertia_2 * speeds[3] ** 2 / 2,
        nonholonomic=[speeds[0] - r * speeds[2] * sm.sin(theta), speeds[1] + r * speeds[2] * sm.cos(theta)],
        parameters={r: 1.0, m: 1.0, inertia_1: 0.5, inertia_2: 0.25},
    )
    return sm.Matrix(disk.A), sm.Matrix(disk.b)


@checker("two sympy matrices: A_disk (2 x 4) and b_disk (2 x 1)")
def check_1(A_disk, b_disk) -> Feedback:
    """Exercise 1: the rows of ``A q'' = b`` for the vertical rolling disk.

    Parameters
    ----------
    A_disk : sympy Matrix, shape (2, 4)
        Coefficients of ``(x'', y'', varphi'', theta'')`` in the differentiated
        no-slip rows ``x' - r varphi' sin(theta) = 0``, ``y' + r varphi' cos(theta) = 0``.
    b_disk : sympy Matrix, shape (2, 1)
        The rest of each differentiated row, moved to the right-hand side.

    Returns
    -------
    Feedback
        Compared with the ``A`` and ``b`` that :class:`udk_notebooks.Model`
        derives from the same rows (Beshaw 2014, Sec. 4, Eq. b).
    """
    A_disk, b_disk = _matrix(A_disk, "A_disk", (2, 4)), _matrix(b_disk, "b_disk", (2, 1))
    A_ref, b_ref = _disk_reference()
    if sm.simplify(_by_name(A_disk) - _by_name(A_ref)) != sm.zeros(2, 4):
        return Feedback(False, "A_disk differs: after one time derivative, which terms multiply the accelerations "
                               "x'', y'', varphi'', theta''? Use the coordinates in the order x, y, varphi, theta.")
    if sm.simplify(_by_name(b_disk) - _by_name(b_ref)) != sm.zeros(2, 1):
        return Feedback(False, "b_disk differs: b is minus everything in the differentiated rows that does not "
                               "multiply an acceleration (here the products of two velocities).")
    return Feedback(True, "A_disk and b_disk match what udk.Model derives from the two no-slip rows.")


def _line_motion(slope: float, c) -> core.Motion:
    return core.udwadia_kalaba(np.eye(2), [0.0, -GRAVITY], [[slope, -1.0]], [0.0], C=c)


UNEQUAL_MASSES = (1.0, 4.0)
"""The diagonal of the mass matrix of Exercise 2 (Sec. 3's figure): the answer for ``F^C = c`` depends on it."""


@checker("two numpy arrays of shape (2,): c_no_force and c_all_force")
def check_2(c_no_force, c_all_force) -> Feedback:
    """Exercise 2: a nonzero ``c`` with ``F^C = 0``, and one with ``F^C = c``, for unequal masses.

    The line ``2 x1 - x2 = 0`` under gravity 9.81 with ``M = diag(1, 4)``
    (2005 paper, Eq. 11). ``F^C = 0`` exactly when ``c`` is in the range of
    ``A^T`` (for every ``M``); ``F^C = c`` exactly when ``A M^-1 c = 0``,
    which is not the line's direction unless ``M`` is a multiple of ``I``.

    Parameters
    ----------
    c_no_force, c_all_force : array_like, shape (2,)

    Returns
    -------
    Feedback
        Decided by the solver's nonideal force ``F^C`` for each vector.
    """
    c_no_force = vector(c_no_force, name="c_no_force", shape=(2,))
    c_all_force = vector(c_all_force, name="c_all_force", shape=(2,))
    for name, c in (("c_no_force", c_no_force), ("c_all_force", c_all_force)):
        if np.linalg.norm(c) < 1e-9:
            return Feedback(False, f"`{name}` is zero; the exercise asks for a nonzero c (c = 0 gives F^C = 0 trivially).")
    masses = np.diag(UNEQUAL_MASSES)
    gravity = masses @ [0.0, -GRAVITY]
    first = core.udwadia_kalaba(masses, gravity, [[SLOPE, -1.0]], [0.0], C=c_no_force).nonideal
    if not np.allclose(first, 0.0, atol=1e-9 * np.linalg.norm(c_no_force)):
        return Feedback(False, f"with c_no_force, F^C = {np.round(first, 4)} is not zero. F^C vanishes exactly "
                               "when c is a combination of the rows of A (the line's normal), whatever M is.")
    second = core.udwadia_kalaba(masses, gravity, [[SLOPE, -1.0]], [0.0], C=c_all_force).nonideal
    if not np.allclose(second, c_all_force, atol=1e-9 * np.linalg.norm(c_all_force)):
        direction = np.array([1.0, SLOPE])
        if abs(direction[0] * c_all_force[1] - direction[1] * c_all_force[0]) < 1e-9 * np.linalg.norm(c_all_force):
            return Feedback(False, "c along the line's direction (1, 2) passes unchanged only when M is a multiple "
                                   f"of I; here F^C = {np.round(second, 4)}. F^C = c needs M^-1 c along the line: "
                                   "A M^-1 c = 0.")
        return Feedback(False, f"with c_all_force, F^C = {np.round(second, 4)} differs from c. F^C = c exactly when "
                               "M^-1 c is a virtual displacement, A M^-1 c = 0.")
    return Feedback(True, "The first c is normal to the line (an ideal constraint although c is not zero, for any M: "
                          "what makes a constraint ideal is F^C = 0, Eqs. 20-21); the second has M^-1 c along the line.")


def _balance_slope() -> float:
    """The slope at which the solver's acceleration along the line vanishes, by root finding."""
    def along_line(slope):
        direction = np.array([1.0, slope]) / np.hypot(1.0, slope)
        return _line_motion(slope, NONIDEAL).qdd @ direction

    return brentq(along_line, 0.0, 1.0, xtol=1e-15, rtol=4 * np.finfo(float).eps)


@checker("a number: the slope k (dimensionless)")
def check_3(slope_balance, explorer=None) -> Feedback:
    """Exercise 3: the slope at which the particle does not accelerate.

    Parameters
    ----------
    slope_balance : float
        The slope ``k`` of the line ``k x1 - x2 = 0`` at which gravity (9.81)
        and ``c = (1, 2)`` cancel along the line, unit mass.
    explorer : InclinedLineExplorer, optional
        When given and the answer is right, it is set to this slope (with
        ``m = 1``, ``g = 9.81``, ``c = (1, 2)``) so that it shows the balance.

    Returns
    -------
    Feedback
        Compared with the root of the solver's acceleration along the line
        (found by :func:`scipy.optimize.brentq`, not from Eq. 32).
    """
    slope = number(slope_balance, name="slope_balance")
    reference = _balance_slope()
    error = abs(slope - reference)
    if error > 1e-9 * max(1.0, abs(reference)):
        acceleration = _line_motion(slope, NONIDEAL).qdd
        if error < 1e-2 * abs(reference):
            return Feedback(False, f"close, but at slope {slope:g} the acceleration is still {np.round(acceleration, 6)}: "
                                   "compute the value instead of typing a rounded one.")
        return Feedback(False, f"at slope {slope:g} the acceleration is {np.round(acceleration, 4)}, not zero. "
                               "Project Eq. (32) on the line direction (1, k) and set the sum to zero.")
    text = f"At slope {reference:.6f} gravity and c cancel along the line."
    if explorer is not None:
        explorer.set(m=1.0, g=GRAVITY, c1=NONIDEAL[0], c2=NONIDEAL[1], slope=slope)
        text += (" The explorer of Sec. 7 now uses this slope: both accelerations in panel (b) are zero "
                 "and the particle glides along the line at its constant launch speed.")
    return Feedback(True, text)


def _exception_class(answer, name: str) -> type:
    if not (isinstance(answer, type) and issubclass(answer, BaseException)):
        raise AnswerFormError(
            f"`{name}` should be an exception class itself, such as udk.SomeError (not a string, not an "
            f"instance); got {answer!r}"
        )
    return answer


@checker("same_motion: True or False; error_type: an exception class such as udk.SomeError")
def check_4(same_motion, error_type) -> Feedback:
    """Exercise 4: a constraint row stated twice, consistently and inconsistently.

    Parameters
    ----------
    same_motion : bool or {"yes", "no"}
        Whether stacking the row ``(2, -1)`` twice with ``b = (0, 0)`` leaves
        the motion unchanged.
    error_type : type
        The exception class that :func:`udk_notebooks.udwadia_kalaba` raises
        for the contradictory ``b = (0, 1)``.

    Returns
    -------
    Feedback
        Both facts are found by calling the solver.
    """
    same = yes_no(same_motion, name="same_motion")
    error_type = _exception_class(error_type, "error_type")
    once = _line_motion(SLOPE, NONIDEAL).qdd
    twice = core.udwadia_kalaba(np.eye(2), [0.0, -GRAVITY], [[2.0, -1.0], [4.0, -2.0]], [0.0, 0.0], C=NONIDEAL).qdd
    truth = bool(np.allclose(once, twice, rtol=1e-12, atol=1e-12))
    if same != truth:
        return Feedback(False, "compare the two motions again: does the second row allow or forbid anything "
                               "that the first does not?")
    try:
        core.udwadia_kalaba(np.eye(2), [0.0, -GRAVITY], [[2.0, -1.0], [4.0, -2.0]], [0.0, 1.0])
    except Exception as exc:  # noqa: BLE001 - the class raised is the answer
        raised = type(exc)
    else:  # pragma: no cover - the solver refuses inconsistent rows
        raise RuntimeError("the solver accepted contradictory constraints")
    if error_type is not raised:
        if issubclass(raised, error_type):
            return Feedback(False, f"{error_type.__name__} is a base class of the exception the solver raises; "
                                   "name the specific class (it is exported by udk_notebooks).")
        return Feedback(False, f"the solver does not raise {error_type.__name__}; run the call and read the "
                               "name of the exception.")
    return Feedback(True, "A repeated row changes nothing (the pseudoinverse handles redundant rows), and "
                          f"contradicting rows have no solution: the solver raises {raised.__name__}.")


@checker("prediction: True or False; reasoning: a sentence")
def check_5(prediction, reasoning) -> Feedback:
    """Exercise 5 (predict and justify): does ``c = (3, -1.5)`` change the motion on the line?

    The line ``2 x1 - x2 = 0`` under gravity with ``M = diag(1, 4)`` (Exercise 2's system).

    Parameters
    ----------
    prediction : bool or {"yes", "no"}
        Whether the accelerations with ``c = (3, -1.5)`` differ from those with ``c = 0``.
    reasoning : str
        Why, in a sentence or two.

    Returns
    -------
    Feedback
        The prediction compared with the solver's accelerations for both vectors.
    """
    answer = yes_no(prediction, name="prediction")
    text = justification(reasoning, name="reasoning")
    masses = np.diag(UNEQUAL_MASSES)
    gravity = masses @ [0.0, -GRAVITY]
    with_c = core.udwadia_kalaba(masses, gravity, [[SLOPE, -1.0]], [0.0], C=[3.0, -1.5]).qdd
    without = core.udwadia_kalaba(masses, gravity, [[SLOPE, -1.0]], [0.0]).qdd
    changes = not np.allclose(with_c, without, rtol=1e-12, atol=1e-12)
    model_answer = ("c = (3, -1.5) = 1.5 (2, -1) is a multiple of the row of A, i.e. in the range of A^T. "
                    "Then (I - B^+ B) M^-1/2 c = 0, so F^C = 0 for every M: the constraint stays ideal and the "
                    "motion is the same as with c = 0.")
    return predicted(answer == changes, text, model_answer,
                     "with unequal masses one might expect a change, but look at the direction of c first.")
