"""Parameter sweeps: one model, many parameter sets and gains, integrated together.

A stability map needs thousands of short runs that differ only in a gain or a
parameter. :func:`sweep` runs them as one batch with ``simulate``'s fixed-step
Euler or RK4 on ``simulate``'s grid, so each member equals its single
:func:`udk_notebooks.simulate` run to rounding (1e-12 in the tests). The
batched integration itself (one fused, CSE'd evaluation per stage for all
members, stacked linear algebra, gain and start checks for the whole batch,
Coulomb contacts that switch per member) lives in :mod:`udk_notebooks.batch`.

Members that a single run would refuse (an unstable gain, an inconsistent
initial state), that diverge (``simulate``'s :data:`DIVERGENCE_FACTOR` rule on
the state and on the residuals, at the same sample) or whose equation of
motion fails are reported per member in :attr:`SweepResult.status`,
``message`` and ``stopped_at``; their rows hold NaN from the point where they
stopped, never a silent NaN with status "ok". A member whose motion fails in
the batch (a mass matrix that stops being positive definite, an overflow, a
friction law without solution) is run alone by ``simulate``, whose outcome it
takes, so a member's status and message do not depend on the path. A sweep
whose output would pass ``simulate``'s ``MEMORY_LIMIT`` is refused before it
allocates anything.

The adaptive methods (each run has its own steps: no common grid),
:class:`~udk_notebooks.stabilization.GainMatrix` gains and contacts with their
own normal rows (``CoulombFriction.normal``) run member by member through
``simulate``: the same results, at the speed of a loop, with the same
per-member report.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import product

import numpy as np

from ._checks import as_finite_array
from ._threads import single_blas_thread
from .batch import Batch, Messages, initial_modes, integrate, refusals
from .errors import SimulationError
from .simulation import simulate
from .stepping import (ADAPTIVE_METHODS, DIVERGENCE_FACTOR, FIXED_STEP_METHODS, MEMORY_LIMIT, check_constraint_tol,
                       compiled_model)
from .stabilization import Baumgarte

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
        Output times (the fixed-step grid, or the ``t_eval`` asked for; for an
        adaptive method without ``t_eval``, the steps of the first member that
        ran to the end, at which every other member is sampled by its own
        integrator's dense output).
    q, qd : ndarray, shape (B, N, n)
        Coordinates and velocities; NaN after a member stopped. From the
        batch these and the residuals are views of its record, written one
        sample at a time with the members along the last axis (not C-contiguous).
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
        where a single run raises a SimulationError; the samples before are
        kept); or ``"singular"`` (``simulate`` stopped it before a singular
        configuration: members it had to decide alone, or runs member by member).
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


def _check_arguments(params, method):
    """``params`` as given or as a list, after the checks that name a bad ``params`` or ``method`` (issue 22).

    Without them a grid given as a dict, or a list of numbers, failed deep
    inside with a conversion error, and a bad method once per member.
    """
    if method not in FIXED_STEP_METHODS + ADAPTIVE_METHODS:
        raise ValueError(f"`method` must be one of {', '.join(FIXED_STEP_METHODS + ADAPTIVE_METHODS)}; got {method!r}")
    if isinstance(params, Mapping):
        listed = [key for key, value in params.items() if np.ndim(value) > 0]
        if listed:
            raise ValueError(
                f"`params` gives `{listed[0]}` a list of values; a dict is one parameter set. For a grid pass a list "
                f"of dicts, e.g. params=parameter_grid({listed[0]}=[...])")
        return params
    if params is None:
        return None
    if isinstance(params, (str, bytes)) or not hasattr(params, "__iter__"):
        raise ValueError(f"`params` must be a dict or a list of dicts (see parameter_grid); got {params!r}")
    params = list(params)
    for i, entry in enumerate(params):
        if not isinstance(entry, Mapping):
            raise ValueError(f"`params[{i}]` must be a dict of parameter values by name, e.g. {{'m': 2.0}}; "
                             f"got {entry!r}")
    return params


def _member_states(value, name: str, members: int, n: int) -> np.ndarray:
    """An initial state ``q0`` or ``qd0`` of shape (n,) or (B, n), broadcast to (B, n); a bad shape is named."""
    array = as_finite_array(value, name, np.ndim(value))
    if array.shape not in ((n,), (members, n)) and not (array.ndim == 2 and array.shape == (1, n)):
        raise ValueError(
            f"`{name}` must have shape ({n},) or ({'B' if members == 1 else members}, {n}): one entry per "
            f"coordinate, shared or one row per member ({members} member(s) here); got shape {array.shape}")
    return np.broadcast_to(array, (members, n)).astype(float)


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
        ``max_switches`` keep the batch, and so does ``t_eval`` when its times
        are steps of the grid and the model has no friction contacts (then only
        those samples are kept, e.g. ``t_eval=[t_end]`` for the final states:
        no history of every step); any other option (``rtol``, ``atol``,
        ``project``, ...) runs the members one by one. Run one by one, a
        fixed-step sweep with ``t_eval`` is sampled as ``simulate`` samples
        it: at the ``t_eval`` times, each one stepped to, never interpolated.
        An adaptive sweep without ``t_eval`` takes the steps of the first
        member that runs to the end as its times and runs every other member
        with them as ``t_eval``: each is sampled by its own integrator's dense
        output (:func:`scipy.integrate.solve_ivp`'s interpolant, of the
        method's order), not interpolated linearly between its own steps
        (members before that one run twice).

    Returns
    -------
    SweepResult
        Members in the order given; each equals ``simulate(model, t_span,
        q0_i, qd0_i, params=params_i, stabilization=stab_i, ...)`` to rounding,
        including where a member stops as diverged, and has its status and
        message ("refused" where ``simulate`` raises before it starts,
        "failed" where it raises a SimulationError). A sweep in which every
        member was refused or failed is returned like any other.

    Raises
    ------
    ValueError
        For arguments ``simulate`` would refuse for every member (a bad
        ``constraint_tol``, ``t_span`` or ``step``), and when the output (``q``,
        ``q'`` and residuals of every member at every sample) would exceed
        :data:`~udk_notebooks.stepping.MEMORY_LIMIT`.

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
    cm = compiled_model(model)
    params = _check_arguments(params, method)
    states = max((np.shape(v)[0] for v in (q0, qd0) if np.ndim(v) == 2), default=1)
    params, stabs = _members(params, stabilization, states)
    B = len(params)
    q0, qd0 = _member_states(q0, "q0", B, cm.n), _member_states(qd0, "qd0", B, cm.n)
    batched = (
        method in FIXED_STEP_METHODS
        and set(simulate_options) <= {"constraint_tol", "max_switches", "t_eval"}  # any other option: one by one
        and all(s is None or isinstance(s, Baumgarte) for s in stabs)
        and all(rows is None for rows in cm.friction_normals)
        and all(cm.reaction_free)  # N = |F^L| is the normal force only where A M^-1 C = 0 (else simulate refuses)
    )
    if "constraint_tol" in simulate_options:  # refused for the whole sweep, with simulate's message
        check_constraint_tol(simulate_options["constraint_tol"])
    if not batched:
        if method in FIXED_STEP_METHODS or simulate_options.get("t_eval") is not None:
            _check_memory(cm, B, _one_by_one_samples(t_span, method, step, simulate_options))
        return _one_by_one(cm, t_span, q0, qd0, params, stabs, method, step, progress, simulate_options)
    t_span = as_finite_array(t_span, "t_span", 1)
    if t_span.shape != (2,) or not t_span[1] > t_span[0]:
        raise ValueError(f"`t_span` must be (t0, tf) with tf > t0; got {t_span!r}")
    t0, tf = map(float, t_span)
    step = (tf - t0) / 1000 if step is None else float(step)
    if not (np.isfinite(step) and step > 0):
        raise ValueError(f"`step` must be a positive number; got {step!r}")
    tol = check_constraint_tol(simulate_options.get("constraint_tol", 1e-9))
    max_switches = int(simulate_options.get("max_switches", 1000))
    count = max(1, int(round((tf - t0) / step)))
    grid = t0 + (tf - t0) * np.arange(count + 1) / count
    keep = None
    if simulate_options.get("t_eval") is not None:
        keep = None if cm.n_friction else _grid_samples(grid, simulate_options["t_eval"])
        if keep is None:  # times off the step grid (simulate adds them as steps), or contacts: one by one
            _check_memory(cm, B, _one_by_one_samples(t_span, method, step, simulate_options))
            return _one_by_one(cm, t_span, q0, qd0, params, stabs, method, step, progress, simulate_options)
    _check_memory(cm, B, count + 1 if keep is None else int(np.count_nonzero(keep)))

    P = _parameter_rows(cm, params)
    status = np.array(["ok"] * B, dtype=object)
    message = Messages(B)
    for i, reason in refusals(cm, t0, q0, qd0, P, stabs, method, step, tol).items():
        status[i], message[i] = "refused", reason
    members = _member_dicts(cm, params, P, stabs)
    gains = np.array([[s.alpha, s.beta, s.gamma] if s is not None else [0.0, 0.0, 0.0] for s in stabs])
    live = np.flatnonzero(status == "ok")
    batch = Batch(cm, P, gains)
    if batch.singular:  # a singular mass matrix (a massless coordinate): simulate's own solver, member by member
        return _one_by_one(cm, t_span, q0, qd0, params, stabs, method, step, progress, simulate_options)
    y0 = np.concatenate([q0, qd0], axis=1)
    modes0 = np.zeros((B, cm.n_friction), dtype=np.int64)
    failures = {}
    if cm.n_friction:
        y0[live], modes0[live] = initial_modes(cm, batch, t0, y0[live], live, failures)
    limit = DIVERGENCE_FACTOR * (1.0 + np.abs(y0).max(axis=1))  # as simulate: the scale of the start
    batch.limit = limit
    bar = _progress(count, progress and B * count > 20000)
    with single_blas_thread(), np.errstate(all="ignore"):  # a diverging member is stopped and reported
        run = integrate(batch, grid, method, y0, modes0, live, limit, max_switches, failures, bar, keep)
    if bar is not None:
        bar.close()
    result = _result(cm, batch, grid if keep is None else grid[keep], run, y0, limit, status, message, members)
    # A member whose motion failed in the batch is run alone: simulate decides its outcome (refused at the
    # start, failed part-way with its own message, or stopped at a singular configuration), so a member's
    # status and message never depend on the path (the stacked solver hands such members over already).
    for i in np.flatnonzero(result.status == "failed"):
        _replace_member(result, int(i), _single_outcome(cm, t_span, q0[i], qd0[i], params[i], stabs[i], method,
                                                        step, simulate_options))
    return result



def _parameter_rows(cm, params) -> np.ndarray:
    """The members' parameter vectors, shape (B, k); a parameter dict shared by members is read once."""
    read = {}  # by the dict's identity: a sweep over gains shares one dict among all its members
    rows = [read[id(p)] if id(p) in read else read.setdefault(id(p), cm.parameters(p)) for p in params]
    return np.array(rows).reshape(len(params), len(cm.parameter_names))


