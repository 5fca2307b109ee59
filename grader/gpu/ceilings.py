"""This GPU's measured ceilings: device-to-device copy bandwidth and fp32 FMA throughput.

Measured once per GPU model and driver, cached as JSON under the data directory, and used
for the roofline floor and "fraction of ceiling" — never datasheet numbers.
"""

from __future__ import annotations

import ctypes
import functools
import json
import subprocess
import sys
import time
from contextlib import nullcontext

import numpy as np

from grader import backend
from grader.backend import driver_library
from grader.gpu.harness import hold_gpu
from grader.paths import DataDirError, data_dir, write_atomically

COPY_BYTES = 1 << 30
COPY_PROCESSES = 3
"""The copy is measured in this many Python processes, the best kept. On lent H200s the
same 1 GiB cudaMemcpy ran at 4.27 TB/s in some processes and 3.65-3.92 in others, at every
placement tried within a process (2026-11-29); the copy kernel gave 3.83-3.88 in all."""
FMA_ITERATIONS = 4096
FMA_CHAINS = 8
METHOD = {
    "copy_bandwidth": "device-to-device copy of 1 GiB, the fastest of cudaMemcpy and a Numba "
    "grid-stride copy kernel (8-byte words, 4 loads in flight per thread), each measured in "
    f"{COPY_PROCESSES} Python processes in turn; bytes read + written over the median of 20 "
    "event-timed copies after 0.5 s of warm-up, each start event queued behind a 0.2 ms hold "
    "of the GPU (the launch's dispatch is not timed)",
    "read_bandwidth": "the grader's L2-flush kernel reading 1 GiB of uint32 (grid-stride, 8 "
    "loads in flight per thread), bytes read over the median of 20 event-timed runs after 0.5 s "
    "of warm-up, with the same hold",
    "fp32_flops": f"Numba kernel, {FMA_CHAINS} independent fp32 FMA chains, {FMA_ITERATIONS} "
    "steps unrolled by 4 per thread, 256-thread blocks, 64 blocks per SM; 2 flops per FMA, "
    "median of 10 runs after 0.5 s of warm-up",
}


@functools.lru_cache(maxsize=1)
def identity() -> dict:
    """GPU 0's model, driver, SM count and compute capability, from the driver alone: numba's
    device objects would create a CUDA context, and a grading process holding one while its
    child was timed is what docs/BENCHMARKS-LOG.md's reduce_sum note is about."""
    libcuda = driver_library()
    if libcuda is None:
        raise RuntimeError("no usable CUDA driver")
    dev = ctypes.c_int(0)
    name = ctypes.create_string_buffer(256)
    if libcuda.cuDeviceGet(ctypes.byref(dev), 0) != 0 or libcuda.cuDeviceGetName(name, 256, dev) != 0:
        raise RuntimeError("the CUDA driver lists no device 0")

    def attribute(code: int) -> int:
        value = ctypes.c_int(0)
        libcuda.cuDeviceGetAttribute(ctypes.byref(value), code, dev)
        return value.value

    try:
        driver = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader", "-i", "0"],
            capture_output=True,
            text=True,
            timeout=20,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        driver = ""
    if not driver:
        version = ctypes.c_int(0)
        libcuda.cuDriverGetVersion(ctypes.byref(version))
        driver = f"cuda-{version.value // 1000}.{version.value % 1000 // 10}"
    return {
        "name": name.value.decode(errors="replace"),
        "driver": driver,
        "sms": attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT),
        "compute_capability": [
            attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
            attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR),
        ],
    }


CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16
CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75
CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76


WARM_UP_SECONDS = 0.5
"""An idle GPU runs its SMs at a fraction of their clock (345 MHz on an idle H200): every
ceiling is timed only after half a second of running the same work."""


