"""``deid-ds train WEAK --synthetic N``: a second teacher that makes no mistakes, generated notes with their gold.

The weak labels teach the tagger the rules, blind spots included. ``deid-ds synth`` knows every entity it
writes: its notes come with their exact gold. :func:`mix_synthetic` generates ``N`` such notes and mixes
their sentences into the **training** split of a ``weak-label`` directory, so that the model learns from
both teachers: the real notes' layouts, vocabulary and abbreviations from the weak part, what the rules
miss from the synthetic part.

**Same form as the weak files.** The synthetic notes go through ``weak-label`` itself
(:func:`deid_ds.weak_labelling.weak_label`): same HTML parsing, segmentation, tokenisation and knowledge-feature
column (when the weak files have one, with the metadata when the weak run used it); every sentence is kept
there, and only its tags are then replaced by the gold's (:func:`gold_tags`): a token overlapping a gold span
takes its label, ``B-`` on the first. Sentences without a gold entity are then kept for the same share as
weak-label's (``keep_empty``, its default 0: weak-label's own default, which the WEAK run most likely used;
the choice by :func:`~deid_ds.weak_labelling.split.keeps_empty_sentence`, the same hash).

**Knowledge base.** Each generated corpus comes with its own knowledge-base sources (BAN and Annuaire Santé
files listing its world's streets and professionals, some left out as in real life: ``--missing-*``); the
features of its notes are computed with the knowledge base built from them (:func:`deid_ds.kb.build.build_kb`),
not with the WEAK run's: the relation between a corpus and its lists (the staff in the directory, most
streets in the BAN) is then the one the real notes have with theirs, which is what the network must learn to
weigh. The WEAK run's base would list none of the generated people and teach the model that the lists never
fire on names.

**Families.** By default half the notes in the ``all`` phrasing (families 0 and 1, Brittany) and half in
``exports`` (family 3, France: PDF/CDA renderings, fixed-width exports, dictation), each part with a seed of
its own (``seed``, ``seed + 1``...). ``unseen`` (family 2) and ``exports-heldout`` (family 4) are refused: they
are the test corpora the figures are measured on (issue 20's acceptance corpus is ``exports-heldout``).
The default seed, :data:`DEFAULT_SEED`, is none that the shipped sample (1) or the benchmarks use.

**Proportion.** Flair's trainer has no per-sentence weight, so ``weight`` is applied by repetition: each
synthetic training sentence is written ``floor(weight)`` times, and a seeded choice of a share
``weight - floor(weight)`` of them once more (``weight`` 0.5 keeps half of them). The share of training
sentences that are synthetic is recorded in the model card.

**Dev.** The weak dev split stays the dev split (model selection stays comparable with a model trained
without the mix). With ``dev_share``, that share of the synthetic patients goes to dev instead of train,
appended to the weak dev: exact gold for choosing the epoch and the hybrid's proxy thresholds, at the price
of a dev F1 that is no longer agreement with the rules alone. The test split is the weak one, untouched.

Everything is written under a scratch folder the caller removes (``train`` does): no synthetic file is kept.
"""

from __future__ import annotations

import json
import math
import random
import shutil
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from deid_ds.errors import InputError
from deid_ds.ner.column_files import Block, column_blocks, split_line

#: The generator's seed for the synthetic part: not the shipped sample's (1) nor one of the benchmarks'.
DEFAULT_SEED = 2929
#: ``synth --phrasing`` values used by default: every family a training corpus may see.
DEFAULT_PHRASINGS = ("all", "exports")
#: Phrasings that are test corpora only: training on them would void the figures measured on them.
TEST_PHRASINGS = ("unseen", "exports-heldout", "exports-all")


