"""Export style ``fixed_width``: a mainframe or report-generator listing in ``<pre>``.

Older hospital information systems print their documents as fixed-width text: columns padded with spaces,
everything in capitals and without accents, dates as ``12/03/2020`` or ``20200312``, separator lines of
``=`` or ``-``, and fields cut at their column's width (a long street name loses its end). Names are
split over a ``NOM`` column and a ``PRENOM`` column: there they are TWO gold spans (guidelines), as are
the professionals of a staff table. Record and registry numbers (IPP, NIR, RPPS, FINESS, UF codes) sit in
columns of their own and are not entities.

The development phrasing (variant 0) is an 80-column listing with ``-`` separators and ``JJ/MM/AAAA`` dates;
the held-out one (variant 1) a 96-column one with ``=`` separators, ``|`` between columns, ``AAAAMMJJ`` dates
and other column titles.
"""

from __future__ import annotations

import re

from deid_ds.synth.exports.context import ExportContext, style
from deid_ds.synth.exports.pieces import (
    TITLES,
    content,
    digits,
    expand,
    export_date,
    ipp,
    luhn_number,
    nir,
    plain_entity,
    time_of_day,
)
from deid_ds.synth.formats import Ent, Fragment, Markup
from deid_ds.synth.pools import strip_accents
from deid_ds.synth.world import Address

_WORD = re.compile(r"\s+|\S+")


def _up(text: str) -> str:
    return strip_accents(text).upper()


class _Listing:
    """Writes the ``<pre>`` line by line; entities go through :func:`plain_entity` (a wrap would read as
    a newline inside ``<pre>``)."""

    def __init__(self, ctx: ExportContext) -> None:
        self.ctx, self.doc = ctx, ctx.doc
        self.width = (80, 96)[ctx.variant]
        self.col = 0

    def text(self, text: str) -> None:
        self.doc.text(text)
        self.col = 0 if text.endswith("\n") else self.col + len(text)

    def ent(self, label: str, value: str) -> None:
        value = _up(value).strip()
        if value:
            plain_entity(self.doc, label, value)
            self.col += len(value)

    def cell(self, label: str | None, value: str, width: int) -> None:
        """A column: the value cut at the column's width (truncated fields), padded with spaces."""
        value = _up(value)[: width - 1].rstrip(" ,-")
        if label and value:
            self.ent(label, value)
        else:
            self.text(value)
        self.text(" " * (width - len(value)))

    def newline(self) -> None:
        self.doc.text("\n")
        self.col = 0

    def rule(self) -> None:
        self.text(("-", "=")[self.ctx.variant] * self.width + "\n")

    def fragments(self, fragments: list[Fragment], indent: int = 0) -> None:
        """Running text in capitals, wrapped at the listing's width; an entity never straddles two lines."""
        space = False  # a space between words is written once the next word is known to fit on the line
        for frag in fragments:
            if isinstance(frag, Markup):
                if frag.html.startswith("<br"):
                    self.newline()
                    self.text(" " * indent)
                    space = False
                continue
            atoms: list[str | Ent] = _WORD.findall(frag) if isinstance(frag, str) else [frag]
            for atom in atoms:
                if isinstance(atom, str) and not atom.strip():
                    space = self.col > indent
                    continue
                size = len(atom.value) if isinstance(atom, Ent) else len(atom)
                if self.col + space + size > self.width and self.col > indent:
                    self.newline()
                    self.text(" " * indent)
                elif space:
                    self.text(" ")
                space = False
                if isinstance(atom, Ent):
                    self.ent(atom.label, atom.value)
                else:
                    self.text(_up(atom))

    def line(self, fragments: list[Fragment], indent: int = 0) -> None:
        self.fragments(fragments, indent)
        self.newline()


def _address_columns(out: _Listing, ctx: ExportContext, address: Address, label: str) -> None:
    """The address field: its lines under one another, each cut at the field's width."""
    pad = len(label)
    out.text(label)
    out.fragments(ctx.address_fragments(address, inline=False, caps=True), indent=pad)
    out.newline()


