"""Export style ``dictation``: reports dictated by the physician and transcribed by speech recognition.

What a recogniser leaves in a warehouse: lower case almost everywhere, little punctuation, spoken
punctuation transcribed as words (``virgule``, ``point à la ligne``), spoken corrections (``le 12 non
pardon le 13 mars``), names in lower case after the word that says who they are (``vu par le docteur
marc lefevre``, ``la patiente madame jeanne le gall``), dates in words (``douze mars deux mille vingt``,
``le premier juin``) and phone numbers dictated in words or in digit groups. The guidelines annotate all
of them as written: a lower-case name is a name, a date in words is a ``DATE``, each end of a corrected
date is its own ``DATE``; ages, times and durations spoken in words stay unannotated.

Variant 0 (family 3) and variant 1 (family 4) are two dictation systems: other page layouts, other spoken
cue words, other correction phrases.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields

from deid_ds.synth import clinical
from deid_ds.synth.exports.context import ExportContext, style
from deid_ds.synth.exports.words import date_words, number_words, phone_words, year_words
from deid_ds.synth.formats import MONTHS, Ent, Fragment, Markup, city_form, dictation_initials, format_phone, upper
from deid_ds.synth.world import Professional

_CORRECTIONS = (("non pardon", "pardon", "non non", "plutôt"), ("euh non", "je corrige", "enfin", "je reprends"))
_COMMAS = ((" virgule ", " ", ", ", " "), (" virgule ", " ", " ", ", "))
_STOPS = ((" point", " point à la ligne", "", ".", ""), (" point", " à la ligne", " nouveau paragraphe", "", ""))
_CIVILITY = {"F": ("madame", "mme", "la patiente madame"), "M": ("monsieur", "m", "le patient monsieur")}
_CIVILITY1 = {"F": ("madame", "madame"), "M": ("monsieur", "monsieur")}


def _lower_name(rng, first: str, last: str, *, alone: bool = False) -> str:
    """A name as the recogniser writes it: in lower case, now and then with the capitals it knows."""
    form = rng.choice(("first last", "first last", "last")) if not alone else "last"
    value = f"{first} {last}" if form == "first last" else last
    return value if rng.random() < 0.15 else value.lower()


@dataclass(slots=True)
class DictationContext(ExportContext):
    """The slots of a transcribed dictation: lower-case names, dates and numbers in words."""

    def _slot_pat(self, arg: str | None) -> list[Fragment]:
        p, rng = self.patient, self.rng
        if arg == "first":
            return [Ent("PATIENT", p.usual_first.lower())]
        name = _lower_name(rng, p.usual_first, p.usual_last, alone=arg == "last")
        if arg in ("bare", "last"):
            return [Ent("PATIENT", name)]
        civility = rng.choice((_CIVILITY, _CIVILITY1)[self.variant][p.sex])
        out: list[Fragment] = [civility + " ", Ent("PATIENT", name)]
        if p.married_name and rng.random() < 0.4:
            out += [rng.choice((" née ", " nom de jeune fille ")), Ent("PATIENT", p.birth_name.lower())]
        return out

    def _slot_rel(self, arg: str | None) -> list[Fragment]:
        r, rng = self.relative(), self.rng
        determiner = "son " if r.relation in ("époux", "fils", "frère") else "sa "
        if rng.random() < 0.5:
            return [f"{determiner}{r.relation} ", Ent("PATIENT", r.first.lower())]
        civility = "madame " if r.sex == "F" else "monsieur "
        return [f"{determiner}{r.relation} {civility}", Ent("PATIENT", _lower_name(rng, r.first, r.last))]

    def pro_name(self, pro: Professional, *, title: bool = True, style: str | None = None) -> list[Fragment]:
        """``le docteur marc lefevre``, ``professeur le bihan``, ``l'infirmière karine``."""
        rng = self.rng
        if pro.role in ("IDE", "secrétaire", "cadre de santé", "kinésithérapeute") and rng.random() < 0.5:
            word = {"IDE": "l'infirmière " if pro.sex == "F" else "l'infirmier ", "secrétaire": "la secrétaire "}
            return [word.get(pro.role, ""), Ent("DOCTOR", pro.first.lower())]
        name = Ent("DOCTOR", _lower_name(rng, pro.first, pro.last))
        if not title:
            return [name]
        if pro.title:
            words = {"Dr": ("le docteur ", "le docteur ", "docteur "), "Pr": ("le professeur ", "professeur ")}
            return [rng.choice(words[pro.title]), name]
        if pro.role == "interne":
            return ["l'interne ", name]
        return [rng.choice(("madame " if pro.sex == "F" else "monsieur ", "")), name]

    def _spoken_date(self, key: str, *, year: bool = True) -> Ent:
        rng, d = self.rng, self.date_of(key)
        style_ = rng.choice(("words", "words", "words_spoken", "digits", "weekday") if year else ("words", "digits"))
        if style_ == "digits":  # the recogniser writes some numbers as digits
            value = f"{d.day} {MONTHS[d.month - 1]}" + (f" {d.year}" if year else "")
        else:
            value = date_words(d, year=year, weekday=style_ == "weekday", spoken=style_ == "words_spoken")
        return Ent("DATE", value)

    def _slot_date(self, arg: str | None) -> list[Fragment]:
        return [self._spoken_date(arg or "visit")]

    def _slot_dm(self, arg: str | None) -> list[Fragment]:
        return [self._spoken_date(arg or "visit", year=False)]

    def _slot_my(self, arg: str | None) -> list[Fragment]:
        d = self.date_of(arg or "visit")
        return [Ent("DATE", f"{MONTHS[d.month - 1]} {year_words(d.year)}")]

    def _slot_year(self, arg: str | None) -> list[Fragment]:
        d = self.date_of(arg or "prev")
        return [Ent("DATE", year_words(d.year) if self.rng.random() < 0.7 else str(d.year))]

    def _slot_corr(self, arg: str | None) -> list[Fragment]:
        """A date corrected aloud: ``le 12 non pardon le 13 mars``: the wrong day and the right date, two DATEs."""
        rng, d = self.rng, self.date_of(arg or "visit")
        wrong = d.day + 1 if d.day < 28 else d.day - 1
        said = str(wrong) if rng.random() < 0.5 else number_words(wrong)
        right = self._spoken_date(arg or "visit", year=rng.random() < 0.5)
        return ["le ", Ent("DATE", said), f" {rng.choice(_CORRECTIONS[self.variant])} le ", right]

    def _slot_tel(self, arg: str | None) -> list[Fragment]:
        digits = {"patient": self.patient.phone, "mobile": self.patient.mobile, "service": self.department.phone}[
            arg or "patient"
        ]
        rng = self.rng
        form = rng.choice(("pairs", "pairs", "digits", "groups", "mixed"))
        if form == "groups":
            value = format_phone(digits, "spaced")
        elif form == "mixed":  # "zéro six 12 34 56 78"
            value = phone_words(digits[:2]) + " " + " ".join(digits[i : i + 2] for i in range(2, 10, 2))
        else:
            value = phone_words(digits, by_digit=form == "digits")
        return [Ent("PHONE", value)]

    def _slot_city(self, arg: str | None) -> list[Fragment]:
        rng = self.rng
        if arg == "birth":
            name = city_form(self.patient.birthplace, rng, caps=False)
        elif arg == "hosp":
            name = city_form(self.hospital.address, rng, caps=False)
        else:
            name = city_form(self.address, rng, caps=False)
        return [Ent("VILLE", name if rng.random() < 0.5 else name.lower())]

    def _slot_addr(self, arg: str | None) -> list[Fragment]:
        """``12 rue des lilas 35000 rennes``: the address as the recogniser writes it, in lower case."""
        address = self.patient.gp.practice if arg == "gp" and self.patient.gp.practice else self.address
        return [
            Ent(f.label, f.value.lower(), f.nbsp) if isinstance(f, Ent) else f if isinstance(f, Markup) else f.lower()
            for f in self.address_fragments(address, inline=True, caps=False)
        ]

    def _slot_v(self, arg: str | None) -> list[Fragment]:
        return [self.rng.choice(_COMMAS[self.variant])]

    def _slot_pt(self, arg: str | None) -> list[Fragment]:
        return [self.rng.choice(_STOPS[self.variant])]


