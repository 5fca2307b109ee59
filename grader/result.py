"""Results as data: what the notebook renders, the CLI prints, nbgrader records and tests read."""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

VERDICTS = (
    "passed",
    "syntax_error",
    "exception",
    "wrong_result",
    "out_of_bounds",
    "unwritten_output",
    "timeout",
    "race",
    "forbidden",
    "too_slow",
    "crashed",
)


@dataclass(frozen=True)
class Mismatch:
    """One element that is wrong."""

    output: str
    index: tuple
    expected: float
    got: float


@dataclass(frozen=True)
class CaseResult:
    """The verdict on one correctness case."""

    name: str
    dims: dict
    verdict: str
    message: str = ""
    """What went wrong, in a learner's words; empty when passed."""
    line: int | None = None
    """Line of the learner's code where it went wrong, when known."""
    source: str = ""
    """That line's text."""
    mismatches: tuple = ()
    """The first few wrong elements (`Mismatch`)."""
    wrong: int = 0
    """Elements outside the tolerance."""
    unwritten: int = 0
    """Output elements the kernel never wrote."""
    total: int = 0
    """Output elements in this case."""
    max_abs_error: float | None = None
    max_rel_error: float | None = None
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return self.verdict == "passed"


@dataclass(frozen=True)
class Speed:
    """The speed section. On the simulator it only says why nothing was measured."""

    measured: bool
    reason: str = ""
    details: dict = field(default_factory=dict)


@dataclass(frozen=True)
class CheckResult:
    """The whole verdict on one submission for one exercise."""

    exercise: str
    title: str
    backend: str
    """"gpu" or "simulator": every result says where it ran."""
    verdict: str
    message: str
    """One or two sentences: what failed and where (or that all passed)."""
    hint: str
    """Something that teaches, for the verdict; empty when passed."""
    cases: tuple
    speed: Speed
    score: float
    max_score: float
    seed: int | None
    """The public seed used, or None when a secret seed was mixed in."""
    seconds: float = 0.0
    doctor: object = None
    """Without a GPU: the kernel doctor's report (grader.doctor.report.DoctorReport): which
    executor ran the cases, races and other findings, memory efficiency per kernel."""

    @property
    def passed(self) -> bool:
        return self.verdict == "passed"

    def to_dict(self) -> dict:
        data = asdict(self)
        data["passed"] = self.passed
        data["doctor"] = self.doctor.to_dict() if hasattr(self.doctor, "to_dict") else self.doctor
        return data

    def to_json(self, **kwargs) -> str:
        return json.dumps(self.to_dict(), default=_jsonable, **kwargs)

    def _repr_html_(self) -> str:
        from grader.render import result_html

        return result_html(self)

    def __str__(self) -> str:
        from grader.render import result_text

        return result_text(self)


def _jsonable(value):
    if hasattr(value, "item"):
        return value.item()
    if isinstance(value, tuple):
        return list(value)
    raise TypeError(f"cannot serialise {type(value).__name__}")
