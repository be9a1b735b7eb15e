"""axe-core for the browser tests: found in (or installed by npm into) a cache folder, never from a CDN.

axe-core is the npm package ``axe-core`` (one file, ``axe.min.js``). It is looked up in
``$UDK_NPM_CACHE/node_modules/axe-core`` (default ``~/.cache/udk-notebooks/npm``); when it
is not there, ``npm install axe-core@4`` puts it there (``.ci/run`` makes sure npm exists).
Without npm the tests that need it skip, or fail when ``CI=true``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

AXE_VERSION = "4"
BLOCKING_IMPACTS = ("serious", "critical")

RUN_AXE_JS = """
async () => {
  const result = await axe.run(document, {resultTypes: ['violations']});
  return result.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.slice(0, 3).map(n => n.target.join(' ') + ' :: ' + n.failureSummary.split('\\n').slice(0, 2).join(' '))}));
}
"""


def npm_cache() -> Path:
    return Path(os.environ.get("UDK_NPM_CACHE", Path.home() / ".cache" / "udk-notebooks" / "npm"))


def axe_source() -> str:
    """The text of ``axe.min.js``, installed with npm into :func:`npm_cache` on first use."""
    script = npm_cache() / "node_modules" / "axe-core" / "axe.min.js"
    if not script.is_file():
        npm = shutil.which("npm")
        if npm is None:
            reason = "npm is missing (apt-get install -y npm): axe-core cannot be installed"
            if os.environ.get("CI", "").lower() == "true":
                pytest.fail(reason)
            pytest.skip(reason)
        npm_cache().mkdir(parents=True, exist_ok=True)
        done = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--prefix", str(npm_cache()),
                               f"axe-core@{AXE_VERSION}"], capture_output=True, text=True, timeout=600)
        if done.returncode != 0 or not script.is_file():
            pytest.fail(f"npm install axe-core@{AXE_VERSION} failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return script.read_text(encoding="utf-8")


def serious_violations(page, source: str) -> list[dict]:
    """axe-core's serious and critical violations on the page as it is now."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.add_script_tag(content=source)
    return [v for v in page.evaluate(RUN_AXE_JS) if v["impact"] in BLOCKING_IMPACTS]


def describe(violations: list[dict]) -> str:
    return "\n".join(f"- {v['impact']} {v['id']}: {v['help']}\n    " + "\n    ".join(v["nodes"]) for v in violations)
