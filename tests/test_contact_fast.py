"""The Python-float route of the contact solver against the general route, call by call and run by run.

:meth:`CompiledModel._fast_contacts` takes small models with a constant diagonal
mass matrix and either ``CoulombFriction(normal=rows)`` entries (the block on a
rough floor carrying a pendulum), one ``CoulombFriction(normal=None)`` entry (the
block on a rough incline) or unilateral ``Contact`` entries (the ladder against a
floor and a wall); :meth:`CompiledModel._general_contacts` is the
least-squares route it stands in for. Both must give the same motion, holding
ratios, normal forces and refusals.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from sympy.physics.mechanics import dynamicsymbols

from udk_notebooks.compiled import OPEN
from udk_notebooks.examples import friction_cart_pendulum as fcp
from udk_notebooks.examples import ladder
from udk_notebooks.simulation import simulate


@pytest.fixture(scope="module")
def cm():
    return fcp.model().compile()


def _states(cm, count, seed):
    rng = np.random.default_rng(seed)
    for k in range(count):
        p = cm.parameters(m1=rng.uniform(0.1, 5), m2=rng.uniform(0.1, 5), l=rng.uniform(0.2, 2),
                          g=rng.uniform(0, 20), mu=rng.uniform(0, 1), mu_s=rng.uniform(0, 1))
        q, qd = fcp.initial_state(angle=rng.uniform(-3, 3), rate=rng.uniform(-3, 3),
                                  angle_rate=rng.uniform(-3, 3), l=p[2])
        q = q + rng.normal(0.0, 1e-3, 4)  # off the constraints a little, as an integrator's states are
        correction = rng.normal(0.0, 1.0, 2) if k % 2 else None
        yield float(rng.uniform(0, 5)), q, qd, p, correction


@pytest.mark.parametrize("modes", [(1,), (-1,), (0,)])
def test_fast_route_equals_the_general_route(cm, modes):
    """Accelerations, forces and holding ratios agree to 1e-11 of their size at random states and parameters."""
    answered = 0
    for t, q, qd, p, correction in _states(cm, 150, seed=len(modes) + modes[0]):
        fast = cm._fast_contacts(t, q, qd, p, modes, correction)
        try:
            general = cm._general_contacts(t, q, qd, p, modes, correction)
        except ValueError:  # the general route refuses (a Painleve-type gain): the fast one must not answer
            assert fast is None
            continue
        if fast is None:
            continue
        answered += 1
        for name in ("qdd", "impressed", "ideal", "nonideal"):
            want, got = getattr(general[0], name), getattr(fast[0], name)
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-11 * max(1.0, np.abs(want).max()), err_msg=name)
        np.testing.assert_allclose(fast[1], general[1], rtol=1e-10, atol=1e-11, equal_nan=True)
    assert answered > 100  # the fast route is the one taken, not a bystander


def test_fast_route_declines_a_painleve_gain_and_the_general_route_refuses(cm):
    """Past the friction gain of one the fast route answers nothing; solve_contacts raises the general message."""
    p = cm.parameters(m1=0.1, m2=5.0, mu=1.0, mu_s=1.0)
    q, qd = fcp.initial_state(angle=-0.6, rate=1.0, angle_rate=0.0, **{"l": 0.8})
    assert cm._fast_contacts(0.0, q, qd, p, (1,), None) is None
    with pytest.raises(ValueError, match="Painleve"):
        cm.solve_contacts(0.0, q, qd, p, (1,))


def test_fast_route_declines_a_mass_matrix_it_cannot_vouch_for(cm):
    """A massless block (M singular) goes the general route."""
    p = cm.parameters(m1=0.0)
    q, qd = fcp.initial_state(angle=1.0)
    assert cm._fast_contacts(0.0, q, qd, p, (1,), None) is None


def test_whole_run_matches_a_tight_general_run(cm, monkeypatch):
    """A run by the fast route equals a run by the general route (rtol 1e-10) to the integrator's tolerance."""
    q0, qd0 = fcp.initial_state(angle=1.2)
    times = np.linspace(0.0, 4.0, 81)
    fast = simulate(cm, (0.0, 4.0), q0, qd0, method="DOP853", rtol=1e-10, atol=1e-12, t_eval=times)
    monkeypatch.setattr(type(cm), "_fast_contacts", lambda self, *args: None)
    general = simulate(cm, (0.0, 4.0), q0, qd0, method="DOP853", rtol=1e-10, atol=1e-12, t_eval=times)
    assert (fast.modes[:, 0] == 0).any() and fast.t.size == general.t.size
    np.testing.assert_array_equal(fast.modes, general.modes)
    np.testing.assert_allclose(fast.q, general.q, atol=1e-8)
    np.testing.assert_allclose(fast.ideal, general.ideal, atol=1e-6)


