"""Speed statistics and scoring: pure functions, tested on the CPU.

The GPU side (grader/gpu/harness.py) collects paired times; everything that turns those times
into a verdict lives here: medians of pairwise ratios with their spread, when to stop
repeating, the roofline floor, throughput against measured ceilings, tiers and points.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

FLOOR_MARGIN = 0.5
"""A time under half of bytes/bandwidth (or flops/FMA peak) is rejected as impossible. Half,
because our measured ceilings come from simple kernels and sit below the hardware's peak: on
an H200 a read-only stream reached 3.76 TB/s against a 3.33 TB/s copy, and cuBLAS 51 TFLOP/s
against our FMA loop's 30.6 (docs/BENCHMARKS-LOG.md). The floor exists to catch times that are
far too fast (work hidden from the clock), not to split hairs."""
TARGET_WARNING = 1.5
"""Faster than our target kernel by more than this: suspicious, so we say so."""


@dataclass(frozen=True)
class Ratio:
    median: float
    low: float
    """25th percentile."""
    high: float
    """75th percentile."""
    count: int = 1
    """How many pairs."""

    @property
    def spread(self) -> float:
        """Relative interquartile width: 0.02 means the middle half lies within 2%."""
        return (self.high - self.low) / self.median if self.median > 0 else float("inf")

    @property
    def uncertainty(self) -> float:
        """Relative half-width of the median's ~95% interval, 1.58·IQR/√n (McGill, Tukey and
        Larsen's notch): noisy short kernels settle with more pairs, quiet ones with few."""
        return 1.58 * self.spread / np.sqrt(max(self.count, 1))


def paired_ratio(numerator: list[float], denominator: list[float]) -> Ratio:
    """Median and quartiles of numerator[i] / denominator[i] over interleaved pairs."""
    ratios = np.asarray(numerator, float) / np.asarray(denominator, float)
    low, median, high = np.percentile(ratios, [25, 50, 75])
    return Ratio(float(median), float(low), float(high), int(ratios.size))


def settled(ratios: list[Ratio], max_uncertainty: float) -> bool:
    """Is every median ratio known to within ±max_uncertainty (relative)?"""
    return all(r.uncertainty <= max_uncertainty for r in ratios)


def floor_seconds(bytes_moved: float, flops: float, ceilings: dict) -> float:
    """The least time the work can take on this device (measured ceilings)."""
    bandwidth = max(ceilings.get("copy_bandwidth") or 0.0, ceilings.get("read_bandwidth") or 0.0)
    memory = bytes_moved / bandwidth if bandwidth else 0.0
    compute = flops / ceilings["fp32_flops"] if flops and ceilings.get("fp32_flops") else 0.0
    return max(memory, compute)


def below_floor(seconds: float, floor: float) -> bool:
    return floor > 0 and seconds < FLOOR_MARGIN * floor


def throughput(bound: str, bytes_moved: float, flops: float, seconds: float, ceilings: dict) -> dict:
    """Achieved GB/s or TFLOP/s and the fraction of the measured ceiling."""
    if bound == "compute":
        value = flops / seconds
        ceiling = ceilings.get("fp32_flops")
        return {
            "unit": "TFLOP/s",
            "achieved": value / 1e12,
            "fraction_of_ceiling": value / ceiling if ceiling else None,
        }
    value = bytes_moved / seconds
    ceiling = ceilings.get("read_bandwidth" if bound == "read" else "copy_bandwidth")
    return {"unit": "GB/s", "achieved": value / 1e9, "fraction_of_ceiling": value / ceiling if ceiling else None}


def tier_reached(fraction_of_target: float, tiers) -> tuple[str | None, int]:
    """The highest tier whose fraction of the target's speed is reached, and its points."""
    best = (None, 0)
    for tier in sorted(tiers, key=lambda t: t.fraction_of_target):
        if fraction_of_target >= tier.fraction_of_target:
            best = (tier.name, tier.points)
    return best


def max_speed_points(tiers) -> int:
    return max((t.points for t in tiers), default=0)
