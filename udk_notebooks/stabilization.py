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

from ._checks import as_finite_array
from .errors import UnstableGainError

__all__ = [
    "DRIFT_BOUND",
    "GROWTH_TOL",
    "STEP_MARGIN",
    "METHODS",
    "Baumgarte",
    "GainMatrix",
    "Linearization",
    "StabilityReport",
    "SystemStabilityReport",
    "amplification_matrix",
    "check_gain",
    "jacobian",
    "linearize",
    "spectral_radii",
    "stability",
    "stable_gain_interval",
    "system_stability",
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
    """Residual vectors, shapes (m_h,) and (m,), or stacks of them, shapes (N, m_h) and (N, m) (one row per sample)."""
    if (
        isinstance(phi, np.ndarray) and isinstance(velocity, np.ndarray)  # the fast path of simulations
        and phi.ndim == velocity.ndim and phi.ndim in (1, 2) and phi.dtype == velocity.dtype == np.float64
        and phi.shape[:-1] == velocity.shape[:-1]
        and phi.shape[-1] <= velocity.shape[-1] and (m is None or velocity.shape[-1] == m)
        and _all_finite(phi) and _all_finite(velocity)
    ):
        return phi, velocity
    try:  # a 2-D velocity asks for a stack of samples; anything else is checked as one sample
        ndim = 2 if np.ndim(velocity) == 2 else 1
    except ValueError:  # a ragged nesting: as_finite_array names it
        ndim = 1
    phi = as_finite_array(phi, "phi", ndim)
    velocity = as_finite_array(velocity, "velocity", ndim)
    if ndim == 2 and phi.shape[0] != velocity.shape[0]:
        raise ValueError(
            f"`phi` and `velocity` must hold the same number of samples (rows); got shapes {phi.shape} "
            f"and {velocity.shape}"
        )
    if velocity.shape[-1] < phi.shape[-1] or (m is not None and velocity.shape[-1] != m):
        want = f"({m},)" if m is not None else f"(m,) with m >= len(phi) = {phi.shape[-1]}"
        raise ValueError(
            f"`velocity` must have shape {want} (or (N, {m if m is not None else 'm'}) for N samples): phi' "
            f"for the holonomic rows, then psi for the nonholonomic rows; got shape {velocity.shape}"
        )
    return phi, velocity


def _all_finite(x: np.ndarray) -> bool:
    """Whether every entry of the float array ``x`` is finite.

    For one sample (a few entries, at every right-hand side of a stabilized
    run) the sum of its Python floats says it at a tenth of the cost of
    ``isfinite().all()``: it is finite only when every entry is (a sum that
    overflows merely sends the residuals to the full check).
    """
    if x.ndim == 1 and x.size <= 64:
        return math.isfinite(sum(x.tolist()))
    return bool(np.isfinite(x).all())


def _polynomial(method: str, Z: np.ndarray) -> np.ndarray:
    """``R(Z)`` by Horner's rule, for a scalar array or a square matrix."""
    coef = _TAYLOR[method]
    if Z.ndim < 2:
        return _polynomial_values(method, Z)
    eye = np.eye(Z.shape[0])
    out = coef[-1] * eye
    for c in coef[-2::-1]:
        out = c * eye + Z @ out
    return out


def _polynomial_values(method: str, Z: np.ndarray) -> np.ndarray:
    """``R(z)`` by Horner's rule for every entry of ``Z`` (any shape)."""
    coef = _TAYLOR[method]
    out = np.full_like(Z, coef[-1], dtype=complex if np.iscomplexobj(Z) else float)
    for c in coef[-2::-1]:
        out = c + Z * out
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
        phi : array_like, shape (m_h,) or (N, m_h)
            Position residual of the holonomic rows (one row per sample for N samples).
        velocity : array_like, shape (m_h + m_n,) or (N, m_h + m_n)
            ``phi'`` for the holonomic rows, then ``psi`` for the nonholonomic rows.

        Returns
        -------
        ndarray, shape (m_h + m_n,) or (N, m_h + m_n)
        """
        fast = self._one_sample(phi, velocity)
        if fast is not None:
            return fast
        phi, velocity = _check_residuals(phi, velocity)
        n_h = phi.shape[-1]
        out = np.multiply(velocity, -self.gamma)  # the nonholonomic rows; the holonomic ones are replaced
        out[..., :n_h] = velocity[..., :n_h] * (-2.0 * self.alpha) - self._beta_squared() * phi
        return out

    def _one_sample(self, phi, velocity) -> np.ndarray | None:
        """:meth:`correction` of one sample of a few rows in Python floats, or None for the general route.

        At every right-hand side of a stabilized run (a quarter of the cost of
        the numpy route there): each entry is the same IEEE product and
        difference as the numpy route's, so the numbers are the same to the last
        bit. A sample with a non-finite entry, gain or result is left to the
        numpy route, which checks, warns and explains.
        """
        if not (type(phi) is np.ndarray and type(velocity) is np.ndarray and phi.ndim == velocity.ndim == 1
                and phi.dtype == velocity.dtype == np.float64 and phi.size <= velocity.size <= 64):
            return None
        phi_rows, velocity_rows = phi.tolist(), velocity.tolist()
        damping, stiffness = -2.0 * self.alpha, self._beta_squared()
        out = [value * damping - stiffness * error for value, error in zip(velocity_rows, phi_rows)]
        if len(velocity_rows) > len(out):
            first_order = -self.gamma
            out += [value * first_order for value in velocity_rows[len(out):]]
        # A non-finite row or gain makes some entry non-finite (inf * 0 is a nan), and so does an overflow, which
        # Python floats make in silence where numpy warns: such a sample goes the numpy route, which gives the
        # same numbers with its checks and warnings. (A sum that overflows merely sends a sample there too.)
        if not math.isfinite(sum(out)):
            return None
        return np.array(out, dtype=float)

    def _beta_squared(self) -> float:
        """``beta^2``, infinite past about 1.3e154 (a product of Python floats overflows to inf; ``**`` would raise)."""
        return self.beta * self.beta

    def error_matrix(self, n_holonomic: int, n_nonholonomic: int) -> np.ndarray:
        """Matrix ``E`` of the error dynamics ``e' = E e``, ``e = (phi, phi', psi)``.

        Parameters
        ----------
        n_holonomic, n_nonholonomic : int
            Numbers of holonomic (``m_h``) and nonholonomic (``m_n``) rows.

        Returns
        -------
        ndarray, shape (2 m_h + m_n, 2 m_h + m_n)
            ``[[0, I, 0], [-beta^2 I, -2 alpha I, 0], [0, 0, -gamma I]]`` (with an
            infinite entry when ``beta^2`` or ``2 alpha`` overflows); the
            holonomic eigenvalues are the roots of ``s^2 + 2 alpha s + beta^2``.
        """
        return self.error_matrices(np.array([[self.alpha, self.beta, self.gamma]]), n_holonomic, n_nonholonomic)[0]

    @staticmethod
    def error_matrices(gains: ArrayLike, n_holonomic: int, n_nonholonomic: int) -> np.ndarray:
        """:meth:`error_matrix` of many Baumgarte gains at once (a sweep's gain check).

        Parameters
        ----------
        gains : array_like, shape (S, 3)
            One row ``(alpha, beta, gamma)`` per gain, each finite and >= 0.
        n_holonomic, n_nonholonomic : int
            Numbers of holonomic and nonholonomic rows.

        Returns
        -------
        ndarray, shape (S, 2 m_h + m_n, 2 m_h + m_n)
        """
        n_h = _check_count(n_holonomic, "n_holonomic")
        n_n = _check_count(n_nonholonomic, "n_nonholonomic")
        gains = as_finite_array(gains, "gains", 2)
        if gains.shape[1:] != (3,) or not np.all(gains >= 0):
            raise ValueError(f"`gains` must have one row (alpha, beta, gamma) of gains >= 0 per member; got shape "
                             f"{gains.shape}")
        E = np.zeros((gains.shape[0], 2 * n_h + n_n, 2 * n_h + n_n))
        holonomic, rate, nonholonomic = np.arange(n_h), np.arange(n_h, 2 * n_h), np.arange(2 * n_h, 2 * n_h + n_n)
        with np.errstate(over="ignore"):  # beta^2 past about 1.3e154 is infinite (check_gain says so)
            E[:, holonomic, rate] = 1.0
            E[:, rate, holonomic] = -(gains[:, 1:2] ** 2)
            E[:, rate, rate] = -2.0 * gains[:, 0:1]
            E[:, nonholonomic, nonholonomic] = -gains[:, 2:3]
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
        phi : array_like, shape (m_h,) or (N, m_h)
            Position residual of the holonomic rows (unused by this scheme).
        velocity : array_like, shape (m,) or (N, m)
            Velocity-level residual ``psi`` of all rows (one row per sample for N samples).

        Returns
        -------
        ndarray, shape (m,) or (N, m)
        """
        _, velocity = _check_residuals(phi, velocity, self.K.shape[0])
        return self.K @ velocity if velocity.ndim == 1 else velocity @ self.K.T

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
    radius = float(spectral_radii(method, step, K[None])[0])
    with np.errstate(over="ignore", invalid="ignore"):  # a huge gain: R overflows, and is then unbounded
        amplification = _polynomial(method, step * K)
    norm = float(np.linalg.norm(amplification, 2)) if np.all(np.isfinite(amplification)) else math.inf
    return StabilityReport(method, step, radius, norm, radius < 1.0, norm < 1.0)


def spectral_radii(method: str, step: float, E: ArrayLike) -> np.ndarray:
    """The spectral radius of ``R(tau E)`` for each of a stack of matrices: :func:`stability`'s, many at once.

    By the spectral mapping ``eig R(tau E) = R(tau eig E)`` (Beshaw 2014,
    Eqs. 22 and 27 for the error dynamics). :func:`stability` takes its radius
    from here, so a sweep that checks all its gains at once decides each as
    :func:`check_gain` does.

    Parameters
    ----------
    method : {"euler", "rk4"}
    step : float
        Time step ``tau > 0``.
    E : array_like, shape (S, m, m)
        A stack of error matrices (:meth:`Baumgarte.error_matrices`); an
        entry that is not finite (an overflowing gain) gives an infinite radius.

    Returns
    -------
    ndarray, shape (S,)
        ``inf`` where ``R`` overflows (no bound).
    """
    method, step = _check_method(method), _check_step(step)
    E = np.asarray(E, dtype=float)
    if E.ndim != 3 or E.shape[1] != E.shape[2]:
        raise ValueError(f"`E` must be a stack of square matrices, shape (S, m, m); got shape {E.shape}")
    radius = np.full(E.shape[0], math.inf)
    finite = np.isfinite(E).all(axis=(1, 2))
    if not E.shape[1]:
        radius[:] = 0.0
    elif finite.any():
        with np.errstate(over="ignore", invalid="ignore"):  # a huge gain: R overflows, and is then unbounded
            values = np.abs(_polynomial_values(method, step * np.linalg.eigvals(E[finite])))
            radius[finite] = values.max(axis=1)
    return np.where(radius < math.inf, radius, math.inf)  # overflow (inf) or inf - inf (nan): no bound


@lru_cache(maxsize=None)
def _scalar_bound(method: str) -> float:
    """Root ``x > 0`` of ``|R(-x)| = 1``, bracketed by doubling from ``x = 1``."""
    from scipy.optimize import brentq  # here, not at the top: scipy.optimize costs a cold start 0.15 s

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


def _gain_name(stabilization) -> str:
    if isinstance(stabilization, Baumgarte):
        b = stabilization
        return f"Baumgarte(alpha={b.alpha:g}, beta={b.beta:g}, gamma={b.gamma:g})"
    return f"GainMatrix K with eigenvalues {np.array2string(np.linalg.eigvals(stabilization.K), precision=4)}"


def _largest_stable_step(method: str, step: float, E: np.ndarray) -> tuple[float, float] | None:
    """``(tau_max, example)``: the boundary of the stable steps below ``step`` and a binary fraction of ``step`` below it.

    ``example`` is ``step / 2**j`` for the smallest ``j`` with a bounded
    ``R(tau E)``; ``tau_max`` is the boundary between ``example`` and
    ``2 * example``, found by bisection. None when no step down to
    ``step / 2**40`` is stable (an eigenvalue of ``E`` with real part >= 0).
    """
    j = next((j for j in range(1, 41) if stability(method, step / 2**j, E).bounded), None)
    if j is None:  # a gain far too large for this step: start the search near |tau lambda| = x*
        fastest = float(np.abs(np.linalg.eigvals(E)).max(initial=0.0))
        if not 0 < fastest < math.inf:
            return None
        step = 2 * _scalar_bound(method) / fastest
        j = next((j for j in range(1, 41) if stability(method, step / 2**j, E).bounded), None)
        if j is None:
            return None
    lo, hi = step / 2**j, step / 2 ** (j - 1)
    for _ in range(60):
        if hi - lo <= 1e-12 * hi:
            break
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if stability(method, mid, E).bounded else (lo, mid)
    return lo, step / 2**j


def check_gain(
    stabilization, method: str, step: float, n_holonomic: int, n_nonholonomic: int
) -> StabilityReport | None:
    """Report on a stabilization's error dynamics, or raise when they do not decay.

    This is the condition on the constraint error alone (Beshaw 2014,
    Eqs. 18-19, 22, 27 and Theorems 1-2): the spectral radius of ``R(tau E)``
    must be below one. It is necessary, not sufficient: the error is coupled
    to the motion, which the step may amplify too; :func:`system_stability`
    judges the whole stabilized system.

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
        The report when ``bounded`` (spectral radius below one); ``None`` when
        not checked.

    Raises
    ------
    UnstableGainError
        When the spectral radius of ``R(tau E)`` is one or more (``bounded`` is
        false), so the drift is not pulled back: a radius above one amplifies
        it, a radius of one (a zero gain, or ``alpha = beta = 1 / tau`` for
        Euler, a defective eigenvalue of ``R``) lets it grow like a power of
        the step count. The message gives the stable range of a scalar gain for
        this step and the largest stable step, with an example below it.
    ValueError
        For a bad argument, or ``"Euler"``/``"RK4"`` spelled in another case.
    """
    if stabilization is None or not isinstance(method, str) or method.lower() not in METHODS:
        return None
    if method not in METHODS:
        raise ValueError(f"`method` names are lower case: use {method.lower()!r}, not {method!r}")
    _check_stabilization(stabilization)
    step = _check_step(step)
    E = stabilization.error_matrix(n_holonomic, n_nonholonomic)
    if not np.all(np.isfinite(E)):
        raise UnstableGainError(
            f"{_gain_name(stabilization)} is unstable with method={method!r} and every usable step: its error "
            "matrix overflows the floating-point range (beta^2 or 2 alpha above about 1.8e308), so a stable step "
            "would have to be below about 2 / beta or 1 / alpha. Use gains of the size of 1 / step, or pass "
            "allow_unstable=True to simulate to run it anyway")
    report = stability(method, step, E)
    if report.bounded:
        return report
    hi = stable_gain_interval(method, step)[1]
    if isinstance(stabilization, GainMatrix):
        advice = f"scale K so that each real eigenvalue lies in (-{hi:.6g}, 0)"
    else:
        advice = f"use alpha = beta (critical damping) and gamma each in (0, {hi:.6g})"
    found = _largest_stable_step(method, step, E)
    if found is None and np.linalg.eigvals(E).real.max(initial=-1.0) < 0:
        fix = ("no step down to a 2^40-th of this one is stable: the gains are far too large for the method "
               "(its stable steps are about 1 / gain and below); choose gains of the size of 1 / step")
    elif found is None:
        fix = ("no smaller step helps: the error matrix has an eigenvalue with real part >= 0, "
               "so make every gain positive (every eigenvalue of the error matrix in the left half-plane)")
        fix += _zero_gain_note(stabilization, n_holonomic, n_nonholonomic)
    else:
        tau_max, example = found
        ratio = step / example
        fix = (f"or take a step below {tau_max:.6g}, for example {example!r} "
               f"(the step divided by {round(ratio) if ratio < 1e9 else format(ratio, '.6g')})")
    relation = "> 1, so the drift grows" if report.spectral_radius > 1.0 else "= 1, so the drift is not pulled back"
    raise UnstableGainError(
        f"{_gain_name(stabilization)} is unstable with method={method!r} and step={step!r}: the constraint "
        f"error's amplification matrix has spectral radius {report.spectral_radius:.6g} {relation}. "
        f"For this step a scalar gain K = -k is stable only for 0 < k < {hi:.6g}; {advice}; {fix}. "
        "Pass allow_unstable=True to simulate to run it anyway"
    )


def _zero_gain_note(stabilization, n_holonomic: int, n_nonholonomic: int) -> str:
    """Which zero Baumgarte gain leaves a drift in place (the eigenvalue 0 of ``E``), or ``""``.

    A sweep over a gain's range from 0 meets these runs as a refused row; the message says why.
    """
    if not isinstance(stabilization, Baumgarte):
        return ""
    notes = []
    if n_holonomic and stabilization.beta == 0:
        notes.append("beta = 0 leaves the position drift phi where it is (phi'' + 2 alpha phi' = 0 has the root "
                     "s = 0; with alpha = 0 too, phi grows like t, as without stabilization)")
    if n_nonholonomic and stabilization.gamma == 0:
        notes.append("gamma = 0 leaves the velocity drift psi where it is (psi' = 0)")
    return "".join(f"; {note}" for note in notes)


def _check_stabilization(stabilization):
    if not isinstance(stabilization, (Baumgarte, GainMatrix)):
        raise ValueError(f"`stabilization` must be a Baumgarte or a GainMatrix; got {stabilization!r}")


# --- the whole stabilized system ------------------------------------------------------------

SAMPLES = 21
"""Linearization points of :func:`linearize`: the initial state and 20 more, equally spaced in time."""

GROWTH_TOL = 2.0
"""Largest predicted growth of the state over the run's horizon that :func:`system_stability` accepts.

A linear prediction is only a prediction, and the test systems show why the
allowance must be small: Euler on the Cartesian pendulum released at 1 rad
(step 0.01, Baumgarte ``alpha = beta = 5``) is predicted to grow by 3.3 in
20 s; the extra energy carries the bob over the top, the speed and with it
the growth per step keep rising, and the run overflows. Below a total growth
of two, the runs of ``tests/test_stabilization.py`` stay on their
constraints (see :data:`DRIFT_BOUND`).
"""

STEP_MARGIN = 1.5
"""The whole-system check of :func:`system_stability` judges the step lengthened by this factor.

``tau lambda`` must lie inside the method's stability region (in the sense
of a bounded growth, :data:`GROWTH_TOL`) with room to spare: the
linearization is taken along an accurate reference run, while a fixed-step
run drifts off it, and a mode just inside the region at the reference can
leave it there. Measured on the Cartesian pendulum (issue 22): with every
mode of the Jacobian counted, a random search of 419 runs (Euler and RK4,
steps 0.002 to 0.12 s, gains 0.2 to 80 1/s, lengths 0.3 to 2 m, release
angles and rates, 5 to 20 s) found accepted runs that broke
:data:`DRIFT_BOUND` with a factor of 1 and 1.1, none with 1.2 or more; 1.5
leaves room for what that search did not meet. The price: many bounded runs
are refused too (the check is sufficient for the runs measured, far from
necessary).
"""

DRIFT_BOUND = 1.0
"""Drift that accepted runs of the Cartesian pendulum stay below, in units of ``l^2``: bounded, not accurate.

Accepted means both checks of :func:`system_stability` pass; then the drift
``|phi|``, ``phi = x^2 + y^2 - l^2``, stays below ``l^2`` (checked in
``tests/test_divergence.py`` over the step and gain grid of lesson 2's explorer
and by hypothesis over random gains, steps and release angles, and in
``tests/test_fuzz_findings.py`` over lengths, gravities and release rates too).
The checks are about growth, not accuracy: Euler's small energy gain per step
keeps feeding the drift, and the worst accepted run of the search behind
:data:`STEP_MARGIN` reached ``0.14 l^2`` (Euler, step 0.0075 s,
``alpha = 56.7, beta = 3.5``, l = 2 m, 5 s). A smaller drift needs a smaller
step or a stronger gain. A measured property, not a theorem.
"""

REFERENCE_RTOL = 1e-6
"""Relative tolerance of the reference run along which :func:`linearize` linearizes."""


def _compiled(model):
    from .compiled import CompiledModel
    from .model import Model

    if isinstance(model, Model):
        return model.compile()
    if isinstance(model, CompiledModel):
        return model
    raise ValueError(f"`model` must be a Model or a CompiledModel; got {type(model).__name__}")


def _right_hand_side(cm, p, stabilization, modes):
    """``f(t, y)`` of ``y = (q, q')`` with the stabilization's correction in ``b`` (as in ``simulate``)."""
    n = cm.n

    def f(t, y):
        q, qd = y[:n], y[n:]
        correction = None if stabilization is None else stabilization.correction(*cm.residuals(t, q, qd, p))
        return np.concatenate([qd, cm.solve_modes(t, q, qd, p, modes, correction)[0].qdd])

    return f


def _difference_jacobian(g, y: np.ndarray) -> np.ndarray:
    """Central differences of ``g`` at ``y``, relative steps ``eps^(1/3)`` (error ``O(eps^(2/3))``)."""
    h = np.finfo(float).eps ** (1 / 3) * np.maximum(1.0, np.abs(y))
    columns = []
    for j in range(y.size):
        up, down = y.copy(), y.copy()
        up[j] += h[j]
        down[j] -= h[j]
        columns.append((np.asarray(g(up)) - np.asarray(g(down))) / (up[j] - down[j]))
    return np.column_stack(columns) if columns else np.zeros((0, 0))


def _state_arguments(model, t, q, qd, stabilization, params):
    cm = _compiled(model)
    if stabilization is not None:
        _check_stabilization(stabilization)
    q, qd = cm.check_state(q, qd)
    p = cm.parameters(params)
    try:
        t = float(t)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"`t` must be a finite number; got {t!r}") from exc
    if not math.isfinite(t):
        raise ValueError(f"`t` must be a finite number; got {t!r}")
    return cm, t, q, qd, p


