"""Seeking with ``.index`` / ``.timeindex`` (README: "Filters skip whole batches ... seek through it").

On a real KRaft segment from Kafka 4.1 with its own index files (``../shared/fixtures-real/
ronem123-kafka41-kraft``; skipped when absent):

* ``seek_position`` returns the start of a batch, and no batch before it can hold the target
  (its lastOffset is below ``--from-offset``; its maxTimestamp is below ``--from-time``);
* ``kdump dump --from-offset/--from-time`` gives exactly the records of a full scan filtered in Python;
* a damaged index (garbage, entries past the end, wrong offsets, positions inside a batch, negative
  positions, a garbage time index) changes nothing: kdump falls back to scanning.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import struct
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kafka_dump.cli import main
from kafka_dump.log.index import offset_index, seek_position, time_index
from kafka_dump.log.segment import read_segment
from kafka_dump.model import Batch, Problem
from tests.conftest import SHARED_REAL

REAL_DIR = SHARED_REAL / "ronem123-kafka41-kraft" / "__cluster_metadata-0"
LOG = REAL_DIR / "00000000000001725413.log"
BASE = 1725413

pytestmark = pytest.mark.skipif(
    not all(LOG.with_suffix(s).exists() for s in (".log", ".index", ".timeindex")),
    reason=f"{LOG} with its .index and .timeindex is absent",
)


@pytest.fixture(scope="module")
def scan() -> list[Batch]:
    items = list(read_segment(LOG, with_records=False))
    assert not [i for i in items if isinstance(i, Problem)]
    batches = [i for i in items if isinstance(i, Batch)]
    assert len(batches) > 1000
    return batches


@pytest.fixture(scope="module")
def full_json() -> list[dict[str, Any]]:
    """Every batch object of one unfiltered ``kdump dump --format json`` (the reference scan)."""
    result = CliRunner().invoke(main, ["dump", "--format", "json", str(LOG)])
    assert result.exit_code == 0, result.stderr
    objs = [json.loads(line) for line in result.stdout.splitlines()]
    assert all(o["type"] == "batch" for o in objs)
    return objs


@pytest.fixture(scope="module")
def offsets_index() -> list[tuple[int, int]]:
    entries = list(offset_index(LOG, BASE))
    assert len(entries) > 100
    return entries


@pytest.fixture(scope="module")
def times_index() -> list[tuple[int, int]]:
    entries = list(time_index(LOG, BASE))
    assert len(entries) > 100
    return entries


def records(
    objs: list[dict[str, Any]], field: str = "offset", lo: int | None = None, hi: int | None = None
) -> list[tuple[int, dict[str, Any]]]:
    """(batch position, record object) of every record whose ``field`` is in [lo, hi] (a filter in Python)."""
    return [
        (b["position"], r)
        for b in objs
        if b["type"] == "batch"
        for r in b["records"]
        if (lo is None or r[field] >= lo) and (hi is None or r[field] <= hi)
    ]


def dump_json(path: Path, *args: str) -> tuple[int, list[dict[str, Any]], str]:
    result = CliRunner().invoke(main, ["dump", "--format", "json", *args, str(path)])
    assert result.exc_info is None or result.exc_info[0] is SystemExit, result.exc_info
    return result.exit_code, [json.loads(line) for line in result.stdout.splitlines()], result.stderr


def offset_targets(idx: list[tuple[int, int]], scan: list[Batch]) -> list[int]:
    first, mid, late = idx[0][0], idx[len(idx) // 2][0], idx[-2][0]
    multi = next(b for b in scan if b.lastOffset - b.baseOffset > 10)  # a batch of many records
    last = scan[-1].lastOffset
    return sorted({
        BASE - 5, BASE, BASE + 1, first - 1, first, first + 1, mid - 1, mid, mid + 1, late, late + 1,
        multi.baseOffset, multi.baseOffset + 7, multi.lastOffset, last, last + 1, 10**15,
    })  # fmt: skip


def time_targets(tidx: list[tuple[int, int]], scan: list[Batch]) -> list[int]:
    first, mid, late = tidx[0][0], tidx[len(tidx) // 2][0], tidx[-2][0]
    return sorted({
        0, scan[0].maxTimestamp, first - 1, first, first + 1, mid - 1, mid, mid + 1, late, late + 1,
        scan[len(scan) // 3].maxTimestamp, scan[-1].maxTimestamp, scan[-1].maxTimestamp + 1,
    })  # fmt: skip


# --- seek_position on the real index ---------------------------------------------------------------


def test_index_entries_are_batch_starts(scan: list[Batch], offsets_index: list[tuple[int, int]]) -> None:
    """The fixture is what we think: Kafka's entries are (a batch's lastOffset, that batch's position)."""
    by_position = {b.position: b for b in scan}
    assert all(by_position[pos].lastOffset == off for off, pos in offsets_index)


