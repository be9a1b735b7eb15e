"""Checks for the exercises of lesson 04, Lagrange's equations and the kinds of constraints.

Expected answers come from routes other than the lesson's formulas: the
kind of a constraint from its symbols and Frobenius' integrability test, the
dissipated power from :class:`udk_notebooks.Model`'s nonconservative force,
the rod tension from the saddle-point system (:func:`udk_notebooks.lagrange_multipliers`),
the student's bead model against Euler-Lagrange in the one minimal coordinate,
and the power of the moving constraint from a simulation. Source: textbook
chapter "Analytical dynamics - an overview" (2003), Eqs. (3.7)-(3.11),
(3.40)-(3.49) and (3.60)-(3.63).
"""

from __future__ import annotations

import functools

import numpy as np
import sympy as sm
from sympy.core.function import AppliedUndef
from sympy.physics.mechanics import dynamicsymbols

from ..core import lagrange_multipliers
from ..examples import chain, growing_circle
from ..model import TIME, Model
from ..simulation import simulate
from ._feedback import AnswerFormError, Feedback, checker, justification, number, predicted

__all__ = ["CONSTRAINTS", "classify", "integral", "check_1", "check_2", "check_3", "check_4", "check_5", "check_6", "check_7"]

KINDS = ("scleronomic", "rheonomic", "nonholonomic")

_x, _y, _z, _theta = dynamicsymbols("x y z theta")
_x1, _y1, _x2, _y2 = dynamicsymbols("x1 y1 x2 y2")
_L, _a = sm.symbols("L a", positive=True)

CONSTRAINTS = {
    "a": ((_x1 - _x2) ** 2 + (_y1 - _y2) ** 2 - _L**2, [_x1, _y1, _x2, _y2]),
    "b": (_x**2 + _y**2 + _z**2 - (_a * TIME) ** 2, [_x, _y, _z]),
    "c": (_x.diff() * sm.sin(_theta) - _y.diff() * sm.cos(_theta), [_x, _y, _theta]),
    "d": (_x * _x.diff() + _y * _y.diff(), [_x, _y]),
}
"""The four constraints of Exercise 1: (expression, coordinates). (a) the chapter's rigid pair,
Eq. (3.8), in the plane; (b) its sphere of growing radius, Eq. (3.10a); (c) a knife edge;
(d) a velocity constraint that is a derivative in disguise."""


def _plain(constraint, coordinates) -> tuple[sm.Expr, list[sm.Symbol], list[sm.Symbol]]:
    """``constraint`` with the coordinates and their rates replaced by plain symbols."""
    q = list(coordinates)
    if not q or not all(isinstance(c, sm.Function) and c.args == (TIME,) for c in q):
        raise ValueError("`coordinates`: give a nonempty list of dynamicsymbols, e.g. dynamicsymbols('x y')")
    # real symbols: sympy then integrates y dx - x dy over x^2 + y^2 to an atan, not to complex logs
    positions = list(sm.symbols(f"p0:{len(q)}", real=True))
    rates = list(sm.symbols(f"v0:{len(q)}", real=True))
    expr = sm.sympify(constraint).xreplace(dict(zip([c.diff(TIME) for c in q], rates))).xreplace(dict(zip(q, positions)))
    if expr.atoms(sm.Derivative) or expr.atoms(AppliedUndef):
        raise ValueError("`constraint` contains accelerations or functions of time that are not in "
                         "`coordinates`; list every coordinate it uses")
    if not expr.free_symbols & set(positions + rates):
        # 1 = 0 or e^t = 0 has no solution, t = 0 holds at one instant: neither restricts a motion
        raise ValueError(f"`constraint` {constraint} contains none of the coordinates, so it constrains nothing "
                         "(or nothing can satisfy it); write a relation between the coordinates, their rates and t")
    return expr, positions, rates


def _without_time_factors(expr: sm.Expr, positions: list) -> sm.Expr:
    """``expr`` with its factors free of the coordinates removed (``e^t (x^2 + y^2 - 1)`` gives ``x^2 + y^2 - 1``).

    A factor ``g(t)`` does not move the zero set of a position row: ``g(t) phi(q) = 0``
    is ``phi(q) = 0`` wherever ``g(t) != 0``, so it must not make the row rheonomic.
    """
    factored = sm.factor(expr)
    if not isinstance(factored, sm.Mul):
        return expr
    kept = [f for f in factored.args if f.free_symbols & set(positions)]
    return sm.Mul(*kept) if kept else expr


