"""The batched sweep's engine: unrecorded samples, the stacked gain check, the reused M^{-1} Q, hoisted terms."""

import inspect

import numpy as np
import pytest

from udk_notebooks.core import StackedGram
from udk_notebooks.examples import chain, double_pendulum, incline_friction
from udk_notebooks.stabilization import Baumgarte, check_gain, spectral_radii, stability
from udk_notebooks.stacked import constant_mass, solve_stack
from udk_notebooks.sweep import parameter_grid, sweep

PENDULUM = chain.cartesian_pendulum().compile()
Q0, QD0 = np.array([1.0, 0.0]), np.array([0.0, 0.5])
FIELDS = ("q", "qd", "position_residual", "velocity_residual")


def assert_records_cut(result, i, status):
    """Member ``i`` has this status, numbers up to its stop and NaN from there on, in every field."""
    assert result.status[i] == status, (result.status[i], result.message[i])
    if status == "refused":  # never ran
        stop = 0
    elif np.isnan(result.stopped_at[i]):  # ran to the end
        stop = result.t.size
    else:
        stop = int(np.searchsorted(result.t, result.stopped_at[i]))
    for field in FIELDS:
        values = getattr(result, field)[i]
        assert np.isfinite(values[:stop]).all() and np.isnan(values[stop:]).all(), field


@pytest.mark.parametrize("t_eval", [None, [0.0, 1.0, 6.0, 8.0]], ids=["every_step", "on_grid_t_eval"])
def test_refused_and_stopped_members_hold_nan_in_every_field(t_eval):
    # Euler at step 0.02: alpha = beta = 5 stops at its residual bound (5.74 s, issue 11), 500 is refused by the
    # gain check, 1 runs to the end; the records are written sample by sample, never filled first
    stabs = [Baumgarte(5, 5), Baumgarte(500, 500), Baumgarte(1, 1)]
    options = {} if t_eval is None else {"t_eval": t_eval}
    result = sweep(PENDULUM, (0.0, 8.0), Q0, QD0, stabilization=stabs, method="euler", step=0.02, **options)
    assert result.runs is None  # the batch
    assert 0 < result.stopped_at[0] < 8.0
    for i, status in enumerate(["diverged", "refused", "ok"]):
        assert_records_cut(result, i, status)


def test_a_state_runaway_leaves_nan_after_its_stop():
    # a torsion spring of negative stiffness: the angles grow until the state passes DIVERGENCE_FACTOR times its
    # start, a stop found while stepping (not by the residual scan of the result)
    model = double_pendulum.minimal_model().compile()
    q0, qd0 = double_pendulum.initial_state()
    result = sweep(model, (0.0, 3.0), q0, qd0, params=parameter_grid(k1=[2.0, -100.0, 3.0]), step=0.01)
    assert "grew to" in result.message[1]
    for i, status in enumerate(["ok", "diverged", "ok"]):
        assert_records_cut(result, i, status)


def test_stacked_spectral_radii_are_those_of_stability():
    # the batch's gain check and check_gain must agree exactly, at the edge (beta = 0: radius 1) included
    gains = [(0.0, 0.0), (3.0, 0.0), (1.0, 1.0), (50.0, 50.0), (20.0, 7.0), (0.0, 40.0), (1e200, 1e200)]
    rows = np.array([[a, b, 0.5] for a, b in gains])
    for method, step in (("rk4", 0.01), ("euler", 0.02)):
        E = Baumgarte.error_matrices(rows, 1, 1)
        radii = spectral_radii(method, step, E)
        for (alpha, beta), matrix, radius in zip(gains, E, radii):
            single = Baumgarte(alpha, beta, 0.5).error_matrix(1, 1)
            np.testing.assert_array_equal(matrix, single)
            if not np.isfinite(single).all():  # beta^2 overflows: no bound, and check_gain refuses
                assert radius == np.inf
            else:
                assert radius == stability(method, step, single).spectral_radius
            refused = False
            try:
                check_gain(Baumgarte(alpha, beta, 0.5), method, step, 1, 1)
            except ValueError:
                refused = True
            assert refused == (not radius < 1.0), (alpha, beta, method)
    assert spectral_radii("rk4", 0.01, Baumgarte.error_matrices([[3.0, 0.0, 0.0]], 1, 0))[0] == 1.0  # R(0) = 1


