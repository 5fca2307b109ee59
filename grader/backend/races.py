"""Races in kernels that Numba's simulator runs (the kernel doctor's fallback).

The simulator runs each CUDA thread as an OS thread and finds no races: a histogram counting
with a plain `+=` in shared memory passes, while a GPU loses counts. While `recording()` is on,
a launch from the host hands the kernel its arrays (and each `cuda.shared.array`) wrapped in
`Watched`, which notes every element a thread reads or writes: which thread, which block,
after how many `cuda.syncthreads()` (its epoch), whether inside an atomic, and at which line.
Two threads touching one element, one of them writing, not both atomically, with no barrier
between them (same block, same epoch; or two blocks of one launch, in global memory) are a
`Clash`. The kernel doctor turns clashes into its own race findings (grader/doctor/fallback.py).

As the doctor does: a write of the value an element already holds conflicts with nothing, a
kernel that calls `cuda.threadfence()` has its clashes between blocks marked `relaxed`, and
each launch starts afresh (a launch sees what the previous one wrote).
"""

from __future__ import annotations

import ast
import inspect
import linecache
import os
import sys
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

import numpy as np
from grader import pysource

CLASHES_KEPT = 16
"""Distinct clashes (kind, lines, array) kept per recording: enough to name the problem."""
READERS_KEPT = 8
"""Readers kept per element since its last write (distinct threads)."""


@dataclass
class LaunchInfo:
    kernel: str
    rank: int
    """How many of x, y, z name a thread or a block (as the doctor counts them)."""
    relaxed: bool = False
    """The kernel called cuda.threadfence(): clashes between blocks are only warnings."""


@dataclass(frozen=True)
class Place:
    """Where an access happened in the learner's source."""

    kind: str
    """"load", "store", "update" (`a[i] += v`) or "atomic"."""
    filename: str
    line: int
    statement: str
    function: str


@dataclass
class _Access:
    thread: tuple
    block: tuple
    epoch: int
    atomic: bool
    place: Place
    """Where and what: a load on an `a[i] += v` line becomes an "update" once the thread
    stores to the element it loaded, on that line (the read half of the update)."""


@dataclass
class Clash:
    """Two threads' accesses to one element with nothing ordering them."""

    kind: str
    """"raw", "war" or "ww", as the doctor's shadow memory names them."""
    cross: bool
    array: str
    space: str
    index: tuple
    me: tuple
    """(thread, block) of the later access, each cut to the launch's rank."""
    them: tuple
    launch: LaunchInfo
    later: _Access
    earlier: _Access
    count: int = 1

    @property
    def me_place(self) -> Place:
        return self.later.place

    @property
    def them_place(self) -> Place:
        return self.earlier.place


@dataclass
class _Element:
    writer: _Access | None = None
    readers: list = field(default_factory=list)
    covered: _Access | None = None
    """The plain store an atomic replaced as `writer`: a later atomic of another thread, with
    nothing ordering the two, still clashes with it (block 0 zeroing a total that the other
    blocks add to atomically)."""


