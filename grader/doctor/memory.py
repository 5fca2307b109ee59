"""Memory the kernel doctor's kernels touch: global, shared and local arrays that check every
index and remember, per element, who last wrote and read it (shadow memory).

Time is counted in epochs: an epoch is the stretch of one block between two barriers, and the
epochs of a launch are numbered in execution order, so those of one block form one range.
A *stamp* packs (epoch, thread, atomic?) into one int: `epoch << 12 | thread << 1 | atomic`,
which makes "in this epoch" one comparison (`stamp >= CTX.efloor`), "in an earlier block of
this launch" another (`CTX.lfloor <= stamp < CTX.bfloor`) and "by another thread" a third
(`stamp >> 1 != CTX.meh`). Per element, `wr` holds the last writer's stamp and `rd` the first
reader's of the latest epoch it was read in, or `CTX.many` once a second thread read it
(`rd1`/`rd2` then keep two of the readers, for messages). When a block reads a global element
that an earlier block of the launch read, that earlier reader moves to `xr` (a dict: element ->
(stamp, site), rarely filled), so a later write by this block still conflicts with it (another
block read it, and blocks never wait for each other). Likewise, when an atomic lands on an
element whose last writer was a plain store of this launch, that store moves to `xw` (element
-> (stamp, site)): a later atomic of another thread, in another block or in the same epoch,
still conflicts with it (block 0 zeroing a total that other blocks add to atomically). Conflicts
go to `CTX.on_conflict`.

Stores that collide: when a plain store to a global element finds that its last writer was
another thread of the launch, with nothing ordering the two stores (the same epoch, or an
earlier block), it counts one more writer of the element in `dups` (a list made at the
launch's first such store: per element, the threads that stored to it after the first) and
keeps in `dup_same` the first one that stored the value already there: (element, the earlier
store's site, index).
The first store to an element in a launch never gets that far (grader/doctor/spaces.py,
`GlobalView._check_write`), so a kernel whose threads store distinct elements pays nothing.
At the end of the launch grader/doctor/findings.py turns the counts into findings
(`Findings.end_launch`) and clears them.

While kernels run, values live in `vals`, a list of NumPy scalars of the array's dtype (a
store casts with the dtype's scalar type, `stype`), except that an int32 array holds Python
ints, which stand for int32s and int64s (`element_class`): reading a list is five times faster
than indexing an array. A global array's list is written back to its NumPy buffer (`flush`) at
the end of every launch.

grader/doctor/spaces.py holds the checks of each memory space and the generated hot path.
"""

from __future__ import annotations

import itertools

import numpy as np

from grader.doctor.errors import OutOfBounds, Unsupported
from grader.sentinels import poison_value, same_bits

EPOCH_SHIFT = 12
"""Low bits of a stamp: 11 for the thread (blocks have at most 1024 threads) and 1 atomic bit."""
NO_STAMP = -1
NEVER_WRITTEN = -2
"""The stamp of an element of scratch memory (`cuda.device_array`) that neither a kernel nor
the host has written: reading it reads garbage on a GPU (grader/doctor/findings.py)."""
MANY = 2047
"""The thread field of a reader stamp meaning "two or more threads read it in this epoch"."""


class _Unset:
    """What an element of a thread's local array holds until that thread writes it."""

    __slots__ = ()

    def __repr__(self):
        return "<never written>"


UNSET = _Unset()


class Ctx:
    """Which thread runs now, in which epoch, and where conflicts go. One per process."""

    __slots__ = ("lin", "me", "meh", "efloor", "many", "bfloor", "lfloor", "on_conflict", "on_uninit")

    def __init__(self):
        self.lin = 0
        self.me = self.meh = self.efloor = self.many = self.bfloor = self.lfloor = 0
        self.on_conflict = self.on_uninit = None

    def set_epoch(self, epoch: int) -> None:
        self.efloor = epoch << EPOCH_SHIFT
        self.many = self.efloor | MANY << 1

    def set_thread(self, lin: int) -> None:
        self.lin = lin
        self.me = self.efloor | lin << 1
        self.meh = self.me >> 1


CTX = Ctx()

_addresses = itertools.count(1)


