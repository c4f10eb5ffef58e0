"""CLI: every option and every exit code of ``kdump`` and ``kdump dump`` (DESIGN.md, "Testing habits" 5).

Runs the Click command in-process with ``CliRunner`` (stdout and stderr apart), except where a real
process is the point: a pipe closed early, a terminal (pty), and the ``KDUMP_PURE`` switch.

Error contract checked for every failing input: the exit code; stderr is one line that names the
input; no ``Traceback`` anywhere unless ``--traceback`` asked for one.
"""

from __future__ import annotations

import base64
import json
import os
import pty
import re
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner, Result
from kafka.record import MemoryRecords

import kafka_dump.log.window
from kafka_dump import __version__
from kafka_dump.cli import main
from kafka_dump.commands.options import parse_time
from kafka_dump.native import ACTIVE
from tests.conftest import FIXTURES, ROOT, SHARED_REAL

# Rich reads these at Console creation; pin them so a developer's shell cannot change the output.
ENV: dict[str, str | None] = {
    "COLUMNS": "200",
    "NO_COLOR": None,
    "FORCE_COLOR": None,
    "TERM": "xterm-256color",
}
GOOD = sorted(
    p.name
    for p in FIXTURES.glob("*.log")
    if p.name not in ("corrupt-crc.log", "zero-tail.log", "partial-tail.log")
)
ANSI = re.compile(r"\x1b\[")
BIG_REAL = SHARED_REAL / "ldi-poc-kafka370-kraft" / "__cluster_metadata-0" / "00000000000000000000.log"


def run(*args: str, env: dict[str, str | None] | None = None) -> Result:
    return CliRunner().invoke(main, list(args), env={**ENV, **(env or {})})


def fx(name: str) -> str:
    return str(FIXTURES / name)


def objects(result: Result) -> list[dict[str, Any]]:
    return [json.loads(line) for line in result.stdout.splitlines()]


def batches(result: Result) -> list[dict[str, Any]]:
    return [o for o in objects(result) if o["type"] == "batch"]


def problems(result: Result) -> list[dict[str, Any]]:
    return [o for o in objects(result) if o["type"] == "problem"]


def offsets(result: Result) -> list[int]:
    return [r["offset"] for b in batches(result) for r in b["records"] or ()]


def json_dump(*args: str) -> Result:
    result = run("dump", "--format", "json", *args)
    assert "Traceback" not in result.stderr, result.stderr
    return result


def assert_clean_exit(result: Result, code: int) -> None:
    """The command ended through sys.exit with ``code``: no exception escaped, no traceback printed."""
    assert result.exit_code == code, (result.stdout[-2000:], result.stderr)
    assert result.exc_info is None or result.exc_info[0] is SystemExit, result.exc_info
    assert "Traceback" not in result.stdout and "Traceback" not in result.stderr


def assert_one_line_error(result: Result, code: int, *names: str) -> None:
    assert_clean_exit(result, code)
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    for name in names:
        assert name in lines[0], lines[0]


def kafka_python_records(
    path: Path,
) -> list[tuple[int, bytes | None, bytes | None, list[tuple[str, bytes | None]]]]:
    """(offset, key, value, headers) of every record, as kafka-python (the independent reader) sees them."""
    mr = MemoryRecords(path.read_bytes())
    out = []
    while (batch := mr.next_batch()) is not None:
        for r in batch:
            out.append((r.offset, r.key, r.value, list(getattr(r, "headers", None) or [])))
    return out


# --- the group -------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["table", "json", "kafka"])
def test_file_alone_means_dump(fmt: str, in_root: Path) -> None:
    short = run("--format", fmt, "fixtures/v2-headers.log")
    long = run("dump", "--format", fmt, "fixtures/v2-headers.log")
    assert short.exit_code == long.exit_code == 0
    assert short.stdout == long.stdout and short.stdout
    assert run("fixtures/v2-headers.log").stdout == run("dump", "fixtures/v2-headers.log").stdout


@pytest.mark.parametrize(
    ("typo", "meant"), [("dumpp", "dump"), ("stat", "stats"), ("verify-crcc", "verify-crc")]
)
def test_misspelt_command_suggests_the_command(typo: str, meant: str) -> None:
    result = run(typo, fx(GOOD[0]))
    assert_clean_exit(result, 2)
    assert f"No such command '{typo}'" in result.stderr
    assert "Did you mean" in result.stderr and f"'{meant}'" in result.stderr  # stat: stats or state


