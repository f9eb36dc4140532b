"""Export style ``lab_report``: a laboratory information system's report of results.

Many dates and times in little space: sampling (``Prélevé le 12/03/2020 09:41``), reception, validation,
edition (``Edité le``), ISO dates (``2020-03-12``), ``12 MAR 2020``, and the dates of previous results
heading their columns; a patient identity block with the birth name and birth date in their own cells;
the prescriber, the person who took the sample and the validating biologist. The guidelines keep every
time outside its ``DATE`` (``[12/03/2020] 09:41``), split a name over two cells into two spans (``Nom``
then ``Prénom``), and leave everything in the results table unannotated: values, units, reference
ranges, request and accreditation numbers.

Variant 0 (family 3) is one laboratory system's HTML tables, French numeric dates; variant 1 (family 4)
another's, with ISO and ``12 MAR 2020`` dates, other labels and another column order.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta

from deid_ds.synth.exports.context import ExportContext, style
from deid_ds.synth.formats import Ent, Fragment, Markup, initials
from deid_ds.synth.world import Professional

_MONTHS3 = ("JAN", "FEV", "MAR", "AVR", "MAI", "JUN", "JUL", "AOU", "SEP", "OCT", "NOV", "DEC")

#: (section, analyte, unit, low, high, decimals): reference ranges are not entities, nor are values.
_ANALYTES = (
    ("HÉMATOLOGIE", "Hémoglobine", "g/dL", 12.0, 16.0, 1),
    ("HÉMATOLOGIE", "Leucocytes", "G/L", 4.0, 10.0, 2),
    ("HÉMATOLOGIE", "Plaquettes", "G/L", 150, 400, 0),
    ("HÉMATOLOGIE", "VGM", "fL", 80, 100, 0),
    ("HÉMOSTASE", "Taux de prothrombine", "%", 70, 100, 0),
    ("HÉMOSTASE", "INR", "", 0.8, 1.2, 2),
    ("BIOCHIMIE", "Sodium", "mmol/L", 136, 145, 0),
    ("BIOCHIMIE", "Potassium", "mmol/L", 3.5, 5.0, 1),
    ("BIOCHIMIE", "Créatinine", "µmol/L", 45, 90, 0),
    ("BIOCHIMIE", "DFG (CKD-EPI)", "mL/min/1,73m²", 90, 120, 0),
    ("BIOCHIMIE", "Protéine C réactive", "mg/L", 0, 5, 1),
    ("BIOCHIMIE", "ASAT", "UI/L", 5, 34, 0),
    ("BIOCHIMIE", "Glycémie à jeun", "mmol/L", 4.1, 5.9, 2),
    ("BIOCHIMIE", "HbA1c", "%", 4.0, 6.0, 1),
    ("HORMONOLOGIE", "TSH", "mUI/L", 0.35, 4.94, 2),
)


def _num(value: float, decimals: int) -> str:
    return f"{value:.{decimals}f}".replace(".", ",")


def _value(rng, low: float, high: float, decimals: int) -> str:
    return _num(rng.uniform(low * 0.85, high * 1.2), decimals)


def _dmy(d: date) -> str:
    return f"{d.day:02d}/{d.month:02d}/{d.year}"


def _mon(d: date) -> str:
    return f"{d.day:02d} {_MONTHS3[d.month - 1]} {d.year}"


def _date(ctx: ExportContext, d: date) -> Ent:
    """Variant 0 writes ``12/03/2020``; variant 1 mixes ISO ``2020-03-12`` and ``12 MAR 2020``."""
    if ctx.variant == 0:
        return Ent("DATE", _dmy(d))
    return Ent("DATE", d.isoformat() if ctx.rng.random() < 0.5 else _mon(d))


@dataclass(slots=True)
class _Clock:
    """The times of one report's day, each after the one before: sampling, reception, validation, edition."""

    ctx: ExportContext
    minute: int = 0

    def next(self) -> str:
        rng = self.ctx.rng
        self.minute = min((self.minute or rng.randrange(6 * 60, 11 * 60)) + rng.randrange(5, 90), 23 * 60 + 59)
        h, m = divmod(self.minute, 60)
        return f"{h:02d}:{m:02d}" if self.ctx.variant == 1 or rng.random() < 0.7 else f"{h:02d}h{m:02d}"


def _pro(ctx: ExportContext, pro: Professional) -> list[Fragment]:
    """``Dr KERBRAT Yann``, ``Dr Y. KERBRAT``, ``Karine M.``: titles outside the span."""
    rng = ctx.rng
    if not pro.title:
        return [Ent("DOCTOR", rng.choice((f"{pro.first} {pro.last[0].upper()}.", f"{pro.last.upper()} {pro.first}")))]
    forms = (
        (f"{pro.last.upper()} {pro.first}", f"{initials(pro.first)} {pro.last.upper()}")
        if ctx.variant == 0
        else (f"{pro.first} {pro.last.upper()}", f"{pro.last.upper()} {initials(pro.first)}")
    )
    return [rng.choice(("Dr ", "Dr ", "Docteur ") if pro.title == "Dr" else ("Pr ",)), Ent("DOCTOR", rng.choice(forms))]


