"""A built site's stamp: ``UDK_SITE_DIR`` reuses a site only while its lessons are the ones in ``lessons/``.

``build_site`` writes the hash of every lesson it rendered, last; ``stale_site`` compares them with the
lessons now. The browser tests are not run here: tiny lessons, rendered from executions given to
``build_site`` (no kernel), are enough to check the stamp.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from udk_notebooks.site import SITE_STAMP, _write_stamp, build_site, stale_site


def _lesson(folder: Path, name: str, text: str) -> Path:
    import nbformat
    import nbformat.v4 as v4

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    nbformat.write(v4.new_notebook(cells=[v4.new_markdown_cell(f"# {text}"), v4.new_code_cell("1 + 1")]), path)
    return path


def _static(path: Path):
    """The lesson as if executed for a static export (no kernel runs it here)."""
    import nbformat

    nb = nbformat.read(path, as_version=4)
    nb.metadata["udk_static_export"] = True
    return nb


def _build(site: Path, lessons: Path, failing: Path | None = None) -> None:
    executed = {path: (RuntimeError("no kernel here") if path == failing else _static(path))
                for path in sorted(lessons.glob("*.ipynb"))}
    build_site(site, lessons, executed=executed, log=lambda line: None)


def _stamp(site: Path, lessons: Path) -> None:
    """What a build leaves that the stamp check reads (an index and the stamp), without rendering pages."""
    site.mkdir(exist_ok=True)
    (site / "index.html").write_text("<html></html>", encoding="utf-8")
    _write_stamp(site, sorted(lessons.glob("*.ipynb")))


@pytest.fixture
def course(tmp_path: Path) -> tuple[Path, Path]:
    lessons = tmp_path / "lessons"
    _lesson(lessons, "01_first.ipynb", "First")
    _lesson(lessons, "02_second.ipynb", "Second")
    site = tmp_path / "site"
    _stamp(site, lessons)
    return site, lessons


def test_build_site_stamps_its_lessons_last(tmp_path: Path):
    """A site is current once built; a rebuild that stops part-way leaves no stamp (stale, not half-new)."""
    lessons, site = tmp_path / "lessons", tmp_path / "site"
    _lesson(lessons, "01_first.ipynb", "First")
    _lesson(lessons, "02_second.ipynb", "Second")
    _build(site, lessons)
    assert stale_site(site, lessons) == ""
    stamp = json.loads((site / SITE_STAMP).read_text(encoding="utf-8"))
    assert sorted(stamp["lessons"]) == ["01_first.ipynb", "02_second.ipynb"]
    _lesson(lessons, "01_first.ipynb", "First, revised")
    assert stale_site(site, lessons) == "01_first.ipynb changed after the site was built"
    with pytest.raises(RuntimeError, match="1 lesson"):
        _build(site, lessons, failing=lessons / "01_first.ipynb")
    assert (site / "index.html").is_file() and not (site / SITE_STAMP).exists()
    assert "has no build-stamp.json" in stale_site(site, lessons)


def test_a_changed_added_or_removed_lesson_makes_it_stale(course):
    site, lessons = course
    assert stale_site(site, lessons) == ""
    _lesson(lessons, "02_second.ipynb", "Second, revised")
    assert stale_site(site, lessons) == "02_second.ipynb changed after the site was built"
    _stamp(site, lessons)
    assert stale_site(site, lessons) == ""
    _lesson(lessons, "03_third.ipynb", "Third")
    assert stale_site(site, lessons) == f"03_third.ipynb was added to {lessons} after the site was built"
    _stamp(site, lessons)
    (lessons / "01_first.ipynb").unlink()
    assert stale_site(site, lessons) == f"01_first.ipynb is no longer in {lessons}, but the site still has its page"


def test_a_site_without_a_readable_stamp_is_stale(course):
    site, lessons = course
    (site / SITE_STAMP).write_text("{not json", encoding="utf-8")
    assert stale_site(site, lessons).startswith(f"{site}/{SITE_STAMP} cannot be read (JSONDecodeError")
    (site / SITE_STAMP).unlink()  # a site built before the stamp existed
    assert "has no build-stamp.json" in stale_site(site, lessons)
    assert stale_site(site.parent / "nowhere", lessons).endswith("holds no built site (no index.html)")


def test_the_test_suite_refuses_to_reuse_a_stale_site(course, monkeypatch):
    from lesson_paths import reused_site

    site, lessons = course
    monkeypatch.setenv("UDK_SITE_DIR", str(site))
    assert reused_site(lessons) == site
    _lesson(lessons, "01_first.ipynb", "First, revised")
    with pytest.raises(pytest.fail.Exception, match="UDK_SITE_DIR=.* is stale: 01_first.ipynb changed"):
        reused_site(lessons)
    monkeypatch.setenv("UDK_SITE_DIR", str(site.parent / "empty"))
    assert reused_site(lessons) is None  # no site there: the session builds its own


@pytest.mark.parametrize("stamp", ['{"lessons": ["01_first.ipynb"]}', '["01_first.ipynb"]', '{"lessons": {"01_first.ipynb": 1}}'])
def test_a_stamp_of_the_wrong_shape_is_a_reason_not_a_crash(course, stamp):
    site, lessons = course
    (site / SITE_STAMP).write_text(stamp, encoding="utf-8")
    assert stale_site(site, lessons).startswith(f"{site}/{SITE_STAMP} cannot be read")


def test_a_missing_lessons_folder_is_refused_by_name(course):
    site, lessons = course
    with pytest.raises(FileNotFoundError, match="`lessons_dir`"):
        stale_site(site, lessons.parent / "no-such-folder")
