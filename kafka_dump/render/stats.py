"""``kdump stats`` output: small tables and charts per file, or one JSON object per file.

Figures are exact integers in JSON, with thousands separators in tables; header keys are previews,
never markup. Without colour ``stats_text`` writes Rich's tables as text, without importing Rich.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from kafka_dump.analysis.histogram import SizeHistogram
from kafka_dump.analysis.stats import PERCENTILES, FormatStats, SegmentStats
from kafka_dump.render.clock import iso
from kafka_dump.render.payload import header_key, preview, printable
from kafka_dump.render.plain import Justify, decimal, number, percent, plain_table

if TYPE_CHECKING:
    from rich.console import RenderableType
    from rich.table import Table

TOP_HEADER_KEYS = 10


_SUMMARY = ("count", "min", *(f"p{p}" for p in PERCENTILES), "max", "total")


def _summary(h: SizeHistogram) -> tuple[int | None, ...]:
    return (h.count, h.min, *(h.percentile(p) for p in PERCENTILES), h.max, h.total)


def summary_json(h: SizeHistogram) -> dict[str, int | None]:
    return dict(zip(_SUMMARY, _summary(h), strict=True))


def _per(n: int, d: int) -> float | None:
    return round(n / d, 4) if d else None


def stats_json(s: SegmentStats, *, total: bool = False) -> dict[str, Any]:
    """Every figure of ``s`` as a JSON-ready dict (exact integers; ratios rounded to 4 places)."""
    n = s.records
    start, width, counts = s.times.series()
    overhead = _overhead(s)
    return {
        "type": "total" if total else "file",
        "file": s.path,
        "files": s.files,
        "bytes": s.file_bytes,
        "layout": {
            "batches": s.batches,
            "records": n,
            "dataRecords": s.data_records,
            "controlRecords": s.control_records,
            "firstOffset": s.first_offset,
            "lastOffset": s.last_offset,
            "offsetGaps": s.offset_gaps,
            "missingOffsets": s.missing_offsets,
            "diskBytes": s.disk_bytes,
            "uncompressedBytes": s.uncompressed_bytes,
            "formats": [
                {
                    "magic": magic,
                    "compression": codec.label,
                    "batches": f.batches,
                    "records": f.records,
                    "diskBytes": f.disk_bytes,
                    "uncompressedBytes": f.uncompressed_bytes,
                    "compressionRatio": round(f.compression_ratio, 4),
                }
                for (magic, codec), f in sorted(s.by_format.items())
            ],
        },
        "batches": {
            "recordsPerBatch": summary_json(s.records_per_batch),
            "bytesPerBatch": summary_json(s.bytes_per_batch),
            "transactional": s.transactional_batches,
            "idempotent": s.idempotent_batches,
            "control": s.control_batches,
            "distinctProducerIds": s.distinct_producers,
            "distinctProducerIdsExact": s.producer_ids.complete,
            "timestampTypes": dict(sorted(s.timestamp_types.items())),
            "firstTimestamp": s.first_timestamp,
            "lastTimestamp": s.last_timestamp,
        },
        "records": {
            "recordSize": summary_json(s.record_sizes),
            "keySize": summary_json(s.key_sizes),
            "valueSize": summary_json(s.value_sizes),
            "headerSize": summary_json(s.header_sizes),
            "headersPerRecord": summary_json(s.header_counts),
            "nullKeys": s.null_keys,
            "tombstones": s.tombstones,
            "headerKeys": [
                {"key": header_key(k), "count": c} for k, c in s.header_keys.most_common(TOP_HEADER_KEYS)
            ],
            "headerKeysExact": s.header_keys.complete,
        },
        "overhead": overhead,
        "charts": {
            "recordSizes": [{"low": lo, "high": hi, "count": c} for lo, hi, c in s.record_sizes.bands()],
            "recordsPerTime": {"start": start, "bucketMs": width, "counts": counts},
        },
        "problems": {"corrupt": s.corrupt, "corruptBytes": s.corrupt_bytes, "tailBytes": s.tail_bytes},
    }


def _overhead(s: SegmentStats) -> dict[str, Any]:
    """Bytes per record on disk = payload + metadata - what compression took away (all exact sums)."""
    n = s.records
    disk, unpacked, payload = s.disk_bytes, s.uncompressed_bytes, s.payload_bytes
    return {
        "diskBytes": disk,
        "payloadBytes": payload,
        "metadataBytes": unpacked - payload,
        "compressedAwayBytes": unpacked - disk,
        "diskBytesPerRecord": _per(disk, n),
        "payloadBytesPerRecord": _per(payload, n),
        "metadataBytesPerRecord": _per(unpacked - payload, n),
        "compressedAwayBytesPerRecord": _per(unpacked - disk, n),
        "payloadShare": _per(payload, unpacked),
        "metadataShare": _per(unpacked - payload, unpacked),
    }


def _int(v: int | None) -> str:
    return "-" if v is None else number(v)


def _raw(v: int | None) -> str:
    """An offset: raw, as ``--from-offset`` takes it."""
    return "-" if v is None else str(v)


def _num(v: float | None, places: int = 2) -> str:
    return "-" if v is None else decimal(v, places)


def _pct(v: float | None) -> str:
    return "-" if v is None else percent(v)


def _when(ts: int | None) -> str:
    return "-" if ts is None else f"{iso(ts)} ({ts})"


class _Table(NamedTuple):
    """One table of a file's section: what ``_rich_table`` and ``plain_table`` both draw."""

    title: str
    columns: list[tuple[str, Justify]]  # header, justify
    rows: list[list[str]]
    header: bool = True  # False: label-value pairs, no header line
    label: bool = True  # the first column holds labels (styled as such)


