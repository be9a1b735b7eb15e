r"""A vertical disk rolling without slipping on a horizontal plane (Beshaw 2014, Sec. 4).

::

      side view                       top view, the plane z = 0

         _______                      y
        /       \                     ^        axle, at angle theta
       |    o----|--- axle            |       /  from the x axis
       |  phi    |                    |      /
        \_______/                     |     * (x, y) contact point
            *  contact point          |      \
    ==================== plane        |       v  rolling direction
                                      +------------------> x
                                         (sin theta, -cos theta)

The contact point ``(x, y)`` lies straight below the centre, the disk turns
by ``phi`` about its axle and by ``theta`` about the vertical; ``theta`` is
the angle of the axle from the ``x`` axis, so the disk rolls along
``(sin theta, -cos theta)``. Rolling without slipping makes the contact point
move with the rim speed ``r phi'`` in that direction: two nonholonomic
constraints (Beshaw 2014, Sec. 4, the two equations just before Eq. (a))::

    psi_1 = x' - r phi' sin(theta) = 0,
    psi_2 = y' + r phi' cos(theta) = 0.

Differentiated once (Eq. (a)) they give the rows of ``A q'' = b`` of Eq. (b) with
``b = (r phi' theta' cos theta, r phi' theta' sin theta)``. The kinetic energy
is Eq. (c), ``T = m (x'^2 + y'^2) / 2 + I1 phi'^2 / 2 + I2 theta'^2 / 2``, with
``I1`` the moment about the axle (it goes with the rolling angle ``phi``) and
``I2`` the moment about a diameter (it goes with the heading ``theta``). The
paper takes ``m = 1``, ``r = 1``, ``I1 = m r^2 / 2``, ``I2 = m r^2 / 4``, so
``M = diag(1, 1, 1/2, 1/4)`` as in its Eq. (i), and no applied force.

Exact solution
--------------
With multipliers ``lambda_1, lambda_2`` for the two rows, Lagrange's equations
(paper, Eq. (d)) read ``m x'' = lambda_1``, ``m y'' = lambda_2``,
``I1 phi'' = -r sin(theta) lambda_1 + r cos(theta) lambda_2`` and
``I2 theta'' = 0``. Substituting the differentiated constraints
``x'' = r phi'' sin(theta) + r phi' theta' cos(theta)`` and
``y'' = -r phi'' cos(theta) + r phi' theta' sin(theta)`` into the third
equation, the ``phi' theta'`` terms cancel and what remains is
``(I1 + m r^2) phi'' = 0``. Hence both angles are linear in time::

    phi(t) = phi0 + w t,    theta(t) = theta0 + Omega t,

with the constant rates ``w = phi0'`` and ``Omega = theta0'``. Integrating
the constraints ``x' = r w sin(theta0 + Omega t)`` and
``y' = -r w cos(theta0 + Omega t)`` from ``t = 0``::

    x(t) = x0 + (r w / Omega) (cos(theta0) - cos(theta(t)))
         = x0 + r w t sin(theta0 + Omega t / 2) sinc(Omega t / 2),
    y(t) = y0 - (r w / Omega) (sin(theta(t)) - sin(theta0))
         = y0 - r w t cos(theta0 + Omega t / 2) sinc(Omega t / 2),

where ``sinc(u) = sin(u) / u``; the second forms stay finite when
``Omega = 0`` (a straight line). For ``Omega != 0`` the contact point runs on
a circle of radius ``r |w / Omega|`` about
``(x0 + (r w / Omega) cos(theta0), y0 + (r w / Omega) sin(theta0))``. The
paper's initial state ``x = 0, y = 0, phi = 0, theta = pi/6, x' = 1,
y' = -sqrt(3), phi' = 2, theta' = 1`` satisfies both constraints
(``1 = 2 sin(pi/6)``, ``-sqrt(3) = -2 cos(pi/6)``) and gives a circle of radius
2 about ``(sqrt(3), 1)``, run once every ``2 pi`` seconds.

Constraint drift (the paper's Fig. 3)
-------------------------------------
A fixed-step integrator keeps ``A q'' = b`` only, so the residuals
``psi_1, psi_2`` drift away from zero. Beshaw replaces ``b`` by ``b + K psi``
(Eqs. 18-19), which turns the drift into ``psi' = K psi``; with a step ``tau``
it decays when ``I + tau K`` (Euler, Eq. 22) or the degree-4 Taylor polynomial
of ``exp(tau K)`` (RK4, Eq. 27) has spectral radius below one.
:func:`figure3` computes the drift of the ``x`` row, ``psi_1``, for Euler and
RK4 with and without such a gain.

References
----------
A. W. Beshaw, "Dynamic equation of constrained mechanical system", Bulletin
of PFUR, Series Mathematics. Information Sciences. Physics (2014), Sec. 4
and Eqs. (18)-(27).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from .._lazy import LazyModule
from ..simulation import simulate
from ..stabilization import GainMatrix, stability
from ._parameters import Parameter, defaults, symbols, values

if TYPE_CHECKING:
    from ..model import Model

sm = LazyModule("sympy")  # imported by the model builder only: the numeric helpers run without it

__all__ = [
    "PARAMETERS",
    "PAPER_STATE",
    "exact_state",
    "figure3",
    "initial_state",
    "model",
    "mechanism",
]

PARAMETERS = {
    "m": Parameter("m", 1.0, "mass of the disk (paper: 1 kg)", (0.1, 5.0), {"positive": True}),
    "r": Parameter("r", 1.0, "radius of the disk (paper: 1)", (0.1, 3.0), {"positive": True}),
    "I1": Parameter("I1", 0.5, "moment of inertia about the axle, goes with phi (paper: m r^2 / 2)", (0.01, 5.0),
                    {"positive": True}),
    "I2": Parameter("I2", 0.25, "moment of inertia about a diameter, goes with theta (paper: m r^2 / 4)", (0.01, 5.0),
                    {"positive": True}),
}

PAPER_STATE = {"x": 0.0, "y": 0.0, "phi": 0.0, "theta": math.pi / 6, "phi_rate": 2.0, "theta_rate": 1.0}
"""Beshaw's initial state (Sec. 4): positions, and the two free rates ``phi'`` and ``theta'``.

