"""Export style ``pdf``: a PDF converted to HTML one absolutely positioned line at a time.

Converters (pdf2htmlEX, pdftohtml) know nothing of words or paragraphs: they write each line of the page as
its own positioned element. So a word cut at a line end stays cut (``hospitali-`` / ``sation``), a name or
an address that runs over the end of a line continues in the next element, and what the page repeats, the
running header with the patient's name and birth date and the footer with ``Page 2/3``, is repeated in the
text on every page. The development phrasing (variant 0) looks like pdf2htmlEX (``<div>`` lines in page
containers); the held-out one (variant 1) like ``pdftohtml -c`` (``<p>`` lines with font classes, label and
value as two elements on one line).

A name or address broken over two lines is ONE gold span running over the markup between the lines
(guidelines), and it reads with the line break the extracted text puts there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from deid_ds.synth.exports.context import ExportContext, style
from deid_ds.synth.exports.pieces import TITLES, content, expand, nir, pro_ref
from deid_ds.synth.formats import Ent, Fragment, Markup, civility
from deid_ds.synth.html_builder import GoldSpan


@dataclass(frozen=True, slots=True)
class _Open:
    """The head of an entity that continues on the next line."""

    label: str
    head: str


@dataclass(frozen=True, slots=True)
class _Close:
    """The rest of the entity opened at the end of the line before."""

    tail: str


Piece = Fragment | _Open | _Close


@dataclass(slots=True)
class _Line:
    """One printed line: its chunks (left position in px, pieces); two chunks when a label and its value are
    printed apart on the same line."""

    chunks: list[tuple[int, list[Piece]]]
    bold: bool = False
    keep_with_next: bool = False  # an entity continues on the next line: no page break between them


@dataclass(slots=True)
class _Page:
    lines: list[_Line] = field(default_factory=list)


_WORD = re.compile(r"\s+|\S+")


def _wrap(ctx: ExportContext, fragments: list[Fragment], width: int, left: int) -> list[_Line]:
    """Lay ``fragments`` out over lines of ``width`` characters, as the PDF printed them: a long word is
    hyphenated at the line end, a name or an address that does not fit is carried over to the next line."""
    rng = ctx.rng
    lines: list[_Line] = []
    current: list[Piece] = []
    used = 0

    def flush() -> None:
        nonlocal current, used
        while current and isinstance(current[-1], str) and not current[-1].strip():
            current.pop()
        if current:
            lines.append(_Line([(left, current)], keep_with_next=isinstance(current[-1], _Open)))
        current, used = [], 0

    for frag in fragments:
        if isinstance(frag, Markup):
            continue  # a PDF keeps no links
        atoms: list[Piece] = _WORD.findall(frag) if isinstance(frag, str) else [frag]
        for atom in atoms:
            if isinstance(atom, str) and not atom.strip():
                if current:
                    current.append(" ")
                    used += 1
                continue
            size = len(atom.value) if isinstance(atom, Ent) else len(atom)
            if used + size <= width or (not current and size > width and not isinstance(atom, Ent)):
                current.append(atom)
                used += size
                continue
            room = width - used
            if isinstance(atom, Ent) and " " in atom.value and rng.random() < 0.8:
                cuts = [i for i, c in enumerate(atom.value) if c == " " and 0 < i <= room]
                if cuts:
                    cut = cuts[-1]
                    current.append(_Open(atom.label, atom.value[:cut]))
                    flush()
                    current, used = [_Close(atom.value[cut + 1 :])], len(atom.value) - cut - 1
                    continue
            if isinstance(atom, str) and atom.isalpha() and len(atom) >= 9 and room >= 5 and rng.random() < 0.6:
                cut = rng.randrange(4, min(room, len(atom) - 3))
                current.append(atom[:cut] + "-")  # "hospitali-" / "sation"
                flush()
                current, used = [atom[cut:]], len(atom) - cut
                continue
            flush()
            current, used = [atom], size
    flush()
    return lines


_LABELLED = re.compile(r"[^:.]{1,40} : ")


def _paragraphs(lines: list[list[Fragment]]) -> list[list[Fragment]]:
    """A section's sentences flow as one paragraph, as a word processor printed them; labelled lines
    (``Opérateur : ...``, a drug and its dosage, a result) keep a line each."""
    out: list[list[Fragment]] = []
    flowing = False
    for line in lines:
        labelled = isinstance(line[0], str) and _LABELLED.match(line[0]) is not None
        if flowing and not labelled:
            out[-1] = out[-1] + [" "] + line
        else:
            out.append(list(line))
        flowing = not labelled
    return out


def _field(label: str, value: list[Fragment], *, apart: bool, left: int, gap: int) -> _Line:
    """``Né(e) le : 12/03/1957``: on one chunk, or (pdftohtml) the label and the value as two elements."""
    if apart:
        return _Line([(left, [label]), (left + gap, value)])
    return _Line([(left, [label + " ", *value])])


@style("pdf")
def write(ctx: ExportContext) -> None:
    rng, v, p = ctx.rng, ctx.variant, ctx.patient
    width = rng.choice(((74, 82, 90), (64, 70, 76))[v])
    body = _Page()  # all the lines, paginated at the end

    def add(fragments: list[Fragment], *, left: int = 72, w: int = width, bold: bool = False) -> None:
        new = _wrap(ctx, fragments, w, left)
        if bold:
            for line in new:
                line.bold = True
        body.lines.extend(new)

    # letterhead: the hospital on the left, the recipient block in a narrow column on the right
    add(expand(ctx, "{hosp}"), bold=True)
    add(expand(ctx, "{svc} - {site}"))
    add(ctx.address_fragments(ctx.hospital.address, inline=True))
    add(expand(ctx, ctx.pick(("Secrétariat : {tel:service} - Fax : {tel:fax}",), ("Tél. {tel:hosp} {poste}",))))
    add(
        expand(
            ctx,
            ctx.pick(
                ("FINESS {ipp:finess} - {mail:service}",), ("Courriel : {mail:service} (N° FINESS {ipp:finess})",)
            ),
        )
    )
    if ctx.doc_type in ("discharge_letter", "referral_letter", "consultation", "patient_letter", "convocation"):
        to_patient = ctx.doc_type in ("patient_letter", "convocation")
        who = (
            [civility(p.sex, ("long", "short")[v]) + " ", *expand(ctx, "{pat:bare}")]
            if to_patient
            else pro_ref(ctx, p.gp)
        )
        narrow = rng.randrange(22, 30)  # a narrow window: addresses and names often run over two lines
        add(who, left=430, w=narrow)
        address = ctx.address if to_patient else p.gp.practice
        if address is not None:
            add(ctx.address_fragments(address, inline=True), left=430, w=narrow)
        add(expand(ctx, ctx.pick(("{city:hosp}, le {d:visit}",), ("Fait à {city:hosp} le {d:visit}",))), left=430)
    add([ctx.pick(*TITLES[ctx.doc_type]).upper()], left=200, bold=True)

    # identity block
    apart = v == 1
    add_lines = body.lines.append
    add_lines(
        _field(ctx.pick(("Patient :",), ("Nom - Prénom",)), expand(ctx, "{pat:full}"), apart=apart, left=72, gap=140)
    )
    add_lines(
        _field(
            ctx.pick(("Né(e) le :",), ("Date de naissance",)), expand(ctx, "{d:birth}"), apart=apart, left=72, gap=140
        )
    )
    add_lines(_field("IPP :" if v == 0 else "N° patient", expand(ctx, "{ipp}"), apart=apart, left=72, gap=140))
    if rng.random() < 0.5:
        add_lines(_field("INS :" if v == 0 else "NIR", [nir(ctx)], apart=apart, left=72, gap=140))
    add([ctx.pick(("Adresse : ",), ("Domicile : ",)), *ctx.address_fragments(ctx.address, inline=True)])
    add(expand(ctx, ctx.pick(("Tél. : {tel:mobile}",), ("Téléphone portable : {tel:mobile} / {tel:patient}",))))
    add(expand(ctx, ctx.pick(("Médecin traitant : {pro:gp}",), ("Médecin référent : {pro:gp}, {addr:gp}",))))

    for heading, lines in content(ctx, ctx.doc_type).sections:
        if heading:
            add([heading.upper() if v == 0 else heading + " :"], bold=True)
        for paragraph in _paragraphs(lines):
            add(paragraph, left=72 if v == 0 else 90)

    # signature and recipients
    add(expand(ctx, ctx.pick(("Dr {docn:author}",), ("Signé électroniquement par {pro:author} le {dt:visit}",))))
    add(expand(ctx, ctx.pick(("{svc}",), ("{svc} - RPPS {ipp:rpps}",))))
    if rng.random() < 0.7:
        copies: list[Fragment] = [ctx.pick(("Copie à : ",), ("Destinataires : ",)), *pro_ref(ctx, p.gp)]
        if p.gp.practice is not None:
            copies += [", ", *ctx.address_fragments(p.gp.practice, inline=True)]
        for pro in ctx.extras.get("specialist", []):
            copies += [" ; ", *pro_ref(ctx, pro, role=True)]
        add(copies)

    _render(ctx, _paginate(ctx, body.lines))


def _paginate(ctx: ExportContext, lines: list[_Line]) -> list[_Page]:
    per_page = ctx.rng.randrange(*((26, 40), (22, 34))[ctx.variant])
    pages, page = [], _Page()
    for index, line in enumerate(lines):
        page.lines.append(line)
        if len(page.lines) >= per_page and not line.keep_with_next and index + 1 < len(lines):
            pages.append(page)
            page = _Page()
    pages.append(page)
    return pages


def _render(ctx: ExportContext, pages: list[_Page]) -> None:
    rng, doc, v = ctx.rng, ctx.doc, ctx.variant
    # the running header and footer, the same fragments (same text) on every page
    header = expand(
        ctx,
        ctx.pick(
            ("{pat:bare} - Né(e) le {d:birth} - IPP {ipp}",),
            ("Patient : {pat:bare} ({d:birth})",),
        ),
    )
    printed = expand(ctx, ctx.pick(("Imprimé le {dt:visit}",), ("Document édité le {d:visit} par {pro:secretary}",)))
    doc.markup('<!DOCTYPE html>\n<html>\n<head>\n<meta charset="utf-8"/>\n')
    doc.markup(
        '<title>pdf2htmlEX</title>\n<style type="text/css">.pf{position:relative}.t{position:absolute;'
        "white-space:pre}</style>\n"
        if v == 0
        else '<title></title>\n<style type="text/css">p {margin: 0; padding: 0;} .ft10{font-size:13px;'
        "font-family:Times;}</style>\n"
    )
    doc.markup('</head>\n<body>\n<div id="page-container">\n' if v == 0 else '</head>\n<body bgcolor="#A0A0A0">\n')
    sep = "\n" if v == 0 else "\n\n"
    total = len(pages)
    for number, page in enumerate(pages, 1):
        doc.markup(
            f'<div id="pf{number:x}" class="pf w0 h0" data-page-no="{number:x}">\n'
            if v == 0
            else f'<div id="page{number}-div" style="position:relative;width:892px;height:1262px;">\n'
        )
        top = 40
        running = [_Line([(72, list(header)), (560, [f"Page {number}/{total}" if v == 0 else f"{number}/{total}"])])]
        footer = [
            _Line([(72, list(printed)), (620, [f"Page {number} sur {total}" if v == 1 else f"{number}/{total}"])])
        ]
        pending: tuple[str, int, str] | None = None  # an entity opened at the end of the line before
        for line in running + page.lines + footer:
            top += rng.choice((15, 16, 18)) if line.chunks[0][0] != 430 else 14
            for left, pieces in line.chunks:
                doc.markup(
                    f'<div class="t m0 x{left // 8} y{top:x}" style="position:absolute;top:{top}px;left:{left}px">'
                    if v == 0
                    else f'<p style="position:absolute;top:{top}px;left:{left}px;white-space:nowrap" '
                    f'class="{"ft11" if line.bold else "ft10"}">'
                )
                if line.bold and v == 0:
                    doc.markup("<b>")
                for piece in pieces:
                    if isinstance(piece, _Open):
                        pending = (piece.label, doc.length, piece.head)
                        doc.text(piece.head)
                    elif isinstance(piece, _Close) and pending is not None:
                        doc.text(piece.tail)
                        label, start, head = pending
                        doc.spans.append(GoldSpan(label, start, doc.length, head + sep + piece.tail))
                        pending = None
                    else:
                        ctx.emit([piece])  # type: ignore[list-item]
                doc.markup(("</b>" if line.bold and v == 0 else "") + ("</div>\n" if v == 0 else "</p>\n"))
        doc.markup("</div>\n")
    doc.markup("</div>\n</body>\n</html>\n" if v == 0 else "</body>\n</html>\n")
