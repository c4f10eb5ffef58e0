"""The segment writer: Kafka's own indexes reproduced, and the safety rules of every output.

Oracles: the real brokers' trimmed ``.index``/``.timeindex`` files in ``../shared/fixtures-real/``
(equal byte for byte), Kafka's lookup rules for any other segment (each offset entry points at the
start of the batch that ends at its offset; time entries grow and name a batch whose max timestamp
they are), and kafka-python reading back every segment written.
"""

from __future__ import annotations

import os
from dataclasses import replace
from itertools import accumulate
from pathlib import Path

import pytest
from kafka.record import MemoryRecords

from kafka_dump.errors import KafkaDumpError
from kafka_dump.log.index import OFFSET_ENTRY, TIME_ENTRY, IndexCheck
from kafka_dump.log.segment import read_segment
from kafka_dump.log.writer import IndexBuilder, SegmentWriter, write_segment
from kafka_dump.model import Batch, Compression, Record, new_header, new_record
from kafka_dump.wire import new_batch
from tests.conftest import FIXTURES, SHARED_REAL

REAL_INDEXES = sorted(SHARED_REAL.rglob("*.index")) if SHARED_REAL.is_dir() else []
REAL_INDEXED = [
    p for p in REAL_INDEXES if p.with_suffix(".log").exists() and p.with_suffix(".timeindex").exists()
]


def _batches(path: Path) -> list[Batch]:
    return [b for b in read_segment(path) if isinstance(b, Batch)]


def _entries(data: bytes, size: int) -> list[tuple[int, int]]:
    entry = OFFSET_ENTRY if size == 8 else TIME_ENTRY
    return [entry.unpack_from(data, i) for i in range(0, len(data), size)]


@pytest.mark.parametrize("index", REAL_INDEXED, ids=lambda p: str(p.relative_to(SHARED_REAL)))
def test_indexes_equal_the_brokers(index: Path, tmp_path: Path) -> None:
    """Appending the broker's own entries gives the broker's own .index and .timeindex, byte for byte."""
    log = index.with_suffix(".log")
    data = log.read_bytes()
    out = tmp_path / log.name
    with SegmentWriter(out) as w:
        for b in _batches(log):
            w.append(b, data[b.position : b.position + b.sizeInBytes])
    assert out.read_bytes() == data
    assert out.with_suffix(".index").read_bytes() == index.read_bytes()
    assert out.with_suffix(".timeindex").read_bytes() == index.with_suffix(".timeindex").read_bytes()


@pytest.mark.parametrize("index", REAL_INDEXED, ids=lambda p: str(p.relative_to(SHARED_REAL)))
def test_reencoded_uncompressed_segments_are_the_brokers(index: Path, tmp_path: Path) -> None:
    log = index.with_suffix(".log")
    batches = _batches(log)
    if any(b.compression is not Compression.NONE for b in batches):
        pytest.skip("compressed bytes depend on the codec library's version")
    written = write_segment(tmp_path / log.name, batches)
    for suffix in (".log", ".index", ".timeindex"):
        assert (tmp_path / log.name).with_suffix(suffix).read_bytes() == log.with_suffix(suffix).read_bytes()
    assert written.entries == len(batches)
    assert written.index_entries == len(index.read_bytes()) // 8


