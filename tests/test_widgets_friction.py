"""The rough-incline explorer, driven from Python on the Agg backend (no browser).

Each test sets controls the way a slider does (``controls[name].value``) or
through ``Explorer.set`` and reads the figure's artists back: the drawn forces
must be the closed-form terms of ``incline_friction.exact_motion`` (encyclopedia
article 'Udwadia-Kalaba equation', inclined plane with friction; Udwadia, Kalaba
& Fan 2005, Eqs. 9-11), the plotted distance the exact piecewise motion, and
the drawn work of friction the drawn change of energy (power theorem).
"""

from __future__ import annotations

import html

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest

from udk_notebooks.examples import incline_friction
from udk_notebooks.widgets.incline_friction import REGIMES, InclineFrictionExplorer

from explorer_checks import assert_data_visible, assert_same_pixels, drive, full_redraw, pixels, random_settings

PARAMETER_CONTROLS = ("alpha", "mu", "mu_s", "m", "g")


def model_values(explorer: InclineFrictionExplorer) -> dict[str, float]:
    return {name: explorer.values[name] for name in PARAMETER_CONTROLS}


def exact_distance(explorer: InclineFrictionExplorer, t) -> np.ndarray:
    values = model_values(explorer)
    q, _ = incline_friction.exact_state(t, explorer.values["speed"], **values)
    return q @ np.array([np.cos(values["alpha"]), np.sin(values["alpha"])])


def assert_forces_match(explorer: InclineFrictionExplorer, direction: int) -> None:
    """The drawn forces are the closed-form terms for ``sgn(s) = direction`` (0: stuck), term by term."""
    drawn = explorer.forces()
    expected = incline_friction.exact_motion(direction, **model_values(explorer))
    for name in ("impressed", "ideal", "nonideal"):
        np.testing.assert_allclose(drawn[name], getattr(expected, name), rtol=1e-9, atol=1e-9, err_msg=name)


def refused(values: dict[str, float]) -> bool:
    """Coulomb's law has no motion after the stop: ``mu_s < tan(alpha) <= mu`` (with weight, g > 0)."""
    slope = np.tan(values["alpha"])
    return values["g"] > 0 and values["mu_s"] < slope <= values["mu"]


@pytest.fixture
def explorer() -> InclineFrictionExplorer:
    return InclineFrictionExplorer()


# -- controls and forces ----------------------------------------------------------
def test_one_named_slider_per_parameter(explorer):
    assert list(explorer.controls) == [*PARAMETER_CONTROLS, "speed", "horizon", "frame"]
    for name in (*PARAMETER_CONTROLS, "speed", "horizon"):
        assert explorer.controls[name].description.split(" (")[0] == name  # the name, then its unit
        assert explorer.controls[name].tooltip  # the description of the parameter
    for name in PARAMETER_CONTROLS:
        row = incline_friction.PARAMETERS[name]
        slider = explorer.controls[name]
        assert (slider.min, slider.max) == row.bounds
        assert slider.value == row.default
    assert (explorer.controls["speed"].min, explorer.controls["speed"].max) == (0.0, 10.0)
    assert explorer.values["speed"] == 5.0
    assert explorer.error == "" and explorer.png.startswith(b"\x89PNG")


def test_default_forces_while_sliding_up(explorer):
    assert explorer.frame == 0 and explorer.result.regime(0) == "sliding up"
    assert explorer._regime.get_text().endswith("sliding up")
    assert_forces_match(explorer, +1)
    shown = {kind: tip - tail for _, kind, tail, tip in explorer.view_of_mechanism.drawn_arrows()}
    assert set(shown) == {"impressed", "ideal", "nonideal"}
    for kind, arrow in shown.items():
        np.testing.assert_allclose(arrow, explorer.arrow_scale * explorer.forces()[kind], rtol=1e-12, atol=1e-12)
    # The three terms add up to the article's acceleration -g (sin a + mu cos a) (cos a, sin a).
    v = model_values(explorer)
    expected = -v["g"] * (np.sin(v["alpha"]) + v["mu"] * np.cos(v["alpha"])) * np.array(
        [np.cos(v["alpha"]), np.sin(v["alpha"])])
    drawn = np.stack([explorer.forces()[name] for name in ("impressed", "ideal", "nonideal")])
    np.testing.assert_allclose(drawn.sum(axis=0) / v["m"], expected, rtol=1e-9)


