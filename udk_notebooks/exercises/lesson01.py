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

__all__ = ["PROOF_SYSTEM", "check_1", "check_2", "check_3", "check_4", "check_5", "check_6", "check_7", "check_8",
           "PROOF_SINGULAR_SYSTEM", "check_9"]

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


def _random_system(rng: np.random.Generator, n: int, m: int) -> tuple[np.ndarray, ...]:
    """A random test system: M (not a multiple of I), Q, A with a redundant last row, a consistent b, and c."""
    root = rng.standard_normal((n, n))
    M = root @ root.T + n * np.diag(rng.uniform(0.5, 3.0, n))
    A = rng.standard_normal((m, n))
    A = np.vstack([A, rng.standard_normal(m) @ A])  # the extra row is a combination of the others
    b = A @ rng.standard_normal(n)  # consistent: some acceleration satisfies every row
    return M, rng.standard_normal(n), A, b, rng.standard_normal(n)


@checker("a Python function my_uk(M, Q, A, b, c) returning the accelerations as an array of shape (n,)")
def check_6(my_uk) -> Feedback:
    """Exercise 6 (code): the Udwadia-Kalaba equation, Eq. (8), written in numpy by the student.

    Parameters
    ----------
    my_uk : callable
        ``my_uk(M, Q, A, b, c) -> qdd`` for a positive definite ``M``.

    Returns
    -------
    Feedback
        Compared with :func:`udk_notebooks.udwadia_kalaba` on five random
        systems with 3-6 coordinates, a mass matrix that is not a multiple of
        ``I``, a redundant constraint row and a nonzero ``c``.
    """
    if not callable(my_uk) or isinstance(my_uk, type):
        raise AnswerFormError(f"`my_uk` should be a function my_uk(M, Q, A, b, c); got {type(my_uk).__name__}")
    rng = np.random.default_rng(2005)
    for trial in range(5):
        n = 3 + trial % 4
        M, Q, A, b, c = _random_system(rng, n, max(1, n - 2))
        try:
            got = np.asarray(my_uk(M.copy(), Q.copy(), A.copy(), b.copy(), c.copy()), dtype=float).reshape(-1)
        except np.linalg.LinAlgError as exc:
            return Feedback(False, f"your function failed with LinAlgError ({exc}) on a system with a redundant row: "
                                   "(A A^T)^-1 or (A M^-1 A^T)^-1 do not exist then; use the pseudoinverse of B = A M^-1/2.")
        motion = core.udwadia_kalaba(M, Q, A, b, C=c)
        if got.shape != (n,):
            return Feedback(False, f"your function returned shape {got.shape} for {n} coordinates; return q'' of shape ({n},).")
        if np.allclose(got, motion.qdd, rtol=1e-8, atol=1e-10):
            continue
        without_c = core.udwadia_kalaba(M, Q, A, b).qdd
        if np.allclose(got, without_c, rtol=1e-8, atol=1e-10):
            return Feedback(False, "your accelerations are those with c = 0: add the term M^-1/2 (I - B^+ B) M^-1/2 c of Eq. (8).")
        if not np.allclose(A @ got, b, rtol=1e-8, atol=1e-8 * (1 + np.abs(b).max())):
            return Feedback(False, "your accelerations do not satisfy A q'' = b on a random system with a redundant row: "
                                   "check B = A M^-1/2 and the pseudoinverse (np.linalg.pinv) in the ideal term; an inverse "
                                   "such as (A M^-1 A^T)^-1 does not exist when a row repeats the others.")
        return Feedback(False, f"on a random system with {n} coordinates your q'' differs from the package's by "
                               f"{np.abs(got - motion.qdd).max():.2e}: check M^-1/2 (from eigh or a Cholesky factor) on "
                               "both sides of the c term, and that M is not assumed to be a multiple of I.")
    return Feedback(True, "Your Eq. (8) agrees with udk.udwadia_kalaba on five random systems with unequal masses, "
                          "a redundant row and a nonzero c.")


PROOF_SYSTEM = {
    "M": np.array([[3.0, 1.0, 0.0], [1.0, 2.0, 0.5], [0.0, 0.5, 1.5]]),
    "A": np.array([[1.0, -1.0, 2.0]]),
    "mu": np.array([0.7]),
}
"""The system of Exercise 7: a full mass matrix, one constraint row, and the multiplier ``mu`` of ``c = A^T mu``."""


