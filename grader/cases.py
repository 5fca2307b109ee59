"""Fresh inputs for every case from one seed, with the oracle's answer and tolerance."""
from __future__ import annotations

import secrets
from dataclasses import dataclass

import numpy as np

from grader.exercises import Exercise
from grader.spec import Case


@dataclass
class PreparedCase:
    index: int
    case: Case
    inputs: dict
    expected: dict
    tolerance: dict
    """Output name -> largest allowed |got - exact| (scalar or per element)."""


def new_seed() -> int:
    return secrets.randbits(32)


def case_rng(seed: int, index: int, secret: int | None = None) -> np.random.Generator:
    """Each case draws from its own stream; a secret, when given, is mixed in."""
    entropy = [seed, index] if secret is None else [seed, index, secret]
    return np.random.default_rng(entropy)


def prepare(ex: Exercise, seed: int, secret: int | None = None) -> list[PreparedCase]:
    prepared = []
    for index, case in enumerate(ex.spec.cases):
        inputs = ex.spec.make_inputs(dict(case.dims), case_rng(seed, index, secret))
        expected = ex.oracle(**inputs)
        tolerance = {
            name: ex.spec.tolerance(inputs, np.asarray(want)) for name, want in expected.items()
        }
        prepared.append(PreparedCase(index, case, inputs, expected, tolerance))
    return prepared
