from grader.course.preprocessors import *  # noqa: F401,F403 - the path nbgrader configs made before name
