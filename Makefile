# `make test` and `make lab` are all the set-up there is: each creates .venv when needed.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: test test-slow test-thorough test-ci bytecode lint lab course-lab browser-test gpu-test bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test,cu12]"  # cu12: NVRTC/NVVM, PTX without a GPU (README)
	touch $(STAMP)

# Every check starts a few Python processes; where PYTHONDONTWRITEBYTECODE is set, each would
# compile grader/ again (about 0.2 s of CPU apiece), so compile it once before the tests.
bytecode: $(STAMP)
	$(PY) -m compileall -q grader

# The whole suite on Numba's CUDA simulator (no GPU needed), two workers; every bundled
# kernel must compile to PTX (tests/test_gpucompile.py), which proves the [cu12] pieces work.
test: bytecode
	ZEROGPU_BACKEND=simulator ZEROGPU_REQUIRE_PTX=1 $(PY) -m pytest -n 2 --dist worksteal --durations=10

# The slow tier (classes and courses graded, every lesson run as shipped, the forged recordings and
# the GPU-verdict corpus checked whole, checks that wait out a time limit).
test-slow: bytecode
	ZEROGPU_BACKEND=simulator ZEROGPU_REQUIRE_PTX=1 $(PY) -m pytest -n 2 --dist worksteal -m 'slow and not thorough' --durations=10

# The thorough tier, not run by CI: a second engine or path over a corpus the other tiers
# already check one way (every cheat and valid file on the simulator and with the policy off,
# every wrong submission through the whole check, every lesson with its solutions, older
# courses, Dask's command line). Run it before a release and after changing an engine.
test-thorough: bytecode
	ZEROGPU_BACKEND=simulator ZEROGPU_REQUIRE_PTX=1 $(PY) -m pytest -n 2 --dist worksteal -m thorough --durations=10

# CI: both tiers in one run, so the default tier's tests fill the time a worker would
# otherwise spend idle at the end of each tier (one xdist start-up, one tail, not two).
test-ci: bytecode
	ZEROGPU_BACKEND=simulator ZEROGPU_REQUIRE_PTX=1 $(PY) -m pytest -n 2 --dist worksteal -m 'not gpu and not browser and not thorough' --durations=20

# ruff: lint and format check (CI runs it before the tests).
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

# The learner's JupyterLab on their own copies of the lessons, my-lessons/ (git-ignored; made on
# first use, never overwritten, new versions of a lesson offered beside: README), with terminals
# that find `zerogpu` and without nbgrader; the grader picks the simulator when there is no GPU.
# `zerogpu lab` (grader/learner/lab.py) writes the lab's Jupyter configuration and starts it;
# tests/browser/lab.py starts it with the same command: keep them in step.
lab: $(STAMP)
	$(VENV)/bin/zerogpu lab

# JupyterLab with nbgrader, for instructors and the learners of an nbgrader course
# (docs/COURSE.md), on COURSE (default: this folder).
COURSE ?= .
course-lab: $(STAMP)
	$(VENV)/bin/zerogpu lab --course "$(COURSE)"

# In headless Chromium, JupyterLab started as `make lab` starts it: lessons 01, 07 and 12 run;
# a check after a failed exercise cell, `zerogpu list` in a lab terminal, no nbgrader, a save that
# leaves `git status` clean; then the class report and nbgrader's feedback pages; screenshots in
# tests/browser/artifacts/ (or $ZEROGPU_ARTIFACTS). Needs the system's chromium and chromedriver
# (README, "Browser tests"); skipped without them, failed instead under ZEROGPU_REQUIRE_BROWSER=1 (CI).
browser-test: bytecode
	ZEROGPU_BACKEND=simulator $(PY) -m pytest -p no:xdist -m browser tests/browser --durations=10

# On a GPU machine: the tests marked gpu.
gpu-test: $(STAMP)
	ZEROGPU_BACKEND=gpu $(PY) -m pytest -m gpu

clean:
	rm -rf $(VENV) .pytest_cache
