"""The statistics walk over runs of compressed v0/v1 wrappers (``gather_legacy_wrappers``): the
compiled twin agrees with the pure reference on valid, damaged and hostile input, and ``kdump
stats`` gives the same figures whether it walks the wrappers or decodes them.
"""

from __future__ import annotations

import random
import struct
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.record.legacy_records import LegacyRecordBatchBuilder

from kafka_dump.analysis.histogram import TimeHistogram
from kafka_dump.analysis.stats import SegmentStats
from kafka_dump.analysis.stats_walk import iter_stats
from kafka_dump.errors import KafkaDumpError
from kafka_dump.model import Problem
from kafka_dump.render.stats import stats_json
from kafka_dump.wire import _gather_pure
from tests.batches import (
    BIG,
    GZIP,
    LZ4,
    SNAPPY,
    TS0,
    ZSTD,
    default_records,
    entry_bounds,
    fix_legacy_crc,
    legacy_messages,
    legacy_records,
    set_offset,
    v2_batch,
)
from tests.conftest import FIXTURES, SHARED_REAL, reference_module

compiled = pytest.importorskip("kafka_dump.native._native")
_gather_pure = reference_module(_gather_pure)

INT64_MAX = 2**63 - 1
LIMIT = 256 * 1024 * 1024


def wrapper(
    magic: int,
    codec: int,
    offsets: list[int],
    *,
    wrapper_offset: int | None = None,
    timestamps: list[int] | None = None,
    log_append_time: int | None = None,
    seed: int = 0,
) -> bytes:
    """One compressed wrapper (kafka-python's builder) whose inner messages have these offsets as
    written (relative or absolute: the caller's choice) and, by default, its offset the last one."""
    builder = LegacyRecordBatchBuilder(magic=magic, compression_type=codec, batch_size=BIG)
    records = legacy_records(len(offsets), seed=seed)
    for i, (offset, (key, value)) in enumerate(zip(offsets, records, strict=True)):
        ts = (timestamps[i] if timestamps else TS0 + i) if magic else None
        builder.append(offset, timestamp=ts, key=key, value=value)
    data = set_offset(bytes(builder.build()), offsets[-1] if wrapper_offset is None else wrapper_offset)
    if log_append_time is not None and magic == 1:
        b = bytearray(data)
        b[17] |= 0x08
        struct.pack_into(">q", b, 18, log_append_time)
        data = fix_legacy_crc(b)
    return data


