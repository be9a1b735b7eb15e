"""The fixed-step check skips its full measure only where a bound proves the answer (udk_notebooks.singular).

``RankMonitor.check_step`` compares the model's entries at a step end with those at an anchor
point and runs the full measure (SVD or eigenvalues, and the sign test) only where Weyl's
inequality cannot vouch for the step end. Every decision must be the one the full measure makes
at every step: each run here is made twice, with the bound and with it switched off (the monitor
then measures every step end in full, as before the bound), and the two must stop at the same
time and state, located by the same bisection. The systems are those of ``test_singular.py``
(the bead at the node of ``y^2 = x^2 (x + 1)``, a free particle in polar coordinates near its
origin) and regular catalogue runs, which must not be flagged and must skip most full measures
(else the bound is not what makes the check cheap).
"""

import numpy as np
import pytest
import sympy as sm
from sympy.physics.mechanics import dynamicsymbols

from udk_notebooks import Model, simulate
from udk_notebooks.examples import chain, double_pendulum, rolling_disk
from udk_notebooks.singular import SINGULAR_RTOL, RankMonitor


@pytest.fixture(scope="module")
def bead():
    """Unit mass on y^2 = x^2 (x + 1), no force, unit speed from (-1, 0): the node after half the loop."""
    x, y = dynamicsymbols("x y")
    model = Model([x, y], kinetic_energy=(x.diff() ** 2 + y.diff() ** 2) / 2, holonomic=[y**2 - x**2 * (x + 1)])
    return model.compile(), np.array([-1.0, 0.0]), np.array([0.0, 1.0])


@pytest.fixture(scope="module")
def polar():
    """Free unit mass in polar coordinates, straight towards the origin, passing it at 1e-5."""
    r, theta = dynamicsymbols("r theta")
    model = Model([r, theta], kinetic_energy=(r.diff() ** 2 + r**2 * theta.diff() ** 2) / 2)
    return model.compile(), np.array([1.0, 0.0]), np.array([-1.0, 1e-5])


class Record:
    """What the monitors of one run did at each fixed step end: cleared by the bound, or measured in full."""

    def __init__(self):
        self.ends = []  # (time, cleared, renewed) per step end the bound looked at
        self.full = 0  # full measures (not served from the cache)


@pytest.fixture
def record(monkeypatch):
    """Counts what the bound decides and how many full measures run."""
    log = Record()
    cleared, measure = RankMonitor._cleared, RankMonitor.measure

    def counted_cleared(self, t, y, entries):
        result = cleared(self, t, y, entries)
        log.ends.append((t, result[0], result[0] and result[2]))
        return result

    def counted_measure(self, t, y, entries=None):
        log.full += (t, y.tobytes()) != self._key
        return measure(self, t, y, entries)

    monkeypatch.setattr(RankMonitor, "_cleared", counted_cleared)
    monkeypatch.setattr(RankMonitor, "measure", counted_measure)
    return log


def without_bound(monkeypatch, *args, **options):
    """``simulate(*args, **options)`` with the full measure at every step end (the bound switched off)."""
    with monkeypatch.context() as patch:
        patch.setattr(RankMonitor, "_watched_entries", lambda self: (None, []))
        return simulate(*args, **options)


def assert_same_stop(run, reference):
    assert run.status == reference.status == "singular"
    found, expected = run.singularity, reference.singularity
    assert found.time == expected.time and found.kind == expected.kind and found.rows == expected.rows
    np.testing.assert_array_equal(found.state, expected.state)
    np.testing.assert_array_equal(run.t, reference.t)
    np.testing.assert_array_equal(run.q, reference.q)


def test_a_node_crossed_inside_one_step_after_steps_the_bound_cleared_stops_where_the_full_check_stops(
        bead, monkeypatch, record):
    """Small steps to t = 1.1 (``t_eval`` points), then one step of 0.4 s across the node at t = 1.368.

    The small steps are cleared by the bound without a new anchor, so the sign test's reference is
    older than the step's start when the long step crosses the node: the check must take the step
    start as the reference again (as the full check does) and find the crossing by the sign test.
    """
    compiled, q0, qd0 = bead
    t_eval = np.concatenate([np.linspace(0.0, 1.1, 111), [2.0]])
    options = dict(method="rk4", step=0.5, t_eval=t_eval)
    run = simulate(compiled, (0.0, 2.0), q0, qd0, **options)
    reference = without_bound(monkeypatch, compiled, (0.0, 2.0), q0, qd0, **options)
    assert_same_stop(run, reference)
    assert 1.1 < run.singularity.time < 1.5 and run.t[-1] == pytest.approx(1.1)
    before = [end for end in record.ends if end[0] <= 1.1 + 1e-12]
    assert before[-1][0] == pytest.approx(1.1) and before[-1][1] and not before[-1][2]  # cleared, no new anchor
    assert sum(cleared for _, cleared, _ in before) > 90  # nearly every small step skipped its full measure
    assert np.hypot(*run.singularity.state[:2]) < 0.1  # the bisection found the node, not a point far from it


@pytest.mark.parametrize("step", [1e-3, 0.01, 0.05, 0.2])
def test_the_bead_stops_at_the_node_as_with_the_full_check_at_every_step(bead, monkeypatch, record, step):
    compiled, q0, qd0 = bead
    run = simulate(compiled, (0.0, 4.0), q0, qd0, method="rk4", step=step)
    assert_same_stop(run, without_bound(monkeypatch, compiled, (0.0, 4.0), q0, qd0, method="rk4", step=step))
    assert any(cleared for _, cleared, _ in record.ends)


