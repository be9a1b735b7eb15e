"""Batched fixed-step integration: one compiled model, many members (parameter sets, gains, states) at once.

The engine behind :func:`udk_notebooks.sweep.sweep`. Every member follows
``simulate``'s fixed-step Euler or RK4 on ``simulate``'s grid, so it equals its
single :func:`udk_notebooks.simulate` run to rounding:

* the members' states are rows, shape (2n, L) with the members along the
  last axis, so a stage is a few numpy calls on rows of length L and nothing
  is transposed; at every stage :meth:`CompiledModel.terms_batch` evaluates
  the entries of ``M, Q, A, b, C``, the residuals of the Baumgarte correction
  and the friction data of every member in one lambdified, CSE'd call, into
  work arrays made once per set of members (:class:`Batch`, :class:`_View`);
* each step's states, and the residuals its first stage evaluated, are
  recorded as one block per sample (shape (N, ., B)), only at the samples
  asked for; the result reads them through views;
* the Udwadia-Kalaba equation (Udwadia & Kalaba 1992, Eq. 7; Udwadia, Kalaba &
  Fan 2005, Eqs. 10-11 for ``C`` and friction) is solved for all members by
  the one stacked solver (:func:`udk_notebooks.stacked.solve_stack`, which
  also samples a single run's output), and by the single-run solver for a
  member whose Gram matrix is ill-conditioned;
* the steps, the start check and the divergence rule are ``simulate``'s own
  (:mod:`udk_notebooks.stepping`);
* :func:`refusals` decides the gain check (Beshaw 2014, Theorems 1-2) and the
  start check for every member as ``simulate`` would;
* Coulomb contacts switch per member: a member whose switching function
  changes sign waits for up to :data:`PARK_STEPS` steps, then the waiting
  switches are located together and ``simulate``'s bisection is replayed
  against the root, so the switching instant is the single run's
  (:func:`integrate`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np

from .compiled import HOLD_RTOL, STICK_SPEED
from .singular import SINGULAR_RTOL
from .stacked import constant_mass, solve_stack, state_mass
from .stepping import check_initial, euler_step, rk4_step, runaway, stick_velocity
from .stabilization import Baumgarte, check_gain, spectral_radii

__all__ = ["PARK_STEPS", "Batch", "Messages", "initial_modes", "integrate", "refusals"]


def refusals(cm, t0, q0, qd0, P, stabs, method, step, tol) -> dict:
    """The members a single run would refuse, with its message: an inconsistent start or an unstable gain.

    The tests are those of ``simulate``, decided for the whole batch at once:
    the start check where the answer is clear and by the single-run check
    itself within a margin of its boundary, the gain check by the spectral
    radii that :func:`~udk_notebooks.stabilization.check_gain` computes (so the
    decision and the message are the same). A refused gain's message is
    written when it is read (:class:`Messages`).
    """
    refused = {}
    B = len(P)
    phi, vel = cm.residuals_batch(t0, q0, qd0, P)
    pos = np.abs(phi).max(axis=1, initial=0.0) / (tol * np.maximum(1.0, np.abs(q0).max(axis=1)))
    speed = np.abs(vel).max(axis=1, initial=0.0) / (tol * np.maximum(1.0, np.abs(qd0).max(axis=1)))
    for i in np.flatnonzero(~((pos < 0.5) & (speed < 0.5))):  # near or past the tolerance: the single check
        try:
            check_initial(cm, t0, q0[i], qd0[i], P[i], tol)
        except ValueError as exc:
            refused[int(i)] = str(exc)
    stabilized = [i for i in range(B) if stabs[i] is not None and i not in refused]
    if stabilized:
        # check_gain's spectral radius of R(tau E) (Beshaw 2014, Eqs. 22, 27) for every gain at once: stability()
        # takes its radius from spectral_radii too, so each verdict is check_gain's own, at the edge included
        gains = np.array([[stabs[i].alpha, stabs[i].beta, stabs[i].gamma] for i in stabilized])
        E = Baumgarte.error_matrices(gains, cm.n_holonomic, cm.n_nonholonomic)
        radius = spectral_radii(method, step, E)
        for j in np.flatnonzero(~(radius < 1.0)):
            i = stabilized[j]
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


class Messages(Sequence):
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
        return list(self) == list(other) if isinstance(other, (list, tuple, Messages)) else NotImplemented

    def __repr__(self) -> str:
        return repr(list(self))


class Batch:
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
        self.mass, self.singular = None, False
        if cm.constant_mass:  # M(p) factorized once per distinct parameter vector (stacked.constant_mass)
            self.mass = constant_mass(cm, P)
            self.singular = self.mass is None  # a singular M (a massless coordinate): simulate's own solver

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

    def __init__(self, batch: Batch, rows, modes):
        self.batch, self.cm, self.rows = batch, batch.cm, rows
        self.P = batch.P[rows]
        self.p_rows = list(np.ascontiguousarray(self.P.T))
        self.prepared = batch.cm.prepare_terms(self.p_rows)  # the parameter-only subexpressions, once
        self.c2a, self.b2, self.mg = batch.c2a[rows], batch.b2[rows], batch.mg[rows]
        self.lowest_limit = batch.limit[rows].min(initial=np.inf)  # below it, no member has run away
        self.mass = None if batch.mass is None else batch.mass.take(rows)
        self.failures = {}
        self.set_modes(np.array(modes, dtype=np.int64).reshape(len(rows), self.cm.n_friction))
        cm, L = self.cm, len(rows)
        n, m, k = cm.n, cm.m, 0 if cm.constant_mass else cm.n * cm.n
        self.k, self.size = k, k + n + m * n + m + n
        # Work arrays made once per view and overwritten at every stage: the entries of M, Q, A, b, C by rows
        # (structural zeros stay zero), and the stabilized b
        self.buffer = buf = np.zeros((self.size, L))
        self.Q, self.A, self.b = buf[k:k + n], buf[k + n:k + n + m * n].reshape(m, n, L), buf[k + n + m * n:k + n + m * n + m]
        self.C = buf[k + n + m * n + m:] if cm.has_nonideal else None
        self._stabilized_b, self._correction, self._product = np.empty((m, L)), np.empty((m, L)), np.empty(L)
        self._written = [None] * len(cm.nonzero)  # the value last copied into each entry's row
        # read at every stage, so looked up once
        self.n, self.entries, self.rows_count, self.stabilized = n, len(cm.nonzero), cm.n_holonomic + m, batch.stabilized
        self._entry_rows = list(enumerate(cm.nonzero.tolist()))
        # Stabilized, b is read from the terms as _stabilize adds the correction (one copy per stage less): per
        # row of b its entry among the terms (None: a structural zero); the other entries are copied as before
        first_b = k + n + m * n
        self._b_terms = [None] * m
        for j, row in self._entry_rows:
            if first_b <= row < first_b + m:
                self._b_terms[row - first_b] = j
        self._copied = [(j, row) for j, row in self._entry_rows
                        if not (batch.stabilized and first_b <= row < first_b + m)]
        self._mass_ok = self.mass is not None and bool(self.mass.ok.all())
        # M^{-1} Q of the last stage (StackMotion.free), reused while M is constant, trusted, and no entry of Q
        # changes (a Q of the parameters alone, as gravity's -m g, comes back as the same array: solved once)
        self._q_entries = frozenset(j for j, row in self._entry_rows if k <= row < k + n)
        self._free = None
        self.holonomic, self._correction_rows = cm.n_holonomic, list(self._correction)
        self._no_switches = np.empty((L, 0))
        # all the batch's members in order: a step's states are the history's whole block at that sample
        self.everyone = len(rows) == batch.P.shape[0] and bool(np.all(np.asarray(rows) == np.arange(len(rows))))
        self._member_mask = None

    @property
    def member_mask(self) -> np.ndarray | None:
        """These members among the batch's (bool, shape (B,)), when they are in order (a mask scatters a row
        faster than the member numbers do); None when they are not."""
        if self._member_mask is None and self.rows.size and np.all(self.rows[:-1] < self.rows[1:]):
            self._member_mask = np.zeros(self.batch.P.shape[0], dtype=bool)
            self._member_mask[self.rows] = True
        return self._member_mask

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

    def _state_mass(self, t, M):
        """The solver of the members' own mass matrices ``M`` (L, n, n); members it cannot trust are handed over.

        A Cholesky pivot squared must be above ``SINGULAR_RTOL^2`` times the
        largest diagonal entry (the relative singular value of ``M^(1/2)`` at
        which ``simulate``'s singular-configuration monitor stops a run). A
        member that fails it, or whose ``M`` is not finite, gets NaN and is
        handed to ``simulate``, which refuses an indefinite ``M``, stops at a
        singular one, or runs on where its monitor finds nothing (a mass matrix
        that depends on the coordinates can lose rank or sign along a run, e.g.
        ``m1 (1 + x^2)`` with ``m1 < 0``, or polar coordinates through the origin).
        """
        mass = state_mass(M, SINGULAR_RTOL**2, relative_to="largest")
        for i in np.flatnonzero(~mass.ok):
            self.failures.setdefault(int(self.rows[i]), (float(t if np.ndim(t) == 0 else t[i]),
                                                         "mass matrix near singular or not definite"))
        return mass

    def rates(self, t, Y):
        """``(q', q'')`` of these members in the row layout, with their switching values and holding ratios.

        ``Y`` has shape (2n, L), one row per state entry and the members along
        the last axis (as the lambdified functions take them and as
        :func:`solve_stack` works), so a stage is a few calls on rows of length
        ``L`` and nothing is transposed. Returns the derivative (2n, L), the
        switching values ``g`` (L, k) and the ratios (L, k).
        """
        cm, n, E = self.cm, self.n, self.entries
        L = Y.shape[1]
        terms = cm.terms_batch(t, Y[:n], Y[n:], self.p_rows, self.prepared)
        buf, last = self.buffer, self._written
        for j, row in self._copied:
            value = terms[j]
            if value is not last[j]:  # an entry of the parameters alone comes back as the same array: copied once
                buf[row] = last[j] = value
                if j in self._q_entries:
                    self._free = None
        mass = self.mass if self.mass is not None else self._state_mass(t, buf[:self.k].reshape(n, n, L).transpose(2, 0, 1))
        self.residuals = terms[E:E + self.rows_count]  # phi, (phi', psi) here: a step's sample keeps them
        b, correction = self.b, None
        if self.stabilized:
            b, correction = self._stabilize(self.residuals, terms)
        F = self._friction(terms[E + self.rows_count:]) if self.modes.shape[1] else None
        self.friction = F
        out = np.empty((2 * n, L))
        out[:n] = Y[n:]
        if F is not None or len(self.groups) > 1 or self.groups[0][1]:
            g, ratios = self._solve_groups(t, Y, mass, b, correction, F, out)
        else:  # no sticking contact: one stacked solve, q'' written straight into the derivative's rows
            sol = solve_stack(mass, self.Q, self.A, b, self.C, out=out[n:], free=self._free)
            g = ratios = self._no_switches
            trusted = mass is self.mass and self._mass_ok and sol.ok is mass.ok  # the stack's own check passed
            if self._mass_ok:  # mass is self.mass: constant
                self._free = sol.free
            if not trusted and not sol.ok.all():
                self._hand_over(t, Y, slice(None), sol, mass, correction, out, None)
        return out, g, ratios

    def _stabilize(self, residuals, terms) -> tuple[np.ndarray, np.ndarray]:
        """``b`` with Baumgarte's correction added, and the correction (Beshaw 2014, Eq. 20), rows (m, L).

        ``residuals`` are ``phi`` then ``(phi', psi)`` as :meth:`CompiledModel.terms_batch` gives them; the
        correction is ``-2 alpha phi' - beta^2 phi`` for a holonomic row and ``-gamma psi`` for a nonholonomic one
        (:meth:`Baumgarte.correction`), computed into the view's work arrays. ``terms`` is the stage's output of
        :meth:`CompiledModel.terms_batch`, whose entries of ``b`` are read from it (not copied into the buffer).
        """
        nh, product = self.holonomic, self._product
        for i, row in enumerate(self._correction_rows):  # row i: phi is residuals[i], its rate residuals[nh + i]
            if i < nh:
                np.multiply(self.c2a, residuals[nh + i], out=row)
                row -= np.multiply(self.b2, residuals[i], out=product)
            else:
                np.multiply(self.mg, residuals[nh + i], out=row)
        stabilized = self._stabilized_b
        for i, j in enumerate(self._b_terms):  # b + correction, b's entries straight from the terms
            if j is None:
                stabilized[i] = self._correction[i]
            else:
                np.add(terms[j], self._correction[i], out=stabilized[i])
        return stabilized, self._correction

    def _friction(self, data) -> np.ndarray:
        """The contacts' data, shape (k, 4 + n, L): per contact ``s``, its drift, ``mu``, ``mu_s``, ``ds/dq'``."""
        n, contacts = self.cm.n, self.modes.shape[1]
        F = np.empty((contacts, 4 + n, self.buffer.shape[1]))
        for j, value in enumerate(data):
            F[j // (4 + n), j % (4 + n)] = value
        return F

    def _solve_groups(self, t, Y, mass, b, correction, F, out):
        """``q''`` into ``out[n:]`` group by group of sticking contacts; returns the switching values and ratios."""
        n, L, contacts = self.cm.n, Y.shape[1], self.modes.shape[1]
        Q, A, C = self.Q, self.A, self.C
        ratios = np.full((L, contacts), np.nan) if contacts else self._no_switches
        for sel, stuck in self.groups:
            whole = isinstance(sel, slice) and sel == slice(None)
            if whole:  # q'' written straight into the derivative's rows
                sol = solve_stack(mass, Q, A, b, C, F, None if F is None else self.modes.T, stuck, out=out[n:])
            else:
                sol = solve_stack(mass.take(sel), Q[:, sel], A[:, :, sel], b[:, sel], None if C is None else C[:, sel],
                                  None if F is None else F[:, :, sel], None if F is None else self.modes[sel].T, stuck)
                out[n:, sel] = sol.qdd
            if stuck:
                ratios[np.ix_(np.arange(L)[sel], stuck)] = sol.ratios.T
            if not sol.ok.all():
                self._hand_over(t, Y, sel, sol, mass, correction, out, ratios)
        g = self._no_switches
        if contacts:
            s = F[:, 0].T
            g = np.where(self.modes != 0, self.modes * s, 1.0 + HOLD_RTOL - np.abs(ratios))
        return g, ratios

    def _hand_over(self, t, Y, sel, sol, mass, correction, out, ratios) -> None:
        """Members of ``sel`` the stack could not vouch for: an ill-conditioned Gram matrix goes to the single-run
        solver, which decides; a mass matrix it could not trust gets NaN and is handed to simulate (_state_mass)."""
        n = self.cm.n
        members = np.arange(Y.shape[1])[sel]
        for i in members[~sol.ok & mass.ok[sel]]:
            out[n:, i], found = self._single(t, Y[:, i], i, correction)
            if ratios is not None and ratios.shape[1]:
                ratios[i] = found
        out[n:, members[~mass.ok[sel]]] = np.nan

    def evaluate(self, t, y):
        """:meth:`rates` for states stacked member by member, ``y`` of shape (L, 2n) (the switch location's layout).

        Returns the derivative (L, 2n), the switching values and the ratios.
        """
        out, g, ratios = self.rates(t, y.T)
        return np.ascontiguousarray(out.T), g, ratios

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


def _step_rows(view, t, Y, h, K1, method):
    """One Euler or RK4 step of the row layout (Y, K1 of shape (2n, L)); ``h`` a float or shape (L,)."""
    step = euler_step if method == "euler" else rk4_step
    return step(lambda tt, YY: view.rates(tt, YY)[0], t, Y, h, K1)


def _advance(view, t, y, h, k1, method):
    """:func:`_step_rows` for states stacked member by member, ``y`` and ``k1`` of shape (L, 2n)."""
    return np.ascontiguousarray(_step_rows(view, t, y.T, h, k1.T, method).T)


def initial_modes(cm, batch, t0, y, live, failures):
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
            y[j] = stick_velocity(cm, t0, y[j], p, tuple(modes[j]))
        except ValueError as exc:
            failures[int(live[j])] = (t0, f"{type(exc).__name__}: {exc}")
            y[j] = np.nan
    return y, modes


@dataclass
class _Run:
    """What :func:`integrate` hands to :func:`_result`."""

    states: np.ndarray  # (N, 2n, B): sample by sample, members along the last axis; NaN where not reached
    residuals: np.ndarray | None  # (N, m_h + m, B): phi, (phi', psi) at the samples, as the steps found them
    stops: dict  # member -> (time, reason, status)
    modes: np.ndarray | None  # (N, B, k) at the grid samples
    switches: dict  # member -> list of (time, modes) at switching instants
    replaced: dict  # member -> grid indices k where a switch landed on the grid time and stands for that sample
    slots: np.ndarray | None = None  # per grid index its row of the record, -1 where not kept (None: every one kept)
    # the largest |residual| recorded so far, while every sample went through _store (None once one did not, or
    # when a residual was not a number): below every member's bound, the result need not look for a residual stop
    residual_peak: float | None = 0.0
    # records not filled with NaN first (no contacts): per member that stopped or never ran, the first grid index
    # it did not record (None: the records were filled)
    cut: dict | None = None


PARK_STEPS = 16
"""A member whose friction switch fires waits at most this many steps, with the others that fire meanwhile,
before the switches are located and settled together (then it catches up, a step per step, with the rest)."""


def integrate(batch, grid, method, y0, modes0, live, limit, max_switches, failures, bar, keep=None) -> _Run:
    """All live members over the grid, one stacked step at a time (``simulate``'s ``_integrate_fixed``).

    The live members' states are rows (shape (2n, L), members along the last
    axis: :meth:`_View.rates`), and each step is stored as one block of the
    history (shape (N, 2n, B)), which the result reads through transposed
    views. Each member has its own grid index. A member whose friction switch
    fires in a step is parked with that step's data; every
    :data:`PARK_STEPS` steps the parked members' switches are settled in one
    batch (:func:`_switch`), and they rejoin the others a few grid steps
    behind, stepping along with them until they reach the end. Settling a
    handful of switches costs about as much as settling many, so this saves most of it.

    ``keep`` (bool, shape (N,)), for models without contacts, marks the grid
    samples that are recorded (the caller's ``t_eval``); by default all are.
    """
    cm = batch.cm
    B, contacts = y0.shape[0], cm.n_friction
    N = grid.size if keep is None else int(np.count_nonzero(keep))
    if contacts:  # samples also come from the switch location, out of order: NaN first
        states, residuals = np.full((N, 2 * cm.n, B), np.nan), None
    else:
        # Every sample is a step's end, whose first stage has just evaluated the residuals: they are kept from there
        # (with contacts, samples also come from the switch location: the result evaluates them). A member writes
        # its samples in order up to where it stops, so the records are not filled first (one pass less over the
        # largest arrays of a sweep): _blank_unwritten puts NaN from each stop on.
        states, residuals = np.empty((N, 2 * cm.n, B)), np.empty((N, cm.n_holonomic + cm.m, B))
    mode_log = np.zeros((N, B, contacts), dtype=np.int8) if contacts else None
    slots = None if keep is None else np.where(keep, np.cumsum(keep) - 1, -1)
    run = _Run(states, residuals, {}, mode_log, {}, {}, slots, residual_peak=None if residuals is None else 0.0,
               cut=None if contacts else {})
    _integrate(run, batch, grid, method, y0, modes0, live, limit, max_switches, failures, bar)
    _blank_unwritten(run)
    return run


def _blank_unwritten(run) -> None:
    """NaN in every sample of the records from each member's ``run.cut`` on (records that were not filled first).

    ``run.cut`` maps a member to the first grid index it did not record (0 for
    a member that never ran); every other member recorded every sample.
    """
    if not run.cut:
        return
    by_index = {}
    for i, k in run.cut.items():
        by_index.setdefault(k, []).append(i)
    for k, members in by_index.items():
        row = k if run.slots is None else int(np.count_nonzero(run.slots[:k] >= 0))  # first record row from k on
        for record in (run.states, run.residuals):
            record[row:, :, members] = np.nan


def _integrate(run, batch, grid, method, y0, modes0, live, limit, max_switches, failures, bar) -> None:
    """The stepping of :func:`integrate`, into the records of ``run``."""
    cm = batch.cm
    B, contacts = y0.shape[0], cm.n_friction
    counts = np.zeros(B, dtype=np.int64)
    for i, (t, reason) in failures.items():
        run.stops[i] = (t, reason, "failed")
    live = np.array([i for i in live if i not in failures], dtype=np.intp)
    if run.cut is not None:  # members that never run record nothing
        run.cut.update(dict.fromkeys(np.setdiff1d(np.arange(B), live).tolist(), 0))
    if not live.size:
        return
    view = batch.view(live, modes0[live])
    y = np.ascontiguousarray(y0[live].T)  # (2n, L)
    index = np.zeros(live.size, dtype=np.intp)  # grid index of each live member
    k1, g, _ = view.rates(grid[0], y)
    _store(run, view, 0, live, y, contacts)
    parked = []  # (members, modes, index, y, k1, g, y_new, k1_new, g_new) of switches waiting to be settled
    waiting = 0
    # every live member on one grid index: true from the start, and kept by a common step (members only leave);
    # looked at again only when parked members rejoin a few steps behind
    together = True
    while live.size or parked:
        if live.size:
            if together:  # all on one grid time (the common case)
                t, target = grid[index[0]], grid[index[0] + 1]
            else:
                t, target = grid[index], grid[index + 1]
            y_new = _step_rows(view, t, y, target - t, k1, method)
            k1_new, g_new, _ = view.rates(target, y_new)
            stay = None  # every member took its step
            if contacts:
                fired = ((g > 0) & (g_new <= 0)).any(axis=1)
                if fired.any():
                    stay = ~fired
                    # the switch is located member by member: its states are stacked that way (L, 2n)
                    parked.append((live[fired], view.modes[fired], index[fired], y[:, fired].T, k1[:, fired].T,
                                   g[fired], y_new[:, fired].T, k1_new[:, fired].T, g_new[fired]))
            index = index + 1
            live, view, y, k1, g, index = _advance_members(
                batch, run, view, live, stay, index, y_new, k1_new, g_new, grid, limit, contacts, together)
            waiting += 1
        if parked and (waiting >= PARK_STEPS or not live.size):
            members, modes, at, *data = (np.concatenate(part) for part in zip(*parked))
            parked, waiting = [], 0
            ye, k1e, ge, modes, errors = _switch(batch, members, modes, grid[at], grid[at + 1], *data, method,
                                                 counts, max_switches, run, at + 1)
            joined = batch.view(members, modes)
            joined.failures.update(errors)
            back = _advance_members(batch, run, joined, members, np.ones(members.size, dtype=bool), at + 1,
                                    np.ascontiguousarray(ye.T), np.ascontiguousarray(k1e.T), ge, grid, limit,
                                    contacts)
            if back[0].size:  # rejoin the others
                live = np.concatenate([live, back[0]])
                y, k1 = (np.concatenate([old, new], axis=1) for old, new in zip((y, k1), back[2:4]))
                g = np.concatenate([g, back[4]])
                index = np.concatenate([index, back[5]])
                view = batch.view(live, np.concatenate([view.modes, back[1].modes]))
                order = view.sorted_order()
                if order is not None:
                    live, y, k1, g, index = live[order], y[:, order], k1[:, order], g[order], index[order]
                    view = batch.view(live, view.modes[order])
                together = _on_one_index(index)
        if bar is not None:
            bar.update(1)


def _advance_members(batch, run, view, live, stay, index, y, k1, g, grid, limit, contacts, together=None):
    """Store the members' new samples (at ``grid[index]``), stop those that ran away or failed, drop finished ones.

    ``y`` and ``k1`` are rows (2n, L); ``stay`` marks the members that took
    their step (the others were parked; None: none was). Returns the live
    members, their view, states, first stages, switching values and grid indices. ``together`` says whether all
    are on one grid index (None: look).
    """
    if stay is None:
        at = int(index[0])
        if (at < grid.size - 1 and not view.failures and (_on_one_index(index) if together is None else together)
                and _largest(y) <= view.lowest_limit):  # the common step: nobody stopped
            _store(run, view, at, live, y, contacts)
            return live, view, y, k1, g, index
        stay = np.ones(live.size, dtype=bool)
    gone = ~stay
    largest = np.abs(y if stay.all() else y[:, stay]).max(initial=0.0)  # one reduction; per member only when needed
    if not largest <= view.lowest_limit:
        gone |= stay & ~(np.abs(y) <= limit[live]).all(axis=0)  # NaN and inf included
    if view.failures:
        gone |= stay & np.isin(live, list(view.failures))
    for j in np.flatnonzero(gone & stay):
        i = int(live[j])
        if run.cut is not None:  # its sample at this index is not recorded, nor any after it
            run.cut[i] = int(index[j])
        if i in view.failures:
            run.stops[i] = (*view.failures[i], "failed")
        else:
            run.stops[i] = (float(grid[index[j]]), runaway(y[:, j], limit[i]), "diverged")
    keep = ~gone
    if keep.all() and index[0] == index[-1] and (index == index[0]).all():  # one step for all: one block
        _store(run, view, int(index[0]), live, y, contacts)
    else:
        kept = keep if run.slots is None else keep & (run.slots[index] >= 0)
        at = index[kept] if run.slots is None else run.slots[index[kept]]
        run.states[at, :, live[kept]] = y[:, kept].T
        if run.residuals is not None:
            run.residuals[at, :, live[kept]] = _residual_rows(view)[:, kept].T
            run.residual_peak = None  # not watched here: the result looks for a residual stop
        if contacts:
            run.modes[index[keep], live[keep]] = view.modes[keep]
    keep &= index < grid.size - 1  # members at the end are done
    if keep.all():
        if contacts and (order := view.sorted_order()) is not None:  # regroup: each group a contiguous block
            return (live[order], batch.view(live[order], view.modes[order]), y[:, order], k1[:, order], g[order],
                    index[order])
        return live, view, y, k1, g, index
    live, modes = live[keep], view.modes[keep]
    view = batch.view(live, modes)
    if contacts and (order := view.sorted_order()) is not None:
        keep = np.flatnonzero(keep)[order]
        live, view = live[order], batch.view(live[order], modes[order])
    return live, view, y[:, keep], k1[:, keep], g[keep], index[keep]


def _on_one_index(index: np.ndarray) -> bool:
    """True when every member is at the same grid index (one count, not a reduction through ``all``)."""
    return bool(index[0] == index[-1] and np.count_nonzero(index != index[0]) == 0)


def _store(run, view, at, live, y, contacts) -> None:
    """The live members' states ``y`` (2n, L) as the history's sample ``at``, with their residuals and modes.

    The residuals are those of the view's last evaluation, which must be at ``y`` (a step's first stage).
    A sample the caller did not ask for (``run.slots``) is not recorded.
    """
    if run.slots is not None:
        at = int(run.slots[at])
        if at < 0:
            return
    blocks = [(run.states[at], y)]
    if run.residuals is not None:  # a list of rows (an entry free of the state is a number)
        blocks.append((run.residuals[at], view.residuals))
        _watch_residuals(run, view.residuals)
    where = slice(None) if view.everyone else view.member_mask
    if where is None:
        where = live
    for block, values in blocks:
        # row by row: a scatter along one axis costs less than along the last of two
        for row, value in zip(block, values):
            row[where] = value
    if contacts:
        run.modes[at, live] = view.modes


def _watch_residuals(run, rows) -> None:
    """Keep the largest ``|residual|`` of a sample in ``run.residual_peak`` (None once one is not a number)."""
    if run.residual_peak is None:
        return
    peak = run.residual_peak
    for value in rows:
        largest = _largest(value)
        if not largest <= peak:  # larger, or NaN
            peak = float(largest) if largest == largest else None
            if peak is None:
                break
    run.residual_peak = peak


def _largest(values):
    """``max |values|`` (NaN if any value is NaN) from the largest and smallest value: no array of ``|values|``.

    ``values`` is an array or a number (a residual free of the state). Called at every step on the whole stack,
    where a temporary costs as much as the reduction.
    """
    if not isinstance(values, np.ndarray):
        return abs(values)
    top, bottom = np.maximum.reduce(values, axis=None), np.minimum.reduce(values, axis=None)  # NaN propagates to both
    return top if top >= -bottom else -bottom


def _residual_rows(view) -> np.ndarray:
    """The residuals of the view's last evaluation as rows (m_h + m, L) (an entry free of the state is a number)."""
    L = view.buffer.shape[1]
    return np.array([np.broadcast_to(value, (L,)) for value in view.residuals]).reshape(-1, L)


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
    # stepping.stick_velocity for these members at once: the minimum-norm velocity change that puts every sticking contact at rest
    y = y.copy()
    for sel, stuck in view.groups:
        if stuck:
            slope = F[stuck, 4:].transpose(2, 0, 1)[sel]  # (G, s, n)
            s = F[stuck, 0].T[sel]
            gram = slope @ slope.transpose(0, 2, 1)
            y[sel, n:] = y[sel, n:] - (slope.transpose(0, 2, 1) @ np.linalg.solve(gram, s[:, :, None]))[:, :, 0]
    return modes, y, failures
