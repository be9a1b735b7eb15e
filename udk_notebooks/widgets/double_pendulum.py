r"""Explorer for the double pendulum with torsion springs, in two formulations side by side (slides, Ch. 9).

Sliders: the masses ``m1, m2`` and lengths ``l1, l2`` of the two bodies, gravity
``g``, the torsion-spring stiffnesses ``k1`` (at the fixed pin O) and ``k2`` (at
the pin A), the release angles ``theta`` and ``phi`` (from the downward
vertical) and the ``horizon``. Each update integrates the same motion twice:
in the joint angles ``(theta, phi)`` (:func:`~udk_notebooks.examples.double_pendulum.minimal_model`,
no constraints) and in the Cartesian coordinates of the two bodies with the
pins as four holonomic constraints
(:func:`~udk_notebooks.examples.double_pendulum.cartesian_model`). Panels:

(a) the Cartesian model at the animated instant; the arrows on each body are
    its weight (``F^N``) and the ideal constraint force ``F^L`` of the
    Udwadia-Kalaba equation (2005 paper, Eq. 10): the pins' reactions;
(b) the link angles of both formulations (they agree to the integration
    error while the motion is not yet chaotic);
(c) the energy change ``h(t) - h(0)`` of both runs: zero to the integration
    error, since springs and gravity are conservative. Both runs use Hairer's
    DOP853 at ``rtol = atol = 1e-9`` (the panel's title gives this "tol"), which leaves an
    energy error of about ``1e-9`` to ``1e-7`` J near the defaults (up to about
    ``1e-3`` J, 1.5e-6 of the energy, at the sliders' ends: light short links,
    stiff springs, 15 s), whose size changes threefold
    from one slider position to the next; the panel's view therefore only
    grows within a session (:attr:`energy_view_shrink`), so a drag does not
    redraw the panel for noise, and an error far below the view's scale
    shows as a flat line: zero at that scale;
(d) the pin reactions ``|R_A| = |F^L_2|`` (on body 2) and
    ``|R_O| = |F^L_1 + F^L_2|`` read off ``F^L``.

Each run's right-hand side is one generated function per formulation
(:meth:`~udk_notebooks.compiled.CompiledModel.plain_rate`: the lambdified
entries joined to the float Cholesky of the joint-angle model or to the scalar
kernel of the Cartesian one, parameter-only parts computed once per update),
bitwise the numbers of the general plain route, so the solver takes the same
steps and the energy panel shows the same integration error as with it.

Construct with ``bodies="points"`` for point masses on massless links: the
Cartesian mass matrix is then singular, and the solver still gives unique
accelerations because ``[M; A]`` has full column rank (encyclopedia article).
"""

from __future__ import annotations

from functools import lru_cache, partial

import numpy as np

from .._kept_code import compile_kept
from ..examples import double_pendulum
from ..plotting import OKABE_ITO
from ..simulation import simulate
from .base import parameter_table
from .system import Panel, SystemExplorer, SystemRun, time_curve

__all__ = ["DoublePendulumExplorer"]

UNITS = {"m1": "kg", "m2": "kg", "l1": "m", "l2": "m", "g": "m/s^2", "k1": "N m/rad", "k2": "N m/rad"}
MINIMAL = dict(color=OKABE_ITO["blue"], ls="-")
CARTESIAN = dict(color=OKABE_ITO["orange"], ls="--")
# Both runs; the energy panel shows the error this leaves. The state's entries are of order one (m, rad,
# m/s, rad/s), so the absolute tolerance is the relative one times one unit: a tighter atol only made
# the solver chase velocities that pass through zero (a sixth more evaluations for the same energy error).
RTOL, ATOL = 1e-9, 1e-9  # the energy panel's title says "tol 1e-9" (a test holds the two together)


@lru_cache(maxsize=4)
def compiled_models(bodies: str):
    """The minimal and the Cartesian model of these bodies, compiled once per session."""
    return (compile_kept(f"double_pendulum.minimal_model-{bodies}", partial(double_pendulum.minimal_model, bodies)),
            compile_kept(f"double_pendulum.cartesian_model-{bodies}", partial(double_pendulum.cartesian_model, bodies)))


def _reactions(run: SystemRun):
    ideal = run.trajectory.ideal
    on_body2 = ideal[:, 3:5]
    return np.linalg.norm(on_body2 + ideal[:, 0:2], axis=1), np.linalg.norm(on_body2, axis=1)


