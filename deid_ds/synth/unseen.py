"""Phrasing family 2 (``--phrasing unseen``): a third hospital software's house style.

Families 0 and 1 are the styles the rules and the models of this project were developed on. This family
is written apart from them, and without looking at the weak labeller's rules, from what French clinical
notes exported by a word processor look like: Word "save as HTML" pages (``<p class=MsoNormal>``
paragraphs, ``<o:p>`` elements, empty ``&nbsp;`` paragraphs), letterheads that name the staff by role on
one line (``Praticien responsable :``, ``Chef de clinique :``), names in ``NOM Prénom`` order or with the
initial after (``KERBRAT Y.``), typed in lower case in quick observations (``vu avec dr kerbrat``),
roles after the name (``Karine LE GALL (IDE)``), ``Rédigé par`` / ``Validé par`` / ``Document signé
électroniquement par`` signatures, ``Destinataires :`` lists, addresses after ``Résidant au`` or
``Adresse :`` with abbreviated street types (``Av.``, ``Bld``, ``Chem.``, ``LD``), dates such as
``le 3/2/21``, ``03 fév. 2021``, ``Mardi 03/02/21``, ``mardi 3 février``, phones after ``Tél portable``
or ``GSM`` (``+33 (0)6 …``), e-mails in ``mailto:`` links, relatives written ``sa fille Mme X``,
administrative identifiers (IPP, stay numbers, UF codes) that are not entities.

What is an entity and where it starts and ends follows ``docs/guidelines.md`` exactly, as for the other
families. The module is only reached for family-2 notes, with its own random generator, so the notes of
families 0 and 1 are byte for byte what they were before it existed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date

from deid_ds.synth import clinical
from deid_ds.synth.context import NoteContext
from deid_ds.synth.formats import (
    MONTHS,
    WEEKDAYS,
    Ent,
    Fragment,
    Markup,
    city_form,
    civility,
    initials,
    place_lines,
)
from deid_ds.synth.world import Address, Professional

# -- formats of this house style --------------------------------------------------------------------------

_MONTHS_SHORT = ("janv.", "fév.", "mars", "avr.", "mai", "juin", "juil.", "août", "sept.", "oct.", "nov.", "déc.")
_FULL_DATES = (
    "dmy",
    "dmy",
    "dmy",
    "dmy_yy",
    "d_m_yy",
    "d_m_y",
    "short_month",
    "short_month",
    "cap_month",
    "weekday_long",
    "Weekday_yy",
    "dot_nopad",
    "long",
)
_DAY_MONTH = ("weekday_dm", "weekday_dm", "dm_slash", "dm")
_MONTH_YEAR = ("my", "my_short", "My")


def format_date2(d: date, style: str) -> str:
    """``d`` in one of this family's styles (``3/2/21``, ``03 fév. 2021``, ``Mardi 03/02/21``...)."""
    month, weekday = MONTHS[d.month - 1], WEEKDAYS[d.weekday()]
    return {
        "dmy": f"{d.day:02d}/{d.month:02d}/{d.year}",
        "dmy_yy": f"{d.day:02d}/{d.month:02d}/{d.year % 100:02d}",
        "d_m_yy": f"{d.day}/{d.month}/{d.year % 100:02d}",
        "d_m_y": f"{d.day}/{d.month}/{d.year}",
        "short_month": f"{d.day:02d} {_MONTHS_SHORT[d.month - 1]} {d.year}",
        "cap_month": f"{d.day} {month.capitalize()} {d.year}",
        "weekday_long": f"{weekday} {d.day} {month} {d.year}",
        "Weekday_yy": f"{weekday.capitalize()} {d.day:02d}/{d.month:02d}/{d.year % 100:02d}",
        "dot_nopad": f"{d.day}.{d.month}.{d.year}",
        "long": f"{d.day} {month} {d.year}",
        "weekday_dm": f"{weekday} {d.day} {month}",
        "dm_slash": f"{d.day}/{d.month:02d}",
        "dm": f"{d.day} {month}",
        "my": f"{month} {d.year}",
        "my_short": f"{_MONTHS_SHORT[d.month - 1]} {d.year}",
        "My": f"{month.capitalize()} {d.year}",
    }[style]


_PHONES = ("spaced", "spaced", "dotted", "intl0", "intl0", "intl", "dashed", "compact", "intl0_dotted")


def format_phone2(digits: str, style: str) -> str:
    pairs = [digits[i : i + 2] for i in range(0, 10, 2)]
    return {
        "spaced": " ".join(pairs),
        "dotted": ".".join(pairs),
        "dashed": "-".join(pairs),
        "compact": digits,
        "intl": "+33 " + digits[1] + " " + " ".join(pairs[1:]),
        "intl0": "+33 (0)" + digits[1] + " " + " ".join(pairs[1:]),
        "intl0_dotted": "+33 (0)" + digits[1] + "." + ".".join(pairs[1:]),
    }[style]


#: Name styles: NOM Prénom first, as administrative software writes them.
_NAMES = ("LAST First", "LAST First", "LAST First", "LAST F.", "Last First", "F. LAST", "First LAST", "LAST")
_PRO_NAMES = ("LAST First", "LAST First", "LAST F.", "F. LAST", "First LAST", "LAST")


def format_name2(first: str, last: str, style: str) -> str:
    return {
        "LAST First": f"{last.upper()} {first}",
        "LAST F.": f"{last.upper()} {initials(first)}",
        "Last First": f"{last} {first}",
        "F. LAST": f"{initials(first)} {last.upper()}",
        "First LAST": f"{first} {last.upper()}",
        "LAST": last.upper(),
        "Last": last,
        "last": last.lower(),
        "first last": f"{first} {last}".lower(),
        "first": first.lower(),
        "First": first,
    }[style]


