"""``kdump stats`` without ``--compare``: the bounded histograms, the figures of a file against what
kafka-python (the independent reader) reads from it, corrupt batches skipped, and the command's
outputs and exit codes."""

from __future__ import annotations

import itertools
import json
import math
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from hypothesis import example, given
from hypothesis import strategies as st
from kafka.record import MemoryRecords

from kafka_dump.analysis.histogram import BoundedCounter, SizeHistogram, TimeHistogram, bucket_low, bucket_of
from kafka_dump.analysis.stats import SegmentStats
from kafka_dump.analysis.stats_walk import iter_stats, progress_position
from kafka_dump.cli import main
from kafka_dump.errors import NotASegmentError
from kafka_dump.log.sources import find
from kafka_dump.render.charts import bar, sparkline
from kafka_dump.wire._gather_layout import NBUCKETS
from tests.batches import legacy_messages, legacy_records, v2_batch
from tests.conftest import FIXTURES, SHARED_REAL

ENV = {"COLUMNS": "120", "NO_COLOR": "1"}


def run(*args: str) -> Result:
    return CliRunner().invoke(main, ["stats", *args], env=ENV)


def gather(path: Path) -> SegmentStats:
    events = list(iter_stats([path]))
    last = events[-1]
    assert isinstance(last, SegmentStats)
    return last


def nearest_rank(values: list[int], percent: int) -> int:
    ordered = sorted(values)
    return ordered[max(1, math.ceil(percent * len(ordered) / 100)) - 1]


# --- bounded structures --------------------------------------------------------------------------