def _member_dicts(cm, params, P, stabs) -> list[dict]:
    """Each member's parameter values by name, with its ``stabilization`` (:attr:`SweepResult.members`)."""
    named = {}  # one dict of values per shared parameter dict, copied per member
    out = []
    for p, row, stab in zip(params, P, stabs):
        if id(p) not in named:
            named[id(p)] = dict(zip(cm.parameter_names, row.tolist()))
        out.append({**named[id(p)], "stabilization": stab})
    return out


def _grid_samples(grid: np.ndarray, t_eval) -> np.ndarray | None:
    """Which samples of the step grid ``t_eval`` asks for (bool, shape (N,)), or None unless all of them are grid times.

    ``simulate`` adds the requested times to its fixed-step grid; when each is
    a grid time already, its grid is this one, so the batch steps as each
    single run does and records only those samples (no history of every step).
    Anything else (times between steps, a ``t_eval`` that ``simulate`` refuses)
    gives None: the members then run one by one, with ``simulate``'s own grid or message.
    """
    try:
        times = as_finite_array(t_eval, "t_eval", 1)
    except (TypeError, ValueError):
        return None
    if not times.size or np.any(np.diff(times) <= 0) or np.diff(grid).min() <= 2e-12 * max(1.0, abs(grid[-1])):
        return None  # (the last: simulate would merge grid times within 1e-12 of a requested one)
    keep = np.isin(grid, times)
    return keep if np.count_nonzero(keep) == times.size else None


