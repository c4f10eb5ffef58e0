"""Timestamps as people read them: ``2024-01-31T12:00:00.123Z`` (UTC, milliseconds).

A leaf module, for renderers that show a few timestamps (``stats``) and need not load the table
renderer; ``render/table.py`` keeps its own cached ``iso`` for its bulk rows, and a test holds the
two to the same text.
"""

from __future__ import annotations

from datetime import datetime, timezone


def iso(ts: int) -> str:
    """``2024-01-31T12:00:00.123Z``; ``-`` for a negative timestamp (none), ``?`` past what a date
    can show."""
    if ts < 0:
        return "-"
    try:
        dt = datetime.fromtimestamp(ts // 1000, tz=timezone.utc)
    except (OverflowError, OSError, ValueError):
        return "?"
    return f"{dt.year:04d}-{dt.month:02d}-{dt.day:02d}T{dt.hour:02d}:{dt.minute:02d}:{dt.second:02d}.{ts % 1000:03d}Z"
