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

    Each read goes to the module itself, as a plain ``import sympy as sm``
    would (so that a test patching ``sympy.lambdify`` patches it here too);
    after the first, a read costs one function call more. ``importlib``
    takes the import lock: two threads reading at once get the same module.
    """

    def __init__(self, name: str):
        self._name = name
        self._module = None

    def __getattr__(self, attribute: str):
        if attribute.startswith("__"):  # copy, pickle and inspect probe these: never an import for them
            raise AttributeError(attribute)
        module = self._module
        if module is None:
            module = self._module = importlib.import_module(self._name)
        return getattr(module, attribute)

    def __repr__(self) -> str:
        return f"<module {self._name!r}, imported on first use>"
