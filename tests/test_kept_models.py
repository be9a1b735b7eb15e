"""Compiled models kept on disk and built again without sympy (``_kept_code.compile_kept``, ``CompiledModel.from_store``).

A model read back from its store must be the model compiled afresh: the same facts, every function giving
the same numbers to the last bit, the same runs (friction, contacts, time-dependent models included), and
without deriving the symbolic model on the way. Where the store cannot vouch (a fact or a function missing,
a damaged file), the model is compiled afresh.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from functools import partial
from pathlib import Path

import numpy as np
import pytest

from udk_notebooks import _kept_code as kept_code
from udk_notebooks._kept_code import CodeStore, compile_kept
from udk_notebooks.compiled import FACTS, CompiledModel
from udk_notebooks.examples import (carriage_pendulum, chain, double_pendulum, friction_cart_pendulum, growing_circle,
                                    incline_friction, inclined_line, kepler, ladder, painleve_rod, rolling_disk,
                                    singular_mass)
from udk_notebooks.simulation import simulate

ROOT = Path(__file__).resolve().parent.parent

BUILDERS = {
    "carriage_pendulum.model": carriage_pendulum.model,  # a driving force of time (rheonomic Q)
    "chain-3": partial(chain.n_link_chain, 3),
    "chain.cartesian_pendulum": chain.cartesian_pendulum,
    "double_pendulum.minimal_model-rods": partial(double_pendulum.minimal_model, "rods"),
    "double_pendulum.cartesian_model-points": partial(double_pendulum.cartesian_model, "points"),
    "friction_cart_pendulum.model": friction_cart_pendulum.model,  # CoulombFriction(normal=rows)
    "friction_cart_pendulum.contact_model": friction_cart_pendulum.contact_model,  # a Contact, A M^-1 C != 0
    "growing_circle.model": growing_circle.model,  # a rheonomic constraint
    "incline_friction.model": incline_friction.model,  # CoulombFriction(normal=None): reaction_free proven
    "incline_friction.contact_model": incline_friction.contact_model,
    "inclined_line.model": inclined_line.model,
    "kepler.model": kepler.model,
    "ladder.model": ladder.model,  # two unilateral contacts
    "painleve_rod.model": painleve_rod.model,
    "rolling_disk.model": rolling_disk.model,  # nonholonomic rows
    "singular_mass.model": singular_mass.model,  # a singular mass matrix
}


def _never_derive():
    raise AssertionError("the model was derived: something it needed was not kept")


def _exercise(cm: CompiledModel) -> None:
    """Build what a compiled model makes on demand, so that its store holds it."""
    B = 3
    q, qd = np.full((B, cm.n), 0.7), np.full((B, cm.n), 0.3)  # away from r = 0 and other poles
    p = np.tile(cm.defaults, (B, 1))
    cm.matrices_batch(0.0, q, qd, p)
    cm.terms_batch(0.0, list(q.T), list(qd.T), list(p.T))
    cm.velocity_jacobian, cm.phi_jacobian  # noqa: B018 (built on first use)
    if cm.n_friction:
        cm._scalar_friction()
        cm.reaction_free  # noqa: B018 (a proof, kept as a fact)


def _read_back(store: CodeStore) -> CodeStore:
    """The store as another session reads it: through JSON, as on disk."""
    text = json.dumps({"functions": store.entries, "facts": store.facts})
    again = json.loads(text)
    return CodeStore(again["functions"], again["facts"])


def _outputs(cm: CompiledModel, seed: int) -> list[np.ndarray]:
    """Every function of a compiled model at a few random states (off the constraints), as arrays."""
    rng = np.random.default_rng(seed)
    p = cm.defaults
    out = []
    for _ in range(3):
        t = float(rng.uniform(0.0, 2.0))
        q, qd = rng.uniform(0.3, 1.2, cm.n), rng.normal(0.0, 1.0, cm.n)  # away from r = 0 and other poles
        args = (t, list(q), list(qd), list(p))
        out += [np.array(cm.matrices(*args)), np.array(cm.phi(t, list(q), list(p)), dtype=float),
                np.array(cm.velocity_constraints(*args), dtype=float), np.array(cm.energy(*args), dtype=float),
                np.array(cm.powers_data(*args)[0], dtype=float), np.array(cm.powers_data(*args)[1], dtype=float),
                np.array(cm.velocity_jacobian(*args), dtype=float), np.array(cm.phi_jacobian(t, q, p), dtype=float)]
        if cm.mass is not None:
            out.append(np.array(cm.mass(list(p)), dtype=float))
        if cm.n_friction:
            out += [np.array(cm.friction_data(*args), dtype=float), np.array(cm._scalar_friction()(*args))]
        batch = (rng.uniform(0.3, 1.2, (4, cm.n)), rng.normal(0.0, 1.0, (4, cm.n)))
        out.append(cm.matrices_batch(t, *batch, np.tile(p, (4, 1))))
        terms = cm.terms_batch(t, list(batch[0].T), list(batch[1].T), list(np.tile(p, (4, 1)).T))
        out += [np.broadcast_to(np.asarray(term, dtype=float), (4,)) for term in terms]
    return out


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_a_model_built_from_its_store_is_the_model_compiled_afresh(name):
    model = BUILDERS[name]()
    store = CodeStore()
    fresh = CompiledModel.from_model(model, sources=store)
    _exercise(fresh)
    kept = CompiledModel.from_store(_read_back(store), _never_derive)
    assert kept is not None and kept._model is None
    assert kept.facts == json.loads(json.dumps(fresh.facts))
    for field in ("n", "m", "coordinate_names", "parameter_names", "has_nonideal", "n_holonomic", "n_nonholonomic",
                  "n_friction", "n_contacts", "unilateral", "contact_names", "contact_rows", "friction_normals"):
        assert getattr(kept, field) == getattr(fresh, field), field
    np.testing.assert_array_equal(kept.defaults, fresh.defaults)
    np.testing.assert_array_equal(kept.nonzero, fresh.nonzero)
    assert (kept.kernel is None) == (fresh.kernel is None) and (kept.singular_kernel is None) == (fresh.singular_kernel is None)
    assert kept.matrices.on_floats == getattr(fresh.matrices, "on_floats", False)
    if fresh.n_friction:
        assert kept.reaction_free == fresh.reaction_free
    for a, b in zip(_outputs(kept, 11), _outputs(fresh, 11), strict=True):
        np.testing.assert_array_equal(a, b)
    assert kept._model is None  # all of it from the store: the model was never derived
    # and the model itself, when asked for, is derived then (once)
    derived = []
    again = CompiledModel.from_store(_read_back(store), lambda: derived.append(1) or BUILDERS[name]())
    assert again.model.name == model.name and again.model is again.model and derived == [1]


@pytest.mark.parametrize("name, state, horizon, method", [
    ("incline_friction.model", partial(incline_friction.initial_state, 2.0), 1.0, "DOP853"),  # slides, stops, sticks
    ("ladder.model", partial(ladder.initial_state, 1.2), 1.5, "DOP853"),  # slips, leaves the wall
    ("friction_cart_pendulum.model", friction_cart_pendulum.initial_state, 2.0, "DOP853"),
    ("growing_circle.model", growing_circle.initial_state, 1.0, "dop853"),
    ("rolling_disk.model", rolling_disk.initial_state, 1.0, "rk4"),
    ("singular_mass.model", singular_mass.initial_state, 1.0, "dop853"),
    ("carriage_pendulum.model", carriage_pendulum.initial_state, 1.0, "dop853"),
])
def test_runs_of_a_model_built_from_its_store_are_the_runs_of_the_fresh_one(name, state, horizon, method):
    store = CodeStore()
    fresh = CompiledModel.from_model(BUILDERS[name](), sources=store)
    times = np.linspace(0.0, horizon, 41)
    q0, qd0 = state()
    options = dict(step=0.005) if method == "rk4" else dict(rtol=1e-9, atol=1e-11)
    first = simulate(fresh, (0.0, horizon), q0, qd0, method=method, t_eval=times, **options)
    kept = CompiledModel.from_store(_read_back(store), _never_derive)
    second = simulate(kept, (0.0, horizon), q0, qd0, method=method, t_eval=times, **options)
    assert first.status == second.status
    for field in ("t", "q", "qd", "qdd", "impressed", "ideal", "nonideal", "modes"):
        np.testing.assert_array_equal(getattr(second, field), getattr(first, field), err_msg=field)
    assert [e.kind for e in second.events] == [e.kind for e in first.events]
    assert kept._model is None


def test_a_store_missing_a_fact_or_a_function_is_not_used():
    store = CodeStore()
    CompiledModel.from_model(incline_friction.model(), sources=store)
    for fact in FACTS:
        partial_store = _read_back(store)
        del partial_store.facts[fact]
        assert CompiledModel.from_store(partial_store, _never_derive) is None, fact
    for function in ("matrices", "phi", "velocity", "energy", "powers", "friction", "mass"):
        partial_store = _read_back(store)
        del partial_store.entries[function]
        assert CompiledModel.from_store(partial_store, _never_derive) is None, function
    broken = _read_back(store)
    broken.entries["energy"]["globals"]["os"] = ["os", None]  # a record that must not be executed
    assert CompiledModel.from_store(broken, _never_derive) is None
    with pytest.raises(TypeError, match="`store` must be a CodeStore"):
        CompiledModel.from_store({"facts": {}}, _never_derive)
    with pytest.raises(TypeError, match="`derive` must be a function"):
        CompiledModel.from_store(store, None)


def test_a_function_that_was_not_kept_is_generated_from_the_derived_model():
    store = CodeStore()
    fresh = CompiledModel.from_model(kepler.model(), sources=store)
    kept = CompiledModel.from_store(_read_back(store), kepler.model)  # no Jacobian kept: built on demand
    assert "velocity_jacobian" not in store.entries and kept._model is None
    state = (0.4, [1.1, 0.7], [0.2, -0.5], list(fresh.defaults))
    np.testing.assert_array_equal(kept.velocity_jacobian(*state), fresh.velocity_jacobian(*state))
    assert kept._model is not None and kept.store.changed and "velocity_jacobian" in kept.store.entries


@pytest.fixture
def disk(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv(kept_code.CACHE_ENV, str(folder))
    return folder


def test_compile_kept_writes_the_store_and_the_next_session_reads_it(disk):
    derived = []

    def derive():
        derived.append(1)
        return incline_friction.model()

    first = compile_kept("incline_friction.model", derive)
    (path,) = disk.glob("incline_friction.model-*.code.json")
    assert derived == [1] and first._model is not None
    simulate(first, (0.0, 1.0), *incline_friction.initial_state(2.0), method="DOP853", t_eval=np.linspace(0, 1, 5))
    assert first.store.changed  # the run proved reaction_free (N = |F^L| holds for the block)...
    kept_code.write_changed()  # ...which the explorer writes after its update
    written = json.loads(path.read_text())
    assert written["facts"]["reaction_free"] == [True] and set(written["functions"]) == set(first.store.entries)
    second = compile_kept("incline_friction.model", derive)  # the next session
    assert derived == [1] and second._model is None and second.reaction_free == (True,)
    assert not second.store.changed
    mtime = path.stat().st_mtime_ns
    kept_code.write_changed()  # nothing new: the file is left alone
    assert path.stat().st_mtime_ns == mtime


@pytest.mark.parametrize("damage", ["truncated", "fact edited", "another name", "another layout"])
def test_a_damaged_store_file_is_compiled_afresh_and_rewritten(disk, damage):
    compile_kept("kepler.model", kepler.model)
    (path,) = disk.glob("kepler.model-*.code.json")
    text = path.read_text()
    written = json.loads(text)
    if damage == "truncated":
        path.write_text(text[: len(text) // 2])
    else:
        if damage == "fact edited":  # without its digest: the facts a model is built from must be the written ones
            written["facts"]["n"] = 3
        elif damage == "another name":
            written["name"] = "chain-2"
        else:
            written["format"] = kept_code.STORE_FORMAT + 1
        path.write_text(json.dumps(written))
    derived = []
    cm = compile_kept("kepler.model", lambda: derived.append(1) or kepler.model())
    assert derived == [1] and cm.n == 2
    rewritten = json.loads(path.read_text())
    assert rewritten["facts"]["n"] == 2 and rewritten["name"] == "kepler.model"
    assert rewritten["format"] == kept_code.STORE_FORMAT
    parts = ("format", "key", "name", "functions", "facts")
    assert rewritten["digest"] == kept_code._digest({part: rewritten[part] for part in parts})


def test_another_models_file_under_this_name_is_refused(disk):
    """The digest covers the name: a file of another model, its name field edited, is not read as this model."""
    compile_kept("kepler.model", kepler.model)
    compile_kept("inclined_line.model", inclined_line.model)
    (kepler_path,) = disk.glob("kepler.model-*.code.json")
    (line_path,) = disk.glob("inclined_line.model-*.code.json")
    foreign = json.loads(line_path.read_text())
    foreign["name"] = "kepler.model"  # its digest left as written
    kepler_path.write_text(json.dumps(foreign))
    derived = []
    compile_kept("kepler.model", lambda: derived.append(1) or kepler.model())
    assert derived == [1]
    assert json.loads(kepler_path.read_text())["functions"] != foreign["functions"]  # rewritten as kepler's


def test_sources_changed_since_import_turn_the_disk_off(disk, monkeypatch):
    """Modules loaded before an edit must not file their code under the edited sources' key (nor read it)."""
    from udk_notebooks import _sources

    compile_kept("kepler.model", kepler.model)
    (path,) = disk.glob("kepler.model-*.code.json")
    before = path.read_bytes()
    monkeypatch.setattr(_sources, "_status", lambda: {"examples/kepler.py": (1, 2, 3)})  # a file touched
    monkeypatch.setattr(_sources, "_changed", False)
    assert kept_code.cache_directory() is None and kept_code.read_store("kepler.model") is None
    derived = []
    cm = compile_kept("kepler.model", lambda: derived.append(1) or kepler.model())
    assert derived == [1] and cm.store is None  # compiled in memory only
    assert path.read_bytes() == before and [p.name for p in disk.iterdir()] == [path.name]


