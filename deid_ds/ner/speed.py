"""Tagging faster on CPU with the same Flair tagger: what ``deid-ds predict`` does to a loaded model and its input.

Each trick here is kept because a line of ``benchmarks/predict_cpu.py`` shows what it earns (docs/benchmarks.md,
"Prediction: `predict` on CPU"); neither changes the output.

* :func:`tag_sentences` calls ``SequenceTagger.predict`` one mini-batch at a time, on the sentences sorted
  as Flair sorts them: the same mini-batches, but Flair 0.15 clears the embeddings of *every* sentence it was
  given after each mini-batch (``store_embeddings(sentences, ...)``), quadratic in the batch's sentences.
* :class:`BatchedCharacterEmbeddings` computes Flair's character embeddings (a BiLSTM over each token's
  characters) for all the distinct tokens of a mini-batch in one LSTM call, and remembers them: a token's
  character embedding depends on its text alone. Flair runs one LSTM call per sentence, for every token.
* :class:`LengthSortedFlairEmbeddings` gives a Flair language model the sentences of a mini-batch in groups
  of similar length in characters: less padding, the same embeddings.
* :class:`ListViterbiDecoder` reads the CRF's decoded tags as lists, not tensor element by tensor element.

Imported only at run time (it imports torch and Flair).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import flair
import torch
from flair.data import Sentence
from flair.embeddings import CharacterEmbeddings, FlairEmbeddings
from flair.models.sequence_tagger_utils.viterbi import ViterbiDecoder
from torch.nn.functional import softmax

#: Distinct token texts whose character embedding is remembered (50 floats each by default: a few MB).
CHAR_CACHE_SIZE = 100_000


class BatchedCharacterEmbeddings(CharacterEmbeddings):
    """Flair's ``CharacterEmbeddings``, computed once per distinct token text, a mini-batch in one LSTM call.

    Same weights and same arithmetic as Flair's (the output at each token's last character, both
    directions): installed on a loaded model by :func:`speed_up`, which changes the instance's class.
    """

    def _add_embeddings_internal(self, sentences: list[Sentence]):
        texts = [[token.text for token in sentence.tokens] for sentence in sentences]
        for sentence, vectors in zip(sentences, self.token_vectors(texts)):
            for token, vector in zip(sentence.tokens, vectors):
                token.set_embedding(self.name, vector)

    def token_vectors(self, sentences: Sequence[Sequence[str]]) -> list[list[torch.Tensor]]:
        """The character embedding Flair gives each token of ``sentences`` (lists of token texts)."""
        cache: dict[str, torch.Tensor] = self.__dict__.setdefault("_deid_cache", {})
        wanted = {text for texts in sentences for text in texts}
        missing = list(wanted - cache.keys())
        if missing:
            if len(cache) + len(missing) > CHAR_CACHE_SIZE:
                cache.clear()
                missing = list(wanted)
            cache.update(zip(missing, self._embed_texts(missing)))
        return [[cache[text] for text in _flair_char_order(list(texts), self._char_indices)] for texts in sentences]

    def _char_indices(self, text: str) -> tuple[int, ...]:
        known: dict[str, tuple[int, ...]] = self.__dict__.setdefault("_deid_chars", {})
        key = known.get(text)
        if key is None:
            if len(known) > CHAR_CACHE_SIZE:
                known.clear()
            index = self.char_dictionary.get_idx_for_item
            key = known[text] = tuple(index(c) for c in text)
        return key

    def _embed_texts(self, texts: Sequence[str]) -> torch.Tensor:
        ordered = sorted(range(len(texts)), key=lambda i: len(texts[i]), reverse=True)  # pack_padded wants this
        lengths = [len(texts[i]) for i in ordered]
        chars = torch.zeros((len(texts), lengths[0]), dtype=torch.long)
        for row, i in enumerate(ordered):
            chars[row, : lengths[row]] = torch.tensor(self._char_indices(texts[i]), dtype=torch.long)
        with torch.no_grad():
            embedded = self.char_embedding(chars.to(flair.device)).transpose(0, 1)
            packed = torch.nn.utils.rnn.pack_padded_sequence(embedded, lengths)
            output, _ = self.char_rnn(packed)
            output, _ = torch.nn.utils.rnn.pad_packed_sequence(output)  # (chars, tokens, 2 * hidden)
            last = output[torch.tensor(lengths) - 1, torch.arange(len(texts))]
        result = torch.empty_like(last)
        result[torch.tensor(ordered)] = last
        return result


class LengthSortedFlairEmbeddings(FlairEmbeddings):
    """Flair's ``FlairEmbeddings``, the language model run on groups of sentences of similar length in characters.

    The tagger's mini-batches are sorted by length in *tokens*; the language model pads every sentence of
    its call to the longest in *characters* (1.5 to 1.7 times the characters of the sample's sentences).
    Each sentence's hidden states do not depend on the others of its call (padding comes after the text,
    in both directions): the same embeddings, less padding.
    """

    group = 32

    def _add_embeddings_internal(self, sentences: list[Sentence]) -> list[Sentence]:
        if len(sentences) <= self.group:
            return super()._add_embeddings_internal(sentences)
        ordered = sorted(sentences, key=lambda sentence: len(sentence.to_tokenized_string()))
        for i in range(0, len(ordered), self.group):
            super()._add_embeddings_internal(ordered[i : i + self.group])
        return sentences


class ListViterbiDecoder(ViterbiDecoder):
    """Flair's ``ViterbiDecoder.decode``, the same tensor arithmetic, with the sentence lengths and the result
    read as Python lists: Flair compares a tensor of lengths element by element at every time step and
    reads each token's tag and confidence as a separate tensor (``.item()``), which costs more than the
    decoding itself. Installed on a loaded model by :func:`speed_up` (``probabilities_for_all_classes``
    is left to Flair's own method).
    """

    def decode(self, features_tuple: tuple, probabilities_for_all_classes: bool, sentences: list[Sentence]):
        if probabilities_for_all_classes:
            return super().decode(features_tuple, probabilities_for_all_classes, sentences)
        features, lengths, transitions = features_tuple
        lengths = [int(length) for length in lengths]
        batch_size, seq_len = features.size(0), features.size(1)
        scores_upto_t = torch.zeros(batch_size, seq_len + 1, self.tagset_size, dtype=features.dtype).to(flair.device)
        backpointers = (
            torch.ones((batch_size, seq_len + 1, self.tagset_size), dtype=torch.long, device=flair.device)
            * self.stop_tag
        )
        for t in range(seq_len):
            batch_size_t = sum(length > t for length in lengths)
            terminates = [i for i, length in enumerate(lengths) if length == t + 1]
            if t == 0:
                scores_upto_t[:batch_size_t, t] = features[:batch_size_t, t, :, self.start_tag]
                backpointers[:batch_size_t, t, :] = self.start_tag
            else:
                scores_upto_t[:batch_size_t, t], backpointers[:batch_size_t, t, :] = torch.max(
                    features[:batch_size_t, t, :, :] + scores_upto_t[:batch_size_t, t - 1].unsqueeze(1), dim=2
                )
            if terminates:
                scores_upto_t[terminates, t + 1], backpointers[terminates, t + 1, :] = torch.max(
                    scores_upto_t[terminates, t].unsqueeze(1) + transitions[self.stop_tag].unsqueeze(0), dim=2
                )
        decoded = torch.zeros((batch_size, backpointers.size(1)), dtype=torch.long, device=flair.device)
        pointer = torch.ones((batch_size, 1), dtype=torch.long, device=flair.device) * self.stop_tag
        for t in reversed(range(backpointers.size(1))):
            decoded[:, t] = torch.gather(backpointers[:, t, :], 1, pointer).squeeze(1)
            pointer = decoded[:, t].unsqueeze(1)
        scores_upto_t = scores_upto_t[:, :-1, :]
        decoded = decoded[:, 1:]
        confidences = torch.max(softmax(scores_upto_t, dim=2), dim=2).values
        item = self.tag_dictionary.get_item_for_index
        tags = [
            [(item(tag), confidence) for tag, confidence in zip(tag_row[:length], confidence_row[:length])]
            for tag_row, confidence_row, length in zip(decoded.tolist(), confidences.tolist(), lengths)
        ]
        return tags, []


def _flair_char_order(texts: list[str], chars: Callable[[str], tuple[int, ...]]) -> list[str]:
    """Whose character embedding each token gets from Flair 0.15 (its own, but for repeated tokens).

    Flair maps its length-sorted tokens back to their places with a loop that, when a sentence holds the
    same characters (``chars``) twice, sends both occurrences to the last one's place: the first one keeps
    the embedding of whichever token sat at its index in the sorted order. Models were trained with that
    mapping, so it is kept: the output stays Flair's exactly.
    """
    keys = [chars(text) for text in texts]
    if len(set(keys)) == len(keys):
        return texts
    order = sorted(range(len(texts)), key=lambda i: len(keys[i]), reverse=True)
    ordered = [texts[i] for i in order]
    result = list(ordered)  # Flair starts from a copy of the sorted embeddings
    last = {key: i for i, key in enumerate(keys)}  # Flair's loop sends each token to its key's last place
    for j, other in enumerate(order):
        result[last[keys[other]]] = ordered[j]
    return result


def speed_up(tagger) -> None:
    """Install the classes above in place of Flair's in ``tagger``'s embeddings and decoder (output unchanged)."""
    if type(getattr(tagger, "viterbi_decoder", None)) is ViterbiDecoder:
        tagger.viterbi_decoder.__class__ = ListViterbiDecoder
    for embedding in _embeddings(tagger.embeddings):
        if type(embedding) is CharacterEmbeddings:
            embedding.__class__ = BatchedCharacterEmbeddings
        elif type(embedding) is FlairEmbeddings:
            embedding.__class__ = LengthSortedFlairEmbeddings


def _embeddings(embeddings):
    return list(getattr(embeddings, "embeddings", [embeddings]))


def tag_sentences(tagger, sentences: list[Sentence], mini_batch_size: int) -> None:
    """``tagger.predict(sentences, mini_batch_size)``, the same mini-batches, without Flair's quadratic clean-up.

    Flair sorts the sentences by decreasing length (a stable sort) and cuts them into mini-batches; so does
    this, then gives Flair one mini-batch at a time. The sentences' context (previous and next sentence)
    is set first on the whole list, as Flair would.
    """
    Sentence.set_context_for_sentences(sentences)
    ordered = sorted((sentence for sentence in sentences if len(sentence) > 0), key=len, reverse=True)
    for i in range(0, len(ordered), mini_batch_size):
        tagger.predict(ordered[i : i + mini_batch_size], mini_batch_size=mini_batch_size, verbose=False)
