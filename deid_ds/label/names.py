"""Orthography of person names: where a run of name-shaped tokens starts and ends.

French clinical notes write names as ``Jeanne LE GALL``, ``LE GALL Jeanne``, ``J.-P. Morvan``,
``Amélie de Saint-Aubin``, ``d'Almeida``: capitalised or upper-case words, initials, and lower-case
particles *inside* the name. A run stops at a line break, a table cell, punctuation, a lower-case word,
a digit, or a capitalised word that is never a name (titles, months, ``CEDEX``, department names:
:data:`deid_ds.label.cues.NOT_NAME`). Context rules decide *whose* name a run is; this module only says
where it is.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from itertools import compress

from deid_ds.kb.ambiguity import is_common_word
from deid_ds.kb.normalize import fold
from deid_ds.label.cues import CIVILITIES, NOT_NAME, PROFESSIONAL_TITLES
from deid_ds.label.view import DIGIT, INITIAL, LOWER, PARTICLES, PUNCT, TITLE, UPPER, NoteView, WordMemo, token_shape

#: Longest name, in tokens (``Marie-Claire Anne de La Tour d'Auvergne`` is 7).
MAX_NAME_TOKENS = 7

# What each token is to a name run (:func:`name_end`'s kind), one letter per token: C core, N inner
# (particle, initial), S stop; lower case when the token does not continue the previous one on its line.
_KIND_OF_SHAPE = {UPPER: "C", TITLE: "C", INITIAL: "N", LOWER: "S", DIGIT: "S", PUNCT: "S"}
_KIND_OF_WORD = {**dict.fromkeys(NOT_NAME, "S"), **dict.fromkeys(PARTICLES, "N")}  # particles first, as in name_end
#: A name run over those letters: at most MAX_NAME_TOKENS tokens on one line, ending on a core one.
_NAME_RUN = re.compile(f"[Cc](?:[CN]{{0,{MAX_NAME_TOKENS - 2}}}C)?|[Nn][CN]{{0,{MAX_NAME_TOKENS - 2}}}C")


def is_particle(folded: str) -> bool:
    """``de``, ``le``, ``d'``... (folded): allowed inside a name, never a name alone."""
    return folded in PARTICLES


def is_core(view: NoteView, i: int) -> bool:
    """Whether token ``i`` can be a (non-particle) part of a name: capitalised, not a known non-name."""
    flags = view.cache.get("core")  # core_flags(view), without a second call: the name rules ask this of most tokens
    return (flags if flags is not None else core_flags(view))[i]


def core_flags(view: NoteView) -> list[bool]:
    """:func:`is_core` of every token, computed once per note (every name rule asks it)."""
    flags = view.cache.get("core")
    if flags is None:
        flags = view.cache["core"] = [kind in "Cc" for kind in name_kinds(view)]
    return flags


def _name_kind(word: str) -> str:
    """What a token is to a name run, in upper case (``C``, ``N`` or ``S``): its word's kind, else its shape's.

    A word whose accents fold it onto a particle (``Lê``, ``LÊ``) is a name: particles are written without."""
    key = fold(word)
    if key in PARTICLES and key != word.lower():
        return _KIND_OF_SHAPE[token_shape(word)]
    if never_in_name(word):
        return "S"
    return _KIND_OF_WORD.get(key, _KIND_OF_SHAPE[token_shape(word)])


def never_in_name(word: str) -> bool:
    """Words that end a name run whatever their case: ``à`` (never an initial: ``DR ABGRALL À BREST``) and the verb
    forms a lexicon of lemmas lacks, four letters or more (``SA FILLE KRYSTEL VIENDRA``, ``LE PATIENT SERA REVU``)."""
    if word in ("à", "À"):
        return True
    key = fold(word)
    return len(key) > 3 and _verb_form(key)


#: :func:`_name_kind` memoised: it depends on the word alone, and words repeat from note to note.
_NAME_KINDS = WordMemo(_name_kind, 1 << 16)


