"""``kdump stats --compare``: exact sizes of the same records in every format and codec.

The uncompressed sizes are checked against kafka-python's builders (an independent writer) for the
same records; the compressed encodings are checked by reading them back with kafka-python. The
seed document's example (1000 records a batch, 100-byte values, no key) is a test of its own.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from kafka.record import MemoryRecords
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatchBuilder

from kafka_dump.analysis.compare import (
    ALL_ENCODINGS,
    LEGACY_CODECS,
    V2_CODECS,
    CompareOptions,
    Comparison,
    as_legacy_batch,
    as_v2_batch,
    encoded_sizes,
)
from kafka_dump.analysis.stats import SegmentStats
from kafka_dump.analysis.stats_walk import iter_stats
from kafka_dump.cli import main
from kafka_dump.log.segment import read_segment
from kafka_dump.model import Batch, Compression
from kafka_dump.wire import encode_entry
from tests.batches import BIG, GZIP, NONE, SNAPPY, TS0, ZSTD, Rec, default_records, legacy_messages, v2_batch
from tests.conftest import FIXTURES

ENV = {"COLUMNS": "160", "NO_COLOR": "1"}


def run(*args: str) -> Result:
    return CliRunner().invoke(main, ["stats", *args], env=ENV)


def compare_json(*args: str) -> list[dict[str, Any]]:
    result = run("--compare", "--format", "json", *args)
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.stdout.splitlines()]


def sizes(obj: dict[str, Any]) -> dict[tuple[int, str], int]:
    return {(e["magic"], e["compression"]): e["bytes"] for e in obj["compare"]["encodings"]}


def compare(path: Path, options: CompareOptions) -> tuple[SegmentStats, Comparison]:
    found: list[Comparison] = []

    def listener(p: Path) -> Comparison:
        found.append(Comparison(options, file_bytes=p.stat().st_size))
        return found[-1]

    last = list(iter_stats([path], listener=listener))[-1]
    assert isinstance(last, SegmentStats)
    return last, found[0].finish()


# --- kafka-python's sizes for the same records ------------------------------------------------------


def kp_v2(records: list[Rec], *, codec: int = NONE, base_offset: int = 0, timestamp: int = TS0) -> bytes:
    builder = DefaultRecordBatchBuilder(
        magic=2, compression_type=codec, is_transactional=0,
        producer_id=-1, producer_epoch=-1, base_sequence=-1, batch_size=BIG,
    )  # fmt: skip
    for i, (key, value, headers) in enumerate(records):
        builder.append(i, timestamp=timestamp + i, key=key, value=value, headers=headers)
    return bytes(builder.build())


def kp_legacy(records: list[Rec], magic: int, *, codec: int = NONE, timestamp: int = TS0) -> bytes:
    builder = LegacyRecordBatchBuilder(magic=magic, compression_type=codec, batch_size=BIG)
    for i, (key, value, _) in enumerate(records):
        builder.append(i, timestamp=(timestamp + i) if magic else None, key=key, value=value)
    return bytes(builder.build())


def test_uncompressed_sizes_equal_kafka_python_builders(tmp_path: Path) -> None:
    batches = [default_records(n, seed=n) for n in (1, 7, 130)]  # headers, null keys, 2-byte deltas
    segment = b""
    base = 0
    for recs in batches:
        segment += v2_batch(recs, base_offset=base)
        base += len(recs)
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(segment)
    _, c = compare(path, CompareOptions())
    got = {(m, codec.label): n for (m, codec), n in c.sizes.items()}
    assert got[(2, "none")] == sum(len(kp_v2(r)) for r in batches) == len(segment)
    assert got[(1, "none")] == sum(len(kp_legacy(r, 1)) for r in batches)
    assert got[(0, "none")] == sum(len(kp_legacy(r, 0)) for r in batches)
    assert c.records == sum(len(r) for r in batches)
    assert c.now_bytes == len(segment) and c.current_encoding == (2, Compression.NONE)


@pytest.mark.parametrize(("magic", "codec"), [(m, c) for m, c in ALL_ENCODINGS], ids=str)
def test_every_encoding_reads_back_with_kafka_python(magic: int, codec: Compression) -> None:
    v2 = next(b for b in read_segment(FIXTURES / "v2-headers.log") if isinstance(b, Batch))
    records = v2.records or ()
    target = v2 if magic == 2 else as_legacy_batch(v2, records, magic)
    data = encode_entry(target, compression=codec)
    read = []
    mr = MemoryRecords(data)
    while (b := mr.next_batch()) is not None:
        read.extend((r.offset, r.key, r.value) for r in b)
    assert read == [(r.offset, r.key, r.value) for r in records]


def test_plain_v1_messages_grouped_by_records_and_bytes(tmp_path: Path) -> None:
    recs: list[Rec] = [(None, b"x" * 100, []) for _ in range(250)]
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(legacy_messages([(k, v) for k, v, _ in recs], magic=1))
    _, by_records = compare(path, CompareOptions(batch_records=100))
    assert by_records.groups == 3  # 100 + 100 + 50
    assert by_records.sizes[(2, Compression.NONE)] == sum(
        len(kp_v2(recs[i : i + 100], timestamp=TS0 + i)) for i in (0, 100, 200)
    )
    _, by_bytes = compare(path, CompareOptions())
    # 16 KiB of v2 records: the 61-byte header, then 146 records of 109-111 bytes.
    assert by_bytes.groups == 2
    _, both = compare(path, CompareOptions(batch_records=100, batch_bytes=5000))
    assert both.groups == 6  # 5,000 bytes hold 44 records; every 100-record group is cut below that


def test_a_problem_closes_the_open_group() -> None:
    _, c = compare(FIXTURES / "corrupt-crc.log", CompareOptions())
    assert c.records == 6 and c.groups == 2


def test_sample_compares_batches_spread_over_the_file(tmp_path: Path) -> None:
    segment = b"".join(v2_batch(default_records(5, seed=i), base_offset=5 * i) for i in range(40))
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(segment)
    _, c = compare(path, CompareOptions(sample=4))
    assert c.groups == 40 and c.compared == 4 and c.records == 20
    assert c.now_bytes == c.sizes[(2, Compression.NONE)]


def test_control_batches_are_not_data_below_v2() -> None:
    stats, c = compare(FIXTURES / "txn-control.log", CompareOptions())
    assert c.records == stats.data_records
    # V2 uncompressed: every batch (control ones too) with its records unpacked, as stats counts them.
    assert c.sizes[(2, Compression.NONE)] == stats.uncompressed_bytes == 811
    assert c.now_bytes == stats.disk_bytes and c.current_encoding is None  # v2 none and v2 gzip
    assert c.sizes[(2, Compression.GZIP)] > 0


def test_up_conversion_batch_fields() -> None:
    wrapper = next(b for b in read_segment(FIXTURES / "v1-gzip.log") if isinstance(b, Batch))
    records = wrapper.records or ()
    v2 = as_v2_batch(wrapper, records)
    assert (v2.magic, v2.producerId, v2.baseSequence, v2.partitionLeaderEpoch) == (2, -1, -1, -1)
    assert v2.baseOffset == records[0].offset and v2.lastOffset == records[-1].offset
    assert v2.baseTimestamp == records[0].timestamp


# --- the seed document's example ---------------------------------------------------------------------

_WORDS = [
    "kafka",
    "broker",
    "topic",
    "partition",
    "offset",
    "segment",
    "record",
    "batch",
    "producer",
    "consumer",
    "log",
    "index",
]


def seed_records(n: int = 1000, size: int = 100) -> list[Rec]:
    """``n`` records with no key and ``size``-byte random-ish text values (a fixed seed)."""
    rng = random.Random(2026)
    out: list[Rec] = []
    for _ in range(n):
        words = []
        while len(" ".join(words)) < size:
            words.append(rng.choice(_WORDS) + str(rng.randrange(1000)))
        out.append((None, " ".join(words).encode()[:size], []))
    return out


@pytest.mark.parametrize("codec", [NONE, GZIP], ids=["v1-none", "v1-gzip"])
def test_seed_example_exact_figures(codec: int, tmp_path: Path) -> None:
    recs = seed_records()
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(legacy_messages([(k, v) for k, v, _ in recs], magic=1, codec=codec))
    (obj,) = compare_json("--batch-records", "1000", str(path))[:1]
    got = sizes(obj)
    # kafka-python's builders, for the same 1000 records in one batch:
    assert got[(0, "none")] == len(kp_legacy(recs, 0)) == 126_000  # 12 + 14 + 100 a record
    assert got[(1, "none")] == len(kp_legacy(recs, 1)) == 134_000  # 12 + 22 + 100
    assert got[(2, "none")] == len(kp_v2(recs)) == 110_933
    # 61 + 64 records of 109 bytes (deltas below 64: one byte each) + 936 of 111 (two-byte deltas).
    assert 61 + 64 * 109 + 936 * 111 == 110_933
    per = {(e["magic"], e["compression"]): e["bytesPerRecord"] for e in obj["compare"]["encodings"]}
    assert (per[(0, "none")], per[(1, "none")], per[(2, "none")]) == (126.0, 134.0, 110.933)
    meta = {(e["magic"], e["compression"]): e["metadataBytesPerRecord"] for e in obj["compare"]["encodings"]}
    assert (meta[(0, "none")], meta[(1, "none")], meta[(2, "none")]) == (26.0, 34.0, 10.933)
    assert obj["compare"]["records"] == 1000 and obj["compare"]["batches"] == 1
    current = [e for e in obj["compare"]["encodings"] if e["current"]]
    assert [(e["magic"], e["compression"]) for e in current] == [(1, "gzip" if codec else "none")]
    assert obj["compare"]["nowBytes"] == path.stat().st_size
    for magic in (0, 1, 2):
        for name in ("gzip", "snappy", "lz4"):
            assert got[(magic, name)] < got[(magic, "none")]
    # Snappy and zstd: kafka-python's builders give the same bytes, so the same sizes. (Its gzip
    # uses another level and its lz4 other frame settings than Kafka's, which kdump writes.)
    assert got[(2, "snappy")] == len(kp_v2(recs, codec=SNAPPY))
    assert got[(2, "zstd")] == len(kp_v2(recs, codec=ZSTD)) < got[(2, "none")]
    assert got[(1, "snappy")] == len(kp_legacy(recs, 1, codec=SNAPPY))
    assert got[(0, "snappy")] == len(kp_legacy(recs, 0, codec=SNAPPY))


# --- the command's options -------------------------------------------------------------------------------


def test_codecs_restrict_the_rows_and_v1_none_stays() -> None:
    (obj, _) = compare_json("--codecs", "lz4,zstd", str(FIXTURES / "v2-none.log"))
    assert sorted(sizes(obj)) == [(0, "lz4"), (1, "lz4"), (1, "none"), (2, "lz4"), (2, "zstd")]
    result = run("--compare", "--codecs", "brotli", str(FIXTURES / "v2-none.log"))
    assert result.exit_code == 2 and "brotli" in result.stderr


def test_level_changes_compressed_sizes_only_where_it_applies(tmp_path: Path) -> None:
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(v2_batch(default_records(250, compressible=True)))
    low = sizes(compare_json("--level", "1", str(path))[0])
    high = sizes(compare_json("--level", "9", str(path))[0])
    default = sizes(compare_json(str(path))[0])
    assert low[(2, "none")] == high[(2, "none")] == default[(2, "none")]
    assert low[(2, "snappy")] == high[(2, "snappy")] == default[(2, "snappy")]  # snappy has no level
    assert low[(2, "gzip")] != high[(2, "gzip")]
    result = run("--compare", "--level", "99", str(path))
    assert result.exit_code == 2 and "--level 99" in result.stderr and "Traceback" not in result.output


def test_compare_options_need_compare() -> None:
    for args in (["--batch-records", "5"], ["--sample", "2"], ["--level", "3"], ["--batch-bytes", "9"]):
        result = run(*args, str(FIXTURES / "v2-none.log"))
        assert result.exit_code == 2 and "need --compare" in result.stderr


def test_table_marks_the_files_encoding_and_lists_losses() -> None:
    result = run("--compare", "--no-charts", str(FIXTURES / "v2-headers.log"))
    assert result.exit_code == 0
    out = result.stdout
    assert "Size in every format" in out and "now (on disk)" in out
    marked = [line for line in out.splitlines() if "◀" in line]
    assert len(marked) == 0  # v2-headers mixes none and gzip batches
    assert "The file mixes encodings: V2 none" in out
    assert "What a downgrade loses" in out and "records with headers" in out
    single = run("--compare", "--no-charts", str(FIXTURES / "v1-gzip.log")).stdout
    (line, note) = [ln for ln in single.splitlines() if "◀" in ln]
    assert "V1 gzip ◀" in line and note == "◀ the file's encoding."


def test_json_compare_object_and_total(tmp_path: Path) -> None:
    objs = compare_json("--sample", "1", str(FIXTURES / "v2-none.log"), str(FIXTURES / "v1-none.log"))
    assert [o["type"] for o in objs] == ["file", "file", "total"]
    c = objs[0]["compare"]
    assert c["sample"] == 1 and c["batchesCompared"] == 1 and c["batches"] == 3
    assert objs[2]["compare"]["records"] == objs[0]["compare"]["records"] + objs[1]["compare"]["records"]
    for e in c["encodings"]:
        assert e["bytesPerRecord"] == round(e["bytes"] / c["records"], 4)
        assert e["savingVsNow"] == round(1 - e["bytes"] / c["nowBytes"], 4)


def fixture_batches() -> list[Batch]:
    out = []
    for path in sorted(FIXTURES.glob("*.log")):
        out.extend(b for b in read_segment(path) if isinstance(b, Batch) and b.crcValid and not b.isControl)
    return out


@pytest.mark.parametrize("level", [None, 3])
def test_sizes_from_one_encoding_equal_encode_entry_for_every_codec(level: int | None) -> None:
    """``encoded_sizes`` encodes the records once; each size must still be encode_entry's length."""
    opts = CompareOptions(level=level)
    checked = 0
    for b in fixture_batches():
        records = b.records or ()
        if not records:
            continue
        v2 = b if b.magic == 2 else as_v2_batch(b, records)
        for target, codecs in (
            (v2, V2_CODECS),
            *((as_legacy_batch(v2, records, m), LEGACY_CODECS) for m in (0, 1)),
        ):
            got = encoded_sizes(target, codecs, opts.level_for)
            for c in codecs:
                assert got[c] == len(encode_entry(target, compression=c, level=opts.level_for(c))), (b, c)
                checked += 1
    assert checked > 500


