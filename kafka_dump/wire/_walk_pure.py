"""The validating walks of ``verify-crc`` (the reference twin of ``walk.c``), which build no Record.

``walk_v2_records`` reads with the decoder's ``records.v2_records`` (``dump`` and ``verify-crc`` report
the same byte) and checks offset deltas grow, none past ``lastOffsetDelta``; ``walk_entries`` walks entries
(of a buffer, or of a file it reads itself, headers only, for ``ls``).
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Callable
from typing import Any

from kafka_dump.errors import CorruptRecordError
from kafka_dump.model import Batch, Check
from kafka_dump.native import bind, native
from kafka_dump.wire import layout as L
from kafka_dump.wire.message import Message, inner_base, inner_messages
from kafka_dump.wire.records import check_offset_delta, check_timestamp, v2_records

# records, keyBytes, valueBytes, headerBytes, nullKeys, nullValues, headers, maxTimestampDelta,
# error (reason or None), errorPosition: the fields of ``v2.RecordWalk``.
RawWalk = tuple[int, int, int, int, int, int, int, "int | None", "str | None", int]


def walk_v2_records(
    data: bytes, pos: int, end: int, count: int, last_offset_delta: int, base_timestamp: int, /
) -> RawWalk:
    """Walk ``count`` records in ``data[pos:end]`` (``end <= len(data)``) without building them."""
    if pos < 0 or end < pos or end > len(data):
        raise ValueError("pos and end must satisfy 0 <= pos <= end <= len(data)")
    found: list[Any] = [0, 0, 0, 0, 0, 0, 0, None]
    try:
        _walk(data, pos, end, count, last_offset_delta, base_timestamp, found)
    except CorruptRecordError as err:
        return (*found, err.reason, err.position or 0)
    return (*found, None, 0)


def walk_error(
    data: bytes, pos: int, end: int, count: int, last_offset_delta: int, base_timestamp: int
) -> CorruptRecordError | None:
    """The error a walk of ``data[pos:end]`` finds, as raised, with its check."""
    try:
        _walk(data, pos, end, count, last_offset_delta, base_timestamp, [0, 0, 0, 0, 0, 0, 0, None])
    except CorruptRecordError as err:
        return err
    return None


def _walk(
    data: bytes, pos: int, end: int, count: int, last_delta: int, base_ts: int, found: list[Any]
) -> None:
    """Add each whole record to ``found`` (the first eight fields of ``RawWalk``); raise at the first
    error."""
    previous = -1
    for start, _, _, ts_delta, offset_delta, key, value, headers in v2_records(data, pos, end, count):
        if offset_delta <= previous:
            raise CorruptRecordError(
                f"record offset delta {offset_delta} is not above the previous one ({previous})", position=start,
                check=Check.OFFSET_DELTA, found=offset_delta,
            )  # fmt: skip
        check_offset_delta(start, offset_delta, last_delta)
        check_timestamp(start, base_ts, ts_delta)
        previous = offset_delta
        records, keys, values, header_bytes, null_keys, null_values, n_headers, max_ts = found
        found[:] = (
            records + 1,
            keys if key is None else keys + len(key),
            values if value is None else values + len(value),
            header_bytes + sum(len(h.key) + len(h.value or b"") for h in headers),
            null_keys + (key is None),
            null_values + (value is None),
            n_headers + len(headers),
            ts_delta if max_ts is None or ts_delta > max_ts else max_ts,
        )


# used bytes, batches, records, offset gaps, last offset (None before any entry), after damage
RawEntryWalk = tuple[int, int, int, int, "int | None", bool]
# codec id, payload -> decompressed bytes (raises on a payload that does not decompress).
Decompress = Callable[[int, memoryview], bytes]
Checksum = Callable[[memoryview], int]


def no_payload(codec: int, payload: memoryview) -> bytes:
    """The ``Decompress`` of a walk that reads headers only (shallow, or ``file_end``): never called."""
    raise AssertionError("a walk of headers decompresses nothing")


# What each entry's header says: position in the file, baseOffset (a lower bound for a wrapper walked
# shallow), lastOffset, maxTimestamp (what the index check needs), then the entry's size, magic,
# attributes, first timestamp (v2 baseTimestamp; a v0/v1 message's own), records (-1 where only a
# wrapper's payload would tell) and producerId (-1 for none, and for v0/v1): what ``ls`` lists; then
# the stored CRC, partitionLeaderEpoch, producerEpoch and baseSequence (-1 for v0/v1): what ``diff``
# also compares.
EntryRow = tuple[int, int, int, int, int, int, int, int, int, int, int, int, int, int]

_PREFIX = L.MAGIC_OFFSET + 1


def batch_row(b: Batch, low: int, records: int) -> EntryRow:
    """The ``EntryRow`` the walk gives an entry, made of the batch the segment reader read of it, with
    the caller's base offset and record count (a v0/v1 batch holds -1 in the v2-only fields)."""
    return (
        b.position,
        low,
        b.lastOffset,
        b.maxTimestamp,
        b.sizeInBytes,
        b.magic,
        b.attributes,
        b.baseTimestamp,
        records,
        b.producerId,
        b.crc,
        b.partitionLeaderEpoch,
        b.producerEpoch,
        b.baseSequence,
    )


