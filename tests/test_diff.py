"""``kdump diff``: replica pairs built with kafka-python's record builders (and kdump's writer for a
re-segmented copy), compared by offset; each pair's report, exit code and JSON."""

from __future__ import annotations

import itertools
import json
import shutil
import struct
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from kafka_dump.analysis.diff import Damage, DiffOptions, Divergence, OneSide, diff
from kafka_dump.cli import main
from kafka_dump.log.segment import read_segment
from kafka_dump.log.writer import SegmentWriter
from kafka_dump.model import Batch

from .batches import GZIP, fix_legacy_crc, fix_v2_crc, legacy_messages, legacy_records, v2_batch
from .conftest import SHARED_REAL

PER = 5  # records per batch


def _batches(first: int, last: int, *, epoch: int = 3, seed: int = 0) -> list[bytes]:
    """v2 batches of PER records for offsets first..last (a multiple of PER apart)."""
    out = []
    for base in range(first, last + 1, PER):
        records = [(f"k{base + i}".encode(), f"v{seed}/{base + i}".encode(), []) for i in range(PER)]
        out.append(v2_batch(records, base_offset=base, leader_epoch=epoch))
    return out


def _offset(entry: bytes) -> int:
    return int(struct.unpack_from(">q", entry)[0])


def _replica(root: Path, name: str, entries: list[bytes], splits: tuple[int, ...] = ()) -> Path:
    """A partition directory holding ``entries``, split into segments before the entries at ``splits``."""
    d = root / name
    d.mkdir()
    cuts = [0, *splits, len(entries)]
    for lo, hi in itertools.pairwise(cuts):
        (d / f"{_offset(entries[lo]):020d}.log").write_bytes(b"".join(entries[lo:hi]))
    return d


def _events(a: Path, b: Path, **options: bool) -> list[object]:
    _, events = diff(str(a), str(b), DiffOptions(**options))
    return list(events)


def run(*args: object) -> Result:
    return CliRunner().invoke(main, ["diff", *map(str, args)], env={"NO_COLOR": "1", "COLUMNS": "200"})


def test_identical_replicas(tmp_path: Path) -> None:
    entries = _batches(0, 99)
    a, b = _replica(tmp_path, "a", entries), _replica(tmp_path, "b", entries)
    *found, report = _events(a, b)
    assert found == [] and report.identical and report.compared == 20  # type: ignore[attr-defined]
    assert report.common == (0, 99)  # type: ignore[attr-defined]
    result = run(a, b)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"Comparing {a} with {b}\n")
    assert "Common range: offsets 0..99" in result.stdout
    assert "Verdict: identical over the common range, 20 entry pairs compared" in result.stdout


def test_different_segment_boundaries_are_identical(tmp_path: Path) -> None:
    entries = _batches(0, 199)
    a = _replica(tmp_path, "a", entries, (13,))
    b = _replica(tmp_path, "b", entries, (3, 17, 30))
    *found, report = _events(a, b)
    assert found == [] and report.identical and report.compared == 40  # type: ignore[attr-defined]
    assert run(a, b).exit_code == 0


def test_truncated_and_refetched_under_a_new_leader_epoch(tmp_path: Path) -> None:
    a = _replica(tmp_path, "a", _batches(0, 99))
    b = _replica(tmp_path, "b", _batches(0, 59) + _batches(60, 99, epoch=4, seed=1), (12,))
    *found, report = _events(a, b)
    assert len(found) == 1
    d = found[0]
    assert isinstance(d, Divergence) and d.kind == "epoch" and (d.first, d.last) == (60, 99)
    assert d.a is not None and d.b is not None and (d.a.leaderEpoch, d.b.leaderEpoch) == (3, 4)
    assert {name for name, _, _ in d.differs} >= {"leaderEpoch", "crc"}
    assert "leader epoch 3 vs 4 from offset 60" in d.reason
    assert "B was truncated and re-fetched from a new leader" in d.reason
    assert not report.identical and report.common == (0, 99)  # type: ignore[attr-defined]
    result = run(a, b)
    assert result.exit_code == 1
    assert "First divergence at offsets 60..99: leader epoch 3 vs 4" in result.stdout
    assert "leaderEpoch" in result.stdout and "00000000000000000060.log" in result.stdout