#: Street type words as this software abbreviates them (the type word is part of the STR span).
_STREET_FORMS = {
    "Rue": ("rue", "rue", "Rue", "R."),
    "Avenue": ("Av.", "Av", "avenue", "Avenue"),
    "Boulevard": ("Bld", "Bd.", "boulevard"),
    "Allée": ("All.", "allée", "Allée"),
    "Impasse": ("Imp.", "impasse"),
    "Place": ("Pl.", "place", "Place"),
    "Chemin": ("Chem.", "Ch.", "chemin"),
    "Route": ("Rte", "Rte.", "route"),
    "Quai": ("Qu.", "quai"),
    "Square": ("Sq.", "square"),
    "Venelle": ("Ven.", "venelle"),
    "Cours": ("Crs", "cours"),
    "Résidence": ("Rés.", "résidence"),
}

_POLES = {
    "medical": ("Pôle Médecine", "Pôle Cœur-Poumons", "Pôle Spécialités médicales"),
    "surgical": ("Pôle Chirurgie", "Pôle Blocs"),
    "emergency": ("Pôle Urgences - SAMU",),
    "imaging": ("Pôle Imagerie",),
    "pathology": ("Pôle Biologie-Pathologie",),
    "biology": ("Pôle Biologie-Pathologie",),
}


@dataclass(slots=True)
class UnseenContext(NoteContext):
    """A family-2 note: the same world and slots as :class:`NoteContext`, written in this house style."""

    # -- names --------------------------------------------------------------------------------------
    def _slot_pat(self, arg: str | None) -> list[Fragment]:
        if arg in ("first", "last"):  # written alike in every style
            return NoteContext._slot_pat(self, arg)
        p, rng = self.patient, self.rng
        first, last = p.usual_first, p.usual_last
        if arg == "low":  # typed quickly: "mme le gall"
            return [
                civility(p.sex).lower() + " ",
                Ent("PATIENT", format_name2(first, last, rng.choice(("last", "first last")))),
            ]
        if arg == "init":
            return [Ent("PATIENT", format_name2(first, last, rng.choice(("LAST F.", "F. LAST"))))]
        value = format_name2(first, last, rng.choice(_NAMES))
        if arg == "bare":
            return [Ent("PATIENT", value)]
        out: list[Fragment] = []
        if arg != "nociv":
            out.append(rng.choice((civility(p.sex), civility(p.sex, "long"))) + " ")
        if p.married_name and arg == "full" and rng.random() < 0.85:
            birth = p.birth_name.upper()
            if rng.random() < 0.4:  # the administrative order: birth name, "épouse", usual name and given name
                return out + [
                    Ent("PATIENT", birth),
                    " épouse ",
                    Ent("PATIENT", format_name2(first, last, "LAST First")),
                ]
            return out + [Ent("PATIENT", value), " (née ", Ent("PATIENT", birth), ")"]
        return out + [Ent("PATIENT", value)]

    def _slot_rel(self, arg: str | None) -> list[Fragment]:
        r, rng = self.relative(), self.rng
        determiner = "son " if r.relation in ("époux", "fils", "frère") else "sa "
        name = format_name2(r.first, r.last, rng.choice(("LAST First", "LAST First", "First LAST", "LAST")))
        if arg == "first" or (arg is None and rng.random() < 0.25):
            return (
                [f"{determiner}{r.relation} (", Ent("PATIENT", r.first), ")"]
                if rng.random() < 0.5
                else [f"{determiner}{r.relation} ", Ent("PATIENT", r.first)]
            )
        if arg == "low":
            return [f"{determiner}{r.relation} ", Ent("PATIENT", r.first.lower())]
        out: list[Fragment] = [
            f"{determiner}{r.relation} ",
            rng.choice((civility(r.sex), civility(r.sex, "long"))),
            " ",
            Ent("PATIENT", name),
        ]
        if arg == "tel":
            cue = rng.choice((" (Tél portable : ", " (GSM : ", " - tél. "))
            digits = r.phone or "06" + "".join(str(rng.randrange(10)) for _ in range(8))
            out += [cue, self.phone_ent(digits), ")" if "(" in cue else ""]
        return out

    def pro_name(self, pro: Professional, *, title: bool = True, style: str | None = None) -> list[Fragment]:
        """``Dr KERBRAT Yann``, ``Pr LE BIHAN A.``, ``Karine LE GALL (IDE)``, ``M. GUÉGUEN, kiné``."""
        rng = self.rng
        style = style or rng.choice(_PRO_NAMES)
        if pro.role in ("IDE", "secrétaire", "cadre de santé", "manipulateur", "technicien") and rng.random() < 0.3:
            style = "First"
        value = format_name2(pro.first, pro.last, style)
        if not title:
            return [Ent("DOCTOR", value)]
        if pro.title:
            prefix = rng.choice(
                {"Dr": ("Dr ", "Dr ", "Dr. ", "Docteur "), "Pr": ("Pr ", "Pr. ", "Professeur ")}[pro.title]
            )
            return [prefix, Ent("DOCTOR", value)]
        role = {
            "interne": "interne",
            "IDE": rng.choice(("IDE", "infirmière" if pro.sex == "F" else "infirmier")),
            "cadre de santé": "cadre de santé",
            "secrétaire": "secrétaire",
            "kinésithérapeute": "kiné",
            "psychologue": "psychologue",
            "manipulateur": "manipulateur radio",
            "technicien": "technicien",
        }.get(pro.role, "")
        if role and rng.random() < 0.5:
            return [Ent("DOCTOR", value), rng.choice((f" ({role})", f", {role}"))]
        if style in ("First", "F. LAST", "LAST F."):
            return [Ent("DOCTOR", value)]
        return [civility(pro.sex) + " ", Ent("DOCTOR", value)]

    def _slot_docl(self, arg: str | None) -> list[Fragment]:
        """A professional typed in lower case in a quick observation: ``dr kerbrat``."""
        pro = self._pro(arg)
        title = ("dr " if pro.title == "Dr" else "pr ") if pro.title else ""
        return [title, Ent("DOCTOR", format_name2(pro.first, pro.last, self.rng.choice(("last", "first last"))))]

    # -- dates, phones, addresses ---------------------------------------------------------------------
    def _slot_date(self, arg: str | None) -> list[Fragment]:
        return [Ent("DATE", format_date2(self.date_of(arg or "visit"), self.rng.choice(_FULL_DATES)), nbsp=True)]

    def _slot_dm(self, arg: str | None) -> list[Fragment]:
        return [Ent("DATE", format_date2(self.date_of(arg or "visit"), self.rng.choice(_DAY_MONTH)))]

    def _slot_my(self, arg: str | None) -> list[Fragment]:
        return [Ent("DATE", format_date2(self.date_of(arg or "visit"), self.rng.choice(_MONTH_YEAR)))]

    def phone_ent(self, digits: str) -> Ent:
        return Ent("PHONE", format_phone2(digits, self.rng.choice(_PHONES)), nbsp=True)

    def street_line(self, address: Address, caps: bool) -> str:
        rng, street = self.rng, address.street
        if street.is_lieu_dit:
            prefix = rng.choice(("Lieu dit ", "Lieu-dit ", "LD ", "")) if address.number is None else ""
            line = prefix + street.label
        else:
            line = f"{rng.choice(_STREET_FORMS[street.type_word])} {street.label}"
        if address.number is not None:
            rep = rng.choice((address.rep, " " + address.rep)) if address.rep else ""
            number = f"{address.number}-{address.number_to}" if address.number_to else str(address.number)
            line = f"{number}{rep}{rng.choice((' ', ' ', ', '))}{line}"
        return line.upper() if caps else line

    def address_fragments(self, address: Address, *, inline: bool = True, caps: bool | None = None) -> list[Fragment]:
        """``[12 Av. Jean Jaurès] - [35000] [RENNES]``, ``[Rennes] ([35000])``, one line or several."""
        rng = self.rng
        caps = rng.random() < 0.25 if caps is None else caps
        sep = rng.choice((", ", " - ", " – ")) if inline else Markup("<br>\n")
        out: list[Fragment] = []
        if address.residence:
            residence = rng.choice(("Résidence ", "Rés. ")) + address.residence
            out += [Ent("STR", residence.upper() if caps else residence), sep]
        for place in place_lines(address):  # buildings, staircases, quartiers (--geography france): each a STR
            out += [Ent("STR", place.upper() if caps else place), sep]
        out.append(Ent("STR", self.street_line(address, caps)))
        if address.bp:
            out += [sep, Ent("STR", address.bp)]
        out.append(sep)
        city = Ent("VILLE", city_form(address, rng, caps=True if address.cedex else caps))
        if not address.cedex and rng.random() < 0.2:
            return out + [city, *self._arrondissement(address, caps=caps), " (", Ent("ZIP", address.postcode), ")"]
        out += [Ent("ZIP", address.postcode), " ", city]
        if not address.cedex:
            out += self._arrondissement(address, caps=caps, share=0.4)
        if address.cedex:
            out.append(" " + (address.cedex if rng.random() < 0.5 else address.cedex.replace("CEDEX", "Cedex")))
        return out

    def _slot_street(self, arg: str | None) -> list[Fragment]:
        street = self.address.street
        if street.is_lieu_dit:
            return (
                ["au ", Ent("STR", f"lieu-dit {street.label}")]
                if self.rng.random() < 0.5
                else ["à ", Ent("STR", f"LD {street.label}")]
            )
        return [Ent("STR", f"{self.rng.choice(_STREET_FORMS[street.type_word])} {street.label}")]

    def _slot_mail(self, arg: str | None) -> list[Fragment]:
        value = {
            "patient": self.patient.email,
            "service": self.department.email,
            "gp": self.patient.gp.email,
            "author": self.author.email or self.department.email,
        }[arg or "patient"]
        if not value:
            return ["non renseigné"]
        if self.rng.random() < 0.5:
            return [Markup(f'<a href="mailto:{value}">'), Ent("EMAIL", value), Markup("</a>")]
        return [Ent("EMAIL", value)]

    def _slot_hospup(self, arg: str | None) -> list[Fragment]:
        """The hospital's name in capitals, as on a printed letterhead: ``CHU DE [RENNES]``."""
        return [Ent(label, text.upper()) if label else text.upper() for text, label in self.hospital.name_parts]

    def _slot_ipp(self, arg: str | None) -> list[Fragment]:
        """Administrative numbers (IPP, stay, UF): not entities."""
        rng = self.rng
        if arg == "uf":
            return [str(rng.randrange(1000, 9999))]
        return [
            str(rng.randrange(80_000_000, 99_999_999) if arg != "stay" else rng.randrange(210_000_000, 239_999_999))
        ]


