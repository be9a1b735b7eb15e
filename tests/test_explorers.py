"""Every registered explorer driven from Python: random controls, forces on screen, closing, static export.

The explorers built on :class:`~udk_notebooks.widgets.system.SystemExplorer` are
checked here; the three older ones have their own modules (``test_widgets*.py``).
"""

from __future__ import annotations

import gc
import os
import weakref

import matplotlib.pyplot as plt
import numpy as np
import pytest

from udk_notebooks.widgets import EXPLORERS, SystemExplorer

SYSTEM_EXPLORERS = sorted(name for name, cls in EXPLORERS.items() if issubclass(cls, SystemExplorer))
COMBINATIONS = int(os.environ.get("UDK_FUZZ_COMBINATIONS", "100"))  # more for a deeper fuzz
# Messages a student may see for a refused combination: the solver's own, clear errors.
EXPECTED_ERRORS = ("UnstableGainError", "ConstraintViolationError", "InconsistentConstraintsError",
                   "NonUniqueAccelerationError", "PainleveParadoxError", "ValueError")


def test_registry_lists_every_catalogue_system():
    from udk_notebooks import examples

    systems = {"inclined_line", "incline_friction", "rolling_disk", "double_pendulum", "carriage_pendulum",
               "kepler", "growing_circle", "singular_mass", "chain", "friction_cart_pendulum", "ladder"}
    assert systems <= set(EXPLORERS)
    assert systems <= {name for name in dir(examples) if not name.startswith("_")}


def _assert_forces_on_screen(explorer):
    """The arrows drawn are the solver's forces at the drawn instant, and those equal a fresh evaluation."""
    run = explorer.result
    traj = run.trajectory
    j = explorer.frame_index(traj.t)
    view = explorer.view_of_mechanism
    drawn = explorer.drawn_forces()
    for kind, vector in drawn.items():
        np.testing.assert_array_equal(vector, getattr(traj, kind)[j])
    motion = run.model.motion(traj.t[j], traj.q[j], traj.qd[j], stabilization=traj.stabilization,
                              **traj.parameters)
    for kind in drawn:
        scale = max(1.0, float(np.abs(getattr(motion, kind)).max()))
        np.testing.assert_allclose(drawn[kind], getattr(motion, kind), rtol=0, atol=1e-9 * scale)
    where = run.mechanism.positions(traj.q[j], traj.t[j])
    sites = {site.at: site for site in run.mechanism.forces}
    for joint, kind, tail, tip in view.drawn_arrows():
        np.testing.assert_allclose(tail, where[joint], atol=1e-12)
        np.testing.assert_allclose(tip - tail, view.force_scale * sites[joint].pick(drawn[kind]), atol=1e-9)


@pytest.mark.parametrize("name", SYSTEM_EXPLORERS)
def test_defaults_are_a_trustworthy_run(name):
    explorer = EXPLORERS[name]()
    assert explorer.error == "" and explorer.warning == ""
    _assert_forces_on_screen(explorer)
    explorer.close()


@pytest.mark.slow
@pytest.mark.parametrize("name", SYSTEM_EXPLORERS)
def test_random_controls_never_break_an_explorer(name):
    """Random combinations (COMBINATIONS): a clear message or a drawn run whose forces match the solver."""
    # Fewer output samples than shipped keep the runs quick; the rolling disk and chain use fixed steps.
    explorer = EXPLORERS[name](**({} if name in ("rolling_disk", "chain") else {"samples": 41}))
    explorer.figure.set_dpi(40)  # the same artists, fewer pixels to fill
    rng = np.random.default_rng(sorted(EXPLORERS).index(name))
    names = [n for n in (*explorer.parameters, *explorer.extra)]
    refused = drawn = 0
    for i in range(COMBINATIONS):
        values = {}
        for n in names:
            control = explorer.controls[n]
            if isinstance(control.value, str):
                values[n] = str(rng.choice(control.options))
            else:
                lo, hi = control.min, control.max
                if n in ("horizon", "N"):  # keep the suite quick: short runs, small chains
                    hi = lo + 0.15 * (hi - lo)
                values[n] = float(rng.choice([lo, hi])) if rng.random() < 0.1 else float(rng.uniform(lo, hi))
        explorer.set(**values, frame=int(rng.integers(explorer.frames)))
        if explorer.error:
            refused += 1
            assert explorer.error.split(":")[0] in EXPECTED_ERRORS, explorer.error
            assert explorer.result is not None  # the last good run stays on screen
        else:
            drawn += 1
            if i % 10 == 0:
                _assert_forces_on_screen(explorer)
            if explorer.warning:
                assert explorer.warning.startswith(("Diverged", "Not to be trusted", "Impact at t = "))
    # Most random gain and step pairs of the rolling disk are unstable and refused, as they should be.
    assert drawn >= COMBINATIONS // 10, f"{refused} of {COMBINATIONS} combinations refused"
    explorer.close()