@pytest.mark.parametrize("undone", [False, True], ids=["edited", "edited and put back"])
def test_an_example_edited_after_the_package_was_imported_keeps_nothing(tmp_path, undone):
    """End to end, in a copy of the package: the edit lands between ``import udk_notebooks`` and the example's
    import (an editor's save while a kernel is open). Its model must not be kept under either key, nor under
    the original key when the edit is undone before the model is compiled (an undo, ``git stash pop``)."""
    import shutil

    copy = tmp_path / "src"
    shutil.copytree(ROOT / "udk_notebooks", copy / "udk_notebooks", ignore=shutil.ignore_patterns("__pycache__"))
    script = textwrap.dedent("""
        import udk_notebooks
        from pathlib import Path

        example = Path(udk_notebooks.__file__).parent / "examples" / "kepler.py"
        original = example.read_text()
        example.write_text(original + "\\n# edited while a kernel was open\\n")
        from udk_notebooks._kept_code import cache_directory, compile_kept
        from udk_notebooks.examples import kepler

        if {undone}:
            example.write_text(original)

        cm = compile_kept("kepler.model", kepler.model)
        print(cache_directory() is None, cm.store is None)
    """).replace("{undone}", str(undone))
    cache = tmp_path / "cache"
    env = dict(os.environ, PYTHONPATH=str(copy), PYTHONDONTWRITEBYTECODE="1", **{kept_code.CACHE_ENV: str(cache)})
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=tmp_path,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "True"] and not cache.exists()


