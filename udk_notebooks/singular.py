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
  the null space of the rank-``r0`` part of ``A_s`` (the right singular
  vectors past ``r0``), the measure is ``sqrt(lambda_min / lambda_max)`` of
  ``N^T M N`` (the smallest singular value of ``M^{1/2} N`` relative to the
  largest) divided by its value at the start. The accelerations are unique
  exactly while ``N^T M N`` is positive definite (that is, ``[M; A]`` has full
  column rank). It is skipped when ``M`` is constant and positive definite
  (Cartesian coordinates), where it cannot fail.

Both cost one evaluation of ``M`` and ``A``, one SVD of the ``m x n`` scaled
``A`` (or, for independent rows and a mass that cannot lose rank, the
eigenvalues of the ``m x m`` Gram matrix) and, for a varying mass, the
eigenvalues of ``N^T M N``, once per accepted step, never per right-hand side
(``benchmarks/singular_check.py`` measures it on whole runs).

References: Udwadia, Kalaba & Fan 2005, Eq. (7); Beshaw 2014, after Eq. (10)
(the multiplier route needs ``A`` of full row rank); the encyclopedia article
(``[M; A]`` of full column rank for a singular ``M``); the multibody lecture
slides, Proposition 9.1 (coordinates are regular where ``M`` is positive
definite).

A measure below ``SINGULAR_RTOL`` marks the configuration as singular. A path
can also cross a rank loss between two checks (a large fixed step): the
signed ``det(U^T A_s(t) V)``, with ``U, V`` the leading ``r0`` singular
vectors at a reference point on the path, changes sign at such a crossing, and
that sign is watched too, with the previous accepted step as the reference
(:class:`RankMonitor`). A rank loss counts only near the constraint manifold
(:data:`SINGULAR_DRIFT`). A fixed-step run checks the end of every step and
locates the first singular point inside the step by bisection on the step
length; a scipy run checks through two terminal events located by the
solver's root finding. Either way the run stops there (or raises, warns or
goes on, as ``simulate(..., on_singular=...)`` says), its samples end before
the point, and a :class:`SingularConfiguration` says when, where and what.
A failure of the equation of motion at a state that the monitor finds
singular is reported the same way.

A fixed-step check is cheap away from singular points (:meth:`RankMonitor.check_step`).
The full measure (an eigenvalue problem or an SVD and a determinant, tens of
microseconds for a small system, as much as an RK4 step) runs at an *anchor*
point; at the following step ends only the entries of ``A_s`` (or of ``M``)
are evaluated and compared with the anchor's, which decides "regular, and not
crossed" with a proof, by Weyl's inequality for singular values,
``|sigma_i(X) - sigma_i(Y)| <= ||X - Y||_2 <= ||X - Y||_F`` (Golub & Van Loan,
*Matrix Computations*, 4th ed. 2013, Corollary 8.6.2; for the eigenvalues of a
symmetric matrix, Section 8.1.2):

* the measure: ``sigma_r0(A_s(t)) >= sigma_r0(A_anchor) - ||A_s(t) - A_anchor||_F``,
  so while that bound stays above ``SINGULAR_RTOL`` times the scale the full
  measure would not flag the point either;
* the sign test against the previous step end ``A_prev``: with ``E = A_s(t) - A_prev``
  and ``||E||_2 < sigma_r0(A_prev)``, the matrices ``Sigma + s U^T E V``
  (``U, V`` the leading singular vectors of ``A_prev``, ``0 <= s <= 1``) are all
  nonsingular, so ``det(U^T A_s(t) V)`` has the sign of ``det(Sigma) > 0`` and
  the sign test would not flag the step (for the Gram form,
  ``det(A_s A_prev^T) = det(Sigma) det(U^T A_s V)`` up to the positive
  ``det(Sigma)``); ``sigma_r0(A_prev)`` is bounded below as in the first point;
* the mass (unconstrained models, where ``N^T M N = M``): Weyl's inequality for
  the eigenvalues of the symmetric ``M``, ``lambda_min(M) >= lambda_min(M_anchor) - d``
  and ``lambda_max(M) <= lambda_max(M_anchor) + d`` with ``d = ||M - M_anchor||_F``.

Every skipped step is one the full check would have passed, so a run stops at
the same step and the bisection locates the same point. When a bound fails, the
full measure runs (at the previous step end too when the sign test needs its
singular vectors) and becomes the new anchor. A model whose mass is watched
together with rows (a varying mass on a null space that turns with ``A``) is
measured in full at every step.

