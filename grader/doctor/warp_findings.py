"""What the doctor finds wrong at a warp collective, in a learner's words: lanes named in a
mask that never come, a mask that leaves out its caller, a shuffle reading a lane that does
not take part, and lanes or offsets past the warp.

The first three break a rule of CUDA, and what a GPU then does is undefined: the same kernel
passed on an H200 in some forms and hung in others. So their messages say which rule, which
lane and which line, and never show the values the doctor computed past that point (a lane
reading a lane that is not there gets its own value here, a number no GPU promises).

Each is a `Finding` added to the run's `Findings` (grader/doctor/findings.py), one example per
site and kind, counted. CUDA calls the first three undefined behaviour (Programming Guide,
"Warp Shuffle Functions": every calling lane names itself, and all non-exited lanes named in
the mask execute the same intrinsic with the same mask; a lane reading an inactive lane gets
an undefined value).
"""

from __future__ import annotations

import ast
import functools
import linecache

from grader.doctor.findings import SEVERITY_ERROR, SEVERITY_WARNING, Finding
from grader.doctor.sites import SITES
from grader.doctor.warp_calls import NUMBA_NAME, SIGNATURES, WARP
from grader import pysource

UNDEFINED = "Undefined behaviour"


def keep_alive(returns: bool) -> str:
    """The fix for lanes that had left the kernel before a shuffle read them: what made them
    leave depends on whether the kernel has a `return`."""
    if returns:
        return (
            "Keep every lane of the warp alive until its shuffles are done: instead of "
            "returning early, give lanes past the end a neutral value (0 for a sum) and "
            "shuffle it too."
        )
    return (
        "Call the shuffle where every lane of the warp passes, not inside the `if` that only "
        "some lanes enter: lanes past the end take part with a neutral value (0 for a sum)."
    )


@functools.lru_cache(maxsize=64)
def has_return(filename: str, function: str) -> bool:
    """Does `function` in `filename` have a `return` statement (True when the source cannot be
    read: the wording that names a `return` is the older, general one)?"""
    try:
        tree = pysource.parse("".join(linecache.getlines(filename)))
    except (SyntaxError, ValueError):
        return True
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == function:
            return any(isinstance(n, ast.Return) for n in ast.walk(node))
    return True


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def _finding(findings, kind, severity, message, call, lin, fix="", other=(None, None)):
    """The finding at lane `lin`'s `call`; `other`: (the other lane, its line), when one is named."""
    other_lin, other_line = other
    site = SITES[call.site]
    launch = findings.launch
    block = findings.current_block[: launch.rank]
    return Finding(
        kind,
        severity,
        message,
        launch.kernel,
        site.filename,
        site.line,
        site.statement,
        other_line,
        launch.thread(lin),
        block,
        None if other_lin is None else launch.thread(other_lin),
        None if other_lin is None else block,
        fix=fix,
    )


def _who(findings, lin) -> str:
    block = findings.current_block[: findings.launch.rank]
    return f"{findings.who(lin, block)} (lane {lin % WARP})"


def _Who(findings, lin) -> str:
    text = _who(findings, lin)
    return text[0].upper() + text[1:]


def divergence(findings, call, lin, missing, where: str, other_line) -> None:
    """Lane `lin` waits at `call`; lane `missing`, named in its mask, is somewhere else."""
    site = SITES[call.site]

    def make():
        message = (
            f"{UNDEFINED}: cuda.{NUMBA_NAME[call.op]} in divergent code. {_Who(findings, lin)} "
            f"called `{site.text}` on line {site.line} with mask {call.mask:#010x}, but "
            f"{_who(findings, missing)}, which the mask names, {where}. Every lane a mask names "
            "must reach the same warp function with the same mask; otherwise a GPU may hang or "
            "give any value. Call it where every named lane passes (outside the `if`, before any "
            "`return`: lanes without work take part with a neutral value such as 0), or name "
            "only the lanes that get there (mask = cuda.ballot_sync(0xffffffff, condition) "
            "before the branch)."
        )
        return _finding(
            findings,
            "warp_divergence",
            SEVERITY_ERROR,
            message,
            call,
            lin,
            other=(missing, other_line),
            fix=(
                "Call it where every lane its mask names arrives (outside the `if`, before "
                "any `return`; lanes without work take part with a neutral value such as "
                "0), or name only the lanes that get there (a ballot before the branch)."
            ),
        )

    findings._add(("warp_divergence", call.site, other_line), make)


