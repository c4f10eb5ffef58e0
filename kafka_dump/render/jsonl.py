"""JSON Lines: one lossless object per batch (records nested) and one per problem, written as bytes.

The hot writers have compiled twins (``native/jsonl.c``): ``batch_json`` a batch's line, ``run_json``
a ``BatchRun``'s, ``plain_run_json`` a run of plain v0/v1 messages straight from its bytes (a Batch
and a Record for each message of an old segment would cost more than its JSON).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from kafka_dump.internal_topics import RecordDecoder
from kafka_dump.log.sidefiles import SideItem
from kafka_dump.model import Batch, Problem, Record
from kafka_dump.native import bind, native
from kafka_dump.render.decoded import decoded_json, file_decoder, side_object
from kafka_dump.render.payload import ENCODERS, PayloadEncoding, header_key
from kafka_dump.wire import decode_legacy_run

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
_quote: Callable[[str], str] = json.encoder.encode_basestring
_PAYLOAD_CODES = {PayloadEncoding.TEXT: 0, PayloadEncoding.BASE64: 1, PayloadEncoding.HEX: 2}
_BOOL = {True: "true", False: "false", None: "null"}
_NOT_CONTROL = b'"isControl":false,'
_ABORTED = b'"isControl":false,"aborted":true,'


def records_json(records: Sequence[Record], magic: int, payload: int) -> str:
    """The JSON array of records; ``payload`` is 0 (text), 1 (base64) or 2 (hex)."""
    enc = ENCODERS[list(_PAYLOAD_CODES)[payload]]
    quote = _quote

    def data(b: bytes | None) -> str:
        return "null" if b is None else quote(enc(b))

    parts = []
    for r in records:
        headers = ",".join(f'{{"key":{quote(header_key(h.key))},"value":{data(h.value)}}}' for h in r.headers)
        if magic >= 2:
            tail = f',"sequence":{r.sequence}'
        else:
            tail = f',"crc":{_number(r.crc)},"crcValid":{_BOOL[r.crcValid]}'
        if r.control is not None:
            c = r.control
            tail += (
                f',"control":{{"type":{quote(c.type_name)},"version":{c.version},'
                f'"coordinatorEpoch":{_number(c.coordinatorEpoch)}}}'
            )
        parts.append(
            f'{{"offset":{r.offset},"timestamp":{r.timestamp},"key":{data(r.key)},"value":{data(r.value)},'
            f'"headers":[{headers}]{tail}}}'
        )
    return "[" + ",".join(parts) + "]"


def _number(n: int | None) -> str:
    return "null" if n is None else str(n)


def batch_json(file_json: bytes, b: Batch, records: Sequence[Record] | None, payload: int, /) -> bytes:
    """One batch's JSON line; ``file_json`` is the file name JSON-quoted (once per file), ``records``
    a subset of ``b.records`` or None for headers only."""
    body = "null" if records is None else records_json(records, b.magic, payload)
    return (
        f'{{"type":"batch","file":{file_json.decode()},"position":{b.position},"baseOffset":{b.baseOffset},'
        f'"lastOffset":{b.lastOffset},"magic":{b.magic},"compression":"{b.compression.label}",'
        f'"timestampType":"{b.timestampType.label}","baseTimestamp":{b.baseTimestamp},'
        f'"maxTimestamp":{b.maxTimestamp},"producerId":{b.producerId},"producerEpoch":{b.producerEpoch},'
        f'"baseSequence":{b.baseSequence},"lastSequence":{b.lastSequence},'
        f'"partitionLeaderEpoch":{b.partitionLeaderEpoch},"isTransactional":{_BOOL[b.isTransactional]},'
        f'"isControl":{_BOOL[b.isControl]},"deleteHorizonMs":{_number(b.deleteHorizonMs)},"crc":{b.crc},'
        f'"crcValid":{_BOOL[b.crcValid]},"sizeInBytes":{b.sizeInBytes},'
        f'"recordCount":{_number(b.recordCount)},"records":{body}}}\n'
    ).encode()


def run_json(file: str, file_json: bytes, batches: Sequence[Batch], payload: int, /) -> bytes:
    """The lines of a run of batches of the file ``file``, each with all its records, in one bytes."""
    for b in batches:
        if b.file != file:
            raise ValueError("run_json takes the batches of one file")
    return b"".join([batch_json(file_json, b, b.records, payload) for b in batches])


def plain_run_json(
    file_json: bytes, data: bytes, pos: int, end: int, file_pos: int, with_records: bool, payload: int, /
) -> tuple[bytes, int, int]:
    """The run of plain v0/v1 messages at ``data[pos]`` (file position ``file_pos``) as its JSON lines:
    (lines, batches, bytes used)."""
    batches, used = decode_legacy_run("", data, pos, end, file_pos, with_records)
    return run_json("", file_json, batches, payload), len(batches), used


batch_json = bind(batch_json)(native.batch_json if native else None)
run_json = bind(run_json)(native.run_json if native else None)
plain_run_json = bind(plain_run_json)(native.plain_run_json if native else None)


def decoded_batch_json(
    file_json: bytes, b: Batch, records: Sequence[Record], payload: int, decode: RecordDecoder
) -> bytes:
    """A batch's line with a ``decoded`` object on each record a decoder read (plain Python: rare)."""
    head = batch_json(file_json, b, None, payload)
    parts = []
    for r in records:
        one = records_json((r,), b.magic, payload)[1:-1]
        d = decode(b.isControl, r)
        parts.append(one if d is None else f'{one[:-1]},"decoded":{decoded_json(d)}}}')
    return head[: -len(b"null}\n")] + ("[" + ",".join(parts) + "]}\n").encode("utf-8", "backslashreplace")


