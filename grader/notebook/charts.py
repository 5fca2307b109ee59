"""Pictures of measurements and progress: the roofline and the ladder, without widgets.

The roofline uses only figures this GPU measured (grader/gpu/ceilings.py) and times the grader
measured; with none (the simulator) it draws the shape alone and says so, never a number.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import NullFormatter, NullLocator

from grader.learner.progress import advice

NO_GPU_FIGURES = (
    "No GPU figures available: on Numba's CUDA simulator nothing is timed, so this is only "
    "the shape of a roofline, with no numbers. On a GPU, pass the measured ceilings and your "
    "measured kernels to see where they sit."
)
STATE_COLOURS = {"passed": "#1a7f37", "attempted": "#9a6700", "not started": "#afb8c1"}
STATE_MARKS = {"passed": "✓", "attempted": "…", "not started": ""}


# ---- 4. roofline ------------------------------------------------------------------------


def usable_ceilings(ceilings: dict | None) -> bool:
    """Both measured ceilings present and positive: only then are roofs drawn with numbers."""
    return bool(ceilings) and all((ceilings.get(key) or 0) > 0 for key in ("copy_bandwidth", "fp32_flops"))


def intensity(point: dict) -> float:
    """Arithmetic intensity: FLOPs per byte moved through device memory."""
    return point["flops"] / point["bytes"]


def gflops(point: dict) -> float:
    return point["flops"] / point["seconds"] / 1e9


def roof_gflops(at_intensity: float, ceilings: dict) -> float:
    """The best any kernel of this intensity can do here: min(bandwidth × intensity, peak)."""
    return min(ceilings["copy_bandwidth"] * at_intensity, ceilings["fp32_flops"]) / 1e9


def ridge(ceilings: dict) -> float:
    """The intensity where the two roofs meet: below it memory is the limit."""
    return ceilings["fp32_flops"] / ceilings["copy_bandwidth"]


def placeable(point: dict) -> bool:
    """A log-log chart can place only points that did floating-point work."""
    return point.get("flops", 0) > 0 and point.get("bytes", 0) > 0 and point.get("seconds", 0) > 0


@dataclass(frozen=True)
class Roofline:
    """Measured kernels as points under this GPU's two measured roofs."""

    points: tuple
    """Dicts {"label", "flops", "bytes", "seconds"}."""
    ceilings: dict | None
    """{"copy_bandwidth": bytes/s, "fp32_flops": FLOP/s} from grader.gpu.ceilings, or None."""

    def __post_init__(self):
        for point in self.points:
            missing = {"label", "flops", "bytes", "seconds"} - set(point)
            if missing:
                raise ValueError(f"a roofline point needs {sorted(missing)}: {point!r}")

    @property
    def measured(self) -> bool:
        return usable_ceilings(self.ceilings)


def draw_roofline(roofline: Roofline) -> Figure:
    points, ceilings = roofline.points, roofline.ceilings
    fig = Figure(figsize=(9, 5.6))
    ax = fig.add_axes((0.11, 0.2, 0.85, 0.68))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP per byte moved)")
    ax.set_ylabel("performance (GFLOP/s)")
    if usable_ceilings(ceilings):
        _measured_roofline(fig, ax, points, ceilings)
    else:
        _roofline_shape(fig, ax)
    return fig


