"""Which files beside the segments are side files, by their names: the one rule every command uses.

Light on purpose (no reader is imported), so that a command can sort the paths it is given first.
"""

from __future__ import annotations

import os
from pathlib import PurePath

SIDE_SUFFIXES = (".index", ".timeindex", ".txnindex", ".snapshot")
# A log dir's own files (and quorum-state, in a KRaft __cluster_metadata-0): never segments. A KRaft
# bootstrap.checkpoint is not among them: it holds record batches, and is read as a segment.
OFFSET_CHECKPOINTS = (
    "recovery-point-offset-checkpoint",
    "replication-offset-checkpoint",
    "log-start-offset-checkpoint",
    "cleaner-offset-checkpoint",
)
LOG_DIR_NAMES = (*OFFSET_CHECKPOINTS, "meta.properties", ".lock", "quorum-state")
SIDE_NAMES = ("leader-epoch-checkpoint", "partition.metadata", *LOG_DIR_NAMES)


def file_name(path: str | os.PathLike[str]) -> str:
    """A path's last part, as ``Path.name`` gives it; without building a path for a string (a share of
    the check of a small segment)."""
    if isinstance(path, str) and (name := path[path.rfind(os.sep) + 1 :]) not in ("", ".", ".."):
        return name
    return path.name if isinstance(path, PurePath) else PurePath(path).name


def side_file_kind(path: str | os.PathLike[str]) -> str | None:
    """What a file beside the segments is, by its name, for every command: ``.index``, ``.timeindex``,
    ``.txnindex``, ``.snapshot``, or one of ``SIDE_NAMES`` (a partition's or a log dir's); None for a segment (or anything else)."""
    name = file_name(path)
    if name in SIDE_NAMES:
        return name
    dot = name.rfind(".")
    suffix = name[dot:] if 0 < dot < len(name) - 1 else ""  # Path.suffix, without building a path
    return suffix if suffix in SIDE_SUFFIXES else None