@dataclass(frozen=True)
class SyntheticMix:
    """What ``train --synthetic`` generates and how it is mixed (see the module docstring)."""

    notes: int
    seed: int = DEFAULT_SEED
    phrasings: tuple[str, ...] = DEFAULT_PHRASINGS
    weight: float = 1.0
    dev_share: float = 0.0
    keep_empty: float = 0.0

    def __post_init__(self) -> None:
        from deid_ds.synth.config import PHRASINGS

        if self.notes < 1:
            raise InputError("--synthetic: at least 1 note")
        if not self.phrasings:
            raise InputError("--synthetic-phrasing: at least one phrasing")
        for phrasing in self.phrasings:
            if phrasing in TEST_PHRASINGS:
                raise InputError(f"--synthetic-phrasing {phrasing}: a test corpus, never trained on")
            if phrasing not in PHRASINGS:
                raise InputError(f"--synthetic-phrasing {phrasing}: not a synth phrasing")
        if self.weight <= 0:
            raise InputError("--synthetic-weight: above 0")
        if not 0.0 <= self.dev_share < 1.0:
            raise InputError("--synthetic-dev: a share in [0, 1)")
        if not 0.0 <= self.keep_empty <= 1.0:
            raise InputError("--synthetic-keep-empty: a share in [0, 1]")

    def parts(self) -> list[tuple[str, int, int]]:
        """``(phrasing, notes, seed)`` of each generated corpus: the notes shared out evenly, a seed each."""
        base, extra = divmod(self.notes, len(self.phrasings))
        counts = [base + (i < extra) for i in range(len(self.phrasings))]
        return [(p, n, self.seed + i) for i, (p, n) in enumerate(zip(self.phrasings, counts)) if n]


# --------------------------------------------------------------------------------------------------
# Pure: gold spans to tags, repetition


def gold_tags(tokens: Sequence[tuple[int, int]], gold: Sequence[tuple[int, int, str]]) -> tuple[list[str], int]:
    """BIO tags of a sentence's tokens (HTML offsets, in order) from gold spans (HTML offsets, sorted by start).

    A token overlapping a gold span takes its label (``B-`` on the span's first token in the sentence, ``I-``
    on the others), so a span cut inside a token covers the whole token, as a redaction would. A token that
    an earlier span already tagged stays with it (a later overlapping span keeps its first run of untagged
    tokens). Returns the tags and the number of spans whose bounds are not token bounds (tagged whole
    tokens wider than the span).
    """
    tags = ["O"] * len(tokens)
    unaligned = 0
    ends = [end for _, end in tokens]
    for start, end, label in gold:
        inside = []
        for k in range(bisect_left(ends, start + 1), len(tokens)):  # from the first token ending after the start
            if tokens[k][0] >= end:
                break
            if tags[k] != "O":  # another span's token: this span keeps its untagged tokens before it
                if inside:
                    break
                continue
            inside.append(k)
        if not inside:
            continue
        if tokens[inside[0]][0] != start or tokens[inside[-1]][1] != end:
            unaligned += 1
        for position, k in enumerate(inside):
            tags[k] = ("B-" if position == 0 else "I-") + label
    return tags, unaligned


def repeat_blocks(blocks: Sequence[Block], weight: float, seed: int) -> list[Block]:
    """``blocks`` written ``floor(weight)`` times, then a seeded choice of ``weight - floor(weight)`` of them once
    more (file order kept within each copy)."""
    whole = math.floor(weight)
    out = [block for _ in range(whole) for block in blocks]
    extra = round((weight - whole) * len(blocks))
    if extra:
        chosen = set(random.Random(seed).sample(range(len(blocks)), extra))
        out += [block for i, block in enumerate(blocks) if i in chosen]
    return out


def block_statistics(blocks: Iterable[Block]) -> dict:
    """Sentences, tokens and entities per label of Flair blocks (as :func:`deid_ds.ner.train.split_statistics`)."""
    sentences = tokens = 0
    labels: Counter[str] = Counter()
    for block in blocks:
        sentences += 1
        tokens += len(block)
        labels.update(line.rsplit(None, 1)[-1][2:] for line in block if line.rsplit(None, 1)[-1].startswith("B-"))
    return {
        "sentences": sentences,
        "tokens": tokens,
        "entities": sum(labels.values()),
        "labels": dict(sorted(labels.items())),
    }


# --------------------------------------------------------------------------------------------------
# A weak-label output relabelled with the gold


def gold_by_document(path: Path) -> dict[str, list[tuple[int, int, str]]]:
    """Each document's gold spans (HTML offsets, label), from any table `evaluate --gold` reads."""
    from deid_ds.weak_labelling.gold import read_gold

    frame = read_gold(path)
    gold: dict[str, list[tuple[int, int, str]]] = {}
    for doc, start, end, label in zip(frame["id_document"], frame["html_start"], frame["html_end"], frame["label"]):
        gold.setdefault(doc, []).append((int(start), int(end), str(label)))
    for spans in gold.values():
        spans.sort()
    return gold


