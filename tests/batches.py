"""Small segment builders for the corruption and codec tests.

The bytes come from kafka-python's record builders (an independent writer, DESIGN.md "Testing
habits" 1), or, where a test needs a record that no builder would write (bogus lengths), from
``raw_v2_batch``/``raw_record`` below, which use only ``struct`` and the ``crc32c`` package. Nothing
here uses kdump's own encoders.

Fields a broker fills in and no CRC covers (baseOffset, wrapper offset, partitionLeaderEpoch) are
patched after building. When a test patches bytes under a CRC and wants the CRC to stay valid,
``fix_v2_crc``/``fix_legacy_crc`` recompute it as a broker would.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterable, Sequence

import crc32c
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatchBuilder
from kafka.record.util import encode_varint as _kp_encode_varint

NONE, GZIP, SNAPPY, LZ4, ZSTD = 0, 1, 2, 3, 4
TS0 = 1_700_000_000_000
BIG = 1 << 20

V2_HEADER = struct.Struct(">qiibIhiqqqhii")  # DefaultRecordBatch, 61 bytes
V2_CRC_AT = 17
V2_ATTRIBUTES_AT = 21
V2_COUNT_AT = 57
V2_HEADER_SIZE = 61
LEGACY_CRC_AT = 12
LEGACY_MAGIC_AT = 16
LEGACY_ATTRIBUTES_AT = 17

Rec = tuple[bytes | None, bytes | None, list[tuple[str, bytes | None]]]


def varint(value: int) -> bytes:
    """A zigzag varint, written by kafka-python's encoder (not kdump's)."""
    out = bytearray()
    _kp_encode_varint(value, out.append)
    return bytes(out)


def uvarint(value: int) -> bytes:
    """An unsigned varint, as Kafka's generated messages write lengths and tagged fields."""
    out = bytearray()
    while True:
        b = value & 0x7F
        value >>= 7
        out.append(b | (0x80 if value else 0))
        if not value:
            return bytes(out)


def compact_string(text: str | None) -> bytes:
    """A COMPACT_STRING of Kafka's generated messages: its UTF-8 length + 1 (0 for null), then it."""
    if text is None:
        return b"\x00"
    raw = text.encode()
    return uvarint(len(raw) + 1) + raw


def set_offset(entry: bytes | bytearray, offset: int) -> bytes:
    """Overwrite the entry's offset / baseOffset (bytes 0-7, under no CRC)."""
    b = bytearray(entry)
    struct.pack_into(">q", b, 0, offset)
    return bytes(b)


def fix_v2_crc(entry: bytes | bytearray) -> bytes:
    """Recompute a v2 batch's CRC-32C over bytes [21:end] and store it big-endian at byte 17."""
    b = bytearray(entry)
    struct.pack_into(">I", b, V2_CRC_AT, crc32c.crc32c(bytes(b[V2_ATTRIBUTES_AT:])))
    return bytes(b)


def fix_legacy_crc(entry: bytes | bytearray) -> bytes:
    """Recompute a v0/v1 message's CRC-32 over bytes [16:end] and store it at byte 12."""
    b = bytearray(entry)
    struct.pack_into(">I", b, LEGACY_CRC_AT, zlib.crc32(bytes(b[LEGACY_MAGIC_AT:])) & 0xFFFFFFFF)
    return bytes(b)


def patch(entry: bytes, at: int, fmt: str, value: int) -> bytes:
    b = bytearray(entry)
    struct.pack_into(fmt, b, at, value)
    return bytes(b)


def default_records(n: int, *, seed: int = 0, compressible: bool = False) -> list[Rec]:
    out: list[Rec] = []
    for i in range(n):
        key = None if i % 3 == 2 else f"key-{seed}-{i}".encode()
        value = (b"v" * 200 + bytes([i])) if compressible else f"value {seed}/{i}".encode()
        headers: list[tuple[str, bytes | None]] = [("h", b"x"), ("n", None)] if i % 2 else []
        out.append((key, value, headers))
    return out


