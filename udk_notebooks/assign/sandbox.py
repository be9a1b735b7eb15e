"""A bubblewrap sandbox for running one submission's code: :func:`run_sandboxed`.

Every process a submission starts (its kernel, the tests run on its answers)
runs inside ``bwrap`` (the Debian/Ubuntu package ``bubblewrap``) with

* new user, PID, network, IPC, UTS and cgroup namespaces: no network (only a
  loopback device), no view of other processes, no further user namespaces;
* a file system made of read-only bind mounts of the system (``/usr`` and a
  few files of ``/etc``) and of the Python environment (the interpreter's
  prefix, the virtual environment, this package's folder), a fresh ``/proc``
  and ``/dev`` (read-only but for a size-limited ``/dev/shm``), and two
  size-limited in-memory folders: ``/tmp`` and the working folder
  ``/submission``, which holds read-only copies of the files given (the
  notebook and its public checks, or a test job). Nothing else of the
  grader's file system is visible: not the autograder folder, the solutions,
  other submissions, the grader's home or temporary folder, nor the
  repository beyond the installed package;
* a cleared environment (only the variables given);
* limits: address space per process, file size, open files, and the number
  of processes (a ``pids`` cgroup when one can be created, else
  ``RLIMIT_NPROC``), set with ``prlimit`` before ``bwrap`` starts; a wall-time
  limit after which the sandbox is killed;
* ``--die-with-parent`` and a PID namespace of its own: when the sandbox's
  first process ends (or is killed) the kernel kills every process left in
  it, detached or not.

Results leave the sandbox through one pipe (a file descriptor given to the
command) and are read up to a byte limit; the command's standard output goes
to ``/dev/null`` and of its standard error only the tail is kept. A sandbox
that could not be set up raises :class:`SandboxUnavailable` rather than pass
for a submission that returned nothing.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Limits", "SandboxResult", "SandboxUnavailable", "WORKDIR", "run_sandboxed", "sandbox_problem"]

WORKDIR = "/submission"
"""The sandbox's working folder (in memory, size-limited)."""

_ETC_FILES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "fonts", "alternatives", "mime.types")
"""The parts of /etc a Python kernel needs: the dynamic linker's cache, fonts for matplotlib. Not passwd,
not shadow, not the host's resolver or hosts files."""

_SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")


class SandboxUnavailable(RuntimeError):
    """bubblewrap is missing or cannot create its namespaces here; the message says why and what to do."""


@dataclass(frozen=True)
class Limits:
    """Resource limits of one sandbox.

    Attributes
    ----------
    wall_seconds : float
        The sandbox is killed after this many seconds.
    memory_bytes : int
        Address space of each process (``RLIMIT_AS``): an allocation beyond it
        raises ``MemoryError`` in Python.
    processes : int
        Processes and threads at once in the sandbox.
    file_bytes : int
        Largest file a process may write (``RLIMIT_FSIZE``).
    folder_bytes : int
        Size of each in-memory folder (``/tmp`` and the working folder).
    result_bytes : int
        Largest result read back from the sandbox; more marks it truncated.
    """

    wall_seconds: float = 900.0
    memory_bytes: int = 4 * 2**30
    processes: int = 128
    file_bytes: int = 64 * 2**20
    folder_bytes: int = 256 * 2**20
    result_bytes: int = 64 * 2**20

    def __post_init__(self):
        if not (isinstance(self.wall_seconds, (int, float)) and 0 < self.wall_seconds < float("inf")):
            raise ValueError(f"`wall_seconds` must be a positive number of seconds; got {self.wall_seconds!r}")
        for name in ("memory_bytes", "processes", "file_bytes", "folder_bytes", "result_bytes"):
            value = getattr(self, name)
            if not (isinstance(value, int) and not isinstance(value, bool) and value > 0):
                raise ValueError(f"`{name}` must be a positive whole number; got {value!r}")
        if self.processes < 8:
            raise ValueError(f"`processes` must be at least 8 (a kernel runs several threads); got {self.processes}")


@dataclass(frozen=True)
class SandboxResult:
    """What came back from a sandbox.

    Attributes
    ----------
    returncode : int
        The command's exit status (negative: killed by that signal).
    data : bytes
        What the command wrote to its result pipe (at most ``Limits.result_bytes``).
    truncated : bool
        The command wrote more than ``Limits.result_bytes``.
    timed_out : bool
        The wall-time limit ended the sandbox.
    stderr_tail : str
        The last few hundred characters of the command's standard error.
    seconds : float
    """

    returncode: int
    data: bytes
    truncated: bool
    timed_out: bool
    stderr_tail: str
    seconds: float