def _pairs(title: str, rows: list[tuple[str, str]]) -> _Table:
    return _Table(
        title, [("", "left"), ("", "right")], [[label, value] for label, value in rows], header=False
    )


def _sizes_table(title: str, rows: list[tuple[str, SizeHistogram]]) -> _Table:
    cells = [[label, *map(_int, _summary(h))] for label, h in rows]
    return _Table(title, [("", "left"), *((head, "right") for head in _SUMMARY)], cells)


def _format_row(magic: int, codec: str, f: FormatStats) -> list[str]:
    figures = (f.batches, f.records, f.disk_bytes, f.uncompressed_bytes)
    return [str(magic), codec, *(_int(n) for n in figures), f"{f.compression_ratio:.2f}"]


def _sections(s: SegmentStats, total: bool) -> tuple[str, list[_Table]]:
    """The section's title line and its tables, as text."""
    if total:
        title = f"Total: {s.files:,} files"
    elif s.files > 1:  # a directory's segments, summed
        title = f"Measuring {printable(os.path.join(s.path, ''))} ({s.files:,} files)"
    else:
        title = f"Measuring {printable(s.path)}"
    layout = _pairs(
        "Layout",
        [
            ("file bytes", _int(s.file_bytes)),
            ("batches", _int(s.batches)),
            ("records", _int(s.records)),
            ("data records", _int(s.data_records)),
            ("control records", _int(s.control_records)),
            ("first offset", _raw(s.first_offset)),
            ("last offset", _raw(s.last_offset)),
            ("offset gaps", f"{s.offset_gaps:,} ({s.missing_offsets:,} offsets missing)"),
            ("corrupt (skipped)", f"{s.corrupt:,} ({s.corrupt_bytes:,} bytes)"),
            ("tail bytes", _int(s.tail_bytes)),
        ],
    )
    heads = ("magic", "codec", "batches", "records", "bytes on disk", "uncompressed", "ratio")
    formats = _Table(
        "By format",
        [(head, "left" if head == "codec" else "right") for head in heads],
        [_format_row(magic, codec.label, f) for (magic, codec), f in sorted(s.by_format.items())],
        label=False,
    )
    batch_sizes = _sizes_table(
        "Batches", [("records per batch", s.records_per_batch), ("bytes per batch", s.bytes_per_batch)]
    )
    types = ", ".join(f"{k} {v:,}" for k, v in sorted(s.timestamp_types.items())) or "-"
    producers = f"{s.distinct_producers:,}" + ("" if s.producer_ids.complete else "+")
    batches = _pairs(
        "Producers and time",
        [
            ("transactional batches", _int(s.transactional_batches)),
            ("idempotent batches", _int(s.idempotent_batches)),
            ("control batches", _int(s.control_batches)),
            ("distinct producer ids", producers),
            ("timestamp types", types),
            ("first timestamp", _when(s.first_timestamp)),
            ("last timestamp", _when(s.last_timestamp)),
        ],
    )
    records = _sizes_table(
        "Records (bytes)",
        [
            ("record size", s.record_sizes),
            ("key size", s.key_sizes),
            ("value size", s.value_sizes),
            ("header bytes", s.header_sizes),
            ("headers per record", s.header_counts),
        ],
    )
    nulls = _pairs(
        "Nulls and header keys",
        [("null keys", _int(s.null_keys)), ("tombstones (null values)", _int(s.tombstones))]
        + [(f"header {preview(k, 40)}", _int(c)) for k, c in s.header_keys.most_common(TOP_HEADER_KEYS)],
    )
    o = _overhead(s)
    overhead = _pairs(
        "Overhead per record",
        [
            ("on disk", _num(o["diskBytesPerRecord"])),
            ("payload (keys, values, headers)", f"{_num(o['payloadBytesPerRecord'])}  {_pct(o['payloadShare'])}"),
            ("metadata (everything else)", f"{_num(o['metadataBytesPerRecord'])}  {_pct(o['metadataShare'])}"),
            ("taken away by compression", _num(o["compressedAwayBytesPerRecord"])),
        ],
    )  # fmt: skip
    return title, [layout, formats, batch_sizes, batches, records, nulls, overhead]


