"""Surrogate person names (PATIENT, DOCTOR): given names and surnames mapped separately, part by part.

A name span is cut into *groups*: hyphen-joined words (``Jean-Pierre``, ``FERREIRA-KERVELLA``), a
surname with its particles (``LE GALL``, ``de la Tour``), initials (``J.``, ``J.-Y.``). Each group is
given a role, then each of its parts is mapped on its own, keyed by the folded part:

* ``first`` part ``jeanne`` → a given name of the person's sex: the sex the note gives around the name
  (``Mme``, ``Monsieur``, ``née``, ``la patiente``: :func:`sex_cue`, found by the document for its name
  spans and kept for the whole document), else the sex the given-name lists give the original (one sex
  only), else an epicene given name (``Camille``, ``Dominique``). The cue is per document: a given name
  the lists do not settle may get another surrogate in a note of the same patient that gives no sex. A
  professional's (DOCTOR) given name takes no cue: the lists' sex or an epicene name, so that it is the
  same in every patient's notes (``Mme Camille DURAND`` here, ``Dr Camille DURAND`` there);
* ``last`` unit ``le gall`` (particles included) → a surname;
* an initial → the initial of the surrogate of the given name it stands for when that is known (the
  patient's metadata, or a given name of that initial written with the same surname in any of the
  patient's notes: ``J. DUPONT`` here is ``Jean DUPONT`` there), else a keyed letter.

So ``Mme Le Gall``, ``Jeanne LE GALL``, ``J. Le Gall`` and the metadata ``LE GALL``/``JEANNE`` all map to
the same ``Le Bihan``/``Claire`` pair, each written in its original's case. The role of a group comes
from, in order: the patient's metadata (for PATIENT spans), case (in ``Jeanne LE GALL`` the capitals are
the surname), the name lists (a word only known as a given name stays a given name whatever the span's
context — ``IDE Salma``, a relative's ``Ndeye`` alone; a compound of given names, ``Jean-Michel``, is a given
name; the shipped lists first, then, for a word they know as both or do not know, what the knowledge base's
professionals mostly are), then the words around a name written alone (:func:`relative_cue`: ``son fils
Custódio``, ``sa voisine Milena`` — relatives and friends are called by their given name), then position
(a lone word nothing settles is a surname — ``Dr KERBRAT`` — and in ``Jeanne Le Gall`` the last group is).
Dictation initials (``YK/CL``) are mapped letter by letter.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import lru_cache

from deid_ds.deidentification.casing import apply_case, case_style
from deid_ds.deidentification.context import DOCTOR_SCOPE, Context, words_of
from deid_ds.deidentification.overlap import normalise
from deid_ds.deidentification.pools import squash
from deid_ds.kb.normalize import fold_key, name_particles

_TOKEN = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")
#: Initial letters surrogates use (the commonest initials of French given names).
INITIALS = tuple("ABCDEFGHIJLMNOPRSTVY")
#: ``ctx.memory`` key of the names written in the document's name spans (squashed → label, role, original).
NAMES_SEEN = "names seen"

#: Words right before a name that give the person's sex. ``Dr``/``Docteur`` give none.
_SEX_BEFORE = re.compile(
    r"(?:(?<![\w.\-])(?P<m>m|mr|monsieur)\.?|(?<![\w.\-])(?P<f>mme|madame|mlle|mademoiselle|melle)\.?"
    r"|\b(?P<patient>(?:le\s+)?patient|(?:la\s+)?patiente)|\b(?P<son>son\s+(?:fils|pere|mari|frere|epoux))"
    r"|\b(?P<sa>sa\s+(?:fille|mere|femme|soeur|epouse)))[\s,:]*$",
    re.IGNORECASE,
)
#: Words right after a name that give the person's sex: ``née le``, ``âgé de``, ``, épouse``.
_SEX_AFTER = re.compile(
    r"^[\s,(]*(?:(?P<f>nee|agee\s+de|epouse)|(?P<m>ne\s+(?:le|en|a|au|vers)|age\s+de|epoux))\b", re.IGNORECASE
)


#: The people around a patient, who notes call by their given name (``son fils Custódio``, ``sa voisine Milena``,
#: ``Ses enfants, Xiaoling et Maurice``, ``Rosette (amie)``).
_RELATION = (
    r"(?:petite?s?-(?:fille|fils|enfant)s?|petits-enfants|belle?-(?:fille|fils|soeur|frere|mere|pere)s?|fils|filles?"
    r"|enfants?|neveux?|nieces?|freres?|soeurs?|cousine?s?|amie?s?|voisine?s?|mari|epouse|epoux|femme|compagne?"
    r"|conjointe?|compagnons?|partenaire|parents?|pere|mere|oncle|tante|gendre|bru|tutrice|tuteur|aidante?"
    r"|entourage)"
)
_RELATIVE_BEFORE = re.compile(
    rf"\b{_RELATION}\b(?:\s*(?:principale?|de confiance))?[\s,:;(]*(?:[^\W\d_][\w'’-]*\s*(?:,|et)\s*){{0,3}}$",
    re.IGNORECASE,
)
_RELATIVE_AFTER = re.compile(rf"^\s*\(\s*{_RELATION}\s*\)", re.IGNORECASE)
#: ``ctx.memory`` key of a word the note writes alone as a relative's given name (:func:`relative_cue`).
RELATIVE_GIVEN = "given:{label}:{key}"


def relative_cue(before: str, after: str) -> bool:
    """Whether a name written alone is a relative's or a friend's given name by the words around it: right
    after ``son fils``, ``sa voisine``, ``Ses enfants, X et``, ``amie (``, or before ``(petite-fille)``."""
    return bool(_RELATIVE_BEFORE.search(normalise(before[-60:])) or _RELATIVE_AFTER.match(normalise(after[:30])))


def sex_cue(before: str, after: str) -> str | None:
    """``"F"``/``"M"`` when the words around a name give the person's sex, else ``None``.

    ``before`` and ``after`` are the note's text just before and just after the span (folded here).
    """
    before, after = normalise(before[-40:]), normalise(after[:20])
    m = _SEX_BEFORE.search(before)
    if m:
        if m["m"] or m["son"] or (m["patient"] and not m["patient"].endswith("e")):
            return "M"
        return "F"
    m = _SEX_AFTER.match(after)
    if m:
        return "F" if m["f"] else "M"
    return None


@dataclass
class _Word:
    start: int
    end: int
    text: str
    particle: bool = False
    initial: bool = False


@dataclass
class _Group:
    words: list[_Word]
    role: str = ""

    @property
    def start(self) -> int:
        return self.words[0].start

    @property
    def end(self) -> int:
        return self.words[-1].end

    def units(self) -> list[list[_Word]]:
        """Parts mapped on their own: particles stay with the word they introduce (``LE GALL``)."""
        units: list[list[_Word]] = []
        pending: list[_Word] = []
        for word in self.words:
            pending.append(word)
            if not word.particle:
                units.append(pending)
                pending = []
        if pending:
            units.append(pending)
        return units


def _groups(text: str, surname: str | None = None) -> list[_Group]:
    """The groups of a name span; ``surname``: the patient's last name, folded (a surname made of
    particles, ``LE DU``, is then one whatever the case: :func:`_particle_surnames`)."""
    particles = name_particles()
    words = [_Word(m.start(), m.end(), m.group()) for m in _TOKEN.finditer(text)]
    for i, word in enumerate(words):
        word.initial = len(word.text) == 1 or (
            len(word.text) == 2
            and word.end < len(text)
            and text[word.end] == "."
            and word.text.isupper()
            and word.text[1].islower()
        )
        word.particle = fold_key(word.text) in particles and i + 1 < len(words) and not word.initial
    _particle_surnames(words, surname)
    groups: list[_Group] = []
    for i, word in enumerate(words):
        gap = text[words[i - 1].end : word.start] if i else None
        joined = gap is not None and ("-" in gap and " " not in gap.strip("-. ") and len(gap.strip(". ")) <= 1)
        if joined or (groups and groups[-1].words[-1].particle):
            groups[-1].words.append(word)
        else:
            groups.append(_Group([word]))
    return groups


def _particle_surnames(words: list[_Word], surname: str | None) -> None:
    """A surname made of particle words before a given name (``LE DU Yann``): its last word is the
    surname's core, not a particle of the given name. Known when the run is in capitals and the next
    word is not, or when the run is the patient's last name (``surname``)."""
    i = 0
    while i < len(words):
        j = i
        while j < len(words) and words[j].particle:
            j += 1
        run = words[i:j]
        if len(run) >= 2 and j < len(words):
            capitals = all(w.text.isupper() for w in run) and not words[j].text.isupper()
            if capitals or (surname and " ".join(fold_key(w.text) for w in run) == surname):
                run[-1].particle = False
        i = j + 1


