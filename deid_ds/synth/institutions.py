"""Hospitals, their departments and staff.

Every hospital gets the departments the document types need (emergencies, imaging, pathology, the
laboratory) plus a few medical and surgical ones, each with a head, physicians, interns, nurses and
secretaries: letterheads list them, letters are signed and dictated by them, copies go to them.
Institution names follow the guidelines' traps: ``CHU de [Rennes]`` holds a city, ``Centre Hospitalier
Yves Le Foll`` holds a person's name that is *not* annotated.
"""

from __future__ import annotations

import random

from deid_ds.synth.world import Address, Department, Hospital, WorldBuilder, ascii_slug, random_phone

#: department name -> (kind, specialty of its physicians)
DEPARTMENTS: dict[str, tuple[str, str]] = {
    "Cardiologie": ("medical", "Cardiologie et maladies vasculaires"),
    "Pneumologie": ("medical", "Pneumologie"),
    "Gastro-entérologie": ("medical", "Gastro-entérologie et hépatologie"),
    "Neurologie": ("medical", "Neurologie"),
    "Médecine interne": ("medical", "Médecine interne"),
    "Gériatrie": ("medical", "Gériatrie"),
    "Néphrologie": ("medical", "Néphrologie"),
    "Oncologie médicale": ("medical", "Oncologie médicale"),
    "Rhumatologie": ("medical", "Rhumatologie"),
    "Endocrinologie-Diabétologie": ("medical", "Endocrinologie, diabète et maladies métaboliques"),
    "Chirurgie digestive": ("surgical", "Chirurgie viscérale et digestive"),
    "Chirurgie orthopédique et traumatologique": ("surgical", "Chirurgie orthopédique et traumatologique"),
    "Urologie": ("surgical", "Urologie"),
    "Chirurgie vasculaire": ("surgical", "Chirurgie vasculaire"),
    "Gynécologie-Obstétrique": ("surgical", "Gynécologie-obstétrique"),
    "Accueil des Urgences": ("emergency", "Médecine d'urgence"),
    "Imagerie médicale": ("imaging", "Radio-diagnostic et imagerie médicale"),
    "Anatomie et Cytologie Pathologiques": ("pathology", "Anatomie et cytologie pathologiques"),
    "Laboratoire de Biologie Médicale": ("biology", "Biologie médicale"),
}

#: Eponyms of hospitals: the person's name stays unannotated (an institution name).
_EPONYMS = (
    "Yves Le Foll",
    "René Pleven",
    "Guillaume Régnier",
    "Laennec",
    "Morvan",
    "Jean Jaurès",
    "Marie Curie",
    "Pierre Loti",
    "Ambroise Paré",
    "Hôtel-Dieu",
    "Pontchaillou",
    "La Cavale Blanche",
)
_SITES = (
    "Hôpital Sud",
    "Hôpital Nord",
    "Site principal",
    "Bâtiment B",
    "Pavillon Laennec",
    "Hôpital Morvan",
    "Hôpital de la Cavale Blanche",
    "Hôpital Pontchaillou",
    "Pôle Femme-Enfant",
    "Bâtiment des Urgences",
)


def _hospital_name(rng: random.Random, city: str, big: bool) -> tuple[tuple[str, str | None], ...]:
    style = rng.randrange(4)
    if big:
        return (
            (("CHU de ", None), (city, "VILLE"))
            if style < 3
            else (("Centre Hospitalier Universitaire de ", None), (city, "VILLE"))
        )
    if style == 0:
        return (("Centre Hospitalier de ", None), (city, "VILLE"))
    if style == 1:
        return (("CH ", None), (city, "VILLE"))
    if style == 2:
        return ((f"Centre Hospitalier {rng.choice(_EPONYMS[:4])}", None),)
    return (
        (f"Clinique {rng.choice(('Sainte-Marie', 'Saint-Joseph', 'de la Sagesse', 'des Augustines', 'du Ter'))}", None),
    )