def _rich_table(spec: _Table) -> Table:
    from rich.table import Table
    from rich.text import Text

    table = Table(title=spec.title, title_justify="left", title_style="kdump.header", show_header=spec.header)
    for i, (head, justify) in enumerate(spec.columns):
        style = "kdump.label" if i == 0 and spec.label else None
        table.add_column(head, justify=justify, style=style, no_wrap=True)
    for row in spec.rows:
        table.add_row(*(Text(cell) for cell in row))  # cells from the file (header keys): never markup
    return table


def stats_renderables(s: SegmentStats, *, total: bool = False, charts: bool = True) -> list[RenderableType]:
    """The tables (and charts) of one file's section, or of the total."""
    from rich.text import Text

    title, tables = _sections(s, total)
    out: list[RenderableType] = [Text(title, style="kdump.file"), *(_rich_table(t) for t in tables)]
    if charts:
        out.extend(charts_renderables(s))
    return out


def stats_text(s: SegmentStats, width: int, *, total: bool = False, charts: bool = True) -> str | None:
    """``stats_renderables`` as a console ``width`` wide prints them without colour, written without
    Rich (its import and layout are most of a short run); None when Rich is needed."""
    title, tables = _sections(s, total)
    if not _fits(title, width):
        return None
    parts = [
        title + "\n",
        *(plain_table(t.title, t.columns, t.rows, width, show_header=t.header) for t in tables),
    ]
    if charts:
        parts.append(_charts_text(s, width))
    return None if None in parts else "".join(cast("list[str]", parts))


def _fits(line: str, width: int) -> bool:
    """A line Rich prints as it is: one cell a character (block elements included), within ``width``."""
    return len(line) <= width and line == line.strip() and _NOT_ONE_CELL.search(line) is None


_NOT_ONE_CELL = re.compile("[^\x20-\x7e\u2580-\u259f]")  # printable ASCII and block elements are one cell


def _bands(s: SegmentStats) -> list[tuple[str, int]]:
    return [(f"{lo:,}-{hi:,}" if hi > lo else f"{lo:,}", c) for lo, hi, c in s.record_sizes.bands()]


_SIZES_TITLE = "Record sizes"
_SIZES_HEADS = ("bytes", "records")  # the units of the labels and of the counts


def _timeline(s: SegmentStats) -> tuple[str, str, str] | None:
    """The records-over-time chart: its title (the unit of a bar: records in one bucket of time, and
    the tallest), the sparkline, and its time axis (the first and last bucket's times under its
    ends); None without timestamps."""
    from kafka_dump.render.charts import sparkline

    start, width, counts = s.times.series()
    if not counts:
        return None
    end = start + width * len(counts) - 1
    title = f"Records over time (records per {_duration(width)}, █ = {max(counts):,})"
    first, last = iso(start), iso(end)
    room = len(counts) - len(first) - len(last)
    axis = f"{first}{' ' * room}{last}" if room >= 2 else f"{first} .. {last}"
    return title, sparkline(counts), axis


def charts_renderables(s: SegmentStats) -> list[RenderableType]:
    from rich.console import Group
    from rich.text import Text

    from kafka_dump.render.charts import bar_histogram

    out: list[RenderableType] = []
    bands = _bands(s)
    if bands:
        out.append(bar_histogram(bands, title=_SIZES_TITLE, heads=_SIZES_HEADS))
    timeline = _timeline(s)
    if timeline is not None:
        title, line, axis = timeline
        out.append(
            Group(
                Text(title, style="kdump.header"),
                Text(line, style="kdump.chart"),
                Text(axis, style="kdump.label"),
            )
        )
    return out


def _charts_text(s: SegmentStats, width: int) -> str | None:
    """``charts_renderables`` without colour: the bar histogram (Rich's borderless table, two spaces
    between its columns, the bars at least 40 cells) and the sparkline's three lines."""
    from kafka_dump.render.charts import BAR_WIDTH, axis, bar

    lines: list[str] = []
    bands = _bands(s)
    if bands:
        top = max(n for _, n in bands)
        rows = [
            (_SIZES_HEADS[0], "", _SIZES_HEADS[1]),
            *((label, bar(n / top if top else 0.0, BAR_WIDTH), f"{n:,}") for label, n in bands),
            ("", axis(top), ""),
        ]
        widths = [max(len(row[i]) for row in rows) for i in range(3)]
        widths[1] = max(widths[1], BAR_WIDTH)
        total = sum(widths) + 4
        if total > width or not all(_fits(cell, width) for row in rows for cell in row if cell):
            return None
        lines.append(_SIZES_TITLE)
        lines.extend(f"{a.rjust(widths[0])}  {b.ljust(widths[1])}  {c.rjust(widths[2])}" for a, b, c in rows)
    timeline = _timeline(s)
    if timeline is not None:
        if not all(_fits(line, width) for line in timeline):
            return None
        lines += timeline
    return "".join(line.rstrip(" ") + "\n" for line in lines)


def _duration(ms: int) -> str:
    for unit, size in (("d", 86_400_000), ("h", 3_600_000), ("min", 60_000), ("s", 1000)):
        if ms >= size:
            return f"{ms / size:,.3g} {unit}"
    return f"{ms} ms"
