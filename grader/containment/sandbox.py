"""The operating system's wall around a graded submission: bubblewrap (`bwrap`).

The child (grader/checking/child.py) runs in new user, PID, network, IPC, UTS and mount
namespaces, with a read-only root, a fresh /proc (no other process of the host is visible),
a private /tmp, the task folder the only writable place, the course's private folders and
the home directory covered by empty tmpfs mounts, no capabilities, an environment of our
choosing only, and a seccomp filter (grader/containment/seccomp_filter.py). The in-process
guard (guard.py) stays as a second wall with the learner-facing messages.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

BWRAP = "bwrap"
NVIDIA_DEVICES = (
    "/dev/nvidiactl",
    "/dev/nvidia-uvm",
    "/dev/nvidia-uvm-tools",
    "/dev/nvidia-modeset",
    "/dev/nvidia-caps",
)
"""Bound in with --dev-bind where they exist (with every /dev/nvidiaN): CUDA needs them."""
WALLS = (
    "--unshare-all",
    "--die-with-parent",
    "--new-session",
    "--cap-drop",
    "ALL",
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
)
"""Every graded child's namespaces, read-only root, fresh /dev and /proc (`command`); the
availability probe makes the same ones."""
TMPFS_BYTES = 256 << 20
"""Each empty tmpfs (/tmp, the hidden folders) holds at most this much: memory, not disk."""


class SandboxUnavailable(RuntimeError):
    """Graded mode cannot contain a submission here; the message is one line for the user."""


def install_command() -> str:
    """The line that installs what the sandbox needs, for this system's package manager."""
    for tool, line in (
        ("apt-get", "sudo apt-get install bubblewrap libseccomp2"),
        ("dnf", "sudo dnf install bubblewrap libseccomp"),
        ("yum", "sudo yum install bubblewrap libseccomp"),
        ("zypper", "sudo zypper install bubblewrap libseccomp2"),
        ("pacman", "sudo pacman -S bubblewrap libseccomp"),
    ):
        if shutil.which(tool):
            return line
    return "install bubblewrap and libseccomp with your package manager"


@lru_cache(maxsize=1)
def unavailable() -> str | None:
    """None when bwrap can make every namespace here, else why not (one line, with the fix)."""
    if not shutil.which(BWRAP):
        return (
            f"graded mode runs each submission in bubblewrap, which is not installed: {install_command()}"
            " (or pass --unsandboxed to grade without it)"
        )
    probe = subprocess.run(
        [BWRAP, *WALLS, "--", "/bin/true"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    if probe.returncode != 0:
        why = (probe.stderr.strip().splitlines() or ["no message"])[-1]
        return (
            f"bubblewrap cannot create namespaces here ({why}); allow unprivileged user namespaces "
            "(sudo sysctl -w kernel.unprivileged_userns_clone=1, or on Ubuntu "
            "kernel.apparmor_restrict_unprivileged_userns=0), or pass --unsandboxed"
        )
    try:
        seccomp_program()
    except (OSError, subprocess.SubprocessError, ImportError) as err:
        return f"the sandbox's seccomp filter cannot be built ({err}): {install_command()} (or pass --unsandboxed)"
    return None


def forced_off() -> bool:
    """`ZEROGPU_UNSANDBOXED=1`: what `--unsandboxed` says, for runs that pass no flag (the test
    suite on a machine without bubblewrap). Every result still says it was unsandboxed."""
    return os.environ.get("ZEROGPU_UNSANDBOXED") == "1"


def require() -> None:
    reason = unavailable()
    if reason:
        raise SandboxUnavailable(reason)


@lru_cache(maxsize=1)
def seccomp_program() -> bytes:
    """The filter as a BPF program: libseccomp's binding in this Python, else the system's."""
    try:
        from grader.containment.seccomp_filter import program

        return program()
    except ImportError:
        pass
    script = Path(__file__).with_name("seccomp_filter.py")
    for python in ("/usr/bin/python3", shutil.which("python3")):
        if python and Path(python).exists() and Path(python).resolve() != Path(sys.executable).resolve():
            done = subprocess.run([python, "-I", str(script)], capture_output=True, timeout=30)
            if done.returncode == 0 and done.stdout:
                return done.stdout
    raise ImportError("no Python here can import libseccomp's binding 'seccomp'")


def seccomp_fd() -> int:
    """A file descriptor holding the filter, for `bwrap --seccomp FD` (the caller closes it)."""
    fd = os.memfd_create("zerogpu-seccomp", 0)
    os.write(fd, seccomp_program())
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _python_paths(env: dict) -> list:
    """What the child's Python needs to start: its prefixes, the interpreter, PYTHONPATH."""
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.path.realpath(sys.executable))}
    paths.update(p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p)
    return sorted((os.path.realpath(p) for p in paths if os.path.isdir(p)), key=len)


def command(inner: list, task_dir: Path, env: dict, *, hidden=(), shown_files=(), fd: int) -> list:
    """The bwrap command line that runs `inner` contained. `hidden`: folders (or files) covered
    by nothing; `shown_files`: files made visible again, read-only, inside them."""
    args = [BWRAP, *WALLS, "--size", str(TMPFS_BYTES), "--tmpfs", "/tmp"]
    for dev in (*NVIDIA_DEVICES, *sorted(str(p) for p in Path("/dev").glob("nvidia[0-9]*"))):
        if os.path.exists(dev):
            args += ["--dev-bind", dev, dev]
    home = os.path.realpath(os.path.expanduser("~"))
    if home != "/" and os.path.isdir(home):
        args += ["--size", str(TMPFS_BYTES), "--tmpfs", home]
    for path in _python_paths(env):  # the interpreter and the grader, again, if home held them
        args += ["--ro-bind", path, path]
    for path in sorted({os.path.realpath(p) for p in hidden}, key=len):
        if os.path.isdir(path):
            args += ["--size", str(TMPFS_BYTES), "--tmpfs", path]
        elif os.path.exists(path):
            args += ["--ro-bind", "/dev/null", path]
    for path in shown_files:
        path = os.path.realpath(path)
        args += ["--ro-bind", path, path]
    task = os.path.realpath(task_dir)
    args += ["--bind", task, task, "--chdir", os.path.join(task, "work"), "--clearenv"]
    for key, value in sorted(env.items()):
        args += ["--setenv", key, value]
    return args + ["--seccomp", str(fd), "--", *inner]
