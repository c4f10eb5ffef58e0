"""The adversarial corpus of ``fixtures/bad/`` (issue 11), checked by name.

Each file was crafted by ``fixtures/bad/make_bad.py``; this table says what kdump must make of it
with ``dump --format json``: the exit code, and the first problem's kind, byte position and the words
its reason must hold. Good batches after a damaged one must still be read (``batches``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kafka_dump.cli import main
from tests.conftest import FIXTURES

BAD = FIXTURES / "bad"
ENV = {"COLUMNS": "120", "NO_COLOR": "1"}

# name: (exit code, batches read, (kind, position, words in the reason) of the first problem or None)
EXPECTED: dict[str, tuple[int, int, tuple[str, int, str] | None]] = {
    "empty.log": (0, 0, None),  # a new segment is empty: nothing to report
    "one-byte.log": (0, 0, ("partial-tail", 0, "partial entry")),
    "eleven-bytes.log": (0, 0, ("partial-tail", 0, "partial entry")),
    "all-zeros.log": (0, 0, ("zero-tail", 0, "zero bytes")),
    "magic-3.log": (1, 1, ("corrupt", 0, "magic 3")),
    "magic-255.log": (1, 1, ("corrupt", 0, "magic 255")),
    "length-0.log": (1, 1, ("corrupt", 0, "size 0")),
    "length-minus-1.log": (1, 1, ("corrupt", 0, "size -1")),
    "length-max.log": (1, 1, ("corrupt", 0, "size 2147483647")),
    # 2^31-1 declared records is past --max-records-per-batch: refused from the header alone.
    "count-max.log": (1, 2, ("corrupt", 0, "2147483647 records, more than --max-records-per-batch")),
    "key-length-minus-2.log": (1, 2, ("corrupt", 61, "")),
    "key-length-past-record.log": (1, 2, ("corrupt", 61, "key length 200")),
    "header-count-minus-1.log": (1, 2, ("corrupt", 61, "header count -1")),
    "header-count-1e9.log": (1, 2, ("corrupt", 61, "header count 1000000000")),
    "varint-10-bytes.log": (0, 2, None),  # a 10-byte varlong is long but legal (Kafka reads it)
    "varint-11-bytes.log": (1, 2, ("corrupt", 61, "varint")),
    "codec-5.log": (1, 2, ("corrupt", 0, "codec")),
    "codec-6.log": (1, 2, ("corrupt", 0, "codec")),
    "codec-7.log": (1, 2, ("corrupt", 0, "codec")),
    "zstd-in-v1-wrapper.log": (1, 2, ("corrupt", 0, "compression type 4")),
    "lz4-bad-magic.log": (1, 2, ("corrupt", 0, "LZ4 frame magic")),
    "lz4-truncated-block.log": (1, 2, ("corrupt", 0, "lz4")),
    "snappy-block-past-end.log": (1, 2, ("corrupt", 0, "snappy")),
    "nested-compressed-wrapper.log": (1, 2, ("corrupt", 0, "itself compressed")),
    "empty-wrapper.log": (1, 2, ("corrupt", 0, "no inner messages")),
    "control-short-key.log": (1, 2, ("corrupt", 0, "shorter than 4 bytes")),
    "control-negative-version.log": (1, 2, ("corrupt", 0, "negative version")),
    "timestamp-minus-2.log": (0, 2, None),
    "timestamp-long-max.log": (0, 2, None),
    "offsets-backwards.log": (0, 2, None),  # dump shows what is there; verify-crc judges the order
}
NOT_A_SEGMENT = ("index-as-log.log", "random-bytes.log")

# name: (exit code, (check, position) of each problem, in order) under ``verify-crc --format json``.
# verify-crc judges what dump only shows: offsets going backwards are a problem here.
VERIFY: dict[str, tuple[int, list[tuple[str, int]]]] = {
    "empty.log": (0, []),
    "one-byte.log": (0, [("partial-tail", 0)]),
    "eleven-bytes.log": (0, [("partial-tail", 0)]),
    "all-zeros.log": (0, [("zero-tail", 0)]),
    "index-as-log.log": (2, []),
    "random-bytes.log": (2, []),
    "magic-3.log": (1, [("bad-magic", 0)]),
    "magic-255.log": (1, [("bad-magic", 0)]),
    "length-0.log": (1, [("bad-length", 0)]),
    "length-minus-1.log": (1, [("bad-length", 0)]),
    "length-max.log": (1, [("bad-length", 0)]),
    "count-max.log": (1, [("too-large", 0)]),
    # Key length -2 reads as a null key (as Kafka reads it); the bytes after it then make no record.
    "key-length-minus-2.log": (1, [("field-length", 61)]),
    "key-length-past-record.log": (1, [("field-length", 61)]),
    "header-count-minus-1.log": (1, [("header-count", 61)]),
    "header-count-1e9.log": (1, [("header-count", 61)]),
    "varint-10-bytes.log": (0, []),
    "varint-11-bytes.log": (1, [("varint", 61)]),
    "codec-5.log": (1, [("codec", 0)]),
    "codec-6.log": (1, [("codec", 0)]),
    "codec-7.log": (1, [("codec", 0)]),
    "zstd-in-v1-wrapper.log": (1, [("codec", 0)]),
    "lz4-bad-magic.log": (1, [("decompress", 0)]),
    "lz4-truncated-block.log": (1, [("decompress", 0)]),
    "snappy-block-past-end.log": (1, [("decompress", 0)]),
    "nested-compressed-wrapper.log": (1, [("codec", 0)]),
    "empty-wrapper.log": (1, [("wrapper", 0)]),
    "control-short-key.log": (1, [("control", 0)]),
    "control-negative-version.log": (1, [("control", 0)]),
    "timestamp-minus-2.log": (0, []),
    "timestamp-long-max.log": (0, []),
    "offsets-backwards.log": (1, [("offset-order", 106)]),
    "gzip-bomb.log": (1, [("too-large", 0)]),
    "lz4-linked-bomb.log": (1, [("too-large", 0)]),
}


def dump(path: Path, *extra: str) -> tuple[int, list[dict[str, Any]], str]:
    res = CliRunner().invoke(
        main, ["dump", "--format", "json", "--payload", "hex", *extra, str(path)], env=ENV
    )
    assert "Traceback" not in res.stdout + res.stderr
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    return res.exit_code, [json.loads(line) for line in res.stdout.splitlines()], res.stderr


def test_the_corpus_is_complete() -> None:
    made = {p.name for p in BAD.glob("*.log")}
    assert made == {*EXPECTED, *NOT_A_SEGMENT, "gzip-bomb.log", "lz4-linked-bomb.log"}
    assert made == set(VERIFY)


def run_json(*args: str) -> tuple[int, list[dict[str, Any]], str]:
    """A command's exit code, its JSON Lines and its stderr; it must not raise nor print a traceback."""
    res = CliRunner().invoke(main, list(args), env=ENV)
    assert "Traceback" not in res.stdout + res.stderr
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    return res.exit_code, [json.loads(line) for line in res.stdout.splitlines()], res.stderr


