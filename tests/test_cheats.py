"""Graded mode against hostile and broken submissions: every one in tests/cheats/ must get
its expected verdict, never `passed`, and never crash the grader."""
import re
from pathlib import Path

import pytest

from grader.checking.pipeline import check_file

CHEATS = Path(__file__).parent / "cheats"


def corpus():
    for path in sorted(CHEATS.glob("*.py")):
        head = path.read_text().splitlines()[:2]
        exercise = re.fullmatch(r"# exercise: (\w+)", head[0]).group(1)
        expected = re.fullmatch(r"# expect: (\w+)", head[1]).group(1)
        yield pytest.param(exercise, path, expected, id=path.stem)


def test_the_corpus_is_large():
    assert len(list(CHEATS.glob("*.py"))) >= 25


@pytest.mark.parametrize("exercise_id, path, expected", list(corpus()))
def test_cheat_gets_its_verdict(exercise_id, path, expected, monkeypatch, tmp_path):
    monkeypatch.setenv("ZEROGPU_SECRET", "test-secret")
    result = check_file(exercise_id, path, graded=True, case_timeout=5)
    assert result.verdict == expected, result.message
    assert not result.passed and result.score < result.max_score
    assert result.seed is None, "graded results must not reveal the seed"
