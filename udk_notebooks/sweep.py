"""Parameter sweeps: one model, many parameter sets and gains, integrated together.

A stability map needs thousands of short runs that differ only in a gain or a
parameter. :func:`sweep` runs them as one batch: the compiled model's
array-capable functions (:meth:`CompiledModel.matrices_batch`,
:meth:`CompiledModel.residuals_batch`) evaluate ``M, Q, A, b, C`` for every
member at once, and :func:`udk_notebooks.core.solve_batch` solves the
Udwadia-Kalaba equation (Udwadia & Kalaba 1992, Eq. 7; the 2005 paper's
Eq. 11 for ``C``) with stacked linear algebra. The fixed-step grid and the
stabilization term are those of :func:`udk_notebooks.simulate`, so each member
equals a single ``simulate`` run to rounding.

Members that a single run would refuse (an unstable gain, an inconsistent
initial state) or that diverge are reported per member in
:attr:`SweepResult.status` and :attr:`SweepResult.message`; their rows hold
NaN after the point where they stopped, never a silent NaN with status "ok".
Models with friction and the adaptive methods run member by member through
``simulate`` (the same result, without the batch speed-up).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product
from typing import Mapping, Sequence

import numpy as np

from ._checks import as_finite_array
from .core import solve, solve_batch
from .simulation import FIXED_STEP_METHODS, _check_initial, _compiled, simulate
from .stabilization import Baumgarte, check_gain

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
        ``"ok"``, ``"refused"`` (a single run would raise; see ``message``) or
        ``"diverged"`` (the state became non-finite at ``stopped_at``).
    message : list of str
        Why a member was refused or diverged (empty for "ok").
    stopped_at : ndarray, shape (B,)
        Time of divergence (NaN for the others).
    members : list of dict
        The parameter values and gains of each member.
    modes : list of ndarray, optional
        Friction modes per member (shape (N_i, k) on that member's own
        times, which include its switching instants), for friction models.
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


def _members(params, stabilization):
    """Parameter dicts and stabilizations, one each per member (a single one is shared)."""
    many = isinstance(stabilization, (list, tuple))
    if params is None or isinstance(params, Mapping):
        params = [params or {}] * (len(stabilization) if many else 1)
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
    return tqdm(total=total, desc="sweep", leave=False)


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
        Show a tqdm progress bar when tqdm is installed.
    **simulate_options
        Passed to :func:`udk_notebooks.simulate` for the member-by-member path
        (``rtol``, ``atol``, ``t_eval``, ``project``, ``constraint_tol``).

    Returns
    -------
    SweepResult
        Members in the order given; each equals ``simulate(model, t_span,
        q0_i, qd0_i, params=params_i, stabilization=stab_i, ...)`` to rounding.
    """
    cm = _compiled(model)
    params, stabs = _members(params, stabilization)
    B = len(params)
    q0 = np.broadcast_to(as_finite_array(q0, "q0", np.ndim(q0)), (B, cm.n)).astype(float)
    qd0 = np.broadcast_to(as_finite_array(qd0, "qd0", np.ndim(qd0)), (B, cm.n)).astype(float)
    batched = (
        method in FIXED_STEP_METHODS
        and not cm.n_friction
        and not simulate_options
        and all(s is None or isinstance(s, Baumgarte) for s in stabs)
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
    count = max(1, int(round((tf - t0) / step)))
    grid = t0 + (tf - t0) * np.arange(count + 1) / count

    P = np.array([cm.parameters(p) for p in params])
    status = np.array(["ok"] * B, dtype=object)
    message = [""] * B
    for i in range(B):  # the checks of a single run, member by member (cheap)
        try:
            _check_initial(cm, t0, q0[i], qd0[i], P[i], 1e-9)
            if stabs[i] is not None:
                check_gain(stabs[i], method, step, cm.n_holonomic, cm.n_nonholonomic)
        except ValueError as exc:
            status[i], message[i] = "refused", str(exc)
    gains = np.array([[s.alpha, s.beta, s.gamma] if s is not None else [0.0, 0.0, 0.0] for s in stabs])
    stabilized = np.array([s is not None for s in stabs])

    N, n = count + 1, cm.n
    Y = np.full((B, N, 2 * n), np.nan)
    live = np.flatnonzero(status == "ok")
    Y[live, 0] = np.concatenate([q0[live], qd0[live]], axis=1)
    stopped_at = np.full(B, np.nan)
    bar = _progress(count, progress and B * count > 20000)
    rhs = _BatchRhs(cm)
    y, t = Y[live, 0], t0
    with np.errstate(all="ignore"):  # a diverging member is detected and reported below
        for k in range(1, N):
            if not live.size:
                break
            if k == 1 or not finite.all():  # the members still running, indexed once
                args = (P[live], gains[live], stabilized[live])
                f = lambda tt, yy: rhs(tt, yy, *args)  # noqa: E731
            target = grid[k]
            h = target - t
            if method == "rk4":
                k1 = f(t, y)
                k2 = f(t + h / 2, y + h / 2 * k1)
                k3 = f(t + h / 2, y + h / 2 * k2)
                k4 = f(t + h, y + h * k3)
                y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
            else:
                y = y + h * f(t, y)
            t = target
            finite = np.isfinite(y).all(axis=1)
            if not finite.all():
                for i in live[~finite]:
                    status[i], stopped_at[i] = "diverged", t
                    message[i] = f"the state became non-finite at t = {t:g}; reduce `step` or check the gains"
                live, y = live[finite], y[finite]
            Y[live, k] = y
            if bar is not None:
                bar.update(1)
    if bar is not None:
        bar.close()
    q, qd = Y[:, :, :n], Y[:, :, n:]
    phi = np.full((B, N, cm.n_holonomic), np.nan)
    vel = np.full((B, N, cm.m), np.nan)
    done = np.isfinite(Y).all(axis=2)  # (B, N): the samples that were reached, all in one evaluation
    if done.any():
        member, sample = np.nonzero(done)
        phi[done], vel[done] = cm.residuals_batch(grid[sample], q[done], qd[done], P[member])
    members = [dict(zip(cm.parameter_names, p.tolist()), stabilization=s) for p, s in zip(P, stabs)]
    return SweepResult(grid, q, qd, phi, vel, status, message, stopped_at, members)


class _BatchRhs:
    """First-order right-hand side ``(qd, q'')`` for a batch of states, parameters and Baumgarte gains."""

    def __init__(self, cm):
        self.cm = cm
        n, m = cm.n, cm.m
        self.k = 0 if cm.constant_mass else n * n
        self.size = self.k + n + m * n + m + n
        self._inverse = {}

    def _mass(self, P, values):
        cm, n = self.cm, self.cm.n
        if not cm.constant_mass:
            M = values[:, : n * n].reshape(-1, n, n)
            return lambda X: np.linalg.solve(M, X)
        key = P.tobytes()
        if key not in self._inverse:
            self._inverse.clear()
            inv = np.array([np.linalg.inv(cm._constant_mass(p)[0]) for p in P])
            if cm.n > 1 and not np.any(inv[:, ~np.eye(cm.n, dtype=bool)]):  # diagonal: a product per entry
                diagonal = np.diagonal(inv, axis1=1, axis2=2)[:, :, None].copy()
                self._inverse[key] = lambda X: diagonal * X
            else:
                self._inverse[key] = lambda X: inv @ X
        return self._inverse[key]

    def __call__(self, t, y, P, gains, stabilized):
        cm, n, m, k = self.cm, self.cm.n, self.cm.m, self.k
        B = y.shape[0]
        q, qd = y[:, :n], y[:, n:]
        values = np.zeros((B, self.size))
        values[:, cm.nonzero] = cm.matrices_batch(t, q, qd, P)
        Q = values[:, k : k + n]
        A = values[:, k + n : k + n + m * n].reshape(B, m, n)
        b = values[:, k + n + m * n : k + n + m * n + m]
        C = values[:, k + n + m * n + m :]
        if stabilized.any():
            phi, vel = cm.residuals_batch(t, q, qd, P)
            n_h = cm.n_holonomic
            alpha, beta, gamma = gains.T
            correction = np.concatenate(
                [-2.0 * alpha[:, None] * vel[:, :n_h] - beta[:, None] ** 2 * phi, -gamma[:, None] * vel[:, n_h:]],
                axis=1,
            )
            b = b + np.where(stabilized[:, None], correction, 0.0)
        inverse = self._mass(P, values)
        extra = C[:, :, None] if cm.has_nonideal else None
        sol = solve_batch(inverse, Q, A, b, extra)
        qdd = sol.qdd if extra is None else sol.qdd + sol.acceleration[:, :, 0]
        for i in np.flatnonzero(~sol.ok):  # ill-conditioned members: the general solver, one by one
            M = cm._constant_mass(P[i])[0] if cm.constant_mass else values[i, : n * n].reshape(n, n)
            qdd[i] = solve(M, Q[i], A[i], b[i], C[i] if cm.has_nonideal else None).qdd
        return np.concatenate([qd, qdd], axis=1)


def _one_by_one(cm, t_span, q0, qd0, params, stabs, method, step, progress, options) -> SweepResult:
    """Friction models and adaptive methods: one :func:`simulate` per member, errors recorded per member."""
    B = len(params)
    runs, status, message = [], np.array(["ok"] * B, dtype=object), [""] * B
    stopped_at = np.full(B, np.nan)
    bar = _progress(B, progress and B > 20)
    for i in range(B):
        try:
            runs.append(simulate(cm, t_span, q0[i], qd0[i], method=method, step=step, params=params[i],
                                 stabilization=stabs[i], **options))
        except FloatingPointError as exc:
            runs.append(None)
            status[i], message[i] = "diverged", str(exc)
        except (ValueError, RuntimeError) as exc:
            runs.append(None)
            status[i], message[i] = "refused", str(exc)
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    ok = [r for r in runs if r is not None]
    if not ok:
        raise ValueError("every member of the sweep was refused or diverged; first reason: " + message[0])
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
            if r is not None:
                values = getattr(r, field)
                out[i] = np.array([np.interp(t, r.t, values[:, j]) for j in range(width)]).T.reshape(N, width)
        return out

    P = [cm.parameters(p) for p in params]
    members = [dict(zip(cm.parameter_names, p.tolist()), stabilization=s) for p, s in zip(P, stabs)]
    return SweepResult(
        t, stacked("q", cm.n), stacked("qd", cm.n), stacked("position_residual", cm.n_holonomic),
        stacked("velocity_residual", cm.m), status, message, stopped_at, members,
        modes=[None if r is None else r.modes for r in runs], runs=runs,
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
    for value, marker in ((-1, "v"), (0, "s"), (1, "^")):  # markers, not colour alone
        where = regime == value
        ax.plot(M_[where], A_[where], ls="none", marker=marker, ms=4, mfc="none", mec="black",
                label=f"{REGIMES[value]} ({marker})")
    ax.plot(np.tan(angles), np.degrees(angles), "k--", label=r"$\mu = \tan\alpha$")
    ax.set(xlim=(mus.min(), mus.max()), xlabel=r"friction coefficient $\mu = \mu_s$ (1)", ylabel=r"incline angle $\alpha$ (deg)",
           title=f"regime after {t_end:g} s, started up at {speed:g} m/s")
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize="small", framealpha=1.0)
    return regime, result