def _rows(out: str) -> dict[str, list[str]]:
    """The compare table's rows by encoding (marks stripped): [bytes, per record, metadata/rec, changes]."""
    rows = {}
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip("│").split("│")]
        if line.startswith("│") and len(cells) == 6:
            rows[cells[0].replace(" ◀", "").replace(" ★", "")] = [cells[0], *cells[1:]]
    return rows


def test_change_vs_now_reads_as_a_change_and_the_smallest_is_marked() -> None:
    """Smaller is negative (``-59.9%`` is a saving), larger positive with its sign; ★ marks the smallest."""
    out = run("--compare", "--no-charts", str(FIXTURES / "v1-none.log")).stdout
    assert "┃ change vs now ┃ change vs V1 none ┃" in out
    rows = _rows(out)
    obj = compare_json(str(FIXTURES / "v1-none.log"))[0]["compare"]
    now = obj["nowBytes"]
    for e in obj["encodings"]:
        name = f"V{e['magic']} {e['compression']}"
        change = (e["bytes"] / now - 1) * 100
        shown = "0.0%" if round(change, 1) == 0 else f"{change:+.1f}%"
        assert rows[name][4] == shown, name
    smallest = min(e["bytes"] for e in obj["encodings"])
    starred = [cells[0] for cells in rows.values() if "★" in cells[0]]
    assert starred and all(
        int(rows[s.replace(" ★", "").replace(" ◀", "")][1].replace(",", "")) == smallest for s in starred
    )
    assert rows["V0 gzip"][4] == "-59.9%" and rows["V1 none"][0] == "V1 none ◀"
    assert "★ the smallest encoding." in out and "negative when smaller" in out
    grown = _rows(run("--compare", "--no-charts", str(FIXTURES / "v0-lz4.log")).stdout)
    assert grown["V0 lz4"][4] == "+0.4%"


def test_a_row_that_differs_from_the_files_own_encoding_is_explained() -> None:
    out = run("--compare", "--no-charts", str(FIXTURES / "v2-lz4.log")).stdout
    note = out[out.index("◀ the file's") : out.index("★ the smallest")]
    assert " ".join(note.split()) == (
        "◀ the file's encoding, V2 lz4: encoded again it takes 607 bytes against 631 on disk (-3.8%): the "
        "same records in the same batches, compressed by kdump's codec library and level, not the producer's."
    )
