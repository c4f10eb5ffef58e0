"""ZigZag varints as Kafka writes them in v2 records (``ByteUtils.readVarint``/``readVarlong``).

A varint takes at most 5 bytes and a varlong at most 10; more is corrupt input, not a longer number.
"""

from __future__ import annotations

from kafka_dump.errors import CorruptRecordError

VARINT_MAX_BYTES = 5
VARLONG_MAX_BYTES = 10


def _read_unsigned(buf: bytes | memoryview, pos: int, max_bytes: int) -> tuple[int, int]:
    result = 0
    shift = 0
    end = min(len(buf), pos + max_bytes)
    start = pos
    while pos < end:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7
    if pos - start >= max_bytes:
        raise CorruptRecordError(f"varint longer than {max_bytes} bytes", position=start)
    raise CorruptRecordError("varint runs past the end of the data", position=start)


def decode_varint(buf: bytes | memoryview, pos: int) -> tuple[int, int]:
    """Read a zigzag varint (int32) at ``pos``; return (value, position after it)."""
    raw, pos = _read_unsigned(buf, pos, VARINT_MAX_BYTES)
    if raw >> 32:
        raise CorruptRecordError("varint does not fit in 32 bits", position=pos)
    return (raw >> 1) ^ -(raw & 1), pos


def decode_varlong(buf: bytes | memoryview, pos: int) -> tuple[int, int]:
    """Read a zigzag varlong (int64) at ``pos``; return (value, position after it)."""
    raw, pos = _read_unsigned(buf, pos, VARLONG_MAX_BYTES)
    if raw >> 64:
        raise CorruptRecordError("varlong does not fit in 64 bits", position=pos)
    return (raw >> 1) ^ -(raw & 1), pos


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
    n = 1
    while raw >= 0x80:
        raw >>= 7
        n += 1
    return n
