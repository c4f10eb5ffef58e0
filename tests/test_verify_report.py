"""verify-crc's table report: which file is damaged (names whole, below their common directory),
clean files folded into one line, a verdict line, and the batch's offset beside a problem's position."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from kafka_dump.cli import main
from kafka_dump.render.plain import middle_cut

from .batches import default_records, v2_batch

NAME = "00000000000000000000.log"
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def run(*args: str, columns: int = 1000) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["verify-crc", *args], env={"COLUMNS": str(columns)})
    return result.exit_code, result.stdout


def log_dir(root: Path, partitions: int, damaged: set[int]) -> Path:
    """``partitions`` partitions of one long-named topic, each one segment; those in ``damaged`` flipped."""
    for i in range(partitions):
        part = root / "var" / "lib" / "kafka" / "data" / f"orders-eu-west-payments-settled-{i}"
        part.mkdir(parents=True)
        data = bytearray(v2_batch(default_records(3, seed=i)) + v2_batch(default_records(2), base_offset=3))
        if i in damaged:
            data[80] ^= 1
        (part / NAME).write_bytes(bytes(data))
    return root / "var"


def test_a_problem_line_gives_the_batch_offset_beside_its_position() -> None:
    code, out = run(str(FIXTURES / "corrupt-crc.log"))
    assert code == 1
    assert f"{FIXTURES / 'corrupt-crc.log'}: byte 257, offset 3 (199 bytes) crc-mismatch:" in out


def test_clean_files_fold_into_one_line_and_a_verdict_ends_the_report(tmp_path: Path) -> None:
    root = log_dir(tmp_path, 6, {1, 4})
    code, out = run(str(root))
    assert code == 1
    lines = out.splitlines()
    assert lines[-1] == "2 of 6 files damaged · exit 1"
    assert f"Checking {root}/lib/kafka/data/" in lines
    rows = [line for line in lines if NAME in line and "byte" not in line]
    assert [row.split()[1] for row in rows] == [f"orders-eu-west-payments-settled-{i}/{NAME}" for i in (1, 4)]
    assert any("│ 4 more files clean " in line for line in lines)
    assert any("│ total (6 files) " in line for line in lines)
    code, every = run("--all", str(root))
    assert code == 1 and "more files clean" not in every
    assert sum(NAME in line and "byte" not in line for line in every.splitlines()) == 6
    code, clean = run(str(log_dir(tmp_path / "clean", 3, set())))
    assert code == 0 and clean.splitlines()[-1] == "all 3 files valid · exit 0"


@pytest.mark.parametrize("columns", [80, 100, 120])
def test_a_segment_name_is_whole_and_each_partition_told_apart(tmp_path: Path, columns: int) -> None:
    """Four damaged segments of one topic at a terminal's width: four different rows, names whole."""
    root = log_dir(tmp_path, 4, {0, 1, 2, 3})
    code, out = run(str(root / "lib"), columns=columns)
    assert code == 1
    rows = [line for line in out.splitlines() if line.startswith("│") and "total" not in line]
    names = [row.split("│")[1].strip() for row in rows]
    assert len(names) == 4 and len(set(names)) == 4, names
    assert all(name.endswith(f"{i}/{NAME}") for i, name in enumerate(names)), names
    assert all(len(line) <= columns for line in out.splitlines() if line.startswith(("│", "┃", "┏", "└")))


def test_middle_cut_keeps_the_last_component() -> None:
    path = f"orders-eu-west-payments-settled-12/{NAME}"
    assert middle_cut(path, 100) == path
    assert middle_cut(path, 40) == f"orders-…tled-12/{NAME}" and len(middle_cut(path, 40)) == 40
    assert middle_cut(path, 30) == f"or…12/{NAME}"
    assert middle_cut(path, 20) == f"…/{NAME}"
    assert middle_cut(NAME, 5) == NAME


def test_on_a_terminal_at_80_columns_every_damaged_segment_is_told_apart(tmp_path: Path) -> None:
    from .test_terminal_safety import assert_safe, on_terminal

    root = log_dir(tmp_path, 4, {0, 1, 2, 3})
    plain = assert_safe(*on_terminal("verify-crc", str(root), columns=80), columns=80)
    rows = [line.split("│")[1].strip() for line in plain.splitlines() if line.startswith("│")]
    assert len(set(rows[:4])) == 4 and all(r.endswith(f"{i}/{NAME}") for i, r in enumerate(rows[:4])), rows
    assert plain.splitlines()[-1] == "4 of 4 files damaged · exit 1"
