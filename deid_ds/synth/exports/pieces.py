"""What the three layout styles (``pdf``, ``cda``, ``fixed_width``) share: how export software writes dates,
names and extensions, the administrative numbers that look like identifiers and are not, what each document
type says, and the one construct :class:`~deid_ds.synth.html_builder.HtmlDoc` does not write itself, an entity
whose characters are separated by markup that is not inline (a PDF line end, a CDA name's two elements).

Templates are written as in the other families (``{pat}``, ``{doc:colleague}``, ``{addr}``...); the slots
added here (``{d:…}``, ``{pro:…}``, ``{poste}``, ``{ipp}``...) are expanded by :func:`expand` before falling
back on the context's own, so a style's module never has to know how the world is built.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date

from deid_ds.synth import clinical
from deid_ds.synth.context import SLOT_RE
from deid_ds.synth.exports.context import ExportContext
from deid_ds.synth.formats import MONTHS, Ent, Fragment, initials
from deid_ds.synth.html_builder import GoldSpan, HtmlDoc
from deid_ds.synth.world import Professional

# -- an entity across markup ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Gap:
    """Markup inside an entity, and what the extracted text reads there (``"\\n"`` for a PDF line end)."""

    html: str
    reads: str


def entity_across(doc: HtmlDoc, label: str, parts: list[str | Gap]) -> None:
    """Write one entity whose text pieces are separated by markup: ONE gold span from its first to its last
    character (guidelines: a name over two elements, or broken over two lines of a PDF, is one span)."""
    if not parts or not isinstance(parts[0], str) or not isinstance(parts[-1], str):
        raise ValueError("an entity starts and ends on text")
    start, text = doc.length, []
    for part in parts:
        if isinstance(part, Gap):
            doc.markup(part.html)
            text.append(part.reads)
        else:
            if not part or part != part.strip():
                raise ValueError("the text pieces of an entity are trimmed and not empty")
            doc.text(part)
            text.append(part)
    doc.spans.append(GoldSpan(label, start, doc.length, "".join(text)))


def plain_entity(doc: HtmlDoc, label: str, value: str) -> None:
    """An entity written verbatim (inside ``<pre>``, where a wrapped source line would read as a newline)."""
    entity_across(doc, label, [value])


# -- numbers that are not entities ----------------------------------------------------------------------------


def digits(rng: random.Random, n: int) -> str:
    return str(rng.randrange(1, 10)) + "".join(str(rng.randrange(10)) for _ in range(n - 1))


def ipp(ctx: ExportContext) -> str:
    """The patient's record number (IPP): the same in every note and every header of the patient."""
    return digits(random.Random(f"ipp-{ctx.patient.id_patient}"), 8)


def nir(ctx: ExportContext) -> str:
    """The patient's social security number (INS-NIR): sex, birth year and month, birthplace and order number,
    and the key every real NIR has (``97 - n mod 97``); never an entity."""
    p, rng = ctx.patient, random.Random(f"nir-{ctx.patient.id_patient}")
    sex = "2" if p.sex == "F" else "1"
    born = f"{p.birthdate.year % 100:02d} {p.birthdate.month:02d}"
    head = f"{sex} {born} {digits(rng, 2)} {digits(rng, 3)} {digits(rng, 3)}"
    rng.randrange(10, 98)  # the draw the key once was: the generator's other numbers stay what they were
    return f"{head} {97 - int(head.replace(' ', '')) % 97:02d}"


def luhn_number(rng: random.Random, prefix: str, n: int) -> str:
    """``prefix`` and digits, ``n`` in all, the last a Luhn check digit (RPPS numbers have one)."""
    body = prefix + digits(rng, n - len(prefix))[:-1]
    total = 0
    for i, c in enumerate(reversed(body)):
        d = int(c) * (2 if i % 2 == 0 else 1)
        total += d - 9 if d > 9 else d
    return body + str((10 - total % 10) % 10)


