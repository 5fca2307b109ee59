"""What the doctor found wrong, in a learner's words: races, missing atomics, divergent
barriers, reads of shared memory no thread wrote, reads of local memory the thread never wrote,
global elements several threads of one launch stored to.

`Findings` is the sink the memory's shadow checks and the block scheduler report to while a
launch runs; it keeps the first example of each distinct problem (kind, sites, array) and
counts the rest, so a kernel that races on every element still costs one message.
"""

from __future__ import annotations

import ast
import bisect
from array import array

import numpy as np
from dataclasses import asdict, dataclass, replace

from grader.doctor.memory import CTX, EPOCH_SHIFT, UNSET
from grader.doctor.sites import SITES, Site
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


def _touched(views, launch) -> tuple[int, int, np.ndarray]:
    """(global elements this launch touched, elements of the global arrays it was given
    (negative when one has rows: only 1-D data counts for the one-block rule), how many
    elements each thread stored last: one count per storing thread)."""
    floor, touched, seen, stores = CTX.lfloor, 0, set(), []
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
    stamps = np.concatenate(stores) if stores else np.zeros(0, np.int64)
    block = np.searchsorted(np.asarray(launch.block_starts), stamps >> EPOCH_SHIFT, side="right")
    writer = block * 4096 + ((stamps >> 1) & 2047)
    return touched, given, np.unique(writer, return_counts=True)[1]


def _serial_worker(kernel: str, threads: int, blocks: int, touched: int, given: int, writers: np.ndarray) -> str:
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
    if seen["one_block"] and given > 0 and given >= max(SERIAL_GROWTH * min(seen["sizes"]), 2 * threads):
        return "one block does all the work (its grid stays one block however large the data)"
    return ""


SHUFFLES_KEPT = 5
"""Offsets kept per shuffle site: a warp reduction's or scan's five steps."""


def fmt(values) -> str:
    values = tuple(int(v) for v in values)
    return str(values[0]) if len(values) == 1 else "(" + ", ".join(map(str, values)) + ")"


