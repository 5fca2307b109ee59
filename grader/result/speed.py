"""The speed section of a result: on a GPU, what the timed rounds measured; elsewhere, why
nothing was. grader/gpu/speed.py `evaluate` builds it; the JSON form is `asdict`'s."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from grader.result.stored import known


@dataclass(frozen=True)
class MedianRatio:
    """The median of paired time ratios with its quartiles (grader/gpu/statistics.py `Ratio`)."""

    median: float
    low: float
    """25th percentile."""
    high: float
    """75th percentile."""
    count: int = 1
    """How many pairs."""
    spread: float = 0.0
    """Relative interquartile width: 0.02 means the middle half lies within 2%."""


@dataclass(frozen=True)
class Throughput:
    unit: str
    """"GB/s" (a memory-bound kernel) or "TFLOP/s"."""
    achieved: float
    fraction_of_ceiling: float | None = None
    """Of this device's measured ceiling; None when it has none."""


@dataclass(frozen=True)
class Ceilings:
    """This device's measured limits (grader/gpu/ceilings.py)."""

    copy_bandwidth_GBps: float = 0.0
    fp32_TFLOPs: float = 0.0
    read_bandwidth_GBps: float = 0.0
    """The ceiling of a read-bound exercise (`Benchmark.bound` "read")."""


@dataclass(frozen=True)
class SpeedDetails:
    """What the timed rounds measured, and what it earns. Every field has a default: a result
    stored by an earlier grader may lack some."""

    device: str | None = None
    dims: dict = field(default_factory=dict)
    """The benchmark's sizes."""
    bound: str = "memory"
    """"memory", "read" or "compute": what limits the exercise, and which ceiling it is held to."""
    yours_ms: float = 0.0
    baseline_ms: float = 0.0
    target_ms: float = 0.0
    speedup_vs_baseline: MedianRatio | None = None
    fraction_of_target: MedianRatio | None = None
    throughput: Throughput | None = None
    ceilings: Ceilings = field(default_factory=Ceilings)
    floor_ms: float = 0.0
    """The least time the work can take on this device."""
    below_floor: bool = False
    """Faster than physically possible: the timing is rejected."""
    hidden_work: bool = False
    """Work ran outside the timed region: no speed points."""
    faster_later: bool = False
    """Yours ran over 5% faster after the rounds its checked launch is drawn from: counted at
    most 5% faster than those (grader/gpu/speed.py `counted_no_faster_than_checkable`)."""
    faster_than_target_warning: bool = False
    required_speedup: float | None = None
    meets_requirement: bool = False
    tier: str | None = None
    points: float = 0
    max_points: float = 0
    rounds: int = 0
    stop_reason: str = ""
    phase_seconds: dict = field(default_factory=dict)
    """Phase of the timing -> seconds it took."""
    method: str = ""
    """How it was measured, in words."""
    summary: str = ""
    """The section's one line: time, speedup, throughput, tier."""

    @property
    def trusted(self) -> bool:
        """Can the figures be believed: not below the roofline floor, no work left untimed?"""
        return not (self.below_floor or self.hidden_work)

    @classmethod
    def from_dict(cls, data: dict) -> "SpeedDetails":
        fields = known(cls, data)
        for name in ("speedup_vs_baseline", "fraction_of_target"):
            if fields.get(name) is not None:
                fields[name] = MedianRatio(**known(MedianRatio, fields[name]))
        if fields.get("throughput") is not None:
            fields["throughput"] = Throughput(**known(Throughput, fields["throughput"]))
        fields["ceilings"] = Ceilings(**known(Ceilings, fields.get("ceilings") or {}))
        return cls(**fields)


@dataclass(frozen=True)
class Speed:
    """The speed section. On the simulator it only says why nothing was measured."""

    measured: bool
    reason: str = ""
    """Why nothing was measured."""
    details: SpeedDetails | None = None
    """What was measured: set exactly when `measured`."""

    def to_dict(self) -> dict:
        return {
            "measured": self.measured,
            "reason": self.reason,
            "details": asdict(self.details) if self.details else {},
        }

    @classmethod
    def from_dict(cls, data: dict | None) -> "Speed":
        data = data or {}
        measured = bool(data.get("measured"))
        details = SpeedDetails.from_dict(data.get("details") or {}) if measured else None
        return cls(measured, data.get("reason", ""), details)
