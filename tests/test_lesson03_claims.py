"""Claims of lesson 03's text that no cell prints, computed here (the lecturer's second review, 2026-11-27).

* Sec. 1: a spinning disk sliding on a flat floor keeps ``N = |F^L|`` exact (its normal passes through
  the centre, ``A M^-1 C = 0``), while Painlevé's rod, whose normal misses its centre, does not
  (Udwadia, Kalaba & Fan 2005, Eqs. 10-11; the reaction ``lambda = lambda_L - (A M^-1 A^T)^-1 A M^-1 C``).
* Sec. 2: the naive Euler chatter is a sawtooth, negative most of the time (hence the creep downhill),
  with the two accelerations the text quotes.
* Sec. 4, checks: at the trammel's state the package solves the saddle-point system (one LU), not the
  augmented form, so that check repeats the multipliers' route; the augmented form gives the same motion.
"""

from __future__ import annotations

import numpy as np
import pytest

import udk_notebooks as udk
from udk_notebooks import core
from udk_notebooks.examples import singular_mass

G = 9.81


def test_a_spinning_disk_on_a_floor_keeps_n_equal_to_the_ideal_force():
    m, inertia, radius, mu = 2.0, 0.25, 0.5, 0.4  # kg, kg m^2, m, 1
    M = np.diag([m, m, inertia])
    Q = np.array([0.0, -m * G, 0.0])
    A = np.array([[0.0, 1.0, 0.0]])  # y = 0: the floor
    slip = np.array([1.0, 0.0, radius])  # the contact point's velocity along x per unit (x', phi')

    def friction(ideal):  # sliding towards +x: against the slip, of size mu |F^L|
        return -mu * np.linalg.norm(ideal) * slip

    motion = udk.udwadia_kalaba(M, Q, A, [0.0], C=friction)
    assert A @ np.linalg.solve(M, slip) == pytest.approx([0.0], abs=1e-15)  # A M^-1 C = 0
    assert motion.ideal == pytest.approx([0.0, m * G, 0.0], rel=1e-14)  # N = m g, unchanged by friction
    # friction has a moment: the disk spins up while it decelerates
    assert motion.qdd == pytest.approx([-mu * G, 0.0, -mu * m * G * radius / inertia], rel=1e-13)


def test_the_rods_contact_normal_misses_its_centre_so_friction_changes_the_reaction():
    m, half, theta = 1.0, 0.5, np.radians(40.0)  # the rod's end on the floor at angle theta
    M = np.diag([m, m, m * (2 * half) ** 2 / 12])
    A = np.array([[0.0, 1.0, -half * np.cos(theta)]])  # the end's height (centre at (x, y), end below)
    slip = np.array([1.0, 0.0, half * np.sin(theta)])  # the end's horizontal velocity
    assert abs((A @ np.linalg.solve(M, slip))[0]) > 0.1  # A M^-1 C != 0 for every mu != 0


def _naive_euler(mu=0.7, alpha=np.pi / 6, speed=5.0, step=0.01, t_end=3.0):
    count = int(round(t_end / step))
    v = np.empty(count + 1)
    v[0] = speed
    for k in range(count):
        v[k + 1] = v[k] - step * G * (np.sin(alpha) + mu * np.cos(alpha) * np.sign(v[k]))
    return v


def test_the_naive_euler_chatter_is_a_sawtooth_negative_most_of_the_time():
    mu, alpha = 0.7, np.pi / 6
    up = G * (mu * np.cos(alpha) - np.sin(alpha))  # net uphill acceleration while v < 0
    down = G * (np.sin(alpha) + mu * np.cos(alpha))  # net downhill deceleration while v > 0
    assert round(up, 1) == 1.0 and round(down, 1) == 10.9  # the numbers the text quotes
    v = _naive_euler(mu, alpha)
    settled = v[np.argmax(v <= 0) + 5:]  # after the stop
    assert np.mean(settled < 0) > 0.85  # negative most of the time: the block creeps downhill
    positive = np.flatnonzero(settled > 0)
    gaps = np.diff(positive)
    assert 9 <= np.median(gaps) <= 12  # some ten steps back to zero, one step thrown down again


def test_the_trammel_is_solved_by_the_saddle_point_route_and_the_augmented_form_agrees(monkeypatch):
    compiled = singular_mass.model().compile()
    q0, qd0 = singular_mass.initial_state(theta_dot0=0.7)
    M, Q, A, b, _ = compiled.evaluate(0.0, q0, qd0, compiled.parameters())
    answers = []
    bordered = core._solve_bordered

    def spy(*args, **kwargs):
        answers.append(bordered(*args, **kwargs))
        return answers[-1]

    monkeypatch.setattr(core, "_solve_bordered", spy)
    direct = udk.udwadia_kalaba(M, Q, A, b)
    assert answers and answers[0] is not None  # the saddle-point system answered; no fallback
    monkeypatch.setattr(core, "_solve_bordered", lambda *args, **kwargs: None)  # force the augmented form
    augmented = udk.udwadia_kalaba(M, Q, A, b)
    assert augmented.qdd == pytest.approx(direct.qdd, abs=1e-12)
    assert augmented.ideal == pytest.approx(direct.ideal, abs=1e-12)
