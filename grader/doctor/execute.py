"""Run one case on the kernel doctor: the grader's fenced buffers, the doctor's executor.

`execute` has grader.steps.execute.execute's signature and returns its Outcome (plus the doctor's
report), so the judge works unchanged: outputs sit between canaries and start poisoned; an
index outside an array becomes an `out_of_bounds` ErrorInfo naming thread, block, array and
line; a race, a missing atomic, a divergent barrier or a read of unwritten shared memory
becomes a `race` ErrorInfo (the judge reports an error before looking at values).
`execute_or_simulate` falls back to Numba's simulator when the doctor meets code it cannot run.
"""

from __future__ import annotations

import ast
import time
from dataclasses import dataclass, replace

import numpy as np

from grader.doctor.access_patterns import slow_memory_findings
from grader.doctor.errors import OutOfBounds, Unsupported
from grader.doctor.findings import SEVERITY_ERROR, VERDICT, mistake_of
from grader.doctor.race_findings import fmt
from grader.doctor.kernel import session
from grader.doctor.arrays import global_array
from grader.doctor.rebind import doctor_launch
from grader.doctor.summary import DOCTOR, SIMULATOR, DoctorReport, kernel_reports
from grader.doctor.sites import SITES
from grader.steps.explain import ErrorInfo, bounds_hint, explain_exception
from grader.sentinels import PAD, fenced_buffer
from grader.steps.execute import Outcome
from grader.steps.execute import execute as simulate
from grader.authoring.spec import Dims, Spec
from grader.backend.races import recording
from grader.doctor.fallback import blame_the_grader, race_findings
from grader.steps.load import load_launch
from grader import pysource


@dataclass
class DoctorOutcome(Outcome):
    report: DoctorReport | None = None


def doctor_arguments(spec: Spec, inputs: dict, dims: Dims):
    """(kwargs for launch, fenced host buffers of the outputs), on the doctor's memory."""
    kwargs, buffers = {}, {}
    for param in spec.params:
        if param in spec.scalars:
            kwargs[param.name] = np.dtype(param.dtype).type(inputs[param.name])
        elif param.role == "in":
            data = np.array(inputs[param.name], copy=True, order="C")
            kwargs[param.name] = global_array(data, param.name)
        else:
            shape = param.shape_for(dims)
            size = int(np.prod(shape))
            buf = fenced_buffer(param.dtype, size, param.init)
            buffers[param.name] = buf
            kwargs[param.name] = global_array(buf, param.name, slice(PAD, PAD + size), shape)
    return kwargs, buffers


def execute(spec: Spec, launch, inputs: dict, dims: Dims, learner_files=(), profile: bool = True) -> DoctorOutcome:
    """One call of `launch` on the doctor. Raises Unsupported (before or while running) when
    the doctor cannot run it; never raises for a learner's bug."""
    run = doctor_launch(launch)
    kwargs, buffers = doctor_arguments(spec, inputs, dims)
    error = None
    start = time.perf_counter()
    with session(profile) as s:
        try:
            run(**kwargs)
        except Unsupported:
            raise
        except OutOfBounds as exc:
            error = out_of_bounds(exc, s.where)
        except BaseException as exc:  # noqa: BLE001 - a learner's bug must become a verdict
            if isinstance(exc, KeyboardInterrupt):
                raise
            error = _explained(exc, learner_files, kwargs, s.where)
    seconds = time.perf_counter() - start
    findings = tuple(s.findings.results())
    if error is None:
        error = _as_error(next((f for f in findings if f.severity == SEVERITY_ERROR), None), findings)
    kernels = kernel_reports(s.efficiency)
    findings += tuple(slow_memory_findings(kernels))
    report = DoctorReport(DOCTOR, "", findings, kernels, round(seconds, 4), tuple(s.launches), s.findings.shuffles())
    return DoctorOutcome({k: b.copy() for k, b in buffers.items()}, error, seconds, report)


def execute_or_simulate(spec: Spec, launch, inputs: dict, dims: Dims, learner_files=()) -> DoctorOutcome:
    """The doctor where it can run the code, else Numba's simulator (the report says which)."""
    try:
        return execute(spec, launch, inputs, dims, learner_files)
    except Unsupported as why:
        return simulate_recorded(spec, launch, inputs, dims, learner_files, str(why))


def simulate_recorded(spec: Spec, launch, inputs: dict, dims: Dims, learner_files, why: str) -> DoctorOutcome:
    """The case on Numba's simulator, its accesses recorded: a race fails it as on the doctor."""
    with recording() as record:
        outcome = simulate(spec, launch, inputs, dims, learner_files)
    findings = tuple(race_findings(record.clashes.values()))
    error = blame_the_grader(outcome.error, why)
    if error is None:
        error = _as_error(next((f for f in findings if f.severity == SEVERITY_ERROR), None), findings)
    return DoctorOutcome(outcome.buffers, error, outcome.seconds, DoctorReport(SIMULATOR, why, findings))


