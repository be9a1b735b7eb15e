"""The example modules import and run their numeric helpers without sympy (cold start, issue 23),
and their models are the very models they built when sympy was imported with the module.

The digests in ``DIGESTS`` were generated ONCE from the example modules as they were on branch h-kept
(commit c913188, every symbol built at import), by running :func:`model_digest` for every row of
``DIGESTS`` with that tree on ``PYTHONPATH`` (``git archive h-kept | tar -x -C /tmp/lazyex-before``),
under two hash seeds (the digests agreed). They are not recomputed here from the same code, so a model
builder that now differs in any coordinate, matrix, constraint, parameter symbol (with its assumptions),
parameter default or order, friction entry or contact fails its row.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import subprocess
import sys

import pytest
import sympy as sm

from udk_notebooks.examples import Parameter
from udk_notebooks.examples._parameters import defaults, symbols, values

# The fields of a Model that make it what it is; parameters and friction entries are added below.
FIELDS = ("q", "M", "Q", "A", "b", "C", "phi", "psi", "velocity_constraints", "energy", "nonconservative_force",
          "explicit_time_power", "friction_normals", "contact_rows", "contact_names", "contact_normals", "name")

DIGESTS = [  # (module, builder, arguments, sha256 prefix from h-kept)
    ("carriage_pendulum", "model", {}, "8bfad6ee66b238ba"),
    ("carriage_pendulum", "minimal_model", {}, "1a9c81aca3d84bc6"),
    ("chain", "cartesian_pendulum", {}, "6cea0d2fa40dfd15"),
    ("chain", "model", {}, "6cea0d2fa40dfd15"),
    ("chain", "n_link_chain", {"N": 1}, "6a40649db79b9dda"),
    ("chain", "n_link_chain", {"N": 2}, "73b0c29459b3c11f"),
    ("chain", "n_link_chain", {"N": 3}, "ec39df9247740820"),
    ("double_pendulum", "minimal_model", {"bodies": "rods"}, "f4007cf4d94160ca"),
    ("double_pendulum", "minimal_model", {"bodies": "points"}, "2521f7cd3dff5a86"),
    ("double_pendulum", "model", {}, "f4007cf4d94160ca"),
    ("double_pendulum", "cartesian_model", {"bodies": "rods"}, "9fcfb3da1599e5c9"),
    ("double_pendulum", "cartesian_model", {"bodies": "points"}, "805f26c7159a7784"),
    ("friction_cart_pendulum", "model", {}, "ed4ff96ac6dc0296"),
    ("friction_cart_pendulum", "contact_model", {}, "f5de7c765b8e7383"),
    ("growing_circle", "model", {}, "261260c90d4ee2a8"),
    ("incline_friction", "model", {}, "40789fae05d908f6"),
    ("incline_friction", "contact_model", {}, "e1d9f94081cb7aed"),
    ("inclined_line", "model", {}, "2945912de6626290"),
    ("kepler", "model", {}, "7717a8fcc9c8bd76"),
    ("ladder", "model", {}, "b3eac147973d4f57"),
    ("painleve_rod", "model", {}, "e2dc8fd6626a901f"),
    ("rolling_disk", "model", {}, "c7ecefbdf7b429e5"),
    ("singular_mass", "model", {}, "54ddbdc5e7bb41be"),
    ("carriage_pendulum", "model", {"m": 2.5, "omega": 3.0}, "59522280f66dbd19"),  # overrides reach the defaults
    ("incline_friction", "contact_model", {"mu": 0.4}, "7a702de9143fe018"),  # mu_s follows mu
]


def _text(value) -> str:
    """``srepr`` of a field, through tuples, lists and dataclasses (friction entries)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        inner = ", ".join(f"{f.name}={_text(getattr(value, f.name))}" for f in dataclasses.fields(value))
        return f"{type(value).__name__}({inner})"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_text(v) for v in value) + "]"
    return sm.srepr(value)


