"""Every instrumented place in a kernel's source: an access, an atomic, a barrier.

The transformer gives each place a small integer (its site) and the executor records sites,
not strings, on the hot path; messages look the site up here when they need a line.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Site:
    kind: str
    """"load", "store", "update" (`a[i] += v`: a read-modify-write), "atomic", "barrier",
    "shared" (a cuda.shared.array call) or "exit" (a thread leaving the kernel)."""
    filename: str
    line: int
    text: str
    """The expression, as the learner wrote it, e.g. `sa[ty, tx]` or `cuda.syncthreads()`."""
    function: str
    array: str = ""
    """The array expression (`sa`), for accesses."""
    statement: str = ""
    """The whole source line, stripped."""


SITES: list[Site] = []


def add(site: Site) -> int:
    SITES.append(site)
    return len(SITES) - 1


def site(index: int) -> Site:
    return SITES[index]
