from grader.course.grade_cell import *  # noqa: F401,F403 - the path course notebooks made before name
