"""The block scheduler for kernels that call warp collectives (shuffles, votes, `syncwarp`...).

Every thread is a generator (grader/doctor/transform.py) that yields at a block barrier or at
a warp collective (a `WarpCall`). The scheduler steps the runnable threads to their next yield,
then lets lanes meet: the lanes of one warp waiting at one site with one mask meet once every
lane that mask names has arrived or left the kernel (lanes past the end of a partial warp count
as gone), and each gets its result (grader/doctor/warp_calls.py). Released lanes run on; when
no meeting can happen, either every thread waits at `cuda.syncthreads()` (the block barrier,
as in grader/doctor/kernel.py) or some lanes wait for lanes that will never come (a divergent
collective: reported, and the meeting held with the lanes present).

Memory ordering. The block's epoch (grader/doctor/memory.py) still runs from barrier to
barrier, but every stepping round stamps its accesses with a new sub-epoch, so an access can
tell whether a `syncwarp` of its warp came between it and an earlier one: such pairs, and a
thread meeting its own earlier access, are ordered, and dropped before they reach the findings.
Shuffles and votes exchange registers and order no memory.
"""

from __future__ import annotations

from grader.doctor import warp_findings
from grader.doctor.efficiency import swap
from grader.doctor.fakecuda import FAKE_CUDA
from grader.doctor.memory import CTX, EPOCH_SHIFT, MANY
from grader.doctor.runtime import BLOCK
from grader.doctor.sites import SITES
from grader.doctor.warp_calls import SHUFFLES, WARP, WarpCall, outside_lanes, results


