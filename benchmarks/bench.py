#!/usr/bin/env python3
"""Benchmark kdump's decoder and CLI against kafka-python and aiokafka on large generated segments.

Run it as a script (``python benchmarks/bench.py --help``); it is not a module of kdump and must never be
imported by the test suite. Standard library only, plus kafka-python (needed to *write* the segments) and
aiokafka, both imported lazily so that a missing peer is reported instead of crashing the run.

What is timed, per segment file:

* in process (median of ``--repeat`` rounds, one run of each decoder per round so that the machine's
  drift falls on all alike, ``gc.collect()`` before each): kdump's ``read_segment`` and the
  two peers' ``MemoryRecords`` readers, each iterating every record and touching every field. Every one
  of them is timed *including* reading the file from the (warm) page cache: kdump opens the path
  itself, the peers get ``Path.read_bytes()`` inside the timed region. The cost of that read alone is
  printed as the "read file only" line, so it can be subtracted by eye.
* as whole subprocesses (wall clock median of ``--repeat`` runs, interpreter start-up included): ``kdump
  dump --format json --payload base64``, ``kdump dump --batches-only`` and, when that command exists,
  ``kdump verify-crc --deep``, stdout to /dev/null. Their peak RSS comes from ``os.wait4``.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import importlib.machinery
import json
import math
import os
import platform
import random
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

# Bump when the bytes a generator writes change, so stale cache files are not reused.
GEN_VERSION = 1
DEFAULT_SEED = 20240229
DEFAULT_CACHE = Path("~/.cache/kdump-bench").expanduser()
BASE_TIMESTAMP_MS = 1_700_000_000_000
VALUE_SIZE = 100
PRODUCER_ID = 4242
HUGE = 1 << 30  # builder "batch_size": never let a builder refuse an append

# Codec ids, as in the attributes' low three bits.
NONE, GZIP, SNAPPY, LZ4, ZSTD = 0, 1, 2, 3, 4
CODEC_NAMES = {NONE: "none", GZIP: "gzip", SNAPPY: "snappy", LZ4: "lz4", ZSTD: "zstd"}

# One chunk of a segment plan: (magic, codec, records per batch/wrapper). An uncompressed v0/v1 chunk is
# written as that many standalone messages (one log entry each), as a v0/v1 log really holds them.
Chunk = tuple[int, int, int]

# The "mixed" file cycles through this: every magic, every codec each magic supports, varied sizes.
# v0 + lz4 is left out on purpose: Kafka 0.8-0.9 wrote it with a broken LZ4 frame header checksum
# and neither peer is a fair reference for it.
MIXED_PLAN: tuple[Chunk, ...] = (
    (2, NONE, 500),
    (1, GZIP, 100),
    (0, NONE, 50),
    (2, LZ4, 800),
    (1, SNAPPY, 100),
    (2, ZSTD, 600),
    (0, GZIP, 100),
    (1, NONE, 50),
    (2, SNAPPY, 500),
    (1, LZ4, 100),
    (2, GZIP, 400),
    (0, SNAPPY, 100),
)


@dataclass(frozen=True)
class SegmentSpec:
    """A named benchmark file: what it holds and how it is produced."""

    name: str
    description: str
    plan: tuple[Chunk, ...] = ()  # cycled until --records records are written
    big_target_bytes: int = 0  # > 0: a repeated v2 lz4 chunk of about this size, ignores --records


SPECS: dict[str, SegmentSpec] = {
    s.name: s
    for s in (
        SegmentSpec("v2-none", "v2, uncompressed, 1000 records per batch", ((2, NONE, 1000),)),
        SegmentSpec("v2-lz4", "v2, lz4, 1000 records per batch", ((2, LZ4, 1000),)),
        SegmentSpec("v2-gzip", "v2, gzip, 1000 records per batch", ((2, GZIP, 1000),)),
        SegmentSpec("v2-snappy", "v2, snappy, 1000 records per batch", ((2, SNAPPY, 1000),)),
        SegmentSpec("v2-zstd", "v2, zstd, 1000 records per batch", ((2, ZSTD, 1000),)),
        SegmentSpec("v1-gzip", "v1, gzip wrappers of 100 messages", ((1, GZIP, 100),)),
        SegmentSpec("v1-none", "v1, uncompressed: one message per log entry", ((1, NONE, 1),)),
        SegmentSpec("mixed", "v0/v1/v2 interleaved, every codec", MIXED_PLAN),
        SegmentSpec("big-100m", "v2 lz4, ~100 MB, repeated chunk", big_target_bytes=100 * 10**6),
        SegmentSpec("big-1g", "v2 lz4, ~1 GiB, repeated chunk", big_target_bytes=1 << 30),
    )
}
DEFAULT_FILES = ("v2-none", "v2-lz4", "v2-gzip", "v2-snappy", "v2-zstd", "v1-gzip", "v1-none", "mixed")
BIG_FILES = ("big-100m", "big-1g")
BIG_CHUNK_RECORDS = 100_000


# --------------------------------------------------------------------------------------------- generation


def log(msg: str) -> None:
    """Progress and notes go to stderr, so stdout holds only the results."""
    print(msg, file=sys.stderr, flush=True)


@dataclass(frozen=True)
class SegmentInfo:
    """A generated file and what the generator knows about it (stored next to it as JSON)."""

    name: str
    path: str
    bytes: int
    records: int
    entries: int  # log entries: v2 batches, v0/v1 wrappers and standalone messages
    seed: int
    gen_version: int


class RecordSource:
    """Deterministic keys, ~compressible 100-byte values, timestamps and headers, by absolute offset."""

    def __init__(self, seed: int) -> None:
        rng = random.Random(seed)
        words = [
            "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9)))
            for _ in range(400)
        ]
        parts: list[str] = []
        size = 0
        while size < 1 << 20:
            w = rng.choice(words) if rng.random() < 0.85 else str(rng.randrange(10**6))
            parts.append(w)
            size += len(w) + 1
        # Text drawn from a small vocabulary: LZ4 gets roughly 2x on it, gzip more; realistic-ish JSON logs.
        self._pool = " ".join(parts).encode()
        self._limit = len(self._pool) - VALUE_SIZE
        self._rng = random.Random(seed + 1)

    def value(self) -> bytes:
        """The next value: 100 bytes sliced from the pool at a pseudo-random position."""
        o = self._rng.randrange(self._limit)
        return self._pool[o : o + VALUE_SIZE]

    @staticmethod
    def key(offset: int) -> bytes:
        return b"k%08d" % offset

    @staticmethod
    def timestamp(offset: int) -> int:
        return BASE_TIMESTAMP_MS + offset // 10

    @staticmethod
    def headers(offset: int) -> list[tuple[str, bytes | None]]:
        """One header on every 10th v2 record, two on every 50th."""
        if offset % 50 == 0:
            return [("trace-id", b"%016x" % (offset * 2654435761 % (1 << 64))), ("source", b"bench")]
        if offset % 10 == 0:
            return [("trace-id", b"%016x" % (offset * 2654435761 % (1 << 64)))]
        return []


def build_v2(src: RecordSource, base: int, count: int, codec: int, producer: bool) -> bytes:
    """One v2 RecordBatch holding offsets base..base+count-1, as a log entry."""
    from kafka.record.default_records import DefaultRecordBatchBuilder

    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=codec,
        is_transactional=False,
        producer_id=PRODUCER_ID if producer else -1,
        producer_epoch=0 if producer else -1,
        base_sequence=(base % (1 << 31)) if producer else -1,
        batch_size=HUGE,
    )
    for delta in range(count):
        off = base + delta
        builder.append(delta, src.timestamp(off), src.key(off), src.value(), src.headers(off))
    buf = builder.build()
    # The builder writes baseOffset 0 (the broker assigns it); the CRC starts at attributes, so patching
    # baseOffset and partitionLeaderEpoch is safe.
    struct.pack_into(">qii", buf, 0, base, len(buf) - 12, 7)
    return bytes(buf)


def build_legacy(src: RecordSource, base: int, count: int, magic: int, codec: int) -> tuple[bytes, int]:
    """v0/v1 messages for offsets base..base+count-1: one compressed wrapper, or `count` plain entries.

    Returns the bytes and the number of log entries they make.
    """
    from kafka.record.legacy_records import LegacyRecordBatchBuilder

    builder = LegacyRecordBatchBuilder(magic=magic, compression_type=codec, batch_size=HUGE)
    for i in range(count):
        off = base + i
        # Inside a v1 wrapper offsets are relative (KIP-31); v0 inner and all standalone ones are absolute.
        inner = i if (codec != NONE and magic == 1) else off
        builder.append(inner, src.timestamp(off), src.key(off), src.value())
    buf = builder.build()
    if codec == NONE:
        return bytes(buf), count
    # A wrapper's offset is its last inner record's absolute offset; the builder writes 0. The offset is
    # outside the CRC. For v1, also give the wrapper the max inner timestamp (as brokers do) and re-CRC.
    struct.pack_into(">q", buf, 0, base + count - 1)
    if magic == 1:
        struct.pack_into(">q", buf, 18, src.timestamp(base + count - 1))
        struct.pack_into(">I", buf, 12, zlib.crc32(memoryview(buf)[16:]) & 0xFFFFFFFF)
    return bytes(buf), 1


def cache_path(cache: Path, spec: SegmentSpec, records: int, seed: int) -> Path:
    """The cache file name encodes everything that changes its bytes."""
    if spec.big_target_bytes:
        return cache / f"{spec.name}-seed{seed}-g{GEN_VERSION}.log"
    return cache / f"{spec.name}-{records}r-seed{seed}-g{GEN_VERSION}.log"


def load_cached(path: Path) -> SegmentInfo | None:
    """The SegmentInfo of a complete cached file, or None (files are written atomically)."""
    meta = path.with_suffix(".json")
    if not (path.is_file() and meta.is_file()):
        return None
    try:
        info = SegmentInfo(**json.loads(meta.read_text()))
    except (ValueError, TypeError):
        return None
    if info.bytes != path.stat().st_size or info.gen_version != GEN_VERSION:
        return None
    return info


class Progress:
    """Prints `done/total` about every 5%, with a rate."""

    def __init__(self, label: str, total: int) -> None:
        self.label, self.total = label, total
        self.step = max(1, total // 20)
        self.next = self.step
        self.t0 = time.perf_counter()

    def update(self, done: int) -> None:
        if done >= self.next or done == self.total:
            dt = time.perf_counter() - self.t0
            rate = done / dt if dt > 0 else 0.0
            log(f"  {self.label}: {done:,}/{self.total:,} records ({rate:,.0f}/s)")
            self.next = (done // self.step + 1) * self.step


def write_plan(
    out: Any, src: RecordSource, plan: Sequence[Chunk], records: int, label: str
) -> tuple[int, int]:
    """Write `records` records following `plan` (cycled) to `out`; returns (bytes, entries)."""
    written = entries = offset = 0
    progress = Progress(label, records)
    i = 0
    while offset < records:
        magic, codec, per = plan[i % len(plan)]
        i += 1
        n = min(per, records - offset)
        if magic >= 2:
            # Every other v2 batch of the mixed file has no producer; the uniform ones always have one.
            data, k = build_v2(src, offset, n, codec, producer=(len(plan) == 1 or i % 4 != 0)), 1
        else:
            data, k = build_legacy(src, offset, n, magic, codec)
        out.write(data)
        written += len(data)
        entries += k
        offset += n
        progress.update(offset)
    return written, entries


def write_big(out: Any, src: RecordSource, target: int, label: str) -> tuple[int, int, int]:
    """A v2 lz4 chunk repeated with rewritten baseOffsets up to `target` bytes; (bytes, records, entries)."""
    per = 1000
    batches = [build_v2(src, base, per, LZ4, producer=False) for base in range(0, BIG_CHUNK_RECORDS, per)]
    chunk_bytes = sum(map(len, batches))
    copies = math.ceil(target / chunk_bytes)
    log(f"  {label}: chunk of {BIG_CHUNK_RECORDS:,} records = {chunk_bytes:,} bytes, {copies} copies")
    written = 0
    for c in range(copies):
        buf = bytearray()
        for j, batch in enumerate(batches):
            start = len(buf)
            buf += batch
            struct.pack_into(">q", buf, start, c * BIG_CHUNK_RECORDS + j * per)
        out.write(buf)
        written += len(buf)
        if (c + 1) % max(1, copies // 10) == 0 or c + 1 == copies:
            log(f"  {label}: {written / 1e6:,.0f}/{target / 1e6:,.0f} MB")
    return written, copies * BIG_CHUNK_RECORDS, copies * len(batches)


def ensure_segment(cache: Path, spec: SegmentSpec, records: int, seed: int) -> SegmentInfo:
    """Return the cached segment for these parameters, generating it first if needed."""
    path = cache_path(cache, spec, records, seed)
    info = load_cached(path)
    if info is not None:
        return info
    cache.mkdir(parents=True, exist_ok=True)
    log(f"generating {path} ({spec.description}) ...")
    t0 = time.perf_counter()
    src = RecordSource(seed)
    fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=cache)
    umask = os.umask(0)
    os.umask(umask)
    os.fchmod(fd, 0o666 & ~umask)  # mkstemp makes it 0600; give it a normal file's mode
    try:
        with os.fdopen(fd, "wb", buffering=1 << 20) as out:
            if spec.big_target_bytes:
                size, records, entries = write_big(out, src, spec.big_target_bytes, spec.name)
            else:
                size, entries = write_plan(out, src, spec.plan, records, spec.name)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    info = SegmentInfo(spec.name, str(path), size, records, entries, seed, GEN_VERSION)
    path.with_suffix(".json").write_text(json.dumps(asdict(info), indent=2) + "\n")
    log(f"  done in {time.perf_counter() - t0:.1f}s: {size:,} bytes, {entries:,} entries")
    return info


# ------------------------------------------------------------------------------------------- measurement


@dataclass
class Result:
    """One measured line of the table."""

    label: str
    kind: str  # "read", "decoder", "cli"
    times_s: list[float] = field(default_factory=list)
    median_s: float | None = None
    records_per_s: float | None = None
    mb_per_s: float | None = None
    peak_rss_kib: int | None = None
    records_seen: int | None = None
    note: str | None = None  # an error, or something the reader should know
    ratios: dict[str, float] = field(default_factory=dict)


Decoder = Callable[[str], int]  # path -> number of records seen


@dataclass(frozen=True)
class Contender:
    """An in-process decoder to time; `fallback` is timed in its place on files where it fails."""

    label: str
    fn: Decoder
    fallback: tuple[str, Decoder] | None = None


def kdump_decoder() -> tuple[Decoder | None, str]:
    """kdump's in-process decoder, or None and why not."""
    try:
        from kafka_dump.segment import read_segment
    except Exception as e:
        return None, f"kafka_dump.segment.read_segment not importable ({type(e).__name__}: {e})"

    def run(path: str) -> int:
        n = problems = 0
        for item in read_segment(path):
            recs = getattr(item, "records", None)
            if recs is None:
                problems += 1
                continue
            for r in recs:
                r.offset
                r.timestamp
                r.key
                r.value
                r.sequence
                for h in r.headers:
                    h.key
                    h.value
                n += 1
        if problems:
            raise RuntimeError(f"{problems} Problem(s) reported on a file that should be clean")
        return n

    return run, "kafka_dump.segment.read_segment"