#: Document codes of CDA headers (LOINC), per document type: coded values, not entities.
LOINC = {
    "hospitalisation_report": ("34112-3", "Compte rendu d'hospitalisation"),
    "discharge_letter": ("11490-0", "Lettre de sortie"),
    "operative_report": ("34874-8", "Compte rendu opératoire"),
    "consultation": ("11488-4", "Compte rendu de consultation"),
    "emergency": ("34111-5", "Compte rendu de passage aux urgences"),
    "imaging": ("18748-4", "Compte rendu d'imagerie"),
    "prescription": ("57833-6", "Prescription de médicaments"),
    "pathology": ("11526-1", "Compte rendu d'anatomie pathologique"),
    "referral_letter": ("57133-1", "Courrier d'adressage"),
    "patient_letter": ("51852-2", "Courrier au patient"),
    "convocation": ("56446-8", "Convocation"),
    "biology": ("11502-2", "Compte rendu d'examens de biologie"),
}

# -- dates as export software writes them ---------------------------------------------------------------------

_MON = ("JAN", "FEV", "MAR", "AVR", "MAI", "JUN", "JUL", "AOU", "SEP", "OCT", "NOV", "DEC")


def export_date(d: date, style: str) -> str:
    """``12/03/2020``, ``20200312``, ``2020-03-12``, ``12 MAR 2020``, ``12-03-2020``, ``12 mars 2020``..."""
    return {
        "dmy": f"{d.day:02d}/{d.month:02d}/{d.year}",
        "ymd": f"{d.year}{d.month:02d}{d.day:02d}",
        "iso": d.isoformat(),
        "dMy": f"{d.day:02d} {_MON[d.month - 1]} {d.year}",
        "dmy_dash": f"{d.day:02d}-{d.month:02d}-{d.year}",
        "dmy_dot": f"{d.day:02d}.{d.month:02d}.{d.year}",
        "dmyy": f"{d.day:02d}/{d.month:02d}/{d.year % 100:02d}",
        "long": f"{'1er' if d.day == 1 else d.day} {MONTHS[d.month - 1]} {d.year}",
        "dm": f"{d.day:02d}/{d.month:02d}",
        "my": f"{MONTHS[d.month - 1]} {d.year}",
    }[style]


#: Full-date styles of each phrasing (variant 0, variant 1).
DATE_STYLES = (("dmy", "dmy", "dmy", "long", "dMy", "iso"), ("dmy_dash", "ymd", "dmy_dot", "dmyy", "long", "dmy"))


def time_of_day(rng: random.Random) -> str:
    return f"{rng.randrange(0, 24):02d}:{rng.randrange(60):02d}"


# -- professionals -------------------------------------------------------------------------------------------

ROLE_LABELS = {
    "chef de service": "chef de service",
    "praticien": "praticien hospitalier",
    "interne": "interne",
    "IDE": "IDE",
    "cadre de santé": "cadre de santé",
    "secrétaire": "secrétaire",
    "kinésithérapeute": "kinésithérapeute",
    "psychologue": "psychologue",
    "manipulateur": "manipulateur radio",
    "technicien": "technicien",
    "médecin traitant": "médecin traitant",
    "spécialiste libéral": "spécialiste",
}


def name_form(first: str, last: str, form: str) -> str:
    """``Prénom NOM``, ``NOM P.`` (initial after: part of the name), ``NOM Prénom``, ``P. NOM``, ``NOM``."""
    return {
        "First LAST": f"{first} {last.upper()}",
        "LAST F.": f"{last.upper()} {initials(first)}",
        "LAST First": f"{last.upper()} {first}",
        "F. LAST": f"{initials(first)} {last.upper()}",
        "LAST": last.upper(),
        "First": first,
    }[form]


def pro_ref(ctx: ExportContext, pro: Professional, *, role: bool = False) -> list[Fragment]:
    """A professional as export software names them: ``Dr KERBRAT Y.``, ``Yann KERBRAT (IDE)``, ``KERBRAT Y.``."""
    rng = ctx.rng
    forms = (("First LAST", "LAST F.", "LAST F.", "F. LAST"), ("LAST First", "LAST F.", "First LAST", "LAST"))[
        ctx.variant
    ]
    form = rng.choice(forms)
    if not pro.title and pro.role in ("IDE", "secrétaire", "cadre de santé") and rng.random() < 0.25:
        form = "First"  # nurses and secretaries go by their first name: "IDE [Karine]"
    out: list[Fragment] = []
    if pro.title and form != "First":
        out.append(rng.choice({"Dr": ("Dr ", "Dr ", "Docteur "), "Pr": ("Pr ", "Professeur ")}[pro.title]))
    elif pro.role == "IDE" and not role:
        out.append("IDE ")
    out.append(Ent("DOCTOR", name_form(pro.first, pro.last, form)))
    if role and pro.role in ROLE_LABELS:
        out.append(ctx.pick((f" ({ROLE_LABELS[pro.role]})",), (f", {ROLE_LABELS[pro.role]}",)))
    return out


