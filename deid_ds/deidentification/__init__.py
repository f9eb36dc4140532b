"""``deid-ds deidentify``: mask or replace the identifiers found in the original HTML notes.

One module per job: :mod:`~deid_ds.deidentification.keyed` (HMAC-driven choices), :mod:`~.pools` (what
surrogates are drawn from), :mod:`~.context` (scopes and what is never drawn), :mod:`~.privacy` (keyed shift or
ε·d-privacy), :mod:`~.names`,
:mod:`~.places` (with :mod:`~.similar_communes` and :mod:`~.foreign_cities` under ``dp``), :mod:`~.contacts` (with
:mod:`~.phone_words`, a phone said in words) and :mod:`~.dates_shift` (with :mod:`~.date_words`, a date in words)
(the surrogates; with ``--privacy dp``, :mod:`~.dp_dates` moves the dates,
:mod:`~.ages_durations` finds and perturbs the ages and durations of the text, and :mod:`~.dp_accounting` sums
what each patient's values cost), :mod:`~.surrogates`
(mask or surrogate per label), :mod:`~.metadata` (metadata columns), :mod:`~.html_replace` (replacing
inside the HTML), :mod:`~.regions` (the views of a file besides its text), :mod:`~.other_views`
(de-identifying them), :mod:`~.identifiers` and :mod:`~.identifier_surrogates` (the direct identifiers no
span names: NIR, IPP, RPPS...), :mod:`~.document` (one note), :mod:`~.leaks` (the residual-leak check),
:mod:`~.pipeline` (reading and writing) and :mod:`~.cli`. The policies are in docs/deidentify.md.
"""

from __future__ import annotations

from deid_ds.lazy_api import lazy_getattr

#: public name -> the module that defines it, imported on first use (PEP 562): importing the package, as
#: `deid-ds COMMAND --help` and the engines' workers do, stays cheap.
_API: dict[str, str] = {
    "DeidentifyReport": "deid_ds.deidentification.pipeline",
    "deidentify": "deid_ds.deidentification.pipeline",
}

__all__ = ["DeidentifyReport", "deidentify"]


__getattr__ = lazy_getattr(__name__, _API)
