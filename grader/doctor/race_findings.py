"""Two threads' accesses to one element with nothing ordering them, in a learner's words: a
race inside a block (a missing cuda.syncthreads()), between blocks (blocks never wait for each
other), a missing atomic (two read-modify-writes), blocks overwriting each other's stores, and a
plain access beside atomics on a total.

The doctor's shadow memory finds the clashes (grader/doctor/memory.py, grader/doctor/spaces.py)
and grader/doctor/findings.py hands them here; so does the simulator's access record
(grader/backend/races.py, through grader/doctor/fallback.py) when the simulator runs a kernel
the doctor cannot.
"""

from __future__ import annotations

import ast
import linecache
from dataclasses import dataclass

from grader.doctor.sites import Site
from grader.result.doctor import SEVERITY_ERROR, SEVERITY_WARNING, Finding
from grader import pysource


def fmt(values) -> str:
    """A thread's or block's coordinates as a learner writes them: 3, or (3, 1)."""
    values = tuple(int(v) for v in values)
    return str(values[0]) if len(values) == 1 else "(" + ", ".join(map(str, values)) + ")"


def index_text(idx) -> str:
    if isinstance(idx, tuple):
        return ", ".join(str(int(i)) for i in idx)
    return str(int(idx))


def as_tuple(index) -> tuple:
    if isinstance(index, tuple):
        return tuple(int(i) for i in index)
    return (int(index),)


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
        return f"`{self.array}[{index_text(self.index)}]`"


def clash_finding(c: Clash, kernel: str, relaxed: bool = False) -> Finding:
    """The finding of a clash, in a learner's words. `relaxed`: the kernel uses
    cuda.threadfence(), so a clash between blocks is only a warning (the last-block pattern)."""
    if c.me_site.kind == "update" and c.them_site.kind == "update":
        kind_out, message, fix, mistake = _missing_atomic_words(c)
    elif c.cross and c.kind == "ww" and _with_atomic(c):
        kind_out, message, fix, mistake = _store_beside_atomics_words(c)
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


def _store_beside_atomics_words(c: Clash) -> tuple:
    """A plain store and an atomic update of one global element by two blocks of one launch
    (block 0 zeroing a total the other blocks add to): on a GPU the store may land after some
    of the updates and wipe them out."""
    (stored, store_site), (added, add_site) = sorted(
        ((c.them, c.them_site), (c.me, c.me_site)), key=lambda pair: pair[1].kind == "atomic"
    )
    plain = "stores to" if store_site.kind == "store" else "updates, without an atomic,"
    fix = (
        f"Set {c.element} before the launch (a fill in `launch`, e.g. `{c.array}[:] = 0`, or a "
        "kernel launched before this one), and let this kernel only update it with cuda.atomic.*."
    )
    message = (
        f"Race between blocks on global array `{c.array}`: {_who(stored)} {plain} {c.element} "
        f"(line {store_site.line}) while {_who(added)} updates it with an atomic (line "
        f"{add_site.line}), in the same launch. Blocks run in any order and never wait for each "
        "other, so on a GPU the store may land after some of the atomic updates and wipe them "
        f"out: atomics only protect against other atomics. {fix}"
    )
    return "race", message, fix, "race_between_blocks"


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


def _barrier_fix(c: Clash) -> str:
    """Where the missing barrier goes: between the two lines, when no loop holds them both (a
    loop's step is then not where it belongs), else the fix for a read or write in a loop."""
    first, second = sorted((c.them_site.line, c.me_site.line))
    if first == second or _in_one_loop(c.them_site, c.me_site) is not False:
        return _WITHIN_BLOCK_FIX[c.kind]
    return (
        f"Put a cuda.syncthreads() between line {first} and line {second}, where every thread of "
        f"the block passes (not inside an `if`): no thread then reaches line {second} before "
        f"every thread is done with line {first}."
    )


def _in_one_loop(a: Site, b: Site) -> bool | None:
    """Does one `for` or `while` of the kernel's file hold both sites (None: its text cannot be
    read)?"""
    if a.filename != b.filename:
        return None
    try:
        tree = pysource.parse("".join(linecache.getlines(a.filename)))
    except (SyntaxError, ValueError):
        return None
    if not tree.body:
        return None
    lines = sorted((a.line, b.line))
    loops = (n for n in ast.walk(tree) if isinstance(n, (ast.For, ast.While)))
    return any(n.lineno <= lines[0] and lines[1] <= n.end_lineno for n in loops)


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
        fix = _barrier_fix(c)
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
