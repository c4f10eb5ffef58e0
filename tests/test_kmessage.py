"""The schema-driven reader of Kafka's message encoding (wire/kmessage.py), on hand-built bytes.

Each vector is written byte by byte from the encoding rules in the module's docstring (not by an
encoder of ours), padded on both sides so the returned position is checked too.
"""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_dump.wire.kmessage import UNKNOWN_TAGS, KMessageError, Schema, parse_versions, schema
from kafka_dump.wire.kschemas import MESSAGES, METADATA_TYPES

PAD = b"\xee\xee"


def read(s: Schema, body: bytes, version: int) -> dict[str, object]:
    data = PAD + body + PAD
    fields, end = s.read(data, version, len(PAD), len(PAD) + len(body))
    assert end == len(PAD) + len(body)
    return fields


def test_version_ranges() -> None:
    assert parse_versions("0+") == (0, 0x7FFF)
    assert parse_versions("1-3") == (1, 3)
    assert parse_versions("2") == (2, 2)
    assert parse_versions("none") == parse_versions("") == (0, -1)


def test_non_flexible_fixed_strings_arrays_and_bytes() -> None:
    s = Schema("T", ("0-1", "none", (
        ("a", "int8", "0+", "", -1, "", ()),
        ("b", "int16", "0+", "", -1, "", ()),
        ("c", "int32", "0+", "", -1, "", ()),
        ("d", "int64", "1+", "", -1, "", ()),
        ("e", "uint16", "0+", "", -1, "", ()),
        ("f", "float64", "0+", "", -1, "", ()),
        ("g", "bool", "0+", "", -1, "", ()),
        ("h", "string", "0+", "0+", -1, "", ()),
        ("i", "bytes", "0+", "0+", -1, "", ()),
        ("j", "[]int32", "0+", "", -1, "", ()),
        ("k", "uuid", "0+", "", -1, "", ()),
    )))  # fmt: skip
    uuid = bytes(range(16))
    body_v0 = (
        b"\xff" + struct.pack(">hi", -2, 70000) + b"\xff\xfe" + struct.pack(">d", 1.5) + b"\x01"
        + b"\xff\xff" + struct.pack(">i", 3) + b"xyz" + struct.pack(">iii", 2, 7, -1) + uuid
    )  # fmt: skip
    assert read(s, body_v0, 0) == {
        "a": -1, "b": -2, "c": 70000, "e": 65534, "f": 1.5, "g": True, "h": None, "i": b"xyz", "j": [7, -1],
        "k": "AAECAwQFBgcICQoLDA0ODw",  # Kafka's Uuid.toString: URL-safe base64 without padding
    }  # fmt: skip
    body_v1 = body_v0[:7] + struct.pack(">q", -5) + body_v0[7:]
    assert read(s, body_v1, 1)["d"] == -5


def test_flexible_compact_fields_and_tagged_fields() -> None:
    s = Schema("T", ("0+", "0+", (
        ("name", "string", "0+", "0+", -1, "", ()),
        ("items", "[]struct", "0+", "", -1, "", (("n", "int16", "0+", "", -1, "", ()),)),
        ("blob", "bytes", "0+", "", -1, "", ()),
        ("extra", "int32", "0+", "", 3, "0+", ()),
        ("maybe", "string", "0+", "0+", 5, "0+", ()),
    )))  # fmt: skip
    # compact string "ab" (len+1 = 3); 2 items (count+1 = 3), each int16 then its own empty tag section;
    # compact bytes of 1; tagged: 3 fields: tag 3 (int32 9), tag 5 (compact null string), tag 9 (unknown).
    body = (
        b"\x03ab" + b"\x03" + b"\x00\x01\x00" + b"\x00\x02\x00" + b"\x02\x7f"
        + b"\x03" + b"\x03\x04\x00\x00\x00\x09" + b"\x05\x01\x00" + b"\x09\x02\xbe\xef"
    )  # fmt: skip
    assert read(s, body, 0) == {
        "name": "ab", "items": [{"n": 1}, {"n": 2}], "blob": b"\x7f", "extra": 9, "maybe": None,
        UNKNOWN_TAGS: {9: "beef"},
    }  # fmt: skip
    # A compact null (0) where the schema allows it; absent tagged fields stay absent.
    assert read(s, b"\x00\x01\x01\x00", 0) == {"name": None, "items": [], "blob": b""}


