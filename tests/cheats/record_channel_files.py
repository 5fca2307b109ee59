# exercise: vector_add
# expect: unwritten_output
"""Makes the files a grading process used to wait on hostile: a named pipe at load-error.json,
links at where-asked and where.json pointing out of the folder, and the flag that stopped the
parent's clock; its kernel does nothing. Nothing here is read: the check must end, quickly."""
from numba import sys

os = sys.modules["os"]

for folder in (os.getcwd(), os.path.dirname(os.getcwd())):
    for name, make in (
        ("load-error.json", lambda p: os.mkfifo(p)),
        ("where-asked", lambda p: os.symlink("/etc/passwd", p)),
        ("where.json", lambda p: os.symlink("/nonexistent/where.json", p)),
        ("waiting-for-gpu", lambda p: os.close(os.open(p, os.O_CREAT | os.O_WRONLY))),
    ):
        try:
            make(os.path.join(folder, name))
        except OSError:
            pass
from numba import cuda


@cuda.jit
def nothing(a, b, c):
    pass


def launch(a, b, c):
    nothing[1, 1](a, b, c)
