"""The drift and stabilization explorer, driven from Python on the Agg backend.

The drawn drift must be the ``position_residual`` of a direct
:func:`udk_notebooks.simulate` call, the gain's fate per method must be what
:func:`udk_notebooks.check_gain` says (Beshaw 2014, Theorems 1-2), and a refused
gain is a recorded outcome, not a failure of the widget.
"""

from __future__ import annotations

import html

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest

import udk_notebooks as udk
from udk_notebooks.examples import chain
from udk_notebooks.widgets import stabilization as module
from udk_notebooks.widgets.stabilization import StabilizationExplorer, StabilizationResult, compiled_model

from explorer_checks import assert_same_pixels, drive, full_redraw, pixels, random_settings

CONTROLS = ("alpha", "beta", "step", "angle", "horizon")
METHODS = ("euler", "rk4")


def direct_run(explorer: StabilizationExplorer, method: str, stabilized: bool) -> udk.Trajectory:
    """The same run as the explorer's, from simulate itself."""
    v = explorer.values
    q0, qd0 = chain.pendulum_initial_state(v["angle"])
    gain = udk.Baumgarte(v["alpha"], v["beta"]) if stabilized else None
    return udk.simulate(compiled_model(), (0.0, v["horizon"]), q0, qd0, method=method, step=v["step"],
                        stabilization=gain)


def error_matrix(explorer: StabilizationExplorer) -> np.ndarray:
    return udk.Baumgarte(explorer.values["alpha"], explorer.values["beta"]).error_matrix(1, 0)


def plain_euler_fails(simulate):
    """``simulate``, but the plain Euler run raises (a non-finite state)."""

    def picky(model, t_span, *args, method, stabilization=None, **kwargs):
        if method == "euler" and stabilization is None:
            raise FloatingPointError("the state became non-finite")
        return simulate(model, t_span, *args, method=method, stabilization=stabilization, **kwargs)

    return picky


def assert_status_matches_check_gain(explorer: StabilizationExplorer) -> None:
    E, step = error_matrix(explorer), explorer.values["step"]
    for method, status in explorer.gain_status().items():
        assert status["spectral_radius"] == udk.stability(method, step, E).spectral_radius
        try:
            udk.check_gain(udk.Baumgarte(explorer.values["alpha"], explorer.values["beta"]), method, step, 1, 0)
        except udk.UnstableGainError as exc:
            assert status["message"] == str(exc)
            assert (method, True) not in explorer.result.runs
        else:
            assert status["message"] == ""


@pytest.fixture
def explorer() -> StabilizationExplorer:
    return StabilizationExplorer()


def test_one_named_slider_per_control(explorer):
    assert list(explorer.controls) == [*CONTROLS, "frame"]
    for name in CONTROLS:
        assert explorer.controls[name].description.split(" (")[0] == name  # the name, then its unit
        assert not explorer.controls[name].continuous_update  # four integrations: update on release
    assert explorer.values == {"alpha": 10.0, "beta": 10.0, "step": 0.01, "angle": 1.0, "horizon": 5.0}
    assert (explorer.controls["alpha"].min, explorer.controls["alpha"].max) == (0.0, 60.0)
    assert explorer.png.startswith(b"\x89PNG")


