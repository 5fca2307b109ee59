"""Run a submission's cases in a child process with a time limit, results out of band."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from grader.cases import PreparedCase
from grader.doctor.integration import with_report
from grader.explain import ErrorInfo
from grader.load import SubmissionError
from grader.exercises import ROOT
from grader.run import Outcome
from grader.sandbox import limits, scrubbed_env


def _current_backend() -> str:
    from numba import config

    return "simulator" if config.ENABLE_CUDASIM else "gpu"

STARTUP_SECONDS = 30.0
SIMULATOR_ADDRESS_SPACE = 16 << 30
"""The simulator's threads each reserve a stack: 1024 threads need ~8 GiB of address space."""
"""Allowance for starting Python and importing numba before the first case."""


@dataclass
class ChildRun:
    outcomes: dict
    """Case index -> Outcome, for every case the child finished."""
    stopped: str | None = None
    """None, or "timeout"/"crashed" when the child did not finish every case."""
    detail: str = ""
    samples: object = None
    """GPU timing samples (grader.gpu_timing.Samples), or an error string, when asked for."""


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def _read_outcome(task_dir: Path, index: int) -> Outcome:
    meta = json.loads((task_dir / f"outcome-{index}.json").read_text())
    with np.load(task_dir / f"outcome-{index}.npz") as data:
        buffers = {k: data[k] for k in data.files}
    error = ErrorInfo.from_dict(meta["error"]) if meta["error"] else None
    return with_report(Outcome(buffers, error, meta["seconds"]), meta)


SPEED_TIMEOUT = 180.0


def _read_samples(task_dir: Path):
    from grader.gpu_timing import Samples

    data = json.loads((task_dir / "speed.json").read_text())
    if "error" in data:
        return data["error"]
    checked = []
    for name, round_index, set_index, filename in data["checked"]:
        with np.load(task_dir / filename) as npz:
            checked.append((name, round_index, set_index, {k: npz[k] for k in npz.files}))
    return Samples(data["seconds"], data["after_end_seconds"], checked, data["rounds"], data["stop_reason"],
                   data.get("phases", {}))


def run_in_child(exercise_id: str, submission: Path, cases: list[PreparedCase],
                 case_timeout: float, env: dict | None = None, time_seed: int | None = None,
                 private=(), device: int | None = None, time_check=(0, 0)) -> ChildRun:
    """Raises SubmissionError when the file cannot be loaded at all."""
    with tempfile.TemporaryDirectory(prefix="zerogpu-") as tmp:
        task_dir = Path(tmp)
        task = {
            "exercise": exercise_id,
            "submission": str(Path(submission).resolve()),
            "cases": [c.index for c in cases],
            "dims": {str(c.index): dict(c.case.dims) for c in cases},
            "time": time_seed is not None,
            "seed": time_seed,
            "check": list(time_check),
            "private": list(private),
        }
        (task_dir / "task.json").write_text(json.dumps(task))
        for c in cases:
            np.savez(task_dir / f"inputs-{c.index}.npz", **c.inputs)
        log = open(task_dir / "child.log", "wb")
        work = task_dir / "work"
        work.mkdir()
        backend = os.environ.get("ZEROGPU_BACKEND") or _current_backend()
        cpu = int(STARTUP_SECONDS + case_timeout * (len(cases) + 1) * 2 + (SPEED_TIMEOUT if time_seed is not None else 0))
        proc = subprocess.Popen(
            [sys.executable, "-m", "grader.child", str(task_dir)],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True, cwd=work,
            env=scrubbed_env(work, ROOT, backend, device) if env is None else env,
            preexec_fn=limits(cpu, SIMULATOR_ADDRESS_SPACE if backend == "simulator" else None),
        )
        outcomes: dict = {}
        deadline = time.monotonic() + STARTUP_SECONDS
        imported = ready = False
        pending = [c.index for c in cases]
        try:
            while pending:
                if not imported and (task_dir / "imported").exists():
                    imported, deadline = True, time.monotonic() + case_timeout
                if not ready and (task_dir / "ready").exists():
                    ready, deadline = True, time.monotonic() + case_timeout
                if (task_dir / f"outcome-{pending[0]}.json").exists():
                    index = pending.pop(0)
                    outcomes[index] = _read_outcome(task_dir, index)
                    deadline = time.monotonic() + case_timeout
                    continue
                if (task_dir / "load-error.json").exists():
                    proc.wait()
                    err = json.loads((task_dir / "load-error.json").read_text())
                    raise SubmissionError(err["verdict"], err["message"], err["line"], err["source"])
                if proc.poll() is not None and not (task_dir / f"outcome-{pending[0]}.json").exists():
                    log.flush()
                    tail = (task_dir / "child.log").read_text(errors="replace")[-2000:]
                    return ChildRun(outcomes, "crashed", _crash_detail(proc.returncode, tail))
                if time.monotonic() > deadline:
                    _kill(proc)
                    limit = case_timeout if imported else STARTUP_SECONDS
                    where = "running a case" if ready else "loading your file" if imported else "starting"
                    return ChildRun(outcomes, "timeout", f"no progress within {limit:.0f} s while {where}")
                time.sleep(0.02)
            samples = None
            if time_seed is not None:
                try:
                    proc.wait(timeout=SPEED_TIMEOUT)
                except subprocess.TimeoutExpired:
                    _kill(proc)
                    return ChildRun(outcomes, None, samples=f"timing did not finish within {SPEED_TIMEOUT:.0f} s")
                if (task_dir / "speed.json").exists():
                    samples = _read_samples(task_dir)
                else:
                    samples = _crash_detail(proc.returncode, "")
            proc.wait(timeout=10)
        finally:
            if proc.poll() is None:
                _kill(proc)
            log.close()
        return ChildRun(outcomes, samples=samples)


def _crash_detail(returncode: int, tail: str) -> str:
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"the process running your kernel was killed by {name}"
    last = tail.strip().splitlines()[-1] if tail.strip() else ""
    return f"the process running your kernel exited with status {returncode} before finishing" + (
        f" (last output: {last[:200]})" if last else "")
