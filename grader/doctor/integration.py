"""Where the grader meets the kernel doctor: which executor runs a case, and how the doctor's
report travels (child JSON -> parent) into the CheckResult.

- `case_executor()`: the function that runs one case — the doctor (falling back to Numba's
  simulator for code it cannot run) when there is no GPU, grader.steps.execute.execute on a GPU.
  `ZEROGPU_DOCTOR=0` turns the doctor off (the simulator runs everything, as before).
- `outcome_fields(outcome)` / `with_report(outcome, fields)`: the report in outcome-<i>.json.
- `result_report(outcomes)`: the merged report of a check's cases, for CheckResult.doctor.

The report is JSON only on the pipe from the child (`outcome_fields`, `with_report`); from
there to every reader it is a DoctorReport (grader/result/doctor.py).
"""

from __future__ import annotations

from grader.doctor.summary import DoctorReport, merge
from grader.settings import doctor_allowed
from grader.doctor.efficiency import forget
from grader.steps.execute import execute


def doctor_enabled() -> bool:
    from numba import config

    return bool(config.ENABLE_CUDASIM) and doctor_allowed()


def case_executor():
    """execute(spec, launch, inputs, dims, learner_files=()) -> Outcome, for this machine.
    Called once per check: the doctor's memory profiling starts afresh for it."""
    if doctor_enabled():
        from grader.doctor.execute import execute_or_simulate  # noqa: PLC0415 - the doctor loads with a check, not `import grader`

        forget()
        return execute_or_simulate
    return execute


def outcome_fields(outcome) -> dict:
    """Extra JSON fields of an outcome written by the grading child."""
    report = getattr(outcome, "report", None)
    return {"doctor": report.to_dict()} if report is not None else {}


def with_report(outcome, fields: dict):
    """The outcome the parent read back, with the doctor's report when there is one."""
    data = fields.get("doctor")
    if not data:
        return outcome
    from grader.doctor.execute import DoctorOutcome  # noqa: PLC0415 - the doctor loads with a check, not `import grader`

    return DoctorOutcome(outcome.buffers, outcome.error, outcome.seconds, DoctorReport.from_dict(data))


def result_report(outcomes) -> DoctorReport | None:
    """One report for all the cases of a check (None when the doctor was not involved)."""
    return merge(getattr(o, "report", None) for o in outcomes)


def where_it_ran(report: DoctorReport | None) -> str:
    """How a CheckResult without a GPU names its executor."""
    if report is not None and report.ran_on_doctor:
        return "the kernel doctor, Zero to GPU's CPU simulator (no GPU)"
    return "Numba's CUDA simulator (no GPU)"
