"""Golden outputs: each bundled fixture, dumped in each format, must give the committed bytes.

Regenerate after a deliberate change with ``KDUMP_UPDATE_GOLDENS=1 pytest tests/test_golden.py``
and review the diff: the goldens are the reviewed truth, not whatever the code prints today.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from kafka_dump.cli import main
from tests.conftest import FIXTURES

GOLDEN = FIXTURES / "golden"
SEGMENTS = sorted(p.name for p in FIXTURES.glob("*.log"))
FORMATS = {
    "table": ["--format", "table"],
    "json": ["--format", "json"],
    "json-base64": ["--format", "json", "--payload", "base64"],
    "kafka": ["--format", "kafka"],
}


@pytest.mark.parametrize("fmt", sorted(FORMATS))
@pytest.mark.parametrize("name", SEGMENTS)
def test_golden(name: str, fmt: str, in_root: Path) -> None:
    result = CliRunner().invoke(main, ["dump", *FORMATS[fmt], f"fixtures/{name}"], env={"COLUMNS": "200"})
    expected_code = 1 if name.startswith("corrupt") else 0
    assert result.exit_code == expected_code, result.output
    golden = GOLDEN / f"{name}.{fmt}.txt"
    if os.environ.get("KDUMP_UPDATE_GOLDENS") == "1":
        golden.write_bytes(result.stdout_bytes)
    # Bytes, not text: a record's CR must stay a CR (hostile.log), not become a newline.
    assert result.stdout_bytes == golden.read_bytes()


def test_every_fixture_has_goldens() -> None:
    names = {p.name for p in GOLDEN.glob("*.txt")}
    missing = [f"{s}.{f}.txt" for s in SEGMENTS for f in FORMATS if f"{s}.{f}.txt" not in names]
    assert not missing