# -- page blocks -------------------------------------------------------------------------------------------


def _open(ctx: UnseenContext) -> None:
    ctx.doc.markup(
        '<html xmlns:o="urn:schemas-microsoft-com:office:office">\n<head>\n'
        '<meta http-equiv=Content-Type content="text/html; charset=utf-8">\n'
        '<style>p.MsoNormal{margin:0cm;font-size:11.0pt;font-family:"Times New Roman"}</style>\n'
        "</head>\n<body lang=FR>\n<div class=WordSection1>\n"
    )


def _start(ctx: UnseenContext, title: str | None = None) -> None:
    """Page head and letterhead, then the document's title when it has one."""
    _open(ctx)
    _letterhead(ctx)
    if title:
        _title(ctx, title)


def _close(ctx: UnseenContext) -> None:
    ctx.doc.markup("\n</div>\n</body>\n</html>\n")


def _p(ctx: UnseenContext, *lines: str) -> None:
    """One Word paragraph per line."""
    for line in lines:
        ctx.doc.markup("<p class=MsoNormal>")
        ctx.say(line)
        ctx.doc.markup("<o:p></o:p></p>\n")


def _frags(ctx: UnseenContext, fragments: list[Fragment]) -> None:
    ctx.doc.markup("<p class=MsoNormal>")
    ctx.emit(fragments)
    ctx.doc.markup("<o:p></o:p></p>\n")


