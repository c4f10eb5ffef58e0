"""Problems name the check that failed, with the numbers it compared; resync finds what a bad size hides.

Segments come from kafka-python's builders (``tests/batches.py``); damage is applied byte by byte.
"""

from __future__ import annotations

import gzip
import struct
from collections.abc import Callable
from pathlib import Path

import pytest

from kafka_dump.errors import CorruptRecordError
from kafka_dump.log.segment import read_segment
from kafka_dump.model import Batch, Check, Compression, Problem, ProblemKind, new_record
from kafka_dump.render.jsonl import problem_object
from kafka_dump.wire import _walk_pure, legacy, v2
from kafka_dump.wire import decode as _pure
from kafka_dump.wire import layout as L
from kafka_dump.wire.codecs import compress, decompress
from kafka_dump.wire.message import Message, encode_message
from kafka_dump.wire.varint import decode_varint

from .batches import (
    GZIP,
    LZ4,
    default_records,
    entry_bounds,
    legacy_messages,
    legacy_records,
    patch,
    raw_record,
    raw_v2_batch,
    v2_batch,
    varint,
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


def _records(records: bytes, count: int) -> CorruptRecordError | None:
    return _pure.decode_v2_records(records, 0, len(records), count, 0, 0, None, -1)[1]


def _inner(data: bytes, wrapper_offset: int = 0, magic: int = 1) -> CorruptRecordError | None:
    return _pure.decode_legacy_inner(data, magic, wrapper_offset, None)[1]


def _raised(fn: Callable[[], object]) -> CorruptRecordError | None:
    try:
        fn()
    except CorruptRecordError as exc:
        return exc
    return None


def _wrapper(entry: bytes, max_records: int = 100) -> CorruptRecordError | None:
    return legacy.decode_message(
        "f", entry, 0, len(entry), 0, with_records=True, max_batch_bytes=1 << 20, max_records=max_records
    )[1]


def _batch(entry: bytes) -> CorruptRecordError | None:
    return v2.decode_batch("f", entry, 0, 0, with_records=True, max_batch_bytes=1 << 20)[1]


def _message(entry: bytes) -> CorruptRecordError | None:
    return _raised(lambda: Message(entry, 0, len(entry)))


def _control(key: bytes, value: bytes | None = None) -> CorruptRecordError | None:
    return _raised(lambda: v2.decode_control(new_record(0, 0, key, value, (), -1, 0)))


def _walk(records: bytes, count: int, last_delta: int) -> CorruptRecordError | None:
    return _walk_pure.walk_error(records, 0, len(records), count, last_delta, 0)


_V1 = legacy_messages(legacy_records(5), magic=1)
_BODY_N = decode_varint(raw_record(extra=b"z"), 0)[0]

# Each rule, broken where it is checked: the reason and the (check, expected, found) raised with it.
RAISED: list[tuple[Callable[[], CorruptRecordError | None], str, tuple[str, int | None, int | None]]] = [
    (lambda: _records(raw_record() + raw_record(offset_delta=1), 5), "batch declares 5 records but holds 2",
     (Check.COUNT_MISMATCH, 5, 2)),
    (lambda: _records(raw_record() + b"abc", 1), "3 bytes remain after the batch's 1 declared records",
     (Check.COUNT_MISMATCH, None, None)),
    (lambda: _batch(raw_v2_batch(b"", -1)), "invalid record count -1", (Check.COUNT_MISMATCH, None, -1)),
    (lambda: _records(b"\xff" * 6, 1), "varint longer than 5 bytes", (Check.VARINT, None, None)),
    (lambda: _records(b"\xff", 1), "varint runs past the end of its record", (Check.VARINT, None, None)),
    (lambda: _records(raw_record(length=99), 1), "record length 99 does not fit the batch",
     (Check.RECORD_LENGTH, None, 99)),
    (lambda: _records(raw_record(extra=b"z"), 1),
     f"record declares {_BODY_N} bytes but its fields take {_BODY_N - 1}", (Check.RECORD_LENGTH, _BODY_N, _BODY_N - 1)),
    (lambda: _records(raw_record(header_count=7), 1), "invalid header count 7", (Check.HEADER_COUNT, None, 7)),
    (lambda: _records(raw_record(header_count=1, extra=varint(-1) + varint(-1)), 1), "header key is null",
     (Check.FIELD_LENGTH, None, None)),
    (lambda: _records(raw_record(header_count=1, extra=varint(1) + b"h" + varint(9)), 1),
     "header value length 9 runs past the record", (Check.FIELD_LENGTH, None, 9)),
    (lambda: _records(raw_record(key=b"", value=None, key_length=4), 1), "key length 4 runs past the record",
     (Check.FIELD_LENGTH, None, 4)),
    (lambda: _records(raw_record(value=b"", value_length=4), 1), "value length 4 runs past the record",
     (Check.FIELD_LENGTH, None, 4)),
    (lambda: _control(b"\x00"), "control record key is shorter than 4 bytes", (Check.CONTROL, None, None)),
    (lambda: _control(L.CONTROL_KEY.pack(0, 0), L.END_TXN_MARKER.pack(-1, 0)),
     "end transaction marker has a negative version -1", (Check.CONTROL, None, None)),
    (lambda: _wrapper(encode_message(0, 1, 4, 0, None, b"x")), "invalid wrapper compression type 4 for magic 1",
     (Check.CODEC, None, 4)),
    (lambda: _batch(raw_v2_batch(raw_record(), 1, attributes=6)), "unknown compression codec id 6",
     (Check.CODEC, None, 6)),
    (lambda: _inner(legacy_messages(legacy_records(2), magic=1, codec=GZIP)), "inner message is itself compressed",
     (Check.CODEC, None, None)),
    (lambda: _inner(legacy_messages(legacy_records(2), magic=0)), "inner message has magic 0 in a v1 wrapper",
     (Check.INNER_MAGIC, 1, 0)),
    (lambda: _inner(patch(_V1, 16, ">b", 7)),
     "inner message at byte 0 of the payload: message has magic 7, expected 0 or 1", (Check.INNER_MAGIC, None, 7)),
    (lambda: _inner(legacy_messages(legacy_records(1), magic=1)[:-1]), "inner message at byte 0 of the payload runs past its end",
     (Check.INNER_MESSAGE, None, None)),
    (lambda: _inner(_V1, wrapper_offset=1), "wrapper offset 1 is below its last inner offset 4",
     (Check.INNER_OFFSET, 4, 1)),
    (lambda: _wrapper(encode_message(0, 1, 1, 0, None, None)), "compressed wrapper message has a null value",
     (Check.WRAPPER, None, None)),
    (lambda: _inner(_V1 + b"\x00\x00\x00"), "3 stray bytes after the last inner message", (Check.WRAPPER, None, None)),
    (lambda: _inner(_V1 + b"\x00\x00\x00", wrapper_offset=9),
     "3 stray bytes after the last inner message; the 5 inner messages before it have unknown offsets",
     (Check.WRAPPER, None, None)),
    (lambda: _inner(b""), "compressed wrapper message holds no inner messages", (Check.WRAPPER, None, None)),
    (lambda: _wrapper(legacy_messages(legacy_records(5), magic=1, codec=GZIP), max_records=2),
     "wrapper holds more than 2 inner messages (--max-records-per-batch)", (Check.TOO_LARGE, 2, None)),
    (lambda: _raised(lambda: decompress(Compression.GZIP, gzip.compress(b"x" * 1000), 100)),
     "decompressed size passes the limit of 100 bytes (--max-batch-bytes)", (Check.TOO_LARGE, 100, None)),
    (lambda: _raised(lambda: decompress(Compression.GZIP, gzip.compress(b"x" * 100)[:-12], 1000)),
     "gzip payload ends before its end of stream", (Check.DECOMPRESS, None, None)),
    (lambda: _raised(lambda: decompress(Compression.ZSTD, bytes(8), 1000)), "zstd payload has no frame magic at byte 0",
     (Check.DECOMPRESS, None, None)),
    (lambda: _message(patch(_V1, 16, ">b", 7)), "message has magic 7, expected 0 or 1", (Check.BAD_MAGIC, None, 7)),
    (lambda: _message(patch(_V1, 8, ">i", 20)), "message size 20 is below the v1 minimum",
     (Check.BAD_LENGTH, None, 20)),
    (lambda: _message(_V1[:12] + bytes(10)), "message is shorter than the smallest v0 message",
     (Check.BAD_LENGTH, None, None)),
    (lambda: _walk(raw_record(offset_delta=2) + raw_record(offset_delta=1), 2, 5),
     "record offset delta 1 is not above the previous one (2)", (Check.OFFSET_DELTA, None, 1)),
    (lambda: _walk(raw_record(offset_delta=5), 1, 3), "record offset delta 5 is past the batch's lastOffsetDelta 3",
     (Check.OFFSET_DELTA, 3, 5)),
]  # fmt: skip


@pytest.mark.parametrize(("make", "reason", "expected"), RAISED, ids=[r for _, r, _ in RAISED])
def test_errors_carry_their_check_from_where_they_are_raised(
    make: Callable[[], CorruptRecordError | None], reason: str, expected: tuple[str, int | None, int | None]
) -> None:
    error = make()
    assert error is not None
    assert (error.reason, (error.check, error.expected, error.found)) == (reason, expected)


def test_the_check_travels_to_the_problem_and_its_json(tmp_path: Path) -> None:
    """A problem found in decompressed records keeps the check raised with it, and its JSON names it."""
    records = raw_record() + raw_record(offset_delta=1)
    entry = raw_v2_batch(compress(Compression.GZIP, records), 5, attributes=GZIP)
    (p,) = [x for x in _read(tmp_path, entry) if isinstance(x, Problem)]
    assert (p.check, p.expected, p.found) == (Check.COUNT_MISMATCH, 5, 2)
    assert p.reason == "batch declares 5 records but holds 2 (at byte 0 of the decompressed records)"
    obj = problem_object(p)
    assert (obj["check"], obj["expected"], obj["found"]) == (Check.COUNT_MISMATCH, 5, 2)


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