def _spoken(ctx: DictationContext, sentence: str) -> str:
    """A clinical sentence as transcribed: lower case, commas and stops spoken or dropped."""
    text = sentence.lower().rstrip(".")
    text = re.sub(r", ", lambda _m: "{v}", text)
    text = re.sub(r"\. ", lambda _m: "{pt} ", text)
    text = text.replace(" : ", " deux points " if ctx.rng.random() < 0.3 else " ")
    return text + "{pt}"


def _clin(ctx: DictationContext, bank: tuple[str, ...], k: int = 1) -> list[str]:
    female = ctx.patient.sex == "F"
    return [
        _spoken(ctx, clinical.fill_numbers(ctx.rng, s, age=str(ctx.age), e="e" if female else ""))
        for s in ctx.rng.sample(bank, min(k, len(bank)))
    ]


def _motif(ctx: DictationContext) -> str:
    kind = ctx.department.kind if ctx.department.kind in clinical.MOTIFS else "medical"
    return ctx.rng.choice(clinical.MOTIFS[kind]).lower()


# -- the page -----------------------------------------------------------------------------------------------

_HEADERS = (
    ("Transcription automatique", "Compte rendu dicté - reconnaissance vocale", "Dictée numérique transcrite"),
    ("Document issu de la dictée vocale", "Texte reconnu (non relu)", "STT - transcription brute"),
)


