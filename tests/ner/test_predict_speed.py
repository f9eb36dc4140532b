"""``predict``'s CPU speed-ups (deid_ds.ner.speed) change nothing in the output: same spans as Flair's own
``SequenceTagger.predict`` on a small random tagger, whatever the mini-batch size; the options reach the command."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from deid_ds.cli import main
from deid_ds.defaults import available_cores

REPO = Path(__file__).resolve().parents[2]

# Repeated tokens in a sentence (Flair's character embeddings map them in a peculiar way), an unknown
# character, one-token and long sentences, and a sentence whose tokens are all alike.
SENTENCES = [
    "Vu le 12/03/2021 par le Dr Martin , Dr Martin étant de garde .".split(),
    "x ab x ab x".split(),
    ["Ω"],
    "Tél : 01 23 45 67 89 ; 01 23 45 67 89".split(),
    "le le le le".split(),
    "Patient adressé par Mme Durand à Lyon ( 69003 ) le 3 mars .".split(),
    ["."],
]


@pytest.fixture(scope="module")
def tagger():
    """A random (untrained) BiLSTM-CRF on character embeddings: seeded, so its predictions vary but repeat."""
    import flair
    import torch
    from flair.data import Dictionary
    from flair.embeddings import CharacterEmbeddings
    from flair.models import SequenceTagger

    flair.set_seed(3)
    characters = Dictionary(add_unk=True)
    for token in {token for sentence in SENTENCES for token in sentence}:
        for char in token:
            if char != "Ω":
                characters.add_item(char)
    tags = Dictionary(add_unk=False)
    for tag in ("O", "S-DATE", "B-DATE", "I-DATE", "E-DATE", "S-DOCTOR", "B-DOCTOR", "E-DOCTOR", "S-PHONE"):
        tags.add_item(tag)
    model = SequenceTagger(
        hidden_size=8,
        embeddings=CharacterEmbeddings(characters, char_embedding_dim=8, hidden_size_char=8),
        tag_dictionary=tags,
        tag_type="ner",
        use_crf=True,
    )
    model.eval()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield model
    torch.set_num_threads(threads)


def _tagged(sentences, label_type="ner"):
    return [[(s.tokens[0].idx, s.tokens[-1].idx, s.tag, s.score) for s in x.get_spans(label_type)] for x in sentences]


def test_flair_char_order_replays_flairs_mapping_of_repeated_tokens():
    from deid_ds.ner.speed import _flair_char_order

    def chars(text):
        return tuple(ord(c) for c in text)

    assert _flair_char_order(["Dr", "Martin", "."], chars) == ["Dr", "Martin", "."]
    # Flair: sorted by length ["ab", "x", "x"]; its loop sends both "x" to place 2, so place 0 keeps "ab"'s.
    assert _flair_char_order(["x", "ab", "x"], chars) == ["ab", "ab", "x"]


@pytest.mark.parametrize("mini_batch", [1, 2, 128])
def test_fast_path_tags_as_flair_does(tagger, mini_batch):
    from flair.data import Sentence

    from deid_ds.ner.speed import BatchedCharacterEmbeddings, ListViterbiDecoder, speed_up, tag_sentences

    reference = [Sentence(list(tokens)) for tokens in SENTENCES]
    tagger.predict(reference, mini_batch_size=32)
    expected = _tagged(reference)
    assert any(expected), "the random tagger should predict some spans"

    fast = copy.deepcopy(tagger)
    speed_up(fast)
    assert isinstance(fast.embeddings, BatchedCharacterEmbeddings)
    assert isinstance(fast.viterbi_decoder, ListViterbiDecoder)
    for _ in range(2):  # the second pass reads the character embeddings remembered by the first
        ours = [Sentence(list(tokens)) for tokens in SENTENCES]
        tag_sentences(fast, ours, mini_batch)
        found = _tagged(ours)
        assert [[span[:3] for span in spans] for spans in found] == [[span[:3] for span in spans] for spans in expected]
        # Scores: float rounding of the character LSTM run on a larger batch (measured: below 4e-6).
        for spans, reference_spans in zip(found, expected):
            for span, reference_span in zip(spans, reference_spans):
                assert span[3] == pytest.approx(reference_span[3], abs=1e-5)


def test_local_workers_share_the_cores():
    from deid_ds.engine import engine_for

    cores = available_cores()
    assert engine_for("local", workers=1, progress=False).task_threads() == cores  # at most: the default is 1
    assert engine_for("local", workers=2, progress=False).task_threads() == max(1, cores // 2)
    assert engine_for("local", workers=4 * cores, progress=False).task_threads() == 1


@pytest.mark.slow
def test_threads_and_mini_batch_reach_the_command(tagger, tmp_path):
    model = tmp_path / "model"
    model.mkdir()
    tagger.save(model / "best-model.pt")
    notes = tmp_path / "notes.parquet"
    pq.write_table(pq.read_table(REPO / "data" / "notes.parquet").slice(0, 4), notes)
    outputs = []
    for threads, mini_batch in (("1", "3"), ("2", "128")):
        out = tmp_path / f"out-{threads}"
        args = ["predict", str(model), str(notes), "--out", str(out), "--quiet", "--device", "cpu", "--workers", "1"]
        result = CliRunner().invoke(main, [*args, "--threads", threads, "--mini-batch-size", mini_batch])
        assert result.exit_code == 0, result.output
        assert json.loads((out / "report.json").read_text())["threads"] == int(threads)
        outputs.append(pq.read_table(out / "spans.parquet"))
    # the same spans; scores to float rounding (two threads and another batch size sum in another order), which
    # can tip a score written with 4 decimals by one unit of the last
    exact = [c for c in outputs[0].column_names if c != "score"]
    assert outputs[0].select(exact).equals(outputs[1].select(exact))
    if "score" in outputs[0].column_names:
        assert outputs[0]["score"].to_pylist() == pytest.approx(outputs[1]["score"].to_pylist(), abs=1.5e-4)
    refused = CliRunner().invoke(
        main, ["predict", str(model), str(notes), "--out", str(tmp_path / "x"), "--threads", "0"]
    )
    assert refused.exit_code == 2


def test_flair_language_models_grouped_by_length_embed_as_flair_does(tagger, monkeypatch):
    """Sentences given to a Flair LM in groups of similar length in characters: the same embeddings exactly."""
    import torch
    from flair.data import Sentence
    from flair.embeddings import FlairEmbeddings
    from flair.models import LanguageModel

    from deid_ds.ner.speed import LengthSortedFlairEmbeddings, speed_up

    characters = tagger.embeddings.char_dictionary
    for forward in (True, False):
        embedding = FlairEmbeddings(LanguageModel(characters, forward, hidden_size=8, nlayers=1))
        reference = [Sentence(list(tokens)) for tokens in SENTENCES]
        embedding.embed(reference)
        fast = copy.deepcopy(embedding)
        speed_up(type("Tagger", (), {"embeddings": fast})())
        assert isinstance(fast, LengthSortedFlairEmbeddings)
        monkeypatch.setattr(LengthSortedFlairEmbeddings, "group", 2)
        ours = [Sentence(list(tokens)) for tokens in SENTENCES]
        fast.embed(ours)
        for mine, theirs in zip(ours, reference):
            for a, b in zip(mine.tokens, theirs.tokens):
                assert torch.equal(a.get_embedding(), b.get_embedding())
