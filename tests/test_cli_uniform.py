"""The command line behaves the same everywhere: flags, required outputs, file options, output levels, warnings.

The first tests walk every command (groups included) through click's own description of them, so a
command added later is held to the same rules without a line here.
"""

from __future__ import annotations

import shutil

import click
import pandas as pd
import pytest
from click.testing import CliRunner

from deid_ds.cli import main
from deid_ds.cli_common import ManyValuesOption, expand_patterns
from tests.conftest import REPO

SOURCES = REPO / "kb" / "sources"

#: The flags every command spells the same way, where it has the long option.
UNIFORM = {"--out": "-o", "--quiet": "-q", "--verbose": "-v", "--workers": "-j", "--column": "-c", "--seed": "-s"}

#: Commands that print without writing a directory: their files are written only where asked (--json, --figure).
PRINT_ONLY = {"kb-info", "agreement", "evaluate", "label-studio push"}

#: A command whose whole output is the information asked for (no summary to shorten, nothing to silence).
NO_LEVELS = {"kb-info"}


def _commands(group: click.Group = main, prefix: tuple[str, ...] = ()):
    context = click.Context(group)
    for name in group.list_commands(context):
        command = group.get_command(context, name)
        if isinstance(command, click.Group):
            yield from _commands(command, (*prefix, name))
        else:
            yield " ".join((*prefix, name)), command


COMMANDS = dict(_commands())


def _options(command: click.Command) -> list[click.Option]:
    return [p for p in command.params if isinstance(p, click.Option)]


def test_the_walk_sees_every_command_including_groups():
    assert {"build-kb", "weak-label", "deidentify", "embeddings fasttext", "embeddings flair-lm"} <= set(COMMANDS)


def test_each_short_flag_has_one_meaning_across_commands():
    meanings: dict[str, set[str]] = {}
    for name, command in COMMANDS.items():
        for option in _options(command):
            shorts = [o for o in option.opts if len(o) == 2]
            longs = [o for o in option.opts if o.startswith("--")]
            for short in shorts:
                meanings.setdefault(short, set()).update(f"{long} ({name})" for long in longs)
    for short, longs in meanings.items():
        assert len({entry.split(" ")[0] for entry in longs}) == 1, f"{short} means {sorted(longs)}"


def test_common_options_have_the_same_short_flag_everywhere():
    for name, command in COMMANDS.items():
        for option in _options(command):
            for long, short in UNIFORM.items():
                if long in option.opts:
                    assert short in option.opts, f"{name}: {long} without {short}"


def test_every_command_that_prints_has_quiet_and_verbose():
    for name, command in COMMANDS.items():
        if name in NO_LEVELS:
            continue
        flags = {o for option in _options(command) for o in option.opts}
        assert {"-q", "-v"} <= flags, f"{name}: missing -q or -v"


def test_every_command_that_writes_requires_out():
    for name, command in COMMANDS.items():
        out = next((o for o in _options(command) if "--out" in o.opts), None)
        if name in PRINT_ONLY:
            assert out is None, f"{name}: prints only, but has --out"
        else:
            assert out is not None and out.required, f"{name}: --out missing or not required"


def test_options_that_take_several_values_are_never_beside_positional_arguments():
    """``--ban a b NOTES`` would read NOTES as a file of --ban: such options live on commands without arguments."""
    for name, command in COMMANDS.items():
        if any(isinstance(p, ManyValuesOption) for p in command.params):
            assert not [p for p in command.params if isinstance(p, click.Argument)], name


def test_build_kb_without_out_is_refused_and_never_writes_into_the_sources(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["build-kb", "--sources", str(SOURCES)])
    assert result.exit_code == 2 and "--out" in result.output
    assert list(tmp_path.iterdir()) == []


@pytest.fixture(scope="module")
def small_sources(tmp_path_factory):
    """A folder of official names with tiny contents: a BAN table and the head of the Annuaire Santé one."""
    folder = tmp_path_factory.mktemp("sources")
    shutil.copy(REPO / "tests" / "kb" / "fixtures" / "adresses-all-france.csv", folder / "adresses-75.csv")
    directory = next(SOURCES.glob("PS_LibreAcces_Personne_activite_*.txt"))
    head = directory.read_text(encoding="utf-8").splitlines(keepends=True)[:30]
    (folder / directory.name).write_text("".join(head), encoding="utf-8")
    (folder / "notes.txt").write_text("not a source\n", encoding="utf-8")
    return folder


