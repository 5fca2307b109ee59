"""Class results: one row per (student, exercise), written in one transaction per graded task
by the coordinating process only, so a killed grader loses at most the tasks in flight and
never leaves a row half-written or twice.

Beside the results, notes say what a result cannot: why nothing was graded for an exercise (no
file, a notebook that is not JSON, a deleted exercise cell), which autograder cells of a
notebook were edited or deleted, and which files were not graded at all (a misnamed file).
Grading sets them every run, without touching the results rows."""

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
NOTES_SCHEMA = """
CREATE TABLE IF NOT EXISTS notes (
    student TEXT NOT NULL,
    about TEXT NOT NULL,
    kind TEXT NOT NULL,
    text TEXT NOT NULL,
    noted_at REAL NOT NULL,
    PRIMARY KEY (student, about, kind)
)
"""
NOT_GRADED, AUTOGRADER_CELLS, FILE_NOT_GRADED = "not_graded", "autograder_cells", "file_not_graded"
FEEDBACK = "feedback"
"""Kinds of note. `about` is an exercise id for the first two (why nothing was graded; what
happened to its autograder cells), a file's path under the student's folder for the third, an
nbgrader assignment for FEEDBACK (its feedback is out of date, and what refreshes it)."""
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
                db.execute(NOTES_SCHEMA)
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

    def set_notes(self, kind: str, notes: dict) -> None:
        """{(student, about): text} for one kind, in one transaction: a text replaces the
        note, an empty one removes it."""
        now = time.time()
        with closing(self._connect()) as db, db:
            for (student, about), text in notes.items():
                if text:
                    db.execute(
                        "INSERT INTO notes VALUES (?, ?, ?, ?, ?) ON CONFLICT (student, about, kind) "
                        "DO UPDATE SET text = excluded.text, noted_at = excluded.noted_at WHERE text != excluded.text",
                        (student, about, kind, text, now),
                    )
                else:
                    db.execute("DELETE FROM notes WHERE student = ? AND about = ? AND kind = ?", (student, about, kind))

    def replace_file_notes(self, prefix: str, notes: dict) -> None:
        """The files not graded whose path starts with `prefix` ("" for all, "warmup/" for one
        assignment's) become `notes`, {(student, path): reason}, in one transaction."""
        now = time.time()
        with closing(self._connect()) as db, db:
            db.execute(
                "DELETE FROM notes WHERE kind = ? AND substr(about, 1, ?) = ?", (FILE_NOT_GRADED, len(prefix), prefix)
            )
            db.executemany(
                "INSERT OR REPLACE INTO notes VALUES (?, ?, ?, ?, ?)",
                [(student, path, FILE_NOT_GRADED, reason, now) for (student, path), reason in notes.items()],
            )

    def notes(self) -> list[dict]:
        """Every note: student, about, kind, text, noted_at."""
        with closing(self._connect()) as db:
            db.row_factory = sqlite3.Row
            return [dict(r) for r in db.execute("SELECT * FROM notes ORDER BY student, about, kind")]

    def rows(self, student: str | None = None) -> list[dict]:
        """Every row (one student's, when named), its result parsed."""
        with closing(self._connect()) as db:
            db.row_factory = sqlite3.Row
            if student is None:
                rows = db.execute("SELECT * FROM results ORDER BY student, exercise").fetchall()
            else:
                rows = db.execute("SELECT * FROM results WHERE student = ? ORDER BY exercise", (student,)).fetchall()
        out = []
        for r in rows:
            item = dict(r)
            item["result"] = json.loads(item.pop("result_json")) if item.get("result_json") else None
            out.append(item)
        return out