def _inner_span(data: bytes, magic: int, crc32: Checksum | None) -> tuple[int, int, int] | None:
    """(count, first offset, last offset) of a wrapper's decompressed inner messages when every one
    reads and its CRC-32 holds; None otherwise (the decoder then reports what is wrong)."""
    view = memoryview(data)
    at = count = first = last = 0
    try:
        for m in inner_messages(data, magic):  # one at a time, never held together
            if crc32 is not None and crc32(view[at + L.MAGIC_OFFSET : at + m.size]) != m.crc:
                return None
            at += m.size
            first = m.offset if not count else first
            last = m.offset
            count += 1
    except CorruptRecordError:
        return None
    return (count, first, last) if count else None


def walk_entries(
    data: bytes | bytearray | mmap.mmap | int,
    pos: int,
    end: int,
    file_pos: int,
    deep: bool,
    last: int | None,
    after_damage: bool,
    max_records: int,
    entry_limit: int,
    crc32c: Checksum | None,
    crc32: Checksum | None,
    decompress: Decompress,
    rows: list[EntryRow] | None,
    file_end: int | None = None,
    max_entries: int | None = None,
    /,
) -> RawEntryWalk:
    """Walk the sound entries at ``data[pos:end]`` (file position ``file_pos + pos``): whole, framed, CRC
    holding, offsets after ``last``, and (``deep``) records or inner messages clean; stop before anything
    else (or a deep v2 control batch) for the slow way, or after ``max_entries`` entries. Shallow, a
    v0/v1 wrapper is not decompressed (records not counted, ordered by its last offset). ``rows`` gets
    each entry's ``EntryRow``.

    With ``file_end`` (where the file ends, in ``data``'s positions) the walk reads headers only, as
    ``ls`` does: an entry is taken when its header lies in ``data[pos:end]`` and it ends by ``file_end``,
    so the bytes used may pass ``end``; no CRC is computed and nothing decompressed (``deep`` is moot).

    ``data`` may instead be a file descriptor, read from ``pos`` up to ``end`` (file positions) with
    ``pread``: the walk then reads headers only (``file_end`` is required) and reads the file itself,
    a window where entries are small and one header after a large one (``_read_size``), so the bytes
    read grow with the entries, not the file. Each read's entries are taken as from a buffer; the walk
    stops where a fresh read takes none (declined, or cut short: the file shrank under it)."""
    if isinstance(data, int):
        return _walk_file(
            data,
            pos,
            end,
            file_pos,
            last,
            after_damage,
            max_records,
            entry_limit,
            rows,
            file_end,
            max_entries,
        )
    if pos < 0 or end < pos or end > len(data):
        raise ValueError("pos and end must satisfy 0 <= pos <= end <= len(data)")
    return _walk_buffer(
        data,
        pos,
        end,
        file_pos,
        deep,
        last,
        after_damage,
        max_records,
        entry_limit,
        crc32c,
        crc32,
        decompress,
        rows,
        file_end,
        max_entries,
    )[:6]


