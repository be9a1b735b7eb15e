"""The suite's own wiring (tests/conftest.py): tests sharing a costly fixture run on one xdist worker.

A module- or session-scoped fixture is built once per worker that runs a test asking for it, so
the conftest puts every test sharing one (directly or through another fixture) in one
``xdist_group``. This module holds a pair of such tests of its own, so the checks below always
have something to check, whatever part of the suite is selected.
"""

from __future__ import annotations

import itertools

import pytest

_BUILDS: list[int] = []
# The group is named after the smallest fixture name of its connected part.
GROUP = min("test_suite_wiring.built_once", "test_suite_wiring.built_on_top")


@pytest.fixture(scope="module")
def built_once() -> int:
    """Stands for a costly module fixture (a site build): counts its builds in this process."""
    _BUILDS.append(1)
    return len(_BUILDS)


@pytest.fixture(scope="module")
def built_on_top(built_once: int) -> int:
    """A second costly fixture that needs the first: its tests belong in the same group."""
    return built_once + 1


def _group(item) -> str | None:
    marks = list(item.iter_markers("xdist_group"))
    return marks[0].args[0] if marks else None


def _items_using(session, fixture: str) -> list:
    return [item for item in session.items if fixture in getattr(item, "fixturenames", ())]


def test_a_module_fixture_puts_its_tests_in_one_group(request, built_once):
    users = _items_using(request.session, "built_once")
    assert request.node in users
    assert {_group(item) for item in users} == {GROUP}
    assert built_once == 1  # one build in this process: the tests of its group ran here


def test_a_fixture_built_on_another_joins_its_group(request, built_on_top):
    assert _group(request.node) == GROUP
    assert built_on_top == 2 and len(_BUILDS) == 1


def test_a_test_without_shared_fixtures_is_free(request, tmp_path):
    assert _group(request.node) is None  # tmp_path and request are pytest's: cheap, function-scoped


def test_every_collected_test_sharing_a_fixture_has_that_fixture_group(request):
    """Over the whole collection: tests sharing a site, a server or an executed lesson set share a group."""
    session = request.session
    for name in ("built_once", "built_site", "site", "executed_lessons", "lab_server", "voila", "built_sets"):
        users = _items_using(session, name)
        groups = {_group(item) for item in users}
        assert len(groups) <= 1 and None not in groups, f"tests using {name!r} are in groups {groups}"
    # Two different groups never share a costly fixture (they are connected parts).
    by_group: dict[str, set[str]] = {}
    for item in session.items:
        if _group(item) is not None:
            by_group.setdefault(_group(item), set()).update(item.fixturenames)
    for (g1, f1), (g2, f2) in itertools.combinations(by_group.items(), 2):
        common = {f for f in f1 & f2 if f.startswith(("site", "executed_lessons", "lab_server", "built_"))}
        assert not common, f"groups {g1} and {g2} both use {common}"


def test_under_loadgroup_the_node_id_carries_the_group(request, built_once):
    if not getattr(request.config.option, "loadgroup", False):
        pytest.skip("runs under pytest-xdist's --dist loadgroup (make test)")
    assert request.node.nodeid.endswith(f"@{GROUP}"), request.node.nodeid
