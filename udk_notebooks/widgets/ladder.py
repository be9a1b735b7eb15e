r"""Explorer for the ladder sliding down a wall: watch N_wall fall to zero and the top leave the wall.

The ladder of :mod:`udk_notebooks.examples.ladder`: a uniform rod with its
bottom on the floor and its top against the wall, both unilateral
:class:`~udk_notebooks.Contact` s with Coulomb friction ``mu_floor`` and
``mu_wall``. The solver computes the two normal forces in newtons together
with friction, opens the wall's contact at the instant ``N_wall`` reaches zero
(an event) and goes on with the floor alone.

Sliders: the start angle ``theta0`` above the floor, the friction coefficients
``mu_floor`` and ``mu_wall``, the length ``L`` and the ``horizon``. Panels:

(a) the ladder at the animated instant with the resultant forces at its centre;
(b) the normal forces ``N_floor`` and ``N_wall`` against time (N), the stretch
    where the top is free of the wall shaded and hatched, so its start is the
    lift-off instant;
(c) the top's distance from the wall (m).

Frictionless, the top leaves the wall at ``sin theta = (2/3) sin theta0``; the
explorer prints the measured leave angle next to that closed form. Runs the
rigid model cannot answer are shown as such, never as fine: a ladder that
friction holds at rest (nothing slides; with both ends rough its normal
forces are statically indeterminate too) and Painlevé's paradox are refused in place, with the last good run kept; a
run whose top comes down on the floor or back on the wall (an impact, which is
not modelled) is drawn up to that instant, with a warning over the mechanism.
"""

from __future__ import annotations

import dataclasses
from functools import lru_cache

import numpy as np

from .._kept_code import compile_kept
from ..compiled import OPEN, CompiledModel
from ..errors import PainleveParadoxError, SimulationError
from ..examples import ladder
from ..plotting import OKABE_ITO
from ..simulation import Trajectory, simulate
from .base import parameter_table
from .system import Panel, Shade, SystemExplorer, SystemRun, time_curve

__all__ = ["LadderExplorer"]

UNITS = {"L": "m", "mu_floor": "1", "mu_wall": "1"}
FLOOR, WALL = 0, 1
FREE = Shade("top free of the wall", lambda run: run.trajectory.modes[:, WALL] == OPEN)


@lru_cache(maxsize=1)
def compiled_model() -> CompiledModel:
    """The ladder with its two contacts, compiled once per session (parameters are passed per call)."""
    return compile_kept("ladder.model", ladder.model)


def _normal(column: int):
    # an open contact pushes with nothing: draw zero where the trajectory records NaN
    return lambda run: np.nan_to_num(run.trajectory.normal_force[:, column], nan=0.0)


def _until(traj: Trajectory, stop: int, reason: str) -> Trajectory:
    """The samples ``[:stop]`` of a run, with status ``"impact"`` and the reason."""
    cut = {name: getattr(traj, name)[:stop] for name in (
        "t", "q", "qd", "qdd", "impressed", "ideal", "nonideal", "position_residual", "velocity_residual",
        "energy", "modes", "normal_force")}
    power = {name: values[:stop] for name, values in traj.power.items()}
    end = float(cut["t"][-1])
    events = tuple(e for e in traj.events if e.time <= end)
    return dataclasses.replace(traj, **cut, power=power, events=events, status="impact", stop_time=end,
                               stop_reason=reason)


def _closed_residuals(traj: Trajectory, cm: CompiledModel) -> Trajectory:
    """The run with the gap residual of an open contact set to zero (it is a free point's gap, not drift).

    ``Trajectory.position_residual`` keeps a column for each contact's gap row
    also while the contact is open, where a positive gap is the motion and not
    a constraint violation; the drift check reads the closed rows only.
    """
    position, velocity = traj.position_residual.copy(), traj.velocity_residual.copy()
    first = cm.n_friction - cm.n_contacts  # the contacts' modes follow the CoulombFriction entries'
    for j, row in enumerate(cm.contact_rows):
        open_ = traj.modes[:, first + j] == OPEN
        position[open_, row] = 0.0
        if velocity.shape[1] > row:
            velocity[open_, row] = 0.0
    return dataclasses.replace(traj, position_residual=position, velocity_residual=velocity)


