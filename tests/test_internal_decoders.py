"""Decoders of Kafka's own records (kafka_dump/internal_topics/) against real broker files and schema-built bytes.

The real files are described in ../shared/fixtures-real/README.md; the values pinned here were read
out of them and checked by hand against what that README says of each file (writer, metadata.version,
record types per offset) and against each other (topic ids of TopicRecord and PartitionRecord).
"""

from __future__ import annotations

import struct
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_dump.internal_topics import (
    Decoded,
    control,
    decoder_for_path,
    get_decoder,
    metadata,
    offsets,
    transactions,
)
from kafka_dump.log.segment import read_segment
from kafka_dump.model import Batch, ControlRecord, Record, new_record
from tests.conftest import SHARED_REAL as REAL

needs_real = pytest.mark.skipif(not REAL.is_dir(), reason="../shared/fixtures-real is absent")


def decoded(path: Path, name: str | None = None) -> list[tuple[int, Decoded]]:
    fn = get_decoder(name or decoder_for_path(path) or "none")
    out = []
    for b in read_segment(path, with_records=True):
        assert isinstance(b, Batch) and b.records is not None
        for r in b.records:
            d = control.decode(r) if b.isControl else fn(r)
            if d is not None:
                out.append((r.offset, d))
    return out


def record(key: bytes | None, value: bytes | None, control_type: int | None = None) -> Record:
    c = None if control_type is None else ControlRecord(control_type, 0, None)
    return new_record(0, 0, key, value, (), -1, 0, control=c)


def test_decoder_chosen_by_kafka_names() -> None:
    assert decoder_for_path("/data/__consumer_offsets-12/00000000000000000000.log") == "offsets"
    assert decoder_for_path("/data/__consumer_offsets-12") == "offsets"
    assert decoder_for_path("x/__transaction_state-3/00000000000000000007.log") == "transactions"
    assert decoder_for_path("x/__cluster_metadata-0/00000000000000000000.log") == "metadata"
    assert decoder_for_path("bootstrap.checkpoint") == "metadata"
    assert decoder_for_path("x/my-topic-0/00000000000000000000.log") is None
    assert decoder_for_path("x/__consumer_offsets/00000000000000000000.log") is None


# ---- __consumer_offsets ---------------------------------------------------------------------------


@needs_real
def test_offsets_kafka41_compacted_with_tombstones() -> None:
    # Kafka 4.1, compacted: the first segment keeps offsets 6 and 8 only; the second holds two tombstones.
    d = dict(decoded(REAL / "ronem123-kafka41-kraft/__consumer_offsets-44/00000000000000000000.log"))
    assert sorted(d) == [6, 8]
    assert d[6].key is not None and d[6].value is not None
    assert (d[6].key.schema, d[6].key.version) == ("OffsetCommitKey", 1)
    assert d[6].key.data == {
        "group": "rupia-transaction-group",
        "topic": "topic_transactions",
        "partition": 0,
    }
    # OffsetCommitValue v4 is the flexible one (Kafka 4.x): committed offset 5.
    assert (d[6].value.schema, d[6].value.version) == ("OffsetCommitValue", 4)
    assert d[6].value.data == {
        "offset": 5,
        "leaderEpoch": -1,
        "metadata": "",
        "commitTimestamp": 1765883866522,
    }
    assert d[8].value is not None and d[8].value.data == {
        "protocolType": "consumer", "generation": 5, "protocol": None, "leader": None,
        "currentStateTimestamp": 1765944615541, "members": [],
    }  # fmt: skip
    tomb = decoded(REAL / "ronem123-kafka41-kraft/__consumer_offsets-44/00000000000000000009.log")
    assert [(o, x.key.schema if x.key else None, x.tombstone, x.value) for o, x in tomb] == [
        (9, "OffsetCommitKey", True, None),
        (10, "GroupMetadataKey", True, None),
    ]


