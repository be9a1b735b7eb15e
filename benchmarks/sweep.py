"""The sweep targets of issues 12 and 23: against a loop of single `simulate` runs, and against numpy by hand.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/sweep.py [--loop-sample 50] [--repeat 3] [--only-numpy] [--clock cpu]

1. 2500 five-second RK4 runs (step 0.01) of the Baumgarte-stabilized Cartesian
   pendulum, a 50 x 50 grid of (alpha, beta) in [0, 40]^2 (target: <= 1 s).
2. A 2500-point (alpha, mu) map of the incline with friction (mu_s = mu), 2 s,
   RK4 step 0.005, each member sliding up, stopping, then sticking or sliding
   back on its own (target: <= 2 s).
3. The run of 1. through the public ``sweep`` against an RK4 written by hand
   in numpy for that one system, all members in one array (issue 23: ratio
   sweep / hand-written <= 2). The two are timed alternately in one process
   (``--repeat`` times each, best and median reported) and their final states
   must agree to 1e-9 for every member the sweep ran to the end. Measured
   twice: keeping every step (the result's history of q, q' and residuals),
   and keeping the final states alone (``t_eval=[5.0]``), as the hand-written
   loop does. ``--only-numpy`` runs this comparison alone. The target is met
   against the loop that keeps the final states only (the strictest baseline);
   with every step kept the line below also times a hand-written loop that
   keeps the same history (the state after every step in one preallocated
   array, ``phi`` and ``phi'`` computed from it at the end), like for like.

The loop time is measured on ``--loop-sample`` members and scaled to 2500
(a full loop takes minutes); the batch is measured in full (after one warm-up
run that builds the lambdified batch functions), ``--repeat`` times interleaved
with shares of the single runs (the median is reported), and its largest difference
in ``q`` and ``q'`` from the sampled single runs is printed (friction runs:
at the grid times; their modes, switching instants included, must be equal).
The machine's load average is printed with the numbers. ``--clock cpu`` times
by the process's CPU time (``time.process_time``) instead of the wall clock: on
a loaded machine it counts this process's own work, not its wait for a core.
"""

import argparse
import os
import time

import _timing  # noqa: F401  (pins BLAS to one thread before numpy loads)
import numpy as np

import udk_notebooks as udk
from udk_notebooks.examples import chain, incline_friction
from udk_notebooks.sweep import parameter_grid, sweep


CLOCK = time.perf_counter
"""The clock of every timing (``--clock wall``: ``time.perf_counter``; ``--clock cpu``: ``time.process_time``)."""


def timed(func):
    start = CLOCK()
    value = func()
    return CLOCK() - start, value


def report(name, batch_s, loop_s, worst, target):
    print(f"{name}: batch {batch_s:.3f} s, loop of simulate {loop_s:.1f} s (scaled), "
          f"ratio loop/batch {loop_s / batch_s:.0f}x, target <= {target} s -> {'met' if batch_s <= target else 'NOT met'}; "
          f"max |batch - single| = {worst:.1e}")


def interleaved(batch, single, picks, repeat):
    """Median batch time over ``repeat`` runs, each followed by a share of the sampled single runs.

    Returns the median batch time, the last batch result and the single runs (by member).
    """
    times, singles, result = [], {}, None
    chunks = np.array_split(picks, repeat)
    for chunk in chunks:
        dt, result = timed(batch)
        times.append(dt)
        for i in chunk:
            singles[int(i)] = timed(lambda: single(i))
    return float(np.median(times)), result, singles


