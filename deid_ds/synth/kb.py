"""Knowledge-base source files in the exact official formats: BAN ``adresses-XX.csv.gz`` and the Annuaire
Santé ``PS_LibreAcces_Personne_activite_*.txt`` (samples in ``tests/data/formats``).

The point is that the project's loaders are exercised on the real formats, so the details matter: the
BAN is a ``;``-separated CSV with the 23-column header, gzip-compressed, values kept as strings
(``01640``); the Annuaire is ``|``-separated, never quoted, every line (header included) ends with a
trailing ``|``, one line per activity. Both hold thousands of distractor entries, as the national
files do, so that a dictionary match is not a give-away. Files are byte-reproducible: rows are sorted,
gzip's header carries no name and ``mtime=0``.
"""

from __future__ import annotations

import csv
import gzip
import io
import math
import random
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path

from deid_ds.io.files import atomic_path
from deid_ds.synth.pools import Commune, strip_accents
from deid_ds.synth.world import STREET_TYPES, Address, Professional, Street, WorldBuilder, random_phone

BAN_HEADER: tuple[str, ...] = (
    "id",
    "id_fantoir",
    "numero",
    "rep",
    "nom_voie",
    "code_postal",
    "code_insee",
    "nom_commune",
    "code_insee_ancienne_commune",
    "nom_ancienne_commune",
    "x",
    "y",
    "lon",
    "lat",
    "type_position",
    "alias",
    "nom_ld",
    "libelle_acheminement",
    "nom_afnor",
    "source_position",
    "source_nom_voie",
    "certification_commune",
    "cad_parcelles",
)

ANNUAIRE_HEADER: tuple[str, ...] = (
    "Type d'identifiant PP",
    "Identifiant PP",
    "Identification nationale PP",
    "Code civilité d'exercice",
    "Libellé civilité d'exercice",
    "Code civilité",
    "Libellé civilité",
    "Nom d'exercice",
    "Prénom d'exercice",
    "Code profession",
    "Libellé profession",
    "Code catégorie professionnelle",
    "Libellé catégorie professionnelle",
    "Code type savoir-faire",
    "Libellé type savoir-faire",
    "Code savoir-faire",
    "Libellé savoir-faire",
    "Code mode exercice",
    "Libellé mode exercice",
    "Numéro SIRET site",
    "Numéro SIREN site",
    "Numéro FINESS site",
    "Numéro FINESS établissement juridique",
    "Identifiant technique de la structure",
    "Raison sociale site",
    "Enseigne commerciale site",
    "Complément destinataire (coord. structure)",
    "Complément point géographique (coord. structure)",
    "Numéro Voie (coord. structure)",
    "Indice répétition voie (coord. structure)",
    "Code type de voie (coord. structure)",
    "Libellé type de voie (coord. structure)",
    "Libellé Voie (coord. structure)",
    "Mention distribution (coord. structure)",
    "Bureau cedex (coord. structure)",
    "Code postal (coord. structure)",
    "Code commune (coord. structure)",
    "Libellé commune (coord. structure)",
    "Code pays (coord. structure)",
    "Libellé pays (coord. structure)",
    "Téléphone (coord. structure)",
    "Téléphone 2 (coord. structure)",
    "Télécopie (coord. structure)",
    "Adresse e-mail (coord. structure)",
    "Code Département (structure)",
    "Libellé Département (structure)",
    "Ancien identifiant de la structure",
    "Autorité d'enregistrement",
    "Code secteur d'activité",
    "Libellé secteur d'activité",
    "Code section tableau pharmaciens",
    "Libellé section tableau pharmaciens",
)
_COLUMN = {name: i for i, name in enumerate(ANNUAIRE_HEADER)}

#: Département -> rough centre (lat, lon); commune positions are synthetic offsets from it.
_DEP_CENTRES = {"22": (48.42, -2.85), "29": (48.25, -4.05), "35": (48.15, -1.65), "56": (47.85, -2.85)}

