from grader.course.plugins import *  # noqa: F401,F403 - the path nbgrader configs of older courses name
