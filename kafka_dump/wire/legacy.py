"""v0 and v1 log entries (``LegacyRecord``): plain messages, and compressed wrapper messages whose
value is a message set (placed by ``message.inner_base``), decoded as Batches and encoded back."""

from __future__ import annotations

from collections.abc import Callable

from kafka_dump import wire as _twins
from kafka_dump.errors import CorruptRecordError
from kafka_dump.model import Batch, Check, Compression, Record, TimestampType
from kafka_dump.wire import layout as L
from kafka_dump.wire.codecs import DEFAULT_MAX_RECORDS_PER_BATCH, compress, decompress
from kafka_dump.wire.match import RecordMatch
from kafka_dump.wire.message import Message, encode_message


def decode_message(
    file: str,
    buf: bytes,
    pos: int,
    end: int,
    file_pos: int,
    *,
    with_records: bool,
    max_batch_bytes: int,
    max_records: int = DEFAULT_MAX_RECORDS_PER_BATCH,
    unpack: Callable[[Compression, bytes | memoryview, int], bytes] = decompress,
    match: RecordMatch | None = None,
) -> tuple[Batch, CorruptRecordError | None]:
    """Decode one outer v0/v1 message entry ``buf[pos:end]`` as a Batch of its record(s), with the
    error of a wrapper's inner messages (inflated by ``unpack``); raises when the message is unreadable.
    ``match``: a sound wrapper comes with only the records it keeps (the long way, with them all)."""
    # A sound compressed wrapper, the common case, in one call; anything else the long way below.
    fast = _twins.decode_legacy_wrapper(
        file, buf, pos, end, file_pos, with_records, max_batch_bytes, max_records, unpack, match
    )
    if fast is not None:
        return fast, None
    try:
        msg = Message(buf, pos, end)
    except CorruptRecordError as exc:
        raise exc.with_location(position=(exc.position or pos) - pos + file_pos) from None
    codec = msg.compression
    error: CorruptRecordError | None = None
    base_offset = msg.offset
    if codec is Compression.NONE:
        found = [msg.record(msg.offset, msg.timestamp)]
    else:
        # Decoded even for headers only: a wrapper's header holds its last offset, not its first.
        found, error = _inner_records(msg, max_batch_bytes, max_records, unpack)
        if error is not None:
            error = error.with_location(position=file_pos)
        if found:
            base_offset = found[0].offset
    records = tuple(found) if with_records else None
    batch = msg.batch(file, file_pos, base_offset, records, len(found))
    return batch, error


def _inner_records(
    wrapper: Message,
    max_batch_bytes: int,
    max_records: int,
    unpack: Callable[[Compression, bytes | memoryview, int], bytes] = decompress,
) -> tuple[list[Record], CorruptRecordError | None]:
    """Decompress a wrapper and read its inner message set (``DeepRecordsIterator``)."""
    if wrapper.compression is Compression.ZSTD or wrapper.compression is Compression.UNKNOWN:
        codec_id = wrapper.attributes & L.COMPRESSION_MASK
        return [], CorruptRecordError(
            f"invalid wrapper compression type {codec_id} for magic {wrapper.magic}", check=Check.CODEC,
            found=codec_id,
        )  # fmt: skip
    if wrapper.value is None:
        return [], CorruptRecordError("compressed wrapper message has a null value", check=Check.WRAPPER)
    log_append = wrapper.timestamp_type is TimestampType.LOG_APPEND_TIME
    try:
        data = unpack(wrapper.compression, wrapper.value, max_batch_bytes)
    except CorruptRecordError as exc:
        return [], exc
    if more_inner_than(data, max_records):
        return [], CorruptRecordError(
            f"wrapper holds more than {max_records} inner messages (--max-records-per-batch)",
            check=Check.TOO_LARGE, expected=max_records,
        )  # fmt: skip
    return _twins.decode_legacy_inner(
        data, wrapper.magic, wrapper.offset, wrapper.timestamp if log_append else None
    )


def more_inner_than(data: bytes, limit: int) -> bool:
    """Whether decompressed ``data`` frames more than ``limit`` inner messages (cheap unless it could)."""
    return len(data) // L.LEGACY_MIN_ENTRY > limit and count_inner(data, limit) > limit


def count_inner(data: bytes, limit: int) -> int:
    """Inner messages framed in ``data``, counted from their size fields alone, up to ``limit + 1``:
    a wrapper is refused before a Record is built for each of millions of inner messages."""
    n, pos, size_all = 0, 0, len(data)
    while n <= limit and size_all - pos >= L.LOG_OVERHEAD:
        size = L.LOG_ENTRY.unpack_from(data, pos)[1]
        if size < L.LEGACY_V0_MIN_SIZE or size > size_all - pos - L.LOG_OVERHEAD:
            break
        pos += L.LOG_OVERHEAD + size
        n += 1
    return n


def encode_messages(
    batch: Batch, records: tuple[Record, ...], compression: Compression, level: int | None
) -> bytes:
    """v0/v1 log entries for ``records`` (``MemoryRecordsBuilder`` with a legacy magic): one message
    per record, or, compressed, one wrapper of them (v1 inner offsets relative to the first record)
    whose offset is the last record's, its key null, its timestamp the batch's maxTimestamp."""
    magic = batch.magic
    log_append = batch.timestampType is TimestampType.LOG_APPEND_TIME
    ts_bit = L.TIMESTAMP_TYPE_BIT if magic == 1 and log_append else 0
    if compression is Compression.NONE or not records:
        return _twins.encode_legacy_messages(records, magic, ts_bit, 0, False)
    shift = records[0].offset if magic == 1 else 0
    inner = _twins.encode_legacy_messages(records, magic, ts_bit, shift, log_append)
    value = compress(compression, inner, level=level, magic=magic)
    return encode_message(
        records[-1].offset, magic, int(compression) | ts_bit, batch.maxTimestamp, None, value
    )