def median_event_seconds(fn, reps: int, warmup: int) -> float:
    """Median event-timed seconds of `fn` (device work on the default stream), after at least
    `warmup` runs and WARM_UP_SECONDS of running it."""
    from numba import cuda

    started = time.perf_counter()
    done = 0
    while done < warmup or time.perf_counter() - started < WARM_UP_SECONDS:
        fn()
        cuda.synchronize()
        done += 1
    times = []
    for _ in range(reps):
        start, end = cuda.event(), cuda.event()
        cuda.synchronize()
        hold_gpu()  # the start event fires once fn's work is queued: its dispatch is not timed
        start.record()
        fn()
        end.record()
        cuda.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    return float(np.median(times))


def copy_kernel():
    from numba import cuda

    @cuda.jit
    def copy4(src, dst):
        # 4 independent loads in flight per thread, then 4 stores
        stride = cuda.gridsize(1)
        i = cuda.grid(1)
        n = src.size
        while i + 3 * stride < n:
            a = src[i]
            b = src[i + stride]
            c = src[i + 2 * stride]
            d = src[i + 3 * stride]
            dst[i] = a
            dst[i + stride] = b
            dst[i + 2 * stride] = c
            dst[i + 3 * stride] = d
            i += 4 * stride
        while i < n:
            dst[i] = src[i]
            i += stride

    return copy4


def measure_copy_once() -> dict:
    """{method: bytes per second} of a 1 GiB device-to-device copy in this process: the
    driver's cudaMemcpy and a copy kernel over 8-byte words."""
    from numba import cuda

    src = cuda.to_device(np.random.default_rng(0).integers(0, 255, COPY_BYTES, dtype=np.uint8))
    dst = cuda.device_array(COPY_BYTES, np.uint8)
    memcpy = median_event_seconds(lambda: dst.copy_to_device(src), reps=20, warmup=3)
    kernel = copy_kernel()
    blocks = cuda.get_current_device().MULTIPROCESSOR_COUNT * 8
    words_src, words_dst = src.view(np.uint64), dst.view(np.uint64)
    copy = median_event_seconds(lambda: kernel[blocks, 256](words_src, words_dst), reps=20, warmup=3)
    return {"cudaMemcpy": 2.0 * COPY_BYTES / memcpy, "copy kernel": 2.0 * COPY_BYTES / copy}


def measure_copy_bandwidth(processes: int = COPY_PROCESSES) -> tuple[float, dict, dict]:
    """(the fastest copy seen, {method: its best bytes per second}, {method: its figure in
    each process}): measured here and in `processes - 1` fresh Python processes, one after
    another (never two on the GPU at once)."""
    runs = [measure_copy_once()]
    for _ in range(processes - 1):
        try:
            child = subprocess.run(
                [sys.executable, "-m", "grader.gpu.ceilings", "--copy-once"],
                capture_output=True,
                text=True,
                timeout=300,
            )
            runs.append(json.loads(child.stdout.strip().splitlines()[-1]))
        except (OSError, subprocess.SubprocessError, ValueError, IndexError):
            continue  # a child that failed adds nothing; this process's figures stand
    by_method = {name: [run[name] for run in runs] for name in runs[0]}
    best = {name: max(values) for name, values in by_method.items()}
    return max(best.values()), best, by_method


