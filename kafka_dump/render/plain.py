"""What a renderer can write without Rich: numbers in the one house style, and a small table in Rich's shape.

How every human format writes a number (JSON and Kafka's lines write them raw):

* a count (records, batches, files, an amount of bytes) with thousands separators: ``number``,
  ``plural`` (``1,234 records``); a mean or a ratio the same way, with two decimals: ``decimal``;
* an offset, a byte position, an id, an epoch, a CRC or a timestamp raw, as Kafka and the JSON write
  it, so that it can be copied into ``--from-offset``, ``dd skip=`` or ``grep``: ``offsets 1200..1299``,
  ``byte 1048576``; a problem's reason (the same text in JSON) writes its numbers raw too;
* a share or a change as a percent with one decimal: ``percent`` (``12.3%``; signed ``-38.2%``);
* a size where exactness does not matter (a progress bar) in binary units: ``binary_size``
  (``1.5 MiB``); where it does (tables, problems), the exact count of bytes.

Importing Rich is a large part of a short ``verify-crc`` run: ``plain_table`` writes the colourless
table Rich would, or None when Rich would do more (wrap, cut, measure a cell) and must be used.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Literal

Justify = Literal["left", "right"]

# box.HEAVY_HEAD, Rich's default for Table: heavy lines around the header, light ones below it.
_TOP = ("┏", "━", "┳", "┓")
_HEAD = ("┃", "┃", "┃")
_HEAD_BELOW = ("┡", "━", "╇", "┩")
_ROW = ("│", "│", "│")
_BOTTOM = ("└", "─", "┴", "┘")
# box.SQUARE: what Rich draws HEAVY_HEAD as for a table without a header.
_SQUARE_TOP = ("┌", "─", "┬", "┐")


def number(n: int) -> str:
    """``1234567`` -> ``1,234,567``: thousands separators for tables and summaries (never for JSON)."""
    return f"{n:,}"


def decimal(v: float, places: int = 2) -> str:
    """``6078.031`` -> ``6,078.03``: a mean or a ratio, in the style of ``number``."""
    return f"{v:,.{places}f}"


def percent(fraction: float, *, signed: bool = False) -> str:
    """``0.1234`` -> ``12.3%``; ``signed``: ``+12.3%``, ``-38.2%`` (a change; zero is ``0.0%``)."""
    text = f"{fraction * 100:.1f}%"
    if text in ("-0.0%", "0.0%"):
        return "0.0%"
    return f"+{text}" if signed and fraction > 0 else text


_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")


def binary_size(n: float) -> str:
    """``n`` bytes in binary units, for a glance: ``512 B``, ``12.3 MiB``."""
    unit = 0
    while n >= 1024 and unit < len(_UNITS) - 1:
        n /= 1024
        unit += 1
    return f"{n:.0f} {_UNITS[unit]}" if unit == 0 else f"{n:.1f} {_UNITS[unit]}"


def plural(n: int, word: str) -> str:
    """``1 batch``, ``3 batches``, ``1,000 records``: a count with its noun, for summaries."""
    if n == 1:
        return f"1 {word}"
    return f"{number(n)} {word}es" if word.endswith(("s", "x", "ch", "sh")) else f"{number(n)} {word}s"


def _one_cell_each(texts: list[str], also: str = "") -> bool:
    """Each text printable ASCII (or a character of ``also``) with no space at either end: one
    terminal cell a character, never re-spaced by Rich. Checked on the texts joined, not one by one."""
    joined = "\n".join(texts)
    chars = joined.replace("\n", "")
    if also:
        chars = chars.translate({ord(c): "x" for c in also})
    return (
        joined.count("\n") == len(texts) - 1  # no text holds a line break of its own
        and chars.isascii()
        and chars.isprintable()  # no whitespace but the space: it alone could be stripped
        and not joined.startswith(" ")
        and not joined.endswith(" ")
        and " \n" not in joined
        and "\n " not in joined
    )


def plain_table(
    title: str,
    columns: Sequence[tuple[str, Justify]],
    rows: Sequence[Sequence[str]],
    width: int,
    *,
    show_header: bool = True,
    one_cell: str = "",
) -> str | None:
    """What Rich prints without colour for ``Table(title=title, title_justify="left", show_header=...)``
    with these columns (header, justify) and rows on a console ``width`` wide; None when Rich is
    needed (too wide, or a title, header or cell not ``_one_cell_each``; an empty cell is fine).
    ``one_cell``: non-ASCII characters the caller knows take one cell (such as a marker it adds)."""
    headers = [header for header, _ in columns] if show_header else ["" for _ in columns]
    if any(len(row) != len(columns) for row in rows) or not _one_cell_each(
        [title, *headers, *(c for row in rows for c in row)], one_cell
    ):
        return None
    widths = [max(map(len, column)) for column in zip(headers, *rows, strict=True)]
    total = sum(widths) + 3 * len(widths) + 1
    if total > width or len(title) > total:
        return None
    # One format a line: the cells padded to their column's width, in the table's box characters.
    cells = [f"{{:{'<' if j == 'left' else '>'}{w}}}" for w, (_, j) in zip(widths, columns, strict=True)]

    def rule(box: tuple[str, str, str, str]) -> str:
        left, line, cross, right = box
        return left + cross.join(line * (w + 2) for w in widths) + right

    def line(box: tuple[str, str, str]) -> str:
        left, between, right = box
        return left + " " + f" {between} ".join(cells) + " " + right

    lines = [title] if title else []  # Rich shows no empty title (nor pads one: see output.unpadded)
    if show_header:
        lines += [rule(_TOP), line(_HEAD).format(*headers), rule(_HEAD_BELOW)]
    else:
        lines.append(rule(_SQUARE_TOP))
    row = line(_ROW)
    lines.extend(row.format(*values) for values in rows)
    lines.append(rule(_BOTTOM))
    return "\n".join(lines) + "\n"


# A step of ``fit``: a cut (the columns cut alike, times to one precision; the least width; where to
# cut), or the index of a column to leave out.
Cut = tuple[tuple[int, ...], int, Literal["end", "middle", "time"]]


def fit(
    columns: Sequence[tuple[str, Justify]],
    rows: Sequence[Sequence[str]],
    width: int,
    steps: Sequence[Cut | int],
) -> tuple[list[tuple[str, Justify]], list[list[str]], list[str]]:
    """A table narrowed to ``width`` terminal cells, never by folding a cell over lines, by the
    fewest of ``steps`` that make it fit, taken in order: a cut shortens its columns' cells only as
    far as the table is still too wide, down to its least width (``end``: ``abc…``; ``middle``:
    ``ab…yz``, a path's last part whole; ``time``: an ISO time to less precision,
    ``2024-01-31T12:00Z``); a column index leaves that column out. The columns, the rows and the
    names of the columns left out; still too wide when every step is spent (the terminal wraps)."""
    for taken in range(len(steps) + 1):
        hides = [step for step in steps[:taken] if isinstance(step, int)]
        shown = [i for i in range(len(columns)) if i not in hides]
        table = [[row[i] for i in shown] for row in rows]
        widths = [
            max(map(_cells, column)) for column in zip([columns[i][0] for i in shown], *table, strict=True)
        ]
        excess = sum(widths) + 3 * len(widths) + 1 - width
        for step in steps[:taken]:
            group = [] if isinstance(step, int) else [shown.index(c) for c in step[0] if c in shown]
            if excess <= 0 or not group:
                continue
            _, least, how = step  # type: ignore[misc]
            room = max(least, *(_cells(columns[shown[at]][0]) for at in group))
            room = max(room, max(widths[at] for at in group) - excess)
            for at in group:
                if room < widths[at]:
                    for row in table:
                        row[at] = _cut(row[at], room, how)
                    cut = max(map(_cells, (row[at] for row in table)))
                    excess -= widths[at] - cut
                    widths[at] = cut
        if excess <= 0:
            break
    return [columns[i] for i in shown], table, [columns[i][0] for i in hides]


def _cells(text: str) -> int:
    if text.isascii():
        return len(text)
    from rich.cells import cell_len

    return cell_len(text)


def _cut(text: str, room: int, how: str) -> str:
    """``text`` in ``room`` cells at most, cut as ``fit`` says."""
    if _cells(text) <= room:
        return text
    if how == "time" and text.endswith("Z") and room >= 10:  # 2024-01-31T12:00:00.123Z
        keep = 19 if room >= 20 else 16 if room >= 17 else 10  # to the second, the minute, the day
        return text[:keep] + ("Z" if keep > 10 else "")
    if how == "middle" and os.sep in text.rstrip(os.sep):
        return middle_cut(text, room)
    if text.isascii():
        if how == "middle":
            front = room // 2
            return f"{text[:front].rstrip()}…{text[len(text) - (room - 1 - front) :].lstrip()}"
        return text[: room - 1].rstrip() + "…"
    from rich.cells import set_cell_size

    if how == "middle":
        head = set_cell_size(text, room // 2).rstrip()
        tail = set_cell_size(text[::-1], room - 1 - _cells(head))[::-1].lstrip()
        return f"{head}…{tail}"
    return set_cell_size(text, room - 1).rstrip() + "…"


def middle_cut(path: str, room: int) -> str:
    """``a/very/long/dir/00000000000000000000.log`` in ``room`` cells: ``a/ve…dir/00000000000000000000.log``;
    the last component stays whole whatever ``room`` is."""
    if len(path) <= room:
        return path
    head, sep, name = path.rpartition(os.sep)
    if not sep:
        return path
    keep = room - len(name) - 2  # the ellipsis and the separator before the name
    if keep <= 0:
        return f"…{os.sep}{name}"
    front = (keep + 1) // 2
    back = keep - front
    return f"{head[:front]}…{head[len(head) - back :] if back else ''}{os.sep}{name}"
