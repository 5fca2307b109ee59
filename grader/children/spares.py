"""Children started before their task (`Spare`), kept by one object that holds its own state
(`Spares`).

A spare has Python, numba and the grader imported and the compiler warmed up while the previous
submission ran; it waits for its task.json (grader/children/roles/spare.py). Every submission
still gets a fresh process of its own. A sandboxed spare's mounts depend on the exercise and the
private folders, never on the submission, which arrives in its task folder.

A spare makes no CUDA context while it waits: every check's GPU allocations then come in the
same order (context, correctness cases, benchmark arena), and so land at the same places.
Kernels bound by atomics on one address take one of two speeds depending on where it lands
(docs/BENCHMARKS-LOG.md, "Buffer placement").
"""

from __future__ import annotations

import atexit
import itertools
import threading
from contextlib import contextmanager
from pathlib import Path

from grader.children.processes import kill, remove_cgroup, track
from grader.children.spawn import Role, child_backend, contained, spawn, spawner
from grader.containment import scratch
from grader.containment.guard import scrubbed_env
from grader.exercises import ROOT
from grader.settings import SPARE_CPU_SECONDS

MAX_SPARES_PER_DEVICE = 4
"""Spares waiting at once per back end and device (a class graded in the sandbox keeps one per
exercise: each holds an imported Python, about 100 MB)."""
GPU_FAULTS = ("CudaAPIError", "CudaDriverError", "CudaSupportError", "NvvmError", "LinkerError")
"""Errors after which a process's CUDA context may be broken (an illegal address, a launch
failure): the device's spare is replaced before the next task."""


def key_of(exercise_id: str, private, device, sandboxed: bool, backend: str | None = None) -> tuple:
    """Which spares can serve a check: back end (`backend`, else the children's), device,
    sandbox mounts."""
    mounts = (exercise_id, tuple(str(p) for p in private)) if sandboxed else None
    return (backend or child_backend(), device, mounts)


class Spare:
    """A child started ahead of its task, for checks of `key` (back end, device, mounts)."""

    _births = itertools.count()

    def __init__(self, backend: str, device: int | None, mounts: tuple | None = None):
        self.key = (backend, device, mounts)
        self.tmp = scratch.TemporaryFolder(prefix="zerogpu-")
        self.task_dir = Path(self.tmp.name)
        self.born = next(Spare._births)
        work = self.task_dir / "work"
        work.mkdir()
        contain = contained(mounts[0], mounts[1]) if mounts else None
        env = scrubbed_env(work, ROOT, backend, device)
        self.proc = spawn(self.task_dir, env, SPARE_CPU_SECONDS, backend, Role("spare"), contain)

    def discard(self) -> None:
        if self.proc.poll() is None:
            kill(self.proc)
        remove_cgroup(self.proc)
        self.tmp.cleanup()