def _same(fast, general):
    """Motion to 1e-11 of its size; ratios and normal forces to 1e-11 relative (a ratio grows as N falls)."""
    for name in ("qdd", "impressed", "ideal", "nonideal"):
        want, got = getattr(general[0], name), getattr(fast[0], name)
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-11 * max(1.0, np.abs(want).max()), err_msg=name)
    for got, want in zip(fast[1:], general[1:]):
        np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-11, equal_nan=True)


def test_ladder_contacts_fast_route_equals_the_general_route():
    """Every stick/slide/open pair of the ladder's floor and wall, at random states: motion, ratios, N agree."""
    cm = ladder.model().compile()
    rng = np.random.default_rng(2)
    answered, refused = set(), 0
    for k in range(60):
        p = cm.parameters(mu_floor=rng.uniform(0, 1), mu_wall=rng.uniform(0, 1), m=rng.uniform(0.5, 3),
                          L=rng.uniform(0.5, 3))
        q0, qd0 = ladder.initial_state(theta0=rng.uniform(0.2, 1.4), L=p[cm.parameter_names.index("L")])
        q, qd = q0 + rng.normal(0, 1e-3, 3), qd0 + rng.normal(0, 0.5, 3)
        correction = rng.normal(0, 1, cm.m) if k % 2 else None
        for modes in itertools.product((0, 1, -1, OPEN), repeat=2):
            fast = cm._fast_contacts(0.1, q, qd, p, modes, correction)
            try:
                general = cm._general_contacts(0.1, q, qd, p, modes, correction)
            except ValueError:  # a Painleve paradox or an undetermined split: the fast route must not answer
                assert fast is None
                refused += 1
                continue
            if fast is not None:
                _same(fast, general)
                answered.add(modes)
    # both sliding, one sliding and one stuck, one open: all taken by the fast route somewhere
    assert {(1, -1), (-1, 1), (1, 0), (OPEN, 1), (1, OPEN), (0, OPEN)} <= answered


def test_ladder_fast_route_declines_a_paradox_the_general_route_names():
    """Both ends sliding the same way with mu = 2: the general route raises Painleve's paradox; the fast one declines."""
    cm = ladder.model().compile()
    p = cm.parameters(mu_floor=2.0, mu_wall=2.0)
    for theta in np.linspace(0.1, 0.5, 5):
        q, qd = ladder.initial_state(theta0=theta)
        assert cm._fast_contacts(0.0, q, qd, p, (1, 1), None) is None
        with pytest.raises(ValueError, match="Painleve's paradox"):
            cm.solve_contacts(0.0, q, qd, p, (1, 1))


def test_ladder_run_by_the_fast_route_matches_the_general_route(monkeypatch):
    """The ladder sliding down, its wall contact opening: the same run by either route (rtol 1e-10)."""
    cm = ladder.model().compile()
    q0, qd0 = ladder.initial_state(theta0=1.2)
    times = np.linspace(0.0, 1.5, 61)
    fast = simulate(cm, (0.0, 1.5), q0, qd0, method="DOP853", rtol=1e-10, atol=1e-12, t_eval=times)
    monkeypatch.setattr(type(cm), "_fast_contacts", lambda self, *args: None)
    general = simulate(cm, (0.0, 1.5), q0, qd0, method="DOP853", rtol=1e-10, atol=1e-12, t_eval=times)
    assert fast.status == general.status and fast.t.size == general.t.size
    np.testing.assert_array_equal(fast.modes, general.modes)
    np.testing.assert_allclose(fast.q, general.q, atol=1e-8)
    np.testing.assert_allclose(fast.normal_force, general.normal_force, atol=1e-6, equal_nan=True)


