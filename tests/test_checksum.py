"""CRC-32 (v0/v1) and CRC-32C (v2) vectors, real broker-written entries, and kafka-python as oracle."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.record.util import calc_crc32, calc_crc32c

from kafka_dump.wire.checksum import crc32, crc32c

JAVA = Path(__file__).resolve().parents[1].parent / "shared" / "fixtures-real" / "kafka-3.8.0-java"

CHECK = b"123456789"  # the standard check input of the CRC catalogue


def test_crc32_check_value() -> None:
    assert crc32(CHECK) == 0xCBF43926


def test_crc32c_check_value() -> None:
    assert crc32c(CHECK) == 0xE3069283


def test_empty_input() -> None:
    assert crc32(b"") == 0
    assert crc32c(b"") == 0
    assert crc32(memoryview(b"")) == 0
    assert crc32c(memoryview(b"")) == 0


@pytest.mark.parametrize(
    ("data", "c32", "c32c"),
    [
        (b"a", 0xE8B7BE43, 0xC1D04330),
        (bytes(32), 0x190A55AD, 0x8A9136AA),  # RFC 3720 B.4: 32 bytes of zeros
        (b"\xff" * 32, 0xFF6CAB0B, 0x62A8AB43),  # RFC 3720 B.4: 32 bytes of 0xff
        (bytes(range(32)), 0x91267E8A, 0x46DD794E),  # RFC 3720 B.4: incrementing
        (bytes(range(31, -1, -1)), 0x9AB0EF72, 0x113FDB5C),  # RFC 3720 B.4: decrementing
    ],
)
def test_known_vectors(data: bytes, c32: int, c32c: int) -> None:
    assert crc32(data) == c32
    assert crc32c(data) == c32c


def test_results_are_unsigned() -> None:
    # High bit set in both results: never a negative Python int (Kafka stores them as uint32).
    assert crc32(CHECK) > 2**31
    assert crc32c(CHECK) > 2**31


def test_memoryview_slices_of_a_padded_buffer() -> None:
    buf = b"\x00junk" + CHECK + b"tail\xff"
    view = memoryview(buf)[5 : 5 + len(CHECK)]
    assert crc32(view) == 0xCBF43926
    assert crc32c(view) == 0xE3069283
    assert crc32c(bytearray(CHECK)) == 0xE3069283


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=4096), st.integers(0, 7))
def test_matches_kafka_python(data: bytes, skip: int) -> None:
    view = memoryview(data)[skip:]
    assert crc32c(view) == calc_crc32c(bytes(view))
    assert crc32(view) == calc_crc32(bytes(view)) == zlib.crc32(bytes(view)) & 0xFFFFFFFF


def _first_entry(name: str) -> bytes:
    path = JAVA / name
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    data = path.read_bytes()
    (size,) = struct.unpack_from(">i", data, 8)
    return data[: 12 + size]


def test_real_v2_batch_crc32c() -> None:
    """The stored CRC of a batch Kafka 3.8.0 wrote: CRC-32C over attributes..end, at entry byte 17."""
    entry = _first_entry("v2_none.log")
    assert entry[16] == 2
    (stored,) = struct.unpack_from(">I", entry, 17)
    assert crc32c(entry[21:]) == stored
    assert crc32c(memoryview(entry)[21:]) == stored
    assert calc_crc32c(memoryview(entry)[21:]) == stored
    # The CRC excludes baseOffset, length, partitionLeaderEpoch and magic, and the CRC field itself.
    assert crc32c(entry[17:]) != stored
    assert crc32c(entry[:21]) != stored


def test_real_v1_message_crc32() -> None:
    """The stored CRC of a v1 message Kafka 3.8.0 wrote: CRC-32 over magic..end, at entry byte 12."""
    entry = _first_entry("v1_none.log")
    assert entry[16] == 1
    (stored,) = struct.unpack_from(">I", entry, 12)
    assert crc32(entry[16:]) == stored
    assert calc_crc32(memoryview(entry)[16:]) == stored
