"""``kdump convert`` against Kafka's formats: what an independent reader sees, and exact bytes.

* kafka-python (``kafka.record.MemoryRecords``) reads every output (each target magic and codec)
  and gets the records it reads from the input, less what the target cannot carry.
* Where the format is canonical (uncompressed), converting to the same magic without re-batching
  gives the input's bytes back, for every such file of Kafka's own Java classes and of real brokers;
  v1 -> v2 -> v1 gives back the v1 bytes.
* Hypothesis: random record sets written by kafka-python's builders, converted to every magic and
  codec, decode to the same records less what the target cannot carry.
"""

from __future__ import annotations

import functools
import itertools
import struct
from pathlib import Path
from typing import NamedTuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.record import MemoryRecords
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatchBuilder

from kafka_dump.analysis.convert import ConvertOptions, record_fields
from kafka_dump.analysis.convert_run import convert_segment
from kafka_dump.log.segment import read_segment
from kafka_dump.model import Batch, Compression, Problem, ProblemKind
from tests.conftest import FIXTURES, SHARED_REAL

JAVA = SHARED_REAL / "kafka-3.8.0-java"
CODECS = [Compression.NONE, Compression.GZIP, Compression.SNAPPY, Compression.LZ4, Compression.ZSTD]
TARGETS = [(m, c) for m in (2, 1, 0) for c in CODECS if not (c is Compression.ZSTD and m < 2)]
INPUTS = [
    "v0-none.log",
    "v0-lz4.log",
    "v1-gzip.log",
    "v1-none.log",
    "v1-logappendtime.log",
    "v2-headers.log",
    "v2-zstd.log",
    "compacted-gaps.log",
    "txn-control.log",
    "mixed-magic.log",
]


def convert(src: Path, dst: Path, **options: object) -> Path:
    convert_segment(src, dst, ConvertOptions(**options), index=False)  # type: ignore[arg-type]
    return dst


KpRecord = tuple[int, int | None, bytes | None, bytes | None, tuple[tuple[str, bytes | None], ...]]


def kafka_python_records(path: Path) -> list[KpRecord]:
    """The data records kafka-python reads from a segment (control batches left out)."""
    records = MemoryRecords(path.read_bytes())
    out: list[KpRecord] = []
    while records.has_next():
        batch = records.next_batch()
        assert batch is not None
        if getattr(batch, "is_control_batch", False):
            continue
        for r in batch:
            assert r.validate_crc()
            headers = tuple((k, v) for k, v in (r.headers or []))
            out.append((r.offset, r.timestamp, r.key, r.value, headers))
    return out


def expected_for(records: list[KpRecord], magic: int, timestamp: int | None = None) -> list[KpRecord]:
    """What a target of ``magic`` carries of kafka-python's records (a v0 record's time is None)."""
    out = []
    for offset, ts, key, value, headers in records:
        if magic == 0:
            ts = None
        elif ts is None:
            ts = -1 if timestamp is None else timestamp
        out.append((offset, ts, key, value, headers if magic == 2 else ()))
    return out


@pytest.mark.parametrize(("magic", "codec"), TARGETS, ids=[f"v{m}-{c.label}" for m, c in TARGETS])
@pytest.mark.parametrize("name", INPUTS)
def test_kafka_python_reads_every_output(tmp_path: Path, name: str, magic: int, codec: Compression) -> None:
    src = FIXTURES / name
    drop = name == "txn-control.log" and magic < 2
    dst = convert(src, tmp_path / "out.log", to_magic=magic, compression=codec, drop_control=drop)
    want = expected_for(kafka_python_records(src), magic)
    assert want
    assert kafka_python_records(dst) == want


def test_kafka_python_reads_v0_given_a_timestamp(tmp_path: Path) -> None:
    src = FIXTURES / "v0-gzip.log"
    dst = convert(src, tmp_path / "out.log", timestamp=1_700_000_000_123)
    assert kafka_python_records(dst) == expected_for(kafka_python_records(src), 2, 1_700_000_000_123)


# -- byte for byte, where the format is canonical ------------------------------------------------


class Survey(NamedTuple):
    """What a file holds, read once at collection: which tests it is an input for."""

    readable: bool
    clean: bool  # every entry decodes with a valid CRC (a tail is fine: it is not copied)
    magics: frozenset[int]
    uncompressed: bool
    size: int


@functools.cache
def survey(path: Path) -> Survey:
    try:
        items = list(read_segment(path))
    except Exception:
        return Survey(False, False, frozenset(), False, 0)
    batches = [i for i in items if isinstance(i, Batch)]
    corrupt = any(isinstance(i, Problem) and i.kind is ProblemKind.CORRUPT for i in items)
    return Survey(
        True,
        not corrupt and all(b.crcValid for b in batches),
        frozenset(b.magic for b in batches),
        len(batches) == len(items) and all(b.compression is Compression.NONE for b in batches),
        path.stat().st_size,
    )


