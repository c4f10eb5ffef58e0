"""What ``kdump diff`` finds: two replicas of one partition walked by offset and compared entry by entry.

Each side is a segment or a partition directory, read by the entry walk (headers only, stored CRCs
trusted unless ``verify``) over its segments in offset order, and by the segment reader where the walk
stops (damage: reported as such, then the walk resumes). Entries at the same offsets are compared by
their header facts and stored CRC (a v2 CRC covers everything after the leader epoch); where two
differ, both CRCs are computed, and one that fails is damage on its side rather than a divergence.
No printing here.
"""

from __future__ import annotations

import gc
import mmap
import zlib
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import NamedTuple

from kafka_dump import wire as _twins
from kafka_dump.errors import KafkaDumpError
from kafka_dump.log.segment import read_segment, read_segment_runs
from kafka_dump.log.sources import Source, partition_sources
from kafka_dump.log.window import CHUNK_SIZE, MappedWindow, open_segment
from kafka_dump.model import Batch, Compression, Problem, ProblemKind, Record
from kafka_dump.wire import layout as L
from kafka_dump.wire._walk_pure import EntryRow, batch_row, no_payload
from kafka_dump.wire.checksum import crc32, crc32c
from kafka_dump.wire.codecs import DEFAULT_MAX_BATCH_BYTES, DEFAULT_MAX_RECORDS_PER_BATCH

_MAP = 16 << 20  # each side's mapped window (one at a time: a chunk's rows are all used before the next)
_STEP = 1 << 20  # bytes of entries walked at a time: the rows of small entries stay few
_RESUME_AFTER = 64 * 1024  # sound bytes after damage before the entry walk takes over again
_PREFIX = L.MAGIC_OFFSET + 1
_SMALLEST = L.LOG_OVERHEAD + L.LEGACY_V0_MIN_SIZE
SIDES = ("A", "B")


class Entry(NamedTuple):
    """One entry of one side, as the walk reads its header (``EntryRow`` with its file)."""

    file: str
    position: int
    baseOffset: int  # for a v0/v1 wrapper: one past the previous entry (its header holds only its last)
    lastOffset: int
    maxTimestamp: int
    size: int
    magic: int
    attributes: int
    baseTimestamp: int
    records: int  # -1 for a v0/v1 wrapper (not decompressed)
    producerId: int
    crc: int
    leaderEpoch: int  # -1 for v0/v1
    producerEpoch: int
    baseSequence: int


# The facts compared, by their index in an EntryRow, and the names the report gives them.
_FIELDS = (
    (3, "maxTimestamp"),
    (5, "magic"),
    (4, "size"),
    (10, "crc"),
    (11, "leaderEpoch"),
    (6, "attributes"),
    (7, "baseTimestamp"),
    (9, "producerId"),
    (12, "producerEpoch"),
    (13, "baseSequence"),
    (8, "records"),
)


class Damage(NamedTuple):
    """Bytes of one side that hold no sound entry (or an entry whose CRC fails)."""

    side: str
    file: str
    position: int
    length: int
    reason: str
    after: int | None  # the side's last offset before it


class OneSide(NamedTuple):
    """Offsets held by one side only, at the start or the end of the logs, and why."""

    side: str
    first: int
    last: int
    where: str  # "start" or "end"


class Divergence(NamedTuple):
    """A stretch of offsets where the sides hold different entries: the first pair, and why."""

    first: int
    last: int
    kind: str  # epoch, records, header, batching, missing
    reason: str
    differs: tuple[tuple[str, int, int], ...]  # (field, A's value, B's value)
    a: Entry | None
    b: Entry | None


Differs = tuple[tuple[str, int, int], ...]
_NOTHING: Differs = ()


class EpochStart(NamedTuple):
    epoch: int
    startOffset: int


