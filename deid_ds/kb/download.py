"""Fetching the national knowledge-base files: streamed, resumable, retried, verified, then moved into place.

Why this much care: the whole-country BAN file is about 925 MB and the Annuaire Santé extraction about
800 MB; a connection that drops at 90 % should not cost the first 90 % again, a busy server (503, 429)
should be waited for rather than reported, and a truncated gzip or an HTML error page saved under a
``.zip`` name must be refused *before* any gazetteer is built from it. Downloads therefore go:

1. to ``<name>.part`` in ``dest_dir``, streamed with a progress bar on stderr; the server's validators
   (ETag, Last-Modified) and the expected total size are kept next to it in ``<name>.part.json``;
2. on a later attempt (the same call after a retry, or the next call after a crash) the ``.part`` is
   resumed with ``Range: bytes=N-`` and ``If-Range: <validator>``: a server that answers 206 gets its
   bytes appended, one that answers 200 (range ignored, or the remote file changed) restarts from zero,
   so a changed file is never glued to an old partial;
3. checked: size against Content-Length / Content-Range, then content by expected type (gzip is
   decompressed to its end to catch truncation and CRC errors, zip members are CRC-tested, HTML pages are
   refused where data was expected);
4. described in ``<name>.download.json`` (URL, size, sha256, validators, date) and moved onto ``<name>``
   with ``os.replace``. A failed or refused download never leaves a file under the final name.

Reuse (``refresh=False``, the default): an existing file under the final name whose sha256 still
matches its ``.download.json`` is returned without touching the network. The national files change
weekly, but a knowledge-base build should be reproducible and must work offline once the files are
there; ``refresh=True`` asks the server with a conditional GET (If-None-Match / If-Modified-Since) and
downloads only if the file changed. Local paths and ``file://`` URLs are first-class: never copied,
only checked and hashed, and never a network access.

Not handled: two processes downloading the same file into the same directory at the same moment.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import hashlib
import json
import os
import re
import sys
import time
import zipfile
import zlib
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import unquote, urlparse
from urllib.request import url2pathname

from tqdm import tqdm

from deid_ds.errors import InputError
from deid_ds.io.files import atomic_write_text

if TYPE_CHECKING:
    import requests

Expect = Literal["gzip", "zip", "text"]

BAN_URL_TEMPLATE = "https://adresse.data.gouv.fr/data/ban/adresses/latest/csv/adresses-{dep}.csv.gz"
# The Annuaire Santé server presents an IGC-Santé certificate chain, absent from the default trust
# stores (certifi, system): fetching it needs ``ca_bundle=`` pointing at the IGC-Santé CA certificates.
ANNUAIRE_SANTE_URL = (
    "https://service.annuaire.sante.fr/annuaire-sante-webservices/V300/services/extraction/PS_LibreAcces"
)

GZIP_MAGIC = b"\x1f\x8b"
ZIP_MAGIC = b"PK\x03\x04"
CHUNK_SIZE = 1 << 20  # bytes read from the socket / the file at a time
_MAX_INFLATE = 1 << 22  # cap on the bytes one zlib call may produce: constant memory on any input
#: A compressed source that inflates more than this many times its size is refused (a "zip bomb"): real BAN
#: and Annuaire Santé files inflate 4 to 10 times; a run of zeros, a thousand times.
MAX_INFLATE_RATIO = 100
_INFLATE_FLOOR = 1 << 26  # below 64 MiB inflated, no ratio is refused (a small file may compress very well)
_EXPECTED = ("gzip", "zip", "text")

DEPARTEMENTS: tuple[str, ...] = (
    *(f"{n:02d}" for n in range(1, 20)),
    "2A",
    "2B",
    *(f"{n:02d}" for n in range(21, 96)),
    *(str(n) for n in range(971, 977)),
)
_DEPARTEMENT_SET = frozenset(DEPARTEMENTS)


class DownloadError(InputError):
    """A source could not be fetched, or what was fetched failed its checks (the message names the URL or file)."""


@dataclass(frozen=True)
class CheckedFile:
    """A local file that passed :func:`check_file`: its detected kind (``gzip``, ``zip``, ``text``, ``html``),
    size, sha256."""

    path: Path
    kind: str
    size: int
    sha256: str


@dataclass(frozen=True)
class FetchedSource:
    """What :func:`fetch` returns: enough to describe a knowledge-base source in a manifest.

    ``fetched_at`` (ISO 8601, UTC) is when the bytes were obtained: the download time for a URL (kept
    when the download is reused later), the check time for a local file. ``downloaded`` is true when
    this call transferred bytes; ``from_cache`` when it reused an earlier verified download;
    ``resumed_from`` is the number of bytes taken from an interrupted earlier attempt.
    """

    source: str
    path: Path
    size: int
    sha256: str
    fetched_at: str
    kind: str
    downloaded: bool = False
    from_cache: bool = False
    resumed_from: int = 0
    http_status: int | None = None
    etag: str | None = None
    last_modified: str | None = None
    remote_filename: str | None = None

    @property
    def is_local(self) -> bool:
        """True for a local path or ``file://`` URL given by the user (nothing was downloaded or cached)."""
        return not self.downloaded and not self.from_cache

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready description (for ``manifest.json``)."""
        data = asdict(self)
        data["path"] = str(self.path)
        return data


# ---------------------------------------------------------------------------------------------------
# URLs and names


def normalize_departement(code: str | int) -> str:
    """The BAN file code of a département (``"1"`` → ``"01"``, ``"2a"`` → ``"2A"``, ``"France"`` → ``"france"``).

    Refuses ``20`` (Corsica has been split into 2A and 2B since 1976; BAN has no ``adresses-20``) and
    anything that is not a département, so that a typo fails before any request rather than as a 404.
    """
    text = str(code).strip().upper()
    if text == "FRANCE":
        return "france"
    if text.isdigit() and len(text) == 1:
        text = "0" + text
    if text in _DEPARTEMENT_SET:
        return text
    if text == "20":
        raise InputError("département code '20' does not exist: Corsica is 2A (Corse-du-Sud) and 2B (Haute-Corse)")
    raise InputError(
        f"{str(code)!r} is not a département code (expected 01..19, 2A, 2B, 21..95, 971..976, or 'france' for the "
        "whole country)"
    )


def ban_url(departement: str | int) -> str:
    """The official URL of the latest BAN file of one département, or of the whole country for ``france``."""
    return BAN_URL_TEMPLATE.format(dep=normalize_departement(departement))


def final_name(url: str, expect: Expect | None = None) -> str:
    """The stable local file name of a download: the last segment of the URL path, sanitised.

    The name does not depend on the response (Content-Disposition changes daily for the Annuaire Santé
    extraction), so that an earlier download can be found again without asking the server. The
    expected type's suffix is added when missing (``.../PS_LibreAcces`` → ``PS_LibreAcces.zip``).
    """
    segment = unquote(urlparse(url).path.rstrip("/").rsplit("/", 1)[-1])
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", segment).strip("._") or "download"
    suffix = {"gzip": ".gz", "zip": ".zip"}.get(expect or "")
    if suffix and not name.lower().endswith(suffix):
        name += suffix
    elif expect == "text" and "." not in name:
        name += ".txt"
    return name


def _local_path(source: str | os.PathLike[str]) -> Path | None:
    """The local path behind ``source`` (a path or a ``file://`` URL), or None for an http(s) URL."""
    if isinstance(source, os.PathLike):
        return Path(source)
    if "://" not in source:
        return Path(source)
    parsed = urlparse(source)
    scheme = parsed.scheme.lower()
    if scheme == "file":
        if parsed.netloc not in ("", "localhost"):
            raise DownloadError(f"{source}: file:// URLs on another host are not supported")
        return Path(url2pathname(parsed.path))
    if scheme in ("http", "https"):
        return None
    raise DownloadError(f"{source}: unsupported URL scheme {scheme!r} (expected http, https, file or a local path)")


# ---------------------------------------------------------------------------------------------------
# Integrity checks


def sniff_bytes(head: bytes) -> str:
    """``gzip``, ``zip``, ``html`` or ``text`` from the first bytes of a file."""
    if head.startswith(GZIP_MAGIC):
        return "gzip"
    if head.startswith(ZIP_MAGIC):
        return "zip"
    start = head.lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if start.startswith((b"<!doctype", b"<html", b"<?xml", b"<head", b"<body")):
        return "html"
    return "text"


def _preview(head: bytes) -> str:
    """The first bytes, as hex and as text, for messages about files of the wrong type."""
    text = head[:40].decode("latin-1").encode("unicode_escape").decode("ascii")
    return f"first bytes {head[:8].hex(' ')} ({text!r})"


def _check_kind(label: str, expect: Expect | None, kind: str, head: bytes) -> None:
    """Refuse a file whose first bytes do not match the expected type."""
    if expect is None or expect == kind:
        return
    if kind == "html":
        what = "a gzip file" if expect == "gzip" else "a zip archive" if expect == "zip" else "a plain text file"
        raise DownloadError(
            f"{label}: not {what} — it looks like an HTML page (an error or login page saved instead of the "
            f"data?); {_preview(head)}"
        )
    if expect == "text":
        raise DownloadError(f"{label}: a {kind} file where plain text was expected")
    if kind in ("gzip", "zip"):
        raise DownloadError(f"{label}: not a {expect} file — it is a {kind} file")
    raise DownloadError(f"{label}: not a {expect} file ({_preview(head)})")


def _hash_file(path: Path, gunzip: bool, label: str, bar: Any) -> str:
    """sha256 of the file, and when ``gunzip`` decompress every gzip member to its end in the same pass.

    Decompressing to the end is the only way to see a truncated gzip (no end-of-stream) or a corrupted
    one (CRC-32 or length mismatch in a member trailer); it runs in constant memory.
    """
    digest = hashlib.sha256()
    inflater = zlib.decompressobj(wbits=31) if gunzip else None
    between_members = False
    position = inflated = 0
    with path.open("rb") as handle:
        while chunk := handle.read(CHUNK_SIZE):
            digest.update(chunk)
            bar.update(len(chunk))
            if inflater is not None:
                inflater, between_members, more = _inflate(inflater, chunk, between_members, label, position)
                inflated += more
                check_inflation(label, inflated, position + len(chunk))
            position += len(chunk)
    if inflater is not None and not between_members:
        raise DownloadError(
            f"{label}: truncated gzip — the compressed data stops before the end of the stream ({position} bytes; "
            "an interrupted download?)"
        )
    return digest.hexdigest()


def check_inflation(label: str, inflated: int, compressed: int, member: str | None = None) -> None:
    """Refuse a compressed source that inflates beyond :data:`MAX_INFLATE_RATIO` times its size (a zip bomb)."""
    if inflated > _INFLATE_FLOOR and inflated > MAX_INFLATE_RATIO * max(compressed, 1):
        where = f" (member {member!r})" if member else ""
        raise DownloadError(
            f"{label}{where}: inflates to more than {MAX_INFLATE_RATIO} times its compressed size "
            f"({inflated:,} bytes from {compressed:,}): a zip bomb or a damaged file, not a BAN or Annuaire Santé "
            "extraction; refused"
        )


def _inflate(inflater: Any, data: bytes, between_members: bool, label: str, position: int) -> tuple[Any, bool, int]:
    """Feed one chunk to the gzip decompressor; a new member may start after one ends (multi-member gzip).

    Returns the decompressor, whether the data ended between members, and the bytes inflated.
    """
    later_member = False
    inflated = 0
    try:
        while data:
            if between_members:
                data = data.lstrip(b"\0")  # zero padding after the last member is allowed, as by gzip(1)
                if not data:
                    break
                inflater, between_members, later_member = zlib.decompressobj(wbits=31), False, True
            inflated += len(inflater.decompress(data, _MAX_INFLATE))
            if inflater.eof:
                data, between_members = inflater.unused_data, True
            else:
                data = inflater.unconsumed_tail
    except zlib.error as error:
        reason = str(error)
        if "incorrect data check" in reason:
            what = "CRC error (the decompressed data does not match its checksum)"
        elif "incorrect length check" in reason:
            what = "length error (the decompressed size does not match the gzip trailer)"
        elif "incorrect header check" in reason and later_member:
            what = "unexpected data after the end of a gzip member"
        else:
            what = f"corrupt data ({reason})"
        raise DownloadError(f"{label}: corrupt gzip — {what}, near byte {position}") from None
    return inflater, between_members, inflated


def _check_zip(path: Path, label: str) -> None:
    """Open the archive and CRC-test every member (a truncated zip has lost its central directory)."""
    try:
        with zipfile.ZipFile(path) as archive:
            if not archive.namelist():
                raise DownloadError(f"{label}: empty zip archive (no member)")
            for info in archive.infolist():  # the sizes the archive declares: zipfile reads no more than these
                check_inflation(label, info.file_size, info.compress_size, info.filename)
            bad = archive.testzip()
    except zipfile.BadZipFile as error:
        raise DownloadError(f"{label}: not a readable zip archive ({error}) — truncated download?") from None
    except (zlib.error, EOFError) as error:
        raise DownloadError(f"{label}: corrupt zip member data ({error})") from None
    if bad is not None:
        raise DownloadError(f"{label}: CRC error in zip member {bad!r}")


def check_file(
    path: str | os.PathLike[str], expect: Expect | None = None, *, progress: bool = False, label: str | None = None
) -> CheckedFile:
    """Check a local file before use and hash it; raise :class:`DownloadError` naming it otherwise.

    ``expect``: ``"gzip"`` (decompressed to the end: truncation, CRC), ``"zip"`` (every member
    CRC-tested), ``"text"`` (not empty, not HTML, not compressed), or None (gzip and zip files are
    still checked when their magic bytes say so). An empty file is always refused.
    """
    path = Path(path)
    label = label or str(path)
    if expect is not None and expect not in _EXPECTED:
        raise ValueError(f"expect must be one of {_EXPECTED} or None, not {expect!r}")
    if not path.exists():
        raise DownloadError(f"{label}: no such file")
    if not path.is_file():
        raise DownloadError(f"{label}: not a regular file")
    size = path.stat().st_size
    if size == 0:
        raise DownloadError(f"{label}: empty file (0 bytes)")
    with path.open("rb") as handle:
        head = handle.read(512)
    kind = sniff_bytes(head)
    _check_kind(label, expect, kind, head)
    if kind == "zip":
        _check_zip(path, label)
    with _progress_bar(progress, size, 0, f"checking {path.name}") as bar:
        sha256 = _hash_file(path, kind == "gzip", label, bar)
    return CheckedFile(path=path, kind=kind, size=size, sha256=sha256)


# ---------------------------------------------------------------------------------------------------
# Small helpers


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def _progress_bar(enabled: bool, total: int | None, initial: int, desc: str) -> Any:
    """A tqdm byte counter on stderr (a disabled one when ``enabled`` is false, so callers need no branch)."""
    return tqdm(
        total=total,
        initial=initial,
        desc=desc,
        unit="B",
        unit_scale=True,
        unit_divisor=1024,
        file=sys.stderr,
        disable=not enabled,
        leave=enabled,
    )


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def retry_delay(failures: int, retry_after: str | None, backoff: float, max_wait: float) -> float:
    """Seconds to wait before the next attempt: the server's ``Retry-After`` if any, else exponential.

    ``Retry-After`` may be seconds or an HTTP date; either way the wait is capped at ``max_wait`` so that
    a server asking for an hour does not hang a build (it will get asked again, and the error says so).
    """
    delay = backoff * 2 ** max(failures - 1, 0)
    if retry_after:
        value = retry_after.strip()
        if value.isdigit():
            delay = float(value)
        else:
            try:
                when = email.utils.parsedate_to_datetime(value)
            except (TypeError, ValueError):
                when = None
            if when is not None:
                if when.tzinfo is None:
                    when = when.replace(tzinfo=dt.timezone.utc)
                delay = (when - dt.datetime.now(dt.timezone.utc)).total_seconds()
    return min(max(delay, 0.0), max_wait)


def _content_disposition_filename(value: str | None) -> str | None:
    """The file name a server suggests (``filename*=UTF-8''…`` preferred over ``filename=…``)."""
    if not value:
        return None
    match = re.search(r"filename\*\s*=\s*[^']*'[^']*'([^;]+)", value, re.IGNORECASE)
    if match:
        return unquote(match.group(1).strip().strip('"'))
    match = re.search(r'filename\s*=\s*"([^"]*)"|filename\s*=\s*([^;]+)', value, re.IGNORECASE)
    if match:
        return (match.group(1) or match.group(2) or "").strip() or None
    return None


_CONTENT_RANGE = re.compile(r"bytes\s+(\d+)-(\d+)/(\d+|\*)", re.IGNORECASE)


class _Retry(Exception):
    """An attempt failed in a way that another attempt may fix (network, 5xx, 408/429, truncated body)."""

    def __init__(self, message: str, *, progressed: bool = False, retry_after: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.progressed = progressed
        self.retry_after = retry_after


@dataclass
class _Partial:
    """The ``.part`` file of an interrupted download and what we know about the remote file it came from."""

    part: Path
    state: Path

    def load(self, url: str) -> tuple[int, dict[str, Any]]:
        """Bytes already there and the stored state; an unusable partial (other URL, no validator) is dropped."""
        if not self.part.is_file():
            self.state.unlink(missing_ok=True)
            return 0, {}
        state = _read_json(self.state) or {}
        size = self.part.stat().st_size
        if state.get("url") != url or not _if_range_validator(state) or size == 0:
            self.discard()
            return 0, {}
        if state.get("total") is not None and size >= int(state["total"]):
            self.discard()  # complete or longer than announced: cannot be resumed, start again
            return 0, {}
        return size, state

    def save(self, state: dict[str, Any]) -> None:
        atomic_write_text(self.state, json.dumps(state, indent=1))

    def discard(self) -> None:
        self.part.unlink(missing_ok=True)
        self.state.unlink(missing_ok=True)


def _if_range_validator(state: dict[str, Any]) -> str | None:
    """A strong ETag if the server gave one, else Last-Modified: RFC 9110 forbids weak ETags in If-Range."""
    etag = state.get("etag")
    if etag and not etag.startswith("W/"):
        return etag
    return state.get("last_modified") or None


# ---------------------------------------------------------------------------------------------------
# fetch


def fetch(
    source: str | os.PathLike[str],
    dest_dir: str | os.PathLike[str],
    *,
    expect: Expect | None = None,
    ca_bundle: str | os.PathLike[str] | None = None,
    timeout: float | tuple[float, float] = (15.0, 60.0),
    retries: int = 5,
    backoff: float = 1.0,
    max_wait: float = 60.0,
    progress: bool = True,
    refresh: bool = False,
    offline: bool = False,
    filename: str | None = None,
    session: requests.Session | None = None,
) -> FetchedSource:
    """Make ``source`` (an http(s) URL, a local path or a ``file://`` URL) available as a checked local file.

    A local source is checked (:func:`check_file`) and hashed in place; ``dest_dir`` is not used and the
    network is never touched. A URL is downloaded into ``dest_dir`` under :func:`final_name` (or
    ``filename``) as described in the module docstring, or reused from an earlier download.

    ``ca_bundle``: a PEM file (or directory) of CA certificates given to requests as ``verify=``; needed
    for the Annuaire Santé server, whose IGC-Santé chain is not trusted by default. ``timeout`` is
    requests' (connect, read) timeout. ``retries`` further attempts follow a network error, a timeout,
    a 5xx, 408 or 429, waiting ``backoff``·2ⁿ seconds or the server's ``Retry-After``, capped at
    ``max_wait``; an attempt that received bytes resets the count (it resumes where it stopped). Other
    4xx are not retried. ``offline=True`` refuses a URL that has not been downloaded yet instead of
    using the network; ``refresh=True`` re-validates an earlier download with a conditional GET.
    """
    if expect is not None and expect not in _EXPECTED:
        raise ValueError(f"expect must be one of {_EXPECTED} or None, not {expect!r}")
    local = _local_path(source)
    if local is not None:
        return _fetch_local(str(source), local, expect, progress)
    url = str(source)
    name = filename or final_name(url, expect)
    if Path(name).name != name or name in ("", ".", ".."):
        raise ValueError(f"filename must be a plain file name, not {name!r}")
    target = Path(dest_dir) / name
    cached, why_not = _reusable(url, target, expect, progress)
    if cached is not None and not refresh:
        return cached
    if offline:
        if cached is not None:
            return cached
        raise DownloadError(f"{url}: {why_not}, and offline mode forbids downloading it")
    verify = _verify_option(ca_bundle)
    if session is None:
        import requests

        with requests.Session() as own:
            return _Downloader(url, target, expect, own, verify, timeout, progress, cached).run(
                retries, backoff, max_wait
            )
    return _Downloader(url, target, expect, session, verify, timeout, progress, cached).run(retries, backoff, max_wait)


def _fetch_local(source: str, path: Path, expect: Expect | None, progress: bool) -> FetchedSource:
    checked = check_file(path, expect, progress=progress, label=source)
    return FetchedSource(
        source=source, path=path, size=checked.size, sha256=checked.sha256, fetched_at=_now(), kind=checked.kind
    )


def _verify_option(ca_bundle: str | os.PathLike[str] | None) -> str | None:
    """requests' ``verify``: the CA bundle if given, else None (the session's setting, REQUESTS_CA_BUNDLE, certifi)."""
    if ca_bundle is None:
        return None
    path = Path(ca_bundle)
    if not path.exists():
        raise InputError(f"CA bundle {path}: no such file (expected PEM certificates, e.g. the IGC-Santé chain)")
    return str(path)


def _sidecar(target: Path) -> Path:
    return target.with_name(target.name + ".download.json")


def _reusable(url: str, target: Path, expect: Expect | None, progress: bool) -> tuple[FetchedSource | None, str]:
    """An earlier download of ``url`` under ``target`` that is still intact, or None and the reason why not.

    With its ``.download.json`` the file only needs its sha256 recomputed (it was fully checked before it
    was moved into place); a file without one (copied there by hand) gets the full :func:`check_file`.
    """
    if not target.is_file():
        return None, f"no earlier download at {target}"
    meta = _read_json(_sidecar(target))
    if meta is not None and meta.get("url") != url:
        return None, f"{target} was downloaded from another URL ({meta.get('url')})"
    trusted = meta is not None and meta.get("size") == target.stat().st_size and expect in (None, meta.get("kind"))
    try:
        if trusted:
            with _progress_bar(progress, target.stat().st_size, 0, f"hashing {target.name}") as bar:
                sha256, kind = _hash_file(target, False, str(target), bar), str(meta["kind"])
            if sha256 != meta.get("sha256"):
                return None, f"{target} no longer matches the sha256 recorded when it was downloaded"
        else:
            checked = check_file(target, expect, progress=progress)
            sha256, kind = checked.sha256, checked.kind
    except DownloadError as error:
        return None, f"the existing file is unusable ({error})"
    meta = meta or {}
    return (
        FetchedSource(
            source=url,
            path=target,
            size=target.stat().st_size,
            sha256=sha256,
            fetched_at=meta.get("fetched_at") or _now(),
            kind=kind,
            from_cache=True,
            http_status=meta.get("http_status"),
            etag=meta.get("etag"),
            last_modified=meta.get("last_modified"),
            remote_filename=meta.get("remote_filename"),
        ),
        "",
    )


class _Downloader:
    """One download of one URL into ``target``, over as many attempts as the retry policy allows."""

    def __init__(
        self,
        url: str,
        target: Path,
        expect: Expect | None,
        session: requests.Session,
        verify: str | None,
        timeout: float | tuple[float, float],
        progress: bool,
        cached: FetchedSource | None,
    ) -> None:
        self.url, self.target, self.expect, self.session = url, target, expect, session
        self.verify, self.timeout, self.progress, self.cached = verify, timeout, progress, cached
        self.partial = _Partial(target.with_name(target.name + ".part"), target.with_name(target.name + ".part.json"))

    def run(self, retries: int, backoff: float, max_wait: float) -> FetchedSource:
        self.target.parent.mkdir(parents=True, exist_ok=True)
        failures = 0
        while True:
            try:
                return self._attempt()
            except _Retry as error:
                failures = 1 if error.progressed else failures + 1
                if failures > retries:
                    kept = (
                        " (the partial file is kept and the next call resumes it)" if self.partial.part.exists() else ""
                    )
                    tries = "1 attempt" if failures == 1 else f"{failures} attempts in a row"
                    raise DownloadError(f"{self.url}: {error.message}; gave up after {tries}{kept}") from None
                time.sleep(retry_delay(failures, error.retry_after, backoff, max_wait))

    def _request_headers(self, offset: int, state: dict[str, Any]) -> dict[str, str]:
        from deid_ds import __version__

        # identity: the bytes on disk must be the file itself, not a transfer encoding of it
        headers = {"Accept-Encoding": "identity", "User-Agent": f"deid-ds/{__version__}"}
        if offset:
            headers["Range"] = f"bytes={offset}-"
            headers["If-Range"] = str(_if_range_validator(state))
        if self.cached is not None:  # refresh: let the server say 304 if the file did not change
            if self.cached.etag:
                headers["If-None-Match"] = self.cached.etag
            if self.cached.last_modified:
                headers["If-Modified-Since"] = self.cached.last_modified
        return headers

    def _get(self, headers: dict[str, str]) -> requests.Response:
        import requests

        try:
            return self.session.get(self.url, headers=headers, stream=True, timeout=self.timeout, verify=self.verify)
        except requests.exceptions.SSLError as error:
            if self.verify:
                hint = f"with the CA bundle {self.verify}"
            else:
                hint = (
                    "the Annuaire Santé servers use the IGC-Santé certificate chain, which is not trusted "
                    "by default: pass its CA certificates (PEM) as ca_bundle / --ca-bundle"
                )
            raise DownloadError(
                f"{self.url}: TLS certificate verification failed ({error.__class__.__name__}); {hint}"
            ) from None
        except (requests.exceptions.ConnectionError, requests.exceptions.Timeout) as error:
            raise _Retry(f"cannot connect ({error.__class__.__name__}: {error})") from None
        except requests.exceptions.RequestException as error:
            raise DownloadError(f"{self.url}: request failed ({error.__class__.__name__}: {error})") from None

    def _attempt(self) -> FetchedSource:
        offset, state = self.partial.load(self.url)
        response = self._get(self._request_headers(offset, state))
        with response:
            status = response.status_code
            if status == 304 and self.cached is not None:
                return replace(self.cached, http_status=304)
            if status in (408, 429) or status >= 500:
                raise _Retry(f"HTTP {status} {response.reason}", retry_after=response.headers.get("Retry-After"))
            if status == 416:
                self.partial.discard()
                raise _Retry("HTTP 416: the server refused to resume the partial download; starting again")
            if status not in (200, 206):
                raise DownloadError(f"{self.url}: HTTP {status} {response.reason} (not retried)")
            offset, total = self._start_position(response, offset, state)
            self._receive(response, offset, total)
        return self._finish(response, offset)

    def _start_position(
        self, response: requests.Response, offset: int, state: dict[str, Any]
    ) -> tuple[int, int | None]:
        """Where the body goes in the ``.part`` file and the full size to expect; records the validators."""
        headers = response.headers
        etag, last_modified = headers.get("ETag"), headers.get("Last-Modified")
        if response.status_code == 206:
            match = _CONTENT_RANGE.match(headers.get("Content-Range", ""))
            total = int(match.group(3)) if match and match.group(3) != "*" else None
            same_file = state.get("etag") in (None, etag) or etag is None
            if (
                not match
                or int(match.group(1)) != offset
                or not offset
                or not same_file
                or (state.get("total") is not None and total != state.get("total"))
            ):
                self.partial.discard()
                raise _Retry(
                    f"unexpected partial response (Content-Range {headers.get('Content-Range')!r} for a resume at "
                    f"byte {offset})"
                )
        else:
            offset = 0  # a 200 is the whole file: the range was ignored, or the remote file changed
            length = headers.get("Content-Length")
            total = int(length) if length and length.isdigit() else None
        self.partial.save(
            {
                "url": self.url,
                "etag": etag,
                "last_modified": last_modified,
                "total": total,
                "remote_filename": _content_disposition_filename(headers.get("Content-Disposition")),
            }
        )
        return offset, total

    def _receive(self, response: requests.Response, offset: int, total: int | None) -> None:
        """Stream the body onto the ``.part`` file; a broken transfer keeps what arrived for a resume."""
        import http.client

        import requests
        import urllib3

        network_errors = (
            urllib3.exceptions.HTTPError,
            requests.exceptions.RequestException,
            http.client.HTTPException,
            OSError,
        )
        received = 0
        with (
            self.partial.part.open("ab" if offset else "wb") as out,
            _progress_bar(self.progress, total, offset, self.target.name) as bar,
        ):
            chunks = response.raw.stream(CHUNK_SIZE, decode_content=False)
            while True:
                try:
                    chunk = next(chunks)
                except StopIteration:
                    break
                except network_errors as error:
                    out.flush()
                    have = offset + received
                    of = f" of {total}" if total is not None else ""
                    raise _Retry(
                        f"connection lost after {have}{of} bytes ({error.__class__.__name__})", progressed=received > 0
                    ) from None
                out.write(chunk)
                received += len(chunk)
                bar.update(len(chunk))
        have = offset + received
        if total is not None and have < total:
            raise _Retry(f"truncated at {have} of {total} bytes", progressed=received > 0)
        if total is not None and have > total:
            self.partial.discard()
            raise DownloadError(
                f"{self.url}: received {have} bytes, more than the {total} announced; download discarded"
            )

    def _finish(self, response: requests.Response, offset: int) -> FetchedSource:
        """Check the complete ``.part``, describe it, and move it onto the final name."""
        try:
            checked = check_file(self.partial.part, self.expect, progress=self.progress, label=self.url)
        except DownloadError as error:
            self.partial.discard()
            raise DownloadError(f"{error} — download refused, nothing kept") from None
        state = _read_json(self.partial.state) or {}
        result = FetchedSource(
            source=self.url,
            path=self.target,
            size=checked.size,
            sha256=checked.sha256,
            fetched_at=_now(),
            kind=checked.kind,
            downloaded=True,
            resumed_from=offset,
            http_status=response.status_code,
            etag=state.get("etag"),
            last_modified=state.get("last_modified"),
            remote_filename=state.get("remote_filename"),
        )
        meta = {
            k: v
            for k, v in result.to_dict().items()
            if k not in ("downloaded", "from_cache", "resumed_from", "source", "path")
        }
        # the description first, then the file: a crash in between leaves a sha256 that the old file
        # (if any) does not match, so it is downloaded again rather than trusted
        atomic_write_text(_sidecar(self.target), json.dumps({"url": self.url, **meta}, indent=1))
        os.replace(self.partial.part, self.target)
        self.partial.state.unlink(missing_ok=True)
        return result
