"""Starting a child: its command (`python -m grader.children FOLDER --role ...`), its sandbox,
and the lifeline that ends it when the grading process has gone.

No preexec_fn (the child limits itself, grader/containment/guard.py says why), so Popen forks and
execs without running Python code in between, whatever other threads hold. With `contain` (from
`contained`), the child runs inside bubblewrap (grader/containment/sandbox.py).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from grader.backend import current
from grader.children.capture import CappedOutput
from grader.children.processes import kill, remove_cgroup, track
from grader.containment import process_cap, sandbox, scratch
from grader.containment.guard import scrubbed_env
from grader.exercises import ROOT
from grader.paths import data_dir
from grader.settings import forced_backend

SIMULATOR_ADDRESS_SPACE = 16 << 30
"""The simulator's threads each reserve a stack: 1024 threads need ~8 GiB of address space."""


@dataclass(frozen=True)
class Role:
    """What a child is to be, and the pipes it is handed: `record` (a recording child answers on
    it; `where`: its lookout's), `serve` (task names come on it), `ahead` (a recording child
    started before its task)."""

    name: str = "replay"
    record: int | None = None
    where: int | None = None
    serve: int | None = None
    ahead: bool = False

    def fds(self) -> tuple:
        return tuple(fd for fd in (self.record, self.where, self.serve) if fd is not None)

    def arguments(self) -> list:
        flags = ["--role", self.name]
        for name, fd in (("--record-fd", self.record), ("--where-fd", self.where), ("--serve-fd", self.serve)):
            if fd is not None:
                flags += [name, str(fd)]
        return flags + (["--ahead"] if self.ahead else [])


def child_backend() -> str:
    """The engine a checking child runs: the one forced for children, else this process's."""
    return forced_backend() or current()


def contained(exercise_id: str | None, private=(), also_shown=()) -> dict:
    """What the sandbox hides (the course's private folders, the data dir with the secret,
    the home directory) and the only files it shows again inside them: the exercise's spec,
    kernels/<id>.py (with any exercise it reuses: `reference("other")`), and `also_shown`. The
    submission itself is copied into the task folder, so the same mounts serve every submission
    of an exercise: a spare's. `exercise_id` None: every exercise's (a replayer serves them all)."""
    shown = []
    todo = [exercise_id] if exercise_id else [p.stem for p in sorted((ROOT / "kernels").glob("*.py"))]
    while todo:
        path = ROOT / "kernels" / f"{todo.pop()}.py"
        if path.is_file() and path not in shown:
            shown.append(path)
            todo += re.findall(r"""reference\(["'](\w+)["']\)""", path.read_text())
    hidden = [ROOT / "solutions", ROOT / "kernels", ROOT / "tests", data_dir(), *private]
    return {"hidden": [str(p) for p in hidden], "shown_files": [str(p) for p in [*shown, *also_shown]]}


_lock = threading.Lock()
_lifelines: dict = {}


def lifeline() -> int:
    """The read end of a pipe whose write end only this process holds. Every child reads it and
    ends itself at end-of-file, when this process has gone, however it went: a child in a PID
    namespace cannot watch our pid, bwrap's --die-with-parent follows the thread that started
    it, and a killed grader runs no clean-up."""
    with _lock:
        if os.getpid() not in _lifelines:  # one pipe per process (a forked copy makes its own)
            _lifelines[os.getpid()] = os.pipe()
        return _lifelines[os.getpid()][0]


_spawner_pool = None


def spawner() -> ThreadPoolExecutor:
    """The one thread that starts every spare and every child kept for a run. bwrap's
    --die-with-parent kills a sandbox when the *thread* that started it ends (PR_SET_PDEATHSIG),
    and a class's task threads end with their task, before the spare they started is used;
    this thread lives as long as we do."""
    global _spawner_pool
    with _lock:
        if _spawner_pool is None:
            _spawner_pool = ThreadPoolExecutor(1, thread_name_prefix="zerogpu-spares")
        return _spawner_pool


