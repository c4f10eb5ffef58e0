"""``kdump state``: replays of generated topics against hand-computed state, and of the real broker
partitions against a plain scan of their records (the last record per key).

The generated segments are packed here with ``struct`` and ``crc32c`` (record bytes from
``tests.batches.raw_record``): keys and values follow Kafka's schemas by hand, not kdump's encoders.
"""

from __future__ import annotations

import json
import struct
import uuid
from pathlib import Path
from typing import Any

import crc32c
import pytest
from click.testing import CliRunner, Result

from kafka_dump.cli import main
from tests.batches import compact_string, raw_record, uvarint
from tests.conftest import SHARED_REAL as REAL

T0 = 1_700_000_000_000
MIN = 60_000
V2 = struct.Struct(">qiibIhiqqqhii")
TXN, CONTROL = 0x10, 0x20


def batch(
    offset: int, records: list[tuple[bytes | None, bytes | None]], *, ts: int = T0, pid: int = -1, epoch: int = -1,
    attributes: int = 0,
) -> bytes:  # fmt: skip
    """A v2 batch (no compression) of records at ``offset``.. stamped ``ts``."""
    body = b"".join(raw_record(offset_delta=i, key=k, value=v) for i, (k, v) in enumerate(records))
    n = len(records)
    head = V2.pack(
        offset, 49 + len(body), 0, 2, 0, attributes, n - 1, ts, ts, pid, epoch, -1 if pid < 0 else 0, n
    )
    whole = head + body
    return whole[:17] + struct.pack(">I", crc32c.crc32c(whole[21:])) + whole[21:]


def marker(offset: int, pid: int, commit: bool, ts: int = T0) -> bytes:
    """A COMMIT or ABORT control batch of producer ``pid``."""
    key = struct.pack(">hh", 0, 1 if commit else 0)
    return batch(offset, [(key, struct.pack(">hi", 0, 0))], ts=ts, pid=pid, epoch=0, attributes=TXN | CONTROL)


def s16(text: str) -> bytes:
    data = text.encode()
    return struct.pack(">h", len(data)) + data


def commit_key(group: str, topic: str, partition: int) -> bytes:
    return struct.pack(">h", 1) + s16(group) + s16(topic) + struct.pack(">i", partition)


def commit_value(offset: int, ts: int, epoch: int = 5, metadata: str = "") -> bytes:
    """OffsetCommitValue v3: offset, leaderEpoch, metadata, commitTimestamp."""
    return struct.pack(">hqi", 3, offset, epoch) + s16(metadata) + struct.pack(">q", ts)


def group_key(group: str) -> bytes:
    return struct.pack(">h", 2) + s16(group)


def segment(directory: Path, base: int, *batches: bytes) -> None:
    directory.mkdir(exist_ok=True)
    (directory / f"{base:020d}.log").write_bytes(b"".join(batches))


def state(*args: str) -> Result:
    return CliRunner().invoke(main, ["state", *args], env={"COLUMNS": "200"})


def rows(*args: str) -> list[dict[str, Any]]:
    result = state("--format", "json", *args)
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.stdout.splitlines()]


def offsets_of(found: list[dict[str, Any]]) -> dict[tuple[str, str, int], int]:
    return {(r["group"], r["topic"], r["partition"]): r["offset"] for r in found if r["type"] == "offset"}


@pytest.fixture
def offsets_topic(tmp_path: Path) -> Path:
    """Two segments: commits replaced, a group deleted (its offsets and metadata tombstoned), a
    transaction committed across the segment boundary and one aborted."""
    d = tmp_path / "__consumer_offsets-7"
    a, b = commit_key("g1", "orders", 0), commit_key("g1", "orders", 1)
    gone = commit_key("old", "orders", 0)
    segment(
        d, 0,
        batch(0, [(a, commit_value(10, T0)), (gone, commit_value(3, T0))]),
        batch(2, [(group_key("old"), struct.pack(">h", 0) + s16("consumer") + struct.pack(">i", 1) + s16("range") + s16("m") + struct.pack(">i", 0))]),
        batch(3, [(a, commit_value(20, T0 + MIN))], ts=T0 + MIN),
        batch(4, [(b, commit_value(7, T0 + MIN))], ts=T0 + MIN, pid=42, epoch=0, attributes=TXN),
        batch(5, [(commit_key("g1", "orders", 2), commit_value(99, T0 + MIN))], ts=T0 + MIN, pid=43, epoch=0, attributes=TXN),
    )  # fmt: skip
    segment(
        d, 6,
        batch(6, [(gone, None), (group_key("old"), None)], ts=T0 + 2 * MIN),
        marker(8, 42, commit=True, ts=T0 + 2 * MIN),
        marker(9, 43, commit=False, ts=T0 + 2 * MIN),
        batch(10, [(a, commit_value(30, T0 + 3 * MIN))], ts=T0 + 3 * MIN),
    )  # fmt: skip
    return d


