"""A plain-words message, instead of a traceback, for a name the lesson's Setup cell would define.

After *Kernel > Restart* every name a lesson made is gone. A student who then runs
one exercise cell meets ``NameError: name 'np' is not defined`` under a traceback
of IPython's internals, which says nothing about the cure. Importing
:mod:`udk_notebooks.exercises` (the lesson's Setup cell does, and so does the first
line of every exercise cell) registers :func:`name_error_hint` with the running
IPython shell, through IPython's documented hook ``InteractiveShell.set_custom_exc``.
A ``NameError`` raised by a cell is then shown as a short message that names the
missing name and the line, and says which cell to run. Outside IPython (scripts,
pytest) nothing is registered.
"""

from __future__ import annotations

import traceback
from typing import Any

__all__ = ["SETUP_MARKERS", "install", "name_error_hint"]

SETUP_MARKERS = ("np", "udk")
"""Names every lesson's Setup cell defines: when one of them is missing, Setup has not run."""

_CELL_FILENAME_HINTS = ("<ipython-input-", "/ipykernel_", "<cell")
_WRAPPER_SHOWS = False  # set by install()


def _cell_line(tb) -> tuple[int | None, str]:
    """The line number and text, in the cell, where the error happened (the last frame in a cell)."""
    found: tuple[int | None, str] = (None, "")
    for frame in traceback.extract_tb(tb):
        if any(hint in frame.filename for hint in _CELL_FILENAME_HINTS):
            found = (frame.lineno, (frame.line or "").strip())
    return found


def name_error_hint(name: str | None, setup_ran: bool, line: int | None = None, text: str = "") -> str:
    """The message shown for a missing name in a lesson notebook.

    Parameters
    ----------
    name : str or None
        The missing name (``NameError.name``), None when Python did not say.
    setup_ran : bool
        Whether the lesson's Setup cell has run since the kernel started
        (all of :data:`SETUP_MARKERS` are defined).
    line : int, optional
        The line of the cell that used the name.
    text : str, optional
        That line's source.

    Returns
    -------
    str
        Several lines of plain text, the first starting with ``NameError``.
    """
    if name is not None and not isinstance(name, str):
        raise TypeError(f"`name` must be a string or None; got {type(name).__name__}")
    shown = f"`{name}`" if name else "a name"
    where = f" (line {line}: {text})" if line is not None and text else (f" (line {line})" if line is not None else "")
    lines = [f"NameError: {shown} is not defined{where}."]
    if not setup_ran:
        lines += [
            "The lesson's Setup cell has not run since the kernel started (Kernel > Restart forgets every name).",
            "Run the first code cell of the lesson (Setup: the imports), then run this cell again.",
        ]
    else:
        lines += [
            f"Setup has run, so {shown} comes from another cell of this lesson, or is misspelt.",
            "Run the cell that defines it (above this one), or check the spelling.",
        ]
    return "\n".join(lines)


def _handler(shell, etype, value, tb, tb_offset=None) -> list[str]:
    """IPython's custom-exception handler: return the lines to show instead of the traceback."""
    frames = traceback.extract_tb(tb)
    if not frames or not any(hint in frames[-1].filename for hint in _CELL_FILENAME_HINTS):
        # Raised inside a function of a module, not by a cell's own code: a bug to trace, not a
        # forgotten Setup, so show IPython's usual traceback.
        lines = shell.InteractiveTB.structured_traceback(etype, value, tb, tb_offset=tb_offset)
    else:
        namespace = getattr(shell, "user_ns", {}) or {}
        setup_ran = all(marker in namespace for marker in SETUP_MARKERS)
        line, text = _cell_line(tb)
        lines = name_error_hint(getattr(value, "name", None), setup_ran, line, text).splitlines()
    if not _WRAPPER_SHOWS:
        shell._showtraceback(etype, value, lines)  # sends the error message to the notebook
    return lines


def _wrapper_shows() -> bool:
    """Whether IPython's wrapper of a custom handler shows the lines the handler returns.

    IPython up to 8 did; IPython 9's wrapper returns them and its caller drops them, so
    the handler must show them itself (else the cell fails without any output).
    """
    import inspect

    from IPython.core.interactiveshell import InteractiveShell

    return "self._showtraceback(etype, value, stb)" in inspect.getsource(InteractiveShell.set_custom_exc)


def install(shell: Any = None) -> bool:
    """Register the NameError message with IPython's running shell (once; no-op outside IPython).

    Parameters
    ----------
    shell : IPython.core.interactiveshell.InteractiveShell, optional
        Default: ``IPython.get_ipython()``.

    Returns
    -------
    bool
        True when the handler is registered (now or before), False when there is no
        shell or it already has another custom exception handler (which is kept).
    """
    if shell is None:
        try:
            from IPython import get_ipython
        except ImportError:  # no IPython: no shell to teach
            return False
        shell = get_ipython()
    if shell is None or not hasattr(shell, "set_custom_exc"):
        return False
    if getattr(shell, "_udk_name_hint", False):
        return True
    if tuple(getattr(shell, "custom_exceptions", ())):  # someone else's handler: leave it alone
        return False
    global _WRAPPER_SHOWS
    _WRAPPER_SHOWS = _wrapper_shows()
    shell.set_custom_exc((NameError,), _handler)
    shell._udk_name_hint = True
    return True
