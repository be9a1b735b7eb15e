"""What the lessons and the site say, read from their sources (nothing is executed).

- No lesson, site page or package text names a source document by its file name
  (``000_e1758cfb02f3652c.txt``, "seed file", "seed 002"): the papers are cited by
  author, year, title and equation number.
- Every axis label written in a lesson's code (``xlabel=...``, ``set_ylabel(...)``)
  ends with a unit in parentheses or brackets, ``(1)`` or ``[-]`` for a pure number.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import nbformat
import pytest
from lesson_paths import REPO_ROOT, find_lesson_notebooks

from test_explorer_labels import _has_unit

SEED_NAME = re.compile(r"\b\d{3}_[0-9a-f]{16}(\.txt)?\b|\bseed[ -]?files?\b|\bseed\s+0\d\d\b", re.IGNORECASE)
LABEL = re.compile(r"""(?:\b[xy]label\s*=\s*|\bset_[xy]label\(\s*)r?(["'])(?P<text>(?:(?!\1).)*)\1""")
PACKAGE_TEXT = sorted((REPO_ROOT / "udk_notebooks").rglob("*.py")) + [REPO_ROOT / "README.md"]


def _seed_names(text: str) -> list[str]:
    return [match.group(0) for match in SEED_NAME.finditer(text)]


def test_seed_pattern_finds_file_names_and_spares_random_seeds():
    assert _seed_names("as in seed file 000_e1758cfb02f3652c.txt, Eq. (7)") == ["seed file", "000_e1758cfb02f3652c.txt"]
    assert _seed_names("the paper (seed 002) says") == ["seed 002"]
    assert _seed_names("rng = np.random.default_rng(2005)  # a fixed seed so that every run agrees") == []


@pytest.mark.parametrize("notebook", find_lesson_notebooks(), ids=lambda path: path.name)
def test_lesson_cites_papers_not_files(notebook: Path):
    cells = nbformat.read(notebook, as_version=4).cells
    found = [f"cell {k}: {name!r}" for k, cell in enumerate(cells) for name in _seed_names(cell.source)]
    assert not found, f"{notebook.name} names source files; cite author, year, title and equation:\n" + "\n".join(found)


def test_package_and_site_cite_papers_not_files():
    found = [f"{path.relative_to(REPO_ROOT)}: {name!r}" for path in PACKAGE_TEXT
             for name in _seed_names(path.read_text(encoding="utf-8"))]
    assert not found, "source file names in the package or README (the site's pages come from these):\n" + "\n".join(found)


def test_site_index_cites_no_file(tmp_path: Path):
    from udk_notebooks.site import _index_page, lesson_info

    page = _index_page([lesson_info(path) for path in find_lesson_notebooks()], "owner/repo")
    assert "Udwadia-Kalaba" in page and not _seed_names(page)


@pytest.mark.parametrize("notebook", find_lesson_notebooks(), ids=lambda path: path.name)
def test_lesson_axis_labels_carry_units(notebook: Path):
    cells = nbformat.read(notebook, as_version=4).cells
    missing = [f"cell {k}: {match.group('text')!r}" for k, cell in enumerate(cells) if cell.cell_type == "code"
               for match in LABEL.finditer(cell.source)
               if match.group("text").strip() and not _has_unit(match.group("text"))]
    assert not missing, f"{notebook.name}: axis labels without a unit in () or []:\n" + "\n".join(missing)


def test_readme_pendulum_pull_is_the_printed_vector():
    """The README's sentence on the pendulum's pull at release agrees with the printed F^L (run by test_readme).

    From rest the ideal force is ``m g cos(theta)`` along the rod towards the pivot: with ``m = 1``,
    ``g = 9.81`` and ``cos(theta) = 0.8``, ``7.848 * (-0.6, 0.8)``.
    """
    text = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    printed = re.search(r'print\(explorer\.drawn_forces\(\)\["ideal"\]\.round\(3\)\)\s+#\s*\[(\S+)\s+(\S+)\]', text)
    product = re.search(r"`9\.81 \* 0\.8 = (\S+)` N here, `(\S+) \* \((\S+), (\S+)\)` as printed", text)
    assert printed and product, "the README's pendulum example or its sentence on F^L moved: update this test"
    pull, pull_again, along_x, along_y = map(float, product.groups())
    assert pull == pull_again == round(1.0 * 9.81 * 0.8, 3)
    assert [round(pull * along_x, 3), round(pull * along_y, 3)] == [float(v) for v in printed.groups()]
    assert math.hypot(along_x, along_y) == 1.0  # a unit vector, towards the pivot from (0.6 l, -0.8 l)
