#!/usr/bin/env bash
# Everything docs/BENCHMARKS.md reports, measured in one run on a GPU host, from the repository
# root: `bash bench/device_run.sh`. Wheels in .whl/ are installed into /tmp/site first (numpy
# below 2.5, as pyproject pins, for a host whose Python has another).
# Writes bench.json, trust.json, variants.json and logs under $OUT and prints short tables.
# About 8 minutes on an H200 (2026-11-29): ceilings 25 s, GPU tests 85 s, bench 60 s, five
# gradings of every solution 260 s, candidate kernels 60 s. The open questions are probed by
# bench/device_probes.sh, run on its own (the two together take over 10 minutes).
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD ZEROGPU_BACKEND=gpu ZEROGPU_HOME=/tmp/zerogpu-home PYTHONUNBUFFERED=1
OUT=${OUT:-bench/results}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv  # printed: at most 8 files come back
python3 -m grader.cli device --refresh 2>&1 | tee "$OUT/device.txt"
python3 -m pytest -m gpu -q -p no:cacheprovider -W ignore tests/test_gpu.py 2>&1 | tail -15 | tee "$OUT/gpu-tests.txt"
python3 bench/run.py --out "$OUT/bench.json" 2>&1 | tee "$OUT/bench.txt"
python3 bench/trust.py --repeats 5 --out "$OUT/trust.json" 2>&1 | grep -v "Warning\|warn(" | tee "$OUT/trust.txt"
python3 bench/variants.py --out "$OUT/variants.json" 2>&1 | grep -v "Warning\|warn(\|: ok$" | tee "$OUT/variants.txt"
