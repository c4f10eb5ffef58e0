"""The encoder's twins agree: the compiled ``encoder.c`` gives the pure ``_pure_encoder``'s bytes, sizes
and errors, for any records (Hypothesis) and for every batch of every segment we have."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_dump.log.segment import read_segment
from kafka_dump.model import Batch, Record, TimestampType, new_header, new_record
from kafka_dump.wire import encoder as pure
from tests.conftest import FIXTURES, SHARED_REAL, reference_module

compiled = pytest.importorskip("kafka_dump.native._native")
pure = reference_module(pure)

FILES = sorted(FIXTURES.glob("*.log")) + (
    sorted(p for p in SHARED_REAL.rglob("*.log") if p.is_file()) if SHARED_REAL.is_dir() else []
)


def _outcome(f: Callable[..., Any], *args: Any) -> tuple[str, Any]:
    """What a call gives: its value, or its exception's type and message."""
    try:
        return "ok", f(*args)
    except Exception as exc:  # the twins must fail alike, whatever the failure
        return type(exc).__name__, str(exc)


def _agree(name: str, *args: Any) -> tuple[str, Any]:
    ours, theirs = _outcome(getattr(compiled, name), *args), _outcome(getattr(pure, name), *args)
    assert ours == theirs, name
    return ours


_int64 = st.integers(-(2**63), 2**63 - 1)
_wide = st.one_of(_int64, st.integers(-(2**65), 2**65), st.integers(-5, 5))
_bytes = st.one_of(st.none(), st.binary(max_size=30))
_headers = st.lists(st.builds(new_header, st.binary(max_size=8), _bytes), max_size=4).map(tuple)


@st.composite
def _records(draw: st.DrawFn) -> list[Record]:
    out = []
    offset = draw(st.integers(-10, 2**40))
    for _ in range(draw(st.integers(0, 8))):
        offset += draw(st.sampled_from([0, 1, 1, 7, 2**31]))
        ts = draw(st.one_of(st.just(-1), _wide))
        stored = draw(st.one_of(st.none(), _wide))
        headers = draw(st.one_of(st.just(()), _headers))
        r = new_record(offset, ts, draw(_bytes), draw(_bytes), headers, -1, 0, stored_timestamp=stored)
        out.append(r)
    return out


@settings(max_examples=250, deadline=None)
@given(_records(), _wide, _wide, st.booleans(), st.booleans())
def test_v2_records_agree(
    records: list[Record], base_offset: int, base_timestamp: int, lat: bool, from_first: bool
) -> None:
    if from_first and records:  # mostly valid batches, as a builder makes them
        base_offset, base_timestamp = records[0].offset, records[0].timestamp
    kind, data = _agree("encode_v2_records", records, base_offset, base_timestamp, lat)
    size = _agree("v2_records_size", records, base_offset, base_timestamp, lat)
    if kind == "ok":
        OUTCOMES.add("v2 ok")
        assert size == ("ok", len(data))


@settings(max_examples=250, deadline=None)
@given(_records(), st.sampled_from([0, 1]), st.sampled_from([0, 8]), _wide, st.booleans())
def test_legacy_messages_agree(
    records: list[Record], magic: int, attributes: int, shift: int, lat: bool
) -> None:
    _agree("encode_legacy_messages", records, magic, attributes, shift, lat)
    kind, data = _agree("encode_legacy_messages", records, magic, attributes, 0, False)
    size = _agree("legacy_messages_size", records, magic)
    if kind == "ok":
        OUTCOMES.add(f"v{magic} ok")
        assert size == ("ok", len(data))


OUTCOMES: set[str] = set()


def test_the_properties_saw_valid_records() -> None:
    """Run after the two above (file order): they did not only compare refusals."""
    if OUTCOMES:  # empty when this test runs alone
        assert {"v2 ok", "v0 ok", "v1 ok"} <= OUTCOMES


def test_bad_values_are_type_errors_in_both() -> None:
    record = new_record(0, 0, None, None, (), -1, 0)
    for bad in ([object()], [record.__class__.__new__(record.__class__)]):
        assert _outcome(compiled.encode_v2_records, bad, 0, 0, False)[0] in ("TypeError", "AttributeError")
        assert _outcome(pure.encode_v2_records, bad, 0, 0, False)[0] in ("TypeError", "AttributeError")


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_batch_we_have_agrees(path: Path) -> None:
    for item in read_segment(path):
        if not isinstance(item, Batch) or not item.records:
            continue
        lat = item.timestampType is TimestampType.LOG_APPEND_TIME
        if item.magic == 2:
            _agree("encode_v2_records", item.records, item.baseOffset, item.baseTimestamp, lat)
        else:
            _agree("encode_legacy_messages", item.records, item.magic, 0, item.records[0].offset, lat)


@settings(max_examples=100, deadline=None)
@given(_records(), st.binary(min_size=61, max_size=61), st.booleans())
def test_v2_entries_agree(records: list[Record], header: bytes, lat: bool) -> None:
    base_offset, base_ts = (records[0].offset, records[0].timestamp) if records else (0, 0)
    _agree("encode_v2_entry", header, records, base_offset, base_ts, lat)
    _agree("encode_v2_entry", header[:60], records, base_offset, base_ts, lat)
