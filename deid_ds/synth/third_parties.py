"""People around the patient who are neither the patient nor staff: relatives, neighbours, friends, guardians.

Real notes name them in many ways (``sa fille Mme X``, ``personne de confiance : ...``, ``les X (voisins)``,
``d'après son épouse, « ... »``) and nothing but the context says they are people: no metadata holds them and
the Annuaire Santé lists professionals only. A passage about them is spliced into a finished note at a paragraph
boundary, in the note's own style (a ``<p>`` of prose, a lower-case dictation paragraph, capital lines of a
letter, a line of a fixed-width export, a positioned PDF line), so a tagger sees them in every layout.

Names come from ``resources/names_third_parties.tsv`` (many origins, mostly names no other pool holds, so that
neither the knowledge base nor the labeller's lists know them) and, for a share, from the generator's own pools.
Every name of a person of the patient's private life is ``PATIENT`` (guardians and curators included); the social
worker and the home help, paid to look after the patient, are ``DOCTOR`` (docs/guidelines.md).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache

from deid_ds.synth import pools
from deid_ds.synth.formats import NAME_STYLES, PHONE_STYLES, Ent, Fragment, Markup, format_name, format_phone
from deid_ds.synth.html_builder import GoldSpan, HtmlDoc
from deid_ds.synth.world import Patient

#: Share of the people of a passage whose names come from the generator's other pools (which the knowledge base
#: and the labeller's lists may hold); the others come from ``names_third_parties.tsv``.
POOL_SHARE = 0.25
#: Share of relatives by blood or marriage who carry the patient's surname.
SAME_SURNAME = 0.35


@dataclass(frozen=True, slots=True)
class Relation:
    """How a person stands to the patient: the word (``fille``), its sex, whether they may share the patient's
    surname, and their label (``DOCTOR`` only for the paid social and home-care workers)."""

    word: str
    sex: str
    kin: bool = False
    label: str = "PATIENT"

    @property
    def determiner(self) -> str:
        """``sa fille``, ``son fils``, ``son épouse``: French writes ``son`` before a vowel whatever the sex."""
        return "son" if self.sex == "M" or self.word[0] in "aeéiou" else "sa"


FAMILY = tuple(
    Relation(word, sex, True)
    for word, sex in (
        ("fille", "F"),
        ("fils", "M"),
        ("épouse", "F"),
        ("époux", "M"),
        ("sœur", "F"),
        ("frère", "M"),
        ("mère", "F"),
        ("père", "M"),
        ("petite-fille", "F"),
        ("petit-fils", "M"),
    )
)
CLOSE = tuple(
    Relation(word, sex)
    for word, sex in (
        ("compagne", "F"),
        ("compagnon", "M"),
        ("nièce", "F"),
        ("neveu", "M"),
        ("belle-fille", "F"),
        ("gendre", "M"),
        ("voisine", "F"),
        ("voisin", "M"),
        ("amie", "F"),
        ("ami", "M"),
        ("cousine", "F"),
        ("ex-mari", "M"),
    )
)
LEGAL = tuple(
    Relation(word, sex) for word, sex in (("tutrice", "F"), ("tuteur", "M"), ("curatrice", "F"), ("curateur", "M"))
)
#: Paid to look after the patient: DOCTOR, like every care professional (docs/guidelines.md).
SOCIAL = (
    Relation("assistante sociale", "F", label="DOCTOR"),
    Relation("assistant social", "M", label="DOCTOR"),
    Relation("auxiliaire de vie", "F", label="DOCTOR"),
)


@dataclass(frozen=True, slots=True)
class ThirdParty:
    first: str
    last: str
    relation: Relation
    phone: str

    @property
    def sex(self) -> str:
        return self.relation.sex

    @property
    def label(self) -> str:
        return self.relation.label


@lru_cache(maxsize=1)
def third_party_names() -> dict[str, dict[str, tuple[str, ...]]]:
    """origin -> kind (``F``, ``M``, ``L``) -> names, from ``resources/names_third_parties.tsv``."""
    out: dict[str, dict[str, tuple[str, ...]]] = {}
    for line in pools._lines("names_third_parties.tsv"):
        origin, kind, names = line.split("\t")
        out.setdefault(origin, {})[kind] = tuple(name.strip() for name in names.split(","))
    return out


def draw_name(rng: random.Random, sex: str) -> tuple[str, str]:
    """A given name and a surname of one origin; a share from the generator's other pools."""
    if rng.random() < POOL_SHARE:
        origin = pools.draw_origin(rng)
        if origin is not None:
            given = pools.origin_given_name(rng, origin, sex) or pools.given_name(rng, sex)
            return given, pools.origin_family_name(rng, origin)
        return pools.given_name(rng, sex), pools.family_name(rng)
    names = third_party_names()
    origin = rng.choice(sorted(names))
    last = rng.choice(names[origin]["L"])
    if rng.random() < 0.06:  # a double-barrelled surname across origins
        other = rng.choice(names[rng.choice(sorted(names))]["L"])
        if other != last and "-" not in last + other:
            last = f"{last}-{other}"
    return rng.choice(names[origin][sex]), last


