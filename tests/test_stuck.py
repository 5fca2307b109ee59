"""Where a check that ran out of time was: the child's snapshot of its threads, the parent's
reading of the answer (untrusted), and the words of the timeout verdict."""

import json
import threading
import time
from pathlib import Path

import pytest

from grader.children import stuck

KERNEL = """\
from numba import cuda


@cuda.jit
def spin(out):
    total = 0
    for k in range(out.size):
        while total >= 0:
            total = (total + k) % 7
    out[0] = total
"""


def test_snapshot_finds_the_line_a_thread_is_stuck_on(tmp_path):
    """A thread spinning in a function compiled from the learner's file: its innermost frame
    there is what the lookout reports; threads elsewhere are not."""
    path = str(tmp_path / "mine.py")
    stop = threading.Event()
    code = compile("def work(stop):\n    while not stop.is_set():\n        pass\n", path, "exec")
    namespace: dict = {}
    exec(code, namespace)
    worker = threading.Thread(target=namespace["work"], args=(stop,), daemon=True)
    worker.start()
    try:
        time.sleep(0.05)
        places = stuck.snapshot(path)
    finally:
        stop.set()
        worker.join()
    assert [(p["line"], p["function"], p["kernel"]) for p in places] in ([(2, "work", False)], [(3, "work", False)])


def test_the_lookout_answers_once_asked(tmp_path):
    written = {}
    lookout = stuck.Lookout(tmp_path, "/nowhere/mine.py", lambda path, data: written.update({path.name: data}))
    lookout.start()
    (tmp_path / stuck.ASKED).touch()
    lookout._thread.join(timeout=5)
    assert written == {stuck.ANSWER: {"places": []}}


class _Running:
    def poll(self):
        return None


def test_a_malformed_or_forged_answer_is_ignored_field_by_field(tmp_path):
    places = [
        {"line": 9, "function": "spin", "kernel": True, "thread": [3], "block": [1], "threads": 2, "engine": "doctor"},
        {"line": -1, "function": "x"},
        {"line": 4, "function": "x" * 500},
        {"line": 5, "function": "launch", "kernel": True, "thread": "everyone", "block": [0], "engine": "gpu!"},
        "not a place",
    ]
    (tmp_path / stuck.ANSWER).write_text(json.dumps({"places": places}))
    found = stuck.ask(tmp_path, _Running())
    assert found[0] == {
        "engine": "doctor",
        "line": 9,
        "function": "spin",
        "kernel": True,
        "thread": [3],
        "block": [1],
        "threads": 2,
    }
    assert found[1] == {
        "engine": None,
        "line": 5,
        "function": "launch",
        "kernel": False,
        "thread": None,
        "block": None,
        "threads": 1,
    }
    assert len(found) == 2
    (tmp_path / stuck.ANSWER).write_text("[not json")
    assert stuck.ask(tmp_path, _Running()) == []


def test_the_message_names_the_line_the_thread_and_the_limit():
    place = {"line": 9, "function": "spin", "kernel": True, "thread": [3], "block": [1], "threads": 3}
    message, line, text, hint = stuck.timeout_message([place], KERNEL, 2.5, "running")
    assert message == (
        "Your kernel `spin` was still running at line 9 (`total = (total + k) % 7`, thread 3 of block 1 "
        "and 2 other threads) when the time limit of 2.5 s ran out, so it was stopped: a loop that never ends?"
    )
    assert (line, text) == (9, "total = (total + k) % 7")
    assert hint.startswith("The `while` loop on line 8 (`while total >= 0:`)") and "gridsize" in hint


def test_a_for_loop_and_host_code_get_their_own_hints():
    hint = stuck.loop_hint(KERNEL, 7)
    assert hint.startswith("The `for` loop on line 7 (`for k in range(out.size):`)") and "range" in hint
    place = {"line": 8, "function": "launch", "kernel": False, "thread": None, "block": None, "threads": 1}
    message, _, _, hint = stuck.timeout_message([place], KERNEL, 10, "running")
    assert message.startswith("Your `launch` was still running at line 8 (`while total >= 0:`) when")
    assert "grid-stride" not in hint and "`break`" in hint
    assert stuck.loop_hint(KERNEL, 10) == "", "a line in no loop"


def test_without_an_answer_the_message_still_states_the_limit():
    message, line, _, hint = stuck.timeout_message([], KERNEL, 60, "running")
    assert message == (
        "Your code made no progress within the time limit of 60 s, so it was stopped: a loop that never ends?"
    )
    assert line is None and hint == ""
    assert "did not start" in stuck.timeout_message([], KERNEL, 30, "starting")[0]


@pytest.mark.parametrize("doctor", ["1", "0"])
def test_a_timeout_names_the_engine_that_was_running(doctor, monkeypatch):
    """A child killed before any outcome leaves no report: the engine comes from where it was,
    the kernel doctor's thread or one of the simulator's (ZEROGPU_DOCTOR=0 reaches the child)."""
    from grader.checking.check import check_file

    monkeypatch.setenv("ZEROGPU_DOCTOR", doctor)
    endless = Path(__file__).parent / "submissions" / "saxpy" / "forgets_stride.py"
    result = check_file("saxpy", endless, case_timeout=3)
    assert result.verdict == "timeout"
    assert result.engine == {"1": "doctor", "0": "simulator"}[doctor], result.to_dict()["doctor"]