def _proof_steps() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``M^-1/2`` (symmetric), ``B^+`` and the projector ``I - B^+ B`` of ``PROOF_SYSTEM``, by eigh and pinv."""
    values, vectors = np.linalg.eigh(PROOF_SYSTEM["M"])
    half_inverse = vectors @ np.diag(values**-0.5) @ vectors.T
    B = PROOF_SYSTEM["A"] @ half_inverse
    B_pinv = np.linalg.pinv(B)
    return half_inverse, B_pinv, np.eye(3) - B_pinv @ B


@checker("three arrays: w = M^-1/2 c (3,), B^T mu (3,), and (I - B^+ B) w (3,)")
def check_7(w, BT_mu, projected) -> Feedback:
    """Exercise 7 (guided proof): ``c`` in the range of ``A^T`` gives ``F^C = 0``, step by step.

    For ``PROOF_SYSTEM``, with ``c = A^T mu``: (1) ``w = M^-1/2 c``; (2) the
    same vector written as ``B^T mu`` (because ``B^T = M^-1/2 A^T``, ``M^-1/2``
    being symmetric); (3) ``(I - B^+ B) w``, which is zero because
    ``(I - B^+ B) B^T = (B (I - B^+ B))^T = (B - B B^+ B)^T = 0`` (Penrose
    conditions 1 and 4). Then ``F^C = M^1/2 (I - B^+ B) w = 0`` for this ``M``
    and every other.

    Parameters
    ----------
    w, BT_mu, projected : array_like, shape (3,)
        The three intermediate results.

    Returns
    -------
    Feedback
        Each step compared with the check's own eigh/pinv computation; the
        first wrong step is named.
    """
    w = vector(w, name="w", shape=(3,))
    BT_mu = vector(BT_mu, name="BT_mu", shape=(3,))
    projected = vector(projected, name="projected", shape=(3,))
    half_inverse, B_pinv, projector = _proof_steps()
    c = PROOF_SYSTEM["A"].T @ PROOF_SYSTEM["mu"]
    expected_w = half_inverse @ c
    if not np.allclose(w, expected_w, atol=1e-9):
        if np.allclose(w, c, atol=1e-9):
            return Feedback(False, "step 1: that is c itself; multiply by M^-1/2 (the symmetric square root from eigh).")
        return Feedback(False, "step 1: w = M^-1/2 c with c = A^T mu; build M^-1/2 from np.linalg.eigh(M) as V diag(1/sqrt(l)) V^T.")
    expected_bt = (PROOF_SYSTEM["A"] @ half_inverse).T @ PROOF_SYSTEM["mu"]
    if not np.allclose(BT_mu, expected_bt, atol=1e-9):
        return Feedback(False, "step 2: compute B = A M^-1/2 and then B^T mu; it should equal your w (why?).")
    if not np.allclose(projected, projector @ w, atol=1e-9):
        return Feedback(False, "step 3: apply I - B^+ B (with B^+ = np.linalg.pinv(B)) to w.")
    return Feedback(True, f"w = B^T mu, and |(I - B^+ B) w| = {np.linalg.norm(projector @ w):.1e}: the projector removes "
                          "the range of B^T (Penrose 1 and 4), so F^C = M^1/2 (I - B^+ B) M^-1/2 c = 0 for any M.")


PROOF_DISPLACEMENT_SEED = np.array([1.0, -2.0, 0.5])
"""The arbitrary vector ``q`` of Eq. (14) in Exercise 8: ``v = M^-1/2 (I - B^+ B) q``."""


@checker("three answers: the projector P (3 x 3), P B^+ (3 x 1) and the number v^T F^L")
def check_8(projector, projected_pinv, virtual_work) -> Feedback:
    """Exercise 8 (guided proof): Eq. (16), ``v^T F^L = 0``, from Penrose conditions 2 and 4.

    For ``PROOF_SYSTEM`` with ``b - A a = 1``: (1) ``P = I - B^+ B``, symmetric
    because ``B^+ B`` is (Penrose 4); (2) ``P B^+``, zero because
    ``B^+ B B^+ = B^+`` (Penrose 2); (3) ``v^T F^L`` for
    ``v = M^-1/2 P q`` (Eq. 14, ``q = PROOF_DISPLACEMENT_SEED``) and
    ``F^L = M^1/2 B^+ (b - A a)``, which is ``q^T P^T B^+ (b - A a) = 0``.

    Parameters
    ----------
    projector : array_like, shape (3, 3)
    projected_pinv : array_like, shape (3, 1) or (3,)
    virtual_work : float

    Returns
    -------
    Feedback
        Each step compared with the check's own eigh/pinv computation; the
        first wrong step is named.
    """
    projector = vector(projector, name="projector", shape=(3, 3))
    projected_pinv = vector(projected_pinv, name="projected_pinv", shape=(3,))
    work = number(virtual_work, name="virtual_work", unit="J")
    half_inverse, B_pinv, expected_projector = _proof_steps()
    if not np.allclose(projector, expected_projector, atol=1e-9):
        if np.allclose(projector, np.eye(3) - expected_projector, atol=1e-9):
            return Feedback(False, "step 1: that is B^+ B; the projector onto the virtual displacements is I - B^+ B.")
        return Feedback(False, "step 1: P = I - B^+ B with B = A M^-1/2 and B^+ = np.linalg.pinv(B).")
    if not np.allclose(projected_pinv, (expected_projector @ B_pinv).reshape(-1), atol=1e-9):
        return Feedback(False, "step 2: multiply your P by B^+ (a 3 x 1 column).")
    values, vectors = np.linalg.eigh(PROOF_SYSTEM["M"])
    half = vectors @ np.diag(values**0.5) @ vectors.T
    v = half_inverse @ expected_projector @ PROOF_DISPLACEMENT_SEED
    ideal = half @ B_pinv @ np.array([1.0])
    if abs(work - float(v @ ideal)) > 1e-9:
        return Feedback(False, "step 3: v = M^-1/2 P q with q = ex.PROOF_DISPLACEMENT_SEED and F^L = M^1/2 B^+ (b - A a) "
                               "with b - A a = 1; then take the dot product.")
    return Feedback(True, f"P is symmetric (Penrose 4: |P - P^T| = {np.abs(expected_projector - expected_projector.T).max():.0e}), "
                          f"P B^+ = 0 (Penrose 2) and so v^T F^L = q^T P^T B^+ (b - A a) = {float(v @ ideal):.0e}: "
                          "Eq. (16) for every virtual displacement.")



PROOF_SINGULAR_SYSTEM = {
    "M": np.array([[2.0, -1.0, -1.0], [-1.0, 2.0, -1.0], [-1.0, -1.0, 2.0]]),
    "A": np.array([[1.0, 2.0, 0.0]]),
    "A2": np.array([[1.0, 1.0, -2.0]]),
}
"""The system of Exercise 9: a singular mass matrix (rank 2, null vector ``(1, 1, 1)``), a row ``A``
with ``[M; A]`` of full column rank, and a row ``A2`` with ``A2 (1, 1, 1) = 0``, so ``[M; A2]`` is not."""


def _unit(v: np.ndarray) -> np.ndarray:
    """``v`` scaled to length 1 (any scaling of a null vector is as good as any other)."""
    return v / np.linalg.norm(v)


@checker("three answers: the projector P = A^+ A (3 x 3), the smallest eigenvalue of M + P (a number), "
         "and a nonzero v (3,) with M v = 0 and A2 v = 0")
def check_9(projector, smallest_eigenvalue, null_vector) -> Feedback:
    """Exercise 9 (guided proof): ``M + A^+ A`` is positive definite when ``[M; A]`` has full column rank.

    For ``PROOF_SINGULAR_SYSTEM`` (``M`` positive semi-definite of rank 2):
    (1) ``P = A^+ A``, symmetric (Penrose condition 4) and idempotent
    (``P P = A^+ (A A^+ A) = A^+ A`` by condition 1); (2) the smallest eigenvalue of ``M + P``, positive because
    ``v^T (M + P) v = v^T M v + |P v|^2 = 0`` forces ``M v = 0`` and
    ``A v = A A^+ A v = 0``, hence ``v = 0`` under the rank condition;
    (3) with ``A2`` in place of ``A`` the rank condition fails, and a
    nonzero ``v`` with ``M v = 0`` and ``A2 v = 0`` makes ``M + A2^+ A2``
    singular. Source: the encyclopedia article "Udwadia-Kalaba equation"
    (singular mass matrices, ``M_A = M + A^+ A``), and Udwadia & Kalaba,
    *Analytical Dynamics: A New Approach* (1996).

    Parameters
    ----------
    projector : array_like, shape (3, 3)
        ``A^+ A`` for ``A = PROOF_SINGULAR_SYSTEM["A"]``.
    smallest_eigenvalue : float
        The smallest eigenvalue of ``M + A^+ A``.
    null_vector : array_like, shape (3,)
        A nonzero vector with ``M v = 0`` and ``A2 v = 0``; any scaling.

    Returns
    -------
    Feedback
        Each step compared with the check's own pinv/eigvalsh computation;
        the first wrong step is named.
    """
    M, A, A2 = (PROOF_SINGULAR_SYSTEM[key] for key in ("M", "A", "A2"))
    projector = vector(projector, name="projector", shape=(3, 3))
    smallest = number(smallest_eigenvalue, name="smallest_eigenvalue")
    v = vector(null_vector, name="null_vector", shape=(3,))
    expected_projector = np.linalg.pinv(A) @ A
    if not np.allclose(projector, expected_projector, atol=1e-9):
        if np.allclose(projector, np.eye(3), atol=1e-9):
            return Feedback(False, "step 1: A^+ A = I only when A has full column rank; one row in three coordinates "
                                   "projects onto a line. Compute np.linalg.pinv(A) @ A.")
        if np.allclose(projector, np.eye(3) - expected_projector, atol=1e-9):
            return Feedback(False, "step 1: that is I - A^+ A, the projector onto the null space of A; take A^+ A itself.")
        if np.allclose(projector, A.T @ A, atol=1e-9):
            return Feedback(False, "step 1: that is A^T A; the pseudoinverse A^+ = A^T / |A|^2 for one row, not A^T.")
        if not np.allclose(projector, projector.T, atol=1e-9):
            return Feedback(False, "step 1: your P is not symmetric, but A^+ A is (Penrose condition 4); "
                                   "compute np.linalg.pinv(A) @ A, in that order.")
        return Feedback(False, "step 1: P = A^+ A with A^+ = np.linalg.pinv(A), in that order (A^+ on the left).")
    eigenvalues = np.linalg.eigvalsh(M + expected_projector)
    if abs(smallest - eigenvalues[0]) > 1e-6 * max(1.0, abs(eigenvalues[0])):
        if abs(smallest) < 1e-6:
            return Feedback(False, "step 2: 0 is the smallest eigenvalue of M alone (M is singular); "
                                   "the question is about M + P.")
        if abs(smallest - np.linalg.eigvalsh(M + A.T @ A)[0]) < 1e-6:
            return Feedback(False, "step 2: that is for M + A^T A; add the projector P = A^+ A instead.")
        if any(abs(smallest - value) < 1e-6 for value in eigenvalues[1:]):
            return Feedback(False, "step 2: that is another eigenvalue of M + P; np.linalg.eigvalsh sorts them "
                                   "in ascending order, so take the first.")
        return Feedback(False, "step 2: the smallest eigenvalue of M + P: np.linalg.eigvalsh(M + P)[0].")
    size = np.linalg.norm(v)
    if size < 1e-12:
        return Feedback(False, "step 3: v = 0 satisfies M v = 0 and A2 v = 0 for every A2, so it proves nothing; "
                               "the counterexample needs a nonzero v (the rank condition fails for A2).")
    unit = v / size
    if np.linalg.norm(M @ unit) > 1e-6:
        return Feedback(False, f"step 3: |M v| / |v| = {np.linalg.norm(M @ unit):.2g}, not zero; v must lie in the "
                               "null space of M. Look for a null vector of the stacked [M; A2], e.g. the last row of "
                               "Vt from np.linalg.svd(np.vstack([M, A2])).")
    if np.linalg.norm(A2 @ unit) > 1e-6:
        return Feedback(False, f"step 3: M v = 0 but |A2 v| / |v| = {np.linalg.norm(A2 @ unit):.2g}; "
                               "v must also satisfy A2 v = 0 (use A2, not A).")
    singular = np.linalg.eigvalsh(M + np.linalg.pinv(A2) @ A2)[0]
    return Feedback(True, f"P is symmetric and idempotent (|P - P^T| = "
                          f"{np.abs(expected_projector - expected_projector.T).max():.0e}, |P^2 - P| = "
                          f"{np.abs(expected_projector @ expected_projector - expected_projector).max():.0e}); "
                          f"M + A^+ A has smallest eigenvalue {eigenvalues[0]:.4f} > 0, while v = "
                          f"{np.array2string(_unit(v), precision=3)} makes M + A2^+ A2 singular (smallest eigenvalue "
                          f"{singular:.0e}): the rank condition on [M; A] is what makes M_A positive definite.")
