"""Data of aborted transactions, marked by ``dump`` from the ``.txnindex`` files (kafka_dump/log/txnindex.py).

The oracle is kafka-python's read_committed fetch logic (``Fetcher.PartitionRecords``: the consumer side
of Kafka's ``CompletedFetch``), fed the aborted transactions a broker would send: the records it drops
are exactly those of the batches kdump marks. It runs on the bundled partition ``fixtures/txn-aborted/``
(two segments, one transaction aborted across them) and on a real Kafka-written log of committed and
aborted transactions, given the ``.txnindex`` a broker would have written beside it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
from collections import namedtuple
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from hypothesis import given
from hypothesis import strategies as st
from kafka.consumer.fetcher import Fetcher
from kafka.record import MemoryRecords
from kafka.structs import TopicPartition

from kafka_dump.analysis.dump import AbortedBatchEvent, BatchEvent, RangeFilter, Summary, iter_dump
from kafka_dump.cli import main
from kafka_dump.log.txnindex import AbortedTxns
from kafka_dump.model import Batch
from kafka_dump.render.summary import closing_summary
from tests.conftest import FIXTURES, SHARED_REAL
from tests.test_cli import _kdump_argv, _run_with_stderr_on_pty

PARTITION = FIXTURES / "txn-aborted"
SEG0 = PARTITION / "00000000000000000000.log"
SEG13 = PARTITION / "00000000000000000013.log"
GOLDEN = FIXTURES / "golden"
REAL_TXN = SHARED_REAL / "kafka-3.8.0-java" / "v2_txn_commit_abort.log"
ENTRY = struct.Struct(">hqqqq")
AbortedTransaction = namedtuple("AbortedTransaction", ["producer_id", "first_offset"])
ENV = {"COLUMNS": "200", "NO_COLOR": "1"}


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), env=ENV)


def marked(result: Result) -> list[tuple[int, int]]:
    """(baseOffset, lastOffset) of the batches a JSON dump marks aborted."""
    out = []
    for line in result.stdout.splitlines():
        obj = json.loads(line)
        if obj["type"] == "batch" and "aborted" in obj:
            assert obj["aborted"] is True and obj["isTransactional"] and not obj["isControl"]
            out.append((obj["baseOffset"], obj["lastOffset"]))
    return out


def committed_view(log_bytes: bytes, aborted: list[AbortedTransaction]) -> tuple[set[int], set[int]]:
    """(offsets a read_uncommitted consumer gets, offsets a read_committed one gets), by kafka-python."""
    seen = []
    for level in (0, 1):  # IsolationLevel.READ_UNCOMMITTED, READ_COMMITTED
        part = Fetcher.PartitionRecords(
            0, TopicPartition("t", 0), MemoryRecords(log_bytes), isolation_level=level,
            aborted_transactions=list(aborted),
        )  # fmt: skip
        seen.append({r.offset for r in part.take()})
    return seen[0], seen[1]


def json_records(result: Result) -> dict[tuple[int, int], list[int]]:
    """Each batch's (baseOffset, lastOffset) -> its record offsets, from a JSON dump."""
    out = {}
    for line in result.stdout.splitlines():
        obj = json.loads(line)
        if obj["type"] == "batch":
            out[(obj["baseOffset"], obj["lastOffset"])] = [r["offset"] for r in obj["records"] or []]
    return out


def index_entries(directory: Path) -> list[AbortedTransaction]:
    """Every entry of the directory's .txnindex files, as a fetch response carries them."""
    out = []
    for p in sorted(directory.glob("*.txnindex")):
        data = p.read_bytes()
        for at in range(0, len(data) - len(data) % ENTRY.size, ENTRY.size):
            _, pid, first, _, _ = ENTRY.unpack_from(data, at)
            out.append(AbortedTransaction(pid, first))
    return out


def assert_marks_match_the_consumer(directory: Path, logs: list[Path]) -> list[tuple[int, int]]:
    result = run("dump", "--format", "json", str(directory))
    assert result.exit_code == 0, result.output
    uncommitted, committed = committed_view(b"".join(p.read_bytes() for p in logs), index_entries(directory))
    records = json_records(result)
    dropped = {o for span in marked(result) for o in records[span]}
    assert dropped, "the case must abort some data"
    assert dropped == uncommitted - committed
    return marked(result)


# --- the bundled partition ----------------------------------------------------------------------------


def test_marks_what_a_read_committed_consumer_skips() -> None:
    spans = assert_marks_match_the_consumer(PARTITION, [SEG0, SEG13])
    # 3..4 aborts in its own segment; 6..7 in the next one; 11..12 is a later, committed transaction
    # of the producer that aborted 3..4.
    assert spans == [(3, 4), (6, 7)]


