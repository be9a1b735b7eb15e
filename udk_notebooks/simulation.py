"""Time integration of compiled models: fixed-step Euler and RK4, and scipy's solvers.

The state is ``y = (q, q')``. Each right-hand-side evaluation solves the
Udwadia-Kalaba equation (:func:`udk_notebooks.core.solve`). Coulomb friction
contacts switch between sliding and sticking at events located exactly (a
root of the sliding velocity, or of the static-friction margin), so the
discontinuous ``sgn(s)`` is never stepped across and cannot chatter.

The output at the samples (forces, residuals, energy, powers) is computed for
all samples at once, with the compiled model's array functions and the stacked
solver :func:`udk_notebooks.stacked.solve_stack`; samples that it cannot vouch for
go through the integrator's own one-sample route (see ``_motions``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from ._checks import as_finite_array, finite_float
from .compiled import HOLD_RTOL, OPEN, CompiledModel
from ._threads import single_blas_thread
from .core import RANK_RTOL, Motion
from .errors import SimulationError, SingularConfigurationError, StiffnessWarning, UnstableGainError
from .singular import SINGULAR_ACTIONS, RankMonitor, SingularConfiguration
from .stepping import (ADAPTIVE_METHODS, DIVERGENCE_FACTOR, FIXED_STEP_METHODS, MEMORY_LIMIT, check_constraint_tol,
                       check_initial, compiled_model, euler_step, rk4_step, runaway, stick_velocity)
from .stacked import constant_mass, solve_stack, state_mass

__all__ = ["COMPILED_METHODS", "DIVERGENCE_FACTOR", "FIXED_STEP_METHODS", "IMPACT_TOL", "ContactEvent", "Trajectory",
           "project_initial_state", "simulate"]

COMPILED_METHODS = ("dop853",)
"""Methods whose stepping runs in compiled code. ``"dop853"`` is Hairer and Wanner's DOP853 (Hairer, Norsett
& Wanner, "Solving Ordinary Differential Equations I", 1993, Sec. II.10), the Fortran code behind
``scipy.integrate.ode``: the same Runge-Kutta pair of order 8(5,3) as solve_ivp's ``"DOP853"``, with about a
microsecond of overhead per evaluation instead of seven. It steps to every ``t_eval`` time (no interpolation)
and takes models without friction contacts (see :func:`simulate`). The stops cost evaluations (the double
pendulum's default swing, 201 samples in 5 s: 4944 instead of 3443 for the Cartesian model), but DOP853's
dense output of order 7 costs three more per step with a sample (600 to 720 here), and ``ode`` does not
return it: stepping to the samples is the cheaper of the two. The right-hand side is
:meth:`~udk_notebooks.compiled.CompiledModel.plain_rate` (generated code where the model has a fast solver)."""

IMPACT_TOL = 1e-9
"""An open contact counts as back on its surface when its gap falls below ``-IMPACT_TOL (1 + max|q|)`` metres.

A released point leaves its surface with zero normal velocity and acceleration, so its gap starts at
rounding size; this margin keeps a rounding-size gap from reading as an impact."""


@dataclass(frozen=True)
class ContactEvent:
    """A change of a contact's state during a run.

    Attributes
    ----------
    time : float
    contact : str
        The contact's name (``Contact.name``, or ``"friction i"`` for a ``CoulombFriction`` entry).
    kind : str
        ``"lift-off"`` (a unilateral contact's normal force reached zero and it opened), ``"stick"``,
        ``"slip"``, ``"reversal"`` (sliding the other way) or ``"impact"`` (an open point came back
        to its surface: the run stops there, impacts are not modelled).
    """

    time: float
    contact: str
    kind: str


@dataclass(frozen=True, eq=False)
class Trajectory:
    """A simulated motion, sampled at times ``t``.

    Attributes
    ----------
    t : ndarray, shape (N,)
        Sample times.
    q, qd, qdd : ndarray, shape (N, n)
        Coordinates, velocities and accelerations.
    impressed, ideal, nonideal : ndarray, shape (N, n)
        The Newton, Lagrange and Coulomb force terms (2005 paper, Eqs. 9-11).
    position_residual : ndarray, shape (N, m_h)
        ``phi(q, t)`` of the holonomic constraints: the drift at position level.
        The gap row of a :class:`~udk_notebooks.contacts.Contact` is 0 while the
        contact is open (its gap is then a distance, not a drift).
    velocity_residual : ndarray, shape (N, m)
        ``(phi', psi)``: the drift at velocity level (open contacts' rows 0, as above).
    energy : ndarray, shape (N,)
        Jacobi's energy ``h`` (``T + V`` for scleronomic systems).
    power : dict of str to ndarray, shape (N,)
        ``"nonconservative"`` (extra forces and dissipation), ``"ideal"``
        (nonzero only for rheonomic constraints), ``"nonideal"`` (friction and
        other nonideal forces) and ``"explicit_time"`` (``-dL/dt``); their sum
        is ``dh/dt`` (power theorem).
    modes : ndarray of int, shape (N, k)
        Friction contact modes, one column per entry of ``model.all_friction``:
        +1/-1 sliding, 0 sticking, 2 open (a :class:`~udk_notebooks.contacts.Contact`
        whose point left its surface, :data:`udk_notebooks.compiled.OPEN`).
    coordinate_names : tuple of str
    parameters : dict of str to float
    method : str
    status : str
        ``"ok"``; ``"diverged"`` (see :data:`DIVERGENCE_FACTOR`); ``"singular"``
        (the run reached a singular configuration and stopped before it, see
        :mod:`udk_notebooks.singular`); ``"failed"`` (the partial run kept by a
        :class:`~udk_notebooks.errors.SimulationError`); ``"impact"`` (an open
        contact's point came back to its surface: impacts are not modelled).
    stop_time : float or None
        When a run that did not finish stopped.
    stop_reason : str
        Why, in words (with the time and state).
    singularity : SingularConfiguration or None
        For ``status == "singular"``: time, state, measure and the constraint
        rows (or mass direction) that lost rank.
    normal_force : ndarray, shape (N, c)
        The normal force of each :class:`~udk_notebooks.contacts.Contact`, in
        newtons (NaN while the contact is open).
    events : tuple of ContactEvent
        Lift-offs, stick/slip switches and the impact that ended a run, in time order.
    contact_names : tuple of str
    """

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    impressed: np.ndarray
    ideal: np.ndarray
    nonideal: np.ndarray
    position_residual: np.ndarray
    velocity_residual: np.ndarray
    energy: np.ndarray
    power: dict
    modes: np.ndarray
    coordinate_names: tuple
    parameters: dict
    method: str
    stabilization: object = None
    status: str = "ok"
    stop_time: float | None = None
    stop_reason: str = ""
    singularity: SingularConfiguration | None = None
    normal_force: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((0, 0)))
    events: tuple = ()
    contact_names: tuple = ()

    @property
    def diverged(self) -> bool:  # status "failed" marks the partial run of a SimulationError
        """True when the run was stopped because it diverged (see :data:`DIVERGENCE_FACTOR`)."""
        return self.status == "diverged"

    @property
    def constraint(self) -> np.ndarray:
        """Total constraint force ``F^L + F^C``, shape (N, n)."""
        return self.ideal + self.nonideal

    def coordinate(self, name: str) -> np.ndarray:
        """The history of one coordinate by name, shape (N,)."""
        if name not in self.coordinate_names:
            raise ValueError(f"unknown coordinate `{name}`; choose from {', '.join(self.coordinate_names)}")
        return self.q[:, self.coordinate_names.index(name)]

    def work(self) -> dict:
        """Work done since ``t[0]`` by each power term (trapezoidal rule), shape (N,) each."""
        return {k: _running_trapezoid(v, self.t) for k, v in self.power.items()}

    def energy_balance(self) -> np.ndarray:
        """``h(t) - h(t0) - sum of work``: zero up to the integration and quadrature error."""
        return self.energy - self.energy[0] - sum(self.work().values())


def _running_trapezoid(values: np.ndarray, t: np.ndarray) -> np.ndarray:
    """The integral of ``values`` from ``t[0]`` to each ``t[i]`` by the trapezoidal rule, shape (N,).

    The carriage pendulum's and the growing circle's explorers show the work of
    each force on their first frame (:meth:`Trajectory.work`): with numpy alone
    it costs no import of ``scipy.integrate`` (a cold start's 0.3 s, issue 23).

    Parameters
    ----------
    values : ndarray, shape (N,)
        The integrand at the times ``t``.
    t : ndarray, shape (N,)
        Increasing times, N at least 1.

    Returns
    -------
    ndarray, shape (N,)
        0 at ``t[0]``, then the sum of ``(t[i+1] - t[i]) (values[i] + values[i+1]) / 2`` up to each sample.
    """
    values, t = np.asarray(values, dtype=float), np.asarray(t, dtype=float)
    if values.ndim != 1 or t.shape != values.shape or not t.size:
        raise ValueError(f"`values` and `t` must be non-empty 1-D arrays of one length; got shapes {values.shape} "
                         f"and {t.shape}")
    panels = np.diff(t) * (values[1:] + values[:-1]) / 2.0  # each interval's trapezoid
    return np.concatenate(([0.0], np.cumsum(panels)))


def project_initial_state(model, q0, qd0, t0: float = 0.0, params: dict | None = None, *, tol: float = 1e-13, max_iter: int = 50):
    """Nearest state that satisfies the constraints (minimum-norm Gauss-Newton corrections).

    First ``q`` is moved onto ``phi(q, t0) = 0``, then ``q'`` onto
    ``(phi', psi)(q, q', t0) = 0``.

    Parameters
    ----------
    model : Model or CompiledModel
    q0, qd0 : array_like, shape (n,)
        A guess of the initial coordinates and velocities.
    t0 : float, optional
    params : dict, optional
        Parameter values by name.
    tol : float, optional
        Stop when the largest residual is below ``tol`` times its scale.
    max_iter : int, optional

    Returns
    -------
    q, qd : ndarray, shape (n,)
    """
    cm = compiled_model(model)
    q, qd = cm.check_state(q0, qd0, names=("q0", "qd0"))
    p = cm.parameters(params)
    q, qd = q.copy(), qd.copy()
    for _ in range(max_iter if cm.n_holonomic else 0):
        phi = np.asarray(cm.phi(t0, q, p), dtype=float)
        if np.abs(phi).max() <= tol * max(1.0, np.abs(q).max()):
            break
        J = np.asarray(cm.phi_jacobian(t0, q, p), dtype=float)[: cm.n_holonomic]
        q -= np.linalg.lstsq(J, phi, rcond=None)[0]
    for _ in range(max_iter if cm.m else 0):
        vel = np.asarray(cm.velocity_constraints(t0, q, qd, p), dtype=float)
        if np.abs(vel).max() <= tol * max(1.0, np.abs(qd).max()):
            break
        J = np.asarray(cm.velocity_jacobian(t0, q, qd, p), dtype=float)[: cm.m]
        qd -= np.linalg.lstsq(J, vel, rcond=None)[0]
    _, vel_final = cm.residuals(t0, q, qd, p)
    phi_final = cm.residuals(t0, q, qd, p)[0]
    worst = max(np.abs(phi_final).max(initial=0.0), np.abs(vel_final).max(initial=0.0))
    if worst > 1e3 * tol * max(1.0, np.abs(q).max(), np.abs(qd).max()):
        raise ValueError(
            f"could not project the initial state onto the constraints (residual {worst:.3e} after "
            f"{max_iter} iterations); start closer to a consistent configuration"
        )
    return q, qd


class _StepFailure(Exception):
    """A run failed at ``(t, y)`` inside an integrator (turned into SimulationError).

    ``hint`` ends the error's message: by default the usual cause of a failing
    equation of motion.
    """

    USUAL_CAUSE = "; a singular configuration (constraints that lose rank) is the usual cause"

    def __init__(self, t, y, cause, hint=USUAL_CAUSE):
        super().__init__(str(cause))
        self.t, self.y, self.cause, self.hint = float(t), np.array(y, dtype=float), cause, hint


STALL_EVALUATIONS = 20_000
"""An adaptive run is stopped as stalled when this many right-hand-side evaluations in a row advance its time
by less than :data:`STALL_FRACTION` of the span (see :class:`_Budget`)."""

STALL_FRACTION = 1e-6
"""See :data:`STALL_EVALUATIONS`: at that pace the run would need more than 2e10 evaluations to finish."""

MAX_EVALUATIONS = 20_000_000
"""Right-hand-side evaluations an adaptive run may make in all (hours of work) before it stops."""


class _Budget:
    """The evaluation budget of one adaptive run (issue 22: Radau crept at 1e-13 s per step for minutes).

    scipy's solvers stop only when a step falls below the spacing of the
    floating-point numbers near ``t``; a solver that creeps at a step just
    above it (near a singular configuration, where the equation of motion
    stiffens without bound) never returns. Every window of
    :data:`STALL_EVALUATIONS` evaluations must advance the latest time
    evaluated by :data:`STALL_FRACTION` of the span, and the run makes at
    most :data:`MAX_EVALUATIONS`; otherwise it fails with the time and state.
    """

    def __init__(self, t0: float, tf: float):
        self.count, self.span = 0, tf - t0
        self.latest = self.window_start = t0

    def spend(self, t: float, y) -> None:
        self.count += 1
        if t > self.latest:  # a comparison, not max(): this runs at every evaluation
            self.latest = t
        if self.count % STALL_EVALUATIONS:
            return
        advanced = self.latest - self.window_start
        if advanced < STALL_FRACTION * self.span:
            raise _StepFailure(t, y, RuntimeError(
                f"the solver is stalling: {STALL_EVALUATIONS} evaluations of the equation of motion advanced "
                f"the time by only {advanced:.3g} (STALL_EVALUATIONS, STALL_FRACTION)"),
                hint="; its steps shrink without end where the equation of motion stiffens without bound (a "
                     "singular configuration, or a model that cannot be evaluated a little further on). Check the "
                     "state above, or try method='LSODA' or a fixed-step method")
        if self.count >= MAX_EVALUATIONS:
            raise _StepFailure(t, y, RuntimeError(
                f"the solver made {self.count} evaluations of the equation of motion (MAX_EVALUATIONS)"),
                hint="; pass a shorter `t_span`, looser `rtol`/`atol`, or a fixed-step method")
        self.window_start = self.latest


def _counted_rate(rate: Callable, budget: _Budget | None) -> Callable:
    """``rate(t, y)`` counted against ``budget`` (if any), a failure of the model raised as :class:`_StepFailure`.

    The one wrapper of every right-hand side an integrator calls
    (:class:`_Segment` and :class:`_HairerRate`): a ValueError, ArithmeticError
    or LinAlgError of the equation of motion becomes a failure at that time
    and state, which the run reports with the samples before it.
    """
    spend = None if budget is None else budget.spend

    def guarded(t, y):
        if spend is not None:
            spend(t, y)
        try:
            return rate(t, y)
        except (ValueError, ArithmeticError, np.linalg.LinAlgError) as exc:
            raise _StepFailure(t, y, exc) from exc

    return guarded


class _Segment:
    """Right-hand side and switching functions for one set of friction modes (and, optionally, a budget).

    ``rhs(t, y)`` is :meth:`rate` behind :func:`_counted_rate`.
    """

    def __init__(self, cm: CompiledModel, p, modes, stabilization, budget: _Budget | None = None):
        self.cm, self.p, self.modes, self.stab = cm, p, tuple(modes), stabilization
        self.n = cm.n
        self.budget = budget
        self._last = None  # (t, y) and the switching values there
        self._p_list = np.asarray(p, dtype=float).tolist()
        # Without friction modes the rate is bound to the parameters once (CompiledModel.plain_rate, joined to the
        # entries where the model has a fast solver; stabilized_rate): the numbers of the unbound route
        # (accelerations at each call), at a third to a half of its cost per call.
        self._bound = None if self.modes else (
            cm.plain_rate(p) if stabilization is None else cm.stabilized_rate(p, stabilization))
        self.rhs = _counted_rate(self.rate if self._bound is None else self._bound, budget)

    def _correction(self, t, q, qd) -> np.ndarray | None:
        """The stabilization's correction of ``b`` at this state (None without stabilization).

        The residuals get the state as lists: the lambdified functions unpack them into Python floats,
        at a quarter of the cost of numpy scalars (at every right-hand side of a stabilized run).
        """
        if self.stab is None:
            return None
        return self.stab.correction(*self.cm.residuals(t, q.tolist(), qd.tolist(), self._p_list))

    def motion(self, t, y) -> tuple[Motion, np.ndarray]:
        q, qd = y[: self.n], y[self.n :]
        return self.cm.solve_modes(t, q, qd, self.p, self.modes, self._correction(t, q, qd))

    def rate(self, t, y):
        """``(q', q'')`` at ``(t, y)``; a failure of the model raises as it is (:attr:`rhs` wraps it)."""
        if self.modes:
            return np.concatenate([y[self.n :], self.motion(t, y)[0].qdd])
        # No friction entry: the plain route's accelerations alone (CompiledModel.accelerations), without
        # building the force terms that only the samples need; by the rate bound in __init__ where there
        # is one, else unbound (the reference the bound rates are tested against, tests/test_singular_fused.py).
        if self._bound is not None:
            return self._bound(t, y)
        q, qd = y[: self.n], y[self.n :]
        return np.concatenate([qd, self.cm.accelerations(t, q, qd, self.p, self._correction(t, q, qd))])

    @property
    def count(self) -> int:
        """Number of switching functions: one per friction entry, and one more per Contact (lift-off, impact)."""
        return len(self.modes) + self.cm.n_contacts if self.modes else 0

    def switches(self, t, y) -> np.ndarray:
        """Event functions; a sign change (downwards) is a switch.

        Per friction entry: ``dir * s`` while sliding, ``1 - |ratio|`` while
        sticking (a constant 1 for open and frictionless contacts). Then per
        :class:`~udk_notebooks.contacts.Contact`: its normal force ``N`` while a
        unilateral contact is closed (lift-off where it reaches zero), its gap
        plus :data:`IMPACT_TOL` while open (an impact where the point comes back).
        """
        if not self.modes:
            return np.zeros(0)
        key = (t, y.tobytes())
        if self._last is not None and self._last[0] == key:  # a fixed step's end is the next one's start
            return self._last[1]
        try:
            values = self._switches(t, y)
            self._last = (key, values)
            return values
        except (ValueError, ArithmeticError, np.linalg.LinAlgError) as exc:  # the equation of motion fails here
            raise _StepFailure(t, y, exc) from exc

    def _switches(self, t, y) -> np.ndarray:
        cm, k = self.cm, len(self.modes)
        q, qd = y[: self.n], y[self.n :]
        data = np.asarray(cm.friction_data(t, q, qd, self.p), dtype=float).reshape(k, -1)
        values = np.ones(self.count)
        solved = None
        for i, mode in enumerate(self.modes):
            if mode == OPEN or cm.frictionless(i, data):
                continue
            if mode:
                values[i] = mode * data[i, 0]
            else:
                if solved is None:
                    solved = self.motion_and_normals(t, y)
                values[i] = 1.0 + HOLD_RTOL - abs(solved[1][i])  # the same margin as CompiledModel.release
        first = k - cm.n_contacts
        for j, unilateral in enumerate(cm.unilateral):
            if self.modes[first + j] == OPEN:
                gap = float(np.asarray(cm.phi(t, q, self.p), dtype=float)[cm.contact_rows[j]])
                values[k + j] = gap + IMPACT_TOL * (1.0 + float(np.abs(q).max(initial=0.0)))
            elif unilateral:
                if solved is None:
                    solved = self.motion_and_normals(t, y)
                values[k + j] = solved[2][j]
        return values

    def motion_and_normals(self, t, y):
        q, qd = y[: self.n], y[self.n :]
        return self.cm.solve_contacts(t, q, qd, self.p, self.modes, self._correction(t, q, qd))


class _Impact(Exception):
    """An open contact's point came back to its surface (the run stops: impacts are not modelled)."""

    def __init__(self, t, y, reason):
        super().__init__(reason)
        self.t, self.y, self.reason = float(t), np.array(y, dtype=float), reason


def _next_modes(cm, t, y, p, modes, fired) -> tuple[int, ...]:
    """Modes after the switches in ``fired``: a slider that stops, a sticker tested again, a contact that opens.

    Indices below ``len(modes)`` are friction entries; the others are
    contacts (``len(modes) + j``): a closed one opens (its normal force
    reached zero), an open one raises :class:`_Impact`.
    """
    k = len(modes)
    slips = [int(i) for i in fired if i < k]
    lifts = [int(i) - k for i in fired if i >= k]
    first = k - cm.n_contacts
    new = list(modes)
    for j in lifts:
        if modes[first + j] == OPEN:
            q, qd = y[: cm.n], y[cm.n :]
            J = np.asarray(cm.velocity_jacobian(t, q, qd, p), dtype=float)
            closing = float(J[cm.contact_rows[j]] @ qd)
            raise _Impact(t, y, f"impact at t = {t:.6g}: the point of contact {cm.contact_names[j]!r} came "
                                f"back to its surface at {-closing:.3g} m/s; impacts are not modelled, so the run "
                                "stops here")
        new[first + j] = OPEN
    crossed = [i for i in slips if modes[i] == 0]  # the event says the holding force reached its limit
    retest = sorted(set(slips) | ({i for i, mode in enumerate(new) if mode == 0} if lifts else set()))
    try:
        return cm.release(t, y[: cm.n], y[cm.n :], p, tuple(new), retest, crossed)
    except (ValueError, ArithmeticError, np.linalg.LinAlgError) as exc:  # part-way: a SimulationError with the samples
        raise _StepFailure(t, y, exc, hint="") from exc


def simulate(
    model,
    t_span: Sequence[float],
    q0,
    qd0,
    *,
    method: str = "rk4",
    step: float | None = None,
    t_eval=None,
    rtol: float = 1e-9,
    atol: float = 1e-12,
    stabilization=None,
    params: dict | None = None,
    project: bool = False,
    constraint_tol: float = 1e-9,
    max_switches: int = 1000,
    allow_unstable: bool = False,
    check_system: bool = False,
    on_singular: str = "stop",
) -> Trajectory:
    """Integrate a model's Udwadia-Kalaba equation of motion.

    Parameters
    ----------
    model : Model or CompiledModel
        The system; a Model is compiled (once, cached).
    t_span : (float, float)
        Start and end time.
    q0, qd0 : array_like, shape (n,)
        Initial coordinates and velocities; they must satisfy the constraints
        to ``constraint_tol`` unless ``project`` is true.
    method : str, optional
        ``"euler"`` or ``"rk4"`` (fixed step, as in Beshaw 2014), any
        :func:`scipy.integrate.solve_ivp` method (``"RK45"``, ``"DOP853"``, ...),
        or ``"dop853"``: the same pair in Hairer's Fortran code
        (:data:`COMPILED_METHODS`), stepping to each ``t_eval`` time (required),
        for models without friction contacts; the singular-configuration
        monitor checks it at every ``t_eval`` time.
    step : float, optional
        Step of the fixed-step methods (default: 1/1000 of the span).
    t_eval : array_like, optional
        Output times for the adaptive methods (default: the solver's steps).
        Friction stick/slip switching instants are added to the output in
        either case, so that quadratures of the powers see the kinks.
    rtol, atol : float, optional
        Tolerances of the adaptive methods.
    stabilization : Baumgarte or GainMatrix, optional
        Constraint stabilization added to ``b``
        (:mod:`udk_notebooks.stabilization`). For fixed-step methods the gain
        is checked against the step first (Beshaw 2014, Theorems 1-2) and
        refused unless its error dynamics decay
        (:func:`~udk_notebooks.stabilization.check_gain`). That condition is
        necessary, not sufficient (the error is coupled to the motion):
        :func:`~udk_notebooks.stabilization.system_stability` judges the whole
        system, and every run stops when it diverges (below).
    params : dict, optional
        Parameter values by name for this run.
    project : bool, optional
        Project the initial state onto the constraints instead of refusing it.
    constraint_tol : float, optional
        Largest constraint residual accepted in the initial state.
    max_switches : int, optional
        Bound on friction stick/slip switches.
    allow_unstable : bool, optional
        Run a fixed-step method with a gain whose error dynamics do not decay
        (spectral radius of ``R(tau E)`` one or more), or that fails
        ``check_system``, instead of refusing it.
    check_system : bool, optional
        Before a stabilized fixed-step run, also judge the whole system
        (:func:`~udk_notebooks.stabilization.system_stability`: every mode of
        the linearized system along a reference run, with the step lengthened
        by ``STEP_MARGIN``, about 80 ms) and refuse the run when its predicted
        growth exceeds ``GROWTH_TOL``. A measured promise, not a theorem: the
        accepted runs of the Cartesian pendulum stay below ``DRIFT_BOUND``
        without diverging (tested by hypothesis); many bounded runs are
        refused too. Off by default for its cost; divergence is detected
        during every run either way.
    on_singular : {"stop", "raise", "warn", "ignore"}, optional
        What to do at a singular configuration, where the constraint rows
        become dependent or the mass matrix loses rank on the virtual
        displacements (:mod:`udk_notebooks.singular`, tolerance
        :data:`~udk_notebooks.singular.SINGULAR_RTOL`; checked once per
        accepted step, every method). ``"stop"`` ends the run just before it
        (``status == "singular"``), ``"raise"`` raises a
        :class:`~udk_notebooks.errors.SingularConfigurationError` carrying that
        trajectory, ``"warn"`` warns once and integrates on, ``"ignore"``
        does not check. A failure of the equation of motion at a singular
        state is reported the same way.

    Returns
    -------
    Trajectory
        Sampled at ``t_eval`` (adaptive methods, when given) or at every step.
        A run that grows past :data:`DIVERGENCE_FACTOR` of its start is stopped
        there: the trajectory holds the samples before, ``status ==
        "diverged"``, ``stop_time`` and ``stop_reason`` say when and why.
        A run that reaches a singular configuration likewise stops with
        ``status == "singular"`` and its ``singularity`` (``on_singular``).
        With :class:`~udk_notebooks.contacts.Contact` s, ``normal_force``
        holds each contact's normal force in newtons and ``events`` its
        lift-offs and stick/slip switches; a run whose open contact comes back
        to its surface stops there with ``status == "impact"``.

    Raises
    ------
    ConstraintViolationError
        When the initial state violates the constraints (says by how much).
    PainleveParadoxError
        When the contacts of the initial state are in Painleve's paradox (mid-run: SimulationError).
    UnstableGainError
        When the stabilization gain is not stable for the fixed step and
        ``allow_unstable`` is false.
    SimulationError
        When the run fails part-way (the equation of motion cannot be solved,
        the scipy solver gives up, more than ``max_switches`` switches): it
        says when, and carries the state there and the samples before it.
    SingularConfigurationError
        With ``on_singular="raise"``, at a singular configuration.
    """
    cm = compiled_model(model)
    t0, tf, step, t_eval, constraint_tol = _check_arguments(
        t_span, method, step, t_eval, rtol, atol, stabilization, max_switches, constraint_tol, on_singular,
        project=project, allow_unstable=allow_unstable, check_system=check_system)
    q, qd = cm.check_state(q0, qd0, names=("q0", "qd0"))
    p = cm.parameters(params)
    if project:
        q, qd = project_initial_state(cm, q, qd, t0, params)
    check_initial(cm, t0, q, qd, p, constraint_tol)
    if method in COMPILED_METHODS and cm.n_friction:
        raise ValueError(f"method={method!r} takes models without friction contacts (their stick/slip switches are "
                         "events it does not locate); use method='DOP853'")
    if method in FIXED_STEP_METHODS:
        _check_memory(cm, (tf - t0) / step, t_eval)
    _check_stabilization_for(cm, stabilization, method, step, (t0, tf), q, qd, params, allow_unstable, check_system)
    with single_blas_thread():
        modes, y, limit = _start(cm, t0, q, qd, p)
        with np.errstate(over="ignore", invalid="ignore"):  # a diverging run is stopped below, not warned about
            monitor = _monitor(cm, p, t0, y, on_singular)
            arrays, stop = _run(cm, p, y, t0, tf, method, step, t_eval, rtol, atol, modes, stabilization,
                                max_switches, limit, monitor)
            return _report(cm, p, arrays, stop, method, stabilization, limit, on_singular)


def _check_arguments(t_span, method, step, t_eval, rtol, atol, stabilization, max_switches, constraint_tol,
                     on_singular, **flags):
    """``simulate``'s arguments checked, each refusal naming its argument: ``(t0, tf, step, t_eval, constraint_tol)``.

    ``step`` is filled in for the fixed-step methods (1/1000 of the span) and
    ``t_eval`` is returned as an array (or None).
    """
    if on_singular not in SINGULAR_ACTIONS:
        raise ValueError(f"`on_singular` must be one of {', '.join(map(repr, SINGULAR_ACTIONS))}; got {on_singular!r}")
    span = as_finite_array(t_span, "t_span", 1)
    if span.shape != (2,) or not span[1] > span[0]:
        raise ValueError(f"`t_span` must be (t0, tf) with tf > t0; got {t_span!r}")
    t0, tf = float(span[0]), float(span[1])
    methods = FIXED_STEP_METHODS + ADAPTIVE_METHODS + COMPILED_METHODS
    if method not in methods:
        raise ValueError(f"`method` must be one of {', '.join(methods)}; got {method!r}")
    for name, flag in flags.items():
        if not isinstance(flag, (bool, np.bool_)):
            raise ValueError(f"`{name}` must be True or False; got {flag!r}")
    if stabilization is not None:
        from .stabilization import _check_stabilization

        _check_stabilization(stabilization)  # every method uses its correction; adaptive ones its error matrix
    if isinstance(max_switches, (bool, np.bool_)) or not isinstance(max_switches, (int, np.integer)) or max_switches < 0:
        raise ValueError(f"`max_switches` must be a whole number >= 0 (friction stick/slip switches); got {max_switches!r}")
    constraint_tol = check_constraint_tol(constraint_tol)
    for name, value in (("rtol", rtol), ("atol", atol)):
        if not finite_float(value, f"`{name}`") > 0:
            raise ValueError(f"`{name}` must be a positive number; got {value!r}")
    if t_eval is not None:
        t_eval = as_finite_array(t_eval, "t_eval", 1)
        if t_eval.size == 0 or np.any(np.diff(t_eval) <= 0) or t_eval[0] < t0 or t_eval[-1] > tf:
            raise ValueError(f"`t_eval` must be increasing times inside `t_span` = ({t0:g}, {tf:g}); "
                             f"got {t_eval.size} time(s)" + (f" from {t_eval[0]:g} to {t_eval[-1]:g}" if t_eval.size else ""))
    if method in COMPILED_METHODS and t_eval is None:
        raise ValueError(f"method={method!r} steps to the output times: pass `t_eval` (e.g. np.linspace(t0, tf, 201))")
    if method in FIXED_STEP_METHODS:
        step = (tf - t0) / 1000 if step is None else finite_float(step, "`step`")
        if not step > 0:
            raise ValueError(f"`step` must be a positive number of seconds; got {step!r}")
    return t0, tf, step, t_eval, constraint_tol


def _check_stabilization_for(cm, stabilization, method, step, span, q, qd, params, allow_unstable,
                             check_system) -> None:
    """Refuse a fixed-step gain whose error dynamics do not decay (and, if asked, a whole system that grows).

    Beshaw (2014), Theorems 1-2 (:func:`~udk_notebooks.stabilization.check_gain`);
    ``check_system`` adds :func:`~udk_notebooks.stabilization.system_stability`.
    An explicit adaptive method with gains that make it stiff gets a warning.
    """
    if stabilization is None:
        return
    if method in FIXED_STEP_METHODS and not allow_unstable:
        from .stabilization import check_gain

        check_gain(stabilization, method, step, cm.n_holonomic, cm.n_nonholonomic)  # raises unless bounded
        if check_system:
            from .stabilization import system_stability

            report = system_stability(cm, stabilization, method, step, span, q, qd, params=params)
            if not report.accepted:
                raise UnstableGainError(f"{report}\nPass allow_unstable=True to simulate to run it anyway")
    if method in EXPLICIT_ADAPTIVE:
        _warn_if_stiff(stabilization, cm, method, span[1] - span[0])


def _start(cm, t0, q, qd, p):
    """The friction modes at the start, the state with sticking contacts at rest, and the divergence bound."""
    y = np.concatenate([q, qd])
    modes = cm.friction_modes(t0, q, qd, p)
    y = stick_velocity(cm, t0, y, p, modes)
    return modes, y, DIVERGENCE_FACTOR * (1.0 + float(np.abs(y).max(initial=0.0)))


def _monitor(cm, p, t0, y, on_singular) -> RankMonitor | None:
    """The singular-configuration monitor of the run (None when off or when there is nothing to watch)."""
    if on_singular == "ignore":
        return None
    monitor = RankMonitor(cm, p, t0, y)
    monitor.action = on_singular
    return monitor if monitor.active else None


def _run(cm, p, y, t0, tf, method, step, t_eval, rtol, atol, modes, stab, max_switches, limit, monitor):
    """Integrate: ``((times, states, modes_log), stop)``, where ``stop`` is None, a reason or a SingularConfiguration.

    A run that fails part-way raises the SimulationError that carries the
    samples before (or stops at the singular configuration behind the failure).
    """
    record = ([], [], [])  # the samples so far, kept for the error of a run that fails part-way
    try:
        if method in FIXED_STEP_METHODS:
            run = _integrate_fixed(cm, p, y, t0, tf, step, method, modes, stab, max_switches, limit, t_eval, record,
                                   monitor)
        elif method in COMPILED_METHODS:
            run = _integrate_hairer(cm, p, y, t0, t_eval, rtol, atol, stab, limit, record, monitor)
        else:
            run = _integrate_adaptive(cm, p, y, t0, tf, method, t_eval, rtol, atol, modes, stab, max_switches, limit,
                                      record, monitor)
    except _StepFailure as failure:
        found = _singular_failure(monitor, failure)
        before = [k for k, t in enumerate(record[0]) if t < failure.t]
        if found is None or not before:
            raise _failed_run(cm, p, record, failure, method, stab, limit) from failure.cause
        run = (*_ordered(*([seq[k] for k in before] for seq in record)), found)
    *arrays, stop = run
    return arrays, stop


def _report(cm, p, arrays, stop, method, stab, limit, on_singular) -> Trajectory:
    """The Trajectory of a finished run (see :func:`_sample`), its singular stop marked (or raised)."""
    found = stop if isinstance(stop, SingularConfiguration) else None
    trajectory = _sample(cm, p, *arrays, None if found else stop, method, stab, limit)
    if found is not None and trajectory.status == "ok":
        trajectory = dataclasses.replace(trajectory, status="singular", stop_time=found.time,
                                         stop_reason=found.message, singularity=found)
        if on_singular == "raise":
            raise SingularConfigurationError(found.message, time=found.time, state=found.state,
                                             trajectory=trajectory, singularity=found)
    return trajectory


def _singular_failure(monitor, failure) -> SingularConfiguration | None:
    """The singular configuration behind a failed evaluation, if the monitor finds one there."""
    if monitor is None or not monitor.active or not np.all(np.isfinite(failure.y)):
        return None
    try:
        if not (monitor.singular(failure.t, failure.y) and monitor.confirm(failure.t, failure.y)):
            return None
        found = monitor.report(failure.t, failure.y)
    except Exception:  # the matrices themselves cannot be evaluated there: report the failure as it is
        return None
    if monitor.action == "warn":  # cannot go on through a state where the equation fails
        return None
    return found


def _failed_run(cm, p, record, failure, method, stab, limit) -> SimulationError:
    """The error of a run that failed at ``failure.t``, with the trajectory of the samples before it."""
    before = [k for k, t in enumerate(record[0]) if t < failure.t]  # a sample at the failing state cannot be evaluated
    times, states, log = ([seq[k] for k in before] for seq in record)
    partial = None
    if times:
        try:
            arrays = _ordered(times, states, log)
            partial = _sample(cm, p, *arrays, (failure.t, str(failure.cause)), method, stab, limit)
            partial = dataclasses.replace(partial, status="failed")
        except Exception:  # the samples themselves cannot be evaluated: report without them
            partial = None
    kept = "none" if partial is None else f"{partial.t.size} samples up to t = {partial.t[-1]:.6g}"
    q, qd = failure.y[: cm.n], failure.y[cm.n:]
    return SimulationError(
        f"the run failed at t = {failure.t:.6g} (q = {np.array2string(q, precision=4)}, "
        f"q' = {np.array2string(qd, precision=4)}): {type(failure.cause).__name__}: {failure.cause}. "
        f"The samples before are in this error's `.trajectory` ({kept}){failure.hint}",
        time=failure.t, state=failure.y, trajectory=partial,
    )


EXPLICIT_ADAPTIVE = ("RK45", "RK23", "DOP853")
STIFF_STEPS = 1e5
"""An explicit adaptive run whose gains need more steps than this for stability alone gets a StiffnessWarning."""


def _warn_if_stiff(stabilization, cm, method: str, duration: float) -> None:
    """Warn when the gains' fastest decay rate forces an explicit method into tiny steps.

    An explicit method is stable only while ``tau |lambda|`` stays inside its stability
    region (about 3 on the negative real axis for these methods), so the error dynamics
    ``e' = E e`` alone need about ``|lambda|_max T / 3`` steps over a run of length ``T``.
    """
    import warnings

    E = stabilization.error_matrix(cm.n_holonomic, cm.n_nonholonomic)
    fastest = float(np.abs(np.linalg.eigvals(E)).max(initial=0.0)) if E.size else 0.0
    needed = fastest * duration / 3.0
    if needed > STIFF_STEPS:
        warnings.warn(
            f"the stabilization gains make this run stiff: its fastest error mode decays at {fastest:.3g} /s, "
            f"so `method` = {method!r} needs about {needed:.2g} steps over {duration:g} s for stability alone. "
            "Use an implicit method (method='Radau' or 'BDF' or 'LSODA') or smaller gains",
            StiffnessWarning, stacklevel=3)


def _integrate_fixed(cm, p, y, t0, tf, h, method, modes, stab, max_switches, limit, t_eval=None, record=None,
                     monitor=None):
    """Steps of equal length from t0 to tf (landing on every ``t_eval`` time, which alone are kept, if given).

    With a ``monitor`` (:class:`~udk_notebooks.singular.RankMonitor`) every
    accepted step is checked for a singular configuration since the previous
    one; the first singular point is then located by bisection on the step.
    """
    stepper = rk4_step if method == "rk4" else euler_step
    count = max(1, int(round((tf - t0) / h)))
    if t_eval is None:
        grid, keep = (lambda k: t0 + (tf - t0) * k / count), None  # computed on the fly: no array of every step
        total = count
    else:
        merged = _grid_with(t0 + (tf - t0) * np.arange(count + 1) / count, t_eval, 1e-12 * max(1.0, abs(tf)))
        keep = np.isin(merged, t_eval)  # every requested time is on the grid, exactly
        grid, total = merged.__getitem__, merged.size - 1
    first_kept = keep is None or bool(keep[0])
    times, states, log = record if record is not None else ([], [], [])
    if first_kept:
        times.append(t0), states.append(y), log.append(modes)
    t, switches = t0, 0
    seg = _Segment(cm, p, modes, stab)
    k = 1
    while k <= total:
        target = grid(k)
        h_now = target - t
        y_new = stepper(seg.rhs, t, y, h_now)
        fired = np.flatnonzero((seg.switches(t, y) > 0) & (seg.switches(target, y_new) <= 0)) if modes else []
        if len(fired):
            lo, hi = 0.0, h_now  # bisection on the step length: the switch lies in (lo, hi]
            while hi - lo > 1e-13 * max(1.0, abs(t)):
                mid = (lo + hi) / 2
                g = seg.switches(t + mid, stepper(seg.rhs, t, y, mid))
                if np.any(g[fired] <= 0):
                    hi = mid
                else:
                    lo = mid
            t = t + hi
            y = stepper(seg.rhs, t - hi, y, hi)
            switches += 1
            modes, y, impact = _after_switch(cm, t, y, p, modes, fired, switches, max_switches)
            times.append(t), states.append(y), log.append(modes)  # switching instants are always sampled
            if impact is not None:
                return np.array(times), np.array(states).reshape(len(times), -1), log, impact
            seg = _Segment(cm, p, modes, stab)
            if monitor is not None and monitor.active:
                monitor.rebase(t, y)
            if t >= target - 1e-13 * max(1.0, abs(t)):
                k += 1
            continue
        reason = runaway(y_new, limit)
        if reason:
            return np.array(times), np.array(states).reshape(len(times), -1), log, (target, reason)
        if monitor is not None and monitor.active:
            found = _watch_step(monitor, lambda s, t=t, y=y: stepper(seg.rhs, t, y, s), t, target, y_new)
            if found is not None:
                return np.array(times), np.array(states).reshape(len(times), -1), log, found
        t, y = target, y_new
        if keep is None or keep[k]:
            times.append(t), states.append(y), log.append(modes)
        k += 1
    return np.array(times), np.array(states).reshape(len(times), -1), log, None


def _watch_step(monitor, step, t, target, y_new) -> SingularConfiguration | None:
    """The singular configuration inside the fixed step from ``t`` to ``target`` (``step(s)`` takes it), if any.

    The monitor evaluates the model at the end of the step, which the step's
    own right-hand side never did: a model that cannot be evaluated there
    (``sqrt`` of a negative number) fails here first, and that failure is the
    run's, with its time and state (issue 22), not a bare error of the monitor.
    """
    try:
        if not monitor.check_step(target, y_new):
            return None
        t_s, y_s = monitor.locate(step, t, target - t)
        if not monitor.confirm(t_s, y_s):  # the rows turned by more than a right angle far from a rank loss
            monitor.rebase(target, y_new)
            return None
        found = monitor.report(t_s, y_s)
    except (ValueError, ArithmeticError, np.linalg.LinAlgError) as exc:
        raise _StepFailure(target, y_new, exc) from exc
    if monitor.action != "warn":
        return found
    monitor.warn(found)
    return None


def _guarded(event):
    """A solve_ivp event of the monitor whose failure is the run's failure at ``(t, y)`` (see :func:`_watch_step`)."""

    def guarded(t, y):
        try:
            return event(t, y)
        except (ValueError, ArithmeticError, np.linalg.LinAlgError) as exc:
            raise _StepFailure(t, y, exc) from exc

    guarded.terminal, guarded.direction = event.terminal, event.direction
    return guarded


def _grid_with(uniform: np.ndarray, requested: np.ndarray, gap: float) -> np.ndarray:
    """The uniform step grid with the requested times added, each kept exactly.

    A grid time within ``gap`` of a requested one gives way to it (no sliver
    of a step between them), except the start and the end, which the run must
    reach; requested times are never merged, however close together they lie
    (a step between them is merely short).
    """
    at = np.clip(np.searchsorted(requested, uniform), 1, requested.size - 1) if requested.size > 1 else np.zeros(
        uniform.size, dtype=np.intp)
    distance = np.abs(uniform - requested[at])
    if requested.size > 1:
        distance = np.minimum(distance, np.abs(uniform - requested[at - 1]))
    free = distance > gap
    free[0] = free[-1] = True
    return np.union1d(uniform[free], requested)


def _check_memory(cm, steps: float, t_eval) -> None:
    """Refuse a fixed-step run whose output would not fit in :data:`MEMORY_LIMIT`, before allocating it."""
    samples = steps + 1 if t_eval is None else len(t_eval)
    # per sample: q, q', q'' and three forces (6 n), residuals (m_h + m), energy and four powers
    per_sample = 8 * (8 * cm.n + cm.n_holonomic + cm.m + 5) + 200  # and the Python lists while stepping
    need = samples * per_sample
    if need > MEMORY_LIMIT:
        raise ValueError(
            f"`step` gives {steps:.3g} steps, whose output needs about {need / 2**30:.1f} GiB "
            f"(limit {MEMORY_LIMIT / 2**30:.0f} GiB): pass `t_eval` with the times you want kept "
            "(the steps still land on them), or take a larger `step`")


def _after_switch(cm, t, y, p, modes, fired, switches, max_switches):
    """``(modes, y, impact)`` after the switches ``fired`` at ``(t, y)``, the run's ``switches``-th.

    The new modes with sticking contacts put at rest, and ``impact`` None; or,
    when an open contact came back to its surface, the old modes and state and
    the stop ``(t, reason, "impact")`` that ends the run. More than
    ``max_switches`` switches fail the run.
    """
    if switches > max_switches:
        _too_many_switches(t, y, max_switches)
    try:
        new = _next_modes(cm, t, y, p, modes, fired)
    except _Impact as impact:
        return modes, y, (t, impact.reason, "impact")
    return new, stick_velocity(cm, t, y, p, new), None


def _too_many_switches(t, y, max_switches):
    raise _StepFailure(t, y, RuntimeError(f"more than `max_switches` = {max_switches} friction switches; the "
                                          "motion may be Zeno"), hint="")


def _integrate_adaptive(cm, p, y, t0, tf, method, t_eval, rtol, atol, modes, stab, max_switches, limit,
                        record=None, monitor=None):
    """scipy's solver, restarted at every friction switch.

    A ``monitor`` adds its terminal events (:meth:`RankMonitor.events`): one
    that stops at a singular configuration, and one whose root is either a
    crossing of a rank loss or a turn of the reference spaces, after which the
    solver restarts with a new reference.
    """
    from scipy.integrate import solve_ivp  # here: a fixed-step run (every explorer's first frame) never needs it

    t_eval = None if t_eval is None else np.asarray(t_eval, dtype=float)
    times, states, log = record if record is not None else ([], [], [])
    t, switches = t0, 0

    reached = []  # (t, y) of the steps solve_ivp accepted in this segment: kept if it fails inside the solver

    def outgrown(tt, yy):  # crosses zero, downwards, where the state outgrows the divergence limit
        # solve_ivp evaluates every event once per accepted step (and at the start): the step is recorded here,
        # since a failure raised inside the right-hand side leaves solve_ivp without returning its samples.
        reached.append((float(tt), np.array(yy, dtype=float)))
        return limit - float(np.abs(yy).max(initial=0.0)) if np.all(np.isfinite(yy)) else -1.0

    outgrown.terminal, outgrown.direction = True, -1
    budget = _Budget(t0, tf)
    while True:
        seg = _Segment(cm, p, modes, stab, budget)
        events = []
        for i in range(seg.count):
            def event(tt, yy, i=i, seg=seg):
                return seg.switches(tt, yy)[i]

            event.terminal, event.direction = True, -1
            events.append(event)
        watching = monitor is not None and monitor.active
        if watching:
            monitor.rebase(t, y)
            events.extend(_guarded(event) for event in monitor.events())
        events.append(outgrown)
        sub_eval = None if t_eval is None else t_eval[(t_eval >= t) & (t_eval <= tf)]
        reached.clear()
        try:
            sol = solve_ivp(seg.rhs, (t, tf), y, method=method, t_eval=sub_eval, rtol=rtol, atol=atol, events=events)
        except _StepFailure as failure:
            _keep_reached(reached, failure.t, modes, times, states, log)
            raise
        # solve_ivp returns t as a list when an event ends the run before any t_eval sample.
        sol_t, sol_y = np.asarray(sol.t, dtype=float), np.asarray(sol.y, dtype=float).reshape(y.size, -1)
        if sol.status == -1:
            reason = runaway(sol_y[:, -1], limit) if sol_t.size else ""
            if reason:  # the solver gave up on a state that had already run away
                times.extend(sol_t[:-1]), states.extend(sol_y.T[:-1]), log.extend([modes] * (sol_t.size - 1))
                return (*_ordered(times, states, log), (float(sol_t[-1]), reason))
            times.extend(sol_t), states.extend(sol_y.T), log.extend([modes] * sol_t.size)
            t_fail, y_fail = (float(sol_t[-1]), sol_y[:, -1]) if sol_t.size else (t, y)
            gave_up = RuntimeError(f"scipy.integrate.solve_ivp ({method}) gave up: {sol.message}")
            raise _StepFailure(t_fail, y_fail, gave_up)
        keep = sol_t.size - 1 if (sol.status == 1 and t_eval is None) else sol_t.size  # the event point is added below
        times.extend(sol_t[:keep]), states.extend(sol_y.T[:keep]), log.extend([modes] * keep)
        if sol.status != 1:
            break
        if sol.t_events[-1].size:  # the divergence event ended the run
            t_stop = float(sol.t_events[-1][0])
            reason = (f"the state grew past {DIVERGENCE_FACTOR:g} times its start (DIVERGENCE_FACTOR)"
                      if np.all(np.isfinite(sol.y_events[-1][0])) else "the state stopped being finite")
            return (*_ordered(times, states, log), (t_stop, reason))
        rank_events = [te.size > 0 for te in sol.t_events[seg.count:-1]]
        if any(rank_events):
            k = rank_events.index(True)  # 0: a measure fell below SINGULAR_RTOL; 1: a crossing (or a turn)
            t, y = float(sol.t_events[seg.count + k][0]), sol.y_events[seg.count + k][0]
            near = monitor.on_manifold(t, y)
            if (k == 0 or monitor.below(t, y)) and near:
                found = monitor.report(t, y)
                if monitor.action != "warn":
                    before = [j for j, tj in enumerate(times) if tj < t]  # the trajectory ends before it
                    return (*_ordered(*([seq[j] for j in before] for seq in (times, states, log))), found)
                monitor.warn(found)
            elif not near:  # far off its constraints: left to the divergence check from here on
                monitor.active = False
            # else the spaces turned by a right angle within one step: go on, with a new reference
            if t_eval is None:
                times.append(t), states.append(y), log.append(modes)
            continue
        fired = [i for i, te in enumerate(sol.t_events[:seg.count]) if te.size]
        t, y = float(sol.t_events[fired[0]][0]), sol.y_events[fired[0]][0]
        switches += 1
        modes, y, impact = _after_switch(cm, t, y, p, modes, fired, switches, max_switches)
        # Switching instants are always sampled: the force terms have kinks there.
        times.append(t), states.append(y), log.append(modes)
        if impact is not None:
            return (*_ordered(times, states, log), impact)
    return (*_ordered(times, states, log), None)


class _HairerRate:
    """The right-hand side handed to Hairer's Fortran DOP853: ``(q', q'')`` of the plain route, never raising.

    An exception cannot cross the Fortran code (f2py would call again with it
    pending), so the first failure is kept (``failure``) and the rate turns
    into NaN from then on: the solver then rejects its steps and stops with
    "step size too small" within about a thousand evaluations, and the run
    raises the kept failure, at the state where it happened. The budget and
    the failures are those of every other route (:func:`_counted_rate`).
    """

    def __init__(self, cm: CompiledModel, p, stabilization, budget: _Budget):
        self.failure: _StepFailure | None = None
        # Without stabilization the rate is the plain route's with the parameters bound once, and where
        # the model has a fast solver, joined to its entries (CompiledModel.plain_rate): the same numbers
        # as _Segment.rate at half the cost per call.
        rate = cm.plain_rate(p) if stabilization is None else _Segment(cm, p, (), stabilization).rate
        guarded = _counted_rate(rate, budget)

        def call(t, y):  # a closure: the solver calls it thousands of times, a method call costs more
            if self.failure is None:
                try:
                    return guarded(t, y)
                except _StepFailure as failure:
                    self.failure = failure
            return np.full(y.size, np.nan)

        self.call = call

    def __call__(self, t, y):
        return self.call(t, y)


def _hairer_solver(rate: _HairerRate, t, y, rtol, atol, limit):
    """A scipy ``ode`` running Hairer's DOP853 from ``(t, y)``; its ``grown`` list receives a runaway step."""
    from ._ode import ode  # here: most runs never need it; and not scipy.integrate (0.3 s of a cold start)

    solver = ode(rate.call).set_integrator("dop853", rtol=rtol, atol=atol, nsteps=MAX_EVALUATIONS // 12)
    solver.grown = []

    def accepted(tt, yy):  # every accepted step: stop at the first that outgrows the divergence limit
        # The sum of |y| is NaN or inf where an entry is, and at least the largest entry: at or below the
        # limit nothing can have run away (Python floats: a fifth of runaway's numpy cost).
        if sum(map(abs, yy.tolist())) <= limit:
            return 0
        reason = runaway(yy, limit)
        if reason:
            solver.grown.append((float(tt), reason))
            return -1
        return 0

    solver.set_solout(accepted)
    solver.set_initial_value(y, t)
    return solver


def _hairer_advance(solver, rate: _HairerRate, target: float) -> np.ndarray:
    """The state at ``target`` (or where a runaway step stopped the solver); a failure raises its _StepFailure.

    Call it with scipy's UserWarning silenced (:func:`_integrate_hairer`): scipy warns of a failed run, and
    the SimulationError of the failure says it instead.
    """
    y = np.array(solver.integrate(target), dtype=float)
    if rate.failure is not None:
        raise rate.failure
    if not solver.successful():
        raise _StepFailure(solver.t, y, RuntimeError(
            f"Hairer's DOP853 gave up at t = {solver.t:.6g} (return code {solver.get_return_code()}: "
            "-2 too many steps, -3 step size too small, -4 the problem is probably stiff)"))
    return y


def _integrate_hairer(cm, p, y, t0, t_eval, rtol, atol, stab, limit, record, monitor):
    """Hairer's DOP853 from sample to sample of ``t_eval`` (:data:`COMPILED_METHODS`).

    Every accepted step is tested for divergence (the rule of the other
    methods, on the solver's steps), and a ``monitor``
    (:class:`~udk_notebooks.singular.RankMonitor`) checks every sample
    interval for a singular configuration, located by bisection on fresh
    runs from the interval's start, as for the fixed-step methods.
    """
    import warnings

    with warnings.catch_warnings():  # once per run, not per sample: see _hairer_advance
        warnings.simplefilter("ignore", UserWarning)
        return _hairer_samples(cm, p, y, t0, t_eval, rtol, atol, stab, limit, record, monitor)


def _hairer_samples(cm, p, y, t0, t_eval, rtol, atol, stab, limit, record, monitor):
    """:func:`_integrate_hairer` with scipy's warnings silenced."""
    times, states, log = record
    rate = _HairerRate(cm, p, stab, _Budget(t0, float(t_eval[-1])))
    if t_eval[0] == t0:
        times.append(t0), states.append(y), log.append(())
    solver = _hairer_solver(rate, t0, y, rtol, atol, limit)
    t = t0
    for target in t_eval[t_eval > t0].tolist():
        y_new = _hairer_advance(solver, rate, target)
        if solver.grown:
            return (*_ordered(times, states, log), solver.grown[0])
        if monitor is not None and monitor.active:
            def step(s, t=t, y=y):
                return _hairer_advance(_hairer_solver(rate, t, y, rtol, atol, limit), rate, t + s)

            found = _watch_step(monitor, step, t, target, y_new)
            if found is not None:
                return (*_ordered(times, states, log), found)
        t, y = target, y_new
        times.append(t), states.append(y), log.append(())
    return (*_ordered(times, states, log), None)


def _keep_reached(reached, t_fail, modes, times, states, log) -> None:
    """Add the accepted steps of a segment that failed inside ``solve_ivp`` to the samples, in time order.

    These are the solver's own steps (not ``t_eval`` times, which it
    interpolates only once a segment ends); every one that lies after the
    samples kept so far and before the failure is kept.
    """
    last = times[-1] if times else -np.inf
    for tt, yy in sorted(reached, key=lambda item: item[0]):
        if last < tt < t_fail and np.all(np.isfinite(yy)):
            times.append(tt), states.append(yy), log.append(modes)
            last = tt


def _motions(cm, p, times, q, qd, modes_log, correction) -> dict:
    """``qdd`` and the three force terms (2005 paper, Eqs. 8-11) at every sample, shape (N, n) each.

    The samples are grouped by their friction modes and each group is solved at
    once (:func:`udk_notebooks.stacked.solve_stack`). Samples the stacked solve cannot vouch for (a
    non-finite entry, a singular ``M``, an ill-conditioned Gram matrix, a
    non-finite result, a friction contact with its own ``normal``) go through
    :meth:`CompiledModel.solve_modes` one by one, the route of the integrator,
    so every sample equals that route to rounding.
    """
    N, n, m = len(times), cm.n, cm.m
    out = {k: np.empty((N, n)) for k in ("qdd", "impressed", "ideal", "nonideal")}
    out["normal"] = np.full((N, cm.n_contacts), np.nan)
    # Blocks of samples, so that the stacked matrices (m n entries per sample for A alone) stay near
    # SAMPLE_BLOCK_ENTRIES numbers however long the run: the output itself is only O(n) per sample.
    block = max(16, SAMPLE_BLOCK_ENTRIES // (3 * (n * n + m * n) + 10 * n + 1))
    for start in range(0, N, block):
        rows = slice(start, min(start + block, N))
        _motion_block(cm, p, times[rows], q[rows], qd[rows], modes_log[rows],
                      None if correction is None else correction[rows], {k: v[rows] for k, v in out.items()})
    return out


SAMPLE_BLOCK_ENTRIES = 2**21
"""About how many numbers (16 MiB) one array of the stacked output computation may hold; longer runs go in blocks."""


def _motion_block(cm, p, times, q, qd, modes_log, correction, out) -> None:
    """:func:`_motions` for one block of samples, written into ``out`` (views of shape (N, n))."""
    N, n, m = len(times), cm.n, cm.m
    values = np.zeros((N, (0 if cm.constant_mass else n * n) + n + m * n + m + n))
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):  # such samples go alone, below
        values[:, cm.nonzero] = cm.matrices_batch(times, q, qd, p)
    if correction is not None:
        values[:, values.shape[1] - n - m : values.shape[1] - n] += correction  # b + correction
    # A sample with a non-finite entry goes alone: the one-sample route says what is wrong with it.
    finite = np.isfinite(values @ np.ones(values.shape[1]))
    values[~finite] = 0.0
    k = 0 if cm.constant_mass else n * n
    Q, A = values[:, k : k + n], values[:, k + n : k + n + m * n].reshape(N, m, n)
    b, C = values[:, k + n + m * n : k + n + m * n + m], values[:, k + n + m * n + m :]
    out["impressed"][:] = Q
    if cm.constant_mass:
        mass = constant_mass(cm, p, N)
    else:  # the test of core.cholesky_or_none, with a margin of ten that keeps the borderline samples alone
        mass = state_mass(values[:, :n * n].reshape(N, n, n), 10 * RANK_RTOL, relative_to="own")
    friction = cm.friction_batch(times, q, qd, p).transpose(1, 2, 0) if cm.n_friction else None
    own_normal = any(rows is not None for rows in cm.friction_normals)
    index = np.arange(N)
    alone = list(index[~finite])  # samples for the one-by-one route
    rows_Q, rows_A, rows_b, rows_C = Q.T, A.transpose(1, 2, 0), b.T, C.T  # the stacked solver's layout
    for modes, members in _groups(cm, modes_log, finite):
        if own_normal or mass is None:  # a per-contact normal force is solve_modes' business
            alone.extend(index[members])
            continue
        count = index[members].size
        sol = solve_stack(mass.take(members), rows_Q[:, members], rows_A[:, :, members], rows_b[:, members],
                          rows_C[:, members] if cm.has_nonideal else None,
                          None if friction is None else friction[:, :, members],
                          np.broadcast_to(np.array(modes, dtype=float)[:, None], (len(modes), count)),
                          [i for i, mode in enumerate(modes) if mode == 0], forces=True)
        ok = sol.ok & mass.ok[members]
        for key, value in (("qdd", sol.qdd), ("ideal", sol.ideal), ("nonideal", sol.nonideal)):
            out[key][members] = value.T
            ok &= np.isfinite(value.T @ np.ones(n))  # a NaN or inf anywhere in the row (or an overflowing sum)
        alone.extend(index[members][~ok])
    for j in sorted(alone):
        fix = None if correction is None else correction[j]
        if cm.n_contacts:  # the normal forces come with the motion, from the one contact solver
            motion, _, out["normal"][j] = cm.solve_contacts(times[j], q[j], qd[j], p, tuple(modes_log[j]), fix)
        else:
            motion = cm.solve_modes(times[j], q[j], qd[j], p, tuple(modes_log[j]), fix)[0]
        out["qdd"][j], out["impressed"][j] = motion.qdd, motion.impressed
        out["ideal"][j], out["nonideal"][j] = motion.ideal, motion.nonideal


def _groups(cm, modes_log, usable) -> list:
    """``(modes, members)`` for each set of friction modes among the ``usable`` samples (a bool mask).

    ``members`` is a slice when a group holds every sample (views instead of
    copies in the common case), else an index array; empty groups are left out.
    """
    if cm.n_friction:
        table = np.array(modes_log, dtype=int).reshape(len(modes_log), cm.n_friction)
        kinds, which = np.unique(table, axis=0, return_inverse=True)
        kinds = [tuple(kind.tolist()) for kind in kinds]
    else:
        kinds, which = [()], np.zeros(len(modes_log), dtype=int)
    if len(kinds) == 1 and usable.all():
        return [(kinds[0], slice(None))]
    which = which.ravel()
    groups = [(kind, np.flatnonzero((which == i) & usable)) for i, kind in enumerate(kinds)]
    return [(kind, members) for kind, members in groups if members.size]


def _entry_names(cm) -> list[str]:
    first = cm.n_friction - cm.n_contacts
    return [f"friction {i}" for i in range(first)] + list(cm.contact_names)


def _impact_name(cm, reason: str) -> str:
    return next((name for name in cm.contact_names if repr(name) in reason), "")


def _events(cm, times, modes_log) -> tuple:
    """The contact events read off the modes of consecutive samples (a switch is sampled with its new modes)."""
    names, events = _entry_names(cm), []
    if len(modes_log):  # a contact whose normal force would pull at the start opens there
        events += [ContactEvent(float(times[0]), names[i], "lift-off") for i, mode in enumerate(modes_log[0])
                   if mode == OPEN]
    for j in range(1, len(modes_log)):
        before, after = modes_log[j - 1], modes_log[j]
        for i, (old, new) in enumerate(zip(before, after)):
            if old == new:
                continue
            if new == OPEN:
                kind = "lift-off"
            elif new == 0:
                kind = "stick"
            elif old == 0:
                kind = "slip"
            else:  # (an open contact never closes again: its return is an impact, which ends the run)
                kind = "reversal"
            events.append(ContactEvent(float(times[j]), names[i], kind))
    return tuple(events)


def _ordered(times, states, log):
    t = np.array(times, dtype=float)
    y = np.array(states, dtype=float).reshape(t.size, -1)
    if np.all(t[1:] >= t[:-1]):  # the usual case: no reordering (saves a third of a millisecond per 1000 samples)
        return t, y, list(log)
    order = np.argsort(t, kind="stable")
    return t[order], y[order], [log[i] for i in order]


def _hide_open_gaps(cm, phi, vel, modes_log) -> None:
    """Zero the residual columns of contacts while they are open (in place).

    An open contact's gap row is a distance to its surface, not a violated
    constraint: it must neither show as drift nor trip the divergence check.
    """
    if not cm.n_contacts or not len(modes_log):
        return
    modes = np.array(modes_log, dtype=int).reshape(len(modes_log), cm.n_friction)
    first = cm.n_friction - cm.n_contacts
    for j, row in enumerate(cm.contact_rows):
        is_open = modes[:, first + j] == OPEN
        phi[is_open, row] = 0.0
        vel[is_open, row] = 0.0


def _sample(cm, p, times, states, modes_log, stop, method, stab, limit) -> Trajectory:
    """The full output at every sample, computed for all samples at once (see :func:`_motions`)."""
    n, N = cm.n, len(times)
    times = np.asarray(times, dtype=float)
    q, qd = states[:, :n], states[:, n:]
    phi, vel = cm.residuals_batch(times, q, qd, p)
    correction = None if stab is None else stab.correction(phi, vel)  # row j: sample j's correction of b
    _hide_open_gaps(cm, phi, vel, modes_log)
    out = _motions(cm, p, times, q, qd, modes_log, correction)
    energy = cm.energy_batch(times, q, qd, p)
    force_nc, explicit = cm.powers_batch(times, q, qd, p)
    power = {
        "nonconservative": np.einsum("ij,ij->i", force_nc, qd),
        "ideal": np.einsum("ij,ij->i", out["ideal"], qd),
        "nonideal": np.einsum("ij,ij->i", out["nonideal"], qd),
        "explicit_time": explicit,
    }
    # A residual past its bound ends the run too (it is checked here, on the samples, for free).
    residual = np.abs(np.concatenate([phi, vel], axis=1)).max(axis=1, initial=0.0) if N else np.zeros(0)
    scale = limit / DIVERGENCE_FACTOR
    over = np.flatnonzero(~(residual <= DIVERGENCE_FACTOR * scale**2))
    keep = N
    if over.size:
        keep = int(over[0])
        stop = (float(times[keep]), f"a constraint residual reached {residual[keep]:.3g}, past "
                                    f"{DIVERGENCE_FACTOR:g} times the start's scale squared (DIVERGENCE_FACTOR)")
    status, stop_time, reason = ("ok", None, "") if stop is None else (
        stop[2] if len(stop) > 2 and keep == N else "diverged", stop[0], stop[1])
    cut = slice(0, keep)
    normal = out.pop("normal")
    events = _events(cm, times[cut], modes_log[:keep])
    if status == "impact":
        events += (ContactEvent(float(stop_time), _impact_name(cm, reason), "impact"),)
    return Trajectory(
        t=np.asarray(times)[cut], q=states[cut, :n], qd=states[cut, n:], **{k: v[cut] for k, v in out.items()},
        normal_force=normal[cut], events=events, contact_names=cm.contact_names,
        position_residual=phi[cut], velocity_residual=vel[cut], energy=energy[cut],
        power={k: v[cut] for k, v in power.items()},
        modes=(np.array(modes_log, dtype=int) if cm.n_friction else np.zeros(0, dtype=int)).reshape(N, cm.n_friction)[cut],
        coordinate_names=cm.coordinate_names,
        parameters=dict(zip(cm.parameter_names, p.tolist())), method=method, stabilization=stab,
        status=status, stop_time=stop_time, stop_reason=reason,
    )