@pytest.mark.parametrize("name", sorted(VERIFY))
def test_verify_crc_on_bad_file(name: str) -> None:
    """Every corpus file under verify-crc: the exact checks, positions and exit code, one summary."""
    path = BAD / name
    code, objs, _ = run_json(
        "verify-crc", "--format", "json", "-j", "1", "--max-batch-bytes", str(8 << 20), str(path)
    )
    want_code, want_problems = VERIFY[name]
    assert code == want_code
    problems = [o for o in objs if o["type"] == "problem"]
    assert [(p["check"], p["position"]) for p in problems] == want_problems
    size = path.stat().st_size
    assert all(p["position"] >= 0 and p["position"] + p["length"] <= size for p in problems)
    (summary,) = [o for o in objs if o["type"] == "summary"]
    if want_code == 2:
        assert "not a Kafka log segment" in summary["error"] and name in summary["error"]
    else:
        assert summary["error"] is None and summary["problems"] == sum(
            p["kind"] == "corrupt" for p in problems
        )


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_bad_file(name: str) -> None:
    code, objs, _ = dump(BAD / name)
    want_code, want_batches, want_problem = EXPECTED[name]
    assert code == want_code
    assert sum(o["type"] == "batch" for o in objs) == want_batches
    found = [o for o in objs if o["type"] == "problem"]
    if want_problem is None:
        assert found == []
        return
    kind, position, words = want_problem
    first = found[0]
    assert (first["kind"], first["position"]) == (kind, position)
    assert words in first["reason"]
    size = (BAD / name).stat().st_size
    assert all(p["position"] >= 0 and p["position"] + p["length"] <= size for p in found)


