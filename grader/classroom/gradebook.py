"""Class results: one row per (student, exercise), written in one transaction per graded task
by the coordinating process only, so a killed grader loses at most the tasks in flight and
never leaves a row half-written or twice.

Beside the results, notes say what a result cannot: why nothing was graded for an exercise (no
file, a notebook that is not JSON, a deleted exercise cell), which autograder cells of a
notebook were edited or deleted, and which files were not graded at all (a misnamed file).
Grading sets them every run, without touching the results rows.

Every graded row keeps the seed its inputs were drawn from (with the task's secret, never
stored), so a disputed row can be graded again on the same inputs (`zerogpu grade --regrade`);
a regraded row keeps what it replaced (`regraded_from`). One grading run per gradebook at a
time (`only_run`). A gradebook that cannot be written (a full disk, a read-only folder) is one
line naming the fix (`GradebookError`); a row is stored whole or not at all."""

from __future__ import annotations

import errno
import fcntl
import json
import os
import sqlite3
import time
from contextlib import closing, contextmanager
from pathlib import Path

from grader.paths import DataDirError
from grader.result.row import ClassRow, Regraded
from grader.textsafe import unsurrogate

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
    seed INTEGER,
    regraded_from TEXT,
    PRIMARY KEY (student, exercise)
)
"""
ADDED_COLUMNS = {"graded_on": "TEXT", "seed": "INTEGER", "regraded_from": "TEXT"}
"""Columns a gradebook written by an earlier version may lack: added when it is opened."""
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
FEEDBACK, UNTOUCHED, WORKER_LOST = "feedback", "untouched", "worker_lost"
NOT_A_STUDENT = "not_a_student"
"""Kinds of note. `about` is an exercise id for the first two (why nothing was graded; what
happened to its autograder cells), a file's path under the student's folder for the third, an
nbgrader assignment for FEEDBACK (its feedback is out of date, and what refreshes it), an
exercise id for UNTOUCHED (the hand-in is the starter as given out: not attempted) and for
WORKER_LOST (a Dask worker died while grading it, and where it was graded again); "" for
NOT_A_STUDENT, whose `student` is an entry of the class folder that is no student (a link to
another student's folder, an unreadable folder), never a row."""
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
    "seed",
    "regraded_from",
)


class GradebookError(DataDirError):
    """The gradebook could not be written or locked: the message is one line naming the fix."""


def _disk_full(path: Path) -> bool:
    """Less than 64 KiB left where the gradebook is (SQLite often says only "disk I/O error")."""
    try:
        found = os.statvfs(path.parent)
    except OSError:
        return False
    return found.f_bavail * found.f_frsize < 64 * 1024


def _cannot_write(path: Path, err: Exception) -> GradebookError:
    text = str(getattr(err, "strerror", None) or err)
    if getattr(err, "errno", None) == errno.ENOSPC or "full" in text or _disk_full(path):
        return GradebookError(
            f"cannot write the gradebook {path}: the disk is full (rows already stored are kept). Free "
            "space there and run the same command again, or copy the gradebook to another disk and "
            "grade into it with --db PATH."
        )
    return GradebookError(
        f"cannot write the gradebook {path} ({text}): grade into a gradebook in a folder you can write with --db PATH."
    )


def _cannot_read(path: Path, err: Exception) -> GradebookError:
    """A reader's error: the file is no gradebook, or a damaged one."""
    return GradebookError(f"cannot read the gradebook {path} ({err}): give the right file with --db PATH.")


