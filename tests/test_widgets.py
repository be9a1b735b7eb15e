"""The explorers, driven from Python on the Agg backend (no browser).

Each test sets control values the way a slider does (``controls[name].value``)
or through ``Explorer.set``, then reads the figure's artists back: the drawn
forces must be the three terms of Eq. (32) of Udwadia, Kalaba & Fan (2005),
the ideal force must do no virtual work (Eq. 16) and the nonideal force the
work ``v . c`` (Eq. 18).
"""

from __future__ import annotations

import html
import importlib.util
import io
import os
import subprocess
import sys
import textwrap

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest

from udk_notebooks.examples import inclined_line
from udk_notebooks.widgets import Explorer, InclinedLineExplorer, parameter_table, slider_step
from udk_notebooks.widgets.views import fit_log_view, fit_view, nice_step

from explorer_checks import assert_data_visible, assert_same_pixels, drive, full_redraw, pixels, random_settings

PARAMETER_CONTROLS = ("m", "slope", "g", "c1", "c2")


def exact(explorer: InclinedLineExplorer):
    """Eq. (32) at the explorer's current slider values."""
    v = explorer.values
    return inclined_line.exact_motion(m=v["m"], k=v["slope"], g=v["g"], c1=v["c1"], c2=v["c2"])


def assert_forces_match_eq32(explorer: InclinedLineExplorer) -> None:
    drawn = explorer.forces()
    expected = exact(explorer)
    for name in ("impressed", "ideal", "nonideal"):
        np.testing.assert_allclose(drawn[name], getattr(expected, name), rtol=1e-9, atol=1e-9, err_msg=name)


def arrows(explorer: InclinedLineExplorer) -> np.ndarray:
    """The drawn arrows (tip minus tail) in the order impressed, ideal, nonideal; zero where hidden."""
    drawn = {kind: tip - tail for _, kind, tail, tip in explorer.view_of_mechanism.drawn_arrows()}
    return np.array([drawn.get(kind, np.zeros(2)) for kind in ("impressed", "ideal", "nonideal")])


def particle(explorer: InclinedLineExplorer) -> np.ndarray:
    return explorer.view_of_mechanism.joint_positions()["particle"]


def path_line(explorer: InclinedLineExplorer):
    """The drawn path of the particle (the mechanism view's trace)."""
    return explorer.view_of_mechanism._trace


def png_pixels(explorer: Explorer) -> np.ndarray:
    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(explorer.png)).convert("RGBA"))


def count_full_draws(explorer: Explorer) -> list:
    """A list that grows by one at every full draw of the explorer's figure."""
    draws = []
    explorer.figure.canvas.mpl_connect("draw_event", lambda event: draws.append(event))
    return draws


def limits(explorer: InclinedLineExplorer) -> list:
    return [(ax.get_xlim(), ax.get_ylim()) for ax in explorer._axes]


@pytest.fixture
def explorer() -> InclinedLineExplorer:
    return InclinedLineExplorer()


# -- controls ------------------------------------------------------------------
def test_one_named_slider_per_parameter(explorer):
    assert list(explorer.controls) == [*PARAMETER_CONTROLS, "horizon", "frame"]
    for name in (*PARAMETER_CONTROLS, "horizon"):
        slider = explorer.controls[name]
        assert slider.description.split(" (")[0] == name  # the name, then its unit (issue 24)
        assert slider.readout
    slope = explorer.controls["slope"]
    assert (slope.min, slope.max) == inclined_line.PARAMETERS["k"].bounds
    assert explorer.values == {"m": 1.0, "slope": 2.0, "g": 9.81, "c1": 1.0, "c2": 2.0, "horizon": 2.0}
    assert slope.value == 2.0 and explorer.controls["g"].max >= 9.81
    assert explorer.play.max == explorer.controls["frame"].max == explorer.frames - 1
    link = explorer._link
    assert (link.source[0], link.target[0]) == (explorer.play, explorer.controls["frame"])


