#!/usr/bin/env bash
# Graded mode end to end on a GPU host, one run of about 5 minutes on an H200:
# `bash bench/device_trust.sh` from the repository root. Wheels in .whl/ are installed into
# /tmp/site first (numpy below 2.5, as pyproject pins); .debs/ holds Debian's bubblewrap package
# (`apt-get download bubblewrap`), unpacked, not installed, for a host without bubblewrap.
# 1. can this host make the sandbox and a pids cgroup (as which user);
# 2. the GPU tests: speed grading, device arrays opaque to host code, host computation forbidden;
# 3. the sandbox's own tests (a probe and a fork bomb inside the graded child's bwrap command);
# 4. an endless kernel graded (its child killed mid-kernel), then a synthetic class graded in
#    graded mode (sandboxed children, spares): the GPU still serves every check;
# 5. the warp rungs' targets beside the bundled solutions and their library peers.
# GPU_TESTS="caching or opaque" runs only those GPU tests; STUDENTS sizes the class (8);
# VARIANTS=none skips step 5.
set -uo pipefail
source bench/gpu_host.sh  # wheels, bubblewrap, the grader on the GPU
OUT=${OUT:-bench/results}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 - <<'PY'
import os
from grader.containment import process_cap, sandbox
print("sandbox:", sandbox.unavailable() or "ok", "| pids cgroup under:", process_cap._cgroup_parent(), "| euid:", os.geteuid())
PY
python3 -m pytest -m gpu -q -p no:cacheprovider -W ignore tests/test_gpu.py ${GPU_TESTS:+-k "$GPU_TESTS"} 2>&1 | tail -6 | tee "$OUT/gpu-tests.txt"
python3 -m pytest -q -p no:cacheprovider -W ignore tests/test_os_sandbox.py 2>&1 | tail -3 | tee "$OUT/sandbox-tests.txt"
ZEROGPU_SECRET=device-trust python3 -m grader.cli check saxpy tests/submissions/saxpy/forgets_stride.py --graded --timeout 5 --json 2>/dev/null \
  | python3 -c "import json,sys; r=json.load(sys.stdin); print('endless kernel, graded:', r['verdict'], '-', r['message'][:160])"
python3 bench/class_scale.py --students "${STUDENTS:-8}" --repeats 1 --out "$OUT/class_scale.json" 2>&1 | grep -v "Warning\|warn(" | tail -4
[ "${VARIANTS:-scan,warp_reduce}" = none ] || python3 bench/variants.py --only "${VARIANTS:-scan,warp_reduce}" --out "$OUT/variants.json" 2>&1 | grep -v "Warning\|warn(\|: ok$" | tail -20
