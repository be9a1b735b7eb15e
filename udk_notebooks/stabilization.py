"""Constraint stabilization and its stability under fixed-step integrators.

Integrating ``A q'' = b`` keeps the constraints only at acceleration level, so
positions and velocities drift off them. Both schemes replace ``b`` by
``b + correction`` so that the constraint error obeys ``e' = E e`` and decays:
:class:`Baumgarte` asks ``phi'' + 2 alpha phi' + beta^2 phi = 0`` (holonomic
rows) and ``psi' + gamma psi = 0`` (nonholonomic rows); :class:`GainMatrix` is
Beshaw's ``psi' = K psi`` on the velocity residual of every row (Eqs. 18-19).
Rows are holonomic first (``phi(q, t) = 0``, differentiated twice), then
nonholonomic (``psi(q, q', t) = 0``, differentiated once).

A fixed step ``tau`` maps the error by ``R(tau E)`` (Beshaw, Eq. 22 for Euler,
Eq. 27 for RK4): the drift decays when its spectral radius is below one, and
Theorems 1-2 bound it at every step when its norm is below one.

References
----------
J. Baumgarte, "Stabilization of constraints and integrals of motion in
dynamical systems", Comput. Methods Appl. Mech. Eng. 1 (1972) 1-16.
A. W. Beshaw, "Dynamic equation of constrained mechanical system" (UDC 531.3,
received 26 June 2014), Eqs. (18)-(19), (22), (27), Theorems 1-2.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from numbers import Integral

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import brentq

from ._checks import as_finite_array
from .errors import UnstableGainError

__all__ = [
    "METHODS",
    "Baumgarte",
    "GainMatrix",
    "StabilityReport",
    "amplification_matrix",
    "check_gain",
    "stability",
    "stable_gain_interval",
]

METHODS = ("euler", "rk4")
"""Fixed-step methods whose amplification matrix is known; adaptive methods are not checked."""

_TAYLOR = {"euler": (1.0, 1.0), "rk4": (1.0, 1.0, 1 / 2, 1 / 6, 1 / 24)}  # R(z) = sum c_j z^j


def _check_method(method) -> str:
    if method not in METHODS:
        raise ValueError(f"`method` must be one of {METHODS}; got {method!r}")
    return method


def _check_step(step) -> float:
    try:
        step = float(step)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"`step` must be a positive number; got {step!r}") from exc
    if not (math.isfinite(step) and step > 0):
        raise ValueError(f"`step` must be positive and finite (the integrator's time step tau); got {step!r}")
    return step


def _check_gain_matrix(K, size: int | None = None) -> np.ndarray:
    try:
        scalar = np.ndim(K) == 0
    except ValueError:  # ragged nested lists
        scalar = False
    K = as_finite_array([[K]] if scalar else K, "K", 2)
    if K.shape[0] != K.shape[1]:
        raise ValueError(f"`K` must be square, one row and column per constraint; got shape {K.shape}")
    if size is not None and K.shape[0] != size:
        raise ValueError(f"`K` must have shape ({size}, {size}) to match the constraints; got shape {K.shape}")
    return K


def _check_count(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral) or value < 0:
        raise ValueError(f"`{name}` must be a non-negative integer (a number of constraint rows); got {value!r}")
    return int(value)


def _check_residuals(phi, velocity, m: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    if (
        isinstance(phi, np.ndarray) and isinstance(velocity, np.ndarray)  # the fast path of simulations
        and phi.ndim == velocity.ndim == 1 and phi.dtype == velocity.dtype == np.float64
        and phi.shape[0] <= velocity.shape[0] and (m is None or velocity.shape[0] == m)
        and np.isfinite(phi).all() and np.isfinite(velocity).all()
    ):
        return phi, velocity
    phi = as_finite_array(phi, "phi", 1)
    velocity = as_finite_array(velocity, "velocity", 1)
    if velocity.shape[0] < phi.shape[0] or (m is not None and velocity.shape != (m,)):
        want = f"({m},)" if m is not None else f"(m,) with m >= len(phi) = {phi.shape[0]}"
        raise ValueError(
            f"`velocity` must have shape {want}: phi' for the holonomic rows, then psi for the "
            f"nonholonomic rows; got shape {velocity.shape}"
        )
    return phi, velocity


def _polynomial(method: str, Z: np.ndarray) -> np.ndarray:
    """``R(Z)`` by Horner's rule, for a scalar array or a square matrix."""
    coef = _TAYLOR[method]
    if Z.ndim < 2:
        out = np.full_like(Z, coef[-1], dtype=complex if np.iscomplexobj(Z) else float)
        for c in coef[-2::-1]:
            out = c + Z * out
        return out
    eye = np.eye(Z.shape[0])
    out = coef[-1] * eye
    for c in coef[-2::-1]:
        out = c * eye + Z @ out
    return out


