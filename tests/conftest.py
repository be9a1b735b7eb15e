"""Shared fixtures and hooks for the notebook and browser tests.

Lessons are looked up in ``lessons/`` at the repository root, or in the folder
named by the environment variable ``UDK_LESSONS_DIR`` (useful to try the
notebook machinery against a scratch notebook outside the repository).

Any test that takes a ``lesson_notebook`` argument is parametrized over every
``*.ipynb`` found there (ids are the file names).
"""

from __future__ import annotations

import inspect
import os
from pathlib import Path

# numpy's and scipy's OpenBLAS pools spin against each other on the tiny matrices of
# the solver (design notes, "Performance"); one thread keeps the suite and the kernels
# it starts (they inherit the environment) fast on two cores.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
# The chain explorer keeps sympy derivations on disk (widgets/chain.py); the suite keeps its own in the
# repository's build folder, shared by the xdist workers and the kernels, rather than in the user's home.
os.environ.setdefault("UDK_NOTEBOOKS_CACHE", str(Path(__file__).resolve().parent.parent / "build" / "test-cache"))

import pytest
from lesson_paths import LESSONS_ENV, REPO_ROOT, find_lesson_notebooks, find_lessons_dir, reused_site  # noqa: F401

ARTIFACTS_DIR = REPO_ROOT / "test-artifacts"
TESTS_DIR = Path(__file__).resolve().parent
CHROMIUM = Path("/usr/bin/chromium")


def pytest_report_header(config):
    lessons = find_lesson_notebooks()
    chromium = CHROMIUM if CHROMIUM.exists() else f"{CHROMIUM} (missing)"
    return [
        f"udk lessons: {find_lessons_dir()} ({len(lessons)} notebook(s))",
        f"udk browser: {chromium}",
    ]


def pytest_generate_tests(metafunc):
    if "lesson_notebook" in metafunc.fixturenames:
        lessons = find_lesson_notebooks()
        # An empty list gives a skipped test; the "lessons exist" check lives
        # in test_notebooks.py and fails loudly.
        metafunc.parametrize("lesson_notebook", lessons, ids=[p.name for p in lessons])


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def lessons_dir() -> Path:
    return find_lessons_dir()


@pytest.fixture(scope="session")
def artifacts_dir() -> Path:
    """``test-artifacts/`` at the repository root (git-ignored), created on demand."""
    ARTIFACTS_DIR.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS_DIR


# -- several workers (pytest-xdist: ``make test`` passes ``-n logical --dist loadgroup``) --------------------
#
# A module- or session-scoped fixture (the built site, the executed lessons, the built problem sets, a
# JupyterLab server and Chromium) is built once on every worker that runs a test asking for it. So that it
# is built once per session, the tests sharing such a fixture, directly or through another fixture, go to
# one ``xdist_group``: the groups are the connected parts of the graph "test -- shared fixture". The
# path fixtures of this file and the fixtures of pytest and its plugins are cheap and left out, and so is
# Chromium (it starts in a second): the Voila app tests and the JupyterLab tests may then run side by side.
# This file's costly fixtures (``built_site``) count like any other. Without ``--dist loadgroup`` the
# markers change nothing.
CHEAP_TO_REPEAT = {"chromium", "repo_root", "lessons_dir", "artifacts_dir"}


