"""Memory efficiency: how each warp access would move through a GPU's memory system.

A warp is 32 consecutive linear thread ids of a block; the k-th time lanes of one warp run an
access site is one warp access (threads of a warp run in lockstep). For a global site we count
the 32-byte sectors the warp's addresses fall in, against the fewest that could hold the
elements it touched (coalescing efficiency = fewest / touched). For a shared site we count the
bank-conflict degree: shared memory has 32 banks of 4-byte words, and lanes reading different
words of one bank queue up (lanes reading the same word share it). Atomics on one address
serialise: we count the largest number of lanes hitting one element.

Only the first block of a launch is profiled, and of each access site only the first warp
that runs it (warp 0 for most; the warps that read what warp 0 wrote, in a block scan, for
the sites only they run), its first INSTANCES warp accesses, and only until a kernel has ENOUGH
of them in this process: enough to see its access pattern (the warps of the first block run
the same code as the others), cheap enough to leave on. The arrays switch to logging
subclasses of their classes (`profiled`) while that block's threads run. Warp accesses with a
single active lane say nothing about a pattern and are not counted.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from grader.doctor.findings import forget_growth
from grader.doctor.memory import CTX, View

SECTOR = 32
BANKS = 32
WORD = 4
WARP = 32
INSTANCES = 4
"""Warp accesses profiled per site and launch."""
ENOUGH = 48
"""Warp accesses (with two or more active lanes) after which a kernel is no longer profiled in
this process: the grader's later cases, same code, same pattern, run at full speed."""
_SAMPLED: dict = {}
LOW_EFFICIENCY = 0.5
"""Below this coalescing efficiency a global site gets a suggestion."""


@dataclass
class SiteStats:
    site: int
    space: str
    """"global" or "shared"."""
    array: str
    ndim: int
    shape: tuple
    itemsize: int
    requests: int = 0
    sectors: int = 0
    ideal: int = 0
    ideal_records: int = 0
    """Like `ideal`, counting whole records of a small last axis (an RGB pixel's 3 bytes):
    the fewest when the sites reading the other fields share the sectors."""
    degree_sum: int = 0
    degree_max: int = 0
    contention_max: int = 0
    patterns: Counter = field(default_factory=Counter)


class Recorder:
    """Where the logging arrays write: per warp access, keyed (site, warp, k) for the k-th
    execution of the site by a lane, the lanes' (thread, view, index, kind)."""

    log: dict = {}
    counts: dict = {}


RECORDER = Recorder()
_PROFILED: dict = {}
_PLAIN: dict = {}


_LOGGING = """
def method(self, {params}):
    out = base(self, {params})
    lin = CTX.lin
    key = (site, lin)
    counts = RECORDER.counts
    seen = counts.get(key, 0)
    if seen < INSTANCES and not isinstance(out, View):
        counts[key] = seen + 1
        access = (site, lin >> 5, seen)
        lanes = RECORDER.log.get(access)
        if lanes is None:
            RECORDER.log[access] = [(lin, self, {index}, {kind})]
        else:
            lanes.append((lin, self, {index}, {kind}))
    return out
"""
_SIGNATURES = {  # method -> (its parameters, the index among them)
    "_ld1": ("i, site", "(i,)"),
    "_ld2": ("i, j, site", "(i, j)"),
    "_ld3": ("i, j, k, site", "(i, j, k)"),
    "_st1": ("i, value, site", "(i,)"),
    "_st2": ("i, j, value, site", "(i, j)"),
    "_st3": ("i, j, k, value, site", "(i, j, k)"),
    "_ldn": ("idx, site", "idx"),
    "_stn": ("idx, value, site", "idx"),
    "_atomic": ("op, idx, value, site", "idx"),
}
_KINDS = {"_ld": 0, "_st": 1, "_at": 3}


def _logging(base, name: str):
    """`base` (an array method) that also logs the access (generated per signature: one
    call, no argument packing)."""
    params, index = _SIGNATURES[name]
    scope = {"base": base, "CTX": CTX, "INSTANCES": INSTANCES, "RECORDER": RECORDER, "View": View}
    source = _LOGGING.format(params=params, index=index, kind=_KINDS[name[:3]])
    exec(compile(source, f"<profiled {name}>", "exec"), scope)  # noqa: S102
    method = scope["method"]
    method.__name__ = base.__name__
    return method


