"""What ``kdump dump`` asks of the decoder: the files, the range filters, and a closing summary.

``iter_dump`` streams events (a file starts, a batch with its kept records, a problem, a file ends)
and ends with one ``Summary`` event; it prints nothing and mutates nothing of its caller's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, fields
from itertools import chain
from operator import attrgetter
from pathlib import Path
from typing import NamedTuple

from kafka_dump.errors import NotASegmentError
from kafka_dump.log.copies import opening_problems
from kafka_dump.log.index import index_base_offset, seek_position
from kafka_dump.log.segment import (
    PlainRunReader,
    read_segment_runs,
)
from kafka_dump.log.sidefiles import SideItem, read_side_file, side_file_kind
from kafka_dump.log.sources import Source, as_sources
from kafka_dump.log.txnindex import TxnIndexes
from kafka_dump.log.window import unreadable
from kafka_dump.model import Batch, Compression, Problem, ProblemKind, Record
from kafka_dump.wire.codecs import DEFAULT_MAX_BATCH_BYTES, DEFAULT_MAX_RECORDS_PER_BATCH
from kafka_dump.wire.match import Match


@dataclass(frozen=True)
class RangeFilter:
    """``--from/--to-offset``, ``--from/--to-time`` (epoch ms, inclusive) and ``--limit``."""

    from_offset: int | None = None
    to_offset: int | None = None
    from_time: int | None = None
    to_time: int | None = None
    limit: int | None = None

    @property
    def active(self) -> bool:
        return any(v is not None for v in (self.from_offset, self.to_offset, self.from_time, self.to_time))

    def keep_header(self, last_offset: int, max_timestamp: int) -> bool:
        """False when a batch's header alone proves that none of its records is in range."""
        if self.from_offset is not None and last_offset < self.from_offset:
            return False
        return not (self.from_time is not None and max_timestamp < self.from_time)

    def keep_record(self, r: Record) -> bool:
        if self.from_offset is not None and r.offset < self.from_offset:
            return False
        if self.to_offset is not None and r.offset > self.to_offset:
            return False
        if self.from_time is not None and r.timestamp < self.from_time:
            return False
        return not (self.to_time is not None and r.timestamp > self.to_time)

    def keep_batch(self, b: Batch) -> bool:
        """For --batches-only: the batch may hold a record in range."""
        if not self.keep_header(b.lastOffset, b.maxTimestamp):
            return False
        return not (self.to_offset is not None and b.baseOffset > self.to_offset)


@dataclass(frozen=True)
class Summary:
    """The last event of a dump: counts for the exit code and the closing summary."""

    files: int = 0
    batches: int = 0
    records: int = 0
    corrupt: int = 0  # problems that are corruption (the exit code is 1 when there is any)
    tails: int = 0  # zero-filled or partial tails: facts, not corruption
    tail_bytes: int = 0
    aborted: int = 0  # data batches of aborted transactions (marked as such)
    unmarked: int = 0  # files with transactional data and no .txnindex: aborted data could not be marked
    held: Held | None = None  # under a range filter: what the files hold, filtered out or not
    unreadable: int = 0  # files of the scan that could not be read (each also counted as corrupt)


def merged(a: Summary, b: Summary) -> Summary:
    """The summary of two dumps in turn (the files of ``dump -j``, each dumped alone)."""
    held = a.held if b.held is None else b.held if a.held is None else a.held.merge(b.held)
    counts = {f.name: getattr(a, f.name) + getattr(b, f.name) for f in fields(Summary) if f.name != "held"}
    return Summary(**counts, held=held)


class Held(NamedTuple):
    """The offsets and the latest batch time a filtered read went past (to say why nothing matched)."""

    first_offset: int
    last_offset: int | None  # None when the read stopped early (past --to-offset)
    last_time: int

    def merge(self, other: Held) -> Held:
        """What two reads in turn went past."""
        last = (
            None
            if self.last_offset is None or other.last_offset is None
            else max(self.last_offset, other.last_offset)
        )
        return Held(min(self.first_offset, other.first_offset), last, max(self.last_time, other.last_time))