def test_only_files_the_package_named_are_removed(disk):
    disk.mkdir(mode=0o700)
    mine = [disk / "my-notes.code.json", disk / "kepler.model-draft.code.json"]
    for path in mine:
        path.write_text("a user's own file")
    stale = disk / f"kepler.model-{'0' * 20}.code.json"  # kept code of another key: ours to drop
    stale.write_text("{}")
    compile_kept("kepler.model", kepler.model)
    assert all(path.read_text() == "a user's own file" for path in mine) and not stale.exists()


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX permissions")
def test_a_folder_others_can_write_is_not_used(disk):
    """Kept files are code the kernel runs: a folder that group or others can write is refused, once said."""
    disk.mkdir(mode=0o700)
    os.chmod(disk, 0o777)  # chmod: mkdir's mode is masked by the umask
    with pytest.warns(UserWarning, match=r"can be written by group or others.*chmod go-w"):
        assert kept_code.cache_directory() is None
    derived = []
    compile_kept("kepler.model", lambda: derived.append(1) or kepler.model())
    assert derived == [1] and list(disk.iterdir()) == []
    os.chmod(disk, 0o755)
    assert kept_code.cache_directory() == disk


def test_no_store_when_the_cache_is_off_and_bad_names_are_refused(monkeypatch):
    monkeypatch.setenv(kept_code.CACHE_ENV, "")
    assert kept_code.read_store("kepler.model") is None
    cm = compile_kept("kepler.model", kepler.model)
    assert cm.store is None and cm._model is not None
    for bad in ("../escape", "", "a/b", 3, "x" * 200):
        with pytest.raises(ValueError, match="`name` must be a file-name-safe model name"):
            kept_code.read_store(bad)
    with pytest.raises(TypeError, match="`derive` must be a function"):
        compile_kept("kepler.model", kepler.model())


