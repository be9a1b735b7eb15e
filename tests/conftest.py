"""Shared fixtures and hooks for the notebook and browser tests.

Lessons are looked up in ``lessons/`` at the repository root, or in the folder
named by the environment variable ``UDK_LESSONS_DIR`` (useful to try the
notebook machinery against a scratch notebook outside the repository).

Any test that takes a ``lesson_notebook`` argument is parametrized over every
``*.ipynb`` found there (ids are the file names).
"""

from __future__ import annotations

import os
from pathlib import Path

# numpy's and scipy's OpenBLAS pools spin against each other on the tiny matrices of
# the solver (design notes, "Performance"); one thread keeps the suite and the kernels
# it starts (they inherit the environment) fast on two cores.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import pytest
from lesson_paths import LESSONS_ENV, REPO_ROOT, find_lesson_notebooks, find_lessons_dir  # noqa: F401

ARTIFACTS_DIR = REPO_ROOT / "test-artifacts"
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
