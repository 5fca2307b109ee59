"""What the child process does to contain a submission, without Docker.

- `apply_limits()`: resource limits the child sets on itself first thing, before it reads
  the submission: no core files, bounded file size and CPU time, bounded address space on the
  simulator (CUDA maps huge virtual ranges, so on a GPU the address space is left alone).
  Not a `preexec_fn`: the grading process has threads, and Python code run between fork and
  exec can deadlock on a lock another thread held (the parent then waits in Popen forever).
- `scrubbed_env()`: the child sees no secrets from the parent's environment.
- `Guard`: a PEP 578 audit hook, installed after the grader's own files are read and
  before the submission is, and impossible to remove from Python. It refuses process
  creation, signals, sockets and deletions, reads of the course's private files, and every
  write except the grader's own (made inside `Guard.writing()`, by the thread inside it only:
  the child's lookout thread writes while the submission runs in another).
The static policy (grader/containment/policy.py) already refuses the imports these need; the guard is
the second wall. docs/SECURITY.md lists what is and is not defended.
"""

from __future__ import annotations

import os
import resource
import sys
import threading
from contextlib import contextmanager
from pathlib import Path

from grader.paths import compile_cache_dir

GIB = 1 << 30
BLOCKED_EVENTS = (
    "os.system",
    "os.exec",
    "os.posix_spawn",
    "os.spawn",
    "os.fork",
    "os.forkpty",
    "os.kill",
    "os.killpg",
    "subprocess.Popen",
    "socket.connect",
    "socket.bind",
    "socket.sendto",
    "os.remove",
    "os.rmdir",
    "os.rename",
    "shutil.rmtree",
    "os.chmod",
    "os.chown",
    "os.truncate",
    "os.symlink",
    "os.link",
    "pty.spawn",
    "webbrowser.open",
)
KEPT_ENV = ("PATH", "LANG", "LC_ALL", "TMPDIR", "PYTHONPATH", "LD_LIBRARY_PATH", "ZEROGPU_BACKEND", "ZEROGPU_DOCTOR")
KEPT_PREFIXES = ("NUMBA_", "CUDA_", "NVIDIA_", "ZEROGPU_COMPILE_CACHE", "ZEROGPU_COMPUTE_CAPABILITY")


def scrubbed_env(home: Path, root: Path, backend: str, device: int | None = None) -> dict:
    env = {k: v for k, v in os.environ.items() if k in KEPT_ENV or k.startswith(KEPT_PREFIXES)}
    env.pop("ZEROGPU_SECRET", None)
    env["HOME"] = str(home)
    env.setdefault("ZEROGPU_COMPILE_CACHE", str(compile_cache_dir()))  # HOME moves; the cache stays
    env["ZEROGPU_BACKEND"] = backend
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(root), env.get("PYTHONPATH", "")) if p)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    if device is not None:  # one GPU per worker on a multi-GPU host
        visible = os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")
        env["CUDA_VISIBLE_DEVICES"] = visible[device] if len(visible) > device and visible[device] else str(device)
    return env


def apply_limits(cpu_seconds: int, address_space: int | None) -> None:
    """Limit this process (the child calls it on itself before loading the submission)."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, (8 * GIB, 8 * GIB))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 5))
    if address_space:
        resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))


class Guard:
    def __init__(self, denied_dirs, writable_dir: Path):
        self.denied = tuple(str(Path(d).resolve()) + os.sep for d in denied_dirs if d)
        self.writable = str(Path(writable_dir).resolve()) + os.sep
        self.active = False
        self._writers: set = set()
        """Threads inside `writing()`."""

    def install(self) -> None:
        sys.addaudithook(self._hook)
        self.active = True

    @contextmanager
    def writing(self):
        """The grader's own writes of results; nothing else may write."""
        me = threading.get_ident()
        self._writers.add(me)
        try:
            yield
        finally:
            self._writers.discard(me)

    def _hook(self, event: str, args) -> None:
        if not self.active or (self._writers and threading.get_ident() in self._writers):
            return
        if event in BLOCKED_EVENTS or event.startswith(("os.exec", "os.spawn", "os.posix_spawn")):
            raise PermissionError(f"a submission may not do this ({event})")
        if event == "open":
            path, mode, flags = (list(args) + [None, None])[:3]
            if not isinstance(path, (str, bytes, os.PathLike)):
                return  # a file descriptor the process already holds
            full = os.path.realpath(os.fsdecode(path))
            writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC)
            )
            if writes:
                raise PermissionError(f"a submission may not write files ({full})")
            if (full + os.sep).startswith(self.denied) or full.startswith(self.denied):
                raise PermissionError(f"a submission may not read {full}")
