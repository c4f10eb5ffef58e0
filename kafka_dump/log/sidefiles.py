"""The files Kafka keeps beside a partition's segments, read as entries and problems.

    .index          8-byte entries: int32 offset relative to the file's base offset, int32 position (OffsetIndex)
    .timeindex      12-byte entries: int64 timestamp, int32 relative offset (TimeIndex)
    .txnindex       34-byte entries: int16 version (0), int64 producerId, firstOffset, lastOffset,
                    lastStableOffset (AbortedTxn)
    .snapshot       producer state: int16 version, then the ProducerSnapshot message (uint32 CRC-32C of
                    every byte after the CRC field, then the producer entries), ProducerStateManager
    leader-epoch-checkpoint   text: version line (0), count line, then ``epoch startOffset`` lines
    partition.metadata        text: ``version: 0`` and ``topic_id: <uuid>`` lines

and a log dir's own files:

    recovery-point-offset-checkpoint, replication-offset-checkpoint, log-start-offset-checkpoint,
    cleaner-offset-checkpoint   text: version line (0), count line, then ``topic partition offset`` lines
    meta.properties           Java properties: ``key=value`` lines, ``#`` comments
    quorum-state              (KRaft) one JSON object: the voters' election state
    .lock                     the broker's lock on the log dir: no entries

Indexes are preallocated: an entry that repeats the base offset ends the list (as in DumpLogSegments)
and the rest is a zero tail, or damage when not zeros. Each ``.index`` entry is checked against the
``.log`` beside it, if any: the batch at its position must end at its offset.
"""

from __future__ import annotations

import json
import re
import struct
from collections.abc import Callable, Iterator
from contextlib import nullcontext
from pathlib import Path
from typing import BinaryIO, NamedTuple

from kafka_dump.log.index import (
    OFFSET_ENTRY,
    TIME_ENTRY,
    TXN_ENTRY,
    index_base_offset,
    txn_entries,
    zeros_from,
)
from kafka_dump.log.names import OFFSET_CHECKPOINTS
from kafka_dump.log.names import side_file_kind as side_file_kind  # the one name rule, re-exported
from kafka_dump.model import Problem, ProblemKind
from kafka_dump.wire import layout as L
from kafka_dump.wire.checksum import crc32c
from kafka_dump.wire.kmessage import KMessageError, schema

_CHUNK = 64 * 1024
_TEXT_LIMIT = 16 * 1024 * 1024  # a checkpoint text file larger than this is not one
_SNAPSHOT_LIMIT = 256 * 1024 * 1024  # ~5M producers; a larger "snapshot" is refused, not read into memory
# Numbers in the text files: ASCII decimals only (str.isdigit also passes "²", which int() refuses).
_COUNT = re.compile(r"[0-9]+")
_SIGNED = re.compile(r"-?[0-9]+")
_SHOWN = 80  # characters of a bad line quoted in its problem


def _number(text: str, pattern: re.Pattern[str], bits: int) -> int | None:
    """``text`` as the ``bits``-bit integer Kafka reads it as, or None (not a number, or too long for
    that width: never a 5,000-digit ``int()``)."""
    text = text.strip()
    if len(text) > 20 or not pattern.fullmatch(text):
        return None
    value = int(text)
    return value if -(2 ** (bits - 1)) <= value < 2 ** (bits - 1) else None


def _quoted(text: str) -> str:
    return repr(text if len(text) <= _SHOWN else text[:_SHOWN] + "…")


class OffsetIndexEntry(NamedTuple):
    offset: int  # absolute
    position: int


class TimeIndexEntry(NamedTuple):
    timestamp: int
    offset: int  # absolute


class AbortedTxn(NamedTuple):
    version: int
    producerId: int
    firstOffset: int
    lastOffset: int
    lastStableOffset: int


class ProducerSnapshotHeader(NamedTuple):
    version: int
    crc: int
    computedCrc: int
    crcValid: bool
    producerCount: int


class ProducerEntry(NamedTuple):
    """One producer of a snapshot; its batch metadata is there when ``lastOffset`` >= 0."""

    producerId: int
    producerEpoch: int
    coordinatorEpoch: int
    currentTxnFirstOffset: int  # -1 when no transaction is open
    lastTimestamp: int
    lastSequence: int
    lastOffset: int
    offsetDelta: int

    @property
    def firstSequence(self) -> int:
        """The last batch's first sequence, wrapping below 0 as Kafka's sequences do."""
        if self.lastSequence < self.offsetDelta:
            return 0x7FFFFFFF - (self.offsetDelta - self.lastSequence) + 1
        return self.lastSequence - self.offsetDelta


