"""Hand-ins of one exercise far more alike than the class's usual pair, for "Needs a look" and
similarity.csv (exercise, student, student, score).

Each hand-in becomes its Python tokens, normalised so that renaming changes nothing: every name
a learner chooses is `N` (attributes such as `cuda.threadIdx`, keywords and builtins stay),
strings are `S`, comments and blank lines go. Its fingerprint is the set of hashes of every run
of K tokens (hand-ins are a few hundred tokens, so all runs are kept: winnowing's sampling buys
nothing at this size). What everyone writes alike must not flood the list, so the baseline is
set three ways before any pair is scored:
- runs found in the exercise's starter or its bundled solution are dropped (given code, and the
  kernel every correct student converges on: vector_add's five lines);
- runs found in at least COMMON_SHARE of the class's hand-ins of that exercise (and at least 3)
  are dropped: the class's own idiom;
- a pair is listed only when its score (shared runs ÷ the smaller hand-in's runs left) is at
  least PAIR_SCORE, with MIN_SHARED runs in common, and above the exercise's usual pair (its
  median score plus 3 × the median absolute deviation).
A hand-in that does not tokenise (a syntax error) is left out. A similar pair is a reason to
look, never a verdict.

Chosen over the `copydetect` package (a well-kept winnowing implementation): it compares files
on disk through Pygments' lexer and brings pygments, tqdm and its own HTML report; here the
hand-ins are bytes already read once (grader/classroom/handins.py), Python's own tokenizer is
exact for Python, and the baseline above (starter, solution, the class's distribution) is ours
either way: about a hundred lines, no new dependency."""

from __future__ import annotations

import builtins
import hashlib
import io
import keyword
import os
import stat
import statistics
import token
import tokenize
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

from grader.classroom.handins import Refused, entries, opened, read_below
from grader.exercises import UnknownExercise, exercise
from grader.textsafe import unsurrogate

K = 8
"""Tokens per run: shorter runs match any two kernels (`i = cuda . grid ( 1 )`)."""
COMMON_SHARE = 0.5
"""A run in this share of an exercise's hand-ins is the class's idiom, not a copy."""
PAIR_SCORE = 0.8
"""The least score a listed pair has."""
MIN_SHARED = 12
"""The fewest distinctive runs a listed pair shares: two short files alike by chance are not listed."""
MIN_PAIRS = 6
"""Pairs (4 hand-ins) from which an exercise's usual pair is a distribution worth comparing with."""
KEPT_NAMES = frozenset(dir(builtins)) | {"cuda", "np", "numpy", "math", "numba", "float32", "int32"}
"""Names kept as written: builtins and the modules a kernel uses."""


@dataclass(frozen=True)
class Pair:
    exercise: str
    first: str
    second: str
    score: float
    """Shared distinctive runs ÷ the smaller hand-in's distinctive runs, 0..1."""
    usual: float
    """The exercise's usual pair: the median score of all its pairs."""


def tokens(source: bytes) -> list[str]:
    """`source`'s tokens with every chosen name as N and every string as S; [] when it does
    not tokenise."""
    out, after_dot = [], False
    try:
        for tok in tokenize.tokenize(io.BytesIO(source).readline):
            if tok.type in (token.COMMENT, token.NL, token.ENCODING, token.ENDMARKER):
                continue
            text = tok.string
            if tok.type == token.NAME and not (after_dot or keyword.iskeyword(text) or text in KEPT_NAMES):
                text = "N"
            elif tok.type == token.STRING:
                text = "S"
            elif tok.type in (token.NEWLINE, token.INDENT, token.DEDENT):
                text = token.tok_name[tok.type]
            after_dot = text == "."
            out.append(text)
    except (tokenize.TokenError, SyntaxError, ValueError):
        return []
    return out


def fingerprint(source: bytes) -> set[int]:
    """The hashes of every run of K normalised tokens of `source`."""
    found = tokens(source)
    return {
        int.from_bytes(hashlib.blake2b("\x00".join(found[k : k + K]).encode(), digest_size=8).digest(), "big")
        for k in range(len(found) - K + 1)
    }


