"""What the doctor found wrong, in a learner's words: races, missing atomics, divergent
barriers, reads of shared memory no thread wrote, reads of local memory the thread never wrote,
global elements several threads of one launch stored to.

`Findings` is the sink the memory's shadow checks and the block scheduler report to while a
launch runs; it keeps the first example of each distinct problem (kind, sites, array) and
counts the rest, so a kernel that races on every element still costs one message.
"""

from __future__ import annotations

import bisect
from array import array

import numpy as np
from dataclasses import asdict, replace

from grader.doctor.memory import CTX, EPOCH_SHIFT
from grader.doctor.race_findings import Clash, as_tuple, clash_finding, fmt, index_text
from grader.doctor.sites import SITES
from grader.doctor.unwritten_findings import unwritten_finding
from grader.result.doctor import SEVERITY_ERROR, SEVERITY_WARNING, Finding, mistake_of  # noqa: F401 - the report's types

ORDER = (
    "divergent_barrier",
    "race",
    "missing_atomic",
    "uninitialised_shared",
    "uninitialised_local",
    "uninitialised_global",
    "overwrite",
    "duplicate_write",
    "serial_work",
    "slow_memory",
)
"""Which finding becomes the case's verdict message when there are several."""
VERDICT = {
    "divergent_barrier": "race",
    "race": "race",
    "missing_atomic": "race",
    "uninitialised_shared": "race",
    "uninitialised_local": "wrong_result",
    "uninitialised_global": "wrong_result",
    "overwrite": "race",
    "duplicate_write": "race",  # a warning: it never decides a case (the output does)
    "serial_work": "too_slow",  # a warning: a GPU's speed, estimated, never measured here
    "slow_memory": "too_slow",  # likewise, from how the kernel's accesses coalesce
}


COUNT_CAP = 10**6
SERIAL_ELEMENTS = 64
"""Elements per thread of a launch of one warp or less from which its work counts as serial;
elements one thread of a bigger launch stores, likewise (with SERIAL_SHARE)."""
SERIAL_THREADS = 32
SERIAL_SHARE = 16
"""How many times a fair share of the launch's stores (stores / threads) one thread must make."""
SERIAL_GROWTH = 4
"""How much a one-block kernel's work must grow over a check's cases, its grid staying one block."""
_CHECK: dict = {}
"""Kernel -> what its launches in this check showed: {"sizes": {elements of the global arrays
given: the case that first gave them}, "one_block": every launch was one block, "share": the
smallest share of a launch's stores that its busiest thread made}."""
_CASE = [0]
"""The case running now (one Findings per case)."""


def forget_growth() -> None:
    """A new check: kernels are measured afresh."""
    _CHECK.clear()


def _touched(views, launch) -> tuple[int, int, np.ndarray, float]:
    """(global elements this launch touched, elements of the global arrays it was given
    (negative when one has rows: only 1-D data counts for the one-block rule), how many
    elements each thread stored last: one count per storing thread, the smallest share of an
    array this launch stored to that it stored: 1.0 when it stored every element of each, 0.0
    when it stored nothing)."""
    floor, touched, seen, stores, filled = CTX.lfloor, 0, set(), [], None
    arrays = [v for v in views if getattr(getattr(v, "mem", None), "space", "") == "global"]
    given = sum(int(np.prod(v.shape)) for v in arrays)
    if any(len(v.shape) > 1 for v in arrays):
        given = -given  # rows and columns: a grid sized by rows is one block at the check's sizes
    for view in views:
        mem = getattr(view, "mem", None)
        if mem is None or mem.space != "global" or id(mem) in seen:
            continue
        seen.add(id(mem))
        wr, rd = np.asarray(mem.wr), np.asarray(mem.rd)
        touched += int(np.count_nonzero((wr >= floor) | (rd >= floor)))
        stores.append(wr[wr >= floor])
        if stores[-1].size:
            share = stores[-1].size / wr.size
            filled = share if filled is None else min(filled, share)
    stamps = np.concatenate(stores) if stores else np.zeros(0, np.int64)
    block = np.searchsorted(np.asarray(launch.block_starts), stamps >> EPOCH_SHIFT, side="right")
    writer = block * 4096 + ((stamps >> 1) & 2047)
    return touched, given, np.unique(writer, return_counts=True)[1], 0.0 if filled is None else filled


