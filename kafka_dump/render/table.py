"""Readable tables, streamed: rows of known widths written directly with Rich's box characters.

Rich's ``Table`` is too slow for a million rows: here rows are buffered a flush at a time, widths
taken from the buffer, lines written with ``rich.box.HEAVY_HEAD`` and the theme's ANSI codes. A file's
batches share one table, each under a section row (a run of plain v0/v1 messages, or of one-record batches
alike, under one); where a column must grow, a rule joins the old widths to the new. On a terminal the
columns share its width, the value first, and are cut with ``…`` to fit. File data is text or
hex, control characters escaped; ``--decode`` shows decoded keys and values (KRaft control: JSON).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from itertools import zip_longest

from rich import box
from rich.cells import cell_len, set_cell_size

from kafka_dump.internal_topics import RecordDecoder
from kafka_dump.log.sidefiles import SideItem
from kafka_dump.model import Batch, Compression, ControlType, Problem, ProblemKind, Record, TimestampType
from kafka_dump.render import rows as _rows
from kafka_dump.render.clock import time_text
from kafka_dump.render.decoded import SideTable, file_decoder, kafka_json, part_text
from kafka_dump.render.payload import header_key, printable
from kafka_dump.render.rows import COLUMN_BITS, TIME_BOTH, TIME_ISO, TIME_MS, TimeMode
from kafka_dump.render.theme import STYLES, number, plural, sgr

FLUSH_ROWS = 256  # rows buffered before they are written: the first rows show at once, memory stays flat

Cell = tuple[str, int, str]  # text, width in terminal cells, theme style name ("" for none)

_BOX = box.HEAVY_HEAD
_OFFSET, _TIME, _KEY, _VALUE, _HEADERS, _NOTE = range(6)
# Columns that share a terminal's width, the weight of each share and the least width each keeps:
# the value takes two shares, so it is the widest column whenever it is the longest. The offset stays
# whole; the time gives the value room down to ``_SHORT_TIME`` (the minute), and is cut further (to
# ``_LEAST_TIME``) only when the others are at their least.
_SHARES = ((_KEY, 1, 5), (_VALUE, 2, 8), (_HEADERS, 1, 5), (_NOTE, 1, 5))
_SHORT_TIME, _LEAST_TIME = 17, 10
_NONE = Compression.NONE
_NULL: Cell = ("null", 4, "kdump.null")
_TIME_LABELS = {"iso": "time (UTC)", "ms": "timestamp (ms)", "both": "time (UTC) and ms"}
_TIME_CODES = {"iso": TIME_ISO, "ms": TIME_MS, "both": TIME_BOTH}
_COLUMN_MASK = (1 << COLUMN_BITS) - 1


def data_cell(data: bytes | None, max_bytes: int) -> Cell:
    """A key or value: text when it is UTF-8 (control characters escaped), else ``0x`` hex; cut at
    ``max_bytes`` with ``…``; ``null`` (styled apart from the text "null") when absent."""
    if data is None:
        return _NULL
    cut, more = (data, "") if len(data) <= max_bytes else (data[:max_bytes], "…")
    try:
        text = cut.decode()
    except UnicodeDecodeError as exc:
        # A cut through a multi-byte character is still text: drop the partial character.
        if not (more and exc.start >= len(cut) - 3 and exc.reason == "unexpected end of data"):
            return _hex(cut, more)
        text = cut[: exc.start].decode()
    if text.isprintable():
        return (text + more, (len(text) if text.isascii() else cell_len(text)) + len(more), "")
    return _escaped(text, cut, more)


def _hex(data: bytes, more: str) -> Cell:
    text = "0x" + data.hex() + more
    return (text, len(text), "kdump.hex")


def _escaped(text: str, data: bytes, more: str) -> Cell:
    """Mostly text with a few control characters: escaped; binary that happens to be UTF-8: hex."""
    shown = printable(text)
    if "\x00" in text or (len(shown) - len(text)) > len(text):
        return _hex(data, more)
    shown += more
    return (shown, cell_len(shown), "")


def _headers_cell(record: Record, max_bytes: int) -> Cell:
    """``key=value, key=null``: header keys escaped like any text from the file, values as keys are."""
    text = ", ".join(
        f"{printable(header_key(h.key))}={data_cell(h.value, max_bytes)[0]}" for h in record.headers
    )
    return (text, len(text) if text.isascii() else cell_len(text), "")


def control_cell(record: Record) -> Cell:
    c = record.control
    if c is None:
        return ("control record, key unreadable", 31, "kdump.problem")
    # The type alone (its version when not 0): the coordinator epoch is in --format json and kafka.
    text = c.type_name if c.version == 0 else f"{c.type_name} v{c.version}"
    return (text, len(text), _CONTROL_STYLES.get(c.type, "kdump.control"))


_CONTROL_STYLES = {int(ControlType.COMMIT): "kdump.commit", int(ControlType.ABORT): "kdump.abort"}


def _invalid_cell(record: Record) -> Cell:
    text = f"CRC INVALID (stored {record.crc})"
    return (text, len(text), "kdump.invalid")


Segment = tuple[str, str]  # text, theme style name


def batch_title(
    b: Batch, *, with_time: TimeMode | None = None, aborted: bool = False, time: TimeMode = "iso"
) -> list[Segment]:
    """A batch header on one line, short enough for 120 columns: defaults and absent fields left out,
    what must not be missed (an invalid CRC, transactional, aborted, control) first, before any cut.
    ``with_time``: show the max timestamp so; ``time``: how any other time is shown."""
    count = b.recordCount if b.recordCount is not None else 0
    if b.baseOffset == b.lastOffset and count == 1:
        parts: list[Segment] = [(f"offset {b.baseOffset}", "")]
    else:
        parts = [(f"offsets {b.baseOffset}..{b.lastOffset}", ""), (plural(count, "record"), "")]
    if not b.crcValid:
        parts.append((f"CRC INVALID (stored {b.crc})", "kdump.invalid"))
    if b.isTransactional:
        parts.append(("transactional", "kdump.transactional"))
    if aborted:
        parts.append(("aborted", "kdump.aborted"))
    if b.isControl:
        parts.append(("control", "kdump.control"))
    codec = "" if b.compression is _NONE else f" {b.compression.label}"
    parts += [(f"v{b.magic}{codec}", ""), (f"{number(b.sizeInBytes)} B at {b.position}", "")]
    if b.timestampType is TimestampType.LOG_APPEND_TIME:
        parts.append(
            ("LogAppendTime" + (f" {time_text(b.maxTimestamp, with_time)}" if with_time else ""), "")
        )
    elif with_time and b.maxTimestamp != -1:
        parts.append((f"maxTime {time_text(b.maxTimestamp, with_time)}", ""))
    if b.magic >= 2:
        if b.producerId >= 0:
            seq = f" seq {b.baseSequence}..{b.lastSequence}" if b.baseSequence >= 0 else ""
            parts.append((f"producer {b.producerId} epoch {b.producerEpoch}{seq}", ""))
        if b.partitionLeaderEpoch >= 0:
            parts.append((f"leaderEpoch {b.partitionLeaderEpoch}", ""))
        if b.deleteHorizonMs is not None:
            parts.append((f"deleteHorizon {time_text(b.deleteHorizonMs, with_time or time)}", ""))
    return _joined(parts)


def message_title(b: Batch, *, with_time: TimeMode | None = None) -> list[Segment]:
    """One plain v0/v1 message (a log entry of its own) for ``--batches-only``."""
    parts: list[Segment] = [(f"offset {b.lastOffset}", "")]
    if not b.crcValid:
        parts.append((f"CRC INVALID (stored {b.crc})", "kdump.invalid"))
    parts += [(f"v{b.magic} message", ""), (f"{number(b.sizeInBytes)} B at {b.position}", "")]
    if b.timestampType is TimestampType.LOG_APPEND_TIME:
        parts.append(("LogAppendTime", ""))
    if with_time and b.maxTimestamp != -1:
        parts.append((time_text(b.maxTimestamp, with_time), ""))
    return _joined(parts)


def _singles_title(b: Batch) -> list[Segment]:
    """The section row of consecutive one-record batches alike but for offset, size and place."""
    parts: list[Segment] = [("batches of one record each", "")]
    if b.isTransactional:
        parts.append(("transactional", "kdump.transactional"))
    codec = "" if b.compression is _NONE else f" {b.compression.label}"
    parts.append((f"v{b.magic}{codec}", ""))
    if b.timestampType is TimestampType.LOG_APPEND_TIME:
        parts.append(("LogAppendTime", ""))
    if b.producerId >= 0:
        parts.append((f"producer {b.producerId} epoch {b.producerEpoch}", ""))
    if b.partitionLeaderEpoch >= 0:
        parts.append((f"leaderEpoch {b.partitionLeaderEpoch}", ""))
    return _joined(parts)


def _alike(b: Batch, aborted: bool) -> tuple[object, ...] | None:
    """What a one-record v2 batch shares with the next one for both to go under one section row;
    None for a batch that keeps its own (several records, control, an invalid CRC, aborted...)."""
    if b.magic < 2 or b.recordCount != 1 or b.isControl or not b.crcValid or aborted:
        return None
    if b.baseOffset != b.lastOffset or b.deleteHorizonMs is not None:
        return None
    return (
        b.compression,
        b.timestampType,
        b.isTransactional,
        b.producerId,
        b.producerEpoch,
        b.partitionLeaderEpoch,
    )


def _run_title(b: Batch) -> list[Segment]:
    text = f"v{b.magic} messages, one per log entry, uncompressed"
    if b.timestampType is TimestampType.LOG_APPEND_TIME:
        text += " · LogAppendTime"
    return [(text, "kdump.batch")]


def problem_title(p: Problem, *, dumped: str | None = None) -> list[Segment]:
    """A problem: corruption in red, a tail (a fact, not corruption) in yellow. One in another file
    than the one ``dumped`` (a ``.txnindex`` read beside it) names that file."""
    where = f"at byte {p.position}"
    if dumped is not None and p.file != dumped:
        where = f"in {printable(os.path.basename(p.file))} {where}"
    corrupt = p.kind is ProblemKind.CORRUPT
    head = f"{'PROBLEM' if corrupt else 'TAIL'} {where} ({plural(p.length, 'byte')}, {p.kind.label})"
    return [(f"{head}: {printable(p.reason)}", "kdump.problem" if corrupt else "kdump.tail")]


def _joined(parts: list[Segment]) -> list[Segment]:
    """The parts of a title, `` · `` between them; unstyled parts take the batch line's style."""
    out: list[Segment] = []
    for text, style in parts:
        if out:
            out.append((" · ", "kdump.label"))
        out.append((text, style or "kdump.batch"))
    return out