def _bwrap() -> str | None:
    return shutil.which("bwrap") or ("/usr/bin/bwrap" if os.path.exists("/usr/bin/bwrap") else None)


@functools.lru_cache(maxsize=1)
def sandbox_problem() -> str | None:
    """Why submissions cannot be sandboxed here, or ``None`` when they can.

    Tries ``bwrap`` once (the answer is cached) with the namespaces
    :func:`run_sandboxed` uses, and checks that the number of processes can be
    limited (``RLIMIT_NPROC`` does not bind root, so root needs a ``pids``
    cgroup).
    """
    bwrap = _bwrap()
    if bwrap is None:
        return ("bubblewrap (`bwrap`) is not installed: install the package `bubblewrap` "
                "(apt-get install bubblewrap)")
    if shutil.which("prlimit") is None:
        return "`prlimit` (util-linux) is not installed: it sets the sandbox's resource limits"
    try:
        trial = subprocess.run([bwrap, "--ro-bind", "/", "/", "--unshare-all", "--unshare-user", "--disable-userns",
                                "--die-with-parent", "--new-session", "true"], capture_output=True, text=True,
                               timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"`bwrap` could not be started ({exc})"
    if trial.returncode != 0:
        return (f"`bwrap` cannot create user, PID and network namespaces here ({trial.stderr.strip()[-300:]}); "
                "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1) or run in a "
                "container that permits them")
    if os.geteuid() == 0 and _pids_cgroup_root() is None:
        return ("running as root, where RLIMIT_NPROC does not apply, and no writable `pids` cgroup was found "
                "to limit the number of processes: grade as an unprivileged user")
    return None


_LIMIT_FILES = {"pids": "pids.max", "memory": "memory.limit_in_bytes"}
"""cgroup v1 controller to the file holding its limit (cgroup v2 uses pids.max and memory.max)."""


def _own_cgroups() -> dict[str, str]:
    """Controller (``""`` for cgroup v2) to this process's cgroup path, from /proc/self/cgroup."""
    own = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return own
    for line in lines:
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(","):
            own[controller] = path
    return own


def _writable_child(base: Path, limit: str) -> bool:
    probe = base / f"udk-probe-{uuid.uuid4().hex[:8]}"
    try:
        probe.mkdir()
    except OSError:
        return False
    ok = (probe / limit).exists()
    try:
        probe.rmdir()
    except OSError:
        pass
    return ok


@functools.lru_cache(maxsize=1)
def _cgroup_bases() -> dict[str, tuple[Path, str]]:
    """Where a sandbox's cgroups can be made: ``{"pids": (folder, limit file), "memory": ...}``.

    Children of this process's own cgroups (so a container's limits keep
    applying), in cgroup v1 hierarchies or in a cgroup v2 group that delegates
    the controllers to its children.
    """
    own, bases = _own_cgroups(), {}
    for controller, limit in _LIMIT_FILES.items():
        if controller in own:
            base = Path("/sys/fs/cgroup") / controller / own[controller].lstrip("/")
            if (base / "cgroup.procs").exists() and _writable_child(base, limit):
                bases[controller] = (base, limit)
    if "" in own and len(bases) < len(_LIMIT_FILES):
        for root in (Path("/sys/fs/cgroup"), Path("/sys/fs/cgroup/unified")):
            base = root / own[""].lstrip("/")
            try:
                delegated = (base / "cgroup.subtree_control").read_text().split()
            except OSError:
                continue
            for controller, limit in (("pids", "pids.max"), ("memory", "memory.max")):
                if controller not in bases and controller in delegated and _writable_child(base, limit):
                    bases[controller] = (base, limit)
            break
    return bases


def _pids_cgroup_root():
    return _cgroup_bases().get("pids")


class _Cgroups:
    """The cgroups of one sandbox: created with their limits, removed after every process left is killed."""

    def __init__(self, limits: Limits):
        self.paths: list[Path] = []
        self.limits_processes = False
        values = {"pids": limits.processes, "memory": limits.memory_bytes}
        name = f"udk-sandbox-{uuid.uuid4().hex}"
        for controller, (base, limit) in _cgroup_bases().items():
            path = base / name
            try:
                if not path.exists():
                    path.mkdir()
                    self.paths.append(path)
                (path / limit).write_text(str(values[controller]))
            except OSError:
                continue
            self.limits_processes = self.limits_processes or controller == "pids"

    def join_command(self) -> list[str]:
        """A shell prefix that moves itself into every cgroup, then runs the rest of the command line."""
        if not self.paths:
            return []
        script = 'for g in $UDK_CGROUPS; do echo $$ > "$g/cgroup.procs" || exit 97; done; exec "$@"'
        return ["/bin/sh", "-c", script, "sh"]

    def environment(self) -> dict[str, str]:
        return {"UDK_CGROUPS": " ".join(str(p) for p in self.paths)} if self.paths else {}

    def remove(self) -> None:
        for path in self.paths:
            for _ in range(50):  # the PID namespace is gone with its first process; this sweeps stragglers
                try:
                    procs = [int(p) for p in (path / "cgroup.procs").read_text().split()]
                except OSError:
                    break
                if not procs:
                    break
                for pid in procs:
                    try:
                        os.kill(pid, 9)
                    except ProcessLookupError:
                        pass
                time.sleep(0.05)
            try:
                path.rmdir()
            except OSError:
                pass


def _python_mounts() -> list[str]:
    """Folders of the Python environment the sandbox sees read-only (real paths, outermost only)."""
    import udk_notebooks

    folders = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
               os.path.dirname(os.path.realpath(sys.executable)),
               os.path.dirname(os.path.abspath(udk_notebooks.__file__))}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        folders.add(sysconfig.get_paths()[key])
    real = sorted({os.path.realpath(f) for f in folders if f and os.path.isdir(f)} |
                  {os.path.abspath(f) for f in folders if f and os.path.isdir(f)})
    outermost = []
    for folder in real:
        if folder.startswith(_SYSTEM) or any(folder == o or folder.startswith(o + os.sep) for o in outermost):
            continue
        outermost.append(folder)
    return outermost