@pytest.mark.parametrize(
    "values, final",
    [
        ({"mu_s": 1.0}, 0),  # tan(pi/6) = 0.577 <= 1: static friction holds the block
        ({"mu_s": 0.3}, -1),  # below tan(alpha): it slides back
        ({"alpha": 1.0, "mu": 0.6, "mu_s": 1.6 - 0.1, "m": 2.0, "speed": 8.0, "horizon": 4.0}, -1),
        ({"alpha": 0.3, "mu": 0.1, "mu_s": 0.35, "g": 3.0, "speed": 2.0, "horizon": 3.0}, 0),
    ],
)
def test_stick_or_slide_back_follows_the_exact_motion(explorer, values, final):
    explorer.set(**values, frame=explorer.frames - 1)
    assert explorer.error == ""
    result, traj = explorer.result, explorer.result.trajectory
    assert traj.modes[0, 0] == 1 and traj.modes[-1, 0] == final
    assert set(np.unique(traj.modes[:, 0])) == {1, final}  # one switch, no chattering
    assert explorer._regime.get_text().endswith(REGIMES[final])
    assert_forces_match(explorer, final)
    t_stop = incline_friction.stop_time(explorer.values["speed"], **model_values(explorer))
    assert result.stop == pytest.approx(t_stop, rel=1e-9)
    stop_t, stop_d = explorer._stop.get_data()
    assert stop_t[0] == pytest.approx(t_stop, rel=1e-9)
    if final == 0:  # it stays where it stopped
        after = traj.t >= result.stop
        np.testing.assert_allclose(traj.q[after], np.tile(traj.q[after][0], (after.sum(), 1)), atol=1e-12)
    else:
        assert result.distance[-1] < stop_d[0]
    # The plotted distance (and the exact dots) is the exact piecewise solution.
    t, d = explorer._dist.get_data()
    np.testing.assert_allclose(d, exact_distance(explorer, t), atol=1e-8)
    t_dots, d_dots = explorer._exact.get_data()
    np.testing.assert_allclose(d_dots, exact_distance(explorer, t_dots), atol=1e-12)
    assert_data_visible(explorer)


@pytest.mark.parametrize(
    "values",
    [{}, {"mu_s": 1.0}, {"speed": 10.0, "horizon": 5.0, "m": 5.0, "g": 20.0}, {"mu": 0.0, "mu_s": 0.0}, {"speed": 0.0}],
)
def test_friction_work_equals_energy_change(explorer, values):
    """Power theorem: d(T + V)/dt is the power of the friction force (the normal force does no work).

    Tolerance: the acceleration is constant in each regime, so the sliding speed and the friction power
    are linear in time between samples, and the switching instant is a sample: the trapezoidal rule of
    ``Trajectory.work`` is exact there. What remains is DOP853's error (its interpolant reproduces
    the quadratic motion) and rounding, 1e-12 of the energy scale, so 1e-9 of it is a safe bound.
    """
    explorer.set(**values)
    assert explorer.error == ""
    t, energy = explorer._energy.get_data()
    t_work, work = explorer._work.get_data()
    np.testing.assert_array_equal(t, t_work)
    v = explorer.values
    scale = v["m"] * (v["speed"] ** 2 + v["g"] * abs(explorer.result.distance).max()) + 1.0
    np.testing.assert_allclose(work, energy, rtol=0, atol=1e-9 * scale)
    np.testing.assert_allclose(energy, explorer.result.trajectory.energy - explorer.result.trajectory.energy[0])
    assert np.all(np.diff(work) <= 1e-9 * scale)  # friction only ever takes energy away
    if v["mu"] > 0 and v["speed"] > 0:
        assert work[-1] < 0