def model_digest(module: str, builder: str, kwargs: dict) -> str:
    """The first 16 hex digits of the sha256 of every field of the model the builder returns."""
    model = getattr(importlib.import_module(f"udk_notebooks.examples.{module}"), builder)(**kwargs)
    parts = [f"{name}={_text(getattr(model, name, None))}" for name in FIELDS]
    parts.append("parameters=" + ", ".join(f"{sm.srepr(s)}:{float(v)!r}" for s, v in model.parameters.items()))
    parts.append("friction=" + _text(list(model.all_friction)))
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


@pytest.mark.parametrize("module, builder, kwargs, expected", DIGESTS,
                         ids=[f"{m}.{b}{''.join(f'-{k}={v}' for k, v in kw.items())}" for m, b, kw, _ in DIGESTS])
def test_every_model_builder_gives_the_model_it_gave_with_symbols_built_at_import(module, builder, kwargs, expected):
    assert model_digest(module, builder, kwargs) == expected


def test_the_digest_sees_assumptions_and_defaults():
    # The digest must tell apart what a lazily built symbol could get wrong: its assumptions, its value.
    assert _text(sm.Symbol("m", positive=True)) != _text(sm.Symbol("m", real=True))
    assert model_digest("carriage_pendulum", "model", {"m": 1.5}) != DIGESTS[0][3]


# -- Parameter, values, defaults -------------------------------------------------------------------------


def test_parameter_symbol_has_the_name_and_assumptions():
    real = Parameter("m1", 1.0, "mass of the block (kg)", (0.1, 5.0))
    positive = Parameter("r", 1.0, "radius", (0.1, 3.0), {"positive": True})
    assert real.symbol == sm.Symbol("m1", real=True) and real.symbol != sm.Symbol("m1")
    assert positive.symbol == sm.Symbol("r", positive=True) and positive.symbol.is_positive
    assert hash(real) == hash(Parameter("m1", 1.0, "mass of the block (kg)", (0.1, 5.0)))
    with pytest.raises(ValueError, match="`name` must be a symbol name"):
        Parameter(sm.Symbol("m"), 1.0, "mass", (0.1, 5.0))
    with pytest.raises(TypeError, match="`assumptions` must be a mapping"):
        Parameter("m", 1.0, "mass", (0.1, 5.0), "positive")


def test_values_and_defaults_agree_and_check_alike():
    table = {"m": Parameter("m", 1.0, "mass", (0.1, 5.0)), "k": Parameter("k", 2.0, "stiffness", (0.0, 9.0))}
    assert values(table, {"k": 3}) == {"m": 1.0, "k": 3.0}
    assert defaults(table, {"k": 3}) == {sm.Symbol("m", real=True): 1.0, sm.Symbol("k", real=True): 3.0}
    assert symbols(table) == (sm.Symbol("m", real=True), sm.Symbol("k", real=True))
    for build in (values, defaults):
        with pytest.raises(ValueError, match="unknown parameter"):
            build(table, {"q": 1.0})
        with pytest.raises(ValueError, match="parameter `m`"):
            build(table, {"m": float("nan")})
        with pytest.raises(ValueError, match="key 'mass' names the symbol 'm'"):
            build({"mass": table["m"]}, {})


def test_every_table_key_is_its_symbol_name():
    from udk_notebooks import examples

    for name in examples.__all__:
        if name != "Parameter":
            for key, row in getattr(examples, name).PARAMETERS.items():
                assert key == row.name, f"{name}.PARAMETERS[{key!r}]"


def test_friction_cart_pendulum_serves_its_former_module_symbols():
    from udk_notebooks.examples import friction_cart_pendulum as fcp
    from udk_notebooks._symbols import time_functions

    assert fcp.FLOOR == fcp.y1 == time_functions("y1")
    assert fcp.mu_s == sm.Symbol("mu_s", real=True)
    assert fcp.model().holonomic[0] == fcp.FLOOR
    assert {"FLOOR", "x1", "mu_s"} <= set(dir(fcp))
    with pytest.raises(AttributeError, match="no attribute 'phi'"):
        fcp.phi  # noqa: B018