PROFESSION_CODES = {
    "Médecin": "10",
    "Infirmier": "60",
    "Masseur-Kinésithérapeute": "70",
    "Psychologue": "93",
    "Manipulateur ERM": "98",
    "Technicien de laboratoire médical": "86",
    "Pharmacien": "21",
    "Sage-Femme": "50",
    "Chirurgien-Dentiste": "40",
    "Orthophoniste": "91",
    "Diététicien": "95",
    "Ergothérapeute": "94",
    "Ostéopathe": "71",
    "Pédicure-Podologue": "80",
}
#: Professions of the distractor entries, weighted roughly as in the national file.
_DISTRACTOR_PROFESSIONS = (
    ("Médecin", 30),
    ("Infirmier", 30),
    ("Masseur-Kinésithérapeute", 10),
    ("Pharmacien", 8),
    ("Chirurgien-Dentiste", 5),
    ("Sage-Femme", 3),
    ("Psychologue", 5),
    ("Orthophoniste", 3),
    ("Manipulateur ERM", 2),
    ("Diététicien", 2),
    ("Pédicure-Podologue", 2),
)
_SPECIALTIES = (
    "Médecine Générale",
    "Cardiologie et maladies vasculaires",
    "Pneumologie",
    "Gastro-entérologie et hépatologie",
    "Neurologie",
    "Médecine interne",
    "Gériatrie",
    "Néphrologie",
    "Oncologie médicale",
    "Rhumatologie",
    "Chirurgie viscérale et digestive",
    "Chirurgie orthopédique et traumatologique",
    "Urologie",
    "Anesthésie-réanimation",
    "Radio-diagnostic et imagerie médicale",
    "Anatomie et cytologie pathologiques",
    "Biologie médicale",
    "Médecine d'urgence",
    "Psychiatrie",
    "Pédiatrie",
    "Ophtalmologie",
    "Dermatologie et vénéréologie",
    "Gynécologie-obstétrique",
    "Endocrinologie, diabète et maladies métaboliques",
    "Chirurgie vasculaire",
)


def _stable(text: str) -> int:
    """A hash that does not change between runs (``hash()`` is salted per process)."""
    return zlib.crc32(text.encode("utf-8"))


# -- coordinates ----------------------------------------------------------------------------------------


def lambert93(lon: float, lat: float) -> tuple[float, float]:
    """Project WGS84 longitude/latitude to Lambert-93 (the BAN's ``x``/``y``), GRS80 ellipsoid."""
    a, e = 6378137.0, 0.0818191910428158
    lon0, phi0, phi1, phi2 = math.radians(3), math.radians(46.5), math.radians(44), math.radians(49)

    def m(phi: float) -> float:
        return math.cos(phi) / math.sqrt(1 - (e * math.sin(phi)) ** 2)

    def t(phi: float) -> float:
        return math.tan(math.pi / 4 - phi / 2) / ((1 - e * math.sin(phi)) / (1 + e * math.sin(phi))) ** (e / 2)

    n = (math.log(m(phi1)) - math.log(m(phi2))) / (math.log(t(phi1)) - math.log(t(phi2)))
    big_f = m(phi1) / (n * t(phi1) ** n)
    rho0 = a * big_f * t(phi0) ** n
    rho = a * big_f * t(math.radians(lat)) ** n
    theta = n * (math.radians(lon) - lon0)
    return 700000 + rho * math.sin(theta), 6600000 + rho0 - rho * math.cos(theta)


#: Overseas départements: the BAN gives ``x``/``y`` in the local UTM projection (zone, southern hemisphere).
_UTM_ZONES = {"971": (20, False), "972": (20, False), "973": (22, False), "974": (40, True), "975": (21, False)}
_UTM_ZONES["976"] = (38, True)