def test_frame_moves_only_the_instant(explorer, monkeypatch):
    from matplotlib.axes import Axes

    painted = []
    draw_artist = Axes.draw_artist
    monkeypatch.setattr(Axes, "draw_artist", lambda ax, artist: painted.append(artist) or draw_artist(ax, artist))
    calls = []
    compute = explorer.compute
    explorer.compute = lambda **v: calls.append(v) or compute(**v)
    result = explorer.result
    traj = result.trajectory
    run_data = [np.array(line.get_xydata()) for line in (explorer._dist, explorer._energy, explorer._work)]

    explorer.controls["frame"].value = explorer.frames - 1
    assert calls == [] and explorer.result is result
    run, instant = explorer.animated_artists()
    assert {id(a) for a in painted} == {id(a) for a in instant}
    for line, data in zip((explorer._dist, explorer._energy, explorer._work), run_data):
        np.testing.assert_array_equal(line.get_xydata(), data)
    assert explorer._dist_now.get_xdata()[0] == pytest.approx(traj.t[-1])
    for _, _, tail, _ in explorer.view_of_mechanism.drawn_arrows():  # at the contact point
        np.testing.assert_allclose(tail, traj.q[-1])
    assert explorer._regime.get_text() == f"t = {traj.t[-1]:.2f}: sliding down"
    assert_forces_match(explorer, -1)

    explorer.set(frame=10)
    assert calls == []
    assert explorer._energy_now.get_xdata()[0] == pytest.approx(traj.t[10])
    assert_same_pixels(pixels(explorer), full_redraw(explorer))  # the blit equals a full draw


# -- robustness ----------------------------------------------------------------------
def test_refused_combination_shows_message_and_keeps_plot(explorer):
    good, png = explorer.result, explorer.png
    distance = np.array(explorer._dist.get_xydata())
    explorer.set(mu=1.0, mu_s=0.3)  # mu_s < tan(pi/6) = 0.577 <= mu
    assert explorer.error.startswith("ValueError: with `mu_s` = 0.3 < tan(alpha)")
    assert "static friction cannot hold the block" in explorer.error_area.value
    assert explorer.result is good and explorer.png == png
    np.testing.assert_array_equal(explorer._dist.get_xydata(), distance)
    explorer.controls["mu_s"].value = 1.0  # now it holds
    assert explorer.error == "" and explorer.error_area.value == ""
    assert explorer.result.trajectory.modes[-1, 0] == 0


def test_random_slider_combinations_never_raise(monkeypatch):
    """300 random combinations over each slider's [min, max], bounds included.

    The only refusal is the physical one, ``mu_s < tan(alpha) <= mu``: then the message is shown
    and the last good plot is kept.
    """
    explorer = InclineFrictionExplorer(frames=21)  # few samples: robustness, not resolution
    show = explorer._show
    monkeypatch.setattr(explorer, "_show", lambda frame_only=False: None)  # rasterize only now and then
    names = [*PARAMETER_CONTROLS, "speed", "horizon"]
    samples = random_settings(explorer, names, 300, seed=2005)

    def check(good) -> None:
        """After a step: a refused setting shows its message and keeps ``good``; any other draws the result."""
        if refused(explorer.values):
            assert explorer.error.startswith("ValueError: with `mu_s`"), (explorer.values, explorer.error)
            assert html.escape(explorer.error, quote=False) in explorer.error_area.value
            assert explorer.result is good
            if good is not None:
                np.testing.assert_array_equal(explorer._dist.get_ydata(), good.distance)
            return
        assert explorer.error == "", (explorer.values, explorer.error)
        j = explorer.frame_index(explorer.result.trajectory.t)
        assert_forces_match(explorer, int(explorer.result.trajectory.modes[j, 0]))
        assert_data_visible(explorer)

    count = 0
    for i, row in enumerate(samples):
        drive(explorer, names, row, i, check)
        count += refused(explorer.values)
        if i % 30 == 0:
            explorer.figure.stale = True
            show()
    assert 0 < count < len(samples)  # both kinds were met


def test_forced_failure_shows_message_and_keeps_last_result(explorer, monkeypatch):
    good, png = explorer.result, explorer.png
    energy = np.array(explorer._energy.get_xydata())

    def broken(**values):
        raise RuntimeError("the solver gave up (forced by the test)")

    monkeypatch.setattr(explorer, "compute", broken)
    explorer.controls["m"].value = 2.0  # must not raise out of the callback
    assert explorer.error == "RuntimeError: the solver gave up (forced by the test)"
    assert "the solver gave up" in explorer.error_area.value
    assert "last good result" in explorer.error_area.value
    assert explorer.result is good and explorer.png == png
    np.testing.assert_array_equal(explorer._energy.get_xydata(), energy)
    explorer.set(frame=5)  # the instant still moves over the last good run (m = 1, not the slider's 2)
    assert explorer.result is good
    expected = incline_friction.exact_motion(+1, **good.parameters)
    np.testing.assert_allclose(explorer.forces()["impressed"], expected.impressed, rtol=1e-12)

    monkeypatch.undo()
    explorer.refresh()
    assert explorer.error == "" and explorer.result is not good
    assert explorer.result.parameters["m"] == 2.0