def _with_own_nonideal(contact: bool):
    """The block and pendulum with a viscous nonideal force on the bob, C = -c (x2', y2'), in both declarations."""
    import sympy as sm

    from udk_notebooks.contacts import Contact, Plane
    from udk_notebooks.model import CoulombFriction, Model

    x1, y1, x2, y2 = fcp.x1, fcp.y1, fcp.x2, fcp.y2
    c = sm.Symbol("c", positive=True)
    common = dict(
        kinetic_energy=(fcp.m1 * (x1.diff() ** 2 + y1.diff() ** 2) + fcp.m2 * (x2.diff() ** 2 + y2.diff() ** 2)) / 2,
        potential_energy=fcp.g * (fcp.m1 * y1 + fcp.m2 * y2),
        nonideal=[0, 0, -c * x2.diff(), -c * y2.diff()],
        parameters={fcp.m1: 1.0, fcp.m2: 0.8, fcp.l: 0.8, fcp.g: 9.81, fcp.mu: 0.3, fcp.mu_s: 0.4, c: 0.7},
    )
    rod = (x2 - x1) ** 2 + (y2 - y1) ** 2 - fcp.l**2
    if contact:
        return Model([x1, y1, x2, y2], holonomic=[rod],
                     contacts=[Contact((x1, y1), Plane((0, 1)), mu=fcp.mu, mu_s=fcp.mu_s, name="floor")], **common)
    return Model([x1, y1, x2, y2], holonomic=[y1, rod], friction=[CoulombFriction(x1.diff(), fcp.mu, fcp.mu_s, normal=y1)],
                 **common)


@pytest.mark.parametrize("contact", [False, True])
def test_fast_route_with_the_models_own_nonideal_force(contact):
    """A model's own C moves the multipliers by its reaction: both routes agree, sliding and sticking."""
    cm = _with_own_nonideal(contact).compile()
    assert cm.has_nonideal
    answered = 0
    for t, q, qd, p, correction in _states(cm, 40, seed=7):
        for modes in [(1,), (-1,), (0,)]:
            fast = cm._fast_contacts(t, q, qd, p, modes, correction)
            try:
                general = cm._general_contacts(t, q, qd, p, modes, correction)
            except ValueError:
                assert fast is None
                continue
            if fast is not None:
                _same(fast, general)
                answered += 1
    assert answered > 60


# -- what the fast route must leave to the general one, or match it on -------------------------------------
def _agree_or_decline(cm, states, modes_list) -> int:
    """Each call: the fast route declines, or it equals the general route (refusals included); answers counted."""
    answered = 0
    for t, q, qd, p, correction in states:
        for modes in modes_list:
            fast = cm._fast_contacts(t, q, qd, p, modes, correction)
            try:
                general = cm._general_contacts(t, q, qd, p, modes, correction)
            except ValueError:
                assert fast is None, modes
                continue
            if fast is not None:
                _same(fast, general)
                answered += 1
    return answered


def _two_blocks_and_a_bob():
    """Two blocks on a rough floor, each tied by a rod to one bob hanging between them (a trapeze).

    Two ``CoulombFriction(normal=rows)`` entries: the friction on one block swings the bob, which
    changes the pull of the other rod and so the other block's normal force (the holding ratio of a
    sticking block while the other slides depends on the sliding block's normal force).
    """
    import sympy as sm

    from udk_notebooks.model import CoulombFriction, Model

    x1, y1, x2, y2, x3, y3 = dynamicsymbols("x1 y1 x2 y2 x3 y3")
    m1, m2, m3, l, g, mu, mu_s = sm.symbols("m1 m2 m3 l g mu mu_s", positive=True)
    speeds = [c.diff() for c in (x1, y1, x2, y2, x3, y3)]
    return Model(
        [x1, y1, x2, y2, x3, y3],
        kinetic_energy=(m1 * (speeds[0] ** 2 + speeds[1] ** 2) + m2 * (speeds[2] ** 2 + speeds[3] ** 2)
                        + m3 * (speeds[4] ** 2 + speeds[5] ** 2)) / 2,
        potential_energy=g * (m1 * y1 + m2 * y2 + m3 * y3),
        holonomic=[y1, y2, (x3 - x1) ** 2 + (y3 - y1) ** 2 - l**2, (x3 - x2) ** 2 + (y3 - y2) ** 2 - l**2],
        friction=[CoulombFriction(x1.diff(), mu, mu_s, normal=y1), CoulombFriction(x2.diff(), mu, mu_s, normal=y2)],
        parameters={m1: 1.0, m2: 1.5, m3: 2.0, l: 1.0, g: 9.81, mu: 0.3, mu_s: 0.4},
    )