# -- templates ------------------------------------------------------------------------------------------------


def _slot_d(ctx: ExportContext, arg: str | None) -> list[Fragment]:
    return [Ent("DATE", export_date(ctx.date_of(arg or "visit"), ctx.rng.choice(DATE_STYLES[ctx.variant])))]


def _slot_dt(ctx: ExportContext, arg: str | None) -> list[Fragment]:
    """A timestamp: the date is an entity, the time of day stays outside (guidelines)."""
    style = ctx.pick(("dmy", "dmy", "iso", "dMy"), ("ymd", "dmy_dash", "dmy"))
    return [Ent("DATE", export_date(ctx.date_of(arg or "visit"), style)), " " + time_of_day(ctx.rng)]


def _slot_pro(ctx: ExportContext, arg: str | None) -> list[Fragment]:
    return pro_ref(ctx, ctx._pro(arg))


def _slot_prol(ctx: ExportContext, arg: str | None) -> list[Fragment]:
    return pro_ref(ctx, ctx._pro(arg), role=True)


def _slot_poste(ctx: ExportContext, arg: str | None) -> list[Fragment]:
    """An internal extension, DECT or pager: digits only are PHONE (guidelines)."""
    word = ctx.pick(("poste ", "poste ", "DECT "), ("bip ", "poste ", "p. "))
    return [word, Ent("PHONE", digits(ctx.rng, 4))]


def _slot_ipp(ctx: ExportContext, arg: str | None) -> list[Fragment]:
    """IPP (default), ``nir``, ``rpps`` or ``finess``: identifiers of records and registries, never entities."""
    if arg == "nir":
        return [nir(ctx)]
    if arg == "rpps":
        return [luhn_number(ctx.rng, "10", 11)]
    if arg == "finess":
        return [ctx.hospital.finess]
    return [ipp(ctx)]


_SLOTS: dict[str, Callable[[ExportContext, str | None], list[Fragment]]] = {
    "d": _slot_d,
    "dt": _slot_dt,
    "pro": _slot_pro,
    "prol": _slot_prol,
    "poste": _slot_poste,
    "ipp": _slot_ipp,
}


def expand(ctx: ExportContext, template: str) -> list[Fragment]:
    """The fragments of ``template``: this module's slots first, then the context's."""
    out: list[Fragment] = []
    position = 0
    for match in SLOT_RE.finditer(template):
        out.append(template[position : match.start()])
        handler = _SLOTS.get(match.group(1))
        out.extend(handler(ctx, match.group(2)) if handler else ctx.slot(match.group(1), match.group(2)))
        position = match.end()
    out.append(template[position:])
    for index in range(1, len(out)):  # "par Dr KERBRAT Y." ends the sentence: no second full stop
        previous, frag = out[index - 1], out[index]
        if isinstance(previous, Ent) and previous.value.endswith(".") and isinstance(frag, str) and frag[:1] == ".":
            out[index] = frag[1:]
    return [f for f in out if f != ""]


# -- what each document type says -----------------------------------------------------------------------------


@dataclass(slots=True)
class Content:
    """A document's title and its sections (heading, lines of fragments), written by any layout."""

    title: str
    sections: list[tuple[str, list[list[Fragment]]]]


def clin(ctx: ExportContext, bank: tuple[str, ...], k: int = 1) -> list[str]:
    """``k`` sentences of clinical prose (no identifier; eponyms, scores, lab values and times included)."""
    rng = ctx.rng
    e = "e" if ctx.patient.sex == "F" else ""
    return [clinical.fill_numbers(rng, s, age=str(ctx.age), e=e) for s in rng.sample(bank, min(k, len(bank)))]


def motif(ctx: ExportContext) -> str:
    kind = ctx.department.kind if ctx.department.kind in clinical.MOTIFS else "medical"
    return ctx.rng.choice(clinical.MOTIFS[kind])


