"""Engines that run any stage (``weak-label``, ``predict``, ``deidentify``): ``local`` or ``spark``.

An engine knows nothing of the stages (it imports no stage package): a stage describes itself once —
its batch function, its output tables and their schemas, the files it reads, the columns it wants
beside the notes (:class:`deid_ds.engine.stage.Stage`) — and hands that description, with a sink that
writes its output directory, to the engine its caller chose (:func:`engine_for`). The outputs are the
same, byte for byte, whichever engine ran them.

* :mod:`.stage` — :class:`~deid_ds.engine.stage.Stage`, what a stage tells the engines;
* :mod:`.local` — the **local** engine: batches read with pyarrow, run in worker processes
  (:mod:`.parallel`: :func:`~deid_ds.engine.parallel.ordered_map`), resumable;
* :mod:`.spark` — the **spark** engine: the same batch function applied to the notes with Apache Spark
  (``mapInArrow``), for notes held as Parquet on HDFS or object storage; the session, paths and the
  Hadoop file system, shipping files to executors once, and
  :func:`~deid_ds.engine.spark.run_batches`;
* :mod:`.output` — the output directory on either engine (built whole, then published).

``pyspark`` is imported only by :mod:`.spark`, when ``--engine spark`` is asked for: ``import deid_ds``
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


def engine_for(engine: str, *, workers: int = 1, progress: bool = True, spark_master: str | None = None):
    """The engine object for ``--engine`` (checked by :func:`check_engine`): a
    :class:`~deid_ds.engine.local.LocalEngine` with ``workers`` processes, or a
    :class:`~deid_ds.engine.spark.SparkEngine` on ``spark_master`` (else the active or ``spark-submit``
    configuration, else ``local[*]``)."""
    check_engine(engine)
    if engine == "spark":
        from deid_ds.engine.spark import SparkEngine

        return SparkEngine(spark_master)
    from deid_ds.engine.local import LocalEngine

    return LocalEngine(workers, progress)