def test_a_drifting_run_is_marked_not_drawn_as_fine():
    explorer = EXPLORERS["chain"]()
    explorer.set(N=6, method="euler", step=0.05, horizon=3.0)
    assert explorer.error == ""
    assert explorer.warning.startswith(("Diverged", "Not to be trusted"))
    assert explorer._warning.get_visible() and explorer._warning.get_text()
    explorer.set(method="rk4", step=0.005, horizon=1.0)
    assert explorer.warning == "" and not explorer._warning.get_visible()
    explorer.close()


def test_chain_changes_its_number_of_links_in_place():
    explorer = EXPLORERS["chain"]()
    for N in (1, 7, 2):
        explorer.set(N=N)
        assert explorer.error == ""
        assert len(explorer.result.mechanism.forces) == N
        _assert_forces_on_screen(explorer)
    explorer.close()


def test_choice_controls_refuse_unknown_options():
    explorer = EXPLORERS["rolling_disk"]()
    with pytest.raises(Exception):
        explorer.set(method="leapfrog")
    explorer.close()


def test_explorers_built_in_a_loop_leave_nothing_open():
    before = set(plt.get_fignums())
    refs = []
    for _ in range(50):
        explorer = EXPLORERS["kepler"](samples=21)
        refs.append(weakref.ref(explorer))
        explorer.close()
        assert explorer.closed
        del explorer
    gc.collect()
    assert set(plt.get_fignums()) == before
    assert sum(ref() is not None for ref in refs) == 0


def test_static_export_shows_figure_and_animation(monkeypatch):
    from IPython.core.interactiveshell import InteractiveShell

    shown = []
    monkeypatch.setenv("UDK_STATIC_EXPORT", "1")
    monkeypatch.setattr("IPython.display.display", lambda obj, *a, **k: shown.append(obj))
    explorer = EXPLORERS["growing_circle"](samples=31)
    explorer._ipython_display_()
    kinds = [type(obj).__name__ for obj in shown]
    assert kinds == ["Image", "HTML"], kinds
    assert shown[0].data[:8] == b"\x89PNG\r\n\x1a\n"
    assert shown[1].data.count("frames[") >= 10
    explorer.close()
    assert InteractiveShell  # IPython is importable here (the display route needs it)


@pytest.mark.parametrize("arguments, message", [
    ({"frames": 10}, "set `steps`"),
    ({"steps": "a"}, "`steps` must be a whole number"),
    ({"steps": 0}, "`steps` must be a whole number of at least 1"),
    ({"speed": "fast"}, "`speed` must be a finite number"),
])
def test_constructor_arguments_are_refused_by_name(arguments, message):
    from udk_notebooks.widgets import InclinedLineExplorer

    with pytest.raises((TypeError, ValueError), match=message):
        InclinedLineExplorer(**arguments)
    with pytest.raises(ValueError, match="`frames` must be a whole number"):
        EXPLORERS["kepler"](frames="a")


@pytest.mark.parametrize("name", sorted(EXPLORERS))
def test_every_slider_starts_exactly_at_its_default(name):
    """A slider holds only min + k step: the defaults (g = 9.81, the papers' values) must be on its grid."""
    explorer = EXPLORERS[name]()
    for control_name, (default, _, _) in {**explorer.parameters, **explorer.extra}.items():
        control = explorer.controls[control_name]
        assert control.value == pytest.approx(default, abs=1e-12), control_name
        if not isinstance(default, str) and round(default, 4) == default:  # a decimal default is read out as is
            shown = f"{control.value:{control.readout_format}}"
            assert float(shown) == pytest.approx(default, abs=1e-12), (control_name, shown)
    explorer.close()
