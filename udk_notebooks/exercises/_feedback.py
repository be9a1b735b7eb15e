"""Feedback for exercise checks: answer forms, a displayable verdict, a safe decorator.

Every check in ``udk_notebooks.exercises.lessonNN`` is written with these
pieces, so that a student who types the wrong *kind* of answer (a string for
a number, ``'no'`` for a yes/no question, an exception class) is told what
form is expected, and a wrong answer gets a short hint instead of a
traceback. Nothing here knows about mechanics; the lesson modules do.
"""

from __future__ import annotations

import functools
import html
import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["AnswerFormError", "Feedback", "number", "vector", "yes_no", "checker", "justification", "predicted"]

# Okabe-Ito bluish green and orange; the words "Correct." / "Not yet:" carry
# the verdict too, so colour is never the only cue.
_GREEN = "#009E73"
_AMBER = "#E69F00"
_CORRECT = "Correct."
_NOT_YET = "Not yet:"
_NOT_ATTEMPTED = "replace the None placeholder(s) with your answer and run the cell again."


class AnswerFormError(ValueError):
    """The answer has the wrong form; the message says which form is expected."""


@dataclass(frozen=True)
class Feedback:
    """The verdict of an exercise check.

    Parameters
    ----------
    correct : bool
        Whether the answer is accepted.
    message : str
        A short explanation (when correct) or hint (when not). The prefix
        ``"Correct."`` or ``"Not yet:"`` is added on display.

    Notes
    -----
    ``bool(feedback)`` is ``feedback.correct``, so tests can write
    ``assert check_1(answer)``. In a notebook the verdict shows as a green or
    amber box that starts with the word "Correct." or "Not yet:".
    """

    correct: bool
    message: str

    def __post_init__(self):
        if not isinstance(self.correct, (bool, np.bool_)):
            raise TypeError(f"`correct` must be True or False; got {self.correct!r}")
        if not isinstance(self.message, str):
            raise TypeError(f"`message` must be a str; got {type(self.message).__name__}")
        object.__setattr__(self, "correct", bool(self.correct))

    def __bool__(self) -> bool:
        return self.correct

    @property
    def text(self) -> str:
        """The verdict as one line of plain text, prefix included."""
        prefix = _CORRECT if self.correct else _NOT_YET
        message = self.message.strip()
        if message.startswith(prefix):
            return message
        return f"{prefix} {message}".rstrip()

    def __repr__(self) -> str:
        return self.text

    __str__ = __repr__

    def _repr_html_(self) -> str:
        colour = _GREEN if self.correct else _AMBER
        prefix = _CORRECT if self.correct else _NOT_YET
        rest = self.text[len(prefix):].strip()
        symbol = "&#10004;" if self.correct else "&#9656;"  # check mark / pointer: a second non-colour cue
        return (
            f'<div role="status" style="border-left: 6px solid {colour}; padding: 0.4em 0.8em; '
            f'margin: 0.3em 0; background: {colour}22;">'
            f"{symbol} <strong>{html.escape(prefix)}</strong> {html.escape(rest)}</div>"
        )


def _describe(answer) -> str:
    """A short, safe description of what the student entered, for messages."""
    if isinstance(answer, type):
        return f"the class {answer.__name__}"
    text = repr(answer)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{text} (of type {type(answer).__name__})"


def _real(value) -> float | None:
    """``value`` as a finite float when it is a real number, else None."""
    if isinstance(value, (bool, np.bool_, str, bytes, complex, np.complexfloating)) or value is None:
        return None
    if isinstance(value, numbers.Real):
        number = float(value)
    elif getattr(value, "is_number", False) and getattr(value, "is_real", False):
        # a sympy number such as sqrt(2) or Rational(1, 3)
        number = float(value)
    else:
        return None
    return number if math.isfinite(number) else None