class Spares:
    """The spares waiting, per key, oldest first; how many are on their way; how many to keep."""

    def __init__(self):
        self.lock = threading.Lock()
        self.waiting: dict = {}
        """Key -> the spares waiting for it, oldest first."""
        self.starting: dict = {}
        """Key -> how many spares for it are being started now."""
        self.kept = 0
        """How many `keep_warm` blocks are open: spares are refilled only inside one."""
        self.per_key = 1
        """Spares kept waiting per key: several checks of one exercise may start at once on one device."""

    @contextmanager
    def keep_warm(self, spares: int = 1):
        """While inside, each child started also starts a spare for the next one on the same
        back end and device: for graders that check many files in a row (a class, bench/trust.py).
        About 1.5 s of each check (imports, the compiler's first use) then overlaps the one before.
        `spares`: how many to keep waiting per key (class grading: the checks one device runs at once)."""
        with self.lock:
            self.kept += 1
            before = self.per_key
            self.per_key = max(self.per_key, spares)
        try:
            yield
        finally:
            with self.lock:
                self.kept -= 1
                self.per_key = before
                leftovers = [s for pool in self.waiting.values() for s in pool] if not self.kept else []
                if not self.kept:
                    self.waiting.clear()
            for spare in leftovers:
                spare.discard()

    def all_waiting(self) -> list:
        """(key, spare) for every spare waiting now, oldest first within a key."""
        with self.lock:
            return [(key, spare) for key, pool in self.waiting.items() for spare in pool]

    def take(self, key):
        """A live spare waiting for `key` (now this task's: tracked), or None."""
        with self.lock:
            pool = self.waiting.get(key) or []
            spare = pool.pop(0) if pool else None
            if not pool:
                self.waiting.pop(key, None)
        if spare is not None and spare.proc.poll() is not None:  # died waiting: not usable
            spare.discard()
            spare = None
        if spare is not None:
            track(spare.proc)
        return spare

    def replace(self, key) -> None:
        """Discard the spares waiting for `key`'s next tasks and start others: after a child
        crashed, hung or met a GPU fault, no process started beside it is trusted."""
        with self.lock:
            stale = self.waiting.pop(key, [])
        for spare in stale:
            spare.discard()
        self.refill(key)

    def refill(self, key) -> None:
        """Start spares for `key` until `per_key` wait or are on their way (inside `keep_warm`);
        past a few per device (MAX_SPARES_PER_DEVICE, or `per_key` if more), the oldest of
        other keys go first."""
        with self.lock:
            need = self.per_key - len(self.waiting.get(key, ())) - self.starting.get(key, 0) if self.kept else 0
            if need <= 0:
                return
            self.starting[key] = self.starting.get(key, 0) + need
        for _ in range(need):
            try:
                spare = spawner().submit(Spare, *key).result()
            except BaseException:
                with self.lock:
                    self.starting[key] -= 1
                raise
            unwanted = [spare]
            with self.lock:
                self.starting[key] -= 1
                if self.kept and len(self.waiting.get(key, ())) < self.per_key:
                    self.waiting.setdefault(key, []).append(spare)
                    unwanted = self._over_the_bound(key)
            for old in unwanted:
                old.discard()

    def ahead(self, key) -> None:
        """One spare for `key` now, unless one waits or is on its way, not replaced when taken: a
        notebook's checks come minutes apart, so its facade starts one while the learner reads."""
        with self.lock:
            if self.waiting.get(key) or self.starting.get(key):
                return
            self.starting[key] = 1
        try:
            spare = spawner().submit(Spare, *key).result()
        finally:
            with self.lock:
                self.starting[key] -= 1
        with self.lock:
            self.waiting.setdefault(key, []).append(spare)

    def _over_the_bound(self, key) -> list:
        """Spares of `key`'s back end and device past the bound, removed from the pools (the lock
        held): the oldest of other keys first (sandboxed spares are kept per exercise)."""
        limit = max(MAX_SPARES_PER_DEVICE, self.per_key)
        device = [(s.born, k, s) for k, pool in self.waiting.items() if k[:2] == key[:2] for s in pool]
        device.sort(key=lambda item: (item[1] == key, item[0]))
        unwanted = [(k, s) for _, k, s in device[: max(0, len(device) - limit)]]
        for k, spare in unwanted:
            self.waiting[k].remove(spare)
            if not self.waiting[k]:
                del self.waiting[k]
        return [spare for _, spare in unwanted]

    def discard_all(self) -> None:
        for _, spare in self.all_waiting():
            spare.discard()


SPARES = Spares()
"""This process's spares."""
atexit.register(SPARES.discard_all)


def keep_warm(spares: int = 1):
    """`Spares.keep_warm` of this process's spares."""
    return SPARES.keep_warm(spares)


def spare_ahead(device: int | None = None) -> None:
    """A spare checking child for the next unsandboxed check, started now (a notebook's)."""
    SPARES.ahead(key_of("", (), device, False))


def waiting_spares() -> list:
    return SPARES.all_waiting()


def start_ahead(exercise_id: str, private=(), device: int | None = None, sandboxed: bool = False):
    """Start this check's checking child now, so that it imports numba and the grader while the
    recording child records (grader/children/recording.py): a Future of a spare for the
    check's `Hooks.ahead`, or None when a kept-warm spare waits already. `discard_ahead` ends
    it when the check ends before it is used."""
    key = key_of(exercise_id, private, device, sandboxed)
    with SPARES.lock:
        if SPARES.waiting.get(key):
            return None
    return spawner().submit(Spare, *key)


def discard_ahead(ahead) -> None:
    if ahead is not None:
        ahead.result().discard()


def faulted(run) -> bool:
    """Did a run end in a way that may have broken its process's CUDA context?"""
    if run.stopped:
        return True
    return any(o.error is not None and o.error.error_type in GPU_FAULTS for o in run.outcomes.values())
