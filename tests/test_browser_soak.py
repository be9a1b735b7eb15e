"""benchmarks/browser_soak.py without a browser: its burners, its verdict on a run, its arguments."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

SOAK = Path(__file__).resolve().parents[1] / "benchmarks" / "browser_soak.py"


@pytest.fixture(scope="module")
def soak():
    spec = importlib.util.spec_from_file_location("browser_soak", SOAK)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_burners_run_until_stopped(soak):
    burners = soak.start_burners(1)
    try:
        assert all(b.is_alive() for b in burners)
    finally:
        soak.stop_burners(burners)
    assert not any(b.is_alive() for b in burners)
    with pytest.raises(ValueError, match="`count`"):
        soak.start_burners(-1)


def test_a_run_passes_only_when_its_tests_pass(soak, tmp_path: Path):
    good, bad = tmp_path / "test_good.py", tmp_path / "test_bad.py"
    good.write_text("import os\n\ndef test_one():\n    assert os.environ['UDK_LATENCY_SAMPLES'] == '3'\n")
    bad.write_text("def test_one():\n    assert 1 == 2\n")
    passed, seconds, summary = soak.run_once([str(good)], None, samples=3)
    assert passed and "1 passed" in summary and seconds > 0
    passed, _, summary = soak.run_once([str(bad)], None)
    assert not passed and "1 failed" in summary


@pytest.mark.parametrize("argv", [["--runs", "0"], ["--samples", "0"], ["--burners", "-1"]])
def test_bad_arguments_are_refused(soak, argv):
    with pytest.raises(SystemExit) as stopped:
        soak.main(argv)
    assert stopped.value.code == 2


def test_the_default_tests_cover_the_first_draw(soak):
    assert any("test_lesson_01_runs_and_slider_redraws" in t for t in soak.FIRST_DRAW)
    assert any("test_first_drag" in t for t in soak.FIRST_DRAW)