class DiffReport:
    """The verdict: the offsets each side holds, the common range, what differs and the damage found."""

    def __init__(self) -> None:
        self.first: dict[str, int | None] = dict.fromkeys(SIDES)
        self.last: dict[str, int | None] = dict.fromkeys(SIDES)
        self.entries: dict[str, int] = dict.fromkeys(SIDES, 0)
        self.compared = 0  # entry pairs at the same offsets
        self.divergences = 0  # divergent stretches, all counted (listed: the first, or all)
        self.damage = 0
        self.epochs: dict[str, list[EpochStart] | None] = dict.fromkeys(SIDES)

    @property
    def common(self) -> tuple[int, int] | None:
        """The offsets both sides span, or None when they do not meet."""
        if None in self.first.values() or None in self.last.values():
            return None
        low = max(v for v in self.first.values() if v is not None)
        high = min(v for v in self.last.values() if v is not None)
        return (low, high) if low <= high else None

    @property
    def identical(self) -> bool:
        return self.divergences == 0 and self.damage == 0


DiffEvent = OneSide | Divergence | Damage | DiffReport


class DiffOptions(NamedTuple):
    all: bool = False
    verify: bool = False
    max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES
    max_records_per_batch: int = DEFAULT_MAX_RECORDS_PER_BATCH


class _Chunk(NamedTuple):
    file: str
    rows: list[EntryRow]
    data: mmap.mmap | bytes | None  # the window the rows' positions are in; None: read by the segment reader
    start: int


def _entry_size(data: mmap.mmap | bytes, at: int) -> int:
    return L.LOG_OVERHEAD + int(L.INT32.unpack_from(data, at + L.LOG_ENTRY_SIZE_OFFSET)[0])


