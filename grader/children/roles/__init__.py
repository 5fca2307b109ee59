"""The child's own side: one module per role (`python -m grader.children FOLDER --role ROLE`,
grader/children/__main__.py). `replay` runs a task's cases (and, on a GPU, its timing); `spare`
does the slow start-up before its task exists, then replays it; `record` records a
submission's `launch` on placeholders; `serve` is a GPU's replayer for a whole run, `compile`
a compiling child. Every role writes only through `common.writing()`, and reads nothing of a
task folder but what the grading process wrote (grader/children/folder.py)."""

ROLES = ("replay", "spare", "record", "serve", "compile")
"""What a child is: a task's replay, a spare waiting for one, a recording, a GPU's replayer
serving a run, a compiling child serving a run."""
