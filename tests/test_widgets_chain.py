"""The chain explorer's output: the fixed-step run sampled at most ``frames`` times, equal to the every-step run.

The generic checks (forces on screen, a drifting run marked, N changed in place) are in ``test_explorers.py``.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from udk_notebooks import _kept_code as kept_code
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


# -- the generated code kept beside the derivation --------------------------------------------------------------


@pytest.fixture
def code_cache(cache, monkeypatch):
    """``cache``, a fresh session's compiled chains, and a count of the lambdify calls made by compiling."""
    import sympy

    generated = []
    lambdify = sympy.lambdify

    def counting(*args, **kwargs):
        generated.append(1)
        return lambdify(*args, **kwargs)

    monkeypatch.setattr(sympy, "lambdify", counting)
    widget.compiled_model.cache_clear()
    yield (*cache, generated)
    widget.compiled_model.cache_clear()  # no model compiled in this test's folder outlives it


def _new_session_model(N: int):
    """The chain as a new session compiles it (the session's own models forgotten, the disk kept)."""
    widget.compiled_model.cache_clear()
    return widget.compiled_model(N)


def _code_file(folder, N: int):
    (path,) = folder.glob(f"chain-{N}-*.code.json")
    return path


def _outputs(cm, N: int) -> list[np.ndarray]:
    """Every kept function of a compiled chain at a few random states, as arrays (the batch ones on a batch)."""
    rng = np.random.default_rng(7)
    p = cm.parameters(dict(m=1.1, l=0.9, g=9.81))
    out = []
    for _ in range(3):
        q, qd = chain.chain_initial_state(N, rng.uniform(-2, 2, N), rng.uniform(-3, 3, N), l=0.9)
        q = q + rng.normal(0, 1e-3, q.size)  # off the constraints: phi and its rate are not zero
        args = (0.3, list(q), list(qd), list(p))
        out += [np.array(cm.matrices(*args)), np.array(cm.phi(0.3, list(q), list(p))),
                np.array(cm.velocity_constraints(*args)), np.array(cm.energy(*args)),
                np.array(cm.powers_data(*args)[0]), cm.mass(list(p)), cm.accelerations(0.3, q, qd, p)]
    qs = np.stack([chain.chain_initial_state(N, rng.uniform(-2, 2, N), l=0.9)[0] for _ in range(4)])
    qds = rng.uniform(-1, 1, qs.shape)
    out.append(cm.matrices_batch(0.0, qs, qds, p))
    return out


def test_kept_code_is_loaded_and_gives_bitwise_the_numbers_of_fresh_code(code_cache):
    folder, derived, generated = code_cache
    first = _new_session_model(3)
    first.matrices_batch(0.0, np.zeros((1, 6)), np.zeros((1, 6)), first.defaults)  # built on demand...
    kept_code.write_changed()  # ...and kept, as the explorer keeps it after each update
    kept = json.loads(_code_file(folder, 3).read_text())["functions"]
    assert {"matrices", "phi", "velocity", "energy", "powers", "mass", "batch_entries"} <= set(kept)
    assert generated and derived == [3]
    generated.clear()
    loaded = _new_session_model(3)
    assert loaded is not first and generated == [] and derived == [3]  # read back: nothing derived or generated
    assert loaded._model is None  # built from the kept code and facts alone: not even the pickled derivation read
    assert loaded.matrices.on_floats  # the scalar entries still join the fused solver (udk_notebooks._fused)
    fresh = chain.n_link_chain(3).compile()  # compiled here, from its own derivation, no cache
    for a, b, c in zip(_outputs(loaded, 3), _outputs(fresh, 3), _outputs(first, 3)):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c)
    # and whole runs, the fused DOP853 route included
    q0, qd0 = chain.chain_initial_state(3, [0.4, 0.9, 1.3], l=0.9)
    for method in ("rk4", "dop853"):
        options = dict(step=0.01) if method == "rk4" else dict(t_eval=np.linspace(0.0, 0.5, 11))
        runs = [simulate(cm, (0.0, 0.5), q0, qd0, method=method, params=dict(l=0.9), **options)
                for cm in (loaded, fresh)]
        np.testing.assert_array_equal(runs[0].q, runs[1].q)
        np.testing.assert_array_equal(runs[0].ideal, runs[1].ideal)