def _flipped(tmp_path: Path, at: int) -> tuple[Path, Path, int]:
    """Replicas A and B, B's eighth batch with its byte ``at`` flipped; that batch's position."""
    entries = _batches(0, 99)
    flipped = bytearray(entries[7])
    flipped[at] ^= 0x20
    a = _replica(tmp_path, "a", entries)
    b = _replica(tmp_path, "b", [*entries[:7], bytes(flipped), *entries[8:]])
    return a, b, sum(map(len, entries[:7]))


@pytest.mark.parametrize("at", [20, 22, 45, 55], ids=["crc", "attributes", "producer-id", "sequence"])
def test_a_flipped_header_byte_is_damage_on_its_side_and_the_rest_is_compared(
    tmp_path: Path, at: int
) -> None:
    a, b, position = _flipped(tmp_path, at)
    for verify in (False, True):
        *found, report = _events(a, b, verify=verify)
        assert [(type(e), e.side, e.position) for e in found] == [(Damage, "B", position)], verify  # type: ignore[attr-defined]
        assert "CRC-32C mismatch" in found[0].reason or verify  # type: ignore[attr-defined]
        assert report.damage == 1 and report.divergences == 0  # type: ignore[attr-defined]
    result = run(a, b)
    assert result.exit_code == 1
    assert (
        f"Damage on B: {b / '00000000000000000000.log'} byte {position:,} (after offset 34)" in result.stdout
    )


def test_a_flipped_record_byte_is_found_by_verify(tmp_path: Path) -> None:
    """Inside the records only the CRC sees a flip: without --verify the stored CRCs are compared (and
    are equal); with it, the walk computes every CRC and the damaged batch is damage on B."""
    a, b, position = _flipped(tmp_path, -3)
    *found, report = _events(a, b)
    assert found == [] and report.identical  # type: ignore[attr-defined]
    *found, report = _events(a, b, verify=True)
    assert [(type(e), e.side, e.position) for e in found] == [(Damage, "B", position)]  # type: ignore[attr-defined]
    assert "CRC-32C mismatch" in found[0].reason and report.compared == 19  # type: ignore[attr-defined]
    result = run("--verify", a, b)
    assert (
        result.exit_code == 1
        and f"Damage on B: {b / '00000000000000000000.log'} byte {position:,}" in result.stdout
    )


def test_a_bad_region_is_damage_and_the_walk_resyncs(tmp_path: Path) -> None:
    entries = _batches(0, 99)
    a = _replica(tmp_path, "a", entries)
    broken = bytearray(entries[4])
    broken[8:12] = struct.pack(">i", 10**6)  # a size that runs past the file
    b = _replica(tmp_path, "b", [*entries[:4], bytes(broken), *entries[5:]])
    for verify in (False, True):
        *found, report = _events(a, b, verify=verify)
        assert [type(e) for e in found] == [Damage], found
        assert found[0].side == "B" and found[0].after == 19  # type: ignore[attr-defined]
        assert report.compared == 19 and report.divergences == 0  # type: ignore[attr-defined]
    assert run(a, b).exit_code == 1


def test_one_longer_at_the_end(tmp_path: Path) -> None:
    a = _replica(tmp_path, "a", _batches(0, 99))
    b = _replica(tmp_path, "b", _batches(0, 149), (20,))
    *found, report = _events(a, b)
    assert found == [OneSide("B", 100, 149, "end")] and report.identical  # type: ignore[attr-defined]
    result = run(a, b)
    assert result.exit_code == 0
    assert (
        "Only on B: offsets 100..149, after A's last offset (B's log is longer: A is behind)" in result.stdout
    )


