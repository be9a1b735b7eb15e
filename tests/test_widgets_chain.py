"""The chain explorer's output: the fixed-step run sampled at most ``frames`` times, equal to the every-step run.

The generic checks (forces on screen, a drifting run marked, N changed in place) are in ``test_explorers.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

from udk_notebooks.examples import chain
from udk_notebooks.simulation import simulate
from udk_notebooks.widgets import EXPLORERS
from udk_notebooks.widgets import chain as widget


@pytest.mark.parametrize("horizon, step, samples", [(3.0, 0.01, 151), (1.0, 0.007, 151), (2.0, 0.05, 151),
                                                     (10.0, 0.001, 151), (0.5, 0.3, 20)])
def test_output_times_are_at_most_samples_times_of_the_step_grid(horizon, step, samples):
    times = widget.output_times(horizon, step, samples)
    count = max(1, round(horizon / step))
    grid = horizon * np.arange(count + 1) / count  # simulate's fixed-step grid
    assert times[0] == 0.0 and times[-1] == horizon
    assert 2 <= times.size <= samples and np.all(np.diff(times) > 0)
    assert np.all(np.isin(times, grid))  # exactly on the grid: no step of their own
    assert times.size == min(samples, count + 1)  # as many as asked, or every step when there are fewer


@pytest.mark.parametrize("horizon, step, samples", [(0.0, 0.01, 151), (1.0, -0.01, 151), (1.0, 0.01, 1)])
def test_output_times_refuse_bad_input(horizon, step, samples):
    with pytest.raises(ValueError, match="must be"):
        widget.output_times(horizon, step, samples)


@pytest.mark.parametrize("method", ["rk4", "euler"])
def test_the_sampled_run_is_the_every_step_run(method):
    explorer = EXPLORERS["chain"](frames=41)
    values = dict(N=3, m=1.3, l=0.8, g=9.81, spread=0.6, method=method, step=0.007, horizon=1.0)
    explorer.set(**values)
    assert explorer.error == ""
    drawn = explorer.result.trajectory
    params = dict(m=1.3, l=0.8, g=9.81)
    q0, qd0 = chain.chain_initial_state(3, 0.3 + 0.6 * np.arange(3) / 3, **params)
    every = simulate(widget.compiled_model(3), (0.0, 1.0), q0, qd0, method=method, step=0.007, params=params)
    assert every.t.size == 144 and drawn.t.size == 41  # round(1 / 0.007) = 143 steps, 41 frames
    at = np.searchsorted(every.t, drawn.t)
    np.testing.assert_array_equal(every.t[at], drawn.t)
    for name in ("q", "qd", "qdd", "energy", "position_residual"):
        np.testing.assert_array_equal(getattr(every, name)[at], getattr(drawn, name))
    energy_line = explorer.figure.axes[1].get_lines()[0]
    assert energy_line.get_xdata().size == 41
    explorer.close()


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A cache folder of the test's own, and a count of the derivations done."""
    folder = tmp_path / "cache"
    monkeypatch.setenv(widget.CACHE_ENV, str(folder))
    derived = []
    derive = chain.n_link_chain

    def counting(N, **overrides):
        derived.append(N)
        return derive(N, **overrides)

    monkeypatch.setattr(widget.chain, "n_link_chain", counting)
    return folder, derived


def _accelerations(model, N: int) -> np.ndarray:
    cm = model.compile()
    rng = np.random.default_rng(N)
    q0, qd0 = chain.chain_initial_state(N, rng.uniform(-1, 1, N), rng.uniform(-2, 2, N), m=1.1, l=0.9, g=9.81)
    return cm.accelerations(0.0, q0, qd0, cm.parameters(dict(m=1.1, l=0.9, g=9.81)))


def test_a_kept_derivation_is_read_back_and_moves_as_a_fresh_one(cache):
    folder, derived = cache
    first = widget.derived_chain(3)
    assert derived == [3] and len(list(folder.glob("chain-3-*.pickle"))) == 1
    again = widget.derived_chain(3)
    assert derived == [3] and again is not first  # read from disk, not derived
    fresh = chain.n_link_chain(3)
    np.testing.assert_array_equal(_accelerations(again, 3), _accelerations(fresh, 3))
    # and the pendulum route of the same chain: one link, the UK answer against theta'' = -(g/l) sin(theta)
    one = widget.derived_chain(1)
    q0, qd0 = chain.pendulum_initial_state(0.7, 0.0, l=0.9)
    cm = one.compile()
    qdd = cm.accelerations(0.0, q0, qd0, cm.parameters(dict(m=1.1, l=0.9, g=9.81)))
    theta_dd = -(9.81 / 0.9) * np.sin(0.7)  # at rest: the acceleration is tangential
    np.testing.assert_allclose(qdd, 0.9 * theta_dd * np.array([np.cos(0.7), np.sin(0.7)]), rtol=1e-12)