def _pfaffian_row(expr: sm.Expr, positions: list, rates: list) -> list[sm.Expr]:
    """The coefficients ``(w_1, ..., w_n, w_t)`` of the Pfaffian form ``w . dq + w_t dt`` of one row.

    A row without rates, ``phi(q, t) = 0``, is replaced by its differential
    ``dphi``; a row affine in the rates, ``w(q, t) . q' + w_t(q, t) = 0``,
    gives its coefficients directly. A row that is not affine in the rates
    has no Pfaffian form and is refused.
    """
    if not expr.free_symbols & set(rates):
        expr = _without_time_factors(expr, positions)
        return [sm.diff(expr, p) for p in positions] + [sm.diff(expr, TIME)]
    weights = [sm.diff(expr, v) for v in rates]
    if any(w.free_symbols & set(rates) for w in weights):
        raise ValueError("`constraint` is not affine in the velocities, so it has no Pfaffian form and this "
                         "integrability test does not apply; write it as w(q, t) . q' + w_t(q, t) = 0")
    time_term = sm.simplify(expr - sum(w * v for w, v in zip(weights, rates)))
    return weights + [time_term]


def _vanishes(expr: sm.Expr, samples: int = 5) -> bool:
    """Whether ``expr`` is identically zero: sympy's ``simplify``, else its value at random points.

    ``simplify`` may miss an identity; an analytic expression that is zero at
    several random points of a box is zero almost surely, so the sampled values
    decide then. Every free symbol (coordinates, time, parameters) is drawn in
    [0.3, 1.7], where the chapter's expressions are defined.
    """
    expr = sm.sympify(expr)
    if sm.simplify(expr) == 0:
        return True
    rng = np.random.default_rng(19)
    symbols = sorted(expr.free_symbols, key=str)
    for _ in range(samples):
        point = {s: sm.Float(rng.uniform(0.3, 1.7)) for s in symbols}
        value = complex(expr.xreplace(point).evalf())
        if abs(value) > 1e-9:
            return False
    return True


def _frobenius_integrable(rows: list[list[sm.Expr]], variables: list[sm.Symbol]) -> bool:
    """Frobenius' test for the Pfaffian rows ``omega_i`` in the variables ``(q, t)``.

    The rows are integrable (there are functions ``f_i(q, t)`` whose level sets
    are the motions the rows allow) exactly when every ``d omega_i`` vanishes on
    pairs of vectors that all rows annihilate: ``d omega_i(X, Y) = 0`` for
    ``X, Y`` in the kernel. For one row in three variables this is
    ``w . curl(w) = 0``.
    """
    matrix = sm.Matrix(rows)
    kernel = matrix.nullspace(simplify=True)
    for row in rows:
        # d omega (X, Y) = sum_jk (d_j w_k - d_k w_j) X_j Y_k
        curl = sm.Matrix(len(variables), len(variables),
                         lambda j, k: sm.diff(row[k], variables[j]) - sm.diff(row[j], variables[k]))
        for a in range(len(kernel)):
            for b in range(a + 1, len(kernel)):
                if not _vanishes((kernel[a].T * curl * kernel[b])[0]):
                    return False
    return True


