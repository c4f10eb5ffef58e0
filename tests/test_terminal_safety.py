"""Terminal safety (issue 11): nothing in a record or a file name may style, link, move the cursor or
crash the renderer, in any command's terminal output.

Each command runs as a real process whose stdout is a pseudo-terminal (raw mode, so every byte it
writes is seen as written; ``COLUMNS`` set, colour forced), on a segment whose keys, values and
header keys and values hold Rich markup, ESC/CSI and C1 sequences, OSC 8 hyperlinks and an OSC
title, CR, backspace, bidi overrides and isolates, zero-width characters and a 5,000-byte line,
under a file name that holds most of them too. What reaches the terminal must hold no control
character but newline and no escape sequence but Rich's own colours (SGR), and the data must be
there literally: as text where it is printable, escaped (or as hex) where it is not.
"""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
import tty
from pathlib import Path

import pytest
from rich.cells import cell_len

from kafka_dump.render.payload import printable
from tests.batches import Rec, v2_batch
from tests.conftest import FIXTURES, ROOT

HOSTILE = {
    "markup": "[/][bold]B[/bold][link=https://evil.example/]L[/link][red on white]",
    "csi": "\x1b[2J\x1b[1;1H\x1b[31mRED\x1b[0m\x1b[6n",
    "c1": "\u009b31mC1",
    "osc8": "\x1b]8;;https://evil.example/\x1b\\LINK\x1b]8;;\x1b\\\x1b]0;TITLE\x07",
    "cr": "shown\rhidden",
    "bs": "abc\x08\x08\x08XYZ",
    "bidi": "a\u202eevil\u202cb\u2066c\u2069",
    "zw": "z\u200bw\u200dj\ufeffx",
    "long": "L" * 5000,
}
# A file name cannot hold "/" (nor NUL): markup, ESC, CSI, OSC 8, bidi, CR, backspace, zero-width.
HOSTILE_NAME = "x\x1b[31m[bold]F[red]\u202e\r\x08\x1b]8;;http:e\x1b\\\u200b.log"
SGR = re.compile(r"\x1b\[[0-9;]*m")  # Rich's colours: the one escape sequence allowed through


@pytest.fixture(scope="module")
def segment(tmp_path_factory: pytest.TempPathFactory) -> Path:
    records: list[Rec] = [(k.encode(), v.encode(), [(v, v.encode())]) for k, v in HOSTILE.items()]
    path = tmp_path_factory.mktemp("hostile") / HOSTILE_NAME
    path.write_bytes(v2_batch(records))
    return path


def on_terminal(*args: str, columns: int = 120) -> tuple[str, str]:
    """(what a terminal receives on stdout, stderr) of ``kdump ARGS`` run with a pty as its stdout."""
    master, slave = pty.openpty()
    tty.setraw(slave)  # no output processing: "\n" stays "\n", so any "\r" came from the program
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "KDUMP_PROGRESS")}
    env.update(COLUMNS=str(columns), TERM="xterm-256color", PYTHONPATH=str(ROOT))
    proc = subprocess.Popen(
        [sys.executable, "-m", "kafka_dump", *args, "--color", "always"],
        stdout=slave,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env=env,
        cwd=ROOT,
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 1 << 16)
        except OSError:  # EIO: the program closed its end
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    err = proc.stderr.read() if proc.stderr is not None else b""
    assert proc.wait(timeout=60) in (0, 1), err
    return b"".join(chunks).decode("utf-8"), err.decode("utf-8")


def assert_safe(out: str, err: str, columns: int | None = None) -> str:
    """No control character but newline, no escape but SGR, no table row past the width; the plain text."""
    plain = SGR.sub("", out)
    assert [c for c in plain if c != "\n" and not c.isprintable()] == []
    assert [c for c in err if c != "\n" and not c.isprintable()] == []
    assert "Traceback" not in err
    if columns is not None:  # a table's rows (a long value included) stay within the width
        rows = [line for line in plain.splitlines() if line[:1] and "\u2500" <= line[0] <= "\u257f"]
        assert rows and max(cell_len(line) for line in rows) <= columns
    return plain


def test_the_check_catches_what_it_must() -> None:
    """A check that cannot fail is a defect: raw data through a terminal must be caught."""
    for value in HOSTILE.values():
        if value != HOSTILE["long"] and value != HOSTILE["markup"]:
            with pytest.raises(AssertionError):
                assert_safe(value, "")
    with pytest.raises(AssertionError):
        assert_safe("ok", HOSTILE["cr"])