def test_parameter_table_from_example():
    table = parameter_table(inclined_line.PARAMETERS, rename={"k": "slope"}, order=PARAMETER_CONTROLS)
    assert list(table) == list(PARAMETER_CONTROLS)
    assert table["slope"][:2] == (1.0, (-3.0, 3.0))
    with pytest.raises(ValueError, match="rename"):
        parameter_table(inclined_line.PARAMETERS, rename={"slope": "k"})
    with pytest.raises(ValueError, match="order"):
        parameter_table(inclined_line.PARAMETERS, order=("m", "g"))
    assert slider_step(-3.0, 3.0) == pytest.approx(0.01)
    assert slider_step(0.0, 20.0) == pytest.approx(0.1)


def test_figure_embedded_as_png_without_ipympl(explorer):
    assert not explorer.live_canvas
    assert explorer.png.startswith(b"\x89PNG")
    assert explorer.view in explorer.widget.children
    bundle = explorer._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle


# -- the drawn data --------------------------------------------------------------
def test_default_forces_are_eq32(explorer):
    assert explorer.error == ""
    assert_forces_match_eq32(explorer)
    # The paper's example with k = 2, c = (1, 2), unit mass: F^C = (1 + 2k)/(k^2 + 1) (1, k) = c.
    np.testing.assert_allclose(explorer.forces()["nonideal"], [1.0, 2.0], rtol=1e-12)
    np.testing.assert_allclose(arrows(explorer), explorer.arrow_scale * np.stack(
        [explorer.forces()[n] for n in ("impressed", "ideal", "nonideal")]), rtol=1e-12, atol=1e-12)


def test_slider_change_redraws_in_place(explorer):
    ax_path = explorer._axes[0]
    children = [len(ax.get_children()) for ax in explorer._axes]
    path, view = path_line(explorer), explorer.view_of_mechanism
    before_path = np.array(path.get_xydata())
    before_arrows = arrows(explorer)
    before_png = explorer.png

    explorer.controls["slope"].value = 1.0  # as a slider would

    assert explorer.error == ""
    assert path_line(explorer) is path and explorer.view_of_mechanism is view  # moved, not re-created
    assert [len(ax.get_children()) for ax in explorer._axes] == children
    after_path = np.array(path.get_xydata())
    assert not np.allclose(after_path, before_path)
    np.testing.assert_allclose(after_path[:, 1], 1.0 * after_path[:, 0], atol=1e-9)  # on x2 = k x1
    assert not np.allclose(arrows(explorer), before_arrows)
    assert explorer.png != before_png
    assert_forces_match_eq32(explorer)
    np.testing.assert_allclose(explorer.forces()["nonideal"], [1.5, 1.5], rtol=1e-12)  # (1 + 2k)/(k^2+1) (1, k)
    assert ax_path.get_xlim()[0] < after_path[:, 0].min()


def test_set_updates_once_and_matches_eq32(explorer):
    calls = []
    compute = explorer.compute
    explorer.compute = lambda **v: calls.append(v) or compute(**v)
    explorer.set(m=2.5, slope=-1.5, g=3.0, c1=-2.0, c2=4.0, horizon=3.0)
    assert len(calls) == 1
    assert calls[0]["slope"] == -1.5
    assert explorer.result.parameters["k"] == -1.5
    assert explorer.result.trajectory.t[-1] == pytest.approx(3.0)
    assert_forces_match_eq32(explorer)
    acc = explorer._acc[0].get_ydata()
    np.testing.assert_allclose(acc, exact(explorer).qdd[0], rtol=1e-9, atol=1e-9)
    with pytest.raises(ValueError, match="unknown control"):
        explorer.set(k=1.0)


def test_frame_moves_particle_without_recomputing(explorer):
    calls = []
    compute = explorer.compute
    explorer.compute = lambda **v: calls.append(v) or compute(**v)
    traj = explorer.result.trajectory
    np.testing.assert_allclose(particle(explorer), traj.q[0])
    explorer.controls["frame"].value = explorer.frames - 1
    np.testing.assert_allclose(particle(explorer), traj.q[-1])
    for _, _, tail, _ in explorer.view_of_mechanism.drawn_arrows():
        np.testing.assert_allclose(tail, traj.q[-1])
    assert explorer._now.get_xdata()[0] == pytest.approx(traj.t[-1])
    explorer.set(frame=10)
    np.testing.assert_allclose(particle(explorer), traj.q[10])
    assert calls == []
    # The path follows Eq. (32) integrated exactly (RK4 is exact for a constant acceleration).
    q, _ = inclined_line.exact_state(traj.t, traj.q[0], traj.qd[0], **explorer.result.parameters)
    np.testing.assert_allclose(traj.q, q, atol=1e-9)