def _trapeze_states(cm, count, seed):
    rng = np.random.default_rng(seed)
    for k in range(count):
        half = rng.uniform(0.2, 0.9)  # half the blocks' distance; the bob hangs below the middle
        p = cm.parameters(m1=rng.uniform(0.2, 3), m2=rng.uniform(0.2, 3), m3=rng.uniform(0.2, 3),
                          mu=rng.uniform(0, 0.8), mu_s=rng.uniform(0, 0.8))
        centre, depth = rng.uniform(-1, 1), math.sqrt(1.0 - half**2)
        q = np.array([centre - half, 0.0, centre + half, 0.0, centre + rng.uniform(-0.1, 0.1), -depth])
        qd = np.array([rng.uniform(-2, 2), 0.0, rng.uniform(-2, 2), 0.0, rng.uniform(-2, 2), rng.uniform(-2, 2)])
        q = q + rng.normal(0.0, 1e-3, 6)
        yield 0.0, q, qd, p, rng.normal(0.0, 1.0, 4) if k % 2 else None


def test_two_named_entries_one_sliding_one_sticking_agree_with_the_general_route():
    """The sticking block's ratio takes the sliding block's normal force through the bob (both routes agree)."""
    cm = _two_blocks_and_a_bob().compile()
    modes_list = [(1, 0), (-1, 0), (0, 1), (0, -1), (0, 0)]
    answered = _agree_or_decline(cm, _trapeze_states(cm, 30, seed=11), modes_list)
    assert answered > 100  # the fast route is the one taken


def _rough_bead_on_a_hoop():
    """A bead on a rough circular wire (``unilateral=False``): its normal force takes either sign."""
    import sympy as sm

    from udk_notebooks.contacts import Contact, Curve
    from udk_notebooks.model import Model

    x, y = dynamicsymbols("x y")
    m, g, R, mu = sm.symbols("m g R mu", positive=True)
    wire = Curve(lambda r: sm.sqrt(r[0] ** 2 + r[1] ** 2) - R)
    return Model([x, y], kinetic_energy=m * (x.diff() ** 2 + y.diff() ** 2) / 2, potential_energy=m * g * y,
                 contacts=[Contact((x, y), wire, mu=mu, name="wire", unilateral=False)],
                 parameters={m: 1.0, g: 9.81, R: 1.0, mu: 0.3})


def test_a_bilateral_rough_contact_sliding_goes_the_general_route():
    """Friction ``mu |N|`` with ``N`` of either sign is the general route's sign search; the fast one declines.

    At the top of the wire at speed 4 m/s the wire pulls (``N = g - v^2 / R < 0``): friction still
    opposes the sliding, ``-mu |N| sgn(s)``, which the unilateral formula ``N e`` would reverse.
    """
    cm = _rough_bead_on_a_hoop().compile()
    p = cm.defaults
    for speed in (0.5, 4.0):  # the wire pushes, then pulls
        q, qd = np.array([0.0, 1.0]), np.array([speed, 0.0])
        assert cm._fast_contacts(0.0, q, qd, p, (1,), None) is None
        motion, _, normals = cm.solve_contacts(0.0, q, qd, p, (1,))
        N = 9.81 - speed**2
        np.testing.assert_allclose(normals, [N], rtol=1e-12)
        np.testing.assert_allclose(motion.qdd, [-0.3 * abs(N), -speed**2], rtol=1e-12, atol=1e-12)