The remaining rates follow from the constraints: ``x' = r phi' sin(theta) = 1``
and ``y' = -r phi' cos(theta) = -sqrt(3)``, the paper's values.
"""


def _symbols():
    """The coordinates ``(x, y, phi, theta)`` and the parameter symbols ``(m, r, I1, I2)``; imports sympy."""
    from .._symbols import time_functions

    return time_functions("x y phi theta"), symbols(PARAMETERS)


def model(**overrides: float) -> Model:
    """The rolling disk as a :class:`Model`, coordinates ``(x, y, phi, theta)``.

    Parameters
    ----------
    **overrides : float
        New defaults for ``m``, ``r``, ``I1``, ``I2`` (see ``PARAMETERS``).

    Returns
    -------
    Model
        Two nonholonomic rows, ``x' - r phi' sin(theta)`` and
        ``y' + r phi' cos(theta)`` (Beshaw 2014, Sec. 4); no applied force.
    """
    from ..model import Model

    (x, y, phi, theta), (m, r, I1, I2) = _symbols()
    return Model(
        [x, y, phi, theta],
        kinetic_energy=(m * (x.diff() ** 2 + y.diff() ** 2) + I1 * phi.diff() ** 2 + I2 * theta.diff() ** 2) / 2,
        nonholonomic=[
            x.diff() - r * phi.diff() * sm.sin(theta),
            y.diff() + r * phi.diff() * sm.cos(theta),
        ],
        parameters=defaults(PARAMETERS, overrides),
        name="vertical disk rolling without slipping",
    )


def initial_state(
    x: float = PAPER_STATE["x"],
    y: float = PAPER_STATE["y"],
    phi: float = PAPER_STATE["phi"],
    theta: float = PAPER_STATE["theta"],
    phi_rate: float = PAPER_STATE["phi_rate"],
    theta_rate: float = PAPER_STATE["theta_rate"],
    **params: float,
) -> tuple[np.ndarray, np.ndarray]:
    """A state that rolls without slipping; the defaults are the paper's.

    Parameters
    ----------
    x, y : float, optional
        Contact point.
    phi, theta : float, optional
        Rolling angle and heading.
    phi_rate, theta_rate : float, optional
        ``phi'`` and ``theta'``; ``x'`` and ``y'`` are computed from the
        constraints, so the state is consistent to rounding.
    **params : float
        Parameter values by name (only ``r`` matters here).

    Returns
    -------
    q0, qd0 : ndarray, shape (4,)
        ``(x, y, phi, theta)`` and their rates.
    """
    radius = values(PARAMETERS, params)["r"]
    speed = radius * phi_rate
    q0 = np.array([x, y, phi, theta], dtype=float)
    qd0 = np.array([speed * math.sin(theta), -speed * math.cos(theta), phi_rate, theta_rate], dtype=float)
    return q0, qd0


def exact_state(t, q0=None, qd0=None, **params: float) -> tuple[np.ndarray, np.ndarray]:
    """The closed-form motion derived in the module docstring.

    Parameters
    ----------
    t : array_like, shape (N,)
        Times, counted from the initial state.
    q0, qd0 : array_like, shape (4,), optional
        A consistent initial state, both or neither (default:
        :func:`initial_state`, the paper's). Only ``x0, y0, phi0, theta0``
        and the rates ``phi0'``, ``theta0'`` are used.
    **params : float
        Parameter values by name (only ``r`` matters: the motion does not
        depend on the mass or the inertias).

    Returns
    -------
    q, qd : ndarray, shape (N, 4)
        Coordinates ``(x, y, phi, theta)`` and their rates at each time.
    """
    if (q0 is None) != (qd0 is None):
        raise ValueError("give both `q0` and `qd0`, or neither (the paper's state)")
    if q0 is None:
        q0, qd0 = initial_state(**params)
    radius = values(PARAMETERS, params)["r"]
    t = np.atleast_1d(np.asarray(t, dtype=float))
    x0, y0, phi0, theta0 = np.asarray(q0, dtype=float)
    w, omega = float(qd0[2]), float(qd0[3])
    heading = theta0 + omega * t
    middle = theta0 + omega * t / 2
    chord = t * np.sinc(omega * t / (2 * math.pi))  # (2 / Omega) sin(Omega t / 2), finite at Omega = 0
    q = np.column_stack([
        x0 + radius * w * np.sin(middle) * chord,
        y0 - radius * w * np.cos(middle) * chord,
        phi0 + w * t,
        heading,
    ])
    qd = np.column_stack([
        radius * w * np.sin(heading),
        -radius * w * np.cos(heading),
        np.full_like(t, w),
        np.full_like(t, omega),
    ])
    return q, qd


_FIGURE3_RUNS = (("euler", False), ("euler", True), ("rk4", False), ("rk4", True))


def figure3(
    step: float = 0.01,
    gain: float = 10.0,
    t_final: float = 10.0,
    offset: float = 0.0,
    ax=None,
    quantity: str = "residual",
) -> dict:
    """Drift of the ``x`` constraint for Euler and RK4, with and without a gain (Beshaw 2014, Fig. 3).

    The paper's Fig. 3 shows how far the numerical solution leaves the
    constraint for the position ``x``, i.e. the residual
    ``psi_1 = x' - r phi' sin(theta)`` of the first row, over ``t`` in
    ``[0, 10]``. The paper does not print its step or its matrix ``K``; here
    the step is ``step`` and ``K = -gain * I`` (2 x 2), which is checked with
    :func:`udk_notebooks.stabilization.stability` for both methods before
    use. Each run also records ``x - x_exact``, the error of the position
    itself against :func:`exact_state` (from the consistent state).

    What the data show (step 0.01, ``k = 10``): Euler leaves the constraint
    by about ``1e-2`` and the gain brings that down about twentyfold (its
    drift settles near ``local error / (k tau)``, so a larger ``k`` helps
    more, up to ``k tau = 1`` where ``I + tau K = 0``). RK4 drifts by only
    ``1e-11``; there the gain does not help: the stiffness ``k`` it adds
    raises RK4's own truncation error in ``psi`` (about ``k^3 tau^5`` per
    step) above that tiny drift, to about ``2e-8``. The gain pays off for RK4
    when the initial state is off the constraint (the paper's "errors in the
    initial conditions"): with ``offset`` the residual stays at ``offset``
    without ``K`` and decays like ``exp(-k t)`` with it.

    Parameters
    ----------
    step : float, optional
        Fixed time step ``tau`` of both integrators.
    gain : float, optional
        ``k`` in ``K = -k I``; the drift obeys ``psi' = -k psi``. Euler needs
        ``0 < k tau < 2`` and RK4 ``0 < k tau < 2.785...``.
    t_final : float, optional
        End of the time span (the paper's 10).
    offset : float, optional
        Error added to the initial ``x'``, so that ``psi_1(0) = offset``
        (0: the paper's consistent state).
    ax : matplotlib Axes, optional
        When given, ``|psi_1|`` (or ``|x - x_exact|``, see ``quantity``) of
        the four runs is drawn on it with a logarithmic vertical axis.
    quantity : {"residual", "x_error"}, optional
        What to draw on ``ax``.

    Returns
    -------
    dict of str to ndarray, shape (N,)
        ``"t"``: the step times; ``"residual_<run>"``: ``psi_1`` (signed);
        ``"x_error_<run>"``: ``x - x_exact``; with ``<run>`` one of
        ``euler``, ``euler_gain``, ``rk4``, ``rk4_gain``. ``"gain_matrix"``
        holds ``K``, shape (2, 2).

    Raises
    ------
    ValueError
        When ``K = -gain I`` is not stable for one of the methods with this
        step, or ``quantity`` is unknown.
    """
    if quantity not in ("residual", "x_error"):
        raise ValueError(f"`quantity` must be 'residual' or 'x_error'; got {quantity!r}")
    gain_matrix = -float(gain) * np.eye(2)
    for method in ("euler", "rk4"):
        report = stability(method, step, gain_matrix)
        if not (gain > 0 and report.bounded):
            raise ValueError(
                f"`gain` = {gain!r} with `step` = {step!r} is unstable for {method} "
                f"(spectral radius {report.spectral_radius:.4g}); choose 0 < gain * step < 2"
            )
    system = model()
    q0, qd0 = initial_state()
    start_rates = qd0 + np.array([offset, 0.0, 0.0, 0.0])
    data: dict = {"gain_matrix": gain_matrix}
    for method, stabilized in _FIGURE3_RUNS:
        run = simulate(
            system, (0.0, t_final), q0, start_rates, method=method, step=step,
            stabilization=GainMatrix(gain_matrix) if stabilized else None,
            constraint_tol=abs(offset) + 1e-9,
        )
        label = method + ("_gain" if stabilized else "")
        data["t"] = run.t
        data["residual_" + label] = run.velocity_residual[:, 0]
        data["x_error_" + label] = run.q[:, 0] - exact_state(run.t, q0, qd0)[0][:, 0]
    if ax is not None:
        from ..plotting import METHOD_COLORS  # one colour per integrator; the gain is the line style

        styles = {"euler": "--", "euler_gain": "-", "rk4": "--", "rk4_gain": "-"}
        names = {"euler": "Euler", "euler_gain": "Euler, K", "rk4": "RK4", "rk4_gain": "RK4, K"}
        for label, style in styles.items():
            values = np.abs(data[f"{quantity}_{label}"])
            ax.semilogy(data["t"], np.where(values > 0, values, np.nan), style, label=names[label],
                        color=METHOD_COLORS[label.split("_")[0]])
        ax.set_xlabel("time t")
        ax.set_ylabel(r"$|x' - r\varphi'\sin\theta|$" if quantity == "residual" else r"$|x - x_{exact}|$")
        ax.set_title(f"drift of the x constraint, step {step:g}, K = -{gain:g} I")
        ax.legend()
    return data


def mechanism(**params: float):
    """The rolling disk seen from above: its contact path and the disk, edge on, along its heading.

    Parameters
    ----------
    **params : float
        Parameter values by name (``r`` sets the drawn disk's length).

    Returns
    -------
    udk_notebooks.drawing.Mechanism
        Force site: the contact point, forces along ``(x, y)`` (the rolling constraint's
        sideways force is the ideal one there).
    """
    from ..drawing import ForceSite, Joint, Mechanism, Rod

    radius = values(PARAMETERS, params)["r"]

    def rim(sign):
        return lambda q, t: q[:2] + sign * radius * np.array([np.sin(q[3]), -np.cos(q[3])])

    return Mechanism(
        joints=[Joint("contact", lambda q, t: q[:2], size=5), Joint("front", rim(1.0), style="hidden"),
                Joint("back", rim(-1.0), style="hidden")],
        parts=[Rod("back", "front", width=5.0)],
        forces=[ForceSite("contact", (0, 1))],
        trace="contact",
        name="vertical rolling disk, top view",
    )
