"""Downloads against a real HTTP server on 127.0.0.1: resume, retry, refusal of bad files, reuse.

The server below is a plain ``http.server`` in a thread. It serves byte strings with ETag,
Last-Modified and Range support, records every request's headers, and plays scripted faults (a
status, a connection cut after N bytes, a Range ignored) so that each scenario reads like the
network incident it reproduces.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import shutil
import socket
import ssl
import subprocess
import threading
import time
import zipfile
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from deid_ds.errors import InputError
from deid_ds.kb.download import (
    ANNUAIRE_SANTE_URL,
    DownloadError,
    FetchedSource,
    ban_url,
    check_file,
    fetch,
    final_name,
    normalize_departement,
    retry_delay,
)

FAST = {"progress": False, "backoff": 0.001, "timeout": 5}


# ---------------------------------------------------------------------------------------------------
# A small scripted HTTP server


@dataclass
class Resource:
    body: bytes
    etag: str = '"v1"'
    last_modified: str = "Mon, 01 Jan 2024 00:00:00 GMT"
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Status:
    """Answer this status (with these headers and body) instead of the file."""

    code: int
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""


@dataclass(frozen=True)
class Cut:
    """Answer normally (200 or 206) but close the connection after ``after`` bytes of the body."""

    after: int


@dataclass(frozen=True)
class IgnoreRange:
    """Answer 200 with the whole file even if the request asked for a range."""


class FileServer:
    def __init__(self) -> None:
        self.files: dict[str, Resource] = {}
        self.faults: dict[str, deque] = {}
        self.requests: list[tuple[str, str, dict[str, str]]] = []  # (method, path, headers)
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # keep pytest output clean
                pass

            def do_GET(self) -> None:
                server.requests.append(("GET", self.path, dict(self.headers.items())))
                server.answer(self)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)

    def url(self, path: str) -> str:
        return f"{self.scheme}://127.0.0.1:{self.httpd.server_port}{path}"

    scheme = "http"

    def serve(self, path: str, body: bytes, **kwargs) -> str:
        self.files[path] = Resource(body, **kwargs)
        return self.url(path)

    def script(self, path: str, *faults) -> None:
        """Faults played in order by the next requests to ``path`` (then it serves normally)."""
        self.faults.setdefault(path, deque()).extend(faults)

    def range_requests(self, path: str) -> list[str | None]:
        return [headers.get("Range") for _, p, headers in self.requests if p == path]

    def answer(self, handler: BaseHTTPRequestHandler) -> None:
        fault = self.faults.get(handler.path, deque()).popleft() if self.faults.get(handler.path) else None
        if isinstance(fault, Status):
            self._send(handler, fault.code, dict(fault.headers), fault.body)
            return
        resource = self.files.get(handler.path)
        if resource is None:
            self._send(handler, 404, {"Content-Type": "text/html"}, b"<!DOCTYPE html><title>Not Found</title>")
            return
        validators = {"ETag": resource.etag, "Last-Modified": resource.last_modified, **resource.headers}
        if handler.headers.get("If-None-Match") == resource.etag:
            self._send(handler, 304, validators, b"")
            return
        status, body, headers = 200, resource.body, dict(validators)
        requested = handler.headers.get("Range")
        if_range = handler.headers.get("If-Range")
        if (
            requested
            and not isinstance(fault, IgnoreRange)
            and if_range in (None, resource.etag, resource.last_modified)
        ):
            start = int(requested.removeprefix("bytes=").rstrip("-"))
            status, body = 206, resource.body[start:]
            headers["Content-Range"] = f"bytes {start}-{len(resource.body) - 1}/{len(resource.body)}"
        cut = fault.after if isinstance(fault, Cut) else None
        self._send(handler, status, headers, body, cut=cut)

    @staticmethod
    def _send(handler, status: int, headers: dict[str, str], body: bytes, cut: int | None = None) -> None:
        handler.send_response(status)
        for name, value in headers.items():
            handler.send_header(name, value)
        if status != 304:
            handler.send_header("Content-Length", str(len(body)))
        if cut is not None:
            handler.send_header("Connection", "close")
        handler.end_headers()
        handler.wfile.write(body if cut is None else body[:cut])
        handler.wfile.flush()
        if cut is not None:
            handler.close_connection = True

    def __enter__(self) -> FileServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    with FileServer() as running:
        yield running


def gzip_bytes(text: str) -> bytes:
    return gzip.compress(text.encode("utf-8"), mtime=0)


def zip_bytes(members: dict[str, str]) -> bytes:
    """A zip archive with fixed timestamps: same bytes in every process (pytest-xdist compares test ids)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in members.items():
            archive.writestr(
                zipfile.ZipInfo(name, date_time=(2024, 1, 15, 8, 30, 0)), text, compress_type=zipfile.ZIP_DEFLATED
            )
    return buffer.getvalue()


