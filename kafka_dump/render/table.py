"""Readable tables: one Rich table per batch, built as the file is read. Builds, never prints."""

from __future__ import annotations

from datetime import datetime, timezone
from functools import lru_cache

from rich.table import Table
from rich.text import Text

from kafka_dump.internal import Decoded, RecordDecoder, record_decoder, resolve
from kafka_dump.internal.sidefiles import SideItem
from kafka_dump.model import Batch, Problem, Record
from kafka_dump.render.decoded import SideTable, kafka_json, part_text
from kafka_dump.render.payload import header_key, preview, printable


@lru_cache(maxsize=4096)
def _iso_second(second: int) -> str:
    """The date and time of an epoch second; cached, since neighbouring records share seconds."""
    try:
        dt = datetime.fromtimestamp(second, tz=timezone.utc)
    except (OverflowError, OSError, ValueError):
        return "?"
    return f"{dt.year:04d}-{dt.month:02d}-{dt.day:02d}T{dt.hour:02d}:{dt.minute:02d}:{dt.second:02d}"


def iso(ts: int) -> str:
    """``2024-01-31T12:00:00.123Z``; a negative timestamp (none) is shown as ``-``."""
    if ts < 0:
        return "-"
    second = _iso_second(ts // 1000)
    return "?" if second == "?" else f"{second}.{ts % 1000:03d}Z"


def iso_ms(ts: int) -> str:
    """``2024-01-31T12:00:00.123Z (1706702400123)``."""
    return f"{iso(ts)} ({ts})"


class TableRenderer:
    """Keys and values show as text when printable UTF-8, else hex, cut to ``max_bytes``.

    With ``decode`` (``--decode``), a record its file's decoder reads shows its decoded key and value
    instead (``OffsetCommitValue v3 offset=5 ...``), cut to 16 times ``max_bytes`` characters.
    """

    def __init__(self, *, max_bytes: int = 64, records: bool = True, decode: str = "none") -> None:
        self._max = max_bytes
        self._records = records
        self._header_shown = False
        self._side = SideTable()
        self._decode_choice = decode
        self._decode: RecordDecoder | None = None

    def file_start(
        self, path: str, base_offset: int | None, snapshot: tuple[int, int] | None
    ) -> list[object]:
        self._side.reset()
        if self._decode_choice != "none":
            self._decode = record_decoder(resolve(self._decode_choice, path))
        return [Text(f"Dumping {printable(path)}", style="bold")]

    def side(self, path: str, item: SideItem) -> list[object]:
        return list(self._side.rows(item))

    def batch(self, b: Batch, records: tuple[Record, ...] | None) -> list[object]:
        if not self._records or records is None:
            # One plain line per batch: Rich's per-renderable cost would dominate here.
            return [batch_title(b) + "\n"] if b.crcValid else [Text(batch_title(b), style="bold red")]
        table = Table(expand=False, show_lines=False)
        table.add_column("offset", justify="right", no_wrap=True)
        table.add_column("timestamp (UTC)", no_wrap=True)
        table.add_column("ms", justify="right", no_wrap=True)
        table.add_column("key", overflow="fold")
        table.add_column("value", overflow="fold")
        table.add_column("headers", overflow="fold")
        if b.magic >= 2:
            table.add_column("sequence", justify="right")
        else:
            table.add_column("crc", justify="right")
        if b.isControl:
            table.add_column("control")
        decode = self._decode
        for r in records:
            d = decode(b.isControl, r) if decode is not None else None
            key, value = (
                (preview(r.key, self._max), preview(r.value, self._max))
                if d is None or b.isControl
                else self._decoded_cells(d)
            )
            row = [
                str(r.offset),
                iso(r.timestamp),
                str(r.timestamp),
                key,
                value,
                ", ".join(f"{printable(header_key(h.key))}={preview(h.value, self._max)}" for h in r.headers),
                str(r.sequence) if b.magic >= 2 else f"{r.crc}{'' if r.crcValid else ' (invalid)'}",
            ]
            if b.isControl:
                c = r.control
                text = "?" if c is None else _control_text(c.type_name, c.version, c.coordinatorEpoch)
                if d is not None and d.value is not None and d.value.data is not None:
                    text += " " + self._cut(kafka_json(d.value.data))
                row.append(text)
            table.add_row(*map(Text, row))  # data is never markup
        return [Text(batch_title(b), style="" if b.crcValid else "bold red"), table]

    def _cut(self, text: str) -> str:
        limit = 16 * self._max
        return printable(text if len(text) <= limit else text[:limit] + "…")

    def _decoded_cells(self, d: Decoded) -> tuple[str, str]:
        key = "" if d.key is None and d.decoder == "metadata" else part_text(d.key)
        value = part_text(d.value, d.tombstone)
        if d.error is not None:
            value += f" ({d.error})"
        return self._cut(key), self._cut(value)

    def problem(self, p: Problem) -> list[object]:
        return [
            Text(
                f"PROBLEM at byte {p.position} ({p.length} bytes, {p.kind.label}): {printable(p.reason)}",
                style="bold red",
            )
        ]

    def file_end(self, path: str, trailing: int) -> list[object]:
        return []


def _control_text(name: str, version: int, epoch: int | None) -> str:
    return f"{name} v{version}" + ("" if epoch is None else f" coordinatorEpoch={epoch}")


def batch_title(b: Batch) -> str:
    """The batch header in one line: what an operator needs to place and judge the batch."""
    parts = [
        f"position {b.position}",
        f"offsets {b.baseOffset}..{b.lastOffset}",
        f"magic {b.magic}",
        b.compression.label,
        f"{b.timestampType.label} {iso_ms(b.maxTimestamp)}",
        f"size {b.sizeInBytes}",
        f"crc {b.crc} {'valid' if b.crcValid else 'INVALID'}",
    ]
    if b.recordCount is not None:
        parts.append(f"count {b.recordCount}")
    if b.magic >= 2:
        parts += [
            f"producer {b.producerId}/{b.producerEpoch}",
            f"seq {b.baseSequence}..{b.lastSequence}",
            f"leaderEpoch {b.partitionLeaderEpoch}",
        ]
        if b.isTransactional:
            parts.append("transactional")
        if b.isControl:
            parts.append("control")
        if b.deleteHorizonMs is not None:
            parts.append(f"deleteHorizon {iso_ms(b.deleteHorizonMs)}")
    return " · ".join(parts)
