"""The kernel doctor's report as data: its findings and its memory efficiency per kernel.

The doctor (grader/doctor/) builds it, the checking child sends it as JSON, `from_dict` makes it
a report again in the grading process, and a CheckResult carries it to every reader; renderers
show it (grader/doctor/summary.py, through `VIEWS`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from grader.result.stored import rebuilt
from grader.result.views import VIEWS

DOCTOR, SIMULATOR = "kernel doctor", "simulator"
"""What ran a report's kernels (`DoctorReport.executor`)."""
SEVERITY_ERROR, SEVERITY_WARNING = "error", "warning"
_POINTS = ("thread", "block", "other_thread", "other_block", "index")
"""A finding's fields that are tuples (lists in JSON)."""


@dataclass(frozen=True)
class Finding:
    """One problem, with the example that shows it best."""

    kind: str
    """"race", "missing_atomic", "divergent_barrier", "uninitialised_shared",
    "uninitialised_local", "uninitialised_global" (scratch from cuda.device_array read before
    anything wrote it), "overwrite" (blocks storing different values to one global element),
    "duplicate_write" (several threads of one launch storing the same value to one global
    element), "serial_work" or "slow_memory" (warnings: a GPU would likely be too slow)."""
    severity: str
    """"error": fails the case whatever the output; "warning": shown, and the output decides
    the case."""
    message: str
    kernel: str = ""
    filename: str = ""
    line: int | None = None
    source: str = ""
    other_line: int | None = None
    thread: tuple | None = None
    block: tuple | None = None
    other_thread: tuple | None = None
    other_block: tuple | None = None
    array: str = ""
    index: tuple | None = None
    count: int = 1
    """How many times it happened (accesses or barrier crossings), at most grader/doctor/findings.py `COUNT_CAP`."""
    fix: str = ""
    """What to change, in one or two sentences: the check's hint when this finding comes first."""
    headline: str = ""
    """A warning's short form, for the headline of a check that passes ("PASSED — but ...")."""
    mistake: str = ""
    """The mistake by name (grader.result.MISTAKES); empty: `mistake_of` derives it from the kind."""

    def to_dict(self) -> dict:
        return {**asdict(self), "mistake": mistake_of(self)}

    @classmethod
    def from_dict(cls, data: dict) -> "Finding":
        return rebuilt(cls, data, tuples=_POINTS)


def mistake_of(finding: Finding) -> str:
    """The mistake a finding names: a race within a block is a missing barrier, one between
    blocks a race between blocks (findings stored before they named their mistake are told
    apart by their blocks)."""
    if finding.mistake:
        return finding.mistake
    if finding.kind == "race":
        return "missing_barrier" if finding.block == finding.other_block else "race_between_blocks"
    return {"overwrite": "blocks_overwrite", "slow_memory": "uncoalesced"}.get(finding.kind, finding.kind)


FIXES = {
    "swap_indices": (
        "threadIdx.x walks rows of a row-major array: swap the indices",
        "Let threadIdx.x (the x of cuda.grid) pick the last index, the column: with a 2-D grid "
        "write `col, row = cuda.grid(2)` and size the grid's x for the columns; with one thread "
        "per row, let the threads of a block share the row instead (columns tid, "
        "tid + blockDim.x, ...). A warp then reads one contiguous stretch of a row. If the "
        "kernel must also touch an array the other way round (a transpose), stage a tile in "
        "shared memory so that both sides run along rows.",
    ),
    "contiguous_threads": (
        "neighbouring threads touch elements far apart",
        "Give consecutive threads consecutive elements: index with cuda.grid(1) (and a "
        "grid-stride loop for more work per thread) rather than a multiple of it.",
    ),
    "pad_shared": (
        "bank conflicts: a warp reads down a column of a shared tile whose rows are a multiple of 32 words",
        "Pad each row by one element, e.g. cuda.shared.array((32, 33), float32) for a 32 × 32 "
        "tile: every row then starts one bank later and a column spans all 32 banks.",
    ),
    "spread_banks": (
        "bank conflicts: the lanes of a warp hit one bank at different addresses",
        "Let neighbouring threads use neighbouring words (stride 1) or an odd stride, so that a "
        "warp spreads over all 32 banks.",
    ),
}
"""Fix kind -> (what is wrong, what to do): the suggestions of a kernel's report."""


@dataclass(frozen=True)
class SiteReport:
    """One global or shared access site of a kernel, over the profiled warp accesses."""

    kernel: str
    line: int
    text: str
    space: str
    """"global" or "shared"."""
    access: str
    """"load", "store", "update" (`a[i] += v`) or "atomic"."""
    array: str
    requests: int
    """Warp accesses profiled."""
    sectors: int = 0
    """Global: 32-byte sectors touched, summed over the requests."""
    ideal: int = 0
    """Global: the fewest sectors that could hold the same elements, summed."""
    degree_sum: int = 0
    """Shared: bank-conflict degree (1 = none), summed over the requests."""
    degree_max: int = 0
    contention_max: int = 0
    """Atomics: most lanes of one warp on one element."""
    pattern: str = ""
    suggestion: str = ""
    """A fix kind (`FIXES`), or "" when the access is fine."""

    @property
    def efficiency(self) -> float | None:
        return self.ideal / self.sectors if self.space == "global" and self.sectors else None

    @property
    def degree(self) -> float | None:
        return self.degree_sum / self.requests if self.space == "shared" and self.requests else None

    def summary(self) -> str:
        if self.space == "global":
            per = self.sectors / self.requests
            ideal = self.ideal / self.requests
            text = f"{per:.1f} sectors per warp access (fewest possible {ideal:.1f}): {self.efficiency:.0%} efficient"
        else:
            text = (
                f"bank conflicts: {self.degree:.1f}-way on average, {self.degree_max}-way at worst"
                if self.degree_max > 1
                else "no bank conflicts"
            )
        if self.contention_max > 1:
            text += f"; up to {self.contention_max} lanes of a warp update one element atomically (they queue)"
        return text


