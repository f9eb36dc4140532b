"""``deid-ds review``: original and de-identified notes side by side, entities highlighted, for people.

Before a de-identified corpus is released, someone reads a sample of it against the originals. This
package draws that sample, de-identifies it exactly as ``deid-ds deidentify`` would (same spans, same
key, same surrogates), and writes one self-contained HTML page. Modules: :mod:`.review` (:func:`review`),
:mod:`.page` (the HTML), :mod:`.cli`.
"""

from __future__ import annotations

from deid_ds.review.review import ReviewedNote, ReviewResult, choose_documents, review

__all__ = ["ReviewResult", "ReviewedNote", "choose_documents", "review"]