def build_hospitals(world: WorldBuilder, count: int = 6) -> list[Hospital]:
    """``count`` hospitals in the biggest towns of the four départements (two university hospitals)."""
    rng = world.rng
    towns = [
        c
        for c in world.communes
        if c.name
        in (
            "Rennes",
            "Brest",
            "Saint-Brieuc",
            "Vannes",
            "Lorient",
            "Quimper",
            "Saint-Malo",
            "Morlaix",
            "Pontivy",
            "Lannion",
            "Fougères",
            "Vitré",
        )
    ]
    rng.shuffle(towns)
    towns.sort(key=lambda c: c.name not in ("Rennes", "Brest"))
    hospitals = []
    for index, commune in enumerate(towns[:count]):
        big = index < 2
        name_parts = _hospital_name(rng, commune.name, big)
        street = world.new_street(commune, mentioned=True, lieu_dit=False)
        number = rng.randrange(1, 60)
        street.numbers.add(number)
        cedex_code = f"{commune.departement}{rng.randrange(0, 1000):03d}"
        cedex = f"CEDEX {rng.randrange(1, 10)}" if rng.random() < 0.6 else "CEDEX"
        bp = f"{rng.choice(('CS', 'BP'))} {rng.randrange(10, 99999) if rng.random() < 0.5 else rng.randrange(10, 999)}"
        address = Address(street, number, cedex=cedex, cedex_postcode=cedex_code, bp=bp if rng.random() < 0.7 else "")
        slug = ascii_slug(commune.name, "-")
        domain = (
            f"chu-{slug}.fr"
            if big
            else rng.choice((f"ch-{slug}.fr", f"ch{ascii_slug(commune.name)}.fr", f"hopital-{slug}.fr"))
        )
        dep = commune.departement
        hospital = Hospital(
            name_parts,
            rng.choice(_SITES),
            address,
            random_phone(rng, dep),
            domain,
            {},
            finess=f"{dep}0{rng.randrange(10**5, 10**6)}",
            siret=f"26{dep}{rng.randrange(10**9, 10**10)}",
        )
        chosen = [d for d, (kind, _) in DEPARTMENTS.items() if kind not in ("medical", "surgical")]
        chosen += rng.sample([d for d, (k, _) in DEPARTMENTS.items() if k == "medical"], 5)
        chosen += rng.sample([d for d, (k, _) in DEPARTMENTS.items() if k == "surgical"], 3)
        for name in chosen:
            hospital.departments[name] = _department(world, hospital, name, big)
        hospitals.append(hospital)
    world.hospitals = hospitals
    return hospitals


def _department(world: WorldBuilder, hospital: Hospital, name: str, big: bool) -> Department:
    rng = world.rng
    kind, specialty = DEPARTMENTS[name]
    staff = []
    head_title = "Pr" if big and rng.random() < 0.7 else "Dr"
    new = world.new_professional
    staff.append(
        new(
            "Médecin",
            role="chef de service",
            specialty=specialty,
            title=head_title,
            hospital=hospital,
            domain=hospital.domain,
        )
    )
    for _ in range(rng.randrange(3, 7)):
        title = "Pr" if big and rng.random() < 0.15 else "Dr"
        staff.append(
            new(
                "Médecin", role="praticien", specialty=specialty, title=title, hospital=hospital, domain=hospital.domain
            )
        )
    for _ in range(rng.randrange(1, 3)):
        staff.append(
            new("Médecin", role="interne", specialty=specialty, hospital=hospital, domain=hospital.domain, student=True)
        )
    for _ in range(rng.randrange(2, 4)):
        staff.append(new("Secrétaire médicale", role="secrétaire", hospital=hospital))
    if kind not in ("pathology", "biology"):
        for _ in range(rng.randrange(2, 5)):
            staff.append(new("Infirmier", role="IDE", hospital=hospital))
        staff.append(new("Infirmier", role="cadre de santé", hospital=hospital))
    if kind == "imaging":
        staff.append(new("Manipulateur ERM", role="manipulateur", hospital=hospital))
    if kind == "biology":
        staff.append(new("Technicien de laboratoire médical", role="technicien", hospital=hospital))
    if kind == "medical" and rng.random() < 0.6:
        staff.append(new("Masseur-Kinésithérapeute", role="kinésithérapeute", hospital=hospital))
        staff.append(new("Psychologue", role="psychologue", hospital=hospital))
    slug = ascii_slug(name.split()[0].split("-")[0])[:10]
    email = f"{rng.choice(('secretariat', 'sec', 'secr'))}.{slug}@{hospital.domain}"
    head = hospital.phone[:6]
    phone = head + f"{rng.randrange(0, 10000):04d}"
    fax = head + f"{rng.randrange(0, 10000):04d}"
    for pro in staff:
        pro.phone = phone
    return Department(name, kind, staff, phone, fax, email)


