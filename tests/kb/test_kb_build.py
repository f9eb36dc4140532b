"""build-kb end to end: gazetteers, manifest, matcher cache, kb-info, downloads over real HTTP."""

from __future__ import annotations

import functools
import http.server
import json
import shutil
import threading
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from deid_ds.cli import main
from deid_ds.errors import InputError
from deid_ds.kb.build import build_kb, read_table, verify_tables
from deid_ds.kb.matcher import Category, GazetteerMatcher, ensure_matcher_cache, load_matcher
from tests.conftest import REPO

SOURCES = REPO / "kb" / "sources"
BAN_FILES = sorted(str(p) for p in SOURCES.glob("adresses-*.csv.gz"))
DIRECTORY = str(next(SOURCES.glob("PS_LibreAcces_Personne_activite_*.txt")))


@pytest.fixture(scope="module")
def sample_kb(tmp_path_factory):
    out = tmp_path_factory.mktemp("kb")
    build_kb(out, ban=BAN_FILES, health_directory=[DIRECTORY], progress=False)
    return out


def test_the_sample_builds_every_table_and_a_manifest_that_accounts_for_each_source(sample_kb):
    manifest = verify_tables(sample_kb)
    assert [s["base"] for s in manifest["sources"]] == ["ban"] * len(BAN_FILES) + ["annuaire"]
    for source in manifest["sources"]:
        assert source["rows_read"] == source["rows_kept"] + sum(
            n for reason, n in source["rejected"].items() if "kept" not in reason
        )
        assert len(source["sha256"]) == 64 and source["size"] > 0
    assert set(manifest["tables"]) == {
        "streets",
        "places",
        "postcodes",
        "professionals",
        "names",
        "contacts",
        "communes",
    }
    for name, info in manifest["tables"].items():
        assert pq.read_metadata(sample_kb / f"{name}.parquet").num_rows == info["rows"] > 0


def test_names_hold_compound_parts_full_names_and_ambiguity(sample_kb):
    names = read_table(sample_kb, "names").to_pylist()
    kinds = {(n["kind"], n["part"]) for n in names}
    assert {("lastname", False), ("firstname", False), ("fullname", False)} <= kinds
    assert any(n["part"] for n in names)
    professionals = read_table(sample_kb, "professionals")
    assert professionals.num_rows == len(set(professionals["id"].to_pylist()))  # one row per person
    assert any(n["ambiguous"] == "common_word" for n in names)


def test_postcodes_relate_zip_and_city(sample_kb):
    postcodes = read_table(sample_kb, "postcodes").to_pylist()
    assert all(len(p["code_postal"]) == 5 and p["code_postal"].isdigit() for p in postcodes)
    assert any(p["commune_key"] == "brest" and p["code_postal"].startswith("292") for p in postcodes)


def test_the_matcher_finds_entries_case_accent_and_spacing_insensitively_at_token_boundaries():
    matcher = GazetteerMatcher.build(
        [
            ("le gall", Category("names", "lastname")),
            ("brest", Category("places", "commune")),
            ("quimperle", Category("places", "commune")),
            ("rue de siam", Category("streets", "voie")),
            ("rose", Category("names", "lastname", ambiguous="common_word")),
        ]
    )
    text = "Mme LE  GALL, 3 Rue de\u00a0Siam à QUIMPERLÉ, brestoise de Brest; une rose."
    found = [(text[m.start : m.end], m.categories[0].table, m.ambiguous) for m in matcher.find(text)]
    assert found == [
        ("LE  GALL", "names", False),
        ("Rue de\u00a0Siam", "streets", False),
        ("QUIMPERLÉ", "places", False),
        ("Brest", "places", False),
        ("rose", "names", True),
    ]


def test_longest_match_wins_and_find_all_keeps_the_overlaps():
    matcher = GazetteerMatcher.build(
        [("jean", Category("names", "firstname")), ("jean pierre", Category("names", "firstname"))]
    )
    assert [m.key for m in matcher.find("Jean Pierre")] == ["jean pierre"]
    assert sorted(m.key for m in matcher.find_all("Jean Pierre")) == ["jean", "jean pierre"]


def test_the_compiled_matcher_is_cached_and_rebuilt_only_when_the_gazetteers_change(tmp_path):
    out = tmp_path / "kb"
    build_kb(out, ban=BAN_FILES[:1], progress=False)
    first = load_matcher(out)
    stamp = (out / "matcher.npz").stat().st_mtime_ns
    again = load_matcher(out)
    assert len(again) == len(first) and (out / "matcher.npz").stat().st_mtime_ns == stamp
    build_kb(out, ban=BAN_FILES[:1], health_directory=[DIRECTORY], progress=False)
    rebuilt = load_matcher(out)
    assert len(rebuilt) > len(first)


def test_ensure_matcher_cache_compiles_only_a_missing_or_stale_cache(tmp_path):
    # What weak-label's parent calls before its workers start: they then all load the same cache.
    out = tmp_path / "kb"
    build_kb(out, ban=BAN_FILES[:1], progress=False)
    for name in ("matcher.npz", "matcher.json"):
        (out / name).unlink(missing_ok=True)
    ensure_matcher_cache(out)
    stamp = (out / "matcher.npz").stat().st_mtime_ns
    ensure_matcher_cache(out)
    assert (out / "matcher.npz").stat().st_mtime_ns == stamp
    build_kb(out, ban=BAN_FILES[:1], health_directory=[DIRECTORY], progress=False)
    ensure_matcher_cache(out)
    assert json.loads((out / "matcher.json").read_text())["keys"] == len(load_matcher(out)) > 0
    assert (out / "matcher.npz").stat().st_mtime_ns != stamp


