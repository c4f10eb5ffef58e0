"""No traceback from what options, the environment or the side files say: option values past 64
bits, an output encoding that cannot hold the data, a full output, numbers of thousands of digits,
negative index positions, terminal controls in file names. Inputs are built by kafka-python or by
``struct`` (``tests/batches.py``), never by kdump."""

from __future__ import annotations

import json
import os
import stat
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from kafka_dump.cli import main
from tests.batches import legacy_messages

ENV = {"COLUMNS": "120", "NO_COLOR": "1"}
ROOT = Path(__file__).resolve().parent.parent
TOO_BIG = str(2**63)
LARGEST = str(2**63 - 1)


def run(*args: str) -> tuple[int, str, str]:
    res = CliRunner().invoke(main, list(args), env=ENV)
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    return res.exit_code, res.stdout, res.stderr


@pytest.fixture
def segment(tmp_path: Path) -> Path:
    """Three v1 messages whose keys and values hold characters no 8-bit encoding has."""
    records = [(b"k\xe2\x86\x92", f"snow \u2603 \u202e {i}") for i in range(3)]
    path = tmp_path / "t-0" / "00000000000000000000.log"
    path.parent.mkdir()
    path.write_bytes(legacy_messages([(k, v.encode()) for k, v in records], magic=1))
    return path


def _commands(segment: Path, tmp_path: Path) -> dict[str, list[str]]:
    out = str(tmp_path / "out" / "00000000000000000000.log")
    return {
        "dump": ["dump", str(segment)],
        "dump-json": ["dump", "--format", "json", str(segment)],
        "dump-kafka": ["dump", "--format", "kafka", str(segment)],
        "verify": ["verify-crc", str(segment)],
        "verify-json": ["verify-crc", "--format", "json", str(segment)],
        "stats": ["stats", str(segment)],
        "stats-json": ["stats", "--format", "json", str(segment)],
        "stats-compare": ["stats", "--compare", str(segment)],
        "convert": ["convert", str(segment), "-o", out],
    }


COMMANDS = ["dump", "dump-json", "dump-kafka", "verify", "verify-json", "stats", "stats-json",
            "stats-compare", "convert"]  # fmt: skip


# --- option values past int64 ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "option"),
    [
        ("dump", "--max-bytes"),
        *((c, o) for c in ("dump", "verify-crc", "stats", "convert")
          for o in ("--max-batch-bytes", "--max-records-per-batch")),
    ],
)  # fmt: skip
def test_option_values_past_int64_are_usage_errors(
    segment: Path, tmp_path: Path, command: str, option: str
) -> None:
    target = ["-o", str(tmp_path / "o.log")] if command == "convert" else []
    code, out, err = run(command, option, TOO_BIG, str(segment), *target)
    assert (code, out) == (2, "")
    assert f"Invalid value for '{option}': {TOO_BIG} is not in the range 1<=x<={LARGEST}." in err
    assert "Traceback" not in err
    code, _, err = run(command, option, LARGEST, str(segment), *target)  # the largest is fine
    assert (code, err) == (0, "")


def test_a_timestamp_past_int64_is_a_usage_error(segment: Path, tmp_path: Path) -> None:
    code, out, err = run(
        "convert", "--to-magic", "1", "--timestamp", "99999999999999999999999", str(segment), "-o",
        str(tmp_path / "o.log"),
    )  # fmt: skip
    assert (code, out) == (2, "")
    assert "Invalid value for '--timestamp': 99999999999999999999999 is not in the range" in err
    assert not (tmp_path / "o.log").exists()


# --- an output encoding that cannot hold the data ---------------------------------------------------


def _kdump(args: list[str], env: dict[str, str], **kwargs: object) -> subprocess.CompletedProcess[bytes]:
    full = {**os.environ, **ENV, "PYTHONPATH": str(ROOT), **env}
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, **kwargs}
    return subprocess.run(  # type: ignore[call-overload, no-any-return]
        [sys.executable, "-m", "kafka_dump", *args], env=full, check=False, **pipes
    )


@pytest.mark.parametrize(
    "env", [{"PYTHONIOENCODING": "latin-1"}, {"LC_ALL": "POSIX", "PYTHONUTF8": "0", "PYTHONIOENCODING": ""}]
)
@pytest.mark.parametrize("name", COMMANDS)
def test_an_8_bit_output_encoding_writes_escapes(
    segment: Path, tmp_path: Path, name: str, env: dict[str, str]
) -> None:
    (tmp_path / "out").mkdir()
    done = _kdump(_commands(segment, tmp_path)[name], env)
    assert (done.returncode, done.stderr) == (0, b"")
    if name in ("dump", "dump-kafka"):  # the data, escaped where the encoding cannot hold it
        assert b"\\u2603" in done.stdout and "\u2603".encode() not in done.stdout