def gold_blocks(labelled: Path, gold_path: Path, keep_empty: float) -> tuple[dict[str, list[Block]], dict]:
    """The sentences of a ``weak-label`` output (every sentence kept) with the gold's tags, per split.

    The Flair files give each token's columns (token, features); ``sentences.parquet`` (the same sentences,
    in the same order per split) gives each token's HTML offsets and the sentence's document. Returns the
    blocks of train and dev and what was done: the gold spans, the entities tagged, the spans not aligned to
    tokens (:func:`gold_tags`) and those no sentence's tokens reach (none is expected).
    """
    import pyarrow.parquet as pq

    from deid_ds.weak_labelling.render import flair_token
    from deid_ds.weak_labelling.split import keeps_empty_sentence

    gold = gold_by_document(gold_path)
    out: dict[str, list[Block]] = {"train": [], "dev": []}
    tagged = unaligned = 0
    seen: set[tuple[str, int, int, str]] = set()  # the gold spans some sentence's tokens overlap
    for split, blocks in out.items():
        path = labelled / f"{split}.txt"
        table = pq.read_table(
            labelled / "sentences.parquet", columns=["tokens", "meta"], filters=[("split", "=", split)]
        )
        rows = (row for batch in table.to_batches(max_chunksize=2048) for row in batch.to_pylist())
        for block, row in zip(_blocks_or_none(path), rows, strict=True):
            tokens = row["tokens"]
            parts = [split_line(line, path) for line in block]
            if len(parts) != len(tokens) or any(
                head.split()[0] != flair_token(t["text"]) for (head, _, _), t in zip(parts, tokens)
            ):
                raise RuntimeError("weak-label's Flair file and sentences.parquet disagree")  # pragma: no cover
            offsets = [(t["html_start"], t["html_end"]) for t in tokens]
            meta = row["meta"]
            spans = spans_near(gold.get(meta["id_document"], []), offsets)
            seen.update((meta["id_document"], *span) for span in spans)
            tags, bad = gold_tags(offsets, spans)
            entities = sum(tag.startswith("B-") for tag in tags)
            tagged += entities
            unaligned += bad
            if not entities and not keeps_empty_sentence(meta["id_document"], meta["sentence_index"], keep_empty):
                continue
            blocks.append([f"{head}{sep}{tag}" for (head, sep, _), tag in zip(parts, tags)])
    total = sum(len(spans) for spans in gold.values())
    # entities_tagged counts a span cut by a sentence bound once per sentence
    counts = {"gold_spans": total, "entities_tagged": tagged, "unaligned": unaligned}
    counts["in_no_sentence"] = total - len(seen)
    return out, counts


def _blocks_or_none(path: Path) -> Iterator[Block]:
    return column_blocks(path) if path.is_file() else iter(())


def spans_near(spans: list[tuple[int, int, str]], offsets: list[tuple[int, int]]) -> list[tuple[int, int, str]]:
    """The document's gold spans that may overlap the sentence (HTML range of its tokens)."""
    if not offsets or not spans:
        return []
    low, high = offsets[0][0], offsets[-1][1]
    return [span for span in spans if span[0] < high and span[1] > low]


# --------------------------------------------------------------------------------------------------
# Generation and mix


def _weak_knowledge(weak_dir: Path) -> tuple[bool, bool]:
    """Whether the weak files have the feature column, and whether their run used the metadata."""
    from deid_ds.ner.knowledge import has_feature_column

    features = has_feature_column(weak_dir / "train.txt")
    use_metadata = True
    try:
        report = json.loads((weak_dir / "report.json").read_text(encoding="utf-8"))
        record = report.get("knowledge_features") or {}
        use_metadata = bool(record.get("use_metadata", report.get("use_metadata", True)))
    except (OSError, ValueError, AttributeError):
        pass
    return features, use_metadata


