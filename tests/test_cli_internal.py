"""``kdump dump --decode`` and side files, through the command (CliRunner, in-process).

Real files come from ../shared/fixtures-real (skipped when absent); the expected values are the
ones pinned and checked by hand in test_internal_decoders.py and test_sidefiles.py.
"""

from __future__ import annotations

import json
import shutil
import struct
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from kafka_dump.cli import main
from kafka_dump.wire.checksum import crc32c
from tests.conftest import SHARED_REAL as REAL

needs_real = pytest.mark.skipif(not REAL.is_dir(), reason="../shared/fixtures-real is absent")
ENV: dict[str, str | None] = {"COLUMNS": "200", "NO_COLOR": None, "FORCE_COLOR": None, "TERM": None}
OFFSETS_44 = REAL / "ronem123-kafka41-kraft/__consumer_offsets-44"
SNAPSHOT_41 = REAL / "ronem123-kafka41-kraft/__cluster_metadata-0/00000000000001734780-0000000001.checkpoint"


def run(*args: str, columns: int = 200) -> Result:
    return CliRunner().invoke(main, ["dump", *args], env={**ENV, "COLUMNS": str(columns)})


def json_records(result: Result) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    return [r for b in lines if b["type"] == "batch" for r in b["records"]]


@needs_real
def test_auto_decodes_consumer_offsets_by_directory_name() -> None:
    result = run("--format", "json", str(OFFSETS_44))
    assert result.exit_code == 0, result.output
    records = json_records(result)
    assert [r["offset"] for r in records] == [6, 8, 9, 10]
    d = records[0]["decoded"]
    assert d["decoder"] == "offsets" and d["key"]["schema"] == "OffsetCommitKey"
    assert d["value"]["data"]["offset"] == 5
    assert [r["decoded"]["tombstone"] for r in records] == [False, False, True, True]
    # --decode none: the same lines, with no decoded objects.
    plain = json_records(run("--format", "json", "--decode", "none", str(OFFSETS_44)))
    assert [{k: v for k, v in r.items() if k != "decoded"} for r in records] == plain
    assert all("decoded" not in r for r in plain)


@needs_real
def test_kafka_format_prints_the_offsets_decoder_strings() -> None:
    result = run("--format", "kafka", str(OFFSETS_44 / "00000000000000000009.log"))
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[3] == (
        "| offset: 9 CreateTime: 1766550106107 keySize: 51 valueSize: -1 sequence: 0 headerKeys: [] "
        'key: {"type":"1","data":{"group":"rupia-transaction-group","topic":"topic_transactions","partition":0}} '
        "payload: <DELETE>"
    )


@needs_real
def test_kafka_format_control_records_as_json_and_metadata_payloads() -> None:
    lines = run("--format", "kafka", str(SNAPSHOT_41)).stdout.splitlines()
    assert lines[3].endswith(' SnapshotHeader {"version":0,"lastContainedLogTimestamp":1767084411992}')
    assert lines[4].endswith(' KRaftVersion {"version":0,"kRaftVersion":1}')
    assert lines[7].endswith(
        ' payload: {"type":"FEATURE_LEVEL_RECORD","version":0,"data":{"name":"metadata.version","featureLevel":27}}'
    )
    raw = run("--format", "kafka", "--decode", "none", str(SNAPSHOT_41)).stdout.splitlines()
    assert raw[3].endswith(" SnapshotHeader 00000000019b6e704c5800")


@needs_real
def test_forced_decoder_on_a_copy_under_another_name(tmp_path: Path) -> None:
    copy = tmp_path / "00000000000000000000.log"
    shutil.copy(OFFSETS_44 / "00000000000000000000.log", copy)
    assert all("decoded" not in r for r in json_records(run("--format", "json", str(copy))))
    forced = json_records(run("--format", "json", "--decode", "offsets", str(copy)))
    assert forced[0]["decoded"]["key"]["data"]["topic"] == "topic_transactions"
    # A wrong decoder is no crash: each record says why it could not be read.
    wrong = json_records(run("--format", "json", "--decode", "metadata", str(copy)))
    assert all(r["decoded"]["error"] for r in wrong)


