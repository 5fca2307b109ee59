"""When the simulator, run because the kernel doctor could not, fails in its own code.

The kernel compiled for a GPU (grader/compiler/), the doctor declined it for a reason of its
own, and then Numba's simulator stopped on something it lacks (`'FakeCUDAModule' object has
no attribute ...`, a NotImplementedError of the simulator): neither is the learner's bug, so
the result says so, with how to report it, instead of showing it as their exception.
"""

from __future__ import annotations

from dataclasses import replace

from grader.backend.races import Clash as RecordedClash
from grader.backend.races import Place
from grader.compiler.client import REPORT
from grader.doctor.findings import Finding, Findings
from grader.doctor.race_findings import Clash, clash_finding
from grader.doctor.sites import Site

SIMULATOR_MARKS = ("FakeCUDA", "simulator", "cudasim", "CUDASIM")


def is_ours(error) -> bool:
    if error is None or error.verdict != "exception":
        return False
    if error.error_type == "NotImplementedError":
        return True
    return error.error_type in ("AttributeError", "TypeError") and any(m in error.message for m in SIMULATOR_MARKS)


def blame_the_grader(error, why: str):
    """The learner-facing error for a fallback that failed in the grader's own engines."""
    if not is_ours(error):
        return error
    message = (
        f"The grader could not run your kernel: the kernel doctor cannot run this code "
        f"({why}), and Numba's CUDA simulator failed on it too ({error.error_type}: "
        f"{error.message}). {REPORT}"
    )
    return replace(error, verdict="crashed", message=message)


def race_findings(clashes) -> list[Finding]:
    """The doctor's findings for the clashes a recorded simulator run found, merged and
    ordered as the doctor's own are (one per kind, pair of lines and array; errors first)."""
    merged = Findings()
    for k, c in enumerate(clashes):
        merged.items[k] = [_finding(c), c.count]
    return merged.results()


def _finding(c: RecordedClash) -> Finding:
    me, them = _site(c.me_place, c.array), _site(c.them_place, c.array)
    clash = Clash(c.kind, c.cross, c.array, c.space, c.index, me, them, c.me, c.them)
    return clash_finding(clash, c.launch.kernel, relaxed=c.launch.relaxed)


def _site(place: Place, array: str) -> Site:
    text = place.statement.split("=", 1)[0].rstrip() + "= ..." if place.kind == "update" else array
    return Site(place.kind, place.filename, place.line, text, place.function, array, place.statement)
