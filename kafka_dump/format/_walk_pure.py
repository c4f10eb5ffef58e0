"""The pure-Python twin of the validating record walk (the reference); see ``walk.py`` for what it is for.

The framing checks and their reasons and positions are exactly those of ``decode_v2_records`` (so
``dump`` and ``verify-crc`` report the same problem at the same byte); the walk adds two of its own,
after a record's fields have been read: offset deltas strictly increasing from 0, none past the
batch's ``lastOffsetDelta``. ``_walk.c`` is the compiled twin.
"""

from __future__ import annotations

from kafka_dump.errors import CorruptRecordError
from kafka_dump.format.layout import V2_RECORD_MIN_LENGTH
from kafka_dump.format.varint import read_zigzag

# records, keyBytes, valueBytes, headerBytes, nullKeys, nullValues, headers, maxTimestampDelta,
# error (reason or None), errorPosition: the fields of ``walk.RecordWalk``.
RawWalk = tuple[int, int, int, int, int, int, int, "int | None", "str | None", int]


def walk_v2_records(data: bytes, pos: int, end: int, count: int, last_offset_delta: int) -> RawWalk:
    """Walk ``count`` records in ``data[pos:end]`` (``end <= len(data)``) without building them."""
    if pos < 0 or end < pos or end > len(data):
        raise ValueError("pos and end must satisfy 0 <= pos <= end <= len(data)")
    varint = read_zigzag
    keys = values = header_bytes = null_keys = null_values = headers = 0
    max_ts: int | None = None
    previous = -1
    first = pos
    i = 0
    try:
        while i < count:
            if pos >= end:
                raise CorruptRecordError(f"batch declares {count} records but holds {i}", position=first)
            start = pos
            try:
                length, pos = varint(data, pos, end, 5)
                body_end = pos + length
                if length < V2_RECORD_MIN_LENGTH or body_end > end:
                    raise CorruptRecordError(f"record length {length} does not fit the batch")
                pos += 1  # attributes: unused
                ts_delta, pos = varint(data, pos, body_end, 10)
                offset_delta, pos = varint(data, pos, body_end, 5)
                key, pos = varint(data, pos, body_end, 5)
                if key > body_end - pos:
                    raise CorruptRecordError(f"key length {key} runs past the record")
                if key > 0:
                    pos += key
                value, pos = varint(data, pos, body_end, 5)
                if value > body_end - pos:
                    raise CorruptRecordError(f"value length {value} runs past the record")
                if value > 0:
                    pos += value
                record_header_bytes = 0
                h, pos = varint(data, pos, body_end, 5)
                if h < 0 or h > body_end - pos:
                    raise CorruptRecordError(f"invalid header count {h}")
                for _ in range(h):
                    n, pos = varint(data, pos, body_end, 5)
                    if n < 0:
                        raise CorruptRecordError("header key is null")
                    if n > body_end - pos:
                        raise CorruptRecordError(f"header key length {n} runs past the record")
                    record_header_bytes += n
                    pos += n
                    n, pos = varint(data, pos, body_end, 5)
                    if n > body_end - pos:
                        raise CorruptRecordError(f"header value length {n} runs past the record")
                    if n > 0:
                        record_header_bytes += n
                        pos += n
                if pos != body_end:
                    raise CorruptRecordError(
                        f"record declares {length} bytes but its fields take {length + pos - body_end}"
                    )
                if offset_delta <= previous:
                    raise CorruptRecordError(
                        f"record offset delta {offset_delta} is not above the previous one ({previous})"
                    )
                if offset_delta > last_offset_delta:
                    raise CorruptRecordError(
                        f"record offset delta {offset_delta} is past the batch's lastOffsetDelta {last_offset_delta}"
                    )
            except CorruptRecordError as err:
                # Every error inside a record is reported at the record's start.
                raise CorruptRecordError(err.reason, position=start) from None
            previous = offset_delta
            if key < 0:
                null_keys += 1
            else:
                keys += key
            if value < 0:
                null_values += 1
            else:
                values += value
            header_bytes += record_header_bytes
            headers += h
            if max_ts is None or ts_delta > max_ts:
                max_ts = ts_delta
            i += 1
        if pos != end:
            raise CorruptRecordError(
                f"{end - pos} bytes remain after the batch's {count} declared records", position=pos
            )
    except CorruptRecordError as err:
        where = err.position if err.position is not None else first
        return (i, keys, values, header_bytes, null_keys, null_values, headers, max_ts, err.reason, where)
    return (i, keys, values, header_bytes, null_keys, null_values, headers, max_ts, None, 0)
