"""Numba's CUDA compiler's refusals in a learner's words: what a GPU needs and the fix.

Shared by the compile check that runs before a CPU engine (grader/compiler/teach.py) and by
the explanation of an exception a GPU's own compile raised (grader/steps/explain.py), so a
kernel a GPU refuses reads the same with or without one.
"""

from __future__ import annotations

import re

ANSI = re.compile(r"\x1b\[[0-9;]*m")
"""Numba colours its errors for a terminal; a learner's message is plain text."""
FILE_LINE = re.compile(r'File "([^"]*)", line (\d+)')
DURING_AT = re.compile(r"During: typing of .* at (.*) \((\d+)\)")
ARGUMENT_COUNT = re.compile(r"(\w+)\(\) takes (\d+) positional arguments? but (\d+) (?:was|were) given")
NO_IMPLEMENTATION = re.compile(
    r"No implementation of function Function\(<[^>]*?(\w+)(?: at 0x\w+)?>\) "
    r"found for signature:\s*>>> ([^\n]*)"
)
_NOISE = (
    "Failed in cuda mode pipeline",
    "During:",
    "No implementation of function",
    ">>>",
    "There are ",
    "- Of which",
    "Overload",
    "With argument",
    "Rejected as",
    "raised from",
    "File ",
    "<source elided>",
    "^",
    "Intrinsic of function",
    "No match",
)

SHAPE_FIX = (
    "`cuda.shared.array` and `cuda.local.array` need a shape Numba knows when it "
    "compiles: an integer, a module-level constant (e.g. `PADDED = TILE + 1` at the top "
    "of the file) or a tuple of those."
)


def why(name: str, text: str, returns: bool) -> str:
    """What a GPU needs, and the fix, for the refusals learners meet most (`name`: the kernel,
    as the sentence shows it)."""
    if returns:
        return (
            f"{name} returns a value, and a CUDA kernel cannot: on a GPU it ends with "
            "nothing to give back (Numba: \"CUDA kernel must have void return type\"). Write "
            "the results into an output array and end the kernel with a bare `return`, or none."
        )
    found = ARGUMENT_COUNT.search(text)
    if found:
        called, takes, given = found.group(1), int(found.group(2)) - 1, int(found.group(3)) - 1
        why = f"`cuda.{called}` takes {takes} arguments, and the kernel gives {given}."
        if called.startswith("shfl") and given > takes:
            why += (
                " Numba's shuffles have no `width` argument (CUDA C's __shfl_*_sync do): a "
                "shuffle always spans the 32 lanes of a warp; to work in groups of 16 lanes, "
                "compute the source lane yourself or stop the offsets at 8."
            )
        return why
    if re.search(r"\blist\(|reflected list|List\(", text):
        return (
            "Python lists do not exist in a kernel (a GPU thread cannot allocate them). "
            "Use separate variables, or a `cuda.local.array(N, float32)` of a constant size."
        )
    found = re.search(r"Unknown attribute '(\w+)' of type Module\(<module '(\w+)'", text)
    if found:
        attr, module = found.groups()
        return (
            f"`{module}.{attr}` does not exist in a kernel: Numba's CUDA target has "
            f"{module}'s scalar functions (sqrt, exp, log, sin, …) but not `{attr}`. "
            "Compute it from those, or with a loop of your own."
        )
    found = re.search(r"Untyped global name '(\w+)'.*<class 'function'>", text)
    if found:
        return (
            f"`{found.group(1)}` is a plain Python function, and a kernel can only call "
            f"device functions. Put `@cuda.jit(device=True)` above `def {found.group(1)}`."
        )
    if "shared.array" in text or "local.array" in text:
        return SHAPE_FIX
    if "Unsupported array index type float" in text:
        return "an array index must be an integer, and `/` gives a float in Python 3: use `//` (or `int(...)`)."
    found = NO_IMPLEMENTATION.search(text)
    if found:
        return (
            f"Numba's CUDA target has no `{found.group(1)}` for these argument types: "
            f"`{found.group(2).strip()}`. Check what the function takes (an int32 flag, not "
            "a bool, for `syncthreads_count`), and convert the argument."
        )
    found = re.search(r"Untyped global name '(\w+)'", text)
    if found:
        return (
            f"a kernel cannot use `{found.group(1)}`: Numba compiles kernels with numbers, "
            "arrays, constants and device functions only."
        )
    detail = next((ln.strip() for ln in text.splitlines() if ln.strip() and not ln.strip().startswith(_NOISE)), "")
    return (
        f"Numba's CUDA compiler says: {detail[:300]}"
        if detail
        else "Numba's CUDA compiler cannot type this line for the launch's argument types."
    )
