r"""``explore``: sliders, panels and an animated mechanism for any model, with no explorer class to write.

A student's own :class:`~udk_notebooks.model.Model`, a
:func:`~udk_notebooks.mechanics.model_from_bodies` system or a catalogue model
goes in; out comes a :class:`ModelExplorer` (a
:class:`~udk_notebooks.widgets.system.SystemExplorer`) with

* one slider per model parameter (range and step from its value, or from the
  ``parameters`` table, with the unit where the table gives one);
* the horizon ``t_end``, the integration ``method`` and ``step``, and
  Baumgarte stabilization (``none`` or ``Baumgarte`` with the gains
  ``gain_alpha`` and ``gain_beta``, the ``alpha`` and ``beta`` of ``phi'' + 2 alpha phi' + beta^2 phi = 0``; Baumgarte 1972,
  as stated in Beshaw 2014, Eq. 12);
* a Play button and the mechanism at the animated instant with the three
  force terms of the Udwadia-Kalaba equation ``F^N, F^L, F^C`` (Udwadia,
  Kalaba & Fan 2005, Eqs. 9-11) as arrows;
* panels chosen by name (:data:`PANELS`).

The model is compiled once; every slider change runs :func:`~udk_notebooks.simulate`
again with the new parameter values. A combination that cannot be computed
(an unstable gain, a start that cannot be put on the constraints) is reported
under the figure while the last good run stays on screen; a run that diverged
or drifted past ``drift_limit`` is drawn with a red warning over the mechanism.
"""

from __future__ import annotations

import base64
import inspect
import math
from typing import Any, Callable, Mapping, NamedTuple, Sequence

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np
import sympy as sm

from ..compiled import CompiledModel
from ..drawing import FORCE_KINDS, ForceSite, Joint, Mechanism
from ..model import Model
from ..plotting import FORCE_STYLES, OKABE_ITO
from ..simulation import ADAPTIVE_METHODS, FIXED_STEP_METHODS, _running_trapezoid, project_initial_state, simulate
from ..stabilization import Baumgarte
from .system import Curve, Panel, Shade, SystemExplorer, SystemRun, time_curve

__all__ = ["OUTCOMES", "PANELS", "ModelExplorer", "explore"]

PANELS = ("coordinates", "forces", "force power", "drift", "energy", "phase", "friction")
"""The panel names :func:`explore` understands:

``"coordinates"``
    every coordinate against time;
``"forces"``
    ``F^N_i, F^L_i, F^C_i`` of the coordinate chosen by the ``shown`` control;
``"force power"``
    ``q' . F^N``, ``q' . F^L``, ``q' . F^C``: the power of each term (the ideal
    force does no work on a scleronomic system: its curve stays on zero);
``"drift"``
    the largest position residual ``|phi|`` and velocity residual ``|(phi', psi)|`` (log scale);
``"energy"``
    ``h(t) - h(0)``, the work of the nonconservative, ideal, nonideal and
    explicit-time powers, and their difference (the power balance, zero up to
    the integration error);
``"phase"``
    ``q'_i`` against ``q_i`` for the coordinate chosen by ``shown``;
``"friction"``
    ``|F^C|`` with the stretches where a friction contact sticks shaded.
"""

OUTCOMES = ("final drift", "max drift", "max energy error", "stick time", "divergence")
"""What :meth:`ModelExplorer.sweep` maps: the constraint residual ``max |phi|`` at
the end or over the run, the largest ``|h - h(0) - work|`` (energy error), the
time some friction contact sticks, and whether the run diverged (1) or not (0)."""

DEFAULT_PANELS = ("coordinates", "forces", "drift")
METHODS = ("rk4", "euler", "RK45", "DOP853")
STABILIZATIONS = ("none", "Baumgarte")
DEFAULT_SAMPLES = 201  # output samples of an adaptive run (fixed-step runs give every step)


# -- the parameter table -----------------------------------------------------------------------------------
def auto_range(value: float) -> tuple[float, float]:
    """A slider range around a parameter's value: a tenth to three times it (``-1 .. 1`` for zero)."""
    value = float(value)
    if value == 0.0:
        return -1.0, 1.0
    lo, hi = sorted((0.1 * value, 3.0 * value))
    return lo, hi


def _row(name: str, default: float, given, units: Mapping[str, str]) -> tuple:
    """One :class:`~udk_notebooks.widgets.base.ParameterSpec` from a user's entry (or none)."""
    unit = units.get(name, "")
    description = f"model parameter {name}"
    if given is None:
        lo, hi = auto_range(default)
    elif isinstance(given, Mapping):
        unknown = set(given) - {"range", "default", "unit", "description"}
        if unknown:
            raise ValueError(f"`parameters[{name!r}]` has unknown key(s) {', '.join(sorted(unknown))}; use "
                             "range, default, unit, description")
        lo, hi = given.get("range", auto_range(given.get("default", default)))
        default = given.get("default", default)
        unit = given.get("unit", unit)
        description = given.get("description", description)
    else:
        try:
            lo, hi = given
        except (TypeError, ValueError):
            raise ValueError(f"`parameters[{name!r}]` must be a range (lo, hi) or a dict with 'range', 'default', "
                             f"'unit', 'description'; got {given!r}") from None
    try:
        lo, hi, default = float(lo), float(hi), float(default)
    except (TypeError, ValueError):
        raise ValueError(f"`parameters[{name!r}]`: the range and default must be numbers; got {given!r}") from None
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ValueError(f"`parameters[{name!r}]`: the range must be finite with lo < hi; got ({lo}, {hi})")
    default = min(max(default, lo), hi)
    if unit:
        description = f"{description}, in {unit}"
    return default, (lo, hi), description


