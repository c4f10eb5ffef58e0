"""The encoders: byte-exact against the entries Kafka wrote, read back by kafka-python, round trips.

Oracles (DESIGN.md, "Testing habits"): the real broker segments and Kafka 3.8's own files in
``../shared/fixtures-real/`` (every uncompressed entry must re-encode to its bytes), kafka-python's
reader (reads every encoding we write) and its builders (write the same bytes for the same
uncompressed records), and Hypothesis round trips through kdump's own decoder.
"""

from __future__ import annotations

import os
import struct
import tempfile
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import lz4.frame
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka import codec as kc
from kafka.record import MemoryRecords
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatchBuilder

from kafka_dump.errors import UnsupportedEncodingError
from kafka_dump.log.segment import read_segment
from kafka_dump.model import Batch, Compression, Header, Record, TimestampType, new_header, new_record
from kafka_dump.wire import encode_entry, encode_refusals, entry_size, new_batch
from kafka_dump.wire.codecs import compress, decompress
from tests.conftest import FIXTURES, SHARED_REAL

REAL_FILES = (
    sorted(p for p in SHARED_REAL.rglob("*") if p.suffix in (".log", ".checkpoint") and p.is_file())
    if SHARED_REAL.is_dir()
    else []
)
OUR_FILES = sorted(FIXTURES.glob("*.log"))
ALL_FILES = REAL_FILES + OUR_FILES
CODECS = {
    0: (Compression.NONE, Compression.GZIP, Compression.SNAPPY, Compression.LZ4),
    1: (Compression.NONE, Compression.GZIP, Compression.SNAPPY, Compression.LZ4),
    2: tuple(c for c in Compression if c is not Compression.UNKNOWN),
}


def _name(p: Path) -> str:
    return str(p.relative_to(SHARED_REAL)) if p.is_relative_to(SHARED_REAL) else p.name


def _batches(path: Path) -> Iterator[tuple[Batch, bytes]]:
    """Every batch whose CRC is valid and records decode, with its bytes in the file."""
    data = path.read_bytes()
    for item in read_segment(path):
        if isinstance(item, Batch) and item.crcValid and item.records is not None:
            yield item, data[item.position : item.position + item.sizeInBytes]


def _view(records: tuple[Record, ...] | None) -> list[tuple[Any, ...]]:
    """What a record is, apart from where it was read (size, CRC) and what decoding derived."""
    return [(r.offset, r.timestamp, r.key, r.value, r.headers, r.sequence, r.control) for r in records or ()]


def _decode(entry: bytes) -> list[Batch]:
    """Decode bytes with the segment reader (through a file, as kdump always reads); all must be batches."""
    with tempfile.NamedTemporaryFile(suffix=".log") as f:
        f.write(entry)
        f.flush()
        items = list(read_segment(f.name))
    assert all(isinstance(i, Batch) for i in items), items
    return [i for i in items if isinstance(i, Batch)]


# --- faithful: every uncompressed entry Kafka wrote re-encodes to its own bytes ----------------------


@pytest.mark.parametrize("path", ALL_FILES, ids=_name)
def test_uncompressed_entries_reencode_byte_for_byte(path: Path) -> None:
    for batch, entry in _batches(path):
        if batch.compression is Compression.NONE:
            assert encode_entry(batch) == entry, f"{_name(path)} at {batch.position}"
            assert entry_size(batch) == len(entry)


JAVA_FILES = [p for p in REAL_FILES if p.parent.name == "kafka-3.8.0-java"]


@pytest.mark.parametrize("path", JAVA_FILES, ids=_name)
def test_kafka_38_gzip_entries_reencode_byte_for_byte(path: Path) -> None:
    """Java's GZIPOutputStream is zlib's deflate under a fixed header: the same bytes as ours."""
    for batch, entry in _batches(path):
        if batch.compression is Compression.GZIP:
            assert encode_entry(batch) == entry, f"{_name(path)} at {batch.position}"


