"""Plain text of the notes, tokenised exactly as the tagger sees it, to train embeddings on.

FastText vectors and Flair character language models are only useful to the tagger if they were
trained on text cut into the same tokens as its training data: the weak labeller's Flair files hold the
project tokeniser's tokens (``12/03/2021`` one token, ``l'`` split from ``hôpital``), and Flair feeds a
character language model the sentence as its tokens joined by single spaces (``tokenized_lm``). So the
corpus text is written one sentence per line, tokens separated by one space, whitespace inside a token
replaced by ``_`` as in the Flair files.

Two sources are accepted:

* a **notes table** (Parquet file or directory, or a directory of ``.html``/``.txt`` files, as every
  command reads them): each note is parsed and segmented as ``deid-ds segment`` does — every sentence,
  with or without entity, which is what language models need;
* a **weak-label directory** (holding ``sentences.parquet``, or ``sentences.jsonl`` alone as older runs
  and ``--sentences-jsonl`` write it): its kept sentences, by default those of the
  train and dev splits only, because the test split's documents are the ones the correction campaign
  turns into the gold standard, and embeddings that have read them would blur the evaluation.

The text file written here is as sensitive as the notes (it *is* their text): it lives in a temporary
directory of the embedding commands and is deleted when they finish.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pyarrow.parquet as pq
from tqdm import tqdm

from deid_ds.defaults import DEFAULT_BATCH_SIZE, DEFAULT_MAX_TOKENS
from deid_ds.errors import InputError
from deid_ds.io.jsonl import iter_json_objects

#: The files that tell a weak-label output directory from a directory of notes, in the order they are
#: read: the Parquet file (always written), else the JSONL (opt-in since it is the largest output).
WEAK_LABEL_FILES = ("sentences.parquet", "sentences.jsonl")
WEAK_LABEL_MARKER = WEAK_LABEL_FILES[-1]  # the name older code looked for

#: Splits of a weak-label directory read by default (see the module docstring).
DEFAULT_WEAK_SPLITS: tuple[str, ...] = ("train", "dev")

_SPACE = re.compile(r"\s")


@dataclass
class CorpusText:
    """What a corpus text file holds: counts only, never content (they go into manifests and logs)."""

    source: str
    kind: str  # "notes" or "weak-label"
    splits: list[str] | None = None
    documents: int = 0
    sentences: int = 0
    tokens: int = 0
    characters: int = 0
    characters_seen: dict[str, int] = field(default_factory=dict, repr=False)

    def to_dict(self) -> dict:
        """The counts, for a manifest (the character inventory is left out: it is a model input, not a fact)."""
        data = asdict(self)
        data.pop("characters_seen")
        return data


def is_weak_label_dir(path: str | Path) -> bool:
    """Whether ``path`` is the output directory of ``deid-ds weak-label``."""
    path = Path(path)
    return path.is_dir() and any((path / name).is_file() for name in WEAK_LABEL_FILES)


def token_text(text: str) -> str:
    """A token as it appears in the corpus text and in the Flair files: no whitespace inside, never empty."""
    return _SPACE.sub("_", text) or "_"


def _segment_batch(args: tuple[list[str | None], int]) -> tuple[int, list[list[str]]]:
    """Number of notes and token texts of every sentence of a batch of HTML notes.

    Top-level so that it runs in worker processes; it receives the HTML only, never the metadata.
    """
    from deid_ds.engine.parallel import relaxed_gc

    htmls, max_tokens = args
    segmenter = _segmenter(max_tokens)
    out: list[list[str]] = []
    with relaxed_gc():
        for html in htmls:
            if not html or not isinstance(html, (str, bytes)):  # null, empty, or not UTF-8 (io.notes.InvalidText)
                continue
            note = segmenter.segment_html(html)
            out.extend([token_text(t.text) for t in sentence.tokens] for sentence in note.sentences if sentence.tokens)
    return len(htmls), out


_SEGMENTERS: dict[int, object] = {}


def _segmenter(max_tokens: int):
    """One segmenter per process and sentence length (building one loads the Punkt parameters)."""
    from deid_ds.segmentation.segmenter import Segmenter

    if max_tokens not in _SEGMENTERS:
        _SEGMENTERS[max_tokens] = Segmenter(max_tokens=max_tokens)
    return _SEGMENTERS[max_tokens]


def iter_note_sentences(
    notes: str | Path,
    *,
    column_map: Mapping[str, str] | None = None,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    workers: int = 1,
    stats: CorpusText | None = None,
    progress: bool = False,
) -> Iterator[list[str]]:
    """Token texts of every sentence of every note, in input order (whatever ``workers`` is)."""
    from deid_ds.engine.parallel import ordered_map
    from deid_ds.io.notes import open_notes

    source = open_notes(notes, column_map)
    batches = (([note.html for note in batch], max_tokens) for batch in source.iter_batches(DEFAULT_BATCH_SIZE))
    with tqdm(total=source.num_notes, unit="note", desc="read notes", disable=not progress) as bar:
        for count, sentences in ordered_map(_segment_batch, batches, workers=workers):
            if stats is not None:
                stats.documents += count
            bar.update(count)
            yield from sentences


def iter_weak_sentences(
    weak_dir: str | Path, *, splits: Sequence[str] | None = DEFAULT_WEAK_SPLITS, stats: CorpusText | None = None
) -> Iterator[list[str]]:
    """Token texts of the kept sentences of a weak-label directory, of the given splits (all if None)."""
    path = next(Path(weak_dir) / name for name in WEAK_LABEL_FILES if (Path(weak_dir) / name).is_file())
    rows = _parquet_rows(path) if path.suffix == ".parquet" else (row for _, row in iter_json_objects(path))
    wanted = None if splits is None else set(splits)
    documents: set[str] = set()
    for row in rows:
        if wanted is not None and row.get("split") not in wanted:
            continue
        tokens = [token_text(token["text"]) for token in row.get("tokens") or []]
        if tokens:
            documents.add(str((row.get("meta") or {}).get("id_document")))
            yield tokens
    if stats is not None:
        stats.documents = len(documents)


def _parquet_rows(path: Path) -> Iterator[dict]:
    """The rows of ``sentences.parquet`` as the JSONL holds them (the columns read here), a batch at a time."""
    try:
        handle = pq.ParquetFile(path)
        names = handle.schema_arrow.names
        columns = [name for name in ("tokens", "meta", "split") if name in names]
        for batch in handle.iter_batches(batch_size=4096, columns=columns):
            yield from batch.to_pylist()
    except (OSError, ValueError) as error:  # pyarrow.ArrowInvalid is a ValueError
        raise InputError(f"{path}: not a readable Parquet file ({type(error).__name__})") from None


def write_corpus_text(
    corpus: str | Path,
    out_file: str | Path,
    *,
    column_map: Mapping[str, str] | None = None,
    splits: Sequence[str] | None = DEFAULT_WEAK_SPLITS,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    workers: int = 1,
    progress: bool = False,
) -> CorpusText:
    """Write ``corpus`` (notes table or weak-label directory) as one tokenised sentence per line.

    Returns the counts and the inventory of characters (for a character language model's dictionary).
    ``splits`` applies to a weak-label directory only.
    """
    corpus = Path(corpus)
    if not corpus.exists():
        raise InputError(f"{corpus}: no such file or directory")
    weak = is_weak_label_dir(corpus)
    stats = CorpusText(
        source=str(corpus),
        kind="weak-label" if weak else "notes",
        splits=list(splits) if weak and splits is not None else None,
    )
    if weak:
        sentences: Iterable[list[str]] = iter_weak_sentences(corpus, splits=splits, stats=stats)
    else:
        sentences = iter_note_sentences(
            corpus, column_map=column_map, max_tokens=max_tokens, workers=workers, stats=stats, progress=progress
        )
    characters: dict[str, int] = {}
    with Path(out_file).open("w", encoding="utf-8") as out:
        for tokens in sentences:
            line = " ".join(tokens)
            out.write(line)
            out.write("\n")
            stats.sentences += 1
            stats.tokens += len(tokens)
            stats.characters += len(line) + 1
            for char in line:
                characters[char] = characters.get(char, 0) + 1
    characters[" "] = characters.get(" ", 0)
    characters["\n"] = characters.get("\n", 0) + stats.sentences
    stats.characters_seen = characters
    if stats.sentences == 0:
        what = f"splits {', '.join(splits)}" if weak and splits is not None else "notes"
        raise InputError(f"{corpus}: no sentence to train on (in its {what})")
    return stats