class _Side:
    """One replica read in offset order: chunks of entries, and its damage as it is met."""

    def __init__(self, name: str, path: str, options: DiffOptions) -> None:
        self.name = name
        found = partition_sources(path, "diff compares one partition (or segment) with another")
        self.files: list[Source] = [f for f in found if f.path.endswith(".log")] or found
        self.options = options
        self.last: int | None = None  # the last offset read (the walk's)
        self.before: int | None = None  # the last offset of the entries compared
        self.damaged = False  # damage met before the entry ``peek`` gives: the offsets up to it are unknown
        self.found: list[Damage] = []  # damage met, not yet reported
        self._chunks = self._read()
        self.rows: list[EntryRow] = []
        self.chunk: _Chunk | None = None
        self.i = 0

    def peek(self) -> EntryRow | None:
        """The next entry's row, or None at the end of the side."""
        while self.i >= len(self.rows):
            met = len(self.found)
            chunk = next(self._chunks, None)
            self.damaged = self.damaged or len(self.found) > met
            if chunk is None:
                return None
            self.chunk, self.rows, self.i = chunk, chunk.rows, 0
        return self.rows[self.i]

    def advance(self) -> None:
        self.before = self.rows[self.i][2]
        self.i += 1
        self.damaged = False

    def entry(self, row: EntryRow) -> Entry:
        assert self.chunk is not None
        return Entry(self.chunk.file, *row)

    def _read(self) -> Iterator[_Chunk]:
        for path in self.files:
            yield from self._file(path)

    def _file(self, path: Source) -> Generator[_Chunk, None, None]:
        options = self.options
        limit = max(options.max_batch_bytes, CHUNK_SIZE)
        check32c, check32 = (crc32c, zlib.crc32) if options.verify else (None, None)
        name = str(path)
        f, size = open_segment(path)
        with f, MappedWindow(f, size, _MAP) as win:
            pos = 0
            while pos < size:
                at = pos - win.start
                if at < 0 or win.end - at < _PREFIX or _entry_size(win.buf, at) > win.end - at:
                    n = win.fill(pos)
                    if n >= _PREFIX and n < (entry := _entry_size(win.buf, pos - win.start)) <= min(
                        size - pos, limit
                    ):
                        win.fill(pos, entry)
                    at = pos - win.start
                data, n, start = win.buf, win.end, win.start
                # A step of the window at a time (one entry if larger): rows for a few MiB of entries.
                end = min(n, at + _STEP)
                if end - at >= _PREFIX and at + _entry_size(data, at) > end:
                    end = n
                rows: list[EntryRow] = []
                used, _, _, _, self.last, _ = _twins.walk_entries(
                    data,
                    at,
                    end,
                    start,
                    False,
                    self.last,
                    False,
                    options.max_records_per_batch,
                    limit,
                    check32c,
                    check32,
                    no_payload,
                    rows,
                )
                if rows:
                    yield _Chunk(name, rows, data, start)
                pos += used
                if pos >= size:
                    break
                rest = end - (at + used)
                if used and (rest < _PREFIX or _entry_size(data, at + used) > rest):
                    continue  # the next entry runs past the step (or the window): walk on from it
                pos = yield from self._slow(name, pos, size)

    def _slow(self, name: str, pos: int, size: int) -> Generator[_Chunk, None, int]:
        """Read from ``pos`` with the segment reader while it finds problems; its sound entries are
        rows like the walk's (without their bytes), its problems damage. Returns where the walk resumes."""
        options = self.options
        runs = read_segment_runs(
            name,
            with_records=False,
            max_batch_bytes=options.max_batch_bytes,
            start=pos,
            max_records_per_batch=options.max_records_per_batch,
            size=size,
        )
        end = size
        clean = 0
        for run in runs:
            problems = [p for p in run if isinstance(p, Problem)]
            rows = []
            for item in run:
                if not isinstance(item, Batch):
                    continue
                if any(item.position <= p.position < item.position + item.sizeInBytes for p in problems):
                    continue  # a damaged entry: its problem says so
                # a v0/v1 wrapper's header holds only its last offset (read shallow, as the walk does)
                wrapper = item.magic < 2 and item.compression is not Compression.NONE
                if self.last is not None and (item.lastOffset if wrapper else item.baseOffset) <= self.last:
                    self._damage(name, item.position, item.sizeInBytes, _backwards(item, self.last))
                    continue
                rows.append(self._row(item))
            for p in problems:
                if p.kind is ProblemKind.CORRUPT:
                    self._damage(name, p.position, p.length, p.reason)
            if rows:
                yield _Chunk(name, rows, None, 0)
            if problems:
                clean = 0
                continue
            clean += sum(b.sizeInBytes for b in run if isinstance(b, Batch))
            if clean >= _RESUME_AFTER:
                last = run[-1]
                assert isinstance(last, Batch)
                end = last.position + last.sizeInBytes
                break
        del runs
        return max(end, pos + 1)

    def _row(self, b: Batch) -> EntryRow:
        """The walk's row for an entry the segment reader read (the same facts, the same way): a
        wrapper's base offset after the entry before it, its records not counted."""
        wrapper = b.magic < 2 and b.compression is not Compression.NONE
        low = (self.last + 1 if self.last is not None else 0) if wrapper else b.baseOffset
        count = -1 if wrapper else 1 if b.magic < 2 else b.recordCount if b.recordCount is not None else 0
        self.last = b.lastOffset
        return batch_row(b, low, count)

    def _damage(self, file: str, position: int, length: int, reason: str, compared: bool = False) -> None:
        """Damage met as the side is read (or, ``compared``, in the entry being compared)."""
        after = self.before if compared else self.last
        self.found.append(Damage(self.name, file, position, length, reason, after))


def _backwards(b: Batch, last: int) -> str:
    return f"entry at offsets {b.baseOffset}..{b.lastOffset} does not follow the previous last offset {last}"


def read_epochs(path: str) -> list[EpochStart] | None:
    """The epoch boundaries of a partition directory's ``leader-epoch-checkpoint``, if it has one that reads."""
    checkpoint = Path(path, "leader-epoch-checkpoint")
    if not Path(path).is_dir() or not checkpoint.is_file():
        return None
    from kafka_dump.log.sidefiles import LeaderEpochEntry, read_side_file

    try:
        return [EpochStart(*e) for e in read_side_file(checkpoint) if isinstance(e, LeaderEpochEntry)]
    except OSError:
        return None


