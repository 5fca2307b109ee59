"""JupyterLab for the browser tests: started as `make lab` starts it (`zerogpu lab`, on the
learner's copies of the lessons, made by it), and driven the way a learner works in it (the Run
menu, the keyboard, a paste into a cell, a terminal)."""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from grader.exercises import ROOT
from web import wait_for

CURRICULUM = ROOT / "curriculum"
LESSONS = ROOT / "my-lessons" / "browser-tests"
"""The copies the tests' lab opens: inside the learner's git-ignored folder, as under `make lab`
(a save there must leave `git status` clean), apart from a learner's own copies beside it."""

START_SECONDS = 90  # JupyterLab's first start on a busy 2-core machine takes 10-20 s
RUN_SECONDS = 240  # a lesson's cells on the simulator; well under a minute on 2 cores
WIDGET_VIEWS = ".jp-OutputArea-output > .jupyter-widgets"
# The engine is the grader's own choice, as under `make lab`: nothing of the test run's forced one.
FORCED_ENGINE = ("ZEROGPU_BACKEND", "NUMBA_ENABLE_CUDASIM")
TERMINAL_SETTINGS = {"@jupyterlab/terminal-extension/plugin.jupyterlab-settings": {"screenReaderMode": True}}
"""The test's own JupyterLab settings: a terminal's text also in the page, not only drawn."""


@dataclass(frozen=True)
class Lab:
    url: str
    token: str

    def notebook_url(self, name: str) -> str:
        # `reset`: a fresh workspace, so no tab of an earlier test opens with it
        return f"{self.url}/lab/tree/{name}?token={self.token}&reset"

    def launcher_url(self) -> str:
        return f"{self.url}/lab?token={self.token}&reset"


def lab_command(lessons: Path, port: int) -> list[str]:
    """`make lab`'s command (the Makefile's `lab` target: `zerogpu lab`; keep the two in step),
    on `lessons`, plus what a test needs: no browser of its own, the loopback only, this port or
    none. `zerogpu` is this interpreter's, so the lab's kernels import this checkout's grader."""
    zerogpu = str(Path(sys.executable).parent / "zerogpu")
    return [zerogpu, "lab", "--lessons", str(lessons), "--"] + [
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
    ]


def lab_environment(state: Path, token: str) -> dict:
    """`make lab`'s environment (PATH as the caller has it: `zerogpu lab` puts the venv first
    where the lab needs it); JupyterLab's settings and workspaces in `state`, not the user's."""
    env = {key: value for key, value in os.environ.items() if key not in FORCED_ENGINE}
    settings = state / "settings"
    for name, value in TERMINAL_SETTINGS.items():
        (settings / name).parent.mkdir(parents=True, exist_ok=True)
        (settings / name).write_text(json.dumps(value))
    env.update(
        JUPYTER_TOKEN=token,
        JUPYTERLAB_SETTINGS_DIR=str(settings),
        JUPYTERLAB_WORKSPACES_DIR=str(state / "workspaces"),
        JUPYTER_RUNTIME_DIR=str(state / "runtime"),
    )
    return env


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_lab(lessons: Path, state: Path, log: Path) -> tuple[Lab, subprocess.Popen]:
    """JupyterLab as `make lab` starts it, on copies of the lessons it makes in `lessons`."""
    token, port = secrets.token_hex(16), free_port()
    process = subprocess.Popen(
        lab_command(lessons, port),
        env=lab_environment(state, token),
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its kernels and terminals go with it (stop_lab)
    )
    lab = Lab(f"http://127.0.0.1:{port}", token)
    wait_for(lambda: _answers(lab) or _died(process, log), START_SECONDS, f"JupyterLab to start (log: {log})")
    return lab, process


def _answers(lab: Lab) -> bool:
    try:
        with urllib.request.urlopen(f"{lab.url}/api/status?token={lab.token}", timeout=2) as reply:
            return reply.status == 200
    except OSError:
        return False


def _died(process: subprocess.Popen, log: Path) -> bool:
    if process.poll() is not None:
        raise AssertionError(f"JupyterLab exited with status {process.returncode}:\n{log.read_text()[-3000:]}")
    return False


def stop_lab(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=20)
    except ProcessLookupError:
        return
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