def test_virtual_work_bars(explorer):
    for values in ({}, {"slope": 0.0}, {"slope": -2.5, "c1": 3.0, "c2": -4.0, "m": 0.1}, {"g": 0.0}):
        explorer.set(**values)
        result = explorer.result
        heights = [bar.get_height() for bar in explorer._bars]
        v = result.virtual_displacement[explorer.frame]
        slope = explorer.values["slope"]
        np.testing.assert_allclose(v, np.array([1.0, slope]) / np.hypot(1.0, slope), rtol=1e-12)
        expected = exact(explorer)
        assert heights[0] == pytest.approx(v @ expected.impressed, abs=1e-9)
        assert heights[1] == pytest.approx(0.0, abs=1e-9)  # Eq. (16): the ideal force does no virtual work
        c = np.array([explorer.values["c1"], explorer.values["c2"]])
        assert heights[2] == pytest.approx(v @ c, abs=1e-9)  # Eq. (18): v . F^C = v . c
        assert explorer._c_mark.get_ydata()[0] == pytest.approx(v @ c, abs=1e-9)
        assert explorer._bar_text[1].get_text() == "0.000"


# -- rendering: blitting and view limits -----------------------------------------
def test_fit_view_keeps_grows_and_shrinks():
    assert nice_step(0.3) == pytest.approx(0.5) and nice_step(0.21) == pytest.approx(0.25)
    assert nice_step(1.0) == pytest.approx(1.0) and nice_step(7.0) == pytest.approx(10.0)
    assert fit_view((0.0, 10.0), (2.0, 8.0)) is None  # inside, fills 60 %: kept
    assert fit_view((0.0, 10.0), (4.0, 6.5)) is None  # fills 25 %: still kept
    for need in [(2.0, 10.0), (-1.0, 3.0), (4.0, 5.0), (3.0, 3.0), (-1e-3, 2e-3), (1e6, 1e6 + 1.0)]:
        new = fit_view((0.0, 10.0), need)
        assert new is not None, need
        lo, hi = new
        assert lo < min(need) and max(need) < hi  # the data inside, with room
        assert fit_view(new, need) is None  # and the new view is stable
        if need[1] - need[0] > 1e-3:
            step = nice_step((need[1] - need[0]) / 10)
            assert lo / step == pytest.approx(round(lo / step), abs=1e-6)  # round numbers
            assert 1.4 <= (hi - lo) / (need[1] - need[0]) <= 2.6  # readable: the data fill 40 % to 70 %


def test_fit_view_grows_over_the_old_view_for_data_that_swing():
    """Data that swing from side to side (a winding angle) settle in one view instead of moving it each time."""
    view = (-5.0, 5.0)  # the view of data in (-3, 3)
    grown = fit_view(view, (-1.0, 8.0))
    assert grown is not None and grown[0] <= view[0] and view[1] <= grown[1]  # it covers the old view too
    assert fit_view(grown, (-3.0, 3.0)) is None and fit_view(grown, (-1.0, 8.0)) is None  # both sides kept
    far = fit_view(view, (40.0, 41.0))  # data far away: a view of their own, not one over both
    assert far is not None and far[0] > 5.0 and fit_view(far, (40.0, 41.0)) is None


def test_fit_view_with_a_floor_stops_there_and_keeps_its_view_for_data_near_it():
    """A force's size padded below zero moved a view stopped at zero on every change; with the floor it stays."""
    need = (-0.05, 2.6)  # data in (0.1, 2.5) padded by 6 %: asks for room below zero
    assert fit_view((0.0, 3.0), need) is not None  # without a floor: "the data left the view"
    assert fit_view((0.0, 3.0), need, floor=0.0) is None  # kept: the view starts at the floor
    for view, need in [((0.0, 3.0), (0.0, 9.0)), ((0.0, 100.0), (0.2, 2.0)), ((-5.0, 5.0), (0.5, 1.0))]:
        new = fit_view(view, need, floor=0.0)
        assert new is not None and new[0] >= 0.0 and new[1] >= max(need), (view, need, new)
        assert fit_view(new, need, floor=0.0) is None  # the new view is stable
    with pytest.raises(ValueError, match="floor"):
        fit_view((0.0, 1.0), (0.2, 0.8), floor=float("nan"))


