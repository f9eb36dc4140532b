"""Export style ``transmissions``: the nurses' transmissions of a stay (targeted notes, DAR: data, action, result).

Short timed lines written between two rounds: ``14h30 IDE Karine : patiente algique, EVA 6/10``; staff
named by first name only or ``Prénom N.`` (``transmis à Mélanie``, ``AS Julie B.``), abbreviations
(``pdt``, ``RAS``, ``TA``, ``SaO2``, ``EVA 3/10``), relatives calling (``sa fille Sophie a appelé``),
physicians paged on their extension (``bip 5318``, ``poste 4567``, ``DECT 2345``). The guidelines make
each of them an entity with its cue word outside: ``IDE [Karine]``, ``transmis à [Mélanie]``,
``[Julie B.]``, ``poste [4567]`` (the digits only); a timestamp's time stays outside its ``DATE``, a
night ``du [12] au [13/03]`` gives one ``DATE`` per end; ``EVA 3/10`` and ``TA 13/8`` are not dates.

Variant 0 (family 3) is a care-record table with its columns; variant 1 (family 4) is another software's
flat list of entries, with other cue words and abbreviations.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import date, timedelta

from deid_ds.synth import clinical
from deid_ds.synth.exports.context import ExportContext, style
from deid_ds.synth.formats import MONTHS_ABBR, Ent, Fragment, Markup, initials
from deid_ds.synth.world import Professional

_TARGETS = (
    ("Douleur", "Chute", "Alimentation", "Élimination", "Sommeil", "Anxiété", "Pansement", "Comportement"),
    ("DOULEUR", "RISQUE DE CHUTE", "NUTRITION", "ÉLIMINATION", "REPOS", "ANXIÉTÉ", "SOINS CUTANÉS", "AGITATION"),
)
_DATA = (
    (
        "pt algique, EVA {eva}/10",
        "TA {ta}, FC {fc}, SaO2 {spo2}% AA",
        "T° {temp}, pas de frissons",
        "a mangé 1/2 plateau",
        "pas de selles depuis {n} j",
        "nuit agitée, se relève pdt la nuit",
        "pansement propre et sec",
        "anxiété avant l'examen",
    ),
    (
        "douleur côtée à {eva}/10 à l'EVA",
        "constantes : PA {ta}, pouls {fc}, sat {spo2} %",
        "hyperthermie à {temp}",
        "repas pris en totalité",
        "diurèse ok, pas de globe",
        "réveillé{e} à plusieurs reprises",
        "réfection du pansement, cicatrice calme",
        "inquiétude, pleure par moments",
    ),
)
_ACTIONS = (
    (
        "paracétamol 1 g IV fait",
        "mise au fauteuil avec aide",
        "surveillance /2h",
        "hydratation encouragée",
        "lever fait avec kiné",
        "réassurance",
    ),
    ("Perfalgan 1g donné", "installé{e} au fauteuil", "surveillance rapprochée", "boissons proposées", "écoute"),
)
_RESULTS = (("EVA {eva2}/10 à H+1", "RAS", "dort", "pt soulagé{e}", "à surveiller"), ("R : soulagé{e}", "R : RAS"))


def _abbr_day(d: date) -> str:
    return f"{d.day:02d}/{d.month:02d}"


@dataclass(slots=True)
class TransmissionsContext(ExportContext):
    """The slots of a care record: staff by first name, extensions, relatives by first name."""

    def staff_name(self, pro: Professional, *, cue: bool = True) -> list[Fragment]:
        """``IDE Karine``, ``AS Julie B.``, ``Mélanie``, ``Dr Le Goff P.``: the cue word outside the span."""
        rng = self.rng
        if pro.title:
            value = rng.choice((f"{pro.last} {initials(pro.first)}", pro.last, pro.last.upper()))
            return [rng.choice(("Dr ", "Dr ", "Docteur ")), Ent("DOCTOR", value)]
        value = pro.first if rng.random() < 0.6 else f"{pro.first} {pro.last[0].upper()}."
        if not cue:
            return [Ent("DOCTOR", value)]
        word = {
            "IDE": ("IDE ", "IDE ", "Inf. "),
            "cadre de santé": ("cadre ", "CDS "),
            "interne": ("interne ", "Int. "),
            "kinésithérapeute": ("kiné ", "MK "),
            "psychologue": ("psy ", "psychologue "),
        }.get(pro.role, ("AS ", "ASH ", "AS "))
        return [rng.choice(word), Ent("DOCTOR", value)]

    def nurse(self) -> Professional:
        nurses = self.department.of_role("IDE", "cadre de santé") or self.department.staff
        return self.rng.choice(nurses)

    def _slot_ide(self, arg: str | None) -> list[Fragment]:
        return self.staff_name(self.nurse(), cue=arg != "bare")

    def _slot_doc(self, arg: str | None) -> list[Fragment]:
        return self.staff_name(self._pro(arg))

    def _slot_rel(self, arg: str | None) -> list[Fragment]:
        r, rng = self.relative(), self.rng
        determiner = "son " if r.relation in ("époux", "fils", "frère") else "sa "
        if rng.random() < 0.6:
            return [f"{determiner}{r.relation} ", Ent("PATIENT", r.first)]
        return [f"{determiner}{r.relation} ", "Mme " if r.sex == "F" else "M. ", Ent("PATIENT", r.last.upper())]

    def _slot_ext(self, arg: str | None) -> list[Fragment]:
        """An internal extension: ``poste [4567]``, ``bip [5318]``, ``DECT [2345]``: the digits only."""
        rng = self.rng
        word = rng.choice((("bip ", "poste ", "DECT ", "bip "), ("tél. ", "poste ", "DECT n° ", "bip "))[self.variant])
        return [word, Ent("PHONE", str(rng.randrange(1000, 9999) if rng.random() < 0.8 else rng.randrange(100, 999)))]


def _fill(ctx: TransmissionsContext, text: str) -> str:
    female = ctx.patient.sex == "F"
    return clinical.fill_numbers(ctx.rng, text, e="e" if female else "", age=str(ctx.age))


def _entry_text(ctx: TransmissionsContext) -> str:
    rng, v = ctx.rng, ctx.variant
    data, action, result = rng.choice(_DATA[v]), rng.choice(_ACTIONS[v]), rng.choice(_RESULTS[v])
    if v == 0:
        return _fill(ctx, f"D : {data}. A : {action}. R : {result}.")
    return _fill(ctx, f"{data} ; {action} ; {result}")


_EVENTS = (
    (
        "{rel} a appelé, nouvelles données.",
        "{rel} a appelé, à rappeler au {tel:relative}.",
        "Dr de garde prévenu ({ext}), passage prévu.",
        "Appel de {rel}, rappellera demain.",
        "Transmis à {ide:bare} pour la nuit.",
        "Vu par {doc:colleague}, bilan prescrit.",
        "Interne prévenu, {ext}.",
        "Visite de {rel} l'après-midi.",
        "Relève faite à {ide:bare}.",
        "Kiné passé ({doc:staff}), lever fait.",
    ),
    (
        "Coup de fil de {rel}.",
        "Tél de {rel} ({tel:relative}) : passera demain.",
        "Médecin d'astreinte joint au {ext}.",
        "Passage de {doc:colleague}, RAS.",
        "Info transmise à {ide:bare}.",
        "{rel} présent{e} au moment du repas.",
        "Labo appelé ({ext}), résultats en cours.",
        "Relais pris par {ide:bare}.",
        "Vu avec {doc:intern}, modif ttt.",
    ),
)


def _times(ctx: TransmissionsContext, n: int) -> list[tuple[date, str]]:
    """``n`` sorted (day, time) pairs over the two days around the note's date."""
    rng = ctx.rng
    stamps = sorted(
        (rng.randrange(2), rng.randrange(6, 30) % 24, rng.choice((0, 10, 15, 30, 45, rng.randrange(60))))
        for _ in range(n)
    )
    return [
        (ctx.when + timedelta(days=day), f"{h:02d}h{m:02d}" if ctx.variant == 0 else f"{h:02d}:{m:02d}")
        for day, h, m in stamps
    ]


