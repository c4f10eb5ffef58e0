"""Kafka 4.x records in the three formats: tagged fields by name in schema order, unknown tags
marked, and ``--format kafka`` as kafka-dump-log 4.1+ prints the coordinator families (with the
3.9/4.0 lines behind ``--kafka-version``)."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from kafka_dump.cli import main
from kafka_dump.internal_topics import metadata, offsets, remote_log, share_state, transactions
from kafka_dump.model import new_record
from kafka_dump.render.decoded import (
    KAFKA_VERSIONS,
    decoded_object,
    kafka_key_payload,
    part_text,
    remote_log_text,
)
from kafka_dump.wire.kmessage import schema
from tests.batches import v2_batch
from tests.conftest import SHARED_REAL as REAL

needs_real = pytest.mark.skipif(not REAL.is_dir(), reason="../shared/fixtures-real is absent")

UUID = "AAECAwQFBgcICQoLDA0ODw"
ENV = {"COLUMNS": "1000", "NO_COLOR": None, "FORCE_COLOR": None, "TERM": None}


def s16(text: str) -> bytes:
    return struct.pack(">h", len(text)) + text.encode()


def rec(key: bytes | None, value: bytes | None, offset: int = 0):  # type: ignore[no-untyped-def]
    return new_record(offset, 0, key, value, (), -1, 0)


def commit_key(rtype: int = 1) -> bytes:
    return struct.pack(">h", rtype) + s16("g") + s16("t") + struct.pack(">i", 0)


def test_offset_commit_topic_id_of_kafka_41_in_every_format() -> None:
    fields = {"offset": 5, "leaderEpoch": 2, "metadata": "", "commitTimestamp": 9, "topicId": UUID}
    value = b"\x00\x04" + schema("OffsetCommitValue").write(fields, 4)
    d = offsets.decode(rec(commit_key(), value))
    assert d.ok and d.value is not None and d.value.data == fields
    assert decoded_object(d)["value"]["data"]["topicId"] == UUID
    assert part_text(d.value).endswith(f"commitTimestamp=9 topicId={UUID}")
    assert kafka_key_payload(d, 0)[1] == (
        f'{{"version":"4","data":{{"offset":5,"leaderEpoch":2,"metadata":"","commitTimestamp":9,"topicId":"{UUID}"}}}}'
    )


def test_tagged_fields_at_their_default_are_left_out_of_kafka_text_only() -> None:
    key = struct.pack(">h", 3) + s16("g")
    for hash_, shown in ((77, ',"metadataHash":77'), (0, "")):
        d = offsets.decode(rec(key, b"\x00\x00" + schema("ConsumerGroupMetadataValue").write(
            {"epoch": 4, "metadataHash": hash_}, 0)))  # fmt: skip
        assert d.value is not None and d.value.data == {"epoch": 4, "metadataHash": hash_}
        assert decoded_object(d)["value"]["data"]["metadataHash"] == hash_
        assert kafka_key_payload(d, 0)[1] == '{"version":"0","data":{"epoch":4' + shown + "}}"


def test_transaction_tags_in_schema_order_whatever_the_wire_order() -> None:
    body = struct.pack(">qhib", 1000, 3, 60000, 4) + b"\x01" + struct.pack(">qq", 11, 10)
    # Tags 3 (nextProducerEpoch), 2 (clientTransactionVersion), 0 (previousProducerId): not ascending.
    tags = b"\x03" + b"\x03\x02\x00\x04" + b"\x02\x02\x00\x02" + b"\x00\x08" + struct.pack(">q", 999)
    d = transactions.decode(rec(b"\x00\x00" + s16("t"), b"\x00\x01" + body + tags))
    assert d.ok and d.value is not None and d.value.data is not None
    assert list(d.value.data) == [
        "producerId", "previousProducerId", "producerEpoch", "nextProducerEpoch", "transactionTimeoutMs",
        "transactionStatus", "transactionPartitions", "transactionLastUpdateTimestampMs",
        "transactionStartTimestampMs", "clientTransactionVersion",
    ]  # fmt: skip
    assert d.value.data["nextProducerEpoch"] == 4 and d.value.data["previousProducerId"] == 999
    assert '"producerEpoch":3,"nextProducerEpoch":4,' in (kafka_key_payload(d, 0)[1] or "")


def test_partition_record_leader_recovery_state_in_schema_order() -> None:
    fields = {"partitionId": 0, "topicId": UUID, "replicas": [1], "isr": [1], "removingReplicas": [],
              "addingReplicas": [], "leader": 1, "leaderRecoveryState": 1, "leaderEpoch": 0,
              "partitionEpoch": 0, "directories": [UUID]}  # fmt: skip
    d = metadata.decode(rec(None, b"\x01\x03\x01" + schema("PartitionRecord").write(fields, 1)))
    assert d.ok and d.value is not None and d.value.data is not None
    assert list(d.value.data) == list(fields)
    payload = kafka_key_payload(d, 0)[1] or ""
    assert '"leader":1,"leaderRecoveryState":1,"leaderEpoch":0' in payload


def test_unknown_tags_stay_visible_in_every_format() -> None:
    key = struct.pack(">h", 3) + s16("g")
    d = offsets.decode(rec(key, b"\x00\x00" + struct.pack(">i", 4) + b"\x01\x09\x02\xbe\xef"))
    assert d.ok and d.value is not None
    assert decoded_object(d)["value"]["data"] == {"epoch": 4, "_unknownTaggedFields": {"9": "beef"}}
    assert part_text(d.value) == 'ConsumerGroupMetadataValue v0 epoch=4 _unknownTaggedFields={"9":"beef"}'
    assert (
        kafka_key_payload(d, 0)[1] == '{"version":"0","data":{"epoch":4,"_unknownTaggedFields":{"9":"beef"}}}'
    )


def test_kafka_41_lines_for_errors_and_unknown_types() -> None:
    unknown = offsets.decode(rec(struct.pack(">h", 9) + s16("g"), None, 5))
    assert kafka_key_payload(unknown, 5) == ("Unknown record type 9 at offset 5, skipping.", None)
    assert part_text(unknown.value, unknown.tombstone) == "<DELETE>"
    version = offsets.decode(rec(struct.pack(">h", 3) + s16("g"), b"\x00\x07"))
    assert kafka_key_payload(version, 5) == (
        "Error at offset 5, skipping. Found an unknown record version 7 for 3 type",
        None,
    )
    short = offsets.decode(rec(struct.pack(">h", 3) + s16("g"), struct.pack(">hi", 0, 1)))
    assert kafka_key_payload(short, 5) == (f"Error at offset 5, skipping. {short.error}", None)
    assert short.error and "int32" not in short.error and "epoch" not in (short.value.data or {})  # type: ignore[union-attr]


def test_share_state_lines_and_the_40_layout() -> None:
    key = struct.pack(">h", 1) + s16("g") + bytes(16) + struct.pack(">i", 2)
    new = share_state.decode(rec(key, b"\x00\x00" + struct.pack(">iiq", 3, 4, 5) + b"\x01\x00"))
    k = '{"type":"1","data":{"groupId":"g","topicId":"AAAAAAAAAAAAAAAAAAAAAA","partition":2}}'
    p41 = '{"version":"0","data":{"snapshotEpoch":3,"leaderEpoch":4,"startOffset":5,"stateBatches":[]}}'
    assert kafka_key_payload(new, 0) == (k, p41)
    assert kafka_key_payload(new, 0, "4.0") == (k, p41.replace('"version"', '"type"'))  # 4.0's quirk
    old = share_state.decode(rec(key, b"\x00\x00" + struct.pack(">Hiq", 3, 4, 5) + b"\x01\x00"))
    assert old.value is not None and old.value.extra == {"layout": "4.0"}
    line = kafka_key_payload(old, 8)
    assert line[1] is None and (line[0] or "").startswith(
        "Error at offset 8, skipping. the value is ShareUpdateValue"
    )
    assert kafka_key_payload(old, 8, "4.0")[1] == (
        '{"type":"0","data":{"snapshotEpoch":3,"leaderEpoch":4,"startOffset":5,"stateBatches":[]}}'
    )


def _rlmm(api_key: int, fields: dict[str, object]) -> str:
    name = {0: "RemoteLogSegmentMetadataRecord", 1: "RemoteLogSegmentMetadataUpdateRecord",
            2: "RemotePartitionDeleteMetadataRecord", 3: "RemoteLogSegmentMetadataSnapshotRecord"}[api_key]  # fmt: skip
    d = remote_log.decode(rec(None, bytes([1, api_key, 0]) + schema(name).write(fields, 0), 4))
    assert d.ok, d.error
    return remote_log_text(d, 4)


def test_remote_log_metadata_as_kafka_prints_it() -> None:
    tip = {"name": "orders", "id": UUID, "partition": 3}
    seg = {"topicIdPartition": tip, "id": "AAAAAAAAAAAAAAAAAAAAAQ"}
    common = {"startOffset": 0, "endOffset": 99, "brokerId": 1, "maxTimestampMs": 5, "eventTimestampMs": 6,
              "segmentLeaderEpochs": [{"leaderEpoch": 2, "offset": 50}, {"leaderEpoch": 1, "offset": 0}],
              "segmentSizeInBytes": 1000, "customMetadata": None, "remoteLogSegmentState": 1}  # fmt: skip
    assert _rlmm(0, {"remoteLogSegmentId": seg, **common, "txnIndexEmpty": True}) == (
        f"RemoteLogSegmentMetadata{{remoteLogSegmentId=RemoteLogSegmentId{{topicIdPartition={UUID}:orders-3, "
        "id=AAAAAAAAAAAAAAAAAAAAAQ}, startOffset=0, endOffset=99, brokerId=1, maxTimestampMs=5, "
        "eventTimestampMs=6, segmentLeaderEpochs={1=0, 2=50}, segmentSizeInBytes=1000, "
        "customMetadata=Optional.empty, state=COPY_SEGMENT_FINISHED, txnIdxEmpty=true}"
    )
    assert _rlmm(
        1,
        {
            "remoteLogSegmentId": seg,
            "brokerId": 1,
            "eventTimestampMs": 6,
            "customMetadata": b"ab",
            "remoteLogSegmentState": 3,
        },
    ) == (
        f"RemoteLogSegmentMetadataUpdate{{remoteLogSegmentId=RemoteLogSegmentId{{topicIdPartition={UUID}:orders-3,"
        " id=AAAAAAAAAAAAAAAAAAAAAQ}, customMetadata=Optional[CustomMetadata{2 bytes}], "
        "state=DELETE_SEGMENT_FINISHED, eventTimestampMs=6, brokerId=1}"
    )
    assert _rlmm(
        2, {"topicIdPartition": tip, "brokerId": 1, "eventTimestampMs": 6, "remotePartitionDeleteState": 0}
    ) == (
        f"RemotePartitionDeleteMetadata{{topicPartition={UUID}:orders-3, state=DELETE_PARTITION_MARKED, "
        "eventTimestampMs=6, brokerId=1}"
    )
    snap = {k: v for k, v in common.items()}
    assert _rlmm(3, {"segmentId": UUID, **snap}) == (
        f"RemoteLogSegmentMetadataSnapshot{{segmentId={UUID}, startOffset=0, endOffset=99, maxTimestampMs=5, "
        "segmentLeaderEpochs={1=0, 2=50}, segmentSizeInBytes=1000, customMetadata=Optional.empty, "
        "state=COPY_SEGMENT_FINISHED, txnIdxEmpty=false}"
    )
    bad = {"remoteLogSegmentId": seg, **common, "remoteLogSegmentState": 9}
    assert _rlmm(0, bad) == "Error at offset 4, skipping. state can not be null"
    assert _rlmm(0, {**bad, "remoteLogSegmentState": 0, "endOffset": -5}) == (
        "Error at offset 4, skipping. Unexpected end offset = -5. EndOffset for a remote segment cannot be less "
        "than startOffset = 0"
    )


def _offsets_dir(tmp_path: Path, records: list[tuple[bytes | None, bytes | None]], topic: str) -> Path:
    d = tmp_path / f"{topic}-0"
    d.mkdir()
    (d / "00000000000000000000.log").write_bytes(v2_batch([(k, v, []) for k, v in records]))
    return d


def _run(*args: str) -> list[str]:
    result = CliRunner().invoke(main, ["dump", *args], env=ENV)
    assert result.exit_code == 0, result.output
    return result.stdout.splitlines()


def test_cli_kafka_versions_and_the_table(tmp_path: Path) -> None:
    txn = (b"\x00\x00" + s16("t"), b"\x00\x00" + struct.pack(">qhib", 7, 1, 100, 1)
           + struct.pack(">i", 1) + s16("x") + struct.pack(">ii", 1, 0) + struct.pack(">qq", 5, 4))  # fmt: skip
    d = _offsets_dir(tmp_path, [txn], "__transaction_state")
    new = [ln for ln in _run("--format", "kafka", str(d)) if ln.startswith("|")]
    assert new[0].endswith(
        'key: {"type":"0","data":{"transactionalId":"t"}} payload: {"version":"0","data":{"producerId":7,'
        '"producerEpoch":1,"transactionTimeoutMs":100,"transactionStatus":1,"transactionPartitions":[{"topic":'
        '"x","partitionIds":[0]}],"transactionLastUpdateTimestampMs":5,"transactionStartTimestampMs":4}}'
    )
    old = [ln for ln in _run("--format", "kafka", "--kafka-version", "3.9", str(d)) if ln.startswith("|")]
    assert old[0].endswith(
        "key: transaction_metadata::transactionalId=t payload: producerId:7,producerEpoch:1,state=Ongoing,"
        "partitions=[x-0],txnLastUpdateTimestamp=5,txnTimeoutMs=100"
    )
    o = _offsets_dir(tmp_path, [(struct.pack(">h", 18) + s16("g"), None)], "__consumer_offsets")
    table = "\n".join(_run(str(o)))
    assert "<DELETE>" in table and "unknown record type 18" in table


def test_cli_auto_decodes_share_state_and_remote_log_metadata(tmp_path: Path) -> None:
    key = struct.pack(">h", 1) + s16("g") + bytes(16) + struct.pack(">i", 2)
    share = _offsets_dir(tmp_path, [(key, b"\x00\x00" + struct.pack(">iiq", 3, 4, 5) + b"\x01\x00")],
                         "__share_group_state")  # fmt: skip
    rec_ = json.loads(_run("--format", "json", str(share))[0])["records"][0]["decoded"]
    assert rec_["decoder"] == "share-group-state" and rec_["value"]["schema"] == "ShareUpdateValue"
    fields = {"topicIdPartition": {"name": "t", "id": UUID, "partition": 0}, "brokerId": 1,
              "eventTimestampMs": 2, "remotePartitionDeleteState": 2}  # fmt: skip
    value = b"\x01\x02\x00" + schema("RemotePartitionDeleteMetadataRecord").write(fields, 0)
    rlmm = _offsets_dir(tmp_path, [(None, value)], "__remote_log_metadata")
    line = next(ln for ln in _run("--format", "kafka", str(rlmm)) if ln.startswith("|"))
    assert line.endswith(
        f" payload: RemotePartitionDeleteMetadata{{topicPartition={UUID}:t-0, state=DELETE_PARTITION_FINISHED,"
        " eventTimestampMs=2, brokerId=1}"
    )
    # --decode metadata in that directory reads the same frame by the remote-log-metadata table.
    forced = json.loads(_run("--format", "json", "--decode", "metadata", str(rlmm))[0])["records"][0]
    assert forced["decoded"]["decoder"] == "remote-log-metadata"
    assert forced["decoded"]["value"]["schema"] == "RemotePartitionDeleteMetadataRecord"
    assert forced["decoded"]["value"]["data"]["brokerId"] == 1


REAL_DIRS = [
    "ronem123-kafka41-kraft/__consumer_offsets-31",
    "ronem123-kafka41-kraft/__consumer_offsets-44",
    "ronem123-kafka41-kraft/__cluster_metadata-0",
    "bheem6005-kafka310-zk/__consumer_offsets-0",
    "bheem6005-kafka310-zk/__consumer_offsets-2",
    "bheem6005-kafka310-zk/__consumer_offsets-31",
    "bheem6005-kafka310-zk/__consumer_offsets-34",
    "ldi-poc-kafka370-kraft/__consumer_offsets-6",
    "ldi-poc-kafka370-kraft/__cluster_metadata-0",
    "urbanpulse-kafka39-kraft/__cluster_metadata-0",
]


@needs_real
@pytest.mark.parametrize("name", REAL_DIRS)
def test_real_internal_topics_decode_whole_in_every_format(name: str) -> None:
    lines = _run("--format", "kafka", str(REAL / name))
    records = [ln for ln in lines if ln.startswith("|")]
    assert records and not [ln for ln in records if "skipping." in ln or "_unknownTaggedFields" in ln]
    assert all(" payload: " in ln or "SnapshotHeader" in ln or "KRaft" in ln or "LeaderChange" in ln
               or "SnapshotFooter" in ln for ln in records)  # fmt: skip
    for line in _run("--format", "json", str(REAL / name)):
        for r in json.loads(line).get("records", []):
            if "decoded" in r:
                assert r["decoded"]["error"] is None, r


@needs_real
def test_real_kafka_41_metadata_tags_in_schema_order() -> None:
    lines = _run("--format", "kafka", str(REAL / "ronem123-kafka41-kraft/__cluster_metadata-0"))
    change = next(ln for ln in lines if "PARTITION_CHANGE_RECORD" in ln)
    assert change.endswith(
        'payload: {"type":"PARTITION_CHANGE_RECORD","version":2,"data":{"partitionId":0,'
        '"topicId":"dqK7-AskTSux4so_l6jJXg","isr":[],"leader":-1,"eligibleLeaderReplicas":[1],"lastKnownElr":[1]}}'
    )


@given(st.binary(max_size=60), st.one_of(st.none(), st.binary(max_size=60)))
def test_every_decoder_and_line_never_raises(key: bytes, value: bytes | None) -> None:
    for fn in (offsets.decode, transactions.decode, share_state.decode, remote_log.decode, metadata.decode):
        for k in (key, key[:2] and struct.pack(">h", key[0] % 24) + key[2:]):
            d = fn(rec(k, value))
            assert d.ok or d.error
            for version in KAFKA_VERSIONS:
                kafka_key_payload(d, 0, version)
            part_text(d.key)
            part_text(d.value, d.tombstone)
            decoded_object(d)


def test_older_releases_knew_fewer_offsets_types() -> None:
    key = struct.pack(">h", 16) + s16("g") + s16("re.*")
    d = offsets.decode(rec(key, None, 3))
    assert d.ok and d.tombstone
    assert kafka_key_payload(d, 3, "4.0")[1] == "<DELETE>"
    assert kafka_key_payload(d, 3, "3.9") == ("Unknown record type 16 at offset 3, skipping.", None)
    streams = offsets.decode(rec(struct.pack(">h", 17) + s16("g"), None, 3))
    assert kafka_key_payload(streams, 3, "4.0") == ("Unknown record type 17 at offset 3, skipping.", None)
    assert kafka_key_payload(streams, 3) == ('{"type":"17","data":{"groupId":"g"}}', "<DELETE>")
