"""One v0/v1 message (``LegacyRecord``), its header fields and payload; see ``layout.py``."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from kafka_dump.errors import CorruptRecordError
from kafka_dump.model import Batch, Check, Compression, Record, TimestampType, new_record
from kafka_dump.wire import layout as L
from kafka_dump.wire.checksum import crc32

_EMPTY: tuple[()] = ()
_CODECS = tuple(Compression(i) for i in range(8))  # ids 5-7 are UNKNOWN


def _read_bytes(buf: bytes, pos: int, end: int, what: str) -> tuple[bytes | None, int]:
    if pos + L.INT32.size > end:
        raise CorruptRecordError(
            f"message ends before its {what} length", position=pos, check=Check.BAD_LENGTH
        )
    (n,) = L.INT32.unpack_from(buf, pos)
    pos += L.INT32.size
    if n < 0:
        return None, pos
    if n > end - pos:
        raise CorruptRecordError(
            f"{what} length {n} runs past the message", position=pos - L.INT32.size, check=Check.BAD_LENGTH
        )
    return buf[pos : pos + n], pos + n


class Message:
    """One decoded v0/v1 message, before its offset is made absolute."""

    __slots__ = (
        "attributes",
        "compression",
        "crc",
        "crc_valid",
        "key",
        "magic",
        "offset",
        "size",
        "timestamp",
        "value",
    )

    def __init__(self, buf: bytes, pos: int, end: int) -> None:
        """Decode the message whose entry is ``buf[pos:end]`` (offset and size fields included)."""
        if end - pos < L.LEGACY_MIN_ENTRY:
            raise CorruptRecordError(
                "message is shorter than the smallest v0 message", position=pos, check=Check.BAD_LENGTH
            )
        self.offset, size, self.crc, self.magic, self.attributes = L.LEGACY_HEADER.unpack_from(buf, pos)
        self.size = L.LOG_OVERHEAD + size
        if self.magic not in (0, 1):
            raise CorruptRecordError(
                f"message has magic {self.magic}, expected 0 or 1", position=pos, check=Check.BAD_MAGIC,
                found=self.magic,
            )  # fmt: skip
        if size < L.LEGACY_MIN_SIZE[self.magic]:
            raise CorruptRecordError(
                f"message size {size} is below the v{self.magic} minimum", position=pos, check=Check.BAD_LENGTH,
                found=size,
            )  # fmt: skip
        self.crc_valid = crc32(memoryview(buf)[pos + L.MAGIC_OFFSET : end]) == self.crc
        self.compression = _CODECS[self.attributes & L.COMPRESSION_MASK]
        p = pos + L.LEGACY_HEADER_SIZE
        self.timestamp = -1
        if self.magic == 1:
            (self.timestamp,) = L.INT64.unpack_from(buf, pos + L.LEGACY_V1_TIMESTAMP_OFFSET)
            p += L.INT64.size
        self.key, p = _read_bytes(buf, p, end, "key")
        self.value, p = _read_bytes(buf, p, end, "value")
        if p != end:
            raise CorruptRecordError(
                f"message has {end - p} bytes after its value", position=pos, check=Check.BAD_LENGTH
            )

    @property
    def timestamp_type(self) -> TimestampType:
        if self.magic == 0:
            return TimestampType.NO_TIMESTAMP_TYPE
        if self.attributes & L.TIMESTAMP_TYPE_BIT:
            return TimestampType.LOG_APPEND_TIME
        return TimestampType.CREATE_TIME

    def record(self, offset: int, timestamp: int, stored_timestamp: int | None = None) -> Record:
        return new_record(
            offset, timestamp, self.key, self.value, _EMPTY, -1, self.size, self.crc, self.crc_valid,
            stored_timestamp=stored_timestamp,
        )  # fmt: skip

    def batch(
        self, file: str, file_pos: int, base_offset: int, records: tuple[Record, ...] | None, count: int
    ) -> Batch:
        """This message as a Batch: the outer message of a v0/v1 log entry and its record(s)."""
        return Batch(
            file,
            file_pos,
            base_offset,
            self.offset,
            self.magic,
            self.attributes,
            self.compression,
            self.timestamp_type,
            self.timestamp,
            self.timestamp,
            -1,
            -1,
            -1,
            -1,
            -1,
            False,
            False,
            None,
            self.crc,
            self.crc_valid,
            self.size,
            count,
            records,
        )


WRAPPER_CODECS = (Compression.GZIP, Compression.SNAPPY, Compression.LZ4)  # a v0/v1 wrapper's codecs


def sound_wrapper(
    buf: bytes, pos: int, end: int, limit: int, decompress: Callable[[Compression, bytes, int], bytes]
) -> tuple[Message, bytes] | None:
    """The compressed v0/v1 wrapper message ``buf[pos:end]`` and its value inflated by ``decompress``
    (within ``limit`` bytes), when it reads whole, its CRC holds and its value is one a wrapper may
    carry; None for anything else, which the decoder reads the long way and reports."""
    try:
        msg = Message(buf, pos, end)
    except CorruptRecordError:
        return None
    if not msg.crc_valid or msg.value is None or msg.compression not in WRAPPER_CODECS:
        return None
    try:
        return msg, decompress(msg.compression, msg.value, limit)
    except CorruptRecordError:
        return None


def inner_messages(data: bytes, magic: int) -> Iterator[Message]:
    """The messages of a decompressed wrapper's set (``DeepRecordsIterator``), in order; the first that
    is not whole, of the wrapper's ``magic`` and uncompressed raises."""
    pos, size_all = 0, len(data)
    while pos < size_all:
        if size_all - pos < L.LOG_OVERHEAD:
            raise CorruptRecordError(
                f"{size_all - pos} stray bytes after the last inner message", check=Check.WRAPPER
            )
        end = pos + L.LOG_OVERHEAD + L.LOG_ENTRY.unpack_from(data, pos)[1]
        if end < pos + L.LOG_OVERHEAD or end > size_all:
            raise CorruptRecordError(
                f"inner message at byte {pos} of the payload runs past its end", check=Check.INNER_MESSAGE
            )
        try:
            msg = Message(data, pos, end)
        except CorruptRecordError as exc:
            bad_magic = exc.check == Check.BAD_MAGIC
            raise CorruptRecordError(
                f"inner message at byte {pos} of the payload: {exc.reason}",
                check=Check.INNER_MAGIC if bad_magic else Check.INNER_MESSAGE, found=exc.found if bad_magic else None,
            ) from None  # fmt: skip
        if msg.magic != magic:
            raise CorruptRecordError(
                f"inner message has magic {msg.magic} in a v{magic} wrapper", check=Check.INNER_MAGIC,
                expected=magic, found=msg.magic,
            )  # fmt: skip
        if msg.attributes & L.COMPRESSION_MASK:
            raise CorruptRecordError("inner message is itself compressed", check=Check.CODEC)
        yield msg
        pos = end


def inner_base(magic: int, wrapper_offset: int, last_inner: int) -> tuple[int, bool]:
    """(what to add to each inner offset, whether the wrapper's offset is sound): v0 inner offsets are
    absolute; v1 ones relative, the wrapper's offset the last one's (a wrapper offset of 0: base 0);
    below the last inner one (Kafka rejects it) the base is 0, so the records show."""
    if magic == 0 or wrapper_offset == 0:
        return 0, True
    return max(0, wrapper_offset - last_inner), wrapper_offset >= last_inner


def encode_message(
    offset: int, magic: int, attributes: int, timestamp: int, key: bytes | None, value: bytes | None
) -> bytes:
    """One v0/v1 message with its log overhead and CRC-32 (``LegacyRecord.write``); the timestamp is
    written for magic 1 only."""
    body = bytearray((magic, attributes))
    if magic == 1:
        body += L.INT64.pack(timestamp)
    for field in (key, value):
        if field is None:
            body += L.INT32.pack(-1)
        else:
            body += L.INT32.pack(len(field))
            body += field
    return L.LOG_ENTRY.pack(offset, 4 + len(body)) + L.UINT32.pack(crc32(body)) + bytes(body)
