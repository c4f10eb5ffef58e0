"""The table's row twins agree exactly: ``render/rows.py`` (the reference) and ``native/rows.c``.

Each function on random values (Hypothesis), and the whole table of every fixture, of the bad corpus
and of hostile.log, at several widths, with and without colour, in every ``--time`` mode.
Skipped where the compiled twin was not built, except under ``KDUMP_EXPECT_COMPILED=1``.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_dump.analysis.dump import BatchEvent, BatchRun, FileEnd, FileStart, RangeFilter, iter_dump
from kafka_dump.model import Batch, Compression, Problem, Record, TimestampType, new_header, new_record
from kafka_dump.render import rows
from kafka_dump.render.table import TableRenderer, TimeMode
from tests.conftest import FIXTURES, reference_module

if os.environ.get("KDUMP_EXPECT_COMPILED") == "1":
    fast: ModuleType = importlib.import_module("kafka_dump.native._native")
else:
    fast = pytest.importorskip("kafka_dump.native._native")
pure = reference_module(rows)

data = st.one_of(
    st.none(),
    st.binary(max_size=40),
    st.text(max_size=20).map(lambda s: s.encode("utf-8", "surrogatepass")),
    st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=30).map(str.encode),
    st.sampled_from([b"[/]", b"\x1b[2J", "\u202e\u200b日本".encode(), b"\r\t\n", b"", b"\x7f", b"a\x00b"]),
)
headers = st.lists(st.tuples(st.one_of(st.binary(max_size=6), st.just(b"trace-id")), data), max_size=3)
timestamps = st.one_of(
    st.integers(-(2**63), 2**63 - 1),
    st.integers(-1, 253_402_300_800_001),
    st.sampled_from([-1, 0, 1_700_000_000_123, 253_402_300_799_999, 253_402_300_800_000, 951_782_400_000]),
)
record_values = st.lists(
    st.tuples(st.integers(-(2**63), 2**63 - 1), timestamps, data, data, headers), max_size=20
)


def _records(
    values: list[tuple[int, int, bytes | None, bytes | None, list[tuple[bytes, bytes | None]]]],
) -> list[Record]:
    return [
        new_record(offset, ts, key, value, tuple(new_header(hk, hv) for hk, hv in hs), -1, 10)
        for offset, ts, key, value, hs in values
    ]


@settings(max_examples=150, deadline=None)
@given(values=record_values, max_bytes=st.integers(1, 40), mode=st.sampled_from([0, 1, 2]),
       first=st.integers(0, 300))  # fmt: skip
def test_cells_agree(
    values: list[tuple[int, int, bytes | None, bytes | None, list[tuple[bytes, bytes | None]]]],
    max_bytes: int,
    mode: int,
    first: int,
) -> None:
    records = _records(values)
    pure_columns: list[list[str]] = [["x"] * first for _ in range(5)]
    fast_columns: list[list[str]] = [["x"] * first for _ in range(5)]
    expected = pure.cells(records, max_bytes, mode, first, pure_columns)
    assert fast.cells(records, max_bytes, mode, first, fast_columns) == expected
    assert fast_columns == pure_columns
    # A cell left blank is one the renderer draws itself; every other is printable text.
    blank = set(expected[0])
    for col, column in enumerate(pure_columns):
        for row, cell in enumerate(column[first:], first):
            if row << rows.COLUMN_BITS | col in blank:
                assert cell == ""
            else:
                assert cell.isprintable()


cell_text = st.one_of(st.text(max_size=12), st.text(st.characters(max_codepoint=0x7E), max_size=12))


@st.composite
def _tables(draw: st.DrawFn) -> tuple[list[list[str]], list[int], dict[int, str], list[tuple[int, str]]]:
    n_cols = draw(st.integers(1, 6))
    n_rows = draw(st.integers(0, 12))
    columns = [draw(st.lists(cell_text, min_size=n_rows, max_size=n_rows)) for _ in range(n_cols)]
    widths = draw(st.lists(st.integers(0, 15), min_size=n_cols, max_size=n_cols))
    drawn_rows = draw(st.sets(st.integers(0, max(n_rows - 1, 0)), max_size=n_rows)) if n_rows else set()
    drawn = {row: draw(st.text(max_size=10)) + "\n" for row in drawn_rows}
    at = sorted(draw(st.lists(st.integers(0, n_rows), max_size=5)))
    sections = [(row, draw(st.text(max_size=10)) + "\n") for row in at]
    return columns, widths, drawn, sections


@settings(max_examples=150, deadline=None)
@given(_tables())
def test_lines_agree(case: tuple[list[list[str]], list[int], dict[int, str], list[tuple[int, str]]]) -> None:
    columns, widths, drawn, sections = case
    assert fast.lines(columns, widths, drawn, sections) == pure.lines(columns, widths, drawn, sections)


def _message(
    offset: int, magic: int, compression: Compression, kind: TimestampType, n: int, valid: bool
) -> Batch:
    recs = tuple(new_record(offset + i, 0, b"k", b"v", (), -1, 10) for i in range(n))
    return Batch(
        "f.log", offset, offset, offset + max(n - 1, 0), magic, 0, compression, kind, 0, 0,
        -1, -1, -1, -1, 0, False, False, None, 1, valid, 50, n, recs if n >= 0 else None,
    )  # fmt: skip


message_shapes = st.tuples(
    st.sampled_from([0, 1, 2]),
    st.sampled_from([Compression.NONE, Compression.GZIP]),
    st.sampled_from([TimestampType.CREATE_TIME, TimestampType.LOG_APPEND_TIME]),
    st.sampled_from([1, 1, 1, 0, 2, -1]),  # records: one, none, two, not read (None)
    st.booleans(),
)


@settings(max_examples=100, deadline=None)
@given(st.lists(message_shapes, min_size=1, max_size=12), st.data())
def test_messages_agree(
    shapes: list[tuple[int, Compression, TimestampType, int, bool]], draw: st.DataObject
) -> None:
    batches = [_message(i, *shape) for i, shape in enumerate(shapes)]
    start = draw.draw(st.integers(0, len(batches) - 1))
    stop = draw.draw(st.integers(start, len(batches) + 2))
    expected = pure.messages(batches, start, stop)
    assert fast.messages(batches, start, stop) == expected
    assert start <= expected[2] <= max(start, min(stop, len(batches)))
    assert len(expected[0]) == expected[2] - start


def _render(
    paths: Sequence[Path], twin: ModuleType, monkeypatch: pytest.MonkeyPatch, **options: object
) -> bytes:
    """The whole table of ``paths`` by ``twin``, fed as the dump command feeds it (runs whole)."""
    for name in ("cells", "lines", "messages"):
        monkeypatch.setattr(rows, name, getattr(twin, name))
    renderer = TableRenderer(**options)  # type: ignore[arg-type]
    out: list[bytes] = []
    for event in iter_dump([str(p) for p in paths], RangeFilter()):
        if isinstance(event, BatchEvent):
            out += renderer.batch(event.batch, event.records)
        elif isinstance(event, BatchRun):
            out += renderer.run(event.batches)
        elif isinstance(event, Problem):
            out += renderer.problem(event)
        elif isinstance(event, FileStart):
            out += renderer.file_start(event.path, event.base_offset, event.snapshot)
        elif isinstance(event, FileEnd):
            out += renderer.file_end(event.path, event.trailing)
    return b"".join(out)


LAYOUTS = [(None, False, "iso"), (70, True, "both"), (120, False, "ms")]
# Every layout of every fixture and bad file; a decompression bomb (slow to refuse) in one layout.
CASES = [
    (path, *layout)
    for path in sorted(FIXTURES.glob("*.log")) + sorted((FIXTURES / "bad").glob("*.log"))
    for layout in (LAYOUTS[:1] if "bomb" in path.name else LAYOUTS)
]


@pytest.mark.parametrize(
    ("path", "width", "color", "time"), CASES, ids=[f"{c[0].relative_to(FIXTURES)}-{c[1]}" for c in CASES]
)
def test_whole_tables_agree(
    path: Path, width: int | None, color: bool, time: TimeMode, monkeypatch: pytest.MonkeyPatch
) -> None:
    options = {"width": width, "color": color, "time": time, "flush_rows": 7, "max_bytes": 16}
    try:
        expected = _render([path], pure, monkeypatch, **options)
    except Exception as exc:  # a file kdump refuses: both twins must refuse it alike
        with pytest.raises(type(exc)):
            _render([path], fast, monkeypatch, **options)
        return
    assert _render([path], fast, monkeypatch, **options) == expected


def test_a_run_and_its_messages_one_by_one_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run of plain messages, magic and timestamp type changing inside it: no row is lost."""
    shapes = [(0, TimestampType.NO_TIMESTAMP_TYPE), (0, TimestampType.NO_TIMESTAMP_TYPE),
              (1, TimestampType.CREATE_TIME), (1, TimestampType.LOG_APPEND_TIME), (1, TimestampType.CREATE_TIME)]  # fmt: skip
    batches = [_message(i, m, Compression.NONE, k, 1, i != 3) for i, (m, k) in enumerate(shapes)]
    for twin in (pure, fast):
        for name in ("cells", "lines", "messages"):
            monkeypatch.setattr(rows, name, getattr(twin, name))
        one = TableRenderer(flush_rows=2)
        by_one = [ln for b in batches for ln in one.batch(b, b.records)] + one.file_end("f.log", 0)
        whole = TableRenderer(flush_rows=2)
        by_run = whole.run(batches) + whole.file_end("f.log", 0)
        text = b"".join(by_run).decode()
        assert b"".join(by_one).decode() == text
        shown = [ln.split("│")[1].strip() for ln in text.splitlines() if ln.startswith("│")]
        assert shown == ["0", "1", "2", "3", "4"]
        assert text.count("messages, one per log entry") == 4
        assert "CRC INVALID" in text
