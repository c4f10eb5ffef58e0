"""Files kdump writes (convert's segments and indexes, salvage copies and reports) get the mode the
umask gives any new file; salvage replaces a copy only with --force and says which offsets it lost;
a directory convert that fails on one file ends with that failure."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from kafka_dump.cli import main

from .batches import default_records, v2_batch

NAME = "00000000000000000000.log"


@pytest.fixture
def umask() -> Iterator[None]:
    old = os.umask(0o027)
    try:
        yield
    finally:
        os.umask(old)


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def damaged_partition(root: Path) -> tuple[Path, list[bytes]]:
    """Five two-record batches (offsets 0..9): the second flipped, garbage after the third, the last cut."""
    parts = [v2_batch(default_records(2, seed=i), base_offset=2 * i) for i in range(5)]
    victim = bytearray(parts[1])
    victim[80] ^= 4
    part = root / "topic-0"
    part.mkdir()
    log = part / NAME
    log.write_bytes(
        parts[0] + bytes(victim) + parts[2] + bytes(range(200, 256)) * 3 + parts[3] + parts[4][:-9]
    )
    return log, parts


def test_convert_output_follows_the_umask(tmp_path: Path, umask: None) -> None:
    src = tmp_path / NAME
    src.write_bytes(v2_batch(default_records(3)))
    out = tmp_path / "out" / NAME
    out.parent.mkdir()
    assert invoke("convert", str(src), "-o", str(out))[0] == 0
    assert [mode(out.with_suffix(s)) for s in (".log", ".index", ".timeindex")] == [0o640] * 3


def test_salvage_follows_the_umask_refuses_to_overwrite_and_names_the_offsets_lost(
    tmp_path: Path, umask: None
) -> None:
    log, parts = damaged_partition(tmp_path)
    rescued = tmp_path / "rescued"
    code, out, _ = invoke("verify-crc", "--salvage", str(rescued), str(log))
    copy = rescued / "topic-0" / NAME
    report = copy.with_name(NAME + ".salvage.json")
    assert code == 1 and mode(copy) == mode(report) == 0o640
    assert "in 3 spans, offsets 2..3, 8 on lost (report:" in out
    dropped = json.loads(report.read_text())["dropped"]
    assert [d["lostOffsets"] for d in dropped] == [{"first": 2, "last": 3}, None, {"first": 8, "last": None}]
    assert copy.read_bytes() == parts[0] + parts[2] + parts[3]

    copy.write_bytes(b"kept by the operator")
    code, _, err = invoke("verify-crc", "--salvage", str(rescued), str(log))
    assert code == 2 and copy.read_bytes() == b"kept by the operator"
    assert err == f"kdump: error: {copy}: the salvage copy exists (--force replaces it)\n"
    code, out, _ = invoke("verify-crc", "--force", "--format", "json", "--salvage", str(rescued), str(log))
    assert code == 1 and copy.read_bytes() == parts[0] + parts[2] + parts[3]
    salvage = json.loads(out.splitlines()[-1])
    assert salvage["type"] == "salvage" and salvage["dropped"][0]["lostOffsets"] == {"first": 2, "last": 3}


def test_a_directory_convert_ends_with_its_failure(tmp_path: Path) -> None:
    src = tmp_path / "topic-0"
    src.mkdir()
    for base in (0, 100, 200):
        data = bytearray(v2_batch(default_records(3, seed=base), base_offset=base))
        if base == 100:
            data[80] ^= 4
        (src / f"{base:020d}.log").write_bytes(bytes(data))
    code, out, err = invoke("convert", str(src), "-o", str(tmp_path / "v2"))
    assert code == 1
    assert out.count(" → ") == 1 and "(all)" not in out and "total" not in out
    assert err.endswith("(1 file after it not converted)\n") and "00000000000000000100.log" in err
    code, out, err = invoke("convert", "--format", "json", str(src), "-o", str(tmp_path / "v2j"))
    assert code == 1 and [json.loads(line)["type"] for line in out.splitlines()] == ["convert"]
