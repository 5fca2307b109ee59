"""The kernel doctor's diagnoses, one defect at a time: does each defective kernel in
tests/doctor_cases get its diagnosis at the marked line, and its fixed twin none at all?"""

import re
from pathlib import Path

import numpy as np
import pytest

from grader.doctor.efficiency import forget
from grader.doctor.execute import execute
from grader.doctor.findings import VERDICT
from grader.steps.judge import judge_case
from grader.steps.load import load_namespace
from grader.authoring.spec import Case, Spec

CASES = Path(__file__).parent / "doctor_cases"
FINDINGS = set(VERDICT)


def _inputs(params, dims, rng):
    inputs = {}
    for p in params:
        if getattr(p, "role", None) != "in":
            continue
        shape = p.shape_for(dims)
        if p.dtype == "uint8":
            inputs[p.name] = rng.integers(0, 256, shape, dtype=np.uint8)
        elif p.dtype.startswith("int"):
            inputs[p.name] = rng.integers(-100, 100, shape).astype(p.dtype)
        else:
            inputs[p.name] = rng.standard_normal(shape).astype(p.dtype)
    return inputs


def load_case(path: Path):
    """(expected kind, marked lines, spec, launch, inputs, expected outputs or None)."""
    source = path.read_text()
    kind = re.fullmatch(r"# expect: (\w+)", source.splitlines()[0]).group(1)
    marked = [n for n, line in enumerate(source.splitlines(), 1) if line.rstrip().endswith("# <- here")]
    namespace = load_namespace(source, str(path))
    params, dims = namespace["PARAMS"], namespace["DIMS"]
    inputs = _inputs(params, dims, np.random.default_rng(3))
    spec = Spec(
        id="doctor_case",
        stage=0,
        title=path.stem,
        lesson="",
        params=params,
        make_inputs=lambda d, rng: inputs,
        cases=(Case(path.stem, dims),),
        tolerance=lambda i, e: 1e-5 * (1 + np.abs(e)),
    )
    want = namespace["expected"](**inputs) if "expected" in namespace else None
    return kind, marked, spec, namespace["launch"], inputs, want


def run(path: Path):
    kind, marked, spec, launch, inputs, want = load_case(path)
    forget()  # every case profiles its kernel afresh
    outcome = execute(spec, launch, inputs, dict(spec.cases[0].dims), learner_files=(str(path),))
    return kind, marked, spec, outcome, want


def pairs():
    for bad in sorted(CASES.glob("*_bad.py")):
        yield pytest.param(bad, id=bad.stem[: -len("_bad")])


PAIRS = list(pairs())


@pytest.mark.parametrize("bad", PAIRS)
def test_defect_is_diagnosed_at_its_line(bad):
    """Does the defective kernel get its diagnosis, pointing at the marked line?"""
    kind, marked, _, outcome, _ = run(bad)
    report = outcome.report
    assert report.ran_on_doctor, report.reason
    assert marked, f"{bad.name} marks no line with `# <- here`"
    if kind in FINDINGS:
        hits = [f for f in report.findings if f.kind == kind and {f.line, f.other_line} & set(marked)]
        assert hits, [(f.kind, f.line, f.other_line, f.message) for f in report.findings]
        if hits[0].severity == "error":
            assert outcome.error is not None and outcome.error.verdict == VERDICT[kind], outcome.error
        assert "thread" in hits[0].message.lower() and hits[0].array in hits[0].message or kind == "divergent_barrier"
    elif kind == "out_of_bounds":
        assert outcome.error is not None and outcome.error.verdict == "out_of_bounds", outcome.error
        assert outcome.error.line in marked and outcome.error.thread is not None
    elif kind in ("uncoalesced", "bank_conflicts"):
        fix = {"uncoalesced": "swap_indices", "bank_conflicts": "pad_shared"}[kind]
        sites = [s for k in report.kernels for s in k.sites if s.line in marked and s.suggestion == fix]
        assert sites, [(s.line, s.text, s.pattern, s.suggestion) for k in report.kernels for s in k.sites]
        if kind == "uncoalesced":
            assert sites[0].efficiency < 0.5
        else:
            assert sites[0].degree_max >= 16
        assert any("swap the indices" in t or "Pad each row" in t for k in report.kernels for t in k.suggestions)
    else:
        pytest.fail(f"{bad.name}: unknown expectation {kind}")


