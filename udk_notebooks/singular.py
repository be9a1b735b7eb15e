"""Singular configurations along a run: where the constraints or the mass matrix lose rank.

At a singular configuration the Udwadia-Kalaba equation stops describing one
motion: rows of ``A`` become dependent (the parallelogram four-bar at its
change point, a bead at the node of ``y^2 = x^2 (x + 1)``), or ``M`` loses
rank on the virtual displacements (polar coordinates at ``r = 0``), so the
accelerations are not unique there (the 2005 paper's Eq. 7 needs ``B^+`` of
``B = A M^{-1/2}``; the encyclopedia article's uniqueness condition for a
singular ``M`` is that ``[M; A]`` has full column rank). Integrators step
across such a point onto whichever branch rounding favours, or fail with a
message about the constraint equations. This module owns the check that a
run makes at every accepted step, :class:`RankMonitor`, its tolerance
:data:`SINGULAR_RTOL`, and the report :class:`SingularConfiguration`.

Two measures are watched, both relative to the start of the run:

* the constraints: ``A_s = A D`` with ``D`` dividing each row of ``A`` by its
  Euclidean size at the start (a zero row by one). With ``r0`` the number of
  singular values of ``A_s`` at the start above ``SINGULAR_RTOL`` times the
  largest (rows dependent at the start count as redundant, which the solver
  accepts), the measure is ``sigma_r0(A_s(t)) / sigma_1(A_s(t0))``. Scaling
  by the start, not by the current size, makes a row that shrinks to zero
  (the node of a curve, the four-bar's closure row along the line of centres)
  a loss of rank too.
* the mass on the virtual displacements: with ``N`` an orthonormal basis of
  the null space of the rank-``r0`` part of ``A_s``, the measure is
  ``sqrt(lambda_min(N^T M N) / max diag M)`` divided by its value at the start.
  The accelerations are unique exactly while ``N^T M N`` is positive definite
  (that is ``[M; A]`` of full column rank). It is skipped when ``M`` is
  constant and positive definite (Cartesian coordinates), where it cannot fail.

A measure below ``SINGULAR_RTOL`` marks the configuration as singular. A path
can also cross a rank loss between two checks (a large fixed step): the
signed ``det(U^T A_s(t) V)``, with ``U, V`` the leading ``r0`` singular
vectors at a reference point on the path, changes sign at such a crossing, and
that sign is watched too. Fixed-step runs take the previous accepted step as
reference; scipy runs take the start of the solver call and renew it when the
row space has turned so far that the sign would no longer mean a crossing
(see :meth:`RankMonitor.turn_event`).
"""

from __future__ import annotations

import math
import re
import warnings
from dataclasses import dataclass

import numpy as np
from scipy.linalg import lapack

__all__ = ["SINGULAR_ACTIONS", "SINGULAR_RTOL", "RankMonitor", "SingularConfiguration",
           "SingularConfigurationWarning"]

SINGULAR_RTOL = 1e-3
"""A run is at a singular configuration when a relative measure of rank falls below this.

The measures (module docstring) are the ``r0``-th singular value of the
constraint Jacobian with rows scaled to their size at the start, relative to
the largest singular value at the start, and the smallest singular value of
the mass matrix on the virtual displacements relative to its start. Both are
about the distance to the singular configuration in the units of the
coordinates over their size, so the run stops about ``1e-3`` (radians, or
lengths relative to the start) before it; a crossing within one step is found
by the sign test whatever the step.
"""

SINGULAR_ACTIONS = ("stop", "raise", "warn", "ignore")
"""What ``simulate(..., on_singular=...)`` does at a singular configuration."""

TURN_LIMIT = 0.5
"""A scipy run renews its reference subspaces when the product of the cosines of the
principal angles between the current and the reference row spaces (and null spaces)
falls below this: the sign of ``det(U^T A_s V)`` then still means a crossing."""