class _Section:
    """A row that spans the table: a batch's header, the start of a run of messages, a problem."""

    __slots__ = ("segments", "width", "wrap")

    def __init__(self, segments: list[Segment], *, wrap: bool = False) -> None:
        self.wrap = wrap  # a problem is wrapped, never cut: its reason matters; a batch line is cut
        self.retitle(segments)

    def retitle(self, segments: list[Segment]) -> None:
        self.segments = segments
        self.width = sum(len(t) if t.isascii() else cell_len(t) for t, _ in segments)


_RULES_KEPT = 64  # tables' rules kept for the next file's (a dump of many small segments)


class TableRenderer:
    """The lines of the record tables as UTF-8 bytes, a flush's rows in one ``bytes``; buffered by
    column, plain cells made and written by ``render/rows.py``, the others (``_special``) drawn here."""

    def __init__(
        self,
        *,
        max_bytes: int = 64,
        records: bool = True,
        time: TimeMode = "iso",
        width: int | None = None,
        color: bool = False,
        flush_rows: int = FLUSH_ROWS,
        decode: str = "none",
    ) -> None:
        self._max = max_bytes
        self._side = SideTable(time)
        self._decode_choice = decode
        self._decode: RecordDecoder | None = None
        self._decodes_data = False  # the file's records have a decoder (not only KRaft control records)
        self._records = records
        self._time = time
        self._limit = width  # the terminal's width; None: never cut
        self._flush_rows = flush_rows
        self._sgr = {name: sgr(name) if color else ("", "") for name in STYLES}
        self._sgr[""] = ("", "")
        self._time_code = _TIME_CODES[time]
        self._new_buffer()
        self._widths: list[int] | None = None  # of the open table; 0 for a hidden column
        self._wanted: list[int] = []  # what the open table's rows needed, before fitting the terminal
        self._section_width = 0  # its widest section row
        # The run of plain v0/v1 messages in progress: its magic (-1: none) and timestamp type.
        self._run_magic = -1
        self._run_type = TimestampType.NO_TIMESTAMP_TYPE
        self._pending: list[Record] = []  # its records not yet in the columns
        self._pending_invalid: list[int] = []  # which of them have an invalid CRC
        self._labels = ["offset", _TIME_LABELS[time], "key", "value", "headers", "note"]
        self._label_widths = [len(x) for x in self._labels]
        self._rules: dict[tuple[str, tuple[int, ...]], bytes] = {}  # a table's top and bottom, by widths
        self._aborted = False  # the batch being added is data of an aborted transaction
        self._path: str | None = None  # the file being dumped
        # One-record batches alike (``_alike``) under one section row: what the last one shares, whether
        # the section row says so, and the first one's section row while it is buffered.
        self._alike_key: tuple[object, ...] | None = None
        self._alike_titled = False
        self._alike_section: _Section | None = None

    def _new_buffer(self) -> None:
        self._cols: list[list[str]] = [[], [], [], [], [], []]
        self._special: list[tuple[int, int, Cell]] = []  # (column, row, cell) of cells not plain ASCII
        # Widths learnt as cells are added: each column's widest special cell, the whole time, headers and
        # note columns; the longest offset, key and value, unless a cell was replaced (``_measure``).
        self._known = [0] * 6
        self._longest = [0] * 6
        self._measure = False
        self._sections: list[tuple[int, _Section]] = []  # (row it comes before, section)
        self._alike_section = None  # written

    # --- events ------------------------------------------------------------------------------

    def file_start(self, path: str, base_offset: int | None, snapshot: tuple[int, int] | None) -> list[bytes]:
        self._side.reset()
        self._path = path
        self._decode, self._decodes_data = file_decoder(self._decode_choice, path)
        heading = self._styled([(f"Dumping {printable(path)}", "kdump.file")]) + "\n"
        return [*self._flush(close=True), heading.encode()]

    def batch(self, b: Batch, records: tuple[Record, ...] | None) -> Sequence[bytes]:
        if not self._records:
            return self._batch_line(b)
        if b.compression is _NONE and b.magic < 2 and records is not None and len(records) == 1:
            # A plain v0/v1 message, a log entry of its own: one row, under one section for the run.
            # Its record waits in ``_pending`` and a run is added a column at a time.
            if b.magic != self._run_magic or b.timestampType is not self._run_type:
                self._start_run(b)  # after it, ``_pending`` is a new list
            pending = self._pending
            if not b.crcValid:
                self._pending_invalid.append(len(pending))
            pending.append(records[0])
            if len(pending) < self._flush_rows:
                return ()
            return self._flush(close=False)
        cols = self._cols
        if self._pending:
            self._end_run()
        self._run_magic = -1
        if records is None:
            self._alike_key = None
            # The records could not be read (a codec failed): the header says so, the problem why.
            title = [*batch_title(b, with_time=self._time, aborted=self._aborted), (" · ", "kdump.label")]
            self._sections.append((len(cols[0]), _Section([*title, ("records not read", "kdump.problem")])))
        else:
            first = len(cols[0])
            self._single_section(b, first)
            self._add_rows(records)
            if b.isControl:
                for i, r in enumerate(records, first):
                    self._set(_NOTE, i, control_cell(r))
            elif b.magic < 2:
                for i, r in enumerate(records, first):
                    if r.crcValid is False:
                        self._set(_NOTE, i, _invalid_cell(r))
            if self._decode is not None and (self._decodes_data or b.isControl):
                self._decode_rows(self._decode, first, records, b.isControl)
        if len(cols[0]) >= self._flush_rows:
            return self._flush(close=False)
        return ()

    def _single_section(self, b: Batch, row: int) -> None:
        """A batch's section row before ``row``; a one-record batch alike the one before it (``_alike``)
        goes under that one's section row, retitled for them all when it is still buffered."""
        alike = _alike(b, self._aborted)
        if alike is None or alike != self._alike_key:
            self._alike_key, self._alike_titled = alike, False
            section = _Section(batch_title(b, aborted=self._aborted, time=self._time))
            self._sections.append((row, section))
            self._alike_section = section if alike is not None else None
            return
        if self._alike_titled:
            return
        self._alike_titled = True
        title = _singles_title(b)
        if self._alike_section is not None:  # the first one's section row, not yet written
            self._alike_section.retitle(title)
        else:
            self._sections.append((row, _Section(title)))

    def run(self, batches: Sequence[Batch]) -> list[bytes]:
        """A run of batches, each with all its records (a ``BatchRun``): what ``batch`` answers for
        each, in one call; plain v0/v1 messages are taken a flush's worth at a time."""
        if not self._records:
            return [line for b in batches for line in self._batch_line(b)]
        out: list[bytes] = []
        i, n = 0, len(batches)
        while i < n:
            b = batches[i]
            records = b.records
            if not (b.compression is _NONE and b.magic < 2 and records is not None and len(records) == 1):
                out += self.batch(b, records)
                i += 1
                continue
            if b.magic != self._run_magic or b.timestampType is not self._run_type:
                self._start_run(b)
            pending = self._pending
            taken, invalid, i = _rows.messages(batches, i, min(n, i + self._flush_rows - len(pending)))
            if invalid:
                self._pending_invalid += [len(pending) + k for k in invalid]
            pending += taken
            if len(pending) >= self._flush_rows:
                out += self._flush(close=False)
        return out

    def aborted_batch(self, b: Batch, records: tuple[Record, ...] | None) -> Sequence[bytes]:
        """A data batch of an aborted transaction: its section row says ``aborted``, in the theme's style."""
        self._aborted = True
        try:
            return self.batch(b, records)
        finally:
            self._aborted = False

    def side(self, path: str, item: SideItem) -> list[bytes]:
        """An entry of a file kept beside segments: a plain aligned row, after any open table."""
        rows = self._side.rows(item)
        return [*self._flush(close=True), *((printable(row[:-1]) + "\n").encode() for row in rows)]

    def problem(self, p: Problem) -> list[bytes]:
        if not self._records:
            return self._line(_Section(problem_title(p, dumped=self._path), wrap=True))
        self._end_run()
        self._run_magic = -1
        self._alike_key = None
        self._sections.append((len(self._cols[0]), _Section(problem_title(p, dumped=self._path), wrap=True)))
        return []

    def file_end(self, path: str, trailing: int) -> list[bytes]:
        return self._flush(close=True)

    # --- rows ----------------------------------------------------------------------------------

    def _batch_line(self, b: Batch) -> list[bytes]:
        """``--batches-only``: one line per batch, no table."""
        if b.magic < 2 and b.compression is Compression.NONE:
            return self._line(_Section(message_title(b, with_time=self._time)))
        return self._line(_Section(batch_title(b, with_time=self._time, aborted=self._aborted)))

    def _line(self, section: _Section) -> list[bytes]:
        """A line outside any table (``--batches-only``), cut or wrapped to a terminal's width."""
        limit = self._limit
        if limit is None or section.width <= limit:
            return [(self._styled(section.segments) + "\n").encode()]
        if section.wrap:
            chunks, style = _wrap(section.segments, limit)
            return [(self._styled([(chunk, style)]) + "\n").encode() for chunk in chunks]
        return [(self._styled(_cut_segments(section.segments, limit)) + "\n").encode()]

    def _start_run(self, b: Batch) -> None:
        self._end_run()
        self._alike_key = None
        self._run_magic, self._run_type = b.magic, b.timestampType
        self._sections.append((len(self._cols[0]), _Section(_run_title(b))))

    def _end_run(self) -> None:
        """Add the rows of the plain v0/v1 messages waiting in ``_pending``."""
        pending = self._pending
        if not pending:
            return
        first = len(self._cols[0])
        self._add_rows(pending)
        for i in self._pending_invalid:
            self._set(_NOTE, first + i, _invalid_cell(pending[i]))
        if self._decode is not None and self._decodes_data:
            self._decode_rows(self._decode, first, pending, False)
        self._pending = []
        self._pending_invalid = []

    def _decode_rows(
        self, decode: RecordDecoder, first: int, records: Sequence[Record], control: bool
    ) -> None:
        """Decoded keys and values (internal topics), or a KRaft control record's JSON in its note."""
        for i, r in enumerate(records, first):
            d = decode(control, r)
            if d is None:
                continue
            if control:
                if d.value is not None and d.value.data is not None and r.control is not None:
                    # With its JSON, the record's version too: it says which schema the JSON follows.
                    style = control_cell(r)[2]
                    label = f"{r.control.type_name} v{r.control.version}"
                    text = f"{label} {self._decoded_text(kafka_json(d.value.data))}"
                    self._set(_NOTE, i, (text, cell_len(text), style))
                continue
            key = "" if d.key is None and d.decoder == "metadata" else part_text(d.key, time=self._time)
            value = part_text(d.value, d.tombstone, self._time) + ("" if d.error is None else f" ({d.error})")
            for col, text in ((_KEY, key), (_VALUE, value)):
                shown = self._decoded_text(text)
                self._set(col, i, (shown, cell_len(shown), ""))
                self._measure = True

    def _decoded_text(self, text: str) -> str:
        limit = 16 * self._max
        return printable(text if len(text) <= limit else text[:limit] + "…")

    def _set(self, col: int, row: int, cell: Cell) -> None:
        """Put a cell that is not plain ASCII text (styled, or of wide characters) at (col, row)."""
        self._cols[col][row] = cell[0]
        self._special.append((col, row, cell))
        if cell[1] > self._known[col]:
            self._known[col] = cell[1]
        if len(cell[0]) > self._longest[col]:
            self._longest[col] = len(cell[0])

    def _add_rows(self, records: Sequence[Record]) -> None:
        """The hot loop: the plain cells of ``records`` by the row twin, the others drawn here."""
        cols, known, longest, mx = self._cols, self._known, self._longest, self._max
        first = len(cols[0])
        blank, widths = _rows.cells(records, mx, self._time_code, first, cols)
        cols[_NOTE].extend([""] * len(records))
        for col in (_OFFSET, _KEY, _VALUE):
            if widths[col] > longest[col]:
                longest[col] = widths[col]
        for col in (_TIME, _HEADERS):
            if widths[col] > known[col]:
                known[col] = widths[col]
        for code in blank:
            row, col = code >> COLUMN_BITS, code & _COLUMN_MASK
            r = records[row - first]
            if col == _TIME:
                text = cols[_TIME][row] = time_text(r.timestamp, self._time)
                if len(text) > known[_TIME]:
                    known[_TIME] = len(text)
                continue
            if col == _HEADERS:
                cell = _headers_cell(r, mx)
            else:
                cell = data_cell(r.key if col == _KEY else r.value, mx)
            if cell[2] or not cell[0].isascii():  # a wide and a zero-width character: same length, not plain
                self._set(col, row, cell)
            else:
                cols[col][row] = cell[0]
                if col == _HEADERS and cell[1] > known[_HEADERS]:
                    known[_HEADERS] = cell[1]
                elif cell[1] > longest[col]:
                    longest[col] = cell[1]

    # --- layout --------------------------------------------------------------------------------

    def _needed(self) -> tuple[list[int], int]:
        """Column widths the buffered rows need (0: a column none of them uses), and the widest section."""
        widths = list(self._known)
        if self._measure:  # decoded cells replaced others: the widths of the cells shown
            shown = {(col, row): cell[1] for col, row, cell in self._special if col in (_KEY, _VALUE)}
            widths[_KEY] = widths[_VALUE] = 0
            for (col, _), w in shown.items():
                widths[col] = max(widths[col], w)
        for i in (_OFFSET, _KEY, _VALUE):
            longest = max(map(len, self._cols[i]), default=0) if self._measure else self._longest[i]
            widths[i] = max(longest, widths[i])
        for i in (_OFFSET, _TIME, _VALUE):
            widths[i] = max(widths[i], self._label_widths[i])
        for i in (_KEY, _HEADERS, _NOTE):  # a column that no row uses is left out
            if widths[i]:
                widths[i] = max(widths[i], self._label_widths[i])
        section = max((s.width for _, s in self._sections), default=0)
        return widths, section

    def _fit(self, wanted: list[int], section: int) -> list[int]:
        """Widen the value column for the section rows, then share a terminal's width (``_share``)."""
        widths = list(wanted)
        widths[_VALUE] += max(0, section + 5 - _table_width(widths))
        if self._limit is not None and _table_width(widths) > self._limit:
            widths = _share(wanted, self._limit)
        return widths

    def _flush(self, *, close: bool) -> list[bytes]:
        out: list[bytes] = []
        self._end_run()
        if self._cols[0] or self._sections:
            needed, section = self._needed()
            wanted = (
                [max(n, w) for n, w in zip(needed, self._wanted, strict=True)] if self._widths else needed
            )
            section = max(section, self._section_width if self._widths else 0)
            widths = self._fit(wanted, section)
            if self._widths is not None and widths != self._widths and self._limit is not None:
                # Growing once on a terminal: take its whole width, so that values do not grow it again.
                wanted[_VALUE] += self._limit
                widths = self._fit(wanted, section)
            if self._widths is None:
                out.extend(self._top(widths))
            elif (
                widths != self._widths
            ):  # a column must grow or appear: one rule joins the old widths to the new
                out.append(self._join(self._widths, widths))
            self._widths, self._wanted, self._section_width = widths, wanted, section
            self._lines(widths, needed, out)
            self._new_buffer()
        if close and self._widths is not None:
            out.append(self._bottom(self._widths))
            self._widths = None
            self._run_magic = -1
            self._alike_key = None
        return out

    def _top(self, widths: list[int]) -> list[bytes]:
        """The top rule and the labels: the same for every table of a file of the same widths."""
        key = ("top", tuple(widths))
        if (top := self._rules.get(key)) is None:
            if len(self._rules) >= _RULES_KEPT:
                self._rules.clear()
            top = self._rules[key] = self._make_top(widths)
        return [top]

    def _make_top(self, widths: list[int]) -> bytes:
        shown = [w + 2 for w in widths if w]
        start, end = self._sgr["kdump.header"]
        cells = []
        for label, w in zip(self._labels, widths, strict=True):
            if w:
                if len(label) > w:
                    label = _cut(label, w)[0]
                pad = " " * (w - len(label))
                cells.append(f" {label}{pad} " if label != "offset" else f" {pad}{label} ")
        head = _BOX.head_left + _BOX.head_vertical.join(f"{start}{c}{end}" if start else c for c in cells)
        return f"{_BOX.get_top(shown)}\n{head}{_BOX.head_right}\n{_BOX.get_row(shown, 'head')}\n".encode()

    def _join(self, old: list[int], new: list[int]) -> bytes:
        """``├──┼──┴──┬─ note ─┐``: the bars of the rows above (``old``) end and those below (``new``) start
        on one rule, so the file stays one table; a column that appears has its label on the rule."""
        above = _rule(old, "└┴┘")
        below = _rule(new, "┌┬┐")
        line = [_JOIN[_ARMS.get(a, 0) | _ARMS.get(b, 0)] for a, b in zip_longest(above, below, fillvalue=" ")]
        start = 0  # where the column's left bar is
        for col, w in enumerate(new):
            label = f" {self._labels[col]} "
            if w and not old[col] and len(label) <= w + 2:
                at = start + (2 if len(label) <= w else 1)
                line[at : at + len(label)] = label
            start += w + 3 if w else 0
        return ("".join(line) + "\n").encode()

    def _bottom(self, widths: list[int]) -> bytes:
        key = ("bottom", tuple(widths))
        if (bottom := self._rules.get(key)) is None:
            if len(self._rules) >= _RULES_KEPT:
                self._rules.clear()
            bottom = self._rules[key] = (_BOX.get_bottom([w + 2 for w in widths if w]) + "\n").encode()
        return bottom

    def _lines(self, widths: list[int], needed: list[int], out: list[bytes]) -> None:
        """Append the buffered rows' lines at ``widths``, a column at a time, with the sections between."""
        bar = _BOX.mid_vertical
        shown = [col for col, w in enumerate(widths) if w]
        columns = []
        for col in shown:
            column, width = self._cols[col], widths[col]
            if needed[col] > width:  # cut to fit the terminal
                column = [c if len(c) <= width else _cut(c, width)[0] for c in column]
            columns.append(column)
        # Plain cells are padded by the row twin: their width is their length. A row holding another
        # cell (styled, or of wide characters) is drawn here, each cell padded by its width in cells.
        sep = f" {bar} "
        drawn: dict[int, str] = {}
        if self._special:
            special: dict[int, dict[int, Cell]] = {}
            for col, row, cell in self._special:
                special.setdefault(row, {})[col] = cell
            for row, cells in special.items():
                parts = []
                for col, column in zip(shown, columns, strict=True):
                    width = widths[col]
                    other = cells.get(col)
                    if other is not None:
                        parts.append(self._cell(other, width))
                    else:
                        parts.append(column[row].rjust(width) if col == _OFFSET else column[row].ljust(width))
                drawn[row] = f"{bar} {sep.join(parts)} {bar}\n"
        inner = _table_width(widths) - 5
        sections = [(row, self._section(section, inner)) for row, section in self._sections]
        out.append(_rows.lines(columns, [widths[col] for col in shown], drawn, sections))

    def _cell(self, cell: Cell, width: int) -> str:
        text, w, style = cell
        if w > width:
            text, w = _cut(text, width)
        if style:
            start, end = self._sgr[style]
            text = f"{start}{text}{end}"
        return text + " " * (width - w)

    def _section(self, section: _Section, inner: int) -> str:
        """``├─ offsets 0..2 · 3 records · … ───┤``: cut with ``…`` only when a terminal is too narrow."""
        segments = section.segments
        width = section.width
        rule = _BOX.row_horizontal
        if width > inner and section.wrap:
            (first, *rest), style = _wrap(segments, inner)
            lines = [
                f"{_BOX.row_left}{rule} {self._styled([(first, style)])} {rule * (inner - cell_len(first))}{_BOX.row_right}\n"
            ]
            bar = _BOX.mid_vertical
            lines += [
                f"{bar} {self._styled([(chunk, style)])}{' ' * (inner + 1 - cell_len(chunk))} {bar}\n"
                for chunk in rest
            ]
            return "".join(lines)
        if width > inner:
            segments = _cut_segments(segments, inner)
            width = inner
        return f"{_BOX.row_left}{rule} {self._styled(segments)} {rule * (inner - width)}{_BOX.row_right}\n"

    def _styled(self, segments: list[Segment]) -> str:
        sgr_ = self._sgr
        out = []
        for text, style in segments:
            start, end = sgr_[style]
            out.append(f"{start}{text}{end}" if start else text)
        return "".join(out)


