"""The compiled twins must agree with the pure-Python references exactly: records, errors, positions, bytes.

Skipped where the compiled twins were not built, except under ``KDUMP_EXPECT_COMPILED=1`` (CI's
compiled run), where a missing or unloadable extension fails the run instead of reading as skipped.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import struct
import subprocess
import sys
import zlib
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatchBuilder

import kafka_dump.wire as twins
import kafka_dump.wire.decode
from kafka_dump import native
from kafka_dump.errors import KafkaDumpError
from kafka_dump.log.segment import read_segment
from kafka_dump.model import Batch, Compression, ControlRecord, Header, Record, TimestampType
from kafka_dump.render import jsonl
from kafka_dump.wire import codecs, legacy
from kafka_dump.wire.varint import encode_varint
from tests.conftest import FIXTURES, ROOT, SHARED_REAL, reference_module

EXPECT_COMPILED = os.environ.get("KDUMP_EXPECT_COMPILED") == "1"


def _compiled(name: str) -> ModuleType:
    """The compiled module; where it is expected, failing to import it fails the run (no skip)."""
    if EXPECT_COMPILED:
        return importlib.import_module(name)
    return pytest.importorskip(name)


speedups = jsonfast = _compiled("kafka_dump.native._native")
_pure = reference_module(kafka_dump.wire.decode)  # the pure decoder, whatever its module binds
batch_json = native.reference(jsonl.batch_json)
# The decoder's twin functions, every name the pure decoder binds: a new one is swapped too.
DECODER_FUNCTIONS = sorted(
    n for n, f in native.REFERENCES.items() if f.__module__ == "kafka_dump.wire.decode"
)
# Every module that binds compiled functions, and the compiled names that none binds (tests, and the
# inflate-ahead engine, which log/ahead.py wraps).
BINDERS = (
    "kafka_dump.wire.decode", "kafka_dump.wire._walk_pure", "kafka_dump.wire._gather_pure",
    "kafka_dump.wire.encoder", "kafka_dump.wire.recheck", "kafka_dump.wire.transcode",
    "kafka_dump.render.jsonl", "kafka_dump.render.rows", "kafka_dump.analysis.redact_records",
)  # fmt: skip
UNBOUND = {"InflateEngine", "compressed_spans", "crc32", "pseudonym_stream"}


def test_every_compiled_function_is_bound_when_expected() -> None:
    """CI sets KDUMP_EXPECT_COMPILED=1 on the compiled run: a silent fallback must fail there. Every
    compiled function is bound by its pure twin, and each bound name holds the compiled one (or, under
    KDUMP_PURE, the pure one)."""
    for name in BINDERS:
        importlib.import_module(name)
    compiled = {n for n in dir(speedups) if callable(getattr(speedups, n)) and not n.startswith("_")}
    assert compiled - UNBOUND == set(native.REFERENCES)
    holds = {n: getattr(sys.modules[f.__module__], n) for n, f in native.REFERENCES.items()}
    if EXPECT_COMPILED:
        assert native.ACTIVE == "compiled"
        assert {n: fn is getattr(speedups, n) for n, fn in holds.items()} == dict.fromkeys(holds, True)
    if os.environ.get("KDUMP_PURE") == "1":
        assert native.ACTIVE == "pure-python"
        assert {n: fn is native.REFERENCES[n] for n, fn in holds.items()} == dict.fromkeys(holds, True)


@pytest.mark.parametrize(
    "source", sorted((ROOT / "kafka_dump").rglob("*.c")), ids=lambda p: str(p.relative_to(ROOT))
)
def test_every_c_source_is_in_the_one_module(source: Path) -> None:
    """setup.py builds every C file of native/ into ``_native``, and module.c calls each file's init."""
    assert source.parent == ROOT / "kafka_dump" / "native"
    init = re.search(r"^(\w+)_init\(PyObject \*m\)", source.read_text(), re.MULTILINE)
    if init is not None:
        assert f"X({init[1]})" in (source.parent / "module.c").read_text()