def person(rng: random.Random, patient: Patient, relation: Relation) -> ThirdParty:
    """Someone who stands in ``relation`` to ``patient``, a name of their sex; kin share the patient's surname a
    third of the time."""
    first, last = draw_name(rng, relation.sex)
    if relation.kin and rng.random() < SAME_SURNAME:
        last = patient.usual_last
    phone = "0" + rng.choice("67") + "".join(str(rng.randrange(10)) for _ in range(8))
    return ThirdParty(first, last, relation, phone)


def _relation(word: str) -> Relation:
    return next(r for r in FAMILY + CLOSE + LEGAL + SOCIAL if r.word == word)


#: Whom a patient lives with, leaves with, or has as main carer.
HOUSEHOLD = tuple(_relation(w) for w in ("épouse", "époux", "compagne", "compagnon", "fille", "fils", "sœur", "frère"))
#: A legal protection and who exercises it.
MEASURES = {
    "tutelle": (_relation("tutrice"), _relation("tuteur")),
    "curatelle renforcée": (_relation("curatrice"), _relation("curateur")),
    "curatelle simple": (_relation("curatrice"), _relation("curateur")),
}


# -- one passage ---------------------------------------------------------------------------------------------
@dataclass(slots=True)
class Passage:
    """The sentences of one passage, as fragments; names and phones written through :meth:`name`/:meth:`phone`."""

    rng: random.Random
    patient: Patient
    used: set[str] = field(default_factory=set)  # relations already named in the passage

    def people(self, count: int = 1, pool: tuple[Relation, ...] | None = None) -> list[ThirdParty]:
        """``count`` people of distinct relations, not named before in the passage (a spouse of the other sex)."""
        pool = pool or FAMILY * 2 + CLOSE  # guardians and social workers have sentences of their own
        out: list[ThirdParty] = []
        for _ in range(50):
            relation = self.rng.choice(pool)
            spouse_of_same_sex = relation.word in ("épouse", "époux") and relation.sex == self.patient.sex
            if relation.word in self.used or spouse_of_same_sex:
                continue
            self.used.add(relation.word)
            out.append(person(self.rng, self.patient, relation))
            if len(out) == count:
                break
        return out or [person(self.rng, self.patient, _relation("amie"))]

    def one(self, pool: tuple[Relation, ...] | None = None) -> ThirdParty:
        return self.people(1, pool)[0]

    def civ(self, p: ThirdParty) -> str:
        long = self.rng.random() < 0.25
        return ("Madame" if long else "Mme") if p.sex == "F" else ("Monsieur" if long else "M.")

    def name(self, p: ThirdParty, form: str = "any") -> list[Fragment]:
        """``Mme [Fatou DIALLO]``, ``[Fatou]``, ``M. [NGUYEN]``, ``[Diallo Fatou]``: civility outside the span."""
        rng = self.rng
        if form == "any":
            form = rng.choices(("full", "first", "last", "bare"), (5, 2, 2, 1))[0]
        if form == "first":
            return [Ent(p.label, p.first)]
        if form == "last":
            return [self.civ(p) + " ", Ent(p.label, rng.choice((p.last, p.last.upper())))]
        value = format_name(p.first, p.last, rng.choice(NAME_STYLES[:7]))
        return [Ent(p.label, value)] if form == "bare" else [self.civ(p) + " ", Ent(p.label, value)]

    def phone(self, p: ThirdParty) -> list[Fragment]:
        return [Ent("PHONE", format_phone(p.phone, self.rng.choice(PHONE_STYLES)))]

    @property
    def e(self) -> str:
        return "e" if self.patient.sex == "F" else ""

    @property
    def of_patient(self) -> str:
        return "de la patiente" if self.patient.sex == "F" else "du patient"