def classify(constraint, coordinates) -> str:
    """The kind of a constraint ``f(q, q', t) = 0`` (or of a set of rows): scleronomic, rheonomic or nonholonomic.

    A constraint without velocities is holonomic: rheonomic when time appears
    explicitly in a factor that holds a coordinate, scleronomic otherwise
    (``e^t (x^2 + y^2 - 1) = 0`` is the fixed circle) (textbook chapter "Analytical dynamics -
    an overview", 2003, Eq. 3.7). A constraint affine in the velocities,
    ``w(q, t) . q' + w_t(q, t) = 0``, is the Pfaffian form
    ``omega = w . dq + w_t dt = 0`` on the motions; it is holonomic exactly
    when ``omega`` is integrable, i.e. some factor ``mu(q, t)`` makes
    ``mu omega = df`` exact, so that the row says ``df/dt = 0`` (Frobenius'
    theorem; for one row ``omega ^ d omega = 0``). The time term counts: ``x' - 1 = 0``
    is ``d(x - t) = 0``, a rheonomic holonomic constraint. An integrable set is
    scleronomic when no row has a time term (then ``f`` can be chosen free of
    ``t``) and rheonomic otherwise. :func:`integral` finds ``f`` where sympy can.

    Parameters
    ----------
    constraint : sympy expression or list of them
        ``f(q, q', t)`` in dynamicsymbols; a list is tested as one set of rows
        (two rows can be integrable together although neither is alone).
    coordinates : sequence of sympy dynamicsymbols
        Every coordinate the constraint uses.

    Returns
    -------
    str
        One of ``KINDS``.

    Raises
    ------
    ValueError
        When a row is not affine in the velocities (no Pfaffian form: the test
        does not apply), or a coordinate is missing from ``coordinates``.
    """
    rows = list(constraint) if isinstance(constraint, (list, tuple)) else [constraint]
    if not rows:
        raise ValueError("`constraint`: give one expression or a nonempty list of them")
    plain = [_plain(row, coordinates) for row in rows]
    positions, rates = plain[0][1], plain[0][2]
    if all(not expr.free_symbols & set(rates) for expr, _, _ in plain):
        moving = any(TIME in _without_time_factors(expr, positions).free_symbols for expr, _, _ in plain)
        return "rheonomic" if moving else "scleronomic"
    pfaffian = [_pfaffian_row(expr, positions, rates) for expr, _, _ in plain]
    if not _frobenius_integrable(pfaffian, positions + [TIME]):
        return "nonholonomic"
    return "rheonomic" if any(not _vanishes(row[-1]) for row in pfaffian) else "scleronomic"


def _exact_potential(form: list[sm.Expr], variables: list[sm.Symbol]) -> sm.Expr | None:
    """``f`` with ``df = form`` when the form is exact and sympy integrates it, else None."""
    for j in range(len(variables)):
        for k in range(j + 1, len(variables)):
            if not _vanishes(sm.diff(form[j], variables[k]) - sm.diff(form[k], variables[j])):
                return None
    potential = sm.Integer(0)
    for component, variable in zip(form, variables):
        rest = sm.simplify(component - sm.diff(potential, variable))
        if rest != 0:
            part = sm.integrate(rest, variable)
            if part.has(sm.Integral):
                return None
            potential += part
    if all(_vanishes(sm.diff(potential, v) - c) for v, c in zip(variables, form)):
        return sm.simplify(potential)
    return None


def integral(constraint, coordinates):
    """A function ``f(q, t)`` whose constancy is the velocity constraint, found where sympy can.

    Tries the integrating factors ``1``, ``1 / w_k`` for each coefficient of
    the Pfaffian form ``w . dq + w_t dt`` and ``1 / |w|^2``, and returns the
    potential of the first form that is exact (textbook chapter, 2003, the
    integrability discussion after Eq. 3.11).

    Parameters
    ----------
    constraint : sympy expression
        One row ``w(q, t) . q' + w_t(q, t) = 0`` in dynamicsymbols.
    coordinates : sequence of sympy dynamicsymbols

    Returns
    -------
    sympy expression or None
        ``f`` in the coordinates and ``t`` (the row says ``f = const``), or
        None when no factor tried makes the form exact (for a nonholonomic row
        there is none; for some integrable rows sympy's search fails).
    """
    expr, positions, rates = _plain(constraint, coordinates)
    form = _pfaffian_row(expr, positions, rates)
    variables = positions + [TIME]
    nonzero = [w for w in form if w != 0]
    # 1 / gcd removes a common factor such as e^t in e^t (x x' + y y')
    factors = [sm.Integer(1), 1 / sm.gcd_list(nonzero)] + [1 / w for w in nonzero] + [1 / sum(w**2 for w in form)]
    for factor in factors:
        potential = _exact_potential([sm.simplify(factor * w) for w in form], variables)
        if potential is not None:
            return potential.xreplace(dict(zip(positions, coordinates)))
    return None


def _kind(answer, name: str) -> str:
    form = f"`{name}` should be one of the strings {', '.join(repr(k) for k in KINDS)}"
    if not isinstance(answer, str):
        raise AnswerFormError(f"{form}; got {answer!r}")
    word = answer.strip().lower()
    if word == "holonomic":
        raise AnswerFormError(f"{form}: say which kind of holonomic constraint, 'scleronomic' or 'rheonomic'")
    if word not in KINDS:
        raise AnswerFormError(f"{form}; got {answer!r}")
    return word