@dataclass(frozen=True)
class Baumgarte:
    """Baumgarte stabilization (Baumgarte 1972; design notes, "Stabilization").

    Attributes
    ----------
    alpha : float
        Damping of the holonomic error, ``phi'' + 2 alpha phi' + beta^2 phi = 0``.
        ``alpha = beta`` is critical damping. Must be finite and ``>= 0``.
    beta : float
        Stiffness of the holonomic error. Must be finite and ``>= 0``.
    gamma : float
        First-order gain of the nonholonomic error, ``psi' + gamma psi = 0``.
        Must be finite and ``>= 0``.
    """

    alpha: float = 0.0
    beta: float = 0.0
    gamma: float = 0.0

    def __post_init__(self):
        for name in ("alpha", "beta", "gamma"):
            value = getattr(self, name)
            try:
                gain = float(value)
            except (TypeError, ValueError) as exc:
                raise ValueError(f"`{name}` must be a number; got {value!r}") from exc
            if not (math.isfinite(gain) and gain >= 0):
                raise ValueError(
                    f"`{name}` must be finite and >= 0 (a negative gain makes the drift grow); got {value!r}"
                )
            object.__setattr__(self, name, gain)

    def correction(self, phi: ArrayLike, velocity: ArrayLike) -> np.ndarray:
        """Term to add to ``b``: ``-2 alpha phi' - beta^2 phi`` then ``-gamma psi``.

        Parameters
        ----------
        phi : array_like, shape (m_h,)
            Position residual of the holonomic rows.
        velocity : array_like, shape (m_h + m_n,)
            ``phi'`` for the holonomic rows, then ``psi`` for the nonholonomic rows.

        Returns
        -------
        ndarray, shape (m_h + m_n,)
        """
        phi, velocity = _check_residuals(phi, velocity)
        n_h = phi.shape[0]
        return np.concatenate([
            -2.0 * self.alpha * velocity[:n_h] - self.beta**2 * phi,
            -self.gamma * velocity[n_h:],
        ])

    def error_matrix(self, n_holonomic: int, n_nonholonomic: int) -> np.ndarray:
        """Matrix ``E`` of the error dynamics ``e' = E e``, ``e = (phi, phi', psi)``.

        Parameters
        ----------
        n_holonomic, n_nonholonomic : int
            Numbers of holonomic (``m_h``) and nonholonomic (``m_n``) rows.

        Returns
        -------
        ndarray, shape (2 m_h + m_n, 2 m_h + m_n)
            ``[[0, I, 0], [-beta^2 I, -2 alpha I, 0], [0, 0, -gamma I]]``; the
            holonomic eigenvalues are the roots of ``s^2 + 2 alpha s + beta^2``.
        """
        n_h = _check_count(n_holonomic, "n_holonomic")
        n_n = _check_count(n_nonholonomic, "n_nonholonomic")
        eye, zero = np.eye(n_h), np.zeros((n_h, n_h))
        companion = np.block([[zero, eye], [-self.beta**2 * eye, -2.0 * self.alpha * eye]])
        E = np.zeros((2 * n_h + n_n, 2 * n_h + n_n))
        E[: 2 * n_h, : 2 * n_h] = companion
        E[2 * n_h :, 2 * n_h :] = -self.gamma * np.eye(n_n)
        return E