def _surname_of(ctx: Context, label: str) -> str | None:
    lastname = ctx.patient.lastname if label == "PATIENT" else None
    return " ".join(re.split(r"[\s\-]+", fold_key(lastname))) if lastname else None


@lru_cache(maxsize=1 << 14)
def name_units(text: str) -> tuple[str, ...]:
    """The parts of a name span of more than one word, as written: a surname with its particles (``LE DU``
    of ``LE DU Yann``) and runs of particle words (``Le Du`` of ``Le Du Yann``, where
    nothing tells a surname made of particles from particles before a given name). A surrogate must not
    give one of them back whole, even one made of words too short to be compared one by one
    (:func:`deid_ds.deidentification.surrogates.guard`)."""
    text = unicodedata.normalize("NFC", text)
    groups = _groups(text)
    units = [text[u[0].start : u[-1].end] for g in groups for u in g.units() if len(u) > 1]
    for group in groups:
        run: list[_Word] = []
        for word in [*group.words, None]:
            if word is not None and word.particle:
                run.append(word)
                continue
            if len(run) > 1:
                units.append(text[run[0].start : run[-1].end])
            run = []
    return tuple(units)


def _initials_word(word: str) -> bool:
    """A word of dictation initials: at most three capitals (``YK``, ``CL``)."""
    return len(word) <= 3 and word.isupper()


