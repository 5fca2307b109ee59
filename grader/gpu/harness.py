"""Timing on a real GPU, following the checklist in docs/ARCHITECTURE.md:

CUDA events around each launch, queued behind a hold of the GPU that outlasts the host's queueing
of the whole launch (`_Holds`), so that neither Numba's dispatch nor the host's pace between a
launch's kernels is timed, then a device-wide synchronize (the host clock from the end event to
its return catches work hidden on other streams); warm-up first (a baseline or target once per
process); L2 flushed before every timed launch; contenders (learner, baseline, target)
interleaved in rotating order, a rival far slower than the learner in the first rounds only,
or the first beside its times at a replayer's earlier checks (`is_sparse`, `POOLED`); every
round gets inputs no launch has seen (each input set rotated and sign-flipped or offset,
exactly reproducible by the grading process); outputs poisoned before every launch and checked
on randomly chosen timed runs; rounds repeated until the median ratios are known to ±1% (long
launches: from the rounds that always run) or a time cap.
The same code runs on Numba's simulator at tiny sizes, which is how CI tests it.
"""

from __future__ import annotations

import random
import time
import weakref
from dataclasses import dataclass, field

import numpy as np

from grader.sentinels import PAD, fenced_buffer
from grader.gpu.statistics import Ratio, paired_ratio, settled

MIN_ROUNDS = 3
"""Rounds every measurement runs: the checked launch of yours is drawn from these."""
L2_FLUSH_BYTES = 256 << 20
"""Larger than any current GPU's L2 (H200: 60 MB)."""
HOLD_MICROSECONDS = 200
"""How long the GPU is kept busy before each timed launch: far more than it takes the host to
record the start event and queue the launch (Numba's dispatch: ~26 µs)."""
HIDDEN_WORK_SLACK = 200e-6


@dataclass
class Samples:
    seconds: dict = field(default_factory=dict)
    """Contender -> event-timed seconds per launch, in launch order."""
    after_end_seconds: dict = field(default_factory=dict)
    """Contender -> seconds a device-wide synchronize still waited after the end event, per
    launch: work that escaped the events (on another stream)."""
    checked: list = field(default_factory=list)
    """(contender, round, input set index, {output name: fenced buffer}) of checked timed runs."""
    rounds: int = 0
    stop_reason: str = ""
    phases: dict = field(default_factory=dict)
    """Wall seconds per phase of the measurement (inputs to the device, warm-up, timing)."""
    sampled_with: int | None = None
    """The seed of `picks` (grader/steps/judge.py) when the checked outputs came back sampled
    (a child's, `sampled_outputs`), else None: whole buffers."""
    sparse: list = field(default_factory=list)
    """Contenders timed in the first SPARSE_ROUNDS rounds only (`is_sparse`)."""
    checkable: int = MIN_ROUNDS
    """The checked launch of yours is drawn from the rounds before this one."""
    earlier: dict = field(default_factory=dict)
    """Sparse contender -> its seconds at this replayer's earlier checks of the exercise, in the
    same buffers (`_Arena.earlier`): counted in its median with this check's."""

    def all_seconds(self, name: str) -> list:
        """`name`'s seconds at this check, with its earlier checks' where it was sparse."""
        return list(self.earlier.get(name, [])) + list(self.seconds[name])

    def ratio(self, numerator: str, denominator: str) -> Ratio:
        """How many times longer `numerator` took than `denominator`: the median of the
        interleaved pairs' ratios, or, where either was timed sparsely, of its times over the
        median of the other's."""
        top, bottom = self.seconds[numerator], self.seconds[denominator]
        if numerator in self.sparse:
            top = self.all_seconds(numerator)
            return paired_ratio(top, [float(np.median(bottom))] * len(top))
        if denominator in self.sparse:
            bottom = self.all_seconds(denominator)
            return paired_ratio([float(np.median(top))] * len(bottom), bottom)
        return paired_ratio(top, bottom)


class _Arena:
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
    """The benchmark's inputs on the device changed during timing (`_Arena.require_intact_inputs`)."""


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
    sums: its plan's allocations, grader/replay/replayer.py): the Pool's room after the arena,
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
    """What `_Arena` takes from a Pool for `spec`'s benchmark (one input set): each buffer it
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


def kept_arena(key, spec, input_sets, dims) -> _Arena:
    """The arena of `key` (exercise, benchmark seed), made once and refreshed for each check:
    every submission of a run is timed in the very buffers its baseline and target are. In the
    process's Pool when it has one (one arena at a time, at the same offsets every time)."""
    arena = _kept.pop(key, None)
    if arena is None:
        _kept.clear()  # one arena: a class is graded exercise by exercise
        if _pool is not None:
            _pool.offset = 0
        arena = _Arena(spec, input_sets, dims, pool=_pool)
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


