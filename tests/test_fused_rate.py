"""The joined right-hand side of ``CompiledModel.plain_rate`` (``udk_notebooks._fused``) against the unjoined routes.

``plain_rate`` joins the lambdified entries and the generated solver (the
float Cholesky of an unconstrained model, the scalar kernel of a constant
diagonal ``M``) into one function and computes the parameter-only statements
once. It must give bitwise the ``q''`` of ``CompiledModel.accelerations``
(the same operations in the same order), agree with the general solver
``core.udwadia_kalaba`` (Udwadia & Kalaba, "A new perspective on constrained
motion", 1992, Eq. 7) to rounding, and hand every state its solver declines,
or whose entries fail, to the general route.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sm
from sympy.physics.mechanics import dynamicsymbols

from udk_notebooks import _fused
from udk_notebooks.core import udwadia_kalaba
from udk_notebooks.examples import double_pendulum, kepler, rolling_disk
from udk_notebooks.model import Model
from udk_notebooks.simulation import simulate

t = dynamicsymbols._t
x, y = dynamicsymbols("x y")
c = sm.symbols("c", positive=True)
FUSED = "<udk_notebooks fused rate>"


def is_fused(rate) -> bool:
    return rate.__code__.co_filename == FUSED


def random_states(cm, rng, count, bodies="rods"):
    for _ in range(count):
        q, qd = rng.uniform(-3, 3, 2), rng.uniform(-4, 4, 2)
        if cm.n == 6:
            q, qd = double_pendulum.to_cartesian(q, qd, bodies)
            q = q + rng.normal(0, 1e-3, 6)  # off the constraints too: the route must not rely on them
        yield q, qd


def mismatch(cm, rate, p, states) -> float:
    """Largest difference of ``rate`` from the general solver on ``states``, relative to the accelerations."""
    worst = 0.0
    for q, qd in states:
        M, Q, A, b, C = cm.evaluate(0.4, q, qd, p)
        general = udwadia_kalaba(M, Q, A, b).qdd
        got = rate(0.4, np.concatenate([q, qd]))
        assert np.array_equal(got[: cm.n], qd)
        worst = max(worst, float(np.abs(got[cm.n :] - general).max() / max(1.0, np.abs(general).max())))
    return worst


@pytest.fixture(scope="module")
def models():
    return {(form, bodies): getattr(double_pendulum, f"{form}_model")(bodies).compile()
            for form in ("minimal", "cartesian") for bodies in ("rods", "points")}


@pytest.mark.parametrize(("form", "bodies"), [("minimal", "rods"), ("minimal", "points"), ("cartesian", "rods")])
def test_fused_rate_is_bitwise_the_plain_route_and_agrees_with_the_general_solver(models, form, bodies):
    cm = models[form, bodies]
    rng = np.random.default_rng(23)
    for _ in range(10):
        p = cm.parameters(m1=rng.uniform(0.1, 5), m2=rng.uniform(0.1, 5), l1=rng.uniform(0.1, 3),
                          l2=rng.uniform(0.1, 3), g=rng.uniform(0, 20), k1=rng.uniform(0, 50), k2=rng.uniform(0, 50))
        rate = cm.plain_rate(p)
        assert is_fused(rate)  # the joined route is the one under test
        states = list(random_states(cm, rng, 10, bodies))
        for q, qd in states:
            expected = np.concatenate([qd, cm.accelerations(0.7, q, qd, p)])
            assert np.array_equal(rate(0.7, np.concatenate([q, qd])), expected)
        assert mismatch(cm, rate, p, states) < 1e-12


def test_a_wrong_fused_solver_is_caught_by_the_comparison(models):
    """The comparison above has teeth: one flipped sign in the kernel's last statement shows as a mismatch."""
    cm = models["cartesian", "rods"]
    lines, names = cm.kernel.fused_parts()
    wrong = [line.replace("a2 + F2 * w2", "a2 - F2 * w2") for line in lines]
    assert wrong != lines
    make = _fused.fuse(cm.matrices, cm.n, wrong, ", ".join(f"w{j}" for j in range(6)), names,
                       {"bound": cm.kernel.bound})
    p = cm.parameters()
    rate = make(p.tolist(), cm.kernel.mass_factors(p), None)
    states = list(random_states(cm, np.random.default_rng(2), 5))
    assert mismatch(cm, rate, p, states) > 1e-3
    assert mismatch(cm, cm.plain_rate(p), p, states) < 1e-12


def test_parameter_only_statements_move_to_the_set_up(models):
    cm = models["cartesian", "rods"]
    cm.plain_rate(cm.parameters())
    source = cm._symbolic["fused_rate"].source
    setup, per_call = source.split("    def rate(t, y):")
    # gravity over the masses (D^-1 Q of the x and y rows) and the unit coefficients of A: once per parameter vector
    assert "a1 = " in setup and "a4 = " in setup and "W0_0 = " in setup
    assert "a1 = " not in per_call and "e4 * " not in per_call and "cos(v_q2)" in per_call