@style("fixed_width")
def write(ctx: ExportContext) -> None:
    rng, v, p, doc = ctx.rng, ctx.variant, ctx.patient, ctx.doc
    out = _Listing(ctx)
    date_style = ("dmy", "ymd")[v]
    bar = ("", "| ")[v]
    doc.markup(
        "<html>\n<body>\n<pre>\n"
        if v == 0
        else '<html><head><meta charset="utf-8"></head><body><pre style="font-family:Courier">\n'
    )
    out.rule()
    hosp = [_up(t) if not label else Ent(label, _up(t)) for t, label in ctx.hospital.name_parts]
    out.fragments(hosp)
    out.text(" " * max(2, 40 - out.col) + _up(ctx.department.name)[:24] + "  " + ("EDITION ", "EDITE LE ")[v])
    out.ent("DATE", export_date(ctx.when, date_style))
    out.text(" " + time_of_day(rng) + "\n")
    out.text(("FINESS ", "N.FINESS: ")[v] + ctx.hospital.finess + "   UF " + digits(rng, 4) + "   ")
    out.line(expand(ctx, ("TEL {tel:service} MEL {mail:service}", "STANDARD {tel:hosp} {poste}")[v]))
    out.rule()
    out.text(_up(ctx.pick(*TITLES[ctx.doc_type])) + "\n")
    out.rule()
    # the identity row: a NOM column and a PRENOM column, two spans
    widths = ((10, 22, 16, 12, 6), (12, 26, 18, 12, 6))[v]
    heads = (("IPP", "NOM", "PRENOM", "DDN", "SEXE"), ("N.DOSSIER", "NOM PATIENT", "PRENOM", "NE(E) LE", "SX"))[v]
    for head, width in zip(heads, widths, strict=True):
        out.cell(None, bar + head, width)
    out.newline()
    out.cell(None, bar + ipp(ctx), widths[0])
    out.text(bar)
    out.cell("PATIENT", p.usual_last, widths[1] - len(bar))
    out.text(bar)
    out.cell("PATIENT", p.usual_first, widths[2] - len(bar))
    out.text(bar)
    out.cell("DATE", export_date(p.birthdate, date_style), widths[3] - len(bar))
    out.cell(None, bar + p.sex, widths[4])
    out.newline()
    if p.married_name:
        out.text(("NOM NAISS.: ", "NOM DE NAISSANCE : ")[v])
        out.ent("PATIENT", p.birth_name)
        out.newline()
    out.text(("NIR       : ", "N.SS      : ")[v] + nir(ctx) + "\n")
    _address_columns(out, ctx, ctx.address, ("ADRESSE   : ", "DOMICILE  : ")[v])
    out.text(("TEL       : ", "TEL/PORT  : ")[v])
    out.line(expand(ctx, ("{tel:mobile}", "{tel:patient} / {tel:mobile}")[v]), indent=12)
    gp = p.gp
    out.text(("MED.TRAIT.: DR ", "MEDECIN TRAITANT : ")[v])
    out.ent("DOCTOR", f"{gp.last} {gp.first[0]}." if v == 0 else f"{gp.first} {gp.last}")
    if gp.practice is not None and rng.random() < 0.6:
        out.text(" - ")
        out.fragments(ctx.address_fragments(gp.practice, inline=True, caps=True), indent=12)
    out.newline()
    out.rule()
    for heading, lines in content(ctx, ctx.doc_type).sections:
        if heading:
            out.text(_up(heading) + ("", " :")[v] + "\n")
        for fragments in lines:
            out.text("  ")
            out.line(fragments, indent=2)
    out.rule()
    # the staff table: NOM and PRENOM columns, two spans per professional
    staff = rng.sample(ctx.department.staff, min(len(ctx.department.staff), rng.randrange(2, 5)))
    if ctx.author not in staff:
        staff.insert(0, ctx.author)
    heads = (("FONCTION", "NOM", "PRENOM", "RPPS"), ("QUALITE", "NOM INTERVENANT", "PRENOM", "ID.PS"))[v]
    widths = (18, 22, 16, 14)
    for head, width in zip(heads, widths, strict=True):
        out.cell(None, bar + head, width)
    out.newline()
    for pro in staff:
        out.cell(None, bar + (pro.role or pro.profession), widths[0])
        out.text(bar)
        out.cell("DOCTOR", pro.last, widths[1] - len(bar))
        out.text(bar)
        out.cell("DOCTOR", pro.first, widths[2] - len(bar))
        out.cell(None, bar + luhn_number(rng, "10", 11), widths[3])
        out.newline()
    out.rule()
    out.text(("VALIDE LE ", "SIGNATURE ELECTRONIQUE ")[v])
    out.ent("DATE", export_date(ctx.when, date_style))
    out.text((" PAR ", " - ")[v])
    out.ent(
        "DOCTOR", f"{ctx.author.last} {ctx.author.first[0]}." if v == 0 else f"{ctx.author.first} {ctx.author.last}"
    )
    out.newline()
    out.text(("*** FIN DU DOCUMENT ***", "=== FIN ===")[v] + "\n")
    doc.markup("</pre>\n</body>\n</html>\n")
