"""Host code on the kernel doctor: for notebook cells that launch kernels themselves.

    result = grader.doctor.run(convert, picture)   # convert(picture) with its kernels on the doctor

Without a GPU, `run` calls `fn` with its kernels (and `cuda.to_device`, `device_array`,
`copy_to_host`...) re-bound to the doctor, which runs them 30-300 times faster than Numba's
simulator, so a lesson can show real sizes. A race, a missing atomic, a divergent barrier or a
read of unwritten memory raises KernelDoctorError with the doctor's message (an index out of
range raises as it would on the simulator); code the doctor cannot run goes to the simulator,
whose recorded accesses still raise on a race (grader/backend/races.py).
On a GPU, or with ZEROGPU_DOCTOR=0, it is plainly `fn(*args, **kwargs)`.
"""

from __future__ import annotations

from grader.doctor.errors import Unsupported
from grader.doctor.integration import doctor_enabled
from grader.doctor.kernel import session
from grader.backend.races import recording
from grader.doctor.findings import SEVERITY_ERROR


class KernelDoctorError(RuntimeError):
    """The kernel doctor found a problem (the message says which, where and what to do)."""


def run(fn, *args, **kwargs):
    """`fn(*args, **kwargs)`, its kernels on the kernel doctor when there is no GPU."""
    from grader.doctor.rebind import doctor_launch  # noqa: PLC0415 - only a lesson's `doctor.run`; out of `import grader`

    if not doctor_enabled():
        return fn(*args, **kwargs)
    try:
        rebound = doctor_launch(fn)
        with session(profile=False) as s:
            value = rebound(*args, **kwargs)
    except Unsupported:
        return _on_the_simulator(fn, args, kwargs)
    _raise_first_error(s.findings.results())
    return value


def _on_the_simulator(fn, args, kwargs):
    """`fn` on Numba's simulator, its accesses recorded: a race still raises."""
    from grader.doctor.fallback import race_findings  # noqa: PLC0415 - only code the doctor cannot run; out of `import grader`

    with recording() as record:
        value = fn(*args, **kwargs)
    _raise_first_error(race_findings(record.clashes.values()))
    return value


def _raise_first_error(findings) -> None:
    errors = [f for f in findings if f.severity == SEVERITY_ERROR]
    if errors:
        raise KernelDoctorError(errors[0].message)
