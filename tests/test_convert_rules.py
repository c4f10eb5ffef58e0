"""The rules of ``kdump convert`` as a mapping over the model (``analysis/convert.py``), and the
batching rule it shares with ``stats --compare`` (``analysis/batching.py``). No bytes are written here;
the command's tests (``test_convert_cli.py``) check what the encoders make of these batches."""

from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatchBuilder

from kafka_dump.analysis.batching import DEFAULT_BATCH_BYTES, Grouper, group
from kafka_dump.analysis.convert import (
    ConversionError,
    Converter,
    ConvertOptions,
    legacy_message_size,
    record_fields,
    v2_record_size,
)
from kafka_dump.log.segment import read_segment
from kafka_dump.model import Batch, Compression, TimestampType, new_header, new_record
from tests.conftest import FIXTURES

# -- batching ---------------------------------------------------------------------------------


def _sizes(items: list[int], **limits: int | None) -> list[list[int]]:
    return list(group(items, overhead=10, size=lambda first, item: item, **limits))  # type: ignore[arg-type]


def test_group_fills_batches_to_the_byte_limit_and_the_first_record_always_joins() -> None:
    assert _sizes([30, 30, 30, 50, 5], max_bytes=70) == [[30, 30], [30], [50, 5]]
    assert _sizes([100, 1], max_bytes=50) == [[100], [1]]  # larger than a batch: alone
    assert _sizes([], max_bytes=50) == []


def test_group_by_count_and_by_a_joins_rule() -> None:
    assert _sizes([1] * 7, max_bytes=None, max_records=3) == [[1, 1, 1], [1, 1, 1], [1]]
    groups = list(
        group([1, 1, 2, 2, 2, 1], overhead=0, size=lambda f, i: 1, max_records=2, joins=lambda f, i: f == i)
    )
    assert groups == [[1, 1], [2, 2], [2], [1]]


def test_group_refuses_limits_below_one() -> None:
    with pytest.raises(ValueError):
        Grouper(overhead=0, size=lambda f, i: 1, max_bytes=0)


@given(
    st.lists(st.integers(1, 300), max_size=60),
    st.none() | st.integers(1, 1000),
    st.none() | st.integers(1, 9),
)
def test_group_property_every_item_once_in_order_and_each_batch_full(
    items: list[int], max_bytes: int | None, max_records: int | None
) -> None:
    groups = _sizes(items, max_bytes=max_bytes, max_records=max_records)
    assert [i for g in groups for i in g] == items
    for g, nxt in pairwise(groups):
        # a batch is only closed when the next item would not fit it
        full_bytes = max_bytes is not None and 10 + sum(g) + nxt[0] > max_bytes
        full_count = max_records is not None and len(g) == max_records
        assert full_bytes or full_count
    for g in groups:
        assert max_records is None or len(g) <= max_records
        assert max_bytes is None or len(g) == 1 or 10 + sum(g) <= max_bytes


# -- record sizes, against kafka-python's own -----------------------------------------------------

_PAYLOADS = st.none() | st.binary(max_size=300)


@given(
    st.integers(0, 2**31 - 1),
    st.integers(-(2**62), 2**62),
    _PAYLOADS,
    _PAYLOADS,
    st.lists(st.tuples(st.text(max_size=20), _PAYLOADS), max_size=5),
)
def test_v2_record_size_is_kafkas(offset_delta: int, ts_delta: int, key, value, headers) -> None:  # type: ignore[no-untyped-def]
    record = new_record(0, 0, key, value, tuple(new_header(k.encode(), v) for k, v in headers), -1, 0)
    expected = DefaultRecordBatchBuilder.size_in_bytes(offset_delta, ts_delta, key, value, headers)
    assert v2_record_size(offset_delta, ts_delta, record) == expected


@given(st.sampled_from([0, 1]), _PAYLOADS, _PAYLOADS)
def test_legacy_message_size_is_kafkas(magic: int, key: bytes | None, value: bytes | None) -> None:
    record = new_record(0, 0, key, value, (), -1, 0)
    expected = 12 + LegacyRecordBatchBuilder.record_size(magic, key, value)
    assert legacy_message_size(magic, record) == expected


# -- the mapping, on the bundled fixtures ----------------------------------------------------------


def _batches(name: str) -> list[Batch]:
    items = list(read_segment(FIXTURES / name))
    assert all(isinstance(i, Batch) for i in items), name
    return items  # type: ignore[return-value]


def _convert(batches: list[Batch], **options: object) -> tuple[list[Batch], Converter]:
    conv = Converter(ConvertOptions(**options))  # type: ignore[arg-type]
    return list(conv.convert(batches)), conv


