"""The twins of convert's record check (``native/recheck.c`` and ``recheck.py``) agree, and are right.

The records are written by kafka-python's ``DefaultRecordBatchBuilder`` (an independent writer);
the Records they must match are built from the same inputs. Both twins must say "the same" (-1) for
them, name the same first record when one field of one Record is changed, and give the same answer
on damaged bytes (never crash).
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatchBuilder

from kafka_dump.model import Record, new_header, new_record
from kafka_dump.native import reference
from kafka_dump.wire import recheck as _recheck_pure

try:
    from kafka_dump.native import _native as _recheck
except ImportError:  # no compiler: only the reference can be checked
    _recheck = None  # type: ignore[assignment]

TWINS = [("pure", reference(_recheck_pure.same_v2_records))]
if _recheck is not None:
    TWINS.append(("compiled", _recheck.same_v2_records))

_PAYLOAD = st.none() | st.just(b"") | st.binary(min_size=1, max_size=30)
_RECORD = st.tuples(
    st.integers(0, 5),  # offset gap
    st.integers(-(2**40), 2**40),  # timestamp delta from the base
    _PAYLOAD,
    _PAYLOAD,
    st.lists(st.tuples(st.text(max_size=6), _PAYLOAD), max_size=4),
)
BASE_OFFSET, BASE_TS = 1_000, 1_700_000_000_000


def build(specs: list[tuple[int, int, bytes | None, bytes | None, list]]) -> tuple[bytes, tuple[Record, ...]]:  # type: ignore[type-arg]
    """(record bytes, Records) for the specs; the bytes are kafka-python's, after the 61-byte header."""
    builder = DefaultRecordBatchBuilder(2, 0, 0, -1, -1, -1, batch_size=1 << 30)
    records = []
    delta = 0
    first_ts = None
    for gap, ts, key, value, headers in specs:
        delta += gap
        timestamp = BASE_TS + ts
        first_ts = timestamp if first_ts is None else first_ts
        builder.append(delta, timestamp=timestamp, key=key, value=value, headers=list(headers))
        hs = tuple(new_header(k.encode(), v) for k, v in headers)
        records.append(new_record(BASE_OFFSET + delta, timestamp, key, value, hs, -1, 0))
    return bytes(builder.build())[61:], tuple(records)


def both(
    data: bytes, expected: tuple[Record, ...], lat: int | None = None, base_ts: int | None = None
) -> int:
    answers = {
        name: fn(
            data,
            0,
            len(data),
            BASE_OFFSET,
            expected[0].timestamp if base_ts is None else base_ts,
            lat,
            expected,
        )
        for name, fn in TWINS
    }
    assert len(set(answers.values())) == 1, answers
    return next(iter(answers.values()))


@settings(max_examples=80, deadline=None)
@given(st.lists(_RECORD, min_size=1, max_size=12))
def test_the_records_written_are_the_same(specs: list) -> None:  # type: ignore[type-arg]
    data, records = build(specs)
    assert both(data, records) == -1


_CHANGES = [
    lambda r: replace(r, offset=r.offset + 1),
    lambda r: replace(r, timestamp=r.timestamp - 1),
    lambda r: replace(r, key=None if r.key is not None else b""),
    lambda r: replace(r, value=(r.value or b"") + b"x"),
    lambda r: replace(r, headers=(*r.headers, new_header(b"extra", None))),
    lambda r: replace(r, headers=r.headers[:-1]) if r.headers else replace(r, key=b"\xff" * 40),
    lambda r: replace(r, storedTimestamp=r.timestamp + 7),
    lambda r: (
        replace(r, headers=tuple(new_header(h.key + b"!", h.value) for h in r.headers))
        if r.headers
        else replace(r, value=None if r.value is not None else b"v")
    ),
]


@settings(max_examples=80, deadline=None)
@given(st.lists(_RECORD, min_size=1, max_size=8), st.data())
def test_one_changed_field_is_found_at_its_record(specs: list, data: st.DataObject) -> None:  # type: ignore[type-arg]
    raw, records = build(specs)
    i = data.draw(st.integers(0, len(records) - 1))
    change = data.draw(st.sampled_from(_CHANGES))
    changed = (*records[:i], change(records[i]), *records[i + 1 :])
    assert both(raw, changed, base_ts=records[0].timestamp) == i


@settings(max_examples=100, deadline=None)
@given(st.lists(_RECORD, min_size=1, max_size=6), st.data())
def test_damaged_bytes_give_the_same_answer(specs: list, data: st.DataObject) -> None:  # type: ignore[type-arg]
    raw, records = build(specs)
    b = bytearray(raw)
    for _ in range(data.draw(st.integers(1, 3))):
        b[data.draw(st.integers(0, len(b) - 1))] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(b)))
    answer = both(bytes(b[:cut]), records, base_ts=records[0].timestamp)
    assert -1 <= answer <= len(records)
    if cut < len(raw):
        assert answer != -1


def test_fewer_or_more_records_than_expected() -> None:
    raw, records = build([(1, 0, b"k", b"v", []), (1, 5, None, b"w", [("h", None)])])
    assert both(raw, records[:1]) == 1  # bytes left after the last expected record
    assert both(raw, (*records, records[-1])) == 2  # the data end before the third


def test_log_append_time_reports_the_batch_time_and_keeps_the_own_time() -> None:
    raw, records = build([(1, 0, b"k", b"v", []), (1, 9, b"k2", None, [])])
    lat = BASE_TS + 99_999
    reported = tuple(replace(r, timestamp=lat, storedTimestamp=r.timestamp) for r in records)
    assert both(raw, reported, lat=lat, base_ts=records[0].timestamp) == -1
    plain = tuple(replace(r, timestamp=lat) for r in records)  # no own time kept: not checked
    assert both(raw, plain, lat=lat, base_ts=records[0].timestamp) == -1
    assert both(raw, records, lat=lat, base_ts=records[0].timestamp) == 0  # reported time is the batch's


@pytest.mark.parametrize(("name", "fn"), TWINS)
def test_bounds_are_checked(name: str, fn: object) -> None:
    raw, records = build([(1, 0, b"k", b"v", [])])
    with pytest.raises(ValueError):
        fn(raw, 5, 2, 0, 0, None, records)  # type: ignore[operator]
    with pytest.raises(ValueError):
        fn(raw, 0, len(raw) + 1, 0, 0, None, records)  # type: ignore[operator]