def test_file_named_like_a_misspelt_command_is_dumped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``kdump FILE`` still means ``kdump dump FILE`` when FILE exists, whatever its name."""
    shutil.copyfile(fx(GOOD[0]), tmp_path / "dumpp")
    monkeypatch.chdir(tmp_path)
    assert_clean_exit(run("dumpp"), 0)
    assert_one_line_error(run("no-such-segment"), 2, "no-such-segment")


def test_short_form_keeps_exit_codes() -> None:
    assert run(fx("corrupt-crc.log")).exit_code == 1
    assert_one_line_error(run(fx("no-such.log")), 2, "no-such.log")


def test_version_names_version_and_twin() -> None:
    result = run("--version")
    assert_clean_exit(result, 0)
    assert ACTIVE in ("pure-python", "compiled")
    build = "compiled extensions" if ACTIVE == "compiled" else "pure Python"
    assert result.stdout == f"kdump {__version__} ({build})\n"


def test_version_says_pure_python_in_plain_words() -> None:
    """``KDUMP_PURE=1`` in a fresh process: the line says ``pure Python``, the version first."""
    env = {**os.environ, "KDUMP_PURE": "1"}
    out = subprocess.run(
        [sys.executable, "-m", "kafka_dump", "--version"], env=env, capture_output=True, text=True, check=True
    ).stdout
    assert out == f"kdump {__version__} (pure Python)\n"


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_group_help_lists_dump_with_example(flag: str) -> None:
    result = run(flag)
    assert_clean_exit(result, 0)
    assert re.search(r"^Commands:\n(?:\s+\S.*\n)*\s+dump\b", result.stdout, re.M), result.stdout
    assert "Example" in result.stdout
    assert "kdump dump --format json" in result.stdout
    assert "--version" in result.stdout


def test_no_arguments_shows_usage() -> None:
    result = run()
    assert result.exit_code in (0, 2)  # Click >= 8.2 exits 2 for a bare group
    assert "Usage: " in result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr


def test_dump_help_lists_every_option_and_examples() -> None:
    result = run("dump", "--help")
    assert_clean_exit(result, 0)
    for opt in main.commands["dump"].params:
        for name in opt.opts:
            if name.startswith("-"):
                assert name in result.stdout, name
    assert "Examples:" in result.stdout
    assert "kdump dump --format json --payload base64" in result.stdout


def test_dump_without_paths_is_a_usage_error() -> None:
    result = run("dump")
    assert_clean_exit(result, 2)
    assert "Missing argument" in result.stderr


# --- formats -----------------------------------------------------------------------------------------


def test_format_table(in_root: Path) -> None:
    result = run("dump", "--format", "table", "fixtures/txn-control.log")
    assert_clean_exit(result, 0)
    out = result.stdout
    assert out.startswith("Dumping fixtures/txn-control.log\n┏━━━━━━━━┳")
    assert (
        "├─ offsets 0..2 · 3 records · transactional · v2 · 257 B at 0 · producer 4001 epoch 2 seq 0..2 · leaderEpoch 1 ─"
        in out
    )
    assert "├─ offset 10 · transactional · control · v2 · 78 B at 698 · producer 4001 epoch 2 ·" in out
    assert re.search(r"│ 0x00000000 │ 0x000000000007 +│ ABORT +│", out)
    assert re.search(r"^│\s+1 │ 2023-11-14T22:13:21.000Z │ key-1 +│ value-1: ", out, re.M)
    assert out.count("┏") == 1 and out.count("┘") == 1  # five batches, one table
    assert not ANSI.search(out)
    assert result.stderr == ""


def test_table_batch_title_is_one_line(in_root: Path) -> None:
    out = run("dump", "fixtures/txn-control.log").stdout
    assert re.search(r"^├─ offset 10 · transactional · control · v2 · .* ─+┤$", out, re.M)
    assert "CreateTime" not in out and "- (-1)" not in out  # defaults and absent fields are left out


def test_format_table_is_default(in_root: Path) -> None:
    assert (
        run("dump", "fixtures/v2-none.log").stdout
        == run("dump", "--format", "table", "fixtures/v2-none.log").stdout
    )


def test_format_json(in_root: Path) -> None:
    result = run("dump", "--format", "json", "fixtures/txn-control.log")
    assert_clean_exit(result, 0)
    objs = objects(result)
    assert [o["type"] for o in objs] == ["batch"] * 5
    assert [(b["position"], b["baseOffset"], b["lastOffset"]) for b in objs] == [
        (0, 0, 2), (257, 3, 5), (421, 6, 6), (499, 7, 9), (698, 10, 10)
    ]  # fmt: skip
    last = objs[-1]
    assert last["file"] == "fixtures/txn-control.log"
    assert last["isControl"] is True and last["isTransactional"] is True
    assert last["records"][0]["control"] == {"type": "ABORT", "version": 0, "coordinatorEpoch": 7}
    assert offsets(result) == list(range(11))


def test_format_kafka(in_root: Path) -> None:
    result = run("dump", "--format", "kafka", "fixtures/v1-gzip.log")
    assert_clean_exit(result, 0)
    lines = result.stdout.splitlines()
    assert lines[:2] == ["Dumping fixtures/v1-gzip.log", "Log starting offset: 0"]
    assert lines[2].startswith(
        "offset: 2 position: 0 CreateTime: 1700000002000 size: 173 magic: 1 compresscodec: gzip"
    )
    assert lines[3].startswith("| offset: 0 CreateTime: 1700000000000 keySize: 5 valueSize: 52 isValid: true")
    assert sum(line.startswith("| offset: ") for line in lines) == 9


def test_format_kafka_base_offset_from_file_name(in_root: Path) -> None:
    result = run("dump", "--format", "kafka", "fixtures/00000000000000001000.log")
    assert result.stdout.splitlines()[1] == "Log starting offset: 1000"


def test_unknown_format_is_a_usage_error() -> None:
    result = run("dump", "--format", "xml", fx("v2-none.log"))
    assert_clean_exit(result, 2)
    assert "'xml' is not one of" in result.stderr


# --- --payload -----------------------------------------------------------------------------------


def _record_fields(result: Result) -> list[tuple[int, Any, Any, list[tuple[str, Any]]]]:
    return [
        (r["offset"], r["key"], r["value"], [(h["key"], h["value"]) for h in r["headers"]])
        for b in batches(result)
        for r in b["records"]
    ]


PAYLOAD_FILES = [
    "v2-headers.log",
    "mixed-magic.log",
    "v1-wrapper-offset0.log",
    "txn-control.log",
    "v0-snappy.log",
]
DECODERS = {
    "base64": lambda s: base64.b64decode(s, validate=True),
    "hex": bytes.fromhex,
}


@pytest.mark.parametrize("name", PAYLOAD_FILES)
@pytest.mark.parametrize("payload", ["base64", "hex"])
def test_payload_exact_encodings_round_trip_to_kafka_python_bytes(name: str, payload: str) -> None:
    result = json_dump("--payload", payload, fx(name))
    assert_clean_exit(result, 0)
    decode = DECODERS[payload]

    def back(s: str | None) -> bytes | None:
        return None if s is None else decode(s)

    ours = [
        (o, back(k), back(v), [(hk, back(hv)) for hk, hv in hs]) for o, k, v, hs in _record_fields(result)
    ]
    assert ours == kafka_python_records(FIXTURES / name)


def test_payload_hex_is_lowercase_and_base64_is_padded() -> None:
    hexed = _record_fields(json_dump("--payload", "hex", fx("v2-headers.log")))
    b64 = _record_fields(json_dump("--payload", "base64", fx("v2-headers.log")))
    values = [v for _, _, v, _ in hexed if v is not None]
    assert values and all(re.fullmatch(r"(?:[0-9a-f]{2})*", v) for v in values)
    assert all(len(v) % 4 == 0 for _, _, v, _ in b64 if v is not None)


@pytest.mark.parametrize("name", PAYLOAD_FILES)
def test_payload_text_is_utf8_with_escaped_bad_bytes(name: str) -> None:
    default = json_dump(fx(name))
    text = json_dump("--payload", "text", fx(name))
    assert default.stdout == text.stdout

    def as_text(b: bytes | None) -> str | None:
        return None if b is None else b.decode("utf-8", "backslashreplace")

    expected = [(o, as_text(k), as_text(v), [(hk, as_text(hv)) for hk, hv in hs]) for o, k, v, hs in
                kafka_python_records(FIXTURES / name)]  # fmt: skip
    assert _record_fields(text) == expected


def test_payload_text_escapes_the_non_utf8_value() -> None:
    values = [hv for _, _, _, hs in _record_fields(json_dump(fx("v2-headers.log"))) for _, hv in hs if hv]
    assert "\x00\\xff\\xfe\\x80\\xc3( not utf-8" in values


def test_payload_unknown_is_a_usage_error() -> None:
    assert_clean_exit(run("dump", "--format", "json", "--payload", "utf16", fx("v2-none.log")), 2)


# --- --max-bytes ---------------------------------------------------------------------------------


def test_max_bytes_cuts_with_an_ellipsis() -> None:
    cut = run("dump", "--max-bytes", "9", fx("v2-none.log"))
    assert_clean_exit(cut, 0)
    assert "value-0: …" in cut.stdout
    assert "value-0: the" not in cut.stdout
    assert "source=kdump-fix…" in cut.stdout  # header values are cut too
    assert "key-0 " in cut.stdout  # a 5-byte key is shorter than 9: no ellipsis


def test_max_bytes_default_is_64() -> None:
    full = run("dump", fx("v2-none.log"))
    assert "value-0: the quick brown fox jumps over the lazy dog │" in full.stdout
    assert "…" not in full.stdout
    assert run("dump", "--max-bytes", "64", fx("v2-none.log")).stdout == full.stdout
    cut = run("dump", "--max-bytes", "51", fx("v2-none.log")).stdout
    assert "value-0: the quick brown fox jumps over the lazy do…" in cut


def test_max_bytes_cuts_hex_previews() -> None:
    cut = run("dump", "--max-bytes", "2", fx("v2-headers.log")).stdout
    assert "0x00ff…" in cut


@pytest.mark.parametrize("bad", ["0", "-1", "x"])
def test_max_bytes_must_be_positive(bad: str) -> None:
    assert_clean_exit(run("dump", "--max-bytes", bad, fx("v2-none.log")), 2)


# --- --batches-only ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", [*GOOD, "corrupt-crc.log", "zero-tail.log"])
def test_batches_only_json_has_null_records_and_the_same_batches(name: str) -> None:
    full = json_dump(fx(name))
    only = json_dump("--batches-only", fx(name))
    assert only.exit_code == full.exit_code
    assert only.stdout and all(b["records"] is None for b in batches(only))
    keys = (
        "position",
        "lastOffset",
        "magic",
        "compression",
        "crc",
        "crcValid",
        "sizeInBytes",
        "maxTimestamp",
    )
    assert [tuple(b[k] for k in keys) for b in batches(only)] == [
        tuple(b[k] for k in keys) for b in batches(full)
    ]
    assert problems(only) == problems(full)


@pytest.mark.parametrize("name", ["v2-none.log", "v1-gzip.log", "mixed-magic.log", "txn-control.log"])
def test_batches_only_kafka_is_the_deep_output_without_record_lines(name: str) -> None:
    deep = run("dump", "--format", "kafka", fx(name))
    only = run("dump", "--format", "kafka", "--batches-only", fx(name))
    assert_clean_exit(only, 0)
    assert "| offset:" not in only.stdout
    assert only.stdout.splitlines() == [ln for ln in deep.stdout.splitlines() if not ln.startswith("| ")]


def test_batches_only_table_has_no_record_rows() -> None:
    out = run("dump", "--batches-only", fx("v2-none.log")).stdout
    assert "┃ offset" not in out and "key-0" not in out
    assert out.count("\noffsets ") == 3
    assert "offsets 0..2 · 3 records · v2 · 314 B at 0 · maxTime 2023-11-14T22:13:22.000Z" in out


# --- --from-offset / --to-offset -----------------------------------------------------------------

ALL_OFFSETS = {
    "compacted-gaps.log": [0, 3, 9, 12, 15, 21, 22, 23],
    "mixed-magic.log": list(range(18)),
    "v2-none.log": list(range(10)),
    "00000000000000001000.log": list(range(1000, 1006)),
}


@pytest.mark.parametrize("name", sorted(ALL_OFFSETS))
def test_full_dump_offsets(name: str) -> None:
    assert offsets(json_dump(fx(name))) == ALL_OFFSETS[name]


@pytest.mark.parametrize("name", ["compacted-gaps.log", "mixed-magic.log"])
def test_offset_range_gives_exactly_the_records_in_range(name: str) -> None:
    everything = ALL_OFFSETS[name]
    top = everything[-1] + 2
    bounds: list[tuple[int | None, int | None]] = [(None, None), (None, -1), (top, None)]
    bounds += [(lo, None) for lo in range(-1, top)] + [(None, hi) for hi in range(-1, top)]
    bounds += [(lo, hi) for lo in range(0, top, 3) for hi in range(lo - 1, top, 4)]
    for lo, hi in bounds:
        args = [
            *(["--from-offset", str(lo)] if lo is not None else []),
            *(["--to-offset", str(hi)] if hi is not None else []),
        ]
        result = json_dump(*args, fx(name))
        if lo is not None and hi is not None and lo > hi:  # an empty range: a bad option
            assert result.exit_code == 2 and "is past --to-offset" in result.stderr, args
            continue
        assert result.exit_code == 0, (args, result.stderr)
        expected = [o for o in everything if (lo is None or o >= lo) and (hi is None or o <= hi)]
        assert offsets(result) == expected, args
        assert not problems(result)


def test_offset_range_compacted_examples() -> None:
    cases = {
        (1, 14): [3, 9, 12],
        (4, 16): [9, 12, 15],
        (10, 11): [],
        (15, 15): [15],
        (16, 21): [21],
        (18, 20): [],
    }
    for (lo, hi), expected in cases.items():
        assert (
            offsets(json_dump("--from-offset", str(lo), "--to-offset", str(hi), fx("compacted-gaps.log")))
            == expected
        )


def test_offset_range_keeps_batches_whose_records_survive() -> None:
    result = json_dump("--from-offset", "10", "--to-offset", "16", fx("compacted-gaps.log"))
    [batch] = batches(result)
    assert (batch["baseOffset"], batch["lastOffset"], batch["recordCount"]) == (10, 17, 2)
    assert [r["offset"] for r in batch["records"]] == [12, 15]


def test_from_offset_inside_a_wrapper_with_offset_zero() -> None:
    assert offsets(json_dump(fx("v1-wrapper-offset0.log"))) == list(range(7))
    assert offsets(json_dump("--from-offset", "2", fx("v1-wrapper-offset0.log"))) == [2, 3, 4, 5, 6]


@pytest.mark.parametrize("name", ["compacted-gaps.log", "v2-none.log", "txn-control.log"])
def test_batches_only_offset_range_v2(name: str) -> None:
    full = batches(json_dump(fx(name)))
    for lo, hi in [(0, 0), (2, 3), (4, 11), (12, 20), (18, 18), (30, 40)]:
        got = batches(json_dump("--batches-only", "--from-offset", str(lo), "--to-offset", str(hi), fx(name)))
        expected = [b["position"] for b in full if b["lastOffset"] >= lo and b["baseOffset"] <= hi]
        assert [b["position"] for b in got] == expected, (lo, hi)


def test_batches_only_to_offset_keeps_a_legacy_wrapper_that_holds_it() -> None:
    got = batches(json_dump("--batches-only", "--to-offset", "3", fx("mixed-magic.log")))
    assert [b["position"] for b in got] == [0, 83, 166]


# --- --from-time / --to-time ---------------------------------------------------------------------


def _offset_times(name: str) -> list[tuple[int, int]]:
    return [(r["offset"], r["timestamp"]) for b in batches(json_dump(fx(name))) for r in b["records"]]


@pytest.mark.parametrize(
    "spelling",
    ["2023-11-14T22:13:23Z", "2023-11-14T22:13:23.000Z", "2023-11-14T22:13:23z", "2023-11-14T23:13:23+01:00",
     "2023-11-14T17:13:23-05:00", "2023-11-14T22:13:23", "2023-11-14 22:13:23", "1700000003000"],
)  # fmt: skip
def test_from_time_spellings(spelling: str) -> None:
    assert offsets(json_dump("--from-time", spelling, fx("v2-none.log"))) == list(range(3, 10))


@pytest.mark.parametrize(
    "spelling", ["2023-11-14T22:13:26Z", "2023-11-14T23:13:26+01:00", "2023-11-14T22:13:26", "1700000006000"]
)
def test_to_time_spellings(spelling: str) -> None:
    assert offsets(json_dump("--to-time", spelling, fx("v2-none.log"))) == list(range(7))


@pytest.mark.parametrize(
    "name",
    ["v2-none.log", "mixed-magic.log", "v1-logappendtime.log", "v2-logappendtime.log", "compacted-gaps.log"],
)
def test_time_range_gives_exactly_the_records_in_range(name: str) -> None:
    pairs = _offset_times(name)
    stamps = sorted({ts for _, ts in pairs})
    edges = sorted({e for ts in stamps for e in (ts - 1, ts, ts + 1)})
    bounds: list[tuple[int | None, int | None]] = [(e, None) for e in edges] + [(None, e) for e in edges]
    bounds += [(a, b) for a in edges[::3] for b in edges[::4] if b >= a - 1]
    for lo, hi in bounds:
        args = [
            *(["--from-time", str(lo)] if lo is not None else []),
            *(["--to-time", str(hi)] if hi is not None else []),
        ]
        result = json_dump(*args, fx(name))
        assert result.exit_code == 0, (args, result.stderr)
        expected = [o for o, ts in pairs if (lo is None or ts >= lo) and (hi is None or ts <= hi)]
        assert offsets(result) == expected, args


def test_from_time_excludes_v0_messages_without_timestamps() -> None:
    assert offsets(json_dump("--from-time", "0", fx("mixed-magic.log"))) == list(range(5, 18))
    assert offsets(json_dump("--to-time", "0", fx("mixed-magic.log"))) == list(range(5))


def test_time_and_offset_filters_combine() -> None:
    got = offsets(json_dump("--from-time", "2023-11-14T22:13:22Z", "--to-offset", "5", fx("v2-none.log")))
    assert got == [2, 3, 4, 5]


@pytest.mark.parametrize("option", ["--from-time", "--to-time"])
@pytest.mark.parametrize("bad", ["yesterday", "2023-13-01T00:00:00Z", "12:00", "1.5e12", ""])
def test_invalid_time_is_a_usage_error(option: str, bad: str) -> None:
    result = run("dump", option, bad, fx("v2-none.log"))
    assert_clean_exit(result, 2)
    assert result.stdout == ""
    error = [ln for ln in result.stderr.splitlines() if ln.startswith("Error:")]
    assert len(error) == 1 and repr(bad) in error[0] and "ISO-8601" in error[0]


def test_invalid_time_error_names_the_option() -> None:
    assert "--to-time" in run("dump", "--to-time", "yesterday", fx("v2-none.log")).stderr


def test_parse_time_values() -> None:
    assert parse_time(None) is None
    assert parse_time("1700000003000") == 1700000003000
    assert parse_time("2023-11-14T22:13:23.007Z") == 1700000003007
    assert parse_time("2023-11-14T23:13:23.5+01:00") == 1700000003500
    assert parse_time("1970-01-01T00:00:00Z") == 0
    with pytest.raises(click.BadParameter):
        parse_time("nope")


def test_parse_time_is_exact_to_the_millisecond() -> None:
    assert parse_time("2004-03-15T07:55:47.472Z") == 1079337347472
    assert parse_time("2039-03-08T19:46:13.411Z") == 2183226373411
    assert parse_time("1987-02-24T12:51:47.341Z") == 541169507341


# --- --limit -------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", range(12))
def test_limit_gives_exactly_n_records(n: int) -> None:
    result = json_dump("--limit", str(n), fx("v2-none.log"))
    assert_clean_exit(result, 0)
    assert offsets(result) == list(range(min(n, 10)))


@pytest.mark.parametrize("n", range(5))
def test_limit_with_batches_only_gives_n_batches(n: int) -> None:
    result = json_dump("--batches-only", "--limit", str(n), fx("v2-none.log"))
    assert [b["baseOffset"] for b in batches(result)] == [0, 3, 7][:n]


def test_limit_counts_after_filters() -> None:
    assert offsets(json_dump("--from-offset", "2", "--limit", "3", fx("v2-none.log"))) == [2, 3, 4]
    assert offsets(json_dump("--from-offset", "4", "--limit", "3", fx("compacted-gaps.log"))) == [9, 12, 15]


def test_limit_spans_files() -> None:
    result = json_dump("--limit", "12", fx("v2-none.log"), fx("v2-gzip.log"))
    assert offsets(result) == [*range(10), 0, 1]


def test_limit_reached_at_end_of_a_file_does_not_open_the_next() -> None:
    result = run("dump", "--format", "kafka", "--limit", "10", fx("v2-none.log"), fx("v2-gzip.log"))
    assert "v2-gzip.log" not in result.stdout


@pytest.mark.parametrize("bad", ["-1", "x"])
def test_limit_must_be_a_count(bad: str) -> None:
    assert_clean_exit(run("dump", "--limit", bad, fx("v2-none.log")), 2)


# --- --max-batch-bytes ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["v2-gzip.log", "v2-lz4.log", "v2-zstd.log", "v2-snappy.log", "v1-gzip.log", "v0-lz4.log"]
)
def test_small_max_batch_bytes_makes_compressed_batches_problems(name: str) -> None:
    result = json_dump("--max-batch-bytes", "10", fx(name))
    assert_clean_exit(result, 1)
    positions = [b["position"] for b in batches(json_dump(fx(name)))]
    found = problems(result)
    assert [p["position"] for p in found] == positions
    assert all(p["kind"] == "corrupt" and "--max-batch-bytes" in p["reason"] for p in found)
    assert offsets(result) == []
    assert [b["records"] for b in batches(result)] == [None] * len(positions)  # not read, not empty
    table = run("dump", "--max-batch-bytes", "10", fx(name)).stdout
    assert table.count("records not read") == len(positions)


def test_small_max_batch_bytes_leaves_uncompressed_entries_alone() -> None:
    result = json_dump("--max-batch-bytes", "100", fx("mixed-magic.log"))
    assert_clean_exit(result, 1)
    assert [p["position"] for p in problems(result)] == [166, 499, 696, 1085]
    assert offsets(result) == [0, 1, 5, 6, 12, 13, 14]


def test_large_enough_max_batch_bytes_is_fine() -> None:
    result = json_dump("--max-batch-bytes", "4096", fx("v2-gzip.log"))
    assert_clean_exit(result, 0)
    assert offsets(result) == list(range(10))


@pytest.mark.parametrize("bad", ["0", "-5", "many"])
def test_max_batch_bytes_must_be_positive(bad: str) -> None:
    assert_clean_exit(run("dump", "--max-batch-bytes", bad, fx("v2-gzip.log")), 2)


# --- --traceback ---------------------------------------------------------------------------------


def test_traceback_shown_only_when_asked(tmp_path: Path) -> None:
    missing = str(tmp_path / "gone.log")
    plain = run("dump", missing)
    assert_one_line_error(plain, 2, "gone.log")
    traced = run("dump", "--traceback", missing)
    assert traced.exit_code == 2
    assert "Traceback (most recent call last)" in traced.stderr
    assert "NotASegmentError" in traced.stderr
    assert traced.stderr.rstrip().splitlines()[-1] == plain.stderr.rstrip()


def test_traceback_flag_does_not_change_good_output() -> None:
    assert run("dump", "--traceback", fx("v2-none.log")).stdout == run("dump", fx("v2-none.log")).stdout


# --- directories ---------------------------------------------------------------------------------


def _partition(tmp_path: Path) -> Path:
    part = tmp_path / "my-topic-0"
    part.mkdir()
    # Written out of offset order, with the files Kafka keeps beside segments.
    shutil.copy(FIXTURES / "00000000000000001000.log", part / "00000000000000001000.log")
    shutil.copy(FIXTURES / "v2-gzip.log", part / "00000000000000000010.log")
    shutil.copy(FIXTURES / "v2-none.log", part / "00000000000000000000.log")
    (part / "00000000000000000000.timeindex").write_bytes(b"")
    (part / "00000000000000000000.index").write_bytes(b"")
    (part / "leader-epoch-checkpoint").write_text("0\n1\n0 0\n")
    (part / "partition.metadata").write_text("version: 0\ntopic_id: x\n")
    return part


def test_partition_directory_in_offset_order(tmp_path: Path) -> None:
    part = _partition(tmp_path)
    result = json_dump(str(part))
    assert_clean_exit(result, 0)
    seen = [(Path(b["file"]).name, b["compression"]) for b in batches(result)]
    assert seen == [("00000000000000000000.log", "none")] * 3 + [("00000000000000000010.log", "gzip")] * 3 + [
        ("00000000000000001000.log", "none"),
        ("00000000000000001000.log", "snappy"),
    ]
    assert offsets(result) == [*range(10), *range(10), *range(1000, 1006)]


def test_partition_directory_kafka_lines(tmp_path: Path) -> None:
    part = _partition(tmp_path)
    lines = run("dump", "--format", "kafka", str(part)).stdout.splitlines()
    dumping = [ln for ln in lines if ln.startswith(("Dumping", "Log starting offset"))]
    assert dumping == [
        f"Dumping {part / '00000000000000000000.log'}", "Log starting offset: 0",
        f"Dumping {part / '00000000000000000010.log'}", "Log starting offset: 10",
        f"Dumping {part / '00000000000000001000.log'}", "Log starting offset: 1000",
    ]  # fmt: skip


def test_directory_and_file_arguments_mix(tmp_path: Path) -> None:
    part = _partition(tmp_path)
    result = json_dump(fx("v2-zstd.log"), str(part))
    assert [Path(b["file"]).name for b in batches(result)][:4] == ["v2-zstd.log"] * 3 + [
        "00000000000000000000.log"
    ]


def test_directory_without_segments(tmp_path: Path) -> None:
    empty = tmp_path / "not-a-partition"
    empty.mkdir()
    (empty / "00000000000000000000.index").write_bytes(b"\0" * 16)
    (empty / "notes.txt").write_text("hello")
    for fmt in ("table", "json", "kafka"):
        result = run("dump", "--format", fmt, str(empty))
        assert_one_line_error(result, 2, str(empty))
        assert result.stdout == ""


# --- exit codes and problems ---------------------------------------------------------------------


@pytest.mark.parametrize("name", GOOD)
def test_good_fixtures_exit_0(name: str) -> None:
    for fmt in ("json", "kafka"):
        result = run("dump", "--format", fmt, fx(name))
        assert_clean_exit(result, 0)
        assert result.stderr == ""


@pytest.mark.parametrize(
    ("name", "kind", "position", "length"),
    [("zero-tail.log", "zero-tail", 421, 4096), ("partial-tail.log", "partial-tail", 421, 125)],
)
def test_tails_are_reported_but_exit_0(
    name: str, kind: str, position: int, length: int, in_root: Path
) -> None:
    result = run("dump", "--format", "json", f"fixtures/{name}")
    assert_clean_exit(result, 0)
    assert result.stderr == ""
    assert offsets(result) == list(range(6))
    [problem] = problems(result)
    assert problem == {
        **problem, "type": "problem", "file": f"fixtures/{name}", "position": position, "length": length,
        "kind": kind, "baseOffset": None,
    }  # fmt: skip
    assert objects(result)[-1] == problem

    kafka = run("dump", "--format", "kafka", f"fixtures/{name}")
    assert_clean_exit(kafka, 0)
    assert kafka.stdout.splitlines()[-1] == f"Found {length} invalid bytes at the end of {name}"
    assert kafka.stderr == ""

    table = run("dump", f"fixtures/{name}")
    assert_clean_exit(table, 0)
    assert f"TAIL at byte {position} ({length:,} bytes, {kind})" in table.stdout


def test_corrupt_crc_exits_1_and_reads_on(in_root: Path) -> None:
    result = run("dump", "--format", "json", "fixtures/corrupt-crc.log")
    assert_clean_exit(result, 1)
    [problem] = problems(result)
    assert (problem["position"], problem["length"], problem["kind"], problem["baseOffset"]) == (
        257,
        199,
        "corrupt",
        3,
    )
    assert "3974637417" in problem["reason"] and "824717890" in problem["reason"]
    assert [b["crcValid"] for b in batches(result)] == [True, False, True]
    assert offsets(result) == list(range(9))


def test_corrupt_crc_in_kafka_format_goes_to_stderr(in_root: Path) -> None:
    result = run("dump", "--format", "kafka", "fixtures/corrupt-crc.log")
    assert_one_line_error(result, 1, "fixtures/corrupt-crc.log", "byte 257", "CRC-32C mismatch")
    assert "isvalid: false" in result.stdout
    assert "invalid bytes" not in result.stdout


def test_corrupt_crc_in_table(in_root: Path) -> None:
    result = run("dump", "fixtures/corrupt-crc.log")
    assert_clean_exit(result, 1)
    assert "CRC INVALID (stored 3974637417)" in result.stdout
    assert "PROBLEM at byte 257 (199 bytes, corrupt)" in result.stdout


def test_corruption_in_one_file_of_many_still_exits_1() -> None:
    result = json_dump(fx("v2-none.log"), fx("corrupt-crc.log"), fx("zero-tail.log"))
    assert_clean_exit(result, 1)
    assert len({b["file"] for b in batches(result)}) == 3


@pytest.mark.parametrize("fmt", ["table", "json", "kafka"])
def test_missing_file_exits_2(fmt: str, tmp_path: Path) -> None:
    missing = tmp_path / "00000000000000000000.log"
    result = run("dump", "--format", fmt, str(missing))
    assert_one_line_error(result, 2, str(missing), "no such file")
    assert result.stdout == ""


def test_missing_file_among_good_ones_exits_2_before_output(tmp_path: Path) -> None:
    result = json_dump(fx("v2-none.log"), str(tmp_path / "gone.log"))
    assert_one_line_error(result, 2, "gone.log")
    assert result.stdout == ""


def test_not_a_regular_file_exits_2() -> None:
    if not Path("/dev/null").exists():
        pytest.skip("no /dev/null")
    assert_one_line_error(run("dump", "/dev/null"), 2, "/dev/null", "device file")


def test_unreadable_file_exits_2(tmp_path: Path) -> None:
    locked = tmp_path / "00000000000000000000.log"
    shutil.copy(FIXTURES / "v2-none.log", locked)
    locked.chmod(0)
    try:
        if os.access(locked, os.R_OK):
            pytest.skip("running as a user (root) who can read a mode-000 file")
        result = run("dump", "--format", "json", str(locked))
        assert_one_line_error(result, 2, str(locked), "ermission denied")
    finally:
        locked.chmod(0o644)


def test_open_failure_exits_2_even_as_root(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The same path as a permission error, simulated where the segment is opened (root can read mode 000)."""
    target = tmp_path / "00000000000000000000.log"
    shutil.copy(FIXTURES / "v2-none.log", target)

    def denied(path: Any, *args: Any, **kwargs: Any) -> Any:
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(kafka_dump.log.window, "open", denied, raising=False)
    for fmt in ("json", "kafka", "table"):
        result = run("dump", "--format", fmt, str(target))
        assert_one_line_error(result, 2, str(target), "Permission denied")


