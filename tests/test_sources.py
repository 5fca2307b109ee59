"""Each recorded kernel's text taken from the grader's own copy of the hand-in
(grader/replay/sources.py): the one text every engine runs."""

import pytest

from grader.replay.sources import HandIn, NotInHandIn, pinned

FILE = '''from numba import cuda


@cuda.jit(device=True)
def twice(x):
    return 2 * x


@cuda.jit
def add(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = twice(a[i]) + b[i]


def make(scale):
    @cuda.jit
    def scaled(a, c):
        c[0] = a[0] * scale

    return scaled


def host(a, b, c):
    c[:] = a + b
'''


def described(name: str, line: int, **globals_) -> dict:
    return {"name": name, "filename": "/tmp/elsewhere.py", "firstline": line, "globals": globals_, "options": {}}


def test_a_kernel_gets_the_text_of_its_def_with_its_decorator():
    """Is a kernel's text the hand-in's `def` at its line, decorator included, whatever it carried?"""
    desc = described("add", 9)
    desc["source"] = "def add(a, b, c):\n    c[:] = numpy.add(a, b)\n"
    kernels = pinned({"k0_add": desc}, HandIn(FILE, "vector_add.py"))
    text = kernels["k0_add"]["source"]
    assert text.startswith("@cuda.jit\ndef add(a, b, c):") and "twice(a[i]) + b[i]" in text
    assert "numpy" not in text and kernels["k0_add"]["filename"] == "vector_add.py"
    assert desc["source"].startswith("def add"), "the description given is not changed in place"


def test_device_functions_and_nested_defs_are_found_too():
    """Are a device function the kernel calls, and a kernel defined inside a factory, read from the file?"""
    kernel = described("add", 9, twice=["device", described("twice", 4)])
    kernels = pinned({"k0_add": kernel, "k1_scaled": described("scaled", 17)}, HandIn(FILE, "f.py"))
    assert kernels["k0_add"]["globals"]["twice"][1]["source"].startswith("@cuda.jit(device=True)\ndef twice(x):")
    assert kernels["k1_scaled"]["source"].startswith("@cuda.jit\ndef scaled(a, c):")  # dedented


@pytest.mark.parametrize(
    "name, line",
    [
        ("add", 10),  # the `def` line, not where its decorator starts
        ("twice", 9),  # another def's line
        ("add", 999),  # past the end of the file
        ("exec_made", 1),  # no def there at all
        ("add", 0),
        ("add", "9"),
    ],
)
def test_a_kernel_the_hand_in_does_not_define_there_is_refused(name, line):
    """Is a description naming a line or a name the hand-in does not have refused, never guessed?"""
    with pytest.raises(NotInHandIn, match="write each kernel"):
        pinned({"k0": described(name, line)}, HandIn(FILE, "f.py"))


def test_a_lambda_kernel_is_refused():
    desc = described("<lambda>", 9)
    desc["lambda"] = True
    with pytest.raises(NotInHandIn, match="lambda"):
        pinned({"k0": desc}, HandIn(FILE, "f.py"))


def test_a_host_function_of_the_file_is_its_own_text():
    """A recording may name any `def` of the file: what runs is that def's own text, which
    numba-cuda then compiles or refuses like any kernel's."""
    kernels = pinned({"k0": described("host", 24)}, HandIn(FILE, "f.py"))
    assert kernels["k0"]["source"] == "def host(a, b, c):\n    c[:] = a + b\n"


def test_a_file_python_cannot_parse_defines_nothing():
    with pytest.raises(NotInHandIn):
        pinned({"k0": described("add", 1)}, HandIn("def add(:\n", "f.py"))
