"""Tests for udk_notebooks.kernels: the pattern kernels agree with the general route.

The reference is :func:`udk_notebooks.core.solve` on the dense matrices (Eqs. 7-11
term by term, or Gauss's minimum by ``dgglse``), which shares no code with the
kernels. Both kernels are tested on every problem, whichever a compiled model
would choose.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from udk_notebooks import kernels
from udk_notebooks.core import solve
from udk_notebooks.examples import chain, inclined_line, rolling_disk
from udk_notebooks.stabilization import Baumgarte

SETTINGS = settings(max_examples=150, deadline=None)
RTOL = 1e-12


def layout(Q, A, b, C):
    """The compiled value list of ``Q, A, b, C`` and the positions of its nonzero entries."""
    flat = np.concatenate([Q, A.ravel(), b, C])
    nonzero = np.flatnonzero(flat)
    return flat[nonzero].tolist(), nonzero


def kernels_for(n, m, nonzero, d, has_nonideal):
    pattern = kernels._Pattern(n, m, nonzero)
    mass = lambda p: np.diag(d)  # noqa: E731
    return [kernels.ScalarKernel(pattern, mass, has_nonideal), kernels.BandKernel(pattern, mass, has_nonideal)]


def assert_same(motion, reference, rtol=RTOL):
    for field in ("qdd", "impressed", "ideal", "nonideal"):
        ours, theirs = getattr(motion, field), getattr(reference, field)
        scale = max(1.0, np.abs(theirs).max(initial=0.0))
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=rtol * scale, err_msg=field)


def tolerance(G):
    """1e-12 for a Gram matrix of condition number up to 1e3; beyond, the rounding both routes make grows with it."""
    return RTOL * max(1.0, np.linalg.cond(G) / 1e3)


@st.composite
def diagonal_problems(draw):
    """A diagonal M, a sparse A of full row rank, and Q, b, C, with some zero entries."""
    n = draw(st.integers(1, 7))
    m = draw(st.integers(1, n))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    d = np.exp(rng.uniform(-2, 2, n))
    A = rng.standard_normal((m, n)) * (rng.random((m, n)) < draw(st.floats(0.3, 1.0)))
    A[np.arange(m), rng.permutation(n)[:m]] += 2.0 * rng.choice([-1.0, 1.0], m)  # every row its own column
    Q = rng.standard_normal(n) * (rng.random(n) < 0.7)
    b = rng.standard_normal(m) * (rng.random(m) < 0.7)
    C = rng.standard_normal(n) * (rng.random(n) < 0.5) if draw(st.booleans()) else np.zeros(n)
    return d, Q, A, b, C


@SETTINGS
@given(diagonal_problems())
def test_kernels_equal_the_general_route(problem):
    d, Q, A, b, C = problem
    m, n = A.shape
    values, nonzero = layout(Q, A, b, C)
    reference = solve(np.diag(d), Q, A, b, C if C.any() else None)
    G = (A / d) @ A.T
    for kernel in kernels_for(n, m, nonzero, d, bool(C.any())):
        motion = kernel(values, np.zeros(0))
        if np.linalg.cond(G) < 1e2:  # well conditioned: the kernel must vouch for it
            assert motion is not None, type(kernel).__name__
        if motion is not None:
            assert_same(motion, reference, tolerance(G))


@SETTINGS
@given(diagonal_problems(), st.integers(0, 2**32 - 1))
def test_kernels_add_the_stabilizing_correction_to_b(problem, seed):
    d, Q, A, b, C = problem
    m, n = A.shape
    correction = np.random.default_rng(seed).standard_normal(m)
    values, nonzero = layout(Q, A, b, C)
    reference = solve(np.diag(d), Q, A, b + correction, C if C.any() else None)
    for kernel in kernels_for(n, m, nonzero, d, bool(C.any())):
        motion = kernel(values, np.zeros(0), correction)
        if motion is not None:
            assert_same(motion, reference, tolerance((A / d) @ A.T))


def test_dependent_rows_go_back_to_the_general_route():
    d = np.array([1.0, 2.0, 3.0])
    A = np.array([[1.0, 2.0, 0.0], [1.0, 2.0, 0.0]])  # the same row twice
    values, nonzero = layout(np.array([0.0, -1.0, 0.0]), A, np.array([0.5, 0.5]), np.zeros(3))
    for kernel in kernels_for(3, 2, nonzero, d, False):
        assert kernel(values, np.zeros(0)) is None


def test_an_ill_conditioned_gram_matrix_goes_back_to_the_general_route():
    d = np.ones(2)
    A = np.array([[1.0, 0.0], [1.0, 1e-5]])  # cond(G) about 4e10, past GRAM_RCOND
    values, nonzero = layout(np.zeros(2), A, np.array([1.0, 1.0]), np.zeros(2))
    for kernel in kernels_for(2, 2, nonzero, d, False):
        assert kernel(values, np.zeros(0)) is None


def test_a_singular_mass_matrix_goes_back_to_the_general_route():
    values, nonzero = layout(np.array([0.0, -1.0]), np.array([[1.0, 1.0]]), np.array([0.0]), np.zeros(2))
    for kernel in kernels_for(2, 1, nonzero, np.array([1.0, 0.0]), False):
        assert kernel(values, np.zeros(0)) is None


def chain_system(N, rng):
    """Numbers of the N-link chain in Cartesian coordinates at a random moving state (module chain)."""
    angles, rates = rng.uniform(-3, 3, N), rng.uniform(-2, 2, N)
    q, qd = chain.chain_initial_state(N, angles, rates)
    n = 2 * N
    points = np.concatenate([[0.0, 0.0], q]).reshape(-1, 2)
    velocities = np.concatenate([[0.0, 0.0], qd]).reshape(-1, 2)
    A, b = np.zeros((N, n)), np.zeros(N)
    for i in range(N):  # row i: 2 (p_i - p_{i-1}) . (a_i - a_{i-1}) = -2 |v_i - v_{i-1}|^2
        step, rate = points[i + 1] - points[i], velocities[i + 1] - velocities[i]
        A[i, 2 * i : 2 * i + 2] = 2 * step
        if i:
            A[i, 2 * i - 2 : 2 * i] = -2 * step
        b[i] = -2 * rate @ rate
    Q = np.tile([0.0, -9.81], N)
    return Q, A, b


@pytest.mark.parametrize("N", range(1, 41))
def test_chain_kernels_equal_the_dense_route(N):
    rng = np.random.default_rng(N)
    Q, A, b = chain_system(N, rng)
    n = 2 * N
    d = np.full(n, 1.5)
    C = np.zeros(n)
    values, nonzero = layout(Q, A, b, C)
    reference = solve(np.diag(d), Q, A, b)
    for kernel in kernels_for(n, N, nonzero, d, False):
        motion = kernel(values, np.zeros(0))
        assert motion is not None, type(kernel).__name__
        assert_same(motion, reference)


def general(cm):
    """The same compiled model without its kernel (the general route only)."""
    twin = type(cm)(**{**cm.__dict__, "kernel": None, "_mass_cache": {}})
    return twin


@pytest.mark.parametrize(
    "build, state",
    [
        (lambda: chain.n_link_chain(3), lambda: chain.chain_initial_state(3, [0.3, -1.0, 2.0], [0.5, -1.0, 2.0])),
        (rolling_disk.model, rolling_disk.initial_state),
        (inclined_line.model, inclined_line.initial_state),
    ],
    ids=["chain3", "rolling_disk", "inclined_line"],
)
def test_compiled_models_choose_a_kernel_that_agrees_with_the_general_route(build, state):
    cm = build().compile()
    assert cm.kernel is not None  # constant diagonal mass matrices
    q, qd = state()
    reference = general(cm)
    assert_same(cm.motion(0.0, q, qd), reference.motion(0.0, q, qd))
    assert_same(cm.motion(0.0, q, qd, m=2.5), reference.motion(0.0, q, qd, m=2.5))
    stab = Baumgarte(alpha=3.0)
    assert_same(cm.motion(0.0, q * 1.01, qd, stabilization=stab), reference.motion(0.0, q * 1.01, qd, stabilization=stab))
    # the band kernel on the same model
    pattern = kernels._Pattern(cm.n, cm.m, cm.nonzero)
    band = kernels.BandKernel(pattern, cm.mass, cm.has_nonideal)
    p = cm.defaults
    values = cm.matrices(0.0, q.tolist(), qd.tolist(), p.tolist())
    assert_same(band(values, p), reference.solve_modes(0.0, q, qd, p)[0])


def test_the_chain_takes_the_band_kernel_when_the_scalar_one_grows():
    assert isinstance(chain.n_link_chain(2).compile().kernel, kernels.ScalarKernel)
    pattern = kernels._Pattern(2 * 40, 40, chain_layout(40))
    assert pattern.bandwidth() == 1  # the Gram matrix of a chain is tridiagonal
    assert isinstance(kernels.diagonal_kernel(80, 40, chain_layout(40), lambda p: np.eye(80), False), kernels.BandKernel)


def chain_layout(N):
    Q, A, b = chain_system(N, np.random.default_rng(0))
    return layout(Q, A, b, np.zeros(2 * N))[1]


def test_a_model_with_a_mass_matrix_of_the_state_has_no_kernel():
    from udk_notebooks.examples import double_pendulum

    assert double_pendulum.model().compile().kernel is None


@pytest.mark.parametrize(
    "t, q, qd, message",
    [
        (float("nan"), None, None, "`t` must be a finite number"),
        (0.0, "nan", None, "`q` contains a non-finite entry"),
        (0.0, "short", None, "`q` must have shape (4,)"),
        (0.0, None, "huge", "their squares overflow"),
    ],
)
def test_motion_refuses_bad_input_as_the_general_route_does(t, q, qd, message):
    cm = chain.n_link_chain(2).compile()
    q0, qd0 = chain.chain_initial_state(2)
    q = {"nan": q0 * np.nan, "short": q0[:3], None: q0}[q]
    qd = {"huge": qd0 + 1e200, None: qd0}[qd]
    for model in (cm, general(cm)):
        with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")), np.errstate(over="ignore"):
            model.motion(t, q, qd)