def test_a_constant_mass_matrix_that_is_not_diagonal_goes_the_general_route():
    """A block on the rough floor in oblique coordinates (``M`` constant, not diagonal): fast declines, motion exact.

    Position ``(a + b / 2, b sqrt(3) / 2)``; on the floor (``b = 0``) sliding right at ``a' = 1``, the
    block decelerates at ``mu g`` along x, so ``a'' = -mu g`` and ``b'' = 0``.
    """
    import sympy as sm

    from udk_notebooks.contacts import Contact, Plane
    from udk_notebooks.model import Model

    a, b = dynamicsymbols("a b")
    m, g, mu = sm.symbols("m g mu", positive=True)
    point = (a + b / 2, sm.sqrt(3) * b / 2)
    speed = [point[0].diff(), point[1].diff()]
    model = Model([a, b], kinetic_energy=m * (speed[0] ** 2 + speed[1] ** 2) / 2, potential_energy=m * g * point[1],
                  contacts=[Contact(point, Plane((0, 1)), mu=mu, name="floor")],
                  parameters={m: 2.0, g: 9.81, mu: 0.25})
    cm = model.compile()
    q, qd, p = np.array([0.3, 0.0]), np.array([1.0, 0.0]), cm.defaults
    assert cm._fast_contacts(0.0, q, qd, p, (1,), None) is None
    motion, _, normals = cm.solve_contacts(0.0, q, qd, p, (1,))
    np.testing.assert_allclose(motion.qdd, [-0.25 * 9.81, 0.0], atol=1e-12)
    np.testing.assert_allclose(normals, [2.0 * 9.81], rtol=1e-12)


def test_ladder_fast_route_declines_when_one_end_alone_is_in_paradox():
    """Floor sliding right with mu = 2.2, wall sliding down with mu = 1: ``1 - B`` fails at the floor alone.

    Every principal minor of ``I - B`` must be positive (a P-matrix), the floor's own ``1 - B_00``
    included, though the wall's and the determinant are: the general route names Painleve's paradox,
    the fast one must not answer.
    """
    cm = ladder.model().compile()
    p = cm.parameters(m=2.0, L=2.0, mu_floor=2.2, mu_wall=1.0)
    q, _ = ladder.initial_state(theta0=1.06, L=2.0)
    qd = np.array([0.4, -0.3, -0.03])
    assert cm._fast_contacts(0.0, q, qd, p, (1, -1), None) is None
    with pytest.raises(ValueError, match="Painleve's paradox"):
        cm.solve_contacts(0.0, q, qd, p, (1, -1))


# -- CoulombFriction(normal=None): N = |F^L| (the block on the rough incline) ------------------------------
def _incline(slip=None, drag=False):
    """The block on the rough incline ``y = x tan(alpha)``; optionally another slip velocity or a viscous drag.

    ``slip``: ``"x"`` for ``s = x'`` (friction along x, which the line's reaction takes up: ``A M^-1 C != 0``),
    ``"beta"`` for ``s = cos(beta) x' + sin(beta) y'`` (its stick row turns towards the line's normal as
    ``beta`` nears ``alpha + pi / 2``). ``drag``: the model's own nonideal force ``C = -c (x', y')``.
    """
    import sympy as sm

    from udk_notebooks.examples.incline_friction import _symbols
    from udk_notebooks.model import CoulombFriction, Model

    (x, y), (m, g, alpha, mu, mu_s) = _symbols()
    beta, c = sm.symbols("beta c")
    speed = {None: sm.cos(alpha) * x.diff() + sm.sin(alpha) * y.diff(), "x": x.diff(),
             "beta": sm.cos(beta) * x.diff() + sm.sin(beta) * y.diff()}[slip]
    parameters = {m: 1.0, g: 9.81, alpha: 0.5, mu: 0.3, mu_s: 0.4}
    if slip == "beta":
        parameters[beta] = 0.5
    if drag:
        parameters[c] = 0.7
    return Model([x, y], kinetic_energy=m * (x.diff() ** 2 + y.diff() ** 2) / 2, potential_energy=m * g * y,
                 holonomic=[y - x * sm.tan(alpha)], nonideal=[-c * x.diff(), -c * y.diff()] if drag else None,
                 friction=[CoulombFriction(speed, mu, mu_s)], parameters=parameters)


