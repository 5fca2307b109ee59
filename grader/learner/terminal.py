"""A lab terminal's shell (`ServerApp.terminado_settings`' shell command, grader/learner/lab.py):

    python -m grader.learner.terminal STATE

The learner's own shell ($SHELL, else /bin/sh), interactive but not a login shell: a login
shell reads /etc/profile, and Debian's sets PATH anew, losing the project's `bin` folder (and
`zerogpu` with it). The shell's own start-up files still run, and after them the lab's `bin`
folder ($ZEROGPU_LAB_BIN) goes first on PATH again, whichever of bash, zsh, fish or a POSIX sh
(dash, ksh) it is; STATE holds the start-up files the lab wrote for that (`START_UP_FILES`).
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

BIN = "ZEROGPU_LAB_BIN"
"""The variable naming the folder that goes first on PATH (the lab's Python's `bin`)."""

START_UP_FILES = {
    "bashrc": (
        '[ -r "$HOME/.bashrc" ] && . "$HOME/.bashrc"\n'  # /etc/bash.bashrc runs before this file
        f'PATH="${BIN}:$PATH"; export PATH\n'
    ),
    "zsh/.zshenv": '[ -r "${ZEROGPU_ZDOTDIR:-$HOME}/.zshenv" ] && . "${ZEROGPU_ZDOTDIR:-$HOME}/.zshenv"\n',
    "zsh/.zshrc": (
        'ZDOTDIR="${ZEROGPU_ZDOTDIR:-$HOME}"\n'
        '[ -r "$ZDOTDIR/.zshrc" ] && . "$ZDOTDIR/.zshrc"\n'
        f'path=("${BIN}" $path); export PATH\n'
    ),
    "shrc": f'[ -n "$ZEROGPU_ENV" ] && [ -r "$ZEROGPU_ENV" ] && . "$ZEROGPU_ENV"\nPATH="${BIN}:$PATH"; export PATH\n',
}
"""The start-up files, by path under STATE: each runs the learner's own, then puts the lab's
`bin` folder first."""


def command(shell: str, state: Path, env: dict) -> tuple[list, dict]:
    """(argv, variables to add) that start `shell` interactively, not as a login shell, with the
    lab's `bin` folder first on PATH after its start-up files."""
    name = Path(shell).name
    if name == "bash":
        return [shell, "--rcfile", str(state / "bashrc"), "-i"], {}
    if name == "zsh":
        return [shell, "-i"], {"ZDOTDIR": str(state / "zsh"), "ZEROGPU_ZDOTDIR": env.get("ZDOTDIR", "")}
    if name == "fish":  # reads its config.fish in any case; -C runs after it
        return [shell, "-i", "-C", f"set -gx PATH {shlex.quote(env.get(BIN, ''))} $PATH"], {}
    return [shell, "-i"], {"ENV": str(state / "shrc"), "ZEROGPU_ENV": env.get("ENV", "")}  # a POSIX sh reads $ENV


def learner_shell(env: dict) -> str:
    shell = env.get("SHELL", "")
    return shell if shell and os.access(shell, os.X_OK) else "/bin/sh"


def main(argv: list) -> None:
    state = Path(argv[0])
    env = dict(os.environ)
    if env.get(BIN):
        env["PATH"] = os.pathsep.join([env[BIN], env.get("PATH", "")])
    argv, extra = command(learner_shell(env), state, env)
    os.execvpe(argv[0], argv, {**env, **extra})


if __name__ == "__main__":
    main(sys.argv[1:])