class SingularConfigurationWarning(UserWarning):
    """A run passed a singular configuration and went on (``on_singular="warn"``)."""


@dataclass(frozen=True, eq=False)
class SingularConfiguration:
    """Where a run met a singular configuration, and what lost rank.

    Attributes
    ----------
    time : float
        When (located by root finding or bisection on the step).
    state : ndarray, shape (2 n,)
        ``(q, q')`` there.
    kind : str
        ``"constraints"`` (rows of ``A`` became dependent) or ``"mass"``
        (``M`` lost rank on the virtual displacements).
    value : float
        The relative measure there (below :data:`SINGULAR_RTOL`, or about zero
        at a located crossing).
    rows : tuple of int
        Constraint rows that combine into zero (holonomic first, as in ``A``):
        those with a weight of at least a tenth of the largest in the left
        singular vector of the vanishing singular value. Empty for ``"mass"``.
    combination : ndarray, shape (m,) or (n,)
        That left singular vector (weights of the scaled rows) for
        ``"constraints"``; for ``"mass"`` the direction of ``q''`` that has
        neither inertia nor a constraint.
    message : str
        All of the above in words.
    """

    time: float
    state: np.ndarray
    kind: str
    value: float
    rows: tuple
    combination: np.ndarray
    message: str


class _Measure:
    """Everything one check needs at one state (computed once, shared by the event functions)."""

    __slots__ = ("rank_value", "mass_value", "signed", "turn", "U", "V", "u", "direction", "product")


