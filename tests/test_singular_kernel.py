"""Tests for kernels.SingularKernel: a diagonal mass matrix with zero masses, against the general route.

The reference is :func:`udk_notebooks.core.solve`, whose singular route solves
the saddle-point system by LAPACK's LU (or the augmented form ``M + s A^+ A``
by an SVD and ``dgglse``) and shares no code with the generated kernel. The
kernel must agree with it to 1e-12 per call, give the same whole runs, and
decline (None) where ``[M; A]`` or ``A`` is near a loss of rank, or where
``M`` is regular (ScalarKernel's case, unchanged).
"""

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from udk_notebooks import kernels
from udk_notebooks.core import solve
from udk_notebooks.examples import singular_mass
from udk_notebooks.simulation import simulate
from udk_notebooks.widgets.singular_mass import compiled_model

RTOL = 1e-12


def layout(Q, A, b):
    """The compiled value list of ``Q, A, b`` (no ``C``) and the positions of its nonzero entries."""
    n = Q.size
    flat = np.concatenate([Q, A.ravel(), b, np.zeros(n)])
    nonzero = np.flatnonzero(flat)
    return flat[nonzero].tolist(), nonzero


def kernel_for(d, Q, A, b):
    values, nonzero = layout(Q, A, b)
    kernel = kernels.singular_kernel(Q.size, b.size, nonzero, lambda p: np.diag(d), False)
    return kernel, values


def assert_same(motion, reference, rtol=RTOL):
    for field in ("qdd", "impressed", "ideal", "nonideal"):
        ours, theirs = getattr(motion, field), getattr(reference, field)
        scale = max(1.0, np.abs(theirs).max(initial=0.0))
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=rtol * scale, err_msg=field)


def saddle_condition(d, A) -> float:
    """Condition number of the general route's ``[[M / s, A^T], [A, 0]]`` (rows scaled): both routes round to it."""
    n, m = A.shape[1], A.shape[0]
    rows = A / np.abs(A).max(axis=1, keepdims=True)
    K = np.zeros((n + m, n + m))
    K[:n, :n], K[:n, n:], K[n:, :n] = np.diag(d / d.max()), rows.T, rows
    return float(np.linalg.cond(K))


@st.composite
def singular_problems(draw):
    """A diagonal M with zero masses and an A of full row rank that gives every massless coordinate a row."""
    n = draw(st.integers(2, 7))
    m = draw(st.integers(1, n))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    zero = rng.permutation(n)[: draw(st.integers(1, m))]  # at most m massless coordinates
    d = np.exp(rng.uniform(-2, 2, n))
    d[zero] = 0.0
    A = rng.standard_normal((m, n)) * (rng.random((m, n)) < draw(st.floats(0.3, 1.0)))
    A[np.arange(zero.size), zero] += 2.0 * rng.choice([-1.0, 1.0], zero.size)  # each its own row
    free = [j for j in range(n) if j not in set(zero.tolist())]
    for k in range(zero.size, m):  # the other rows: their own massive column, so A has full row rank
        A[k, free[k - zero.size]] += 2.0
    Q = rng.standard_normal(n) * (rng.random(n) < 0.7)
    b = rng.standard_normal(m) * (rng.random(m) < 0.7)
    return d, Q, A, b


@settings(max_examples=120, deadline=None)
@given(singular_problems())
def test_singular_kernel_matches_the_general_route(problem):
    d, Q, A, b = problem
    kernel, values = kernel_for(d, Q, A, b)
    reference = solve(np.diag(d), Q, A, b)
    motion = kernel(values, np.zeros(1))
    if motion is None:  # it may decline a badly conditioned draw, never answer it wrongly
        return
    assert_same(motion, reference, RTOL * max(1.0, saddle_condition(d, A) / 1e2))
    np.testing.assert_allclose(A @ motion.qdd, b, atol=1e-10 * (1 + np.abs(b).max()))


def test_singular_kernel_answers_a_massless_slider_with_its_closed_form():
    """Two coordinates, M = diag(0, m), the row x1 - x2 = 0: both move as the mass alone, q'' = Q2 / m."""
    d, Q, A, b = np.array([0.0, 2.0]), np.array([0.0, -6.0]), np.array([[1.0, -1.0]]), np.array([0.0])
    kernel, values = kernel_for(d, Q, A, b)
    motion = kernel(values, np.zeros(1))
    np.testing.assert_allclose(motion.qdd, [-3.0, -3.0], rtol=1e-14)
    np.testing.assert_allclose(motion.ideal, [0.0, 0.0], atol=1e-14)  # a massless body only passes forces on