def _rel(p: ThirdParty) -> str:
    return f"{p.relation.determiner} {p.relation.word}"


def _accompanied(s: Passage) -> list[Fragment]:
    p, e = s.one(), s.e
    head = s.rng.choice((f"Venu{e} accompagné{e} de ", f"Arrivé{e} aux urgences avec ", f"Accompagné{e} par "))
    return [head, _rel(p), ", ", *s.name(p), "."]


def _trust(s: Passage) -> list[Fragment]:
    p = s.one()
    out = [s.rng.choice(("Personne de confiance : ", "Personne de confiance désignée : ", "PERSONNE À PRÉVENIR : "))]
    out += [*s.name(p, s.rng.choice(("full", "bare"))), f" ({p.relation.word})"]
    if s.rng.random() < 0.7:
        out += [s.rng.choice((", tél. ", " - ", ", joignable au ")), *s.phone(p)]
    return out + ["."]


def _legal(s: Passage) -> list[Fragment]:
    rng = s.rng
    measure = rng.choice(sorted(MEASURES))
    p = s.one(MEASURES[measure])
    if rng.random() < 0.5:
        return [f"Mesure de protection : {measure}. {p.relation.word.capitalize()} : ", *s.name(p, "full"), "."]
    return [f"Sous {measure} ({p.relation.word} : ", *s.name(p, rng.choice(("full", "last"))), ")."]


def _neighbour(s: Passage) -> list[Fragment]:
    p = s.one((_relation("voisine"), _relation("voisin")))
    if s.rng.random() < 0.5:
        return [f"{_rel(p).capitalize()}, ", *s.name(p, "last"), ", passe tous les jours."]
    article = "la" if p.sex == "F" else "le"
    return [f"C'est {article} {p.relation.word}, ", *s.name(p), ", qui a donné l'alerte."]


def _contact(s: Passage) -> list[Fragment]:
    p = s.one()
    head = s.rng.choice(("Contacter ", "En cas de besoin, joindre ", "Prévenir "))
    return [head, _rel(p), " ", *s.name(p, s.rng.choice(("first", "full"))), " au ", *s.phone(p), "."]


def _lives_with(s: Passage) -> list[Fragment]:
    p = s.one(HOUSEHOLD)
    if s.rng.random() < 0.5:
        return [f"Vit avec {_rel(p)}, ", *s.name(p, s.rng.choice(("first", "bare", "full"))), ", à domicile."]
    return [f"Vit seul{s.e} depuis le départ de {_rel(p)} ", *s.name(p, "first"), "."]


def _carer(s: Passage) -> list[Fragment]:
    p = s.one(HOUSEHOLD)
    word = "Aidante principale" if p.sex == "F" else "Aidant principal"
    return [f"{word} : {_rel(p)} (", *s.name(p, s.rng.choice(("full", "bare", "first"))), ")."]


def _reported(s: Passage) -> list[Fragment]:
    rng, p = s.rng, s.one()
    il = "elle" if s.patient.sex == "F" else "il"
    quote = rng.choice((f"{il} ne mange plus depuis une semaine", f"{il} tombe souvent la nuit", f"{il} perd la tête"))
    if rng.random() < 0.5:
        return [f"D'après {_rel(p)} ", *s.name(p, "first"), f", « {quote} »."]
    return [*s.name(p, "full"), f", {p.relation.word}, rapporte des chutes répétées à domicile."]


