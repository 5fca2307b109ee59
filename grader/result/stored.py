"""Reading results back from JSON written by this grader or an earlier one."""

from __future__ import annotations

import dataclasses


def known(cls, data: dict) -> dict:
    """The entries of `data` that name a field of the dataclass `cls`: a result stored by another
    version of the grader may have more fields (or fewer, which take their defaults)."""
    names = {f.name for f in dataclasses.fields(cls)}
    return {k: v for k, v in data.items() if k in names}
