"""FastText word vectors for the tagger: trained on the notes with gensim, or a user's file.

The paper stacks French FastText vectors (``cc.fr.300.bin``, trained on Common Crawl and Wikipedia) with
Flair embeddings. Those cannot be fetched at run time here (no network), and vectors trained on the
notes themselves know the vocabulary of clinical French — abbreviations, drug names, the layout words of
letterheads — that a general corpus does not. Both are supported:

* ``train_fasttext`` trains gensim's FastText (skip-gram with character n-grams, so unseen words and
  misspelt names still get a vector) and saves its ``FastTextKeyedVectors`` with ``.save()`` as one
  file, ``DIR/fasttext.kv``, which Flair's ``FastTextEmbeddings(path, use_local=True)`` loads (any
  suffix but ``.bin`` is read with ``FastTextKeyedVectors.load``);
* ``import_fasttext`` takes a user's file: a Facebook ``.bin`` (read by Flair with
  ``load_facebook_vectors``; checked by its header, not loaded, since ``cc.fr.300.bin`` is 7 GB) or a
  gensim ``.kv``/``.model`` file (loaded and checked). ``.bin`` files are referenced by absolute path
  unless ``copy`` is asked.

Either way ``DIR/fasttext.json`` says where the vectors are, their format and dimension; ``deid-ds
train --fasttext DIR`` reads it.

Size: Flair pickles the whole vector table, n-gram buckets included, into every tagger it trains. The
n-gram table is ``bucket × dim`` floats (gensim's default bucket, 2,000,000, is 800 MB at dim 100), so
the default here is 200,000 buckets (80 MB at dim 100). ``cc.fr.300.bin`` makes taggers of several GB.

Privacy: vectors trained on notes contain their vocabulary, patient and doctor names included. Treat
them, and every tagger trained with them, as the notes themselves.
"""

from __future__ import annotations

import json
import shutil
import struct
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from deid_ds.defaults import DEFAULT_MAX_TOKENS
from deid_ds.errors import InputError
from deid_ds.io.files import atomic_write_text
from deid_ds.io.output_dir import check_output_dir, output_directory
from deid_ds.ner.corpus_text import DEFAULT_WEAK_SPLITS, write_corpus_text

MANIFEST = "fasttext.json"
VECTORS = "fasttext.kv"

#: Magic number and newest version of Facebook fastText's binary model format (fasttext.cc).
_FACEBOOK_MAGIC = 793712314
_FACEBOOK_MAX_VERSION = 12

DEFAULTS = {"dim": 100, "epochs": 5, "min_count": 2, "window": 5, "min_n": 3, "max_n": 6, "bucket": 200_000}


#: The command named in the marker of the directories written here (:mod:`deid_ds.io.output_dir`).
COMMAND = "embeddings fasttext"


def _no_log(message: str) -> None:
    return None


