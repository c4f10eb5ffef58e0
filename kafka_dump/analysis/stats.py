"""What ``kdump stats`` gathers: layout, batches, records and overhead of segments, in bounded memory.

``SegmentStats`` takes the decoder's stream one item at a time and keeps only counts and fixed-size
histograms; ``merge`` adds one file's figures into a total. A batch followed by a problem at its own
position is counted as corrupt and left out of every other figure. ``stats_walk.py`` feeds it;
``render/stats.py`` shows the result.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from operator import attrgetter

from kafka_dump.analysis.histogram import BoundedCounter, SizeHistogram, TimeHistogram
from kafka_dump.model import Batch, Compression, Problem, ProblemKind, Record, TimestampType
from kafka_dump.wire import layout as L
from kafka_dump.wire._gather_pure import gather_legacy_inner, gather_legacy_wrappers, gather_v2_records
from kafka_dump.wire.message import Message

# codecs.decompress's signature (log/ahead.py's Unpack), spelled here so that stats imports no thread code
Unpack = Callable[[Compression, bytes | memoryview, int], bytes]

PERCENTILES = (50, 99)


@dataclass
class FormatStats:
    """Batches of one (magic, codec): how many, their records, and their bytes on disk and unpacked."""

    batches: int = 0
    records: int = 0
    disk_bytes: int = 0
    uncompressed_bytes: int = 0

    def add(self, batches: int, records: int, disk_bytes: int, uncompressed_bytes: int) -> None:
        self.batches += batches
        self.records += records
        self.disk_bytes += disk_bytes
        self.uncompressed_bytes += uncompressed_bytes

    def merge(self, other: FormatStats) -> None:
        self.add(other.batches, other.records, other.disk_bytes, other.uncompressed_bytes)

    @property
    def compression_ratio(self) -> float:
        return self.uncompressed_bytes / self.disk_bytes if self.disk_bytes else 1.0


@dataclass
class SegmentStats:
    """The figures of one file (or, after ``merge``, of several)."""

    path: str
    files: int = 1
    file_bytes: int = 0
    # Layout
    batches: int = 0
    records: int = 0
    control_records: int = 0
    first_offset: int | None = None
    last_offset: int | None = None
    offset_gaps: int = 0  # places where the next record's offset is not the previous one's + 1
    missing_offsets: int = 0  # offsets that those gaps skip
    by_format: dict[tuple[int, Compression], FormatStats] = field(default_factory=dict)
    # Batches
    records_per_batch: SizeHistogram = field(default_factory=SizeHistogram)
    bytes_per_batch: SizeHistogram = field(default_factory=SizeHistogram)
    transactional_batches: int = 0
    idempotent_batches: int = 0  # with a producer id and sequence (transactional ones included)
    control_batches: int = 0
    producer_ids: BoundedCounter[int] = field(default_factory=lambda: BoundedCounter(100_000))
    timestamp_types: Counter[str] = field(default_factory=Counter)
    first_timestamp: int | None = None  # the earliest and latest record timestamps (not -1)
    last_timestamp: int | None = None
    # Records
    record_sizes: SizeHistogram = field(default_factory=SizeHistogram)
    key_sizes: SizeHistogram = field(default_factory=SizeHistogram)  # non-null keys
    value_sizes: SizeHistogram = field(default_factory=SizeHistogram)  # non-null values
    header_sizes: SizeHistogram = field(default_factory=SizeHistogram)  # per record with headers
    header_counts: SizeHistogram = field(default_factory=SizeHistogram)  # per record
    null_keys: int = 0
    tombstones: int = 0
    header_keys: BoundedCounter[bytes] = field(default_factory=BoundedCounter)
    times: TimeHistogram = field(default_factory=TimeHistogram)
    # Problems
    corrupt: int = 0  # problems of kind corrupt (each a skipped batch or skipped bytes)
    corrupt_bytes: int = 0
    tail_bytes: int = 0  # zero-filled or partial tail: facts, not corruption
    # Called with each batch counted, in file order, and with None at each problem (a break).
    listener: Callable[[Batch | None], None] | None = field(default=None, repr=False, compare=False)
    _pending: list[Batch] = field(default_factory=list)
    _next_offset: int | None = None

    # -- derived figures -------------------------------------------------------------------------
    @property
    def data_records(self) -> int:
        return self.records - self.control_records

    @property
    def disk_bytes(self) -> int:
        """Bytes of the batches counted (corrupt ones and the tail left out)."""
        return sum(f.disk_bytes for f in self.by_format.values())

    @property
    def uncompressed_bytes(self) -> int:
        return sum(f.uncompressed_bytes for f in self.by_format.values())

    @property
    def payload_bytes(self) -> int:
        """Keys, values, header keys and header values: what the producer sent."""
        return self.key_sizes.total + self.value_sizes.total + self.header_sizes.total

    @property
    def distinct_producers(self) -> int:
        return len(self.producer_ids.counts)

    # -- feeding ---------------------------------------------------------------------------------
    def add(self, item: Batch | Problem) -> None:
        """Take the next item of the file's stream, in file order. Batches wait in ``_pending`` until
        the next item shows that no problem is about them; runs of plain v0/v1 messages are counted as one."""
        pending = self._pending
        if isinstance(item, Problem):
            if item.kind is ProblemKind.CORRUPT:
                self.corrupt += 1
                if pending and pending[-1].position <= item.position < _end(pending[-1]):
                    # The problem is about this batch: skip it, and count its bytes once.
                    self.corrupt_bytes += pending.pop().sizeInBytes
                else:
                    self.corrupt_bytes += item.length
            else:
                self.tail_bytes += item.length
            self._flush()
            if self.listener is not None:
                self.listener(None)
            return
        if pending and not (_plain(item) and _plain(pending[-1]) and len(pending) < _RUN_MESSAGES):
            self._flush()
        self._pending.append(item)

    def finish(self) -> SegmentStats:
        self._flush()
        return self

    def next_file(self, file_bytes: int) -> None:
        """Count another file (of ``file_bytes``) from here on, adding its figures as ``merge`` would
        add its own: files are not adjacent, so no gap is counted between them."""
        self.finish()
        self.files += 1
        self.file_bytes += file_bytes
        self._next_offset = None

    def _flush(self) -> None:
        pending = self._pending
        if not pending:
            return
        if len(pending) == 1:
            self.count(pending[0])
        else:
            self.count_run(pending)
        if self.listener is not None:
            for b in pending:
                self.listener(b)
        self._pending = []

    def count_run(self, batches: list[Batch]) -> None:
        """Count a run of plain v0/v1 messages (uncompressed, no producer, one record each) at once."""
        sizes = list(map(_SIZE, batches))
        records = [r for b in batches for r in b.records or ()]
        self.batches += len(batches)
        self.records += len(records)
        if len(records) == len(batches):
            self.records_per_batch.add(1, len(records))  # one record each, as a plain message holds
        else:
            self.records_per_batch.add_all(len(b.records or ()) for b in batches)
        self.bytes_per_batch.add_all(sizes)
        for ts_type, count in Counter(map(_TS_TYPE, batches)).items():
            self.timestamp_types[ts_type.label] += count
        magics = Counter(map(_MAGIC, batches))
        for magic in magics:
            mine = batches if len(magics) == 1 else [b for b in batches if b.magic == magic]
            on_disk = sum(map(_SIZE, mine))
            n = len(records) if len(magics) == 1 else sum(len(b.records or ()) for b in mine)
            self._format(magic, Compression.NONE).add(len(mine), n, on_disk, on_disk)
        if records:
            # A plain message's record is the whole message: its size is the entry's.
            self._count_records(records, [r.sizeInBytes for r in records], plain=True)

    def count(self, b: Batch) -> None:
        records: tuple[Record, ...] = b.records or ()
        sizes = [r.sizeInBytes for r in records]
        if b.compression is Compression.NONE:
            uncompressed = b.sizeInBytes
        elif b.magic == 2:
            uncompressed = L.V2_HEADER_SIZE + sum(sizes)
        else:
            uncompressed = sum(sizes)  # the inner messages, as plain entries
        self._count_batch(b, len(records), uncompressed)
        if records:
            self._count_records(records, sizes)

    def _count_batch(self, b: Batch, n: int, uncompressed: int) -> None:
        """The figures of a batch's header: the same whether its records were decoded or walked."""
        self.batches += 1
        self.records += n
        size = b.sizeInBytes
        self.records_per_batch.add(n)
        self.bytes_per_batch.add(size)
        self.timestamp_types[b.timestampType.label] += 1
        if b.isTransactional:
            self.transactional_batches += 1
        if b.producerId >= 0:
            self.producer_ids.add_counts({b.producerId: 1})
            if b.baseSequence >= 0:
                self.idempotent_batches += 1
        if b.isControl:
            self.control_batches += 1
            self.control_records += n
        fmt = self.by_format.get((b.magic, b.compression))
        if fmt is None:  # inline, not ``_format``: once per batch
            fmt = self.by_format[(b.magic, b.compression)] = FormatStats()
        fmt.batches += 1
        fmt.records += n
        fmt.disk_bytes += size
        fmt.uncompressed_bytes += uncompressed

    def _count_records(self, records: Sequence[Record], sizes: list[int], *, plain: bool = False) -> None:
        """The figures of records (``plain``: a run of plain v0/v1 messages, a batch each, without
        headers); one pass per field through C iterators (``map``, ``Counter``)."""
        n = len(records)
        self.record_sizes.add_all(sizes)
        self._offsets(records, plain=plain)
        keys = [len(k) for k in map(_KEY, records) if k is not None]
        self.null_keys += n - len(keys)
        self.key_sizes.add_all(keys)
        values = [len(v) for v in map(_VALUE, records) if v is not None]
        self.tombstones += n - len(values)
        self.value_sizes.add_all(values)
        if not plain:
            header_counts = Counter(map(len, map(_HEADERS, records)))
            self.header_counts.add_counts(header_counts)
            if header_counts.get(0, 0) != n:
                self._headers(records)
        else:
            self.header_counts.add(0, n)
        stamps = list(map(_TIMESTAMP, records))
        lo, hi = min(stamps), max(stamps)
        if hi < 0:
            return
        if lo < 0:
            stamps = [t for t in stamps if t >= 0]
            lo = min(stamps)
        width = self.times.width
        self.times.add_buckets(Counter(stamps if width == 1 else map(width.__rfloordiv__, stamps)))
        self._timestamps(lo, hi)

    def _timestamps(self, lo: int, hi: int) -> None:
        self.first_timestamp = lo if self.first_timestamp is None else min(lo, self.first_timestamp)
        self.last_timestamp = hi if self.last_timestamp is None else max(hi, self.last_timestamp)

    def count_walked(self, b: Batch, data: bytes | memoryview, start: int, end: int) -> str | None:
        """Count a valid v2 batch by walking its (uncompressed) records in ``data[start:end]``, without
        building them; returns the walk's error instead, having counted nothing, if there is one."""
        times = self.times
        (null_keys, null_values, first_od, last_od, gaps, missing, min_ts, max_ts, others, error, _) = (
            gather_v2_records(
                data, start, end, b.recordCount or 0, b.baseTimestamp,
                b.maxTimestamp if b.timestampType is TimestampType.LOG_APPEND_TIME else None,
                times.width, self._hists, times.counts, self.header_keys.counts, self.header_keys.limit,
                b.lastOffset - b.baseOffset,
            )
        )  # fmt: skip
        if error is not None:
            return error
        n = b.recordCount or 0
        self._count_batch(b, n, L.V2_HEADER_SIZE + end - start)
        if n:
            self.header_keys.others += others
            self.times.fit()
            first, last = b.baseOffset + first_od, b.baseOffset + last_od
            self._count_gathered(
                first, last, first, last, gaps, missing, null_keys, null_values, min_ts, max_ts
            )
        return None

    def count_wrapper_walked(self, msg: Message, name: str, pos: int, data: bytes) -> bool:
        """Count a v0/v1 wrapper by walking its decompressed inner messages (``data``) without
        building them; False, having counted nothing, unless they are the plain case."""
        times = self.times
        lat = msg.timestamp if msg.timestamp_type is TimestampType.LOG_APPEND_TIME else None
        found = gather_legacy_inner(data, msg.magic, msg.offset, lat, times.width, self._hists, times.counts)
        if found is None:
            return False
        n, null_keys, null_values, first, last, gaps, missing, min_ts, max_ts = found
        self._count_batch(msg.batch(name, pos, first, None, n), n, len(data))
        self.times.fit()
        self._count_gathered(first, last, first, last, gaps, missing, null_keys, null_values, min_ts, max_ts)
        return True

    def count_wrappers_walked(
        self, buf: bytes, i: int, max_batch_bytes: int, max_records: int, unpack: Unpack | None = None
    ) -> int:
        """Count the run of compressed v0/v1 wrappers at ``buf[i]`` whose inner messages are the plain
        case, walked in the compiled twin (``gather_legacy_wrappers``); the bytes they took (0: none).
        ``unpack`` decompresses their values (``codecs.decompress``'s signature), when given."""
        times = self.times
        hists = (*self._hists, self.records_per_batch.slots, self.bytes_per_batch.slots)
        (used, width, batches, records, null_keys, null_values, gaps, missing, first, low, high, last,
         min_ts, max_ts, formats, ts_types) = gather_legacy_wrappers(
            buf, i, len(buf), max_batch_bytes, max_records, times.width, times.limit, hists, times.counts,
            unpack,
        )  # fmt: skip
        if not used or first is None or low is None or high is None or last is None:
            return used
        times.width = width
        self.batches += batches
        self.records += records
        for ts_type, n in zip(_LEGACY_TS_TYPES, ts_types, strict=True):
            if n:
                self.timestamp_types[ts_type] += n
        for magic, codec, b, r, disk, uncompressed in formats:
            self._format(magic, _CODECS[codec]).add(b, r, disk, uncompressed)
        # The run's own gaps are in gaps; its offsets range from low to high (first and last: in file order).
        self._count_gathered(first, last, low, high, gaps, missing, null_keys, null_values, min_ts, max_ts)
        return used

    def _count_gathered(
        self, first: int, last: int, low: int, high: int, gaps: int, missing: int, null_keys: int,
        null_values: int, min_ts: int | None, max_ts: int | None,
    ) -> None:  # fmt: skip
        """The figures a walk returns besides what it added to the histograms itself."""
        self.null_keys += null_keys
        self.tombstones += null_values
        self._seam(first, last, low, high)
        self.offset_gaps += gaps
        self._missing(missing)
        if min_ts is not None and max_ts is not None:
            self._timestamps(min_ts, max_ts)

    def _format(self, magic: int, codec: Compression) -> FormatStats:
        fmt = self.by_format.get((magic, codec))
        if fmt is None:
            fmt = self.by_format[(magic, codec)] = FormatStats()
        return fmt

    @property
    def _hists(self) -> tuple[array[int], array[int], array[int], array[int], array[int]]:
        return (
            self.record_sizes.slots, self.key_sizes.slots, self.value_sizes.slots, self.header_sizes.slots,
            self.header_counts.slots,
        )  # fmt: skip

    def _offsets(self, records: Sequence[Record], *, plain: bool = False) -> None:
        """The seam before the records and the gaps between them; ``plain``: each record is a batch
        of its own (a run of plain v0/v1 messages), so each counts for the first and last offset."""
        offsets = list(map(_OFFSET, records))
        first, last = offsets[0], offsets[-1]
        low, high = (min(offsets), max(offsets)) if plain else (first, last)
        self._seam(first, last, low, high)
        if last - first + 1 == len(offsets) and offsets == list(range(first, last + 1)):
            return  # consecutive inside the batch: the seam was all
        expected = first + 1
        for offset in offsets[1:]:
            if offset != expected:
                self._gap(expected, offset)
            expected = offset + 1

    def _seam(self, first: int, last: int, low: int, high: int) -> None:
        """The batch's (or run's) first and last record offsets, and its least and greatest: the
        file's range, and a gap before the batch."""
        if self.first_offset is None or low < self.first_offset:
            self.first_offset = low
        if self.last_offset is None or high > self.last_offset:
            self.last_offset = high
        expected = self._next_offset
        if expected is not None and first != expected:
            self._gap(expected, first)
        self._next_offset = last + 1

    def _gap(self, expected: int, found: int) -> None:
        self.offset_gaps += 1
        if found > expected:
            self._missing(found - expected)

    def _missing(self, count: int) -> None:
        """Add to the offsets the gaps skip: a count, held inside int64 like every figure kdump prints
        (corrupt offsets at both ends of int64 would pass it)."""
        self.missing_offsets = min(self.missing_offsets + count, L.INT64_MAX)

    def _headers(self, records: Sequence[Record]) -> None:
        keys: Counter[bytes] = Counter()
        sizes = []
        for r in records:
            if r.headers:
                total = 0
                for h in r.headers:
                    keys[h.key] += 1
                    total += len(h.key) + (len(h.value) if h.value is not None else 0)
                sizes.append(total)
        self.header_keys.add_counts(keys)
        self.header_sizes.add_all(sizes)

    # -- totals ----------------------------------------------------------------------------------
    def merge(self, other: SegmentStats) -> None:
        """Add another file's figures (files are not adjacent: no gap is counted between them)."""
        other.finish()
        mine, theirs = vars(self), vars(other)
        for name in _SUMMED:
            mine[name] += theirs[name]
        self.missing_offsets = min(self.missing_offsets, L.INT64_MAX)
        for key, fmt in other.by_format.items():
            self.by_format.setdefault(key, FormatStats()).merge(fmt)
        for name in _HISTOGRAMS:
            mine[name].merge(theirs[name])
        self.producer_ids.merge(other.producer_ids)
        self.header_keys.merge(other.header_keys)
        self.timestamp_types.update(other.timestamp_types)
        self.times.merge(other.times)
        self.first_offset = _least(self.first_offset, other.first_offset)
        self.last_offset = _most(self.last_offset, other.last_offset)
        self.first_timestamp = _least(self.first_timestamp, other.first_timestamp)
        self.last_timestamp = _most(self.last_timestamp, other.last_timestamp)


