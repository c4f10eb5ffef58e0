"""``kdump stats --compare`` output: the table of exact sizes per encoding, and what a downgrade loses.

Every figure comes from ``analysis/compare.py``; bytes are exact, ratios rounded for display only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple, cast

from kafka_dump.analysis.compare import V1_NONE, Comparison, Loss
from kafka_dump.render.plain import Justify, percent, plain_table
from kafka_dump.render.stats import _int, _num, _per

if TYPE_CHECKING:
    from rich.console import RenderableType


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


class _Sections(NamedTuple):
    """What the compare output shows, as text: the sizes table, its notes, the downgrade table."""

    sizes: list[list[str]]
    current: int | None  # the row of the file's own encoding
    notes: list[str]
    losses: list[list[str]]


_SIZES_TITLE = "Size in every format (exact: the same records encoded again)"
_SIZES_HEADS = ("encoding", "bytes", "per record", "metadata/rec", "change vs now", "change vs V1 none")
_LOSSES_TITLE = "What a downgrade loses (the whole file)"
_LOSSES_COLUMNS: list[tuple[str, Justify]] = [
    ("the records have", "left"),
    ("count", "right"),
    ("lost in", "left"),
]


def _change(size: int, reference: int) -> str:
    """The size against a reference, signed as a change reads: ``-38.2%`` is smaller (a saving)."""
    return percent(size / reference - 1, signed=True) if reference else "-"


def _sections(c: Comparison, losses: list[Loss]) -> _Sections:
    n = c.records
    sizes = [["now (on disk)", _int(c.now_bytes), _num(_per(c.now_bytes, n)), "", "", ""]]
    rows = compare_rows(c)
    smallest = min((row["bytes"] for row in rows), default=None)
    reference = c.sizes.get(V1_NONE, 0)
    current = None
    own = None  # the file's own encoding, re-encoded: (its name, its bytes)
    for row in rows:
        name = f"V{row['magic']} {row['compression']}"
        if row["current"]:
            current, own = len(sizes), (name, row["bytes"])
        marks = (" ◀" if row["current"] else "") + (" ★" if row["bytes"] == smallest else "")
        sizes.append(
            [
                name + marks, _int(row["bytes"]), _num(row["bytesPerRecord"]), _num(row["metadataBytesPerRecord"]),
                _change(row["bytes"], c.now_bytes), _change(row["bytes"], reference),
            ]
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
        *([_own_note(*own, c.now_bytes)] if own is not None else []),
        *(["★ the smallest encoding."] if smallest is not None else []),
        "per record: bytes / data records; metadata/rec: the same less keys, values and (V2) headers,"
        " negative when compression shrinks the payload too; change: the size against now (on disk) or"
        " V1 none, negative when smaller.",
    ]
    lost = [[x.what, _int(x.count), "V0" if x.below == 1 else "V0 and V1"] for x in losses]
    return _Sections(sizes, current, notes, lost)


def compare_renderables(c: Comparison, losses: list[Loss]) -> list[RenderableType]:
    from rich.table import Table
    from rich.text import Text

    parts = _sections(c, losses)
    table = Table(title=_SIZES_TITLE, title_justify="left", title_style="kdump.header")
    for head in _SIZES_HEADS:
        table.add_column(head, justify="left" if head == "encoding" else "right", no_wrap=True)
    for i, row in enumerate(parts.sizes):
        table.add_row(*row, style="kdump.current" if i == parts.current else None)
    out: list[RenderableType] = [table, *(Text(line, style="kdump.note") for line in parts.notes)]
    if parts.losses:
        below = Table(title=_LOSSES_TITLE, title_justify="left", title_style="kdump.header")
        for head, justify in _LOSSES_COLUMNS:
            below.add_column(head, justify=justify, no_wrap=True)
        for row in parts.losses:
            below.add_row(*row)
        out.append(below)
    return out


def compare_text(c: Comparison, losses: list[Loss], width: int) -> str | None:
    """``compare_renderables`` as a console ``width`` wide prints them without colour, written
    without Rich (its layout is most of the time of many small files); None when Rich is needed."""
    parts = _sections(c, losses)
    if not all(len(line) <= width and line.isprintable() and line == line.strip() for line in parts.notes):
        return None  # Rich would wrap a note
    columns: list[tuple[str, Justify]] = [(h, "left" if h == "encoding" else "right") for h in _SIZES_HEADS]
    texts = [
        plain_table(_SIZES_TITLE, columns, parts.sizes, width, one_cell=_MARK),
        "".join(line + "\n" for line in parts.notes),
        plain_table(_LOSSES_TITLE, _LOSSES_COLUMNS, parts.losses, width) if parts.losses else "",
    ]
    return None if None in texts else "".join(cast("list[str]", texts))


_MARK = "◀★"  # one terminal cell each, as Rich counts them


def _own_note(name: str, size: int, now: int) -> str:
    """The file's own encoding, and why its row can differ from the bytes on disk."""
    if size == now:
        return "◀ the file's encoding."
    return (
        f"◀ the file's encoding, {name}: encoded again it takes {_int(size)} bytes against {_int(now)} on"
        f" disk ({_change(size, now)}): the same records in the same batches, compressed by kdump's"
        " codec library and level, not the producer's."
    )


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