def _open(ctx: DictationContext, title: str) -> None:
    doc, rng = ctx.doc, ctx.rng
    number = rng.randrange(100000, 999999)
    minutes, seconds = rng.randrange(1, 9), rng.randrange(60)
    if ctx.variant == 0:
        doc.markup('<html><body>\n<div class="transcription">\n<p class="entete"><b>')
        doc.text(rng.choice(_HEADERS[0]) + " - " + title)
        doc.markup("</b><br>\n")
        ctx.emit(
            [
                f"Dictée n° {number} - durée {minutes:02d}:{seconds:02d} - dictée par ",
                *ExportContext.pro_name(ctx, ctx.author),
                " le ",
                Ent("DATE", f"{ctx.when.day:02d}/{ctx.when.month:02d}/{ctx.when.year}"),
            ]
        )
        doc.markup("</p>\n")
    else:
        doc.markup('<div class="dictee" data-engine="stt">\n<div class="meta">')
        doc.text(f"{rng.choice(_HEADERS[1])} | {title.lower()} | réf. {number} | {minutes} min {seconds} s")
        doc.markup('</div>\n<div class="meta">')
        ctx.emit(
            [
                "Auteur : ",
                *ExportContext.pro_name(ctx, ctx.author, style="LAST First"),
                " | Dicté le ",
                Ent("DATE", ctx.when.isoformat()),
            ]
        )
        doc.markup("</div>\n")


def _para(ctx: DictationContext, *parts: str) -> None:
    """One dictated paragraph: the sentences run on, as the recogniser heard them."""
    doc = ctx.doc
    doc.markup("<p>" if ctx.variant == 0 else '<div class="seg">')
    for index, part in enumerate(parts):
        if index:
            doc.text(" ")
        ctx.say(part)
    doc.markup("</p>\n" if ctx.variant == 0 else "</div>\n")


def _close(ctx: DictationContext) -> None:
    doc, rng, a = ctx.doc, ctx.rng, ctx.author
    secretary = next(iter(ctx.department.of_role("secrétaire")), None)
    if ctx.variant == 0:
        doc.markup('<p class="pied">')
        if secretary is not None and rng.random() < 0.7:
            ctx.emit(
                [
                    Ent("DOCTOR", dictation_initials(a.first, a.last)),
                    "/",
                    Ent("DOCTOR", dictation_initials(secretary.first, secretary.last)),
                ]
            )
        else:
            doc.text("Document non relu par l'auteur.")
        doc.markup("</p>\n</div>\n</body></html>\n")
    else:
        doc.markup('<div class="meta">')
        ctx.emit(
            [
                rng.choice(("Validé électroniquement par ", "Relu et validé par ")),
                *ExportContext.pro_name(ctx, a, style=rng.choice(("F. LAST", "First LAST"))),
            ]
        )
        if secretary is not None and rng.random() < 0.5:
            ctx.emit([" - saisie : ", Ent("DOCTOR", upper(dictation_initials(secretary.first, secretary.last)))])
        doc.markup("</div>\n</div>\n")


