"""Where a GPU times an exercise: the benchmark's inputs and fenced outputs on the device (an
`Arena`), kept for a whole grading run in a replayer's `Pool` at fixed offsets, the timed
launches' own arrays after them (`Scratch`), and the variants every round's inputs get
(`variant_for`: a rotation by whole rows, a sign flip or a wrapping offset), exact on the host
and on the device. grader/gpu/harness.py times launches in an arena."""

from __future__ import annotations

import random

import numpy as np

from grader.sentinels import PAD, fenced_buffer

L2_FLUSH_BYTES = 256 << 20
"""Larger than any current GPU's L2 (H200: 60 MB)."""


class Arena:
    """Device inputs for each input set and one fenced output buffer per output."""

    def __init__(self, spec, input_sets, dims, flush_words: int | None = None, pool=None):
        from numba import cuda

        take = pool.take if pool is not None else lambda shape, dtype: cuda.device_array(shape, dtype)
        self.dims = dims
        self.input_sets = input_sets
        self.ready = False  # refreshed for the check about to be timed (`ready_kept_arena`)
        self.earlier = {}  # sparse rival's launch -> its last POOLED timed seconds in this arena
        self._locked = self._locked_outputs = None  # page-locked copies, made at the first refresh
        self.base = [{a.name: _upload(take, s[a.name]) for a in spec.inputs} for s in input_sets]
        self.negatable = {a.name: a.negatable for a in spec.inputs}
        self.inputs = {a.name: take(self.base[0][a.name].shape, self.base[0][a.name].dtype) for a in spec.inputs}
        self.scalars = [{p.name: np.dtype(p.dtype).type(s[p.name]) for p in spec.scalars} for s in input_sets]
        self.pristine, self.buffers, self.views, self.inits = {}, {}, {}, {}
        for out in spec.outputs:
            shape = out.shape_for(dims)
            size = int(np.prod(shape))
            self.inits[out.name] = out.init
            self.pristine[out.name] = _upload(take, fenced_buffer(out.dtype, size, out.init))
            self.buffers[out.name] = take(self.pristine[out.name].shape, self.pristine[out.name].dtype)
            self.buffers[out.name].copy_to_device(self.pristine[out.name])  # on the device: no 2nd upload
            self.views[out.name] = self.buffers[out.name][PAD : PAD + size].reshape(shape)
        words = flush_words or flush_bytes() // 4
        self.flush_words = take(words, np.uint32)  # any contents: it is only read
        self.flush_sink = take(1, np.uint32)

    def refresh(self) -> None:
        """Upload the inputs and the poisoned outputs again, into the same buffers: an arena kept
        for the next check (`kept_arena`) starts from what the grader made, whatever a kernel
        of the check before wrote out of its bounds. From page-locked copies made at the first
        refresh, which the GPU copies from directly (no staging through a pinned bounce buffer)."""
        if self._locked is None:
            self._locked = [{n: _page_locked(h[n]) for n in d} for d, h in zip(self.base, self.input_sets)]
            self._locked_outputs = {
                n: _page_locked(fenced_buffer(p.dtype, p.size - 2 * PAD, self.inits[n]))
                for n, p in self.pristine.items()
            }
        for device_set, host_set in zip(self.base, self._locked):
            for name, device in device_set.items():
                device.copy_to_device(host_set[name])
        for name, pristine in self.pristine.items():
            pristine.copy_to_device(self._locked_outputs[name])
            self.buffers[name].copy_to_device(pristine)

    def require_intact_inputs(self, samples: int = 64, chunk: int = 1024) -> None:
        """Raise if the base inputs on the device differ from the grader's, at `samples` places
        chosen at random (`chunk` elements each): a kernel that wrote into them during the timed
        rounds changed every later round's inputs, its rivals' too, and gets no speed."""
        rng = random.SystemRandom()
        for device_set, host_set in zip(self.base, self.input_sets):
            for name, device in device_set.items():
                flat_device, flat_host = device.reshape(device.size), np.ascontiguousarray(host_set[name]).reshape(-1)
                for _ in range(samples if device.size > chunk else 1):
                    start = rng.randrange(max(device.size - chunk, 0) + 1)
                    seen = flat_device[start : start + chunk].copy_to_host()
                    if seen.tobytes() != flat_host[start : start + chunk].tobytes():  # NaN too
                        raise InputsChanged(
                            f"the benchmark's input `{name}` changed during the timed runs: a kernel wrote "
                            "outside its output arrays, so no speed can be measured"
                        )

    def fresh_inputs(self, set_index, variant_seed, round_index):
        """This launch's inputs: the set, varied as `variant_for` says (never seen before)."""
        for name, base in self.base[set_index].items():
            variant = variant_for(variant_seed, round_index, set_index, name, base, self.negatable[name])
            vary_on_device(base, self.inputs[name], variant)

    def kwargs(self, set_index):
        return {**self.inputs, **self.scalars[set_index], **self.views}

    def reset_outputs(self):
        for name, buf in self.buffers.items():
            buf.copy_to_device(self.pristine[name])

    def flush_l2(self):
        from grader.gpu.device_kernels import read_all_launch

        read_all_launch(self.flush_words, self.flush_sink)

    def copy_outputs(self):
        return {name: buf.copy_to_host() for name, buf in self.buffers.items()}


