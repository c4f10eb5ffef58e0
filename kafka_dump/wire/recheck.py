"""Do the v2 records ``kdump convert`` wrote hold exactly the Records meant (twin: ``native/recheck.c``)?
Same offset, reported and own (``storedTimestamp``) time, key, value and headers; unreadable differs."""

from __future__ import annotations

from kafka_dump.errors import CorruptRecordError
from kafka_dump.model import Record, new_record
from kafka_dump.native import bind, native
from kafka_dump.wire import layout as L
from kafka_dump.wire.records import RawRecord, v2_records

_INT64 = range(-(2**63), 2**63)


def _same_int(obj: object, value: int) -> bool:
    return isinstance(obj, int) and obj == value


def _same_bytes(obj: object, data: bytes | None) -> bool:
    return obj is None if data is None else isinstance(obj, bytes) and obj == data


def _same(rec: Record, base_offset: int, base_timestamp: int, lat: int | None, raw: RawRecord) -> bool:
    """Whether the record read (``raw``) is ``rec``."""
    _, _, _, ts_delta, offset_delta, key, value, headers = raw
    offset, own = base_offset + offset_delta, base_timestamp + ts_delta
    return (
        offset in _INT64
        and own in _INT64
        and _same_int(rec.offset, offset)
        and _same_int(rec.timestamp, own if lat is None else lat)
        and (rec.storedTimestamp is None or _same_int(rec.storedTimestamp, own))
        and _same_bytes(rec.key, key)
        and _same_bytes(rec.value, value)
        and isinstance(rec.headers, tuple)
        and len(rec.headers) == len(headers)
        and all(
            _same_bytes(h.key, r.key) and _same_bytes(h.value, r.value)
            for h, r in zip(rec.headers, headers, strict=True)
        )
    )


def same_v2_records(
    data: bytes,
    pos: int,
    end: int,
    base_offset: int,
    base_timestamp: int,
    log_append_time: int | None,
    expected: tuple[Record, ...],
    /,
) -> int:
    """The index of the first record of ``data[pos:end]`` that differs from ``expected`` (``len`` of
    it when bytes are left after the last), or -1."""
    if not 0 <= pos <= end <= len(data):
        raise ValueError("pos and end must satisfy 0 <= pos <= end <= len(data)")
    i = 0
    try:
        for raw in v2_records(data, pos, end, len(expected)):
            if not _same(expected[i], base_offset, base_timestamp, log_append_time, raw):
                return i
            i += 1
    except CorruptRecordError:
        return i
    return -1


def _inner_messages(inner: bytes) -> list[tuple[int, int, bytes | None, bytes | None]] | None:
    """(offset, timestamp, key, value) of every v1 inner message, or None when one cannot be read."""
    found = []
    at = 0
    while at < len(inner):
        if len(inner) - at < 12 + 22:
            return None
        offset, size = L.LOG_ENTRY.unpack_from(inner, at)
        if size < 22 or size > len(inner) - at - 12:
            return None
        end = at + 12 + size
        (ts,) = L.INT64.unpack_from(inner, at + 18)
        q = at + 26
        fields: list[bytes | None] = []
        for _ in range(2):
            if end - q < 4:
                return None
            (n,) = L.INT32.unpack_from(inner, q)
            q += 4
            if n > end - q:
                return None
            fields.append(None if n < 0 else inner[q : q + n])
            q += max(n, 0)
        found.append((offset, ts, fields[0], fields[1]))
        at = end
    return found


def same_as_v1_inner(
    data: bytes,
    pos: int,
    end: int,
    base_offset: int,
    base_timestamp: int,
    inner: bytes,
    wrapper_offset: int,
    /,
) -> tuple[int, int, int, int]:
    """The index of the first v2 record of ``data[pos:end]`` that differs from the v1 inner messages
    of a decompressed wrapper (offsets relative to the last, whose offset is the wrapper's unless 0),
    or is not above the previous one (``len`` of them when bytes are left), else -1; the records found
    the same; their largest time and last offset (``INT64_MIN`` when none was)."""
    if not 0 <= pos <= end <= len(data):
        raise ValueError("pos and end must satisfy 0 <= pos <= end <= len(data)")
    latest = last_read = -(2**63)
    messages = _inner_messages(inner)
    if messages is None:
        return 0, 0, latest, last_read
    base = wrapper_offset - messages[-1][0] if wrapper_offset != 0 and messages else 0
    i = 0
    try:
        for raw in v2_records(data, pos, end, len(messages)):
            offset, ts, key, value = messages[i]
            want = new_record(base + offset, ts, key, value, (), -1, 0)
            if (
                not _same(want, base_offset, base_timestamp, None, raw)
                or raw[2] != 0  # attributes: unused, and the transcoder writes 0
                or (i > 0 and base + offset <= last_read)
            ):
                return i, i, latest, last_read
            latest = max(latest, ts)  # the record's own time, which it was just found to hold
            last_read = base + offset
            i += 1
    except CorruptRecordError:
        return i, i, latest, last_read
    return -1, len(messages), latest, last_read


same_v2_records = bind(same_v2_records)(native.same_v2_records if native else None)
same_as_v1_inner = bind(same_as_v1_inner)(native.same_as_v1_inner if native else None)
