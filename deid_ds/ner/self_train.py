"""``deid-ds train --self-train ROUNDS``: the tagger relabels its own training split (teacher–student).

The weak labels miss what no rule covers; a tagger trained on them often finds some of it (a name with
no cue, a street missing from the gazetteer). Self-training feeds that back: after the first training,
each round

1. tags the **training** sentences with the current model (:func:`predict_spans`: Flair's span score,
   the mean of its per-token probabilities, kept with each span);
2. keeps the model spans scoring at least ``threshold`` and merges them with the weak spans read from the
   BIO tags under the **hybrid policy** (:func:`deid_ds.ner.hybrid.merge_spans`). The training files do
   not say which rule found a span, so every weak span gets the neutral source :data:`WEAK_SOURCE`
   (not one of the high-precision sources that always win): where a confident model span and a weak
   span overlap, the model wins unless the weak span holds it whole with its label (policy 3), and the
   model's spans nobody else found are added;
3. writes the new ``train.txt`` (same columns: only the last, the tag, changes; middle columns such as
   features are kept as they are) — **dev stays the weak labels** (the model card's dev F1 per round
   is then agreement with the rules, comparable from round to round), **test is untouched**;
4. retrains **from scratch** on it, with the same configuration and seed.

From scratch rather than from the previous weights: a student started from its teacher keeps the
teacher's errors as a starting point and mostly re-learns its own labels (confirmation bias); a fresh
student only sees the relabelled data, which is the classic self-training/noisy-student recipe, and it
re-uses :func:`deid_ds.ner.train.train_tagger` unchanged (same embeddings built from the same corpus).

Default threshold :data:`DEFAULT_THRESHOLD` (0.9): errors a round adds are learnt by the next student
and compound, so only spans the model is nearly sure of go back into training. Measured on a demo-sized
model (docs/benchmarks.md, "Self-training"): its spans scoring 0.8–0.9 equal a weak span 99 % of the time,
those below 0.5 only 36 %; but such an under-trained model scores almost nothing above 0.9, and round 1
then changes nothing (the student is the teacher again) — lower the threshold (0.7) for small models.

Every round works in a temporary directory (the rewritten training sentences are note text: deleted at
the end); the final model is copied into ``out`` through :func:`deid_ds.io.output_dir.output_directory`
— one temporary sibling swapped in at the end, so an interrupted run leaves the previous model intact.
The model card gets a ``self_training`` entry: per round, how many spans the model added, removed
(weak spans no longer there) or changed (a merged span overlapping a weak span it is not equal to), and
the dev F1 against the weak labels.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from deid_ds.errors import InputError
from deid_ds.ner.column_files import column_blocks, split_line

#: Source given to the spans read from the weak BIO tags (not in hybrid.RULE_WINS: see the module docstring).
WEAK_SOURCE = "weak-label"
DEFAULT_THRESHOLD = 0.9

TokenSpan = tuple[int, int, str]  # first token, end token (exclusive), label
ScoredSpan = tuple[int, int, str, float]  # the same with the model's confidence


@dataclass
class RelabelCounts:
    """What the merge did to one split (or sentence): spans added, removed, changed, kept as they were."""

    added: int = 0
    removed: int = 0
    changed: int = 0
    kept: int = 0
    model_spans: int = 0
    confident: int = 0

    def add(self, other: RelabelCounts) -> None:
        for name, value in asdict(other).items():
            setattr(self, name, getattr(self, name) + value)


# --------------------------------------------------------------------------------------------------
# Pure relabelling


def bio_spans(tags: Sequence[str]) -> list[TokenSpan]:
    """The entities of a tag sequence as token ranges ``(first, end exclusive, label)`` (lenient BIO reading)."""
    from deid_ds.ner.predict import tags_to_spans

    return [(first, last + 1, label) for first, last, label in tags_to_spans(list(tags))]


def spans_to_bio(length: int, spans: Iterable[TokenSpan]) -> list[str]:
    """BIO tags of ``length`` tokens holding ``spans`` (disjoint token ranges)."""
    tags = ["O"] * length
    for first, end, label in spans:
        for i in range(first, end):
            tags[i] = f"{'B' if i == first else 'I'}-{label}"
    return tags


def relabel(tags: Sequence[str], model: Iterable[ScoredSpan], threshold: float) -> tuple[list[str], RelabelCounts]:
    """The new tags of one sentence: its weak spans merged with the model's confident spans (hybrid policy).

    Returns the tags and what changed (:class:`RelabelCounts`).
    """
    from deid_ds.ner.hybrid import merge_spans

    model = list(model)
    weak = bio_spans(tags)
    confident = [(s, e, label, "model") for s, e, label, score in model if score >= threshold]
    merged = [
        (s, e, label) for s, e, label, _ in merge_spans(confident, [(s, e, lab, WEAK_SOURCE) for s, e, lab in weak])
    ]
    counts = RelabelCounts(model_spans=len(model), confident=len(confident))
    weak_set = set(weak)

    def overlaps(span: TokenSpan, others: Iterable[TokenSpan]) -> bool:
        return any(span[0] < o[1] and o[0] < span[1] for o in others)

    for span in merged:
        if span in weak_set:
            counts.kept += 1
        elif overlaps(span, weak):
            counts.changed += 1
        else:
            counts.added += 1
    counts.removed = sum(1 for span in weak if span not in merged and not overlaps(span, merged))
    return spans_to_bio(len(tags), merged), counts


def rewrite_split(
    source: Path, target: Path, predictions: Iterable[list[ScoredSpan]], threshold: float
) -> RelabelCounts:
    """Write ``source`` to ``target`` with each sentence's tags relabelled by :func:`relabel`.

    ``predictions`` gives the model's spans of each sentence of ``source``, in file order. Every column
    but the last is written back unchanged.
    """
    total = RelabelCounts()
    predictions = iter(predictions)
    with target.open("w", encoding="utf-8") as out:
        for block in column_blocks(source):
            parts = [split_line(line, source) for line in block]
            tags, counts = relabel([tag for _, _, tag in parts], next(predictions, []), threshold)
            total.add(counts)
            out.write("".join(f"{head}{sep}{tag}\n" for (head, sep, _), tag in zip(parts, tags)) + "\n")
    return total


def split_tokens(path: Path) -> list[list[str]]:
    """The token (first column) of every line of each sentence of a column file."""
    return [[split_line(line, path)[0].split()[0] for line in block] for block in column_blocks(path)]


# --------------------------------------------------------------------------------------------------
# The model's spans


def predict_spans(
    model_path: Path,
    sentences: list[list[str]],
    features: list[list[str]] | None = None,
    mini_batch: int = 32,
) -> list[list[ScoredSpan]]:
    """The model's entities of each pre-tokenised sentence, with their score, as ``predict`` reads them
    (:func:`deid_ds.ner.predict.sentence_entities`). ``features``: each token's knowledge-feature column
    (the training file's middle column), given to a model trained with them as ``ColumnCorpus`` gives it."""
    from flair.data import Sentence
    from flair.models import SequenceTagger

    from deid_ds.ner.knowledge import attach_features
    from deid_ds.ner.predict import sentence_entities

    tagger = SequenceTagger.load(model_path)
    tagger.eval()
    flair_sentences = [Sentence(tokens) for tokens in sentences]
    if features is not None:
        for sentence, columns in zip(flair_sentences, features):
            attach_features([sentence], columns, [0])
    if flair_sentences:
        tagger.predict(flair_sentences, mini_batch_size=mini_batch, verbose=False)
    return [
        [
            (first, last + 1, label, score)
            for first, last, label, score in sentence_entities(sentence, tagger.label_type)
        ]
        for sentence in flair_sentences
    ]


def split_feature_columns(path: Path) -> list[list[str]] | None:
    """The knowledge-feature column (the middle one) of every line of each sentence, None for a two-column file."""
    from deid_ds.ner.knowledge import has_feature_column

    if not has_feature_column(path):
        return None
    return [[split_line(line, path)[0].split()[1] for line in block] for block in column_blocks(path)]


# --------------------------------------------------------------------------------------------------
# The loop


def self_train(
    weak_dir: str | Path,
    out: str | Path,
    *,
    rounds: int,
    threshold: float = DEFAULT_THRESHOLD,
    train: Callable[..., dict],
    log: Callable[[str], None],
    overwrite: bool = False,
    inputs: Sequence[str | Path | None] = (),
    **train_options,
) -> dict:
    """First training, then ``rounds`` rounds of relabel-and-retrain; the last model goes to ``out``.

    ``train`` is :func:`deid_ds.ner.train.train_tagger` (passed in: this module stays below train.py);
    ``train_options`` its keyword arguments (embeddings, config, progress...).
    """
    from deid_ds.io.files import atomic_write_text
    from deid_ds.io.output_dir import check_output_dir, output_directory
    from deid_ds.ner.train import MODEL_CARD, MODEL_FILE, SPLITS

    if rounds < 1:
        raise InputError("--self-train: at least 1 round")
    if not 0.0 <= threshold <= 1.0:
        raise InputError("--self-train-threshold: between 0 and 1")
    weak_dir, out = Path(weak_dir), Path(out)
    if not (weak_dir / "train.txt").is_file():
        raise InputError(f"{weak_dir}: no train.txt (not an output of `deid-ds weak-label`)")
    inputs = (weak_dir, *inputs)
    check_output_dir(out, "train", inputs, overwrite)
    started = time.monotonic()
    history: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="deid-ds-self-train-") as scratch:
        scratch = Path(scratch)
        log("self-training: round 0 (weak labels)")
        model_dir = scratch / "model-0"
        card = train(weak_dir, model_dir, log=log, **train_options)
        history.append(_round_entry(0, card, None))
        tokens = split_tokens(weak_dir / "train.txt")
        features = split_feature_columns(weak_dir / "train.txt")
        for number in range(1, rounds + 1):
            data = scratch / f"data-{number}"
            data.mkdir()
            predictions = predict_spans(model_dir / MODEL_FILE, tokens, features)
            counts = rewrite_split(weak_dir / "train.txt", data / "train.txt", predictions, threshold)
            for name in SPLITS[1:]:  # dev: the weak labels (documented); test untouched
                if (weak_dir / f"{name}.txt").is_file():
                    shutil.copyfile(weak_dir / f"{name}.txt", data / f"{name}.txt")
            log(
                f"self-training: round {number}: model added {counts.added}, removed {counts.removed}, "
                f"changed {counts.changed} span(s) of the training split"
            )
            shutil.rmtree(model_dir)
            model_dir = scratch / f"model-{number}"
            card = train(data, model_dir, log=log, **train_options)
            shutil.rmtree(data)
            history.append(_round_entry(number, card, counts))
        card["data"]["weak_dir"] = str(weak_dir.resolve())
        card["self_training"] = {
            "rounds": rounds,
            "threshold": threshold,
            "score": "Flair span score: mean of the CRF's per-token probabilities",
            "merge": f"deid_ds.ner.hybrid.merge_spans, weak spans as source {WEAK_SOURCE!r}",
            "retrain": "from scratch, same configuration and seed",
            "dev": "weak labels (unchanged across rounds)",
            "test": "untouched",
            "per_round": history,
            "total_seconds": round(time.monotonic() - started, 2),
        }
        with output_directory(out, "train", inputs=inputs, overwrite=overwrite) as tmp:
            for item in model_dir.iterdir():
                if item.name in (MODEL_CARD, ".deid-ds.json"):
                    continue
                shutil.move(str(item), tmp / item.name)
            atomic_write_text(tmp / MODEL_CARD, json.dumps(card, indent=2, ensure_ascii=False) + "\n")
    log(f"written to {out}")
    return card


def _round_entry(number: int, card: dict, counts: RelabelCounts | None) -> dict:
    dev = card.get("scores", {}).get("dev")
    entry: dict = {"round": number, "dev_f1": dev["micro_f1"] if dev else None, "epochs_run": card.get("epochs_run")}
    entry["train_entities"] = card["data"]["splits"]["train"]["entities"]
    if counts is not None:
        entry.update(asdict(counts))
    return entry
