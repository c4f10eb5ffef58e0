"""``convert --batching cleaner``: v0/v1 written as v2 by the rules of Kafka 4's log cleaner.

The rules (KAFKA-13093, apache/kafka PR #18321): a compressed v0/v1 wrapper becomes one v2 batch in
its codec; each uncompressed v0/v1 message becomes a v2 batch of its own; v0 records get CreateTime
and timestamp -1; a LogAppendTime wrapper gives a LogAppendTime batch whose records hold the append
time; v2 batches stay as they are. The output is read back with kafka-python's reader.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result
from kafka.record import MemoryRecords
from kafka.record.default_records import DefaultRecordBatchBuilder

from kafka_dump.cli import main

from .batches import GZIP, LZ4, TS0, legacy_messages, legacy_records, set_offset

FIXTURES = Path(__file__).parent.parent / "fixtures"


def cleaned(tmp_path: Path, data: bytes | Path, *args: str) -> tuple[Result, list[Any]]:
    src = data if isinstance(data, Path) else tmp_path / "in.log"
    if not isinstance(data, Path):
        src.write_bytes(data)
    dst = tmp_path / "out.log"
    result = CliRunner().invoke(main, ["convert", "--batching", "cleaner", *args, str(src), "-o", str(dst)])
    if result.exit_code != 0:
        return result, []
    records = MemoryRecords(dst.read_bytes())
    batches = []
    while (batch := records.next_batch()) is not None:
        batches.append((batch, list(batch)))
    return result, batches


def test_a_v0_wrapper_becomes_one_create_time_batch_without_timestamps(tmp_path: Path) -> None:
    data = legacy_messages(legacy_records(3), magic=0, codec=GZIP, base_offset=10)
    result, batches = cleaned(tmp_path, data)
    assert result.exit_code == 0, result.output
    [(batch, records)] = batches
    assert (batch.magic, batch.compression_type, batch.timestamp_type) == (2, GZIP, 0)
    assert batch.base_offset == 10 and [r.offset for r in records] == [10, 11, 12]
    assert [r.timestamp for r in records] == [-1, -1, -1]
    assert (batch.producer_id, batch.base_sequence) == (-1, -1)


def test_a_log_append_time_wrapper_keeps_its_append_time_on_every_record(tmp_path: Path) -> None:
    result, batches = cleaned(tmp_path, FIXTURES / "v1-logappendtime.log")
    assert result.exit_code == 0, result.output
    (wrapper, inner), *plain = batches
    assert (wrapper.compression_type, wrapper.timestamp_type) == (GZIP, 1)
    assert {r.timestamp for r in inner} == {wrapper.max_timestamp} and len(inner) == 3
    assert wrapper.first_timestamp == wrapper.max_timestamp  # no stored create time kept
    assert [len(records) for _, records in plain] == [1, 1]  # each plain message: a batch of its own
    assert all(b.timestamp_type == 1 for b, _ in plain)


def test_uncompressed_runs_become_single_record_batches(tmp_path: Path) -> None:
    run = legacy_messages(legacy_records(4), magic=1, base_offset=0, timestamp=TS0)
    wrapper = legacy_messages(legacy_records(2, seed=1), magic=1, codec=LZ4, base_offset=4, timestamp=TS0 + 9)
    v0_run = legacy_messages(legacy_records(2, seed=2), magic=0, base_offset=6)
    result, batches = cleaned(tmp_path, run + wrapper + v0_run)
    assert result.exit_code == 0, result.output
    assert [len(records) for _, records in batches] == [1, 1, 1, 1, 2, 1, 1]
    assert [b.base_offset for b, _ in batches] == [0, 1, 2, 3, 4, 6, 7]
    assert [r.timestamp for _, records in batches[:4] for r in records] == [TS0, TS0 + 1, TS0 + 2, TS0 + 3]
    assert [b.compression_type for b, _ in batches] == [0, 0, 0, 0, LZ4, 0, 0]
    assert [r.timestamp for _, records in batches[5:] for r in records] == [-1, -1]
    # The producer's batching (the default) groups the same plain messages instead.
    default = CliRunner().invoke(main, ["convert", str(tmp_path / "in.log"), "-o", str(tmp_path / "p.log")])
    assert default.exit_code == 0
    grouped = MemoryRecords((tmp_path / "p.log").read_bytes())
    count = 0
    while grouped.next_batch() is not None:
        count += 1
    assert count == 3


def test_control_free_transactional_data_stays_as_it_is(tmp_path: Path) -> None:
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=0,
        is_transactional=1,
        producer_id=42,
        producer_epoch=3,
        base_sequence=7,
        batch_size=1 << 20,
    )
    for i in range(3):
        builder.append(i, timestamp=TS0 + i, key=b"k", value=b"v%d" % i, headers=[])
    txn = set_offset(bytes(builder.build()), 20)
    result, batches = cleaned(tmp_path, legacy_messages(legacy_records(2), magic=1, timestamp=TS0) + txn)
    assert result.exit_code == 0, result.output
    batch, records = batches[-1]
    assert (batch.is_transactional, batch.producer_id, batch.producer_epoch, batch.base_sequence) == (
        True,
        42,
        3,
        7,
    )
    assert [r.offset for r in records] == [20, 21, 22] and len(batches) == 3


def test_options_the_cleaner_decides_are_refused(tmp_path: Path) -> None:
    src = FIXTURES / "v1-none.log"
    for extra in (
        ["--compression", "lz4"],
        ["--batch-records", "5"],
        ["--to-magic", "1"],
        ["--timestamp", "5"],
    ):
        result = CliRunner().invoke(
            main, ["convert", "--batching", "cleaner", *extra, str(src), "-o", str(tmp_path / "x.log")]
        )
        assert result.exit_code == 2 and "--batching cleaner" in result.stderr, extra
        assert not (tmp_path / "x.log").exists()
