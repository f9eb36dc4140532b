"""The knowledge embedding: each token's knowledge features (:mod:`deid_ds.label.features`), learned.

``weak-label`` writes the features the weak labeller's lookups give each token as the middle column of
its Flair files (``token FEATURES TAG``); ``train`` reads it as the ``kf`` column and stacks
:class:`KnowledgeEmbeddings` with the other embeddings: the multi-hot vector of the token's features
through a trainable linear layer. The tagger then weighs "in the surname list", "the patient's first
name", "a common French word" in context instead of memorising surface forms. With ``feature_dropout``
(``train --feature-dropout``), a share of the tokens read as having no feature in training
(:func:`drop_tokens`), so that it cannot lean on the lists alone.

The embedding stores the feature vocabulary, the knowledge base's fingerprint and whether metadata
features were used — never the knowledge base's contents. At prediction, :func:`attach_features`
computes the same features with the same function for each note's sentences (a knowledge base is
needed: ``predict --kb``). Registered with Flair (``register_embeddings``) so that
``SequenceTagger.load`` rebuilds it once this module is imported (:func:`deid_ds.ner.predict.load_tagger`
does).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import flair
import torch
from flair.data import Sentence
from flair.embeddings.base import TokenEmbeddings, register_embeddings

from deid_ds.errors import InputError
from deid_ds.label.features import parse_feature_column

#: The ColumnCorpus column (and token label type) holding the features.
FEATURE_COLUMN = "kf"
DEFAULT_DIM = 32


@register_embeddings
class KnowledgeEmbeddings(TokenEmbeddings):
    """The multi-hot vector of a token's knowledge features (its ``kf`` label), through a linear layer."""

    def __init__(
        self,
        names: Sequence[str],
        embedding_length: int = DEFAULT_DIM,
        kb_fingerprint: str | None = None,
        use_metadata: bool = True,
        field: str = FEATURE_COLUMN,
        feature_dropout: float = 0.0,
    ) -> None:
        self.name = "knowledge-features"
        self.static_embeddings = False
        super().__init__()
        self.names = list(names)
        self.index = {name: i for i, name in enumerate(self.names)}
        self.kb_fingerprint = kb_fingerprint
        self.use_metadata = use_metadata
        self.field = field
        self._length = embedding_length
        self.feature_dropout = feature_dropout  # training only: see drop_tokens
        self.linear = torch.nn.Linear(len(self.names), embedding_length)
        self.to(flair.device)

    @property
    def embedding_length(self) -> int:
        return self._length

    def multi_hot(self, tokens) -> torch.Tensor:
        """The ``(tokens, features)`` 0/1 matrix of ``tokens``' feature labels (unknown names ignored)."""
        columns = []
        for token in tokens:
            labels = token.get_labels(self.field)
            columns.append(labels[0].value if labels else "")
        return self.multi_hot_of(columns)

    def multi_hot_of(self, columns: Sequence[str]) -> torch.Tensor:
        """The ``(tokens, features)`` 0/1 matrix of feature columns (``""``: none; unknown names ignored)."""
        rows: list[int] = []
        indices: list[int] = []
        index = self.index
        for row, column in enumerate(columns):
            if not column:
                continue
            for name in parse_feature_column(column):
                position = index.get(name)
                if position is not None:
                    rows.append(row)
                    indices.append(position)
        matrix = torch.zeros(len(columns), len(self.names))
        if rows:
            matrix[rows, indices] = 1.0
        return matrix

    def _add_embeddings_internal(self, sentences: list[Sentence]) -> list[Sentence]:
        tokens = [token for sentence in sentences for token in sentence.tokens]
        if not tokens:
            return sentences
        matrix = self.multi_hot(tokens)
        if self.training and self.feature_dropout > 0:
            matrix = drop_tokens(matrix, self.feature_dropout)
        embedded = self.linear(matrix.to(flair.device))
        for vector, token in zip(embedded, tokens):
            token.set_embedding(self.name, vector)
        return sentences

    def __str__(self) -> str:
        return f"{self.name}({len(self.names)} -> {self._length})"

    def record(self) -> dict:
        """What the model card records (``knowledge_features``)."""
        return {"names": self.names, "kb_fingerprint": self.kb_fingerprint, "use_metadata": self.use_metadata}

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> KnowledgeEmbeddings:
        return cls(
            params["names"],
            params["embedding_length"],
            params.get("kb_fingerprint"),
            params.get("use_metadata", True),
            params.get("field", FEATURE_COLUMN),
            params.get("feature_dropout", 0.0),
        )

    def to_params(self) -> dict[str, Any]:
        return {
            "names": self.names,
            "embedding_length": self._length,
            "kb_fingerprint": self.kb_fingerprint,
            "use_metadata": self.use_metadata,
            "field": self.field,
            "feature_dropout": self.feature_dropout,
        }