def _prescriber(ctx: ExportContext) -> Professional:
    rng = ctx.rng
    if rng.random() < 0.5:
        return ctx.patient.gp
    clinical = [d for d in ctx.hospital.departments.values() if d.kind in ("medical", "surgical")]
    staff = [p for d in clinical for p in d.staff if p.title] if clinical else []
    return rng.choice(staff) if staff else ctx.patient.gp


def _cells(ctx: ExportContext, *cells: str | list[Fragment], header: bool = False) -> None:
    doc, tag = ctx.doc, "th" if header else "td"
    doc.markup("<tr>")
    for cell in cells:
        doc.markup(f"<{tag}>")
        if isinstance(cell, str):
            doc.text(cell)
        else:
            ctx.emit(cell)
        doc.markup(f"</{tag}>")
    doc.markup("</tr>\n")


def _lab_head(ctx: ExportContext) -> None:
    doc, rng, h, d = ctx.doc, ctx.rng, ctx.hospital, ctx.department
    doc.markup('<div class="labo">' if ctx.variant == 0 else '<table class="entete"><tr><td>')
    doc.markup("<b>")
    ctx.emit([ctx.pick(("Laboratoire de ", "Service de "), ("LBM - ", "Laboratoire - ")) + d.name + " - "])
    ctx.say("{hosp}")
    doc.markup("</b><br>\n")
    ctx.emit(ctx.address_fragments(h.address, inline=True))
    doc.markup("<br>\n")
    ctx.emit(
        [
            ctx.pick(("Tél : ", "Secrétariat : "), ("Tel. ", "Accueil labo ")),
            ctx.phone_ent(d.phone),
            *([" - poste ", Ent("PHONE", str(rng.randrange(1000, 9999)))] if rng.random() < 0.5 else []),
            " - ",
            Ent("EMAIL", d.email),
        ]
    )
    doc.markup("<br>\n")
    doc.text(f"FINESS {h.finess} - Accréditation COFRAC n° 8-{rng.randrange(1000, 4000)} - NF EN ISO 15189")
    doc.markup("</div>\n" if ctx.variant == 0 else "</td></tr></table>\n")


def _identity(ctx: ExportContext) -> None:
    p, rng = ctx.patient, ctx.rng
    sex = "F" if p.sex == "F" else "M"
    ipp, request = str(rng.randrange(80_000_000, 99_999_999)), f"{ctx.when:%y%m%d}{rng.randrange(1000, 9999)}"
    born = [_date(ctx, p.birthdate)]
    ctx.doc.markup('<table class="patient" border="1">\n')
    if ctx.variant == 0:
        _cells(ctx, "Nom :", [Ent("PATIENT", p.usual_last.upper())], "Prénom :", [Ent("PATIENT", p.usual_first)])
        if p.married_name:
            _cells(ctx, "Nom de naissance :", [Ent("PATIENT", p.birth_name.upper())], "Sexe :", sex)
        else:
            _cells(ctx, "Sexe :", sex, "", "")
        _cells(ctx, "Né(e) le :", born, "IPP :", ipp)
        _cells(ctx, "N° demande :", request, "Adresse :", ctx.address_fragments(ctx.address, inline=True))
    else:
        name: list[Fragment] = [Ent("PATIENT", f"{p.usual_last.upper()} {p.usual_first.upper()}")]
        if p.married_name:
            name += [" née ", Ent("PATIENT", p.birth_name.upper())]
        _cells(ctx, "Patient(e)", name, "DDN", born)
        _cells(ctx, "Sexe", sex, "N° dossier", ipp)
        _cells(ctx, "Demande", request, "Tél.", [ctx.phone_ent(p.mobile)])
    ctx.doc.markup("</table>\n")


