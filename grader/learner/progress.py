"""A learner's own progress, kept locally so it survives restarts.

One SQLite file under the user's data directory ($ZEROGPU_HOME, else
$XDG_DATA_HOME/zerogpu, else ~/.local/share/zerogpu). Best effort: a read-only home never
stops a check.

Each attempt keeps its verdict and, when it passed on a GPU, the speed tier it reached
(NULL otherwise). `status()` is the plain "passed"/"attempted" view `zerogpu list` prints;
`ladder_status()` adds the best tier per exercise in the shape grader.notebook.widgets.progress takes.
"""

from __future__ import annotations

import os
import re
import sqlite3
import time
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from grader.exercises import LADDER
from grader.paths import ROOT, DataDirError, cannot_write, data_dir
from grader.result import CheckResult
from grader.authoring.spec import DEFAULT_TIERS

COLUMNS = {
    "exercise": "TEXT",
    "at": "REAL",
    "backend": "TEXT",
    "verdict": "TEXT",
    "score": "REAL",
    "max_score": "REAL",
    "tier": "TEXT",
    "tier_points": "INTEGER",
}
"""The attempts table. `tier` and `tier_points` came later: older files gain them on open."""
TIER_RANK = {tier.name: tier.points for tier in DEFAULT_TIERS}
"""Ranks tiers recorded without their points."""


def _connect() -> sqlite3.Connection:
    path = data_dir() / "progress.sqlite"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(path, timeout=30)
        columns = ", ".join(f"{name} {kind}" for name, kind in COLUMNS.items())
        with db:  # several processes may open a new file together: sqlite serialises them
            db.execute(f"CREATE TABLE IF NOT EXISTS attempts ({columns})")
        _add_missing_columns(db)
    except (OSError, sqlite3.Error) as err:
        raise cannot_write(path, err) from None
    return db


def _add_missing_columns(db: sqlite3.Connection) -> None:
    """Migrate a table written by an older grader: new columns are nullable, old rows keep NULL."""
    present = {row[1] for row in db.execute("PRAGMA table_info(attempts)")}
    for name, kind in COLUMNS.items():
        if name not in present:
            try:
                with db:
                    db.execute(f"ALTER TABLE attempts ADD COLUMN {name} {kind}")
            except sqlite3.OperationalError as err:  # another process migrated it first
                if "duplicate column" not in str(err):
                    raise


def speed_tier(result: CheckResult) -> tuple[str | None, int | None]:
    """(tier, its points) a passing GPU result reached; (None, None) otherwise."""
    details = result.speed.details
    if result.verdict != "passed" or details is None or not details.tier:
        return None, None
    return details.tier, details.points


def record(result: CheckResult) -> str | None:
    """Add an attempt. A data dir that refuses the write loses only this record: the reason
    comes back as one line for the caller to show (None when recorded)."""
    tier, points = speed_tier(result)
    try:
        with closing(_connect()) as db, db:
            db.execute(
                f"INSERT INTO attempts ({', '.join(COLUMNS)}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    result.exercise,
                    time.time(),
                    result.backend,
                    result.verdict,
                    result.score,
                    result.max_score,
                    tier,
                    points,
                ),
            )
    except DataDirError as err:
        return f"your progress was not recorded: {err}"
    except sqlite3.Error as err:
        return f"your progress was not recorded: {cannot_write(data_dir() / 'progress.sqlite', err)}"
    return None


def progress_file() -> Path:
    """Where the attempts are kept."""
    return data_dir() / "progress.sqlite"


def reset() -> Path | None:
    """Forget every attempt: remove the progress file. Its path, or None when there was none."""
    path = progress_file()
    try:
        path.unlink()
    except FileNotFoundError:
        return None
    except OSError as err:
        raise cannot_write(path, err) from None
    return path


def _attempts() -> list[tuple]:
    """(exercise, verdict, tier, tier_points) of every attempt, oldest first."""
    try:
        with closing(_connect()) as db:
            return db.execute("SELECT exercise, verdict, tier, tier_points FROM attempts ORDER BY at, rowid").fetchall()
    except (DataDirError, sqlite3.Error):
        return []


def status() -> dict:
    """Exercise id -> "passed" or "attempted" (absent: not started)."""
    return {exercise_id: entry["status"] for exercise_id, entry in ladder_status().items()}


