"""A validating walk over the records of a v2 batch that builds no ``Record``: counts, sizes, first error.

``verify-crc --deep`` needs to know that every record is well framed and in order, and ``stats``
needs counts and sizes; neither needs a Python object per record. The walk over the (decompressed)
records is ``_walk_pure.walk_v2_records``, which binds its compiled twin (``native/walk.c``);
``walk_batch`` here decompresses a batch and walks it. ``_walk_pure.py`` walks whole entries for
``verify-crc`` too (``walk_entries``).
"""

from __future__ import annotations

from typing import NamedTuple

from kafka_dump import wire as _twins
from kafka_dump.errors import CorruptRecordError
from kafka_dump.model import Batch
from kafka_dump.wire.codecs import decompress
from kafka_dump.wire.v2 import read_records


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
    """Walk the records of the v2 batch whose entry starts at ``buf[pos]`` (file position ``file_pos``),
    its errors placed as ``v2.decode_batch`` places them."""
    count = batch.recordCount if batch.recordCount is not None else 0
    last_delta = batch.lastOffset - batch.baseOffset

    def read(data: bytes, start: int, end: int) -> tuple[RecordWalk, CorruptRecordError | None]:
        walk = RecordWalk._make(_twins.walk_v2_records(data, start, end, count, last_delta))
        if walk.error is None:
            return walk, None
        from kafka_dump.wire import _walk_pure  # on an error only: the compiled walk's users need it not

        # The pure walk raises the error again, with the check it broke.
        error = _walk_pure.walk_error(data, start, end, count, last_delta)
        return walk, error or CorruptRecordError(walk.error, position=walk.errorPosition)

    return read_records(
        buf, pos, pos + batch.sizeInBytes, file_pos, batch.compression, count, max_batch_bytes, decompress,
        read, _EMPTY_WALK,
    )  # fmt: skip
