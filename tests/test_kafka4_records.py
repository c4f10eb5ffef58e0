"""Kafka 4.x records of its own topics: the generated table, every record type and version of every
coordinator family, the older layouts of Kafka 4.0, and the remote-log-metadata table.

Records are built from the schemas with kmessage's own encoder (kafka-python cannot write them) from
values chosen per field, then decoded and compared field by field.
"""

from __future__ import annotations

import json
import struct
from itertools import count
from pathlib import Path
from typing import Any

import pytest

from kafka_dump.internal_topics import (
    decoder_for_path,
    get_decoder,
    metadata,
    offsets,
    remote_log,
    share_state,
    transactions,
)
from kafka_dump.model import Record, new_record
from kafka_dump.wire.kmessage import Field, Schema, schema
from kafka_dump.wire.kschemas import COORDINATOR_TYPES, METADATA_TYPES, OLDER_LAYOUTS, RLMM_TYPES
from tools import gen_kschemas

_n = count(1)


def sample(fields: tuple[Field, ...], version: int, tagged: bool = True) -> dict[str, Any]:
    """A value for every field present at ``version``: distinct numbers, named strings, set tags."""
    out: dict[str, Any] = {}
    for f in fields:
        if f.versions[0] <= version <= f.versions[1] and (tagged or f.tag < 0):
            one = [_one(f, version, tagged)]
            out[f.name] = one * 2 if f.is_array else one[0]
    return out


def _one(f: Field, version: int, tagged: bool) -> Any:
    n = next(_n)
    return (
        {
            "bool": True,
            "int8": n % 100,
            "int16": n,
            "uint16": n,
            "int32": n * 1000,
            "int64": n * 10**9,
            "uint32": n,
            "float64": n / 2,
            "string": f"{f.name}-{n}",
            "bytes": bytes([n % 256]) * 3,
            "uuid": "AAECAwQFBgcICQoLDA0ODw",
            "struct": None,
        }.get(f.elem)
        if f.elem != "struct"
        else sample(f.children, version, tagged)
    )


def rec(key: bytes | None, value: bytes | None) -> Record:
    return new_record(7, 0, key, value, (), -1, 0)


def coordinator_bytes(rtype: int, key: dict[str, Any], value: dict[str, Any] | None, version: int,
                      names: tuple[str, str], value_schema: str | None = None) -> Record:  # fmt: skip
    k = struct.pack(">h", rtype) + schema(names[0]).write(key, 0)
    if value is None:
        return rec(k, None)
    return rec(k, struct.pack(">h", version) + schema(value_schema or names[1]).write(value, version))


FAMILIES = {"group": offsets.decode, "transaction": transactions.decode, "share": share_state.decode}
CASES = [
    (fam, rtype, v)
    for fam, types in COORDINATOR_TYPES.items()
    for rtype, (_, value) in types.items()
    for v in range(schema(value).valid[0], schema(value).valid[1] + 1)
]


@pytest.mark.parametrize(("family", "rtype", "version"), CASES)
def test_every_coordinator_record_type_and_version(family: str, rtype: int, version: int) -> None:
    names = COORDINATOR_TYPES[family][rtype]
    key = sample(schema(names[0]).fields, 0)
    value = sample(schema(names[1]).fields, version)
    if names[1] == "GroupMetadataValue":
        value["protocolType"] = "connect"  # member bytes stay bytes (not the consumer protocol)
    d = FAMILIES[family](coordinator_bytes(rtype, key, value, version, names))
    assert d.ok, d.error
    assert d.key is not None and d.value is not None
    assert (d.key.schema, d.key.version, d.key.data) == (names[0], rtype, key)
    assert (d.value.schema, d.value.version, d.value.extra) == (names[1], version, {})
    assert d.value.data == value
    assert list(d.value.data) == list(value)  # schema order
    tomb = FAMILIES[family](coordinator_bytes(rtype, key, None, version, names))
    assert tomb.ok and tomb.tombstone and tomb.value is None and tomb.key == d.key


