"""Running a conversion: read a segment, map its batches (``analysis/convert.py``), encode them,
write them to a temporary file beside the output, verify, then rename.

Verification is part of every run, in one pass over the bytes as they are written. Each entry is
read again from the very bytes written and compared with the batch it was meant to hold: every
record's fields, the batch fields the target keeps, and every CRC (v2 records by ``wire/recheck.py``,
building no Record); and verify-crc's deep checks across entries hold too. Once the file is synced
it is read back: it must hold exactly the bytes that were checked. Anything else deletes the
temporary file.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import chain, pairwise
from operator import attrgetter
from pathlib import Path
from typing import BinaryIO

from kafka_dump.analysis.convert import Changes, ConversionError, Converter, ConvertOptions
from kafka_dump.analysis.convert_fast import Codec, Item, TranscodedRun, inflater, read_input
from kafka_dump.errors import CorruptRecordError, KafkaDumpError, NotASegmentError
from kafka_dump.log.ahead import Inflating
from kafka_dump.log.names import segment_base_offset, side_file_kind
from kafka_dump.log.sources import partition_sources
from kafka_dump.log.window import CHUNK_SIZE
from kafka_dump.log.writer import (
    NO_TIMESTAMP,
    IndexBuilder,
    check_output,
    discard,
    place,
    place_all,
    same_file,
    sync_close,
    temporary,
)
from kafka_dump.model import Batch, Compression, Problem, ProblemKind, Record, TimestampType, not_one_marker
from kafka_dump.wire import encode_entry, legacy, v2
from kafka_dump.wire import layout as L
from kafka_dump.wire.checksum import crc32c
from kafka_dump.wire.codecs import (
    DEFAULT_MAX_BATCH_BYTES,
    DEFAULT_MAX_RECORDS_PER_BATCH,
    compressor,
    decompress,
    lz4_frame_header,
)
from kafka_dump.wire.recheck import same_as_v1_inner, same_v2_records
from kafka_dump.wire.transcode import lz4_frame, write_wrappers


class CorruptInputError(KafkaDumpError):
    """A corrupt input batch, met without ``--skip-corrupt``: the conversion stops there."""


class VerificationError(KafkaDumpError):
    """The output, read back, does not hold what the conversion meant to write."""


@dataclass
class Side:
    """Bytes, batches (log entries) and records of one side of a conversion."""

    bytes: int = 0
    batches: int = 0
    records: int = 0

    @property
    def bytes_per_record(self) -> float | None:
        return self.bytes / self.records if self.records else None


@dataclass
class FileReport:
    """What one segment's conversion read, wrote, dropped and changed."""

    input: str
    output: str
    to_magic: int
    before: Side
    after: Side
    changes: Changes
    skipped: list[Problem]  # corrupt input left out (--skip-corrupt)
    tail: Problem | None = None  # a zero-filled or partial tail, not copied

    @property
    def saving(self) -> float | None:
        """Percent of the input's bytes the output saves (negative when it grew)."""
        if not self.before.bytes:
            return None
        return 100.0 * (self.before.bytes - self.after.bytes) / self.before.bytes


# Every output path that would clobber an input: the segment itself and the files Kafka keeps beside it.
_SIBLINGS = (".index", ".timeindex", ".txnindex")