def jacobian(model, t: float, q: ArrayLike, qd: ArrayLike, *, stabilization=None, params: dict | None = None) -> np.ndarray:
    """Numerical Jacobian of the first-order right-hand side ``y' = f(t, y)``, ``y = (q, q')``.

    ``f`` is what :func:`udk_notebooks.simulate` integrates: ``q''`` from the
    Udwadia-Kalaba equation with the stabilization's correction added to
    ``b`` (friction contacts kept in the modes of this state). Central
    differences with relative steps ``eps^(1/3)``: ``4 n`` evaluations.

    Parameters
    ----------
    model : Model or CompiledModel
    t : float
    q, qd : array_like, shape (n,)
    stabilization : Baumgarte or GainMatrix, optional
    params : dict, optional
        Parameter values by name.

    Returns
    -------
    ndarray, shape (2 n, 2 n)
        ``df/dy``; its top right block is the identity.
    """
    cm, t, q, qd, p = _state_arguments(model, t, q, qd, stabilization, params)
    f = _right_hand_side(cm, p, stabilization, cm.friction_modes(t, q, qd, p))
    return _difference_jacobian(lambda y: f(t, y), np.concatenate([q, qd]))


def _growth(method: str, step: float, points: np.ndarray, weights: np.ndarray) -> tuple[float, np.ndarray]:
    """Predicted peak log growth during the run, and ``max |R(tau lambda)|`` per linearization point.

    ``points`` has shape (S, k): eigenvalues at S points, point ``s`` standing
    for ``weights[s]`` steps. The growth is the largest partial product of the
    factors from the start (not the product over the whole run): an early
    stretch that amplifies by 5 is not undone by a later one that damps, since
    by then the run has left the reference it was linearized along.
    """
    factors = np.abs(_polynomial(method, step * points.ravel())).reshape(points.shape)
    radius = factors.max(axis=1, initial=0.0)
    partial = np.cumsum(weights * np.log(np.maximum(radius, 1e-300)))
    return float(partial.max(initial=0.0)), radius