def test_empty_file_is_an_empty_segment(tmp_path: Path) -> None:
    empty = tmp_path / "00000000000000000000.log"
    empty.write_bytes(b"")
    assert_clean_exit(json_dump(str(empty)), 0)
    assert json_dump(str(empty)).stdout == ""
    kafka = run("dump", "--format", "kafka", str(empty))
    assert_clean_exit(kafka, 0)
    assert kafka.stdout == f"Dumping {empty}\nLog starting offset: 0\n"
    assert run("dump", str(empty)).stdout == f"Dumping {empty}\n"


def test_text_file_is_not_a_segment(in_root: Path) -> None:
    result = run("dump", "--format", "json", "README.md")
    assert_clean_exit(result, 2)
    assert "README.md" in result.stderr and "not a Kafka log segment" in result.stderr
    assert result.stdout == ""


def test_text_file_exits_non_zero(in_root: Path) -> None:
    result = run("dump", "--format", "json", "README.md")
    assert result.exit_code != 0


# --- pipes and terminals -------------------------------------------------------------------------


def _kdump_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "kafka_dump", *args]


def _clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "TERM", "COLUMNS")}
    env.update(extra)
    return env


@pytest.mark.parametrize(
    "fmt",
    [
        "json",
        "kafka",
        "table",
    ],
)
def test_closed_pipe_ends_quietly(fmt: str) -> None:
    if not BIG_REAL.exists():
        pytest.skip(f"{BIG_REAL} is absent")
    proc = subprocess.Popen(
        _kdump_argv("dump", "--format", fmt, str(BIG_REAL)),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_clean_env(), cwd=ROOT,
    )  # fmt: skip
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()  # like `| head -1`: the reader goes away with output still coming
    stderr = proc.stderr.read()
    proc.stderr.close()
    code = proc.wait(timeout=60)
    assert first.startswith(b"{" if fmt == "json" else b"Dumping ")
    assert stderr == b""
    assert code == 0