@pytest.mark.parametrize("name", NOT_A_SEGMENT)
def test_not_a_segment(name: str) -> None:
    code, objs, err = dump(BAD / name)
    assert (code, objs) == (2, [])
    assert err.count("\n") == 1 and name in err and "not a Kafka log segment" in err


def test_gzip_bomb_is_cut_off_in_bounded_memory() -> None:
    """1 GiB of zeros in 1 MB of gzip: cut at --max-batch-bytes, and the batch after it is read."""
    code, objs, _ = dump(BAD / "gzip-bomb.log", "--max-batch-bytes", str(8 << 20))
    assert code == 1
    (problem,) = [o for o in objs if o["type"] == "problem"]
    assert problem["position"] == 0 and "--max-batch-bytes" in problem["reason"]
    assert [o["baseOffset"] for o in objs if o["type"] == "batch"][-1] == 1


def test_linked_lz4_blocks_take_linear_time() -> None:
    """1,024 linked LZ4 blocks: each refers back at most 64 KiB (a join of every block was quadratic)."""
    code, objs, _ = dump(BAD / "lz4-linked-bomb.log", "--max-batch-bytes", str(32 << 20))
    assert code == 1
    (problem,) = [o for o in objs if o["type"] == "problem"]
    assert "--max-batch-bytes" in problem["reason"]


def test_more_than_2_gib_sparse(tmp_path: Path) -> None:
    """A segment past 2 GiB (a hole in the middle) is read through, not into memory."""
    good = (FIXTURES / "v2-none.log").read_bytes()
    path = tmp_path / "00000000000000000000.log"
    with open(path, "wb") as f:
        f.write(good)
        f.truncate(2**31 + 4096)
    if os.stat(path).st_blocks * 512 > 1 << 20:
        pytest.skip("this file system does not make sparse files")
    code, objs, _ = dump(path)
    assert code == 0
    assert objs[-1]["kind"] == "zero-tail" and objs[-1]["position"] == len(good)


def test_a_fifo_is_read_as_a_stream(tmp_path: Path) -> None:
    """``kdump dump /dev/stdin`` and named pipes: spooled to an unnamed temporary file, then read."""
    import threading

    fifo = tmp_path / "00000000000000000000.log"
    os.mkfifo(fifo)
    data = (FIXTURES / "v1-gzip.log").read_bytes()

    def feed() -> None:
        with open(fifo, "wb") as f:
            f.write(data)

    writer = threading.Thread(target=feed)
    writer.start()
    code, objs, _ = dump(fifo)
    writer.join()
    assert code == 0
    from_file = dump(FIXTURES / "v1-gzip.log")[1]
    assert [o["records"] for o in objs] == [o["records"] for o in from_file]


@pytest.mark.parametrize("device", ["/dev/null", "/dev/zero"])
def test_a_device_file_is_refused(device: str) -> None:
    if not os.path.exists(device):
        pytest.skip(f"no {device} here")
    code, objs, err = dump(Path(device))
    assert (code, objs) == (2, [])
    assert err == f"kdump: error: {device}: a device file is not read as a segment\n"


