"""``kdump ls``: one line per segment (or partition, topic, log dir), read from entry headers alone.

Segments are written by kafka-python's builders; the figures are checked against what was written,
against ``verify-crc`` and ``stats`` on the real broker dirs, and the bytes read are counted.
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatchBuilder

from kafka_dump.analysis import ls as ls_module
from kafka_dump.cli import main

from .batches import (
    GZIP,
    LZ4,
    TS0,
    ZSTD,
    default_records,
    legacy_messages,
    legacy_records,
    set_offset,
    v2_batch,
)
from .conftest import SHARED_REAL

ENV = {"COLUMNS": "250", "NO_COLOR": "1"}


def run(*args: str) -> Result:
    return CliRunner().invoke(main, ["ls", *args], env=ENV)


def lines(result: Result) -> list[dict[str, Any]]:
    return [json.loads(line) for line in result.stdout.splitlines()]


def txn_batch(base_offset: int) -> bytes:
    """A transactional v2 batch from producer 7 (kafka-python's builder)."""
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=0,
        is_transactional=1,
        producer_id=7,
        producer_epoch=0,
        base_sequence=0,
        batch_size=1 << 20,
    )
    for i in range(2):
        builder.append(i, timestamp=TS0 + 100 + i, key=b"k", value=b"v", headers=[])
    return set_offset(bytes(builder.build()), base_offset)


def mixed_partition(root: Path, name: str = "orders-0") -> Path:
    """v0 plain and gzip, v1 lz4 (a wrapper), v2 zstd and transactional data: one segment each."""
    d = root / name
    d.mkdir(parents=True)
    (d / "00000000000000000000.log").write_bytes(
        legacy_messages(legacy_records(2), magic=0, base_offset=0)
        + legacy_messages(legacy_records(3, seed=1), magic=0, codec=GZIP, base_offset=2)
    )
    (d / "00000000000000000005.log").write_bytes(
        legacy_messages(legacy_records(3, seed=2), magic=1, codec=LZ4, base_offset=5, timestamp=TS0 + 50)
    )
    (d / "00000000000000000008.log").write_bytes(
        v2_batch(default_records(4, seed=3), codec=ZSTD, base_offset=8, timestamp=TS0 + 60) + txn_batch(12)
    )
    (d / "00000000000000000008.index").write_bytes(b"")  # a side file: never listed
    return d


def test_one_line_per_segment_from_the_headers(tmp_path: Path) -> None:
    d = mixed_partition(tmp_path)
    result = run("--format", "json", str(d))
    assert result.exit_code == 0, result.output
    *segments, total = lines(result)
    assert [s["type"] for s in segments] == ["segment"] * 3 and total["type"] == "total"
    v0, v1, v2 = segments
    assert (v0["baseOffset"], v0["firstOffset"], v0["lastOffset"], v0["entries"]) == (0, 0, 4, 3)
    assert v0["records"] is None  # the gzip wrapper's count is in its payload
    assert [(f["magic"], f["codec"], f["entries"]) for f in v0["formats"]] == [(0, "none", 2), (0, "gzip", 1)]
    assert (v0["firstTimestamp"], v0["lastTimestamp"]) == (None, None)  # v0 has no timestamps
    assert v1["firstOffset"] is None and v1["lastOffset"] == 7 and v1["firstTimestamp"] is not None
    assert (v2["firstOffset"], v2["lastOffset"], v2["records"], v2["entries"]) == (8, 13, 6, 2)
    assert (v2["producers"], v2["transactional"], v2["control"]) == (True, True, False)
    assert not v0["producers"] and not v1["transactional"]
    assert v2["bytes"] == (d / "00000000000000000008.log").stat().st_size
    assert (
        total["segments"] == 3
        and total["entries"] == 6
        and total["bytes"] == sum(s["bytes"] for s in segments)
    )
    assert total["problem"] is None and total["error"] is None


def test_deep_fills_in_what_only_payloads_hold(tmp_path: Path) -> None:
    d = mixed_partition(tmp_path)
    *segments, total = lines(run("--format", "json", "--deep", str(d)))
    assert [s["records"] for s in segments] == [5, 3, 6] and total["records"] == 14
    assert [s["firstOffset"] for s in segments] == [0, 5, 8]
    stats = json.loads(
        CliRunner().invoke(main, ["stats", "--format", "json", str(d)]).stdout.splitlines()[-1]
    )
    assert stats["records"]["recordSize"]["count"] == total["records"]


def _rchar() -> int:
    """Bytes this process has read through system calls (``/proc/self/io``)."""
    fields = dict(line.split(": ") for line in Path("/proc/self/io").read_text().splitlines())
    return int(fields["rchar"])