def _incline_states(cm, count, seed):
    """Random parameters (``g = 0`` and ``mu_s = 0`` among them) and states near the line, half corrected."""
    rng = np.random.default_rng(seed)
    for k in range(count):
        values = dict(m=rng.uniform(0.1, 5), g=rng.choice([0.0, rng.uniform(0, 20)], p=[0.05, 0.95]),
                      alpha=rng.uniform(0.05, 1.5), mu=rng.uniform(0, 1.5),
                      mu_s=rng.choice([0.0, rng.uniform(0, 1.5)], p=[0.05, 0.95]))
        if "c" in cm.parameter_names:
            values["c"] = rng.uniform(0, 3)
        p = cm.parameters(**values)
        d, v = rng.uniform(-2, 2), rng.uniform(-3, 3)
        tangent = np.array([math.cos(values["alpha"]), math.sin(values["alpha"])])
        q, qd = d * tangent + rng.normal(0.0, 1e-3, 2), v * tangent + rng.normal(0.0, 1e-2, 2)
        yield float(rng.uniform(0, 5)), q, qd, p, rng.normal(0.0, 1.0, 1) if k % 2 else None


def _same_tightly(fast, general, rtol=1e-12):
    """The motion to ``rtol`` of its size, the ratio to ``rtol`` (NaN where sliding), no normal forces.

    The ratio gets ``rtol`` as an absolute floor too: where ``F^L`` is nil (``g = 0``) its holding force is
    rounding in both routes.
    """
    for name in ("qdd", "impressed", "ideal", "nonideal"):
        want, got = getattr(general[0], name), getattr(fast[0], name)
        np.testing.assert_allclose(got, want, rtol=0, atol=rtol * max(1.0, np.abs(want).max()), err_msg=name)
    np.testing.assert_allclose(fast[1], general[1], rtol=rtol, atol=rtol, equal_nan=True)
    assert fast[2].shape == general[2].shape == (0,)


@pytest.mark.parametrize("drag", [False, True])
@pytest.mark.parametrize("modes", [(1,), (-1,), (0,)])
def test_incline_fast_route_equals_the_general_route(drag, modes):
    """Sliding up, down, sticking, with and without the model's own C: both routes give the same numbers."""
    from udk_notebooks.examples import incline_friction

    cm = (_incline(drag=True) if drag else incline_friction.model()).compile()
    assert cm.reaction_free == (True,)  # a particle on a line: sympy proves A M^-1 ds/dq' = 0
    answered = 0
    names = cm.parameter_names
    for t, q, qd, p, correction in _incline_states(cm, 200, seed=3 + modes[0] + 5 * drag):
        fast = cm._fast_contacts(t, q, qd, p, modes, correction)
        general = cm._general_contacts(t, q, qd, p, modes, correction)
        if fast is not None:
            _same_tightly(fast, general)
            answered += 1
        else:  # only a sticking block that nothing presses (g = 0) or that cannot hold (mu_s = 0): rounding
            assert modes == (0,) and 0.0 in (p[names.index("g")], p[names.index("mu_s")])
    # every sliding state takes the fast route, and every sticking one but those with g = 0 or mu_s = 0 (~10 %)
    assert answered == 200 if modes != (0,) else answered >= 170


def test_incline_fast_route_gives_the_closed_form_motion():
    """On the line at rest or sliding, the fast route's forces are the encyclopedia's (exact_motion)."""
    from udk_notebooks.examples import incline_friction

    cm = incline_friction.model().compile()
    values = dict(m=2.0, g=9.81, alpha=0.4, mu=0.3, mu_s=0.5)
    p = cm.parameters(**values)
    for direction in (1, -1, 0):
        q, qd = incline_friction.initial_state(speed=2.0 * direction, **values)
        fast = cm._fast_contacts(0.0, q, qd, p, (direction,), None)
        want = incline_friction.exact_motion(direction, **values)
        for name in ("qdd", "impressed", "ideal", "nonideal"):
            np.testing.assert_allclose(getattr(fast[0], name), getattr(want, name), rtol=1e-13, atol=1e-13)
        if direction == 0:  # the holding force m g sin(alpha) against its limit mu_s m g cos(alpha)
            np.testing.assert_allclose(fast[1], [math.tan(0.4) / 0.5], rtol=1e-13)


