"""``build-kb`` under the output policy of the other commands, a matcher the manifest covers, and source files
or disks that fail: one line and a non-zero exit, never a traceback or an abort, nothing half-written."""

from __future__ import annotations

import errno
import gzip
import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from deid_ds.cli import main
from deid_ds.io.output_dir import MARKER
from deid_ds.kb.matcher import GazetteerMatcher
from tests.conftest import REPO

SOURCES = REPO / "kb" / "sources"
BAN = str(SOURCES / "adresses-35.csv.gz")
DIRECTORY = str(next(SOURCES.glob("PS_LibreAcces_Personne_activite_*.txt")))


def build(out: Path, *more: str):
    return CliRunner().invoke(main, ["build-kb", "--out", str(out), "--quiet", "--ban", BAN, *more])


def one_line_error(result, code: int) -> str:
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1, result.output
    return result.output


def test_a_directory_deid_ds_did_not_write_is_refused_and_its_files_kept(tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "streets.parquet").write_text("someone's file")
    assert "was not written by deid-ds" in one_line_error(build(out), 2)
    assert [p.name for p in out.iterdir()] == ["streets.parquet"]
    assert build(out, "--overwrite").exit_code == 0  # asked for: written into
    assert (out / MARKER).is_file() and (out / "manifest.json").is_file()


def test_home_the_current_directory_and_the_sources_folder_are_refused_even_with_overwrite(tmp_path, monkeypatch):
    home = tmp_path / "home"
    (home / "notes").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    assert "the home directory" in one_line_error(build(home, "--overwrite"), 2)
    assert "holds the home directory" in one_line_error(build(tmp_path, "--overwrite"), 2)
    sources = tmp_path / "sources"
    sources.mkdir()
    shutil.copy(BAN, sources)
    result = CliRunner().invoke(
        main, ["build-kb", "--out", str(tmp_path / "x"), "--ban", str(sources / "adresses-35.csv.gz")]
    )
    assert result.exit_code == 0, result.output  # beside its source: fine
    holding = CliRunner().invoke(
        main, ["build-kb", "--out", str(sources), "--ban", str(sources / "adresses-35.csv.gz"), "--overwrite"]
    )
    assert "holds an input of this run" in one_line_error(holding, 2)
    assert sorted(p.name for p in home.iterdir()) == ["notes"] and sorted(p.name for p in sources.iterdir()) == [
        "adresses-35.csv.gz"
    ]


def test_a_knowledge_base_of_an_earlier_version_without_the_marker_is_recognised_by_its_manifest(tmp_path):
    out = tmp_path / "kb"
    assert build(out).exit_code == 0
    (out / MARKER).unlink()  # what deid-ds wrote before build-kb had a marker
    again = build(out)
    assert again.exit_code == 0, again.output
    assert json.loads((out / MARKER).read_text())["command"] == "build-kb"
    other = tmp_path / "other"
    assert CliRunner().invoke(main, ["synth", "--out", str(other), "--notes", "2", "-q"]).exit_code == 0
    assert "holds the output of deid-ds synth" in one_line_error(build(other), 2)


def test_a_full_disk_is_one_line_and_leaves_the_previous_knowledge_base_whole(tmp_path, monkeypatch):
    out = tmp_path / "kb"
    assert build(out).exit_code == 0
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(pq, "write_table", full)
    message = one_line_error(build(out, "--health-directory", DIRECTORY), 1)
    assert "No space left on device" in message and "unchanged" in message
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before
    assert not [p for p in out.iterdir() if p.name.startswith(".deid-ds-tmp-")]


def test_a_full_disk_while_moving_the_files_in_leaves_no_manifest_to_trust(tmp_path, monkeypatch):
    import os

    out = tmp_path / "kb"
    assert build(out).exit_code == 0
    real_replace, moved = os.replace, []

    def replace(source, target):  # the first file moves into the knowledge base, the second fails
        if Path(target).parent == out:
            if moved:
                raise OSError(errno.ENOSPC, "No space left on device")
            moved.append(target)
        real_replace(source, target)

    monkeypatch.setattr(os, "replace", replace)
    one_line_error(build(out, "--health-directory", DIRECTORY), 1)
    monkeypatch.undo()
    refused = CliRunner().invoke(main, ["kb-info", str(out)])
    assert "not a built knowledge base" in one_line_error(refused, 1)  # a mix of two builds: never used
    assert build(out, "--health-directory", DIRECTORY).exit_code == 0  # and built again in place


# -- the matcher ------------------------------------------------------------------------------------------


def weak_label(notes: Path, kb: Path, out: Path):
    return CliRunner().invoke(main, ["weak-label", str(notes), "--kb", str(kb), "-o", str(out), "-q", "-j", "1"])