# A BAN-like file large enough to be cut mid-way, and not compressible to nothing.
BAN_GZ = gzip_bytes(
    "id;nom_voie;code_postal;nom_commune\n"
    + "".join(f"35238_{i:05d};Rue {hashlib.md5(str(i).encode()).hexdigest()};35000;Rennes\n" for i in range(3000))
)


def files_in(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir()) if directory.exists() else []


# ---------------------------------------------------------------------------------------------------
# Downloads


def test_a_download_is_saved_under_the_url_name_with_its_size_and_sha256(server, tmp_path):
    url = server.serve("/ban/adresses-35.csv.gz", BAN_GZ)

    got = fetch(url, tmp_path, expect="gzip", **FAST)

    assert got.path == tmp_path / "adresses-35.csv.gz"
    assert got.path.read_bytes() == BAN_GZ
    assert (got.size, got.sha256) == (len(BAN_GZ), hashlib.sha256(BAN_GZ).hexdigest())
    assert (got.kind, got.downloaded, got.from_cache, got.http_status, got.etag) == ("gzip", True, False, 200, '"v1"')
    assert got.fetched_at.endswith("Z") and got.source == url
    # nothing temporary is left, only the file and its description
    assert files_in(tmp_path) == ["adresses-35.csv.gz", "adresses-35.csv.gz.download.json"]
    assert server.range_requests("/ban/adresses-35.csv.gz") == [None]


def test_an_interrupted_download_is_resumed_with_a_range_request_on_the_next_call(server, tmp_path):
    url = server.serve("/adresses-35.csv.gz", BAN_GZ)
    server.script("/adresses-35.csv.gz", Cut(after=10_000))

    with pytest.raises(DownloadError, match=rf"connection lost after 10000 of {len(BAN_GZ)} bytes.*next call resumes"):
        fetch(url, tmp_path, expect="gzip", retries=0, **FAST)
    assert not (tmp_path / "adresses-35.csv.gz").exists()
    assert (tmp_path / "adresses-35.csv.gz.part").stat().st_size == 10_000

    got = fetch(url, tmp_path, expect="gzip", **FAST)

    _, _, resume_headers = server.requests[-1]
    assert resume_headers["Range"] == "bytes=10000-"
    assert resume_headers["If-Range"] == '"v1"'
    assert (got.http_status, got.resumed_from) == (206, 10_000)
    assert got.path.read_bytes() == BAN_GZ
    assert files_in(tmp_path) == ["adresses-35.csv.gz", "adresses-35.csv.gz.download.json"]


def test_a_dropped_connection_is_resumed_within_the_same_call_when_retries_allow(server, tmp_path):
    url = server.serve("/adresses-29.csv.gz", BAN_GZ)
    server.script("/adresses-29.csv.gz", Cut(after=5_000), Cut(after=7_000))

    got = fetch(url, tmp_path, expect="gzip", retries=1, **FAST)

    # each cut delivered bytes, so each resume starts a fresh retry count
    assert server.range_requests("/adresses-29.csv.gz") == [None, "bytes=5000-", "bytes=12000-"]
    assert got.path.read_bytes() == BAN_GZ


