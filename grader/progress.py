"""A learner's own progress, kept locally so it survives restarts.

One SQLite file under the user's data directory ($ZEROGPU_HOME, else
$XDG_DATA_HOME/zerogpu, else ~/.local/share/zerogpu). Best effort: a read-only home never
stops a check.
"""
from __future__ import annotations

import os
import sqlite3
import time
from contextlib import closing
from pathlib import Path

from grader.result import CheckResult


def data_dir() -> Path:
    if os.environ.get("ZEROGPU_HOME"):
        return Path(os.environ["ZEROGPU_HOME"])
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "zerogpu"


def _connect() -> sqlite3.Connection:
    path = data_dir()
    path.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path / "progress.sqlite", timeout=10)
    db.execute(
        "CREATE TABLE IF NOT EXISTS attempts (exercise TEXT, at REAL, backend TEXT, "
        "verdict TEXT, score REAL, max_score REAL)"
    )
    return db


def record(result: CheckResult) -> None:
    try:
        with closing(_connect()) as db, db:
            db.execute(
                "INSERT INTO attempts VALUES (?, ?, ?, ?, ?, ?)",
                (result.exercise, time.time(), result.backend, result.verdict, result.score,
                 result.max_score),
            )
    except (OSError, sqlite3.Error):
        pass


def status() -> dict:
    """Exercise id -> "passed" or "attempted" (absent: not started)."""
    try:
        with closing(_connect()) as db:
            rows = db.execute(
                "SELECT exercise, MAX(verdict = 'passed') FROM attempts GROUP BY exercise"
            ).fetchall()
    except (OSError, sqlite3.Error):
        return {}
    return {exercise: "passed" if ok else "attempted" for exercise, ok in rows}
