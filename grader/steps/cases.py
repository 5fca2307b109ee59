"""Fresh inputs for every case from one seed, with the oracle's answer and tolerance."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from grader import settings
from grader.exercises import Exercise
from grader.paths import DataDirError, create_once, data_dir
from grader.authoring.spec import Case


@dataclass
class PreparedCase:
    index: int
    case: Case
    inputs: dict
    expected: dict
    tolerance: dict
    """Output name -> largest allowed |got - exact| (scalar or per element)."""


RERUN_STRIDE = 1000
"""A case rerun to look for a race has index case + k * RERUN_STRIDE (grader/checking/check.py
`_rerun`); the child replays the plan of case index % RERUN_STRIDE."""


def new_seed() -> int:
    return secrets.randbits(32)


def secret_file() -> Path:
    return settings.secret_file() or data_dir() / "grading-secret"


_SECRET_FROM_ENV = None


def load_secret() -> int:
    """The grading host's secret, mixed into every graded input. From $ZEROGPU_SECRET, else
    the secret file (created on first use, readable by its owner only; safe when many graders
    start together: all of them read the one file that won). Never in a notebook."""
    global _SECRET_FROM_ENV
    # taken out of the environment at once: no process this one starts may inherit it
    text = settings.take_secret() or _SECRET_FROM_ENV
    _SECRET_FROM_ENV = text
    if not text:
        text = create_once(secret_file(), lambda: f"{secrets.randbits(64)}\n").strip()
        if not text:
            raise DataDirError(f"the grading secret {secret_file()} is empty; delete it to make a new one.")
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")


def task_secret(secret: int, student: str, exercise_id: str) -> int:
    """The secret one class-grading task's inputs are drawn with, for a grading worker on
    another machine: it opens that task's inputs only, never the host secret or another
    task's (SHA-256 is one-way)."""
    text = f"{secret}:{student}:{exercise_id}"
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")


def benchmark_secret(secret: int, exercise_id: str) -> int:
    """The secret of a class run's benchmark inputs for `exercise_id`: the same for every
    student (their checks share the kept buffers and references), one-way from the host's
    secret like `task_secret`, and opening no student's correctness inputs."""
    return task_secret(secret, "*benchmark*", exercise_id)


def derived_seed(seed: int, secret: int | None) -> int:
    """A seed the child may see: it reveals nothing about the secret."""
    if secret is None:
        return seed
    return int.from_bytes(hashlib.sha256(f"{seed}:{secret}".encode()).digest()[:4], "little")


def case_rng(seed: int, index: int, secret: int | None = None) -> np.random.Generator:
    """Each case draws from its own stream; a secret, when given, is mixed in."""
    entropy = [seed, index] if secret is None else [seed, index, secret]
    return np.random.default_rng(entropy)


def with_repeat(cases) -> list[Case]:
    """The spec's cases plus the last one again with fresh inputs: a launch that replays
    an earlier answer, or stops working after its first call, fails there."""
    last = cases[-1]
    return [*cases, Case(f"{last.name}, fresh inputs", dict(last.dims))]


def expected_and_tolerance(ex: Exercise, inputs: dict) -> tuple[dict, dict]:
    """The oracle's outputs for `inputs`, and the allowed |error| of each (by output name)."""
    expected = ex.oracle(**inputs)
    tolerance = {name: ex.spec.tolerance(inputs, np.asarray(want)) for name, want in expected.items()}
    return expected, tolerance


def prepare(ex: Exercise, seed: int, secret: int | None = None) -> list[PreparedCase]:
    prepared = []
    for index, case in enumerate(with_repeat(ex.spec.cases)):
        inputs = ex.spec.make_inputs(dict(case.dims), case_rng(seed, index, secret))
        prepared.append(PreparedCase(index, case, inputs, *expected_and_tolerance(ex, inputs)))
    return prepared
