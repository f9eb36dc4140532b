"""Everything a document template needs about the note being written, and a tiny template language.

Templates are French sentences with slots: ``"{Civ} {pat:bare}, âgé{e} de {age} ans, hospitalisé{e} le
{date:admission}"``. Each slot expands into fragments (plain text or :class:`~deid_ds.synth.formats.Ent`
entities) drawn from the note's world: the patient, the hospital, the author, the dates of the stay.
Which format a date or a phone takes, whether the patient is ``Mme LE GALL`` or ``Jeanne Le Gall``, is
drawn per mention, as in real notes where one letter mixes several.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from datetime import date

from deid_ds.synth import pools
from deid_ds.synth.formats import (
    FULL_DATE_STYLES,
    NAME_STYLES,
    PHONE_STYLES,
    Ent,
    Fragment,
    Markup,
    arrondissement_form,
    city_form,
    civility,
    format_date,
    format_name,
    format_phone,
    place_lines,
    street_line,
)
from deid_ds.synth.html_builder import HtmlDoc
from deid_ds.synth.world import Address, Department, Hospital, Patient, Professional, Relative

SLOT_RE = re.compile(r"\{(\w+)(?::(\w+))?\}")


def of_department(name: str) -> str:
    """``de Cardiologie``, ``d'Urologie``: French elides ``de`` before a vowel."""
    return ("d'" if name[0] in "AEÉIOUH" else "de ") + name