class RankMonitor:
    """Watches the rank of the constraints and of the mass along one run (see the module docstring).

    Parameters
    ----------
    cm : CompiledModel
    p : ndarray, shape (k,)
        Parameter vector.
    t0 : float
    y0 : ndarray, shape (2 n,)
        The initial state; it fixes the row scales, the rank ``r0`` and the
        mass measure's reference.
    rtol : float, optional
        :data:`SINGULAR_RTOL` unless given.
    """

    def __init__(self, cm, p, t0: float, y0: np.ndarray, rtol: float = SINGULAR_RTOL):
        self.cm, self.p, self.rtol, self.n = cm, p, rtol, cm.n
        self.active = True
        self._cache_key, self._cache = None, None
        M, A, factor = self._matrices(t0, y0)
        sizes = np.sqrt(np.einsum("ij,ij->i", A, A))
        self.row_scale = 1.0 / np.where(sizes > 0, sizes, 1.0)
        s = _singular_values(A * self.row_scale[:, None])
        self.sigma_scale = float(s[0]) if s.size and s[0] > 0 else 1.0
        self.rank = int(np.count_nonzero(s > rtol * self.sigma_scale))
        # The mass cannot lose rank when it is constant and positive definite.
        self.watch_mass = not (cm.constant_mass and factor is not None)
        self.mass_scale = 1.0
        self.U = self.V = None
        if self.watch_mass:
            first = self.measure(t0, y0, reference=False)
            self.mass_scale = first.mass_value if 0 < first.mass_value < math.inf else 1.0
            self.watch_mass = 0 < first.mass_value < math.inf
            self._cache_key = None
        self.active = bool(self.rank or self.watch_mass)
        self.rebase(t0, y0)

    # -- evaluation -----------------------------------------------------------------------------
    def _matrices(self, t, y):
        n = self.n
        M, _, A, _, _, factor = self.cm._evaluate(t, y[:n], y[n:], self.p)
        return M, A[: self.cm.m], factor

    def measure(self, t: float, y: np.ndarray, reference: bool = True) -> _Measure:
        """The measures at ``(t, y)``; cached for the last state (solve_ivp calls each event there)."""
        key = (float(t), y.tobytes())
        if key == self._cache_key:
            return self._cache
        M, A, _ = self._matrices(t, y)
        out = _Measure()
        out.rank_value, out.mass_value, out.signed, out.turn = math.inf, math.inf, 1.0, 1.0
        out.U = out.V = out.u = out.direction = None
        out.product = 1.0
        r = self.rank
        As = A * self.row_scale[:, None]
        need_null = self.watch_mass and r < self.n
        if r:
            U, s, Vt = _svd(As, full=need_null)
            out.U, out.V = U[:, :r], Vt[:r].T
            out.rank_value = float(s[r - 1]) / self.sigma_scale
            out.u = U[:, r - 1]
            out.product = float(np.prod(s[:r]))
            if reference and self.U is not None:
                det = float(np.linalg.det(self.U.T @ As @ self.V))
                out.signed = det / self.reference_product
                out.turn = det / out.product if out.product > 0 else -1.0
            null = Vt[r:].T if need_null else None
        else:
            null = np.eye(self.n) if need_null else None
        if need_null:
            K = null.T @ M @ null
            lam, vec = np.linalg.eigh(K)
            top = float(np.max(np.diag(M)))
            out.mass_value = math.sqrt(max(float(lam[0]), 0.0) / top) / self.mass_scale if top > 0 else 0.0
            out.direction = null @ vec[:, 0]
        self._cache_key, self._cache = key, out
        return out

    def rebase(self, t: float, y: np.ndarray) -> None:
        """Take ``(t, y)`` as the reference point of the sign test."""
        if not self.rank:
            return
        self.U = self.V = None
        self._cache_key = None
        out = self.measure(t, y, reference=False)
        self.U, self.V = out.U, out.V
        self.reference_product = out.product or 1.0  # = det(U^T A_s V) at the reference itself
        self._cache_key = None

    # -- decisions ------------------------------------------------------------------------------
    def singular(self, t: float, y: np.ndarray) -> bool:
        """True when ``(t, y)`` is singular, or the sign test says a crossing lies since the reference."""
        out = self.measure(t, y)
        return min(out.rank_value, out.mass_value) < self.rtol or out.signed <= 0

    def threshold_event(self, t: float, y: np.ndarray) -> float:
        """Crosses zero downwards where a measure falls to :data:`SINGULAR_RTOL` (an event for solve_ivp)."""
        out = self.measure(t, y)
        return min(out.rank_value, out.mass_value) - self.rtol

    def turn_event(self, t: float, y: np.ndarray) -> float:
        """Crosses zero downwards at a crossing of a rank loss, or where the reference has turned too far.

        ``det(U^T A_s V) / prod(sigma_i)`` is the signed product of the cosines
        of the principal angles between the reference and current spaces: near
        one while they stay close, it jumps to about minus one at a crossing
        (the determinant changes sign, the singular values do not), and it falls
        smoothly towards zero when the spaces turn. The caller tells the two
        apart by :meth:`singular` at the located point, and renews the reference
        (:meth:`rebase`) in the second case.
        """
        return self.measure(t, y).turn - TURN_LIMIT

    def events(self) -> list:
        """The terminal solve_ivp event functions of this monitor (empty when it watches nothing)."""
        if not self.active:
            return []

        def threshold(t, y):
            return self.threshold_event(t, y)

        threshold.terminal, threshold.direction = True, -1
        found = [threshold]
        if self.rank:
            def turn(t, y):
                return self.turn_event(t, y)

            turn.terminal, turn.direction = True, -1
            found.append(turn)
        return found

    def locate(self, step, t: float, h: float):
        """First singular point along a fixed step: bisection on the step length.

        ``step(s)`` returns the state after a step of length ``s`` from ``t``;
        a step that fails counts as singular. Returns ``(t_s, y_s)`` at the
        first length found singular (within ``1e-12`` relative).
        """
        lo, hi = 0.0, h
        y_hi = None
        while hi - lo > 1e-12 * max(1.0, abs(t)):
            mid = (lo + hi) / 2
            try:
                y_mid = step(mid)
                flagged = not np.all(np.isfinite(y_mid)) or self.singular(t + mid, y_mid)
            except Exception:  # the equation of motion itself fails there: singular enough
                flagged, y_mid = True, None
            if flagged:
                hi, y_hi = mid, (y_mid if y_mid is not None else y_hi)
            else:
                lo = mid
        if y_hi is None:
            y_hi = step(hi)
        return t + hi, y_hi

    # -- reporting ------------------------------------------------------------------------------
    def report(self, t: float, y: np.ndarray) -> SingularConfiguration:
        """What lost rank at ``(t, y)``, in words and numbers."""
        out = self.measure(t, y)
        n = self.n
        q, qd = y[:n], y[n:]
        where = (f"t = {t:.6g} (q = {np.array2string(q, precision=4)}, "
                 f"q' = {np.array2string(qd, precision=4)})")
        constraints = out.rank_value <= out.mass_value or out.signed <= 0 or out.direction is None
        if constraints and out.u is not None:
            weights = np.abs(out.u)
            rows = tuple(int(i) for i in np.flatnonzero(weights >= 0.1 * weights.max()))
            labels = "; ".join(self._row_label(i) for i in rows)
            value = out.rank_value
            message = (
                f"singular configuration at {where}: the constraint rows {labels} become dependent "
                f"(relative singular value {value:.3g}, `SINGULAR_RTOL` = {self.rtol:g}; the rank was "
                f"{self.rank} at the start), so the motion past this point is not decided by the equations "
                "(the run may take any branch there). Change the initial state to stay away from it, or pass "
                "on_singular='warn' or 'ignore' to integrate through it anyway")
            return SingularConfiguration(float(t), np.array(y, dtype=float), "constraints", value, rows,
                                         np.array(out.u), message)
        direction = out.direction if out.direction is not None else np.zeros(n)
        weights = np.abs(direction)
        names = [self.cm.coordinate_names[i] for i in np.flatnonzero(weights >= 0.1 * weights.max(initial=0.0))]
        value = out.mass_value
        message = (
            f"singular configuration at {where}: the mass matrix loses rank on the virtual displacements "
            f"(relative singular value {value:.3g}, `SINGULAR_RTOL` = {self.rtol:g}) along "
            f"{', '.join(names) or 'no coordinate'}, so the accelerations are not unique there (a coordinate "
            "singularity such as r = 0 of polar coordinates, or a motion with neither inertia nor a "
            "constraint). Choose coordinates that are regular there, or pass on_singular='warn' or 'ignore'")
        return SingularConfiguration(float(t), np.array(y, dtype=float), "mass", value, (), np.array(direction),
                                     message)

    def _row_label(self, i: int) -> str:
        model = self.cm.model
        h = model.n_holonomic
        kind, expr = ("holonomic", model.holonomic[i]) if i < h else ("nonholonomic", model.nonholonomic[i - h])
        text = re.sub(r"\(t\)", "", str(expr))
        if len(text) > 60:
            text = text[:57] + "..."
        return f"{i} ({kind}: {text} = 0)"

    def warn(self, found: SingularConfiguration) -> None:
        """Warn once and stop watching (``on_singular="warn"``)."""
        warnings.warn(found.message.split(". Change")[0].split(". Choose")[0] + "; the run goes on through it",
                      SingularConfigurationWarning, stacklevel=4)
        self.active = False


def _svd(X: np.ndarray, full: bool = False):
    U, s, Vt, info = lapack.dgesdd(X, full_matrices=int(full))
    if info != 0:
        U, s, Vt, info = lapack.dgesvd(X, full_matrices=int(full))
    if info != 0:
        raise np.linalg.LinAlgError("the SVD of the scaled constraint matrix did not converge")
    return U, s, Vt


def _singular_values(X: np.ndarray) -> np.ndarray:
    if X.size == 0:
        return np.zeros(0)
    return _svd(X)[1]
