"""Export style ``caps_letter``: administrative letters typed in capitals.

Admissions offices, appointment services and older letter software print everything in upper case:
the address block (``MONSIEUR JEAN-PIERRE LE GALL``, the street, ``35000 RENNES``, a ``CEDEX``), the
place and date line (``RENNES, LE 12 MARS 2020``), ``OBJET :``, the signature (``DR P. LE GOFF``), dates
spelt out in capitals (``LE DOUZE MARS DEUX MILLE VINGT``). Case tells nothing there, so every boundary
comes from the guidelines alone: titles outside (``DR``, ``MONSIEUR``), ``CEDEX`` outside ``VILLE``,
the weekday inside the ``DATE`` and the appointment time outside it, initials after a surname inside it
(``[LE GOFF P.]``), ``POSTE [4567]``.

Variant 0 (family 3) keeps the accents (``HOSPITALISÉ``) and writes dates in figures or in words;
variant 1 (family 4) is a mainframe printer's output without accents (``HOSPITALISE``), with references
and other formulas.
"""

from __future__ import annotations

from deid_ds.synth import clinical
from deid_ds.synth.exports.context import ExportContext, style
from deid_ds.synth.exports.words import date_words
from deid_ds.synth.formats import Ent, Fragment, Markup, format_date, initials
from deid_ds.synth.pools import strip_accents
from deid_ds.synth.world import Professional


def _up(ctx: ExportContext, text: str) -> str:
    text = text.replace("µ", "\x00").upper().replace("\x00", "µ")  # µmol stays µ, not a Greek capital
    return strip_accents(text) if ctx.variant == 1 else text


def _caps(ctx: ExportContext, fragments: list[Fragment]) -> list[Fragment]:
    """Every text and entity fragment in capitals (without accents in variant 1); markup unchanged."""
    out: list[Fragment] = []
    for frag in fragments:
        if isinstance(frag, Ent):
            out.append(Ent(frag.label, _up(ctx, frag.value), frag.nbsp))
        elif isinstance(frag, Markup):
            out.append(frag)
        else:
            out.append(_up(ctx, frag))
    return out


def _line(ctx: ExportContext, *parts: str | list[Fragment]) -> None:
    """One printed line: template strings (slots expanded) and ready fragments, all in capitals."""
    fragments: list[Fragment] = []
    for part in parts:
        fragments += ctx.expand(part) if isinstance(part, str) else part
    ctx.emit(_caps(ctx, fragments))
    ctx.doc.markup("<br>\n")


def _blank(ctx: ExportContext) -> None:
    ctx.doc.markup("<br>\n")


def _words_date(ctx: ExportContext, key: str) -> Ent:
    """``DOUZE MARS DEUX MILLE VINGT``, ``LUNDI PREMIER JUIN ...``: a date spelt out."""
    return Ent("DATE", date_words(ctx.date_of(key), weekday=ctx.rng.random() < 0.3))


def _date(ctx: ExportContext, key: str) -> Ent:
    rng = ctx.rng
    if rng.random() < (0.25 if ctx.variant == 0 else 0.35):
        return _words_date(ctx, key)
    styles = ("long", "long_upper", "dmy_slash", "long_pad") if ctx.variant == 0 else ("dmy_slash", "dmy_dot", "long")
    return Ent("DATE", format_date(ctx.date_of(key), rng.choice(styles)))


def _person(ctx: ExportContext, pro: Professional) -> list[Fragment]:
    """``DR P. LE GOFF``, ``DOCTEUR YANN KERBRAT``, ``DR LE GOFF P.``, ``MADAME C. LE ROUX``."""
    rng = ctx.rng
    value = rng.choice(
        (f"{initials(pro.first)} {pro.last}", f"{pro.first} {pro.last}", f"{pro.last} {initials(pro.first)}")
    )
    if pro.title:
        title = rng.choice({"Dr": ("DR ", "DOCTEUR "), "Pr": ("PR ", "PROFESSEUR ")}[pro.title])
    else:
        title = "MADAME " if pro.sex == "F" else "MONSIEUR "
    return [title, Ent("DOCTOR", value)]