def drop_tokens(matrix: torch.Tensor, share: float, generator: torch.Generator | None = None) -> torch.Tensor:
    """``matrix`` (tokens x features) with the row of each token zeroed with probability ``share``: the token
    reads as one with no feature (``-``), as a name the knowledge base does not hold does.

    Knowledge-feature dropout (``train --feature-dropout``): drawn afresh for every mini-batch of every epoch
    (the embedding is recomputed each batch, its layer being trained), in training mode only, so that the
    network cannot lean on the lists alone and must read the context too. Whole rows, not single features,
    and no rescaling (unlike ``torch.nn.Dropout``): a dropped token must look exactly like an unlisted one.
    """
    if share <= 0 or len(matrix) == 0:
        return matrix
    kept = torch.rand(len(matrix), 1, generator=generator) >= share
    return matrix * kept


def knowledge_embedding_of(tagger) -> KnowledgeEmbeddings | None:
    """The knowledge embedding of a loaded tagger (in its stack), or None when it uses none."""
    embeddings = tagger.embeddings
    stack = getattr(embeddings, "embeddings", [embeddings])
    return next((e for e in stack if isinstance(e, KnowledgeEmbeddings)), None)


def has_feature_column(path: str | Path) -> bool:
    """Whether a Flair file of ``weak-label`` has the knowledge-feature column (three columns on its first line)."""
    path = Path(path)
    if not path.is_file():
        return False
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                return len(line.split()) == 3
    return False


def check_kb_for(tagger, kb_dir: str | None, log=None, *, strict: bool = False) -> None:
    """Refuse (:class:`InputError`) a tagger with knowledge features and no knowledge base to compute them;
    warn through ``log`` (or refuse, ``strict``) when the knowledge base is not the one it was trained with."""
    embedding = knowledge_embedding_of(tagger)
    if embedding is None:
        return
    if kb_dir is None:
        raise InputError(
            "this model was trained with knowledge features: give the knowledge base they come from "
            "(--kb DIR, or --with-rules DIR)"
        )
    from deid_ds.kb.fingerprint import kb_fingerprint

    if embedding.kb_fingerprint is not None and kb_fingerprint(kb_dir) != embedding.kb_fingerprint:
        message = f"{kb_dir}: not the knowledge base the model was trained with (its fingerprint differs)"
        if strict:
            raise InputError(message)
        if log is not None:
            log(f"warning: {message}; its knowledge features may read differently")


def attach_features(sentences: Sequence[Sentence], features: Sequence[str], first_tokens: Sequence[int]) -> None:
    """Give each token of a note's ``sentences`` its feature column (``kf`` label), as ``ColumnCorpus`` does.

    ``features`` is the note's column per token (:func:`deid_ds.label.features.note_feature_columns`),
    ``first_tokens`` the index in the note of each sentence's first token.
    """
    for sentence, first in zip(sentences, first_tokens):
        for k, token in enumerate(sentence.tokens):
            token.add_label(FEATURE_COLUMN, features[first + k])
