"""Cost of the example models: derivation, compilation, one ``motion`` call, a 10 s simulation.

Run: ``.venv/bin/python benchmarks/models.py [--quick]``

Three tables:

1. every example of ``udk_notebooks.examples``: derive + compile time, the
   per-call cost of ``CompiledModel.motion`` at the default initial state, and
   the wall time of a 10 s simulation (DOP853, rtol 1e-9, atol 1e-12);
2. sympy's ``LagrangesMethod`` doing the same work for the double pendulum in
   Cartesian coordinates (the two-link chain) and the rolling disk: equations
   formed, ``lambdify(cse=True)`` of the augmented mass matrix and forcing,
   ``numpy.linalg.solve`` per call, and a 10 s DOP853 run;
3. the N-link chain for N = 2..64: derivation, compilation, per-call cost.

BLAS is pinned to one thread (see ``_timing.py``).
"""

from _timing import per_call  # noqa: I001  (sets the BLAS thread count first)

import argparse
import time

import numpy as np
import sympy as sm
from scipy.integrate import solve_ivp
from sympy.physics.mechanics import LagrangesMethod

import udk_notebooks.examples as catalogue
from udk_notebooks import simulate
from udk_notebooks._threads import single_blas_thread
from udk_notebooks.examples import chain, rolling_disk

SIM = dict(method="DOP853", rtol=1e-9, atol=1e-12)


def wall(func) -> tuple[float, object]:
    start = time.perf_counter()
    out = func()
    return time.perf_counter() - start, out


def example_table(span: float) -> None:
    print(f"\n1. examples: derive + compile, motion() per call, {span:g} s simulation ({SIM['method']})")
    print(f"{'example':<20} {'n':>3} {'m':>3} {'derive s':>9} {'compile s':>10} {'motion us':>10} {'simulate s':>11}")
    names = [name for name in catalogue.__all__ if name != "Parameter"]
    for name in names:
        module = getattr(catalogue, name)
        t_derive, model = wall(module.model)
        t_compile, compiled = wall(model.compile)
        q0, qd0 = module.initial_state()
        cost = per_call(lambda: compiled.motion(0.0, q0, qd0))
        t_sim, _ = wall(lambda: simulate(compiled, (0.0, span), q0, qd0, **SIM))
        print(f"{name:<20} {model.n:>3} {model.A.shape[0]:>3} {t_derive:>9.3f} {t_compile:>10.3f} {cost:>10.1f} {t_sim:>11.3f}")


def lagranges_method(lagrangian, coordinates, *, hol=None, nonhol=None, parameters):
    """sympy's route: LagrangesMethod, then lambdify the augmented system once."""
    method = LagrangesMethod(lagrangian, coordinates, hol_coneqs=hol, nonhol_coneqs=nonhol)
    method.form_lagranges_equations()
    t = sm.Symbol("t")
    qs = sm.symbols(f"q0:{len(coordinates)}")
    us = sm.symbols(f"u0:{len(coordinates)}")
    swap = {**{c.diff(): u for c, u in zip(coordinates, us)}, **dict(zip(coordinates, qs))}
    # The documented route: the full first-order system [q', u', lambda] (kinematic rows are identity).
    mass = method.mass_matrix_full.xreplace(swap)
    forcing = method.forcing_full.xreplace(swap)
    args = [t, list(qs), list(us), list(parameters)]
    return sm.lambdify(args, mass, cse=True), sm.lambdify(args, list(forcing), cse=True)


