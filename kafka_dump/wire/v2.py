"""The v2 RecordBatch (magic 2, ``DefaultRecordBatch``): header, CRC-32C, records and control records."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import NamedTuple, TypeVar

from kafka_dump import wire as _twins
from kafka_dump.errors import CorruptRecordError
from kafka_dump.model import Batch, Check, Compression, ControlRecord, ControlType, Record, TimestampType
from kafka_dump.wire import layout as L
from kafka_dump.wire.checksum import crc32c
from kafka_dump.wire.codecs import compress, decompress
from kafka_dump.wire.encoder import finish_v2_entry
from kafka_dump.wire.match import RecordMatch

_T = TypeVar("_T")
_TIMESTAMP_TYPES = (TimestampType.CREATE_TIME, TimestampType.LOG_APPEND_TIME)


def increment_sequence(sequence: int, increment: int) -> int:
    """Kafka's ``DefaultRecordBatch.incrementSequence``: sequences wrap past Integer.MAX_VALUE to 0."""
    if sequence > L.INT32_MAX - increment:
        return increment - (L.INT32_MAX - sequence) - 1
    return sequence + increment


def decode_batch(
    file: str,
    buf: bytes,
    pos: int,
    file_pos: int,
    *,
    with_records: bool,
    max_batch_bytes: int,
    unpack: Callable[[Compression, bytes | memoryview, int], bytes] = decompress,
    match: RecordMatch | None = None,
) -> tuple[Batch, CorruptRecordError | None]:
    """Decode the v2 batch whose entry (whole in ``buf``) starts at ``buf[pos]`` (file position
    ``file_pos``): the batch, with whatever records could be read, and their first error, placed as
    ``read_records`` places it. ``unpack`` inflates them (the segment reader's may have done it ahead).
    A header whose last offset falls outside int64 makes no batch: CorruptRecordError. With ``match``,
    the batch holds only the records it keeps.
    """
    header = L.V2_HEADER.unpack_from(buf, pos)
    (
        base_offset,
        batch_length,
        leader_epoch,
        magic,
        crc,
        attributes,
        last_offset_delta,
        base_timestamp,
        max_timestamp,
        producer_id,
        producer_epoch,
        base_sequence,
        count,
    ) = header
    if not L.INT64_MIN <= base_offset + last_offset_delta <= L.INT64_MAX:
        raise CorruptRecordError(
            f"baseOffset {base_offset} + lastOffsetDelta {last_offset_delta} is past Kafka's int64 offsets",
            position=file_pos,
            check=Check.OFFSET_DELTA,
            found=last_offset_delta,
        )
    end = pos + L.LOG_OVERHEAD + batch_length
    crc_valid = crc32c(memoryview(buf)[pos + L.V2_ATTRIBUTES_OFFSET : end]) == crc
    compression = Compression(attributes & L.COMPRESSION_MASK)
    ts_type = _TIMESTAMP_TYPES[(attributes & L.TIMESTAMP_TYPE_BIT) >> 3]
    is_control = bool(attributes & L.CONTROL_BIT)
    records: tuple[Record, ...] | None = None
    error: CorruptRecordError | None = None
    if with_records:
        log_append_time = max_timestamp if ts_type is TimestampType.LOG_APPEND_TIME else None

        def read(data: bytes, start: int, stop: int) -> tuple[list[Record], CorruptRecordError | None]:
            return _twins.decode_v2_records(
                data, start, stop, count, base_offset, base_timestamp, log_append_time, base_sequence,
                last_offset_delta, match,
            )  # fmt: skip

        none: list[Record] = []
        found, error = read_records(
            buf, pos, end, file_pos, compression, count, max_batch_bytes, unpack, read, none
        )
        if is_control:
            found, control_error = _with_control(found)
            error = error or control_error
        records = tuple(found)
    last_sequence = base_sequence  # NO_SEQUENCE stays
    if base_sequence != L.NO_SEQUENCE:
        last_sequence = increment_sequence(base_sequence, last_offset_delta)
    batch = Batch(
        file,
        file_pos,
        base_offset,
        base_offset + last_offset_delta,
        magic,
        attributes,
        compression,
        ts_type,
        base_timestamp,
        max_timestamp,
        producer_id,
        producer_epoch,
        base_sequence,
        last_sequence,
        leader_epoch,
        bool(attributes & L.TRANSACTIONAL_BIT),
        is_control,
        base_timestamp if attributes & L.DELETE_HORIZON_BIT else None,
        crc,
        crc_valid,
        L.LOG_OVERHEAD + batch_length,
        count,
        records,
    )
    return batch, error