def _blank(ctx: UnseenContext) -> None:
    ctx.doc.markup("<p class=MsoNormal><o:p>&nbsp;</o:p></p>\n")


def _title(ctx: UnseenContext, text: str) -> None:
    ctx.doc.markup("<p class=MsoTitle align=center style='text-align:center'><b><span style='font-size:14.0pt'>")
    ctx.doc.text(text.upper())
    ctx.doc.markup("</span></b></p>\n")
    _blank(ctx)


def _sec(ctx: UnseenContext, heading: str, *lines: str) -> None:
    """A heading in bold followed by its text on the same line (``HDM : ...``), then more lines."""
    ctx.doc.markup("<p class=MsoNormal><b><u>")
    ctx.doc.text(heading)
    ctx.doc.markup("</u></b> : ")
    if lines:
        ctx.say(lines[0])
    ctx.doc.markup("<o:p></o:p></p>\n")
    _p(ctx, *lines[1:])


def _staff_line(ctx: UnseenContext, label: str, people: list[Professional]) -> None:
    if not people:
        return
    fragments: list[Fragment] = [Markup("<span style='font-size:8.0pt'>"), label + " : "]
    for index, pro in enumerate(people):
        fragments += ([", "] if index else []) + ctx.pro_name(
            pro, style=ctx.rng.choice(("LAST First", "LAST F.", "F. LAST"))
        )
    _frags(ctx, fragments + [Markup("</span>")])


def _letterhead(ctx: UnseenContext) -> None:
    """Hospital block on the left, the department's staff by role and its phones on the right."""
    rng, doc, h, d = ctx.rng, ctx.doc, ctx.hospital, ctx.department
    doc.markup("<table class=MsoTableGrid border=0 cellspacing=0 cellpadding=0>\n<tr><td width=302 valign=top>\n")
    doc.markup("<p class=MsoNormal><b>")
    ctx.say(rng.choice(("{hospup}", "{hosp}")))
    doc.markup("</b><o:p></o:p></p>\n")
    _p(ctx, f"{rng.choice(_POLES[d.kind])} - {d.name}", f"{h.site} - UF {{ipp:uf}}")
    _frags(ctx, ctx.address_fragments(h.address, inline=True, caps=rng.random() < 0.3))
    doc.markup("</td>\n<td width=302 valign=top>\n")
    head = d.of_role("chef de service")
    doctors = [p for p in d.staff if p.role == "praticien"]
    _staff_line(ctx, rng.choice(("Praticien responsable", "Chef de service", "Responsable médical")), head[:1])
    if doctors:
        _staff_line(ctx, rng.choice(("Chef de clinique", "Praticien hospitalier")), doctors[:1])
        _staff_line(ctx, rng.choice(("Praticiens", "Médecins", "Équipe médicale")), doctors[1 : rng.randrange(2, 5)])
    if rng.random() < 0.4:
        _staff_line(ctx, "Cadre de santé", d.of_role("cadre de santé")[:1])
    _frags(
        ctx,
        [
            rng.choice(("Accueil : ", "Standard : ")),
            ctx.phone_ent(h.phone),
            " | ",
            rng.choice(("Secrétariat médical : ", "Secrétariat : ")),
            ctx.phone_ent(d.phone),
        ],
    )
    _frags(
        ctx,
        [
            "Fax : ",
            ctx.phone_ent(d.fax),
            " | ",
            rng.choice(("Mél : ", "Courriel : ", "E-mail : ")),
            *ctx.expand("{mail:service}"),
        ],
    )
    doc.markup("</td></tr>\n</table>\n")
    _blank(ctx)


def _identity(ctx: UnseenContext, *, phone: bool = True) -> None:
    rng = ctx.rng
    if rng.random() < 0.5:
        _p(
            ctx,
            _one(ctx, "Identité : {pat:full}", "Patient(e) : {pat:full}", "Nom du patient : {pat:full}"),
            "Né{e} le {date:birth}" + rng.choice((" ({age} ans)", ", âgé{e} de {age} ans", "")) + " - IPP : {ipp}",
            rng.choice(("Résidant au ", "Adresse : ", "Domicile : ")) + "{addr}",
        )
    else:
        p = ctx.patient
        row: list[Fragment] = [
            "NOM : ",
            Ent("PATIENT", p.usual_last.upper()),
            " - Prénom : ",
            Ent("PATIENT", p.usual_first),
        ]
        if p.married_name:
            row += [" - Nom de naissance : ", Ent("PATIENT", p.birth_name.upper())]
        _frags(ctx, row)
        _p(
            ctx,
            "Date de naissance : {date:birth} - Sexe : " + p.sex + " - N° séjour : {ipp:stay}",
            rng.choice(("Adresse : ", "Résidant au "))
            + "{addr}"
            + (" - né{e} à {city:birth}" if rng.random() < 0.4 else ""),
        )
    if phone and rng.random() < 0.7:
        _p(
            ctx,
            rng.choice(
                (
                    "Tél portable : {tel:mobile}",
                    "Tél. domicile : {tel:patient} - GSM : {tel:mobile}",
                    "Portable : {tel:mobile}",
                )
            ),
        )
    if rng.random() < 0.5:
        _p(ctx, "Médecin traitant : {doc:gp}")
    _blank(ctx)


