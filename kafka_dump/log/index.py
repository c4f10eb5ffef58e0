"""The ``.index``, ``.timeindex`` and ``.txnindex`` files beside a segment: seeking, and checking them.

Their entries are laid out as ``sidefiles.py`` lists them. The offset and time indexes are
preallocated and sparse: the first entry repeated as zeros after the real ones ends the list.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Generator, Iterator, Sequence
from itertools import islice
from pathlib import Path
from typing import BinaryIO

from kafka_dump.errors import KafkaDumpError
from kafka_dump.log.names import segment_base_offset
from kafka_dump.log.segment import read_segment
from kafka_dump.model import Batch, Check, Problem, ProblemKind

OFFSET_ENTRY = struct.Struct(">ii")  # relative offset, position
TIME_ENTRY = struct.Struct(">qi")  # timestamp, relative offset
TXN_ENTRY = struct.Struct(">hqqqq")  # version, producerId, firstOffset, lastOffset, lastStableOffset


def txn_entries(data: bytes, start: int = 0) -> Iterator[tuple[int, tuple[int, int, int, int, int]]]:
    """(file position, entry) of each whole ``.txnindex`` entry in ``data``, read from file position ``start``."""
    whole = len(data) - len(data) % TXN_ENTRY.size
    return zip(range(start, start + whole, TXN_ENTRY.size), TXN_ENTRY.iter_unpack(data[:whole]), strict=True)


# Index files are read in windows of this many bytes (whole entries of either kind): a preallocated
# index of any size costs this much memory, and its zero-filled (often sparse) end is never read.
INDEX_WINDOW = 8 * 12 * 1024


def index_entries(
    f: BinaryIO | None, entry: struct.Struct, first: bytes | None = None
) -> Generator[tuple[int, int, int], None, None]:
    """(byte position, a, b) of each real entry of an open ``.index`` or ``.timeindex``, read from
    the start in bounded windows: an all-zero entry after the first ends them (preallocated space,
    as Kafka leaves it), as does a partial entry. ``first``: its first window, read already (None:
    ``f`` is read from its start; ``f`` None: that window is the whole file). ``f`` is closed when
    the entries end."""
    size = entry.size
    try:
        at = 0
        window = first if first is not None or f is None else f.read(INDEX_WINDOW)
        while window:
            for k, (a, b) in enumerate(entry.iter_unpack(window[: len(window) - len(window) % size])):
                if a == 0 and b == 0 and at + k * size > 0:
                    return
                yield at + k * size, a, b
            if len(window) < INDEX_WINDOW or f is None:  # the end of the file (a partial entry, or none)
                return
            at += len(window)
            window = f.read(INDEX_WINDOW)
    finally:
        if f is not None:
            f.close()


def _first_window(path: str | Path) -> tuple[bytes, BinaryIO | None]:
    """An index file's first window, and the file to read on when there is more (None: the window is
    the whole file, and the file is closed already). A small index costs an open, a read and a close."""
    fd = os.open(path, os.O_RDONLY)
    try:
        first = os.read(fd, INDEX_WINDOW)
        if len(first) == INDEX_WINDOW:
            return first, open(fd, "rb", buffering=0)
    except BaseException:
        os.close(fd)
        raise
    os.close(fd)
    return first, None


def zeros_from(path: str | Path, at: int) -> tuple[int, bool]:
    """(the file's size, whether every byte from ``at`` to its end is zero), reading only where the
    file holds data (``Window.all_zero``: the holes of a sparse file are zeros without a read)."""
    from kafka_dump.log.window import Window

    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        return size, Window(f, size, INDEX_WINDOW).all_zero(at)


def _entries(path: Path, entry: struct.Struct) -> Iterator[tuple[int, int]]:
    """The real entries of an index file (none when it cannot be read), as they are read."""
    try:
        f = open(path, "rb")  # noqa: SIM115 (index_entries closes it)
    except OSError:
        return
    for _, a, b in index_entries(f, entry):
        yield a, b


def index_base_offset(log: str | Path) -> int:
    """The offset that the relative offsets of the indexes beside ``log`` count from, for every reader
    and writer: the base offset in a Kafka name (``00000000000000001000.log``); for any other name
    (``convert IN -o out.log``) the first batch's base offset, as Kafka names a segment by it; 0 when
    the log holds no batch. Only a free-form name costs a read (of the first batch)."""
    named = segment_base_offset(log)
    if named is not None:
        return named
    for item in _first_items(Path(log), 0, _FIRST_BATCH_SCAN):
        if isinstance(item, Batch):
            return item.baseOffset
    return 0


_FIRST_BATCH_SCAN = 4  # items read for a free-form log's first batch (after a damaged start, say)


def offset_index(log: Path, base: int) -> Iterator[tuple[int, int]]:
    """(absolute offset, position) entries of the ``.index`` beside ``log``, as they are read."""
    return ((base + rel, pos) for rel, pos in _entries(log.with_suffix(".index"), OFFSET_ENTRY))


def time_index(log: Path, base: int) -> Iterator[tuple[int, int]]:
    """(timestamp, absolute offset) entries of the ``.timeindex`` beside ``log``, as they are read."""
    return ((ts, base + rel) for ts, rel in _entries(log.with_suffix(".timeindex"), TIME_ENTRY))


def _position_for_offset(log: Path, base: int, target: int) -> int | None:
    """The position of the last ``.index`` entry at or below ``target`` (0 before the first); None
    when the index has no entry."""
    pos = None
    for offset, position in offset_index(log, base):
        if offset > target:
            return 0 if pos is None else pos
        pos = position
    return pos


def seek_position(log: Path, *, from_offset: int | None, from_time: int | None) -> int:
    """A file position at or before the first batch that can hold records at/after the start; 0 (a
    full scan) without an index, or when the log does not confirm it: a whole, CRC-valid batch at or
    below the target, and for a time index entry (T, O) the batch that ends at O with maxTimestamp T.
    """
    if (from_offset is None and from_time is None) or not log.with_suffix(".index").exists():
        return 0
    base = index_base_offset(log)
    if _position_for_offset(log, base, base) is None:
        return 0  # an index without entries
    targets = [] if from_offset is None else [from_offset]
    if from_time is not None:
        # Entries (T, O): every record up to offset O has a timestamp <= T, so none before O+1 counts.
        earlier = None
        for ts, offset in time_index(log, base):
            if ts < from_time:
                earlier = (ts, offset)
        if earlier is not None:
            ts, offset = earlier
            if not _confirms(log, _position_for_offset(log, base, offset) or 0, offset, ts):
                return 0
            targets.append(offset + 1)
        else:
            targets.append(base)
    target = max(targets)
    position = _position_for_offset(log, base, target) or 0
    return position if _batch_starts_at(log, position, target) else 0


def _first_items(log: Path, position: int, n: int) -> list[Batch | Problem]:
    if position < 0:
        return []
    try:
        return list(islice(read_segment(log, with_records=False, start=position), n))
    except (KafkaDumpError, OSError):
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


# --- checking the index files against their log (verify-crc) ---------------------------------------------


def _index_problem(path: str | Path, at: int, length: int, check: str, reason: str, expected: int | None = None,
                   found: int | None = None) -> Problem:  # fmt: skip
    return Problem(str(path), at, length, ProblemKind.CORRUPT, reason, None, check, expected, found)


def _check_size(path: str | Path, length: int, size: int, problems: list[Problem]) -> None:
    if tail := length % size:
        reason = f"index size {length} is not a multiple of its {size}-byte entries"
        problems.append(_index_problem(path, length - tail, tail, Check.INDEX_SIZE, reason, size, length))


class _Entries:
    """The real entries of an ``.index`` or ``.timeindex``, read one at a time in bounded windows
    (``index_entries``), with their order checked as they are read."""

    def __init__(
        self,
        path: str | Path,
        first: bytes,
        f: BinaryIO | None,
        entry: struct.Struct,
        base: int,
        problems: list[Problem],
    ) -> None:
        """``first`` and ``f``: ``_first_window``'s."""
        self.path = path
        self._entry = entry
        self._base = base
        self._problems = problems
        self.current: tuple[int, int, int] | None = None  # (byte position in the index, a, b)
        self._previous: tuple[int, int] | None = None
        _check_size(path, len(first) if f is None else os.fstat(f.fileno()).st_size, entry.size, problems)
        self._read = index_entries(f, entry, first)
        self.advance()

    def mismatch(self, at: int, reason: str, expected: int | None, found: int | None) -> None:
        """The entry at byte ``at`` does not match the log."""
        self._problems.append(
            _index_problem(self.path, at, self._entry.size, Check.INDEX_MISMATCH, reason, expected, found)
        )

    def advance(self) -> None:
        """Move to the next entry in order (entries out of order are reported and passed over)."""
        try:
            for at, a, b in self._read:
                if not self._out_of_order(at, a, b):
                    self.current = (at, a, b)
                    return
        except OSError as exc:  # readable when opened, not now: a problem, never a silent pass
            reason = f"cannot read the index file ({exc.strerror or exc})"
            self._problems.append(_index_problem(self.path, 0, 0, Check.OTHER, reason))
        self.current = None

    def close(self) -> None:
        self._read.close()

    def _out_of_order(self, at: int, a: int, b: int) -> bool:
        previous, base = self._previous, self._base
        if self._entry is OFFSET_ENTRY:
            # Offsets and positions both strictly increase (OffsetIndex.append).
            if previous is None or (a > previous[0] and b > previous[1]):
                self._previous = (a, b)
                return False
            what = f"offset {base + a} at byte {b}" if a <= previous[0] else f"position {b}"
            reason = f"index entry ({what}) does not follow the previous one (offset {base + previous[0]} at byte {previous[1]})"
        else:
            # Time index: timestamps and offsets never decrease (TimeIndex.maybeAppend).
            if previous is None or (a >= previous[0] and b >= previous[1]):
                self._previous = (a, b)
                return False
            reason = (
                f"time index entry (timestamp {a}, offset {base + b}) goes back from the previous one "
                f"(timestamp {previous[0]}, offset {base + previous[1]})"
            )
        self._problems.append(_index_problem(self.path, at, self._entry.size, Check.INDEX_ORDER, reason))
        return True


_SUFFIXES = (".index", ".timeindex", ".txnindex")


class IndexCheck:
    """Checks the ``.index``, ``.timeindex`` and ``.txnindex`` beside a log as its batches stream by,
    in file order: ``.index`` entries matched by position, ``.timeindex`` entries by offset. Memory
    holds a window of each index file (and the ``.txnindex``), never a list of the log's batches."""

    def __init__(self, log: str | Path, files: Sequence[str | Path] | None = None) -> None:
        """``files``: the index files beside ``log`` to check (by default each of the three that is there)."""
        self.problems: list[Problem] = []
        self._base = index_base_offset(log)
        self.files: list[str | Path] = []
        self._offsets: _Entries | None = None
        self._times: _Entries | None = None
        for path in map(Path(log).with_suffix, _SUFFIXES) if files is None else files:
            name = str(path)
            kind = name[name.rfind(".") :]
            try:
                first, more = _first_window(path)
            except FileNotFoundError:
                continue
            except OSError as exc:  # there, but unreadable: a problem, never a silent pass
                reason = f"cannot read the index file ({exc.strerror or exc})"
                self.problems.append(_index_problem(path, 0, 0, Check.OTHER, reason))
                self.files.append(path)
                continue
            self.files.append(path)
            if kind == ".txnindex":
                if more is not None:
                    with more:
                        first += more.read()
                self._check_txn(path, first)
            elif first or more is not None:  # an empty index has no entry to match
                entry = OFFSET_ENTRY if kind == ".index" else TIME_ENTRY
                entries = _Entries(path, first, more, entry, self._base, self.problems)
                if entry is OFFSET_ENTRY:
                    self._offsets = entries
                else:
                    self._times = entries

    @property
    def waiting(self) -> bool:
        """Whether index entries are left to match: none left, batches need not be shown."""
        return (self._offsets is not None and self._offsets.current is not None) or (
            self._times is not None and self._times.current is not None
        )

    def take(self) -> list[Problem]:
        """The problems found so far, handed over once."""
        out = list(self.problems)
        self.problems.clear()  # the same list: the entry readers append to it
        return out

    def batch(self, b: Batch) -> None:
        """Match the index entries that point at this batch (or that the stream has passed)."""
        self.batch_at(b.position, b.baseOffset, b.lastOffset, b.maxTimestamp)

    def batch_at(self, at_byte: int, first: int, last: int, max_timestamp: int) -> None:
        """``batch`` for the batch at byte ``at_byte`` holding offsets ``first..last`` (the fields
        the entry walk's rows give, without a ``Batch``)."""
        base = self._base
        index = self._offsets
        while index is not None and index.current is not None and index.current[2] <= at_byte:
            at, rel, position = index.current
            if position < at_byte:
                reason = (
                    f"index entry for offset {base + rel} points at byte {position}, where no batch starts"
                )
                index.mismatch(at, reason, None, position)
            elif not first <= base + rel <= last:
                reason = (
                    f"index entry for offset {base + rel} points at byte {position}, where the batch "
                    f"holds offsets {first}..{last}"
                )
                index.mismatch(at, reason, last, base + rel)
            index.advance()
        times = self._times
        while times is not None and times.current is not None and base + times.current[2] <= last:
            at, ts, rel = times.current
            if base + rel < first:
                reason = f"time index entry for offset {base + rel} names an offset that no batch holds"
                times.mismatch(at, reason, None, base + rel)
            elif ts != max_timestamp:
                reason = (
                    f"time index entry for offset {base + rel} has timestamp {ts}; the batch holding it "
                    f"(at byte {at_byte}) has maxTimestamp {max_timestamp}"
                )
                times.mismatch(at, reason, max_timestamp, ts)
            times.advance()

    def finish(self) -> list[Problem]:
        """Entries left over point past the last batch; return every problem not yet taken."""
        base, index, times = self._base, self._offsets, self._times
        while index is not None and index.current is not None:
            at, rel, position = index.current
            reason = f"index entry for offset {base + rel} points at byte {position}, past the last batch"
            index.mismatch(at, reason, None, position)
            index.advance()
        while times is not None and times.current is not None:
            at, _, rel = times.current
            reason = f"time index entry for offset {base + rel} is past the last batch"
            times.mismatch(at, reason, None, base + rel)
            times.advance()
        self.close()
        return self.take()

    def close(self) -> None:
        """Close the index files (``finish`` does; a check given up early should)."""
        for entries in (self._offsets, self._times):
            if entries is not None:
                entries.close()

    def _check_txn(self, path: str | Path, data: bytes) -> None:
        size = TXN_ENTRY.size
        _check_size(path, len(data), size, self.problems)
        for at, (version, producer, first, last, lso) in txn_entries(data):
            if version == 0 and producer == 0 and first == 0 and last == 0 and lso == 0:
                break  # preallocated space
            if version != 0:
                reason = f"aborted transaction entry has version {version}"
                self.problems.append(_index_problem(path, at, size, Check.INDEX_MISMATCH, reason, 0, version))
            elif first > last or last < self._base:
                # A transaction may begin in an earlier segment; its ABORT marker (lastOffset) is in this
                # one (Kafka's TransactionIndex.sanityCheck checks lastOffset only).
                reason = f"aborted transaction of producer {producer} spans offsets {first}..{last}"
                self.problems.append(_index_problem(path, at, size, Check.INDEX_ORDER, reason, None, first))