def synthetic_part(
    phrasing: str, notes: int, seed: int, work: Path, mix: SyntheticMix, *, features: bool, use_metadata: bool
) -> tuple[dict[str, list[Block]], dict]:
    """Generate one corpus, build its knowledge base, label it with weak-label and retag it with its gold."""
    from deid_ds.kb.build import build_kb
    from deid_ds.kb.sources_dir import find_sources
    from deid_ds.synth import SynthConfig, synthesize
    from deid_ds.synth.config import PHRASINGS
    from deid_ds.weak_labelling import weak_label

    config = SynthConfig(notes=notes, seed=seed, phrasing=phrasing)
    synthesize(config, work / "corpus", kb_dir=work / "sources")
    kb = None
    if features:
        found = find_sources(work / "sources")
        build_kb(work / "kb", ban=found.ban, health_directory=found.health_directory, progress=False)
        kb = work / "kb"
    report = weak_label(
        work / "corpus" / "notes.parquet",
        work / "labelled",
        kb=kb,
        workers=1,
        keep_empty=1.0,
        keep_empty_test=1.0,
        split=(1.0 - mix.dev_share, mix.dev_share, 0.0),
        seed=seed,
        use_metadata=use_metadata,
        progress=False,
        features=features,
    )
    blocks, counts = gold_blocks(work / "labelled", work / "corpus" / "gold.parquet", mix.keep_empty)
    record = {
        "phrasing": phrasing,
        "families": list(PHRASINGS[phrasing]),
        "geography": config.region,
        "seed": seed,
        "notes": notes,
        "notes_failed": report.failed,
        **counts,
    }
    return blocks, record


def mix_synthetic(
    weak_dir: str | Path, target: str | Path, mix: SyntheticMix, *, log: Callable[[str], None] = lambda _: None
) -> dict:
    """Write into ``target`` (a new folder) ``weak_dir``'s Flair files with the synthetic sentences mixed in.

    train: the weak sentences, then the synthetic ones (repeated by ``mix.weight``); dev: the weak ones, then
    the synthetic dev ones (``mix.dev_share``); test: the weak one as it is. Returns the record the model card
    keeps under ``data.synthetic``.
    """
    weak_dir, target = Path(weak_dir), Path(target)
    features, use_metadata = _weak_knowledge(weak_dir)
    target.mkdir(parents=True)
    work = target.parent / f"{target.name}-synthetic"
    synthetic: dict[str, list[Block]] = {"train": [], "dev": []}
    parts = []
    for number, (phrasing, notes, seed) in enumerate(mix.parts()):
        log(f"synthetic: {notes:,} note(s) of phrasing {phrasing}, seed {seed}")
        blocks, record = synthetic_part(
            phrasing, notes, seed, work / str(number), mix, features=features, use_metadata=use_metadata
        )
        for split in synthetic:
            synthetic[split] += blocks[split]
        parts.append(record)
    shutil.rmtree(work, ignore_errors=True)
    train = repeat_blocks(synthetic["train"], mix.weight, mix.seed)
    for split, extra in (("train", train), ("dev", synthetic["dev"])):
        with (target / f"{split}.txt").open("w", encoding="utf-8") as out:
            source = weak_dir / f"{split}.txt"
            if source.is_file():
                for block in column_blocks(source):
                    out.write("\n".join(block) + "\n\n")
            for block in extra:
                out.write("\n".join(block) + "\n\n")
    if (weak_dir / "test.txt").is_file():
        shutil.copyfile(weak_dir / "test.txt", target / "test.txt")
    weak_train = block_statistics(_blocks_or_none(weak_dir / "train.txt"))
    synthetic_train = block_statistics(train)
    total = weak_train["sentences"] + synthetic_train["sentences"]
    record = {
        "notes": mix.notes,
        "seed": mix.seed,
        "phrasings": list(mix.phrasings),
        "families": sorted({family for part in parts for family in part["families"]}),
        "weight": mix.weight,
        "repetition": "floor(weight) copies of each synthetic training sentence, a seeded share of one more",
        "keep_empty": mix.keep_empty,
        "dev_share": mix.dev_share,
        "gold": "the generator's exact spans; a token overlapping a span takes its label",
        "knowledge_base": "each part's own, built from the sources synth wrote with it" if features else None,
        "use_metadata": use_metadata,
        "parts": parts,
        "train": {
            "weak": weak_train,
            "synthetic": synthetic_train,
            "synthetic_share": round(synthetic_train["sentences"] / total, 6) if total else 0.0,
        },
        "dev": {
            "weak": block_statistics(_blocks_or_none(weak_dir / "dev.txt")),
            "synthetic": block_statistics(synthetic["dev"]),
        },
    }
    share = record["train"]["synthetic_share"]
    log(
        f"synthetic: {synthetic_train['sentences']:,} training sentence(s) ({share:.0%} of train), "
        f"{synthetic_train['entities']:,} entities"
    )
    return record
