"""Answers as plain data: out of a student's kernel, into the trusted test process.

The grader never runs hidden tests where the submission ran. It asks the
student's kernel for the values of the question's answer names, written as
JSON of numbers, strings, lists, dicts and numeric arrays (:func:`dump_answers`,
run in that kernel), and rebuilds them in a fresh process (:func:`decode`)
without evaluating anything: a submission can choose the values of its answers
and nothing else. Anything else (functions, models, objects) arrives as
:class:`Unsupported`, which every test that reads it fails on, saying why.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

__all__ = ["MAX_ELEMENTS", "Missing", "Unsupported", "checked", "decode", "dump_answers", "encode"]

MAX_ELEMENTS = 100_000
"""Largest number of array or list elements taken from one answer."""


class Unsupported:
    """Stands for an answer that is not plain data; tests reading it fail with :attr:`reason`."""

    def __init__(self, reason: str):
        self.reason = reason

    def __repr__(self) -> str:
        return f"Unsupported({self.reason!r})"


class Missing(Unsupported):
    """Stands for a name the submission never defined (its cell raised, timed out or was deleted)."""


class _TooLarge(Exception):
    pass


def encode(value):
    """``value`` as JSON-ready tagged data: ``{"t": kind, "v": payload}``.

    Kinds: ``none``, ``bool``, ``int``, ``float`` (``inf``/``nan`` as strings),
    ``complex``, ``str``, ``ellipsis``, ``list``, ``tuple``, ``dict`` (string
    keys), ``array`` (numeric ndarray: ``dtype``, ``shape``, flat ``real`` and
    ``imag``), and ``unsupported`` with the reason. Objects that numpy turns
    into a numeric array (sympy matrices of numbers, nested sequences) are
    arrays; numpy scalars are numbers. One answer holds at most
    :data:`MAX_ELEMENTS` items and numbers in all, nested at most 20 deep.
    """
    budget = [MAX_ELEMENTS]
    try:
        return _encode(value, 0, budget)
    except _TooLarge:
        return {"t": "unsupported", "v": f"more than {MAX_ELEMENTS} numbers or items"}


def _spend(budget: list, count: int) -> None:
    budget[0] -= count
    if budget[0] < 0:
        raise _TooLarge


def _encode(value, depth: int, budget: list):
    _spend(budget, 1)
    if depth > 20:
        return {"t": "unsupported", "v": "nested more than 20 levels deep"}
    if value is None:
        return {"t": "none", "v": None}
    if value is Ellipsis:
        return {"t": "ellipsis", "v": None}
    if isinstance(value, (bool, np.bool_)):
        return {"t": "bool", "v": bool(value)}
    if isinstance(value, (int, np.integer)):
        return {"t": "int", "v": str(int(value))}
    if isinstance(value, (float, np.floating)):
        return {"t": "float", "v": repr(float(value))}
    if isinstance(value, (complex, np.complexfloating)):
        return {"t": "complex", "v": [repr(float(value.real)), repr(float(value.imag))]}
    if isinstance(value, str):
        _spend(budget, len(value) // 100)
        return {"t": "str", "v": value}
    if isinstance(value, (list, tuple)):
        return {"t": type(value).__name__, "v": [_encode(item, depth + 1, budget) for item in value]}
    if isinstance(value, dict):
        if not all(isinstance(key, str) for key in value):
            return {"t": "unsupported", "v": "a dict whose keys are not all strings"}
        return {"t": "dict", "v": {key: _encode(item, depth + 1, budget) for key, item in value.items()}}
    return _encode_array(value, budget)


def _encode_array(value, budget: list):
    kind = type(value).__name__
    try:
        array = np.asarray(value)
        if array.dtype == object:
            array = np.asarray(value, dtype=complex)
            if not np.any(array.imag):
                array = array.real.copy()
    except Exception:  # any failure to convert means "not plain data"
        return {"t": "unsupported", "v": f"a {kind}, not a number or an array of numbers"}
    if array.dtype.kind not in "biufc":
        return {"t": "unsupported", "v": f"a {kind} of {array.dtype}, not of numbers"}
    _spend(budget, array.size)
    if array.ndim == 0:
        return _encode(array.item(), 0, budget)
    flat = array.ravel()
    payload = {"dtype": array.dtype.kind, "shape": list(array.shape),
               "real": [repr(float(x)) for x in flat.real]}
    if array.dtype.kind == "c":
        payload["imag"] = [repr(float(x)) for x in flat.imag]
    return {"t": "array", "v": payload}


def dump_answers(names, path, namespace) -> None:
    """Write the values of ``names`` found in ``namespace`` to ``path`` as JSON (runs in the student's kernel)."""
    result = {}
    for name in names:
        if name not in namespace:
            result[name] = {"t": "missing", "v": None}
            continue
        try:
            result[name] = encode(namespace[name])
        except Exception as exc:  # a hostile __array__ or __len__: the answer is simply unusable
            result[name] = {"t": "unsupported", "v": f"could not be read ({type(exc).__name__})"}
    Path(path).write_text(json.dumps(result))


def _sequence(payload) -> list:
    if not isinstance(payload, list):  # a string or a number would iterate or fail in ways of its own
        raise TypeError(f"expected a list, got {type(payload).__name__}")
    return payload


def checked(data):
    """``data`` if it is tagged data :func:`decode` reads, within :func:`encode`'s size limit; else a stand-in.

    Answers are written where the submission runs, which can bypass
    :func:`dump_answers` and write any JSON: a list of a million items, a
    malformed array. Such an answer costs that answer only: it becomes
    ``{"t": "unsupported", ...}``.

    Parameters
    ----------
    data
        Tagged data as read from JSON.

    Returns
    -------
    dict
        ``data`` itself, or an ``unsupported`` tagged value saying why.
    """
    # Tagged data spends about two items per value (the tag and its payload), an array one per number: four
    # per element is more than encode ever writes, and stops a forged answer long before it costs memory.
    budget, stack = 4 * MAX_ELEMENTS, [data]
    while stack:
        item = stack.pop()
        if isinstance(item, (list, dict)):
            budget -= len(item) + 1
            stack.extend(item.values() if isinstance(item, dict) else item)
        elif isinstance(item, str):
            budget -= len(item) // 100
        if budget < 0:
            return {"t": "unsupported", "v": f"more than {MAX_ELEMENTS} numbers or items"}
    try:
        decode(data)
    except ValueError:
        return {"t": "unsupported", "v": "data the grader cannot read back"}
    return data


def _number(text) -> float:
    return float(str(text))  # parses "inf", "nan" and decimal literals; evaluates nothing


def decode(data):
    """Rebuild a value from :func:`encode`'s tagged data, without evaluating anything.

    The data comes from where the submission ran, which can write anything
    there (a shape of ``inf``, a complex number of one part): every malformed
    input is a ``ValueError``, so that callers need catch only that.

    Raises
    ------
    ValueError
        For data that does not follow the tagged form.
    """
    try:
        return _decode(data)
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, OverflowError, RecursionError,
            MemoryError) as exc:
        raise ValueError(f"`data` is not a tagged value: {type(exc).__name__}: {exc}"[:300]) from None