def _patient(ctx: ExportContext, *, civility: bool = True) -> list[Fragment]:
    p, rng = ctx.patient, ctx.rng
    value = rng.choice((f"{p.usual_first} {p.usual_last}", f"{p.usual_last} {p.usual_first}"))
    out: list[Fragment] = [("MADAME " if p.sex == "F" else "MONSIEUR ") if civility else "", Ent("PATIENT", value)]
    if p.married_name and rng.random() < 0.5:
        out += [rng.choice((" NEE ", " NÉE ", " (NEE ")), Ent("PATIENT", p.birth_name)]
        if out[-2] == " (NEE ":
            out.append(")")
    return out


def _sender(ctx: ExportContext) -> None:
    h, d, rng = ctx.hospital, ctx.department, ctx.rng
    doc = ctx.doc
    doc.markup('<div class="expediteur">' if ctx.variant == 0 else '<table width="100%"><tr><td valign="top">')
    if ctx.doc_type == "referral_letter":
        gp = ctx.patient.gp
        _line(ctx, _person(ctx, gp))
        _line(ctx, "MÉDECINE GÉNÉRALE")
        if gp.practice is not None:
            ctx.emit(_caps(ctx, ctx.address_fragments(gp.practice, inline=False, caps=True)))
            _blank(ctx)
        _line(ctx, ["TÉL ", ctx.phone_ent(gp.phone)])
    else:
        _line(ctx, "{hosp}")
        _line(ctx, f"SERVICE {d.name}")
        ctx.emit(_caps(ctx, ctx.address_fragments(h.address, inline=False, caps=True)))
        _blank(ctx)
        _line(
            ctx,
            ["STANDARD : ", ctx.phone_ent(h.phone)],
            [" - SECRÉTARIAT : ", ctx.phone_ent(d.phone)] if rng.random() < 0.6 else [],
            [" POSTE ", Ent("PHONE", str(rng.randrange(1000, 9999)))] if rng.random() < 0.4 else [],
        )
    doc.markup("</div>\n" if ctx.variant == 0 else "</td>\n")


def _recipient(ctx: ExportContext) -> None:
    doc, p = ctx.doc, ctx.patient
    doc.markup('<div class="destinataire" style="margin-left:55%">' if ctx.variant == 0 else '<td valign="top">')
    if ctx.doc_type in ("patient_letter", "convocation"):
        _line(ctx, _patient(ctx))
        ctx.emit(_caps(ctx, ctx.address_fragments(ctx.address, inline=False, caps=True)))
        _blank(ctx)
    elif ctx.doc_type == "referral_letter":
        head = ctx._pro("head")
        _line(ctx, _person(ctx, head))
        _line(ctx, f"SERVICE {ctx.department.name}", " - {hosp}")
        ctx.emit(_caps(ctx, ctx.address_fragments(ctx.hospital.address, inline=False, caps=True)))
        _blank(ctx)
    else:
        gp = p.gp
        _line(ctx, _person(ctx, gp))
        if gp.practice is not None:
            ctx.emit(_caps(ctx, ctx.address_fragments(gp.practice, inline=False, caps=True)))
            _blank(ctx)
    doc.markup("</div>\n" if ctx.variant == 0 else "</td></tr></table>\n")


def _place_date(ctx: ExportContext) -> None:
    """``RENNES, LE 12 MARS 2020``: the sender's commune and the date, two entities."""
    rng = ctx.rng
    if ctx.doc_type == "referral_letter" and ctx.patient.gp.practice is not None:
        town = ctx.patient.gp.practice.commune.name
    else:
        town = ctx.hospital.address.commune.name
    if ctx.variant == 0:
        _line(ctx, [Ent("VILLE", town), rng.choice((", LE ", " LE ", ", ")), _date(ctx, "visit")])
    else:
        _line(ctx, ["FAIT A ", Ent("VILLE", town), ", LE ", _date(ctx, "visit")])