def utm(lon: float, lat: float, zone: int, south: bool) -> tuple[float, float]:
    """Project WGS84 longitude/latitude to UTM ``zone`` (the overseas BAN files' ``x``/``y``)."""
    a, f, k0 = 6378137.0, 1 / 298.257222101, 0.9996
    e2 = f * (2 - f)
    ep2 = e2 / (1 - e2)
    phi, lam = math.radians(lat), math.radians(lon - (zone * 6 - 183))
    n = a / math.sqrt(1 - e2 * math.sin(phi) ** 2)
    t, c = math.tan(phi) ** 2, ep2 * math.cos(phi) ** 2
    big_a = lam * math.cos(phi)
    m = a * (
        (1 - e2 / 4 - 3 * e2**2 / 64 - 5 * e2**3 / 256) * phi
        - (3 * e2 / 8 + 3 * e2**2 / 32 + 45 * e2**3 / 1024) * math.sin(2 * phi)
        + (15 * e2**2 / 256 + 45 * e2**3 / 1024) * math.sin(4 * phi)
        - (35 * e2**3 / 3072) * math.sin(6 * phi)
    )
    x = 500000 + k0 * n * (
        big_a + (1 - t + c) * big_a**3 / 6 + (5 - 18 * t + t**2 + 72 * c - 58 * ep2) * big_a**5 / 120
    )
    y = k0 * (
        m
        + n
        * math.tan(phi)
        * (big_a**2 / 2 + (5 - t + 9 * c + 4 * c**2) * big_a**4 / 24 + (61 - 58 * t + t**2) * big_a**6 / 720)
    )
    return x, y + (10000000 if south else 0)


def projected(commune: Commune, lon: float, lat: float) -> tuple[float, float]:
    """The BAN's ``x``/``y``: Lambert-93 in mainland France and Corsica, UTM overseas."""
    zone = _UTM_ZONES.get(commune.departement)
    return utm(lon, lat, *zone) if zone else lambert93(lon, lat)


def commune_centre(commune: Commune) -> tuple[float, float]:
    """A synthetic but stable (lat, lon) for a commune, inside its département's area (its real centroid
    when the communes' list gives one)."""
    if commune.lat is not None and commune.lon is not None:
        return commune.lat, commune.lon
    lat0, lon0 = _DEP_CENTRES.get(commune.departement, (48.0, -2.5))
    h = _stable(commune.insee)
    return lat0 + ((h & 0xFFFF) / 0xFFFF - 0.5) * 0.6, lon0 + ((h >> 16) / 0xFFFF - 0.5) * 1.0


# -- BAN ------------------------------------------------------------------------------------------------


def add_distractor_streets(world: WorldBuilder, per_commune: int) -> None:
    """Streets no note mentions: what makes a gazetteer match ambiguous, as in the real BAN."""
    rng = world.rng
    for commune in world.communes:
        weight = 3 if commune.name in ("Rennes", "Brest", "Quimper", "Saint-Brieuc", "Vannes", "Lorient") else 1
        for _ in range(max(1, int(per_commune * weight * (0.5 + rng.random())))):
            street = world.new_street(commune, mentioned=False)
            for _ in range(rng.randrange(1, 12)):
                street.numbers.add(rng.randrange(1, 120))


def _former_code(commune: Commune, former: str, taken: set[str]) -> str:
    dep = commune.insee[:2]  # the INSEE code's first two characters ("97" overseas: three digits follow)
    code = int(commune.insee[2:]) if commune.insee[2:].isdigit() else 0
    candidate = 100 + _stable(former) % 800
    while f"{dep}{candidate:03d}" in taken or candidate == code:
        candidate = candidate % 998 + 1
    return f"{dep}{candidate:03d}"


def afnor(text: str) -> str:
    return " ".join(strip_accents(text).upper().replace("'", " ").replace("-", " ").split())


def ban_rows(world: WorldBuilder, departement: str, seed: int) -> list[list[str]]:
    """The BAN rows of one département: every numbered address of every street kept in the BAN."""
    return list(iter_ban_rows(world, departement, seed))


