"""Pseudonyms for the bytes a producer chose (keys, values, header values): the same length as the
original, equal for equal originals under one secret (HMAC-SHA256 keyed by it), so that support
still sees key cardinality, compaction and "the same key in two segments" without the data.

null stays null and empty stays empty; printable ASCII stays printable ASCII (letters and digits);
a value in Schema Registry's framing (byte 0, then a 4-byte schema id) keeps that 5-byte prefix, and
``keep_prefix`` keeps the first N bytes of every value; with ``json_values`` a value that is JSON
keeps its shape: only its string and number leaves change, byte for byte (a string's bytes become
letters and digits, its escapes stay escapes).
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import IO

from kafka_dump.errors import KafkaDumpError

ALNUM = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
DIGITS = b"0123456789"
HEX = b"0123456789abcdef"
SR_PREFIX = 5  # Schema Registry's wire format: magic byte 0 and a 4-byte schema id
SECRET_BYTES = 32
MAPPED = 1 << 16  # pseudonyms remembered as written to --map
MEMO_BYTES, MEMO_ENTRIES = (
    64,
    1 << 16,
)  # short keys and header values: their pseudonyms kept for the next time
PRINTABLE = bytes(range(0x20, 0x7F))
TO_ALNUM = bytes(ALNUM[b % len(ALNUM)] for b in range(256))  # a noise byte as a letter or digit


def secret(path: str | None) -> bytes:
    """The secret in ``--secret-file`` (its bytes, a trailing newline aside, as ``echo`` writes it),
    or with none a random secret for this run: never written anywhere, so its pseudonyms cannot be
    traced back."""
    if path is None:
        return os.urandom(SECRET_BYTES)
    try:
        with open(path, "rb") as f:
            data = f.read(1 << 16).rstrip(b"\r\n")
    except OSError as exc:
        raise KafkaDumpError(exc.strerror or str(exc), file=path) from None
    if not data:
        raise KafkaDumpError("the secret file is empty", file=path)
    return data


class Pseudonyms:
    """Pseudonyms under one secret; ``mapping``, when given, is told each pseudonym and its original
    (``--map``); ``counts`` holds the bytes replaced per field."""

    def __init__(
        self,
        secret: bytes,
        *,
        keep_prefix: int | None = None,
        json_values: bool = False,
        mapping: IO[str] | None = None,
    ) -> None:
        if not secret:
            raise ValueError("the secret is empty")
        key = (hashlib.sha256(secret).digest() if len(secret) > 64 else secret).ljust(64, b"\0")
        self._inner = hashlib.sha256(bytes(b ^ 0x36 for b in key))
        self._outer = hashlib.sha256(bytes(b ^ 0x5C for b in key))
        self.secret = secret
        self._memo: dict[tuple[str, bytes], bytes] = {}  # short originals (keys, header values) repeat
        self.keep_prefix = keep_prefix
        self.json_values = json_values
        self._mapping = mapping
        self._mapped: set[bytes] = set()
        self.counts: dict[str, int] = {}
        self.kept: dict[str, int] = {}  # why bytes were kept verbatim -> how many

    @property
    def in_place(self) -> bool:
        """Whether a batch's records may be replaced by ``redact_records`` (no ``--map`` to tell each
        original, no ``--json`` leaves): the same bytes, computed in C."""
        return self._mapping is None and not self.json_values

    def add(self, counts: dict[str, int], kept: dict[str, int]) -> None:
        """Count what ``redact_records`` replaced and kept, as ``replace`` counts its own."""
        for mine, theirs in ((self.counts, counts), (self.kept, kept)):
            for k, v in theirs.items():
                mine[k] = mine.get(k, 0) + v

    def stream(self, seed: bytes, n: int, domain: bytes = b"b") -> bytes:
        """``n`` pseudo-random bytes determined by the secret and ``seed``: the HMAC-SHA256 of the seed
        under the secret, then as long as more are wanted SHA-256 of that MAC and a 4-byte counter
        (1, 2, ...): one SHA-256 block each, which the compiled twin computes with the CPU's SHA
        extensions (``native/redact.c``)."""
        mac = self._mac(domain + b"\0" + seed)
        if n <= 32:
            return mac[:n]
        more = (hashlib.sha256(mac + i.to_bytes(4, "big")).digest() for i in range(1, (n + 31) // 32))
        return b"".join((mac, *more))[:n]

    def _mac(self, message: bytes) -> bytes:
        """HMAC-SHA256 of ``message`` under the secret, from the two padded states made once
        (``hmac.digest`` sets up its key each call: four times slower here)."""
        inner = self._inner.copy()
        inner.update(message)
        outer = self._outer.copy()
        outer.update(inner.digest())
        return outer.digest()

    def replace(self, data: bytes | None, field: str) -> bytes | None:
        """The pseudonym of one key, value or header value."""
        if data is None or not data:
            return data
        short = field != "value" and len(data) <= MEMO_BYTES  # a value's prefix rules aside
        if short and (seen := self._memo.get((field, data))) is not None:
            self.counts[field] = self.counts.get(field, 0) + len(data)
            return seen
        out = self._replace(data, field)
        if short:
            if len(self._memo) >= MEMO_ENTRIES:
                self._memo.clear()
            self._memo[field, data] = out
        return out

    def _replace(self, data: bytes, field: str) -> bytes:
        keep = 0
        if field == "value":
            if self.keep_prefix is not None:
                keep = min(self.keep_prefix, len(data))
                self._keep("--keep-prefix", keep)
            elif len(data) >= SR_PREFIX and data[0] == 0:
                keep = SR_PREFIX
                self._keep("Schema Registry prefix (magic byte 0, schema id)", keep)
        head, rest = data[:keep], data[keep:]
        new = self._json(rest) if field == "value" and self.json_values else None
        if new is None:
            new = self._bytes(rest)
        self.counts[field] = self.counts.get(field, 0) + len(rest)
        out = head + new
        if self._mapping is not None and out not in self._mapped:
            if len(self._mapped) >= MAPPED:  # memory bounded: a pseudonym may then be written twice
                self._mapped.clear()
            self._mapped.add(out)
            self._mapping.write(
                json.dumps({"field": field, "pseudonym": _shown(out), "original": _shown(data)}) + "\n"
            )
        return out

    def name(self, text: str, kind: str) -> str:
        """The pseudonym of a topic name, group id or transactional id (``kind``): as many letters
        and digits as the name has bytes (a legal topic name, the same length on the wire); the same
        for a name wherever it appears. Kafka's own names (``__consumer_offsets``...) are kept."""
        if not text or text.startswith("__"):
            return text
        seen = self._memo.get((kind, text.encode()))
        if seen is not None:
            out = seen.decode("ascii")
        else:
            original = text.encode()
            new = self.stream(original, len(original), b"N" + kind.encode()).translate(TO_ALNUM)
            if len(self._memo) >= MEMO_ENTRIES:
                self._memo.clear()
            self._memo[kind, original] = new
            out = new.decode("ascii")
            if self._mapping is not None:
                self._mapping.write(json.dumps({"field": kind, "pseudonym": out, "original": text}) + "\n")
        self.counts[kind] = self.counts.get(kind, 0) + len(out)
        return out

    def _keep(self, why: str, n: int) -> None:
        self.kept[why] = self.kept.get(why, 0) + n

    def _bytes(self, data: bytes) -> bytes:
        noise = self.stream(data, len(data))
        if not data.translate(None, PRINTABLE):  # printable ASCII only: letters and digits for it
            return noise.translate(TO_ALNUM)
        return noise

    def _json(self, data: bytes) -> bytes | None:
        """``data`` with each string and number leaf replaced in place, or None when it is no JSON."""
        try:
            json.loads(data)
        except ValueError:
            return None
        out = bytearray(data)
        i, n = 0, len(data)
        while i < n:
            c = data[i]
            if c == 0x22:  # a string: up to its closing quote, escapes kept as escapes
                j = i + 1
                while j < n and data[j] != 0x22:
                    j += 2 if data[j] == 0x5C else 1
                k = j + 1
                while k < n and data[k] in b" \t\r\n":
                    k += 1
                if not (k < n and data[k] == 0x3A):  # an object's name is shape, not a leaf
                    self._leaf(data, out, i + 1, j)
                i = j + 1
            elif c in b"-0123456789":
                j = i
                while j < n and data[j] in b"-+.eE0123456789":
                    j += 1
                noise = self.stream(data[i:j], j - i, b"n")
                for p in range(i, j):
                    if data[p] in DIGITS:
                        first = p == i or (p == i + 1 and data[i] == 0x2D)
                        pick = DIGITS[1:] if first and j - p > 1 and data[p + 1] in DIGITS else DIGITS
                        out[p] = pick[noise[p - i] % len(pick)]
                i = j
            else:
                i += 1
        return bytes(out)

    def _leaf(self, data: bytes, out: bytearray, start: int, end: int) -> None:
        noise = self.stream(data[start:end], end - start, b"s")
        p = start
        while p < end:
            if data[p] == 0x5C:  # \n, \" stay; \uXXXX keeps its form with other hex digits
                if p + 1 < end and data[p + 1] == 0x75:
                    for q in range(p + 2, min(p + 6, end)):
                        out[q] = HEX[noise[q - start] % 16]
                    p += 6
                else:
                    p += 2
                continue
            out[p] = ALNUM[noise[p - start] % len(ALNUM)]  # a wider character: as many letters as bytes
            p += 1


def _shown(data: bytes) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return "hex:" + data.hex()
    return text if text.isprintable() else "hex:" + data.hex()