class InputsChanged(RuntimeError):
    """The benchmark's inputs on the device changed during timing (`Arena.require_intact_inputs`)."""


def _page_locked(host: np.ndarray) -> np.ndarray:
    """A page-locked (pinned) copy of `host`, which the GPU copies from at full speed."""
    from numba import cuda

    try:
        locked = cuda.pinned_array(host.shape, host.dtype)
    except Exception:  # noqa: BLE001 - no page-locked memory to be had: slower, never wrong
        return np.ascontiguousarray(host)
    locked[...] = host
    return locked


def _upload(take, host: np.ndarray):
    device = take(host.shape, host.dtype)
    device.copy_to_device(np.ascontiguousarray(host))
    return device


class Pool:
    """One device allocation that a replayer's arenas are carved from, at fixed offsets
    (`reserve`, the first allocation of its CUDA context): every replayer of a run, a new one
    after a GPU fault too, then times an exercise in buffers at the same places. Kernels bound
    by atomics on one address run at a speed that depends on where it lands (docs/BENCHMARKS.md,
    "Buffer placement"); a fresh process allocating in a fixed order lands at the same places."""

    ALIGN = 2 << 20
    """Each buffer starts on a 2 MiB boundary, as a large allocation of its own would."""

    def __init__(self, nbytes: int):
        from numba import cuda

        self.buffer = cuda.device_array(nbytes, np.uint8)
        self.offset = 0

    def take(self, shape, dtype):
        """The next buffer of the pool."""
        taken, self.offset = self.carve(self.offset, shape, dtype)
        return taken

    def carve(self, start: int, shape, dtype) -> tuple:
        """(an array of `shape` and `dtype` at byte `start`, where the next one may start);
        MemoryError past the end of what was reserved."""
        dtype = np.dtype(dtype)
        shape = _as_shape(shape)
        nbytes = int(np.prod(shape)) * dtype.itemsize
        end = -(-(start + nbytes) // self.ALIGN) * self.ALIGN
        if end > self.buffer.size:
            raise MemoryError(f"the benchmark's buffers need more than the {self.buffer.size >> 20} MiB reserved")
        return self.buffer[start : start + nbytes].view(dtype).reshape(shape), end


def _as_shape(shape) -> tuple:
    return (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)


class Scratch:
    """Where a timed launch's own device arrays go (a scan's block sums, a reduction's partial
    sums: its plan's allocations, grader/replay/launch.py): the Pool's room after the arena,
    from the same offset at every launch (`start`). Numba's allocator would put them wherever
    its last frees left room, a place that differs from process to process and moves the
    speed of a kernel whose atomics or reads land there. No Pool, or no room: None, and the
    caller allocates as usual."""

    def __init__(self):
        self.pool, self.begin, self.offset = None, 0, 0

    def bind(self, pool) -> None:
        """The room after the arena just carved from `pool` (None: no Pool in this process)."""
        self.pool, self.begin = pool, pool.offset if pool is not None else 0

    def start(self) -> None:
        self.offset = self.begin

    def take(self, shape, dtype):
        shape = _as_shape(shape)
        if self.pool is None or not shape or 0 in shape:  # a 0-d or empty array: numba's own
            return None
        try:
            taken, self.offset = self.pool.carve(self.offset, shape, dtype)
        except MemoryError:
            return None
        return taken


scratch = Scratch()
"""The timed launches' scratch of this process (bound by `kept_arena`)."""
SCRATCH_BYTES = 1 << 30
"""Room a replayer's Pool keeps for timed launches' own arrays, beyond the largest arena."""


def arena_bytes(spec) -> int:
    """What `Arena` takes from a Pool for `spec`'s benchmark (one input set): each buffer it
    takes, in full 2 MiB steps (the inputs and outputs twice each: base and varied, pristine and
    written; then the L2 flush and its sink)."""
    dims = dict(spec.benchmark.dims)
    sizes = [int(np.prod(a.shape_for(dims))) * np.dtype(a.dtype).itemsize for a in spec.inputs] * 2
    sizes += [(int(np.prod(o.shape_for(dims))) + 2 * PAD) * np.dtype(o.dtype).itemsize for o in spec.outputs] * 2
    sizes += [flush_bytes(), 4]
    return sum(-(-n // Pool.ALIGN) * Pool.ALIGN for n in sizes)


def flush_bytes() -> int:
    """What the L2 flush reads: L2_FLUSH_BYTES on a GPU; on the simulator (CI's tiny sizes),
    where a 256 MiB read would take hours, a token 1 KiB."""
    from numba import config

    return 1024 if config.ENABLE_CUDASIM else L2_FLUSH_BYTES


_pool = None
_kept: dict = {}


def reserve(nbytes: int) -> None:
    """Make this process's Pool now (a replayer, before any other allocation of its context)."""
    global _pool
    _pool = Pool(nbytes)


def kept_arena(key, spec, input_sets, dims) -> Arena:
    """The arena of `key` (exercise, benchmark seed), made once and refreshed for each check:
    every submission of a run is timed in the very buffers its baseline and target are. In the
    process's Pool when it has one (one arena at a time, at the same offsets every time)."""
    arena = _kept.pop(key, None)
    if arena is None:
        _kept.clear()  # one arena: a class is graded exercise by exercise
        if _pool is not None:
            _pool.offset = 0
        arena = Arena(spec, input_sets, dims, pool=_pool)
        scratch.bind(_pool)
    elif not arena.ready:
        arena.refresh()
    arena.ready = False
    _kept[key] = arena
    return arena


def ready_kept_arena(key, spec, input_sets, dims) -> bool:
    """Make or refresh the arena of `key` now, for the timing that follows with no kernel run in
    between (a replayer does it while the grading process judges the check's cases); whether it
    was made anew (an exercise's first check)."""
    made = key not in _kept
    kept_arena(key, spec, input_sets, dims).ready = True
    return made


def unready() -> None:
    """A new task begins: its kernels may write anywhere, so every kept arena is refreshed again
    before it is timed in."""
    for arena in _kept.values():
        arena.ready = False


def variant_for(variant_seed: int, round_index: int, set_index: int, name: str, array, negatable=True) -> dict:
    """How the inputs of one timed launch differ from their set: a rotation of the flattened
    array by whole rows (its last axis), and a sign flip (floats the spec calls `negatable`)
    or a wrapping offset (unsigned integers). Each keeps the work a kernel does the same from
    round to round: a softmax row rotated by part of a row would take the max of two rows'
    values, and how many of its exp values underflow would change with the rotation. Exact on
    both host and device, so the grading process can rebuild the inputs of any checked launch."""
    rng = np.random.default_rng([variant_seed, round_index + 1, set_index, sum(map(ord, name))])  # warm-up is round -1
    dtype = np.dtype(array.dtype)
    row = max(tuple(array.shape)[-1], 1) if array.ndim >= 2 else 1  # (the simulator's shapes index from 0 only)
    variant = {"roll": row * int(rng.integers(0, max(array.size // row, 1)))}
    if dtype.kind == "f" and negatable:
        variant["sign"] = float(rng.choice([-1.0, 1.0]))
    elif dtype.kind == "u":
        # A whole number of 32s: values used as indices (histogram bins) move by whole 128-byte
        # lines, so a hot bin keeps its shared-memory bank and its place in a line, and with
        # them the atomics' contention, from round to round. The steps cycle, so any 8
        # consecutive rounds (warm-up included) get 8 different answers.
        steps = max(1, (1 << (8 * dtype.itemsize)) // 32)
        start = int(np.random.default_rng([variant_seed, set_index, sum(map(ord, name))]).integers(0, steps))
        variant["offset"] = 32 * ((start + round_index + 1) % steps)
    return variant


def vary_on_host(array: np.ndarray, variant: dict) -> np.ndarray:
    return _varied(np.roll(array.reshape(-1), -variant["roll"]), variant, array.dtype).reshape(array.shape)


def vary_at(array: np.ndarray, variant: dict, flat_indices: np.ndarray) -> np.ndarray:
    """`vary_on_host(array, variant).reshape(-1)[flat_indices]`, without varying the whole array."""
    flat = array.reshape(-1)
    return _varied(flat[(np.asarray(flat_indices, np.int64) + variant["roll"]) % flat.size], variant, array.dtype)


def _varied(values: np.ndarray, variant: dict, dtype) -> np.ndarray:
    """Values already rotated into place (a fresh array: changed in place, no second copy of a
    gigabyte), sign-flipped or offset: the same arithmetic, element by element, for a whole
    array and for a selection of it."""
    if "sign" in variant:
        np.multiply(values, dtype.type(variant["sign"]), out=values)
    if "offset" in variant:  # unsigned arithmetic wraps modulo 2^bits, as the device's masking does
        np.add(values, dtype.type(variant["offset"] % (1 << (8 * dtype.itemsize))), out=values)
    return values


def vary_on_device(src, dst, variant: dict) -> None:
    from grader.gpu.device_kernels import vary_float, vary_unsigned

    flat_src, flat_dst = src.reshape(src.size), dst.reshape(dst.size)
    dtype = np.dtype(src.dtype)
    blocks = min((src.size + 255) // 256, 4096)
    if "offset" in variant:
        mask = (1 << (8 * dtype.itemsize)) - 1
        # int64 offset and mask: the sum is done in 64 bits, then masked back into range
        vary_unsigned[blocks, 256](flat_src, flat_dst, variant["roll"], np.int64(variant["offset"]), np.int64(mask))
    else:
        vary_float[blocks, 256](flat_src, flat_dst, variant["roll"], dtype.type(variant.get("sign", 1)))