def iter_ban_rows(world: WorldBuilder, departement: str, seed: int) -> Iterator[list[str]]:
    """:func:`ban_rows` one row at a time: a département of a study-size sample has hundreds of thousands."""
    rng = random.Random(_stable(f"ban-{departement}-{seed}"))
    taken = {c.insee for c in world.communes}
    for commune in sorted((c for c in world.communes if c.departement == departement), key=lambda c: c.insee):
        lat0, lon0 = commune_centre(commune)
        for street in sorted(world.streets[commune.insee], key=lambda s: s.name):
            if not street.in_ban:
                continue
            code = format(_stable(commune.insee + street.name) % 36**6, "x")[:6].rjust(6, "0")
            fantoir = f"{commune.insee}_{code[:4].upper()}" if _stable(street.name) % 2 else ""
            former_code = _former_code(commune, street.former, taken) if street.former else ""
            numbers = sorted([(n, "") for n in street.numbers] + sorted(street.reps)) or [(rng.randrange(1, 40), "")]
            slat, slon = lat0 + rng.uniform(-0.03, 0.03), lon0 + rng.uniform(-0.04, 0.04)
            for number, rep in numbers:
                lat, lon = slat + rng.uniform(-0.002, 0.002), slon + rng.uniform(-0.002, 0.002)
                x, y = projected(commune, lon, lat)
                yield [
                    f"{commune.insee}_{code}_{number:05d}{'_' + rep if rep else ''}",
                    fantoir,
                    str(number),
                    rep,
                    street.name,
                    street.postcode,
                    commune.insee,
                    commune.name,
                    former_code,
                    street.former,
                    f"{x:.2f}",
                    f"{y:.2f}",
                    f"{lon:.6f}",
                    f"{lat:.6f}",
                    rng.choice(("entrée", "entrée", "entrée", "segment", "parcelle", "bâtiment")),
                    "",
                    street.label if street.is_lieu_dit and rng.random() < 0.3 else "",
                    commune.routing_label,
                    afnor(street.name),
                    rng.choice(("commune", "commune", "cadastre", "arcep", "laposte")),
                    rng.choice(("commune", "commune", "cadastre")),
                    rng.choice(("1", "1", "0")),
                    f"{commune.insee}000{rng.choice('ABCDEFGHKZ')}{rng.choice('ABCDEHKN')}{rng.randrange(1, 2000):04d}"
                    if rng.random() < 0.8
                    else "",
                ]


def write_ban(rows: Iterable[list[str]], path: Path) -> int:
    """Write rows as the BAN publishes them: UTF-8, ``;``, standard quoting, gzip with no name and mtime 0.

    Rows may come one at a time (a département of a study-size sample has hundreds of thousands: as lists
    they weigh several times their text). The text is compressed in one piece all the same: deflate's bytes
    depend on how its input is cut, and the same sample must give the same bytes. Returns the number of rows.
    """
    text = io.StringIO()
    writer = csv.writer(text, delimiter=";", lineterminator="\n")
    writer.writerow(BAN_HEADER)
    count = 0
    for row in rows:
        writer.writerow(row)
        count += 1
    with atomic_path(path) as tmp, open(tmp, "wb") as raw:
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as gz:
            gz.write(text.getvalue().encode("utf-8"))
    return count


# -- Annuaire Santé -------------------------------------------------------------------------------------


def _line(values: dict[str, str]) -> str:
    fields = [""] * len(ANNUAIRE_HEADER)
    for name, value in values.items():
        fields[_COLUMN[name]] = value.replace("|", " ")
    return "|".join(fields) + "|"


def _person_fields(pro: Professional, rng: random.Random, ident: str, id_type: str) -> dict[str, str]:
    last = pro.last.upper()
    if rng.random() < 0.7:
        last = strip_accents(last)
    first = pro.first if rng.random() < 0.75 else strip_accents(pro.first).upper()
    if "-" in first and rng.random() < 0.2:
        first = first.replace("-", " ")  # the directory writes "Jean Pierre" where notes write "Jean-Pierre"
    fields = {
        "Type d'identifiant PP": id_type,
        "Identifiant PP": ident,
        "Identification nationale PP": id_type + ident,
        "Code civilité": "MME" if pro.sex == "F" else "M",
        "Libellé civilité": "Madame" if pro.sex == "F" else "Monsieur",
        "Nom d'exercice": last,
        "Prénom d'exercice": first,
        "Code profession": PROFESSION_CODES.get(pro.profession, "10"),
        "Libellé profession": pro.profession,
        "Code catégorie professionnelle": "E" if pro.student else "C",
        "Libellé catégorie professionnelle": "Etudiant" if pro.student else "Civil",
    }
    if pro.profession == "Médecin":
        title = pro.title or ("DR" if not pro.student else "")
        if title:
            fields["Code civilité d'exercice"] = "PR" if title == "Pr" else "DR"
            fields["Libellé civilité d'exercice"] = "Professeur" if title == "Pr" else "Docteur"
        specialty = pro.specialty or "Médecine Générale"
        fields.update(
            {
                "Code type savoir-faire": "S",
                "Libellé type savoir-faire": "Spécialité ordinale",
                "Code savoir-faire": f"SM{10 + _stable(specialty) % 80:02d}"
                if specialty != "Médecine Générale"
                else "SM54",
                "Libellé savoir-faire": f"Qualifié en {specialty}"
                if specialty != "Médecine Générale"
                else "Spécialiste en Médecine Générale",
            }
        )
    return fields