def _is_dictation(text: str, groups: list[_Group]) -> bool:
    return "/" in text and all(_initials_word(w.text) for g in groups for w in g.words)


def is_dictation_side(word: str) -> bool:
    """Whether a name span standing next to a ``/`` is one side of dictation initials (``SL`` of ``SL/LL``)."""
    return len(word) >= 2 and _TOKEN.fullmatch(word) is not None and _initials_word(word)


def _assign_roles(
    groups: list[_Group], ctx: Context, label: str, forced: str | None, relative: Callable[[str], object] | None = None
) -> None:
    """Each group's role (module docstring); ``relative(key)``: whether the note writes the word alone as a relative's
    given name (by default what ``ctx.memory`` says: the only thing read of it)."""
    relative = ctx.memory.get if relative is None else relative
    pools = ctx.pools
    firsts = words_of(ctx.patient.firstname) if label == "PATIENT" else set()
    lasts = words_of(ctx.patient.lastname) if label == "PATIENT" else set()
    for group in groups:
        if all(w.initial for w in group.words):
            group.role = "initial"
        elif forced:
            group.role = forced
    undecided = [g for g in groups if not g.role]
    for group in undecided:
        keys = {fold_key(w.text) for w in group.words if not w.particle and not w.initial}
        if keys and keys <= lasts:
            group.role = "last"
        elif keys and keys <= firsts:
            group.role = "first"
    undecided = [g for g in undecided if not g.role]
    styles = {case_style("".join(w.text for w in g.words)) for g in groups if g.role != "initial"}
    if "upper" in styles and "title" in styles:
        for group in undecided:
            group.role = "last" if case_style("".join(w.text for w in group.words)) == "upper" else "first"
        return
    for group in undecided:
        keys = {fold_key(w.text) for w in group.words if not w.particle}
        roles = [name_role(key, pools) for key in keys]
        as_first, as_last = roles.count("first"), roles.count("last")
        if group.words[0].particle:
            group.role = "last"
        elif len(keys) > 1 and all(_given(key, pools) for key in keys):
            group.role = "first"  # "Jean-Michel", "Anne-Colette": a compound of given names is a given name
        elif as_last > as_first:
            group.role = "last"
        elif as_first > as_last:
            group.role = "first"
    named = [g for g in groups if g.role != "initial"]
    decided = {g.role for g in named if g.role}
    if len(decided) == 1 and len(named) == 2:  # the other group of a two-group name takes the other role
        other = "first" if decided == {"last"} else "last"
        for group in named:
            group.role = group.role or other
    if len(named) == 1 and not named[0].role:  # a relative called by their given name alone (relative_cue)
        key = fold_key("".join(w.text for w in named[0].words))
        if relative(RELATIVE_GIVEN.format(label=label, key=key)):
            named[0].role = "first"
    for position, group in enumerate(named):
        if not group.role:
            group.role = "last" if position == len(named) - 1 or len(named) == 1 else "first"


#: :func:`read_name`'s readings: (text, label, role forced, the patient's names) -> pools, groups, the memory key
#: read, the groups when that key is set. Bounded.
_READINGS: dict[tuple, tuple] = {}