def test_the_byte_exact_cases_are_many() -> None:
    """The test above is not vacuous: it covers the uncompressed kinds Kafka writes."""
    kinds = set()
    for path in ALL_FILES:
        for b, _ in _batches(path):
            if b.compression is Compression.NONE:
                compacted = b.records is not None and len(b.records) < b.lastOffset - b.baseOffset + 1
                kinds.add(
                    (b.magic, b.timestampType, b.isControl, b.isTransactional, b.baseSequence >= 0, compacted)
                )
    assert (2, TimestampType.LOG_APPEND_TIME, False, False, False, False) in kinds
    assert (1, TimestampType.LOG_APPEND_TIME, False, False, False, False) in kinds
    assert (0, TimestampType.NO_TIMESTAMP_TYPE, False, False, False, False) in kinds
    assert any(k[0] == 2 and k[2] and k[3] for k in kinds)  # transaction markers
    assert any(k[0] == 2 and k[4] for k in kinds)  # sequences
    assert any(k[0] == 2 and k[5] for k in kinds)  # compacted: lastOffsetDelta past the last record


@pytest.mark.parametrize("path", ALL_FILES, ids=_name)
def test_compressed_entries_reencode_to_the_same_records(path: Path) -> None:
    for batch, _ in _batches(path):
        if batch.compression is Compression.NONE or batch.compression is Compression.UNKNOWN:
            continue
        again = _decode(encode_entry(batch))
        assert len(again) == 1
        (b,) = again
        assert _view(b.records) == _view(batch.records)
        # A v0/v1 wrapper's offset is its last record's (a wrapper offset 0 meaning base 0 is normalised).
        last = batch.lastOffset if batch.magic == 2 else (batch.records or ())[-1].offset
        assert (b.baseOffset, b.lastOffset, b.maxTimestamp, b.timestampType, b.attributes) == (
            batch.baseOffset, last, batch.maxTimestamp, batch.timestampType, batch.attributes,
        )  # fmt: skip
        assert [r.storedTimestamp for r in b.records or ()] == [
            r.storedTimestamp for r in batch.records or ()
        ]


def _stored(path: Path) -> list[int | None]:
    return [r.storedTimestamp for b, _ in _batches(path) for r in b.records or ()]


def test_log_append_time_keeps_each_record_own_time() -> None:
    """LogAppendTime: records report the batch's time; their own stays in storedTimestamp."""
    for name in ("v2-logappendtime.log", "v1-logappendtime.log"):
        batches = [b for b, _ in _batches(FIXTURES / name)]
        lat = [b for b in batches if b.timestampType is TimestampType.LOG_APPEND_TIME]
        assert lat
        for b in lat:
            assert all(r.timestamp == b.maxTimestamp for r in b.records or ())
            if b.magic == 2 or b.compression is not Compression.NONE:
                assert all(r.storedTimestamp is not None for r in b.records or ())
        for b in batches:
            if b.timestampType is not TimestampType.LOG_APPEND_TIME:
                assert all(r.storedTimestamp is None for r in b.records or ())


# --- independent readers and writers: kafka-python ----------------------------------------------------


def _records(n: int, *, headers: bool, timestamps: bool = True, gap: int = 1) -> tuple[Record, ...]:
    out = []
    for i in range(n):
        hs = (new_header(b"h", b"x"), new_header(b"n", None)) if headers and i % 2 else ()
        key = None if i % 3 == 2 else f"key-{i}".encode()
        value = None if i % 5 == 4 else f"value {i} ".encode() * (i % 4)
        ts = 1_700_000_000_000 + 7 * i - (i % 3) * 100 if timestamps else -1
        out.append(new_record(1000 + gap * i, ts, key, value, hs, -1, 0))
    return tuple(out)


def _kafka_python_records(data: bytes) -> list[tuple[Any, ...]]:
    records = MemoryRecords(data)
    out = []
    while records.has_next():
        batch = records.next_batch()
        for r in batch:
            headers = tuple((k.encode(), v) for k, v in (r.headers or []))
            out.append((r.offset, r.timestamp, r.key, r.value, headers))
    return out


