"""The rules of ``kdump convert``: decoded batches in, new batches of the target magic out.

Everything that a conversion keeps, drops or changes is decided here, as a pure mapping over the
model, and counted in ``Changes`` for the report; the encoders stay faithful and refuse what a
format cannot carry. The rules:

- Every offset (gaps included), key, value (nulls kept as null), timestamp and timestamp type is
  kept. v0 has no timestamp: a v1 or v2 target gets -1, or ``timestamp`` when given.
- One output batch per input batch or wrapper message. Plain (uncompressed) v0/v1 messages have no
  batch: when the target batches records (v2, or a compressed v0/v1 wrapper) consecutive ones are
  grouped as a Java producer would (``analysis/batching.py``, 16 KiB). ``batch_records`` and
  ``batch_bytes`` re-batch every run of consecutive records that can share a batch instead.
- The codec is each batch's own unless ``compression`` says otherwise; zstd below v2 is refused.
  Control batches and empty batches are never compressed.
- Down-conversion (v2 to v1 or v0): headers are dropped and counted; producer id, epoch and
  sequence, the partition leader epoch and the delete horizon are lost and counted; transactional
  and control batches are refused unless ``drop_control``, which leaves the control batches out and
  writes the transactional ones as plain data. Empty batches (left by compaction) hold no record to
  write and are left out.
- A v2 target from v0/v1 input has no producer (id, epoch and sequence -1) and no leader epoch (-1).
- ``batching="cleaner"`` writes v0/v1 input as Kafka 4's log cleaner does when it compacts a segment
  (KAFKA-13093, apache/kafka PR #18321: ``MemoryRecords.filterTo`` builds every retained legacy batch
  again as v2): a compressed wrapper becomes one v2 batch in its codec; each plain message becomes a
  v2 batch of its own (no grouping); v0 records get CreateTime and timestamp -1; a LogAppendTime
  wrapper or message gives a LogAppendTime batch whose records all hold the append time (the inner
  messages' stored times are not kept, as Kafka's builder appends each record's effective time). v2
  batches are kept as they are. The codec, grouping and timestamps are the cleaner's, so
  ``compression``, ``batch_records``, ``batch_bytes`` and ``timestamp`` are refused with it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, fields
from operator import attrgetter
from typing import NamedTuple

from kafka_dump.analysis.batching import DEFAULT_BATCH_BYTES, Grouper, as_message, v2_record_size
from kafka_dump.errors import KafkaDumpError
from kafka_dump.model import NEW_BATCH, Batch, Compression, Header, Record, TimestampType, new_record
from kafka_dump.wire import layout as L

NO_TIMESTAMP = -1
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_EMPTY: tuple[Header, ...] = ()


class ConversionError(KafkaDumpError):
    """A conversion the target format cannot carry and the options do not allow to lose."""


@dataclass(frozen=True)
class ConvertOptions:
    """What the caller asked for; ``None`` means "keep the input's"."""

    to_magic: int = 2
    compression: Compression | None = None
    batch_records: int | None = None
    batch_bytes: int | None = None
    drop_control: bool = False
    timestamp: int | None = None  # for records read from v0 messages, which have none
    batching: str = "producer"  # or "cleaner": Kafka 4's log cleaner's rules (the module's docstring)

    def check(self) -> None:
        """Refuse options that contradict each other or the target format, before any reading."""
        if self.to_magic not in (0, 1, 2):
            raise ConversionError(f"unknown target magic {self.to_magic} (0, 1 or 2)")
        if self.compression is Compression.UNKNOWN:
            raise ConversionError("unknown target compression")
        if self.compression is Compression.ZSTD and self.to_magic < 2:
            raise ConversionError(f"zstd needs magic 2; magic {self.to_magic} cannot carry it")
        for name, limit in (("batch records", self.batch_records), ("batch bytes", self.batch_bytes)):
            if limit is not None and limit < 1:
                raise ConversionError(f"{name} must be at least 1")
        if self.batching not in ("producer", "cleaner"):
            raise ConversionError(f"unknown batching {self.batching!r} (producer or cleaner)")
        if self.cleaner:
            given = [
                name
                for name, value in (
                    ("--compression", self.compression),
                    ("--batch-records", self.batch_records),
                    ("--batch-bytes", self.batch_bytes),
                    ("--timestamp", self.timestamp),
                )
                if value is not None
            ]
            if self.to_magic != 2 or given:
                what = ", ".join(given) if given else f"--to-magic {self.to_magic}"
                raise ConversionError(
                    f"--batching cleaner writes v2 as Kafka's cleaner does: {what} cannot apply"
                )

    @property
    def cleaner(self) -> bool:
        return self.batching == "cleaner"

    @property
    def rebatch(self) -> bool:
        return self.batch_records is not None or self.batch_bytes is not None


@dataclass
class Changes:
    """What a conversion dropped or changed, counted as it goes (zeros are not reported)."""

    headers_dropped: int = 0
    records_lost_headers: int = 0
    timestamps_dropped: int = 0
    timestamps_set: int = 0
    control_batches_dropped: int = 0
    control_records_dropped: int = 0
    transactional_batches_made_plain: int = 0
    producer_fields_lost: int = 0
    leader_epochs_lost: int = 0
    delete_horizons_lost: int = 0
    empty_batches_dropped: int = 0
    codecs_changed: int = 0

    def as_dict(self) -> dict[str, int]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def lines(self) -> list[tuple[str, int]]:
        """(what, how many) for every non-zero count, in words for the report."""
        return [(_CHANGE_LABELS[name], n) for name, n in self.as_dict().items() if n]


_CHANGE_LABELS = {
    "headers_dropped": "headers dropped (the target has none)",
    "records_lost_headers": "records that lost their headers",
    "timestamps_dropped": "timestamps dropped (magic 0 has none)",
    "timestamps_set": "v0 records given --timestamp",
    "control_batches_dropped": "control batches dropped (--drop-control)",
    "control_records_dropped": "control records dropped (--drop-control)",
    "transactional_batches_made_plain": "transactional batches written as plain data",
    "producer_fields_lost": "batches whose producer id, epoch and sequence were lost",
    "leader_epochs_lost": "batches whose partition leader epoch was lost",
    "delete_horizons_lost": "batches whose delete horizon was lost",
    "empty_batches_dropped": "empty batches dropped (no record to write)",
    "codecs_changed": "batches whose codec changed",
}


class _Key(NamedTuple):
    """What the records of one output batch must share."""

    timestampType: TimestampType
    logAppendTime: int | None
    compression: Compression
    partitionLeaderEpoch: int
    producerId: int
    producerEpoch: int


_Item = tuple[Record, _Key]


def legacy_message_size(magic: int, record: Record) -> int:
    """Bytes of a v0/v1 log entry holding this record (``LegacyRecord.recordSize`` plus 12)."""
    key, value = record.key, record.value
    return (
        L.LOG_OVERHEAD
        + L.LEGACY_MIN_SIZE[magic]
        + (0 if key is None else len(key))
        + (0 if value is None else len(value))
    )


_TIMESTAMP = attrgetter("timestamp")  # a record's own time, but under LogAppendTime


def _own_time(record: Record) -> int:
    """The time a record's bytes hold: under LogAppendTime the decoder reports the batch's instead."""
    stored = record.storedTimestamp
    return record.timestamp if stored is None else stored


def _v2_fits(first: Record, record: Record) -> bool:
    """Can ``record`` share a v2 batch that starts at ``first`` (deltas within their types)?"""
    delta = _own_time(record) - _own_time(first)
    return record.offset - first.offset <= L.INT32_MAX and _INT64_MIN <= delta <= _INT64_MAX


class Converter:
    """Maps a stream of decoded batches to batches of the target magic, one input batch at a time,
    holding at most one open group of records (memory does not grow with the input)."""

    def __init__(self, options: ConvertOptions) -> None:
        options.check()
        self.options = options
        self.changes = Changes()
        target = options.to_magic
        self._target = target
        if target == 2:
            overhead = L.V2_HEADER_SIZE

            def size(first: _Item, item: _Item) -> int:
                f, r = first[0], item[0]
                return v2_record_size(r.offset - f.offset, _own_time(r) - _own_time(f), r)

            def joins(first: _Item, item: _Item) -> bool:
                return first[1] == item[1] and _v2_fits(first[0], item[0])
        else:
            overhead = L.LOG_OVERHEAD + L.LEGACY_MIN_SIZE[target]

            def size(first: _Item, item: _Item) -> int:
                return legacy_message_size(target, item[0])

            def joins(first: _Item, item: _Item) -> bool:
                return first[1] == item[1]

        max_bytes = options.batch_bytes
        if not options.rebatch:
            max_bytes = DEFAULT_BATCH_BYTES
        self._grouper: Grouper[_Item] = Grouper(
            overhead=overhead, size=size, max_bytes=max_bytes, max_records=options.batch_records, joins=joins
        )

    def feed(self, batch: Batch) -> list[Batch]:
        """The output batches that ``batch`` completes (possibly none, while a group is open)."""
        if batch.records is None:
            raise ConversionError(
                "a batch was read without its records", file=batch.file, position=batch.position
            )
        target = self._target
        out: list[Batch] = []
        if batch.magic >= 2 and target < 2 and (batch.isControl or batch.isTransactional):
            what = "a control" if batch.isControl else "a transactional"
            if not self.options.drop_control:
                raise ConversionError(
                    f"{what} batch (offsets {batch.baseOffset}..{batch.lastOffset}) cannot be written "
                    f"as magic {target}; --drop-control leaves control batches out",
                    file=batch.file,
                    position=batch.position,
                )
            if batch.isControl:
                self.changes.control_batches_dropped += 1
                self.changes.control_records_dropped += len(batch.records)
                return out
            self.changes.transactional_batches_made_plain += 1
        codec = self._codec(batch)
        if batch.magic >= 2 and target < 2:
            self._count_lost_batch_fields(batch)
            if not batch.records:
                self.changes.empty_batches_dropped += 1
                return out
        records = self._records(batch)
        container = target == 2 or codec is not Compression.NONE
        if container and records and self._groupable(batch):
            key = self._key(batch, codec)
            grouper = self._grouper
            for record in records:
                done = grouper.add((record, key))
                if done is not None:
                    out.extend(self._build_group(done))
            return out
        out.extend(self.finish())
        if target == 2 and batch.magic >= 2:
            attributes = (batch.attributes & ~L.COMPRESSION_MASK) | int(codec)
            out.append(batch._replace(compression=codec, attributes=attributes, records=records))
            return out
        key = self._key(batch, codec)
        if not container:
            out.extend(self._legacy((r,), key, r.timestamp) for r in records)
        elif records:
            out.extend(self._build(records, key))
        return out

    @property
    def transcodes(self) -> bool:
        """May v1 CreateTime wrappers skip their Records (``convert_fast``)? Without re-batching, a
        v2 target gives each one a v2 batch of its own holding its records as they are."""
        return self._target == 2 and not self.options.rebatch

    def feed_transcoded(self, codec: Compression, wrappers: int = 1) -> tuple[list[Batch], Compression]:
        """What ``feed`` does for ``wrappers`` v1 CreateTime wrappers of ``codec`` in a row (``transcodes``
        must hold): the batches of the group it closes, and the new batches' codec (changes counted)."""
        closed = self.finish()
        wanted = self.options.compression
        if wanted is not None and wanted is not codec:
            self.changes.codecs_changed += wrappers
            codec = wanted
        return closed, codec

    def finish(self) -> list[Batch]:
        """Close the open group: its output batch(es), the last ones once the input has ended."""
        done = self._grouper.flush()
        return self._build_group(done) if done is not None else []

    def convert(self, batches: Iterable[Batch]) -> Iterator[Batch]:
        """Every output batch for ``batches``, in order."""
        for batch in batches:
            yield from self.feed(batch)
        yield from self.finish()

    # -- the rules, one input batch at a time ------------------------------------------------

    def _codec(self, batch: Batch) -> Compression:
        codec = batch.compression
        if batch.isControl or not batch.records:
            return codec  # Kafka never compresses a control batch, nor an empty one (writeEmptyHeader)
        wanted = self.options.compression
        if wanted is not None and wanted is not codec:
            self.changes.codecs_changed += 1
            codec = wanted
        if codec is Compression.UNKNOWN:
            raise ConversionError("batch has an unknown codec", file=batch.file, position=batch.position)
        if codec is Compression.ZSTD and self._target < 2:
            raise ConversionError(
                f"a zstd batch cannot be written as magic {self._target} (zstd needs magic 2); "
                "choose another codec with --compression",
                file=batch.file,
                position=batch.position,
            )
        return codec

    def _count_lost_batch_fields(self, batch: Batch) -> None:
        changes = self.changes
        if batch.producerId != -1 or batch.producerEpoch != -1 or batch.baseSequence != -1:
            changes.producer_fields_lost += 1
        if batch.partitionLeaderEpoch != -1:
            changes.leader_epochs_lost += 1
        if batch.deleteHorizonMs is not None:
            changes.delete_horizons_lost += 1

    def _records(self, batch: Batch) -> tuple[Record, ...]:
        """The batch's records as the target can carry them."""
        records = batch.records or ()
        target = self._target
        changes = self.changes
        if batch.magic == 0:
            ts = self.options.timestamp
            if target == 0 or ts is None:
                return records
            changes.timestamps_set += len(records)
            return tuple(new_record(r.offset, ts, r.key, r.value, _EMPTY, -1, r.sizeInBytes) for r in records)
        if self.options.cleaner and batch.magic < 2 and batch.timestampType is TimestampType.LOG_APPEND_TIME:
            # The cleaner appends each record's effective time: the append time, not a stored one.
            return tuple(
                new_record(r.offset, r.timestamp, r.key, r.value, _EMPTY, -1, r.sizeInBytes) for r in records
            )
        if target == 2 or (
            target == 1 and (batch.magic == 1 or not any(r.headers or r.sequence != -1 for r in records))
        ):
            return records  # nothing the target cannot carry
        for r in records:
            if r.headers:
                changes.records_lost_headers += 1
                changes.headers_dropped += len(r.headers)
        if target == 0:
            changes.timestamps_dropped += sum(r.timestamp != NO_TIMESTAMP for r in records)
        return tuple(as_message(r, target) for r in records)

    def _groupable(self, batch: Batch) -> bool:
        """May this batch's records be grouped with their neighbours' into new batches?"""
        if self.options.cleaner:
            return False  # the cleaner builds each legacy entry again on its own
        if not self.options.rebatch:
            return batch.magic < 2 and batch.compression is Compression.NONE
        return (
            not batch.isControl
            and not batch.isTransactional
            and batch.producerId == -1
            and batch.baseSequence == -1
            and batch.deleteHorizonMs is None
        )

    def _key(self, batch: Batch, codec: Compression) -> _Key:
        ts_type = batch.timestampType
        if self._target == 0:
            ts_type = TimestampType.NO_TIMESTAMP_TYPE
        elif ts_type is TimestampType.NO_TIMESTAMP_TYPE:
            ts_type = TimestampType.CREATE_TIME
        log_append = batch.maxTimestamp if ts_type is TimestampType.LOG_APPEND_TIME else None
        kept = self._target == 2 and batch.magic >= 2  # a v2 target keeps a v2 batch's producer
        producer = (
            (batch.partitionLeaderEpoch, batch.producerId, batch.producerEpoch) if kept else (-1, -1, -1)
        )
        return _Key(ts_type, log_append, codec, *producer)

    # -- building output batches ---------------------------------------------------------------

    def _build_group(self, items: list[_Item]) -> list[Batch]:
        return self._build(tuple(r for r, _ in items), items[0][1])

    def _build(self, records: tuple[Record, ...], key: _Key) -> list[Batch]:
        """The batch(es) holding ``records``: one v0/v1 wrapper, or v2 split where a delta overflows."""
        if self._target < 2:
            if self._target == 0:
                ts = NO_TIMESTAMP
            elif key.logAppendTime is not None:
                ts = key.logAppendTime
            else:
                ts = max([r.timestamp for r in records])
            return [self._legacy(records, key, ts)]
        own = _own_time if key.timestampType is TimestampType.LOG_APPEND_TIME else _TIMESTAMP
        times = list(map(own, records))
        first, first_time = records[0], times[0]
        if (
            records[-1].offset - first.offset <= L.INT32_MAX
            and max(times) - first_time <= _INT64_MAX
            and min(times) - first_time >= _INT64_MIN
        ):
            return [self._v2_batch(records, key, first_time, max(times))]
        return [
            self._v2_batch(part, key, _own_time(part[0]), max(map(_own_time, part)))
            for part in _split_v2(records)
        ]

    def _v2_batch(self, records: tuple[Record, ...], key: _Key, base_ts: int, max_ts: int) -> Batch:
        """A v2 batch as ``MemoryRecordsBuilder`` writes it: baseTimestamp the first record's own
        time, maxTimestamp the largest (or the LogAppendTime)."""
        if key.timestampType is TimestampType.LOG_APPEND_TIME and key.logAppendTime is not None:
            max_ts = key.logAppendTime
        return _new_batch(records, key, 2, base_ts, max_ts)

    def _legacy(self, records: tuple[Record, ...], key: _Key, timestamp: int) -> Batch:
        """A v0/v1 entry: a plain message (one record), or a wrapper of ``records``."""
        return _new_batch(records, key, self._target, timestamp, timestamp)


