"""Coulomb stick and slip in a multibody system: the block on a rough floor carrying a pendulum.

Three independent checks of ``examples.friction_cart_pendulum`` and of
``CoulombFriction(normal=...)``:

* accelerations: the Cartesian Udwadia-Kalaba model against the minimal
  coordinates ``(X, theta)`` with the floor's normal force from Newton's law
  for both bodies, derived here again with sympy (sliding both ways, sticking);
* stick/slip times: ``simulate`` against an event-driven ``solve_ivp`` run in
  minimal coordinates (a second code);
* the power theorem along a run that sticks and slips several times.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import sympy as sm
from sympy.physics.mechanics import dynamicsymbols

import udk_notebooks as udk
from udk_notebooks.examples import friction_cart_pendulum as fcp
from udk_notebooks.compiled import HOLD_RTOL
from udk_notebooks.model import CoulombFriction

SPAN = 4.0
ANGLE = 1.2  # the default start: held at first, then stick, slip, reversal, stick, slip, stick


# -- the minimal-coordinate equations, derived again with sympy ---------------------------------------------
@pytest.fixture(scope="module")
def sympy_minimal():
    """``(X'', theta'', N)`` as functions of ``(theta, theta', mode)`` from Lagrange's equations in ``(X, theta)``.

    The friction force ``F`` is the generalized force of ``X``; ``N`` comes from the vertical momentum of
    both bodies, ``N - (m1 + m2) g = m2 y2''``. Sliding: ``F = -mu N mode``.
    """
    t = dynamicsymbols._t
    X, th = dynamicsymbols("X theta")
    m1, m2, l, g, mu, F, N, mode = sm.symbols("m1 m2 l g mu F N mode", real=True)
    bob = sm.Matrix([X + l * sm.sin(th), -l * sm.cos(th)])
    T = m1 * X.diff(t) ** 2 / 2 + m2 * bob.diff(t).dot(bob.diff(t)) / 2
    V = m2 * g * bob[1]
    L = T - V
    equations = [L.diff(c.diff(t)).diff(t) - L.diff(c) - f for c, f in ((X, F), (th, 0))]
    equations.append(N - (m1 + m2) * g - m2 * bob[1].diff(t, 2))
    acc = [X.diff(t, 2), th.diff(t, 2)]
    sliding = sm.solve([e.subs(F, -mu * N * mode) for e in equations], acc + [N], dict=True)[0]
    sticking = sm.solve([e.subs(X.diff(t, 2), 0) for e in equations], [th.diff(t, 2), F, N], dict=True)[0]
    w, wd = sm.symbols("w wd")
    plain = {th.diff(t): wd, th: w}
    values = {m1: 1.0, m2: 0.8, l: 0.8, g: 9.81, mu: 0.15}
    slide = sm.lambdify([w, wd, mode], [sliding[a].subs(values).subs(plain) for a in acc + [N]])
    stick = sm.lambdify([w, wd], [sticking[k].subs(values).subs(plain) for k in (th.diff(t, 2), F, N)])
    return slide, stick


STATES = [(0.7, 0.5, 1.0), (-1.2, -0.3, 2.0), (2.0, 1.0, -1.0), (0.3, -2.0, 0.5), (-2.6, 0.4, -3.0)]


@pytest.mark.parametrize("angle, rate, angle_rate", STATES)
def test_sliding_accelerations_match_minimal_coordinates(sympy_minimal, angle, rate, angle_rate):
    slide, _ = sympy_minimal
    mode = int(np.sign(rate))
    q, qd = fcp.initial_state(0.3, angle, rate, angle_rate)
    motion = fcp.model().compile().motion(0.0, q, qd)
    (Xdd, thdd), normal, friction = fcp.minimal_motion([0.3, angle], [rate, angle_rate], mode)
    np.testing.assert_allclose([Xdd, thdd, normal], slide(angle, angle_rate, mode), rtol=1e-12, atol=1e-12)
    length = fcp.PARAMETERS["l"].default
    bob = [Xdd + length * (np.cos(angle) * thdd - np.sin(angle) * angle_rate**2),
           length * (np.sin(angle) * thdd + np.cos(angle) * angle_rate**2)]
    np.testing.assert_allclose(motion.qdd, [Xdd, 0.0, *bob], rtol=0, atol=1e-10)
    # the friction power is F x1' = -mu N |x1'| with the floor's N, not |F^L| (which holds the rod force)
    assert motion.nonideal @ qd == pytest.approx(friction * rate, rel=1e-12)


@pytest.mark.parametrize("angle, angle_rate", [(0.2, 0.0), (-0.4, 1.0), (0.1, -2.5)])
def test_sticking_accelerations_and_holding_force(sympy_minimal, angle, angle_rate):
    _, stick = sympy_minimal
    q, qd = fcp.initial_state(0.0, angle, 0.0, angle_rate)
    compiled = fcp.model().compile()
    p = compiled.parameters()
    motion, ratios = compiled.solve_modes(0.0, q, qd, p, (0,))
    thdd, friction, normal = stick(angle, angle_rate)
    (_, thdd_hand), normal_hand, friction_hand = fcp.minimal_motion([0.0, angle], [0.0, angle_rate], 0)
    np.testing.assert_allclose([thdd_hand, friction_hand, normal_hand], [thdd, friction, normal], rtol=1e-12)
    length = fcp.PARAMETERS["l"].default
    bob = [length * (np.cos(angle) * thdd - np.sin(angle) * angle_rate**2),
           length * (np.sin(angle) * thdd + np.cos(angle) * angle_rate**2)]
    np.testing.assert_allclose(motion.qdd, [0.0, 0.0, *bob], rtol=0, atol=1e-10)
    # the holding ratio is the holding force over mu_s N, with the floor's N
    assert ratios[0] == pytest.approx(friction / (fcp.PARAMETERS["mu_s"].default * normal), rel=1e-10)
    assert compiled.friction_modes(0.0, q, qd, p) == ((0,) if abs(ratios[0]) <= 1 else (-int(np.sign(ratios[0])),))


# -- a run that sticks and slips several times --------------------------------------------------------------
@pytest.fixture(scope="module")
def runs():
    q0, qd0 = fcp.initial_state(angle=ANGLE)
    grid = np.linspace(0.0, SPAN, 801)
    run = udk.simulate(fcp.model(), (0.0, SPAN), q0, qd0, method="DOP853", rtol=1e-11, atol=1e-12, t_eval=grid)
    reference = fcp.event_driven((0.0, SPAN), [0.0, ANGLE], [0.0, 0.0], t_eval=grid)
    return run, reference


def _switches(run):
    changed = np.flatnonzero(np.diff(run.modes[:, 0]) != 0) + 1
    return run.t[changed], run.modes[changed, 0]


def test_stick_slip_times_match_event_driven_minimal_coordinates(runs):
    run, reference = runs
    times, modes = _switches(run)
    assert len(times) >= 4 and {0, 1, -1} <= set(modes.tolist())  # sticks and slips both ways
    np.testing.assert_allclose(times, reference.switch_times, rtol=0, atol=1e-7)
    ref_modes = [reference.modes[np.searchsorted(reference.t, s, side="right") - 1] for s in reference.switch_times]
    np.testing.assert_array_equal(modes, ref_modes)
    # and the states agree on the common grid
    q, _ = fcp.to_minimal(run.q, run.qd)
    grid = np.linspace(0.0, SPAN, 801)
    mine, theirs = np.isin(run.t, grid), np.isin(reference.t, grid)
    assert mine.sum() == theirs.sum() == grid.size
    np.testing.assert_allclose(q[mine], reference.q[theirs], atol=1e-7)
    assert np.abs(run.position_residual).max() < 1e-8


def test_normal_force_varies_with_the_swing_and_friction_power(runs):
    run, _ = runs
    q, qd = fcp.to_minimal(run.q, run.qd)
    modes = run.modes[:, 0]
    normal = np.array([fcp.minimal_motion(a, b, int(m))[1] for a, b, m in zip(q, qd, modes)])
    weight = (fcp.PARAMETERS["m1"].default + fcp.PARAMETERS["m2"].default) * 9.81
    assert normal.min() < 0.8 * weight and normal.max() > 1.1 * weight and normal.min() > 0
    sliding = modes != 0
    expected = -fcp.PARAMETERS["mu"].default * normal * np.abs(qd[:, 0])
    np.testing.assert_allclose(run.power["nonideal"][sliding], expected[sliding], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(run.power["nonideal"][~sliding], 0.0, atol=1e-8)


def test_power_theorem_along_stick_and_slip(runs):
    run, _ = runs
    dissipated = run.energy[0] - run.energy[-1]
    assert dissipated > 0.1
    assert np.all(np.diff(run.energy) < 1e-8)  # friction only takes energy out
    # trapezoidal work of the recorded powers; switch instants are samples, so the kinks lie on the grid
    assert np.abs(run.energy_balance()).max() < 1e-4 * dissipated


@pytest.mark.parametrize("method, options", [("RK45", dict(rtol=1e-10, atol=1e-12)), ("rk4", dict(step=4e-3))])
def test_other_integrators_find_the_same_switches(runs, method, options):
    _, reference = runs
    q0, qd0 = fcp.initial_state(angle=ANGLE)
    run = udk.simulate(fcp.model(), (0.0, SPAN), q0, qd0, method=method, **options)
    times, _ = _switches(run)
    np.testing.assert_allclose(times, reference.switch_times, atol=1e-5)


def test_sticking_contact_released_at_its_limit_without_refiring():
    """The setting that hit `max_switches` before: the limit event was located on the near side of the limit,
    the contact was held again, and the event fired again at once. With the floor's normal force each limit
    event releases the contact once, at the event-driven reference's times. The whole-system |F^L|
    (normal=None) that this test used before is refused here: the cart's friction changes the rod's
    reaction (A M^-1 C != 0), so |F^L| is not the floor's normal force (issue 18)."""
    setting = dict(m1=1.0, m2=1.0, l=1.0, mu=0.2, mu_s=0.3)
    system = fcp.model(**setting)
    contact = system.friction[0]
    whole = dataclasses.replace(system, friction=[CoulombFriction(contact.sliding_velocity, contact.coefficient,
                                                                  contact.static_coefficient)])
    assert whole.friction_normals == (None,)
    q0, qd0 = fcp.initial_state(angle=1.0, **setting)
    with pytest.raises(ValueError, match=r"A M\^-1 C != 0.*udk_notebooks.Contact"):
        udk.simulate(whole, (0.0, 3.0), q0, qd0, method="RK45")
    reference = fcp.event_driven((0.0, 3.0), [0.0, 1.0], [0.0, 0.0], **setting)
    assert len(reference.switch_times) == 3
    for method in ("DOP853", "RK45"):
        run = udk.simulate(system, (0.0, 3.0), q0, qd0, method=method, rtol=1e-9, atol=1e-12, max_switches=20)
        times, modes = _switches(run)
        np.testing.assert_allclose(times, reference.switch_times, atol=1e-6)
        ref_modes = [reference.modes[np.searchsorted(reference.t, s, side="right") - 1] for s in reference.switch_times]
        np.testing.assert_array_equal(modes, ref_modes)


def test_release_at_the_limit_depends_on_the_crossing():
    """Within HOLD_RTOL above the limit a contact found at rest stays; one whose limit event fired slides."""
    compiled = fcp.model().compile()
    q, qd = fcp.initial_state(0.0, 0.9, 0.0, 0.5)
    _, ratios = compiled.solve_modes(0.0, q, qd, compiled.parameters(), (0,))
    at_limit = compiled.parameters(mu_s=0.25 * abs(ratios[0]) / (1 + HOLD_RTOL / 2))
    _, ratios = compiled.solve_modes(0.0, q, qd, at_limit, (0,))
    assert 1 < abs(ratios[0]) < 1 + HOLD_RTOL
    assert compiled.release(0.0, q, qd, at_limit, (0,), [0]) == (0,)
    assert compiled.release(0.0, q, qd, at_limit, (0,), [0], crossed=[0]) == (-int(np.sign(ratios[0])),)


@pytest.mark.parametrize("direction", [1, -1])
def test_painleve_inconsistency_is_refused(direction):
    """Above mu = 2 sqrt(m1 (m1 + m2)) / m2 (0.286 here) friction and normal force feed each other.

    At theta = 0.37 sliding right the minimal system's determinant
    l (m1 + m2 s^2 - mu m2 s c) is negative (no motion with N > 0); sliding left
    the bilateral contact (N a size) admits two normal forces. Both are refused.
    """
    params = dict(m1=0.1, m2=5.0, mu=0.9, mu_s=0.9)
    q, qd = fcp.initial_state(0.0, 0.37, direction, 0.0, **params)
    with pytest.raises(ValueError, match="Painleve"):
        fcp.model(**params).compile().motion(0.0, q, qd)
    below = dict(params, mu=0.28, mu_s=0.28)
    motion = fcp.model(**below).compile().motion(0.0, q, qd)
    (Xdd, _), _, _ = fcp.minimal_motion([0.0, 0.37], [direction, 0.0], direction, **below)
    assert motion.qdd[0] == pytest.approx(Xdd, rel=1e-9)


# -- the `normal` argument ----------------------------------------------------------------------------------
def _block_with_rod(normal):
    x1, y1, x2, y2 = dynamicsymbols("x1 y1 x2 y2")
    length = sm.Symbol("l")
    return udk.Model([x1, y1, x2, y2], mass_matrix=sm.eye(4), potential_energy=9.81 * (y1 + y2),
                     holonomic=[y1, (x2 - x1) ** 2 + (y2 - y1) ** 2 - length**2],
                     friction=[CoulombFriction(x1.diff(), 0.2, normal=normal)], parameters={length: 1.0})


def test_normal_names_constraints_by_expression_or_row():
    x1, y1, x2, y2 = dynamicsymbols("x1 y1 x2 y2")
    length = sm.Symbol("l")
    assert _block_with_rod(y1).friction_normals == ((0,),)
    assert _block_with_rod(0).friction_normals == ((0,),)
    assert _block_with_rod([1, y1]).friction_normals == ((1, 0),)
    assert _block_with_rod((x1 - x2) ** 2 + (y2 - y1) ** 2 - length**2).friction_normals == ((1,),)
    assert _block_with_rod(None).friction_normals == (None,)


@pytest.mark.parametrize("bad, message", [
    (dynamicsymbols("x2"), "not one of the model's constraints"),
    (2, "out of range"),
    ([], "empty"),
    ([0, 0], "twice"),
    ("1 +", "must name constraints"),
])
def test_bad_normal_is_refused_naming_the_argument(bad, message):
    with pytest.raises(ValueError, match=rf"`friction\[0\].normal`.*{message}|{message}.*`friction\[0\].normal`"):
        _block_with_rod(bad)


def test_normal_none_is_refused_where_friction_changes_the_reaction():
    """N = |F^L| (normal=None) is the normal force only when A M^-1 C = 0 (issue 18). A block carrying a rod
    fails that (its friction loads the rod): refused, pointing to Contact. The block on the incline passes it
    (checked symbolically once), and its friction power is -mu |F^L| |s|."""
    system = _block_with_rod(None)
    q = np.array([0.0, 0.0, np.sin(0.5), -np.cos(0.5)])
    qd = np.array([1.0, 0.0, 1.0, 0.0])
    compiled = system.compile()
    assert compiled.reaction_free == (False,)
    with pytest.raises(ValueError, match="Contact"):
        compiled.motion(0.0, q, qd)
    from udk_notebooks.examples import incline_friction

    block = incline_friction.model().compile()
    assert block.reaction_free == (True,)
    q, qd = incline_friction.initial_state(2.0)
    motion = block.motion(0.0, q, qd)
    expected = -0.3 * np.linalg.norm(motion.ideal) * np.hypot(*qd)
    assert motion.nonideal @ qd == pytest.approx(expected, rel=1e-12)


def test_redundant_rows_give_one_normal_force_or_a_refusal():
    x1, y1, x2, y2 = dynamicsymbols("x1 y1 x2 y2")
    length = sm.Symbol("l")

    def block(normal, twice):
        return udk.Model([x1, y1, x2, y2], mass_matrix=sm.eye(4), potential_energy=9.81 * (y1 + y2),
                         holonomic=[y1, (x2 - x1) ** 2 + (y2 - y1) ** 2 - length**2] + ([2 * y1] if twice else []),
                         friction=[CoulombFriction(x1.diff(), 0.2, normal=normal)], parameters={length: 1.0})

    q = np.array([0.0, 0.0, np.sin(0.5), -np.cos(0.5)])
    qd = np.array([1.0, 0.0, 1.0, 0.0])
    single = block(y1, twice=False).compile().motion(0.0, q, qd)
    both = block([y1, 2 * y1], twice=True).compile().motion(0.0, q, qd)  # dependence within the named rows
    np.testing.assert_allclose(both.qdd, single.qdd, atol=1e-10)
    with pytest.raises(ValueError, match="depend on other constraint rows"):
        block(y1, twice=True).compile().motion(0.0, q, qd)


def test_two_contacts_solve_their_normal_forces_together():
    """Two copies of the system in one model (Newton's method for two normal forces) move as each alone."""
    a = dynamicsymbols("a1 b1 a2 b2")
    single = fcp.model()
    rename = dict(zip(single.coordinates, a))
    twin = lambda e: e.xreplace(rename)  # noqa: E731
    both = udk.Model(
        [*single.coordinates, *a],
        kinetic_energy=single.T + twin(single.T), potential_energy=single.V + twin(single.V),
        holonomic=[*single.phi, *(twin(e) for e in single.phi)],
        friction=[single.friction[0], CoulombFriction(twin(single.friction[0].sliding_velocity), fcp.mu, fcp.mu_s,
                                                      normal=twin(fcp.FLOOR))],
        parameters=single.parameters)
    assert both.friction_normals == ((0,), (2,))
    q1, qd1 = fcp.initial_state(0.0, 0.7, 0.5, 1.0)
    q2, qd2 = fcp.initial_state(0.2, -1.3, -0.4, 2.0)
    motion = both.compile().motion(0.0, np.r_[q1, q2], np.r_[qd1, qd2])
    alone = [single.compile().motion(0.0, q, qd).qdd for q, qd in ((q1, qd1), (q2, qd2))]
    np.testing.assert_allclose(motion.qdd, np.concatenate(alone), atol=1e-10)
