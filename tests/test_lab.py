"""The learner's lab (grader/learner/lab.py, lessons.py, terminal.py; `zerogpu lab`, `make lab`):
their own copies of the lessons, kept and updated without losing work; a Jupyter configuration
of the lab's own; terminals that find `zerogpu` whatever the shell's start-up files do."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from grader.cli import main
from grader.exercises import ROOT
from grader.learner import lab, lessons, terminal

CURRICULUM = ROOT / "curriculum"


def lesson(folder: Path, name: str, code: str) -> Path:
    """A lesson as shipped: code cells without outputs."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# A lesson"), nbformat.v4.new_code_cell(code)]
    path = folder / name
    path.write_text(nbformat.writes(nb))
    return path


def work_in(path: Path, code: str) -> None:
    """What a learner's save does: their code, an output, an execution count."""
    nb = nbformat.read(path, as_version=4)
    nb.cells[1].source = code
    nb.cells[1].execution_count = 3
    nb.cells[1].outputs = [nbformat.v4.new_output("stream", text="hi\n")]
    nbformat.write(nb, path)


def run_only(path: Path) -> None:
    """A save after running the cells as they are: outputs, the code unchanged."""
    nb = nbformat.read(path, as_version=4)
    nb.cells[1].execution_count = 1
    nb.cells[1].outputs = [nbformat.v4.new_output("stream", text="ran\n")]
    nbformat.write(nb, path)


@pytest.fixture
def shipped(tmp_path):
    folder = tmp_path / "curriculum"
    folder.mkdir()
    lesson(folder, "01-a.ipynb", "x = 1")
    lesson(folder, "02-b.ipynb", "y = 2")
    return folder


def actions(done) -> dict:
    return {d.lesson: (d.action, d.path.name) for d in done}


def test_copies_are_made_on_first_use_and_never_overwritten(shipped, tmp_path):
    """Are the lessons copied the first time, and is a copy the learner worked in left as it is
    when nothing changed upstream?"""
    mine = tmp_path / "mine"
    assert actions(lessons.refresh(shipped, mine)) == {
        "01-a.ipynb": ("copied", "01-a.ipynb"),
        "02-b.ipynb": ("copied", "02-b.ipynb"),
    }
    work_in(mine / "01-a.ipynb", "x = 'mine'")
    assert lessons.refresh(shipped, mine) == []
    assert "x = 'mine'" in (mine / "01-a.ipynb").read_text()


def test_a_new_version_reaches_a_learner_who_started_without_losing_their_work(shipped, tmp_path):
    """A lesson changed upstream: beside a copy with the learner's code it arrives as
    NN-name.new.ipynb; a copy they only ran (outputs, code as shipped) is replaced; a later
    version replaces the .new file while they have not worked in it."""
    mine = tmp_path / "mine"
    lessons.refresh(shipped, mine)
    work_in(mine / "01-a.ipynb", "x = 'mine'")
    run_only(mine / "02-b.ipynb")
    lesson(shipped, "01-a.ipynb", "x = 10  # version 2")
    lesson(shipped, "02-b.ipynb", "y = 20  # version 2")
    assert actions(lessons.refresh(shipped, mine)) == {
        "01-a.ipynb": ("offered", "01-a.new.ipynb"),
        "02-b.ipynb": ("updated", "02-b.ipynb"),
    }
    assert "x = 'mine'" in (mine / "01-a.ipynb").read_text()
    assert "version 2" in (mine / "01-a.new.ipynb").read_text() and "version 2" in (mine / "02-b.ipynb").read_text()
    lesson(shipped, "01-a.ipynb", "x = 100  # version 3")
    assert actions(lessons.refresh(shipped, mine)) == {"01-a.ipynb": ("offered", "01-a.new.ipynb")}
    work_in(mine / "01-a.new.ipynb", "x = 'mine, in the new one'")
    lesson(shipped, "01-a.ipynb", "x = 1000  # version 4")
    assert actions(lessons.refresh(shipped, mine)) == {"01-a.ipynb": ("offered", "01-a.new2.ipynb")}
    assert "mine, in the new one" in (mine / "01-a.new.ipynb").read_text()