def test_a_broken_or_foreign_file_is_derived_again_and_rewritten(cache):
    folder, derived = cache
    widget.derived_chain(2)
    path = next(folder.glob("chain-2-*.pickle"))
    path.write_bytes(b"not a pickle")
    assert len(widget.derived_chain(2).coordinates) == 4 and derived == [2, 2]
    assert len(widget.derived_chain(2).coordinates) == 4 and derived == [2, 2]  # rewritten whole
    path.with_name(path.name.replace("chain-2-", "chain-3-")).write_bytes(path.read_bytes())  # 2 links named 3
    assert len(widget.derived_chain(3).coordinates) == 6 and derived == [2, 2, 3]


def test_files_of_another_source_key_are_never_read_and_are_dropped(cache):
    folder, derived = cache
    folder.mkdir()
    stale = folder / "chain-2-0123456789abcdef0123.pickle"
    stale.write_bytes(b"left by another version")
    widget.derived_chain(2)
    assert derived == [2] and not stale.exists()
    assert [p.name for p in folder.iterdir()] == [f"chain-2-{widget.source_key()}.pickle"]


def test_no_cache_when_disabled_or_unwritable(cache, monkeypatch, tmp_path):
    folder, derived = cache
    monkeypatch.setenv(widget.CACHE_ENV, "")
    assert widget.cache_directory() is None
    widget.derived_chain(2)
    assert not folder.exists() and derived == [2]
    blocked = tmp_path / "a file, not a folder"
    blocked.write_text("")
    monkeypatch.setenv(widget.CACHE_ENV, str(blocked / "cache"))
    assert len(widget.derived_chain(2).coordinates) == 4 and derived == [2, 2]  # derived, nothing kept


@pytest.mark.parametrize("N", [0, 33, 2.0, True])
def test_derived_chain_refuses_a_bad_number_of_links(N):
    with pytest.raises(ValueError, match="`N` must be a whole number of links"):
        widget.derived_chain(N)


def test_cheap_sliders_follow_a_drag_and_costly_ones_update_on_release():
    live = EXPLORERS["chain"](continuous_update=True)  # as on the live (ipympl) canvas
    for name in ("m", "l", "g", "spread"):
        assert live.controls[name].continuous_update, name
    for name in ("N", "step", "horizon"):
        assert not live.controls[name].continuous_update, name
    live.close()
    png = EXPLORERS["chain"]()  # the PNG route updates on release throughout
    assert not any(png.controls[name].continuous_update for name in ("m", "N", "step"))
    png.close()


@pytest.mark.parametrize("method, step", [("rk4", 0.05), ("DOP853", 0.01)])  # about 1e-4 J and 1e-9 J
def test_energy_labels_stay_short_and_read_the_ticks_true(method, step):
    # A jump must not widen the energy panel's tick labels ("-0.00075") past its laid-out cell (that
    # costs a full draw): small changes get a common factor above the axis, and label times factor
    # must still be each tick's value.
    explorer = EXPLORERS["chain"]()
    explorer.controls["method"].value = method
    explorer.controls["step"].value = step
    ax = explorer.figure.axes[1]
    assert ax.get_ylabel() == "h(t) - h(0) (J)"
    explorer.figure.canvas.draw()
    low, high = ax.get_ylim()
    assert max(abs(low), abs(high)) < 1e-2, "the test needs an energy change below the default's threshold"
    offset = ax.yaxis.get_offset_text().get_text().replace("\N{MINUS SIGN}", "-")
    assert offset.startswith("1e"), offset
    factor = float(offset)
    shown = [(tick, label.get_text().replace("\N{MINUS SIGN}", "-"))
             for tick, label in zip(ax.get_yticks(), ax.get_yticklabels()) if low <= tick <= high]
    assert len(shown) >= 3
    for tick, text in shown:
        assert len(text.lstrip("-")) <= 4, text
        assert float(text) * factor == pytest.approx(tick, rel=1e-6, abs=1e-6 * factor)
    explorer.close()
