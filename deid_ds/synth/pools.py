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

    @property
    def departement(self) -> str:
        return self.insee[:2]

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