def test_a_deleted_copy_starts_again_and_a_foreign_file_is_kept(shipped, tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "02-b.ipynb").write_text(nbformat.writes(nbformat.v4.new_notebook()))  # not the lab's
    lessons.refresh(shipped, mine)
    (mine / "01-a.ipynb").unlink()
    assert actions(lessons.refresh(shipped, mine)) == {"01-a.ipynb": ("copied", "01-a.ipynb")}
    lesson(shipped, "02-b.ipynb", "y = 20")
    assert actions(lessons.refresh(shipped, mine)) == {"02-b.ipynb": ("offered", "02-b.new.ipynb")}
    assert "y = 20" not in (mine / "02-b.ipynb").read_text()


def test_work_carried_from_curriculum_is_never_replaced(tmp_path):
    """A learner who worked in curriculum/ before the lab had copies: the first copy carries
    their work (outputs saved with it), so a new version is offered beside it, not over it."""
    shipped = tmp_path / "curriculum"
    shipped.mkdir()
    work_in(lesson(shipped, "01-a.ipynb", "x = 1"), "x = 1")  # their run, code as shipped
    mine = tmp_path / "mine"
    lessons.refresh(shipped, mine)
    lesson(shipped, "01-a.ipynb", "x = 2")
    assert actions(lessons.refresh(shipped, mine)) == {"01-a.ipynb": ("offered", "01-a.new.ipynb")}


def test_the_learners_copies_are_git_ignored():
    """Is the folder `make lab` opens ignored by git, so that a save changes no tracked file?"""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    name = lab.LESSONS.relative_to(ROOT) / "01-first-kernel-thread-ids.ipynb"
    found = subprocess.run(["git", "check-ignore", "-q", str(name)], cwd=ROOT)
    assert found.returncode == 0, f"{name} is not ignored by git"


def test_make_lab_starts_zerogpu_lab():
    """The Makefile's lab targets run `zerogpu lab` (what tests/browser/lab.py starts)."""
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^lab: \$\(STAMP\)\n\t\$\(VENV\)/bin/zerogpu lab$", makefile, re.MULTILINE)
    assert re.search(r'^course-lab: \$\(STAMP\)\n\t\$\(VENV\)/bin/zerogpu lab --course "\$\(COURSE\)"$', makefile, re.M)


def test_the_learners_lab_has_no_nbgrader_and_no_news(tmp_path):
    """The lab's own configuration: nbgrader's lab and server extensions off for the learner,
    on for a course; the news question off in both; terminals through the lab's shell."""
    learner = lab.prepare(tmp_path / "mine", tmp_path / "state", env={"PATH": "/usr/bin"})
    page = json.loads((tmp_path / "state" / "config" / "labconfig" / "page_config.json").read_text())
    assert page["disabledExtensions"] == {lab.NEWS: True, lab.NBGRADER_LAB_EXTENSION: True}
    server = json.loads((tmp_path / "state" / "config" / "jupyter_server_config.json").read_text())["ServerApp"]
    assert set(server["jpserver_extensions"]) == set(lab.NBGRADER_SERVER_EXTENSIONS)
    assert not any(server["jpserver_extensions"].values())
    assert server["terminado_settings"]["shell_command"][1:3] == ["-m", "grader.learner.terminal"]
    assert learner.env["JUPYTER_CONFIG_PATH"].split(os.pathsep)[0] == str(tmp_path / "state" / "config")
    assert learner.env["PATH"].split(os.pathsep)[0] == str(Path(sys.executable).parent)
    assert f"--notebook-dir={tmp_path / 'mine'}" in learner.command
    lab.prepare(tmp_path / "course", tmp_path / "course-state", course=True, env={})
    page = json.loads((tmp_path / "course-state" / "config" / "labconfig" / "page_config.json").read_text())
    assert page["disabledExtensions"] == {lab.NEWS: True}
    server = json.loads((tmp_path / "course-state" / "config" / "jupyter_server_config.json").read_text())
    assert "jpserver_extensions" not in server["ServerApp"]


