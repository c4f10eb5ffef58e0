"""v0 and v1 messages (magic 0 and 1), and the compressed wrapper messages that nest a message set.

Wire schema: see ``layout.py`` (mirrors Kafka's ``LegacyRecord`` and ``AbstractLegacyRecordBatch``).
A compressed message is a wrapper whose value is a compressed set of inner messages. In v0 the inner
offsets are absolute; in v1 they are relative (0..n-1) and the wrapper's offset is the last inner
offset, except that a wrapper offset of 0 means base 0 (``DeepRecordsIterator``).
"""

from __future__ import annotations

from kafka_dump.errors import CorruptRecordError
from kafka_dump.format import layout as L
from kafka_dump.format.checksum import crc32
from kafka_dump.format.codecs import decompress
from kafka_dump.model import Batch, Compression, Record, TimestampType

_EMPTY: tuple[()] = ()


def _read_bytes(buf: bytes, pos: int, end: int, what: str) -> tuple[bytes | None, int]:
    if pos + 4 > end:
        raise CorruptRecordError(f"message ends before its {what} length", position=pos)
    (n,) = L.INT32.unpack_from(buf, pos)
    pos += 4
    if n < 0:
        return None, pos
    if n > end - pos:
        raise CorruptRecordError(f"{what} length {n} runs past the message", position=pos - 4)
    return buf[pos : pos + n], pos + n


class Message:
    """One decoded v0/v1 message (header fields and payload), before offsets are made absolute."""

    __slots__ = ("attributes", "crc", "crc_valid", "key", "magic", "offset", "size", "timestamp", "value")

    def __init__(self, buf: bytes, pos: int, end: int) -> None:
        """Decode the message whose entry is ``buf[pos:end]`` (offset and size fields included)."""
        if end - pos < L.LOG_OVERHEAD + L.LEGACY_MIN_SIZE[0]:
            raise CorruptRecordError("message is shorter than the smallest v0 message", position=pos)
        self.offset, size, self.crc, self.magic, self.attributes = L.LEGACY_HEADER.unpack_from(buf, pos)
        self.size = L.LOG_OVERHEAD + size
        if self.magic not in (0, 1):
            raise CorruptRecordError(f"message has magic {self.magic}, expected 0 or 1", position=pos)
        if size < L.LEGACY_MIN_SIZE[self.magic]:
            raise CorruptRecordError(f"message size {size} is below the v{self.magic} minimum", position=pos)
        self.crc_valid = crc32(memoryview(buf)[pos + L.MAGIC_OFFSET : end]) == self.crc
        p = pos + L.LEGACY_HEADER.size
        self.timestamp = -1
        if self.magic == 1:
            (self.timestamp,) = L.LEGACY_TIMESTAMP.unpack_from(buf, p)
            p += 8
        self.key, p = _read_bytes(buf, p, end, "key")
        self.value, p = _read_bytes(buf, p, end, "value")
        if p != end:
            raise CorruptRecordError(f"message has {end - p} bytes after its value", position=pos)

    @property
    def compression(self) -> Compression:
        return Compression(self.attributes & L.COMPRESSION_MASK)

    @property
    def timestamp_type(self) -> TimestampType:
        if self.magic == 0:
            return TimestampType.NO_TIMESTAMP_TYPE
        if self.attributes & L.TIMESTAMP_TYPE_BIT:
            return TimestampType.LOG_APPEND_TIME
        return TimestampType.CREATE_TIME

    def record(self, offset: int, timestamp: int) -> Record:
        return Record(
            offset, timestamp, self.key, self.value, _EMPTY, -1, self.size, self.crc, self.crc_valid, None
        )


