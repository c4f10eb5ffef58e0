"""A Batch back to the bytes of its log entry, in its own magic, header fields as they are (so a decoded
entry re-encodes to the same bytes); what the format or codec cannot carry is refused, never dropped."""

from __future__ import annotations

from dataclasses import replace

from kafka_dump import wire
from kafka_dump.errors import UnsupportedEncodingError
from kafka_dump.model import Batch, Compression, Record, TimestampType
from kafka_dump.wire import legacy, v2
from kafka_dump.wire.codecs import level_problem


def encode_refusals(
    batch: Batch, compression: Compression | None = None, level: int | None = None
) -> list[str]:
    """Why ``batch`` cannot be encoded in its magic with ``compression`` (default: its own codec);
    batch-level reasons only, a record the format cannot carry is refused by the encoder as it meets it."""
    codec = batch.compression if compression is None else compression
    magic = batch.magic
    why: list[str] = []
    if batch.records is None:
        why.append("the batch was read without its records")
    if magic not in (0, 1, 2):
        return [*why, f"magic {magic} is not a Kafka format (0, 1 or 2)"]
    if codec is Compression.UNKNOWN:
        why.append("its codec is unknown")
    problem = level_problem(codec, level)
    if problem is not None:
        why.append(problem)
    if magic == 2:
        # v0/v1 entries take their offsets from the records; a v2 header keeps its own.
        records = batch.records or ()
        if batch.lastOffset < batch.baseOffset:
            why.append(f"lastOffset {batch.lastOffset} is below baseOffset {batch.baseOffset}")
        if records and records[-1].offset > batch.lastOffset:
            why.append(
                f"record offset {records[-1].offset} is past the batch's lastOffset {batch.lastOffset}"
            )
        if batch.isControl and codec is not Compression.NONE:
            why.append("control batches are never compressed")
        if batch.deleteHorizonMs is not None and batch.deleteHorizonMs != batch.baseTimestamp:
            why.append("deleteHorizonMs is stored in baseTimestamp, and they differ")
        if batch.lastOffset - batch.baseOffset > 2**31 - 1:
            why.append("lastOffset is more than 2^31-1 past baseOffset")
        return why
    cannot = f"which magic {magic} cannot carry"
    if codec is Compression.ZSTD:
        why.append(f"zstd compression, {cannot}")
    if (batch.producerId, batch.producerEpoch, batch.baseSequence) != (-1, -1, -1):
        why.append(f"a producer id, epoch or sequence, {cannot}")
    if batch.isTransactional or batch.isControl:
        why.append(f"a transactional or control batch, {cannot}")
    if batch.partitionLeaderEpoch != -1:
        why.append(f"a partition leader epoch, {cannot}")
    if batch.deleteHorizonMs is not None:
        why.append(f"a delete horizon, {cannot}")
    if magic == 0 and batch.timestampType is TimestampType.LOG_APPEND_TIME:
        why.append(f"a LogAppendTime timestamp, {cannot}")
    return why


def _records(batch: Batch, compression: Compression | None, level: int | None) -> tuple[Record, ...]:
    why = encode_refusals(batch, compression, level)
    if why:
        where = f"batch at offset {batch.baseOffset}"
        raise UnsupportedEncodingError(f"cannot encode the {where} as magic {batch.magic}: " + "; ".join(why))
    return batch.records or ()


def encode_entry(batch: Batch, *, compression: Compression | None = None, level: int | None = None) -> bytes:
    """The whole log entry (or, uncompressed v0/v1, one per record) for ``batch.records`` in
    ``batch.magic``, with its own codec unless ``compression`` is given, at ``level`` (None: Kafka's
    default); raises UnsupportedEncodingError for what the format cannot carry."""
    records = _records(batch, compression, level)
    codec = batch.compression if compression is None else compression
    if batch.magic == 2:
        return v2.encode_batch(batch, records, codec, level)
    return legacy.encode_messages(batch, records, codec, level)


def entry_size(batch: Batch) -> int:
    """``len(encode_entry(batch, compression=Compression.NONE))``, computed without building bytes."""
    records = _records(batch, Compression.NONE, None)
    if batch.magic == 2:
        return v2.batch_size(batch, records)
    return wire.legacy_messages_size(records, batch.magic)


def _own_time(record: Record) -> int:
    return record.timestamp if record.storedTimestamp is None else record.storedTimestamp


def new_batch(
    records: tuple[Record, ...],
    *,
    magic: int,
    compression: Compression = Compression.NONE,
    base_offset: int | None = None,
    log_append_time: int | None = None,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    partition_leader_epoch: int = -1,
    is_transactional: bool = False,
    is_control: bool = False,
) -> Batch:
    """A Batch for ``records`` with the header fields Kafka's ``MemoryRecordsBuilder`` would write;
    under a ``log_append_time`` the records report it, keeping their own time as ``storedTimestamp``."""
    if base_offset is None:
        if not records:
            raise UnsupportedEncodingError("an empty batch needs a base offset")
        base_offset = records[0].offset
    last_offset = records[-1].offset if records else base_offset
    if magic == 0:
        ts_type = TimestampType.NO_TIMESTAMP_TYPE
    elif log_append_time is not None:
        ts_type = TimestampType.LOG_APPEND_TIME
        records = tuple(replace(r, timestamp=log_append_time, storedTimestamp=_own_time(r)) for r in records)
    else:
        ts_type = TimestampType.CREATE_TIME
    # The timestamps the records' bytes will hold (encode_entry writes storedTimestamp only under LogAppendTime).
    own = [_own_time(r) if log_append_time is not None else r.timestamp for r in records]
    if log_append_time is not None and magic > 0:
        max_ts = log_append_time
    else:
        max_ts = max(own) if own and magic > 0 else -1
    # A v0/v1 entry has one timestamp, which the decoders report as both base and max.
    base_ts = (own[0] if own else -1) if magic == 2 else max_ts
    batch = Batch(
        "", -1, base_offset, last_offset, magic, 0, compression, ts_type, base_ts, max_ts,
        producer_id, producer_epoch, base_sequence,
        -1 if base_sequence < 0 else v2.increment_sequence(base_sequence, last_offset - base_offset),
        partition_leader_epoch, is_transactional, is_control, None, 0, True, 0, len(records), records,
    )  # fmt: skip
    return batch._replace(attributes=v2.attributes_of(batch, compression))
