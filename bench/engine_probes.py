"""What a GPU does with the forms the CPU engines must agree with: one row each.

    python bench/engine_probes.py            # on a GPU host (ZEROGPU_BACKEND=gpu)

1. static shared memory past 48 KiB (64 KiB of float32), and dynamic shared memory of 48 KiB,
   48 KiB + 4 and 64 KiB: does numba-cuda build the kernel, does the launch run, is it right;
2. `cuda.fp16.hadd`, `hmul`, `hfma` on float32 arrays: how far from float32 and from float16
   rounding the results are;
3. `range(math.ceil(k / TILE))`: what type Numba gives `math.ceil`, and that the loop runs;
4. a kernel launched on views with negative strides (`a[::-1]`): the time and the answer, and
   where a timed check of it spends its time (cProfile of the timing harness).
Each probe runs in a process of its own, so a hang or a fault ends that probe only.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

STATIC = """
from numba import cuda, float32
import numpy as np
N = {floats}
@cuda.jit
def k(out):
    s = cuda.shared.array(N, float32)
    d = cuda.shared.array(0, float32)
    t = cuda.threadIdx.x
    for j in range(t, N, cuda.blockDim.x):
        s[j] = j
    cuda.syncthreads()
    if t == 0:
        out[0] = s[N - 1]
out = cuda.to_device(np.zeros(1, np.float32))
k[1, 256, 0, {dynamic}](out)
sig = list(k.overloads)[0]
print(out.copy_to_host()[0] == N - 1, "static", k.overloads[sig].shared_mem_per_block, "regs", k.overloads[sig].regs_per_thread)
"""
REGISTERS = """
from numba import cuda, float32
import numpy as np
@cuda.jit
def k(x, out):
    acc = cuda.local.array(96, float32)
    i = cuda.grid(1)
    for j in range(96):
        acc[j] = x[(i + j) % x.size]
    total = float32(0.0)
    for r in range(8):
        for j in range(96):
            acc[j] = acc[j] * acc[(j + r) % 96] + float32(1.0)
    for j in range(96):
        total += acc[j]
    out[i] = total
x = cuda.to_device(np.ones(1024, np.float32))
out = cuda.device_array(1024, np.float32)
sig = None
for threads in (1024, 256):
    try:
        k[1, threads](x, out)
        cuda.synchronize()
        said = "ran"
    except Exception as exc:
        said = type(exc).__name__ + ": " + str(exc)[:120]
    sig = list(k.overloads)[0]
    print(threads, "threads:", said, "| regs", k.overloads[sig].regs_per_thread, end="; ")
print()
"""

PROBES = {
    "versions": """
import numba, numba_cuda
from numba.cuda import decorators
from numba.cuda.cudadrv import nvvm
print("numba", numba.__version__, "numba-cuda", numba_cuda.__version__, "nvjitlink (LTO by default):",
      decorators._have_nvjitlink(), "NVVM", nvvm.NVVM().get_version())
""",
    "static 100 KiB": STATIC.format(floats=25600, dynamic=0),
    "static 227 KiB": STATIC.format(floats=58112, dynamic=0),
    "static 227 KiB + 4": STATIC.format(floats=58113, dynamic=0),
    "static 40 KiB + dynamic 16 KiB": STATIC.format(floats=10240, dynamic=16384),
    "static 64 KiB + dynamic 4": STATIC.format(floats=16384, dynamic=4),
    "registers": REGISTERS,
    "static shared 64 KiB": """
from numba import cuda, float32
import numpy as np
@cuda.jit
def k(out):
    s = cuda.shared.array(16384, float32)
    t = cuda.threadIdx.x
    for j in range(t, 16384, cuda.blockDim.x):
        s[j] = j
    cuda.syncthreads()
    if t == 0:
        out[0] = s[16383] + s[0]
out = cuda.to_device(np.zeros(1, np.float32))
k[1, 256](out)
print(out.copy_to_host()[0] == 16383.0, k.overloads[k.signatures[0]].shared_mem_per_block if hasattr(k, 'signatures') else '')
""",
    "dynamic shared 48 KiB": """
from numba import cuda, float32
import numpy as np
@cuda.jit
def k(out):
    s = cuda.shared.array(0, float32)
    t = cuda.threadIdx.x
    n = out.size
    for j in range(t, n, cuda.blockDim.x):
        s[j] = j
    cuda.syncthreads()
    if t == 0:
        out[0] = s[n - 1]
n = 12288
out = cuda.to_device(np.zeros(n, np.float32))
k[1, 256, 0, n * 4](out)
print(out.copy_to_host()[0] == n - 1)
""",
    "dynamic shared 48 KiB + 4": """