@checker("four strings, each 'scleronomic', 'rheonomic' or 'nonholonomic'")
def check_1(kind_a, kind_b, kind_c, kind_d) -> Feedback:
    """Exercise 1: the kind of each of the four constraints in ``CONSTRAINTS``.

    Parameters
    ----------
    kind_a, kind_b, kind_c, kind_d : str
        ``"scleronomic"``, ``"rheonomic"`` or ``"nonholonomic"``.

    Returns
    -------
    Feedback
        Compared with :func:`classify`.
    """
    answers = {"a": kind_a, "b": kind_b, "c": kind_c, "d": kind_d}
    read = {key: _kind(value, f"kind_{key}") for key, value in answers.items()}
    wrong = [key for key, (expr, coords) in CONSTRAINTS.items() if read[key] != classify(expr, coords)]
    if not wrong:
        return Feedback(True, "(a) scleronomic, (b) rheonomic, (c) nonholonomic, and (d) scleronomic: "
                              "x x' + y y' is the time derivative of (x^2 + y^2) / 2.")
    hints = {
        "a": "(a) contains positions only; does time appear in it?",
        "b": "(b) contains positions only, but the radius a t changes with time.",
        "c": "(c) restricts velocities; can it be written as the time derivative of some f(x, y, theta)?",
        "d": "(d) contains velocities, but is it the time derivative of a function of x and y?",
    }
    return Feedback(False, " ".join(hints[key] for key in wrong))


DAMPED = {"m": 0.5, "l": 0.8, "c": 0.3, "g": 9.81, "theta": 0.4, "rate": 2.0}


@functools.cache
def _damped_pendulum() -> Model:
    theta = dynamicsymbols("theta")
    m, l, c, g = sm.symbols("m l c g", positive=True)
    return Model(
        [theta],
        kinetic_energy=m * l**2 * theta.diff() ** 2 / 2,
        potential_energy=-m * g * l * sm.cos(theta),
        dissipation=c * (l * theta.diff()) ** 2 / 2,  # the bob's speed is l theta'
        parameters={m: DAMPED["m"], l: DAMPED["l"], c: DAMPED["c"], g: DAMPED["g"]},
    )


@checker("a number: the rate of change of the energy in W")
def check_2(energy_rate) -> Feedback:
    """Exercise 2: ``dE/dt`` of a pendulum with viscous damping on its bob.

    The bob (0.5 kg, rod 0.8 m, damping coefficient 0.3 N s/m on the bob's
    velocity) passes ``theta = 0.4`` rad at ``theta' = 2`` rad/s.

    Parameters
    ----------
    energy_rate : float
        ``d(T + V)/dt`` in watts.

    Returns
    -------
    Feedback
        Compared with the power of the nonconservative (Rayleigh) force that
        :class:`udk_notebooks.Model` derives, ``q' . (-dD/dq')``.
    """
    value = number(energy_rate, name="energy_rate", unit="W")
    model = _damped_pendulum()
    power = (model.nonconservative_force.T * model.qd)[0]  # q' . (-dD/dq'): Rayleigh's force only
    reference = float(power.subs(model.qd[0], DAMPED["rate"]).subs(model.q[0], DAMPED["theta"]).subs(model.parameters))
    if abs(value - reference) <= 1e-9 * abs(reference):
        return Feedback(True, f"dE/dt = {reference:.6f} W = -2 D: viscous damping takes out twice the dissipation function.")
    if value > 0:
        return Feedback(False, "damping takes energy out, so dE/dt is negative.")
    if abs(2 * value - reference) <= 1e-9 * abs(reference):
        return Feedback(False, "that is -D; the energy theorem (Eq. 3.63) has the factor 2, because D is quadratic in the velocities.")
    return Feedback(False, "use Eq. (3.63), dE/dt = -2 D, with D = c v^2 / 2 and the bob's speed v = l theta'.")


TENSION = {"m": 1.0, "l": 1.5, "g": 9.81, "angle": 0.5, "rate": 1.2}


