"""Which records a search keeps: rules over a record's raw key, value and headers, and over a batch's
header (producer id, transactional and control bits), applied by the readers before anything is built.

``RecordMatch`` is a plain tuple so that the compiled decoder reads it as one: exact bytes are compared
in C, a regular expression is searched by Python's ``re`` over the raw bytes, and only in the records
that hold the bytes every match of it holds (``required_literal``), looked for in C first.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Sequence
from typing import NamedTuple

from kafka_dump.model import Header, Record
from kafka_dump.wire import layout as L

_PRODUCER_ID = L.INT64
_PRODUCER_ID_AT = L.V2_LAYOUT.offsets["producerId"]
# A compiled bytes pattern's ``search``: a match object, or None.
Search = Callable[[bytes], object]


class RecordMatch(NamedTuple):
    """What a record's own bytes must hold; every field given must hold (a null key or value holds no
    text, so it matches neither ``key`` nor a regular expression)."""

    key: bytes | None = None  # the key, exactly
    key_search: Search | None = None  # a regular expression found in the key
    value_search: Search | None = None  # a regular expression found in the value
    header_key: bytes | None = None  # a header with this key...
    header_value: bytes | None = None  # ...and exactly this value (None: any value, null included)
    # Bytes every match of key_search / value_search holds: a record without them cannot match, so
    # the compiled decoder calls the search only where it finds them (the result is the search's).
    key_literal: bytes | None = None
    value_literal: bytes | None = None


def required_literal(pattern: re.Pattern[bytes]) -> bytes | None:
    """The longest run of plain bytes at the top level of ``pattern``, which every match holds as
    they are (None where there is none, or where case is ignored): ``rb"999$"`` gives ``b"999"``."""
    if pattern.flags & re.IGNORECASE:
        return None
    try:
        if sys.version_info >= (3, 11):
            from re import _parser as parser  # type: ignore[attr-defined]
        else:  # pragma: no cover
            import sre_parse as parser
        items = list(parser.parse(pattern.pattern, pattern.flags))
        literal = parser.LITERAL
    except Exception:  # a parser of another shape: no shortcut, the search alone decides
        return None
    best = run = b""
    for op, value in items:
        run = run + bytes([value]) if op == literal and 0 <= value < 256 else b""
        best = run if len(run) > len(best) else best
    return best or None


def record_matches(m: RecordMatch, key: bytes | None, value: bytes | None, headers: Sequence[Header]) -> bool:
    """True when the record's key, value and headers meet every rule of ``m``."""
    if m.key is not None and key != m.key:
        return False
    if m.header_key is not None and not any(
        h.key == m.header_key and (m.header_value is None or h.value == m.header_value) for h in headers
    ):
        return False
    if m.key_search is not None and (key is None or m.key_search(key) is None):
        return False
    return m.value_search is None or (value is not None and m.value_search(value) is not None)


def matching(m: RecordMatch, records: Sequence[Record]) -> tuple[Record, ...]:
    """The records of ``records`` that ``m`` keeps (v0/v1 messages, read whole by their own reader)."""
    return tuple(r for r in records if record_matches(m, r.key, r.value, r.headers))


class BatchMatch(NamedTuple):
    """What a batch's header must say; a v0/v1 message has no producer id and is neither
    transactional nor control, so any of these rules leaves it out."""

    producer_id: int | None = None
    transactional: bool = False
    control: bool = False

    @property
    def active(self) -> bool:
        return self.producer_id is not None or self.transactional or self.control

    def keep(self, buf: bytes, i: int, entry: int, magic: int) -> bool:
        """False when the header of the entry ``buf[i:i+entry]`` rules out all its records (an entry
        too short for its header is kept, for the decoder to report)."""
        if magic < 2:
            return not self.active
        if entry < L.V2_HEADER_SIZE:
            return True
        if (
            self.producer_id is not None
            and _PRODUCER_ID.unpack_from(buf, i + _PRODUCER_ID_AT)[0] != self.producer_id
        ):
            return False
        attributes = buf[i + L.V2_ATTRIBUTES_OFFSET + 1]  # the low byte of the int16 holds these bits
        if self.transactional and not attributes & L.TRANSACTIONAL_BIT:
            return False
        return not (self.control and not attributes & L.CONTROL_BIT)


class Match(NamedTuple):
    """A search: the batch rules (checked on the header, before decoding) and the record rules."""

    batches: BatchMatch = BatchMatch()
    records: RecordMatch | None = None

    @property
    def active(self) -> bool:
        return self.batches.active or self.records is not None
