"""Input checks shared by the public functions (private module).

Every check names the argument in backticks and says how to fix it, in the
style of :mod:`scipy.integrate`.
"""

from __future__ import annotations

import math

import numpy as np

SYMMETRY_RTOL = 1e-10
"""Relative tolerance for ``||M - M^T|| <= SYMMETRY_RTOL * ||M||``."""


def as_finite_array(value, name: str, ndim: int) -> np.ndarray:
    """Return ``value`` as a float array of ``ndim`` dimensions, all finite (a complex one is refused)."""
    try:
        complex_input = np.iscomplexobj(value)
    except ValueError:  # a ragged nesting: the conversion below names it
        complex_input = False
    if complex_input:
        raise ValueError(
            f"`{name}` must be real; got a complex array. Mechanics has real forces and accelerations: "
            f"pass the real part (`{name}.real`) if the imaginary part is rounding"
        )
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"`{name}` must be a real {ndim}-D array of numbers; got {value!r}") from exc
    if arr.ndim != ndim:
        shape = "(n,)" if ndim == 1 else "(m, n)"
        raise ValueError(f"`{name}` must be {ndim}-D with shape {shape}; got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise ValueError(
            f"`{name}` contains a non-finite entry (NaN or inf) at index {tuple(int(i) for i in bad)}; "
            "check the model's parameters and state"
        )
    return arr


def finite_float(value, what: str) -> float:
    """``value`` as a finite float, or a ValueError that starts with ``what`` (e.g. "parameter `m`")."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = math.nan
    if not math.isfinite(number):
        raise ValueError(f"{what} must be a finite number; got {value!r}")
    return number


def real_number(value, what: str) -> float:
    """``value`` as a finite real float, or a ValueError that starts with ``what`` (e.g. "parameter `m`").

    Stricter than :func:`finite_float`: a bool, a complex number, a string
    and an array of more than one number are refused with the same message
    (``float()`` would turn ``True`` into 1 and a complex numpy scalar into
    its real part without a word).
    """
    number = math.nan
    if not isinstance(value, (bool, np.bool_, str, bytes)) and not np.iscomplexobj(value) and np.ndim(value) == 0:
        try:
            number = float(value)
        except (TypeError, ValueError):
            pass
    if not math.isfinite(number):
        raise ValueError(f"{what} must be a finite real number; got {value!r}")
    return number


def check_tolerance(value, name: str) -> float:
    """A relative tolerance: a finite float in (0, 1), or a ValueError naming it."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = math.nan
    if not 0.0 < number < 1.0:  # also refuses NaN
        raise ValueError(
            f"`{name}` must be a relative tolerance between 0 and 1 (exclusive); got {value!r}. "
            "Leave it out to use the documented default"
        )
    return number


def check_mass_matrix(M) -> np.ndarray:
    """Check that ``M`` is a finite, square, symmetric matrix."""
    M = as_finite_array(M, "M", 2)
    n, k = M.shape
    if n != k or n == 0:
        raise ValueError(f"`M` must be a non-empty square matrix; got shape {M.shape}")
    scale = np.abs(M).max()
    asym = np.abs(M - M.T).max()
    if asym > SYMMETRY_RTOL * max(scale, np.finfo(float).tiny):
        raise ValueError(
            f"`M` must be symmetric: max |M - M^T| = {asym:.3g} (relative {asym / scale:.3g}); "
            "a mass matrix is the Hessian of the kinetic energy, so use (M + M.T) / 2 if the "
            "asymmetry is rounding"
        )
    return M


def check_vector(value, name: str, length: int) -> np.ndarray:
    """Check that ``value`` is a finite vector of the given length."""
    vec = as_finite_array(value, name, 1)
    if vec.shape != (length,):
        raise ValueError(f"`{name}` must have shape ({length},), one entry per coordinate; got shape {vec.shape}")
    return vec


def check_constraint_matrix(A, b, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Check ``A`` (shape (m, n)) and ``b`` (shape (m,)); ``m`` may be zero."""
    A = np.zeros((0, n)) if A is None else as_finite_array(A, "A", np.ndim(A))
    if A.ndim == 1 and A.size == n:
        A = A.reshape(1, n)
    A = as_finite_array(A, "A", 2)
    if A.shape[1] != n:
        raise ValueError(f"`A` must have shape (m, {n}): one column per coordinate; got shape {A.shape}")
    b = np.zeros(0) if b is None else np.atleast_1d(as_finite_array(b, "b", np.ndim(b)))
    b = as_finite_array(b, "b", 1)
    if b.shape != (A.shape[0],):
        raise ValueError(f"`b` must have shape ({A.shape[0]},): one entry per row of `A`; got shape {b.shape}")
    return A, b
