"""grader/settings.py: every default written once, every ZEROGPU_ variable read there, one
options type from the command down to check_file."""

import ast
import re
from pathlib import Path

import pytest

from grader import settings
from grader.settings import CASE_TIMEOUT, CLASS_CASE_TIMEOUT, CheckOptions

ROOT = Path(__file__).resolve().parent.parent


def environment_reads(path: Path) -> list[str]:
    """`ZEROGPU_X` for every `os.environ.get("ZEROGPU_X")`, `os.environ["ZEROGPU_X"]`,
    `os.environ.pop(...)`, `os.environ.setdefault(...)` or `os.getenv(...)` in `path`."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        key = None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
            owner = ast.unparse(node.func.value)
            if (owner == "os.environ" and node.func.attr in ("get", "pop", "setdefault")) or ast.unparse(
                node.func
            ) == "os.getenv":
                key = node.args[0]
        elif isinstance(node, ast.Subscript) and ast.unparse(node.value) == "os.environ":
            if isinstance(node.ctx, ast.Load):
                key = node.slice
        if isinstance(key, ast.Constant) and str(key.value).startswith("ZEROGPU_"):
            found.append(key.value)
    return found


def test_only_settings_reads_zerogpu_variables():
    """Does any module but grader/settings.py read a ZEROGPU_ variable itself (a get, a
    subscript, a pop, a setdefault, getenv), rather than through its one function?"""
    elsewhere = {
        str(p.relative_to(ROOT)): reads
        for p in sorted((ROOT / "grader").rglob("*.py"))
        if p.name != "settings.py" and (reads := environment_reads(p))
    }
    assert elsewhere == {}


def test_the_scan_sees_each_way_of_reading_a_variable(tmp_path):
    """Would the scan above notice each form of a read (and leave a write alone)?"""
    sneaky = tmp_path / "sneaky.py"
    sneaky.write_text(
        "import os\n"
        "a = os.environ.get('ZEROGPU_A')\n"
        "b = os.environ['ZEROGPU_B']\n"
        "c = os.environ.pop('ZEROGPU_C', None)\n"
        "d = os.getenv('ZEROGPU_D')\n"
        "e = os.environ.setdefault('ZEROGPU_E', '1')\n"
        "os.environ['ZEROGPU_F'] = '1'\n"
    )
    assert sorted(environment_reads(sneaky)) == ["ZEROGPU_A", "ZEROGPU_B", "ZEROGPU_C", "ZEROGPU_D", "ZEROGPU_E"]


def test_every_variable_read_is_documented_where_it_is_read():
    """Does each variable settings.py reads have a function whose doc line names it?"""
    text = (ROOT / "grader" / "settings.py").read_text()
    named = set(re.findall(r'variable\("(\w+)"\)', text)) | set(re.findall(r'"ZEROGPU_(\w+)"', text))
    documented = {
        name
        for fn in vars(settings).values()
        if callable(fn) and fn.__doc__
        for name in re.findall(r"`ZEROGPU_(\w+)", fn.__doc__)
    }
    assert named and named <= documented


def test_the_per_case_limit_is_written_once():
    """Is 60 (seconds per case) written nowhere in grader/ or bench/ but in settings.py as a
    default: not in an argument's default, not in a fallback of an environment read?"""
    pattern = re.compile(r"(default=|timeout: float = |or |\")60(\.0)?\b")
    found = [
        f"{p.relative_to(ROOT)}:{n}"
        for folder in ("grader", "bench")
        for p in sorted((ROOT / folder).rglob("*.py"))
        if p.name != "settings.py"
        for n, line in enumerate(p.read_text().splitlines(), 1)
        if pattern.search(line)
    ]
    assert found == []


@pytest.mark.parametrize(
    ("command", "limit"),
    [
        (["check", "vector_add", "f.py"], CASE_TIMEOUT),
        (["grade", "DIR"], CLASS_CASE_TIMEOUT),
        (["doctor", "vector_add", "f.py"], CASE_TIMEOUT),
    ],
)
def test_each_command_defaults_to_its_one_per_case_limit(command, limit):
    """Does each command that takes --timeout default to its limit in settings (a class's
    CLASS_CASE_TIMEOUT for `grade`, CASE_TIMEOUT elsewhere), and say it in its help?"""
    from grader.cli import build_parser

    parser = build_parser()
    assert parser.parse_args(command).timeout == limit
    sub = next(a for a in parser._subparsers._group_actions[0].choices.values() if a.prog.endswith(command[0]))
    assert f"default {limit:g}" in sub.format_help().replace("\n", " ")


def test_a_class_case_limit_is_shorter_than_a_checks():
    """Is a class's per-case limit under a single check's, so an endless loop holds a worker less?"""
    assert 0 < CLASS_CASE_TIMEOUT < CASE_TIMEOUT


@pytest.mark.parametrize(
    ("value", "seconds"), [("", CASE_TIMEOUT), ("12", 12.0), (" 7.5 ", 7.5), ("soon", CASE_TIMEOUT)]
)
def test_a_course_cell_reads_its_limit_from_the_environment(monkeypatch, value, seconds):
    """Does ZEROGPU_CASE_TIMEOUT set an autograder cell's limit, unset or unreadable the default?"""
    monkeypatch.setenv("ZEROGPU_CASE_TIMEOUT", value)
    assert settings.case_timeout() == seconds


def test_the_secret_leaves_the_environment_when_read(monkeypatch):
    """Is ZEROGPU_SECRET taken out of the environment as it is read (no child inherits it)?"""
    import os

    monkeypatch.setenv("ZEROGPU_SECRET", "s3")
    assert settings.take_secret() == "s3"
    assert "ZEROGPU_SECRET" not in os.environ and settings.take_secret() is None


def test_switches_read_as_documented(monkeypatch):
    """Do the on/off variables mean what their doc lines say, in either case of their values?"""
    monkeypatch.setenv("ZEROGPU_BACKEND", " Simulator ")
    monkeypatch.setenv("ZEROGPU_DOCTOR", "0")
    monkeypatch.setenv("ZEROGPU_UNSANDBOXED", "1")
    monkeypatch.setenv("ZEROGPU_COMPUTE_CAPABILITY", "SM_86")
    assert settings.forced_backend() == "simulator"
    assert not settings.doctor_allowed() and settings.unsandboxed()
    assert settings.compute_capability() == "86"
    monkeypatch.delenv("ZEROGPU_DOCTOR")
    monkeypatch.setenv("ZEROGPU_UNSANDBOXED", "0")
    assert settings.doctor_allowed() and not settings.unsandboxed()


def test_check_file_takes_one_options_object_and_refuses_an_unknown_field(tmp_path):
    """Is a misspelt option refused at once (before any child starts), not silently dropped?"""
    from grader.checking.check import check_file

    with pytest.raises(TypeError):
        check_file("vector_add", tmp_path / "f.py", options=CheckOptions(seed=1), case_timout=5)


def test_options_are_frozen_and_travel_whole():
    """Is CheckOptions immutable and comparable, so one built by a command can be passed
    down (and to a Dask worker) unchanged?"""
    import pickle
    from dataclasses import FrozenInstanceError, replace

    options = CheckOptions(case_timeout=5, graded=True, private=("/class",))
    with pytest.raises(FrozenInstanceError):
        options.seed = 3
    assert pickle.loads(pickle.dumps(options)) == options
    assert replace(options, seed=3).case_timeout == 5