@pytest.mark.parametrize("fmt", ["table", "json", "kafka"])
def test_golden(fmt: str, in_root: Path) -> None:
    result = CliRunner().invoke(
        main, ["dump", "--format", fmt, "fixtures/txn-aborted"], env={"COLUMNS": "200"}
    )
    assert result.exit_code == 0, result.output
    golden = GOLDEN / f"txn-aborted.{fmt}.txt"
    if os.environ.get("KDUMP_UPDATE_GOLDENS") == "1":
        golden.write_bytes(result.stdout_bytes)
    assert result.stdout_bytes == golden.read_bytes()


def test_table_section_row_says_aborted_in_its_style() -> None:
    result = CliRunner().invoke(main, ["dump", "--color", "always", str(SEG0)], env={"COLUMNS": "200"})
    rows = [line for line in result.stdout.splitlines() if "offsets" in line]
    aborted = [r for r in rows if "aborted" in r]
    assert len(aborted) == 2 and all("offsets 3..4" in r or "offsets 6..7" in r for r in aborted)
    assert all("\x1b[31maborted\x1b[0m" in r for r in aborted)  # kdump.aborted: red


def test_kafka_lines_are_unchanged_by_the_txnindex(tmp_path: Path) -> None:
    shutil.copy(SEG0, tmp_path / SEG0.name)
    alone = run("dump", "--format", "kafka", str(tmp_path / SEG0.name))
    with_index = run("dump", "--format", "kafka", str(SEG0))
    assert with_index.stdout.replace(str(PARTITION), str(tmp_path)) == alone.stdout


def test_a_segment_dumped_alone_reads_the_later_segments_txnindex() -> None:
    assert marked(run("dump", "--format", "json", str(SEG0))) == [(3, 4), (6, 7)]


def test_without_the_later_segment_its_abort_is_not_known(tmp_path: Path) -> None:
    for suffix in (".log", ".txnindex"):
        shutil.copy(SEG0.with_suffix(suffix), tmp_path / SEG0.with_suffix(suffix).name)
    assert marked(run("dump", "--format", "json", str(tmp_path))) == [(3, 4)]


def test_the_search_stops_where_kafka_stops(tmp_path: Path) -> None:
    """Segment 13's entry has lastStableOffset 15 >= 13 (segment 0's end): no later index is read,
    so a damaged one there is not reported while dumping segment 0."""
    for p in PARTITION.glob("0*"):
        shutil.copy(p, tmp_path / p.name)
    (tmp_path / "00000000000000000020.txnindex").write_bytes(ENTRY.pack(9, 1, 2, 3, 4))
    result = run("dump", "--format", "json", str(tmp_path / SEG0.name))
    assert result.exit_code == 0 and marked(result) == [(3, 4), (6, 7)]


# --- what cannot be known ----------------------------------------------------------------------------


def test_no_txnindex_marks_nothing(tmp_path: Path) -> None:
    shutil.copy(SEG0, tmp_path / SEG0.name)
    result = run("dump", "--format", "json", str(tmp_path))
    assert result.exit_code == 0 and marked(result) == []
    table = run("dump", str(tmp_path))
    assert "aborted" not in table.stdout and "transactional" in table.stdout


def test_no_txnindex_is_counted_for_the_summary(tmp_path: Path) -> None:
    shutil.copy(SEG0, tmp_path / SEG0.name)
    summary = list(iter_dump([str(tmp_path)], RangeFilter()))[-1]
    assert isinstance(summary, Summary) and summary.unmarked == 1 and summary.aborted == 0
    summary = list(iter_dump([str(PARTITION)], RangeFilter()))[-1]
    assert isinstance(summary, Summary) and summary.unmarked == 0 and summary.aborted == 2
    # Non-transactional data needs no .txnindex: nothing to say.
    summary = list(iter_dump([str(FIXTURES / "v2-none.log")], RangeFilter()))[-1]
    assert isinstance(summary, Summary) and summary.unmarked == 0


def test_closing_summary_says_what_is_not_marked() -> None:
    text = closing_summary(files=1, batches=7, records=13, corrupt=0, aborted=0, unmarked=1).plain
    assert "1 file with transactional data and no .txnindex" in text and "not marked" in text
    text = closing_summary(files=2, batches=10, records=17, corrupt=0, aborted=2).plain
    assert text == "2 files · 10 batches · 17 records · 0 problems · 2 aborted batches"


def test_summary_on_a_terminal(tmp_path: Path) -> None:
    shutil.copy(SEG0, tmp_path / SEG0.name)
    _, err, code = _run_with_stderr_on_pty(_kdump_argv("dump", "--format", "json", str(tmp_path)))
    plain = re.sub(rb"\x1b\[[0-9;?]*[a-zA-Z]", b"", err)
    assert code == 0 and b"no .txnindex" in plain
    _, err, code = _run_with_stderr_on_pty(_kdump_argv("dump", "--format", "json", str(PARTITION)))
    plain = re.sub(rb"\x1b\[[0-9;?]*[a-zA-Z]", b"", err)
    assert code == 0 and b"2 aborted batches" in plain and b"no .txnindex" not in plain