def _request(ctx: ExportContext, sampled: date, clock: _Clock) -> None:
    """Prescriber, sampler, and the timestamps of the request: each time outside its date."""
    doc, rng = ctx.doc, ctx.rng
    samplers = ctx.department.of_role("technicien", "IDE") or [ctx.author]
    received = sampled if rng.random() < 0.8 else sampled + timedelta(days=1)
    doc.markup("<p>" if ctx.variant == 0 else '<div class="demande">')
    lines: list[list[Fragment]] = [
        [ctx.pick(("Prescripteur : ",), ("Demandeur : ", "Médecin demandeur : ")), *_pro(ctx, _prescriber(ctx))],
        [ctx.pick(("Prélevé le ",), ("Prélèvement : ",)), _date(ctx, sampled), f" {clock.next()}"],
        [ctx.pick(("Préleveur : ",), ("Prélevé par : ",)), *_pro(ctx, rng.choice(samplers))],
        [ctx.pick(("Reçu le ",), ("Réception : ",)), _date(ctx, received), ctx.pick((" à ",), (" ",)) + clock.next()],
    ]
    for index, line in enumerate(lines):
        if index:
            doc.markup("<br>\n")
        ctx.emit(line)
    doc.markup("</p>\n" if ctx.variant == 0 else "</div>\n")


def _results(ctx: ExportContext, sampled: date) -> None:
    doc, rng = ctx.doc, ctx.rng
    analytes = sorted(rng.sample(_ANALYTES, rng.randrange(5, 10)), key=lambda a: _ANALYTES.index(a))
    previous = sorted(
        {sampled - timedelta(days=rng.randrange(20, 900)) for _ in range(rng.randrange(0, 3))}, reverse=True
    )
    doc.markup('<table class="resultats" border="1" cellpadding="2">\n')
    if ctx.variant == 0:
        head: list[str | list[Fragment]] = ["Analyse", "Résultat", "Unité", "Valeurs de référence"]
        head += [["Antériorité", Markup("<br>"), _date(ctx, d)] for d in previous]
    else:
        head = ["Examen", "Valeurs usuelles", "Résultat", "Unités"]
        head += [["Résultat du ", _date(ctx, d)] for d in previous]
    _cells(ctx, *head, header=True)
    section = ""
    for name, unit, low, high, decimals in ((a[1], a[2], a[3], a[4], a[5]) for a in analytes):
        current = next(a[0] for a in analytes if a[1] == name)
        if current != section:
            section = current
            doc.markup(f'<tr><td colspan="{4 + len(previous)}"><b>')
            doc.text(section)
            doc.markup("</b></td></tr>\n")
        reference = f"{_num(low, decimals)} - {_num(high, decimals)}" if low else f"< {_num(high, decimals)}"
        value = _value(rng, low, high, decimals)
        older = [_value(rng, low, high, decimals) for _ in previous]
        if ctx.variant == 0:
            _cells(ctx, name, value, unit, reference, *older)
        else:
            _cells(ctx, name, reference, value, unit, *older)
    doc.markup("</table>\n")


def _validation(ctx: ExportContext, sampled: date, clock: _Clock) -> None:
    doc, rng = ctx.doc, ctx.rng
    validated = sampled + timedelta(days=rng.choice((0, 0, 0, 1)))
    doc.markup("<p>" if ctx.variant == 0 else '<div class="validation">')
    ctx.emit(
        [
            ctx.pick(("Validé le ", "Validation biologique le "), ("Validé par le biologiste le ",)),
            _date(ctx, validated),
            ctx.pick((" à ",), (" ",)) + clock.next() + ctx.pick((" par ",), (" - ",)),
            *_pro(ctx, ctx.author),
            ctx.pick((", biologiste",), (" (biologiste responsable)",)),
            Markup("<br>\n"),
            ctx.pick(("Edité le ", "Édité le "), ("Compte rendu édité le ", "Impression du ")),
            _date(ctx, validated) if ctx.variant == 0 else Ent("DATE", validated.isoformat()),
            " " + clock.next() + (f":{rng.randrange(60):02d}" if ctx.variant == 1 else ""),
            " - Page 1/1",
        ]
    )
    doc.markup("</p>\n" if ctx.variant == 0 else "</div>\n")
    if rng.random() < 0.4:
        doc.markup("<p><i>")
        ctx.emit(
            [
                ctx.pick(("Résultats transmis par téléphone au ",), ("Appel du service (",)),
                *_pro(ctx, _prescriber(ctx)),
                ctx.pick((" le ",), (") le ",)),
                _date(ctx, validated),
                f" à {clock.next()}.",
            ]
        )
        doc.markup("</i></p>\n")


@style("lab_report")
def write(ctx: ExportContext) -> None:
    """A laboratory report of results (every document type it is drawn for reads as one)."""
    sampled = ctx.when
    ctx.doc.markup(
        '<html><head><meta charset="utf-8"><title>CR biologie</title></head><body>\n'
        if ctx.variant == 0
        else '<div class="sil-report">\n'
    )
    _lab_head(ctx)
    _identity(ctx)
    clock = _Clock(ctx)
    _request(ctx, sampled, clock)
    _results(ctx, sampled)
    _validation(ctx, sampled, clock)
    ctx.doc.markup("</body></html>\n" if ctx.variant == 0 else "</div>\n")
