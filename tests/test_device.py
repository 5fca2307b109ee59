"""grader/gpu/ceilings.py without a GPU: how the copy ceiling combines its measurements."""

import json
import subprocess

import grader.gpu.ceilings as device


def test_copy_ceiling_is_the_best_of_every_process_and_a_failed_child_loses_nothing(monkeypatch):
    """The driver's memcpy speed differs from one process to the next (3.65-4.27 TB/s on one
    H200): the ceiling is the fastest figure of any process, each method's figures are kept
    per process, and a child that times out or prints nonsense only adds nothing."""
    here = {"cudaMemcpy": 3.70e12, "copy kernel": 3.84e12}
    children = iter(
        [
            json.dumps({"cudaMemcpy": 4.27e12, "copy kernel": 3.85e12}),
            subprocess.TimeoutExpired("python", 300),
            "Traceback (most recent call last): ...",
        ]
    )
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
    assert len(calls) == 3 and all(cmd[-2:] == ["grader.gpu.ceilings", "--copy-once"] for cmd in calls)
    assert best == 4.27e12
    assert parts == {"cudaMemcpy": 4.27e12, "copy kernel": 3.85e12}
    assert runs == {"cudaMemcpy": [3.70e12, 4.27e12], "copy kernel": [3.84e12, 3.85e12]}


def test_ceilings_come_from_the_cache_or_from_a_child_process(monkeypatch, tmp_path):
    """A grading process must not hold a CUDA context while its child is timed: the ceilings
    are read from the cache, or measured by `python -m grader.gpu.ceilings --measure`."""
    ident = {"name": "NVIDIA Test", "driver": "999.1", "sms": 4, "compute_capability": [9, 0]}
    monkeypatch.setattr(device, "identity", lambda: dict(ident))
    monkeypatch.setattr(device, "data_dir", lambda: tmp_path)
    measured = {**ident, "copy_bandwidth": 4.0e12, "method": device.METHOD}
    calls = []

    def fake_run(cmd, **kwargs):
        calls.append(cmd)
        device._cache_path(ident).write_text(json.dumps(measured))  # as the child does
        return subprocess.CompletedProcess(cmd, 0, stdout=f"a numba warning\n{json.dumps(measured)}\n", stderr="")

    monkeypatch.setattr(device.subprocess, "run", fake_run)
    assert device.cached_ceilings() is None
    assert device.ceilings() == measured
    assert calls == [[device.sys.executable, "-m", "grader.gpu.ceilings", "--measure"]]
    assert device.ceilings() == measured and len(calls) == 1, "the second call reads the cache"
    assert device.ceilings(refresh=True) == measured and len(calls) == 2

    stale = {**measured, "method": {"copy_bandwidth": "an older way"}}
    device._cache_path(ident).write_text(json.dumps(stale))
    assert device.cached_ceilings() is None, "a cache measured another way is measured again"


def test_a_failed_measurement_says_why(monkeypatch, tmp_path):
    monkeypatch.setattr(device, "identity", lambda: {"name": "NVIDIA Test", "driver": "1"})
    monkeypatch.setattr(device, "data_dir", lambda: tmp_path)
    monkeypatch.setattr(
        device.subprocess,
        "run",
        lambda cmd, **kw: subprocess.CompletedProcess(
            cmd, 1, stdout="", stderr="Traceback ...\nCudaAPIError: out of memory\n"
        ),
    )
    try:
        device.ceilings()
    except RuntimeError as err:
        assert "out of memory" in str(err)
    else:
        raise AssertionError("a failed measurement must raise")
