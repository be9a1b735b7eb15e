r"""Explorer for the block on a rough floor carrying a pendulum: stick and slip under a swinging load.

The system of :mod:`udk_notebooks.examples.friction_cart_pendulum` in its
Cartesian body coordinates ``q = (x_1, y_1, x_2, y_2)``: the floor ``y_1 = 0``
and the rod are holonomic constraints, and the floor is rough,
``CoulombFriction(x_1', mu, mu_s, normal=y_1)``, so its normal force ``N`` is
the floor's own reaction, which the swinging bob makes rise and fall (lecture
slides, Ch. 9, Coulomb dry friction; 2005 paper, Eqs. 8-11).

Sliders: the masses ``m1`` (block) and ``m2`` (bob), the rod length ``l``,
gravity ``g``, the kinetic and static coefficients ``mu`` and ``mu_s``, the
release ``angle`` of the rod from the downward vertical, the block's initial
``speed`` and the ``horizon``. Panels:

(a) floor, block, rod and bob at the animated instant with the three forces of
    Udwadia, Kalaba & Fan 2005: impressed ``F^N`` (the weights), ideal ``F^L``
    (floor and rod reactions) and nonideal ``F^C`` (kinetic friction while
    sliding, the static holding force while sticking);
(b) the block's velocity ``x_1'``; stick phases (the run's friction ``modes``)
    shaded and hatched;
(c) the floor's normal force ``N`` against the weight ``(m_1 + m_2) g``;
(d) the friction force ``|F|`` against the static limit ``mu_s N`` and the
    kinetic value ``mu N``: the block breaks loose where ``|F|`` reaches
    ``mu_s N``, and slides with ``|F| = mu N``.

``N`` and ``F`` are read off the solver's constraint force
(:func:`~udk_notebooks.examples.friction_cart_pendulum.floor_forces`).
Coulomb's law needs ``mu_s >= mu``: with ``mu_s < mu`` a block that static
friction lets go would be stopped at once by kinetic friction, so the
explorer refuses such a pair in place, with the solver's advice.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .._kept_code import compile_kept
from ..compiled import CompiledModel
from ..examples import friction_cart_pendulum
from ..plotting import OKABE_ITO
from ..simulation import simulate
from .base import parameter_table
from .system import Panel, Shade, SystemExplorer, SystemRun, shaded_spans, time_curve

__all__ = ["FrictionCartPendulumExplorer"]

UNITS = {"m1": "kg", "m2": "kg", "l": "m", "g": "m/s^2", "mu": "1", "mu_s": "1"}
STICKS = Shade("block sticks", lambda run: run.trajectory.modes[:, 0] == 0)


@lru_cache(maxsize=1)
def compiled_model() -> CompiledModel:
    """The Cartesian block-and-pendulum model, compiled once per session (parameters are passed per call)."""
    return compile_kept("friction_cart_pendulum.model", friction_cart_pendulum.model)


def _normal(run: SystemRun) -> np.ndarray:
    return run.data["normal"]


def _friction(run: SystemRun) -> np.ndarray:
    return np.abs(run.data["friction"])


def _coefficient(name: str):
    return lambda run: run.trajectory.parameters[name] * run.data["normal"]


def _weight(run: SystemRun) -> np.ndarray:
    p = run.trajectory.parameters
    return np.full(run.trajectory.t.size, (p["m1"] + p["m2"]) * p["g"])


class FrictionCartPendulumExplorer(SystemExplorer):
    """Masses, rod, friction coefficients and launch of the block with a pendulum on a rough floor.

    Parameters
    ----------
    samples : int, optional
        Output samples of the run (the animation's frames); the switching
        instants are sampled besides.
    **kwargs
        Passed to :class:`~udk_notebooks.widgets.system.SystemExplorer`.

    Examples
    --------
    >>> explorer = FrictionCartPendulumExplorer().set(mu_s=0.6)  # static friction holds the block all along
    >>> bool((explorer.result.trajectory.modes[:, 0] == 0).all())
    True
    """

    updates_on_release = True  # a run with events at every stop and release: recompute when a slider is let go
    heading = ("Block and pendulum on a rough floor: Coulomb friction with the floor's normal force <i>N</i>, "
               "which swings, so the block sticks and slips (slides, Ch. 9)")
    panels = (
        Panel("block velocity", "time t (s)", r"$\dot x_1$ (m/s)", zero=True, shade=STICKS, curves=(
            time_curve(r"block $\dot x_1$", lambda run: run.trajectory.qd[:, 0], color=OKABE_ITO["blue"], ls="-"),
        )),
        Panel("floor's normal force", "time t (s)", "force (N)", nonnegative=True, shade=STICKS, curves=(
            time_curve("$N$ (floor)", _normal, color=OKABE_ITO["vermillion"], ls="-"),
            time_curve("weight $(m_1 + m_2)g$", _weight, color="0.35", ls=":", instant=False),
        )),
        Panel("friction and its limits", "time t (s)", "force (N)", zero=True, nonnegative=True, shade=STICKS, curves=(
            time_curve("friction $|F|$", _friction, color=OKABE_ITO["bluish_green"], ls="-", lw=2.0),
            time_curve(r"static limit $\mu_s N$", _coefficient("mu_s"), color=OKABE_ITO["reddish_purple"], ls="--",
                       instant=False),
            time_curve(r"kinetic $\mu N$", _coefficient("mu"), color=OKABE_ITO["orange"], ls=":", instant=False),
        )),
    )

    def __init__(self, *, samples: int = 201, **kwargs):
        self.samples = int(samples)
        if self.samples < 2:
            raise ValueError(f"`samples` must be at least 2; got {samples!r}")
        table = parameter_table(friction_cart_pendulum.PARAMETERS, units=UNITS)
        table["angle"] = (1.2, (-3.0, 3.0), "release angle of the rod from the downward vertical, in rad")
        table["speed"] = (0.0, (-3.0, 3.0), "initial velocity x1' of the block along the floor, in m/s")
        extra = {"horizon": (4.0, (1.0, 10.0), "simulated time span, in s")}
        kwargs.setdefault("frames", self.samples)
        super().__init__(table, extra=extra, **kwargs)

    def default_mechanism(self):
        return friction_cart_pendulum.mechanism()

    def run(self, m1, m2, l, g, mu, mu_s, angle, speed, horizon) -> SystemRun:
        if mu_s < mu:
            # Refused for every run, not only those that happen to reach a release (where the solver says so)
            raise ValueError(
                f"`mu_s` = {mu_s:g} < `mu` = {mu:g}: where static friction lets the block go, kinetic friction "
                "would stop it at once, so Coulomb's law admits no motion there. Choose the static coefficient "
                "`mu_s` at least as large as the kinetic one `mu`")
        params = dict(m1=m1, m2=m2, l=l, g=g, mu=mu, mu_s=mu_s)
        q0, qd0 = friction_cart_pendulum.initial_state(angle=angle, rate=speed, **params)
        times = np.linspace(0.0, horizon, self.samples)
        # rtol 1e-7: switch times within 1e-6 s of a 1e-11 run and drift below 1e-6 m, at 0.8 of the cost of 1e-8
        traj = simulate(compiled_model(), (0.0, horizon), q0, qd0, method="DOP853", rtol=1e-7, atol=1e-9,
                        t_eval=times, params=params)
        normal, friction = friction_cart_pendulum.floor_forces(traj.ideal, traj.nonideal)
        phases = len(shaded_spans(traj.t, traj.modes[:, 0] == 0))
        info = {0: "never sticks", 1: "1 stick phase"}.get(phases, f"{phases} stick phases")
        return SystemRun(traj, friction_cart_pendulum.mechanism(**params), model=compiled_model(),
                         data={"normal": normal, "friction": friction}, info=info)
