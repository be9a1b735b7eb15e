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
    passed, _, summary = soak.run_once([str(good), str(bad)], None, samples=3, workers=2)  # under xdist too
    assert not passed and "1 failed" in summary and "1 passed" in summary


@pytest.mark.parametrize("argv", [["--runs", "0"], ["--samples", "0"], ["--burners", "-1"],
                                  ["--workers", "-1"]])
def test_bad_arguments_are_refused(soak, argv):
    with pytest.raises(SystemExit) as stopped:
        soak.main(argv)
    assert stopped.value.code == 2


def test_the_soak_set_covers_every_failure_mode_of_issue_24(soak):
    """One existing browser test per failure mode the issue names, and --help says which and why."""
    modes = " / ".join(soak.SOAK_SET)
    for mode in ("figure never appears", "first drag lost", "reopened lesson", "keyboard", "app page"):
        assert mode in modes, f"the soak set covers no {mode!r}"
    root = SOAK.parents[1]
    for node in soak.SOAK_SET.values():
        path, _, name = node.partition("::")
        source = (root / path).read_text(encoding="utf-8")
        assert f"def {name.split('[')[0]}(" in source, f"{node}: no such test"
    lessons = {node.split("[")[1].rstrip("]") for node in soak.SOAK_SET.values() if "test_every_lesson" in node}
    assert all((root / "lessons" / lesson).is_file() for lesson in lessons), lessons
    from udk_notebooks.widgets import EXPLORERS

    apps = {node.split("[")[1].rstrip("]") for node in soak.SOAK_SET.values() if "test_app_browser" in node}
    assert apps and apps <= set(EXPLORERS), apps
    for mode in soak.SOAK_SET:  # the help text names every mode and every test it runs
        assert mode in soak.__doc__
    for node in soak.SOAK_SET.values():
        assert node.split("::")[0].split("/")[-1] in soak.__doc__