def _floor_impact(traj: Trajectory, length: float) -> tuple[int, float] | None:
    """The first sample below which the top is under the floor, and the crossing time, or None.

    The crossing is located on the cubic Hermite interpolant of the top's
    height between the two samples around it (heights and rates are sampled).
    """
    height = ladder.top_height(traj.q, L=length)
    below = np.flatnonzero(height <= 0.0)
    if below.size == 0:
        return None
    k = int(below[0])
    if k == 0:
        return 0, float(traj.t[0])
    t0, t1 = traj.t[k - 1], traj.t[k]
    rate = traj.qd[:, 1] + length / 2 * np.cos(traj.q[:, 2]) * traj.qd[:, 2]
    span = t1 - t0
    h00, h10 = np.polynomial.Polynomial([1, 0, -3, 2]), np.polynomial.Polynomial([0, 1, -2, 1])
    h01, h11 = np.polynomial.Polynomial([0, 0, 3, -2]), np.polynomial.Polynomial([0, 0, -1, 1])
    cubic = height[k - 1] * h00 + span * rate[k - 1] * h10 + height[k] * h01 + span * rate[k] * h11
    roots = [r.real for r in cubic.roots() if abs(r.imag) < 1e-12 and -1e-12 <= r.real <= 1 + 1e-12]
    return k, float(t0 + span * (min(roots) if roots else 1.0))