class NotebookPage:
    """One notebook open in JupyterLab. Cells are addressed by their index in the .ipynb."""

    def __init__(self, driver, lab: Lab, name: str):
        self.driver, self.name = driver, name
        driver.get(lab.notebook_url(name))
        wait_for(self._kernel_idle, START_SECONDS, f"the kernel of {name} to start")

    def _status_bar(self) -> str:
        return self.driver.execute_script(
            "return [...document.querySelectorAll('.jp-StatusBar-Widget')].map(e => e.textContent).join(' ')"
        )

    def _kernel_idle(self) -> bool:
        return "| Idle" in self._status_bar()

    def cells(self):
        from selenium.webdriver.common.by import By

        return self.driver.find_elements(By.CSS_SELECTOR, ".jp-Notebook .jp-Cell")

    def cell(self, index: int):
        return self.cells()[index]

    def menu(self, menu: str, item: str) -> None:
        """Click `item` in the menu bar's `menu`, as a learner does."""
        from selenium.webdriver.common.by import By

        self.driver.find_element(By.XPATH, f"//li[contains(@class,'lm-MenuBar-item')][.//div[text()='{menu}']]").click()
        self.driver.find_element(By.XPATH, f"//li[contains(@class,'lm-Menu-item')][.//div[text()='{item}']]").click()

    def run_all(self) -> None:
        self._run("Run All Cells")

    def run_cell(self, index: int) -> None:
        """Run cell `index` alone, as Shift-Enter in it does (less the move to the next cell)."""
        self.select(index)
        self._run("Run Selected Cell and Do not Advance")

    def save(self) -> None:
        """File → Save Notebook, as a learner saves (Ctrl-S does the same), until its tab shows
        no unsaved change: leaving a page with one logs a console error (beforeunload)."""
        self.menu("File", "Save Notebook")
        wait_for(lambda: not self.unsaved(), 60, f"{self.name} to be saved")

    def unsaved(self) -> bool:
        """Does the notebook's tab show unsaved changes (a run's outputs, the kernel's language)?"""
        return self.driver.execute_script("return document.querySelectorAll('.lm-TabBar-tab.jp-mod-dirty').length > 0")

    def wait_for_cells(self, count: int) -> None:
        """Until the notebook shows its `count` cells (a kernel still running from an earlier visit
        is idle before they are drawn)."""
        wait_for(lambda: len(self.cells()) == count, START_SECONDS, f"the {count} cells of {self.name}")

    def run_from(self, index: int) -> None:
        """Run cell `index` and every cell below it."""
        self.select(index)
        self._run("Run Selected Cell and All Below")

    def _run(self, item: str) -> None:
        """Until the cells ran: the prompts changed, none is queued (`[*]`), the kernel is idle.
        Run All stops at a cell that raised; the cells after it keep no execution count
        (`unrun_cells` names them)."""
        before = self._prompts()
        self.menu("Run", item)
        wait_for(
            lambda: self._prompts() != before and "[*]:" not in self._prompts() and self._kernel_idle(),
            RUN_SECONDS,
            f"{item!r} to finish in {self.name}",
        )

    def _prompts(self) -> list[str]:
        return self.driver.execute_script(
            "return [...document.querySelectorAll('.jp-Notebook .jp-CodeCell .jp-InputArea-prompt')]"
            ".map(e => e.textContent.trim())"
        )

    def unrun_cells(self) -> list[int]:
        """Indices (in the .ipynb) of code cells that have no execution count."""
        return self.driver.execute_script(
            """return [...document.querySelectorAll('.jp-Notebook .jp-Cell')].map((cell, i) =>
                 cell.classList.contains('jp-CodeCell') &&
                 !/^\\[\\d+\\]:$/.test(cell.querySelector('.jp-InputArea-prompt').textContent.trim()) ? i : -1)
               .filter(i => i >= 0);"""
        )

    def select(self, index: int) -> None:
        """Make cell `index` the active one, in command mode (a click on its prompt area)."""
        from selenium.webdriver.common.by import By

        cell = self.cell(index)
        self.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", cell)
        cell.find_element(By.CSS_SELECTOR, ".jp-InputPrompt").click()

    def paste_into(self, index: int, text: str) -> None:
        """Replace cell `index`'s text by `text` through the clipboard's paste event, as a
        learner pasting a file into the cell does (typing it would re-indent every line)."""
        from selenium.webdriver.common.by import By
        from selenium.webdriver.common.keys import Keys

        editor = self.cell(index).find_element(By.CSS_SELECTOR, ".cm-content")
        self.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", editor)
        editor.click()
        editor.send_keys(Keys.CONTROL, "a")
        self.driver.execute_script(
            """const data = new DataTransfer();
            data.setData('text/plain', arguments[1]);
            arguments[0].dispatchEvent(new ClipboardEvent('paste', {clipboardData: data, bubbles: true, cancelable: true}));""",
            editor,
            text,
        )
        editor.send_keys(Keys.ESCAPE)  # back to command mode

    def source(self, index: int) -> str:
        """Cell `index`'s text as its editor holds it."""
        return self.driver.execute_script(
            "return [...arguments[0].querySelectorAll('.cm-line')].map(line => line.textContent).join('\\n')",
            self.cell(index),
        )

    def output_text(self, index: int) -> str:
        from selenium.webdriver.common.by import By

        # in view first: JupyterLab skips laying out cells off-screen, and innerText then is ""
        self.driver.execute_script("arguments[0].scrollIntoView({block: 'start'})", self.cell(index))
        outputs = self.cell(index).find_elements(By.CSS_SELECTOR, ".jp-OutputArea-output")
        return "\n".join(self.driver.execute_script("return arguments[0].innerText", o) for o in outputs)

    def stderr(self) -> str:
        """What the cells wrote to stderr, tracebacks included (for failure messages)."""
        return self.driver.execute_script(
            """return [...document.querySelectorAll('[data-mime-type="application/vnd.jupyter.stderr"]')]
                 .map(o => o.textContent).join('\\n');"""
        )

    def widget_views(self):
        """Every live ipywidgets view the outputs show (not a still picture in its place)."""
        from selenium.webdriver.common.by import By

        return self.driver.find_elements(By.CSS_SELECTOR, WIDGET_VIEWS)

    def widget_errors(self) -> list[str]:
        """What ipywidgets wrote where a widget failed to display."""
        return self.driver.execute_script(
            """return [...document.querySelectorAll('.jp-OutputArea-output')]
                 .map(o => o.innerText).filter(t => t.includes('Error displaying widget'));"""
        )