def epoch_at(epochs: list[EpochStart] | None, offset: int) -> EpochStart | None:
    """The epoch a checkpoint says holds ``offset``."""
    found = None
    for e in epochs or ():
        if e.startOffset <= offset:
            found = e
    return found


def first_epoch_difference(
    a: list[EpochStart], b: list[EpochStart]
) -> tuple[EpochStart | None, EpochStart | None]:
    """The first boundary where two checkpoints differ (one side's entry, the other's), else (None, None)."""
    for x, y in zip(a, b, strict=False):
        if x != y:
            return x, y
    if len(a) != len(b):
        longer = a if len(a) > len(b) else b
        extra = longer[min(len(a), len(b))]
        return (extra, None) if longer is a else (None, extra)
    return None, None


def diff(
    path_a: str, path_b: str, options: DiffOptions | None = None
) -> tuple[DiffReport, Iterator[DiffEvent]]:
    """The report (its epochs read, its counts filled as the walk goes) and the walk of both replicas
    by offset: what one side holds alone, each divergent stretch (the first only, unless
    ``options.all``), the damage of each side as met, and at the end the report. A side that cannot be
    read raises ``KafkaDumpError`` here."""
    options = options or DiffOptions()
    sides = (_Side("A", path_a, options), _Side("B", path_b, options))
    report = DiffReport()
    report.epochs = {"A": read_epochs(path_a), "B": read_epochs(path_b)}

    def events() -> Iterator[DiffEvent]:
        # The rows are tuples of ints, freed by reference counting as each window is done: the cycle
        # collector's passes over hundreds of thousands of them (small entries) are pure cost.
        enabled = gc.isenabled()
        gc.disable()
        try:
            yield from _Compare(sides, report, options).run()
        finally:
            if enabled:
                gc.enable()
        yield report

    return report, events()


