"""The table renderer on arbitrary data: every row is one line of the table's width, and no byte of a
key, value or header reaches the output as a control character (Hypothesis)."""

from __future__ import annotations

import re

from hypothesis import example, given, settings
from hypothesis import strategies as st
from rich.cells import cell_len

from kafka_dump.model import Batch, Compression, Record, TimestampType, new_header, new_record
from kafka_dump.render.table import TableRenderer, data_cell

SGR = re.compile(r"\x1b\[[0-9;]*m")
data = st.one_of(
    st.none(),
    st.binary(max_size=80),
    st.text(max_size=40).map(lambda s: s.encode("utf-8", "surrogatepass")),
    st.sampled_from([b"[/]", b"[bold]x", b"\x1b[2J", "\u202e\u200b日本".encode(), b"\r\t\n", b"0x00"]),
)
records = st.lists(
    st.tuples(data, data, st.lists(st.tuples(st.binary(max_size=12), data), max_size=3)),
    min_size=0,
    max_size=40,
)


def _batch(recs: list[Record], magic: int, compression: Compression, position: int) -> Batch:
    first = recs[0].offset if recs else position
    last = recs[-1].offset if recs else position
    return Batch(
        "f.log", position, first, last, magic, 0, compression, TimestampType.CREATE_TIME, 0, 0,
        -1, -1, -1, -1, 0, False, False, None, 1, True, 100, len(recs), tuple(recs),
    )  # fmt: skip


def _records(
    raw: list[tuple[bytes | None, bytes | None, list[tuple[bytes, bytes | None]]]], base: int
) -> list[Record]:
    return [
        new_record(base + i, 1_700_000_000_000 + i, k, v, tuple(new_header(hk, hv) for hk, hv in hs), -1, 10)
        for i, (k, v, hs) in enumerate(raw)
    ]


@settings(max_examples=150, deadline=None)
@given(batches=st.lists(records, min_size=1, max_size=5), width=st.sampled_from([None, 70, 120]),
       color=st.booleans(), max_bytes=st.sampled_from([1, 8, 64]), legacy=st.booleans())  # fmt: skip
@example(
    batches=[[(None, None, [(b"\x00\xe3\x80\x81\x00", None), (b"\xde\xa6", None)])]],
    width=70,
    color=False,
    max_bytes=1,
    legacy=False,
)  # a wide character in a cut header cell
def test_rows_are_well_formed(
    batches: list[list[tuple[bytes | None, bytes | None, list[tuple[bytes, bytes | None]]]]],
    width: int | None,
    color: bool,
    max_bytes: int,
    legacy: bool,
) -> None:
    renderer = TableRenderer(max_bytes=max_bytes, width=width, color=color, flush_rows=16)
    lines = list(renderer.file_start("f.log", 0, None))
    base = 0
    for raw in batches:
        recs = _records(raw, base)
        base += len(recs) + 1
        if legacy:  # plain v1 messages, one per log entry, as a run
            for r in recs:
                lines += renderer.batch(_batch([r], 1, Compression.NONE, r.offset), (r,))
        else:
            lines += renderer.batch(_batch(recs, 2, Compression.LZ4, base), tuple(recs))
    lines += renderer.file_end("f.log", 0)
    text = b"".join(lines).decode()
    assert text.endswith("\n") and all(chunk.endswith(b"\n") for chunk in lines)
    shown = text.splitlines()
    plain = [SGR.sub("", ln) for ln in shown]
    assert not any(
        re.search(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]", ln) for ln in plain
    )
    tables: list[list[str]] = []
    for ln in plain:
        if ln.startswith("┏"):
            tables.append([])
        if ln[:1] in "┏┃┡│├└":
            tables[-1].append(ln)
    assert all(t[-1].startswith("└") for t in tables)
    assert bool(tables) == (any(batches) or not legacy)  # a v2 batch shows even without records
    assert len(tables) == 1 or not any(batches)  # one table per file
    for t in tables:
        # Every line is as wide as the frame; where widths change, a rule joins the bars above and below.
        parts: list[list[str]] = [[]]
        for ln in t:
            if (ln.startswith("├") and "┼" in ln) or (ln.startswith("├") and ln.endswith(("┐", "┘"))):
                assert cell_len(ln) == max(cell_len(parts[-1][-1]), cell_len(ln)), ln
                parts.append([])
                continue
            parts[-1].append(ln)
        for part in parts:
            assert len({cell_len(ln) for ln in part}) == 1, t
            if width is not None:
                assert cell_len(part[0]) <= width
    rows = [ln for ln in plain if ln.startswith("│")]
    assert len(rows) >= sum(len(b) for b in batches)


@given(st.binary(max_size=100), st.sampled_from([1, 3, 8, 64]))
def test_data_cell_is_printable_and_measured(value: bytes, max_bytes: int) -> None:
    text, width, style = data_cell(value, max_bytes)
    assert text.isprintable()
    assert width == cell_len(text)
    assert style in ("", "kdump.hex")
    if style == "kdump.hex":
        assert text.startswith("0x") and bytes.fromhex(text[2:].rstrip("…")) == value[:max_bytes]


def test_times_outside_iso_years_and_missing_ones() -> None:
    recs = [new_record(i, ts, b"k", b"v", (), -1, 10) for i, ts in enumerate([2**62, -1, 0])]
    chunks = TableRenderer(flush_rows=1).batch(_batch(recs, 2, Compression.NONE, 0), tuple(recs))
    rows = [ln for ln in b"".join(chunks).decode().splitlines() if ln.startswith("│")]
    assert [ln.split("│")[2].strip() for ln in rows] == ["?", "-", "1970-01-01T00:00:00.000Z"]