def touch_all(mr: Any) -> int:
    """The peers' loop over one MemoryRecords: every batch, every record, every field."""
    n = 0
    while (b := mr.next_batch()) is not None:
        for r in b:
            r.offset
            r.timestamp
            r.key
            r.value
            for hk, hv in r.headers:
                hk
                hv
            n += 1
    return n


def iterate_memory_records(records_cls: Any, path: str) -> int:
    """Read the file, wrap it whole in one MemoryRecords, touch everything."""
    return touch_all(records_cls(Path(path).read_bytes()))


def magic_runs(data: bytes) -> list[tuple[int, int]]:
    """(start, end) of each maximal run of log entries sharing one magic byte."""
    runs: list[tuple[int, int]] = []
    pos = start = 0
    current = -1
    end = len(data)
    unpack = struct.unpack_from
    while pos + 17 <= end:
        magic = data[pos + 16]
        if magic != current:
            if current != -1:
                runs.append((start, pos))
            start, current = pos, magic
        pos += 12 + unpack(">i", data, pos + 8)[0]
    runs.append((start, end))
    return runs


def iterate_by_magic_runs(records_cls: Any, path: str) -> int:
    """Like iterate_memory_records, but one MemoryRecords per run of equal magic (scan and copies timed).

    aiokafka's compiled MemoryRecords picks the batch class from the first entry's magic and keeps it
    for the whole buffer (a fetch response never mixes magics), so on a mixed segment it must be fed
    one homogeneous slice at a time.
    """
    data = Path(path).read_bytes()
    return sum(touch_all(records_cls(data[s:e])) for s, e in magic_runs(data))


