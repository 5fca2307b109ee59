"""Set-up files agree with each other."""

import re
import tomllib

from grader.exercises import ROOT


def _name_and_spec(requirement: str) -> tuple[str, str]:
    requirement = requirement.split("#")[0].strip()
    match = re.match(r"([A-Za-z0-9_.\-]+)(\[[^\]]*\])?\s*(.*)", requirement)
    return match.group(1).lower().replace("_", "-"), match.group(3).replace(" ", "")


def test_environment_yml_lists_the_same_dependencies_as_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = project["dependencies"] + project["optional-dependencies"]["test"]
    from_pyproject = dict(_name_and_spec(r) for r in wanted)
    from_conda = {}
    text = (ROOT / "environment.yml").read_text()
    for line in text.split("\ndependencies:", 1)[1].splitlines():
        match = re.match(r"\s+- ([A-Za-z][^:]*)$", line)
        if match and not match.group(1).startswith(("python", "pip", "-e")):
            name, spec = _name_and_spec(match.group(1))
            from_conda[name] = spec
    assert from_conda == from_pyproject


def test_numpy_is_pinned_below_2_5():
    """numba-cuda 0.30.4 calls np.row_stack, which numpy 2.5 removed."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    numpy = next(r for r in project["dependencies"] if r.startswith("numpy"))
    assert "<2.5" in numpy