def _apposition(s: Passage) -> list[Fragment]:
    p = s.one()
    came = "venue" if p.sex == "F" else "venu"
    return [*s.name(p, s.rng.choice(("full", "bare"))), f", {p.relation.word} {s.of_patient}, est {came} ce jour."]


def _listing(s: Passage) -> list[Fragment]:
    rng = s.rng
    out: list[Fragment] = [rng.choice(("Entourage : ", "Famille : ", "Contacts : "))]
    for k, p in enumerate(s.people(rng.choice((1, 2, 3)))):
        if k:
            out.append(rng.choice((", ", " ; ")))
        if rng.random() < 0.5:
            out += [f"{p.relation.word} (", *s.name(p, rng.choice(("first", "bare"))), ")"]
        else:
            out += [*s.name(p, rng.choice(("full", "first"))), f" ({p.relation.word})"]
    return out + ["."]


def _first_alone(s: Passage) -> list[Fragment]:
    p = s.one()
    him = "la" if s.patient.sex == "F" else "le"
    tail = s.rng.choice((" a appelé ce jour pour avoir des nouvelles.", f" viendra {him} chercher à la sortie."))
    return [_rel(p).capitalize(), " ", Ent(p.label, p.first), tail]


def _surname_alone(s: Passage) -> list[Fragment]:
    p = s.one((_relation("voisine"), _relation("voisin")))
    return ["Les ", Ent(p.label, s.rng.choice((p.last, p.last.upper()))), " (voisins) passent matin et soir."]


def _call(s: Passage) -> list[Fragment]:
    p = s.one()
    told = "informée" if p.sex == "F" else "informé"
    return ["Appel de ", *s.name(p, "full"), f", {p.relation.word} {s.of_patient}, {told}."]


def _social(s: Passage) -> list[Fragment]:
    p = s.one(SOCIAL)
    if p.relation.word == "auxiliaire de vie":
        return ["Passage d'une auxiliaire de vie (", *s.name(p, "full"), ") deux fois par jour."]
    return [f"Vu{s.e} par l'{p.relation.word} (", *s.name(p, "full"), ") : dossier d'APA en cours."]


def _parents(s: Passage) -> list[Fragment]:
    mother, father = s.one((_relation("mère"),)), s.one((_relation("père"),))
    return ["Autorisation d'opérer signée par les parents, ", *s.name(mother), " et ", *s.name(father), "."]


def _children(s: Passage) -> list[Fragment]:
    daughter, son = s.one((_relation("fille"),)), s.one((_relation("fils"),))
    return ["Ses enfants, ", Ent("PATIENT", daughter.first), " et ", Ent("PATIENT", son.first), ", sont informés."]


def _not_to_inform(s: Passage) -> list[Fragment]:
    p = s.one((_relation("ex-mari"),))
    return ["Ne pas donner d'informations à ", *s.name(p, s.rng.choice(("full", "last"))), " (ex-mari)."]


SENTENCES: tuple[Callable[[Passage], list[Fragment]], ...] = (
    _accompanied,
    _trust,
    _legal,
    _neighbour,
    _contact,
    _lives_with,
    _carer,
    _reported,
    _apposition,
    _listing,
    _first_alone,
    _surname_alone,
    _call,
    _social,
    _children,
    _not_to_inform,
)


def passage(rng: random.Random, patient: Patient, age: int) -> list[list[Fragment]]:
    """One to three sentences about the people around ``patient`` (the parents sign for a child)."""
    s = Passage(rng, patient)
    chosen = rng.sample(SENTENCES, rng.choice((1, 1, 2, 3)))
    if age < 18 and rng.random() < 0.7:
        chosen[0] = _parents
    return [sentence(s) for sentence in chosen]


# -- writing it into a note ----------------------------------------------------------------------------------
def _case(fragments: list[Fragment], case: str) -> list[Fragment]:
    change = str.upper if case == "upper" else str.lower if case == "lower" else None
    if change is None:
        return fragments
    out: list[Fragment] = []
    for frag in fragments:
        if isinstance(frag, Ent):
            out.append(Ent(frag.label, change(frag.value), nbsp=frag.nbsp))
        elif isinstance(frag, Markup):
            out.append(frag)
        else:
            out.append(change(frag))
    return out


