"""One heading style for every command: a line of its own, bold (``kdump.file``), a verb then the
path it is about, and one arrow (``→``) wherever an input becomes an output."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from kafka_dump.cli import main
from tests.conftest import FIXTURES

PLAIN = {"COLUMNS": "120", "NO_COLOR": "1", "FORCE_COLOR": None, "TERM": "xterm-256color"}
BOLD = "\x1b[1m"


def run(*args: str, color: bool = False) -> tuple[int, str]:
    flags = ["--color", "always"] if color else []
    res = CliRunner().invoke(main, [args[0], *flags, *args[1:]], env=PLAIN)
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    return res.exit_code, res.stdout


def _cases(tmp_path: Path) -> dict[str, tuple[list[str], str]]:
    seg = str(FIXTURES / "v1-gzip.log")
    out = str(tmp_path / "00000000000000000000.log")
    return {
        "dump": (["dump", seg], f"Dumping {seg}"),
        "stats": (["stats", seg], f"Measuring {seg}"),
        "verify-crc": (["verify-crc", seg], f"Checking {seg}"),
        "convert": (["convert", seg, "-o", out], f"Converting {seg} → {out} (magic 2)"),
    }


@pytest.mark.parametrize("command", ["dump", "stats", "verify-crc", "convert"])
def test_every_command_opens_with_a_verb_and_the_path(tmp_path: Path, command: str) -> None:
    args, heading = _cases(tmp_path)[command]
    code, out = run(*args)
    assert code == 0, out
    assert out.splitlines()[0] == heading


@pytest.mark.parametrize("command", ["dump", "stats", "verify-crc", "convert"])
def test_every_heading_is_bold_alone(tmp_path: Path, command: str) -> None:
    args, heading = _cases(tmp_path)[command]
    code, out = run(*args, color=True)
    assert code == 0, out
    first = out.splitlines()[0]
    assert first.startswith(BOLD) and re.sub(r"\x1b\[[0-9;]*m", "", first) == heading


def test_salvage_uses_the_one_arrow(tmp_path: Path) -> None:
    damaged = tmp_path / "00000000000000000000.log"
    shutil.copyfile(FIXTURES / "corrupt-crc.log", damaged)
    code, out = run("verify-crc", "--salvage", str(tmp_path / "rescued"), str(damaged))
    assert code == 1
    line = next(line for line in out.splitlines() if line.startswith("salvaged "))
    assert f"{damaged} → {tmp_path / 'rescued'}" in line and "->" not in line