def _share(wanted: list[int], limit: int) -> list[int]:
    """Widths that fit ``limit`` cells: offset and time whole, the other columns by weighted shares of
    the room (``_SHARES``), each given the least of its share and what it needs, the value what is left."""
    widths = list(wanted)
    room = limit - _table_width([*wanted[:2], 0, 0, 0, 0]) - 3 * sum(1 for w in wanted[2:] if w)
    shares = [(col, weight, min(least, wanted[col])) for col, weight, least in _SHARES if wanted[col]]
    low, high = 0, max((wanted[col] for col, _, _ in shares), default=0)
    while low < high:  # the largest share that fits
        mid = (low + high + 1) // 2
        if sum(max(least, min(wanted[col], weight * mid)) for col, weight, least in shares) <= room:
            low = mid
        else:
            high = mid - 1
    for col, weight, least in shares:
        widths[col] = max(least, min(wanted[col], weight * low))
    left = room - sum(widths[col] for col, _, _ in shares)
    if left < 0:  # too narrow for the least widths: the time is cut too
        widths[_TIME] = max(_LEAST_TIME, widths[_TIME] + left)
    for col in (_VALUE, _NOTE, _HEADERS, _KEY):  # what the rounding left: the value first
        if left > 0 and wanted[col]:
            more = min(left, wanted[col] - widths[col])
            widths[col] += more
            left -= more
    if widths[_VALUE] < min(widths[_TIME], wanted[_VALUE]):  # the value as wide as the time, if it can
        give = min((widths[_TIME] - widths[_VALUE] + 1) // 2, wanted[_VALUE] - widths[_VALUE])
        give = max(0, min(give, widths[_TIME] - _SHORT_TIME))
        widths[_TIME] -= give
        widths[_VALUE] += give
    return widths


# The arms of a light box character (up 1, down 2, left 4, right 8), and the character of each set.
_ARMS = {"─": 12, "│": 3, "┌": 10, "┐": 6, "└": 9, "┘": 5, "├": 11, "┤": 7, "┬": 14, "┴": 13, "┼": 15}
_JOIN = {arms: char for char, arms in _ARMS.items()} | {0: " "}


def _rule(widths: list[int], corners: str) -> str:
    """A light rule at ``widths``: ``corners`` are its left end, the crossings and its right end."""
    return corners[0] + corners[1].join("─" * (w + 2) for w in widths if w) + corners[2]


def _table_width(widths: list[int]) -> int:
    return 1 + sum(w + 3 for w in widths if w)


def _cut(text: str, width: int) -> tuple[str, int]:
    """``text`` cut to ``width`` terminal cells, the last one an ellipsis."""
    if text.isascii():
        return text[: width - 1] + "…", width
    return set_cell_size(text, width - 1) + "…", width


def _wrap(segments: list[Segment], width: int) -> tuple[list[str], str]:
    """The text of ``segments`` in lines of at most ``width`` cells, broken at spaces where it can be,
    and the style of the first segment (a wrapped line has one style)."""
    import textwrap

    text = "".join(t for t, _ in segments)
    lines = textwrap.wrap(text, width, break_long_words=True, break_on_hyphens=False) or [""]
    style = segments[0][1] if segments else ""
    return [ln if cell_len(ln) <= width else set_cell_size(ln, width) for ln in lines], style


def _cut_segments(segments: list[Segment], width: int) -> list[Segment]:
    """Segments cut to ``width`` cells in all, the last one ending in ``…`` (their total is wider)."""
    out: list[Segment] = []
    left = width
    for text, style in segments:
        w = cell_len(text)
        if w < left:
            out.append((text, style))
            left -= w
            continue
        out.append((_cut(text, left)[0], style))
        break
    return out