@needs_real
def test_offsets_kafka37_commits_and_consumer_protocol() -> None:
    # Kafka 3.7: README says key versions {2: 6, 1: 7}; offsets 8-12 are the commits of TestTopicPatient.
    d = decoded(REAL / "ldi-poc-kafka370-kraft/__consumer_offsets-6/00000000000000000000.log")
    assert all(x.ok for _, x in d)
    assert Counter(x.key.version for _, x in d if x.key) == {2: 6, 1: 7}
    commits = [
        (x.key.data["topic"], x.value.data["offset"])
        for _, x in d
        if x.key and x.value and x.key.schema == "OffsetCommitKey" and x.value.data
    ]
    assert commits == [
        ("batch2.work.notification.SHR_PROD.persistence", 0),
        ("subscription.matching.SHR_PROD.persistence", 0),
        ("TestTopicPatient", 0),
        ("Retry.TestTopicPatient", 0),
        ("TestTopicPatient", 1),
        ("TestTopicPatient", 2),
        ("TestTopicPatient", 3),
    ]
    group = dict(d)[0].value
    assert group is not None and group.data is not None
    member = group.data["members"][0]
    assert member["clientId"] == "consumer-DEVSmileCDR-3"
    # The member's subscription bytes, decoded as ConsumerProtocolSubscription.
    assert member["subscription"]["topics"] == ["batch2.work.notification.SHR_PROD.persistence"]


@needs_real
def test_offsets_kafka31_group_assignment() -> None:
    # Kafka 3.1 (ZooKeeper): a console consumer's group, one member assigned cities-0.
    d = dict(decoded(REAL / "bheem6005-kafka310-zk/__consumer_offsets-0/00000000000000000000.log"))
    value = d[0].value
    assert value is not None and value.data is not None and value.version == 3
    assert value.data["protocol"] == "range" and value.data["generation"] == 1
    member = value.data["members"][0]
    assert member["subscription"]["topics"] == ["cities"]
    assert member["assignment"]["assignedPartitions"] == [{"topic": "cities", "partitions": [0]}]


def test_offsets_keeps_bytes_that_are_not_the_consumer_protocol() -> None:
    key = struct.pack(">hh", 2, 1) + b"g"
    member = (
        struct.pack(">h", 1) + b"m" + struct.pack(">h", 1) + b"c" + struct.pack(">h", 1) + b"h"
        + struct.pack(">ii", 1000, 3000) + struct.pack(">i", 3) + b"\x00\x63\x01" + struct.pack(">i", 0)
    )  # fmt: skip
    # GroupMetadataValue v1: protocolType, generation, protocol, leader, then one member (v1 adds rebalanceTimeout).
    value = (
        struct.pack(">h", 1) + struct.pack(">h", 8) + b"consumer" + struct.pack(">i", 4)
        + struct.pack(">h", -1) + struct.pack(">h", -1) + struct.pack(">i", 1) + member
    )  # fmt: skip
    d = offsets.decode(record(key, value))
    assert d.ok and d.value is not None and d.value.data is not None
    m = d.value.data["members"][0]
    assert (m["rebalanceTimeout"], m["sessionTimeout"]) == (1000, 3000)
    # Version 99 is no ConsumerProtocolSubscription version: the bytes stay; an empty assignment too.
    assert m["subscription"] == b"\x00\x63\x01" and m["assignment"] == b""


def test_offsets_unknown_type_and_damage_are_values() -> None:
    d = offsets.decode(record(struct.pack(">h", 77) + b"zz", b"\x00\x00"))
    assert d.error == "unknown record type 77" and d.key is not None and d.key.hex == "004d7a7a"
    d = offsets.decode(record(struct.pack(">hh", 1, 50) + b"g", None))
    assert d.error is not None and d.error.startswith("key: ") and d.key is not None and d.key.hex
    d = offsets.decode(record(None, None))
    assert d.error == "the key has no record type"


# ---- __transaction_state (no real file exists: built from TransactionLogKey/Value) ------------


def txn_key(tid: str) -> bytes:
    return struct.pack(">hh", 0, len(tid)) + tid.encode()


