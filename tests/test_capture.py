"""A child's output is kept within bounds: its first and last 64 KiB and a count of the rest."""

import subprocess
import sys

from grader.children.capture import KEEP, CappedOutput


def test_a_flood_is_capped_and_counted():
    flood = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys\nsys.stdout.write('H' * 1000)\n"
            "for _ in range(64): sys.stdout.write('x' * (1 << 20))\n"
            "sys.stdout.write('THE END')",
        ],
        stdout=subprocess.PIPE,
    )
    out = CappedOutput(flood.stdout)
    flood.wait(timeout=60)
    out.wait(10)
    assert out.total == 1000 + 64 * (1 << 20) + 7
    assert len(out.head) == KEEP and len(out.tail) == KEEP
    text = out.text()
    assert text.startswith("H" * 1000) and text.endswith("THE END")
    assert f"{out.total - 2 * KEEP} bytes left out" in text


def test_short_output_is_whole():
    proc = subprocess.Popen([sys.executable, "-c", "print('hello')"], stdout=subprocess.PIPE)
    out = CappedOutput(proc.stdout)
    proc.wait(timeout=30)
    out.wait(10)
    assert out.text() == "hello\n" and out.dropped == 0
