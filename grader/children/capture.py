"""A child's stdout and stderr, read through a pipe and kept within bounds: the first and
last KEEP bytes, and a count of the rest. A flood of output costs the grader no memory and
no disk; nothing in it is ever read as a verdict (only shown as a crash's last line)."""

from __future__ import annotations

import threading

KEEP = 64 << 10
CHUNK = 1 << 16


class CappedOutput:
    def __init__(self, stream, keep: int = KEEP):
        self.keep = keep
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._read, args=(stream,), name="zerogpu-output", daemon=True)
        self._thread.start()

    def _read(self, stream) -> None:
        try:
            while True:
                chunk = stream.read1(CHUNK) if hasattr(stream, "read1") else stream.read(CHUNK)
                if not chunk:
                    return
                with self._lock:
                    room = self.keep - len(self.head)
                    if room > 0:
                        self.head += chunk[:room]
                        chunk = chunk[room:]
                    self.tail += chunk
                    if len(self.tail) > self.keep:
                        self.dropped += len(self.tail) - self.keep
                        del self.tail[: len(self.tail) - self.keep]
        except (OSError, ValueError):  # the pipe closed under us: what was read is kept
            pass
        finally:
            try:
                stream.close()
            except OSError:
                pass

    def wait(self, seconds: float) -> None:
        """Until the child's end of the pipe closes (bounded: a leftover process may hold it)."""
        self._thread.join(seconds)

    @property
    def total(self) -> int:
        with self._lock:
            return len(self.head) + self.dropped + len(self.tail)

    def text(self) -> str:
        with self._lock:
            middle = f"\n[... {self.dropped} bytes left out ...]\n".encode() if self.dropped else b""
            return bytes(self.head + middle + self.tail).decode(errors="replace")