def spawn(folder: Path, env: dict, cpu: int, backend: str, role: Role = Role(), contain: dict | None = None):
    """Start a child for `folder` (its working folder `folder/work`) as `role`, in bubblewrap
    when `contain` says what the sandbox shows."""
    work = folder / "work"
    work.mkdir(exist_ok=True)
    line = lifeline()  # how every child, spare or not, knows that we are gone
    command = child_command(folder, cpu, backend, role) + ["--lifeline", str(line)]
    seccomp = cgroup = None
    if contain is not None:
        # a recording child answers through its pipe: its task folder is read-only, so all it can
        # write is the sandbox's capped tmpfs
        command, seccomp, cgroup = _sandboxed(command, folder, env, contain, task_writable=role.record is None)
    try:
        proc = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            cwd=work,
            env=env,
            pass_fds=tuple(fd for fd in (seccomp, line, *role.fds()) if fd is not None),
        )
    except BaseException:
        if cgroup is not None:
            process_cap.remove_cgroup(cgroup)
        raise
    finally:
        if seccomp is not None:
            os.close(seccomp)
    proc.cgroup = cgroup
    # where the kernel caps nothing (root without a pids cgroup), a follower counts for it
    proc.watch = None if contain is None or process_cap.enforced(cgroup) else process_cap.NamespaceWatch(proc.pid)
    proc.output = CappedOutput(proc.stdout)
    if role.name not in ("spare", "serve", "compile") and not role.ahead:  # those outlive a task
        track(proc)
    return proc


def child_command(folder: Path, cpu: int, backend: str, role: Role) -> list:
    """`python -m grader.children FOLDER --cpu SECONDS --role ...` (grader/children/__main__.py)."""
    command = [sys.executable, "-m", "grader.children", str(folder), "--cpu", str(cpu)]
    if backend == "simulator":
        command += ["--address-space", str(SIMULATOR_ADDRESS_SPACE)]
    return command + role.arguments()


def _sandboxed(command: list, folder: Path, env: dict, contain: dict, task_writable: bool) -> tuple:
    """(`command` inside bubblewrap, the seccomp filter's descriptor the child inherits, the
    pids cgroup it starts in or None where none can be made)."""
    command = [*command, "--processes", str(process_cap.PROCESS_CAP)]
    seccomp = sandbox.seccomp_fd()
    command = sandbox.command(command, folder, env, fd=seccomp, task_writable=task_writable, **contain)
    cgroup = process_cap.new_cgroup()
    if cgroup is not None:
        command = process_cap.enter_then_exec(command, cgroup)
    return command, seccomp, cgroup


def start_serving(prefix: str, backend: str, device, cpu: int, contain, role: str = "serve", env=None) -> tuple:
    """(inbox folder, process, the pipe's write end, line-buffered) of a child kept for a run that
    serves tasks named on that pipe, each in a folder of its inbox: a replayer, or a compiling
    child (`role` "compile"). `env`: changes to its scrubbed environment. Started by the one
    long-lived spawning thread: bwrap's --die-with-parent ends a sandbox with the thread that
    started it, and the task's thread that asked for it ends with the task."""
    folder = scratch.TemporaryFolder(prefix=prefix)
    inbox = Path(folder.name)
    work = inbox / "work"
    work.mkdir()
    read, write = os.pipe()
    try:
        env = {**scrubbed_env(work, ROOT, backend, device), **(env or {})}
        proc = spawner().submit(spawn, inbox, env, cpu, backend, Role(role, serve=read), contain).result()
    except BaseException:
        os.close(write)
        folder.cleanup()
        raise
    finally:
        os.close(read)
    return folder, proc, os.fdopen(write, "w", buffering=1)


def stop_serving(proc, names, folder, grace: float = 0.0) -> None:
    """End a child `start_serving` started: its pipe closed (between tasks it then exits on its
    own, given `grace` seconds), then killed, its cgroup and inbox removed. Any may be None."""
    if names is not None:
        try:
            names.close()
        except OSError:
            pass
    if proc is not None:
        try:
            proc.wait(timeout=grace if names is not None else 0)
        except Exception:  # noqa: BLE001 - still running: killed below
            pass
        kill(proc)
        remove_cgroup(proc)
    if folder is not None:
        folder.cleanup()