def _line_starts(joins: list[bool]) -> list[int]:
    """Indices of the tokens that start a line: the first one, and each one after a gap that is not blank.

    ``joins`` is :attr:`NoteView.joins` (it ends with False, for the last token); found with
    ``list.index``, a search in C: most tokens are joined to the next one.
    """
    if not joins:
        return []
    starts = [0]
    k = joins.index(False)
    while k + 1 < len(joins):
        starts.append(k + 1)
        k = joins.index(False, k + 1)
    return starts


def _bare_a_between_names(view: NoteView, letters: list[str]) -> list[int]:
    """The tokens ``A`` between two core words in capitals on one line: in a text typed in capitals, ``à``."""
    words, shapes = view.words, view.shapes
    found, k = [], -1
    while True:
        try:
            k = words.index("A", k + 1)  # rare: found in C, no loop over the note's tokens
        except ValueError:
            return found
        between = 0 < k < len(words) - 1 and letters[k - 1] in "Cc" and letters[k + 1] == "C"
        if between and shapes[k - 1] == shapes[k + 1] == UPPER:
            found.append(k)


def name_kinds(view: NoteView) -> str:
    """What every token is to a name run, one letter each (``C``, ``N``, ``S``; see ``_NAME_RUN``).

    Built once per note so that every run of the note is one regex match over this string instead of
    a token-by-token walk: the name rules look for runs at most tokens of most notes.
    """
    kinds = view.cache.get("name_kinds")
    if kinds is None:
        letters = list(map(_NAME_KINDS.__getitem__, view.words))
        for k in _line_starts(view.joins):
            letters[k] = letters[k].lower()  # starts a line: a run may start here, not go on across
        for k in _bare_a_between_names(view, letters):
            letters[k] = "S"  # "LE DR PAUL ABGRALL A PLOUGASTEL": à written in capitals, between two names
        kinds = view.cache["name_kinds"] = "".join(letters)
    return kinds


def name_end(view: NoteView, i: int) -> int:
    """End (exclusive) of the name run starting at token ``i``; ``i`` itself when no name starts there.

    The run holds at least one core token and ends on one: particles and initials only lead into a
    name (``J. Roussel``, ``de Saint-Aubin``), and it stays on one line, at most ``MAX_NAME_TOKENS``
    long (one match of ``_NAME_RUN`` over :func:`name_kinds`).
    """
    match = _NAME_RUN.match(name_kinds(view), i)
    return match.end() if match else i


def name_start(view: NoteView, j: int, *, max_tokens: int = MAX_NAME_TOKENS) -> int:
    """Start of the name run that ends just before token ``j``; ``j`` itself when none ends there.

    The mirror of :func:`name_end`, for cues that *follow* a name (``Romain PICARD — praticien``).
    """
    i = j
    while i > 0 and j - i < max_tokens:
        k = i - 1
        if k < j - 1 and not view.joined(k):
            break
        f = view.folded[k]
        if is_particle(f) or is_core(view, k) or (view.shapes[k] == INITIAL and f not in NOT_NAME):
            i = k
            continue
        break
    while i < j and is_particle(view.folded[i]) and view.shapes[i] == LOWER:
        i += 1  # "la" in "avec la DUPONT" is not part of the name; "Le" in "Le Gall" is
    return i if any(is_core(view, k) for k in range(i, j)) else j


#: The forms of the commonest irregular verbs that a lexicon of lemmas lacks (``LE PATIENT SERA REVU``, ``IL VA
#: MIEUX``), folded.
_IRREGULAR_VERB_FORMS = frozenset(
    """sera serait seront seraient etait etaient ete ont sont va vont ira irait iront peut peuvent pourra pourrait
    doit doivent devra devrait veut veulent voudra voudrait sait saura fera ferait feront viendra viendrait""".split()
)
#: Endings of the future and the conditional, and what the infinitive ends with (``sortira``: sortir).
_FUTURE_ENDINGS = (
    ("eraient", "er"),
    ("erait", "er"),
    ("eront", "er"),
    ("era", "er"),
    ("iront", "ir"),
    ("irait", "ir"),
    ("ira", "ir"),
)


def _verb_form(folded: str) -> bool:
    """A form of a verb the lexicon lacks: an irregular one (``sera``) or a future or conditional (``sortira``)."""
    return folded in _IRREGULAR_VERB_FORMS or _future_of_a_word(folded)