def test_incline_fast_route_declines_friction_that_changes_the_reaction():
    """Friction along x on the inclined line (``A M^-1 C != 0``): the fast route declines, the general route refuses.

    At ``alpha = 0`` the reaction does not change, and the general route answers; sympy cannot prove it for
    every ``alpha``, so the fast route still leaves sliding to the general route's check. Sticking needs no
    such check: there both routes answer, and agree.
    """
    cm = _incline(slip="x").compile()
    assert cm.reaction_free == (False,)
    for t, q, qd, p, correction in _incline_states(cm, 20, seed=5):
        for modes in [(1,), (-1,)]:
            assert cm._fast_contacts(t, q, qd, p, modes, correction) is None
            if p[3] > 0:  # mu > 0: a friction force the line's reaction takes up
                with pytest.raises(ValueError, match="changes the constraint reaction"):
                    cm.solve_contacts(t, q, qd, p, modes, correction)
        stuck = cm._fast_contacts(t, q, qd, p, (0,), correction)
        if stuck is None:  # a ratio of rounding (test_incline_fast_route_declines_a_stick_ratio_of_rounding)
            assert 0.0 in (p[cm.parameter_names.index("g")], p[cm.parameter_names.index("mu_s")])
        else:
            _same_tightly(stuck, cm._general_contacts(t, q, qd, p, (0,), correction))
    p, q, qd = cm.parameters(alpha=0.0), np.zeros(2), np.array([1.0, 0.0])
    assert cm._fast_contacts(0.0, q, qd, p, (1,), None) is None
    np.testing.assert_allclose(cm.solve_contacts(0.0, q, qd, p, (1,))[0].qdd, [-0.3 * 9.81, 0.0], atol=1e-12)


def test_incline_fast_route_declines_a_stick_row_nearly_along_the_normal():
    """A stick row turned towards the line's normal: an ill-conditioned Gram matrix goes the general route.

    ``s = cos(beta) x' + sin(beta) y'`` with ``beta = alpha + pi / 2 - delta``: the Gram matrix of the line
    and the stick row has condition about ``1 / delta^2``. Far from ``1 / GRAM_RCOND`` the fast route
    answers and agrees; past it, it declines (the general route decides on its rank, and may refuse); a
    massless block declines too. (``delta = 0.5`` is left out here: see the next test.)
    """
    cm = _incline(slip="beta").compile()
    q, qd = np.array([0.2, 0.1]), np.zeros(2)
    for delta in (0.8, 0.1, 0.03):
        p = cm.parameters(beta=0.5 + math.pi / 2 - delta)
        _same_tightly(cm._fast_contacts(0.0, q, qd, p, (0,), None), cm._general_contacts(0.0, q, qd, p, (0,), None))
    for delta in (1e-3 / 4, 1e-5, 1e-8, 0.0):  # condition numbers above 1e6
        p = cm.parameters(beta=0.5 + math.pi / 2 - delta)
        assert cm._fast_contacts(0.0, q, qd, p, (0,), None) is None
        assert cm._fast_contacts(0.0, q, qd, p, (0,), np.array([0.5])) is None
    assert cm._fast_contacts(0.0, q, qd, cm.parameters(m=0.0), (0,), None) is None


def test_incline_fast_route_near_the_condition_bound_agrees_or_declines():
    """Across the condition bound (``delta`` around 1e-3) every answer of the fast route is the general route's.

    To 1e-12 up to a condition number of 1e3; beyond, the rounding both routes make grows with it
    (``tests/test_kernels.py``): near ``1 / GRAM_RCOND`` it is about 1e-10 in each.
    """
    cm = _incline(slip="beta").compile()
    rng = np.random.default_rng(8)
    answered = declined = 0
    for delta in np.geomspace(1e-4, 1e-2, 60):
        beta = 0.5 + math.pi / 2 - delta
        p = cm.parameters(beta=beta, m=rng.uniform(0.1, 5))
        q, qd, correction = rng.normal(0, 1, 2), rng.normal(0, 1, 2), rng.normal(0, 1, 1)
        fast = cm._fast_contacts(0.0, q, qd, p, (0,), correction)
        if fast is None:
            declined += 1
            continue
        rows = np.array([[-math.tan(0.5), 1.0], [math.cos(beta), math.sin(beta)]])
        condition = np.linalg.cond(rows @ rows.T)  # M = m I: the Gram matrix's condition is that of A A^T
        _same_tightly(fast, cm._general_contacts(0.0, q, qd, p, (0,), correction), 1e-12 * max(1.0, condition / 1e3))
        answered += 1
    assert answered > 10 and declined > 10