def test_a_model_read_back_runs_without_importing_sympy(disk):
    # the store, written by this session with what a run builds on demand (the sampled forces)
    cm = compile_kept("chain.cartesian_pendulum", chain.cartesian_pendulum)
    here = simulate(cm, (0.0, 1.0), [0.8, -0.6], [0.6, 0.8], method="rk4", step=0.01, params={"l": 1.0})
    kept_code.write_changed()
    script = textwrap.dedent("""
        import sys
        import numpy as np
        from udk_notebooks._kept_code import compile_kept
        from udk_notebooks.simulation import simulate

        def derive():
            raise SystemExit("derived")

        cm = compile_kept("chain.cartesian_pendulum", derive)
        q0, qd0 = np.array([0.8, -0.6]), np.array([0.6, 0.8])  # on the unit circle, velocity tangent to it
        run = simulate(cm, (0.0, 1.0), q0, qd0, method="rk4", step=0.01, params={"l": 1.0})
        print(run.q[-1].tolist(), "sympy" in sys.modules)
    """)
    env = dict(os.environ, PYTHONPATH=str(ROOT), **{kept_code.CACHE_ENV: str(disk)})
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr
    final, imported = out.stdout.rsplit(" ", 1)
    assert imported.strip() == "False", "sympy was imported"
    assert json.loads(final) == here.q[-1].tolist()  # and it moved as the fresh compile did, to the last bit


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX permissions")
def test_a_kept_file_others_can_write_is_not_read(disk):
    """The file is checked as opened, not only its folder: one that others could have written is not run."""
    compile_kept("kepler.model", kepler.model)
    (path,) = disk.glob("kepler.model-*.code.json")
    os.chmod(path, 0o666)
    derived = []
    compile_kept("kepler.model", lambda: derived.append(1) or kepler.model())
    assert derived == [1]
    assert path.stat().st_mode & 0o777 == 0o600  # written again, by this user, for this user