def kafka_python_decoder() -> tuple[Decoder | None, str]:
    """kafka-python's MemoryRecords (pure Python), or None and why not."""
    try:
        import kafka
        from kafka.record import MemoryRecords
    except Exception as e:
        return None, f"kafka-python not importable ({type(e).__name__}: {e})"
    return (lambda p: iterate_memory_records(MemoryRecords, p)), f"kafka-python {kafka.__version__}"


def aiokafka_records_class() -> tuple[Any, str]:
    """aiokafka's compiled MemoryRecords class (the pure one, loudly, if not built), and which it is."""
    try:
        import aiokafka
    except Exception as e:
        return None, f"aiokafka not importable ({type(e).__name__}: {e})"
    try:
        from aiokafka.record._crecords import MemoryRecords
        from aiokafka.record._crecords import memory_records as mod

        origin = mod.__file__ or "?"
        compiled = origin.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))
        how = f"compiled: {Path(origin).name}" if compiled else f"NOT compiled: {origin}"
    except ImportError as e:
        from aiokafka.record.memory_records import _MemoryRecordsPy as MemoryRecords

        how = f"PURE PYTHON fallback, _crecords missing ({e})"
    return MemoryRecords, f"aiokafka {aiokafka.__version__} ({how})"


def read_only(path: str) -> int:
    """Just read the file: the part of every in-process measurement that is not decoding."""
    return len(Path(path).read_bytes())


