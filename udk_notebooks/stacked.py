"""The Udwadia-Kalaba equation with Coulomb friction modes for a stack of states: the one stacked solver.

A run's output samples (:func:`udk_notebooks.simulate`) and the members of a
sweep at every integrator stage (:mod:`udk_notebooks.batch`) are stacks of
states that share a model. :func:`solve_stack` evaluates Eq. (7) of Udwadia &
Kalaba (1992) for all of them at once, members along the last axis, with
friction as the nonideal force of Udwadia, Kalaba & Fan (2005), Eqs. 10-11:

* the ideal force ``F^L = A^T lam`` does not depend on the nonideal vector
  ``C`` (Eq. 10), so it is solved first; its size is the normal force of a
  contact declared with ``CoulombFriction(normal=None)`` (``N = |F^L|``);
* a sliding contact adds ``C = -mu N sgn(s) ds/dq'``, and the constrained
  response to ``C`` (Eq. 11) is added with the same Gram matrix
  (:class:`~udk_notebooks.core.StackedGram`);
* a sticking contact is one more constraint row ``s' = 0``; its multiplier is
  the holding force, which static friction supplies, so it moves from the ideal
  to the nonideal term, and its ratio to ``mu_s N`` says whether it holds.

This is the route :meth:`CompiledModel.solve_modes` takes for one state,
written for stacks; members it cannot vouch for (``ok`` False: a mass matrix
near singular, an ill-conditioned Gram matrix, a non-finite number) go to that
one-state route, which decides them. The mass matrix comes as a
:class:`MassSolve` (a constant one factorized once per parameter vector, or
one per state).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._lapack import lapack  # not scipy.linalg: its import costs a cold start 0.15 s
from .core import StackedGram, scale_rows

__all__ = ["MassSolve", "StackMotion", "constant_mass", "solve_stack", "state_mass"]


class MassSolve:
    """``X -> M^{-1} X`` for ``X`` of shape (n, c, G), members along the last axis.

    Built by :func:`constant_mass` or :func:`state_mass`. ``ok`` (shape (G,))
    is False where ``M`` could not be used (near singular, not definite, not
    finite): those members get NaN, which :class:`StackedGram` flags.
    """

    def __init__(self, kind: str, data: np.ndarray, ok: np.ndarray):
        self.kind, self.data, self.ok = kind, data, ok
        # a diagonal M acts entry by entry: StackedGram then applies it to Q and A^T apart, without stacking them
        self.elementwise = kind == "diagonal"
        # one diagonal for every member, of a few entries: a row times a number costs less than a broadcast
        self._entries = data[:, 0].tolist() if kind == "diagonal" and data.shape[1] == 1 and data.shape[0] <= 8 else None
        # M = I (unit point masses): M^{-1} X is X itself, and a product by 1.0 would change no digit
        self._identity = self._entries is not None and all(entry == 1.0 for entry in self._entries)

    def take(self, members) -> "MassSolve":
        """The solver of some members (a slice or an index array)."""
        if self.kind == "diagonal":  # one column serves every member (one parameter vector)
            # rows in C order: a product with an (n, G) stack in another memory order runs strided
            data = self.data if self.data.shape[1] == 1 else np.ascontiguousarray(self.data[:, members])
            return MassSolve(self.kind, data, self.ok[members])
        if self.kind == "shared":
            return MassSolve(self.kind, self.data, self.ok[members])
        return MassSolve(self.kind, self.data[members], self.ok[members])

    def column(self, X: np.ndarray) -> np.ndarray:
        """``M^{-1} X`` for one column per member, ``X`` of shape (n, G) (an elementwise solver's fast path).

        With ``M = I`` the result is ``X`` itself (not a copy): callers read it, they never write into it.
        """
        if self._identity:
            return X
        if self._entries is not None:
            out = np.empty(X.shape)
            for j, entry in enumerate(self._entries):
                np.multiply(X[j], entry, out=out[j])
            return out
        if self.kind == "diagonal":
            return self.data * X
        return self(X[:, None, :])[:, 0]

    def __call__(self, X: np.ndarray) -> np.ndarray:
        if self.kind == "diagonal":  # Cartesian point masses: a product per entry
            if X.shape[1] == 1:  # one column: a product of two (n, G) arrays, cheaper than a broadcast in three axes
                return (self.data * X[:, 0])[:, None, :]
            return self.data[:, None, :] * X
        if self.kind == "shared":  # one constant M^{-1} for every member
            n = self.data.shape[0]
            return (self.data @ X.reshape(n, -1)).reshape(X.shape)
        if self.kind == "inverse":  # a constant M^{-1} per member
            return np.einsum("gij,jcg->icg", self.data, X)
        out = np.linalg.solve(self.data, X.transpose(2, 0, 1)).transpose(1, 2, 0)  # an M per state
        if not self.ok.all():
            out[:, :, ~self.ok] = np.nan
        return out


def constant_mass(cm, P: np.ndarray, members: int = 1) -> MassSolve | None:
    """The solver of a constant mass matrix ``M(p)`` for parameter rows ``P`` (shape (G, k), or (k,) for all).

    With one parameter vector ``P`` of shape (k,), ``members`` is the size of the stack it serves.

    Each distinct parameter vector is factorized once, with the Cholesky factor
    the one-state route caches (:meth:`CompiledModel._constant_mass`), so the
    two agree on which ``M`` is singular. Returns None when some ``M`` is
    singular (a massless coordinate): the one-state route's augmented solver
    takes those runs.
    """
    shared = P.ndim == 1
    if shared or (P.shape[0] and (P == P[0]).all()):  # one parameter vector (a sweep over gains): no sort
        unique, which = P[None, :] if shared else P[:1], np.zeros(1 if shared else P.shape[0], dtype=np.intp)
    else:
        unique, which = np.unique(P, axis=0, return_inverse=True)
    n, G = cm.n, members if shared else P.shape[0]
    inverses = []
    for p in unique:
        _, factor = cm._constant_mass(p)
        if factor is None:
            return None
        inverses.append(lapack.dpotrs(factor, np.eye(n), lower=1)[0])  # M^{-1} from the cached factor
    inverses = np.array(inverses)
    which = np.asarray(which).ravel()
    ok = np.ones(G, dtype=bool)
    if n > 1 and not np.any(inverses[:, ~np.eye(n, dtype=bool)]) or n == 1:  # diagonal: products
        diagonal = np.diagonal(inverses, axis1=1, axis2=2).T  # (n, U)
        # one column when every member has the same M (it broadcasts), else a column per member
        spread = shared or len(unique) == 1
        return MassSolve("diagonal", np.ascontiguousarray(diagonal if spread else diagonal[:, which]), ok)
    if shared or len(unique) == 1:
        return MassSolve("shared", inverses[0], ok)
    return MassSolve("inverse", inverses[which], ok)


def state_mass(M: np.ndarray, pivot_rtol: float, relative_to: str = "own") -> MassSolve:
    """The solver of one mass matrix per state, ``M`` of shape (G, n, n), with the states where it can be trusted.

    ``M`` must be clearly positive definite: every Cholesky pivot squared above
    ``pivot_rtol`` times its own diagonal entry (``relative_to="own"``: the
    test of :func:`~udk_notebooks.core.cholesky_or_none` on ``M`` equilibrated
    to a unit diagonal) or times the largest diagonal entry
    (``"largest"``). A matrix that fails, or that is not finite, is replaced by
    the identity and its state flagged (``ok`` False).
    """
    n = M.shape[-1]
    finite = np.isfinite(M).all(axis=(1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        safe = np.where(finite[:, None, None], M, np.eye(n))
        diagonal = np.diagonal(safe, axis1=1, axis2=2)
        reference = diagonal if relative_to == "own" else np.abs(diagonal).max(axis=1, keepdims=True)
        try:
            pivots = np.diagonal(np.linalg.cholesky(safe), axis1=1, axis2=2) ** 2
            ok = finite & (pivots > pivot_rtol * reference).all(axis=1)
        except np.linalg.LinAlgError:  # some M is not positive definite: find which
            if relative_to == "own":
                root = np.sqrt(np.where(diagonal > 0, diagonal, 1.0))
                eig = np.linalg.eigvalsh(safe / (root[:, :, None] * root[:, None, :]))
                ok = finite & (diagonal.min(axis=1, initial=np.inf) > 0) & (eig[:, 0] > pivot_rtol)
            else:
                eig = np.linalg.eigvalsh(safe)
                ok = finite & (eig[:, 0] > pivot_rtol * np.abs(eig).max(axis=1, initial=0.0))
    if not ok.all():
        safe = np.where(ok[:, None, None], safe, np.eye(n))
    return MassSolve("state", safe, ok)


@dataclass(frozen=True, eq=False)
class StackMotion:
    """What :func:`solve_stack` returns for ``G`` states.

    Attributes
    ----------
    qdd : ndarray, shape (n, G)
    ideal, nonideal : ndarray, shape (n, G), or None
        ``F^L`` without the holding forces of sticking contacts, and ``F^C``
        with them (as :meth:`CompiledModel.solve_modes`); None unless asked for.
    ratios : ndarray, shape (s, G), or None
        Per sticking contact (in the order of ``stuck``): holding force over
        its static limit ``mu_s N``; static friction holds while ``|ratio| <= 1``.
    ok : ndarray of bool, shape (G,)
        False where the stack cannot vouch for the answer (see :class:`StackedGram`).
    free : ndarray, shape (n, G), or None
        ``a = M^{-1} Q``, the motion without constraints (a stepping
        integrator whose ``M`` and ``Q`` depend on the parameters alone passes
        it back as ``free``); zero for a member whose ``M^{-1}`` failed.
    """

    qdd: np.ndarray
    ideal: np.ndarray | None
    nonideal: np.ndarray | None
    ratios: np.ndarray | None
    ok: np.ndarray
    free: np.ndarray | None = None


def solve_stack(mass: MassSolve, Q, A, b, C=None, friction=None, modes=None, stuck=(), forces: bool = False,
                out: np.ndarray | None = None, free: np.ndarray | None = None) -> StackMotion:
    """The Udwadia-Kalaba equation with friction modes for a stack of ``G`` states (see the module docstring).

    Parameters
    ----------
    mass : MassSolve
        ``M^{-1}`` of these states.
    Q : ndarray, shape (n, G)
    A : ndarray, shape (m, n, G)
        Constraint rows, ``b`` with any stabilization already added.
    b : ndarray, shape (m, G)
    C : ndarray, shape (n, G), optional
        The model's own nonideal force.
    friction : ndarray, shape (k, 4 + n, G), optional
        Per friction entry the columns of :attr:`CompiledModel.friction_data`:
        ``s``, its drift ``ds/dt - (ds/dq') q''``, ``mu``, ``mu_s``, ``ds/dq'``.
    modes : ndarray of int, shape (k, G), optional
        +1/-1 sliding, 0 sticking (contacts with their own normal rows, and
        open contacts, are the one-state route's: not here).
    stuck : sequence of int
        The entries that stick in every one of these states (their mode is 0).
    forces : bool
        Also return ``F^L`` and ``F^C`` (a run's output); a stepping
        integrator needs ``q''`` and the ratios only.
    out : ndarray, shape (n, G), optional
        Where to write ``q''`` (rows of a stepping integrator's derivative).
    free : ndarray, shape (n, G), optional
        ``M^{-1} Q`` of these states when the caller has it (``StackMotion.free``
        of an earlier call with the same ``M`` and ``Q``); computed by default.

    Returns
    -------
    StackMotion
    """
    m = A.shape[0]
    stuck = list(stuck)
    if stuck:  # s' = 0 for each sticking contact: one more row, ds/dq' q'' = -drift
        A = np.concatenate([A, friction[stuck, 4:]], axis=0)
        b = np.concatenate([b, -friction[stuck, 1]], axis=0)
    if m and A.shape[0] > 1:
        # Rows of one size, as udwadia_kalaba gives them (a power of two changes no digit): the Gram matrix's
        # conditioning test must not see a constraint in other units as a dependence. One row needs no scaling.
        A_rows, b_rows = scale_rows(A[:m].transpose(2, 0, 1), b[:m].T)
        A = np.concatenate([A_rows.transpose(1, 2, 0), A[m:]], axis=0) if stuck else A_rows.transpose(1, 2, 0)
        b = np.concatenate([b_rows.T, b[m:]], axis=0) if stuck else b_rows.T
    direct = out if C is None and friction is None else None  # q'' is final as the Gram matrix gives it
    gram = StackedGram(mass, Q, A, b, usable=mass.ok, out=direct, free=free)
    qdd, total, ratios = gram.qdd, C, None
    normal = gram.ideal(slice(0, m)) if (friction is not None or forces) else None
    if friction is not None and friction.shape[0]:
        size = np.sqrt(np.einsum("ng,ng->g", normal, normal))  # N = |F^L| without the holding forces
        for c in range(friction.shape[0]):
            if c not in stuck and np.any(modes[c]):  # kinetic friction of a sliding contact
                push = (friction[c, 2] * size * modes[c]) * friction[c, 4:]
                total = -push if total is None else total - push
        if stuck:
            lengths = np.sqrt(np.einsum("sng,sng->sg", friction[stuck, 4:], friction[stuck, 4:]))
            ratios = gram.multipliers[m:] * lengths / np.maximum(friction[stuck, 3] * size, 1e-300)
    nonideal = None
    if total is not None:
        response, nonideal = gram.respond(total)
        qdd = qdd + response
    ideal = None
    if forces:
        holding = gram.ideal(slice(m, None)) if stuck else None  # static friction: moved to the nonideal term
        nonideal = np.zeros_like(qdd) if nonideal is None else nonideal
        ideal, nonideal = normal, (nonideal if holding is None else nonideal + holding)
    if out is not None and qdd is not out:
        out[...] = qdd
        qdd = out
    return StackMotion(qdd, ideal, nonideal, ratios, gram.ok, gram.free)
