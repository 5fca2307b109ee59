"""What the doctor's memory statistics (grader/doctor/efficiency.py `SiteStats`) say to a
learner: each access site's pattern in words (`describe`), and a finding for a kernel whose
global accesses move far more memory than they use (`slow_memory_findings`)."""

from __future__ import annotations

from grader.doctor.efficiency import BANKS, LOW_EFFICIENCY, WORD, SiteStats
from grader.doctor.findings import SEVERITY_WARNING, Finding
from grader.result.doctor import FIXES


def main_pattern(stats: SiteStats):
    return stats.patterns.most_common(1)[0][0] if stats.patterns else ("single", 0)


def interleaved(stats: SiteStats) -> bool:
    """Lanes walk the second-to-last axis of an array whose last axis holds 2-4 fields (an
    RGB pixel): each access uses one field of consecutive records."""
    delta, stride = main_pattern(stats)
    if stats.space != "global" or not isinstance(delta, tuple) or stats.ndim < 2:
        return False
    fields = stats.shape[-1]
    moved = [axis for axis, d in enumerate(delta) if d != 0]
    return 2 <= fields <= 4 and moved == [stats.ndim - 2] and delta[-2] == 1 and stride == fields


SECTOR_ELEMENTS_MAX = 8
"""The widest lane stride (in elements) whose gaps sibling sites can fill within one warp's
sectors: 8 × 4-byte elements = one 32-byte sector."""


def strided_run(stats: SiteStats) -> int:
    """The lane stride of a global access along the last axis (of a 1-D array, or within a row
    of a row-major one) whose lanes are 2..SECTOR_ELEMENTS_MAX elements apart (x[4 * q + k],
    a[row, 4 * q + k]), else 0. Several such sites touching the same array at the same stride
    (k = 0..3) together use every element of the sectors they fetch."""
    delta, stride = main_pattern(stats)
    if stats.space != "global" or not isinstance(delta, tuple):
        return 0
    if [axis for axis, d in enumerate(delta) if d != 0] != [stats.ndim - 1]:
        return 0
    return abs(stride) if 2 <= abs(stride) <= SECTOR_ELEMENTS_MAX else 0


def describe(stats: SiteStats, siblings: int = 0) -> tuple[str, str]:
    """(pattern in words, fix kind from grader/result/doctor.py `FIXES` or ""). `siblings`:
    sites of the same kernel reading the same interleaved array (all fields read: their sectors
    are shared), or touching the same array along its last axis at the same small stride
    (strided_run)."""
    delta, stride = main_pattern(stats)
    name, ndim = stats.array, stats.ndim
    if delta == "single":
        return "one thread per warp (no neighbour to compare)", ""
    if delta == "irregular":
        return "irregular: neighbouring threads' elements follow no single stride (data-dependent)", ""
    if stride == 0:
        return "broadcast: the whole warp reads one element", ""
    moved = [axis for axis, d in enumerate(delta) if d != 0]
    efficiency = stats.ideal / stats.sectors if stats.sectors else 1.0
    if stats.space == "shared":
        return _shared_pattern(stats, stride, moved)
    if stride == 1:
        return "contiguous: neighbouring threads touch neighbouring elements", ""
    if interleaved(stats) and siblings >= stats.shape[-1]:
        return (
            f"interleaved: each thread reads one of the {stats.shape[-1]} values of its "
            f"record; the {siblings} sites reading `{name}` share these sectors, so it "
            "counts as one contiguous read",
            "",
        )
    if strided_run(stats) and siblings >= abs(stride):
        return (
            f"{abs(stride)} elements apart, one of {siblings} sites touching `{name}` at "
            "that stride: together they use every element of these sectors (each thread "
            "touches a run of neighbours; the caches serve the overlap)",
            "",
        )
    gap = abs(stride) * stats.itemsize
    if efficiency >= LOW_EFFICIENCY:
        return f"strided: neighbouring threads are {abs(stride)} elements ({gap} bytes) apart", ""
    if ndim >= 2 and moved and moved[0] < ndim - 1 and delta[-1] == 0:
        what = "the rows" if moved[0] == 0 else f"axis {moved[0]}"
        return (
            f"threadIdx.x walks {what} of row-major `{name}`: neighbouring threads are {gap} bytes apart",
            "swap_indices",
        )
    return (f"strided: neighbouring threads are {abs(stride)} elements ({gap} bytes) apart", "contiguous_threads")


