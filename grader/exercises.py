"""The ladder: the ordered exercise ids and where each one's three files live."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable

from grader.authoring.references import reference
from grader.paths import ROOT
from grader.authoring.spec import Spec


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
        super().__init__(f"There is no exercise {exercise_id!r}. Exercises: {', '.join(LADDER)}.")


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


def reference_module(exercise_id: str):
    """The module kernels/<id>.py of a rung of the ladder, loaded once."""
    if exercise_id not in LADDER:
        raise UnknownExercise(exercise_id)
    return reference(exercise_id)


@lru_cache(maxsize=None)
def exercise(exercise_id: str) -> Exercise:
    """One rung: its spec and reference code from kernels/<id>.py."""
    module = reference_module(exercise_id)
    spec = module.SPEC
    return Exercise(spec, _as_output_dict(spec, module.oracle), module.baseline, module.target)


def ladder() -> list[Exercise]:
    return [exercise(i) for i in LADDER]