def plan(src: Path, dst: Path, *, force: bool, index: bool) -> list[tuple[Path, Path]]:
    """(input segment, output segment) pairs for a conversion, refusing any unsafe output: an existing
    one unless ``force``, an input file or an index of one always. A directory INPUT gives one output
    segment per ``.log`` under the same name, in the directory OUTPUT."""
    why = "convert rewrites a segment or one partition directory"
    found = partition_sources(str(src), why)  # a missing or unreadable input is reported as such
    if src.is_dir():
        logs = [Path(p.path) for p in found if p.path.endswith(".log")]
        if not logs:
            raise NotASegmentError("directory holds no .log segment", file=str(src))
        if dst.exists() and not dst.is_dir():
            raise ConversionError("the input is a directory, so the output must be one too", file=str(dst))
        if dst.exists() and same_file(src, dst):
            raise ConversionError("the output directory is the input directory", file=str(dst))
        if dst.exists() and not force:
            raise ConversionError("the output exists (--force writes into it)", file=str(dst))
        pairs = [(log, dst / log.name) for log in logs]
    else:
        if (kind := side_file_kind(src)) is not None:
            raise NotASegmentError(
                f"a side file ({kind}), not a segment: convert rewrites segments", file=str(src)
            )
        if dst.is_dir():
            raise ConversionError("the output is a directory; name the output segment file", file=str(dst))
        if not dst.parent.is_dir():
            raise ConversionError("the output's directory does not exist", file=str(dst))
        pairs = [(src, dst)]
    inputs = [p for s, _ in pairs for p in (s, *(s.with_suffix(x) for x in _SIBLINGS)) if p.exists()]
    for _, out in pairs:
        targets = [out, *(out.with_suffix(x) for x in _SIBLINGS[:2])] if index else [out]
        for target in targets:
            check_output(target)  # never a device, FIFO or link, whatever ``force`` says
            if not target.exists():
                continue
            if any(same_file(target, p) for p in inputs):
                raise ConversionError("the output would overwrite an input file", file=str(target))
            if not force:
                raise ConversionError("the output exists (--force replaces it)", file=str(target))
    return pairs


# Codecs that take a level (``--level``); the others (none, snappy) are written without one.
_LEVELLED = frozenset((Compression.GZIP, Compression.LZ4, Compression.ZSTD))
_LZ4_DEFAULT_LEVEL = 9  # Kafka's: lz4's fast compressor (codecs._LZ4_DEFAULT_LEVEL)
Watch = Callable[[Iterator[Item]], Iterator[Item]]  # sees the input stream go by (a progress bar)
_CRC_VALID = attrgetter("crcValid")
_TIMESTAMP = attrgetter("timestamp")
_FIELDS = attrgetter("offset", "timestamp", "key", "value", "headers")
_BATCH_FIELDS = attrgetter(
    "magic", "compression", "timestampType", "maxTimestamp", "baseOffset", "lastOffset", "producerId",
    "producerEpoch", "baseSequence", "lastSequence", "partitionLeaderEpoch", "isTransactional", "isControl",
    "deleteHorizonMs",
)  # fmt: skip


def progress_position(item: Item) -> tuple[str, int]:
    """(file, bytes done) at an item of the input, for ``render.progress``."""
    if isinstance(item, Problem):
        return item.file, item.position + item.length
    return item.file, item.position + item.sizeInBytes


def convert_segment(
    src: Path,
    dst: Path,
    options: ConvertOptions,
    *,
    level: int | None = None,
    index: bool = True,
    force: bool = False,
    skip_corrupt: bool = False,
    max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES,
    max_records_per_batch: int = DEFAULT_MAX_RECORDS_PER_BATCH,
    watch: Watch | None = None,
    inflating: Inflating | None = None,
) -> FileReport:
    """Convert one segment to ``dst``: through a temporary file beside it, verified, then renamed.

    Any difference raises VerificationError and, as any other failure, leaves no output behind.
    ``inflating``: where the input's wrappers are inflated (by default ``convert_fast.Ahead``).
    """
    plan(src, dst, force=force, index=index)  # the input is never written, whoever calls
    converter = Converter(options)
    report = FileReport(str(src), str(dst), options.to_magic, Side(), Side(), converter.changes, [])
    report.before.bytes = src.stat().st_size
    # A free-form output name counts its indexes from its first batch, as every reader does
    # (log/index.py's index_base_offset): None lets the first batch written decide.
    out = _TempSegment(dst, index=index, base_offset=segment_base_offset(dst), overwrite=force)
    try:
        with _cycle_collector_paused():
            items: Iterator[Item] = read_input(
                src,
                fast=converter.transcodes,
                max_batch_bytes=max_batch_bytes,
                max_records_per_batch=max_records_per_batch,
                inflating=inflating,
            )
            if watch is not None:
                items = watch(items)
            for batch in _good_batches(items, report, skip_corrupt):
                if isinstance(batch, TranscodedRun):
                    closed, codec = converter.feed_transcoded(batch.codec, len(batch.wrappers))
                    for new in closed:
                        out.write_entry(new, level, max_batch_bytes)
                    out.write_transcoded(batch, codec, level, max_batch_bytes)
                    continue
                for new in converter.feed(batch):
                    out.write_entry(new, level, max_batch_bytes)
            for new in converter.finish():
                out.write_entry(new, level, max_batch_bytes)
        out.finish()
        report.after = out.side
        out.commit()
    except BaseException:
        out.discard()
        raise
    return report


