"""Where the lesson notebooks are, and the built site the tests may reuse (shared by conftest.py and test modules).

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


def reused_site(lessons_dir: Path) -> Path | None:
    """The site ``UDK_SITE_DIR`` names, if it holds one; a site older than the lessons fails the tests that need it."""
    reuse = os.environ.get("UDK_SITE_DIR")
    if not reuse or not (Path(reuse) / "index.html").is_file():
        return None
    import pytest

    from udk_notebooks.site import stale_site

    reason = stale_site(reuse, lessons_dir)
    if reason:  # its pages would test the lessons as they were, not as they are
        pytest.fail(f"UDK_SITE_DIR={reuse} is stale: {reason}. Rebuild it (python -m udk_notebooks.site {reuse}, "
                    "or make site for build/site) or unset UDK_SITE_DIR", pytrace=False)
    return Path(reuse)