@pytest.mark.parametrize("bad", PAIRS)
def test_fixed_twin_is_clean(bad):
    """Does the same kernel, fixed, run with no finding, no suggestion and the right output?"""
    fixed = bad.with_name(bad.name.replace("_bad.py", "_fixed.py"))
    kind, _, spec, outcome, want = run(fixed)
    assert kind == "clean"
    assert outcome.error is None, outcome.error
    report = outcome.report
    assert report.ran_on_doctor and not report.findings, [f.message for f in report.findings]
    assert not [t for k in report.kernels for t in k.suggestions]
    if want is not None:
        result = judge_case(spec, spec.cases[0], outcome, want, {k: 1e-5 * (1 + np.abs(v)) for k, v in want.items()})
        assert result.verdict == "passed", result.message


def test_negative_index_says_it_wraps():
    """Is a negative index named as such, not as 'past the end'?"""
    _, _, _, outcome, _ = run(CASES / "negative_index_bad.py")
    assert "x[-1]" in outcome.error.message and "negative" in outcome.error.message


def test_missing_atomic_names_both_threads_and_the_fix():
    _, _, _, outcome, _ = run(CASES / "missing_atomic_bad.py")
    finding = next(f for f in outcome.report.findings if f.kind == "missing_atomic")
    assert finding.thread != finding.other_thread or finding.block != finding.other_block
    assert "cuda.atomic.add(out" in finding.message and "out[0] += ..." in finding.message


@pytest.mark.parametrize("name", ["race_between_blocks", "race_read_then_write_blocks"])
def test_race_between_blocks_names_both_blocks(name):
    """Is a race between blocks reported as such, with both threads, both blocks and the fix?"""
    _, _, _, outcome, _ = run(CASES / f"{name}_bad.py")
    finding = next(f for f in outcome.report.findings if f.kind == "race")
    assert finding.block != finding.other_block
    assert "Race between blocks" in finding.message and "same launch" in finding.message
    for thread, block in ((finding.thread, finding.block), (finding.other_thread, finding.other_block)):
        assert f"thread {thread[0]} of block {block[0]}" in finding.message
    assert f"`out[{finding.index[0]}]`" in finding.message
    assert f"line {finding.line}" in finding.message and f"line {finding.other_line}" in finding.message


def test_unwritten_local_names_the_thread_the_element_and_the_fix():
    """Is a read of a local element the thread never wrote a wrong result, named as such?"""
    _, _, _, outcome, _ = run(CASES / "unwritten_local_bad.py")
    finding = next(f for f in outcome.report.findings if f.kind == "uninitialised_local")
    assert outcome.error.verdict == "wrong_result"
    assert finding.message.startswith("Thread 0 of block 0 updated `part[0]`")
    assert "cuda.local.array" in finding.message and "`part[k] = 0`" in finding.message


RUN_SUMS = '''# expect: clean
import numpy as np
from numba import cuda

from grader.authoring.spec import Array

PARAMS = (Array("x", "float32", ("n",)), Array("out", "float32", ("m",), role="out"))
DIMS = {"n": 4096, "m": 1024}


@cuda.jit
def sums(x, out):
    q = cuda.grid(1)
    if q < out.size:
        out[q] = {body}


def launch(x, out):
    sums[(out.size + 127) // 128, 128](x, out)
'''


