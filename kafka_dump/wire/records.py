"""The one Python reader of v2 records, which every pure twin reads through.

v2 record (``DefaultRecord``), every integer a zigzag varint unless noted:

    length            varint   bytes after this field
    attributes        int8     unused
    timestampDelta    varlong
    offsetDelta       varint
    keyLength         varint   negative = null key
    key
    valueLength       varint   negative = null value
    value
    headerCount       varint
    headers           [keyLength varint, key, valueLength varint (negative = null), value]...
"""

from __future__ import annotations

from collections.abc import Iterator

from kafka_dump.errors import CorruptRecordError
from kafka_dump.model import Check, Header, new_header
from kafka_dump.wire import layout as L
from kafka_dump.wire.varint import read_zigzag

_EMPTY: tuple[Header, ...] = ()

# start, end, attributes, timestampDelta, offsetDelta, key, value, headers: one record as read.
RawRecord = tuple[int, int, int, int, int, "bytes | None", "bytes | None", tuple[Header, ...]]
Spans = list[tuple[str, int, int]]  # ("key" | "value" | "header", start, length) of each non-null field read


def v2_records(
    data: bytes, pos: int, end: int, count: int, spans: Spans | None = None
) -> Iterator[RawRecord]:
    """The ``count`` records in ``data[pos:end]`` (``end <= len(data)``), one at a time, as read. An
    error inside a record is raised at the record's start; a record short of ``count`` at the records'
    start (the count is what is wrong); bytes left after the last record where they begin. ``spans``
    is told where each key, value and header value lies (redact replaces them in place)."""
    varint = read_zigzag
    first = pos
    for i in range(count):
        if pos >= end:
            raise CorruptRecordError(
                f"batch declares {count} records but holds {i}", position=first, check=Check.COUNT_MISMATCH,
                expected=count, found=i,
            )  # fmt: skip
        start = pos
        try:
            length, pos = varint(data, pos, end, L.VARINT_MAX_BYTES)
            body_end = pos + length
            if length < L.V2_RECORD_MIN_LENGTH or body_end > end:
                raise CorruptRecordError(
                    f"record length {length} does not fit the batch", check=Check.RECORD_LENGTH, found=length
                )
            attributes = data[pos]
            ts_delta, pos = varint(data, pos + 1, body_end, L.VARLONG_MAX_BYTES)
            offset_delta, pos = varint(data, pos, body_end, L.VARINT_MAX_BYTES)
            key, pos = _field(data, pos, body_end, "key")
            if spans is not None and key is not None:
                spans.append(("key", pos - len(key), len(key)))
            value, pos = _field(data, pos, body_end, "value")
            if spans is not None and value is not None:
                spans.append(("value", pos - len(value), len(value)))
            if pos < body_end and data[pos] == 0:
                headers = _EMPTY
                pos += 1
            else:
                headers, pos = _headers(data, pos, body_end, spans)
            if pos != body_end:
                raise CorruptRecordError(
                    f"record declares {length} bytes but its fields take {length + pos - body_end}",
                    check=Check.RECORD_LENGTH, expected=length, found=length + pos - body_end,
                )  # fmt: skip
        except CorruptRecordError as err:
            raise err.restated(err.reason, start) from None
        yield start, body_end, attributes, ts_delta, offset_delta, key, value, headers
    if pos != end:
        raise CorruptRecordError(
            f"{end - pos} bytes remain after the batch's {count} declared records", position=pos,
            check=Check.COUNT_MISMATCH,
        )  # fmt: skip


def check_offset_delta(at: int, offset_delta: int, last_offset_delta: int) -> None:
    """A record's offset delta must not pass its batch's ``lastOffsetDelta``."""
    if offset_delta > last_offset_delta:
        raise CorruptRecordError(
            f"record offset delta {offset_delta} is past the batch's lastOffsetDelta {last_offset_delta}",
            position=at, check=Check.OFFSET_DELTA, expected=last_offset_delta, found=offset_delta,
        )  # fmt: skip


def check_timestamp(at: int, base_timestamp: int, timestamp_delta: int) -> None:
    """A record's timestamp (the batch's base plus its delta) must be an int64."""
    if not L.INT64_MIN <= base_timestamp + timestamp_delta <= L.INT64_MAX:
        raise past_int64("timestamp", timestamp_delta, "baseTimestamp", base_timestamp, at, Check.TIMESTAMP)


def past_int64(field: str, delta: int, base_name: str, base: int, at: int, check: str) -> CorruptRecordError:
    """A record whose offset or timestamp (the batch's base plus the record's delta) is past Kafka's
    int64: corrupt, as Kafka would wrap it to some other number."""
    return CorruptRecordError(
        f"record {field} delta {delta} puts its {field} past int64 ({base_name} {base})",
        position=at, check=check, found=delta,
    )  # fmt: skip


def _too_many_headers(count: int) -> CorruptRecordError:
    """A record with more headers than the decoder builds for a whole batch: a limit, not corruption,
    that bounds the memory of every reader of the record (each builds or walks its headers)."""
    return CorruptRecordError(
        f"record has {count} headers, more than kdump reads in one batch ({L.MAX_DECODED_PER_BATCH})",
        check=Check.TOO_LARGE, expected=L.MAX_DECODED_PER_BATCH, found=count,
    )  # fmt: skip


def _field(data: bytes, pos: int, body_end: int, what: str) -> tuple[bytes | None, int]:
    """A length-prefixed key or value (a negative length: null), within the record."""
    n, pos = read_zigzag(data, pos, body_end, L.VARINT_MAX_BYTES)
    if n < 0:
        return None, pos
    if n > body_end - pos:
        raise CorruptRecordError(f"{what} length {n} runs past the record", check=Check.FIELD_LENGTH, found=n)
    return data[pos : pos + n], pos + n


def _headers(data: bytes, pos: int, body_end: int, spans: Spans | None) -> tuple[tuple[Header, ...], int]:
    count, pos = read_zigzag(data, pos, body_end, L.VARINT_MAX_BYTES)
    if count < 0 or count > body_end - pos:
        raise CorruptRecordError(f"invalid header count {count}", check=Check.HEADER_COUNT, found=count)
    if count > L.MAX_DECODED_PER_BATCH:
        raise _too_many_headers(count)
    headers = []
    for _ in range(count):
        key, pos = _field(data, pos, body_end, "header key")
        if key is None:
            raise CorruptRecordError("header key is null", check=Check.FIELD_LENGTH)
        value, pos = _field(data, pos, body_end, "header value")
        if spans is not None and value is not None:
            spans.append(("header", pos - len(value), len(value)))
        headers.append(new_header(key, value))
    return tuple(headers), pos
