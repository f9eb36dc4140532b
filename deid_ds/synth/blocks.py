"""Structural blocks shared by document types: page skeleton, letterhead, identity block, recipient
block, signature, "copie à" list.

Each block has one layout per phrasing family. Family 0 is the "training" house style (a two-column
letterhead table, ``Tél. :``, ``Copie à :``); family 1 is another software's style (a header ``div``,
``Standard``/``Télécopie``, an identity table, ``Double adressé à``). A held-out corpus written in family 1
thus shows a model layouts and cue words it never saw in training.
"""

from __future__ import annotations

from deid_ds.synth.context import NoteContext, of_department
from deid_ds.synth.formats import Ent, Markup, format_name

# -- page skeleton --------------------------------------------------------------------------------------


def open_page(ctx: NoteContext, title: str) -> None:
    """The document start: a full HTML page with head (family 0) or a bare fragment (family 1)."""
    rng, doc = ctx.rng, ctx.doc
    if ctx.family == 0:
        doc.markup('<!DOCTYPE html>\n<html>\n<head>\n<meta charset="utf-8">\n<title>')
        doc.text(title)
        doc.markup(
            "</title>\n<style>body{font-family:Arial;font-size:10pt} td{vertical-align:top}</style>\n</head>\n<body>\n"
        )
    else:
        doc.markup(
            rng.choice(('<html><body><div class="document">\n', '<div class="document" style="font-family:Calibri">\n'))
        )
        if rng.random() < 0.5:
            doc.markup("<!-- export DPI v5.2 -->\n")


def close_page(ctx: NoteContext) -> None:
    if ctx.family == 0:
        ctx.doc.markup("\n</body>\n</html>\n")
    else:
        ctx.doc.markup("\n</div>" + ("</body></html>\n" if ctx.doc.parts[0].startswith("<html>") else "\n"))


def title(ctx: NoteContext, text: str) -> None:
    if ctx.family == 0:
        ctx.doc.markup('<h2 align="center">')
        ctx.doc.text(text)
        ctx.doc.markup("</h2>\n")
    else:
        ctx.doc.markup('<p class="titre"><b><u>')
        ctx.doc.text(text.upper())
        ctx.doc.markup("</u></b></p>\n")


def para(ctx: NoteContext, *lines: str) -> None:
    """A paragraph of template lines separated by ``<br>``."""
    ctx.doc.markup("<p>")
    for index, line in enumerate(lines):
        if index:
            ctx.doc.markup("<br>\n")
        ctx.say(line)
    ctx.doc.markup("</p>\n")


def section(ctx: NoteContext, heading: tuple[str, str], *lines: str) -> None:
    """A titled section; heading is (family 0 wording, family 1 wording)."""
    doc = ctx.doc
    if ctx.family == 0:
        doc.markup("<p><b>")
        doc.text(heading[0] + " :")
        doc.markup("</b>")
        for index, line in enumerate(lines):
            doc.markup("<br>\n" if index or ctx.rng.random() < 0.5 else " ")
            ctx.say(line)
        doc.markup("</p>\n")
    else:
        doc.markup("<h3>")
        doc.text(heading[1])
        doc.markup("</h3>\n<div>")
        for index, line in enumerate(lines):
            if index:
                doc.markup("</div>\n<div>")
            ctx.say(line)
        doc.markup("</div>\n")


def bullet_list(ctx: NoteContext, lines: list[str]) -> None:
    doc = ctx.doc
    if ctx.family == 0:
        doc.markup("<p>")
        for index, line in enumerate(lines):
            if index:
                doc.markup("<br>\n")
            doc.text("- ")
            ctx.say(line)
        doc.markup("</p>\n")
    else:
        doc.markup("<ul>\n")
        for line in lines:
            doc.markup("<li>")
            ctx.say(line)
            doc.markup("</li>\n")
        doc.markup("</ul>\n")


# -- letterhead -----------------------------------------------------------------------------------------

