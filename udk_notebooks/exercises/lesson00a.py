"""Checks for the exercises of lesson 00a, virtual work and Lagrange's equations.

Expected answers come from routes other than the lesson's formulas: a
generalized force from a central difference of the push's work, a line
integral by numerical quadrature, the student's Lagrangian against Newton's
law in Cartesian coordinates at several states, and a strain energy by
quadrature of the energy density. Sources: textbook chapter "Analytical
dynamics - an overview" (2003), Eqs. (3.17)-(3.19), (3.26), (3.34)-(3.39);
lecture slides "Multibody systems", chapter 9 (generalized force of a point
force, Example 9.6).
"""

from __future__ import annotations

import numpy as np
import sympy as sm
from scipy.integrate import quad
from sympy.physics.mechanics import dynamicsymbols

from ..model import TIME
from ._feedback import AnswerFormError, Feedback, checker, justification, number, yes_no

__all__ = ["check_1", "check_2", "check_3", "check_4", "check_5"]

_LENGTH, _ANGLE, _PUSH = 0.5, np.radians(30.0), 2.0  # Exercise 1: m, rad, N (horizontal, +x)
_MASS, _STIFFNESS = 0.5, 8.0  # Exercise 4: kg, N/m
_YOUNG, _SECTION, _BAR, _STRETCH = 210e9, 1e-4, 2.0, 1e-3  # Exercise 5: Pa, m^2, m, m

MODEL_JUSTIFICATION = (
    "With one coordinate the generalized force Q = P l depends on theta alone, and every function of one "
    "variable has an antiderivative: V(theta) = -P l theta is a potential, and the work over any swing out "
    "and back is zero. The curl test has no mixed derivatives to compare. The follower force needs two or "
    "more coordinates to be nonconservative (lesson Sec. 2, where dQ_1/dq_2 != dQ_2/dq_1); and V is not "
    "single-valued if the rod goes round: each full turn does the work 2 pi P l."
)


def _bob(angle: float) -> np.ndarray:
    return _LENGTH * np.array([np.sin(angle), -np.cos(angle)])


@checker("a number: the generalized force Q_theta in N m")
def check_1(Q_push) -> Feedback:
    """Exercise 1: the generalized force of a horizontal push on a pendulum bob (Eq. 3.19).

    Parameters
    ----------
    Q_push : float
        ``Q_theta`` in N m for ``l = 0.5 m``, ``theta = 30 deg``, a 2 N push along ``+x``.

    Returns
    -------
    Feedback
        Compared with the push's work per unit angle, by a central difference
        of the bob's position (not by the formula of Eq. 3.19).
    """
    value = number(Q_push, name="Q_push", unit="N m")
    step = 1e-6
    push = np.array([_PUSH, 0.0])
    expected = float(push @ (_bob(_ANGLE + step) - _bob(_ANGLE - step)) / (2 * step))
    if np.isclose(value, expected, rtol=1e-6):
        return Feedback(True, f"Q_theta = F . dx/dtheta = 2 l cos(theta) = {expected:.6g} N m.")
    if np.isclose(value, -expected, rtol=1e-6):
        return Feedback(False, "check the sign: pushing towards +x at theta = 30 deg helps the angle grow.")
    if np.isclose(value, _PUSH * _LENGTH, rtol=1e-6):
        return Feedback(False, "that is F l, the moment when the push is perpendicular to the rod; only the part "
                               "of the push along dx/dtheta = l (cos theta, sin theta) counts.")
    if np.isclose(value, _PUSH * _LENGTH * np.sin(_ANGLE), rtol=1e-6):
        return Feedback(False, "differentiate the bob's position (l sin theta, -l cos theta) by theta: its x part is "
                               "l cos theta, not l sin theta.")
    if np.isclose(value, _PUSH * _LENGTH * np.cos(30.0), rtol=1e-6):
        return Feedback(False, "numpy's cos takes radians: 30 degrees is np.radians(30.0).")
    if np.isclose(value, _PUSH, rtol=1e-6):
        return Feedback(False, "for an angle coordinate Q_theta is a moment (N m): multiply by dx/dtheta.")
    return Feedback(False, "use Eq. (3.19): Q_theta = F . dx/dtheta with x = (l sin theta, -l cos theta).")


