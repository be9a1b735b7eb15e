"""Exercise checks for the lessons.

Each lesson's checks live in ``udk_notebooks.exercises.lessonNN`` as
functions ``check_1(answer)``, ``check_2(answer)``, ... that return a
:class:`Feedback` and never raise: a notebook imports the module once
(``from udk_notebooks.exercises import lesson01 as ex``) and calls
``ex.check_1(my_answer)`` in the exercise cell, so the cell works after a
kernel restart and a student cannot break a check by redefining a variable.
Expected answers are computed from the package by a route independent of
the one the lesson shows, never stored as literals.

The building blocks (answer forms, the verdict, the decorator) are in
:mod:`udk_notebooks.exercises._feedback` and re-exported here.

Importing this package inside IPython also registers a plain-words message for a
``NameError`` (:mod:`udk_notebooks.exercises._restart`): an exercise cell run
after *Kernel > Restart* without the lesson's Setup cell says to run Setup first,
instead of showing a traceback.
"""

from . import _restart
from ._feedback import AnswerFormError, Feedback, checker, justification, number, predicted, vector, yes_no

_restart.install()  # no-op outside IPython

__all__ = ["AnswerFormError", "Feedback", "number", "vector", "yes_no", "checker", "justification", "predicted"]
