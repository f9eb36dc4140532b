"""Export style ``cda``: a CDA R2 document rendered to HTML by the usual style sheet.

Document sharing platforms (DMP, regional hubs) store structured documents; the warehouse gets them through
an XSL rendering: a header table (patient, birth date, administrative identifiers with their OIDs, author,
custodian, legal authenticator, recipients, the document's LOINC code), then the sections, whose text holds
tables with ``<th>`` headers. Names come from ``<given>`` and ``<family>`` elements, so the rendering writes
``<span class="given">Jean</span> <span class="family">DUPONT</span>``: one name, ONE gold span over both
elements (guidelines), the prefix (``Dr``) staying outside. Identifiers of the record (INS-NIR, IPP, OIDs,
RPPS, FINESS) and coded values (``LOINC 11490-0``) are no entities.

The development phrasing (variant 0) follows the HL7 ``cda.xsl`` (given before family, ``Né(e) le``); the
held-out one (variant 1) the French ANS style sheet (family before given, other labels and layout).
"""

from __future__ import annotations

from deid_ds.synth.exports.context import ExportContext, style
from deid_ds.synth.exports.pieces import (
    LOINC,
    ROLE_LABELS,
    TITLES,
    Gap,
    content,
    digits,
    entity_across,
    expand,
    export_date,
    ipp,
    nir,
    time_of_day,
)
from deid_ds.synth.formats import Ent, Fragment
from deid_ds.synth.world import Address, Professional

_LABELS = {
    "patient": ("Patient", "Patient(e)"),
    "birth": ("Né(e) le", "Date de naissance"),
    "sex": ("Sexe", "Sexe administratif"),
    "ids": ("Identifiants", "Identifiants du patient"),
    "contact": ("Coordonnées", "Adresse et télécom"),
    "doc": ("Document", "Type de document"),
    "created": ("Créé le", "Date de création"),
    "author": ("Auteur", "Auteur du document"),
    "custodian": ("Custodian", "Organisation responsable"),
    "signed": ("Document signé par", "Authentificateur légal"),
    "recipients": ("Destinataires", "Destinataire(s)"),
    "encounter": ("Prise en charge", "Épisode de soins"),
    "informant": ("Personne à prévenir", "Personne de confiance"),
}
_OID_IPP = "1.2.250.1.71.4.2.7"
_OID_INS = "1.2.250.1.213.1.4.8"


def _name(ctx: ExportContext, label: str, first: str, last: str, prefix: str = "") -> None:
    """``<span class="given">Jean</span> <span class="family">DUPONT</span>``: one span over both elements."""
    doc, v = ctx.doc, ctx.variant
    family = last.upper() if ctx.rng.random() < 0.7 else last
    if prefix:
        doc.markup('<span class="prefix">')
        doc.text(prefix)
        doc.markup("</span> ")
    if label == "DOCTOR" and ctx.rng.random() < 0.1:  # a professional by the family name alone
        doc.markup('<span class="family">')
        entity_across(doc, label, [family])
        doc.markup("</span>")
        return
    if v == 0:
        doc.markup('<span class="given">')
        entity_across(doc, label, [first, Gap('</span> <span class="family">', " "), family])
    else:
        doc.markup('<span class="family">')
        entity_across(doc, label, [family, Gap('</span> <span class="given">', " "), first])
    doc.markup("</span>")


def _pro(ctx: ExportContext, pro: Professional) -> None:
    prefix = pro.title if pro.title else ""
    if prefix and ctx.variant == 1 and ctx.rng.random() < 0.5:
        prefix = {"Dr": "Docteur", "Pr": "Professeur"}[prefix]
    _name(ctx, "DOCTOR", pro.first, pro.last, prefix)


def _address(ctx: ExportContext, address: Address) -> None:
    ctx.emit(ctx.address_fragments(address, inline=False))


def _row(ctx: ExportContext, key: str) -> None:
    doc = ctx.doc
    if ctx.variant == 0:
        doc.markup('<tr>\n<td class="td_header_role_name"><span class="td_label">')
        doc.text(_LABELS[key][0])
        doc.markup('</span></td>\n<td class="td_header_role_value">')
    else:
        doc.markup('<tr><th class="entete">')
        doc.text(_LABELS[key][1])
        doc.markup("</th><td>")


def _end_row(ctx: ExportContext) -> None:
    ctx.doc.markup("</td>\n</tr>\n" if ctx.variant == 0 else "</td></tr>\n")


def _say(ctx: ExportContext, template: str) -> None:
    ctx.emit(expand(ctx, template))


