from grader.course.cells import *  # noqa: F401,F403 - the path generated course folders name