@pytest.mark.parametrize(
    ("fixture", "limit", "problems"),
    [
        ("v2-gzip.log", 3, [(202, "batch declares 4 records, more than --max-records-per-batch (3)")]),
        ("v2-none.log", 100, []),
        ("v1-gzip.log", 2, [(p, "wrapper holds more than 2 inner messages") for p in (0, 173, 344)]),
        ("v1-gzip.log", 3, []),
    ],
)
def test_max_records_per_batch(fixture: str, limit: int, problems: list[tuple[int, str]]) -> None:
    """A batch (a wrapper) past the limit is a too-large problem at its position; reading goes on."""
    path = FIXTURES / fixture
    code, objs, _ = dump(path, "--max-records-per-batch", str(limit))
    found = [o for o in objs if o["type"] == "problem"]
    assert code == (1 if problems else 0)
    assert [
        (p["position"], p["reason"][: len(r)]) for p, (_, r) in zip(found, problems, strict=True)
    ] == problems
    assert {p["check"] for p in found} <= {"too-large"} and all(p["expected"] == limit for p in found)
    batches = [o for o in objs if o["type"] == "batch"]
    untouched = dump(path)[1]
    assert [b["position"] for b in batches] == [b["position"] for b in untouched if b["type"] == "batch"]
    refused = {p["position"] for p in found}
    for mine, theirs in zip(batches, [b for b in untouched if b["type"] == "batch"], strict=True):
        assert mine["records"] == (None if mine["position"] in refused else theirs["records"])  # null: unread
    vcode, vobjs, _ = run_json(
        "verify-crc", "--format", "json", "-j", "1", "--max-records-per-batch", str(limit), str(path)
    )
    assert vcode == code
    assert [(o["check"], o["position"]) for o in vobjs if o["type"] == "problem"] == [
        ("too-large", p) for p, _ in problems
    ]
    res = CliRunner().invoke(
        main, ["stats", "--format", "json", "--max-records-per-batch", str(limit), str(path)], env=ENV
    )
    assert res.exit_code == 0 and _stderr_positions(res.stderr, fixture) == [p for p, _ in problems]
    assert json.loads(res.stdout.splitlines()[0])["layout"]["batches"] == len(batches) - len(problems)


def test_count_inner_stops_past_the_limit() -> None:
    from kafka_dump.wire.legacy import count_inner

    sys_path = str(BAD)
    import sys

    sys.path.insert(0, sys_path)
    try:
        from make_bad import message
    finally:
        sys.path.remove(sys_path)
    data = b"".join(message(b"x" * i, offset=i) for i in range(10))
    assert count_inner(data, 100) == 10
    assert count_inner(data, 3) == 4  # stops one past the limit
    assert count_inner(data + b"\x00" * 11, 100) == 10  # stray bytes are not a message
    assert count_inner(bytes(8) + b"\xff" * 4 + bytes(30), 100) == 0  # a negative size ends the count
    assert count_inner(data[:-1], 100) == 9  # so does a message running past the end


def _stderr_positions(err: str, name: str) -> list[int]:
    """The byte positions of the problems a command reported on stderr, one line each."""
    out = []
    for line in err.splitlines():
        assert line.startswith("kdump: ") and name in line, line
        out.append(int(line.split(": byte ", 1)[1].split(":", 1)[0]))
    return out


@pytest.mark.parametrize("name", sorted(VERIFY))
def test_stats_on_bad_file(name: str) -> None:
    """stats counts what is valid and reports on stderr the problems dump reports, at the same bytes."""
    path = BAD / name
    limit = ("--max-batch-bytes", str(8 << 20))
    res = CliRunner().invoke(main, ["stats", "--format", "json", *limit, str(path)], env=ENV)
    assert "Traceback" not in res.stdout + res.stderr
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    if name in NOT_A_SEGMENT:
        assert (res.exit_code, res.stdout) == (2, "")
        assert res.stderr.count("\n") == 1 and "not a Kafka log segment" in res.stderr
        return
    assert res.exit_code == 0
    file_obj, total = (json.loads(line) for line in res.stdout.splitlines())
    assert (file_obj["type"], total["type"]) == ("file", "total")
    _, objs, _ = dump(path, *limit)
    assert _stderr_positions(res.stderr, name) == [o["position"] for o in objs if o["type"] == "problem"]
    at = [o["position"] for o in objs if o["type"] == "problem"]
    batches = [o for o in objs if o["type"] == "batch"]
    whole = [b for b in batches if not any(b["position"] <= p < b["position"] + b["sizeInBytes"] for p in at)]
    assert file_obj["layout"]["batches"] >= len(whole)
    assert file_obj["layout"]["records"] >= sum(len(b["records"]) for b in whole)


