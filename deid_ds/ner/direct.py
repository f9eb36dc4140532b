"""Tagging without Flair's ``Sentence`` objects: the loaded tagger's own modules called on tensors.

Flair's ``SequenceTagger.predict`` wants every token as a ``Token`` object holding each embedding as a
separate tensor, then concatenates them token by token; on the demo's model without character language
models, building and reading those objects costs more than the network. :class:`DirectTagger` computes
each embedding of a mini-batch as one matrix from the token texts (and their knowledge-feature columns),
pads them into the tensor Flair would have built, and calls the tagger's own ``forward``, Viterbi decoder
and span reading (``get_spans_from_bio``): the same weights, the same arithmetic, the same spans
(``tests/ner/test_direct.py`` compares them with Flair's on every sentence of a note set).

Supported embeddings: FastText (``FastTextEmbeddings``), Flair's character embeddings, Flair character
language models and the knowledge features (:mod:`deid_ds.ner.knowledge`), for a tagger predicting spans
(BIO/BIOES tags, as ``train`` writes them); :meth:`DirectTagger.of` returns None for any other (a transformer,
token tags), which ``predict`` then runs through Flair.

Imported only at run time (it imports torch and Flair).
"""

from __future__ import annotations

from collections.abc import Sequence

import flair
import torch
from flair.data import get_spans_from_bio
from flair.embeddings import FastTextEmbeddings, FlairEmbeddings

from deid_ds.ner.knowledge import KnowledgeEmbeddings
from deid_ds.ner.speed import BatchedCharacterEmbeddings, LengthSortedFlairEmbeddings

#: A sentence's entities: (first token, last token inclusive, label, score), as ``sentence_entities`` gives them.
Entity = tuple[int, int, str, float]


class DirectTagger:
    """A loaded ``SequenceTagger`` run on token texts (module docstring); build it with :meth:`of`."""

    def __init__(self, tagger, embeddings: list) -> None:
        self.tagger = tagger
        self.embeddings = embeddings  # in Flair's concatenation order (sorted by name: Token.get_each_embedding)
        self._knowledge: dict[str, torch.Tensor] = {}  # per feature column: a few hundred combinations at most

    @classmethod
    def of(cls, tagger) -> DirectTagger | None:
        """The direct runner of ``tagger`` (after :func:`deid_ds.ner.speed.speed_up`), or None when one of its
        embeddings is not supported here."""
        stack = list(getattr(tagger.embeddings, "embeddings", [tagger.embeddings]))
        supported = (FastTextEmbeddings, BatchedCharacterEmbeddings, LengthSortedFlairEmbeddings, KnowledgeEmbeddings)
        if any(type(embedding) not in supported for embedding in stack):
            return None
        if any(isinstance(e, FastTextEmbeddings) and e.field is not None for e in stack):
            return None
        if any(isinstance(e, FlairEmbeddings) and not e.tokenized_lm for e in stack):
            return None  # a language model over the untokenised text: Flair knows the spaces, not us
        if not tagger.predict_spans:  # token tags: read by predict's tags_to_spans, through Flair
            return None
        return cls(tagger, sorted(stack, key=lambda embedding: embedding.name))

    @property
    def uses_features(self) -> bool:
        return any(isinstance(embedding, KnowledgeEmbeddings) for embedding in self.embeddings)

    def tag(
        self, sentences: Sequence[Sequence[str]], features: Sequence[Sequence[str]] | None, mini_batch_size: int
    ) -> list[list[Entity]]:
        """The entities of each sentence (lists of token texts; ``features``: each token's knowledge-feature
        column, for a model that reads them), tagged ``mini_batch_size`` sentences at a time, longest first
        (Flair's order)."""
        found: list[list[Entity]] = [[] for _ in sentences]
        filled = [i for i in range(len(sentences)) if sentences[i]]
        order = sorted(filled, key=lambda i: len(sentences[i]), reverse=True)
        with torch.no_grad():
            for start in range(0, len(order), mini_batch_size):
                batch = order[start : start + mini_batch_size]
                texts = [sentences[i] for i in batch]
                columns = [features[i] for i in batch] if features is not None else None
                for i, entities in zip(batch, self._tag_batch(texts, columns)):
                    found[i] = entities
        return found

    def _tag_batch(self, texts: list[Sequence[str]], columns: list[Sequence[str]] | None) -> list[list[Entity]]:
        tagger = self.tagger
        matrix = torch.cat([self._embed(embedding, texts, columns) for embedding in self.embeddings], dim=1)
        lengths = [len(sentence) for sentence in texts]
        padded = torch.nn.utils.rnn.pad_sequence(list(torch.split(matrix, lengths)), batch_first=True)
        scores = tagger.forward(padded.to(dtype=tagger.linear.weight.dtype), torch.LongTensor(lengths))
        if tagger.use_crf:
            predictions, _ = tagger.viterbi_decoder.decode(scores, False, texts)
        else:
            predictions, _ = tagger._standard_inference(scores, texts, False)  # reads only the sentences' lengths
        result = []
        for sentence_predictions in predictions:
            tags = [tag for tag, _ in sentence_predictions]
            if all(tag == "O" for tag in tags):  # most sentences: nothing to read
                result.append([])
                continue
            confidences = [float(score) for _, score in sentence_predictions]
            spans = get_spans_from_bio(tags, confidences)
            result.append([(span[0], span[-1], label, score) for span, score, label in spans])
        return result

    def _embed(self, embedding, texts: list[Sequence[str]], columns) -> torch.Tensor:
        """``embedding``'s vectors of every token of ``texts``, one row per token, sentence after sentence."""
        if isinstance(embedding, FastTextEmbeddings):
            vector = embedding.get_cached_vec
            return torch.stack([vector(token) for sentence in texts for token in sentence]).to(flair.device)
        if isinstance(embedding, BatchedCharacterEmbeddings):
            return torch.stack([vector for sentence in embedding.token_vectors(texts) for vector in sentence])
        if isinstance(embedding, KnowledgeEmbeddings):
            return self._knowledge_rows(embedding, [column for sentence in columns for column in sentence])
        return _language_model_rows(embedding, texts)

    def _knowledge_rows(self, embedding: KnowledgeEmbeddings, columns: list[str]) -> torch.Tensor:
        """The knowledge embedding of each token's feature column, each distinct column computed once (its
        vector depends on the column alone)."""
        cache = self._knowledge
        missing = list(set(columns) - cache.keys())
        if missing:
            rows = embedding.linear(embedding.multi_hot_of(missing).to(flair.device))
            cache.update(zip(missing, rows))
        return torch.stack([cache[column] for column in columns])