def test_defaults_accept_the_gain_and_draw_simulate_residuals(explorer):
    assert explorer.error == ""
    result = explorer.result
    assert isinstance(result, StabilizationResult)
    assert result.refusals == {} and result.failures == {} and explorer._note.get_text() == ""
    assert_status_matches_check_gain(explorer)
    for (method, stabilized), line in explorer._drift.items():
        run = direct_run(explorer, method, stabilized)
        np.testing.assert_array_equal(line.get_xdata(), run.t)
        np.testing.assert_array_equal(line.get_ydata(), np.abs(run.position_residual[:, 0]))
    # Baumgarte pulls RK4 back to the circle (lesson 2: more than an order of magnitude).
    assert result.drift("rk4", True).max() < 0.1 * result.drift("rk4", False).max()
    # Panel (c): the highest marker of each method is the spectral radius of R(tau E).
    for method, marker in explorer._markers.items():
        radius = explorer.gain_status()[method]["spectral_radius"]
        assert max(marker.get_ydata()) == pytest.approx(radius, rel=1e-6)
        np.testing.assert_allclose(marker.get_xdata(), [-0.1, -0.1], atol=1e-6)  # tau * (-alpha), double root
    # Panel (b): the bobs of the Baumgarte runs and the reference at the instant.
    explorer.set(frame=explorer.frames - 1)
    np.testing.assert_array_equal(explorer._bobs["rk4"].get_xydata()[0], result.runs["rk4", True].q[-1])
    reference, _ = chain.angle_route_state(result.t, 1.0)
    np.testing.assert_allclose(explorer._reference.get_xydata()[0], reference[-1], atol=1e-12)


def test_stiff_gain_is_refused_not_failed(explorer):
    # k tau = 60 * 0.04 = 2.4: beyond Euler's interval (0, 2), inside RK4's (0, 2.785).
    explorer.set(alpha=60.0, beta=60.0, step=0.04, horizon=2.0)
    assert explorer.error == "" and explorer.error_area.value == ""
    with pytest.raises(udk.UnstableGainError) as refused:
        udk.check_gain(udk.Baumgarte(60.0, 60.0), "euler", 0.04, 1, 0)
    status = explorer.gain_status()
    assert status["euler"]["message"] == str(refused.value)
    assert status["rk4"]["message"] == ""
    assert_status_matches_check_gain(explorer)
    note = explorer._note.get_text().splitlines()
    assert note[0] == "Euler: gain refused (spectral radius 1.4 > 1)"
    # RK4 accepts this gain by the error dynamics alone, yet the run diverges: it is marked, not drawn as fine.
    diverged = [key for key, run in explorer.result.runs.items() if run.diverged]
    assert diverged == [("rk4", True)]
    assert note[1:] == [f"RK4, Baumgarte: DIVERGED at t = {explorer.result.runs['rk4', True].stop_time:.3g} s"]
    assert len(explorer._drift["euler", True].get_xdata()) == 0  # nothing drawn for the refused run
    for method, stabilized in (("euler", False), ("rk4", False), ("rk4", True)):
        run = direct_run(explorer, method, stabilized)
        np.testing.assert_array_equal(explorer._drift[method, stabilized].get_ydata(),
                                      np.abs(run.position_residual[:, 0]))
    frame = explorer.frame_index(explorer.result.t)
    np.testing.assert_array_equal(explorer._bobs["euler"].get_xydata()[0],
                                  explorer.result.runs["euler", False].q[frame])  # the plain bob stands in

    explorer.set(step=0.05)  # now RK4 refuses too (k tau = 3 > 2.785)
    assert explorer.error == ""
    assert explorer._note.get_text().splitlines() == ["Euler: gain refused (spectral radius 2 > 1)",
                                                      "RK4: gain refused (spectral radius 1.375 > 1)"]
    assert_status_matches_check_gain(explorer)


def test_frame_change_moves_only_the_instant(explorer, monkeypatch):
    from matplotlib.axes import Axes

    painted, calls = [], []
    draw_artist = Axes.draw_artist
    monkeypatch.setattr(Axes, "draw_artist", lambda ax, artist: painted.append(artist) or draw_artist(ax, artist))
    draws = []
    explorer.figure.canvas.mpl_connect("draw_event", lambda event: draws.append(event))
    compute = explorer.compute
    explorer.compute = lambda **v: calls.append(v) or compute(**v)
    lines = {key: line.get_ydata().copy() for key, line in explorer._drift.items()}

    explorer.controls["frame"].value = 30
    run, instant = explorer.animated_artists()
    assert draws == [] and calls == []
    assert {id(a) for a in painted} == {id(a) for a in instant}
    for key, line in explorer._drift.items():
        np.testing.assert_array_equal(line.get_ydata(), lines[key])
    j = explorer.frame_index(explorer.result.t)
    assert explorer._now.get_xdata()[0] == explorer.result.t[j] == pytest.approx(0.3 * explorer.values["horizon"])
    for method in METHODS:
        np.testing.assert_array_equal(explorer._bobs[method].get_xydata()[0], explorer.result.runs[method, True].q[j])


