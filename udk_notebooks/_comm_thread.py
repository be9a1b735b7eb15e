"""Widget messages handled on the kernel's main thread, as before kernel subshells.

JupyterLab 4.4 and later send widget messages over kernel subshells by default (the
``commsOverSubshells`` setting, "perCommTarget"), and ipykernel 7 serves each subshell on a
thread of its own. A slider move, or ipympl's "initialized", "resize" and "draw" requests,
then ran Matplotlib on that thread while the main thread ran a cell or another figure's
update. Matplotlib is not thread-safe: the browser soak saw FreeType "invalid outline" and
"raster overflow" errors in the explorers' error areas and figures that never appeared
(ipympl issues 610 and 622 describe the same race). Pinning ipykernel below 7 or switching
the JupyterLab setting off on every machine is outside the course's reach, so the kernel
hands each widget message it receives on another thread to its main thread's event loop,
in arrival order: widget callbacks and cells then never run at the same time, as with
ipykernel 6.

:func:`serve_comms_on_main_thread` installs this once per kernel; it does nothing outside
an ipykernel kernel (a script, a test, nbclient without subshells still works the same).
"""

from __future__ import annotations

import sys
import threading
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:  # asyncio itself only inside a kernel, where it is loaded already
    import asyncio

__all__ = ["serve_comms_on_main_thread"]

_HANDLED = ("comm_msg", "comm_close")  # widget updates, custom messages (ipympl) and closing
_MARK = "_udk_main_thread"  # set on the handlers this module installed


def _kernel() -> Any | None:
    """The running ipykernel kernel, or None (no IPython, or a terminal IPython)."""
    if "ipykernel" not in sys.modules or "IPython" not in sys.modules:
        return None
    from IPython import get_ipython

    shell = get_ipython()
    return getattr(shell, "kernel", None)


def _main_loop() -> asyncio.AbstractEventLoop | None:
    """The event loop of the calling (main) thread, or None when there is none to hand work to."""
    import asyncio

    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        pass
    try:  # the kernel's loop seen through tornado (how ipykernel 6 and Matplotlib's timers find it)
        from tornado.ioloop import IOLoop

        return IOLoop.current().asyncio_loop
    except Exception:
        return None


def _on_main_thread(handler: Callable[..., Any], loop: asyncio.AbstractEventLoop,
                    main: threading.Thread) -> Callable[..., Any]:
    """``handler`` that, called from another thread, runs later on ``main`` through ``loop`` instead."""

    def handle(*args: Any, **kwargs: Any) -> None:
        if threading.current_thread() is main or loop.is_closed():
            handler(*args, **kwargs)
            return
        loop.call_soon_threadsafe(lambda: handler(*args, **kwargs))  # FIFO: messages keep their order

    setattr(handle, _MARK, True)
    return handle


def serve_comms_on_main_thread() -> bool:
    """Handle the kernel's widget messages (``comm_msg``, ``comm_close``) on its main thread.

    Safe to call again (it installs once). Call it from the main thread, for instance while
    a cell runs.

    Returns
    -------
    bool
        True when the kernel's handlers now run on the main thread (installed now or before);
        False when there is no ipykernel kernel here, it has no shell handlers to wrap, or this
        is not the main thread.
    """
    kernel = _kernel()
    handlers = getattr(kernel, "shell_handlers", None)
    if not isinstance(handlers, dict):
        return False
    if all(getattr(handlers.get(name), _MARK, False) for name in _HANDLED if name in handlers):
        return True
    main = threading.main_thread()
    if threading.current_thread() is not main:
        return False
    loop = _main_loop()
    if loop is None:
        return False
    for name in _HANDLED:
        handler = handlers.get(name)
        if handler is not None and not getattr(handler, _MARK, False):
            handlers[name] = _on_main_thread(handler, loop, main)
    return True