@pytest.mark.parametrize("form", ["minimal", "cartesian"])
def test_runs_on_the_fused_rate_are_the_runs_of_the_unfused_one(models, form, monkeypatch):
    """Bitwise the same right-hand side, so Hairer's DOP853 takes the same steps: the same trajectory to the bit."""
    cm = models[form, "rods"]
    q0, qd0 = double_pendulum.initial_state(2.0, 1.0)
    if form == "cartesian":
        q0, qd0 = double_pendulum.to_cartesian(q0, qd0)
    options = dict(method="dop853", rtol=1e-9, atol=1e-9, t_eval=np.linspace(0.0, 2.0, 41), on_singular="ignore")
    fused = simulate(cm, (0.0, 2.0), q0, qd0, **options)
    monkeypatch.setattr(type(cm), "_fused_rate", lambda self, p, general: None)
    unfused = simulate(cm, (0.0, 2.0), q0, qd0, **options)
    assert np.array_equal(fused.q, unfused.q) and np.array_equal(fused.qd, unfused.qd)


@pytest.mark.parametrize("method", ["rk4", "euler"])
@pytest.mark.parametrize("form", ["minimal", "cartesian"])
def test_fixed_steps_on_the_fused_rate_are_the_steps_of_the_segment_rate(models, form, method, monkeypatch):
    """The fixed-step route takes ``plain_rate`` where there are no modes and no stabilization: the same run to the bit
    as on ``_Segment.rate`` (the general plain route), singular-configuration monitor on."""
    from udk_notebooks import simulation

    cm = models[form, "rods"]
    q0, qd0 = double_pendulum.initial_state(2.0, 1.0)
    if form == "cartesian":
        q0, qd0 = double_pendulum.to_cartesian(q0, qd0)
    options = dict(method=method, step=0.01, t_eval=np.linspace(0.0, 1.0, 21))
    calls = []
    plain_rate = type(cm).plain_rate
    monkeypatch.setattr(type(cm), "plain_rate", lambda self, p: calls.append(1) or plain_rate(self, p))
    fused = simulate(cm, (0.0, 1.0), q0, qd0, **options)
    assert calls, "the fixed-step run did not take plain_rate"
    monkeypatch.setattr(simulation._Segment, "__init__", _segment_on_its_own_rate(simulation._Segment.__init__))
    unfused = simulate(cm, (0.0, 1.0), q0, qd0, **options)
    for name in ("t", "q", "qd", "qdd", "ideal", "energy"):
        assert np.array_equal(getattr(fused, name), getattr(unfused, name)), name


def _segment_on_its_own_rate(init):
    """``_Segment.__init__`` whose ``rhs`` is its own :meth:`rate` (the route before ``plain_rate`` was taken)."""
    from udk_notebooks import simulation

    def patched(self, cm, p, modes, stabilization, budget=None):
        init(self, cm, p, modes, stabilization, budget)
        self.rhs = simulation._counted_rate(self.rate, budget)

    return patched


@pytest.mark.parametrize("build", [kepler.model, rolling_disk.model], ids=["kepler", "rolling disk"])
def test_other_catalogue_models_fuse_the_same_way(build):
    cm = build().compile()
    p = cm.parameters()
    rate = cm.plain_rate(p)
    rng = np.random.default_rng(4)
    for _ in range(20):
        q, qd = rng.uniform(0.5, 2.0, cm.n), rng.uniform(-1, 1, cm.n)
        expected = np.concatenate([qd, cm.accelerations(0.2, q, qd, p)])
        assert np.array_equal(rate(0.2, np.concatenate([q, qd])), expected)


def test_entries_that_fail_are_reported_by_the_general_route():
    # (1 + x^2) x'' + x x'^2 = -c / sqrt(x) (a mass of the state: the float Cholesky): no entries for x < 0
    falling = Model([x], kinetic_energy=(1 + x**2) * x.diff(t) ** 2 / 2, potential_energy=2 * c * sm.sqrt(x),
                    parameters={c: 1.0})
    cm = falling.compile()
    rate = cm.plain_rate(cm.parameters())
    assert is_fused(rate)
    assert np.allclose(rate(0.0, np.array([4.0, 0.0])), [0.0, -0.5 / 17], rtol=1e-15)
    with pytest.raises(ValueError, match="cannot be evaluated at t = 0"):
        rate(0.0, np.array([-1.0, 0.0]))


