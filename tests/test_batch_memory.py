"""The memory of one batch's decoded form is bounded: a tiny gzip file holding a record of millions of
headers, or a batch of many minimal records, costs every command and format a bounded peak RSS, and
says what it did not decode. Inputs are built here with ``struct``, ``zlib`` and the ``crc32c``
package (not kdump's encoder); kdump runs as a child process whose peak RSS ``os.wait4`` reports."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import crc32c
import pytest

from kafka_dump import native
from kafka_dump.wire import decode_legacy_inner, decode_v2_records
from kafka_dump.wire.layout import MAX_DECODED_PER_BATCH
from tests.batches import varint

ROOT = Path(__file__).resolve().parent.parent
ENV = {"COLUMNS": "1000", "NO_COLOR": "1", "PYTHONPATH": str(ROOT)}
HEADERS = 2_000_000  # one record's: 4 KB of gzip, 230 MB to 800 MB of RSS when every header is built
RECORDS = 600_000  # minimal records in one batch: past the bound, and 0.6 to 0.8 GB when all are built
BOUND_MB = 200  # what a child may take for the header record: far under what building them took


def _gzip(data: bytes) -> bytes:
    c = zlib.compressobj(6, zlib.DEFLATED, 31)
    return c.compress(data) + c.flush()


def _v2_gzip_batch(records: bytes, count: int) -> bytes:
    """A v2 batch (baseOffset 0, gzip, CreateTime 0, no producer) around ``records``, CRC-32C valid."""
    body = struct.pack(">hiqqqhii", 1, count - 1, 0, 0, -1, -1, -1, count) + _gzip(records)
    rest = struct.pack(">ibI", 0, 2, crc32c.crc32c(body)) + body
    return struct.pack(">qi", 0, len(rest)) + rest


def _record(offset_delta: int, headers: int = 0) -> bytes:
    """A record with a null key and value and ``headers`` empty headers (key and value of 0 bytes)."""
    body = b"\x00" + varint(0) + varint(offset_delta) + varint(-1) + varint(-1) + varint(headers)
    body += b"\x00\x00" * headers
    return varint(len(body)) + body


def _v0_message(offset: int, attributes: int, value: bytes | None, magic: int = 0) -> bytes:
    """A v0 message (or v1, timestamp 0) with a null key, CRC-32 valid."""
    body = struct.pack(">bb", magic, attributes) + (struct.pack(">q", 0) if magic else b"")
    body += struct.pack(">i", -1)
    body += struct.pack(">i", -1) if value is None else struct.pack(">i", len(value)) + value
    message = struct.pack(">I", zlib.crc32(body)) + body
    return struct.pack(">qi", offset, len(message)) + message


@pytest.fixture(scope="module")
def many_headers(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("headers") / "00000000000000000000.log"
    path.write_bytes(_v2_gzip_batch(_record(0, HEADERS), 1))
    return path


@pytest.fixture(scope="module")
def many_records(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("records") / "00000000000000000000.log"
    path.write_bytes(_v2_gzip_batch(b"".join(_record(i) for i in range(RECORDS)), RECORDS))
    return path


# Runs the command given after the report file's name and writes "exit-code peak-RSS-KB" there. A child
# of pytest itself would report at least pytest's own peak: Linux carries the RSS a process had
# before its exec into its peak; this small launcher is the parent kdump inherits it from.
_LAUNCH = """import os, subprocess, sys
child = subprocess.Popen(sys.argv[2:])
_, status, usage = os.wait4(child.pid, 0)
with open(sys.argv[1], "w") as report:
    report.write(f"{os.waitstatus_to_exitcode(status)} {usage.ru_maxrss}")