@pytest.mark.skipif(not Path("/proc/self/io").exists(), reason="no /proc/self/io here")
def test_headers_only_read_a_sliver_of_large_batches(tmp_path: Path) -> None:
    big = [(b"k", bytes(range(250)) * 200, [])]
    seg = tmp_path / "t-0" / "00000000000000000000.log"
    seg.parent.mkdir()
    seg.write_bytes(b"".join(set_offset(v2_batch(big), i) for i in range(200)))
    ls_module.list_segment(seg, ls_module.LsOptions())  # what it imports is read once, here
    before = _rchar()
    one = ls_module.list_segment(seg, ls_module.LsOptions())
    read = _rchar() - before
    assert one.entries == 200 and one.bytes == seg.stat().st_size and one.problem is None
    assert read < 0.02 * seg.stat().st_size
    deep = ls_module.list_segment(seg, ls_module.LsOptions(deep=True))
    assert (deep.entries, deep.records, deep.lastOffset) == (200, 200, 199)


def test_rollups_sorting_and_plain_rows(tmp_path: Path) -> None:
    log_dir = tmp_path / "data"
    mixed_partition(log_dir, "orders-0")
    mixed_partition(log_dir, "orders-1")
    p = log_dir / "payments-0"
    p.mkdir()
    (p / "00000000000000000000.log").write_bytes(
        b"".join(v2_batch(default_records(50), base_offset=0) for _ in range(1))
    )
    rows = lines(run("--format", "json", str(log_dir)))  # a log dir: a row per partition by default
    assert [(r["type"], r.get("name")) for r in rows[:3]] == [
        ("partition", "orders-0"),
        ("partition", "orders-1"),
        ("partition", "payments-0"),
    ]
    assert rows[0]["segments"] == 3 and rows[-1]["segments"] == 7
    topics = lines(run("--format", "json", "--by", "topic", "--sort", "size", str(log_dir)))
    assert [t["name"] for t in topics[:-1]] == ["orders", "payments"]
    assert topics[0]["bytes"] == 2 * rows[0]["bytes"]
    by_size = lines(run("--format", "json", "--by", "segment", "--sort", "size", str(log_dir)))[:-1]
    assert [s["bytes"] for s in by_size] == sorted((s["bytes"] for s in by_size), reverse=True)
    plain = run("--format", "plain", "--by", "partition", str(log_dir))
    fields = [line.split("\t") for line in plain.stdout.splitlines()]
    assert len(fields) == 3 and {len(f) for f in fields} == {13}
    assert [f[0] for f in fields] == ["orders-0", "orders-1", "payments-0"]
    assert sum(int(f[6]) for f in fields) == rows[-1]["bytes"]  # awk can sum the bytes column
    table = run(str(log_dir))
    assert table.stdout.startswith(f"Listing {log_dir}/\n")
    assert (
        "total (7 segments)" in table.stdout
        and "v0 none + v0 gzip + v1 lz4 + v2 none + v2 zstd" in table.stdout
    )


def test_several_log_dirs_by_dir(tmp_path: Path) -> None:
    mixed_partition(tmp_path / "a", "t-0")
    mixed_partition(tmp_path / "b", "t-1")
    rows = lines(run("--format", "json", "--by", "dir", str(tmp_path / "a"), str(tmp_path / "b")))
    assert [r["name"] for r in rows[:-1]] == [str(tmp_path / "a"), str(tmp_path / "b")]
    assert rows[-1]["segments"] == 6


def test_tails_and_damage(tmp_path: Path) -> None:
    fixtures = Path(__file__).parent.parent / "fixtures"
    tail = lines(run("--format", "json", str(fixtures / "partial-tail.log")))[0]
    assert tail["problem"]["check"] == "partial-tail" and tail["entries"] == 2
    assert run(str(fixtures / "partial-tail.log")).exit_code == 0  # a tail is a fact
    crc = run("--format", "json", str(fixtures / "corrupt-crc.log"))
    assert crc.exit_code == 0 and lines(crc)[0]["crcErrors"] is None  # headers hold no CRC verdict
    checked = run("--format", "json", "--verify", str(fixtures / "corrupt-crc.log"))
    assert checked.exit_code == 1 and lines(checked)[0]["crcErrors"] == 1
    bad = tmp_path / "00000000000000000000.log"
    good = v2_batch(default_records(3), base_offset=0)
    bad.write_bytes(good + b"\x00" * 8 + b"\x7f\xff\xff\xff" + b"\x02" * 60 + good)  # a size past the end
    got = lines(run("--format", "json", str(bad)))[0]
    assert got["problem"]["position"] == len(good) and got["entries"] >= 1
    assert run(str(bad)).exit_code == 1