def test_a_singular_mass_matrix_goes_to_the_general_route():
    # M = x^2: the float Cholesky declines at x = 0, and the general route decides there as accelerations does
    odd = Model([x], kinetic_energy=x**2 * x.diff(t) ** 2 / 2, potential_energy=x**2 / 2)
    cm = odd.compile()
    p = cm.parameters()
    rate = cm.plain_rate(p)
    assert is_fused(rate)
    assert np.allclose(rate(0.0, np.array([2.0, 0.5])), np.concatenate([[0.5], cm.accelerations(0.0, np.array([2.0]), np.array([0.5]), p)]))
    with pytest.raises(Exception) as fused_error:
        rate(0.0, np.array([0.0, 0.5]))
    with pytest.raises(Exception) as plain_error:
        cm.accelerations(0.0, np.array([0.0]), np.array([0.5]), p)
    assert type(fused_error.value) is type(plain_error.value) and str(fused_error.value) == str(plain_error.value)


def test_dependent_rows_go_to_the_general_route():
    # rows (2x, 2y) and (1, 0): dependent where y = 0, so the scalar kernel declines there
    particle = Model([x, y], kinetic_energy=(x.diff(t) ** 2 + y.diff(t) ** 2) / 2, potential_energy=y,
                     holonomic=[x**2 + y**2 - 1, x - 1])
    cm = particle.compile()
    p = cm.parameters()
    rate = cm.plain_rate(p)
    assert is_fused(rate)
    for state in ([1.0, 0.0, 0.0, 0.0], [0.6, 0.8, 0.0, 0.0]):
        y0 = np.array(state)
        try:
            expected = np.concatenate([y0[2:], cm.accelerations(0.0, y0[:2], y0[2:], p)])
        except Exception as exc:  # the general route refuses: the fused rate must refuse alike
            with pytest.raises(type(exc)):
                rate(0.0, y0)
        else:
            assert np.array_equal(rate(0.0, y0), expected)


def test_the_exclusive_column_bound_never_accepts_an_ill_conditioned_gram_matrix():
    """Rows (eps, 1, 0) and (0, 1, eps): x and z are each row's own column, and cond_1(G) grows like 4 / eps^2.

    The kernel (and with it the fused rate) must vouch only for Gram matrices whose 1-norm condition number
    is below 1 / GRAM_RCOND, however the bound it uses first decides.
    """
    from udk_notebooks.core import GRAM_RCOND

    z = dynamicsymbols("z")
    eps = sm.symbols("eps", positive=True)
    particle = Model([x, y, z], kinetic_energy=(x.diff(t) ** 2 + y.diff(t) ** 2 + z.diff(t) ** 2) / 2,
                     potential_energy=z, holonomic=[eps * x + y, y + eps * z], parameters={eps: 1.0})
    cm = particle.compile()
    assert [line for line in cm.kernel.source.splitlines() if "lamlow =" in line]  # the bound is in use
    accepted = []
    for value in (1.0, 0.3, 1e-2, 3e-3, 1e-3, 3e-4, 1e-4):
        p = cm.parameters(eps=value)
        q, qd = np.array([0.2, -0.2 * value, 0.2]), np.zeros(3)
        M, Q, A, b, C = cm.evaluate(0.0, q, qd, p)
        gram = A @ A.T
        condition = np.linalg.norm(gram, 1) * np.linalg.norm(np.linalg.inv(gram), 1)
        motion = cm.kernel(cm._entries(0.0, q.tolist(), qd.tolist(), p.tolist()), p)
        if motion is not None:
            accepted.append(value)
            assert condition < 1 / GRAM_RCOND
            assert np.allclose(motion.qdd, udwadia_kalaba(M, Q, A, b).qdd, rtol=1e-9, atol=1e-12)
        rate = cm.plain_rate(p)(0.0, np.concatenate([q, qd]))
        assert np.array_equal(rate[3:], cm.accelerations(0.0, q, qd, p))
    assert 1.0 in accepted and 1e-4 not in accepted  # both decisions occur


def test_a_coordinate_no_row_touches_keeps_its_acceleration():
    # A slider on a rail (y_p = 0) and a free bob pulled by gravity: q''_x = Q_x / m is a bare copy in the
    # generated code, which the joined code once dropped (NameError in the README's explore example).
    xp, yp, z = dynamicsymbols("x_p y_p z")
    sliding = Model([xp, yp, z], kinetic_energy=(2 * (xp.diff(t) ** 2 + yp.diff(t) ** 2) + z.diff(t) ** 2) / 2,
                    potential_energy=9.81 * (2 * yp + z) + c * xp, holonomic=[yp], parameters={c: 3.0})
    cm = sliding.compile()
    p = cm.parameters()
    rate = cm.plain_rate(p)
    assert is_fused(rate)
    state = np.array([0.3, 0.0, 1.0, 0.5, 0.0, -0.2])
    expected = np.concatenate([state[3:], cm.accelerations(0.0, state[:3], state[3:], p)])
    assert np.array_equal(rate(0.0, state), expected)
    assert np.allclose(expected[3:], [-1.5, 0.0, -9.81], rtol=1e-15)