def test_nullable_struct_and_null_refused_where_not_nullable() -> None:
    s = Schema("T", ("0", "none", (
        ("opt", "struct", "0+", "0+", -1, "", (("x", "int8", "0+", "", -1, "", ()),)),
        ("name", "string", "0+", "", -1, "", ()),
    )))  # fmt: skip
    assert read(s, b"\xff\x00\x01z", 0) == {"opt": None, "name": "z"}
    assert read(s, b"\x01\x05\x00\x00", 0) == {"opt": {"x": 5}, "name": ""}
    with pytest.raises(KMessageError, match="null in a non-nullable field"):
        read(s, b"\xff\xff\xff", 0)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"\x00\x05ab", "name needs 5 bytes, 2 left"),
        (b"\x00\x00\x7f\xff\xff\xff", "1073741823 elements|2147483647 elements"),
        (b"\x00\x00\x00\x00", "needs 4 bytes"),
    ],
)
def test_lengths_are_bounded_by_the_bytes_there(body: bytes, reason: str) -> None:
    s = Schema("T", ("0", "none", (
        ("name", "string", "0+", "", -1, "", ()),
        ("list", "[]int32", "0+", "", -1, "", ()),
    )))  # fmt: skip
    with pytest.raises(KMessageError, match=reason):
        s.read(body, 0)


def test_uvarint_longer_than_five_bytes_is_refused() -> None:
    s = Schema("T", ("0", "0+", (("name", "string", "0+", "", -1, "", ()),)))
    with pytest.raises(KMessageError, match="longer than 5 bytes"):
        s.read(b"\x80\x80\x80\x80\x80\x01", 0)
    with pytest.raises(KMessageError, match="past the end"):
        s.read(b"\x80", 0)


def test_tagged_field_must_fill_its_size() -> None:
    s = Schema("T", ("0", "0+", (("t", "int8", "0+", "", 0, "0+", ()),)))
    assert s.read(b"\x01\x00\x01\x07", 0) == ({"t": 7}, 4)
    with pytest.raises(KMessageError, match="left over"):
        s.read(b"\x01\x00\x02\x07\x00", 0)


def test_unknown_version_is_refused() -> None:
    with pytest.raises(KMessageError, match="has no version 9"):
        schema("TopicRecord").read(b"", 9)


def test_the_table_covers_what_the_issue_names() -> None:
    needed = {
        "TopicRecord", "PartitionRecord", "PartitionChangeRecord", "RegisterBrokerRecord",
        "BrokerRegistrationChangeRecord", "UnregisterBrokerRecord", "FenceBrokerRecord", "UnfenceBrokerRecord",
        "FeatureLevelRecord", "ConfigRecord", "RemoveTopicRecord", "ProducerIdsRecord", "ClientQuotaRecord",
        "AccessControlEntryRecord", "NoOpRecord", "RegisterControllerRecord", "BeginTransactionRecord",
        "EndTransactionRecord", "ZkMigrationStateRecord",
    }  # fmt: skip
    assert needed <= set(METADATA_TYPES.values())
    for name in ("OffsetCommitKey", "OffsetCommitValue", "GroupMetadataKey", "GroupMetadataValue",
                 "TransactionLogKey", "TransactionLogValue", "LeaderChangeMessage", "SnapshotHeaderRecord",
                 "SnapshotFooterRecord", "KRaftVersionRecord", "VotersRecord", "ConsumerProtocolSubscription",
                 "ConsumerProtocolAssignment", "ProducerSnapshot"):  # fmt: skip
        assert name in MESSAGES
    # Every table entry compiles (versions parse, children nest).
    for name in MESSAGES:
        assert schema(name).name == name


@given(st.sampled_from(sorted(MESSAGES)), st.integers(0, 4), st.binary(max_size=64))
def test_arbitrary_bytes_raise_only_kmessage_errors(name: str, version: int, data: bytes) -> None:
    s = schema(name)
    try:
        _, end = s.read(data, version)
    except KMessageError as exc:
        assert 0 <= exc.position <= len(data)
    else:
        assert end <= len(data)
