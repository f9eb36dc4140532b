"""Keyed, stateless choices: every surrogate is a pure function of (key, scope, label, original).

Why HMAC and not a lookup table: a table mapping originals to surrogates would have to be stored (it
holds the originals) and shared between runs and worker processes. With ``HMAC-SHA256(key, scope |
label | normalised original)`` driving every choice, the same key gives byte-identical output on any
machine, in any batch order and with any number of workers, the mapping can be rebuilt later from the
key alone, and nothing but the key needs protecting. A new key gives an unrelated mapping. Without a
key, a random one is drawn for the run and kept in memory only.

**Short keys.** Anyone holding a de-identified note and one original (a name in the letterhead, a
known admission date) can test candidate keys offline, as fast as HMAC runs: a key a person can type
in a few characters falls in seconds, and with it the whole mapping. An empty key is therefore always
refused and a key shorter than :data:`MIN_KEY_BYTES` bytes needs ``allow_short=True``
(``--allow-short-key``). The report's fingerprint is an scrypt hash with a random salt written beside
it (slow to test candidates against, and two fingerprints of the same key differ unless compared with
:meth:`Keyring.matches`); with a short key no fingerprint is written at all.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import random
import secrets
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TypeVar

from deid_ds.errors import DeidError

T = TypeVar("T")

#: Keys shorter than this (in UTF-8 bytes) are refused unless explicitly allowed.
MIN_KEY_BYTES = 16
#: scrypt cost of the report's fingerprint: ~50 ms and 16 MiB per candidate key tested.
_SCRYPT = {"n": 2**14, "r": 8, "p": 1}

#: Environment variable read when no ``--key`` is given.
KEY_ENV = "DEID_DS_KEY"
_SEP = "\x1f"  # unit separator: cannot occur in folded note text used as a part


@dataclass(frozen=True)
class Keyring:
    """The secret key and the keyed functions derived from it. ``origin`` says where it came from."""

    key: bytes
    origin: str = "random"

    def __repr__(self) -> str:  # never print the key, even in a traceback
        return f"Keyring(origin={self.origin!r})"

    def digest(self, *parts: str) -> bytes:
        """HMAC-SHA256 of the parts (joined with a separator that folded text never holds)."""
        return _hmac(self.key, _SEP.join(parts))

    def integer(self, *parts: str) -> int:
        """A 64-bit integer drawn from the parts."""
        return int.from_bytes(self.digest(*parts)[:8], "big")

    def index(self, n: int, *parts: str) -> int:
        """An index in ``range(n)`` (modulo bias below 2**-40 for the pool sizes used here)."""
        if n <= 0:
            raise ValueError("cannot choose from an empty pool")
        return self.integer(*parts) % n

    def choice(self, pool: Sequence[T], *parts: str) -> T:
        return pool[self.index(len(pool), *parts)]

    def rng(self, *parts: str) -> random.Random:
        """A generator seeded by the parts, for choices made of several draws (digits of a number)."""
        return random.Random(int.from_bytes(self.digest(*parts), "big"))

    @property
    def is_short(self) -> bool:
        return len(self.key) < MIN_KEY_BYTES

    def fingerprint(self, salt: bytes | None = None) -> str:
        """``scrypt$<salt>$<hash>``: shows two runs share a key (:meth:`matches`), slow to brute-force.

        Empty for a short key: no hash of a key that can be guessed is ever written.
        """
        if self.is_short:
            return ""
        salt = secrets.token_bytes(16) if salt is None else salt
        digest = hashlib.scrypt(self.key, salt=salt, dklen=16, **_SCRYPT)
        return f"scrypt${salt.hex()}${digest.hex()}"

    def matches(self, fingerprint: str) -> bool:
        """Whether ``fingerprint`` (from a report) was made from this key."""
        kind, _, rest = fingerprint.partition("$")
        salt, _, _ = rest.partition("$")
        if kind != "scrypt" or not salt:
            return False
        try:
            return hmac.compare_digest(self.fingerprint(bytes.fromhex(salt)), fingerprint)
        except ValueError:
            return False


@lru_cache(maxsize=1 << 16)
def _hmac(key: bytes, message: str) -> bytes:
    """Cached: three draws in four repeat one already made (a doctor's name in every patient's notes, a patient's
    town in each of their notes: 104,870 digests of 25,248 messages for 3,000 generated notes, 0.18 -> 0.10 s:
    docs/benchmarks.md, *deidentify*)."""
    return hmac.new(key, message.encode("utf-8"), hashlib.sha256).digest()


def _checked(key: str, where: str, allow_short: bool) -> bytes:
    stripped = key.strip()
    if key and not stripped:
        raise DeidError(f"{where} holds only whitespace: give a secret key of at least {MIN_KEY_BYTES} bytes")
    if stripped != key:
        # A key read from a file (DEID_DS_KEY=$(<file) keeps no newline, but an editor's file read otherwise
        # does) would give other surrogates than the same key typed: the surrounding whitespace is dropped.
        print(
            f"warning: {where} began or ended with whitespace or a newline: ignored (the key is what lies between)",
            file=sys.stderr,
        )
    raw = stripped.encode("utf-8")
    if not raw:
        raise DeidError(f"{where} is empty: give a secret key of at least {MIN_KEY_BYTES} bytes")
    if len(raw) < MIN_KEY_BYTES and not allow_short:
        raise DeidError(
            f"{where} is {len(raw)} bytes long: a key shorter than {MIN_KEY_BYTES} bytes can be guessed "
            "from one de-identified note and one original; give a longer key (or --allow-short-key)"
        )
    return raw


def resolve_key(key: str | None, environ: dict[str, str] | None = None, allow_short: bool = False) -> Keyring:
    """The run's key: ``key`` if given, else :data:`KEY_ENV`, else a random one (never written).

    An empty key (``--key ""`` or an empty variable) is refused: it usually means a variable that was
    not set, and would give a mapping anyone can rebuild; so is a key of whitespace only. Whitespace and
    newlines around a key are dropped, with a line on stderr: a key read from a file with its final
    newline is the same key. A short key is refused unless ``allow_short``.
    """
    environ = os.environ if environ is None else environ
    if key is not None:
        return Keyring(_checked(key, "--key", allow_short), "--key")
    if KEY_ENV in environ:
        return Keyring(
            _checked(environ[KEY_ENV], f"the {KEY_ENV} environment variable", allow_short), f"environment {KEY_ENV}"
        )
    return Keyring(secrets.token_bytes(32), "random (not stored: the mapping cannot be reproduced)")
