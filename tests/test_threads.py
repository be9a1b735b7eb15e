"""The one-BLAS-thread limit of simulations: restored after overlapping runs, optional where unavailable."""

from __future__ import annotations

import threading

import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from udk_notebooks import _threads, simulate
from udk_notebooks.examples import chain


def _blas_threads() -> list[int]:
    return sorted(info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas")


@pytest.fixture(autouse=True)
def two_blas_threads():
    """Start from two threads per BLAS, so that a limit left at one shows (whatever the environment says)."""
    with threadpool_limits(limits=2, user_api="blas"):
        yield


def test_overlapping_runs_restore_the_limits_from_before():
    before = _blas_threads()
    model = chain.cartesian_pendulum().compile()
    q0, qd0 = chain.pendulum_initial_state(0.5)
    start = threading.Barrier(4)

    def run():
        start.wait()
        for _ in range(3):
            simulate(model, (0.0, 0.5), q0, qd0, method="rk4", step=0.001)

    workers = [threading.Thread(target=run) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert _blas_threads() == before


def test_nested_limits_lift_only_at_the_outermost_exit():
    before = _blas_threads()
    with _threads.single_blas_thread():
        with _threads.single_blas_thread():
            pass
        assert max(_blas_threads()) == 1
    assert _blas_threads() == before


def test_runs_without_threadpoolctl(monkeypatch):
    monkeypatch.setattr(_threads, "_controller", lambda: None)
    model = chain.cartesian_pendulum().compile()
    q0, qd0 = chain.pendulum_initial_state(0.5)
    run = simulate(model, (0.0, 0.2), q0, qd0, method="rk4", step=0.01)
    assert run.t[-1] == pytest.approx(0.2)
