"""Preallocated ``.index`` and ``.timeindex`` files: large, zero-filled and sparse, as a broker with a
large ``segment.index.bytes`` leaves them. Their entries are read in bounded windows up to the first
all-zero entry after the first (Kafka's end of the real entries); the zero-filled rest is never read
whole, and where it must be looked at (``dump X.index``: is it all zeros?) only its data is read, not
its holes. Memory is asserted as a child process's own peak RSS on a 1 GiB pair.

The segment is written with kafka-python's builders; the index entries by hand, as a broker writes
them (one per batch here: its index interval is 4 KiB).
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kafka_dump.model import ProblemKind
from tests.batches import default_records, v2_batch

GIB = 1 << 30
BATCHES = 6
PER_BATCH = 5
BASE = 1000

# Spawns argv and reaps it with os.wait4: the child's own peak RSS (a child forked from pytest would
# start from pytest's high-water mark), its exit code and its output.
_WRAPPER = """
import os, sys
out = os.open(sys.argv[1], os.O_WRONLY)
pid = os.posix_spawn(sys.argv[2], sys.argv[2:], os.environ, file_actions=[(os.POSIX_SPAWN_DUP2, out, 1)])
_, status, ru = os.wait4(pid, 0)
print(ru.ru_maxrss, os.waitstatus_to_exitcode(status))
"""


def _run(tmp_path: Path, *args: str) -> tuple[int, int, str]:
    """(peak RSS in KiB, exit code, stdout) of ``python -m kafka_dump ARGS``."""
    out = tmp_path / "out.txt"
    out.write_bytes(b"")
    argv = [sys.executable, "-S", "-c", _WRAPPER, str(out), sys.executable, "-m", "kafka_dump", *args]
    run = subprocess.run(argv, capture_output=True, text=True, check=True, timeout=600)
    rss, code = map(int, run.stdout.split())
    return rss, code, out.read_text()


@pytest.fixture(scope="module")
def partition(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A segment of six batches beside a 1 GiB sparse ``.index`` and ``.timeindex`` holding an entry a batch."""
    part = tmp_path_factory.mktemp("sparse") / "topic-0"
    part.mkdir()
    log, index, times = bytearray(), bytearray(), bytearray()
    for i in range(BATCHES):
        base = BASE + i * PER_BATCH
        batch = v2_batch(
            default_records(PER_BATCH, seed=i), base_offset=base, timestamp=1_700_000_000_000 + base
        )
        last = base + PER_BATCH - 1
        index += struct.pack(">ii", last - BASE, len(log))
        times += struct.pack(">qi", 1_700_000_000_000 + last, last - BASE)
        log += batch
    stem = part / f"{BASE:020d}"
    stem.with_suffix(".log").write_bytes(log)
    for suffix, entries, size in ((".index", index, 8), (".timeindex", times, 12)):
        path = stem.with_suffix(suffix)
        with open(path, "wb") as f:
            f.write(entries)
            f.truncate(GIB - GIB % size)  # Kafka rounds segment.index.bytes down to whole entries
        if os.stat(path).st_blocks * 512 > 16 << 20:
            pytest.skip(f"{tmp_path_factory.getbasetemp()}: this file system makes no sparse files")
    return part


# Far below what reading the pair whole takes (2 GiB); kdump's own start is about 20-40 MiB.
MAX_RSS_KIB = 120 * 1024


def test_verify_crc_of_the_partition(partition: Path, tmp_path: Path) -> None:
    rss, code, out = _run(tmp_path, "verify-crc", "--format", "json", str(partition))
    assert code == 0, out
    summary = json.loads(out.splitlines()[-1])
    assert (summary["batches"], summary["indexFiles"], summary["indexProblems"]) == (BATCHES, 2, 0)
    assert rss < MAX_RSS_KIB, f"peak RSS {rss} KiB"


