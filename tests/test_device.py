"""grader/device.py without a GPU: how the copy ceiling combines its measurements."""
import json
import subprocess

import grader.device as device


def test_copy_ceiling_is_the_best_of_every_process_and_a_failed_child_loses_nothing(monkeypatch):
    """The driver's memcpy speed differs from one process to the next (3.65-4.27 TB/s on one
    H200): the ceiling is the fastest figure of any process, each method's figures are kept
    per process, and a child that times out or prints nonsense only adds nothing."""
    here = {"cudaMemcpy": 3.70e12, "copy kernel": 3.84e12}
    children = iter([
        json.dumps({"cudaMemcpy": 4.27e12, "copy kernel": 3.85e12}),
        subprocess.TimeoutExpired("python", 300),
        "Traceback (most recent call last): ...",
    ])
    calls = []

    def fake_run(cmd, **kwargs):
        calls.append(cmd)
        out = next(children)
        if isinstance(out, Exception):
            raise out
        return subprocess.CompletedProcess(cmd, 0, stdout=f"some warning\n{out}\n", stderr="")

    monkeypatch.setattr(device, "measure_copy_once", lambda: dict(here))
    monkeypatch.setattr(device.subprocess, "run", fake_run)
    best, parts, runs = device.measure_copy_bandwidth(processes=4)
    assert len(calls) == 3 and all(cmd[-2:] == ["grader.device", "--copy-once"] for cmd in calls)
    assert best == 4.27e12
    assert parts == {"cudaMemcpy": 4.27e12, "copy kernel": 3.85e12}
    assert runs == {"cudaMemcpy": [3.70e12, 4.27e12], "copy kernel": [3.84e12, 3.85e12]}
