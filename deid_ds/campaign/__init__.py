"""The manual correction campaign: documents chosen per type, assigned to annotators with an overlap
for agreement, written as Prodigy, Label Studio or doccano tasks; the logic of the Prodigy recipes.

One module per job, pure functions with the I/O at the edges:

* :mod:`.source` reads a weak-label-format directory; :mod:`.sampling` chooses documents per type;
  :mod:`.assignment` assigns them (primary share and overlap); :mod:`.tasks` builds and checks tasks;
  :mod:`.build` writes the campaign (``deid-ds campaign``, :mod:`.cli`); :mod:`.label_studio` and
  :mod:`.doccano` write the open tools' import files;
* :mod:`.components` and :mod:`.review` are what the ``deid.correct`` and ``deid.review`` recipes
  (``recipes/``) run. Nothing here imports Prodigy.
"""

from __future__ import annotations

from deid_ds.lazy_api import lazy_getattr

#: public name -> the module that defines it, imported on first use (PEP 562): importing the package, as
#: `deid-ds COMMAND --help` and the engines' workers do, stays cheap.
_API: dict[str, str] = {
    "CampaignReport": "deid_ds.campaign.build",
    "campaign_table": "deid_ds.campaign.build",
    "prepare_campaign": "deid_ds.campaign.build",
}

__all__ = ["CampaignReport", "campaign_table", "prepare_campaign"]


__getattr__ = lazy_getattr(__name__, _API)
