"""Reading and writing: notes tables, JSON lines, files written atomically, output directories.

* :mod:`.notes` — notes tables (Parquet, CSV, JSON lines, a folder of HTML files) read in batches;
* :mod:`.jsonl` — JSON lines;
* :mod:`.files` — atomic file writes and closing writers;
* :mod:`.schemas` — the Arrow schema of ``documents.parquet``, shared by every stage that reads notes;
* :mod:`.output_dir` — the ``--out`` policy: what a command may replace, the lock, temporary directories.
"""