def _future_of_a_word(folded: str) -> bool:
    """Whether ``folded`` is a future or conditional form of a verb of the lexicon (``rentrera``, ``sortirait``)."""
    for ending, infinitive in _FUTURE_ENDINGS:
        if folded.endswith(ending) and len(folded) - len(ending) >= 3:
            return is_common_word(folded[: -len(ending)] + infinitive, accents_known=False)
    return False


def is_french_word(w: str) -> bool:
    """A word of the lexicon (lower case), or a form the lexicon's lemma makes: feminine or plural, a verb's
    present (``présente``: présenter) or a past participle (``SORTI``, ``sorties``: sortir; ``revu``: revoir).
    For words written in capitals or at a line's start, where the case tells a name from a word no more."""
    if is_common_word(w, accents_known=False):
        return True
    if any(w.endswith(e) and is_common_word(w[: -len(e)], accents_known=False) for e in ("e", "s", "es")):
        return True
    if w.endswith("e") and is_common_word(w + "r", accents_known=False):
        return True
    if _verb_form(fold(w)):
        return True
    stem = w.removesuffix("s").removesuffix("e")
    if stem.endswith("i"):
        return is_common_word(stem + "r", accents_known=False)
    return stem.endswith("u") and any(
        is_common_word(stem[:-1] + end, accents_known=False) for end in ("oir", "ir", "re")
    )


#: Particles that a name keeps in lower case after a civility or a title (``Mme [de Kerguelen]``).
_NOBLE_PARTICLES = frozenset({"de", "d'", "d’", "du", "des"})


def particle_after_title(view: NoteView, k: int) -> bool:
    """Whether the lower-case particle at token ``k`` starts a name: right after a civility or a title
    (``Mme de LA VILLEMARQUÉ``, ``M. du Pont``), where ``de`` can be nothing but the name's."""
    return (
        view.folded[k] in _NOBLE_PARTICLES
        and k > 0
        and view.joined(k - 1)
        and (view.folded[k - 1] in CIVILITIES or view.folded[k - 1] in PROFESSIONAL_TITLES)
    )


def name_after(view: NoteView, i: int, *, skip_titles: bool = True, initial_m: bool = False) -> tuple[int, int] | None:
    """The name run starting at token ``i``, after any titles or civilities (``Mme Dr``, ``M.``).

    With ``initial_m`` (after a professional title or phrase: ``Dr M. Munoz``, ``Dicté par M. Joubert``)
    an ``M.`` before a name is read as the initial of a given name and kept in the run, since a
    professional is not announced with a civility after their title. Returns ``(start, end)`` or None.
    """
    n = len(view)
    skipped = 0
    while True:
        if (initial_m or skipped) and i + 1 < n and view.words[i] == "M." and view.joined(i):
            # "Dr M. Munoz", "Mme M. LEBRETON": M. + one name word is an initial; "M. Jean DUPONT" is Monsieur
            end = name_end(view, i + 1)
            if end > i + 1 and len(core_tokens(view, i + 1, end)) == 1:
                longer = extend_name(view, i + 1, end)
                if longer == end or view.shapes[end] == INITIAL:  # "M. Paul Le Du": Monsieur, then two names
                    return i, longer
        if not (skip_titles and i < n and (view.folded[i] in CIVILITIES or view.folded[i] in PROFESSIONAL_TITLES)):
            break
        if i + 1 < n and not view.joined(i):
            return None
        i += 1
        skipped += 1
    if i >= n:
        return None
    end = name_end(view, i)
    if end == i and (skipped or initial_m):
        end = _particles_surname_end(view, i)  # "M. Le Du": a surname of particles, after a title or civility
        if end > i:
            return i, end
    if end == i and i + 1 < n and view.joined(i):
        # initials alone after a cue, a nurse's signature (guidelines: "[J.-M. D.]" like "[Céline W.]")
        words = view.words
        if _TRAILING_INITIAL.fullmatch(words[i]) and _TRAILING_INITIAL.fullmatch(words[i + 1]):
            if i + 2 >= n or not view.joined(i + 1) or not (is_core(view, i + 2) or view.shapes[i + 2] == INITIAL):
                return i, i + 2
    return (i, extend_name(view, i, end)) if end > i else None


