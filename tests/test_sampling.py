"""The output of ``simulate``, computed for all samples at once, against the route of the integrator.

``simulation._sample`` evaluates residuals, energy, powers and the
Udwadia-Kalaba motion for every sample in a few stacked calls. The reference
here is the one-sample route the integrator itself uses:
``CompiledModel.residuals``, ``solve_modes`` (with the stabilization's
correction of ``b`` and the sample's friction modes), ``energy`` and
``powers_data``, called sample by sample. The two must agree to 1e-12,
relative to the size of what each quantity is made of at that sample (the
forces for the force terms, the accelerations they cause for ``qdd``, force
times speed for the powers, the squared state for the residuals, the range of
the energy over the run).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import udk_notebooks.simulation as simulation
from udk_notebooks import examples, simulate
from udk_notebooks.examples import incline_friction, rolling_disk, singular_mass
from udk_notebooks.compiled import OPEN
from udk_notebooks.stabilization import Baumgarte, GainMatrix

RTOL = 1e-12
CATALOGUE = [name for name in examples.__all__ if name != "Parameter"]
FIELDS = ("qdd", "impressed", "ideal", "nonideal")


def per_sample(cm, traj, stabilization):
    """Every output quantity of ``traj`` recomputed sample by sample through the one-sample route."""
    p = cm.parameters(traj.parameters)
    N, n = traj.t.size, cm.n
    ref = {key: np.empty((N, n)) for key in FIELDS}
    ref.update(phi=np.empty((N, cm.n_holonomic)), vel=np.empty((N, cm.m)), energy=np.empty(N),
               force_nc=np.empty((N, n)), explicit=np.empty(N), mass=np.empty(N))
    for j in range(N):
        t, q, qd = traj.t[j], traj.q[j], traj.qd[j]
        ref["phi"][j], ref["vel"][j] = residuals = cm.residuals(t, q, qd, p)
        correction = None if stabilization is None else stabilization.correction(*residuals)
        motion = cm.solve_modes(t, q, qd, p, tuple(traj.modes[j]), correction)[0]
        for key in FIELDS:
            ref[key][j] = getattr(motion, key)
        ref["energy"][j] = cm.energy(t, q, qd, p)
        force, explicit = cm.powers_data(t, q, qd, p)
        ref["force_nc"][j], ref["explicit"][j] = np.asarray(force, dtype=float), explicit
        ref["mass"][j] = np.abs(cm.evaluate(t, q, qd, p)[0]).max()
    first = cm.n_friction - cm.n_contacts
    for j, row in enumerate(cm.model.contact_rows):  # an open contact's gap is a distance, not drift: 0
        opened = traj.modes[:, first + j] == OPEN
        ref["phi"][opened, row] = ref["vel"][opened, row] = 0.0
    return ref


def rows_close(actual, expected, scale, what):
    """Row by row: ``|actual - expected| <= RTOL * scale`` (Euclidean norm over each sample's entries)."""
    actual, expected = np.atleast_2d(actual.T).T, np.atleast_2d(expected.T).T
    error = np.linalg.norm(actual - expected, axis=1)
    worst = int(np.argmax(error / scale)) if error.size else 0
    assert np.all(error <= RTOL * scale), (
        f"{what} differs at sample {worst}: {error[worst]:.3e} against the scale {scale[worst]:.3e}")


def assert_matches_per_sample(cm, traj, stabilization=None):
    ref = per_sample(cm, traj, stabilization)
    norm = lambda x: np.linalg.norm(x, axis=1)  # noqa: E731
    forces = np.maximum.reduce([norm(ref[key]) for key in ("impressed", "ideal", "nonideal")])
    forces = np.maximum(forces, np.finfo(float).tiny)
    for key in ("impressed", "ideal", "nonideal"):
        rows_close(getattr(traj, key), ref[key], forces, key)
    rows_close(traj.qdd, ref["qdd"], np.maximum(norm(ref["qdd"]), forces / ref["mass"]), "qdd")
    speed = norm(traj.qd)
    state = np.maximum(1.0, norm(np.concatenate([traj.q, traj.qd], axis=1))) ** 2
    rows_close(traj.position_residual, ref["phi"], state, "position_residual")
    rows_close(traj.velocity_residual, ref["vel"], state, "velocity_residual")
    rows_close(traj.energy, ref["energy"], np.full(traj.t.size, max(np.abs(ref["energy"]).max(), 1e-300)), "energy")
    power = {
        "nonconservative": (np.einsum("ij,ij->i", ref["force_nc"], traj.qd), norm(ref["force_nc"]) * speed),
        "ideal": (np.einsum("ij,ij->i", ref["ideal"], traj.qd), forces * speed),
        "nonideal": (np.einsum("ij,ij->i", ref["nonideal"], traj.qd), forces * speed),
        "explicit_time": (ref["explicit"], np.maximum(np.abs(ref["explicit"]), forces * speed)),
    }
    for key, (expected, scale) in power.items():
        rows_close(traj.power[key], expected, np.maximum(scale, np.finfo(float).tiny), f"power[{key!r}]")


STARTS = {"painleve_rod": dict(theta=math.radians(40.0), x_rate=1.0)}  # the state: the end slides right


def _catalogue(name):
    module = getattr(examples, name)
    return module.model().compile(), module.initial_state(**STARTS.get(name, {}))


@pytest.mark.parametrize("stabilization", [None, Baumgarte(2.0, 3.0, 1.5)], ids=["plain", "baumgarte"])
@pytest.mark.parametrize("name", CATALOGUE)
def test_every_example_equals_the_per_sample_route(name, stabilization):
    cm, (q0, qd0) = _catalogue(name)
    traj = simulate(cm, (0.0, 2.0), q0, qd0, method="RK45", t_eval=np.linspace(0.0, 2.0, 41),
                    stabilization=stabilization)
    assert traj.status == "ok" and traj.t.size >= 41  # friction switches add their instants
    assert_matches_per_sample(cm, traj, stabilization)


def test_fixed_step_run_with_a_gain_matrix_equals_the_per_sample_route():
    cm, (q0, qd0) = _catalogue("rolling_disk")
    stabilization = GainMatrix(np.array([[-3.0, 0.5], [0.0, -2.0]]))
    traj = simulate(cm, (0.0, 1.0), q0, qd0, method="rk4", step=0.01, stabilization=stabilization)
    assert_matches_per_sample(cm, traj, stabilization)


def test_incline_with_stick_and_slip_samples():
    # Sent up a shallow rough slope, the block slides up, stops, and static friction holds it.
    params = dict(alpha=0.3, mu=0.4, mu_s=0.5)
    cm = incline_friction.model().compile()
    q0, qd0 = incline_friction.initial_state(2.0, **params)
    for method in ("RK45", "rk4"):
        traj = simulate(cm, (0.0, 1.5), q0, qd0, method=method, params=params, step=0.01,
                        t_eval=np.linspace(0.0, 1.5, 31) if method == "RK45" else None)
        assert set(traj.modes[:, 0]) == {0, 1}, "the run must hold sliding and sticking samples"
        assert_matches_per_sample(cm, traj)
        stuck = traj.modes[:, 0] == 0
        np.testing.assert_allclose(traj.qdd[stuck], 0.0, atol=1e-12)  # held at rest by static friction


def test_long_runs_are_sampled_in_blocks(monkeypatch):
    monkeypatch.setattr(simulation, "SAMPLE_BLOCK_ENTRIES", 0)  # blocks of 16 samples
    params = dict(alpha=0.3, mu=0.4, mu_s=0.5)
    cm = incline_friction.model().compile()
    q0, qd0 = incline_friction.initial_state(2.0, **params)
    traj = simulate(cm, (0.0, 1.5), q0, qd0, method="RK45", params=params, t_eval=np.linspace(0.0, 1.5, 61))
    assert set(traj.modes[:, 0]) == {0, 1} and traj.t.size > 3 * 16
    assert_matches_per_sample(cm, traj)
    cm, (q0, qd0) = _catalogue("double_pendulum")  # a mass matrix that changes with the state
    traj = simulate(cm, (0.0, 1.0), q0, qd0, method="rk4", step=0.02)
    assert_matches_per_sample(cm, traj)


def test_singular_mass_goes_sample_by_sample(monkeypatch):
    cm, (q0, qd0) = _catalogue("singular_mass")
    assert cm._constant_mass(cm.defaults)[1] is None, "the example's mass matrix must be singular"
    calls = []
    solve_modes = type(cm).solve_modes

    def counting(self, *args, **kwargs):
        calls.append(args[0])
        return solve_modes(self, *args, **kwargs)

    traj = simulate(cm, (0.0, 1.0), q0, qd0, method="RK45", t_eval=np.linspace(0.0, 1.0, 11))
    monkeypatch.setattr(type(cm), "solve_modes", counting)
    p = cm.parameters(traj.parameters)
    states = np.concatenate([traj.q, traj.qd], axis=1)
    again = simulation._sample(cm, p, traj.t, states, [()] * traj.t.size, None, "RK45", None, 1e100)
    assert len(calls) == traj.t.size  # the augmented route of core.solve, one sample at a time
    monkeypatch.undo()
    assert_matches_per_sample(cm, again)
    assert np.array_equal(again.qdd, traj.qdd)


def test_members_the_batch_cannot_vouch_for_are_solved_one_by_one(monkeypatch):
    # Every other member of each stacked solve is declared unreliable and spoiled with NaN:
    # the output must come out the same, through solve_modes for those samples.
    solve_stack = simulation.solve_stack

    def unreliable(*args, **kwargs):
        sol = solve_stack(*args, **kwargs)  # members along the last axis
        sol.ok[::2] = False
        sol.qdd[:, ::2] = np.nan
        sol.ideal[:, ::2] = np.nan
        return sol

    monkeypatch.setattr(simulation, "solve_stack", unreliable)
    for name in ("rolling_disk", "inclined_line", "double_pendulum"):
        cm, (q0, qd0) = _catalogue(name)
        traj = simulate(cm, (0.0, 1.0), q0, qd0, method="RK45", t_eval=np.linspace(0.0, 1.0, 21))
        assert np.isfinite(traj.qdd).all() and np.isfinite(traj.ideal).all()
        assert_matches_per_sample(cm, traj)


def test_a_sample_with_non_finite_matrices_fails_as_the_one_sample_route_does():
    # At the focus (r = 0) the Kepler constraint rows divide by zero: the math-module route raises a
    # ValueError that names the state (its cause a ZeroDivisionError, issue 22); the stacked evaluation must
    # send that sample there rather than fill in inf or NaN.
    cm, (q0, qd0) = _catalogue("kepler")
    p = cm.defaults
    states = np.array([np.concatenate([q0, qd0]), np.concatenate([np.zeros(2), qd0])])
    with pytest.raises(ValueError, match="cannot be evaluated at .*ZeroDivisionError"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the residuals at r = 0 warn, as they do one by one
        cm.solve_modes(0.0, np.zeros(2), qd0, p, ())
    with pytest.raises(ValueError, match="cannot be evaluated at .*ZeroDivisionError"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        simulation._sample(cm, p, np.zeros(2), states, [(), ()], None, "RK45", None, 1e9)


def test_stacked_corrections_equal_one_sample_at_a_time():
    rng = np.random.default_rng(5)
    phi, vel = rng.normal(size=(7, 2)), rng.normal(size=(7, 3))
    for stabilization in (Baumgarte(1.5, 2.0, 0.7), GainMatrix(rng.normal(size=(3, 3)))):
        stacked = stabilization.correction(phi, vel)
        assert stacked.shape == (7, 3)
        for j in range(7):
            np.testing.assert_allclose(stacked[j], stabilization.correction(phi[j], vel[j]), rtol=1e-15, atol=1e-15)
    with pytest.raises(ValueError, match="same number of samples"):
        Baumgarte(1.0, 1.0).correction(phi[:3], vel)
    with pytest.raises(ValueError, match="`velocity`"):
        GainMatrix(np.eye(2)).correction(phi, vel)


SLOW = settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SLOW
@given(mass=st.floats(0.2, 4.0), radius=st.floats(0.2, 2.5), axle=st.floats(0.05, 3.0), diameter=st.floats(0.05, 3.0),
       phi_rate=st.floats(-3.0, 3.0), theta_rate=st.floats(-2.0, 2.0), gamma=st.floats(0.0, 5.0))
def test_rolling_disk_random_parameters(mass, radius, axle, diameter, phi_rate, theta_rate, gamma):
    params = dict(m=mass, r=radius, I1=axle, I2=diameter)
    cm = rolling_disk.model().compile()
    q0, qd0 = rolling_disk.initial_state(phi_rate=phi_rate, theta_rate=theta_rate, r=radius)
    stabilization = Baumgarte(gamma=gamma) if gamma > 2.5 else None
    traj = simulate(cm, (0.0, 1.0), q0, qd0, method="DOP853", t_eval=np.linspace(0.0, 1.0, 11), params=params,
                    stabilization=stabilization)
    assert_matches_per_sample(cm, traj, stabilization)


@SLOW
@given(slope=st.floats(0.05, 1.2), mu=st.floats(0.0, 1.2), extra=st.floats(0.0, 0.5), speed=st.floats(-4.0, 4.0))
def test_incline_random_parameters(slope, mu, extra, speed):
    params = dict(alpha=slope, mu=mu, mu_s=mu + extra)
    cm = incline_friction.model().compile()
    q0, qd0 = incline_friction.initial_state(speed, **params)
    traj = simulate(cm, (0.0, 1.0), q0, qd0, method="RK45", t_eval=np.linspace(0.0, 1.0, 11), params=params)
    assert_matches_per_sample(cm, traj)


@SLOW
@given(length=st.floats(0.3, 2.0), ratio=st.floats(0.2, 5.0), theta=st.floats(-1.2, 1.2), rate=st.floats(-2.0, 2.0))
def test_singular_mass_random_parameters(length, ratio, theta, rate):
    params = dict(l=length, mA=0.0, mB=ratio)
    cm = singular_mass.model().compile()
    q0, qd0 = singular_mass.initial_state(-np.pi / 2 + theta, rate, **params)
    traj = simulate(cm, (0.0, 0.5), q0, qd0, method="RK45", t_eval=np.linspace(0.0, 0.5, 6), params=params)
    assert_matches_per_sample(cm, traj)