def _split_v2(records: tuple[Record, ...]) -> Iterator[tuple[Record, ...]]:
    """Split where an offset or timestamp delta would not fit one v2 batch (huge gaps, extreme times)."""
    start = 0
    for i in range(1, len(records)):
        if not _v2_fits(records[start], records[i]):
            yield records[start:i]
            start = i
    yield records[start:]


def _new_batch(records: tuple[Record, ...], key: _Key, magic: int, base_ts: int, max_ts: int) -> Batch:
    """A batch not read from any file (the encoder computes its CRC and size); v0/v1: no producer."""
    attributes = int(key.compression)
    if key.timestampType is TimestampType.LOG_APPEND_TIME:
        attributes |= L.TIMESTAMP_TYPE_BIT
    v2 = magic == 2
    return NEW_BATCH._replace(
        baseOffset=records[0].offset, lastOffset=records[-1].offset, magic=magic, attributes=attributes,
        compression=key.compression, timestampType=key.timestampType, baseTimestamp=base_ts,
        maxTimestamp=max_ts, producerId=key.producerId if v2 else -1, producerEpoch=key.producerEpoch if v2 else -1,
        partitionLeaderEpoch=key.partitionLeaderEpoch if v2 else -1, recordCount=len(records), records=records,
    )  # fmt: skip


def record_fields(record: Record) -> tuple[object, ...]:
    """What a conversion must keep of a record: compare the output with the input by these."""
    return (record.offset, record.timestamp, record.key, record.value, record.headers)
