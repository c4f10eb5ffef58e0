"""Numbers at the edges of Kafka's int64, and a readable file with one bad batch, through every command.

Kafka holds offsets and timestamps in int64 and computes a record's as the batch's base plus the
record's delta, in 64-bit arithmetic that wraps. kdump's rule: a batch whose last offset, or a record
whose offset or timestamp, falls outside int64 is corrupt (a problem at the batch or the record,
exit 1 where corruption is), and no output prints a number outside int64. The batches are built by
hand (``tests/batches.py``: ``struct`` and ``crc32c``), not by kdump's encoder.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from kafka_dump.cli import main
from tests.batches import raw_record, raw_v2_batch

ENV = {"COLUMNS": "200", "NO_COLOR": "1"}
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
GOOD = raw_v2_batch(raw_record(), 1, base_offset=0)  # 74 bytes: its record starts at byte 61
AT = len(GOOD)  # where the case's batch starts
RECORD = AT + 61  # where its first record starts

# name: (the case's bytes after GOOD, (check, position) of the problem every reader reports)
CASES: dict[str, tuple[bytes, tuple[str, int]]] = {
    # baseOffset + lastOffsetDelta past 2^63-1: no batch can be made of it.
    "last-offset-past-int64": (
        raw_v2_batch(b"".join(raw_record(offset_delta=i) for i in range(5)), 5, base_offset=INT64_MAX - 2),
        ("offset-delta", AT),
    ),
    # A sound header, and a record whose offset delta takes it past lastOffsetDelta and int64.
    "record-offset-past-int64": (
        raw_v2_batch(raw_record(offset_delta=5), 1, base_offset=INT64_MAX - 1, last_offset_delta=0),
        ("offset-delta", RECORD),
    ),
    # baseTimestamp Long.MIN_VALUE + a delta of Long.MIN_VALUE: Kafka's sum wraps to 0.
    "timestamp-below-int64": (
        raw_v2_batch(raw_record(timestamp_delta=INT64_MIN), 1, base_offset=1, timestamp=INT64_MIN),
        ("timestamp", RECORD),
    ),
    "timestamp-above-int64": (
        raw_v2_batch(raw_record(timestamp_delta=1), 1, base_offset=1, timestamp=INT64_MAX),
        ("timestamp", RECORD),
    ),
    # A readable file with one bad batch (a record offset delta past lastOffsetDelta), a good one after.
    "offset-delta-past-last": (
        raw_v2_batch(
            raw_record(offset_delta=0) + raw_record(offset_delta=5), 2, base_offset=1, last_offset_delta=1
        )
        + raw_v2_batch(raw_record(), 1, base_offset=3),
        ("offset-delta", RECORD + len(raw_record())),
    ),
}

# command: (arguments, exit code on a readable file with one corrupt batch)
COMMANDS: dict[str, tuple[list[str], int]] = {
    "dump-table": (["dump"], 1),
    "dump-json": (["dump", "--format", "json"], 1),
    "dump-kafka": (["dump", "--format", "kafka"], 1),
    "verify-crc": (["verify-crc", "--format", "json", "-j", "1"], 1),
    "stats": (["stats", "--format", "json"], 0),  # stats counts what is valid: 0 (README)
    "stats-compare": (["stats", "--format", "json", "--compare"], 0),
    "convert": (["convert", "--format", "json"], 1),
    "convert-skip-corrupt": (["convert", "--format", "json", "--skip-corrupt"], 1),
}


def _ints(text: str) -> list[int]:
    """Every integer written in ``text`` (as digits), and every JSON number of its JSON lines."""
    found = [int(t) for t in re.findall(r"-?\d+", text)]
    for line in text.splitlines():
        if line.startswith("{"):
            json.loads(line, parse_int=lambda s: found.append(int(s)) or int(s))
    return found


def _run(args: list[str]) -> Result:
    res = CliRunner().invoke(main, args, env=ENV)
    assert "Traceback" not in res.stdout + res.stderr
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    return res


def _objs(res: Result) -> list[dict[str, Any]]:
    return [json.loads(line) for line in res.stdout.splitlines()]


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_corrupt_batch_at_the_edge_of_int64(case: str, command: str, tmp_path: Path) -> None:
    data, (check, position) = CASES[case]
    seg = tmp_path / "00000000000000000000.log"
    seg.write_bytes(GOOD + data)
    args, code = COMMANDS[command]
    out = tmp_path / "out" / "00000000000000000000.log"
    out.parent.mkdir()
    extra = ["-o", str(out)] if command.startswith("convert") else []
    res = _run([*args, str(seg), *extra])
    assert res.exit_code == code, res.stdout + res.stderr
    assert all(INT64_MIN <= n <= INT64_MAX for n in _ints(res.stdout + res.stderr))
    said = res.stdout + res.stderr
    if command == "dump-json" or command == "verify-crc":
        problems = [o for o in _objs(res) if o["type"] == "problem"]
        assert [(p["check"], p["position"]) for p in problems] == [(check, position)]
    elif command.startswith("stats"):
        assert f"{seg}: byte {position}: " in res.stderr
    elif command == "convert":
        assert not out.exists() and f"{seg}: byte {position}: corrupt input" in res.stderr
    elif command == "convert-skip-corrupt":
        (report,) = _objs(res)
        assert [s["position"] for s in report["skipped"]] == [position]
        verified = _run(["verify-crc", "--format", "json", "-j", "1", str(out)])
        assert verified.exit_code == 0
    elif command == "dump-table":
        assert f"byte {position}" in said or f"{position:,}" in said


# (records, count, baseOffset, lastOffsetDelta, baseTimestamp, the error's check, reason and position)
RECORD_CASES = [
    (
        raw_record(offset_delta=5),
        1,
        INT64_MAX - 1,
        0,
        0,
        "offset-delta",
        "is past the batch's lastOffsetDelta 0",
        0,
    ),
    (raw_record(offset_delta=-3), 1, INT64_MIN + 1, 0, 0, "offset-delta", "puts its offset past int64", 0),
    (
        raw_record() + raw_record(offset_delta=1, timestamp_delta=INT64_MIN),
        2,
        0,
        1,
        INT64_MIN,
        "timestamp",
        "past int64",
        13,
    ),
    (raw_record(timestamp_delta=INT64_MAX), 1, 0, 0, 1, "timestamp", "puts its timestamp past int64", 0),
]


@pytest.mark.parametrize("case", range(len(RECORD_CASES)))
def test_the_record_readers_agree_on_int64(case: int) -> None:
    """The decoder, the verify walk and the stats gathering (each twin) stop at the same record, with
    the same reason; the records before it are kept."""
    from kafka_dump.wire import _gather_pure, _walk_pure
    from kafka_dump.wire import decode as _decode
    from tests.conftest import reference_module

    native = pytest.importorskip("kafka_dump.native._native")
    data, count, base, last, base_ts, check, words, at = RECORD_CASES[case]
    pure = reference_module(_decode).decode_v2_records(
        data, 0, len(data), count, base, base_ts, None, -1, last
    )
    fast = native.decode_v2_records(data, 0, len(data), count, base, base_ts, None, -1, last)
    assert pure[1] is not None and fast[1] is not None
    assert (pure[1].check, pure[1].position, pure[0]) == (check, at, fast[0])
    assert (fast[1].reason, fast[1].check, fast[1].position) == (pure[1].reason, check, at)
    assert words in pure[1].reason and len(pure[0]) == at // 13
    if check == "timestamp":
        walks = [
            m.walk_v2_records(data, 0, len(data), count, last, base_ts)
            for m in (reference_module(_walk_pure), native)
        ]
        assert walks[0] == walks[1] and (walks[0][8], walks[0][9]) == (pure[1].reason, at)

    def gather(fn: Any) -> Any:
        hists = tuple(_gather_pure.new_histogram() for _ in range(5))
        return fn(data, 0, len(data), count, base_ts, None, 1, hists, {}, {}, 3, last)[9:]

    assert gather(_gather_pure.gather_v2_records) == gather(native.gather_v2_records)
    if base > 0:  # the gathering adds no offsets: only the bound of lastOffsetDelta
        assert gather(native.gather_v2_records) == (pure[1].reason, at)


BEFORE_YEAR_1 = -62_135_596_800_001  # one ms before 0001-01-01T00:00:00Z: no ISO date shows it
# baseTimestamp -2; deltas 0, 1 and one that reaches BEFORE_YEAR_1: timestamps -2, -1 (none), BEFORE_YEAR_1.
NEGATIVE_TIMES = raw_v2_batch(
    raw_record(offset_delta=0)
    + raw_record(offset_delta=1, timestamp_delta=1)
    + raw_record(offset_delta=2, timestamp_delta=BEFORE_YEAR_1 + 2),
    3,
    timestamp=-2,
)


@pytest.mark.parametrize(
    ("mode", "shown"),
    [
        ("ms", ["-2", "-", str(BEFORE_YEAR_1)]),
        ("iso", ["1969-12-31T23:59:59.998Z", "-", "?"]),
        ("both", ["1969-12-31T23:59:59.998Z (-2)", "-", f"? ({BEFORE_YEAR_1})"]),
    ],
)
def test_negative_timestamps_are_shown(mode: str, shown: list[str], tmp_path: Path) -> None:
    """-1 is "no timestamp" (``-``); any other negative timestamp is shown: its number with
    ``--time ms``, a date before 1970 in ISO, or ``?`` before the first ISO year."""
    seg = tmp_path / "00000000000000000000.log"
    seg.write_bytes(NEGATIVE_TIMES)
    res = _run(["dump", "--time", mode, str(seg)])
    assert res.exit_code == 0
    rows = [line.split("\u2502") for line in res.stdout.splitlines() if line.startswith("\u2502")]
    assert [r[2].strip() for r in rows] == shown


def test_the_time_cell_twins_agree_on_negative_times() -> None:
    from kafka_dump.render import rows
    from tests.conftest import reference_module

    native = pytest.importorskip("kafka_dump.native._native")
    from kafka_dump.model import new_record

    records = [new_record(i, ts, b"k", b"v", (), -1, 0) for i, ts in enumerate([-2, -1, BEFORE_YEAR_1, 0])]
    for mode in (rows.TIME_ISO, rows.TIME_MS, rows.TIME_BOTH):
        got = []
        for cells in (reference_module(rows).cells, native.cells):
            columns: list[list[str]] = [[] for _ in range(5)]
            got.append((cells(records, 10, mode, 0, columns), columns[1]))
        assert got[0] == got[1]


def test_an_offset_order_problem_after_int64s_last_offset_stays_inside_int64(tmp_path: Path) -> None:
    """A batch after one whose last offset is int64's top (found by the fuzzer): the order problem's
    ``expected`` (the offset after it) would be past int64; it is held at the top."""
    import json
    import struct
    import subprocess
    import sys
    import zlib

    def v0(offset: int) -> bytes:
        body = b"\x00\x00" + struct.pack(">ii", -1, 1) + b"v"
        return struct.pack(">qiI", offset, 4 + len(body), zlib.crc32(body)) + body

    seg = tmp_path / "00000000000000000000.log"
    seg.write_bytes(v0(2**63 - 1) + v0(6))
    proc = subprocess.run(
        [sys.executable, "-m", "kafka_dump", "verify-crc", "--format", "json", str(seg)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    problems = [json.loads(x) for x in proc.stdout.splitlines() if '"problem"' in x]
    assert proc.returncode == 1, proc.stderr
    assert [(p["check"], p["expected"], p["found"]) for p in problems] == [("offset-order", 2**63 - 1, 6)]
