#!/usr/bin/env bash
# Several checks per GPU through its replayer (docs/ARCHITECTURE.md, "Class grading"), on a GPU
# host: `bash bench/device_pipeline.sh` from the repository root. Wheels in .whl/ are installed
# into /tmp/site first (numpy below 2.5, as pyproject pins); .debs/ holds Debian's bubblewrap
# package (`apt-get download bubblewrap`), unpacked, not installed, for a host without bubblewrap.
# 1. the GPU tests of many checks: four workers on one GPU grade every row once, and checks
#    served by spares time the histogram as a check started cold does;
# 2. the class of docs/BENCHMARKS.md, "Class grading": STUDENTS students (100) across the whole
#    ladder, WORKERS workers (4) recording while the GPU's replayer times, graded mode.
# TESTS=none skips step 1; STUDENTS sizes the class; WORKERS: workers per run (4).
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl || exit 1
if ! command -v bwrap >/dev/null; then
  dpkg -x .debs/bubblewrap_*.deb /tmp/bw || exit 1
  export PATH=/tmp/bw/usr/bin:$PATH
fi
export PYTHONPATH=/tmp/site:$PWD ZEROGPU_BACKEND=gpu ZEROGPU_HOME=/tmp/zerogpu-home PYTHONUNBUFFERED=1
OUT=${OUT:-bench/results}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
nproc
[ "${TESTS:-all}" = none ] || python3 -m pytest -m gpu -q -p no:cacheprovider -W ignore tests/test_gpu_many_checks.py 2>&1 | tail -15 | tee "$OUT/gpu-many-checks-tests.txt"
python3 bench/class_scale.py --students "${STUDENTS:-100}" --all-exercises --repeats 1 --workers "${WORKERS:-4}" \
  --out "$OUT/class_scale_pipeline.json" 2>&1 | grep -v "Warning\|warn(" | tee "$OUT/class_scale_pipeline.txt"
