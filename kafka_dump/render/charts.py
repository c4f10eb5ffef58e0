"""Small terminal charts for ``kdump stats``: a bar histogram (a Rich ``Table``) and a sparkline.

Only numbers reach these functions, never data from a file, so nothing here can be read as markup.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # Rich is imported by bar_histogram: the plain stats text needs only bar and sparkline
    from rich.table import Table

BAR_WIDTH = 40  # the histogram's bars: cells for the largest count
_SPARKS = "▁▂▃▄▅▆▇█"
_EIGHTHS = " ▏▎▍▌▋▊▉█"


def bar(fraction: float, width: int) -> str:
    """A horizontal bar ``fraction`` (0..1) of ``width`` cells long, in eighths of a cell."""
    eighths = round(max(0.0, min(1.0, fraction)) * width * 8)
    full, part = divmod(eighths, 8)
    return "█" * full + (_EIGHTHS[part] if part else "")


def axis(top: int, width: int = BAR_WIDTH) -> str:
    """The scale under the bars: ``0`` at the left end, the largest count at the right one."""
    peak = f"{top:,}"
    return "0" + peak.rjust(width - 1)


def bar_histogram(
    rows: Sequence[tuple[str, int]], *, title: str | None = None, heads: tuple[str, str] = ("", "")
) -> Table:
    """One row per (label, count): the label, a bar scaled to the largest count, and the count; under
    the columns ``heads`` (the label's unit, the count's), an axis from 0 to the largest count."""
    from rich.table import Table
    from rich.text import Text

    top = max((n for _, n in rows), default=0)
    table = Table(box=None, pad_edge=False, title=title, title_justify="left", header_style="kdump.label")
    table.add_column(heads[0], justify="right", no_wrap=True)
    table.add_column("", no_wrap=True, min_width=BAR_WIDTH)
    table.add_column(heads[1], justify="right", no_wrap=True)
    for label, n in rows:
        table.add_row(
            Text(label), Text(bar(n / top if top else 0.0, BAR_WIDTH), style="kdump.chart"), Text(f"{n:,}")
        )
    table.add_row("", Text(axis(top), style="kdump.label"), "")
    return table


def sparkline(values: Sequence[int]) -> str:
    """One character per value, from ▁ (zero or the least) to █ (the most); empty input, empty line."""
    if not values:
        return ""
    top = max(values)
    if top <= 0:
        return _SPARKS[0] * len(values)
    last = len(_SPARKS) - 1
    return "".join(_SPARKS[0] if v <= 0 else _SPARKS[max(1, round(v / top * last))] for v in values)