def hand_written_rk4(q0, qd0, alpha, beta, mass, length, gravity, step, count, history=False):
    """RK4 of the Baumgarte-stabilized Cartesian pendulum, every gain pair at once (the numpy baseline).

    Returns the final states, shape (B, 4). With ``history`` it also keeps what the
    sweep keeps by default, as one would by hand: the state after every step in one
    preallocated array (count + 1, 4, B), and ``phi``, ``phi'`` of every sample computed
    from it at the end, shape (count + 1, 2, B); it returns ``(final, states, residuals)``.

    The state rows are ``x, y, x', y'``, each of shape (B,). With ``M = m I``,
    ``Q = (0, -m g)``, the one row ``A = (2x, 2y)`` of ``phi = x^2 + y^2 - l^2``
    and ``b = -2 (x'^2 + y'^2) - 2 alpha phi' - beta^2 phi`` (Baumgarte's
    correction), Eq. (7) of Udwadia & Kalaba (1992) reads
    ``q'' = a + A^T (b - A a) / (A A^T)`` with ``a = (0, -g)`` (the mass cancels).
    """
    B = alpha.size
    y = np.empty((4, B))
    y[:2] = np.asarray(q0, dtype=float)[:, None]
    y[2:] = np.asarray(qd0, dtype=float)[:, None]
    damping, stiffness = 2.0 * alpha, beta**2
    del mass  # M = m I: the mass cancels from q'' (kept in the signature to say so)

    def rate(state):
        x, z, u, v = state
        phi = x * x + z * z - length**2
        phi_rate = 2.0 * (x * u + z * v)
        rhs = -2.0 * (u * u + v * v) - damping * phi_rate - stiffness * phi  # b, stabilized
        lam = (rhs + 2.0 * z * gravity) / (4.0 * (x * x + z * z))  # (b - A a) / (A A^T)
        return np.stack([u, v, 2.0 * x * lam, -gravity + 2.0 * z * lam])

    states = np.empty((count + 1, 4, B)) if history else None
    if history:
        states[0] = y
    for k in range(count):
        k1 = rate(y)
        k2 = rate(y + step / 2 * k1)
        k3 = rate(y + step / 2 * k2)
        k4 = rate(y + step * k3)
        y = y + step / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        if history:
            states[k + 1] = y
    if not history:
        return y.T
    x, z, u, v = (states[:, j] for j in range(4))
    residuals = np.empty((count + 1, 2, B))
    residuals[:, 0] = x * x + z * z - length**2
    residuals[:, 1] = 2.0 * (x * u + z * v)
    return y.T, states, residuals


def against_numpy(repeat):
    """Target 3: the public sweep against :func:`hand_written_rk4`, timed alternately in one process."""
    cm = chain.cartesian_pendulum().compile()
    q0, qd0 = chain.pendulum_initial_state(1.0)
    alphas, betas = np.linspace(0, 40, 50), np.linspace(0, 40, 50)
    gains = parameter_grid(alpha=alphas, beta=betas)
    stabs = [udk.Baumgarte(g["alpha"], g["beta"]) for g in gains]
    alpha = np.array([g["alpha"] for g in gains])
    beta = np.array([g["beta"] for g in gains])
    values = dict(zip(cm.parameter_names, cm.defaults.tolist()))
    step, t_end = 0.01, 5.0
    count = int(round(t_end / step))

    def public(t_eval=None):
        options = {} if t_eval is None else {"t_eval": t_eval}
        return sweep(cm, (0.0, t_end), q0, qd0, stabilization=stabs, step=step, progress=False, **options)

    def by_hand(history=False):
        with np.errstate(all="ignore"):  # gains that the sweep refuses may blow up here
            return hand_written_rk4(q0, qd0, alpha, beta, values["m"], values["l"], values["g"], step, count, history)

    # the whole history (q, q' and residuals at every step, 60 MB), and the final states alone (t_eval=[t_end],
    # what the hand-written loop keeps)
    # The target compares with the hand-written loop that keeps the final states only (the strictest baseline); with
    # every step kept, the hand-written loop that keeps the same history (states and residuals) is timed too.
    for label, run, keeps in (("every step kept", public, True), ("final state only", lambda: public([t_end]), False)):
        run(), by_hand()  # warm-up: the lambdified batch functions are built once
        sweep_times, numpy_times, history_times = [], [], []
        for _ in range(repeat):
            dt, result = timed(run)
            sweep_times.append(dt)
            dt, final = timed(by_hand)
            numpy_times.append(dt)
            if keeps:
                dt, (kept_final, states, residuals) = timed(lambda: by_hand(history=True))
                history_times.append(dt)
        finished = result.status == "ok"
        end = np.concatenate([result.q[:, -1], result.qd[:, -1]], axis=1)
        worst = float(np.abs(end[finished] - final[finished]).max())
        assert finished.sum() > 0.9 * len(stabs), f"only {finished.sum()} of {len(stabs)} members finished"
        assert worst <= 1e-9, f"the sweep and the hand-written RK4 differ by {worst:.3e} at the end"
        if keeps:  # the same history by both routes
            assert np.array_equal(kept_final, final)
            along = max(float(np.abs(result.q[finished] - states[:, :2, finished].transpose(2, 0, 1)).max()),
                        float(np.abs(result.qd[finished] - states[:, 2:, finished].transpose(2, 0, 1)).max()),
                        float(np.abs(result.position_residual[finished, :, 0] - residuals[:, 0, finished].T).max()),
                        float(np.abs(result.velocity_residual[finished, :, 0] - residuals[:, 1, finished].T).max()))
            assert along <= 1e-9, f"the sweep's history and the hand-written one differ by {along:.3e}"
        best, median = min(sweep_times), float(np.median(sweep_times))
        base_best, base_median = min(numpy_times), float(np.median(numpy_times))
        ratio = best / base_best
        print(f"sweep vs hand-written numpy RK4, {label} ({len(stabs)} Baumgarte runs, {count} steps; "
              f"{int(finished.sum())} finished, {int((result.status == 'refused').sum())} refused, "
              f"{int((result.status == 'diverged').sum())} diverged): sweep best {best:.3f} s / median {median:.3f} s, "
              f"numpy best {base_best:.3f} s / median {base_median:.3f} s, ratio of best {ratio:.2f} "
              f"(of medians {median / base_median:.2f}), target <= 2 -> {'met' if ratio <= 2 else 'NOT met'}; "
              f"max |final state difference| = {worst:.1e}")
        if keeps:
            kept_best, kept_median = min(history_times), float(np.median(history_times))
            print(f"    like for like, against the hand-written RK4 that keeps the same history (states at every step, "
                  f"phi and phi' from them): numpy best {kept_best:.3f} s / median {kept_median:.3f} s, ratio of best "
                  f"{best / kept_best:.2f} (of medians {median / kept_median:.2f}); max |history difference| = {along:.1e}")


