"""Value pools the generator draws from: names, communes, street names, lieux-dits.

Pools are shipped as small text files in ``resources/`` (not read from Faker at run time) so that a
given seed yields the same corpus whatever Faker version is installed: the committed sample must be
regenerable byte for byte. Sizes matter more than realism of any single value: a model trained on the
sample must not be able to memorise a few dozen names, so first and last names are also combined into
compound and double-barrelled forms, and lieux-dits are built from Breton toponymic elements.
"""

from __future__ import annotations

import random
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

#: Département codes of the communes shipped (the BAN files of a corpus are written for these).
DEPARTEMENTS: tuple[str, ...] = ("22", "29", "35", "56")

#: Where patients were born when not in Brittany: these cities are *not* in the generated BAN, as a
#: birthplace far away is not in a regional gazetteer either.
ELSEWHERE_CITIES: tuple[str, ...] = (
    "Paris",
    "Nantes",
    "Angers",
    "Le Mans",
    "Caen",
    "Laval",
    "Tours",
    "Lyon",
    "Bordeaux",
    "Lille",
    "Marseille",
    "Toulouse",
    "Cherbourg-en-Cotentin",
    "Saint-Nazaire",
    "Alger",
    "Casablanca",
    "Porto",
)


@dataclass(frozen=True, slots=True)
class Commune:
    """A commune as the BAN knows it: INSEE code, official name, postcodes, merged former communes."""

    insee: str
    name: str
    postcodes: tuple[str, ...]
    former: tuple[str, ...] = ()
    arrondissement: int = 0  # Paris, Lyon, Marseille: one commune per arrondissement, named after the city
    lat: float | None = None  # a real centroid when the list gives one (else the BAN writer derives one)
    lon: float | None = None

    @property
    def departement(self) -> str:
        """``35``, ``2A``, ``974``: overseas départements have three digits."""
        return self.insee[:3] if self.insee.startswith("97") else self.insee[:2]

    @property
    def region(self) -> str:
        """``brittany``, ``arrondissement`` (Paris, Lyon, Marseille), ``corsica``, ``overseas`` or ``mainland``."""
        dep = self.departement
        if dep in DEPARTEMENTS:
            return "brittany"
        if self.arrondissement:
            return "arrondissement"
        return "corsica" if dep in ("2A", "2B") else "overseas" if len(dep) == 3 else "mainland"

    @property
    def routing_label(self) -> str:
        """La Poste's label (``libelle_acheminement``): capitals, no accents, no hyphens, ``ST``."""
        label = strip_accents(self.name).upper().replace("-", " ").replace("'", " ")
        words = ["ST" if w == "SAINT" else "STE" if w == "SAINTE" else w for w in label.split()]
        return " ".join(words)


def strip_accents(text: str) -> str:
    """Remove diacritics (``Quéméner`` -> ``Quemener``): what CDW metadata and AFNOR labels often do."""
    decomposed = unicodedata.normalize("NFD", text)
    return unicodedata.normalize("NFC", "".join(c for c in decomposed if unicodedata.category(c) != "Mn"))


def _lines(name: str) -> list[str]:
    text = resources.files("deid_ds.synth").joinpath("resources", name).read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line.strip() and not line.startswith("#")]


@lru_cache(maxsize=1)
def surnames() -> tuple[str, ...]:
    return tuple(_lines("surnames.txt"))


@lru_cache(maxsize=1)
def first_names() -> dict[str, tuple[str, ...]]:
    """Given names by sex (``"F"``/``"M"``)."""
    by_sex: dict[str, list[str]] = {"F": [], "M": []}
    for line in _lines("firstnames.txt"):
        sex, name = line.split("\t")
        by_sex[sex].append(name)
    return {sex: tuple(names) for sex, names in by_sex.items()}


@lru_cache(maxsize=1)
def street_names() -> tuple[str, ...]:
    return tuple(_lines("street_names.txt"))


@lru_cache(maxsize=1)
def communes() -> tuple[Commune, ...]:
    out = []
    for line in _lines("communes.tsv"):
        insee, name, postcodes, former = (line.split("\t") + [""])[:4]
        if insee == "insee":
            continue
        out.append(Commune(insee, name, tuple(postcodes.split(",")), tuple(f for f in former.split(",") if f)))
    return tuple(out)


def communes_of(departements: tuple[str, ...]) -> list[Commune]:
    return [c for c in communes() if c.departement in departements]


@lru_cache(maxsize=1)
def france_communes() -> tuple[Commune, ...]:
    """The communes of ``--geography france`` outside Brittany (``resources/communes_france.tsv``)."""
    out = []
    for line in _lines("communes_france.tsv"):
        insee, name, postcodes, lat, lon, arrondissement = (line.split("\t") + [""] * 6)[:6]
        if insee == "insee":
            continue
        out.append(
            Commune(insee, name, tuple(postcodes.split(",")), (), int(arrondissement or 0), float(lat), float(lon))
        )
    return tuple(out)