@pytest.mark.parametrize(
    ("magic", "codec"), [(m, c) for m, codecs in CODECS.items() for c in codecs], ids=lambda x: str(x)
)
def test_kafka_python_reads_every_encoding(magic: int, codec: Compression) -> None:
    records = _records(20, headers=magic == 2, timestamps=magic > 0, gap=2)
    batch = new_batch(records, magic=magic, compression=codec)
    data = encode_entry(batch)
    expected = [
        (
            r.offset,
            None if magic == 0 else r.timestamp,
            r.key,
            r.value,
            tuple((h.key, h.value) for h in r.headers),
        )
        for r in records
    ]
    assert _kafka_python_records(data) == expected
    assert _view(tuple(r for b in _decode(data) for r in b.records or ())) == _view(records)


@pytest.mark.parametrize("magic", [0, 1, 2])
@pytest.mark.parametrize("level_codec", [(Compression.GZIP, 1), (Compression.LZ4, 3), (Compression.ZSTD, -5)])
def test_levels_are_read_back(magic: int, level_codec: tuple[Compression, int]) -> None:
    codec, level = level_codec
    if codec not in CODECS[magic]:
        return
    records = _records(30, headers=magic == 2, timestamps=magic > 0)
    data = encode_entry(new_batch(records, magic=magic, compression=codec), level=level)
    assert [r[2:4] for r in _kafka_python_records(data)] == [(r.key, r.value) for r in records]


def _kp_v2(records: tuple[Record, ...], **kw: Any) -> bytes:
    builder = DefaultRecordBatchBuilder(
        magic=2, compression_type=0, is_transactional=kw.get("txn", False), producer_id=kw.get("pid", -1),
        producer_epoch=kw.get("epoch", -1), base_sequence=kw.get("seq", -1), batch_size=1 << 30,
    )  # fmt: skip
    base = records[0].offset
    for r in records:
        builder.append(
            r.offset - base, r.timestamp, r.key, r.value, [(h.key.decode(), h.value) for h in r.headers]
        )
    return bytes(builder.build())


def test_kafka_python_v2_builder_writes_the_same_bytes() -> None:
    records = tuple(replace(r, offset=r.offset - 1000) for r in _records(40, headers=True))
    ours = new_batch(records, magic=2, partition_leader_epoch=0)
    assert encode_entry(ours) == _kp_v2(records)
    idem = new_batch(
        records, magic=2, partition_leader_epoch=0, producer_id=7, producer_epoch=3, base_sequence=2**31 - 5
    )
    idem = idem._replace(isTransactional=True)
    assert encode_entry(idem) == _kp_v2(records, txn=True, pid=7, epoch=3, seq=2**31 - 5)


@pytest.mark.parametrize("magic", [0, 1])
def test_kafka_python_legacy_builder_writes_the_same_bytes(magic: int) -> None:
    records = _records(25, headers=False, timestamps=magic == 1)
    builder = LegacyRecordBatchBuilder(magic=magic, compression_type=0, batch_size=1 << 30)
    for r in records:
        builder.append(r.offset, r.timestamp if magic else None, r.key, r.value)
    assert encode_entry(new_batch(records, magic=magic)) == bytes(builder.build())


# --- the codecs' framing, as Kafka writes it -------------------------------------------------------------


def test_lz4_frame_is_kafkas() -> None:
    data = b"0123456789abcdef" * 10000  # three 64 KiB blocks
    v1 = compress(Compression.LZ4, data, magic=1)
    v0 = compress(Compression.LZ4, data, magic=0)
    assert v1[4:6] == b"\x60\x40"  # independent blocks (Kafka reads no other), 64 KiB
    assert lz4.frame.decompress(v1) == data  # a standard frame with the right header checksum
    assert v0[:7] == kc.lz4_encode_old_kafka(b"x")[:7]  # magic 0: the old, wrong checksum
    assert v0[7:] == v1[7:]
    assert kc.lz4_decode_old_kafka(v0) == data
    assert compress(Compression.LZ4, b"", magic=2)[7:] == b"\x00\x00\x00\x00"  # header, end mark


