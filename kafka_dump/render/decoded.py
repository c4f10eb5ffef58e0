"""How decoded internal records and side files are shown: JSON objects, Kafka's tool's text, table cells.

JSON: a ``decoded`` object, bytes as base64 (as Kafka's JSON converters write them); Kafka text: the
strings of ``kafka-dump-log.sh``'s decoders (Kafka 4.1 on; 3.9/4.0 on request). Every string is plain
text for the caller.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from kafka_dump.internal_topics import (
    Decoded,
    Part,
    RecordDecoder,
    record_decoder,
    remote_log,
    resolve,
    transactions,
)
from kafka_dump.internal_topics._coordinator import UNKNOWN_TYPE, UNKNOWN_VERSION
from kafka_dump.log.sidefiles import (
    AbortedTxn,
    LeaderEpochEntry,
    OffsetCheckpointEntry,
    OffsetIndexEntry,
    PartitionMetadata,
    ProducerEntry,
    ProducerSnapshotHeader,
    Property,
    SideItem,
    TimeIndexEntry,
)
from kafka_dump.model import ControlType, Problem
from kafka_dump.render.clock import TimeMode, is_time_field, time_text
from kafka_dump.wire.kmessage import schema


def _plain(value: Any) -> Any:
    """A decoded value with bytes as base64 and every key a string."""
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


_compact = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def kafka_json(value: Any) -> str:
    """Compact JSON as Jackson's ``JsonNode.toString`` writes it (no spaces, non-ASCII kept). Tagged
    fields the schema does not name stay visible as ``_unknownTaggedFields`` (Kafka drops them)."""
    return _compact(_plain(value))


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
    out["data"] = None if p.data is None else _plain(p.data)
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


KAFKA_VERSIONS = ("3.9", "4.0", "4.1", "4.4")  # kafka-dump-log releases whose decoder lines differ


def kafka_key_payload(d: Decoded, offset: int, version: str = "4.1") -> tuple[str | None, str | None]:
    """(key, payload) strings of kafka-dump-log's decoders (``--offsets-decoder``...) for ``version``:
    4.1 (4.1 to 4.3), 4.4 (transaction states by name), or 3.9/4.0 (the transaction log as text)."""
    if d.decoder == "metadata":
        v = d.value
        if d.error is not None or v is None or v.data is None or v.schema is None:
            return None, f"Error at {offset}, skipping. {d.error}"
        data = schema(v.schema).kafka_view(v.data)
        return None, kafka_json({"type": v.extra["type"], "version": v.version, "data": data})
    if d.decoder == "remote-log-metadata":
        return None, remote_log_text(d, offset)
    if d.decoder == "transactions" and version in ("3.9", "4.0"):
        return _transaction_text(d)
    return _coordinator_json(d, offset, version)


_OFFSETS_TYPES_UP_TO = {"3.9": 8, "4.0": 16}  # the __consumer_offsets types older releases knew


def _coordinator_json(d: Decoded, offset: int, version: str) -> tuple[str | None, str | None]:
    k, v = d.key, d.value
    unknown = d.error is not None and d.error.startswith(UNKNOWN_TYPE)
    if d.decoder == "offsets" and k is not None and k.version is not None:
        unknown = unknown or k.version > _OFFSETS_TYPES_UP_TO.get(version, k.version)
    if unknown and k is not None:
        return f"Unknown record type {k.version} at offset {offset}, skipping.", None
    if d.error is not None and d.error.startswith(UNKNOWN_VERSION) and k is not None and v is not None:
        why = f"Found an unknown record version {v.version} for {k.version} type"
        return f"Error at offset {offset}, skipping. {why}", None
    if d.error is not None or k is None or k.data is None or k.schema is None:
        return f"Error at offset {offset}, skipping. {d.error}", None
    key = kafka_json({"type": str(k.version), "data": schema(k.schema).kafka_view(k.data)})
    if v is None:
        return key, "<DELETE>"
    if v.data is None or v.schema is None:
        return f"Error at offset {offset}, skipping. {d.error}", None
    layout = v.extra.get("layout")
    if layout is not None and layout != version:
        why = f"the value is {v.schema} as Kafka {layout} wrote it (--kafka-version {layout} shows it)"
        return f"Error at offset {offset}, skipping. {why}", None
    data = schema(f"{v.schema}@{layout}" if layout else v.schema).kafka_view(v.data)
    if d.decoder == "transactions" and version == "4.4" and "transactionStatus" in data:
        status = data["transactionStatus"]
        data["transactionStatus"] = transactions.STATES[status] if 0 <= status < 8 else str(status)
    name = "type" if d.decoder == "share-group-state" and version == "4.0" else "version"
    return key, kafka_json({name: str(v.version), "data": data})


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
    empty = f["transactionStatus"] == 0  # Kafka lists the partitions of a transaction that is not Empty
    parts = ",".join(
        f"{tp['topic']}-{p}"
        for tp in (() if empty else f["transactionPartitions"] or ())
        for p in tp["partitionIds"]
    )
    return key, (
        f"producerId:{f['producerId']},producerEpoch:{f['producerEpoch']},"
        f"state={transactions.state_name(f['transactionStatus'])},partitions=[{parts}],"
        f"txnLastUpdateTimestamp={f['transactionLastUpdateTimestampMs']},txnTimeoutMs={f['transactionTimeoutMs']}"
    )


def remote_log_text(d: Decoded, offset: int) -> str:
    """A ``__remote_log_metadata`` record as ``--remote-log-metadata-decoder`` prints it: the Java
    ``toString`` of the object Kafka builds (not JSON), or ``Error at offset O, skipping. reason``."""
    v = d.value
    if d.error is not None or v is None or v.data is None:
        return f"Error at offset {offset}, skipping. {d.error}"
    f, api_key = v.data, v.extra["apiKey"]
    states = remote_log.PARTITION_STATES if api_key == 2 else remote_log.SEGMENT_STATES
    state_id = f["remotePartitionDeleteState" if api_key == 2 else "remoteLogSegmentState"]
    if not 0 <= state_id < len(states):
        return f"Error at offset {offset}, skipping. state can not be null"
    state = states[state_id]
    if api_key == 2:
        return (
            f"RemotePartitionDeleteMetadata{{topicPartition={_topic_partition(f['topicIdPartition'])}, "
            f"state={state}, eventTimestampMs={f['eventTimestampMs']}, brokerId={f['brokerId']}}}"
        )
    custom = f["customMetadata"]
    custom_text = "Optional.empty" if custom is None else f"Optional[CustomMetadata{{{len(custom)} bytes}}]"
    if api_key == 1:
        return (
            f"RemoteLogSegmentMetadataUpdate{{remoteLogSegmentId={_segment_id(f['remoteLogSegmentId'])}, "
            f"customMetadata={custom_text}, state={state}, eventTimestampMs={f['eventTimestampMs']}, "
            f"brokerId={f['brokerId']}}}"
        )
    epochs = {e["leaderEpoch"]: e["offset"] for e in f["segmentLeaderEpochs"]}
    if not epochs:
        return f"Error at offset {offset}, skipping. segmentLeaderEpochs can not be null or empty"
    start, end = f["startOffset"], f["endOffset"]
    if api_key == 0 and start < 0:
        why = f"Unexpected start offset = {start}. StartOffset for a remote segment cannot be negative"
        return f"Error at offset {offset}, skipping. {why}"
    if api_key == 0 and end < start:
        why = (
            f"Unexpected end offset = {end}. EndOffset for a remote segment cannot be less than "
            f"startOffset = {start}"
        )
        return f"Error at offset {offset}, skipping. {why}"
    epochs_text = "{" + ", ".join(f"{e}={o}" for e, o in sorted(epochs.items())) + "}"
    tail = (
        f"segmentLeaderEpochs={epochs_text}, segmentSizeInBytes={f['segmentSizeInBytes']}, "
        f"customMetadata={custom_text}, state={state}, "
        f"txnIdxEmpty={_JAVA_BOOL[f.get('txnIndexEmpty', False)]}}}"
    )
    if api_key == 3:
        return (
            f"RemoteLogSegmentMetadataSnapshot{{segmentId={f['segmentId']}, startOffset={start}, "
            f"endOffset={end}, maxTimestampMs={f['maxTimestampMs']}, {tail}"
        )
    return (
        f"RemoteLogSegmentMetadata{{remoteLogSegmentId={_segment_id(f['remoteLogSegmentId'])}, "
        f"startOffset={start}, endOffset={end}, brokerId={f['brokerId']}, "
        f"maxTimestampMs={f['maxTimestampMs']}, eventTimestampMs={f['eventTimestampMs']}, {tail}"
    )


_JAVA_BOOL = {True: "true", False: "false"}


def _topic_partition(tp: dict[str, Any]) -> str:
    return f"{tp['id']}:{tp['name']}-{tp['partition']}"


def _segment_id(seg: dict[str, Any]) -> str:
    return (
        f"RemoteLogSegmentId{{topicIdPartition={_topic_partition(seg['topicIdPartition'])}, id={seg['id']}}}"
    )


def part_text(p: Part | None, tombstone: bool = False, time: TimeMode | None = None) -> str:
    """One table cell: ``OffsetCommitValue v3 offset=5 leaderEpoch=-1 ...`` (fields in schema order,
    then any ``_unknownTaggedFields={"9":"beef"}``); with ``time``, a field of epoch milliseconds
    (``commitTimestamp``) shown as ``--time`` asks."""
    if p is None:
        return "<DELETE>" if tombstone else "null"
    name = p.schema or "?"
    if "type" in p.extra:
        name = p.extra["type"]
    head = f"{name} v{p.version}" if p.version is not None else name
    if p.data is None:
        return f"{head} 0x{p.hex or ''}"
    fields = " ".join(f"{k}={_field_text(k, v, time)}" for k, v in p.data.items())
    return f"{head} {fields}".rstrip()


def _field_text(name: str, value: Any, time: TimeMode | None) -> str:
    if isinstance(value, str):
        return value
    if time is not None and type(value) is int and is_time_field(name):
        return time_text(value, time)
    return kafka_json(value)


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
    if isinstance(item, OffsetCheckpointEntry):
        return f"{item.topic} {item.partition} {item.offset}\n"
    if isinstance(item, Property):
        return f"{item.key}={item.value}\n"
    return None


_SIDE_TYPES = {
    OffsetIndexEntry: "indexEntry",
    TimeIndexEntry: "timeIndexEntry",
    AbortedTxn: "abortedTxn",
    ProducerSnapshotHeader: "producerSnapshot",
    ProducerEntry: "producer",
    LeaderEpochEntry: "leaderEpoch",
    PartitionMetadata: "partitionMetadata",
    OffsetCheckpointEntry: "offsetCheckpoint",
    Property: "property",
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

    def __init__(self, time: TimeMode = "iso") -> None:
        self._kind: type | None = None
        self._widths: tuple[int, ...] = ()
        self._time = time  # how a time field (``timestamp``, ``lastTimestamp``) is shown

    def reset(self) -> None:
        self._kind = None

    def rows(self, item: SideItem) -> list[str]:
        fields = side_row_fields(item)
        out = []
        if type(item) is not self._kind:
            self._kind = type(item)
            stamp = len(time_text(1_700_000_000_000, self._time))
            self._widths = tuple(max(len(name), stamp if is_time_field(name) else 13) for name in fields)
            out.append("  ".join(n.rjust(w) for n, w in zip(fields, self._widths, strict=True)) + "\n")
        cells = (
            "-"
            if v is None
            else _BOOL.get(v, str(v))
            if isinstance(v, bool)
            else time_text(v, self._time)
            if is_time_field(k) and type(v) is int
            else str(v)
            for k, v in fields.items()
        )
        out.append("  ".join(c.rjust(w) for c, w in zip(cells, self._widths, strict=True)).rstrip(" ") + "\n")
        return out
