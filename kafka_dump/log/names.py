"""Which files beside the segments are side files, by their names: the one rule every command uses.

Light on purpose (no reader is imported), so that a command can sort the paths it is given first.
"""

from __future__ import annotations

import os
import re
from pathlib import PurePath

_SEGMENT_NAME = re.compile(r"^(\d{20})\.(log|index|timeindex|txnindex|snapshot)$")
_SNAPSHOT_NAME = re.compile(r"^(\d{20})-(\d{10})\.checkpoint$")
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


def segment_base_offset(path: str | os.PathLike[str]) -> int | None:
    """The base offset in a file name Kafka wrote (``00000000000000001000.log`` -> 1000)."""
    match = _SEGMENT_NAME.match(file_name(path))
    return int(match.group(1)) if match else None


def snapshot_id(path: str | os.PathLike[str]) -> tuple[int, int] | None:
    """(end offset, epoch) of a KRaft snapshot named ``<endOffset>-<epoch>.checkpoint``."""
    match = _SNAPSHOT_NAME.match(os.path.basename(path))
    return (int(match.group(1)), int(match.group(2))) if match else None


def name_order(name: str) -> tuple[bool, int, str]:
    """A sort key for file names: Kafka-named segments in offset order, then the others by name."""
    match = _SEGMENT_NAME.match(name)
    return match is None, int(match.group(1)) if match else 0, name