def test_sweep_refuses_exactly_the_gains_check_gain_refuses():
    alphas, betas = np.linspace(0, 40, 6), np.linspace(0, 400, 6)
    stabs = [Baumgarte(g["alpha"], g["beta"]) for g in parameter_grid(alpha=alphas, beta=betas)]
    result = sweep(PENDULUM, (0.0, 0.05), Q0, QD0, stabilization=stabs, step=0.01)
    for stab, status, message in zip(stabs, result.status, result.message):
        try:
            check_gain(stab, "rk4", 0.01, 1, 0)
        except ValueError as exc:
            assert status == "refused" and message == str(exc)
        else:
            assert status != "refused"
    assert (result.status == "refused").sum() >= 6  # the beta = 0 column at least


def test_a_given_free_motion_changes_no_digit():
    # M^{-1} Q passed back to the stacked solve (a sweep reuses it while M and Q depend on the parameters alone)
    rng = np.random.default_rng(7)
    cm, G = chain.n_link_chain(2).compile(), 5
    P = np.tile(cm.defaults, (G, 1))
    P[:, 0] = rng.uniform(0.5, 2.0, G)  # per-member masses: M^{-1} differs from member to member
    mass = constant_mass(cm, P)
    Q, A, b = rng.normal(size=(cm.n, G)), rng.normal(size=(cm.m, cm.n, G)), rng.normal(size=(cm.m, G))
    first = solve_stack(mass, Q, A, b)
    again = solve_stack(mass, Q, A, b, free=first.free)
    np.testing.assert_array_equal(first.qdd, again.qdd)
    np.testing.assert_array_equal(first.free, mass.column(Q))
    for rows in (1, 2, 3):  # the closed forms of one and two rows, and LAPACK's stacked solve
        plain = StackedGram(mass, Q, A[:rows], b[:rows])
        given = StackedGram(mass, Q, A[:rows], b[:rows], free=plain.free)
        np.testing.assert_array_equal(plain.qdd, given.qdd)
        np.testing.assert_array_equal(plain.multipliers, given.multipliers)


@pytest.mark.parametrize("model", [chain.cartesian_pendulum(), incline_friction.model()], ids=["pendulum", "incline"])
def test_hoisted_terms_equal_the_model_functions(model):
    # parameter-only parts of sums and products are computed once per parameter set; the terms must not change
    cm = model.compile()
    rng = np.random.default_rng(3)
    B = 6
    P = np.tile(cm.defaults, (B, 1)) * rng.uniform(0.8, 1.2, (B, cm.defaults.size))
    q, qd = rng.normal(size=(B, cm.n)), rng.normal(size=(B, cm.n))
    terms = cm.terms_batch(0.3, list(q.T), list(qd.T), list(P.T))
    E, nh = len(cm.nonzero), cm.n_holonomic
    entries = np.array([np.broadcast_to(v, (B,)) for v in terms[:E]]).T
    np.testing.assert_allclose(entries, cm.matrices_batch(0.3, q, qd, P), rtol=1e-13, atol=1e-13)
    phi, vel = cm.residuals_batch(0.3, q, qd, P)
    rows = np.array([np.broadcast_to(v, (B,)) for v in terms[E:E + nh + cm.m]]).T
    np.testing.assert_allclose(rows, np.hstack([phi, vel]), rtol=1e-13, atol=1e-13)


def test_the_pendulum_length_is_squared_once_per_parameter_set():
    # phi = x^2 + y^2 - l^2: l^2 belongs to the parameter-only function, not to every stage
    _, main = PENDULUM._terms_functions()
    source = inspect.getsource(main)
    assert "_p1**2" not in source and "q0**2" in source