def time_in_process(fn: Decoder, path: str, repeat: int) -> tuple[list[float], int]:
    """Run fn(path) `repeat` times after gc.collect(); (wall times, what the last run returned)."""
    times: list[float] = []
    n = 0
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        n = fn(path)
        times.append(time.perf_counter() - t0)
    return times, n


@dataclass
class ChildRun:
    """One finished subprocess."""

    wall_s: float
    returncode: int
    maxrss_kib: int
    stderr_tail: str


# Runs in a small `python -S` process: spawns argv, waits for it with os.wait4, writes
# "wall_s maxrss exitcode" to the file named by argv[1]. See run_child for why the detour.
_SPAWN_WRAPPER = """
import os, sys, time
out, argv = sys.argv[1], sys.argv[2:]
t0 = time.perf_counter()
pid = os.posix_spawn(argv[0], argv, os.environ)
_, status, ru = os.wait4(pid, 0)
wall = time.perf_counter() - t0
with open(out, "w") as f:
    f.write("%r %d %d" % (wall, ru.ru_maxrss, os.waitstatus_to_exitcode(status)))
"""


def run_child(argv: Sequence[str]) -> ChildRun:
    """Run argv with stdout to /dev/null; its wall time and its own peak RSS (from os.wait4).

    Not spawned from this process directly: on Linux a child's ru_maxrss starts from the high-water
    RSS of the address space it was forked/vforked from, i.e. this benchmark's own peak (which holds
    whole files for the peers). A small wrapper interpreter spawns and reaps it instead, so the
    figure is the child's, with the wrapper's ~10 MiB as a floor. The wall time is also taken there.
    """
    with open(os.devnull, "wb") as devnull, tempfile.TemporaryFile() as err:
        fd, result = tempfile.mkstemp(prefix="kdump-bench-", suffix=".rusage")
        os.close(fd)
        try:
            wrapper = [sys.executable, "-S", "-c", _SPAWN_WRAPPER, result, *argv]
            rc = subprocess.run(wrapper, stdin=subprocess.DEVNULL, stdout=devnull, stderr=err).returncode
            fields = Path(result).read_text().split()
        finally:
            Path(result).unlink(missing_ok=True)
        err.seek(0)
        tail = err.read()[-1500:].decode("utf-8", "replace").strip()
    if rc != 0 or len(fields) != 3:
        return ChildRun(0.0, rc or 1, 0, tail or f"spawn wrapper failed (exit {rc})")
    wall, maxrss, code = float(fields[0]), int(fields[1]), int(fields[2])
    # ru_maxrss is in KiB on Linux, bytes on macOS.
    rss = maxrss // 1024 if sys.platform == "darwin" else maxrss
    return ChildRun(wall, code, rss, tail)