Limits: the check watches what the run passes through, so a run that starts
at a singular configuration is watched for the rank it has there; and a
fixed-step run that drifts off its constraints (Euler without stabilization)
can pass beside a node farther than the tolerance and not be flagged.
"""

from __future__ import annotations

import math
import re
import warnings
from dataclasses import dataclass

import numpy as np

from ._lapack import lapack  # not scipy.linalg: its import costs a cold start 0.15 s
from .core import _svd, cholesky_or_none

__all__ = ["CROSSING_RTOL", "SINGULAR_ACTIONS", "SINGULAR_DRIFT", "SINGULAR_RTOL", "RankMonitor",
           "SingularConfiguration", "SingularConfigurationWarning"]

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

SINGULAR_DRIFT = 0.1
"""A loss of rank counts as a singular configuration only where the holonomic constraints hold to this.

The test is ``max_i |phi_i| / |grad phi_i(t0)| <= SINGULAR_DRIFT (1 + max|q0|)``: the
first-order distance to each constraint surface, against the size of the start. A run
that has drifted far off its constraints (an unstable gain, say) can pass through a
point where the rows vanish (the centre of a pendulum's circle) without being near a
configuration of the mechanism; it is left to the divergence check.
"""

CROSSING_RTOL = 0.1
"""A fixed step whose determinant changed sign counts as crossing a rank loss only when the point
located inside it (:meth:`RankMonitor.locate`) has a relative singular value below this, and lies near
the constraints. Otherwise the step turned the rows by more than a right angle far from any rank loss
(a step far too coarse for the motion, or a run that has left its constraints), and the run goes on."""

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

    __slots__ = ("value", "rank_value", "mass_value", "turn", "left", "right", "product", "null", "watched",
                 "spread")


def _det(X: np.ndarray) -> float:
    """Determinant of a small square matrix (closed forms up to 2 x 2: numpy's call costs more)."""
    k = X.shape[0]
    if k > 2:
        return float(np.linalg.det(X))
    (a, *b), *rest = X.tolist()
    return a if k == 1 else a * rest[0][1] - b[0] * rest[0][0]


def _eigenvalues(G: np.ndarray) -> list:
    """Eigenvalues of a small symmetric matrix, ascending (closed forms up to 2 x 2)."""
    k = G.shape[0]
    if k > 2:
        return lapack.dsyevd(G, compute_v=0)[0].tolist()
    if k == 1:
        return [float(G[0, 0])]
    (a, b), (_, d) = G.tolist()
    mean, half = (a + d) / 2, math.hypot((a - d) / 2, b)
    return [mean - half, mean + half]


class RankMonitor:
    """Watches the rank of the constraints and of the mass along one run (see the module docstring).

    The sign test compares ``det(U^T A_s V)`` with the reference
    ``(U, V)``: the leading ``r0`` left and right singular vectors at an
    earlier point of the path. Fixed-step runs renew the reference at every
    accepted step (:meth:`adopt`); scipy runs renew it in the event function
    at every accepted step end where the sign has not changed (the solver
    calls events at its accepted steps in order, and finds roots only after a
    change of sign, between two points on the same side of any reference
    taken so far), so no extra evaluation is needed.

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
        self.cm, self.p, self.rtol, self.n, self.m = cm, np.asarray(p, dtype=float), rtol, cm.n, cm.m
        self._p_list = self.p.tolist()
        self._picks = []  # the row scales come first (see _watched_entries)
        self.action = "stop"
        self._key = self._last = None
        self.left = self.right = None  # the reference of the sign test (see measure)
        self.reference_product, self.reference_time = 1.0, -math.inf
        M, A, _ = self._matrices(t0, y0)
        sizes = np.sqrt(np.einsum("ij,ij->i", A, A))
        self.row_scale = (1.0 / np.where(sizes > 0, sizes, 1.0))[:, None]
        s = _svd(A * self.row_scale, uv=False) if A.size else np.zeros(0)
        self.sigma_scale = float(s[0]) if s.size and s[0] > 0 else 1.0
        self.rank = int(np.count_nonzero(s > rtol * self.sigma_scale))
        # The mass cannot lose rank when it is constant and positive definite (Cartesian coordinates).
        self.watch_mass = not (cm.constant_mass and cholesky_or_none(M) is not None) and self.rank < self.n
        self._gram = self.rank == self.m and not self.watch_mass  # no SVD needed (see measure)
        self.mass_scale = 1.0
        self._anchor = self._previous = None
        self._bound, self._picks = self._watched_entries()
        first = self.measure(t0, y0)
        if self.watch_mass:
            self.watch_mass = 0 < first.mass_value < math.inf  # a start without unique accelerations fails anyway
            self.mass_scale = first.mass_value if self.watch_mass else 1.0
            self._key = None
            self._bound, self._picks = self._watched_entries()  # the mass may be off the watch now
            first = self.measure(t0, y0)
        self.active = bool(self.rank or self.watch_mass)
        self.adopt(first, t0)
        self.drift_bound = SINGULAR_DRIFT * (1.0 + float(np.abs(y0[: self.n]).max(initial=0.0)))

    # -- evaluation -----------------------------------------------------------------------------
    def _watched_entries(self) -> tuple[str | None, list]:
        """Which bound the fixed-step check may use (module docstring), and the entries it compares.

        Returns ``("rows", picks)`` for rows watched without the mass, ``("mass", picks)`` for the
        mass of a model without rank to watch, else ``(None, [])``. ``picks`` holds, per watched
        entry, its place in the list of nonzero entries (``CompiledModel.matrices``) and its scale
        (the row scale of ``A_s``, one for ``M``); the entries left out are zero everywhere.
        """
        n, m = self.n, self.m
        start = 0 if self.cm.mass is not None else n * n  # M's entries come first unless constant
        positions = self.cm.nonzero.tolist()
        if self.rank and not self.watch_mass:
            scale = self.row_scale[:, 0].tolist()
            return "rows", [(k, scale[(v - start - n) // n]) for k, v in enumerate(positions)
                            if start + n <= v < start + n + m * n]
        if self.watch_mass and not self.rank and start:
            return "mass", [(k, 1.0) for k, v in enumerate(positions) if v < start]
        return None, []

    def _entries(self, t, y) -> list:
        """The nonzero entries of ``M, Q, A, b, C`` at ``(t, y)`` (a ValueError where the model fails)."""
        n = self.n
        if not (type(y) is np.ndarray and y.dtype == np.float64):
            y = np.asarray(y, dtype=float)
        return self.cm._entries(t, y[:n].tolist(), y[n:].tolist(), self._p_list)

    def _matrices(self, t, y, entries=None):
        """``M`` and ``A`` at ``(t, y)``, and the watched entries scaled (see :meth:`_watched_entries`)."""
        n = self.n
        if entries is None:
            entries = self._entries(t, y)
        q, qd = np.asarray(y[:n], dtype=float), np.asarray(y[n:], dtype=float)
        M, _, A, *_ = self.cm._evaluate(t, q, qd, self.p, entries)
        return M, A[: self.m], [entries[k] * scale for k, scale in self._picks]

    def measure(self, t: float, y: np.ndarray, entries: list | None = None) -> _Measure:
        """The measures at ``(t, y)``, the sign test against the current reference; cached for the last state.

        Written for the cost of small systems, where each numpy call costs more
        than its arithmetic: scalars as Python floats, no eigenvectors. With
        independent rows and a mass that cannot lose rank (the usual Cartesian
        model) no SVD is needed: the singular values are the square roots of
        the eigenvalues of ``G = A_s A_s^T``, and the reference for the sign
        test can be the reference's own rows, ``det(A_s A_ref^T) / (prod sigma
        prod sigma_ref)`` being the same product of cosines (Binet-Cauchy).
        ``entries`` may hold the model's entries at ``(t, y)``, already evaluated.
        """
        key = (t, y.tobytes())
        if key == self._key:
            return self._last
        M, A, watched = self._matrices(t, y, entries)
        out = _Measure()
        out.rank_value = out.mass_value = math.inf
        out.turn, out.product, out.left, out.right, out.null = 1.0, 1.0, None, None, None
        out.watched, out.spread = watched, None
        r = self.rank
        if r:
            As = A * self.row_scale
            if self._gram:
                lam = _eigenvalues(As @ As.T)
                sl = [math.sqrt(max(v, 0.0)) for v in reversed(lam)]
                out.right = As.T
            else:
                U, s, Vt = _svd(As, full=self.watch_mass)
                sl = s.tolist()
                out.left, out.right = U[:, :r].T, Vt[:r].T
                if self.watch_mass:
                    out.null = Vt[r:].T
            out.rank_value = sl[r - 1] / self.sigma_scale
            out.product = math.prod(sl[:r])
            if self.right is not None:
                X = As @ self.right if self.left is None else self.left @ As @ self.right
                scale = out.product * self.reference_product
                out.turn = _det(X) / scale if scale > 0 else -1.0
        if self.watch_mass:
            K = M if out.null is None else out.null.T @ M @ out.null
            lam = _eigenvalues(K)
            out.spread = (lam[0], lam[-1])
            # 1 / sqrt(cond): the smallest singular value of M^(1/2) on the virtual displacements, relative
            out.mass_value = math.sqrt(max(lam[0], 0.0) / lam[-1]) / self.mass_scale if lam[-1] > 0 else 0.0
        out.value = min(out.rank_value, out.mass_value)
        self._key, self._last = key, out
        return out

    def _mass_direction(self, t: float, y: np.ndarray, out: _Measure) -> np.ndarray:
        """The direction of ``q''`` with the least inertia on the virtual displacements (for reports)."""
        M = self._matrices(t, y)[0]
        null = np.eye(self.n) if out.null is None else out.null
        _, vec = np.linalg.eigh(null.T @ M @ null)
        return null @ vec[:, 0]

    def _row_weights(self, t: float, y: np.ndarray) -> np.ndarray:
        """The left singular vector of the vanishing singular value: how the scaled rows combine (for reports)."""
        U, _, _ = _svd(self._matrices(t, y)[1] * self.row_scale)
        return U[:, self.rank - 1]

    def adopt(self, out: _Measure, t: float) -> None:
        """Take the point of the measure ``out`` (at time ``t``) as the reference of the sign test.

        It becomes the anchor of the fixed-step bound as well (module docstring).
        """
        self._anchor, self._previous = out, None
        if out.right is not None:
            self.left, self.right, self.reference_time = out.left, out.right, t
            self.reference_product = out.product if out.left is None else 1.0
            self._key = None  # the cached sign test was against the old reference

    def rebase(self, t: float, y: np.ndarray) -> None:
        """Take ``(t, y)`` as the reference point of the sign test."""
        self.adopt(self.measure(t, y), t)

    # -- decisions ------------------------------------------------------------------------------
    def below(self, t: float, y: np.ndarray) -> bool:
        """True when a measure at ``(t, y)`` is below :data:`SINGULAR_RTOL`."""
        return self.measure(t, y).value < self.rtol

    def singular(self, t: float, y: np.ndarray) -> bool:
        """True when ``(t, y)`` is singular, or a rank loss was crossed since the reference."""
        out = self.measure(t, y)
        return out.value < self.rtol or out.turn <= 0

    def on_manifold(self, t: float, y: np.ndarray) -> bool:
        """True while the holonomic constraints hold to :data:`SINGULAR_DRIFT` (only then is a rank loss reported)."""
        h = self.cm.n_holonomic
        if not h:
            return True
        phi = np.asarray(self.cm.phi(t, y[: self.n], self.p), dtype=float).reshape(-1)
        return bool(np.abs(phi * self.row_scale[:h, 0]).max() <= self.drift_bound)

    def check_step(self, t: float, y: np.ndarray) -> bool:
        """:meth:`singular` (and :meth:`on_manifold`) at the end of an accepted fixed step.

        Otherwise the end of the step becomes the reference of the sign test.
        The answer is that of the full measure at every step; where the bound
        of the module docstring proves it, the full measure is skipped (the
        entries are compared with the anchor's instead), and the reference
        moves to the step end only at the next full measure.
        """
        entries = self._entries(t, y) if self._bound is not None else None
        if entries is not None:
            cleared, turn_cleared, renew = self._cleared(t, y, entries)
            if cleared:
                if renew:  # the next step would likely leave the bound's reach: a new anchor here
                    self.adopt(self._unsigned(t, y, entries), t)
                return False
            if self._previous is not None:  # the reference is older than the previous step end
                if turn_cleared:  # the sign test against the previous end passes: only the measure is left
                    out = self._unsigned(t, y, entries)
                    if out.value >= self.rtol:
                        self.adopt(out, t)
                        return False
                _, _, t_prev, y_prev = self._previous
                self.rebase(t_prev, y_prev)  # the previous step end as the reference, as without the bound
        out = self.measure(t, y, entries)
        if (out.value < self.rtol or out.turn <= 0) and self.on_manifold(t, y):
            return True
        self.adopt(out, t)
        return False

    def _unsigned(self, t: float, y: np.ndarray, entries: list) -> _Measure:
        """The measure at ``(t, y)`` without the sign test, which the bound has shown to pass.

        The reference is dropped (the caller adopts this point or rebases).
        """
        self.left = self.right = None
        self._key = None
        return self.measure(t, y, entries)

    def _cleared(self, t: float, y: np.ndarray, entries: list) -> tuple[bool, bool, bool]:
        """Whether the bound proves the step end ``(t, y)`` regular and not crossed (module docstring).

        Returns ``(cleared, turn_cleared, renew)``: the whole check passes; the
        sign test against the previous step end passes (rows only); and, for a
        cleared end, whether a step as long as this one would take the next end
        past the bound's reach (then the caller anchors here, one full measure,
        rather than three at the next end). A cleared step end becomes the
        previous one. An entry that is not finite makes the distances NaN, every
        comparison false, and the full measure decide.
        """
        anchor = self._anchor
        watched = [entries[k] * scale for k, scale in self._picks]
        distance = math.dist(watched, anchor.watched)
        if self._previous is None:  # the anchor is the previous step end
            step, before_distance = distance, 0.0
        else:
            step, before_distance = math.dist(watched, self._previous[0]), self._previous[1]
        # A margin far above the rounding of the full measure, so that a skipped step is one it passes.
        margin = 1e-9 * self.sigma_scale
        if self._bound == "rows":
            sigma = anchor.rank_value * self.sigma_scale  # sigma_r0 at the anchor
            floor = self.rtol * self.sigma_scale + margin
            turn_cleared = step < sigma - before_distance - margin
            cleared = turn_cleared and sigma - distance >= floor
            renew = sigma - distance < max(2.0 * step + margin, floor + 2.0 * step)
        else:
            low, high = anchor.spread
            floor = (self.rtol * self.mass_scale) ** 2 * (1.0 + 1e-9)

            def regular(d):
                return low - d > 0 and low - d >= floor * (high + d)

            turn_cleared, cleared, renew = True, regular(distance), not regular(distance + 2.0 * step)
        if cleared:
            self._previous = (watched, distance, t, y)
        return cleared, turn_cleared, renew

    def confirm(self, t: float, y: np.ndarray) -> bool:
        """Whether a point located inside a fixed step is a rank loss (see :data:`CROSSING_RTOL`)."""
        return self.measure(t, y).value < CROSSING_RTOL and self.on_manifold(t, y)

    def threshold_event(self, t: float, y: np.ndarray) -> float:
        """Crosses zero downwards where a measure falls to :data:`SINGULAR_RTOL` (an event for solve_ivp)."""
        return self.measure(t, y).value - self.rtol

    def crossing_event(self, t: float, y: np.ndarray) -> float:
        """Crosses zero downwards at a crossing of a rank loss (an event for solve_ivp).

        The value ``det(U^T A_s V) / prod(sigma_i)`` is the signed product of
        the cosines of the principal angles between the reference and current
        spaces: near one from step to step, it jumps to about minus one at a
        crossing (the determinant changes sign, the singular values do not).
        A positive value at a later time renews the reference. It could also
        reach zero smoothly if the spaces turned by a right angle within one
        step; the caller tells the two apart with :meth:`below` at the root.
        """
        out = self.measure(t, y)
        if out.turn > 0 and t > self.reference_time:
            self.adopt(out, t)
        return out.turn

    def events(self) -> list:
        """The terminal solve_ivp event functions of this monitor: threshold, then crossing."""
        def threshold(t, y):
            return self.threshold_event(t, y)

        def crossing(t, y):
            return self.crossing_event(t, y)

        threshold.terminal = crossing.terminal = True
        threshold.direction = crossing.direction = -1
        return [threshold, crossing] if self.rank else [threshold]

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
        constraints = out.rank_value <= out.mass_value or out.turn <= 0 or not self.watch_mass
        if constraints and self.rank:
            combination = self._row_weights(t, y)
            weights = np.abs(combination)
            rows = tuple(int(i) for i in np.flatnonzero(weights >= 0.1 * weights.max()))
            labels = "; ".join(self._row_label(i) for i in rows)
            value = out.rank_value
            message = (
                f"singular configuration at {where}: the constraint "
                + (f"rows {labels} become dependent " if len(rows) > 1 else f"row {labels} vanishes ")
                + f"(relative singular value {value:.3g}, `SINGULAR_RTOL` = {self.rtol:g}; the rank was "
                f"{self.rank} at the start), so the motion past this point is not decided by the equations "
                "(the run may take any branch there). Change the initial state to stay away from it, or pass "
                "on_singular='warn' or 'ignore' to integrate through it anyway")
            return SingularConfiguration(float(t), np.array(y, dtype=float), "constraints", value, rows,
                                         combination, message)
        direction = self._mass_direction(t, y, out)
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
