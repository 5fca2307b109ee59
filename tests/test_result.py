"""One typed result from the engines to the report (grader/result/): what a check produces reads
back from its JSON as the same types, a row stored by an earlier grader still reads, the JSON
keeps its keys, and one partial-credit rule serves the course's cells and the class report."""

import json

import pytest

from grader.course.scores import part_scores
from grader.exercises import exercise
from grader.report.data import analyse
from grader.result import DEFAULT_HINTS, CaseResult, CheckResult, Mismatch, Speed, SpeedDetails
from grader.result.doctor import DoctorReport, Finding, KernelReport, SiteReport, mistake_of
from grader.result.row import ClassRow
from grader.result.scoring import ALL_OR_NOTHING, PER_CASE, credited
from grader.result.speed import Ceilings, MedianRatio, Throughput

RACE = Finding(
    "race",
    "error",
    "threads 0 and 1 of block 0 touch s[0]",
    kernel="reduce",
    line=7,
    source="s[0] += x",
    thread=(0, 0, 0),
    block=(0, 0, 0),
    other_thread=(1, 0, 0),
    other_block=(0, 0, 0),
    array="s",
    index=(0,),
    fix="Put cuda.syncthreads() between the write and the read.",
    mistake="missing_barrier",  # what its JSON names it (`mistake_of`), so it reads back equal
)
SITE = SiteReport("reduce", 5, "x[i]", "global", "load", "x", 4, sectors=16, ideal=4, suggestion="contiguous_threads")
DOCTOR = DoctorReport(
    "kernel doctor",
    findings=(RACE,),
    kernels=(KernelReport("reduce", (SITE,)),),
    seconds=0.25,
    launches=(((2, 1, 1), (32, 1, 1)),),
    shuffles=(("reduce", "shfl_down_sync", 9, "v += shfl(v)", (16, 8)),),
)
GPU_SPEED = Speed(
    True,
    details=SpeedDetails(
        device="NVIDIA H200",
        dims={"n": 1 << 24},
        yours_ms=0.1,
        speedup_vs_baseline=MedianRatio(2.0, 1.9, 2.1, 40, 0.1),
        fraction_of_target=MedianRatio(0.8, 0.7, 0.9, 40, 0.25),
        throughput=Throughput("GB/s", 2500.0, 0.6),
        ceilings=Ceilings(4170.0, 49.0),
        required_speedup=1.2,
        meets_requirement=True,
        tier="great",
        points=2,
        max_points=3,
        phase_seconds={"timed rounds": 0.7},
        summary="Speed: 0.100 ms ...",
    ),
)


def a_result(verdict="wrong_result", backend="simulator", speed=None, doctor=DOCTOR, score=5.0) -> CheckResult:
    cases = (
        CaseResult("tiny", {"n": 1}, "passed", total=1),
        CaseResult(
            "ragged",
            {"n": 1000},
            verdict,
            "wrong at out[3]",
            line=7,
            source="out[i] = x[i]",
            mismatches=(Mismatch("out", (3,), 1.0, 2.0),),
            wrong=1,
            total=1000,
            max_abs_error=1.0,
        ),
    )
    return CheckResult(
        "vector_add",
        "vector add",
        backend,
        verdict,
        "m",
        "h",
        cases,
        speed or Speed(False, "not measured: no GPU"),
        score,
        10.0,
        7,
        doctor=doctor,
        mistake="missing_barrier" if verdict != "passed" else "",
    )


FORMS = {
    "the doctor's findings": a_result(),
    "a GPU's speed": a_result("passed", "gpu", GPU_SPEED, doctor=None, score=12.0),
    "the simulator, no report": a_result("exception", doctor=None),
}


@pytest.mark.parametrize("result", FORMS.values(), ids=FORMS.keys())
def test_a_result_reads_back_from_its_json_as_the_same_types(result):
    """Does a result that crossed a process or a gradebook come back equal, its doctor's report
    and speed section typed (no reader sees a dict in their place)?"""
    again = CheckResult.from_dict(json.loads(result.to_json()))
    assert again == result
    if again.doctor is not None:
        assert isinstance(again.doctor, DoctorReport) and isinstance(again.doctor.findings[0], Finding)
        assert again.doctor.findings[0].block == (0, 0, 0) and again.engine == "doctor"
    if again.speed.measured:
        assert isinstance(again.speed.details.speedup_vs_baseline, MedianRatio)