def hold_gpu(microseconds: int = HOLD_MICROSECONDS):
    """Queue a kernel that keeps the GPU busy for about `microseconds`."""
    from numba import config

    if not config.ENABLE_CUDASIM:  # the simulator has no nanosleep, and no GPU to idle
        from grader.gpu.device_kernels import hold

        hold[1, 1](microseconds)


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


def _timed_launch(launch, kwargs, arena, flush, hold_microseconds: int = HOLD_MICROSECONDS):
    """(event seconds, host seconds still waited after the end event, host seconds the launch
    took to queue) of one launch."""
    from numba import cuda

    arena.reset_outputs()
    if flush:
        arena.flush_l2()
    start, end = cuda.event(), cuda.event()
    # Queued behind the flush and a hold, the start event fires once the launch is queued
    # too: with the GPU idle instead, the events would time the host's dispatch (~26 µs,
    # varying from process to process) as if it were the kernel's.
    hold_gpu(hold_microseconds)
    queuing = time.perf_counter()
    start.record()
    launch(**kwargs)
    end.record()
    queued = time.perf_counter() - queuing
    end.synchronize()
    after_end = time.perf_counter()
    cuda.synchronize()  # device-wide: every stream, not only the default one
    return start.elapsed_time(end) / 1e3, time.perf_counter() - after_end, queued


HOLD_COVER = 3.0
MAX_HOLD_MICROSECONDS = 20_000


class _Holds:
    """How long the GPU is held before each contender's timed launch: HOLD_COVER times the
    host's time to queue its whole launch (the median so far; its warm-up's, or its last
    check's, to start), at least HOLD_MICROSECONDS. A launch of many small kernels (a scan's
    levels, each with its arrays) takes the host longer to queue than the GPU to run: held
    only 0.2 ms, the GPU waited for the host between kernels, and the events timed the host's
    pace, which a loaded machine slows (the same scan got 8.4x and 9.7x in one class run)."""

    def __init__(self):
        self.seen, self.measured = {}, set()

    def start(self, name: str, seconds: float) -> None:
        self.seen[name] = [seconds]

    def saw(self, name: str, seconds: float) -> None:
        if name not in self.measured:  # a warm-up's figure may include compiling: replaced
            self.measured.add(name)
            self.seen[name] = []
        self.seen[name].append(seconds)

    def typical(self, name: str) -> float:
        return float(np.median(self.seen[name]))

    def microseconds(self, name: str) -> int:
        wanted = HOLD_COVER * self.typical(name) * 1e6
        return int(min(max(wanted, HOLD_MICROSECONDS), MAX_HOLD_MICROSECONDS))


SPARSE_FACTOR = 4.0
SPARSE_MIN_SECONDS = 0.020
SPARSE_ROUNDS = 2


def is_sparse(reference_seconds: float, yours_seconds: float) -> bool:
    """Is a reference slow enough, at its first timed launch, to be timed in the first
    SPARSE_ROUNDS rounds only? At least SPARSE_FACTOR times yours and SPARSE_MIN_SECONDS: its
    launches then take most of each round (a 471 ms baseline beside a 2 ms reduction), and
    their jitter, microseconds, is a ten-thousandth of them, while the median of yours, timed
    every round, carries the noise that sets how many rounds are needed."""
    return reference_seconds >= max(SPARSE_FACTOR * yours_seconds, SPARSE_MIN_SECONDS)


POOLED = 8
"""A sparse rival's figure: the median of its last POOLED launches in the arena, this check's
and the replayer's earlier checks' of the exercise (`_Arena.earlier`). Its launches take
hundreds of milliseconds and vary by microseconds, in the very buffers and inputs each time:
timing it again twice per check (reduce_sum's 471 ms baseline, a second of every check) adds
nothing the pool does not know, and the pool makes one check's launch count for 1 in 8."""
MIN_PAIRS_TO_SETTLE = 10
"""Six ratios can cluster by luck; a median is called settled only from ten pairs on, unless
every launch timed each round is long (`LONG_LAUNCH_SECONDS`); slow kernels stop earlier at
the time cap anyway."""
LONG_LAUNCH_SECONDS = 0.020
"""Launches this long (a naive 4096³ matrix product: 100 ms) vary by microseconds, a
ten-thousandth of them: their ratios are known from the MIN_ROUNDS rounds that always run,
where ten would take the time cap (1.5 s) and add nothing."""
CAP_SECONDS = 1.5


