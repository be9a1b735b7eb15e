"""Tests for udk_notebooks.model (Model, CoulombFriction) and its compiled functions.

The derived ``M, Q, A, b`` are compared with expressions derived by hand
(Lagrange's equations worked on paper, constraints differentiated on paper),
never with a second call into the same derivation. Numeric functions are
compared with plain-Python evaluations of the hand-derived formulas and with
closed forms (pendulum tension, Eq. (32) of the 2005 paper).
"""

import dataclasses
import math
import re

import numpy as np
import pytest
import sympy as sm
from hypothesis import given, settings
from hypothesis import strategies as st
from sympy.physics.mechanics import dynamicsymbols

import udk_notebooks.compiled as compiled_module
from udk_notebooks.compiled import CompiledModel
from udk_notebooks.core import udwadia_kalaba
from udk_notebooks.examples import inclined_line
from udk_notebooks.model import CoulombFriction, Model

t = dynamicsymbols._t
m, g, l, c, v0, accel, w, amp = sm.symbols("m g l c v0 accel w amp", positive=True)
x, y, r, th = dynamicsymbols("x y r theta")
xd, yd, rd, thd = (s.diff(t) for s in (x, y, r, th))

DEFAULTS = {m: 2.0, g: 9.81, l: 1.5}


def assert_same(actual, expected):
    """Symbolic equality: every entry of ``actual - expected`` simplifies to zero."""
    actual, expected = sm.Matrix(actual), sm.Matrix(expected)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    diff = (actual - expected).applyfunc(sm.simplify)
    assert diff == sm.zeros(*diff.shape), diff


# -- pendulum, polar coordinates ---------------------------------------------------
def polar_pendulum(**kwargs):
    """Bob on a rod of length l, angle theta from the downward vertical, radius r held at l."""
    energy = dict(kinetic_energy=m * (rd**2 + r**2 * thd**2) / 2)
    energy.update(kwargs)
    return Model([r, th], potential_energy=-m * g * r * sm.cos(th), holonomic=[r - l], parameters=DEFAULTS, **energy)


def test_polar_pendulum_matches_hand_derivation():
    """Lagrange: m r'' = m r th'^2 + m g cos th; m r^2 th'' = -2 m r r' th' - m g r sin th."""
    model = polar_pendulum()
    assert_same(model.M, [[m, 0], [0, m * r**2]])
    assert_same(model.Q, [m * r * thd**2 + m * g * sm.cos(th), -2 * m * r * rd * thd - m * g * r * sm.sin(th)])
    assert_same(model.A, [[1, 0]])
    assert_same(model.b, [0])
    assert_same(model.C, [0, 0])
    assert_same(model.phi, [r - l])
    assert_same(sm.Matrix([model.energy]), [m * (rd**2 + r**2 * thd**2) / 2 - m * g * r * sm.cos(th)])
    assert model.n == 2 and model.n_holonomic == 1 and model.n_nonholonomic == 0


def test_mass_matrix_route_equals_kinetic_energy_route():
    by_energy = polar_pendulum()
    by_matrix = polar_pendulum(kinetic_energy=None, mass_matrix=sm.Matrix([[m, 0], [0, m * r**2]]))
    for name in ("M", "Q", "A", "b", "C"):
        assert_same(getattr(by_matrix, name), getattr(by_energy, name))
    assert_same(sm.Matrix([by_matrix.energy]), sm.Matrix([by_energy.energy]))


def test_mass_matrix_with_coupling():
    """A coupled constant M = [[m, m/2], [m/2, m]]: Q is only gravity, M is returned as given."""
    mass = sm.Matrix([[m, m / 2], [m / 2, m]])
    model = Model([x, y], mass_matrix=mass, potential_energy=m * g * y, parameters=DEFAULTS)
    assert_same(model.M, mass)
    assert_same(model.Q, [0, -m * g])
    assert_same(sm.Matrix([model.energy]), [m * (xd**2 + xd * yd + yd**2) / 2 + m * g * y])


# -- pendulum, Cartesian coordinates --------------------------------------------------
def cartesian_pendulum(**kwargs):
    options = dict(
        kinetic_energy=m * (xd**2 + yd**2) / 2,
        potential_energy=m * g * y,
        holonomic=[x**2 + y**2 - l**2],
        parameters=DEFAULTS,
    )
    options.update(kwargs)
    return Model([x, y], **options)


