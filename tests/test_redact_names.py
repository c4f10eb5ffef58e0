"""``kdump redact --names``: topic names, group ids and transactional ids leave no trace, in Kafka's own
topics' records (offsets, transactions, KRaft metadata and its snapshot) nor in the partition
directories' names; one name gets one pseudonym everywhere; Kafka's own names stay; every record
still reads by its schema and every file verifies as the input does; without ``--names`` Kafka's
own topics are copied byte for byte. Most records here are packed by hand (tests/test_state.py)."""

from __future__ import annotations

import json
import shutil
import struct
import uuid
from pathlib import Path
from typing import Any

import pytest

from kafka_dump.wire.kmessage import schema
from tests.batches import compact_string, v2_batch
from tests.conftest import SHARED_REAL as REAL
from tests.test_redact import _problems, kdump
from tests.test_state import T0, batch, commit_key, commit_value, framed, group_key, s16, segment, txn_value

NAMES = (b"orders", b"billing", b"payments-tx", b"10.0.0.7")


def _group_value() -> bytes:
    """GroupMetadataValue v3 of a consumer group subscribed to ``orders`` (the schema writer's bytes;
    the consumer protocol's member bytes too)."""
    sub = struct.pack(">h", 1) + schema("ConsumerProtocolSubscription").write(
        {"topics": ["orders"], "userData": None, "ownedPartitions": [{"topic": "orders", "partitions": [0]}]},
        1,
    )
    assignment = struct.pack(">h", 1) + schema("ConsumerProtocolAssignment").write(
        {"assignedPartitions": [{"topic": "orders", "partitions": [0, 1]}], "userData": None}, 1
    )
    member = {"memberId": "billing-1-0a1b", "groupInstanceId": None, "clientId": "billing-1", "clientHost": "/10.0.0.7",
              "rebalanceTimeout": 300000, "sessionTimeout": 45000, "subscription": sub, "assignment": assignment}  # fmt: skip
    fields = {"protocolType": "consumer", "generation": 3, "protocol": "range", "leader": "billing-1-0a1b",
              "currentStateTimestamp": T0, "members": [member]}  # fmt: skip
    return struct.pack(">h", 3) + schema("GroupMetadataValue").write(fields, 3)


def _topic_record(name: str, n: int) -> bytes:
    return framed(2, compact_string(name) + uuid.UUID(int=n).bytes + b"\x00")


def _config_record(resource_type: int, resource: str, name: str, value: str) -> bytes:
    return framed(4, bytes([resource_type]) + compact_string(resource) + compact_string(name)
                  + compact_string(value) + b"\x00")  # fmt: skip


