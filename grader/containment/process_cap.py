"""How many processes and threads a sandboxed submission may have at once.

A fork bomb that gets past the static policy and the guard (libc's fork through ctypes, say)
must fail at a cap, not fill the host's process table until the time limit. Two walls, because
each holds only somewhere:
- `RLIMIT_NPROC`, set by the child on itself inside bubblewrap's user namespace, where the
  kernel counts the namespace's own tasks (the user's other processes do not count). The
  kernel never enforces it on uid 0, so a grader running as root needs the second:
- a `pids` cgroup with `pids.max`, which the grader makes where it may (cgroup v1's `pids`
  hierarchy, or v2 where its own cgroup delegates `pids`) and moves the sandbox into before
  bubblewrap starts.
Where neither holds (root, no `pids` cgroup to use), `NamespaceWatch` counts the sandbox's
processes from outside, a few times a second, and the grader ends the sandbox past the cap:
not a hard limit (a fork bomb gets a few hundred processes further between two looks), but
the host's process table is not filled until the time limit.
"""

from __future__ import annotations

import atexit
import os
import resource
import threading
import time
from pathlib import Path

PROCESS_CAP = 2048
"""Tasks (processes and threads) at once. The simulator runs a thread per GPU thread of a block
(up to 1024), on top of Python's, numba's and the CUDA driver's own."""
CGROUP_ROOT = Path("/sys/fs/cgroup")
CGROUP_PREFIX = "zerogpu-"


def limit_own_processes(cap: int = PROCESS_CAP) -> None:
    """The child, inside the sandbox, before anything of the submission's runs."""
    resource.setrlimit(resource.RLIMIT_NPROC, (cap, cap))


def _cgroup_parent() -> Path | None:
    """A folder where a new cgroup gets a `pids.max`, or None."""
    v1 = CGROUP_ROOT / "pids"
    if (v1 / "cgroup.procs").exists() and os.access(v1, os.W_OK):
        return v1
    try:
        own = next(
            line.split(":", 2)[2].strip()
            for line in Path("/proc/self/cgroup").read_text().splitlines()
            if line.startswith("0::")
        )
    except (OSError, StopIteration):
        return None
    v2 = CGROUP_ROOT / own.lstrip("/")
    try:
        delegated = "pids" in (v2 / "cgroup.subtree_control").read_text().split()
    except OSError:
        return None
    return v2 if delegated and os.access(v2, os.W_OK) else None


def new_cgroup(cap: int = PROCESS_CAP) -> Path | None:
    """A fresh cgroup holding at most `cap` tasks, or None where this process cannot make one."""
    parent = _cgroup_parent()
    if parent is None:
        return None
    _remove_leftovers(parent)
    try:
        path = Path(os.path.join(parent, f"{CGROUP_PREFIX}{os.getpid()}-{time.monotonic_ns()}"))
        path.mkdir()
    except OSError:
        return None
    try:
        (path / "pids.max").write_text(str(cap))
    except OSError:
        remove_cgroup(path)
        return None
    return path


def enter_then_exec(command: list, cgroup: Path) -> list:
    """`command`, started by a shell that first moves itself into `cgroup`: everything the
    command starts is counted from its first instruction (no window between start and move)."""
    return ["/bin/sh", "-c", 'echo $$ > "$0" && exec "$@"', str(cgroup / "cgroup.procs"), *command]


_pending: set = set()
"""Cgroups still to remove; a grader on its way out waits briefly for them (`_remove_pending`)."""


def remove_cgroup(path: Path, wait: float = 5.0) -> None:
    """Remove `path` once its last task has gone (the kernel ends a PID namespace's tasks after
    its first one, not at once); a background thread keeps trying for `wait` seconds."""
    if _try_rmdir(path):
        return
    _pending.add(path)

    def keep_trying():  # past `wait` it stays pending: the grader tries again as it exits
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if _try_rmdir(path):
                _pending.discard(path)
                return
            time.sleep(0.05)

    threading.Thread(target=keep_trying, name="zerogpu-cgroup-remover", daemon=True).start()


@atexit.register
def _remove_pending(wait: float = 2.0) -> None:
    deadline = time.monotonic() + wait
    while _pending and time.monotonic() < deadline:
        for path in list(_pending):
            if _try_rmdir(path):
                _pending.discard(path)
        time.sleep(0.05)


def _try_rmdir(path: Path) -> bool:
    try:
        path.rmdir()
        return True
    except FileNotFoundError:
        return True
    except OSError:
        return False


def _remove_leftovers(parent: Path) -> None:
    """Empty cgroups of graders that were killed before removing theirs (rmdir fails on any
    cgroup that still holds a task, so a live grader's is never touched)."""
    for path in parent.glob(f"{CGROUP_PREFIX}*"):
        pid = path.name[len(CGROUP_PREFIX) :].split("-")[0]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            _try_rmdir(path)


def enforced(cgroup: Path | None) -> bool:
    """Does the kernel itself cap a sandboxed child's tasks here?"""
    return cgroup is not None or os.geteuid() != 0


class NamespaceWatch:
    """The processes of the PID namespace a bwrap process made, counted from outside."""

    def __init__(self, bwrap_pid: int, cap: int = PROCESS_CAP):
        self.bwrap_pid, self.cap, self.namespace = bwrap_pid, cap, None

    def _find_namespace(self) -> str | None:
        """bwrap's own child is the namespace's first process."""
        own = os.readlink(f"/proc/{self.bwrap_pid}/ns/pid") if os.path.exists(f"/proc/{self.bwrap_pid}") else None
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                stat = Path(f"/proc/{pid}/stat").read_text()
                if int(stat[stat.rindex(")") + 2 :].split()[1]) == self.bwrap_pid:  # its parent
                    namespace = os.readlink(f"/proc/{pid}/ns/pid")
                    return namespace if namespace != own else None
            except (OSError, ValueError, IndexError):
                pass
        return None

    def count(self) -> int:
        if self.namespace is None:
            self.namespace = self._find_namespace()
            if self.namespace is None:
                return 0
        found = 0
        for pid in os.listdir("/proc"):
            if pid.isdigit():
                try:
                    found += os.readlink(f"/proc/{pid}/ns/pid") == self.namespace
                except OSError:
                    pass
        return found

    def over_cap(self) -> bool:
        return self.count() > self.cap