def _site_fields(
    address: Address, *, name: str, phone: str, fax: str = "", email: str = "", geo: str = ""
) -> dict[str, str]:
    street: Street = address.street
    commune = street.commune
    type_code, type_label = (
        ("LD", "Lieu-dit") if street.is_lieu_dit else (STREET_TYPES[street.type_word][0], street.type_word)
    )
    postcode = address.postcode
    cedex = f" {address.cedex}" if address.cedex else ""
    return {
        "Raison sociale site": name,
        "Complément point géographique (coord. structure)": geo,
        "Numéro Voie (coord. structure)": str(address.number or ""),
        "Indice répétition voie (coord. structure)": address.rep[:1].upper(),
        "Code type de voie (coord. structure)": type_code,
        "Libellé type de voie (coord. structure)": type_label,
        "Libellé Voie (coord. structure)": afnor(street.label),
        "Mention distribution (coord. structure)": address.bp,
        "Bureau cedex (coord. structure)": f"{postcode} {commune.routing_label}{cedex}",
        "Code postal (coord. structure)": postcode,
        "Code commune (coord. structure)": commune.insee,
        "Libellé commune (coord. structure)": commune.name,
        "Téléphone (coord. structure)": phone,
        "Télécopie (coord. structure)": fax,
        "Adresse e-mail (coord. structure)": email,
    }