def test_incompressible_lz4_blocks_are_stored_raw() -> None:
    data = bytes(range(256)) * 3 + os.urandom(70000)
    packed = compress(Compression.LZ4, data)
    assert packed[10] & 0x80 or packed[10 + 4 + (packed[7] | packed[8] << 8)] & 0x80
    assert decompress(Compression.LZ4, packed, 1 << 20) == data


def test_gzip_is_java_framed() -> None:
    packed = compress(Compression.GZIP, b"abc" * 1000, level=9)
    assert packed[:10] == b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
    assert kc.gzip_decode(packed) == b"abc" * 1000


def test_snappy_blocks_of_32k() -> None:
    data = bytes(range(256)) * 300  # 76800 bytes: three xerial blocks
    packed = compress(Compression.SNAPPY, data)
    assert kc.snappy_decode(packed) == data
    first = struct.unpack_from(">i", packed, 16)[0]
    assert kc.snappy_decode(packed[20 : 20 + first]) == data[:32768]


@pytest.mark.parametrize(
    ("codec", "level"),
    [(Compression.SNAPPY, 1), (Compression.NONE, 1), (Compression.GZIP, 0), (Compression.GZIP, 10),
     (Compression.LZ4, 18), (Compression.ZSTD, 23)],
)  # fmt: skip
def test_levels_outside_kafkas_range_are_refused(codec: Compression, level: int) -> None:
    with pytest.raises(UnsupportedEncodingError):
        compress(codec, b"abc", level=level)
    batch = new_batch(_records(2, headers=False), magic=2)
    with pytest.raises(UnsupportedEncodingError, match="level"):
        encode_entry(batch, compression=codec, level=level)


# --- what a format cannot carry is refused, never dropped ------------------------------------------------


def _refused(batch: Batch, match: str, compression: Compression | None = None) -> None:
    with pytest.raises(UnsupportedEncodingError, match=match):
        encode_entry(batch, compression=compression)


def test_refusals() -> None:
    with_headers = new_batch(_records(4, headers=True), magic=2)
    _refused(with_headers._replace(magic=1), "headers, which magic 1")
    _refused(with_headers._replace(magic=0), "magic 0")
    plain = new_batch(_records(4, headers=False), magic=1)
    _refused(plain, "zstd compression, which magic 1", Compression.ZSTD)
    _refused(plain._replace(magic=0), "timestamp .* which magic 0")
    _refused(plain._replace(producerId=5), "producer id")
    _refused(plain._replace(isTransactional=True), "transactional")
    _refused(plain._replace(partitionLeaderEpoch=3), "leader epoch")
    _refused(plain._replace(magic=3), "magic 3")
    _refused(plain._replace(records=None), "without its records")
    _refused(with_headers._replace(lastOffset=1001), "past the batch's lastOffset")
    _refused(with_headers._replace(isControl=True), "never compressed", Compression.GZIP)
    _refused(with_headers, "codec is unknown", Compression.UNKNOWN)
    far = new_batch(
        (new_record(0, 2**63 - 1, None, b"", (), -1, 0), new_record(1, -(2**63), None, b"", (), -1, 0)),
        magic=2,
    )
    _refused(far, "64-bit delta")
    _refused(with_headers._replace(baseOffset=1003), "offset delta")
    assert encode_refusals(plain) == []
    assert len(encode_refusals(plain._replace(producerId=1, partitionLeaderEpoch=1), Compression.ZSTD)) == 3


def test_empty_batches() -> None:
    """A v2 batch compaction emptied is kept; a v0/v1 batch of no records is no entry at all."""
    empty = new_batch((), magic=2, base_offset=5)._replace(lastOffset=9)
    (b,) = _decode(encode_entry(empty))
    assert (b.baseOffset, b.lastOffset, b.recordCount, b.records) == (5, 9, 0, ())
    assert entry_size(empty) == 61
    assert (
        encode_entry(empty._replace(magic=1, baseTimestamp=-1, maxTimestamp=-1), compression=Compression.GZIP)
        == b""
    )


# --- round trips ---------------------------------------------------------------------------------------

_bytes = st.one_of(st.none(), st.binary(max_size=40))
_header = st.builds(new_header, st.binary(max_size=10), _bytes)
_ts = st.one_of(st.integers(-1, 2**41), st.sampled_from([0, -1, 2**62, -(2**62), 2**63 - 1 - 2**40]))


