"""The numbers of issue 18 from the contacts API, next to their independent references.

Run: ``.venv/bin/python benchmarks/contacts_check.py``

* The Painleve rod (m = 1 kg, L = 1 m, end sliding right at 1 m/s at 40 degrees, theta' = 0, mu = 0.5):
  ``x''`` and ``N`` from ``CompiledModel.solve_contacts`` against numpy's 4 x 4 solve of
  ``M q'' = Q + A^T lambda - mu lambda sgn(s) ds/dq'``, ``A q'' = b``.
* The ladder on a frictionless floor and wall, released from rest at theta0: the angle at the lift-off
  event found by ``simulate`` against ``asin((2/3) sin theta0)``.
"""

from __future__ import annotations

import math
import pathlib
import sys

import udk_notebooks as udk

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests"))
from test_contacts import joint_solve, ladder, painleve_rod, rod_state  # noqa: E402


def main() -> None:
    cm = painleve_rod(0.5).compile()
    q, qd = rod_state(math.radians(40), 1.0)
    modes = cm.friction_modes(0.0, q, qd, cm.defaults)
    motion, _, normals = cm.solve_contacts(0.0, q, qd, cm.defaults, modes)
    qdd, N = joint_solve(math.radians(40), 0.0, 1, 0.5)
    print(f"Painleve rod, 40 deg, mu = 0.5: Contact API x'' = {motion.qdd[0]:.6f} m/s^2, N = {normals[0]:.6f} N; "
          f"joint 4x4 solve x'' = {qdd[0]:.6f} m/s^2, N = {N:.6f} N")
    for degrees, span in ((50.0, 0.4), (70.0, 0.6), (85.0, 0.95)):  # until the ladder lies nearly flat
        theta0 = math.radians(degrees)
        q0 = [0.5 * math.cos(theta0), 0.5 * math.sin(theta0), theta0]
        for method, options in (("rk4", dict(step=1e-3)), ("DOP853", dict(rtol=1e-10, atol=1e-12))):
            run = udk.simulate(ladder(), (0.0, span), q0, [0.0, 0.0, 0.0], method=method, **options)
            lift = next(e for e in run.events if e.kind == "lift-off")
            k = int(run.t.searchsorted(lift.time))
            exact = math.degrees(math.asin(2 / 3 * math.sin(theta0)))
            print(f"ladder theta0 = {degrees:.0f} deg, {method:6s}: leaves the wall at t = {lift.time:.6f} s, "
                  f"theta = {math.degrees(run.q[k, 2]):.10f} deg; asin(2/3 sin theta0) = {exact:.10f} deg; "
                  f"run goes on to t = {run.t[-1]:.2f} s ({run.status})")


if __name__ == "__main__":
    main()