def _mount_arguments(files: dict[str, Path], folder_bytes: int) -> list[str]:
    args = []
    for path in _SYSTEM:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    for name in _ETC_FILES:
        args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    # bwrap's /dev is an in-memory folder of no size limit: read-only (its device nodes still open for writing),
    # with a size-limited /dev/shm, so that no writable folder can hold more than folder_bytes of memory.
    args += ["--proc", "/proc", "--dev", "/dev",
             "--size", str(folder_bytes), "--tmpfs", "/dev/shm", "--remount-ro", "/dev",
             "--size", str(folder_bytes), "--tmpfs", "/tmp",
             "--size", str(folder_bytes), "--tmpfs", WORKDIR]
    # The Python folders after the sandbox's own /tmp: a checkout (and its .venv) may live below /tmp, as a CI
    # clone often does, and mounted before it they would be hidden by it.
    for folder in _python_mounts():
        args += ["--ro-bind", folder, folder]
    for name, source in files.items():
        args += ["--ro-bind", str(source), f"{WORKDIR}/{name}"]
    return args


def _drain(stream, keep: int, sink: list, flag: list) -> None:
    """Read ``stream`` to its end, keeping at most ``keep`` bytes (so a flood cannot fill the grader's memory)."""
    size = 0
    while True:
        chunk = stream.read(1 << 16)
        if not chunk:
            break
        if size < keep:
            sink.append(chunk[: keep - size])
        size += len(chunk)
    flag.append(size > keep)
    stream.close()


def _tail(stream, sink: list) -> None:
    tail = b""
    while True:
        chunk = stream.read(1 << 16)
        if not chunk:
            break
        tail = (tail + chunk)[-2000:]
    sink.append(tail)
    stream.close()


