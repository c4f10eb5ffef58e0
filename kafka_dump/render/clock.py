"""Timestamps as people read them: ``2024-01-31T12:00:00.123Z`` (UTC, milliseconds).

A leaf module: ``stats`` shows a few timestamps without loading the table renderer.
"""

from __future__ import annotations

from datetime import datetime, timezone
from functools import lru_cache
from typing import Literal

TimeMode = Literal["iso", "ms", "both"]  # --time: ISO-8601, epoch ms, or both in one cell


@lru_cache(maxsize=4096)
def iso_second(second: int) -> str:
    """The date and time of an epoch second; cached, since neighbouring records share seconds."""
    try:
        dt = datetime.fromtimestamp(second, tz=timezone.utc)
    except (OverflowError, OSError, ValueError):
        return "?"
    return f"{dt.year:04d}-{dt.month:02d}-{dt.day:02d}T{dt.hour:02d}:{dt.minute:02d}:{dt.second:02d}"


def iso(ts: int) -> str:
    """``2024-01-31T12:00:00.123Z`` (before 1970 for a negative one); ``-`` for -1 (none), ``?`` past
    what a date can show."""
    if ts == -1:
        return "-"
    second = iso_second(ts // 1000)
    return "?" if second == "?" else f"{second}.{ts % 1000:03d}Z"


def time_text(ts: int, mode: TimeMode) -> str:
    """A timestamp as ``--time`` asks: ISO, epoch ms, or both (``ISO (ms)``); ``-`` when there is none
    (-1); any other negative one is a time before 1970, shown as such."""
    if mode == "iso" or ts == -1:
        return iso(ts)
    if mode == "ms":
        return str(ts)
    return f"{iso(ts)} ({ts})"


def is_time_field(name: str) -> bool:
    """A field that holds epoch milliseconds, by Kafka's naming: ``commitTimestamp``, ``lastTimestamp``,
    ``transactionStartTimestampMs``, ``timestamp``."""
    return name.endswith(("Timestamp", "TimestampMs")) or name == "timestamp"
