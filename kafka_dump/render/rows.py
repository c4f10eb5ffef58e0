"""The bulk table's hot loops, in two twins: the cells of plain records, and the lines of a table's rows.

``render/table.py`` buffers rows by column; ``cells`` appends the printable ASCII cells (width =
length) and lists those it leaves blank for ``table.py`` to draw, ``lines`` writes rows at known
widths with ``table.py``'s own lines in their places. Compiled twins: ``native/rows.c``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal, cast

from kafka_dump.model import Batch, Record
from kafka_dump.native import bind, native
from kafka_dump.render.clock import iso_second

TimeMode = Literal["iso", "ms", "both"]  # --time (here, not in table.py: `dump`'s options need no Rich)
TIME_MODES: tuple[TimeMode, ...] = ("iso", "ms", "both")
TIME_ISO, TIME_MS, TIME_BOTH = 0, 1, 2  # --time iso|ms|both, as the twins number it
COLUMN_BITS = 3  # a cell left blank is listed as row << COLUMN_BITS | column
YEAR_10000 = 253_402_300_800_000  # epoch ms: ISO times end at 9999-12-31
_MILLIS = [f".{ms:03d}Z" for ms in range(1000)]
_OFFSET, _TIME, _KEY, _VALUE, _HEADERS = range(5)
_BAR = "\u2502"  # rich.box.HEAVY_HEAD's mid_vertical: the bar between the cells of a row


def _plain(data: bytes | None, max_bytes: int) -> str | None:
    """A key or value whose cell is printable ASCII (cut at ``max_bytes`` with ``…``), else None."""
    if data is None:
        return None
    cut = data[:max_bytes]
    if not (cut.isascii() and cut.decode("ascii").isprintable()):
        return None
    return cut.decode("ascii") + ("…" if len(data) > max_bytes else "")


def _plain_headers(record: Record, max_bytes: int) -> str | None:
    """``k=v, k=null`` when every header key and value is printable ASCII and no value is cut."""
    parts = []
    for h in record.headers:
        key, value = h.key, h.value
        if not key.isascii() or (value is not None and (not value.isascii() or len(value) > max_bytes)):
            return None
        k, v = key.decode("ascii"), "null" if value is None else value.decode("ascii")
        if not (k.isprintable() and v.isprintable()):
            return None
        parts.append(f"{k}={v}")
    return ", ".join(parts)


def _time(ts: int, mode: int) -> str | None:
    if ts < 0:
        return "-"
    if mode == TIME_MS:
        return str(ts)
    if ts >= YEAR_10000:
        return None
    shown = iso_second(ts // 1000) + _MILLIS[ts % 1000]
    return shown if mode == TIME_ISO else f"{shown} ({ts})"


def cells(
    records: Sequence[Record], max_bytes: int, time_mode: int, first: int, columns: Sequence[list[str]], /
) -> tuple[list[int], list[int]]:
    """Append a row of cells per record to ``columns`` (offset, time, key, value, headers), a column
    at a time; a cell not printable ASCII as ``""``, listed as ``row << COLUMN_BITS | column`` (rows
    from ``first``). Returns that list and the longest cell appended to each column."""
    offsets, times, keys, values, headers = columns[:5]
    blank: list[int] = []
    shown_offsets = [str(r.offset) for r in records]
    offsets.extend(shown_offsets)
    stamps = [r.timestamp for r in records]
    if time_mode == TIME_ISO and stamps and min(stamps) >= 0 and max(stamps) < YEAR_10000:
        seconds = _SECONDS
        if len(seconds) > 4096:
            seconds.clear()
        times.extend([seconds[t // 1000] + _MILLIS[t % 1000] for t in stamps])
        time_width = 24  # 2023-11-14T22:13:20.000Z
    else:
        texts = [_time(t, time_mode) for t in stamps]
        blank += [row << COLUMN_BITS | _TIME for row, t in enumerate(texts, first) if t is None]
        shown = [t or "" for t in texts]
        times.extend(shown)
        time_width = max(map(len, shown), default=0)
    start = len(keys)
    _data_column(_KEY, keys, [r.key for r in records], max_bytes, first, blank)
    _data_column(_VALUE, values, [r.value for r in records], max_bytes, first, blank)
    offset_width = max(map(len, shown_offsets), default=0)
    key_width = max(map(len, keys[start:]), default=0)
    value_width = max(map(len, values[start:]), default=0)
    headers_width = 0
    if any(r.headers for r in records):
        for row, r in enumerate(records, first):
            cell = _plain_headers(r, max_bytes) if r.headers else ""
            if cell is None:
                cell = ""
                blank.append(row << COLUMN_BITS | _HEADERS)
            elif len(cell) > headers_width:
                headers_width = len(cell)
            headers.append(cell)
    else:
        headers.extend([""] * len(records))
    blank.sort()
    return blank, [offset_width, time_width, key_width, value_width, headers_width]


class _Seconds(dict[int, str]):
    """Epoch second -> ``2024-01-31T12:00:00``, filled on first use (neighbouring records share seconds)."""

    def __missing__(self, second: int) -> str:
        text = self[second] = iso_second(second)
        return text


_SECONDS = _Seconds()


def _data_column(
    col: int, column: list[str], datas: list[bytes | None], max_bytes: int, first: int, blank: list[int]
) -> None:
    """Keys or values: all printable ASCII in one go when they are (the usual case), else one by one."""
    if None not in datas:
        present = cast("list[bytes]", datas)
        longest = max(map(len, present), default=0)
        shortest = min(map(len, present), default=0)
        if longest <= max_bytes or shortest > max_bytes:
            cut = longest > max_bytes
            joined = b"\n".join([d[:max_bytes] for d in present] if cut else present)
            if joined.isascii():
                text = joined.decode("ascii")
                if text.count("\n") == len(datas) - 1 and text.replace("\n", "").isprintable():
                    parts = text.split("\n")
                    column.extend([t + "…" for t in parts] if cut else parts)
                    return
    for row, data in enumerate(datas, first):
        cell = _plain(data, max_bytes)
        if cell is None:
            cell = ""
            blank.append(row << COLUMN_BITS | col)
        column.append(cell)


def lines(
    columns: Sequence[Sequence[str]],
    widths: Sequence[int],
    drawn: Mapping[int, str],
    sections: Sequence[tuple[int, str]],
    /,
) -> bytes:
    """The rows of ``columns`` as UTF-8 (the first right-aligned, the others left, padded by length,
    ``│`` between), ``drawn``'s lines in their rows' places and each of ``sections`` (row, text)
    before its row, in order (a row past the last one: after all rows)."""
    bar = _BAR
    sep = f" {bar} "
    specs = [f"%{w}s" if i == 0 else f"%-{w}s" for i, w in enumerate(widths)]
    out = list(map(f"{bar} {sep.join(specs)} {bar}\n".__mod__, zip(*columns, strict=True)))
    for row, line in drawn.items():
        out[row] = line
    if sections:
        parts: list[str] = []
        done = 0
        for row, text in sections:
            parts.extend(out[done:row])
            parts.append(text)
            done = max(done, row)
        parts.extend(out[done:])
        out = parts
    return "".join(out).encode()


def messages(batches: Sequence[Batch], start: int, stop: int, /) -> tuple[list[Record], list[int], int]:
    """The records of plain v0/v1 messages (uncompressed, one record each) from ``batches[start]``
    on, while they are of its magic, compression and timestamp type, up to ``stop``: the records,
    which of them (counted from 0) have an invalid CRC, and where it stopped."""
    first = batches[start]
    magic, compression, kind = first.magic, first.compression, first.timestampType
    records: list[Record] = []
    invalid: list[int] = []
    for i in range(start, min(stop, len(batches))):
        b = batches[i]
        got = b.records
        if b.magic != magic or b.compression is not compression or b.timestampType is not kind:
            break
        if got is None or len(got) != 1:
            break
        if not b.crcValid:
            invalid.append(i - start)
        records.append(got[0])
    return records, invalid, start + len(records)


cells = bind(cells)(native.cells if native else None)
lines = bind(lines)(native.lines if native else None)
messages = bind(messages)(native.messages if native else None)