def _measured_roofline(fig, ax, points, ceilings):
    on_chart = [p for p in points if placeable(p)]
    xs = [intensity(p) for p in on_chart] + [ridge(ceilings)]
    # At least two decades of slope left of the ridge, so the memory roof can be read
    x = np.geomspace(min(xs + [ridge(ceilings) / 100]) / 2, max(xs) * 8, 200)
    roof = [roof_gflops(v, ceilings) for v in x]
    ax.plot(x, roof, color="#333333", linewidth=2.5)
    ax.fill_between(x, roof, min(roof) / 10, color="#eeeeee")
    ax.axvline(ridge(ceilings), color="#888888", linestyle=":")
    ax.set_xlim(x[0], x[-1])
    ax.set_ylim(min(roof + [gflops(p) for p in on_chart]) / 3, max(roof) * 3)
    bandwidth, peak = ceilings["copy_bandwidth"] / 1e9, ceilings["fp32_flops"] / 1e9
    ax.text(x[-1] / 1.5, peak * 1.25, f"compute roof: {peak:,.0f} GFLOP/s", ha="right", fontsize=10)
    _slope_label(ax, x[6], roof[6] * 1.4, f"memory roof: {bandwidth:,.0f} GB/s")
    ax.text(
        ridge(ceilings) * 1.1,
        ax.get_ylim()[0] * 1.3,
        f"ridge: {ridge(ceilings):.1f} FLOP/byte",
        fontsize=8,
        color="#555555",
    )
    for point in on_chart:
        _draw_point(ax, point, ceilings)
    device = ceilings.get("name") or "this GPU"
    fig.suptitle(
        f"Roofline of {device}: no kernel gets above the roofs\n"
        "Roofs: this GPU's measured ceilings (1 GiB device copy, fp32 FMA chains), "
        "not datasheet numbers",
        fontsize=11,
        x=0.02,
        ha="left",
    )
    skipped = [p for p in points if not placeable(p) and p.get("seconds", 0) > 0]
    if skipped:
        fig.text(
            0.02,
            0.02,
            "Not on the chart (no FLOPs counted, memory-bound): "
            + "; ".join(
                f"{p['label']} {bandwidth_share(p, ceilings):.0%} of the copy bandwidth "
                f"({p['bytes'] / p['seconds'] / 1e9:,.0f} GB/s)"
                for p in skipped
            ),
            fontsize=9,
            wrap=True,
        )


def describe_roofline(model: Roofline) -> str:
    if not model.measured:
        return NO_GPU_FIGURES
    c = model.ceilings
    lines = [
        f"Roofline: memory roof {c['copy_bandwidth'] / 1e9:,.0f} GB/s, compute roof "
        f"{c['fp32_flops'] / 1e9:,.0f} GFLOP/s, ridge {ridge(c):.1f} FLOP/byte"
    ]
    for p in model.points:
        if placeable(p):
            x, y = intensity(p), gflops(p)
            lines.append(
                f"  {p['label']}: {x:.3g} FLOP/byte, {y:,.0f} GFLOP/s ({y / roof_gflops(x, c):.0%} of the roof)"
            )
        elif p["seconds"] > 0:
            lines.append(f"  {p['label']}: no FLOPs counted; {bandwidth_share(p, c):.0%} of the copy bandwidth")
    return "\n".join(lines)


def bandwidth_share(point: dict, ceilings: dict) -> float:
    return point["bytes"] / point["seconds"] / ceilings["copy_bandwidth"]


def _draw_point(ax, point, ceilings):
    x, y = intensity(point), gflops(point)
    ax.plot([x], [y], "o", color="#D55E00", markersize=8)
    share = y / roof_gflops(x, ceilings)
    right_half = math.log(x / ax.get_xlim()[0]) > 0.6 * math.log(ax.get_xlim()[1] / ax.get_xlim()[0])
    ax.annotate(
        f"{point['label']}\n{y:,.0f} GFLOP/s = {share:.0%} of the roof",
        (x, y),
        xytext=(-8 if right_half else 8, -4),
        textcoords="offset points",
        fontsize=9,
        va="top",
        ha="right" if right_half else "left",
    )


def _slope_label(ax, x, y, text):
    """Write along the 45° memory roof, whatever the axes' aspect."""
    (x0, y0), (x1, y1) = ax.transData.transform([(x, y), (x * 10, y * 10)])
    angle = math.degrees(math.atan2(y1 - y0, x1 - x0))
    ax.text(x, y, text, rotation=angle, rotation_mode="anchor", fontsize=9)