class Memory:
    """One allocation: its values (a list of NumPy scalars, and for global memory the NumPy
    buffer they are flushed to) plus its shadow (last writer and readers)."""

    __slots__ = (
        "data",
        "vals",
        "dirty",
        "stype",
        "wr",
        "ws",
        "rd",
        "rs",
        "rd1",
        "rd2",
        "rs2",
        "xr",
        "xw",
        "dups",
        "dup_same",
        "space",
        "name",
        "addr",
        "itemsize",
        "scratch",
    )

    def __init__(self, data: np.ndarray, space: str, name: str):
        assert data.ndim == 1
        n = data.size
        python = element_class(data.dtype) is int
        self.data, self.vals, self.space, self.name = data, data.tolist() if python else list(data), space, name
        self.dirty, self.stype, self.itemsize = False, _int32 if python else data.dtype.type, data.itemsize
        self.addr = next(_addresses) << 32  # a fake, 256-byte aligned device address
        self.scratch = False
        if space != "local":
            self.wr, self.ws = [NO_STAMP] * n, [0] * n
            self.rd, self.rs = [NO_STAMP] * n, [0] * n
            self.rd1, self.rd2, self.rs2 = [NO_STAMP] * n, [NO_STAMP] * n, [0] * n
            self.xr: dict = {}
            self.xw: dict = {}
            self.dups: list | None = None
            self.dup_same: tuple | None = None

    def flush(self) -> None:
        """Values written by kernels -> the NumPy buffer (what the host and the judge see)."""
        if self.dirty:
            self.data[:] = self.vals
            self.dirty = False
            if self.data.dtype.kind == "f" and self.space == "global":
                self._canonical_nans()

    def _canonical_nans(self) -> None:
        """A GPU's arithmetic makes every NaN its one canonical NaN, where x86 keeps a NaN's
        payload: `out[i] += v` on an output still holding the grader's poison stores a NaN
        with the poison's bits here, which would read as "never written". An element a kernel
        stored to (its write record says so) never keeps the poison's bits."""
        poison = poison_value(self.data.dtype)
        kept = np.flatnonzero(same_bits(self.data, poison))
        if kept.size:
            stored = kept[np.asarray(self.wr, dtype=np.int64)[kept] >= 0]
            self.data[stored] = np.nan

    def refresh(self) -> None:
        """The host wrote the NumPy buffer: reload the values (in place: views hold the list).
        Scratch memory counts as set from then on (a fill with 0 sets it all)."""
        self.vals[:] = self.data.tolist() if self.stype is _int32 else list(self.data)
        if self.scratch:
            self.wr[:] = [max(w, NO_STAMP) for w in self.wr]
            self.scratch = False

    def never_written(self) -> None:
        """Scratch memory: every element holds garbage until something writes it."""
        self.wr[:] = [NEVER_WRITTEN] * len(self.wr)
        self.scratch = True


def element_class(dtype: np.dtype) -> type:
    """The class of the values a kernel reads from an array of `dtype` on the doctor: Python
    ints for int32 (Numba computes with an int32 in 64 bits, as with a Python int; NumPy's
    int32 would wrap at 32 bits), the dtype's NumPy scalar type otherwise (an int8 or int16
    beside a float32 stays float32 in Numba, a Python int would make it float64)."""
    return int if dtype.kind == "i" and dtype.itemsize == 4 else dtype.type


def _int32(value) -> int:
    """A value stored to an int32 array, as a Python int: an integer's low 32 bits (a GPU's
    conversion), a float truncated toward zero (NaN to 0, out of range to the nearest end, as
    PTX's cvt.rzi does)."""
    if value.__class__ is int and -0x80000000 <= value <= 0x7FFFFFFF:
        return value
    if isinstance(value, (float, np.floating)):
        x = float(value)
        if x != x:
            return 0
        return int(min(max(x, -2147483648.0), 2147483647.0))
    value = int(value) & 0xFFFFFFFF
    return value - (1 << 32) if value >> 31 else value


def wrap_integer(stype, value):
    """A Python int stored to an integer array it does not fit: keep its low bits, as a GPU's
    (C's) conversion does (NumPy's scalar types refuse it)."""
    dtype = np.dtype(stype)
    if dtype.kind not in "iu" or not isinstance(value, (int, np.integer)):
        return stype(value)  # raises the OverflowError again: not ours to change
    bits = dtype.itemsize * 8
    value = int(value) & ((1 << bits) - 1)
    if dtype.kind == "i" and value >= 1 << (bits - 1):
        value -= 1 << bits
    return stype(value)


class _Slice(TypeError):
    """Not an integer index: take the slicing path."""


def _int(value, view) -> int:
    """An index as a Python int (NumPy integers would overflow in the offset arithmetic)."""
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, slice):
        raise _Slice()
    raise IndexError(
        f"`{view.name}` was indexed with {value!r} ({type(value).__name__}): array "
        "indices must be integers (use int(...) or //)"
    )