def test_the_types_kafka_41_on_knows() -> None:
    group = COORDINATOR_TYPES["group"]
    assert sorted(group) == [0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13, 14, 15, 16, 17, 19, 20, 21, 22, 23]
    assert group[0] == ("LegacyOffsetCommitKey", "LegacyOffsetCommitValue")
    assert group[16] == ("ConsumerGroupRegularExpressionKey", "ConsumerGroupRegularExpressionValue")
    assert [group[t][0] for t in (17, 19, 20, 21, 22, 23)] == [
        "StreamsGroupMetadataKey", "StreamsGroupMemberMetadataKey", "StreamsGroupTargetAssignmentMetadataKey",
        "StreamsGroupTargetAssignmentMemberKey", "StreamsGroupCurrentMemberAssignmentKey",
        "StreamsGroupTopologyKey",
    ]  # fmt: skip
    assert COORDINATOR_TYPES["share"] == {0: ("ShareSnapshotKey", "ShareSnapshotValue"),
                                          1: ("ShareUpdateKey", "ShareUpdateValue")}  # fmt: skip
    assert METADATA_TYPES[29] == "UnregisterControllerRecord"
    assert schema("RegisterBrokerRecord").valid == (0, 4)
    assert schema("BrokerRegistrationChangeRecord").valid == (0, 3)
    assert RLMM_TYPES == {0: "RemoteLogSegmentMetadataRecord", 1: "RemoteLogSegmentMetadataUpdateRecord",
                          2: "RemotePartitionDeleteMetadataRecord", 3: "RemoteLogSegmentMetadataSnapshotRecord"}  # fmt: skip
    source = Path(gen_kschemas.__file__).parent.parent / "kafka_dump/wire/kschemas.py"
    assert "d79bd502ec7fa49335afa422f442af80ed0ab8f6" in source.read_text()


@pytest.mark.parametrize("rtype", [9, 18, 24, 99, -1])
def test_types_kafka_41_does_not_know_are_unknown_with_hex(rtype: int) -> None:
    key = struct.pack(">h", rtype) + b"\x00\x01g"
    for value in (b"\x00\x00\x00\x00\x00\x01", None):
        d = offsets.decode(rec(key, value))
        assert d.error == f"unknown record type {rtype}"
        assert d.key is not None and d.key.hex == key.hex() and d.key.data is None
        assert d.tombstone is (value is None)
        assert (d.value is None) is (value is None)


LAYOUTS_40 = [
    ("group", 11, "ShareGroupMetadataValue"),
    ("group", 15, "ShareGroupStatePartitionMetadataValue"),
    ("share", 0, "ShareSnapshotValue"),
    ("share", 1, "ShareUpdateValue"),
]


@pytest.mark.parametrize(("family", "rtype", "name"), LAYOUTS_40)
def test_values_of_kafka_40_and_41_are_told_apart_by_their_bytes(family: str, rtype: int, name: str) -> None:
    assert OLDER_LAYOUTS[name] == (f"{name}@4.0",)
    names = COORDINATOR_TYPES[family][rtype]
    key = sample(schema(names[0]).fields, 0)
    new = sample(schema(name).fields, 0, tagged=False)
    old = sample(schema(f"{name}@4.0").fields, 0)
    if name.startswith("ShareGroupStatePartition"):
        for v in (new, old):
            for topics in v.values():
                topics[1:] = []  # one topic per list: two lists of 4.0 cannot pass for three of 4.1
    d_new = FAMILIES[family](coordinator_bytes(rtype, key, new, 0, names))
    assert d_new.ok and d_new.value is not None
    assert d_new.value.data == new and d_new.value.extra == {}
    d_old = FAMILIES[family](coordinator_bytes(rtype, key, old, 0, names, f"{name}@4.0"))
    assert d_old.ok and d_old.value is not None, d_old.error
    assert d_old.value.data == old and d_old.value.extra == {"layout": "4.0"}
    assert d_old.value.schema == name


