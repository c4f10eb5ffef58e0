"""The encoder's hot loops, v2 records and v0/v1 message sets (the reference twin of ``encoder.c``).

Every varint is the shortest, as Kafka writes it, so that decoded entries re-encode to the same bytes.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import islice

from kafka_dump.errors import CorruptRecordError, UnsupportedEncodingError
from kafka_dump.model import Record
from kafka_dump.native import bind, native
from kafka_dump.wire import layout as L
from kafka_dump.wire.checksum import crc32c
from kafka_dump.wire.layout import INT64_MAX, INT64_MIN
from kafka_dump.wire.message import encode_message, inner_base, inner_messages
from kafka_dump.wire.varint import encode_varint, varint_size

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
    """The records of a v2 batch (``DefaultRecord.writeTo``), back to back, uncompressed; under
    ``log_append_time`` a record's own time is its ``storedTimestamp`` where it has one."""
    out = bytearray()
    for r in records:
        ts_delta, offset_delta = _v2_deltas(r, base_offset, base_timestamp, log_append_time)
        body = bytearray(b"\x00")  # attributes: unused
        body += encode_varint(ts_delta)
        body += encode_varint(offset_delta)
        for field in (r.key, r.value):
            body += _NULL if field is None else encode_varint(len(field)) + field
        body += encode_varint(len(r.headers))
        for h in r.headers:
            body += encode_varint(len(h.key)) + h.key
            body += _NULL if h.value is None else encode_varint(len(h.value)) + h.value
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
    head = header[: L.LOG_ENTRY_SIZE_OFFSET] + L.INT32.pack(length) + header[L.LOG_OVERHEAD : L.V2_CRC_OFFSET]
    return b"".join((head, L.UINT32.pack(crc), covered, body))


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
    """v0/v1 messages (``LegacyRecord.write``), one per record, each offset the record's less
    ``offset_shift`` (a v1 wrapper's inner offsets are relative); ``log_append_time`` as in
    ``encode_v2_records``."""
    out = bytearray()
    for r in records:
        offset, ts = _legacy_fields(r, magic, offset_shift, log_append_time)
        out += encode_message(offset, magic, attributes, ts, r.key, r.value)
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


def v1_inner_to_v2(
    data: bytes, wrapper_offset: int, max_records: int, /
) -> tuple[bytes, int, int, int, int, int] | None:
    """The v2 records (one batch, no headers) for the inner messages of a decompressed v1 CreateTime
    wrapper, placed by ``message.inner_base``, and (count, first offset, last offset, baseTimestamp,
    maxTimestamp); None when an inner message is not sound, there are over ``max_records`` or a delta
    does not fit one batch: ``convert`` then takes the slow way, which reports or refuses it."""
    try:
        inner = list(islice(inner_messages(data, 1), max_records + 1))  # one past: too many
    except CorruptRecordError:
        return None
    if not inner or len(inner) > max_records or any(m.attributes or not m.crc_valid for m in inner):
        return None
    last = inner[-1].offset
    base, sound = inner_base(1, wrapper_offset, last)
    if not sound:
        return None
    first_offset, base_ts = base + inner[0].offset, inner[0].timestamp
    out = bytearray()
    previous = None
    for m in inner:
        offset, ts, key, value = m.offset, m.timestamp, m.key, m.value
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
    return bytes(out), len(inner), first_offset, base + last, base_ts, max(m.timestamp for m in inner)


encode_v2_records = bind(encode_v2_records)(native.encode_v2_records if native else None)
v2_records_size = bind(v2_records_size)(native.v2_records_size if native else None)
encode_v2_entry = bind(encode_v2_entry)(native.encode_v2_entry if native else None)
encode_legacy_messages = bind(encode_legacy_messages)(native.encode_legacy_messages if native else None)
legacy_messages_size = bind(legacy_messages_size)(native.legacy_messages_size if native else None)
v1_inner_to_v2 = bind(v1_inner_to_v2)(native.v1_inner_to_v2 if native else None)