def _fma_kernel():
    from numba import cuda, float32

    @cuda.jit(fastmath=False)
    def fma_chains(seed, out):
        i = cuda.grid(1)
        x = float32(seed[0]) + float32(i) * float32(1e-9)
        a0 = a1 = a2 = a3 = a4 = a5 = a6 = a7 = x
        m = float32(0.9999)
        c = float32(1e-7)
        for _ in range(FMA_ITERATIONS // 4):  # unrolled by hand: loop overhead off the FMA pipe
            for _ in range(4):
                a0 = cuda.fma(a0, m, c)
                a1 = cuda.fma(a1, m, c)
                a2 = cuda.fma(a2, m, c)
                a3 = cuda.fma(a3, m, c)
                a4 = cuda.fma(a4, m, c)
                a5 = cuda.fma(a5, m, c)
                a6 = cuda.fma(a6, m, c)
                a7 = cuda.fma(a7, m, c)
        total = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7
        if total == float32(12345.678):  # never true; keeps the chains alive
            out[0] = total

    return fma_chains


def measure_fp32_flops() -> float:
    from numba import cuda

    kernel = _fma_kernel()
    threads, blocks = 256, cuda.get_current_device().MULTIPROCESSOR_COUNT * 64
    seed = cuda.to_device(np.ones(1, np.float32))
    out = cuda.device_array(1, np.float32)
    seconds = median_event_seconds(lambda: kernel[blocks, threads](seed, out), reps=10, warmup=2)
    return 2.0 * FMA_CHAINS * FMA_ITERATIONS * threads * blocks / seconds


def measure_read_bandwidth() -> float:
    """Read-only streams run faster than copies on HBM; the floor must not reject them."""
    from numba import cuda

    from grader.gpu.device_kernels import read_all_launch

    n = COPY_BYTES // 4
    words = cuda.device_array(n, np.uint32)  # any contents: it is only read
    sink = cuda.device_array(1, np.uint32)
    seconds = median_event_seconds(lambda: read_all_launch(words, sink), reps=20, warmup=3)
    return 4.0 * n / seconds


def _cache_path(ident: dict):
    safe = "".join(ch if ch.isalnum() else "-" for ch in f"{ident['name']}-{ident['driver']}")
    return data_dir() / f"device-{safe}.json"


def cached_ceilings() -> dict | None:
    """This GPU's ceilings if they were measured (by this version of the method)."""
    return _read_cache(_cache_path(identity()))


def ceilings(refresh: bool = False) -> dict:
    """Measured ceilings of the current GPU, from the cache when present; otherwise measured
    (about 25 s) in a child process, so that this one, a grading process, never holds a CUDA
    context."""
    cached = None if refresh else cached_ceilings()
    if cached:
        return cached
    child = subprocess.run([sys.executable, "-m", "grader.gpu.ceilings", "--measure"], capture_output=True, text=True)
    try:
        if child.returncode == 0:
            return json.loads(child.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        pass
    tail = (child.stderr or child.stdout).strip().splitlines()[-1:] or ["no output"]
    raise RuntimeError(f"measuring the ceilings failed: {tail[0]}")


class NoGPU(RuntimeError):
    """Nothing to measure: this process runs on a CPU engine."""


def device_report(refresh: bool = False, measuring=nullcontext) -> dict:
    """`zerogpu device`: this GPU's ceilings, from the cache unless `refresh`, else measured
    inside `measuring()` (say that it takes a while). NoGPU on a CPU engine; RuntimeError, one
    line, when the driver or the measurement fails."""
    if backend.current() != "gpu":
        raise NoGPU("No GPU: running on Numba's CUDA simulator, which has no ceilings to measure.")
    found = None if refresh else cached_ceilings()
    if found is None:
        with measuring():
            found = ceilings(refresh=True)
    return found


def _read_cache(path) -> dict | None:
    try:
        cached = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return cached if cached.get("method") == METHOD else None  # measured the way we measure now


def measure_and_cache() -> dict:
    ident = identity()
    started = time.perf_counter()
    copy, copy_parts, copy_runs = measure_copy_bandwidth()
    result = {
        **ident,
        "copy_bandwidth": copy,
        "copy_parts": copy_parts,  # both, printed: which one sets the ceiling, and by how much
        "copy_runs": copy_runs,  # each method's figure in each process
        "read_bandwidth": measure_read_bandwidth(),
        "fp32_flops": measure_fp32_flops(),
        "method": METHOD,
        "measured_at": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    result["measure_seconds"] = round(time.perf_counter() - started, 2)
    path = _cache_path(ident)
    try:  # whole or not at all: another grader may be reading it right now
        write_atomically(path, json.dumps(result, indent=2))
    except DataDirError:
        pass  # measured again next time; the figures are still returned
    return result


if __name__ == "__main__":  # `-m grader.gpu.ceilings` imported grader: the back end is chosen
    if sys.argv[1:] == ["--copy-once"]:  # one process's copy figures, for measure_copy_bandwidth
        print(json.dumps(measure_copy_once()))
    elif sys.argv[1:] == ["--measure"]:  # every ceiling, cached, for ceilings()
        print(json.dumps(measure_and_cache()))
