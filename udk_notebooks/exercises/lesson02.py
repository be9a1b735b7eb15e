"""Checks for the exercises of lesson 02, drift and stabilization.

Expected answers come from routes other than the lesson's formula: the
package's amplification matrices and stability reports, the roots of the
stability polynomial, a DOP853 simulation of the pendulum, and one classic
Runge-Kutta step taken by hand. Source: Beshaw (2014), Eqs. (18)-(27) and
Theorems 1-2; Baumgarte (1972).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .. import stabilization
from ..examples import chain
from ..simulation import simulate
from ._feedback import AnswerFormError, Feedback, checker, justification, number, predicted, yes_no

__all__ = ["check_1", "check_2", "check_3", "check_4", "check_5", "check_6"]

DEADBEAT_STEP = 0.02
RK4_GAIN = 100.0
VELOCITY_ERROR = 5e-4
CRITICAL_ROOT = -4.0


@checker("a number: the gain k in 1/s")
def check_1(k_deadbeat) -> Feedback:
    """Exercise 1: the Euler gain ``K = -k I`` that makes ``I + tau K`` vanish for ``tau = 0.02``.

    Parameters
    ----------
    k_deadbeat : float
        The gain ``k`` in 1/s.

    Returns
    -------
    Feedback
        Decided by :func:`udk_notebooks.amplification_matrix` (Beshaw 2014, Eq. 22).
    """
    k = number(k_deadbeat, name="k_deadbeat", unit="1/s")
    factor = stabilization.amplification_matrix("euler", DEADBEAT_STEP, -k * np.eye(2))
    if np.allclose(factor, 0.0, atol=1e-9):
        return Feedback(True, f"The gain k = {k:g} makes I + tau K = 0: an error is gone one step after it is made.")
    if abs(k * DEADBEAT_STEP - 2.0) < 1e-6:
        return Feedback(False, "that k is the edge of Euler's stable interval, where I + tau K = -I: the error "
                               "flips sign every step and never shrinks. Solve 1 - k tau = 0 instead.")
    return Feedback(False, f"with k = {k:g} the diagonal of I + tau K is {factor[0, 0]:.4g}, not zero: solve 1 - k tau = 0.")


def _rk4_boundary() -> float:
    """``x*`` with ``R(-x*) = 1`` for RK4: the real root of ``x^3/24 - x^2/6 + x/2 - 1``."""
    roots = np.roots([1 / 24, -1 / 6, 1 / 2, -1.0])
    return float(max(r.real for r in roots if abs(r.imag) < 1e-9))


@checker("a number: the step tau in s")
def check_2(tau_max) -> Feedback:
    """Exercise 2: the largest RK4 step for which the scalar gain ``K = -100`` keeps the residual decaying.

    Parameters
    ----------
    tau_max : float
        The step in seconds.

    Returns
    -------
    Feedback
        Compared with the root of RK4's stability polynomial (Beshaw 2014,
        Eq. 27), and confirmed with :func:`udk_notebooks.stability` just
        below and above it.
    """
    tau = number(tau_max, name="tau_max", unit="s")
    if tau <= 0:
        return Feedback(False, "a time step is positive.")
    reference = _rk4_boundary() / RK4_GAIN
    assert stabilization.stability("rk4", 0.999 * reference, -RK4_GAIN).bounded
    assert not stabilization.stability("rk4", 1.001 * reference, -RK4_GAIN).bounded
    if abs(tau - reference) <= 1e-6 * reference:
        return Feedback(True, f"RK4 with K = -100 keeps the residual bounded up to tau = {reference:.6f} s "
                              f"(k tau = {reference * RK4_GAIN:.6f}).")
    if abs(tau - 2.0 / RK4_GAIN) < 1e-9:
        return Feedback(False, "k tau = 2 is Euler's bound; RK4's stability polynomial reaches |R| = 1 later.")
    report = stabilization.stability("rk4", tau, -RK4_GAIN)
    side = "too large: the residual grows" if not report.bounded else "still stable: a larger step works"
    if abs(tau - reference) < 1e-2 * reference:
        side = "close; give more digits (compute it rather than rounding)"
    return Feedback(False, f"at tau = {tau:g} s the spectral radius is {report.spectral_radius:.4f}, {side}. "
                           "Hint: udk.stable_gain_interval('rk4', 1.0) gives the boundary of k tau.")


@functools.cache
def _pendulum():
    return chain.cartesian_pendulum().compile()


@checker("a number: phi(5) in m^2")
def check_3(phi_at_5) -> Feedback:
    """Exercise 3: the drift ``phi(5)`` of the pendulum started with a radial velocity error of ``5e-4``.

    Parameters
    ----------
    phi_at_5 : float
        ``x^2 + y^2 - l^2`` at ``t = 5`` s, in m^2.

    Returns
    -------
    Feedback
        Compared with a DOP853 simulation of the pendulum (``chain.cartesian_pendulum``).
    """
    value = number(phi_at_5, name="phi_at_5", unit="m^2")
    pendulum = _pendulum()
    q0, qd0 = chain.pendulum_initial_state(angle=1.0)
    run = simulate(pendulum, (0.0, 5.0), q0, qd0 + VELOCITY_ERROR * q0, method="DOP853",
                   rtol=1e-10, atol=1e-12, constraint_tol=1e-2)
    simulated = float(run.position_residual[-1, 0])
    if abs(value - simulated) < 1e-6:
        return Feedback(True, f"The drift is phi(5) = {simulated:.6f} m^2: a straight line from phi(0) = 0 with slope phi'(0).")
    if abs(2 * value - simulated) < 1e-6:
        return Feedback(False, "half of it: phi' = 2 (x x' + y y'), so the radial velocity error counts twice.")
    if value == 0:
        return Feedback(False, "phi(0) = 0, but phi'(0) is not: the velocity error points along the rod.")
    return Feedback(False, "the simulation gives a different phi(5). With phi'' = 0 along the flow, "
                           "phi(t) = phi(0) + phi'(0) t; compute phi'(0) = 2 q0 . (delta q0).")


@checker("two numbers: alpha and beta in 1/s")
def check_4(alpha_answer, beta_answer) -> Feedback:
    """Exercise 4: Baumgarte gains whose error dynamics has the double eigenvalue ``-4``.

    Parameters
    ----------
    alpha_answer, beta_answer : float
        Baumgarte's ``alpha`` and ``beta`` in 1/s.

    Returns
    -------
    Feedback
        Decided by the eigenvalues of :meth:`udk_notebooks.Baumgarte.error_matrix`.
    """
    alpha = number(alpha_answer, name="alpha_answer", unit="1/s")
    beta = number(beta_answer, name="beta_answer", unit="1/s")
    if alpha < 0 or beta < 0:
        return Feedback(False, "Baumgarte's alpha and beta are not negative; the signs are in b - 2 alpha phi' - beta^2 phi.")
    error = stabilization.Baumgarte(alpha=alpha, beta=beta).error_matrix(1, 0)
    eigenvalues = np.linalg.eigvals(error)
    # a double root is defective, so eigenvalues carry sqrt(eps) noise: compare the polynomial
    characteristic = np.poly(error)
    target = np.poly([CRITICAL_ROOT, CRITICAL_ROOT])
    if np.allclose(characteristic, target, rtol=1e-9, atol=1e-9):
        return Feedback(True, f"The gains alpha = {alpha:g}, beta = {beta:g} are critically damped: (s + 4)^2 = s^2 + 8 s + 16.")
    if math.isclose(alpha, target[1], rel_tol=1e-9) and math.isclose(beta, target[2], rel_tol=1e-9):
        return Feedback(False, "the polynomial is s^2 + 2 alpha s + beta^2: match 2 alpha and beta^2, not alpha and beta.")
    return Feedback(False, f"your eigenvalues are {np.round(eigenvalues, 4)}. Match s^2 + 2 alpha s + beta^2 with (s + 4)^2.")


def _one_rk4_step(k: float, step: float) -> float:
    """The result of one classic Runge-Kutta step of ``e' = -k e`` from ``e = 1``."""
    def rate(e):
        return -k * e

    s1 = rate(1.0)
    s2 = rate(1.0 + step * s1 / 2)
    s3 = rate(1.0 + step * s2 / 2)
    s4 = rate(1.0 + step * s3)
    return 1.0 + step * (s1 + 2 * s2 + 2 * s3 + s4) / 6


