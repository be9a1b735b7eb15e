"""An adaptive sweep without ``t_eval``: the members share the first finished member's times, each sampled by its
own integrator's dense output (it was interpolated linearly between its own steps: a silent wrong answer)."""

import numpy as np

from udk_notebooks import simulate
from udk_notebooks.examples import chain
from udk_notebooks.stabilization import Baumgarte
from udk_notebooks.sweep import sweep

PENDULUM = chain.cartesian_pendulum().compile()
Q0, QD0 = chain.pendulum_initial_state(1.0)
SPAN = (0.0, 2.0)
LOOSE = {"rtol": 1e-5, "atol": 1e-7}  # few, long steps: linear interpolation between them is visibly off


def test_members_are_sampled_at_the_first_members_steps_by_their_own_dense_output():
    stabs = [None, Baumgarte(3.0, 3.0)]
    result = sweep(PENDULUM, SPAN, Q0, QD0, stabilization=stabs, method="RK45", **LOOSE)
    first = simulate(PENDULUM, SPAN, Q0, QD0, method="RK45", **LOOSE)
    own = simulate(PENDULUM, SPAN, Q0, QD0, method="RK45", stabilization=stabs[1], **LOOSE)
    assert list(result.status) == ["ok", "ok"]
    np.testing.assert_array_equal(result.t, first.t)
    np.testing.assert_array_equal(result.q[0], first.q)
    assert not np.array_equal(own.t, result.t)  # the second member steps elsewhere: it must be sampled, not copied
    sampled = simulate(PENDULUM, SPAN, Q0, QD0, method="RK45", stabilization=stabs[1], t_eval=result.t, **LOOSE)
    np.testing.assert_array_equal(result.q[1], sampled.q)
    np.testing.assert_array_equal(result.qd[1], sampled.qd)
    # against a tight run of the same member: the dense output is within the run's own error, a straight line
    # between its steps is not (the old route)
    tight = simulate(PENDULUM, SPAN, Q0, QD0, method="DOP853", rtol=1e-12, atol=1e-12, stabilization=stabs[1],
                     t_eval=result.t)
    dense_error = np.abs(result.q[1] - tight.q).max()
    linear = np.array([np.interp(result.t, own.t, own.q[:, j]) for j in range(2)]).T
    linear_error = np.abs(linear - tight.q).max()
    own_error = np.abs(own.q - simulate(PENDULUM, SPAN, Q0, QD0, method="DOP853", rtol=1e-12, atol=1e-12,
                                         stabilization=stabs[1], t_eval=own.t).q).max()
    assert dense_error < 5 * own_error + 1e-12
    assert linear_error > 20 * dense_error


def test_a_refused_first_member_does_not_decide_the_times():
    q0 = np.array([Q0, Q0 + 0.3])  # the second start is off the circle: refused, as simulate refuses it
    q0 = q0[::-1]
    result = sweep(PENDULUM, SPAN, q0, QD0, stabilization=[Baumgarte(3.0, 3.0), None], method="RK45", **LOOSE)
    assert list(result.status) == ["refused", "ok"]
    np.testing.assert_array_equal(result.t, simulate(PENDULUM, SPAN, Q0, QD0, method="RK45", **LOOSE).t)
    assert np.isnan(result.q[0]).all() and np.isfinite(result.q[1]).all()


def test_switching_instants_of_the_first_member_do_not_refuse_the_others():
    """The first member's times hold its stick instant twice (before and after the switch): a t_eval must not."""
    from udk_notebooks.examples import incline_friction

    model = incline_friction.model().compile()
    grid = [dict(alpha=0.5, mu=mu, mu_s=mu) for mu in (0.8, 0.3)]  # the first sticks, the second slides back
    start = incline_friction.initial_state(3.0, alpha=0.5)
    result = sweep(model, SPAN, start[0], start[1], params=grid, method="RK45")
    assert list(result.status) == ["ok", "ok"]
    assert np.diff(result.t).min() == 0.0  # the first member's own times, the switching instant twice
    second = simulate(model, SPAN, start[0], start[1], params=grid[1], method="RK45", t_eval=np.unique(result.t))
    at = np.searchsorted(second.t, result.t)  # its sample at each time (its first, where it has two)
    np.testing.assert_array_equal(result.q[1], second.q[at])
    np.testing.assert_array_equal(result.modes[1], second.modes)
    assert result.modes[0][-1, 0] == 0 and result.modes[1][-1, 0] == -1