def read_records(
    buf: bytes,
    pos: int,
    end: int,
    file_pos: int,
    compression: Compression,
    count: int,
    max_batch_bytes: int,
    unpack: Callable[[Compression, bytes | memoryview, int], bytes],
    read: Callable[[bytes, int, int], tuple[_T, CorruptRecordError | None]],
    empty: _T,
) -> tuple[_T, CorruptRecordError | None]:
    """What ``read(data, start, end)`` makes of the (decompressed) records of the v2 entry
    ``buf[pos:end]``, and the first error: placed in the file, or for decompressed records at the
    batch, its reason naming the byte of the decompressed records."""
    if count < 0:
        return empty, CorruptRecordError(
            f"invalid record count {count}", position=file_pos, check=Check.COUNT_MISMATCH, found=count
        )
    if compression is Compression.UNKNOWN:
        codec_id = buf[pos + L.V2_ATTRIBUTES_OFFSET + 1] & L.COMPRESSION_MASK  # the attributes' low byte
        return empty, CorruptRecordError(
            f"unknown compression codec id {codec_id}", position=file_pos, check=Check.CODEC, found=codec_id
        )
    start = pos + L.V2_HEADER_SIZE
    if compression is Compression.NONE:
        found, error = read(buf, start, end)
        if error is not None and error.position is not None:
            error = error.with_location(position=error.position - pos + file_pos)
        return found, error
    try:
        data = unpack(compression, memoryview(buf)[start:end], max_batch_bytes)
    except CorruptRecordError as exc:
        return empty, exc.with_location(position=file_pos)
    found, error = read(data, 0, len(data))
    if error is not None:
        error = error.restated(
            f"{error.reason} (at byte {error.position} of the decompressed records)", file_pos
        )
    return found, error


class RecordWalk(NamedTuple):
    """What a walk over one batch's records found (``_walk_pure.walk_v2_records``): ``error`` is the
    first problem's reason and ``errorPosition`` its position in the walked buffer."""

    records: int
    keyBytes: int
    valueBytes: int
    headerBytes: int
    nullKeys: int
    nullValues: int
    headers: int
    maxTimestampDelta: int | None
    error: str | None
    errorPosition: int


_EMPTY_WALK = RecordWalk(0, 0, 0, 0, 0, 0, 0, None, None, 0)


def walk_batch(
    buf: bytes, pos: int, file_pos: int, batch: Batch, max_batch_bytes: int
) -> tuple[RecordWalk, CorruptRecordError | None]:
    """Walk the records of the v2 batch whose entry starts at ``buf[pos]``, its errors placed as
    ``decode_batch`` places them."""
    count = batch.recordCount if batch.recordCount is not None else 0
    last_delta = batch.lastOffset - batch.baseOffset
    base_ts = batch.baseTimestamp

    def read(data: bytes, start: int, end: int) -> tuple[RecordWalk, CorruptRecordError | None]:
        walk = RecordWalk._make(_twins.walk_v2_records(data, start, end, count, last_delta, base_ts))
        if walk.error is None:
            return walk, None
        from kafka_dump.wire import _walk_pure  # on an error only: the compiled walk's users need it not

        # The pure walk raises the error again, with the check it broke.
        error = _walk_pure.walk_error(data, start, end, count, last_delta, base_ts)
        return walk, error or CorruptRecordError(walk.error, position=walk.errorPosition)

    return read_records(
        buf, pos, pos + batch.sizeInBytes, file_pos, batch.compression, count, max_batch_bytes, decompress,
        read, _EMPTY_WALK,
    )  # fmt: skip