@pytest.mark.parametrize(
    "body, fix",
    [
        ("x[4 * q] + x[4 * q + 1] + x[4 * q + 2] + x[4 * q + 3]", ""),  # every element of the sectors used
        ("x[4 * q] + x[4 * q + 1]", "contiguous_threads"),  # half of every sector fetched for nothing
    ],
)
def test_runs_of_neighbours_read_by_sibling_sites(tmp_path, body, fix):
    """Lanes 4 elements apart are wasteful alone, but 4 sites reading x[4q + k] together use
    every element of the sectors they fetch (the stencil target's pattern): no fix then."""
    path = tmp_path / "runs.py"
    path.write_text(RUN_SUMS.replace("{body}", body))
    _, _, _, outcome, _ = run(path)
    assert outcome.error is None and outcome.report.ran_on_doctor, outcome.report.reason
    fixes = {s.suggestion for k in outcome.report.kernels for s in k.sites if s.text.startswith("x[")}
    assert fixes == {fix}


ROW_RUN_SUMS = '''# expect: clean
import numpy as np
from numba import cuda, float32

from grader.authoring.spec import Array

PARAMS = (Array("x", "float32", ("rows", "n")), Array("out", "float32", ("rows", "m"), role="out"))
DIMS = {"rows": 4, "n": 512, "m": 128}


@cuda.jit
def sums(x, out):
    q, row = cuda.grid(2)
    if row < out.shape[0] and q < out.shape[1]:
        out[row, q] = {body}


def launch(x, out):
    sums[(1, out.shape[0]), 128](x, out)
'''


@pytest.mark.parametrize(
    "body, fix",
    [
        ("x[row, 4 * q] + x[row, 4 * q + 1] + x[row, 4 * q + 2] + x[row, 4 * q + 3]", ""),
        ("x[row, 4 * q] + x[row, 4 * q + 1]", "contiguous_threads"),
    ],
)
def test_runs_of_neighbours_along_a_row_read_by_sibling_sites(tmp_path, body, fix):
    """The same along the rows of a 2-D array (x[row, 4q + k]: the matmul_tiled target's
    element-wise twin of a 16-byte load)."""
    path = tmp_path / "row_runs.py"
    path.write_text(ROW_RUN_SUMS.replace("{body}", body))
    _, _, _, outcome, _ = run(path)
    assert outcome.error is None and outcome.report.ran_on_doctor, outcome.report.reason
    fixes = {s.suggestion for k in outcome.report.kernels for s in k.sites if s.text.startswith("x[")}
    assert fixes == {fix}


@pytest.mark.parametrize(
    "bad",
    [p for p in PAIRS if p.values[0].name.split("_bad")[0] not in ("uncoalesced", "bank_conflicts", "past_the_end")],
)
def test_finding_carries_the_fix_that_becomes_the_hint(bad):
    """Does each finding say what to change, and does a case failed by it carry that fix as
    its hint (never the verdict's generic one)?"""
    kind, _, spec, outcome, _ = run(bad)
    hits = [f for f in outcome.report.findings if f.kind == kind] if kind in FINDINGS else []
    assert all(f.fix for f in outcome.report.findings)
    if outcome.error is not None:
        result = judge_case(spec, spec.cases[0], outcome, {}, {})
        assert result.hint == outcome.error.hint and result.hint
        if hits and hits[0].severity == "error":
            assert result.hint == hits[0].fix


def test_stores_of_the_same_value_by_many_threads_are_a_warning_with_a_headline():
    """A grid-stride loop without its stride: the right output, so no error, but a warning
    naming the element most threads stored to and the fix; shown in a passed headline."""
    _, marked, _, outcome, _ = run(CASES / "stride_less_loop_bad.py")
    assert outcome.error is None
    (finding,) = [f for f in outcome.report.findings if f.kind == "duplicate_write"]
    assert finding.severity == "warning" and finding.line in marked
    assert finding.message.startswith("`out[127]` was written by 128 threads in one launch")
    assert "499 elements of `out`" in finding.message and "range(i, n, cuda.gridsize(1))" in finding.fix
    assert finding.headline.startswith("out[127] was written by 128 threads: each element should be written once")