def _recipient(ctx: UnseenContext, *, to_patient: bool = False) -> None:
    rng, doc, p = ctx.rng, ctx.doc, ctx.patient
    doc.markup("<p class=MsoNormal style='margin-left:8.0cm'>")
    if to_patient:
        ctx.emit(
            [
                civility(p.sex, "long") + " ",
                Ent("PATIENT", format_name2(p.usual_first, p.usual_last, rng.choice(("LAST First", "First LAST")))),
            ]
        )
        doc.markup("<br>\n")
        ctx.emit(ctx.address_fragments(ctx.address, inline=False))
    else:
        gp = p.gp
        ctx.emit(
            [
                rng.choice(("Docteur ", "Dr ")),
                Ent("DOCTOR", format_name2(gp.first, gp.last, rng.choice(("LAST First", "First LAST")))),
            ]
        )
        doc.markup("<br>\n")
        doc.text("Médecin généraliste")
        if gp.practice is not None:
            doc.markup("<br>\n")
            ctx.emit(ctx.address_fragments(gp.practice, inline=False))
    doc.markup("<o:p></o:p></p>\n")
    _blank(ctx)


def _signature(ctx: UnseenContext) -> None:
    rng, a = ctx.rng, ctx.author
    role = {
        "chef de service": "Chef de service",
        "praticien": rng.choice(("Praticien hospitalier", "Chef de clinique")),
        "interne": "Interne",
        "médecin traitant": "Médecin généraliste",
        "secrétaire": "Secrétariat",
    }.get(a.role, a.role.capitalize())
    _blank(ctx)
    style = rng.randrange(3)
    if style == 0:
        _frags(ctx, ["Rédigé par : ", *ctx.pro_name(a, style=rng.choice(("LAST First", "First LAST"))), ", " + role])
    elif style == 1:
        _frags(
            ctx, [Ent("DOCTOR", format_name2(a.first, a.last, rng.choice(("LAST First", "First LAST")))), " - " + role]
        )
    else:
        _frags(
            ctx,
            [
                "Document signé électroniquement par ",
                Ent("DOCTOR", format_name2(a.first, a.last, "LAST First")),
                " le ",
                *ctx.expand("{date:visit}"),
                " à ",
                *ctx.expand("{time}"),
            ],
        )
    seniors = [p for p in ctx.department.staff if p.role in ("chef de service", "praticien") and p is not a]
    if a.role == "interne" and seniors:
        _frags(ctx, ["Validé par : ", *ctx.pro_name(rng.choice(seniors))])
    secretary = next(iter(ctx.department.of_role("secrétaire")), None)
    if secretary is not None and a.role != "secrétaire" and rng.random() < 0.5:
        _frags(
            ctx,
            [
                Markup("<span style='font-size:7.0pt'>"),
                "Saisie : ",
                Ent(
                    "DOCTOR",
                    format_name2(secretary.first, secretary.last, rng.choice(("LAST F.", "First", "First LAST"))),
                ),
                " le ",
                *ctx.expand("{dm:visit}"),
                Markup("</span>"),
            ],
        )


def _copies(ctx: UnseenContext) -> None:
    rng = ctx.rng
    recipients = [ctx.patient.gp] + ctx.extras.get("specialist", [])
    fragments: list[Fragment] = [Markup("<b>"), rng.choice(("Destinataires", "Diffusion", "CC")), Markup("</b>"), " : "]
    for index, pro in enumerate(recipients):
        fragments += ([" ; "] if index else []) + ctx.pro_name(pro)
        fragments.append(
            " (médecin traitant)" if pro.role == "médecin traitant" else f" ({pro.specialty.split(' ')[0].lower()})"
        )
        if pro.practice is not None and rng.random() < 0.5:
            fragments += [", ", *ctx.address_fragments(pro.practice, inline=True)]
        elif pro.practice is not None and rng.random() < 0.5:
            fragments += [" à ", Ent("VILLE", pro.practice.commune.name)]
    _frags(ctx, fragments + [" ; dossier patient"])


def _footer(ctx: UnseenContext) -> None:
    if ctx.rng.random() < 0.6:
        ctx.doc.markup("<p class=MsoFooter><span style='font-size:7.0pt'>")
        ctx.say(
            ctx.rng.choice(
                (
                    "{pat:bare} - IPP {ipp} - Imprimé le {date:visit} {time} - Page 1/1",
                    "{pat:bare} né{e} le {date:birth} - page 1 / 2",
                )
            )
        )
        ctx.doc.markup("</span></p>\n")
    _close(ctx)


def _clin(ctx: UnseenContext, bank: tuple[str, ...], k: int = 1) -> list[str]:
    rng = ctx.rng
    return [
        clinical.fill_numbers(rng, s, age=str(ctx.age), e="e" if ctx.patient.sex == "F" else "")
        for s in rng.sample(bank, min(k, len(bank)))
    ]


def _motif(ctx: UnseenContext) -> str:
    kind = ctx.department.kind if ctx.department.kind in clinical.MOTIFS else "medical"
    return ctx.rng.choice(clinical.MOTIFS[kind])


def _one(ctx: UnseenContext, *options: str) -> str:
    return ctx.rng.choice(options)


_DATE_LINES = ("À {city:hosp}, le {date:visit}", "Édité à {city:hosp} le {date:visit}", "{city:hosp}, le {date:visit}")
#: Sentences of this family where people and places appear in running text.
_TEAM = (
    "Vu avec {doc:colleague} ce jour, qui valide la conduite à tenir.",
    "Avis de {doc:colleague} le {dm:exam} : pas de contre-indication.",
    "Discuté avec {doc:head} lors du staff du {dm:exam}.",
    "Kiné : {docn:staff}, 5 séances par semaine.",
    "Pris en charge par {doc:intern}, vu avec le senior.",
    "vu avec {docl:colleague}, ok pour sortie.",
    "Appel de {rel} ce jour, informé{e} de l'évolution.",
    "Transmission faite à {doc:nurse} pour les soins.",
)
_SOCIAL = (
    "Vit au domicile avec {rel}.",
    "Vit seul{e}, {rel} habite à proximité.",
    "Habite {city:home}, en appartement au 3e étage sans ascenseur.",
    "Originaire de {city:birth}, retraité{e}.",
    "Personne de confiance désignée : {rel:tel}.",
    "Personne à prévenir : {rel:tel}.",
    "appel de {rel:low} pour prendre des nouvelles.",
)