@dataclass(frozen=True, eq=False)
class Linearization:
    """The stabilized system linearized along a reference run (see :func:`linearize`).

    Attributes
    ----------
    stabilization : Baumgarte or GainMatrix
    error_matrix : ndarray, shape (k, k)
        ``E`` of the error dynamics ``e' = E e`` (Beshaw 2014, Eq. 19).
    times : ndarray, shape (S,)
        Linearization times; ``times[0]`` is the initial time.
    eigenvalues : ndarray of complex, shape (S, 2 n)
        Eigenvalues of ``df/dy`` at each point, motion modes first.
    n_motion : int
        How many eigenvalues per point belong to the motion: ``2 n - m_h - m``,
        those whose eigenvectors change the constraint residuals least.
    t_span : tuple of float
        The horizon of the run.
    """

    stabilization: object
    error_matrix: np.ndarray
    times: np.ndarray
    eigenvalues: np.ndarray
    n_motion: int
    t_span: tuple

    @property
    def motion_eigenvalues(self) -> np.ndarray:
        """Eigenvalues of the motion modes, shape (S, n_motion)."""
        return self.eigenvalues[:, : self.n_motion]

    def report(self, method: str, step: float, growth_tol: float = GROWTH_TOL) -> "SystemStabilityReport":
        """Judge a fixed-step run with ``method`` and ``step`` (see :func:`system_stability`)."""
        method, step = _check_method(method), _check_step(step)
        growth_tol = float(growth_tol)
        if not (math.isfinite(growth_tol) and growth_tol >= 1.0):
            raise ValueError(f"`growth_tol` must be a finite number >= 1 (a growth factor); got {growth_tol!r}")
        t0, tf = self.t_span
        n_steps = max(1, int(round((tf - t0) / step)))
        error = stability(method, step, self.error_matrix)
        log_motion, radii = self._log_growth(method, step, n_steps)
        log_error = self._log_error(method, step, n_steps)
        log_state = max(log_motion, log_error)
        # Each step's fresh constraint error is quadratic in the velocities (b is), so a motion that
        # grows by G feeds the drift G^2 more; the error dynamics multiply on top when they amplify.
        log_drift = 2.0 * max(log_motion, 0.0) + max(log_error, 0.0)
        failed = []
        if not error.bounded:
            failed.append("error dynamics")
        if log_state > math.log(growth_tol):
            failed.append("whole system")
        worst = int(np.argmax(radii))
        suggested = None
        if failed:
            for j in range(1, 41):
                tau = step / 2**j
                n_tau = max(1, int(round((tf - t0) / tau)))
                if not stability(method, tau, self.error_matrix).bounded:
                    continue
                log_tau = max(self._log_growth(method, tau, n_tau)[0], self._log_error(method, tau, n_tau))
                if log_tau <= math.log(growth_tol):
                    suggested = tau
                    break
        return SystemStabilityReport(
            method=method, step=step, t_span=(t0, tf), n_steps=n_steps, stabilization=self.stabilization,
            error=error, eigenvalues=self.eigenvalues[0].copy(), n_motion=self.n_motion,
            spectral_radius=float(radii[worst]), worst_time=float(self.times[worst]),
            state_growth=math.exp(min(log_state, 700.0)), drift_growth=math.exp(min(log_drift, 700.0)),
            growth_tol=growth_tol, failed=tuple(failed), suggested_step=suggested,
        )

    def _log_growth(self, method, step, n_steps):
        """Predicted peak log growth from every eigenvalue of the Jacobian, the step lengthened by :data:`STEP_MARGIN`.

        Every mode counts, the constraint-error modes too: along a run that
        leaves the reference, their frozen eigenvalues are what the
        integrator meets (a fast error mode near the edge of RK4's region,
        ``tau lambda = -2.5``, turned the pendulum over in 20 s although
        ``R(tau E)`` has radius 0.65).
        """
        weights = np.full(self.times.size, n_steps / self.times.size)
        return _growth(method, STEP_MARGIN * step, self.eigenvalues, weights)

    def _log_error(self, method, step, n_steps):
        """``n_steps log rho(R(tau' E))`` for the error dynamics with the lengthened step ``tau' = STEP_MARGIN tau``."""
        radius = stability(method, STEP_MARGIN * step, self.error_matrix).spectral_radius
        return n_steps * math.log(max(radius, 1e-300))


