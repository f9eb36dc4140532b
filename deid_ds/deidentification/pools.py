"""What surrogates are drawn from: given names, surnames, communes with their postcodes, streets.

Names always come from the lists shipped with the package (``deid_ds/synth/resources``: hand-written
Breton and regional names plus Faker's fr_FR lists), never from the Annuaire Santé: a patient must not
be renamed after a real, findable health professional.

A knowledge base's names (the professionals of the Annuaire Santé) are read only to tell a given name
from a surname (``Salma``, ``Ndeye``: given names the shipped lists lack), never drawn from.

Places come from a built knowledge base when one is given (``--kb``): communes and their postcodes from
the BAN-derived ``postcodes`` table (only BAN rows, so that a surrogate city always comes with a postcode
that really belongs to it), streets and lieux-dits from the BAN ``streets`` table. Without a knowledge
base, the fallback is the generator's small list of Breton communes with their postcodes (about 150,
checked for coherence) and its street names: realistic in Brittany, visibly regional elsewhere.

Under ``deidentify --privacy dp`` a run also loads :func:`load_similar_places`: the knowledge base's communes
table as a :class:`~deid_ds.deidentification.similar_communes.CommuneIndex` (coordinates and sizes, to draw a
commune among similar ones) with the most addressed streets and lieux-dits of each commune that the table
holds (so that a street follows its surrogate commune): one small table, about 35,000 rows nationally. Only
then: the default mode's workers keep the memory they had.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from deid_ds.kb.normalize import fold_key, street_type_abbreviations, street_type_words

if TYPE_CHECKING:
    from deid_ds.deidentification.similar_communes import CommuneIndex

#: Most surrogate pools are capped to this many entries (taken at an even stride over the sorted list),
#: so that a national knowledge base does not cost every worker process hundreds of MB.
MAX_POOL = 20_000


@dataclass(frozen=True, slots=True)
class Commune:
    """A surrogate commune: its name as the source writes it and the postcodes that serve it (``code``: its INSEE
    code, for the communes ``--privacy dp`` draws, whose streets follow them)."""

    name: str
    postcodes: tuple[str, ...]
    code: str | None = None

    @property
    def key(self) -> str:
        return fold_key(self.name)


@dataclass(frozen=True)
class Pools:
    """Every pool a run draws from (sorted tuples: a draw depends only on the key and the pool)."""

    first_names: dict[str, tuple[str, ...]]  # "F", "M", "E" (epicene) and "*" (all)
    first_name_sex: dict[str, str]  # folded given name -> "F"/"M" when the lists give one sex only, else "E"
    surnames: tuple[str, ...]
    communes: tuple[Commune, ...]
    commune_of_postcode: dict[str, str]  # postcode -> folded commune name (the first, for a shared one)
    street_names: tuple[str, ...]  # street names without their type word ("du Général Leclerc")
    lieux_dits: tuple[str, ...]
    source: str  # "kb:<path>" or "fallback"
    surname_keys: frozenset[str] = field(default=frozenset())
    first_name_keys: frozenset[str] = field(default=frozenset())
    squashed_communes: dict[str, str] = field(default_factory=dict)  # "guiprymessac" -> "guipry-messac"
    #: folded name word -> "first"/"last": what the knowledge base's names (professionals) mostly are; read to
    #: tell a given name from a surname (:func:`deid_ds.deidentification.names.name_role`), never drawn from
    kb_name_roles: dict[str, str] = field(default_factory=dict)
    kb_dir: str | None = None  # where the places came from (``--privacy dp`` loads its communes table)


def _capped(values: list[str]) -> tuple[str, ...]:
    values = sorted(set(values))
    if len(values) > MAX_POOL:
        step = len(values) / MAX_POOL
        values = [values[int(i * step)] for i in range(MAX_POOL)]
    return tuple(values)


_TYPE_WORD = re.compile(r"^\s*(\S+?)\.?\s+(?=\S)")


def strip_street_type(street: str) -> tuple[str, str]:
    """``"Rue de la Paix"`` → ``("Rue", "de la Paix")``; ``("", street)`` when no type word leads it."""
    match = _TYPE_WORD.match(street)
    if match:
        word = fold_key(match.group(1))
        if word in street_type_words() or word in street_type_abbreviations():
            return street[: match.end()].rstrip(), street[match.end() :]
    return "", street


def _names() -> tuple[dict[str, tuple[str, ...]], dict[str, str], tuple[str, ...]]:
    """Given names by sex and the sex of each: a name both lists give, or the shipped epicene list
    (``deid_ds/resources/first_names_epicene_fr.txt``) holds, is epicene (``"E"``)."""
    from deid_ds.resources import read_word_list
    from deid_ds.synth import pools as synth

    by_sex = {
        sex: tuple(sorted(n for n in names if "-" not in n and " " not in n))
        for sex, names in synth.first_names().items()
    }
    epicene = read_word_list("first_names_epicene_fr.txt")
    sexes: dict[str, set[str]] = {}
    for sex, names in synth.first_names().items():
        for name in names:
            sexes.setdefault(fold_key(name), set()).add(sex)
    sex_of = {key: next(iter(found)) if len(found) == 1 else "E" for key, found in sexes.items()}
    sex_of.update({fold_key(name): "E" for name in epicene})
    both = {n for sex in ("F", "M") for n in by_sex[sex] if sex_of.get(fold_key(n)) == "E"}
    by_sex["E"] = tuple(sorted(both | set(epicene)))
    by_sex["*"] = tuple(sorted(set(by_sex["F"]) | set(by_sex["M"])))
    surnames = tuple(sorted(n for n in synth.surnames() if "-" not in n))
    return by_sex, sex_of, surnames


def _fallback_places() -> tuple[tuple[Commune, ...], tuple[str, ...], tuple[str, ...]]:
    from deid_ds.synth import pools as synth

    communes = tuple(
        sorted((Commune(c.name, tuple(sorted(c.postcodes))) for c in synth.communes()), key=lambda c: c.name)
    )
    rng = random.Random(0)  # a fixed list, the same on every run: draws are keyed, not this
    lieux = _capped([synth.lieu_dit(rng) for _ in range(2000)])
    return communes, tuple(sorted(n for n in synth.street_names() if not any(c.isdigit() for c in n))), lieux


def _kb_places(kb_dir: Path) -> tuple[tuple[Commune, ...], tuple[str, ...], tuple[str, ...]]:
    postcodes = pq.read_table(kb_dir / "postcodes.parquet", columns=["code_postal", "code_insee", "commune", "source"])
    ban = postcodes.filter(pc.equal(postcodes["source"], "ban"))
    if ban.num_rows:
        postcodes = ban
    by_insee: dict[str, tuple[str, set[str]]] = {}
    for code, insee, commune in zip(*(postcodes[c].to_pylist() for c in ("code_postal", "code_insee", "commune"))):
        if code and insee and commune and re.fullmatch(r"\d{5}", code):
            by_insee.setdefault(insee, (commune, set()))[1].add(code)
    communes = tuple(
        sorted(
            (Commune(name, tuple(sorted(codes))) for name, codes in by_insee.values()),
            key=lambda c: (c.name, c.postcodes),
        )
    )
    streets = pq.read_table(kb_dir / "streets.parquet", columns=["surface", "kind", "source"]).to_pydict()
    names, lieux = [], []
    for surface, kind, source in zip(streets["surface"], streets["kind"], streets["source"]):
        if not surface or source != "ban":
            continue
        if kind == "lieu-dit":
            lieux.append(surface)
        else:
            street_type, name = strip_street_type(surface)
            if street_type and name and not any(c.isdigit() for c in name):
                names.append(name)
    fallback = _fallback_places()
    return (communes or fallback[0]), (_capped(names) or fallback[1]), (_capped(lieux) or fallback[2])


def _kb_name_roles(kb_dir: Path) -> dict[str, str]:
    """Each one-word name of the knowledge base's ``names`` table as a given name (``first``) or a surname
    (``last``): the kind it is written as for more professionals, none when as many are both."""
    path = kb_dir / "names.parquet"
    if not path.exists():
        return {}
    names = pq.read_table(path, columns=["key", "kind", "n"]).to_pydict()
    counts: dict[str, dict[str, int]] = {}
    for key, kind, n in zip(names["key"], names["kind"], names["n"]):
        if key and kind in ("firstname", "lastname") and " " not in key and "-" not in key:
            counts.setdefault(key, {}).setdefault(kind, 0)
            counts[key][kind] += n or 0
    roles = {}
    for key, kinds in counts.items():
        first, last = kinds.get("firstname", 0), kinds.get("lastname", 0)
        if first != last:
            roles[key] = "first" if first > last else "last"
    return roles


@lru_cache(maxsize=4)
def load_pools(kb_dir: str | None) -> Pools:
    """The pools of a run (cached per process: every worker loads them once)."""
    by_sex, sex_of, surnames = _names()
    if kb_dir:
        communes, streets, lieux = _kb_places(Path(kb_dir))
        source = f"kb:{kb_dir}"
    else:
        communes, streets, lieux = _fallback_places()
        source = "fallback"
    commune_of_postcode: dict[str, str] = {}
    for commune in communes:
        for code in commune.postcodes:
            commune_of_postcode.setdefault(code, commune.key)
    return Pools(
        first_names=by_sex,
        first_name_sex=sex_of,
        surnames=surnames,
        communes=communes,
        commune_of_postcode=commune_of_postcode,
        street_names=streets,
        lieux_dits=lieux,
        source=source,
        surname_keys=frozenset(fold_key(n) for n in surnames),
        first_name_keys=frozenset(sex_of),
        squashed_communes={squash(c.key): c.key for c in communes},
        kb_name_roles=_kb_name_roles(Path(kb_dir)) if kb_dir else {},
        kb_dir=kb_dir or None,
    )


def squash(text: str) -> str:
    """Folded letters only: how a name or a town is written inside an e-mail address or a domain."""
    return re.sub(r"[^a-z]", "", fold_key(text))


@dataclass(frozen=True)
class SimilarPlaces:
    """What ``--privacy dp`` draws places from: the communes as an index, and their streets by INSEE code (kept as
    Arrow lists, a few bytes a name, and turned into Python strings one commune at a time)."""

    index: CommuneIndex
    streets: pa.ListArray | None = None  # row -> the commune's most addressed BAN streets ("Rue de la Paix")
    lieux_dits: pa.ListArray | None = None
    row_of: dict[str, int] = field(default_factory=dict)  # INSEE code -> row of the two lists

    def streets_of(self, code: str | None, lieu_dit: bool = False) -> tuple[str, ...]:
        """The streets (with a type word) or the lieux-dits of the commune of INSEE ``code``; () when none."""
        lists = self.lieux_dits if lieu_dit else self.streets
        row = self.row_of.get(code or "")
        if lists is None or row is None or not lists[row].is_valid:
            return ()
        names = [n for n in lists[row].as_py() if n]
        return tuple(names if lieu_dit else [n for n in names if strip_street_type(n)[0]])


@lru_cache(maxsize=4)
def load_similar_places(kb_dir: str | None) -> SimilarPlaces | None:
    """The communes with coordinates of a built knowledge base (cached per process), or None without one: no
    ``--kb``, or a knowledge base built before its ``communes.parquet`` (rebuild it), or one without coordinates."""
    from deid_ds.deidentification.similar_communes import build_index

    if not kb_dir or not (Path(kb_dir) / "communes.parquet").is_file():
        return None
    table = pq.read_table(Path(kb_dir) / "communes.parquet")
    names = ("code_insee", "commune", "postcodes", "lat", "lon", "size")
    columns = {name: table[name].to_pylist() for name in names}
    index = build_index(
        columns["code_insee"],
        columns["commune"],
        [tuple(p or ()) for p in columns["postcodes"]],
        columns["lat"],
        columns["lon"],
        columns["size"],
        [fold_key(name or "") for name in columns["commune"]],
    )
    if not len(index):
        return None
    lists = {
        name: table[name].combine_chunks() if name in table.column_names else None for name in ("streets", "lieux_dits")
    }
    row_of = {code: row for row, code in enumerate(columns["code_insee"])}
    return SimilarPlaces(index, lists["streets"], lists["lieux_dits"], row_of)