@checker("a number: the tension in N")
def check_3(tension) -> Feedback:
    """Exercise 3: the rod tension of the Cartesian pendulum from its Lagrange multiplier.

    Mass 1 kg, rod 1.5 m, at 0.5 rad from the downward vertical, swinging at 1.2 rad/s.

    Parameters
    ----------
    tension : float
        The pull of the rod on the bob, in newtons (positive).

    Returns
    -------
    Feedback
        Compared with ``|A^T lambda|`` from the saddle-point system
        (:func:`udk_notebooks.lagrange_multipliers`) of ``chain.cartesian_pendulum``.
    """
    value = number(tension, name="tension", unit="N")
    params = {k: TENSION[k] for k in ("m", "l", "g")}
    compiled = chain.cartesian_pendulum(**params).compile()
    q, qd = chain.pendulum_initial_state(TENSION["angle"], TENSION["rate"], **params)
    M, Q, A, b, _ = compiled.evaluate(0.0, q, qd, compiled.parameters())
    _, lam = lagrange_multipliers(M, Q, A, b)
    reference = float(np.linalg.norm(A.T @ lam))
    if abs(value - reference) <= 1e-6 * reference:
        return Feedback(True, f"The rod pulls with {reference:.6f} N: the weight's component along the rod "
                              "plus the centripetal force m l theta'^2.")
    weight_part = TENSION["m"] * TENSION["g"] * np.cos(TENSION["angle"])
    if abs(value - weight_part) <= 1e-3 * weight_part:
        return Feedback(False, "that balances only the weight along the rod; the bob also moves on a circle and needs m l theta'^2 towards the pivot.")
    if value < 0:
        return Feedback(False, "give the size of the pull, a positive number (the multiplier's sign depends on how the constraint is written).")
    return Feedback(False, "along the rod, Newton's law for circular motion gives T - m g cos(theta) = m l theta'^2.")


BEAD = {"m": 0.2, "kappa": 0.5, "g": 9.81}


def _bead_minimal_acceleration(x_value: float, rate: float) -> float:
    """x'' of the bead on y = kappa x^2 from Euler-Lagrange in the single coordinate x."""
    x = sm.Symbol("x")
    v = sm.Symbol("v")
    acc = sm.Symbol("acc")
    m, kappa, g = BEAD["m"], BEAD["kappa"], BEAD["g"]
    lagrangian = m * (1 + 4 * kappa**2 * x**2) * v**2 / 2 - m * g * kappa * x**2
    momentum = sm.diff(lagrangian, v)
    # d/dt of the momentum along the motion, with x' = v and v' = acc
    euler_lagrange = sm.diff(momentum, x) * v + sm.diff(momentum, v) * acc - sm.diff(lagrangian, x)
    solution = sm.solve(euler_lagrange, acc)[0]
    return float(solution.subs({x: x_value, v: rate}))


@checker("a udk.Model with coordinates (x, y)")
def check_4(bead_model) -> Feedback:
    """Exercise 4 (code): a bead on the wire ``y = kappa x^2`` as a :class:`udk_notebooks.Model`.

    Mass 0.2 kg, ``kappa = 0.5`` 1/m, gravity 9.81 m/s^2 along ``-y``, no friction.

    Parameters
    ----------
    bead_model : Model
        Coordinates ``(x, y)`` in that order.

    Returns
    -------
    Feedback
        The model's ``x''`` at several states on the wire is compared with
        Euler-Lagrange in the one minimal coordinate ``x``.
    """
    if not isinstance(bead_model, Model):
        raise AnswerFormError(f"`bead_model` should be a udk.Model (udk.Model([x, y], ...)); got {bead_model!r}")
    if bead_model.n != 2:
        return Feedback(False, f"the model has {bead_model.n} coordinates; use the two coordinates x and y.")
    if bead_model.A.shape[0] != 1:
        return Feedback(False, f"the model has {bead_model.A.shape[0]} constraint rows; the wire is one holonomic constraint.")
    compiled = bead_model.compile()
    kappa = BEAD["kappa"]
    for x_value, rate in ((0.0, 1.0), (0.7, -0.4), (-1.3, 2.0), (2.0, 0.0)):
        q = [x_value, kappa * x_value**2]
        qd = [rate, 2 * kappa * x_value * rate]
        phi, velocity = compiled.residuals(0.0, np.array(q), np.array(qd), compiled.parameters())
        if np.abs(phi).max() > 1e-9 or np.abs(velocity).max() > 1e-9:
            return Feedback(False, f"the state x = {x_value}, y = kappa x^2 does not satisfy your constraint; "
                                   "write the wire as y - kappa x^2 = 0 with kappa = 0.5.")
        expected = _bead_minimal_acceleration(x_value, rate)
        got = compiled.motion(0.0, q, qd).qdd
        if not np.isclose(got[0], expected, rtol=1e-9, atol=1e-9):
            return Feedback(False, f"at x = {x_value} m, x' = {rate} m/s your model gives x'' = {got[0]:.6f} m/s^2, "
                                   "but Lagrange's equation in x alone disagrees: check the mass, gravity (V = m g y) "
                                   "and the kinetic energy m (x'^2 + y'^2) / 2.")
    return Feedback(True, "Your Cartesian model with its constraint moves exactly as Lagrange's equation in the "
                          "single coordinate x says, at four states.")


