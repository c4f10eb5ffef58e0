"""What ``kdump verify-crc`` checks in each file, as a stream of problems and one summary per file.

The segment reader checks each entry's framing and CRC and every v2 record's framing, order and
count. This module adds what needs more than one entry, or the meaning of the fields: offsets
increasing across batches (gaps counted, not faulted: compaction makes them), ``maxTimestamp``
covering every CreateTime record, one marker per transaction marker batch, the inner CRCs of v0/v1
wrappers, and the index files; and it sorts every byte into batches, bad regions and the tail, for
``--salvage``. No printing here.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Generator, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, NamedTuple

from kafka_dump import wire as _twins
from kafka_dump.errors import KafkaDumpError
from kafka_dump.log.ahead import Inflating, inflating_for
from kafka_dump.log.copies import opening_problems, tiered_offsets
from kafka_dump.log.names import LOG_DIR_NAMES, side_file_kind
from kafka_dump.log.sources import Source
from kafka_dump.log.window import CHUNK_SIZE, Window, open_segment
from kafka_dump.model import (
    Batch,
    Check,
    Compression,
    Problem,
    ProblemKind,
    TimestampType,
    item_end,
    not_one_marker,
)
from kafka_dump.wire import layout as L
from kafka_dump.wire.checksum import crc32c
from kafka_dump.wire.codecs import DEFAULT_MAX_BATCH_BYTES, DEFAULT_MAX_RECORDS_PER_BATCH, decompress

if TYPE_CHECKING:
    from kafka_dump.log.index import IndexCheck
    from kafka_dump.log.remote import Store
    from kafka_dump.log.segment import Item
    from kafka_dump.wire._walk_pure import EntryRow
    from kafka_dump.wire.v2 import RecordWalk

# The segment reader and the index check are imported only when a file needs them: a sound segment
# without index files is checked by the entry walk alone, and start-up is most of a short check's time.
_INDEX_SUFFIXES = (".index", ".timeindex", ".txnindex")

WITH_ITS_LOG = "checked with"  # the note of an index file checked with its log, in the same run
_PROGRESS_EVERY = 4 * 1024 * 1024  # bytes of file between progress events
_WINDOW = 8 * 1024 * 1024  # the entry walk's read window
_RESUME_AFTER = 256 * 1024  # sound bytes after damage before the entry walk takes over from the reader
_PREFIX = L.MAGIC_OFFSET + 1  # offset, size and magic
_SMALLEST = L.LOG_OVERHEAD + L.LEGACY_V0_MIN_SIZE
_CODECS = tuple(Compression(i) for i in range(8))


def _entry_size(data: bytes | bytearray, at: int) -> int:
    """The whole size of the entry whose offset field starts at ``data[at]``."""
    return L.LOG_OVERHEAD + int(L.INT32.unpack_from(data, at + L.LOG_ENTRY_SIZE_OFFSET)[0])


_NOTHING: list[Problem] = []  # never appended to


class VerifyOptions:
    """``--deep``/``--shallow``, ``--no-index``, ``--max-batch-bytes`` and ``--max-records-per-batch``."""

    __slots__ = (
        "deep",
        "index",
        "indexes",
        "inflate_ahead",
        "logs",
        "max_batch_bytes",
        "max_records_per_batch",
    )

    def __init__(
        self,
        deep: bool = True,
        index: bool = True,
        max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES,
        max_records_per_batch: int = DEFAULT_MAX_RECORDS_PER_BATCH,
        inflate_ahead: bool = True,  # deep: inflate on a second thread (off when files are checked in parallel)
        logs: frozenset[
            str
        ] = frozenset(),  # the segments of this run: their index files are checked with them
        indexes: Mapping[str, frozenset[str]] | None = None,  # Scan.indexes: the index files listed
    ) -> None:
        self.deep = deep
        self.index = index
        self.max_batch_bytes = max_batch_bytes
        self.max_records_per_batch = max_records_per_batch
        self.inflate_ahead = inflate_ahead
        self.logs = logs
        self.indexes = {} if indexes is None else indexes


class Span(NamedTuple):
    """Bytes of a file that hold no valid batch: a bad region, a damaged batch, or the tail."""

    start: int
    end: int
    reason: str


class FileReport:
    """One file's verdict: its counts, and the spans that ``--salvage`` drops.

    ``batches`` counts every framed batch, a CRC failure included, and those found after a bad
    region; ``problems`` counts corrupt problems in the log (CRC failures included), ``badRegions``
    the stretches of bytes that hold no batch. ``error`` is set when the file could not be read;
    ``note`` says how a side file (an index, a snapshot, a checkpoint) was checked.
    Equal to another with the same fields (not a dataclass, whose ``exec`` a short check would pay).
    """

    def __init__(self, file: str) -> None:
        self.file = file
        self.bytes = self.batches = self.records = self.crcErrors = self.problems = 0
        self.badRegions = self.badRegionBytes = self.gaps = 0
        self.tail: Problem | None = None
        self.indexFiles = self.indexProblems = 0
        self.error: str | None = None
        self.note: str | None = None
        self.dropped: list[Span] = []

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return vars(self) == vars(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable, as a dataclass with eq

    def __repr__(self) -> str:
        return f"FileReport({', '.join(f'{k}={v!r}' for k, v in vars(self).items())})"

    @property
    def damaged(self) -> bool:
        """Corrupt data in the log itself (what ``--salvage`` can repair)."""
        return self.problems > 0


class FileProgress(NamedTuple):
    """How far the check of one file has come (bytes), every few MiB."""

    file: str
    done: int


VerifyEvent = Problem | FileProgress | FileReport


class Scan(NamedTuple):
    """The files a check reads, and what the listings of directories found beside them."""

    files: list[Source]
    # For each directory listed, the names of the index files in it (.index, .timeindex, .txnindex):
    # beside a segment there, an index file the listing did not find is not looked for.
    indexes: dict[str, frozenset[str]]
    skipped: dict[str, list[str]]  # what the walk passed over (sources.Found.skipped)


def verify_files(
    paths: list[str], *, transient: bool = False, stdin_name: str | None = None, store: Store | None = None
) -> Scan:
    """The files to check for the paths given (``sources.find``): every segment (``.log``,
    ``.checkpoint``), a log dir's own checkpoint files (``LOG_DIR_NAMES``) and every file named, in
    reading order."""
    from kafka_dump.log.sources import FILE_STATES, READ_KINDS, find

    found = find(paths, transient=transient, stdin_name=stdin_name, store=store)
    files: list[Source] = []
    indexes: dict[str, set[str]] = {}
    for s in found.sources:
        if s.kind in READ_KINDS or s.given or s.file_name in LOG_DIR_NAMES:
            files.append(s)
        elif s.file_name.endswith(_INDEX_SUFFIXES) and s.state not in FILE_STATES:
            indexes.setdefault(s.directory, set()).add(s.file_name)
    listed = {d: frozenset(indexes.get(d, ())) for d in found.listed}
    return Scan(files, listed, found.skipped)


def verify_file(path: str | os.PathLike[str], options: VerifyOptions) -> Iterator[VerifyEvent]:
    """Check one segment: yield its problems in file order (index problems last), progress events,
    and at the end its ``FileReport``. An unreadable file gives a report with ``error`` set. A side
    file, known by its name as every command knows it, is read as what it is (``_side_file``)."""
    source = path
    path = source.path if isinstance(source, Source) else os.fspath(source)  # an object is fetched by run
    kind = side_file_kind(path)
    if kind is not None:
        yield from _side_file(os.fspath(source), kind, options)
        return
    check = _FileCheck(source, options)
    try:
        yield from check.run()
    except (KafkaDumpError, OSError) as exc:
        name = check.report.file
        error = str(exc) if isinstance(exc, KafkaDumpError) else f"{name}: {exc.strerror or exc}"
        check.report.error = error
    yield check.report


def _side_file(path: str, kind: str, options: VerifyOptions) -> Iterator[VerifyEvent]:
    """An index whose log is checked in this run is checked with it (skipped here, with a note); an
    index on its own is checked against the log beside it, and any other side file by its own rules
    (a snapshot's CRC, a checkpoint's lines). A zero-filled end is how Kafka preallocates an index:
    no tail to report."""
    report = FileReport(path)
    index = kind in _INDEX_SUFFIXES
    log = Path(path).with_suffix(".log")
    try:
        report.bytes = os.stat(path).st_size
        if index and not options.index:
            report.note = f"{kind} file, not checked (--no-index)"
        elif index and str(log) in options.logs:
            report.note = f"{kind} file, {WITH_ITS_LOG} {log.name}"
        else:
            from kafka_dump.log.sidefiles import read_side_file

            against = f" against {log.name}" if kind == ".index" and log.exists() else ""
            report.note = f"{kind} file, checked{against}"
            for item in read_side_file(path):
                if isinstance(item, Problem) and item.kind is ProblemKind.CORRUPT:
                    if index:
                        report.indexProblems += 1
                    else:
                        report.problems += 1
                    yield item
    except (KafkaDumpError, OSError) as exc:
        report.error = str(exc) if isinstance(exc, KafkaDumpError) else f"{path}: {exc.strerror or exc}"
    yield report


class _FileCheck:
    def __init__(self, source: str | os.PathLike[str], options: VerifyOptions) -> None:
        self.source = source  # what the segment reader opens (a Source shows its name, opens its path)
        self.path = source.path if isinstance(source, Source) else os.fspath(source)  # the local file: run
        self.options = options
        self.report = FileReport(source if isinstance(source, str) else str(source))
        self._walks: dict[int, RecordWalk] = {}  # position -> walk, for the batch about to be yielded
        self._pending: Batch | None = None
        self._pending_bad = False
        self._last_offset: int | None = None
        self._after_damage = False  # offsets missing after damaged bytes are no compaction gap
        self._index: IndexCheck | None = None

    def _walked(self, batch: Batch, walk: RecordWalk) -> None:
        self._walks[batch.position] = walk

    def run(self) -> Iterator[VerifyEvent]:
        report = self.report
        self.path = os.fspath(self.source)  # an object in a store is fetched (and restored) here
        indexes = self._index_files() if self.options.index and self.path.endswith(".log") else []
        if indexes:
            from kafka_dump.log.index import IndexCheck

            self._index = IndexCheck(self.path, indexes)
            report.indexFiles = len(self._index.files)
        f, size = open_segment(self.source)
        for p in opening_problems(self.source):  # a tiered object's chunks that could not be restored
            report.problems += 1
            yield p
        report.bytes = size  # what is read: bytes appended since are not, a shrinking file ends in a tail
        with f:
            yield from self._scan(f, size)
        yield from self._finish_pending()
        yield from self._against_manifest()
        if self._index is not None:
            for p in self._index.finish():
                report.indexProblems += 1
                yield p

    def _against_manifest(self) -> Iterator[Problem]:
        """A tiered object's manifest against the segment: its remoteLogSegmentMetadata's offsets
        against the base offset in the object's name and the last offset of the batches."""
        span = tiered_offsets(self.source)
        if span is None:
            return
        start, end = span
        named = self.source.base_offset if isinstance(self.source, Source) else None
        said = []
        if start is not None and named is not None and start != named:
            said.append(f"startOffset {start} where the object's name says {named}")
        if end is not None and self._last_offset is not None and end != self._last_offset:
            said.append(f"endOffset {end} where the segment's last batch ends at {self._last_offset}")
        if said:
            reason = f"the manifest's remoteLogSegmentMetadata gives {' and '.join(said)}"
            self.report.problems += 1
            yield Problem(self.report.file, 0, 0, ProblemKind.CORRUPT, reason, None, Check.MANIFEST)

    def _index_files(self) -> list[str]:
        """The index files beside the log: as its directory's listing found them, else those there now."""
        directory, sep, name = self.path.rpartition(os.sep)
        stem, name = self.path[:-4], name[:-4]  # less .log
        listed = self.options.indexes.get(directory or sep)  # "/x.log" lies in "/"
        if listed is not None:
            return [stem + s for s in _INDEX_SUFFIXES if name + s in listed]
        return [index for s in _INDEX_SUFFIXES if os.path.exists(index := stem + s)]

    def _scan(self, f: BinaryIO, size: int) -> Iterator[VerifyEvent]:
        """The file's entries: runs of sound ones walked by the entry walk (in C, without a Python
        object per entry), each other one read the slow way (the segment reader, which reports it)."""
        options = self.options
        mbb = options.max_batch_bytes

        def unpack(codec: int, payload: memoryview) -> bytes:
            return decompress(_CODECS[codec], payload, mbb)

        source = inflating_for(size, mbb, unpack, ahead=options.deep and options.inflate_ahead)
        try:
            yield from self._walk_windows(f, Window(f, size, _WINDOW, reuse=True), source)
        finally:
            source.close()

    def _walk_windows(self, f: BinaryIO, win: Window[bytearray], source: Inflating) -> Iterator[VerifyEvent]:
        """``_scan``'s loop over read windows; ``source`` (deep) inflates each window's payloads ahead."""
        options = self.options
        report = self.report
        index = self._index
        rows: list[EntryRow] = []
        limit = max(options.max_batch_bytes, CHUNK_SIZE)
        size = win.size
        pos = 0
        next_progress = _PROGRESS_EVERY
        while pos < size:
            at = pos - win.start
            if at < 0 or win.end - at < _PREFIX or _entry_size(win.buf, at) > win.end - at:
                # The next entry is not whole in the window: read on from it (once), whole if larger.
                n = win.fill(pos)
                if n >= _PREFIX and n < (entry := _entry_size(win.buf, 0)) <= min(size - pos, limit):
                    win.fill(pos, entry)
                at = 0
            data, n, start = win.buf, win.end, win.start
            fn = source.start(data, at, n)
            try:
                used, batches, records, gaps, self._last_offset, self._after_damage = _twins.walk_entries(
                    data, at, n, start, options.deep, self._last_offset, self._after_damage,
                    options.max_records_per_batch, limit, crc32c, zlib.crc32, fn,
                    rows if index is not None and index.waiting else None,  # no row without an entry to match
                )  # fmt: skip
            finally:
                source.finish()  # before the buffer is read into again
            report.batches += batches
            report.records += records
            report.gaps += gaps
            if rows:
                yield from self._index_rows(rows)
            pos += used
            if pos >= next_progress:
                next_progress = pos + _PROGRESS_EVERY
                yield FileProgress(report.file, pos)
            if pos >= size:
                break
            rest = n - (at + used)
            if used and (rest < _PREFIX or _entry_size(data, at + used) > rest):
                continue  # the next entry runs past the window: read on from it
            pos = yield from self._slow(f, pos, size)

    def _index_rows(self, rows: list[EntryRow]) -> Iterator[Problem]:
        index = self._index
        assert index is not None  # rows are asked for only with an index
        for position, base, last, max_ts, *_ in rows:  # what the index check reads of a batch
            index.batch_at(position, base, last, max_ts)
            if index.problems:
                for p in index.take():
                    self.report.indexProblems += 1
                    yield p
        rows.clear()

    def _slow(self, f: BinaryIO, pos: int, size: int) -> Generator[VerifyEvent, None, int]:
        """Read the entry at ``pos`` as the segment reader reads it; return where the entry walk goes on.

        An entry that frames is decoded alone; anything else is the segment reader's, from ``pos``,
        while its runs hold problems, so that a damaged stretch is read as a whole-file read would.
        """
        from kafka_dump.log.segment import _decode_entry as decode_entry
        from kafka_dump.log.segment import read_segment_runs

        options = self.options
        f.seek(pos)
        head = f.read(_PREFIX)
        if len(head) == _PREFIX:
            entry = _entry_size(head, 0)
            if _SMALLEST <= entry <= min(size - pos, max(options.max_batch_bytes, CHUNK_SIZE)):
                f.seek(pos)
                buf = f.read(entry)
                if len(buf) == entry:
                    found, broken, walk = decode_entry(
                        self.report.file, buf, 0, pos, entry, head[L.MAGIC_OFFSET], False,
                        options.max_batch_bytes, self._walked if options.deep else None,
                        options.max_records_per_batch,
                    )  # fmt: skip
                    if broken is None:
                        if walk is not None and isinstance(found[0], Batch):
                            self._walked(found[0], walk)
                        yield from self._take(found)
                        yield from self._finish_pending()
                        return pos + entry
        runs = read_segment_runs(
            self.source,
            with_records=False,
            max_batch_bytes=options.max_batch_bytes,
            start=pos,
            on_walk=self._walked if options.deep else None,
            max_records_per_batch=options.max_records_per_batch,
            size=size,
        )
        end = size  # unless the reader is left before the end
        clean = 0  # bytes of sound entries since the last problem
        for run in runs:
            yield from self._take(run)
            if not run or any(isinstance(item, Problem) for item in run):
                clean = 0
                continue
            run_end = max(map(item_end, run))
            clean += run_end - run[0].position
            if clean >= _RESUME_AFTER:
                end = run_end  # a sound stretch: the entry walk takes over again
                break
        del runs  # closes the file it opened
        yield from self._finish_pending()
        return max(end, pos + 1)

    def _take(self, items: Sequence[Item]) -> Iterator[Problem]:
        for item in items:
            if type(item) is Batch:
                if self._pending is not None and (found := self._finish_pending()):
                    yield from found
                self._pending = item
                self._pending_bad = False
                self.report.batches += 1
            elif isinstance(item, Problem):
                yield from self._problem(item)

    def _problem(self, p: Problem) -> list[Problem]:
        report = self.report
        if p.kind is not ProblemKind.CORRUPT:
            found = self._finish_pending()
            report.tail = p
            report.dropped.append(Span(p.position, p.position + p.length, p.reason))
            return [*found, p]
        report.problems += 1
        if p.check == Check.CRC_MISMATCH:
            report.crcErrors += 1
        pending = self._pending
        if pending is not None and pending.position <= p.position < pending.position + pending.sizeInBytes:
            if not self._pending_bad:
                report.dropped.append(Span(pending.position, item_end(pending), p.reason))
            self._pending_bad = True
            return [p]
        found = self._finish_pending()
        report.badRegions += 1
        self._after_damage = True
        report.badRegionBytes += p.length
        report.dropped.append(Span(p.position, p.position + p.length, p.reason))
        return [*found, p]

    def _finish_pending(self) -> list[Problem]:
        """The checks of the last batch, once the problems that belong to it have all been seen."""
        b = self._pending
        if b is None:
            return _NOTHING
        self._pending = None
        report = self.report
        walk = self._walks.pop(b.position, None) if self._walks else None
        found: list[Problem] = []
        if self._index is not None:
            self._index.batch(b)
            found = self._index.take()
            report.indexProblems += len(found)
        # Shallow, a v0/v1 wrapper's header is all that is read of it (README: what --shallow leaves
        # out), whichever way it was read: its inner messages are not counted, nor a gap before it.
        wrapper = b.magic < 2 and b.compression is not Compression.NONE and not self.options.deep
        if walk is not None:
            report.records += walk.records
        elif not wrapper:
            report.records += len(b.records) if b.records is not None else max(b.recordCount or 0, 0)
        if self._pending_bad:
            self._after_damage = True
            return found  # its header cannot be trusted: order and timestamps are not checked against it
        last = self._last_offset
        if (
            (last is None or last < b.baseOffset <= b.lastOffset)
            and (walk is None or walk.maxTimestampDelta is None)
            and not b.isControl
            and (b.magic == 2 or b.compression is Compression.NONE or not self.options.deep)
        ):
            if last is not None and b.baseOffset > last + 1 and not self._after_damage and not wrapper:
                report.gaps += 1
            self._last_offset = b.lastOffset
            self._after_damage = False
            return found
        problems = [*self._order(b), *self._contents(b, walk)]
        if problems:
            report.problems += len(problems)
            report.dropped.append(Span(b.position, b.position + b.sizeInBytes, problems[0].reason))
        return found + problems

    def _order(self, b: Batch) -> list[Problem]:
        out = []
        last = self._last_offset
        if b.lastOffset < b.baseOffset:
            reason = f"batch's lastOffset {b.lastOffset} is below its baseOffset {b.baseOffset}"
            out.append(self._at(b, Check.OFFSET_DELTA, reason, b.baseOffset, b.lastOffset))
        if last is not None:
            if b.baseOffset <= last:
                reason = f"batch's baseOffset {b.baseOffset} does not follow the previous batch's last offset {last}"
                out.append(self._at(b, Check.OFFSET_ORDER, reason, min(last + 1, L.INT64_MAX), b.baseOffset))
            elif (
                b.baseOffset > last + 1
                and not self._after_damage
                and (self.options.deep or b.magic == 2 or b.compression is Compression.NONE)
            ):
                self.report.gaps += 1
        if not out:
            self._last_offset = b.lastOffset
            self._after_damage = False
        return out

    def _contents(self, b: Batch, walk: RecordWalk | None) -> list[Problem]:
        out = []
        if (
            walk is not None
            and walk.maxTimestampDelta is not None
            and b.timestampType is TimestampType.CREATE_TIME
            and b.deleteHorizonMs is None
            and b.baseTimestamp + walk.maxTimestampDelta > b.maxTimestamp
        ):
            latest = b.baseTimestamp + walk.maxTimestampDelta
            reason = f"a record's timestamp {latest} is past the batch's maxTimestamp {b.maxTimestamp}"
            out.append(self._at(b, Check.MAX_TIMESTAMP, reason, b.maxTimestamp, latest))
        records = b.records
        if records is None:
            return out
        if b.isControl and not_one_marker(records):
            reason = f"control batch holds {len(records)} records, not exactly one transaction marker"
            out.append(self._at(b, Check.CONTROL, reason, 1, len(records)))
        if b.magic < 2 and b.compression is not Compression.NONE and self.options.deep:
            for r in records:
                if r.crcValid is False:
                    reason = f"inner message at offset {r.offset} fails its CRC-32 (stored {r.crc})"
                    out.append(self._at(b, Check.INNER_CRC, reason, r.crc, None))
                    self.report.crcErrors += 1
        return out

    def _at(self, b: Batch, check: str, reason: str, expected: int | None, found: int | None) -> Problem:
        return Problem(
            self.report.file, b.position, b.sizeInBytes, ProblemKind.CORRUPT, reason, b.baseOffset, check,
            expected, found,
        )  # fmt: skip