def own_lane(findings, call, lin) -> None:
    """Lane `lin` called with a mask that does not name it."""
    site = SITES[call.site]

    def make():
        message = (
            f"{UNDEFINED}: a mask without its caller. {_Who(findings, lin)} called `{site.text}` "
            f"(line {site.line}) with mask {call.mask:#010x}, which leaves out its own lane "
            f"{lin % WARP}. The mask names the lanes that take part, the caller included: "
            "0xffffffff for a whole warp, or the mask of the lanes that reach this line "
            "(cuda.activemask(), or a ballot taken before the branch)."
        )
        return _finding(
            findings,
            "warp_mask",
            SEVERITY_ERROR,
            message,
            call,
            lin,
            fix=(
                "Name the calling lane in the mask: 0xffffffff for a whole warp, or the lanes that "
                "reach this line (cuda.activemask(), or a ballot taken before the branch)."
            ),
        )

    findings._add(("warp_mask", call.site), make)


def inactive_source(findings, call, lin, source: int, why: str, reason: str) -> None:
    """Lane `lin` shuffled from lane `source`, which does not take part (`why`: gone, absent,
    unnamed; `reason`: the words for it)."""
    site = SITES[call.site]
    fix = {
        "gone": keep_alive(has_return(site.filename, findings.launch.kernel)),
        "absent": "Launch whole warps: a block size that is a multiple of 32 (threads past the "
        "end of the data take part with a neutral value such as 0), or keep the source lanes "
        "within the threads that exist.",
        "unnamed": "Name every lane you read from in the mask (0xffffffff for the whole warp), "
        "or keep the offsets within the lanes it names.",
    }[why]

    def make():
        message = (
            f"{UNDEFINED}: a shuffle from a lane that does not take part. {_Who(findings, lin)} "
            f"read lane {source}'s value with `{site.text}` (line {site.line}), but lane "
            f"{source} {reason}. A shuffle may read only lanes that are named in its mask and "
            f"still running: what it gets otherwise is undefined, so no value is shown here. {fix}"
        )
        return _finding(findings, "warp_inactive_lane", SEVERITY_ERROR, message, call, lin, fix=fix)

    findings._add(("warp_inactive_lane", call.site, why), make)


def lane_range(findings, call, lin) -> None:
    """A shuffle's lane or offset outside 0..31: a GPU keeps its low 5 bits."""
    site = SITES[call.site]
    name = SIGNATURES[call.op][2]
    arg = call.arg

    def make():
        kept = arg & 31
        effect = (
            "so every lane reads its own value"
            if kept == 0 and call.op != "shfl"
            else f"so it reads lane {'' if call.op == 'shfl' else 'offset '}{kept}"
        )
        message = (
            f"{_Who(findings, lin)} called `{site.text}` "
            f"(line {site.line}) with {name} = {arg}: a shuffle never leaves its warp, and a "
            f"GPU keeps only the low 5 bits ({arg} & 31 = {kept}), {effect}. Lanes are "
            "numbered 0-31 within each warp (cuda.laneid, or threadIdx.x % 32), and a warp "
            "reduction's offsets are 16, 8, 4, 2, 1; combine warps through shared memory."
        )
        return _finding(
            findings,
            "warp_lane_range",
            SEVERITY_WARNING,
            message,
            call,
            lin,
            fix=(
                "Keep lanes within 0-31 (cuda.laneid, or threadIdx.x % 32) and a reduction's offsets "
                "at 16, 8, 4, 2, 1; combine warps through shared memory."
            ),
        )

    findings._add(("warp_lane_range", call.site), make)
