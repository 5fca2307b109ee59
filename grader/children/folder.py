"""A task's folder: the names of what the grading process and a child leave there, and the
readers of what comes back.

The grading process writes task.json (last and whole: a waiting child starts on it), plans.json
and one inputs-<i>.npz per case; a checking child leaves `imported`, `ready`, outcome-<i>.npz (the
raw fenced output buffers) and outcome-<i>.json (error, seconds), or load-error.json, and on a
GPU speed.json and timed-<k>.npz. Nothing else a child may write there is ever read, and what is
read is read once, capped (grader/paths.py `read_json`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from grader.doctor.integration import with_report
from grader.paths import read_json
from grader.steps.execute import Outcome
from grader.steps.explain import ErrorInfo

TASK, PLANS, INPUTS = "task.json", "plans.json", "inputs-{}.npz"
"""What the grading process writes: the task, the checked plans, each case's inputs."""
IMPORTED, READY, LOAD_ERROR = "imported", "ready", "load-error.json"
"""What a checking child leaves: its imports done, its kernels rebuilt and checked (the first
case's clock starts), or why a kernel could not be rebuilt."""
OUTCOME_JSON, OUTCOME_NPZ = "outcome-{}.json", "outcome-{}.npz"
SPEED, TIMED = "speed.json", "timed-{}.npz"
TIME_GO, TIME_SKIP = "time-go", "time-skip"
"""What the parent leaves once every case's outcome is in and judged: a child asked to time
waits for one of them, and times only a submission that passed every case."""
DONE, SERVED_ERROR = "done", "served-error.json"
"""What a replayer or a compiling child leaves once it has finished with a task, or failed on it."""
REQUESTS, ANSWERS = "requests.json", "answers.json"
"""A compiling child's task: the kernels to compile (grader/children/compiling.py), its answers."""
COMPILED, ARCH, REFERENCES = "compiled.json", "arch.json", "references-{}.json"
"""A replayer's task: its kernels compiled ahead; what a replayer says on starting: the target
its device's kernels compile for (grader/compiler/prebuilt.py); in its inbox, an exercise's
references compiled ahead (grader/replay/references.py)."""
MAX_COMPILED_BYTES = 64 << 20
"""The most a replayer reads of COMPILED or of one exercise's REFERENCES."""
MAX_REPORT_BYTES = 16 << 20
"""The most the grading process reads of an outcome's or the timing's JSON (a doctor's report
and its findings, the timed rounds' seconds: well under a megabyte)."""


def write_task(folder: Path, fields: dict, task) -> None:
    """A checking child's task folder for `task` (grader/children/task.py): the plans (checked,
    written anew by this process), each case's inputs, then task.json (`fields`), last and whole."""
    (folder / PLANS).write_text(task.message.to_json())
    for c in task.cases:
        np.savez(folder / INPUTS.format(c.index), **c.inputs)
    (folder / "task.tmp").write_text(json.dumps(fields))
    os.replace(folder / "task.tmp", folder / TASK)


def read_outcome(folder: Path, index: int) -> Outcome:
    meta = read_json(folder / OUTCOME_JSON.format(index), MAX_REPORT_BYTES)
    if not isinstance(meta, dict):  # written whole by the grader's own code: never so in a run
        return Outcome(
            {}, ErrorInfo("crashed", f"the case's outcome could not be read back (over {MAX_REPORT_BYTES} bytes)"), 0.0
        )
    with np.load(folder / OUTCOME_NPZ.format(index)) as data:
        buffers = {k: data[k] for k in data.files}
    error = ErrorInfo.from_dict(meta["error"]) if meta["error"] else None
    return with_report(Outcome(buffers, error, meta["seconds"]), meta)


def read_samples(folder: Path):
    """The timing samples a child left (speed.json and its timed outputs), or its error text."""
    from grader.gpu.harness import MIN_ROUNDS, Samples  # noqa: PLC0415 - a GPU's timing: no recording child loads it

    data = read_json(folder / SPEED, MAX_REPORT_BYTES)
    if not isinstance(data, dict):
        return f"the timing could not be read back (over {MAX_REPORT_BYTES} bytes)"
    if "error" in data:
        return data["error"]
    checked = []
    for name, round_index, set_index, filename in data["checked"]:
        if Path(str(filename)).name != filename:  # only a file of the task's own folder
            continue
        with np.load(folder / filename) as npz:
            checked.append((name, round_index, set_index, {k: npz[k] for k in npz.files}))
    return Samples(
        data["seconds"],
        data["after_end_seconds"],
        checked,
        data["rounds"],
        data["stop_reason"],
        data.get("phases", {}),
        data.get("sampled_with"),
        [n for n in data.get("sparse", []) if n in data["seconds"]],
        MIN_ROUNDS,  # what the child times with, and what this process drew the check from
        {n: [float(t) for t in ts] for n, ts in data.get("earlier", {}).items() if n in data["seconds"]},
    )
