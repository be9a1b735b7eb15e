"""Checks for the warm-up exercises of lesson 00, start here.

The four warm-ups rehearse what lesson 1 needs (a mass matrix, a
pseudoinverse, a free acceleration, one call of the solver) and show how the
checks answer. Expected answers come from :class:`udk_notebooks.Model`,
:func:`numpy.linalg.pinv`, the solver without constraints and Newton's law
for a body resting on a floor.
"""

from __future__ import annotations

import numpy as np
import sympy as sm
from sympy.physics.mechanics import dynamicsymbols

from ..core import Motion, udwadia_kalaba
from ..model import Model
from ._feedback import AnswerFormError, Feedback, checker, justification, number, predicted, vector

__all__ = ["check_1", "check_2", "check_3", "check_4", "check_5"]

MASSES = (2.0, 3.0)
ROW = (3.0, 4.0)
FREE = {"m": 2.0, "F": (0.0, -19.62)}
GRAVITY = 9.81


@checker("an array of 4 numbers: the diagonal of M in kg")
def check_1(mass_diagonal) -> Feedback:
    """Warm-up 1: the diagonal of the mass matrix of two point masses in the plane.

    Masses 2 kg and 3 kg, coordinates ``(x1, y1, x2, y2)`` in that order.

    Parameters
    ----------
    mass_diagonal : array_like, shape (4,)

    Returns
    -------
    Feedback
        Compared with the mass matrix that :class:`udk_notebooks.Model`
        derives from the kinetic energy.
    """
    diagonal = vector(mass_diagonal, name="mass_diagonal", shape=(4,))
    x1, y1, x2, y2 = dynamicsymbols("x1 y1 x2 y2")
    m1, m2 = sm.symbols("m1 m2", positive=True)
    speeds = [c.diff() for c in (x1, y1, x2, y2)]
    pair = Model([x1, y1, x2, y2],
                 kinetic_energy=m1 * (speeds[0] ** 2 + speeds[1] ** 2) / 2 + m2 * (speeds[2] ** 2 + speeds[3] ** 2) / 2,
                 parameters={m1: MASSES[0], m2: MASSES[1]})
    reference = np.array(pair.M.subs(pair.parameters), dtype=float)
    if not np.allclose(reference, np.diag(np.diag(reference))):  # pragma: no cover - point masses
        raise RuntimeError("the mass matrix of point masses should be diagonal")
    if np.allclose(diagonal, np.diag(reference)):
        return Feedback(True, "Each mass appears once per coordinate of its particle: M = diag(2, 2, 3, 3) kg.")
    if np.allclose(np.sort(diagonal), np.sort(np.diag(reference))):
        return Feedback(False, "the right numbers in the wrong order: the coordinates are x1, y1 (first mass), then x2, y2.")
    return Feedback(False, "T = m1 (x1'^2 + y1'^2) / 2 + m2 (x2'^2 + y2'^2) / 2; M is its Hessian in the velocities.")


@checker("an array of 2 numbers: the pseudoinverse of the row (3, 4) as a column")
def check_2(row_pinv) -> Feedback:
    """Warm-up 2: the Moore-Penrose pseudoinverse of the row ``(3, 4)``.

    Parameters
    ----------
    row_pinv : array_like, shape (2,) or (2, 1)

    Returns
    -------
    Feedback
        Compared with :func:`numpy.linalg.pinv`.
    """
    value = vector(row_pinv, name="row_pinv", shape=(2,))
    reference = np.linalg.pinv(np.array([ROW])).ravel()
    if np.allclose(value, reference, rtol=1e-9, atol=1e-12):
        return Feedback(True, "A nonzero row's pseudoinverse is its transpose divided by its squared length, 25.")
    if np.allclose(value, 1.0 / np.array(ROW)):
        return Feedback(False, "the pseudoinverse is not the entry-wise reciprocal; it satisfies A A^+ A = A with A^+ a column.")
    return Feedback(False, "for one nonzero row a, a^+ = a^T / (a a^T). Check your result against A A^+ A = A.")