def _day_ent(ctx: TransmissionsContext, d: date) -> Ent:
    rng = ctx.rng
    if ctx.variant == 0:
        return Ent("DATE", rng.choice((_abbr_day(d), f"{d.day:02d}/{d.month:02d}/{d.year}")))
    return Ent(
        "DATE", rng.choice((f"{d.day:02d}/{d.month:02d}/{d.year % 100:02d}", f"{d.day} {MONTHS_ABBR[d.month - 1]}"))
    )


def _header(ctx: TransmissionsContext, title: str) -> None:
    doc, rng, p = ctx.doc, ctx.rng, ctx.patient
    start, end = ctx.when, ctx.when + timedelta(days=1)
    if ctx.variant == 0:
        doc.markup("<html><body>\n<h3>")
        doc.text(title)
        doc.markup("</h3>\n<p>")
        ctx.emit(
            [
                "Patient : ",
                Ent("PATIENT", f"{p.usual_last.upper()} {p.usual_first}"),
                " - né" + ("e" if p.sex == "F" else "") + " le ",
                Ent("DATE", f"{p.birthdate.day:02d}/{p.birthdate.month:02d}/{p.birthdate.year}"),
                f" - Ch. {rng.randrange(1, 40)} - ",
                ctx.department.name,
                Markup("<br>\n"),
                "Période : du ",
                Ent("DATE", str(start.day) if start.month == end.month else _abbr_day(start)),
                " au ",
                Ent("DATE", f"{_abbr_day(end)}/{end.year}"),
            ]
        )
        doc.markup("</p>\n")
    else:
        doc.markup('<div class="dossier-soins">\n<div class="bandeau">')
        ctx.emit(
            [
                Ent("PATIENT", f"{p.usual_last.upper()} {p.usual_first.upper()}"),
                f" ({ctx.age} ans) | UF {rng.randrange(1000, 9999)} | lit {rng.randrange(1, 30)}",
            ]
        )
        doc.markup('</div>\n<div class="titre">')
        ctx.emit(
            [
                title + " - nuit du ",
                Ent(
                    "DATE",
                    str(start.day) if start.month == end.month else f"{start.day} {MONTHS_ABBR[start.month - 1]}",
                ),
                " au ",
                Ent("DATE", f"{end.day} {MONTHS_ABBR[end.month - 1]} {end.year}"),
            ]
        )
        doc.markup("</div>\n")