def test_a_table_that_does_not_match_the_manifest_is_refused(tmp_path):
    out = tmp_path / "kb"
    build_kb(out, ban=BAN_FILES[:1], progress=False)
    (out / "streets.parquet").write_bytes(b"PAR1 half-written")
    with pytest.raises(InputError, match=r"does not match manifest\.json"):
        verify_tables(out)


def test_a_refused_source_leaves_the_previous_knowledge_base_untouched(tmp_path):
    out = tmp_path / "kb"
    build_kb(out, ban=BAN_FILES[:1], progress=False)
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    bad = tmp_path / "adresses-99.csv.gz"
    bad.write_text("<html><body>404</body></html>")
    with pytest.raises(InputError):
        build_kb(out, ban=[BAN_FILES[0], str(bad)], progress=False)
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before
    assert not [p for p in out.iterdir() if p.name.startswith(".deid-ds-tmp-")]


def test_build_kb_and_kb_info_through_the_cli(tmp_path):
    out = tmp_path / "kb"
    runner = CliRunner()
    args = ["build-kb", "--out", str(out), "--verbose", "--health-directory", DIRECTORY]
    for path in BAN_FILES:
        args += ["--ban", path]
    result = runner.invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "professionals" in result.output and (out / "matcher.npz").is_file()
    info = runner.invoke(main, ["kb-info", str(out)])
    assert info.exit_code == 0 and "adresses-35.csv.gz" in info.output
    nothing = runner.invoke(main, ["build-kb", "--out", str(tmp_path / "empty")])
    assert nothing.exit_code == 1 and "nothing to build" in nothing.output
    missing = runner.invoke(main, ["kb-info", str(tmp_path / "nope")])
    assert missing.exit_code == 1 and "not a built knowledge base" in missing.output


@pytest.fixture
def file_server(tmp_path):
    """A real HTTP server on 127.0.0.1 serving a directory."""
    root = tmp_path / "www"
    root.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield root, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_sources_are_downloaded_over_http_then_reused_offline(tmp_path, file_server):
    root, url = file_server
    shutil.copy(BAN_FILES[0], root / "adresses-22.csv.gz")
    shutil.copy(DIRECTORY, root / "PS_LibreAcces_Personne_activite_202401150830.txt")
    out = tmp_path / "kb"
    build_kb(
        out,
        ban=[f"{url}/adresses-22.csv.gz"],
        health_directory=[f"{url}/PS_LibreAcces_Personne_activite_202401150830.txt"],
        progress=False,
    )
    manifest = json.loads((out / "manifest.json").read_text())
    assert [s["downloaded"] for s in manifest["sources"]] == [True, True]
    assert (out / "downloads" / "adresses-22.csv.gz").read_bytes() == Path(BAN_FILES[0]).read_bytes()
    build_kb(
        out,
        ban=[f"{url}/adresses-22.csv.gz"],
        health_directory=[f"{url}/PS_LibreAcces_Personne_activite_202401150830.txt"],
        offline=True,
        progress=False,
    )
    manifest = json.loads((out / "manifest.json").read_text())
    assert [s["from_cache"] for s in manifest["sources"]] == [True, True]


def test_a_build_removes_what_a_killed_build_left_and_refuses_while_another_runs(tmp_path):
    from deid_ds.io.output_dir import OutputRefused, output_lock

    out = tmp_path / "kb"
    (out / ".deid-ds-tmp-abcd1234").mkdir(parents=True)  # the table directory of a build killed with -9
    (out / ".deid-ds-tmp-abcd1234" / "streets.parquet").write_text("half")
    with output_lock(out):
        with pytest.raises(OutputRefused, match="another deid-ds run"):
            build_kb(out, ban=BAN_FILES[:1], progress=False)
    build_kb(out, ban=BAN_FILES[:1], progress=False)
    assert not [p for p in out.iterdir() if p.name.startswith(".deid-ds-tmp-")]
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".deid-ds-lock")]


def _header_only(source: str, target: Path) -> Path:
    """``target``: the header line of ``source`` (plain or gzip) and nothing else, compressed alike."""
    import gzip

    opener = gzip.open if source.endswith(".gz") else open
    with opener(source, "rt", encoding="utf-8") as handle:
        header = handle.readline()
    with (gzip.open if target.name.endswith(".gz") else open)(target, "wt", encoding="utf-8") as handle:
        handle.write(header)
    return target


@pytest.mark.parametrize("kind", ["--ban", "--health-directory"])
def test_a_source_with_a_header_and_no_row_is_refused_by_name_and_nothing_is_built(tmp_path, kind):
    source = BAN_FILES[0] if kind == "--ban" else DIRECTORY
    empty = _header_only(source, tmp_path / Path(source).name)
    out = tmp_path / "kb"
    other = ["--health-directory", DIRECTORY] if kind == "--ban" else ["--ban", BAN_FILES[0]]
    result = CliRunner().invoke(main, ["build-kb", "--out", str(out), "--quiet", kind, str(empty), *other])
    assert result.exit_code == 1, result.output
    assert f"{empty}: a header and no data rows" in result.output and "Traceback" not in result.output
    assert not (out / "manifest.json").exists()


def test_a_source_whose_every_line_is_malformed_is_refused(tmp_path):
    import gzip

    with gzip.open(BAN_FILES[0], "rt", encoding="utf-8") as handle:
        header = handle.readline()
    bad = tmp_path / "adresses-99.csv.gz"
    with gzip.open(bad, "wt", encoding="utf-8") as handle:
        handle.write(header + "only;four;fields;here\n")
    with pytest.raises(InputError, match=r"adresses-99.csv.gz: no data row could be read \(1 line\(s\) with the wrong"):
        build_kb(tmp_path / "kb", ban=[str(bad)], progress=False)