@checker("an array of 2 numbers: the acceleration in m/s^2")
def check_3(free_acceleration) -> Feedback:
    """Warm-up 3: the free acceleration ``a = M^{-1} Q`` of a 2 kg body under the force ``(0, -19.62)`` N.

    Parameters
    ----------
    free_acceleration : array_like, shape (2,)

    Returns
    -------
    Feedback
        Compared with :func:`udk_notebooks.udwadia_kalaba` without constraints.
    """
    value = vector(free_acceleration, name="free_acceleration", shape=(2,))
    reference = udwadia_kalaba(FREE["m"] * np.eye(2), FREE["F"]).qdd
    if np.allclose(value, reference, rtol=1e-9, atol=1e-12):
        return Feedback(True, "Without constraints Newton's law is all there is: a = F / m.")
    if np.allclose(value, FREE["F"]):
        return Feedback(False, "that is the force; the acceleration is the force divided by the mass.")
    return Feedback(False, "a = M^{-1} F with M = m I: divide each force component by the mass.")


@checker("the Motion returned by udk.udwadia_kalaba(...)")
def check_4(motion) -> Feedback:
    """Warm-up 4 (code): the solver's answer for a unit mass resting on the floor ``x2 = 0`` under gravity.

    Parameters
    ----------
    motion : Motion
        What ``udk.udwadia_kalaba(M, Q, A, b)`` returns for ``M = I``,
        ``Q = (0, -9.81)``, the floor ``x2 = 0`` written as one row of ``A q'' = b``.

    Returns
    -------
    Feedback
        Its acceleration must vanish and its ideal force must carry the
        weight, ``F^L = (0, m g)`` (Newton's law for a body at rest on a floor).
    """
    if not isinstance(motion, Motion):
        raise AnswerFormError(f"`motion` should be what udk.udwadia_kalaba(...) returns (a Motion); got {motion!r}")
    if motion.qdd.shape != (2,):
        return Feedback(False, f"the body has two coordinates (x1, x2); your call had {motion.qdd.shape[0]}.")
    weight = np.array([0.0, 1.0 * GRAVITY])
    if not np.allclose(motion.impressed, -weight):
        return Feedback(False, f"the impressed force is {np.round(motion.impressed, 4)}; gravity on a unit mass is (0, -9.81) N.")
    if not np.allclose(motion.qdd, 0.0, atol=1e-12):
        return Feedback(False, f"your body accelerates, q'' = {np.round(motion.qdd, 4)}: the floor x2 = 0 is the row "
                               "A = [[0, 1]] with b = [0].")
    if not np.allclose(motion.ideal, weight):
        return Feedback(False, f"F^L = {np.round(motion.ideal, 4)} does not carry the weight.")
    return Feedback(True, "The floor pushes up with F^L = (0, 9.81) N, exactly the weight, and the body stays at rest.")


@checker("prediction: a number in m/s^2; justification: a sentence")
def check_5(prediction, reasoning) -> Feedback:
    """Exercise 5 (predict and justify): the floor's row under an upward pull.

    The unit mass of Exercise 4 on the floor ``x2 = 0`` (the row ``x2'' = 0``)
    is now pulled *up* by ``Q = (0, 20)`` N. What ``x2''`` does the solver give?

    Parameters
    ----------
    prediction : float
        ``x2''`` in m/s^2, predicted before running anything.
    reasoning : str
        Why, in a sentence or two.

    Returns
    -------
    Feedback
        The prediction compared with :func:`udk_notebooks.udwadia_kalaba`; the
        reasoning shown beside the model answer.
    """
    value = number(prediction, name="prediction", unit="m/s^2")
    text = justification(reasoning, name="reasoning")
    motion = udwadia_kalaba(np.eye(2), [0.0, 20.0], [[0.0, 1.0]], [0.0])
    expected = float(motion.qdd[1])
    model_answer = (f"the row x2'' = 0 is an equation, so the solver keeps x2'' = {expected:g} and its force "
                    f"F^L = {np.round(motion.ideal, 3).tolist()} N pulls the body onto the floor. A real floor can only "
                    "push: the negative normal force says the bilateral model is wrong here and the body lifts off "
                    "with x2'' = 20 m/s^2.")
    hint = "that is what a real floor would allow (lift-off); the solver keeps the equation A q'' = b."
    return predicted(abs(value - expected) < 1e-9, text, model_answer, hint if abs(value - 20.0) < 1e-6 else "")
