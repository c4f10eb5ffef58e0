"""One number style in every human format (render/plain.py says the rule): counts with thousands
separators, offsets and byte positions raw (as JSON and ``--from-offset`` have them), a percent with one
decimal and no space, sizes at a glance in binary units."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from click.testing import CliRunner

from kafka_dump.cli import main
from kafka_dump.render.plain import binary_size, decimal, number, percent
from tests.conftest import FIXTURES


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args), env={"COLUMNS": "200"})
    return result.exit_code, result.stdout + result.stderr


def test_the_helpers() -> None:
    assert [number(n) for n in (0, 999, 1000, 2656101)] == ["0", "999", "1,000", "2,656,101"]
    assert [decimal(v) for v in (6078.031, 0.0, -3.333)] == ["6,078.03", "0.00", "-3.33"]
    assert [percent(f) for f in (0.1234, 0.0, -0.00001, 1.0)] == ["12.3%", "0.0%", "0.0%", "100.0%"]
    assert [percent(f, signed=True) for f in (0.1234, -0.382, 0.0, -0.00001)] == [
        "+12.3%",
        "-38.2%",
        "0.0%",
        "0.0%",
    ]
    assert [binary_size(n) for n in (512, 1536, 5 * 1024**2 + 1)] == ["512 B", "1.5 KiB", "5.0 MiB"]


def test_offsets_and_positions_are_raw_counts_are_separated(tmp_path: Path) -> None:
    """A problem past byte 999 in a segment whose offsets pass 999: verify, dump and stats alike."""
    segment = tmp_path / "00000000000000001000.log"
    data = (FIXTURES / "00000000000000001000.log").read_bytes()
    damaged = bytearray(data * 4)  # the same batches again: out of order, but framed
    damaged[len(data) * 3 + 300] ^= 0xFF  # inside the second batch of the fourth copy
    segment.write_bytes(bytes(damaged))
    code, out = invoke("verify-crc", str(segment))
    assert code == 1 and f"{segment}: byte 1635, offset 1003 (177 bytes) " in out
    assert "1,635" not in out and "1,003" not in out
    code, out = invoke("dump", "--batches-only", str(segment))
    assert "offsets 1003..1005 · 3 records · v2 snappy · 177 B at 1182" in out
    assert "PROBLEM at byte 1635 (177 bytes, corrupt)" in out
    code, out = invoke("stats", str(segment))
    assert re.search(r"│ first offset +│ +1000 │", out) and re.search(r"│ file bytes +│ +1,812 │", out)


def test_one_percent_and_decimal_style_across_commands(tmp_path: Path) -> None:
    source = tmp_path / "in.log"
    shutil.copy(FIXTURES / "v0-none.log", source)
    code, out = invoke(
        "convert", "--to-magic", "2", "--compression", "zstd", str(source), "-o", str(tmp_path / "out.log")
    )
    assert code == 0
    assert not re.search(r"\d %", out)  # never a space before %
    assert re.search(r"│ bytes/record +│ +\d+\.\d\d │ +\d+\.\d\d │", out)
    for args in (
        ("stats", str(FIXTURES / "mixed-magic.log")),
        ("stats", "--compare", str(FIXTURES / "mixed-magic.log")),
    ):
        _, out = invoke(*args)
        percents = re.findall(r"[-+]?\d[\d,.]*%", out)
        assert percents and all(re.fullmatch(r"[-+]?\d+\.\d%", p) for p in percents), percents
    assert "V0 none 12.9%, V0 gzip 11.8%" in out


def test_ls_and_diff_write_offsets_and_positions_raw(tmp_path: Path) -> None:
    """The commands that came later follow the same rule: ``ls``'s offset range and problem byte,
    ``diff``'s ranges and damage positions."""
    segment = tmp_path / "00000000000000001000.log"
    data = (FIXTURES / "00000000000000001000.log").read_bytes()
    segment.write_bytes(data)
    code, out = invoke("ls", str(segment))
    assert code == 0 and re.search(r"│ 1000\.\.\d{4} ", out) and "1,0" not in out.split("│", 3)[2]
    damaged = tmp_path / "b" / "00000000000000001000.log"
    damaged.parent.mkdir()
    flipped = bytearray(data * 4)  # as above: the problem lies past byte 999
    flipped[len(data) * 3 + 300] ^= 0xFF
    damaged.write_bytes(bytes(flipped))
    code, out = invoke("ls", "--format", "plain", str(damaged))
    assert re.search(r"\bat byte \d{4}\b", out), out
    code, out = invoke("diff", str(segment), str(damaged))
    assert re.search(r"offsets 1000\.\.\d{4}", out) and not re.search(r"offsets? 1,\d{3}", out), out
