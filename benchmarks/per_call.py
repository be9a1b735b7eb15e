"""Per-call cost of ``CompiledModel.motion`` and of the single-state right-hand side, against peers.

Run: ``.venv/bin/python benchmarks/per_call.py [--quick] [--sizes 2 4 8 16 32 64]``

Every ratio is ours / peer, the median of interleaved measurements in this
process (the machine may be shared: a ratio is steadier than a time).

1. Rolling disk and Cartesian double pendulum against sympy's
   ``LagrangesMethod`` + ``lambdify(cse=True)`` of the full form +
   ``numpy.linalg.solve`` (issue 12's target: ``motion`` at most 0.5 times).
   ``rhs`` is what the integrators call, ``[qd, q'']`` from one state.
2. The N-link chain in Cartesian coordinates (2N coordinates, N constraints):
   derive + compile time, ``motion`` and ``rhs`` per call, the general dense
   route (the pattern kernel switched off) for reference, and pydy's
   Cython-generated right-hand side of the same chain in its N link angles
   when pydy is installed (``pip install pydy cython``; skipped with a message
   otherwise). pydy gets the equations of motion in closed form,
   ``M_ij = m l^2 (N - max(i, j)) cos(th_i - th_j)`` (0-based), the form Kane's
   or Lagrange's method gives, so that no sympy derivation limits its sizes;
   its accelerations are checked against ours.
3. (``--kernels`` only) the scalar and the band kernel on the same chain
   values, which places ``kernels.SCALAR_MAX_TERMS``.

BLAS is pinned to one thread (see ``_timing.py``).
"""

from _timing import per_call  # noqa: I001  (sets the BLAS thread count first)

import argparse
import statistics
import time
import warnings

import numpy as np
import sympy as sm

from models import sympy_peers, wall
from udk_notebooks import kernels
from udk_notebooks.examples import chain
from udk_notebooks.simulation import _Segment


def ratio(ours, peer, rounds: int = 5, min_time: float = 0.1) -> tuple[float, float, float]:
    """Median times of ``ours`` and ``peer`` (us) and the median of their ratios, interleaved."""
    a, b = [], []
    for _ in range(rounds):
        a.append(per_call(ours, min_time=min_time, repeat=3))
        b.append(per_call(peer, min_time=min_time, repeat=3))
    return statistics.median(a), statistics.median(b), statistics.median(x / y for x, y in zip(a, b))


def rhs_of(cm):
    """The single-state right-hand side the integrators call (no friction, no stabilization)."""
    return _Segment(cm, cm.defaults, (), None).rhs


def sympy_table() -> None:
    print("1. motion() and rhs per call against sympy LagrangesMethod + lambdify(cse) + numpy.linalg.solve")
    print(f"{'system':<28} {'ours us':>8} {'sympy us':>9} {'ratio':>6}   {'rhs us':>7} {'sympy rhs':>10} {'ratio':>6}")
    for label, ours, _, lm_accel, lm_rhs, _, q0, qd0 in sympy_peers():
        y0 = np.concatenate([q0, qd0])
        rhs = rhs_of(ours)
        a, b, r = ratio(lambda: ours.motion(0.0, q0, qd0), lambda: lm_accel(0.0, q0, qd0))
        c, d, s = ratio(lambda: rhs(0.0, y0), lambda: lm_rhs(0.0, y0))
        print(f"{label:<28} {a:>8.2f} {b:>9.2f} {r:>6.2f}   {c:>7.2f} {d:>10.2f} {s:>6.2f}")


def pydy_chain(N: int):
    """pydy's Cython right-hand side of the N-link chain in link angles, or None without pydy."""
    try:
        from pydy.codegen.ode_function_generators import generate_ode_function
    except ImportError:
        return None
    th, w = sm.symbols(f"th0:{N}"), sm.symbols(f"w0:{N}")
    m, l, g = sm.symbols("m l g")
    M = sm.Matrix(N, N, lambda i, j: m * l**2 * (N - max(i, j)) * sm.cos(th[i] - th[j]))
    F = sm.Matrix([
        -sum(m * l**2 * (N - max(i, j)) * sm.sin(th[i] - th[j]) * w[j] ** 2 for j in range(N))
        - m * g * l * (N - i) * sm.sin(th[i])
        for i in range(N)
    ])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return generate_ode_function(F, th, w, (m, l, g), mass_matrix=M, coordinate_derivatives=sm.Matrix(w),
                                     generator="cython")


