"""Atomic outputs: all or nothing."""

from __future__ import annotations

import pytest

from deid_ds.io.files import atomic_directory, atomic_write_text


def test_a_failed_write_leaves_the_previous_file_and_no_temporary(tmp_path):
    path = tmp_path / "out.json"
    atomic_write_text(path, "old")
    with pytest.raises(RuntimeError):
        from deid_ds.io.files import atomic_path

        with atomic_path(path) as tmp:
            tmp.write_text("half")
            raise RuntimeError("interrupted")
    assert path.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]


def test_a_directory_is_replaced_whole_only_when_complete(tmp_path):
    out = tmp_path / "run"
    with atomic_directory(out) as tmp:
        (tmp / "a.txt").write_text("1")
    with pytest.raises(KeyboardInterrupt):
        with atomic_directory(out) as tmp:
            (tmp / "a.txt").write_text("2")
            raise KeyboardInterrupt
    assert (out / "a.txt").read_text() == "1"
    with atomic_directory(out) as tmp:
        (tmp / "b.txt").write_text("3")
    assert sorted(p.name for p in out.iterdir()) == ["b.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]
