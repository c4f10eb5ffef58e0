"""One look for every command: the Rich ``Theme``, style names with a meaning (``kdump.null``,
``kdump.problem``) and never a colour, so the whole tool changes look in one place. Small tables use
the names through ``Text`` or column styles; the bulk table takes their ANSI codes once (``sgr``).
"""

from __future__ import annotations

from rich.color import ColorSystem
from rich.style import Style
from rich.theme import Theme

from kafka_dump.render.plain import number, plural

__all__ = ["STYLES", "THEME", "number", "plural", "sgr"]  # number, plural: from plain.py, Rich-free

STYLES: dict[str, str] = {
    # structure
    "kdump.file": "bold",  # "Dumping FILE", a file heading
    "kdump.header": "bold",  # column headings of every table
    "kdump.batch": "bold",  # a batch's header line (a section row of the record table)
    "kdump.frame": "dim",  # box characters of the bulk table
    "kdump.label": "dim",  # "offsets", "size": the words before values in a batch line
    # values
    "kdump.number": "",  # counts and offsets in tables
    "kdump.time": "",  # ISO times
    "kdump.ms": "dim",  # epoch milliseconds beside an ISO time
    "kdump.null": "dim italic",  # an absent key, value or header value: not the text "null"
    "kdump.hex": "magenta",  # bytes shown as 0x... (not UTF-8 text)
    "kdump.escape": "magenta",  # a control character shown as an escape (\x1b, \u202e)
    "kdump.cut": "dim",  # the ellipsis of a value cut at --max-bytes
    # meaning
    "kdump.control": "bold yellow",  # control records and batches (COMMIT, ABORT, LEADER_CHANGE...)
    "kdump.commit": "bold green",
    "kdump.abort": "bold red",
    "kdump.transactional": "blue",  # data written inside a transaction
    "kdump.aborted": "red",  # data of an aborted transaction (a read_committed consumer skips it)
    "kdump.ok": "green",  # a valid CRC in a summary, "all good"
    "kdump.invalid": "bold red",  # an invalid CRC
    "kdump.problem": "bold red",  # corruption: every Problem of kind corrupt
    "kdump.tail": "yellow",  # a zero-filled or partial tail: a fact, not corruption
    "kdump.summary": "dim",  # the closing summary on stderr
    # stats
    "kdump.chart": "green",  # bars of a histogram, a sparkline
    "kdump.current": "bold yellow",  # the file's own encoding in a size comparison
    "kdump.note": "dim",  # a line that says how figures were made
}

THEME = Theme(STYLES)


def sgr(name: str) -> tuple[str, str]:
    """(start, end) ANSI codes of a theme style, rendered once, for writing styled text directly."""
    style = Style.parse(STYLES[name]) if STYLES[name] else Style.null()
    rendered = style.render("\0", color_system=ColorSystem.STANDARD)
    start, _, end = rendered.partition("\0")
    return start, end
