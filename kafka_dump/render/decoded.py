"""How decoded internal records and side files are shown: JSON objects, Kafka's tool's text, table cells.

JSON: a ``decoded`` object, bytes as base64 (as Kafka's JSON converters write them); Kafka text: the
strings of ``kafka-dump-log.sh``'s decoders (Kafka 3.9). Every string is plain text for the caller.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from kafka_dump.internal_topics import Decoded, Part, RecordDecoder, record_decoder, resolve, transactions
from kafka_dump.log.sidefiles import (
    AbortedTxn,
    LeaderEpochEntry,
    OffsetIndexEntry,
    PartitionMetadata,
    ProducerEntry,
    ProducerSnapshotHeader,
    SideItem,
    TimeIndexEntry,
)
from kafka_dump.model import ControlType, Problem
from kafka_dump.wire.kmessage import UNKNOWN_TAGS


def _plain(value: Any, keep_unknown: bool) -> Any:
    """A decoded value with bytes as base64 (and, unless kept, unknown tagged fields left out)."""
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, dict):
        return {
            str(k): _plain(v, keep_unknown) for k, v in value.items() if keep_unknown or k != UNKNOWN_TAGS
        }
    if isinstance(value, list):
        return [_plain(v, keep_unknown) for v in value]
    return value


_compact = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def kafka_json(value: Any) -> str:
    """Compact JSON as Jackson's ``JsonNode.toString`` writes it (no spaces, non-ASCII kept)."""
    return _compact(_plain(value, keep_unknown=False))


def file_decoder(choice: str, path: str) -> tuple[RecordDecoder | None, bool]:
    """``--decode`` for the file at ``path``: its record decoder (None for ``none``), and whether that
    decoder reads the data records too (an internal topic), not only KRaft control records."""
    if choice == "none":
        return None, False
    name = resolve(choice, path)
    return record_decoder(name), name is not None


def part_object(p: Part | None) -> dict[str, Any] | None:
    if p is None:
        return None
    out: dict[str, Any] = {"schema": p.schema, "version": p.version, **p.extra}
    out["data"] = None if p.data is None else _plain(p.data, keep_unknown=True)
    if p.hex is not None:
        out["hex"] = p.hex
    return out


def decoded_object(d: Decoded) -> dict[str, Any]:
    """The ``decoded`` object of a record in ``--format json``."""
    return {
        "decoder": d.decoder,
        "key": part_object(d.key),
        "value": part_object(d.value),
        "tombstone": d.tombstone,
        "error": d.error,
    }


def decoded_json(d: Decoded) -> str:
    return _compact(decoded_object(d))


CONTROL_LABELS: dict[int, str] = {  # as Kafka's tool prints a KRaft control record, before its JSON
    ControlType.LEADER_CHANGE: " LeaderChange: ",
    ControlType.SNAPSHOT_HEADER: " SnapshotHeader ",
    ControlType.SNAPSHOT_FOOTER: " SnapshotFooter ",
    ControlType.KRAFT_VERSION: " KRaftVersion ",
    ControlType.KRAFT_VOTERS: " KRaftVoters ",
}


def kafka_control(control_type: int, d: Decoded) -> str:
    """`` LeaderChange: {json}``, `` SnapshotHeader {json}``...: a KRaft control record as Kafka prints it."""
    label = CONTROL_LABELS[control_type]
    if d.value is None or d.value.data is None:
        return f"{label}{'null' if d.value is None else d.value.hex}"
    return label + kafka_json(d.value.data)


def kafka_key_payload(d: Decoded, offset: int) -> tuple[str | None, str | None]:
    """(key, payload) strings of ``--offsets-decoder``, ``--transaction-log-decoder`` or the metadata one."""
    if d.decoder == "metadata":
        v = d.value
        if d.error is not None or v is None or v.data is None:
            return None, f"Error at {offset}, skipping. {d.error}"
        return None, kafka_json({"type": v.extra["type"], "version": v.version, "data": v.data})
    if d.decoder == "transactions":
        return _transaction_text(d)
    # offsets
    if d.error is not None:
        if d.error.startswith("unknown record type"):
            version = d.key.version if d.key else "?"
            return f"Unknown record type {version} at offset {offset}, skipping.", None
        return f"Error at offset {offset}, skipping. {d.error}", None
    if d.key is None or d.key.data is None:
        return f"Error at offset {offset}, skipping. the key could not be read", None
    key = kafka_json({"type": str(d.key.version), "data": d.key.data})
    if d.value is None or d.value.data is None:
        return key, "<DELETE>"
    return key, kafka_json({"version": str(d.value.version), "data": d.value.data})