def test_cartesian_pendulum_matches_hand_derivation():
    """phi = x^2 + y^2 - l^2: phi'' = 2 x x'' + 2 y y'' + 2 (x'^2 + y'^2), so A = (2x, 2y), b = -2 v^2."""
    model = cartesian_pendulum()
    assert_same(model.M, [[m, 0], [0, m]])
    assert_same(model.Q, [0, -m * g])
    assert_same(model.A, [[2 * x, 2 * y]])
    assert_same(model.b, [-2 * (xd**2 + yd**2)])
    assert_same(model.velocity_constraints, [2 * x * xd + 2 * y * yd])
    assert_same(sm.Matrix([model.explicit_time_power]), [0])


def test_rheonomic_constraint_puts_time_in_b():
    """Length L(t) = l + amp sin(w t): phi'' adds -2 (L'^2 + L L'') to the scleronomic b with the sign flipped."""
    length = l + amp * sm.sin(w * t)
    model = cartesian_pendulum(
        holonomic=[x**2 + y**2 - length**2], parameters={**DEFAULTS, amp: 0.2, w: 3.0}
    )
    L_dot = amp * w * sm.cos(w * t)
    L_ddot = -amp * w**2 * sm.sin(w * t)
    assert_same(model.A, [[2 * x, 2 * y]])
    assert_same(model.b, [-2 * (xd**2 + yd**2) + 2 * (L_dot**2 + length * L_ddot)])
    assert model.b[0].has(t)
    assert_same(model.velocity_constraints, [2 * x * xd + 2 * y * yd - 2 * length * L_dot])


def test_nonholonomic_constraint_nonlinear_in_velocity():
    """psi = x'^2 + y'^2 - v(t)^2 with v = v0 + accel t: psi' = 2 x' x'' + 2 y' y'' - 2 v accel."""
    speed = v0 + accel * t
    model = Model(
        [x, y],
        kinetic_energy=m * (xd**2 + yd**2) / 2,
        nonholonomic=[xd**2 + yd**2 - speed**2],
        parameters={m: 1.0, v0: 1.0, accel: 0.5},
    )
    assert_same(model.A, [[2 * xd, 2 * yd]])
    assert_same(model.b, [2 * speed * accel])
    assert model.n_holonomic == 0 and model.n_nonholonomic == 1
    assert_same(model.psi, [xd**2 + yd**2 - speed**2])


def test_constant_speed_constraint_is_homogeneous():
    model = Model(
        [x, y], kinetic_energy=(xd**2 + yd**2) / 2, nonholonomic=[xd**2 + yd**2 - v0**2], parameters={v0: 2.0}
    )
    assert_same(model.A, [[2 * xd, 2 * yd]])
    assert_same(model.b, [0])


def test_rayleigh_dissipation_gives_linear_damping():
    model = cartesian_pendulum(dissipation=c * (xd**2 + yd**2) / 2, parameters={**DEFAULTS, c: 0.3})
    assert_same(model.Q, [-c * xd, -m * g - c * yd])
    assert_same(model.nonconservative_force, [-c * xd, -c * yd])
    assert_same(model.M, [[m, 0], [0, m]])  # D does not touch the inertia


def test_extra_forces_and_nonideal_vector():
    fx, c1, c2 = sm.symbols("fx c1 c2")
    model = cartesian_pendulum(
        forces=[fx * sm.cos(t), 0], nonideal=[c1 * x, c2], parameters={**DEFAULTS, fx: 1.0, c1: 0.5, c2: 2.0}
    )
    assert_same(model.Q, [fx * sm.cos(t), -m * g])
    assert_same(model.C, [c1 * x, c2])


def test_holonomic_rows_come_first():
    model = Model(
        [x, y],
        kinetic_energy=(xd**2 + yd**2) / 2,
        holonomic=[x - y],
        nonholonomic=[xd - v0],
        parameters={v0: 1.0},
    )
    assert_same(model.A, [[1, -1], [1, 0]])
    assert_same(model.b, [0, 0])


# -- checks of the input ---------------------------------------------------------------
def test_unknown_symbol_is_named():
    zeta = sm.Symbol("zeta")
    with pytest.raises(ValueError, match=r"symbols zeta are neither coordinates nor parameters"):
        Model([x, y], kinetic_energy=m * (xd**2 + yd**2) / 2, potential_energy=zeta * y, parameters={m: 1.0})


def test_unknown_symbols_are_all_named():
    zeta, kappa = sm.symbols("zeta kappa")
    with pytest.raises(ValueError, match=r"symbols kappa, zeta are neither"):
        Model([x, y], kinetic_energy=(xd**2 + yd**2) / 2, potential_energy=kappa * x + zeta * y)