def test_a_server_that_ignores_range_makes_the_download_restart_from_zero(server, tmp_path):
    url = server.serve("/adresses-22.csv.gz", BAN_GZ)
    server.script("/adresses-22.csv.gz", Cut(after=10_000), IgnoreRange())

    got = fetch(url, tmp_path, expect="gzip", retries=1, **FAST)

    assert server.range_requests("/adresses-22.csv.gz") == [None, "bytes=10000-"]
    assert (got.http_status, got.resumed_from) == (200, 0)
    assert got.path.read_bytes() == BAN_GZ  # not BAN_GZ[:10000] + BAN_GZ


def test_a_changed_remote_file_is_not_glued_to_an_old_partial(server, tmp_path):
    url = server.serve("/adresses-56.csv.gz", BAN_GZ, etag='"monday"')
    server.script("/adresses-56.csv.gz", Cut(after=10_000))
    with pytest.raises(DownloadError):
        fetch(url, tmp_path, expect="gzip", retries=0, **FAST)

    newer = gzip_bytes("id;nom_voie;code_postal;nom_commune\n56260_00001;Rue du Port;56100;Lorient\n")
    server.serve("/adresses-56.csv.gz", newer, etag='"tuesday"', last_modified="Tue, 02 Jan 2024 00:00:00 GMT")
    got = fetch(url, tmp_path, expect="gzip", **FAST)

    _, _, headers = server.requests[-1]
    assert (headers["Range"], headers["If-Range"]) == ("bytes=10000-", '"monday"')
    assert got.path.read_bytes() == newer
    assert (got.etag, got.resumed_from) == ('"tuesday"', 0)


def test_a_busy_server_is_retried_with_back_off_until_it_answers(server, tmp_path):
    url = server.serve("/adresses-2A.csv.gz", BAN_GZ)
    server.script("/adresses-2A.csv.gz", Status(503), Status(429, (("Retry-After", "0"),)), Status(502))

    got = fetch(url, tmp_path, expect="gzip", retries=3, **FAST)

    assert len(server.range_requests("/adresses-2A.csv.gz")) == 4
    assert got.path.read_bytes() == BAN_GZ


def test_retry_after_is_honoured_but_capped(server, tmp_path):
    url = server.serve("/adresses-2B.csv.gz", BAN_GZ)
    server.script("/adresses-2B.csv.gz", Status(429, (("Retry-After", "3600"),)))

    started = time.monotonic()
    fetch(url, tmp_path, expect="gzip", retries=1, max_wait=0.05, **FAST)

    assert time.monotonic() - started < 2
    assert retry_delay(1, "7", backoff=1, max_wait=60) == 7
    assert retry_delay(3, None, backoff=0.5, max_wait=60) == 2  # 0.5 · 2²
    assert retry_delay(9, None, backoff=1, max_wait=30) == 30
    assert retry_delay(1, "Wed, 21 Oct 2015 07:28:00 GMT", backoff=1, max_wait=60) == 0  # a date in the past
    assert retry_delay(1, "soon", backoff=1, max_wait=60) == 1  # unreadable: the back-off


def test_a_server_that_stays_down_is_reported_with_its_last_status(server, tmp_path):
    url = server.serve("/adresses-35.csv.gz", BAN_GZ)
    server.script("/adresses-35.csv.gz", *[Status(503)] * 3)

    with pytest.raises(DownloadError, match=r"/adresses-35.csv.gz: HTTP 503 .*gave up after 3 attempts"):
        fetch(url, tmp_path, expect="gzip", retries=2, **FAST)
    assert files_in(tmp_path) == []