def _language_model_rows(embedding: FlairEmbeddings, texts: list[Sequence[str]]) -> torch.Tensor:
    """Flair's character language model embedding of every token (``FlairEmbeddings._add_embeddings_internal``
    on token texts: the tokenized string, the hidden state at each token's end), sentences grouped by length
    as :class:`~deid_ds.ner.speed.LengthSortedFlairEmbeddings` groups them."""
    strings = [" ".join(sentence) for sentence in texts]
    if embedding.is_lower:
        strings = [string.lower() for string in strings]
    lm = embedding.lm
    start_marker = lm.document_delimiter if "document_delimiter" in lm.__dict__ else "\n"
    rows: list[torch.Tensor | None] = [None] * len(texts)
    order = sorted(range(len(texts)), key=lambda i: len(strings[i]))
    group = embedding.group if len(texts) > embedding.group else len(texts)
    for start in range(0, len(order), group):
        members = order[start : start + group]
        states = lm.get_representation([strings[i] for i in members], start_marker, " ", embedding.chars_per_chunk)
        offsets: list[int] = []
        columns: list[int] = []
        for column, i in enumerate(members):
            offsets += _token_offsets(texts[i], len(start_marker), embedding.is_forward_lm, embedding.with_whitespace)
            columns += [column] * len(texts[i])
        picked = torch.split(states[offsets, columns, :], [len(texts[i]) for i in members])
        for i, sentence_rows in zip(members, picked):
            rows[i] = sentence_rows
    return torch.cat(rows)  # type: ignore[arg-type]


def _token_offsets(tokens: Sequence[str], marker: int, forward: bool, with_whitespace: bool) -> list[int]:
    """Where Flair reads each token's language-model state in its sentence's string (tokens joined by spaces,
    after a start marker of ``marker`` characters)."""
    offsets = []
    offset_forward = marker
    offset_backward = sum(len(token) for token in tokens) + len(tokens) - 1 + marker
    for token in tokens:
        offset_forward += len(token)
        offset = offset_forward if forward else offset_backward
        offsets.append(offset if with_whitespace else offset - 1)
        offset_forward += 1
        offset_backward -= 1 + len(token)
    return offsets