# -- no sympy on the numeric path (subprocess: this process has sympy already) ---------------------------

NUMERIC_CALLS = """
import sys
import numpy as np
from udk_notebooks.examples import (carriage_pendulum, chain, double_pendulum, friction_cart_pendulum,
    growing_circle, incline_friction, inclined_line, kepler, ladder, painleve_rod, rolling_disk, singular_mass)

q, qd = carriage_pendulum.initial_state()
carriage_pendulum.to_minimal(q, qd); carriage_pendulum.normal_mode_frequencies()
carriage_pendulum.mechanism(); carriage_pendulum.mechanism("minimal")
q, qd = chain.pendulum_initial_state(); chain.small_angle_state([0.0, 0.1], 0.3)
q, qd = chain.chain_initial_state(3); chain.chain_to_angles(q, qd); chain.mechanism(3)
q, qd = double_pendulum.initial_state(); double_pendulum.to_minimal(*double_pendulum.to_cartesian(q, qd, "points"))
double_pendulum.mechanism(); double_pendulum.mechanism("cartesian", "points")
q, qd = friction_cart_pendulum.initial_state(); friction_cart_pendulum.to_cartesian(*friction_cart_pendulum.to_minimal(q, qd))
friction_cart_pendulum.minimal_motion([0.0, 1.2], [0.1, 0.0], 1)
friction_cart_pendulum.floor_forces(np.zeros(4), np.zeros(4)); friction_cart_pendulum.mechanism()
growing_circle.radius(1.0); growing_circle.initial_state(); growing_circle.exact_state([0.0, 0.5])
growing_circle.exact_ideal_force([0.5]); growing_circle.mechanism()
incline_friction.parameter_values(); incline_friction.initial_state(); incline_friction.stop_time()
incline_friction.exact_motion(1); incline_friction.exact_state([0.0, 0.1]); incline_friction.mechanism()
q, qd = inclined_line.initial_state(); inclined_line.exact_motion(); inclined_line.exact_state([0.0, 0.1], q, qd)
inclined_line.mechanism()
kepler.orbit_radius(1.0); kepler.force_constant(); kepler.orbital_energy(); kepler.perihelion()
q, qd = kepler.initial_state(); kepler.exact_force(q); kepler.exact_state([0.0, 0.5]); kepler.mechanism()
ladder.parameter_values(); ladder.leave_angle(1.2); ladder.holds_at_rest(1.2)
q, qd = ladder.initial_state(); ladder.release_state(); ladder.top_height(q); ladder.wall_distance(q)
ladder.contact_forces(1.2, 0.0); ladder.mechanism()
painleve_rod.parameter_values(); painleve_rod.initial_state(0.7, 1.0); painleve_rod.determinant(0.7, -1)
painleve_rod.critical_mu(0.7); painleve_rod.joint_solve(0.7, 1.0); painleve_rod.shortcut_motion(0.7, 1.0)
q, qd = rolling_disk.initial_state(); rolling_disk.exact_state([0.0, 0.5]); rolling_disk.mechanism()
q, qd = singular_mass.initial_state(); singular_mass.state_from_angle(0.3, 0.1); singular_mass.angle(q)
singular_mass.minimal_acceleration(0.3, 0.1); singular_mass.minimal_rate(); singular_mass.minimal_energy(0.3, 0.1)
singular_mass.mechanism()
print("sympy" in sys.modules)
BUILD
print("sympy" in sys.modules)
"""


@pytest.mark.parametrize("build", ["carriage_pendulum.model()", "ladder.model()", "chain.n_link_chain(2)",
                                   "friction_cart_pendulum.FLOOR"])
def test_numeric_helpers_of_every_example_run_without_sympy_and_a_model_imports_it(build):
    code = NUMERIC_CALLS.replace("BUILD", build)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["False", "True"]  # none before the build, so the check can fail