def decode_control(record: Record) -> ControlRecord:
    """Read a control record's key (version, type) and, for ABORT/COMMIT, its end-marker value."""
    key = record.key
    if key is None or len(key) < L.CONTROL_KEY.size:
        raise CorruptRecordError("control record key is shorter than 4 bytes", check=Check.CONTROL)
    version, ctype = L.CONTROL_KEY.unpack_from(key)
    if version < 0:
        raise CorruptRecordError(f"control record key has a negative version {version}", check=Check.CONTROL)
    epoch: int | None = None
    if ctype in (ControlType.ABORT, ControlType.COMMIT):
        value = record.value
        if value is None or len(value) < L.END_TXN_MARKER.size:
            raise CorruptRecordError(
                "end transaction marker value is shorter than 6 bytes", check=Check.CONTROL
            )
        marker_version, epoch = L.END_TXN_MARKER.unpack_from(value)
        if marker_version < 0:
            raise CorruptRecordError(
                f"end transaction marker has a negative version {marker_version}", check=Check.CONTROL
            )
    return ControlRecord(ctype, version, epoch)


def _with_control(records: list[Record]) -> tuple[list[Record], CorruptRecordError | None]:
    out = []
    error = None
    for record in records:
        try:
            out.append(replace(record, control=decode_control(record)))
        except CorruptRecordError as exc:
            error = error or exc.restated(f"{exc.reason} (record at offset {record.offset})")
            out.append(record)
    return out, error


def attributes_of(batch: Batch, compression: Compression) -> int:
    """The attributes a batch's fields say (codec, timestamp type, transactional, control, delete horizon)."""
    return (
        int(compression)
        | (L.TIMESTAMP_TYPE_BIT if batch.timestampType is TimestampType.LOG_APPEND_TIME else 0)
        | (L.TRANSACTIONAL_BIT if batch.isTransactional else 0)
        | (L.CONTROL_BIT if batch.isControl else 0)
        | (L.DELETE_HORIZON_BIT if batch.deleteHorizonMs is not None else 0)
    )


def encode_batch(
    batch: Batch, records: tuple[Record, ...], compression: Compression, level: int | None
) -> bytes:
    """One v2 log entry (``MemoryRecordsBuilder``) for ``records``: the header's fields from ``batch``
    as they are, the count from ``records``, the CRC-32C computed."""
    log_append = batch.timestampType is TimestampType.LOG_APPEND_TIME
    # batchLength and the CRC (the two zeros) are filled in with the records.
    header = L.V2_HEADER.pack(
        batch.baseOffset,
        0,
        batch.partitionLeaderEpoch,
        2,
        0,
        attributes_of(batch, compression),
        batch.lastOffset - batch.baseOffset,
        batch.baseTimestamp,
        batch.maxTimestamp,
        batch.producerId,
        batch.producerEpoch,
        batch.baseSequence,
        len(records),
    )
    if compression is Compression.NONE:
        return _twins.encode_v2_entry(header, records, batch.baseOffset, batch.baseTimestamp, log_append)
    body = _twins.encode_v2_records(records, batch.baseOffset, batch.baseTimestamp, log_append)
    return finish_v2_entry(header, compress(compression, body, level=level, magic=2))


def batch_size(batch: Batch, records: tuple[Record, ...]) -> int:
    """``len(encode_batch(batch, records, Compression.NONE, None))`` without building the bytes."""
    log_append = batch.timestampType is TimestampType.LOG_APPEND_TIME
    return L.V2_HEADER_SIZE + _twins.v2_records_size(
        records, batch.baseOffset, batch.baseTimestamp, log_append
    )