def run_sandboxed(command: list[str], files: dict[str, str | Path], *, limits: Limits | None = None,
                  env: dict[str, str] | None = None) -> SandboxResult:
    """Run ``command`` in a new bubblewrap sandbox and return what it wrote to its result pipe.

    Parameters
    ----------
    command : list of str
        The program and its arguments, as seen inside the sandbox; the text
        ``{result_fd}`` in an argument is replaced by the number of the file
        descriptor the command writes its result to.
    files : dict
        Name in the working folder (:data:`WORKDIR`) to a file on the host;
        each is visible read-only, and nothing else of the host's files.
    limits : Limits, optional
    env : dict, optional
        The whole environment inside (``PATH``, ``HOME``, ``LANG`` and thread
        counts are set when absent).

    Returns
    -------
    SandboxResult

    Raises
    ------
    SandboxUnavailable
        When :func:`sandbox_problem` finds a reason, or the sandbox could not
        be set up (so that a broken grader never passes for a student's
        failure).
    """
    problem = sandbox_problem()
    if problem:
        raise SandboxUnavailable(problem)
    if not (isinstance(command, (list, tuple)) and command and all(isinstance(a, str) for a in command)):
        raise ValueError(f"`command` must be a non-empty list of strings; got {command!r}")
    limits = Limits() if limits is None else limits
    for name, source in files.items():
        if "/" in name or name in ("", ".", "..") or not Path(source).is_file():
            raise ValueError(f"`files` maps plain file names to existing files; got {name!r}: {str(source)!r}")
    inside = {"PATH": f"{os.path.dirname(sys.executable)}:/usr/local/bin:/usr/bin:/bin", "HOME": WORKDIR,
              "LANG": "C.UTF-8", "USER": "student", "TMPDIR": "/tmp", "OPENBLAS_NUM_THREADS": "1",
              "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "MPLBACKEND": "Agg", "PYTHONDONTWRITEBYTECODE": "1",
              "MPLCONFIGDIR": "/tmp/matplotlib", "IPYTHONDIR": "/tmp/ipython", "JUPYTER_RUNTIME_DIR": "/tmp/jupyter",
              "JUPYTER_CONFIG_DIR": "/tmp/jupyter-config", "JUPYTER_DATA_DIR": "/tmp/jupyter-data",
              **(env or {})}
    cgroups = _Cgroups(limits)
    if os.geteuid() == 0 and not cgroups.limits_processes:
        cgroups.remove()
        raise SandboxUnavailable("running as root, where RLIMIT_NPROC does not apply, and the sandbox's `pids` "
                                 "cgroup could not be created")
    read_end, write_end = os.pipe()
    command = [arg.replace("{result_fd}", str(write_end)) for arg in command]
    # Inside, a shell says "started" on standard output, the grader's pipe, then runs the command with its
    # standard output on /dev/null: no word on that pipe means the sandbox never got to the command.
    command = ["/bin/sh", "-c", 'printf started && exec "$@" >/dev/null', "sh", *command]
    prlimit = ["prlimit", f"--as={limits.memory_bytes}", f"--fsize={limits.file_bytes}", "--core=0",
               "--nofile=1024", f"--nproc={limits.processes}", "--"]
    bwrap = [_bwrap(), "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--new-session",
             "--uid", "1000", "--gid", "1000", "--hostname", "sandbox", "--clearenv",
             *[item for key, value in inside.items() for item in ("--setenv", key, value)],
             *_mount_arguments({k: Path(v) for k, v in files.items()}, limits.folder_bytes),
             "--chdir", WORKDIR, "--", *command]
    argv = cgroups.join_command() + prlimit + bwrap  # the cgroups are joined first: every process counts
    start = time.monotonic()
    data, truncated, tail = [], [], []
    try:
        process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, pass_fds=(write_end,),
                                   env={"PATH": "/usr/bin:/bin", **cgroups.environment()})
    finally:
        os.close(write_end)
    reader = threading.Thread(target=_drain, args=(os.fdopen(read_end, "rb"), limits.result_bytes, data, truncated),
                              daemon=True)
    errors = threading.Thread(target=_tail, args=(process.stderr, tail), daemon=True)
    started, extra = [], []
    greeting = threading.Thread(target=_drain, args=(process.stdout, 16, started, extra), daemon=True)
    reader.start()
    errors.start()
    greeting.start()
    timed_out = False
    try:
        process.wait(timeout=limits.wall_seconds)
    except subprocess.TimeoutExpired:
        timed_out = True
        process.kill()  # bwrap dies, its PID namespace with it (--die-with-parent)
        process.wait()
    finally:
        cgroups.remove()
    reader.join(timeout=30)
    errors.join(timeout=30)
    greeting.join(timeout=30)
    if not b"".join(started).startswith(b"started") and not timed_out:  # never the submission's doing: its code had not started
        stderr = (tail[0] if tail else b"").decode("utf-8", "replace")[-600:]
        raise SandboxUnavailable(f"the sandbox could not be set up (exit {process.returncode}): {stderr.strip()}")
    return SandboxResult(process.returncode, b"".join(data), bool(truncated and truncated[0]), timed_out,
                         (tail[0] if tail else b"").decode("utf-8", "replace")[-600:], time.monotonic() - start)