def _rank(tier: str, points: int | None) -> tuple:
    return (points if points is not None else TIER_RANK.get(tier, 0), TIER_RANK.get(tier, 0))


def best_tiers() -> dict:
    """Exercise id -> the highest speed tier any passing attempt reached (absent: none yet)."""
    best = {}
    for exercise_id, _, tier, points in _attempts():
        if tier and (exercise_id not in best or _rank(tier, points) > best[exercise_id][0]):
            best[exercise_id] = (_rank(tier, points), tier)
    return {exercise_id: tier for exercise_id, (_, tier) in best.items()}


def ladder_status() -> dict:
    """Exercise id -> {"status": "passed"/"attempted", "tier": best tier or None,
    "attempts": how many, "last_verdict": the latest verdict}; absent: not started.
    The shape grader.notebook.widgets.progress(status) accepts."""
    entries: dict = {}
    for exercise_id, verdict, _, _ in _attempts():
        entry = entries.setdefault(
            exercise_id, {"status": "attempted", "tier": None, "attempts": 0, "last_verdict": None}
        )
        entry["attempts"] += 1
        entry["last_verdict"] = verdict
        if verdict == "passed":
            entry["status"] = "passed"
    for exercise_id, tier in best_tiers().items():
        entries[exercise_id]["tier"] = tier
    return entries


def next_exercise(status: dict | None = None) -> str | None:
    """The first exercise up the ladder that does not pass yet (None: all pass)."""
    status = ladder_status() if status is None else status
    return next((e for e in LADDER if _state(status.get(e)) != "passed"), None)


def _state(entry) -> str:
    if entry is None:
        return "not started"
    return entry if isinstance(entry, str) else entry.get("status", "not started")


@dataclass(frozen=True)
class NextStep:
    """What a learner does next: the exercise, where to write it and how to check it."""

    exercise: str
    state: str
    """"attempted" or "not started"."""
    exercise_file: Path
    notebook: Path | None
    """The lesson notebook holding this exercise, when the curriculum is present."""

    @property
    def command(self) -> str:
        return f"zerogpu check {self.exercise} {shown_path(self.exercise_file)}"

    def advice(self) -> str:
        """One sentence: the exercise, where to write it, both ways to check it."""
        retry = " again (read the hint in your last result)" if self.state == "attempted" else ""
        return (
            f"Next: {self.exercise} (stage {LADDER.index(self.exercise)}) — open "
            f"{shown_path(self.exercise_file)} and check it{retry}: "
            f"grader.check('{self.exercise}', launch) or `{self.command}`."
        )


ALL_PASS = "Every exercise passes. On a GPU, aim for a higher speed tier."


def advice(status: dict | None = None) -> str:
    """What to do next, in one sentence (the progress picture's caption, the CLI's last line)."""
    step = next_step(status)
    return ALL_PASS if step is None else step.advice()


def shown_path(path: Path) -> str:
    """Relative to the current folder when below it (what a learner types), else absolute."""
    try:
        return os.path.relpath(path) if Path(path).is_relative_to(Path.cwd()) else str(path)
    except (OSError, ValueError):
        return str(path)


def next_step(status: dict | None = None) -> NextStep | None:
    exercise_id = next_exercise(status)
    if exercise_id is None:
        return None
    status = ladder_status() if status is None else status
    return NextStep(
        exercise_id,
        _state(status.get(exercise_id)),
        ROOT / "exercises" / f"{exercise_id}.py",
        notebook_for(exercise_id),
    )


_EXERCISE_CELL = re.compile(r'"tags":\s*\[\s*"([a-z0-9_]+)",\s*"exercise"')
"""An exercise cell's tags in the notebook JSON (curriculum/build.py writes [id, "exercise"])."""


def notebook_for(exercise_id: str, curriculum: Path = ROOT / "curriculum") -> Path | None:
    """The first lesson notebook (in order) with an exercise cell for this exercise."""
    for notebook in sorted(curriculum.glob("*.ipynb")):
        try:
            if exercise_id in _EXERCISE_CELL.findall(notebook.read_text(encoding="utf-8")):
                return notebook
        except OSError:
            continue
    return None