def test_every_decoder_function_has_two_twins() -> None:
    assert DECODER_FUNCTIONS == [
        "decode_legacy_inner",
        "decode_legacy_run",
        "decode_legacy_wrapper",
        "decode_v2_records",
    ]
    for name in DECODER_FUNCTIONS:
        assert getattr(speedups, name) is not getattr(_pure, name)


def _both(data: bytes, *args: object) -> None:
    """Call both twins and assert the same records and the same error (type, reason, position)."""
    pure_records, pure_error = _pure.decode_v2_records(data, *args)  # type: ignore[arg-type]
    fast_records, fast_error = speedups.decode_v2_records(data, *args)
    assert fast_records == pure_records
    assert [type(r) for r in fast_records] == [type(r) for r in pure_records]
    if pure_error is None:
        assert fast_error is None
    else:
        assert fast_error is not None
        assert (type(fast_error), fast_error.reason, fast_error.position) == (
            type(pure_error),
            pure_error.reason,
            pure_error.position,
        )


def _records_payload(batch: bytes) -> tuple[bytes, int]:
    """(records bytes, declared count) of an uncompressed v2 batch."""
    return batch[61:], struct.unpack_from(">i", batch, 57)[0]


record_strategy = st.tuples(
    st.integers(0, 2**31 - 1),  # offset delta
    st.integers(-(2**40), 2**40),  # timestamp
    st.one_of(st.none(), st.binary(max_size=40)),
    st.one_of(st.none(), st.binary(max_size=200)),
    st.lists(st.tuples(st.text(max_size=8), st.one_of(st.none(), st.binary(max_size=20))), max_size=4),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(record_strategy, min_size=1, max_size=20),
    st.integers(-1, 2**31 - 1),
    st.one_of(st.none(), st.integers(0, 2**41)),
)
def test_twins_agree_on_random_batches(
    records: list[tuple[int, int, bytes | None, bytes | None, list[tuple[str, bytes | None]]]],
    base_sequence: int,
    log_append_time: int | None,
) -> None:
    builder = DefaultRecordBatchBuilder(2, 0, False, -1, -1, -1, 10**9)
    for delta, ts, key, value, headers in sorted(records, key=lambda r: r[0]):
        builder.append(delta, timestamp=ts, key=key, value=value, headers=headers)
    data, count = _records_payload(bytes(builder.build()))
    _both(data, 0, len(data), count, 10**12, 1_700_000_000_000, log_append_time, base_sequence)


# Few distinct keys, values, headers and timestamps: consecutive records repeat them, or differ in one
# byte only, which is where the compiled twin hands out the previous record's objects again.
_few_bytes = st.one_of(
    st.none(), st.sampled_from([b"", b"a", b"b", b"ab", b"aa", b"x" * 60, b"x" * 59 + b"y"])
)
repeating_record = st.tuples(
    st.integers(0, 3),  # offset delta step
    st.sampled_from([0, 0, 1, -1, 2**40]),  # timestamp delta
    _few_bytes,
    _few_bytes,
    st.lists(st.tuples(st.sampled_from(["trace", "tracf", "", "trace2"]), _few_bytes), max_size=3),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(repeating_record, min_size=1, max_size=30),
    st.sampled_from([-1, 0, 5, 2**31 - 3]),
    st.sampled_from([0, 5, 2**31 - 3, 2**63 - 40]),
    st.one_of(st.none(), st.just(1_700_000_000_123)),
)
def test_twins_agree_on_repeating_records(
    records: list[tuple[int, int, bytes | None, bytes | None, list[tuple[str, bytes | None]]]],
    base_sequence: int,
    base_offset: int,
    log_append_time: int | None,
) -> None:
    """Shared keys, values, headers and timestamps, and sequences equal to offsets (wrapping past
    Integer.MAX_VALUE too), give the records the pure twin builds field by field."""
    builder = DefaultRecordBatchBuilder(2, 0, False, -1, -1, -1, 10**9)
    delta = 0
    for step, ts, key, value, headers in records:
        delta += step
        builder.append(delta, timestamp=1_700_000_000_000 + ts, key=key, value=value, headers=headers)
    data, count = _records_payload(bytes(builder.build()))
    _both(data, 0, len(data), count, base_offset, 0, log_append_time, base_sequence)


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=300), st.integers(-2, 50), st.integers(-1, 5))
def test_twins_agree_on_arbitrary_bytes(data: bytes, count: int, base_sequence: int) -> None:
    _both(data, 0, len(data), count, 0, 0, None, base_sequence)


