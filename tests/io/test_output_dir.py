"""``--out DIR`` never destroys what deid-ds did not write, nor an input; runs on one DIR exclude each other.

The policy (:mod:`deid_ds.io.output_dir`) is checked through its functions and through the commands that
write a directory (segment, weak-label, deidentify): a directory without our marker is refused with exit
status 2 and left untouched unless --overwrite; some targets are refused even then; a second run on the
same DIR refuses at once; temporary directories of killed runs are cleaned; a full disk is one line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from deid_ds.cli import main
from deid_ds.io.output_dir import (
    MARKER,
    OutputError,
    OutputRefused,
    check_output_dir,
    output_directory,
    output_lock,
    read_marker,
    temporary_name,
)
from tests.conftest import REPO

HTML = "<p>Mme <b>Jeanne</b> LE GALL, née le 12/08/1957. Elle va bien. Revue le 3 mars.</p>"


def write(out: Path, files: dict[str, str]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (out / name).write_text(text, encoding="utf-8")


def contents(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def leftovers(parent: Path) -> list[str]:
    """Temporary directories and lock files deid-ds left in ``parent``."""
    names = (p.name for p in parent.iterdir())
    return sorted(name for name in names if name.startswith(".deid-ds-tmp-") or name.endswith(".deid-ds-lock"))


def produce(out: Path, command: str = "segment", text: str = "new", **options) -> None:
    with output_directory(out, command, **options) as tmp:
        (tmp / "result.txt").write_text(text, encoding="utf-8")


# -- the policy -------------------------------------------------------------------------------------------


def test_a_new_directory_is_written_with_a_marker_naming_the_command(tmp_path):
    produce(tmp_path / "out")
    assert (tmp_path / "out" / "result.txt").read_text() == "new"
    marker = read_marker(tmp_path / "out")
    assert marker["command"] == "segment" and marker["version"] and marker["created"]
    assert leftovers(tmp_path) == []


def test_a_directory_of_the_same_command_is_replaced_without_overwrite(tmp_path):
    produce(tmp_path / "out", text="first")
    produce(tmp_path / "out", text="second")
    assert (tmp_path / "out" / "result.txt").read_text() == "second"


def test_an_empty_directory_is_used(tmp_path):
    (tmp_path / "out").mkdir()
    produce(tmp_path / "out")
    assert (tmp_path / "out" / "result.txt").is_file()


def test_a_foreign_directory_is_refused_and_left_untouched_unless_overwrite(tmp_path):
    out = tmp_path / "mine"
    write(out, {"thesis.tex": "years of work"})
    with pytest.raises(OutputRefused, match=r"not written by deid-ds .*--overwrite") as refused:
        produce(out)
    assert refused.value.exit_code == 2
    assert contents(out) == {"thesis.tex": b"years of work"} and leftovers(tmp_path) == []
    produce(out, overwrite=True)
    assert sorted(contents(out)) == [MARKER, "result.txt"]


def test_the_output_of_another_command_is_refused_unless_overwrite(tmp_path):
    produce(tmp_path / "out", command="weak-label", text="hours of labelling")
    with pytest.raises(OutputRefused, match="output of deid-ds weak-label, not segment"):
        produce(tmp_path / "out", command="segment")
    assert (tmp_path / "out" / "result.txt").read_text() == "hours of labelling"
    produce(tmp_path / "out", command="segment", overwrite=True)


@pytest.mark.parametrize("overwrite", [False, True])
def test_the_current_directory_its_ancestors_and_home_are_never_replaced(tmp_path, monkeypatch, overwrite):
    work, home = tmp_path / "work", tmp_path / "home"
    write(work, {"notes.txt": "x"})
    write(home, {".bashrc": "x"})
    monkeypatch.chdir(work)
    monkeypatch.setenv("HOME", str(home))
    refused = [
        (".", "the current directory"),
        (str(work), "the current directory"),
        ("..", "holds the current directory"),
        (str(home), "the home directory"),
        ("/", "the root directory"),
    ]
    for out, reason in refused:
        with pytest.raises(OutputRefused, match=f"{reason}.*even with --overwrite"):
            check_output_dir(out, "segment", overwrite=overwrite)
    assert contents(work) == {"notes.txt": b"x"} and contents(home) == {".bashrc": b"x"}


@pytest.mark.parametrize("overwrite", [False, True])
def test_an_input_its_folder_and_their_ancestors_are_never_replaced(tmp_path, overwrite):
    notes = tmp_path / "data" / "2024" / "notes.parquet"
    write(notes.parent, {"notes.parquet": "x"})
    for out in (notes.parent, tmp_path / "data", notes):
        with pytest.raises(OutputRefused, match="input of this run"):
            check_output_dir(out, "segment", inputs=[None, notes], overwrite=overwrite)
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "data")
    with pytest.raises(OutputRefused, match="input of this run"):  # compared resolved: through a link too
        check_output_dir(tmp_path / "data", "segment", inputs=[link / "2024" / "notes.parquet"], overwrite=overwrite)


def test_a_file_or_a_symbolic_link_is_refused(tmp_path):
    (tmp_path / "report.txt").write_text("keep")
    with pytest.raises(OutputRefused, match="is a file, not a directory"):
        produce(tmp_path / "report.txt", overwrite=True)
    produce(tmp_path / "real")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    with pytest.raises(OutputRefused, match="symbolic link"):
        produce(tmp_path / "link", overwrite=True)
    assert (tmp_path / "report.txt").read_text() == "keep" and (tmp_path / "link").is_symlink()
    assert leftovers(tmp_path) == []


def test_temporary_directories_of_killed_runs_on_this_out_are_removed(tmp_path):
    out = tmp_path / "out"
    produce(out)
    stale = tmp_path / temporary_name(out).replace(f"-{os.getpid()}-", "-999999-")
    write(stale, {"sentences.parquet": "half written"})
    other = tmp_path / temporary_name(tmp_path / "out-2")  # another OUT's: not ours to remove
    write(other, {"x": "y"})
    produce(out)
    assert not stale.exists() and other.exists()


def test_a_previous_output_moved_aside_by_a_killed_run_is_put_back(tmp_path):
    out = tmp_path / "out"
    produce(out, text="previous")
    aside = tmp_path / temporary_name(out, "o")
    os.replace(out, aside)  # where a run killed in the middle of the swap leaves it
    with pytest.raises(RuntimeError):
        with output_directory(out, "segment"):
            raise RuntimeError("this run fails too")
    assert (out / "result.txt").read_text() == "previous" and leftovers(tmp_path) == []


def test_a_failed_run_leaves_the_previous_output_and_no_temporary_directory(tmp_path):
    produce(tmp_path / "out", text="previous")
    with pytest.raises(KeyboardInterrupt):
        with output_directory(tmp_path / "out", "segment") as tmp:
            (tmp / "result.txt").write_text("half")
            raise KeyboardInterrupt
    assert (tmp_path / "out" / "result.txt").read_text() == "previous" and leftovers(tmp_path) == []


def test_an_os_error_while_writing_is_one_line_and_keeps_the_previous_output(tmp_path):
    produce(tmp_path / "out", text="previous")
    with pytest.raises(OutputError, match=r"^cannot write .*out: No space left on device; the previous") as error:
        with output_directory(tmp_path / "out", "segment") as tmp:
            (tmp / "result.txt").write_text("half")
            raise OSError(28, "No space left on device")
    assert "\n" not in str(error.value)
    assert (tmp_path / "out" / "result.txt").read_text() == "previous" and leftovers(tmp_path) == []


def test_an_out_below_a_file_is_one_line(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(OutputError, match="cannot write"):
        produce(tmp_path / "file" / "out")


def test_a_second_run_on_a_locked_out_refuses_at_once(tmp_path):
    out = tmp_path / "out"
    with output_lock(out):
        with pytest.raises(OutputRefused, match="another deid-ds run is writing it"):
            produce(out)
    produce(out)  # released: the lock file is gone and the next run proceeds
    assert leftovers(tmp_path) == []


# -- through the commands -------------------------------------------------------------------------------


@pytest.fixture
def notes(write_notes) -> Path:
    rows = [{"id_document": f"d{i}", "id_patient": f"P{i % 3}", "html": HTML} for i in range(6)]
    return write_notes(rows)


def spans_for(notes: Path) -> Path:
    start = HTML.index("Jeanne")
    rows = [{"id_document": f"d{i}", "label": "PATIENT", "html_start": start, "html_end": start + 6} for i in range(6)]
    pd.DataFrame(rows).to_parquet(notes.parent / "spans.parquet")
    return notes.parent / "spans.parquet"


def command_args(command: str, notes: Path, out: Path) -> list[str]:
    extra = {
        "segment": [],
        "weak-label": ["-j", "1", "--batch-size", "2"],
        "deidentify": ["--spans", str(notes.parent / "spans.parquet"), "--key", "k-test-key-not-secret", "-j", "1"],
    }[command]
    return [command, str(notes), "--out", str(out), "--quiet", *extra]


COMMANDS = ["segment", "weak-label", "deidentify"]


@pytest.mark.parametrize("command", COMMANDS)
def test_commands_refuse_a_foreign_directory_with_status_2_unless_overwrite(command, notes, tmp_path):
    spans_for(notes)
    out = tmp_path / "results"
    write(out, {"analysis.R": "mine"})
    result = CliRunner().invoke(main, command_args(command, notes, out))
    assert result.exit_code == 2, result.output
    assert "not written by deid-ds" in result.output and "--overwrite" in result.output
    assert "Traceback" not in result.output
    assert contents(out) == {"analysis.R": b"mine"}
    result = CliRunner().invoke(main, [*command_args(command, notes, out), "--overwrite"])
    assert result.exit_code == 0, result.output
    assert "analysis.R" not in contents(out) and read_marker(out)["command"] == command
    result = CliRunner().invoke(main, command_args(command, notes, out))  # our own output: replaced as before
    assert result.exit_code == 0, result.output
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("command", COMMANDS)
def test_commands_never_replace_the_folder_of_their_input(command, notes, tmp_path):
    spans_for(notes)
    before = contents(notes.parent)
    for args in ([], ["--overwrite"]):
        result = CliRunner().invoke(main, [*command_args(command, notes, notes.parent), *args])
        assert result.exit_code == 2, result.output
        assert "holds an input of this run" in result.output
    assert contents(notes.parent) == before


def test_out_dot_is_the_current_directory_and_refused(notes, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    before = contents(tmp_path)
    result = CliRunner().invoke(main, ["segment", str(notes), "--out", ".", "--overwrite", "-q"])
    assert result.exit_code == 2 and "it is the current directory" in result.output
    assert contents(tmp_path) == before


def _child(code: str, *args: str, **kwargs) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kwargs,
    )


def test_weak_label_refuses_at_once_while_another_process_writes_the_same_out(notes, tmp_path):
    out = tmp_path / "weak"
    holder = _child(
        """
        import sys, time
        from pathlib import Path
        from deid_ds.io.output_dir import output_lock
        with output_lock(Path(sys.argv[1])):
            print("locked", flush=True)
            time.sleep(60)
    """,
        str(out),
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        result = CliRunner().invoke(main, command_args("weak-label", notes, out))
        assert result.exit_code == 2 and "another deid-ds run is writing it" in result.output
        assert not out.exists() and not (tmp_path / "weak.partial").exists()
    finally:
        holder.kill()
        holder.wait()
    result = CliRunner().invoke(main, command_args("weak-label", notes, out))  # the lock died with its holder
    assert result.exit_code == 0, result.output


@pytest.mark.slow
@pytest.mark.parametrize("command", COMMANDS)
def test_a_full_disk_is_one_line_and_keeps_the_previous_output(command, notes, tmp_path):
    """A real write failure: the file-size limit (RLIMIT_FSIZE, SIGXFSZ ignored) makes writes fail with EFBIG."""
    spans_for(notes)
    out = tmp_path / "out"
    assert CliRunner().invoke(main, command_args(command, notes, out)).exit_code == 0
    before = contents(out)
    assert max(len(data) for data in before.values()) > 2000
    run = _child(
        """
        import resource, runpy, signal, sys
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (2000, 2000))
        sys.argv = ["deid-ds", *sys.argv[1:]]
        runpy.run_module("deid_ds", run_name="__main__")
    """,
        *command_args(command, notes, out),
    )
    stdout, stderr = run.communicate(timeout=120)
    assert run.returncode not in (0, None), stdout + stderr
    assert "Traceback" not in stderr
    [line] = [line for line in stderr.splitlines() if line.strip()]
    assert line.startswith(f"Error: cannot write {out}: ") and "File too large" in line
    assert contents(out) == before and leftovers(tmp_path) == []
    assert json.loads((out / MARKER).read_text())["command"] == command


@pytest.mark.parametrize(
    "args",
    [
        ["predict", "{model}", "{notes}"],
        ["train", "{weak}"],
        ["campaign", "{weak}", "--annotators", "a,b"],
        ["embeddings", "fasttext", "{notes}"],
        ["embeddings", "flair-lm", "{notes}", "--device", "cpu"],
    ],
    ids=lambda args: " ".join(a for a in args[:2] if not a.startswith("{")),
)
def test_the_other_directory_commands_refuse_a_foreign_directory_and_the_folder_of_their_input(args, notes, tmp_path):
    """Refused before any work: the check comes before models load or data is read."""
    weak, model = tmp_path / "weak", tmp_path / "model"
    write(weak, {"train.txt": "Dr B-DOCTOR\nMartin I-DOCTOR\n\n"})
    write(model, {"best-model.pt": "not read"})
    args = [a.format(notes=notes, weak=weak, model=model) for a in args]
    foreign = tmp_path / "results"
    write(foreign, {"analysis.R": "mine"})
    result = CliRunner().invoke(main, [*args, "--out", str(foreign), "--quiet"])
    assert result.exit_code == 2 and "not written by deid-ds" in result.output, result.output
    assert contents(foreign) == {"analysis.R": b"mine"}
    own_input = weak if args[0] in ("train", "campaign") else notes.parent
    before = contents(own_input)
    result = CliRunner().invoke(main, [*args, "--out", str(own_input), "--overwrite", "--quiet"])
    assert result.exit_code == 2 and "an input of this run" in result.output, result.output
    assert contents(own_input) == before


def test_after_kill_9_the_next_run_removes_what_the_killed_one_left(tmp_path):
    out = tmp_path / "out"
    produce(out, text="previous")
    killed = _child(
        """
        import sys, time
        from deid_ds.io.output_dir import output_directory
        with output_directory(sys.argv[1], "segment") as tmp:
            (tmp / "result.txt").write_text("half")
            print("writing", flush=True)
            time.sleep(60)
    """,
        str(out),
    )
    assert killed.stdout.readline().strip() == "writing"
    killed.kill()
    killed.wait()
    assert len(leftovers(tmp_path)) == 2  # its temporary directory and its lock file
    produce(out, text="next")
    assert (out / "result.txt").read_text() == "next" and leftovers(tmp_path) == []


def test_weak_label_never_removes_a_foreign_directory_named_like_its_work_directory(notes, tmp_path):
    mine = tmp_path / "weak.partial"
    write(mine, {"notes-to-self.txt": "mine"})
    result = CliRunner().invoke(main, command_args("weak-label", notes, tmp_path / "weak"))
    assert result.exit_code == 2 and "not a deid-ds work directory" in result.output, result.output
    assert contents(mine) == {"notes-to-self.txt": b"mine"} and not (tmp_path / "weak").exists()