def link_accelerations(q, qdd, length):
    """Angular accelerations of the links from Cartesian accelerations, for a chain at rest."""
    d = np.diff(np.concatenate([[0.0, 0.0], q]).reshape(-1, 2), axis=0)
    dd = np.diff(np.concatenate([[0.0, 0.0], qdd]).reshape(-1, 2), axis=0)
    return (d[:, 0] * dd[:, 1] - d[:, 1] * dd[:, 0]) / length**2


def chain_table(sizes) -> None:
    print("\n2. N-link chain (Cartesian, diagonal M): per call, and pydy's Cython code of the same chain in angles")
    print(f"{'N':>4} {'derive s':>9} {'compile s':>10} {'kernel':>13} {'motion us':>10} {'rhs us':>8} "
          f"{'dense us':>9} {'pydy us':>8} {'rhs/pydy':>9} {'motion/pydy':>12}")
    for N in sizes:
        t_derive, model = wall(lambda: chain.n_link_chain(N))
        t_compile, cm = wall(model.compile)
        q0, qd0 = chain.chain_initial_state(N)
        y0 = np.concatenate([q0, qd0])
        rhs = rhs_of(cm)
        dense = _Segment(cm, cm.defaults, (), None)
        kernel = cm.kernel
        object.__setattr__(cm, "kernel", None)
        t_dense = per_call(lambda: dense.rhs(0.0, y0), min_time=0.1, repeat=3)
        object.__setattr__(cm, "kernel", kernel)
        f = pydy_chain(N)
        if f is None:
            t_motion = per_call(lambda: cm.motion(0.0, q0, qd0), min_time=0.1, repeat=3)
            t_rhs = per_call(lambda: rhs(0.0, y0), min_time=0.1, repeat=3)
            tail = f"{'-':>8} {'-':>9} {'-':>12}"
        else:
            angles, rates = 0.3 + 0.4 * np.arange(N) / N, np.zeros(N)
            x, p = np.concatenate([angles, rates]), cm.defaults.copy()
            theirs = f(x, 0.0, p)[N:]
            mine = link_accelerations(q0, cm.motion(0.0, q0, qd0).qdd, p[1])
            assert np.allclose(theirs, mine, atol=1e-8), "pydy and ours disagree"
            t_rhs, t_pydy, r_rhs = ratio(lambda: rhs(0.0, y0), lambda: f(x, 0.0, p))
            t_motion, _, r_motion = ratio(lambda: cm.motion(0.0, q0, qd0), lambda: f(x, 0.0, p))
            tail = f"{t_pydy:>8.1f} {r_rhs:>9.2f} {r_motion:>12.2f}"
        name = type(kernel).__name__ if kernel is not None else "general"
        print(f"{N:>4} {t_derive:>9.2f} {t_compile:>10.2f} {name:>13} {t_motion:>10.1f} {t_rhs:>8.1f} {t_dense:>9.1f} {tail}",
              flush=True)
    try:
        import pydy  # noqa: F401
    except ImportError:
        print("pydy is not installed: its column is skipped (pip install pydy cython to compare)")


def kernel_table(sizes) -> None:
    print("\n3. the two pattern kernels on the same chain values (kernel call only; sets kernels.SCALAR_MAX_TERMS)")
    print(f"{'N':>4} {'products':>9} {'scalar us':>10} {'band us':>8} {'scalar/band':>12}")
    for N in sizes:
        cm = chain.n_link_chain(N).compile()
        q0, qd0 = chain.chain_initial_state(N)
        p = cm.defaults
        values = cm.matrices(0.0, q0.tolist(), qd0.tolist(), p.tolist())
        pattern = kernels._Pattern(cm.n, cm.m, cm.nonzero)
        scalar = kernels.ScalarKernel(pattern, cm.mass, cm.has_nonideal)
        band = kernels.BandKernel(pattern, cm.mass, cm.has_nonideal)
        a, b, r = ratio(lambda: scalar(values, p), lambda: band(values, p))
        print(f"{N:>4} {scalar.products:>9} {a:>10.1f} {b:>8.1f} {r:>12.2f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="chains up to N = 16 only")
    parser.add_argument("--sizes", type=int, nargs="*", help="chain sizes (default 2 4 8 16 32 64)")
    parser.add_argument("--kernels", action="store_true", help="only table 3, the scalar and band kernels, N = 4..48")
    args = parser.parse_args()
    start = time.perf_counter()
    if args.kernels:
        kernel_table((4, 8, 16, 24, 32, 48))
        return
    sympy_table()
    chain_table(args.sizes or ((2, 4, 8, 16) if args.quick else (2, 4, 8, 16, 32, 64)))
    print(f"\n({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