def _note_reader(mem, f, site):
    ctx = CTX
    r = mem.rd[f]
    if r != ctx.many:
        if r < ctx.efloor:
            if ctx.lfloor <= r < ctx.bfloor:
                _keep_cross_reader(mem, f, r)
            mem.rd[f] = ctx.me
            mem.rs[f] = site
        elif (r >> 1) & MANY != ctx.lin:  # another thread (a warp kernel's sub-epochs: the same one)
            _second_reader(mem, f, r, site)


def _keep_cross_reader(mem, f, r):
    """This block reads an element an earlier block of the launch read (stamp `r`): keep that
    reader (the first such one), which a write by this block must still conflict with."""
    if (r >> 1) & MANY == MANY:  # several readers in that epoch: rd1 holds the first
        r = mem.rd1[f]
    kept = mem.xr.get(f)
    if kept is None or kept[0] < CTX.lfloor:
        mem.xr[f] = (r, mem.rs[f])


def _second_reader(mem, f, first, site):
    """A second thread reads the element in this epoch: remember both, mark it "many"."""
    mem.rd1[f], mem.rd2[f], mem.rs2[f] = first, CTX.me, site
    mem.rd[f] = CTX.many


def _conflict(kind, view, f, other, other_site, site, index):
    CTX.on_conflict(kind, view, f, other, other_site, site, index)