_SAMPLES = ((10.0, 0.01), (100.0, 0.02), (50.0, 0.05), (1.0, 0.5), (3.0, 1.0))


@checker("a Python function rk4_factor(k, tau) that returns a number")
def check_5(rk4_factor) -> Feedback:
    """Exercise 5 (code): a function for RK4's amplification factor of ``e' = -k e``.

    Parameters
    ----------
    rk4_factor : callable
        ``rk4_factor(k, tau) -> float``: the number that one RK4 step of
        length ``tau`` multiplies the error by.

    Returns
    -------
    Feedback
        Compared, at several ``(k, tau)``, with one RK4 step taken by hand
        here (Beshaw 2014, Eq. 27 with a scalar ``K``).
    """
    if isinstance(rk4_factor, type) or not callable(rk4_factor):
        raise AnswerFormError(f"`rk4_factor` should be a function of (k, tau), defined with def; got {rk4_factor!r}")
    for k, step in _SAMPLES:
        value = number(rk4_factor(k, step), name=f"rk4_factor({k:g}, {step:g})")
        reference = _one_rk4_step(k, step)
        if abs(value - reference) > 1e-12 * max(1.0, abs(reference)):
            z = k * step
            if math.isclose(value, 1.0 - z, rel_tol=1e-12, abs_tol=1e-12):
                hint = "that is Euler's factor 1 - k tau; RK4 keeps the Taylor polynomial of exp(-k tau) up to degree 4."
            elif math.isclose(value, math.exp(-z), rel_tol=1e-12):
                hint = "that is the exact flow's factor exp(-k tau); RK4 only keeps its Taylor polynomial up to degree 4."
            else:
                hint = "one RK4 step multiplies e by 1 - z + z^2/2 - z^3/6 + z^4/24 with z = k tau."
            return Feedback(False, f"rk4_factor({k:g}, {step:g}) = {value:.10g}, but one RK4 step gives {reference:.10g}: {hint}")
    return Feedback(True, "Your function matches one Runge-Kutta step taken by hand, at five (k, tau) pairs.")


@checker("prediction: True or False; reasoning: a sentence")
def check_6(prediction, reasoning) -> Feedback:
    """Exercise 6 (predict and justify): does RK4 with ``k tau = 3`` damp the residual?

    Scalar gain ``K = -300`` 1/s, step ``tau = 0.01`` s, classic RK4.

    Parameters
    ----------
    prediction : bool or {"yes", "no"}
        Whether the residual decays from step to step.
    reasoning : str
        Why, in a sentence or two.

    Returns
    -------
    Feedback
        Compared with the spectral radius that :func:`udk_notebooks.stability` computes.
    """
    answer = yes_no(prediction, name="prediction")
    text = justification(reasoning, name="reasoning")
    report = stabilization.stability("rk4", 0.01, [[-300.0]])
    decays = bool(report.spectral_radius < 1)
    model_answer = (f"for a scalar gain R_RK4(-k tau) = 1 - 3 + 9/2 - 27/6 + 81/24 = {report.spectral_radius:.4f} "
                    "in size, above one: k tau = 3 lies past RK4's bound 2.785 on the real axis, so the residual "
                    "grows although the exact flow e^(-k t) decays.")
    return predicted(answer == decays, text, model_answer,
                     "a stable K is not enough: the step must keep tau k inside the method's region.")