CONVERTS_CLEAN = {
    "empty.log", "one-byte.log", "eleven-bytes.log", "all-zeros.log", "varint-10-bytes.log",
    "timestamp-minus-2.log", "timestamp-long-max.log",
}  # fmt: skip


@pytest.mark.parametrize("skip", [False, True], ids=["stop", "skip-corrupt"])
@pytest.mark.parametrize("name", sorted(VERIFY))
def test_convert_on_bad_file(name: str, skip: bool, tmp_path: Path) -> None:
    """convert refuses (one line naming the file and byte, nothing written) or writes a segment that
    verifies clean; with --skip-corrupt, the damaged batches are left out and the rest written."""
    out = tmp_path / "00000000000000000000.log"
    args = ["convert", str(BAD / name), "-o", str(out), "--format", "json", "--max-batch-bytes", str(8 << 20)]
    res = CliRunner().invoke(main, args + (["--skip-corrupt"] if skip else []), env=ENV)
    assert "Traceback" not in res.stdout + res.stderr
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    written = sorted(p.name for p in tmp_path.iterdir())
    if name in NOT_A_SEGMENT:
        assert (res.exit_code, written) == (2, [])
        assert (
            res.stderr == f"kdump: error: {BAD / name}: not a Kafka log segment: no valid entry in the file\n"
        )
        return
    if name in CONVERTS_CLEAN:
        assert res.exit_code == 0
    elif skip and name != "offsets-backwards.log":
        assert res.exit_code == 1  # written, without the damaged batches (listed in the report)
        (report,) = (json.loads(line) for line in res.stdout.splitlines())
        assert [s["position"] for s in report["skipped"]] == [VERIFY[name][1][0][1]]
    else:
        # Stopped at the first damaged batch (or, for offsets going backwards, at the output's check).
        assert (res.exit_code, written) == (1, [])
        where = f"{out}: byte 106: " if name == "offsets-backwards.log" else f"{BAD / name}: byte "
        assert res.stderr.count("\n") == 1 and res.stderr.startswith(f"kdump: error: {where}")
        return
    assert out.name in written
    code, objs, _ = run_json("verify-crc", "--format", "json", "-j", "1", str(out))
    assert code == 0 and [o for o in objs if o["type"] == "problem"] == []


@pytest.mark.parametrize("step", [1, 7, 4096])
def test_gzip_inflates_in_steps(step: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """gzip is inflated a step at a time (a bomb is refused before a join doubles it): any step
    gives the same bytes, the same refusals, concatenated members and trailing bytes included."""
    import gzip

    from kafka_dump.errors import CompressionError
    from kafka_dump.wire import codecs

    monkeypatch.setattr(codecs, "_GUNZIP_STEP", step)
    for data in (b"", b"a" * 100, bytes(range(256)) * 50):
        z = gzip.compress(data, mtime=0)
        assert codecs._gunzip(z, 10**6) == data
        assert codecs._gunzip(z + gzip.compress(b"xyz", mtime=0) + b"junk", 10**6) == data + b"xyz"
        assert codecs._gunzip(z, len(data)) == data
        if data:
            with pytest.raises(CompressionError, match="ends before its end of stream"):
                codecs._gunzip(z[:-9], 10**6)
            with pytest.raises(CompressionError, match="--max-batch-bytes"):
                codecs._gunzip(z, len(data) - 1)