def test_zerogpu_lab_copies_then_becomes_jupyterlab(tmp_path, monkeypatch, capsys):
    """Does `zerogpu lab` bring the copies up to date, say so, and start JupyterLab on them with
    the options given after `--`?"""
    import grader.cli.lab as command

    started = []
    monkeypatch.setattr(command.os, "execvpe", lambda path, argv, env: started.append((argv, env)))
    monkeypatch.setattr(lab, "state_folder", lambda kind: tmp_path / "state" / kind)
    assert main(["lab", "--lessons", str(tmp_path / "mine"), "--", "--port", "8899"]) == 0
    argv, env = started[0]
    assert f"--notebook-dir={tmp_path / 'mine'}" in argv and argv[-2:] == ["--port", "8899"]
    said = capsys.readouterr().out
    assert "made your copy of 01-first-kernel-thread-ids.ipynb" in said and str(tmp_path / "mine") in said
    assert sorted(p.name for p in (tmp_path / "mine").glob("*.ipynb")) == sorted(
        p.name for p in CURRICULUM.glob("[0-9][0-9]-*.ipynb")
    )


HOSTILE_RC = 'PATH=/usr/bin:/bin; export PATH\n'
"""A start-up file that sets PATH anew, as Debian's /etc/profile does for a login shell."""


@pytest.mark.parametrize("shell", ["/bin/bash", "/bin/sh"])
def test_a_lab_terminal_finds_zerogpu_whatever_its_start_up_files_do(shell, tmp_path):
    """The lab's terminal command, with a shell whose own start-up file resets PATH: is
    `zerogpu` still the lab's?"""
    if not os.access(shell, os.X_OK):
        pytest.skip(f"no {shell} here")
    state, home = tmp_path / "state", tmp_path / "home"
    home.mkdir()
    (home / ".bashrc").write_text(HOSTILE_RC)
    started = lab.prepare(tmp_path / "mine", state, env={"PATH": "/usr/bin:/bin", "HOME": str(home), "SHELL": shell})
    shell_command = json.loads((state / "config" / "jupyter_server_config.json").read_text())["ServerApp"][
        "terminado_settings"
    ]["shell_command"]
    done = subprocess.run(
        shell_command,
        input="command -v zerogpu\nexit\n",
        capture_output=True,
        text=True,
        env={**started.env, "ENV": str(home / ".bashrc")},
        timeout=60,
    )
    assert done.stdout.strip().splitlines()[-1] == str(Path(sys.executable).parent / "zerogpu"), done


@pytest.mark.parametrize(
    "shell, argv, added",
    [
        ("/usr/bin/zsh", ["/usr/bin/zsh", "-i"], {"ZDOTDIR": "STATE/zsh", "ZEROGPU_ZDOTDIR": ""}),
        ("/usr/bin/fish", ["/usr/bin/fish", "-i", "-C", "set -gx PATH /venv/bin $PATH"], {}),
        ("/bin/bash", ["/bin/bash", "--rcfile", "STATE/bashrc", "-i"], {}),
        ("/bin/ksh", ["/bin/ksh", "-i"], {"ENV": "STATE/shrc", "ZEROGPU_ENV": ""}),
    ],
)
def test_each_shell_is_started_interactive_and_not_as_a_login_shell(shell, argv, added):
    state = Path("STATE")
    got_argv, got_added = terminal.command(shell, state, {terminal.BIN: "/venv/bin"})
    assert (got_argv, got_added) == (argv, added)
    assert "-l" not in got_argv and "--login" not in got_argv