_BLOCKS = ("</p>\n", "</table>\n")
#: export style -> (case, what opens and closes each sentence, the line ends a passage may follow)
LAYOUTS: dict[str, tuple[str, str, str, tuple[str, ...]]] = {
    "prose": ("", "<p>", "</p>\n", _BLOCKS),
    "cda": ("", "<p>", "</p>\n", _BLOCKS),
    "lab_report": ("", "<p>", "</p>\n", _BLOCKS),
    "transmissions": ("", "<p>", "</p>\n", _BLOCKS),
    "dictation": ("lower", "<p>", "</p>\n", _BLOCKS),
    "caps_letter": ("upper", "", "<br>\n", ("<br>\n",)),
    "fixed_width": ("upper", "", "\n", ("\n",)),
    "pdf": ("", '<div class="t m0 x9" style="position:absolute;left:72px">', "</div>\n", ("</div>\n",)),
}


def _boundaries(doc: HtmlDoc, style: str, after: tuple[str, ...]) -> list[int]:
    """Indexes of ``doc.parts`` before which a block may go: after a line end of the style, in the body, outside a
    table and a tag, inside the ``<pre>`` for a fixed-width export and outside it otherwise."""
    full = "".join(doc.parts)
    out, position = [], 0
    # a letter's passage goes after its salutation (``OBJET : ...``, ``CHER CONFRÈRE,``), not into an address block
    subject = max(full.find("OBJET"), full.find("CONCERNE"))
    letter_body = full.find(",<br>\n", subject) + 1 if subject >= 0 else len(full)
    for index, part in enumerate(doc.parts[:-1], start=1):
        position += len(part)
        if not any(full.endswith(end, 0, position) for end in after) or not 0.2 <= position / len(full) <= 0.92:
            continue
        if full.rfind("<body", 0, position) < 0 or full.rfind("<", 0, position) > full.rfind(">", 0, position):
            continue
        if full.rfind("<table", 0, position) > full.rfind("</table>", 0, position):
            continue
        in_pre = full.rfind("<pre", 0, position) > full.rfind("</pre>", 0, position)
        if in_pre != (style == "fixed_width"):
            continue
        if style == "pdf" and not full[full.rfind("\n", 0, position - 1) + 1 : position].startswith('<div class="t'):
            continue
        if style == "fixed_width" and not _before_a_section(full[position : full.find("\n", position)]):
            continue
        if style == "caps_letter" and position < letter_body:
            continue
        out.append(index)
    return out


def _before_a_section(line: str) -> bool:
    """A fixed-width export's line that opens a section: a ruler or a heading in capitals (``PRESCRIPTION``); a
    passage goes before it, not between the lines of an identity block or a table of staff."""
    return line.startswith("-----") or (
        0 < len(line) <= 30 and line == line.upper() and ":" not in line and line[0] != " "
    )


def write_passage(rng: random.Random, doc: HtmlDoc, patient: Patient, age: int, style: str) -> list[GoldSpan]:
    """Splice a passage about the people around ``patient`` into ``doc`` (a finished note written in ``style``)
    at a line boundary of its body; its gold spans are returned (none when the note has no place for it)."""
    case, before, end, after = LAYOUTS.get(style, LAYOUTS["prose"])
    places = _boundaries(doc, style, after)
    if not places:
        return []
    where = rng.choice(places)
    block = HtmlDoc(rng, doc.encoding, 0.0 if style == "fixed_width" else doc.noise)  # a <pre> keeps line breaks
    for sentence in passage(rng, patient, age):
        block.markup(before)
        for frag in _case(sentence, case):
            if isinstance(frag, Ent):
                block.entity(frag.label, frag.value, nbsp=frag.nbsp)
            elif isinstance(frag, Markup):
                block.markup(frag.html)
            elif frag:
                block.text(frag)
        block.markup(end)
    return doc.splice(where, block)
