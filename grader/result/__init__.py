"""Results as data: what the notebook renders, the CLI prints, nbgrader records and tests read.

One package below every engine and application holds the types a check produces, from the
engine to the report: `CheckResult` and its `CaseResult`s (here), its `Speed`
(grader/result/speed.py), its `DoctorReport` (grader/result/doctor.py); a gradebook's
`ClassRow` (grader/result/row.py); the one scoring rule (grader/result/scoring.py). They
become JSON only where they cross a process or reach storage (`to_dict`/`from_dict`).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

from grader.result.doctor import DoctorReport, mistake_of
from grader.result.speed import Speed, SpeedDetails  # noqa: F401 - part of a CheckResult
from grader.result.stored import known, rebuilt
from grader.result.views import VIEWS
from grader.textsafe import capped, unsurrogate

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


# A hint per verdict, used when an exercise's spec has no more specific one.
DEFAULT_HINTS = {
    "syntax_error": "Fix the line Python points at; the check runs once the file reads as Python.",
    "exception": "Read the message and the line: the kernel or `launch` stopped with an error.",
    "wrong_result": (
        "Compare the first wrong element with what you expected: is the index right, and is "
        "every thread computing the element it owns?"
    ),
    "out_of_bounds": (
        "The grid usually has more threads than elements. Compute the global index, then "
        "`if i < n:` before touching memory."
    ),
    "unwritten_output": (
        "Some elements were never written: launch enough blocks to cover every element "
        "(blocks = ceil(n / threads_per_block)), or loop with a grid-stride loop."
    ),
    "timeout": "The kernel did not finish in time: look for a loop whose condition never changes.",
    "race": (
        "Runs on the same input gave different answers. Put cuda.syncthreads() between "
        "threads writing shared memory and other threads reading it; set shared memory before "
        "reading it (it starts as garbage); use cuda.atomic.add when many threads update one "
        "element."
    ),
    "forbidden": "Do the work in your own @cuda.jit kernel, using only numba, numpy and math.",
    "too_slow": "Correct, but slower than the threshold: see the speed section for where the time goes.",
    "crashed": "The process running your kernel died: an out-of-range access on a GPU, or memory exhausted.",
}


MISTAKES = {
    # a doctor finding (grader/doctor/findings.py, warp_findings.py)
    "missing_barrier": (
        "missing barrier",
        "threads of a block read what others write, or overwrite what they still read, with no "
        "cuda.syncthreads() in between",
    ),
    "missing_atomic": ("missing atomic", "several threads update one element with a plain `+=`"),
    "race_between_blocks": (
        "race between blocks",
        "a block reads or writes what another block writes in the same launch",
    ),
    "blocks_overwrite": ("blocks overwrite each other", "blocks store different values into one element"),
    "threads_write_one_element": (
        "threads write one element",
        "threads of one block store into the same element between barriers",
    ),
    "divergent_barrier": (
        "barrier not reached by all",
        "a cuda.syncthreads() inside an `if`, or after an early `return`",
    ),
    "uninitialised_shared": ("shared memory not set", "shared memory read before any thread wrote it"),
    "tile_not_swapped": ("tile read back unswapped", "a transpose reads its shared tile with the indices it wrote"),
    "uninitialised_local": ("local array not set", "a cuda.local.array element read before it was set"),
    "local_not_shared": (
        "local array used as shared",
        "threads meant to share a cuda.local.array, which is private to each thread",
    ),
    "uninitialised_global": (
        "scratch array not set",
        "a cuda.device_array element read before anything wrote it (it holds garbage, not zeros)",
    ),
    "warp_divergence": (
        "shuffle in a branch",
        "undefined behaviour: lanes named in a warp collective's mask never reach it",
    ),
    "warp_mask": ("wrong warp mask", "undefined behaviour: a warp collective's mask leaves out a lane that calls it"),
    "warp_inactive_lane": (
        "shuffle from an idle lane",
        "undefined behaviour: a shuffle reads a lane that has left, does not exist or is not in the mask",
    ),
    "warp_lane_range": ("lane out of range", "a shuffle's lane or offset lies past the warp"),
    # a pattern in the output or an index error (grader/steps/diagnose.py, judge.py, explain.py)
    "missing_bounds_guard": (
        "missing bounds guard",
        "a thread past the end of an array reads or writes it: no `if i < n:`, or a wrong one",
    ),
    "negative_index": ("negative index", "an index below 0, e.g. a neighbour at the left edge"),
    "nothing_written": ("nothing written", "the kernel stored nothing into the output"),
    "index_ignores_block": ("index ignores blockIdx", "every block wrote the same first elements"),
    "index_ignores_thread": ("index ignores threadIdx", "every thread of a block wrote the block's first element"),
    "unwritten_tail": (
        "blocks rounded down",
        "the grid stops short of the end: n // threads rounds down (no block at all when n < threads)",
    ),
    "guard_too_strict": ("bounds guard too strict", "threads of the last elements did not store"),
    "unwritten_stretches": ("holes in every stretch", "the same offsets unwritten in every stretch"),
    "unwritten_region": ("rows or columns unwritten", "whole rows or columns of a 2-D output never written"),
    "repeated_adds": ("value added many times", "every wrong value is a whole multiple of the expected"),
    "constant_offset": ("off by a constant", "every wrong value is a constant away from the expected"),
    # a scan's or a warp reduction's wrong values (grader/steps/collectives.py)
    "shuffle_direction": ("shuffle the wrong way", "shfl_up_sync in a reduction, or shfl_down_sync in a scan"),
    "result_lane": ("result from the wrong lane", "a lane other than lane 0 stores a shfl_down reduction's sum"),
    "exclusive_scan": ("exclusive scan", "element i holds the sum before it, not up to and including it"),
    "missing_carry": ("no carry between blocks", "each block scanned on its own, without the blocks before"),
    "carry_own_total": ("block adds its own total", "block b adds the total of blocks 0..b, not 0..b-1"),
    "wrong_carry": ("wrong carry between blocks", "blocks off by one amount each: the carry between blocks"),
    "warp_carry": ("warps miss earlier warps", "warp w does not add the totals of warps 0..w-1"),
    # what a passed check costs on a GPU (grader/checking/verdicts.py passed_warnings)
    "duplicate_write": (
        "one element stored by many threads",
        "threads of one launch store the same value to one element: wasted work, and a race on a GPU",
    ),
    "uncoalesced": ("uncoalesced access", "correct, but global accesses under 50% coalesced"),
    "bank_conflicts": ("bank conflicts", "correct, but shared memory with 4-way bank conflicts or worse"),
    "serial_work": ("serial work", "correct, but one thread or one block does the work a GPU would spread out"),
}
"""The mistakes a diagnosis can name (`CaseResult.mistake`, `CheckResult.mistake`): name ->
(a short label, what it means). A class report counts these; a result without one is counted by
its verdict."""
SLOW_MISTAKES = ("duplicate_write", "uncoalesced", "bank_conflicts", "serial_work")
"""Mistakes a correct kernel can still make: they cost work or speed on a GPU, not points."""
GENERIC_MISTAKES = ("nothing_written",)
"""Mistakes that say what a case's output shows, not why: a later failing case that names a
cause names it better (a guard `if i < n - 1:` writes nothing at n = 1, and leaves the last
element unwritten at every other size: "bounds guard too strict")."""


MAX_TEXT = 4_000
"""Characters kept of each text of a result that can carry a learner's words (a message, a
hint, a warning): a learner's exception may be megabytes long."""
MAX_SOURCE = 400
"""Characters kept of a source line quoted in a case."""
MAX_WARNINGS = 20
"""Warnings kept of a passed check (each one line the grader wrote)."""
MAX_JSON = 200_000
"""Characters of a result's JSON (`to_json`) before its lists and texts are shortened."""
_SHRUNK_TEXT, _SHRUNK_LIST = 200, 20
"""What a result's JSON over MAX_JSON keeps of each text and of each list."""