def number(answer, *, name: str, unit: str = "") -> float:
    """Return ``answer`` as a finite real number, or say which form is expected.

    Parameters
    ----------
    answer : object
        What the student entered: an int, a float, a numpy scalar, a 0-d
        array or a real sympy number.
    name : str
        The variable's name, quoted in the message (e.g. ``"my_answer"``).
    unit : str, optional
        The SI unit the number is read in, quoted in the message.

    Returns
    -------
    float

    Raises
    ------
    AnswerFormError
        For bool, str, None, complex, NaN, infinity, arrays of more than one
        entry and anything else that is not one real number.
    """
    if isinstance(answer, np.ndarray) and answer.shape == ():
        answer = answer[()]
    value = _real(answer)
    if value is None:
        in_unit = f" (in {unit})" if unit else ""
        message = f"`{name}` should be one finite real number{in_unit}, like 9.81; got {_describe(answer)}"
        if isinstance(answer, (list, tuple, np.ndarray)) and np.size(np.asarray(answer, dtype=object)) == 1:
            message += "; take the number out of it with float(...)"
        raise AnswerFormError(message)
    return value


def vector(answer, *, name: str, shape: tuple) -> np.ndarray:
    """Return ``answer`` as a float array of the given shape, or say which form is expected.

    Parameters
    ----------
    answer : array_like
        What the student entered: a list, tuple, numpy array or sympy Matrix
        of real numbers. A column or row matrix is accepted for a 1-D shape.
    name : str
        The variable's name, quoted in the message.
    shape : tuple of int
        The expected shape, e.g. ``(2,)`` or ``(1, 2)``.

    Returns
    -------
    ndarray, shape ``shape``

    Raises
    ------
    AnswerFormError
        When an entry is not a finite real number (bool, str, complex, NaN,
        ...) or the shape differs.
    """
    shape = tuple(int(n) for n in shape)
    expected = f"`{name}` should be an array of shape {shape} of finite real numbers, like np.zeros({shape})"
    if isinstance(answer, (str, bytes, type)) or answer is None or _real(answer) is not None:
        raise AnswerFormError(f"{expected}; got {_describe(answer)}")
    if hasattr(answer, "tolist") and not isinstance(answer, np.ndarray):
        answer = answer.tolist()  # sympy Matrix -> nested lists of sympy numbers
    try:
        raw = np.asarray(answer, dtype=object)
    except (TypeError, ValueError):
        raise AnswerFormError(f"{expected}; got {_describe(answer)}") from None
    if raw.ndim == 0 or raw.dtype == object and any(isinstance(x, (list, tuple)) for x in raw.flat):
        raise AnswerFormError(f"{expected}; got {_describe(answer)}")
    entries = [_real(x) for x in raw.flat]
    if any(x is None for x in entries):
        bad = next(x for x in raw.flat if _real(x) is None)
        raise AnswerFormError(f"{expected}; it contains {_describe(bad)}")
    values = np.array(entries, dtype=float).reshape(raw.shape)
    if len(shape) == 1 and values.size == shape[0] and values.ndim == 2 and 1 in values.shape:
        values = values.reshape(shape)  # a column or row matrix for a vector
    if values.shape != shape:
        raise AnswerFormError(f"{expected}; got shape {values.shape}")
    return values


_YES = {"yes", "y"}
_NO = {"no", "n"}


def yes_no(answer, *, name: str) -> bool:
    """Return ``answer`` as a bool: True/False, or the strings "yes"/"no" in any case.

    Parameters
    ----------
    answer : bool or str
        ``True``, ``False``, ``"yes"`` or ``"no"`` (case and surrounding
        spaces do not matter).
    name : str
        The variable's name, quoted in the message.

    Returns
    -------
    bool

    Raises
    ------
    AnswerFormError
        For anything else, including 0, 1, None and other strings.
    """
    if isinstance(answer, (bool, np.bool_)):
        return bool(answer)
    if isinstance(answer, str):
        word = answer.strip().lower()
        if word in _YES:
            return True
        if word in _NO:
            return False
    raise AnswerFormError(f"`{name}` should be True or False (or the word 'yes' or 'no'); got {_describe(answer)}")