def test_transactions_value_v0() -> None:
    # v0: producerId, producerEpoch, timeout, status, partitions [(topic, [ids])], lastUpdate, start.
    value = (
        struct.pack(">hqhib", 0, 4001, 2, 60000, 1)
        + struct.pack(">i", 1) + struct.pack(">h", 3) + b"foo" + struct.pack(">iii", 2, 0, 4)
        + struct.pack(">qq", 1700000001000, 1700000000000)
    )  # fmt: skip
    d = transactions.decode(record(txn_key("my-txn"), value))
    assert d.ok and d.key is not None and d.value is not None
    assert d.key.data == {"transactionalId": "my-txn"}
    assert d.value.data == {
        "producerId": 4001, "producerEpoch": 2, "transactionTimeoutMs": 60000, "transactionStatus": 1,
        "transactionPartitions": [{"topic": "foo", "partitionIds": [0, 4]}],
        "transactionLastUpdateTimestampMs": 1700000001000, "transactionStartTimestampMs": 1700000000000,
    }  # fmt: skip
    assert transactions.state_name(1) == "Ongoing" and transactions.state_name(9) == "Unknown(9)"


def test_transactions_value_v1_flexible_with_tagged_fields() -> None:
    # v1 is flexible: compact array (count+1) of compact strings; tags 0/1 previous/next producer id, 2 client version.
    value = (
        struct.pack(">hqhib", 1, 7, 0, 900, 4)
        + b"\x02" + b"\x04bar" + b"\x02" + struct.pack(">i", 1) + b"\x00"
        + struct.pack(">qq", 5, 6)
        + b"\x02" + b"\x00\x08" + struct.pack(">q", 6) + b"\x02\x02" + struct.pack(">h", 2)
    )  # fmt: skip
    d = transactions.decode(record(txn_key("t"), value))
    assert d.ok and d.value is not None and d.value.data is not None
    assert d.value.data["transactionPartitions"] == [{"topic": "bar", "partitionIds": [1]}]
    assert d.value.data["previousProducerId"] == 6 and d.value.data["clientTransactionVersion"] == 2
    assert "nextProducerId" not in d.value.data  # absent tagged field: not invented
    assert transactions.state_name(d.value.data["transactionStatus"]) == "CompleteCommit"
    tomb = transactions.decode(record(txn_key("t"), None))
    assert tomb.tombstone and tomb.ok and tomb.value is None


# ---- KRaft metadata ----------------------------------------------------------------------------

METADATA_FILES = [
    "apache-kafka-trunk-testdata/kafka-2167572160391180112/__cluster_metadata-0/00000000000000000000.log",
    "apache-kafka-trunk-testdata/kafka-7498518511977031704/__cluster_metadata-0/00000000000000000000.log",
    "ldi-poc-kafka370-kraft/__cluster_metadata-0/00000000000000000000.log",
    "ldi-poc-kafka370-kraft/bootstrap.checkpoint",
    "urbanpulse-kafka39-kraft/__cluster_metadata-0/00000000000000007295-0000000001.checkpoint",
    "ronem123-kafka41-kraft/__cluster_metadata-0/00000000000001725413.log",
    "ronem123-kafka41-kraft/__cluster_metadata-0/00000000000001734780-0000000001.checkpoint",
    "ronem123-kafka41-kraft/bootstrap.checkpoint",
]


@needs_real
@pytest.mark.parametrize("name", METADATA_FILES)
def test_every_metadata_record_decodes(name: str) -> None:
    d = decoded(REAL / name, "metadata")
    assert d and all(x.ok and x.value is not None and x.value.data is not None for _, x in d)


