"""``kdump ls`` under the search options: a ``matches`` column counted by the segment reader's match mode,
segments without a match left out, the same counts as ``dump --count``, and the pure reader's the same."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from kafka_dump.cli import main
from tests.batches import GZIP, LZ4, fix_v2_crc, legacy_messages
from tests.test_search import RECORDS, segment, v2_entry

ENV = {"COLUMNS": "250", "NO_COLOR": "1"}


def run(*args: str | Path, code: int = 0) -> Result:
    result = CliRunner().invoke(main, ["ls", *map(str, args)], env=ENV)
    assert result.exit_code == code, result.output
    return result


def rows(*args: str | Path, code: int = 0) -> list[dict[str, Any]]:
    return [json.loads(line) for line in run("--format", "json", *args, code=code).stdout.splitlines()]


def three_segments(root: Path, name: str = "orders-0") -> Path:
    """A partition of three segments; only the middle one holds the key ``needle``."""
    d = root / name
    d.mkdir(parents=True)
    hay = [(b"hay-%d" % i, b"value", []) for i in range(4)]
    (d / "00000000000000000000.log").write_bytes(v2_entry(hay, base_offset=0))
    (d / "00000000000000000004.log").write_bytes(
        v2_entry([*hay[:2], (b"needle", b"x", []), (b"needle", None, [])], base_offset=4, codec=LZ4)
    )
    (d / "00000000000000000008.log").write_bytes(v2_entry(hay, base_offset=8))
    return d


def test_a_key_in_one_segment_of_three(tmp_path: Path) -> None:
    d = three_segments(tmp_path)
    found = rows("--key", "needle", d)
    assert [(r["type"], r.get("file"), r["matches"]) for r in found] == [
        ("segment", str(d / "00000000000000000004.log"), 2),
        ("total", None, 2),
    ]
    # The row's other figures are the segment's own, as without a search.
    assert found[0]["entries"] == 1 and found[0]["records"] == 4
    assert (found[0]["firstOffset"], found[0]["lastOffset"]) == (4, 7)
    assert found[-1]["segments"] == 1 and found[-1]["bytes"] == found[0]["bytes"]
    rolled = rows("--key", "needle", "--by", "partition", d)
    assert [(r["name"], r["segments"], r["matches"]) for r in rolled] == [("orders-0", 1, 2), ("total", 1, 2)]
    assert "matches" not in rows(d)[0]  # no search: the JSON as before
    table = run("--key", "needle", d).stdout
    assert "matches" in table and "00000000000000000000.log" not in table
    plain = run("--key", "needle", "--format", "plain", d).stdout.splitlines()
    assert len(plain) == 1 and plain[0].split("\t")[-1] == "2" and len(plain[0].split("\t")) == 14


def test_nothing_matches(tmp_path: Path) -> None:
    d = three_segments(tmp_path)
    result = run("--key", "absent", d)
    assert "kdump: no record matches the filters given" in result.stderr
    assert "total (0 segments)" in result.stdout
    assert rows("--key", "absent", d)[-1]["matches"] == 0


def test_a_header_filter(tmp_path: Path) -> None:
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(segment())
    (seg,) = rows("--header", "trace-id=abc", "--by", "segment", path)[:-1]
    # RECORDS 0 and 3 hold trace-id=abc, in each of the three v2 batches (the third holds RECORDS[:3])
    assert seg["matches"] == 5
    assert rows("--header", "trace-id", path)[0]["matches"] == 4 + 4 + 2


def test_a_producer_filter_skips_batches_by_their_header(tmp_path: Path) -> None:
    """A batch of another producer whose records are garbage (its CRC valid) is not decoded under
    --producer: exit 0, no problem; a search that reads it finds the damage (exit 1)."""
    bad = bytearray(v2_entry(RECORDS, base_offset=6, producer_id=9))
    bad[61:70] = b"\x7f" * 9
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(v2_entry(RECORDS, base_offset=0, producer_id=4001) + fix_v2_crc(bad))
    (seg,) = rows("--producer", "4001", path)[:-1]
    assert seg["matches"] == 6 and seg["problem"] is None and seg["entries"] == 2
    damaged = rows("--key", "order-1", path, code=1)
    assert damaged[0]["matches"] == 1 and damaged[0]["problem"]["check"] != "partial-tail"
    assert run("--producer", "9", path, code=1)


def test_v0_v1_wrappers(tmp_path: Path) -> None:
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(
        legacy_messages([(b"a", b"one"), (b"needle", b"two")], magic=0, codec=GZIP, base_offset=0)
        + legacy_messages([(b"needle", b"three"), (None, b"needle")], magic=1, codec=LZ4, base_offset=2)
        + legacy_messages([(b"needle", b"plain")], magic=1, base_offset=4)
    )
    (seg,) = rows("--key", "needle", path)[:-1]
    assert seg["matches"] == 3 and seg["records"] is None  # headers alone do not count a wrapper's
    assert rows("--key", "needle", "--deep", path)[0]["records"] == 5
    assert rows("--grep", "needle", path)[0]["matches"] == 1
    assert rows("--header", "h", path)[-1]["matches"] == 0  # v0/v1 messages have no headers


def log_dir(root: Path) -> Path:
    for part, copies in (("orders-0", 1), ("orders-1", 2), ("pay-0", 1)):
        d = root / "data" / part
        d.mkdir(parents=True)
        for n in range(copies):
            (d / f"{n * 100:020d}.log").write_bytes(segment())
    three_segments(root / "data", "more-0")
    return root / "data"


SEARCHES = [
    ["--grep", "failed"],
    ["--key", "needle"],
    ["--key-re", "order|\xff"],
    ["--producer", "77"],
    ["--transactional"],
    ["--header", "trace-id", "--grep", "status"],
]


@pytest.mark.parametrize("search", SEARCHES, ids=" ".join)
def test_the_counts_of_dump_count(search: list[str], tmp_path: Path) -> None:
    data = log_dir(tmp_path)
    count = CliRunner().invoke(main, ["dump", "--count", "--format", "json", *search, str(data)])
    assert count.exit_code == 0, count.output
    expected = [(o["file"], o["count"]) for o in map(json.loads, count.stdout.splitlines()) if o["count"]]
    assert expected
    for jobs in ("1", "3"):
        found = rows(*search, "--by", "segment", "-j", jobs, data)
        assert [(r["file"], r["matches"]) for r in found[:-1]] == expected
        assert found[-1]["matches"] == sum(n for _, n in expected)
    by_topic = rows(*search, "--by", "topic", "--sort", "size", data)
    assert sum(r["matches"] for r in by_topic[:-1]) == by_topic[-1]["matches"]


def test_the_pure_reader_gives_the_same(tmp_path: Path) -> None:
    data = log_dir(tmp_path)
    for search in SEARCHES:
        args = ["-m", "kafka_dump", "ls", "--format", "plain", "--by", "segment", *search, str(data)]
        outs = [
            subprocess.run(
                [sys.executable, *args], env={**os.environ, **ENV, **pure}, capture_output=True, check=True
            ).stdout
            for pure in ({"KDUMP_PURE": "1"}, {"KDUMP_PURE": "0"})
        ]
        assert outs[0] == outs[1] and outs[0], search


def test_a_search_on_a_terminal(tmp_path: Path) -> None:
    """On a real pseudo-terminal, a hostile partition name found by a search reaches it escaped; on a
    narrow one, each row stays one line, the matches column among those left out when room runs out."""
    from kafka_dump.render.payload import printable
    from tests.test_terminal_safety import HOSTILE_NAME, assert_safe, on_terminal

    d = three_segments(tmp_path, f"{HOSTILE_NAME}-0")
    for shape in ([], ["--format", "plain"], ["--format", "json"], ["--by", "partition"]):
        out, err = on_terminal("ls", "--key", "needle", *shape, str(d), columns=400)
        plain = assert_safe(out.replace("\t", " ") if "plain" in shape else out, err)  # plain's own tabs
        assert printable(HOSTILE_NAME) in plain or "json" in shape
    for columns in (200, 100, 70):
        plain = assert_safe(*on_terminal("ls", "--key", "needle", str(d), columns=columns), columns=columns)
        rows = [line for line in plain.splitlines() if line.startswith("│")]
        assert len(rows) == 2, plain  # the segment and the total, one line each
        hidden = next((line for line in plain.splitlines() if line.startswith("not shown at")), "")
        heading = next(line for line in plain.splitlines() if line.startswith("┃"))
        assert ("matches" in heading) != ("matches" in hidden), plain


def test_a_narrow_terminal_keeps_the_matches_column(tmp_path: Path) -> None:
    """Under a search the count of matches is the answer: the last column a narrow table gives up."""
    three_segments(tmp_path / "data")
    three_segments(tmp_path / "data", "events-0")
    result = CliRunner().invoke(
        main, ["ls", "--key", "needle", str(tmp_path / "data")], env={**ENV, "COLUMNS": "100"}
    )
    header = next(line for line in result.stdout.splitlines() if line.startswith("┃"))
    assert "matches" in header and "entries" not in header
    assert "not shown at 100 columns: entries" in result.stdout


def test_a_damaged_segment_without_a_match_is_named(tmp_path: Path) -> None:
    """Left out of the table for its lack of matches, its damage still gives exit 1: it is said why."""
    d = three_segments(tmp_path)
    seg = d / "00000000000000000008.log"
    raw = bytearray(seg.read_bytes())
    raw[-5] ^= 0xFF
    seg.write_bytes(bytes(raw))
    result = run("--key", "needle", "--verify", d, code=1)
    assert "00000000000000000008.log" not in result.stdout
    assert f"kdump: {seg}: no matching record, and damaged: " in result.stderr