def test_no_txnindex_option() -> None:
    result = run("dump", "--format", "json", "--no-txnindex", str(PARTITION))
    assert result.exit_code == 0 and marked(result) == []
    summary = list(iter_dump([str(PARTITION)], RangeFilter(), txn_index=False))[-1]
    assert isinstance(summary, Summary) and summary.aborted == 0 and summary.unmarked == 0


# --- a damaged .txnindex ------------------------------------------------------------------------------


def _partition_with(tmp_path: Path, txnindex: bytes) -> Path:
    shutil.copy(SEG0, tmp_path / SEG0.name)
    (tmp_path / SEG0.with_suffix(".txnindex").name).write_bytes(txnindex)
    return tmp_path


GOOD = ENTRY.pack(0, 7002, 3, 8, 6)


@pytest.mark.parametrize(
    ("data", "position", "reason"),
    [
        (ENTRY.pack(1, 7003, 6, 9, 10) + GOOD, 0, "aborted transaction entry has version 1"),
        (GOOD + ENTRY.pack(0, 7003, 9, 6, 10), 34, "spans offsets 9..6"),
        (GOOD + ENTRY.pack(0, -5, 1, 6, 10), 34, "producer -5"),
    ],
)
@pytest.mark.parametrize("fmt", ["table", "json", "kafka"])
def test_corrupt_txnindex_is_one_line_and_no_traceback(
    tmp_path: Path, data: bytes, position: int, reason: str, fmt: str
) -> None:
    d = _partition_with(tmp_path, data)
    result = run("dump", "--format", fmt, str(d))
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    where = f"{d / '00000000000000000000.txnindex'}: byte {position}: "
    if fmt == "kafka":
        lines = [line for line in result.stderr.splitlines() if "txnindex" in line]
        assert len(lines) == 1 and where in lines[0] and reason in lines[0]
    elif fmt == "json":
        problems = [json.loads(x) for x in result.stdout.splitlines() if '"type":"problem"' in x]
        assert len(problems) == 1 and problems[0]["position"] == position and reason in problems[0]["reason"]
        assert problems[0]["kind"] == "corrupt"
    else:
        rows = [line for line in result.stdout.splitlines() if "PROBLEM" in line]
        assert len(rows) == 1 and f"PROBLEM in 00000000000000000000.txnindex at byte {position} " in rows[0]
    if fmt == "json":  # the good entry is still used
        assert marked(result) == [(3, 4)]


def test_partial_last_entry_is_a_tail(tmp_path: Path) -> None:
    d = _partition_with(tmp_path, GOOD + b"\x00\x00\x07")
    result = run("dump", "--format", "json", str(d))
    problems = [json.loads(x) for x in result.stdout.splitlines() if '"type":"problem"' in x]
    assert result.exit_code == 0 and [p["kind"] for p in problems] == ["partial-tail"]
    assert problems[0]["position"] == 34 and problems[0]["length"] == 3
    assert marked(result) == [(3, 4)]


def test_unreadable_txnindex_is_a_problem(tmp_path: Path) -> None:
    shutil.copy(SEG0, tmp_path / SEG0.name)
    (tmp_path / SEG0.with_suffix(".txnindex").name).mkdir()
    result = run("dump", "--format", "json", str(tmp_path))
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "not a regular file" in result.stdout and marked(result) == []


def test_a_pipe_named_txnindex_is_not_read(tmp_path: Path) -> None:
    shutil.copy(SEG0, tmp_path / SEG0.name)
    os.mkfifo(tmp_path / SEG0.with_suffix(".txnindex").name)
    result = run("dump", "--format", "json", str(tmp_path))  # would block forever on open()
    assert result.exit_code == 1 and "not a regular file" in result.stdout and marked(result) == []


def test_problems_of_a_shared_txnindex_are_given_once(tmp_path: Path) -> None:
    for p in PARTITION.glob("0*"):
        shutil.copy(p, tmp_path / p.name)
    (tmp_path / SEG13.with_suffix(".txnindex").name).write_bytes(ENTRY.pack(0, 7003, 6, 14, 15) + b"\x01")
    result = run("dump", "--format", "json", str(tmp_path))
    problems = [x for x in result.stdout.splitlines() if '"type":"problem"' in x]
    assert len(problems) == 1 and marked(result) == [(3, 4), (6, 7)]


# --- a real Kafka-written log -------------------------------------------------------------------------