def _shared_fixtures(item) -> list[str]:
    """Module-, package- or session-scoped fixtures of ``item`` defined in a test module or a sub-conftest."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return []
    shared = []
    for name in info.names_closure:
        definitions = info.name2fixturedefs.get(name)
        if not definitions or definitions[-1].scope == "function" or name in CHEAP_TO_REPEAT:
            continue
        code = getattr(inspect.unwrap(definitions[-1].func), "__code__", None)
        source = Path(code.co_filename).resolve() if code is not None else None
        if source is None or TESTS_DIR not in source.parents:
            continue
        # A group name without "::", "[" or "@": xdist appends it to the node id after an "@".
        shared.append(f"{source.relative_to(TESTS_DIR).with_suffix('').as_posix().replace('/', '.')}.{name}")
    return shared


def _group_by_shared_fixtures(items) -> None:
    """Mark each test that shares a costly fixture with ``xdist_group(<its connected part>)``."""
    parent: dict[str, str] = {}

    def find(key: str) -> str:
        parent.setdefault(key, key)
        while parent[key] != key:
            parent[key] = parent[parent[key]]
            key = parent[key]
        return key

    shared_by_item = [_shared_fixtures(item) for item in items]
    for shared in shared_by_item:
        for other in shared:
            a, b = find(shared[0]), find(other)
            if a != b:
                parent[max(a, b)] = min(a, b)  # the root is the smallest name: a stable group name
    for item, shared in zip(items, shared_by_item):
        if shared:
            item.add_marker(pytest.mark.xdist_group(find(shared[0])))


def _put_groups_in_node_ids(config, items) -> None:
    """Append ``@group`` to the node ids where xdist could not (pytest >= 9.2, xdist <= 3.8).

    xdist's worker tells the scheduler a test's group by appending ``@group`` to its node id, but
    it writes ``item._nodeid``, which pytest 9.2 no longer reads (node ids became ``NodeId``
    objects): the groups were silently ignored (pytest-xdist issue 1386). Write the same id
    through the new field; with an older pytest or a fixed xdist the ids already end in it.
    """
    if not getattr(config.option, "loadgroup", False):
        return
    try:
        from _pytest.nodeid import NodeId
    except ImportError:  # pytest < 9.2: xdist's own renaming works
        return
    for item in items:
        names = sorted({str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
                        for mark in item.iter_markers("xdist_group")})
        if not names or item.nodeid.endswith("@" + "_".join(names)):
            continue
        item._id = NodeId.parse(f"{item.nodeid}@{'_'.join(names)}")
        if not item.nodeid.endswith("@" + "_".join(names)):
            raise RuntimeError(f"cannot put the xdist group into the node id of {item.nodeid}: "
                               "run with -n 0, or update tests/conftest.py for this pytest")


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(config, items):
    # Markers before xdist's hook reads them; the node ids after it (see _put_groups_in_node_ids).
    _group_by_shared_fixtures(items)
    result = yield
    _put_groups_in_node_ids(config, items)
    return result


CELL_TIMEOUT = 600  # seconds, per cell of an executed lesson

# The tests that read the executed lessons lesson by lesson (tests/test_notebooks.py).
_LESSON_CHECKS = ("test_lesson_executes", "test_lesson_shows_no_bare_object_repr")


@pytest.fixture(scope="session")
def executed_lessons(request, lessons_dir: Path) -> dict:
    """The lessons executed once each in static-export mode, two at a time: notebook -> notebook or exception.

    One execution serves both the lesson checks (tests/test_notebooks.py: every cell runs, no
    bare object repr) and the site (``built_site`` renders these notebooks): the suite executed
    every lesson twice before (a student kernel for the checks, ~100 s on two cores, and a
    static one for the site). A student's kernel (``%matplotlib widget``, live explorers) runs
    every lesson in tests/browser/test_every_lesson_browser.py, in JupyterLab. Every lesson
    is executed when a selected test needs the site; otherwise only the lessons of the
    selected lesson checks.
    """
    from udk_notebooks.site import execute_lessons

    items = request.session.items
    if any("built_site" in getattr(item, "fixturenames", ()) for item in items) and reused_site(lessons_dir) is None:
        chosen = set(sorted(lessons_dir.glob("*.ipynb")))  # what build_site renders
    else:
        chosen = {item.callspec.params["lesson_notebook"] for item in items if item.originalname in _LESSON_CHECKS}
    return execute_lessons(sorted(chosen), static=True, timeout=CELL_TIMEOUT, workers=2)


@pytest.fixture(scope="session")
def built_site(tmp_path_factory, lessons_dir: Path, executed_lessons: dict) -> Path:
    """The static site (``make site``), built once per session for the site tests and the site's browser tests.

    It renders the lessons of ``executed_lessons`` (executed once for the site and the lesson
    checks; asking for that fixture also keeps all of them in one xdist group).
    ``UDK_SITE_DIR=build/site`` reuses a site already built there (while developing the site), unless
    a lesson changed since it was built (:func:`udk_notebooks.site.stale_site`): then the tests fail and say so.
    """
    from udk_notebooks.site import build_site

    reused = reused_site(lessons_dir)
    if reused is not None:
        return reused
    out = tmp_path_factory.mktemp("site")
    build_site(out, lessons_dir, workers=2, log=lambda line: None, executed=executed_lessons)
    return out