def _run_on_pty(args: list[str], env: dict[str, str]) -> tuple[bytes, int]:
    master, slave = pty.openpty()
    proc = subprocess.Popen(args, stdout=slave, stderr=subprocess.DEVNULL, env=env, cwd=ROOT)
    os.close(slave)
    out = b""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 1.0)
        if not ready:
            if proc.poll() is not None:
                break
            continue
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    return out, proc.wait(timeout=60)


COLOUR_SGR = re.compile(rb"\x1b\[[0-9;]*(?:3[0-9]|4[0-9]|9[0-7]|10[0-7])[0-9;]*m")


def test_no_ansi_codes_when_not_a_terminal() -> None:
    for env in ({}, {"NO_COLOR": "1"}):
        for name in ("corrupt-crc.log", "v2-headers.log"):
            result = run("dump", fx(name), env=env)
            assert result.stdout and not ANSI.search(result.stdout), name


def test_no_colour_with_no_color_on_a_terminal() -> None:
    args = _kdump_argv("dump", "fixtures/corrupt-crc.log")
    coloured, code = _run_on_pty(args, _clean_env(TERM="xterm-256color"))
    assert code == 1 and b"Dumping" in coloured
    assert COLOUR_SGR.search(coloured), "expected colour on a terminal (the corrupt batch is red)"
    plain, code = _run_on_pty(args, _clean_env(TERM="xterm-256color", NO_COLOR="1"))
    assert code == 1 and b"PROBLEM at byte 257" in plain
    assert not COLOUR_SGR.search(plain)