def choose_check(input_sets: int, rounds: int = MIN_ROUNDS, rng=None) -> tuple[int, int]:
    """The (round, input set) of the learner's launch whose outputs are checked, chosen at
    random by the grading process. Every round's inputs are new, so one checked launch
    catches replayed or cached answers as surely as many."""
    rng = rng or random.SystemRandom()
    return rng.randrange(rounds), rng.randrange(input_sets)


def measure(
    spec,
    contenders: dict,
    input_sets: list,
    *,
    variant_seed: int = 0,
    flush: bool = True,
    cap_seconds: float = CAP_SECONDS,
    min_rounds: int = MIN_ROUNDS,
    max_rounds: int = 200,
    max_uncertainty: float = 0.01,
    check: tuple[int, int] | None = None,
    keep=None,
) -> Samples:
    """Interleave `contenders` ({name: launch}, the learner first) on `input_sets`; copy back
    the outputs of the learner's launch at `check` (round, set). `keep`: a key under which the
    buffers stay for the next check (`kept_arena`)."""
    stop = (cap_seconds, min_rounds, max_rounds, max_uncertainty)
    clock = time.perf_counter()
    dims = dict(spec.benchmark.dims)
    names = list(contenders)
    samples = Samples({n: [] for n in names}, {n: [] for n in names}, checkable=min_rounds)
    check = check or choose_check(len(input_sets), min_rounds)
    check = (min(check[0], min_rounds - 1), check[1])  # a round that is sure to run
    arena = kept_arena(keep, spec, input_sets, dims) if keep is not None else _Arena(spec, input_sets, dims)
    samples.phases["inputs to device"] = time.perf_counter() - clock
    holds = _Holds()
    for name in names:  # warm-up: JIT compile and module load stay out of the figures
        clock = time.perf_counter()
        queued = None if name == names[0] else _remembered(contenders[name], arena.kwargs(0))
        if queued is None:  # yours, or a rival not yet launched in this process
            arena.fresh_inputs(0, variant_seed, -1)
            queued = _timed_launch(contenders[name], arena.kwargs(0), arena, flush)[2]
        holds.start(name, queued)
        samples.phases[f"warm-up: {name}"] = time.perf_counter() - clock
    started = time.perf_counter()
    # a sparse rival of a kept arena is timed once: its last POOLED - 1 times and this check's
    # make POOLED (a new arena has none, so its rivals get SPARSE_ROUNDS)
    earlier = {n: arena.earlier.get(contenders[n], [])[-(POOLED - 1) :] for n in names[1:]}
    _rounds(contenders, names, arena, samples, check, variant_seed, flush, len(input_sets), stop, holds, earlier)
    for name in names[1:]:
        _remember(contenders[name], arena.kwargs(0), holds.typical(name))
    arena.require_intact_inputs()  # before any of this check's times is kept for the next
    for name in samples.sparse:
        arena.earlier[contenders[name]] = samples.all_seconds(name)[-POOLED:]
    samples.phases["timed rounds"] = time.perf_counter() - started
    return samples


_warm: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
"""launch (a baseline, a target) -> {its arguments' types: host seconds its launch took to queue
at its last check}: launched in this process, so compiled and loaded."""


def _kinds(kwargs: dict) -> tuple:
    return tuple(sorted((k, str(getattr(v, "dtype", type(v))), getattr(v, "shape", ())) for k, v in kwargs.items()))


def _remembered(launch, kwargs: dict) -> float | None:
    """How long `launch` took to queue at its last check on arguments of these types, if it
    had one in this process: a replayer's later checks time it without a warm-up launch."""
    try:
        return _warm.get(launch, {}).get(_kinds(kwargs))
    except TypeError:  # a launch that cannot be referred to weakly is warmed up every time
        return None


def _remember(launch, kwargs: dict, queued: float) -> None:
    try:
        _warm.setdefault(launch, {})[_kinds(kwargs)] = queued
    except TypeError:
        pass


