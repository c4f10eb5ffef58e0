"""Side files (kafka_dump/log/sidefiles.py): indexes, producer snapshots, checkpoints.

Real indexes and snapshots come from ../shared/fixtures-real (README there lists their entries);
``.txnindex``, ``leader-epoch-checkpoint`` and ``partition.metadata`` are built from Kafka's layouts
(AbortedTxn, LeaderEpochCheckpointFile, PartitionMetadataFile), since no real one was found.
"""

from __future__ import annotations

import struct
import tempfile
from pathlib import Path, PurePath

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_dump.log.names import file_name
from kafka_dump.log.sidefiles import (
    AbortedTxn,
    LeaderEpochEntry,
    OffsetCheckpointEntry,
    OffsetIndexEntry,
    PartitionMetadata,
    ProducerEntry,
    ProducerSnapshotHeader,
    Property,
    SideItem,
    TimeIndexEntry,
    read_side_file,
    side_file_kind,
)
from kafka_dump.model import Problem, ProblemKind
from kafka_dump.wire.checksum import crc32c
from tests.batches import v2_batch
from tests.conftest import SHARED_REAL as REAL

needs_real = pytest.mark.skipif(not REAL.is_dir(), reason="../shared/fixtures-real is absent")


def items(path: Path) -> list[SideItem]:
    return list(read_side_file(path))


def test_kind_by_name() -> None:
    assert side_file_kind("x/00000000000000000000.index") == ".index"
    assert side_file_kind("00000000000000000000.timeindex") == ".timeindex"
    assert side_file_kind("00000000000000000000.txnindex") == ".txnindex"
    assert side_file_kind("00000000000000000009.snapshot") == ".snapshot"
    assert side_file_kind("t-0/leader-epoch-checkpoint") == "leader-epoch-checkpoint"
    assert side_file_kind("t-0/partition.metadata") == "partition.metadata"
    assert side_file_kind("00000000000000000000.log") is None
    for name in (
        "recovery-point-offset-checkpoint",
        "replication-offset-checkpoint",
        "meta.properties",
        "log-start-offset-checkpoint",
        "cleaner-offset-checkpoint",
        ".lock",
        "quorum-state",
    ):
        assert side_file_kind(f"/var/lib/kafka/data/{name}") == name
    assert side_file_kind("data/bootstrap.checkpoint") is None  # record batches: a segment


@given(st.text(alphabet="/.ab", max_size=12))
def test_a_name_is_what_a_path_calls_it(text: str) -> None:
    """``file_name`` takes a string's last part without a Path: the same name as ``Path.name``."""
    assert file_name(text) == PurePath(text).name == file_name(PurePath(text))


@needs_real
def test_real_indexes() -> None:
    # README: 213 entries, first [57, 4104], last [12154, 874185], relative to base offset 1725413.
    idx = items(REAL / "ronem123-kafka41-kraft/__cluster_metadata-0/00000000000001725413.index")
    assert len(idx) == 213
    assert idx[0] == OffsetIndexEntry(1725413 + 57, 4104) and idx[-1] == OffsetIndexEntry(
        1725413 + 12154, 874185
    )
    tix = items(REAL / "ronem123-kafka41-kraft/__cluster_metadata-0/00000000000001725413.timeindex")
    assert len(tix) == 214 and tix[0] == TimeIndexEntry(1767076168455, 1725413 + 57)
    assert tix[-1] == TimeIndexEntry(1767085789913, 1725413 + 12155)
    # A zero-length index is empty, not damaged; a one-entry time index keeps its entry.
    assert items(REAL / "ronem123-kafka41-kraft/__consumer_offsets-44/00000000000000000009.index") == []
    assert items(REAL / "ronem123-kafka41-kraft/__consumer_offsets-44/00000000000000000009.timeindex") == [
        TimeIndexEntry(1766550106107, 10)
    ]