class Record:
    """What one recording saw: every element's last writer and readers, per launch."""

    def __init__(self):
        self.lock = threading.Lock()
        self.elements: dict = {}
        self.clashes: dict = {}
        self.launch: LaunchInfo | None = None

    def new_launch(self, kernel: str, grid: tuple, block: tuple) -> None:
        sizes = [max(g, b) for g, b in zip(grid, block)]
        rank = max([i + 1 for i, s in enumerate(sizes) if s > 1] + [1])
        with self.lock:
            self.elements = {}
            self.launch = LaunchInfo(kernel, rank)

    def touch(self, watched: Watched, address: int, write: bool, same_value: bool, index) -> None:
        me_thread = threading.current_thread()
        block = tuple(getattr(me_thread, "blockIdx", (0, 0, 0)))
        thread = tuple(getattr(me_thread, "threadIdx", (0, 0, 0)))
        place = _place(write, getattr(me_thread, "zg_atomic", False))
        key = (address, block) if watched.space == "shared" else address
        if place.kind == "update":
            place = self._update_half(me_thread, place, key, write)
        me = _Access(thread, block, getattr(me_thread, "zg_epoch", 0), place.kind == "atomic", place)
        if place.kind == "load" and _is_update(place.statement):
            me_thread.zg_loads = [*getattr(me_thread, "zg_loads", ())[-7:], (key, me)]
        with self.lock:
            element = self.elements.get(key)
            if element is None:
                element = self.elements[key] = _Element()
            if write:
                self._write(element, me, watched, index, same_value)
            else:
                self._read(element, me, watched, index)

    @staticmethod
    def _update_half(me_thread, place: Place, key, write: bool) -> Place:
        """On an `a[i] += v` line a load is plain until the thread stores to the element it
        loaded: then both are the update's halves (the doctor's "update" site)."""
        if not write:
            return replace(place, kind="load")
        for loaded, access in getattr(me_thread, "zg_loads", ()):
            if loaded == key and access.place.line == place.line:
                access.place = place
        me_thread.zg_loads = []
        return place

    def _read(self, element: _Element, me: _Access, watched, index) -> None:
        w = element.writer
        if w is not None and self._unordered(w, me, watched.space):
            self._clash("raw", w, me, watched, index)
        readers = [r for r in element.readers if r.thread != me.thread or r.block != me.block]
        if len(readers) < READERS_KEPT:
            readers.append(me)
        element.readers = readers

    def _write(self, element: _Element, me: _Access, watched, index, same_value: bool) -> None:
        for r in element.readers:
            if self._unordered(r, me, watched.space):
                self._clash("war", r, me, watched, index)
                break
        w = element.writer
        if w is not None and not same_value and self._unordered(w, me, watched.space):
            self._clash("ww", w, me, watched, index)
        elif me.atomic and w is not None and w.atomic and element.covered is not None:
            if self._unordered(element.covered, me, watched.space):
                self._clash("ww", element.covered, me, watched, index)
        if me.atomic and w is not None and not w.atomic:
            element.covered = w
        element.writer, element.readers = me, []

    @staticmethod
    def _unordered(them: _Access, me: _Access, space: str) -> bool:
        """Nothing orders the two accesses: other threads, not both atomic, and the same block
        and epoch (or two blocks, in global memory)."""
        if them.thread == me.thread and them.block == me.block:
            return False
        if them.atomic and me.atomic:
            return False
        if them.block != me.block:
            return space == "global"
        return them.epoch == me.epoch

    def _clash(self, kind: str, them: _Access, me: _Access, watched, index) -> None:
        key = (kind, watched.name, them.place.line, me.place.line, them.block != me.block)
        found = self.clashes.get(key)
        if found is not None:
            found.count += 1
            return
        if len(self.clashes) >= CLASHES_KEPT:
            return
        rank = self.launch.rank
        self.clashes[key] = Clash(
            kind,
            them.block != me.block,
            watched.name,
            watched.space,
            watched.root_index(index),
            (me.thread[:rank], me.block[:rank]),
            (them.thread[:rank], them.block[:rank]),
            self.launch,
            me,
            them,
        )


RECORD: Record | None = None
"""The recording in progress, or None (the simulator then runs as it always has)."""


@contextmanager
def recording():
    """Record the accesses of every kernel the simulator runs inside the block; yields the
    Record, whose `clashes` hold what it found."""
    global RECORD
    RECORD = record = Record()
    try:
        yield record
    finally:
        RECORD = None