def test_fit_log_view_keeps_whole_decades_while_values_at_rounding_level_wander():
    view = fit_log_view(None, (3e-16, 2e-13))
    assert view == pytest.approx((1e-17, 1e-12))  # a decade of room below the data, a part of one above
    for need in [(1e-16, 4e-13), (6e-17, 9e-14), (2e-15, 2e-13)]:  # rounding noise of other runs
        assert fit_log_view(view, need) is None, need
    grown = fit_log_view(view, (1e-16, 5e-12))  # the error grew past the top
    assert grown is not None and grown[0] <= 1e-17 and grown[1] >= 5e-12
    assert fit_log_view(grown, (1e-16, 5e-12)) is None
    far = fit_log_view(view, (1e-3, 1e-1))  # a diverging run: a view of its own, not one over both
    assert far is not None and far[0] >= 1e-5 and fit_log_view(far, (1e-3, 1e-1)) is None
    assert fit_log_view((1.0, 0.0), (1e-3, 1e-1)) is not None  # an unusable view is replaced
    for bad in [(0.0, 1.0), (-1.0, 1.0), (1e-3, float("inf"))]:
        with pytest.raises(ValueError, match="need"):
            fit_log_view(view, bad)
    with pytest.raises(ValueError, match="slack"):
        fit_log_view(view, (1e-3, 1e-1), room=3.0, slack=4.0)


def test_blitted_updates_match_a_full_redraw(explorer):
    """Small slider moves and frame changes blit; the pixels equal a full draw of the same state."""
    draws = count_full_draws(explorer)
    steps = [("c1", 0.05), ("c2", -0.05), ("slope", 0.02), ("m", 0.03), ("g", -0.2), ("frame", 17), ("c1", 0.1),
             ("frame", 50), ("slope", -0.05)]
    for name, step in steps:
        before = limits(explorer)
        if name == "frame":
            explorer.controls["frame"].value = step
        else:
            explorer.controls[name].value += step
        assert explorer.error == ""
        assert draws == [], f"{name}: a small move drew the whole figure"
        assert limits(explorer) == before
        shown, png = pixels(explorer), png_pixels(explorer)
        assert_same_pixels(png, shown)  # the PNG on screen is the canvas
        assert_same_pixels(shown, full_redraw(explorer))
        draws.clear()
    assert_data_visible(explorer)


def test_frame_change_paints_only_the_instant(explorer, monkeypatch):
    from matplotlib.axes import Axes

    painted = []
    draw_artist = Axes.draw_artist
    monkeypatch.setattr(Axes, "draw_artist", lambda ax, artist: painted.append(artist) or draw_artist(ax, artist))
    draws = count_full_draws(explorer)
    calls = []
    compute = explorer.compute
    explorer.compute = lambda **v: calls.append(v) or compute(**v)

    explorer.controls["frame"].value = 30
    run, instant = explorer.animated_artists()
    assert draws == [] and calls == []
    assert {id(a) for a in painted} == {id(a) for a in instant}  # particle, arrows, clock, bars ...; not the path
    assert not {id(a) for a in run} & {id(a) for a in painted}
    assert all(a.get_animated() for a in [*run, *instant])
    np.testing.assert_allclose(particle(explorer), explorer.result.trajectory.q[30])
    assert_same_pixels(pixels(explorer), full_redraw(explorer))