_ROLE_HEADINGS = {
    0: {
        "chef de service": "Chef de service",
        "praticien": "Praticiens hospitaliers",
        "interne": "Internes",
        "secrétaire": "Secrétariat",
        "cadre de santé": "Cadre de santé",
    },
    1: {
        "chef de service": "Responsable d'unité",
        "praticien": "Médecins du service",
        "interne": "Internes",
        "secrétaire": "Assistantes médicales",
        "cadre de santé": "Cadre paramédical",
    },
}

_ROLE_SINGULAR = {
    "chef de service": "responsable d'unité",
    "praticien": "médecin du service",
    "interne": "interne",
    "secrétaire": "assistante médicale",
    "cadre de santé": "cadre paramédical",
}


def letterhead(ctx: NoteContext) -> None:
    """The hospital's letterhead with address, phones, e-mail and the department's physicians."""
    rng, doc, h, d = ctx.rng, ctx.doc, ctx.hospital, ctx.department
    address = ctx.address_fragments(h.address, inline=False, caps=rng.random() < 0.5)
    staff_roles = (
        ["chef de service", "praticien"]
        + (["interne"] if rng.random() < 0.3 else [])
        + (["secrétaire"] if rng.random() < 0.4 else [])
    )
    listed = {role: d.of_role(role)[: rng.randrange(1, 4)] for role in staff_roles}  # a letterhead lists a few names
    if ctx.family == 0:
        doc.markup('<table width="100%" border="0">\n<tr><td width="45%">\n<b>')
        ctx.say("{hosp}")
        doc.markup("</b><br>\n")
        doc.text(h.site)
        doc.markup("<br>\n")
        doc.text(
            "Service " + of_department(d.name)
            if not d.name.startswith(("Accueil", "Laboratoire", "Imagerie"))
            else d.name
        )
        doc.markup("<br>\n")
        ctx.emit(address)
        doc.markup("<br>\n")
        ctx.emit(
            [
                rng.choice(("Tél. : ", "Tél : ", "Tel. ")),
                ctx.phone_ent(h.phone),
                Markup("<br>\n"),
                rng.choice(("Secrétariat : ", "Secr. : ")),
                ctx.phone_ent(d.phone),
                Markup("<br>\n"),
                "Fax : ",
                ctx.phone_ent(d.fax),
                Markup("<br>\n"),
                rng.choice(("E-mail : ", "Mail : ", "")),
                Ent("EMAIL", d.email),
            ]
        )
        doc.markup('\n</td>\n<td width="55%" align="right">\n')
        for role in staff_roles:
            people = listed[role]
            if not people:
                continue
            doc.markup("<b>")
            doc.text(_ROLE_HEADINGS[0][role])
            doc.markup("</b><br>\n")
            for pro in people:
                ctx.emit(ctx.pro_name(pro, style=rng.choice(("First LAST", "F. LAST", "LAST First"))))
                doc.markup("<br>\n")
        doc.markup("</td></tr>\n</table>\n")
    else:
        doc.markup('<div class="entete">\n<table><tr><td><img src="logo.png" alt=""></td><td><span class="etab">')
        ctx.say("{hosp}")
        doc.markup("</span> &ndash; ")
        doc.text(d.name)
        doc.markup('</td></tr></table>\n<div class="adresse">')
        # the address on one line, its parts separated by dashes instead of line breaks
        ctx.emit([Markup(" &ndash; ") if isinstance(frag, Markup) else frag for frag in address])
        doc.markup("<br>\n")
        ctx.emit(
            [
                "Standard ",
                ctx.phone_ent(h.phone),
                Markup(" &middot; "),
                "Télécopie ",
                ctx.phone_ent(d.fax),
                Markup(" &middot; "),
                "Courriel ",
                Ent("EMAIL", d.email),
            ]
        )
        doc.markup('</div>\n<ul class="medecins">\n')
        for role in staff_roles:
            for pro in listed[role]:
                doc.markup("<li>")
                ctx.emit(ctx.pro_name(pro, style=rng.choice(("First LAST", "First Last", "F. Last"))))
                doc.text(", " + _ROLE_SINGULAR[role])
                doc.markup("</li>\n")
        doc.markup("</ul>\n</div>\n")


# -- identity -------------------------------------------------------------------------------------------