def test_the_manifest_covers_the_matcher_and_an_altered_or_damaged_one_is_compiled_again(kb_dir, tmp_path):
    # (a copy of the knowledge base per run: a process keeps the labeller of a knowledge base it loaded)
    kbs = {name: tmp_path / name for name in ("kb", "altered", "damaged")}
    for kb in kbs.values():
        shutil.copytree(kb_dir, kb)
    recorded = json.loads((kbs["kb"] / "manifest.json").read_text())["matcher"]
    assert recorded["size"] == (kb_dir / "matcher.npz").stat().st_size and len(recorded["sha256"]) == 64
    notes = tmp_path / "notes.parquet"
    pq.write_table(pq.read_table(REPO / "data" / "notes.parquet").slice(0, 4), notes)
    assert weak_label(notes, kbs["kb"], tmp_path / "first").exit_code == 0
    expected = pq.read_table(tmp_path / "first" / "spans.parquet")
    assert expected.num_rows > 0
    GazetteerMatcher.build([]).save(kbs["altered"] / "matcher.npz")  # a valid matcher that finds nothing
    damaged = kbs["damaged"] / "matcher.npz"
    damaged.write_bytes(damaged.read_bytes()[:1000])
    for name in ("altered", "damaged"):
        result = weak_label(notes, kbs[name], tmp_path / f"{name}-out")
        assert result.exit_code == 0 and "Traceback" not in result.output, result.output
        assert "matcher.npz does not match" in result.output
        assert pq.read_table(tmp_path / f"{name}-out" / "spans.parquet").equals(expected)
        assert json.loads((kbs[name] / "manifest.json").read_text())["matcher"] == recorded
        assert (kbs[name] / "matcher.npz").read_bytes() == (kb_dir / "matcher.npz").read_bytes()  # compiled again


# -- hostile sources --------------------------------------------------------------------------------------

ZEROS = b"\0" * (1 << 24)


def test_a_gzipped_ban_file_that_inflates_far_beyond_its_size_is_refused(tmp_path):
    bomb = tmp_path / "sources" / "adresses-99.csv.gz"
    bomb.parent.mkdir()
    with gzip.open(BAN, "rb") as handle:
        header = handle.readline()
    with gzip.open(bomb, "wb", compresslevel=1) as handle:
        handle.write(header)
        for _ in range(8):  # 128 MiB of zeros in about 130 KB
            handle.write(ZEROS)
    result = CliRunner().invoke(main, ["build-kb", "--sources", str(bomb.parent), "--out", str(tmp_path / "kb"), "-q"])
    assert "inflates to more than 100 times its compressed size" in one_line_error(result, 1)
    assert not (tmp_path / "kb" / "manifest.json").exists()


@pytest.mark.slow  # a process of its own: an abort cannot be caught in this one
def test_a_zip_bomb_in_the_health_directory_is_one_line_and_exit_1_not_an_abort(tmp_path):
    sources = tmp_path / "sources"
    sources.mkdir()
    header = Path(DIRECTORY).read_bytes().split(b"\n")[:200]
    with zipfile.ZipFile(sources / "PS_LibreAcces.zip", "w", compression=zipfile.ZIP_DEFLATED) as archive:
        with archive.open(Path(DIRECTORY).name, "w", force_zip64=True) as member:
            member.write(b"\n".join(header) + b"\n")
            for _ in range(32):  # 512 MiB of zeros
                member.write(ZEROS)
    done = subprocess.run(
        [sys.executable, "-m", "deid_ds", "build-kb", "--sources", str(sources), "--out", str(tmp_path / "kb"), "-q"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1, done.stderr
    assert "zip bomb" in done.stderr and "Fatal" not in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_a_full_disk_while_downloading_is_one_line(tmp_path, monkeypatch):
    from deid_ds.kb import download

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "kb" / "downloads" / "x.part"))

    monkeypatch.setattr(download, "fetch", full)
    message = one_line_error(build(tmp_path / "kb"), 1)
    assert "No space left on device" in message and not (tmp_path / "kb" / "manifest.json").exists()


def test_a_directory_of_another_command_written_into_with_overwrite_becomes_a_knowledge_base(tmp_path):
    other = tmp_path / "other"
    assert CliRunner().invoke(main, ["synth", "--out", str(other), "--notes", "2", "-q"]).exit_code == 0
    assert build(other, "--overwrite").exit_code == 0
    assert json.loads((other / MARKER).read_text())["command"] == "build-kb"
    assert build(other).exit_code == 0  # its own now: built again without --overwrite
