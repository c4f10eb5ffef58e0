"""A validating walk over the records of a v2 batch that builds no ``Record``: counts, sizes, first error.

``verify-crc --deep`` needs to know that every record is well framed and in order, and ``stats``
needs counts and sizes; neither needs a Python object per record. The walk over the (decompressed)
records is ``_walk_pure.walk_v2_records``, which binds its compiled twin (``native/_walk.c``);
``walk_batch`` here decompresses a batch and walks it. ``_walk_pure.py`` walks whole entries for
``verify-crc`` too (``walk_entries``).
"""

from __future__ import annotations

from typing import NamedTuple

from kafka_dump import wire as _twins
from kafka_dump.errors import CorruptRecordError
from kafka_dump.model import Batch, Compression
from kafka_dump.wire import layout as L
from kafka_dump.wire.codecs import decompress


class RecordWalk(NamedTuple):
    """What a walk over one batch's records found (the whole records before any error).

    ``headerBytes`` counts header keys and non-null header values; ``maxTimestampDelta`` is None when
    no record was walked. ``error`` is the first problem's reason (None when all is well) and
    ``errorPosition`` its position in the walked buffer (a record's start, or the records' start
    for a count mismatch).
    """

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
    """Walk the records of the v2 batch whose entry starts at ``buf[pos]`` (file position ``file_pos``).

    Errors are placed as ``v2.decode_batch`` places them: in the file for uncompressed records, at
    the batch (naming the byte of the decompressed records) otherwise.
    """
    count = batch.recordCount if batch.recordCount is not None else 0
    if count < 0:
        return _EMPTY_WALK, CorruptRecordError(f"invalid record count {count}", position=file_pos)
    compression = batch.compression
    if compression is Compression.UNKNOWN:
        codec_id = batch.attributes & L.COMPRESSION_MASK
        return _EMPTY_WALK, CorruptRecordError(f"unknown compression codec id {codec_id}", position=file_pos)
    start = pos + L.V2_HEADER_SIZE
    end = pos + batch.sizeInBytes
    last_delta = batch.lastOffset - batch.baseOffset
    if compression is Compression.NONE:
        walk = RecordWalk._make(_twins.walk_v2_records(buf, start, end, count, last_delta))
        if walk.error is None:
            return walk, None
        return walk, CorruptRecordError(walk.error, position=walk.errorPosition - pos + file_pos)
    try:
        data = decompress(compression, memoryview(buf)[start:end], max_batch_bytes)
    except CorruptRecordError as exc:
        return _EMPTY_WALK, exc.with_location(position=file_pos)
    walk = RecordWalk._make(_twins.walk_v2_records(data, 0, len(data), count, last_delta))
    if walk.error is None:
        return walk, None
    reason = f"{walk.error} (at byte {walk.errorPosition} of the decompressed records)"
    return walk, CorruptRecordError(reason, position=file_pos)