def test_side_files_and_unreadable_paths(tmp_path: Path) -> None:
    d = mixed_partition(tmp_path)
    result = run(str(d / "00000000000000000008.index"))
    assert result.exit_code == 2 and "a side file (.index), not a segment" in result.stderr
    missing = run(str(tmp_path / "nope"))
    assert missing.exit_code == 2 and "nope" in missing.stderr and "Traceback" not in missing.output


def test_names_are_never_escapes_or_markup(tmp_path: Path) -> None:
    mixed_partition(tmp_path, "evil\x1b[31m[bold]-0")
    mixed_partition(tmp_path, "plain-0")
    for fmt in ("table", "plain"):
        for by in ("segment", "partition", "topic"):
            args = ["ls", "--format", fmt, "--by", by, "--color", "always", str(tmp_path)]
            out = CliRunner().invoke(main, args, env=ENV).stdout
            assert "\x1b[31m" not in out and "\\x1b[31m[bold]" in out


@pytest.mark.skipif(not SHARED_REAL.is_dir(), reason="the real broker files are not here")
def test_real_broker_dirs_agree_with_verify_and_stats() -> None:
    files = sorted(SHARED_REAL.rglob("*.log"))
    result = run("--format", "json", "--by", "segment", *map(str, files))
    assert result.exit_code in (0, 1), result.output
    segments = [r for r in lines(result) if r["type"] == "segment"]
    assert len(segments) > 20
    kinds = {(f["magic"], f["codec"]) for s in segments for f in s["formats"]}
    assert {0, 1, 2} <= {magic for magic, _ in kinds}
    for s in segments:
        if s["error"] is not None or s["problem"] is not None:
            continue
        report = json.loads(
            CliRunner()
            .invoke(main, ["verify-crc", "--shallow", "--no-index", "--format", "json", s["file"]])
            .stdout.splitlines()[-1]
        )
        assert (s["entries"], s["bytes"]) == (report["batches"], report["bytes"]), s["file"]
        deep = lines(run("--format", "json", "--deep", s["file"]))[0]
        assert deep["entries"] == s["entries"] and deep["lastOffset"] == s["lastOffset"]
        if s["records"] is not None:
            assert deep["records"] == s["records"]


def test_jobs_keep_the_order_and_the_figures(tmp_path: Path) -> None:
    """-j N lists partitions in N processes; the rows come out as one process gives them."""
    log_dir = tmp_path / "data"
    for i in range(12):
        d = log_dir / f"t{i % 3}-{i}"
        d.mkdir(parents=True)
        (d / "00000000000000000000.log").write_bytes(
            b"".join(
                v2_batch(default_records(1 + (i * 7) % 5, seed=j), base_offset=10 * j) for j in range(i + 1)
            )
        )
        (d / "00000000000000001000.log").write_bytes(b"")  # an empty segment
    (log_dir / "t0-0" / "00000000000000002000.log").write_bytes(b"\x00" * 40)  # a zero tail alone
    for by in ("segment", "partition", "topic"):
        one = run("--format", "json", "--by", by, str(log_dir))
        many = run("--format", "json", "--by", by, "-j", "3", str(log_dir))
        assert one.exit_code == many.exit_code == 0 and one.stdout == many.stdout
    rows = lines(run("--format", "json", "-j", "4", str(log_dir)))
    # by topic, then partition number: t1-4 before t1-10
    assert [r["name"] for r in rows[:-1]] == [
        f"t{i % 3}-{i}" for i in sorted(range(12), key=lambda i: (i % 3, i))
    ]


def test_names_on_a_real_terminal(tmp_path: Path) -> None:
    """On a pseudo-terminal, a partition directory and a segment named to steer it come out escaped,
    in every format and in upgrade-check's tables."""
    from kafka_dump.render.payload import printable

    from .test_terminal_safety import HOSTILE_NAME, assert_safe, on_terminal

    partition = "t\x1b[31m[bold]\u202e\r-0"
    d = mixed_partition(tmp_path / "data", partition)
    (d / HOSTILE_NAME).write_bytes(legacy_messages(legacy_records(2), magic=1))
    for args in (("ls",), ("ls", "--by", "segment"), ("ls", "--format", "plain"), ("upgrade-check",)):
        out, err = on_terminal(*args, str(tmp_path / "data"), columns=400)
        plain = assert_safe(out.replace("\t", " ") if "plain" in args else out, err)  # plain's own tabs
        assert printable(partition) in plain, args
    plain = assert_safe(*on_terminal("ls", "--by", "segment", str(d), columns=400))
    assert printable(HOSTILE_NAME) in plain