@needs_real
def test_real_producer_snapshots() -> None:
    # Kafka 3.4: three idempotent producers (ids 2, 3, 4, epoch 0) that wrote tenitems-0's nine records.
    snap = items(REAL / "macsakini-kafka34-zk/tenitems-0/00000000000000000009.snapshot")
    header = snap[0]
    assert isinstance(header, ProducerSnapshotHeader)
    assert (header.version, header.crcValid, header.producerCount, header.crc) == (1, True, 3, 2032811315)
    entries = [e for e in snap[1:] if isinstance(e, ProducerEntry)]
    assert len(entries) == 3 == len(snap) - 1
    assert sorted(e.producerId for e in entries) == [2, 3, 4]
    e3 = next(e for e in entries if e.producerId == 3)
    assert e3 == ProducerEntry(3, 0, -1, -1, 1676144016364, 3, 7, 0)
    assert e3.firstSequence == 3
    empty = items(REAL / "ldi-poc-kafka370-kraft/__consumer_offsets-6/00000000000000000013.snapshot")
    assert empty == [ProducerSnapshotHeader(1, 1214729159, 1214729159, True, 0)]


def snapshot_bytes(entries: list[tuple[int, int, int, int, int, int, int, int]]) -> bytes:
    body = struct.pack(">i", len(entries)) + b"".join(struct.pack(">qhiqiqiq", *e) for e in entries)
    return struct.pack(">hI", 1, crc32c(body)) + body


def test_snapshot_crc_checked_and_sequences_wrap(tmp_path: Path) -> None:
    # (producerId, epoch, lastSequence, lastOffset, offsetDelta, timestamp, coordinatorEpoch, txnFirstOffset)
    good = snapshot_bytes([(9, 1, 2, 100, 5, 1700000000000, 4, 96)])
    p = tmp_path / "00000000000000000101.snapshot"
    p.write_bytes(good)
    header, entry = items(p)
    assert isinstance(header, ProducerSnapshotHeader) and header.crcValid
    assert entry == ProducerEntry(9, 1, 4, 96, 1700000000000, 2, 100, 5)
    assert isinstance(entry, ProducerEntry) and entry.firstSequence == 0x7FFFFFFF - 2  # 2 - 5, wrapped
    p.write_bytes(good[:-1] + bytes([good[-1] ^ 1]))
    header, problem, _ = items(p)
    assert isinstance(header, ProducerSnapshotHeader) and not header.crcValid
    assert isinstance(problem, Problem) and problem.reason.startswith(
        "Snapshot is corrupt (CRC is no longer valid)"
    )
    p.write_bytes(good[:20])
    (cut,) = items(p)
    assert isinstance(cut, Problem) and cut.kind is ProblemKind.CORRUPT and "needs" in cut.reason
    p.write_bytes(struct.pack(">hI", 7, 0))
    assert [i.reason for i in items(p) if isinstance(i, Problem)] == ["unknown producer snapshot version 7"]
    # A count larger than the bytes there is refused before anything is sized by it.
    p.write_bytes(struct.pack(">hIi", 1, 0, 0x7FFFFFFF))
    (huge,) = items(p)
    assert isinstance(huge, Problem) and "cannot fit" in huge.reason


def test_preallocated_and_partial_indexes(tmp_path: Path) -> None:
    p = tmp_path / "00000000000000000100.index"
    p.write_bytes(struct.pack(">iiii", 0, 0, 5, 4096) + bytes(8 * 1000))
    *entries, tail = items(p)
    assert entries == [OffsetIndexEntry(100, 0), OffsetIndexEntry(105, 4096)]
    assert isinstance(tail, Problem) and (tail.kind, tail.position, tail.length) == (
        ProblemKind.ZERO_TAIL,
        16,
        8000,
    )
    p.write_bytes(struct.pack(">iiii", 0, 0, 5, 4096) + bytes(8 * 9000) + b"\x01")
    *_, damaged = items(p)
    assert isinstance(damaged, Problem) and damaged.kind is ProblemKind.CORRUPT and damaged.position == 16
    t = tmp_path / "00000000000000000100.timeindex"
    t.write_bytes(struct.pack(">qi", 1700000000000, 3) + b"\x00\x01\x02")
    assert items(t) == [
        TimeIndexEntry(1700000000000, 103),
        Problem(str(t), 12, 3, ProblemKind.PARTIAL_TAIL, "3 bytes at the end, less than one 12-byte entry"),
    ]


def test_txn_index(tmp_path: Path) -> None:
    p = tmp_path / "00000000000000000000.txnindex"
    p.write_bytes(
        struct.pack(">hqqqq", 0, 4001, 10, 14, 20) + struct.pack(">hqqqq", 3, 1, 1, 1, 1)
        + struct.pack(">hqqqq", 0, 4002, 30, 31, 40) + b"\x00"
    )  # fmt: skip
    got = items(p)
    assert got[0] == AbortedTxn(0, 4001, 10, 14, 20) and got[2] == AbortedTxn(0, 4002, 30, 31, 40)
    assert isinstance(got[1], Problem) and got[1].position == 34 and "unknown version 3" in got[1].reason
    assert isinstance(got[3], Problem) and got[3].kind is ProblemKind.PARTIAL_TAIL and got[3].position == 102