@needs_real
@pytest.mark.parametrize("fmt", ["table", "json", "kafka"])
def test_side_files_in_every_format(fmt: str) -> None:
    snap = REAL / "macsakini-kafka34-zk/tenitems-0/00000000000000000009.snapshot"
    index = REAL / "ronem123-kafka41-kraft/__cluster_metadata-0/00000000000001725413.index"
    result = run("--format", fmt, str(snap), str(index))
    assert result.exit_code == 0, result.output
    out = result.stdout
    if fmt == "kafka":
        assert (
            "producerId: 3 producerEpoch: 0 coordinatorEpoch: -1 currentTxnFirstOffset: OptionalLong.empty "
            "lastTimestamp: 1676144016364 firstSequence: 3 lastSequence: 3 lastOffset: 7 offsetDelta: 0 "
            "timestamp: 1676144016364\n"
        ) in out
        assert "offset: 1725470 position: 4104\n" in out and out.count("position:") == 213
    elif fmt == "json":
        objs = [json.loads(line) for line in out.splitlines()]
        assert [o["type"] for o in objs[:4]] == ["producerSnapshot", "producer", "producer", "producer"]
        assert objs[0]["crcValid"] is True
        assert objs[4] == {"type": "indexEntry", "file": str(index), "offset": 1725470, "position": 4104}
        assert len(objs) == 4 + 213
    else:
        assert "producerId" in out and "2023-02-11T19:33:36.364Z" in out and "1725470" in out  # --time iso


def test_side_file_damage_sets_the_exit_code(tmp_path: Path) -> None:
    body = struct.pack(">i", 1) + struct.pack(">qhiqiqiq", 9, 1, 2, 100, 0, 1700000000000, 4, -1)
    snap = tmp_path / "00000000000000000101.snapshot"
    snap.write_bytes(struct.pack(">hI", 1, crc32c(body) ^ 1) + body)
    result = run("--format", "kafka", str(snap))
    assert result.exit_code == 1
    assert "Snapshot is corrupt (CRC is no longer valid)" in result.stderr
    txn = tmp_path / "00000000000000000000.txnindex"
    txn.write_bytes(struct.pack(">hqqqq", 0, 4001, 10, 14, 20))
    result = run("--format", "kafka", str(txn))
    assert result.exit_code == 0
    assert result.stdout.splitlines()[1] == (
        "version: 0 producerId: 4001 firstOffset: 10 lastOffset: 14 lastStableOffset: 20"
    )
    idx = tmp_path / "00000000000000000000.index"
    idx.write_bytes(struct.pack(">ii", 0, 0) + bytes(80))
    result = run("--format", "json", str(idx))
    assert result.exit_code == 0
    tail = json.loads(result.stdout.splitlines()[-1])
    assert (tail["type"], tail["kind"], tail["position"], tail["length"]) == ("problem", "zero-tail", 8, 80)


def test_unreadable_side_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    result = run(str(tmp_path / "missing.index"))
    assert result.exit_code == 2 and "Traceback" not in result.output


@needs_real
def test_table_shows_decoded_keys_and_values() -> None:
    out = run(str(OFFSETS_44), columns=1000).stdout
    assert "OffsetCommitKey v1 group=rupia-transaction-group topic=topic_transactions partition=0" in out
    assert (
        "OffsetCommitValue v4 offset=5 leaderEpoch=-1 metadata= commitTimestamp=2025-12-16T11:17:46.522Z"
        in out
    )
    assert "<DELETE>" in out
    raw = run("--decode", "none", str(OFFSETS_44)).stdout
    assert "OffsetCommitKey" not in raw and "0x0001001772757069612d" in raw  # the key bytes, as hex
    control = run(str(SNAPSHOT_41), columns=1000).stdout
    assert 'KRAFT_VERSION v0 {"version":0,"kRaftVersion":1}' in control
    assert "TOPIC_RECORD v0 name=topic_transactions topicId=3aJOBeUFT2i-2s4EZqlyqQ" in control