class _Compare:
    def __init__(self, sides: tuple[_Side, _Side], report: DiffReport, options: DiffOptions) -> None:
        self.a, self.b = sides
        self.report = report
        self.options = options
        self.open: Divergence | None = None  # the divergent stretch being extended
        self.only: OneSide | None = None  # the one-side-only stretch at the start being extended

    def run(self) -> Iterator[DiffEvent]:
        a, b, report = self.a, self.b, self.report
        while True:
            ra, rb = a.peek(), b.peek()
            yield from self._damage()
            if ra is None and rb is None:
                break
            if ra is None or rb is None:
                side, row = (b, rb) if ra is None else (a, ra)
                assert row is not None
                yield from self._close()
                self._seen(side, row)
                self._one_side(side, row, "end")
                side.advance()
                continue
            if ra[1] == rb[1] and self.only is None and self._equal_run():
                yield from self._close()
                continue
            if ra[2] < rb[1] or rb[2] < ra[1]:  # one side's entry lies wholly before the other's
                side, other, row = (a, b, ra) if ra[2] < rb[1] else (b, a, rb)
                self._seen(side, row)
                if report.entries[other.name] == 0:
                    self._one_side(side, row, "start")
                elif other.damaged:
                    pass  # in the other side's damaged stretch: its damage is reported
                else:
                    yield from self._diverge(side, row, None)
                side.advance()
                continue
            if self.only is not None:
                yield self.only
                self.only = None
            self._seen(a, ra)
            self._seen(b, rb)
            if ra[1] == rb[1] and ra[2] == rb[2]:
                report.compared += 1
                yield from self._pair(ra, rb)
                a.advance()
                b.advance()
                continue
            yield from self._diverge(a, ra, rb)
            if ra[2] <= rb[2]:
                a.advance()
            if rb[2] <= ra[2]:
                b.advance()
        yield from self._close()
        if self.only is not None:
            yield self.only

    def _equal_run(self) -> bool:
        """Take the longest run of equal entries both sides' chunks hold from here at once (a list
        comparison in C instead of a step per entry): True when there was one."""
        a, b = self.a, self.b
        n = min(len(a.rows) - a.i, len(b.rows) - b.i)
        if n < 2:
            return False
        ours = [r[1:] for r in a.rows[a.i : a.i + n]]
        theirs = [r[1:] for r in b.rows[b.i : b.i + n]]
        if ours != theirs:
            n = next(k for k, (x, y) in enumerate(zip(ours, theirs, strict=True)) if x != y)
            if n == 0:
                return False
        report = self.report
        for side in (a, b):
            first, last = side.rows[side.i], side.rows[side.i + n - 1]
            if report.first[side.name] is None:
                report.first[side.name] = first[1]
            report.last[side.name] = side.before = last[2]
            report.entries[side.name] += n
            side.i += n
            side.damaged = False
        report.compared += n
        return True

    def _seen(self, side: _Side, row: EntryRow) -> None:
        name = side.name
        report = self.report
        if report.first[name] is None:
            report.first[name] = row[1]
        report.last[name] = row[2]
        report.entries[name] += 1

    def _one_side(self, side: _Side, row: EntryRow, where: str) -> None:
        only = self.only
        if only is not None and only.side == side.name and only.where == where:
            self.only = only._replace(last=row[2])
        else:
            self.only = OneSide(side.name, row[1], row[2], where)

    def _damage(self) -> Iterator[Damage]:
        for side in (self.a, self.b):
            if side.found:
                self.report.damage += len(side.found)
                yield from side.found
                side.found.clear()

    def _pair(self, ra: EntryRow, rb: EntryRow) -> Iterator[DiffEvent]:
        if ra[3:] == rb[3:]:
            yield from self._close()
        else:
            yield from self._diverge(self.a, ra, rb)

    def _sound(self, side: _Side, row: EntryRow) -> bool:
        """Whether an entry that differs from the other side's holds its CRC (computed here unless the
        walk did, ``--verify``): one that does not is damage on its side, not a divergence."""
        chunk = side.chunk
        if self.options.verify or chunk is None or chunk.data is None:
            return True  # checked by the walk, or read by the segment reader (which reports damage)
        at, size, magic = row[0] - chunk.start, row[4], row[5]
        computed = _crc(chunk.data, at, size, magic)
        if computed == row[10]:
            return True
        kind = "CRC-32C" if magic == 2 else "CRC-32"
        side._damage(
            chunk.file, row[0], size, f"{kind} mismatch: stored {row[10]}, computed {computed}", True
        )
        return False

    def _diverge(self, side: _Side, row: EntryRow, other: EntryRow | None) -> Iterator[DiffEvent]:
        sound = [self._sound(side, row)]
        if other is not None:
            sound.append(self._sound(self.b, other))
        if not all(sound):
            yield from self._close()
            yield from self._damage()
            return
        if other is None:
            ea, eb = (side.entry(row), None) if side is self.a else (None, side.entry(row))
            kind, differs = "missing", _NOTHING
        else:
            ea, eb = self.a.entry(row), self.b.entry(other)
            kind, differs = _what_differs(ea, eb)
        first = min(e.baseOffset for e in (ea, eb) if e is not None)
        last = max(e.lastOffset for e in (ea, eb) if e is not None)
        opened = self.open
        if opened is not None and opened.kind == kind:
            self.open = opened._replace(last=max(last, opened.last))
            return
        yield from self._close()
        self.open = Divergence(first, last, kind, _reason(kind, ea, eb, differs), differs, ea, eb)

    def _close(self) -> Iterator[Divergence]:
        opened = self.open
        if opened is None:
            return
        self.open = None
        self.report.divergences += 1
        if self.options.all or self.report.divergences == 1:
            yield opened