def _transaction_text(d: Decoded) -> tuple[str | None, str | None]:
    k = d.key
    if k is None or k.data is None:
        return f"unknown::version={k.version if k is not None else '?'}", None
    key = f"transaction_metadata::transactionalId={k.data['transactionalId']}"
    v = d.value
    if d.tombstone:
        return key, "<DELETE>"
    if v is None or v.data is None:
        return key, f"Error: {d.error}"
    f = v.data
    parts = ",".join(
        f"{tp['topic']}-{p}" for tp in (f["transactionPartitions"] or ()) for p in tp["partitionIds"]
    )
    return key, (
        f"producerId:{f['producerId']},producerEpoch:{f['producerEpoch']},"
        f"state={transactions.state_name(f['transactionStatus'])},partitions=[{parts}],"
        f"txnLastUpdateTimestamp={f['transactionLastUpdateTimestampMs']},txnTimeoutMs={f['transactionTimeoutMs']}"
    )


def part_text(p: Part | None, tombstone: bool = False) -> str:
    """One table cell: ``OffsetCommitValue v3 offset=5 leaderEpoch=-1 ...`` (fields in schema order)."""
    if p is None:
        return "<DELETE>" if tombstone else "null"
    name = p.schema or "?"
    if "type" in p.extra:
        name = p.extra["type"]
    head = f"{name} v{p.version}" if p.version is not None else name
    if p.data is None:
        return f"{head} 0x{p.hex or ''}"
    fields = " ".join(
        f"{k}={v if isinstance(v, str) else kafka_json(v)}" for k, v in p.data.items() if k != UNKNOWN_TAGS
    )
    return f"{head} {fields}".rstrip()


def side_kafka_line(item: SideItem) -> str | None:
    """The line Kafka's tool prints for a side-file entry (None where it prints nothing)."""
    if isinstance(item, OffsetIndexEntry):
        return f"offset: {item.offset} position: {item.position}\n"
    if isinstance(item, TimeIndexEntry):
        return f"timestamp: {item.timestamp} offset: {item.offset}\n"
    if isinstance(item, AbortedTxn):
        return (
            f"version: {item.version} producerId: {item.producerId} firstOffset: {item.firstOffset} "
            f"lastOffset: {item.lastOffset} lastStableOffset: {item.lastStableOffset}\n"
        )
    if isinstance(item, LeaderEpochEntry):
        return f"{item.epoch} {item.startOffset}\n"
    if isinstance(item, ProducerEntry):
        txn = (
            f"OptionalLong[{item.currentTxnFirstOffset}]"
            if item.currentTxnFirstOffset >= 0
            else "OptionalLong.empty"
        )
        line = (
            f"producerId: {item.producerId} producerEpoch: {item.producerEpoch} "
            f"coordinatorEpoch: {item.coordinatorEpoch} currentTxnFirstOffset: {txn} "
            f"lastTimestamp: {item.lastTimestamp}"
        )
        if item.lastOffset >= 0:
            line += (
                f" firstSequence: {item.firstSequence} lastSequence: {item.lastSequence} "
                f"lastOffset: {item.lastOffset} offsetDelta: {item.offsetDelta} timestamp: {item.lastTimestamp}"
            )
        return line + "\n"
    if isinstance(item, PartitionMetadata):
        return f"version: {item.version}\ntopic_id: {item.topicId}\n"
    return None


_SIDE_TYPES = {
    OffsetIndexEntry: "indexEntry",
    TimeIndexEntry: "timeIndexEntry",
    AbortedTxn: "abortedTxn",
    ProducerSnapshotHeader: "producerSnapshot",
    ProducerEntry: "producer",
    LeaderEpochEntry: "leaderEpoch",
    PartitionMetadata: "partitionMetadata",
}


def side_row_fields(item: SideItem) -> dict[str, Any]:
    """A side-file entry's fields by name; a producer without a sequence has ``firstSequence`` None."""
    if isinstance(item, Problem):
        raise TypeError("a problem is not a side-file entry")
    fields: dict[str, Any] = item._asdict()
    if isinstance(item, ProducerEntry):
        fields["firstSequence"] = item.firstSequence if item.lastOffset >= 0 else None
    return fields


def side_object(file: str, item: SideItem) -> dict[str, Any]:
    """A side-file entry as a JSON Lines object: ``{"type": "indexEntry", "file": ..., fields...}``."""
    fields = side_row_fields(item)
    return {"type": _SIDE_TYPES[type(item)], "file": file, **fields}


_BOOL = {True: "true", False: "false"}


class SideTable:
    """Side-file entries as aligned plain rows (an index can hold a million: no Rich Table), under a
    header row each time the kind of entry changes (a snapshot's header, then its producers)."""

    def __init__(self) -> None:
        self._kind: type | None = None
        self._widths: tuple[int, ...] = ()

    def reset(self) -> None:
        self._kind = None

    def rows(self, item: SideItem) -> list[str]:
        fields = side_row_fields(item)
        out = []
        if type(item) is not self._kind:
            self._kind = type(item)
            self._widths = tuple(max(len(name), 13) for name in fields)
            out.append("  ".join(n.rjust(w) for n, w in zip(fields, self._widths, strict=True)) + "\n")
        cells = (
            "-" if v is None else _BOOL.get(v, str(v)) if isinstance(v, bool) else str(v)
            for v in fields.values()
        )
        out.append("  ".join(c.rjust(w) for c, w in zip(cells, self._widths, strict=True)) + "\n")
        return out