def test_share_group_metadata_of_40_and_41() -> None:
    key = struct.pack(">h", 11) + b"\x00\x01g"
    old = offsets.decode(rec(key, b"\x00\x00" + struct.pack(">i", 5) + b"\x00"))
    assert old.value is not None and old.value.data == {"epoch": 5} and old.value.extra == {"layout": "4.0"}
    new = offsets.decode(rec(key, b"\x00\x00" + struct.pack(">iq", 5, 77) + b"\x00"))
    assert new.value is not None and new.value.data == {"epoch": 5, "metadataHash": 77}
    assert new.value.extra == {}
    bad = offsets.decode(rec(key, b"\x00\x00" + struct.pack(">i", 5) + b"\x00\x00\x00"))
    assert not bad.ok and bad.value is not None and bad.value.data is None and bad.value.hex


def test_unknown_value_version_is_hex_with_the_reason() -> None:
    key = struct.pack(">h", 3) + b"\x00\x01g"
    d = offsets.decode(rec(key, b"\x00\x05\x00"))
    assert d.error == "unknown record version 5 for type 3 (ConsumerGroupMetadataValue)"
    assert d.value is not None and d.value.hex == "000500" and d.value.data is None


@pytest.mark.parametrize("api_key", sorted(RLMM_TYPES))
def test_remote_log_metadata_records(api_key: int) -> None:
    name = RLMM_TYPES[api_key]
    fields = sample(schema(name).fields, 0)
    value = b"\x01" + bytes([api_key, 0]) + schema(name).write(fields, 0)
    d = remote_log.decode(rec(None, value))
    assert d.ok and d.decoder == "remote-log-metadata" and d.value is not None
    assert (d.value.schema, d.value.version, d.value.data) == (name, 0, fields)
    assert d.value.extra["apiKey"] == api_key
    # The KRaft decoder forced on it never names it a KRaft record with its fields.
    wrong = metadata.decode(rec(None, value))
    assert not wrong.ok and wrong.value is not None and wrong.value.data is None


def test_share_state_and_remote_log_chosen_by_directory_name() -> None:
    assert decoder_for_path("/d/__share_group_state-7/00000000000000000000.log") == "share-group-state"
    assert decoder_for_path("/d/__remote_log_metadata-3") == "remote-log-metadata"
    assert get_decoder("share-group-state") is share_state.decode
    assert get_decoder("remote-log-metadata") is remote_log.decode


# ---- the generator reads both schema forms ------------------------------------------------------