def broker_txnindex(log_bytes: bytes) -> list[tuple[int, bytes]]:
    """The AbortedTxn entries a broker writes for a log, one per ABORT marker, with the marker's
    offset (the entry goes to the .txnindex of the segment holding it); read with kafka-python."""
    records = MemoryRecords(log_bytes)
    open_first: dict[int, int] = {}  # producer -> first offset of its open transaction
    out = []
    while (batch := records.next_batch()) is not None:
        if not batch.is_transactional:
            continue
        pid = batch.producer_id
        if not batch.is_control_batch:
            open_first.setdefault(pid, batch.base_offset)
            continue
        marker = next(iter(batch))
        first = open_first.pop(pid, None)
        if marker.abort and first is not None:
            lso = min(open_first.values(), default=batch.base_offset + 1)
            out.append((batch.base_offset, ENTRY.pack(0, pid, first, batch.base_offset, lso)))
    return out


def entry_starts(data: bytes) -> list[tuple[int, int]]:
    """(byte position, base offset) of each log entry."""
    out = []
    pos = 0
    while pos + 12 <= len(data):
        offset, length = struct.unpack_from(">qi", data, pos)
        out.append((pos, offset))
        pos += 12 + length
    return out


needs_real = pytest.mark.skipif(not REAL_TXN.is_file(), reason="../shared/fixtures-real is absent")


@needs_real
def test_real_kafka_log_with_a_broker_txnindex(tmp_path: Path) -> None:
    data = REAL_TXN.read_bytes()
    (tmp_path / "00000000000000000000.log").write_bytes(data)
    index = broker_txnindex(data)
    assert index, "the real log holds aborted transactions"
    (tmp_path / "00000000000000000000.txnindex").write_bytes(b"".join(e for _, e in index))
    assert_marks_match_the_consumer(tmp_path, [tmp_path / "00000000000000000000.log"])


@needs_real
def test_real_kafka_log_split_into_two_segments_at_every_batch(tmp_path: Path) -> None:
    """Wherever the log is cut into two segments, an abort whose marker lands in the second segment
    still marks its data in the first (the search goes on into the later segment's .txnindex)."""
    data = REAL_TXN.read_bytes()
    index = broker_txnindex(data)
    crossing = 0
    for k, (pos, base) in enumerate(entry_starts(data)[1:], 1):
        d = tmp_path / f"split-{k}"
        d.mkdir()
        for name, part in ((0, data[:pos]), (base, data[pos:])):
            (d / f"{name:020d}.log").write_bytes(part)
            held = b"".join(e for at, e in index if (at >= base) == (name == base))
            if held:
                (d / f"{name:020d}.txnindex").write_bytes(held)
        crossing += any(ENTRY.unpack(e)[2] < base <= at for at, e in index)
        assert_marks_match_the_consumer(d, [d / f"{0:020d}.log", d / f"{base:020d}.log"])
    assert crossing, "some cut must fall inside an aborted transaction"


# --- the lookup ------------------------------------------------------------------------------------------


def _batch(pid: int, base: int, last: int) -> Batch:
    b = next(e for e in iter_dump([str(SEG0)], RangeFilter()) if isinstance(e, BatchEvent)).batch
    return b._replace(producerId=pid, baseOffset=base, lastOffset=last)


@given(
    st.lists(st.tuples(st.integers(0, 3), st.integers(0, 60), st.integers(0, 10)), max_size=12),
    st.integers(0, 3),
    st.integers(0, 70),
    st.integers(0, 5),
)
def test_lookup_is_the_overlap_of_a_producers_transactions(
    spans: list[tuple[int, int, int]], pid: int, base: int, n: int
) -> None:
    # A producer's transactions do not overlap (one open at a time): keep the first of any that do.
    kept: list[tuple[int, int, int]] = []
    for p, first, length in spans:
        last = first + length
        if all(q != p or last < f or first > la for q, f, la in kept):
            kept.append((p, first, last))
    txns = AbortedTxns(list(kept), [Path("x.txnindex")])
    expected = any(p == pid and first <= base + n and base <= last for p, first, last in kept)
    assert txns.covers(_batch(pid, base, base + n)) == expected


def test_aborted_events_are_batch_events() -> None:
    events = [e for e in iter_dump([str(PARTITION)], RangeFilter()) if isinstance(e, BatchEvent)]
    assert [e.batch.baseOffset for e in events if type(e) is AbortedBatchEvent] == [3, 6]
    assert len(events) == 10


def _objects(result: Result) -> list[dict[str, Any]]:
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_filters_and_batches_only_keep_the_marks() -> None:
    result = run("dump", "--format", "json", "--from-offset", "4", "--to-offset", "7", str(PARTITION))
    assert marked(result) == [(3, 4), (6, 7)]
    assert [o["records"][0]["offset"] for o in _objects(result) if o.get("aborted")] == [4, 6]
    result = run("dump", "--format", "json", "--batches-only", str(PARTITION))
    assert marked(result) == [(3, 4), (6, 7)]
