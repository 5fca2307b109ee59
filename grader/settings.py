"""Every default and limit the grader states in more than one place, every `ZEROGPU_`
environment variable it reads (one function each, its doc line saying what it does), and the
options one check runs with (`CheckOptions`).

A command, the notebook facade or an nbgrader cell builds one `CheckOptions` and passes it down
to `check_file`; nothing below them restates a default."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

CASE_TIMEOUT = 60.0
"""Seconds each case of a check may take (`--timeout`, `ZEROGPU_CASE_TIMEOUT` in a course)."""
CLASS_CASE_TIMEOUT = 30.0
"""Seconds each case may take when `zerogpu grade` grades a class (`--timeout`): an endless
loop holds a worker this long, not CASE_TIMEOUT's minute. The slowest case of a bundled solution
took 9.0 s on Numba's simulator (histogram, where the kernel doctor declines a kernel; 2.1 s
matmul_tiled, the others under 2) and 1.2 s on the kernel doctor (2-core machine, 2026-12-07,
`ZEROGPU_DOCTOR=0 zerogpu check ID solutions/ID.py --graded --json`, each case's `seconds`):
30 s leaves a loaded machine three times that."""


# -- time limits: how long the grader waits for each part of a check ----------------------------
STARTUP_SECONDS = 30.0
"""A child's start (Python, numba, the grader imported), and a checking child's rebuilding and
compile-checking of the kernels before its first case: the grader's own work, never a case's."""
SPEED_TIMEOUT = 180.0
"""A GPU's timed rounds of one check (they stop at 1.5 s by themselves: grader/gpu/harness.py)."""
ANSWER_SECONDS = 2.0
"""How long a late child is given to say where its code is before it is killed anyway."""
KILL_WAIT_SECONDS = 10.0
"""How long a killed child may take to go (a GPU driver can hold a dying process briefly); past
it the child is left to a reaper thread rather than holding up the grader."""
EXIT_GRACE = 1.0
"""How long a recording child's pipe may stay silent after it exited before it counts as no answer."""
EXPECTED_TIMEOUT = 300.0
"""How long a timed check waits for its expected output (an oracle process that died sends none)."""
COMPILE_ANSWER_SECONDS = 120.0
"""How long a child waits for the compile helper's answer about one kernel."""
SPARE_CPU_SECONDS = 3600
"""A spare child's CPU limit until its task arrives; it then lowers it to the task's own."""
REPLAYER_CPU_SECONDS = 7 * 24 * 3600
"""A replayer's CPU limit, for its whole life (each check's wall clock is the parent's to watch)."""


@dataclass(frozen=True)
class CheckOptions:
    """How one submission file is checked (grader/checking/check.py `check_file`)."""

    seed: int | None = None
    """The inputs' seed; None: a fresh one."""
    case_timeout: float = CASE_TIMEOUT
    """Seconds each case may take before the check is stopped as `timeout`."""
    graded: bool = False
    """Graded mode: the grading host's secret is mixed into every input, the children run in
    bubblewrap, the seed is not shown."""
    device: int | None = None
    """The GPU a class-grading worker checks on; None: the default device."""
    private: tuple = ()
    """Folders no submission may read (a class folder, the gradebook), as strings."""
    secret: int | None = None
    """Graded mode: the task's own secret (`task_secret`), for a worker on another machine;
    None: the host's."""
    bench_secret: int | None = None
    """Graded mode: the secret a class run's benchmark inputs are drawn with, one per exercise
    (`benchmark_secret`), so that every check of the run is timed on the same base inputs, in the
    same kept buffers; None: the task's secret."""
    unsandboxed: bool = False
    """Graded mode without bubblewrap (`--unsandboxed`): every result says so."""
    task_timeout: float | None = None
    """A class task's wall-clock seconds from hand-out to its result (`--task-timeout`); None:
    its exercise's `time_limit` (grader/checking/verdicts.py)."""


def variable(name: str) -> str:
    """The value of `ZEROGPU_<name>`, stripped; "" when unset."""
    return os.environ.get(f"ZEROGPU_{name}", "").strip()


def forced_backend() -> str:
    """`ZEROGPU_BACKEND=gpu|simulator`: the engine to use whatever the machine has ("" unset)."""
    return variable("BACKEND").lower()


def doctor_allowed() -> bool:
    """`ZEROGPU_DOCTOR=0`: no kernel doctor; the simulator runs every case without a GPU."""
    return variable("DOCTOR") != "0"


def compute_capability() -> str:
    """`ZEROGPU_COMPUTE_CAPABILITY` ("8.6", "sm_80"): the GPU a CPU engine compiles for ("" unset: sm_90)."""
    return variable("COMPUTE_CAPABILITY").lower().removeprefix("sm_")


def compile_cache_dir() -> Path:
    """`ZEROGPU_COMPILE_CACHE`: where kernels compiled by Numba's CUDA compiler are remembered
    (grader/compiler/), else `$XDG_CACHE_HOME/zerogpu/compiled`, else `~/.cache/zerogpu/compiled`."""
    if os.environ.get("ZEROGPU_COMPILE_CACHE"):
        return Path(os.environ["ZEROGPU_COMPILE_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "zerogpu" / "compiled"


def data_dir() -> Path:
    """`ZEROGPU_HOME`: the user's grader data (progress, the grading secret, GPU ceilings), else
    `$XDG_DATA_HOME/zerogpu`, else `~/.local/share/zerogpu`."""
    if os.environ.get("ZEROGPU_HOME"):
        return Path(os.environ["ZEROGPU_HOME"])
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "zerogpu"


def secret_file() -> Path | None:
    """`ZEROGPU_SECRET_FILE`: the file holding the grading secret (None: the data dir's)."""
    return Path(os.environ["ZEROGPU_SECRET_FILE"]) if os.environ.get("ZEROGPU_SECRET_FILE") else None


def take_secret() -> str | None:
    """`ZEROGPU_SECRET`: the grading secret's text, taken out of the environment as it is read,
    so no process started after inherits it (None: unset)."""
    return os.environ.pop("ZEROGPU_SECRET", None) or None


def unsandboxed() -> bool:
    """`ZEROGPU_UNSANDBOXED=1`: what `--unsandboxed` says, for runs that pass no flag (the test
    suite on a machine without bubblewrap); every result still says it was unsandboxed."""
    return variable("UNSANDBOXED") == "1"


def case_timeout() -> float:
    """`ZEROGPU_CASE_TIMEOUT`: seconds per case of an nbgrader autograder cell (a course's
    nbgrader_config.py sets it), else `CASE_TIMEOUT`."""
    try:
        return float(variable("CASE_TIMEOUT") or CASE_TIMEOUT)
    except ValueError:
        return CASE_TIMEOUT


def course_dir() -> str | None:
    """`ZEROGPU_COURSE_DIR`: the nbgrader course whose autograder is running (its
    nbgrader_config.py sets it for the cells' kernels); None outside one."""
    return os.environ.get("ZEROGPU_COURSE_DIR") or None