def checker(expected_form: str) -> Callable[[Callable[..., Feedback]], Callable[..., Feedback]]:
    """Decorate a check function so that it always returns a :class:`Feedback`.

    Parameters
    ----------
    expected_form : str
        What the answer should look like, e.g. ``"a number in m/s^2"``;
        quoted when the check cannot read the answer.

    Returns
    -------
    callable
        A decorator. The decorated check returns the function's
        :class:`Feedback`; an :class:`AnswerFormError` becomes
        ``Feedback(False, <its message>)``; any other exception becomes
        ``Feedback(False, "could not check ... expected form: ...")``; when
        every positional argument is still the placeholder ``None``, the feedback says
        the exercise is not attempted yet. A student never sees a traceback
        from a check.
    """
    if not isinstance(expected_form, str) or not expected_form.strip():
        raise TypeError("`expected_form` must be a non-empty str describing the answer, e.g. 'a number in m'")

    def decorate(check):
        @functools.wraps(check)
        def wrapper(*args, **kwargs) -> Feedback:
            # the answers are the positional arguments; keywords are options such as an explorer
            if args and all(answer is None for answer in args):
                return Feedback(False, _NOT_ATTEMPTED)
            try:
                result = check(*args, **kwargs)
            except AnswerFormError as exc:
                return Feedback(False, str(exc))
            except Exception as exc:  # noqa: BLE001 - a check must never show a student a traceback
                reason = f"{type(exc).__name__}: {exc}".strip().rstrip(":")
                return Feedback(False, f"could not check this answer ({reason}); expected form: {expected_form}")
            if not isinstance(result, Feedback):
                return Feedback(False, f"could not check this answer; expected form: {expected_form}")
            return result

        wrapper.expected_form = expected_form
        return wrapper

    return decorate


MIN_JUSTIFICATION_WORDS = 5
"""The fewest words a justification must have: a reason, not a bare restatement of the answer."""


def justification(answer, *, name: str = "justification") -> str:
    """Return the student's reasoning as a stripped string, or say which form is expected.

    Parameters
    ----------
    answer : str
        A sentence or two, written before running any code.
    name : str
        The variable's name, quoted in the message.

    Returns
    -------
    str

    Raises
    ------
    AnswerFormError
        When ``answer`` is not a string or has fewer than ``MIN_JUSTIFICATION_WORDS`` words.
    """
    form = (f"`{name}` should be a sentence (a str of at least {MIN_JUSTIFICATION_WORDS} words) saying why, "
            "written before you run anything")
    if not isinstance(answer, str):
        raise AnswerFormError(f"{form}; got {_describe(answer)}")
    text = " ".join(answer.split())
    if len(text.split()) < MIN_JUSTIFICATION_WORDS:
        raise AnswerFormError(f"{form}; got {len(text.split())} word(s)")
    return text


def predicted(correct: bool, reasoning: str, model_answer: str, hint: str = "") -> Feedback:
    """The verdict of a predict-and-justify exercise: the prediction judged, the reasoning shown.

    The prediction is checked by the caller against a computation; a
    justification cannot be graded by a machine, so it is shown beside the
    model answer for the student to compare, whatever the verdict.

    Parameters
    ----------
    correct : bool
        Whether the prediction agrees with the computation.
    reasoning : str
        The student's justification (see :func:`justification`).
    model_answer : str
        The reasoning a lecturer would give, shown in both cases.
    hint : str, optional
        Said first when the prediction is wrong.

    Returns
    -------
    Feedback
    """
    lead = "Your prediction is right. " if correct else (hint.rstrip() + " " if hint else "the prediction is wrong. ")
    return Feedback(bool(correct), f"{lead}Compare your reasoning, \"{reasoning}\", with the model answer: {model_answer}")