def execute_source(spec: Spec, source: str, filename: str, inputs: dict, dims: Dims) -> DoctorOutcome:
    """Load a submission's source (policy checks included) and run one case on the doctor."""
    launch = load_launch(spec, source, filename)
    return execute(spec, launch, inputs, dims, learner_files=(filename,))


# -- errors in a learner's words -----------------------------------------------------------------
def _who(where) -> str:
    if not where:
        return "your code"
    thread, block, _ = where
    return f"thread {fmt(thread)} of block {fmt(block)}"


def out_of_bounds(exc: OutOfBounds, where) -> ErrorInfo:
    site = SITES[exc.site]
    verb = "wrote" if exc.write or site.kind in ("store", "atomic") else "read"
    if site.kind == "update":
        verb = "updated"
    name, index, shape, axis = exc.array, exc.index, exc.shape, exc.axis
    if site.array.isidentifier():  # the name in the learner's line (a scratch array's own is generic)
        name = site.array
    shown = f"`{name}[{', '.join(map(str, index))}]`"
    value, size = index[axis], shape[axis]
    if len(shape) == 1:
        extent, guard = f"{size} element" + ("" if size == 1 else "s"), "`if i < n:`"
    else:
        noun = {0: "row", 1: "column"}.get(axis, f"index along axis {axis}") if len(shape) == 2 else f"axis {axis}"
        extent = (
            (f"{size} {noun}" + ("" if size == 1 else "s"))
            if len(shape) == 2 and axis < 2
            else f"size {size} on axis {axis}"
        )
        guard = "`if row < rows and col < cols:`"
    if value < 0:
        wrapped = value + size
        where_to = (
            f"`{name}` counted from the end (index {wrapped})"
            if wrapped >= 0
            else "an address before the start of the array"
        )
        message = (
            f"{_who(where)} {verb} {shown}: a negative index. Numba does not stop you: on a "
            f"GPU this silently touches {where_to}, which is never what you meant. Test "
            "`j >= 0` before using j."
        )
        hint = (
            "Guard both ends: a neighbour's index can go below 0 as well as past the end "
            "(`if 0 <= j < n:` before reading x[j])."
        )
        before = _one_before(site.statement, value)
        if before:  # `x[b - 1]` where b is 0: the first has nothing before it
            name, step = before
            guard = f"`if {name} > 0:`" if step == 1 else f"`if {name} >= {step}:`"
            message = message.replace(
                "Test `j >= 0` before using j.", f"Read it only where `{name}` is at least {step}."
            )
            hint = (
                f"Guard that read with {guard}: where `{name}` is {value + step}, `{name} - {step}` "
                f"is {value}, and there is nothing before the first element."
            )
        thread, block = (where[0], where[1]) if where else (None, None)
        return ErrorInfo(
            "out_of_bounds", message, "IndexError", site.line, site.statement, thread, block, hint, "negative_index"
        )
    else:
        message = (
            f"{_who(where)} {verb} {shown}, but `{name}` has {extent} — is your bounds guard right (e.g. {guard})?"
        )
    thread, block = (where[0], where[1]) if where else (None, None)
    hint = bounds_hint(name, value, size, guard)
    return ErrorInfo(
        "out_of_bounds", message, "IndexError", site.line, site.statement, thread, block, hint, "missing_bounds_guard"
    )


def _one_before(statement: str, value: int) -> tuple | None:
    """(name, step) when `statement` indexes with `name - step` (a constant step) and `value`
    is what that gives for a `name` of 0 up to step - 1: the element before the first."""
    try:
        tree = pysource.parse(statement.rstrip(":"))
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if not isinstance(node, ast.Subscript):
            continue
        for index in node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]:
            if (
                isinstance(index, ast.BinOp)
                and isinstance(index.op, ast.Sub)
                and isinstance(index.left, ast.Name)
                and isinstance(index.right, ast.Constant)
                and type(index.right.value) is int
                and 0 <= value + index.right.value < index.right.value
            ):
                return index.left.id, index.right.value
    return None


def _explained(exc, learner_files, kwargs, where) -> ErrorInfo:
    info = explain_exception(exc, learner_files, kwargs)
    if where and info.thread is None:
        message = info.message.replace("your code", _who(where), 1)
        return replace(info, message=message, thread=where[0], block=where[1])
    return info


def _as_error(finding, findings) -> ErrorInfo | None:
    if finding is None:
        return None
    more = sum(1 for f in findings if f.severity == SEVERITY_ERROR) - 1
    extra = f" ({more} more problem{'s' if more > 1 else ''}: `zerogpu doctor` lists them all.)" if more > 0 else ""
    return ErrorInfo(
        VERDICT[finding.kind],
        finding.message + extra,
        "",
        finding.line,
        finding.source,
        finding.thread,
        finding.block,
        finding.fix,
        mistake_of(finding),
    )