def linearize(
    model, stabilization, t_span, q0: ArrayLike, qd0: ArrayLike, *, params: dict | None = None, samples: int = SAMPLES
) -> Linearization:
    """Linearize the stabilized system at the initial state and along an accurate reference run.

    The reference is the stabilized system itself, integrated by
    :func:`scipy.integrate.solve_ivp` (LSODA, ``rtol = REFERENCE_RTOL``): it
    stays near the exact motion, which is what a good fixed-step run follows.
    At ``samples`` equally spaced times the Jacobian of ``y' = f(t, y)``
    (:func:`jacobian`) is computed and its eigenvalues split into

    * constraint-error modes: the ``m_h + m`` eigenvectors that change the
      residuals ``(phi, phi', psi)`` most. Along the exact flow these modes
      obey ``e' = E e`` exactly, so the report judges them by ``E`` (their
      frozen eigenvalues carry the rotation of the coordinates, an artifact
      of freezing a moving point);
    * motion modes: the rest, the linearized motion along the constraints.

    Parameters
    ----------
    model : Model or CompiledModel
    stabilization : Baumgarte or GainMatrix
    t_span : (float, float)
        Start and end time of the run.
    q0, qd0 : array_like, shape (n,)
        Initial state.
    params : dict, optional
        Parameter values by name.
    samples : int, optional
        Number of linearization points; 1 linearizes at the initial state only
        (no reference run).

    Returns
    -------
    Linearization
        If the reference run fails early, the points it reached.
    """
    from scipy.integrate import solve_ivp

    from ._threads import single_blas_thread

    span = as_finite_array(t_span, "t_span", 1)
    if span.shape != (2,) or not span[1] > span[0]:
        raise ValueError(f"`t_span` must be (t0, tf) with tf > t0; got {t_span!r}")
    t0, tf = float(span[0]), float(span[1])
    if stabilization is None:
        raise ValueError("`stabilization` must be a Baumgarte or a GainMatrix: without one nothing is stabilized "
                         "and the constraint error is neutral (plain A q'' = b)")
    cm, t0, q, qd, p = _state_arguments(model, t0, q0, qd0, stabilization, params)
    if isinstance(samples, bool) or not isinstance(samples, Integral) or samples < 1:
        raise ValueError(f"`samples` must be a positive integer (linearization points); got {samples!r}")
    E = stabilization.error_matrix(cm.n_holonomic, cm.n_nonholonomic)
    modes = cm.friction_modes(t0, q, qd, p)
    f = _right_hand_side(cm, p, stabilization, modes)
    n = cm.n
    n_motion = max(0, 2 * n - cm.n_holonomic - cm.m)
    y0 = np.concatenate([q, qd])
    times = np.linspace(t0, tf, samples)
    with single_blas_thread():
        if samples > 1:
            sol = solve_ivp(f, (t0, tf), y0, method="LSODA", t_eval=times, rtol=REFERENCE_RTOL,
                            atol=REFERENCE_RTOL * 1e-3 * max(1.0, float(np.abs(y0).max())))
            times, states = np.asarray(sol.t, dtype=float), np.asarray(sol.y, dtype=float).T
            if times.size == 0:
                times, states = np.array([t0]), y0[None, :]
        else:
            states = y0[None, :]
        eigenvalues = np.empty((times.size, 2 * n), dtype=complex)
        for s, (t, y) in enumerate(zip(times, states)):
            J = _difference_jacobian(lambda v: f(t, v), y)
            lam, vectors = np.linalg.eig(J)
            D = _difference_jacobian(lambda v: np.concatenate(cm.residuals(t, v[:n], v[n:], p)), y)
            leverage = np.linalg.norm(D @ vectors, axis=0) if D.size else np.zeros(lam.size)
            eigenvalues[s] = lam[np.argsort(leverage, kind="stable")]
    return Linearization(stabilization, E, times, eigenvalues, n_motion, (t0, tf))


