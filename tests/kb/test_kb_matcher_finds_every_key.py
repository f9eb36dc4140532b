"""GazetteerMatcher.find_all against a brute-force reference: every token n-gram, every key."""

from __future__ import annotations

import random
import re

from deid_ds.kb.matcher import Category, GazetteerMatcher, Match
from deid_ds.kb.normalize import fold

_TOKEN = re.compile(r"[^\W_]+")
_JOINER = re.compile(r"[\s'-]+")
WORDS = [
    "saint",
    "brieuc",
    "le",
    "gall",
    "d",
    "almeida",
    "rue",
    "de",
    "la",
    "paix",
    "jean",
    "pierre",
    "42",
    "Émile",
    "zola",
    "x",
]
SEPARATORS = [" ", " ", " ", "  ", "-", " - ", "'", "’", "\u00a0", ", ", ".", "_", "\n", "\t", "/", ""]


def reference(entries: list[tuple[str, Category]], text: str) -> list[tuple[int, int, str, frozenset[Category]]]:
    """Every n-gram of tokens separated only by spaces, hyphens or apostrophes whose tokens are a key's."""
    keys: dict[tuple[str, ...], set[Category]] = {}
    for key, category in entries:
        tokens = tuple(_TOKEN.findall(key))
        if tokens:
            keys.setdefault(tokens, set()).add(category)
    folded = fold(text)
    spans = [m.span() for m in _TOKEN.finditer(folded)]
    found = []
    for i in range(len(spans)):
        for j in range(i, len(spans)):
            if j > i and not _JOINER.fullmatch(folded, spans[j - 1][1], spans[j][0]):
                break
            tokens = tuple(folded[s:e] for s, e in spans[i : j + 1])
            if tokens in keys:
                begin, end = spans[i][0], spans[j][1]
                found.append((begin, end, folded[begin:end], frozenset(keys[tokens])))
    found.sort(key=lambda m: (m[0], -(m[1] - m[0])))
    return found


def test_find_all_agrees_with_brute_force_on_random_texts():
    rng = random.Random(5)
    kinds = [
        Category("names", "lastname"),
        Category("names", "firstname", ambiguous="short"),
        Category("places", "commune"),
        Category("streets", "street"),
    ]
    for _ in range(40):
        entries = []
        for _ in range(rng.randint(1, 25)):
            words = [fold(rng.choice(WORDS)) for _ in range(rng.randint(1, 4))]
            entries.append((rng.choice([" ", "-", "'"]).join(words), rng.choice(kinds)))
        matcher = GazetteerMatcher.build(entries)
        for _ in range(20):
            text = "".join(
                rng.choice(WORDS).upper() if rng.random() < 0.2 else rng.choice(WORDS) + rng.choice(SEPARATORS)
                for _ in range(rng.randint(0, 30))
            )
            got = [(m.start, m.end, m.key, frozenset(m.categories)) for m in matcher.find_all(text)]
            assert got == reference(entries, text), text
            assert matcher.find_all(text, fold(text)) == matcher.find_all(text)


def test_matches_are_ordinary_matches():
    matcher = GazetteerMatcher.build(
        [("saint brieuc", Category("places", "commune")), ("brieuc", Category("names", "firstname"))]
    )
    found = matcher.find_all("à Saint-Brieuc")
    assert found == [
        Match(2, 14, "saint-brieuc", (Category("places", "commune"),)),
        Match(8, 14, "brieuc", (Category("names", "firstname"),)),
    ]
    assert all(type(m) is Match for m in found) and len({*found}) == 2


def test_an_empty_matcher_and_an_empty_text_find_nothing():
    assert GazetteerMatcher.build([]).find_all("Saint-Brieuc") == []
    assert GazetteerMatcher.build([("brest", Category("places", "commune"))]).find_all("") == []
    assert GazetteerMatcher.build([("brest", Category("places", "commune"))]).find_all(" ... ") == []
