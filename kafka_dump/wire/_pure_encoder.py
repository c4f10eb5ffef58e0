"""The pure-Python twin of the encoder's hot loops: v2 records, and v0/v1 message sets.

This is the reference implementation; the compiled ``_encoder`` gives the same bytes, sizes and
errors, and ``kafka_dump.wire`` picks one of them once. The wire layouts are the decoder's (see
``_pure.py`` for a v2 record and ``layout.py`` for a v0/v1 message); every varint is the shortest,
as Kafka writes it, so that decoded entries re-encode to the same bytes.
"""

from __future__ import annotations

from collections.abc import Sequence

from kafka_dump.errors import UnsupportedEncodingError
from kafka_dump.model import Record
from kafka_dump.native import bind, native
from kafka_dump.wire import layout as L
from kafka_dump.wire.checksum import crc32, crc32c
from kafka_dump.wire.varint import encode_varint, varint_size

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
_NULL = encode_varint(-1)
_MESSAGE_OVERHEAD = {0: L.LOG_OVERHEAD + L.LEGACY_MIN_SIZE[0], 1: L.LOG_OVERHEAD + L.LEGACY_MIN_SIZE[1]}


def _v2_deltas(
    record: Record, base_offset: int, base_timestamp: int, log_append_time: bool
) -> tuple[int, int]:
    """A record's (timestampDelta, offsetDelta), refused when they do not fit the format."""
    ts = record.timestamp
    if log_append_time and record.storedTimestamp is not None:
        ts = record.storedTimestamp
    ts_delta = ts - base_timestamp
    if not INT64_MIN <= ts_delta <= INT64_MAX:
        raise UnsupportedEncodingError(
            f"record at offset {record.offset}: timestamp {ts} is too far from the batch's baseTimestamp"
            f" {base_timestamp} for a 64-bit delta"
        )
    offset_delta = record.offset - base_offset
    if not 0 <= offset_delta <= L.INT32_MAX:
        raise UnsupportedEncodingError(
            f"record at offset {record.offset}: offset delta {offset_delta} from baseOffset {base_offset}"
            " is not between 0 and 2^31-1"
        )
    return ts_delta, offset_delta


def encode_v2_records(
    records: Sequence[Record], base_offset: int, base_timestamp: int, log_append_time: bool, /
) -> bytes:
    """The records of a v2 batch (``DefaultRecord.writeTo``), back to back, uncompressed.

    ``log_append_time``: the batch is LogAppendTime, so each record's own time is its
    ``storedTimestamp`` where it has one.
    """
    out = bytearray()
    for r in records:
        ts_delta, offset_delta = _v2_deltas(r, base_offset, base_timestamp, log_append_time)
        body = bytearray(b"\x00")  # attributes: unused
        body += encode_varint(ts_delta)
        body += encode_varint(offset_delta)
        for field in (r.key, r.value):
            if field is None:
                body += _NULL
            else:
                body += encode_varint(len(field))
                body += field
        body += encode_varint(len(r.headers))
        for h in r.headers:
            body += encode_varint(len(h.key))
            body += h.key
            if h.value is None:
                body += _NULL
            else:
                body += encode_varint(len(h.value))
                body += h.value
        out += encode_varint(len(body))
        out += body
    return bytes(out)


def v2_records_size(
    records: Sequence[Record], base_offset: int, base_timestamp: int, log_append_time: bool, /
) -> int:
    """``len(encode_v2_records(...))`` without building the bytes (and refused alike)."""
    total = 0
    for r in records:
        ts_delta, offset_delta = _v2_deltas(r, base_offset, base_timestamp, log_append_time)
        n = 1 + varint_size(ts_delta) + varint_size(offset_delta) + varint_size(len(r.headers))
        for field in (r.key, r.value):
            n += 1 if field is None else varint_size(len(field)) + len(field)
        for h in r.headers:
            n += varint_size(len(h.key)) + len(h.key)
            n += 1 if h.value is None else varint_size(len(h.value)) + len(h.value)
        total += varint_size(n) + n
    return total


def _check_header(header: bytes) -> None:
    if len(header) != L.V2_HEADER_SIZE:
        raise ValueError(f"a v2 header is {L.V2_HEADER_SIZE} bytes, not {len(header)}")


