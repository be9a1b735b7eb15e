"""What a ``simulate`` run costs against ``solve_ivp`` on sympy's right-hand side, and where the time goes.

Run from the repository root::

    .venv/bin/python benchmarks/simulate_cost.py [--repeat 21] [--span 10] [--samples 1001] [--clock cpu|wall]

Target (issue 12): a 10 s run of the rolling disk with 1001 samples costs at
most 1.2 times ``scipy.integrate.solve_ivp`` on sympy's right-hand side at
equal accuracy, with the full output (forces, residuals, energy, powers).

For the rolling disk (Beshaw 2014, Sec. 4) and the double pendulum in
Cartesian coordinates (``examples.chain.n_link_chain(2)``), with RK45 and
DOP853 at ``rtol = atol = 1e-8`` (the issue's tolerance) and 1001 output
times through ``t_eval``:

* **ours**: ``udk_notebooks.simulate`` with its full output, split into
  integration and sampling (the time inside ``simulation._sample``, which
  computes forces, residuals, energy and powers for all samples at once);
* **sympy**: ``solve_ivp`` on the right-hand side that ``models.lagranges_method``
  builds (``LagrangesMethod``, ``lambdify(cse=True)``, ``numpy.linalg.solve``),
  returning the states only;
* **1-by-1**: the same output computed sample by sample through the one-sample
  route (``solve_modes``, ``residuals``, ``energy``, ``powers_data``), which is
  what sampling cost before;
* the medians of interleaved runs (ours, sympy, ours, ...) and their ratio;
* **equal accuracy**: both integrate the same equations of motion (their
  accelerations agree to rounding, asserted) with the same method, tolerances
  and output times, so the step-size controller sees the same errors; the
  table shows both right-hand-side counts and both errors (rolling disk: the
  exact solution, ``rolling_disk.exact_state``; double pendulum: a DOP853
  run of sympy's route at 1e-12);
* per call, the right-hand side of each route (``per_call``), since what is
  left once sampling is cheap is the integration, i.e. the evaluations.

BLAS is pinned to one thread (``_timing.py``). ``--clock cpu`` (the default)
times with this process's CPU time (``time.process_time``): with one BLAS
thread that is the time the work takes on a core, and unlike the wall clock it
leaves out the time other processes hold the core, which on a shared machine
(load above the core count) otherwise swamps differences of a few per cent.
``--clock wall`` uses ``time.perf_counter``.
"""

import _timing  # noqa: F401, I001  (sets the BLAS thread count first)

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # measure this checkout, not an installed copy

import numpy as np  # noqa: E402
import sympy as sm  # noqa: E402
from scipy.integrate import solve_ivp  # noqa: E402

import udk_notebooks.simulation as simulation  # noqa: E402
from models import lagranges_method  # noqa: E402
from udk_notebooks import simulate  # noqa: E402
from udk_notebooks._threads import single_blas_thread  # noqa: E402
from udk_notebooks.examples import chain, rolling_disk  # noqa: E402

TOL = 1e-8
CLOCKS = {"cpu": time.process_time, "wall": time.perf_counter}
clock = time.process_time


def per_call(func, repeat: int = 7, min_time: float = 0.05) -> float:
    """Median over ``repeat`` batches of the time per call of ``func``, in microseconds (on ``clock``)."""
    number, start = 0, clock()
    while clock() - start < min_time / 5:  # calibrate: a batch of about min_time / 5
        func()
        number += 1
    times = []
    for _ in range(repeat):
        start = clock()
        for _ in range(number):
            func()
        times.append((clock() - start) / number)
    return statistics.median(times) * 1e6


class _SamplingClock:
    """Wraps ``simulation._sample`` to add up the time spent in it."""

    def __init__(self):
        self.inner, self.seconds = simulation._sample, 0.0

    def __call__(self, *args, **kwargs):
        start = clock()
        try:
            return self.inner(*args, **kwargs)
        finally:
            self.seconds += clock() - start


def one_by_one(cm, traj) -> None:
    """The output of ``traj`` computed sample by sample (the route ``_sample`` took before issue 12)."""
    p = cm.parameters(traj.parameters)
    for t, q, qd, modes in zip(traj.t, traj.q, traj.qd, traj.modes):
        residuals = cm.residuals(t, q, qd, p)
        motion = cm.solve_modes(t, q, qd, p, tuple(modes))[0]
        cm.energy(t, q, qd, p)
        force, _ = cm.powers_data(t, q, qd, p)
        np.asarray(force, dtype=float) @ qd, motion.ideal @ qd, motion.nonideal @ qd, residuals


def sympy_route(lagrangian, coordinates, constraints, p_syms, values):
    """``f(t, y)`` of sympy's route (LagrangesMethod + lambdify(cse) + numpy.linalg.solve)."""
    n = len(coordinates)
    mass_f, forcing_f = lagranges_method(lagrangian, coordinates, parameters=p_syms, **constraints)

    def rhs(t, y):
        q, qd = y[:n], y[n:]
        return np.concatenate([qd, np.linalg.solve(mass_f(t, q, qd, values), forcing_f(t, q, qd, values))[n : 2 * n]])

    return rhs