@contextlib.contextmanager
def _cycle_collector_paused() -> Iterator[None]:
    """Batches and records hold no reference cycles, and reference counting frees each as soon as it
    is written; the cycle collector's passes over millions of young records are pure cost."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _good_batches(
    items: Iterable[Item], report: FileReport, skip_corrupt: bool
) -> Iterator[Batch | TranscodedRun]:
    """The input's sound batches; a corrupt one stops the conversion, or is left out and listed.
    Each batch is held until the next item shows that no problem of its own follows."""
    before = report.before
    held: Batch | None = None
    for item in chain(items, (None,)):  # None: the end, where the last batch held is let go
        if isinstance(item, Problem):
            if item.kind is not ProblemKind.CORRUPT:
                report.tail = item
                continue
            if held is not None and held.position <= item.position < held.position + held.sizeInBytes:
                held = None
            _corrupt(item, report, skip_corrupt)
            continue
        if held is not None:
            before.batches += 1
            before.records += len(held.records or ())
            yield held
            held = None
        if item is None:
            return
        if isinstance(item, TranscodedRun):  # sound, with no problem of its own: nothing to hold
            before.batches += len(item.wrappers)
            before.records += item.recordCount
            yield item
            continue
        records = item.records or ()
        if item.magic < 2 and item.compression is not Compression.NONE and not all(map(_CRC_VALID, records)):
            bad = next(r for r in records if not r.crcValid)
            problem = Problem(
                item.file, item.position, item.sizeInBytes, ProblemKind.CORRUPT,
                f"inner message at offset {bad.offset} fails its CRC-32", item.baseOffset,
            )  # fmt: skip
            _corrupt(problem, report, skip_corrupt)
            continue
        held = item


def _corrupt(problem: Problem, report: FileReport, skip_corrupt: bool) -> None:
    if not skip_corrupt:
        raise CorruptInputError(
            f"corrupt input: {problem.reason} (--skip-corrupt leaves such batches out)",
            file=problem.file,
            position=problem.position,
        )
    report.skipped.append(problem)


_WRITE_BUFFER = 1 << 20  # entries are a few KiB: written a MiB at a time, not one system call each


class _TempSegment:
    """The output segment while it is written: temporary files in the output's directory, with the
    writer's index entries (``writer.IndexBuilder``), put in place by ``writer.place_all``."""

    def __init__(self, dst: Path, *, index: bool, base_offset: int | None, overwrite: bool) -> None:
        self.dst = dst
        self._overwrite = overwrite
        self._temps: list[Path] = []
        self.path, self._file = self._temp(dst)
        self._index: IndexBuilder | None = None
        self._want_index = index
        self._base_offset = base_offset
        self.side = Side()
        self._crc = 0
        self._last_offset: int | None = None
        self._decompress: Codec | None = None

    def _temp(self, target: Path) -> tuple[Path, BinaryIO]:
        name, fd = temporary(target, ".kdump-tmp")
        self._temps.append(name)
        return name, os.fdopen(fd, "wb", buffering=_WRITE_BUFFER)

    def write_entry(self, batch: Batch, level: int | None, max_batch_bytes: int) -> None:
        """Encode ``batch``, check that its bytes decode to exactly it, and append them."""
        data = encode_entry(batch, level=level if batch.compression in _LEVELLED else None)
        self._fail(_check_entry(data, batch, max_batch_bytes) or self._check_order(batch))
        if self._want_index:
            max_ts = NO_TIMESTAMP if batch.magic == 0 else batch.maxTimestamp
            self._index_entry(len(data), batch.baseOffset, batch.lastOffset, max_ts)
        self._write(data, 1, len(batch.records or ()))

    def write_transcoded(
        self, run: TranscodedRun, codec: Compression, level: int | None, max_batch_bytes: int
    ) -> None:
        """Write the v2 batches of a run of transcoded wrappers (``convert_fast``), each checked against
        its wrapper's inner messages where they lie (``wire/transcode.py``)."""
        squeeze = _squeezer(codec, level if codec in _LEVELLED else None)
        data, rows, last, failure = write_wrappers(
            run.wrappers, int(codec), squeeze, self._verifier(max_batch_bytes), crc32c, same_as_v1_inner,
            self._last_offset,
        )  # fmt: skip
        if failure is not None:
            self._fail(failure[2], failure[1])
        self._last_offset = last
        if self._want_index:
            for size, first, last_offset, max_ts, _ in rows:
                self._index_entry(size, first, last_offset, max_ts)
        self._write(data, len(rows), sum(row[4] for row in rows))

    def _verifier(self, max_batch_bytes: int) -> Codec:
        if self._decompress is None:
            self._decompress = inflater(max_batch_bytes)
        return self._decompress

    def _fail(self, reason: str | None, at: int = 0) -> None:
        """Refuse the output: ``reason`` found ``at`` bytes into what is being written."""
        if reason is not None:
            message = f"verification failed: {reason}; no output written"
            raise VerificationError(message, file=str(self.dst), position=self.side.bytes + at)

    def _index_entry(self, size: int, first: int, last: int, max_ts: int) -> None:
        if self._index is None:
            self._index = IndexBuilder(first if self._base_offset is None else self._base_offset)
        try:
            self._index.add(size, first, last, max_ts)
        except KafkaDumpError as exc:  # offsets going backwards cannot be indexed
            self._fail(exc.reason)

    def _write(self, data: bytes, batches: int, records: int) -> None:
        """Append entries; their CRC-32C runs on, for the read-back (``finish``)."""
        self._file.write(data)
        self._crc = crc32c(data, self._crc)
        side = self.side
        side.bytes += len(data)
        side.batches += batches
        side.records += records

    def _check_order(self, batch: Batch) -> str | None:
        """What no entry alone can show (verify-crc's deep check): offsets that grow from entry to entry,
        and no record time past the batch's maxTimestamp. ``batch``: what the entry was checked to hold."""
        records = batch.records or ()
        first = batch.baseOffset
        if (
            records
            and batch.magic == 2
            and batch.timestampType is TimestampType.CREATE_TIME
            and batch.deleteHorizonMs is None
            and max(map(_TIMESTAMP, records)) > batch.maxTimestamp
        ):
            return (
                f"the entry at offset {first} holds a record time past its maxTimestamp {batch.maxTimestamp}"
            )
        if batch.magic == 2 and any(a.offset >= b.offset for a, b in pairwise(records)):
            return f"the entry at offset {first} holds record offsets that do not grow"
        if batch.isControl and not_one_marker(records):
            return f"the control entry at offset {first} holds {len(records)} records, not one marker"
        last = batch.lastOffset
        if last < first:
            return f"the entry at offset {first}: lastOffset {last} is below its baseOffset"
        previous = self._last_offset
        if previous is not None and first <= previous:
            return f"the entry at offset {first} does not follow the previous entry's last offset {previous}"
        self._last_offset = last  # the previous entry, for the next one
        return None

    def finish(self) -> None:
        """Flush and fsync, then read the file back: it must hold exactly the bytes written."""
        sync_close(self._file)
        crc, size = 0, 0
        with open(self.path, "rb") as back:
            while chunk := back.read(CHUNK_SIZE):
                crc = crc32c(chunk, crc)
                size += len(chunk)
        if (crc, size) != (self._crc, self.side.bytes):
            raise VerificationError(
                f"verification failed: the file read back ({size} bytes) differs from what was written "
                f"({self.side.bytes} bytes); no output written",
                file=str(self.dst),
            )

    def commit(self) -> None:
        """Write the indexes, then rename every file into place and sync the directory."""
        targets = [(self.path, self.dst)]
        if self._want_index:
            index = self._index or IndexBuilder(self._base_offset or 0)
            index.close()
            for suffix, data in ((".index", index.index_bytes()), (".timeindex", index.timeindex_bytes())):
                target = self.dst.with_suffix(suffix)
                path, f = self._temp(target)
                f.write(data)
                sync_close(f)
                targets.append((path, target))
        place_all(targets, self._place, self._overwrite)

    def _place(self, tmp: Path, target: Path) -> None:
        exists = ConversionError("the output exists (--force replaces it)", file=str(target))
        place(tmp, target, self._overwrite, exists)

    def discard(self) -> None:
        discard([self._file], self._temps)