def test_different_values_stored_by_a_blocks_threads_are_a_race_that_counts_them():
    _, _, _, outcome, _ = run(CASES / "block_output_every_thread_bad.py")
    assert outcome.error.verdict == "race"
    finding = outcome.report.findings[0]
    assert finding.kind == "race" and finding.thread != finding.other_thread
    assert "stored a different value there" in finding.message
    assert "In all, 64 threads stored to `out[0]`." in finding.message
    assert "if cuda.threadIdx.x == 0:" in finding.fix


STORES = '''# expect: clean
import numpy as np
from numba import cuda, float32

from grader.authoring.spec import Array

PARAMS = (Array("x", "float32", ("n",)), Array("out", "float32", ("n",), role="out", init="zeros"))
DIMS = {"n": 128}


@cuda.jit
def kernel(x, out):
    i = cuda.grid(1)
    tile = cuda.shared.array(64, float32)
{body}


def launch(x, out):
    kernel[2, 64](x, out)
    {again}
'''


@pytest.mark.parametrize(
    "body, again",
    [
        ("    out[i] = 0.0\n    out[i] = x[i]\n    out[i] = x[i]", ""),  # one thread, three stores
        ("    cuda.atomic.add(out, 0, 1.0)\n    cuda.atomic.max(out, 1, x[i])", ""),  # atomics
        ("    out[i] = x[i]", "kernel[2, 64](x, out)"),  # two launches, one store each
        ("    tile[cuda.threadIdx.x] = 1.0\n    tile[0] = 1.0", ""),  # shared memory: not counted
        (  # ordered by a barrier: thread 0 stores a block's slot, thread 1 stores it again after
            "    if cuda.threadIdx.x == 0:\n        out[cuda.blockIdx.x] = 5.0\n    cuda.syncthreads()\n"
            "    if cuda.threadIdx.x == 1:\n        out[cuda.blockIdx.x] = 5.0",
            "",
        ),
    ],
    ids=["one_thread", "atomics", "two_launches", "shared", "barrier"],
)
def test_stores_that_do_not_collide(tmp_path, body, again):
    """One thread storing an element several times, atomics, one store per launch, shared
    memory and stores ordered by a barrier: no finding."""
    path = tmp_path / "stores.py"
    path.write_text(STORES.replace("{body}", body).replace("{again}", again))
    _, _, _, outcome, _ = run(path)
    assert outcome.error is None and outcome.report.ran_on_doctor, outcome.report.reason
    assert not outcome.report.findings, [f.message for f in outcome.report.findings]


def test_blocks_storing_one_value_to_one_element_are_counted_between_blocks(tmp_path):
    """Thread 0 of every block stores the same flag: a warning naming all 4 blocks' stores."""
    path = tmp_path / "flag.py"
    body = "    if cuda.threadIdx.x == 0:\n        out[0] = 1.0"
    path.write_text(STORES.replace("{body}", body).replace("{again}", "").replace("kernel[2, 64]", "kernel[4, 64]"))
    _, _, _, outcome, _ = run(path)
    (finding,) = outcome.report.findings
    assert finding.kind == "duplicate_write" and finding.block == (3,) and finding.thread == (0,)
    assert finding.message.startswith("`out[0]` was written by 4 threads in one launch")
    assert "if i == 0:" in finding.fix


def test_a_store_beside_atomics_between_blocks_says_what_to_do():
    """Is block 0's plain store to a total that other blocks add to atomically named as such
    (the store, the atomic, both blocks), with the fix of setting the total before the launch?"""
    _, _, _, outcome, _ = run(CASES / "store_beside_atomics_bad.py")
    finding = next(f for f in outcome.report.findings if f.kind == "race")
    assert finding.block != finding.other_block
    assert "stores to `out[0]`" in finding.message and "updates it with an atomic" in finding.message
    assert "before the launch" in finding.fix and outcome.error.hint == finding.fix