def _index_text(idx) -> str:
    if isinstance(idx, tuple):
        return ", ".join(str(int(i)) for i in idx)
    return str(int(idx))


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
                element = f"`{found.array}[{_index_text(found.index)}]`"
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
        touched, given, writers = _touched(views, launch)
        worker = _serial_worker(launch.kernel, threads, blocks, touched, given, writers)
        if not worker:
            return
        fix = (
            "Spread the work over the grid: one thread per element (or a few), many blocks "
            "(blocks = ceil(n / threads_per_block)); a scan scans each block's part in parallel, "
            "then the blocks' totals, then adds each block's carry."
        )
        headline = (
            f"a GPU would likely grade it too slow: {worker} in kernel `{launch.kernel}`, one "
            "element after another, where a GPU runs thousands of threads at once"
        )
        message = (
            f"Kernel `{launch.kernel}` ran as {blocks} block{'' if blocks == 1 else 's'} of {threads} "
            f"thread{'' if threads == 1 else 's'}, and {worker}: {touched} elements touched in all, "
            "one after another: correct, but on a GPU this leaves almost every core idle and would "
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
            f, index = mem.dup_same[0], _as_tuple(mem.dup_same[2])
        writers, elements = dups[f] + 1, len(dups) - dups.count(0)
        last, last_site = mem.wr[f], mem.ws[f]
        site, first_site = SITES[last_site], SITES[mem.dup_same[1]]
        key = ("duplicate", mem.name, last_site, mem.dup_same[1])
        if key in self.items:
            self.items[key][1] = min(self.items[key][1] + elements, COUNT_CAP)
            return
        launch = self.launch
        lin, block = (last >> 1) & 2047, launch.block_of_epoch(last >> EPOCH_SHIFT)
        element = f"`{view.name}[{_index_text(index)}]`"
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
            f"{view.name}[{_index_text(index)}] was written by {writers} threads: each element "
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
        self._add(key, lambda: self._uninit(view, site, index))

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
            _as_tuple(index),
            SITES[site],
            SITES[other_site],
            (launch.thread(me_lin), self.current_block[: launch.rank]),
            (launch.thread(them_lin), launch.block_of_epoch(other >> EPOCH_SHIFT)),
        )
        return clash_finding(clash, launch.kernel, relaxed=self.relaxed)

    def _me_stamp(self):
        return CTX.me

    def _uninit(self, view, site, index):
        s = SITES[site]
        block = self.current_block[: self.launch.rank]
        what = "updated" if s.kind in ("atomic", "update") else "read"
        if view.mem.space == "local":
            return self._unset_local(view, s, index, what, block, CTX.lin)
        if view.mem.space == "global":
            return self._unset_global(view, s, index, what, block, CTX.lin)
        swapped = _swapped_tile_read(view, s, index)
        if swapped:
            return self._tile_not_swapped(view, s, index, swapped, block, CTX.lin)
        message = (
            f"{self.who(CTX.lin, block).capitalize()} {what} `{view.name}[{_index_text(index)}]` "
            f"(line {s.line}), but no thread of the block had written it: shared memory starts "
            "with whatever the last block left there. Write every element before reading it "
            "(e.g. zero it), with a cuda.syncthreads() in between."
        )
        fix = (
            f"Write every element of `{view.name}` before any thread reads it (e.g. "
            "zero it), then cuda.syncthreads(): shared memory does not start at 0."
        )
        return self._unwritten_read("uninitialised_shared", s, view.name, index, block, CTX.lin, message, fix)

    def _tile_not_swapped(self, view, s, index, swapped, block, lin):
        fix = (
            f"Swap the indices where the tile is read back: `{swapped}` instead of `{s.text}`. A "
            "transpose stores the tile as it reads the input and reads it back transposed; both "
            "sides then walk along rows of global memory."
        )
        message = (
            f"{self.who(lin, block).capitalize()} read `{view.name}[{_index_text(index)}]` (line "
            f"{s.line}), which no thread of the block had written, while the element at the "
            f"swapped position was written: the tile is read back with the indices it was "
            f"written with. {fix}"
        )
        return self._unwritten_read(
            "uninitialised_shared", s, view.name, index, block, lin, message, fix, "tile_not_swapped"
        )

    def _unset_global(self, view, s, index, what, block, lin):
        name = s.array or view.name
        fix = (
            f"Set `{name}` before any kernel reads it: allocate it with "
            "cuda.to_device(np.zeros(n, dtype)), fill it (`a[:] = 0` in `launch`), or have a kernel "
            "write every element first; cuda.device_array gives memory that holds garbage."
        )
        message = (
            f"{self.who(lin, block).capitalize()} {what} `{name}[{_index_text(index)}]` (line "
            f"{s.line}), but nothing had written that element: `{name}` is scratch memory from "
            "cuda.device_array, which holds whatever was there before (garbage), not zeros. " + fix
        )
        return self._unwritten_read("uninitialised_global", s, name, index, block, lin, message, fix)

    def _unset_local(self, view, s, index, what, block, lin):
        if self._meant_shared(view, s):
            return self._local_not_shared(view, s, index, what, block, lin)
        message = (
            f"{self.who(lin, block).capitalize()} {what} `{view.name}[{_index_text(index)}]` "
            f"(line {s.line}), an element of its cuda.local.array that it had not written: local "
            "arrays start with whatever was left in the thread's registers or memory, not zeros "
            "(this doctor, like the simulator here, gives NaN or the most negative integer). Set "
            f"every element before reading it, e.g. a loop `{view.name}[k] = 0` at the start."
        )
        fix = (
            f"Set every element of the local array `{view.name}` before reading it, "
            f"e.g. a loop `{view.name}[k] = 0` at the start of the kernel."
        )
        return self._unwritten_read("uninitialised_local", s, view.name, index, block, lin, message, fix)

    def _unwritten_read(self, kind, s, array, index, block, lin, message: str, fix: str, mistake: str = ""):
        """The finding of a read, by thread `lin` of `block` at site `s`, of an element of
        `array` that nothing had written (shared, global scratch or local memory)."""
        return Finding(
            kind,
            SEVERITY_ERROR,
            message,
            self.launch.kernel,
            s.filename,
            s.line,
            s.statement,
            None,
            self.launch.thread(lin),
            block,
            None,
            None,
            array,
            _as_tuple(index),
            fix=fix,
            mistake=mistake,
        )

    def _meant_shared(self, view, s) -> bool:
        """A thread reads an element of its local array it never wrote, having written others,
        in a kernel with a cuda.syncthreads(): threads meant to share the array (each writes
        its own element, then reads a neighbour's), which only a shared array allows."""
        wrote = sum(1 for v in view.vals if v is not UNSET) > 1  # the element read holds the poison now
        return wrote and any(t.kind == "barrier" and t.filename == s.filename for t in SITES)

    def _local_not_shared(self, view, s, index, what, block, lin):
        fix = (
            f"Make `{view.name}` a cuda.shared.array: a cuda.local.array is private to each "
            "thread (every thread has its own copy), so no thread sees what the others store in "
            "theirs. Threads of a block share values through cuda.shared.array, with a "
            "cuda.syncthreads() between the writes and the reads."
        )
        message = (
            f"{self.who(lin, block).capitalize()} {what} `{view.name}[{_index_text(index)}]` "
            f"(line {s.line}), an element of its own cuda.local.array that it never wrote (it "
            "wrote others, as if the threads shared the array). " + fix
        )
        return self._unwritten_read(
            "uninitialised_local", s, view.name, index, block, lin, message, fix, "local_not_shared"
        )

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


