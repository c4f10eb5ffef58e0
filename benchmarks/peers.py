"""The peers, kafka-python and aiokafka, adapted to the benchmark's loops.

Each adapter does what kdump does in the same case: iterate every record touching every field,
build v2 batches from decoded records, or convert a v1 file to v2. Both libraries are imported lazily,
so a missing one is a skipped line, not a crash.
"""

from __future__ import annotations

import importlib.machinery
import os
import struct
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HUGE = 1 << 30  # builder "batch_size": never let a builder refuse an append

# One batch to encode: (baseOffset, [(offsetDelta, timestamp, key, value, [(headerKey, headerValue)])]).
PlainBatch = tuple[int, list[tuple[int, int, bytes | None, bytes | None, list[tuple[str, bytes | None]]]]]


def kafka_python() -> tuple[Any, str]:
    """kafka-python's MemoryRecords (pure Python), or None, and a description."""
    try:
        import kafka
        from kafka.record import MemoryRecords
    except Exception as e:
        return None, f"kafka-python not importable ({type(e).__name__}: {e})"
    return MemoryRecords, f"kafka-python {kafka.__version__}"


def aiokafka() -> tuple[Any, str]:
    """aiokafka's compiled MemoryRecords class (the pure one, loudly, if not built), and which it is."""
    try:
        import aiokafka
    except Exception as e:
        return None, f"aiokafka not importable ({type(e).__name__}: {e})"
    try:
        from aiokafka.record._crecords import MemoryRecords
        from aiokafka.record._crecords import memory_records as mod

        origin = mod.__file__ or "?"
        compiled = origin.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))
        how = f"compiled: {Path(origin).name}" if compiled else f"NOT compiled: {origin}"
    except ImportError as e:
        from aiokafka.record.memory_records import _MemoryRecordsPy as MemoryRecords

        how = f"PURE PYTHON fallback, _crecords missing ({e})"
    return MemoryRecords, f"aiokafka {aiokafka.__version__} ({how})"


def touch_all(mr: Any) -> int:
    """The peers' loop over one MemoryRecords: every batch, every record, every field."""
    n = 0
    while (b := mr.next_batch()) is not None:
        for r in b:
            r.offset
            r.timestamp
            r.key
            r.value
            for hk, hv in r.headers:
                hk
                hv
            n += 1
    return n


def iterate(records_cls: Any, path: str) -> int:
    """Read the file, wrap it whole in one MemoryRecords, touch everything."""
    return touch_all(records_cls(Path(path).read_bytes()))


def magic_runs(data: bytes) -> list[tuple[int, int]]:
    """(start, end) of each maximal run of log entries sharing one magic byte."""
    runs: list[tuple[int, int]] = []
    pos = start = 0
    current = -1
    end = len(data)
    unpack = struct.unpack_from
    while pos + 17 <= end:
        magic = data[pos + 16]
        if magic != current:
            if current != -1:
                runs.append((start, pos))
            start, current = pos, magic
        pos += 12 + unpack(">i", data, pos + 8)[0]
    runs.append((start, end))
    return runs


def iterate_by_magic_runs(records_cls: Any, path: str) -> int:
    """Like `iterate`, but one MemoryRecords per run of equal magic (scan and copies timed).

    aiokafka's compiled MemoryRecords picks the batch class from the first entry's magic and keeps it
    for the whole buffer (a fetch response never mixes magics), so on a mixed segment it must be fed
    one homogeneous slice at a time.
    """
    data = Path(path).read_bytes()
    return sum(touch_all(records_cls(data[s:e])) for s, e in magic_runs(data))


def plain_batches(path: str) -> list[PlainBatch]:
    """Every batch of a file as plain tuples, read by kafka-python: the input of the encode case."""
    from kafka.record import MemoryRecords

    out: list[PlainBatch] = []
    mr = MemoryRecords(Path(path).read_bytes())
    while (b := mr.next_batch()) is not None:
        recs = list(b)
        base = recs[0].offset
        out.append((base, [(r.offset - base, r.timestamp, r.key, r.value, list(r.headers)) for r in recs]))
    return out


def build_v2(base: int, records: Sequence[Any], codec: int) -> bytes:
    """One v2 batch with kafka-python's DefaultRecordBatchBuilder, baseOffset patched in."""
    from kafka.record.default_records import DefaultRecordBatchBuilder

    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=codec,
        is_transactional=False,
        producer_id=-1,
        producer_epoch=-1,
        base_sequence=-1,
        batch_size=HUGE,
    )
    for delta, ts, key, value, headers in records:
        builder.append(delta, ts, key, value, headers)
    buf = builder.build()
    struct.pack_into(">q", buf, 0, base)  # outside the CRC, which starts at attributes
    return bytes(buf)


def encode_all(batches: Sequence[PlainBatch], codec: int) -> int:
    """Encode every batch; the number of records encoded."""
    n = 0
    for base, records in batches:
        build_v2(base, records, codec)
        n += len(records)
    return n


def convert_to_v2(src: str, dst: str, codec: int) -> int:
    """kdump convert's job done with kafka-python: read every entry, write one v2 batch per entry.

    Offsets, timestamps, keys and values are kept; the output is written to a temporary file, fsynced
    and renamed, as kdump does. Returns the number of records written.
    """
    from kafka.record import MemoryRecords

    n = 0
    tmp = dst + ".tmp"
    mr = MemoryRecords(Path(src).read_bytes())
    with open(tmp, "wb") as out:
        while (b := mr.next_batch()) is not None:
            recs = list(b)
            base = recs[0].offset
            out.write(
                build_v2(base, [(r.offset - base, r.timestamp, r.key, r.value, []) for r in recs], codec)
            )
            n += len(recs)
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, dst)
    return n
