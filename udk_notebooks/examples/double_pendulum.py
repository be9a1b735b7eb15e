r"""The planar double pendulum, with optional torsion springs at its joints (lecture slides, Ch. 9).

::

        O  fixed pin; torsion spring k1 acts on theta
        |\
        | \   link 1, length l1
        |th\
        |   o c1                theta, phi: angles of the links from the
        |    \                  downward vertical, positive towards +x
        |     A  pin; torsion spring k2 acts on phi - theta
        |     |\
        |     |ph\   link 2, length l2
        |     |   o c2
        |     |    \
                    B           c1, c2: centres of mass    g |
                                                             v

Two bodies hang from a fixed pin ``O``: body 1 from ``O`` to the pin ``A``
(length ``l1``), body 2 from ``A`` to its free end ``B`` (length ``l2``). A
body is either a uniform rod (``bodies="rods"``, the slides' Examples 9.2-9.9)
or a point mass at the far end of a massless link (``bodies="points"``).

Geometry shared by both formulations
------------------------------------
The centre of mass of body ``i`` lies a distance ``a_i`` along its link and
its moment of inertia about that centre is ``J_i``:

========  =========  ==================
bodies    a_i        J_i
========  =========  ==================
rods      l_i / 2    m_i l_i^2 / 12
points    l_i        0
========  =========  ==================

With ``x`` to the right and ``y`` up, the centres are at::

    c1 = (a1 sin(theta), -a1 cos(theta)),
    c2 = (l1 sin(theta) + a2 sin(phi), -l1 cos(theta) - a2 cos(phi)).

Minimal coordinates ``(theta, phi)``
------------------------------------
The kinetic energy ``sum_i (m_i |c_i'|^2 + J_i w_i^2) / 2`` gives the mass
matrix of the slides ("Summarizing", after Example 9.5), written here for
both kinds of body::

    M = [[m1 a1^2 + J1 + m2 l1^2,     m2 l1 a2 cos(phi - theta)],
         [m2 l1 a2 cos(phi - theta),  m2 a2^2 + J2             ]],

which for rods is ``m_thth = m1 l1^2 / 3 + m2 l1^2``,
``m_thph = m2 l1 l2 cos(phi - theta) / 2``, ``m_phph = m2 l2^2 / 3``.
Gravity has the potential of Example 9.9,
``U_g = g (m1 y_c1 + m2 y_c2)``, and the torsion springs that of Example 9.7,
``U_e = k1 theta^2 / 2 + k2 (phi - theta)^2 / 2``.

Cartesian coordinates ``(x1, y1, theta, x2, y2, phi)``
------------------------------------------------------
Each body gets the coordinates of its centre of mass and its own angle, so
that its kinetic energy is ``m_i (x_i'^2 + y_i'^2) / 2 + J_i w_i^2 / 2`` with
the constant mass matrix ``diag(m1, m1, J1, m2, m2, J2)``; the pins become
four holonomic constraints::

    x1 - a1 sin(theta) = 0,                   y1 + a1 cos(theta) = 0,
    x2 - l1 sin(theta) - a2 sin(phi) = 0,     y2 + l1 cos(theta) + a2 cos(phi) = 0.

The angles are kept as coordinates for two reasons: the torsion springs act on
them, and the two models then share the same potential energy term by term,
so every difference in their motions is a difference of formulation. For point
masses ``J_i = 0`` and the mass matrix is singular; the accelerations are
still unique because ``[M; A]`` has full column rank (the constraints fix the
angles from the positions), the case the encyclopedia article treats with
``M + A^+ A``.

``model`` is :func:`minimal_model` (the catalogue's default, paired with
:func:`initial_state`). The two models describe the same motion: :func:`to_cartesian` maps a minimal
state to the Cartesian one, :func:`to_minimal` maps back. Integrated without
stabilization, the Cartesian model drifts off its constraints slowly (the
design notes quote ``1e-5`` in 10 s for RK45 at ``1e-8``); with DOP853 at
``rtol = 1e-11`` the drift stays below ``1e-9`` over 10 s, so no
stabilization is needed to compare the two. The joint angles then agree to
about ``1e-9`` for a moderate swing (the tests' ``theta = 1.2, phi = 0.4``);
from the default, chaotic swing (``theta = 2, phi = 1``) the integration
errors of both runs grow faster, and the rates agree to about ``4e-7``.

References
----------
Lecture slides "Multibody systems", Chapter 9: Example 9.5 and the mass
matrix after it, Example 9.7 (torsion springs), Example 9.9 (gravity).
Encyclopedia article "Udwadia-Kalaba equation": singular mass matrices.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .._lazy import LazyModule
from ._parameters import Parameter, defaults, symbols, values

if TYPE_CHECKING:
    from ..model import Model

sm = LazyModule("sympy")  # imported by the model builders only: the numeric helpers run without it

__all__ = [
    "BODIES",
    "PARAMETERS",
    "cartesian_model",
    "initial_state",
    "minimal_model",
    "model",
    "to_cartesian",
    "to_minimal",
    "mechanism",
]

BODIES = ("rods", "points")
"""The two kinds of body: uniform rods, or point masses on massless links."""

PARAMETERS = {
    "m1": Parameter("m1", 1.0, "mass of body 1 (upper)", (0.1, 5.0)),
    "m2": Parameter("m2", 1.0, "mass of body 2 (lower)", (0.1, 5.0)),
    "l1": Parameter("l1", 1.0, "length of link 1, pin O to pin A", (0.1, 3.0)),
    "l2": Parameter("l2", 1.0, "length of link 2, pin A to its free end", (0.1, 3.0)),
    "g": Parameter("g", 9.81, "gravitational acceleration, along -y", (0.0, 20.0)),
    "k1": Parameter("k1", 0.0, "stiffness of the torsion spring at O (kappa_1 of the slides)", (0.0, 50.0)),
    "k2": Parameter("k2", 0.0, "stiffness of the torsion spring at A (kappa_2 of the slides)", (0.0, 50.0)),
}


def _symbols():
    """The angles ``(theta, phi)``, the centres ``(x1, y1, x2, y2)`` and the parameter symbols; imports sympy.

    The parameters come in ``PARAMETERS`` order, ``(m1, m2, l1, l2, g, k1, k2)``.
    """
    from .._symbols import time_functions

    return time_functions("theta phi"), time_functions("x1 y1 x2 y2"), symbols(PARAMETERS)


def _check_bodies(bodies: str) -> str:
    if bodies not in BODIES:
        raise ValueError(f"`bodies` must be one of {BODIES}; got {bodies!r}")
    return bodies


def _geometry(bodies: str, mass1, mass2, length1, length2):
    """Centre distances ``a1, a2`` and central inertias ``J1, J2`` (symbols or numbers)."""
    if _check_bodies(bodies) == "rods":
        return length1 / 2, length2 / 2, mass1 * length1**2 / 12, mass2 * length2**2 / 12
    return length1, length2, 0 * mass1, 0 * mass2


def _potential(height1, height2):
    """Gravity (Example 9.9) plus the two torsion springs (Example 9.7)."""
    (theta, phi), _, (m1, m2, _, _, g, k1, k2) = _symbols()
    return g * (m1 * height1 + m2 * height2) + k1 * theta**2 / 2 + k2 * (phi - theta) ** 2 / 2


def minimal_model(bodies: str = "rods", **overrides: float) -> Model:
    """The double pendulum in the joint angles ``(theta, phi)``.

    Parameters
    ----------
    bodies : {"rods", "points"}, optional
        Uniform rods, or point masses at the ends of massless links.
    **overrides : float
        New defaults for ``m1, m2, l1, l2, g, k1, k2`` (see ``PARAMETERS``).

    Returns
    -------
    Model
        Unconstrained; the mass matrix is the slides' (module docstring).
    """
    from ..model import Model

    (theta, phi), _, (m1, m2, l1, l2, *_) = _symbols()
    a1, a2, J1, J2 = _geometry(bodies, m1, m2, l1, l2)
    coupling = m2 * l1 * a2 * sm.cos(phi - theta)
    mass = sm.Matrix([[m1 * a1**2 + J1 + m2 * l1**2, coupling], [coupling, m2 * a2**2 + J2]])
    return Model(
        [theta, phi],
        mass_matrix=mass,
        potential_energy=_potential(-a1 * sm.cos(theta), -l1 * sm.cos(theta) - a2 * sm.cos(phi)),
        parameters=defaults(PARAMETERS, overrides),
        name=f"double pendulum ({bodies}), joint angles",
    )


model = minimal_model


def cartesian_model(bodies: str = "rods", **overrides: float) -> Model:
    """The double pendulum in the coordinates ``(x1, y1, theta, x2, y2, phi)`` of its two bodies.

    Parameters
    ----------
    bodies : {"rods", "points"}, optional
        Uniform rods (centre of mass at mid-length), or point masses at the
        ends of massless links (singular mass matrix, see the module docstring).
    **overrides : float
        New defaults for ``m1, m2, l1, l2, g, k1, k2`` (see ``PARAMETERS``).

    Returns
    -------
    Model
        Constant mass matrix ``diag(m1, m1, J1, m2, m2, J2)``, four holonomic
        constraints (the two pins), same potential as :func:`minimal_model`.
    """
    from ..model import Model

    (theta, phi), (x1, y1, x2, y2), (m1, m2, l1, l2, *_) = _symbols()
    a1, a2, J1, J2 = _geometry(bodies, m1, m2, l1, l2)
    kinetic = (
        m1 * (x1.diff() ** 2 + y1.diff() ** 2) + J1 * theta.diff() ** 2
        + m2 * (x2.diff() ** 2 + y2.diff() ** 2) + J2 * phi.diff() ** 2
    ) / 2
    return Model(
        [x1, y1, theta, x2, y2, phi],
        kinetic_energy=kinetic,
        potential_energy=_potential(y1, y2),
        holonomic=[
            x1 - a1 * sm.sin(theta),
            y1 + a1 * sm.cos(theta),
            x2 - l1 * sm.sin(theta) - a2 * sm.sin(phi),
            y2 + l1 * sm.cos(theta) + a2 * sm.cos(phi),
        ],
        parameters=defaults(PARAMETERS, overrides),
        name=f"double pendulum ({bodies}), Cartesian coordinates of the bodies",
    )


def initial_state(
    theta: float = 2.0, phi: float = 1.0, theta_rate: float = 0.0, phi_rate: float = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """A minimal state ``(theta, phi)``, ``(theta', phi')``; the defaults give a chaotic swing.

    Parameters
    ----------
    theta, phi : float, optional
        Link angles from the downward vertical, in radians.
    theta_rate, phi_rate : float, optional
        Their rates.

    Returns
    -------
    q0, qd0 : ndarray, shape (2,)
        For :func:`minimal_model`; :func:`to_cartesian` gives the matching
        state of :func:`cartesian_model`, consistent with its constraints.
    """
    return np.array([theta, phi], dtype=float), np.array([theta_rate, phi_rate], dtype=float)


def to_cartesian(q, qd, bodies: str = "rods", **params: float) -> tuple[np.ndarray, np.ndarray]:
    """Map minimal states to Cartesian ones (rows of a trajectory, or one state).

    Parameters
    ----------
    q, qd : array_like, shape (2,) or (N, 2)
        ``(theta, phi)`` and ``(theta', phi')``.
    bodies : {"rods", "points"}, optional
    **params : float
        Parameter values by name (the lengths matter).

    Returns
    -------
    q, qd : ndarray, shape (6,) or (N, 6)
        ``(x1, y1, theta, x2, y2, phi)`` and their rates; the positions satisfy
        the pin constraints to rounding and the rates their derivatives.
    """
    v = values(PARAMETERS, params)
    a1, a2, _, _ = _geometry(bodies, v["m1"], v["m2"], v["l1"], v["l2"])
    length1 = v["l1"]
    q, qd = np.asarray(q, dtype=float), np.asarray(qd, dtype=float)
    th, ph, thd, phd = q[..., 0], q[..., 1], qd[..., 0], qd[..., 1]
    s1, c1, s2, c2 = np.sin(th), np.cos(th), np.sin(ph), np.cos(ph)
    positions = np.stack([a1 * s1, -a1 * c1, th, length1 * s1 + a2 * s2, -length1 * c1 - a2 * c2, ph], axis=-1)
    rates = np.stack([
        a1 * c1 * thd, a1 * s1 * thd, thd,
        length1 * c1 * thd + a2 * c2 * phd, length1 * s1 * thd + a2 * s2 * phd, phd,
    ], axis=-1)
    return positions, rates


def to_minimal(q, qd) -> tuple[np.ndarray, np.ndarray]:
    """Map Cartesian states ``(x1, y1, theta, x2, y2, phi)`` to minimal ones.

    The angles are Cartesian coordinates too, so this only selects them.

    Parameters
    ----------
    q, qd : array_like, shape (6,) or (N, 6)

    Returns
    -------
    q, qd : ndarray, shape (2,) or (N, 2)
    """
    q, qd = np.asarray(q, dtype=float), np.asarray(qd, dtype=float)
    return q[..., [2, 5]], qd[..., [2, 5]]


def mechanism(coordinates: str = "minimal", bodies: str = "rods", **params: float):
    """How the double pendulum looks: pins, links and bodies, and (Cartesian) the forces on each body.

    Parameters
    ----------
    coordinates : {"minimal", "cartesian"}
        The model drawn: :func:`minimal_model` ``(theta, phi)`` or :func:`cartesian_model`
        ``(x1, y1, theta, x2, y2, phi)``. Only Cartesian force entries are forces on points,
        so only the Cartesian mechanism has force sites (the centres of mass): there the ideal
        force on each body is its joint reaction.
    bodies : {"rods", "points"}
    **params : float
        Parameter values by name (``l1``, ``l2``).

    Returns
    -------
    udk_notebooks.drawing.Mechanism
    """
    from ..drawing import ForceSite, Joint, Mechanism, Rod

    if coordinates not in ("minimal", "cartesian"):
        raise ValueError(f"`coordinates` must be 'minimal' or 'cartesian'; got {coordinates!r}")
    bodies = _check_bodies(bodies)
    v = values(PARAMETERS, params)
    length1, length2 = v["l1"], v["l2"]
    i_theta, i_phi = (0, 1) if coordinates == "minimal" else (2, 5)

    def pin_a(q, t):
        return length1 * np.array([np.sin(q[i_theta]), -np.cos(q[i_theta])])

    def end_b(q, t):
        return pin_a(q, t) + length2 * np.array([np.sin(q[i_phi]), -np.cos(q[i_phi])])

    share = 0.5 if bodies == "rods" else 1.0
    joints = [
        Joint("O", lambda q, t: (0.0, 0.0), style="fixed", size=10),
        Joint("A", pin_a, style="pin" if bodies == "rods" else "body"),
        Joint("B", end_b, style="hidden" if bodies == "rods" else "body"),
    ]
    forces = []
    if bodies == "rods":
        joints += [Joint("c1", lambda q, t: share * pin_a(q, t), size=6),
                   Joint("c2", lambda q, t: pin_a(q, t) + share * (end_b(q, t) - pin_a(q, t)), size=6)]
    if coordinates == "cartesian":
        centre1, centre2 = ("c1", "c2") if bodies == "rods" else ("A", "B")
        forces = [ForceSite(centre1, (0, 1)), ForceSite(centre2, (3, 4))]
    return Mechanism(
        joints=joints,
        parts=[Rod("O", "A", width=4.0), Rod("A", "B", width=4.0)],
        forces=forces,
        trace="B",
        name=f"double pendulum of {bodies}, {coordinates} coordinates",
    )