def test_offsets_replay_last_value_tombstones_and_transactions(offsets_topic: Path) -> None:
    found = rows(str(offsets_topic))
    # a: 10, 20, then 30; b: committed by producer 42's marker in the next segment; 2: aborted; old: deleted.
    assert offsets_of(found) == {("g1", "orders", 0): 30, ("g1", "orders", 1): 7}
    assert [r for r in found if r["type"] == "group"] == []
    a = next(r for r in found if r["type"] == "offset" and r["partition"] == 0)
    assert (a["leaderEpoch"], a["commitTimestamp"], a["recordOffset"]) == (5, T0 + 3 * MIN, 10)


def test_offsets_at_offset_and_at_time(offsets_topic: Path) -> None:
    before_delete = rows(str(offsets_topic), "--at-offset", "5")
    # The transactions are still open at offset 5: neither of their commits counts yet.
    assert offsets_of(before_delete) == {("g1", "orders", 0): 20, ("old", "orders", 0): 3}
    assert [(r["group"], r["generation"]) for r in before_delete if r["type"] == "group"] == [("old", 1)]
    at_time = rows(str(offsets_topic), "--at-time", "2023-11-14T22:15:20Z")  # T0 + 2 minutes
    assert offsets_of(at_time) == {("g1", "orders", 0): 20, ("g1", "orders", 1): 7}
    only = rows(str(offsets_topic), "--at-offset", "5", "--group", "old")
    assert offsets_of(only) == {("old", "orders", 0): 3}


def test_offsets_table(offsets_topic: Path) -> None:
    result = state(str(offsets_topic))
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0] == "Committed offsets (2)"
    assert lines[2].split() == ["g1", "orders", "0", "30", "5", "2023-11-14T22:16:20.000Z"]


def txn_value(pid: int, status: int, start: int, update: int, timeout: int = MIN) -> bytes:
    """TransactionLogValue v0: producer id and epoch, timeout, status, partitions, timestamps."""
    parts = struct.pack(">i", 1) + s16("orders") + struct.pack(">iii", 2, 0, 1)
    return struct.pack(">hqhib", 0, pid, 3, timeout, status) + parts + struct.pack(">qq", update, start)


def test_transaction_state_and_stuck(tmp_path: Path) -> None:
    d = tmp_path / "__transaction_state-1"
    key = lambda tid: struct.pack(">h", 0) + s16(tid)  # noqa: E731
    segment(
        d, 0,
        batch(0, [(key("a"), txn_value(1, 0, -1, T0))]),
        batch(1, [(key("a"), txn_value(1, 1, T0, T0)), (key("gone"), txn_value(3, 4, T0, T0))]),
        batch(3, [(key("b"), txn_value(2, 1, T0 + MIN, T0 + MIN)), (key("gone"), None)], ts=T0 + MIN),
        batch(5, [(key("c"), txn_value(4, 4, T0, T0 + 2 * MIN))], ts=T0 + 2 * MIN),
    )  # fmt: skip
    found = rows(str(d))
    # Newest timestamp T0+2min: a has been Ongoing 2 minutes (timeout 1 minute), b 1 minute (not longer).
    assert [(r["transactionalId"], r["state"], r["ageMs"], r["stuck"]) for r in found] == [
        ("a", "Ongoing", 2 * MIN, True), ("b", "Ongoing", MIN, False), ("c", "CompleteCommit", None, False),
    ]  # fmt: skip
    assert found[0]["partitions"] == [{"topic": "orders", "partitions": [0, 1]}]
    assert [r["transactionalId"] for r in rows(str(d), "--transactional-id", "b")] == ["b"]
    table = state(str(d)).stdout
    assert "STUCK" in table.splitlines()[2] and "STUCK" not in table.splitlines()[3]


