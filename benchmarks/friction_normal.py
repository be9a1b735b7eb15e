"""Cost of a physical contact (``Contact``) against ``CoulombFriction(normal=...)``.

Run: ``.venv/bin/python benchmarks/friction_normal.py``

The block carrying a pendulum on a rough floor (``examples.friction_cart_pendulum``)
with the floor named as the contact's normal, and the same system with the floor
declared as a ``Contact`` (``fcp.contact_model``: normal force and friction solved
together, lift-off watched). ``normal=None`` (``N = |F^L|``) is refused for this
system since friction loads the rod (``A M^-1 C != 0``, issue 18). Per call of ``CompiledModel.solve_modes`` while sliding and
while sticking, and per 4 s DOP853 run; the two variants are timed
interleaved, round by round, and the ratio is the median of the per-round
ratios (load on a shared machine changes between rounds, not within one).
Both cost one more solve of the Udwadia-Kalaba equation while sliding (the
reaction to a unit friction force, Eq. 11) and a least-squares split of the
multipliers; the contact's run also evaluates its lift-off function.
"""

from _timing import per_call  # noqa: I001  (sets the BLAS thread count first)

import statistics
import time

from udk_notebooks import simulate
from udk_notebooks.examples import friction_cart_pendulum as fcp


def variants():
    return {"Contact": fcp.contact_model(), "normal=y1": fcp.model()}


def main(rounds: int = 5) -> None:
    models = variants()
    q, qd = fcp.initial_state(0.0, 0.7, 0.5, 1.0)
    q0, qd0 = fcp.initial_state()
    cases = {}
    for name, system in models.items():
        cm = system.compile()
        p = cm.parameters()
        cases[(name, "sliding")] = lambda cm=cm, p=p: cm.solve_modes(0.0, q, qd, p, (1,))
        cases[(name, "sticking")] = lambda cm=cm, p=p: cm.solve_modes(0.0, q, qd, p, (0,))
    for what in ("sliding", "sticking"):
        ratios, times = [], {name: [] for name in models}
        for _ in range(rounds):
            round_times = {name: per_call(cases[(name, what)], min_time=0.1, repeat=3) for name in models}
            for name, value in round_times.items():
                times[name].append(value)
            ratios.append(round_times["Contact"] / round_times["normal=y1"])
        print(f"solve_modes {what:8s}: " + ", ".join(f"{n} {statistics.median(v):6.1f} us" for n, v in times.items())
              + f"; ratio {statistics.median(ratios):.2f}")
    ratios, times = [], {name: [] for name in models}
    for _ in range(rounds):
        round_times = {}
        for name, system in models.items():
            start = time.perf_counter()
            simulate(system, (0.0, 4.0), q0, qd0, method="DOP853", rtol=1e-10, atol=1e-12)
            round_times[name] = time.perf_counter() - start
            times[name].append(round_times[name])
        ratios.append(round_times["Contact"] / round_times["normal=y1"])
    print("4 s DOP853 run      : " + ", ".join(f"{n} {statistics.median(v):.3f} s" for n, v in times.items())
          + f"; ratio {statistics.median(ratios):.2f} (the same physics; the contact also watches for lift-off)")


if __name__ == "__main__":
    main()
