"""``kdump upgrade-check``: v0/v1 data left before Kafka 4, and what Kafka 4 does with it per topic.

The KRaft metadata log is built here by hand (each record framed as ``MetadataRecordSerde`` frames it,
in batches from kafka-python's builder), not by kdump's encoder; the sizes as v2 are checked against
kafka-python's v2 batch builder.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from kafka_dump.cli import main

from .batches import (
    GZIP,
    TS0,
    compact_string,
    default_records,
    legacy_messages,
    legacy_records,
    uvarint,
    v2_batch,
)
from .conftest import SHARED_REAL

DAY = 86_400_000
TOPIC, BROKER = 2, 4  # ConfigResource.Type


def _framed(api_key: int, body: bytes) -> bytes:
    """frameVersion 1, apiKey, version 0, the message, no tagged fields."""
    return uvarint(1) + uvarint(api_key) + uvarint(0) + body + b"\x00"


def topic_record(name: str, n: int) -> bytes:
    return _framed(2, compact_string(name) + bytes([n]) * 16)


def config_record(kind: int, resource: str, name: str, value: str | None) -> bytes:
    return _framed(4, bytes([kind]) + compact_string(resource) + compact_string(name) + compact_string(value))


def metadata_log(log_dir: Path, values: list[bytes]) -> None:
    d = log_dir / "__cluster_metadata-0"
    d.mkdir(parents=True)
    (d / "00000000000000000000.log").write_bytes(v2_batch([(None, value, []) for value in values]))


def partition(log_dir: Path, name: str, data: bytes) -> Path:
    d = log_dir / name
    d.mkdir(parents=True)
    (d / "00000000000000000000.log").write_bytes(data)
    return d


def v1_plain(n: int, ts: int) -> bytes:
    return legacy_messages(legacy_records(n), magic=1, base_offset=0, timestamp=ts)


def run(*args: str) -> Result:
    return CliRunner().invoke(main, ["upgrade-check", *args], env={"COLUMNS": "250", "NO_COLOR": "1"})


def lines(result: Result) -> list[dict[str, Any]]:
    return [json.loads(line) for line in result.stdout.splitlines()]


def broker(tmp_path: Path) -> Path:
    log_dir = tmp_path / "data"
    metadata_log(
        log_dir,
        [
            topic_record("compacted", 1),
            config_record(TOPIC, "compacted", "cleanup.policy", "compact"),
            topic_record("deleted", 2),
            config_record(TOPIC, "deleted", "cleanup.policy", "delete"),
            config_record(TOPIC, "deleted", "retention.ms", str(DAY)),
            topic_record("forever", 3),
            config_record(TOPIC, "forever", "retention.ms", "-1"),
            config_record(TOPIC, "forever", "cleanup.policy", "delete"),
            topic_record("defaulted", 4),
            config_record(TOPIC, "defaulted", "retention.ms", "5"),
            config_record(TOPIC, "defaulted", "retention.ms", None),  # deleted: the cluster default holds
            config_record(BROKER, "", "log.cleanup.policy", "delete"),
            config_record(BROKER, "", "log.retention.ms", "3600000"),
            config_record(BROKER, "1", "log.retention.ms", "1"),  # one broker's: not the cluster default
        ],
    )
    partition(log_dir, "compacted-0", legacy_messages(legacy_records(3), magic=1, codec=GZIP, timestamp=TS0))
    partition(log_dir, "deleted-0", v1_plain(4, TS0 + 10))
    partition(log_dir, "forever-0", v1_plain(2, TS0 + 20) + v2_batch(default_records(2), base_offset=2))
    partition(log_dir, "defaulted-0", v1_plain(1, TS0 + 30))
    partition(log_dir, "fresh-0", v2_batch(default_records(3)))  # v2 only: ready
    return log_dir


def test_outcomes_follow_the_topic_configs_in_the_metadata_log(tmp_path: Path) -> None:
    result = run("--format", "json", str(broker(tmp_path)))
    assert result.exit_code == 1, result.output
    got = lines(result)
    parts = {Path(r["partition"]).name: r for r in got if r["type"] == "partition"}
    topics = {r["topic"]: r for r in got if r["type"] == "topic"}
    assert set(parts) == {"compacted-0", "deleted-0", "forever-0", "defaulted-0"}
    assert got[-1]["type"] == "verdict" and got[-1]["ready"] is False and got[-1]["partitions"] == 4
    assert topics["compacted"]["outcome"] == "compaction" and topics["compacted"]["policySource"] == "topic"
    assert topics["deleted"]["outcome"] == "retention" and topics["deleted"]["retentionMs"] == DAY
    assert topics["forever"]["outcome"] == "kept" and topics["forever"]["deletedAfter"] is None
    # the newest segment's largest timestamp (a v2 batch beside the v1 messages counts too) + retention.ms
    assert topics["deleted"]["deletedAfter"] == TS0 + 10 + 3 + DAY  # the 4th message is the newest
    defaulted = topics["defaulted"]
    assert (defaulted["outcome"], defaulted["policySource"], defaulted["retentionMs"]) == (
        "retention",
        "cluster default",
        3_600_000,
    )
    assert defaulted["deletedAfter"] == TS0 + 30 + 3_600_000
    forever = parts["forever-0"]
    assert (forever["entries"], forever["firstOffset"], forever["lastOffset"]) == (2, 0, 1)
    assert parts["compacted-0"]["firstOffset"] is None  # a wrapper's first offset is in its payload
    table = run(str(tmp_path / "data"))
    assert "4 partitions hold v0/v1 data · exit 1" in table.stdout
    assert "rewritten as v2 at the next compaction" in table.stdout
    assert "kept indefinitely (retention.ms -1)" in table.stdout
    assert "past retention since 2023-11-15T22:13Z: deleted at the next retention check" in table.stdout


def test_size_as_v2_is_what_a_v2_writer_writes(tmp_path: Path) -> None:
    """Each plain v1 message becomes one single-record v2 batch (the cleaner's rule): the bytes of
    kafka-python's v2 batch for the same record, exactly; --sample scales a sample up."""
    records = legacy_records(40)
    log_dir = tmp_path / "data"
    partition(log_dir, "t-0", legacy_messages(records, magic=1, base_offset=0, timestamp=TS0))
    expected = 0
    for i, (key, value) in enumerate(records):
        expected += len(v2_batch([(key, value, [])], timestamp=TS0 + i))
    row = lines(run("--format", "json", str(log_dir)))[0]
    assert row["bytesAsV2"] == expected and row["sampled"] is False
    sampled = lines(run("--format", "json", "--sample", "5", str(log_dir)))[0]
    assert sampled["sampled"] is True and abs(sampled["bytesAsV2"] - expected) < expected * 0.2
    assert sampled["encodedEntries"] == 5 and row["encodedEntries"] == 40  # the others are not decoded


def test_without_metadata_both_outcomes_are_shown(tmp_path: Path) -> None:
    log_dir = tmp_path / "data"
    partition(log_dir, "old-0", v1_plain(2, TS0))
    result = run(str(log_dir))
    assert result.exit_code == 1
    assert (
        "topic configs unknown" in result.stdout and "topic configs unknown" not in result.stderr
    )  # said once
    assert "topic configs unknown" in run("--format", "json", str(log_dir)).stderr  # JSON has no header line
    assert "if compacted: rewritten as v2 at the next compaction; else deleted by retention after" in (
        result.stdout
    )
    assert "7 days by default" in result.stdout


def test_a_metadata_dir_without_a_metadata_log_is_an_error(tmp_path: Path) -> None:
    log_dir = tmp_path / "data"
    partition(log_dir, "old-0", v1_plain(2, TS0))
    (tmp_path / "empty").mkdir()
    result = run("--metadata", str(tmp_path / "empty"), str(log_dir))
    assert result.exit_code == 2 and "empty" in result.stderr and "Traceback" not in result.output


def test_retention_minus_one_without_a_policy_is_kept_not_deleted(tmp_path: Path) -> None:
    """No cleanup.policy anywhere, retention.ms -1: whatever the policy, retention never deletes it."""
    log_dir = tmp_path / "data"
    metadata_log(log_dir, [topic_record("forever", 3), config_record(TOPIC, "forever", "retention.ms", "-1")])
    partition(log_dir, "forever-0", v1_plain(2, TS0))
    topic = next(r for r in lines(run("--format", "json", str(log_dir))) if r["type"] == "topic")
    assert (topic["outcome"], topic["retentionMs"], topic["deletedAfter"]) == ("unknown", -1, None)
    table = run(str(log_dir)).stdout
    assert "else kept indefinitely (retention.ms -1)" in table and "deleted by retention" not in table


def test_ready_when_only_v2_is_left(tmp_path: Path) -> None:
    log_dir = tmp_path / "data"
    partition(log_dir, "fresh-0", v2_batch(default_records(3)))
    result = run(str(log_dir))
    assert result.exit_code == 0 and result.stdout.rstrip().endswith("ready: no v0/v1 data · exit 0")
    for given in (str(log_dir), f"{log_dir}/", f"{log_dir}//"):  # one slash after a directory, as ls
        assert run(given).stdout.splitlines()[0].startswith(f"Checking {log_dir}/ for v0/v1 data"), given


@pytest.mark.skipif(not SHARED_REAL.is_dir(), reason="the real broker files are not here")
def test_real_broker_dirs() -> None:
    kraft = SHARED_REAL / "ronem123-kafka41-kraft"
    result = run("--format", "json", str(kraft))
    assert result.exit_code == 0 and lines(result)[-1]["metadata"].endswith("__cluster_metadata-0")
    old = SHARED_REAL / "kafka-3.8.0-java" / "mixed_magic.log"
    legacy = lines(run("--format", "json", str(old)))
    assert legacy[0]["entries"] == 5 + 2 + 5 + 2 + 2 and legacy[-1]["ready"] is False  # v0 none, gzip; v1 ...


def test_jobs_give_the_same_answer(tmp_path: Path) -> None:
    log_dir = broker(tmp_path)
    assert (
        run("--format", "json", "-j", "3", str(log_dir)).stdout
        == run("--format", "json", str(log_dir)).stdout
    )


def test_a_partition_given_as_the_working_directory_is_named_by_its_own_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    d = partition(tmp_path / "data", "old-0", v1_plain(2, TS0))
    monkeypatch.chdir(d)
    table = run(".").stdout
    assert "│ old-0 " in table and "│ old " in table and "│ . " not in table
    (row, topic, _) = lines(run("--format", "json", "."))
    assert (row["topic"], topic["topic"]) == ("old", "old")