@dataclass(frozen=True)
class Clash:
    """Two threads' accesses to one element with nothing ordering them: all a race's message
    needs (the doctor's shadow memory finds them; so does the simulator's record,
    grader/backend/races.py, when the simulator runs a kernel the doctor cannot)."""

    kind: str
    """"raw" (the later access reads what the earlier wrote), "war" (it writes what the earlier
    read) or "ww" (both write)."""
    cross: bool
    """The two threads are in different blocks."""
    array: str
    space: str
    """"shared" or "global"."""
    index: tuple
    me_site: Site
    """The later access."""
    them_site: Site
    """The earlier access."""
    me: tuple
    """(thread, block) of the later access."""
    them: tuple
    """(thread, block) of the earlier access."""

    @property
    def element(self) -> str:
        return f"`{self.array}[{_index_text(self.index)}]`"


def clash_finding(c: Clash, kernel: str, relaxed: bool = False) -> Finding:
    """The finding of a clash, in a learner's words. `relaxed`: the kernel uses
    cuda.threadfence(), so a clash between blocks is only a warning (the last-block pattern)."""
    if c.me_site.kind == "update" and c.them_site.kind == "update":
        kind_out, message, fix, mistake = _missing_atomic_words(c)
    elif c.cross and c.kind == "ww":
        kind_out, message, fix, mistake = _overwrite_words(c)
    elif c.cross:
        kind_out, message, fix, mistake = _between_blocks_words(c)
    else:
        kind_out, message, fix, mistake = _within_block_words(c)
    return Finding(
        kind_out,
        SEVERITY_WARNING if c.cross and relaxed else SEVERITY_ERROR,
        message,
        kernel,
        c.me_site.filename,
        c.me_site.line,
        c.me_site.statement,
        c.them_site.line,
        c.me[0],
        c.me[1],
        c.them[0],
        c.them[1],
        c.array,
        c.index,
        fix=fix,
        mistake=mistake,
    )


def _who(thread_block) -> str:
    thread, block = thread_block
    return f"thread {fmt(thread)} of block {fmt(block)}"


_VERBS = {"load": "read {}", "store": "wrote {}", "update": "updated {}", "atomic": "updated {} with an atomic"}


def _deeds(c: Clash) -> tuple[str, str]:
    """What the earlier and the later access did, e.g. ("wrote `a[3]`", "read it")."""
    them_did = (_VERBS.get(c.them_site.kind, "wrote {}") if c.kind != "war" else "read {}").format(c.element)
    me_did = (_VERBS.get(c.me_site.kind, "wrote {}") if c.kind != "raw" else "read {}").format("it")
    return them_did, me_did


def _with_atomic(c: Clash) -> bool:
    return "atomic" in (c.me_site.kind, c.them_site.kind)


def _missing_atomic_words(c: Clash) -> tuple:
    me_line, them_line = c.me_site.line, c.them_site.line
    lines = f"line {them_line}" + ("" if them_line == me_line else f" and line {me_line}")
    fix = (
        f"Make the update atomic: cuda.atomic.add({c.array}, index, value) instead of "
        f"`{c.me_site.text}`, whenever several threads may update one element."
    )
    message = (
        f"Missing atomic: {_who(c.them)} and {_who(c.me)} both do `{c.me_site.text}` on {c.element} ({lines}). "
        "A read-modify-write that is not atomic loses updates when threads overlap: "
        f"use cuda.atomic.add({c.array}, index, value) (or sub, max, min)."
    )
    return "missing_atomic", message, fix, ""


def _overwrite_words(c: Clash) -> tuple:
    fix = (
        f"Blocks must not store into one element: add each block's value with "
        f"cuda.atomic.add({c.array}, index, value), or give each block its own elements."
    )
    message = (
        f"Blocks overwrite each other: {_who(c.them)} wrote {c.element} (line {c.them_site.line}) and "
        f"{_who(c.me)} wrote a different value there (line {c.me_site.line}). Blocks run in any "
        "order, so which value stays is luck: give each block its own elements, or "
        f"combine the blocks' values with cuda.atomic.add({c.array}, ...)."
    )
    return "overwrite", message, fix, ""


