"""The operating system's wall around a graded submission: bubblewrap (`bwrap`).

The child (grader/children/roles/replay.py) runs in new user, PID, network, IPC, UTS and mount
namespaces, as the first process of its PID namespace, with a fresh /proc (no other process of
the host is visible), in a read-only view built from an allow-list (grader/containment/view.py:
the interpreter, the packages a check needs, the grader, the exercise's spec), the task folder
the only host folder it can write, a size-capped tmpfs for everything else it writes, no
capabilities, an environment whose values name no host place outside the view, and a seccomp
filter (grader/containment/seccomp_filter.py). The in-process guard (guard.py) stays as a
second wall with the learner-facing messages.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from functools import lru_cache
from pathlib import Path

from grader import settings
from grader.containment import view
from grader.containment.seccomp_filter import program
from grader.paths import ROOT, data_dir

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
    "--as-pid-1",
    "--cap-drop",
    "ALL",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
)
"""Every graded child's namespaces, fresh /dev and /proc (`command`); the availability probe
makes the same ones. `--as-pid-1`: the child is the namespace's first process, so no bwrap
process (whose command line names every host path of the view) is visible inside."""
SCRATCH_BYTES = 240 << 20
"""All a submission can write inside, besides the task folder: /tmp (its working folder and
home, temporary files, the compile cache) holds at most this much (memory, not disk)..."""
SHM_BYTES = 16 << 20
"""... and /dev/shm this much (POSIX shared memory and semaphores)."""
TASK = view.TASK
"""Where the task folder is inside."""
WORK = "/tmp/work"
"""The child's working folder and HOME, inside the capped /tmp."""
COMPILE_CACHE = "/tmp/zerogpu-compiled"
PATH_VARIABLES = {
    "HOME": WORK,
    "TMPDIR": "/tmp",
    "PYTHONPATH": view.INSIDE,
    "PATH": f"{view.VENV}/bin",
    "ZEROGPU_COMPILE_CACHE": COMPILE_CACHE,
}
"""Variables whose host values name the project or the home folder: their value inside."""


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
        [BWRAP, *WALLS, "--ro-bind", "/", "/", "--", "/bin/true"],
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
    return settings.unsandboxed()


def require() -> None:
    reason = unavailable()
    if reason:
        raise SandboxUnavailable(reason)


@lru_cache(maxsize=1)
def seccomp_program() -> bytes:
    """The filter as a BPF program: libseccomp's binding in this Python, else the system's."""
    try:
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


def command(
    inner: list, task_dir: Path, env: dict, *, hidden=(), shown_files=(), fd: int, task_writable: bool = True
) -> list:
    """The bwrap command line that runs `inner` contained, in the view of grader/containment/view.py.
    `shown_files`: project files shown read-only (the exercise's spec); `hidden`: private places
    (the data dir, the course's folders), covered if they lie inside a place the view shows.
    Host paths in `inner` and `env` become their places inside; other variables naming a host
    place show it read-only at its own path (a GPU host's CUDA_HOME, LD_LIBRARY_PATH), unless
    it is private, which drops it."""
    try:
        stage = view.stage()
        shown = {os.path.realpath(path): stage.shown(path) for path in shown_files}
    except OSError as err:
        raise SandboxUnavailable(
            f"the sandbox's view cannot be made in {err.filename or tempfile.gettempdir()} ({err.strerror or err}): "
            "set TMPDIR to a folder you can write, or pass --unsandboxed"
        ) from None
    task = os.path.realpath(task_dir)
    binds = [*stage.binds, *shown.values()]
    private = _private_places(hidden)
    inside_env, named = _inside_env(env, private)
    args = [BWRAP, *WALLS, "--size", str(SCRATCH_BYTES), "--tmpfs", "/tmp", "--dir", WORK]
    args += [*view.system_binds(), *_gpu_binds()]
    for source, inside in [*binds, *((path, path) for path in named)]:
        args += ["--ro-bind", source, inside]
    at_own_path = [*view.SYSTEM_LIBRARIES, *(source for source, inside in binds if source == inside), *named]
    args += _covered(private, at_own_path, stage)
    args += ["--bind" if task_writable else "--ro-bind", task, view.TASK]
    args += ["--size", str(SHM_BYTES), "--tmpfs", "/dev/shm"]
    args += ["--remount-ro", "/dev", "--remount-ro", "/"]
    args += ["--chdir", WORK, "--clearenv"]
    for key, value in sorted(inside_env.items()):
        args += ["--setenv", key, value]
    places = {host: inside for host, (_, inside) in shown.items()}
    places.update({task: view.TASK, os.path.abspath(task_dir): view.TASK})
    return args + ["--seccomp", str(fd), "--", *(_inside_path(arg, places) for arg in inner)]


