"""The speed step of the pipeline (GPU only): collect paired times, then judge them.

`collect` runs where the kernels run (this process, or the child); `evaluate` runs in the
grading process: it regenerates the benchmark inputs from the seed, checks the sampled
timed outputs against the oracle itself, and turns times into ratios, throughput, tier and
points against this device's measured ceilings.
"""

from __future__ import annotations

import os
import pickle
import queue
import random
import subprocess
import sys
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from grader.gpu import statistics as timing
from grader.steps.cases import case_rng, expected_and_tolerance
from grader.gpu.harness import (
    CAP_SECONDS,
    POOLED,
    SPARSE_FACTOR,
    SPARSE_MIN_SECONDS,
    SPARSE_ROUNDS,
    Samples,
    choose_check,
    hidden_work,
    measure,
)
from grader.gpu.arena import ready_kept_arena, variant_for, vary_at, vary_on_host
from grader.exercises import exercise
from grader.steps.judge import judge_sampled, picks, taken_at
from grader.result.speed import Ceilings, MedianRatio, Speed, SpeedDetails, Throughput

INPUT_SETS = 1
"""One base input set: every round rebuilds it into inputs no launch has seen (rotated and
sign-flipped or offset), which is what defeats replayed answers; a second set cost a second
second of input generation and transfer per check and added nothing."""
BENCH_CASE_INDEX = 1000
"""Benchmark inputs draw from their own streams, apart from the correctness cases'."""

METHOD = (
    "CUDA events around each launch, the start event queued behind a hold of the GPU (0.2 ms, or "
    "three times the host's time to queue the launch, up to 20 ms) so that Numba's launch overhead "
    "is not timed, then a device-wide synchronize; 1 warm-up launch each "
    "(the baseline and target once per process); "
    "L2 flushed (a 256 MiB read) before every timed launch of a memory-bound kernel; yours, the "
    "baseline and the target interleaved in rotating order on {sets} input set(s), each round's "
    "inputs rotated and sign-flipped (or offset) so no launch sees inputs seen before, "
    "outputs poisoned before every launch; repeated until each median ratio is known to ±1% "
    "(1.58·IQR/√n) or {cap:g} s pass; {sparse}figures are medians; {checked} timed output(s), chosen at "
    "random by the grading process, checked against the oracle."
)


def benchmark_inputs(ex, seed: int, keep: bool = False) -> list[dict]:
    """The benchmark's base input sets drawn from `seed`. `keep`: made once per process and
    seed (a class's checks share one benchmark seed, `check_file`'s `bench_seed`; each check
    still varies them its own way, round by round)."""
    key = (ex.id, seed)
    if key in _kept_inputs:
        return _kept_inputs[key]
    dims = dict(ex.spec.benchmark.dims)
    inputs = [ex.spec.make_inputs(dims, case_rng(seed, BENCH_CASE_INDEX + k)) for k in range(INPUT_SETS)]
    if keep:
        with _kept_lock:
            _kept_inputs[key] = inputs
            while len(_kept_inputs) > KEPT_INPUTS:
                _kept_inputs.pop(next(iter(_kept_inputs)))
    return inputs


KEPT_INPUTS = 3
"""Benchmark inputs kept per process (the exercise under way and the ones just before)."""
_kept_inputs: dict = {}
_kept_lock = threading.Lock()


def ready_for(ex, base_seed: int) -> bool:
    """The benchmark's inputs and kept buffers made ready for the next `collect(keep=True)`;
    whether they were made anew (not refreshed)."""
    inputs = benchmark_inputs(ex, base_seed, keep=True)
    return ready_kept_arena((ex.id, base_seed), ex.spec, inputs, dict(ex.spec.benchmark.dims))


def new_check() -> tuple[int, int, int]:
    """Which timed launch of the learner's gets checked, (round, input set), and the seed of the
    elements it is judged at: chosen by the grading process."""
    rng = random.SystemRandom()
    return (*choose_check(INPUT_SETS, rng=rng), rng.getrandbits(63))


