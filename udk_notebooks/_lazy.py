"""A module imported on its first use, for modules that need sympy only to derive or compile a model.

``import sympy`` costs a new kernel 0.15 to 0.3 s. An explorer whose compiled
model is read from kept code (:mod:`udk_notebooks._kept_code`) never touches
sympy, so the modules on its path (``compiled``, the examples) name sympy
through :class:`LazyModule` and import it on the first attribute they read.
"""

from __future__ import annotations

import importlib

__all__ = ["LazyModule"]


class LazyModule:
    """Stands for the module ``name``: reading an attribute imports the module (once) and returns its attribute.

    Each attribute read is then kept on the stand-in, so that later reads cost
    what a module attribute does. ``importlib.import_module`` takes the import
    lock: two threads reading at once get the same module.
    """

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attribute: str):
        if attribute.startswith("__"):  # copy, pickle and inspect probe these: never an import for them
            raise AttributeError(attribute)
        value = getattr(importlib.import_module(self._name), attribute)
        setattr(self, attribute, value)
        return value

    def __repr__(self) -> str:
        return f"<module {self._name!r}, imported on first use>"
