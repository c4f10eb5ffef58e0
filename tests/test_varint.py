"""Zigzag varint/varlong vectors (Kafka's ByteUtils), padded so that the returned position is checked.

Every vector is decoded at a non-zero position with junk on both sides. The trailing junk starts
with a continuation byte (0x80), so a decoder that read one byte too far would return a different
value or position. kafka-python's ``kafka.record.util`` is the independent oracle.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.record.util import decode_varint as kp_decode_varint
from kafka.record.util import encode_varint as kp_encode_varint
from kafka.record.util import size_of_varint as kp_size_of_varint

from kafka_dump.errors import CorruptRecordError
from kafka_dump.wire.varint import decode_varint, decode_varlong, encode_varint, varint_size

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
PREFIX = b"\xaa\xff\x80"
SUFFIX = b"\x80\xcc\x01"


def kp_encode(value: int) -> bytes:
    """kafka-python writes through a per-byte callback; collect its bytes."""
    out = bytearray()
    kp_encode_varint(value, out.append)
    return bytes(out)


# (value, encoding): spec vectors, zigzag as in Kafka's ByteUtilsTest.
VECTORS_32 = [
    (0, "00"),
    (-1, "01"),
    (1, "02"),
    (-2, "03"),
    (63, "7e"),
    (-64, "7f"),
    (64, "8001"),
    (-65, "8101"),
    (300, "d804"),
    (8191, "fe7f"),
    (-8192, "ff7f"),
    (8192, "808001"),
    (2**20, "80808001"),
    (2**27, "8080808001"),  # first 5-byte value
    (INT32_MAX, "feffffff0f"),
    (INT32_MIN, "ffffffff0f"),
]
VECTORS_64 = [
    *VECTORS_32,
    (2**31, "8080808010"),
    (-(2**31) - 1, "8180808010"),
    (2**34, "808080808001"),
    (2**62 - 1, "feffffffffffffff7f"),  # largest 9-byte value
    (2**62, "80808080808080808001"),
    (INT64_MAX, "feffffffffffffffff01"),
    (INT64_MIN, "ffffffffffffffffff01"),
]


def _padded(encoded: bytes) -> bytes:
    return PREFIX + encoded + SUFFIX


@pytest.mark.parametrize(("value", "hexed"), VECTORS_32)
def test_varint_vectors(value: int, hexed: str) -> None:
    encoded = bytes.fromhex(hexed)
    assert encode_varint(value) == encoded
    assert varint_size(value) == len(encoded)
    buf = _padded(encoded)
    assert decode_varint(buf, len(PREFIX)) == (value, len(PREFIX) + len(encoded))
    assert decode_varint(memoryview(buf), len(PREFIX)) == (value, len(PREFIX) + len(encoded))
    # At the very end of the buffer too (no trailing byte to lean on).
    assert decode_varint(PREFIX + encoded, len(PREFIX)) == (value, len(PREFIX) + len(encoded))


@pytest.mark.parametrize(("value", "hexed"), VECTORS_64)
def test_varlong_vectors(value: int, hexed: str) -> None:
    encoded = bytes.fromhex(hexed)
    assert encode_varint(value) == encoded
    assert varint_size(value) == len(encoded)
    buf = _padded(encoded)
    assert decode_varlong(buf, len(PREFIX)) == (value, len(PREFIX) + len(encoded))
    assert decode_varlong(memoryview(buf), len(PREFIX)) == (value, len(PREFIX) + len(encoded))
    assert decode_varlong(PREFIX + encoded, len(PREFIX)) == (value, len(PREFIX) + len(encoded))


def test_size_limits() -> None:
    assert max(varint_size(v) for v in (INT32_MIN, INT32_MAX)) == 5
    assert max(varint_size(v) for v in (INT64_MIN, INT64_MAX)) == 10
    assert len(encode_varint(INT32_MAX)) == 5
    assert len(encode_varint(INT64_MIN)) == 10


def test_consecutive_values_share_a_buffer() -> None:
    values = [v for v, _ in VECTORS_64]
    buf = PREFIX + b"".join(encode_varint(v) for v in values) + SUFFIX
    pos = len(PREFIX)
    for v in values:
        got, pos = decode_varlong(buf, pos)
        assert got == v
    assert buf[pos:] == SUFFIX


@pytest.mark.parametrize(
    "hexed",
    [
        "808080808000",  # 6 bytes (a zero written too long)
        "ffffffffff0f",  # 6 bytes
        "ffffffffffffffffff01",  # a 10-byte varlong is too long for a varint
        "8080808080",  # 5 continuation bytes, data continues below with SUFFIX
    ],
)
def test_overlong_varint_raises(hexed: str) -> None:
    buf = _padded(bytes.fromhex(hexed))
    with pytest.raises(CorruptRecordError) as info:
        decode_varint(buf, len(PREFIX))
    assert info.value.position is not None
    assert len(PREFIX) <= info.value.position <= len(buf)


@pytest.mark.parametrize(
    "hexed",
    [
        "8080808080808080808000",  # 11 bytes
        "ffffffffffffffffffff01",  # 11 bytes
        "80808080808080808080",  # 10 continuation bytes, then SUFFIX
    ],
)
def test_overlong_varlong_raises(hexed: str) -> None:
    buf = _padded(bytes.fromhex(hexed))
    with pytest.raises(CorruptRecordError) as info:
        decode_varlong(buf, len(PREFIX))
    assert info.value.position is not None
    assert len(PREFIX) <= info.value.position <= len(buf)


def java_read(buf: bytes, pos: int, bits: int) -> tuple[int, int]:
    """Kafka's ``ByteUtils.readVarint``/``readVarlong`` transcribed, with Java's int/long wrap-around.

    ``while (((b = buffer.get()) & 0x80) != 0) { value |= (b & 0x7f) << i; i += 7; if (i > 28|63)
    throw illegalVarintException(value); } value |= b << i; return (value >>> 1) ^ -(value & 1);``
    Raises ValueError where Java throws (an over-long varint, or BufferUnderflowException).
    """
    mask = (1 << bits) - 1
    value = i = 0
    while True:
        if pos >= len(buf):
            raise ValueError("underflow")
        b = buf[pos]
        pos += 1
        if not b & 0x80:
            break
        value = (value | ((b & 0x7F) << i)) & mask
        i += 7
        if i > (28 if bits == 32 else 63):
            raise ValueError("illegal varint")
    value = (value | (b << i)) & mask
    return (value >> 1) ^ -(value & 1), pos


@pytest.mark.parametrize(
    ("decode", "bits", "hexed", "expected"),
    [
        # Bits past 32 (64) are dropped, as Java's shifts drop them (not an error).
        (decode_varint, 32, "8080808010", 0),  # raw 2**32
        (decode_varint, 32, "ffffffff1f", INT32_MIN),
        (decode_varint, 32, "feffffff7f", INT32_MAX),
        (decode_varint, 32, "ffffffff7f", INT32_MIN),
        (decode_varlong, 64, "ffffffffffffffffff03", INT64_MIN),
        (decode_varlong, 64, "feffffffffffffffff7f", INT64_MAX),
        (decode_varlong, 64, "80808080808080808002", 0),  # raw 2**64
    ],
)
def test_bits_past_the_type_are_dropped_as_in_java(decode, bits: int, hexed: str, expected: int) -> None:  # type: ignore[no-untyped-def]
    encoded = bytes.fromhex(hexed)
    assert java_read(encoded, 0, bits) == (expected, len(encoded))
    assert decode(_padded(encoded), len(PREFIX)) == (expected, len(PREFIX) + len(encoded))


@pytest.mark.parametrize("decode", [decode_varint, decode_varlong])
@pytest.mark.parametrize("hexed", ["", "80", "ff", "8080", "ffffff", "80808080"])
def test_truncated_raises(decode, hexed: str) -> None:  # type: ignore[no-untyped-def]
    buf = PREFIX + bytes.fromhex(hexed)
    with pytest.raises(CorruptRecordError) as info:
        decode(buf, len(PREFIX))
    assert info.value.position is not None
    assert len(PREFIX) <= info.value.position <= len(buf)


@pytest.mark.parametrize("decode", [decode_varint, decode_varlong])
def test_position_past_the_end_raises(decode) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(CorruptRecordError):
        decode(b"\x02\x04", 2)
    with pytest.raises(CorruptRecordError):
        decode(b"\x02\x04", 7)


# --- properties ------------------------------------------------------------------------------------

int64s = st.integers(INT64_MIN, INT64_MAX)
int32s = st.integers(INT32_MIN, INT32_MAX)


@settings(max_examples=300, deadline=None)
@given(int64s, st.binary(max_size=4), st.binary(max_size=4))
def test_varlong_round_trip(value: int, before: bytes, after: bytes) -> None:
    encoded = encode_varint(value)
    assert len(encoded) == varint_size(value) <= 10
    assert decode_varlong(before + encoded + after, len(before)) == (value, len(before) + len(encoded))


@settings(max_examples=300, deadline=None)
@given(int32s, st.binary(max_size=4), st.binary(max_size=4))
def test_varint_round_trip(value: int, before: bytes, after: bytes) -> None:
    encoded = encode_varint(value)
    assert len(encoded) <= 5
    assert decode_varint(before + encoded + after, len(before)) == (value, len(before) + len(encoded))


@settings(max_examples=300, deadline=None)
@given(int64s)
def test_encode_matches_kafka_python(value: int) -> None:
    ours = encode_varint(value)
    assert ours == kp_encode(value)
    assert varint_size(value) == kp_size_of_varint(value)
    assert kp_decode_varint(ours + b"\x80", 0) == (value, len(ours))


@pytest.mark.parametrize("value", [v for v, _ in VECTORS_64])
def test_vectors_match_kafka_python(value: int) -> None:
    theirs = kp_encode(value)
    assert decode_varlong(PREFIX + theirs + SUFFIX, len(PREFIX)) == (value, len(PREFIX) + len(theirs))
    assert kp_decode_varint(PREFIX + encode_varint(value) + SUFFIX, len(PREFIX)) == (
        value,
        len(PREFIX) + len(theirs),
    )


_long_varints = st.builds(
    lambda cont, last, tail: bytes(cont) + bytes([last]) + tail,
    st.lists(st.integers(0x80, 0xFF), max_size=11),
    st.integers(0, 0x7F),
    st.binary(max_size=2),
)


@settings(max_examples=500, deadline=None)
@given(st.one_of(st.binary(max_size=12), _long_varints), st.integers(0, 3))
def test_arbitrary_bytes_match_java(data: bytes, pos: int) -> None:
    """On any bytes, our decoders agree with Java's readVarint/readVarlong: same value, or both refuse."""
    for decode, max_bytes, bits in ((decode_varint, 5, 32), (decode_varlong, 10, 64)):
        try:
            expected = java_read(data, pos, bits)
        except ValueError:
            with pytest.raises(CorruptRecordError):
                decode(data, pos)
            continue
        value, end = decode(data, pos)
        assert (value, end) == expected
        assert pos < end <= min(len(data), pos + max_bytes)
        assert -(2 ** (bits - 1)) <= value < 2 ** (bits - 1)


@pytest.mark.parametrize("decode", [decode_varint, decode_varlong])
def test_limit_bounds_the_read(decode) -> None:  # type: ignore[no-untyped-def]
    """With ``limit``, a varint must end before it even when the buffer goes on."""
    buf = PREFIX + bytes.fromhex("d804") + SUFFIX
    assert decode(buf, len(PREFIX), len(PREFIX) + 2) == (300, len(PREFIX) + 2)
    with pytest.raises(CorruptRecordError) as info:
        decode(buf, len(PREFIX), len(PREFIX) + 1)
    assert info.value.position == len(PREFIX)
    with pytest.raises(CorruptRecordError):
        decode(buf, len(PREFIX), len(PREFIX))
