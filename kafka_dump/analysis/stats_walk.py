"""How ``kdump stats`` reads a file: one pass that feeds a ``SegmentStats`` (and, for ``--compare``,
a listener), yielding events for the progress bar.

Valid entries are counted without building records where the format allows (``wire/_gather_pure.py``);
from the first entry that is anything else, ``read_segment`` takes over, so that corruption and
tails are framed, resynced and reported exactly as ``dump`` reports them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Generator, Iterable, Iterator
from typing import TYPE_CHECKING, NamedTuple

from kafka_dump.analysis.stats import SegmentStats, Unpack
from kafka_dump.errors import CorruptRecordError
from kafka_dump.log.segment import read_segment
from kafka_dump.log.window import CHUNK_SIZE, FileShrankError, Window, unreadable
from kafka_dump.model import Batch, Compression, Problem
from kafka_dump.wire import decode_legacy_run, legacy, v2
from kafka_dump.wire import layout as L
from kafka_dump.wire.codecs import DEFAULT_MAX_BATCH_BYTES, DEFAULT_MAX_RECORDS_PER_BATCH, decompress
from kafka_dump.wire.message import Message

if TYPE_CHECKING:
    from kafka_dump.log.ahead import Inflating

_RUN_BYTES = 256 * 1024  # plain v0/v1 messages decoded this much at a time, as segment.py does


class FileStart(NamedTuple):
    path: str
    size: int


class BatchSeen(NamedTuple):
    """A batch read (for the progress bar): its file, and where it ends."""

    path: str
    end: int


StatsEvent = FileStart | BatchSeen | Problem | SegmentStats


def progress_position(event: StatsEvent) -> tuple[str, int] | None:
    """(file, bytes read so far) that an event shows, for the progress bar."""
    if isinstance(event, BatchSeen):
        return event.path, event.end
    if isinstance(event, Problem):
        return event.file, event.position + event.length
    if isinstance(event, FileStart):
        return event.path, 0
    return None


def iter_stats(
    files: Iterable[os.PathLike[str]],
    *,
    max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES,
    max_records_per_batch: int = DEFAULT_MAX_RECORDS_PER_BATCH,
    listener: Callable[[os.PathLike[str]], Callable[[Batch | None], None] | None] | None = None,
    inflate_ahead: bool = True,
    into: Callable[[os.PathLike[str]], SegmentStats] | None = None,
) -> Iterator[StatsEvent]:
    """Read each file once (a path or a ``sources.Source``, shown by its name): its start, a mark per
    batch, its problems, then its ``SegmentStats``.

    ``listener(path)`` may give a callable that sees each batch counted (and None at each problem),
    for work done in the same pass (``--compare``). ``inflate_ahead``: gzip payloads are inflated on
    a second thread (``log/ahead.py``; the same figures). ``into(path)``: the figures to count the
    file into, as ``SegmentStats.next_file`` adds a file (a sum of several, as their ``merge`` gives);
    by default its own.
    """
    files = list(files)
    for f in files:
        st = os.stat(f)
        f_size = st.st_size
        yield FileStart(str(f), f_size)
        if len(files) > 1 and (locked := unreadable(f, st)) is not None:  # one file alone: its error, exit 2
            yield locked  # no figures: the file is left out of the total
            continue
        if into is None:
            stats = SegmentStats(str(f), file_bytes=f_size)
        else:
            stats = into(f)
            stats.next_file(f_size)
        if listener is not None:
            stats.listener = listener(f)
        pos: int | None = 0
        if stats.listener is None:
            walk = _ValidWalk(f, stats, f_size, max_batch_bytes, max_records_per_batch)
            pos = yield from walk.run(inflate_ahead)
        if pos is not None:
            add = stats.add
            items = read_segment(
                f,
                max_batch_bytes=max_batch_bytes,
                start=pos,
                max_records_per_batch=max_records_per_batch,
                # The bytes the walk saw: none appended since, a shrinking file's tail (a pipe is read whole).
                size=f_size if os.path.isfile(f) else None,
            )
            for item in items:
                add(item)
                if isinstance(item, Problem):
                    yield item
                else:
                    yield BatchSeen(item.file, item.position + item.sizeInBytes)
        yield stats.finish()


class _ValidWalk:
    """Count the file's entries from its start while each is whole and valid (v2 records and v0/v1
    wrappers walked, plain messages and control batches decoded), up to ``size``, the file's size
    when first seen. ``run`` returns None at the end of the file, or the position of the first other
    entry, where ``read_segment`` takes over (it also reports a file that shrank)."""

    def __init__(
        self, path: os.PathLike[str], stats: SegmentStats, size: int, max_batch_bytes: int, max_records: int
    ) -> None:
        self.path = path
        self.size = size
        self.name = str(path)
        self.stats = stats
        self.max_batch_bytes = max_batch_bytes
        self.max_records = max_records
        self.unpack: Unpack = decompress  # the read window's
        self.at = 0  # the entry being read

    def run(self, inflate_ahead: bool) -> Generator[BatchSeen, None, int | None]:
        """The walk; gzip payloads inflated on a second thread with ``inflate_ahead``."""
        from kafka_dump.log.ahead import inflating_for

        inflating = inflating_for(self.size, self.max_batch_bytes, ahead=inflate_ahead)
        try:
            return (yield from self._run(inflating))
        except FileShrankError:
            return self.at  # the file shrank: read_segment reports it from the entry it cut
        finally:
            inflating.close()

    def _run(self, inflating: Inflating) -> Generator[BatchSeen, None, int | None]:
        name, stats = self.name, self.stats
        max_batch_bytes, max_records = self.max_batch_bytes, self.max_records
        limit = max(max_batch_bytes, CHUNK_SIZE)
        started: bytes | None = None
        with open(self.path, "rb") as f:
            size = self.size
            win = Window(f, size, CHUNK_SIZE)
            pos = 0
            while pos < size:
                self.at = pos
                if size - pos < L.V2_HEADER_SIZE:
                    return pos
                buf, i = win.span(pos, L.V2_HEADER_SIZE)
                _, length = L.LOG_ENTRY.unpack_from(buf, i)
                magic = buf[i + L.MAGIC_OFFSET]
                entry = L.LOG_OVERHEAD + length
                if length < L.LEGACY_MIN_SIZE[0] or entry > size - pos or entry > limit:
                    return pos
                buf, i = win.span(pos, entry)
                if buf is not started:
                    started = buf  # a new window: inflate its payloads from this entry on
                    self.unpack = inflating.start(buf, i)
                if magic < 2:
                    used = stats.count_wrappers_walked(buf, i, max_batch_bytes, max_records, self.unpack)
                    if used:
                        pos += used
                        yield BatchSeen(name, pos)
                        continue
                    batches, used = decode_legacy_run(name, buf, i, min(len(buf), i + _RUN_BYTES), pos, True)
                    if used:
                        stats.count_run(batches)  # plain messages, decoded (one record each)
                    elif not self._wrapper(buf, i, pos, entry):
                        return pos
                    pos += used or entry
                    yield BatchSeen(name, pos)
                    continue
                if magic != 2 or entry < L.V2_HEADER_SIZE:
                    return pos
                if L.INT32.unpack_from(buf, i + L.V2_RECORD_COUNT_OFFSET)[0] > max_records:
                    return pos  # read_segment reports it
                if not self._v2(buf, i, pos, entry):
                    return pos
                pos += entry
                yield BatchSeen(name, pos)
        return None

    def _v2(self, buf: bytes, i: int, pos: int, entry: int) -> bool:
        """Count one v2 batch if it is valid (CRC, codec, records)."""
        name, mbb = self.name, self.max_batch_bytes
        try:
            batch, _ = v2.decode_batch(name, buf, i, pos, with_records=False, max_batch_bytes=mbb)
        except CorruptRecordError:
            return False
        if not batch.crcValid or batch.compression is Compression.UNKNOWN or (batch.recordCount or 0) < 0:
            return False
        if not _SAFE_BASE_MIN <= batch.baseOffset <= _SAFE_BASE_MAX:
            return False  # a record's offset could leave int64: the decoder checks each one
        if batch.isControl:
            full, error = v2.decode_batch(name, buf, i, pos, with_records=True, max_batch_bytes=mbb)
            if error is not None:
                return False
            self.stats.count(full)
            return True
        start, end = i + L.V2_HEADER_SIZE, i + entry
        data: bytes | memoryview = buf
        if batch.compression is not Compression.NONE:
            try:
                data = self.unpack(batch.compression, memoryview(buf)[start:end], mbb)
            except CorruptRecordError:
                return False
            start, end = 0, len(data)
        return self.stats.count_walked(batch, data, start, end) is None

    def _wrapper(self, buf: bytes, i: int, pos: int, entry: int) -> bool:
        """Count one v0/v1 wrapper if it is valid: walked when its inner messages are the plain case,
        else decoded."""
        try:
            msg = Message(buf, i, i + entry)
        except CorruptRecordError:
            return False
        if not msg.crc_valid or msg.value is None or msg.compression in _NOT_WRAPPERS:
            return self._legacy(buf, i, pos, entry)
        try:
            data = self.unpack(msg.compression, msg.value, self.max_batch_bytes)
        except CorruptRecordError:
            return False
        if legacy.more_inner_than(data, self.max_records):
            return False  # read_segment reports it
        return self.stats.count_wrapper_walked(msg, self.name, pos, data) or self._legacy(buf, i, pos, entry)

    def _legacy(self, buf: bytes, i: int, pos: int, entry: int) -> bool:
        """Count one v0/v1 wrapper (or message) if it and its inner messages are valid."""
        try:
            batch, error = legacy.decode_message(
                self.name, buf, i, i + entry, pos, with_records=True, max_batch_bytes=self.max_batch_bytes
            )
        except CorruptRecordError:
            return False
        if error is not None or not batch.crcValid:
            return False
        self.stats.count(batch)
        return True


# Base offsets from which no record offset delta (an int32) can leave int64.
_SAFE_BASE_MIN, _SAFE_BASE_MAX = L.INT64_MIN + L.INT32_MAX + 1, L.INT64_MAX - L.INT32_MAX
_NOT_WRAPPERS = (Compression.NONE, Compression.ZSTD, Compression.UNKNOWN)