def test_random_slider_combinations_never_raise(explorer, monkeypatch):
    """200 random combinations over each slider's [min, max], corners included."""
    simulate = module.simulate

    def short(model, t_span, *args, **kwargs):  # robustness, not resolution: at most half a second
        return simulate(model, (t_span[0], min(t_span[1], 0.5)), *args, **kwargs)

    monkeypatch.setattr(module, "simulate", short)
    show = explorer._show
    monkeypatch.setattr(explorer, "_show", lambda **kwargs: None)  # rasterize every 20th combination only
    samples = random_settings(explorer, CONTROLS, 200, seed=1972, bounds_share=0.15)
    for i, row in enumerate(samples):
        values = drive(explorer, CONTROLS, row, i)
        assert explorer.error == "", (values, explorer.error)
        assert_status_matches_check_gain(explorer)
        if i % 20 == 0:
            explorer.figure.stale = True
            show()
            assert explorer.error == ""


def test_full_length_corners(explorer):
    for values in ({"alpha": 0.0, "beta": 60.0, "step": 0.05, "angle": 2.5, "horizon": 20.0},
                   {"alpha": 60.0, "beta": 0.0, "step": 0.005, "angle": 2.5, "horizon": 20.0}):
        explorer.set(**values)
        assert explorer.error == "", (values, explorer.error)
        assert_status_matches_check_gain(explorer)


def test_forced_failure_keeps_the_last_result(explorer, monkeypatch):
    good = explorer.result
    lines = {key: line.get_ydata().copy() for key, line in explorer._drift.items()}
    png = explorer.png

    def broken(**values):
        raise RuntimeError("the integrator is out of order")

    monkeypatch.setattr(explorer, "compute", broken)
    explorer.controls["alpha"].value = 20.0  # must not raise out of the callback
    assert explorer.error == "RuntimeError: the integrator is out of order"
    assert html.escape(explorer.error, quote=False) in explorer.error_area.value
    assert explorer.result is good and explorer.png == png
    for key, line in explorer._drift.items():
        np.testing.assert_array_equal(line.get_ydata(), lines[key])
    monkeypatch.undo()
    explorer.set(alpha=30.0, horizon=2.0)
    assert explorer.error == "" and explorer.result is not good


def test_failed_runs_are_noted_and_all_failing_raises(explorer, monkeypatch):
    monkeypatch.setattr(module, "simulate", plain_euler_fails(module.simulate))
    explorer.set(horizon=2.0)
    assert explorer.error == ""
    assert explorer.result.failures == {("euler", False): "FloatingPointError: the state became non-finite"}
    assert explorer._note.get_text() == "Euler: run failed"

    def hopeless(*args, **kwargs):
        raise FloatingPointError("the state became non-finite")

    monkeypatch.setattr(module, "simulate", hopeless)
    explorer.set(horizon=3.0)
    assert explorer.error == "FloatingPointError: the state became non-finite"
    assert explorer.result.values["horizon"] == 2.0


def test_updates_on_screen_match_a_full_redraw(explorer):
    explorer.set(horizon=3.0)
    for values in ({"alpha": 10.5}, {"frame": 40}, {"beta": 30.0, "step": 0.04}, {"angle": 2.0}):
        explorer.set(**values)
        assert explorer.error == ""
        assert_same_pixels(pixels(explorer), full_redraw(explorer))