def test_one_with_its_start_deleted_by_retention(tmp_path: Path) -> None:
    entries = _batches(0, 99)
    a = _replica(tmp_path, "a", entries)
    b = _replica(tmp_path, "b", entries[5:])
    *found, report = _events(a, b)
    assert found == [OneSide("A", 0, 24, "start")] and report.identical  # type: ignore[attr-defined]
    assert report.common == (25, 99)  # type: ignore[attr-defined]
    result = run(a, b)
    assert result.exit_code == 0 and "Only on A: offsets 0..24, before B's first offset" in result.stdout


def _mixed() -> list[bytes]:
    """v0 and v1 messages and wrappers, then v2 batches: a topic that lived through upgrades."""
    out = [legacy_messages([rec], magic=0, base_offset=i) for i, rec in enumerate(legacy_records(3))]
    out.append(legacy_messages(legacy_records(4, seed=1), magic=0, codec=GZIP, base_offset=3))
    out += [
        legacy_messages([rec], magic=1, base_offset=7 + i) for i, rec in enumerate(legacy_records(3, seed=2))
    ]
    out.append(legacy_messages(legacy_records(5, seed=3), magic=1, codec=GZIP, base_offset=10))
    return out + _batches(15, 64)


def test_v0_v1_and_v2_mixed(tmp_path: Path) -> None:
    entries = _mixed()
    a = _replica(tmp_path, "a", entries, (4,))
    b = _replica(tmp_path, "b", entries, (2, 9))
    *found, report = _events(a, b)
    assert found == [] and report.compared == len(entries)  # type: ignore[attr-defined]
    changed = bytearray(entries[5])  # a v1 message at offset 7: another value of the same size
    changed[-1] ^= 0x01
    c = _replica(tmp_path, "c", [*entries[:5], fix_legacy_crc(changed), *entries[6:]])
    *found, report = _events(a, c)
    assert len(found) == 1 and isinstance(found[0], Divergence)
    assert found[0].kind == "records" and (found[0].first, found[0].last) == (8, 8)
    assert [n for n, _, _ in found[0].differs] == ["crc"]


def test_all_lists_every_divergent_stretch_and_records_shows_them(tmp_path: Path) -> None:
    entries = _batches(0, 99)
    other = _batches(0, 99, seed=9)
    mixed = [*entries[:3], other[3], *entries[4:10], *other[10:12], *entries[12:]]
    a, b = _replica(tmp_path, "a", entries), _replica(tmp_path, "b", mixed)
    first, *rest, report = _events(a, b)
    assert rest == [] and isinstance(first, Divergence) and report.divergences == 2  # type: ignore[attr-defined]
    stretches = [e for e in _events(a, b, all=True) if isinstance(e, Divergence)]
    assert [(d.first, d.last, d.kind) for d in stretches] == [(15, 19, "records"), (50, 59, "records")]
    result = run("--all", "--records", a, b)
    assert result.exit_code == 1
    assert (
        "First divergence at offsets 15..19" in result.stdout
        and "Divergence at offsets 50..59" in result.stdout
    )
    assert "v0/15" in result.stdout and "v9/15" in result.stdout
    lines = [json.loads(line) for line in run("--format", "json", "--records", a, b).stdout.splitlines()]
    assert [o["type"] for o in lines] == ["divergence", "records", "summary"]
    assert lines[1]["records"][0] == {
        "offset": 15,
        "a": {"timestamp": 1_700_000_000_000, "key": "k15", "value": "v0/15", "headers": 0},
        "b": {"timestamp": 1_700_000_000_000, "key": "k15", "value": "v9/15", "headers": 0},
    }
    assert lines[2]["divergences"] == 2 and lines[2]["identical"] is False