@settings(max_examples=500, deadline=None)
@given(st.data())
def test_twins_agree_on_corrupted_batches(data: st.DataObject) -> None:
    builder = DefaultRecordBatchBuilder(2, 0, False, -1, -1, -1, 10**9)
    for i in range(5):
        builder.append(i, timestamp=i, key=b"k%d" % i, value=b"v" * i, headers=[("h", b"x")] if i % 2 else [])
    payload, count = _records_payload(bytes(builder.build()))
    raw = bytearray(payload)
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(raw) - 1))
        raw[i] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(raw)))
    # Pad both sides: the twins must stay within [pos, end) whatever lies around it.
    padded = b"\x01\x81\xff" + bytes(raw[:cut]) + b"\x81" * 7
    _both(padded, 3, 3 + cut, data.draw(st.sampled_from([count, count - 1, count + 1, 0])), 5, 7, None, 3)


@pytest.mark.parametrize(
    "payload",
    [
        encode_varint(-1),  # negative record length
        encode_varint(2**31 - 1),  # huge record length
        b"\xff" * 6,  # overlong varint
        b"\x0c\x00" + b"\xff" * 11,  # overlong varlong timestamp
        b"\x0c\x00\x00\x00" + encode_varint(2**20) + b"\x00\x00",  # key past the record
        b"\x0c\x00\x00\x00\x01\x01" + encode_varint(2**20),  # header count huge
    ],
)
def test_twins_agree_on_hostile_lengths(payload: bytes) -> None:
    _both(payload, 0, len(payload), 1, 0, 0, None, -1)


def _segments() -> list[Path]:
    found = sorted(FIXTURES.glob("*.log"))
    if SHARED_REAL.is_dir():
        found += sorted(SHARED_REAL.rglob("*.log"))
    return found


def _read_with(
    twin: ModuleType, path: Path, monkeypatch: pytest.MonkeyPatch, **kwargs: object
) -> list[object]:
    """Read a segment with every decoder function taken from one twin (the segment reader, v2.py and
    legacy.py look each one up on kafka_dump.wire at call time)."""
    for name in DECODER_FUNCTIONS:
        monkeypatch.setattr(twins, name, getattr(twin, name))
    return list(read_segment(path, **kwargs))  # type: ignore[arg-type]