def _antecedents(ctx: UnseenContext) -> str:
    rng = ctx.rng
    surgery = rng.choice(clinical.SURGERIES)
    when = rng.choice(("en {year:surgery}", "({year:surgery})", "le {date:surgery}", "en {my:surgery}"))
    return ", ".join(rng.sample(clinical.ANTECEDENTS, rng.randrange(2, 5))) + f" ; {surgery} {when}."


# -- the twelve document types ------------------------------------------------------------------------------


def hospitalisation_report(ctx: UnseenContext) -> None:
    _start(ctx, _one(ctx, "Compte rendu d'hospitalisation", "Courrier de fin d'hospitalisation"))
    _identity(ctx)
    _p(
        ctx,
        _one(
            ctx,
            "Hospitalisé{e} en {svc} du {date:admission} au {date:discharge}.",
            "Dates du séjour : {date:admission} - {date:discharge}.",
            "Entré{e} le {dm:admission}, sorti{e} le {date:discharge}.",
        ),
    )
    _sec(ctx, "Motif", _motif(ctx) + ".")
    _sec(ctx, "ATCD", _antecedents(ctx))
    _sec(ctx, "Mode de vie", *ctx.rng.sample(_SOCIAL, 2), *_clin(ctx, clinical.HOMONYM_SENTENCES))
    _sec(ctx, "TTT habituel", " ; ".join(clinical.drug_lines(ctx.rng, ctx.rng.randrange(2, 5))) + ".")
    _sec(ctx, "HDM", *_clin(ctx, clinical.TIME_SENTENCES, 2), *_clin(ctx, clinical.NEGATIONS))
    _sec(ctx, "Examen clinique", *_clin(ctx, clinical.EXAM, 3))
    _sec(
        ctx,
        "Évolution",
        _one(ctx, *_TEAM),
        _one(ctx, *_TEAM),
        _one(
            ctx,
            "Traitement bien toléré par {pat:nociv}.",
            "Bonne évolution chez {pat:init}.",
            "{pat:low} va mieux ce jour.",
        ),
    )
    _sec(ctx, "Au total", *_clin(ctx, clinical.CONCLUSIONS))
    _sec(
        ctx,
        "CAT",
        _one(
            ctx,
            "RDV de contrôle le {date:next} à {rdv} avec {doc:colleague}.",
            "À revoir par le médecin traitant, {doc:gp}, sous {n} jours.",
            "Prochaine consultation : {dm:next}.",
        ),
        _one(ctx, "Joignable au {tel:service} en cas de besoin.", "Pas de RDV programmé."),
    )
    _signature(ctx)
    _copies(ctx)
    _footer(ctx)


def discharge_letter(ctx: UnseenContext) -> None:
    _start(ctx)
    _recipient(ctx)
    _p(ctx, _one(ctx, *_DATE_LINES, "À {city:hosp}, {date:visit}"))
    _p(ctx, "Objet : {pat:full}, né{e} le {date:birth}")
    _blank(ctx)
    _p(ctx, _one(ctx, "Cher Confrère,", "Chère Consœur, Cher Confrère,"))
    _p(
        ctx,
        _one(
            ctx,
            (
                "Votre patient{e} {pat} a séjourné dans le service de {svc} du {date:admission} au {date:discharge} "
                "pour {m}."
            ),
            "Je vous adresse le compte rendu du séjour de {pat} ({age} ans), entré{e} le {dm:admission} pour {m}.",
        ).replace("{m}", _motif(ctx)),
    )
    _p(ctx, *_clin(ctx, clinical.EXAM, 2), *_clin(ctx, clinical.NEGATIONS, 2), _one(ctx, *_TEAM))
    _p(
        ctx,
        _one(
            ctx,
            "Retour à domicile avec {rel}.",
            "Retour au domicile, {rel} assure la surveillance.",
            "Passage IDE à domicile organisé ({docn:nurse}, {tel:service}).",
        ),
    )
    _sec(ctx, "Traitement de sortie", " ; ".join(clinical.drug_lines(ctx.rng, ctx.rng.randrange(2, 4))) + ".")
    _p(ctx, "Bien confraternellement.")
    _signature(ctx)
    _copies(ctx)
    _footer(ctx)


def operative_report(ctx: UnseenContext) -> None:
    rng = ctx.rng
    _start(ctx, "Compte rendu opératoire")
    _identity(ctx, phone=False)
    _p(
        ctx,
        "Date : {date:visit} - Début : {time} - Fin : {time}",
        "Chirurgien : {doc}",
        "Aide : {doc:intern}",
        _one(ctx, "Instrumentiste : {docn:nurse}", "IBODE : {doc:nurse}"),
        "Anesthésiste : {doc:colleague}",
    )
    _sec(
        ctx,
        "Indication",
        _motif(ctx) + ".",
        _one(ctx, "Décision prise en RCP le {date:prev}.", "Indication posée en consultation le {dm:prev}."),
    )
    _sec(ctx, "Geste", rng.choice(clinical.SURGERIES) + ".")
    _sec(
        ctx,
        "Compte rendu",
        "Patient{e} en décubitus dorsal, champage stérile.",
        "Hémostase soigneuse, fermeture plan par plan.",
        *_clin(ctx, clinical.NEGATIONS),
    )
    _sec(
        ctx,
        "Suites",
        _one(ctx, "Ablation des agrafes à J{n} par l'IDE libérale.", "Revu en consultation le {dm:next}."),
    )
    _signature(ctx)
    _footer(ctx)