class FileStart(NamedTuple):
    """A file is about to be read; what its name says, parsed here so renderers need not."""

    path: str
    base_offset: int | None  # from a Kafka segment name: 00000000000000001000.log -> 1000
    snapshot: tuple[int, int] | None  # (end offset, epoch) from a KRaft snapshot's name


class FileEnd(NamedTuple):
    path: str
    trailing: int  # bytes of tail (zero-filled or partial) found at its end


class BatchEvent(NamedTuple):
    """A batch to show, with the records that passed the filters (one per batch: kept cheap)."""

    batch: Batch
    records: tuple[Record, ...] | None


class AbortedBatchEvent(BatchEvent):
    """A data batch of an aborted transaction (see txnindex.py), to show marked as such."""

    __slots__ = ()


class BatchRun(NamedTuple):
    """Batches to show whole, in file order (no range filter or --limit is active), each standing for
    ``BatchEvent(batch, batch.records)``: a run of plain v0/v1 messages, one step per layer."""

    batches: Sequence[Batch]


class WrittenRun(NamedTuple):
    """A run of plain v0/v1 messages that the renderer wrote straight from their bytes (``plain_run``
    of ``iter_dump``): its output, and what the summary and the progress bar count of it."""

    file: str
    output: bytes
    batches: int  # one a message, each with its one record (when records are read)
    end: int  # the file position after its last message


# A renderer's way with a run of plain v0/v1 messages, from their bytes (decode_legacy_run's arguments):
# (output, batches, bytes used), or None to have the run decoded and shown batch by batch.
PlainRunWriter = Callable[[str, bytes, int, int, int, bool], "tuple[bytes, int, int] | None"]


class SideEntry(NamedTuple):
    """One entry of a file kept beside segments (.index, .snapshot...; see log/sidefiles.py)."""

    path: str
    item: SideItem


DumpEvent = (
    FileStart | FileEnd | BatchEvent | AbortedBatchEvent | BatchRun | WrittenRun | SideEntry | Problem | Summary
)  # fmt: skip
_records_of = attrgetter("records")


def _side_items(f: Source) -> Iterator[SideEntry | Problem]:
    """A side file's entries and problems (range filters and --limit do not apply: they are not records)."""
    try:
        for item in read_side_file(f.path):
            yield item if isinstance(item, Problem) else SideEntry(str(f), item)
    except OSError as exc:
        raise NotASegmentError(f"cannot read ({exc.strerror})", file=str(f)) from None


def progress_position(event: DumpEvent) -> tuple[str, int] | None:
    """(file, bytes read so far) that an event shows, for a progress bar; None when it shows none."""
    if isinstance(event, WrittenRun):
        return event.file, event.end
    if isinstance(event, BatchEvent | BatchRun):
        b = event.batch if isinstance(event, BatchEvent) else event.batches[-1]
        return b.file, b.position + b.sizeInBytes
    if isinstance(event, Problem):
        return event.file, event.position + event.length
    if isinstance(event, FileStart):
        return event.path, 0
    return None


def _unread(b: Batch) -> bool:
    """A batch without records that should have some: the header counts them, or it is a wrapper."""
    if b.magic >= 2:
        return (b.recordCount or 0) > 0
    return b.compression is not Compression.NONE