@pytest.mark.parametrize(
    "args",
    [("dump",), ("dump", "--format", "kafka"), ("verify-crc",), ("stats",), ("stats", "--compare")],
    ids=" ".join,
)
def test_every_command_on_the_hostile_fixture(args: tuple[str, ...]) -> None:
    """``fixtures/hostile.log`` (made by make_fixtures.py): v2 and v1 records steering a terminal."""
    assert_safe(*on_terminal(*args, str(FIXTURES / "hostile.log")))


def _shown(value: str) -> list[str]:
    """How a value may appear: itself when printable, else escaped or as hex (the start of it)."""
    if value.isprintable():
        return [value[:40]]
    return [printable(value)[:40], "0x" + value.encode()[:16].hex()]


def test_dump_table(segment: Path) -> None:
    assert_safe(*on_terminal("dump", str(segment)), columns=120)
    plain = assert_safe(*on_terminal("dump", str(segment), columns=1000))
    assert printable(str(segment)) in plain
    for key, value in HOSTILE.items():
        assert key in plain
        assert printable(value)[:40] in plain  # the header key, escaped where it must be
        # The value's cell (cut to its column): its start, escaped or in hex.
        assert any(s[:6] in plain for s in (printable(value), "0x" + value.encode().hex())), key
    assert "L" * 64 + "…" in plain  # the value cut at --max-bytes


def test_dump_kafka(segment: Path) -> None:
    plain = assert_safe(*on_terminal("dump", "--format", "kafka", str(segment)))
    assert f"Dumping {printable(str(segment))}\n" in plain
    for key, value in HOSTILE.items():
        assert f"key: {key} payload: {printable(value)}\n" in plain
        assert f"headerKeys: [{printable(value)}]" in plain


def test_verify_crc_table(segment: Path, tmp_path: Path) -> None:
    assert_safe(*on_terminal("verify-crc", str(segment)), columns=120)
    plain = assert_safe(*on_terminal("verify-crc", str(segment), columns=1000))
    assert printable(str(segment)) in plain
    # A damaged copy under the same hostile name: its problem lines and the salvage line too.
    damaged = tmp_path / HOSTILE_NAME
    data = bytearray(segment.read_bytes())
    data[-1] ^= 0xFF
    damaged.write_bytes(bytes(data) + segment.read_bytes())
    out, err = on_terminal("verify-crc", "--salvage", str(tmp_path / "out"), str(damaged), columns=1000)
    plain = assert_safe(out, err)
    assert f"{printable(str(damaged))}: byte 0, offset " in plain and "crc-mismatch" in plain
    assert "salvaged " + printable(str(damaged)) in plain


def test_stats_table(segment: Path) -> None:
    assert_safe(*on_terminal("stats", str(segment)), columns=120)
    plain = assert_safe(*on_terminal("stats", str(segment), columns=1000))
    assert printable(str(segment)) in plain
    for value in HOSTILE.values():
        assert any(s[:20] in plain for s in _shown(value)), value  # the most common header keys


def test_stats_problems_on_stderr(segment: Path, tmp_path: Path) -> None:
    damaged = tmp_path / HOSTILE_NAME
    damaged.write_bytes(segment.read_bytes()[:-1] + b"\x00")
    out, err = on_terminal("stats", str(damaged))
    assert_safe(out, err)
    assert err.startswith(f"kdump: {printable(str(damaged))}: byte 0: ")


def test_convert_report(segment: Path, tmp_path: Path) -> None:
    """convert's report names its input and output (both hostile here), and the batches it skipped."""
    damaged = tmp_path / HOSTILE_NAME
    data = bytearray(segment.read_bytes())
    data[-1] ^= 0xFF
    damaged.write_bytes(bytes(data) + segment.read_bytes())
    out = tmp_path / "out"
    out.mkdir()
    target = out / ("00000000000000000000" + HOSTILE_NAME)
    for source, extra in ((segment, ()), (damaged, ("--skip-corrupt",))):
        args = ("convert", *extra, "--force", str(source), "-o", str(target))
        assert_safe(*on_terminal(*args), columns=120)
        plain = assert_safe(*on_terminal(*args, columns=1000))
        assert printable(str(source)) in plain and printable(str(target)) in plain


@pytest.mark.parametrize(
    "args",
    [("dump", "--format", "json"), ("dump", "--format", "kafka"), ("verify-crc", "--format", "json")],
    ids=" ".join,
)
def test_machine_formats_on_a_terminal_with_color_always_are_not_coloured(args: tuple[str, ...]) -> None:
    """``--color always`` is accepted with json and Kafka's lines and changes nothing, on a terminal too."""
    source = str(FIXTURES / "v2-headers.log")
    out, err = on_terminal(*args, source)
    piped = subprocess.run(
        [sys.executable, "-m", "kafka_dump", *args, "--color", "never", source],
        capture_output=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=True,
    )
    assert "\x1b" not in out and err == "" and out == piped.stdout.decode()