@pytest.fixture
def log_dir(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    data.mkdir()
    segment(data / "orders-0", 0, v2_batch([(b"k-1", b"an order", [])]))
    segment(data / "__consumer_offsets-0", 0, batch(0, [
        (commit_key("billing", "orders", 0), commit_value(42, T0)),
        (commit_key("billing", "__consumer_offsets", 3), commit_value(7, T0)),
        (group_key("billing"), _group_value()),
    ]))  # fmt: skip
    segment(data / "__transaction_state-0", 0, batch(0, [(struct.pack(">h", 0) + s16("payments-tx"), txn_value(7, 2, T0, T0))]))  # fmt: skip
    metadata = [
        (None, _topic_record("orders", 1)),
        (None, _topic_record("__consumer_offsets", 2)),
        (None, _config_record(2, "orders", "retention.ms", "86400000")),
        (None, _config_record(4, "1", "log.retention.hours", "24")),  # a broker's config: no name in it
    ]
    segment(data / "__cluster_metadata-0", 0, batch(0, metadata))
    snapshot = data / "__cluster_metadata-0" / "00000000000000000004-0000000001.checkpoint"
    snapshot.write_bytes(batch(0, metadata[:2]))
    return data


def _decoded(path: Path) -> list[dict[str, Any]]:
    """What kdump's decoder of Kafka's own topics reads in each record of ``path``."""
    rows = [json.loads(line) for line in kdump("dump", "--format", "json", path, code=0).stdout.splitlines()]
    return [r["decoded"] for row in rows if row["type"] == "batch" for r in row.get("records") or []]


def test_names_leave_no_trace_and_map_to_one_pseudonym(log_dir: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text("names\n")
    out = tmp_path / "out"
    done = kdump("redact", "--names", "--secret-file", secret, log_dir, "-o", out, code=0)
    assert "names replaced: topics" in done.stderr
    files = [p for p in out.rglob("*") if p.is_file()]
    assert {p.relative_to(out).parts[0] for p in files} >= {"__consumer_offsets-0", "__cluster_metadata-0"}
    for p in files:
        assert not any(n in p.read_bytes() for n in NAMES), p
        assert "orders" not in str(p.relative_to(out))
    (data_dir,) = [p for p in out.iterdir() if p.name.endswith("-0") and not p.name.startswith("__")]
    topic = data_dir.name[: -len("-0")]
    assert len(topic) == len("orders") and topic.isalnum()

    offsets = _decoded(out / "__consumer_offsets-0")
    keys = [r["key"]["data"] for r in offsets]
    assert keys[0]["topic"] == topic and keys[1]["topic"] == "__consumer_offsets"
    group = keys[0]["group"]
    assert keys[1]["group"] == keys[2]["group"] == group != "billing" and len(group) == len("billing")
    member = offsets[2]["value"]["data"]["members"][0]
    assert member["subscription"]["topics"] == [topic]
    assert member["assignment"]["assignedPartitions"][0]["topic"] == topic
    (txn,) = _decoded(out / "__transaction_state-0")
    assert len(txn["key"]["data"]["transactionalId"]) == len("payments-tx")
    assert txn["value"]["data"]["transactionPartitions"][0]["topic"] == topic
    for path in (out / "__cluster_metadata-0" / "00000000000000000000.log",
                 out / "__cluster_metadata-0" / "00000000000000000004-0000000001.checkpoint"):  # fmt: skip
        records = [r["value"]["data"] for r in _decoded(path)]
        assert [records[0]["name"], records[1]["name"]] == [topic, "__consumer_offsets"]
    config = [
        r["value"]["data"] for r in _decoded(out / "__cluster_metadata-0" / "00000000000000000000.log")
    ][2:]
    assert [(c["resourceName"], c["value"]) for c in config] == [(topic, "86400000"), ("1", "24")]
    assert _problems(out) == _problems(log_dir)


def test_without_names_kafkas_own_topics_are_copied_as_they_are(log_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    kdump("redact", log_dir, "-o", out, code=0)
    for part in ("__consumer_offsets-0", "__transaction_state-0", "__cluster_metadata-0"):
        for p in (log_dir / part).iterdir():
            assert (out / part / p.name).read_bytes() == p.read_bytes(), p
    assert (out / "orders-0").is_dir()


def test_a_record_the_schema_cannot_write_again_is_kept_and_counted(log_dir: Path, tmp_path: Path) -> None:
    odd = commit_key("billing", "orders", 0) + b"\x99"  # a byte past the key's fields
    segment(log_dir / "__consumer_offsets-1", 0, batch(0, [(odd, commit_value(1, T0))]))
    out = tmp_path / "out"
    done = kdump("redact", "--names", "--format", "json", log_dir / "__consumer_offsets-1", "-o", out, code=0)
    summary = json.loads(done.stdout.splitlines()[-1])
    assert summary["keptRecords"] == {"not written again the same by its schema": 1}
    assert (
        next(out.glob("*.log")).read_bytes()
        == next((log_dir / "__consumer_offsets-1").glob("*.log")).read_bytes()
    )


@pytest.mark.skipif(not REAL.is_dir(), reason="the real fixtures are not here")
def test_real_internal_topics_keep_their_verdict_and_lose_their_names(tmp_path: Path) -> None:
    """A broker's own log dir (Kafka 4.1, KRaft): its topic's name is nowhere in the copy."""
    src = REAL / "ronem123-kafka41-kraft"
    if not src.is_dir():
        pytest.skip("fixture absent")
    work = tmp_path / "in"
    shutil.copytree(src, work)
    out = tmp_path / "out"
    kdump("redact", "--names", work, "-o", out, code=0)
    assert not any(b"topic_transactions" in p.read_bytes() for p in out.rglob("*") if p.is_file())
    assert _problems(out) == _problems(work)