@needs_real
def test_prerelease_partition_record_v1_is_shown_as_hex() -> None:
    # This log was written by a trunk build of 2023-11-22, between KAFKA-15581 (ELR as PartitionRecord v1)
    # and KAFKA-15922 (2023-11-30, which made v1 the Directories version that every release uses). Its six
    # PartitionRecord v1 carry ELR tags and no directories, so the released schema does not fit them: they
    # are shown as frame + hex with the reason, and every other record decodes.
    d = decoded(
        REAL
        / "apache-kafka-trunk-testdata/kafka-1168504093769635972/__cluster_metadata-0/00000000000000000000.log"
    )
    bad = [(o, x) for o, x in d if not x.ok]
    assert [o for o, _ in bad] == [24, 25, 26, 27, 28, 42]
    for _, x in bad:
        assert x.value is not None and x.value.extra == {
            "frameVersion": 1,
            "apiKey": 3,
            "type": "PARTITION_RECORD",
        }
        assert x.value.version == 1 and x.value.hex
        assert (x.error or "").endswith(": directories needs 16 bytes, 6 left")
    assert len(d) - len(bad) == 88


@needs_real
def test_metadata_kafka39_snapshot_topics_and_broker() -> None:
    d = decoded(
        REAL / "urbanpulse-kafka39-kraft/__cluster_metadata-0/00000000000000007295-0000000001.checkpoint"
    )
    data: list[tuple[str, dict[str, Any]]] = [
        (x.value.schema or "", x.value.data or {}) for _, x in d if x.value is not None
    ]
    topics = {f["topicId"]: f["name"] for s, f in data if s == "TopicRecord"}
    # Six topics; partition counts by topic from the PartitionRecords that name their topic ids.
    partitions = Counter(topics[f["topicId"]] for s, f in data if s == "PartitionRecord")
    assert partitions == {
        "__consumer_offsets": 50, "urbanpulse.bus_gps": 12, "urbanpulse.smart_meters": 8,
        "urbanpulse.traffic_signals": 6, "urbanpulse.air_quality": 3, "urbanpulse.dlq": 1,
    }  # fmt: skip
    first = next(f for s, f in data if s == "PartitionRecord")
    assert first == {
        "partitionId": 0, "topicId": "ZVS9F1GbRUaLjOqxNdCaUg", "replicas": [1], "isr": [1], "removingReplicas": [],
        "addingReplicas": [], "leader": 1, "leaderEpoch": 0, "partitionEpoch": 0,
        "directories": ["OY1jR23lhEln5djMDNyeIQ"],
    }  # fmt: skip
    broker = next(f for s, f in data if s == "RegisterBrokerRecord")
    assert (broker["brokerId"], broker["brokerEpoch"], broker["incarnationId"]) == (
        1,
        8,
        "IA_1lGZ6SdSDlnPmUHLVFQ",
    )
    assert broker["endPoints"] == [
        {"name": "PLAINTEXT", "host": "localhost", "port": 9092, "securityProtocol": 0}
    ]
    assert ("FeatureLevelRecord", {"name": "metadata.version", "featureLevel": 21}) in data  # 3.9-IV0
    assert ("ProducerIdsRecord", {"brokerId": -1, "brokerEpoch": -1, "nextProducerId": 1000}) in data
    assert data[0] == ("SnapshotHeaderRecord", {"version": 0, "lastContainedLogTimestamp": 1785583057830})
    assert data[-1] == ("SnapshotFooterRecord", {"version": 0})


@needs_real
def test_metadata_kafka41_snapshot_voters_and_features() -> None:
    d = decoded(
        REAL / "ronem123-kafka41-kraft/__cluster_metadata-0/00000000000001734780-0000000001.checkpoint"
    )
    by_offset = {o: x for o, x in d}
    assert by_offset[1].decoder == "control" and by_offset[1].value is not None
    assert by_offset[1].value.data == {"version": 0, "kRaftVersion": 1}
    voters = by_offset[2].value
    assert voters is not None and voters.schema == "VotersRecord"
    assert voters.data == {"version": 0, "voters": [{
        "voterId": 1, "voterDirectoryId": "yYuMrFRVQVSX0VVQPcMSrA",
        "endpoints": [{"name": "CONTROLLER", "host": "localhost", "port": 9093}],
        "kRaftVersionFeature": {"minSupportedVersion": 0, "maxSupportedVersion": 1},
    }]}  # fmt: skip
    features = {
        x.value.data["name"]: x.value.data["featureLevel"]
        for _, x in d
        if x.value is not None and x.value.schema == "FeatureLevelRecord" and x.value.data
    }
    # README: metadata.version 27 (4.1-IV1), transaction.version 2, group.version 1, ELR version 1.
    assert features == {"metadata.version": 27, "group.version": 1, "eligible.leader.replicas.version": 1,
                        "transaction.version": 2}  # fmt: skip
    part = by_offset[10].value
    assert part is not None and part.version == 2 and part.data is not None
    assert (part.data["leaderEpoch"], part.data["directories"]) == (10, ["yYuMrFRVQVSX0VVQPcMSrA"])