# --- data is never markup, never a terminal escape ---------------------------------------------

MARKUP_RECORDS: list[tuple[bytes | None, bytes | None, list[tuple[str, bytes | None]]]] = [
    (b"[/]", b"[bold red]x[/bold red]", [("[i]h", b"[/]")]),
    (b"k", b"[link=file:///etc/passwd]click[/link]", []),
    (b"\x1b[2J", b"\x1b]0;title\x07", [("\x1b[31m", b"v")]),
]


def test_markup_in_data_is_shown_as_it_is(tmp_path: Path) -> None:
    from tests.batches import v2_batch

    seg = tmp_path / "00000000000000000000.log"
    seg.write_bytes(v2_batch(MARKUP_RECORDS))
    for color in ("never", "always"):
        result = run("dump", "--color", color, str(seg))
        assert_clean_exit(result, 0)
        plain = re.sub(r"\x1b\[[0-9;]*m", "", result.stdout)
        assert "[bold red]x[/bold red]" in plain
        assert "[link=file:///etc/passwd]click[/link]" in plain
        assert "│ [/] " in plain and "[i]h=[/]" in plain
        assert not re.search(r"\x1b(?!\[[0-9;]*m)", result.stdout)  # only the theme's own colour codes
        assert "\\x1b[31m=v" in plain