def kdump_exe() -> Path:
    """The kdump console script of this interpreter's environment."""
    return Path(sys.executable).parent / "kdump"


def cli_commands() -> tuple[list[tuple[str, list[str]]], list[str]]:
    """The CLI lines to time (label, argv without FILE), and notes about what was left out and why."""
    exe = kdump_exe()
    notes: list[str] = []
    if not exe.exists():
        return [], [f"no {exe}: CLI measurements skipped (pip install -e . in this environment)"]
    probe = run_child([str(exe), "--help"])
    if probe.returncode != 0:
        last = probe.stderr_tail.splitlines()[-1:] or ["?"]
        return [], [f"`kdump --help` exits {probe.returncode} ({last[0]}): CLI measurements skipped"]
    cmds: list[tuple[str, list[str]]] = []
    if run_child([str(exe), "dump", "--help"]).returncode == 0:
        cmds.append(
            (
                "kdump dump --format json --payload base64",
                [str(exe), "dump", "--format", "json", "--payload", "base64"],
            )
        )
        cmds.append(("kdump dump --batches-only", [str(exe), "dump", "--batches-only"]))
    else:
        notes.append("`kdump dump --help` fails: dump measurements skipped")
    if run_child([str(exe), "verify-crc", "--help"]).returncode == 0:
        cmds.append(("kdump verify-crc --deep", [str(exe), "verify-crc", "--deep"]))
    else:
        notes.append("`kdump verify-crc --help` fails: verify-crc not measured (command not there yet)")
    return cmds, notes


