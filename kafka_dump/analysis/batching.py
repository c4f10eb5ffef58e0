"""The rule that groups consecutive records into batches, as a Java producer fills its batches.

Plain v0/v1 messages have no batch. Written again as v2 batches (or compressed v0/v1 wrappers) they
are grouped as Kafka's producer groups records: a record joins the open batch while it stays within
``max_bytes`` (``batch.size``) and ``max_records``; a batch's first record always joins
(``MemoryRecordsBuilder.hasRoomFor``). Sizes are uncompressed, in the target format, so the grouping
does not depend on the codec. ``stats --compare`` and ``convert`` share it, and ``as_message``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, Generic, TypeVar

from kafka_dump.model import Record, new_record
from kafka_dump.wire.varint import varint_size

T = TypeVar("T")

DEFAULT_BATCH_BYTES = 16 * 1024  # the Java producer's default batch.size

# size(first item of the open group, item) -> bytes the item adds to that group
SizeOf = Callable[[T, T], int]
# joins(first item of the open group, item) -> may the item share a batch with it at all?
Joins = Callable[[T, T], bool]


def as_message(r: Record, magic: int) -> Record:
    """``r`` as a v0/v1 message of ``magic`` carries it: no headers, no sequence, and in v0 no
    timestamp (nor the stored one)."""
    if magic == 0:
        return new_record(r.offset, -1, r.key, r.value, (), -1, r.sizeInBytes)
    return new_record(
        r.offset, r.timestamp, r.key, r.value, (), -1, r.sizeInBytes, stored_timestamp=r.storedTimestamp
    )


def v2_record_size(offset_delta: int, timestamp_delta: int, r: Record) -> int:
    """Bytes of one v2 record with these deltas (``DefaultRecord.sizeInBytes``)."""
    key, value = r.key, r.value
    body = 1 + varint_size(timestamp_delta) + varint_size(offset_delta) + varint_size(len(r.headers))
    body += 1 if key is None else varint_size(len(key)) + len(key)
    body += 1 if value is None else varint_size(len(value)) + len(value)
    for h in r.headers:
        body += varint_size(len(h.key)) + len(h.key)
        body += 1 if h.value is None else varint_size(len(h.value)) + len(h.value)
    return varint_size(body) + body


class Grouper(Generic[T]):
    """Fills one batch at a time from items fed in order; holds at most one open batch."""

    def __init__(
        self,
        *,
        overhead: int,
        size: SizeOf[T],
        max_bytes: int | None = DEFAULT_BATCH_BYTES,
        max_records: int | None = None,
        joins: Joins[T] | None = None,
    ) -> None:
        if (max_bytes is not None and max_bytes < 1) or (max_records is not None and max_records < 1):
            raise ValueError("batch limits must be positive")
        self._overhead = overhead
        self._size = size
        self._max_bytes = max_bytes
        self._max_records = max_records
        self._joins = joins
        self._open: list[T] = []
        self._bytes = 0

    def add(self, item: T) -> list[T] | None:
        """Add ``item``; return the batch it closed (the one before it), if it closed one."""
        group = self._open
        if group:
            first = group[0]
            grow = self._size(first, item)
            if (
                (self._max_records is None or len(group) < self._max_records)
                and (self._max_bytes is None or self._bytes + grow <= self._max_bytes)
                and (self._joins is None or self._joins(first, item))
            ):
                group.append(item)
                self._bytes += grow
                return None
        self._open = [item]
        self._bytes = self._overhead + self._size(item, item)
        return group or None

    def flush(self) -> list[T] | None:
        """Close the open batch, if there is one, and return it."""
        group, self._open = self._open, []
        return group or None


def group(items: Iterable[T], **limits: Any) -> Iterator[list[T]]:
    """Group ``items`` into consecutive batches by ``Grouper(**limits)`` (every item lands in one batch)."""
    grouper: Grouper[T] = Grouper(**limits)
    for item in items:
        done = grouper.add(item)
        if done is not None:
            yield done
    last = grouper.flush()
    if last is not None:
        yield last
