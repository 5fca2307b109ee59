#!/usr/bin/env bash
# Record, then replay, on a GPU host, about 8 minutes on an H200: `bash bench/device_replay.sh`
# from the repository root, with .whl/ and .debs/ as bench/device_trust.sh describes.
# 1. the class pace: 10 students (STUDENTS) x every exercise (ONLY=id,id narrows it), graded and
#    sandboxed, one replayer per GPU (PACE=0 skips it; about 6 minutes for the whole ladder);
#    PROCESSES=N instead: bench/trust.py --replayer --processes N --repeats 2 (ONLY as above), each
#    exercise's spread across N fresh replayers;
# 2. the GPU tests of record/replay (valid alternatives correct, a notebook lambda recorded, four
#    workers through one replayer, a launch refusing the benchmark
#    size not passed);
# 3. every bundled solution and valid alternative (tests/valid/) checked as a learner would
#    (`zerogpu check --json`: verdict, speedup, fraction of the target, tier), then the cheats
#    against the recording channel graded in the sandbox.
set -uo pipefail
source bench/gpu_host.sh  # wheels, bubblewrap, the grader on the GPU
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -c "import numba, numba_cuda, numpy; print('numba', numba.__version__, 'numba-cuda', numba_cuda.__version__, 'numpy', numpy.__version__)"
if [ -n "${PROCESSES:-}" ]; then
  python3 bench/trust.py --replayer --processes "$PROCESSES" --repeats 2 ${ONLY:+--only "$ONLY"} --out /tmp/trust.json 2>&1 \
    | grep "Across\|max/min\|no speedup" | tail -40
elif [ "${PACE:-1}" != 0 ]; then
  python3 bench/class_scale.py --students "${STUDENTS:-10}" --all-exercises ${ONLY:+--only "$ONLY"} \
    --repeats 1 --timeout 10 --out /tmp/class_scale.json 2>&1 | grep -v "warn(" | tail -40
fi
python3 -m pytest -m gpu -q -p no:cacheprovider -W ignore tests/test_gpu.py tests/test_gpu_many_checks.py \
  -k "valid_alternative or benchmark_size or notebook_launch or four_workers" 2>&1 | tail -4
for f in ${FILES:-solutions/*.py tests/valid/*/*.py}; do
  id=$(basename "$(dirname "$f")"); [ "$id" = solutions ] && id=$(basename "$f" .py)
  python3 -m grader.cli check "$id" "$f" --json 2>/dev/null | python3 bench/check_row.py "$f"
done
for f in tests/cheats/record_*.py; do
  id=$(sed -n 's/^# exercise: //p' "$f")
  ZEROGPU_SECRET=device-replay python3 -m grader.cli check "$id" "$f" --graded --timeout 10 --json 2>/dev/null | python3 bench/check_row.py "$f"
done
for f in ${GRADED:-}; do  # these checked graded too, in the sandbox
  id=$(basename "$(dirname "$f")"); [ "$id" = solutions ] && id=$(basename "$f" .py)
  ZEROGPU_SECRET=device-replay python3 -m grader.cli check "$id" "$f" --graded --timeout 10 --json 2>/dev/null | python3 bench/check_row.py "graded $f"
done