def _fitted(text, limit: int):
    """A learner-facing text as a result stores it: capped, and encodable as UTF-8."""
    return unsurrogate(capped(text, limit)) if isinstance(text, str) else text


def _fit_fields(obj, **limits) -> None:
    """Cap a frozen dataclass's text fields in place (at construction)."""
    for name, limit in limits.items():
        object.__setattr__(obj, name, _fitted(getattr(obj, name), limit))


NO_VALUES = ("exception", "unwritten_output")
"""Verdicts of a case that gave no values to judge: a later case may show why."""


def names_no_cause(case) -> bool:
    """A failing case whose own output names no cause a learner can act on: its mistake is
    generic (nothing written), or it gave no values at all (an exception, a launch that never
    ran) and names no mistake and no fix. A later failing case that names a cause speaks for it
    (0 blocks at n = 1 fails to launch; at n = 300 the tail is unwritten: "round the block count
    up"). Wrong values, a race, an index out of bounds are their own evidence: that case's
    hint, not a later case's, applies."""
    if case.mistake:
        return case.mistake in GENERIC_MISTAKES
    return not case.hint and case.verdict in NO_VALUES


def telling_case(cases) -> CaseResult | None:
    """The first failing case that names a cause: one whose mistake is not generic
    (`GENERIC_MISTAKES`); None when no failing case names one."""
    return next((c for c in cases if not c.passed and c.mistake and c.mistake not in GENERIC_MISTAKES), None)