def train_fasttext(
    corpus: str | Path,
    out: str | Path,
    *,
    dim: int = DEFAULTS["dim"],
    epochs: int = DEFAULTS["epochs"],
    min_count: int = DEFAULTS["min_count"],
    window: int = DEFAULTS["window"],
    min_n: int = DEFAULTS["min_n"],
    max_n: int = DEFAULTS["max_n"],
    bucket: int = DEFAULTS["bucket"],
    workers: int = 1,
    seed: int = 0,
    column_map: Mapping[str, str] | None = None,
    splits: Sequence[str] | None = DEFAULT_WEAK_SPLITS,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    progress: bool = False,
    log: Callable[[str], None] = _no_log,
    overwrite: bool = False,
) -> dict:
    """Train FastText vectors on ``corpus`` (notes table or weak-label directory) into ``out``.

    ``out`` is replaced atomically: it holds ``fasttext.kv`` and ``fasttext.json`` once complete,
    never a half-written model. With ``workers=1`` the vectors are the same on every run for a seed;
    gensim's threads make several workers faster but not repeatable. ``out`` is replaced only if deid-ds
    wrote it, or with ``overwrite`` (:mod:`deid_ds.io.output_dir`).
    """
    from gensim.models import FastText

    started = time.monotonic()
    out = Path(out)
    check_output_dir(out, COMMAND, (corpus,), overwrite)  # before the training, not after
    with tempfile.TemporaryDirectory(prefix="deid-ds-fasttext-") as scratch:
        text_file = Path(scratch) / "corpus.txt"
        stats = write_corpus_text(
            corpus,
            text_file,
            column_map=column_map,
            splits=splits,
            max_tokens=max_tokens,
            workers=workers,
            progress=progress,
        )
        log(f"corpus: {stats.documents:,} documents, {stats.sentences:,} sentences, {stats.tokens:,} tokens")
        model = FastText(
            vector_size=dim,
            window=window,
            min_count=min_count,
            sg=1,
            min_n=min_n,
            max_n=max_n,
            bucket=bucket,
            workers=workers,
            seed=seed,
        )
        model.build_vocab(corpus_file=str(text_file))
        if len(model.wv) == 0:
            raise InputError(f"{corpus}: no word occurs {min_count} times or more (lower --min-count)")
        log(
            f"vocabulary: {len(model.wv):,} words seen at least {min_count} times; training {epochs} epoch(s), "
            f"dim {dim}"
        )
        model.train(
            corpus_file=str(text_file),
            total_examples=model.corpus_count,
            total_words=model.corpus_total_words,
            epochs=epochs,
        )
    with output_directory(out, COMMAND, inputs=(corpus,), overwrite=overwrite) as tmp:
        model.wv.save(str(tmp / VECTORS), separately=[])
        manifest = {
            "format": "gensim",
            "path": VECTORS,
            "dim": dim,
            "vocab_size": len(model.wv),
            "trained": True,
            "corpus": stats.to_dict(),
            "parameters": {
                "dim": dim,
                "epochs": epochs,
                "min_count": min_count,
                "window": window,
                "min_n": min_n,
                "max_n": max_n,
                "bucket": bucket,
                "sg": 1,
                "seed": seed,
                "workers": workers,
            },
            "seconds": round(time.monotonic() - started, 2),
            "versions": _versions(),
        }
        _write_manifest(tmp, manifest)
    log(f"written to {out}")
    return manifest


def import_fasttext(
    source: str | Path,
    out: str | Path,
    *,
    copy: bool = False,
    log: Callable[[str], None] = _no_log,
    overwrite: bool = False,
) -> dict:
    """Record a user's FastText file (Facebook ``.bin`` or gensim) in ``out`` for ``deid-ds train``.

    A ``.bin`` file is validated by its header and referenced by absolute path (copied with ``copy``);
    a gensim file is loaded, and its ``FastTextKeyedVectors`` saved into ``out`` (a full gensim
    ``FastText`` model is reduced to its vectors, which is all Flair reads).
    """
    source = Path(source)
    if not source.is_file():
        raise InputError(f"{source}: no such file")
    out = Path(out)
    with output_directory(out, COMMAND, inputs=(source,), overwrite=overwrite) as tmp:
        if source.suffix == ".bin":
            header = read_facebook_header(source)
            if copy:
                shutil.copyfile(source, tmp / "fasttext.bin")
                path = "fasttext.bin"
            else:
                path = str(source.resolve())
            manifest = {
                "format": "facebook-bin",
                "path": path,
                "dim": header["dim"],
                "vocab_size": None,
                "trained": False,
                "source": str(source.resolve()),
                "size_bytes": source.stat().st_size,
                "header": header,
            }
        else:
            vectors = _load_gensim_vectors(source)
            vectors.save(str(tmp / VECTORS), separately=[])
            manifest = {
                "format": "gensim",
                "path": VECTORS,
                "dim": int(vectors.vector_size),
                "vocab_size": len(vectors),
                "trained": False,
                "source": str(source.resolve()),
            }
        manifest["versions"] = _versions()
        _write_manifest(tmp, manifest)
    log(f"{source.name}: {manifest['format']}, dim {manifest['dim']}; recorded in {out}")
    return manifest