def _decode(data):
    if not isinstance(data, dict) or set(data) != {"t", "v"}:
        raise ValueError(f"`data` must be a tagged value {{'t': kind, 'v': payload}}; got {data!r:.80}")
    kind, payload = data["t"], data["v"]
    if kind == "none":
        return None
    if kind == "ellipsis":
        return Ellipsis
    if kind == "bool":
        return bool(payload)
    if kind == "int":
        return int(str(payload)[:5000])
    if kind == "float":
        return _number(payload)
    if kind == "complex":
        real, imag = _sequence(payload)
        return complex(_number(real), _number(imag))
    if kind == "str":
        return str(payload)
    if kind in ("list", "tuple"):
        items = [_decode(item) for item in _sequence(payload)]
        return items if kind == "list" else tuple(items)
    if kind == "dict":
        return {str(key): _decode(item) for key, item in payload.items()}
    if kind == "array":
        real = np.array([_number(x) for x in payload["real"]], dtype=float)
        if payload["dtype"] == "c":
            real = real + 1j * np.array([_number(x) for x in payload["imag"]], dtype=float)
        shape = tuple(int(n) for n in _sequence(payload["shape"]))
        array = real.reshape(shape)
        if payload["dtype"] == "b":
            return array.astype(bool)
        if payload["dtype"] in "iu" and np.all(np.isfinite(array)) and np.all(array == np.round(array)):
            return array.astype(np.int64)
        return array
    if kind == "missing":
        return Missing("is not defined in the submission (its cell raised, timed out, or is missing)")
    if kind == "unsupported":
        return Unsupported(f"is {payload}")
    raise ValueError(f"unknown answer kind {kind!r}")