@needs_real
def test_metadata_leader_change_and_transactions() -> None:
    d = dict(
        decoded(
            REAL
            / "apache-kafka-trunk-testdata/kafka-2167572160391180112/__cluster_metadata-0/00000000000000000000.log"
        )
    )
    lc = d[0].value
    assert lc is not None and lc.schema == "LeaderChangeMessage"
    assert lc.data == {
        "version": 0,
        "leaderId": 1000,
        "voters": [{"voterId": 1000}],
        "grantingVoters": [{"voterId": 1000}],
    }
    assert d[1].value is not None and d[1].value.data == {"name": "Bootstrap records"}
    assert d[4].value is not None and d[4].value.schema == "EndTransactionRecord" and d[4].value.data == {}
    reg = d[8].value
    assert reg is not None and reg.data is not None and reg.version == 3
    assert (reg.data["brokerId"], reg.data["brokerEpoch"], reg.data["endPoints"][0]["port"]) == (0, 8, 37629)
    assert d[9].value is not None and d[9].value.data == {"brokerId": 0, "brokerEpoch": 8, "fenced": -1}


@needs_real
def test_metadata_record_types_match_the_fixture_readme() -> None:
    # README: ldi-poc's log holds types 0x2, 2x5, 3x54, 4x3, 5x54, 12x1, 15x1, 17x3, 20x4801, 21x1, 23x1, 24x1, 27x1.
    d = decoded(REAL / "ldi-poc-kafka370-kraft/__cluster_metadata-0/00000000000000000000.log", "metadata")
    kinds = Counter(x.value.extra["apiKey"] for _, x in d if x.decoder == "metadata" and x.value is not None)
    assert kinds == {
        0: 2,
        2: 5,
        3: 54,
        4: 3,
        5: 54,
        12: 1,
        15: 1,
        17: 3,
        20: 4801,
        21: 1,
        23: 1,
        24: 1,
        27: 1,
    }
    assert (
        metadata.type_name(17) == "BROKER_REGISTRATION_CHANGE_RECORD"
        and metadata.type_name(99) == "UNKNOWN(99)"
    )


def test_metadata_unknown_api_key_or_version_is_frame_and_hex() -> None:
    d = metadata.decode(record(None, b"\x01\x63\x00\xab"))
    assert not d.ok and d.error == "unknown apiKey 99" and d.value is not None
    assert (d.value.extra, d.value.hex) == (
        {"frameVersion": 1, "apiKey": 99, "type": "UNKNOWN(99)"},
        "016300ab",
    )
    d = metadata.decode(record(None, b"\x01\x02\x09\x00"))
    assert d.error == "unknown TopicRecord version 9" and d.value is not None and d.value.version == 9
    d = metadata.decode(record(None, b"\x02\x02\x00"))
    assert d.error == "unknown frame version 2"
    d = metadata.decode(record(None, b"\x01\x14\x00\x00\xff"))  # NoOpRecord with a byte left over
    assert d.error is not None and "1 bytes left after NoOpRecord" in d.error


def test_control_decoder_ignores_markers_and_reports_short_values() -> None:
    assert control.decode(record(b"\x00\x00\x00\x01", b"\x00\x00\x00\x00\x00\x00", control_type=1)) is None
    assert control.decode(record(b"k", b"v")) is None
    d = control.decode(record(b"\x00\x00\x00\x04", b"\x00", control_type=4))
    assert d is not None and not d.ok