def test_json_lines(tmp_path: Path) -> None:
    a = _replica(tmp_path, "a", _batches(0, 99))
    b = _replica(tmp_path, "b", _batches(25, 59) + _batches(60, 119, epoch=4, seed=1))
    result = run("--format", "json", a, b)
    assert result.exit_code == 1
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [o["type"] for o in lines] == ["only", "divergence", "only", "summary"]
    assert lines[0] == {"type": "only", "side": "A", "first": 0, "last": 24, "where": "start"}
    assert (
        lines[1]["kind"] == "epoch"
        and lines[1]["a"]["leaderEpoch"] == 3
        and lines[1]["b"]["leaderEpoch"] == 4
    )
    assert ["leaderEpoch", 3, 4] in lines[1]["differs"]
    assert lines[2] == {"type": "only", "side": "B", "first": 100, "last": 119, "where": "end"}
    assert lines[3]["common"] == {"first": 25, "last": 99} and lines[3]["compared"] == 15


def test_leader_epoch_checkpoints_name_the_epoch_boundaries(tmp_path: Path) -> None:
    a = _replica(tmp_path, "a", _batches(0, 99))
    b = _replica(tmp_path, "b", _batches(0, 59) + _batches(60, 99, epoch=4, seed=1))
    (a / "leader-epoch-checkpoint").write_text("0\n2\n0 0\n3 40\n")
    (b / "leader-epoch-checkpoint").write_text("0\n3\n0 0\n3 40\n4 60\n")
    report, events = diff(str(a), str(b))
    list(events)
    assert report.epochs["B"] == [(0, 0), (3, 40), (4, 60)]
    result = run(a, b)
    assert (
        "leader-epoch-checkpoint at offset 60: A: epoch 3 (from offset 40); B: epoch 4 (from offset 60); "
        "the checkpoints part at A (none), B epoch 4 from offset 60"
    ) in result.stdout
    data = json.loads(run("--format", "json", a, b).stdout.splitlines()[-1])
    assert data["epochs"] == {"a": [[0, 0], [3, 40]], "b": [[0, 0], [3, 40], [4, 60]]}


def test_unreadable_input_exits_2_with_one_line(tmp_path: Path) -> None:
    a = _replica(tmp_path, "a", _batches(0, 9))
    result = run(a, tmp_path / "missing")
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        f"kdump: error: {tmp_path / 'missing'}: no such file or directory"
    ]
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "00000000000000000000.log").write_bytes(b"\x07" * 100)
    result = run(a, tmp_path / "junk")
    assert result.exit_code == 2 and "not a Kafka log segment" in result.stderr
    assert "Traceback" not in result.output


def test_file_names_are_not_markup_nor_escapes(tmp_path: Path) -> None:
    entries = _batches(0, 49)
    a = _replica(tmp_path, "[bold]a\x1b[2J", entries)
    b = _replica(tmp_path, "b", [*entries[:3], *_batches(15, 49, epoch=5)])
    result = run(a, b)
    assert result.exit_code == 1
    assert "[bold]a\\x1b[2J" in result.stdout and "\x1b" not in result.stdout


