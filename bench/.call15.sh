set -uo pipefail
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>/dev/null || exit 1
export PYTHONPATH=/tmp/site:$PWD ZEROGPU_BACKEND=gpu ZEROGPU_HOME=/tmp/zerogpu-home PYTHONUNBUFFERED=1
python3 - <<'PY' 2>&1 | grep -v "Warning\|warn("
import numpy as np
from numba import cuda
from grader.exercises import reference_module
T = reference_module("transpose")
for m, n in ((16384, 16384), (4096, 12288), (1026, 3074)):
    h = np.random.default_rng(m).standard_normal((m, n), dtype=np.float32)
    a = cuda.to_device(h); out = cuda.device_array((n, m), np.float32)
    T.target(a, out); cuda.synchronize()
    print("full-size check", m, n, bool((out.copy_to_host() == h.T).all()), "regs", list(T._transpose_pairs.get_regs_per_thread().values()), flush=True)
PY
python3 bench/variants.py --only transpose --out "$OUT/v11.json" 2>&1 | grep -v "Warning\|warn(\|: ok$"
python3 -m pytest -m gpu -q -p no:cacheprovider -W ignore tests/test_gpu.py 2>&1 | tail -4
python3 bench/trust.py --only transpose --repeats 5 --out "$OUT/trust.json" 2>&1 | grep -v "Warning\|warn(" | tail -15
