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

from grader.gpu.arena import Arena, kept_arena
from grader.gpu.statistics import Ratio, paired_ratio, settled

MIN_ROUNDS = 3
"""Rounds every measurement runs: the checked launch of yours is drawn from these."""
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
    same buffers (`Arena.earlier`): counted in its median with this check's."""

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


def hold_gpu(microseconds: int = HOLD_MICROSECONDS):
    """Queue a kernel that keeps the GPU busy for about `microseconds`."""
    from numba import config

    if not config.ENABLE_CUDASIM:  # the simulator has no nanosleep, and no GPU to idle
        from grader.gpu.device_kernels import hold

        hold[1, 1](microseconds)


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
and the replayer's earlier checks' of the exercise (`Arena.earlier`). Its launches take
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


@dataclass(frozen=True)
class Stop:
    """When the timed rounds end: after `min_rounds` at least, once every median ratio is known
    to ±`max_uncertainty`, or past `cap_seconds`, or at `max_rounds`."""

    cap_seconds: float = CAP_SECONDS
    min_rounds: int = MIN_ROUNDS
    max_rounds: int = 200
    max_uncertainty: float = 0.01


@dataclass
class _Run:
    """One measurement's rounds: what `_rounds` times, where, and what it writes down."""

    contenders: dict
    names: list
    arena: Arena
    samples: Samples
    check: tuple
    variant_seed: int
    flush: bool
    sets: int
    holds: _Holds


def measure(
    spec,
    contenders: dict,
    input_sets: list,
    *,
    variant_seed: int = 0,
    flush: bool = True,
    check=None,
    keep=None,
    **stop,
) -> Samples:
    """Interleave `contenders` ({name: launch}, the learner first) on `input_sets`; copy back
    the outputs of the learner's launch at `check` (round, set). `keep`: a key under which the
    buffers stay for the next check (`kept_arena`). `stop`: `Stop`'s fields (`cap_seconds`,
    `min_rounds`, ...)."""
    stop = Stop(**stop)
    min_rounds = stop.min_rounds
    clock = time.perf_counter()
    dims = dict(spec.benchmark.dims)
    names = list(contenders)
    samples = Samples({n: [] for n in names}, {n: [] for n in names}, checkable=min_rounds)
    check = check or choose_check(len(input_sets), min_rounds)
    check = (min(check[0], min_rounds - 1), check[1])  # a round that is sure to run
    arena = kept_arena(keep, spec, input_sets, dims) if keep is not None else Arena(spec, input_sets, dims)
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
    run = _Run(contenders, names, arena, samples, check, variant_seed, flush, len(input_sets), holds)
    _rounds(run, stop, earlier)
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


def _rounds(run: _Run, stop: Stop, earlier: dict) -> None:
    """Rounds of timed launches, interleaved in rotating order, until `stop` says enough. A
    rival `is_sparse` after the first round is timed in the first SPARSE_ROUNDS only, or in the
    first alone where `earlier` ({name: seconds}, a kept arena's) has its earlier checks'."""
    names, samples, arena = run.names, run.samples, run.arena
    started = time.perf_counter()
    launch_index = 0
    sparse_rounds = {n: SPARSE_ROUNDS if not earlier.get(n) else 1 for n in names}
    while True:
        for set_index in range(run.sets):
            timed = [n for n in names if n not in samples.sparse or samples.rounds < sparse_rounds[n]]
            order = timed[launch_index % len(timed) :] + timed[: launch_index % len(timed)]
            for name in order:
                # Inputs no launch has seen (caching answers by input buffer or content fails),
                # made anew for each contender: a kernel that wrote past its outputs into the
                # inputs cannot make the next contender's work harder
                arena.fresh_inputs(set_index, run.variant_seed, samples.rounds)
                seconds, after_end, queued = _timed_launch(
                    run.contenders[name], arena.kwargs(set_index), arena, run.flush, run.holds.microseconds(name)
                )
                run.holds.saw(name, queued)
                samples.seconds[name].append(seconds)
                samples.after_end_seconds[name].append(after_end)
                if name == names[0] and (samples.rounds, set_index) == tuple(run.check):
                    samples.checked.append((name, samples.rounds, set_index, arena.copy_outputs()))
            launch_index += 1
        if samples.rounds == 0:
            first_yours = float(np.median(samples.seconds[names[0]]))
            samples.sparse = [n for n in names[1:] if is_sparse(float(np.median(samples.seconds[n])), first_yours)]
            samples.earlier = {n: list(earlier[n]) for n in samples.sparse if earlier.get(n)}
        samples.rounds += 1
        if samples.rounds < stop.min_rounds:
            continue
        if _enough_pairs(samples, names) and settled(_settling(samples, names), stop.max_uncertainty):
            samples.stop_reason = f"median ratios known within ±{stop.max_uncertainty:.0%}"
            break
        if time.perf_counter() - started > stop.cap_seconds:
            samples.stop_reason = f"time cap of {stop.cap_seconds:g} s"
            break
        if samples.rounds >= stop.max_rounds:
            samples.stop_reason = f"{stop.max_rounds} rounds"
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