# -- what each document says ----------------------------------------------------------------------------------


def _hospitalisation(ctx: DictationContext) -> None:
    _para(
        ctx,
        ctx.pick(
            (
                "compte rendu d'hospitalisation de {pat}{v}hospitalisé{e} dans le service du {date:admission} au "
                "{date:discharge}{pt}",
                "il s'agit de {pat} âgé{e} de " + number_words(ctx.age) + " ans entré{e} le {dm:admission}{pt}",
            ),
            (
                "courrier de sortie concernant {pat} qui a séjourné chez nous"
                " du {dm:admission} au {date:discharge}{pt}",
                "hospitalisation de {pat} né{e} le {date:birth} pour " + _motif(ctx) + "{pt}",
            ),
        ),
        ctx.pick(
            ("motif d'hospitalisation deux points " + _motif(ctx) + "{pt}",),
            ("le motif d'entrée est " + _motif(ctx) + "{pt}",),
        ),
    )
    _para(
        ctx,
        "antécédents " + "{v}".join(a.lower() for a in ctx.rng.sample(clinical.ANTECEDENTS, 3)) + "{pt}",
        ctx.rng.choice(clinical.SURGERIES).lower() + " en {year:surgery}{pt}",
        ctx.pick(
            ("vit à {city} avec {rel}{pt}", "adresse {addr}{pt}"),
            ("domicilié{e} {addr}{pt}", "vit avec {rel} à {city}{pt}"),
        ),
    )
    _para(ctx, *_clin(ctx, clinical.EXAM, 2), *_clin(ctx, clinical.TIME_SENTENCES), *_clin(ctx, clinical.NEGATIONS))
    _para(
        ctx,
        ctx.pick(
            ("{doc:colleague} a donné son avis {corr:exam}{pt}", "revu{e} par {doc:intern} le {dm:exam}{pt}"),
            ("{doc:colleague} est passé {corr:exam}{pt}", "vu{e} avec {doc:intern} le {dm:exam}{pt}"),
        ),
        ctx.pick(("{rel} a été informé{e}{pt}",), ("appel de {rel} ce jour{pt}",)),
        *_clin(ctx, clinical.CONCLUSIONS),
    )
    _para(
        ctx,
        ctx.pick(
            ("rendez-vous de contrôle le {date:next} à " + number_words(ctx.rng.randrange(8, 18)) + " heures{pt}",),
            ("à revoir par le médecin traitant {doc:gp}{pt}", "contrôle prévu en {my:next}{pt}"),
        ),
        ctx.pick(("la famille peut joindre le service au {tel:service}{pt}",), ("numéro du patient {tel:mobile}{pt}",)),
    )


def _operative(ctx: DictationContext) -> None:
    rng = ctx.rng
    _para(
        ctx,
        ctx.pick(
            ("compte rendu opératoire de {pat} opéré{e} {corr:visit}{pt}",),
            ("intervention chez {pat} le {date:visit}{pt}",),
        ),
        ctx.pick(("opérateur {doc}{v}aide {doc:intern}{pt}",), ("chirurgien {doc} aide opératoire {doc:intern}{pt}",)),
        ctx.pick(("anesthésie {doc:colleague}{pt}",), ("anesthésiste {doc:colleague}{pt}",)),
    )
    _para(
        ctx,
        "indication " + _motif(ctx) + "{pt}",
        "geste " + rng.choice(clinical.SURGERIES).lower() + "{pt}",
        ctx.pick(
            ("installation en décubitus dorsal{v}champage stérile{pt}",),
            ("patient{e} installé{e} sur le dos{v}badigeon et champs{pt}",),
        ),
        *_clin(ctx, clinical.NEGATIONS),
        "fermeture plan par plan{pt}",
    )
    _para(
        ctx,
        ctx.pick(
            ("ablation des fils à j " + number_words(rng.randrange(8, 15)) + "{pt}",),
            ("revoir en consultation le {dm:next}{pt}",),
        ),
        ctx.pick(("consultation de contrôle le {date:next}{pt}",), ("secrétariat joignable au {tel:service}{pt}",)),
    )