def _crc(data: mmap.mmap | bytes, at: int, size: int, magic: int) -> int:
    view = memoryview(data)
    if magic == 2:
        return crc32c(view[at + L.V2_ATTRIBUTES_OFFSET : at + size])
    return crc32(view[at + L.MAGIC_OFFSET : at + size])


def _what_differs(a: Entry, b: Entry) -> tuple[str, Differs]:
    if (a.baseOffset, a.lastOffset) != (b.baseOffset, b.lastOffset):
        return "batching", (
            ("baseOffset", a.baseOffset, b.baseOffset),
            ("lastOffset", a.lastOffset, b.lastOffset),
        )
    differs = tuple((name, int(a[i + 1]), int(b[i + 1])) for i, name in _FIELDS if a[i + 1] != b[i + 1])
    names = {d[0] for d in differs}
    if "leaderEpoch" in names and a.magic == b.magic == 2:
        return "epoch", differs
    if names & {"crc", "size", "records", "magic"}:
        return "records", differs
    return "header", differs


def _reason(kind: str, a: Entry | None, b: Entry | None, differs: tuple[tuple[str, int, int], ...]) -> str:
    """The divergence in words: what differs, and its likely cause."""
    if kind == "missing":
        e, side, other = (a, "A", "B") if a is not None else (b, "B", "A")
        assert e is not None
        return (
            f"entries on {side} only, inside the common range (from offset {e.baseOffset:,}): "
            f"{other} lacks them (compacted or deleted there)"
        )
    assert a is not None and b is not None
    if kind == "batching":
        return (
            f"different batches from offset {min(a.baseOffset, b.baseOffset):,}: A holds {a.baseOffset:,}..{a.lastOffset:,}, "
            f"B {b.baseOffset:,}..{b.lastOffset:,} (written apart, or one side re-fetched or rewritten)"
        )
    if kind == "epoch":
        newer = "B" if b.leaderEpoch > a.leaderEpoch else "A"
        what = "other records" if a.crc != b.crc or a.size != b.size else "the same records"
        return (
            f"leader epoch {a.leaderEpoch} vs {b.leaderEpoch} from offset {a.baseOffset:,} ({what}): "
            f"{newer} was truncated and re-fetched from a new leader"
        )
    listed = ", ".join(f"{name} {x} vs {y}" for name, x, y in differs)
    if kind == "records":
        return (
            f"other records from offset {a.baseOffset:,} under the same leader epoch {a.leaderEpoch} ({listed}): "
            "not a re-fetch from a new leader"
        )
    return f"the same records, other header fields from offset {a.baseOffset:,} ({listed})"


class RecordDifference(NamedTuple):
    """One offset of a divergent stretch whose record differs: each side's record, or None."""

    offset: int
    a: Record | None
    b: Record | None


def record_differences(d: Divergence, options: DiffOptions, limit: int = 100) -> list[RecordDifference]:
    """The records that differ between the two entries of a divergence, decoded by the segment reader."""
    found: list[dict[int, Record]] = []
    for e in (d.a, d.b):
        records: dict[int, Record] = {}
        if e is not None:
            batch = _batch_at(e, options)
            if batch is not None and batch.records is not None:
                records = {r.offset: r for r in batch.records}
        found.append(records)
    out = []
    for offset in sorted(found[0].keys() | found[1].keys()):
        ra, rb = found[0].get(offset), found[1].get(offset)
        if ra is None or rb is None or _record_key(ra) != _record_key(rb):
            out.append(RecordDifference(offset, ra, rb))
            if len(out) >= limit:
                break
    return out


def _record_key(r: Record) -> tuple[object, ...]:
    return (r.timestamp, r.key, r.value, r.headers)


def _batch_at(e: Entry, options: DiffOptions) -> Batch | None:
    try:
        for item in read_segment(
            e.file,
            start=e.position,
            max_batch_bytes=options.max_batch_bytes,
            max_records_per_batch=options.max_records_per_batch,
        ):
            return item if isinstance(item, Batch) and item.position == e.position else None
    except KafkaDumpError:
        return None
    return None