def collect(ex, launch, seed: int, check=None, base_seed=None, keep: bool = False, **options) -> Samples:
    """Time `launch` against the exercise's baseline and target (harness.measure).
    `seed` varies the inputs round by round; `base_seed` (default `seed`) draws them. `keep`:
    the inputs and their buffers stay for the next check of this process (a replayer)."""
    base_seed = seed if base_seed is None else base_seed
    clock = time.perf_counter()
    inputs = benchmark_inputs(ex, base_seed, keep=keep)
    built = time.perf_counter() - clock
    contenders = {"yours": launch, "baseline": ex.baseline, "target": ex.target}
    samples = measure(
        ex.spec,
        contenders,
        inputs,
        variant_seed=seed,
        flush=ex.spec.benchmark.bound != "compute",
        check=check or new_check(),
        keep=(ex.id, base_seed) if keep else None,
        **options,
    )
    samples.phases = {"benchmark inputs": built, **samples.phases}
    return samples


def expected_for_check(ex, seed: int, check, base_seed=None):
    """(inputs, expected, tolerance) of the timed launch at `check` = (round, input set),
    rebuilt exactly; the grading process computes it while the child is still timing. With a
    `base_seed` the base inputs are kept for the run's next checks, as the replayer keeps them."""
    round_index, set_index = check[:2]
    base = benchmark_inputs(ex, seed if base_seed is None else base_seed, keep=base_seed is not None)
    inputs = dict(base[set_index])
    for array in ex.spec.inputs:
        variant = variant_for(seed, round_index, set_index, array.name, inputs[array.name], array.negatable)
        inputs[array.name] = vary_on_host(inputs[array.name], variant)
    return (inputs, *expected_and_tolerance(ex, inputs))


@dataclass
class AtPicks:
    """The checked launch's expected output and tolerance at the elements it is judged at
    (`judge.picks` of the grading process's pick seed): what an oracle process sends back."""

    expected: dict
    tolerance: dict


def expected_at_picks(exercise_id: str, dims: dict, seed: int, check: tuple, base_seed=None) -> AtPicks:
    """`expected_for_check`'s answer at the picked elements only (`check` = (round, set, pick
    seed)): run in an oracle process, it sends back megabytes, not the whole benchmark."""
    ex = exercise(exercise_id)
    if dict(ex.spec.benchmark.dims) != dims:  # a smaller benchmark (tests)
        ex = replace(ex, spec=replace(ex.spec, benchmark=replace(ex.spec.benchmark, dims=dims)))
    if ex.spec.pointwise:
        expected, tolerance = _pointwise_at_picks(ex, dims, seed, check, base_seed)
    else:
        _, expected, tolerance = expected_for_check(ex, seed, check, base_seed)
    at, within = {}, {}
    for array in ex.spec.outputs:
        picked = slice(None) if ex.spec.pointwise else picks(int(np.prod(array.shape_for(dims))), check[2])
        at[array.name], within[array.name] = taken_at(expected[array.name], tolerance[array.name], picked)
    return AtPicks(at, within)


def _pointwise_at_picks(ex, dims: dict, seed: int, check: tuple, base_seed=None) -> tuple[dict, dict]:
    """(expected output, tolerance) of a pointwise exercise (`Spec.pointwise`) at the picks
    alone: its oracle and tolerance applied to the inputs' elements there, each varied as its
    launch's were. A vector add's full float64 oracle over 2^27 elements took seconds of an
    oracle process."""
    round_index, set_index, pick_seed = check[:3]
    shapes = {tuple(int(d) for d in o.shape_for(dims)) for o in ex.spec.outputs}
    (shape,) = shapes  # every output of a pointwise exercise has the inputs' leading shape
    picked = picks(int(np.prod(shape)), pick_seed)
    mapped = callable(ex.spec.pointwise)  # one input element per output element, found by the map
    sources = np.asarray(ex.spec.pointwise(dims, picked), np.int64) if mapped else None
    base = benchmark_inputs(ex, seed if base_seed is None else base_seed, keep=base_seed is not None)[set_index]
    inputs = dict(base)
    for array in ex.spec.inputs:
        whole = base[array.name]
        trailing = () if mapped else whole.shape[len(shape) :]
        per = int(np.prod(trailing))
        at_elements = sources if mapped else (picked[:, None] * per + np.arange(per)).reshape(-1)
        variant = variant_for(seed, round_index, set_index, array.name, whole, array.negatable)
        inputs[array.name] = vary_at(whole, variant, at_elements).reshape(len(picked), *trailing)
    return expected_and_tolerance(ex, inputs)


