"""``kdump convert``'s fast path: a v1 CreateTime wrapper straight to v2 records, building no Record.

The common old segment is v1 wrappers of compressed inner messages. Written as v2 with the default
batching each wrapper becomes one v2 batch holding the same records (``analysis/convert.py``), so
its inner messages are transcoded to v2 records in one call of the encoder twin
(``v1_inner_to_v2``), and the batch written is checked against those inner messages where they
lie (``recheck.same_as_v1_inner``). Only an entry that the segment reader would read as one sound
batch with no problem is taken (outer and every inner CRC valid, every length in place, offsets
that fit one batch); anything else is read by ``read_segment`` as before, from that position, so
the items are the reader's, item for item, but for the Records not built.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import NamedTuple

from kafka_dump import format as _twins
from kafka_dump.errors import CorruptRecordError
from kafka_dump.format import layout as L
from kafka_dump.format.checksum import crc32
from kafka_dump.format.codecs import decompress
from kafka_dump.model import Batch, Compression, Problem
from kafka_dump.segment import CHUNK_SIZE, open_segment, read_segment, read_segment_runs

_WRAPPER_CODECS = frozenset((Compression.GZIP, Compression.SNAPPY, Compression.LZ4))
_SMALLEST = L.LOG_OVERHEAD + L.LEGACY_MIN_SIZE[1]
_KEY_AT = L.LEGACY_V1_TIMESTAMP_OFFSET + L.INT64.size  # the key's length, after the timestamp


class Transcoded(NamedTuple):
    """A v1 CreateTime wrapper of the input, its inner messages already v2 records."""

    file: str
    position: int
    sizeInBytes: int
    codec: Compression  # the wrapper's
    wrapperOffset: int
    inner: bytes  # the decompressed inner messages: what the output is checked against
    records: bytes  # the v2 records (no headers), deltas from baseOffset and baseTimestamp
    recordCount: int
    baseOffset: int
    lastOffset: int
    baseTimestamp: int
    maxTimestamp: int


Item = Batch | Problem | Transcoded


def transcode_at(
    name: str, fd: int, pos: int, size: int, max_batch_bytes: int, max_records: int
) -> Transcoded | None:
    """The entry at byte ``pos`` of the file ``fd`` transcoded, when it is a sound v1 CreateTime
    wrapper; else None. Read with ``pread``: only the entry is in memory, never the file."""
    if size - pos < _SMALLEST:
        return None
    head = os.pread(fd, _SMALLEST, pos)
    if len(head) < _SMALLEST:
        return None
    offset, length, crc, magic, attributes = L.LEGACY_HEADER.unpack_from(head)
    entry = L.LOG_OVERHEAD + length
    if (
        magic != 1
        or length < L.LEGACY_MIN_SIZE[1]
        or entry > size - pos
        or entry > max(max_batch_bytes, CHUNK_SIZE)
    ):
        return None
    codec = Compression(attributes & L.COMPRESSION_MASK)
    if attributes & ~L.COMPRESSION_MASK or codec not in _WRAPPER_CODECS:
        return None  # LogAppendTime, or bits the fast path does not vouch for: the reader decides
    key_len, value_len = L.INT32.unpack_from(head, _KEY_AT)[0], L.INT32.unpack_from(head, _KEY_AT + 4)[0]
    if key_len != -1 or value_len < 0 or _SMALLEST + value_len != entry:
        return None
    data = os.pread(fd, entry, pos)
    if len(data) != entry or data[:_SMALLEST] != head or crc32(memoryview(data)[L.MAGIC_OFFSET :]) != crc:
        return None
    try:
        inner = decompress(codec, memoryview(data)[_SMALLEST:], max_batch_bytes)
    except CorruptRecordError:
        return None
    found = _twins.v1_inner_to_v2(inner, offset, max_records)
    if found is None:
        return None
    return Transcoded(name, pos, entry, codec, offset, inner, *found)


def read_input(path: Path, *, fast: bool, max_batch_bytes: int, max_records_per_batch: int) -> Iterator[Item]:
    """``read_segment(path)``'s items, with every sound v1 CreateTime wrapper a Transcoded instead
    of a Batch when ``fast`` (and ``path`` a regular file, which the reader may open again)."""
    if not fast or not path.is_file():
        yield from read_segment(
            path, max_batch_bytes=max_batch_bytes, max_records_per_batch=max_records_per_batch
        )
        return
    name = str(path)
    f, size = open_segment(path)
    with f:
        fd = f.fileno()
        pos = 0
        runs: Iterator[Sequence[Batch | Problem]] | None = None
        while pos < size:
            done = transcode_at(name, fd, pos, size, max_batch_bytes, max_records_per_batch)
            if done is not None:
                runs = None
                yield done
                pos += done.sizeInBytes
                continue
            if runs is None:
                runs = read_segment_runs(
                    path,
                    start=pos,
                    max_batch_bytes=max_batch_bytes,
                    max_records_per_batch=max_records_per_batch,
                )
            run = next(runs, None)
            if run is None:
                return
            yield from run
            pos = max(_end(item) for item in run)


def _end(item: Batch | Problem) -> int:
    """Where the reader goes on after an item: past its entry (a problem covers what it skipped)."""
    if isinstance(item, Batch):
        return item.position + item.sizeInBytes
    return item.position + item.length
