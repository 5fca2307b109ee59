#!/usr/bin/env bash
# Probes behind docs/BENCHMARKS.md's notes, one run of about 3 minutes on a GPU host:
# `bash bench/device_probes.sh` (wheels in .whl/, as bench/device_run.sh says).
# 1. the copy ceiling measured twice (each measurement takes the best of 3 processes: the
#    driver's memcpy ran at 3.65-4.27 TB/s from one process to the next, 2026-11-29), with
#    cudaMemcpy and the copy kernel shown apart;
# 2. is the 0.2 ms hold long enough (bench/hold.py: 1 ms, 0.2 ms, none);
# 3. does buffer placement change the histogram's times (bench/placement.py).
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD ZEROGPU_BACKEND=gpu ZEROGPU_HOME=/tmp/zerogpu-home PYTHONUNBUFFERED=1
OUT=${OUT:-bench/results}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
for k in 1 2; do python3 -m grader.cli device --refresh 2>&1 | tee -a "$OUT/ceilings.txt"; done
python3 bench/hold.py 2>&1 | grep -v "Warning\|warn(" | tee "$OUT/hold.txt"
python3 bench/placement.py 2>&1 | grep -v "Warning\|warn(" | tee "$OUT/placement.txt"
