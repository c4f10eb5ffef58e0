"""The README opens with a task-based quick start, before the reference, whose captures (kdump's own
output at 100 columns) ``tools/screenshots.py`` regenerates from the bundled fixtures."""

from __future__ import annotations

import re

from rich.cells import cell_len

from tests.conftest import ROOT
from tools import screenshots

README = (ROOT / "README.md").read_text(encoding="utf-8")
BLOCK = re.compile(r"<!-- capture: (\S+) -->\n```text\n(.*?)```\n<!-- /capture -->", re.S)


def test_the_quick_start_comes_before_the_reference_and_links_below() -> None:
    headings = re.findall(r"^## (.+)$", README, re.M)
    assert headings.index("Quick start") == headings.index("Set-up") + 1
    assert headings.index("Quick start") + 1 == headings.index("Commands")
    quick = README[README.index("## Quick start") : README.index("\n## Commands")]
    for task in ("Inspect a segment", "Check a log dir", "Estimate savings", "Convert"):
        assert f"**{task}" in quick
    for anchor in re.findall(r"\]\(#([a-z-]+)\)", quick):  # every link reaches a heading below
        assert anchor in {re.sub(r"[^a-z -]", "", h.lower()).replace(" ", "-") for h in headings}, anchor
    assert "pip install . && kdump fixtures/v2-headers.log" in README[: README.index("## Quick start")]
    assert "pip install -e '.[test]' && python -m pytest" in README[: README.index("## Quick start")]


def test_every_capture_is_one_the_tool_makes_at_100_columns() -> None:
    blocks = dict(BLOCK.findall(README))
    assert set(blocks) == set(screenshots.CAPTURES)
    for name, text in blocks.items():
        command = screenshots.CAPTURES[name][0]
        assert text.startswith(f"$ kdump {command}\n"), name
        rows = [line for line in text.splitlines() if line[:1] in "┏┃┡│├└┌"]
        assert all(cell_len(line) <= 100 for line in rows), name


def test_the_tool_shows_each_view_from_the_fixtures() -> None:
    shots = screenshots.captures()
    assert "│      0 │ 2023-11-14T22:13:20.000Z │ key-0  │" in shots["table"]
    assert "-[ offset 0 ]\ntime   │ 2023-11-14T22:13:20.000Z\nkey    │ key-0\n" in shots["expanded"]
    verify = shots["verify"].splitlines()
    assert verify[1].startswith("data/orders-0/00000000000000000013.log: byte 156, offset 15 (104 bytes) ")
    assert verify[-1] == "1 of 3 files damaged · exit 1"
    assert "Record sizes" in shots["stats"] and "Records over time" in shots["stats"]
    assert "│ V1 none ◀     │" in shots["compare"] and "★ the smallest encoding." in shots["compare"]
    assert "│ change       │       │ -19.0% │" in shots["convert"]
    assert screenshots.rewritten(README, shots).count("```text\n$ kdump ") == len(screenshots.CAPTURES)