def _header(ctx: ExportContext) -> None:
    rng, doc, v, p = ctx.rng, ctx.doc, ctx.variant, ctx.patient
    doc.markup('<table class="header_table">\n<tbody>\n' if v == 0 else '<table class="tableEntete" width="100%">\n')
    _row(ctx, "patient")
    _name(ctx, "PATIENT", p.usual_first, p.usual_last)
    if p.married_name:
        doc.text(ctx.pick((" née ",), (" - nom de naissance : ",)))
        doc.markup('<span class="family">')
        entity_across(doc, "PATIENT", [p.birth_name.upper()])
        doc.markup("</span>")
    _end_row(ctx)
    _row(ctx, "birth")
    ctx.emit([Ent("DATE", export_date(p.birthdate, ctx.pick(("long", "dmy"), ("dmy", "iso"))))])
    _end_row(ctx)
    _row(ctx, "sex")
    doc.text({"F": "Féminin", "M": "Masculin"}[p.sex])
    _end_row(ctx)
    _row(ctx, "ids")
    doc.text(f"{nir(ctx).replace(' ', '')} (INS-NIR, {_OID_INS})")
    doc.markup("<br/>")
    doc.text(f"{ipp(ctx)} (IPP, {_OID_IPP}.{digits(rng, 4)})")
    _end_row(ctx)
    _row(ctx, "contact")
    _address(ctx, ctx.address)
    doc.markup("<br/>")
    _say(ctx, ctx.pick(("Tél : {tel:mobile}",), ("tel: {tel:patient}",)))
    if p.email and rng.random() < 0.5:
        doc.markup("<br/>")
        _say(ctx, ctx.pick(("mailto:{mail:patient}",), ("Mél : {mail:patient}",)))
    _end_row(ctx)
    code, name = LOINC[ctx.doc_type]
    _row(ctx, "doc")
    doc.text(ctx.pick((f"LOINC {code} - {name}",), (f"{name} (LOINC : {code})",)))
    doc.markup("<br/>")
    doc.text(f"Identifiant : 1.2.250.1.213.1.1.9.{digits(rng, 10)}")
    _end_row(ctx)
    _row(ctx, "created")
    _say(ctx, "{dt:visit}")
    _end_row(ctx)
    _row(ctx, "author")
    _pro(ctx, ctx.author)
    doc.text(f", {ROLE_LABELS.get(ctx.author.role, ctx.author.role)} - {ctx.department.name}")
    _end_row(ctx)
    _row(ctx, "custodian")
    _say(ctx, "{hosp}")
    doc.text(f" (FINESS {ctx.hospital.finess})")
    doc.markup("<br/>")
    _address(ctx, ctx.hospital.address)
    doc.markup("<br/>")
    _say(ctx, ctx.pick(("Tél : {tel:hosp} {poste}",), ("tel: {tel:service}",)))
    _end_row(ctx)
    _row(ctx, "encounter")
    _say(ctx, ctx.pick(("Du {d:admission} au {d:discharge}, {svc}",), ("{svc}, séjour du {d:admission}",)))
    _end_row(ctx)
    if p.relatives or rng.random() < 0.4:
        r = ctx.relative()
        _row(ctx, "informant")
        _name(ctx, "PATIENT", r.first, r.last)
        doc.text(f" ({r.relation})")
        if r.phone:
            doc.text(" - ")
            ctx.emit([ctx.phone_ent(r.phone)])
        _end_row(ctx)
    doc.markup("</tbody>\n</table>\n" if v == 0 else "</table>\n")


def _recipients(ctx: ExportContext) -> None:
    doc, v = ctx.doc, ctx.variant
    gp = ctx.patient.gp
    doc.markup('<table class="header_table">\n<tbody>\n' if v == 0 else '<table class="tableEntete" width="100%">\n')
    _row(ctx, "signed")
    signer = next((p for p in ctx.department.staff if p.role == "chef de service" and p is not ctx.author), ctx.author)
    _pro(ctx, signer)
    doc.text(ctx.pick((", le ",), (" - signé le ",)))
    _say(ctx, "{d:visit}")
    _end_row(ctx)
    _row(ctx, "recipients")
    for index, pro in enumerate([gp, *ctx.extras.get("specialist", [])]):
        if index:
            doc.markup("<br/>\n")
        _pro(ctx, pro)
        doc.text(" (médecin traitant)" if pro is gp else f" ({pro.specialty})")
        if pro.practice is not None and ctx.rng.random() < 0.7:
            doc.markup("<br/>")
            _address(ctx, pro.practice)
    _end_row(ctx)
    doc.markup("</tbody>\n</table>\n" if v == 0 else "</table>\n")