def test_colour_always_and_never(in_root: Path) -> None:
    always = run("dump", "--color", "always", "fixtures/corrupt-crc.log")
    assert_clean_exit(always, 1)
    assert COLOUR_SGR.search(always.stdout.encode())
    never = run("dump", "--color", "never", "fixtures/corrupt-crc.log", env={"FORCE_COLOR": "1"})
    assert not ANSI.search(never.stdout)
    assert re.sub(r"\x1b\[[0-9;]*m", "", always.stdout) == never.stdout


# --- the table: one table, widths, streaming, time, summary ------------------------------------

SGR = re.compile(r"\x1b\[[0-9;]*m")


def _cells(line: str) -> int:
    from rich.cells import cell_len

    return cell_len(SGR.sub("", line))


def test_v1_uncompressed_is_one_table_with_one_row_per_message(in_root: Path) -> None:
    out = run("dump", "fixtures/v1-none.log").stdout
    assert out.count("┏") == 1 and out.count("┗") + out.count("┘") == 1
    rows = [ln for ln in out.splitlines() if ln.startswith("│")]
    assert [int(ln.split("│")[1]) for ln in rows] == list(range(6))
    assert out.count("├─") == 1  # one section for the run of messages, no frame per message
    assert "v1 messages, one per log entry, uncompressed" in out