def test_singular_kernel_declines_regular_mass_and_rank_loss():
    # regular M: ScalarKernel's case, left as it was
    kernel, values = kernel_for(np.array([1.0, 2.0]), np.array([0.0, -6.0]), np.array([[1.0, -1.0]]), np.array([0.0]))
    assert kernel(values, np.zeros(1)) is None
    # [M; A] of rank 1 < 2: the massless coordinate has no row of its own
    kernel, values = kernel_for(np.array([0.0, 2.0]), np.array([0.0, -6.0]), np.array([[0.0, 1.0]]), np.array([0.0]))
    assert kernel is None or kernel(values, np.zeros(1)) is None
    with pytest.raises(ValueError, match="not unique"):
        solve(np.diag([0.0, 2.0]), np.array([0.0, -6.0]), np.array([[0.0, 1.0]]), np.array([0.0]))
    # nearly so: two massless coordinates whose columns of [M; A] differ by 1e-9
    d, Q, b = np.array([0.0, 0.0, 2.0]), np.array([0.0, 0.0, -6.0]), np.zeros(2)
    A = np.array([[1.0, 1.0, -1.0], [1.0, 1.0 + 1e-9, 0.0]])
    kernel, values = kernel_for(d, Q, A, b)
    assert kernel(values, np.zeros(1)) is None
    with pytest.raises(ValueError, match="not unique"):
        solve(np.diag(d), Q, A, b)


def test_singular_kernel_takes_units_as_the_general_route_does():
    """A row 1e-9 in the massless coordinate is a unit (nanometres), not a rank loss: both routes answer 3e9."""
    d, Q, A, b = np.array([0.0, 2.0]), np.array([0.0, -6.0]), np.array([[1e-9, 1.0]]), np.array([0.0])
    kernel, values = kernel_for(d, Q, A, b)
    motion = kernel(values, np.zeros(1))
    np.testing.assert_allclose(motion.qdd, solve(np.diag(d), Q, A, b).qdd, rtol=1e-12)
    np.testing.assert_allclose(motion.qdd, [3e9, -3.0], rtol=1e-14)


def trammel_entries(cm, theta, theta_dot, **params):
    q, qd = singular_mass.state_from_angle(theta, theta_dot, **params)
    p = cm.parameters(params)
    return q, qd, p, cm._entries(0.0, q.tolist(), qd.tolist(), p.tolist())


def test_trammel_kernel_matches_the_general_route():
    cm = compiled_model()
    assert isinstance(cm.singular_kernel, kernels.SingularKernel)
    rng = np.random.default_rng(7)
    for _ in range(40):
        params = dict(m=rng.uniform(0.1, 5), g=rng.uniform(0, 20), l=rng.uniform(0.2, 3), c=rng.uniform(0.05, 0.95),
                      mA=rng.choice([0.0, 1.3]), mB=0.0)
        q, qd, p, entries = trammel_entries(cm, rng.uniform(-3, 3), rng.uniform(-5, 5), **params)
        M, Q, A, b, _, _ = cm._evaluate(0.0, q, qd, p, entries)
        assert_same(cm.singular_kernel(entries, p), solve(M, Q, A, b))
    # c -> 0 with the bar along the x rail: w = y / c is still fixed (a unit, not a rank loss), as for the
    # general route, whose pivots are equilibrated too
    params = dict(m=1.0, g=9.81, l=1.0, c=1e-9, mA=0.0, mB=0.0)
    q, qd, p, entries = trammel_entries(cm, 0.0, 1.0, **params)
    M, Q, A, b, _, _ = cm._evaluate(0.0, q, qd, p, entries)
    motion = cm.singular_kernel(entries, p)
    np.testing.assert_allclose(motion.qdd, solve(M, Q, A, b).qdd, rtol=0, atol=1e-12 * 9.81e9)  # w'' = -g / c
    # closed forms at theta = 0, theta' = 1 (the general route, rounding at cond ~ 1e9, misses them by 1e-6):
    # u'' = -l cos(theta) theta'^2, and the bar pulls the bob (at x = (1 - c) l) toward the centre, F^L = m x''
    assert motion.qdd[0] == pytest.approx(-1.0, rel=1e-14)
    np.testing.assert_allclose(motion.ideal, [0.0, 0.0, -(1 - 1e-9), 0.0], atol=1e-12)


def test_trammel_runs_with_and_without_the_kernel_agree():
    cm = compiled_model()
    general = replace(cm, singular_kernel=None)
    params = dict(m=1.3, g=9.81, l=1.2, c=0.3, mA=0.0, mB=0.0)
    q0, qd0 = singular_mass.initial_state(-0.3, 0.0, **params)
    times = np.linspace(0.0, 3.0, 31)
    runs = [simulate(model, (0.0, 3.0), q0, qd0, method="DOP853", t_eval=times, params=params,
                     on_singular="ignore", rtol=1e-10, atol=1e-12) for model in (cm, general)]
    np.testing.assert_allclose(runs[0].q, runs[1].q, atol=1e-9)
    np.testing.assert_allclose(runs[0].ideal, runs[1].ideal, atol=1e-7)
    assert np.ptp(singular_mass.angle(runs[0].q)) > 0.3  # a real swing, not a resting bar