_TEAM = (
    (
        "Avis de {pro:colleague} le {d:exam} : pas de contre-indication.",
        "Patient{e} vu{e} par {prol:intern} puis par {pro:head}.",
        "Transmission à {prol:nurse}, {poste}.",
        "Discuté en staff le {d:exam} avec {pro:colleague}.",
        "Appel de {rel} le {d:exam}, informé{e} de l'évolution.",
    ),
    (
        "Conduite à tenir validée par {pro:colleague} ({poste}).",
        "Examiné{e} conjointement avec {prol:intern}.",
        "Relève assurée par {prol:nurse} le {d:exam}.",
        "Réunion de concertation du {d:exam} : avis de {pro:head}.",
        "Contact téléphonique avec {rel:tel} le {d:exam}.",
    ),
)
_SOCIAL = (
    ("Vit à domicile avec {rel}.", "Originaire de {city:birth}.", "Personne à prévenir : {rel:tel}."),
    ("Demeure à {city:home} avec {rel}.", "Né{e} à {city:birth}.", "Personne de confiance : {rel:tel}."),
)
_FOLLOW = (
    (
        "Rendez-vous de contrôle le {d:next} avec {pro:colleague}.",
        "Secrétariat : {tel:service} {poste}.",
        "Suivi par le médecin traitant, {pro:gp}, joignable au {tel:gp}.",
    ),
    (
        "Revoir en consultation le {d:next} (secrétariat {tel:service}).",
        "Contact service : {tel:hosp}, {poste}.",
        "Courrier adressé à {pro:gp}, {addr:gp}.",
    ),
)
HEADINGS = {
    "motif": ("Motif d'hospitalisation", "Motif de l'admission"),
    "atcd": ("Antécédents", "Antécédents personnels et familiaux"),
    "social": ("Mode de vie", "Contexte social"),
    "hdm": ("Histoire de la maladie", "Anamnèse"),
    "exam": ("Examen clinique", "Examen à l'entrée"),
    "evol": ("Évolution", "Évolution dans le service"),
    "ttt": ("Traitement de sortie", "Ordonnance de sortie"),
    "concl": ("Conclusion", "Synthèse"),
    "follow": ("Suivi", "Suites prévues"),
    "indic": ("Indication", "Renseignements cliniques"),
    "result": ("Résultats", "Compte rendu"),
    "macro": ("Macroscopie", "Examen macroscopique"),
    "micro": ("Microscopie", "Examen histologique"),
    "bio": ("Résultats biologiques", "Bilan biologique"),
}
TITLES = {
    "hospitalisation_report": (("Compte rendu d'hospitalisation",), ("CR d'hospitalisation", "Compte-rendu de séjour")),
    "discharge_letter": (("Lettre de liaison à la sortie",), ("Courrier de sortie",)),
    "operative_report": (("Compte rendu opératoire",), ("Protocole opératoire",)),
    "consultation": (("Compte rendu de consultation",), ("Consultation externe",)),
    "emergency": (("Dossier de passage aux urgences",), ("Résumé de passage SAU",)),
    "imaging": (("Compte rendu d'imagerie",), ("Résultat d'examen radiologique",)),
    "prescription": (("Ordonnance",), ("Prescription médicamenteuse",)),
    "pathology": (("Compte rendu d'anatomie pathologique",), ("Examen anatomo-cyto-pathologique",)),
    "referral_letter": (("Lettre d'adressage",), ("Demande d'avis spécialisé",)),
    "patient_letter": (("Courrier au patient",), ("Information patient",)),
    "convocation": (("Convocation",), ("Avis de rendez-vous",)),
    "biology": (("Résultats de biologie médicale",), ("Compte rendu de biologie",)),
}
ANALYTES = (
    ("Hémoglobine", "g/dL", "12,0-16,0"),
    ("Leucocytes", "G/L", "4,0-10,0"),
    ("Plaquettes", "G/L", "150-400"),
    ("Sodium", "mmol/L", "136-145"),
    ("Potassium", "mmol/L", "3,5-5,0"),
    ("Créatinine", "µmol/L", "45-90"),
    ("CRP", "mg/L", "<5"),
    ("TSH", "mUI/L", "0,4-4,0"),
)


