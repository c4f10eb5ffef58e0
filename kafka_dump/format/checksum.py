"""The two checksums of Kafka's formats: CRC-32 (v0/v1 messages) and CRC-32C (v2 batches)."""

from __future__ import annotations

import zlib

import crc32c as _crc32c


def crc32(data: bytes | bytearray | memoryview) -> int:
    """IEEE CRC-32, as ``LegacyRecord.computeChecksum`` (unsigned)."""
    return zlib.crc32(data) & 0xFFFFFFFF


def crc32c(data: bytes | bytearray | memoryview, value: int = 0) -> int:
    """Castagnoli CRC-32C, as ``DefaultRecordBatch.computeChecksum`` (unsigned); ``value`` continues one."""
    return int(_crc32c.crc32c(data, value)) & 0xFFFFFFFF
