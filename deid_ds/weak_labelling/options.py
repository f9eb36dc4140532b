"""What a weak-labelling run is asked to do, in one picklable record sent to every worker."""

from __future__ import annotations

from dataclasses import dataclass

from deid_ds.label.labeller import LabelConfig
from deid_ds.segmentation.limits import NoteLimits
from deid_ds.segmentation.notes import SegmentOptions


@dataclass(frozen=True)
class WeakLabelOptions:
    """What a worker needs to label a batch exactly as the parent would (picklable)."""

    segment: SegmentOptions
    label: LabelConfig
    keep_empty: float = 0.0  # share of the sentences without entity kept in train and dev
    keep_empty_test: float = 1.0  # ... and in test
    limits: NoteLimits = NoteLimits()  # a note over them is failed with its reason (--max-note-bytes, --note-timeout)
    sentences_jsonl: bool = True  # render the JSONL lines (weak_label asks for them only with --sentences-jsonl)
    features: bool = True  # write each token's knowledge features as a middle Flair column (deid_ds.label.features)

    def share_for(self, split: str) -> float:
        """The share of sentences without entity kept in ``split``."""
        return self.keep_empty_test if split == "test" else self.keep_empty