def test_the_reference_bob_is_the_angle_route_at_every_setting_though_kept_across_gain_changes(explorer):
    """The angle equation is solved up to the shown instant on a slider change, on the whole grid when
    ``reference`` is read or a frame moves, and again only when the angle or the time grid moves."""
    calls = []
    route = chain.angle_route_state

    def counted(t, angle, *args, **kwargs):
        calls.append((angle, len(t)))
        return route(t, angle, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(chain, "angle_route_state", counted)
        explorer.controls["frame"].value = 40
        assert calls == [(1.0, 501)]  # the animation needs every instant: the whole grid, once
        for name, value in [("alpha", 3.0), ("beta", 4.0), ("angle", 0.7), ("alpha", 2.0), ("step", 0.02)]:
            calls.clear()
            explorer.controls[name].value = value
            result = explorer.result
            j = explorer.frame_index(result.t)
            whole, _ = route(result.t, explorer.values["angle"])
            up_to_now, _ = route(result.t[: j + 1], explorer.values["angle"])
            # the bob on screen: the route up to the instant (its steps are the whole run's but the last)
            np.testing.assert_array_equal(explorer._reference.get_xydata()[0],
                                          whole[j] if name in ("alpha", "beta") else up_to_now[-1])
            np.testing.assert_allclose(up_to_now[-1], whole[j], rtol=0, atol=1e-12)
            assert calls == ([] if name in ("alpha", "beta") else [(0.7, j + 1)]), name
            calls.clear()
            assert result.values[name] == value
            np.testing.assert_array_equal(result.reference, whole)
            assert calls == ([] if name in ("alpha", "beta") else [(0.7, len(result.t))]), name
            calls.clear()
            np.testing.assert_array_equal(result.reference, whole)  # solved once
            assert calls == []
    explorer.controls["frame"].value = 0  # the release point: nothing to integrate, the route's first row
    explorer.set(angle=1.2)
    np.testing.assert_array_equal(explorer._reference.get_xydata()[0], route(explorer.result.t, 1.2)[0][0])


def test_a_gain_change_runs_only_the_baumgarte_runs_and_the_plain_ones_are_simulate_s(explorer, monkeypatch):
    """The plain runs are kept across changes of alpha and beta, and run again when step, angle or horizon move."""
    simulate, calls = module.simulate, []

    def counted(model, t_span, *args, stabilization=None, **kwargs):
        calls.append(stabilization is not None)
        return simulate(model, t_span, *args, stabilization=stabilization, **kwargs)

    monkeypatch.setattr(module, "simulate", counted)
    explorer.set(horizon=2.0)
    assert calls == [False, False, True, True]  # a new simulate and a new horizon: all four
    for name, value, stabilized_only in [("alpha", 12.0, True), ("beta", 7.0, True), ("step", 0.02, False),
                                         ("alpha", 3.0, True), ("angle", 0.6, False), ("horizon", 1.5, False)]:
        calls.clear()
        explorer.controls[name].value = value
        assert explorer.error == ""
        assert calls == ([True, True] if stabilized_only else [False, False, True, True]), name
        for method in METHODS:  # what is kept is what simulate gives at the current values, to the last bit
            for stabilized in (False, True):
                run, direct = explorer.result.runs[method, stabilized], direct_run(explorer, method, stabilized)
                np.testing.assert_array_equal(run.t, direct.t)
                np.testing.assert_array_equal(run.q, direct.q)
                np.testing.assert_array_equal(explorer._drift[method, stabilized].get_ydata(),
                                              np.abs(direct.position_residual[:, 0]))


def test_a_kept_plain_run_that_failed_is_noted_again_after_a_gain_change(explorer, monkeypatch):
    monkeypatch.setattr(module, "simulate", plain_euler_fails(module.simulate))
    explorer.set(horizon=2.0)
    explorer.set(alpha=20.0)
    assert explorer.error == ""
    assert explorer.result.failures == {("euler", False): "FloatingPointError: the state became non-finite"}
    assert explorer._note.get_text() == "Euler: run failed"
    assert set(explorer.result.runs) == {("euler", True), ("rk4", False), ("rk4", True)}
