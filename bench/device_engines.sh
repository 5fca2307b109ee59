#!/usr/bin/env bash
# One verdict on every engine, on a GPU host: `bash bench/device_engines.sh` from the repository
# root (wheels in .whl/ and Debian's bubblewrap package in .debs/, as bench/gpu_host.sh says).
# 1. bench/engine_probes.py: what this GPU does with shared memory past 48 KiB, registers,
#    cuda.fp16 on float32, range(math.ceil(...)), views with negative strides;
# 2. every tests/gpu_verdicts/ file checked on this GPU beside the verdict the CPU engines give
#    (SKIP: a grep -E pattern of files to leave out);
# 3. the GPU tests of the corpora: every tests/cheats/ file graded, every tests/valid/ file
#    (GPU_TESTS overrides the -k expression);
# 4. candidate targets beside the bundled ones and their libraries (CANDIDATES=none skips).
set -uo pipefail
source bench/gpu_host.sh  # wheels, bubblewrap, the grader on the GPU
OUT=${OUT:-bench/results}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
[ "${PROBES:-all}" = none ] || python3 bench/engine_probes.py 2>&1 | grep -v "Warning\|warn(" | tee "$OUT/probes.txt"
for f in tests/gpu_verdicts/*/*.py; do
  [ -n "${SKIP:-}" ] && echo "$f" | grep -qE "$SKIP" && continue
  ex=$(basename "$(dirname "$f")"); expect=$(head -1 "$f" | sed 's/# expect: //')
  start=$(date +%s)
  got=$(timeout 200 python3 -m grader.cli check "$ex" "$f" --json --seed 7 --timeout 30 2>/dev/null \
    | python3 -c "import json,sys; r=json.load(sys.stdin); print(r['verdict'], '|', r['message'][:110])" 2>/dev/null)
  echo "$(( $(date +%s) - start ))s cpu:$expect gpu:${got:-no answer} <- $f"
done 2>&1 | tee "$OUT/verdicts.txt"
python3 -m pytest -m gpu -q -p no:cacheprovider -W ignore tests/test_gpu.py \
  -k "${GPU_TESTS:-every_cheat or valid_alternative or host_computation}" > "$OUT/gpu-tests.txt" 2>&1
grep -E "^E  |passed|failed" "$OUT/gpu-tests.txt" | cut -c1-400 | tail -30
[ "${CANDIDATES:-bench/candidates_targets.py}" = none ] || python3 bench/variants.py --only "${TARGETS:-reduce_sum,matmul_tiled}" \
  --candidates "${CANDIDATES:-bench/candidates_targets.py}" --out "$OUT/variants.json" 2>&1 | grep -v "Warning\|warn(\|: ok$" | tail -12