def v2_batch(
    records: Sequence[Rec],
    *,
    codec: int = NONE,
    base_offset: int = 0,
    leader_epoch: int = 0,
    timestamp: int = TS0,
) -> bytes:
    """A v2 RecordBatch from kafka-python's DefaultRecordBatchBuilder."""
    builder = DefaultRecordBatchBuilder(
        magic=2, compression_type=codec, is_transactional=0,
        producer_id=-1, producer_epoch=-1, base_sequence=-1, batch_size=BIG,
    )  # fmt: skip
    for i, (key, value, headers) in enumerate(records):
        builder.append(i, timestamp=timestamp + i, key=key, value=value, headers=headers)
    entry = bytes(builder.build())
    if codec != NONE:
        attrs = struct.unpack_from(">h", entry, V2_ATTRIBUTES_AT)[0]
        assert attrs & 7 == codec, "kafka-python sent the batch uncompressed; use compressible records"
    entry = set_offset(entry, base_offset)
    return patch(entry, 12, ">i", leader_epoch)


def legacy_messages(
    records: Sequence[tuple[bytes | None, bytes | None]],
    *,
    magic: int,
    codec: int = NONE,
    base_offset: int = 0,
    timestamp: int = TS0,
) -> bytes:
    """v0/v1 message(s) from kafka-python's LegacyRecordBatchBuilder.

    Uncompressed: one entry per record, offsets base_offset.. . Compressed: one wrapper entry whose
    inner offsets are relative (v1) or absolute (v0) and whose offset is the last absolute offset.
    """
    builder = LegacyRecordBatchBuilder(magic=magic, compression_type=codec, batch_size=BIG)
    for i, (key, value) in enumerate(records):
        inner = i if (codec != NONE and magic == 1) else base_offset + i
        builder.append(inner, timestamp=timestamp + i, key=key, value=value)
    data = bytes(builder.build())
    if codec != NONE:
        return set_offset(data, base_offset + len(records) - 1)
    return data


def legacy_records(n: int, *, seed: int = 0) -> list[tuple[bytes | None, bytes | None]]:
    return [(None if i % 2 else f"k{seed}-{i}".encode(), b"message value %d " % i * 8) for i in range(n)]


def raw_record(
    *,
    offset_delta: int = 0,
    timestamp_delta: int = 0,
    key: bytes | None = b"k",
    value: bytes | None = b"value",
    headers: Iterable[tuple[bytes, bytes | None]] = (),
    key_length: int | None = None,
    value_length: int | None = None,
    header_count: int | None = None,
    length: int | None = None,
    extra: bytes = b"",
) -> bytes:
    """One DefaultRecord, every field overridable so that tests can lie about lengths.

    ``key_length``/``value_length``/``header_count``/``length`` replace the encoded field while the
    bytes written stay those of ``key``/``value``/``headers``. ``extra`` is appended to the body.
    """
    headers = list(headers)
    body = bytearray(b"\x00")  # attributes
    body += varint(timestamp_delta) + varint(offset_delta)
    body += varint((-1 if key is None else len(key)) if key_length is None else key_length)
    body += key or b""
    body += varint((-1 if value is None else len(value)) if value_length is None else value_length)
    body += value or b""
    body += varint(len(headers) if header_count is None else header_count)
    for hk, hv in headers:
        body += varint(len(hk)) + hk + varint(-1 if hv is None else len(hv)) + (hv or b"")
    body += extra
    return varint(len(body) if length is None else length) + bytes(body)


def raw_v2_batch(
    records: bytes,
    count: int,
    *,
    base_offset: int = 0,
    attributes: int = 0,
    last_offset_delta: int | None = None,
    timestamp: int = TS0,
    batch_length: int | None = None,
) -> bytes:
    """A v2 batch around already-encoded record bytes, with a valid CRC-32C."""
    header = V2_HEADER.pack(
        base_offset,
        V2_HEADER_SIZE - 12 + len(records) if batch_length is None else batch_length,
        0,
        2,
        0,
        attributes,
        max(count - 1, 0) if last_offset_delta is None else last_offset_delta,
        timestamp,
        timestamp,
        -1,
        -1,
        -1,
        count,
    )
    return fix_v2_crc(header + records)


def entry_bounds(segment: bytes) -> list[tuple[int, int]]:
    """(start, end) of each entry of a well-formed segment, from its size fields."""
    out = []
    pos = 0
    while pos < len(segment):
        (size,) = struct.unpack_from(">i", segment, pos + 8)
        out.append((pos, pos + 12 + size))
        pos += 12 + size
    assert pos == len(segment)
    return out
