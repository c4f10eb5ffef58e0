"""``dump -x``: one record at a time, one field a line, as psql's ``\\x`` shows a row.

For reading a value on a terminal: values and header values are whole (no ``--max-bytes``, no cut
to the width; the terminal wraps a long line), every header has its own line, and every text from
the file is escaped as the table escapes it (control characters as ``\\x1b``, binary as ``0x`` hex).
"""

from __future__ import annotations

from collections.abc import Sequence

from kafka_dump.internal_topics import Decoded, RecordDecoder
from kafka_dump.log.sidefiles import SideItem
from kafka_dump.model import Batch, Compression, Problem, Record
from kafka_dump.render.clock import time_text
from kafka_dump.render.decoded import SideTable, file_decoder, kafka_json, part_text
from kafka_dump.render.output import unpadded
from kafka_dump.render.payload import header_key, printable
from kafka_dump.render.rows import TimeMode
from kafka_dump.render.table import (
    Segment,
    batch_title,
    control_cell,
    data_cell,
    message_title,
    problem_title,
)
from kafka_dump.render.theme import STYLES, sgr

_NAME = 6  # the width of the field names: "header" is the longest


class ExpandedRenderer:
    """A block of lines per record under its batch's line; the same events as ``TableRenderer``."""

    def __init__(
        self, *, records: bool = True, time: TimeMode = "iso", color: bool = False, decode: str = "none"
    ) -> None:
        self._records = records
        self._time = time
        self._sgr = {name: sgr(name) if color else ("", "") for name in STYLES}
        self._sgr[""] = ("", "")
        self._decode_choice = decode
        self._decode: RecordDecoder | None = None
        self._decodes_data = False
        self._side = SideTable(time)
        self._path: str | None = None
        self._aborted = False

    def file_start(self, path: str, base_offset: int | None, snapshot: tuple[int, int] | None) -> list[bytes]:
        self._side.reset()
        self._path = path
        self._decode, self._decodes_data = file_decoder(self._decode_choice, path)
        return [self._line([(f"Dumping {printable(path)}", "kdump.file")])]

    def batch(self, b: Batch, records: tuple[Record, ...] | None) -> list[bytes]:
        if b.magic < 2 and b.compression is Compression.NONE:
            title = message_title(b, with_time=None if self._records else self._time)
        else:
            with_time = None if self._records else self._time
            title = batch_title(b, with_time=with_time, aborted=self._aborted, time=self._time)
        if records is None and self._records:
            title = [*title, (" · ", "kdump.label"), ("records not read", "kdump.problem")]
        out = [self._line(title)]
        if self._records and records is not None:
            for r in records:
                out += self._record(b, r)
        return out

    def aborted_batch(self, b: Batch, records: tuple[Record, ...] | None) -> list[bytes]:
        self._aborted = True
        try:
            return self.batch(b, records)
        finally:
            self._aborted = False

    def problem(self, p: Problem) -> list[bytes]:
        return [self._line(problem_title(p, dumped=self._path))]

    def side(self, path: str, item: SideItem) -> list[bytes]:
        return [(printable(row[:-1]) + "\n").encode() for row in self._side.rows(item)]

    def file_end(self, path: str, trailing: int) -> list[bytes]:
        return []

    def _record(self, b: Batch, r: Record) -> list[bytes]:
        head = f"-[ offset {r.offset} ]"
        out = [self._line([(head, "kdump.header")])]
        fields: list[tuple[str, list[Segment]]] = [("time", [(time_text(r.timestamp, self._time), "")])]
        decoded = self._decode(b.isControl, r) if self._decode is not None else None
        if decoded is not None and not b.isControl and self._decodes_data:
            key = part_text(decoded.key, time=self._time)
            if decoded.key is None and decoded.decoder == "metadata":
                key = ""
            text = part_text(decoded.value, decoded.tombstone, self._time)
            if decoded.error is not None:
                text += f" ({decoded.error})"
            fields += [("key", [(printable(key), "")]), ("value", [(printable(text), "")])]
        else:
            fields += [("key", [_whole(r.key)]), ("value", [_whole(r.value)])]
        for h in r.headers:
            fields.append(
                ("header", [(printable(header_key(h.key)), ""), (" = ", "kdump.label"), _whole(h.value)])
            )
        note = self._note(b, r, decoded)
        if note is not None:
            fields.append(("note", [note]))
        for name, shown in fields:
            out.append(self._line([(name.ljust(_NAME), "kdump.label"), (" │ ", "kdump.frame"), *shown]))
        return out

    def _note(self, b: Batch, r: Record, d: Decoded | None) -> Segment | None:
        """A control record's type (with its JSON when decoded), or an inner message's invalid CRC."""
        if b.isControl:
            text, _, style = control_cell(r)
            if r.control is not None and d is not None and d.value is not None and d.value.data is not None:
                text = f"{r.control.type_name} v{r.control.version} {printable(kafka_json(d.value.data))}"
            return (text, style)
        if r.crcValid is False:
            return (f"CRC INVALID (stored {r.crc})", "kdump.invalid")
        return None

    def _line(self, segments: Sequence[Segment]) -> bytes:
        sgr_ = self._sgr
        parts = []
        for text, style in segments:
            start, end = sgr_[style]
            parts.append(f"{start}{text}{end}" if start else text)
        return (unpadded("".join(parts)) + "\n").encode()


def _whole(data: bytes | None) -> Segment:
    """A key or value whole: text escaped, or ``0x`` hex, or ``null`` (styled apart from the text)."""
    text, _, style = data_cell(data, len(data) if data is not None else 0)
    return (text, style)
