"""``udk.explore`` on any model, and mechanisms drawn from sympy mechanics bodies (issue 21).

Explorers are driven from Python on the Agg backend. The forces drawn on the
mechanism must be the three terms of the Udwadia-Kalaba equation (Udwadia,
Kalaba & Fan 2005, Eqs. 9-11) of a fresh ``Motion`` at the drawn instant; the
inclined line's must be Eq. (32) of that paper in closed form; a pendulum's
period on the explorer must be the small-angle one, ``2 pi sqrt(l / g)``.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
import sympy as sm
from sympy.physics.mechanics import (LinearPathway, LinearSpring, Particle, Point, ReferenceFrame, RigidBody, System,
                                     dynamicsymbols, inertia, models)

import udk_notebooks as udk
from udk_notebooks import examples
from udk_notebooks.drawing import FORCE_KINDS
from udk_notebooks.mechanics import mechanism_from_bodies, mechanism_from_system, model_from_bodies, model_from_system
from udk_notebooks.stabilization import Baumgarte
from udk_notebooks.widgets.model_explorer import OUTCOMES, PANELS, auto_range, coordinate_mechanism

sys.path.insert(0, str(Path(__file__).parent))
from explorer_checks import random_settings  # noqa: E402
from test_mechanics import disc_on_incline, rolling_disc_system  # noqa: E402

PROGRAMMING_ERRORS = ("TypeError", "IndexError", "KeyError", "AttributeError", "NameError", "UnboundLocalError",
                      "ZeroDivisionError", "RecursionError")


# -- a hand-written model, as in lesson 04's exercise -------------------------------------------------------
def cartesian_pendulum():
    x, y = dynamicsymbols("x y")
    m, g, l = sm.symbols("m g l", positive=True)
    return udk.Model([x, y], kinetic_energy=m * (x.diff() ** 2 + y.diff() ** 2) / 2, potential_energy=m * g * y,
                     holonomic=[x**2 + y**2 - l**2], parameters={m: 1.0, g: 9.81, l: 1.0}, name="pendulum")


def pendulum_start(l, angle=0.2):
    return [l * math.sin(angle), -l * math.cos(angle)], [0.0, 0.0]


def test_the_three_forces_drawn_are_those_of_a_fresh_motion():
    explorer = udk.explore(cartesian_pendulum(), pendulum_start, t_end=2.0, step=0.005)
    assert explorer.error == ""
    for frame in (0, 37, 100):
        explorer.set(frame=frame, m=2.5, l=0.7)
        traj = explorer.trajectory
        j = explorer.frame_index(traj.t)
        fresh = explorer.compiled.motion(traj.t[j], traj.q[j], traj.qd[j], m=2.5, g=9.81, l=0.7)
        drawn = explorer.drawn_forces()
        for kind in FORCE_KINDS:
            np.testing.assert_allclose(drawn[kind], getattr(fresh, kind), rtol=1e-9, atol=1e-9)
        # the coordinate drawing puts F_i along coordinate i at dot i (x, -i): the arrows are the entries
        for joint, kind, tail, tip in explorer.view_of_mechanism.drawn_arrows():
            i = explorer.compiled.coordinate_names.index(joint)
            scale = explorer.view_of_mechanism.force_scale
            assert tip[1] == pytest.approx(tail[1])
            assert (tip[0] - tail[0]) / scale == pytest.approx(drawn[kind][i], rel=1e-9, abs=1e-9)


def test_small_swings_have_the_pendulums_period():
    """The x coordinate on the explorer crosses zero every half period, pi sqrt(l / g)."""
    explorer = udk.explore(cartesian_pendulum(), lambda l: pendulum_start(l, 0.01), t_end=4.0, step=0.002)
    explorer.set(l=2.0, g=9.81)
    traj = explorer.trajectory
    x = traj.q[:, 0]
    crossings = traj.t[:-1][np.sign(x[:-1]) != np.sign(x[1:])]
    assert np.diff(crossings).mean() == pytest.approx(math.pi * math.sqrt(2.0 / 9.81), rel=2e-3)


def test_inclined_line_forces_are_eq_32():
    explorer = udk.explore(examples.inclined_line.model(), lambda **p: examples.inclined_line.initial_state(**p),
                           mechanism=examples.inclined_line.mechanism, t_end=1.0, method="DOP853",
                           parameters={"c1": (-5.0, 5.0)})
    explorer.set(m=2.0, k=0.5, c1=-1.0, frame=50)
    exact = examples.inclined_line.exact_motion(m=2.0, k=0.5, g=9.81, c1=-1.0, c2=2.0)
    drawn = explorer.drawn_forces()
    for kind in FORCE_KINDS:
        np.testing.assert_allclose(drawn[kind], getattr(exact, kind), atol=1e-9)


def test_start_is_projected_with_a_note():
    explorer = udk.explore(cartesian_pendulum(), [0.5, -0.5], [0.3, 0.0], panels=("coordinates",))
    info = explorer.result.info
    assert info.startswith("start projected onto the constraints")
    q = explorer.trajectory.q[0]
    assert np.hypot(*q) == pytest.approx(1.0, abs=1e-12)
    moved = float(info.split("q moved ")[1].split(",")[0])
    assert moved == pytest.approx(np.abs(q - [0.5, -0.5]).max(), rel=0.05)  # printed to two digits
    consistent = udk.explore(cartesian_pendulum(), pendulum_start, panels=("coordinates",))
    assert consistent.result.info == ""


def test_bad_values_keep_the_last_good_run_and_drift_is_marked():
    explorer = udk.explore(cartesian_pendulum(), pendulum_start, t_end=2.0, step=0.05,
                           stabilization=Baumgarte(5.0, 5.0))
    good = explorer.result
    assert explorer.error == "" and explorer.warning == ""
    explorer.set(gain_alpha=20.0, gain_beta=20.0, step=0.25)  # alpha h = 5: rk4's error dynamics do not decay
    assert explorer.error.startswith("UnstableGainError"), explorer.error
    assert explorer.result is good
    assert "The figure still shows the last good result" in explorer.error_area.value
    explorer.set(stabilization="none", method="euler", t_end=6.0)
    assert explorer.error == ""
    assert explorer.warning.startswith(("Not to be trusted", "Diverged")), explorer.warning


def test_panels_by_name_and_their_checks():
    friction = examples.incline_friction
    explorer = udk.explore(friction.model(), lambda **p: friction.initial_state(**p), panels=PANELS, t_end=1.0,
                           mechanism=friction.mechanism)
    assert explorer.error == "", explorer.error
    assert [p.title for p in explorer.panels][0] == "coordinates"
    # friction panel: the shaded stretches are where some contact sticks
    k = explorer.panel_names.index("friction")
    spans = explorer.drawn_spans(k)
    traj = explorer.trajectory
    sticks = (traj.modes == 0).any(axis=1)
    inside = np.zeros_like(sticks)
    for a, b in spans:
        inside |= (traj.t >= a) & (traj.t < b)
    assert np.array_equal(inside[:-1], sticks[:-1])
    # the power of the ideal force of a fixed constraint is zero (2005 paper, Eq. 16)
    assert np.abs(np.einsum("ij,ij->i", traj.qd, traj.ideal)).max() < 1e-9 * max(1.0, np.abs(traj.ideal).max())
    with pytest.raises(ValueError, match="panel 'drift' needs constraints"):
        udk.explore(examples.double_pendulum.minimal_model(), [1, 0], [0, 0], panels=("drift",))
    with pytest.raises(ValueError, match="unknown panel 'speed'; choose from coordinates"):
        udk.explore(cartesian_pendulum(), pendulum_start, panels=("speed",))


@pytest.mark.parametrize("call, message", [
    (lambda: udk.explore("model", [0], [0]), r"`model` must be a udk_notebooks Model"),
    (lambda: udk.explore(cartesian_pendulum(), [1, 0]), r"`qd0` is missing"),
    (lambda: udk.explore(cartesian_pendulum(), [1, 0, 0], [0, 0]), r"q0"),
    (lambda: udk.explore(cartesian_pendulum(), pendulum_start, parameters={"mass": (0, 1)}), r"`parameters` names unknown parameter\(s\) mass"),
    (lambda: udk.explore(cartesian_pendulum(), pendulum_start, parameters={"m": (2, 1)}), r"lo < hi"),
    (lambda: udk.explore(cartesian_pendulum(), pendulum_start, t_end=-1), r"`t_end` must be a positive number"),
    (lambda: udk.explore(cartesian_pendulum(), pendulum_start, method="leapfrog"), r"`method` must be one of"),
    (lambda: udk.explore(cartesian_pendulum(), pendulum_start, mechanism=3), r"`mechanism` must be a Mechanism"),
    (lambda: udk.explore(cartesian_pendulum(), pendulum_start, mechanism=coordinate_mechanism(["a", "b", "c"])),
     r"force entry 2 but the model has only 2"),
])
def test_bad_arguments_are_named(call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call()


def test_parameter_table_units_and_ranges():
    explorer = udk.explore(cartesian_pendulum(), pendulum_start, units={"m": "kg", "l": "m"},
                           parameters={"g": (0.0, 20.0), "l": {"range": (0.5, 2.0), "default": 1.5}})
    assert (explorer.controls["g"].min, explorer.controls["g"].max) == (0.0, 20.0)
    assert explorer.controls["l"].value == 1.5
    assert explorer.controls["m"].tooltip.endswith("in kg")
    assert (explorer.controls["m"].min, explorer.controls["m"].max) == pytest.approx(auto_range(1.0))
    assert auto_range(-2.0) == pytest.approx((-6.0, -0.2))
    assert auto_range(0.0) == (-1.0, 1.0)


# -- sweeps ---------------------------------------------------------------------------------------------
def test_sweep_map_matches_single_runs_and_marks_the_current_values():
    explorer = udk.explore(cartesian_pendulum(), pendulum_start, t_end=1.0, step=0.01,
                           stabilization=Baumgarte(2.0, 2.0))
    explorer.set(m=1.3)
    found = explorer.sweep("l", "gain_beta", "final drift", n=3)
    assert found.values.shape == (3, 3)
    assert found.current == pytest.approx((1.0, 2.0))
    j, i = 2, 1
    params = {"m": 1.3, "g": 9.81, "l": float(found.xs[i])}
    q0, qd0 = pendulum_start(params["l"])
    single = udk.simulate(explorer.compiled, (0.0, 1.0), q0, qd0, params=params, step=0.01,
                          stabilization=Baumgarte(2.0, float(found.ys[j])))
    assert found.values[j, i] == pytest.approx(np.abs(single.position_residual[-1]).max(), rel=1e-6, abs=1e-15)
    star = [line for line in found.figure.axes[0].lines if line.get_marker() == "*"][0]
    assert tuple(star.get_xydata()[0]) == pytest.approx((1.0, 2.0))
    energy = explorer.sweep("m", "l", "max energy error", n=2)
    assert np.all(np.isfinite(energy.values)) and energy.values.max() < 1e-2
    with pytest.raises(ValueError, match="`outcome` must be one of"):
        explorer.sweep("m", "l", "fun")
    with pytest.raises(ValueError, match="`x` and `y` must be two different sliders"):
        explorer.sweep("m", "m")
    with pytest.raises(ValueError, match="'max energy error' needs a model without nonideal forces"):
        udk.explore(examples.inclined_line.model(), lambda **p: examples.inclined_line.initial_state(**p),
                    t_end=0.2).sweep("m", "k", "max energy error", n=2)
    assert set(OUTCOMES) >= {"final drift", "max energy error", "stick time", "divergence"}


def test_sweep_button_shows_a_map_in_place():
    explorer = udk.explore(cartesian_pendulum(), pendulum_start, t_end=0.3, step=0.03)
    explorer._sweep_x.value, explorer._sweep_y.value = "m", "l"
    explorer._sweep_outcome.value = "divergence"
    explorer.sweep_button.click()
    assert explorer._sweep_output.outputs, "the map is shown under the explorer"


# -- every catalogue model ----------------------------------------------------------------------------------
def catalogue_case(name: str):
    module = getattr(examples, name)
    model = module.model()
    if name == "painleve_rod":
        start = lambda **p: module.initial_state(0.5, 1.0, **p)  # noqa: E731
    elif name == "double_pendulum":
        start = lambda **p: module.initial_state()  # noqa: E731  (joint angles: no parameters)
    else:
        start = lambda **p: module.initial_state(**p)  # noqa: E731
    return model, start, getattr(module, "mechanism", None)


CATALOGUE = [name for name in examples.__all__ if name != "Parameter"]


@pytest.mark.parametrize("name", CATALOGUE)
def test_every_catalogue_model_explores(name):
    """Builds with the default panels; 100 random slider settings never raise and never hit a programming error;
    the drawn forces are those of a fresh Motion at the drawn instant."""
    model, start, mechanism = catalogue_case(name)
    explorer = udk.explore(model, start, mechanism=mechanism, t_end=0.1, step=0.02)
    assert explorer.error == "", explorer.error
    explorer._show = lambda frame_only=False: None  # the figure's pixels are checked elsewhere: keep 100 runs cheap
    # Horizon and step stay near their defaults (a few steps a run): the parameters and gains are what is fuzzed.
    sliders = [n for n, c in explorer.controls.items() if hasattr(c, "min") and n not in ("frame", "t_end", "step")]
    rng = np.random.default_rng(21)
    checked = 0
    for k, row in enumerate(random_settings(explorer, sliders, 100, seed=21)):
        values = dict(zip(sliders, row.tolist()), step=[0.02, 0.05][k % 2])
        if "stabilization" in explorer.controls:
            values["stabilization"] = ["none", "Baumgarte"][(k // 2) % 2]
        before = explorer.result
        explorer.set(**values, frame=int(rng.integers(explorer.frames)))
        assert not explorer.error.startswith(PROGRAMMING_ERRORS), explorer.error
        if explorer.error:
            assert explorer.result is before  # the last good run stays on screen
        elif k % 10 == 0 and explorer.trajectory.status == "ok":
            assert_drawn_forces_are_fresh(explorer)
            checked += 1
    assert checked >= 1


def assert_drawn_forces_are_fresh(explorer):
    """The arrows' forces are the Udwadia-Kalaba terms evaluated again at the drawn sample.

    With friction the run's own contact modes at that sample are used (at a Painleve state more than one
    mode can be consistent; the run keeps the one it integrated with).
    """
    cm = explorer.compiled
    traj = explorer.trajectory
    j = explorer.frame_index(traj.t)
    params = {p: explorer.values[p] for p in cm.parameter_names}
    stab = explorer.simulate_options(explorer.values).get("stabilization")
    if cm.n_friction:
        p = cm.parameters(params)
        correction = None if stab is None else stab.correction(*cm.residuals(traj.t[j], traj.q[j], traj.qd[j], p))
        fresh = cm.solve_modes(traj.t[j], traj.q[j], traj.qd[j], p, tuple(int(v) for v in traj.modes[j]),
                               correction)[0]
    else:
        fresh = cm.motion(traj.t[j], traj.q[j], traj.qd[j], stabilization=stab, **params)
    drawn = explorer.drawn_forces()
    for kind in FORCE_KINDS:
        scale = 1e-8 * max(1.0, np.abs(getattr(fresh, kind)).max())
        np.testing.assert_allclose(drawn[kind], getattr(fresh, kind), atol=scale)


# -- mechanisms from sympy mechanics bodies ----------------------------------------------------------------
def pendulum_on_cart(n: int = 2):
    kane = models.n_link_pendulum_on_cart(n, cart_force=False, joint_torques=False)
    symbols = sorted(set().union(*(e.free_symbols for e in list(kane.forcing_full) + list(kane.mass_matrix_full)))
                     - {dynamicsymbols._t}, key=str)
    params = {s: 1.0 for s in symbols}
    model = model_from_bodies(kane.q, kane._inertial, kane.bodies, kane.loads, speeds=kane.u,
                              kinematic_equations=kane.kindiffdict(), parameters=params)
    sketch = mechanism_from_bodies(kane.q, kane._inertial, kane.bodies, kane.loads, parameters=params)
    return model, sketch


def test_pendulum_on_cart_is_drawn_from_its_bodies(tmp_path):
    model, sketch = pendulum_on_cart(2)
    # the cart P0 sits at (q0, 0): its arrows are the q0 entries; the bobs hang on links of length l0, l1
    assert sketch.forced == ("P0",) and set(sketch.unforced) == {"P1", "P2"}
    mechanism = sketch(l0=0.5)
    q = np.array([0.3, 0.4, -0.2])
    where = mechanism.positions(q)
    np.testing.assert_allclose(where["P0"], [0.3, 0.0])
    np.testing.assert_allclose(where["P1"], [0.3 - 0.5 * math.sin(0.4), 0.5 * math.cos(0.4)], atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(where["P2"] - where["P1"]), 1.0)
    rods = {frozenset((p.a, p.b)) for p in mechanism.parts}
    assert rods == {frozenset(("P1", "P0")), frozenset(("P2", "P1"))}
    traj = udk.simulate(model, (0.0, 0.5), q, [0, 0, 0], step=0.01)
    animation = udk.animate(traj, sketch(), frames=4)
    assert "<img" in animation.to_jshtml() or "data:image" in animation.to_jshtml()
    assert Path(animation.save_gif(tmp_path / "cart.gif")).stat().st_size > 0
    explorer = udk.explore(model, q, [0, 0, 0], mechanism=sketch, t_end=0.5, step=0.02)
    explorer.set(l0=0.8, frame=30)
    assert explorer.error == ""
    arrows = explorer.view_of_mechanism.drawn_arrows()
    assert {joint for joint, *_ in arrows} <= {"P0"}
    j = explorer.frame_index(explorer.trajectory.t)
    tail = explorer.view_of_mechanism.joint_positions()["P0"]
    assert tail[0] == pytest.approx(explorer.trajectory.q[j, 0])


def test_rigid_bodies_are_drawn_as_rods_of_their_inertia():
    q, N, O, disc, gravity, rolling, params = disc_on_incline()
    sketch = mechanism_from_bodies(q, N, [disc], [gravity], origin=O, parameters=params)
    mechanism = sketch(R=0.5)
    where = mechanism.positions([0.2, 0.1])
    # a uniform disc (I = m R^2 / 2) is drawn as the rod of the same inertia, sqrt(6) R long, centred on it
    assert np.linalg.norm(where["disc+"] - where["disc-"]) == pytest.approx(math.sqrt(6) * 0.5)
    np.testing.assert_allclose((where["disc+"] + where["disc-"]) / 2, where["D"], atol=1e-12)
    np.testing.assert_allclose(where["D"], [0.2 * math.cos(0.4), -0.2 * math.sin(0.4)], atol=1e-12)
    model = model_from_bodies(q, N, [disc], [gravity], origin=O, holonomic=[rolling], parameters=params)
    traj = udk.simulate(model, (0.0, 0.3), [0.0, 0.0], [0.0, 0.0], step=0.01)
    assert udk.animate(traj, sketch(), frames=3).to_jshtml()


def test_a_system_with_a_spring_actuator_and_cartesian_coordinates():
    """A particle on a spring from the origin in Cartesian coordinates: arrows at the particle, a coil drawn."""
    x, y = dynamicsymbols("x y")
    m, g, k = sm.symbols("m g k", positive=True)
    N = ReferenceFrame("N")
    O = Point("O")
    O.set_vel(N, 0)
    P = O.locatenew("P", x * N.x + y * N.y)
    system = System(N, O)
    system.add_coordinates(x, y)
    system.add_bodies(Particle("bob", P, m))
    system.add_loads((P, -m * g * N.y))
    system.add_actuators(LinearSpring(k, LinearPathway(O, P)))
    params = {m: 1.0, g: 9.81, k: 40.0}
    model = model_from_system(system, params)
    sketch = mechanism_from_system(system, params)
    assert sketch.forced == ("P",)
    mechanism = sketch()
    assert [type(p).__name__ for p in mechanism.parts] == ["Spring"]
    explorer = udk.explore(model, [0.2, -0.5], [0.0, 0.0], mechanism=sketch, t_end=0.5, step=0.01)
    explorer.set(frame=20)
    traj = explorer.trajectory
    j = explorer.frame_index(traj.t)
    fresh = explorer.compiled.motion(traj.t[j], traj.q[j], traj.qd[j])
    arrows = {kind: tip - tail for _, kind, tail, tip in explorer.view_of_mechanism.drawn_arrows()}
    scale = explorer.view_of_mechanism.force_scale
    # spring pull -k r plus gravity: F^N at the bob
    np.testing.assert_allclose(arrows["impressed"] / scale, fresh.impressed, rtol=1e-9)
    np.testing.assert_allclose(fresh.impressed, -40.0 * traj.q[j] + [0.0, -9.81], rtol=1e-9)


def test_sympy_test_systems_are_drawn():
    system, params = rolling_disc_system()
    sketch = mechanism_from_system(system, params)
    traj = udk.simulate(model_from_system(system, params), (0.0, 0.2), [0.0, 0.2, 0.0, 0.0, 0.0],
                        [1.0, 0.0, 2.0, 0.0, 0.0], step=0.01, project=True)
    assert udk.animate(traj, sketch(), frames=3).to_jshtml()
    with pytest.raises(ValueError, match="`plane` must name two axes"):
        mechanism_from_system(system, params, plane="xx")
    with pytest.raises(ValueError, match="neither a coordinate nor in `parameters`"):
        mechanism_from_system(system, {})


def test_a_pin_joint_bar_is_drawn_from_pin_to_end():
    q, u = dynamicsymbols("q u")
    m, g, l = sm.symbols("m g l")
    ground = RigidBody("ground")
    bar = RigidBody("bar", mass=m)
    bar.inertia = (inertia(bar.frame, 0, 0, m * l**2 / 12), bar.masscenter)
    system = System.from_newtonian(ground)
    from sympy.physics.mechanics import PinJoint

    system.add_joints(PinJoint("pin", ground, bar, coordinates=q, speeds=u, child_point=-l / 2 * bar.frame.x,
                               joint_axis=ground.frame.z))
    sketch = mechanism_from_system(system, {m: 1.0, g: 9.81, l: 2.0})
    where = sketch().positions([0.3])
    ends = sorted((where["bar_masscenter-"], where["bar_masscenter+"]) if "bar_masscenter-" in where else
                  (where[k] for k in where if k.endswith(("-", "+"))), key=lambda p: np.linalg.norm(p))
    np.testing.assert_allclose(ends[0], [0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(ends[1], [2 * math.cos(0.3), 2 * math.sin(0.3)], atol=1e-12)


def test_start_parameters_and_panels_of_ones_own():
    """A release-angle slider read only by the start, and a Panel object beside a named one."""
    from udk_notebooks.widgets.system import Panel, time_curve

    radius = Panel("distance from the pivot", "time t (s)", "r (m)",
                   curves=[time_curve("r", lambda run: np.hypot(*run.trajectory.q.T))])
    explorer = udk.explore(cartesian_pendulum(), lambda l, angle: pendulum_start(l, angle), t_end=1.0,
                           start_parameters={"angle": (0.2, (-3.0, 3.0), "release angle, in rad")},
                           panels=("coordinates", radius))
    explorer.set(angle=1.0, l=1.5)
    np.testing.assert_allclose(explorer.trajectory.q[0], [1.5 * math.sin(1.0), -1.5 * math.cos(1.0)], atol=1e-12)
    assert explorer.panel_names == ("coordinates", "distance from the pivot")
    assert explorer.result.info == ""
    with pytest.raises(ValueError, match="share a name with the explorer's other controls"):
        udk.explore(cartesian_pendulum(), pendulum_start, start_parameters={"l": (1.0, (0.5, 2.0), "again")})


def test_a_coordinate_shared_by_two_points_is_drawn_once():
    """Two loaded points moved by the same x: the x entry is the sum of their forces, drawn at the mass centre only."""
    x, y = dynamicsymbols("x y")
    m, g, F = sm.symbols("m g F")
    N = ReferenceFrame("N")
    O = Point("O")
    O.set_vel(N, 0)
    G = O.locatenew("G", x * N.x + y * N.y)
    tip = G.locatenew("tip", 0.5 * N.x)
    loads = [(G, -m * g * N.y), (tip, F * N.x)]
    params = {m: 1.0, g: 9.81, F: 2.0}
    sketch = mechanism_from_bodies([x, y], N, [Particle("body", G, m)], loads, origin=O, parameters=params)
    assert sketch.forced == ("G",) and sketch.unforced == ("tip",)
    model = model_from_bodies([x, y], N, [Particle("body", G, m)], loads, origin=O, parameters=params)
    np.testing.assert_allclose(model.compile().motion(0.0, [0, 0], [0, 0]).impressed, [2.0, -9.81])