def iter_dump(
    paths: Sequence[str | Source],
    rng: RangeFilter,
    *,
    with_records: bool = True,
    max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES,
    max_records_per_batch: int = DEFAULT_MAX_RECORDS_PER_BATCH,
    txn_index: bool = True,
    plain_run: PlainRunWriter | None = None,
    match: Match | None = None,
    several: bool = False,
) -> Iterator[DumpEvent]:
    """Stream the events of dumping ``paths`` (sources, or paths as ``sources.find`` resolves them);
    a ``Summary`` ends it.

    ``txn_index``: send the data batches of aborted transactions as ``AbortedBatchEvent`` (txnindex.py).
    ``plain_run``: where nothing filters, runs of plain v0/v1 messages go to it first (``WrittenRun``).
    ``match``: a search (``wire/match.py``), applied by the reader: a batch comes with the records it
    keeps, and not at all when it keeps none. ``several``: the paths are a share of a larger dump (one
    file of ``dump -j``): a file that cannot be opened is reported in the stream, as one of several is.
    """
    files = as_sources(paths)
    left = rng.limit
    active = rng.active
    seen = _Seen(rng.keep_header)
    n_files = n_batches = n_records = n_unreadable = 0
    tally = _Tally()
    txn_indexes = TxnIndexes()
    for f in files:
        if left is not None and left <= 0:
            break
        n_files += 1
        yield FileStart(f.name, f.base_offset, f.snapshot)
        trailing = 0
        if (several or len(files) > 1) and (
            locked := unreadable(f)
        ) is not None:  # one file alone: its error, exit 2
            tally.count(locked)
            n_unreadable += 1
            yield locked
            yield FileEnd(f.name, 0)
            continue
        if side_file_kind(f) is not None:
            for event in _side_items(f):
                if isinstance(event, Problem):
                    trailing += tally.count(event)
                yield event
            yield FileEnd(f.name, trailing)
            continue
        for p in opening_problems(f):  # a tiered object's chunks that could not be restored
            tally.count(p)
            yield p
        tally.covers = None
        tally.unknown = False
        if txn_index and f.path.endswith(".log") and not f.piped:
            index, txn_problems = txn_indexes.for_log(Path(f.path))
            for p in txn_problems:
                tally.count(p)
                yield p
            tally.covers = index.covers if len(index) else None
            tally.unknown = not index.known
        start = seek_position(Path(f), from_offset=rng.from_offset, from_time=rng.from_time) if active else 0
        if active:
            seen.offset(index_base_offset(f.path))  # the reader's filter sees last offsets only
        plain = not active and left is None and match is None
        runs: Iterator[Sequence[Batch | Problem | WrittenRun]] = read_segment_runs(
            f,
            with_records=with_records,
            max_batch_bytes=max_batch_bytes,
            start=start,
            keep=seen.keep if active else None,
            max_records_per_batch=max_records_per_batch,
            plain_run=_written(plain_run) if plain_run is not None and plain else None,
            match=match,
        )
        if plain:
            # No filter, no limit: the plain loop; a run of plain v0/v1 messages passes on as one BatchRun.
            for item in (x for run in runs for x in _one_or_run(run)):
                if not isinstance(item, Batch):
                    if isinstance(item, WrittenRun):
                        n_batches += item.batches
                        n_records += item.batches if with_records else 0
                    elif isinstance(item, BatchRun):
                        n_batches += len(item.batches)
                        n_records += sum(map(len, map(_records_of, item.batches))) if with_records else 0
                    else:
                        trailing += tally.count(item)
                    yield item
                    continue
                records = item.records
                if records:
                    n_records += len(records)
                    tally.inner_crcs(item, records)
                elif with_records and _unread(item):
                    records = None  # no record could be read (a codec failed): not the same as none at all
                n_batches += 1
                make = tally.event if item.isTransactional and not item.isControl else BatchEvent
                yield make(item, records)
            yield FileEnd(f.name, trailing)
            continue
        items: Iterator[Batch | Problem] = chain.from_iterable(runs)  # type: ignore[arg-type]  # no plain_run
        for item in items:
            if isinstance(item, Problem):
                trailing += tally.count(item)
                yield item
                continue
            if rng.to_offset is not None and item.baseOffset > rng.to_offset:
                seen.stopped = True  # what comes after is not read
                break
            records = item.records
            if records:
                tally.inner_crcs(item, records)
            if with_records and not records and _unread(item):
                records = None  # no record could be read (a codec failed): not the same as none at all
            if records is not None and active:
                records = tuple(r for r in records if rng.keep_record(r))
                if not records and item.records:
                    continue
            elif records is None and active and not rng.keep_batch(item):
                continue
            if left is not None:
                if left <= 0:
                    break
                if records is not None:
                    records = records[:left]
                    left -= len(records)
                elif not with_records:
                    left -= 1
            n_batches += 1
            n_records += len(records) if records is not None else 0
            yield (tally.event if item.isTransactional and not item.isControl else BatchEvent)(item, records)
        else:
            yield FileEnd(f.name, trailing)
            continue
        yield FileEnd(f.name, 0)
    t = tally
    held = seen.held() if active else None
    yield Summary(
        n_files, n_batches, n_records, t.corrupt, t.tails, t.tail_bytes, t.aborted, t.unmarked, held,
        n_unreadable,
    )  # fmt: skip