def finish_v2_entry(header: bytes, body: bytes) -> bytes:
    """A v2 log entry: the 61-byte ``header`` and ``body``, with batchLength and the CRC-32C filled in."""
    _check_header(header)
    length = L.V2_MIN_BATCH_LENGTH + len(body)
    if length > L.INT32_MAX:
        raise UnsupportedEncodingError(f"a batch of {length} bytes does not fit Kafka's 32-bit batch length")
    covered = header[L.V2_ATTRIBUTES_OFFSET :]
    crc = crc32c(body, crc32c(covered))
    # One join: the body (most of the entry) is copied once.
    return b"".join(
        (
            header[: L.LOG_ENTRY_SIZE_OFFSET],
            L.INT32.pack(length),
            header[L.LOG_OVERHEAD : L.V2_CRC_OFFSET],
            L.UINT32.pack(crc),
            covered,
            body,
        )
    )


def encode_v2_entry(
    header: bytes, records: Sequence[Record], base_offset: int, base_timestamp: int, log_append_time: bool, /
) -> bytes:
    """An uncompressed v2 log entry: ``header`` then the records, batchLength and CRC-32C filled in."""
    _check_header(header)
    return finish_v2_entry(header, encode_v2_records(records, base_offset, base_timestamp, log_append_time))


def _legacy_fields(record: Record, magic: int, offset_shift: int, log_append_time: bool) -> tuple[int, int]:
    """A message's (offset, timestamp) as written, refused when the format cannot carry the record."""
    if record.headers:
        raise UnsupportedEncodingError(
            f"record at offset {record.offset} has headers, which magic {magic} cannot carry"
        )
    if magic == 0 and record.timestamp != -1:
        raise UnsupportedEncodingError(
            f"record at offset {record.offset} has timestamp {record.timestamp}, which magic 0 cannot carry"
        )
    offset = record.offset - offset_shift
    ts = record.timestamp
    if log_append_time and record.storedTimestamp is not None:
        ts = record.storedTimestamp
    if not (INT64_MIN <= offset <= INT64_MAX and INT64_MIN <= ts <= INT64_MAX):
        raise UnsupportedEncodingError(f"record at offset {record.offset}: offset or timestamp past 64 bits")
    return offset, ts


def encode_legacy_messages(
    records: Sequence[Record], magic: int, attributes: int, offset_shift: int, log_append_time: bool, /
) -> bytes:
    """v0/v1 messages (``LegacyRecord.write``), one per record, each with its log overhead and CRC-32.

    Each message's offset is the record's less ``offset_shift`` (a v1 wrapper's inner offsets are
    relative), its attributes ``attributes``; under ``log_append_time`` a record's own time is its
    ``storedTimestamp`` where it has one. Records with headers, or with a timestamp in v0, are refused.
    """
    out = bytearray()
    entry = L.LOG_ENTRY
    for r in records:
        offset, ts = _legacy_fields(r, magic, offset_shift, log_append_time)
        body = bytearray((magic, attributes))
        if magic == 1:
            body += L.INT64.pack(ts)
        for field in (r.key, r.value):
            if field is None:
                body += L.INT32.pack(-1)
            else:
                body += L.INT32.pack(len(field))
                body += field
        out += entry.pack(offset, 4 + len(body))
        out += crc32(body).to_bytes(4, "big")
        out += body
    return bytes(out)


def legacy_messages_size(records: Sequence[Record], magic: int, /) -> int:
    """``len(encode_legacy_messages(records, magic, ..., 0, False))`` without building the bytes (and
    refused alike)."""
    overhead = _MESSAGE_OVERHEAD[magic]
    total = 0
    for r in records:
        _legacy_fields(r, magic, 0, False)
        total += overhead + (0 if r.key is None else len(r.key)) + (0 if r.value is None else len(r.value))
    return total


# -- v1 inner messages straight to v2 records (kdump convert's fast path) -------------------------

_V1_SMALLEST = L.LOG_OVERHEAD + L.LEGACY_MIN_SIZE[1]
_Inner = tuple[int, int, bytes | None, bytes | None]  # offset, timestamp, key, value