def consultation(ctx: UnseenContext) -> None:
    _start(ctx)
    if ctx.rng.random() < 0.5:
        _title(ctx, "Consultation")
        _p(ctx, "Consultation du {date:visit} - {pat:full} - {age} ans")
    else:
        _recipient(ctx)
        _p(
            ctx,
            "{city:hosp}, {date:visit}",
            "Cher Confrère,",
            "J'ai vu en consultation ce jour {pat}, {age} ans, que vous m'adressiez pour {m}.".replace(
                "{m}", _motif(ctx)
            ),
        )
    _sec(ctx, "ATCD", _antecedents(ctx))
    _sec(
        ctx,
        "Clinique",
        *_clin(ctx, clinical.TIME_SENTENCES),
        *_clin(ctx, clinical.EXAM, 2),
        *_clin(ctx, clinical.HOMONYM_SENTENCES),
    )
    _sec(
        ctx,
        "Conclusion",
        *_clin(ctx, clinical.CONCLUSIONS),
        _one(ctx, "Je reverrai {pat:nociv} le {date:next}.", "Revoir en {my:next}.", "RDV le {dm:next} à {rdv}."),
    )
    _signature(ctx)
    if ctx.rng.random() < 0.6:
        _copies(ctx)
    _footer(ctx)


def emergency(ctx: UnseenContext) -> None:
    _start(ctx, _one(ctx, "Observation urgences", "Dossier SAU"))
    _identity(ctx)
    _p(
        ctx,
        "Arrivée : {date:visit} {time} - Mode : " + _one(ctx, "VSAV", "SMUR", "moyens personnels", "ambulance privée"),
        _one(ctx, "Accompagné{e} par {rel}.", "Adressé{e} par {doc:gp}.", "Venu{e} seul{e}."),
        "IAO : {docn:nurse} - Médecin : {doc} - Interne : {docn:intern}",
    )
    _sec(
        ctx,
        "Motif",
        _motif(ctx) + ".",
        _one(
            ctx, "Chute {street} ce matin.", "Retrouvé{e} au sol par {rel:first}.", "Malaise {street}, témoin : {rel}."
        ),
        *_clin(ctx, clinical.TIME_SENTENCES),
    )
    _sec(ctx, "ATCD", _antecedents(ctx))
    _sec(ctx, "Examen", *_clin(ctx, clinical.EXAM, 2), *_clin(ctx, clinical.NEGATIONS))
    _sec(
        ctx,
        "Devenir",
        _one(ctx, "RAD à {time}, consignes données.", "Hospitalisation en {svc}.", "vu avec {docl:colleague} : UHCD."),
        _one(ctx, *_TEAM),
    )
    _signature(ctx)
    _footer(ctx)


_EXAMS = (
    "TDM thoraco-abdomino-pelvienne",
    "IRM encéphalique",
    "Échographie rénale et vésicale",
    "Radiographie du bassin",
    "Écho-doppler des troncs supra-aortiques",
    "Coroscanner",
)
_FINDINGS = (
    "Absence d'épanchement.",
    "Micronodule pulmonaire de 4 mm, à contrôler.",
    "Leucopathie vasculaire, Fazekas 1.",
    "Pas de dilatation des cavités pyélocalicielles.",
    "Sténose carotidienne interne droite estimée à 50 % (NASCET).",
    "Coxarthrose bilatérale.",
    "Pas de lésion osseuse suspecte.",
)


def imaging(ctx: UnseenContext) -> None:
    rng = ctx.rng
    _start(ctx, rng.choice(_EXAMS))
    _p(
        ctx,
        "Patient{e} : {pat:bare} - né{e} le {date:birth} - IPP {ipp}",
        "Examen réalisé le {date:visit} à {time}",
        _one(ctx, "Prescrit par {doc:gp}", "Demandé par {doc:colleague}"),
        _one(ctx, "Manipulateur : {docn:nurse}", "Technique : acquisition volumique."),
    )
    _sec(ctx, "Indication", _motif(ctx) + ".")
    _sec(
        ctx,
        "Résultat",
        *rng.sample(_FINDINGS, 3),
        _one(ctx, "Comparatif : examen du {date:prev}.", "Pas d'examen antérieur disponible."),
    )
    _sec(ctx, "Conclusion", rng.choice(_FINDINGS))
    _signature(ctx)
    _footer(ctx)


def prescription(ctx: UnseenContext) -> None:
    rng = ctx.rng
    _start(ctx, "Ordonnance")
    _p(
        ctx,
        _one(ctx, *_DATE_LINES),
        "{pat:full}" + (" - {n}0 kg" if rng.random() < 0.3 else ""),
        "Né{e} le {date:birth}",
    )
    _blank(ctx)
    _p(ctx, *[f"{index + 1}) {line}" for index, line in enumerate(clinical.drug_lines(rng, rng.randrange(1, 5)))])
    _p(ctx, "À renouveler " + rng.choice(("1", "2", "3")) + " fois.")
    _signature(ctx)
    _close(ctx)


_PATHO = (
    "Carcinome épidermoïde bien différencié, infiltrant.",
    "Adénome tubulo-villeux en dysplasie de haut grade.",
    "Gastrite chronique à Helicobacter pylori.",
    "Lipome sans signe de malignité.",
    "Adénocarcinome, score ISUP 2.",
)


def pathology(ctx: UnseenContext) -> None:
    rng = ctx.rng
    _start(ctx, "Compte rendu d'anatomie et cytologie pathologiques")
    _p(
        ctx,
        f"N° {rng.choice('ABP')}{ctx.when.year % 100:02d}.{rng.randrange(100, 99999)}",
        "{pat:full} - né{e} le {date:birth}",
        "Prélevé le {date:exam} - Reçu le {date:visit}",
        "Prélèvement effectué par {doc:colleague}",
    )
    _sec(ctx, "Renseignements", _motif(ctx) + ".")
    _sec(ctx, "Macroscopie", f"{rng.randrange(1, 6)} fragment(s) de {rng.randrange(2, 30)} mm.")
    _sec(ctx, "Microscopie", rng.choice(_PATHO), *_clin(ctx, clinical.NEGATIONS))
    _sec(ctx, "Conclusion", rng.choice(_PATHO))
    _frags(ctx, ["Validé par ", *ctx.pro_name(ctx.author), " le ", *ctx.expand("{date:visit}")])
    _footer(ctx)


