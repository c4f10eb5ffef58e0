"""Inputs for the fuzzer: every fixture, mutated the ways real damage and hostile writers mutate them.

Mutations are drawn through Hypothesis (so failures shrink): bit flips, byte insertions and deletions,
truncations, swapped and duplicated entries, length and count fields set to 0, -1, just past the end
and 2^31-1, payloads of gzip batches mutated under their compression, and random bytes. After the
mutations, the checksums are often recomputed so that the input reaches past the CRC check into the
record decoders.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

import crc32c
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"
_SKIP = {"gzip-bomb.log"}  # a MB of input per run: checked by name in test_bad_corpus, not fuzzed
_MAX_SEED_BYTES = 64 * 1024
_INTERESTING = (0, 1, -1, -2, 0x7F, 0x80, 0xFF, 2**15 - 1, 2**31 - 1, -(2**31), 2**16, 2**63 - 1, -(2**63))


@lru_cache(maxsize=1)
def seeds() -> tuple[tuple[str, bytes], ...]:
    """Every small fixture, good and bad, as (name, bytes)."""
    files = sorted(FIXTURES.glob("*.log")) + sorted((FIXTURES / "bad").glob("*.log"))
    return tuple(
        (f.name, f.read_bytes()) for f in files if f.name not in _SKIP and f.stat().st_size <= _MAX_SEED_BYTES
    )


def entries(data: bytes) -> list[tuple[int, int]]:
    """(start, end) of the entries whose size fields frame them, from byte 0, stopping at the first that doesn't."""
    out = []
    pos = 0
    while pos + 12 <= len(data):
        (size,) = struct.unpack_from(">i", data, pos + 8)
        end = pos + 12 + size
        if size < 14 or end > len(data):
            break
        out.append((pos, end))
        pos = end
    return out


def fix_checksums(data: bytes) -> bytes:
    """Recompute the CRC of every framed entry: CRC-32C for v2 (bytes 21..), CRC-32 for v0/v1 (16..)."""
    b = bytearray(data)
    for start, end in entries(data):
        magic = b[start + 16]
        if magic == 2 and end - start >= 61:
            struct.pack_into(">I", b, start + 17, crc32c.crc32c(bytes(b[start + 21 : end])))
        elif magic in (0, 1):
            struct.pack_into(">I", b, start + 12, zlib.crc32(bytes(b[start + 16 : end])) & 0xFFFFFFFF)
    return bytes(b)


Mutation = Callable[[bytes], bytes]


@st.composite
def _bit_flip(draw: st.DrawFn, size: int) -> Mutation:
    at, bit = draw(st.integers(0, max(size - 1, 0))), draw(st.integers(0, 7))

    def m(d: bytes) -> bytes:
        if not d:
            return d
        b = bytearray(d)
        b[at % len(b)] ^= 1 << bit
        return bytes(b)

    return m


@st.composite
def _insert(draw: st.DrawFn, size: int) -> Mutation:
    at, junk = draw(st.integers(0, size)), draw(st.binary(min_size=1, max_size=24))
    return lambda d: d[:at] + junk + d[at:]


@st.composite
def _delete(draw: st.DrawFn, size: int) -> Mutation:
    at, n = draw(st.integers(0, size)), draw(st.integers(1, 64))
    return lambda d: d[:at] + d[at + n :]


@st.composite
def _truncate(draw: st.DrawFn, size: int) -> Mutation:
    at = draw(st.integers(0, size))
    return lambda d: d[:at]


@st.composite
def _shuffle_entries(draw: st.DrawFn, size: int) -> Mutation:
    i, j, dup = draw(st.integers(0, 63)), draw(st.integers(0, 63)), draw(st.booleans())

    def m(d: bytes) -> bytes:
        spans = entries(d)
        if not spans:
            return d
        parts = [d[s:e] for s, e in spans]
        rest = d[spans[-1][1] :]
        a, b = i % len(parts), j % len(parts)
        if dup:
            parts.insert(b, parts[a])
        else:
            parts[a], parts[b] = parts[b], parts[a]
        return b"".join(parts) + rest

    return m


# Fields worth lying in, as (offset within the entry, struct code): the entry size, v2 header fields
# (length, magic, attributes, lastOffsetDelta, count), v0/v1 attributes and v1 key length; and the
# int64s whose sums with a record's delta can leave int64: the offset, the v2 baseTimestamp and
# the v1 timestamp.
_FIELDS = (
    (8, ">i"), (16, ">b"), (21, ">h"), (23, ">i"), (57, ">i"), (17, ">b"), (26, ">i"), (18, ">i"),
    (0, ">q"), (27, ">q"), (18, ">q"),
)  # fmt: skip


@st.composite
def _set_field(draw: st.DrawFn, size: int) -> Mutation:
    which, field, choice = draw(st.integers(0, 63)), draw(st.sampled_from(_FIELDS)), draw(st.integers(0, 99))

    def m(d: bytes) -> bytes:
        spans = entries(d)
        if not spans:
            return d
        start, end = spans[which % len(spans)]
        at, fmt = field
        if start + at + struct.calcsize(fmt) > len(d):
            return d
        bits = 8 * struct.calcsize(fmt)
        values = (*_INTERESTING, end - start - 12 + 1, len(d) - start)  # just past the entry, the file
        v = values[choice % len(values)]
        v = (v + (1 << (bits - 1))) % (1 << bits) - (1 << (bits - 1))  # wrap into the field's range
        b = bytearray(d)
        struct.pack_into(fmt, b, start + at, v)
        return bytes(b)

    return m


@st.composite
def _mutate_gzip_payload(draw: st.DrawFn, size: int) -> Mutation:
    """Flip a byte inside a gzip v2 batch's decompressed records and recompress, so decoders see it."""
    which, at, value = draw(st.integers(0, 63)), draw(st.integers(0, 4095)), draw(st.integers(0, 255))

    def m(d: bytes) -> bytes:
        spans = [(s, e) for s, e in entries(d) if d[s + 16] == 2 and e - s > 61 and d[s + 22] & 7 == 1]
        if not spans:
            return d
        s, e = spans[which % len(spans)]
        try:
            raw = bytearray(zlib.decompress(d[s + 61 : e], 31))
        except zlib.error:
            return d
        if raw:
            raw[at % len(raw)] = value
        comp = zlib.compress(bytes(raw), wbits=31)
        head = bytearray(d[s : s + 61])
        struct.pack_into(">i", head, 8, 49 + len(comp))
        return d[:s] + bytes(head) + comp + d[e:]

    return m


_MUTATIONS = (_bit_flip, _insert, _delete, _truncate, _shuffle_entries, _set_field, _mutate_gzip_payload)


@st.composite
def fuzz_input(draw: st.DrawFn) -> tuple[str, bytes]:
    """A (description, bytes) pair: a fixture with 1-4 mutations, re-checksummed most of the time."""
    if draw(st.integers(0, 19)) == 0:
        return "random", draw(st.binary(max_size=2048))
    name, data = draw(st.sampled_from(seeds()))
    steps = []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(_MUTATIONS))
        data = draw(kind(len(data)))(data)
        steps.append(kind.__name__.strip("_"))  # type: ignore[attr-defined]
    if draw(st.integers(0, 9)) < 7:
        data = fix_checksums(data)
        steps.append("fix_checksums")
    return f"{name}: {', '.join(steps)}", data