def _build(*args: str) -> click.testing.Result:
    return CliRunner().invoke(main, ["build-kb", "--no-matcher", *args])


def test_build_kb_sources_finds_the_official_names_and_says_what_it_found(tmp_path, small_sources):
    result = _build("--sources", str(small_sources), "--out", str(tmp_path / "kb"))
    assert result.exit_code == 0, result.output
    assert "found 1 BAN file(s) and 1 Annuaire Santé file(s)" in result.output
    manifest = (tmp_path / "kb" / "manifest.json").read_text()
    assert "adresses-75.csv" in manifest and "notes.txt" not in manifest


def test_build_kb_sources_without_official_names_is_one_line(tmp_path):
    (tmp_path / "empty").mkdir()
    result = _build("--sources", str(tmp_path / "empty"), "--out", str(tmp_path / "kb"))
    assert result.exit_code == 1 and "no file with an official name" in result.output
    assert result.output.count("\n") == 1 and "Traceback" not in result.output


def test_a_file_option_takes_several_files_after_one_flag_as_a_shell_glob_gives_them(tmp_path, small_sources):
    ban = tmp_path / "ban"
    ban.mkdir()
    for name in ("adresses-75.csv", "adresses-92.csv"):
        shutil.copy(small_sources / "adresses-75.csv", ban / name)
    spaced = _build("--ban", str(ban / "adresses-75.csv"), str(ban / "adresses-92.csv"), "--out", str(tmp_path / "a"))
    quoted = _build("--ban", str(ban / "adresses-*.csv"), "--out", str(tmp_path / "b"))
    repeated = _build(
        "--ban", str(ban / "adresses-75.csv"), "--ban", str(ban / "adresses-92.csv"), "-o", str(tmp_path / "c")
    )
    for result in (spaced, quoted, repeated):
        assert result.exit_code == 0, result.output
    read = [pd.read_json(tmp_path / kb / "manifest.json", typ="series")["sources"] for kb in "abc"]
    assert [[s["path"].rsplit("/", 1)[-1] for s in sources] for sources in read] == [
        ["adresses-75.csv", "adresses-92.csv"]
    ] * 3


def test_a_pattern_that_matches_nothing_is_one_line_naming_the_pattern(tmp_path):
    result = _build("--ban", str(tmp_path / "adresses-*.csv.gz"), "--out", str(tmp_path / "kb"))
    assert result.exit_code == 1 and result.output.count("\n") == 1
    assert "--ban: no file matches the pattern" in result.output and "adresses-*.csv.gz" in result.output
    assert not (tmp_path / "kb").exists()


def test_output_levels_short_by_default_one_line_quiet_full_verbose(tmp_path, small_sources):
    outputs = {}
    for level in ("default", "-q", "-v"):
        args = [] if level == "default" else [level]
        result = _build("--sources", str(small_sources), "--out", str(tmp_path / level), *args)
        assert result.exit_code == 0, result.output
        outputs[level] = result.output.splitlines()
    assert len(outputs["-q"]) == 1 and outputs["-q"][0].startswith(f"written to {tmp_path / '-q'}")
    assert 2 <= len(outputs["default"]) <= 12 and "-v for the tables" in outputs["default"][-2]
    assert len(outputs["-v"]) > len(outputs["default"])
    assert not any("it/s" in line or "%|" in line for level in outputs.values() for line in level)


def test_weak_label_warns_of_an_empty_split_and_of_notes_without_patient_even_quiet(tmp_path, write_notes):
    notes = write_notes([{"id_document": "d1", "html": "<p>Vu le 12/08/2021 par le Dr Martin.</p>"}])
    result = CliRunner().invoke(main, ["weak-label", str(notes), "-o", str(tmp_path / "weak"), "-q", "-j", "1"])
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.output.splitlines() if line.startswith("warning: ")]
    assert any("split got no document" in line for line in warnings), result.output
    assert any("1 document(s) without id_patient" in line for line in warnings), result.output
    assert [line for line in result.output.splitlines() if not line.startswith("warning: ")] == [
        f"written to {tmp_path / 'weak'}"
    ]