class LeaderEpochEntry(NamedTuple):
    epoch: int
    startOffset: int


class PartitionMetadata(NamedTuple):
    version: int
    topicId: str


class OffsetCheckpointEntry(NamedTuple):
    """A line of a log dir's offset checkpoint (recovery point, high watermark, log start, cleaner)."""

    topic: str
    partition: int
    offset: int


class Property(NamedTuple):
    """A ``key=value`` of meta.properties, or a field of quorum-state (its value as JSON text)."""

    key: str
    value: str


SideItem = (
    OffsetIndexEntry | TimeIndexEntry | AbortedTxn | ProducerSnapshotHeader | ProducerEntry | LeaderEpochEntry
    | PartitionMetadata | OffsetCheckpointEntry | Property | Problem
)  # fmt: skip


def read_side_file(path: str | Path) -> Iterator[SideItem]:
    """Every entry of a side file, and its problems in place. Raises OSError if it cannot be opened."""
    kind = side_file_kind(path)
    name = str(path)
    if kind == ".index":
        try:
            log: BinaryIO | None = open(Path(name).with_suffix(".log"), "rb")  # noqa: SIM115 (closed below)
        except OSError:
            log = None  # no log beside it: the entries are not checked
        with log if log is not None else nullcontext():
            check = _log_checker(name, log) if log is not None else None
            yield from _fixed(name, OFFSET_ENTRY, lambda a, b, base: OffsetIndexEntry(base + a, b), check)
    elif kind == ".timeindex":
        yield from _fixed(name, TIME_ENTRY, lambda a, b, base: TimeIndexEntry(a, base + b))
    elif kind == ".txnindex":
        yield from _txn_index(name)
    elif kind is not None:
        limit, larger = (
            (_SNAPSHOT_LIMIT, "not read") if kind == ".snapshot" else (_TEXT_LIMIT, "not a checkpoint file")
        )
        with open(name, "rb") as f:
            data = f.read(limit + 1)
        if len(data) > limit:
            yield _corrupt(name, 0, len(data), f"larger than {limit} bytes: {larger}")
        else:
            yield from _SMALL_FILES[kind](name, data)
    else:
        raise ValueError(f"{name}: not a side file")


def _corrupt(path: str, at: int, length: int, reason: str) -> Problem:
    return Problem(path, at, length, ProblemKind.CORRUPT, reason)


def _chunks(path: str) -> Iterator[tuple[int, bytes]]:
    """(file position, bytes) in chunks; a chunk holds whole multiples of nothing in particular."""
    with open(path, "rb") as f:
        pos = 0
        while chunk := f.read(_CHUNK):
            yield pos, chunk
            pos += len(chunk)


_LAST_OFFSET_DELTA = struct.Struct(">i")
_HEAD_BYTES = L.V2_LAST_OFFSET_DELTA_OFFSET + _LAST_OFFSET_DELTA.size
Check = Callable[[OffsetIndexEntry, int], "Problem | None"]


def _log_checker(path: str, log: BinaryIO) -> Check:
    """Checks an offset index entry (at a byte position of the index) against the log beside it."""

    def check(entry: OffsetIndexEntry, at: int) -> Problem | None:
        if entry.position < 0:  # an int32 from the file: no position in any log
            why = f"has the negative position {entry.position}"
            return _corrupt(path, at, OFFSET_ENTRY.size, f"the entry for offset {entry.offset} {why}")
        log.seek(entry.position)
        head = log.read(_HEAD_BYTES)
        if len(head) <= L.MAGIC_OFFSET or (head[L.MAGIC_OFFSET] >= 2 and len(head) < _HEAD_BYTES):
            why = f"points at position {entry.position}, past the last batch of the log"
        else:
            last = struct.unpack_from(">q", head)[0]
            if head[L.MAGIC_OFFSET] >= 2:  # v0/v1: an entry's offset is its last one already
                last += _LAST_OFFSET_DELTA.unpack_from(head, L.V2_LAST_OFFSET_DELTA_OFFSET)[0]
            if last == entry.offset:
                return None
            why = f"points at position {entry.position}, where the batch's last offset is {last}"
        return _corrupt(path, at, OFFSET_ENTRY.size, f"the entry for offset {entry.offset} {why}")

    return check


Make = Callable[[int, int, int], "OffsetIndexEntry | TimeIndexEntry"]  # (field a, field b, base offset)


