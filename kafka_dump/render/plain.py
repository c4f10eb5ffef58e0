"""What a renderer can write without Rich: counts (``number``, ``plural``) and a small table in Rich's shape.

Importing Rich is a large part of a short ``verify-crc`` run: ``plain_table`` writes the colourless
table Rich would, or None when Rich would do more (wrap, cut, measure a cell) and must be used.
"""

from __future__ import annotations

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


def plural(n: int, word: str) -> str:
    """``1 batch``, ``3 batches``, ``1,000 records``: a count with its noun, for summaries."""
    if n == 1:
        return f"1 {word}"
    return f"{number(n)} {word}es" if word.endswith(("s", "x", "ch", "sh")) else f"{number(n)} {word}s"


def _one_cell_each(text: str) -> bool:
    """Printable ASCII with no space at either end: one terminal cell a character, never re-spaced by Rich."""
    return text.isascii() and text.isprintable() and text == text.strip()


def plain_table(
    title: str,
    columns: Sequence[tuple[str, Justify]],
    rows: Sequence[Sequence[str]],
    width: int,
    *,
    show_header: bool = True,
) -> str | None:
    """What Rich prints without colour for ``Table(title=title, title_justify="left", show_header=...)``
    with these columns (header, justify) and rows on a console ``width`` wide; None when Rich is
    needed (too wide, or a title, header or cell not ``_one_cell_each``; an empty cell is fine)."""
    headers = [header for header, _ in columns] if show_header else ["" for _ in columns]
    cells = [*headers, *(text for text in (title, *(c for row in rows for c in row)) if text)]
    if not all(_one_cell_each(text) for text in cells) or any(len(row) != len(columns) for row in rows):
        return None
    widths = [max([len(header), *(len(row[i]) for row in rows)]) for i, header in enumerate(headers)]
    total = sum(widths) + 3 * len(widths) + 1
    if total > width or len(title) > total:
        return None
    justify = [j for _, j in columns]

    def rule(box: tuple[str, str, str, str]) -> str:
        left, line, cross, right = box
        return left + cross.join(line * (w + 2) for w in widths) + right

    def line(values: Sequence[str], box: tuple[str, str, str]) -> str:
        left, between, right = box
        padded = (
            v.ljust(w) if j == "left" else v.rjust(w) for v, w, j in zip(values, widths, justify, strict=True)
        )
        return left + " " + f" {between} ".join(padded) + " " + right

    lines = [title] if title else []  # Rich shows no empty title (nor pads one: see output.unpadded)
    if show_header:
        lines += [rule(_TOP), line(headers, _HEAD), rule(_HEAD_BELOW)]
    else:
        lines.append(rule(_SQUARE_TOP))
    lines.extend(line(row, _ROW) for row in rows)
    lines.append(rule(_BOTTOM))
    return "\n".join(lines) + "\n"