OURS = sorted(FIXTURES.glob("*.log"))
REAL = sorted(p for p in SHARED_REAL.rglob("*.log") if p.is_file()) if SHARED_REAL.is_dir() else []
JAVA_FILES = sorted(JAVA.glob("*.log")) if JAVA.is_dir() else []
UNCOMPRESSED = [p for p in [*OURS, *REAL] if survey(p).uncompressed and len(survey(p).magics) <= 1]


def _magic(path: Path) -> int:
    return min(survey(path).magics, default=2)


def test_every_uncompressed_java_fixture_is_a_candidate() -> None:
    if not JAVA.is_dir():
        pytest.skip("../shared/fixtures-real is absent")
    names = {p.name for p in UNCOMPRESSED if p.parent == JAVA}
    assert {"v0_none.log", "v1_none.log", "v2_none.log", "empty.log"} <= names


def _id(path: Path) -> str:
    base = FIXTURES if path.is_relative_to(FIXTURES) else SHARED_REAL
    return str(path.relative_to(base))


@pytest.mark.parametrize("src", UNCOMPRESSED, ids=_id)
def test_same_magic_reproduces_the_input_byte_for_byte(tmp_path: Path, src: Path) -> None:
    dst = convert(src, tmp_path / "out.log", to_magic=_magic(src))
    assert dst.read_bytes() == src.read_bytes()


SAME_MAGIC = [p for p in [*OURS, *JAVA_FILES] if survey(p).clean and len(survey(p).magics) == 1]


@pytest.mark.parametrize("src", SAME_MAGIC, ids=_id)
def test_same_magic_keeps_every_entry_and_the_bytes_of_the_uncompressed_ones(
    tmp_path: Path, src: Path
) -> None:
    """Compressed entries decode to the same records; uncompressed ones (control batches, LogAppendTime,
    compacted batches, plain messages) are the same bytes."""
    dst = convert(src, tmp_path / "out.log", to_magic=_magic(src))
    before = [b for b in read_segment(src) if isinstance(b, Batch)]
    after = [b for b in read_segment(dst) if isinstance(b, Batch)]
    assert len(after) == len(before)
    data_in, data_out = src.read_bytes(), dst.read_bytes()
    for b, a in zip(before, after, strict=True):
        assert [record_fields(r) for r in a.records or ()] == [record_fields(r) for r in b.records or ()]
        # A v0/v1 wrapper's offset is its last inner offset, as Kafka writes it, also where the
        # input's producer left 0 there (``v1-wrapper-offset0.log``).
        wrapper = b.magic < 2 and b.compression is not Compression.NONE and b.records
        last = b.records[-1].offset if wrapper and b.records else b.lastOffset
        assert (a.compression, a.baseOffset, a.lastOffset, a.maxTimestamp) == (
            b.compression, b.baseOffset, last, b.maxTimestamp,
        )  # fmt: skip
        if b.compression is Compression.NONE:
            assert (
                data_out[a.position : a.position + a.sizeInBytes]
                == data_in[b.position : b.position + b.sizeInBytes]
            )


def _plain_log_append_time(path: Path) -> Path:
    """Plain v1 messages stamped by a broker with LogAppendTime (kafka-python's, then patched)."""
    from tests.batches import fix_legacy_crc, legacy_messages, legacy_records

    data = legacy_messages(legacy_records(6), magic=1)
    out = bytearray()
    pos = 0
    while pos < len(data):
        size = struct.unpack_from(">i", data, pos + 8)[0]
        entry = bytearray(data[pos : pos + 12 + size])
        entry[17] |= 0x08  # LogAppendTime
        struct.pack_into(">q", entry, 18, 1_700_000_999_000)
        out += fix_legacy_crc(entry)
        pos += 12 + size
    path.write_bytes(bytes(out))
    return path


ROUND_TRIPS = [
    p
    for p in (FIXTURES / "v1-none.log", FIXTURES / "v0-none.log", JAVA / "v1_none.log", JAVA / "v0_none.log")
    if p.exists()
]


@pytest.mark.parametrize(
    "src", [*ROUND_TRIPS, None], ids=lambda p: "v1-plain-logappendtime" if p is None else _id(p)
)
def test_v1_to_v2_to_v1_gives_the_v1_bytes_back(tmp_path: Path, src: Path | None) -> None:
    if src is None:
        src = _plain_log_append_time(tmp_path / "lat.log")
        assert {b.timestampType.label for b in read_segment(src) if isinstance(b, Batch)} == {"LogAppendTime"}
    assert survey(src).uncompressed
    magic = _magic(src)
    v2 = convert(src, tmp_path / "v2.log", to_magic=2)
    assert {b.magic for b in read_segment(v2) if isinstance(b, Batch)} == {2}
    back = convert(v2, tmp_path / "back.log", to_magic=magic)
    assert back.read_bytes() == src.read_bytes()


def test_plain_v1_keeps_one_message_per_entry(tmp_path: Path) -> None:
    src = FIXTURES / "v1-none.log"
    dst = convert(src, tmp_path / "out.log", to_magic=1)
    entries = [b for b in read_segment(dst) if isinstance(b, Batch)]
    assert [b.recordCount for b in entries] == [1] * len(entries)
    assert len(entries) == len(kafka_python_records(src))


