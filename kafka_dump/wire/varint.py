"""ZigZag varints as Kafka writes them in v2 records (``ByteUtils.readVarint``/``readVarlong``)."""

from __future__ import annotations

from kafka_dump.errors import CorruptRecordError
from kafka_dump.model import Check
from kafka_dump.wire.layout import VARINT_MAX_BYTES, VARLONG_MAX_BYTES

_U32 = 0xFFFFFFFF
_U64 = 0xFFFFFFFFFFFFFFFF


def read_zigzag(buf: bytes | memoryview, pos: int, limit: int, max_bytes: int) -> tuple[int, int]:
    """(value, next position) of a zigzag varint at ``pos`` that must end before ``limit``: at most
    ``max_bytes`` bytes (5 or 10; more is corrupt input), bits past 32 (64) dropped as Java's shifts do."""
    if pos < limit:
        raw = buf[pos]
        if raw < 0x80:  # one byte, the common case
            return (raw >> 1) ^ -(raw & 1), pos + 1
    raw = shift = 0
    start = pos
    while True:
        if pos >= limit:
            raise CorruptRecordError(
                "varint runs past the end of its record", position=start, check=Check.VARINT
            )
        if pos - start >= max_bytes:
            raise CorruptRecordError(
                f"varint longer than {max_bytes} bytes", position=start, check=Check.VARINT
            )
        b = buf[pos]
        pos += 1
        raw |= (b & 0x7F) << shift
        if b < 0x80:
            break
        shift += 7
    raw &= _U32 if max_bytes == VARINT_MAX_BYTES else _U64
    return (raw >> 1) ^ -(raw & 1), pos


def decode_varint(buf: bytes | memoryview, pos: int, limit: int | None = None) -> tuple[int, int]:
    """Read a zigzag varint (int32) at ``pos``; return (value, position after it)."""
    return read_zigzag(buf, pos, len(buf) if limit is None else limit, VARINT_MAX_BYTES)


def decode_varlong(buf: bytes | memoryview, pos: int, limit: int | None = None) -> tuple[int, int]:
    """Read a zigzag varlong (int64) at ``pos``; return (value, position after it)."""
    return read_zigzag(buf, pos, len(buf) if limit is None else limit, VARLONG_MAX_BYTES)


def encode_varint(value: int) -> bytes:
    """Encode a signed int64 as a zigzag varint (the same bytes serve varint and varlong)."""
    raw = ((value << 1) ^ (value >> 63)) & 0xFFFFFFFFFFFFFFFF
    out = bytearray()
    while raw >= 0x80:
        out.append((raw & 0x7F) | 0x80)
        raw >>= 7
    out.append(raw)
    return bytes(out)


def varint_size(value: int) -> int:
    """How many bytes ``encode_varint(value)`` takes."""
    raw = ((value << 1) ^ (value >> 63)) & 0xFFFFFFFFFFFFFFFF
    return max(1, (raw.bit_length() + 6) // 7)