@dataclass(frozen=True)
class GainMatrix:
    """Beshaw's stabilization ``psi' = K psi`` (Beshaw 2014, Eqs. 18-19).

    ``psi`` is the velocity-level residual of every row (``phi'`` for holonomic
    rows), so the velocity drift decays while a position offset ``phi`` may
    remain; use :class:`Baumgarte` to pull ``phi`` itself back to zero.

    Attributes
    ----------
    K : ndarray, shape (m, m)
        Gain matrix, stored as a read-only float copy. A scalar means ``(1, 1)``.
        The exact flow is stable when every eigenvalue has negative real part.
    """

    K: np.ndarray

    def __post_init__(self):
        K = _check_gain_matrix(self.K).copy()
        K.setflags(write=False)
        object.__setattr__(self, "K", K)

    def __eq__(self, other):
        return isinstance(other, GainMatrix) and np.array_equal(self.K, other.K)

    def __hash__(self):
        return hash((self.K.shape, self.K.tobytes()))

    def correction(self, phi: ArrayLike, velocity: ArrayLike) -> np.ndarray:
        """Term to add to ``b``: ``K psi`` (``phi`` is only checked for shape).

        Parameters
        ----------
        phi : array_like, shape (m_h,)
            Position residual of the holonomic rows (unused by this scheme).
        velocity : array_like, shape (m,)
            Velocity-level residual ``psi`` of all rows.

        Returns
        -------
        ndarray, shape (m,)
        """
        _, velocity = _check_residuals(phi, velocity, self.K.shape[0])
        return self.K @ velocity

    def error_matrix(self, n_holonomic: int, n_nonholonomic: int) -> np.ndarray:
        """``K`` itself, after checking that ``n_holonomic + n_nonholonomic == m``."""
        m = _check_count(n_holonomic, "n_holonomic") + _check_count(n_nonholonomic, "n_nonholonomic")
        return _check_gain_matrix(self.K, m).copy()


def amplification_matrix(method: str, step: float, K: ArrayLike) -> np.ndarray:
    """One-step map ``e_{k+1} = R(tau K) e_k`` of ``e' = K e``.

    Parameters
    ----------
    method : {"euler", "rk4"}
        Explicit Euler, ``R = I + tau K`` (Beshaw 2014, Eq. 22), or classic
        fourth-order Runge-Kutta, ``R = sum_{j<=4} (tau K)^j / j!`` (Eq. 27 with
        constant ``K``).
    step : float
        Time step ``tau > 0``.
    K : array_like, shape (m, m)
        Error-dynamics matrix (a scalar is read as ``(1, 1)``).

    Returns
    -------
    ndarray, shape (m, m)
    """
    method, step = _check_method(method), _check_step(step)
    return _polynomial(method, step * _check_gain_matrix(K))


@dataclass(frozen=True)
class StabilityReport:
    """Stability of the constraint error under one fixed-step method.

    Attributes
    ----------
    method : str
        ``"euler"`` or ``"rk4"``.
    step : float
        Time step ``tau``.
    spectral_radius : float
        ``max |R(tau lambda)|`` over the eigenvalues ``lambda`` of ``K``.
    norm : float
        Spectral (2-)norm of the amplification matrix ``R(tau K)``.
    bounded : bool
        ``spectral_radius < 1``: the drift decays for this method, step and ``K``.
    contractive : bool
        ``norm < 1``: the sufficient condition ``||R|| <= delta < 1`` of
        Beshaw's Theorems 1-2, under which the error never grows in one step.
    """

    method: str
    step: float
    spectral_radius: float
    norm: float
    bounded: bool
    contractive: bool


def stability(method: str, step: float, K: ArrayLike) -> StabilityReport:
    """Spectral radius and norm of :func:`amplification_matrix`.

    The spectral radius uses the spectral mapping ``eig R(tau K) = R(tau eig K)``,
    which is better conditioned than the eigenvalues of ``R`` when ``K`` is
    defective (critically damped Baumgarte).

    Parameters
    ----------
    method : {"euler", "rk4"}
    step : float
        Time step ``tau > 0``.
    K : array_like, shape (m, m)

    Returns
    -------
    StabilityReport
    """
    method, step, K = _check_method(method), _check_step(step), _check_gain_matrix(K)
    if K.shape[0] == 0:
        return StabilityReport(method, step, 0.0, 0.0, True, True)
    radius = float(np.max(np.abs(_polynomial(method, step * np.linalg.eigvals(K)))))
    norm = float(np.linalg.norm(_polynomial(method, step * K), 2))
    return StabilityReport(method, step, radius, norm, radius < 1.0, norm < 1.0)


@lru_cache(maxsize=None)
def _scalar_bound(method: str) -> float:
    """Root ``x > 0`` of ``|R(-x)| = 1``, bracketed by doubling from ``x = 1``."""
    def excess(x):
        return abs(float(_polynomial(method, np.array(-x)))) - 1.0

    hi = 2.0
    while excess(hi) <= 0:
        hi *= 2.0
    return brentq(excess, 1.0, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps)


