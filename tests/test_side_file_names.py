"""Side files named as Kafka names them are never read as segments, in any command: verify-crc checks
an index with its log (or against it, alone) and a snapshot or checkpoint by its own rules; stats and
convert say that the file is a side file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from kafka_dump.cli import main

from .test_sidefiles import snapshot_bytes

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def partition(tmp_path: Path) -> Path:
    """A healthy partition directory: two segments with their indexes, a snapshot and two checkpoints."""
    part = tmp_path / "orders-0"
    shutil.copytree(FIXTURES / "txn-aborted", part, ignore=shutil.ignore_patterns("*.py"))
    (part / "00000000000000000020.snapshot").write_bytes(
        snapshot_bytes([(9, 1, 2, 19, 5, 1700000000000, 4, -1)])
    )
    (part / "leader-epoch-checkpoint").write_text("0\n1\n0 0\n")
    (part / "partition.metadata").write_text("version: 0\ntopic_id: 3aJOBeUFT2i-2s4EZqlyqQ\n")
    return part


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_verify_every_file_of_a_healthy_partition_exits_0(tmp_path: Path) -> None:
    files = sorted(str(p) for p in partition(tmp_path).iterdir())
    assert len(files) == 11
    code, out, _ = invoke("verify-crc", *files)
    assert code == 0, out
    assert out.splitlines()[-2:] == [
        "6 index files checked with the segment they index",
        "all 11 files valid · exit 0",
    ]
    code, out, _ = invoke("verify-crc", "--format", "json", *files)
    notes = {Path(o["file"]).name: o.get("note") for o in map(json.loads, out.splitlines())}
    assert notes["00000000000000000000.index"] == ".index file, checked with 00000000000000000000.log"
    assert notes["00000000000000000020.snapshot"] == ".snapshot file, checked"
    assert notes["leader-epoch-checkpoint"] == "leader-epoch-checkpoint file, checked"
    assert notes["00000000000000000013.log"] is None


def test_a_side_file_alone_is_checked_by_its_own_rules(tmp_path: Path) -> None:
    part = partition(tmp_path)
    index = part / "00000000000000000013.index"
    code, out, _ = invoke("verify-crc", "--format", "json", str(index))
    assert code == 0 and json.loads(out)["note"] == ".index file, checked against 00000000000000000013.log"
    snapshot = part / "00000000000000000020.snapshot"
    data = bytearray(snapshot.read_bytes())
    data[-1] ^= 1
    snapshot.write_bytes(bytes(data))
    code, out, _ = invoke("verify-crc", "--salvage", str(tmp_path / "rescued"), str(snapshot))
    assert code == 1 and "1 of 1 file damaged" in out.splitlines()[-1]
    assert not (tmp_path / "rescued").exists() or list((tmp_path / "rescued").rglob("*")) == []
    code, out, _ = invoke("verify-crc", "--no-index", "--format", "json", str(index))
    assert code == 0 and json.loads(out)["note"] == ".index file, not checked (--no-index)"


def test_stats_and_convert_say_a_side_file_is_one(tmp_path: Path) -> None:
    part = partition(tmp_path)
    index = str(part / "00000000000000000000.index")
    code, out, err = invoke("stats", index)
    assert (code, out) == (2, "")
    assert err == f"kdump: {index}: a side file (.index), not a segment: `kdump dump` shows its entries\n"
    code, out, err = invoke("stats", "--format", "json", *sorted(str(p) for p in part.iterdir()))
    assert code == 0 and err.count("a side file") == 9
    assert [json.loads(line)["type"] for line in out.splitlines()] == ["file", "file", "total"]
    code, _, err = invoke("convert", index, "-o", str(tmp_path / "out.log"))
    assert code == 2 and "a side file (.index), not a segment" in err


def log_dir(tmp_path: Path) -> Path:
    """A log dir: one healthy partition, the broker's own checkpoint files, meta.properties, .lock and a
    KRaft quorum-state."""
    data = tmp_path / "data"
    part = partition(data)
    for name in ("recovery-point-offset-checkpoint", "replication-offset-checkpoint"):
        (data / name).write_text("0\n1\norders 0 20\n")
    (data / "log-start-offset-checkpoint").write_text("0\n1\norders 0 0\n")
    (data / "cleaner-offset-checkpoint").write_text("0\n0\n")
    (data / "meta.properties").write_text("#\n#Thu Dec 03 18:00:00 UTC 2026\nnode.id=1\nversion=1\n")
    (data / ".lock").write_bytes(b"")
    (part / "quorum-state").write_text('{"leaderId":1,"leaderEpoch":3,"data_version":0}')
    return data


LOG_DIR_FILES = [
    "recovery-point-offset-checkpoint",
    "replication-offset-checkpoint",
    "log-start-offset-checkpoint",
    "cleaner-offset-checkpoint",
    "meta.properties",
    ".lock",
]


def test_a_log_dirs_own_files_are_side_files_in_every_command(tmp_path: Path) -> None:
    data = log_dir(tmp_path)
    named = [str(data / n) for n in LOG_DIR_FILES] + [str(data / "orders-0" / "quorum-state")]
    code, out, err = invoke("dump", "--format", "json", *named)
    assert (code, err) == (0, "")
    objects = [json.loads(line) for line in out.splitlines()]
    assert objects[0] == {
        "type": "offsetCheckpoint",
        "file": named[0],
        "topic": "orders",
        "partition": 0,
        "offset": 20,
    }
    assert {"type": "property", "file": named[4], "key": "node.id", "value": "1"} in objects
    assert {"type": "property", "file": named[6], "key": "leaderEpoch", "value": "3"} in objects
    code, out, _ = invoke("dump", named[0], named[4])
    assert code == 0 and "orders              0             20" in out and "node.id              1" in out
    assert invoke("dump", "--format", "kafka", named[0])[1].splitlines()[1:] == ["orders 0 20"]
    code, out, _ = invoke("verify-crc", "--format", "json", *named)
    notes = [json.loads(line)["note"] for line in out.splitlines()]
    assert code == 0 and notes == [f"{Path(n).name} file, checked" for n in named]
    code, out, err = invoke("stats", *named)
    assert (code, out) == (2, "") and err.count("a side file") == 7
    code, out, err = invoke("stats", "--format", "json", *named, str(data))
    assert code == 0 and err.count("a side file") == 7 and "Traceback" not in err


def test_verify_crc_of_a_log_dir_checks_its_own_files(tmp_path: Path) -> None:
    data = log_dir(tmp_path)
    code, out, _ = invoke("verify-crc", "--format", "json", str(data))
    checked = {Path(o["file"]).name for o in map(json.loads, out.splitlines()) if o.get("note")}
    assert code == 0 and checked >= {*LOG_DIR_FILES, "quorum-state"}
    (data / "replication-offset-checkpoint").write_text("0\n2\norders 0 20\norders zero 5\n")
    code, out, _ = invoke("verify-crc", str(data))
    assert code == 1
    assert (
        f"{data / 'replication-offset-checkpoint'}: byte 16 (14 bytes) other: "
        "line 4 is not 'topic partition offset': 'orders zero 5'"
    ) in out
    assert out.splitlines()[-1].startswith("1 of ") and "damaged · exit 1" in out.splitlines()[-1]