@pytest.mark.parametrize("columns", [160, 120, 100, 80])
def test_a_narrow_terminal_cuts_and_leaves_out_columns_never_folds_a_row(
    tmp_path: Path, columns: int
) -> None:
    """Each row stays one line within the width: times lose precision, long names are cut in the
    middle (a segment's file name whole), and the columns a glance can spare are left out, named."""
    from .test_terminal_safety import assert_safe, on_terminal

    data = tmp_path / "data"
    mixed_partition(data, "a-rather-long-topic-name-for-a-terminal-0")
    mixed_partition(data, "short-0")
    for by in ("partition", "segment"):
        plain = assert_safe(*on_terminal("ls", "--by", by, str(data), columns=columns), columns=columns)
        rows = [line for line in plain.splitlines() if line.startswith("│")]
        assert len(rows) == (3 if by == "partition" else 7), plain  # one line a row, the total's too
        assert rows[-1].split("│")[1].strip().startswith("total ("), plain
        assert "…" not in rows[-1].split("│")[1]
        assert all("00000000000000000" in row for row in rows[:-1]) or by == "partition", plain
        hidden = [line for line in plain.splitlines() if line.startswith(f"not shown at {columns} columns: ")]
        assert bool(hidden) == (columns < 140), plain
        if columns >= 100:  # narrower, Rich cuts what the steps left too wide
            assert "short-0" in plain and "offsets" in plain and "bytes" in plain and "records" in plain


def _big_segment(path: Path, n: int = 40) -> bytes:
    """A segment past what is read whole: large v2 batches (a header read each), small ones between."""
    big = [(b"k", bytes(range(250)) * 40, [])]
    data = b"".join(
        set_offset(v2_batch(big if i % 3 else default_records(2, seed=i)), 2 * i) for i in range(n)
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return data


def test_a_few_entries_a_call_list_as_all_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ls takes a bounded number of rows from each call of the walk (memory stays flat): one a call
    lists what one call for all gives."""
    d = mixed_partition(tmp_path)
    seg = tmp_path / "big-0" / "00000000000000000000.log"
    _big_segment(seg)
    segments = [*sorted(d.glob("*.log")), seg]
    whole = [ls_module.list_segment(s, ls_module.LsOptions()) for s in segments]
    monkeypatch.setattr(ls_module, "_ROWS", 1)
    assert [ls_module.list_segment(s, ls_module.LsOptions()) for s in segments] == whole
    assert whole[-1].entries == 40 and whole[-1].problem is None


def test_a_segment_that_shrinks_while_listed_ends_in_a_tail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A segment cut short after it was opened (retention, truncation): the entries before the cut, then
    the bytes from there to the size it had as a partial tail, as the segment reader reports it."""
    seg = tmp_path / "t-0" / "00000000000000000000.log"
    data = _big_segment(seg)
    cut = len(data) // 2
    opened = ls_module.open_segment

    def shrinking(path: Path) -> tuple[object, int]:
        f, size = opened(path)
        os.truncate(path, cut)
        return f, size

    monkeypatch.setattr(ls_module, "open_segment", shrinking)
    got = ls_module.list_segment(seg, ls_module.LsOptions())
    assert got.problem is not None and got.problem.check == "partial-tail", got.problem
    assert "file changed while read" in got.problem.reason
    assert got.problem.position + got.problem.length == len(data) and got.problems == 1
    assert got.bytes == got.problem.position <= cut and got.error is None


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from([0, 1, 2, 2, 2]),
            st.sampled_from([0, 1, 4, 8, 0x10, 0x30, 0x40, 0x14]),
            st.integers(-2, 3),
            st.integers(-2, 3),
            st.sampled_from([-1, 0, 5]),
            st.sampled_from([-1, 7]),
        ),
        max_size=20,
    ),
    st.booleans(),
)
def test_rows_counted_at_once_as_one_by_one(picks: list[tuple[int, ...]], alike: bool) -> None:
    """``add_rows`` (a run of alike v2 rows column by column) counts what ``add_row`` counts."""
    rows = []
    for i, (magic, attributes, first_ts, max_ts, records, producer) in enumerate(picks):
        if alike:
            magic, attributes = 2, picks[0][1]
        if magic < 2:
            attributes &= 0x0F
            producer = -1
        elif records < 0:
            records = 1
        rows.append((i, 2 * i, 2 * i + 1, max_ts, 10 + i, magic, attributes, first_ts, records, producer,
                     0, 0, 0, 0))  # fmt: skip
    for start in (ls_module.Listing("a"), ls_module.Listing("b", records=None)):
        one, many = copy.deepcopy(start), copy.deepcopy(start)
        for row in rows:
            one.add_row(row)  # type: ignore[arg-type]
        half = len(rows) // 2
        many.add_rows(rows[:half])  # type: ignore[arg-type]
        many.add_rows(rows[half:])  # type: ignore[arg-type]
        assert many == one