def identity_block(ctx: NoteContext, *, phone: bool = True) -> None:
    """Who the note is about: a line (family 0) or a table of fields (family 1)."""
    rng, doc, p = ctx.rng, ctx.doc, ctx.patient
    if ctx.family == 0:
        lines = [
            "<b>Patient{e} :</b> {pat:full}",
            "Né{e} le {date:birth}" + (" à {city:birth}" if rng.random() < 0.6 else "") + " ({age} ans)",
            "Adresse : {addr}",
        ]
        if phone and rng.random() < 0.7:
            lines.append(
                rng.choice(
                    ("Tél : {tel:patient}", "Tél. portable : {tel:mobile}", "Tél : {tel:patient} / {tel:mobile}")
                )
            )
        doc.markup("<p>")
        for index, line in enumerate(lines):
            if index:
                doc.markup("<br>\n")
            head, _, rest = line.partition("</b>")
            if rest:
                doc.markup("<b>")
                ctx.say(head.replace("<b>", ""))
                doc.markup("</b>")
                ctx.say(rest)
            else:
                ctx.say(line)
        doc.markup("</p>\n")
        return
    rows: list[tuple[str, list]] = [("Nom d'usage", [Ent("PATIENT", p.usual_last.upper())])]
    if p.married_name:
        rows.append(("Nom de naissance", [Ent("PATIENT", p.birth_name.upper())]))
    rows.append(("Prénom(s)", [Ent("PATIENT", p.given_names if rng.random() < 0.5 else p.usual_first)]))
    rows.append(("Date de naissance", ctx.expand("{date:birth}")))
    if rng.random() < 0.5:
        rows.append(("Lieu de naissance", ctx.expand("{city:birth}")))
    rows.append(("Domicile", ctx.address_fragments(ctx.address, inline=False)))
    if phone:
        rows.append(("Portable", ctx.expand("{tel:mobile}")))
        if p.email and rng.random() < 0.5:
            rows.append(("Courriel", ctx.expand("{mail:patient}")))
    doc.markup('<table class="identite" border="1" cellpadding="2">\n')
    for label, frags in rows:
        doc.markup("<tr><td>")
        doc.text(label)
        doc.markup("</td><td>")
        ctx.emit(frags)
        doc.markup("</td></tr>\n")
    doc.markup("</table>\n")


def recipient_block(ctx: NoteContext, *, to_patient: bool = False) -> None:
    """The postal address of the letter's recipient (the GP, or the patient)."""
    rng, doc, p = ctx.rng, ctx.doc, ctx.patient
    doc.markup('<p align="right">' if ctx.family == 0 else '<div class="destinataire" style="margin-left:60%">')
    if ctx.family == 1:
        doc.text(rng.choice(("À l'attention de", "Destinataire :", "À l'intention de")))
        doc.markup("<br>\n")
    if to_patient:
        ctx.emit(
            [
                rng.choice(("Madame ", "Mme ")) if p.sex == "F" else rng.choice(("Monsieur ", "M. ")),
                Ent(
                    "PATIENT",
                    format_name(p.usual_first, p.usual_last, rng.choice(("First LAST", "LAST First", "FIRST LAST"))),
                ),
            ]
        )
        doc.markup("<br>\n")
        ctx.emit(ctx.address_fragments(ctx.address, inline=False, caps=rng.random() < 0.5))
    else:
        gp = p.gp
        titles = (
            ("Docteur ", "Dr ", "Monsieur le Docteur " if gp.sex == "M" else "Madame le Docteur ")
            if ctx.family == 0
            else ("", "Dr ")
        )
        ctx.emit(
            [
                rng.choice(titles),
                Ent(
                    "DOCTOR",
                    format_name(
                        gp.first, gp.last, rng.choice(("First LAST", "LAST First", "FIRST LAST", "First Last"))
                    ),
                ),
            ]
        )
        doc.markup("<br>\n")
        if gp.practice is not None:
            ctx.emit(ctx.address_fragments(gp.practice, inline=False))
    doc.markup("</p>\n" if ctx.family == 0 else "</div>\n")


# -- closing --------------------------------------------------------------------------------------------


