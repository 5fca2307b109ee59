"""GPU turns (grader/gpu/turns.py) across real processes, each with descriptors of its own as a
grading child gets them: exclusive excludes everyone, shared admits shared, a waiting writer
holds new readers back, and a holder that dies lets its turn go."""

import os
import queue
import signal
import subprocess
import sys
import threading

import pytest

from grader.exercises import ROOT
from grader.gpu.turns import NO_TURNS, TurnFolder

HOLDER = """
import sys
from grader.gpu.turns import Turns
gate, gpu, kind = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
turns = Turns(gate, gpu, on_wait=lambda waiting: print("waiting" if waiting else "served", flush=True))
print("asking", flush=True)
with getattr(turns, kind)():
    print("holding", flush=True)
    sys.stdin.readline()
print("left", flush=True)
"""
SOON = 0.5
"""Seconds in which a process that could have its turn has said so (it is already running)."""


class Holder:
    """A process that asks for a turn, says what happens, and leaves when told."""

    def __init__(self, folder: TurnFolder, kind: str):
        fds = folder.open_for_child(0)
        self.proc = subprocess.Popen(
            [sys.executable, "-c", HOLDER, str(fds[0]), str(fds[1]), kind],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            pass_fds=fds,
        )
        for fd in fds:
            os.close(fd)
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        assert self.next(30) == "asking"

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(line.strip())

    def next(self, timeout: float = SOON):
        try:
            return self.lines.get(timeout=timeout)
        except queue.Empty:
            return None

    def holds(self, timeout: float = 10) -> bool:
        """Does it hold its turn (now, or within `timeout`)?"""
        while (line := self.next(timeout)) is not None:
            if line == "holding":
                return True
        return False

    def waits(self) -> bool:
        """Is it waiting (it said so, and does not get its turn soon)?"""
        return self.next() == "waiting" and self.next() is None

    def leave(self):
        self.proc.stdin.write("\n")
        self.proc.stdin.flush()
        assert self.next(10) == "left"
        self.proc.wait(timeout=10)


@pytest.fixture
def folder():
    made = TurnFolder()
    holders = []
    made.holder = lambda kind: holders.append(Holder(made, kind)) or holders[-1]
    yield made
    for h in holders:
        if h.proc.poll() is None:
            h.proc.kill()
            h.proc.wait()
    made.remove()


def test_exclusive_excludes_shared_and_exclusive(folder):
    writer = folder.holder("exclusive")
    assert writer.holds()
    reader, other_writer = folder.holder("shared"), folder.holder("exclusive")
    assert reader.waits() and other_writer.waits()
    writer.leave()
    assert reader.next(10) == "served" or other_writer.next(10) == "served"


def test_shared_admits_shared(folder):
    first, second = folder.holder("shared"), folder.holder("shared")
    assert first.holds() and second.holds()
    first.leave()
    second.leave()


def test_a_waiting_writer_holds_new_readers_back(folder):
    """Writer preference: a child waiting to time is not starved by a stream of shared users."""
    reader = folder.holder("shared")
    assert reader.holds()
    writer = folder.holder("exclusive")
    assert writer.waits()
    late_reader = folder.holder("shared")
    assert late_reader.waits(), "a reader got in past a waiting writer"
    reader.leave()
    assert writer.holds()
    assert late_reader.next() is None, "the late reader shares the writer's turn"
    writer.leave()
    assert late_reader.holds()
    late_reader.leave()


def test_a_killed_holder_lets_its_turn_go(folder):
    writer = folder.holder("exclusive")
    assert writer.holds()
    reader = folder.holder("shared")
    assert reader.waits()
    os.kill(writer.proc.pid, signal.SIGKILL)
    writer.proc.wait()
    assert reader.holds()
    reader.leave()


def test_turns_of_one_device_do_not_hold_up_another(folder):
    fds = folder.open_for_child(1)
    try:
        writer = folder.holder("exclusive")  # device 0
        assert writer.holds()
        other = folder.turns(1)
        with other.exclusive() as waited:
            assert waited < SOON
        other.close()
    finally:
        for fd in fds:
            os.close(fd)


def test_a_reader_asking_to_write_is_refused_not_deadlocked(folder):
    turns = folder.turns(0)
    with turns.shared():
        with pytest.raises(RuntimeError, match="while holding a shared"):
            with turns.exclusive():
                pass
    with turns.exclusive():  # after leaving, as harness.measure does
        pass
    assert [kind for kind, what in turns.log if what == "take"] == ["shared", "exclusive"]
    turns.close()


def test_no_turns_do_nothing():
    with NO_TURNS.shared() as waited, NO_TURNS.exclusive():  # nested: nothing is held
        assert waited == 0.0
    assert not NO_TURNS and NO_TURNS.log == []


def test_a_compile_steps_out_of_a_shared_turn_and_back_in(folder):
    """What every JIT compile of a grading child does (turns.compile_outside_turns): while it
    compiles, a check waiting to time may have the GPU; the turn is taken again after."""
    turns = folder.turns(0)
    with turns.shared():
        writer = folder.holder("exclusive")
        assert writer.waits()
        with turns.stepped_out():
            assert turns.held is None
            assert writer.next(10) == "served" and writer.holds()
            threading.Timer(1.0, writer.leave).start()
        assert turns.held == "shared" and turns.waited["shared"] > 0.5
    with turns.exclusive():
        with turns.stepped_out():  # the timed rounds never let the GPU go
            reader = folder.holder("shared")
            assert reader.waits()
    assert reader.holds()
    reader.leave()
    turns.close()


HOOKED = """
import grader
from types import SimpleNamespace
from numba.cuda import codegen, dispatcher
from grader.gpu.turns import TurnFolder, compile_outside_turns

seen = []
dispatcher._Kernel.__init__ = lambda self, *a, **k: seen.append(("compile", turns.held))
codegen.CUDACodeLibrary.get_cubin = lambda self, cc=None: seen.append(("link", turns.held)) or b"cubin"
folder = TurnFolder()
turns = folder.turns(0)
compile_outside_turns(turns)
compile_outside_turns(turns)  # once only: not wrapped twice
library = SimpleNamespace(_cubin_cache={}, _ensure_cc=lambda cc: (9, 0, "a"))
with turns.shared():
    dispatcher._Kernel.__init__(object())
    codegen.CUDACodeLibrary.get_cubin(library)
    library._cubin_cache[(9, 0, "a")] = b"cubin"
    codegen.CUDACodeLibrary.get_cubin(library)  # linked already: no stepping out
with turns.exclusive():
    dispatcher._Kernel.__init__(object())
print(seen, [kind for kind, what in turns.log if what == "take"])
folder.remove()
"""


def test_numbas_compiler_and_linker_step_out_of_a_shared_turn_not_the_exclusive_one():
    """The GPU back end's hooks, wired to stand-ins for Numba's compile and link (no GPU here)."""
    env = {**os.environ, "ZEROGPU_BACKEND": "gpu"}
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    out = subprocess.run([sys.executable, "-c", HOOKED], capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
    assert out.stdout.strip() == (
        "[('compile', None), ('link', None), ('link', 'shared'), ('compile', 'exclusive')] "
        "['shared', 'shared', 'shared', 'exclusive']"
    ), out.stdout + out.stderr
