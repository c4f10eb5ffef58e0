"""``kdump stats --compare``: the exact size of a file's records in every format and codec.

The same records are encoded again, with the same batch boundaries, by the writer's encoders (V0
and V1 uncompressed and in gzip, snappy and lz4 wrappers; V2 also in zstd): sizes are the lengths of
real encodings, or the writer's size functions where no bytes are needed. Nothing is estimated.

Plain v0/v1 messages have no batch, so consecutive ones are grouped by ``analysis/batching.py``'s
rule (the Java producer's, ``convert``'s too): a group takes messages while its v2 encoding stays
within ``batch_bytes`` (16 KiB) and ``batch_records``; every encoding of a group holds the same
records. What the formats below V2 cannot carry is left out of their encodings (and said by
``downgrade_losses``): headers, producer ids and sequences, control batches, timestamps in V0.
Control batches stay uncompressed in every V2 encoding, as Kafka writes them. Per-record figures
divide by the data records compared.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from kafka_dump.analysis.batching import DEFAULT_BATCH_BYTES, Grouper, as_message, v2_record_size
from kafka_dump.analysis.stats import SegmentStats
from kafka_dump.errors import UnsupportedEncodingError
from kafka_dump.model import Batch, Compression, Record, TimestampType
from kafka_dump.wire import (
    encode_entry,
    encode_legacy_messages,
    encode_refusals,
    encode_v2_records,
    entry_size,
)
from kafka_dump.wire import layout as L
from kafka_dump.wire.codecs import compress, level_problem

LEGACY_CODECS = (Compression.NONE, Compression.GZIP, Compression.SNAPPY, Compression.LZ4)
V2_CODECS = (*LEGACY_CODECS, Compression.ZSTD)
Encoding = tuple[int, Compression]  # (magic, codec)
ALL_ENCODINGS: tuple[Encoding, ...] = (
    *((0, c) for c in LEGACY_CODECS),
    *((1, c) for c in LEGACY_CODECS),
    *((2, c) for c in V2_CODECS),
)
V1_NONE: Encoding = (1, Compression.NONE)


@dataclass(frozen=True)
class CompareOptions:
    """``--codecs``, ``--level``, ``--batch-records``, ``--batch-bytes``, ``--sample``."""

    codecs: tuple[Compression, ...] = V2_CODECS
    level: int | None = None
    batch_records: int | None = None
    batch_bytes: int | None = None  # 16 KiB when neither limit is given
    sample: int | None = None  # compare only this many batches, spread over the file

    def check(self) -> None:
        """Refuse a level that no codec compared accepts (Kafka's ranges: gzip 1-9, lz4 1-17, zstd)."""
        if self.level is not None and not self.leveled:
            why = "; ".join(
                level_problem(c, self.level) or "" for c in self.codecs if c is not Compression.NONE
            )
            raise UnsupportedEncodingError(f"--level {self.level} suits none of the codecs compared: {why}")

    @property
    def leveled(self) -> tuple[Compression, ...]:
        """The codecs that take ``level`` (those with levels, where it is in their range)."""
        if self.level is None:
            return ()
        return tuple(
            c for c in self.codecs if c is not Compression.NONE and level_problem(c, self.level) is None
        )

    def level_for(self, codec: Compression) -> int | None:
        return self.level if codec in self.leveled else None

    @property
    def encodings(self) -> tuple[Encoding, ...]:
        """The rows compared: V1 uncompressed always (the reference), the others per ``codecs``."""
        return tuple(e for e in ALL_ENCODINGS if e[1] in self.codecs or e == V1_NONE)

    @property
    def max_bytes(self) -> int | None:
        if self.batch_bytes is None and self.batch_records is None:
            return DEFAULT_BATCH_BYTES
        return self.batch_bytes


def group_plain_messages(options: CompareOptions) -> Grouper[Record]:
    """The grouping of plain v0/v1 messages into batches: the producer's rule (``convert``'s too),
    a record sized as its v2 record in a batch opened by the group's first record."""

    def size(first: Record, r: Record) -> int:
        return v2_record_size(r.offset - first.offset, r.timestamp - first.timestamp, r)

    def joins(first: Record, r: Record) -> bool:
        return 0 <= r.offset - first.offset <= L.INT32_MAX

    return Grouper(
        overhead=L.V2_HEADER_SIZE,
        size=size,
        max_bytes=options.max_bytes,
        max_records=options.batch_records,
        joins=joins,
    )


@dataclass
class Comparison:
    """The sizes of one file's records in each encoding, filled one batch at a time as ``SegmentStats``'
    listener (None at a problem), holding one open group at most."""

    options: CompareOptions
    file_bytes: int = 0
    sizes: dict[Encoding, int] = field(default_factory=dict)
    now_bytes: int = 0  # the compared batches as they are on disk
    current: Counter[Encoding] = field(default_factory=Counter)  # on-disk bytes per encoding found
    records: int = 0  # data records compared
    payload: int = 0  # their keys and values
    header_payload: int = 0  # their header keys and values (carried by V2 only)
    groups: int = 0  # batches seen (after grouping)
    compared: int = 0  # batches compared (all of them unless sampling)
    files: int = 1
    _grouper: Grouper[Record] = field(init=False)
    _open: list[Batch] = field(default_factory=list)  # the plain messages of the open group
    _next_sample: int = 0

    def __post_init__(self) -> None:
        self._grouper = group_plain_messages(self.options)
        for e in self.options.encodings:
            self.sizes.setdefault(e, 0)

    def __call__(self, batch: Batch | None) -> None:
        if batch is None:
            self._close()
            return
        if batch.magic < 2 and batch.compression is Compression.NONE and batch.records:
            if self._grouper.add(batch.records[0]) is not None:
                self._group(self._open)  # the group that this message did not fit closed
                self._open = []
            self._open.append(batch)
            return
        self._close()
        self._group([batch])

    def finish(self) -> Comparison:
        self._close()
        return self

    def _close(self) -> None:
        if self._grouper.flush() is not None:
            self._group(self._open)
        self._open = []

    # -- one group --------------------------------------------------------------------------------
    def _sampled(self, position: int) -> bool:
        n = self.options.sample
        if n is None:
            return True
        if self._next_sample >= n or position * n < self._next_sample * self.file_bytes:
            return False
        # The first batch at or after each of n evenly spaced positions.
        self._next_sample = position * n // max(self.file_bytes, 1) + 1
        return True

    def _group(self, batches: Sequence[Batch]) -> None:
        self.groups += 1
        first = batches[0]
        if not self._sampled(first.position):
            return
        self.compared += 1
        for b in batches:
            self.now_bytes += b.sizeInBytes
            self.current[(b.magic, b.compression)] += b.sizeInBytes
        if first.magic == 2:
            v2 = first
            records: tuple[Record, ...] = first.records or ()
        else:
            records = tuple(r for b in batches for r in b.records or ())
            v2 = as_v2_batch(first, records)
        level_for = self.options.level_for
        sizes = self.sizes
        v2_codecs = [c for m, c in sizes if m == 2]
        if v2.isControl:  # never compressed: the same bytes in every V2 row
            for codec in v2_codecs:
                sizes[(2, codec)] += entry_size(v2._replace(compression=Compression.NONE))
        else:
            for codec, n in encoded_sizes(v2, v2_codecs, level_for).items():
                sizes[(2, codec)] += n
        if v2.isControl or not records:
            return  # no data record: nothing below V2
        self.records += len(records)
        keys_values = sum(len(r.key or b"") + len(r.value or b"") for r in records)
        self.payload += keys_values
        self.header_payload += sum(
            len(h.key) + len(h.value or b"") for r in records if r.headers for h in r.headers
        )
        for magic in (0, 1):
            wanted = [c for m, c in sizes if m == magic]
            if not wanted:
                continue
            legacy = as_legacy_batch(v2, records, magic)
            for codec, n in encoded_sizes(legacy, wanted, level_for).items():
                sizes[(magic, codec)] += n

    # -- totals -----------------------------------------------------------------------------------
    def merge(self, other: Comparison) -> None:
        other.finish()
        for e, n in other.sizes.items():
            self.sizes[e] = self.sizes.get(e, 0) + n
        self.current.update(other.current)
        for name in ("file_bytes", "now_bytes", "records", "payload", "header_payload", "groups", "compared",
                     "files"):  # fmt: skip
            setattr(self, name, getattr(self, name) + getattr(other, name))

    @property
    def current_encoding(self) -> Encoding | None:
        """The file's one encoding, or None when it mixes several (or holds nothing)."""
        return next(iter(self.current)) if len(self.current) == 1 else None

    def payload_of(self, magic: int) -> int:
        """What an encoding carries of the producer's bytes: V2 the headers too."""
        return self.payload + (self.header_payload if magic == 2 else 0)


def encoded_sizes(
    batch: Batch, codecs: Sequence[Compression], level_for: Callable[[Compression], int | None]
) -> dict[Compression, int]:
    """``len(encode_entry(batch, compression=c, level=level_for(c)))`` for each codec ``c``.

    The records are encoded once: a compressed entry is a fixed-size header (the v2 batch header;
    the v0/v1 wrapper with a null key) around the codec's output for those uncompressed bytes.
    """
    out: dict[Compression, int] = {}
    compressed = [c for c in codecs if c is not Compression.NONE]
    if Compression.NONE in codecs or not compressed:
        out[Compression.NONE] = entry_size(batch._replace(compression=Compression.NONE))
    if not compressed:
        return out
    records = batch.records or ()
    why = encode_refusals(batch, Compression.NONE)
    if why or (batch.magic < 2 and not records):  # let the encoder say (or do) what it does
        for c in compressed:
            out[c] = len(encode_entry(batch, compression=c, level=level_for(c)))
        return out
    log_append = batch.timestampType is TimestampType.LOG_APPEND_TIME
    if batch.magic == 2:
        body = encode_v2_records(records, batch.baseOffset, batch.baseTimestamp, log_append)
        header = L.V2_HEADER_SIZE
    else:
        ts_bit = L.TIMESTAMP_TYPE_BIT if batch.magic == 1 and log_append else 0
        shift = records[0].offset if batch.magic == 1 else 0
        body = encode_legacy_messages(records, batch.magic, ts_bit, shift, log_append)
        header = L.LOG_OVERHEAD + L.LEGACY_MIN_SIZE[batch.magic]  # a wrapper: null key, the value
    for c in compressed:
        out[c] = header + len(compress(c, body, level=level_for(c), magic=batch.magic))
    return out


def _plain(batch: Batch, records: tuple[Record, ...]) -> Batch:
    """``batch`` holding ``records``, as a writer without producer state writes it: no producer
    (id, epoch and sequences -1), no leader epoch, not transactional, not a control batch."""
    return batch._replace(
        producerId=-1,
        producerEpoch=-1,
        baseSequence=-1,
        lastSequence=-1,
        partitionLeaderEpoch=-1,
        isTransactional=False,
        isControl=False,
        deleteHorizonMs=None,
        recordCount=len(records),
        records=records,
    )


def as_v2_batch(template: Batch, records: tuple[Record, ...]) -> Batch:
    """A v2 batch holding v0/v1 ``records``, as Kafka's up-conversion writes it: no producer (id,
    epoch and sequence -1), no leader epoch (-1), the first record's timestamp as the base."""
    ts_type = template.timestampType
    if ts_type is TimestampType.NO_TIMESTAMP_TYPE:
        ts_type = TimestampType.CREATE_TIME
    attributes = L.TIMESTAMP_TYPE_BIT if ts_type is TimestampType.LOG_APPEND_TIME else 0
    base_ts = records[0].timestamp if records else -1
    if ts_type is TimestampType.LOG_APPEND_TIME and records and records[0].storedTimestamp is not None:
        base_ts = records[0].storedTimestamp
    return _plain(template, records)._replace(
        baseOffset=records[0].offset if records else template.baseOffset,
        lastOffset=records[-1].offset if records else template.lastOffset,
        magic=2,
        attributes=attributes,
        compression=Compression.NONE,
        timestampType=ts_type,
        baseTimestamp=base_ts,
        maxTimestamp=max((r.timestamp for r in records), default=-1),
    )


def as_legacy_batch(v2: Batch, records: tuple[Record, ...], magic: int) -> Batch:
    """The same records as v0/v1 messages: headers left out, and in V0 the timestamps too."""
    if magic == 0:
        records = tuple(as_message(r, 0) for r in records)
        ts_type = TimestampType.NO_TIMESTAMP_TYPE
    else:
        if any(r.headers for r in records):
            records = tuple(as_message(r, 1) for r in records)
        ts_type = v2.timestampType
    return _plain(v2, records)._replace(
        magic=magic,
        attributes=L.TIMESTAMP_TYPE_BIT if ts_type is TimestampType.LOG_APPEND_TIME else 0,
        compression=Compression.NONE,
        timestampType=ts_type,
        baseOffset=records[0].offset,
        lastOffset=records[-1].offset,
        maxTimestamp=-1 if magic == 0 else v2.maxTimestamp,
    )


@dataclass(frozen=True)
class Loss:
    """Something the records have that formats below ``below`` cannot carry, and how much of it."""

    what: str
    count: int
    below: int  # lost in every magic below this one


def downgrade_losses(s: SegmentStats) -> list[Loss]:
    """What moving these records below V2 (or to V0) would lose, from the file's figures."""
    with_headers = s.header_counts.count - s.header_counts.buckets.get(0, 0)
    timestamped = sum(s.times.series()[2])
    losses = [
        Loss("records with headers", with_headers, 2),
        Loss("header bytes", s.header_sizes.total, 2),
        Loss("idempotent batches (producer id, epoch, sequence)", s.idempotent_batches, 2),
        Loss("transactional batches", s.transactional_batches, 2),
        Loss("control records (transaction markers...)", s.control_records, 2),
        Loss("records with a timestamp", timestamped, 1),
    ]
    return [loss for loss in losses if loss.count]
