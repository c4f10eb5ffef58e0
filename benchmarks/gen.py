"""The benchmark's segment files: generated once with kafka-python's builders, then cached.

Keys, values, timestamps and headers are a function of the seed and the absolute offset, so the same
seed gives the same bytes. A file is reused only if its JSON sidecar matches its size and generator
version; it is written to a temporary file and renamed, so an interrupted run leaves nothing half-made.
"""

from __future__ import annotations

import json
import math
import os
import random
import struct
import tempfile
import time
import zlib
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from benchmarks.harness import log

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
        SegmentSpec("big-200m", "v2 lz4, ~200 MB, repeated chunk", big_target_bytes=200 * 10**6),
        SegmentSpec("big-1g", "v2 lz4, ~1 GiB, repeated chunk", big_target_bytes=1 << 30),
    )
}
DEFAULT_FILES = ("v2-none", "v2-lz4", "v2-gzip", "v2-snappy", "v2-zstd", "v1-gzip", "v1-none", "mixed")
BIG_FILES = ("big-100m", "big-1g")
BIG_CHUNK_RECORDS = 100_000


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


@dataclass(frozen=True)
class PartitionInfo:
    """Two partition directories holding the same batches: one segment each (``many``), and all in
    one segment (``one``); every segment with an empty ``.index`` and a one-entry ``.timeindex``, as
    a broker leaves a rolled segment smaller than its index interval."""

    many: str
    one: str
    segments: int
    records: int
    bytes: int


def ensure_partitions(cache: Path, segments: int, per_batch: int, seed: int) -> PartitionInfo:
    """The cached pair of partition directories for these parameters, written first if needed."""
    root = cache / f"partitions-{segments}x{per_batch}-seed{seed}-g{GEN_VERSION}"
    meta = root / "info.json"
    if meta.is_file():
        try:
            return PartitionInfo(**json.loads(meta.read_text()))
        except (ValueError, TypeError):
            pass
    log(f"generating {root} ({segments:,} one-batch segments of {per_batch} records, and one segment) ...")
    cache.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=root.name, suffix=".tmp", dir=cache))
    try:
        src = RecordSource(seed)
        many, one = tmp / "many" / "topic-0", tmp / "one" / "topic-0"
        many.mkdir(parents=True)
        one.mkdir(parents=True)
        size = 0
        with open(one / f"{0:020d}.log", "wb") as whole:
            for i in range(segments):
                base = i * per_batch
                batch = build_v2(src, base, per_batch, LZ4, producer=True)
                whole.write(batch)
                size += len(batch)
                last = base + per_batch - 1
                _write_segment(many / f"{base:020d}", batch, src.timestamp(last), per_batch - 1)
        last = segments * per_batch - 1
        (one / f"{0:020d}.index").write_bytes(b"")
        (one / f"{0:020d}.timeindex").write_bytes(struct.pack(">qi", src.timestamp(last), last))
        info = PartitionInfo(
            str(root / "many" / "topic-0"),
            str(root / "one" / "topic-0"),
            segments,
            segments * per_batch,
            size,
        )
        (tmp / "info.json").write_text(json.dumps(asdict(info), indent=2) + "\n")
        os.replace(tmp, root)
    except BaseException:
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return info


def _write_segment(stem: Path, batch: bytes, max_timestamp: int, relative_offset: int) -> None:
    stem.with_suffix(".log").write_bytes(batch)
    stem.with_suffix(".index").write_bytes(b"")
    stem.with_suffix(".timeindex").write_bytes(struct.pack(">qi", max_timestamp, relative_offset))
