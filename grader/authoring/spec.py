"""The declarative description of one exercise, read by every part of the course.

`kernels/<id>.py` builds one `Spec`; the checker, the CLI, the notebooks and the tests
read nothing else about the exercise.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping

import numpy as np

Dims = Mapping[str, int]
"""Named sizes of one case, e.g. {"n": 1000} or {"m": 17, "k": 13, "n": 19}."""


@dataclass(frozen=True)
class Array:
    """One array argument of `launch`."""

    name: str
    dtype: str
    shape: tuple
    """Dimension names or integers, e.g. ("h", "w", 3)."""
    role: str = "in"
    """"in" (the grader fills it) or "out" (the kernel writes it)."""
    init: str = "poison"
    """For outputs: "poison" (NaN or a sentinel: every element must be written) or
    "zeros" (an accumulator such as a histogram starts at zero)."""
    negatable: bool = True
    """For float inputs: whether a timed round may negate it (besides rotating it), so that an
    order-free answer such as a sum differs from round to round. False where the negated input
    is other work, not just another answer: softmax's +90 elements would become -90, and the
    rows of exp values that underflow would change from round to round."""

    def shape_for(self, dims: Dims) -> tuple[int, ...]:
        return tuple(dims[d] if isinstance(d, str) else int(d) for d in self.shape)


@dataclass(frozen=True)
class Scalar:
    """One scalar argument of `launch` (passed as a NumPy scalar of `dtype`)."""

    name: str
    dtype: str


@dataclass(frozen=True)
class Case:
    """One correctness case: a name a learner can read and the sizes."""

    name: str
    dims: Dims


@dataclass(frozen=True)
class SpeedTier:
    """A speed level, reached at a fraction of the bundled target kernel's speed."""

    name: str
    fraction_of_target: float
    points: int


DEFAULT_TIERS = (
    SpeedTier("good", 0.5, 1),
    SpeedTier("great", 0.75, 2),
    SpeedTier("near the limit", 0.9, 3),
)


@dataclass(frozen=True)
class Benchmark:
    """How the GPU timing measures this exercise (used only on a real GPU)."""

    dims: Dims
    bound: str
    """"memory" (figure of merit: GB/s, against the GPU's copy ceiling), "read" (GB/s, against
    its read ceiling: a kernel that reads its input and writes next to nothing, a reduction or a
    histogram, where a copy's read + write would put it over 100%) or "compute" (TFLOP/s)."""
    bytes_moved: Callable[[Dims], float]
    """Fewest bytes the kernel must move through device memory."""
    flops: Callable[[Dims], float] = lambda dims: 0.0
    required_speedup: float = 1.2
    """Speedup over the baseline a correct submission needs on a GPU, else `too_slow`.
    Ratios, not times, so they hold across GPU models (calibrated in docs/BENCHMARKS.md)."""
    tiers: tuple = DEFAULT_TIERS


@dataclass(frozen=True)
class Spec:
    """Everything the grader knows about one exercise."""

    id: str
    stage: int
    title: str
    lesson: str
    params: tuple
    """`Array`s and `Scalar`s in the order `launch` takes them."""
    make_inputs: Callable[[Dims, np.random.Generator], dict]
    """(dims, rng) -> {name: ndarray or scalar} for every input array and scalar."""
    cases: tuple[Case, ...]
    tolerance: Callable[[dict, np.ndarray], np.ndarray | float]
    """(inputs, exact output) -> largest allowed |got - exact|, per element or overall.
    Each kernels/<id>.py states its rule in words beside it."""
    hints: Mapping[str, str] = field(default_factory=dict)
    """Verdict -> a hint that teaches, shown when a case fails that way."""
    points: int = 10
    benchmark: Benchmark | None = None
    allowed_imports: tuple = ("numba", "numpy", "math")
    """Modules a submission may import (grader/containment/policy.py)."""
    allowed_library_calls: tuple = ()
    """Library calls that do the exercise's work yet are allowed here, by the names of
    grader/containment/library_calls.py (e.g. ("cuda.reduce",)); none by default."""
    pointwise: bool | Callable[[Dims, np.ndarray], np.ndarray] = False
    """True: each output element comes from the inputs' elements at the same index (and their
    trailing dimensions: a pixel's 3 channels); a function (dims, flat output indices) -> flat
    input indices: from the input element it names (a transpose). Either way the oracle and
    tolerance apply to any selection of elements: a timed launch's expected output is computed
    at the judged elements alone (tests/test_speed_harness.py holds each to the whole oracle)."""

    @property
    def arrays(self) -> tuple[Array, ...]:
        return tuple(p for p in self.params if isinstance(p, Array))

    @property
    def inputs(self) -> tuple[Array, ...]:
        return tuple(a for a in self.arrays if a.role == "in")

    @property
    def outputs(self) -> tuple[Array, ...]:
        return tuple(a for a in self.arrays if a.role == "out")

    @property
    def scalars(self) -> tuple[Scalar, ...]:
        return tuple(p for p in self.params if isinstance(p, Scalar))

    @property
    def answer_from_inputs(self) -> bool:
        """Does the answer depend on input arrays? An exercise with none (thread_ids: each
        element is its own index) could be answered by data made on the host, so no plan of it
        may upload host data at all (grader/replay/schema.py); with inputs, host code never sees
        them (it runs on placeholders), so host data cannot be their answer."""
        return bool(self.inputs)

    @property
    def param_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)