@dataclass(frozen=True, eq=False)
class SystemStabilityReport:
    """Two verdicts on a fixed-step run of a stabilized system, and the growth they predict.

    The constraint-error check is Beshaw's (2014, Theorems 1-2): the
    spectral radius of ``R(tau E)`` below one. The whole-system check asks
    that ``STEP_MARGIN tau lambda`` of every mode of the linearized
    right-hand side (:func:`linearize`; motion and constraint-error modes)
    and of ``E`` keep the predicted growth of the state over the run below
    ``growth_tol``. For Euler no oscillation is ever inside the
    stability disk: an undamped mode ``+-i omega`` grows by
    ``sqrt(1 + omega^2 tau^2)`` per step, so the verdict is a growth factor
    over the horizon, not a yes/no.

    Attributes
    ----------
    method : str
    step : float
    t_span : tuple of float
    n_steps : int
    stabilization : Baumgarte or GainMatrix
    error : StabilityReport
        The constraint-error check (``error.bounded``).
    eigenvalues : ndarray of complex, shape (2 n,)
        Eigenvalues of ``df/dy`` at the initial state, motion modes first.
    n_motion : int
        Number of motion modes among ``eigenvalues``.
    spectral_radius : float
        Largest ``|R(STEP_MARGIN tau lambda)|`` over every mode, over all
        linearization points.
    worst_time : float
        Where that largest factor was found.
    state_growth : float
        Predicted growth of the state over the run: the product over the
        steps of the largest ``|R(STEP_MARGIN tau lambda)|`` at the nearest
        linearization point (every mode), or of the spectral radius of
        ``R(STEP_MARGIN tau E)`` when that is larger (capped at ``exp(700)``).
    drift_growth : float
        Predicted growth of the drift's level: ``state_growth^2`` (the fresh
        error of each step is quadratic in the velocities), times the
        amplification of the error dynamics when they amplify.
    growth_tol : float
        The allowed ``state_growth`` (default :data:`GROWTH_TOL`).
    failed : tuple of str
        ``"error dynamics"`` and/or ``"whole system"``; empty when accepted.
    suggested_step : float or None
        The largest ``step / 2**j`` that passes both checks, when one failed.
    """

    method: str
    step: float
    t_span: tuple
    n_steps: int
    stabilization: object
    error: StabilityReport
    eigenvalues: np.ndarray
    n_motion: int
    spectral_radius: float
    worst_time: float
    state_growth: float
    drift_growth: float
    growth_tol: float
    failed: tuple
    suggested_step: float | None

    @property
    def accepted(self) -> bool:
        """Both checks pass."""
        return not self.failed

    def summary(self) -> list[str]:
        """The report as short lines for a figure (method, both checks, verdict)."""
        name = {"euler": "Euler", "rk4": "RK4"}[self.method]
        mark = {True: "passed", False: "FAILED"}
        return [
            f"{name}, step {self.step:g} s, {self.t_span[1] - self.t_span[0]:g} s:",
            f"error dynamics: radius {self.error.spectral_radius:.3g} {mark[self.error.bounded]}",
            f"whole system: growth x{_factor(self.state_growth)} "
            f"(allowed x{self.growth_tol:g}) {mark['whole system' not in self.failed]}",
        ]

    def __str__(self) -> str:
        name = {"euler": "Euler", "rk4": "RK4"}[self.method]
        t0, tf = self.t_span
        gain = _gain_name(self.stabilization)
        verdict = "ACCEPTED" if self.accepted else f"REFUSED ({' and '.join(self.failed)} failed)"
        lines = [
            f"{name} with step {self.step:g} s over {tf - t0:g} s ({self.n_steps} steps), {gain}: {verdict}",
            f"  1. constraint-error dynamics e' = E e (Beshaw, Theorems 1-2): spectral radius of R(tau E) "
            f"{self.error.spectral_radius:.4g}, norm {self.error.norm:.4g} -> "
            f"{'decays' if self.error.bounded else 'does not decay'}",
            f"  2. whole system y' = f(t, y): largest |R(tau lambda)| of the motion {self.spectral_radius:.6g} "
            f"per step (at t = {self.worst_time:.3g} s)",
            f"     predicted growth over the run: state x{_factor(self.state_growth)}, drift "
            f"x{_factor(self.drift_growth)} (allowed: state x{self.growth_tol:g}) -> "
            f"{'passed' if 'whole system' not in self.failed else 'failed'}",
        ]
        if self.suggested_step is not None:
            lines.append(f"  A step of {self.suggested_step:g} s passes both checks.")
        elif self.failed:
            lines.append("  No step down to 1/2^40 of this one passes both checks.")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (f"SystemStabilityReport(method={self.method!r}, step={self.step!r}, accepted={self.accepted}, "
                f"failed={self.failed!r}, error_radius={self.error.spectral_radius:.4g}, "
                f"state_growth={self.state_growth:.4g}, drift_growth={self.drift_growth:.4g}, "
                f"growth_tol={self.growth_tol:g})")


