"""Problems name the check that failed, with the numbers it compared; resync finds what a bad size hides.

Segments come from kafka-python's builders (``tests/batches.py``); damage is applied byte by byte.
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from kafka_dump.log.segment import read_segment
from kafka_dump.model import Batch, Check, Problem, ProblemKind
from kafka_dump.wire.checks import classify

from .batches import (
    GZIP,
    LZ4,
    default_records,
    entry_bounds,
    legacy_messages,
    legacy_records,
    raw_record,
    raw_v2_batch,
    v2_batch,
)


def _read(tmp_path: Path, data: bytes, *, with_records: bool = True) -> list[Batch | Problem]:
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(data)
    return list(read_segment(path, with_records=with_records))


def _segment() -> bytes:
    return (
        v2_batch(default_records(3), base_offset=0)
        + v2_batch(default_records(3, seed=1, compressible=True), codec=LZ4, base_offset=3)
        + legacy_messages(legacy_records(2), magic=1, base_offset=6)
        + legacy_messages(legacy_records(3, seed=1), magic=1, codec=GZIP, base_offset=8)
        + legacy_messages(legacy_records(2, seed=2), magic=0, base_offset=11)
    )


def test_crc_mismatch_names_stored_and_computed(tmp_path: Path) -> None:
    data = bytearray(_segment())
    data[100] ^= 0xFF  # inside the first batch's records
    problems = [x for x in _read(tmp_path, bytes(data)) if isinstance(x, Problem)]
    assert len(problems) == 1
    p = problems[0]
    assert (p.position, p.check) == (0, Check.CRC_MISMATCH)
    stored = struct.unpack_from(">I", data, 17)[0]
    assert p.expected == stored and p.found is not None and p.found != stored
    assert f"stored {stored}, computed {p.found}" in p.reason


def test_every_flipped_byte_names_a_check(tmp_path: Path) -> None:
    """No damage to any byte of any magic leaves a corrupt Problem without a named check."""
    seg = _segment()
    for at in range(len(seg)):
        data = bytearray(seg)
        data[at] ^= 0x5A
        for x in _read(tmp_path, bytes(data)):
            if isinstance(x, Problem):
                assert x.check != Check.OTHER, (at, x)
                if x.kind is ProblemKind.ZERO_TAIL:
                    assert x.check == Check.ZERO_TAIL
                elif x.kind is ProblemKind.PARTIAL_TAIL:
                    assert x.check == Check.PARTIAL_TAIL


def test_count_mismatch_expected_and_found(tmp_path: Path) -> None:
    records = raw_record() + raw_record(offset_delta=1)
    problems = [x for x in _read(tmp_path, raw_v2_batch(records, 3)) if isinstance(x, Problem)]
    assert [(p.check, p.expected, p.found) for p in problems] == [(Check.COUNT_MISMATCH, 3, 2)]


def test_bad_length_resync_names_the_size(tmp_path: Path) -> None:
    seg = _segment()
    (_, end), *_ = entry_bounds(seg)
    data = bytearray(seg)
    struct.pack_into(">i", data, 8, 3)  # a size below any message's
    items = _read(tmp_path, bytes(data))
    p = items[0]
    assert isinstance(p, Problem)
    assert (p.position, p.length, p.check, p.found) == (0, end, Check.BAD_LENGTH, 3)
    assert isinstance(items[1], Batch) and items[1].position == end


@pytest.mark.parametrize(
    ("reason", "expected"),
    [
        ("batch declares 5 records but holds 2", (Check.COUNT_MISMATCH, 5, 2)),
        ("3 bytes remain after the batch's 2 declared records", (Check.COUNT_MISMATCH, None, None)),
        ("invalid record count -1", (Check.COUNT_MISMATCH, None, -1)),
        ("varint longer than 5 bytes", (Check.VARINT, None, None)),
        (
            "varint runs past the end of its record (at byte 3 of the decompressed records)",
            (Check.VARINT, None, None),
        ),
        ("record length 99 does not fit the batch", (Check.RECORD_LENGTH, None, 99)),
        ("record declares 9 bytes but its fields take 8", (Check.RECORD_LENGTH, 9, 8)),
        ("invalid header count 7", (Check.HEADER_COUNT, None, 7)),
        ("header key is null", (Check.FIELD_LENGTH, None, None)),
        ("header value length 9 runs past the record", (Check.FIELD_LENGTH, None, 9)),
        ("key length 4 runs past the record", (Check.FIELD_LENGTH, None, 4)),
        ("control record key is shorter than 4 bytes (record at offset 3)", (Check.CONTROL, None, None)),
        ("end transaction marker has a negative version -1", (Check.CONTROL, None, None)),
        ("invalid wrapper compression type 4 for magic 1", (Check.CODEC, None, 4)),
        ("unknown compression codec id 6", (Check.CODEC, None, 6)),
        ("inner message is itself compressed", (Check.CODEC, None, None)),
        ("inner message has magic 0 in a v1 wrapper", (Check.INNER_MAGIC, 1, 0)),
        ("inner message at byte 0 of the payload runs past its end", (Check.INNER_MESSAGE, None, None)),
        ("wrapper offset 1 is below its last inner offset 4", (Check.INNER_OFFSET, 4, 1)),
        ("compressed wrapper message has a null value", (Check.WRAPPER, None, None)),
        ("3 stray bytes after the last inner message", (Check.WRAPPER, None, None)),
        ("decompressed size passes the limit of 100 bytes (--max-batch-bytes)", (Check.TOO_LARGE, 100, None)),
        ("gzip payload ends before its end of stream", (Check.DECOMPRESS, None, None)),
        ("zstd payload has no frame magic at byte 0", (Check.DECOMPRESS, None, None)),
        ("message has magic 7, expected 0 or 1", (Check.BAD_MAGIC, None, 7)),
        ("unknown magic 9", (Check.BAD_MAGIC, None, 9)),
        ("message size 3 is below the v1 minimum", (Check.BAD_LENGTH, None, 3)),
        ("value length 80 runs past the message", (Check.BAD_LENGTH, None, None)),
        ("v2 batch of 40 bytes is smaller than its header", (Check.BAD_LENGTH, None, 40)),
        ("record offset delta 1 is not above the previous one (2)", (Check.OFFSET_DELTA, None, 1)),
        ("record offset delta 5 is past the batch's lastOffsetDelta 3", (Check.OFFSET_DELTA, 3, 5)),
        ("something nobody wrote", (Check.OTHER, None, None)),
    ],
)
def test_classify(reason: str, expected: tuple[str, int | None, int | None]) -> None:
    assert classify(reason) == expected


# --- a damaged size field cannot swallow good batches ------------------------------------------------------


def _batches(n: int) -> list[bytes]:
    return [v2_batch(default_records(2, seed=i), base_offset=2 * i) for i in range(n)]


@pytest.mark.parametrize("grow", [1, 7, 100, 150])
def test_enlarged_size_with_bad_crc_keeps_the_batches_after_it(grow: int, tmp_path: Path) -> None:
    parts = _batches(5)
    victim = bytearray(parts[1])
    (size,) = struct.unpack_from(">i", victim, 8)
    struct.pack_into(">i", victim, 8, size + grow)  # still inside the file: it would swallow batch 2
    data = parts[0] + bytes(victim) + b"".join(parts[2:])
    items = _read(tmp_path, data)
    batches = [x for x in items if isinstance(x, Batch)]
    problems = [x for x in items if isinstance(x, Problem)]
    assert [b.baseOffset for b in batches] == [0, 4, 6, 8]
    assert all(b.crcValid for b in batches)
    start = len(parts[0])
    assert [(p.position, p.length, p.check) for p in problems] == [(start, len(victim), Check.CRC_MISMATCH)]
    assert "inside the" in problems[0].reason


def test_enlarged_size_landing_on_a_later_boundary(tmp_path: Path) -> None:
    """A size grown to end exactly where a later batch ends still gives back the batches inside."""
    parts = _batches(5)
    victim = bytearray(parts[1])
    (size,) = struct.unpack_from(">i", victim, 8)
    struct.pack_into(">i", victim, 8, size + len(parts[2]) + len(parts[3]))
    data = parts[0] + bytes(victim) + b"".join(parts[2:])
    batches = [x for x in _read(tmp_path, data) if isinstance(x, Batch)]
    assert [b.baseOffset for b in batches] == [0, 4, 6, 8]


def test_bad_crc_with_a_true_size_stays_one_batch(tmp_path: Path) -> None:
    parts = _batches(3)
    victim = bytearray(parts[1])
    victim[70] ^= 1
    data = parts[0] + bytes(victim) + parts[2]
    items = _read(tmp_path, data)
    assert [(type(x).__name__, x.position) for x in items] == [
        ("Batch", 0),
        ("Batch", len(parts[0])),
        ("Problem", len(parts[0])),
        ("Batch", len(parts[0]) + len(victim)),
    ]


def test_garbage_between_good_batches_is_one_bounded_region(tmp_path: Path) -> None:
    parts = _batches(3)
    garbage = bytes((i * 37 + 11) % 251 for i in range(333))
    data = parts[0] + garbage + parts[1] + parts[2]
    items = _read(tmp_path, data)
    problems = [x for x in items if isinstance(x, Problem)]
    assert [(p.position, p.length) for p in problems] == [(len(parts[0]), len(garbage))]
    assert [b.baseOffset for b in items if isinstance(b, Batch)] == [0, 2, 4]