def read_name(ctx: Context, text: str, label: str, forced: str | None = None) -> list[_Group]:
    """:func:`_groups` of a name span with their roles (:func:`_assign_roles`), worked out once per name, label and
    patient: a note reads each of its names twice (:func:`remember`, :func:`surrogate_name`), the patient's other
    notes and every patient's doctors read them again (0.90 -> 0.17 s for the name spans of 3,000 generated notes read
    twice: docs/benchmarks.md, *deidentify*). The roles depend on the note's memory through one key only (a
    relative's given name written alone): both readings are kept, and the memory picks one. The groups returned are
    shared: never changed."""
    patient = (ctx.patient.firstname, ctx.patient.lastname) if label == "PATIENT" else None
    key = (text, label, forced, patient)
    reading = _READINGS.get(key)
    if reading is None or reading[0] is not ctx.pools:
        asked: list[str] = []
        groups = _groups(text, _surname_of(ctx, label))
        _assign_roles(groups, ctx, label, forced, lambda name: asked.append(name))  # read as unset
        if asked:
            relatives = _groups(text, _surname_of(ctx, label))
            _assign_roles(relatives, ctx, label, forced, lambda name: True)
        if len(_READINGS) >= 1 << 14:
            _READINGS.clear()
        reading = _READINGS[key] = (ctx.pools, groups, asked[0] if asked else None, relatives if asked else None)
    _, groups, memory_key, relatives = reading
    return relatives if memory_key is not None and ctx.memory.get(memory_key) else groups


def name_role(key: str, pools) -> str | None:
    """What a folded name word is known as: ``first`` (a given name only), ``last`` (a surname only), from the
    shipped lists, else (known as both, or neither) from the knowledge base's names; None when nothing says."""
    first, last = key in pools.first_name_keys, key in pools.surname_keys
    if first != last:
        return "first" if first else "last"
    return pools.kb_name_roles.get(key)


def _given(key: str, pools) -> bool:
    return key in pools.first_name_keys or pools.kb_name_roles.get(key) == "first"


def _scope(ctx: Context, label: str) -> str:
    return DOCTOR_SCOPE if label == "DOCTOR" else ctx.scope


def first_name(ctx: Context, original: str, label: str = "PATIENT") -> str:
    """The surrogate of one given-name part, of the sex the note or the lists give, else epicene."""
    pools = ctx.pools
    key = fold_key(original)
    # a professional's given name depends on the name only, so that it is the same in every patient's notes
    cue = ctx.memory.get(f"sex:{label}:{key}") if label != "DOCTOR" else None
    sex = cue or pools.first_name_sex.get(key, "E")
    pool = pools.first_names[str(sex)]
    return apply_case(ctx.draw(pool, ("first", fold_key(original)), original, scope=_scope(ctx, label)), original)


def surname(ctx: Context, original: str, label: str = "PATIENT") -> str:
    """The surrogate of one surname unit (particles included: ``LE GALL`` is one unit)."""
    key = fold_key(original)
    return apply_case(ctx.draw(ctx.pools.surnames, ("last", key), original, scope=_scope(ctx, label)), original)


def initial(ctx: Context, letter: str, label: str, last_key: str | None, position: int = 0) -> str:
    """The initial of the surrogate of the given name the letter stands for, when that is known."""
    source = None
    if label == "PATIENT" and ctx.patient.firstname:
        parts = [p for p in re.split(r"[\s\-]+", ctx.patient.firstname) if p]
        if position < len(parts) and fold_key(parts[position][0]) == fold_key(letter):
            source = parts[position]
    if source is None and last_key is not None:
        for seen in ctx.memory.get(f"firsts:{label}:{last_key}", ()):  # type: ignore[union-attr]
            if position < len(seen) and fold_key(seen[position][0]) == fold_key(letter):
                source = seen[position]
                break
    if source is not None:
        drawn = first_name(ctx, source, label)[0]  # in the case the given name was written in, not the initial's
    else:
        drawn = ctx.draw(INITIALS, ("initial", fold_key(letter)), letter, scope=_scope(ctx, label))
    return drawn.upper() if letter.isupper() else drawn.lower()