def _rounds(contenders, names, arena, samples, check, variant_seed, flush, sets, stop, holds, earlier) -> None:
    """Rounds of timed launches, interleaved in rotating order, until `stop` says enough. A
    rival `is_sparse` after the first round is timed in the first SPARSE_ROUNDS only, or in the
    first alone where `earlier` ({name: seconds}, a kept arena's) has its earlier checks'."""
    cap_seconds, min_rounds, max_rounds, max_uncertainty = stop
    input_sets = range(sets)
    started = time.perf_counter()
    launch_index = 0
    sparse_rounds = {n: SPARSE_ROUNDS if not earlier.get(n) else 1 for n in names}
    while True:
        for set_index in input_sets:
            timed = [n for n in names if n not in samples.sparse or samples.rounds < sparse_rounds[n]]
            order = timed[launch_index % len(timed) :] + timed[: launch_index % len(timed)]
            for name in order:
                # Inputs no launch has seen (caching answers by input buffer or content fails),
                # made anew for each contender: a kernel that wrote past its outputs into the
                # inputs cannot make the next contender's work harder
                arena.fresh_inputs(set_index, variant_seed, samples.rounds)
                seconds, after_end, queued = _timed_launch(
                    contenders[name], arena.kwargs(set_index), arena, flush, holds.microseconds(name)
                )
                holds.saw(name, queued)
                samples.seconds[name].append(seconds)
                samples.after_end_seconds[name].append(after_end)
                if name == names[0] and (samples.rounds, set_index) == tuple(check):
                    samples.checked.append((name, samples.rounds, set_index, arena.copy_outputs()))
            launch_index += 1
        if samples.rounds == 0:
            first_yours = float(np.median(samples.seconds[names[0]]))
            samples.sparse = [n for n in names[1:] if is_sparse(float(np.median(samples.seconds[n])), first_yours)]
            samples.earlier = {n: list(earlier[n]) for n in samples.sparse if earlier.get(n)}
        samples.rounds += 1
        if samples.rounds < min_rounds:
            continue
        if _enough_pairs(samples, names) and settled(_settling(samples, names), max_uncertainty):
            samples.stop_reason = f"median ratios known within ±{max_uncertainty:.0%}"
            break
        if time.perf_counter() - started > cap_seconds:
            samples.stop_reason = f"time cap of {cap_seconds:g} s"
            break
        if samples.rounds >= max_rounds:
            samples.stop_reason = f"{max_rounds} rounds"
            break


def _enough_pairs(samples: Samples, names: list) -> bool:
    """Enough pairs to call the medians settled: MIN_PAIRS_TO_SETTLE, or the rounds that always
    run when every contender timed each round took LONG_LAUNCH_SECONDS or more."""
    yours = samples.seconds[names[0]]
    dense = [n for n in names if n not in samples.sparse]
    if all(float(np.median(samples.seconds[n])) >= LONG_LAUNCH_SECONDS for n in dense):
        return True  # measure() only asks once the MIN_ROUNDS rounds have run
    return len(yours) >= MIN_PAIRS_TO_SETTLE


def _settling(samples: Samples, names: list) -> list:
    """The ratios whose uncertainty decides when the rounds may stop: each rival timed every
    round against yours; where every rival is sparse, yours against its own median."""
    dense = [samples.ratio(n, names[0]) for n in names[1:] if n not in samples.sparse]
    yours = samples.seconds[names[0]]
    return dense or [paired_ratio(yours, [float(np.median(yours))] * len(yours))]


def hidden_work(event_seconds: list, after_end_seconds: list) -> bool:
    """Did the GPU stay busy long after the end event? Then work escaped the events."""
    event, after = float(np.median(event_seconds)), float(np.median(after_end_seconds))
    return after > 0.5 * event + HIDDEN_WORK_SLACK


def settle() -> None:
    """Wait until every launch of this process has finished (device-wide), if it has a CUDA
    context: a replayer's next task, or the timing, starts on an idle GPU. Asking makes no
    context; the simulator has none. A context a fault broke (an illegal address) runs nothing
    more: its error is the case's."""
    from numba import config

    if config.ENABLE_CUDASIM:
        return
    try:
        from numba import cuda
        from numba.cuda.cudadrv.driver import driver

        with driver.get_active_context() as active:
            if active.devnum is None:
                return
        cuda.synchronize()
    except Exception:  # noqa: BLE001 - reported by the case that faulted, not here
        pass
