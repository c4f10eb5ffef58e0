"""What must never pass in silence: unreadable parts of a scan, and inner v0/v1 messages that fail
their CRC. Inputs come from kafka-python's builders or ``struct`` (``tests/batches.py``); kdump runs
as a child process without the capabilities that let root read anything (or as the user it is)."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import struct
import subprocess
import sys
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from kafka.record.legacy_records import LegacyRecordBatchBuilder

from kafka_dump.cli import main
from tests.batches import legacy_messages, legacy_records

ENV = {"COLUMNS": "120", "NO_COLOR": "1"}
ROOT = Path(__file__).resolve().parent.parent
_NO_BYPASS = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search", "--inh-caps=-all", "--"]


def _unprivileged() -> list[str]:
    """The prefix that runs a command without root's exemption from file permissions."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: permissions cannot be made to apply")
    return _NO_BYPASS


def kdump(*args: str) -> tuple[int, str, str]:
    env = {**os.environ, **ENV, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [*_unprivileged(), sys.executable, "-m", "kafka_dump", *args],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    assert "Traceback" not in done.stderr
    return done.returncode, done.stdout, done.stderr


@pytest.fixture
def log_dir(tmp_path: Path) -> Iterator[Path]:
    """``t-0`` (one segment) and ``t-1`` (one segment), both readable; modes are put back after."""
    logs = tmp_path / "logs"
    for i, name in enumerate(("t-0", "t-1")):
        (logs / name).mkdir(parents=True)
        (logs / name / "00000000000000000000.log").write_bytes(
            legacy_messages(legacy_records(4, seed=i), magic=1)
        )
    yield logs
    for p in [logs, *logs.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)


def _json_lines(out: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in out.splitlines()]


def test_an_unreadable_partition_directory_is_reported(log_dir: Path) -> None:
    (log_dir / "t-1").chmod(0)
    code, out, _ = kdump("verify-crc", "--format", "json", str(log_dir))
    assert code == 1  # t-0 was read: 1, not 2
    *summaries, skipped = _json_lines(out)
    assert [(s["type"], s["file"], s["error"]) for s in summaries] == [
        ("summary", str(log_dir / "t-0" / "00000000000000000000.log"), None),
    ]
    assert skipped == {
        "type": "skipped",
        "skipped": {"unreadable": {"count": 1, "paths": [str(log_dir / "t-1")]}},
    }
    code, out, err = kdump("verify-crc", str(log_dir))
    assert code == 1 and f"kdump: 1 path that could not be read: {log_dir / 't-1'}\n" in err
    assert out.rstrip().endswith("the file is valid · 1 path of the walk unreadable · exit 1")  # not a tail


def test_nothing_readable_is_exit_2(log_dir: Path) -> None:
    (log_dir / "t-1").chmod(0)
    code, _, err = kdump("verify-crc", str(log_dir / "t-1"))
    assert code == 2
    assert f"error: {log_dir / 't-1'}: cannot list the directory (Permission denied)" in err


def test_an_unreadable_segment_in_a_scan_is_exit_1(log_dir: Path) -> None:
    (log_dir / "t-1" / "00000000000000000000.log").chmod(0)
    code, out, _ = kdump("verify-crc", "--format", "json", str(log_dir))
    assert code == 1
    errors = [s["error"] for s in _json_lines(out) if s["type"] == "summary"]
    assert errors[0] is None and "Permission denied" in str(errors[1])


def test_an_unreadable_index_is_a_problem(log_dir: Path) -> None:
    log = log_dir / "t-0" / "00000000000000000000.log"
    index = log.with_suffix(".index")
    index.write_bytes(struct.pack(">ii", 3, 5))  # a bad entry too: it must not pass unseen
    index.chmod(0)
    code, out, _ = kdump("verify-crc", "--format", "json", str(log))
    assert code == 1
    problems = [o for o in _json_lines(out) if o["type"] == "problem"]
    assert [(p["file"], p["position"], p["reason"]) for p in problems] == [
        (str(index), 0, "cannot read the index file (Permission denied)")
    ]
    summary = _json_lines(out)[-1]
    assert (summary["indexFiles"], summary["indexProblems"]) == (1, 1)


@pytest.fixture
def partition(log_dir: Path) -> tuple[Path, Path]:
    """``t-0`` with a second segment (offsets 4-5) that cannot be read."""
    partition = log_dir / "t-0"
    second = partition / "00000000000000000004.log"
    second.write_bytes(legacy_messages(legacy_records(2), magic=1, base_offset=4))
    (partition / "00000000000000000006.log").write_bytes(
        legacy_messages(legacy_records(3, seed=6), magic=1, base_offset=6)
    )
    second.chmod(0)
    return partition, second


@pytest.mark.parametrize("fmt", ["table", "json"])
def test_stats_of_a_partition_with_an_unreadable_segment_goes_on(
    partition: tuple[Path, Path], fmt: str
) -> None:
    part, second = partition
    code, out, err = kdump(
        "stats", "--format", fmt, "--no-charts" if fmt == "table" else "--compare", str(part)
    )
    assert (code, err) == (1, f"kdump: {second}: byte 0: cannot read the file (Permission denied)\n")
    if fmt == "json":
        objects = _json_lines(out)
        assert [o["file"] for o in objects[:-1]] == [str(part / f"{n:020d}.log") for n in (0, 6)]
        assert (objects[-1]["type"], objects[-1]["files"], objects[-1]["layout"]["records"]) == (
            "total",
            2,
            7,
        )
    else:
        # the partition's section sums the two segments read; the third is left out of it
        assert f"Measuring {part}{os.sep} (2 files)" in out and "Total:" not in out and str(second) not in out
        assert "│ records           │                     7 │" in out


@pytest.mark.parametrize("fmt", ["table", "json", "kafka"])
def test_dump_of_a_partition_with_an_unreadable_segment_goes_on(
    partition: tuple[Path, Path], fmt: str
) -> None:
    part, second = partition
    code, out, err = kdump("dump", "--format", fmt, str(part))
    assert code == 1
    reason = "cannot read the file (Permission denied)"
    if fmt == "json":
        objects = _json_lines(out)
        assert [o.get("offset", o.get("baseOffset")) for o in objects if o["type"] == "batch"] == [
            0, 1, 2, 3, 6, 7, 8,
        ]  # fmt: skip
        problems = [o for o in objects if o["type"] == "problem"]
        assert [(p["file"], p["position"], p["check"], p["reason"]) for p in problems] == [
            (str(second), 0, "unreadable", reason)
        ]
    elif fmt == "kafka":
        assert err == f"kdump: {second}: byte 0: {reason}\n"
        assert "offset: 8 " in out
    else:
        assert out.count(reason) == 1 and f"Dumping {part / f'{6:020d}.log'}" in out


@pytest.mark.parametrize("command", ["dump", "stats"])
def test_a_partition_of_unreadable_segments_is_exit_2(partition: tuple[Path, Path], command: str) -> None:
    part, _ = partition
    for log in part.glob("*.log"):
        log.chmod(0)
    code, _, err = kdump(command, str(part))
    assert code == 2 and err.count("cannot read the file (Permission denied)") == (
        3 if command == "stats" else 0
    )


# --- an inner message with a bad CRC ------------------------------------------------------------------


def _wrapper_with_a_bad_inner_crc() -> bytes:
    """A v1 gzip wrapper at offset 2 whose second inner message has one value byte changed after its
    CRC was computed; the wrapper's own CRC is valid."""
    builder = LegacyRecordBatchBuilder(magic=1, compression_type=0, batch_size=1 << 20)
    for i in range(3):
        builder.append(i, timestamp=1_700_000_000_000 + i, key=b"k%d" % i, value=b"v%d" % i)
    inner = bytearray(builder.build())
    second = 12 + struct.unpack_from(">i", inner, 8)[0]
    inner[second + 12 + 4 + 2 + 8 + 4 + 2 + 4] ^= (
        0x20  # overhead, crc, magic+attributes, timestamp, key, value length
    )
    payload = gzip.compress(bytes(inner))
    body = b"\x01\x01" + struct.pack(">qii", 1_700_000_000_002, -1, len(payload)) + payload
    return struct.pack(">qiI", 2, 4 + len(body), zlib.crc32(body)) + body


@pytest.mark.parametrize("fmt", ["table", "json", "kafka"])
def test_an_inner_crc_failure_makes_dump_exit_1(tmp_path: Path, fmt: str) -> None:
    seg = tmp_path / "00000000000000000000.log"
    seg.write_bytes(_wrapper_with_a_bad_inner_crc())
    res = CliRunner().invoke(main, ["dump", "--format", fmt, str(seg)], env=ENV)
    assert res.exit_code == 1, res.output
    if fmt == "json":
        (batch,) = [o for o in _json_lines(res.stdout) if o["type"] == "batch"]
        assert [r["crcValid"] for r in batch["records"]] == [True, False, True]  # type: ignore[index]
    ok = seg.with_name("00000000000000000003.log")  # the same wrapper with a sound inner set
    ok.write_bytes(legacy_messages([(b"k", b"v")] * 3, magic=1, codec=1, base_offset=3))
    assert CliRunner().invoke(main, ["dump", "--format", fmt, str(ok)], env=ENV).exit_code == 0


# --- inner offsets that repeat or run backwards -----------------------------------------------------


def _wrapper(magic: int, offsets: list[int], wrapper_offset: int) -> bytes:
    """A gzip wrapper (kafka-python's builder) whose inner messages carry ``offsets`` as written."""
    builder = LegacyRecordBatchBuilder(magic=magic, compression_type=1, batch_size=1 << 20)
    for i, offset in enumerate(offsets):
        builder.append(offset, timestamp=1_700_000_000_000 + i, key=b"k%d" % i, value=b"value %d" % i)
    data = bytearray(builder.build())
    data[0:8] = struct.pack(">q", wrapper_offset)
    return bytes(data)


_PLAIN = legacy_messages(legacy_records(2), magic=1)  # offsets 0 and 1, before the wrapper
# name: (segment, byte position of the wrapper, (expected, found) of the check)
_OFFSETS = {
    "v1-relative-0-0-0": (_PLAIN + _wrapper(1, [0, 0, 0], 4), len(_PLAIN), (0, 0)),
    "v0-absolute-7-3-3": (_wrapper(0, [7, 3, 3], 7), 0, (7, 3)),
}


@pytest.mark.parametrize("name", list(_OFFSETS))
def test_inner_offsets_that_do_not_grow_are_a_check(tmp_path: Path, name: str) -> None:
    data, wrapper_at, (expected, found) = _OFFSETS[name]
    seg = tmp_path / "00000000000000000000.log"
    seg.write_bytes(data + legacy_messages(legacy_records(2), magic=1, base_offset=10))
    for command in (["dump", "--format", "json"], ["verify-crc", "--format", "json"]):
        res = CliRunner().invoke(main, [*command, str(seg)], env=ENV)
        assert res.exit_code == 1, res.output
        problems = [o for o in _json_lines(res.stdout) if o["type"] == "problem"]
        assert [(p["check"], p["position"], p["expected"], p["found"]) for p in problems] == [
            ("inner-offset", wrapper_at, expected, found)
        ]
        assert "not above the one before it" in str(problems[0]["reason"])
