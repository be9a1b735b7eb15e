"""Cost of a per-contact normal force (``CoulombFriction(normal=...)``) against ``N = |F^L|``.

Run: ``.venv/bin/python benchmarks/friction_normal.py``

The block carrying a pendulum on a rough floor (``examples.friction_cart_pendulum``)
with the floor named as the contact's normal, and the same model with
``normal=None``. Per call of ``CompiledModel.solve_modes`` while sliding and
while sticking, and per 4 s DOP853 run; the two variants are timed
interleaved, round by round, and the ratio is the median of the per-round
ratios (load on a shared machine changes between rounds, not within one).
Sliding with a named normal costs one more solve of the Udwadia-Kalaba
equation (the reaction to a unit friction force, Eq. 11) and a least-squares
split of the multipliers.
"""

from _timing import per_call  # noqa: I001  (sets the BLAS thread count first)

import dataclasses
import statistics
import time

from udk_notebooks import simulate
from udk_notebooks.examples import friction_cart_pendulum as fcp
from udk_notebooks.model import CoulombFriction


def variants():
    named = fcp.model()
    c = named.friction[0]
    whole = dataclasses.replace(
        named, friction=[CoulombFriction(c.sliding_velocity, c.coefficient, c.static_coefficient)])
    return {"normal=y1": named, "normal=None": whole}


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
            ratios.append(round_times["normal=y1"] / round_times["normal=None"])
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
        ratios.append(round_times["normal=y1"] / round_times["normal=None"])
    print("4 s DOP853 run      : " + ", ".join(f"{n} {statistics.median(v):.3f} s" for n, v in times.items())
          + f"; ratio {statistics.median(ratios):.2f} (the two runs differ in physics, so in steps too)")


if __name__ == "__main__":
    main()
