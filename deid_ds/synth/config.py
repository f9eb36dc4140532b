"""The options of a generated sample (``deid-ds synth``), checked when built."""

from __future__ import annotations

from dataclasses import dataclass

#: Phrasing families per ``--phrasing``: ``unseen`` (family 2, :mod:`deid_ds.synth.unseen`) is a test style kept out
#: of ``all``, so that ``all`` corpora stay what they were and nothing tuned on them has seen family 2.
#: ``exports`` (family 3) and ``exports-heldout`` (family 4, :mod:`deid_ds.synth.exports`) are the styles of documents
#: rendered from PDF, CDA, mainframe and dictation exports, in their development and held-out phrasings.
PHRASINGS = {
    "train": (0,),
    "heldout": (1,),
    "all": (0, 1),
    "unseen": (2,),
    "exports": (3,),
    "exports-heldout": (4,),
    "exports-all": (3, 4),
}
#: ``--geography``: ``brittany`` (the four Breton départements, people of the French pools: every corpus
#: before it) or ``france`` (arrondissements, Corsica, overseas départements, CEDEX/BP/CS/TSA, buildings and
#: quartiers, people of many origins, the metadata flaws of real warehouses).
GEOGRAPHIES = ("brittany", "france")
#: Share of notes given a passage about the people around the patient (:mod:`deid_ds.synth.third_parties`) when
#: ``--third-parties`` is not given: family 3 (``exports``, the export styles' development phrasing) only. The
#: other families keep their corpora byte for byte (the shipped sample, the held-out export test corpora).
DEFAULT_THIRD_PARTIES = {3: 0.4}


@dataclass(frozen=True)
class SynthConfig:
    """Options of a generated sample; see ``deid-ds synth --help`` for their meaning."""

    notes: int = 300
    patients: int | None = None  # default: one patient for about four notes
    seed: int = 1
    missing_professionals: float = 0.15
    missing_streets: float = 0.2
    noise: float = 0.3
    phrasing: str = "train"
    distractor_professionals: int = 2500
    distractor_streets: int = 20  # per commune, on average (three times more in the big towns)
    geography: str | None = None  # None: "france" for the exports phrasings, "brittany" for the others
    third_parties: float | None = None  # None: DEFAULT_THIRD_PARTIES per family
    text_noise: int = 0  # 0-3: OCR and typing noise written into the notes' text (deid_ds.synth.perturb.LEVELS)

    def __post_init__(self) -> None:
        if self.notes < 1:
            raise ValueError("notes must be at least 1")
        if self.patients is not None and not 1 <= self.patients <= self.notes:
            raise ValueError("patients must be between 1 and the number of notes")
        for name in ("missing_professionals", "missing_streets", "noise", "third_parties"):
            value = getattr(self, name)
            if value is not None and not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must be between 0 and 1")
        if self.phrasing not in PHRASINGS:
            raise ValueError(f"phrasing must be one of {', '.join(PHRASINGS)}")
        if self.text_noise not in (0, 1, 2, 3):
            raise ValueError("text_noise must be 0, 1, 2 or 3")
        if self.geography is not None and self.geography not in GEOGRAPHIES:
            raise ValueError(f"geography must be one of {', '.join(GEOGRAPHIES)}")

    @property
    def region(self) -> str:
        """The geography in force: the export families are all France's, the older families Brittany's (their
        corpora stay byte for byte what they were)."""
        if self.geography is not None:
            return self.geography
        return "france" if self.phrasing.startswith("exports") else "brittany"

    def third_party_share(self, family: int) -> float:
        """The share of the notes of ``family`` that get a passage about the people around the patient."""
        if self.third_parties is not None:
            return self.third_parties
        return DEFAULT_THIRD_PARTIES.get(family, 0.0)

    @property
    def n_patients(self) -> int:
        return self.patients or max(1, round(self.notes / 4))
