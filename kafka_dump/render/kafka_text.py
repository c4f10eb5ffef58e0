"""The line format of ``kafka-dump-log.sh --deep-iteration --print-data-log`` (Kafka 3.x/4.x).

Format strings follow ``DumpLogSegments`` so that scripts for Kafka's tool keep working, without its
slips (the stray ``}`` after a legacy crc). Problems other than the tail go to stderr. On a terminal
(``escape=True``) control characters are escaped; piped, the bytes stay Kafka's.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from kafka_dump.internal_topics import RecordDecoder
from kafka_dump.log.sidefiles import SideItem, side_file_kind
from kafka_dump.model import Batch, ControlType, Problem, Record
from kafka_dump.render.decoded import (
    CONTROL_LABELS,
    file_decoder,
    kafka_control,
    kafka_key_payload,
    side_kafka_line,
)
from kafka_dump.render.payload import printable

_BOOL = {True: "true", False: "false"}


class KafkaTextRenderer:
    """``records=False``: batch lines only (the tool without --deep-iteration); ``decode``
    (``--decode``): keys and payloads as the tool's decoders print them, KRaft control records as JSON."""

    def __init__(
        self, *, records: bool = True, print_data: bool = True, escape: bool = False, decode: str = "none"
    ) -> None:
        self._records = records
        self._data = print_data
        self._escape = escape
        self._shown: Callable[[str], str] = printable if escape else str  # a name from the file
        self._decode_choice = decode
        self._decode: RecordDecoder | None = None
        self._side_entries = 0

    def file_start(self, path: str, base_offset: int | None, snapshot: tuple[int, int] | None) -> list[str]:
        self._side_entries = 0
        self._decode = file_decoder(self._decode_choice, path)[0]
        lines = [f"Dumping {self._shown(path)}\n"]
        name = Path(path).name
        if name.endswith(".log"):
            lines.append(f"Log starting offset: {base_offset if base_offset is not None else 0}\n")
        elif name == "bootstrap.checkpoint":
            lines.append("KRaft bootstrap snapshot\n")
        elif snapshot is not None:
            lines.append(f"Snapshot end offset: {snapshot[0]}, epoch: {snapshot[1]}\n")
        return lines

    def batch(self, b: Batch, records: tuple[Record, ...] | None) -> list[str]:
        out = [batch_line(b)]
        if self._records and records is not None:
            for r in records:
                line = record_line(b, r, self._data, self._decode)
                out.append(printable(line[:-1]) + "\n" if self._escape else line)
        return out

    def aborted_batch(self, b: Batch, records: tuple[Record, ...] | None) -> list[str]:
        """Kafka's tool says nothing of aborted transactions: the same lines as any batch."""
        return self.batch(b, records)

    def problem(self, problem: Problem) -> list[str]:
        return []

    def side(self, path: str, item: SideItem) -> list[str]:
        self._side_entries += 1
        line = side_kafka_line(item)
        if line is None:
            return []
        return [self._shown(line[:-1]) + "\n"]

    def file_end(self, path: str, trailing: int) -> list[str]:
        if path.endswith(".index") and self._side_entries == 0:
            return [f"{self._shown(path)} is empty.\n"]
        # Kafka's tool reports trailing bytes of logs and snapshots only.
        if trailing > 0 and side_file_kind(path) is None:
            return [f"Found {trailing} invalid bytes at the end of {self._shown(Path(path).name)}\n"]
        return []


def batch_line(b: Batch) -> str:
    if b.magic >= 2:
        horizon = "OptionalLong.empty" if b.deleteHorizonMs is None else f"OptionalLong[{b.deleteHorizonMs}]"
        head = (
            f"baseOffset: {b.baseOffset} lastOffset: {b.lastOffset} count: {b.recordCount}"
            f" baseSequence: {b.baseSequence} lastSequence: {b.lastSequence} producerId: {b.producerId}"
            f" producerEpoch: {b.producerEpoch} partitionLeaderEpoch: {b.partitionLeaderEpoch}"
            f" isTransactional: {_BOOL[b.isTransactional]} isControl: {_BOOL[b.isControl]}"
            f" deleteHorizonMs: {horizon}"
        )
    else:
        head = f"offset: {b.lastOffset}"
    return (
        f"{head} position: {b.position} {b.timestampType.label}: {b.maxTimestamp} size: {b.sizeInBytes}"
        f" magic: {b.magic} compresscodec: {b.compression.label} crc: {b.crc} isvalid: {_BOOL[b.crcValid]}\n"
    )


def record_line(b: Batch, r: Record, print_data: bool, decode: RecordDecoder | None = None) -> str:
    parts = [
        f"| offset: {r.offset} {b.timestampType.label}: {r.timestamp}"
        f" keySize: {-1 if r.key is None else len(r.key)} valueSize: {-1 if r.value is None else len(r.value)}"
    ]
    if b.magic >= 2:
        keys = ",".join(h.key.decode("utf-8", "replace") for h in r.headers)
        parts.append(f" sequence: {r.sequence} headerKeys: [{keys}]")
    else:
        parts.append(f" isValid: {_BOOL[bool(r.crcValid)]} crc: {r.crc}")
    d = decode(b.isControl, r) if decode is not None else None
    if b.isControl:
        parts.append(_control(r) if d is None or r.control is None else kafka_control(r.control.type, d))
    elif d is not None:
        key, payload = kafka_key_payload(d, r.offset)
        if key is not None:
            parts.append(" key: " + key)
        if payload is not None:
            parts.append(" payload: " + payload)
    elif print_data:
        if r.key is not None:
            parts.append(" key: " + r.key.decode("utf-8", "replace"))
        if r.value is not None:
            parts.append(" payload: " + r.value.decode("utf-8", "replace"))
    parts.append("\n")
    return "".join(parts)


def _control(r: Record) -> str:
    c = r.control
    if c is None:
        return " controlType: UNKNOWN(-1)"
    if c.type in (ControlType.ABORT, ControlType.COMMIT):
        return f" endTxnMarker: {c.type_name} coordinatorEpoch: {c.coordinatorEpoch}"
    label = CONTROL_LABELS.get(c.type)
    if label is not None:
        # Kafka prints the decoded KRaft message as JSON here; with --decode none, kdump shows its hex.
        return f"{label}{'null' if r.value is None else r.value.hex()}"
    return f" controlType: {c.type_name}"