def _result(cm, batch, grid, run, y0, limit, status, message, members) -> SweepResult:
    """Residuals of every recorded sample (at the times ``grid``), ``simulate``'s residual stop, the summaries."""
    n, B, N = cm.n, y0.shape[0], grid.size
    history, run.states = run.states, None  # (N, 2n, B): one block per sample, filled step by step
    sampled = None  # (N, B): a sample is all numbers (reached) or all NaN; found when needed
    # simulate ends a run at the first sample whose residual passes DIVERGENCE_FACTOR times the start's scale squared
    bound = DIVERGENCE_FACTOR * (limit / DIVERGENCE_FACTOR) ** 2
    if run.residuals is not None:  # kept as the steps evaluated them
        phi_h, vel_h = run.residuals[:, :cm.n_holonomic], run.residuals[:, cm.n_holonomic:]
    else:
        sampled = np.isfinite(history[:, 0])
        phi_h, vel_h = _residuals(cm, batch.P, grid, history, sampled)
    if run.residual_peak is not None and run.residual_peak <= bound.min(initial=np.inf):
        first_over = np.full(B, N)  # the steps watched every residual recorded: none is near a member's bound
    else:
        sampled = np.isfinite(history[:, 0]) if sampled is None else sampled
        first_over = _residual_stop(phi_h, vel_h, sampled, bound)
    # the result reads the records through (B, N, .) views, as they were written: nothing is transposed
    states, phi, vel = (record.transpose(2, 0, 1) for record in (history, phi_h, vel_h))
    stopped_at = np.full(B, np.nan)
    for i, (t, reason, kind) in run.stops.items():
        status[i], message[i], stopped_at[i] = kind, reason, t
    for i in np.flatnonzero(first_over < N):
        j = int(first_over[i])
        worst = np.abs(np.concatenate([phi[i, j], vel[i, j]])).max(initial=0.0)  # NaN propagates
        states[i, j:] = phi[i, j:] = vel[i, j:] = np.nan
        status[i], stopped_at[i] = "diverged", grid[j]
        message[i] = (f"a constraint residual reached {worst:.3g}, past {DIVERGENCE_FACTOR:g} times "
                      "the start's scale squared (DIVERGENCE_FACTOR)")
    # refused members hold NaN already: the records start as NaN with contacts, else _blank_unwritten filled them
    modes = mode_times = None
    if cm.n_friction:
        modes, mode_times = [], []
        done = (np.isfinite(history[:, 0]) if sampled is None else sampled).T
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


