"""What ``kdump dump`` asks of the decoder: the files, the range filters, and a running summary."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from kafka_dump.errors import NotASegmentError
from kafka_dump.format.codecs import DEFAULT_MAX_BATCH_BYTES
from kafka_dump.index import seek_position
from kafka_dump.internal.sidefiles import SideItem, read_side_file, side_file_kind
from kafka_dump.model import Batch, Problem, ProblemKind, Record
from kafka_dump.segment import read_segment, segment_files


@dataclass(frozen=True)
class RangeFilter:
    """``--from/--to-offset``, ``--from/--to-time`` (epoch ms, inclusive) and ``--limit``."""

    from_offset: int | None = None
    to_offset: int | None = None
    from_time: int | None = None
    to_time: int | None = None
    limit: int | None = None

    @property
    def active(self) -> bool:
        return any(v is not None for v in (self.from_offset, self.to_offset, self.from_time, self.to_time))

    def keep_header(self, last_offset: int, max_timestamp: int) -> bool:
        """False when a batch's header alone proves that none of its records is in range."""
        if self.from_offset is not None and last_offset < self.from_offset:
            return False
        return not (self.from_time is not None and max_timestamp < self.from_time)

    def keep_record(self, r: Record) -> bool:
        if self.from_offset is not None and r.offset < self.from_offset:
            return False
        if self.to_offset is not None and r.offset > self.to_offset:
            return False
        if self.from_time is not None and r.timestamp < self.from_time:
            return False
        return not (self.to_time is not None and r.timestamp > self.to_time)

    def keep_batch(self, b: Batch) -> bool:
        """For --batches-only: the batch may hold a record in range."""
        if not self.keep_header(b.lastOffset, b.maxTimestamp):
            return False
        return not (self.to_offset is not None and b.baseOffset > self.to_offset)


@dataclass
class Summary:
    """Counts for the exit code and the closing line."""

    files: int = 0
    batches: int = 0
    records: int = 0
    corrupt: int = 0
    tail_bytes: int = 0


@dataclass(frozen=True)
class FileStart:
    path: str


@dataclass(frozen=True)
class FileEnd:
    path: str
    trailing: int


class BatchEvent(NamedTuple):
    """A batch to show, with the records that passed the filters (one per batch: kept cheap)."""

    batch: Batch
    records: tuple[Record, ...] | None


class SideEntry(NamedTuple):
    """One entry of a file kept beside segments (.index, .snapshot...; see internal/sidefiles.py)."""

    path: str
    item: SideItem


DumpEvent = FileStart | FileEnd | BatchEvent | SideEntry | Problem


def _side_events(f: Path, summary: Summary) -> Iterator[DumpEvent]:
    """A side file's entries (range filters and --limit do not apply: they are not records)."""
    trailing = 0
    try:
        for item in read_side_file(f):
            if isinstance(item, Problem):
                if item.kind is ProblemKind.CORRUPT:
                    summary.corrupt += 1
                else:
                    trailing += item.length
                    summary.tail_bytes += item.length
                yield item
            else:
                yield SideEntry(str(f), item)
    except OSError as exc:
        raise NotASegmentError(f"cannot read ({exc.strerror})", file=str(f)) from None
    yield FileEnd(str(f), trailing)


def iter_dump(
    paths: list[str],
    rng: RangeFilter,
    summary: Summary,
    *,
    with_records: bool = True,
    max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES,
) -> Iterator[DumpEvent]:
    """Stream the events of dumping ``paths`` (files or partition directories), counting as it goes."""
    files = [f for p in paths for f in segment_files(p)]
    left = rng.limit
    active = rng.active
    for f in files:
        if left is not None and left <= 0:
            break
        summary.files += 1
        yield FileStart(str(f))
        if side_file_kind(f) is not None:
            yield from _side_events(f, summary)
            continue
        trailing = 0
        start = seek_position(Path(f), from_offset=rng.from_offset, from_time=rng.from_time) if active else 0
        keep = rng.keep_header if active else None
        for item in read_segment(
            f, with_records=with_records, max_batch_bytes=max_batch_bytes, start=start, keep=keep
        ):
            if isinstance(item, Problem):
                if item.kind is ProblemKind.CORRUPT:
                    summary.corrupt += 1
                else:
                    trailing += item.length
                    summary.tail_bytes += item.length
                yield item
                continue
            if rng.to_offset is not None and item.baseOffset > rng.to_offset:
                break
            records = item.records
            if records is not None and active:
                records = tuple(r for r in records if rng.keep_record(r))
                if not records and item.records:
                    continue
            elif records is None and active and not rng.keep_batch(item):
                continue
            if left is not None:
                if left <= 0:
                    break
                if records is not None:
                    records = records[:left]
                    left -= len(records)
                else:
                    left -= 1
            summary.batches += 1
            summary.records += len(records) if records is not None else 0
            yield BatchEvent(item, records)
        else:
            yield FileEnd(str(f), trailing)
            continue
        yield FileEnd(str(f), 0)
