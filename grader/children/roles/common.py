"""What every role of a child shares: its guard (grader/containment/guard.py), the grader's own
writes (atomic, the only writes the guard lets through), the CPU allowance, the lifeline."""

from __future__ import annotations

import json
import os
import resource
import threading
import time
from contextlib import nullcontext
from pathlib import Path

import numpy as np

from grader.containment.guard import Guard
from grader.paths import ROOT, data_dir

_guard: list = [None]
"""The child's guard, once installed by its role."""


def install_guard(denied: list, writable: Path, install: bool = True) -> Guard:
    """The child's guard, made (and installed unless `install` is False: a role installs it
    itself once what must start first has started)."""
    guard = Guard(denied, writable)
    _guard[0] = guard
    if install:
        guard.install()
    return guard


def writing():
    """The grader's own writes of results: nothing else may write once the guard is installed."""
    return _guard[0].writing() if _guard[0] is not None else nullcontext()


def write_json(path: Path, data: dict) -> None:
    tmp = path.with_suffix(".tmp")
    with writing():
        tmp.write_text(json.dumps(data))
        os.replace(tmp, path)


def write_npz(path: Path, arrays: dict) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with writing():
        with open(tmp, "wb") as fh:
            np.savez(fh, **arrays)
        os.replace(tmp, path)


def touch(path: Path) -> None:
    with writing():
        path.touch()


def private(folder: Path | None, task: dict) -> list:
    """What the guard keeps a child from reading: the course's private folders and the task's."""
    own = [folder] if folder is not None else []  # a replayer reads the folders it is handed
    return [ROOT / "solutions", ROOT / "kernels", ROOT / "tests", data_dir(), *own, *task.get("private", [])]


def lower_cpu_limit(seconds: int) -> None:
    """The task's CPU allowance from now on (a child started ahead had a generous one); never raised."""
    used = resource.getrusage(resource.RUSAGE_SELF)
    limit = int(used.ru_utime + used.ru_stime) + 1 + seconds
    soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    if soft != resource.RLIM_INFINITY and soft <= limit:
        return
    resource.setrlimit(
        resource.RLIMIT_CPU, (limit, limit + 5 if hard == resource.RLIM_INFINITY else min(hard, limit + 5))
    )


def follow_lifeline(fd: int) -> None:
    """End this process when the grader has gone: `fd` reads end-of-file then
    (grader/children/spawn.py `lifeline`), whatever this process is doing."""

    def wait():
        try:
            while os.read(fd, 1):
                pass
        except OSError:
            pass
        os._exit(0)

    threading.Thread(target=wait, name="zerogpu-lifeline", daemon=True).start()


def warm_up_compiler() -> None:
    """The compiler's first use (NVVM, libdevice: ~0.6 s) done now; no CUDA context needed."""
    try:
        from numba import cuda, float32

        cuda.compile_ptx(_warm_up_kernel, (float32[:],), cc=(7, 5))
    except Exception:  # noqa: BLE001 - only a head start; the task compiles what it needs
        pass


def _warm_up_kernel(a):
    a[0] = 1.0


def wait_for(path: Path) -> None:
    """Wait for the grading process's file (a task.json); the lifeline ends a child whose
    grader went first."""
    while not path.exists():
        time.sleep(0.005)