def test_buckets_are_exact_below_128_and_narrow_above() -> None:
    assert [bucket_of(v) for v in range(128)] == list(range(128))
    for v in [128, 129, 255, 256, 1000, 12345, 2**31 - 1, 2**40 + 7]:
        b = bucket_of(v)
        assert bucket_low(b) <= v < bucket_low(b + 1)
        assert bucket_low(b + 1) - bucket_low(b) <= max(1, v // 64)
    assert bucket_of(2**31 - 1) < 2000  # every int32 size fits in under 2,000 buckets


@given(st.lists(st.integers(min_value=0, max_value=2**31), min_size=1, max_size=300))
@example([41984, 41985])  # two values in the top bucket: the 1st percentile is the lower one
def test_percentiles_within_a_sixty_fourth_of_the_exact_ones(values: list[int]) -> None:
    h = SizeHistogram()
    h.add_all(values)
    assert (h.count, h.total, h.min, h.max) == (len(values), sum(values), min(values), max(values))
    for p in (1, 50, 99, 100):
        exact = nearest_rank(values, p)
        got = h.percentile(p)
        assert got is not None and got <= exact
        assert exact - got <= exact // 64
        if exact < 128:
            assert got == exact
    assert sum(c for _, _, c in h.bands()) == len(values)


@given(st.lists(st.integers(min_value=0, max_value=10**6), max_size=100), st.integers(1, 5))
def test_merge_equals_adding_everything_once(values: list[int], cut: int) -> None:
    a, b, whole = SizeHistogram(), SizeHistogram(), SizeHistogram()
    a.add_all(values[::cut])
    rest = [v for i, v in enumerate(values) if i % cut]
    b.add_all(rest)
    a.merge(b)
    whole.add_all(values[::cut] + rest)
    assert (a.count, a.total, a.min, a.max, a.buckets) == (
        whole.count, whole.total, whole.min, whole.max, whole.buckets,
    )  # fmt: skip


@given(st.lists(st.lists(st.integers(min_value=0, max_value=2**50), max_size=20), max_size=8))
def test_merging_many_small_histograms_touches_every_count(parts: list[list[int]]) -> None:
    """A total of many files merges each file's buckets between its min and max only (the rest are
    empty): the slots come out as adding every value to one histogram, and so do the buckets."""
    total, whole = SizeHistogram(), SizeHistogram()
    for values in parts:
        h = SizeHistogram()
        h.add_all(values)
        total.merge(h)
        whole.add_all(values)
    assert total.slots == whole.slots
    assert total.buckets == {b: n for b, n in enumerate(whole.slots[:NBUCKETS]) if n}


@given(st.lists(st.integers(min_value=-5, max_value=2**45), max_size=200), st.integers(2, 64))
def test_time_histogram_stays_bounded_and_loses_no_record(stamps: list[int], limit: int) -> None:
    h = TimeHistogram(limit)
    for i in range(0, len(stamps), 7):  # fed in pieces, as batches come
        h.add_counts(Counter(stamps[i : i + 7]))
    start, width, counts = h.series()
    real = [t for t in stamps if t >= 0]
    assert sum(counts) == len(real)
    assert len(counts) <= limit
    for t in real:
        assert start <= t < start + width * len(counts)
    if real:
        assert counts[(min(real) - start) // width] > 0 and counts[(max(real) - start) // width] > 0


def test_time_histogram_merge_of_different_widths() -> None:
    a, b = TimeHistogram(8), TimeHistogram(8)
    a.add_counts({0: 1, 5: 1})
    b.add_counts({0: 2, 1000: 3})
    a.merge(b)
    start, width, counts = a.series()
    assert sum(counts) == 7 and len(counts) <= 8 and start == 0 and width >= 128


def test_bounded_counter_stops_admitting_new_keys() -> None:
    c: BoundedCounter[bytes] = BoundedCounter(2)
    c.add_counts({b"a": 2, b"b": 1})
    c.add_counts({b"c": 5, b"a": 1})
    assert c.counts == {b"a": 3, b"b": 1} and c.others == 5 and not c.complete
    assert c.most_common(1) == [(b"a", 3)]


def test_charts() -> None:
    assert bar(1.0, 4) == "████" and bar(0.0, 4) == "" and bar(0.5, 3) == "█▌"
    assert sparkline([0, 1, 4, 8]) == "▁▂▅█"
    assert sparkline([]) == "" and sparkline([0, 0]) == "▁▁"


# --- figures against kafka-python's reading ------------------------------------------------------


def kafka_python_records(path: Path) -> list[Any]:
    mr = MemoryRecords(path.read_bytes())
    out = []
    while (batch := mr.next_batch()) is not None:
        out.extend(batch)
    return out


@pytest.mark.parametrize(
    "name",
    ["v0-none.log", "v1-gzip.log", "v1-logappendtime.log", "v2-headers.log", "v2-zstd.log",
     "mixed-magic.log", "compacted-gaps.log", "00000000000000001000.log"],
)  # fmt: skip
def test_figures_match_kafka_python(name: str) -> None:
    path = FIXTURES / name
    s = gather(path)
    kp = kafka_python_records(path)
    assert s.records == len(kp) and s.corrupt == 0
    keys = [len(r.key) for r in kp if r.key is not None]
    values = [len(r.value) for r in kp if r.value is not None]
    assert (s.key_sizes.count, s.key_sizes.total) == (len(keys), sum(keys))
    assert (s.value_sizes.total, s.value_sizes.max) == (sum(values), max(values, default=None))
    assert s.null_keys == len(kp) - len(keys) and s.tombstones == len(kp) - len(values)
    headers = [getattr(r, "headers", None) or [] for r in kp]
    assert s.header_counts.total == sum(len(h) for h in headers)
    expected_keys = Counter(k.encode() for h in headers for k, _ in h)
    assert dict(s.header_keys.counts) == dict(expected_keys)
    assert s.header_sizes.total == sum(len(k.encode()) + len(v or b"") for h in headers for k, v in h)
    offsets = [r.offset for r in kp]
    assert (s.first_offset, s.last_offset) == (min(offsets), max(offsets))
    missing = sum(b - a - 1 for a, b in itertools.pairwise(offsets) if b > a + 1)
    assert s.missing_offsets == missing
    assert s.disk_bytes == s.file_bytes == path.stat().st_size
    stamps = [r.timestamp for r in kp if r.timestamp is not None and r.timestamp >= 0]
    assert (s.first_timestamp, s.last_timestamp) == ((min(stamps), max(stamps)) if stamps else (None, None))
    assert sum(s.times.series()[2]) == len(stamps)


def test_layout_by_format_and_uncompressed_sizes(tmp_path: Path) -> None:
    recs = legacy_records(20)
    plain = legacy_messages(recs, magic=1)
    wrapped = legacy_messages(recs, magic=1, codec=1, base_offset=20)
    v2 = v2_batch([(k, v, []) for k, v in recs], base_offset=40)
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(plain + wrapped + v2)
    s = gather(path)
    by = {(m, c.label): f for (m, c), f in s.by_format.items()}
    assert by[(1, "none")].batches == 20 and by[(1, "none")].disk_bytes == len(plain)
    assert by[(1, "gzip")].batches == 1 and by[(1, "gzip")].records == 20
    # A wrapper's uncompressed size is its inner messages as plain entries: those of ``plain``.
    assert by[(1, "gzip")].uncompressed_bytes == len(plain)
    assert by[(2, "none")].uncompressed_bytes == by[(2, "none")].disk_bytes == len(v2)
    assert s.records == 60 and s.batches == 22 and s.offset_gaps == 0 and s.last_offset == 59
    assert s.records_per_batch.max == 20 and s.records_per_batch.percentile(50) == 1


def test_corrupt_batch_is_counted_and_skipped() -> None:
    s = gather(FIXTURES / "corrupt-crc.log")
    assert s.corrupt == 1 and s.corrupt_bytes > 0
    assert s.disk_bytes + s.corrupt_bytes == s.file_bytes
    assert s.records == 6  # the batch with the bad CRC is not counted
    assert s.missing_offsets == 3


def test_tail_is_not_corruption() -> None:
    s = gather(FIXTURES / "zero-tail.log")
    assert s.corrupt == 0 and s.tail_bytes == 4096 and s.disk_bytes + 4096 == s.file_bytes


def test_control_and_transactional_batches() -> None:
    s = gather(FIXTURES / "txn-control.log")
    assert s.control_batches >= 1 and s.control_records == s.control_batches
    assert s.transactional_batches >= s.control_batches and s.distinct_producers >= 1
    assert s.data_records == s.records - s.control_records


def test_log_dir_holds_partition_directories(tmp_path: Path) -> None:
    for part in ("t-0", "t-1"):
        (tmp_path / part).mkdir()
        (tmp_path / part / "00000000000000000000.log").write_bytes((FIXTURES / "v2-none.log").read_bytes())
    (tmp_path / "empty-dir").mkdir()
    files = find([str(tmp_path)]).readable()
    assert [Path(f.path).parent.name for f in files] == ["t-0", "t-1"]
    # A KRaft log dir keeps bootstrap.checkpoint at its top: it comes first, then the partitions.
    (tmp_path / "bootstrap.checkpoint").write_bytes((FIXTURES / "v2-none.log").read_bytes())
    files = find([str(tmp_path)]).readable()
    assert [f.file_name for f in files] == ["bootstrap.checkpoint", *["00000000000000000000.log"] * 2]
    with pytest.raises(NotASegmentError):
        find([str(tmp_path / "empty-dir")])


# --- the command -----------------------------------------------------------------------------------


def test_json_one_object_per_file_then_the_total() -> None:
    result = run("--format", "json", str(FIXTURES / "v2-none.log"), str(FIXTURES / "v1-gzip.log"))
    assert result.exit_code == 0, result.output
    objs = [json.loads(line) for line in result.stdout.splitlines()]
    assert [o["type"] for o in objs] == ["file", "file", "total"]
    total = objs[2]
    assert total["layout"]["records"] == sum(o["layout"]["records"] for o in objs[:2])
    assert total["files"] == 2
    assert total["records"]["valueSize"]["total"] == sum(o["records"]["valueSize"]["total"] for o in objs[:2])
    first = objs[0]
    assert first["layout"]["formats"] == [
        {"magic": 2, "compression": "none", "batches": 3, "records": 10, "diskBytes": 834,
         "uncompressedBytes": 834, "compressionRatio": 1.0},
    ]  # fmt: skip
    o = first["overhead"]
    assert o["payloadBytes"] + o["metadataBytes"] == 834
    assert isinstance(first["charts"]["recordsPerTime"]["counts"], list)


def test_the_charts_have_an_axis_and_a_unit() -> None:
    """The histogram names its units (bytes, records) and scales its bars from 0 to the tallest count;
    the sparkline says what a bar counts and its peak, with the times of its ends under them."""
    out = run(str(FIXTURES / "v1-gzip.log")).stdout.splitlines()
    at = out.index("Record sizes")
    assert out[at + 1].split() == ["bytes", "records"]
    assert out[at + 2 : at + 4] == [
        " 32-63  █████                                           1",
        "64-127  ████████████████████████████████████████        8",
    ]
    assert out[at + 4] == " " * 8 + "0" + " " * 38 + "8"  # under the bars: 0 to the largest count
    assert out[at + 5] == "Records over time (records per 128 ms, █ = 1)"
    spark, times = out[at + 6], out[at + 7]
    assert len(times) == len(spark) and times.startswith("2023-11-14T22:13:20.000Z ")
    assert times.endswith(" 2023-11-14T22:13:28.063Z")


def test_table_sections_and_charts() -> None:
    result = run(str(FIXTURES / "v2-headers.log"))
    assert result.exit_code == 0
    out = result.stdout
    for title in ("Layout", "By format", "Batches", "Records (bytes)", "Overhead per record"):
        assert title in out
    assert "Record sizes" in out and "Records over time" in out and "█" in out
    assert "Total:" not in out  # one file: no total
    quiet = run("--no-charts", str(FIXTURES / "v2-headers.log")).stdout
    assert "Records over time" not in quiet and "Layout" in quiet
    both = run("--no-charts", str(FIXTURES / "v2-none.log"), str(FIXTURES / "v1-none.log")).stdout
    assert "Total: 2 files" in both


def test_thousands_separators_in_tables(tmp_path: Path) -> None:
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(v2_batch([(None, b"x" * 1500, [])]))
    assert "1,500" in run("--no-charts", str(path)).stdout


def test_corrupt_data_reported_on_stderr_exit_zero() -> None:
    result = run("--format", "json", str(FIXTURES / "corrupt-crc.log"))
    assert result.exit_code == 0
    assert "corrupt-crc.log: byte" in result.stderr and "CRC" in result.stderr
    assert json.loads(result.stdout.splitlines()[0])["problems"]["corrupt"] == 1


@pytest.mark.parametrize("args", [["/no/such/file.log"], ["--format", "xml", "x"], []])
def test_usage_and_io_errors_exit_two(args: list[str], tmp_path: Path) -> None:
    result = run(*args)
    assert result.exit_code == 2
    assert "Traceback" not in result.output


def test_not_a_segment_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "junk.log"
    bad.write_bytes(b"\xff" * 100)
    result = run(str(bad))
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and "junk.log" in result.stderr


def test_header_keys_are_not_markup(tmp_path: Path) -> None:
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(v2_batch([(None, b"v", [("[bold]x[/bold]", b"1"), ("\x1b[31m", b"2")])]))
    out = run(str(path)).stdout
    assert "[bold]x[/bold]" in out and "\x1b" not in out


def test_file_names_reach_the_table_escaped(tmp_path: Path) -> None:
    """A file name is data too: its control characters are shown as escapes, not sent to the terminal."""
    d = tmp_path / "t\x1b[31m-0"
    d.mkdir()
    (d / "00000000000000000000.log").write_bytes(v2_batch([(None, b"v", [])]))
    out = run(str(d / "00000000000000000000.log")).stdout
    assert "\x1b" not in out and "\\x1b[31m-0" in out


@pytest.mark.skipif(not SHARED_REAL.is_dir(), reason="../shared/fixtures-real is absent")
def test_real_partition_directories_read_without_problems() -> None:
    dirs = sorted({p.parent for p in SHARED_REAL.glob("*/*/*.log")})[:6]
    for d in dirs:
        for f in find([str(d)]).readable():
            s = gather(Path(f.path))
            assert s.records >= 0 and s.disk_bytes + s.corrupt_bytes + s.tail_bytes == s.file_bytes


def test_corrupt_message_inside_a_plain_run_is_skipped_alone(tmp_path: Path) -> None:
    data = bytearray(legacy_messages(legacy_records(10), magic=1))
    sizes = []
    pos = 0
    while pos < len(data):
        size = int.from_bytes(data[pos + 8 : pos + 12], "big") + 12
        sizes.append(size)
        pos += size
    third = sum(sizes[:2])
    data[third + 30] ^= 0x55  # inside message 2's key or value: its CRC no longer matches
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(bytes(data))
    for walk in (True, False):
        listener = None if walk else (lambda p: lambda b: None)
        events = list(iter_stats([path], listener=listener))
        s = events[-1]
        assert isinstance(s, SegmentStats)
        assert (s.records, s.corrupt, s.corrupt_bytes, s.missing_offsets) == (9, 1, sizes[2], 1)
        ((magic, codec),) = s.by_format
        assert (magic, codec.label, s.by_format[(magic, codec)].batches) == (1, "none", 9)


def test_progress_positions() -> None:
    events = list(iter_stats([FIXTURES / "corrupt-crc.log"]))
    positions = [progress_position(e) for e in events]
    assert positions[0] == (str(FIXTURES / "corrupt-crc.log"), 0)
    done = [p[1] for p in positions if p is not None]
    assert done == sorted(done) and done[-1] == (FIXTURES / "corrupt-crc.log").stat().st_size
    assert positions[-1] is None  # the closing SegmentStats


def test_json_names_the_segment_and_its_size_as_dump_and_verify_do() -> None:
    """One vocabulary: ``"file"`` for the segment's path and ``"bytes"`` for its size in ``stats``,
    ``verify-crc`` and (the path) ``dump``."""
    seg = str(FIXTURES / "v2-gzip.log")
    stats = json.loads(run("--format", "json", seg).stdout.splitlines()[0])
    verify = json.loads(
        CliRunner().invoke(main, ["verify-crc", "--format", "json", seg]).stdout.splitlines()[-1]
    )
    dumped = json.loads(CliRunner().invoke(main, ["dump", "--format", "json", seg]).stdout.splitlines()[0])
    assert stats["file"] == verify["file"] == dumped["file"] == seg
    assert stats["bytes"] == verify["bytes"] == Path(seg).stat().st_size
    assert "path" not in stats and "fileBytes" not in stats


def _v0_message(offset: int, value: bytes) -> bytes:
    """A v0 message built by hand: offset, size, CRC-32 of the rest, magic 0, attributes 0, null key."""
    import struct
    import zlib

    body = b"\x00\x00" + struct.pack(">i", -1) + struct.pack(">i", len(value)) + value
    return struct.pack(">qiI", offset, 4 + len(body), zlib.crc32(body)) + body


def test_missing_offsets_stay_inside_int64(tmp_path: Path) -> None:
    """Offsets at both ends of int64 (found by the fuzzer): the gap between them is more offsets than
    int64 holds; the JSON figure stays inside it, as every number kdump prints does."""
    seg = tmp_path / "00000000000000000000.log"
    seg.write_bytes(_v0_message(-(2**63), b"a") + _v0_message(2**63 - 2, b"b"))
    result = run("--format", "json", str(seg))
    figures = [json.loads(line)["layout"]["missingOffsets"] for line in result.output.splitlines()]
    assert figures and set(figures) == {2**63 - 1}, result.output  # each figure held at int64's top