def run(
    fn: Any,
    data: bytes,
    pos: int = 0,
    *,
    width: int = 1,
    limit: int = 64,
    max_records: int = 10**7,
    max_bytes: int = LIMIT,
) -> Any:
    hists = tuple(_gather_pure.new_histogram() for _ in range(7))
    times: dict[int, int] = {TS0 // width: 2}  # earlier counts stay and grow
    out = fn(data, pos, len(data), max_bytes, max_records, width, limit, hists, times)
    return out, [h.tobytes() for h in hists], times


def both(data: bytes, pos: int = 0, **kw: Any) -> Any:
    pure = run(_gather_pure.gather_legacy_wrappers, data, pos, **kw)
    fast = run(compiled.gather_legacy_wrappers, data, pos, **kw)
    assert fast == pure
    return pure


def figures(path: Path, *, walk: bool, max_bytes: int = LIMIT) -> list[Any]:
    """Every file's stats JSON and problems, by the walk (the default) or by decoding (a listener
    forces it); or the error that refused the file."""
    listener = None if walk else (lambda p: lambda b: None)
    try:
        events = list(iter_stats([path], listener=listener, max_batch_bytes=max_bytes))
    except KafkaDumpError as exc:
        return [repr(exc)]
    return [
        stats_json(e) if isinstance(e, SegmentStats) else e
        for e in events
        if isinstance(e, SegmentStats | Problem)
    ]


def walked_equals_decoded(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(data)
    assert figures(path, walk=True) == figures(path, walk=False)


# --- valid runs --------------------------------------------------------------------------------------


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", [GZIP, SNAPPY, LZ4])
def test_a_run_of_wrappers_is_counted_whole(magic: int, codec: int, tmp_path: Path) -> None:
    parts = [
        legacy_messages(legacy_records(n, seed=n), magic=magic, codec=codec, base_offset=10 * n)
        for n in (1, 5, 9)
    ]
    data = b"".join(parts)
    (used, width, batches, records, null_keys, *_rest), _, times = both(data)
    assert (used, width, batches, records) == (len(data), 1, 3, 15)
    assert null_keys == sum(k is None for n in (1, 5, 9) for k, _ in legacy_records(n, seed=n))
    first, low, high, last = _rest[3:7]
    assert (first, low, high, last) == (10, 10, 98, 98)
    formats, ts_types = _rest[-2:]
    assert formats == ((magic, codec, 3, 15, len(data), formats[0][5]),)
    assert ts_types == ((3, 0, 0) if magic == 0 else (0, 3, 0))
    assert sum(times.values()) == 2 + (15 if magic else 0)
    walked_equals_decoded(tmp_path, data)


def test_the_run_stops_before_anything_else() -> None:
    wrap = legacy_messages(legacy_records(4), magic=1, codec=GZIP, base_offset=0)
    others = [
        legacy_messages(legacy_records(2), magic=1, base_offset=4),  # plain messages: the decoder's run
        v2_batch(default_records(3), base_offset=4),
        fix_legacy_crc(wrap[:17] + bytes([wrap[17] & ~7 | ZSTD]) + wrap[18:]),  # zstd in v1: reported
        wrap[:-1] + bytes([wrap[-1] ^ 1]),  # a CRC that fails
        wrap[:-3],  # cut short
    ]
    for other in others:
        data = wrap + other + wrap
        assert both(data)[0][0] == len(wrap)
        assert both(data, len(wrap))[0][0] == 0


def test_seams_gaps_and_the_time_width(tmp_path: Path) -> None:
    parts = [
        wrapper(1, GZIP, [0, 1, 2], wrapper_offset=10),  # 8, 9, 10
        wrapper(1, SNAPPY, [0, 3, 4], wrapper_offset=30, timestamps=[5, 1 << 40, -1]),  # 26, 29, 30
        wrapper(0, LZ4, [31, 33, 40]),  # absolute, with gaps
        wrapper(1, GZIP, [0, 1], wrapper_offset=0, log_append_time=TS0 * 3),  # offset 0: absolute
    ]
    data = b"".join(parts)
    result, _, times = both(data)
    assert result[0] == len(data) and result[1] > 1  # the timestamps' span doubled the width
    assert len(times) <= 64
    h = TimeHistogram()
    h.counts = {TS0: 2}
    h.add_counts({t: 1 for t in (TS0, TS0 + 1, TS0 + 2, 5, 1 << 40, TS0 * 3)} | {TS0 * 3: 2})
    assert result[1] == h.width
    walked_equals_decoded(tmp_path, data)


def test_offsets_near_int64_stop_the_run_where_the_decoder_must_count(tmp_path: Path) -> None:
    top = wrapper(0, GZIP, [INT64_MAX - 1, INT64_MAX])
    low = wrapper(0, GZIP, [-(2**63), -(2**63) + 1])
    cases = [
        (top + top, len(top)),  # the seam after the first would need INT64_MAX + 1
        (top + low, len(top)),  # the same
        (low + low, len(low) * 2),  # a gap back to the start: int64 holds it
        (wrapper(0, GZIP, [5, 6]) + low, None),  # from 7 back to -2**63: int64 cannot hold it
        (wrapper(0, GZIP, [INT64_MAX, -(2**63)]), 0),  # a gap inside that int64 cannot hold
        (wrapper(1, GZIP, [-(2**62), -(2**62) + 1], wrapper_offset=2**62 + 2), 0),  # the base passes int64
    ]
    for data, used in cases:
        if used is None:
            used = len(data) - len(low)
        assert both(data)[0][0] == used
        walked_equals_decoded(tmp_path, data)
        lead = legacy_messages(legacy_records(2), magic=0, codec=GZIP)
        both(lead + data)
        walked_equals_decoded(tmp_path, lead + data)


def test_too_many_inner_messages_stop_the_run() -> None:
    data = legacy_messages(legacy_records(5), magic=1, codec=GZIP)
    assert both(data, max_records=5)[0][0] == len(data)
    assert both(data, max_records=4)[0][0] == 0


def test_bad_arguments_are_refused_alike() -> None:
    for fn in (_gather_pure.gather_legacy_wrappers, compiled.gather_legacy_wrappers):
        hists = tuple(_gather_pure.new_histogram() for _ in range(7))
        for args in ((2, 1, 1, 64), (0, 3, 0, 64), (0, 3, 1, 1), (0, 4, 1, 64)):
            pos, end, width, limit = args
            with pytest.raises(ValueError):
                fn(b"abc", pos, end, LIMIT, 10, width, limit, hists, {})
    with pytest.raises(ValueError):
        compiled.gather_legacy_wrappers(b"", 0, 0, LIMIT, 10, 1, 64, hists[:5], {})


# --- damaged and hostile input ----------------------------------------------------------------------


def segment(rng: random.Random) -> bytes:
    parts = []
    offset = rng.randrange(0, 1000)
    for _ in range(rng.randrange(1, 6)):
        kind = rng.random()
        magic = rng.choice([0, 1])
        n = rng.randrange(1, 8)
        if kind < 0.15:
            parts.append(legacy_messages(legacy_records(n, seed=offset), magic=magic, base_offset=offset))
        elif kind < 0.25:
            parts.append(v2_batch(default_records(n, seed=offset), base_offset=offset))
        else:
            inner = [rng.randrange(-3, 12) if rng.random() < 0.2 else i for i in range(n)]
            stamps = [rng.choice([-1, 0, TS0, TS0 + rng.randrange(1 << 41)]) for _ in range(n)]
            base = None if rng.random() < 0.7 else rng.choice([0, offset, offset + 5])
            parts.append(
                wrapper(
                    magic, rng.choice([GZIP, SNAPPY, LZ4]), inner if magic == 1 else [offset + i for i in inner],
                    wrapper_offset=base if magic == 1 else None, timestamps=stamps, seed=offset,
                    log_append_time=rng.choice([None, None, TS0 + 7]),
                )
            )  # fmt: skip
        offset += n + rng.choice([0, 0, 0, 2])
    return b"".join(parts)


def damage(data: bytes, rng: random.Random) -> bytes:
    b = bytearray(data)
    for _ in range(rng.randrange(0, 3)):
        if not b:
            break
        r = rng.random()
        if r < 0.2:
            b = b[: rng.randrange(len(b))]
        elif r < 0.6:
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
        else:
            b[rng.randrange(len(b))] = rng.choice([0x00, 0x01, 0x7F, 0x80, 0xFF])
        if rng.random() < 0.5:  # damage under a valid CRC: the inner messages themselves
            bounds = [(s, e) for s, e in _bounds(bytes(b))]
            if bounds:
                s, e = rng.choice(bounds)
                b[s:e] = fix_legacy_crc(b[s:e])
    return bytes(b)


def _bounds(data: bytes) -> list[tuple[int, int]]:
    out, pos = [], 0
    while len(data) - pos >= 26:
        (size,) = struct.unpack_from(">i", data, pos + 8)
        if size < 14 or pos + 12 + size > len(data) or data[pos + 16] > 1:
            break
        out.append((pos, pos + 12 + size))
        pos += 12 + size
    return out


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(seed=st.integers(0, 2**32))
def test_damaged_segments_agree_and_walk_as_they_decode(seed: int, tmp_path: Path) -> None:
    rng = random.Random(seed)
    data = damage(segment(rng), rng)
    for pos in {0, *(s for s, _ in _bounds(data))}:
        both(data, pos, width=rng.choice([1, 1000]), limit=rng.choice([2, 64]))
    walked_equals_decoded(tmp_path, data)


BAD = sorted((FIXTURES / "bad").glob("*.log"))


@pytest.mark.parametrize("path", BAD, ids=lambda p: p.name)
def test_bad_corpus_agrees_and_walks_as_it_decodes(path: Path) -> None:
    data = path.read_bytes()
    for pos in range(0, min(len(data), 4096), 1 if len(data) < 512 else 7):
        both(data, pos, max_bytes=1 << 20)  # bombs refused at 1 MiB: the same refusal, sooner
    assert figures(path, walk=True, max_bytes=1 << 20) == figures(path, walk=False, max_bytes=1 << 20)


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.log")), ids=lambda p: p.name)
def test_fixtures_agree_at_every_entry(path: Path) -> None:
    data = path.read_bytes()
    for pos in {0, *(s for s, _ in _bounds(data))}:
        both(data, pos)


@pytest.mark.skipif(not SHARED_REAL.is_dir(), reason="../shared/fixtures-real is absent")
def test_real_segments_with_wrappers_agree() -> None:
    seen = 0
    for path in sorted(SHARED_REAL.rglob("*.log")):
        if path.stat().st_size > 20_000_000:
            continue
        data = path.read_bytes()
        bounds = _bounds(data)
        if not any(data[s + 17] & 7 for s, _ in bounds):
            continue
        seen += 1
        for pos in {0, *(s for s, _ in bounds[:200])}:
            both(data, pos)
    assert seen, "no real segment holds a v0/v1 wrapper"


def test_mixed_magics_walk_as_they_decode(tmp_path: Path) -> None:
    parts = [
        legacy_messages(legacy_records(3), magic=0, base_offset=0),
        legacy_messages(legacy_records(4), magic=0, codec=GZIP, base_offset=3),
        legacy_messages(legacy_records(4), magic=1, codec=SNAPPY, base_offset=7),
        legacy_messages(legacy_records(2), magic=1, base_offset=11),
        legacy_messages(legacy_records(5), magic=1, codec=LZ4, base_offset=13),
        v2_batch(default_records(6, seed=2), base_offset=18, codec=GZIP),
        legacy_messages(legacy_records(3), magic=1, codec=GZIP, base_offset=24),
    ]
    walked_equals_decoded(tmp_path, b"".join(parts))
    assert entry_bounds(b"".join(parts))
