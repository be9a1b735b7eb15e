"""The one stacked solver (:func:`udk_notebooks.stacked.solve_stack`) against the one-state route and a closed form.

The stacked solve serves a run's output samples and every stage of a sweep;
:meth:`CompiledModel.solve_modes` serves a single run's steps. Here both solve
the same states in the same friction modes and must agree to rounding, and the
sliding block on the incline must match its textbook acceleration.
"""

import numpy as np
import pytest

from udk_notebooks.examples import chain, double_pendulum, incline_friction
from udk_notebooks.stacked import constant_mass, solve_stack, state_mass


def _stack(cm, p, states, modes):
    """``solve_stack`` for the states (rows of (q, q')) with one parameter vector and the same modes."""
    n, m, G = cm.n, cm.m, len(states)
    q, qd = states[:, :n], states[:, n:]
    values = np.zeros((G, (0 if cm.constant_mass else n * n) + n + m * n + m + n))
    values[:, cm.nonzero] = cm.matrices_batch(np.zeros(G), q, qd, p)
    k = 0 if cm.constant_mass else n * n
    Q, A = values[:, k:k + n].T, values[:, k + n:k + n + m * n].reshape(G, m, n).transpose(1, 2, 0)
    b = values[:, k + n + m * n:k + n + m * n + m].T
    mass = constant_mass(cm, p, G) if cm.constant_mass else state_mass(values[:, :k].reshape(G, n, n), 1e-9)
    friction = cm.friction_batch(np.zeros(G), q, qd, p).transpose(1, 2, 0) if cm.n_friction else None
    table = np.tile(np.array(modes, dtype=float)[:, None], (1, G))
    return solve_stack(mass, Q, A, b, None, friction, table, [i for i, mode in enumerate(modes) if mode == 0],
                       forces=True)


@pytest.mark.parametrize("modes", [(1,), (-1,), (0,)])
def test_the_incline_block_agrees_with_the_one_state_route(modes):
    cm = incline_friction.model().compile()
    p = cm.parameters({"mu": 0.3, "mu_s": 0.5})
    rng = np.random.default_rng(3)
    slope = cm.parameters()[cm.parameter_names.index("alpha")]
    along = np.array([np.cos(slope), np.sin(slope)])
    states = np.array([np.concatenate([s * along, v * along]) for s, v in rng.uniform(-2, 2, (6, 2))])
    sol = _stack(cm, p, states, modes)
    assert sol.ok.all()
    for j, y in enumerate(states):
        motion, ratios = cm.solve_modes(0.0, y[:2], y[2:], p, modes)
        for name in ("qdd", "ideal", "nonideal"):
            np.testing.assert_allclose(getattr(sol, name)[:, j], getattr(motion, name), rtol=0, atol=1e-12)
        if modes == (0,):
            np.testing.assert_allclose(sol.ratios[0, j], ratios[0], rtol=1e-12)


def test_a_sliding_block_has_the_closed_form_acceleration():
    cm = incline_friction.model().compile()
    p = cm.parameters()
    values = dict(zip(cm.parameter_names, p))
    for direction in (1, -1):
        exact = incline_friction.exact_motion(direction, **values)
        speed = 1.5 * direction
        slope = values["alpha"]
        y = np.array([0.0, 0.0, speed * np.cos(slope), speed * np.sin(slope)])
        sol = _stack(cm, p, y[None, :], (direction,))
        np.testing.assert_allclose(sol.qdd[:, 0], exact.qdd, rtol=0, atol=1e-12)
        np.testing.assert_allclose(sol.nonideal[:, 0], exact.nonideal, rtol=0, atol=1e-12)


@pytest.mark.parametrize("build", [chain.cartesian_pendulum, double_pendulum.model])
def test_frictionless_stacks_agree_with_the_one_state_route(build):
    cm = build().compile()
    p = cm.defaults
    rng = np.random.default_rng(5)
    states = rng.normal(size=(8, 2 * cm.n))
    sol = _stack(cm, p, states, ())
    for j, y in enumerate(states):
        if not sol.ok[j]:
            continue
        motion, _ = cm.solve_modes(0.0, y[:cm.n], y[cm.n:], p, ())
        scale = 1.0 + np.abs(motion.qdd).max()
        np.testing.assert_allclose(sol.qdd[:, j], motion.qdd, rtol=0, atol=1e-10 * scale)
        np.testing.assert_allclose(sol.ideal[:, j], motion.ideal, rtol=0, atol=1e-10 * scale)
    assert sol.ok.sum() >= 6  # random states: the Gram matrix is well conditioned for most


def test_a_singular_mass_matrix_is_flagged_not_solved():
    M = np.array([np.eye(2), np.diag([1.0, 0.0])])
    mass = state_mass(M, 1e-9)
    assert list(mass.ok) == [True, False]
    sol = solve_stack(mass, np.ones((2, 2)), np.array([[[1.0, 1.0], [0.0, 0.0]]]), np.zeros((1, 2)))
    assert list(sol.ok) == [True, False]