class LadderExplorer(SystemExplorer):
    """Start angle, friction at the floor and at the wall, length and horizon of the sliding ladder.

    Parameters
    ----------
    samples : int, optional
        Output samples of the run (the animation's frames); the lift-off and
        stick/slip instants are sampled besides. Each sample costs a contact
        solve of its own (about a third of an update at 201 samples), and 101
        draw the smooth force curves of a panel a few hundred pixels wide
        with the kink at lift-off sampled exactly.
    **kwargs
        Passed to :class:`~udk_notebooks.widgets.system.SystemExplorer`.

    Examples
    --------
    >>> explorer = LadderExplorer()          # frictionless: it leaves the wall at asin(2/3 sin theta0)
    >>> round(explorer.result.data["leave_angle"], 6) == round(explorer.result.data["closed_form"], 6)
    True
    """

    updates_on_release = True  # each run locates its events: recompute when a slider is let go
    control_units = {"theta0": "rad", "mu_floor": "1", "mu_wall": "1", "L": "m", "horizon": "s"}  # (1): no unit
    drift_limit = 1e-6
    heading = ("Ladder sliding down a wall: the wall's push <i>N</i><sub>wall</sub> falls to zero and the top "
               "leaves the wall (unilateral contacts on floor and wall; without friction it leaves at "
               "sin &theta; = (2/3) sin &theta;<sub>0</sub>)")
    panels = (
        Panel("normal forces", "time t (s)", "normal force (N)", zero=True, nonnegative=True, shade=FREE, curves=(
            time_curve("$N$ floor", _normal(FLOOR), color=OKABE_ITO["blue"], ls="-"),
            time_curve("$N$ wall", _normal(WALL), color=OKABE_ITO["vermillion"], ls="--", lw=2.0),
        )),
        # in mm: the top leaves the wall by millimetres within the horizon, and tick labels in metres
        # ("0.0025") were wide enough to push the axis label off the figure
        Panel("top's distance from the wall", "time t (s)", "distance (mm)", zero=True, nonnegative=True, shade=FREE,
              curves=(
            time_curve("top to wall", lambda run: 1e3 * run.data["wall_distance"], color=OKABE_ITO["bluish_green"],
                       ls="-"),
        )),
    )

    def __init__(self, *, samples: int = 101, **kwargs):
        self.samples = int(samples)
        if self.samples < 2:
            raise ValueError(f"`samples` must be at least 2; got {samples!r}")
        table = {"theta0": (1.2, (0.2, 1.5), "start angle of the ladder above the floor, in rad")}
        table.update(parameter_table({k: ladder.PARAMETERS[k] for k in ("mu_floor", "mu_wall", "L")}, units=UNITS))
        extra = {"horizon": (0.5, (0.1, 2.0), "simulated time span, in s (the run stops earlier at an impact)")}
        kwargs.setdefault("frames", self.samples)
        super().__init__(table, extra=extra, **kwargs)

    def default_mechanism(self):
        return ladder.mechanism()

    def run(self, theta0, mu_floor, mu_wall, L, horizon) -> SystemRun:
        params = dict(mu_floor=mu_floor, mu_wall=mu_wall, L=L)
        if ladder.holds_at_rest(theta0, **params):
            # Refused before integrating: nothing moves, and with both ends rough statics cannot split the load
            why = (" With both ends rough its normal forces at rest are statically indeterminate (four contact "
                   "forces, three equations of statics), so none are drawn." if mu_wall > 0 else "")
            raise ValueError(
                f"friction holds the ladder at rest at theta0 = {theta0:.3g} rad "
                f"(2 mu_floor tan theta0 >= 1 - mu_floor mu_wall): nothing slides.{why} Lower `mu_floor` or "
                "`theta0` to let it slide")
        q0, qd0 = ladder.release_state(theta0, **params)
        times = np.linspace(0.0, horizon, self.samples)
        try:
            # rtol 1e-7: lift-off within ~5e-9 s of the 1e-11 event-driven reference and the leave angle within
            # ~1e-9 rad of asin(2/3 sin theta0) (measured; tests/test_widgets_ladder.py asks 1e-7 s and 1e-8 rad),
            # for 10-15 % fewer contact solves than rtol 1e-8; the angle is printed with five decimals
            traj = simulate(compiled_model(), (0.0, horizon), q0, qd0, method="DOP853", rtol=1e-7, atol=1e-9,
                            t_eval=times, params=params)
        except SimulationError as exc:
            if isinstance(exc.__cause__, PainleveParadoxError):
                raise exc.__cause__ from None  # the paradox's own message, in place
            raise
        traj = _closed_residuals(traj, compiled_model())
        warning = ""
        hit = _floor_impact(traj, L)
        if hit is not None:
            stop, when = hit
            reason = (f"Impact at t = {when:.4g} s: the top reaches the floor. Impacts are not modelled, so the "
                      "run is drawn up to there")
            traj, warning = _until(traj, max(stop, 2), reason), reason
        elif traj.status == "impact":
            warning = f"Impact at t = {traj.stop_time:.4g} s: {traj.stop_reason}"
        data = self._run_data(traj, theta0, mu_floor, mu_wall, L)
        return SystemRun(traj, ladder.mechanism(L=L), model=compiled_model(), warning=warning, data=data,
                         info=self._info_text(data))

    @staticmethod
    def _lift_off(traj: Trajectory):
        return next((e for e in traj.events if e.kind == "lift-off" and e.contact == "wall"), None)

    def _run_data(self, traj, theta0, mu_floor, mu_wall, length) -> dict:
        event = self._lift_off(traj)
        leave = None
        if event is not None:
            j = int(np.searchsorted(traj.t, event.time))  # the event instant is a sample of the run
            leave = float(traj.q[min(j, traj.t.size - 1), 2])
        closed = ladder.leave_angle(theta0) if mu_floor == 0 and mu_wall == 0 else None
        return {"wall_distance": ladder.wall_distance(traj.q, L=length), "leave_time": None if event is None
                else float(event.time), "leave_angle": leave, "closed_form": closed}

    @staticmethod
    def _info_text(data: dict) -> str:
        if data["leave_time"] is None:
            return "top still on the wall"
        text = f"off the wall at t = {data['leave_time']:.4f} s\ntheta = {data['leave_angle']:.5f} rad"
        if data["closed_form"] is not None:
            text += f"\nasin(2/3 sin theta0) = {data['closed_form']:.5f} rad"
        return text

    def leave_angle_shown(self) -> float | None:
        """The leave angle printed on the mechanism (rad), read back from its text; None before lift-off."""
        text = self._info.get_text()
        if "theta = " not in text:
            return None
        return float(text.split("theta = ")[1].split(" rad")[0])