class View:
    """An array as a kernel sees it: a window (offset, shape, strides in elements) on a Memory.

    `_flat` turns an index into the element offset, checking every axis; `_ld`, `_st`, `_upd`
    and `_atomic` are what the transformed kernel calls for `a[i]`, `a[i] = v`, `a[i] += v`
    and `cuda.atomic.op(a, i, v)`.
    """

    __slots__ = (
        "mem",
        "arr",
        "shape",
        "ndim",
        "size",
        "off",
        "st",
        "n0",
        "n1",
        "n2",
        "s0",
        "s1",
        "s2",
        "name",
        "dtype",
        "wr",
        "rd",
        "ws",
        "rs",
        "vals",
        "stype",
        "rows",
    )

    def __init__(self, mem: Memory, arr: np.ndarray, name: str | None = None):
        self.mem, self.arr = mem, arr
        self.vals, self.stype, self.rows = mem.vals, mem.stype, None
        shadow = mem.space != "local"  # the memory's shadow lists, one attribute away
        self.wr, self.rd, self.ws, self.rs = (mem.wr, mem.rd, mem.ws, mem.rs) if shadow else (None,) * 4
        self.shape, self.ndim, self.size, self.dtype = arr.shape, arr.ndim, arr.size, arr.dtype
        base = mem.data
        self.off = (arr.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // base.itemsize
        self.st = tuple(s // base.itemsize for s in arr.strides)
        dims = list(arr.shape) + [1, 1, 1]
        strides = list(self.st) + [0, 0, 0]
        self.n0, self.n1, self.n2 = dims[:3]
        self.s0, self.s1, self.s2 = strides[:3]
        self.name = name or mem.name

    # -- indexing -------------------------------------------------------------------------
    def _flat(self, idx, site, write):
        """Element offset of `idx` in the memory, or OutOfBounds (negative indices too);
        None for what is not one element (slices, fewer indices than axes)."""
        ndim = self.ndim
        try:
            if ndim == 1:
                if idx.__class__ is not int:
                    if idx.__class__ is tuple:
                        if len(idx) != 1:
                            return None
                        idx = idx[0]
                    idx = _int(idx, self)
                if 0 <= idx < self.n0:
                    return self.off + idx * self.s0
                self._raise((idx,), site, write)
            if ndim == 2:
                i, j = idx
                if i.__class__ is not int or j.__class__ is not int:
                    i, j = _int(i, self), _int(j, self)
                if 0 <= i < self.n0 and 0 <= j < self.n1:
                    return self.off + i * self.s0 + j * self.s1
                self._raise((i, j), site, write)
            if ndim == 3:
                i, j, k = idx
                if i.__class__ is not int or j.__class__ is not int or k.__class__ is not int:
                    i, j, k = _int(i, self), _int(j, self), _int(k, self)
                if 0 <= i < self.n0 and 0 <= j < self.n1 and 0 <= k < self.n2:
                    return self.off + i * self.s0 + j * self.s1 + k * self.s2
                self._raise((i, j, k), site, write)
            if idx.__class__ is not tuple or len(idx) != ndim:
                return None
            idx = tuple(_int(i, self) for i in idx)
            f = self.off
            for i, n, s in zip(idx, self.shape, self.st):
                if not 0 <= i < n:
                    self._raise(idx, site, write)
                f += i * s
            return f
        except (TypeError, ValueError):
            return None  # slices, too few indices...: the caller takes the slow path

    def _raise(self, idx, site, write):
        for axis, (i, n) in enumerate(zip(idx, self.shape)):
            if not 0 <= i < n:
                raise OutOfBounds(self.name, tuple(int(v) for v in idx), self.shape, axis, site, write)
        raise OutOfBounds(self.name, tuple(idx), self.shape, 0, site, write)

    def _subview(self, idx, site):
        """`a[i]` of a 2-D array, `a[i, :]`, ...: a smaller view on the same memory (not
        checked for races: only the elements read through it are)."""
        key = idx if idx.__class__ is tuple else (idx,)
        if len(key) > self.ndim:
            raise IndexError(f"too many indices for `{self.name}`: it has {self.ndim} dimension(s)")
        for axis, k in enumerate(key):
            if isinstance(k, (int, np.integer)) and not 0 <= k < self.shape[axis]:
                shown = tuple(int(v) if isinstance(v, (int, np.integer)) else 0 for v in key)
                raise OutOfBounds(self.name, shown, self.shape, axis, site, False)
            if not isinstance(k, (int, np.integer, slice)):
                raise IndexError(f"`{self.name}` was indexed with {type(k).__name__}; use integers")
        return make_view(self.mem, self.arr[key], self.name)

    def _value(self, f):
        return self.vals[f]

    def _put(self, f, value):
        if value.__class__ is not self.stype:
            try:
                value = self.stype(value)
            except OverflowError:
                value = wrap_integer(self.stype, value)
        self.vals[f] = value
        self.mem.dirty = True

    # -- the host's side: lesson code (`grader.doctor.run`) and the grader's replayed plans -------
    def __len__(self):
        return self.shape[0]

    @property
    def strides(self):
        return self.arr.strides

    @property
    def itemsize(self):
        return self.arr.itemsize

    @property
    def nbytes(self):
        return self.arr.nbytes

    @property
    def T(self):
        return make_view(self.mem, self.arr.T, self.name)

    def transpose(self, *axes):
        return make_view(self.mem, self.arr.transpose(*axes), self.name)

    def reshape(self, *shape, order="C"):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        out = self.arr.reshape(shape, order=order)
        if not np.shares_memory(out, self.mem.data):
            raise ValueError("reshape would copy this array")
        return make_view(self.mem, out, self.name)

    def ravel(self, order="C"):
        return self.reshape(self.size, order=order)

    def view(self, dtype):
        # Elements of another size would break the per-element bookkeeping: the simulator runs it.
        raise Unsupported(f"`{self.name}.view({np.dtype(dtype).name})`, reading an array's bytes as another type")

    def is_c_contiguous(self):
        return self.arr.flags.c_contiguous

    def is_f_contiguous(self):
        return self.arr.flags.f_contiguous

    def copy_to_host(self, ary=None, stream=0):
        self.mem.flush()
        if ary is None:
            return self.arr.copy()
        ary[...] = self.arr
        return ary

    def copy_to_device(self, ary, stream=0):
        self.mem.flush()
        self.arr[...] = ary
        self.mem.refresh()

    def __getitem__(self, key):
        self.mem.flush()
        sub = self.arr[key]
        if isinstance(sub, np.ndarray):
            return make_view(self.mem, sub, self.name)
        return sub

    def __setitem__(self, key, value):
        self.mem.flush()
        self.arr[key] = value
        self.mem.refresh()

    def __array__(self, dtype=None, copy=None):
        self.mem.flush()
        return np.array(self.arr, dtype=dtype)

    def __iter__(self):
        self.mem.flush()
        return iter(self.arr.copy())

    def __getattr__(self, name):
        """Only names a View lacks arrive here."""
        raise AttributeError(f"a device array has no attribute `{name}`")

    def __repr__(self):
        return f"<kernel doctor {self.mem.space} array {self.name} {self.shape} {self.dtype}>"


VIEW_CLASSES: dict = {}
"""(space, ndim or None) -> the View subclass with that space's checks: grader/wiring.py fills it
with grader/doctor/spaces.py's (which builds on this module, so this one never imports it)."""


def make_view(mem: Memory, arr: np.ndarray, name: str | None = None) -> View:
    """A view of the right class for its space and number of dimensions."""
    return VIEW_CLASSES[(mem.space, arr.ndim if arr.ndim in (1, 2, 3) else None)](mem, arr, name)