def test_deidentify_warns_of_notes_not_checked_for_leaks_and_only_those(tmp_path, write_notes):
    notes = write_notes([{"id_document": "d1", "id_patient": "p1", "html": "<p>Dr Martin</p>"}])
    spans = tmp_path / "spans.parquet"
    pd.DataFrame({"id_document": ["d1"], "label": ["NAME"], "html_start": [6], "html_end": [12]}).to_parquet(spans)
    args = ["deidentify", str(notes), "--spans", str(spans), "--mode", "mask", "-o", str(tmp_path / "out"), "-q"]
    result = CliRunner().invoke(main, [*args, "-j", "1"])
    assert result.exit_code == 0, result.output
    assert "warning: 1 document(s) not checked for residual leaks" in result.output
    assert "without id_patient" not in result.output and "Martin" not in result.output


def test_deidentify_warns_of_notes_without_patient(tmp_path, write_notes):
    notes = write_notes([{"id_document": "d1", "html": "<p>Dr Martin</p>"}])
    spans = tmp_path / "spans.parquet"
    pd.DataFrame({"id_document": ["d1"], "label": ["NAME"], "html_start": [6], "html_end": [12]}).to_parquet(spans)
    args = ["deidentify", str(notes), "--spans", str(spans), "--mode", "mask", "-o", str(tmp_path / "out"), "-q"]
    result = CliRunner().invoke(main, [*args, "-j", "1"])
    assert result.exit_code == 0, result.output
    assert "warning: 1 document(s) without id_patient" in result.output
    assert "Martin" not in result.output


def test_failed_notes_are_a_warning_even_quiet_and_stdout_stays_one_line(tmp_path, write_notes):
    notes = write_notes([{"id_document": "d1", "html": "<p>Vu.</p>"}, {"id_document": "d2", "html": None}])
    result = CliRunner().invoke(main, ["segment", str(notes), "-o", str(tmp_path / "seg"), "-q"])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [f"written to {tmp_path / 'seg'}"]
    assert result.stderr.splitlines() == [
        f"warning: 1 document(s) failed (html is null: 1), listed in {tmp_path / 'seg'}/documents.parquet"
    ]


def test_patterns_expand_sorted_and_urls_are_left_alone(tmp_path):
    for name in ("b.csv", "a.csv", "c.txt"):
        (tmp_path / name).write_text("x")
    url = "https://example.org/extraction?format=zip"
    assert expand_patterns([str(tmp_path / "*.csv"), url, "plain.csv"], "--ban") == (
        str(tmp_path / "a.csv"),
        str(tmp_path / "b.csv"),
        url,
        "plain.csv",
    )


def test_build_kb_refuses_to_write_among_its_sources(small_sources):
    result = _build("--sources", str(small_sources), "--out", str(small_sources))
    assert result.exit_code == 2 and "not among them" in result.output
    assert not (small_sources / "manifest.json").exists()


def test_evaluate_takes_its_systems_and_their_names_after_one_flag_each(tmp_path):
    for name in ("weak", "model"):
        (tmp_path / name).mkdir()
    args = ["--gold", "g.parquet", "--pred", str(tmp_path / "weak"), str(tmp_path / "model"), "--name", "rules"]
    context = COMMANDS["evaluate"].make_context("evaluate", [*args, "model", "-q"])
    assert context.params["predictions"] == (str(tmp_path / "weak"), str(tmp_path / "model"))
    assert context.params["names"] == ("rules", "model") and context.params["quiet"]


def test_answer_files_take_a_quoted_pattern_and_a_missing_file_is_one_line(tmp_path):
    for name in ("ann2.jsonl", "ann1.jsonl"):
        (tmp_path / name).write_text("{}\n")
    context = COMMANDS["agreement"].make_context("agreement", [str(tmp_path / "ann*.jsonl")])
    assert context.params["answers"] == (str(tmp_path / "ann1.jsonl"), str(tmp_path / "ann2.jsonl"))
    missing = CliRunner().invoke(main, ["gold", str(tmp_path / "nope.jsonl"), "-o", str(tmp_path / "g.parquet")])
    assert missing.exit_code == 1 and missing.output == f"Error: ANSWERS: {tmp_path / 'nope.jsonl'} is not a file\n"
