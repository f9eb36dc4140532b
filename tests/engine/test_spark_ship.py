"""What the Spark engine stages for its executors goes when the driver ends, and only that."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

from deid_ds.engine import spark as spark_engine
from tests.conftest import REPO


class FakeSpark:
    """Just what :func:`ship` touches of a session: its application id and ``addFile``."""

    def __init__(self) -> None:
        self.added: list[str] = []
        self.sparkContext = SimpleNamespace(
            applicationId="app-1", addFile=lambda path, recursive=False: self.added.append(path)
        )


def test_a_shipped_model_is_staged_once_and_removed_without_touching_the_original(tmp_path):
    model = tmp_path / "model"
    model.mkdir()
    (model / "final-model.pt").write_bytes(b"weights and vocabulary")
    spark = FakeSpark()
    name = spark_engine.ship(spark, model)
    assert spark_engine.ship(spark, model) == name and len(spark.added) == 1  # shipped once per state
    staged = spark.added[0]
    assert staged.endswith(name) and (tmp_path / "model" / "final-model.pt").read_bytes() == b"weights and vocabulary"
    spark_engine._remove_staged()
    assert not any(Path(staged).parent.exists() for staged in spark.added)
    assert (model / "final-model.pt").read_bytes() == b"weights and vocabulary"
    spark_engine._SHIPPED.clear()


def test_the_staging_directory_is_gone_when_the_driver_exits(tmp_path):
    (tmp_path / "kb.parquet").write_bytes(b"PAR1")
    code = (
        "import sys\n"
        "from tests.engine.test_spark_ship import FakeSpark\n"
        "from deid_ds.engine.spark import ship\n"
        "spark = FakeSpark()\n"
        f"ship(spark, {str(tmp_path / 'kb.parquet')!r})\n"
        "print(spark.added[0])\n"
    )
    staged = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    staged_path = Path(staged.stdout.strip())
    assert staged_path.name.endswith("kb.parquet")
    assert not staged_path.parent.exists()
    assert (tmp_path / "kb.parquet").read_bytes() == b"PAR1"
