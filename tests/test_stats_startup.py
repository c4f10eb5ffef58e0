"""``kdump stats`` loads only what its work needs: not verify's walk, not the dump command's analysis (range filters, indexes, side files) nor its table renderer.
Checked by the modules a fresh interpreter holds afterwards, not by timings."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT

UNNEEDED = (
    "kafka_dump.wire._walk_pure", "kafka_dump.analysis.dump", "kafka_dump.log.index", "kafka_dump.render.table",
    "kafka_dump.log.sidefiles",
)  # fmt: skip


def _loaded_after(args: list[str]) -> dict[str, bool]:
    code = (
        "import sys, json\n"
        "from kafka_dump.cli import main\n"
        f"sys.argv = ['kdump', *{args!r}]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "import kafka_dump.native as n\n"
        f"print(json.dumps([n.ACTIVE, {{m: m in sys.modules for m in {UNNEEDED!r}}}]), file=sys.stderr)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "KDUMP_PURE"}
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60, env=env
    )
    twin, loaded = json.loads(result.stderr.strip().splitlines()[-1])
    if twin != "compiled":
        pytest.skip("the compiled module is not built")
    return dict(loaded)


@pytest.mark.parametrize("fixture", ["v1-gzip.log", "v2-lz4.log", "mixed-magic.log"])
@pytest.mark.parametrize("fmt", ["table", "json"])
def test_stats_loads_neither_the_walk_nor_the_dump_analysis(fixture: str, fmt: str) -> None:
    loaded = _loaded_after(["stats", "--format", fmt, f"fixtures/{fixture}"])
    assert loaded == dict.fromkeys(UNNEEDED, False)


@pytest.mark.parametrize(
    "ts", [-5, -1, 0, 1, 999, 1_700_000_000_123, 253_402_300_799_999, 253_402_300_800_000, 2**63 - 1]
)
def test_the_light_iso_shows_a_timestamp_as_the_table_does(ts: int) -> None:
    from kafka_dump.render import clock, table

    assert clock.iso(ts) == table.time_text(ts, "iso")
