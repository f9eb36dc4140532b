"""Segmentation, the first stage: HTML note → plain text with offsets into the HTML → sentences and tokens.

* :mod:`.html_scanner` — deid-ds's HTML scanner: the note cut into text and markup constructs (its
  docstring is the specification);
* :mod:`.html_text` — the text builder, driven by the scanner: the note's visible text, each character mapped
  back to the HTML;
* :mod:`.offsets` — the offset map between the text and the HTML;
* :mod:`.encoding` — bytes to text for notes stored as bytes;
* :mod:`.tokens` — the tokenizer;
* :mod:`.punkt` — Punkt sentence-boundary parameters (shipped, loaded, saved);
* :mod:`.punkt_splitter` — Punkt's sentence splitting with those parameters, without NLTK;
* :mod:`.punkt_training` — Punkt training with NLTK (``deid-ds punkt-train``);
* :mod:`.segmenter` — sentences and tokens of one note;
* :mod:`.limits` — the per-note size and time limits every stage that reads notes applies;
* :mod:`.notes` — a notes table segmented into ``sentences.parquet`` and ``documents.parquet``
  (``deid-ds segment``); :mod:`.cli` is its command line.
"""
