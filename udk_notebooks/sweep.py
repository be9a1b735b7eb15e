"""Parameter sweeps: one model, many parameter sets and gains, integrated together.

A stability map needs thousands of short runs that differ only in a gain or a
parameter. :func:`sweep` runs them as one batch with ``simulate``'s fixed-step
Euler or RK4 on ``simulate``'s grid, so each member equals its single
:func:`udk_notebooks.simulate` run to rounding (1e-12 in the tests):

* at every stage, :meth:`CompiledModel.terms_batch` evaluates the entries of
  ``M, Q, A, b, C``, the residuals ``phi, (phi', psi)`` of the Baumgarte
  correction and the friction data of every member in one lambdified, CSE'd
  call (parameter-only subexpressions computed once per member set), with the
  members along the last axis;
* the Udwadia-Kalaba equation (Udwadia & Kalaba 1992, Eq. 7; Udwadia, Kalaba
  & Fan 2005, Eqs. 10-11 for ``C`` and friction) is solved for all members
  with stacked linear algebra: closed forms for one or two rows with a
  diagonal ``M`` (row operations on arrays of length B), stacked ``matmul``
  and ``solve`` otherwise, and the single-run solver for a member whose
  Gram matrix is ill-conditioned;
* a gain check (Beshaw 2014, Theorems 1-2) and a start check decide every
  member at once, as ``simulate`` would.

Members that a single run would refuse (an unstable gain, an inconsistent
initial state), that diverge (``simulate``'s :data:`DIVERGENCE_FACTOR` rule on
the state and on the residuals, at the same sample) or whose equation of
motion fails are reported per member in :attr:`SweepResult.status`,
``message`` and ``stopped_at``; their rows hold NaN from the point where they
stopped, never a silent NaN with status "ok".

Coulomb friction contacts (normal force ``|F^L|``) switch per member: every
member keeps its own modes and members are grouped by the contacts that stick
(one stacked solve per group). A member whose switching function changes
sign in a step waits, parked, for up to :data:`PARK_STEPS` steps; then the
parked switches are located together (regula falsi, then ``simulate``'s
bisection replayed against the root, so the switching instant is the single
run's), the modes chosen as :meth:`CompiledModel.release` chooses them, the
sticking contacts put at rest, and the parked members catch up with the
others, step by step.

The adaptive methods (each run has its own steps: no common grid),
:class:`~udk_notebooks.stabilization.GainMatrix` gains and contacts with their
own normal rows (``CoulombFriction.normal``) run member by member through
``simulate``: the same results, at the speed of a loop, with the same
per-member report.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from itertools import product
from collections.abc import Mapping, Sequence

import numpy as np

from ._checks import as_finite_array
from ._threads import single_blas_thread
from .compiled import HOLD_RTOL, STICK_SPEED
from .core import GRAM_RCOND
from .errors import SimulationError
from .simulation import (DIVERGENCE_FACTOR, FIXED_STEP_METHODS, _check_initial, _compiled, _runaway,
                         _stick_velocity, simulate)
from .stabilization import Baumgarte, check_gain, stability

__all__ = ["REGIMES", "SweepResult", "parameter_grid", "stability_map", "stick_slip_map", "sweep"]


def parameter_grid(**axes: Sequence[float]) -> list[dict[str, float]]:
    """All combinations of the given values, first axis slowest (C order, as ``np.meshgrid(..., indexing="ij")``).

    >>> parameter_grid(alpha=[1, 2], beta=[3, 4])
    [{'alpha': 1.0, 'beta': 3.0}, {'alpha': 1.0, 'beta': 4.0}, {'alpha': 2.0, 'beta': 3.0}, {'alpha': 2.0, 'beta': 4.0}]
    """
    if not axes:
        raise ValueError("`parameter_grid` needs at least one axis, e.g. parameter_grid(alpha=[1, 2])")
    values = {name: as_finite_array(v, name, 1) for name, v in axes.items()}
    return [dict(zip(values, map(float, combo))) for combo in product(*values.values())]


@dataclass(frozen=True, eq=False)
class SweepResult:
    """Trajectories and summaries of the ``B`` members of a sweep.

    Attributes
    ----------
    t : ndarray, shape (N,)
        Output times (the fixed-step grid).
    q, qd : ndarray, shape (B, N, n)
        Coordinates and velocities; NaN after a member stopped.
    position_residual : ndarray, shape (B, N, m_h)
        ``phi(q, t)`` along each run (the drift).
    velocity_residual : ndarray, shape (B, N, m)
        ``(phi', psi)`` along each run.
    status : ndarray of str, shape (B,)
        ``"ok"``; ``"refused"`` (a single run would raise before starting: an
        unstable gain or an inconsistent start; see ``message``);
        ``"diverged"`` (stopped at ``stopped_at`` as ``simulate`` stops it, by
        :data:`~udk_notebooks.simulation.DIVERGENCE_FACTOR`); or ``"failed"``
        (the equation of motion or the friction law failed at ``stopped_at``,
        where a single run raises).
    message : sequence of str
        Why a member was refused, diverged or failed (empty for "ok"). A
        refused gain's message is written when it is first read.
    stopped_at : ndarray, shape (B,)
        When a member diverged or failed (NaN for the others); its samples
        from there on are NaN.
    members : list of dict
        The parameter values and gains of each member.
    modes : list of ndarray, optional
        Friction modes per member (shape (N_i, k) on that member's own
        times, which include its switching instants), for friction models;
        equal to ``simulate(...).modes`` (None for refused members).
    mode_times : list of ndarray, optional
        Those times per member, shape (N_i,) (``simulate(...).t``).
    runs : list of Trajectory, optional
        The single runs (None for refused members) when the sweep ran member by member.
    """

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    position_residual: np.ndarray
    velocity_residual: np.ndarray
    status: np.ndarray
    message: list
    stopped_at: np.ndarray
    members: list
    modes: list | None = None
    runs: list | None = None
    mode_times: list | None = None

    @property
    def max_drift(self) -> np.ndarray:
        """Largest ``|phi|`` over each run, shape (B,) (NaN for refused or diverged members)."""
        return _masked_max(np.abs(self.position_residual).max(axis=2, initial=0.0), self.status)

    @property
    def final_drift(self) -> np.ndarray:
        """``max |phi|`` at the final time, shape (B,) (NaN for refused or diverged members)."""
        drift = np.abs(self.position_residual[:, -1]).max(axis=1, initial=0.0)
        return np.where(self.status == "ok", drift, np.nan)


def _masked_max(values, status):
    return np.where(status == "ok", values.max(axis=1), np.nan)


def _members(params, stabilization, states: int = 1):
    """Parameter dicts and stabilizations, one each per member (a single one is shared).

    ``states`` is the number of initial states given (1 when shared): with a
    single parameter set and gain, each state is a member.
    """
    many = isinstance(stabilization, (list, tuple))
    if params is None or isinstance(params, Mapping):
        params = [params or {}] * (len(stabilization) if many else states)
    params = list(params)
    stabs = list(stabilization) if many else [stabilization] * len(params)
    if len(stabs) != len(params):
        raise ValueError(
            f"`stabilization` must be one object or a list with one per parameter set ({len(params)}); "
            f"got {len(stabs)}"
        )
    if not params:
        raise ValueError("`params` is empty: pass a list of parameter dicts, e.g. parameter_grid(m=[1, 2])")
    return params, list(stabs)


def _progress(total: int, show):
    """A tqdm bar (the notebook one when in Jupyter) if tqdm is installed and ``show``, else None."""
    if not show:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return tqdm(total=total, desc="sweep", leave=False, delay=0.5)  # only runs that last are worth a bar


def sweep(
    model,
    t_span: Sequence[float],
    q0,
    qd0,
    *,
    params=None,
    stabilization=None,
    method: str = "rk4",
    step: float | None = None,
    progress: bool = True,
    **simulate_options,
) -> SweepResult:
    """Integrate one model for many parameter sets and stabilization gains at once.

    Parameters
    ----------
    model : Model or CompiledModel
    t_span : (float, float)
        Start and end time, as for :func:`udk_notebooks.simulate`.
    q0, qd0 : array_like, shape (n,) or (B, n)
        Initial state, shared or one per member.
    params : dict or list of dict, optional
        Parameter values per member (see :func:`parameter_grid`).
    stabilization : Baumgarte, GainMatrix, None, or a list of them, optional
        One for all members or one per member.
    method : str, optional
        ``"euler"`` or ``"rk4"`` (batched), or an adaptive
        :func:`scipy.integrate.solve_ivp` method (member by member).
    step : float, optional
        Fixed step (default: 1/1000 of the span, as ``simulate``).
    progress : bool, optional
        Show a tqdm progress bar (the notebook one in Jupyter) on long runs.
    **simulate_options
        Passed to :func:`udk_notebooks.simulate`. ``constraint_tol`` and
        ``max_switches`` keep the batch; any other option (``rtol``, ``atol``,
        ``t_eval``, ``project``, ...) runs the members one by one.

    Returns
    -------
    SweepResult
        Members in the order given; each equals ``simulate(model, t_span,
        q0_i, qd0_i, params=params_i, stabilization=stab_i, ...)`` to rounding,
        including where a member stops as diverged.

    Notes
    -----
    The batch covers the fixed-step methods with Baumgarte stabilization (or
    none), with or without Coulomb friction contacts whose normal force is
    ``|F^L|``. Adaptive methods, :class:`GainMatrix` stabilization and
    contacts with their own normal rows run member by member through
    ``simulate`` (the same results, at the speed of a loop): each adaptive run
    chooses its own steps, so they share no grid to batch on. The batch does
    not watch for singular configurations (``simulate``'s rank-loss check,
    :mod:`udk_notebooks.singular`); for a mechanism that can reach one (a
    four-bar's change point), pass ``on_singular="stop"`` to run the members
    one by one with the check.
    """
    cm = _compiled(model)
    states = max((np.shape(v)[0] for v in (q0, qd0) if np.ndim(v) == 2), default=1)
    params, stabs = _members(params, stabilization, states)
    B = len(params)
    q0 = np.broadcast_to(as_finite_array(q0, "q0", np.ndim(q0)), (B, cm.n)).astype(float)
    qd0 = np.broadcast_to(as_finite_array(qd0, "qd0", np.ndim(qd0)), (B, cm.n)).astype(float)
    batched = (
        method in FIXED_STEP_METHODS
        and set(simulate_options) <= {"constraint_tol", "max_switches"}  # any other option: one by one
        and all(s is None or isinstance(s, Baumgarte) for s in stabs)
        and all(getattr(contact, "normal", None) is None for contact in cm.model.friction)
    )
    if not batched:
        return _one_by_one(cm, t_span, q0, qd0, params, stabs, method, step, progress, simulate_options)
    t_span = as_finite_array(t_span, "t_span", 1)
    if t_span.shape != (2,) or not t_span[1] > t_span[0]:
        raise ValueError(f"`t_span` must be (t0, tf) with tf > t0; got {t_span!r}")
    t0, tf = map(float, t_span)
    step = (tf - t0) / 1000 if step is None else float(step)
    if not (np.isfinite(step) and step > 0):
        raise ValueError(f"`step` must be a positive number; got {step!r}")
    tol = float(simulate_options.get("constraint_tol", 1e-9))
    max_switches = int(simulate_options.get("max_switches", 1000))
    count = max(1, int(round((tf - t0) / step)))
    grid = t0 + (tf - t0) * np.arange(count + 1) / count

    P = np.array([cm.parameters(p) for p in params])
    gains = np.array([[s.alpha, s.beta, s.gamma] if s is not None else [0.0, 0.0, 0.0] for s in stabs])
    status = np.array(["ok"] * B, dtype=object)
    message = _Messages(B)
    for i, reason in _refusals(cm, t0, q0, qd0, P, stabs, method, step, tol).items():
        status[i], message[i] = "refused", reason
    members = [dict(zip(cm.parameter_names, p.tolist()), stabilization=s) for p, s in zip(P, stabs)]
    live = np.flatnonzero(status == "ok")
    batch = _Batch(cm, P, gains)
    if batch.singular:  # a singular mass matrix (a massless coordinate): simulate's own solver, member by member
        return _one_by_one(cm, t_span, q0, qd0, params, stabs, method, step, progress, simulate_options)
    y0 = np.concatenate([q0, qd0], axis=1)
    modes0 = np.zeros((B, cm.n_friction), dtype=np.int64)
    failures = {}
    if cm.n_friction:
        y0[live], modes0[live] = _initial_modes(cm, batch, t0, y0[live], live, failures)
    limit = DIVERGENCE_FACTOR * (1.0 + np.abs(y0).max(axis=1))  # as simulate: the scale of the start
    batch.limit = limit
    bar = _progress(count, progress and B * count > 20000)
    with single_blas_thread(), np.errstate(all="ignore"):  # a diverging member is stopped and reported
        run = _integrate(batch, grid, method, y0, modes0, live, limit, max_switches, failures, bar)
    if bar is not None:
        bar.close()
    return _result(cm, batch, grid, run, y0, limit, status, message, members)


def _refusals(cm, t0, q0, qd0, P, stabs, method, step, tol) -> dict:
    """The members a single run would refuse, with its message: an inconsistent start or an unstable gain.

    The tests are those of ``simulate``, decided for the whole batch at once
    where the answer is clear and by the single-run checks themselves within
    a margin of their boundaries (so the decision and the message are the
    same). A refused gain's message is written when it is read (:class:`_Messages`).
    """
    refused = {}
    B = len(P)
    phi, vel = cm.residuals_batch(t0, q0, qd0, P)
    pos = np.abs(phi).max(axis=1, initial=0.0) / (tol * np.maximum(1.0, np.abs(q0).max(axis=1)))
    speed = np.abs(vel).max(axis=1, initial=0.0) / (tol * np.maximum(1.0, np.abs(qd0).max(axis=1)))
    for i in np.flatnonzero(~((pos < 0.5) & (speed < 0.5))):  # near or past the tolerance: the single check
        try:
            _check_initial(cm, t0, q0[i], qd0[i], P[i], tol)
        except ValueError as exc:
            refused[int(i)] = str(exc)
    stabilized = [i for i in range(B) if stabs[i] is not None and i not in refused]
    if stabilized:
        # check_gain's spectral radius of R(tau E) (Beshaw 2014, Eqs. 22, 27), for every gain at once
        E = _error_matrices(np.array([[stabs[i].alpha, stabs[i].beta, stabs[i].gamma] for i in stabilized]),
                            cm.n_holonomic, cm.n_nonholonomic)
        radius = np.zeros(len(stabilized))
        if E.shape[1]:
            z = step * np.linalg.eigvals(E)
            radius = np.abs(_taylor(method, z)).max(axis=1)
        for j in np.flatnonzero(~(radius < 1.0 - 1e-9)):
            i = stabilized[j]
            E_i = stabs[i].error_matrix(cm.n_holonomic, cm.n_nonholonomic)
            if radius[j] <= 1.0 + 1e-9 and stability(method, step, E_i).bounded:  # at the edge: check_gain's number
                continue
            # refused; check_gain writes the message when it is read
            refused[i] = partial(_gain_message, stabs[i], method, step, cm.n_holonomic, cm.n_nonholonomic)
    return refused


def _gain_message(stabilization, method, step, n_holonomic, n_nonholonomic) -> str:
    """The message of the UnstableGainError that ``simulate`` raises for this gain."""
    try:
        check_gain(stabilization, method, step, n_holonomic, n_nonholonomic)
    except ValueError as exc:
        return str(exc)
    raise AssertionError("the gain was refused by the batch check but accepted by check_gain")


class _Messages(Sequence):
    """The members' messages, each written when first read.

    The message of a refused gain searches for the largest stable step
    (:func:`~udk_notebooks.stabilization.check_gain`, milliseconds each): a map
    whose corner is refused would spend seconds writing messages nobody reads.
    """

    def __init__(self, size: int):
        self._items = [""] * size

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        item = self._items[index]
        if callable(item):
            item = self._items[index] = item()
        return item

    def __setitem__(self, index, value):
        self._items[index] = value

    def __eq__(self, other):
        return list(self) == list(other) if isinstance(other, (list, tuple, _Messages)) else NotImplemented

    def __repr__(self) -> str:
        return repr(list(self))


def _error_matrices(gains, n_h: int, n_n: int) -> np.ndarray:
    """:meth:`Baumgarte.error_matrix` for rows of ``(alpha, beta, gamma)``: shape (S, 2 n_h + n_n, 2 n_h + n_n)."""
    E = np.zeros((gains.shape[0], 2 * n_h + n_n, 2 * n_h + n_n))
    h, v = np.arange(n_h), np.arange(n_h, 2 * n_h)
    E[:, h, v] = 1.0
    E[:, v, h] = -(gains[:, 1:2] ** 2)
    E[:, v, v] = -2.0 * gains[:, 0:1]
    w = np.arange(2 * n_h, 2 * n_h + n_n)
    E[:, w, w] = -gains[:, 2:3]
    return E


def _taylor(method: str, z: np.ndarray) -> np.ndarray:
    """The amplification factor ``R(z)`` of Euler (``1 + z``) or RK4 (degree-4 Taylor polynomial), elementwise."""
    coef = (1.0, 1.0) if method == "euler" else (1.0, 1.0, 1 / 2, 1 / 6, 1 / 24)
    out = np.full_like(z, coef[-1])
    for c in coef[-2::-1]:
        out = c + z * out
    return out


class _Batch:
    """The members' data that does not change during a run: parameters, gains and ``M^{-1}``.

    ``view(rows)`` gathers it for a subset of members (the ones still running,
    or the ones locating a friction switch), with their current modes.
    """

    def __init__(self, cm, P, gains):
        self.cm, self.P = cm, P
        self.limit = np.full(P.shape[0], np.inf)  # simulate's DIVERGENCE_FACTOR bound per member (set by sweep)
        self.c2a = -2.0 * gains[:, 0]  # Baumgarte.correction: -2 alpha phi' - beta^2 phi, then -gamma psi
        self.b2 = gains[:, 1] ** 2
        self.mg = -gains[:, 2]
        self.stabilized = bool(np.any(gains))
        self.diagonal = self.inverse = None
        self.singular = False
        if cm.constant_mass:  # M(p) once per distinct parameter vector, inverted in one stacked call
            unique, which = np.unique(P, axis=0, return_inverse=True)
            masses = np.array([np.asarray(cm.mass(p), dtype=float) for p in unique])
            eig = np.linalg.eigvalsh(masses)
            if not np.all(eig[:, 0] > 1e-10 * np.abs(eig).max(axis=1)):  # a singular M: simulate's own solver
                self.singular = True
                return
            inverse = np.linalg.inv(masses)
            off = ~np.eye(cm.n, dtype=bool)
            if not np.any(inverse[:, off]):  # diagonal (Cartesian coordinates): a product per entry
                self.diagonal = np.diagonal(inverse, axis1=1, axis2=2)[which.ravel()]
            else:
                self.inverse = inverse[which.ravel()]

    def view(self, rows, modes) -> "_View":
        return _View(self, np.asarray(rows), modes)


class _View:
    """Batched right-hand side ``(q', q'')`` and friction switching functions for some members.

    With the state ``y`` of shape (L, 2n), :meth:`evaluate` returns the
    derivative, the switching values ``g`` (as ``simulate``'s: ``mode * s`` for
    a sliding contact, ``1 + HOLD_RTOL - |ratio|`` for a sticking one; a sign
    change from positive is a switch) and the holding ratios. Members whose
    Gram matrix is ill-conditioned go through the single-run solver; one that
    fails there gets NaN and its error in ``failures`` (by member number).
    """

    def __init__(self, batch: _Batch, rows, modes):
        self.batch, self.cm, self.rows = batch, batch.cm, rows
        self.P = batch.P[rows]
        self.p_rows = list(np.ascontiguousarray(self.P.T))
        self.prepared = batch.cm.prepare_terms(self.p_rows)  # the parameter-only subexpressions, once
        self.c2a, self.b2, self.mg = batch.c2a[rows], batch.b2[rows], batch.mg[rows]
        self.lowest_limit = batch.limit[rows].min(initial=np.inf)  # below it, no member has run away
        self.diagonal = None if batch.diagonal is None else batch.diagonal[rows]
        self.diagonal_rows = None if self.diagonal is None else np.ascontiguousarray(self.diagonal.T)
        self.inverse = None if batch.inverse is None else batch.inverse[rows]
        self.failures = {}
        self.set_modes(np.array(modes, dtype=np.int64).reshape(len(rows), self.cm.n_friction))
        cm = self.cm
        self.k = 0 if cm.constant_mass else cm.n * cm.n
        self.size = self.k + cm.n + cm.m * cm.n + cm.m + cm.n
        self.buffer = np.zeros((self.size, len(rows)))  # structural zeros stay zero; the rest is overwritten

    def subset(self, rows) -> "_View":
        """The view of some of these members (positions in this view), with their modes."""
        return _View(self.batch, self.rows[rows], self.modes[rows])

    def set_modes(self, modes):
        """New modes (L, k): members are grouped by their set of sticking contacts (one stacked solve per group)."""
        self.modes = modes
        if not modes.shape[1]:
            self.groups = [(slice(None), [])]
            return
        stuck = modes == 0
        self.codes = codes = stuck @ (1 << np.arange(modes.shape[1]))
        present = np.unique(codes)
        contacts = [list(np.flatnonzero((c >> np.arange(modes.shape[1])) & 1)) for c in present]
        if present.size == 1:
            self.groups = [(slice(None), contacts[0])]
        elif np.all(codes[:-1] <= codes[1:]):  # members sorted by group (_advance_members): slices
            edges = np.searchsorted(codes, present, side="left").tolist() + [codes.size]
            self.groups = [(slice(lo, hi), c) for lo, hi, c in zip(edges[:-1], edges[1:], contacts)]
        else:
            self.groups = [(np.flatnonzero(codes == c), stuck_set) for c, stuck_set in zip(present, contacts)]

    def sorted_order(self):
        """The permutation that puts the members in group order, or None when they are in order."""
        if not self.modes.shape[1] or np.all(self.codes[:-1] <= self.codes[1:]):
            return None
        return np.argsort(self.codes, kind="stable")

    def _mass_solve(self, sel, X, M):
        """``M^{-1} X`` for X of shape (G, n, k); NaN for a member whose ``M`` is singular there."""
        if self.diagonal is not None:
            return self.diagonal[sel][:, :, None] * X
        if self.inverse is not None:
            return self.inverse[sel] @ X
        M = M[sel]
        try:
            return np.linalg.solve(M, X)
        except np.linalg.LinAlgError:  # some member's M is singular: those members take the single-run solver
            out = np.full(X.shape, np.nan)
            for i in range(M.shape[0]):
                try:
                    out[i] = np.linalg.solve(M[i], X[i])
                except np.linalg.LinAlgError:
                    pass
            return out

    def evaluate(self, t, y):
        cm, n, m, nh = self.cm, self.cm.n, self.cm.m, self.cm.n_holonomic
        L = y.shape[0]
        yt = y.T
        q_rows, qd_rows = list(yt[:n]), list(yt[n:])
        terms = cm.terms_batch(t, q_rows, qd_rows, self.p_rows, self.prepared)
        E, buf, k = len(cm.nonzero), self.buffer, self.k
        for row, value in zip(cm.nonzero, terms[:E]):
            buf[row] = value
        Q = buf[k : k + n]  # (n, L): the members along the last axis, as the lambdified rows come
        A = buf[k + n : k + n + m * n].reshape(m, n, L)
        b = buf[k + n + m * n : k + n + m * n + m]
        C = buf[k + n + m * n + m :] if cm.has_nonideal else None
        M = None if cm.constant_mass else buf[:k].reshape(n, n, L).transpose(2, 0, 1)
        correction = None
        if self.batch.stabilized:  # Baumgarte.correction, row by row: -2 alpha phi' - beta^2 phi, then -gamma psi
            phi, vel = terms[E : E + nh], terms[E + nh : E + nh + m]
            correction = np.empty((m, L))
            for i in range(m):
                correction[i] = self.c2a * vel[i] - self.b2 * phi[i] if i < nh else self.mg * vel[i]
            b = b + correction
        contacts = self.modes.shape[1]
        F = None
        if contacts:  # per contact: s, drift, mu, mu_s, slope (n)
            F = np.empty((contacts, 4 + n, L))
            for j, value in enumerate(terms[E + nh + m :]):
                F[j // (4 + n), j % (4 + n)] = value
        self.friction = F
        out = np.empty((L, 2 * n))
        out[:, :n] = y[:, n:]
        g = ratios = np.empty((L, 0))
        if contacts:
            ratios = np.full((L, contacts), np.nan)
        for sel, stuck in self.groups:
            if 0 < m + len(stuck) <= 2 and self.diagonal is not None:
                qdd, ok, ratio = self._solve_small(sel, Q, A, b, C, F, stuck)
                out[sel, n:] = qdd.T
            else:
                qdd, ok, ratio = self._solve(sel, Q.T, A.transpose(2, 0, 1), b.T, None if C is None else C.T,
                                             M, F, stuck)
                out[sel, n:] = qdd
            if stuck:
                ratios[np.ix_(np.arange(L)[sel], stuck)] = ratio
            if not ok.all():  # ill-conditioned Gram matrix: the single-run solver decides
                members = np.arange(L)[sel][~ok]
                for i in members:
                    out[i, n:], ratios[i] = self._single(t, y[i], i, correction)
        if contacts:
            s = F[:, 0].T
            g = np.where(self.modes != 0, self.modes * s, 1.0 + HOLD_RTOL - np.abs(ratios))
        return out, g, ratios

    def _single(self, t, y, i, correction):
        """One member through :meth:`CompiledModel.solve_modes` (the single-run solver)."""
        n = self.cm.n
        tt = float(t if np.ndim(t) == 0 else t[i])
        try:
            motion, ratios = self.cm.solve_modes(tt, y[:n], y[n:], self.P[i], tuple(self.modes[i]),
                                                 None if correction is None else correction[:, i])
            return motion.qdd, ratios
        except (ValueError, ArithmeticError, np.linalg.LinAlgError) as exc:
            self.failures.setdefault(int(self.rows[i]), (tt, f"{type(exc).__name__}: {exc}"))
            return np.full(n, np.nan), np.full(self.modes.shape[1], np.nan)

    def _solve_small(self, sel, Q, A, b, C, F, stuck):
        """:meth:`_solve` for at most two rows (with the sticking ones) and a diagonal ``M``.

        The members lie along the last axis (``Q, C`` shape (n, L), ``A``
        (m, n, L), ``b`` (m, L)), so every operation is one numpy call on
        rows of length L, and the 1 x 1 or 2 x 2 Gram matrix is solved in
        closed form; ``ok`` is the test of :func:`udk_notebooks.core.solve_batch`
        (smallest eigenvalue above ``GRAM_RCOND`` times the largest).
        Returns ``q''`` of shape (n, G), ``ok`` and the holding ratios (G, s).
        """
        m = self.cm.m
        d = self.diagonal_rows[:, sel]
        rows = [A[i][:, sel] for i in range(m)] + [F[c, 4:][:, sel] for c in stuck]
        rhs = [b[i][sel] for i in range(m)] + [-F[c, 1][sel] for c in stuck]
        a = d * Q[:, sel]  # M^{-1} Q
        X = [d * row for row in rows]  # M^{-1} A^T, column by column
        g00 = _dot(rows[0], X[0])
        if len(rows) == 1:
            ok = np.isfinite(g00) & (g00 > 0)
            g00 = np.where(ok, g00, 1.0)

            def gram_solve(r):
                return [r[0] / g00]
        else:
            g01, g11 = _dot(rows[0], X[1]), _dot(rows[1], X[1])
            half, gap = (g00 + g11) / 2, np.sqrt(((g00 - g11) / 2) ** 2 + g01 * g01)
            ok = np.isfinite(gap) & (half - gap > GRAM_RCOND * (half + gap))
            det = np.where(ok, g00 * g11 - g01 * g01, 1.0)

            def gram_solve(r):
                return [(g11 * r[0] - g01 * r[1]) / det, (g00 * r[1] - g01 * r[0]) / det]
        lam = gram_solve([r - _dot(row, a) for r, row in zip(rhs, rows)])
        qdd = a
        for x, value in zip(X, lam):
            qdd = qdd + x * value
        total = None if C is None else C[:, sel]
        ratio = None
        if F is not None:
            normal = 0.0  # F^L without the holding forces: the geometric rows' part
            for row, value in zip(rows[:m], lam[:m]):
                normal = normal + row * value
            size = np.sqrt(_dot(normal, normal)) if m else np.zeros(a.shape[1])
            modes = self.modes[sel].T
            for c in range(modes.shape[0]):
                if c not in stuck:
                    push = F[c, 2][sel] * size * modes[c] * F[c, 4:][:, sel]
                    total = -push if total is None else total - push
            if stuck:
                ratio = np.array([lam[m + j] * np.sqrt(_dot(rows[m + j], rows[m + j]))
                                  / np.maximum(F[c, 3][sel] * size, 1e-300) for j, c in enumerate(stuck)]).T
        if total is not None:
            aC = d * total
            for x, value in zip(X, gram_solve([_dot(row, aC) for row in rows])):
                aC = aC - x * value
            qdd = qdd + aC
        return qdd, ok, ratio

    def _solve(self, sel, Q, A, b, C, M, F, stuck):
        """Eq. (7) of Udwadia & Kalaba (1992) for one group, friction as in ``CompiledModel.solve_modes``.

        The ideal force ``F^L = A^T lam`` does not depend on ``C`` (2005 paper,
        Eq. 10): it is solved first, its size gives the kinetic friction
        ``C = -mu |F^L| sgn(s) ds/dq'`` of the sliding contacts, and the
        response to ``C`` is added (Eq. 11). Sticking contacts add the rows
        ``s' = 0``; their multipliers are the holding forces.
        """
        m = self.cm.m
        Q, A, b = Q[sel], A[sel], b[sel]
        if stuck:
            slope = F[stuck, 4:].transpose(2, 0, 1)[sel]  # (G, s, n)
            A = np.concatenate([A, slope], axis=1)
            b = np.concatenate([b, -F[stuck, 1].T[sel]], axis=1)
        rows = A.shape[1]
        At = A.transpose(0, 2, 1)
        X = self._mass_solve(sel, np.concatenate([Q[:, :, None], At], axis=2), M)  # M^{-1} [Q, A^T]
        solved = np.isfinite(X).all(axis=(1, 2))
        if not solved.all():
            X = np.where(solved[:, None, None], X, 0.0)  # those members go to the single-run solver (ok False)
        a, XA = X[:, :, 0], X[:, :, 1:]
        if rows == 1:
            row, x = A[:, 0], XA[:, :, 0]
            gram = (row * x).sum(axis=1)
            ok = np.isfinite(gram) & (gram > 0)
            gram = np.where(ok, gram, 1.0)
            lam = ((b[:, 0] - (row * a).sum(axis=1)) / gram)[:, None]
            qdd = a + x * lam
            solve_gram = lambda r: r / gram[:, None]  # noqa: E731
        elif rows:
            gram = A @ XA
            eig = np.linalg.eigvalsh(gram)
            ok = np.isfinite(eig).all(axis=1) & (eig[:, 0] > GRAM_RCOND * eig[:, -1])
            gram = np.where(ok[:, None, None], gram, np.eye(rows))
            lam = np.linalg.solve(gram, (b - (A @ a[:, :, None])[:, :, 0])[:, :, None])[:, :, 0]
            qdd = a + (XA @ lam[:, :, None])[:, :, 0]
            solve_gram = lambda r: np.linalg.solve(gram, r[:, :, None])[:, :, 0]  # noqa: E731
        else:
            ok, lam, qdd = np.ones(a.shape[0], dtype=bool), np.zeros((a.shape[0], 0)), a
            solve_gram = lambda r: r  # noqa: E731
        ok = ok & solved
        ratio = None
        total = None if C is None else C[sel]
        if F is not None:
            ideal = (At @ lam[:, :, None])[:, :, 0]
            normal = ideal - (At[:, :, m:] @ lam[:, m:, None])[:, :, 0] if stuck else ideal
            size = np.sqrt((normal * normal).sum(axis=1))
            modes = self.modes[sel]
            for c in range(modes.shape[1]):  # sliding contacts (a sticking one has mode 0)
                if np.any(modes[:, c]):
                    push = (F[c, 2][sel] * size * modes[:, c])[:, None] * F[c, 4:].T[sel]
                    total = -push if total is None else total - push
            if stuck:
                lengths = np.sqrt((F[stuck, 4:] ** 2).sum(axis=1)).T[sel]  # |ds/dq'| per sticking contact
                ratio = lam[:, m:] * lengths / np.maximum(F[stuck, 3].T[sel] * size[:, None], 1e-300)
        if total is not None:  # the constrained response to C: M^{-1} (C - A^T G^{-1} A M^{-1} C)
            aC = self._mass_solve(sel, total[:, :, None], M)[:, :, 0]
            if rows:
                muC = solve_gram((A @ aC[:, :, None])[:, :, 0])
                aC = aC - (XA @ muC[:, :, None])[:, :, 0]
            qdd = qdd + aC
        return qdd, ok, ratio


def _dot(u, v):
    """``sum_j u[j] v[j]`` over the first axis, as row operations (a reduction over a short axis costs more)."""
    if u.shape[0] > 8:
        return (u * v).sum(axis=0)
    out = u[0] * v[0]
    for j in range(1, u.shape[0]):
        out = out + u[j] * v[j]
    return out


def _advance(view, t, y, h, k1, method):
    """One Euler or RK4 step from ``(t, y)`` whose first stage ``k1`` is known; ``h`` a float or shape (L,)."""
    if method == "euler":
        return y + (h if np.ndim(h) == 0 else h[:, None]) * k1
    hc = h if np.ndim(h) == 0 else h[:, None]
    k2 = view.evaluate(t + h / 2, y + hc / 2 * k1)[0]
    k3 = view.evaluate(t + h / 2, y + hc / 2 * k2)[0]
    k4 = view.evaluate(t + h, y + hc * k3)[0]
    return y + hc / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def _initial_modes(cm, batch, t0, y, live, failures):
    """``simulate``'s start with friction: modes from the state, sticking contacts put exactly at rest.

    Members with every contact clearly sliding take ``sign(s)`` at once; the
    others go through the single-run code (:meth:`CompiledModel.friction_modes`).
    """
    n = cm.n
    view = batch.view(live, np.ones((live.size, cm.n_friction)))
    view.evaluate(t0, y)
    s = view.friction[:, 0].T
    scale = np.maximum(1.0, np.abs(y[:, n:]).max(axis=1))
    modes = np.sign(s).astype(np.int64)
    y = y.copy()
    for j in np.flatnonzero(~(np.abs(s) > 10 * STICK_SPEED * scale[:, None]).all(axis=1)):
        p = batch.P[live[j]]
        try:
            modes[j] = cm.friction_modes(t0, y[j, :n], y[j, n:], p)
            y[j] = _stick_velocity(cm, t0, y[j], p, tuple(modes[j]))
        except ValueError as exc:
            failures[int(live[j])] = (t0, f"{type(exc).__name__}: {exc}")
            y[j] = np.nan
    return y, modes


@dataclass
class _Run:
    """What :func:`_integrate` hands to :func:`_result`."""

    states: np.ndarray  # (N, B, 2n), NaN where not reached
    stops: dict  # member -> (time, reason, status)
    modes: np.ndarray | None  # (N, B, k) at the grid samples
    switches: dict  # member -> list of (time, modes) at switching instants
    replaced: dict  # member -> grid indices k where a switch landed on the grid time and stands for that sample


PARK_STEPS = 16
"""A member whose friction switch fires waits at most this many steps, with the others that fire meanwhile,
before the switches are located and settled together (then it catches up, a step per step, with the rest)."""


def _integrate(batch, grid, method, y0, modes0, live, limit, max_switches, failures, bar) -> _Run:
    """All live members over the grid, one stacked step at a time (``simulate``'s ``_integrate_fixed``).

    Each member has its own grid index. A member whose friction switch fires
    in a step is parked with that step's data; every :data:`PARK_STEPS`
    steps the parked members' switches are settled in one batch
    (:func:`_switch`), and they rejoin the others a few grid steps behind,
    stepping along with them until they reach the end. Settling a handful of
    switches costs about as much as settling many, so this saves most of it.
    """
    cm = batch.cm
    B, N, contacts = y0.shape[0], grid.size, cm.n_friction
    states = np.full((N, B, 2 * cm.n), np.nan)  # step by step: each step's samples side by side
    mode_log = np.zeros((N, B, contacts), dtype=np.int8) if contacts else None
    run = _Run(states, {}, mode_log, {}, {})
    counts = np.zeros(B, dtype=np.int64)
    for i, (t, reason) in failures.items():
        run.stops[i] = (t, reason, "failed")
    live = np.array([i for i in live if i not in failures], dtype=np.intp)
    if not live.size:
        return run
    view = batch.view(live, modes0[live])
    y = y0[live]
    index = np.zeros(live.size, dtype=np.intp)  # grid index of each live member
    states[0, live] = y
    if contacts:
        mode_log[0, live] = view.modes
    k1, g, _ = view.evaluate(grid[0], y)
    parked = []  # (members, modes, index, y, k1, g, y_new, k1_new, g_new) of switches waiting to be settled
    waiting = 0
    while live.size or parked:
        if live.size:
            t, target = grid[index], grid[index + 1]
            if index[0] == index[-1] and (index[0] == index).all():  # all on one grid time (the common case)
                t, target = t[0], target[0]
            y_new = _advance(view, t, y, target - t, k1, method)
            k1_new, g_new, _ = view.evaluate(target, y_new)
            stay = np.ones(live.size, dtype=bool)
            if contacts:
                fired = ((g > 0) & (g_new <= 0)).any(axis=1)
                if fired.any():
                    stay = ~fired
                    parked.append((live[fired], view.modes[fired], index[fired], y[fired], k1[fired], g[fired],
                                   y_new[fired], k1_new[fired], g_new[fired]))
            index = index + 1
            live, view, y, k1, g, index = _advance_members(
                batch, run, view, live, stay, index, y_new, k1_new, g_new, grid, limit, contacts)
            waiting += 1
        if parked and (waiting >= PARK_STEPS or not live.size):
            members, modes, at, *data = (np.concatenate(part) for part in zip(*parked))
            parked, waiting = [], 0
            ye, k1e, ge, modes, errors = _switch(batch, members, modes, grid[at], grid[at + 1], *data, method,
                                                 counts, max_switches, run, at + 1)
            joined = batch.view(members, modes)
            joined.failures.update(errors)
            back = _advance_members(batch, run, joined, members, np.ones(members.size, dtype=bool), at + 1, ye, k1e,
                                    ge, grid, limit, contacts)
            if back[0].size:  # rejoin the others
                live = np.concatenate([live, back[0]])
                y, k1, g = (np.concatenate([old, new]) for old, new in zip((y, k1, g), back[2:5]))
                index = np.concatenate([index, back[5]])
                view = batch.view(live, np.concatenate([view.modes, back[1].modes]))
                order = view.sorted_order()
                if order is not None:
                    live, y, k1, g, index = live[order], y[order], k1[order], g[order], index[order]
                    view = batch.view(live, view.modes[order])
        if bar is not None:
            bar.update(1)
    return run


def _advance_members(batch, run, view, live, stay, index, y, k1, g, grid, limit, contacts):
    """Store the members' new samples (at ``grid[index]``), stop those that ran away or failed, drop finished ones.

    ``stay`` marks the members that took their step (the others were parked).
    Returns the live members, their view, states, first stages, switching
    values and grid indices.
    """
    gone = ~stay
    largest = np.abs(y if stay.all() else y[stay]).max(initial=0.0)  # one reduction; per member only when needed
    if not largest <= view.lowest_limit:
        gone |= stay & ~(np.abs(y) <= limit[live, None]).all(axis=1)  # NaN and inf included
    if view.failures:
        gone |= stay & np.isin(live, list(view.failures))
    for j in np.flatnonzero(gone & stay):
        i = int(live[j])
        if i in view.failures:
            run.stops[i] = (*view.failures[i], "failed")
        else:
            run.stops[i] = (float(grid[index[j]]), _runaway(y[j], limit[i]), "diverged")
    keep = ~gone
    if keep.all():
        at = index[0] if index[0] == index[-1] and (index == index[0]).all() else index  # one step for all: a row
        run.states[at, live] = y
        if contacts:
            run.modes[at, live] = view.modes
    else:
        run.states[index[keep], live[keep]] = y[keep]
        if contacts:
            run.modes[index[keep], live[keep]] = view.modes[keep]
    keep &= index < grid.size - 1  # members at the end are done
    if keep.all():
        if contacts and (order := view.sorted_order()) is not None:  # regroup: each group a contiguous block
            return (live[order], batch.view(live[order], view.modes[order]), y[order], k1[order], g[order],
                    index[order])
        return live, view, y, k1, g, index
    live, modes = live[keep], view.modes[keep]
    view = batch.view(live, modes)
    if contacts and (order := view.sorted_order()) is not None:
        keep = np.flatnonzero(keep)[order]
        live, view = live[order], batch.view(live[order], modes[order])
    return live, view, y[keep], k1[keep], g[keep], index[keep]


def _switch(batch, members, modes, t, target, y, k1, g, y_new, k1_new, g_new, method, counts, max_switches,
            run, k):
    """Members that crossed a friction switch in their step from ``t`` to ``target`` (arrays, one per member).

    As in ``simulate``: the switch is located on the step length to
    ``1e-13`` (here by the Illinois variant of regula falsi, in a few
    iterations instead of bisection's forty, for all these members at once),
    the contacts that fired are released or held (:meth:`CompiledModel.release`),
    sticking contacts are put at rest, and the rest of the step is taken in the
    new modes (which may switch again). Returns their states, first stages,
    switching values and modes at ``target`` (grid index ``k``), and any failures.
    """
    cm = batch.cm
    sub = batch.view(members, modes)
    R = members.size
    ts = t.copy()
    ys, k1s, g0 = y.copy(), k1.copy(), g.copy()
    ye, k1e, g1 = y_new.copy(), k1_new.copy(), g_new.copy()
    failures = {}
    pending = np.ones(R, dtype=bool)
    for _ in range(4 * cm.n_friction + 4):  # each pass settles one switch per member
        fired = (g0 > 0) & (g1 <= 0) & pending[:, None]
        pending &= fired.any(axis=1)
        if not pending.any():
            break
        idx = np.flatnonzero(pending)
        part = batch.view(sub.rows[idx], sub.modes[idx])
        hs = target[idx] - ts[idx]
        hit, y_hit = _locate(part, ts[idx], ys[idx], k1s[idx], hs, g0[idx], g1[idx], ye[idx], fired[idx], method)
        t_hit = ts[idx] + hit
        new_modes, y_hit, errors = _release(cm, part, t_hit, y_hit, fired[idx])
        failures.update(errors)
        for j, member in enumerate(part.rows):
            member = int(member)
            counts[member] += 1
            if counts[member] > max_switches:
                failures.setdefault(member, (float(t_hit[j]), f"RuntimeError: more than `max_switches` = "
                                             f"{max_switches} friction switches; the motion may be Zeno"))
            run.switches.setdefault(member, []).append((float(t_hit[j]), tuple(new_modes[j])))
        part.set_modes(new_modes)
        sub.modes[idx] = new_modes
        end = target[idx]
        landed = t_hit >= end - 1e-13 * np.maximum(1.0, np.abs(t_hit))
        for j in np.flatnonzero(landed):
            run.replaced.setdefault(int(part.rows[j]), set()).add(int(k[idx[j]]))
        # the rest of the step in the new modes (from the switch; a switch on the grid time ends the step)
        k1h, gh, _ = part.evaluate(t_hit, y_hit)
        rest = np.where(landed, 0.0, end - t_hit)
        y_end = np.where(landed[:, None], y_hit, _advance(part, t_hit, y_hit, rest, k1h, method))
        k1_end, g_end, _ = part.evaluate(end, y_end)
        failures.update(part.failures)
        ts[idx], ys[idx], k1s[idx], g0[idx] = t_hit, y_hit, k1h, gh
        ye[idx], k1e[idx], g1[idx] = y_end, k1_end, g_end
        pending[idx[landed]] = False
    return ye, k1e, g1, sub.modes, failures


def _locate(view, t, y, k1, h, g0, g1, y_end, fired, method):
    """The step length ``x`` in ``(0, h]`` where a fired contact's switching value reaches zero, per member.

    Bracketed like ``simulate``'s bisection (the value is positive at the
    left end, at most zero at the right end, and the right end is returned
    once the bracket is below ``1e-13 max(1, |t|)``), with regula falsi's
    secant point and Illinois' halving of a stale end so that both ends close
    in. A secant point is kept at least half the tolerance inside the bracket,
    so a root found exactly (a switching value linear in the step, as for a
    block under constant forces) closes the bracket on the next iteration;
    after eight iterations every other one bisects, which bounds the worst case.
    The step returned is the one ``simulate``'s bisection ends on (replayed
    against the root found), with the state there.
    """
    def worst(values):
        return np.where(fired, values, np.inf).min(axis=1)

    lo, hi = np.zeros_like(h), h.copy()
    f_lo, f_hi = worst(g0), worst(g1)
    y_hi = y_end.copy()
    side = np.zeros(h.size, dtype=np.int8)
    tol = 1e-13 * np.maximum(1.0, np.abs(t))
    for iteration in range(200):
        active = hi - lo > tol
        if not active.any():
            break
        x = hi - f_hi * (hi - lo) / (f_hi - f_lo)
        bisect = ~np.isfinite(x) | (iteration >= 8 and iteration % 2 == 1)
        x = np.where(bisect, (lo + hi) / 2, x)
        # a secant point on top of an end cannot close the bracket: step just inside, by half the tolerance
        x = np.clip(x, lo + tol / 2, hi - tol / 2)
        x = np.where(active, x, hi)
        y_x = _advance(view, t, y, x, k1, method)
        value = worst(view.evaluate(t + x, y_x)[1])
        below = active & (value <= 0)
        above = active & ~(value <= 0)
        f_lo = np.where(below & (side == -1), f_lo / 2, f_lo)  # Illinois: the same end twice, halve the other
        f_hi = np.where(above & (side == 1), f_hi / 2, f_hi)
        hi, f_hi = np.where(below, x, hi), np.where(below, value, f_hi)
        lo, f_lo = np.where(above, x, lo), np.where(above, value, f_lo)
        y_hi[below] = y_x[below]
        side = np.where(below, -1, np.where(above, 1, side)).astype(np.int8)
    # The bracket holds the root to 1e-13 (as simulate's does), but not the same 1e-13: land where simulate's
    # bisection lands, which the root decides. Its midpoints are replayed against the root (the secant point
    # of the last bracket, exact to rounding there); a midpoint within rounding of the root is evaluated.
    root = np.where(f_hi == f_lo, hi, hi - f_hi * (hi - lo) / (f_hi - f_lo))
    near = 1e-15 * np.maximum(1.0, np.abs(t))
    lo, hi = np.zeros_like(h), h.copy()
    for _ in range(200):
        active = hi - lo > tol
        if not active.any():
            break
        mid = (lo + hi) / 2
        below = mid >= root
        unsure = np.flatnonzero(active & (np.abs(mid - root) <= near))
        if unsure.size:  # the sign itself, as simulate's bisection tests it
            part = view.subset(unsure)
            y_mid = _advance(part, t[unsure], y[unsure], mid[unsure], k1[unsure], method)
            below[unsure] = worst_of(part.evaluate(t[unsure] + mid[unsure], y_mid)[1], fired[unsure]) <= 0
        hi, lo = np.where(active & below, mid, hi), np.where(active & ~below, mid, lo)
    start = (t + hi) - hi  # simulate steps to the switch from here
    return hi, _advance(view, start, y, hi, k1, method)


def worst_of(values, fired):
    """The smallest switching value among the fired contacts, per member."""
    return np.where(fired, values, np.inf).min(axis=1)


def _release(cm, view, t, y, fired):
    """``CompiledModel.release`` for these members at once, then sticking contacts put at rest.

    Returns the new modes (L, k), the states and a dict of failures (member: (t, message)).
    """
    n = cm.n
    crossed = fired & (view.modes == 0)  # sticking contacts whose holding force reached the limit
    modes = view.modes.copy()
    modes[fired] = 0
    view.set_modes(modes)
    _, _, ratios = view.evaluate(t, y)
    F = view.friction  # the contacts' data does not depend on the modes
    limit = np.where(crossed, 1 - HOLD_RTOL, 1 + HOLD_RTOL)  # as CompiledModel.release(..., crossed)
    released = fired & (np.abs(ratios) > limit)
    failures = {}
    if released.any():
        modes[released] = -np.sign(ratios[released]).astype(np.int64)
        view.set_modes(modes)
        dy, _, _ = view.evaluate(t, y)
        qdd = dy[:, n:]
        rate = np.einsum("cjl,lj->lc", F[:, 4:], qdd) + F[:, 1].T  # s' in the sliding mode
        scale = np.maximum(1.0, np.abs(qdd).max(axis=1))
        for j in np.flatnonzero((released & (modes * rate < -1e-9 * scale[:, None])).any(axis=1)):
            member = int(view.rows[j])
            try:  # Coulomb's law admits no motion: the single-run code says so
                cm.release(float(t[j]), y[j, :n], y[j, n:], view.P[j], tuple(int(v) for v in modes[j]),
                           np.flatnonzero(fired[j]), np.flatnonzero(crossed[j]))
                failures[member] = (float(t[j]), "the batch found no consistent friction mode here")
            except ValueError as exc:
                failures[member] = (float(t[j]), f"{type(exc).__name__}: {exc}")
    # _stick_velocity: the minimum-norm velocity change that puts every sticking contact at rest
    y = y.copy()
    for sel, stuck in view.groups:
        if stuck:
            slope = F[stuck, 4:].transpose(2, 0, 1)[sel]  # (G, s, n)
            s = F[stuck, 0].T[sel]
            gram = slope @ slope.transpose(0, 2, 1)
            y[sel, n:] = y[sel, n:] - (slope.transpose(0, 2, 1) @ np.linalg.solve(gram, s[:, :, None]))[:, :, 0]
    return modes, y, failures


def _result(cm, batch, grid, run, y0, limit, status, message, members) -> SweepResult:
    """Residuals of every reached sample, ``simulate``'s residual stop, and the per-member summaries."""
    n, B, N = cm.n, y0.shape[0], grid.size
    steps = run.states  # (N, B, 2n)
    # every sample in one evaluation: rows of shape (N, B), parameters (1, B), times (N, 1); NaN stays NaN
    terms = cm.terms_batch(grid[:, None], [steps[:, :, j] for j in range(n)],
                           [steps[:, :, n + j] for j in range(n)], [P[None, :] for P in batch.P.T])
    E, nh = len(cm.nonzero), cm.n_holonomic
    phi = np.empty((nh, N, B))
    vel = np.empty((cm.m, N, B))
    for j, value in enumerate(terms[E : E + nh]):
        phi[j] = value
    for j, value in enumerate(terms[E + nh : E + nh + cm.m]):
        vel[j] = value
    states = np.ascontiguousarray(steps.transpose(1, 0, 2))  # (B, N, 2n)
    phi, vel = np.ascontiguousarray(phi.transpose(2, 1, 0)), np.ascontiguousarray(vel.transpose(2, 1, 0))
    done = np.isfinite(states[:, :, 0])  # a sample is all numbers (reached) or all NaN
    phi[~done] = vel[~done] = np.nan
    stopped_at = np.full(B, np.nan)
    for i, (t, reason, kind) in run.stops.items():
        status[i], message[i], stopped_at[i] = kind, reason, t
    # simulate ends a run at the first sample whose residual passes DIVERGENCE_FACTOR times the start's scale squared
    scale = limit / DIVERGENCE_FACTOR
    residual = np.zeros((B, N))
    for column in [*np.moveaxis(phi, 2, 0), *np.moveaxis(vel, 2, 0)]:
        residual = np.maximum(residual, np.abs(column))  # NaN propagates
    over = done & ~(residual <= DIVERGENCE_FACTOR * scale[:, None] ** 2)
    for i in np.flatnonzero(over.any(axis=1)):
        j = int(np.argmax(over[i]))
        states[i, j:] = phi[i, j:] = vel[i, j:] = np.nan
        status[i], stopped_at[i] = "diverged", grid[j]
        message[i] = (f"a constraint residual reached {residual[i, j]:.3g}, past {DIVERGENCE_FACTOR:g} times "
                      "the start's scale squared (DIVERGENCE_FACTOR)")
    for i in np.flatnonzero(status == "refused"):
        states[i] = np.nan
    modes = mode_times = None
    if cm.n_friction:
        modes, mode_times = [], []
        for i in range(B):
            if status[i] == "refused":
                modes.append(None), mode_times.append(None)
                continue
            reached = int(np.count_nonzero(done[i]))  # the samples reached are a prefix of the grid
            kept = np.arange(reached)
            if i in run.replaced:
                kept = np.setdiff1d(kept, np.array(sorted(run.replaced[i]), dtype=int))
            times, rows = grid[kept], run.modes[kept, i].astype(int)
            cut = grid[reached - 1] if reached else grid[0]
            events = [(t, m) for t, m in run.switches.get(i, []) if t <= cut + 1e-13 * max(1.0, abs(cut))]
            if events:  # a switching instant comes before the grid sample at the same time
                at = np.searchsorted(times, [t for t, _ in events], side="left")
                times = np.insert(times, at, [t for t, _ in events])
                rows = np.insert(rows, at, np.array([m for _, m in events], dtype=int).reshape(len(events), -1), axis=0)
            mode_times.append(times)
            modes.append(rows.reshape(times.size, cm.n_friction))
    return SweepResult(grid, states[:, :, :n], states[:, :, n:], phi, vel, status, message, stopped_at, members,
                       modes=modes, mode_times=mode_times)


def _one_by_one(cm, t_span, q0, qd0, params, stabs, method, step, progress, options) -> SweepResult:
    """One :func:`simulate` per member (adaptive methods, GainMatrix gains, other options), outcomes per member.

    Adaptive runs choose their own steps, so there is no common grid to batch
    on. A member that ``simulate`` refuses is "refused", one it stops as
    diverged is "diverged", one whose run fails part-way (SimulationError, or
    a friction law without solution) is "failed".
    """
    B = len(params)
    runs, status, message = [], np.array(["ok"] * B, dtype=object), [""] * B
    stopped_at = np.full(B, np.nan)
    bar = _progress(B, progress and B > 20)
    for i in range(B):
        try:
            run = simulate(cm, t_span, q0[i], qd0[i], method=method, step=step, params=params[i],
                           stabilization=stabs[i], **options)
            runs.append(run)
            if run.status != "ok":
                status[i], message[i], stopped_at[i] = run.status, run.stop_reason, run.stop_time
        except SimulationError as exc:
            runs.append(None)
            status[i], message[i], stopped_at[i] = "failed", str(exc), exc.time
        except (ValueError, RuntimeError) as exc:
            runs.append(None)
            status[i], message[i] = "refused", str(exc)
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    ok = [r for r in runs if r is not None]
    if not ok:
        raise ValueError("every member of the sweep was refused or failed; first reason: " + message[0])
    # Friction switches add output times per member. Fixed-step runs share the step grid (every run
    # holds those samples exactly); adaptive runs are sampled at `t_eval` or the first run's times.
    if method in FIXED_STEP_METHODS:
        t0, tf = map(float, t_span)
        count = max(1, int(round((tf - t0) / (step if step is not None else (tf - t0) / 1000))))
        t = t0 + (tf - t0) * np.arange(count + 1) / count
    else:
        t = np.asarray(options.get("t_eval", ok[0].t), dtype=float)
    N = t.size

    def stacked(field, width):
        out = np.full((B, N, width), np.nan)
        for i, r in enumerate(runs):
            if r is None or not r.t.size:
                continue
            values = getattr(r, field).reshape(r.t.size, width)
            at = np.clip(np.searchsorted(r.t, t), 0, r.t.size - 1)
            exact = r.t[at] == t
            if exact.all() or (exact | (t > r.t[-1])).all():  # the run's own samples (NaN after it stopped)
                out[i, exact] = values[at[exact]]
            else:
                reached = t <= r.t[-1]
                out[i, reached] = np.array([np.interp(t[reached], r.t, values[:, j]) for j in range(width)]).T
        return out

    P = [cm.parameters(p) for p in params]
    members = [dict(zip(cm.parameter_names, p.tolist()), stabilization=s) for p, s in zip(P, stabs)]
    return SweepResult(
        t, stacked("q", cm.n), stacked("qd", cm.n), stacked("position_residual", cm.n_holonomic),
        stacked("velocity_residual", cm.m), status, message, stopped_at, members,
        modes=[None if r is None else r.modes for r in runs], runs=runs,
        mode_times=[None if r is None else r.t for r in runs],
    )


# -- maps for the lessons --------------------------------------------------------------


def stability_map(alphas, betas, *, model=None, q0=None, qd0=None, t_span=(0.0, 5.0), method: str = "rk4",
                  step: float = 0.01, ax=None):
    """Largest drift ``max |phi|`` of Baumgarte-stabilized runs over a grid of gains, drawn as a map.

    Each grid point is one run with ``Baumgarte(alpha, beta)`` (Baumgarte 1972;
    Beshaw 2014, Eq. 20 for the stabilized ``b``), all integrated in one batch.

    Parameters
    ----------
    alphas, betas : array_like, shape (a,), (c,)
        Gains in 1/s.
    model : Model or CompiledModel, optional
        Default: the Cartesian pendulum released at 1 rad.
    q0, qd0 : array_like, shape (n,), optional
        Initial state (required with ``model``).
    t_span, method, step
        As for :func:`sweep`.
    ax : matplotlib Axes, optional
        Where to draw; a new figure when None.

    Returns
    -------
    drift : ndarray, shape (a, c)
        ``max |phi|`` in metres (NaN where refused or diverged).
    result : SweepResult
        The runs, ``alphas`` slowest.
    """
    import matplotlib.pyplot as plt

    from .examples import chain
    from .plotting import OKABE_ITO

    alphas, betas = as_finite_array(alphas, "alphas", 1), as_finite_array(betas, "betas", 1)
    if model is None:
        model = chain.cartesian_pendulum()
        q0, qd0 = chain.pendulum_initial_state(1.0)
    elif q0 is None or qd0 is None:
        raise ValueError("`q0` and `qd0` are required with `model`")
    grid = parameter_grid(alpha=alphas, beta=betas)
    stabs = [Baumgarte(g["alpha"], g["beta"]) for g in grid]
    result = sweep(model, t_span, q0, qd0, stabilization=stabs, method=method, step=step)
    shape = (alphas.size, betas.size)
    drift = result.max_drift.reshape(shape)
    if ax is None:
        _, ax = plt.subplots(figsize=(6.0, 4.5), layout="constrained")
    mesh = ax.pcolormesh(betas, alphas, np.log10(np.maximum(drift, 1e-16)), shading="nearest", cmap="cividis")
    ax.figure.colorbar(mesh, ax=ax, label=r"$\log_{10}\max|\phi|$ (m$^2$)")
    status = result.status.reshape(shape)
    B_, A_ = np.meshgrid(betas, alphas)
    for name, marker, colour in (("refused", "x", OKABE_ITO["vermillion"]), ("diverged", "+", OKABE_ITO["orange"])):
        where = status == name
        if where.any():
            ax.plot(B_[where], A_[where], ls="none", marker=marker, color=colour, label=f"{name} (marker {marker})")
    if (status != "ok").any():
        ax.legend(loc="lower right", fontsize="small", framealpha=1.0)
    ax.set(xlabel=r"$\beta$ (1/s)", ylabel=r"$\alpha$ (1/s)",
           title=f"drift after {t_span[1] - t_span[0]:g} s, {method}, step {step:g} s")
    return drift, result


REGIMES = {1: "still sliding up", 0: "stuck", -1: "slides back down"}
"""Final friction mode of the incline block, by value (see :func:`stick_slip_map`)."""


def stick_slip_map(angles, mus, *, speed: float = 3.0, t_end: float = 1.5, step: float = 0.01, ax=None):
    """Where the block on the rough incline ends: still sliding up, stuck, or sliding back down.

    Each point is a run of :mod:`udk_notebooks.examples.incline_friction`
    started up the slope at ``speed`` with ``mu_s = mu``; the block sticks
    when ``mu >= tan(alpha)`` (the example's Eq. for the holding force), which
    the map shows as the drawn curve ``mu = tan(alpha)``.

    Parameters
    ----------
    angles : array_like, shape (a,)
        Incline angles in radians, in (0, pi/2).
    mus : array_like, shape (c,)
        Friction coefficients, >= 0.
    speed, t_end, step : float, optional
        Initial speed up the slope (m/s), run length (s) and RK4 step (s).
    ax : matplotlib Axes, optional

    Returns
    -------
    regime : ndarray of int, shape (a, c)
        Final mode per point (keys of :data:`REGIMES`).
    result : SweepResult
    """
    import matplotlib.pyplot as plt
    from matplotlib.colors import ListedColormap

    from .examples import incline_friction
    from .plotting import OKABE_ITO

    angles, mus = as_finite_array(angles, "angles", 1), as_finite_array(mus, "mus", 1)
    if not np.all((angles > 0) & (angles < np.pi / 2)):
        raise ValueError("`angles` must lie in (0, pi/2) radians")
    if not np.all(mus >= 0):
        raise ValueError("`mus` must be >= 0")
    grid = [dict(p, mu_s=p["mu"]) for p in parameter_grid(alpha=angles, mu=mus)]
    states = [incline_friction.initial_state(speed, alpha=p["alpha"]) for p in grid]
    q0, qd0 = np.array([s[0] for s in states]), np.array([s[1] for s in states])
    result = sweep(incline_friction.model(), (0.0, t_end), q0, qd0, params=grid, step=step)
    regime = np.array([m[-1, 0] if m is not None else 2 for m in result.modes]).reshape(angles.size, mus.size)
    if ax is None:
        _, ax = plt.subplots(figsize=(6.0, 4.5), layout="constrained")
    colours = [OKABE_ITO["vermillion"], OKABE_ITO["sky_blue"], OKABE_ITO["bluish_green"]]
    ax.pcolormesh(mus, np.degrees(angles), regime, shading="nearest", cmap=ListedColormap(colours), vmin=-1.5, vmax=1.5)
    M_, A_ = np.meshgrid(mus, np.degrees(angles))
    # markers, not colour alone; on a fine grid, on every few points only (at most about 16 per axis)
    thin = (slice(None, None, -(-angles.size // 16)), slice(None, None, -(-mus.size // 16)))
    for value, marker in ((-1, "v"), (0, "s"), (1, "^")):
        where = regime[thin] == value
        ax.plot(M_[thin][where], A_[thin][where], ls="none", marker=marker, ms=4, mfc="none", mec="black",
                label=f"{REGIMES[value]} ({marker})")
    ax.plot(np.tan(angles), np.degrees(angles), "k--", label=r"$\mu = \tan\alpha$")
    ax.set(xlim=(mus.min(), mus.max()), xlabel=r"friction coefficient $\mu = \mu_s$ (1)", ylabel=r"incline angle $\alpha$ (deg)",
           title=f"regime after {t_end:g} s, started up at {speed:g} m/s")
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize="small", framealpha=1.0)
    return regime, result