# How a walk of a file descriptor reads (the compiled twin reads alike): a window where entries are
# small or the rest of the file is; one header (61 bytes for v2, at most 34 for v0/v1) after an entry
# this large, so that a header read fetches its page, not the payloads after it.
_WINDOW = 256 * 1024
_HEADER_READ = 64
_LARGE_ENTRY = 4096
_SMALL_REST = 16 * 1024


def _read_size(rest: int, last_size: int) -> int:
    """The bytes the next read asks for: ``rest`` of the file is left, the last entry held ``last_size``."""
    return min(rest, _WINDOW if rest <= _SMALL_REST or last_size < _LARGE_ENTRY else _HEADER_READ)


def _walk_file(
    fd: int,
    pos: int,
    end: int,
    file_pos: int,
    last: int | None,
    after_damage: bool,
    max_records: int,
    entry_limit: int,
    rows: list[EntryRow] | None,
    file_end: int | None,
    max_entries: int | None,
) -> RawEntryWalk:
    """``walk_entries`` over the file ``fd`` from ``pos`` to ``end``: each read walked as a buffer."""
    if fd < 0 or pos < 0 or end < pos or file_end is None:
        raise ValueError("a walk of a file needs fd >= 0, 0 <= pos <= end and file_end")
    at = pos
    batches = records = gaps = 0
    size = _LARGE_ENTRY  # the first read is a header's, unless the file is small
    while at < end and (max_entries is None or batches < max_entries):
        data = os.pread(fd, _read_size(end - at, size), at)
        used, b, r, g, last, after_damage, size = _walk_buffer(
            data,
            0,
            len(data),
            file_pos + at,
            False,
            last,
            after_damage,
            max_records,
            entry_limit,
            None,
            None,
            no_payload,
            rows,
            file_end - at,
            None if max_entries is None else max_entries - batches,
        )
        if not used:
            break
        at += used
        batches, records, gaps = batches + b, records + r, gaps + g
    return at - pos, batches, records, gaps, last, after_damage


