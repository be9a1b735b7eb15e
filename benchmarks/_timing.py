"""Shared timing helpers for the benchmark scripts (BLAS pinned to one thread)."""

import os

# numpy and scipy wheels each bring an OpenBLAS; with threads on, alternating calls on
# two cores can run fifty times slower (shared/notes/design-notes.md). Pin before import.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import statistics  # noqa: E402
import timeit  # noqa: E402


def per_call(func, *, min_time: float = 0.2, repeat: int = 5) -> float:
    """Median over ``repeat`` runs of the time per call, in microseconds."""
    timer = timeit.Timer(func)
    number, _ = timer.autorange()
    number = max(number, int(number * min_time / 0.2))
    return statistics.median(t / number for t in timer.repeat(repeat, number)) * 1e6


def timing_into(func, clock, spent: list):
    """``func`` wrapped so that each call appends its duration by ``clock`` to ``spent`` (also when it raises)."""

    def timed(*args, **kwargs):
        started = clock()
        try:
            return func(*args, **kwargs)
        finally:
            spent.append(clock() - started)

    return timed