def read_facebook_header(path: str | Path) -> dict:
    """Dimension and training arguments from a Facebook fastText ``.bin`` header (without loading it).

    Refuses a file that is not one (wrong magic number, e.g. a ``.vec`` text file or an HTML error
    page saved under that name) or of a newer format version than gensim reads.
    """
    path = Path(path)
    with path.open("rb") as f:
        head = f.read(8 + 12 * 4 + 8)
    if len(head) < 8 + 12 * 4 + 8:
        raise InputError(f"{path}: too short to be a fastText .bin model")
    magic, version = struct.unpack("<ii", head[:8])
    if magic != _FACEBOOK_MAGIC:
        raise InputError(
            f"{path}: not a Facebook fastText .bin model (wrong magic number; a .vec text file is not supported, "
            "use the .bin)"
        )
    if version > _FACEBOOK_MAX_VERSION:
        raise InputError(
            f"{path}: fastText format version {version} is newer than the supported {_FACEBOOK_MAX_VERSION}"
        )
    names = (
        "dim",
        "ws",
        "epoch",
        "min_count",
        "neg",
        "word_ngrams",
        "loss",
        "model",
        "bucket",
        "minn",
        "maxn",
        "lr_update_rate",
    )
    values = struct.unpack("<12i", head[8 : 8 + 48])
    header = dict(zip(names, values))
    if header["dim"] <= 0:
        raise InputError(f"{path}: fastText header gives dimension {header['dim']}")
    header["version"] = version
    return header


def _load_gensim_vectors(path: Path):
    """``FastTextKeyedVectors`` from a gensim file holding them or a whole ``FastText`` model."""
    from gensim.models import FastText
    from gensim.models.fasttext import FastTextKeyedVectors

    try:
        vectors = FastTextKeyedVectors.load(str(path))
    except Exception:
        try:
            vectors = FastText.load(str(path)).wv
        except Exception:
            raise InputError(f"{path}: not a gensim FastText model or FastTextKeyedVectors file") from None
    if not isinstance(vectors, FastTextKeyedVectors):
        raise InputError(
            f"{path}: gensim vectors without character n-grams ({type(vectors).__name__}); FastText vectors are needed"
        )
    return vectors


def resolve_fasttext(path: str | Path) -> tuple[Path, dict]:
    """The vectors file to give Flair, and its manifest, from a ``deid-ds embeddings fasttext`` DIR or a file.

    A file given directly (``.bin`` or gensim) gets a manifest made on the spot.
    """
    path = Path(path)
    if path.is_dir():
        manifest_file = path / MANIFEST
        if not manifest_file.is_file():
            raise InputError(f"{path}: no {MANIFEST} (not an output of `deid-ds embeddings fasttext`)")

        manifest = json.loads(manifest_file.read_text(encoding="utf-8"))
        vectors = Path(manifest["path"])
        if not vectors.is_absolute():
            vectors = path / vectors
        if not vectors.is_file():
            raise InputError(f"{path}: the FastText file it refers to is missing: {vectors}")
        if manifest.get("size_bytes") is not None and vectors.stat().st_size != manifest["size_bytes"]:
            raise InputError(f"{vectors}: its size changed since `deid-ds embeddings fasttext --from` recorded it")
        return vectors.resolve(), manifest
    if not path.is_file():
        raise InputError(f"{path}: no such FastText file or directory")
    if path.suffix == ".bin":
        return path.resolve(), {
            "format": "facebook-bin",
            "path": str(path.resolve()),
            "dim": read_facebook_header(path)["dim"],
        }
    vectors = _load_gensim_vectors(path)
    return path.resolve(), {"format": "gensim", "path": str(path.resolve()), "dim": int(vectors.vector_size)}


def _write_manifest(directory: Path, manifest: dict) -> None:
    atomic_write_text(directory / MANIFEST, json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")


def _versions() -> dict:
    from deid_ds.ner.runtime import package_versions

    return package_versions()