def _between_blocks_words(c: Clash) -> tuple:
    them_did, me_did = _deeds(c)
    fix = _CROSS_FIX[c.kind].format(a=c.array)
    fix = fix[0].upper() + fix[1:]
    message = (
        f"Race between blocks on global array `{c.array}`: {_who(c.them)} {them_did} "
        f"(line {c.them_site.line}) and {_who(c.me)} {me_did} (line {c.me_site.line}) during the "
        "same launch. Blocks run in any order and never wait for each other (no "
        f"cuda.syncthreads() spans blocks), so {_CROSS_FIX[c.kind].format(a=c.array)}"
    )
    if _with_atomic(c):
        message += (
            " Atomics only protect against other atomics: every access to a "
            "total that several blocks update must be atomic."
        )
        fix = "Make every access to a total that several blocks update atomic."
    return "race", message, fix, "race_between_blocks"


_WITHIN_BLOCK_FIX = {
    "raw": "Put a cuda.syncthreads() between them: after the write when the reader "
    "needs the new value, or at the end of each loop step when the write "
    "belongs to the next step (nobody may overwrite what others still read).",
    "war": "Put a cuda.syncthreads() between the read and the write (e.g. at the end of "
    "each loop step), so that nobody overwrites what others still have to read.",
}


def _within_block_words(c: Clash) -> tuple:
    atomic = _with_atomic(c)
    mistake = "threads_write_one_element" if c.kind == "ww" and not atomic else "missing_barrier"
    if atomic:
        fix = (
            "Atomics only protect against other atomics: separate the plain access "
            "from the atomic ones with a cuda.syncthreads()."
        )
    elif c.kind == "ww":
        fix = (
            "Let one thread store each element (guard the store with `if "
            "cuda.threadIdx.x == 0:` when the block has one value to store), or combine "
            f"the values with cuda.atomic.add({c.array}, index, value) when many must add to it."
        )
    else:
        fix = _WITHIN_BLOCK_FIX[c.kind]
    if c.kind == "ww" and not atomic:
        message = (
            f"Race on {c.space} array `{c.array}`: {_who(c.them)} wrote {c.element} (line "
            f"{c.them_site.line}) and {_who(c.me)} stored a different value there (line {c.me_site.line}), "
            "with no cuda.syncthreads() between the stores, so on a GPU which value stays "
            f"is luck. {fix}"
        )
    else:
        them_did, me_did = _deeds(c)
        message = (
            f"Race on {c.space} array `{c.array}`: {_who(c.them)} {them_did} "
            f"(line {c.them_site.line}) and {_who(c.me)} {me_did} (line {c.me_site.line}) with no "
            f"cuda.syncthreads() in between, so on a GPU either may come first. {fix}"
        )
    return "race", message, fix, mistake


_CROSS_FIX = {
    "raw": "on a GPU the reading block may run before the writing block, or during it. Never "
    "read in one block what another block writes in the same launch: write to another "
    "array, or split the work into two launches (a launch sees everything the previous "
    "one wrote); combine totals with cuda.atomic.*.",
    "war": "on a GPU the writing block may overwrite the element before the other block has "
    "read it. Write the results to another array than the one the blocks read (or do "
    "the writing in a second launch).",
    "ww": "on a GPU either write may land last. Give each block its own elements, or update "
    "totals with cuda.atomic.* everywhere.",
}
"""How to fix a conflict between blocks, by kind (read after write, write after read, both write)."""


def _swapped_tile_read(view, s, index) -> str:
    """`tile[b, a]` when a read of `tile[a, b]` (2-D shared) found nothing written there but
    the element at [b, a] was written in this block: a transpose that never swaps its indices
    inside the tile. "" otherwise."""
    idx = _as_tuple(index)
    if view.ndim != 2 or s.kind != "load" or len(idx) != 2 or idx[0] == idx[1]:
        return ""
    a, b = idx
    if not (b < view.n0 and a < view.n1) or view.mem.wr[view.off + b * view.s0 + a * view.s1] < 0:
        return ""
    try:
        node = ast.parse(s.text, mode="eval").body
    except SyntaxError:
        return ""
    if not isinstance(node, ast.Subscript) or not isinstance(node.slice, ast.Tuple) or len(node.slice.elts) != 2:
        return ""
    node.slice.elts.reverse()
    return ast.unparse(node)


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


def _as_tuple(index):
    if isinstance(index, tuple):
        return tuple(int(i) for i in index)
    return (int(index),)


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