def content(ctx: ExportContext, doc_type: str) -> Content:
    """What a document of ``doc_type`` says, in the variant's wording (its layout is the style's business)."""
    rng, v = ctx.rng, ctx.variant

    def h(key: str) -> str:
        return HEADINGS[key][v]

    def lines(*templates: str) -> list[list[Fragment]]:
        return [expand(ctx, t) for t in templates]

    def one(bank: tuple[tuple[str, ...], tuple[str, ...]]) -> str:
        return ctx.pick(*bank)

    title = ctx.pick(*TITLES[doc_type])
    atcd = ", ".join(rng.sample(clinical.ANTECEDENTS, 3)) + f" ; {rng.choice(clinical.SURGERIES)} en {{year:surgery}}."
    drugs = [d + "." for d in clinical.drug_lines(rng, rng.randrange(2, 5))]
    s: list[tuple[str, list[list[Fragment]]]] = []
    if doc_type in ("hospitalisation_report", "discharge_letter"):
        stay = ctx.pick(
            ("Hospitalisé{e} du {d:admission} au {d:discharge} en {svc} pour " + motif(ctx) + ".",),
            ("Séjour en {svc} du {d:admission} au {d:discharge}, motif : " + motif(ctx) + ".",),
        )
        s.append((h("motif"), lines(stay, *clin(ctx, clinical.TIME_SENTENCES))))
        s.append((h("atcd"), lines(atcd)))
        s.append((h("social"), lines(*rng.sample(_SOCIAL[v], 2), *clin(ctx, clinical.HOMONYM_SENTENCES))))
        if doc_type == "hospitalisation_report":
            s.append((h("exam"), lines(*clin(ctx, clinical.EXAM, 3))))
        s.append((h("evol"), lines(*rng.sample(_TEAM[v], 2), *clin(ctx, clinical.NEGATIONS, 2))))
        s.append((h("ttt"), lines(*drugs)))
        s.append((h("concl"), lines(*clin(ctx, clinical.CONCLUSIONS))))
        s.append((h("follow"), lines(*rng.sample(_FOLLOW[v], 2))))
    elif doc_type == "operative_report":
        team = (
            ("Date : {d:visit} - début {time}, fin {time}", "Intervention du {d:visit} de {time} à {time}"),
            ("Opérateur : {pro:author}", "Chirurgien : {pro:author}"),
            ("Aide opératoire : {prol:intern}", "1er aide : {prol:intern}"),
            ("Anesthésiste : {pro:colleague}", "Anesthésie réalisée par {pro:colleague}"),
            ("IBODE : {pro:nurse}", "Instrumentation : {prol:nurse}"),
        )
        s.append((("Intervention", "Équipe opératoire")[v], lines(*(pair[v] for pair in team))))
        indication = ("Indication posée en consultation le {d:prev}.", "Décision prise en RCP du {d:prev}.")[v]
        s.append((h("indic"), lines(motif(ctx) + ".", indication)))
        s.append(
            (("Geste", "Procédure")[v], lines(rng.choice(clinical.SURGERIES) + ".", *clin(ctx, clinical.NEGATIONS)))
        )
        s.append((h("follow"), lines(*rng.sample(_FOLLOW[v], 2))))
    elif doc_type == "convocation":
        s.append(
            (
                ("Rendez-vous", "Votre rendez-vous")[v],
                lines(
                    ("Le {d:next} à {rdv}, {site}, service {svc}.", "Date et heure : {d:next}, {rdv} ({svc}, {site}).")[
                        v
                    ],
                    (
                        "Se présenter au bureau des admissions muni{e} de la carte Vitale.",
                        "Merci d'apporter votre carte Vitale et vos derniers examens.",
                    )[v],
                    (
                        "En cas d'empêchement : {tel:service} {poste}.",
                        "Pour annuler : {tel:service} ou {mail:service}.",
                    )[v],
                ),
            )
        )
    elif doc_type in ("consultation", "referral_letter", "patient_letter"):
        opening = {
            "consultation": (
                "Vu{e} en consultation le {d:visit} pour " + motif(ctx) + ".",
                "Consultation du {d:visit}, motif : " + motif(ctx) + ".",
            ),
            "referral_letter": (
                "Je vous adresse {pat}, {age} ans, pour " + motif(ctx) + ".",
                "Merci de bien vouloir recevoir {pat:full} (né{e} le {d:birth}) pour " + motif(ctx) + ".",
            ),
            "patient_letter": (
                "Suite à votre venue le {d:prev}, voici vos résultats.",
                "Vous avez été reçu{e} dans le service le {d:prev} ; voici la synthèse.",
            ),
        }[doc_type][v]
        s.append((h("motif") if doc_type == "consultation" else ("Objet", "Concerne")[v], lines(opening)))
        s.append((h("atcd"), lines(atcd, *rng.sample(_SOCIAL[v], 1))))
        s.append((h("exam"), lines(*clin(ctx, clinical.EXAM, 2), *clin(ctx, clinical.HOMONYM_SENTENCES))))
        s.append((h("concl"), lines(*clin(ctx, clinical.CONCLUSIONS), *rng.sample(_FOLLOW[v], 2))))
    elif doc_type == "emergency":
        mode = rng.choice(("VSAV", "SMUR", "moyens personnels"))
        s.append(
            (
                ("Admission", "Accueil")[v],
                lines(
                    ("Arrivée le {dt:visit}, " + mode + ".", "Entrée SAU : {dt:visit} (" + mode + ")")[v],
                    (
                        "IOA : {prol:nurse} - Médecin : {pro:author}",
                        "Tri par {prol:nurse}, pris en charge par {pro:author}",
                    )[v],
                    one((("Accompagné{e} de {rel}.",), ("Adressé{e} par {pro:gp}.",))),
                ),
            )
        )
        s.append((h("motif"), lines(motif(ctx) + ".", *clin(ctx, clinical.TIME_SENTENCES))))
        s.append((h("exam"), lines(*clin(ctx, clinical.EXAM, 2), *clin(ctx, clinical.NEGATIONS))))
        leave = ("Sortie le {d:visit} à {time}.", "Départ du service : {d:visit}, retour à domicile.")[v]
        s.append((("Devenir", "Orientation")[v], lines(rng.choice(_TEAM[v]), leave)))
    elif doc_type == "imaging":
        asked = ("Demandé par {pro:gp}.", "Prescripteur : {pro:gp}, {tel:gp}.")[v]
        s.append((h("indic"), lines(motif(ctx) + ".", asked)))
        done = ("Examen du {dt:visit}, manipulateur : {prol:nurse}.", "Acquisition le {dt:visit} ({prol:nurse}).")[v]
        s.append(("Technique", lines(done)))
        before = ("Comparaison avec l'examen du {d:prev}.", "Examen antérieur de référence : {d:prev}.")[v]
        s.append((h("result"), lines(*clin(ctx, clinical.NEGATIONS, 2), before)))
        s.append((h("concl"), lines(*clin(ctx, clinical.CONCLUSIONS))))
    elif doc_type == "prescription":
        s.append((("Prescription", "Traitement")[v], lines(*drugs, ("À renouveler 3 fois.", "QSP 3 mois.")[v])))
        signed = (
            "Prescrit le {d:visit} par {pro:author}, RPPS {ipp:rpps}.",
            "{pro:author} (RPPS {ipp:rpps}) - {d:visit}",
        )
        s.append(("", lines(signed[v])))
    elif doc_type == "pathology":
        sent = (
            "Prélèvement du {d:exam} adressé par {pro:colleague}.",
            "Pièce reçue le {d:exam}, préleveur : {pro:colleague}.",
        )
        s.append((h("indic"), lines(motif(ctx) + ".", sent[v])))
        s.append((h("macro"), lines(f"{rng.randrange(1, 6)} fragments de {rng.randrange(2, 30)} mm.")))
        s.append((h("micro"), lines(*clin(ctx, clinical.NEGATIONS, 2))))
        s.append((h("concl"), lines(*clin(ctx, clinical.CONCLUSIONS))))
    else:  # biology
        results = [
            f"{name} : {rng.randrange(1, 300)} {unit} (N : {ref})" for name, unit, ref in rng.sample(ANALYTES, 4)
        ]
        taken = (
            ("Prélevé le {dt:visit} par {prol:nurse}.", "Prescripteur : {pro:gp}."),
            ("Date et heure de prélèvement : {dt:visit} ({prol:nurse})", "Demandeur : {pro:gp}"),
        )[v]
        s.append((("Prélèvement", "Échantillon")[v], lines(*taken)))
        s.append((h("bio"), lines(*results, ("Antériorité du {d:prev}.", "Résultat précédent : {d:prev}.")[v])))
        s.append(
            (
                ("Validation", "Biologiste")[v],
                lines(("Validé par {pro:author} le {dt:visit}.", "{pro:author}, {dt:visit}")[v]),
            )
        )
    return Content(title, s)