# Breton toponymic elements: "Ker" (village), "Lan" (hermitage), "Pen" (end), "Pors" (court)... joined
# to a qualifier, they give thousands of plausible, mostly unique lieux-dits (Kerléan, Penhoat...).
_LD_PREFIXES = (
    "Ker",
    "Lan",
    "Pen",
    "Pors",
    "Tré",
    "Loc",
    "Plou",
    "Coat",
    "Goas",
    "Poul",
    "Roz",
    "Mez",
    "Kergo",
    "Kerou",
)
_LD_SUFFIXES = (
    "léan",
    "hoat",
    "nuon",
    "goff",
    "vran",
    "drein",
    "guen",
    "zivit",
    "bastard",
    "an",
    "ven",
    "bihan",
    "meur",
    "glas",
    "du",
    "ros",
    "men",
    "dual",
    "hallic",
    "loas",
    "marec",
    "nevez",
    "coz",
    "vily",
    "ouarn",
    "rivin",
    "aouen",
    "hervé",
    "jean",
    "yvon",
    "ellec",
    "stang",
    "feunteun",
    "roc'h",
    "guer",
    "elec",
)
_LD_PLAIN = (
    "Le Moulin du Pont",
    "La Ville Orain",
    "La Ville Guérin",
    "Le Bas Chemin",
    "La Haute Touche",
    "Le Clos Neuf",
    "La Métairie",
    "Les Landes",
    "La Croix Rouge",
    "Le Haut Bourg",
    "La Grange",
    "Le Pré Long",
    "La Ville Cherel",
    "Le Vieux Bourg",
    "La Touche Ronde",
    "Les Forges",
)


def lieu_dit(rng: random.Random) -> str:
    """A lieu-dit name, Breton (``Kerléan``) most of the time, Gallo/French otherwise."""
    if rng.random() < 0.2:
        return rng.choice(_LD_PLAIN)
    name = rng.choice(_LD_PREFIXES) + rng.choice(_LD_SUFFIXES)
    return name[0] + name[1:].lower() if "'" not in name else name


def given_name(rng: random.Random, sex: str, compound: float = 0.08) -> str:
    """A given name; sometimes a compound (``Marie-Anne``, ``Jean-Baptiste``) built from two."""
    names = first_names()[sex]
    name = rng.choice(names)
    if "-" not in name and " " not in name and rng.random() < compound:
        head = ("Marie", "Anne") if sex == "F" else ("Jean", "Pierre", "Louis")
        name = f"{rng.choice(head)}-{name}" if rng.choice(head) != name else name
    return name


def family_name(rng: random.Random, double: float = 0.05) -> str:
    """A surname; sometimes double-barrelled (``Martin-Le Gall``)."""
    name = rng.choice(surnames())
    if rng.random() < double:
        other = rng.choice(surnames())
        if other != name and "-" not in name + other:
            name = f"{name}-{other}"
    return name


# -- people of many origins (``--geography france``) -------------------------------------------------------
#: Origins of ``resources/names_origins.tsv`` with their share among people not drawn from the French pools;
#: ``particles`` and ``words`` (surnames that are ordinary words or cities) give a surname only.
ORIGINS: tuple[tuple[str, int], ...] = (
    ("maghrebi", 6),
    ("portuguese", 4),
    ("italian", 3),
    ("west_african", 4),
    ("vietnamese", 2),
    ("turkish", 2),
    ("alsatian", 3),
    ("polish", 2),
    ("particles", 2),
    ("words", 3),
)
#: Share of people drawn from the origins' lists rather than from the French pools.
ORIGIN_SHARE = 0.5

#: Where people of an origin were born when not in France: foreign cities (VILLE; the country is not annotated).
BIRTHPLACES_ABROAD: dict[str, tuple[str, ...]] = {
    "maghrebi": ("Alger", "Oran", "Constantine", "Tizi Ouzou", "Casablanca", "Rabat", "Fès", "Oujda", "Tunis", "Sfax"),
    "portuguese": ("Porto", "Braga", "Lisbonne", "Coimbra", "Viana do Castelo", "Guimarães"),
    "italian": ("Naples", "Palerme", "Turin", "Milan", "Bari", "Catane"),
    "west_african": ("Dakar", "Bamako", "Abidjan", "Conakry", "Saint-Louis", "Kayes", "Ouagadougou"),
    "vietnamese": ("Hanoï", "Hô Chi Minh-Ville", "Huê", "Da Nang"),
    "turkish": ("Istanbul", "Ankara", "Konya", "Kayseri", "Izmir"),
    "polish": ("Varsovie", "Cracovie", "Katowice", "Łódź", "Poznań"),
}


