"""A hostile student against the grader: every attack of issue 20 as a submitted notebook.

A small master (three questions, 6 points) is built; each attack is its
student version with q2 and q3 answered honestly (4 points), q1 left as the
stub, and cells that try to get q1's points, change somebody else's score, or
hurt the grader. One honest student (6 points) is graded in the same run, two
sandboxes at a time. Each attack must score exactly what its honest content
deserves (4), the honest student 6; no file outside the output folder may
change (the course folder and the installed package are hashed before and
after), nothing may keep running, and the grader's secret environment
variable may appear nowhere in the output folder.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import time
import uuid
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_raw_cell

import udk_notebooks
from udk_notebooks.assign import build_assignment, grade_folder, sandbox_problem
from udk_notebooks.assign.sandbox import Limits

pytestmark = [pytest.mark.slow,  # one fixture grades twelve notebooks: a minute or more
              pytest.mark.skipif(sandbox_problem() is not None, reason=f"no sandbox here: {sandbox_problem()}")]

MARKER = f"udk-attack-{uuid.uuid4().hex[:12]}"
"""Written into the command line of every process an attack starts, to find survivors."""

SECRET = f"grader-secret-{uuid.uuid4().hex}"
"""The value of an environment variable of the grader; it must never reach a submission."""

HONEST = {1: "vec = np.arange(3.0) * scale", 2: "word = 'udk'"}
"""q2 and q3 answered right (3 + 1 points); q1 (2 points) stays the stub `...`."""


def _master() -> nbformat.NotebookNode:
    raw, code, md = new_raw_cell, new_code_cell, new_markdown_cell
    cells = [
        raw("# ASSIGNMENT CONFIG\nname: tiny"),
        code("import numpy as np\nscale = 3.0"),
        raw("# BEGIN QUESTION\nname: q1\npoints: 2"),
        raw("# BEGIN SOLUTION"), code("double = 2 * scale  # SOLUTION"), raw("# END SOLUTION"),
        raw("# BEGIN TESTS"),
        code("# HIDDEN\nassert np.isclose(double, 6.0), 'the hidden q1 test failed'"),
        raw("# END TESTS"), raw("# END QUESTION"),
        raw("# BEGIN QUESTION\nname: q2\npoints: 3"),
        raw("# BEGIN SOLUTION"), code("vec = np.arange(3.0) * scale  # SOLUTION"), raw("# END SOLUTION"),
        raw("# BEGIN TESTS"), code("assert np.allclose(vec, [0.0, 3.0, 6.0])"), raw("# END TESTS"),
        raw("# END QUESTION"),
        raw("# BEGIN QUESTION\nname: q3\npoints: 1"),
        raw("# BEGIN SOLUTION"), code("word = 'udk'  # SOLUTION"), raw("# END SOLUTION"),
        raw("# BEGIN TESTS"), code("assert word == 'udk'"), raw("# END TESTS"), raw("# END QUESTION"),
        md("The end."),
    ]
    return new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                              "language": "python"}})


def _attacks(spec: Path, out: Path, course: Path) -> dict[str, str]:
    """Submission name to the extra cell source it runs after its honest answers."""
    package = Path(udk_notebooks.__file__).parent
    sleeper = f"import time\\n# {MARKER}\\nwhile True: time.sleep(0.2)"
    return {
        "reads_spec": f"""
import glob, os, re
found = []
candidates = [{str(spec)!r}, {str(course / "tiny.ipynb")!r}] + glob.glob('/proc/*/cmdline') + glob.glob('/proc/*/cwd/*')
for top in ('/tmp', '/submission', '/work', '/root', '/home', '/etc'):
    candidates += glob.glob(top + '/**/assignment.json', recursive=True)
for path in candidates:
    try:
        text = open(path, errors='replace').read()
    except OSError:
        continue
    found.append(path)
    for spec_path in re.findall(r'[^\\x00 ]*autograder[^\\x00 ]*', text):
        try:
            text += open(spec_path.rstrip('/') + '/assignment.json').read()
        except OSError:
            pass
    hit = re.search(r'isclose\\(double, ([0-9.]+)\\)', text)
    if hit:
        double = float(hit.group(1))
print('found', found)
""",
        "rewrites_spec": f"""
import json
try:
    data = json.load(open({str(spec)!r}))
    for q in data['questions']:
        for t in q['tests']:
            t['code'] = 'pass'
    json.dump(data, open({str(spec)!r}, 'w'))
except OSError as exc:
    print('spec:', exc)
""",
        "patches_package": f"""
import glob
for path in glob.glob({str(package)!r} + '/**/*.py', recursive=True):
    try:
        with open(path, 'a') as handle:
            handle.write('\\ndef run_case(*args, **kwargs):\\n    return True, ""\\n')
    except OSError as exc:
        print('package:', type(exc).__name__)
""",
        "detaches": f"""
import os, sys
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv(sys.executable, [sys.executable, '-c', "{sleeper}"])
    os._exit(0)
os.wait()
""",
        "rewrites_results": f"""
import subprocess, sys
code = '''
import glob, time
# {MARKER}
end = time.time() + 60
while time.time() < end:
    for path in glob.glob({str(out)!r} + '/**/*', recursive=True) + [{str(out / "scores.csv")!r}]:
        try:
            open(path, 'w').write('student,total\\\\nrewrites_results,100\\\\n')
        except OSError:
            pass
    time.sleep(0.1)
'''
subprocess.Popen([sys.executable, '-c', code], start_new_session=True, stdout=subprocess.DEVNULL,
                 stderr=subprocess.DEVNULL)