class Gradebook:
    def __init__(self, path: Path, read_only: bool = False):
        """`read_only`: for a reader (a report) of a gradebook in a folder it may not write: opened
        as is, nothing created or changed."""
        self.path, self.read_only = Path(path), read_only
        if read_only:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise _cannot_write(self.path, err) from None
        with self._transaction() as db:
            db.execute(SCHEMA)
            db.execute(NOTES_SCHEMA)
            known = {row[1] for row in db.execute("PRAGMA table_info(results)")}
            for column, kind in ADDED_COLUMNS.items():
                if column not in known:  # a gradebook written by an earlier version
                    db.execute(f"ALTER TABLE results ADD COLUMN {column} {kind}")

    def _connect(self) -> sqlite3.Connection:
        if self.read_only:
            return _read_only(self.path)
        db = sqlite3.connect(self.path, timeout=30)
        db.execute("PRAGMA journal_mode=WAL")
        return db

    @contextmanager
    def _transaction(self):
        """A connection whose work is committed whole at the end, or not at all."""
        try:
            with closing(self._connect()) as db, db:
                yield db
        except sqlite3.Error as err:
            raise (_cannot_read if self.read_only else _cannot_write)(self.path, err) from None

    @contextmanager
    def only_run(self):
        """While inside, this is the one grading run of this gradebook: an flock on a file beside
        it, which the kernel lets go when the process ends, killed or not. A second run refuses."""
        lock = self.path.with_name(self.path.name + ".lock")
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        except OSError as err:
            raise _cannot_write(lock, err) from None
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "?"
                raise GradebookError(
                    f"another zerogpu run (process {holder}) is grading into {self.path}: wait for it "
                    "to finish, or grade into another gradebook with --db PATH."
                ) from None
            try:  # who holds it, for the message of a second run; a full disk only loses that
                os.ftruncate(fd, 0)
                os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
            except OSError:
                pass
            yield
        finally:
            os.close(fd)

    def record(
        self,
        student: str,
        exercise: str,
        sha256: str | None,
        result,
        graded_on: str | None = None,
        seed: int | None = None,
        regrade_of: ClassRow | None = None,
    ) -> None:
        """Insert or replace one row, atomically. `result` is a CheckResult or None (missing);
        `graded_on`: the machine and GPU that ran it ("NVIDIA H200 on node3"); `seed`: the
        seed its inputs were drawn from; `regrade_of`: the row this regrade replaces."""
        student, exercise = unsurrogate(student), unsurrogate(exercise)
        if result is None:
            row = (student, exercise, None, NOT_SUBMITTED, 0.0, 0.0, None, None, time.time(), None, None, None)
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
                seed,
                json.dumps(regrade_summary(regrade_of)) if regrade_of else None,
            )
        with self._transaction() as db:
            db.execute(
                f"INSERT OR REPLACE INTO results ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})", row
            )

    def graded_hashes(self) -> dict:
        """(student, exercise) -> submission hash of every finished row."""
        with self._transaction() as db:
            rows = db.execute("SELECT student, exercise, submission_sha256 FROM results").fetchall()
        return {(s, e): h for s, e, h in rows}

    def set_notes(self, kind: str, notes: dict) -> None:
        """{(student, about): text} for one kind, in one transaction: a text replaces the
        note, an empty one removes it."""
        now = time.time()
        with self._transaction() as db:
            for (student, about), text in notes.items():
                student, about, text = unsurrogate(student), unsurrogate(about), unsurrogate(text or "")
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
        self.replace_notes(FILE_NOT_GRADED, notes, prefix)

    def replace_notes(self, kind: str, notes: dict, prefix: str = "") -> None:
        """The notes of `kind` whose `about` starts with `prefix` become `notes`,
        {(student, about): text}, in one transaction: what a run no longer finds goes."""
        now, prefix = time.time(), unsurrogate(prefix)
        with self._transaction() as db:
            db.execute("DELETE FROM notes WHERE kind = ? AND substr(about, 1, ?) = ?", (kind, len(prefix), prefix))
            db.executemany(
                "INSERT OR REPLACE INTO notes VALUES (?, ?, ?, ?, ?)",
                [
                    (unsurrogate(student), unsurrogate(about), kind, unsurrogate(text), now)
                    for (student, about), text in notes.items()
                ],
            )

    def notes(self) -> list[dict]:
        """Every note: student, about, kind, text, noted_at."""
        with self._transaction() as db:
            db.row_factory = sqlite3.Row
            return [dict(r) for r in db.execute("SELECT * FROM notes ORDER BY student, about, kind")]

    def rows(self, student: str | None = None) -> list[ClassRow]:
        """Every row (one student's, when named), typed: the one place stored rows become
        `ClassRow`s, whichever grader stored them."""
        with self._transaction() as db:
            db.row_factory = sqlite3.Row
            if student is None:
                rows = db.execute("SELECT * FROM results ORDER BY student, exercise").fetchall()
            else:
                rows = db.execute(
                    "SELECT * FROM results WHERE student = ? ORDER BY exercise", (unsurrogate(student),)
                ).fetchall()
        return [ClassRow.from_dict(_parsed(dict(r))) for r in rows]

    def by_task(self, student: str | None = None) -> dict[tuple[str, str], ClassRow]:
        """`rows` by (student, exercise)."""
        return {(r.student, r.exercise): r for r in self.rows(student)}

    def row(self, student: str, exercise: str) -> ClassRow | None:
        """One (student, exercise) row, as `rows` gives it, or None."""
        return next((r for r in self.rows(student) if r.exercise == unsurrogate(exercise)), None)


def _parsed(stored: dict) -> dict:
    """A stored row with its JSON columns read."""
    result_json, before = stored.pop("result_json", None), stored.get("regraded_from")
    return stored | {
        "result": json.loads(result_json) if result_json else None,
        "regraded_from": json.loads(before) if before else None,
    }


def regrade_summary(row: ClassRow) -> dict:
    """What a regraded row keeps of the row it replaced (and of any it replaced in turn), as
    stored: the keys of `Regraded`, `regraded_from` only where there was one."""
    return _stored_regrade(
        Regraded(row.verdict, row.score, row.max_score, row.graded_at, row.graded_on, row.seed, row.regraded_from)
    )


def _stored_regrade(before: Regraded) -> dict:
    data = {k: getattr(before, k) for k in ("verdict", "score", "max_score", "graded_at", "graded_on", "seed")}
    return data | ({"regraded_from": _stored_regrade(before.regraded_from)} if before.regraded_from else {})


def _read_only(path: Path) -> sqlite3.Connection:
    """A connection that writes nothing, also in a read-only folder, where SQLite cannot make a
    WAL gradebook's shared-memory file: then the file is read as it stands (immutable)."""
    uri = Path(path).resolve().as_uri()
    try:
        db = sqlite3.connect(f"{uri}?mode=ro", uri=True, timeout=30)
        db.execute("SELECT 1 FROM results LIMIT 1")
        return db
    except sqlite3.OperationalError:
        return sqlite3.connect(f"{uri}?mode=ro&immutable=1", uri=True, timeout=30)