@pytest.mark.parametrize("path", _segments(), ids=lambda p: p.name)
def test_twins_agree_on_segments(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for kwargs in ({}, {"with_records": False}, {"keep": lambda last, ts: last % 3 != 1}):
        pure = _read_with(_pure, path, monkeypatch, **kwargs)
        fast = _read_with(speedups, path, monkeypatch, **kwargs)
        assert fast == pure
        assert [type(item) for item in fast] == [type(item) for item in pure]


def test_records_freed_and_built_again_are_whole() -> None:
    """Records freed (built by the compiled twin, by the dataclass, by a subclass) leave nothing of
    theirs in the records built after them, and keep every field of their own while alive."""

    class Sub(Record):
        __slots__ = ("extra",)

    builder = DefaultRecordBatchBuilder(2, 0, False, -1, -1, -1, 10**9)
    for i in range(50):
        builder.append(i, timestamp=i // 7, key=b"k%d" % i, value=b"v" * i, headers=[("h", b"x%d" % (i % 3))])
    data, count = _records_payload(bytes(builder.build()))
    args = (0, len(data), count, 10**6, 1_700_000_000_000, None, 10**6)
    expected, _ = _pure.decode_v2_records(data, *args)
    kept = []
    for round_ in range(4):
        records, error = speedups.decode_v2_records(data, *args)
        assert error is None
        assert records == expected
        kept.append(records[round_::5])  # some stay alive while the rest are freed
        del records
        made = [Record(i, i, b"k", None, (Header(b"a", b"b"),), i, 9) for i in range(30)]
        sub = Sub(1, 2, b"k", b"v", (), 3, 4)
        object.__setattr__(sub, "extra", [sub])  # a cycle through a subclass's own slot
        del made, sub
    for round_, records in enumerate(kept):
        assert records == expected[round_::5]
    assert [r.sequence == r.offset for r in expected] == [True] * 50


def _outcome(twin: ModuleType, path: Path, monkeypatch: pytest.MonkeyPatch) -> object:
    """What reading a file with one twin gives: its items, or the error that refused the file."""
    try:
        return _read_with(twin, path, monkeypatch)
    except KafkaDumpError as e:
        return (type(e), str(e))


@pytest.mark.parametrize("path", sorted((FIXTURES / "bad").glob("*.log")), ids=lambda p: p.name)
def test_twins_agree_on_the_bad_corpus(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs of plain v0/v1 messages, with their shared ints and reused batches, cut by every kind of damage."""
    pure = _outcome(_pure, path, monkeypatch)
    fast = _outcome(speedups, path, monkeypatch)
    assert fast == pure
    if isinstance(pure, list):
        assert [type(item) for item in fast] == [type(item) for item in pure]  # type: ignore[union-attr]


def test_batches_freed_and_built_again_are_whole() -> None:
    """Batches freed (plain messages' from the compiled twin, the NamedTuple's own, a subclass's, one of
    another length) leave nothing of theirs in the batches built after them, and keep every field of
    their own while alive."""

    class Sub(Batch):
        __slots__ = ()

    data = _plain_messages(1, 40) + _plain_messages(0, 40)
    expected, used = _pure.decode_legacy_run("f.log", data, 0, len(data), 1000, True)
    assert used == len(data)
    kept = []
    for round_ in range(4):
        batches, _ = speedups.decode_legacy_run("f.log", data, 0, len(data), 1000, round_ % 2 == 0)
        want = expected if round_ % 2 == 0 else [b._replace(records=None) for b in expected]
        assert batches == want
        assert [type(b) for b in batches] == [Batch] * len(want)
        kept.append((want[round_::7], batches[round_::7]))  # some stay alive while the rest are freed
        if round_ % 2 == 0:  # and some of the others' records tuples, or records, outlive their batches
            kept.append(([b.records for b in want[1::5]], [b.records for b in batches[1::5]]))
            kept.append(([b.records[0] for b in want[2::5]], [b.records[0] for b in batches[2::5]]))  # type: ignore[index]
        del batches
        made = [b._replace(position=i, file=[i]) for i, b in enumerate(expected[:30])]  # tracked ones
        sub = Sub(*expected[0])
        short = tuple.__new__(Batch, (b"x", [1], None))
        assert isinstance(sub, Batch) and len(short) == 3
        del made, sub, short
    for want, got in kept:
        assert got == want
        assert [type(b) for b in got] == [type(b) for b in want]


def test_compiled_twin_rejects_bad_bounds() -> None:
    with pytest.raises(ValueError):
        speedups.decode_v2_records(b"abc", 2, 10, 1, 0, 0, None, -1)


def test_compiled_legacy_inner_takes_bytes_only() -> None:
    """Its second pass trusts what the first checked: the data must be immutable bytes."""
    data = _message_set(1, [(b"k", b"v")], relative=True)
    assert speedups.decode_legacy_inner(data, 1, 0, None)[1] is None
    for other in (bytearray(data), memoryview(data)):
        with pytest.raises(TypeError):
            speedups.decode_legacy_inner(other, 1, 0, None)


def _both_legacy(data: bytes, magic: int, wrapper_offset: int, log_append_time: int | None) -> None:
    pure_records, pure_error = _pure.decode_legacy_inner(data, magic, wrapper_offset, log_append_time)
    fast_records, fast_error = speedups.decode_legacy_inner(data, magic, wrapper_offset, log_append_time)
    assert fast_records == pure_records
    if pure_error is None:
        assert fast_error is None
    else:
        assert fast_error is not None
        assert (fast_error.reason, fast_error.position) == (pure_error.reason, pure_error.position)


def _message_set(magic: int, messages: list[tuple[bytes | None, bytes | None]], relative: bool) -> bytes:
    builder = LegacyRecordBatchBuilder(magic, 0, 10**9)
    for i, (key, value) in enumerate(messages):
        builder.append(i if relative else 100 + i, timestamp=1_700_000_000_000 + i, key=key, value=value)
    return bytes(builder.build())


legacy_messages = st.lists(
    st.tuples(st.one_of(st.none(), st.binary(max_size=30)), st.one_of(st.none(), st.binary(max_size=80))),
    min_size=1,
    max_size=12,
)


@settings(max_examples=300, deadline=None)
@given(
    legacy_messages,
    st.sampled_from([0, 1]),
    st.integers(0, 2**40),
    st.one_of(st.none(), st.integers(0, 2**41)),
)
def test_legacy_twins_agree_on_random_sets(
    messages: list[tuple[bytes | None, bytes | None]],
    magic: int,
    wrapper_offset: int,
    log_append_time: int | None,
) -> None:
    _both_legacy(_message_set(magic, messages, relative=magic == 1), magic, wrapper_offset, log_append_time)


@settings(max_examples=500, deadline=None)
@given(st.data())
def test_legacy_twins_agree_on_corrupted_sets(data: st.DataObject) -> None:
    magic = data.draw(st.sampled_from([0, 1]))
    raw = bytearray(_message_set(magic, [(b"k%d" % i, b"v" * i) for i in range(4)], relative=magic == 1))
    for _ in range(data.draw(st.integers(1, 4))):
        raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(raw)))
    _both_legacy(bytes(raw[:cut]), data.draw(st.sampled_from([0, 1])), data.draw(st.integers(0, 10)), None)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200), st.sampled_from([0, 1]), st.integers(0, 5))
def test_legacy_twins_agree_on_arbitrary_bytes(data: bytes, magic: int, wrapper_offset: int) -> None:
    _both_legacy(data, magic, wrapper_offset, None)


def test_legacy_twins_place_offsets_past_int64() -> None:
    """A wrapper far above its last inner offset: the base, and the offsets, need more than 64 bits."""
    data = bytearray(_message_set(1, [(b"k", b"v"), (b"k", b"v")], relative=True))
    second = 12 + int.from_bytes(data[8:12], "big")
    data[0:8] = (2**63 - 1).to_bytes(8, "big", signed=True)
    data[second : second + 8] = (-(2**63)).to_bytes(8, "big", signed=True)
    for wrapper_offset in (2**62, 2**63 - 1):
        _both_legacy(bytes(data), 1, wrapper_offset, None)


header_values = st.one_of(st.none(), st.binary(max_size=20), st.text(max_size=10).map(str.encode))
json_records = st.lists(
    st.builds(
        Record,
        offset=st.integers(-(2**70), 2**70),
        timestamp=st.integers(-(2**63), 2**63 - 1),
        key=st.one_of(st.none(), st.binary(max_size=30), st.text(max_size=15).map(str.encode)),
        value=st.one_of(st.none(), st.binary(max_size=60), st.text(max_size=30).map(str.encode)),
        headers=st.lists(st.builds(Header, st.binary(max_size=8), header_values), max_size=3).map(tuple),
        sequence=st.integers(-1, 2**31),
        sizeInBytes=st.integers(0, 1000),
        crc=st.one_of(st.none(), st.integers(0, 2**32 - 1)),
        crcValid=st.one_of(st.none(), st.booleans()),
        control=st.one_of(
            st.none(),
            st.builds(
                ControlRecord, st.integers(-1, 9), st.integers(0, 3), st.one_of(st.none(), st.integers())
            ),
        ),
    ),
    max_size=5,
)


def _int_field(bits: int) -> st.SearchStrategy[int]:
    """Ints of a field's width, its edges, and beyond (the writer must not assume the width)."""
    edge = 2 ** (bits - 1)
    return st.one_of(st.integers(-edge, edge - 1), st.sampled_from([-edge, edge - 1, -1, 0]), st.integers())


batch_headers = st.builds(
    Batch,
    file=st.text(max_size=10),
    position=st.integers(0, 2**63),
    baseOffset=_int_field(64),
    lastOffset=_int_field(64),
    magic=st.integers(-2, 3),
    attributes=_int_field(16),
    compression=st.sampled_from(list(Compression)),
    timestampType=st.sampled_from(list(TimestampType)),
    baseTimestamp=_int_field(64),
    maxTimestamp=_int_field(64),
    producerId=_int_field(64),
    producerEpoch=_int_field(16),
    baseSequence=_int_field(32),
    lastSequence=_int_field(32),
    partitionLeaderEpoch=_int_field(32),
    isTransactional=st.booleans(),
    isControl=st.booleans(),
    deleteHorizonMs=st.one_of(st.none(), _int_field(64)),
    crc=st.integers(0, 2**32 - 1),
    crcValid=st.booleans(),
    sizeInBytes=_int_field(32),
    recordCount=st.one_of(st.none(), _int_field(32)),
    records=st.none(),
)


@settings(max_examples=300, deadline=None)
@given(
    batch_headers,
    st.one_of(st.none(), json_records),
    st.sampled_from([0, 1, 2]),
    st.text().map(lambda t: jsonl._quote(t).encode("utf-8", "backslashreplace")),
)
def test_batch_json_twins_write_the_same_bytes_for_any_values(
    batch: Batch, records: list[Record] | None, payload: int, file_json: bytes
) -> None:
    """Every header field at its edges and beyond, every record field, every payload encoding."""
    fast = jsonfast.batch_json(file_json, batch, records, payload)
    assert fast == batch_json(file_json, batch, records, payload)
    line = json.loads(fast)  # and it is JSON, one line
    assert fast.endswith(b"\n") and fast.count(b"\n") == 1
    assert line["baseOffset"] == batch.baseOffset and line["recordCount"] == batch.recordCount


def _wrapper(magic: int, codec: int, messages: list[tuple[bytes | None, bytes | None]], offset: int) -> bytes:
    """One compressed wrapper entry written by kafka-python, its offset set to ``offset`` (outside the CRC)."""
    builder = LegacyRecordBatchBuilder(magic, codec, 10**9)
    for i, (key, value) in enumerate(messages):
        builder.append(
            i if magic == 1 else 100 + i, timestamp=1_700_000_000_000 + i // 3, key=key, value=value
        )
    raw = bytearray(builder.build())
    struct.pack_into(">q", raw, 0, offset)
    return bytes(raw)


def _decode_wrapper(decoder: object, data: bytes, with_records: bool, max_records: int) -> object:
    fn = decoder.decode_legacy_wrapper  # type: ignore[attr-defined]
    return fn("f.log", data, 0, len(data), 500, with_records, 1 << 20, max_records, codecs.decompress)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_wrapper_twins_agree(data: st.DataObject) -> None:
    """Sound wrappers of every codec and magic decode alike; damaged ones give None in both twins."""
    magic = data.draw(st.sampled_from([0, 1]))
    codec = data.draw(st.sampled_from([1, 2, 3]))
    raw = bytearray(_wrapper(magic, codec, data.draw(legacy_messages), data.draw(st.integers(0, 2**40))))
    if magic == 1 and data.draw(st.booleans()):
        raw[17] |= 0x08  # LogAppendTime (the CRC then fails unless it is set again)
        struct.pack_into(">I", raw, 12, zlib.crc32(bytes(raw[16:])))
    for _ in range(data.draw(st.integers(0, 2))):
        raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(len(raw) - 3, len(raw)))
    with_records = data.draw(st.booleans())
    max_records = data.draw(st.sampled_from([0, 1, 10**6]))
    fast = _decode_wrapper(speedups, bytes(raw[:cut]), with_records, max_records)
    pure = _decode_wrapper(_pure, bytes(raw[:cut]), with_records, max_records)
    assert fast == pure
    assert type(fast) is type(pure)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_wrapper_fast_path_is_the_long_way(data: st.DataObject) -> None:
    """What decode_legacy_wrapper gives is what decode_message gives without it, for each twin."""
    magic = data.draw(st.sampled_from([0, 1]))
    messages = data.draw(legacy_messages)
    # v1: 0 (base 0) or at least the last inner offset, as Kafka writes it; v0 ignores it.
    offset = data.draw(st.sampled_from([0, len(messages) - 1, len(messages) + 1000]))
    raw = _wrapper(magic, data.draw(st.sampled_from([1, 2, 3])), messages, offset)
    with_records = data.draw(st.booleans())
    for twin in (speedups, _pure):
        fast = _decode_wrapper(twin, raw, with_records, 10**6)
        assert fast is not None
        with pytest.MonkeyPatch.context() as m:
            for name in DECODER_FUNCTIONS:
                m.setattr(twins, name, getattr(twin, name))
            m.setattr(twins, "decode_legacy_wrapper", lambda *args: None)
            slow, error = legacy.decode_message(
                "f.log", raw, 0, len(raw), 500, with_records=with_records, max_batch_bytes=1 << 20
            )
        assert error is None
        assert fast == slow
        assert [type(r) for r in fast.records or ()] == [type(r) for r in slow.records or ()]  # type: ignore[attr-defined]


def _both_run(data: bytes, pos: int, end: int, with_records: bool) -> None:
    pure = _pure.decode_legacy_run("f.log", data, pos, end, 1000, with_records)
    fast = speedups.decode_legacy_run("f.log", data, pos, end, 1000, with_records)
    assert fast == pure
    assert [type(b) for b in fast[0]] == [type(b) for b in pure[0]]


def _plain_messages(magic: int, n: int, attributes: int = 0) -> bytes:
    out = b""
    for i in range(n):
        builder = LegacyRecordBatchBuilder(magic, attributes, 10**9)
        builder.append(0, timestamp=1_700_000_000_000 + i, key=b"k%d" % i if i % 3 else None, value=b"v" * i)
        out += bytes(builder.build())
    return out


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_legacy_run_twins_agree(data: st.DataObject) -> None:
    raw = bytearray(_plain_messages(data.draw(st.sampled_from([0, 1])), data.draw(st.integers(0, 6))))
    raw += bytes(_message_set(1, [(b"a", b"b")], relative=True))[:-1]  # a cut entry ends the run
    for _ in range(data.draw(st.integers(0, 3))):
        raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(0, 255))
    pos = data.draw(st.integers(0, 3))
    end = data.draw(st.integers(pos, len(raw)))
    _both_run(bytes(raw), pos, end, data.draw(st.booleans()))


def test_legacy_run_twins_agree_on_long_runs() -> None:
    """A run of more messages than the compiled twin gathers before it makes the run's list (1024)."""
    one = _plain_messages(1, 1)
    for count in (1023, 1024, 1025, 2500):
        data = one * count
        _both_run(data, 0, len(data), True)
        _both_run(data, 0, len(data), False)
        batches, used = speedups.decode_legacy_run("f.log", data, 0, len(data), 0, True)
        assert (len(batches), used) == (count, len(data))


def test_legacy_run_stops_at_what_it_does_not_handle() -> None:
    plain = _plain_messages(1, 3)
    gzip_wrapper = bytes(_message_set(1, [(b"a", b"b")] * 3, relative=True))
    batches, used = speedups.decode_legacy_run("f.log", plain + gzip_wrapper, 0, len(plain) + 5, 0, True)
    assert used == len(plain) and len(batches) == 3
    _both_run(plain + gzip_wrapper, 0, len(plain) + len(gzip_wrapper), True)


@pytest.mark.parametrize("path", _segments(), ids=lambda p: p.name)
def test_batch_json_twins_write_the_same_bytes(path: Path) -> None:
    for item in read_segment(path):
        if not isinstance(item, Batch):
            continue
        for payload in (0, 1, 2):
            for records in (item.records, None, (item.records or ())[:1]):
                fast = jsonfast.batch_json(b'"f \\"q\\""', item, records, payload)
                assert fast == batch_json(b'"f \\"q\\""', item, records, payload)
                json.loads(fast)


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)