def stable_gain_interval(method: str, step: float) -> tuple[float, float]:
    """Open interval of ``k`` for which the scalar gain ``K = -k`` is stable.

    ``|R(-k tau)| < 1`` holds for ``0 < k tau < x*``, where ``x*`` is found with
    :func:`scipy.optimize.brentq`: ``x* = 2`` for Euler and ``x* = 2.78529...``
    for RK4 (design notes, "Stabilization").

    Parameters
    ----------
    method : {"euler", "rk4"}
    step : float
        Time step ``tau > 0``.

    Returns
    -------
    tuple of float
        ``(0.0, x* / tau)``.
    """
    method, step = _check_method(method), _check_step(step)
    return 0.0, _scalar_bound(method) / step


NEUTRAL_RTOL = 1e-12
"""Spectral radii up to ``1 + NEUTRAL_RTOL`` count as neutral (not amplifying) in :func:`check_gain`."""


def check_gain(
    stabilization, method: str, step: float, n_holonomic: int, n_nonholonomic: int
) -> StabilityReport | None:
    """Report on a stabilization, or raise when it makes the drift grow.

    Parameters
    ----------
    stabilization : Baumgarte, GainMatrix or None
        ``None`` (no stabilization) is not checked.
    method : str
        ``"euler"`` or ``"rk4"`` are checked; any other name (an adaptive
        :func:`scipy.integrate.solve_ivp` method such as ``"RK45"``) is not.
    step : float
        Fixed time step ``tau > 0``.
    n_holonomic, n_nonholonomic : int
        Numbers of holonomic and nonholonomic rows.

    Returns
    -------
    StabilityReport or None
        The report when no error mode grows (spectral radius at most one:
        rows with a zero gain keep their drift); ``None`` when not checked.

    Raises
    ------
    UnstableGainError
        When the spectral radius of ``R(tau E)`` exceeds one; the message gives the
        stable range of a scalar gain for this step and a smaller step that works.
    ValueError
        For a bad argument, or ``"Euler"``/``"RK4"`` spelled in another case.
    """
    if stabilization is None or not isinstance(method, str) or method.lower() not in METHODS:
        return None
    if method not in METHODS:
        raise ValueError(f"`method` names are lower case: use {method.lower()!r}, not {method!r}")
    if not isinstance(stabilization, (Baumgarte, GainMatrix)):
        raise ValueError(f"`stabilization` must be a Baumgarte, a GainMatrix or None; got {stabilization!r}")
    step = _check_step(step)
    E = stabilization.error_matrix(n_holonomic, n_nonholonomic)
    report = stability(method, step, E)
    if report.spectral_radius <= 1.0 + NEUTRAL_RTOL:
        # Below one the drift decays; at one (a zero gain on some rows) it is left as it is:
        # only a gain that amplifies the error is refused.
        return report
    if isinstance(stabilization, Baumgarte):
        b = stabilization
        gain = f"Baumgarte(alpha={b.alpha:g}, beta={b.beta:g}, gamma={b.gamma:g})"
    else:
        gain = f"GainMatrix K with eigenvalues {np.array2string(np.linalg.eigvals(E), precision=4)}"
    hi = stable_gain_interval(method, step)[1]
    if isinstance(stabilization, GainMatrix):
        advice = f"scale K so that each real eigenvalue lies in (-{hi:.6g}, 0)"
    else:
        advice = f"use alpha = beta (critical damping) and gamma each in (0, {hi:.6g})"
    smaller = next((step / 2**j for j in range(1, 41) if stability(method, step / 2**j, E).bounded), None)
    fix = (f"or halve the step to {smaller!r}" if smaller is not None else
           "no smaller step helps: the error matrix has an eigenvalue with real part >= 0, "
           "so make every gain positive (every eigenvalue of the error matrix in the left half-plane)")
    raise UnstableGainError(
        f"{gain} is unstable with method={method!r} and step={step!r}: the constraint error's "
        f"amplification matrix has spectral radius {report.spectral_radius:.6g} > 1, so the drift grows. "
        f"For this step a scalar gain K = -k is stable only for 0 < k < {hi:.6g}; {advice}; {fix}"
    )