@pytest.mark.parametrize("mu_s", [0.6, 0.3])
def test_incline_run_by_the_fast_route_matches_the_general_route(monkeypatch, mu_s):
    """Sent up the slope: it stops and sticks (mu_s >= tan alpha) or slides back; either route, the same run."""
    from udk_notebooks.examples import incline_friction

    cm = incline_friction.model().compile()
    params = dict(alpha=0.5, mu=0.25, mu_s=mu_s)
    q0, qd0 = incline_friction.initial_state(speed=3.0, **params)
    times = np.linspace(0.0, 1.5, 61)
    fast = simulate(cm, (0.0, 1.5), q0, qd0, params=params, method="DOP853", rtol=1e-10, atol=1e-12, t_eval=times)
    monkeypatch.setattr(type(cm), "_fast_contacts", lambda self, *args: None)
    general = simulate(cm, (0.0, 1.5), q0, qd0, params=params, method="DOP853", rtol=1e-10, atol=1e-12,
                       t_eval=times)
    assert fast.t.size == general.t.size and set(fast.modes[:, 0]) == ({1, 0} if mu_s == 0.6 else {1, -1})
    np.testing.assert_array_equal(fast.modes, general.modes)
    np.testing.assert_allclose(fast.q, general.q, atol=1e-10)
    np.testing.assert_allclose(fast.ideal, general.ideal, atol=1e-8)
    want, _ = incline_friction.exact_state(fast.t, speed=3.0, **params)
    np.testing.assert_allclose(fast.q, want, atol=1e-7)


def test_incline_fast_route_declines_a_stick_ratio_of_rounding():
    """Where ``mu_s N`` is rounding next to ``|F^L|``, the routes' ratios disagree in size and sign: fast declines.

    Three such states: ``mu_s = 0``; a stick row along gravity (``beta = alpha + pi / 2 - 0.5``, so the
    holding force takes all of ``F^L`` and ``N`` is rounding); no gravity and no correction (``F^L = 0``).
    Just above the floor (``mu_s`` a thousand times :data:`~udk_notebooks.kernels.STICK_DENOMINATOR_FLOOR`)
    the fast route answers, and agrees.
    """
    from udk_notebooks.examples import incline_friction
    from udk_notebooks.kernels import STICK_DENOMINATOR_FLOOR

    cm = incline_friction.model().compile()
    q, qd = np.array([0.3, 0.3 * math.tan(0.5)]), np.zeros(2)
    for values in (dict(alpha=0.5, mu=0.0, mu_s=0.0), dict(alpha=0.5, g=0.0)):
        assert cm._fast_contacts(0.0, q, qd, cm.parameters(**values), (0,), None) is None
    p = cm.parameters(alpha=0.5, mu=0.0, mu_s=1e3 * STICK_DENOMINATOR_FLOOR)
    _same_tightly(cm._fast_contacts(0.0, q, qd, p, (0,), None), cm._general_contacts(0.0, q, qd, p, (0,), None))
    along_gravity = _incline(slip="beta").compile()
    p = along_gravity.parameters(beta=0.5 + math.pi / 2 - 0.5)
    assert along_gravity._fast_contacts(0.0, np.array([0.2, 0.1]), np.zeros(2), p, (0,), None) is None


def test_fast_route_declines_a_correction_of_the_wrong_shape():
    """The kernel reads the rows it knows; a correction of another length goes to the general route, which refuses."""
    from udk_notebooks.examples import incline_friction

    cm = incline_friction.model().compile()
    p, q, qd = cm.parameters(), np.array([0.3, 0.3 * math.tan(0.5)]), np.array([1.0, math.tan(0.5)])
    assert cm._fast_contacts(0.0, q, qd, p, (1,), np.zeros(1)) is not None
    for wrong in (np.zeros(2), np.zeros((1, 1))):
        assert cm._fast_contacts(0.0, q, qd, p, (1,), wrong) is None
    with pytest.raises(ValueError):
        cm.solve_contacts(0.0, q, qd, p, (1,), np.zeros(2))