RESIDUAL_BLOCK = 2**18
"""Samples (member times time) whose residuals :func:`_residuals` evaluates at once: temporaries stay small."""


def _residuals(cm, P, grid, history, sampled) -> tuple[np.ndarray, np.ndarray]:
    """``phi`` and ``(phi', psi)`` at every sample, shapes (N, m_h, B) and (N, m, B); NaN where nothing was sampled.

    ``history`` is the batch's (N, 2n, B) record and ``sampled`` (N, B) where
    it holds a sample; the residuals are stored the same way (the result
    reads all three through (B, N, .) views). They are evaluated a block of
    samples at a time (the lambdified functions broadcast rows of shape
    (samples, B) against parameters (1, B) and times (samples, 1)), so the
    intermediate arrays stay near :data:`RESIDUAL_BLOCK` numbers however large the sweep.
    """
    N, _, B = history.shape
    n, nh, m = cm.n, cm.n_holonomic, cm.m
    phi, vel = np.empty((N, nh, B)), np.empty((N, m, B))
    p_rows = [column[None, :] for column in P.T]
    gaps = not sampled.all()
    for rows in _sample_blocks(N, B):
        block, t = history[rows], grid[rows, None]
        q_rows = [block[:, j] for j in range(n)]
        qd_rows = [block[:, n + j] for j in range(n)]
        if nh:
            for j, value in enumerate(cm.phi(t, q_rows, p_rows)):
                phi[rows, j] = value
        if m:
            for j, value in enumerate(cm.velocity_constraints(t, q_rows, qd_rows, p_rows)):
                vel[rows, j] = value
        if gaps:  # a residual that does not depend on the state would not be NaN by itself
            for record in (phi, vel):
                record[rows].transpose(0, 2, 1)[~sampled[rows]] = np.nan
    return phi, vel