def test_a_404_is_not_retried_and_leaves_no_file(server, tmp_path):
    url = server.url("/adresses-99.csv.gz")

    with pytest.raises(DownloadError, match=r"adresses-99.csv.gz: HTTP 404 Not Found \(not retried\)"):
        fetch(url, tmp_path, expect="gzip", retries=5, **FAST)
    assert len(server.requests) == 1
    assert files_in(tmp_path) == []


def test_a_truncated_gzip_is_refused_and_never_placed(server, tmp_path):
    # the server itself holds a truncated file: sizes agree, only decompression can tell
    url = server.serve("/adresses-35.csv.gz", BAN_GZ[: len(BAN_GZ) * 2 // 3])

    with pytest.raises(DownloadError, match=r"adresses-35.csv.gz: truncated gzip .*download refused"):
        fetch(url, tmp_path, expect="gzip", **FAST)
    assert files_in(tmp_path) == []


def test_a_gzip_with_a_wrong_crc_is_refused(server, tmp_path):
    damaged = bytearray(BAN_GZ)
    damaged[-8] ^= 0xFF  # first byte of the CRC-32 in the trailer
    url = server.serve("/adresses-35.csv.gz", bytes(damaged))

    with pytest.raises(DownloadError, match=r"corrupt gzip — CRC error"):
        fetch(url, tmp_path, expect="gzip", **FAST)
    assert files_in(tmp_path) == []


def test_an_html_error_page_instead_of_the_zip_is_refused(server, tmp_path):
    page = b"<!DOCTYPE html>\n<html><body>Service temporairement indisponible</body></html>"
    url = server.serve("/extraction/PS_LibreAcces", page, headers={"Content-Type": "text/html"})

    with pytest.raises(DownloadError, match=r"PS_LibreAcces: not a zip archive — it looks like an HTML page"):
        fetch(url, tmp_path, expect="zip", **FAST)
    assert files_in(tmp_path) == []


def test_the_annuaire_zip_gets_a_stable_name_and_its_server_name_is_recorded(server, tmp_path):
    archive = zip_bytes({"PS_LibreAcces_Personne_activite_202401010000.txt": "Type d'identifiant PP|\n"})
    disposition = 'attachment; filename="PS_LibreAcces_202401010000.zip"'
    url = server.serve("/extraction/PS_LibreAcces", archive, headers={"Content-Disposition": disposition})

    got = fetch(url, tmp_path, expect="zip", **FAST)

    assert got.path.name == "PS_LibreAcces.zip" == final_name(ANNUAIRE_SANTE_URL, "zip")
    assert got.remote_filename == "PS_LibreAcces_202401010000.zip"
    assert (got.kind, got.path.read_bytes()) == ("zip", archive)


# ---------------------------------------------------------------------------------------------------
# Reuse and offline use


def test_an_earlier_download_is_reused_without_any_request(server, tmp_path):
    url = server.serve("/adresses-35.csv.gz", BAN_GZ)
    first = fetch(url, tmp_path, expect="gzip", **FAST)

    again = fetch(url, tmp_path, expect="gzip", **FAST)
    offline = fetch(url, tmp_path, expect="gzip", offline=True, **FAST)

    assert len(server.requests) == 1
    for reused in (again, offline):
        assert (reused.from_cache, reused.downloaded, reused.sha256, reused.fetched_at) == (
            True,
            False,
            first.sha256,
            first.fetched_at,
        )


def test_a_damaged_earlier_download_is_downloaded_again(server, tmp_path):
    url = server.serve("/adresses-35.csv.gz", BAN_GZ)
    first = fetch(url, tmp_path, expect="gzip", **FAST)
    damaged = bytearray(BAN_GZ)
    damaged[len(damaged) // 2] ^= 0xFF  # same size, different bytes
    first.path.write_bytes(bytes(damaged))

    got = fetch(url, tmp_path, expect="gzip", **FAST)

    assert got.downloaded and got.path.read_bytes() == BAN_GZ
    assert len(server.requests) == 2


def test_refresh_asks_the_server_and_downloads_only_a_changed_file(server, tmp_path):
    url = server.serve("/adresses-35.csv.gz", BAN_GZ)
    fetch(url, tmp_path, expect="gzip", **FAST)

    unchanged = fetch(url, tmp_path, expect="gzip", refresh=True, **FAST)
    assert (unchanged.from_cache, unchanged.http_status) == (True, 304)
    assert server.requests[-1][2]["If-None-Match"] == '"v1"'

    newer = gzip_bytes("id;nom_voie\n1;Rue Neuve\n")
    server.serve("/adresses-35.csv.gz", newer, etag='"v2"')
    changed = fetch(url, tmp_path, expect="gzip", refresh=True, **FAST)
    assert (changed.downloaded, changed.etag, changed.path.read_bytes()) == (True, '"v2"', newer)


def test_offline_mode_refuses_a_url_never_downloaded(tmp_path, no_network):
    with pytest.raises(DownloadError, match=r"adresses-35.csv.gz: no earlier download .* offline mode forbids"):
        fetch("https://adresse.data.gouv.fr/x/adresses-35.csv.gz", tmp_path, expect="gzip", offline=True, **FAST)


@pytest.fixture
def no_network(monkeypatch):
    """Any attempt to open a network connection fails the test."""

    def refuse(*args, **kwargs):
        raise AssertionError("the network was used")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def test_a_local_file_is_checked_and_hashed_in_place_without_network(tmp_path, no_network):
    path = tmp_path / "adresses-35.csv.gz"
    path.write_bytes(BAN_GZ)
    elsewhere = tmp_path / "downloads"

    for source in (path, str(path), path.as_uri()):
        got = fetch(source, elsewhere, expect="gzip", **FAST)
        assert (got.path, got.sha256, got.kind, got.is_local) == (
            path,
            hashlib.sha256(BAN_GZ).hexdigest(),
            "gzip",
            True,
        )
    assert not elsewhere.exists()  # no copy


def test_a_missing_local_file_is_named_in_the_error(tmp_path):
    with pytest.raises(DownloadError, match=r"PS_LibreAcces_Personne_activite.txt: no such file"):
        fetch(tmp_path / "PS_LibreAcces_Personne_activite.txt", tmp_path, expect="text", **FAST)


# ---------------------------------------------------------------------------------------------------
# check_file on local files


@pytest.mark.parametrize(
    ("content", "expect", "message"),
    [
        (BAN_GZ[:-100], "gzip", r"truncated gzip"),
        (BAN_GZ + b"garbage", "gzip", r"unexpected data after the end of a gzip member"),
        (b"id;nom_voie\n", "gzip", r"not a gzip file \(first bytes 69 64 3b"),
        (zip_bytes({"a.txt": "x"}), "gzip", r"not a gzip file — it is a zip file"),
        (zip_bytes({"a.txt": "x" * 5000})[:-30], "zip", r"not a readable zip archive .* truncated download\?"),
        (b"  <html><head><title>403</title>", "text", r"not a plain text file — it looks like an HTML page"),
        (b"", None, r"empty file \(0 bytes\)"),
    ],
)
def test_check_file_refuses_a_bad_file_with_a_message_naming_it(tmp_path, content, expect, message):
    path = tmp_path / "source.bin"
    path.write_bytes(content)

    with pytest.raises(DownloadError, match=message) as raised:
        check_file(path, expect)
    assert str(path) in str(raised.value)


def test_check_file_finds_a_zip_member_with_a_bad_crc(tmp_path):
    payload = "Nom d'exercice|" * 50
    data = bytearray(zip_bytes({"PS_LibreAcces_Personne_activite.txt": payload}))
    crc_at = data.index(b"PK\x01\x02") + 16  # the CRC-32 recorded in the central directory
    data[crc_at] ^= 0xFF
    path = tmp_path / "PS_LibreAcces.zip"
    path.write_bytes(bytes(data))

    with pytest.raises(
        DownloadError,
        match=r"PS_LibreAcces.zip: (CRC error in zip member 'PS_LibreAcces_Personne_activite.txt'|corrupt zip)",
    ):
        check_file(path, "zip")


def test_check_file_accepts_good_files_and_multi_member_gzip(tmp_path):
    two_members = gzip_bytes("a;b\n") + gzip_bytes("1;2\n") + b"\0" * 16
    cases = {"a.gz": (two_members, "gzip"), "b.zip": (zip_bytes({"x.txt": "y"}), "zip"), "c.txt": (b"Nom|\n", "text")}
    for name, (content, expect) in cases.items():
        (tmp_path / name).write_bytes(content)
        checked = check_file(tmp_path / name, expect)
        assert (checked.kind, checked.size, checked.sha256) == (
            expect,
            len(content),
            hashlib.sha256(content).hexdigest(),
        )
    assert check_file(tmp_path / "a.gz").kind == "gzip"  # no expectation: the magic bytes decide


# ---------------------------------------------------------------------------------------------------
# TLS with a private CA bundle (the Annuaire Santé case)


@pytest.fixture
def tls_server(tmp_path):
    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to make a test certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-days",
            "2",
            "-subj",
            "/CN=IGC-Sante test",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
    )
    with FileServer() as running:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        running.httpd.socket = context.wrap_socket(running.httpd.socket, server_side=True)
        running.scheme = "https"
        yield running, cert


def test_a_server_with_a_private_certificate_chain_needs_the_ca_bundle(tls_server, tmp_path, monkeypatch):
    server, cert = tls_server
    monkeypatch.delenv("REQUESTS_CA_BUNDLE", raising=False)
    monkeypatch.delenv("CURL_CA_BUNDLE", raising=False)
    url = server.serve("/extraction/PS_LibreAcces", zip_bytes({"PS_LibreAcces_Personne_activite.txt": "Nom|\n"}))

    with pytest.raises(DownloadError, match=r"TLS certificate verification failed.*IGC-Santé.*ca_bundle"):
        fetch(url, tmp_path / "a", expect="zip", **FAST)
    got = fetch(url, tmp_path / "b", expect="zip", ca_bundle=cert, **FAST)

    assert got.kind == "zip" and got.downloaded
    with pytest.raises(InputError, match=r"CA bundle .*missing.pem: no such file"):
        fetch(url, tmp_path / "c", expect="zip", ca_bundle=tmp_path / "missing.pem", **FAST)


# ---------------------------------------------------------------------------------------------------
# BAN URLs


def test_ban_url_follows_the_official_pattern():
    assert ban_url("35") == "https://adresse.data.gouv.fr/data/ban/adresses/latest/csv/adresses-35.csv.gz"
    assert ban_url("france").endswith("/adresses-france.csv.gz")
    assert [normalize_departement(c) for c in (1, "5", "2a", " 2B ", "971", "976", "95", "France")] == [
        "01",
        "05",
        "2A",
        "2B",
        "971",
        "976",
        "95",
        "france",
    ]


@pytest.mark.parametrize("code", ["20", "96", "00", "970", "977", "2C", "xx", "", "35,29"])
def test_ban_url_refuses_what_is_not_a_departement(code):
    expected = r"Corsica is 2A .* and 2B" if code == "20" else r"is not a département code \(expected 01..19, 2A, 2B"
    with pytest.raises(InputError, match=expected):
        ban_url(code)


def test_fetched_source_is_a_plain_frozen_record():
    record = FetchedSource(
        source="x", path=Path("x"), size=1, sha256="0" * 64, fetched_at="2024-01-01T00:00:00Z", kind="text"
    )
    with pytest.raises(AttributeError):
        record.size = 2  # type: ignore[misc]
    assert record.to_dict()["path"] == "x"