@pytest.mark.parametrize("method, step", [("rk4", 1e-3), ("rk4", 0.02), ("euler", 1e-3)])
def test_polar_coordinates_stop_near_the_origin_as_with_the_full_check(polar, monkeypatch, record, method, step):
    """The mass bound (Weyl's inequality for the eigenvalues of ``M = diag(1, r^2)``)."""
    compiled, q0, qd0 = polar
    run = simulate(compiled, (0.0, 2.0), q0, qd0, method=method, step=step)
    assert_same_stop(run, without_bound(monkeypatch, compiled, (0.0, 2.0), q0, qd0, method=method, step=step))
    assert run.singularity.kind == "mass" and abs(run.singularity.state[0]) < 0.05
    assert sum(cleared for _, cleared, _ in record.ends) > 0.5 * len(run.t)


def _regular_runs():
    q0, qd0 = double_pendulum.to_cartesian(*double_pendulum.initial_state(2.0, 1.0))
    yield "double pendulum (Cartesian)", double_pendulum.cartesian_model().compile(), q0, qd0, 0.02
    yield "double pendulum (angles)", double_pendulum.minimal_model().compile(), *double_pendulum.initial_state(), 1e-3
    yield "rolling disk", rolling_disk.model().compile(), *rolling_disk.initial_state(), 0.01
    yield "two-link chain", chain.n_link_chain(2).compile(), *chain.chain_initial_state(2), 0.01


@pytest.mark.parametrize("case", list(_regular_runs()), ids=lambda case: case[0])
def test_regular_runs_are_not_flagged_and_skip_most_full_measures(case, record):
    label, compiled, q0, qd0, step = case
    run = simulate(compiled, (0.0, 2.0), q0, qd0, method="rk4", step=step)
    assert run.status == "ok", run.stop_reason
    steps = len(run.t) - 1
    assert len(record.ends) == steps  # every step end was looked at
    # the start, then a new anchor now and then: a full measure at most every fourth step
    assert record.full <= 2 + steps / 4, (label, record.full, steps)


def test_the_bound_never_clears_a_step_end_the_full_measure_flags(bead):
    """Step ends along the loop of the cubic, ever closer to the node, fed to two monitors.

    One compares entries with its anchor (the bound), the other is told to measure in full every
    time; wherever the bound clears a step end, the full measure there is above the tolerance and
    its sign test against the previous end passes.
    """
    compiled, q0, qd0 = bead
    p = np.zeros(0)
    y0 = np.concatenate([q0, qd0])
    bounded = RankMonitor(compiled, p, 0.0, y0)
    assert bounded._bound == "rows"
    # x = s^2 - 1, y = s (s^2 - 1): s from 0 towards the node at s = -1, steps shrinking near it
    grid = -(1.0 - np.geomspace(1.0, 1e-4, 60))
    cleared = 0
    for k, s in enumerate(grid[1:], start=1):
        y = np.array([s * s - 1.0, s * (s * s - 1.0), 2 * s, 3 * s * s - 1.0])
        full = RankMonitor(compiled, p, 0.0, y0)
        full.rebase(float(k - 1), np.array([grid[k - 1] ** 2 - 1.0, grid[k - 1] * (grid[k - 1] ** 2 - 1.0),
                                            2 * grid[k - 1], 3 * grid[k - 1] ** 2 - 1.0]))
        out = full.measure(float(k), y)
        if bounded._cleared(float(k), y, bounded._entries(float(k), y))[0]:
            cleared += 1
            assert out.value >= SINGULAR_RTOL and out.turn > 0
        else:
            bounded.rebase(float(k), y)
    assert 5 < cleared < len(grid) - 1  # the bound cleared the far ends, not those near the node



def _on_the_loop(s: float) -> np.ndarray:
    """The state at parameter ``s`` of ``x = s^2 - 1``, ``y = s (s^2 - 1)`` (the node at ``s = -1``), rate ``d/ds``."""
    return np.array([s * s - 1.0, s * (s * s - 1.0), 2 * s, 3 * s * s - 1.0])


@pytest.mark.parametrize("end", [5e-5, 1.5e-4])
def test_a_step_end_past_the_bounds_reach_but_below_the_tolerance_is_flagged(bead, end):
    """An anchor 0.05 before the node, a tiny cleared step, then one step to ``end`` before it.

    The last step leaves the bound's reach while its sign test against the previous end still
    passes, so the check measures that end without the sign test: the measure there is below
    the tolerance, and the step must be flagged as the full check flags it, not adopted as a
    new anchor.
    """
    compiled, q0, qd0 = bead
    p, y0 = np.zeros(0), np.concatenate([q0, qd0])
    ends = [_on_the_loop(s) for s in (-1.0 + 0.05, -1.0 + 0.05 - 1e-6, -1.0 + end)]
    answers = []
    for bounded in (True, False):
        monitor = RankMonitor(compiled, p, 0.0, y0)
        if not bounded:
            monitor._bound, monitor._picks = None, []
        monitor.rebase(0.0, ends[0])
        first = monitor.check_step(1.0, ends[1])
        if bounded:  # the path under test: the tiny step was cleared, the last is not, its sign test passes
            assert monitor._previous is not None
            assert monitor._cleared(2.0, ends[2], monitor._entries(2.0, ends[2]))[:2] == (False, True)
        answers.append([first, monitor.check_step(2.0, ends[2])])
    assert RankMonitor(compiled, p, 0.0, y0).measure(2.0, ends[2]).value < SINGULAR_RTOL
    assert answers[0] == answers[1] == [False, True]