@st.composite
def _batch(draw: st.DrawFn) -> Batch:
    magic = draw(st.sampled_from([0, 1, 2]))
    codec = draw(st.sampled_from(CODECS[magic]))
    n = draw(st.integers(0 if magic == 2 else 1, 12))
    offset = draw(st.integers(0, 2**40))
    base_ts = draw(_ts)
    records: list[Record] = []
    for _ in range(n):
        offset += draw(st.integers(0 if not records else 1, 1000))
        ts = (
            -1
            if magic == 0
            else draw(st.one_of(st.just(base_ts), st.integers(base_ts - 2**20, base_ts + 2**20)))
        )
        headers = tuple(draw(st.lists(_header, max_size=30))) if magic == 2 else ()
        records.append(new_record(offset, ts, draw(_bytes), draw(_bytes), headers, -1, 0))
    lat = draw(st.one_of(st.none(), _ts)) if magic > 0 else None
    kw: dict[str, Any] = {}
    if magic == 2 and draw(st.booleans()):
        kw = {"producer_id": draw(st.integers(0, 2**63 - 1)), "producer_epoch": draw(st.integers(0, 2**15 - 1)),
              "base_sequence": draw(st.integers(2**31 - 20, 2**31 - 1)), "partition_leader_epoch": draw(st.integers(0, 2**31 - 1))}  # fmt: skip
    return new_batch(
        tuple(records),
        magic=magic,
        compression=codec,
        base_offset=offset if not records else None,
        log_append_time=lat,
        **kw,
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_batch())
def test_round_trip(batch: Batch) -> None:
    data = encode_entry(batch)
    if batch.compression is Compression.NONE:
        assert entry_size(batch) == len(data)
    decoded = _decode(data)
    records = tuple(r for b in decoded for r in b.records or ())
    expected = batch.records or ()
    if batch.magic == 1 and batch.compression is Compression.NONE:
        # Plain v1 messages each carry the LogAppendTime itself, so there is no own time to keep.
        expected = tuple(replace(r, storedTimestamp=None) for r in expected)
    assert [(r.offset, r.timestamp, r.key, r.value, r.headers, r.storedTimestamp) for r in records] == [
        (r.offset, r.timestamp, r.key, r.value, r.headers, r.storedTimestamp) for r in expected
    ]
    if batch.magic == 2:
        (b,) = decoded
        assert b._replace(file="", position=-1, crc=0, sizeInBytes=0, records=None) == batch._replace(
            records=None
        )
        assert [r.sequence for r in records] == [
            -1 if batch.baseSequence < 0 else (batch.baseSequence + r.offset - batch.baseOffset) % 2**31
            for r in records
        ]
        assert encode_entry(b) == data  # and what we wrote is canonical: it re-encodes to itself
    for b in decoded:
        assert b.crcValid


def test_header_values_and_keys_survive() -> None:
    headers = (
        Header(b"", None),
        Header(b"k", b""),
        Header("\u00e9".encode(), b"\x00\xff"),
        Header(b"k", b"dup"),
    )
    batch = new_batch((new_record(0, 5, None, None, headers, -1, 0),), magic=2)
    (b,) = _decode(encode_entry(batch))
    assert b.records is not None and b.records[0].headers == headers


def test_new_batch_keeps_own_times_under_log_append_time() -> None:
    records = _records(3, headers=False)
    lat = new_batch(records, magic=2, log_append_time=5)
    again = new_batch(lat.records or (), magic=2, log_append_time=7)
    assert [r.storedTimestamp for r in again.records or ()] == [r.timestamp for r in records]
    assert (again.baseTimestamp, again.maxTimestamp) == (records[0].timestamp, 7)
    create = new_batch(lat.records or (), magic=2)  # CreateTime: the records' reported times are written
    assert (create.baseTimestamp, create.maxTimestamp) == (5, 5)
    (b,) = _decode(encode_entry(create))
    assert [r.timestamp for r in b.records or ()] == [5, 5, 5]