def _fields(batches: list[Batch]) -> list[tuple[object, ...]]:
    return [record_fields(r) for b in batches for r in b.records or ()]


def _no_headers(fields: list[tuple[object, ...]]) -> list[tuple[object, ...]]:
    return [(*f[:4], ()) for f in fields]


def test_v2_to_v2_keeps_every_batch_as_it_is() -> None:
    for name in (
        "v2-none.log",
        "v2-headers.log",
        "txn-control.log",
        "compacted-gaps.log",
        "v2-logappendtime.log",
    ):
        batches = _batches(name)
        out, conv = _convert(batches)
        assert out == batches, name
        assert conv.changes.lines() == []


def test_plain_v1_to_v2_groups_messages_into_16k_batches() -> None:
    batches = _batches("v1-none.log")
    out, conv = _convert(batches)
    assert _fields(out) == _fields(batches)
    assert all(b.magic == 2 and b.compression is Compression.NONE for b in out)
    assert all(
        (b.producerId, b.producerEpoch, b.baseSequence, b.partitionLeaderEpoch) == (-1,) * 4 for b in out
    )
    # Every batch is within 16 KiB, as the sizes count: header plus records.
    for b in out:
        records = b.records or ()
        size = 61 + sum(
            v2_record_size(r.offset - b.baseOffset, r.timestamp - b.baseTimestamp, r) for r in records
        )
        assert size <= DEFAULT_BATCH_BYTES
        assert b.maxTimestamp == max(r.timestamp for r in records)
        assert b.timestampType is TimestampType.CREATE_TIME
    assert conv.changes.lines() == []


def test_plain_v1_many_messages_fill_several_batches_and_batch_limits_apply() -> None:
    one = _batches("v1-none.log")
    # the same messages repeated at later offsets: 60 plain messages of ~80 bytes
    many = [
        b._replace(
            baseOffset=b.baseOffset + 100 * k,
            lastOffset=b.lastOffset + 100 * k,
            records=tuple(
                new_record(r.offset + 100 * k, r.timestamp, r.key, r.value, (), -1, 0)
                for r in b.records or ()
            ),
        )
        for k in range(20)
        for b in one
    ]
    out, _ = _convert(many, batch_bytes=512)
    assert len(out) > 5
    assert _fields(out) == _fields(many)
    out, _ = _convert(many, batch_records=7)
    assert [len(b.records or ()) for b in out][:-1] == [7] * (len(out) - 1)


def test_plain_v1_to_v1_keeps_one_message_per_entry() -> None:
    batches = _batches("v1-none.log")
    out, _ = _convert(batches, to_magic=1)
    assert out == [
        b._replace(file="", position=0, crc=0, crcValid=True, sizeInBytes=0, records=out[i].records)
        for i, b in enumerate(batches)
    ]
    assert _fields(out) == _fields(batches)


def test_compressed_wrapper_to_v2_is_one_batch_each() -> None:
    for name, codec in (("v1-gzip.log", Compression.GZIP), ("v0-snappy.log", Compression.SNAPPY)):
        batches = _batches(name)
        out, _ = _convert(batches)
        assert len(out) == len(batches)
        assert all(b.compression is codec and b.magic == 2 for b in out)
        assert _fields(out) == _fields(batches)


def test_v0_gets_no_timestamp_or_the_given_one() -> None:
    batches = _batches("v0-none.log")
    out, conv = _convert(batches)
    assert {r.timestamp for b in out for r in b.records or ()} == {-1}
    assert all(b.timestampType is TimestampType.CREATE_TIME and b.maxTimestamp == -1 for b in out)
    out, conv = _convert(batches, timestamp=1234)
    assert {r.timestamp for b in out for r in b.records or ()} == {1234}
    n = sum(len(b.records or ()) for b in batches)
    assert conv.changes.timestamps_set == n
    assert ("v0 records given --timestamp", n) in conv.changes.lines()


def test_down_conversion_drops_headers_and_counts_them() -> None:
    batches = _batches("v2-headers.log")
    n_headers = sum(len(r.headers) for b in batches for r in b.records or ())
    assert n_headers > 0
    for magic in (1, 0):
        out, conv = _convert(batches, to_magic=magic)
        assert all(b.magic == magic for b in out)
        assert conv.changes.headers_dropped == n_headers
        expected = _no_headers(_fields(batches))
        if magic == 0:
            expected = [(f[0], -1, *f[2:]) for f in expected]
            assert conv.changes.timestamps_dropped == len(expected)
        assert _fields(out) == expected