class DoublePendulumExplorer(SystemExplorer):
    """Masses, lengths, torsion springs and release angles of the double pendulum; two formulations.

    Parameters
    ----------
    bodies : {"rods", "points"}, optional
        Uniform rods (the slides' examples) or point masses on massless links.
    samples : int, optional
        Output samples of each run (the animation's frames).
    **kwargs
        Passed to :class:`~udk_notebooks.widgets.system.SystemExplorer`.
    """

    updates_on_release = True  # several runs (or a model to compile) per update
    heading = "Double pendulum with torsion springs: joint angles and Cartesian coordinates (slides, Ch. 9)"
    panels = (
        Panel("link angles", "time t (s)", "angle (rad)", curves=(
            time_curve(r"$\theta$ (angles)", lambda run: run.data["minimal"].q[:, 0], **MINIMAL),
            time_curve(r"$\theta$ (Cartesian)", lambda run: run.trajectory.q[:, 2], **CARTESIAN),
            time_curve(r"$\varphi$ (angles)", lambda run: run.data["minimal"].q[:, 1],
                       color=OKABE_ITO["bluish_green"], ls="-."),
            time_curve(r"$\varphi$ (Cartesian)", lambda run: run.trajectory.q[:, 5],
                       color=OKABE_ITO["reddish_purple"], ls=":"),
        )),
        Panel("energy change (tol 1e-9)", "time t (s)", "h(t) - h(0) (J)", zero=True, curves=(
            time_curve("angles", lambda run: run.data["minimal"].energy - run.data["minimal"].energy[0], **MINIMAL),
            time_curve("Cartesian", lambda run: run.trajectory.energy - run.trajectory.energy[0], **CARTESIAN),
        )),
        Panel("pin reactions from $F^L$", "time t (s)", "force (N)", zero=True, nonnegative=True, curves=(
            time_curve("at O", lambda run: _reactions(run)[0], color=OKABE_ITO["vermillion"], ls="-"),
            time_curve("at A", lambda run: _reactions(run)[1], color=OKABE_ITO["sky_blue"], ls="--"),
        )),
    )

    def __init__(self, *, bodies: str = "rods", samples: int = 201, **kwargs):
        if bodies not in double_pendulum.BODIES:
            raise ValueError(f"`bodies` must be 'rods' or 'points'; got {bodies!r}")
        self.bodies = bodies
        self.samples = int(samples)
        if self.samples < 2:
            raise ValueError(f"`samples` must be at least 2; got {samples!r}")
        table = parameter_table(double_pendulum.PARAMETERS, units=UNITS)
        table["theta"] = (2.0, (-3.1, 3.1), "release angle of link 1 from the downward vertical, in rad")
        table["phi"] = (1.0, (-3.1, 3.1), "release angle of link 2 from the downward vertical, in rad")
        extra = {"horizon": (5.0, (1.0, 15.0), "simulated time span, in s")}
        kwargs.setdefault("frames", self.samples)
        super().__init__(table, extra=extra, **kwargs)

    energy_view_shrink = 0.0
    """The energy panel's view never shrinks within a session (a share of 1/4 shrinks the other panels)."""
    angle_view_shrink = 0.1
    """The angle panel's view shrinks once the angles fill less than a tenth of it."""

    def view_options(self, ax) -> dict[str, float]:
        options = super().view_options(ax)
        if ax is self._axes[1]:  # panel (b): a chaotic swing winds the links by a different number of turns
            options["shrink"] = self.angle_view_shrink
        elif ax is self._axes[2]:  # panel (c): integration error, whose size jumps threefold between runs
            options["shrink"] = self.energy_view_shrink
        return options

    def default_mechanism(self):
        return double_pendulum.mechanism("cartesian", self.bodies)

    def run(self, m1, m2, l1, l2, g, k1, k2, theta, phi, horizon) -> SystemRun:
        params = dict(m1=m1, m2=m2, l1=l1, l2=l2, g=g, k1=k1, k2=k2)
        minimal, cartesian = compiled_models(self.bodies)
        times = np.linspace(0.0, horizon, self.samples)
        # Neither run can meet a singular configuration, so the rank monitor (a check of every sample
        # interval) is off: the joint-angle mass matrix has det M = (m1 a1^2 + J1) (m2 a2^2 + J2)
        # + m2 l1^2 J2 + m2^2 l1^2 a2^2 sin^2(phi - theta) > 0 for the sliders' positive masses and lengths,
        # and the Cartesian [M; A] has full column rank in every configuration (module docstring of
        # examples.double_pendulum). A state where that failed would still be refused: the solvers test
        # M (Cholesky pivots) and the Gram matrix at every evaluation.
        options = dict(method="dop853", rtol=RTOL, atol=ATOL, t_eval=times, params=params, on_singular="ignore")
        q0, qd0 = double_pendulum.initial_state(theta, phi)
        run_minimal = simulate(minimal, (0.0, horizon), q0, qd0, **options)
        q0c, qd0c = double_pendulum.to_cartesian(q0, qd0, self.bodies, **params)
        run_cartesian = simulate(cartesian, (0.0, horizon), q0c, qd0c, **options)
        return SystemRun(run_cartesian, double_pendulum.mechanism("cartesian", self.bodies, **params),
                         data={"minimal": run_minimal}, model=cartesian)