def telling_mistake(result) -> str:
    """The mistake a class report counts a result under: the finding its feedback names. The
    result's own (its first failing case's, else the doctor's first finding with a fix) unless
    that one is generic (`GENERIC_MISTAKES`), or missing where the case gave no values
    (`NO_VALUES`, as `names_no_cause`): then `telling_case`'s. A passed
    result's is what its first warning measured. "" when nothing names one."""
    named = result.mistake
    if not named and not result.passed and result.doctor:
        named = next((mistake_of(f) for f in result.doctor.findings if f.fix), "")
    if result.passed or (named and named not in GENERIC_MISTAKES) or (not named and result.verdict not in NO_VALUES):
        return named
    case = telling_case(result.cases)
    return case.mistake if case is not None else named


def mistake_label(name: str) -> str:
    """The short label of a mistake name, or of a verdict (a result that names no mistake)."""
    return MISTAKES[name][0] if name in MISTAKES else name.replace("_", " ")


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
    hint: str = ""
    """The fix for the mistake this case's message names, when the diagnosis knows it (a doctor
    finding's fix, a pattern in the wrong elements); empty: the verdict's hint applies."""
    mistake: str = ""
    """That mistake by name (`MISTAKES`), when the diagnosis knows it."""

    def __post_init__(self):
        _fit_fields(self, message=MAX_TEXT, hint=MAX_TEXT, source=MAX_SOURCE)

    @property
    def passed(self) -> bool:
        return self.verdict == "passed"

    @classmethod
    def from_dict(cls, data: dict) -> "CaseResult":
        fields = known(cls, data)
        fields["mismatches"] = tuple(
            rebuilt(Mismatch, m, index=tuple(m.get("index") or ())) for m in data.get("mismatches") or ()
        )
        return cls(**fields)


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
    doctor: DoctorReport | None = None
    """Without a GPU: the kernel doctor's report: which executor ran the cases, races and other
    findings, memory efficiency per kernel."""
    warnings: tuple = ()
    """What a passed check still gets wrong or costs on a GPU, one short line each ("out[127]
    was written by 128 threads: ...", "11% coalesced: slow on a GPU"); the headline names the
    first."""
    unsandboxed: bool = False
    """Graded without the operating system's sandbox (`--unsandboxed`): weaker evidence."""
    mistake: str = ""
    """The mistake by name (`MISTAKES`) when a diagnosis knows it: the failing case's (a doctor
    finding, a pattern in the output), else the doctor's first finding's; for a passed check,
    what its first warning measured ("uncoalesced", "bank_conflicts"). Empty: only the verdict
    says what went wrong."""

    def __post_init__(self):
        _fit_fields(self, message=MAX_TEXT, hint=MAX_TEXT)
        warnings = tuple(_fitted(w, MAX_TEXT) for w in self.warnings[:MAX_WARNINGS])
        object.__setattr__(self, "warnings", warnings)

    @property
    def passed(self) -> bool:
        return self.verdict == "passed"

    def to_dict(self) -> dict:
        data = asdict(self)
        data["passed"] = self.passed
        data["speed"] = self.speed.to_dict()
        data["doctor"] = self.doctor.to_dict() if self.doctor is not None else None
        data["engine"] = self.engine
        return data

    @property
    def engine(self) -> str:
        """What ran the cases: "gpu", "doctor" (the kernel doctor on the CPU) or "simulator"
        (Numba's CUDA simulator, for code the doctor cannot run or with ZEROGPU_DOCTOR=0)."""
        if self.backend == "gpu":
            return "gpu"
        return "doctor" if self.doctor is not None and self.doctor.ran_on_doctor else "simulator"

    def to_json(self, **kwargs) -> str:
        """The result as JSON, at most about MAX_JSON characters: past that, every list and
        text in it is shortened (a doctor report of a million launches) and "cut" says so.
        No lone surrogate anywhere in it (`textsafe.unsurrogate`): any JSON reader accepts it."""
        data = _unsurrogated(self.to_dict())
        text = json.dumps(data, default=_jsonable, **kwargs)
        if len(text) <= MAX_JSON:
            return text
        data = _shrunk(json.loads(text))
        data["cut"] = f"{len(text):,} characters of JSON; lists and texts shortened to fit {MAX_JSON:,}"
        return json.dumps(data, **kwargs)

    @classmethod
    def from_dict(cls, data: dict) -> "CheckResult":
        """A CheckResult again, from `to_dict()` (as stored in a gradebook; results stored by
        another version of the grader may have more fields, or fewer)."""
        fields = known(cls, data)
        fields["cases"] = tuple(CaseResult.from_dict(case) for case in data.get("cases") or ())
        fields["speed"] = Speed.from_dict(data.get("speed"))
        fields["doctor"] = DoctorReport.from_dict(data["doctor"]) if data.get("doctor") else None
        fields["warnings"] = tuple(data.get("warnings") or ())
        return cls(**fields)

    @classmethod
    def from_stored(cls, data: dict | None) -> "CheckResult | None":
        """`from_dict` for what a gradebook or a cell stored: None (nothing graded) stays None."""
        return None if data is None else cls.from_dict(data)

    def _repr_html_(self) -> str:
        return VIEWS["html"](self)

    def __str__(self) -> str:
        return VIEWS["text"](self)


def _unsurrogated(value):
    """JSON data with every text (keys too) through `unsurrogate`."""
    if isinstance(value, str):
        return unsurrogate(value)
    if isinstance(value, dict):
        return {_unsurrogated(k): _unsurrogated(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_unsurrogated(v) for v in value]
    return value


def _shrunk(value):
    """JSON data with each list cut to its first items and each text capped, keys kept."""
    if isinstance(value, dict):
        return {k: _shrunk(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shrunk(v) for v in value[:_SHRUNK_LIST]]
    return capped(value, _SHRUNK_TEXT) if isinstance(value, str) else value


def _jsonable(value):
    if hasattr(value, "item"):
        return value.item()
    if isinstance(value, tuple):
        return list(value)
    raise TypeError(f"cannot serialise {type(value).__name__}")
