"""``deid-ds train WEAK --gold-train GOLD``: the campaign's corrected documents replace their weak labels.

A gold table (``deid-ds gold``, or anything ``evaluate --gold`` reads) lists the corrected documents'
entities in HTML offsets. :func:`mix_gold` writes ``WEAK``'s Flair files again with, for every sentence of a
document of the gold, the gold's tags instead of the rules' — never both — by the mechanism of
``train --synthetic`` (:func:`deid_ds.ner.synthetic.gold_tags`: a token overlapping a gold span takes its
label). A gold document of the ``test`` split moves to ``train``: a document trained on is never scored,
and ``test.txt`` scores against the weak labels anyway. The documents are those with a row in the gold
(``deid-ds gold`` writes none for a document without entity: such a document keeps its weak labels).

Only the sentences the weak files hold are relabelled: ``weak-label`` keeps the train split's sentences
without a rule entity for a ``--keep-empty`` share only, so a gold entity in a dropped sentence is lost
(counted in ``in_no_sentence``; weak-label with ``--keep-empty 1`` to keep them all). The model card keeps
the record, the document ids included, under ``data.gold_train``; ``evaluate`` reads it to leave those
documents out of the scores.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from deid_ds.errors import InputError
from deid_ds.ner.column_files import Block, column_blocks, split_line
from deid_ds.ner.synthetic import gold_by_document, gold_tags, spans_near

SPLITS = ("train", "dev", "test")


def mix_gold(
    weak_dir: str | Path, target: str | Path, gold_path: str | Path, *, log: Callable[[str], None] = lambda _: None
) -> dict:
    """Write into ``target`` (a new folder) ``weak_dir``'s Flair files, the gold's documents relabelled.

    Returns the record the model card keeps under ``data.gold_train`` (module docstring).
    """
    import pyarrow.parquet as pq

    from deid_ds.weak_labelling.render import flair_token

    weak_dir, target = Path(weak_dir), Path(target)
    sentences = weak_dir / "sentences.parquet"
    if not sentences.is_file():
        raise InputError(f"{weak_dir}: no sentences.parquet (--gold-train needs each token's HTML offsets)")
    gold = gold_by_document(Path(gold_path))
    if not gold:
        raise InputError(f"{gold_path}: the gold has no spans to train on")
    out: dict[str, list[Block]] = {split: [] for split in SPLITS}
    found: dict[str, str] = {}  # gold document -> its split in the weak files
    tagged = unaligned = 0
    seen: set[tuple[str, int, int, str]] = set()
    for split in SPLITS:
        path = weak_dir / f"{split}.txt"
        if not path.is_file():
            continue
        table = pq.read_table(sentences, columns=["tokens", "meta"], filters=[("split", "=", split)])
        rows = (row for batch in table.to_batches(max_chunksize=2048) for row in batch.to_pylist())
        try:
            for block, row in zip(column_blocks(path), rows, strict=True):
                document = str(row["meta"]["id_document"])
                if document not in gold:
                    out[split].append(block)
                    continue
                tokens = row["tokens"]
                parts = [split_line(line, path) for line in block]
                if len(parts) != len(tokens) or any(
                    head.split()[0] != flair_token(t["text"]) for (head, _, _), t in zip(parts, tokens)
                ):
                    raise ValueError
                offsets = [(t["html_start"], t["html_end"]) for t in tokens]
                spans = spans_near(gold[document], offsets)
                seen.update((document, *span) for span in spans)
                tags, bad = gold_tags(offsets, spans)
                tagged += sum(tag.startswith("B-") for tag in tags)
                unaligned += bad
                found[document] = split
                # a document trained on is never a test document
                out["train" if split == "test" else split].append(
                    [f"{head}{sep}{tag}" for (head, sep, _), tag in zip(parts, tags)]
                )
        except ValueError:
            raise InputError(
                f"{weak_dir}: {split}.txt and sentences.parquet hold different sentences (not one weak-label run)"
            ) from None
    if not found:
        raise InputError(f"{gold_path}: none of the gold's documents is in {weak_dir}'s sentences")
    target.mkdir(parents=True)
    for split, blocks in out.items():
        if (weak_dir / f"{split}.txt").is_file() or blocks:
            with (target / f"{split}.txt").open("w", encoding="utf-8") as handle:
                for block in blocks:
                    handle.write("\n".join(block) + "\n\n")
    total = sum(len(spans) for document, spans in gold.items() if document in found)
    record = {
        "gold": str(Path(gold_path).resolve()),
        "documents": sorted(found),
        "documents_per_split": {s: sum(1 for v in found.values() if v == s) for s in SPLITS},
        "moved_from_test_to_train": sum(1 for v in found.values() if v == "test"),
        "documents_not_in_weak": len(gold) - len(found),
        "gold_spans": total,
        "entities_tagged": tagged,  # a span cut by a sentence bound counts once per sentence
        "unaligned": unaligned,
        "in_no_sentence": total - len(seen),
        "rule": "the gold's tags replace the weak ones on every sentence of its documents; a token overlapping "
        "a gold span takes its label",
    }
    log(
        f"gold-train: {len(found):,} document(s) relabelled with the gold ({tagged:,} entities)"
        + (
            f", {record['moved_from_test_to_train']:,} moved from test to train"
            if record["moved_from_test_to_train"]
            else ""
        )
        + (
            f"; {record['documents_not_in_weak']:,} gold document(s) not in the weak files"
            if len(gold) > len(found)
            else ""
        )
        + (
            f"; {record['in_no_sentence']:,} gold span(s) in no sentence of the weak files "
            "(weak-label --keep-empty 1 keeps every sentence)"
            if record["in_no_sentence"]
            else ""
        )
    )
    return record