@pytest.fixture
def data_partition(tmp_path: Path) -> Path:
    """orders-0: producer 7's transaction never ends; producer 8's commits in the next segment; 9 aborts."""
    d = tmp_path / "orders-0"
    segment(
        d, 0,
        batch(0, [(b"k", b"v")], pid=7, epoch=2, attributes=TXN),
        batch(1, [(b"k", b"v")]),
        batch(2, [(b"k", b"v"), (b"k", b"v")], pid=8, epoch=0, attributes=TXN, ts=T0 + MIN),
        batch(4, [(b"k", b"v")], pid=9, epoch=0, attributes=TXN, ts=T0 + MIN),
        marker(5, 9, commit=False, ts=T0 + MIN),
    )  # fmt: skip
    segment(d, 6, marker(6, 8, commit=True, ts=T0 + 2 * MIN), batch(7, [(b"k", b"v")], ts=T0 + 20 * MIN))
    return d


def test_open_transactions_in_a_data_partition(data_partition: Path) -> None:
    found = rows("--transactions", str(data_partition))
    assert found[0] == {
        "type": "partition-end", "topic": "orders", "partition": 0, "endOffset": 8, "lastStableOffset": 0,
        "newestTimestamp": T0 + 20 * MIN, "openTransactions": 1,
    }  # fmt: skip
    txn = found[1]
    assert (txn["producerId"], txn["producerEpoch"], txn["firstOffset"], txn["ageMs"], txn["hanging"]) == (
        7, 2, 0, 20 * MIN, True,
    )  # fmt: skip
    assert txn["heldBackRecords"] == 8
    assert txn["abortCommand"].endswith("abort --topic orders --partition 0 --start-offset 0")
    assert len(found) == 2
    relaxed = rows("--transactions", "--timeout", "30m", str(data_partition))
    assert relaxed[1]["hanging"] is False and "abortCommand" not in relaxed[1]
    table = state("--transactions", str(data_partition)).stdout
    assert "HANGING" in table
    assert "kafka-transactions.sh --bootstrap-server BROKER:9092 abort --topic orders --partition 0 " in table


def test_open_transaction_from_the_producer_snapshot(tmp_path: Path) -> None:
    """The log starts at 10, after producer 5 began its transaction at 4: the snapshot says so."""
    d = tmp_path / "t-3"
    segment(d, 10, batch(10, [(b"k", b"v")], ts=T0 + 30 * MIN))
    entry = struct.pack(">qhiqiqiq", 5, 1, 0, 4, 0, T0, 0, 4)
    body = struct.pack(">i", 1) + entry
    (d / f"{10:020d}.snapshot").write_bytes(struct.pack(">hI", 1, crc32c.crc32c(body)) + body)
    found = rows("--transactions", str(d))
    assert (found[1]["producerId"], found[1]["firstOffset"], found[1]["fromSnapshot"]) == (5, 4, True)
    assert found[1]["hanging"] is True and found[0]["lastStableOffset"] == 4


def framed(api_key: int, body: bytes) -> bytes:
    return uvarint(1) + uvarint(api_key) + uvarint(0) + body


def ints(values: list[int]) -> bytes:
    return uvarint(len(values) + 1) + b"".join(struct.pack(">i", v) for v in values)


def test_cluster_metadata_replay(tmp_path: Path) -> None:
    d = tmp_path / "__cluster_metadata-0"
    tid, gone = uuid.UUID(int=1).bytes, uuid.UUID(int=2).bytes

    def topic(name: str, t: bytes) -> bytes:
        return framed(2, compact_string(name) + t + b"\x00")

    def part(t: bytes, p: int) -> bytes:
        lists = ints([1, 2]) + ints([1, 2]) + ints([]) + ints([])
        return framed(3, struct.pack(">i", p) + t + lists + struct.pack(">iii", 1, 0, 0) + b"\x00")

    # PartitionChangeRecord: leader 2 (tag 1) and ISR [2] (tag 0).
    change = framed(
        5,
        struct.pack(">i", 0)
        + tid
        + uvarint(2)
        + uvarint(0)
        + uvarint(5)
        + ints([2])
        + uvarint(1)
        + uvarint(4)
        + struct.pack(">i", 2),
    )
    config = framed(
        4,
        struct.pack(">b", 2)
        + compact_string("orders")
        + compact_string("retention.ms")
        + compact_string("1000")
        + b"\x00",
    )
    segment(
        d, 0,
        batch(0, [(None, topic("orders", tid)), (None, part(tid, 0)), (None, part(tid, 1)), (None, config)]),
        batch(4, [(None, topic("old", gone)), (None, part(gone, 0)), (None, change)]),
        batch(7, [(None, framed(9, gone + b"\x00"))]),
        # A metadata transaction that is aborted: its topic is never created.
        batch(8, [(None, framed(23, b"\x00")), (None, topic("never", uuid.UUID(int=3).bytes)), (None, framed(25, b"\x00"))]),
    )  # fmt: skip
    found = rows(str(d))
    assert [(r["topic"], r["topicId"]) for r in found if r["type"] == "topic"] == [
        ("orders", "AAAAAAAAAAAAAAAAAAAAAQ")
    ]
    parts = [
        (r["partition"], r["leader"], r["leaderEpoch"], r["partitionEpoch"], r["isr"])
        for r in found
        if r["type"] == "partition"
    ]
    assert parts == [(0, 2, 1, 1, [2]), (1, 1, 0, 0, [1, 2])]
    assert [(r["resourceName"], r["name"], r["value"]) for r in found if r["type"] == "config"] == [
        ("orders", "retention.ms", "1000")
    ]
    before = rows(str(d), "--at-offset", "6", "--topic", "old")
    assert [r["topic"] for r in before if r["type"] == "topic"] == ["old"]