class _Seen:
    """What a filtered read goes past: each entry's header (``keep``, the reader's filter) and each
    batch read."""

    __slots__ = ("_filter", "first", "last", "stopped", "time")

    def __init__(self, keep: Callable[[int, int], bool]) -> None:
        self._filter = keep
        self.first: int | None = None
        self.last: int | None = None
        self.time: int | None = None
        self.stopped = False

    def keep(self, last_offset: int, max_timestamp: int) -> bool:
        self.offset(last_offset)
        self.time = max_timestamp if self.time is None else max(self.time, max_timestamp)
        return self._filter(last_offset, max_timestamp)

    def offset(self, offset: int) -> None:
        self.first = offset if self.first is None else min(self.first, offset)
        self.last = offset if self.last is None else max(self.last, offset)

    def held(self) -> Held | None:
        if self.first is None or self.last is None:
            return None
        return Held(self.first, None if self.stopped else self.last, -1 if self.time is None else self.time)


_CRC_VALID = attrgetter("crcValid")


class _Tally:
    """The counts for the closing Summary, and which of a file's transactional data batches were
    aborted. ``covers``: the aborted-transaction test (None: nothing aborted in this file);
    ``unknown``: no ``.txnindex`` to tell (the first such batch is counted as unmarked)."""

    __slots__ = ("aborted", "corrupt", "covers", "tail_bytes", "tails", "unknown", "unmarked")

    def __init__(self) -> None:
        self.covers: Callable[[Batch], bool] | None = None
        self.unknown = False
        self.aborted = self.unmarked = self.corrupt = self.tails = self.tail_bytes = 0

    def count(self, p: Problem) -> int:
        """Count ``p``; returns the tail bytes it adds to its file (0 for corruption)."""
        if p.kind is ProblemKind.CORRUPT:
            self.corrupt += 1
            return 0
        self.tails += 1
        self.tail_bytes += p.length
        return p.length

    def inner_crcs(self, item: Batch, records: tuple[Record, ...]) -> None:
        """An inner message of a v0/v1 wrapper that fails its CRC is corruption, as the wrapper's own
        failure is (shown on its record, not as a problem)."""
        if item.magic < 2 and item.compression is not Compression.NONE and not all(map(_CRC_VALID, records)):
            self.corrupt += 1

    def event(self, item: Batch, records: tuple[Record, ...] | None) -> BatchEvent:
        if self.covers is not None and self.covers(item):
            self.aborted += 1
            return AbortedBatchEvent(item, records)
        if self.unknown:
            self.unmarked += 1
            self.unknown = False
        return BatchEvent(item, records)


def _written(write: PlainRunWriter) -> PlainRunReader:
    """The segment reader's hook for runs of plain messages, from a renderer's ``PlainRunWriter``."""

    def read(
        file: str, data: bytes, pos: int, end: int, file_pos: int, with_records: bool
    ) -> tuple[list[WrittenRun], int] | None:
        done = write(file, data, pos, end, file_pos, with_records)
        if done is None:
            return None
        output, batches, used = done
        return ([WrittenRun(file, output, batches, file_pos + used)] if used else []), used

    return read


def _one_or_run(
    run: Sequence[Batch | Problem | WrittenRun],
) -> Sequence[Batch | Problem | BatchRun | WrittenRun]:
    """A run of two or more batches and no problem (plain v0/v1 messages, whose records are all
    read) as one ``BatchRun``; any other list of items as it is."""
    if len(run) > 1 and Problem not in map(type, run):
        return (BatchRun(run),)  # type: ignore[arg-type]  # batches only: checked just above
    return run
