"""One BLAS thread while integrating (private module).

numpy and scipy wheels each carry their own OpenBLAS. The solver alternates
tiny calls between the two; with threads on, the idle threads of one pool
spin while the other works, and on a 2-core machine a simulation ran 10 to
60 times slower (shared design notes; measured again by the examples' tests).
The matrices here are far too small to gain from threads, so simulations and
explorer updates run under a one-thread limit that is lifted afterwards.
"""

from __future__ import annotations

from functools import cache

from threadpoolctl import ThreadpoolController

__all__ = ["single_blas_thread"]


@cache
def _controller() -> ThreadpoolController:
    # Built on first use, after numpy and scipy have loaded their libraries.
    return ThreadpoolController()


def single_blas_thread():
    """Context manager limiting every loaded BLAS to one thread (about 15 us to enter)."""
    return _controller().limit(limits=1, user_api="blas")
