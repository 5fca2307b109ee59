"""Loading a bundled reference, kernels/<id>.py: what the grader reads an exercise from, and
how one exercise reuses another's inputs, oracle and tolerance (matmul_tiled poses
matmul_naive's problem)."""

from __future__ import annotations

import importlib.util
import sys
from functools import lru_cache

from grader.paths import ROOT
from grader.backend.simulator import install_if_simulating


@lru_cache(maxsize=None)
def reference(exercise_id: str):
    """The module kernels/<id>.py, loaded once (after the back end is chosen: it imports
    numba.cuda, and on the simulator our patches must be in first)."""
    path = ROOT / "kernels" / f"{exercise_id}.py"
    if not path.is_file():
        raise FileNotFoundError(f"no reference kernels at {path}")
    install_if_simulating()
    module_name = f"zerogpu_kernels.{exercise_id}"
    loader_spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(loader_spec)
    sys.modules[module_name] = module
    loader_spec.loader.exec_module(module)
    return module
