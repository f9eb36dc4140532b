"""Knowledge features end to end: weak-label's middle column, the knowledge embedding, train → load → predict.

Tiny real Flair trainings (hidden 8, one epoch, a few sentences, one thread), network cut.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
import torch
from click.testing import CliRunner

from deid_ds.cli import main
from deid_ds.errors import InputError
from deid_ds.kb.fingerprint import kb_fingerprint
from deid_ds.label.features import FEATURES
from tests.conftest import REPO

SAMPLE_NOTES = 12


@pytest.fixture(autouse=True)
def no_network(cut_network):
    """Every test here runs with the network cut (see ``conftest.cut_network``)."""


@pytest.fixture(scope="module")
def notes(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("kf") / "notes.parquet"
    pq.write_table(pq.read_table(REPO / "data" / "notes.parquet").slice(0, SAMPLE_NOTES), path)
    return path


def run(args: list[str]) -> str:
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def flair_lines(path: Path) -> list[list[str]]:
    return [line.split(" ") for line in path.read_text(encoding="utf-8").splitlines() if line]


@pytest.fixture(scope="module")
def weak_dir(notes, kb_dir, tmp_path_factory) -> Path:
    """``deid-ds weak-label`` as the command runs by default: with the feature column."""
    out = tmp_path_factory.mktemp("kf") / "weak"
    run(["weak-label", str(notes), "--kb", str(kb_dir), "--out", str(out), "-q", "-j", "1"])
    return out


@pytest.mark.slow
def test_weak_label_writes_the_features_as_a_middle_column(weak_dir, kb_dir):
    lines = flair_lines(weak_dir / "train.txt")
    assert lines and all(len(columns) == 3 for columns in lines)
    for _, features, tag in lines:
        assert features == "-" or set(features.split("|")) <= set(FEATURES)
        assert tag == "O" or tag[:2] in ("B-", "I-")
    assert any("kb:last" in features for _, features, tag in lines if tag.endswith("PATIENT"))
    record = json.loads((weak_dir / "report.json").read_text())["knowledge_features"]
    assert record == {"names": list(FEATURES), "kb_fingerprint": kb_fingerprint(kb_dir), "use_metadata": True}


@pytest.mark.slow
def test_no_features_gives_two_columns_and_no_metadata_no_metadata_feature(notes, kb_dir, tmp_path):
    options = ["--kb", str(kb_dir), "-q", "-j", "1"]  # one process: the workers are tested in weak_labelling
    run(["weak-label", str(notes), "--out", str(tmp_path / "two"), *options, "--no-features"])
    assert all(len(columns) == 2 for columns in flair_lines(tmp_path / "two" / "train.txt"))
    assert json.loads((tmp_path / "two" / "report.json").read_text())["knowledge_features"] is None
    run(["weak-label", str(notes), "--out", str(tmp_path / "blind"), *options, "--no-metadata"])
    lines = flair_lines(tmp_path / "blind" / "train.txt")
    assert lines and not any("meta:" in features for _, features, _ in lines)
    assert json.loads((tmp_path / "blind" / "report.json").read_text())["knowledge_features"]["use_metadata"] is False


def test_the_embedding_is_a_trainable_layer_over_the_multi_hot_vector():
    from flair.data import Sentence

    from deid_ds.ner.knowledge import KnowledgeEmbeddings, attach_features

    embedding = KnowledgeEmbeddings(FEATURES, 4, "sha256:abc", True)
    sentence = Sentence(["Marie", "KERBRAT"])
    attach_features([sentence], ["kb:first|meta:first", "-"], [0])
    matrix = embedding.multi_hot(sentence.tokens)
    assert matrix.sum(dim=1).tolist() == [2.0, 0.0]
    assert matrix[0, FEATURES.index("meta:first")] == 1.0
    embedding.embed(sentence)
    assert sentence[0].embedding.shape == (4,)
    rebuilt = KnowledgeEmbeddings.load_embedding(embedding.save_embeddings())  # what SequenceTagger.load does
    assert rebuilt.record() == {"names": list(FEATURES), "kb_fingerprint": "sha256:abc", "use_metadata": True}
    assert torch.equal(rebuilt.linear.weight, embedding.linear.weight)


def test_a_model_trained_before_a_feature_existed_reads_the_new_columns_as_it_read_the_old_ones():
    """A model stores its feature names: a feature added since (``number_word``) is ignored by the older ones,
    whose input is the same as before it was written in the column."""
    from flair.data import Sentence

    from deid_ds.ner.knowledge import KnowledgeEmbeddings, attach_features

    old_names = [name for name in FEATURES if name != "number_word"]
    saved = KnowledgeEmbeddings(old_names, 4, "sha256:abc", True).save_embeddings()
    old = KnowledgeEmbeddings.load_embedding(saved)  # as SequenceTagger.load rebuilds it from an older model
    new_columns = ["common_word|len:4-6|number_word|shape:lower", "len:4-6|number_word|shape:lower", "-"]
    old_columns = ["common_word|len:4-6|shape:lower", "len:4-6|shape:lower", "-"]
    assert torch.equal(old.multi_hot_of(new_columns), old.multi_hot_of(old_columns))
    embedded = []
    for columns in (new_columns, old_columns):
        sentence = Sentence(["mille", "zéro", "."])
        attach_features([sentence], columns, [0])
        old.embed(sentence)
        embedded.append(torch.stack([token.get_embedding() for token in sentence]))
    assert torch.equal(*embedded)
    current = KnowledgeEmbeddings(FEATURES, 4, "sha256:abc", True)  # a model trained with it reads it
    assert not torch.equal(current.multi_hot_of(new_columns), current.multi_hot_of(old_columns))


TINY = ["--hidden", "8", "--max-epochs", "1", "--max-sentences", "30", "--threads", "1", "--device", "cpu"]


@pytest.fixture(scope="module")
def model(weak_dir, tmp_path_factory) -> Path:
    """A tiny tagger trained on the weak files with their feature column (the default)."""
    out = tmp_path_factory.mktemp("kf") / "model"
    run(["train", str(weak_dir), "--out", str(out), *TINY, "--quiet"])
    return out


@pytest.mark.slow
def test_train_save_load_predict_with_features_and_the_refusal_without_kb(model, weak_dir, notes, kb_dir, tmp_path):
    from deid_ds.ner.knowledge import knowledge_embedding_of
    from deid_ds.ner.predict import load_tagger, predict

    card = json.loads((model / "model_card.json").read_text())
    assert card["knowledge_features"] == {
        "names": list(FEATURES),
        "kb_fingerprint": kb_fingerprint(kb_dir),
        "use_metadata": True,
    }
    assert [e["type"] for e in card["embeddings"]] == ["characters", "knowledge-features"]
    embedding = knowledge_embedding_of(load_tagger(str(model / "best-model.pt"), "cpu"))
    assert embedding is not None and embedding.kb_fingerprint == kb_fingerprint(kb_dir)

    with pytest.raises(InputError, match="knowledge features"):
        predict(model, notes, tmp_path / "refused", progress=False, workers=1, device="cpu")
    assert not (tmp_path / "refused").exists()
    refused = CliRunner().invoke(main, ["predict", str(model), str(notes), "--out", str(tmp_path / "r"), "-q"])
    assert refused.exit_code != 0 and "--kb" in refused.output and "Traceback" not in refused.output

    report = predict(model, notes, tmp_path / "p", kb=kb_dir, progress=False, workers=1, device="cpu")
    assert report.documents == SAMPLE_NOTES
    documents = pd.read_parquet(tmp_path / "p" / "documents.parquet")
    assert set(documents["status"]) <= {"ok", "empty"}
    hybrid = predict(model, notes, tmp_path / "h", with_rules=kb_dir, progress=False, workers=1, device="cpu")
    assert hybrid.hybrid and hybrid.documents == SAMPLE_NOTES

    run(["train", str(weak_dir), "--out", str(tmp_path / "plain"), *TINY, "--no-features", "--quiet"])
    plain = json.loads((tmp_path / "plain" / "model_card.json").read_text())
    assert plain["knowledge_features"] is None and [e["type"] for e in plain["embeddings"]] == ["characters"]
    predict(tmp_path / "plain", notes, tmp_path / "pp", progress=False, workers=1, device="cpu")  # no KB needed


@pytest.mark.slow
def test_predict_warns_on_another_kb_and_strict_refuses(model, notes, kb_dir, tmp_path):
    import shutil

    from deid_ds.ner.predict import predict

    other = tmp_path / "kb"
    shutil.copytree(kb_dir, other)
    manifest = json.loads((other / "manifest.json").read_text())
    del manifest["tables"]["contacts"]  # a table the features do not read: another KB, that still loads
    (other / "manifest.json").write_text(json.dumps(manifest))
    said: list[str] = []
    predict(model, notes, tmp_path / "p", kb=other, progress=False, workers=1, device="cpu", log=said.append)
    assert any("not the knowledge base the model was trained with" in line for line in said)
    with pytest.raises(InputError, match="not the knowledge base"):
        predict(model, notes, tmp_path / "s", kb=other, progress=False, workers=1, device="cpu", strict_kb=True)


@pytest.mark.slow
def test_the_hybrid_looks_each_note_up_once_and_writes_what_two_lookups_wrote(
    model, notes, kb_dir, tmp_path, monkeypatch
):
    """The rules read the features' lookup of the note (one matcher pass) when both are the same labeller;
    the spans are those of the two separate passes (features from ``--kb``, a copy of the rules' base)."""
    import shutil

    from deid_ds.label.lookup import NoteLookup

    looked_up = []
    of = NoteLookup.of.__func__
    monkeypatch.setattr(
        NoteLookup, "of", classmethod(lambda cls, text, *rest: looked_up.append(text) or of(cls, text, *rest))
    )
    shared = tmp_path / "shared"
    run(["predict", str(model), str(notes), "--out", str(shared), "--with-rules", str(kb_dir), "-j", "1", "-q"])
    documents = pd.read_parquet(shared / "documents.parquet")
    assert len(looked_up) == len(set(looked_up)) == (documents["status"] == "ok").sum() > 0

    copy = tmp_path / "kb"
    shutil.copytree(kb_dir, copy)
    two = tmp_path / "two"
    run(
        [
            "predict",
            str(model),
            str(notes),
            "--out",
            str(two),
            "--with-rules",
            str(kb_dir),
            "--kb",
            str(copy),
            "-j",
            "1",
            "-q",
        ]
    )
    assert len(looked_up) == 3 * len(set(looked_up))
    for name in ("spans.parquet", "documents.parquet"):
        assert pq.read_table(shared / name).equals(pq.read_table(two / name)), name
    assert len(pd.read_parquet(two / "spans.parquet")) > 0


@pytest.mark.slow
def test_a_note_whose_rules_fail_on_the_shared_lookup_fails_alone(model, notes, kb_dir, tmp_path, monkeypatch):
    from deid_ds.label.labeller import WeakLabeller

    first = pd.read_parquet(notes)["id_document"].iloc[0]
    label_lookup = WeakLabeller.label_lookup
    calls = []

    def failing(self, lookup):  # the first note's rules (one batch, one process, notes in order)
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("a rule broke")
        return label_lookup(self, lookup)

    monkeypatch.setattr(WeakLabeller, "label_lookup", failing)
    out = tmp_path / "p"
    run(["predict", str(model), str(notes), "--out", str(out), "--with-rules", str(kb_dir), "-j", "1", "-q"])
    documents = pd.read_parquet(out / "documents.parquet").set_index("id_document")
    assert documents.loc[first, "status"] == "failed"
    assert documents.loc[first, "error"] == "internal error during labelling (RuntimeError)"
    assert (documents.drop(index=first)["status"] != "failed").all() and len(calls) == len(documents)
    assert first not in set(pd.read_parquet(out / "spans.parquet")["id_document"])