@checker("True or False, and a reason as a string")
def check_2(follower_conservative, why) -> Feedback:
    """Exercise 2 (predict and justify): is a follower force on a single pendulum conservative?

    Parameters
    ----------
    follower_conservative : bool
        The prediction, for swings that do not go over the top.
    why : str
        The student's justification, shown back beside the model one.

    Returns
    -------
    Feedback
        The prediction is graded; the justification is not graded by
        machine, it is shown next to ``MODEL_JUSTIFICATION``.
    """
    prediction = yes_no(follower_conservative, name="follower_conservative")
    reason = justification(why, name="why")
    # One coordinate: Q(theta) = P l. The potential -P l theta exists; confirm its gradient symbolically.
    angle, P, length = sm.symbols("theta P l", real=True)
    conservative = sm.simplify(-(-P * length * angle).diff(angle) - P * length) == 0
    if prediction == conservative:
        return Feedback(True, f"Compare your reason (\"{reason}\") with this one: {MODEL_JUSTIFICATION}")
    return Feedback(False, "with one coordinate the force is Q(theta) = P l: try to write down a V(theta) whose "
                           "derivative is -P l. Where did the follower force of Sec. 2 fail the test, and "
                           "what did that need?")


@checker("a number: the work in J")
def check_3(work_cubic) -> Feedback:
    """Exercise 3: the work of ``F = (x y, -y^2)`` from (0, 0) to (2, 1) along ``y = x^3 / 8``.

    Parameters
    ----------
    work_cubic : float

    Returns
    -------
    Feedback
        Compared with the line integral by numerical quadrature.
    """
    value = number(work_cubic, name="work_cubic", unit="J")

    def integrand(s: float) -> float:
        xs, ys, slope = s, s**3 / 8, 3 * s**2 / 8
        return xs * ys - ys**2 * slope

    expected = quad(integrand, 0.0, 2.0, epsabs=1e-13)[0]
    if np.isclose(value, expected, rtol=1e-6):
        return Feedback(True, f"W = 7/15 = {expected:.6g} J: a third path, a third value. The field is not "
                              "conservative (its curl is -x), so the work depends on the path.")
    if np.isclose(value, 1.0, rtol=1e-6) or np.isclose(value, 2 / 3, rtol=1e-6):
        return Feedback(False, "that is the work along the straight line or the parabola of Sec. 6; this field "
                               "is not conservative, so the cubic gives its own value.")
    if np.isclose(value, -expected, rtol=1e-6):
        return Feedback(False, "check the sign of the -y^2 term and the direction, from (0, 0) to (2, 1).")
    return Feedback(False, "parametrize x = u, y = u^3/8, dy = 3u^2/8 du, and integrate F . dx for u from 0 to 2.")


def _accelerations(lagrangian: sm.Expr, q, qd, qdd, state) -> np.ndarray | None:
    """The accelerations that Lagrange's equations of ``lagrangian`` give at ``state``, or None."""
    rows = [lagrangian.diff(v).diff(TIME) - lagrangian.diff(c) for c, v in zip(q, qd)]
    unknowns = sm.symbols(f"a0:{len(q)}")
    # xreplace works top-down, so q'' and q' are replaced whole before q inside them
    values = {**dict(zip(qdd, unknowns)), **dict(zip([*q, *qd], map(sm.Float, state)))}
    rows = sm.Matrix([sm.sympify(row).xreplace(values) for row in rows])
    matrix = np.array(rows.jacobian(unknowns), dtype=float)
    rest = np.array(rows.xreplace(dict.fromkeys(unknowns, 0)), dtype=float).ravel()
    if abs(np.linalg.det(matrix)) < 1e-12:
        return None
    return np.linalg.solve(matrix, -rest)