def startup_time(repeat: int) -> ChildRun | None:
    """Median wall time (and peak RSS) of `kdump --help`: the fixed cost inside every CLI line."""
    exe = kdump_exe()
    if not exe.exists():
        return None
    runs = [run_child([str(exe), "--help"]) for _ in range(max(3, repeat))]
    if any(r.returncode for r in runs):
        return None
    return ChildRun(statistics.median(r.wall_s for r in runs), 0, max(r.maxrss_kib for r in runs), "")


def finish(res: Result, info: SegmentInfo) -> Result:
    """Fill median and rates from the raw times."""
    if res.times_s:
        res.median_s = statistics.median(res.times_s)
        if res.median_s > 0:
            res.mb_per_s = info.bytes / 1e6 / res.median_s
            if res.kind != "read":
                res.records_per_s = info.records / res.median_s
    return res


def time_decoder(info: SegmentInfo, label: str, fn: Decoder, repeat: int) -> Result:
    """One in-process line; a decoder that raises is a finding, not a crash."""
    res = Result(label, "decoder")
    log(f"  {info.name}: {label} x{repeat}")
    try:
        res.times_s, res.records_seen = time_in_process(fn, info.path, repeat)
        if res.records_seen != info.records:
            res.note = f"saw {res.records_seen:,} records, expected {info.records:,}"
    except Exception as e:
        res.times_s = []
        msg = str(e) if str(e).startswith(type(e).__name__) else f"{type(e).__name__}: {e}"
        res.note = f"failed: {msg}"[:300]
    return finish(res, info)


def bench_file(
    info: SegmentInfo,
    contenders: list[Contender],
    cli: list[tuple[str, list[str]]],
    repeat: int,
) -> list[Result]:
    """All measurements on one file, in a fixed order."""
    results: list[Result] = []
    read_only(info.path)  # warm the page cache for everyone
    times, _ = time_in_process(read_only, info.path, repeat)
    results.append(finish(Result("read file only (in process)", "read", times), info))

    # Which line stands for each peer in the ratios: its fallback's, if the main one failed.
    peer_line = {"kafka-python": KP_LABEL, "aiokafka": AIO_LABEL}
    # Round-robin: one run of each decoder per round, so that a slow spell of the machine (a shared
    # VM drifts by tens of percent over minutes) falls on every decoder alike, not on one.
    rounds: dict[str, Result] = {}
    fns: dict[str, Decoder] = {}
    for c in contenders:
        first = time_decoder(info, c.label, c.fn, 1)  # round one; a failure shows here
        if first.median_s is not None:
            rounds[c.label], fns[c.label] = first, c.fn
            continue
        results.append(first)
        if c.fallback is not None:
            label, fn = c.fallback
            rounds[label], fns[label] = time_decoder(info, label, fn, 1), fn
            for short, line in peer_line.items():
                if line == c.label:
                    peer_line[short] = label
    for _ in range(repeat - 1):
        for label, fn in fns.items():
            more = time_decoder(info, label, fn, 1)
            rounds[label].times_s += more.times_s
            rounds[label].note = rounds[label].note or more.note
    results.extend(finish(res, info) for res in rounds.values())

    for label, argv in cli:
        res = Result(label + " (subprocess)", "cli")
        log(f"  {info.name}: {label} x{repeat}")
        runs = [run_child([*argv, info.path]) for _ in range(repeat)]
        bad = [r for r in runs if r.returncode != 0]
        if bad:
            last = bad[0].stderr_tail.splitlines()[-1:] or ["(no stderr)"]
            res.note = f"exit {bad[0].returncode}: {last[0]}"[:300]
        else:
            res.times_s = [r.wall_s for r in runs]
            res.peak_rss_kib = max(r.maxrss_kib for r in runs)
        results.append(finish(res, info))

    # Ratios: this line's records/s divided by a peer's records/s (> 1 means kdump is faster).
    rate = {r.label: r.records_per_s for r in results if r.records_per_s}
    for r in results:
        if not r.records_per_s:
            continue
        if r.label == KDUMP_LABEL:
            wanted = ["kafka-python", "aiokafka"]
        elif r.label.startswith("kdump dump --format json"):
            wanted = ["kafka-python"]
        else:
            continue
        for short in wanted:
            peer_rate = rate.get(peer_line[short])
            if peer_rate:
                key = short if peer_line[short] in (KP_LABEL, AIO_LABEL) else f"{short} (per-run)"
                r.ratios[key] = r.records_per_s / peer_rate
    return results