def test_real_indexes_are_not_all_trivial() -> None:
    if not REAL_INDEXED:
        pytest.skip("no real broker indexes here")
    assert max(len(p.read_bytes()) // 8 for p in REAL_INDEXED) > 100


def _records(n: int, start: int = 0, value: int = 300) -> tuple[Record, ...]:
    return tuple(
        new_record(start + i, 1_700_000_000_000 + (i * 37) % 1000, b"k%d" % i, b"v" * value, (), -1, 0)
        for i in range(n)
    )


def _kafka_accepts(log: Path, base: int) -> None:
    """Every index entry is one Kafka's lookups and DumpLogSegments' checks accept."""
    batches = _batches(log)
    by_position = {b.position: b for b in batches}
    last_offset = -1
    for rel, pos in _entries(log.with_suffix(".index").read_bytes(), 8):
        assert rel + base > last_offset
        last_offset = rel + base
        assert by_position[pos].lastOffset == base + rel  # DumpLogSegments: the batch's last offset
    ends = {b.lastOffset: i for i, b in enumerate(batches)}
    running = list(accumulate((b.maxTimestamp for b in batches), max))
    last_ts = -1
    for ts, rel in _entries(log.with_suffix(".timeindex").read_bytes(), 12):
        assert ts > last_ts
        last_ts = ts
        i = ends[base + rel]  # a batch ends at the entry's offset...
        assert batches[i].maxTimestamp == ts == running[i]  # ...with the largest timestamp so far
    check = IndexCheck(log)  # and verify-crc's index check finds nothing either
    for b in batches:
        check.batch(b)
    assert check.finish() == []


@pytest.mark.parametrize("magic", [0, 1, 2])
@pytest.mark.parametrize("codec", [Compression.NONE, Compression.LZ4])
def test_written_segments_are_read_by_kafka_python_and_indexed(
    magic: int, codec: Compression, tmp_path: Path
) -> None:
    base = 1000
    records = _records(400, base)
    groups = [records[i : i + 7] for i in range(0, len(records), 7)]
    if magic == 0:
        groups = [tuple(replace(r, timestamp=-1) for r in g) for g in groups]
    batches = [new_batch(g, magic=magic, compression=codec) for g in groups]
    out = tmp_path / f"{base:020d}.log"
    written = write_segment(out, batches)
    assert written.base_offset == base and written.size == out.stat().st_size
    assert written.index_entries >= 2
    data = MemoryRecords(out.read_bytes())
    seen = []
    while data.has_next():
        seen += [(r.offset, r.key) for r in data.next_batch()]
    assert seen == [(r.offset, r.key) for r in records]
    _kafka_accepts(out, base)


def test_index_entries_follow_the_interval() -> None:
    ib = IndexBuilder(100, interval_bytes=100)
    for i, size in enumerate([60, 60, 60, 10, 200, 5]):
        ib.add(size, 100 + i, 100 + i, 50 - i if i < 4 else 80)
    ib.close()
    # position 120 is the first past 100 bytes since 0; then 190+200-120 > 100 at 390.
    assert ib.offset_entries == [(2, 120), (5, 390)]
    # at position 120 the max so far is 50 at offset 100; at 390, 80 at offset 104; close adds nothing new.
    assert ib.time_entries == [(50, 0), (80, 4)]


def test_offsets_must_grow_and_fit_the_base(tmp_path: Path) -> None:
    batches = [new_batch(_records(2, 10), magic=2), new_batch(_records(2, 11), magic=2)]
    with pytest.raises(KafkaDumpError, match="offsets must grow"):
        write_segment(tmp_path / "a.log", batches)
    with pytest.raises(KafkaDumpError, match="does not fit"):
        write_segment(tmp_path / f"{20:020d}.log", batches[:1])
    assert list(tmp_path.iterdir()) == []  # nothing left behind


def test_empty_output_is_a_valid_empty_segment(tmp_path: Path) -> None:
    written = write_segment(tmp_path / f"{5:020d}.log", [])
    for suffix in (".log", ".index", ".timeindex"):
        assert (tmp_path / f"{5:020d}{suffix}").read_bytes() == b""
    assert (written.entries, written.size, written.base_offset) == (0, 0, 5)
    assert _batches(tmp_path / f"{5:020d}.log") == []


def test_never_over_an_existing_path_unless_told(tmp_path: Path) -> None:
    out = tmp_path / "out.log"
    out.write_bytes(b"keep")
    with pytest.raises(KafkaDumpError, match="already exists"):
        write_segment(out, [new_batch(_records(3), magic=2)])
    assert out.read_bytes() == b"keep"
    write_segment(out, [new_batch(_records(3), magic=2)], overwrite=True)
    assert len(_batches(out)) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.index", "out.log", "out.timeindex"]


def test_existing_index_counts_too(tmp_path: Path) -> None:
    (tmp_path / "out.timeindex").write_bytes(b"")
    with pytest.raises(KafkaDumpError, match="already exists"):
        write_segment(tmp_path / "out.log", [])
    write_segment(tmp_path / "out.log", [], indexes=False)
    assert (tmp_path / "out.log").exists() and not (tmp_path / "out.index").exists()


def test_never_onto_the_file_being_read(tmp_path: Path) -> None:
    src = tmp_path / "src.log"
    src.write_bytes((FIXTURES / "v2-none.log").read_bytes())
    alias = tmp_path / "alias.log"
    os.link(src, alias)  # another name, the same inode
    for target in (src, alias):
        with pytest.raises(KafkaDumpError, match="being read"):
            write_segment(target, _batches(src), overwrite=True, sources=[src])
    assert src.read_bytes() == (FIXTURES / "v2-none.log").read_bytes()


def test_nor_onto_the_indexes_of_the_file_being_read(tmp_path: Path) -> None:
    src = tmp_path / "src.log"
    src.write_bytes((FIXTURES / "v2-none.log").read_bytes())
    (tmp_path / "src.index").write_bytes(b"")
    os.link(tmp_path / "src.index", tmp_path / "out.index")
    with pytest.raises(KafkaDumpError, match="being read"):
        write_segment(tmp_path / "out.log", _batches(src), overwrite=True, sources=[src])


def test_a_target_that_appears_meanwhile_is_not_clobbered(tmp_path: Path) -> None:
    out = tmp_path / "out.log"
    w = SegmentWriter(out)
    w.append(new_batch(_records(3), magic=2))
    out.with_suffix(".index").write_bytes(b"theirs")
    with pytest.raises(KafkaDumpError, match="already exists"):
        w.commit()
    assert out.with_suffix(".index").read_bytes() == b"theirs"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.index"]  # our half-written output is gone


def test_an_exception_leaves_nothing(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError), SegmentWriter(tmp_path / "out.log") as w:
        w.append(new_batch(_records(3), magic=2))
        raise RuntimeError("stop")
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(KafkaDumpError, match="already committed or aborted"):
        w.append(new_batch(_records(3), magic=2))


def test_missing_directory(tmp_path: Path) -> None:
    with pytest.raises(KafkaDumpError, match="no such directory"):
        write_segment(tmp_path / "nope" / "out.log", [])


def test_uncompressed_legacy_batches_become_one_entry_per_record(tmp_path: Path) -> None:
    out = tmp_path / "out.log"
    records = tuple(r for r in _records(5))
    write_segment(out, [new_batch(records, magic=1)])
    batches = _batches(out)
    assert [b.lastOffset for b in batches] == [0, 1, 2, 3, 4]
    assert [b.maxTimestamp for b in batches] == [r.timestamp for r in records]


def test_headers_survive_a_segment(tmp_path: Path) -> None:
    rec = new_record(0, 1, None, b"v", (new_header(b"h", None),), -1, 0)
    write_segment(tmp_path / "out.log", [new_batch((rec,), magic=2)])
    (b,) = _batches(tmp_path / "out.log")
    assert b.records is not None and b.records[0].headers == rec.headers


REAL_LOGS = sorted(p for p in SHARED_REAL.rglob("*.log") if p.is_file()) if SHARED_REAL.is_dir() else []


@pytest.mark.parametrize("log", REAL_LOGS + sorted(FIXTURES.glob("*.log")), ids=lambda p: p.name)
def test_every_segment_we_have_is_indexed_as_kafka_accepts(log: Path, tmp_path: Path) -> None:
    data = log.read_bytes()
    batches = [b for b in _batches(log) if b.crcValid]
    out = tmp_path / (
        log.name if log.name[:20].isdigit() else f"{batches[0].baseOffset if batches else 0:020d}.log"
    )
    with SegmentWriter(out, index_interval_bytes=256) as w:
        for b in batches:
            w.append(b, data[b.position : b.position + b.sizeInBytes])
    _kafka_accepts(out, int(out.name[:20]))
