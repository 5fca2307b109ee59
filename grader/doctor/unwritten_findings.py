"""Reads of memory nothing had written, in a learner's words: shared memory no thread of the
block wrote (and a transpose that reads its tile back unswapped), global scratch memory from
`cuda.device_array`, and a thread's local array it never set (and a local array used as if it
were shared).

grader/doctor/findings.py calls `unwritten_finding` when the shadow memory reports such a read.
"""

from __future__ import annotations

import ast
from typing import NamedTuple

from grader.doctor.memory import CTX, UNSET
from grader.doctor.race_findings import as_tuple, index_text
from grader.doctor.sites import SITES
from grader.result.doctor import SEVERITY_ERROR, Finding
from grader import pysource


def unwritten_finding(findings, view, site, index):
    """The finding of a read (or an atomic) by the running thread of an element nothing had
    written: shared memory no thread of the block wrote, global scratch memory, or the
    thread's own local array."""
    s = SITES[site]
    block = findings.current_block[: findings.launch.rank]
    what = "updated" if s.kind in ("atomic", "update") else "read"
    if view.mem.space == "local":
        return _unset_local(findings, view, s, index, what, block, CTX.lin)
    if view.mem.space == "global":
        return _unset_global(findings, view, s, index, what, block, CTX.lin)
    swapped = _swapped_tile_read(view, s, index)
    if swapped:
        return _tile_not_swapped(findings, view, s, index, swapped, block, CTX.lin)
    message = (
        f"{findings.who(CTX.lin, block).capitalize()} {what} `{view.name}[{index_text(index)}]` "
        f"(line {s.line}), but no thread of the block had written it: shared memory starts "
        "with whatever the last block left there. Write every element before reading it "
        "(e.g. zero it), with a cuda.syncthreads() in between."
    )
    fix = (
        f"Write every element of `{view.name}` before any thread reads it (e.g. "
        "zero it), then cuda.syncthreads(): shared memory does not start at 0."
    )
    return _unwritten_read(findings, "uninitialised_shared", Read(s, view.name, index, block, CTX.lin), message, fix)


def _tile_not_swapped(findings, view, s, index, swapped, block, lin):
    fix = (
        f"Swap the indices where the tile is read back: `{swapped}` instead of `{s.text}`. A "
        "transpose stores the tile as it reads the input and reads it back transposed; both "
        "sides then walk along rows of global memory."
    )
    message = (
        f"{findings.who(lin, block).capitalize()} read `{view.name}[{index_text(index)}]` (line "
        f"{s.line}), which no thread of the block had written, while the element at the "
        f"swapped position was written: the tile is read back with the indices it was "
        f"written with. {fix}"
    )
    return _unwritten_read(
        findings, "uninitialised_shared", Read(s, view.name, index, block, lin), message, fix, "tile_not_swapped"
    )


def _unset_global(findings, view, s, index, what, block, lin):
    name = s.array or view.name
    fix = (
        f"Set `{name}` before any kernel reads it: allocate it with "
        "cuda.to_device(np.zeros(n, dtype)), fill it (`a[:] = 0` in `launch`), or have a kernel "
        "write every element first; cuda.device_array gives memory that holds garbage."
    )
    message = (
        f"{findings.who(lin, block).capitalize()} {what} `{name}[{index_text(index)}]` (line "
        f"{s.line}), but nothing had written that element: `{name}` is scratch memory from "
        "cuda.device_array, which holds whatever was there before (garbage), not zeros. " + fix
    )
    return _unwritten_read(findings, "uninitialised_global", Read(s, name, index, block, lin), message, fix)


def _unset_local(findings, view, s, index, what, block, lin):
    if _meant_shared(findings, view, s):
        return _local_not_shared(findings, view, s, index, what, block, lin)
    message = (
        f"{findings.who(lin, block).capitalize()} {what} `{view.name}[{index_text(index)}]` "
        f"(line {s.line}), an element of its cuda.local.array that it had not written: local "
        "arrays start with whatever was left in the thread's registers or memory, not zeros "
        "(this doctor, like the simulator here, gives NaN or the most negative integer). Set "
        f"every element before reading it, e.g. a loop `{view.name}[k] = 0` at the start."
    )
    fix = (
        f"Set every element of the local array `{view.name}` before reading it, "
        f"e.g. a loop `{view.name}[k] = 0` at the start of the kernel."
    )
    return _unwritten_read(findings, "uninitialised_local", Read(s, view.name, index, block, lin), message, fix)


class Read(NamedTuple):
    """A read of `array[index]` by thread `lin` of `block` at site `site`."""

    site: object
    array: str
    index: object
    block: tuple
    lin: int


def _unwritten_read(findings, kind, read: Read, message: str, fix: str, mistake: str = ""):
    """The finding of `read`, of an element that nothing had written (shared, global scratch
    or local memory)."""
    s, lin = read.site, read.lin
    return Finding(
        kind,
        SEVERITY_ERROR,
        message,
        findings.launch.kernel,
        s.filename,
        s.line,
        s.statement,
        None,
        findings.launch.thread(lin),
        read.block,
        None,
        None,
        read.array,
        as_tuple(read.index),
        fix=fix,
        mistake=mistake,
    )


def _meant_shared(findings, view, s) -> bool:
    """A thread reads an element of its local array it never wrote, having written others,
    in a kernel with a cuda.syncthreads(): threads meant to share the array (each writes
    its own element, then reads a neighbour's), which only a shared array allows."""
    wrote = sum(1 for v in view.vals if v is not UNSET) > 1  # the element read holds the poison now
    return wrote and any(t.kind == "barrier" and t.filename == s.filename for t in SITES)


def _local_not_shared(findings, view, s, index, what, block, lin):
    fix = (
        f"Make `{view.name}` a cuda.shared.array: a cuda.local.array is private to each "
        "thread (every thread has its own copy), so no thread sees what the others store in "
        "theirs. Threads of a block share values through cuda.shared.array, with a "
        "cuda.syncthreads() between the writes and the reads."
    )
    message = (
        f"{findings.who(lin, block).capitalize()} {what} `{view.name}[{index_text(index)}]` "
        f"(line {s.line}), an element of its own cuda.local.array that it never wrote (it "
        "wrote others, as if the threads shared the array). " + fix
    )
    return _unwritten_read(
        findings, "uninitialised_local", Read(s, view.name, index, block, lin), message, fix, "local_not_shared"
    )


def _swapped_tile_read(view, s, index) -> str:
    """`tile[b, a]` when a read of `tile[a, b]` (2-D shared) found nothing written there but
    the element at [b, a] was written in this block: a transpose that never swaps its indices
    inside the tile. "" otherwise."""
    idx = as_tuple(index)
    if view.ndim != 2 or s.kind != "load" or len(idx) != 2 or idx[0] == idx[1]:
        return ""
    a, b = idx
    if not (b < view.n0 and a < view.n1) or view.mem.wr[view.off + b * view.s0 + a * view.s1] < 0:
        return ""
    try:
        node = pysource.parse(s.text, mode="eval").body
    except SyntaxError:
        return ""
    if not isinstance(node, ast.Subscript) or not isinstance(node.slice, ast.Tuple) or len(node.slice.elts) != 2:
        return ""
    node.slice.elts.reverse()
    return ast.unparse(node)