def profiled(cls: type) -> type:
    """A subclass of an array class whose accesses also go to RECORDER."""
    if cls in _PLAIN:
        return cls
    sub = _PROFILED.get(cls)
    if sub is None:
        methods = {name: _logging(getattr(cls, name), name) for name in _SIGNATURES}
        sub = type(f"Profiled{cls.__name__}", (cls,), {"__slots__": (), **methods})
        _PROFILED[cls], _PLAIN[sub] = sub, cls
    return sub


def swap(views, on: bool) -> None:
    for view in views:
        cls = view.__class__
        view.__class__ = profiled(cls) if on else _PLAIN.get(cls, cls)


class Efficiency:
    """Accumulates site statistics over the profiled warps of a run."""

    def __init__(self):
        self.sites: dict[int, SiteStats] = {}
        self.kernel_of: dict[int, str] = {}
        self.kernels: list[str] = []
        self.launches: dict = {}

    def start_launch(self, kernel: str, block: tuple, key) -> "LaunchProfile | None":
        """A profiler for this launch, or None when `key` (the kernel's function) has been
        profiled enough in this process."""
        if _SAMPLED.get(key, 0) >= ENOUGH:
            return None
        if kernel not in self.kernels:
            self.kernels.append(kernel)
        return LaunchProfile(self, kernel, block, key)


def forget() -> None:
    """A new check: profile every kernel again (tests that look at the same kernel's report
    twice), and measure one-block kernels' growth afresh (grader/doctor/findings.py)."""
    _SAMPLED.clear()
    forget_growth()


class LaunchProfile:
    def __init__(self, owner: Efficiency, kernel: str, block: tuple, key):
        self.owner, self.kernel, self.block, self.key = owner, kernel, block, key
        self.done = False

    def wants_block(self) -> bool:
        """The first block only."""
        if self.done:
            return False
        self.done = True
        RECORDER.log, RECORDER.counts = {}, {}
        return True

    def add_block(self, log: dict) -> None:
        first_warp: dict = {}
        for site, warp, _ in log:
            first_warp[site] = min(warp, first_warp.get(site, warp))
        counted = 0
        for (site, warp, _), accesses in log.items():
            if warp == first_warp[site]:
                counted += self._warp_access(site, accesses)
        _SAMPLED[self.key] = _SAMPLED.get(self.key, 0) + counted

    def _warp_access(self, site, accesses) -> int:
        """Add one warp access to its site's statistics; 1 if it counted, else 0."""
        view = accesses[0][1]
        if view.mem.space == "local" or len(accesses) < 2:
            return 0
        space = "shared" if view.mem.space == "shared" else "global"
        lanes = {}
        one_view = True
        for lin, v, idx, kind in accesses:
            f = _offset(v, idx)
            if f is not None:
                lanes[lin] = (f, v.mem.addr + f * v.mem.itemsize, idx)
                one_view = one_view and v is view
        if len(lanes) < 2:
            return 0
        stats = self.owner.sites.get(site)
        if stats is None:
            stats = SiteStats(site, space, view.name, view.ndim, view.shape, view.mem.itemsize)
            self.owner.sites[site] = stats
            self.owner.kernel_of[site] = self.kernel
        stats.requests += 1
        atomic = accesses[0][3] == 3
        costs = _costs(lanes, space, stats.itemsize, self.block[0], view, atomic, one_view)
        if space == "global":
            stats.sectors += costs[0]
            stats.ideal += costs[1]
            stats.ideal_records += costs[2]
        else:
            stats.degree_sum += costs[3]
            stats.degree_max = max(stats.degree_max, costs[3])
        if atomic:
            stats.contention_max = max(stats.contention_max, costs[4])
        self._pattern(stats, lanes)
        return 1

    def _pattern(self, stats: SiteStats, lanes: dict) -> None:
        """How the element moves from one lane to the next (threadIdx.x + 1, same row): the
        first pair's index delta and element stride when every neighbouring pair has that
        stride, else "irregular"."""
        bx = self.block[0]
        first = stride = None
        for lin, (f, _, idx) in lanes.items():
            nxt = lanes.get(lin + 1)
            if nxt is None or (lin + 1) % bx == 0:
                continue
            if stride is None:
                first, stride = (idx, nxt[2]), nxt[0] - f
            elif nxt[0] - f != stride:
                stats.patterns[("irregular", None)] += 1
                return
        if stride is None:
            stats.patterns[("single", 0)] += 1
            return
        a, b = _ints(first[0]), _ints(first[1])
        delta = tuple(y - x for x, y in zip(a, b)) if a and b and len(a) == len(b) else ("irregular",)
        stats.patterns[(delta, stride)] += 1