class JsonRenderer:
    """Writes each batch as it is read; with ``decode`` (``--decode``), records a decoder reads get a
    ``decoded`` object (``render/decoded.py``)."""

    def __init__(self, payload: PayloadEncoding = PayloadEncoding.TEXT, decode: str = "none") -> None:
        self._decode_choice = decode
        self._decode: RecordDecoder | None = None
        self._decodes_data = False
        self._payload = _PAYLOAD_CODES[payload]
        self._file = ""
        self._file_json = b'""'

    def file_start(self, path: str, base_offset: int | None, snapshot: tuple[int, int] | None) -> list[bytes]:
        self._decode, self._decodes_data = file_decoder(self._decode_choice, path)
        return []

    def _set_file(self, file: str) -> None:
        self._file = file
        self._file_json = _quote(file).encode("utf-8", "backslashreplace")

    def batch(self, batch: Batch, records: tuple[Record, ...] | None) -> list[bytes]:
        if batch.file != self._file:
            self._set_file(batch.file)
        if self._decode is not None and records and (self._decodes_data or batch.isControl):
            return [decoded_batch_json(self._file_json, batch, records, self._payload, self._decode)]
        return [batch_json(self._file_json, batch, records, self._payload)]

    def run(self, batches: Sequence[Batch]) -> list[bytes]:
        """A run of batches of one file, each with all its records (``BatchRun``), as one bytes object."""
        first = batches[0]
        if first.file != self._file:
            self._set_file(first.file)
        if self._decode is not None and (self._decodes_data or any(b.isControl for b in batches)):
            return [line for b in batches for line in self.batch(b, b.records)]
        return [run_json(self._file, self._file_json, batches, self._payload)]

    def plain_run(
        self, file: str, data: bytes, pos: int, end: int, file_pos: int, with_records: bool
    ) -> tuple[bytes, int, int] | None:
        """A run of plain v0/v1 messages of the file being read, from its bytes: (lines, batches,
        bytes used); None when its records are decoded (``--decode``), to be read as batches."""
        if self._decodes_data:
            return None
        if file != self._file:
            self._set_file(file)
        return plain_run_json(self._file_json, data, pos, end, file_pos, with_records, self._payload)

    def aborted_batch(self, batch: Batch, records: tuple[Record, ...] | None) -> list[bytes]:
        """A data batch of an aborted transaction: its line with ``"aborted":true`` after ``isControl``
        (the first such key of a line is the batch's: keys inside strings have their quotes escaped)."""
        return [line.replace(_NOT_CONTROL, _ABORTED, 1) for line in self.batch(batch, records)]

    def problem(self, problem: Problem) -> list[bytes]:
        return [(_dumps(problem_object(problem)) + "\n").encode("utf-8", "backslashreplace")]

    def side(self, path: str, item: SideItem) -> list[bytes]:
        return [(_dumps(side_object(path, item)) + "\n").encode("utf-8", "backslashreplace")]

    def file_end(self, path: str, trailing: int) -> list[bytes]:
        return []


def problem_object(p: Problem) -> dict[str, Any]:
    """A problem's JSON object: its fields in order, its kind by label."""
    obj: dict[str, Any] = {"type": "problem"} | {name: getattr(p, name) for name in p.__match_args__}
    obj["kind"] = p.kind.label
    return obj


# Characters JSON leaves raw (ensure_ascii=False) that a terminal acts on: C1 controls (U+0080-009F,
# U+009B is a CSI), zero-width and direction marks and overrides, line/paragraph separators, BOM.
_TERMINAL_UNSAFE = re.compile(
    rb"\xc2[\x80-\x9f]|\xe2\x80[\x8b-\x8f\xa8-\xae]|\xe2\x81[\xa0-\xaf]|\xef\xbb\xbf"  # in UTF-8
)


def _json_escape(match: re.Match[bytes]) -> bytes:
    return b"\\u%04x" % ord(match.group().decode())


def terminal_safe(line: bytes) -> bytes:
    """A JSON line for a terminal: the same JSON value, with characters a terminal acts on as ``\\uXXXX``."""
    return _TERMINAL_UNSAFE.sub(_json_escape, line)


def count_json(path: str, count: int) -> bytes:
    """``dump --count``'s line for one file, as JSON: ``{"file": …, "count": N}``."""
    return b'{"file":%s,"count":%d}\n' % (_quote(path).encode("utf-8", "backslashreplace"), count)