def test_leader_epoch_checkpoint(tmp_path: Path) -> None:
    p = tmp_path / "leader-epoch-checkpoint"
    p.write_text("0\n2\n0 0\n3 1725413\n")
    assert items(p) == [LeaderEpochEntry(0, 0), LeaderEpochEntry(3, 1725413)]
    p.write_text("0\n3\n0 0\nbad line\n")
    got = items(p)
    assert got[0] == LeaderEpochEntry(0, 0)
    assert [i.reason for i in got[1:] if isinstance(i, Problem)] == [
        "line 4 is not 'epoch startOffset': 'bad line'",
        "the count line says 3 entries, 1 follow",
    ]
    p.write_text("1\n0\n")
    assert [i.reason for i in items(p) if isinstance(i, Problem)] == ["unknown checkpoint version '1'"]


def test_offset_checkpoints(tmp_path: Path) -> None:
    """Kafka's OffsetCheckpointFile: version 0, a count, then ``topic partition offset`` lines."""
    for name in (
        "recovery-point-offset-checkpoint",
        "replication-offset-checkpoint",
        "log-start-offset-checkpoint",
        "cleaner-offset-checkpoint",
    ):
        p = tmp_path / name
        p.write_text("0\n2\norders 0 120\n__consumer_offsets 49 9223372036854775807\n")
        assert items(p) == [
            OffsetCheckpointEntry("orders", 0, 120),
            OffsetCheckpointEntry("__consumer_offsets", 49, 2**63 - 1),
        ]
    p.write_text("0\n3\norders 0 120\norders x 5\nbad/topic 1 1\n")
    got = items(p)
    assert got[0] == OffsetCheckpointEntry("orders", 0, 120)
    problems = [i for i in got if isinstance(i, Problem)]
    assert [(i.position, i.reason) for i in problems] == [
        (17, "line 4 is not 'topic partition offset': 'orders x 5'"),
        (28, "line 5 is not 'topic partition offset': 'bad/topic 1 1'"),
        (0, "the count line says 3 entries, 1 follow"),
    ]
    p.write_text("1\n0\n")
    assert [i.reason for i in items(p) if isinstance(i, Problem)] == ["unknown checkpoint version '1'"]


def test_meta_properties_quorum_state_and_lock(tmp_path: Path) -> None:
    meta = tmp_path / "meta.properties"
    meta.write_text("#\n#Thu Dec 03 18:00:00 UTC 2026\nnode.id=1\nversion=1\ncluster.id=Qm9vdA\n")
    assert items(meta) == [
        Property("node.id", "1"),
        Property("version", "1"),
        Property("cluster.id", "Qm9vdA"),
    ]
    meta.write_text("version=0\nbroker.id\n")
    assert [(i.position, i.reason) for i in items(meta) if isinstance(i, Problem)] == [
        (10, "line 2 is not 'key=value': 'broker.id'")
    ]
    meta.write_text("broker.id=1\n")
    assert [i.reason for i in items(meta) if isinstance(i, Problem)] == ["no 'version=N' line"]
    state = tmp_path / "quorum-state"
    state.write_text(
        '{"clusterId":"","leaderId":1,"leaderEpoch":3,"currentVoters":[{"voterId":1}],"data_version":0}'
    )
    assert items(state) == [
        Property("clusterId", ""),
        Property("leaderId", "1"),
        Property("leaderEpoch", "3"),
        Property("currentVoters", '[{"voterId":1}]'),
        Property("data_version", "0"),
    ]
    state.write_text('{"leaderId":1,\n "leaderEpoch":}')
    (problem,) = items(state)
    assert isinstance(problem, Problem) and (problem.position, problem.reason) == (
        30,
        "line 2 is not JSON: Expecting value",
    )
    lock = tmp_path / ".lock"
    lock.write_bytes(b"")
    assert items(lock) == []


