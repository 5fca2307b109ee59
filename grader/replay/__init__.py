"""Record, then replay: a grade is decided where no submission code runs.

`record` runs in the sandboxed recording child: the submission's `launch` is called on
placeholders (device arrays with a shape and a dtype and no data) and what it does is written
down as a launch plan (`plan`). The grading process validates the plan; `replay` turns it back
into a `launch` made of grader code alone, whose kernels are rebuilt from their `def` and
compiled or run by the engine in use (the kernel doctor, Numba's simulator, a GPU).
"""