@pytest.mark.parametrize("columns", [60, 80, 100, 120])
def test_no_line_is_wider_than_the_terminal(columns: int) -> None:
    names = [fx(n) for n in sorted(p.name for p in FIXTURES.glob("*.log"))]
    for args in (["dump"], ["dump", "--time", "both"], ["dump", "--batches-only"]):
        result = run(*args, "--color", "always", *names, env={"COLUMNS": str(columns)})
        assert result.exit_code == 1  # corrupt-crc.log is among them
        wide = [ln for ln in result.stdout.splitlines() if _cells(ln) > columns and "Dumping" not in ln]
        assert not wide, (args, wide[:3])


def test_narrow_terminal_cuts_values_with_an_ellipsis_and_keeps_rows_one_line(in_root: Path) -> None:
    out = run("dump", "fixtures/v2-none.log", env={"COLUMNS": "70"}).stdout
    rows = [ln for ln in out.splitlines() if ln.startswith("│")]
    assert len(rows) == 10 and all(_cells(ln) == 70 for ln in rows)
    assert all("…" in ln for ln in rows if "null" not in ln)


def test_without_a_terminal_nothing_is_cut(in_root: Path) -> None:
    out = run("dump", "fixtures/v2-headers.log", env={"COLUMNS": None}).stdout
    assert "binary=0x00fffe80c328206e6f74207574662d38 │" in out
    assert max(_cells(ln) for ln in out.splitlines()) > 140