def _section_table(ctx: ExportContext, heads: tuple[str, ...], rows: list[list[list[Fragment]]]) -> None:
    doc = ctx.doc
    doc.markup('<table border="1" width="100%">\n<thead>\n<tr>')
    for head in heads:
        doc.markup("<th>")
        doc.text(head)
        doc.markup("</th>")
    doc.markup("</tr>\n</thead>\n<tbody>\n")
    for row in rows:
        doc.markup("<tr>")
        for cell in row:
            doc.markup("<td>")
            ctx.emit(cell)
            doc.markup("</td>")
        doc.markup("</tr>\n")
    doc.markup("</tbody>\n</table>\n")


def _team_table(ctx: ExportContext) -> None:
    """The professionals who took part: a table whose name cells hold given/family spans."""
    doc, rng = ctx.doc, ctx.rng
    staff = rng.sample(ctx.department.staff, min(len(ctx.department.staff), rng.randrange(2, 5)))
    doc.markup('<table border="1" width="100%">\n<thead>\n<tr>')
    for head in (("Rôle", "Nom", "Contact"), ("Fonction", "Intervenant", "Téléphone"))[ctx.variant]:
        doc.markup("<th>")
        doc.text(head)
        doc.markup("</th>")
    doc.markup("</tr>\n</thead>\n<tbody>\n")
    for pro in staff:
        doc.markup("<tr><td>")
        doc.text(pro.role if ctx.variant == 0 else ROLE_LABELS.get(pro.role, pro.role).capitalize())
        doc.markup("</td><td>")
        _pro(ctx, pro)
        doc.markup("</td><td>")
        _say(ctx, "{poste}" if rng.random() < 0.6 else "{tel:service}")
        doc.markup("</td></tr>\n")
    doc.markup("</tbody>\n</table>\n")


@style("cda")
def write(ctx: ExportContext) -> None:
    doc, v, rng = ctx.doc, ctx.variant, ctx.rng
    title = ctx.pick(*TITLES[ctx.doc_type])
    doc.markup('<!DOCTYPE html>\n<html>\n<head>\n<meta http-equiv="Content-Type" content="text/html; charset=UTF-8">\n')
    doc.markup("<title>")
    doc.text(title)
    doc.markup("</title>\n<style>.td_label{font-weight:bold}.section_title{color:#003366}</style>\n</head>\n<body>\n")
    doc.markup('<h1 class="title">' if v == 0 else '<div class="titre"><h1>')
    doc.text(title)
    doc.markup("</h1>\n" if v == 0 else "</h1></div>\n")
    _header(ctx)
    for number, (heading, lines) in enumerate(content(ctx, ctx.doc_type).sections):
        doc.markup(
            f'<h2 class="section_title"><a name="section{number}"></a>'
            if v == 0
            else f'<div class="section" id="S{number}"><h3>'
        )
        doc.text(heading or ctx.pick(("Commentaire",), ("Note",)))
        doc.markup('</h2>\n<div class="section_text">\n' if v == 0 else "</h3>\n")
        drug_like = [line for line in lines if len(line) == 1 and isinstance(line[0], str) and " : " in line[0]]
        if len(drug_like) >= 2 and len(drug_like) == len(lines):
            heads = (("Élément", "Valeur"), ("Libellé", "Détail"))[v]
            rows = [[[part] for part in line[0].rstrip(".").split(" : ", 1)] for line in drug_like]
            _section_table(ctx, heads, rows)  # type: ignore[arg-type]
        else:
            for line in lines:
                doc.markup("<p>" if v == 0 else '<p class="texte">')
                ctx.emit(line)
                doc.markup("</p>\n")
        doc.markup("</div>\n")
    doc.markup('<h2 class="section_title">' if v == 0 else '<div class="section"><h3>')
    doc.text(ctx.pick(("Professionnels intervenants",), ("Équipe de soins",)))
    doc.markup("</h2>\n" if v == 0 else "</h3>\n")
    _team_table(ctx)
    if v == 1:
        doc.markup("</div>\n")
    _recipients(ctx)
    doc.markup('<p class="footer">' if v == 0 else '<div class="pied">')
    doc.text(ctx.pick(("Document généré le ",), ("Rendu le ",)))
    ctx.emit([Ent("DATE", export_date(ctx.when, "dmy")), " " + time_of_day(rng)])
    doc.markup("</p>\n</body>\n</html>\n" if v == 0 else "</div>\n</body>\n</html>\n")