def _fixed(path: str, entry: struct.Struct, make: Make, check: Check | None = None) -> Iterator[SideItem]:
    """Fixed-size entries: an offset or time index."""
    base = index_base_offset(Path(path).with_suffix(".log"))
    size = entry.size
    i = 0
    pending = b""
    stop_at: int | None = None  # the position of the entry that ended the list
    total = 0
    for pos, chunk in _chunks(path):
        total = pos + len(chunk)
        data = pending + chunk
        start = pos - len(pending)
        n = len(data) // size
        for k in range(n):
            a, b = entry.unpack_from(data, k * size)
            rel = b if entry is TIME_ENTRY else a
            if i > 0 and rel == 0:
                stop_at = start + k * size
                break
            item = make(a, b, base)
            yield item
            if check is not None and isinstance(item, OffsetIndexEntry):
                problem = check(item, start + k * size)
                if problem is not None:
                    yield problem
            i += 1
        if stop_at is not None:
            break  # the rest is read only where it holds data (preallocated space is often sparse)
        pending = data[n * size :]
    if stop_at is not None:
        total, zeros = zeros_from(path, stop_at)
        length = total - stop_at
        if not zeros:
            reason = f"an entry repeats the base offset; the {length} bytes from here are not read"
            yield _corrupt(path, stop_at, length, reason)
        else:
            yield Problem(path, stop_at, length, ProblemKind.ZERO_TAIL,
                          f"{length} zero bytes at the end (preallocated entries)")  # fmt: skip
    elif pending:
        yield Problem(path, total - len(pending), len(pending), ProblemKind.PARTIAL_TAIL,
                      f"{len(pending)} bytes at the end, less than one {size}-byte entry")  # fmt: skip


def _txn_index(path: str) -> Iterator[SideItem]:
    pending, total, size = b"", 0, TXN_ENTRY.size
    for pos, chunk in _chunks(path):
        total = pos + len(chunk)
        data = pending + chunk
        for at, entry in txn_entries(data, pos - len(pending)):
            if entry[0] != 0:
                yield _corrupt(path, at, size, f"aborted transaction of unknown version {entry[0]}")
            else:
                yield AbortedTxn(*entry)
        pending = data[len(data) - len(data) % size :]
    if pending:
        yield Problem(path, total - len(pending), len(pending), ProblemKind.PARTIAL_TAIL,
                      f"{len(pending)} bytes at the end, less than one {size}-byte entry")  # fmt: skip


_SNAPSHOT_ENTRIES_AT = 6  # int16 version, uint32 crc


def _producer_snapshot(path: str, data: bytes) -> Iterator[SideItem]:
    if len(data) < _SNAPSHOT_ENTRIES_AT:
        yield _corrupt(path, 0, len(data), f"{len(data)} bytes: too short for a producer snapshot")
        return
    version = struct.unpack_from(">h", data)[0]
    s = schema("ProducerSnapshot")
    if not s.valid[0] <= version <= s.valid[1]:
        yield _corrupt(path, 0, len(data), f"unknown producer snapshot version {version}")
        return
    try:
        fields, end = s.read(data, version, 2)
    except KMessageError as exc:
        yield _corrupt(path, exc.position, len(data) - exc.position, f"producer snapshot: {exc.reason}")
        return
    computed = crc32c(data[_SNAPSHOT_ENTRIES_AT:])
    entries = fields["producerEntries"]
    yield ProducerSnapshotHeader(version, fields["crc"], computed, computed == fields["crc"], len(entries))
    if computed != fields["crc"]:
        why = f"Stored crc: {fields['crc']}. Computed crc: {computed}"
        yield _corrupt(path, 2, 4, f"Snapshot is corrupt (CRC is no longer valid). {why}")
    for e in entries:
        yield ProducerEntry(e["producerId"], e["epoch"], e["coordinatorEpoch"], e["currentTxnFirstOffset"],
                            e["timestamp"], e["lastSequence"], e["lastOffset"], e["offsetDelta"])  # fmt: skip
    if end != len(data):
        yield _corrupt(path, end, len(data) - end, f"{len(data) - end} bytes after the entries")


def _text_lines(data: bytes) -> Iterator[tuple[int, int, str]]:
    pos = 0
    for line in data.splitlines(keepends=True):
        yield pos, len(line), line.decode("utf-8", "replace").rstrip("\r\n")
        pos += len(line)


_TOPIC = re.compile(r"[a-zA-Z0-9._-]{1,249}")  # the characters and length Kafka allows in a topic name


def _int32(text: str) -> int | None:
    return _number(text, _SIGNED, 32)


def _int64(text: str) -> int | None:
    return _number(text, _SIGNED, 64)


def _topic(text: str) -> str | None:
    return text if _TOPIC.fullmatch(text) else None