def hospital_professionals(hospitals: list[Hospital]) -> list:
    return [p for h in hospitals for d in h.departments.values() for p in d.staff]


#: Hospitals of ``--geography france`` outside Brittany: city, département, name parts, site (never annotated).
_ELSEWHERE = (
    ("Paris", "75", (("Assistance Publique - Hôpitaux de ", None), ("Paris", "VILLE")), "Hôpital Pitié-Salpêtrière"),
    ("Lyon", "69", (("Hospices Civils de ", None), ("Lyon", "VILLE")), "Hôpital Édouard Herriot"),
    ("Marseille", "13", (("Assistance Publique - Hôpitaux de ", None), ("Marseille", "VILLE")), "Hôpital de la Timone"),
    ("Bastia", "2B", (("Centre Hospitalier de ", None), ("Bastia", "VILLE")), "Site de Falconaja"),
    ("Saint-Denis", "974", (("CHU de La Réunion", None),), "Site Félix Guyon"),
    ("Fort-de-France", "972", (("CHU de Martinique", None),), "Hôpital Pierre Zobda-Quitman"),
    ("Les Abymes", "971", (("CHU de la Guadeloupe", None),), "Site de Chauvel"),
    ("Cayenne", "973", (("Centre Hospitalier de ", None), ("Cayenne", "VILLE")), "Site Andrée Rosemon"),
    ("Mamoudzou", "976", (("Centre Hospitalier de Mayotte", None),), "Site principal"),
    ("Strasbourg", "67", (("Hôpitaux Universitaires de ", None), ("Strasbourg", "VILLE")), "Nouvel Hôpital Civil"),
)


def build_hospitals_elsewhere(world: WorldBuilder) -> list[Hospital]:
    """The hospitals of ``--geography france`` outside Brittany, with CEDEX (``75651 PARIS CEDEX 13``) and BP,
    CS or TSA lines; addresses with a range of numbers (``47-83 boulevard de l'Hôpital``) happen here."""
    rng = world.rng
    hospitals = []
    for city, dep, name_parts, site in _ELSEWHERE:
        candidates = [c for c in world.communes if c.name == city and c.departement == dep]
        if not candidates:
            continue
        commune = rng.choice(candidates)
        street = world.new_street(commune, mentioned=True, lieu_dit=False)
        number = rng.randrange(1, 60)
        street.numbers.add(number)
        prefix = commune.postcodes[0][:3] if dep.startswith("97") else commune.postcodes[0][:2]
        width = 5 - len(prefix)  # 75651, 97405: a CEDEX code keeps the département's postcode prefix
        cedex_code = f"{prefix}{rng.randrange(3 * 10 ** (width - 1), 10**width):0{width}d}"
        if commune.arrondissement:  # Paris, Lyon, Marseille: the CEDEX number is the arrondissement's
            cedex = f"CEDEX {commune.arrondissement:02d}" if rng.random() < 0.5 else f"CEDEX {commune.arrondissement}"
        else:
            cedex = f"CEDEX {rng.randrange(1, 10)}" if rng.random() < 0.4 else "CEDEX"
        box = rng.choice(("CS", "BP", "TSA"))
        bp = f"{box} {rng.randrange(10000, 99999) if box != 'BP' else rng.randrange(1, 999)}"
        address = Address(street, number, cedex=cedex, cedex_postcode=cedex_code, bp=bp if rng.random() < 0.7 else "")
        if rng.random() < 0.4:
            address.number_to = number + 2 * rng.randrange(3, 40)
            street.numbers.add(address.number_to)
        slug = ascii_slug(city, "-")
        hospital = Hospital(
            name_parts,
            site,
            address,
            random_phone(rng, dep),
            f"chu-{slug}.fr",
            {},
            finess=f"{dep[:2]}0{rng.randrange(10**5, 10**6)}",
            siret=f"26{dep[:2]}{rng.randrange(10**9, 10**10)}",
        )
        chosen = [d for d, (kind, _) in DEPARTMENTS.items() if kind not in ("medical", "surgical")]
        chosen += rng.sample([d for d, (k, _) in DEPARTMENTS.items() if k == "medical"], 5)
        chosen += rng.sample([d for d, (k, _) in DEPARTMENTS.items() if k == "surgical"], 3)
        for name in chosen:
            hospital.departments[name] = _department(world, hospital, name, True)
        hospitals.append(hospital)
    world.hospitals = world.hospitals + hospitals
    return hospitals