def _walk_buffer(
    data: bytes | bytearray | mmap.mmap,
    pos: int,
    end: int,
    file_pos: int,
    deep: bool,
    last: int | None,
    after_damage: bool,
    max_records: int,
    entry_limit: int,
    crc32c: Checksum | None,
    crc32: Checksum | None,
    decompress: Decompress,
    rows: list[EntryRow] | None,
    file_end: int | None,
    max_entries: int | None,
) -> tuple[int, int, int, int, int | None, bool, int]:
    """``walk_entries`` over a buffer, and the size of the last entry taken (0 for none)."""
    headers = file_end is not None
    limit = end if file_end is None else file_end
    view = memoryview(data)
    start = pos
    batches = records = gaps = taken = 0
    while end - pos >= _PREFIX and (max_entries is None or batches < max_entries):
        offset, length = L.LOG_ENTRY.unpack_from(data, pos)
        magic = data[pos + L.MAGIC_OFFSET]
        entry = L.LOG_OVERHEAD + length
        if length < L.LEGACY_V0_MIN_SIZE or entry > limit - pos or entry > entry_limit:
            break
        entry_end = pos + entry
        base: int | None
        producer = epoch = p_epoch = sequence = -1
        if magic == 2:
            if entry < L.V2_HEADER_SIZE or end - pos < L.V2_HEADER_SIZE:
                break
            head = L.V2_HEADER.unpack_from(data, pos)
            epoch, _, crc, attributes, last_delta, base_ts, max_ts, producer, p_epoch, sequence = head[2:12]
            count = head[12]
            if count < 0 or count > max_records or last_delta < 0:
                break
            if (
                not headers
                and crc32c is not None
                and crc32c(view[pos + L.V2_ATTRIBUTES_OFFSET : entry_end]) != crc
            ):
                break
            base, last_offset, n, row_ts, first_ts, row_n = (
                offset,
                offset + last_delta,
                count,
                max_ts,
                base_ts,
                count,
            )
            if last_offset > L.INT64_MAX or (last is not None and base <= last):
                break
            if deep and not headers:
                codec = attributes & L.COMPRESSION_MASK
                if attributes & L.CONTROL_BIT or codec > 4:
                    break
                if codec:
                    try:
                        payload = decompress(codec, view[pos + L.V2_HEADER_SIZE : entry_end])
                    except Exception:  # the slow way reports it
                        break
                    walk = walk_v2_records(payload, 0, len(payload), count, last_delta, base_ts)
                else:
                    walk = walk_v2_records(
                        bytes(view[pos:entry_end]), L.V2_HEADER_SIZE, entry, count, last_delta, base_ts
                    )
                if walk[8] is not None:
                    break
                delta = walk[7]
                if (
                    delta is not None
                    and not attributes & (L.TIMESTAMP_TYPE_BIT | L.DELETE_HORIZON_BIT)
                    and base_ts + delta > max_ts
                ):
                    break
        elif magic < 2:
            if headers and (
                length < L.LEGACY_MIN_SIZE[magic] or end - pos < L.LOG_OVERHEAD + L.LEGACY_MIN_SIZE[magic]
            ):
                break  # the header is not whole in the window (the entry is, by its length)
            attributes = data[pos + L.LEGACY_ATTRIBUTES_OFFSET]
            crc = L.UINT32.unpack_from(data, pos + L.LEGACY_CRC_OFFSET)[0]
            if headers:
                row_ts = L.INT64.unpack_from(data, pos + L.LEGACY_V1_TIMESTAMP_OFFSET)[0] if magic else -1
                no_value = False  # only the payload would tell: the slow way reports it
            else:
                try:
                    msg = Message(data, pos, entry_end)  # type: ignore[arg-type]
                except CorruptRecordError:
                    break
                if crc32 is not None and crc32(view[pos + L.MAGIC_OFFSET : entry_end]) != msg.crc:
                    break
                row_ts = msg.timestamp
                no_value = msg.value is None
            first_ts = row_ts
            codec = attributes & L.COMPRESSION_MASK
            last_offset = offset
            if codec == 0:
                base, n = offset, 1
            elif codec > 3 or no_value:
                break  # zstd or an unknown codec in a wrapper, or no value: the decoder reports it
            elif deep and not headers:
                try:
                    inner = decompress(codec, memoryview(msg.value))  # type: ignore[arg-type]
                except Exception:  # the slow way reports it
                    break
                if len(inner) // L.LEGACY_MIN_ENTRY > max_records:
                    break
                span = _inner_span(inner, magic, crc32)
                if span is None:
                    break
                n, first, last_inner = span
                base, sound = inner_base(magic, offset, last_inner)
                base += first
                if not sound or base > last_offset:
                    break
            else:
                base, n = None, 0
            row_n = n if base is not None else -1
            if last is not None and (base if base is not None else last_offset) <= last:
                break
        else:
            break
        if base is not None and last is not None and base > last + 1 and not after_damage:
            gaps += 1
        if rows is not None:
            low = base if base is not None else (last + 1 if last is not None else 0)
            rows.append(
                (
                    file_pos + pos,
                    low,
                    last_offset,
                    row_ts,
                    entry,
                    magic,
                    attributes,
                    first_ts,
                    row_n,
                    producer,
                    crc,
                    epoch,
                    p_epoch,
                    sequence,
                )
            )
        last = last_offset
        after_damage = False
        batches += 1
        records += n
        pos = entry_end
        taken = entry
    return pos - start, batches, records, gaps, last, after_damage, taken


walk_v2_records = bind(walk_v2_records)(native.walk_v2_records if native else None)
walk_entries = bind(walk_entries)(native.walk_entries if native else None)