KDUMP_LABEL = "kdump read_segment (in process)"
KP_LABEL = "kafka-python MemoryRecords (in process)"
AIO_LABEL = "aiokafka _crecords.MemoryRecords (in process)"
AIO_RUNS_LABEL = "aiokafka, one MemoryRecords per equal-magic run (in process)"


# ------------------------------------------------------------------------------------------------ output


def fmt(v: float | None, spec: str) -> str:
    return "-" if v is None else format(v, spec)


def print_table(info: SegmentInfo, spec: SegmentSpec, results: list[Result]) -> None:
    """One table per file."""
    print()
    print(
        f"== {info.name}: {spec.description}; {info.records:,} records, {info.entries:,} log entries, "
        f"{info.bytes / 1e6:,.1f} MB"
    )
    print(f"   {info.path}")
    head = f"{'measurement':<62} {'median s':>9} {'records/s':>12} {'MB/s':>8} {'peak RSS':>10}  ratios"
    print(head)
    print("-" * len(head))
    for r in results:
        rss = f"{r.peak_rss_kib / 1024:,.0f} MiB" if r.peak_rss_kib is not None else "-"
        ratios = "  ".join(f"{v:.2f}x {k}" for k, v in r.ratios.items())
        print(
            f"{r.label:<62} {fmt(r.median_s, '.3f'):>9} {fmt(r.records_per_s, ',.0f'):>12} "
            f"{fmt(r.mb_per_s, ',.1f'):>8} {rss:>10}  {ratios}"
        )
        if r.note:
            print(f"    ! {r.note}")


def environment(decoder_notes: dict[str, str]) -> dict[str, Any]:
    """Versions and switches that change the numbers."""
    env: dict[str, Any] = {
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "executable": sys.executable,
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        **decoder_notes,
    }
    try:
        import kafka_dump

        env["kdump"] = getattr(kafka_dump, "__version__", "?")
        try:
            fmt_mod = importlib.import_module("kafka_dump.format")
            twin = getattr(fmt_mod, "ACTIVE_TWIN", None)
            env["kdump_active_twin"] = (
                twin if twin is not None else "(kafka_dump.format.ACTIVE_TWIN not defined)"
            )
        except Exception as e:
            env["kdump_active_twin"] = f"(kafka_dump.format not importable: {e})"
    except Exception as e:
        env["kdump"] = f"not importable: {e}"
    return env