def _consultation(ctx: DictationContext) -> None:
    _para(
        ctx,
        ctx.pick(("cher confrère{v}",), ("chère consœur cher confrère",)),
        ctx.pick(
            ("j'ai vu en consultation ce jour {pat} que vous m'adressiez pour " + _motif(ctx) + "{pt}",),
            ("je revois ce jour {pat} âgé{e} de " + number_words(ctx.age) + " ans{pt}",),
        ),
        ctx.pick(("vu{e} par {doc:gp} {corr:prev}{pt}",), ("adressé{e} par {doc:gp}{pt}",)),
    )
    _para(
        ctx,
        *_clin(ctx, clinical.TIME_SENTENCES),
        *_clin(ctx, clinical.EXAM, 2),
        *_clin(ctx, clinical.HOMONYM_SENTENCES),
    )
    _para(
        ctx,
        *_clin(ctx, clinical.CONCLUSIONS),
        ctx.pick(("je reverrai {pat:last} le {dm:next}{pt}",), ("prochain rendez-vous le {date:next}{pt}",)),
        ctx.pick(("on peut {le} joindre au {tel:mobile}{pt}",), ("téléphone {tel:patient}{pt}",))
        if ctx.rng.random() < 0.5
        else "bien confraternellement{pt}",
    )


_EXAMS = (
    "scanner thoraco-abdomino-pelvien",
    "irm encéphalique",
    "échographie abdominale",
    "radiographie du thorax",
    "écho-doppler des membres inférieurs",
)
_FINDINGS = (
    "pas d'épanchement pleural",
    "micronodule pulmonaire de quatre millimètres à contrôler",
    "leucopathie vasculaire fazekas un",
    "pas de dilatation des cavités pyélocalicielles",
    "pas de thrombose veineuse profonde",
    "coxarthrose bilatérale",
)


def _imaging(ctx: DictationContext) -> None:
    rng = ctx.rng
    _para(
        ctx,
        rng.choice(_EXAMS) + ctx.pick((" réalisé {corr:visit}{pt}",), (" du {date:visit}{pt}",)),
        ctx.pick(("patient{e} {pat}{v}né{e} le {date:birth}{pt}",), ("concernant {pat} né{e} le {date:birth}{pt}",)),
        ctx.pick(("demandeur {doc:gp}{pt}",), ("examen demandé par {doc:colleague}{pt}",)),
        "indication " + _motif(ctx) + "{pt}",
    )
    _para(
        ctx,
        "résultats deux points" if ctx.variant == 0 else "on retrouve",
        "{v}".join(rng.sample(_FINDINGS, 3)) + "{pt}",
        ctx.pick(("comparatif avec l'examen du {date:prev}{pt}",), ("pas d'examen antérieur disponible{pt}",)),
    )
    _para(ctx, "conclusion " + rng.choice(_FINDINGS) + "{pt}")


_WRITERS = {
    "hospitalisation_report": (_hospitalisation, "Compte rendu d'hospitalisation"),
    "operative_report": (_operative, "Compte rendu opératoire"),
    "consultation": (_consultation, "Consultation"),
    "imaging": (_imaging, "Compte rendu d'imagerie"),
}


@style("dictation")
def write(ctx: ExportContext) -> None:
    """A dictated report of ``ctx.doc_type``; document types without their own dictation read as a consultation."""
    dictated = DictationContext(**{f.name: getattr(ctx, f.name) for f in fields(ctx)})
    writer, title = _WRITERS.get(ctx.doc_type, _WRITERS["consultation"])
    _open(dictated, title)
    writer(dictated)
    _close(dictated)