def remember(ctx: Context, text: str, label: str, sex: str | None = None) -> None:
    """First pass over a document's name spans: which given names are written with which surname, the
    sex the note gives each given name (``sex``: :func:`sex_cue` around this span), and every name part
    (for e-mail addresses that glue them)."""
    text = unicodedata.normalize("NFC", text)
    groups = read_name(ctx, text, label)
    firsts = [w.text for g in groups if g.role == "first" for w in g.words if not w.particle]
    units = [text[u[0].start : u[-1].end] for g in groups if g.role == "last" for u in g.units()]
    lasts = [fold_key(unit) for unit in units]
    if firsts:
        for last in lasts:
            known: list[list[str]] = ctx.memory.setdefault(f"firsts:{label}:{last}", [])  # type: ignore[assignment]
            if firsts not in known:
                known.append(firsts)
    seen: dict[str, tuple[str, str, str]] = ctx.memory.setdefault(NAMES_SEEN, {})  # type: ignore[assignment]
    for first in firsts:
        if sex:
            ctx.memory.setdefault(f"sex:{label}:{fold_key(first)}", sex)
        if len(squash(first)) >= 2:
            seen.setdefault(squash(first), (label, "first", first))
    for unit in units:
        if len(squash(unit)) >= 2:
            seen.setdefault(squash(unit), (label, "last", unit))


#: What :func:`remember_names` wrote for a patient's names, kept for the patient's next notes (bounded).
_REMEMBERED: dict[tuple, dict[str, object]] = {}


def remember_names(ctx: Context, entities: tuple[tuple[str, str], ...]) -> None:
    """:func:`remember` for each PATIENT and DOCTOR name of ``entities`` (all of a patient's notes' spans,
    ``(label, text)``), into a document's fresh memory. Worked out once per patient and pools (a patient
    may have hundreds of notes, each given the same names), then copied into each note's memory."""
    names = tuple((label, text) for label, text in entities if label in ("PATIENT", "DOCTOR"))
    if not names:
        return
    key = (id(ctx.pools), ctx.patient, names)
    memory = _REMEMBERED.get(key)
    if memory is None:
        scratch = replace(ctx, memory={})
        for label, text in names:
            remember(scratch, text, label)
        memory = scratch.memory
        if len(_REMEMBERED) >= 256:
            _REMEMBERED.clear()
        _REMEMBERED[key] = memory
    for name, value in memory.items():  # copies: the note's own names are added to them
        if isinstance(value, dict):
            ctx.memory[name] = dict(value)
        elif isinstance(value, list):
            ctx.memory[name] = [list(v) for v in value]
        else:
            ctx.memory[name] = value


def surrogate_name(ctx: Context, text: str, label: str = "PATIENT", role: str | None = None) -> str:
    """The surrogate of a whole name span (separators and layout kept, each part mapped on its own).

    ``role`` forces every group to ``first`` or ``last`` (metadata columns), or reads the span as dictation
    initials (``initials``: ``SL`` of ``SL/LL``, each side its own span), mapped letter by letter.
    """
    # read with its roles (which the dictation initials do not use) once per name (:func:`read_name`)
    groups = _groups(text, _surname_of(ctx, label)) if role == "initials" else read_name(ctx, text, label, role)
    if not groups:
        return text
    if role == "initials" or _is_dictation(text, groups):
        return _replace(
            text,
            [(w.start, w.end, "".join(initial(ctx, c, label, None) for c in w.text)) for g in groups for w in g.words],
        )
    last_keys = [fold_key(text[u[0].start : u[-1].end]) for g in groups if g.role == "last" for u in g.units()]
    edits: list[tuple[int, int, str]] = []
    for group in groups:
        if group.role == "initial":
            for position, word in enumerate(group.words):
                edits.append(
                    (
                        word.start,
                        word.end,
                        initial(ctx, word.text[0], label, last_keys[0] if last_keys else None, position)
                        + word.text[1:],
                    )
                )
            continue
        for unit in group.units():
            original = text[unit[0].start : unit[-1].end]
            if all(w.initial for w in unit):
                edits.append(
                    (unit[0].start, unit[-1].end, initial(ctx, original[0], label, last_keys[0] if last_keys else None))
                )
            elif group.role == "first":
                for word in unit:
                    edits.append(
                        (word.start, word.end, word.text if word.particle else first_name(ctx, word.text, label))
                    )
            else:
                edits.append((unit[0].start, unit[-1].end, surname(ctx, original, label)))
    return _replace(text, edits)


def _replace(text: str, edits: list[tuple[int, int, str]]) -> str:
    out, cursor = [], 0
    for start, end, replacement in sorted(edits):
        out.append(text[cursor:start])
        out.append(replacement)
        cursor = end
    out.append(text[cursor:])
    return "".join(out)