def test_partition_metadata(tmp_path: Path) -> None:
    p = tmp_path / "partition.metadata"
    p.write_text("version: 0\ntopic_id: 3aJOBeUFT2i-2s4EZqlyqQ\n")
    assert items(p) == [PartitionMetadata(0, "3aJOBeUFT2i-2s4EZqlyqQ")]
    p.write_text("version: 0\n")
    assert [i.reason for i in items(p) if isinstance(i, Problem)] == [
        "needs 'version: N' and 'topic_id: ID' lines"
    ]


def test_text_numbers_are_ascii_decimals_or_problems(tmp_path: Path) -> None:
    """``str.isdigit`` passes "²" and a doubled minus passes ``lstrip("-")``; int() refuses both."""
    epochs = tmp_path / "leader-epoch-checkpoint"
    epochs.write_text("0\n2\n--1 5\n1 \u00b2\n")
    assert [i.reason for i in items(epochs) if isinstance(i, Problem)] == [
        "line 3 is not 'epoch startOffset': '--1 5'",
        "line 4 is not 'epoch startOffset': '1 \u00b2'",
        "the count line says 2 entries, 0 follow",
    ]
    epochs.write_text("0\n\u00b2\n")
    assert [i.reason for i in items(epochs) if isinstance(i, Problem)] == [
        "entry count '\u00b2' is not a number"
    ]
    epochs.write_text("0\n1\n-3 -1\n")
    assert items(epochs) == [LeaderEpochEntry(-3, -1)]
    meta = tmp_path / "partition.metadata"
    meta.write_text("version: \u00b2\ntopic_id: x\n")
    assert [i.reason for i in items(meta) if isinstance(i, Problem)] == [
        "needs 'version: N' and 'topic_id: ID' lines"
    ]


def test_oversized_side_files_are_refused_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import kafka_dump.log.sidefiles as sidefiles

    monkeypatch.setattr(sidefiles, "_SNAPSHOT_LIMIT", 100)
    monkeypatch.setattr(sidefiles, "_TEXT_LIMIT", 100)
    snap = tmp_path / "00000000000000000001.snapshot"
    snap.write_bytes(snapshot_bytes([(1, 0, 0, 0, 0, 0, 0, -1)] * 3))
    (problem,) = items(snap)
    assert isinstance(problem, Problem) and problem.reason == "larger than 100 bytes: not read"
    epochs = tmp_path / "leader-epoch-checkpoint"
    epochs.write_text("0\n30\n" + "1 1\n" * 30)
    (problem,) = items(epochs)
    assert isinstance(problem, Problem) and "not a checkpoint file" in problem.reason


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(["00000000000000000007.index", "00000000000000000007.timeindex", "00000000000000000007.txnindex",
                     "00000000000000000007.snapshot", "leader-epoch-checkpoint", "partition.metadata",
                     "recovery-point-offset-checkpoint", "meta.properties", "quorum-state", ".lock"]),
    st.binary(max_size=200),
)  # fmt: skip
def test_arbitrary_bytes_give_entries_and_problems_only(name: str, data: bytes) -> None:
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / name
        p.write_bytes(data)
        got = items(p)
    for item in got:
        if isinstance(item, Problem):
            assert 0 <= item.position <= len(data) and item.position + item.length <= len(data)


def test_offset_index_checked_against_its_log(tmp_path: Path) -> None:
    # Three one-record v2 batches at offsets 100, 101, 102 (kafka-python's builder), and an index beside them.
    batches = [v2_batch([(b"k", b"v" * 10, [])], base_offset=100 + i) for i in range(3)]
    log = tmp_path / "00000000000000000100.log"
    log.write_bytes(b"".join(batches))
    second, third = len(batches[0]), len(batches[0]) + len(batches[1])
    index = tmp_path / "00000000000000000100.index"
    index.write_bytes(struct.pack(">iiiiii", 1, second, 1, third, 2, third + len(batches[2])))
    got = items(index)
    assert got[0] == OffsetIndexEntry(101, second)
    # 101 at the third batch's position: that batch ends at 102. Then a position past the last batch.
    assert [i.reason for i in got if isinstance(i, Problem)] == [
        f"the entry for offset 101 points at position {third}, where the batch's last offset is 102",
        f"the entry for offset 102 points at position {third + len(batches[2])}, past the last batch of the log",
    ]
    assert [i.position for i in got if isinstance(i, Problem)] == [8, 16]
    log.unlink()  # without its log, an index is only listed
    assert all(not isinstance(i, Problem) for i in items(index))