def _object(ctx: ExportContext, what: str) -> None:
    rng = ctx.rng
    if ctx.variant == 1:
        _line(ctx, f"N/REF : {rng.choice('ABCDEFGH')}{rng.randrange(100, 999)}/{rng.randrange(10000, 99999)} - V/REF :")
    _line(
        ctx,
        "OBJET : " if ctx.variant == 0 else "CONCERNE : ",
        what,
        [" - ", *_patient(ctx, civility=rng.random() < 0.5)],
        [rng.choice((" NÉ(E) LE ", " DDN ")), Ent("DATE", format_date(ctx.patient.birthdate, "dmy_slash"))]
        if rng.random() < 0.7
        else [],
    )
    _blank(ctx)


def _clin(ctx: ExportContext, bank: tuple[str, ...], k: int = 1) -> str:
    """``k`` sentences of clinical prose on one line (no identifier in them)."""
    female = ctx.patient.sex == "F"
    return " ".join(
        clinical.fill_numbers(ctx.rng, s, age=str(ctx.age), e="e" if female else "")
        for s in ctx.rng.sample(bank, min(k, len(bank)))
    )


def _signature(ctx: ExportContext, pro: Professional) -> None:
    rng, secretary = ctx.rng, next(iter(ctx.department.of_role("secrétaire")), None)
    _blank(ctx)
    _line(ctx, _person(ctx, pro))
    roles = {"chef de service": "CHEF DE SERVICE", "médecin traitant": "MÉDECIN TRAITANT", "secrétaire": "SECRÉTARIAT"}
    _line(ctx, roles.get(pro.role, "PRATICIEN" if pro.title else "POUR LE SERVICE"))
    if secretary not in (None, pro) and pro.title and ctx.doc_type != "referral_letter" and rng.random() < 0.6:
        from deid_ds.synth.formats import dictation_initials

        mark = "/" if ctx.variant == 0 else "-"
        _line(
            ctx,
            [
                Ent("DOCTOR", dictation_initials(pro.first, pro.last)),
                mark,
                Ent("DOCTOR", dictation_initials(secretary.first, secretary.last)),
            ],
        )


# -- the four letters ----------------------------------------------------------------------------------------


def _discharge(ctx: ExportContext) -> None:
    rng = ctx.rng
    _object(ctx, ctx.pick(("COMPTE RENDU D'HOSPITALISATION",), ("LETTRE DE SORTIE",)))
    _line(ctx, ctx.pick(("CHER CONFRÈRE,",), ("MON CHER CONFRERE,",)))
    _line(
        ctx,
        ctx.pick(
            ("VOTRE PATIENT{e} ", "J'AI PRIS EN CHARGE "),
            ("NOUS AVONS HOSPITALISE ",),
        ),
        _patient(ctx),
        ctx.pick((", HOSPITALISÉ{e} DU ", " DANS LE SERVICE DU "), (" DU ",)),
        [_date(ctx, "admission")],
        " AU ",
        [_date(ctx, "discharge")],
        " POUR " + rng.choice(clinical.MOTIFS["medical"]) + ".",
    )
    _line(ctx, _clin(ctx, clinical.EXAM, 2))
    _line(ctx, _clin(ctx, clinical.CONCLUSIONS))
    _line(
        ctx,
        ctx.pick(
            ("RENDEZ-VOUS DE CONTRÔLE LE {date:next} AVEC {doc:colleague}.", "SORTIE AU DOMICILE AVEC {rel}."),
            ("RETOUR A DOMICILE, {rel:tel}.", "SUIVI PAR {doc:gp}."),
        ),
    )
    if rng.random() < 0.5:
        _line(
            ctx, ctx.pick(("PROCHAIN RENDEZ-VOUS LE ",), ("CONSULTATION PREVUE LE ",)), [_words_date(ctx, "next")], "."
        )
    _line(ctx, ctx.pick(("BIEN CONFRATERNELLEMENT.",), ("CONFRATERNELLEMENT,",)))
    _signature(ctx, ctx.author)