def decode_message(
    file: str,
    buf: bytes,
    pos: int,
    end: int,
    file_pos: int,
    *,
    with_records: bool,
    max_batch_bytes: int,
) -> tuple[Batch, CorruptRecordError | None]:
    """Decode one outer v0/v1 message entry ``buf[pos:end]`` as a Batch of its record(s).

    Raises CorruptRecordError when the message itself cannot be read (then it is no batch at all);
    returns the error found in a wrapper's inner messages beside the batch otherwise.
    """
    try:
        msg = Message(buf, pos, end)
    except CorruptRecordError as exc:
        raise exc.with_location(position=(exc.position or pos) - pos + file_pos) from None
    codec = msg.compression
    records: tuple[Record, ...] | None = None
    error: CorruptRecordError | None = None
    base_offset = msg.offset
    if codec is Compression.NONE:
        records = (msg.record(msg.offset, msg.timestamp),) if with_records else None
    elif with_records:
        found, error = _inner_records(msg, max_batch_bytes)
        if error is not None:
            error = error.with_location(position=file_pos)
        records = tuple(found)
        if found:
            base_offset = found[0].offset
    batch = Batch(
        file,
        file_pos,
        base_offset,
        msg.offset,
        msg.magic,
        msg.attributes,
        codec,
        msg.timestamp_type,
        msg.timestamp,
        msg.timestamp,
        -1,
        -1,
        -1,
        -1,
        -1,
        False,
        False,
        None,
        msg.crc,
        msg.crc_valid,
        msg.size,
        None if records is None else len(records),
        records,
    )
    return batch, error


def _inner_records(wrapper: Message, max_batch_bytes: int) -> tuple[list[Record], CorruptRecordError | None]:
    """Decompress a wrapper and read its inner message set (``DeepRecordsIterator``)."""
    if wrapper.compression is Compression.ZSTD or wrapper.compression is Compression.UNKNOWN:
        return [], CorruptRecordError(
            f"invalid wrapper compression type {wrapper.attributes & L.COMPRESSION_MASK} for magic {wrapper.magic}"
        )
    if wrapper.value is None:
        return [], CorruptRecordError("compressed wrapper message has a null value")
    try:
        data = decompress(wrapper.compression, wrapper.value, max_batch_bytes)
    except CorruptRecordError as exc:
        return [], exc
    inner: list[Message] = []
    error: CorruptRecordError | None = None
    pos = 0
    while pos < len(data):
        if len(data) - pos < L.LOG_OVERHEAD:
            error = CorruptRecordError(f"{len(data) - pos} stray bytes after the last inner message")
            break
        (_, size) = L.LOG_ENTRY.unpack_from(data, pos)
        end = pos + L.LOG_OVERHEAD + size
        if size < 0 or end > len(data):
            error = CorruptRecordError(f"inner message at byte {pos} of the payload runs past its end")
            break
        try:
            msg = Message(data, pos, end)
        except CorruptRecordError as exc:
            error = CorruptRecordError(f"inner message at byte {pos} of the payload: {exc.reason}")
            break
        if msg.magic != wrapper.magic:
            error = CorruptRecordError(f"inner message has magic {msg.magic} in a v{wrapper.magic} wrapper")
            break
        if msg.compression is not Compression.NONE:
            error = CorruptRecordError("inner message is itself compressed")
            break
        inner.append(msg)
        pos = end
    if not inner:
        return [], error or CorruptRecordError("compressed wrapper message holds no inner messages")
    if error is not None and wrapper.magic > 0 and wrapper.offset != 0:
        # v1 offsets are relative to the last inner message; without it none can be placed.
        return [], CorruptRecordError(
            f"{error.reason}; the {len(inner)} inner messages before it have unknown offsets"
        )
    last = inner[-1].offset
    if error is None and wrapper.magic > 0 and 0 < wrapper.offset < last:
        error = CorruptRecordError(f"wrapper offset {wrapper.offset} is below its last inner offset {last}")
    return _absolute(wrapper, inner), error


def _absolute(wrapper: Message, inner: list[Message]) -> list[Record]:
    """Give inner messages their absolute offsets and, for LogAppendTime, the wrapper's timestamp."""
    base = 0
    if wrapper.magic > 0 and wrapper.offset != 0:
        # v1: relative inner offsets; the wrapper carries the last one. Kafka rejects a wrapper
        # offset below the last inner offset; kdump still shows the records from base 0 then.
        base = max(0, wrapper.offset - inner[-1].offset)
    log_append = wrapper.timestamp_type is TimestampType.LOG_APPEND_TIME
    return [m.record(base + m.offset, wrapper.timestamp if log_append else m.timestamp) for m in inner]