def referral_letter(ctx: UnseenContext) -> None:
    rng, gp = ctx.rng, ctx.patient.gp
    _open(ctx)
    _frags(
        ctx,
        [
            Markup("<b>"),
            "Docteur ",
            Ent("DOCTOR", format_name2(gp.first, gp.last, rng.choice(("LAST First", "First LAST")))),
            Markup("</b>"),
        ],
    )
    _p(ctx, "Médecin généraliste - N° RPPS " + str(rng.randrange(10**10, 10**11)))
    if gp.practice is not None:
        _frags(ctx, ctx.address_fragments(gp.practice, inline=True))
    _frags(ctx, ["Tél : ", ctx.phone_ent(gp.phone), " - Messagerie sécurisée : ", *ctx.expand("{mail:gp}")])
    _blank(ctx)
    _p(ctx, _one(ctx, "Le {date:visit}", "{city:gp}, le {date:visit}"), "À l'attention de {doc:head}, {svc}, {hosp}")
    _p(ctx, "Cher Confrère,")
    _p(
        ctx,
        _one(
            ctx,
            "Je vous adresse {pat}, {age} ans, pour avis concernant {m}.",
            "Merci de recevoir {pat:full} (né{e} le {date:birth}) pour {m}.",
        ).replace("{m}", _motif(ctx)),
        *_clin(ctx, clinical.TIME_SENTENCES),
        "ATCD : " + _antecedents(ctx),
    )
    _p(
        ctx,
        _one(
            ctx,
            "Joignable au {tel:mobile}.",
            "Contact : {rel:tel}.",
            "Vous pouvez joindre le patient au {tel:patient}.",
        ),
    )
    _p(ctx, "Confraternellement,")
    _frags(ctx, [Ent("DOCTOR", format_name2(gp.first, gp.last, rng.choice(("LAST F.", "F. LAST", "LAST First"))))])
    _close(ctx)


def patient_letter(ctx: UnseenContext) -> None:
    _start(ctx)
    _recipient(ctx, to_patient=True)
    _p(ctx, _one(ctx, *_DATE_LINES, "Le {date:visit}"), "{Civ},")
    _p(
        ctx,
        _one(
            ctx,
            "Suite à votre venue le {date:prev}, vos résultats sont rassurants.",
            "Je reviens vers vous concernant le bilan réalisé en {my:prev}.",
        ),
        *_clin(ctx, clinical.CONCLUSIONS),
    )
    _p(
        ctx,
        _one(ctx, "Un RDV vous est fixé le {date:next} à {rdv}.", "Merci de vous présenter le {dm:next} à {rdv}."),
        _one(ctx, "Secrétariat : {tel:service}.", "Pour tout renseignement : {mail:service}."),
    )
    _p(ctx, "Veuillez agréer, {Civ}, mes salutations distinguées.")
    _signature(ctx)
    _footer(ctx)


def convocation(ctx: UnseenContext) -> None:
    _start(ctx)
    _recipient(ctx, to_patient=True)
    _title(ctx, "Convocation")
    _p(
        ctx,
        "{Civ},",
        "Vous êtes attendu{e} le {date:next} à {rdv}, {site}, service {svc}.",
        "Se munir de la carte Vitale et des examens récents.",
        _one(ctx, "En cas d'empêchement : {tel:service}.", "Annulation par courriel : {mail:service}."),
    )
    _frags(
        ctx,
        [
            "Édité le ",
            *ctx.expand("{date:visit}"),
            " par ",
            *ctx.pro_name(ctx.rng.choice(ctx.department.of_role("secrétaire") or [ctx.author])),
        ],
    )
    _close(ctx)


_ANALYTES = (
    ("Hémoglobine", "g/dL", "12,0-16,0"),
    ("Leucocytes", "G/L", "4,0-10,0"),
    ("Natrémie", "mmol/L", "136-145"),
    ("Kaliémie", "mmol/L", "3,5-5,0"),
    ("Créatininémie", "µmol/L", "45-90"),
    ("CRP", "mg/L", "<5"),
    ("Ferritine", "µg/L", "30-300"),
)


def biology(ctx: UnseenContext) -> None:
    rng, doc = ctx.rng, ctx.doc
    _start(ctx, "Résultats d'analyses")
    _p(
        ctx,
        "{pat:full} - né{e} le {date:birth} - IPP {ipp}",
        "Prélèvement du {date:visit} à {time} - Préleveur : {docn:nurse}",
        _one(ctx, "Médecin prescripteur : {doc:gp}", "Demande de {doc:colleague}"),
    )
    doc.markup("<table class=MsoTableGrid border=1 cellspacing=0>\n")
    for name, unit, ref in rng.sample(_ANALYTES, rng.randrange(3, 7)):
        doc.markup("<tr><td><p class=MsoNormal>")
        doc.text(name)
        doc.markup("</p></td><td><p class=MsoNormal>")
        doc.text(f"{rng.randrange(1, 300)} {unit}")
        doc.markup("</p></td><td><p class=MsoNormal>")
        doc.text(ref)
        doc.markup("</p></td><td><p class=MsoNormal>")
        if rng.random() < 0.3:
            ctx.say(_one(ctx, "Antériorité du {date:prev}", "{dm:prev}"))
        doc.markup("</p></td></tr>\n")
    doc.markup("</table>\n")
    _frags(ctx, ["Validation biologique : ", *ctx.pro_name(ctx.author), " le ", *ctx.expand("{date:visit}")])
    _footer(ctx)


#: doc_type -> the family-2 writer
WRITERS: dict[str, Callable[[UnseenContext], None]] = {
    "hospitalisation_report": hospitalisation_report,
    "discharge_letter": discharge_letter,
    "operative_report": operative_report,
    "consultation": consultation,
    "emergency": emergency,
    "imaging": imaging,
    "prescription": prescription,
    "pathology": pathology,
    "referral_letter": referral_letter,
    "patient_letter": patient_letter,
    "convocation": convocation,
    "biology": biology,
}
