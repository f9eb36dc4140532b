"""The choices of ``deid-ds campaign`` (``--tool``, ``--select``), apart from the code that acts on them.

They are read when the command is declared: keeping them here lets ``deid-ds campaign --help`` start without
importing the campaign's builders (Arrow, the segmenter).
"""

from __future__ import annotations

PRODIGY = "prodigy"
LABEL_STUDIO = "label-studio"
DOCCANO = "doccano"
#: The annotation tools a campaign is written for (``--tool``); each but Prodigy is also its folder in ``OUT``.
TOOLS: tuple[str, ...] = (PRODIGY, LABEL_STUDIO, DOCCANO)

RANDOM = "random"
DISAGREEMENT = "disagreement"
UNCERTAINTY = "uncertainty"
#: ``--select`` choices, the default first.
SELECTIONS: tuple[str, ...] = (RANDOM, DISAGREEMENT, UNCERTAINTY)