_CHANGE_BATCH = """
import collections, kafka_dump.model as m
m.Batch = collections.namedtuple("Batch", {fields})
"""


def test_a_field_added_to_the_model_stops_the_compiled_twins_loading() -> None:
    """The C twins place fields by name; one they do not know is an ImportError, never a shifted read."""
    added = _CHANGE_BATCH.format(fields="m.Batch._fields + ('extra',)") + "import kafka_dump.native._native"
    result = _python(added)
    assert result.returncode != 0
    assert "ImportError: kafka_dump.model.Batch has 24 fields" in result.stderr
    slot = (
        "import dataclasses, kafka_dump.model as m\n"
        "m.Record = dataclasses.make_dataclass('Record', [f.name for f in dataclasses.fields(m.Record)] + ['extra'],"
        " slots=True)\n"
        "import kafka_dump.native._native"
    )
    result = _python(slot)
    assert result.returncode != 0
    assert "ImportError: kafka_dump.model.Record has 12 fields" in result.stderr


def test_the_compiled_twins_follow_the_model_s_field_order() -> None:
    """A Batch whose fields are declared in another order is still built and written field by field."""
    code = (
        _CHANGE_BATCH.format(fields="tuple(reversed(m.Batch._fields))")
        + """
from kafka_dump.native import _native as _speedups, reference
from kafka_dump.render import jsonl
_jsonfast = _speedups
from kafka.record.legacy_records import LegacyRecordBatchBuilder
b = LegacyRecordBatchBuilder(1, 0, 10**9)
b.append(7, timestamp=1234, key=b"k", value=b"v")
data = bytes(b.build())
(batch,), used = _speedups.decode_legacy_run("f.log", data, 0, len(data), 100, True)
got = {k: v for k, v in batch._asdict().items() if k != "records"}
assert got == dict(
    file="f.log", position=100, baseOffset=7, lastOffset=7, magic=1, attributes=0, compression=0,
    timestampType=0, baseTimestamp=1234, maxTimestamp=1234, producerId=-1, producerEpoch=-1,
    baseSequence=-1, lastSequence=-1, partitionLeaderEpoch=-1, isTransactional=False, isControl=False,
    deleteHorizonMs=None, crc=batch.crc, crcValid=True, sizeInBytes=used, recordCount=1,
), got
assert batch.records[0].key == b"k" and batch.records[0].offset == 7
line = _jsonfast.batch_json(b'"f"', batch, batch.records, 0)
assert line == reference(jsonl.batch_json)(b'"f"', batch, batch.records, 0), line
print("ok")
"""
    )
    result = _python(code)
    assert result.stdout == "ok\n", result.stderr