def _referral(ctx: ExportContext) -> None:
    _object(ctx, ctx.pick(("DEMANDE D'AVIS",), ("ADRESSAGE",)))
    _line(ctx, "CHER CONFRÈRE," if ctx.variant == 0 else "CHER AMI,")
    _line(
        ctx,
        ctx.pick(("JE VOUS ADRESSE ",), ("MERCI DE RECEVOIR ",)),
        _patient(ctx),
        ", {age} ANS, POUR " + ctx.rng.choice(clinical.MOTIFS["medical"]) + ".",
    )
    _line(ctx, _clin(ctx, clinical.TIME_SENTENCES))
    _line(ctx, "ANTÉCÉDENTS : " + ", ".join(ctx.rng.sample(clinical.ANTECEDENTS, 3)) + ".")
    _line(ctx, ctx.pick(("JOIGNABLE AU {tel:mobile}.",), ("TEL DU PATIENT : {tel:patient}.",)))
    _signature(ctx, ctx.patient.gp)


def _patient_letter(ctx: ExportContext) -> None:
    _object(ctx, ctx.pick(("RÉSULTATS D'EXAMENS",), ("VOTRE DOSSIER",)))
    _line(ctx, "{Civ},")
    _line(
        ctx,
        ctx.pick(("SUITE À VOTRE VENUE LE ",), ("A LA SUITE DE VOTRE CONSULTATION DU ",)),
        [_date(ctx, "prev")],
        ", " + ctx.rng.choice(clinical.CONCLUSIONS),
    )
    _line(
        ctx,
        ctx.pick(("UN RENDEZ-VOUS VOUS EST FIXÉ LE ",), ("VOUS ETES ATTENDU{e} LE ",)),
        [_date(ctx, "next")],
        " À {rdv}." if ctx.variant == 0 else " A {rdv}.",
    )
    _line(ctx, ctx.pick(("SECRÉTARIAT : {tel:service}.",), ("RENSEIGNEMENTS : {mail:service}",)))
    _line(ctx, "VEUILLEZ AGRÉER, {Civ}, L'EXPRESSION DE NOS SALUTATIONS DISTINGUÉES.")
    _signature(ctx, ctx.author)


def _convocation(ctx: ExportContext) -> None:
    rng, d = ctx.rng, ctx.date_of("next")
    _object(ctx, ctx.pick(("CONVOCATION",), ("AVIS DE RENDEZ-VOUS",)))
    _line(ctx, "{Civ},")
    when = Ent("DATE", rng.choice((format_date(d, "weekday_long"), format_date(d, "weekday_slash"), date_words(d))))
    _line(
        ctx,
        ctx.pick(("VOUS ÊTES CONVOQUÉ{e} LE ",), ("VOUS ETES PRIE{e} DE VOUS PRESENTER LE ",)),
        [when],
        " À {rdv}, {site}, SERVICE {svc}." if ctx.variant == 0 else " A {rdv} AU BUREAU DES ENTREES.",
    )
    _line(ctx, ctx.pick(("MUNISSEZ-VOUS DE VOTRE CARTE VITALE.",), ("SE MUNIR DE LA CARTE VITALE ET DE LA MUTUELLE.",)))
    _line(
        ctx,
        "EN CAS D'EMPÊCHEMENT, MERCI DE PRÉVENIR AU {tel:service}"
        if ctx.variant == 0
        else "ANNULATION AU MOINS 48 H AVANT AU {tel:service}",
        [" POSTE ", Ent("PHONE", str(rng.randrange(1000, 9999)))] if rng.random() < 0.5 else [],
        ".",
    )
    secretary = next(iter(ctx.department.of_role("secrétaire")), ctx.author)
    _signature(ctx, secretary if rng.random() < 0.5 else ctx.author)


_WRITERS = {
    "discharge_letter": _discharge,
    "referral_letter": _referral,
    "patient_letter": _patient_letter,
    "convocation": _convocation,
}


@style("caps_letter")
def write(ctx: ExportContext) -> None:
    """An administrative letter of ``ctx.doc_type`` in capitals (other document types read as a discharge letter)."""
    doc = ctx.doc
    doc.markup(
        '<html><body style="font-family:Courier New">\n'
        if ctx.variant == 0
        else '<html><body><div class="courrier" style="font-family:monospace;font-size:9pt">\n'
    )
    _sender(ctx)
    _recipient(ctx)
    _place_date(ctx)
    _WRITERS.get(ctx.doc_type, _discharge)(ctx)
    doc.markup("</body></html>\n" if ctx.variant == 0 else "</div></body></html>\n")
