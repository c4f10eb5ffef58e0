"""The ``.index`` and ``.timeindex`` files beside a segment, used to seek instead of scanning.

``.index``: 8-byte entries, int32 offset relative to the segment's base offset, int32 file position
of the batch holding it (``OffsetIndex``). ``.timeindex``: 12-byte entries, int64 max timestamp so
far, int32 relative offset of the batch that reached it (``TimeIndex``). Both are preallocated and
sparse: the first entry repeated as zeros after the real ones ends the list, as in DumpLogSegments.
"""

from __future__ import annotations

import mmap
import struct
from pathlib import Path

from kafka_dump.format import layout as L
from kafka_dump.segment import segment_base_offset

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

    Returns 0 when there is no usable index. A position the log does not confirm as the start of
    an entry with an offset at or below the target is not trusted (0 then, a full scan).
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
        after = base
        for ts, offset in time_index(log, base):
            if ts >= from_time:
                break
            after = offset + 1
        targets.append(after)
    target = max(targets)
    position = _position_for_offset(offsets, target)
    return position if _looks_like_entry(log, position, target) else 0


def _looks_like_entry(log: Path, position: int, target: int) -> bool:
    try:
        with open(log, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
            if position + L.MAGIC_OFFSET + 1 > len(m):
                return False
            offset, size = L.LOG_ENTRY.unpack_from(m, position)
            magic = m[position + L.MAGIC_OFFSET]
            return magic <= 2 and 0 < size <= len(m) - position - L.LOG_OVERHEAD and offset <= target
    except (OSError, ValueError):
        return False