def _sound_inner(data: bytes, pos: int) -> tuple[_Inner, int] | None:
    """The inner message at ``data[pos]`` and the position after it, when it is a plain, sound v1
    message the decoder reads with no problem (uncompressed, attributes 0, CRC valid, nothing after
    its value); None for anything else."""
    if len(data) - pos < _V1_SMALLEST:
        return None
    offset, size, crc, magic, attributes = L.LEGACY_HEADER.unpack_from(data, pos)
    if size < L.LEGACY_MIN_SIZE[1] or size > len(data) - pos - L.LOG_OVERHEAD:
        return None
    end = pos + L.LOG_OVERHEAD + size
    if magic != 1 or attributes != 0 or crc32(memoryview(data)[pos + L.MAGIC_OFFSET : end]) != crc:
        return None
    (timestamp,) = L.INT64.unpack_from(data, pos + L.LEGACY_V1_TIMESTAMP_OFFSET)
    q = pos + L.LEGACY_V1_TIMESTAMP_OFFSET + L.INT64.size
    fields: list[bytes | None] = []
    for _ in range(2):
        if end - q < L.INT32.size:
            return None
        (n,) = L.INT32.unpack_from(data, q)
        q += L.INT32.size
        if n > end - q:
            return None
        fields.append(None if n < 0 else data[q : q + n])
        q += max(n, 0)
    if q != end:
        return None
    return (offset, timestamp, fields[0], fields[1]), end


def v1_inner_to_v2(
    data: bytes, wrapper_offset: int, max_records: int, /
) -> tuple[bytes, int, int, int, int, int] | None:
    """The v2 records (one batch, no headers) for the inner messages of a decompressed v1 wrapper
    with CreateTime, and (count, first offset, last offset, baseTimestamp, maxTimestamp); None when
    any inner message is not sound, there are more than ``max_records``, the wrapper's offset is
    below the last inner one, or a delta does not fit one batch: ``convert`` then takes the
    decoder's Records the slow way, which reports or refuses such input.

    Offsets are placed as the decoder places them (``decode_legacy_inner``): relative to the last
    inner message, whose absolute offset is the wrapper's, except that a wrapper offset of 0 means base 0.
    """
    inner: list[_Inner] = []
    pos = 0
    while pos < len(data):
        found = _sound_inner(data, pos)
        if found is None or len(inner) >= max_records:
            return None
        message, pos = found
        inner.append(message)
    if not inner:
        return None
    last = inner[-1][0]
    if wrapper_offset != 0 and wrapper_offset < last:
        return None
    base = wrapper_offset - last if wrapper_offset != 0 else 0
    first_offset, base_ts = base + inner[0][0], inner[0][1]
    out = bytearray()
    previous = None
    for offset, ts, key, value in inner:
        od, td = base + offset - first_offset, ts - base_ts
        if previous is not None and offset <= previous:
            return None  # offsets that do not grow: the reader's Records, and verify-crc, say so
        previous = offset
        if not (
            0 <= od <= L.INT32_MAX
            and INT64_MIN <= td <= INT64_MAX
            and INT64_MIN <= base + offset <= INT64_MAX
        ):
            return None
        body = bytearray(b"\0")
        body += encode_varint(td) + encode_varint(od)
        for field in (key, value):
            body += _NULL if field is None else encode_varint(len(field)) + field
        body += b"\0"
        out += encode_varint(len(body)) + body
    times = [ts for _, ts, _, _ in inner]
    return bytes(out), len(inner), first_offset, base + last, base_ts, max(times)


encode_v2_records = bind(encode_v2_records)(native.encode_v2_records if native else None)
v2_records_size = bind(v2_records_size)(native.v2_records_size if native else None)
encode_v2_entry = bind(encode_v2_entry)(native.encode_v2_entry if native else None)
encode_legacy_messages = bind(encode_legacy_messages)(native.encode_legacy_messages if native else None)
legacy_messages_size = bind(legacy_messages_size)(native.legacy_messages_size if native else None)
v1_inner_to_v2 = bind(v1_inner_to_v2)(native.v1_inner_to_v2 if native else None)