# -- properties ------------------------------------------------------------------------------------

_PAYLOAD = st.none() | st.just(b"") | st.binary(min_size=1, max_size=40)
_HEADERS = st.lists(st.tuples(st.text(max_size=8), _PAYLOAD), max_size=12)
_TIMESTAMPS_V1 = st.sampled_from([-1, 0, 1, 2**63 - 1, 2**62, 1_700_000_000_000]) | st.integers(-1, 2**63 - 1)


@st.composite
def record_sets(draw: st.DrawFn) -> tuple[int, list[tuple[int, int, bytes | None, bytes | None, list]]]:  # type: ignore[type-arg]
    """(input magic, records): offsets with gaps, nulls, empty values, many headers, extreme times."""
    magic = draw(st.sampled_from([0, 1, 2]))
    n = draw(st.integers(1, 25))
    gaps = draw(st.lists(st.sampled_from([1, 1, 1, 2, 7, 1000]), min_size=n, max_size=n))
    offsets = list(itertools.accumulate(gaps, initial=draw(st.integers(0, 2**40))))[1:]
    if magic == 2:  # one v2 batch: every time delta from the first must fit
        base = draw(st.integers(0, 2**62))
        times = draw(st.lists(st.integers(base - 2**61, base + 2**61), min_size=n, max_size=n))
    elif magic == 1:
        times = draw(st.lists(_TIMESTAMPS_V1, min_size=n, max_size=n))
    else:
        times = [-1] * n
    out = []
    for o, t in zip(offsets, times, strict=True):
        headers = draw(_HEADERS) if magic == 2 else []
        out.append((o, t, draw(_PAYLOAD), draw(_PAYLOAD), headers))
    return magic, out


def _write_input(magic: int, records: list, path: Path) -> None:  # type: ignore[type-arg]
    """The input segment, written by kafka-python: one v2 batch, or one plain message per record."""
    if magic == 2:
        builder = DefaultRecordBatchBuilder(2, 0, 0, -1, -1, -1, batch_size=1 << 30)
        base = records[0][0]
        for o, t, k, v, h in records:
            builder.append(o - base, timestamp=t, key=k, value=v, headers=[(hk, hv) for hk, hv in h])
        data = bytearray(builder.build())
        struct.pack_into(">q", data, 0, base)
        path.write_bytes(bytes(data))
        return
    out = bytearray()
    for o, t, k, v, _ in records:
        builder = LegacyRecordBatchBuilder(magic, 0, batch_size=1 << 30)
        builder.append(o, timestamp=t if magic else None, key=k, value=v)
        out += builder.build()
    path.write_bytes(bytes(out))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    record_sets(),
    st.sampled_from(TARGETS),
    st.none() | st.integers(1, 9),
    st.none() | st.integers(1, 600),
)
def test_decode_of_convert_is_the_input_less_what_the_target_cannot_carry(
    tmp_path: Path,
    data: tuple[int, list],  # type: ignore[type-arg]
    target: tuple[int, Compression],
    batch_records: int | None,
    batch_bytes: int | None,
) -> None:
    magic, records = data
    to_magic, codec = target
    src, dst = tmp_path / "in.log", tmp_path / "out.log"
    dst.unlink(missing_ok=True)
    _write_input(magic, records, src)
    convert(
        src, dst, to_magic=to_magic, compression=codec, batch_records=batch_records, batch_bytes=batch_bytes
    )
    got = [record_fields(r) for b in read_segment(dst) if isinstance(b, Batch) for r in b.records or ()]
    want = []
    for o, t, k, v, h in records:
        headers = tuple((hk.encode(), hv) for hk, hv in h) if to_magic == 2 else ()
        want.append((o, -1 if to_magic == 0 else t, k, v, headers))
    assert [(*g[:4], tuple((x.key, x.value) for x in g[4])) for g in got] == want
    assert all(b.crcValid for b in read_segment(dst) if isinstance(b, Batch))
    # and kafka-python agrees, batch CRCs included
    assert [r[0] for r in kafka_python_records(dst)] == [w[0] for w in want]


# (the largest, 0.9 and 2.6 MB of KRaft metadata, add nothing the others lack but time)
REAL_CLEAN = [p for p in REAL if survey(p).clean and survey(p).magics and survey(p).size < 800_000]


@pytest.mark.parametrize("src", REAL_CLEAN, ids=_id)
def test_kafka_python_reads_every_real_segment_converted(tmp_path: Path, src: Path) -> None:
    """Real brokers' and Kafka's own segments, up to v2 as they are and down to v1 (gzip)."""
    want = kafka_python_records(src)
    up = convert(src, tmp_path / "v2.log", to_magic=2)
    assert kafka_python_records(up) == expected_for(want, 2)
    down = convert(src, tmp_path / "v1.log", to_magic=1, compression=Compression.GZIP, drop_control=True)
    assert kafka_python_records(down) == expected_for(want, 1)
