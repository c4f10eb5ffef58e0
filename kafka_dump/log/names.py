"""Which files beside the segments are side files, by their names: the one rule every command uses.

Light on purpose (no reader is imported), so that a command can sort the paths it is given first.
"""

from __future__ import annotations

import os
from pathlib import Path

SIDE_SUFFIXES = (".index", ".timeindex", ".txnindex", ".snapshot")
SIDE_NAMES = ("leader-epoch-checkpoint", "partition.metadata")


def side_file_kind(path: str | os.PathLike[str]) -> str | None:
    """What a file beside the segments is, by its name, for every command: ``.index``, ``.timeindex``,
    ``.txnindex``, ``.snapshot``, or one of ``SIDE_NAMES``; None for a segment (or anything else)."""
    p = Path(path)
    if p.name in SIDE_NAMES:
        return p.name
    return p.suffix if p.suffix in SIDE_SUFFIXES else None
