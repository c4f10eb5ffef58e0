"""``kdump verify-crc``: real broker files as Kafka's reader judges them, generated damage, indexes,
exit codes, JSON, salvage.

Segments come from kafka-python's builders (``tests/batches.py``), an independent writer; the real
ones from ``../shared/fixtures-real`` (skipped when absent).
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka import codec as kc

from kafka_dump.analysis.verify import FileReport, VerifyOptions, verify_file
from kafka_dump.cli import main
from kafka_dump.log.segment import read_segment
from kafka_dump.model import Batch, Check, Problem, ProblemKind

from .batches import (
    GZIP,
    LEGACY_ATTRIBUTES_AT,
    LZ4,
    SNAPPY,
    default_records,
    entry_bounds,
    fix_legacy_crc,
    legacy_messages,
    legacy_records,
    patch,
    raw_record,
    raw_v2_batch,
    v2_batch,
)
from .conftest import SHARED_REAL

NAME = "00000000000000000000.log"


def check(path: Path, *, deep: bool = True, index: bool = True) -> tuple[list[Problem], FileReport]:
    events = list(verify_file(path, VerifyOptions(deep=deep, index=index)))
    report = events[-1]
    assert isinstance(report, FileReport)
    return [e for e in events if isinstance(e, Problem)], report


def write(tmp_path: Path, data: bytes, name: str = NAME) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def corrupt(problems: list[Problem]) -> list[Problem]:
    return [p for p in problems if p.kind is ProblemKind.CORRUPT]


def v2_segment() -> bytes:
    return b"".join(v2_batch(default_records(3, seed=i), base_offset=3 * i) for i in range(3))


def v1_segment() -> bytes:
    return b"".join(
        legacy_messages(legacy_records(3, seed=i), magic=1, codec=GZIP, base_offset=3 * i) for i in range(3)
    )


def v1_plain_segment() -> bytes:
    return legacy_messages(legacy_records(3), magic=1, base_offset=0)


def v0_segment() -> bytes:
    return legacy_messages(legacy_records(3), magic=0, base_offset=0)


SEGMENTS = {"v2": v2_segment, "v1-gzip": v1_segment, "v1": v1_plain_segment, "v0": v0_segment}


# --- real files, as Kafka's own reader judges them -------------------------------------------------------------

REAL_LOGS = (
    sorted(p for p in SHARED_REAL.rglob("*") if p.suffix in (".log", ".checkpoint"))
    if SHARED_REAL.is_dir()
    else []
)
# What Kafka's reader says of the damaged ones: (check, position) of the corrupt problem, or the tail.
REAL_DAMAGE = {
    "kafka-3.8.0-java/v1_badcrc.log": [(Check.CRC_MISMATCH, 0)],
    "kafka-3.8.0-java/v2_badcrc.log": [(Check.CRC_MISMATCH, 0)],
    "derived-from-fetch-captures/kafka-rust/fetch2.mytopic.nocompression.invalid_crc.kafka.0900.log": [
        (Check.CRC_MISMATCH, 0)
    ],
}
REAL_TAILS = {
    "kafka-3.8.0-java/v2_truncated.log": 2529,
    "derived-from-fetch-captures/kafkajs/v2_response_index_out_of_range.log": 129,
    "derived-from-fetch-captures/kafkajs/v2_response_partial_messages_many_partitions.p0.log": 0,
}


@pytest.mark.skipif(not REAL_LOGS, reason="../shared/fixtures-real is absent")
@pytest.mark.parametrize("path", REAL_LOGS, ids=lambda p: str(p.relative_to(SHARED_REAL)))
@pytest.mark.parametrize("deep", [True, False], ids=["deep", "shallow"])
def test_real_files(path: Path, deep: bool) -> None:
    rel = str(path.relative_to(SHARED_REAL))
    problems, report = check(path, deep=deep)
    assert report.error is None
    assert [(p.check, p.position) for p in corrupt(problems)] == REAL_DAMAGE.get(rel, [])
    if rel in REAL_TAILS:
        assert report.tail is not None and report.tail.kind is ProblemKind.PARTIAL_TAIL
        assert report.tail.position == REAL_TAILS[rel]
    else:
        assert report.tail is None
    assert report.indexProblems == 0


@pytest.mark.skipif(not REAL_LOGS, reason="../shared/fixtures-real is absent")
def test_real_check_files_agree_on_counts() -> None:
    """Batches and records as Kafka 3.8's reader counted them (the TOTAL line of each check file)."""
    java = SHARED_REAL / "kafka-3.8.0-java"
    for log in sorted(java.glob("*.log")):
        total = next(
            line
            for line in (java / f"{log.name}.check.txt").read_text().splitlines()
            if line.startswith("TOTAL")
        )
        fields = dict(part.split("=", 1) for part in total.split()[1:])
        _, report = check(log)
        assert (report.batches, report.records) == (int(fields["batches"]), int(fields["records"])), log.name


