"""Keyed, stateless choices: every surrogate is a pure function of (key, scope, label, original).

Why HMAC and not a lookup table: a table mapping originals to surrogates would have to be stored (it
holds the originals) and shared between runs and worker processes. With ``HMAC-SHA256(key, scope |
label | normalised original)`` driving every choice, the same key gives byte-identical output on any
machine, in any batch order and with any number of workers, the mapping can be rebuilt later from the
key alone, and nothing but the key needs protecting. A new key gives an unrelated mapping. Without a
key, a random one is drawn for the run and kept in memory only.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import random
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")

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
        return hmac.new(self.key, _SEP.join(parts).encode("utf-8"), hashlib.sha256).digest()

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

    def fingerprint(self) -> str:
        """A short one-way fingerprint, written to the report so that two runs can be seen to share a key."""
        return self.digest("deid-ds key fingerprint").hex()[:12]


def resolve_key(key: str | None, environ: dict[str, str] | None = None) -> Keyring:
    """The run's key: ``key`` if given, else :data:`KEY_ENV`, else a random one (never written)."""
    environ = os.environ if environ is None else environ
    if key:
        return Keyring(key.encode("utf-8"), "--key")
    if environ.get(KEY_ENV):
        return Keyring(environ[KEY_ENV].encode("utf-8"), f"environment {KEY_ENV}")
    return Keyring(secrets.token_bytes(32), "random (not stored: the mapping cannot be reproduced)")