from numba import cuda, float32
import numpy as np
@cuda.jit
def k(out):
    s = cuda.shared.array(0, float32)
    if cuda.threadIdx.x == 0:
        s[out.size - 1] = 1.0
        out[0] = s[out.size - 1]
n = 12289
out = cuda.to_device(np.zeros(n, np.float32))
k[1, 32, 0, n * 4](out)
print(out.copy_to_host()[0])
""",
    "fp16 on float32": """
from numba import cuda
import numpy as np
@cuda.jit
def k(a, b, c, d, e):
    i = cuda.grid(1)
    if i < a.size:
        c[i] = cuda.fp16.hadd(a[i], b[i])
        d[i] = cuda.fp16.hmul(a[i], b[i])
        e[i] = cuda.fp16.hfma(a[i], b[i], a[i])
rng = np.random.default_rng(1)
a, b = (rng.normal(size=4096).astype(np.float32) for _ in range(2))
outs = [cuda.device_array(4096, np.float32) for _ in range(3)]
k[32, 128](cuda.to_device(a), cuda.to_device(b), *outs)
c, d, e = (o.copy_to_host() for o in outs)
h = lambda x: x.astype(np.float16).astype(np.float32)
ha, hb = h(a), h(b)
print(json.dumps({
    "hadd_vs_f32": float(np.abs(c - (a + b)).max()),
    "hadd_vs_f16": float(np.abs(c - h(ha + hb)).max()),
    "hmul_vs_f16": float(np.abs(d - h(ha * hb)).max()),
    "hfma_vs_f16": float(np.abs(e - h(ha.astype(np.float64) * hb + ha)).max()),
    "dtype": str(c.dtype)}))
""",
    "range(math.ceil(k / TILE))": """
import math
from numba import cuda
import numpy as np
@cuda.jit
def k(out, n):
    t = 0
    for j in range(math.ceil(n / 16)):
        t += 1
    out[0] = t
    out[1] = math.ceil(n / 16) / 2
out = cuda.to_device(np.zeros(2, np.float64))
k[1, 1](out, 33)
print(out.copy_to_host().tolist(), k.overloads[list(k.overloads)[0]].signature if False else '')
""",
    "negative strides": """
import time
from numba import cuda
import numpy as np
@cuda.jit
def add(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i]
n = 1 << 20
a, b = (cuda.to_device(np.arange(n, dtype=np.float32) * s) for s in (1, 2))
c = cuda.device_array(n, np.float32)
clock = time.perf_counter()
add[(n + 127) // 128, 128](a[::-1], b[::-1], c[::-1])
cuda.synchronize()
took = time.perf_counter() - clock
got = c.copy_to_host()
print(bool((got == np.arange(n, dtype=np.float32) * 3).all()), f"{took:.2f} s", a[::-1].strides)
""",
    "negative strides, timed": """
import cProfile, io, pstats, time
import grader
from grader.exercises import exercise
from grader.checking.notebook import record_here
from grader.replay.launch import launch_from, rebuild
from grader.gpu.speed import collect
from numba import cuda
ex = exercise("vector_add")
@cuda.jit
def add(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i]
def launch(a, b, c):
    add[(c.size + 127) // 128, 128](a[::-1], b[::-1], c[::-1])
wanted = {"bench": {"dims": dict(ex.spec.benchmark.dims), "scalars": {}}}
message = record_here(ex, launch, wanted)
replayed = launch_from(message.plans["bench"], rebuild(message.kernels, None), jitted={})
profile = cProfile.Profile()
clock = time.perf_counter()
profile.enable()
samples = collect(ex, replayed, 7)
profile.disable()
out = io.StringIO()
pstats.Stats(profile, stream=out).sort_stats("cumulative").print_stats(12)
print(out.getvalue()[-2500:].replace(chr(10), " / "))
print(f"collect took {time.perf_counter() - clock:.1f} s, {samples.rounds} rounds, stop: {samples.stop_reason}")
""",
}


def main() -> None:
    for name, code in PROBES.items():
        clock = time.perf_counter()
        try:
            done = subprocess.run(
                [sys.executable, "-c", "import json\n" + code], capture_output=True, text=True, timeout=240
            )
            said = (
                (done.stdout.strip().splitlines() or [""])[-1]
                if done.returncode == 0
                else ("failed: " + " | ".join(done.stderr.strip().splitlines()[-3:]))
            )
        except subprocess.TimeoutExpired:
            said = "no answer in 240 s"
        print(f"{name:28s} {time.perf_counter() - clock:6.1f} s  {said[:400]}", flush=True)
    print(json.dumps({"python": sys.version.split()[0]}))


if __name__ == "__main__":
    main()
