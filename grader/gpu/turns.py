"""GPU turns: which check may use a GPU now, when several checks share it (class grading).

Two processes using one GPU at once time-slice it, so another check's kernels running during
someone's timed rounds would land in that check's figures. Only the timed rounds need the
GPU alone; everything else a check does on it (correctness cases, inputs to the device,
warm-ups, creating and closing its CUDA context) may overlap other checks' same work. So each
GPU has a reader-writer lock across processes: the timed rounds take it **exclusive**, any
other GPU work **shared**.

Built on `flock(2)` over two files per GPU that the grading process creates in a private
temporary folder (`TurnFolder`); each child gets its own open file descriptions of them
(`TurnFolder.open_for_child`), inherited through bubblewrap as the lifeline is (a graded
child sees no folder of ours). An flock belongs to the open file description, so children
never share one: they would not exclude each other. A child that dies releases its turn with
its descriptors.

Writer preference: a child waiting to time must not be starved by a stream of shared users.
Every acquisition first takes the *gate* (exclusive, briefly); a reader takes the GPU lock
shared and lets the gate go at once, a writer keeps the gate while it waits for the readers
already in to leave, so no new reader gets in meanwhile, and lets it go once it holds the GPU.

Without turns (one check from the CLI, a notebook) `NO_TURNS` does nothing, and every
caller behaves as it did before turns existed.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path

SHARED = "shared"
EXCLUSIVE = "exclusive"
WAITING_FILE = "waiting-for-gpu"
"""Exists in a grading child's task folder while it waits for a turn: its parent's clock stands
still meanwhile (grader/checking/isolate.py)."""


class TurnFolder:
    """The grading process's side: one gate file and one GPU lock file per device, in a
    private temporary folder, opened afresh for each child."""

    def __init__(self):
        self.path = Path(tempfile.mkdtemp(prefix="zerogpu-turns-"))  # mode 0700
        self._lock = threading.Lock()

    def files(self, device: int | None) -> tuple[Path, Path]:
        """The gate and the lock file of `device` (None: the one GPU a child is given)."""
        name = "gpu" if device is None else f"gpu-{int(device)}"
        gate, gpu = self.path / f"{name}.gate", self.path / f"{name}.lock"
        with self._lock:
            for path in (gate, gpu):
                if not path.exists():
                    path.touch(mode=0o600)
        return gate, gpu

    def open_for_child(self, device: int | None) -> tuple[int, int]:
        """(gate fd, GPU lock fd): new open file descriptions, not inheritable until the
        caller passes them (`pass_fds`) and closes its copies."""
        return tuple(os.open(path, os.O_RDWR | os.O_CLOEXEC) for path in self.files(device))

    def turns(self, device: int | None, on_wait=None) -> "Turns":
        """Turns for this process itself (tests, a grading process that times in-process)."""
        return Turns(*self.open_for_child(device), on_wait=on_wait, owns_fds=True)

    def remove(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


class Turns:
    """A child's side: `with turns.shared():` around GPU work, `with turns.exclusive():`
    around the timed rounds. `waited` adds up the seconds spent waiting per kind;
    `on_wait(True/False)` hears when a wait that could not be served at once starts and
    ends (the child tells its parent, whose clock then pauses)."""

    def __init__(self, gate_fd: int | None, gpu_fd: int | None, on_wait=None, owns_fds: bool = False):
        self.gate, self.gpu = gate_fd, gpu_fd
        self.on_wait = on_wait
        self.owns_fds = owns_fds
        self.held: str | None = None
        self.waited = {SHARED: 0.0, EXCLUSIVE: 0.0}
        self.log: list = []
        """(kind, "take" or "leave") in order: what a test reads to see the turns taken."""

    def __bool__(self) -> bool:
        return self.gpu is not None

    @contextmanager
    def shared(self):
        yield from self._turn(SHARED)

    @contextmanager
    def exclusive(self):
        yield from self._turn(EXCLUSIVE)

    def _turn(self, kind: str):
        if not self:
            yield 0.0
            return
        if self.held is not None:  # a reader asking to write would wait for itself
            raise RuntimeError(f"a {kind} GPU turn was asked for while holding a {self.held} one")
        waited = self._take(kind)
        try:
            yield waited
        finally:
            self._leave(kind)

    def _take(self, kind: str) -> float:
        started = time.perf_counter()
        told = False
        mode = fcntl.LOCK_SH if kind == SHARED else fcntl.LOCK_EX
        try:
            told = _lock(self.gate, fcntl.LOCK_EX, self._waiting, told)
            try:
                told = _lock(self.gpu, mode, self._waiting, told)
            finally:
                fcntl.flock(self.gate, fcntl.LOCK_UN)
        finally:
            if told and self.on_wait:
                self.on_wait(False)
        self.held = kind
        self.log.append((kind, "take"))
        waited = time.perf_counter() - started
        self.waited[kind] += waited
        return waited

    def _leave(self, kind: str) -> None:
        fcntl.flock(self.gpu, fcntl.LOCK_UN)
        self.held = None
        self.log.append((kind, "leave"))

    @contextmanager
    def stepped_out(self):
        """Inside a shared turn: let it go while this process does CPU work only (compiling a
        kernel), and take it again after. Everything this process queued on the GPU is finished
        first (a device-wide synchronize), so none of it runs while the turn is let go. Outside a shared turn
        (none held, or the exclusive one) this does nothing."""
        if self.held != SHARED:
            yield
            return
        _quiet()
        self._leave(SHARED)
        try:
            yield
        finally:
            self._take(SHARED)

    def waited_total(self) -> float:
        return sum(self.waited.values())

    def _waiting(self) -> None:
        if self.on_wait:
            self.on_wait(True)

    def close(self) -> None:
        if self.owns_fds:
            for fd in (self.gate, self.gpu):
                if fd is not None:
                    os.close(fd)
            self.gate = self.gpu = None


def _lock(fd: int, mode: int, waiting, told: bool) -> bool:
    """flock `fd`; when it cannot be had at once, call `waiting()` (once) before blocking."""
    try:
        fcntl.flock(fd, mode | fcntl.LOCK_NB)
        return told
    except BlockingIOError:
        pass
    if not told:
        waiting()
    fcntl.flock(fd, mode)
    return True


NO_TURNS = Turns(None, None)
"""One check alone on its GPU: nothing to wait for."""


def _numba_context_current() -> bool:
    """Does this thread have a CUDA context (made by a launch, a copy, a compile)? Asking does
    not make one. Always False on Numba's simulator."""
    from numba import config

    if config.ENABLE_CUDASIM:
        return False
    from numba.cuda.cudadrv.driver import driver

    with driver.get_active_context() as active:
        return active.devnum is not None