def _serial_worker(
    kernel: str, threads: int, blocks: int, touched: int, given: int, writers: np.ndarray, filled: float
) -> str:
    """Who does a launch's work one element after another ("" when nobody does). Beyond a launch
    of one warp or less, decided when a case repeats a size the check met in an earlier case (a
    check's last case repeats its largest): by then a kernel whose grid or whose busy threads
    grow with the data has shown it."""
    if blocks == 1 and threads <= SERIAL_THREADS:
        if touched < SERIAL_ELEMENTS * threads:
            return ""
        return "one thread does all the work" if threads == 1 else "one warp does all the work"
    seen = _CHECK.setdefault(kernel, {"sizes": {}, "one_block": True, "share": 1.0})
    stores, most = int(writers.sum()), int(writers.max(initial=0))
    seen["one_block"] = seen["one_block"] and blocks == 1
    if stores:
        seen["share"] = min(seen["share"], most / stores)
    first_case = seen["sizes"].setdefault(given, _CASE[0])
    if first_case == _CASE[0] or abs(given) < max(map(abs, seen["sizes"])):
        return ""
    if most >= SERIAL_ELEMENTS and seen["share"] >= 0.5 and most * threads * blocks >= SERIAL_SHARE * stores:
        return "one thread stores most of the elements while the others store few"
    # One block doing all the work stores all of its outputs; a grid left one block short (the
    # starter's `blocks = 1`) leaves most of them unwritten: the verdict says so, and no speed
    # estimate is worth reading beside it.
    grown = given > 0 and given >= max(SERIAL_GROWTH * min(seen["sizes"]), 2 * threads)
    if seen["one_block"] and grown and filled >= 0.5:
        return "one block does all the work (its grid stays one block however large the data)"
    return ""


SHUFFLES_KEPT = 5
"""Offsets kept per shuffle site: a warp reduction's or scan's five steps."""