@checker("a number: the power in W")
def check_5(ideal_power) -> Feedback:
    """Exercise 5: the power of the ideal force on the growing circle at ``t = 2`` s.

    The catalogue's default circle (``m = 1``, ``a = 0.5``, ``R0 = 1``, no
    gravity), started at tangential speed 2 m/s.

    Parameters
    ----------
    ideal_power : float
        ``q' . F^L`` at ``t = 2`` s, in watts.

    Returns
    -------
    Feedback
        Compared with the ideal power recorded by a DOP853 simulation.
    """
    value = number(ideal_power, name="ideal_power", unit="W")
    q0, qd0 = growing_circle.initial_state(speed=2.0)
    run = simulate(growing_circle.model(), (0.0, 2.0), q0, qd0, method="DOP853", rtol=1e-11, atol=1e-12,
                   t_eval=np.array([0.0, 2.0]))
    reference = float(run.power["ideal"][-1])
    if abs(value - reference) <= 1e-6 * abs(reference):
        return Feedback(True, f"The power of the ideal force at t = 2 s is {reference:.6f} W, although it "
                              "does no virtual work: the circle moves.")
    if value == 0:
        return Feedback(False, "the ideal force does no *virtual* work, but the actual velocity has the radial part "
                               "R' = a, which is not a virtual displacement.")
    if value > 0:
        return Feedback(False, "the force points inwards while the circle carries the particle outwards: the power is negative.")
    return Feedback(False, "with j = R(0) v0 = R^2 phi' conserved, F^L = -m j^2 / R^3 along the radius, and the radial velocity is a.")


@checker("prediction: 'scleronomic', 'rheonomic' or 'nonholonomic'; reasoning: a sentence")
def check_6(prediction, reasoning) -> Feedback:
    """Exercise 6 (predict and justify): the kind of ``x' + t x = 0``.

    Parameters
    ----------
    prediction : str
        ``"scleronomic"``, ``"rheonomic"`` or ``"nonholonomic"``.
    reasoning : str
        Why, in a sentence or two.

    Returns
    -------
    Feedback
        Compared with :func:`classify` (Frobenius' test on the Pfaffian form with its time term).
    """
    word = _kind(prediction, "prediction")
    text = justification(reasoning, name="reasoning")
    x = dynamicsymbols("x")
    expected = classify(x.diff(TIME) + TIME * x, [x])
    model_answer = ("the row is affine in x' with a time term: the form dx + t x dt times the factor 1/x is "
                    "d(ln x + t^2/2), exact, so the row says x e^(t^2/2) = const, a holonomic constraint that "
                    "depends on time: rheonomic. A velocity in the row does not make it nonholonomic.")
    return predicted(word == expected, text, model_answer,
                     "a row with velocities can still be integrable; try an integrating factor.")


SPHERE_COORDINATES = ("X", "Y", "phi", "theta", "psi")
"""The names of the rolling sphere's coordinates in Exercise 7: the centre (X, Y) and the Euler angles (z-x-z)."""


def _sphere_reference() -> tuple[list, list]:
    """The rolling sphere's rows ``v_O + omega x (C - O) = 0`` (textbook Eq. 3.11a) in Euler angles (Eq. 3.11b)."""
    X, Y, phi, theta, psi = dynamicsymbols(" ".join(SPHERE_COORDINATES))
    R = sm.Symbol("R", positive=True)
    omega_x = theta.diff(TIME) * sm.cos(phi) + psi.diff(TIME) * sm.sin(theta) * sm.sin(phi)
    omega_y = theta.diff(TIME) * sm.sin(phi) - psi.diff(TIME) * sm.sin(theta) * sm.cos(phi)
    # C - O = -R e_z, so v_O = R omega x e_z = R (omega_y, -omega_x, 0)
    return [X.diff(TIME) - R * omega_y, Y.diff(TIME) + R * omega_x], [X, Y, phi, theta, psi]