def _factor(value: float) -> str:
    return f"{value:.3g}" if value < 1e4 else f"{value:.1e}"


def system_stability(
    model,
    stabilization,
    method: str,
    step: float,
    t_span,
    q0: ArrayLike,
    qd0: ArrayLike,
    *,
    params: dict | None = None,
    samples: int = SAMPLES,
    growth_tol: float = GROWTH_TOL,
) -> SystemStabilityReport:
    """Judge a fixed-step run of a stabilized system: the error dynamics and the whole system.

    Two checks, reported apart:

    1. the constraint error alone, ``e' = E e`` with ``R(tau E)`` (Beshaw
       2014, Eqs. 22 and 27, Theorems 1-2; :func:`check_gain`);
    2. the whole system: the right-hand side ``y' = f(t, y)`` that
       :func:`udk_notebooks.simulate` integrates is linearized
       (:func:`linearize`) and ``R(STEP_MARGIN tau lambda)`` of every
       eigenvalue of its Jacobian (and of ``E``) is multiplied over the steps
       into a predicted growth of the state, which must stay below
       ``growth_tol``.

    The second check catches what the first cannot: the constraint error is
    coupled to the motion (each step's fresh error is quadratic in the
    velocities), and for Euler the motion itself grows.

    What an accepted run is promised is measured, not proved: on the
    Cartesian pendulum every accepted run of a random search (419 runs,
    Euler and RK4, steps 0.002-0.12 s, gains 0.2-80 1/s, lengths 0.3-2 m,
    any release angle and rate; see :data:`STEP_MARGIN`) and of the tests
    stayed below :data:`DRIFT_BOUND` without diverging. For another model
    it is a linear prediction along a reference run, with a margin; the
    check refuses many runs that would have stayed bounded. Every run is
    watched for divergence whatever this says.

    Parameters
    ----------
    model : Model or CompiledModel
    stabilization : Baumgarte or GainMatrix
    method : {"euler", "rk4"}
    step : float
        Fixed time step ``tau > 0``.
    t_span : (float, float)
        The run's horizon.
    q0, qd0 : array_like, shape (n,)
        Initial state.
    params : dict, optional
    samples : int, optional
        Linearization points (1: the initial state only).
    growth_tol : float, optional
        Allowed growth of the state over the horizon (default
        :data:`GROWTH_TOL`).

    Returns
    -------
    SystemStabilityReport
        ``accepted``, ``failed`` and the predicted growth factors; ``str()`` is
        a readable account.
    """
    method, step = _check_method(method), _check_step(step)
    return linearize(model, stabilization, t_span, q0, qd0, params=params, samples=samples).report(
        method, step, growth_tol)