def _newton_polar(state) -> np.ndarray:
    """(r'', phi'') from m x'' = -k x in Cartesian coordinates, read in polar components."""
    radius, angle, radius_rate, angle_rate = state
    position = radius * np.array([np.cos(angle), np.sin(angle)])
    acceleration = -_STIFFNESS / _MASS * position
    radial, tangential = np.array([np.cos(angle), np.sin(angle)]), np.array([-np.sin(angle), np.cos(angle)])
    # a = (r'' - r phi'^2) e_r + (r phi'' + 2 r' phi') e_phi
    return np.array([acceleration @ radial + radius * angle_rate**2,
                     (acceleration @ tangential - 2 * radius_rate * angle_rate) / radius])


def _kinetic_scale(lagrangian: sm.Expr, q, qd, states) -> float | None:
    """c with d^2 L / d qdot^2 = c diag(m, m r^2) at every state (L = c (T - V) + d/dt F), or None."""
    hessian = sm.hessian(lagrangian, qd)
    scales = []
    for radius, angle, radius_rate, angle_rate in states:
        values = {qd[0]: radius_rate, qd[1]: angle_rate, q[0]: radius, q[1]: angle}
        got = np.array(hessian.xreplace(values), dtype=float)
        want = np.diag([_MASS, _MASS * radius**2])
        scale = got[0, 0] / want[0, 0]
        if not np.allclose(got, scale * want, rtol=1e-9, atol=1e-12):
            return None
        scales.append(scale)
    return scales[0] if np.allclose(scales, scales[0], rtol=1e-9) else None


@checker("a sympy expression in r(t), phi(t) and their rates")
def check_4(lagrangian) -> Feedback:
    """Exercise 4 (code): the Lagrangian of a particle on a zero-length spring, in polar coordinates.

    Parameters
    ----------
    lagrangian : sympy expression
        ``L(r, phi, r', phi')`` with ``r, phi = dynamicsymbols("r phi")``,
        ``m = 0.5 kg`` and ``k = 8 N/m`` as numbers.

    Returns
    -------
    Feedback
        The accelerations from its Lagrange equations must match Newton's law
        ``m x'' = -k x`` in Cartesian coordinates at five states, and its
        second derivatives in the velocities must be the mass matrix
        ``diag(m, m r^2)``: ``-L`` or ``2 L`` give the same motion but are not
        ``T - V``. A total time derivative added to ``L`` is accepted.
    """
    if not isinstance(lagrangian, sm.Expr) or isinstance(lagrangian, sm.MatrixBase):
        raise AnswerFormError(f"`lagrangian` should be one sympy expression in r and phi; got {lagrangian!r}")
    r, phi = dynamicsymbols("r phi")
    q, qd, qdd = [r, phi], [r.diff(TIME), phi.diff(TIME)], [r.diff(TIME, 2), phi.diff(TIME, 2)]
    unknown = {str(s) for s in lagrangian.free_symbols if s != TIME}
    functions = {f for f in lagrangian.atoms(sm.Function) if isinstance(f, sm.core.function.AppliedUndef)}
    if unknown & {"r", "phi"}:
        raise AnswerFormError("`lagrangian` uses plain symbols r or phi: use the functions of time of the answer "
                              "cell, r, phi = dynamicsymbols(\"r phi\"), and r.diff(t) for the rate")
    if unknown or functions - {r, phi}:
        names = sorted(unknown | {str(f) for f in functions - {r, phi}})
        raise AnswerFormError(f"`lagrangian` may contain only r, phi, their rates and numbers; it has "
                              f"{', '.join(names)} (put the numbers m = 0.5 and k = 8 in)")
    if lagrangian.has(*qdd):
        return Feedback(False, "a Lagrangian depends on positions and velocities, not on accelerations.")
    states = [(1.0, 0.0, 0.0, 1.0), (0.7, 1.2, -0.4, 2.0), (2.0, -0.5, 1.5, -0.3), (1.3, 2.8, 0.2, 0.0),
              (0.4, -2.0, -1.0, 3.0)]
    for state in states:
        got = _accelerations(lagrangian, q, qd, qdd, state)
        if got is None:
            return Feedback(False, "your L does not fix both accelerations: the kinetic energy needs r'^2 and "
                                   "r^2 phi'^2.")
        want = _newton_polar(state)
        if not np.allclose(got, want, rtol=1e-9, atol=1e-9):
            radius, _, radius_rate, angle_rate = state
            if np.isclose(got[0], want[0] + 2 * _STIFFNESS / _MASS * radius):
                return Feedback(False, "the spring pushes outwards in your equations: L = T - V, not T + V.")
            if abs(angle_rate) > 0 and np.isclose(got[0], want[0] - radius * angle_rate**2):
                return Feedback(False, "the centrifugal term r phi'^2 is missing: in polar coordinates the speed "
                                       "squared is r'^2 + r^2 phi'^2.")
            return Feedback(False, f"at r = {state[0]}, phi = {state[1]}, r' = {radius_rate}, phi' = {angle_rate} "
                                   f"your L gives (r'', phi'') = {np.round(got, 4)}, Newton's law {np.round(want, 4)}.")
    scale = _kinetic_scale(lagrangian, q, qd, states)
    if scale is None or not np.isclose(scale, 1.0, rtol=1e-9):
        # c (T - V) has the same Lagrange equations for every c != 0, but it is not T - V: its energies are wrong
        if scale is not None and np.isclose(scale, -1.0, rtol=1e-9):
            return Feedback(False, "your equations are right, but your L is V - T: the Lagrangian is L = T - V.")
        times = "" if scale is None else f" it is {scale:.4g} times T - V:"
        return Feedback(False, f"your equations of motion are right, but your L is not T - V;{times} the kinetic part "
                               "must be T = m (r'^2 + r^2 phi'^2) / 2 with m = 0.5 kg (check the factor 1/2 and m).")
    return Feedback(True, "Your Lagrangian gives Newton's law at every state tried: r'' = r phi'^2 - (k/m) r and "
                          "d/dt(m r^2 phi') = 0 (the angular momentum is conserved).")


