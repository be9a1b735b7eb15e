"""The README's examples run as written and print what they say."""

import contextlib
import io
import pathlib
import re

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_readme_has_an_example():
    assert python_blocks(), "README.md must show a runnable ```python example"


def test_readme_example_runs_and_prints_what_the_comments_claim():
    for block in python_blocks():
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(block, str(README), "exec"), {})
        printed = out.getvalue().splitlines()
        claims = [line.split("#", 1)[1].strip() for line in block.splitlines() if line.startswith("print(") and "#" in line]
        for line, claim in zip(printed, claims):
            # A claim either restates the printed value, or ends with it after "=" or ":".
            expected = re.split(r"[=:]\s*", claim)[-1].strip()
            assert line.strip() == expected or expected in line, (line, claim)