def sympy_peers():
    """The double pendulum (Cartesian) and the rolling disk, ours and sympy's LagrangesMethod route.

    Returns a list of ``(label, compiled, t_ours, lm_accel, lm_rhs, t_lm, q0, qd0)``, where
    ``lm_accel(t, q, qd)`` solves sympy's full form for the accelerations and ``t_*`` are the
    derive + compile times.
    """
    peers = []
    # Double pendulum of point masses in Cartesian coordinates = the two-link chain.
    t_ours, pend = wall(lambda: chain.n_link_chain(2).compile())
    x1, y1, x2, y2 = pend.model.q
    p_syms = pend.model.parameter_symbols
    m, l, g = ({s.name: s for s in p_syms}[name] for name in ("m", "l", "g"))
    kinetic = m * sum(v.diff() ** 2 for v in (x1, y1, x2, y2)) / 2
    lagrangian = kinetic - m * g * (y1 + y2)
    hol = [x1**2 + y1**2 - l**2, (x2 - x1) ** 2 + (y2 - y1) ** 2 - l**2]
    q0, qd0 = chain.chain_initial_state(2)
    peers.append(_peer("double pendulum (Cartesian)", pend, t_ours, lagrangian, [x1, y1, x2, y2], dict(hol=hol), q0, qd0))

    t_ours, disk = wall(lambda: rolling_disk.model().compile())
    x, y, phi, theta = disk.model.q
    symbols = {s.name: s for s in disk.model.parameter_symbols}
    mass, radius, I1, I2 = (symbols[k] for k in ("m", "r", "I1", "I2"))
    lagrangian = mass * (x.diff() ** 2 + y.diff() ** 2) / 2 + I1 * phi.diff() ** 2 / 2 + I2 * theta.diff() ** 2 / 2
    nonhol = [x.diff() - radius * phi.diff() * sm.sin(theta), y.diff() + radius * phi.diff() * sm.cos(theta)]
    q0, qd0 = rolling_disk.initial_state()
    peers.append(_peer("rolling disk", disk, t_ours, lagrangian, [x, y, phi, theta], dict(nonhol=nonhol), q0, qd0))
    return peers


def _peer(label, ours, t_ours, lagrangian, coordinates, constraints, q0, qd0):
    n = len(coordinates)
    values = ours.defaults
    t_lm, (mass_f, forcing_f) = wall(
        lambda: lagranges_method(lagrangian, coordinates, parameters=ours.model.parameter_symbols, **constraints)
    )

    def lm_accel(t, q, qd):
        return np.linalg.solve(mass_f(t, q, qd, values), forcing_f(t, q, qd, values))[n : 2 * n]

    def lm_rhs(t, y):
        return np.concatenate([y[n:], lm_accel(t, y[:n], y[n:])])

    assert np.allclose(lm_accel(0.0, q0, qd0), ours.motion(0.0, q0, qd0).qdd, atol=1e-9), "routes disagree"
    return label, ours, t_ours, lm_accel, lm_rhs, t_lm, q0, qd0


def lagrange_table(span: float) -> None:
    print("\n2. the same work with sympy's LagrangesMethod (equations + lambdify(cse) + numpy.linalg.solve)")
    print(f"{'system':<28} {'route':<16} {'derive+compile s':>17} {'accel us':>9} {'simulate s':>11}")
    for label, ours, t_ours, lm_accel, lm_rhs, t_lm, q0, qd0 in sympy_peers():
        p = ours.defaults
        uk_cost = per_call(lambda: ours.motion(0.0, q0, qd0))
        uk_kernel = per_call(lambda: ours.solve_modes(0.0, q0, qd0, p))
        lm_cost = per_call(lambda: lm_accel(0.0, q0, qd0))
        t_uk_sim, _ = wall(lambda: simulate(ours, (0.0, span), q0, qd0, **SIM))
        with single_blas_thread():
            t_lm_sim, _ = wall(lambda: solve_ivp(lm_rhs, (0.0, span), np.concatenate([q0, qd0]), **SIM))
        print(f"{label:<28} {'UK motion()':<16} {t_ours:>17.3f} {uk_cost:>9.1f} {t_uk_sim:>11.3f}")
        print(f"{'':<28} {'UK solve_modes':<16} {'':>17} {uk_kernel:>9.1f} {'':>11}")
        print(f"{'':<28} {'LagrangesMethod':<16} {t_lm:>17.3f} {lm_cost:>9.1f} {t_lm_sim:>11.3f}")


def chain_table(sizes) -> None:
    print("\n3. N-link chain in Cartesian coordinates (2N coordinates, N constraints)")
    print(f"{'N':>4} {'derive s':>9} {'compile s':>10} {'motion us':>10}")
    for N in sizes:
        t_derive, model = wall(lambda: chain.n_link_chain(N))
        t_compile, compiled = wall(model.compile)
        q0, qd0 = chain.chain_initial_state(N)
        cost = per_call(lambda: compiled.motion(0.0, q0, qd0), min_time=0.1, repeat=3)
        print(f"{N:>4} {t_derive:>9.2f} {t_compile:>10.2f} {cost:>10.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1 s simulations and chains up to N = 16")
    args = parser.parse_args()
    span = 1.0 if args.quick else 10.0
    example_table(span)
    lagrange_table(span)
    chain_table((2, 4, 8, 16) if args.quick else (2, 4, 8, 16, 32, 64))


if __name__ == "__main__":
    main()
