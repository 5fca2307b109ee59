"""`zerogpu grade COURSE [ASSIGNMENT]`: an nbgrader course's submissions graded as a class is
(grader/classroom/run.py), then every score written into nbgrader's gradebook, and the
feedback graded again since named (docs/COURSE.md). It prints nothing: it tells a
`Listener` what happens and returns a `GradingRun`."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from grader.backend import current
from grader.classroom.run import GradeRequest, GradingError, GradingRun, Listener, gradebook_for
from grader.classroom.run import grade_tasks, keep_notes, regraded, regrading
from grader.course.build import CourseError
from grader.course.config import tools_on_path
from grader.course.feedback import note_out_of_date, refresh_commands
from grader.course.scores import max_points
from grader.exercises import exercise
from grader.course.submissions import assignments, check_released, course_tasks, files_not_graded, layout
from grader.course.submissions import load_course, regrade_for_speed, sync_nbgrader


def grade_course(course_dir: Path, assignment: str | None, request: GradeRequest, listener=Listener()) -> GradingRun:
    """Grade `assignment` (None: every one) of the course in `course_dir`."""
    tools_on_path()
    with gradebook_for(course_dir, request) as book:
        course, names = _opened(Path(course_dir), assignment)
        tasks, ids, look = [], {}, 0
        for name in names:
            tasks += (found := course_tasks(course, name, list(request.exercises) if request.exercises else None))
            ids[name] = sorted({t.exercise for t in found})
            strays = files_not_graded(course, name)
            for (student, path), reason in strays.items():
                listener.not_graded(f"{student}/{path}", reason)
            keep_notes(book, found, strays, f"{name}/")
            look += len(strays) + sum(bool(t.note or t.autograder_cells) for t in found)
        todo, replaying = regrading(request, tasks, book)
        on_gpu = current() == "gpu"  # this machine's: a cluster's workers say for themselves
        if replaying is None and on_gpu:
            todo += regrade_for_speed(tasks, book)
        heading = (
            f"{', '.join(names)}: {len(tasks)} tasks, {len(tasks) - len(todo)} already graded, {len(todo)} to grade"
        )
        lost = grade_tasks(todo, book, request, (course.root, book.path.parent.resolve()), heading, listener, replaying)
        rows = book.by_task()
        synced = [(name, sync_nbgrader(course, name, rows), course.db_url) for name in names]
        stale = [
            (name, sorted(students), refresh_commands(name, next(iter(students)) if len(students) == 1 else None))
            for name, students in note_out_of_date(course, book, names).items()
        ]
        run = GradingRun(book.path, len(rows), regraded(book, replaying), lost)
        speed = [] if on_gpu or request.scheduler else ungraded_speed(ids)
        return replace(run, synced=synced, stale=stale, ungraded_speed=speed, needs_look=look)


def ungraded_speed(ids: dict) -> list:
    """`GradingRun.ungraded_speed` of a run without a GPU: for each assignment ({name: exercise
    ids}), the speed points in nbgrader's max score that nobody can earn here, and that max
    score. They are not scaled away: the speed cells stay "needs manual grade" (docs/COURSE.md)."""
    found = []
    for name, exercise_ids in ids.items():
        specs = [exercise(e).spec for e in exercise_ids]
        speed = sum(max_points(s, "speed") for s in specs)
        if speed:
            found.append((name, speed, speed + sum(max_points(s, "correctness") for s in specs)))
    return found


def _opened(course_dir: Path, assignment: str | None):
    """(the course, the assignments to grade), each checked to have exercise cells and to be
    released in nbgrader's gradebook; GradingError otherwise."""
    try:
        course = load_course(course_dir)
        names = [assignment] if assignment else assignments(course)
        for name in names or [""]:
            if not layout(course, name):
                raise CourseError(
                    f"no assignment {name!r} with exercise cells under {course.source} "
                    f"(there: {', '.join(assignments(course)) or 'none'})"
                )
            check_released(course, name)
    except CourseError as err:
        raise GradingError(str(err)) from None
    return course, names