@dataclass(slots=True)
class NoteContext:
    """One note being written: its world, its dates, its author and the HTML document it fills."""

    rng: random.Random
    family: int
    noise: float
    patient: Patient
    hospital: Hospital
    department: Department
    author: Professional
    when: date
    dates: dict[str, date]
    doc: HtmlDoc
    address: Address  # the patient's address at the time of the note
    extras: dict[str, list[Professional]] = field(default_factory=dict)

    # -- emitting -----------------------------------------------------------------------------------
    def emit(self, fragments: list[Fragment]) -> None:
        doc = self.doc
        for frag in fragments:
            if isinstance(frag, Ent):
                doc.entity(frag.label, frag.value, nbsp=frag.nbsp)
            elif isinstance(frag, Markup):
                doc.markup(frag.html)
            elif frag:
                doc.text(frag)

    def say(self, template: str) -> None:
        """Expand the slots of ``template`` and write it."""
        self.emit(self.expand(template))

    def expand(self, template: str) -> list[Fragment]:
        out: list[Fragment] = []
        position = 0
        for match in SLOT_RE.finditer(template):
            out.append(template[position : match.start()])
            out.extend(self.slot(match.group(1), match.group(2)))
            position = match.end()
        out.append(template[position:])
        return out

    # -- slots --------------------------------------------------------------------------------------
    def slot(self, name: str, arg: str | None) -> list[Fragment]:
        p, rng = self.patient, self.rng
        female = p.sex == "F"
        simple = {
            "e": "e" if female else "",
            "il": "elle" if female else "il",
            "Il": "Elle" if female else "Il",
            "le": "la" if female else "le",
            "civ": civility(p.sex),
            "Civ": civility(p.sex, "long"),
            "age": str(self.age),
            "svc": self.department.name,
            "dsvc": of_department(self.department.name),
            "site": self.hospital.site,
        }
        if name in simple:
            return [simple[name]]
        if name == "n":  # a small count (days, doses): never an entity
            return [str(rng.randrange(2, 15))]
        if name == "rdv":  # an appointment time, during opening hours
            h, m = rng.randrange(8, 18), rng.choice((0, 15, 30, 45))
            return [rng.choice((f"{h}h{m:02d}", f"{h} h {m:02d}", f"{h:02d}:{m:02d}"))]
        if name == "time":  # a time of day: not a DATE (guidelines)
            h, m = rng.randrange(0, 24), rng.choice((0, 0, 15, 30, 45, rng.randrange(60)))
            return [rng.choice((f"{h}h{m:02d}", f"{h:02d}h{m:02d}", f"{h} h {m:02d}", f"{h:02d}:{m:02d}"))]
        handler = getattr(self, f"_slot_{name}", None)
        if handler is None:
            raise KeyError(f"unknown template slot {name!r}")
        return handler(arg)

    @property
    def age(self) -> int:
        b = self.patient.birthdate
        return self.when.year - b.year - ((self.when.month, self.when.day) < (b.month, b.day))

    def _slot_pat(self, arg: str | None) -> list[Fragment]:
        p, rng = self.patient, self.rng
        first, last = p.usual_first, p.usual_last
        if arg == "first":
            return [Ent("PATIENT", first)]
        if arg == "last":
            return [Ent("PATIENT", rng.choice((last.upper(), last)))]
        style = rng.choice(NAME_STYLES[:-3] if arg != "init" else ("F. LAST", "F. Last"))
        value = format_name(first, last, style)
        if arg in ("bare", "init"):
            return [Ent("PATIENT", value)]
        out: list[Fragment] = []
        if arg != "nociv":
            out.append(
                rng.choice((civility(p.sex), civility(p.sex, "long")))
                + ("\xa0" if rng.random() < 0.1 * self.noise else " ")
            )
        out.append(Ent("PATIENT", value))
        if p.married_name and arg in ("full", None) and rng.random() < (0.8 if arg == "full" else 0.3):
            birth = p.birth_name.upper() if rng.random() < 0.7 else p.birth_name
            out += [rng.choice((" née ", ", née ", " (née ")), Ent("PATIENT", birth)]
            if out[-2] == " (née ":
                out.append(")")
        return out

    def relative(self) -> Relative:
        """A relative of the patient; one is created (and kept) when the patient has none yet."""
        p, rng = self.patient, self.rng
        if not p.relatives:
            sex = rng.choice("FM")
            relation = "fille" if sex == "F" else "fils"
            p.relatives.append(Relative(sex, pools.given_name(rng, sex), p.usual_last, relation, ""))
        return rng.choice(p.relatives)

    def _slot_rel(self, arg: str | None) -> list[Fragment]:
        r, rng = self.relative(), self.rng
        determiner = "son " if r.relation in ("époux", "fils", "frère") else "sa "
        if r.relation == "voisine":
            determiner = "sa "
        if arg == "first" or (arg is None and rng.random() < 0.4):
            return [f"{determiner}{r.relation} ", Ent("PATIENT", r.first)]
        if arg == "tel":
            return [
                f"{determiner}{r.relation}, ",
                civility(r.sex),
                " ",
                Ent("PATIENT", format_name(r.first, r.last, rng.choice(NAME_STYLES[:5]))),
                ", joignable au ",
                Ent("PHONE", format_phone(r.phone or "0600000000", rng.choice(PHONE_STYLES))),
            ]
        return [
            f"{determiner}{r.relation}, ",
            civility(r.sex),
            " ",
            Ent("PATIENT", format_name(r.first, r.last, rng.choice(NAME_STYLES[:7]))),
        ]

    def pro_name(self, pro: Professional, *, title: bool = True, style: str | None = None) -> list[Fragment]:
        """A professional as mentioned: ``Dr [Yann KERBRAT]``, ``IDE [Karine]``, ``Interne : [M. Roué]``."""
        rng = self.rng
        first_only = (
            pro.role in ("IDE", "secrétaire", "cadre de santé", "technicien", "manipulateur") and rng.random() < 0.35
        )
        style = "First" if first_only else style or rng.choice(NAME_STYLES[:-1])
        value = format_name(pro.first, pro.last, style)
        if not title:
            return [Ent("DOCTOR", value)]
        if first_only:  # "IDE Karine", "la secrétaire, Mehdi": no civility before a bare first name
            word = {"IDE": "IDE ", "secrétaire": rng.choice(("secrétaire ", "", "Secr. "))}.get(pro.role, "")
            return [word, Ent("DOCTOR", value)] if word else [Ent("DOCTOR", value)]
        if pro.title:
            prefix = rng.choice(
                {"Dr": ("Dr ", "Dr ", "Docteur ", "Dr. "), "Pr": ("Pr ", "Professeur ", "Pr. ")}[pro.title]
            )
        elif pro.role == "IDE":
            prefix = rng.choice(("IDE ", "infirmière " if pro.sex == "F" else "infirmier ", "IDE : "))
        elif pro.role == "interne":
            prefix = rng.choice(("Interne : ", "interne ", "Dr "))
        elif style.startswith("F."):  # "M. M. LEMAIRE" reads wrong: no civility before an initial
            return [Ent("DOCTOR", value)]
        else:
            prefix = civility(pro.sex) + " "
        return [prefix, Ent("DOCTOR", value)]

    def _pro(self, arg: str | None) -> Professional:
        rng, dept = self.rng, self.department
        if arg in (None, "author"):
            return self.author
        if arg == "gp":
            return self.patient.gp
        if self.extras.get(arg):
            return rng.choice(self.extras[arg])
        roles = {
            "head": ("chef de service",),
            "colleague": ("praticien", "chef de service"),
            "intern": ("interne",),
            "nurse": ("IDE", "cadre de santé"),
            "secretary": ("secrétaire",),
            "staff": ("kinésithérapeute", "psychologue", "IDE"),
        }[arg]
        candidates = [p for p in dept.staff if p.role in roles and p is not self.author] or [
            p for p in dept.staff if p.role in roles
        ]
        if not candidates:
            candidates = [p for p in dept.staff if p.role in ("praticien", "chef de service")]
        return rng.choice(candidates)

    def _slot_doc(self, arg: str | None) -> list[Fragment]:
        return self.pro_name(self._pro(arg))

    def _slot_docn(self, arg: str | None) -> list[Fragment]:
        """A professional without title (after ``Docteur`` written in the template, or in a list)."""
        return self.pro_name(self._pro(arg), title=False)

    def date_of(self, key: str) -> date:
        if key == "birth":
            return self.patient.birthdate
        if key in (None, "visit"):
            return self.when
        return self.dates.get(key, self.when)

    def _slot_date(self, arg: str | None) -> list[Fragment]:
        style = self.rng.choice(FULL_DATE_STYLES)
        return [Ent("DATE", format_date(self.date_of(arg or "visit"), style), nbsp=True)]

    def _slot_dm(self, arg: str | None) -> list[Fragment]:
        """Day and month without the year: ``3 février``, ``lundi 3 février``, ``03/02``."""
        style = self.rng.choice(("daymonth", "weekday_daymonth", "daymonth_num"))
        return [Ent("DATE", format_date(self.date_of(arg or "visit"), style))]

    def _slot_my(self, arg: str | None) -> list[Fragment]:
        """Month and year: ``février 2021``, ``02/2021``."""
        style = self.rng.choice(("monthyear", "monthyear", "monthyear_num"))
        return [Ent("DATE", format_date(self.date_of(arg or "visit"), style))]

    def _slot_year(self, arg: str | None) -> list[Fragment]:
        return [Ent("DATE", str(self.date_of(arg or "prev").year))]

    def address_fragments(self, address: Address, *, inline: bool = True, caps: bool | None = None) -> list[Fragment]:
        """``[12 rue des Lilas], [35000] [Rennes]`` (inline) or the same on two lines (``<br>``).

        Buildings, staircases, quartiers and housing estates are lines of their own (each a STR), BP / CS / TSA
        too; an arrondissement follows its city outside the VILLE span (``[75013] [Paris] 13e``).
        """
        rng = self.rng
        caps = rng.random() < 0.3 if caps is None else caps
        out: list[Fragment] = []
        if address.residence:
            out += [
                Ent("STR", ("Résidence " + address.residence).upper() if caps else "Résidence " + address.residence),
                ", " if inline else Markup("<br>"),
            ]
        places = place_lines(address)
        after = address.place and rng.random() < 0.5  # "12 rue X, Quartier Bois-Joli" or the quartier first
        for place in places[:-1] if after else places:
            out += [Ent("STR", place.upper() if caps else place), ", " if inline else Markup("<br>")]
        out.append(Ent("STR", street_line(address, rng, caps=caps)))
        if after:
            out += [", " if inline else Markup("<br>"), Ent("STR", address.place.upper() if caps else address.place)]
        if address.bp:
            out += [", " if inline else Markup("<br>"), Ent("STR", address.bp)]
        out.append(rng.choice((", ", " ", " - ")) if inline else Markup("<br>"))
        if inline and rng.random() < 0.15:  # "à Rennes (35000)"
            return out[:-1] + [
                " à ",
                Ent("VILLE", city_form(address, rng, caps=caps)),
                *self._arrondissement(address, caps=caps),
                " (",
                Ent("ZIP", address.postcode),
                ")",
            ]
        out += [
            Ent("ZIP", address.postcode),
            " ",
            Ent("VILLE", city_form(address, rng, caps=True if address.cedex else caps)),
        ]
        if not address.cedex:
            out += self._arrondissement(address, caps=caps, share=0.4)
        if address.cedex:
            out.append(" " + address.cedex)
        return out

    def address_lines(self, address: Address, *, caps: bool | None = None) -> list[list[Fragment]]:
        """The lines of an address as a PDF, a column or a letterhead prints them, one list of fragments per
        line: named places (``[Bâtiment C]``, ``[Quartier Bois-Joli]``), the street, ``[BP 12]``, then
        ``[75013] [PARIS]`` with its arrondissement or CEDEX outside the spans. For writers that place each line
        themselves; :meth:`address_fragments` joins them."""
        rng = self.rng
        caps = rng.random() < 0.3 if caps is None else caps
        lines: list[list[Fragment]] = []
        if address.residence:
            residence = "Résidence " + address.residence
            lines.append([Ent("STR", residence.upper() if caps else residence)])
        lines += [[Ent("STR", place.upper() if caps else place)] for place in place_lines(address)]
        lines.append([Ent("STR", street_line(address, rng, caps=caps))])
        if address.bp:
            lines.append([Ent("STR", address.bp)])
        last: list[Fragment] = [
            Ent("ZIP", address.postcode),
            " ",
            Ent("VILLE", city_form(address, rng, caps=True if address.cedex else caps)),
        ]
        last += [" " + address.cedex] if address.cedex else self._arrondissement(address, caps=caps, share=0.4)
        lines.append(last)
        return lines

    def _arrondissement(self, address: Address, *, caps: bool | None, share: float = 0.6) -> list[Fragment]:
        """`` 13e`` after ``Paris`` (outside the VILLE span), sometimes; nothing and no draw outside an
        arrondissement."""
        if not address.commune.arrondissement or self.rng.random() >= share:
            return []
        return [" " + arrondissement_form(address, self.rng, caps=bool(caps))]

    def _slot_addr(self, arg: str | None) -> list[Fragment]:
        if arg == "gp" and self.patient.gp.practice is not None:
            return self.address_fragments(self.patient.gp.practice)
        if arg == "old" and self.patient.old_address is not None:
            return self.address_fragments(self.patient.old_address)
        return self.address_fragments(self.address)

    def _slot_street(self, arg: str | None) -> list[Fragment]:
        """A street named in prose without a number (``route de Gouesnou``): still STR."""
        street = self.address.street
        if street.is_lieu_dit:
            return ["au ", Ent("STR", f"lieu-dit {street.label}")]
        return [Ent("STR", f"{street.type_word.lower()} {street.label}")]

    def _slot_city(self, arg: str | None) -> list[Fragment]:
        if arg == "birth":
            return [
                Ent(
                    "VILLE",
                    city_form(self.patient.birthplace, self.rng, caps=False if self.rng.random() < 0.7 else True),
                )
            ]
        if arg == "gp" and self.patient.gp.practice is not None:
            return [Ent("VILLE", city_form(self.patient.gp.practice.commune.name, self.rng, caps=False))]
        if arg == "hosp":
            return [Ent("VILLE", self.hospital.address.commune.name)]
        city = city_form(self.address, self.rng)
        return [Ent("VILLE", city), *self._arrondissement(self.address, caps=city.isupper())]

    def phone_ent(self, digits: str) -> Ent:
        return Ent("PHONE", format_phone(digits, self.rng.choice(PHONE_STYLES)), nbsp=True)

    def _slot_tel(self, arg: str | None) -> list[Fragment]:
        p = self.patient
        digits = {
            "patient": p.phone,
            "mobile": p.mobile,
            "service": self.department.phone,
            "fax": self.department.fax,
            "hosp": self.hospital.phone,
            "gp": p.gp.phone,
            "relative": self.relative().phone or p.mobile,
        }[arg or "patient"]
        return [self.phone_ent(digits)]

    def _slot_mail(self, arg: str | None) -> list[Fragment]:
        p = self.patient
        value = {
            "patient": p.email,
            "service": self.department.email,
            "author": self.author.email or self.department.email,
            "gp": p.gp.email,
        }[arg or "patient"]
        return [Ent("EMAIL", value)] if value else ["(pas d'adresse électronique)"]

    def _slot_hosp(self, arg: str | None) -> list[Fragment]:
        return [Ent(label, text) if label else text for text, label in self.hospital.name_parts]