def test_dump_from_offset_seeks_with_the_index(partition: Path, tmp_path: Path) -> None:
    start = BASE + 4 * PER_BATCH + 2
    rss, code, out = _run(tmp_path, "dump", "--format", "json", "--from-offset", str(start), str(partition))
    assert code == 0, out
    batches = [json.loads(line) for line in out.splitlines()]
    assert [b["baseOffset"] for b in batches] == [BASE + 4 * PER_BATCH, BASE + 5 * PER_BATCH]
    assert batches[0]["records"][0]["offset"] == start
    assert rss < MAX_RSS_KIB, f"peak RSS {rss} KiB"


@pytest.mark.parametrize("suffix", [".index", ".timeindex"])
def test_dump_of_the_index_file(partition: Path, tmp_path: Path, suffix: str) -> None:
    path = partition / f"{BASE:020d}{suffix}"
    rss, code, out = _run(tmp_path, "dump", "--format", "json", str(path))
    lines = [json.loads(line) for line in out.splitlines()]
    entries = [line for line in lines if line.get("type") != "problem"]
    problems = [line for line in lines if line.get("type") == "problem"]
    assert len(entries) == BATCHES and code == 0, out
    size = GIB - GIB % (8 if suffix == ".index" else 12)
    end = BATCHES * (8 if suffix == ".index" else 12)
    assert [(p["kind"], p["position"], p["length"]) for p in problems] == [("zero-tail", end, size - end)]
    assert rss < MAX_RSS_KIB, f"peak RSS {rss} KiB"


def test_a_bad_entry_in_the_preallocated_space_is_found(tmp_path: Path) -> None:
    """Data past the end of the entries, in a sparse file: its data region is read (not the holes),
    and the bytes that are not zero are reported."""
    part = tmp_path / "topic-0"
    part.mkdir()
    log = v2_batch(default_records(3), base_offset=0)
    (part / f"{0:020d}.log").write_bytes(log)
    index = part / f"{0:020d}.index"
    with open(index, "wb") as f:
        f.write(struct.pack(">ii", 2, 0))
        f.seek(GIB // 2)
        f.write(struct.pack(">ii", 7, 99))
        f.truncate(GIB)
    rss, code, out = _run(tmp_path, "dump", "--format", "json", str(index))
    assert code == 1, out
    problems = [json.loads(line) for line in out.splitlines() if '"type":"problem"' in line]
    assert [(p["kind"], p["position"], p["length"]) for p in problems] == [("corrupt", 8, GIB - 8)]
    assert rss < MAX_RSS_KIB, f"peak RSS {rss} KiB"


def test_the_holes_are_not_read(partition: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``dump X.index`` looks at the preallocated end only where the file holds data: of a 1 GiB
    sparse index, a few windows are read, not the gigabyte of zeros."""
    import builtins

    from kafka_dump.log import index as index_module
    from kafka_dump.log import sidefiles

    read = [0]
    real_open = builtins.open

    class Counting:
        def __init__(self, f: Any) -> None:
            self._f = f

        def read(self, n: int = -1) -> bytes:
            data: bytes = self._f.read(n)
            read[0] += len(data)
            return data

        def __getattr__(self, name: str) -> Any:
            return getattr(self._f, name)

        def __enter__(self) -> Counting:
            return self

        def __exit__(self, *exc: object) -> None:
            self._f.close()

    def counting_open(*args: Any, **kwargs: Any) -> Any:
        return Counting(real_open(*args, **kwargs))

    monkeypatch.setattr(sidefiles, "open", counting_open, raising=False)
    monkeypatch.setattr(index_module, "open", counting_open, raising=False)
    items = list(sidefiles.read_side_file(partition / f"{BASE:020d}.index"))
    assert len(items) == BATCHES + 1 and items[-1].kind is ProblemKind.ZERO_TAIL  # type: ignore[union-attr]
    assert read[0] < 16 << 20, f"{read[0]:,} bytes read"
