"""What a recording at the grader's caps costs the grading process: wall time and peak memory.

Each shape below is a submission that writes its own message on the recording pipe, as large as
the schema lets it be (grader/replay/plan.py: MAX_MESSAGE_BYTES, MAX_STEPS, MAX_PLANS,
MAX_FUNCTIONS, MAX_ALL_GLOBALS), then leaves. Each is checked in graded mode in a fresh process
of its own (a grading process, as `zerogpu check --graded` runs one), which reports its own peak
resident memory (ru_maxrss, its children not counted) and the verdict.

    python bench/recording_cap.py [--only views,arguments] [--timeout 5] [--unsandboxed]

Goal (docs/SECURITY.md): answered within 30 s, the grading process under 300 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

HEAD = '''# exercise: vector_add
from numba import sys
def kernel(a):
    a[0] = 1.0
os = sys.modules["os"]
json = sys.modules["json"]
fd = int(sys.argv[sys.argv.index("--record-fd") + 1])
params = [{"op": "param", "id": 0, "name": "a"}, {"op": "param", "id": 1, "name": "b"},
          {"op": "param", "id": 2, "name": "c"}]
'''
TAIL = '''
text = json.dumps({"load_failure": None, "plans": plans, "kernels": kernels})
os.write(fd, text[: 4 * 1024 * 1024 - 16].encode())
os.abort()


def launch(a, b, c):
    pass
'''
SHAPES = {
    # the most steps a plan may hold (views: small objects), in as many plans as allowed
    "views": '''
kernels = {}
views = [{"op": "view", "id": 3 + k, "source": 0, "key": [{"slice": [0, 1, 1]}]} for k in range(4000)]
plans = {str(k): {"steps": params + views[:3900] + [{"op": "fill", "target": 2, "value": 1.0}]} for k in range(12)}
''',
    # launches with the most arguments, each a reference: the most small objects per byte
    "arguments": '''
kernel = {"name": "kernel", "filename": "x.py", "firstline": 3, "globals": {}, "options": {}}
kernels = {"k0_kernel": kernel}
launch_step = {"op": "launch", "kernel": "k0_kernel", "grid": [1, 1, 1], "block": [1, 1, 1], "shared": 0,
               "args": [{"ref": 0}] * 256, "line": 1}
plans = {str(k): {"steps": params + [launch_step] * 108} for k in range(12)}
''',
    # nested tuples of arguments, as deep and wide as allowed
    "tuples": '''
kernel = {"name": "kernel", "filename": "x.py", "firstline": 3, "globals": {}, "options": {}}
kernels = {"k0_kernel": kernel}
def nest(depth):
    return {"ref": 0} if depth == 0 else {"tuple": [nest(depth - 1)] * 4}
launch_step = {"op": "launch", "kernel": "k0_kernel", "grid": [1, 1, 1], "block": [1, 1, 1], "shared": 0,
               "args": [nest(6)] * 5, "line": 1}
plans = {str(k): {"steps": params + [launch_step]} for k in range(12)}
''',
    # the most globals a message may describe, each a long literal
    "globals": '''
kernel = {"name": "kernel", "filename": "x.py", "firstline": 3, "options": {},
          "globals": {f"g{k}": ["literal", repr("x" * 900)] for k in range(512)}}
kernels = {f"k{j}_kernel": kernel for j in range(8)}
plans = {"0": {"steps": params}}
''',
    # host data: every plan at the upload cap
    "uploads": '''
base64 = sys.modules["base64"]
kernels = {}
data = base64.b64encode(bytes(250 * 1024)).decode()
plans = {str(k): {"steps": params + [{"op": "upload", "id": 3, "shape": [64000], "dtype": "<f4", "data": data}]}
         for k in range(12)}
''',
}

RUN_ONE = """
import json, resource, sys, time
from grader.checking.check import check_file
clock = time.perf_counter()
result = check_file("vector_add", sys.argv[1], graded=True, case_timeout=float(sys.argv[2]),
                    unsandboxed=sys.argv[3] == "1")
print(json.dumps({"verdict": result.verdict, "message": result.message[:160],
                  "seconds": time.perf_counter() - clock,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", default="")
    parser.add_argument("--timeout", type=float, default=5.0, help="the per-case limit")
    parser.add_argument("--unsandboxed", action="store_true")
    args = parser.parse_args()
    names = args.only.split(",") if args.only else list(SHAPES)
    env = {**os.environ, "ZEROGPU_SECRET": os.environ.get("ZEROGPU_SECRET", "bench-secret")}
    print(
        f"{time.strftime('%Y-%m-%d %H:%M')} {platform.node()} {os.cpu_count()} cores, Python {platform.python_version()}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            path = Path(tmp) / f"{name}.py"
            path.write_text(HEAD + SHAPES[name] + TAIL)
            clock = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-c", RUN_ONE, str(path), str(args.timeout), "1" if args.unsandboxed else "0"],
                capture_output=True,
                text=True,
                cwd=ROOT,
                env=env,
            )
            wall = time.perf_counter() - clock
            if done.returncode != 0:
                print(f"{name:10s} failed: {done.stderr[-400:]}")
                continue
            seen = json.loads(done.stdout.strip().splitlines()[-1])
            print(
                f"{name:10s} {wall:6.1f} s wall  {seen['peak_mb']:6.0f} MB peak  "
                f"{seen['verdict']:13s} {seen['message'][:90]}",
                flush=True,
            )


if __name__ == "__main__":
    main()
