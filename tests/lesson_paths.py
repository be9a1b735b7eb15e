"""Where the lesson notebooks are (shared by conftest.py and test modules; not a test module).

A module of its own, because ``from conftest import ...`` finds ``tests/browser/conftest.py``
instead when the whole suite is collected.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
LESSONS_ENV = "UDK_LESSONS_DIR"


def find_lessons_dir() -> Path:
    """Folder holding the lesson notebooks (``$UDK_LESSONS_DIR`` or ``lessons/``)."""
    override = os.environ.get(LESSONS_ENV)
    return Path(override).expanduser().resolve() if override else REPO_ROOT / "lessons"


def find_lesson_notebooks() -> list[Path]:
    """Every top-level ``*.ipynb`` in the lessons folder, sorted by name."""
    folder = find_lessons_dir()
    return sorted(folder.glob("*.ipynb")) if folder.is_dir() else []
