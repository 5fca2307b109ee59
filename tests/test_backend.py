"""The back end is chosen before numba loads, and a wrong import order is explained."""

import subprocess
import sys

from grader.exercises import ROOT


def python(code, **env):
    import os

    full_env = {k: v for k, v in os.environ.items() if k not in ("ZEROGPU_BACKEND", "NUMBA_ENABLE_CUDASIM")}
    full_env.update(env)
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=full_env, timeout=120
    )


def test_without_a_gpu_the_simulator_is_chosen():
    proc = python("import grader; print(grader.BACKEND)")
    assert proc.stdout.strip() == "simulator", proc.stderr


def test_numba_imported_first_but_not_numba_cuda_is_still_fine():
    proc = python(
        "import numba, grader; from numba import cuda; print(grader.BACKEND, cuda.simulator_is_available if hasattr(cuda, 'simulator_is_available') else '')"
    )
    assert proc.returncode == 0 and proc.stdout.startswith("simulator"), proc.stderr


def test_numba_cuda_imported_first_gives_a_clear_message():
    proc = python("from numba import cuda\nimport grader", ZEROGPU_BACKEND="simulator")
    assert proc.returncode != 0
    assert "Restart the kernel" in proc.stderr and "import grader" in proc.stderr


def test_a_bad_forced_backend_is_refused_clearly():
    proc = python("import grader", ZEROGPU_BACKEND="tpu")
    assert "use 'gpu' or 'simulator'" in proc.stderr
