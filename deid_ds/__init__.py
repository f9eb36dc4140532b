"""deid-ds: de-identification training corpora for French clinical notes by distant supervision.

Importing the package is cheap: it never imports torch, flair or prodigy. The functions below are
loaded on first access.
"""

from __future__ import annotations

from deid_ds.lazy_api import lazy_getattr

__version__ = "0.1.0"

# public name -> module that defines it
_API: dict[str, str] = {
    "html_to_text": "deid_ds.segmentation.html_text",
    "ParsedHtml": "deid_ds.segmentation.html_text",
    "OffsetMap": "deid_ds.segmentation.offsets",
    "Segmenter": "deid_ds.segmentation.segmenter",
    "SegmentedNote": "deid_ds.segmentation.segmenter",
    "segment_html": "deid_ds.segmentation.segmenter",
    "segment_notes": "deid_ds.segmentation.notes",
    "tokenize": "deid_ds.segmentation.tokens",
    "train_parameters": "deid_ds.segmentation.punkt_training",
    "punkt_train": "deid_ds.segmentation.notes",
    "weak_label": "deid_ds.weak_labelling",
    "WeakLabelReport": "deid_ds.weak_labelling",
    "SynthConfig": "deid_ds.synth",
    "generate_corpus": "deid_ds.synth",
    "write_corpus": "deid_ds.synth",
    "build_kb": "deid_ds.kb.build",
    "load_matcher": "deid_ds.kb.matcher",
    "fetch": "deid_ds.kb.download",
    "Note": "deid_ds.model",
    "Sentence": "deid_ds.model",
    "Token": "deid_ds.model",
    "EntitySpan": "deid_ds.model",
    "PatientMetadata": "deid_ds.model",
    "LABELS": "deid_ds.model",
    "prepare_campaign": "deid_ds.campaign.build",
    "CampaignReport": "deid_ds.campaign.build",
    "agreement_from_files": "deid_ds.agreement.compute",
    "gold_from_files": "deid_ds.agreement.gold",
    "read_answers": "deid_ds.agreement.readers",
    "fleiss_kappa": "deid_ds.agreement.kappa",
    "train_fasttext": "deid_ds.ner.fasttext",
    "import_fasttext": "deid_ds.ner.fasttext",
    "train_flair_lm": "deid_ds.ner.flair_lm",
    "import_flair_lm": "deid_ds.ner.flair_lm",
    "train_tagger": "deid_ds.ner.train",
    "TrainConfig": "deid_ds.ner.train",
    "SyntheticMix": "deid_ds.ner.synthetic",
    "predict": "deid_ds.ner.predict",
    "merge_spans": "deid_ds.ner.hybrid",
    "merge_scored": "deid_ds.ner.hybrid",
    "calibrate": "deid_ds.ner.calibrate",
    "evaluate": "deid_ds.evaluation.evaluate",
    "deidentify": "deid_ds.deidentification.pipeline",
    "find_leaks": "deid_ds.deidentification.leaks",
    "check_leaks": "deid_ds.deidentification.leaks",
    "find_identifiers": "deid_ds.deidentification.identifiers",
    "note_identifiers": "deid_ds.deidentification.identifiers",
}

__all__ = ["__version__", *_API]


__getattr__ = lazy_getattr(__name__, _API)
