"""Numbers quoted in a lesson's text, computed again with the package and compared with the text.

Lesson 04's "Explore your model" (after Exercise 4) quotes what the bead explorer shows: the default
step, the drift of Euler and RK4, what Baumgarte gains of 10 1/s do to the position and velocity drift,
the refusal of ``gain_alpha = 0`` with Euler, and the wire's push ``F^L_y`` at the bottom of the
parabola against the weight (Udwadia, Kalaba & Fan, "Is analytical dynamics a theoretical or an
experimental science?", 2005, Eqs. 9-10: ``F^N = M a``, ``F^L`` the ideal force). The test runs the
lesson's own Setup and explorer cells, so a change of the package or of the cell that moves a quoted
number fails here, and so does a text that quotes a number the run does not give.
"""

from __future__ import annotations

import math
import re

import matplotlib

matplotlib.use("Agg")

import nbformat
import numpy as np
import pytest
from lesson_paths import find_lessons_dir

LESSON_04 = "04_lagrange_and_constraints.ipynb"
SETUP, EXPLORE_TEXT, EXPLORE_CODE = "ef30c166", "7c329a78", "99f83e24"


def _cells(name: str) -> dict[str, str]:
    path = find_lessons_dir() / name
    if not path.exists():
        pytest.skip(f"{name} is not in the lessons folder")
    return {cell.get("id"): cell.source for cell in nbformat.read(path, as_version=4).cells}


@pytest.fixture(scope="module")
def bead():
    """The lesson's bead explorer (Setup and the explorer cell run as written), and the cell's text."""
    cells = _cells(LESSON_04)
    namespace: dict = {}
    setup = "\n".join(line for line in cells[SETUP].splitlines() if not line.startswith("%"))
    exec(compile(setup, "lesson 04 Setup", "exec"), namespace)
    exec(compile(cells[EXPLORE_CODE], "lesson 04 Explore your model", "exec"), namespace)
    text = " ".join(cells[EXPLORE_TEXT].split())  # one line: a quote may wrap in the cell
    return namespace["bead_explorer"], text


def _drift(explorer) -> tuple[float, float]:
    traj = explorer.trajectory
    return float(np.abs(traj.position_residual).max()), float(np.abs(traj.velocity_residual).max())


def test_euler_rk4_and_baumgarte_drifts_are_those_quoted(bead):
    explorer, text = bead
    explorer.set(method="rk4", stabilization="none", gain_alpha=0.0, gain_beta=0.0)
    step = explorer.values["step"]
    assert f"at the default step, {step:g} s," in text and math.isclose(step, 4.0 / 250)
    rk4_position, _ = _drift(explorer)
    assert explorer.error == "" and explorer.warning == ""
    assert "`rk4` keeps it within 2e-6 m" in text and 2e-7 < rk4_position < 2e-6

    explorer.set(method="euler")
    euler_position, euler_velocity = _drift(explorer)
    assert f"the bead is {euler_position:.2f} m off the wire within the 4 s" in text
    assert explorer.warning.startswith("Not to be trusted") and "marked red" in text

    explorer.set(stabilization="Baumgarte", gain_alpha=10.0, gain_beta=10.0)
    assert explorer.error == ""
    position, velocity = _drift(explorer)
    limit = explorer.drift_limit
    assert euler_position / position > 10 and "falls more than tenfold" in text
    assert f"to {position:.2g} m, while the velocity drift rises from {euler_velocity:.1g} to {velocity:.1g} m/s" in text
    assert velocity > euler_velocity
    assert f"above the explorer's limit of {limit:.0e}".replace("e-03", "e-3") in text and min(position, velocity) > limit
    assert f"position residual {position:.3g}" in explorer.warning and f"velocity residual {velocity:.3g}" in explorer.warning


def test_the_start_is_on_the_wire_as_the_text_says(bead):
    explorer, text = bead
    params = explorer.parameter_values
    assert "starts at rest at $x = 0.8$ m, $y = 0.32$ m, on the wire for $\\kappa = 0.5$ 1/m" in text
    assert params["kappa"] == 0.5 and explorer.start(params)[2] == ""  # not moved: y = kappa x^2 already
    moved = explorer.start({**params, "kappa": 0.6})[2]
    assert moved.startswith("start projected onto the constraints")


def test_euler_refuses_baumgarte_without_damping(bead):
    explorer, text = bead
    explorer.set(method="euler", stabilization="Baumgarte", gain_alpha=10.0, gain_beta=10.0)
    explorer.set(gain_alpha=0.0)
    assert "With `gain_alpha` left at 0 the explorer refuses the gain" in text
    assert explorer.error.startswith("UnstableGainError") and "spectral radius 1.0" in explorer.error


def test_wire_push_at_the_bottom_is_the_quoted_one(bead):
    explorer, text = bead
    params = explorer.parameter_values
    m, g, kappa = params["m"], params["g"], params["kappa"]
    height = 0.32
    speed_squared = 2 * g * height  # energy: released from rest at y = kappa x^2 = 0.32 m
    motion = explorer.compiled.motion(0.0, [0.0, 0.0], [-math.sqrt(speed_squared), 0.0], **params)
    ideal_y, weight_y = float(motion.ideal[1]), float(motion.impressed[1])
    assert ideal_y == pytest.approx(m * g + 2 * kappa * m * speed_squared, rel=1e-12)  # the text's closed form
    quoted = (f"$\\dot x^2 = 2 g \\cdot {height} = {speed_squared:.2f}$ m$^2$/s$^2$ on a curve of curvature "
              f"$2\\kappa = {2 * kappa:g}$ 1/m, so $F^L_y = m g + 2\\kappa m \\dot x^2 = {m * g:.2f} + "
              f"{2 * kappa * m * speed_squared:.2f} = {ideal_y:.2f}$ N against $F^N_y = {weight_y:.2f}$ N")
    assert quoted in text, quoted
    # the explorer's own run (rk4) draws the same push where it passes the bottom
    explorer.set(method="rk4", stabilization="none")
    traj = explorer.trajectory
    j = int(np.argmin(np.abs(traj.q[:, 0])))
    assert abs(traj.q[j, 0]) < 0.01 and re.search(rf"= {traj.ideal[j, 1]:.2f}\$ N", text)