# --- a full output ----------------------------------------------------------------------------------


@pytest.fixture
def full_device(tmp_path: Path) -> Path:
    """A device like /dev/full (1, 7), made in the temporary directory when allowed; else /dev/full."""
    path = tmp_path / "full"
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 7))
    except PermissionError:
        path = Path("/dev/full")
    if not path.exists():
        pytest.skip("no /dev/full here")
    return path


@pytest.mark.parametrize("name", COMMANDS)
def test_a_full_output_is_one_line_and_exit_2(
    segment: Path, tmp_path: Path, full_device: Path, name: str
) -> None:
    (tmp_path / "out").mkdir()
    with full_device.open("wb") as full:
        done = _kdump(_commands(segment, tmp_path)[name], {}, stdout=full)
    assert done.returncode == 2
    assert done.stderr == b"kdump: error: standard output: cannot write: No space left on device\n"


# --- side files ---------------------------------------------------------------------------------------


def _problems(out: str) -> list[dict[str, object]]:
    return [o for o in map(json.loads, out.splitlines()) if o["type"] == "problem"]


def test_a_5000_digit_number_in_a_checkpoint_is_a_bad_entry(tmp_path: Path) -> None:
    digits = "9" * 5000
    epochs = tmp_path / "leader-epoch-checkpoint"
    epochs.write_text(f"0\n2\n0 {digits}\n1 5\n")
    code, out, err = run("dump", "--format", "json", str(epochs))
    assert (code, err) == (1, "")
    reasons = [p["reason"] for p in _problems(out)]
    assert reasons == [
        f"line 3 is not 'epoch startOffset': '0 {digits[:78]}…'",
        "the count line says 2 entries, 1 follow",
    ]
    epochs.write_text(f"0\n{digits}\n")
    code, out, _ = run("dump", "--format", "json", str(epochs))
    assert code == 1 and [p["reason"] for p in _problems(out)] == [
        f"entry count '{digits[:80]}…' is not a number"
    ]
    epochs.write_text(f"0\n1\n{2**31} 0\n")  # an epoch is 32 bits
    code, out, _ = run("dump", "--format", "json", str(epochs))
    assert code == 1 and [p["position"] for p in _problems(out)] == [4, 0]


def test_a_5000_digit_version_in_partition_metadata_is_a_bad_entry(tmp_path: Path) -> None:
    meta = tmp_path / "partition.metadata"
    meta.write_text(f"version: {'1' * 5000}\ntopic_id: 3aJOBeUFT2i-2s4EZqlyqQ\n")
    code, out, err = run("dump", "--format", "json", str(meta))
    assert (code, err) == (1, "")
    assert [p["reason"] for p in _problems(out)] == ["needs 'version: N' and 'topic_id: ID' lines"]


def test_a_negative_index_position_is_reported_and_the_dump_goes_on(segment: Path) -> None:
    index = segment.with_suffix(".index")
    index.write_bytes(struct.pack(">ii", 1, -7) + struct.pack(">ii", 2, 2**31 - 1))
    code, out, err = run("dump", "--format", "json", str(index))
    assert (code, err) == (1, "")
    lines = [json.loads(line) for line in out.splitlines()]
    assert [(o["type"], o["position"]) for o in lines] == [
        ("indexEntry", -7), ("problem", 0), ("indexEntry", 2**31 - 1), ("problem", 8),
    ]  # fmt: skip
    assert lines[1]["reason"] == "the entry for offset 1 has the negative position -7"
    assert lines[3]["reason"].endswith("past the last batch of the log")


def test_verify_json_escapes_terminal_controls_in_file_names(tmp_path: Path, segment: Path) -> None:
    named = tmp_path / "a\u009b31m\u202eb.log"
    data = bytearray(segment.read_bytes())
    data[40] ^= 0xFF  # a CRC failure: a problem line names the file too
    named.write_bytes(bytes(data))
    code, out, _ = run("verify-crc", "--format", "json", str(named))
    assert code == 1
    assert "\u009b" not in out and "\u202e" not in out
    assert out.count("a\\u009b31m\\u202eb.log") == 2  # the problem and the summary
    assert {json.loads(line)["file"] for line in out.splitlines()} == {str(named)}