def test_a_real_partition_against_a_copy_resegmented_by_kdumps_writer(tmp_path: Path) -> None:
    source = SHARED_REAL / "macsakini-kafka34-zk" / "items-0"
    if not source.is_dir():
        pytest.skip("the shared real fixtures are not here")
    copy = tmp_path / "items-0"
    copy.mkdir()
    log = next(source.glob("*.log"))
    data = log.read_bytes()
    batches = [b for b in read_segment(log, with_records=False) if isinstance(b, Batch)]
    cuts = [0, len(batches) // 3, len(batches) // 2 + 1, len(batches)]
    for lo, hi in itertools.pairwise(cuts):
        with SegmentWriter(copy / f"{batches[lo].baseOffset:020d}.log") as w:
            for batch in batches[lo:hi]:
                w.append(batch, data[batch.position : batch.position + batch.sizeInBytes])
            w.commit()
    assert len(list(copy.glob("*.log"))) == 3
    *found, report = _events(source, copy, verify=True)
    assert found == [] and report.identical and report.compared == len(batches)  # type: ignore[attr-defined]
    result = run(source, copy)
    assert result.exit_code == 0, result.output
    shutil.rmtree(copy)


def test_v2_crc_fix_helper_keeps_the_test_honest(tmp_path: Path) -> None:
    """A batch changed and its CRC fixed is a divergence (other records), not damage."""
    entries = _batches(0, 49)
    changed = bytearray(entries[2])
    changed[-2] ^= 0x01
    a = _replica(tmp_path, "a", entries)
    b = _replica(tmp_path, "b", [*entries[:2], fix_v2_crc(changed), *entries[3:]])
    *found, _ = _events(a, b)
    assert len(found) == 1 and isinstance(found[0], Divergence) and found[0].kind == "records"
    assert "under the same leader epoch 3" in found[0].reason


def test_offsets_one_side_lacks_inside_the_common_range(tmp_path: Path) -> None:
    entries = _batches(0, 99)
    a = _replica(tmp_path, "a", entries)
    b = _replica(tmp_path, "b", [*entries[:6], *entries[8:]])  # 30..39 gone from B (compacted there)
    *found, report = _events(a, b)
    assert [(type(e), e.first, e.last, e.kind) for e in found] == [(Divergence, 30, 39, "missing")]  # type: ignore[attr-defined]
    assert found[0].b is None and found[0].a is not None  # type: ignore[attr-defined]
    assert (
        found[0].reason
        == "entries on A only, inside the common range (from offset 30): B lacks them (compacted or deleted there)"
    )  # type: ignore[attr-defined]
    assert report.compared == 18 and report.divergences == 1  # type: ignore[attr-defined]


def test_on_a_terminal_names_and_reasons_are_neither_markup_nor_escapes(tmp_path: Path) -> None:
    from .test_terminal_safety import HOSTILE_NAME, assert_safe, on_terminal

    entries = _batches(0, 49)
    a = _replica(tmp_path, HOSTILE_NAME, entries)
    b = _replica(tmp_path, "b", [*entries[:3], *_batches(15, 49, epoch=5)])
    out, err = on_terminal("diff", str(a), str(b))
    plain = assert_safe(out, err)
    assert "\\x1b[31m[bold]F[red]\\u202e\\r\\x08" in plain
    assert "First divergence at offsets 15..49: leader epoch 3 vs 5" in plain


def test_after_damage_the_reader_hands_back_to_the_walk(tmp_path: Path) -> None:
    """Damage early in a long segment: the segment reader reads on from it until a stretch of sound
    entries, then the walk takes over again; every sound entry is compared once, in order."""
    entries = _batches(0, 2999)
    broken = bytearray(entries[4])
    broken[8:12] = struct.pack(">i", 10**6)
    a = _replica(tmp_path, "a", entries)
    b = _replica(tmp_path, "b", [*entries[:4], bytes(broken), *entries[5:]], (300,))
    for verify in (False, True):
        *found, report = _events(a, b, verify=verify)
        assert [(type(e), e.side, e.after) for e in found] == [(Damage, "B", 19)]  # type: ignore[attr-defined]
        assert report.compared == 599 and report.divergences == 0 and report.last["B"] == 2999  # type: ignore[attr-defined]


def test_entries_larger_than_a_walk_step(tmp_path: Path) -> None:
    """A batch of ~1.5 MB among small ones: walked whole, on both sides, whatever the segment cuts."""
    big = v2_batch([(b"k", bytes(range(256)) * 6000, [])], base_offset=50, leader_epoch=3)
    entries = [*_batches(0, 49), big, *_batches(51, 200)[:10]]
    a = _replica(tmp_path, "a", entries)
    b = _replica(tmp_path, "b", entries, (10, 11))
    for verify in (False, True):
        *found, report = _events(a, b, verify=verify)
        assert found == [] and report.compared == len(entries) and report.last["A"] == 100  # type: ignore[attr-defined]