@pytest.mark.skipif(not REAL_LOGS, reason="../shared/fixtures-real is absent")
def test_real_log_dir_exit_code_and_index_files() -> None:
    result = CliRunner().invoke(
        main, ["verify-crc", "-j", "1", "--format", "json", str(SHARED_REAL / "ronem123-kafka41-kraft")]
    )
    assert result.exit_code == 0, result.output
    summaries = [json.loads(line) for line in result.stdout.splitlines()]
    assert all(s["type"] == "summary" for s in summaries)
    assert sum(s["indexFiles"] for s in summaries) >= 6  # the real trimmed .index/.timeindex pairs were read


# --- generated damage --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", SEGMENTS)
def test_generated_segments_are_clean(name: str, tmp_path: Path) -> None:
    data = SEGMENTS[name]()
    problems, report = check(write(tmp_path, data))
    assert problems == []
    assert report.batches == len(entry_bounds(data))


@pytest.mark.parametrize("name", SEGMENTS)
def test_a_flipped_byte_anywhere_in_an_entry_is_found(name: str, tmp_path: Path) -> None:
    """Every byte of the middle entry, flipped, gives a corrupt problem; only v2's partitionLeaderEpoch
    (under no CRC, and with no rule to break) can change unseen, as in Kafka."""
    data = SEGMENTS[name]()
    bounds = entry_bounds(data)
    start, end = bounds[len(bounds) // 2]
    for at in range(start, end):
        damaged = bytearray(data)
        damaged[at] ^= 0xFF
        problems, _ = check(write(tmp_path, bytes(damaged)), index=False)
        if name == "v2" and 12 <= at - start < 16:
            assert corrupt(problems) == [], at - start
        else:
            assert corrupt(problems), (name, at - start)


@pytest.mark.parametrize("name", ["v2", "v1-gzip"])
def test_truncation_at_every_byte_is_a_partial_tail(name: str, tmp_path: Path) -> None:
    data = SEGMENTS[name]()
    ends = [e for _, e in entry_bounds(data)]
    for cut in range(1, len(data)):
        problems, report = check(write(tmp_path, data[:cut]))
        assert corrupt(problems) == [], cut
        whole = sum(1 for e in ends if e <= cut)
        assert report.batches == whole, cut
        if cut in ends:
            assert report.tail is None
        else:
            start = max([0, *(e for e in ends if e <= cut)])
            zeros = data[start:cut].count(0) == cut - start
            kind = ProblemKind.ZERO_TAIL if zeros else ProblemKind.PARTIAL_TAIL
            assert report.tail is not None and (report.tail.kind, report.tail.position) == (kind, start), cut


def test_zero_tail_is_fine(tmp_path: Path) -> None:
    data = v2_segment()
    problems, report = check(write(tmp_path, data + bytes(5000)))
    assert corrupt(problems) == []
    assert report.tail is not None and (report.tail.kind, report.tail.position) == (
        ProblemKind.ZERO_TAIL,
        len(data),
    )


def test_garbage_region_between_good_batches(tmp_path: Path) -> None:
    parts = [v2_batch(default_records(2, seed=i), base_offset=2 * i) for i in range(4)]
    garbage = bytes((i * 91 + 7) % 256 for i in range(500))
    data = parts[0] + parts[1] + garbage + parts[2] + parts[3]
    problems, report = check(write(tmp_path, data))
    assert [(p.position, p.length) for p in problems] == [(len(parts[0]) + len(parts[1]), len(garbage))]
    assert (report.batches, report.badRegions, report.badRegionBytes) == (4, 1, len(garbage))


def test_bad_crc_with_an_enlarged_size_keeps_the_batches_after_it(tmp_path: Path) -> None:
    parts = [v2_batch(default_records(2, seed=i), base_offset=2 * i) for i in range(5)]
    victim = bytearray(parts[1])
    (size,) = struct.unpack_from(">i", victim, 8)
    struct.pack_into(">i", victim, 8, size + len(parts[2]) // 2)
    data = parts[0] + bytes(victim) + b"".join(parts[2:])
    problems, report = check(write(tmp_path, data))
    assert report.batches == 4  # the damaged one is a bad region, the three after it are found
    assert report.badRegions == 1 and report.crcErrors == 1
    assert [(p.position, p.check) for p in problems] == [(len(parts[0]), Check.CRC_MISMATCH)]


# --- deep checks -----------------------------------------------------------------------------------------------


def _batch(records: list[bytes], **kwargs: int) -> bytes:
    return raw_v2_batch(b"".join(records), len(records), **kwargs)


def test_offset_deltas_must_increase(tmp_path: Path) -> None:
    data = _batch([raw_record(offset_delta=0), raw_record(offset_delta=2), raw_record(offset_delta=1)],
                  last_offset_delta=2)  # fmt: skip
    problems, _ = check(write(tmp_path, data))
    assert [(p.check, p.position) for p in problems] == [(Check.OFFSET_DELTA, 61 + 2 * len(raw_record()))]
    assert problems[0].reason == "record offset delta 1 is not above the previous one (2)"
    shallow, _ = check(write(tmp_path, data), deep=False)
    assert shallow == []


def test_offset_delta_past_last_offset_delta(tmp_path: Path) -> None:
    data = _batch([raw_record(offset_delta=0), raw_record(offset_delta=5)], last_offset_delta=3)
    problems, _ = check(write(tmp_path, data))
    assert [(p.check, p.expected, p.found) for p in problems] == [(Check.OFFSET_DELTA, 3, 5)]
    assert "past the batch's lastOffsetDelta 3" in problems[0].reason


def test_compaction_leaves_last_offset_delta_past_the_last_record(tmp_path: Path) -> None:
    data = _batch([raw_record(offset_delta=0), raw_record(offset_delta=4)], last_offset_delta=9)
    assert check(write(tmp_path, data))[0] == []


def test_max_timestamp_must_cover_every_record(tmp_path: Path) -> None:
    data = _batch(
        [raw_record(offset_delta=0, timestamp_delta=5), raw_record(offset_delta=1, timestamp_delta=9)]
    )
    problems, _ = check(write(tmp_path, data))  # raw_v2_batch sets maxTimestamp = baseTimestamp
    assert [(p.check, p.expected, p.found) for p in problems] == [
        (Check.MAX_TIMESTAMP, 1_700_000_000_000, 1_700_000_000_009)
    ]


def test_offsets_must_increase_across_batches_and_gaps_are_counted(tmp_path: Path) -> None:
    data = (
        v2_batch(default_records(2), base_offset=10)
        + v2_batch(default_records(2, seed=1), base_offset=20)  # a gap: fine, counted
        + v2_batch(default_records(2, seed=2), base_offset=21)  # overlaps 20..21
    )
    problems, report = check(write(tmp_path, data))
    assert [(p.check, p.expected, p.found) for p in problems] == [(Check.OFFSET_ORDER, 22, 21)]
    assert report.gaps == 1


def _marker(kind: int) -> bytes:
    return raw_record(key=struct.pack(">hh", 0, kind), value=struct.pack(">hi", 0, 3))


def test_a_marker_batch_holds_exactly_one_marker(tmp_path: Path) -> None:
    one = _batch([_marker(1)], attributes=0x30, base_offset=0)
    two = _batch([_marker(1), raw_record(offset_delta=1, key=struct.pack(">hh", 0, 0), value=struct.pack(">hi", 0, 3))],
                 attributes=0x30, base_offset=1)  # fmt: skip
    assert check(write(tmp_path, one))[0] == []
    problems, _ = check(write(tmp_path, one + two))
    assert [(p.check, p.position, p.expected, p.found) for p in problems] == [(Check.CONTROL, len(one), 1, 2)]


def test_inner_message_crc_of_a_wrapper(tmp_path: Path) -> None:
    inner = bytearray(legacy_messages(legacy_records(3), magic=1, base_offset=0))
    first_end = entry_bounds(bytes(inner))[0][1]
    inner[first_end - 1] ^= 1  # the first inner message's last value byte: its own CRC now fails
    plain = patch(legacy_messages([(None, kc.gzip_encode(bytes(inner)))], magic=1), 0, ">q", 2)
    wrapper = fix_legacy_crc(patch(plain, LEGACY_ATTRIBUTES_AT, ">B", GZIP))
    problems, report = check(write(tmp_path, wrapper))
    assert [(p.check, p.position) for p in problems] == [(Check.INNER_CRC, 0)]
    assert report.crcErrors == 1
    assert check(write(tmp_path, wrapper), deep=False)[0] == []


def test_deep_walk_reports_what_decoding_reports(tmp_path: Path) -> None:
    """For every flipped byte of v2 segments (plain and compressed), the deep check reports every problem
    that dump's decoding reports, at the same position and with the same reason."""
    data = v2_segment() + v2_batch(default_records(3, seed=9, compressible=True), codec=LZ4, base_offset=9)
    data += v2_batch(default_records(2, seed=8, compressible=True), codec=SNAPPY, base_offset=12)
    for at in range(0, len(data), 3):
        damaged = bytearray(data)
        damaged[at] ^= 0x41
        path = write(tmp_path, bytes(damaged))
        decoded = [(p.position, p.reason, p.check) for p in read_segment(path) if isinstance(p, Problem)]
        problems, _ = check(path, index=False)
        walked = {(p.position, p.reason, p.check) for p in problems}
        assert set(decoded) <= walked, at


def test_deep_counts_records_without_building_them(tmp_path: Path) -> None:
    data = v2_segment()
    _, deep = check(write(tmp_path, data))
    _, shallow = check(write(tmp_path, data), deep=False)
    assert deep.records == shallow.records == 9


# --- index files -------------------------------------------------------------------------------------------------


def _indexed(tmp_path: Path) -> tuple[Path, list[tuple[int, int, int, int]]]:
    """A log of 5 batches and its .index/.timeindex, one entry per batch: (base, last, position, maxTs)."""
    parts = [
        v2_batch(default_records(2, seed=i), base_offset=2 * i, timestamp=1000 * (i + 1)) for i in range(5)
    ]
    log = write(tmp_path, b"".join(parts))
    batches = [b for b in read_segment(log) if isinstance(b, Batch)]
    rows = [(b.baseOffset, b.lastOffset, b.position, b.maxTimestamp) for b in batches]
    _write_index(log, [(last, pos) for _, last, pos, _ in rows])
    _write_timeindex(log, [(ts, last) for _, last, _, ts in rows])
    return log, rows


def _write_index(log: Path, entries: list[tuple[int, int]], extra: bytes = b"") -> None:
    log.with_suffix(".index").write_bytes(b"".join(struct.pack(">ii", o, p) for o, p in entries) + extra)


def _write_timeindex(log: Path, entries: list[tuple[int, int]]) -> None:
    log.with_suffix(".timeindex").write_bytes(b"".join(struct.pack(">qi", t, o) for t, o in entries))


def test_index_files_that_match(tmp_path: Path) -> None:
    log, _ = _indexed(tmp_path)
    problems, report = check(log)
    assert problems == [] and report.indexFiles == 2
    _write_index(log, [], bytes(8 * 100))  # a preallocated, still empty index
    assert check(log)[0] == []


def test_index_entry_pointing_inside_a_batch(tmp_path: Path) -> None:
    log, rows = _indexed(tmp_path)
    entries = [(last, pos) for _, last, pos, _ in rows]
    entries[2] = (entries[2][0], entries[2][1] + 5)
    _write_index(log, entries)
    problems, report = check(log)
    assert [(p.file, p.position, p.check) for p in problems] == [
        (str(log.with_suffix(".index")), 16, Check.INDEX_MISMATCH)
    ]
    assert report.indexProblems == 1 and report.problems == 0


def test_index_entry_with_an_offset_outside_its_batch(tmp_path: Path) -> None:
    log, rows = _indexed(tmp_path)
    entries = [(last, pos) for _, last, pos, _ in rows]
    entries[1] = (entries[1][0] + 1, entries[1][1])
    _write_index(log, entries)
    problems, _ = check(log)
    assert [(p.position, p.check, p.expected, p.found) for p in problems] == [
        (8, Check.INDEX_MISMATCH, rows[1][1], rows[1][1] + 1)
    ]


def test_index_entries_out_of_order(tmp_path: Path) -> None:
    log, rows = _indexed(tmp_path)
    entries = [(last, pos) for _, last, pos, _ in rows]
    entries[1], entries[2] = entries[2], entries[1]
    _write_index(log, entries)
    problems, _ = check(log)
    assert [(p.position, p.check) for p in problems] == [(16, Check.INDEX_ORDER)]


def test_index_of_a_bad_size(tmp_path: Path) -> None:
    log, rows = _indexed(tmp_path)
    _write_index(log, [(last, pos) for _, last, pos, _ in rows], b"\x00\x01\x02")
    problems, _ = check(log)
    assert [(p.position, p.length, p.check, p.expected, p.found) for p in problems] == [
        (40, 3, Check.INDEX_SIZE, 8, 43)
    ]


def test_time_index_timestamp_mismatch_and_order(tmp_path: Path) -> None:
    log, rows = _indexed(tmp_path)
    entries = [(ts, last) for _, last, _, ts in rows]
    entries[1] = (entries[1][0] + 1, entries[1][1])
    entries[3] = (entries[3][0] - 5000, entries[3][1])
    _write_timeindex(log, entries)
    problems, _ = check(log)
    assert [(Path(p.file).suffix, p.position, p.check) for p in problems] == [
        (".timeindex", 12, Check.INDEX_MISMATCH),
        (".timeindex", 36, Check.INDEX_ORDER),
    ]


def test_no_index_skips_them(tmp_path: Path) -> None:
    log, _ = _indexed(tmp_path)
    _write_index(log, [(99, 7)])
    assert check(log, index=False)[0] == []
    assert check(log)[0] != []


def test_txnindex(tmp_path: Path) -> None:
    log, _ = _indexed(tmp_path)
    good = struct.pack(">hqqqq", 0, 7, 2, 5, 6)
    log.with_suffix(".txnindex").write_bytes(good + bytes(34))
    assert check(log)[0] == []
    log.with_suffix(".txnindex").write_bytes(good + struct.pack(">hqqqq", 0, 7, 9, 5, 6) + b"\x01")
    problems, _ = check(log)
    assert [(p.position, p.check) for p in problems] == [(68, Check.INDEX_SIZE), (34, Check.INDEX_ORDER)]


def test_txnindex_entry_of_a_transaction_begun_in_an_earlier_segment(in_root: Path) -> None:
    """fixtures/txn-aborted/: producer 7003's transaction begins at 6, in segment 0; its ABORT (14)
    and so its entry are in segment 13. Kafka's sanity check asks lastOffset >= the base, no more."""
    code, out = run("fixtures/txn-aborted/")
    assert code == 0, out


# --- the command: exit codes, JSON, salvage ----------------------------------------------------------------------


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["verify-crc", *args], env={"COLUMNS": "200"})
    return result.exit_code, result.stdout


def test_exit_codes(tmp_path: Path) -> None:
    good = write(tmp_path, v2_segment(), "good.log")
    tail = write(tmp_path, v2_segment()[:-7], "tail.log")
    damaged = bytearray(v2_segment())
    damaged[100] ^= 1
    bad = write(tmp_path, bytes(damaged), "bad.log")
    assert run(str(good))[0] == 0
    assert run(str(tail))[0] == 0
    assert run("--fail-on-tail", str(tail))[0] == 1
    assert run(str(bad))[0] == 1
    assert run(str(tmp_path / "missing.log"))[0] == 2
    assert run("-j", "2", str(good), str(bad))[0] == 1
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run(str(empty))[0] == 2


def test_json_output(tmp_path: Path) -> None:
    damaged = bytearray(v2_segment())
    damaged[100] ^= 1
    path = write(tmp_path, bytes(damaged) + bytes(100))
    code, out = run("--format", "json", str(path))
    assert code == 1
    lines = [json.loads(line) for line in out.splitlines()]
    assert [o["type"] for o in lines] == ["problem", "problem", "summary"]
    crc, tail, summary = lines
    assert (crc["check"], crc["position"], crc["kind"]) == ("crc-mismatch", 0, "corrupt")
    assert (tail["kind"], tail["length"]) == ("zero-tail", 100)
    assert summary == {
        "type": "summary", "file": str(path), "bytes": len(damaged) + 100, "batches": 3, "records": 9,
        "crcErrors": 1, "problems": 1, "badRegions": 0, "badRegionBytes": 0, "offsetGaps": 0,
        "tail": {"kind": "zero-tail", "position": len(damaged), "bytes": 100}, "indexFiles": 0,
        "indexProblems": 0, "error": None,
    }  # fmt: skip


def test_table_output(tmp_path: Path) -> None:
    path = write(tmp_path, v2_segment())
    other = write(tmp_path, v2_segment(), "other.log")
    code, out = run(str(path), str(other), str(path))  # a path named twice: checked once
    assert code == 0
    assert out.splitlines()[0] == f"Checking {tmp_path}/" and "total (2 files)" in out


def test_parallel_and_serial_agree(tmp_path: Path) -> None:
    for i in range(4):
        damaged = bytearray(SEGMENTS[list(SEGMENTS)[i]]())
        damaged[20 + i] ^= 0x10
        write(tmp_path, bytes(damaged), f"{i:020d}.log")
    serial = run("--format", "json", "-j", "1", str(tmp_path))
    parallel = run("--format", "json", "-j", "3", str(tmp_path))
    assert serial == parallel and serial[0] == 1


def test_many_small_files_go_to_the_workers_in_few_tasks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A partition of many one-batch segments: the options reach each worker once (not with every
    file) and the files go in runs, so a small file costs no round trip between processes of its
    own; the answer is the serial one, in file order, a damaged file in the middle included."""
    from kafka_dump.commands import verify_jobs as command

    n = 150
    for i in range(n):
        data = bytearray(v2_batch(default_records(1, seed=i), base_offset=i))
        if i == 77:
            data[-1] ^= 1
        write(tmp_path, bytes(data), f"{i:020d}.log")
    files = sorted(tmp_path.glob("*.log"))
    sizes = [f.stat().st_size for f in files]
    tasks = list(command.tasks(files, sizes))
    assert [f for t in tasks for f in t] == files and len(tasks) == -(-n // command.TASK_FILES)
    monkeypatch.setattr(command, "TASK_BYTES", 3 * sizes[0])
    assert max(len(t) for t in command.tasks(files, sizes)) == 3  # large files: a few a task
    serial = run("--format", "json", "-j", "1", str(tmp_path))
    parallel = run("--format", "json", "-j", "2", str(tmp_path))
    assert serial == parallel and serial[0] == 1
    assert serial[1].count('"type":"summary"') == n


def test_salvage_keeps_exactly_the_good_batches(tmp_path: Path) -> None:
    parts = [v2_batch(default_records(2, seed=i), base_offset=2 * i) for i in range(5)]
    victim = bytearray(parts[1])
    victim[80] ^= 4
    garbage = bytes(range(200, 256)) * 3
    data = parts[0] + bytes(victim) + parts[2] + garbage + parts[3] + parts[4][:-9]
    src_dir = tmp_path / "topic-0"
    src_dir.mkdir()
    path = write(src_dir, data)
    out = tmp_path / "rescued"
    code, stdout = run("--format", "json", "--salvage", str(out), str(path))
    assert code == 1
    copy = out / "topic-0" / NAME
    assert copy.read_bytes() == parts[0] + parts[2] + parts[3]
    assert path.read_bytes() == data  # the input is never written
    report = json.loads((out / "topic-0" / f"{NAME}.salvage.json").read_text())
    assert [(d["start"], d["end"]) for d in report["dropped"]] == [
        (len(parts[0]), len(parts[0]) + len(victim)),
        (
            len(parts[0]) + len(victim) + len(parts[2]),
            len(parts[0]) + len(victim) + len(parts[2]) + len(garbage),
        ),
        (len(data) - len(parts[4]) + 9, len(data)),
    ]
    salvage_line = json.loads(stdout.splitlines()[-1])
    assert salvage_line["type"] == "salvage" and salvage_line["target"] == str(copy)
    assert run(str(copy))[0] == 0
    assert list(out.rglob("*.tmp")) == []


def test_salvage_leaves_clean_files_alone(tmp_path: Path) -> None:
    path = write(tmp_path, v2_segment())
    out = tmp_path / "rescued"
    assert run("--salvage", str(out), str(path))[0] == 0
    assert not out.exists() or list(out.rglob("*.log")) == []


def test_progress_passes_every_event_through(tmp_path: Path) -> None:
    import io

    from kafka_dump.commands.verify import _position
    from kafka_dump.render.output import Output

    class _Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    path = write(tmp_path, v2_segment())
    events = list(verify_file(path, VerifyOptions()))
    screen = _Tty()
    out = Output("never", stdout=io.StringIO(), stderr=screen, environ={"KDUMP_PROGRESS_DELAY": "0"})
    assert list(out.track(iter(events), _position, path.stat().st_size)) == events
    assert screen.getvalue().startswith(f"\r{path.name} ") and screen.getvalue().endswith("\r\x1b[K")
    quiet = Output("never", stdout=io.StringIO(), stderr=io.StringIO())
    assert list(quiet.track(iter(events), _position)) == events


# --- properties over random damage -------------------------------------------------------------------------------

_BASE = (
    v2_segment()
    + v2_batch(default_records(3, seed=5, compressible=True), codec=LZ4, base_offset=9)
    + legacy_messages(legacy_records(2), magic=1, base_offset=12)
    + legacy_messages(legacy_records(3, seed=1), magic=1, codec=GZIP, base_offset=14)
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["flip", "cut", "insert", "zero"]),
            st.integers(min_value=0, max_value=len(_BASE) - 1),
            st.integers(min_value=1, max_value=200),
        ),
        min_size=1,
        max_size=3,
    )
)
def test_salvage_of_any_damage_verifies_clean(tmp_path: Path, ops: list[tuple[str, int, int]]) -> None:
    """Whatever the damage: every byte is a batch or dropped, and the salvage copy verifies clean."""
    data = bytearray(_BASE)
    for op, at, n in ops:
        at = min(at, len(data))
        if op == "flip" and at < len(data):
            data[at] ^= n & 0xFF or 1
        elif op == "cut":
            del data[at : at + n]
        elif op == "insert":
            data[at:at] = bytes((at * 7 + i * 13) % 256 for i in range(n))
        else:
            data[at : at + n] = bytes(len(data[at : at + n]))
    src = tmp_path / "in"
    src.mkdir(exist_ok=True)
    path = write(src, bytes(data))
    events = list(verify_file(path, VerifyOptions()))  # raises nothing: the report says it all
    report = events[-1]
    assert isinstance(report, FileReport)
    if report.error is not None or not report.damaged:
        return
    out = tmp_path / "out"
    from kafka_dump.log.salvage import salvage

    result = salvage(path, report.dropped, out, overwrite=True)  # one directory for every example
    copy = Path(result.target)
    dropped = sum(d.end - d.start for d in result.dropped)
    assert copy.stat().st_size == result.kept_bytes == len(data) - dropped
    problems, again = check(copy, index=False)
    assert corrupt(problems) == [] and again.tail is None, problems


def test_salvage_never_overwrites_its_input(tmp_path: Path) -> None:
    part = tmp_path / "topic-0"
    part.mkdir()
    damaged = bytearray(v2_segment())
    damaged[100] ^= 1
    path = write(part, bytes(damaged))
    result = CliRunner().invoke(main, ["verify-crc", "--salvage", str(tmp_path), str(path)])
    assert result.exit_code == 2 and "overwrite its input" in result.stderr
    assert path.read_bytes() == bytes(damaged)
