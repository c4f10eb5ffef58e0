"""What ``kdump ls`` lists: one ``Listing`` per segment from its entry headers, and rollups of them.

A segment is read by the shared entry walk (``walk_entries``) given its file descriptor: it reads the
headers itself, a window where entries are small and one header where they are large, so the bytes
read grow with the entries, not with the file; nothing is decompressed and no CRC computed. Each call
takes a bounded number of entries, whose rows are counted at once. Where the walk declines an
entry (damage, a tail, offsets out of order) the segment reader reads the rest of the file and reports
what it finds. ``deep`` reads every entry through the segment reader instead, which fills in what
only a payload holds (a v0/v1 wrapper's records and first offset). A search (``match``) reads every
entry again through the segment reader's match mode, to count the records it keeps. No printing here.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from kafka_dump import wire as _twins
from kafka_dump.errors import KafkaDumpError
from kafka_dump.log.copies import release
from kafka_dump.log.names import segment_base_offset
from kafka_dump.log.sources import transient_dir_partition
from kafka_dump.log.window import CHUNK_SIZE, open_segment
from kafka_dump.model import Batch, Compression, Problem, ProblemKind
from kafka_dump.wire import layout as L
from kafka_dump.wire._walk_pure import EntryRow, batch_row, no_payload
from kafka_dump.wire.codecs import DEFAULT_MAX_BATCH_BYTES, DEFAULT_MAX_RECORDS_PER_BATCH
from kafka_dump.wire.match import Match

Segment = os.PathLike[str]  # a Path, or a sources.Source (shown by its name, opened by its path)
_ROWS = 1024  # entries a call of the walk takes at most
_SMALL_FILE = 16 * 1024  # a file this small is read whole, and read-ahead does no harm

ROLLUPS = ("segment", "partition", "topic", "dir")
SORTS = ("offset", "size", "time")


@dataclass(slots=True)
class Listing:
    """What the headers of one segment (or, rolled up, of several) say.

    ``name`` is what a row shows (a segment's path, a partition, a topic or a log dir). ``records`` is
    None where a v0/v1 wrapper read by its header alone holds an unknown number; ``firstOffset`` is
    None where the first entry is such a wrapper. ``formats`` maps (magic, codec) to [entries, bytes].
    ``problem``: the first framing problem or tail the reader met, and ``problems`` how many;
    ``crcErrors``: with ``--verify``, the entries whose CRC fails (None when not checked); ``matches``:
    with a search, the records it keeps (None when there is no search).
    """

    name: str
    partition: str = ""
    topic: str = ""
    dir: str = ""
    segments: int = 1
    baseOffset: int | None = None
    firstOffset: int | None = None
    lastOffset: int | None = None
    firstTimestamp: int | None = None
    lastTimestamp: int | None = None
    bytes: int = 0
    entries: int = 0
    records: int | None = 0
    formats: dict[tuple[int, int], list[int]] = field(default_factory=dict)
    producers: bool = False
    transactional: bool = False
    control: bool = False
    problem: Problem | None = None
    problems: int = 0
    crcErrors: int | None = None
    matches: int | None = None
    error: str | None = None
    modified: int | None = None  # the file's mtime (ms), where a v0/v1 entry had no timestamp to say
    legacy: LegacySpan | None = None  # what its v0/v1 entries hold, where there are any
    state: str | None = None  # Kafka's transient state (sources.TRANSIENT_*): a rollup's when all share it

    def add_row(self, row: EntryRow) -> None:
        """Count one entry's ``EntryRow`` (the walk's, or one made of a batch by ``listed_row``)."""
        _pos, low, last, max_ts, size, magic, attributes, first_ts, records, producer, *_ = row
        codec = attributes & L.COMPRESSION_MASK
        if self.entries == 0:
            self.firstOffset = None if records < 0 else low
        self.lastOffset = last if self.lastOffset is None else max(self.lastOffset, last)
        self.entries += 1
        self.bytes += size
        if records < 0 or self.records is None:
            self.records = None
        else:
            self.records += records
        bucket = self.formats.setdefault((magic, codec), [0, 0])
        bucket[0] += 1
        bucket[1] += size
        if magic == 2:
            create = not attributes & (L.TIMESTAMP_TYPE_BIT | L.DELETE_HORIZON_BIT)
            self._time(first_ts if create else max_ts, max_ts)
            self.producers |= producer >= 0
            self.transactional |= bool(attributes & L.TRANSACTIONAL_BIT)
            self.control |= bool(attributes & L.CONTROL_BIT)
        else:
            self._time(first_ts, max_ts)
            if self.legacy is None:
                self.legacy = LegacySpan()
            self.legacy.add(None if records < 0 else low, last, max_ts, size)

    def add_rows(self, rows: list[EntryRow]) -> None:
        """Count the walk's rows, as ``add_row`` each: a run of v2 batches alike in their attributes (most
        segments) column by column, at the speed of the builtins; any other, and a few, one by one."""
        n = len(rows)
        if n < 4:
            for row in rows:
                self.add_row(row)
            return
        _, lows, lasts, max_ts, sizes, magics, attributes, first_ts, records, producers, *_ = zip(
            *rows, strict=True
        )
        flags = attributes[0]
        if magics.count(2) != n or attributes.count(flags) != n:
            for row in rows:
                self.add_row(row)
            return
        if self.entries == 0:
            self.firstOffset = lows[0]
        self.lastOffset = _high(self.lastOffset, max(lasts))
        self.entries += n
        size = sum(sizes)
        self.bytes += size
        if self.records is not None:  # a v2 batch's count is never negative
            self.records += sum(records)
        bucket = self.formats.setdefault((2, flags & L.COMPRESSION_MASK), [0, 0])
        bucket[0] += n
        bucket[1] += size
        firsts = max_ts if flags & (L.TIMESTAMP_TYPE_BIT | L.DELETE_HORIZON_BIT) else first_ts
        low = min(firsts)
        self._time(low if low >= 0 else min((t for t in firsts if t >= 0), default=-1), max(max_ts))
        self.producers |= max(producers) >= 0
        self.transactional |= bool(flags & L.TRANSACTIONAL_BIT)
        self.control |= bool(flags & L.CONTROL_BIT)

    def _time(self, first: int, last: int) -> None:
        if first >= 0 and (self.firstTimestamp is None or first < self.firstTimestamp):
            self.firstTimestamp = first
        if last >= 0 and (self.lastTimestamp is None or last > self.lastTimestamp):
            self.lastTimestamp = last

    def add_problem(self, p: Problem) -> None:
        if self.problem is None:
            self.problem = p
        self.problems += 1

    def merge(self, other: Listing) -> None:
        """Roll ``other`` (a later segment, or another group) into this one."""
        self.segments += other.segments
        if other.entries:  # an unknown first offset (a wrapper's) stays unknown
            known = self.firstOffset is not None and other.firstOffset is not None
            self.firstOffset = min(self.firstOffset, other.firstOffset) if known else None  # type: ignore[type-var]
            if not self.entries:
                self.firstOffset = other.firstOffset
        self.lastOffset = _high(self.lastOffset, other.lastOffset)
        self.firstTimestamp = _low(self.firstTimestamp, other.firstTimestamp)
        self.lastTimestamp = _high(self.lastTimestamp, other.lastTimestamp)
        self.baseOffset = _low(self.baseOffset, other.baseOffset)
        self.bytes += other.bytes
        self.entries += other.entries
        self.records = None if self.records is None or other.records is None else self.records + other.records
        for key, (n, size) in other.formats.items():
            bucket = self.formats.setdefault(key, [0, 0])
            bucket[0] += n
            bucket[1] += size
        self.producers |= other.producers
        self.transactional |= other.transactional
        self.control |= other.control
        if self.problem is None:
            self.problem = other.problem
        self.problems += other.problems
        if other.crcErrors is not None:
            self.crcErrors = (self.crcErrors or 0) + other.crcErrors
        if other.matches is not None:
            self.matches = (self.matches or 0) + other.matches
        if self.error is None:
            self.error = other.error
        if self.state != other.state:
            self.state = None
        self.modified = _high(self.modified, other.modified)
        if other.legacy is not None:
            if self.legacy is None:
                self.legacy = LegacySpan(firstOffset=other.legacy.firstOffset, segments=0, entries=0)
            self.legacy.merge(other.legacy)

    @property
    def legacy_bytes(self) -> int:
        """Bytes of v0/v1 entries."""
        return sum(size for (magic, _), (_, size) in self.formats.items() if magic < 2)


@dataclass(slots=True)
class LegacySpan:
    """The v0/v1 entries of a segment (or, merged, of several): offsets (the first None where a
    wrapper's is unknown), newest timestamp, entries, bytes and segments."""

    firstOffset: int | None = None
    lastOffset: int | None = None
    lastTimestamp: int | None = None
    entries: int = 0
    bytes: int = 0
    segments: int = 1

    def add(self, first: int | None, last: int, max_ts: int, size: int) -> None:
        if not self.entries:
            self.firstOffset = first
        self.lastOffset = _high(self.lastOffset, last)
        if max_ts >= 0:
            self.lastTimestamp = _high(self.lastTimestamp, max_ts)
        self.entries += 1
        self.bytes += size

    def merge(self, other: LegacySpan) -> None:
        if self.entries and other.entries:
            known = self.firstOffset is not None and other.firstOffset is not None
            self.firstOffset = min(self.firstOffset, other.firstOffset) if known else None  # type: ignore[type-var]
        self.lastOffset = _high(self.lastOffset, other.lastOffset)
        self.lastTimestamp = _high(self.lastTimestamp, other.lastTimestamp)
        self.entries += other.entries
        self.bytes += other.bytes
        self.segments += other.segments


def _low(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else min(a, b)


def _high(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else max(a, b)


def format_mix(formats: dict[tuple[int, int], list[int]]) -> str:
    """``v1 gzip + v2 lz4``: each magic and codec found, in order."""
    return " + ".join(f"v{magic} {codec_name(codec)}" for magic, codec in sorted(formats)) or "-"


def codec_name(codec: int) -> str:
    """``gzip``; ``codec 6`` for an id Kafka never assigned."""
    c = Compression(codec)
    return f"codec {codec}" if c is Compression.UNKNOWN else c.label


def listed_row(b: Batch) -> EntryRow:
    """The ``EntryRow`` the headers-only walk gives, for a batch the segment reader read."""
    if b.records is not None:
        records = len(b.records)
    else:
        wrapper = b.magic < 2 and b.compression is not Compression.NONE
        records = -1 if wrapper or b.recordCount is None else b.recordCount
    return batch_row(b, b.baseOffset, records)


@dataclass
class LsOptions:
    """``--deep``, ``--verify``, the search options and the limits of what a batch may hold."""

    deep: bool = False
    verify: bool = False
    match: Match | None = None
    max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES
    max_records_per_batch: int = DEFAULT_MAX_RECORDS_PER_BATCH


def place(path: Segment) -> tuple[str, str, str]:
    """(partition, topic, log dir) of a segment, from its directory's name (``my-topic-0``; the topic
    of Kafka's ``my-topic-0.<id>-delete`` too), as its name spells them (a path, an object's URL)."""
    where = os.path.dirname(str(path)) or "."
    partition = os.path.basename(where) or where
    log_dir = os.path.dirname(where) or "."
    if partition in (".", "..") and "://" not in where:  # spelled relative to it: the directory's own name
        partition = os.path.basename(os.path.abspath(where)) or partition
        log_dir = os.path.join(where, "..")
    live = transient_dir_partition(partition) or partition
    topic, sep, number = live.rpartition("-")
    if not sep or not number.isdigit():
        topic = live
    return partition, topic, log_dir


def list_segment(path: Segment, options: LsOptions) -> Listing:
    """One segment's ``Listing``; an unreadable file gives one with ``error`` set."""
    partition, topic, log_dir = place(path)
    listing = Listing(str(path), partition, topic, log_dir, baseOffset=segment_base_offset(path))
    try:
        if options.deep:
            _read(path, 0, None, listing, options, with_records=True)
        else:
            _walk_headers(path, listing, options)
        if options.match is not None:
            _search(path, listing, options, options.match)
        if listing.legacy is not None and listing.lastTimestamp is None:  # Kafka's clock is then the mtime
            listing.modified = os.stat(path).st_mtime_ns // 1_000_000
        if options.verify:
            from kafka_dump.analysis.verify import FileReport, VerifyOptions, verify_file

            for event in verify_file(path, VerifyOptions(deep=False, index=False)):
                if isinstance(event, FileReport):
                    listing.crcErrors = event.crcErrors
    except (KafkaDumpError, OSError) as exc:
        listing.error = str(exc) if isinstance(exc, KafkaDumpError) else f"{path}: {exc.strerror or exc}"
    return listing


def _walk_headers(path: Segment, listing: Listing, options: LsOptions) -> None:
    f, size = open_segment(path)
    limit = max(options.max_batch_bytes, CHUNK_SIZE)
    rows: list[EntryRow] = []
    last: int | None = None
    with f:
        fd = f.fileno()
        if size > _SMALL_FILE and hasattr(os, "posix_fadvise"):
            # No read-ahead from disk: a header read fetches its page, not the payloads after it.
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
        pos = 0
        while pos < size:
            # The walk reads the file itself (the header of each large entry, a window of small ones),
            # a bounded number of entries a call so that the rows held stay few.
            rows.clear()
            used, _, _, _, last, _ = _twins.walk_entries(
                fd,
                pos,
                size,
                0,
                False,
                last,
                False,
                options.max_records_per_batch,
                limit,
                None,
                None,
                no_payload,
                rows,
                size,
                _ROWS,
            )
            listing.add_rows(rows)
            if not used:  # the entry at pos was declined, or the file shrank under the walk: the reader's
                _read(path, pos, size, listing, options, with_records=False)
                return
            pos += used


def _read(
    path: Segment, start: int, size: int | None, listing: Listing, options: LsOptions, *, with_records: bool
) -> None:
    from kafka_dump.log.segment import read_segment

    items = read_segment(
        path,
        with_records=with_records,
        start=start,
        size=size,
        max_batch_bytes=options.max_batch_bytes,
        max_records_per_batch=options.max_records_per_batch,
    )
    for item in items:
        if isinstance(item, Batch):
            listing.add_row(listed_row(item))
        else:
            listing.add_problem(item)


def _search(path: Segment, listing: Listing, options: LsOptions, match: Match) -> None:
    """Count the records ``match`` keeps, read by the segment reader's match mode. After a header walk,
    its problems take the place of the walk's: it meets every one the walk met, and those inside
    payloads (``deep``'s read met those already, in the entries a search skips too)."""
    from kafka_dump.log.segment import read_segment_runs

    listing.matches = 0
    if not options.deep:
        listing.problem, listing.problems = None, 0
    runs = read_segment_runs(
        path,
        match=match,
        max_batch_bytes=options.max_batch_bytes,
        max_records_per_batch=options.max_records_per_batch,
    )
    for run in runs:
        for item in run:
            if isinstance(item, Batch):
                listing.matches += len(item.records or ())
            elif not options.deep:
                listing.add_problem(item)


def list_partition(files: list[Segment], options: LsOptions) -> list[Listing]:
    """Each segment of one partition, in order (a unit of work for ``-j`` and ``--dask``); the local
    copies of objects removed after (a worker ends without its exit handlers)."""
    try:
        return [list_segment(f, options) for f in files]
    finally:
        release(files)


def by_partition(files: Iterable[Segment]) -> list[list[Segment]]:
    """The files grouped by the directory that holds them, in the order given."""
    groups: dict[str, list[Segment]] = {}
    for f in files:
        groups.setdefault(os.path.dirname(str(f)), []).append(f)
    return list(groups.values())


def rollup(listings: Iterable[Listing], by: str, name: Callable[[Listing], str]) -> list[Listing]:
    """Listings merged per partition, topic or log dir (``by``), named by ``name``; as they are for
    ``segment``."""
    if by == "segment":
        return list(listings)
    groups: dict[str, Listing] = {}
    for one in listings:
        key = {"partition": os.path.join(one.dir, one.partition), "topic": one.topic, "dir": one.dir}[by]
        group = groups.get(key)
        if group is None:
            groups[key] = group = Listing(
                name(one), one.partition, one.topic, one.dir, segments=0, entries=0, state=one.state
            )
        group.merge(one)
    return list(groups.values())


def sort_key(how: str) -> Callable[[Listing], tuple[int, ...]]:
    """The order of rows: ``offset`` keeps the order found (directory, then offsets), ``size`` puts the
    largest first, ``time`` the oldest first (those without a time last)."""
    if how == "size":
        return lambda one: (-one.bytes,)
    if how == "time":
        return lambda one: (one.firstTimestamp is None, one.firstTimestamp or 0)
    return lambda one: ()


def tail_problem(p: Problem | None) -> bool:
    """A zero or partial tail: a fact of the file, not damage."""
    return p is not None and p.kind is not ProblemKind.CORRUPT


def iter_listings(
    groups: list[list[Segment]], options: LsOptions, jobs: int = 1, dask: str | None = None
) -> Iterator[Listing]:
    """Each segment's listing, partition by partition, in the order of ``groups`` whatever ``jobs``
    (partitions listed by that many processes at once, in chunks, the answers taken in order) or
    ``dask`` (a Dask scheduler's address: a task a partition)."""
    if dask is not None:
        from kafka_dump.analysis.cluster import on_dask

        for listings in on_dask(dask, list_partition, groups, options):
            yield from listings
        return
    workers = min(jobs, len(groups))
    if workers <= 1:
        for files in groups:
            yield from list_partition(files, options)
        return
    from concurrent.futures import ProcessPoolExecutor

    chunk = max(1, len(groups) // (workers * 8))  # a few chunks a worker: little pickling, even load
    with ProcessPoolExecutor(max_workers=workers) as pool:
        for listings in pool.map(list_partition, groups, [options] * len(groups), chunksize=chunk):
            yield from listings
