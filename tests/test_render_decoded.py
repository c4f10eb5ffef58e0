"""Renderings of decoded internal records against real ``kafka-dump-log.sh`` output.

The record bytes are rebuilt from what the real tool printed (../shared/fixtures-real/dump-log-pairs/
EXAMPLES.md, examples 2 and 4): every field of those records is printed, and the printed keySize and
valueSize match the rebuilt bytes, so the strings below are the tool's own.
"""

from __future__ import annotations

import struct

from kafka_dump.internal_topics import control, metadata, offsets, transactions
from kafka_dump.model import ControlRecord, ControlType, new_record
from kafka_dump.render.decoded import (
    decoded_object,
    kafka_control,
    kafka_key_payload,
    part_text,
)


def s16(text: str) -> bytes:
    return struct.pack(">h", len(text)) + text.encode()


def test_offsets_decoder_lines_of_kafka_39() -> None:
    # Example 2 (Kafka 3.9, Strimzi 0.45): "| offset: 1 ... keySize: 26 valueSize: 24 ... key: {...} payload: {...}"
    key = struct.pack(">h", 1) + s16("my-group") + s16("my-topic") + struct.pack(">i", 0)
    value = struct.pack(">hqi", 3, 1, 0) + s16("") + struct.pack(">q", 1742735956641)
    assert (len(key), len(value)) == (26, 24)
    d = offsets.decode(new_record(1, 0, key, value, (), 0, 0))
    assert kafka_key_payload(d, 1) == (
        '{"type":"1","data":{"group":"my-group","topic":"my-topic","partition":0}}',
        '{"version":"3","data":{"offset":1,"leaderEpoch":0,"metadata":"","commitTimestamp":1742735956641}}',
    )
    tomb = offsets.decode(new_record(1, 0, key, None, (), 0, 0))
    assert kafka_key_payload(tomb, 1)[1] == "<DELETE>"
    unknown = offsets.decode(new_record(7, 0, struct.pack(">h", 99), b"", (), 0, 0))
    assert kafka_key_payload(unknown, 7) == ("Unknown record type 99 at offset 7, skipping.", None)


def test_transaction_log_decoder_line() -> None:
    # Example 4 (2021, Kafka 3.0-era): keySize 15, valueSize 37, an Empty transaction with no partitions.
    key = struct.pack(">h", 0) + s16("my-txnal-id")
    value = struct.pack(">hqhibi", 0, 0, 0, 60000, 0, 0) + struct.pack(">qq", 1632840910282, -1)
    assert (len(key), len(value)) == (15, 37)
    d = transactions.decode(new_record(0, 0, key, value, (), -1, 0))
    assert (
        kafka_key_payload(d, 0, "3.9")
        == kafka_key_payload(d, 0, "4.0")
        == (
            "transaction_metadata::transactionalId=my-txnal-id",
            "producerId:0,producerEpoch:0,state=Empty,partitions=[],txnLastUpdateTimestamp=1632840910282,"
            "txnTimeoutMs=60000",
        )
    )
    # Kafka 4.1 on: JSON as the other coordinators; 4.4 names the state.
    payload = (
        '{"version":"0","data":{"producerId":0,"producerEpoch":0,"transactionTimeoutMs":60000,'
        '"transactionStatus":0,"transactionPartitions":[],"transactionLastUpdateTimestampMs":1632840910282,'
        '"transactionStartTimestampMs":-1}}'
    )
    assert kafka_key_payload(d, 0) == ('{"type":"0","data":{"transactionalId":"my-txnal-id"}}', payload)
    assert kafka_key_payload(d, 0, "4.4")[1] == payload.replace(':0,"transactionP', ':"Empty","transactionP')


def test_cluster_metadata_decoder_payload() -> None:
    # TopicRecord v0: frame 1, apiKey 2, version 0; compact string name, uuid, no tagged fields.
    value = b"\x01\x02\x00" + b"\x04foo" + bytes(range(16)) + b"\x00"
    d = metadata.decode(new_record(7, 0, None, value, (), -1, 0))
    assert kafka_key_payload(d, 7) == (
        None,
        '{"type":"TOPIC_RECORD","version":0,"data":{"name":"foo","topicId":"AAECAwQFBgcICQoLDA0ODw"}}',
    )
    bad = metadata.decode(new_record(8, 0, None, b"\x01\x63\x00", (), -1, 0))
    assert kafka_key_payload(bad, 8) == (None, "Error at 8, skipping. unknown apiKey 99")
    assert part_text(d.value) == "TOPIC_RECORD v0 name=foo topicId=AAECAwQFBgcICQoLDA0ODw"
    assert decoded_object(d) == {
        "decoder": "metadata", "key": None, "tombstone": False, "error": None,
        "value": {"schema": "TopicRecord", "version": 0, "frameVersion": 1, "apiKey": 2, "type": "TOPIC_RECORD",
                  "data": {"name": "foo", "topicId": "AAECAwQFBgcICQoLDA0ODw"}},
    }  # fmt: skip


def test_control_records_as_kafka_prints_them() -> None:
    # SnapshotHeaderRecord: int16 version, int64 lastContainedLogTimestamp, empty tagged fields.
    value = struct.pack(">hq", 0, 1767084411992) + b"\x00"
    r = new_record(0, 0, b"\x00\x00\x00\x03", value, (), -1, 0, control=ControlRecord(3, 0, None))
    d = control.decode(r)
    assert d is not None
    assert kafka_control(ControlType.SNAPSHOT_HEADER, d) == (
        ' SnapshotHeader {"version":0,"lastContainedLogTimestamp":1767084411992}'
    )
    lc = struct.pack(">hi", 0, 1000) + b"\x02" + struct.pack(">i", 1000) + b"\x00" + b"\x01" + b"\x00"
    r = new_record(0, 0, b"\x00\x00\x00\x02", lc, (), -1, 0, control=ControlRecord(2, 0, None))
    d = control.decode(r)
    assert d is not None
    assert kafka_control(ControlType.LEADER_CHANGE, d) == (
        ' LeaderChange: {"version":0,"leaderId":1000,"voters":[{"voterId":1000}],"grantingVoters":[]}'
    )


def test_bytes_inside_decoded_fields_are_base64() -> None:
    key = struct.pack(">h", 2) + s16("g")
    member = s16("m") + s16("c") + s16("h") + struct.pack(">i", 3000) + struct.pack(">i", 2) + b"\xff\x00"
    member += struct.pack(">i", 0)
    value = struct.pack(">h", 0) + s16("custom") + struct.pack(">i", 1) + s16("p") + s16("m")
    value += struct.pack(">i", 1) + member
    d = offsets.decode(new_record(0, 0, key, value, (), -1, 0))
    assert d.ok
    obj = decoded_object(d)
    assert obj["value"]["data"]["members"][0]["subscription"] == "/wA="
    assert obj["value"]["data"]["members"][0]["assignment"] == ""