def test_data_leaving_the_view_grows_it_with_a_full_redraw(explorer):
    draws = count_full_draws(explorer)
    path_view = explorer._axes[0].get_xlim()
    explorer.set(horizon=5.0, g=20.0)  # a much longer path, larger accelerations
    assert len(draws) == 1
    new_view = explorer._axes[0].get_xlim()
    assert new_view[1] - new_view[0] > 2 * (path_view[1] - path_view[0])
    assert_data_visible(explorer)
    assert_same_pixels(pixels(explorer), full_redraw(explorer))
    draws.clear()
    explorer.set(horizon=0.5, g=1.0)  # a tiny path: the view shrinks again
    assert len(draws) == 1
    shrunk = explorer._axes[0].get_xlim()
    assert shrunk[1] - shrunk[0] < (new_view[1] - new_view[0]) / 4
    assert_data_visible(explorer)


def test_square_path_view(explorer):
    ax_path = explorer._axes[0]
    for values in ({"slope": 0.0}, {"slope": -3.0, "c1": 5.0}, {"g": 0.0, "c1": 0.0, "c2": 0.0}, {"m": 0.1}):
        explorer.set(**values)
        (x0, x1), (y0, y1) = ax_path.get_xlim(), ax_path.get_ylim()
        assert x1 - x0 == pytest.approx(y1 - y0)  # equal spans: the box of the equal-aspect axes keeps its place
        assert_data_visible(explorer)


def test_full_redraw_after_resize_and_savefig(explorer):
    draws = count_full_draws(explorer)
    explorer.figure.savefig(io.BytesIO(), format="png", dpi=50)  # a renderer of another size meanwhile
    explorer.controls["c1"].value += 0.05
    assert_same_pixels(pixels(explorer), full_redraw(explorer))
    draws.clear()
    explorer.figure.set_size_inches(8.0, 3.0)
    explorer.controls["c1"].value += 0.05
    assert len(draws) == 1
    assert png_pixels(explorer).shape[:2] == (300, 800)
    assert_same_pixels(pixels(explorer), full_redraw(explorer))


# -- robustness ------------------------------------------------------------------
def test_random_slider_combinations_never_raise(monkeypatch):
    """1000 random combinations over each slider's [min, max], extremes included."""
    explorer = InclinedLineExplorer(steps=4)  # few steps: this test is about robustness, not resolution
    show, canvas = explorer._show, explorer.figure.canvas
    # Rasterize only every 25th combination; the artist updates still run every time.
    monkeypatch.setattr(canvas, "draw_idle", lambda *a, **k: None)
    monkeypatch.setattr(explorer, "_show", lambda **kwargs: None)

    names = [*PARAMETER_CONTROLS, "horizon"]
    samples = random_settings(explorer, names, 1000, seed=20050215)
    samples[4:7] = samples[[0, 1, 3]]  # and three special cases:
    samples[4, names.index("g")] = 0.0  # no gravity
    samples[5, names.index("slope")] = 0.0  # horizontal line
    samples[6, [names.index("g"), names.index("c1"), names.index("c2")]] = 0.0  # no force at all

    for i, row in enumerate(samples):
        values = drive(explorer, names, row, i)
        assert explorer.error == "", (values, explorer.error)
        assert_forces_match_eq32(explorer)
        assert_data_visible(explorer)
        if i % 25 == 0:
            explorer.figure.stale = True
            show()
            assert explorer.error == ""
    assert np.all(np.isfinite(arrows(explorer)))


def test_bad_value_shows_message_and_keeps_last_plot(explorer):
    good = explorer.result
    path = np.array(path_line(explorer).get_xydata())
    png = explorer.png
    compute = explorer.compute

    def picky(**values):
        if values["m"] < 0.5:
            raise ValueError("`m` must be at least 0.5 in this test; got a lighter particle")
        return compute(**values)

    explorer.compute = picky
    explorer.controls["m"].value = 0.2  # must not raise out of the callback

    assert explorer.error == "ValueError: `m` must be at least 0.5 in this test; got a lighter particle"
    assert html.escape(explorer.error, quote=False) in explorer.error_area.value
    assert explorer.result is good
    np.testing.assert_array_equal(path_line(explorer).get_xydata(), path)
    assert explorer.png == png

    explorer.set(slope=2.0)  # still bad: message stays, plot stays
    assert explorer.error and explorer.result is good
    explorer.controls["m"].value = 1.0
    assert explorer.error == "" and explorer.error_area.value == ""
    assert explorer.result is not good
    assert_forces_match_eq32(explorer)