@dataclass(frozen=True)
class KernelReport:
    """One kernel's memory efficiency: its access sites (`SiteReport`)."""

    kernel: str
    sites: tuple = ()

    @classmethod
    def from_dict(cls, data: dict) -> "KernelReport":
        names = SiteReport.__dataclass_fields__
        return cls(
            data["kernel"], tuple(SiteReport(**{k: v for k, v in s.items() if k in names}) for s in data["sites"])
        )

    def _efficiency(self, accesses) -> float | None:
        chosen = [s for s in self.sites if s.space == "global" and s.access in accesses]
        sectors = sum(s.sectors for s in chosen)
        return sum(s.ideal for s in chosen) / sectors if sectors else None

    @property
    def load_efficiency(self) -> float | None:
        return self._efficiency(("load", "update"))

    @property
    def store_efficiency(self) -> float | None:
        return self._efficiency(("store", "update", "atomic"))

    @property
    def shared_degree(self) -> float | None:
        chosen = [s for s in self.sites if s.space == "shared"]
        requests = sum(s.requests for s in chosen)
        return sum(s.degree_sum for s in chosen) / requests if requests else None

    @property
    def suggestions(self) -> tuple:
        """One fix per kind of problem, naming the sites that have it."""
        return tuple(self.suggestion(kind) for kind in dict.fromkeys(s.suggestion for s in self.sites if s.suggestion))

    def suggestion(self, kind: str) -> str:
        """The fix of one kind of problem (`FIXES`), naming every site that has it."""
        what, advice = FIXES[kind]
        where = ", ".join(f"`{s.text}` (line {s.line})" for s in self.sites if s.suggestion == kind)
        return f"{what} — {where}. {advice}"

    def headline(self) -> str:
        parts = []
        for label, value in (("global loads", self.load_efficiency), ("global stores", self.store_efficiency)):
            if value is not None:
                parts.append(f"{label} {value:.0%} coalesced")
        if self.shared_degree is not None:
            parts.append(
                f"shared memory {self.shared_degree:.1f}-way bank conflicts"
                if self.shared_degree > 1.05
                else "shared memory free of bank conflicts"
            )
        return "; ".join(parts) or "no global or shared memory accesses profiled"


@dataclass(frozen=True)
class DoctorReport:
    """What the doctor ran and found. `executor` says which back end ran the kernels."""

    executor: str
    reason: str = ""
    """Why the simulator ran instead (the feature the doctor lacks), when it did."""
    findings: tuple = ()
    kernels: tuple = ()
    seconds: float = 0.0
    launches: tuple = ()
    """(grid, block) of each launch of one run, as 3-tuples; empty in a merged report."""
    shuffles: tuple = ()
    """(kernel or device function, op, line, text, offsets) per shuffle site: the offsets
    (or source lanes) lane 0 of a block's first warp passed, in order (grader.steps.diagnose:
    a reduction with shfl_up_sync, a scan with shfl_down_sync); empty in a merged report."""

    @property
    def errors(self) -> tuple:
        return tuple(f for f in self.findings if f.severity == SEVERITY_ERROR)

    @property
    def ran_on_doctor(self) -> bool:
        return self.executor == DOCTOR

    def tips(self, kernel: KernelReport) -> tuple:
        """The kernel's fixes (`KernelReport.suggestions`) that no finding already gives in full:
        each is said once."""
        said = [f.message for f in self.findings if f.kernel == kernel.kernel]
        return tuple(tip for tip in kernel.suggestions if not any(tip in message for message in said))

    def executor_line(self) -> str:
        if self.ran_on_doctor:
            return "Ran on the kernel doctor (Zero to GPU's CPU executor)."
        return f"Ran on Numba's CUDA simulator: the kernel doctor cannot run this code ({self.reason})."

    def to_dict(self) -> dict:
        data = asdict(self)
        for f, finding in zip(data["findings"], self.findings):
            f["mistake"] = mistake_of(finding)
        for k, kernel in zip(data["kernels"], self.kernels):
            k["headline"] = kernel.headline()
            for site, s in zip(k["sites"], kernel.sites):
                site["efficiency"], site["degree"] = s.efficiency, s.degree
        return data

    @classmethod
    def from_dict(cls, data: dict) -> "DoctorReport":
        """A report again, from `to_dict()` (reports stored by an earlier grader may lack the
        later fields)."""
        return cls(
            data["executor"],
            data.get("reason", ""),
            tuple(Finding.from_dict(f) for f in data.get("findings", ())),
            tuple(KernelReport.from_dict(k) for k in data.get("kernels", ())),
            data.get("seconds", 0.0),
            tuple((tuple(g), tuple(b)) for g, b in data.get("launches", ())),
            tuple((k, op, line, text, tuple(args)) for k, op, line, text, args in data.get("shuffles", ())),
        )

    def __str__(self) -> str:
        return VIEWS["doctor_text"](self)

    def _repr_html_(self) -> str:
        return VIEWS["doctor_html"](self)