def _gpu_binds() -> list:
    """On a GPU host: the NVIDIA device nodes, /sys, which the CUDA driver reads, and the
    folders of the driver's libraries wherever the loader's cache finds them."""
    devices = [
        d for d in (*NVIDIA_DEVICES, *sorted(str(p) for p in Path("/dev").glob("nvidia[0-9]*"))) if os.path.exists(d)
    ]
    if not devices:
        return []
    args = [arg for dev in devices for arg in ("--dev-bind", dev, dev)]
    for folder in _driver_folders():
        args += ["--ro-bind", folder, folder]
    return args + ["--ro-bind", "/sys", "/sys"]


@lru_cache(maxsize=1)
def _driver_folders() -> tuple:
    """Folders outside the system's library folders that `ldconfig -p` names for libcuda or a
    libnvidia-* library (a container's /usr/local/nvidia/lib64, say)."""
    ldconfig = shutil.which("ldconfig") or "/sbin/ldconfig"
    try:
        listing = subprocess.run([ldconfig, "-p"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return ()
    folders = set()
    for line in listing.splitlines():
        name, _, path = line.strip().partition(" => ")
        if path and name.startswith(("libcuda.", "libnvidia-")):
            folders.add(os.path.realpath(os.path.dirname(path)))
    system = [os.path.realpath(p) for p in view.SYSTEM_LIBRARIES]
    return tuple(sorted(f for f in folders if not _under(f, system)))


def _private_places(hidden) -> list:
    """Host places nothing inside may name: the project, the data dir, home, `hidden`."""
    places = [ROOT, data_dir(), os.path.expanduser("~"), *hidden]
    return sorted({os.path.realpath(p) for p in places if os.path.realpath(p) != "/"})


def _under(path: str, places) -> bool:
    return any(path == p or path.startswith(p.rstrip(os.sep) + os.sep) for p in places)


def _inside_env(env: dict, private: list) -> tuple:
    """(the environment inside, host places it names that are shown at their own path)."""
    inside, named = dict(PATH_VARIABLES), set()
    for key, value in env.items():
        if key in PATH_VARIABLES:
            continue
        kept = []
        for part in value.split(os.pathsep):
            path = os.path.realpath(part) if os.path.isabs(part) else None
            if path is not None and _under(path, private):
                continue
            if path is not None and os.path.exists(path):
                named.add(path)
                part = path  # the place itself: a link to it (/usr/local/cuda) is not in the view
            kept.append(part)
        if kept or not value:
            inside[key] = os.pathsep.join(kept)
    return inside, sorted(named)


def _covered(private: list, shown: list, stage) -> list:
    """An empty folder (or /dev/null) over each private place inside a place shown at its own
    path: the course's folders, say, under a shown library folder."""
    args = []
    for path in private:
        if os.path.exists(path) and any(_under(path, [s]) and s != path for s in shown):
            args += ["--ro-bind", str(stage.empty) if os.path.isdir(path) else "/dev/null", path]
    return args


def _inside_path(arg: str, places: dict) -> str:
    """`arg` with a host path of the view (the interpreter, the task folder, a shown file)
    replaced by its place inside."""
    if arg in (sys.executable, os.path.realpath(sys.executable)):
        return view.PYTHON
    for host, inside in places.items():
        if arg == host or arg.startswith(host + os.sep):
            return inside + arg[len(host) :]
    return arg
