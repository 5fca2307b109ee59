# exercise: vector_add
# expect: forbidden
"""Calls libc through ctypes reached via numba: open, read and system outside every audit hook."""
from numba.core.typing.ctypes_utils import ctypes

libc = ctypes.CDLL(None)
libc.system(b"cat /proc/1/environ > zerogpu-escaped; touch /tmp/zerogpu-escaped")
fd = libc.open(b"solutions/vector_add.py", 0)


def launch(a, b, c):
    pass