def test_draw_failure_is_reported_and_last_result_redrawn(explorer, monkeypatch):
    good = explorer.result
    draw = explorer.draw

    def fragile(result):
        if result.parameters["g"] > 15.0:
            raise RuntimeError("cannot draw this one")
        draw(result)

    monkeypatch.setattr(explorer, "draw", fragile)
    explorer.controls["g"].value = 18.0
    assert explorer.error == "RuntimeError: cannot draw this one"
    assert explorer.result is good
    np.testing.assert_allclose(explorer.forces()["impressed"], good.trajectory.impressed[0])  # still the good run
    explorer.controls["g"].value = 5.0
    assert explorer.error == "" and explorer.result is not good


def test_solver_error_from_a_custom_explorer():
    """The base class with a model that fails for part of its range (a real package error)."""
    import matplotlib.pyplot as plt

    from udk_notebooks import udwadia_kalaba

    class Tiny(Explorer):
        def make_figure(self):
            fig, ax = plt.subplots(figsize=(3, 2))
            self.line, = ax.plot([], [])
            return fig

        def draw(self, result):
            self.line.set_data([0, 1], [0, result.qdd[0]])
            self.figure.canvas.draw_idle()

    def compute(b2):
        # Two parallel rows x1'' = 1 and x1'' = b2: consistent only when b2 = 1.
        return udwadia_kalaba(np.eye(2), [0.0, 0.0], [[1.0, 0.0], [1.0, 0.0]], [1.0, b2])

    tiny = Tiny(compute, {"b2": (1.0, (0.0, 2.0), "right-hand side of the second row")}, frames=1)
    assert tiny.error == "" and tiny.result.qdd[0] == pytest.approx(1.0)
    tiny.controls["b2"].value = 2.0
    assert tiny.error.startswith("InconsistentConstraintsError: the constraints `A q'' = b` have no solution")
    assert tiny.result.qdd[0] == pytest.approx(1.0)
    assert "no solution" in tiny.error_area.value


def test_ipympl_canvas_is_embedded():
    """With ``%matplotlib widget`` the explorer embeds the ipympl canvas (checked in a fresh interpreter)."""
    # Not importorskip: importing ipympl switches this process's pyplot backend to ipympl.
    if importlib.util.find_spec("ipympl") is None:
        pytest.skip("ipympl is not installed")
    code = textwrap.dedent(
        """
        import matplotlib
        matplotlib.use("module://ipympl.backend_nbagg")
        from udk_notebooks.widgets import InclinedLineExplorer
        e = InclinedLineExplorer()
        canvas = e.figure.canvas
        assert e.live_canvas, type(canvas)
        assert canvas in e.widget.children
        assert e.controls["slope"].continuous_update
        sent, draws = [], []
        canvas.send_binary = lambda data: sent.append(data)
        e.controls["slope"].value = 1.01  # no browser yet: nothing is drawn or sent
        assert e.error == "" and sent == [] and canvas._data_url is None
        canvas._handle_message(canvas, {"type": "initialized"}, [])  # as a browser's view of the canvas does
        canvas._handle_message(canvas, {"type": "draw"}, [])  # its first request: a full draw
        assert len(sent) == 1
        sent.clear()
        send_json = canvas.send_json
        canvas.send_json = lambda content: draws.append(content) if content["type"] == "draw" else send_json(content)
        canvas.mpl_connect("draw_event", lambda event: draws.append(event))
        e.controls["slope"].value = 1.02  # a small step: blitted, and the image sent at once
        assert e.error == "", e.error
        assert len(sent) == 1 and sent[0].startswith(b"\\x89PNG"), sent
        assert draws == [], draws  # no full draw, and no draw request to the browser
        e.controls["frame"].value = 20
        assert len(sent) == 2 and draws == []
        e.controls["slope"].value = 2.0
        assert e.error == "", e.error
        assert abs(e.forces()["nonideal"][1] - 2.0) < 1e-9
        assert len(sent) == 3
        print("ok")
        """
    )
    env = {**os.environ, "MPLBACKEND": "module://ipympl.backend_nbagg"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().endswith("ok")
