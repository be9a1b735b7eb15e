"""The package and its widgets load their submodules on first use (PEP 562), and every export resolves."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys

import pytest

import udk_notebooks
import udk_notebooks.widgets as widgets

HEAVY = ("sympy", "scipy", "matplotlib", "ipywidgets")


@pytest.mark.parametrize("package", [udk_notebooks, widgets], ids=lambda p: p.__name__)
def test_every_name_in_all_resolves_and_is_listed(package):
    for name in package.__all__:
        value = getattr(package, name)
        assert value is not None, name
        assert name in dir(package), name
        if name == "EXPLORERS":
            continue
        defining = importlib.import_module(f"{package.__name__}.{package._EXPORTS[name]}")
        assert value is getattr(defining, name), name  # the lazy name is the defining module's object


@pytest.mark.parametrize("package", [udk_notebooks, widgets], ids=lambda p: p.__name__)
def test_lazy_table_and_all_agree(package):
    assert set(package.__all__) - {"EXPLORERS"} == set(package._EXPORTS)


def test_from_import_and_submodule_attribute():
    from udk_notebooks import Model, simulate  # noqa: F401  (``from X import name`` goes through __getattr__)

    assert udk_notebooks.simulation.simulate is simulate
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        udk_notebooks.no_such_name  # noqa: B018


def test_explorer_registry_reads_each_class_on_demand():
    assert len(widgets.EXPLORERS) == 12
    assert dict(widgets.EXPLORERS)["kepler"] is widgets.KeplerExplorer
    for name, cls in widgets.EXPLORERS.items():
        assert issubclass(cls, widgets.Explorer), name
    with pytest.raises(KeyError):
        widgets.EXPLORERS["no_such_explorer"]


def test_importing_the_widgets_package_loads_no_heavy_library():
    code = f"import sys, udk_notebooks.widgets; print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# What a first frame need not load (cold start, issue 23), and what each costs a new kernel: sympy.physics
# its units; scipy.integrate its solvers; scipy.linalg (the package, not the LAPACK wrappers that
# udk_notebooks._lapack loads alone) and scipy.optimize scipy's array-API layer, which loads numpy.f2py and
# numpy.testing, 0.15 s; scipy.special (lambdify's scipy namespace) 0.04 s.
NOT_FOR_A_FIRST_FRAME = ("sympy.physics", "scipy.integrate", "scipy.linalg", "scipy.optimize", "scipy.special",
                         "numpy.f2py", "numpy.testing")


def _loaded_after(code: str) -> list[str]:
    """Which of NOT_FOR_A_FIRST_FRAME a fresh interpreter has loaded after running ``code``."""
    code += f"\nimport sys\nprint(sorted(m for m in {NOT_FOR_A_FIRST_FRAME!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return ast.literal_eval(out.strip().splitlines()[-1])


def test_a_fixed_step_run_of_a_catalogue_model_loads_no_scipy_subpackage():
    code = ("from udk_notebooks.examples import inclined_line as ex\n"
            "from udk_notebooks.simulation import simulate\n"
            "q0, qd0 = ex.initial_state()\n"
            "simulate(ex.model().compile(), (0.0, 0.1), q0, qd0, method='rk4', step=0.01)")
    assert _loaded_after(code) == []


def test_every_example_module_and_the_solver_modules_import_without_scipy_subpackages():
    code = ("import udk_notebooks.examples as ex\n"
            "for name in ex.__all__: getattr(ex, name)\n"
            "import udk_notebooks.core, udk_notebooks.kernels, udk_notebooks.singular, udk_notebooks.stacked\n"
            "import udk_notebooks.stabilization, udk_notebooks.compiled, udk_notebooks.simulation")
    assert _loaded_after(code) == []


def test_first_frames_of_fixed_step_explorers_load_no_scipy_subpackage():
    # the PNG route on Agg, as benchmarks/cold_start.py measures it; these explorers' runs need no scipy solver
    code = ("import matplotlib\n"
            "matplotlib.use('Agg')\n"
            "import udk_notebooks.widgets as widgets\n"
            "for name in ('inclined_line', 'rolling_disk'):\n"
            "    explorer = widgets.EXPLORERS[name]()\n"
            "    assert explorer.png and not explorer.error, explorer.error")
    assert _loaded_after(code) == []


def test_first_frame_of_the_fortran_dop853_route_loads_no_scipy_subpackage():
    # the double pendulum integrates with simulate's "dop853" (scipy's ode, loaded alone: udk_notebooks._ode);
    # scipy.integrate would cost its first frame 0.3 s (scipy.optimize, scipy.special, scipy.sparse)
    code = ("import matplotlib\n"
            "matplotlib.use('Agg')\n"
            "import udk_notebooks.widgets as widgets\n"
            "explorer = widgets.EXPLORERS['double_pendulum']()\n"
            "assert explorer.png and not explorer.error, explorer.error")
    assert _loaded_after(code) == []


SOLVE_IVP_EXPLORERS = ("friction_cart_pendulum", "incline_friction", "ladder")
"""The explorers whose first run goes through solve_ivp (stick/slip events), which imports scipy.integrate."""


def test_first_frames_of_every_explorer_without_friction_events_load_no_scipy_subpackage():
    # The carriage pendulum and the growing circle show the work of each force: by numpy's trapezoidal rule
    # (simulation._running_trapezoid), not scipy.integrate.cumulative_trapezoid, 0.3 s of their cold start.
    # One interpreter builds them all in turn, so any one of them that loads a library fails the test.
    code = ("import matplotlib\n"
            "matplotlib.use('Agg')\n"
            "import udk_notebooks.widgets as widgets\n"
            f"for name in sorted(set(widgets.EXPLORERS) - set({SOLVE_IVP_EXPLORERS!r})):\n"
            "    explorer = widgets.EXPLORERS[name]()\n"
            "    assert explorer.png and not explorer.error, (name, explorer.error)\n"
            "    explorer.close()")
    assert _loaded_after(code) == []


def test_the_explorers_left_out_above_run_solve_ivp():
    # the list above names only explorers whose run asks simulate for solve_ivp's "DOP853" (upper case; the
    # compiled route is "dop853"): an explorer moved off solve_ivp must join the test above
    import inspect
    import sys

    for name in SOLVE_IVP_EXPLORERS:
        source = inspect.getsource(sys.modules[widgets.EXPLORERS[name].__module__])
        assert 'method="DOP853"' in source, name


def test_explorer_modules_import_without_scipy_subpackages():
    # an explorer's module imports no solver at its top: the one its first run needs is loaded by that run
    code = ("import udk_notebooks.widgets as widgets\n"
            "for name in widgets.EXPLORERS: widgets.EXPLORERS[name]")
    assert _loaded_after(code) == []


def test_every_example_module_resolves():
    import types

    from udk_notebooks import examples

    for name in examples.__all__:
        value = getattr(examples, name)
        assert name in dir(examples), name
        if name != "Parameter":
            assert isinstance(value, types.ModuleType) and value.__name__ == f"udk_notebooks.examples.{name}"
            assert callable(value.model) or hasattr(value, "PARAMETERS"), name