# -------------------------------------------------------------------------------------------------- main


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description="Time kdump against kafka-python and aiokafka on generated Kafka log segments.",
    )
    p.add_argument(
        "--cache",
        type=Path,
        default=DEFAULT_CACHE,
        help="where generated segments are kept (default: %(default)s)",
    )
    p.add_argument(
        "--records", type=int, default=1_000_000, help="records per generated file (default: %(default)s)"
    )
    p.add_argument(
        "--repeat",
        type=int,
        default=5,
        help="runs per measurement; the median is reported (default: %(default)s)",
    )
    p.add_argument("--seed", type=int, default=DEFAULT_SEED, help="generator seed (default: %(default)s)")
    p.add_argument(
        "--big", action="store_true", help="also the ~100 MB and ~1 GiB v2 lz4 files (RSS of streaming)"
    )
    p.add_argument("--only", metavar="NAME[,NAME]", help=f"only these files, of: {', '.join(SPECS)}")
    p.add_argument("--skip-peers", action="store_true", help="do not time kafka-python and aiokafka")
    p.add_argument("--skip-kdump", action="store_true", help="do not time kdump (decoder nor CLI)")
    p.add_argument("--generate-only", action="store_true", help="make sure the files exist, then stop")
    p.add_argument("--json", type=Path, metavar="OUT", help="also write all results to this JSON file")
    args = p.parse_args(argv)
    if args.records < 1 or args.repeat < 1:
        p.error("--records and --repeat must be at least 1")
    if args.only:
        names = [n.strip() for n in args.only.split(",") if n.strip()]
        unknown = [n for n in names if n not in SPECS]
        if unknown:
            p.error(f"unknown file name(s) {', '.join(unknown)}; known: {', '.join(SPECS)}")
        args.files = names
    else:
        args.files = list(DEFAULT_FILES) + (list(BIG_FILES) if args.big else [])
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        importlib.import_module("kafka.record.default_records")
    except Exception as e:
        log(f"kafka-python is needed to generate the segments: {e}\n  pip install -e '.[bench]'")
        return 2

    infos = [ensure_segment(args.cache, SPECS[name], args.records, args.seed) for name in args.files]
    if args.generate_only:
        for info in infos:
            print(f"{info.name}: {info.path} ({info.bytes:,} bytes, {info.records:,} records)")
        return 0

    contenders: list[Contender] = []
    notes: dict[str, str] = {}
    skipped: list[str] = []
    if args.skip_kdump:
        skipped.append("kdump: skipped (--skip-kdump)")
    else:
        fn, why = kdump_decoder()
        notes["kdump_decoder"] = why
        if fn:
            contenders.append(Contender(KDUMP_LABEL, fn))
        else:
            skipped.append(f"kdump decoder: SKIPPED, {why}")
    if args.skip_peers:
        skipped.append("peers: skipped (--skip-peers)")
    else:
        kp, why = kafka_python_decoder()
        notes["kafka-python"] = why
        if kp:
            contenders.append(Contender(KP_LABEL, kp))
        else:
            skipped.append(f"kafka-python: SKIPPED, {why}")
        aio_cls, why = aiokafka_records_class()
        notes["aiokafka"] = why
        if aio_cls is not None:
            contenders.append(
                Contender(
                    AIO_LABEL,
                    lambda p: iterate_memory_records(aio_cls, p),
                    (AIO_RUNS_LABEL, lambda p: iterate_by_magic_runs(aio_cls, p)),
                )
            )
        else:
            skipped.append(f"aiokafka: SKIPPED, {why}")
    cli: list[tuple[str, list[str]]] = []
    startup: ChildRun | None = None
    if not args.skip_kdump:
        cli, cli_notes = cli_commands()
        skipped += cli_notes
        if cli:
            startup = startup_time(args.repeat)

    env = environment(notes)
    print("kdump benchmark")
    for k, v in env.items():
        print(f"  {k}: {v}")
    if startup:
        print(f"  kdump --help start-up: {startup.wall_s:.3f}s, {startup.maxrss_kib / 1024:.0f} MiB peak RSS")
    print(
        f"  repeat: {args.repeat} (median), in-process times INCLUDE reading the file from a warm page cache "
        "for every decoder; subprocess times are wall clock including interpreter start-up"
    )
    for s in skipped:
        print(f"  ! {s}")

    report: dict[str, Any] = {
        "environment": env,
        "settings": {
            "records": args.records,
            "repeat": args.repeat,
            "seed": args.seed,
            "gen_version": GEN_VERSION,
        },
        "kdump_startup_s": startup.wall_s if startup else None,
        "skipped": skipped,
        "files": [],
    }
    for info in infos:
        results = bench_file(info, contenders, cli, args.repeat)
        print_table(info, SPECS[info.name], results)
        sys.stdout.flush()
        report["files"].append({**asdict(info), "results": [asdict(r) for r in results]})

    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
        log(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
