"""The records of a log in the order they take effect, for replaying Kafka's own topics into state.

Records come from the shared segment reader, in offset order across the files given. A transactional
record takes effect at its producer's COMMIT marker and never after an ABORT one, so it is held until
then (as Kafka's coordinators hold a transaction's offset commits). ``Cut`` stops the replay at an
offset or leaves out records stamped after a time: the state as it was then.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import NamedTuple

from kafka_dump.log.segment import read_segment
from kafka_dump.model import Batch, ControlType, Problem, Record
from kafka_dump.wire.codecs import DEFAULT_MAX_BATCH_BYTES, DEFAULT_MAX_RECORDS_PER_BATCH


class Cut(NamedTuple):
    """``--at-offset`` (the last offset replayed) and ``--at-time`` (epoch ms: later records are left out)."""

    offset: int | None = None
    time: int | None = None

    def stops_at(self, offset: int) -> bool:
        """The replay ends before ``offset``."""
        return self.offset is not None and offset > self.offset

    def leaves_out(self, timestamp: int) -> bool:
        return self.time is not None and timestamp > self.time


Items = Iterable[Batch | Problem]


class Seen:
    """What a replay went past: records read, the newest timestamp, the next offset, problems;
    ``track`` passes the reader's items on (through a progress bar, where the command shows one)."""

    def __init__(
        self, on_problem: Callable[[Problem], None], track: Callable[[Items], Items] | None = None
    ) -> None:
        self.records = 0
        self.newest = -1
        self.next_offset: int | None = None
        self.on_problem = on_problem
        self.track: Callable[[Items], Items] = track if track is not None else _as_they_are


def _as_they_are(items: Items) -> Items:
    return items


class Effect(NamedTuple):
    """A data record as it takes effect: committed (or never in a transaction), with its batch's producer."""

    record: Record
    producer_id: int


def effective_records(
    files: Iterable[Path],
    cut: Cut,
    seen: Seen,
    *,
    start: int | None = None,
    max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES,
    max_records_per_batch: int = DEFAULT_MAX_RECORDS_PER_BATCH,
) -> Iterator[Effect]:
    """Each data record of ``files`` when it takes effect, up to ``cut``; records before offset
    ``start`` are skipped (a snapshot already holds them). Control records are consumed here."""
    pending: dict[int, list[Effect]] = {}
    for f in files:
        items = read_segment(f, max_batch_bytes=max_batch_bytes, max_records_per_batch=max_records_per_batch)
        for item in seen.track(items):
            if isinstance(item, Problem):
                seen.on_problem(item)
                continue
            if cut.stops_at(item.baseOffset):
                return
            if not item.crcValid:
                continue  # its problem follows: records that fail their CRC are not replayed
            for r in item.records or ():
                if cut.stops_at(r.offset):
                    return
                if (start is not None and r.offset < start) or cut.leaves_out(r.timestamp):
                    continue
                seen.records += 1
                seen.newest = max(seen.newest, r.timestamp)
                seen.next_offset = r.offset + 1
                yield from _effect(item, r, pending)


def _effect(b: Batch, r: Record, pending: dict[int, list[Effect]]) -> Iterator[Effect]:
    if b.isControl:
        c = r.control
        if b.isTransactional and c is not None and c.type in (ControlType.COMMIT, ControlType.ABORT):
            held = pending.pop(b.producerId, [])
            if c.type == ControlType.COMMIT:
                yield from held
        return
    effect = Effect(r, b.producerId)
    if b.isTransactional:
        pending.setdefault(b.producerId, []).append(effect)
    else:
        yield effect


def last_per_key(effects: Iterable[Effect]) -> dict[bytes, Record]:
    """A compacted topic's state: the last record per key, a tombstone (null value) deleting it. A
    transaction's record committed after a later plain write to its key does not replace that write."""
    live: dict[bytes, Record] = {}
    for r, _producer in effects:
        key = r.key
        if key is None:
            continue
        if r.value is None:
            live.pop(key, None)
            continue
        now = live.get(key)
        if now is None or now.offset < r.offset:
            live[key] = r
    return live