@checker("a number: the strain energy in J")
def check_5(strain_energy) -> Feedback:
    """Exercise 5: strain energy of a steel bar stretched uniformly (Example 3.1, Eq. 3.39).

    Parameters
    ----------
    strain_energy : float
        In J, for ``E = 210 GPa``, ``A = 1 cm^2``, ``L = 2 m``, stretch 1 mm.

    Returns
    -------
    Feedback
        Compared with ``int_0^L E A u'(x)^2 / 2 dx`` by quadrature, ``u = delta x / L``.
    """
    value = number(strain_energy, name="strain_energy", unit="J")
    strain = _STRETCH / _BAR  # u'(x) of the uniform stretch

    def density(_x: float) -> float:
        return 0.5 * _YOUNG * _SECTION * strain**2

    expected = quad(density, 0.0, _BAR)[0]
    stiffness = _YOUNG * _SECTION / _BAR
    if np.isclose(value, expected, rtol=1e-6):
        return Feedback(True, f"U = E A delta^2 / (2 L) = {expected:.6g} J, the energy of a spring of stiffness "
                              f"E A / L = {stiffness:.3g} N/m.")
    if np.isclose(value, 2 * expected, rtol=1e-6):
        return Feedback(False, "the factor 1/2 is missing: the force grows from zero while the bar stretches.")
    if np.isclose(value, stiffness * _STRETCH, rtol=1e-6):
        return Feedback(False, "that is the axial force E A delta / L in N, not the energy.")
    if any(np.isclose(value, expected * factor, rtol=1e-6) for factor in (1e-6, 1e6, 1e4, 1e-4, 1e3, 1e-3)):
        return Feedback(False, "check the units: GPa = 1e9 Pa, 1 cm^2 = 1e-4 m^2, 1 mm = 1e-3 m.")
    return Feedback(False, "use Eq. (3.39) with the uniform strain delta / L: U = E A delta^2 / (2 L).")