"""


def _run(args: list[str], tmp_path: Path) -> tuple[int, str, str, int]:
    """Exit code, stdout, stderr and peak RSS (MB) of kdump run with ``args`` as a child process."""
    report = tmp_path / "report"
    done = subprocess.run(
        [sys.executable, "-c", _LAUNCH, str(report), sys.executable, "-m", "kafka_dump", *args],
        capture_output=True, text=True, env={**os.environ, **ENV}, check=True,
    )  # fmt: skip
    assert "Traceback" not in done.stderr
    code, rss = map(int, report.read_text().split())
    return code, done.stdout, done.stderr, rss // 1024


HEADER_PROBLEM = (
    f"record has {HEADERS} headers, more than kdump reads in one batch ({MAX_DECODED_PER_BATCH})"
    " (at byte 0 of the decompressed records)"
)

# Each command and format on the header record: its arguments (OUT: a new file) and exit code.
COMMANDS = {
    "table": (["dump"], 1),
    "expanded": (["dump", "-x"], 1),
    "json": (["dump", "--format", "json", "--payload", "base64"], 1),
    "kafka": (["dump", "--format", "kafka"], 1),
    "stats": (["stats"], 0),
    "compare": (["stats", "--compare"], 0),
    "verify": (["verify-crc"], 1),
    "salvage": (["verify-crc", "--salvage", "OUT"], 1),
    "convert": (["convert", "--to-magic", "1", "-o", "OUT"], 1),
}


@pytest.mark.parametrize("name", COMMANDS)
def test_record_of_many_headers(name: str, many_headers: Path, tmp_path: Path) -> None:
    args, code = COMMANDS[name]
    args = [str(tmp_path / "out") if a == "OUT" else a for a in args]
    rc, out, err, rss = _run([*args, str(many_headers)], tmp_path)
    assert rc == code
    assert HEADER_PROBLEM in out + err
    assert rss < BOUND_MB, f"{name}: {rss} MB"


def test_record_of_many_headers_problem(many_headers: Path, tmp_path: Path) -> None:
    rc, out, _, _ = _run(["dump", "--format", "json", str(many_headers)], tmp_path)
    batch, problem = (json.loads(line) for line in out.splitlines())
    assert rc == 1
    assert (batch["recordCount"], batch["records"]) == (1, None)  # none read
    assert problem == {
        "type": "problem", "file": str(many_headers), "position": 0, "length": many_headers.stat().st_size,
        "kind": "corrupt", "reason": HEADER_PROBLEM, "baseOffset": 0, "check": "too-large",
        "expected": MAX_DECODED_PER_BATCH, "found": HEADERS,
    }  # fmt: skip


def test_batch_of_many_records(many_records: Path, tmp_path: Path) -> None:
    """The records up to the bound are shown, the others counted; the table, the costliest form per
    record, stays far under what the whole batch took."""
    rc, out, _, _ = _run(["dump", "--format", "json", str(many_records)], tmp_path)
    batch, problem = (json.loads(line) for line in out.splitlines())
    assert rc == 1
    assert batch["recordCount"] == RECORDS
    assert [r["offset"] for r in batch["records"]] == list(range(MAX_DECODED_PER_BATCH))
    assert problem["check"] == "too-large"
    assert problem["position"] == 0
    assert problem["reason"].startswith(
        f"the batch holds more records and headers than kdump decodes in one batch ({MAX_DECODED_PER_BATCH}):"
        f" its records from offset {MAX_DECODED_PER_BATCH} on ({RECORDS - MAX_DECODED_PER_BATCH} of {RECORDS})"
        " are not decoded (at byte "
    )
    rc, out, _, rss = _run(["dump", str(many_records)], tmp_path)
    assert rc == 1
    assert f"{RECORDS - MAX_DECODED_PER_BATCH} of {RECORDS}) are not decoded" in out
    assert rss < 480, f"{rss} MB"


def test_wrapper_of_many_messages(tmp_path: Path) -> None:
    """A v0 gzip wrapper of more inner messages than the bound: those up to it, and a problem."""
    n = MAX_DECODED_PER_BATCH + 5
    inner = b"".join(_v0_message(i, 0, None) for i in range(n))
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(_v0_message(n - 1, 1, _gzip(inner)))
    rc, out, _, _ = _run(["dump", "--format", "json", str(path)], tmp_path)
    batch, problem = (json.loads(line) for line in out.splitlines())
    assert rc == 1
    assert len(batch["records"]) == MAX_DECODED_PER_BATCH
    assert problem["reason"] == (
        f"the wrapper holds {n} inner messages, more than kdump decodes in one batch ({MAX_DECODED_PER_BATCH}):"
        f" the 5 from offset {MAX_DECODED_PER_BATCH} on are not decoded"
    )
    assert (problem["position"], problem["check"]) == (0, "too-large")


def test_convert_wrapper_of_many_messages(tmp_path: Path) -> None:
    """``convert``'s fast path takes no v1 wrapper past the bound: the slow way reports it, as it would
    without the fast path."""
    n = MAX_DECODED_PER_BATCH + 2
    inner = b"".join(_v0_message(i, 0, b"v", magic=1) for i in range(n))
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(_v0_message(n - 1, 1, _gzip(inner), magic=1))
    rc, _, err, _ = _run(["convert", str(path), "-o", str(tmp_path / "out.log")], tmp_path)
    assert rc == 1
    assert (
        f"byte 0: corrupt input: the wrapper holds {n} inner messages, more than kdump decodes in one batch"
        f" ({MAX_DECODED_PER_BATCH}): the 2 from offset {MAX_DECODED_PER_BATCH} on are not decoded"
    ) in err
    assert not (tmp_path / "out.log").exists()


@pytest.mark.parametrize("extra", [0, 1])
def test_twins_agree_at_the_bound(extra: int) -> None:
    """The compiled and the pure decoder stop at the same record, with the same error."""
    n = MAX_DECODED_PER_BATCH - 3  # then a record of 2 headers (exactly the bound) or 3 (one past it)
    data = b"".join(_record(i) for i in range(n)) + _record(n, 2 + extra) + _record(n + 1)
    found = [
        decoder(data, 0, len(data), n + 2, 10, 0, None, -1)
        for decoder in (decode_v2_records, native.reference(decode_v2_records))
    ]
    (records, error), (pure_records, pure_error) = found
    assert error is not None and pure_error is not None
    assert (error.reason, error.position, error.check) == (
        pure_error.reason,
        pure_error.position,
        pure_error.check,
    )
    assert len(records) == len(pure_records) == n + 1 - extra
    assert records[-1] == pure_records[-1]
    inner = b"".join(_v0_message(i, 0, b"v") for i in range(MAX_DECODED_PER_BATCH + extra))
    (records, error), (pure_records, pure_error) = (
        decoder(inner, 0, 0, None) for decoder in (decode_legacy_inner, native.reference(decode_legacy_inner))
    )
    assert len(records) == len(pure_records) == MAX_DECODED_PER_BATCH
    assert records[-1] == pure_records[-1]
    assert str(error) == str(pure_error)
    assert (error is None) == (extra == 0)
