"""`udk_notebooks._symbols`: the catalogue's functions of time are sympy.physics' dynamicsymbols, built without it."""

from __future__ import annotations

import pytest
import sympy as sm
from sympy.physics.mechanics import dynamicsymbols

from udk_notebooks._symbols import TIME, time_functions
from udk_notebooks.examples import chain, kepler
from udk_notebooks.model import TIME as MODEL_TIME


@pytest.mark.parametrize("names", ["x", "x y", "x_c x y phi", "x1:4", "x1:2", "theta"])
def test_time_functions_are_dynamicsymbols(names):
    ours, theirs = time_functions(names), dynamicsymbols(names)
    assert ours == theirs
    assert type(ours) is type(theirs)  # one expression for one name, a list for several
    if isinstance(ours, list):
        assert [hash(a) for a in ours] == [hash(b) for b in theirs]
        assert all(f.args == (TIME,) for f in ours)


def test_time_is_the_time_of_dynamicsymbols_and_of_the_model():
    assert TIME == dynamicsymbols._t and MODEL_TIME is TIME
    x = time_functions("x")
    assert sm.diff(x, TIME) == dynamicsymbols("x", 1)  # a derivative in our time is sympy.physics' x'


def test_a_catalogue_model_is_the_model_written_with_dynamicsymbols():
    x, y = dynamicsymbols("x y")
    model = chain.cartesian_pendulum()
    assert list(model.coordinates) == [x, y]
    assert model.phi.has(x) and model.phi.has(y)  # the constraint is written in the user's x(t), y(t)
    assert set(kepler.model().coordinates) == set(dynamicsymbols("x y"))


@pytest.mark.parametrize("bad", ["", "   ", None, 3, ["x"]])
def test_time_functions_refuses_what_is_not_a_string_of_names(bad):
    with pytest.raises(ValueError, match="`names` must be a non-empty string"):
        time_functions(bad)