@given(st.binary(max_size=80), st.one_of(st.none(), st.binary(max_size=80)))
def test_decoders_never_raise(key: bytes, value: bytes | None) -> None:
    for fn in (offsets.decode, transactions.decode, metadata.decode):
        d = fn(record(key, value))
        assert d.ok or d.error
    for t in range(2, 7):
        c = control.decode(record(b"\x00\x00\x00" + bytes([t]), value, control_type=t))
        assert c is not None and (c.ok or c.error)


def s16(text: str) -> bytes:
    return struct.pack(">h", len(text)) + text.encode()


@pytest.mark.parametrize(
    ("version", "body", "expected"),
    [
        # v0 (Kafka 0.8.2-0.9): offset, metadata, commitTimestamp.
        (0, struct.pack(">q", 42) + s16("m") + struct.pack(">q", 1000),
         {"offset": 42, "metadata": "m", "commitTimestamp": 1000}),
        # v1 (0.10.1-2.0): adds expireTimestamp after commitTimestamp.
        (1, struct.pack(">q", 42) + s16("") + struct.pack(">qq", 1000, 2000),
         {"offset": 42, "metadata": "", "commitTimestamp": 1000, "expireTimestamp": 2000}),
        # v3 (2.1+): leaderEpoch after offset, no expireTimestamp.
        (3, struct.pack(">qi", 42, 7) + s16("") + struct.pack(">q", 1000),
         {"offset": 42, "leaderEpoch": 7, "metadata": "", "commitTimestamp": 1000}),
    ],
)  # fmt: skip
def test_offset_commit_values_of_every_layout(version: int, body: bytes, expected: dict[str, Any]) -> None:
    # Kafka 0.8.2 wrote type-0 keys with v0 values; later releases type 1 (Kafka 4.1 on: LegacyOffsetCommit
    # is type 0, v0 only, and a type-0 key with a later value version is an unknown version).
    key = struct.pack(">h", min(version, 1)) + s16("g") + s16("t") + struct.pack(">i", 3)
    d = offsets.decode(record(key, struct.pack(">h", version) + body))
    if version:
        wrong = offsets.decode(record(b"\x00\x00" + key[2:], struct.pack(">h", version) + body))
        assert wrong.error == f"unknown record version {version} for type 0 (LegacyOffsetCommitValue)"
        assert wrong.value is not None and wrong.value.data is None and wrong.value.hex
    assert d.ok and d.key is not None and d.value is not None
    assert d.key.data == {"group": "g", "topic": "t", "partition": 3}
    assert d.value.data == expected


def test_group_metadata_value_v0_and_v2() -> None:
    key = struct.pack(">h", 2) + s16("g")
    member_v0 = (
        s16("m") + s16("c") + s16("h") + struct.pack(">i", 3000) + struct.pack(">i", 0) + struct.pack(">i", 0)
    )
    v0 = struct.pack(">h", 0) + s16("consumer") + struct.pack(">i", 1) + s16("range") + s16("m")
    d = offsets.decode(record(key, v0 + struct.pack(">i", 1) + member_v0))
    assert d.ok and d.value is not None and d.value.data is not None
    assert d.value.data["members"] == [
        {"memberId": "m", "clientId": "c", "clientHost": "h", "sessionTimeout": 3000, "subscription": b"", "assignment": b""}
    ]  # fmt: skip
    v2 = struct.pack(">h", 2) + s16("") + struct.pack(">i", 0) + struct.pack(">hh", -1, -1)
    d = offsets.decode(record(key, v2 + struct.pack(">q", 1700000000000) + struct.pack(">i", 0)))
    assert d.ok and d.value is not None
    assert d.value.data == {"protocolType": "", "generation": 0, "protocol": None, "leader": None,
                            "currentStateTimestamp": 1700000000000, "members": []}  # fmt: skip