def _sample_blocks(N: int, B: int) -> list[slice]:
    """Slices of the N samples, each about :data:`RESIDUAL_BLOCK` numbers of the B members."""
    per_block = max(1, RESIDUAL_BLOCK // max(B, 1))
    return [slice(lo, min(lo + per_block, N)) for lo in range(0, N, per_block)]


def _residual_stop(phi, vel, sampled, bound) -> np.ndarray:
    """Per member the first sample whose ``max |residual|`` passes ``bound`` (B,) or is not a number; N if none.

    ``phi`` (N, m_h, B) and ``vel`` (N, m, B) as :func:`_residuals` gives them; only ``sampled`` (N, B) counts
    (``simulate``'s residual stop, :data:`DIVERGENCE_FACTOR`). Block by block, so temporaries stay small.
    """
    N, B = sampled.shape
    first = np.full(B, N)
    for rows in _sample_blocks(N, B):
        worst = np.zeros((rows.stop - rows.start, B))
        for record in (phi, vel):
            for j in range(record.shape[1]):
                np.maximum(worst, np.abs(record[rows, j]), out=worst)  # NaN propagates
        over = sampled[rows] & ~(worst <= bound)
        hit = (first == N) & over.any(axis=0)
        first[hit] = rows.start + np.argmax(over[:, hit], axis=0)
    return first


def _one_by_one(cm, t_span, q0, qd0, params, stabs, method, step, progress, options) -> SweepResult:
    """One :func:`simulate` per member (adaptive methods, GainMatrix gains, other options), outcomes per member.

    Adaptive runs choose their own steps, so there is no common grid to batch
    on. A member that ``simulate`` refuses is "refused", one it stops as
    diverged is "diverged", one whose run fails part-way (SimulationError, or
    a friction law without solution) is "failed".
    """
    B = len(params)
    runs, status, message = [None] * B, np.array(["ok"] * B, dtype=object), [""] * B
    stopped_at = np.full(B, np.nan)
    bar = _progress(B, progress and B > 20)
    # An adaptive run chooses its own steps: without `t_eval` the members share the times of the first one that
    # ran to the end, and every other member is run with them as its `t_eval` (sampled by its integrator's
    # dense output, never interpolated linearly from its own steps)
    # (a switching instant appears twice in a run's times, before and after the switch: t_eval takes it once, and
    # each member's sample there is its first, as for the first member's own)
    common = None if method in ADAPTIVE_METHODS and options.get("t_eval") is None else options
    times = None
    for i in range(B):
        outcome = _single_outcome(cm, t_span, q0[i], qd0[i], params[i], stabs[i], method, step,
                                  options if common is None else common)
        runs[i], status[i], message[i], stopped_at[i] = outcome
        if common is None and status[i] == "ok":
            times = runs[i].t
            common = {**options, "t_eval": np.unique(times)}
            for j in range(i):  # the members before it (stopped or refused) again, sampled at those times
                runs[j], status[j], message[j], stopped_at[j] = _single_outcome(
                    cm, t_span, q0[j], qd0[j], params[j], stabs[j], method, step, common)
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    # Friction switches add output times per member. With `t_eval` every run, fixed-step or adaptive, holds
    # exactly those samples (simulate steps to each one, or samples its dense output); without it fixed-step
    # runs share the step grid and adaptive ones the times of the first member that ran to the end.
    if times is not None:
        t = times
    elif common is not None and common.get("t_eval") is not None:
        t = np.asarray(common["t_eval"], dtype=float)
    elif method in FIXED_STEP_METHODS:
        t = _fixed_grid(t_span, step)
    else:  # adaptive, and no member ran to the end: the times of the one that got farthest, the others again
        reached = [(r.t[-1], i) for i, r in enumerate(runs) if r is not None and r.t.size]
        if not reached:  # every member was refused
            t = np.asarray(t_span, dtype=float)[:1]
        else:
            farthest = max(reached)[1]
            t = runs[farthest].t
            common = {**options, "t_eval": np.unique(t)}
            for j in range(B):
                if j != farthest and runs[j] is not None:
                    runs[j], status[j], message[j], stopped_at[j] = _single_outcome(
                        cm, t_span, q0[j], qd0[j], params[j], stabs[j], method, step, common)
    N = t.size
    P = [cm.parameters(p) for p in params]
    members = [dict(zip(cm.parameter_names, p.tolist()), stabilization=s) for p, s in zip(P, stabs)]
    widths = {"q": cm.n, "qd": cm.n, "position_residual": cm.n_holonomic, "velocity_residual": cm.m}
    fields = {name: np.stack([_on_times(r, name, width, t) for r in runs]) if B else np.zeros((0, N, width))
              for name, width in widths.items()}
    return SweepResult(
        t, fields["q"], fields["qd"], fields["position_residual"], fields["velocity_residual"], status, message,
        stopped_at, members, modes=[None if r is None else r.modes for r in runs], runs=runs,
        mode_times=[None if r is None else r.t for r in runs],
    )


def _on_times(run, field: str, width: int, t: np.ndarray) -> np.ndarray:
    """A run's ``field`` at the times ``t``, shape (N, width): its own samples where it has them, NaN after its end.

    Every member's samples are at the sweep's times (the step grid, ``t_eval``, or the common times of an adaptive
    sweep); a sample the run does not have is NaN, never interpolated.
    """
    out = np.full((t.size, width), np.nan)
    if run is None or not run.t.size:
        return out
    values = getattr(run, field).reshape(run.t.size, width)
    at = np.clip(np.searchsorted(run.t, t), 0, run.t.size - 1)
    exact = run.t[at] == t
    if not (exact | (t > run.t[-1])).all():
        raise RuntimeError("a sweep member has no sample at some of the sweep's times before its end; interpolating "
                           "would be a silent wrong answer (please report this)")
    out[exact] = values[at[exact]]
    return out


def _single_outcome(cm, t_span, q0, qd0, params, stabilization, method, step, options):
    """One member through :func:`simulate`: ``(trajectory or None, status, message, stopped_at)``.

    ``"refused"`` when ``simulate`` raises before it starts (a ValueError or
    RuntimeError: an inconsistent start, an unstable gain, a friction contact
    that no law can start); ``"failed"`` when it raises a SimulationError
    part-way (the samples before are kept, as the error carries them);
    otherwise the run's own status (``"ok"``, ``"diverged"``, ``"singular"``).
    """
    try:
        run = simulate(cm, t_span, q0, qd0, method=method, step=step, params=params, stabilization=stabilization,
                       **options)
    except SimulationError as exc:
        return exc.trajectory, "failed", str(exc), exc.time
    except (ValueError, RuntimeError) as exc:
        return None, "refused", str(exc), np.nan
    if run.status == "ok":
        return run, "ok", "", np.nan
    return run, run.status, run.stop_reason, run.stop_time


def _replace_member(result: SweepResult, i: int, outcome) -> None:
    """Member ``i`` of a batched result from its single run's outcome (see :func:`_single_outcome`)."""
    run, result.status[i], result.message[i], result.stopped_at[i] = outcome
    for name in ("q", "qd", "position_residual", "velocity_residual"):
        target = getattr(result, name)
        target[i] = _on_times(run, name, target.shape[2], result.t)
    if result.modes is not None:
        result.modes[i] = None if run is None else run.modes
        result.mode_times[i] = None if run is None else run.t


def _fixed_grid(t_span, step) -> np.ndarray:
    """``simulate``'s fixed-step grid for this span and step (default: 1000 steps)."""
    t0, tf = map(float, t_span)
    count = max(1, int(round((tf - t0) / (step if step is not None else (tf - t0) / 1000))))
    return t0 + (tf - t0) * np.arange(count + 1) / count


def _one_by_one_samples(t_span, method, step, options) -> int:
    """Samples per member of a member-by-member sweep (the fixed-step grid, or ``t_eval``)."""
    if options.get("t_eval") is not None:
        return len(np.atleast_1d(options["t_eval"]))
    return _fixed_grid(as_finite_array(t_span, "t_span", 1), None if step is None else float(step)).size


def _check_memory(cm, members: int, samples: int) -> None:
    """Refuse a sweep whose output would not fit in ``simulate``'s :data:`MEMORY_LIMIT`, before allocating it.

    The output holds, per member and sample, ``q``, ``q'`` and the residuals
    (``2 n + m_h + m`` numbers); the batch records exactly these as it steps
    (the result reads the record through views) and stays below twice that
    (``benchmarks/sweep_memory.py`` measures it).
    """
    per_sample = 8 * (2 * cm.n + cm.n_holonomic + cm.m)
    need = float(members) * float(samples) * per_sample
    if need > MEMORY_LIMIT:
        raise ValueError(
            f"the sweep's output ({members} members x {samples} samples) needs about {need / 2**30:.1f} GiB "
            f"(limit {MEMORY_LIMIT / 2**30:.0f} GiB, as for simulate): take a larger `step`, fewer members "
            "(`params`), or a shorter `t_span`")


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
        ``max |phi|`` in the units of ``phi`` (m^2 for the default pendulum, ``x^2 + y^2 - l^2``; NaN where
        refused or diverged, as ``result.status`` says; the column
        ``beta = 0`` is refused: the error equation ``phi'' + 2 alpha phi' = 0`` has the root 0, so
        :func:`~udk_notebooks.check_gain` finds the drift not pulled back).
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
