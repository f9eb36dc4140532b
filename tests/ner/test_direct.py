"""Tagging without Flair's ``Sentence`` objects (deid_ds.ner.direct) gives Flair's spans exactly: on a random
tagger stacking every embedding the direct path knows (FastText, characters, two character language models,
knowledge features), whatever the mini-batch size, and through ``predict`` on a trained tagger."""

from __future__ import annotations

import copy

import pytest

from tests.ner.test_predict_speed import SENTENCES

FEATURE_NAMES = ["kb:first", "kb:last", "shape:title", "shape:digits", "len:1"]


def _columns(tokens):
    """A knowledge-feature column per token, as weak-label writes them (``-``: none)."""
    columns = []
    for token in tokens:
        names = []
        if token[:1].isupper():
            names += ["kb:last", "shape:title"] if len(token) > 2 else ["kb:first"]
        if token.isdigit():
            names.append("shape:digits")
        if len(token) == 1:
            names.append("len:1")
        columns.append("|".join(sorted(names)) or "-")
    return columns


@pytest.fixture(scope="module")
def stacked(tmp_path_factory):
    """A random BiLSTM-CRF over FastText + characters + forward/backward character LMs + knowledge features."""
    import flair
    import torch
    from flair.data import Dictionary
    from flair.embeddings import CharacterEmbeddings, FastTextEmbeddings, FlairEmbeddings, StackedEmbeddings
    from flair.models import LanguageModel, SequenceTagger
    from gensim.models import FastText

    from deid_ds.ner.knowledge import KnowledgeEmbeddings

    flair.set_seed(5)
    vectors = tmp_path_factory.mktemp("fasttext") / "vectors.kv"
    FastText(sentences=SENTENCES, vector_size=6, min_count=1, epochs=2, seed=1, workers=1, bucket=500).wv.save(
        str(vectors)
    )
    characters = Dictionary(add_unk=True)
    for char in sorted({char for sentence in SENTENCES for token in sentence for char in token if char != "Ω"}):
        characters.add_item(char)
    tags = Dictionary(add_unk=False)
    for tag in ("O", "S-DATE", "B-DATE", "I-DATE", "E-DATE", "S-DOCTOR", "B-DOCTOR", "E-DOCTOR", "S-PHONE"):
        tags.add_item(tag)
    embeddings = StackedEmbeddings(
        [
            FastTextEmbeddings(str(vectors), use_local=True),
            FlairEmbeddings(LanguageModel(characters, True, hidden_size=8, nlayers=1)),
            FlairEmbeddings(LanguageModel(characters, False, hidden_size=8, nlayers=1)),
            CharacterEmbeddings(characters, char_embedding_dim=8, hidden_size_char=8),
            KnowledgeEmbeddings(FEATURE_NAMES, embedding_length=4),
        ]
    )
    model = SequenceTagger(hidden_size=8, embeddings=embeddings, tag_dictionary=tags, tag_type="ner", use_crf=True)
    model.eval()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield model
    torch.set_num_threads(threads)


def _flair_entities(tagger, sentences):
    from flair.data import Sentence

    from deid_ds.ner.knowledge import attach_features
    from deid_ds.ner.predict import sentence_entities

    flair_sentences = [Sentence(list(tokens)) for tokens in sentences]
    for sentence, tokens in zip(flair_sentences, sentences):
        attach_features([sentence], _columns(tokens), [0])
    tagger.predict(flair_sentences, mini_batch_size=32)
    return [sentence_entities(sentence, tagger.label_type) for sentence in flair_sentences]


@pytest.mark.parametrize("mini_batch", [1, 3, 128])
def test_direct_tagger_gives_flairs_spans(stacked, mini_batch):
    from deid_ds.ner.direct import DirectTagger
    from deid_ds.ner.predict import _rounded
    from deid_ds.ner.speed import speed_up

    sentences = SENTENCES * 3  # more sentences than a language model's length group
    expected = _flair_entities(stacked, sentences)
    assert sum(map(len, expected)) > 5, "the random tagger should predict some spans"
    fast = copy.deepcopy(stacked)
    speed_up(fast)
    direct = DirectTagger.of(fast)
    assert direct is not None and direct.uses_features
    for _ in range(2):  # the second pass reads the character and knowledge vectors remembered by the first
        found = direct.tag(sentences, [_columns(tokens) for tokens in sentences], mini_batch)
        assert [[(a, b, label, _rounded(score)) for a, b, label, score in spans] for spans in found] == expected


def test_direct_tagger_skips_empty_sentences_and_refuses_unknown_embeddings(stacked):
    from flair.embeddings import TransformerWordEmbeddings

    from deid_ds.ner.direct import DirectTagger
    from deid_ds.ner.speed import speed_up

    fast = copy.deepcopy(stacked)
    speed_up(fast)
    direct = DirectTagger.of(fast)
    sentences = [[], SENTENCES[0], []]
    found = direct.tag(sentences, [_columns(tokens) for tokens in sentences], 8)
    assert found[0] == [] and found[2] == []
    other = copy.deepcopy(stacked)
    other.embeddings.embeddings.append(TransformerWordEmbeddings.__new__(TransformerWordEmbeddings))
    assert DirectTagger.of(other) is None
    untokenised = copy.deepcopy(fast)
    untokenised.embeddings.embeddings[1].tokenized_lm = False  # reads the text's own spaces: Flair's business
    assert DirectTagger.of(untokenised) is None


@pytest.mark.slow
def test_predict_writes_the_same_spans_directly_and_through_flair(model_dir, notes_file, tmp_path):
    """``predict_batch`` on the trained test tagger: the direct path (the default) and Flair's give equal tables."""
    from dataclasses import replace

    from deid_ds.defaults import DEFAULT_MAX_TOKENS
    from deid_ds.io.notes import open_notes
    from deid_ds.ner.predict import PredictJob, PredictOptions, model_file, predict_batch
    from deid_ds.segmentation.notes import SegmentOptions

    notes = list(open_notes(notes_file).iter_notes())
    options = PredictOptions(str(model_file(model_dir)), SegmentOptions(None, DEFAULT_MAX_TOKENS), threads=1)
    direct = predict_batch(PredictJob(notes, options))
    through_flair = predict_batch(PredictJob(notes, replace(options, direct=False)))
    assert len(direct.spans["label"]) > 10
    assert direct.spans == through_flair.spans
    assert direct.documents == through_flair.documents


def test_a_full_character_cache_keeps_the_tokens_of_the_mini_batch(stacked, monkeypatch):
    """When the remembered character embeddings overflow in the middle of the input, the mini-batch's tokens
    that were remembered before are computed again, not lost (a KeyError before)."""
    import deid_ds.ner.speed as speed
    from deid_ds.ner.direct import DirectTagger
    from deid_ds.ner.predict import _rounded

    sentences = [["Dr", "Martin", "le"], ["Dr", "Durand", "le"], ["Dr", "Martin", "."]]
    expected = _flair_entities(stacked, sentences)
    fast = copy.deepcopy(stacked)
    speed.speed_up(fast)
    monkeypatch.setattr(speed, "CHAR_CACHE_SIZE", 3)  # the second sentence overflows it, "Dr" and "le" remembered
    found = DirectTagger.of(fast).tag(sentences, [_columns(tokens) for tokens in sentences], 1)
    assert [[(a, b, label, _rounded(score)) for a, b, label, score in spans] for spans in found] == expected
