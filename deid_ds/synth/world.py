"""The synthetic world the notes talk about: communes and streets, hospitals and their staff, general
practitioners, patients with relatives, addresses and a history of visits.

Notes, knowledge-base files and patient metadata are all views of this one world, which is what makes
the sample coherent: a street written in a note exists in the generated BAN file (unless it was drawn
among the streets "missing from the BAN"), a physician signing a letter is in the generated Annuaire
Santé file (unless drawn among the "missing" ones), and postcodes always belong to their commune.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from datetime import date, timedelta

from deid_ds.synth import pools
from deid_ds.synth.pools import Commune, strip_accents

#: Street type words as written in full, with the AFNOR/Annuaire code and the abbreviations notes use.
STREET_TYPES: dict[str, tuple[str, tuple[str, ...]]] = {
    "Rue": ("R", ("rue", "r.", "RUE")),
    "Avenue": ("AV", ("avenue", "av.", "Av.", "AVENUE")),
    "Boulevard": ("BD", ("boulevard", "bd", "Bd", "BOULEVARD")),
    "Allée": ("ALL", ("allée", "all.", "ALLEE")),
    "Impasse": ("IMP", ("impasse", "imp.", "IMPASSE")),
    "Place": ("PL", ("place", "pl.", "PLACE")),
    "Chemin": ("CHE", ("chemin", "ch.", "CHEMIN")),
    "Route": ("RTE", ("route", "rte", "ROUTE")),
    "Quai": ("QU", ("quai", "QUAI")),
    "Square": ("SQ", ("square", "SQUARE")),
    "Venelle": ("VEN", ("venelle", "VENELLE")),
    "Cours": ("CRS", ("cours", "COURS")),
    "Résidence": ("RES", ("résidence", "RESIDENCE")),
}
_TYPE_WEIGHTS = (
    ("Rue", 40),
    ("Avenue", 10),
    ("Boulevard", 6),
    ("Allée", 10),
    ("Impasse", 8),
    ("Place", 5),
    ("Chemin", 7),
    ("Route", 6),
    ("Quai", 2),
    ("Square", 2),
    ("Venelle", 2),
    ("Cours", 2),
)

RESIDENCE_NAMES = (
    "Les Tilleuls",
    "Les Hortensias",
    "Le Clos Fleuri",
    "Les Jardins de la Mer",
    "Le Parc",
    "Les Camélias",
    "Bel Air",
    "Les Terrasses",
    "Le Belvédère",
    "Les Glycines",
    "Ker Avel",
    "Ty Mad",
    "Les Mimosas",
)

GP_MAIL_DOMAINS = ("wanadoo.fr", "orange.fr", "medecin.mssante.fr", "gmail.com", "free.fr")
PATIENT_MAIL_DOMAINS = (
    "gmail.com",
    "orange.fr",
    "wanadoo.fr",
    "free.fr",
    "laposte.net",
    "hotmail.fr",
    "sfr.fr",
    "yahoo.fr",
    "outlook.fr",
    "icloud.com",
)
#: Landline prefixes of the four départements (first four digits), and of the others ``--geography france`` uses.
PHONE_PREFIXES = {
    "22": ("0296",),
    "29": ("0298", "0229"),
    "35": ("0299", "0223"),
    "56": ("0297",),
    "75": ("0142", "0145", "0153", "0140"),
    "69": ("0472", "0478", "0437"),
    "13": ("0491", "0496", "0413"),
    "2A": ("0495",),
    "2B": ("0495",),
    "971": ("0590",),
    "972": ("0596",),
    "973": ("0594",),
    "974": ("0262",),
    "975": ("0508",),
    "976": ("0269",),
}
#: Geographies of ``deid-ds synth --geography``: Brittany only (every corpus before it), or all France.
GEOGRAPHIES = ("brittany", "france")
#: Share of the places drawn in ``france`` that lie outside Brittany, and how those spread over the regions.
FRANCE_SHARE = 0.6
_FRANCE_REGIONS = (("arrondissement", 30), ("overseas", 25), ("corsica", 10), ("mainland", 35))


@dataclass(slots=True)
class Street:
    """A street (or a lieu-dit) of a commune; ``name`` is written as the BAN ``nom_voie``."""

    commune: Commune
    postcode: str
    type_word: str  # "Rue", "Avenue"... or "" for a lieu-dit
    label: str  # "des Lilas", "Jean Jaurès", or the lieu-dit's name
    in_ban: bool = True
    numbers: set[int] = field(default_factory=set)
    reps: set[tuple[int, str]] = field(default_factory=set)  # numbers with a repetition index: (12, "bis")
    former: str = ""  # former commune the street lies in, if any

    @property
    def name(self) -> str:
        return f"{self.type_word} {self.label}" if self.type_word else self.label

    @property
    def is_lieu_dit(self) -> bool:
        return not self.type_word


@dataclass(slots=True)
class Address:
    """A postal address; ``cedex``/``bp`` only for institutions, ``residence`` for some homes.

    ``building``, ``staircase`` and ``place`` (a quartier, an overseas section, a housing estate) are lines
    of their own on the address, each its own STR span; ``number_to`` makes the number a range
    (``47-83 boulevard Pasteur``, one STR). Only ``--geography france`` draws them.
    """

    street: Street
    number: int | None
    rep: str = ""  # "bis", "ter"
    residence: str = ""
    cedex: str = ""  # "CEDEX 9" goes with a cedex postcode
    cedex_postcode: str = ""
    bp: str = ""  # "CS 10329", "BP 139", "TSA 40031"
    building: str = ""  # "Bâtiment C"
    staircase: str = ""  # "Escalier 2"
    place: str = ""  # "Quartier Bois-Joli", "Lotissement Les Pins"
    number_to: int | None = None  # 83 in "47-83 boulevard Pasteur"

    @property
    def commune(self) -> Commune:
        return self.street.commune

    @property
    def postcode(self) -> str:
        return self.cedex_postcode or self.street.postcode


@dataclass(slots=True)
class Professional:
    """A health professional (or a secretary: they are DOCTOR too) as notes and the directory see them."""

    key: int
    sex: str
    first: str
    last: str
    profession: str  # "Médecin", "Infirmier", "Secrétaire médicale"...
    specialty: str = ""
    title: str = ""  # "Dr" / "Pr" / ""
    role: str = ""  # "chef de service", "interne", "IDE", "secrétaire", "médecin traitant"...
    in_directory: bool = True
    phone: str = ""
    email: str = ""
    practice: Address | None = None  # private practice (libéral), if any
    hospital: Hospital | None = None
    student: bool = False


@dataclass(slots=True)
class Department:
    name: str  # "Cardiologie"
    kind: str  # "medical", "surgical", "emergency", "imaging", "pathology", "biology"
    staff: list[Professional]
    phone: str
    fax: str
    email: str

    def of_role(self, *roles: str) -> list[Professional]:
        return [p for p in self.staff if p.role in roles]


@dataclass(slots=True)
class Hospital:
    """A hospital; ``name_parts`` is its name as (text, label-or-None) pieces: the city inside is VILLE."""

    name_parts: tuple[tuple[str, str | None], ...]
    site: str  # a site or building name, never annotated ("Hôpital Pontchaillou")
    address: Address
    phone: str
    domain: str
    departments: dict[str, Department]
    finess: str
    siret: str
    public: bool = True

    @property
    def name(self) -> str:
        return "".join(text for text, _ in self.name_parts)


@dataclass(slots=True)
class Relative:
    sex: str
    first: str
    last: str
    relation: str  # "fille", "époux"...
    phone: str = ""


@dataclass(slots=True)
class Patient:
    key: int
    id_patient: str
    sex: str
    given_names: str  # as registered ("Marie-Thérèse")
    usual_first: str  # as written in notes ("Thérèse")
    birth_name: str
    married_name: str | None
    birthdate: date
    birthplace: str
    address: Address
    old_address: Address | None
    phone: str
    mobile: str
    email: str | None
    gp: Professional
    relatives: list[Relative]
    metadata: dict[str, str | None] = field(default_factory=dict)

    @property
    def usual_last(self) -> str:
        return self.married_name or self.birth_name


#: Large towns outside Brittany, where addresses often have a building and a staircase.
_CITIES = frozenset(
    (
        "Paris",
        "Lyon",
        "Marseille",
        "Lille",
        "Toulouse",
        "Bordeaux",
        "Strasbourg",
        "Nantes",
        "Nice",
        "Montpellier",
        "Grenoble",
        "Saint-Denis",
        "Montreuil",
        "Villeurbanne",
        "Aubervilliers",
        "Roubaix",
        "Le Havre",
        "Metz",
        "Mulhouse",
        "Saint-Étienne",
        "Ajaccio",
        "Bastia",
        "Nanterre",
        "Créteil",
        "Argenteuil",
    )
)


def ascii_slug(text: str, sep: str = "") -> str:
    """``Le Gall`` -> ``legall``: how names become e-mail local parts and domains (``Małgorzata`` ->
    ``malgorzata``: letters that have no accent to strip are spelled as their keyboard writes them)."""
    return re.sub(r"[^a-z0-9]+", sep, strip_accents(text.translate(_KEYBOARD)).lower()).strip(sep)


_KEYBOARD = str.maketrans({"ł": "l", "Ł": "L", "ı": "i"})


def random_phone(rng: random.Random, departement: str | None = None, mobile: bool = False) -> str:
    """Ten digits, ``0299284321``: a landline of the département or a mobile."""
    if mobile:
        head = rng.choice(("06", "07"))
        return head + "".join(str(rng.randrange(10)) for _ in range(8))
    head = rng.choice(PHONE_PREFIXES.get(departement or "35", ("0299",)))
    return head + "".join(str(rng.randrange(10)) for _ in range(6))


class WorldBuilder:
    """Draws streets, hospitals, professionals and patients from one random generator.

    ``missing_professionals`` and ``missing_streets`` are the shares of mentioned professionals and
    streets left out of the generated knowledge bases: distant supervision never has complete dictionaries.
    """

    def __init__(
        self,
        rng: random.Random,
        *,
        missing_professionals: float,
        missing_streets: float,
        geography: str = "brittany",
        geo_rng: random.Random | None = None,
    ) -> None:
        if geography not in GEOGRAPHIES:
            raise ValueError(f"geography must be one of {', '.join(GEOGRAPHIES)}")
        self.rng = rng
        self.missing_professionals = missing_professionals
        self.missing_streets = missing_streets
        self.communes = self._breton = pools.communes_of(pools.DEPARTEMENTS)
        #: ``france``: communes of all France and people of many origins, drawn from ``geo`` (their own stream),
        #: so that every draw of ``rng`` a Brittany world makes is made the same way; ``brittany`` never draws it.
        self.france = geography == "france"
        if geo_rng is None:  # deterministic all the same: seeded from rng, which only a France world draws here
            geo_rng = random.Random(rng.getrandbits(64)) if self.france else random.Random(0)
        self.geo = geo_rng
        self._origin: str | None = None  # the origin of the person being drawn (france only)
        if self.france:
            self.communes = self.communes + list(pools.france_communes())
            self._by_region: dict[str, list[Commune]] = {}
            for commune in self.communes:
                self._by_region.setdefault(commune.region, []).append(commune)
        self.streets: dict[str, list[Street]] = {c.insee: [] for c in self.communes}
        self._street_keys: set[tuple[str, str]] = set()
        self.professionals: list[Professional] = []
        self.hospitals: list[Hospital] = []
        self.gps: list[Professional] = []
        self.specialists: list[Professional] = []

    @property
    def departements(self) -> tuple[str, ...]:
        """The départements of the world's communes, in the order their BAN files are written."""
        if not self.france:
            return pools.DEPARTEMENTS
        return tuple(sorted({c.departement for c in self.communes}))

    # -- places ---------------------------------------------------------------------------------------
    def new_street(self, commune: Commune, *, mentioned: bool, lieu_dit: bool | None = None) -> Street:
        """A street of ``commune`` not drawn before; ``mentioned`` streets may be left out of the BAN."""
        rng = self.rng
        for _ in range(50):
            if lieu_dit if lieu_dit is not None else rng.random() < 0.12:
                type_word, label = "", self._lieu_dit(commune)
            else:
                type_word = rng.choices([t for t, _ in _TYPE_WEIGHTS], [w for _, w in _TYPE_WEIGHTS])[0]
                if rng.random() < 0.15:  # streets named after local people: a person's name inside a STR
                    sex = rng.choice("FM")
                    label = f"{pools.given_name(rng, sex, 0)} {pools.family_name(rng, 0)}"
                else:
                    label = rng.choice(pools.street_names())
            if (commune.insee, f"{type_word} {label}") not in self._street_keys:
                break
        self._street_keys.add((commune.insee, f"{type_word} {label}"))
        former = rng.choice(commune.former) if commune.former and rng.random() < 0.3 else ""
        street = Street(
            commune,
            rng.choice(commune.postcodes),
            type_word,
            label,
            in_ban=not (mentioned and rng.random() < self.missing_streets),
            former=former,
        )
        self.streets[commune.insee].append(street)
        return street

    def new_address(self, commune: Commune | None = None, *, home: bool = True) -> Address:
        rng = self.rng
        commune = commune or self.pick_commune()
        street = self.new_street(commune, mentioned=True)
        number = (
            None
            if street.is_lieu_dit and rng.random() < 0.7
            else rng.choice((rng.randrange(1, 40), rng.randrange(1, 250)))
        )
        rep = rng.choice(("bis", "ter", "B")) if number and rng.random() < 0.07 else ""
        residence = rng.choice(RESIDENCE_NAMES) if home and not street.is_lieu_dit and rng.random() < 0.08 else ""
        if number:
            street.numbers.add(number)
            if rep:
                street.reps.add((number, rep))
        address = Address(street, number, rep, residence)
        if self.france:
            self._dress(address, home=home)
        return address

    def _lieu_dit(self, commune: Commune) -> str:
        if commune.region == "brittany":
            return pools.lieu_dit(self.rng)
        return pools.lieu_dit_elsewhere(self.rng)

    def _dress(self, address: Address, *, home: bool) -> None:
        """What addresses outside a Breton village carry (``france`` only, from the ``geo`` stream): buildings
        and staircases in cities, quartiers and sections overseas, housing estates, PO boxes, number ranges."""
        geo, commune = self.geo, address.commune
        region = commune.region
        city = region in ("arrondissement", "overseas") or commune.name in _CITIES
        if home and city and not address.street.is_lieu_dit and geo.random() < 0.25:
            address.building = geo.choice(("Bâtiment ", "Bâtiment ", "Bât. ", "Immeuble ")) + geo.choice("ABCDEFGH")
            if geo.random() < 0.6:
                address.staircase = geo.choice(("Escalier ", "Escalier ", "Esc. ")) + str(geo.randrange(1, 6))
        if geo.random() < {"overseas": 0.55, "mainland": 0.06, "corsica": 0.06}.get(region, 0.0):
            address.place = pools.named_place(geo, commune)
            if (commune.insee, f" {address.place}") not in self._street_keys:  # the BAN lists them as toponyms
                self._street_keys.add((commune.insee, f" {address.place}"))
                missing = geo.random() < self.missing_streets
                self.streets[commune.insee].append(
                    Street(commune, address.street.postcode, "", address.place, not missing)
                )
        if home and region == "overseas" and geo.random() < 0.08:
            address.bp = f"BP {geo.randrange(1, 999)}"
        if not home and address.number and geo.random() < 0.15:
            address.number_to = address.number + 2 * geo.randrange(3, 40)
            address.street.numbers.add(address.number_to)

    def pick_commune(self) -> Commune:
        """Bigger towns first: a third of addresses are in a préfecture or a large town.

        In ``france``, most places lie elsewhere: arrondissements of Paris, Lyon and Marseille, overseas
        communes, Corsica and the other mainland regions, drawn from the ``geo`` stream.
        """
        if self.france and self.geo.random() < FRANCE_SHARE:
            geo = self.geo
            region = geo.choices([r for r, _ in _FRANCE_REGIONS], [w for _, w in _FRANCE_REGIONS])[0]
            communes = self._by_region[region]
            if region == "mainland" and geo.random() < 0.4:
                communes = [c for c in communes if c.name in _CITIES] or communes
            return geo.choice(communes)
        rng = self.rng
        if rng.random() < 0.35:
            return rng.choice(
                self._breton[:4]
                + [c for c in self._breton if c.name in ("Brest", "Quimper", "Saint-Brieuc", "Vannes", "Lorient")]
            )
        return rng.choice(self._breton)

    # -- people ---------------------------------------------------------------------------------------
    def _given(self, sex: str, compound: float = 0.08) -> str:
        """A given name: the French pools' draw, replaced (``geo`` stream) by one of the person's origin."""
        name = pools.given_name(self.rng, sex, compound)
        if self._origin is not None:
            name = pools.origin_given_name(self.geo, self._origin, sex, compound) or name
        return name

    def _family(self) -> str:
        name = pools.family_name(self.rng)
        if self._origin is not None:
            name = pools.origin_family_name(self.geo, self._origin)
        return name

    def new_professional(
        self,
        profession: str,
        *,
        role: str,
        specialty: str = "",
        title: str = "",
        hospital: Hospital | None = None,
        domain: str = "",
        student: bool = False,
    ) -> Professional:
        rng = self.rng
        sex = rng.choice("FM")
        if self.france:
            self._origin = pools.draw_origin(self.geo)
        first, last = self._given(sex), self._family()
        self._origin = None
        missing = role in ("secrétaire",) or rng.random() < self.missing_professionals
        email = ""
        if domain and profession == "Médecin":
            email = (
                f"{ascii_slug(first, '-')}.{ascii_slug(last, '-')}@{domain}"
                if rng.random() < 0.5
                else f"{ascii_slug(first)[0]}.{ascii_slug(last)}@{domain}"
            )
        pro = Professional(
            len(self.professionals),
            sex,
            first,
            last,
            profession,
            specialty,
            title,
            role,
            in_directory=not missing,
            email=email,
            hospital=hospital,
            student=student,
        )
        self.professionals.append(pro)
        return pro

    def new_gp(self) -> Professional:
        rng = self.rng
        gp = self.new_professional("Médecin", role="médecin traitant", specialty="Médecine générale", title="Dr")
        gp.practice = self.new_address(home=False)
        gp.phone = random_phone(rng, gp.practice.commune.departement)
        local = rng.choice(
            (
                f"dr.{ascii_slug(gp.last)}",
                f"{ascii_slug(gp.first)}.{ascii_slug(gp.last)}",
                f"cabinet.{ascii_slug(gp.practice.commune.name)}",
            )
        )
        gp.email = f"{local}@{rng.choice(GP_MAIL_DOMAINS)}"
        self.gps.append(gp)
        return gp

    def new_specialist(self, specialty: str) -> Professional:
        rng = self.rng
        pro = self.new_professional("Médecin", role="spécialiste libéral", specialty=specialty, title="Dr")
        pro.practice = self.new_address(home=False)
        pro.phone = random_phone(rng, pro.practice.commune.departement)
        self.specialists.append(pro)
        return pro

    def new_patient(self, key: int, id_patient: str, today: date, *, youngest_days: int = 0) -> Patient:
        """A patient aged 0 to 97 on ``today``, and at least ``youngest_days`` days old then.

        ``youngest_days`` makes the window of a patient's notes non-empty by construction: a newborn drawn
        younger than that is made exactly that old (the same draws, so every other patient is unchanged).
        """
        rng = self.rng
        sex = rng.choice("FM")
        origin = self._origin = pools.draw_origin(self.geo) if self.france else None
        given = self._given(sex, compound=0.15)
        if rng.random() < 0.12 and "-" not in given:  # registered with several given names
            given = f"{given} {self._given(sex, 0)}"
        usual = given
        if ("-" in given or " " in given) and rng.random() < 0.35:
            usual = rng.choice(re.split(r"[- ]", given))  # "Marie-Thérèse" called "Thérèse"
        birth_name = self._family()
        age = rng.choices((rng.randrange(0, 18), rng.randrange(18, 60), rng.randrange(60, 98)), (1, 4, 6))[0]
        birthdate = today - timedelta(days=max(youngest_days, age * 365 + rng.randrange(365)))
        married = self._family() if sex == "F" and age > 22 and rng.random() < 0.55 else None
        birthplace = rng.choice(pools.ELSEWHERE_CITIES) if rng.random() < 0.2 else self.pick_commune().name
        if origin in pools.BIRTHPLACES_ABROAD and self.geo.random() < 0.45:
            birthplace = self.geo.choice(pools.BIRTHPLACES_ABROAD[origin])
        address = self.new_address()
        old = self.new_address() if rng.random() < 0.15 else None
        gp = rng.choice(self.gps) if self.gps and rng.random() < 0.7 else self.new_gp()
        relatives = []
        for relation in rng.sample(
            ("époux", "fille", "fils", "sœur", "frère", "voisine", "tutrice"), rng.randrange(0, 3)
        ):
            rsex = "F" if relation in ("fille", "sœur", "voisine", "tutrice") else "M"
            if relation == "époux":
                rsex = "M" if sex == "F" else "F"
                relation = "époux" if rsex == "M" else "épouse"
            rlast = (married or birth_name) if relation in ("époux", "épouse", "fils", "fille") else self._family()
            relatives.append(Relative(rsex, self._given(rsex), rlast, relation, random_phone(rng, mobile=True)))
        self._origin = None
        email = None
        if rng.random() < 0.55:
            email = (
                f"{ascii_slug(usual, rng.choice(('.', '', '_')))}{rng.choice(('.', '', '_'))}"
                f"{ascii_slug(married or birth_name)}"
                f"{rng.choice(('', str(birthdate.year % 100), str(rng.randrange(1, 99))))}"
                f"@{rng.choice(PATIENT_MAIL_DOMAINS)}"
            )
        return Patient(
            key,
            id_patient,
            sex,
            given,
            usual,
            birth_name,
            married,
            birthdate,
            birthplace,
            address,
            old,
            random_phone(rng, address.commune.departement),
            random_phone(rng, mobile=True),
            email,
            gp,
            relatives,
        )