def test_kept_code_of_another_key_is_never_read_and_is_dropped(code_cache, monkeypatch):
    folder, derived, generated = code_cache
    _new_session_model(2)
    old = _code_file(folder, 2)
    monkeypatch.setattr(kept_code, "code_key", lambda: "0123456789abcdef0123")  # another numpy, say
    generated.clear()
    _new_session_model(2)
    assert generated  # generated again, not read
    assert not old.exists() and _code_file(folder, 2).name == "chain-2-0123456789abcdef0123.code.json"
    # a file carrying the current name but recorded under another key (copied from elsewhere) is not trusted
    path = _code_file(folder, 2)
    kept = json.loads(path.read_text())
    kept["key"] = "fedcba9876543210fedc"
    path.write_text(json.dumps(kept))
    generated.clear()
    _new_session_model(2)
    assert generated and json.loads(path.read_text())["key"] == "0123456789abcdef0123"  # rewritten


DIGESTED = ("format", "key", "name", "functions", "facts")  # the parts of a kept file its digest covers


@pytest.mark.parametrize("damage", ["truncated", "edited", "foreign module", "not a record"])
def test_corrupt_kept_code_is_generated_again_and_rewritten(code_cache, damage):
    folder, derived, generated = code_cache
    _new_session_model(2)
    path = _code_file(folder, 2)
    text = path.read_text()
    kept = json.loads(text)
    record = kept["functions"]["energy"]
    if damage == "truncated":
        path.write_text(text[: len(text) // 2])
    elif damage == "edited":  # still valid JSON and Python, but not what was written: the digest tells
        record["source"] = record["source"].replace("return ", "return 1 + ")
        path.write_text(json.dumps(kept))
    else:  # a sound digest over a record that must not be executed as it stands
        if damage == "foreign module":
            record["globals"]["os"] = ["os", None]
        else:
            kept["functions"]["energy"] = ["not", "a", "record"]
        kept["digest"] = kept_code._digest({part: kept[part] for part in DIGESTED})
        path.write_text(json.dumps(kept))
    generated.clear()
    cm = _new_session_model(2)
    assert generated  # the damaged part generated afresh
    fresh = chain.n_link_chain(2).compile()
    for a, b in zip(_outputs(cm, 2), _outputs(fresh, 2)):
        np.testing.assert_array_equal(a, b)
    rewritten = json.loads(path.read_text())  # whole and sound again
    assert rewritten["digest"] == kept_code._digest({part: rewritten[part] for part in DIGESTED})
    assert rewritten["functions"]["energy"]["globals"].get("os") is None
    generated.clear()
    _new_session_model(2)
    assert generated == []  # and read back whole by the next session


def test_a_function_whose_names_cannot_be_found_again_is_not_kept():
    from udk_notebooks._kept_code import CodeStore, kept

    import os as foreign

    def reads_os(x):
        return foreign.sep * x

    store = CodeStore()
    assert kept(store, "f", lambda: reads_os) is reads_os
    assert store.entries == {} and not store.changed
    with pytest.raises(TypeError, match="`entries` must be a dict"):
        CodeStore(["not", "a", "dict"])


def test_labels_placed_once_where_the_mechanism_view_stays_are_where_placing_again_puts_them():
    explorer = EXPLORERS["chain"]()
    try:
        explorer.set(N=12)
        ax = explorer.figure.axes[0]
        view = explorer.view_of_mechanism
        texts = [text for row in view._arrows for _, text in row]
        for values in (dict(m=2.5), dict(m=0.7), dict(horizon=2.0)):  # masses scale the forces, not the motion
            shown = (ax.get_xlim(), ax.get_ylim())
            explorer.set(**values)
            assert explorer.error == "" and (ax.get_xlim(), ax.get_ylim()) == shown, "the test needs a view that stays"
            placed = [(text.get_visible(), text.get_position()) for text in texts]
            assert sum(visible for visible, _ in placed) >= 6  # labels to keep apart
            view.place_labels()  # what the update left out: placing them at this view again
            assert [(text.get_visible(), text.get_position()) for text in texts] == placed
    finally:
        explorer.close()


def test_a_warmed_cache_serves_a_whole_session_of_the_explorer_without_sympy(code_cache):
    folder, derived, generated = code_cache
    assert widget.warm_cache([2, 3, 4]) == [2, 3, 4]  # the explorer opens at N = 4
    widget.compiled_model.cache_clear()  # a new session, as in a course image built with the cache warmed
    derived.clear(), generated.clear()
    explorer = EXPLORERS["chain"](frames=21)
    try:
        for values in (dict(N=2, horizon=0.5), dict(N=3), dict(method="DOP853"), dict(method="euler", step=0.02)):
            explorer.set(**values)
            assert explorer.error == ""
        assert derived == [] and generated == []  # nothing derived, no code generated
    finally:
        explorer.close()


def test_warm_cache_does_nothing_when_the_cache_is_off(code_cache, monkeypatch):
    monkeypatch.setenv(widget.CACHE_ENV, "")
    assert widget.warm_cache([2]) == []
