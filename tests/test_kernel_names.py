"""One list of what a kernel file may name (grader/kernel_names.py), held to numba-cuda itself:
every form the grader accepts compiles with numba-cuda, every form it refuses because "a GPU
refuses such a kernel" is refused by numba-cuda too, and the re-exported modules it keeps a
file from are the installed numba's."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from grader.compiler.client import compile_answer
from grader.kernel_names import KERNEL_MODULES, MODULES_IN_TYPES

HEADER = "import math, cmath, operator, random\nimport numpy as np\nfrom numba import cuda, float32, int32\nfrom numba import types\nfrom numba.cuda import libdevice\nfrom numba.cuda import random as curandom\n"

ACCEPTED = {
    "math": "out[0] = math.sqrt(x[0])",
    "cmath": "out[0] = cmath.sqrt(complex(x[0], 0.0)).real",
    "operator": "out[0] = operator.add(x[0], x[0])",
    "numpy": "out[0] = np.float32(x[0]) + np.float32(1)",
    "numba": "out[0] = float32(x[0])",
    "numba.cuda": "out[cuda.grid(1)] = x[0]",
    "numba.cuda.libdevice": "out[0] = libdevice.sqrtf(x[0])",
    "numba.cuda.random": "out[0] = x[0]\n    curandom",
    "numba.core.types": "s = cuda.shared.array(4, types.float32)\n    s[0] = x[0]\n    out[0] = s[0]",
}
"""A kernel body per module of KERNEL_MODULES, each naming that module."""

REFUSED = {
    "a list global": ("WEIGHTS = [1.0, 2.0]", "out[0] = WEIGHTS[0] * x[0]"),
    "a dict global": ("TABLE = {0: 1.0}", "out[0] = TABLE[0] * x[0]"),
    "a module outside the list": ("", "out[0] = random.random() * x[0]"),
    "a plain Python function": ("def helper(v):\n    return v * 2", "out[0] = helper(x[0])"),
    "a Python list in the body": ("", "values = [x[0], x[0]]\n    out[0] = values[0]"),
}
"""Forms the grader refuses as "a GPU refuses such a kernel": (module-level code, kernel body)."""

COMPILE_DIRECTLY = r"""
import importlib.util, json, os, sys
os.environ.pop("NUMBA_ENABLE_CUDASIM", None)
from numba import cuda, float32
seen = {}
for name, path in json.loads(sys.argv[1]).items():
    spec = importlib.util.spec_from_file_location("probe_" + str(len(seen)), path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
        cuda.compile_ptx(module.kernel.py_func, (float32[:], float32[:]), cc=(9, 0))
        seen[name] = "ok"
    except Exception as exc:
        seen[name] = type(exc).__name__ + ": " + str(exc).splitlines()[0][:200]
print(json.dumps(seen))
"""


def write(tmp_path: Path, name: str, module_code: str, body: str) -> Path:
    path = tmp_path / f"{name.replace(' ', '_').replace('.', '_')}.py"
    path.write_text(HEADER + module_code + "\n\n@cuda.jit\ndef kernel(x, out):\n    " + body + "\n")
    return path


def numba_cuda_says(paths: dict) -> dict:
    """name -> "ok" or numba-cuda's error, compiling each file's kernel for sm_90 in a process
    without the simulator."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    done = subprocess.run(
        [sys.executable, "-c", COMPILE_DIRECTLY, json.dumps({k: str(v) for k, v in paths.items()})],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def graders_answer(path: Path) -> dict:
    """What the grader's compile check answers for the file's kernel (grader/compiler/client.py),
    described as a recording describes it."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"kernel_names_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    array = ["array", "<f4", 1, "C"]
    return compile_answer(module.kernel.fn, (), [array, array])


def test_every_module_of_the_list_has_a_form_here():
    assert set(ACCEPTED) == set(KERNEL_MODULES)


@pytest.mark.slow
def test_what_the_grader_accepts_numba_cuda_compiles_and_what_it_refuses_numba_cuda_refuses(tmp_path):
    accepted = {name: write(tmp_path, name, "", body) for name, body in ACCEPTED.items()}
    refused = {name: write(tmp_path, name, code, body) for name, (code, body) in REFUSED.items()}
    direct = numba_cuda_says({**accepted, **refused})
    for name, path in accepted.items():
        assert direct[name] == "ok", (name, direct[name])
        assert graders_answer(path)["status"] == "ok", (name, graders_answer(path))
    for name, path in refused.items():
        answer = graders_answer(path)
        assert answer["status"] in ("error", "unverifiable"), (name, answer)
        assert direct[name] != "ok", f"{name}: the grader says a GPU refuses it, but numba-cuda compiles it"


def test_the_modules_numbas_types_re_exports_are_the_ones_kept_out():
    """MODULES_IN_TYPES is a deny-list: it must name every module the installed numba's types
    module re-exports (`types.ctypes`, `types.np`), or one would walk around the policy."""
    code = textwrap.dedent(
        """
        import json, types as T
        import numba.core.types as t
        print(json.dumps(sorted(n for n in dir(t) if isinstance(getattr(t, n), T.ModuleType))))
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert set(json.loads(done.stdout)) <= set(MODULES_IN_TYPES)