def parameter_rows(compiled: CompiledModel, parameters: Mapping | None, units: Mapping | None) -> dict:
    """The slider table of a model: every parameter, with the user's ranges and units where given."""
    parameters = {str(k): v for k, v in (parameters or {}).items()}
    units = {str(k): str(v) for k, v in (units or {}).items()}
    names = compiled.parameter_names
    # An unknown name fails rather than being dropped: a misspelt unit (`units={"k": ...}` for `kappa`) would
    # otherwise vanish from the tooltip unnoticed. The message says what the model has and how to fix the call.
    for argument, given in (("parameters", parameters), ("units", units)):
        unknown = set(given) - set(names)
        if unknown:
            raise ValueError(
                f"`{argument}` names unknown parameter(s) {', '.join(sorted(unknown))}; the model has "
                f"{', '.join(names) or 'no parameters (numbers written into its expressions)'}: leave "
                f"{', '.join(sorted(unknown))} out of `{argument}`, or give the model a symbol for it in "
                "`Model(..., parameters={symbol: value})`")
    return {name: _row(name, value, parameters.get(name), units) for name, value in zip(names, compiled.defaults)}


# -- helpers for callables of the parameters ---------------------------------------------------------------
def _call_with(function: Callable, values: Mapping[str, float]):
    """Call ``function`` with the parameter values its signature accepts (all of them with ``**kwargs``)."""
    signature = inspect.signature(function)
    if any(p.kind is p.VAR_KEYWORD for p in signature.parameters.values()):
        return function(**values)
    return function(**{k: v for k, v in values.items() if k in signature.parameters})


def coordinate_mechanism(names: Sequence[str]) -> Mechanism:
    """A drawing for a model without one: coordinate ``q_i`` is a dot at ``(q_i, -i)``.

    The arrows at dot ``i`` are the ``i``-th entries of ``F^N, F^L, F^C``: a
    generalized force drawn along its own coordinate, which is exact in any
    coordinates (a torque for an angle, a force for a length).
    """
    joints = [Joint(name, (lambda q, t, i=i: (q[i], -float(i))), style="body") for i, name in enumerate(names)]
    sites = [ForceSite(name, (i, None)) for i, name in enumerate(names)]
    return Mechanism(joints, forces=sites, xlabel="coordinate value q_i (m or rad)", ylabel="coordinate number (-i)")


# -- panels ------------------------------------------------------------------------------------------------
def _shown(run: SystemRun) -> int:
    return run.data["shown"]


def _force_of(kind: str) -> Callable[[SystemRun], np.ndarray]:
    return lambda run: getattr(run.trajectory, kind)[:, _shown(run)]


def _power_of(kind: str) -> Callable[[SystemRun], np.ndarray]:
    return lambda run: np.einsum("ij,ij->i", run.trajectory.qd, getattr(run.trajectory, kind))


RESIDUAL_FLOOR = 1e-16
"""Residuals below this are drawn at it: a log axis cannot show zero, and a floor keeps the axis still."""


def _largest(values: np.ndarray) -> np.ndarray:
    """The largest ``|residual|`` of each sample, at least :data:`RESIDUAL_FLOOR`."""
    largest = np.abs(values).max(axis=1, initial=0.0) if values.size else np.zeros(values.shape[0])
    return np.maximum(largest, RESIDUAL_FLOOR)


def _work(run: SystemRun) -> np.ndarray:
    return sum(run.trajectory.work().values(), np.zeros_like(run.trajectory.t))


def make_panel(name: str, compiled: CompiledModel) -> Panel:
    """The :class:`~udk_notebooks.widgets.system.Panel` of one of :data:`PANELS` for this model."""
    names = compiled.coordinate_names
    if name == "coordinates":
        curves = [time_curve(f"${_tex(c)}$", (lambda run, i=i: run.trajectory.q[:, i])) for i, c in enumerate(names)]
        return Panel("coordinates", "time t (s)", "q (m or rad)", curves=curves)
    if name == "forces":
        curves = [time_curve(f"$F^{FORCE_STYLES[k]['short']}$", _force_of(k), color=FORCE_STYLES[k]["color"],
                             ls=FORCE_STYLES[k]["ls"]) for k in FORCE_KINDS]
        return Panel("force terms on the chosen coordinate", "time t (s)", "generalized force (N or N m)",
                     curves=curves, zero=True)
    if name == "force power":
        curves = [time_curve(f"$\\dot q \\cdot F^{FORCE_STYLES[k]['short']}$", _power_of(k),
                             color=FORCE_STYLES[k]["color"], ls=FORCE_STYLES[k]["ls"]) for k in FORCE_KINDS]
        return Panel("power of each force term", "time t (s)", "power (W)", curves=curves, zero=True)
    if name == "drift":
        if compiled.m == 0:
            raise ValueError("panel 'drift' needs constraints; this model has none (leave it out of `panels`)")
        curves = [time_curve(r"$\max|\varphi|$", lambda run: _largest(run.trajectory.position_residual)),
                  time_curve(r"$\max|(\dot\varphi, \psi)|$", lambda run: _largest(run.trajectory.velocity_residual))]
        if compiled.n_holonomic == 0:
            curves = curves[1:]
        return Panel("constraint drift", "time t (s)", "residual (floor 1e-16)", curves=curves, yscale="log")
    if name == "energy":
        curves = [time_curve("h - h(0)", lambda run: run.trajectory.energy - run.trajectory.energy[0]),
                  time_curve("work of all powers", _work),
                  time_curve("balance", lambda run: run.trajectory.energy_balance())]
        return Panel("energy and power balance", "time t (s)", "energy (J)", curves=curves, zero=True)
    if name == "phase":
        curves = [Curve("", lambda run: (run.trajectory.q[:, _shown(run)], run.trajectory.qd[:, _shown(run)]))]
        return Panel("phase portrait of the chosen coordinate", "q", "q'", curves=curves, time=False)
    if name == "friction":
        if compiled.n_friction == 0:
            raise ValueError("panel 'friction' needs a friction contact; this model has none (leave it out of `panels`)")
        curves = [time_curve("$|F^C|$", lambda run: np.linalg.norm(run.trajectory.nonideal, axis=1),
                             color=FORCE_STYLES["nonideal"]["color"])]
        shade = Shade("a contact sticks", lambda run: (run.trajectory.modes == 0).any(axis=1))
        return Panel("friction modes", "time t (s)", "force (N)", curves=curves, zero=True, shade=shade)
    raise ValueError(f"unknown panel {name!r}; choose from {', '.join(PANELS)}")