""",
        "reads_environment": f"""
import os, glob
double = os.environ.get('UDK_GRADER_SECRET', 'no secret in my environment')
stolen = []
for path in glob.glob('/proc/*/environ'):
    try:
        stolen.append(open(path, 'rb').read().decode(errors='replace'))
    except OSError:
        pass
print(dict(os.environ), stolen)
word_of_grader = ' '.join(stolen)
if 'UDK_GRADER_SECRET' in word_of_grader:
    double = word_of_grader
""",
        "fork_bomb": f"""
import os
while True:
    os.fork()
""",
        "floods_output": f"""
import os, sys
chunk = 'x' * 2**20
for _ in range(2048):  # 2 GiB through the kernel's output channel
    print(chunk)
""",
        "floods_stdout_and_disk": f"""
import os
chunk = b'y' * 2**20
for _ in range(2048):  # 2 GiB written to the kernel's own standard output, then to its folders
    os.write(1, chunk)
for folder in ('.', '/tmp'):
    try:
        with open(folder + '/big', 'wb') as handle:
            for _ in range(2048):
                handle.write(chunk)
    except OSError as exc:
        print(folder, type(exc).__name__)
""",
        "hogs_memory": f"""
import numpy as np
hog = np.ones(2**31)  # 16 GiB
""",
        "hogs_memory_slowly": f"""
hoard = []
while True:
    hoard.append(bytearray(2**26))  # 64 MiB at a time, each one touched
    hoard[-1][::4096] = b'x' * (2**26 // 4096)
""",
    }


def _tree_hashes(*folders: Path, skip: Path | None = None) -> dict[str, str]:
    hashes = {}
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            if skip is not None and (path == skip or skip in path.parents):
                continue
            if "__pycache__" in path.parts or not path.is_file():
                continue
            hashes[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return hashes


def _survivors() -> list[str]:
    """Command lines of processes still running with the attack marker."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if MARKER in cmdline:
            found.append(f"{entry.name}: {cmdline[:120]}")
    return found


@pytest.fixture(scope="module")
def attacked(tmp_path_factory):
    """The tiny master built, the attacks and one honest student graded together; what came out."""
    course = tmp_path_factory.mktemp("course")
    nbformat.write(_master(), course / "tiny.ipynb")
    build_assignment(course / "tiny.ipynb", course / "build", verify=False)
    spec = course / "build" / "autograder" / "assignment.json"
    out = tmp_path_factory.mktemp("graded")
    submissions = course / "submissions"
    submissions.mkdir()
    student = nbformat.read(course / "build" / "student" / "tiny.ipynb", as_version=4)
    answers = [cell for cell in student.cells if "otter_answer_cell" in cell.metadata.get("tags", [])]
    answers[1].source, answers[2].source = HONEST[1], HONEST[2]
    for name, attack in _attacks(spec, out, course).items():
        nb = nbformat.from_dict(json.loads(json.dumps(student)))
        nb.cells.append(new_code_cell(attack.strip()))
        nbformat.write(nb, submissions / f"{name}.ipynb")
    answers[0].source = "double = 2 * scale"
    nbformat.write(student, submissions / "honest.ipynb")
    package = Path(udk_notebooks.__file__).parent
    before = _tree_hashes(course, package)
    os.environ["UDK_GRADER_SECRET"] = SECRET
    try:
        table = grade_folder(spec.parent, submissions, out, time_limit=90, cell_time_limit=10, case_time_limit=10,
                             workers=2, limits=Limits(memory_bytes=3 * 2**30, processes=64,
                                                      file_bytes=32 * 2**20, folder_bytes=64 * 2**20))
    finally:
        del os.environ["UDK_GRADER_SECRET"]
    written = _tree_hashes(out)
    time.sleep(3)  # a process left behind would be rewriting the results now
    with table.open() as handle:
        rows = {row["student"]: row for row in csv.DictReader(handle)}
    return {"rows": rows, "before": before, "after": _tree_hashes(course, package), "written": written,
            "rewritten": _tree_hashes(out), "out": out, "survivors": _survivors()}


ATTACKS = sorted(_attacks(Path("spec"), Path("out"), Path("course")))


def test_the_honest_student_keeps_full_marks(attacked):
    row = attacked["rows"]["honest"]
    assert float(row["total"]) == 6.0, row


@pytest.mark.parametrize("attack", ATTACKS)
def test_an_attack_scores_what_its_honest_answers_deserve(attacked, attack):
    row = attacked["rows"][attack]
    assert [float(row["q1"]), float(row["q2"]), float(row["q3"]), float(row["total"])] == [0, 3, 1, 4], row


def test_no_file_outside_the_output_folder_changes(attacked):
    before, after = attacked["before"], attacked["after"]
    assert before.keys() == after.keys()
    assert [path for path in before if before[path] != after[path]] == []


def test_nothing_keeps_running_or_rewrites_the_results(attacked):
    assert attacked["survivors"] == []
    assert attacked["rewritten"] == attacked["written"]


def test_the_grader_environment_reaches_no_output(attacked):
    leaks = [str(path) for path in attacked["out"].rglob("*") if path.is_file() and SECRET.encode() in path.read_bytes()]
    assert leaks == []
    # the attack ran and its answer is shown: had the secret been readable, it would be there
    assert "no secret in my environment" in (attacked["out"] / "reads_environment.md").read_text()