def test_seek_by_offset_lands_on_a_batch_before_the_target(
    scan: list[Batch], offsets_index: list[tuple[int, int]]
) -> None:
    positions = {b.position for b in scan}
    for target in offset_targets(offsets_index, scan):
        pos = seek_position(LOG, from_offset=target, from_time=None)
        assert pos in positions, target
        assert all(b.lastOffset < target for b in scan if b.position < pos), target
        holder = next((b for b in scan if b.lastOffset >= target), None)
        if holder is not None:
            assert pos <= holder.position, target
            if target >= offsets_index[0][0]:
                # It really seeks: it lands within a couple of index intervals of the batch holding the target.
                assert pos > 0 and holder.position - pos <= 8192, (target, pos, holder.position)


def test_seek_by_time_lands_on_a_batch_before_the_target(
    scan: list[Batch], times_index: list[tuple[int, int]]
) -> None:
    positions = {b.position for b in scan}
    for target in time_targets(times_index, scan):
        pos = seek_position(LOG, from_offset=None, from_time=target)
        assert pos in positions, target
        assert all(b.maxTimestamp < target for b in scan if b.position < pos), target
    assert seek_position(LOG, from_offset=None, from_time=times_index[len(times_index) // 2][0] + 1) > 0


def test_seek_by_offset_and_time(
    scan: list[Batch], offsets_index: list[tuple[int, int]], times_index: list[tuple[int, int]]
) -> None:
    positions = {b.position for b in scan}
    for off in offset_targets(offsets_index, scan)[::3]:
        for ts in time_targets(times_index, scan)[::3]:
            pos = seek_position(LOG, from_offset=off, from_time=ts)
            assert pos in positions
            assert all(b.lastOffset < off or b.maxTimestamp < ts for b in scan if b.position < pos)
            # Both bounds apply, so it seeks at least as far as either alone would.
            assert pos >= min(
                seek_position(LOG, from_offset=off, from_time=None),
                seek_position(LOG, from_offset=None, from_time=ts),
            )


def test_no_filter_means_no_seek() -> None:
    assert seek_position(LOG, from_offset=None, from_time=None) == 0


# --- the CLI with the real index gives what a full scan gives --------------------------------------


def test_from_offset_matches_a_full_scan(
    full_json: list[dict[str, Any]], scan: list[Batch], offsets_index: list[tuple[int, int]]
) -> None:
    # Open-ended dumps of the last quarter (earlier targets: the window test below).
    targets = [
        t for t in offset_targets(offsets_index, scan) if t >= offsets_index[3 * len(offsets_index) // 4][0]
    ]
    assert len(targets) >= 4
    for target in targets:
        code, objs, stderr = dump_json(LOG, "--from-offset", str(target))
        assert code == 0 and stderr == ("" if objs else _PAST_THE_END), target
        assert records(objs) == records(full_json, "offset", target), target


def test_offset_windows_match_a_full_scan(
    full_json: list[dict[str, Any]], scan: list[Batch], offsets_index: list[tuple[int, int]]
) -> None:
    for target in offset_targets(offsets_index, scan):
        hi = target + 120
        code, objs, _ = dump_json(LOG, "--from-offset", str(target), "--to-offset", str(hi))
        assert code == 0, target
        assert records(objs) == records(full_json, "offset", target, hi), target


_PAST_THE_END = (
    "kdump: no record in the range given: the segment holds offsets 1725413..1737568, "
    "with batch times up to 2025-12-30T09:09:49.913Z (1767085789913)\n"
)


def test_from_time_matches_a_full_scan(
    full_json: list[dict[str, Any]], scan: list[Batch], times_index: list[tuple[int, int]]
) -> None:
    for target in time_targets(times_index, scan):
        if target < times_index[3 * len(times_index) // 4][0]:
            continue  # early targets dump most of the file; the window test below covers them
        code, objs, stderr = dump_json(LOG, "--from-time", str(target))
        assert code == 0 and stderr == ("" if objs else _PAST_THE_END), target
        assert records(objs) == records(full_json, "timestamp", target), target


def test_time_windows_match_a_full_scan(
    full_json: list[dict[str, Any]], scan: list[Batch], times_index: list[tuple[int, int]]
) -> None:
    for target in time_targets(times_index, scan):
        hi = target + 60_000
        code, objs, _ = dump_json(LOG, "--from-time", str(target), "--to-time", str(hi), "--limit", "50")
        assert code == 0, target
        assert records(objs) == records(full_json, "timestamp", target, hi)[:50], target


# --- damaged indexes change nothing ------------------------------------------------------------------


def _segment_copy(tmp_path: Path, index: bytes | None = None, timeindex: bytes | None = None) -> Path:
    """The real log beside index files we write (the log itself linked, or copied, not changed)."""
    # In a directory of the same name, so that --decode auto decodes both dumps alike.
    (tmp_path / LOG.parent.name).mkdir()
    log = tmp_path / LOG.parent.name / LOG.name
    try:
        os.symlink(LOG, log)
    except OSError:
        shutil.copy(LOG, log)
    log.with_suffix(".index").write_bytes(LOG.with_suffix(".index").read_bytes() if index is None else index)
    log.with_suffix(".timeindex").write_bytes(
        LOG.with_suffix(".timeindex").read_bytes() if timeindex is None else timeindex
    )
    return log


def _index(entries: list[tuple[int, int]]) -> bytes:
    return b"".join(struct.pack(">ii", off - BASE, pos) for off, pos in entries)


def _assert_same_as_full_scan(log: Path, full_json: list[dict[str, Any]], targets: list[int]) -> None:
    positions = {b["position"] for b in full_json}
    for target in targets:
        hi = target + 60
        code, objs, stderr = dump_json(log, "--from-offset", str(target), "--to-offset", str(hi))
        assert [o for o in objs if o["type"] == "problem"] == [], target
        assert (code, stderr) == (0, ""), (target, stderr)
        assert records(objs) == records(full_json, "offset", target, hi), target
        pos = seek_position(log, from_offset=target, from_time=None)
        assert pos in positions, target
        assert all(b["lastOffset"] < target for b in full_json if b["position"] < pos), target


def _some_targets(offsets_index: list[tuple[int, int]]) -> list[int]:
    n = len(offsets_index)
    return [BASE, offsets_index[n // 3][0], offsets_index[n // 2][0] + 1, offsets_index[-1][0]]


def test_garbage_index_changes_nothing(
    tmp_path: Path, full_json: list[dict[str, Any]], offsets_index: list[tuple[int, int]]
) -> None:
    size = LOG.with_suffix(".index").stat().st_size
    log = _segment_copy(tmp_path, index=random.Random(7).randbytes(size))
    _assert_same_as_full_scan(log, full_json, _some_targets(offsets_index))


def test_empty_or_truncated_index_changes_nothing(
    tmp_path: Path, full_json: list[dict[str, Any]], offsets_index: list[tuple[int, int]]
) -> None:
    for variant, data in {"empty": b"", "odd": _index(offsets_index)[:-3], "zeros": b"\0" * 4096}.items():
        d = tmp_path / variant
        d.mkdir()
        _assert_same_as_full_scan(_segment_copy(d, index=data), full_json, _some_targets(offsets_index))


def test_index_pointing_past_the_file_is_ignored(
    tmp_path: Path, full_json: list[dict[str, Any]], offsets_index: list[tuple[int, int]]
) -> None:
    size = LOG.stat().st_size
    past = [(off, size + 4096 * i) for i, (off, _) in enumerate(offsets_index)]
    log = _segment_copy(tmp_path, index=_index(past))
    for target in _some_targets(offsets_index):
        assert seek_position(log, from_offset=target, from_time=None) == 0
    _assert_same_as_full_scan(log, full_json, _some_targets(offsets_index))
    # Entries that stop just short of the end (too little room for an entry header) are ignored too.
    log.with_suffix(".index").write_bytes(_index([(off, size - 5) for off, _ in offsets_index]))
    assert seek_position(log, from_offset=offsets_index[-1][0], from_time=None) == 0


def test_index_with_wrong_offsets_changes_nothing(
    tmp_path: Path, full_json: list[dict[str, Any]], offsets_index: list[tuple[int, int]]
) -> None:
    """Entries that claim smaller offsets point at batches past the target: the log refutes them."""
    for shift in (-1000, 1):
        d = tmp_path / f"shift{shift}"
        d.mkdir()
        log = _segment_copy(d, index=_index([(off + shift, pos) for off, pos in offsets_index]))
        _assert_same_as_full_scan(log, full_json, _some_targets(offsets_index))


def test_index_from_another_segment_changes_nothing(
    tmp_path: Path, full_json: list[dict[str, Any]], offsets_index: list[tuple[int, int]]
) -> None:
    """Positions that are batch starts, but of other batches (entries shuffled)."""
    shuffled = [pos for _, pos in offsets_index]
    random.Random(3).shuffle(shuffled)
    log = _segment_copy(
        tmp_path, index=_index([(off, pos) for (off, _), pos in zip(offsets_index, shuffled, strict=True)])
    )
    _assert_same_as_full_scan(log, full_json, _some_targets(offsets_index))


def test_index_pointing_inside_batches_changes_nothing(
    tmp_path: Path, full_json: list[dict[str, Any]], offsets_index: list[tuple[int, int]]
) -> None:
    log = _segment_copy(tmp_path, index=_index([(off, pos + 49) for off, pos in offsets_index]))
    _assert_same_as_full_scan(log, full_json, _some_targets(offsets_index))


def test_index_with_negative_positions_changes_nothing(
    tmp_path: Path, full_json: list[dict[str, Any]], scan: list[Batch]
) -> None:
    size = LOG.stat().st_size
    last = scan[-1]
    log = _segment_copy(tmp_path, index=_index([(last.lastOffset, last.position - size)]))
    _assert_same_as_full_scan(log, full_json, [last.baseOffset, last.lastOffset])


def test_garbage_timeindex_changes_nothing(
    tmp_path: Path, full_json: list[dict[str, Any]], scan: list[Batch], times_index: list[tuple[int, int]]
) -> None:
    log = _segment_copy(tmp_path, timeindex=struct.pack(">qi", 0, 10**8))
    for target in time_targets(times_index, scan)[::2]:
        hi = target + 60_000
        code, objs, _ = dump_json(log, "--from-time", str(target), "--to-time", str(hi), "--limit", "50")
        assert code == 0, target
        assert records(objs) == records(full_json, "timestamp", target, hi)[:50], target


def test_random_timeindex_does_not_crash(tmp_path: Path, times_index: list[tuple[int, int]]) -> None:
    """Whatever a damaged .timeindex says, the dump runs to its end without an exception."""
    size = LOG.with_suffix(".timeindex").stat().st_size
    log = _segment_copy(tmp_path, timeindex=random.Random(11).randbytes(size))
    code, _, stderr = dump_json(
        log, "--from-time", str(times_index[len(times_index) // 2][0]), "--limit", "5"
    )
    assert code == 0 and "Traceback" not in stderr
