"""Class results: one row per (student, exercise), written in one transaction per graded task
by the coordinating process only, so a killed grader loses at most the tasks in flight and
never leaves a row half-written or twice."""

from __future__ import annotations

import json
import sqlite3
import time
from contextlib import closing
from pathlib import Path

from grader.paths import cannot_write

SCHEMA = """
CREATE TABLE IF NOT EXISTS results (
    student TEXT NOT NULL,
    exercise TEXT NOT NULL,
    submission_sha256 TEXT,
    verdict TEXT NOT NULL,
    score REAL NOT NULL,
    max_score REAL NOT NULL,
    backend TEXT,
    result_json TEXT,
    graded_at REAL NOT NULL,
    graded_on TEXT,
    PRIMARY KEY (student, exercise)
)
"""
NOT_SUBMITTED = "not_submitted"
"""Status of an exercise a student never handed in (not a verdict: nothing was run)."""
COLUMNS = (
    "student",
    "exercise",
    "submission_sha256",
    "verdict",
    "score",
    "max_score",
    "backend",
    "result_json",
    "graded_at",
    "graded_on",
)


class Gradebook:
    def __init__(self, path: Path):
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with closing(self._connect()) as db, db:
                db.execute(SCHEMA)
                known = {row[1] for row in db.execute("PRAGMA table_info(results)")}
                if "graded_on" not in known:  # a gradebook written before results said where
                    db.execute("ALTER TABLE results ADD COLUMN graded_on TEXT")
        except (OSError, sqlite3.Error) as err:
            raise cannot_write(self.path, err) from None

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=30)
        db.execute("PRAGMA journal_mode=WAL")
        return db

    def record(self, student: str, exercise: str, sha256: str | None, result, graded_on: str | None = None) -> None:
        """Insert or replace one row, atomically. `result` is a CheckResult or None (missing);
        `graded_on`: the machine and GPU that ran it ("NVIDIA H200 on node3")."""
        if result is None:
            row = (student, exercise, None, NOT_SUBMITTED, 0.0, 0.0, None, None, time.time(), None)
        else:
            row = (
                student,
                exercise,
                sha256,
                result.verdict,
                result.score,
                result.max_score,
                result.backend,
                result.to_json(),
                time.time(),
                graded_on,
            )
        with closing(self._connect()) as db, db:
            db.execute(
                f"INSERT OR REPLACE INTO results ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})", row
            )

    def graded_hashes(self) -> dict:
        """(student, exercise) -> submission hash of every finished row."""
        with closing(self._connect()) as db:
            rows = db.execute("SELECT student, exercise, submission_sha256 FROM results").fetchall()
        return {(s, e): h for s, e, h in rows}

    def rows(self) -> list[dict]:
        with closing(self._connect()) as db:
            db.row_factory = sqlite3.Row
            rows = db.execute("SELECT * FROM results ORDER BY student, exercise").fetchall()
        out = []
        for r in rows:
            item = dict(r)
            item["result"] = json.loads(item.pop("result_json")) if item.get("result_json") else None
            out.append(item)
        return out
