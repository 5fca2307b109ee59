"""Tests run on Numba's CUDA simulator unless ZEROGPU_BACKEND=gpu (the device runs `-m gpu`)."""

import os
import tempfile

os.environ.setdefault("ZEROGPU_BACKEND", "simulator")
# Progress records of test runs must not land in the developer's home.
os.environ["ZEROGPU_HOME"] = tempfile.mkdtemp(prefix="zerogpu-test-home-")

import grader  # noqa: E402,F401  - choose the back end before any test imports numba

from grader.containment.sandbox import unavailable  # noqa: E402

SANDBOX_MISSING = unavailable()
if SANDBOX_MISSING:  # graded tests still run, as `--unsandboxed`; the sandbox's own tests skip
    os.environ["ZEROGPU_UNSANDBOXED"] = "1"


def pytest_report_header(config):
    if SANDBOX_MISSING:
        return f"graded mode runs unsandboxed in these tests: {SANDBOX_MISSING}"
    return None