ORACLE_PROCESSES = 4
"""Processes computing the checked launches' expected outputs (one per check in flight on a GPU)."""
_idle_oracles: queue.Queue = queue.Queue()
_oracles_started = [0]
_oracles_lock = threading.Lock()


class _Oracle:
    """A process of the grader's own (`serve_oracles`) that computes `expected_at_picks` for one
    request at a time, keeping the benchmark's base inputs between them. Started with
    `python -c`, so it never imports the program that started the grader; in a session of its
    own, it ends when its pipe closes, with the grading process."""

    def __init__(self):
        root = str(Path(__file__).resolve().parents[2])  # the folder `grader` is imported from
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
        self.proc = subprocess.Popen(
            [sys.executable, "-c", "from grader.gpu.speed import serve_oracles; serve_oracles()"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,  # its errors come back as answers; nothing in the terminal
            env=env,
            start_new_session=True,  # a Ctrl-C in the terminal is the grading process's to handle
        )

    def compute(self, arguments: tuple) -> AtPicks:
        pickle.dump(arguments, self.proc.stdin)
        self.proc.stdin.flush()
        ok, answer = pickle.load(self.proc.stdout)  # EOFError when the process died
        if not ok:
            raise RuntimeError(answer)
        return answer


def serve_oracles() -> None:
    """An oracle process's loop: (arguments of `expected_at_picks`) in, (ok, answer) out."""
    requests = sys.stdin.buffer
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # anything printed while computing goes where stderr goes, never into an answer
    while True:
        try:
            arguments = pickle.load(requests)
        except EOFError:
            return
        try:
            answer = (True, expected_at_picks(*arguments))
        except Exception as exc:  # noqa: BLE001 - said to the grading process, which reports it
            answer = (False, f"{type(exc).__name__}: {exc}")
        try:
            pickle.dump(answer, answers)
            answers.flush()
        except OSError:  # the grading process has gone
            return


def expected_elsewhere(ex, seed: int, check: tuple, base_seed=None) -> Future:
    """A future of `expected_at_picks`, computed in an oracle process: numpy's cumsum and
    bincount over 2^27 elements hold the GIL (scan's up to 1.4 s on a 2-core machine,
    bench/oracle_stall.py), and in this process they stalled the threads that judge cases and
    read the children's pipes. An oracle process that cannot start or dies: computed in a
    thread here."""
    future: Future = Future()
    arguments = (ex.id, dict(ex.spec.benchmark.dims), seed, tuple(check), base_seed)

    def compute():
        try:
            future.set_result(_in_an_oracle(arguments))
        except BaseException as exc:  # noqa: BLE001 - handed to whoever asks for the result
            future.set_exception(exc)

    threading.Thread(target=compute, name="zerogpu-expected", daemon=True).start()
    return future


def _in_an_oracle(arguments: tuple) -> AtPicks:
    try:
        oracle = _take_oracle()
    except OSError:  # no process to be had: here, as before
        return expected_at_picks(*arguments)
    try:
        answer = oracle.compute(arguments)
    except (OSError, EOFError, pickle.PickleError):  # it died: here, and a new one next time
        with _oracles_lock:
            _oracles_started[0] -= 1
        oracle.proc.kill()
        oracle.proc.wait()
        return expected_at_picks(*arguments)
    except BaseException:  # its own answer was an error: it serves the next check still
        _idle_oracles.put(oracle)
        raise
    _idle_oracles.put(oracle)
    return answer


def _take_oracle() -> _Oracle:
    """An idle oracle process, a new one while fewer than ORACLE_PROCESSES run, else the next
    to come free."""
    with _oracles_lock:
        if _idle_oracles.empty() and _oracles_started[0] < ORACLE_PROCESSES:
            oracle = _Oracle()
            _oracles_started[0] += 1
            return oracle
    return _idle_oracles.get()


def _check_timed_outputs(ex, seed, samples: Samples, expected=None) -> str | None:
    """A learner message if the checked timed run of yours was wrong."""
    dims = dict(ex.spec.benchmark.dims)
    for name, round_index, set_index, buffers in samples.checked:
        if name != "yours":
            continue
        want = expected if expected and tuple(expected[0])[:2] == (round_index, set_index) else None
        sampled = samples.sampled_with is not None
        if want and len(want[0]) > 2:
            pick_seed = want[0][2]  # this process's choice, which the child sampled with
        else:
            pick_seed = samples.sampled_with if sampled else random.SystemRandom().getrandbits(63)
        if want and isinstance(want[1], AtPicks):
            oracle_out, tolerance, at_picks = want[1].expected, want[1].tolerance, True
        else:
            _, oracle_out, tolerance = want[1] if want else expected_for_check(ex, seed, (round_index, set_index))
            at_picks = False
        message = judge_sampled(
            ex.spec, dims, buffers, oracle_out, tolerance, pick_seed, sampled=sampled, at_picks=at_picks
        )
        if message:
            return f"A timed run at the benchmark size gave a wrong answer: {message}"
    return None


LATER_SLACK = 0.05


def counted_no_faster_than_checkable(yours: list, checkable: int) -> tuple[list, bool]:
    """(yours, each launch counted no faster than LATER_SLACK under the median of the rounds
    the checked launch is drawn from; whether that moved the median). Those rounds always run
    and are checked, the later ones are not: a kernel keeping a count on the device could do
    the work while it may be checked and return at once after. It gains 5% at most; a kernel
    that runs alike every round loses nothing."""
    early = yours[: max(checkable, 1) * INPUT_SETS]
    least = float(np.median(early)) / (1 + LATER_SLACK)
    counted = [max(t, least) for t in yours]
    return counted, float(np.median(counted)) > float(np.median(yours)) * (1 + 1e-9)


def evaluate(ex, seed: int, samples: Samples, ceilings: dict, expected=None) -> tuple[Speed, str | None]:
    """(speed section, message when a timed output was wrong). `expected`, when given, is
    ((round, set[, pick seed]), expected_for_check(...) or expected_at_picks(...)) computed ahead."""
    bench = ex.spec.benchmark
    dims = dict(bench.dims)
    clock = time.perf_counter()
    wrong = _check_timed_outputs(ex, seed, samples, expected)
    phases = {**samples.phases, "checking the timed output": time.perf_counter() - clock}
    yours = samples.seconds["yours"]
    hidden = hidden_work(yours, samples.after_end_seconds["yours"])
    if hidden:  # work escaped the events: counting it in is the honest figure
        yours = [e + a for e, a in zip(yours, samples.after_end_seconds["yours"])]
    yours, faster_later = counted_no_faster_than_checkable(yours, samples.checkable)
    timed = replace(samples, seconds={**samples.seconds, "yours": yours})
    speedup, of_target = timed.ratio("baseline", "yours"), timed.ratio("target", "yours")
    median = float(np.median(yours))
    bytes_moved, flops = bench.bytes_moved(dims), bench.flops(dims)
    floor = timing.floor_seconds(bytes_moved, flops, ceilings)
    impossible = timing.below_floor(median, floor)
    tier, points = timing.tier_reached(of_target.median, bench.tiers)
    meets = speedup.median >= bench.required_speedup
    if impossible or hidden or not meets:
        tier, points = None, 0
    rate = timing.throughput(bench.bound, bytes_moved, flops, median, ceilings)
    details = SpeedDetails(
        device=ceilings.get("name"),
        dims=dims,
        bound=bench.bound,
        yours_ms=median * 1e3,
        baseline_ms=float(np.median(samples.all_seconds("baseline"))) * 1e3,
        target_ms=float(np.median(samples.all_seconds("target"))) * 1e3,
        speedup_vs_baseline=MedianRatio(**vars(speedup), spread=speedup.spread),
        fraction_of_target=MedianRatio(**vars(of_target), spread=of_target.spread),
        throughput=Throughput(**rate),
        ceilings=Ceilings(
            ceilings.get("copy_bandwidth", 0) / 1e9,
            ceilings.get("fp32_flops", 0) / 1e12,
            ceilings.get("read_bandwidth", 0) / 1e9,
        ),
        floor_ms=floor * 1e3,
        below_floor=impossible,
        hidden_work=hidden,
        faster_later=faster_later,
        faster_than_target_warning=of_target.median > timing.TARGET_WARNING,
        required_speedup=bench.required_speedup,
        meets_requirement=meets,
        tier=tier,
        points=points,
        max_points=timing.max_speed_points(bench.tiers),
        rounds=samples.rounds,
        stop_reason=samples.stop_reason,
        phase_seconds={k: round(v, 3) for k, v in phases.items()},
        method=METHOD.format(
            sets=INPUT_SETS,
            cap=CAP_SECONDS,
            sparse="".join(
                f"the {n}, over {SPARSE_FACTOR:g}× yours and {SPARSE_MIN_SECONDS * 1e3:g} ms, timed in the "
                f"first {SPARSE_ROUNDS} rounds only, or the first where this GPU's earlier checks of the "
                f"exercise timed it too (its median over yours, with its last {POOLED} launches in these "
                f"buffers); "
                for n in samples.sparse
            ),
            checked=sum(1 for c in samples.checked if c[0] == "yours"),
        ),
    )
    return Speed(measured=True, details=replace(details, summary=summary_line(details))), wrong


CEILING_OF = {"memory": "copy bandwidth", "read": "read bandwidth", "compute": "fp32 FMA rate"}
"""The ceiling an exercise's figure is a fraction of, by `Benchmark.bound`."""


def summary_line(d: SpeedDetails) -> str:
    rate, speedup = d.throughput, d.speedup_vs_baseline
    frac = rate.fraction_of_ceiling
    parts = [
        f"Speed: {d.yours_ms:.3f} ms at {_fmt_dims(d.dims)};",
        f"{speedup.median:.2f}x the baseline (IQR {speedup.low:.2f}–{speedup.high:.2f}),",
        f"{d.fraction_of_target.median:.0%} of the target's speed;",
        f"{rate.achieved:.1f} {rate.unit}"
        + (f" = {frac:.0%} of this GPU's measured {CEILING_OF[d.bound]}." if frac else "."),
    ]
    if d.below_floor:
        parts.append(f"REJECTED: faster than physically possible (floor {d.floor_ms:.3f} ms).")
    elif d.hidden_work:
        parts.append(
            "Work ran outside the timed region (another stream?): counted in by the host clock, no speed points."
        )
    elif not d.meets_requirement:
        parts.append(f"Needs {d.required_speedup:.2f}x the baseline: too slow for now.")
    else:
        parts.append(f"Tier: {d.tier or 'none yet'} ({d.points}/{d.max_points} speed points).")
    if d.faster_later:
        parts.append(
            "Your kernel ran over 5% faster after its first rounds, which are the ones checked: "
            "counted at most 5% faster than those."
        )
    if d.faster_than_target_warning:
        parts.append("Warning: over 1.5x faster than our best kernel — please tell us how!")
    return " ".join(parts)


def _fmt_dims(dims: dict) -> str:
    return "×".join(str(v) for v in dims.values())