def main():
    global CLOCK
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    parser = argparse.ArgumentParser()
    parser.add_argument("--loop-sample", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3, help="batch runs (the median is reported)")
    parser.add_argument("--only-numpy", action="store_true", help="only the comparison with hand-written numpy")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="time by the wall clock or by this process's CPU time (fairer on a loaded machine)")
    args = parser.parse_args()
    CLOCK = time.process_time if args.clock == "cpu" else time.perf_counter
    print(f"clock: {args.clock}")
    sample, repeat = args.loop_sample, args.repeat
    if args.only_numpy:
        against_numpy(repeat)
        return
    rng = np.random.default_rng(0)

    pendulum = chain.cartesian_pendulum().compile()
    q0, qd0 = chain.pendulum_initial_state(1.0)
    gains = parameter_grid(alpha=np.linspace(0, 40, 50), beta=np.linspace(0, 40, 50))
    stabs = [udk.Baumgarte(g["alpha"], g["beta"]) for g in gains]
    run = lambda: sweep(pendulum, (0.0, 5.0), q0, qd0, stabilization=stabs, step=0.01, progress=False)  # noqa: E731

    def single(i):
        try:
            return udk.simulate(pendulum, (0.0, 5.0), q0, qd0, stabilization=stabs[i], step=0.01)
        except udk.UnstableGainError as exc:
            return exc

    run()  # build the lambdified batch functions
    picks = rng.choice(len(stabs), sample, replace=False)
    batch_s, result, singles = interleaved(run, single, picks, repeat)
    loop_s, worst = 0.0, 0.0
    for i, (dt, one) in singles.items():
        loop_s += dt
        if isinstance(one, Exception):
            assert result.status[i] == "refused" and result.message[i] == str(one)
            continue
        worst = max(worst, float(np.abs(one.q - result.q[i]).max()), float(np.abs(one.qd - result.qd[i]).max()))
    report("stabilized pendulum, 2500 runs", batch_s, loop_s * len(stabs) / sample, worst, 1)

    model = incline_friction.model().compile()
    grid = [dict(p, mu_s=p["mu"]) for p in parameter_grid(alpha=np.linspace(0.1, 1.2, 50), mu=np.linspace(0.0, 1.2, 50))]
    states = [incline_friction.initial_state(3.0, alpha=p["alpha"]) for p in grid]
    q0, qd0 = np.array([s[0] for s in states]), np.array([s[1] for s in states])
    run = lambda: sweep(model, (0.0, 2.0), q0, qd0, params=grid, step=0.005, progress=False)  # noqa: E731
    run()
    picks = rng.choice(len(grid), sample, replace=False)
    batch_s, result, singles = interleaved(
        run, lambda i: udk.simulate(model, (0.0, 2.0), q0[i], qd0[i], params=grid[i], step=0.005), picks, repeat)
    loop_s, worst = 0.0, 0.0
    for i, (dt, one) in singles.items():
        loop_s += dt
        on_grid = np.isin(one.t, result.t)  # the single run also samples its switching instants
        worst = max(worst, float(np.abs(one.q[on_grid] - result.q[i]).max()),
                    float(np.abs(one.qd[on_grid] - result.qd[i]).max()))
        assert np.array_equal(one.modes, result.modes[i]), f"modes differ for member {i}"
    report("friction map, 2500 points", batch_s, loop_s * len(grid) / sample, worst, 2)
    against_numpy(repeat)


if __name__ == "__main__":
    main()
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
