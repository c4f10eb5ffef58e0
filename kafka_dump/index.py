"""The ``.index`` and ``.timeindex`` files beside a segment, used to seek instead of scanning.

``.index``: 8-byte entries, int32 offset relative to the segment's base offset, int32 file position
of the batch holding it (``OffsetIndex``). ``.timeindex``: 12-byte entries, int64 max timestamp so
far, int32 relative offset of the batch that reached it (``TimeIndex``). Both are preallocated and
sparse: the first entry repeated as zeros after the real ones ends the list, as in DumpLogSegments.
"""

from __future__ import annotations

import struct
from itertools import islice
from pathlib import Path

from kafka_dump.errors import KafkaDumpError
from kafka_dump.model import Batch, Problem
from kafka_dump.segment import read_segment, segment_base_offset

OFFSET_ENTRY = struct.Struct(">ii")
TIME_ENTRY = struct.Struct(">qi")


def _entries(path: Path, entry: struct.Struct) -> list[tuple[int, int]]:
    """All real entries of an index file (bounded by the index file's own size, never the log's)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return []
    n = len(data) // entry.size
    out = []
    for i in range(n):
        a, b = entry.unpack_from(data, i * entry.size)
        if i > 0 and (a, b) == (0, 0):
            break
        out.append((a, b))
    return out


def offset_index(log: Path, base: int) -> list[tuple[int, int]]:
    """(absolute offset, position) entries of the ``.index`` beside ``log``."""
    return [(base + rel, pos) for rel, pos in _entries(log.with_suffix(".index"), OFFSET_ENTRY)]


def time_index(log: Path, base: int) -> list[tuple[int, int]]:
    """(timestamp, absolute offset) entries of the ``.timeindex`` beside ``log``."""
    return [(ts, base + rel) for ts, rel in _entries(log.with_suffix(".timeindex"), TIME_ENTRY)]


def _position_for_offset(entries: list[tuple[int, int]], target: int) -> int:
    pos = 0
    for offset, position in entries:
        if offset > target:
            break
        pos = position
    return pos


def seek_position(log: Path, *, from_offset: int | None, from_time: int | None) -> int:
    """A file position at or before the first batch that can hold records at/after the start.

    Returns 0 (a full scan) when there is no index, or when the log does not confirm what the index
    says: the entry found must be a whole batch with a valid CRC and an offset at or below the
    target, and a time index entry (T, O) must match the batch that ends at O (maxTimestamp T).
    """
    base = segment_base_offset(log)
    if base is None or (from_offset is None and from_time is None):
        return 0
    offsets = offset_index(log, base)
    if not offsets:
        return 0
    targets = [] if from_offset is None else [from_offset]
    if from_time is not None:
        # Entries (T, O): every record up to offset O has a timestamp <= T, so none before O+1 counts.
        earlier = [(ts, offset) for ts, offset in time_index(log, base) if ts < from_time]
        if earlier:
            ts, offset = earlier[-1]
            if not _confirms(log, _position_for_offset(offsets, offset), offset, ts):
                return 0
            targets.append(offset + 1)
        else:
            targets.append(base)
    target = max(targets)
    position = _position_for_offset(offsets, target)
    return position if _batch_starts_at(log, position, target) else 0


def _first_items(log: Path, position: int, n: int) -> list[Batch | Problem]:
    if position < 0:
        return []
    try:
        return list(islice(read_segment(log, with_records=False, start=position), n))
    except KafkaDumpError:
        return []


def _batch_starts_at(log: Path, position: int, target: int) -> bool:
    items = _first_items(log, position, 1)
    return bool(items) and isinstance(items[0], Batch) and items[0].crcValid and items[0].baseOffset <= target


def _confirms(log: Path, position: int, offset: int, timestamp: int) -> bool:
    """The batch that ends at ``offset`` lies at or after ``position`` and has maxTimestamp ``timestamp``."""
    for item in _first_items(log, position, _CONFIRM_SCAN_LIMIT):
        if not isinstance(item, Batch) or not item.crcValid:
            return False
        if item.lastOffset >= offset:
            return item.lastOffset == offset and item.maxTimestamp == timestamp
    return False


# Kafka indexes every index.interval.bytes (4 KiB): a few hundred small batches at most lie between.
_CONFIRM_SCAN_LIMIT = 10_000