def _shared_pattern(stats, stride, moved):
    degree = stats.degree_sum / stats.requests if stats.requests else 1.0
    if stats.degree_max <= 1:
        kind = "contiguous" if stride == 1 else f"{abs(stride)} elements apart, on distinct banks"
        return kind, ""
    words = stats.shape[-1] * stats.itemsize // WORD if stats.ndim >= 2 else 0
    if stats.ndim == 2 and moved == [0] and words and words % BANKS == 0:
        return (
            f"{degree:.1f}-way bank conflicts: a warp reads down a column of `{stats.array}`, "
            f"whose rows are {words} words long",
            "pad_shared",
        )
    return (
        f"{degree:.1f}-way bank conflicts (up to {stats.degree_max}): lanes {abs(stride)} elements apart share banks",
        "spread_banks",
    )


TOO_SLOW_BELOW = 0.25
"""A kernel whose global loads or stores are less coalesced than this (a warp using at most a
quarter of the bytes its memory transactions fetch), at a site with a fix, would likely be too
slow on a GPU. Calibrated on the bundled kernels (docs/DOCTOR.md, "Speed estimates"): every
solution, baseline-or-better kernel and valid alternative is 100% coalesced; the naive transpose
(the speed baseline a pass must beat by 1.2x) stores at 12.5%."""


def slow_memory_findings(kernels) -> list[Finding]:
    """A warning per kernel whose memory access pattern alone would likely make it fail the
    speed requirement on a GPU: an estimate from the doctor's coalescing count, never a time."""
    found = []
    for k in kernels:
        worst = min((v for v in (k.load_efficiency, k.store_efficiency) if v is not None), default=None)
        sites = [s for s in k.sites if s.space == "global" and s.suggestion and (s.efficiency or 1.0) < TOO_SLOW_BELOW]
        if worst is None or worst >= TOO_SLOW_BELOW or not sites:
            continue
        found.append(_slow_memory(k, sites))
    return found


def _slow_memory(k, sites: list) -> Finding:
    """One paragraph for the kernel: which arrays its threads touch far apart, that a GPU would
    likely grade it too slow, and each fix once (the kernel's `suggestion`s of those kinds, every
    site named, so the memory table need not repeat them)."""
    verbs: dict = {}
    first: dict = {}  # the first site of each array, named in the headline
    for s in sites:
        verbs.setdefault(s.array, set()).add("writes" if s.access in ("store", "atomic") else "reads")
        first.setdefault(s.array, s)
    touched = " and ".join(
        f"{verb} {_names([a for a, v in verbs.items() if verb in v])}"
        for verb in ("reads", "writes")
        if any(verb in v for v in verbs.values())
    )
    texts = ", ".join(f"`{s.text}`" for s in first.values())
    fixes = [k.suggestion(kind) for kind in dict.fromkeys(s.suggestion for s in sites)]
    worst = min(sites, key=lambda s: s.efficiency)
    return Finding(
        "slow_memory",
        SEVERITY_WARNING,
        f"Kernel `{k.kernel}` {touched} with neighbouring threads far apart, so each warp fetches many "
        "memory sectors and uses a few bytes of each: correct, but a GPU would likely grade it too slow "
        "(too_slow; an estimate from how the accesses coalesce: nothing was timed). " + " ".join(fixes),
        k.kernel,
        line=worst.line,
        source=worst.text,
        array=worst.array,
        fix=" ".join(FIXES[kind][1] for kind in dict.fromkeys(s.suggestion for s in sites)),
        headline=(
            f"a GPU would likely grade it too slow: kernel `{k.kernel}` {touched} with neighbouring "
            f"threads far apart ({texts}), so most of every memory transaction is bytes no thread asked for"
        ),
        mistake="uncoalesced",
    )


def _names(arrays: list) -> str:
    """`a`; `a` and `b`; `a`, `b` and `c`."""
    quoted = [f"`{a}`" for a in arrays]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]