@lru_cache(maxsize=1)
def origin_names() -> dict[str, dict[str, tuple[str, ...]]]:
    """origin -> kind (``F``/``M`` given names, ``L`` surnames) -> names."""
    out: dict[str, dict[str, list[str]]] = {}
    for line in _lines("names_origins.tsv"):
        origin, kind, name = line.split("\t")
        out.setdefault(origin, {}).setdefault(kind, []).append(name)
    return {origin: {kind: tuple(names) for kind, names in kinds.items()} for origin, kinds in out.items()}


def draw_origin(rng: random.Random) -> str | None:
    """An origin for one person, or ``None`` for the French pools (half the people)."""
    if rng.random() >= ORIGIN_SHARE:
        return None
    return rng.choices([o for o, _ in ORIGINS], [w for _, w in ORIGINS])[0]


def origin_given_name(rng: random.Random, origin: str, sex: str, compound: float = 0.08) -> str | None:
    """A given name of ``origin`` (``None`` when the origin lists none); Maghrebi compounds are written with a
    space (``Mohamed Amine``), Portuguese ones often so (``Maria José``)."""
    names = origin_names()[origin].get(sex)
    if not names:
        return None
    name = rng.choice(names)
    if rng.random() < compound and origin in ("maghrebi", "portuguese"):
        other = rng.choice(names if origin == "portuguese" else origin_names()[origin]["M" if sex == "M" else "F"])
        if other != name:
            name = f"{name} {other}" if origin == "maghrebi" or rng.random() < 0.6 else f"{name}-{other}"
    return name


def origin_family_name(rng: random.Random, origin: str, double: float = 0.05) -> str:
    """A surname of ``origin``; Portuguese and Spanish-style double surnames join two with a space."""
    names = origin_names()[origin]["L"]
    name = rng.choice(names)
    if origin == "portuguese" and rng.random() < 0.25 + double:
        other = rng.choice(names)
        if other != name and " " not in other:
            name = f"{name} {other}"
    elif rng.random() < double:
        other = rng.choice(surnames())
        if "-" not in other:
            name = f"{name}-{other}"
    return name


# -- places of all France (``--geography france``) -----------------------------------------------------------
#: Quartiers and sections of overseas communes: written on the address line (``Quartier Bois-Joli``), each a STR.
OVERSEAS_PLACES = (
    "Bois-Joli",
    "Morne-Rouge",
    "Morne Bernard",
    "Boissard",
    "Raizet",
    "Grand-Camp",
    "Bas-du-Fort",
    "Dillon",
    "Terres-Sainville",
    "Châteauboeuf",
    "Bellevue",
    "Trénelle",
    "Ravine Blanche",
    "Bois-de-Nèfles",
    "La Bretagne",
    "Montgaillard",
    "Moufia",
    "Le Chaudron",
    "Bellepierre",
    "Terre-Sainte",
    "Ligne Paradis",
    "Ravine des Cabris",
    "Cavani",
    "Kawéni",
    "Passamainty",
    "Mtsapéré",
    "Cogoni",
    "Baduel",
    "Mirza",
    "Balata",
    "Cœur Bouliki",
    "Fond Lahaye",
    "Pointe des Nègres",
    "Petit-Pérou",
)
OVERSEAS_PLACE_WORDS = ("Quartier", "Quartier", "Section", "Cité", "Lotissement", "Résidence")
#: Housing estates of mainland towns (``Lotissement Les Pins``).
ESTATES = (
    "Les Pins",
    "Les Chênes",
    "Le Clos des Vignes",
    "Les Coquelicots",
    "Le Hameau du Lac",
    "Les Érables",
    "Le Domaine des Sources",
    "Les Bruyères",
    "Les Oliviers",
    "Le Clos Saint-Martin",
    "Les Flamboyants",
    "Les Alizés",
)
#: Lieux-dits of non-Breton communes (the Breton ``Ker-`` ones would give a Corsican village away).
_LD_ELSEWHERE = (
    "Le Mas Renouard",
    "La Ferme Neuve",
    "Les Granges",
    "Le Moulin Blanc",
    "La Bastide",
    "Le Pigeonnier",
    "Les Vignes Hautes",
    "La Croix Blanche",
    "Les Baraques",
    "Le Hameau",
    "Mezzavia",
    "Vignola",
    "Casanova",
    "Pietralba",
    "Morne Vert",
    "Habitation Céron",
    "Fond Saint-Denis",
    "Petite Anse",
)


def lieu_dit_elsewhere(rng: random.Random) -> str:
    return rng.choice(_LD_ELSEWHERE)


def named_place(rng: random.Random, commune: Commune) -> str:
    """A named place written on an address line: ``Quartier Bois-Joli`` overseas, ``Lotissement Les Pins``."""
    if commune.region == "overseas":
        return f"{rng.choice(OVERSEAS_PLACE_WORDS)} {rng.choice(OVERSEAS_PLACES)}"
    return f"{rng.choice(('Lotissement', 'Lotissement', 'Cité', 'Hameau'))} {rng.choice(ESTATES)}"