def _offset(view, idx):
    """The element offset of an index the access already checked (it ran without error)."""
    if idx.__class__ is not tuple:
        idx = (idx,)
    try:
        n = len(idx)
        if n == view.ndim:
            if n == 1:
                return view.off + int(idx[0]) * view.s0
            if n == 2:
                return view.off + int(idx[0]) * view.s0 + int(idx[1]) * view.s1
    except (TypeError, ValueError):
        return None
    return view._flat(idx, 0, False)


_COSTS: dict = {}
"""Memo of `_costs` for warp accesses of one view: the same lanes at the same relative offsets
and alignment cost the same (most warp accesses of a site repeat one pattern)."""


def _costs(lanes, space, size, bx, view, atomic, one_view) -> tuple:
    """(sectors touched, fewest possible, fewest counting whole records, bank-conflict degree,
    most lanes on one element) of one warp access."""
    key = None
    if one_view:
        f0 = next(iter(lanes.values()))[0]
        fields = view.shape[-1] if view.ndim >= 2 and view.shape[-1] <= 4 else 1
        key = (
            space,
            size,
            bx,
            fields,
            atomic,
            f0 % (128 * fields),
            tuple(lanes),
            tuple([f - f0 for f, _, _ in lanes.values()]),
        )
        found = _COSTS.get(key)
        if found is not None:
            return found
    touched = ideal = ideal_records = degree = contention = 0
    if space == "global":
        touched, ideal, ideal_records = _sectors(lanes, size, bx, view)
    else:
        banks: dict = {}
        for _, addr, _ in lanes.values():
            word = addr // WORD
            banks.setdefault(word % BANKS, set()).add(word)
        degree = max(len(words) for words in banks.values())
    if atomic:  # lanes on one element serialise
        contention = max(Counter(f for f, _, _ in lanes.values()).values())
    found = (touched, ideal, ideal_records, degree, contention)
    if key is not None:
        if len(_COSTS) > 4096:
            _COSTS.clear()
        _COSTS[key] = found
    return found


def _span(lo: int, nbytes: int) -> int:
    """Sectors covered by `nbytes` contiguous bytes from address `lo`."""
    return (lo + nbytes - 1) // SECTOR - lo // SECTOR + 1


def _sectors(lanes: dict, size: int, bx: int, view) -> tuple[int, int, int]:
    """(sectors touched, fewest possible, fewest counting whole records) for one warp access.

    The fewest: each run of lanes with consecutive threadIdx.x (one row of the block; a warp
    of a 16-wide block is two such runs) reading consecutive elements from its lowest address
    (a broadcast needs one). Alignment is the data's, so only the access pattern counts."""
    touched = len({addr // SECTOR for _, addr, _ in lanes.values()})
    runs: dict = {}
    for lin, (f, addr, _) in lanes.items():
        runs.setdefault(lin // bx, []).append((lin, f, addr))
    fields = view.shape[-1] if view.ndim >= 2 and view.shape[-1] <= 4 else 1
    ideal = ideal_records = 0
    for run in runs.values():
        mine = len({addr // SECTOR for _, _, addr in run})
        ideal += min(mine, _fewest(run, size))
        records = {f // fields for _, f, _ in run}
        record_bytes = fields * size
        whole = {(view.mem.addr + r * record_bytes + b) // SECTOR for r in records for b in (0, record_bytes - 1)}
        ideal_records += min(mine, len(whole))
    return touched, min(ideal, touched), min(ideal_records, touched)


def _fewest(run, size) -> int:
    """Sectors the lanes of `run` would touch reading consecutive elements (lane l at the
    run's lowest address + (l - first lane) elements); a shared element (a broadcast) is read
    once."""
    first = min(lin for lin, _, _ in run)
    lo = min(addr for _, _, addr in run)
    by_lane = len({(lo + (lin - first) * size) // SECTOR for lin, _, _ in run})
    elements = len({f for _, f, _ in run})
    if elements == len(run):
        return by_lane
    return min(by_lane, _span(lo, elements * size))


def _ints(idx):
    try:
        return tuple(int(i) for i in idx) if isinstance(idx, tuple) else (int(idx),)
    except (TypeError, ValueError):
        return None
