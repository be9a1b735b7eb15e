"""The singular kernel joined to its entries (``CompiledModel.plain_rate`` of a model with zero masses).

For a constant diagonal ``M`` with massless coordinates (the elliptic trammel of
Udwadia & Phohomsiri, "Explicit equations of motion for constrained mechanical
systems with singular mass matrices", Proc. R. Soc. A 462, 2006) the scalar
kernel declines and ``accelerations`` takes ``kernels.SingularKernel``.
``plain_rate`` joins that kernel's statements to the lambdified entries
(``udk_notebooks._fused``): it must give bitwise the ``q''`` of
``accelerations``, agree with the general route ``core.udwadia_kalaba`` (LAPACK's singular-M
route, no shared code) to 1e-12, hand the states the kernel declines to the general
route, and give the runs of the unjoined route to the bit, through scipy's
solve_ivp (the explorer's DOP853) and the fixed-step methods.
"""

from __future__ import annotations

import numpy as np
import pytest

from udk_notebooks import _fused
from udk_notebooks.compiled import CompiledModel
from udk_notebooks.examples import singular_mass
from udk_notebooks.simulation import simulate
from udk_notebooks.widgets.singular_mass import compiled_model

from test_fused_rate import is_fused, mismatch  # q'' against core.udwadia_kalaba, relative to the accelerations

PARAMS = dict(m=1.3, g=9.81, l=1.2, c=0.3, mA=0.0, mB=0.0)


def trammel_states(rng, count, params=PARAMS):
    """States on the constraints and, as often, just off them (the rate must not rely on them)."""
    for k in range(count):
        q, qd = singular_mass.state_from_angle(rng.uniform(-3.1, 3.1), rng.uniform(-5, 5), **params)
        if k % 2:
            q, qd = q + rng.normal(0, 1e-3, q.size), qd + rng.normal(0, 1e-3, qd.size)
        yield q, qd


@pytest.mark.parametrize("masses", [(0.0, 0.0), (1.7, 0.0), (0.0, 0.4)], ids=["both massless", "mB = 0", "mA = 0"])
def test_fused_singular_rate_is_bitwise_accelerations_and_matches_the_general_route(masses):
    cm = compiled_model()
    params = dict(PARAMS, mA=masses[0], mB=masses[1])
    p = cm.parameters(params)
    rate = cm.plain_rate(p)
    assert is_fused(rate)  # joined, not the unfused closure
    states = list(trammel_states(np.random.default_rng(11), 60, params))
    for q, qd in states:
        expected = np.concatenate([qd, cm.accelerations(0.0, q, qd, p)])
        assert np.array_equal(rate(0.0, np.concatenate([q, qd])), expected)
    assert mismatch(cm, rate, p, states) < 1e-12


def test_a_wrong_fused_singular_solver_is_caught_by_the_comparison():
    """The comparison has teeth: one flipped sign in the last back substitution shows as a mismatch."""
    cm = compiled_model()
    lines, names, inputs, extra = cm.singular_kernel.fused_parts()
    wrong = [line.replace("x0 = (z0 - (", "x0 = (z0 + (") for line in lines]
    assert wrong != lines
    p = cm.parameters(PARAMS)
    rate = _fused.fuse(cm.matrices, cm.n, wrong, inputs, names, extra)(
        p.tolist(), cm.singular_kernel.mass_factors(p), None)
    states = list(trammel_states(np.random.default_rng(3), 6))
    assert mismatch(cm, rate, p, states) > 1e-3
    assert mismatch(cm, cm.plain_rate(p), p, states) < 1e-12


def test_a_regular_mass_matrix_keeps_the_scalar_kernel():
    # every mass positive: the scalar kernel's factors, its fused rate; the singular kernel declines the masses
    cm = compiled_model()
    p = cm.parameters(dict(PARAMS, mA=0.5, mB=0.8))
    assert cm.singular_kernel.mass_factors(p) is None and cm.kernel.mass_factors(p) is not None
    rate = cm.plain_rate(p)
    for q, qd in trammel_states(np.random.default_rng(5), 10, dict(PARAMS, mA=0.5, mB=0.8)):
        assert np.array_equal(rate(0.0, np.concatenate([q, qd])), np.concatenate([qd, cm.accelerations(0.0, q, qd, p)]))


def test_a_state_the_kernel_declines_goes_to_the_general_route():
    # u = v = 0 zeroes the bar's row of A (2u, 2v): the kernel declines, the general route decides, as in accelerations
    cm = compiled_model()
    p = cm.parameters(PARAMS)
    rate = cm.plain_rate(p)
    q, qd = np.array([0.0, 0.0, 0.1, -0.2]), np.array([0.3, 0.1, 0.0, 0.0])
    try:
        expected = cm.accelerations(0.0, q, qd, p)
    except Exception as plain_error:  # noqa: BLE001 - whatever the general route raises, the fused rate raises too
        with pytest.raises(type(plain_error)) as fused_error:
            rate(0.0, np.concatenate([q, qd]))
        assert str(fused_error.value) == str(plain_error)
    else:
        assert np.array_equal(rate(0.0, np.concatenate([q, qd])), np.concatenate([qd, expected]))


@pytest.mark.parametrize("method", ["DOP853", "RK45", "rk4"])
def test_runs_on_the_fused_rate_are_the_runs_of_the_old_route(method, monkeypatch):
    """solve_ivp's and the fixed-step rhs is plain_rate now; without it (the old _Segment.rate), the same run to the bit."""
    cm = compiled_model()
    q0, qd0 = singular_mass.initial_state(-0.57, 0.0, **PARAMS)
    times = np.linspace(0.0, 2.0, 41)
    options = dict(method=method, t_eval=times, params=PARAMS, on_singular="ignore")
    options.update(dict(rtol=1e-7, atol=1e-9) if method != "rk4" else dict(step=1e-3))
    fused = simulate(cm, (0.0, 2.0), q0, qd0, **options)
    monkeypatch.setattr(CompiledModel, "plain_rate", lambda self, p: None)
    old = simulate(cm, (0.0, 2.0), q0, qd0, **options)
    assert np.array_equal(fused.t, old.t)
    assert np.array_equal(fused.q, old.q) and np.array_equal(fused.qd, old.qd)
    assert np.ptp(singular_mass.angle(fused.q)) > 0.3  # a real swing, not a resting bar