def test_down_conversion_refuses_transactions_unless_drop_control() -> None:
    batches = _batches("txn-control.log")
    with pytest.raises(ConversionError, match="--drop-control") as info:
        _convert(batches, to_magic=1)
    assert info.value.position == 0 and info.value.file is not None
    out, conv = _convert(batches, to_magic=1, drop_control=True)
    data = [r for b in batches if not b.isControl for r in b.records or ()]
    assert _fields(out) == [record_fields(r) for r in data]
    c = conv.changes
    assert c.control_batches_dropped == sum(b.isControl for b in batches) > 0
    assert (
        c.transactional_batches_made_plain == sum(b.isTransactional and not b.isControl for b in batches) > 0
    )
    assert c.producer_fields_lost == c.transactional_batches_made_plain
    assert not any(b.isTransactional or b.producerId != -1 for b in out)


def test_zstd_below_v2_is_refused() -> None:
    with pytest.raises(ConversionError, match="zstd"):
        ConvertOptions(to_magic=1, compression=Compression.ZSTD).check()
    with pytest.raises(ConversionError, match="--compression") as info:
        _convert(_batches("v2-zstd.log"), to_magic=0)
    assert info.value.position == 0
    out, conv = _convert(_batches("v2-zstd.log"), to_magic=0, compression=Compression.GZIP)
    assert all(b.compression is Compression.GZIP and b.magic == 0 for b in out)
    assert conv.changes.codecs_changed == len(out)


def test_compression_option_changes_data_batches_never_control_ones() -> None:
    batches = _batches("txn-control.log")
    out, conv = _convert(batches, compression=Compression.LZ4)
    for before, after in zip(batches, out, strict=True):
        assert after.compression is (Compression.NONE if before.isControl else Compression.LZ4)
        assert after.attributes & 7 == after.compression
        assert after._replace(compression=before.compression, attributes=before.attributes) == before
    assert conv.changes.codecs_changed == sum(not b.isControl for b in batches)


def test_plain_v1_compressed_to_v1_groups_into_wrappers() -> None:
    batches = _batches("v1-none.log")
    out, _ = _convert(batches, to_magic=1, compression=Compression.GZIP)
    assert len(out) == 1 and out[0].compression is Compression.GZIP
    assert out[0].maxTimestamp == max(r.timestamp for r in out[0].records or ())
    assert _fields(out) == _fields(batches)


def test_log_append_time_is_kept_and_groups_only_equal_times() -> None:
    batches = _batches("v1-logappendtime.log")
    out, _ = _convert(batches)
    assert all(b.timestampType is TimestampType.LOG_APPEND_TIME for b in out)
    assert _fields(out) == _fields(batches)
    for b in out:
        assert {r.timestamp for r in b.records or ()} == {b.maxTimestamp}
    v2 = _batches("v2-logappendtime.log")
    back, _ = _convert(v2, to_magic=1)
    assert all(b.timestampType is TimestampType.LOG_APPEND_TIME and b.attributes & 8 for b in back)
    assert _fields(back) == _fields(v2)


def test_empty_batches_stay_in_v2_and_are_left_out_below() -> None:
    batches = _batches("compacted-gaps.log")
    empty = [b for b in batches if not b.records]
    assert empty
    out, conv = _convert(batches, to_magic=1)
    assert conv.changes.empty_batches_dropped == len(empty)
    assert _fields(out) == _fields(batches)
    out, _ = _convert(batches, batch_records=100)
    assert [b for b in out if not b.records] == empty


def test_rebatching_keeps_producer_batches_whole() -> None:
    batches = _batches("txn-control.log")
    out, _ = _convert(batches, batch_records=1000)
    assert out == batches  # every batch has a producer or is control: none is merged


def test_huge_offset_gaps_split_a_v2_batch() -> None:
    recs = [new_record(o, 5, b"k", b"v", (), -1, 0) for o in (0, 1, 2**31 + 5, 2**31 + 6)]
    msgs = [
        Batch("f", i, r.offset, r.offset, 1, 0, Compression.NONE, TimestampType.CREATE_TIME, 5, 5,
              -1, -1, -1, -1, -1, False, False, None, 0, True, 30, 1, (r,))
        for i, r in enumerate(recs)
    ]  # fmt: skip
    out, _ = _convert(msgs)
    assert [[r.offset for r in b.records or ()] for b in out] == [[0, 1], [2**31 + 5, 2**31 + 6]]


def test_headers_only_batches_are_refused() -> None:
    batch = _batches("v2-none.log")[0]._replace(records=None)
    with pytest.raises(ConversionError, match="without its records"):
        _convert([batch])


def test_options_are_checked() -> None:
    with pytest.raises(ConversionError):
        ConvertOptions(to_magic=3).check()
    with pytest.raises(ConversionError):
        ConvertOptions(batch_records=0).check()