def test_the_json_keeps_the_keys_readers_and_stored_gradebooks_know():
    """Are the JSON keys of a result, its speed section and its doctor's report the ones the
    grader wrote before the types (`zerogpu check --json`, gradebooks, report files)?"""
    data = json.loads(a_result("passed", "gpu", GPU_SPEED).to_json())
    assert {"exercise", "verdict", "cases", "speed", "score", "doctor", "passed", "engine", "mistake"} <= set(data)
    assert set(data["speed"]) == {"measured", "reason", "details"}
    details = data["speed"]["details"]
    assert {"device", "speedup_vs_baseline", "tier", "points", "max_points", "summary", "ceilings"} <= set(details)
    assert set(details["speedup_vs_baseline"]) == {"median", "low", "high", "count", "spread"}
    finding = data["doctor"]["findings"][0]
    assert finding["mistake"] == "missing_barrier" and finding["block"] == [0, 0, 0]
    site = data["doctor"]["kernels"][0]["sites"][0]
    assert site["efficiency"] == 0.25 and "headline" in data["doctor"]["kernels"][0]
    assert json.loads(a_result().to_json())["speed"] == {
        "measured": False,
        "reason": "not measured: no GPU",
        "details": {},
    }


OLDER_RESULT = {  # as an earlier grader stored it: no engine, no mistake, findings unnamed, fewer figures
    "exercise": "vector_add",
    "title": "vector add",
    "backend": "gpu",
    "verdict": "passed",
    "message": "All 4 cases passed.",
    "hint": "",
    "cases": [{"name": "tiny", "dims": {"n": 1}, "verdict": "passed", "mismatches": [], "retired": 1}],
    "speed": {
        "measured": True,
        "details": {
            "device": "NVIDIA H200",
            "speedup_vs_baseline": {"median": 1.5, "low": 1.4, "high": 1.6},
            "tier": "good",
            "points": 1,
            "summary": "Speed: ...",
        },
    },
    "score": 11.0,
    "max_score": 13.0,
    "seed": None,
    "doctor": {
        "executor": "kernel doctor",
        "findings": [{"kind": "race", "severity": "warning", "message": "m", "block": [0], "other_block": [1]}],
        "kernels": [],
    },
}
OLDER_ROW = {
    "student": "ada",
    "exercise": "vector_add",
    "submission_sha256": "abc",
    "verdict": "passed",
    "score": 11.0,
    "max_score": 13.0,
    "backend": "gpu",
    "result": OLDER_RESULT,
    "graded_at": 1.0e9,
    "regraded_from": {"verdict": "wrong_result", "score": 0.0, "max_score": 10.0, "regraded_from": None},
}


def test_a_row_an_earlier_grader_wrote_reads_back_typed():
    """Does a gradebook row stored before the types (fields missing, others unknown) read back
    as a ClassRow whose result, doctor's report and speed are typed, and count in a report?"""
    row = ClassRow.from_dict(OLDER_ROW)
    assert row.result.speed.details.speedup_vs_baseline.median == 1.5
    assert row.result.speed.details.method == "" and row.result.speed.details.trusted
    assert mistake_of(row.result.doctor.findings[0]) == "race_between_blocks"
    assert row.regraded_from.verdict == "wrong_result" and row.regraded_from.regraded_from is None
    nothing = ClassRow.from_dict(
        {"student": "bo", "exercise": "vector_add", "verdict": "not_submitted", "result": None}
    )
    assert nothing.result is None
    report = analyse([row, ClassRow.from_dict({**OLDER_ROW, "student": "bo", "regraded_from": None})])
    [stats] = report.exercises
    assert stats.speedups == (1.5, 1.5) and stats.tiers == {"good": 2} and report.devices == ("NVIDIA H200",)
    assert report.students[0].marks["vector_add"].regraded == "was wrong_result, 0/10"