def picture_bytes(driver, view) -> str:
    """A digest of the bytes behind the widget's picture (its src is a blob: URL that changes
    with every redraw, even to the same picture)."""
    return driver.execute_async_script(
        """const [view, done] = arguments;
        const img = view.querySelector('img.widget-image');
        if (!img || !img.src) { done(''); return; }
        fetch(img.src).then(r => r.arrayBuffer()).then(b => crypto.subtle.digest('SHA-256', b))
          .then(d => done([...new Uint8Array(d)].map(x => x.toString(16).padStart(2, '0')).join('')))
          .catch(e => done('unreadable: ' + e));""",
        view,
    )


def controls(view) -> list:
    """The view's controls a learner moves: slider handles, checkboxes, toggle buttons, drop-downs."""
    from selenium.webdriver.common.by import By

    return view.find_elements(
        By.CSS_SELECTOR,
        ".noUi-handle, .widget-checkbox input, .widget-toggle-button:not(.mod-active), .widget-dropdown select",
    )


def move(driver, control) -> str:
    """Change one control the way a learner would; returns what was done, for messages."""
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select

    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", control)
    if control.tag_name == "select":
        menu = Select(control)
        current = menu.first_selected_option.text
        other = next(option.text for option in menu.options if option.text != current)
        menu.select_by_visible_text(other)
        return f"picked {other!r} in a drop-down"
    if "noUi-handle" in (control.get_attribute("class") or ""):
        before = control.get_attribute("aria-valuetext")
        key = (
            Keys.ARROW_LEFT
            if control.get_attribute("aria-valuenow") == control.get_attribute("aria-valuemax")
            else Keys.ARROW_RIGHT
        )
        control.send_keys(key)
        return f"moved a slider from {before} to {control.get_attribute('aria-valuetext')}"
    if "widget-toggle-button" in (control.get_attribute("class") or ""):
        control.click()
        return f"pressed the toggle button {control.text!r}"
    control.click()
    return "ticked a checkbox" if control.is_selected() else "unticked a checkbox"


class TerminalPage:
    """A terminal of the lab, open in JupyterLab, typed into as a learner types."""

    def __init__(self, driver, lab: Lab):
        """A new terminal, from the Launcher's Terminal card, as a learner opens one."""
        from selenium.webdriver.common.by import By

        self.driver = driver
        driver.get(lab.launcher_url())
        card = wait_for(
            lambda: driver.find_elements(By.CSS_SELECTOR, ".jp-LauncherCard[data-category='Other'][title*='terminal']"),
            START_SECONDS,
            "the Launcher's Terminal card",
        )
        card[0].click()
        wait_for(lambda: self._input(), START_SECONDS, "the terminal to open")

    def _input(self):
        from selenium.webdriver.common.by import By

        found = self.driver.find_elements(By.CSS_SELECTOR, ".jp-Terminal .xterm-helper-textarea")
        return found[0] if found else None

    def text(self) -> str:
        """What the terminal shows (its screen reader rows: lab.TERMINAL_SETTINGS)."""
        return self.driver.execute_script(
            "return [...document.querySelectorAll('.jp-Terminal .xterm-accessibility-tree > div')]"
            ".map(row => row.textContent).join('\\n')"
        )

    def type(self, line: str) -> None:
        from selenium.webdriver.common.keys import Keys

        field = self._input()
        self.driver.execute_script("arguments[0].focus()", field)
        field.send_keys(line + Keys.ENTER)
