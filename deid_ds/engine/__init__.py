"""Engines that run the per-batch work of ``weak-label``, ``predict`` and ``deidentify``: ``local`` or ``spark``.

The **local** engine is the one each command module holds (batches read with pyarrow, labelled or
tagged in worker processes, :func:`deid_ds.engine.parallel.ordered_map`). The **spark** engine applies the very
same batch function (:func:`deid_ds.weak_labelling.batch.label_notes`,
:func:`deid_ds.ner.predict.predict_batch`, :func:`deid_ds.deidentification.pipeline.deidentify_batch`) to the notes with Apache Spark (``mapInArrow``), for notes
held as Parquet on HDFS or object storage:

* :mod:`.spark` — the session, paths and the Hadoop file system, shipping files to executors once, and
  :func:`~deid_ds.engine.spark.run_batches`: *apply this batch function to this notes table and write
  these output tables, each in input order* — what any command with a per-batch function needs;
* :mod:`.spark_weak_label`, :mod:`.spark_predict` and :mod:`.spark_deidentify` — the three commands on
  it (their assembly is the local engine's, fed from Spark's Parquet outputs).

``pyspark`` is imported only by those modules, when ``--engine spark`` is asked for: ``import deid_ds``
and the local engine never need it (``pip install "deid-ds[spark]"`` installs it).
"""

from __future__ import annotations

from deid_ds.errors import DeidError, InputError

ENGINES: tuple[str, ...] = ("local", "spark")
SPARK_INSTALL_HINT = 'pip install "deid-ds[spark]"'


def check_engine(engine: str) -> str:
    """``engine`` if it is one of :data:`ENGINES`; for ``spark``, after checking that pyspark imports."""
    if engine not in ENGINES:
        raise InputError(f"--engine {engine!r}: expected one of {', '.join(ENGINES)}")
    if engine == "spark":
        require_pyspark()
    return engine


def require_pyspark():
    """The ``pyspark`` module, or a :class:`DeidError` saying how to install it."""
    try:
        import pyspark
    except ImportError:
        raise DeidError(f"--engine spark needs pyspark, which is not installed here: {SPARK_INSTALL_HINT}") from None
    return pyspark