def test_records_are_written_before_the_file_ends(tmp_path: Path) -> None:
    from kafka_dump.analysis.dump import BatchEvent, RangeFilter, iter_dump
    from kafka_dump.render.table import TableRenderer
    from tests.batches import v2_batch

    seg = tmp_path / "00000000000000000000.log"
    seg.write_bytes(b"".join(v2_batch([(b"k", b"v", [])] * 200, base_offset=200 * i) for i in range(5)))
    renderer = TableRenderer(flush_rows=256)
    chunks = []
    for event in iter_dump([str(seg)], RangeFilter()):
        if isinstance(event, BatchEvent):
            chunks.append(renderer.batch(event.batch, event.records))
    assert not chunks[0] and sum(1 for c in chunks if c) >= 2  # a flush every few hundred rows
    lines = (
        b"".join([*(ln for c in chunks for ln in c), *renderer.file_end(str(seg), 0)]).decode().splitlines()
    )
    assert sum(ln.startswith("│") for ln in lines) == 1000
    assert sum(ln.startswith("┏") for ln in lines) == 1 and lines[-1].startswith("└")


@pytest.mark.parametrize(
    ("mode", "shown"),
    [("iso", r"2023-11-14T22:13:21\.000Z │"), ("ms", r"│ 1700000001000 +│"),
     ("both", r"2023-11-14T22:13:21\.000Z \(1700000001000\) │")],
)  # fmt: skip
def test_time_column(mode: str, shown: str) -> None:
    out = run("dump", "--time", mode, fx("v2-none.log")).stdout
    assert re.search(shown, out)
    assert out.count("1700000001000") == (0 if mode == "iso" else 1)


def test_time_iso_is_the_default() -> None:
    assert run("dump", fx("v2-none.log")).stdout == run("dump", "--time", "iso", fx("v2-none.log")).stdout


def test_null_is_styled_apart_from_the_text_null(tmp_path: Path) -> None:
    from tests.batches import v2_batch

    seg = tmp_path / "00000000000000000000.log"
    seg.write_bytes(v2_batch([(None, b"null", [])]))
    out = run("dump", "--color", "always", str(seg)).stdout
    assert "\x1b[2;3mnull\x1b[0m" in out  # the absent key: dim italic
    assert re.search(r"│ null +│", out)  # the value, the text "null": plain


def test_colour_means_something(in_root: Path) -> None:
    out = run("dump", "--color", "always", "fixtures/txn-control.log", "fixtures/corrupt-crc.log").stdout
    assert "\x1b[1;32mCOMMIT\x1b[0m" in out
    assert "\x1b[1;31mABORT\x1b[0m" in out
    assert "\x1b[34mtransactional\x1b[0m" in out
    assert "\x1b[1;31mCRC INVALID (stored 3974637417)" in out
    assert "\x1b[1;31mPROBLEM at byte 257" in out
    assert "\x1b[35m0x00000001" in out  # hex keys of the control records
    tail = run("dump", "--color", "always", "fixtures/zero-tail.log").stdout
    assert "\x1b[33mTAIL at byte 421" in tail


def _run_with_stderr_on_pty(args: list[str]) -> tuple[bytes, bytes, int]:
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=slave, env=_clean_env(COLUMNS="120"), cwd=ROOT
    )
    os.close(slave)
    assert proc.stdout is not None
    out = proc.stdout.read()
    code = proc.wait(timeout=60)
    err = b""
    while select.select([master], [], [], 0.5)[0]:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        err += chunk
    os.close(master)
    return out, err, code


def test_closing_summary_on_a_terminal_stderr() -> None:
    out, err, code = _run_with_stderr_on_pty(
        _kdump_argv("dump", "--format", "json", "fixtures/corrupt-crc.log", "fixtures/zero-tail.log")
    )
    assert code == 1 and out.startswith(b"{")
    plain = re.sub(rb"\x1b\[[0-9;?]*[a-zA-Z]", b"", err)
    assert b"2 files \xc2\xb7 5 batches \xc2\xb7 15 records \xc2\xb7 1 problem" in plain
    assert b"1 tail (4,096 bytes)" in plain
    assert b"exit 1: corrupt data was found" in plain


def test_no_summary_when_stderr_is_not_a_terminal(in_root: Path) -> None:
    result = run("dump", "fixtures/corrupt-crc.log")
    assert result.stderr == ""


def test_kafka_lines_escape_control_characters_on_a_terminal() -> None:
    shown, code = _run_on_pty(_kdump_argv("dump", "--format", "kafka", "fixtures/hostile.log"), _clean_env())
    assert code == 0
    assert b"\x1b" not in shown and b"\x08" not in shown
    assert b"payload: \\x1b]0;pwned\\x07title" in shown
    assert b"payload: safe\\rEVIL" in shown and b"user\\u202egnp.exe" in shown
    assert b"headerKeys: [\\x1b[31mred]" in shown


def test_kafka_lines_piped_keep_the_exact_bytes(in_root: Path) -> None:
    result = run("dump", "--format", "kafka", "fixtures/hostile.log")
    assert b"payload: \x1b]0;pwned\x07title\n" in result.stdout_bytes
    assert b"payload: safe\rEVIL\n" in result.stdout_bytes


@pytest.mark.parametrize("fmt", ["table", "kafka", "json"])
def test_hostile_records_on_a_terminal_send_no_escape_sequence(fmt: str) -> None:
    shown, code = _run_on_pty(_kdump_argv("dump", "--format", fmt, "fixtures/hostile.log"), _clean_env())
    assert code == 0 and b"Traceback" not in shown
    # Only the theme's colour codes: no CSI other than SGR, no OSC, no backspace, no bare CR.
    assert not re.search(rb"\x1b(?!\[[0-9;]*m)", shown)
    assert b"\x08" not in shown and not re.search(rb"\r(?!\n)", shown)
    assert "\u202e".encode() not in shown and "\u200b".encode() not in shown


def test_json_of_hostile_records_is_exact(in_root: Path) -> None:
    values = [r["value"] for b in batches(json_dump("--payload", "base64", "fixtures/hostile.log"))
              for r in b["records"]]  # fmt: skip
    assert base64.b64decode(values[2]) == b"\x1b]0;pwned\x07title"
    assert [base64.b64decode(v) for v in values] == [
        v for _, _, v, _ in kafka_python_records(FIXTURES / "hostile.log")
    ]