class WarpOrder:
    """The `syncwarp`s since the block's last barrier: which later accesses they order."""

    def __init__(self, forward):
        self.forward = forward
        self.syncs: dict = {}
        """warp -> [(first sub-epoch after the syncwarp, bits of the lanes that met)]."""

    def conflict(self, kind, view, f, other, other_site, site, index):
        ctx = CTX
        if other >= ctx.bfloor:  # both accesses in this block
            me, them = ctx.lin, (other >> 1) & MANY
            if me == them:
                return  # one thread, two sub-epochs: program order
            if me // WARP == them // WARP:
                e_them, e_me = other >> EPOCH_SHIFT, ctx.me >> EPOCH_SHIFT
                both = 1 << me % WARP | 1 << them % WARP
                for e, lanes in self.syncs.get(me // WARP, ()):
                    if e_them < e <= e_me and lanes & both == both:
                        return
        self.forward(kind, view, f, other, other_site, site, index)


class Lanes:
    """One block's threads as the warp scheduler holds them: each one's generator, what it is
    sent next, the call it waits at, whether it has returned; those that returned since the
    block's last barrier."""

    __slots__ = ("threads", "gens", "sends", "waits", "gone", "left")

    def __init__(self, func, args, threads):
        n = len(threads)
        self.threads = threads
        self.gens = [func(*args) for _ in threads]
        self.sends: list = [None] * n
        self.waits: list = [None] * n
        self.gone = [False] * n
        self.left: list = []


def run_warps(func, args, threads, s, watch, barrier) -> None:
    """Run one block of a kernel with warp collectives; `barrier` is the block scheduler's
    (grader/doctor/kernel.py), for `cuda.syncthreads()` and its reductions."""
    n = len(threads)
    lanes = Lanes(func, args, threads)
    waits, gone, sends = lanes.waits, lanes.gone, lanes.sends
    order = WarpOrder(CTX.on_conflict)
    CTX.on_conflict = order.conflict
    segment, runnable = s.epoch, list(range(n))
    try:
        while True:
            _step(lanes, runnable, s, segment, watch)
            s.epoch += 1
            runnable = _meet(waits, gone, sends, n, s, order, force=False)
            if runnable:
                continue
            waiting = [lin for lin in range(n) if waits[lin] is not None]
            if not waiting:
                return
            if any(waits[lin].__class__ is WarpCall for lin in waiting):
                runnable = _meet(waits, gone, sends, n, s, order, force=True)
                continue
            barrier([(lin, waits[lin]) for lin in waiting], lanes.left, sends, s)
            for lin in waiting:
                waits[lin] = None
            lanes.left, order.syncs, segment, runnable = [], {}, s.epoch, waiting
    finally:
        CTX.on_conflict = order.forward


def _step(lanes: Lanes, runnable, s, segment, watch) -> None:
    """Each runnable thread, in linear order, to its next yield (or its end)."""
    cuda, ctx = FAKE_CUDA, CTX
    gens, sends, waits, gone, left, threads = (
        lanes.gens,
        lanes.sends,
        lanes.waits,
        lanes.gone,
        lanes.left,
        lanes.threads,
    )
    ctx.set_epoch(segment)  # conflicts are looked for since the last block barrier ...
    stamp = s.epoch << EPOCH_SHIFT  # ... and stamped with this round's sub-epoch
    logging = watch is not None
    if logging:
        _profile(True, watch)
    for lin in runnable:
        cuda.threadIdx = threads[lin]
        ctx.lin = lin
        ctx.me = me = stamp | lin << 1
        ctx.meh = me >> 1
        try:
            waits[lin] = gens[lin].send(sends[lin])
        except StopIteration:
            waits[lin] = None
            gone[lin] = True
            left.append(lin)
    if logging:
        _profile(False, watch)


def _profile(on: bool, views) -> None:
    BLOCK.profiling = on
    swap(views, on)


def _meet(waits, gone, sends, n, s, order, force: bool) -> list:
    """Hold every meeting whose named lanes are all there (or, with `force`, every meeting,
    reporting the lanes that never came); returns the threads released, in order."""
    groups: dict = {}
    for lin in range(n):
        call = waits[lin]
        if call.__class__ is WarpCall:
            groups.setdefault((lin // WARP, call.site, call.mask), []).append(lin)
    released = []
    for (warp, site, mask), lins in groups.items():
        base = warp * WARP
        missing = ()
        if len(lins) < WARP and mask is not None:  # a whole warp present misses nobody
            missing = [
                base + k
                for k in range(min(WARP, n - base))
                if mask >> k & 1 and not gone[base + k] and base + k not in lins
            ]
        if missing and not force:
            continue
        if missing:
            _report_missing(waits, lins[0], missing[0], s)
        _hold(warp, lins, waits, gone, sends, n, s, order)
        released += lins
    return sorted(released)


def _hold(warp, lins, waits, gone, sends, n, s, order) -> None:
    """The lanes `lins` of `warp` meet: results, findings, and the memory order of syncwarp."""
    findings = s.findings
    base = warp * WARP
    calls = {lin - base: waits[lin] for lin in lins}
    first = waits[lins[0]]
    mask = first.mask
    for lin in lins:
        if mask is not None and not mask >> (lin - base) & 1:
            warp_findings.own_lane(findings, waits[lin], lin)
        if first.arg is not None and outside_lanes(first.op, waits[lin].arg):
            warp_findings.lane_range(findings, waits[lin], lin)
    taking_part = {k for k in calls if mask is None or mask >> k & 1}
    if warp == 0 and 0 in calls and first.arg is not None and first.op in SHUFFLES:
        findings.shuffled(first.site, first.op, calls[0].arg)
    values, bad = results(first.op, calls, taking_part)
    for lane, source in bad:
        why, reason = _absence(base + source, mask, source, gone, n)
        if why:
            warp_findings.inactive_source(findings, calls[lane], base + lane, source, why, reason)
    if first.op == "syncwarp":
        order.syncs.setdefault(warp, []).append((s.epoch, sum(1 << k for k in taking_part)))
    for lane, value in values.items():
        sends[base + lane] = value
        waits[base + lane] = None


def _absence(lin, mask, lane, gone, n) -> tuple:
    """Why lane `lane` (thread `lin`) did not take part: ("gone" | "absent" | "unnamed" | "",
    the words for it). "" when it is alive but elsewhere (reported as a divergence)."""
    if lin >= n:
        return "absent", (
            f"does not exist: the block has {warp_findings.plural(n, 'thread')}, so its last warp "
            f"has {warp_findings.plural(n % WARP, 'lane')}"
        )
    if gone[lin]:
        return "gone", "had already left the kernel"
    if mask is not None and not mask >> lane & 1:
        return "unnamed", f"is not named in the mask {mask:#010x}"
    return "", ""


def _report_missing(waits, lin, missing, s) -> None:
    call, there = waits[lin], waits[missing]
    if there.__class__ is WarpCall:
        other = SITES[there.site]
        if there.site == call.site:
            where, line = f"called it with mask {there.mask:#010x}", other.line
        else:
            where, line = f"waited at `{other.text}` on line {other.line}", other.line
    else:
        other = SITES[there if there.__class__ is int else there[0]]
        where, line = f"waited at `{other.text}` on line {other.line}", other.line
    warp_findings.divergence(s.findings, call, lin, missing, where, line)