@pytest.mark.parametrize("verdict", ["passed", "too_slow", "wrong_result", "race", "timeout"])
@pytest.mark.parametrize("partial_credit", [PER_CASE, ALL_OR_NOTHING])
def test_the_course_and_the_report_apply_one_partial_credit_rule(verdict, partial_credit):
    """Do a course's correctness cell and the class report give the same points for one
    result, under either partial-credit setting?"""
    result = a_result(verdict, score=5.0 if verdict not in ("passed", "too_slow") else 10.0, doctor=None)
    cell = part_scores(result, exercise("vector_add").spec, partial_credit)["correctness"].points
    row = {"student": "ada", "exercise": "vector_add", "verdict": verdict, "score": result.score}
    row |= {"max_score": 10.0, "backend": "simulator", "result": result.to_dict(), "graded_at": 0.0}
    [stats] = analyse([ClassRow.from_dict(row)], partial_credit=partial_credit).exercises
    assert stats.scores == (cell,) == (credited(result.score, verdict, partial_credit),)
    assert cell == (0.0 if partial_credit == ALL_OR_NOTHING and verdict not in ("passed", "too_slow") else result.score)


def test_a_result_is_counted_under_the_finding_its_feedback_names():
    """Is a result counted under its own mistake unless that one only says what the output
    shows ("nothing written" at n = 1 for a guard `i < n - 1`): then under the first failing
    case that names a cause; a race keeps the doctor's finding; no name at all stays ""?"""
    from dataclasses import replace

    from grader.result import telling_mistake

    def case(name, verdict, mistake):
        return CaseResult(name, {"n": 1}, verdict, "m", mistake=mistake)

    guard = replace(
        a_result("unwritten_output"),
        mistake="nothing_written",
        cases=(
            case("one", "unwritten_output", "nothing_written"),
            case("seven", "unwritten_output", "guard_too_strict"),
        ),
    )
    assert telling_mistake(guard) == "guard_too_strict"
    floor = replace(
        guard,
        verdict="exception",
        mistake="",
        doctor=None,
        cases=(case("one", "exception", ""), case("255", "unwritten_output", "unwritten_tail")),
    )
    assert telling_mistake(floor) == "unwritten_tail", "a result stored before launches named the mistake"
    race = replace(a_result("race"), cases=(case("one", "race", ""), case("two", "wrong_result", "constant_offset")))
    assert telling_mistake(race) == "missing_barrier"
    assert telling_mistake(replace(floor, cases=(case("one", "exception", ""),))) == ""
    assert telling_mistake(replace(guard, cases=guard.cases[:1])) == "nothing_written"
    # wrong values, or a race the doctor did not see, are their own evidence: not a later tail
    tail = case("255", "unwritten_output", "unwritten_tail")
    values = replace(
        guard, verdict="wrong_result", mistake="", doctor=None, cases=(case("one", "wrong_result", ""), tail)
    )
    assert telling_mistake(values) == ""
    unseen_race = replace(values, verdict="race", cases=(case("one", "race", ""), tail))
    assert telling_mistake(unseen_race) == ""


def test_a_hint_comes_from_a_later_case_only_when_the_first_gave_no_values():
    """The check's hint: a case that wrote wrong values or raced is taught its own fix (the
    exercise's hint for its verdict), never the fix of a later case's unwritten tail; a case
    that launched nothing is taught the later case's ("round the block count up")."""
    import time

    from grader.checking.verdicts import summarise

    ex = exercise("vector_add")
    tail = CaseResult("255", {"n": 255}, "unwritten_output", "m", mistake="unwritten_tail", hint="Round up.")
    for verdict in ("wrong_result", "race", "out_of_bounds"):
        first = CaseResult("one", {"n": 1}, verdict, "m")
        result = summarise(ex, "simulator", 7, [first, tail], time.perf_counter())
        own = ex.spec.hints.get(verdict) or DEFAULT_HINTS[verdict]
        assert result.hint == own and result.mistake == "", (verdict, result.hint)
    launched_nothing = CaseResult("one", {"n": 1}, "exception", "m")
    result = summarise(ex, "simulator", 7, [launched_nothing, tail], time.perf_counter())
    assert result.hint == "Round up." and result.mistake == "unwritten_tail"
