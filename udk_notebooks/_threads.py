"""One BLAS thread while integrating (private module).

numpy and scipy wheels each carry their own OpenBLAS. The solver alternates
tiny calls between the two; with threads on, the idle threads of one pool
spin while the other works, and on a 2-core machine a simulation ran 10 to
60 times slower (shared design notes; measured again by the examples' tests).
The matrices here are far too small to gain from threads, so simulations and
explorer updates run under a one-thread limit that is lifted afterwards.

The limit is process-wide, so overlapping runs (threads) share one: the first
to enter sets it, the last to leave restores the limits from before the first
(each run restoring its own snapshot would leave one thread for good, since a
second run's snapshot is the first run's limit). Where threadpoolctl is missing
or cannot inspect the BLAS libraries (browser kernels such as Pyodide), runs
go ahead without a limit.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from functools import cache
from typing import Iterator

__all__ = ["single_blas_thread"]

_lock = threading.Lock()
_depth = 0  # runs inside the limit now
_limiter = None  # threadpoolctl's limiter of the outermost run (it holds the limits to restore)


@cache
def _controller():
    # Built on first use, after numpy and scipy have loaded their libraries.
    try:
        from threadpoolctl import ThreadpoolController

        return ThreadpoolController()
    except Exception:  # not installed, or no way to inspect the libraries here
        return None


@contextmanager
def single_blas_thread() -> Iterator[None]:
    """Context manager limiting every loaded BLAS to one thread (about 15 us to enter)."""
    global _depth, _limiter
    with _lock:
        if _depth == 0:
            controller = _controller()
            try:
                _limiter = None if controller is None else controller.limit(limits=1, user_api="blas")
            except Exception:  # a library that refuses the limit: run without it
                _limiter = None
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _limiter is not None:
                _limiter.restore_original_limits()
                _limiter = None
