"""The surrogate policy for dates and places: today's keyed shift, or ε·d-private perturbation.

``shift`` (the default) moves every date of a patient by one keyed offset and draws communes at random
from the pools: intervals are kept exactly, so one true date known to an attacker gives back all the
others. ``dp`` perturbs each distinct value on its own under ε·d-privacy (Tchouka, Couchot, Laiymani:
Laplace noise in the unit a date or age is written in, communes drawn by a local exponential mechanism
among similar communes), memoised so that the same value always gets the same surrogate.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from deid_ds.errors import InputError

PRIVACY_MODES = ("shift", "dp")
#: Among which communes ``dp`` draws (:mod:`deid_ds.deidentification.similar_communes`): the ``k`` nearest of
#: each (the seed's), or the others of a fixed group of ``k + 1`` to ``2k + 1`` similar ones (at least ``k``
#: possible originals behind every surrogate).
NEIGHBOURHOODS = ("nearest", "groups")


@dataclass(frozen=True, slots=True)
class Privacy:
    """What a run's surrogates of dates, ages and places promise (picklable: it travels to workers)."""

    mode: str = "shift"
    #: The ε·d budget (``dp`` only): see docs/privacy.md for how it is split across a patient's values.
    epsilon: float = 1.0
    #: How many nearest similar communes the exponential mechanism draws among (``dp`` only).
    k: int = 10
    #: The run's reference day (``dp`` only): a date on or before it never becomes one after it. Fixed for the
    #: run (``--dp-reference``, else the day it runs, written in the report) so that a rerun reproduces it.
    reference: dt.date | None = None
    #: Among which similar communes ``dp`` draws (:data:`NEIGHBOURHOODS`).
    neighbourhood: str = "nearest"

    def __post_init__(self) -> None:
        if self.mode not in PRIVACY_MODES:
            raise InputError(f"--privacy {self.mode}: expected one of {', '.join(PRIVACY_MODES)}")
        if not self.epsilon > 0:
            raise InputError(f"--epsilon {self.epsilon}: expected a positive number")
        if self.k < 1:
            raise InputError(f"--k {self.k}: expected at least 1")
        if self.neighbourhood not in NEIGHBOURHOODS:
            raise InputError(f"neighbourhood {self.neighbourhood}: expected one of {', '.join(NEIGHBOURHOODS)}")

    @property
    def is_dp(self) -> bool:
        return self.mode == "dp"