def signature(ctx: NoteContext) -> None:
    """Signature, role line, and dictation initials (``YK/CL``: DOCTOR spans)."""
    from deid_ds.synth.formats import dictation_initials

    rng, doc, a = ctx.rng, ctx.doc, ctx.author
    role = {
        "chef de service": "Chef de service",
        "praticien": "Praticien hospitalier",
        "interne": "Interne",
        "médecin traitant": "Médecin généraliste",
        "secrétaire": "Secrétariat médical",
    }.get(a.role, a.role.capitalize())
    secretary = next(iter(ctx.department.of_role("secrétaire")), None)
    if ctx.family == 0:
        doc.markup('<p align="right">')
        ctx.emit(ctx.pro_name(a, style=rng.choice(("First LAST", "F. LAST", "LAST First"))))
        doc.markup("<br>\n")
        doc.text(role)
        doc.markup("</p>\n")
        if secretary is not None and a.role != "secrétaire" and rng.random() < 0.6:
            doc.markup('<p><font size="1">')
            ctx.emit(
                [
                    Ent("DOCTOR", dictation_initials(a.first, a.last)),
                    "/",
                    Ent("DOCTOR", dictation_initials(secretary.first, secretary.last)),
                ]
            )
            doc.markup("</font></p>\n")
    else:
        doc.markup("<p>")
        doc.text(rng.choice(("Bien confraternellement,", "Avec mes sentiments les meilleurs,", "Cordialement,")))
        doc.markup("</p>\n<p><i>")
        ctx.emit(ctx.pro_name(a, title=rng.random() < 0.5, style=rng.choice(("First Last", "First LAST"))))
        doc.markup("</i> &mdash; ")
        doc.text(role.lower())
        doc.markup("</p>\n")
        if secretary is not None and a.role != "secrétaire" and rng.random() < 0.6:
            doc.markup('<p class="pied">')
            ctx.emit(
                [
                    "Dicté par ",
                    *ctx.pro_name(a, title=False, style="F. Last"),
                    " le ",
                    *ctx.expand("{date:visit}"),
                    ", frappé par ",
                    *ctx.pro_name(secretary, title=False, style=rng.choice(("First", "First Last"))),
                ]
            )
            doc.markup("</p>\n")


def copies(ctx: NoteContext) -> None:
    """Who else receives the letter: the GP, a specialist, the patient."""
    rng, doc, p = ctx.rng, ctx.doc, ctx.patient
    recipients = [p.gp] + ctx.extras.get("specialist", [])
    if ctx.family == 0:
        doc.markup("<p><u>")
        doc.text(rng.choice(("Copie à", "Copies à", "Copie adressée à")) + " :")
        doc.markup("</u><br>\n")
        for pro in recipients:
            ctx.emit(["- ", *ctx.pro_name(pro)])
            if pro.practice is not None and rng.random() < 0.6:
                ctx.emit([" - ", *ctx.address_fragments(pro.practice, inline=True)])
            doc.markup("<br>\n")
        doc.text("- Patient" + ("e" if p.sex == "F" else ""))
        doc.markup("</p>\n")
    else:
        doc.markup('<p class="copies">')
        doc.text("Double adressé à : ")
        for index, pro in enumerate(recipients):
            if index:
                doc.text(" ; ")
            ctx.emit(ctx.pro_name(pro, style=rng.choice(("First Last", "F. Last", "LAST"))))
            if pro.practice is not None and rng.random() < 0.5:
                ctx.emit([" (", Ent("VILLE", pro.practice.commune.name), ")"])
        doc.markup("</p>\n")


def footer(ctx: NoteContext) -> None:
    """The running footer word processors print on every page: the patient's name again."""
    rng, doc = ctx.rng, ctx.doc
    if ctx.family == 0:
        doc.markup('<p class="footer"><font size="1">')
        ctx.say(
            rng.choice(("{pat:bare} — né{e} le {date:birth} — Page 1/1", "{pat:bare} ({date:birth}) — Page 1 sur 1"))
        )
        doc.markup("</font></p>\n")
    else:
        doc.markup('<div class="pied">')
        ctx.say(
            rng.choice(
                ("Document concernant {pat:nociv}, édité le {date:visit}", "Édition du {date:visit} — {pat:init}")
            )
        )
        doc.markup("</div>\n")
