"""JSON Lines: one lossless object per batch (records nested) and one per problem."""

from __future__ import annotations

import json
from typing import Any

from kafka_dump.model import Batch, Problem, Record
from kafka_dump.render.payload import ENCODERS, PayloadEncoding, header_key

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


class JsonRenderer:
    """Writes each batch as soon as it is read; never holds more than one batch."""

    def __init__(self, payload: PayloadEncoding = PayloadEncoding.TEXT) -> None:
        self._enc = ENCODERS[payload]

    def file_start(self, path: str) -> list[str]:
        return []

    def batch(self, batch: Batch, records: tuple[Record, ...] | None) -> list[str]:
        return [_dumps(self.batch_object(batch, records)) + "\n"]

    def problem(self, problem: Problem) -> list[str]:
        return [_dumps(problem_object(problem)) + "\n"]

    def file_end(self, path: str, trailing: int) -> list[str]:
        return []

    def batch_object(self, b: Batch, records: tuple[Record, ...] | None) -> dict[str, Any]:
        """The JSON object of a batch; ``records`` may be a filtered subset of ``b.records``."""
        return {
            "type": "batch",
            "file": b.file,
            "position": b.position,
            "baseOffset": b.baseOffset,
            "lastOffset": b.lastOffset,
            "magic": b.magic,
            "compression": b.compression.label,
            "timestampType": b.timestampType.label,
            "baseTimestamp": b.baseTimestamp,
            "maxTimestamp": b.maxTimestamp,
            "producerId": b.producerId,
            "producerEpoch": b.producerEpoch,
            "baseSequence": b.baseSequence,
            "lastSequence": b.lastSequence,
            "partitionLeaderEpoch": b.partitionLeaderEpoch,
            "isTransactional": b.isTransactional,
            "isControl": b.isControl,
            "deleteHorizonMs": b.deleteHorizonMs,
            "crc": b.crc,
            "crcValid": b.crcValid,
            "sizeInBytes": b.sizeInBytes,
            "recordCount": b.recordCount,
            "records": None if records is None else [self.record_object(b, r) for r in records],
        }

    def record_object(self, b: Batch, r: Record) -> dict[str, Any]:
        enc = self._enc
        obj: dict[str, Any] = {
            "offset": r.offset,
            "timestamp": r.timestamp,
            "key": None if r.key is None else enc(r.key),
            "value": None if r.value is None else enc(r.value),
            "headers": [
                {"key": header_key(h.key), "value": None if h.value is None else enc(h.value)}
                for h in r.headers
            ],
        }
        if b.magic >= 2:
            obj["sequence"] = r.sequence
        else:
            obj["crc"] = r.crc
            obj["crcValid"] = r.crcValid
        if r.control is not None:
            obj["control"] = {
                "type": r.control.type_name,
                "version": r.control.version,
                "coordinatorEpoch": r.control.coordinatorEpoch,
            }
        return obj


def problem_object(p: Problem) -> dict[str, Any]:
    return {
        "type": "problem",
        "file": p.file,
        "position": p.position,
        "length": p.length,
        "kind": p.kind.label,
        "reason": p.reason,
        "baseOffset": p.baseOffset,
    }
