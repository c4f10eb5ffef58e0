"""How the record table uses a terminal's width, and how it reads: the value gets the room, one table
per file, a one-record batch as one row, ``--expanded``, ``--time`` everywhere. Real broker files come
from ../shared/fixtures-real (skipped when absent)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from rich.cells import cell_len

from kafka_dump.cli import main
from kafka_dump.model import Batch, Compression, Record, TimestampType, new_header, new_record
from kafka_dump.render.payload import printable
from kafka_dump.render.table import TableRenderer
from tests.batches import Rec, v2_batch
from tests.conftest import SHARED_REAL as REAL
from tests.test_terminal_safety import HOSTILE, assert_safe, on_terminal

needs_real = pytest.mark.skipif(not REAL.is_dir(), reason="../shared/fixtures-real is absent")
ENV: dict[str, str | None] = {"NO_COLOR": None, "FORCE_COLOR": None, "TERM": None}
OFFSETS_6 = REAL / "ldi-poc-kafka370-kraft/__consumer_offsets-6/00000000000000000000.log"
SNAPSHOT_39 = (
    REAL / "urbanpulse-kafka39-kraft/__cluster_metadata-0/00000000000000007295-0000000001.checkpoint"
)


def run(*args: str, columns: int = 200) -> Result:
    return CliRunner().invoke(main, ["dump", *args], env={**ENV, "COLUMNS": str(columns)})


def _batch(recs: list[Record], position: int = 0) -> Batch:
    return Batch(
        "f.log", position, recs[0].offset, recs[-1].offset, 2, 0, Compression.NONE, TimestampType.CREATE_TIME,
        0, 0, -1, -1, -1, -1, 0, False, False, None, 1, True, 100, len(recs), tuple(recs),
    )  # fmt: skip


def _cells(row: str) -> list[str]:
    return [c.strip() for c in row.split("│")[1:-1]]


def _header(text: str) -> list[str]:
    line = next(ln for ln in text.splitlines() if ln.startswith("┃"))
    return [c.strip() for c in line.split("┃")[1:-1]]


def _widths(text: str) -> dict[str, int]:
    line = next(ln for ln in text.splitlines() if ln.startswith("┃"))
    return {c.strip(): cell_len(c) - 2 for c in line.split("┃")[1:-1]}


@pytest.mark.parametrize("width", [80, 120, 200])
def test_the_value_is_the_widest_column_when_it_is_the_longest(width: int) -> None:
    recs = [new_record(i, 1_700_000_000_000, b"k" * 60, b"v" * 300, (), -1, 10) for i in range(3)]
    renderer = TableRenderer(max_bytes=400, width=width)
    chunks = [*renderer.file_start("f.log", 0, None), *renderer.batch(_batch(recs), tuple(recs))]
    text = b"".join([*chunks, *renderer.file_end("f.log", 0)]).decode()
    widths = _widths(text)
    assert widths["value"] == max(widths.values()) and widths["value"] > widths["key"]
    assert all(cell_len(ln) <= width for ln in text.splitlines())


def test_a_column_no_row_uses_is_left_out() -> None:
    recs = [new_record(i, 1_700_000_000_000, b"", b"v", (), -1, 10) for i in range(3)]
    renderer = TableRenderer(width=120)
    chunks = [*renderer.file_start("f.log", 0, None), *renderer.batch(_batch(recs), tuple(recs))]
    text = b"".join([*chunks, *renderer.file_end("f.log", 0)]).decode()
    assert _header(text) == ["offset", "time (UTC)", "value"]


@needs_real
@pytest.mark.parametrize("width", [80, 120, 200])
def test_consumer_offsets_show_committed_offsets(width: int) -> None:
    result = run(str(OFFSETS_6), columns=width)
    assert result.exit_code == 0, result.output
    rows = [_cells(ln) for ln in result.stdout.splitlines() if "OffsetCommitValue" in ln]
    assert rows
    if width >= 120:
        assert all(row[3].startswith("OffsetCommitValue v3 offset=") for row in rows), rows[:2]
    widths = _widths(result.stdout)
    assert widths["value"] == max(widths.values())


@needs_real
@pytest.mark.parametrize("width", [80, 120, 200])
def test_a_kraft_snapshot_gives_the_value_the_room(width: int) -> None:
    result = run(str(SNAPSHOT_39), columns=width)
    assert result.exit_code == 0, result.output
    assert "PARTITI…" not in result.stdout
    assert "PARTITION_RECORD v1" in result.stdout
    widths = _widths(result.stdout)
    assert widths["value"] == max(widths.values())


def _single(offset: int, producer: int = -1, position: int = 0) -> Batch:
    r = new_record(offset, 1_700_000_000_000 + offset, b"k", b"v", (), -1, 10)
    b = _batch([r], position)
    return b._replace(producerId=producer, producerEpoch=0 if producer >= 0 else -1)


def _table(batches: list[Batch], flush_rows: int = 256) -> str:
    renderer = TableRenderer(width=120, flush_rows=flush_rows)
    chunks = list(renderer.file_start("f.log", 0, None))
    for b in batches:
        chunks += renderer.batch(b, b.records)
    return b"".join([*chunks, *renderer.file_end("f.log", 0)]).decode()


@pytest.mark.parametrize("flush_rows", [2, 3, 256])
def test_one_record_batches_alike_are_one_row_each(flush_rows: int) -> None:
    text = _table([_single(i, position=70 * i) for i in range(5)], flush_rows)
    lines = text.splitlines()
    sections = [ln for ln in lines if ln.startswith("├")]
    assert len(sections) == 1 and "batches of one record each · v2" in sections[0], sections
    assert [_cells(ln)[0] for ln in lines if ln.startswith("│")] == ["0", "1", "2", "3", "4"]


def test_a_one_record_batch_unlike_its_neighbours_keeps_its_section_row() -> None:
    text = _table([_single(0), _single(1, producer=7), _single(2, producer=7), _single(3)])
    sections = [ln for ln in text.splitlines() if ln.startswith("├")]
    assert len(sections) == 3, sections
    assert sections[0].startswith("├─ offset 0 · v2 · 100 B at 0 ")
    assert "batches of one record each · v2 · producer 7 epoch 0" in sections[1]
    assert sections[2].startswith("├─ offset 3 · v2 ")


def test_batch_lines_read_as_words() -> None:
    result = run("fixtures/txn-control.log", columns=200)
    assert "offset 6 · transactional · control" in result.stdout
    assert "producer 4001 epoch 2 seq 0..2" in result.stdout
    assert "6..6" not in result.stdout and "4001/2" not in result.stdout


def test_expanded_shows_whole_values_and_every_header(tmp_path: Path) -> None:
    long = b"v" * 300 + b"\x1b[2J\r" + b"w" * 10
    seg = tmp_path / "00000000000000000000.log"
    seg.write_bytes(
        v2_batch([(b"k", long, [("a", b"1"), ("b", None), ("c", b"\xff\x00")]), (None, b"x", [])])
    )
    result = run("-x", "--max-bytes", "8", str(seg))
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[2] == "-[ offset 0 ]"
    fields = [ln.split(" │ ", 1) for ln in lines if " │ " in ln]
    names = [name.strip() for name, _ in fields]
    assert names == ["time", "key", "value", "header", "header", "header", "time", "key", "value"]
    assert fields[2][1] == "v" * 300 + "\\x1b[2J\\r" + "w" * 10  # whole, escaped, not cut at --max-bytes
    assert [f[1] for f in fields[3:6]] == ["a = 1", "b = null", "c = 0xff00"]
    assert fields[7][1] == "null"


def test_expanded_is_for_the_table() -> None:
    result = run("-x", "--format", "json", "fixtures/v2-none.log")
    assert result.exit_code == 2 and "--expanded" in result.output


def test_expanded_on_a_terminal_is_escaped(tmp_path: Path) -> None:
    records: list[Rec] = [(k.encode(), v.encode(), [(v, v.encode())]) for k, v in HOSTILE.items()]
    seg = tmp_path / "00000000000000000000.log"
    seg.write_bytes(v2_batch(records))
    plain = assert_safe(*on_terminal("dump", "-x", str(seg), columns=80))
    for value in HOSTILE.values():
        assert printable(value) in plain  # whole, the 5,000-byte line too, escaped where it must be
    assert "[bold]B[/bold]" in plain  # markup is shown, not applied


def test_a_column_that_appears_later_joins_the_same_table() -> None:
    short = [new_record(i, 1_700_000_000_000, b"k", b"v", (), -1, 10) for i in range(2)]
    wide = [new_record(2, 1_700_000_000_000, b"k", b"v" * 40, (new_header(b"h", b"x" * 10),), -1, 10)]
    renderer = TableRenderer(width=None, flush_rows=2)
    chunks = list(renderer.file_start("f.log", 0, None))
    chunks += renderer.batch(_batch(short), tuple(short))
    chunks += renderer.batch(_batch(wide, 100), tuple(wide))
    text = b"".join([*chunks, *renderer.file_end("f.log", 0)]).decode()
    lines = text.splitlines()
    assert text.count("┏") == 1 and text.count("└") == 1, text
    join = next(ln for ln in lines if ln.startswith("├") and "┼" in ln)
    assert join.endswith("┐") and "─ headers ─" in join, join
    assert cell_len(lines[lines.index(join) - 1]) < cell_len(join) == cell_len(lines[-1])


@needs_real
@pytest.mark.parametrize("columns", [None, 80, 120])
def test_a_kraft_log_is_one_table(columns: int | None) -> None:
    log = REAL / "ronem123-kafka41-kraft/__cluster_metadata-0/00000000000001725413.log"
    env = {**ENV, "COLUMNS": str(columns) if columns else None}
    result = CliRunner().invoke(main, ["dump", str(log)], env=env)
    assert result.exit_code == 0, result.output
    assert result.stdout.count("┏") == 1 and result.stdout.count("┘") == 1


@needs_real
@pytest.mark.parametrize(
    ("mode", "shown"),
    [
        ("iso", "2025-12-16T11:17:46.522Z"),
        ("ms", "1765883866522"),
        ("both", "2025-12-16T11:17:46.522Z (1765883866522)"),
    ],
)
def test_time_applies_to_decoded_values(mode: str, shown: str) -> None:
    offsets = REAL / "ronem123-kafka41-kraft/__consumer_offsets-44"
    for args in ([], ["-x"]):
        out = run("--time", mode, *args, str(offsets), columns=1000).stdout
        assert f"OffsetCommitValue v4 offset=5 leaderEpoch=-1 metadata= commitTimestamp={shown}" in out


@needs_real
@pytest.mark.parametrize("mode", ["iso", "ms", "both"])
def test_time_applies_to_side_files(mode: str) -> None:
    index = REAL / "ronem123-kafka41-kraft/__cluster_metadata-0/00000000000001725413.timeindex"
    snapshot = REAL / "macsakini-kafka34-zk/tenitems-0/00000000000000000009.snapshot"
    out = run("--time", mode, str(index), str(snapshot)).stdout
    iso, ms = "2025-12-30T06:29:28.455Z", "1767076168455"
    expected = {"iso": iso, "ms": ms, "both": f"{iso} ({ms})"}[mode]
    assert f"{expected}        1725470" in out
    assert {
        "iso": "2023-02-11T19:33:36.364Z",
        "ms": "1676144016364",
        "both": "2023-02-11T19:33:36.364Z (1676144016364)",
    }[mode] in out
    if mode == "iso":
        assert ms not in out


def test_time_applies_to_a_batch_line() -> None:
    r = new_record(0, 1_700_000_000_000, b"k", b"v", (), -1, 10)
    b = _batch([r])._replace(deleteHorizonMs=1_700_000_000_123)
    for mode, shown in (("iso", "2023-11-14T22:13:20.123Z"), ("ms", "1700000000123")):
        renderer = TableRenderer(time=mode)  # type: ignore[arg-type]
        text = b"".join([*renderer.batch(b, (r,)), *renderer.file_end("f.log", 0)]).decode()
        assert f"deleteHorizon {shown}" in text
