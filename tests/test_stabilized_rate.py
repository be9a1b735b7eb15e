"""The bound right-hand side of a stabilized run, ``CompiledModel.stabilized_rate``, against the unbound route.

A fixed-step run's right-hand side without friction modes is bound to its
parameters once (``simulation._Segment``): ``plain_rate`` without
stabilization, ``stabilized_rate`` with it, which binds the scalar kernel and
its mass factors instead of looking them up at every call. Each must give
bitwise the ``(q', q'')`` of the unbound route, ``CompiledModel.accelerations``
with the correction of the residuals at that state, on states off the
constraints too, and hand a state the kernel declines to the general route.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from udk_notebooks.errors import InconsistentConstraintsError
from udk_notebooks.examples import chain, rolling_disk
from udk_notebooks.simulation import _Segment
from udk_notebooks.stabilization import Baumgarte, GainMatrix


def unbound(cm, p, stabilization, t, y):
    """``(q', q'')`` by the route taken before the rate was bound: residuals, correction, accelerations per call."""
    q, qd = y[: cm.n], y[cm.n :]
    correction = stabilization.correction(*cm.residuals(t, q.tolist(), qd.tolist(), p.tolist()))
    return np.concatenate([qd, cm.accelerations(t, q, qd, p, correction)])


CASES = [
    (chain.cartesian_pendulum, Baumgarte(10.0, 10.0)),
    (chain.cartesian_pendulum, Baumgarte(60.0, 3.0, 0.0)),
    (rolling_disk.model, GainMatrix(-np.diag([10.0, 40.0]))),
]


@pytest.mark.parametrize("make, stabilization", CASES)
def test_bound_rate_is_bitwise_the_unbound_route(make, stabilization):
    cm = make().compile()
    p = cm.parameters(None)
    rate = cm.stabilized_rate(p, stabilization)
    segment = _Segment(cm, p, (), stabilization)
    rng = np.random.default_rng(3)
    for _ in range(200):
        y = rng.uniform(-2.0, 2.0, 2 * cm.n)  # off the constraints: the correction is large there
        t = float(rng.uniform(0.0, 5.0))
        expected = unbound(cm, p, stabilization, t, y)
        assert np.array_equal(rate(t, y), expected)
        assert np.array_equal(segment.rhs(t, y), expected)


def test_plain_segment_is_bitwise_the_unbound_route():
    cm = chain.cartesian_pendulum().compile()
    p = cm.parameters(None)
    segment = _Segment(cm, p, (), None)
    rng = np.random.default_rng(4)
    for _ in range(200):
        y = rng.uniform(-2.0, 2.0, 2 * cm.n)
        q, qd = y[: cm.n], y[cm.n :]
        assert np.array_equal(segment.rhs(0.3, y), np.concatenate([qd, cm.accelerations(0.3, q, qd, p)]))


def test_a_declined_state_goes_the_general_route():
    # At the pin the constraint row 2 (x, y) vanishes: the kernel declines, and the general route refuses the
    # state with its own explanation, as it does on the unbound route.
    cm = chain.cartesian_pendulum().compile()
    p = cm.parameters(None)
    stabilization = Baumgarte(10.0, 10.0)
    y = np.array([0.0, 0.0, 0.5, -0.2])
    assert cm.kernel.corrected_qdd_solver(p)(cm._entries(0.0, [0.0, 0.0], [0.5, -0.2], p.tolist()), [0.0]) is None
    with pytest.raises(InconsistentConstraintsError) as unbound_error:
        unbound(cm, p, stabilization, 0.0, y)
    with pytest.raises(InconsistentConstraintsError, match=re.escape(str(unbound_error.value))):
        cm.stabilized_rate(p, stabilization)(0.0, y)


def test_a_parameter_change_binds_anew():
    # The bound rate holds the parameters it was made for; another vector gives another rate (a slider change).
    cm = chain.cartesian_pendulum().compile()
    stabilization = Baumgarte(10.0, 10.0)
    y = np.array([0.8, -0.6, 0.1, 0.2])
    p1, p2 = cm.parameters(None), cm.parameters({name: 2.0 for name in cm.parameter_names})
    first, second = cm.stabilized_rate(p1, stabilization), cm.stabilized_rate(p2, stabilization)
    assert np.array_equal(first(0.0, y), unbound(cm, p1, stabilization, 0.0, y))
    assert np.array_equal(second(0.0, y), unbound(cm, p2, stabilization, 0.0, y))
    assert not np.array_equal(first(0.0, y), second(0.0, y))


def test_runaway_fast_check_agrees():
    from udk_notebooks.stepping import runaway

    limit = 10.0
    for y in ([1.0, -2.0, 3.0], [9.9, 0.0], [10.0], [10.5, 0.0], [5.0, 5.0, 1.0], [np.nan, 0.0], [np.inf, 1.0],
              [-np.inf], [0.0] * 3, []):
        y = np.array(y, dtype=float)
        largest = float(np.abs(y).max(initial=0.0))
        assert (runaway(y, limit) == "") == (largest <= limit), y