def test_unknown_symbol_only_in_holonomic_constraint_is_named():
    """l appears in phi = x^2 + y^2 - l^2 but in none of A, b (l drops out when differentiating)."""
    with pytest.raises(ValueError, match=r"symbols l are neither coordinates nor parameters"):
        cartesian_pendulum(parameters={m: 2.0, g: 9.81})


def test_unknown_symbol_in_friction_is_named():
    nu = sm.Symbol("nu")
    with pytest.raises(ValueError, match=r"nu"):
        Model(
            [x, y], kinetic_energy=(xd**2 + yd**2) / 2, holonomic=[y],
            friction=[CoulombFriction(xd, nu)],
        )


def test_friction_sliding_velocity_must_be_linear():
    with pytest.raises(ValueError, match=r"`friction` sliding velocity .* linear and homogeneous"):
        Model(
            [x, y], kinetic_energy=(xd**2 + yd**2) / 2, holonomic=[y],
            friction=[CoulombFriction(xd**2, 0.3)],
        )


@pytest.mark.parametrize(
    "kwargs, pattern",
    [
        (dict(coordinates=[]), r"`coordinates` must list at least one"),
        (dict(coordinates=[sm.Symbol("q")]), r"`coordinates` must be functions of time"),
        (dict(kinetic_energy=None), r"give exactly one of `kinetic_energy` and `mass_matrix`"),
        (dict(mass_matrix=sm.eye(2)), r"give exactly one of `kinetic_energy` and `mass_matrix`"),
        (dict(kinetic_energy=None, mass_matrix=sm.eye(3)), r"`mass_matrix` must have shape \(2, 2\)"),
        (dict(kinetic_energy=None, mass_matrix=sm.Matrix([[1, 1], [0, 1]])), r"`mass_matrix` must be symmetric"),
        (dict(forces=[1, 2, 3]), r"`forces` must hold 2 expressions"),
        (dict(nonideal=[1]), r"`nonideal` must hold 2 expressions"),
        (dict(potential_energy=m * y, parameters={m: float("nan")}), r"`parameters`: the default of `m` must be a finite"),
        (dict(potential_energy=m * y, parameters={"m": "heavy"}), r"`parameters`: the default of `m` must be a finite"),
    ],
)
def test_bad_model_arguments_are_named(kwargs, pattern):
    options = dict(coordinates=[x, y], kinetic_energy=(xd**2 + yd**2) / 2)
    options.update(kwargs)
    with pytest.raises(ValueError, match=pattern):
        Model(**options)


