"""The validating record walk: its compiled twin agrees with the pure reference on every input, and the
walk agrees with the decoder (``decode_v2_records``) on counts, sizes, and the first error and its position.

The twin comparisons are skipped where ``_walk`` was not built; CI builds it.
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kafka_dump.wire as twins
from kafka_dump.wire import _walk_pure
from kafka_dump.wire import decode as _pure
from kafka_dump.wire.v2 import RecordWalk

from .batches import default_records, raw_record, raw_v2_batch, v2_batch
from .conftest import reference_module

walk_c = pytest.importorskip("kafka_dump.native._native")
_pure, _walk_pure = reference_module(_pure), reference_module(_walk_pure)


def _both(data: bytes, pos: int, end: int, count: int, last_delta: int, base_ts: int = 0) -> RecordWalk:
    pure = _walk_pure.walk_v2_records(data, pos, end, count, last_delta, base_ts)
    fast = walk_c.walk_v2_records(data, pos, end, count, last_delta, base_ts)
    assert fast == pure
    return RecordWalk._make(pure)


def _agrees_with_decoder(data: bytes, pos: int, end: int, count: int, last_delta: int) -> None:
    """Counts and sizes equal the decoded records'; the decoder's first error is the walk's, unless the
    walk stopped earlier at one of its own order checks."""
    walk = _both(data, pos, end, count, last_delta)
    records, error = _pure.decode_v2_records(data, pos, end, count, 0, 0, None, -1)
    own = walk.error is not None and walk.error.startswith("record offset delta")
    if not own:
        assert walk.records == len(records)
        assert walk.keyBytes == sum(len(r.key) for r in records if r.key is not None)
        assert walk.valueBytes == sum(len(r.value) for r in records if r.value is not None)
        assert walk.nullKeys == sum(r.key is None for r in records)
        assert walk.nullValues == sum(r.value is None for r in records)
        assert walk.headers == sum(len(r.headers) for r in records)
        assert walk.headerBytes == sum(len(h.key) + len(h.value or b"") for r in records for h in r.headers)
        if records:
            assert walk.maxTimestampDelta == max(r.timestamp for r in records)
        if error is None:
            assert walk.error is None
        else:
            assert (walk.error, walk.errorPosition) == (error.reason, error.position)
    else:
        assert walk.records <= len(records)


def _payload(batch: bytes) -> tuple[bytes, int, int]:
    """(records bytes padded on both sides, count, lastOffsetDelta) of an uncompressed v2 batch."""
    count = struct.unpack_from(">i", batch, 57)[0]
    last = struct.unpack_from(">i", batch, 23)[0]
    return batch[61:], count, last


PAD = b"\xff\x80\x00"


def test_valid_batches() -> None:
    for seed in range(5):
        records, count, last = _payload(v2_batch(default_records(7, seed=seed), timestamp=0))
        data = PAD + records + PAD
        walk = _both(data, len(PAD), len(PAD) + len(records), count, last)
        assert walk.error is None and walk.records == 7
        _agrees_with_decoder(data, len(PAD), len(PAD) + len(records), count, last)


def test_every_flipped_byte_and_truncation() -> None:
    records, count, last = _payload(v2_batch(default_records(6, seed=3), timestamp=0))
    data = PAD + records + PAD
    start, end = len(PAD), len(PAD) + len(records)
    for at in range(start, end):
        for mask in (0x01, 0x80, 0xFF):
            damaged = bytearray(data)
            damaged[at] ^= mask
            _agrees_with_decoder(bytes(damaged), start, end, count, last)
    for cut in range(start, end):
        _agrees_with_decoder(data, start, cut, count, last)
    for wrong in (0, 1, 5, 7, 1000, -1):
        _agrees_with_decoder(data, start, end, wrong, last)


def test_order_checks() -> None:
    data = raw_record(offset_delta=0) + raw_record(offset_delta=0)
    walk = _both(data, 0, len(data), 2, 1)
    assert (walk.error, walk.errorPosition, walk.records) == (
        "record offset delta 0 is not above the previous one (0)",
        len(raw_record()),
        1,
    )
    walk = _both(data[: len(raw_record())], 0, len(raw_record()), 1, -1)
    assert walk.error == "record offset delta 0 is past the batch's lastOffsetDelta -1"
    first = raw_record(offset_delta=-1)
    assert (
        _both(first, 0, len(first), 1, 5).error == "record offset delta -1 is not above the previous one (-1)"
    )


def test_bad_bounds_raise_alike() -> None:
    for args in ((b"abc", -1, 2, 1, 0, 0), (b"abc", 2, 1, 1, 0, 0), (b"abc", 0, 4, 1, 0, 0)):
        with pytest.raises(ValueError, match="0 <= pos <= end"):
            _walk_pure.walk_v2_records(*args)
        with pytest.raises(ValueError, match="0 <= pos <= end"):
            walk_c.walk_v2_records(*args)


def test_walk_batch_from_raw_builder() -> None:
    body = raw_record(offset_delta=0, key=None) + raw_record(
        offset_delta=1, value=None, headers=[(b"h", None)]
    )
    batch = raw_v2_batch(body, 2)
    records, count, last = _payload(batch)
    walk = _both(records, 0, len(records), count, last)
    assert (walk.records, walk.nullKeys, walk.nullValues, walk.headers, walk.headerBytes) == (2, 1, 1, 1, 1)


@settings(max_examples=300, deadline=None)
@given(
    st.binary(max_size=120), st.integers(min_value=-2, max_value=12), st.integers(min_value=-2, max_value=12)
)
def test_arbitrary_bytes(data: bytes, count: int, last: int) -> None:
    _agrees_with_decoder(data, 0, len(data), count, last)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(min_value=-3, max_value=40),
            st.integers(min_value=-(2**40), max_value=2**40),
            st.one_of(st.none(), st.binary(max_size=9)),
            st.one_of(st.none(), st.binary(max_size=9)),
            st.lists(
                st.tuples(st.binary(max_size=4), st.one_of(st.none(), st.binary(max_size=4))), max_size=3
            ),
        ),
        max_size=6,
    ),
    st.integers(min_value=-1, max_value=45),
)
def test_structured_records(recs: list[tuple[int, int, bytes | None, bytes | None, list[tuple[bytes, bytes | None]]]],
                            last: int) -> None:  # fmt: skip
    data = b"".join(
        raw_record(offset_delta=o, timestamp_delta=t, key=k, value=v, headers=h) for o, t, k, v, h in recs
    )
    _agrees_with_decoder(data, 0, len(data), len(recs), last)


def test_verify_reports_the_same_with_either_twin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every problem verify-crc reports, and its position, is the same under both twins of the walk."""
    from kafka_dump.analysis.verify import VerifyOptions, verify_file

    from .batches import LZ4

    data = v2_batch(default_records(4, seed=1), base_offset=0) + v2_batch(
        default_records(3, seed=2, compressible=True), codec=LZ4, base_offset=4
    )
    path = tmp_path / "00000000000000000000.log"

    def events(twin: object) -> list[object]:
        monkeypatch.setattr(twins, "walk_v2_records", twin)
        return list(verify_file(path, VerifyOptions(index=False)))

    for at in range(0, len(data), 2):
        damaged = bytearray(data)
        damaged[at] ^= 0x24
        path.write_bytes(bytes(damaged))
        assert events(walk_c.walk_v2_records) == events(_walk_pure.walk_v2_records), at