def _entries(ctx: TransmissionsContext, n: int) -> None:
    doc, rng = ctx.doc, ctx.rng
    targets = _TARGETS[ctx.variant]
    if ctx.variant == 0:
        doc.markup(
            '<table border="1" class="transmissions">\n<tr><th>Date</th><th>Heure</th><th>Cible</th>'
            "<th>Transmission</th><th>Signature</th></tr>\n"
        )
    else:
        doc.markup('<ul class="entrees">\n')
    for day, time in _times(ctx, n):
        text = _entry_text(ctx) if rng.random() < 0.6 else rng.choice(_EVENTS[ctx.variant])
        nurse = ctx.nurse()
        if ctx.variant == 0:
            doc.markup("<tr><td>")
            ctx.emit([_day_ent(ctx, day)])
            doc.markup("</td><td>")
            doc.text(time)
            doc.markup("</td><td>")
            doc.text(rng.choice(targets))
            doc.markup("</td><td>")
            ctx.say(text)
            doc.markup("</td><td>")
            ctx.emit(ctx.staff_name(nurse))
            doc.markup("</td></tr>\n")
        else:
            doc.markup("<li>")
            ctx.emit([_day_ent(ctx, day), f" {time} ", *ctx.staff_name(nurse), " : "])
            doc.text(f"[{rng.choice(targets)}] ")
            ctx.say(text)
            doc.markup("</li>\n")
    doc.markup("</table>\n" if ctx.variant == 0 else "</ul>\n")


def _free_lines(ctx: TransmissionsContext, k: int) -> None:
    """Timed lines of free text under the table: ``14h30 IDE Karine : ...``."""
    doc, rng = ctx.doc, ctx.rng
    doc.markup("<p>" if ctx.variant == 0 else '<div class="notes">')
    for index, (_, time) in enumerate(_times(ctx, k)):
        if index:
            doc.markup("<br>\n")
        ctx.emit([time + " ", *ctx.staff_name(ctx.nurse()), " : "])
        ctx.say(rng.choice(_EVENTS[ctx.variant]))
    doc.markup("</p>\n" if ctx.variant == 0 else "</div>\n")


def _emergency_head(ctx: TransmissionsContext) -> None:
    """What the triage nurse writes first in an emergency record: arrival, reason, who brought the patient."""
    rng = ctx.rng
    motif = rng.choice(clinical.MOTIFS["emergency"])
    ctx.doc.markup("<p>" if ctx.variant == 0 else '<div class="iao">')
    ctx.emit(
        [
            ctx.pick(("Arrivée le ", "Entrée SAU le "), ("Admission le ", "Aux urgences depuis le ")),
            _day_ent(ctx, ctx.when),
            f" à {rng.randrange(0, 24):02d}h{rng.randrange(60):02d} - motif : {motif} - IAO : ",
            *ctx.staff_name(ctx.nurse(), cue=False),
        ]
    )
    ctx.doc.markup("<br>\n")
    ctx.say(
        ctx.pick(("Vit à {city}. ", "Domicile : {city}. "), ("Habite {city}. ", "Vient de {city}. "))
        + ctx.pick(
            ("Accompagné{e} par {rel}.", "Amené{e} par les pompiers, {rel} prévenu{e}."),
            ("Vient avec {rel}.", "Famille : {rel}, prévenue par tél."),
        )
    )
    ctx.doc.markup("</p>\n" if ctx.variant == 0 else "</div>\n")


@style("transmissions")
def write(ctx: ExportContext) -> None:
    """The nurses' transmissions of a stay (or of an emergency visit, for ``emergency`` notes)."""
    tx = TransmissionsContext(**{f.name: getattr(ctx, f.name) for f in fields(ctx)})
    emergency = ctx.doc_type == "emergency"
    title = tx.pick(
        ("Transmissions ciblées", "Dossier de soins - transmissions"), ("Transmissions infirmières", "Suivi IDE")
    )
    _header(tx, title + (" - urgences" if emergency else ""))
    if emergency:
        _emergency_head(tx)
    _entries(tx, tx.rng.randrange(4, 9))
    if tx.rng.random() < 0.7:
        _free_lines(tx, tx.rng.randrange(1, 4))
    tx.doc.markup("</body></html>\n" if tx.variant == 0 else "</div>\n")