def _squeezer(codec: Compression, level: int | None) -> Callable[[bytes], bytes]:
    """How a v2 batch's records are compressed: ``codecs.compressor``'s function, or for LZ4 at
    Kafka's default level the transcode twin's frame writer (the same bytes, without Python between
    the blocks)."""
    if codec is Compression.LZ4 and level in (None, _LZ4_DEFAULT_LEVEL):
        compressor(codec, level=level, magic=2)  # refuses what compress refuses
        return functools.partial(lz4_frame, lz4_frame_header(2))
    return compressor(codec, level=level, magic=2)


def _check_entry(data: bytes, expected: Batch, max_batch_bytes: int) -> str | None:
    """Why ``data`` does not read back as ``expected`` (every field the target keeps), or None."""
    where = f"the entry at offset {expected.baseOffset}"
    want = expected.records or ()
    try:
        if expected.magic == 2:
            got, error = v2.decode_batch("", data, 0, 0, with_records=False, max_batch_bytes=max_batch_bytes)
        else:
            got, error = legacy.decode_message(
                "", data, 0, len(data), 0, with_records=True, max_batch_bytes=max_batch_bytes
            )
    except CorruptRecordError as exc:
        return f"{where} does not decode ({exc.reason})"
    if error is not None:
        return f"{where} does not decode ({error.reason})"
    if not got.crcValid or got.sizeInBytes != len(data) or got.recordCount != len(want):
        return f"{where} fails its CRC, its size or its count"
    if _BATCH_FIELDS(got) != _BATCH_FIELDS(expected):
        return f"{where} has other batch fields than the input's"
    if expected.magic == 2:
        return _check_v2_records(data, got, want, max_batch_bytes)
    have = got.records or ()
    if list(map(_FIELDS, have)) != list(map(_FIELDS, want)):
        bad = next((w for w, h in zip(want, have, strict=False) if _FIELDS(w) != _FIELDS(h)), None)
        at = bad.offset if bad is not None else expected.baseOffset
        return f"the record at offset {at} differs from the input's"
    if not all(map(_CRC_VALID, have)):
        return f"{where} has an inner message that fails its CRC"
    return None


def _check_v2_records(data: bytes, got: Batch, want: tuple[Record, ...], max_batch_bytes: int) -> str | None:
    """The records of a v2 entry, read where they lie (decompressed first), against ``want``."""
    records, start, end = data, L.V2_HEADER_SIZE, len(data)
    if got.compression is not Compression.NONE:
        try:
            records = decompress(got.compression, memoryview(data)[start:], max_batch_bytes)
        except CorruptRecordError as exc:
            return f"the entry at offset {got.baseOffset} does not decompress ({exc.reason})"
        start, end = 0, len(records)
    lat = got.maxTimestamp if got.timestampType is TimestampType.LOG_APPEND_TIME else None
    i = same_v2_records(records, start, end, got.baseOffset, got.baseTimestamp, lat, want)
    if i < 0:
        return None
    at = want[i].offset if i < len(want) else got.lastOffset
    return f"the record at offset {at} differs from the input's"
