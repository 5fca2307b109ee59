"""Reading results back from JSON written by this grader or an earlier one."""

from __future__ import annotations

import dataclasses


def known(cls, data: dict) -> dict:
    """The entries of `data` that name a field of the dataclass `cls`: a result stored by another
    version of the grader may have more fields (or fewer, which take their defaults)."""
    names = {f.name for f in dataclasses.fields(cls)}
    return {k: v for k, v in data.items() if k in names}


def rebuilt(cls, data: dict, tuples=(), **parsed):
    """The dataclass `cls` again from `data` as JSON gave it: its known fields (`known`), those
    named in `tuples` made tuples again (JSON gives lists), and `parsed` as the caller read them."""
    fields = known(cls, data)
    fields.update({k: tuple(fields[k]) for k in tuples if fields.get(k) is not None})
    return cls(**fields | parsed)