def _roofline_shape(fig, ax):
    x = np.geomspace(1 / 64, 64, 200)
    ax.plot(x, np.minimum(x, 1.0), color="#333333", linewidth=2.5)
    ax.axvline(1.0, color="#888888", linestyle=":")
    ax.set_xlim(x[0], x[-1])
    ax.set_ylim(1 / 128, 4)
    for axis in (ax.xaxis, ax.yaxis):  # no tick values: there are no measured numbers
        axis.set_major_locator(NullLocator())
        axis.set_minor_locator(NullLocator())
        axis.set_major_formatter(NullFormatter())
    ax.set_ylabel("performance (FLOP/s)")
    _slope_label(ax, 1 / 40, 1 / 40 * 1.5, "memory roof: bandwidth × intensity")
    ax.text(8, 1.2, "compute roof: peak FLOP/s", ha="center", fontsize=9)
    ax.text(1.1, 1 / 100, "ridge point", fontsize=9, color="#555555")
    ax.text(1 / 8, 1 / 60, "← memory-bound:\nmore bytes per second helps", ha="center", fontsize=9)
    ax.text(8, 1 / 60, "compute-bound →\nmore FLOPs per second helps", ha="center", fontsize=9)
    fig.suptitle("The shape of a roofline (no GPU figures)", fontsize=12, x=0.02, ha="left")
    fig.text(
        0.02,
        0.02,
        NO_GPU_FIGURES,
        fontsize=10,
        wrap=True,
        bbox={"facecolor": "#fff8c5", "edgecolor": "#d4a72c", "boxstyle": "round"},
    )


# ---- 5. the ladder ----------------------------------------------------------------------


@dataclass(frozen=True)
class Rung:
    """One exercise on the learner's ladder."""

    stage: int
    id: str
    state: str
    """"passed", "attempted" or "not started"."""
    tier: str | None = None
    """The best speed tier reached on a GPU, when known."""


def next_rung(rungs: list[Rung]) -> Rung | None:
    """The first exercise up the ladder that does not pass yet."""
    return next((r for r in rungs if r.state != "passed"), None)


def ladder_advice(rungs: list[Rung]) -> str:
    """What to do next, in one sentence, from the rungs a picture shows."""
    return advice({rung.id: rung.state for rung in rungs})


def draw_ladder(rungs: list[Rung]) -> Figure:
    height = 0.42 * len(rungs) + 1.6
    fig = Figure(figsize=(8, height))
    ax = fig.add_axes((0.02, 1.0 / height, 0.96, 1 - 1.6 / height))
    ax.set_xlim(0, 10)
    ax.set_ylim(len(rungs) - 0.5, -0.5)
    ax.axis("off")
    upcoming = next_rung(rungs)
    for row, rung in enumerate(rungs):
        if rung == upcoming:
            ax.axhspan(row - 0.45, row + 0.45, color="#fff8c5")
            ax.text(9.9, row, "← next", ha="right", va="center", fontsize=10, fontweight="bold")
        colour = STATE_COLOURS[rung.state]
        ax.plot([0.4], [row], "o", markersize=16, color=colour)
        ax.text(
            0.4, row, STATE_MARKS[rung.state], ha="center", va="center", color="white", fontsize=11, fontweight="bold"
        )
        ax.text(0.9, row, f"{rung.stage:>2}", va="center", fontsize=10, color="#555555")
        ax.text(1.5, row, rung.id, va="center", fontsize=11, family="monospace")
        ax.text(
            5.0, row, rung.state, va="center", fontsize=10, color="#57606a" if rung.state == "not started" else colour
        )
        if rung.tier:
            ax.text(6.7, row, f"speed: {rung.tier}", va="center", fontsize=10)
    passed = sum(r.state == "passed" for r in rungs)
    fig.suptitle(f"Your ladder: {passed} of {len(rungs)} passed", fontsize=12, x=0.02, ha="left")
    fig.text(0.02, 0.2 / height, ladder_advice(rungs), fontsize=9, wrap=True)
    return fig


def describe_ladder(rungs) -> str:
    lines = [f"Your ladder: {sum(r.state == 'passed' for r in rungs)} of {len(rungs)} passed"]
    for r in rungs:
        tier = f"  speed: {r.tier}" if r.tier else ""
        lines.append(f"  {STATE_MARKS[r.state] or ' '} {r.stage:>2} {r.id:<14} {r.state}{tier}")
    return "\n".join(lines + [ladder_advice(list(rungs))])