class Watched:
    """An array a simulated kernel sees while recording: NumPy indexing, every scalar access
    noted. Rows and slices are Watched too (the same elements, the same name)."""

    __slots__ = ("_a", "name", "space", "_root", "_ptr")

    def __init__(self, array: np.ndarray, name: str, space: str, root: np.ndarray | None = None):
        self._a, self.name, self.space = array, name, space
        self._root = array if root is None else root
        self._ptr = array.__array_interface__["data"][0]

    def __getitem__(self, idx):
        value = self._a[idx]
        if isinstance(value, np.ndarray):
            return Watched(value, self.name, self.space, self._root)
        if RECORD is not None:
            RECORD.touch(self, self._address(idx), False, False, idx)
        return value

    def __setitem__(self, idx, value):
        old = self._a[idx]
        if isinstance(old, np.ndarray):
            self._a[idx] = value
            return
        self._a[idx] = value
        if RECORD is not None:
            RECORD.touch(self, self._address(idx), True, bool(old == self._a[idx]), idx)

    def _address(self, idx) -> int:
        idx = idx if isinstance(idx, tuple) else (idx,)
        a = self._a
        return self._ptr + sum((int(i) % n) * s for i, n, s in zip(idx, a.shape, a.strides))

    def root_index(self, idx) -> tuple:
        """The element's index in the whole array (a row's `r[j]` is `a[i, j]`)."""
        root = self._root
        offset = self._address(idx) - root.__array_interface__["data"][0]
        if root.flags.c_contiguous and 0 <= offset < root.nbytes:
            return tuple(int(i) for i in np.unravel_index(offset // root.itemsize, root.shape))
        return tuple(int(i) for i in (idx if isinstance(idx, tuple) else (idx,)))

    def __len__(self):
        return len(self._a)

    def __iter__(self):
        return (self[k] for k in range(len(self._a)))

    def __array__(self, dtype=None, copy=None):
        return self._a if dtype is None else self._a.astype(dtype)

    def __getattr__(self, name):
        return getattr(self._a, name)


# -- where an access comes from ---------------------------------------------------------------
_OURS: tuple = (os.path.dirname(np.__file__), __file__)


def _place(write: bool, atomic: bool) -> Place:
    """The learner's line that made this access (the first frame outside the simulator,
    NumPy and this module), and what kind of access it is."""
    frame = sys._getframe(3)
    while frame is not None and frame.f_code.co_filename.startswith(_OURS):
        frame = frame.f_back
    if frame is None:
        return Place("atomic" if atomic else ("store" if write else "load"), "", 0, "", "")
    filename, line = frame.f_code.co_filename, frame.f_lineno
    statement = linecache.getline(filename, line).strip()
    kind = "atomic" if atomic else ("update" if _is_update(statement) else ("store" if write else "load"))
    return Place(kind, filename, line, statement, frame.f_code.co_name)


_UPDATES: dict = {}


def _is_update(statement: str) -> bool:
    """`a[i] += v` and its kin: a read-modify-write of an element."""
    found = _UPDATES.get(statement)
    if found is None:
        try:
            node = pysource.parse(statement).body[0]
            found = isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Subscript)
        except (SyntaxError, IndexError):
            found = False
        _UPDATES[statement] = found
    return found


# -- the simulator's side ---------------------------------------------------------------------
def watch_arguments(kernel, args: tuple) -> tuple:
    """A launch's arguments, its arrays Watched under their parameter names (a new launch)."""
    from numba.cuda.simulator.kernel import normalize_kernel_dimensions

    fn = kernel.fn
    grid, block = normalize_kernel_dimensions(kernel.grid_dim, kernel.block_dim)
    RECORD.new_launch(fn.__name__, tuple(grid), tuple(block))
    try:
        names = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        names = []
    return tuple(_watched(arg, names[k] if k < len(names) else f"argument {k + 1}") for k, arg in enumerate(args))


def _watched(arg, name: str):
    array = getattr(arg, "_ary", arg)  # the simulator's device array holds its data here
    if isinstance(array, np.ndarray) and array.ndim > 0:
        return Watched(array, name, "global")
    return arg


def watch_shared(array: np.ndarray, caller_line: str) -> Watched:
    """A block's cuda.shared.array, named after the variable the line assigns it to."""
    name = caller_line.split("=", 1)[0].strip() if "=" in caller_line else ""
    return Watched(array, name if name.isidentifier() else "shared array", "shared")


def install(kernel_module, kernelapi) -> None:
    """Patch the simulator so that a recording sees barriers, atomics and thread fences."""
    plain_sync = kernel_module.BlockThread.syncthreads

    def syncthreads(self):
        plain_sync(self)
        self.zg_epoch = getattr(self, "zg_epoch", 0) + 1

    kernel_module.BlockThread.syncthreads = syncthreads
    for name in ("add", "sub", "and_", "or_", "xor", "inc", "dec", "exch", "max", "min", "nanmax", "nanmin", "cas"):
        setattr(kernelapi.FakeCUDAAtomic, name, _flagged_atomic(getattr(kernelapi.FakeCUDAAtomic, name)))
    kernelapi.FakeCUDAAtomic.compare_and_swap = _flagged_atomic(kernelapi.FakeCUDAAtomic.compare_and_swap)
    for name in ("threadfence", "threadfence_block", "threadfence_system"):
        setattr(kernelapi.FakeCUDAModule, name, _noting_fence(getattr(kernelapi.FakeCUDAModule, name)))


def _flagged_atomic(plain):
    def atomic(self, *args):
        me = threading.current_thread()
        me.zg_atomic = True
        try:
            return plain(self, *args)
        finally:
            me.zg_atomic = False

    return atomic


def _noting_fence(plain):
    def fence(self):
        if RECORD is not None and RECORD.launch is not None:
            RECORD.launch.relaxed = True
        return plain(self)

    return fence