def _quiet() -> None:
    """Before a shared turn is let go for a while: this process's CUDA context exists (made now,
    inside the turn, if this is its first GPU use) and nothing it queued is still running."""
    from numba import config

    if config.ENABLE_CUDASIM:
        return
    try:
        from numba import cuda

        cuda.current_context()
        cuda.synchronize()
    except Exception:  # noqa: BLE001 - a context a fault broke runs nothing more
        pass


def settle() -> None:
    """Wait until every launch of this process has finished (device-wide), if it has a CUDA
    context: what a shared turn does before it is let go, so none of its work runs on. A
    context a fault broke (an illegal address) runs nothing more: its error is the case's."""
    try:
        if _numba_context_current():
            from numba import cuda

            cuda.synchronize()
    except Exception:  # noqa: BLE001 - reported by the case that faulted, not here
        pass


def close_gpu(turns: Turns) -> None:
    """Close this process's CUDA context, if it has one, under a shared turn: freeing its memory
    and tearing it down is GPU work too. Otherwise the kernel closes it at exit, after our turn
    descriptors are already gone."""
    try:
        if not turns or not _numba_context_current():
            return
        from numba import cuda

        with turns.shared():
            cuda.close()
    except Exception:  # noqa: BLE001 - a broken context: the kernel closes it at exit
        pass


_compiling_turns = None
"""The turns that `compile_outside_turns` steps out of while Numba compiles."""


def compile_outside_turns(turns: Turns) -> None:
    """Make every CUDA JIT compilation of this process step out of a shared turn it holds
    (`Turns.stepped_out`): Numba's front end and NVVM (a kernel's `_Kernel`) and the linker
    (PTX to a cubin) are CPU work, often the longest part of a check's GPU work, and a check
    waiting to time should not wait for them. Loading the module onto the GPU and launching
    stay inside the turn. GPU back end only (the simulator compiles nothing)."""
    global _compiling_turns
    _compiling_turns = turns
    from numba.cuda import codegen, dispatcher

    if getattr(dispatcher._Kernel.__init__, "zerogpu_steps_out", False):
        return
    kernel_init = dispatcher._Kernel.__init__
    get_cubin = codegen.CUDACodeLibrary.get_cubin

    def __init__(self, *args, **kwargs):
        with _compiling_turns.stepped_out():
            kernel_init(self, *args, **kwargs)

    def linked(self, cc=None):
        if self._cubin_cache.get(self._ensure_cc(cc)):
            return get_cubin(self, cc)
        with _compiling_turns.stepped_out():
            return get_cubin(self, cc)

    __init__.zerogpu_steps_out = True
    dispatcher._Kernel.__init__ = __init__
    codegen.CUDACodeLibrary.get_cubin = linked
