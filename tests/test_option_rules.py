"""Options say what they can: an empty range is an error, a range past the data says what the data
holds, sizes take units, convert's --timestamp takes a time as --from-time does, and an option the
chosen format does not use is an error, not ignored."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from kafka_dump.cli import main
from kafka_dump.commands.options import ByteSize

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
V2 = str(FIXTURES / "v2-none.log")  # offsets 0..9


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--from-offset", "5", "--to-offset", "2"], "--from-offset 5 is past --to-offset 2"),
        (
            ["--from-time", "2024-01-02", "--to-time", "2024-01-01"],
            "--from-time 1704153600000 is past --to-time",
        ),
        (["--payload", "hex"], "--payload applies to --format json only, not to --format table"),
        (["--format", "json", "--time", "ms"], "--time applies to --format table only, not to --format json"),
        (["--format", "kafka", "--max-bytes", "9"], "--max-bytes applies to --format table only"),
    ],
)
def test_dump_refuses_what_cannot_apply(args: list[str], message: str) -> None:
    code, out, err = invoke("dump", *args, V2)
    assert code == 2 and out == "" and message in err


def test_options_of_other_commands_that_cannot_apply() -> None:
    assert "--all applies to --format table only" in invoke("verify-crc", "--all", "--format", "json", V2)[2]
    assert "--force applies to --salvage only" in invoke("verify-crc", "--force", V2)[2]
    assert (
        "--no-charts applies to --format table only"
        in invoke("stats", "--no-charts", "--format", "json", V2)[2]
    )
    assert (
        invoke("dump", "--format", "json", "--payload", "hex", "--from-offset", "2", "--to-offset", "2", V2)[
            0
        ]
        == 0
    )


def test_a_range_past_the_data_says_what_the_segment_holds(tmp_path: Path) -> None:
    code, _, err = invoke("dump", "--from-offset", "500", V2)
    assert code == 0
    assert "no record in the range given: the segment holds offsets 0..9, with batch times up to " in err
    copy = tmp_path / "copy.log"
    copy.write_bytes(Path(V2).read_bytes())
    code, _, err = invoke("dump", "--format", "json", "--from-time", "2030-01-01T00:00:00Z", V2, str(copy))
    assert code == 0 and "the 2 files hold offsets 0..9" in err
    assert "no record" not in invoke("dump", "--from-offset", "9", V2)[2]


def test_sizes_take_units() -> None:
    size = ByteSize()
    given = ("12", "256MiB", "256mib", "64k", "1GB", "2 KiB", 7)
    expected = [12, 256 * 2**20, 256 * 2**20, 65536, 10**9, 2048, 7]
    assert [size.convert(v, None, None) for v in given] == expected
    for bad in ("2X", "", "-5", "0", "1.5MiB"):
        with pytest.raises(click.BadParameter):
            size.convert(bad, None, None)
    for command in ("dump", "verify-crc", "stats"):
        assert invoke(command, "--max-batch-bytes", "256MiB", V2)[0] == 0
    code, _, err = invoke("dump", "--max-batch-bytes", "2X", V2)
    assert code == 2 and "'2X' is not a size" in err


def test_convert_takes_sizes_and_an_iso_timestamp(tmp_path: Path) -> None:
    out = tmp_path / "v2.log"
    args = ["--batch-bytes", "1KiB", "--timestamp", "2024-05-01T12:00:00Z"]
    assert invoke("convert", *args, str(FIXTURES / "v0-none.log"), "-o", str(out))[0] == 0
    _, lines, _ = invoke("dump", "--format", "json", str(out))
    records = [r for line in lines.splitlines() for r in json.loads(line).get("records", [])]
    assert records and {r["timestamp"] for r in records} == {1714564800000}
    assert (
        invoke(
            "convert", "--timestamp", "noon", str(FIXTURES / "v0-none.log"), "-o", str(tmp_path / "x.log")
        )[0]
        == 2
    )


@pytest.mark.parametrize(
    "args",
    [
        ("dump", "--format", "json"),
        ("dump", "--format", "kafka"),
        ("verify-crc", "--format", "json"),
        ("stats", "--format", "json"),
        ("convert", "--skip-corrupt", "--format", "json"),
    ],
    ids=" ".join,
)
def test_color_is_accepted_and_ignored_by_the_machine_formats(args: tuple[str, ...], tmp_path: Path) -> None:
    """An alias with ``--color always`` still works with json and Kafka's lines: they are never coloured
    (as rg and git do), so every ``--color`` gives the same bytes and the same exit code."""
    damaged = str(FIXTURES / "corrupt-crc.log")
    runs = []
    for color in ("always", "never", "auto"):
        target = ("-o", str(tmp_path / f"{color}.log")) if args[0] == "convert" else ()
        runs.append(invoke(*args, "--color", color, damaged, *target))
    code, out, err = runs[0]
    assert code in (0, 1) and out and "\x1b" not in out + err
    replaced = [
        (c, o.replace("never.log", "always.log").replace("auto.log", "always.log"), e) for c, o, e in runs
    ]
    assert replaced[1:] == [replaced[0]] * 2
