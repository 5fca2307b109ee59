"""A hint per verdict, used when an exercise's spec has no more specific one."""

DEFAULT_HINTS = {
    "syntax_error": "Fix the line Python points at; the check runs once the file reads as Python.",
    "exception": "Read the message and the line: the kernel or `launch` stopped with an error.",
    "wrong_result": (
        "Compare the first wrong element with what you expected: is the index right, and is "
        "every thread computing the element it owns?"
    ),
    "out_of_bounds": (
        "The grid usually has more threads than elements. Compute the global index, then "
        "`if i < n:` before touching memory."
    ),
    "unwritten_output": (
        "Some elements were never written: launch enough blocks to cover every element "
        "(blocks = ceil(n / threads_per_block)), or loop with a grid-stride loop."
    ),
    "timeout": "The kernel did not finish in time: look for a loop whose condition never changes.",
    "race": (
        "Runs on the same input gave different answers. Put cuda.syncthreads() between "
        "threads writing shared memory and other threads reading it; set shared memory before "
        "reading it (it starts as garbage); use cuda.atomic.add when many threads update one "
        "element."
    ),
    "forbidden": "Do the work in your own @cuda.jit kernel, using only numba, numpy and math.",
    "too_slow": "Correct, but slower than the threshold: see the speed section for where the time goes.",
    "crashed": "The process running your kernel died: an out-of-range access on a GPU, or memory exhausted.",
}