def rolling_disk_system():
    disk = rolling_disk.model().compile()
    x, y, phi, theta = disk.model.q
    s = {sym.name: sym for sym in disk.model.parameter_symbols}
    lagrangian = (s["m"] * (x.diff() ** 2 + y.diff() ** 2) + s["I1"] * phi.diff() ** 2 + s["I2"] * theta.diff() ** 2) / 2
    nonhol = [x.diff() - s["r"] * phi.diff() * sm.sin(theta), y.diff() + s["r"] * phi.diff() * sm.cos(theta)]
    rhs = sympy_route(lagrangian, [x, y, phi, theta], dict(nonhol=nonhol), disk.model.parameter_symbols, disk.defaults)
    q0, qd0 = rolling_disk.initial_state()
    return "rolling disk", disk, rhs, q0, qd0, lambda t: np.concatenate(rolling_disk.exact_state(t, q0, qd0), axis=-1)


def double_pendulum_system():
    pend = chain.n_link_chain(2).compile()
    x1, y1, x2, y2 = pend.model.q
    s = {sym.name: sym for sym in pend.model.parameter_symbols}
    lagrangian = s["m"] * sum(v.diff() ** 2 for v in (x1, y1, x2, y2)) / 2 - s["m"] * s["g"] * (y1 + y2)
    hol = [x1**2 + y1**2 - s["l"] ** 2, (x2 - x1) ** 2 + (y2 - y1) ** 2 - s["l"] ** 2]
    rhs = sympy_route(lagrangian, [x1, y1, x2, y2], dict(hol=hol), pend.model.parameter_symbols, pend.defaults)
    q0, qd0 = chain.chain_initial_state(2)

    def reference(t):
        sol = solve_ivp(rhs, (t[0], t[-1]), np.concatenate([q0, qd0]), method="DOP853", t_eval=t, rtol=1e-12, atol=1e-12)
        return sol.y.T

    return "double pendulum (Cartesian)", pend, rhs, q0, qd0, reference


def measure(system, method, span, samples, repeat):
    label, cm, rhs, q0, qd0, reference = system
    y0, t_eval = np.concatenate([q0, qd0]), np.linspace(0.0, span, samples)
    p = cm.defaults
    assert np.allclose(rhs(0.0, y0)[cm.n :], cm.motion(0.0, q0, qd0).qdd, rtol=1e-10, atol=1e-10), "routes disagree"
    options = dict(method=method, t_eval=t_eval, rtol=TOL, atol=TOL)
    sample_clock = _SamplingClock()
    simulation._sample = sample_clock
    try:
        ours, theirs, sampling = [], [], []
        for _ in range(repeat):  # interleaved, so that a change of load hits both routes alike
            sample_clock.seconds = 0.0
            start = clock()
            traj = simulate(cm, (0.0, span), q0, qd0, **options)
            ours.append(clock() - start)
            sampling.append(sample_clock.seconds)
            with single_blas_thread():  # as simulate does inside
                start = clock()
                sol = solve_ivp(rhs, (0.0, span), y0, **options)
                theirs.append(clock() - start)
    finally:
        simulation._sample = sample_clock.inner
    counter = {"calls": 0}
    segment = simulation._Segment(cm, p, (), None)

    def counted(t, y):
        counter["calls"] += 1
        return segment.rhs(t, y)

    solve_ivp(counted, (0.0, span), y0, **options)  # the integrator's evaluations, as simulate makes them
    exact = reference(t_eval)
    error_ours = np.abs(np.concatenate([traj.q, traj.qd], axis=1) - exact).max()
    error_theirs = np.abs(sol.y.T - exact).max()
    t_ours, t_theirs, t_sample = (statistics.median(v) for v in (ours, theirs, sampling))
    t_alone = per_call(lambda: one_by_one(cm, traj), repeat=3, min_time=0.5) / 1e3
    rhs_ours = per_call(lambda: segment.rhs(0.0, y0))
    rhs_theirs = per_call(lambda: rhs(0.0, y0))
    print(f"{label:<28} {method:<7} {t_ours * 1e3:>8.2f} {(t_ours - t_sample) * 1e3:>8.2f} {t_sample * 1e3:>8.2f} "
          f"{t_alone:>8.2f} {t_theirs * 1e3:>8.2f} {t_ours / t_theirs:>6.2f} {(t_ours - t_sample) / t_theirs:>6.2f} "
          f"{counter['calls']:>6d} {sol.nfev:>6d} {error_ours:>9.1e} {error_theirs:>9.1e} "
          f"{rhs_ours:>7.1f} {rhs_theirs:>7.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=21, help="interleaved runs per route (median)")
    parser.add_argument("--span", type=float, default=10.0, help="seconds simulated")
    parser.add_argument("--samples", type=int, default=1001, help="output times (t_eval)")
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="cpu", help="process CPU time or wall clock")
    args = parser.parse_args()
    global clock
    clock = CLOCKS[args.clock]
    print(f"{args.span:g} s, {args.samples} samples, rtol = atol = {TOL:g}; median of {args.repeat} interleaved runs; "
          f"{args.clock} times in ms, right-hand side per call in us; load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"{'system':<28} {'method':<7} {'ours':>8} {'integr.':>8} {'sampling':>8} {'1-by-1':>8} {'sympy':>8} {'ratio':>6} "
          f"{'int/sy':>6} {'f ours':>6} {'f sympy':>6} {'err ours':>9} {'err sympy':>9} {'rhs us':>7} {'sy us':>7}")
    for build in (rolling_disk_system, double_pendulum_system):
        system = build()
        for method in ("RK45", "DOP853"):
            measure(system, method, args.span, args.samples, args.repeat)
    print("ratio = ours / sympy (target <= 1.2 for the rolling disk); int/sy = our integration alone / sympy; "
          "1-by-1 = the same output sample by sample (the former sampling); f = right-hand-side evaluations")


if __name__ == "__main__":
    main()