def _tex(name: str) -> str:
    """A coordinate name as mathtext (``theta1`` -> ``\\theta_{1}``)."""
    head = name.rstrip("0123456789")
    tail = name[len(head):]
    greek = {"alpha", "beta", "gamma", "delta", "theta", "phi", "psi", "varphi", "omega", "lambda", "rho", "sigma",
             "tau", "xi", "eta", "zeta", "mu", "nu", "kappa", "chi", "epsilon"}
    head = f"\\{head}" if head in greek else (head.replace("_", r"\_") or name)
    return f"{head}_{{{tail}}}" if tail else head


# -- the explorer ------------------------------------------------------------------------------------------
class ModelExplorer(SystemExplorer):
    """The explorer :func:`explore` builds (see there for the arguments)."""

    # Views change less readily than the catalogue's: a generic model may be chaotic (a double pendulum's
    # angles wind), and every change of a view costs a full draw instead of a blit.
    view_margin = 0.35
    view_shrink = 0.12

    def __init__(self, model, q0, qd0=None, *, parameters=None, units=None, panels=None,
                 t_end: float = 5.0, method: str = "rk4", step: float | None = None, stabilization=None,
                 mechanism=None, drift_limit: float = 1e-3, title: str = "", start_parameters=None, **kwargs: Any):
        self.compiled = _as_compiled(model)
        cm = self.compiled
        self._start = _start_function(cm, q0, qd0)
        self._names = cm.parameter_names
        table = parameter_rows(cm, parameters, units)
        if panels is None:
            panels = DEFAULT_PANELS if cm.m else DEFAULT_PANELS[:2]
        if isinstance(panels, str):
            panels = (panels,)
        panels = tuple(panels)
        if not panels:
            raise ValueError(f"`panels` must name at least one of {', '.join(PANELS)}")
        self.panels = tuple(name if isinstance(name, Panel) else make_panel(name, cm) for name in panels)
        self.panel_names = tuple(name.title if isinstance(name, Panel) else name for name in panels)
        self.drift_limit = _positive(drift_limit, "drift_limit")
        extra = _run_controls(cm, t_end, method, step, stabilization, panels)
        self._start_names = tuple(start_parameters or ())
        extra = {**dict(start_parameters or {}), **extra}
        clash = sorted(set(extra) & set(table))
        if clash:
            raise ValueError(f"model parameter(s) {', '.join(clash)} share a name with the explorer's other controls "
                             f"({', '.join(extra)}); rename the parameter symbol(s) in the model or `start_parameters`")
        self._mechanism = _mechanism_function(mechanism, cm)
        self.heading = title or f"Explore {cm.model.name or 'the model'}: " + ", ".join(cm.coordinate_names)
        self._projection = ""
        self._sweep_output = widgets.Output()
        kwargs.setdefault("frames", 101)
        super().__init__(table, extra=extra, **kwargs)
        self._add_sweep_button()

    # -- SystemExplorer hooks --------------------------------------------------------
    def default_mechanism(self) -> Mechanism:
        return self._mechanism(dict(zip(self._names, self.compiled.defaults)))

    def run(self, **values: Any) -> SystemRun:
        params = {name: float(values[name]) for name in self._names}
        q0, qd0, note = self.start(params, **{name: values[name] for name in self._start_names})
        options = self.simulate_options(values)
        trajectory = simulate(self.compiled, (0.0, float(values["t_end"])), q0, qd0, params=params, **options)
        shown = self.compiled.coordinate_names.index(values["shown"]) if "shown" in values else 0
        return SystemRun(trajectory, self._mechanism(params), data={"shown": shown}, info=note, model=self.compiled)

    # -- public --------------------------------------------------------------------
    def start(self, params: Mapping[str, float], **start_values: float) -> tuple[np.ndarray, np.ndarray, str]:
        """The initial state at these parameter values, projected onto the constraints, and a note saying by how much.

        ``start_values`` are the values of the ``start_parameters`` controls (a release angle, say).

        Returns
        -------
        q0, qd0 : ndarray, shape (n,)
        note : str
            ``""`` when the given state already satisfied the constraints (to 1e-12), else how far it moved.
        """
        q_given, qd_given = self._start({**params, **start_values})
        q, qd = self.compiled.check_state(q_given, qd_given, names=("q0", "qd0"))
        if self.compiled.m == 0:
            return q, qd, ""
        q_new, qd_new = project_initial_state(self.compiled, q, qd, 0.0, params)
        moved_q, moved_qd = float(np.abs(q_new - q).max()), float(np.abs(qd_new - qd).max())
        note = ""
        if max(moved_q, moved_qd) > 1e-12:
            note = f"start projected onto the constraints: q moved {moved_q:.2g}, q' moved {moved_qd:.2g}"
        return q_new, qd_new, note

    def simulate_options(self, values: Mapping[str, Any]) -> dict:
        """The :func:`~udk_notebooks.simulate` options of the method, step and stabilization controls."""
        method = values["method"]
        options: dict = {"method": method}
        if method in FIXED_STEP_METHODS:
            options["step"] = float(values["step"])
        else:
            options["t_eval"] = np.linspace(0.0, float(values["t_end"]), DEFAULT_SAMPLES)
        if values.get("stabilization", "none") == "Baumgarte":
            options["stabilization"] = Baumgarte(alpha=float(values["gain_alpha"]), beta=float(values["gain_beta"]))
        return options

    @property
    def parameter_values(self) -> dict[str, float]:
        """The model parameters on the sliders now, by name."""
        return {name: float(self.controls[name].value) for name in self._names}

    def sweep(self, x: str, y: str, outcome: str = "final drift", n: int = 15, *, ax=None):
        """A map of ``outcome`` over two sliders' ranges, with the run on screen marked.

        Runs :func:`udk_notebooks.sweep.sweep` over an ``n`` by ``n`` grid of the
        two named parameters (or ``gain_alpha``/``gain_beta``, the Baumgarte gains), every
        other control at its current value, with the explorer's method and step
        (adaptive methods run member by member).

        Parameters
        ----------
        x, y : str
            Two different slider names: model parameters, ``gain_alpha`` or ``gain_beta``.
        outcome : str, optional
            One of :data:`OUTCOMES`.
        n : int, optional
            Grid points per axis (2 to 60).
        ax : matplotlib Axes, optional
            Where to draw (default: a new figure).

        Returns
        -------
        SweepMap
            The grid, the outcome values and the figure. A cell without a value (NaN) has a
            status other than ``"ok"`` and a reason in ``SweepMap.notes``: ``"refused"`` where
            :func:`udk_notebooks.simulate` would refuse the run before it starts (with Euler or RK4,
            ``gain_beta = 0``: the Baumgarte error matrix has the eigenvalue 0, the amplification
            factor is 1 and the position drift is not pulled back, so :func:`~udk_notebooks.check_gain`
            refuses it), ``"diverged"``, ``"failed"``, ``"singular"``, or ``"no start"`` (the start
            cannot be put on the constraints). A run that finished but whose outcome the map cannot
            colour is ``"zero"`` (0 on a log scale: a model without position constraints has no
            drift) or ``"no outcome"`` (not a finite number).
        """
        values = self._check_sweep_arguments(x, y, outcome, n)
        xs = np.linspace(self.controls[x].min, self.controls[x].max, n)
        ys = np.linspace(self.controls[y].min, self.controls[y].max, n)
        cells = self._sweep_cells(values, x, y, xs, ys)
        found, status, why = self._sweep_outcomes(cells, values, outcome)
        return SweepMap(x, y, xs, ys, found.reshape(n, n), outcome, (float(values[x]), float(values[y])), ax=ax,
                        status=status.reshape(n, n), messages=why.reshape(n, n))

    def _sweepable(self) -> list[str]:
        """The sliders a sweep can vary: the model parameters, and the Baumgarte gains if the explorer has them."""
        return [*self._names] + (["gain_alpha", "gain_beta"] if "gain_alpha" in self.controls else [])

    def _check_sweep_arguments(self, x: str, y: str, outcome: str, n: int) -> dict[str, Any]:
        """The current control values, once :meth:`sweep`'s arguments pass their checks (each refusal names it)."""
        sweepable = self._sweepable()
        for argument, name in (("x", x), ("y", y)):
            if name not in sweepable:
                raise ValueError(f"`{argument}` must be one of {', '.join(sweepable)}; got {name!r}")
        if x == y:
            raise ValueError(f"`x` and `y` must be two different sliders; both are {x!r}")
        if outcome not in OUTCOMES:
            raise ValueError(f"`outcome` must be one of {', '.join(map(repr, OUTCOMES))}; got {outcome!r}")
        if outcome == "max energy error":
            _check_energy_outcome(self.compiled)
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 2 <= n <= 60:
            raise ValueError(f"`n` must be a whole number from 2 to 60; got {n!r}")
        values = self.values
        if values.get("stabilization", "none") != "Baumgarte" and {x, y} & {"gain_alpha", "gain_beta"}:
            raise ValueError("sweeping `gain_alpha` or `gain_beta` needs stabilization = 'Baumgarte' on the explorer")
        return values

    def _sweep_cells(self, values: Mapping[str, Any], x: str, y: str, xs: np.ndarray,
                     ys: np.ndarray) -> list[_SweepCell]:
        """One member per cell of the map, ``y`` slowest, every other control at ``values``.

        A start that cannot be put on the constraints is NaN, with the reason in
        ``why``: that cell becomes "no start" instead of failing the whole map.
        """
        cells = []
        for yv in ys:
            for xv in xs:
                setting = {**values, x: float(xv), y: float(yv)}
                params = {name: float(setting[name]) for name in self._names}
                gain = self.simulate_options(setting).get("stabilization")
                try:
                    q0, qd0, _ = self.start(params, **{name: setting[name] for name in self._start_names})
                except Exception as exc:  # any failure of the user's start function is this cell's reason
                    nowhere = np.full(self.compiled.n, np.nan)
                    cells.append(_SweepCell(params, nowhere, nowhere, gain, f"{type(exc).__name__}: {exc}"))
                else:
                    cells.append(_SweepCell(params, q0, qd0, gain, ""))
        return cells

    def _sweep_outcomes(self, cells: list[_SweepCell], values: Mapping[str, Any],
                        outcome: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The cells with a start run as one :func:`udk_notebooks.sweep.sweep` with the explorer's method and step.

        Returns ``(outcome value, status, message)`` per cell, shape (cells,) each; a cell without a start
        keeps NaN, "no start" and its reason.
        """
        from ..sweep import sweep as run_sweep

        found = np.full(len(cells), np.nan)
        status = np.array(["no start"] * len(cells), dtype=object)
        why = np.array([cell.why for cell in cells], dtype=object)
        good = [i for i, cell in enumerate(cells) if np.isfinite(cell.q0).all()]
        if not good:
            return found, status, why
        options = self.simulate_options(values)
        options.pop("stabilization", None)  # one per member, from the cells
        if options["method"] not in FIXED_STEP_METHODS:
            options.pop("t_eval")  # adaptive members keep their own steps
        members = [cells[i] for i in good]
        params, gains = [cell.params for cell in members], [cell.gain for cell in members]
        result = run_sweep(self.compiled, (0.0, float(values["t_end"])), np.array([cell.q0 for cell in members]),
                           np.array([cell.qd0 for cell in members]), params=params, stabilization=gains,
                           progress=False, **options)
        found[good] = _outcome(self.compiled, result, outcome, params, gains)
        status[good] = result.status
        for k, i in enumerate(good):
            why[i] = result.message[k]  # read one by one: a refused gain's message is written when first read
        return found, status, why

    # -- the sweep button ---------------------------------------------------------
    def _add_sweep_button(self) -> None:
        sweepable = self._sweepable()
        if len(sweepable) < 2:
            return
        self._sweep_x = widgets.Dropdown(options=sweepable, value=sweepable[0], description="x",
                                         layout=widgets.Layout(width="160px"))
        self._sweep_y = widgets.Dropdown(options=sweepable, value=sweepable[1], description="y",
                                         layout=widgets.Layout(width="160px"))
        self._sweep_outcome = widgets.Dropdown(options=list(OUTCOMES), value="final drift", description="outcome",
                                               layout=widgets.Layout(width="240px"))
        self.sweep_button = widgets.Button(description="sweep x, y", tooltip="map the outcome over the two sliders")
        self.sweep_button.on_click(self._on_sweep)
        row = widgets.HBox([self._sweep_x, self._sweep_y, self._sweep_outcome, self.sweep_button])
        self.widget.children = (*self.widget.children, row, self._sweep_output)

    def _on_sweep(self, _button=None) -> None:
        """Draw the map of the chosen sliders under the explorer (a failure is shown there, never raised)."""
        try:
            found = self.sweep(self._sweep_x.value, self._sweep_y.value, self._sweep_outcome.value, n=12)
        except Exception as exc:  # a callback must never raise
            self._sweep_output.outputs = ({"output_type": "stream", "name": "stdout",
                                           "text": f"Cannot sweep: {type(exc).__name__}: {exc}\n"},)
            return
        self.last_sweep = found
        # why the cells without a value have none, under the map
        notes = ({"output_type": "stream", "name": "stdout", "text": "".join(f"{note}\n" for note in found.notes)},
                 ) if found.notes else ()
        # Set as data, not printed into the Output: that works with and without a kernel's output hooks.
        self._sweep_output.outputs = ({
            "output_type": "display_data",
            "data": {"image/png": base64.b64encode(found._repr_png_()).decode("ascii"),
                     "text/plain": f"<{found.outcome} over {found.x} and {found.y}>"},
            "metadata": {},
        },) + notes


class SweepMap:
    """The map :meth:`ModelExplorer.sweep` draws.

    Attributes
    ----------
    x, y : str
        The two swept sliders.
    xs, ys : ndarray, shape (n,)
    values : ndarray, shape (n, n)
        ``values[j, i]`` at ``(xs[i], ys[j])``; NaN where a run was refused or failed.
    status : ndarray of str, shape (n, n)
        ``"ok"``, or why a cell has no value (or no colour): ``"refused"``, ``"diverged"``, ``"failed"``,
        ``"singular"`` (as :attr:`udk_notebooks.sweep.SweepResult.status`), ``"no start"``, ``"zero"``
        (an outcome of 0 on a log scale) or ``"no outcome"`` (the run finished, its outcome is not a
        finite number). Each has its marker (:data:`NO_VALUE_MARKERS`).
    notes : list of str
        One line per status other than ``"ok"``: how many cells, where the first is, and its message
        (a refused gain says why, e.g. ``gain_beta = 0`` does not pull the position drift back).
    outcome : str
    current : (float, float)
        The sliders' values when the map was made (marked on it).
    figure : matplotlib Figure
    """

    def __init__(self, x, y, xs, ys, values, outcome, current, ax=None, status=None, messages=None):
        self.x, self.y, self.xs, self.ys, self.values = x, y, xs, ys, values
        self.outcome, self.current = outcome, current
        status = np.full(values.shape, "ok", dtype=object) if status is None else status
        messages = np.full(values.shape, "", dtype=object) if messages is None else messages
        log = outcome in ("final drift", "max drift", "max energy error")
        self.status, messages = _undrawable_outcomes(values, status, messages, outcome, log)
        self.notes = _sweep_notes(x, y, xs, ys, self.status, messages)
        self.figure = self._draw(ax, log)

    def _draw(self, ax, log: bool):
        """The map on ``ax`` (a new figure when None): the outcome in colour, the run on screen as a star,
        a marker on each grey cell saying why it has no value. Returns the figure."""
        if ax is None:
            with plt.ioff():
                figure, ax = plt.subplots(figsize=(5.0, 4.0), layout="constrained")
            plt.close(figure)
        shown = np.log10(np.where(self.values > 0, self.values, np.nan)) if log else self.values
        mesh = ax.pcolormesh(self.xs, self.ys, np.ma.masked_invalid(shown), shading="nearest", cmap="viridis")
        ax.get_figure().colorbar(mesh, ax=ax, label=f"log10 {self.outcome}" if log else self.outcome)
        ax.plot(*self.current, marker="*", ms=14, color=OKABE_ITO["vermillion"], markeredgecolor="white",
                label="the run on screen", ls="none")
        X, Y = np.meshgrid(self.xs, self.ys)
        for name, marker in NO_VALUE_MARKERS.items():  # a grey cell says why it has no value
            where = self.status == name
            if where.any():
                ax.plot(X[where], Y[where], ls="none", marker=marker, color="black", label=f"{name} ({marker})")
        ax.legend(fontsize=8, loc="upper right")
        ax.set(xlabel=self.x, ylabel=self.y,
               title=f"{self.outcome} over {self.x} and {self.y} (grey: no value; markers: why)")
        ax.set_facecolor("0.8")
        return ax.get_figure()

    def _repr_png_(self):
        import io

        buffer = io.BytesIO()
        self.figure.savefig(buffer, format="png")
        return buffer.getvalue()


NO_VALUE_MARKERS = {"refused": "x", "diverged": "+", "failed": "v", "singular": "d", "no start": "s", "zero": "o",
                    "no outcome": "p"}
"""Marker of a sweep map's cell without a value, by status (:attr:`SweepMap.status`)."""


def _undrawable_outcomes(values: np.ndarray, status: np.ndarray, messages: np.ndarray, outcome: str,
                         log: bool) -> tuple[np.ndarray, np.ndarray]:
    """``status`` and ``messages`` with a reason for each "ok" run whose outcome the map cannot colour.

    Without it such a cell was grey like a refused run but had no marker and no
    note. ``"zero"``: the outcome is 0 on a log scale (a model without position
    constraints has no drift at all); ``"no outcome"``: the run finished but its
    outcome is not a number the map can show (NaN, infinite, or negative on a
    log scale). Copies as object arrays (a status longer than the given ones fits);
    the arguments are left as they are.
    """
    status, messages = np.array(status, dtype=object), np.array(messages, dtype=object)
    ok = status == "ok"
    with np.errstate(invalid="ignore"):
        shown = np.isfinite(values) & (values > 0 if log else True)
    zero = ok & (values == 0) & log
    status[zero] = "zero"
    messages[zero] = f"the {outcome} is 0, which the log10 colour scale cannot show"
    scale = "finite, positive numbers (log10 scale)" if log else "finite numbers"
    for j, i in zip(*np.nonzero(ok & ~shown & ~zero)):
        status[j, i] = "no outcome"
        messages[j, i] = f"the run finished but its {outcome} is {values[j, i]}; the map shows only {scale}"
    return status, messages


class _SweepCell(NamedTuple):
    """One cell of a sweep map as :meth:`ModelExplorer.sweep` runs it: q0 and qd0 are NaN when it has no start."""

    params: dict
    q0: np.ndarray
    qd0: np.ndarray
    gain: Baumgarte | None
    why: str


def _sweep_notes(x: str, y: str, xs, ys, status: np.ndarray, messages: np.ndarray) -> list[str]:
    """One line per status other than "ok": the count, the first such cell and its message."""
    notes = []
    for name in dict.fromkeys(status.ravel()):
        if name == "ok":
            continue
        j, i = (int(k[0]) for k in np.nonzero(status == name))
        message = messages[j, i] or "no message"
        notes.append(f"{int(np.count_nonzero(status == name))} of {status.size} runs {name}, the first at "
                     f"{x} = {xs[i]:.4g}, {y} = {ys[j]:.4g}: {message}")
    return notes


def _outcome(cm: CompiledModel, result, outcome: str, members, gains) -> np.ndarray:
    """One number per sweep member (NaN where it was refused or failed)."""
    ok = result.status == "ok"
    if outcome == "final drift":
        return result.final_drift
    if outcome == "max drift":
        return result.max_drift
    if outcome == "divergence":
        return np.where(result.status == "diverged", 1.0, np.where(ok, 0.0, np.nan))
    out = np.full(len(members), np.nan)
    for i, params in enumerate(members):
        if not ok[i]:
            continue
        if outcome == "stick time":
            modes = result.modes[i] if result.modes is not None else None
            times = result.mode_times[i] if result.mode_times is not None else result.t
            if modes is None or modes.size == 0:
                out[i] = 0.0
                continue
            sticking = (modes == 0).any(axis=1)[:-1]
            out[i] = float(np.sum(np.diff(times)[sticking]))
        else:
            out[i] = _energy_error(cm, result.t, result.q[i], result.qd[i], cm.parameters(params))
    return out


def _energy_error(cm: CompiledModel, t, q, qd, p) -> float:
    """``max |h - h(0) - W|`` along one run, ``W`` the work of the nonconservative and explicit-time powers.

    The power theorem (``dh/dt`` is the sum of the powers, see
    :attr:`~udk_notebooks.simulation.Trajectory.power`) with the work by the
    trapezoidal rule on the run's samples. The constraint forces' powers are
    not in a sweep's output, so :func:`_check_energy_outcome` refuses models
    where they can be nonzero.
    """
    rows = np.broadcast_to(p, (t.size, p.size))
    h = cm.energy_batch(t, q, qd, rows)
    force, explicit = cm.powers_batch(t, q, qd, rows)
    power = np.einsum("ij,ij->i", qd, force) + explicit
    return float(np.max(np.abs(h - h[0] - _running_trapezoid(power, t))))


def _check_energy_outcome(cm: CompiledModel) -> None:
    """Refuse the energy error where a sweep cannot account for the constraint forces' work."""
    if cm.has_nonideal or cm.n_friction:
        raise ValueError("`outcome` 'max energy error' needs a model without nonideal forces or friction (their "
                         "work is not in a sweep's output); map 'final drift' or 'stick time' instead")
    t_sym = cm._symbolic["args"][0]
    if any(sm.sympify(e).has(t_sym) for e in cm._symbolic["velocity"]):
        raise ValueError("`outcome` 'max energy error' needs time-independent constraints (a moving constraint "
                         "does work that is not in a sweep's output); map 'final drift' instead")


# -- argument checks -------------------------------------------------------------------------------------------
def _as_compiled(model) -> CompiledModel:
    if isinstance(model, Model):
        return model.compile()
    if isinstance(model, CompiledModel):
        return model
    raise TypeError(f"`model` must be a udk_notebooks Model or CompiledModel (e.g. from model_from_bodies); "
                    f"got {type(model).__name__}")


def _positive(value, name: str) -> float:
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"`{name}` must be a positive number; got {value!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"`{name}` must be a positive number; got {value!r}")
    return value


def _start_function(cm: CompiledModel, q0, qd0) -> Callable[[Mapping[str, float]], tuple]:
    """``start(params) -> (q0, qd0)`` from arrays, a function of the parameters for each, or one for both."""
    if callable(q0) and qd0 is None:
        def start(params):
            state = _call_with(q0, params)
            try:
                q, qd = state
            except (TypeError, ValueError):
                raise ValueError("`q0` called with the parameters must return (q0, qd0) when `qd0` is not given; "
                                 f"got {state!r}") from None
            return q, qd
        return start
    if qd0 is None:
        raise ValueError("`qd0` is missing: pass the initial velocities, or make `q0` a function of the parameters "
                         "that returns (q0, qd0)")
    if not callable(q0):
        cm.check_state(q0, None if callable(qd0) else qd0, names=("q0", "qd0"))

    def start(params):
        return (_call_with(q0, params) if callable(q0) else q0), (_call_with(qd0, params) if callable(qd0) else qd0)
    return start


def _mechanism_function(mechanism, cm: CompiledModel) -> Callable[[Mapping[str, float]], Mechanism]:
    if mechanism is None:
        fixed = coordinate_mechanism(cm.coordinate_names)
        return lambda params: fixed
    if isinstance(mechanism, Mechanism):
        _check_sites(mechanism, cm)
        return lambda params: mechanism
    if not callable(mechanism):
        raise TypeError(f"`mechanism` must be a Mechanism, a function of the parameters returning one, or a "
                        f"BodySketch (udk_notebooks.mechanics.mechanism_from_bodies); got {type(mechanism).__name__}")
    names = getattr(mechanism, "coordinate_names", None)
    if names is not None and tuple(names) != tuple(cm.coordinate_names):
        raise ValueError(f"`mechanism` draws coordinates {', '.join(names)} but the model's are "
                         f"{', '.join(cm.coordinate_names)}: build both from the same coordinates, in one order")
    own = getattr(mechanism, "parameter_names", None)

    def make(params):
        if own is not None:  # a BodySketch: only the parameters its positions use
            drawing = mechanism(**{k: v for k, v in params.items() if k in own})
        else:
            drawing = _call_with(mechanism, params)
        if not isinstance(drawing, Mechanism):
            raise TypeError(f"`mechanism` must return a Mechanism; got {type(drawing).__name__}")
        return drawing

    _check_sites(make(dict(zip(cm.parameter_names, cm.defaults))), cm)
    return make


def _check_sites(mechanism: Mechanism, cm: CompiledModel) -> None:
    entries = [i for site in mechanism.forces for i in site.components if i is not None]
    if entries and max(entries) >= cm.n:
        raise ValueError(f"`mechanism` draws force entry {max(entries)} but the model has only {cm.n} coordinates: "
                         "is it the drawing of this model?")


def _run_controls(cm: CompiledModel, t_end, method, step, stabilization, panels) -> dict:
    """The extra controls: horizon, method, step, stabilization and gains, and the coordinate shown."""
    t_end = _positive(t_end, "t_end")
    if method not in FIXED_STEP_METHODS + ADAPTIVE_METHODS:
        raise ValueError(f"`method` must be one of {', '.join(FIXED_STEP_METHODS + ADAPTIVE_METHODS)}; got {method!r}")
    methods = METHODS if method in METHODS else (*METHODS, method)
    step = t_end / 250 if step is None else _positive(step, "step")
    controls = {
        "t_end": (t_end, (t_end / 10, 3 * t_end), "simulated time span, in s"),
        "method": (method, methods, "integrator: fixed-step rk4 or euler, or an adaptive scipy method"),
        "step": (step, (step / 10, 5 * step), "step of the fixed-step methods, in s"),
    }
    if cm.m:
        if stabilization is None:
            gains = (0.0, 0.0)
            choice = "none"
        elif isinstance(stabilization, Baumgarte):
            gains = (stabilization.alpha, stabilization.beta)
            choice = "Baumgarte"
        else:
            raise ValueError(f"`stabilization` must be None or a Baumgarte; got {stabilization!r}")
        controls["stabilization"] = (choice, STABILIZATIONS, "Baumgarte stabilization of the constraint drift")
        top = max(20.0, 2 * max(gains))
        controls["gain_alpha"] = (gains[0], (0.0, top), "Baumgarte damping gain alpha, in 1/s")
        controls["gain_beta"] = (gains[1], (0.0, top), "Baumgarte stiffness gain beta, in 1/s")
    if cm.n > 1 and {"forces", "phase"} & {name for name in panels if isinstance(name, str)}:
        controls["shown"] = (cm.coordinate_names[0], cm.coordinate_names,
                             "the coordinate of the force and phase panels")
    return controls


def explore(
    model,
    q0,
    qd0=None,
    *,
    parameters: Mapping | None = None,
    units: Mapping[str, str] | None = None,
    panels: Sequence[str] | None = None,
    t_end: float = 5.0,
    method: str = "rk4",
    step: float | None = None,
    stabilization: Baumgarte | None = None,
    mechanism=None,
    drift_limit: float = 1e-3,
    title: str = "",
    start_parameters: Mapping | None = None,
    **options: Any,
) -> ModelExplorer:
    """Sliders, panels, a Play button and the mechanism with its forces, for any model.

    Parameters
    ----------
    model : Model or CompiledModel
        Any model: written by hand, from :func:`~udk_notebooks.mechanics.model_from_bodies`
        or ``model_from_system``, or from the catalogue (:mod:`udk_notebooks.examples`).
        It is compiled once; each slider change re-runs it with new parameter values.
    q0, qd0 : array_like, shape (n,), or callable
        The initial state. Either may be a function of the parameters by name
        (it receives those its signature names, or all with ``**kwargs``); a
        single function ``q0(**params) -> (q0, qd0)`` with ``qd0`` left out gives
        both. The state is projected onto the constraints
        (:func:`~udk_notebooks.project_initial_state`) and the mechanism panel
        says by how much it moved.
    parameters : mapping of str to (lo, hi) or dict, optional
        Slider ranges by parameter name, or dicts with ``range``, ``default``,
        ``unit``, ``description``. Parameters left out get a tenth to three
        times their value (``-1 .. 1`` for zero).
    units : mapping of str to str, optional
        SI unit per parameter, shown in the slider's tooltip (models carry no units).
    panels : sequence of str or Panel, optional
        Names from :data:`PANELS` (``"drift"`` needs constraints and ``"friction"`` a friction contact),
        or :class:`~udk_notebooks.widgets.system.Panel` objects of your own.
        Default: ``("coordinates", "forces", "drift")``, without ``"drift"`` for a model with no constraints.
    t_end : float, optional
        Initial horizon in seconds (a slider: a tenth to three times it).
    method : str, optional
        ``"rk4"``, ``"euler"``, ``"RK45"``, ``"DOP853"`` (a choice on screen).
    step : float, optional
        Fixed step in seconds (a slider; default ``t_end / 250``).
    stabilization : Baumgarte, optional
        Initial Baumgarte gains (the choice starts on "Baumgarte" when given).
    mechanism : Mechanism, BodySketch or callable, optional
        How the system looks: a :class:`~udk_notebooks.drawing.Mechanism`, a
        function of the parameters returning one (``examples.<system>.mechanism``),
        or :func:`~udk_notebooks.mechanics.mechanism_from_bodies`. Default: each
        coordinate a dot on its own line, with its generalized forces as arrows
        along it (:func:`coordinate_mechanism`).
    drift_limit : float, optional
        Largest constraint residual of a run drawn without a warning.
    title : str, optional
    start_parameters : mapping of str to (default, (lo, hi), description), optional
        Further sliders that only the start reads (a release angle, a launch speed): their values are
        passed to ``q0`` / ``qd0`` by name, with the model parameters.
    **options
        ``frames``, ``continuous_update`` (see :class:`~udk_notebooks.widgets.base.Explorer`).

    Returns
    -------
    ModelExplorer
        Displays itself in a notebook; ``set(name=value)`` moves a slider from
        Python, ``sweep(x, y, outcome)`` maps an outcome over two sliders,
        ``animation()`` gives a kernel-free animation (``to_jshtml``, ``save_gif``).

    Examples
    --------
    >>> import sympy as sm, udk_notebooks as udk
    >>> from sympy.physics.mechanics import dynamicsymbols
    >>> x, y = dynamicsymbols("x y")
    >>> m, g, l = sm.symbols("m g l", positive=True)
    >>> pendulum = udk.Model([x, y], kinetic_energy=m * (x.diff()**2 + y.diff()**2) / 2,
    ...                      potential_energy=m * g * y, holonomic=[x**2 + y**2 - l**2],
    ...                      parameters={m: 1.0, g: 9.81, l: 1.0})
    >>> explorer = udk.explore(pendulum, lambda l: ([l, 0.0], [0.0, 0.0]), panels=("coordinates", "drift"))
    """
    return ModelExplorer(model, q0, qd0, parameters=parameters, units=units, panels=panels, t_end=t_end,
                         method=method, step=step, stabilization=stabilization, mechanism=mechanism,
                         drift_limit=drift_limit, title=title, start_parameters=start_parameters, **options)