class Launch:
    """Geometry of the launch being run: to name threads and blocks as a learner would."""

    def __init__(self, kernel: str, grid: tuple, block: tuple):
        self.kernel, self.grid, self.block = kernel, grid, block
        sizes = [max(g, b) for g, b in zip(grid, block)]
        self.rank = max([i + 1 for i, s in enumerate(sizes) if s > 1] + [1])
        self.block_starts = array("q")
        """The first epoch of each block run so far (blocks run in order, x fastest)."""

    def thread(self, lin: int) -> tuple:
        bx, by, _ = self.block
        return (lin % bx, lin // bx % by, lin // (bx * by))[: self.rank]

    def block_of_epoch(self, epoch: int) -> tuple:
        k = max(bisect.bisect_right(self.block_starts, epoch) - 1, 0)
        gx, gy, _ = self.grid
        return (k % gx, k // gx % gy, k // (gx * gy))[: self.rank]


class Findings:
    """Collects findings over every launch of one run (a case)."""

    def __init__(self):
        _CASE[0] += 1
        self.items: dict = {}
        self.launch: Launch | None = None
        self.current_block: tuple = (0, 0, 0)
        self.relaxed = False
        """The kernel uses cuda.threadfence(): conflicts between blocks are only warnings."""
        self.stores: dict = {}
        """Write-write conflicts on global memory first met in this launch: key -> (memory,
        element), to say at its end how many threads stored to the element."""
        self.shuffle_offsets: dict = {}
        """Shuffle site -> (op, the offsets or lanes lane 0 of a block's first warp passed, in
        order, at most SHUFFLES_KEPT): which way a warp reduction or scan moved its values."""

    def shuffled(self, site: int, op: str, arg) -> None:
        """Lane 0 of a first warp met others at a shuffle (grader/doctor/warps.py)."""
        _, args = self.shuffle_offsets.setdefault(site, (op, []))
        if len(args) < SHUFFLES_KEPT:
            args.append(int(arg))

    def shuffles(self) -> tuple:
        """(kernel, op, line, text, offsets) per shuffle site, for the report."""
        return tuple(
            (SITES[site].function, op, SITES[site].line, SITES[site].text, tuple(args))
            for site, (op, args) in self.shuffle_offsets.items()
        )

    # -- reporting --------------------------------------------------------------------------
    def _add(self, key, make):
        found = self.items.get(key)
        if found is None:
            self.items[key] = [make(), 1]
        elif found[1] < COUNT_CAP:
            found[1] += 1

    def results(self) -> list[Finding]:
        """One finding per kind, pair of lines and array (a conflict seen as read-after-write
        and as write-after-read is one problem), counts added up, errors first."""
        merged: dict = {}
        for finding, count in self.items.values():
            key = (finding.kind, finding.array, tuple(sorted((finding.line or 0, finding.other_line or 0))))
            if key in merged:
                merged[key][1] += count
            else:
                merged[key] = [finding, count]
        out = [Finding(**{**asdict(f), "count": min(n, COUNT_CAP)}) for f, n in merged.values()]
        out.sort(key=lambda f: (f.severity != SEVERITY_ERROR, ORDER.index(f.kind)))
        return out

    # -- called from the shadow checks --------------------------------------------------------
    def conflict(self, kind, view, f, other, other_site, site, index):
        """Two threads touched one element; `other` is the earlier access's stamp."""
        cross = other < self.launch.block_starts[-1] << EPOCH_SHIFT
        key = ("conflict", kind, site, other_site, view.mem.name, cross)
        if key in self.items:
            self.items[key][1] += 1
            return
        self._add(key, lambda: self._conflict(kind, view, other, other_site, site, index, cross))
        if kind == "ww" and view.mem.space == "global":
            self.stores[key] = (view.mem, f)

    def end_launch(self, views) -> None:
        """The launch is over: say how many threads stored to the element of each write-write
        race, and warn about each global array that several threads stored the same value to
        (`Memory.dups`, grader/doctor/memory.py). Clears the launch's writer counts."""
        for key, (mem, f) in self.stores.items():
            writers = mem.dups[f] + 1 if mem.dups else 0
            entry = self.items.get(key)
            if entry is not None and writers > 2:
                found = entry[0]
                element = f"`{found.array}[{index_text(found.index)}]`"
                entry[0] = replace(found, message=f"{found.message} In all, {writers} threads stored to {element}.")
        self.stores = {}
        self._serial(views)
        seen: set = set()
        for view in views:
            mem = getattr(view, "mem", None)
            if mem is None or mem.space != "global" or id(mem) in seen or mem.dups is None:
                continue
            seen.add(id(mem))
            try:
                if mem.dup_same is not None:
                    self._duplicates(view, mem)
            finally:
                mem.dups = mem.dup_same = None

    def _serial(self, views) -> None:
        """Work a GPU would spread over thousands of threads, done one element after another:
        a warning whose headline says a pass would likely be too slow on a GPU (an estimate
        from what the doctor counted; nothing is timed here). Three forms (`_serial_worker`):
        a launch of one warp or less touching SERIAL_ELEMENTS elements per thread (a serial scan,
        a serial carry between blocks); one thread storing SERIAL_ELEMENTS elements, most of its
        launch's stores in every case (block 0 walking the whole array); a kernel whose grid
        stayed one block while its data grew SERIAL_GROWTH times (a reduction by one block with
        a grid-stride loop; 1-D data only: a grid sized by the rows of a matrix, or a register-
        tiled kernel's, is one block at the check's small sizes too)."""
        launch = self.launch
        threads = launch.block[0] * launch.block[1] * launch.block[2]
        blocks = launch.grid[0] * launch.grid[1] * launch.grid[2]
        touched, given, writers, filled = _touched(views, launch)
        worker = _serial_worker(launch.kernel, threads, blocks, touched, given, writers, filled)
        if not worker:
            return
        fix = (
            "Spread the work over the grid: one thread per element (or a few), many blocks "
            "(blocks = ceil(n / threads_per_block))."
        )
        if blocks == 1 and threads <= SERIAL_THREADS:  # the serial scan or carry between blocks
            fix += " A scan scans each block's part in parallel, then the blocks' totals, then adds each block's carry."
        headline = (
            f"a GPU would likely grade it too slow: {worker} in kernel `{launch.kernel}`, one "
            "element after another, where a GPU runs thousands of threads at once"
        )
        message = (
            f"Kernel `{launch.kernel}` ran as {blocks} block{'' if blocks == 1 else 's'} of {threads} "
            f"thread{'' if threads == 1 else 's'}, and {worker}: {touched} elements touched in all, "
            "one after another. On a GPU this leaves almost every core idle and would "
            f"likely fail the speed requirement (too_slow; an estimate: nothing was timed). {fix}"
        )
        self._add(
            ("serial", launch.kernel),
            lambda: Finding("serial_work", SEVERITY_WARNING, message, launch.kernel, fix=fix, headline=headline),
        )

    def _duplicates(self, view, mem) -> None:
        """Threads stored the same value to elements of `mem`: one warning, naming the element
        stored to by the most threads."""
        dups = mem.dups
        f = dups.index(max(dups))
        index = _unflatten(view, f)
        if index is None:  # not an element of this view: name the first one met instead
            f, index = mem.dup_same[0], as_tuple(mem.dup_same[2])
        writers, elements = dups[f] + 1, len(dups) - dups.count(0)
        last, last_site = mem.wr[f], mem.ws[f]
        site, first_site = SITES[last_site], SITES[mem.dup_same[1]]
        key = ("duplicate", mem.name, last_site, mem.dup_same[1])
        if key in self.items:
            self.items[key][1] = min(self.items[key][1] + elements, COUNT_CAP)
            return
        launch = self.launch
        lin, block = (last >> 1) & 2047, launch.block_of_epoch(last >> EPOCH_SHIFT)
        element = f"`{view.name}[{index_text(index)}]`"
        others = f"; {elements} elements of `{view.name}` were written by more than one thread" if elements > 1 else ""
        lines = f"line {site.line}" if first_site.line == site.line else f"lines {first_site.line} and {site.line}"
        if elements > 1:
            fix = (
                "Give every element one writer: index with the thread's own position (cuda.grid), "
                "and let a grid-stride loop step by the whole grid "
                "(`for j in range(i, n, cuda.gridsize(1))`), not by 1."
            )
        else:
            fix = (
                f"Let one thread store {element}: guard the store with `if i == 0:` (or "
                "`if cuda.threadIdx.x == 0:` for one value per block)."
            )
        message = (
            f"{element} was written by {writers} threads in one launch, all storing the same value "
            f"({lines}; the last was {self.who(lin, block)}){others}. Each element should be "
            "written once: on a GPU the repeated stores are wasted work and a data race (harmless "
            f"only while every thread stores the same value). {fix}"
        )
        headline = (
            f"{view.name}[{index_text(index)}] was written by {writers} threads: each element "
            "should be written once; on a GPU this is wasted work and a data race"
        )
        self.items[key] = [
            Finding(
                "duplicate_write",
                SEVERITY_WARNING,
                message,
                launch.kernel,
                site.filename,
                site.line,
                site.statement,
                first_site.line if first_site.line != site.line else None,
                launch.thread(lin),
                block,
                array=view.name,
                index=index,
                fix=fix,
                headline=headline,
            ),
            min(elements, COUNT_CAP),
        ]

    def uninit(self, view, f, site, index):
        key = ("uninit", site, view.mem.name)
        if key in self.items:
            self.items[key][1] += 1
            return
        self._add(key, lambda: unwritten_finding(self, view, site, index))

    def divergence(self, at: dict, finished: list, lin_names):
        """`at`: barrier site -> threads waiting there; `finished`: threads that returned."""
        sites_hit = sorted(at, key=lambda s: -len(at[s]))
        key = ("divergent", tuple(sites_hit), bool(finished))
        if key in self.items:
            self.items[key][1] += 1
            return
        self._add(key, lambda: self._divergence(at, finished, sites_hit))

    # -- messages -------------------------------------------------------------------------------
    def who(self, lin, block) -> str:
        return f"thread {fmt(self.launch.thread(lin))} of block {fmt(block)}"

    def _conflict(self, kind, view, other, other_site, site, index, cross):
        launch = self.launch
        me_lin = (self._me_stamp() >> 1) & 2047
        them_lin = (other >> 1) & 2047
        clash = Clash(
            kind,
            cross,
            view.name,
            "shared" if view.mem.space == "shared" else "global",
            as_tuple(index),
            SITES[site],
            SITES[other_site],
            (launch.thread(me_lin), self.current_block[: launch.rank]),
            (launch.thread(them_lin), launch.block_of_epoch(other >> EPOCH_SHIFT)),
        )
        return clash_finding(clash, launch.kernel, relaxed=self.relaxed)

    def _me_stamp(self):
        return CTX.me

    def _divergence(self, at, finished, sites_hit):
        block = self.current_block[: self.launch.rank]
        main = SITES[sites_hit[0]]
        waiter = at[sites_hit[0]][0]
        if len(sites_hit) > 1:
            other = SITES[sites_hit[1]]
            straggler = at[sites_hit[1]][0]
            detail = f"{self.who(straggler, block)} waited at the one on line {other.line}"
            other_line = other.line
        else:
            straggler = finished[0]
            detail = (
                f"{self.who(straggler, block)} (and {len(finished) - 1} more) had already left the kernel"
                if len(finished) > 1
                else f"{self.who(straggler, block)} had already left the kernel"
            )
            other_line = None
        message = (
            f"Divergent cuda.syncthreads(): {self.who(waiter, block)} waited at cuda.syncthreads() "
            f"on line {main.line}, but {detail}. Every thread of a block must reach the same "
            "cuda.syncthreads(): do not `return` early and do not call it inside an `if` that "
            "only some threads take (guard the work, not the barrier)."
        )
        return Finding(
            "divergent_barrier",
            SEVERITY_ERROR,
            message,
            self.launch.kernel,
            main.filename,
            main.line,
            main.statement,
            other_line,
            self.launch.thread(waiter),
            block,
            self.launch.thread(straggler),
            block,
            fix=(
                "Guard the work, not the barrier: every thread of the block must reach "
                f"the cuda.syncthreads() on line {main.line} (no early `return`, no "
                "barrier inside an `if` that only some threads take)."
            ),
        )


def _unflatten(view, f) -> tuple | None:
    """The index of memory element `f` in `view` (None when the view does not hold it)."""
    rest = f - view.off
    index = [0] * view.ndim
    for axis in sorted(range(view.ndim), key=lambda a: -abs(view.st[a])):
        stride = view.st[axis]
        if stride <= 0:
            return None
        index[axis], rest = divmod(rest, stride)
    if rest or not all(0 <= i < n for i, n in zip(index, view.shape)):
        return None
    return tuple(index)


WARP_VERDICT = {
    "warp_divergence": "race",
    "warp_mask": "race",
    "warp_inactive_lane": "race",
    "warp_lane_range": "wrong_result",
}
"""Findings at warp collectives (grader/doctor/warp_findings.py), ranked after the block's.
The first three are undefined behaviour, whose outcome on a GPU changes from run to run and
from GPU to GPU (a pass, a hang, any value): `race`, the verdict of code whose result is not
fixed by its inputs, never `wrong_result` with values the doctor made up."""
ORDER += tuple(WARP_VERDICT)
VERDICT.update(WARP_VERDICT)
