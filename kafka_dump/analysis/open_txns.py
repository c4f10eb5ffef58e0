"""Open transactions in a data partition: transactional batches whose producer wrote no COMMIT or ABORT.

The partition's own segments are read in offset order (batch headers; a control batch's marker). A
transaction that began before the log's first offset is known from the producer-state ``.snapshot``
taken at or before it (``currentTxnFirstOffset``). An open transaction holds the partition's last stable
offset (LSO) at its first offset: consumers reading committed data stop there. One open longer than
the timeout, measured to the newest timestamp in the partition, is hanging: ``kafka-transactions.sh``
can abort it from its start offset.
"""

from __future__ import annotations

import re
import shlex
from itertools import chain
from pathlib import Path
from typing import Any

from kafka_dump.analysis.replay import Cut, Seen
from kafka_dump.analysis.state import Row
from kafka_dump.log.names import segment_base_offset
from kafka_dump.log.segment import read_segment
from kafka_dump.log.sidefiles import ProducerEntry, read_side_file
from kafka_dump.model import Batch, ControlType, Problem, TimestampType

DEFAULT_TIMEOUT_MS = 15 * 60 * 1000  # Kafka's transaction.max.timeout.ms
_PARTITION_DIR = re.compile(r"^(?P<topic>.+)-(?P<partition>\d+)$")


def topic_partition(directory: Path) -> tuple[str, int | None]:
    """(topic, partition) from a partition directory's name (``orders-3``), or (name, None)."""
    m = _PARTITION_DIR.match(directory.name)
    return (m.group("topic"), int(m.group("partition"))) if m else (directory.name, None)


def abort_command(topic: str, partition: int | None, start_offset: int) -> str:
    """The ``kafka-transactions.sh`` line that aborts a hanging transaction (the broker to be filled in)."""
    p = "PARTITION" if partition is None else str(partition)
    return (
        f"kafka-transactions.sh --bootstrap-server BROKER:9092 abort --topic {shlex.quote(topic)} "
        f"--partition {p} --start-offset {start_offset}"
    )


def _start_time(b: Batch) -> int:
    return b.baseTimestamp if b.timestampType == TimestampType.CREATE_TIME else b.maxTimestamp


def _from_snapshot(snapshots: list[Path], log_start: int, seen: Seen) -> dict[int, dict[str, Any]]:
    """The transactions open at the log's start, from the newest ``.snapshot`` at or before it."""
    snaps = [(segment_base_offset(s), s) for s in snapshots]
    usable = sorted((o, s) for o, s in snaps if o is not None and o <= log_start)
    if not usable:
        return {}
    opened: dict[int, dict[str, Any]] = {}
    for item in read_side_file(usable[-1][1]):
        if isinstance(item, Problem):
            seen.on_problem(item)
        elif isinstance(item, ProducerEntry) and item.currentTxnFirstOffset >= 0:
            opened[item.producerId] = {
                "producerId": item.producerId, "producerEpoch": item.producerEpoch,
                "firstOffset": item.currentTxnFirstOffset, "lastOffset": item.lastOffset,
                "startTimestamp": item.lastTimestamp, "fromSnapshot": True,
            }  # fmt: skip
    return opened


def open_transactions(
    directory: Path,
    files: list[Path],
    snapshots: list[Path],
    cut: Cut,
    seen: Seen,
    timeout_ms: int,
    **limits: Any,
) -> list[Row]:
    """One ``partition-end`` row (end offset, LSO, newest timestamp) and one ``open-transaction`` row per
    producer with a transaction begun and not ended, ``hanging`` when open longer than ``timeout_ms``:
    of one partition ``directory``, from its segments and producer ``snapshots`` (``.snapshot``)."""
    files = [f for f in files if f.suffix == ".log"]
    log_start = segment_base_offset(files[0]) if files else None
    opened = _from_snapshot(snapshots, log_start or 0, seen)
    end: int | None = None
    items = chain.from_iterable(
        seen.track(read_segment(f, with_records=False, on_walk=_ignore, **limits)) for f in files
    )
    for item in items:
        if isinstance(item, Problem):
            seen.on_problem(item)
            continue
        if cut.stops_at(item.baseOffset):
            break
        if cut.leaves_out(item.maxTimestamp) or not item.crcValid:
            continue
        seen.records += item.recordCount or 0
        seen.newest = max(seen.newest, item.maxTimestamp)
        end = item.lastOffset + 1
        if not item.isTransactional:
            continue
        pid = item.producerId
        if item.isControl:
            if any(r.control is not None and r.control.type in _MARKERS for r in item.records or ()):
                opened.pop(pid, None)
            continue
        txn = opened.get(pid)
        if txn is None:
            txn = opened[pid] = {
                "producerId": pid, "producerEpoch": item.producerEpoch, "firstOffset": item.baseOffset,
                "startTimestamp": _start_time(item), "fromSnapshot": False,
            }  # fmt: skip
        txn["producerEpoch"] = item.producerEpoch
        txn["lastOffset"] = item.lastOffset
    return _rows(directory, opened, end, seen.newest, timeout_ms)


def _rows(
    directory: Path, opened: dict[int, dict[str, Any]], end: int | None, newest: int, timeout: int
) -> list[Row]:
    topic, partition = topic_partition(directory)
    txns = sorted(opened.values(), key=lambda t: t["firstOffset"])
    lso = txns[0]["firstOffset"] if txns else end
    rows: list[Row] = [{
        "type": "partition-end", "topic": topic, "partition": partition, "endOffset": end,
        "lastStableOffset": lso, "newestTimestamp": newest, "openTransactions": len(txns),
    }]  # fmt: skip
    for t in txns:
        age = newest - t["startTimestamp"] if newest >= 0 and t["startTimestamp"] >= 0 else None
        hanging = age is not None and age > timeout
        row: Row = {"type": "open-transaction", "topic": topic, "partition": partition, **t, "ageMs": age}
        row["hanging"] = hanging
        row["heldBackRecords"] = None if end is None else end - t["firstOffset"]
        if hanging:
            row["abortCommand"] = abort_command(topic, partition, t["firstOffset"])
        rows.append(row)
    return rows


def _ignore(_batch: Batch, _walk: object) -> None:
    """The walk's findings are not needed: only its problems, which the reader yields."""


_MARKERS = (ControlType.COMMIT, ControlType.ABORT)