def annuaire_lines(world: WorldBuilder, distractors: int, seed: int) -> list[str]:
    """One line per activity of every professional in the directory, plus ``distractors`` others."""
    rng = random.Random(_stable(f"annuaire-{seed}"))
    used_ids: set[str] = set()

    def new_id(rpps: bool, dep: str) -> tuple[str, str]:
        while True:
            ident = f"10{rng.randrange(10**8, 10**9)}" if rpps else f"{dep[:2]}{rng.randrange(10**6, 10**7)}"
            if ident not in used_ids:
                used_ids.add(ident)
                return ident, "8" if rpps else "0"

    lines: list[tuple[str, str]] = []
    for pro in world.professionals:
        if not pro.in_directory:
            continue
        dep = (
            pro.hospital.address.commune.departement
            if pro.hospital
            else pro.practice.commune.departement
            if pro.practice
            else "35"
        )
        ident, id_type = new_id(pro.profession == "Médecin" or rng.random() < 0.5, dep)
        person = _person_fields(pro, rng, ident, id_type)
        activities = []
        if pro.hospital is not None:
            h = pro.hospital
            site = _site_fields(
                h.address,
                name=afnor(h.name),
                phone=h.phone,
                fax=rng.choice(("", h.phone[:6] + f"{rng.randrange(10000):04d}")),
                email=rng.choice(("", "", f"contact@{h.domain}")),
                geo=afnor(h.site) if rng.random() < 0.5 else "",
            )
            site.update(
                {
                    "Code mode exercice": "S",
                    "Libellé mode exercice": "Salarié",
                    "Numéro SIRET site": h.siret,
                    "Numéro SIREN site": h.siret[:9],
                    "Numéro FINESS site": h.finess,
                    "Numéro FINESS établissement juridique": h.finess[:2] + "0" + h.finess[4:] + "1",
                    "Identifiant technique de la structure": "F" + h.finess,
                    "Ancien identifiant de la structure": "1" + h.finess,
                    "Autorité d'enregistrement": "ARS/ARS/ARS",
                    "Code secteur d'activité": "SA01" if h.public else "SA03",
                    "Libellé secteur d'activité": "Etablissement Public de santé" if h.public else "Etab. Privé PSPH",
                }
            )
            activities.append(site)
        if pro.practice is not None or (
            pro.hospital is not None and pro.profession == "Médecin" and rng.random() < 0.1
        ):
            practice = pro.practice or world.new_address(home=False)
            tech = f"C{rng.randrange(10**10, 10**11)}"
            site = _site_fields(
                practice,
                name=f"CABINET DU DR {afnor(pro.last)}"
                if pro.profession == "Médecin"
                else f"CABINET {afnor(pro.last)}",
                phone=pro.phone or random_phone(rng, practice.commune.departement),
                email=pro.email if rng.random() < 0.6 else "",
            )
            site.update(
                {
                    "Code mode exercice": "L",
                    "Libellé mode exercice": "Libéral",
                    "Identifiant technique de la structure": tech,
                    "Ancien identifiant de la structure": "3" + tech[1:],
                    "Autorité d'enregistrement": "CNOM/CNOM/ARS" if pro.profession == "Médecin" else "ARS/CPAM/CPAM",
                    "Code secteur d'activité": rng.choice(("SA07", "SA08")),
                    "Libellé secteur d'activité": "Cabinet individuel",
                }
            )
            if site["Code secteur d'activité"] == "SA08":
                site["Libellé secteur d'activité"] = "Cabinet de groupe"
            activities.append(site)
        for activity in activities or [{"Autorité d'enregistrement": "ARS//"}]:
            lines.append((id_type + ident, _line({**person, **activity})))

    names = [p for p, _ in _DISTRACTOR_PROFESSIONS]
    weights = [w for _, w in _DISTRACTOR_PROFESSIONS]
    for _ in range(distractors):
        profession = rng.choices(names, weights)[0]
        pro = world.new_professional(
            profession,
            role="distractor",
            specialty=rng.choice(_SPECIALTIES) if profession == "Médecin" else "",
            title="Dr" if profession == "Médecin" else "",
        )
        world.professionals.pop()  # distractors exist only in the directory
        commune = world.pick_commune()
        ident, id_type = new_id(
            profession in ("Médecin", "Pharmacien", "Chirurgien-Dentiste", "Sage-Femme") or rng.random() < 0.6,
            commune.departement,
        )
        person = _person_fields(pro, rng, ident, id_type)
        if rng.random() < 0.4:  # many real lines carry no practice site at all
            lines.append(
                (id_type + ident, _line({**person, "Autorité d'enregistrement": rng.choice(("ARS//", "ARS/ARS/ARS"))}))
            )
            continue
        address = world.new_address(commune, home=False)
        address.street.in_ban = True
        liberal = rng.random() < 0.6
        site = _site_fields(
            address,
            name=f"CABINET {afnor(pro.last)}" if liberal else f"CENTRE DE SANTE DE {afnor(commune.name)}",
            phone=random_phone(rng, commune.departement),
            email=f"{pro.first[0].lower()}.{afnor(pro.last).lower().replace(' ', '')}"
            f"@{rng.choice(('orange.fr', 'wanadoo.fr', 'sante-bretagne.fr'))}"
            if rng.random() < 0.2
            else "",
        )
        site.update(
            {
                "Code mode exercice": "L" if liberal else "S",
                "Libellé mode exercice": "Libéral" if liberal else "Salarié",
                "Identifiant technique de la structure": f"C{rng.randrange(10**10, 10**11)}",
                "Autorité d'enregistrement": "CNOM/CNOM/ARS" if profession == "Médecin" else "ARS/CPAM/CPAM",
                "Code secteur d'activité": "SA07" if liberal else "SA09",
                "Libellé secteur d'activité": "Cabinet individuel" if liberal else "Centre de santé",
            }
        )
        lines.append((id_type + ident, _line({**person, **site})))
    lines.sort(key=lambda item: item[0])
    return ["|".join(ANNUAIRE_HEADER) + "|"] + [line for _, line in lines]


def write_annuaire(lines: list[str], path: Path) -> None:
    """UTF-8, no BOM, ``\\n`` line ends (the published mirror's), trailing ``|`` already on every line.

    Written line by line rather than joined: the directory of a study-size sample has hundreds of thousands.
    """
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8", newline="\n") as out:
        for line in lines:
            out.write(line)
            out.write("\n")