def _particles_surname_end(view: NoteView, i: int) -> int:
    """End of a surname made of capitalised particles only (``Le Du``, ``LE DU``) from token ``i``, set apart by a
    punctuation mark or its line's end (two particles at least); ``i`` when there is none."""
    n = len(view)
    k = i
    while k < n and k - i < 3 and view.shapes[k] in (TITLE, UPPER) and is_particle(view.folded[k]):
        k += 1
        if k < n and not view.joined(k - 1):
            break
    if k - i < 2 or not (k >= n or not view.joined(k - 1) or view.shapes[k] == PUNCT):
        return i
    return k


#: An initial written after a surname (``LE GOFF P.``, ``Céline W.``, ``J.-M. D.``): a period is required,
#: a capital alone being as often a word (``A``) or a grade.
_TRAILING_INITIAL = re.compile(r"[A-ZÀ-ÖØ-Þ]\.(?:-[A-ZÀ-ÖØ-Þ]\.)*")


def extend_name(view: NoteView, i: int, end: int) -> int:
    """End of the name run ``[i, end)`` once what the run grammar stops before is added back.

    Guidelines: "Initials written after a surname belong to it (``Dr [LE GOFF P.]``, ``[Céline W.]``)",
    so one initial with its period right after the run is kept; and a surname ending on capitalised
    particles (``Paul Le Du``, ``Anne De La``... written so only as a name) keeps them, two at least (one
    capitalised ``Le`` may start the next sentence). Used after a cue only (:func:`name_after`): the run
    grammar itself (:func:`name_end`) stays the plain one every rule shares.
    """
    n = len(view)
    k = end
    while (
        k < n
        and k - end < 3
        and view.joined(k - 1)
        and view.shapes[k] in (TITLE, UPPER)
        and is_particle(view.folded[k])
    ):
        k += 1
    if k - end >= 2 and (k >= n or view.shapes[k] not in (DIGIT, LOWER) or not view.joined(k - 1)):
        end = k
    if end < n and view.joined(end - 1) and _TRAILING_INITIAL.fullmatch(view.words[end]):
        if end + 1 >= n or not view.joined(end) or not is_core(view, end + 1):
            end += 1
    return end


def core_tokens(view: NoteView, i: int, j: int) -> list[str]:
    """The folded core tokens of the run ``[i, j)`` (particles and initials left out)."""
    return list(compress(view.folded[i:j], core_flags(view)[i:j]))


def iter_name_runs(view: NoteView) -> list[tuple[int, int]]:
    """Every maximal name run of the note, as token ranges ``(start, end)``, left to right.

    Computed once per note and kept on the view: the metadata matcher and propagation both walk them.
    """
    runs = view.cache.get("name_runs")
    if runs is None:
        # left to right, each run starting where the previous one ended: name_end at every token, as one scan
        runs = view.cache["name_runs"] = [match.span() for match in _NAME_RUN.finditer(name_kinds(view))]
    return runs


def runs_with(view: NoteView, words: set[str] | frozenset[str]) -> list[tuple[int, int]]:
    """The name runs of the note (:func:`iter_name_runs`) holding a core token among ``words`` (folded).

    A rule that only cares about a handful of names (the patient's, those already found) finds the
    few tokens first, then their runs: most runs of a note share nothing with such names, and
    classifying each of them would cost more than the search.
    """
    if not words:
        return []
    folded = view.folded
    hits = [k for k in compress(range(len(folded)), core_flags(view)) if folded[k] in words]
    if not hits:
        return []
    runs = iter_name_runs(view)
    starts = view.cache.get("name_run_starts")
    if starts is None:
        starts = view.cache["name_run_starts"] = [i for i, _ in runs]
    found: list[tuple[int, int]] = []
    for k in hits:
        r = bisect_right(starts, k) - 1
        if r >= 0 and k < runs[r][1] and (not found or found[-1] != runs[r]):
            found.append(runs[r])
    return found


def core_words(view: NoteView) -> set[str]:
    """The distinct folded core tokens of the note (what a name lexicon can be asked about)."""
    return set(compress(view.folded, core_flags(view)))