def _distinctive(hand_ins: dict, given: list[bytes]) -> dict:
    """{student: runs left} once the given code's runs and the class's common ones are dropped."""
    prints = {student: fingerprint(source) for student, source in hand_ins.items()}
    boilerplate = set().union(*(fingerprint(text) for text in given)) if given else set()
    counts: dict = {}
    for runs in prints.values():
        for run in runs:
            counts[run] = counts.get(run, 0) + 1
    common = max(3, COMMON_SHARE * len(prints))
    return {s: {r for r in runs if r not in boilerplate and counts[r] < common} for s, runs in prints.items()}


def _score(a: set, b: set) -> tuple[float, int]:
    shared = len(a & b)
    smaller = min(len(a), len(b))
    return (shared / smaller if smaller else 0.0), shared


def similar_pairs(exercise_id: str, hand_ins: dict, given: list[bytes] = ()) -> list[Pair]:
    """Pairs of `hand_ins` ({student: source}) of one exercise far more alike than its usual
    pair, most alike first; `given`: the starter's and the solution's text."""
    runs = _distinctive(hand_ins, list(given))
    scored = [(a, b, *_score(runs[a], runs[b])) for a, b in combinations(sorted(runs), 2)]
    if not scored:
        return []
    scores = [s for _, _, s, _ in scored]
    usual = statistics.median(scores)
    spread = statistics.median(abs(s - usual) for s in scores)
    bar = max(PAIR_SCORE, usual + 3 * spread) if len(scores) >= MIN_PAIRS else PAIR_SCORE
    found = [
        Pair(exercise_id, a, b, round(score, 3), round(usual, 3))
        for a, b, score, shared in scored
        if score >= bar and shared >= MIN_SHARED
    ]
    return sorted(found, key=lambda p: (-p.score, p.first, p.second))


def class_pairs(sources: dict, given: dict) -> list[Pair]:
    """Every exercise's pairs: `sources` {(student, exercise): bytes}, `given` {exercise:
    [starter and solution texts]}."""
    by_exercise: dict = {}
    for (student, exercise_id), source in sources.items():
        by_exercise.setdefault(exercise_id, {})[student] = source
    pairs = []
    for exercise_id in sorted(by_exercise):
        pairs += similar_pairs(exercise_id, by_exercise[exercise_id], given.get(exercise_id, ()))
    return pairs


def hand_ins(directory, rows) -> dict:
    """{(student, exercise): the bytes graded} of `rows` (`ClassRow`s), read again from the
    class folder (DIR/<student>/<exercise>.py) or an nbgrader course's extracted cells
    (zerogpu/submissions/<assignment>/<student>/<exercise>.py), each as a regular file never
    through a link; only a file whose hash is the row's (what was graded) counts."""
    wanted = {(r.student, r.exercise): r.submission_sha256 for r in rows if r.submission_sha256}
    if not directory or not wanted:
        return {}
    root, found = Path(directory), {}
    bases = [()]
    if stat.S_ISDIR(_mode(root / "zerogpu" / "submissions")):
        bases = [("zerogpu", "submissions", name) for name, _ in _folders(root, ("zerogpu", "submissions"))]
    for below in bases:
        names = {unsurrogate(name): name for name, _ in _folders(root, below)}  # as stored -> on disk
        for (student, exercise_id), sha in wanted.items():
            if (student, exercise_id) in found or student not in names:
                continue
            try:
                data = read_below(root, *below, names[student], f"{exercise_id}.py")
            except Refused:
                continue
            if hashlib.sha256(data).hexdigest() == sha:
                found[(student, exercise_id)] = data
    return found


def _mode(path: Path) -> int:
    try:
        return os.lstat(path).st_mode
    except OSError:
        return 0


def _folders(root: Path, below: tuple) -> list:
    """(name, mode) of the real folders in root/below..., none through a link."""
    try:
        with opened(root, below) as folder:
            return [(n, m) for n, m in entries(folder) if stat.S_ISDIR(m) and not n.startswith(".")]
    except (Refused, OSError):
        return []


def given_texts(exercise_ids) -> dict:
    """{exercise: [its starter's and its solution's bytes]}: the code every hand-in may share."""
    found = {}
    for exercise_id in exercise_ids:
        try:
            ex = exercise(exercise_id)
        except UnknownExercise:
            continue
        found[exercise_id] = [f.read_bytes() for f in (ex.starter_file, ex.solution_file) if f.is_file()]
    return found