def test_not_an_internal_topic_is_a_usage_error(data_partition: Path) -> None:
    result = state(str(data_partition))
    assert result.exit_code == 2
    assert "not a partition of __consumer_offsets" in result.output


def plain_scan(directory: Path) -> dict[tuple[str, str, int], int]:
    """The last commit per key by a plain scan of the records ``dump --format json`` decodes."""
    result = CliRunner().invoke(main, ["dump", "--format", "json", str(directory)])
    last: dict[tuple[str, str, int], int | None] = {}
    for line in result.stdout.splitlines():
        for r in json.loads(line).get("records") or ():
            d = r.get("decoded")
            if (
                d is None
                or d["key"] is None
                or d["key"]["schema"] not in ("OffsetCommitKey", "LegacyOffsetCommitKey")
            ):
                continue
            k = d["key"]["data"]
            last[(k["group"], k["topic"], k["partition"])] = (
                None if d["tombstone"] else d["value"]["data"]["offset"]
            )
    return {k: v for k, v in last.items() if v is not None}


REAL_OFFSETS = sorted(REAL.glob("*/__consumer_offsets-*")) if REAL.is_dir() else []


@pytest.mark.skipif(not REAL_OFFSETS, reason="../shared/fixtures-real is absent")
@pytest.mark.parametrize("directory", REAL_OFFSETS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_real_consumer_offsets_agree_with_a_plain_scan(directory: Path) -> None:
    found = rows(str(directory))
    assert offsets_of(found) == plain_scan(directory)


REAL_METADATA = sorted(REAL.glob("*/__cluster_metadata-0")) if REAL.is_dir() else []


@pytest.mark.skipif(not REAL_METADATA, reason="../shared/fixtures-real is absent")
@pytest.mark.parametrize("directory", REAL_METADATA, ids=lambda p: p.parent.name)
def test_real_cluster_metadata_topics_agree_with_their_records(directory: Path) -> None:
    """Every topic the replay shows was created by a TopicRecord, has a partition per PartitionRecord,
    and was not removed after; the snapshot's end offset is where the log is read from."""
    found = rows(str(directory))
    result = CliRunner().invoke(main, ["dump", "--format", "json", str(directory)])
    created: dict[str, str] = {}
    partitions: dict[str, set[int]] = {}
    for line in result.stdout.splitlines():
        for r in json.loads(line).get("records") or ():
            v = (r.get("decoded") or {}).get("value") or {}
            if v.get("schema") == "TopicRecord":
                created[v["data"]["topicId"]] = v["data"]["name"]
            elif v.get("schema") == "PartitionRecord":
                partitions.setdefault(v["data"]["topicId"], set()).add(v["data"]["partitionId"])
            elif v.get("schema") == "RemoveTopicRecord":
                created.pop(v["data"]["topicId"], None)
    topics = {r["topicId"]: r["topic"] for r in found if r["type"] == "topic"}
    assert topics and topics == created
    shown = {(r["topicId"], r["partition"]) for r in found if r["type"] == "partition"}
    assert shown == {(t, p) for t in topics for p in partitions[t]}
    assert [r for r in found if r["type"] == "broker"]


def test_hostile_names_reach_a_terminal_escaped(tmp_path: Path) -> None:
    """A group and a topic named with escapes and markup are shown escaped, in both formats, on a pty."""
    from tests.test_terminal_safety import SGR, on_terminal

    d = tmp_path / "__consumer_offsets-0"
    segment(d, 0, batch(0, [(commit_key("g\x1b[31m[bold]x", "t\u202e\r", 0), commit_value(1, T0))]))
    for fmt in ("table", "json"):
        out, _err = on_terminal("state", "--format", fmt, str(d))
        text = SGR.sub("", out)
        assert "\x1b" not in text and "\u202e" not in text and "\r" not in text, fmt
        assert "[bold]" in text, fmt


def share_key(kind: int, group: str, partition: int) -> bytes:
    return struct.pack(">h", kind) + s16(group) + uuid.UUID(int=9).bytes + struct.pack(">i", partition)


def share_batches(batches: list[tuple[int, int, int, int]]) -> bytes:
    return uvarint(len(batches) + 1) + b"".join(struct.pack(">qqbh", *b) + b"\x00" for b in batches)


def test_share_group_state_snapshot_then_updates(tmp_path: Path) -> None:
    d = tmp_path / "__share_group_state-0"
    # ShareSnapshotValue v0: snapshot epoch 1, state epoch 3, leader epoch 7, start 100, create/write times.
    snapshot = struct.pack(">hiiiqqq", 0, 1, 3, 7, 100, T0, T0) + share_batches(
        [(100, 109, 2, 1), (110, 119, 0, 0)]
    )
    # ShareUpdateValue v0: leader epoch -1 (kept), start 105, offsets 110-114 acknowledged.
    update = struct.pack(">hiiq", 0, 1, -1, 105) + share_batches([(110, 114, 2, 1)])
    gone = struct.pack(">hiiiqqq", 0, 1, 0, 0, 0, T0, T0) + share_batches([])
    segment(
        d, 0,
        batch(0, [(share_key(0, "sg", 0), snapshot + b"\x00"), (share_key(0, "sg", 1), gone + b"\x00")]),
        batch(2, [(share_key(1, "sg", 0), update + b"\x00"), (share_key(0, "sg", 1), None)]),
    )  # fmt: skip
    found = rows(str(d))
    assert len(found) == 1
    p = found[0]
    assert (p["groupId"], p["partition"], p["startOffset"], p["stateEpoch"], p["leaderEpoch"]) == (
        "sg",
        0,
        105,
        3,
        7,
    )
    assert [(b["firstOffset"], b["lastOffset"], b["deliveryState"], b["deliveryCount"]) for b in p["stateBatches"]] == [
        (105, 114, 2, 1), (115, 119, 0, 0),
    ]  # fmt: skip
    assert rows(str(d), "--at-offset", "1")[0]["stateBatches"][0]["firstOffset"] == 100
    assert "105-114:2/1 115-119:0/0" in state(str(d)).stdout


def test_corrupt_batch_is_reported_and_the_rest_replayed(offsets_topic: Path) -> None:
    log = offsets_topic / f"{6:020d}.log"
    data = bytearray(log.read_bytes())
    data[70] ^= 0xFF  # inside the first batch's records: its CRC fails
    log.write_bytes(bytes(data))
    result = state("--format", "json", str(offsets_topic))
    assert result.exit_code == 1
    assert "00000000000000000006.log: byte 0:" in result.stderr and "Traceback" not in result.stderr
    # The batch of tombstones is left out: the group "old" keeps its commit.
    assert offsets_of([json.loads(line) for line in result.stdout.splitlines()]) == {
        ("g1", "orders", 0): 30, ("g1", "orders", 1): 7, ("old", "orders", 0): 3,
    }  # fmt: skip


def test_missing_path_is_one_line(tmp_path: Path) -> None:
    result = state(str(tmp_path / "nope"))
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and "nope" in result.stderr


def test_a_log_dir_replays_each_internal_partition_and_skips_the_others(
    offsets_topic: Path, data_partition: Path
) -> None:
    result = state("--format", "json", str(offsets_topic.parent))
    assert result.exit_code == 0
    assert f"{data_partition}: skipped, not a partition of one of Kafka's own topics" in result.stderr
    assert offsets_of([json.loads(line) for line in result.stdout.splitlines()]) == {
        ("g1", "orders", 0): 30, ("g1", "orders", 1): 7,
    }  # fmt: skip
    nothing = state("--group", "nobody", str(offsets_topic))
    assert nothing.exit_code == 0 and nothing.stdout == ""
    assert "kdump: nothing to show: 11 records replayed" in nothing.stderr


def test_open_transactions_at_an_earlier_offset(data_partition: Path) -> None:
    found = rows("--transactions", "--at-offset", "3", str(data_partition))
    assert found[0]["endOffset"] == 4 and found[0]["newestTimestamp"] == T0 + MIN
    assert [(t["producerId"], t["firstOffset"], t["ageMs"], t["hanging"]) for t in found[1:]] == [
        (7, 0, MIN, False), (8, 2, 0, False),
    ]  # fmt: skip