def _write(path: Path, doc: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("// a licence comment\n" + json.dumps(doc))


def _tree(root: Path, new: bool) -> None:
    group = root / gen_kschemas.COORDINATORS["group"]
    key_fields = [{"name": "Group", "type": "string", "versions": "0" if new else "0-1"}]
    value_fields = [
        {"name": "Offset", "type": "int64", "versions": "0+"},
        {"name": "TopicId", "type": "uuid", "versions": "1+", "taggedVersions": "1+", "tag": 0},
    ]
    if new:
        _write(group / "OffsetCommitKey.json", {"type": "coordinator-key", "apiKey": 1, "name": "OffsetCommitKey",
               "validVersions": "0", "flexibleVersions": "none", "fields": key_fields})  # fmt: skip
        _write(group / "OffsetCommitValue.json", {"type": "coordinator-value", "apiKey": 1,
               "name": "OffsetCommitValue", "validVersions": "0-1", "flexibleVersions": "1+",
               "fields": value_fields})  # fmt: skip
    else:
        _write(group / "OffsetCommitKey.json", {"type": "data", "name": "OffsetCommitKey",
               "validVersions": "0-1", "flexibleVersions": "none", "fields": key_fields})  # fmt: skip
        _write(group / "OffsetCommitValue.json", {"type": "data", "name": "OffsetCommitValue",
               "validVersions": "0-1", "flexibleVersions": "1+", "fields": value_fields})  # fmt: skip
    share = root / gen_kschemas.COORDINATORS["share"]
    epoch = {"name": "SnapshotEpoch", "type": "int32" if new else "uint16", "versions": "0+"}
    _write(share / "ShareUpdateKey.json", {"type": "coordinator-key" if new else "data", "name": "ShareUpdateKey",
           **({"apiKey": 1} if new else {}), "validVersions": "0" if new else "1", "flexibleVersions": "none",
           "fields": [{"name": "GroupId", "type": "string", "versions": "0" if new else "1"}]})  # fmt: skip
    _write(share / "ShareUpdateValue.json", {"type": "coordinator-value" if new else "data",
           **({"apiKey": 1} if new else {}), "name": "ShareUpdateValue", "validVersions": "0",
           "flexibleVersions": "0+", "fields": [epoch]})  # fmt: skip
    storage = root / gen_kschemas.STORAGE
    _write(storage / "RemotePartitionDeleteMetadataRecord.json", {"type": "metadata", "apiKey": 2,
           "name": "RemotePartitionDeleteMetadataRecord", "validVersions": "0", "flexibleVersions": "0+",
           "fields": [{"name": "BrokerId", "type": "int32", "versions": "0+"}]})  # fmt: skip
    (root / gen_kschemas.METADATA).mkdir(parents=True)
    (root / gen_kschemas.CLIENTS).mkdir(parents=True)
    (root / gen_kschemas.COORDINATORS["transaction"]).mkdir(parents=True)


def _generate(tmp_path: Path, capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    gen_kschemas.main(*args)
    ns: dict[str, Any] = {}
    exec(compile(capsys.readouterr().out, "kschemas", "exec"), ns)
    return ns


def test_generator_reads_the_old_and_the_new_schema_form(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _tree(tmp_path / "old", new=False)
    _tree(tmp_path / "new", new=True)
    old = _generate(tmp_path, capsys, str(tmp_path / "old"), "old tree")
    new = _generate(tmp_path, capsys, str(tmp_path / "new"), "new tree", str(tmp_path / "old"), "4.0")
    # Old form: the key's validVersions are its record types; new form: the apiKey.
    assert old["COORDINATOR_TYPES"]["group"] == {0: ("OffsetCommitKey", "OffsetCommitValue"),
                                                 1: ("OffsetCommitKey", "OffsetCommitValue")}  # fmt: skip
    assert new["COORDINATOR_TYPES"]["group"] == {1: ("OffsetCommitKey", "OffsetCommitValue")}
    assert (
        old["COORDINATOR_TYPES"]["share"]
        == new["COORDINATOR_TYPES"]["share"]
        == {1: ("ShareUpdateKey", "ShareUpdateValue")}
    )
    # Keys in either form are read at version 0 with every field; tagged defaults kept.
    assert old["MESSAGES"]["OffsetCommitKey"] == new["MESSAGES"]["OffsetCommitKey"] == (
        "0", "none", (("group", "string", "0", "", -1, "", ()),))  # fmt: skip
    assert new["MESSAGES"]["OffsetCommitValue"][2][1] == ("topicId", "uuid", "1+", "", 0, "1+", ())
    # The remote-log-metadata apiKey stays out of the KRaft table.
    assert new["RLMM_TYPES"] == {2: "RemotePartitionDeleteMetadataRecord"} and new["METADATA_TYPES"] == {}
    # An older layout whose bytes differ is kept under its label.
    assert new["OLDER_LAYOUTS"] == {"ShareUpdateValue": ("ShareUpdateValue@4.0",)}
    assert new["MESSAGES"]["ShareUpdateValue@4.0"][2][0][1] == "uint16"
    assert "Source: new tree" in new["__doc__"]
    assert Schema("x", new["MESSAGES"]["ShareUpdateValue"]).read(b"\x00\x00\x00\x07\x00", 0)[0] == {
        "snapshotEpoch": 7
    }


META_CASES = [
    (api_key, v)
    for api_key, name in METADATA_TYPES.items()
    for v in range(schema(name).valid[0], schema(name).valid[1] + 1)
]


@pytest.mark.parametrize(("api_key", "version"), META_CASES)
def test_every_metadata_record_type_and_version(api_key: int, version: int) -> None:
    name = METADATA_TYPES[api_key]
    fields = sample(schema(name).fields, version)
    value = b"\x01" + bytes([api_key, version]) + schema(name).write(fields, version)
    d = metadata.decode(rec(None, value))
    assert d.ok, d.error
    assert d.value is not None and (d.value.schema, d.value.version, d.value.data) == (name, version, fields)
    assert list(d.value.data or {}) == list(fields)
