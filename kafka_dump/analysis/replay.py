"""The records of a log in the order they take effect, for replaying Kafka's own topics into state.

Records come from the shared segment reader, in offset order across the files given. A transactional
record takes effect at its producer's COMMIT marker and never after an ABORT one, so it is held until
then (as Kafka's coordinators hold a transaction's offset commits). ``Cut`` stops the replay at an
offset or leaves out records stamped after a time: the state as it was then.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
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
    """What a replay went past: records read, the newest timestamp, problems;
    ``track`` passes the reader's items on (through a progress bar, where the command shows one)."""

    def __init__(
        self, on_problem: Callable[[Problem], None], track: Callable[[Items], Items] | None = None
    ) -> None:
        self.records = 0
        self.newest = -1
        self.on_problem = on_problem
        self.track: Callable[[Items], Items] = track if track is not None else _as_they_are


def _as_they_are(items: Items) -> Items:
    return items


class Run(NamedTuple):
    """Records that take effect together, in offset order: a batch's, or a transaction's at its
    COMMIT marker (``late``: written before records that took effect earlier)."""

    records: Sequence[Record]
    late: bool


def effective_runs(
    files: Iterable[Path],
    cut: Cut,
    seen: Seen,
    *,
    start: int | None = None,
    max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES,
    max_records_per_batch: int = DEFAULT_MAX_RECORDS_PER_BATCH,
) -> Iterator[Run]:
    """The data records of ``files`` as they take effect, up to ``cut``, a run at a time; records
    before offset ``start`` are skipped (a snapshot already holds them). Control records end here."""
    pending: dict[int, list[Record]] = {}
    whole = cut.time is None and start is None
    for f in files:
        items = read_segment(f, max_batch_bytes=max_batch_bytes, max_records_per_batch=max_records_per_batch)
        for item in seen.track(items):
            if isinstance(item, Problem):
                seen.on_problem(item)
                continue
            if cut.stops_at(item.baseOffset):
                return
            records = item.records
            if not item.crcValid or not records:
                continue  # a CRC's problem follows: records that fail their CRC are not replayed
            if not whole or cut.stops_at(item.lastOffset):
                records = tuple(r for r in records if _kept(r, cut, start))
                if not records:
                    continue
            seen.records += len(records)
            newest = item.maxTimestamp if whole and item.magic == 2 else max(r.timestamp for r in records)
            seen.newest = max(seen.newest, newest)
            if item.isControl:
                if item.isTransactional:
                    yield from _ended(item.producerId, records, pending)
            elif item.isTransactional:
                pending.setdefault(item.producerId, []).extend(records)
            else:
                yield Run(records, False)


def _kept(r: Record, cut: Cut, start: int | None) -> bool:
    return not (
        cut.stops_at(r.offset) or cut.leaves_out(r.timestamp) or (start is not None and r.offset < start)
    )


def _ended(producer: int, markers: Sequence[Record], pending: dict[int, list[Record]]) -> Iterator[Run]:
    """A transaction's records at its COMMIT marker; none at its ABORT marker."""
    for m in markers:
        c = m.control
        if c is not None and c.type in (ControlType.COMMIT, ControlType.ABORT):
            held = pending.pop(producer, None)
            if held and c.type == ControlType.COMMIT:
                yield Run(held, True)


def last_per_key(runs: Iterable[Run]) -> dict[bytes, Record]:
    """A compacted topic's state: the last record per key, a tombstone (null value) deleting it. A
    transaction's record committed after a later plain write to its key does not replace that write."""
    live: dict[bytes, Record] = {}
    for records, late in runs:
        for r in records:
            key = r.key
            if key is None:
                continue
            if r.value is None:
                live.pop(key, None)
            elif not late or (now := live.get(key)) is None or now.offset < r.offset:
                live[key] = r
    return live
