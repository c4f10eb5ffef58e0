"""``kdump stats --compare`` output: the table of exact sizes per encoding, and what a downgrade loses.

Every figure comes from ``analysis/compare.py``; bytes are exact, ratios rounded for display only.
"""

from __future__ import annotations

from typing import Any

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from kafka_dump.analysis.compare import V1_NONE, Comparison, Loss
from kafka_dump.render.plain import percent
from kafka_dump.render.stats import _int, _num, _pct, _per


def _saving(row: int, reference: int) -> float | None:
    return round(1 - row / reference, 4) if reference else None


def compare_rows(c: Comparison) -> list[dict[str, Any]]:
    """One dict per encoding compared: exact bytes, per-record figures and savings."""
    n = c.records
    reference = c.sizes.get(V1_NONE, 0)
    current = c.current_encoding
    return [
        {
            "magic": magic,
            "compression": codec.label,
            "bytes": size,
            "bytesPerRecord": _per(size, n),
            "metadataBytesPerRecord": _per(size - c.payload_of(magic), n),
            "savingVsNow": _saving(size, c.now_bytes),
            "savingVsV1None": _saving(size, reference),
            "current": (magic, codec) == current,
        }
        for (magic, codec), size in c.sizes.items()
    ]


def compare_json(c: Comparison, losses: list[Loss]) -> dict[str, Any]:
    o = c.options
    return {
        "batchRecords": o.batch_records,
        "batchBytes": o.max_bytes,
        "level": o.level,
        "sample": o.sample,
        "batches": c.groups,
        "batchesCompared": c.compared,
        "records": c.records,
        "payloadBytes": c.payload,
        "headerBytes": c.header_payload,
        "nowBytes": c.now_bytes,
        "nowBytesPerRecord": _per(c.now_bytes, c.records),
        "current": [
            {"magic": m, "compression": codec.label, "bytes": b}
            for (m, codec), b in sorted(c.current.items())
        ],
        "encodings": compare_rows(c),
        "downgradeLosses": [{"what": x.what, "count": x.count, "lostBelowMagic": x.below} for x in losses],
    }


def compare_renderables(c: Comparison, losses: list[Loss]) -> list[RenderableType]:
    n = c.records
    title = "Size in every format (exact: the same records encoded again)"
    table = Table(title=title, title_justify="left", title_style="kdump.header")
    for head in ("encoding", "bytes", "per record", "metadata/rec", "vs now", "vs V1 none"):
        table.add_column(head, justify="left" if head == "encoding" else "right", no_wrap=True)
    table.add_row("now (on disk)", _int(c.now_bytes), _num(_per(c.now_bytes, n)), "", "", "")
    for row in compare_rows(c):
        current = row["current"]
        table.add_row(
            f"V{row['magic']} {row['compression']}{' ◀' if current else ''}", _int(row["bytes"]),
            _num(row["bytesPerRecord"]), _num(row["metadataBytesPerRecord"]), _pct(row["savingVsNow"]),
            _pct(row["savingVsV1None"]), style="kdump.current" if current else None,
        )  # fmt: skip
    notes = [
        f"{c.records:,} data records in {c.compared:,} of {c.groups:,} batches"
        + (f" (--sample {c.options.sample}: batches spread over the file)" if c.compared < c.groups else "")
        + f"; plain v0/v1 messages grouped by {_grouping(c)}.",
        *([f"The file mixes encodings: {_mix(c)}."] if len(c.current) > 1 else []),
        *(
            [f"Level {c.options.level} for {', '.join(x.label for x in c.options.leveled)}."]
            if c.options.level is not None
            else []
        ),
        *(["◀ the file's encoding."] if c.current_encoding is not None else []),
        "per record: bytes / data records; metadata/rec: the same less keys, values and (V2) headers,"
        " negative when compression shrinks the payload too; vs: the saving (negative: larger).",
    ]
    out: list[RenderableType] = [table, *(Text(line, style="kdump.note") for line in notes)]
    if losses:
        below = Table(
            title="What a downgrade loses (the whole file)", title_justify="left", title_style="kdump.header"
        )
        below.add_column("the records have", no_wrap=True)
        below.add_column("count", justify="right", no_wrap=True)
        below.add_column("lost in", no_wrap=True)
        for x in losses:
            below.add_row(x.what, _int(x.count), "V0" if x.below == 1 else "V0 and V1")
        out.append(below)
    return out


def _grouping(c: Comparison) -> str:
    o = c.options
    parts = []
    if o.batch_records is not None:
        parts.append(f"{o.batch_records:,} records")
    if o.max_bytes is not None:
        parts.append(f"{o.max_bytes:,} bytes (as V2)")
    return " or ".join(parts)


def _mix(c: Comparison) -> str:
    total = c.now_bytes or 1
    return ", ".join(
        f"V{m} {codec.label} {percent(b / total)}" for (m, codec), b in sorted(c.current.items())
    )