# -- immutability and caching --------------------------------------------------------------
def test_model_is_immutable():
    model = cartesian_pendulum()
    with pytest.raises(dataclasses.FrozenInstanceError):
        model.M = sm.eye(2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        model.parameters = {}
    with pytest.raises(dataclasses.FrozenInstanceError):
        model.new_attribute = 1
    with pytest.raises(TypeError):
        model.M[0, 0] = 5  # the matrices are ImmutableMatrix
    assert isinstance(model.A, sm.ImmutableMatrix)


def test_compile_is_cached():
    model = cartesian_pendulum()
    first = model.compile()
    assert isinstance(first, CompiledModel)
    assert model.compile() is first
    assert cartesian_pendulum().compile() is not first  # per model, not global


def test_parameters_accept_string_keys():
    """A string key becomes a plain Symbol (no assumptions), so it matches ``Symbol("mass")``."""
    mass = sm.Symbol("mass")
    model = Model([x], kinetic_energy=mass * xd**2 / 2, parameters={"mass": 3.0})
    assert model.parameter_symbols == (mass,)
    cm = model.compile()
    assert cm.parameter_names == ("mass",)
    np.testing.assert_array_equal(cm.defaults, [3.0])


# -- numbers ------------------------------------------------------------------------------------
def pendulum_qdd(q, qd, gravity, length):
    """Closed form for the Cartesian pendulum: q'' = (0, -g) + mu (x, y), mu = (g y - |v|^2) / l^2."""
    mu = (gravity * q[1] - qd @ qd) / length**2
    return np.array([0.0, -gravity]) + mu * q, mu


@settings(max_examples=60, deadline=None)
@given(
    angle=st.floats(-math.pi, math.pi),
    rate=st.floats(-5, 5),
    gravity=st.floats(0.1, 30),
    mass=st.floats(0.1, 10),
)
def test_motion_overrides_defaults(angle, rate, gravity, mass):
    model = cartesian_pendulum()
    cm = model.compile()
    length = DEFAULTS[l]
    q = length * np.array([math.sin(angle), -math.cos(angle)])
    qd = length * rate * np.array([math.cos(angle), math.sin(angle)])
    motion = cm.motion(0.0, q, qd, g=gravity, m=mass)
    expected, mu = pendulum_qdd(q, qd, gravity, length)
    np.testing.assert_allclose(motion.qdd, expected, rtol=1e-10, atol=1e-10 * (gravity + rate**2))
    np.testing.assert_allclose(motion.ideal, mass * mu * q, rtol=1e-10, atol=1e-10 * mass * (gravity + rate**2))
    np.testing.assert_allclose(motion.impressed, [0.0, -mass * gravity], rtol=1e-14)
    # The defaults are untouched by the override.
    default_motion = cm.motion(0.0, q, qd)
    default_expected, _ = pendulum_qdd(q, qd, DEFAULTS[g], length)
    np.testing.assert_allclose(default_motion.qdd, default_expected, rtol=1e-10, atol=1e-10 * (10 + rate**2))


def test_unknown_parameter_name_is_named():
    cm = cartesian_pendulum().compile()
    q, qd = np.array([0.0, -1.5]), np.zeros(2)
    with pytest.raises(ValueError, match=r"unknown parameter `gravity`; this model has m, g, l"):
        cm.motion(0.0, q, qd, gravity=1.0)
    with pytest.raises(ValueError, match=r"parameter `g` must be a finite real number"):
        cm.motion(0.0, q, qd, g=math.nan)


def test_bad_state_is_named():
    cm = cartesian_pendulum().compile()
    with pytest.raises(ValueError, match=r"`q` must have shape \(2,\)"):
        cm.motion(0.0, np.zeros(3), np.zeros(2))
    with pytest.raises(ValueError, match=r"`qd` contains a non-finite entry"):
        cm.motion(0.0, np.array([0.0, -1.5]), np.array([0.0, math.inf]))


def test_latex_output():
    model = cartesian_pendulum()
    text = model.latex()
    for name in ("M", "Q", "A", "b", "C"):
        assert rf"\mathbf{{{name}}}" in text
    assert text.startswith(r"\begin{aligned}")
    assert model._repr_latex_().startswith("$$") and r"\mathbf{M}" in model._repr_latex_()
    assert r"\mathbf{A}" in model.latex("A") and r"\mathbf{M}" not in model.latex("A")
    assert r"\dot{x}" in model.latex("b")  # time derivatives as dots
    with pytest.raises(ValueError, match=r"`what` must be one of"):
        model.latex("Z")


def test_argument_order_is_documented():
    doc = compiled_module.__doc__
    lines = [line.strip() for line in doc.splitlines()]
    order = [next(i for i, line in enumerate(lines) if re.match(rf"{name} : ", line)) for name in ("t", "q", "qd", "p")]
    assert order == sorted(order), "the module docstring must list t, q, qd, p in that order"
    assert "model.coordinates" in doc and "model.parameter_symbols" in doc


def test_argument_order_is_the_documented_one():
    """``matrices(t, q, qd, p)`` against the hand-derived formulas evaluated in plain Python.

    A damped pendulum with a rheonomic length makes every argument matter.
    """
    length = l + amp * sm.sin(w * t)
    model = cartesian_pendulum(
        holonomic=[x**2 + y**2 - length**2],
        dissipation=c * (xd**2 + yd**2) / 2,
        parameters={m: 2.0, g: 9.81, l: 1.5, amp: 0.2, w: 3.0, c: 0.3},
    )
    cm = model.compile()
    assert cm.coordinate_names == ("x", "y")
    assert cm.parameter_names == tuple(str(s) for s in model.parameter_symbols) == ("m", "g", "l", "amp", "w", "c")
    tt, q, qd = 0.7, np.array([0.3, -1.2]), np.array([0.4, 0.9])
    p = np.array([2.5, 7.0, 1.3, 0.15, 2.0, 0.4])
    mass, grav, base, a_, om, damp = p
    M, Q, A, b, C = cm.evaluate(tt, q, qd, p)
    L = base + a_ * math.sin(om * tt)
    L_dot = a_ * om * math.cos(om * tt)
    L_ddot = -a_ * om**2 * math.sin(om * tt)
    np.testing.assert_allclose(M, mass * np.eye(2), rtol=1e-14)
    np.testing.assert_allclose(Q, [-damp * qd[0], -mass * grav - damp * qd[1]], rtol=1e-14)
    np.testing.assert_allclose(A, [2 * q], rtol=1e-14)
    np.testing.assert_allclose(b, [-2 * qd @ qd + 2 * (L_dot**2 + L * L_ddot)], rtol=1e-13)
    np.testing.assert_allclose(C, [0.0, 0.0])
    phi, velocity = cm.residuals(tt, q, qd, p)
    np.testing.assert_allclose(phi, [q @ q - L**2], rtol=1e-13)
    np.testing.assert_allclose(velocity, [2 * q @ qd - 2 * L * L_dot], rtol=1e-13)
    h = mass * (qd @ qd) / 2 + mass * grav * q[1]
    assert cm.energy(tt, q, qd, p) == pytest.approx(h, rel=1e-14)


def test_functions_that_math_lacks_fall_back_to_scipy():
    """Elementary functions run on Python floats; a Bessel-function potential ``V = k J0(x)`` falls back to scipy.

    ``J0' = -J1``, so the motion is ``m x'' = k J1(x)``.
    """
    from scipy.special import jv

    pendulum = polar_pendulum().compile()
    assert pendulum.matrices.__globals__["sin"] is math.sin

    stiffness = sm.Symbol("k", positive=True)
    model = Model([x], kinetic_energy=m * xd**2 / 2, potential_energy=stiffness * sm.besselj(0, x),
                  parameters={m: 2.0, stiffness: 3.0})
    cm = model.compile()
    assert "jv" in cm.matrices.__code__.co_names  # scipy's name, not math's
    for position in (0.3, 1.7, -4.0):
        assert cm.motion(0.0, [position], [0.5]).qdd[0] == pytest.approx(3.0 * jv(1, position) / 2.0, rel=1e-13)



@pytest.mark.parametrize("special", ["erf", "besselj"])
def test_array_functions_fall_back_to_scipy_where_numpy_lacks_a_function(special):
    """numpy's printer writes ``math.erf`` (right on one float, a TypeError on an array) and a bare ``besselj``.

    ``V = k erf(x)`` gives ``m x'' = -2 k exp(-x^2) / sqrt(pi)`` (``erf' = 2 exp(-x^2) / sqrt(pi)``);
    ``V = k J0(x)`` gives ``m x'' = k J1(x)`` (``J0' = -J1``). The energy ``m x'^2 / 2 + V`` is checked
    on a batch, the acceleration on single states.
    """
    from scipy.special import erf, jv

    stiffness = sm.Symbol("k", positive=True)
    potential, values, forces = {
        "erf": (sm.erf(x), erf, lambda q: -2 * math.exp(-q**2) / math.sqrt(math.pi)),
        "besselj": (sm.besselj(0, x), lambda q: jv(0, q), lambda q: jv(1, q)),
    }[special]
    model = Model([x], kinetic_energy=m * xd**2 / 2, potential_energy=stiffness * potential,
                  parameters={m: 2.0, stiffness: 3.0})
    cm = model.compile()
    positions, speeds = np.array([[-1.2], [0.3], [2.5]]), np.array([[0.5], [-1.0], [2.0]])
    energy = cm.energy_batch(0.0, positions, speeds, cm.defaults)
    np.testing.assert_allclose(energy, 2.0 * speeds[:, 0] ** 2 / 2 + 3.0 * values(positions[:, 0]), rtol=1e-14)
    for position in positions[:, 0]:
        assert cm.motion(0.0, [position], [0.0]).qdd[0] == pytest.approx(3.0 * forces(position) / 2.0, rel=1e-13)


def test_elementary_models_are_lambdified_with_numpy_alone():
    """No scipy namespace where numpy evaluates every function (lambdify's scipy route imports scipy.special)."""
    x_, y_ = sm.symbols("x y", real=True)
    cm = inclined_line.model().compile()
    for func in (cm.phi, cm.velocity_constraints, cm.energy, cm.powers_data, cm.mass,
                 cm._batch_function("entries"), *cm._terms_functions()):
        assert "scipy" not in func.__globals__ and compiled_module._works_on_arrays(func), func
    for expr in (sm.sin(x_) * sm.exp(y_), sm.Abs(x_), sm.Min(x_, y_), sm.Piecewise((x_, x_ > 0), (0, True))):
        assert "scipy" not in compiled_module._array_function([x_, y_], [expr]).__globals__, expr
    for expr in (sm.erf(x_), sm.gamma(x_), sm.besselj(0, x_)):  # math's name on one float, or no name at all
        assert not compiled_module._works_on_arrays(sm.lambdify([x_], [expr], modules=[np])), expr
        func = compiled_module._array_function([x_, y_], [expr])
        assert "scipy" in func.__globals__ and np.shape(func(np.array([0.5, 1.5]), 0.0)) == (1, 2), expr

def test_motion_agrees_with_core_on_polar_pendulum():
    """Compiled polar pendulum vs udwadia_kalaba on hand-evaluated M, Q, A, b, and vs th'' = -(g/l) sin th."""
    cm = polar_pendulum().compile()
    mass, grav, length = DEFAULTS[m], DEFAULTS[g], DEFAULTS[l]
    angle, rate = 0.8, -1.1
    q, qd = np.array([length, angle]), np.array([0.0, rate])
    motion = cm.motion(0.0, q, qd)
    M = np.diag([mass, mass * length**2])
    Q = np.array([mass * length * rate**2 + mass * grav * math.cos(angle), -mass * grav * length * math.sin(angle)])
    reference = udwadia_kalaba(M, Q, [[1.0, 0.0]], [0.0])
    np.testing.assert_allclose(motion.qdd, reference.qdd, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(motion.qdd, [0.0, -grav / length * math.sin(angle)], rtol=1e-13, atol=1e-13)
    # The ideal force in r is minus the tension: -(m l th'^2 + m g cos th).
    np.testing.assert_allclose(motion.ideal, [-(mass * length * rate**2 + mass * grav * math.cos(angle)), 0.0], rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("params", [{}, {"k": -2.0, "g": 1.62, "c1": -3.0, "c2": 0.5, "m": 4.0}])
def test_inclined_line_example_matches_eq32(params):
    """The catalogue model of Sec. 4 against Eq. (32), generalized to mass m (written out here)."""
    model = inclined_line.model()
    values = {s.name: v for s, v in model.parameters.items()}
    values.update(params)
    k_, g_, c1_, c2_, m_ = (values[n] for n in ("k", "g", "c1", "c2", "m"))
    q0, qd0 = np.zeros(2), np.array([1.0, k_])
    motion = model.compile().motion(0.0, q0, qd0, **params)
    ideal = -m_ * g_ / (k_**2 + 1) * np.array([k_, -1.0])
    nonideal = (c1_ + k_ * c2_) / (k_**2 + 1) * np.array([1.0, k_])
    np.testing.assert_allclose(motion.ideal, ideal, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(motion.nonideal, nonideal, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(motion.qdd, (np.array([0.0, -m_ * g_]) + ideal + nonideal) / m_, rtol=1e-12, atol=1e-12)


def test_documented_attributes_exist():
    """Every attribute the Model docstring lists exists on an instance."""
    model = cartesian_pendulum()
    doc = Model.__doc__
    section = doc[doc.index("Attributes"):]
    names = set(re.findall(r"^    ([a-zA-Z_]\w*(?:, [a-zA-Z_]\w*)*) :", section, flags=re.M))
    listed = {n for group in names for n in group.split(", ")}
    assert {"q", "qd", "qdd", "M", "Q", "A", "b", "C", "phi", "psi", "energy"} <= listed
    for name in listed:
        assert hasattr(model, name), name


# -- construction refuses what would fail later (issue 14) ---------------------------------
def _refused(build, message):
    with pytest.raises(ValueError, match=message):
        build()


def test_construction_refuses_misused_inputs_by_name():
    import sympy as sm
    from sympy.physics.mechanics import dynamicsymbols

    from udk_notebooks import Model
    from udk_notebooks.model import TIME

    x, y, z, F, gamma = dynamicsymbols("x y z F gamma")
    T = (x.diff() ** 2 + y.diff() ** 2) / 2
    _refused(lambda: Model([x, x], kinetic_energy=x.diff() ** 2 / 2), r"`coordinates` lists x\(t\) more than once")
    _refused(lambda: Model([x, y], kinetic_energy=T, potential_energy=z * x),
             r"`potential_energy` uses z\(t\), a function of time that is not one of the `coordinates`")
    _refused(lambda: Model([x, y], kinetic_energy=T, holonomic=[x.diff() - 1]),
             r"`holonomic\[0\]` contains .*nonholonomic")
    _refused(lambda: Model([x, y], kinetic_energy=T, holonomic=[x - sm.nan]), r"`holonomic\[0\]` contains NaN")
    _refused(lambda: Model([x, y], kinetic_energy=T, forces=[sm.oo, 0]), r"`forces\[0\]` contains NaN or an infinity")
    _refused(lambda: Model([x, y], kinetic_energy=T, nonholonomic=[x.diff(TIME, 2)]),
             r"`nonholonomic\[0\]` contains .*without accelerations")
    _refused(lambda: Model([x, y], kinetic_energy=T + x.diff(TIME, 2)), r"`kinetic_energy` contains")
    # A force F(t) that is not declared, and one whose name lambdify would read as math.gamma:
    _refused(lambda: Model([x], kinetic_energy=x.diff() ** 2 / 2, forces=[F]), r"`forces\[0\]` uses F\(t\)")
    _refused(lambda: Model([x], kinetic_energy=x.diff() ** 2 / 2, forces=[gamma]), r"`forces\[0\]` uses gamma\(t\)")


def test_a_prescribed_force_is_an_expression_of_time():
    import numpy as np
    import sympy as sm
    from sympy.physics.mechanics import dynamicsymbols

    from udk_notebooks import Model
    from udk_notebooks.model import TIME

    x = dynamicsymbols("x")
    F0, omega = sm.symbols("F0 omega")
    model = Model([x], kinetic_energy=x.diff() ** 2 / 2, forces=[F0 * sm.sin(omega * TIME)],
                  parameters={F0: 2.0, omega: 3.0})
    motion = model.compile().motion(0.5, [0.0], [0.0])
    np.testing.assert_allclose(motion.qdd, [2.0 * np.sin(1.5)], rtol=1e-15)

# -- refusals at construction (issue 14 "Model construction", issue 11 section 3) ---------------------
def _xyz():
    x, y, z = dynamicsymbols("x y z")
    return x, y, z, (x.diff() ** 2 + y.diff() ** 2) / 2


@pytest.mark.parametrize("name", ["z", "F", "gamma", "sin"])
def test_undeclared_function_of_time_is_refused_by_name(name):
    x, y, _, T = _xyz()
    f = dynamicsymbols(name)
    with pytest.raises(ValueError, match=rf"`potential_energy` uses {name}\(t\), a function of time"):
        Model([x, y], kinetic_energy=T, potential_energy=f * x)
    with pytest.raises(ValueError, match=rf"`forces\[0\]` uses {name}\(t\)"):
        Model([x, y], kinetic_energy=T, forces=[f, 0])


def test_function_of_a_coordinate_and_derivative_of_an_input_are_refused():
    x, y, _, T = _xyz()
    f = sm.Function("f")
    with pytest.raises(ValueError, match=r"`holonomic\[0\]` uses f\(x\(t\)\)"):
        Model([x, y], kinetic_energy=T, holonomic=[y - f(x)])
    u = dynamicsymbols("u")
    with pytest.raises(ValueError, match=r"`nonholonomic\[0\]` uses u\(t\)"):
        Model([x, y], kinetic_energy=T, nonholonomic=[x.diff() - u.diff()])


def test_undeclared_symbol_is_still_refused():
    x, y, _, T = _xyz()
    z = sm.Symbol("z")
    with pytest.raises(ValueError, match=r"symbols z are neither coordinates nor parameters"):
        Model([x, y], kinetic_energy=T, potential_energy=z * x)


def test_velocity_in_holonomic_constraint_is_refused():
    x, y, _, T = _xyz()
    with pytest.raises(ValueError, match=r"`holonomic\[0\]` contains Derivative\(x\(t\), t\): .*pass it in `nonholonomic`"):
        Model([x, y], kinetic_energy=T, holonomic=[x.diff() - 1])


@pytest.mark.parametrize("where", ["nonholonomic", "kinetic_energy", "dissipation", "forces"])
def test_acceleration_is_refused(where):
    x, y, _, T = _xyz()
    xdd = x.diff(dynamicsymbols._t, 2)
    options = {"kinetic_energy": T}
    options[where] = {"nonholonomic": [xdd - y.diff()], "kinetic_energy": T + xdd**2, "dissipation": xdd * x,
                      "forces": [xdd, 0]}[where]
    with pytest.raises(ValueError, match=rf"`{where}(\[0\])?` contains Derivative\(x\(t\), \(t, 2\)\)"):
        Model([x, y], **options)


def test_velocity_in_potential_energy_is_refused():
    x, y, _, T = _xyz()
    with pytest.raises(ValueError, match=r"`potential_energy` contains Derivative\(x\(t\), t\): V depends on coordinates and time only"):
        Model([x, y], kinetic_energy=T, potential_energy=x.diff() * y)


@pytest.mark.parametrize("bad", [sm.nan, sm.oo, -sm.oo, sm.zoo])
@pytest.mark.parametrize("where", ["holonomic", "nonholonomic", "potential_energy", "kinetic_energy", "forces", "nonideal"])
def test_non_finite_number_is_refused(bad, where):
    x, y, _, T = _xyz()
    options = {"kinetic_energy": T}
    expr = {"holonomic": x - bad, "nonholonomic": x.diff() - bad, "potential_energy": bad * x,
            "kinetic_energy": T + bad * x.diff() ** 2, "forces": bad, "nonideal": bad}[where]
    options[where] = [expr, 0] if where in ("forces", "nonideal") else [expr] if where.endswith("holonomic") else expr
    with pytest.raises(ValueError, match=rf"`{where}(\[0\])?` contains NaN or an infinity"):
        Model([x, y], **options)


def test_non_finite_mass_matrix_entry_is_refused():
    x, y, _, _ = _xyz()
    with pytest.raises(ValueError, match=r"`mass_matrix` contains NaN or an infinity"):
        Model([x, y], mass_matrix=sm.Matrix([[1, 0], [0, sm.nan]]))


def test_declared_input_drives_the_model():
    """x'' = F(t)/m with F(t) = F0 sin(w t), and a prescribed motion y = Y(t) as a holonomic constraint."""
    x, y, F, gamma, Y = dynamicsymbols("x y F gamma Y")
    t = dynamicsymbols._t
    m, F0, w, a = sm.symbols("m F0 w a")
    model = Model([x, y], kinetic_energy=m * (x.diff() ** 2 + y.diff() ** 2) / 2, forces=[F + gamma, 0],
                  holonomic=[y - Y], inputs={F: F0 * sm.sin(w * t), gamma: 0 * t, Y: a * sm.cos(w * t)},
                  parameters={m: 2.0, F0: 3.0, w: 1.5, a: 0.2})
    qdd = model.compile().motion(3.0, [0.1, 0.2 * math.cos(4.5)], [0.0, -0.3 * math.sin(4.5)]).qdd
    # gamma(t) = 0 here, never math.gamma(3) = 2.
    assert qdd[0] == pytest.approx(3.0 * math.sin(4.5) / 2.0, rel=1e-14)
    assert qdd[1] == pytest.approx(-0.2 * 1.5**2 * math.cos(4.5), rel=1e-14)


@pytest.mark.parametrize(
    "inputs, message",
    [
        ("F", r"`inputs` must map functions of time"),
        ({sm.Symbol("F"): 1}, r"`inputs`: each key must be a function of time"),
        ({dynamicsymbols("x"): 1}, r"`inputs`: x\(t\) is a coordinate"),
        ({dynamicsymbols("F"): "1 +"}, r"`inputs`: the value of F\(t\) must be a sympy expression"),
    ],
)
def test_bad_inputs_are_named(inputs, message):
    x = dynamicsymbols("x")
    with pytest.raises(ValueError, match=message):
        Model([x], kinetic_energy=x.diff() ** 2 / 2, inputs=inputs)


@pytest.mark.parametrize(
    "params, message",
    [
        ({sm.Symbol("q0"): 2.0}, r"`parameters`: the name 'q0' is reserved"),
        ({sm.Symbol("qd1"): 2.0}, r"`parameters`: the name 'qd1' is reserved"),
        ({sm.Symbol("k"): 2.0, sm.Symbol("k", positive=True): 3.0}, r"`parameters` holds two symbols named 'k'"),
        # Symbol("t") is the model's time itself (issue 22: as a parameter it froze time)
        ({sm.Symbol("t"): 2.0}, r"`parameters`: `t` is the time of the model"),
    ],
)
def test_parameter_names_the_compiled_functions_would_confuse_are_refused(params, message):
    x = dynamicsymbols("x")
    with pytest.raises(ValueError, match=message):
        Model([x], kinetic_energy=x.diff() ** 2 / 2, potential_energy=sum(params) * x**2, parameters=params)


@pytest.mark.parametrize("name", ["math", "lambda", "x", "gamma", "pi", "e", "sqrt", "x0"])
def test_parameter_names_that_look_like_other_things_still_work(name):
    x = dynamicsymbols("x")
    k = sm.Symbol(name)
    model = Model([x], kinetic_energy=x.diff() ** 2 / 2, potential_energy=k * x**2 / 2, parameters={k: 2.0})
    assert model.compile().motion(0.0, [1.5], [0.0]).qdd[0] == pytest.approx(-3.0, rel=1e-15)