_SUMMED = (
    "files",
    "file_bytes",
    "batches",
    "records",
    "control_records",
    "offset_gaps",
    "missing_offsets",
    "transactional_batches",
    "idempotent_batches",
    "control_batches",
    "null_keys",
    "tombstones",
    "corrupt",
    "corrupt_bytes",
    "tail_bytes",
)
_HISTOGRAMS = (
    "records_per_batch",
    "bytes_per_batch",
    "record_sizes",
    "key_sizes",
    "value_sizes",
    "header_sizes",
    "header_counts",
)
_RUN_MESSAGES = 4096  # plain messages counted together at most
_LEGACY_TS_TYPES = tuple(
    t.label
    for t in (TimestampType.NO_TIMESTAMP_TYPE, TimestampType.CREATE_TIME, TimestampType.LOG_APPEND_TIME)
)
_CODECS = tuple(Compression(i) for i in range(8))
_KEY, _VALUE, _HEADERS, _TIMESTAMP, _OFFSET = (
    attrgetter(f) for f in ("key", "value", "headers", "timestamp", "offset")
)
_SIZE, _MAGIC, _TS_TYPE = (attrgetter(f) for f in ("sizeInBytes", "magic", "timestampType"))


def _plain(b: Batch) -> bool:
    return b.magic < 2 and b.compression is Compression.NONE


def _end(b: Batch) -> int:
    return b.position + b.sizeInBytes


def _least(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else min(a, b)


def _most(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else max(a, b)
