"""What a surrogate draw keeps from one draw to the next gives what it gave worked out afresh (docs/benchmarks.md,
*deidentify*): the phrase test of a name's guard, a keyed digest, a patient's date shift."""

from __future__ import annotations

import hashlib
import hmac
import re
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from deid_ds.deidentification import dates_shift
from deid_ds.deidentification.context import Context
from deid_ds.deidentification.keyed import Keyring
from deid_ds.deidentification.overlap import _WORD, holds_phrase, normalise
from deid_ds.deidentification.pools import load_pools

_WORDS = ["Le", "LE", "Du", "du", "Duc", "Jean", "jean", "Élodie", "ELODIE", "E\u0301lodie", "de", "la", "Tour", "ﬁn"]
_WORDS += ["O'Neil", "d’Arc", "a", "l", "Thomas", "", "Œuvre", "ss", "ß"]
_GAPS = [" ", "-", "  ", "'", "’", ". ", ", ", "", "/", "\t"]
_TEXTS = st.lists(st.tuples(st.sampled_from(_WORDS), st.sampled_from(_GAPS)), max_size=5).map(
    lambda pieces: "".join(w + g for w, g in pieces)
)


def _holds_phrase_by_regex(text: str, phrases: list[str]) -> bool:
    """The test as a regex built per phrase: the phrase's words, whole, in the text's words."""
    words = " ".join(_WORD.findall(normalise(text)))
    for phrase in phrases:
        wanted = " ".join(_WORD.findall(normalise(phrase)))
        if wanted and re.search(r"(?<![^ ])" + re.escape(wanted) + r"(?![^ ])", words):
            return True
    return False


@settings(max_examples=500, deadline=None)
@given(_TEXTS, st.lists(_TEXTS, max_size=3))
def test_the_phrase_test_is_the_regex_test(text, phrases):
    assert holds_phrase(text, phrases) == _holds_phrase_by_regex(text, phrases)


def test_the_phrase_test_reads_whole_words():
    assert holds_phrase("Thomas Le-Du", ["LE DU"]) and not holds_phrase("Thomas LE DUC", ["LE DU"])
    assert not holds_phrase("Thomas", ["", "-"]) and holds_phrase("É. Le  Du", ["é"])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=8), min_size=1, max_size=4))
def test_a_keyed_digest_is_the_hmac_of_its_parts(parts):
    keyring = Keyring(b"a secret key of 32 bytes, or so.")
    expected = hmac.new(keyring.key, "\x1f".join(parts).encode("utf-8"), hashlib.sha256).digest()
    assert keyring.digest(*parts) == expected and keyring.digest(*parts) == expected
    other = Keyring(b"another key of thirty-two bytes!")
    assert other.digest(*parts) == hmac.new(other.key, "\x1f".join(parts).encode(), hashlib.sha256).digest()


def _offset_afresh(ctx: Context) -> int:
    rng = ctx.keyring.rng(ctx.scope, "DATE", "offset")
    days = rng.randint(dates_shift.MIN_SHIFT, dates_shift.MAX_SHIFT)
    return days if rng.random() < 0.5 else -days


def test_a_note_s_date_shift_is_drawn_once_per_scope():
    ctx = Context(Keyring(b"k" * 32), load_pools(None), "patient:A")
    other = replace(ctx, scope="patient:B")  # the same memory, another scope
    assert other.memory is ctx.memory
    for _ in range(2):
        assert dates_shift.date_offset(ctx) == _offset_afresh(ctx)
        assert dates_shift.date_offset(other) == _offset_afresh(other)
    assert dates_shift.date_offset(ctx) != dates_shift.date_offset(other)