def _checkpoint(
    path: str,
    data: bytes,
    spelled: str,
    fields: tuple[Callable[[str], object | None], ...],
    make: Callable[..., SideItem],
) -> Iterator[SideItem]:
    """Kafka's checkpoint text: a version line (0), a count line, then one entry a line, its
    space-separated ``fields`` spelled as ``spelled``; a bad line is a problem naming its number."""
    expected: int | None = None
    count = 0
    for n, (pos, length, text) in enumerate(_text_lines(data)):
        if n == 0:
            if text.strip() != "0":
                yield _corrupt(path, pos, length, f"unknown checkpoint version {_quoted(text)}")
                return
            continue
        if n == 1:
            expected = _number(text, _COUNT, 32)
            if expected is None:
                yield _corrupt(path, pos, length, f"entry count {_quoted(text)} is not a number")
                return
            continue
        parts = text.split()
        same = len(parts) == len(fields)
        values = [f(part) for f, part in zip(fields, parts, strict=True)] if same else [None]
        if None in values:
            yield _corrupt(path, pos, length, f"line {n + 1} is not '{spelled}': {_quoted(text)}")
            continue
        count += 1
        yield make(*values)
    if expected is None:
        yield _corrupt(path, 0, 0, "no version and count lines")
    elif count != expected:
        yield _corrupt(path, 0, 0, f"the count line says {expected} entries, {count} follow")


def _leader_epochs(path: str, data: bytes) -> Iterator[SideItem]:
    yield from _checkpoint(path, data, "epoch startOffset", (_int32, _int64), LeaderEpochEntry)


def _offset_checkpoint(path: str, data: bytes) -> Iterator[SideItem]:
    fields = (_topic, _int32, _int64)
    yield from _checkpoint(path, data, "topic partition offset", fields, OffsetCheckpointEntry)


def _meta_properties(path: str, data: bytes) -> Iterator[SideItem]:
    """``key=value`` lines (``#`` and ``!`` comments, blank lines skipped); ``version`` must be a number."""
    version = None
    for n, (pos, length, text) in enumerate(_text_lines(data)):
        line = text.strip()
        if not line or line[0] in "#!":
            continue
        key, sep, value = line.partition("=")
        if not sep or not key.strip():
            yield _corrupt(path, pos, length, f"line {n + 1} is not 'key=value': {_quoted(text)}")
            continue
        if key.strip() == "version":
            version = _number(value, _COUNT, 32)
        yield Property(key.strip(), value.strip())
    if version is None:
        yield _corrupt(path, 0, 0, "no 'version=N' line")


def _quorum_state(path: str, data: bytes) -> Iterator[SideItem]:
    """One JSON object; each of its fields an entry, its value as compact JSON text (a string as is)."""
    text = data.decode("utf-8", "replace")
    try:
        state = json.loads(text)
    except json.JSONDecodeError as exc:
        at = len(text[: exc.pos].encode())
        yield _corrupt(path, at, len(data) - at, f"line {exc.lineno} is not JSON: {exc.msg}")
        return
    if not isinstance(state, dict):
        yield _corrupt(path, 0, len(data), "not a JSON object")
        return
    for key, value in state.items():
        shown = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))
        yield Property(str(key), shown)


def _lock(path: str, data: bytes) -> Iterator[SideItem]:
    """The broker holds a lock on this file; what it holds is nothing to read."""
    yield from ()


def _partition_metadata(path: str, data: bytes) -> Iterator[SideItem]:
    fields: dict[str, str] = {}
    for pos, length, text in _text_lines(data):
        key, sep, value = text.partition(":")
        if not sep:
            yield _corrupt(path, pos, length, f"not a 'key: value' line: {_quoted(text)}")
            continue
        fields[key.strip()] = value.strip()
    version = _number(fields.get("version", ""), _COUNT, 32)
    topic_id = fields.get("topic_id")
    if version is None or topic_id is None:
        yield _corrupt(path, 0, 0, "needs 'version: N' and 'topic_id: ID' lines")
        return
    yield PartitionMetadata(version, topic_id)


# The side files read whole (up to a size limit), by kind.
_SMALL_FILES: dict[str, Callable[[str, bytes], Iterator[SideItem]]] = {
    ".snapshot": _producer_snapshot,
    "leader-epoch-checkpoint": _leader_epochs,
    "partition.metadata": _partition_metadata,
    **dict.fromkeys(OFFSET_CHECKPOINTS, _offset_checkpoint),
    "meta.properties": _meta_properties,
    "quorum-state": _quorum_state,
    ".lock": _lock,
}
