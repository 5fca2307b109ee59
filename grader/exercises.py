"""The ladder: the ordered exercise ids and where each one's three files live."""
from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable

from grader.spec import Spec

ROOT = Path(__file__).resolve().parent.parent

LADDER = (
    "thread_ids",
    "vector_add",
    "saxpy",
    "rgb_to_gray",
    "reduce_sum",
    "histogram",
    "stencil_1d",
    "transpose",
    "matmul_naive",
    "matmul_tiled",
    "softmax_fused",
    "warp_reduce",
    "scan",
)


class UnknownExercise(LookupError):
    def __init__(self, exercise_id: str):
        super().__init__(
            f"There is no exercise {exercise_id!r}. Exercises: {', '.join(LADDER)}."
        )


@dataclass(frozen=True)
class Exercise:
    """One rung of the ladder: its spec and its bundled reference code."""

    spec: Spec
    oracle: Callable[..., dict]
    """Inputs -> {output name: exact answer} (float64 or exact integers)."""
    baseline: Callable
    """A naive but correct `launch`: the speedup denominator."""
    target: Callable
    """The best `launch` we can write in Numba: what "near the limit" means."""

    @property
    def id(self) -> str:
        return self.spec.id

    @property
    def starter_file(self) -> Path:
        return ROOT / "exercises" / f"{self.id}.py"

    @property
    def solution_file(self) -> Path:
        return ROOT / "solutions" / f"{self.id}.py"

    @property
    def reference_file(self) -> Path:
        return ROOT / "kernels" / f"{self.id}.py"


def _as_output_dict(spec: Spec, oracle: Callable) -> Callable[..., dict]:
    names = [a.name for a in spec.outputs]

    def wrapped(**inputs):
        answer = oracle(**inputs)
        return answer if isinstance(answer, dict) else {names[0]: answer}

    return wrapped


@lru_cache(maxsize=None)
def reference_module(exercise_id: str):
    """The module kernels/<id>.py, loaded once (after the back end is chosen: it imports
    numba.cuda). Two exercises posing the same problem share its inputs, oracle and tolerance
    through this."""
    if exercise_id not in LADDER:
        raise UnknownExercise(exercise_id)
    from grader.simulator import install_if_simulating

    install_if_simulating()
    path = ROOT / "kernels" / f"{exercise_id}.py"
    module_name = f"zerogpu_kernels.{exercise_id}"
    loader_spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(loader_spec)
    sys.modules[module_name] = module
    loader_spec.loader.exec_module(module)
    return module


@lru_cache(maxsize=None)
def exercise(exercise_id: str) -> Exercise:
    """One rung: its spec and reference code from kernels/<id>.py."""
    module = reference_module(exercise_id)
    spec = module.SPEC
    return Exercise(spec, _as_output_dict(spec, module.oracle), module.baseline, module.target)


def ladder() -> list[Exercise]:
    return [exercise(i) for i in LADDER]