def _velocity_rows(rows, coordinates, point) -> np.ndarray:
    """The coefficients of the velocities in ``rows`` at a numeric point (coordinates, R and t by name)."""
    rates = [c.diff(TIME) for c in coordinates]
    matrix = sm.Matrix([[sm.diff(row, v) for v in rates] for row in rows])
    values = {c: point[str(c.func)] for c in coordinates}
    values.update({s: point[s.name] for s in matrix.free_symbols if isinstance(s, sm.Symbol) and s.name in point})
    return np.array(matrix.subs(values).evalf(), dtype=float)


@checker("sphere_rows: a list of two sympy expressions in X, Y, phi, theta, psi and R; sphere_kind: a string")
def check_7(sphere_rows, sphere_kind) -> Feedback:
    """Exercise 7: the rolling sphere's two rows (textbook Eq. 3.11) and their kind.

    Parameters
    ----------
    sphere_rows : list of two sympy expressions
        The no-slip rows in the dynamicsymbols ``X, Y, phi, theta, psi`` and
        the radius ``R``, each ``= 0``.
    sphere_kind : str
        ``"scleronomic"``, ``"rheonomic"`` or ``"nonholonomic"`` for the pair.

    Returns
    -------
    Feedback
        The rows must span the same velocity rows as the reference at five
        random configurations (any scaling or combination is accepted); the
        kind is compared with :func:`classify` on the pair.
    """
    if not isinstance(sphere_rows, (list, tuple)) or len(sphere_rows) != 2:
        raise AnswerFormError(f"`sphere_rows` should be a list of two sympy expressions; got {sphere_rows!r:.60}")
    try:
        student = [sm.sympify(row) for row in sphere_rows]
    except (sm.SympifyError, TypeError):
        raise AnswerFormError("`sphere_rows` should hold sympy expressions in X, Y, phi, theta, psi") from None
    kind = _kind(sphere_kind, "sphere_kind")
    reference, coordinates = _sphere_reference()
    by_name = {str(c.func): c for c in coordinates}
    renamed = []
    for row in student:
        functions = {f: by_name[str(f.func)] for f in row.atoms(AppliedUndef) if str(f.func) in by_name}
        unknown = [str(f.func) for f in row.atoms(AppliedUndef) if str(f.func) not in by_name]
        if unknown:
            raise AnswerFormError(f"`sphere_rows` uses {', '.join(unknown)}; use only X, Y, phi, theta, psi "
                                  "(dynamicsymbols) and the symbol R")
        renamed.append(row.xreplace(functions))
    rates = [c.diff(TIME) for c in coordinates]
    if any(not sm.simplify(row.subs(dict.fromkeys(rates, 0))) == 0 for row in renamed):
        return Feedback(False, "each row should be a velocity relation with no term free of velocities: the "
                               "contact point's velocity v_O + omega x (C - O) is zero.")
    rng = np.random.default_rng(311)
    for _ in range(5):
        # a random time too: a row whose coefficients carry t must not pass by being read at t = 0
        point = dict(zip(SPHERE_COORDINATES, rng.uniform(0.2, 1.4, 5)), R=float(rng.uniform(0.5, 2.0)),
                     t=float(rng.uniform(0.5, 3.0)))
        mine = _velocity_rows(renamed, coordinates, point)
        theirs = _velocity_rows(reference, coordinates, point)
        if np.linalg.matrix_rank(mine, tol=1e-9) != 2 or np.linalg.matrix_rank(np.vstack([mine, theirs]), tol=1e-9) != 2:
            return Feedback(False, "your rows allow other velocities than rolling does: with the contact point "
                                   "C - O = -R e_z, rolling says v_O = R omega x e_z = R (omega_y, -omega_x, 0).")
    expected = classify(reference, coordinates)
    if kind != expected:
        return Feedback(False, f"the rows are right, but as a pair they are {expected}: run ex.classify on the list "
                               "of both rows (Frobenius' test for a set); rolling reaches every configuration.")
    return Feedback(True, "Both rows match Eq. (3.11b), and the pair fails Frobenius' test: the rolling sphere is "
                          "nonholonomic, as the chapter says; it can reach any position and orientation by rolling.")

